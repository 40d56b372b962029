"""corpus_cases_flaggems.py: launches of the flaggems_style.py kernels (ATen
operators as a Triton operator library writes them) with their float64
references; each reference takes (v, c, s) as corpus_refs.py describes."""
import numpy as np

from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_refs import philox4

F = "flaggems_style.py"
_M32 = np.uint64(0xFFFFFFFF)


def _f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


# ---- references ------------------------------------------------------------------------------


def sum_mean_dim(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    x = v["inp"].reshape(M, N, K)
    return {"out_sum": x.sum(1).ravel(), "out_mean": x.mean(1).ravel()}


def amax_argmax(v, c, s):
    M, N = s["M"], s["N"]
    x = v["inp"].reshape(M, N)
    return {"out_val": x.max(1), "out_idx": x.argmax(1)}


def prod_all_any(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    x = v["inp"].reshape(M, N, K)
    nz = x != 0
    return {"out_prod": x.prod(1).ravel(), "out_all": nz.all(1).ravel().astype(np.int64),
            "out_any": nz.any(1).ravel().astype(np.int64)}


def cumsum_cumprod(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    x = v["inp"].reshape(M, N, K)
    if c["REVERSE"]:
        cs = np.flip(np.cumsum(np.flip(x, 1), 1), 1)
        cp = np.flip(np.cumprod(np.flip(x, 1), 1), 1)
    else:
        cs, cp = np.cumsum(x, 1), np.cumprod(x, 1)
    return {"out_sum": cs.ravel(), "out_prod": cp.ravel()}


def var_mean(v, c, s):
    M, N = s["M"], s["N"]
    x = v["inp"].reshape(M, N)
    var = x.var(1, ddof=s["correction"])
    return {"out_var": var, "out_mean": x.mean(1), "out_std": np.sqrt(var)}


def softmax_non_inner(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    x = v["inp"].reshape(M, N, K)
    mx = x.max(1, keepdims=True)
    lse = mx + np.log(np.exp(x - mx).sum(1, keepdims=True))
    y = x - lse if c["LOG"] else np.exp(x - lse)
    return {"out": y.ravel()}


def log_softmax_inner(v, c, s):
    M, N = s["M"], s["N"]
    x = v["inp"].reshape(M, N)
    mx = x.max(1, keepdims=True)
    return {"out": (x - mx - np.log(np.exp(x - mx).sum(1, keepdims=True))).ravel()}


def group_norm(v, c, s):
    C, HW, G = s["C"], s["HW"], s["num_groups"]
    x = v["X"].reshape(-1, G, C // G, HW)
    mean = x.mean((2, 3))
    var = x.var((2, 3))
    rstd = 1.0 / np.sqrt(var + s["eps"])
    y = (x - mean[:, :, None, None]) * rstd[:, :, None, None]
    y = y.reshape(-1, C, HW)
    if "W" in v:
        y = y * v["W"][None, :, None]
    if "B" in v:
        y = y + v["B"][None, :, None]
    return {"Y": y.ravel(), "Mean": mean.ravel(), "Rstd": rstd.ravel()}


def index_select(v, c, s):
    M, N = s["M"], s["N"]
    x = v["inp"].reshape(M, N)
    return {"out": x[:, v["index"]].ravel()}


def gather_dim0(v, c, s):
    N = s["N"]
    x = v["inp"].reshape(-1, N)
    idx = v["index"].reshape(-1, N)
    return {"out": np.take_along_axis(x, idx, 0).ravel()}


def scatter_add_dim1(v, c, s):
    M, Ns, No = s["M"], s["N_src"], s["N_out"]
    out = v["out"].reshape(M, No).copy()
    idx = v["index"].reshape(M, Ns)
    src = v["src"].reshape(M, Ns)
    for m in range(M):
        np.add.at(out[m], idx[m], src[m])
    return {"out": out.ravel()}


def _fp16(x):
    return np.asarray(x, dtype=np.float64).astype(np.float16).astype(np.float64)


def where_clamp_fill(v, c, s):
    cond = v["cond"] != 0
    x = v["x"]
    w = np.where(cond, x, _fp16(s["other"]))
    lo = v["lo"] if c["HAS_LO_TENSOR"] else -0.5
    cl = np.minimum(np.maximum(x, lo), s["hi"])
    f = np.where(cond, x, s["fill_value"])
    return {"out_where": w, "out_clamp": cl, "out_fill": f, "out_add": v["y"] + 2 * x}


def isclose(v, c, s):
    a, b = v["a"], v["b"]
    with np.errstate(invalid="ignore"):
        r = np.isclose(a, b, rtol=s["rtol"], atol=s["atol"], equal_nan=c["EQUAL_NAN"])
    return {"out": r.astype(np.int64), "flag": np.array([int(r.all())])}


def _erf(x):
    from math import erf
    return np.vectorize(erf)(x)


def gelu_pow(v, c, s):
    x, e = v["x_ptr"], s["exponent"]
    if c["APPROX"] == "tanh":
        k = 0.7978845608028654
        t = np.tanh(k * (x + 0.044715 * x ** 3))
        g = 0.5 * x * (1 + t)
        dg = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 0.134145 * x * x)
    else:
        cdf = 0.5 * (1 + _erf(x / np.sqrt(2)))
        g = x * cdf
        dg = cdf + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
    iv = v["i_ptr"].astype(np.int64) ** e
    iv = ((iv + 2**31) % 2**32) - 2**31
    return {"gelu_out": g, "dgelu_out": dg, "powf_out": x ** e, "powi_out": iv}


def _wrap(x, bits):
    return ((x + 2 ** (bits - 1)) % 2 ** bits) - 2 ** (bits - 1)


def bitwise(v, c, s):
    a, b = v["a_ptr"].astype(np.int64), v["b_ptr"].astype(np.int64)
    sh = c["SHIFT"]
    return {"and_out": a & b, "or_out": a | b, "xor_out": a ^ b, "not_out": ~a,
            "shl_out": _wrap(a << (b & 7), 32), "shr_out": a >> sh,
            "lshr_out": _wrap((a & 0xFFFFFFFF) >> sh, 32)}


def _philox(seed, c0, c1, rounds=10):
    return philox4(seed, np.asarray(c0).astype(np.int64), rounds, hi=c1)


def _uniform(word):
    x = word.astype(np.uint32).view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x)
    return (x.astype(np.float32) * np.float32(4.6566127342e-10)).astype(np.float64)


def rand_randn(v, c, s):
    n = s["n"]
    off = s["philox_offset"] + np.arange(n, dtype=np.int64)
    w0, w1, _, _ = _philox(s["seed"], off.astype(np.uint64), (off >> 32).astype(np.uint64))
    u1, u2 = _uniform(w0), _uniform(w1)
    u1c = np.maximum(1e-7, u1)
    normal = np.sqrt(-2.0 * np.log(u1c)) * np.cos(2 * np.pi * u2)
    return {"out_u": u1, "out_n": normal, "out_i": w0.astype(np.uint32).view(np.int32).astype(np.int64)}


def nonzero(v, c, s):
    x = v["inp"][:s["n"]]
    nz = np.flatnonzero(x)
    out = v["out_idx"].copy()
    out[:nz.size] = nz
    return {"out_idx": out, "out_count": np.array([nz.size])}


def topk_packed(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    x = v["inp"].reshape(M, N)
    idx = np.argsort(-x, axis=1, kind="stable")[:, :K]
    return {"out_val": np.take_along_axis(x, idx, 1).ravel(), "out_idx": idx.ravel()}


def int_reductions(v, c, s):
    M, N = s["M"], s["N"]
    a = v["x8"].reshape(M, N)
    b = v["xu8"].reshape(M, N)
    cb = v["xb"].reshape(M, N)
    x = np.bitwise_xor.reduce(a.astype(np.int64) & 0xFFFFFFFF, axis=1)
    tot = np.bitwise_xor.reduce(a.ravel().astype(np.int64) & 0xFFFFFFFF) ^ (v["out_total"][0] & 0xFFFFFFFF)
    return {"out_sum8": a.sum(1), "out_sumu8": b.sum(1), "out_count": (a != 0).sum(1),
            "out_cum8": np.cumsum(a, 1).ravel(), "out_cumb": np.cumsum(cb, 1).ravel(),
            "out_xor": _wrap(x, 32), "out_total": np.array([_wrap(tot, 32)])}


def nan_minmax(v, c, s):
    x, y = v["x_ptr"], v["y_ptr"]
    return {"max_all": np.maximum(x, y), "min_all": np.minimum(x, y),
            "clamp_all": np.minimum(np.maximum(x, s["lo"]), s["hi"])}


def add_erf_strided(v, c, s):
    M, N = s["M"], s["N"]
    ia = np.arange(M)[:, None] * s["sa0"] + np.arange(N)[None, :] * s["sa1"]
    ib = np.arange(M)[:, None] * s["sb0"] + np.arange(N)[None, :] * s["sb1"]
    io = np.arange(M)[:, None] * s["so0"] + np.arange(N)[None, :] * s["so1"]
    r = _erf(v["a"][ia] + _f32(s["alpha"]) * v["b"][ib])
    out = v["out"].copy()
    out[io] = r
    return {"out": out}


def normal_philox(v, c, s):
    n, B = s["n"], c["BLOCK"]
    out = v["out"].copy()
    progs = -(-n // (4 * B))
    for p in range(progs):
        ctr = s["philox_offset"] + p * B + np.arange(B, dtype=np.int64)
        w = _philox(s["seed"], ctr.astype(np.uint64), (ctr >> 32).astype(np.uint64))
        u = [_uniform(x) for x in w]
        u[0] = np.maximum(u[0], _f32(1e-7))
        u[2] = np.maximum(u[2], _f32(1e-7))
        ra, rb = np.sqrt(-2 * np.log(u[0])), np.sqrt(-2 * np.log(u[2]))
        vals = [ra * np.cos(2 * np.pi * u[1]), ra * np.sin(2 * np.pi * u[1]),
                rb * np.cos(2 * np.pi * u[3]), rb * np.sin(2 * np.pi * u[3])]
        for k in range(4):
            idx = p * 4 * B + k * B + np.arange(B)
            keep = idx < n
            out[idx[keep]] = vals[k][keep] * s["std"] + s["mean"]
    return {"out": out}


def argsort_rows(v, c, s):
    N = s["N"]
    x = v["inp"].reshape(-1, N)
    idx = np.argsort(-x, axis=1, kind="stable")
    return {"out_val": np.take_along_axis(x, idx, 1).ravel(), "out_idx": idx.ravel()}


def _f16(x):
    return np.asarray(x, dtype=np.float64).astype(np.float16).astype(np.float64)


def _bf16(x):
    f = np.asarray(x, dtype=np.float64).astype(np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def promote(v, c, s):
    a, u, h, b, k, sh = (v[x] for x in ("a8_ptr", "u8_ptr", "h_ptr", "b_ptr", "k_ptr", "s_ptr"))
    k = k.astype(np.int64)
    d = ((k & 0xFFFFFFFF) * 2) & 0xFFFFFFFF
    return {"o_add8": _wrap(2 * a, 8), "o_mulu8": (u * u) % 256, "o_lit8": _wrap(a + 100, 8),
            "o_mix16": _wrap(a * sh, 16), "o_hmul": _f16(h * _f16(0.1)), "o_hdiv": _f32(h / 3.0),
            "o_bfadd": _bf16(b + _bf16(0.1)), "o_i8f": _f32(a * _f32(0.3)), "o_idiv": _f32(_f32(k) / 7),
            "o_u32": d >> 28, "o_rt": a + s["s_int"]}


# ---- inputs ----------------------------------------------------------------------------------


def _few_zeros(rng, n):
    x = rng.standard_normal(n)
    x[rng.random(n) < 0.03] = 0.0
    return x


def _near_one(rng, n):
    return 1.0 + 0.05 * rng.standard_normal(n)


def _sparse_ints(rng, n):
    x = rng.integers(-3, 4, n)
    x[rng.random(n) < 0.6] = 0
    return x


def _ties(rng, n):
    return rng.integers(-5, 6, n).astype(np.float64)


# ---- cases -----------------------------------------------------------------------------------


def cases():
    out = []
    add = out.append
    M, N, K = 3, 37, 20
    for dt in ("fp32", "fp16"):
        add(Case(f"flaggems sum/mean over middle dim {dt}", F, "sum_mean_dim_kernel", (M, 3),
                 [Buf("inp", dt, M * N * K), Out("out_sum", dt, M * K), Out("out_mean", dt, M * K),
                  Scalar("M", M), Scalar("N", N), Scalar("K", K)],
                 {"BLOCK_N": 16, "BLOCK_K": 8}, ref=sum_mean_dim))
    M2, N2 = 10, 150
    add(Case("flaggems amax/argmax fp32", F, "amax_argmax_kernel", (3,),
             [Buf("inp", "fp32", M2 * N2, _ties), Out("out_val", "fp32", M2), Out("out_idx", "i64", M2),
              Scalar("M", M2), Scalar("N", N2)], {"BLOCK_M": 4, "BLOCK_N": 32}, ref=amax_argmax))
    add(Case("flaggems amax/argmax int32 all-negative", F, "amax_argmax_kernel", (3,),
             [Buf("inp", "i32", M2 * N2, ("randint", -2**31, -2**31 + 40)), Out("out_val", "i32", M2),
              Out("out_idx", "i64", M2), Scalar("M", M2), Scalar("N", N2)],
             {"BLOCK_M": 4, "BLOCK_N": 64}, ref=amax_argmax))
    add(Case("flaggems amax/argmax int16", F, "amax_argmax_kernel", (5,),
             [Buf("inp", "i16", M2 * N2, ("randint", -30000, 30000)), Out("out_val", "i16", M2),
              Out("out_idx", "i64", M2), Scalar("M", M2), Scalar("N", N2)],
             {"BLOCK_M": 2, "BLOCK_N": 128}, ref=amax_argmax))
    M3, N3, K3 = 4, 23, 6
    for dt in ("fp32", "bf16"):
        add(Case(f"flaggems prod/all/any over middle dim {dt}", F, "prod_all_any_kernel", (M3, 2),
                 [Buf("inp", dt, M3 * N3 * K3, _near_one if dt == "fp32" else _few_zeros),
                  Out("out_prod", "fp32", M3 * K3), Out("out_all", "i8", M3 * K3),
                  Out("out_any", "i8", M3 * K3), Scalar("M", M3), Scalar("N", N3), Scalar("K", K3)],
                 {"BLOCK_N": 8, "BLOCK_K": 4}, tol={"fp32": (1e-4, 1e-4)}, ref=prod_all_any))
    # all-zero column block for any
    add(Case("flaggems prod/all/any sparse", F, "prod_all_any_kernel", (M3, 1),
             [Buf("inp", "fp32", M3 * N3 * K3, lambda rng, n: _sparse_ints(rng, n) * (rng.random(n) < 0.1)),
              Out("out_prod", "fp32", M3 * K3), Out("out_all", "i8", M3 * K3),
              Out("out_any", "i8", M3 * K3), Scalar("M", M3), Scalar("N", N3), Scalar("K", K3)],
             {"BLOCK_N": 16, "BLOCK_K": 8}, ref=prod_all_any))
    M4, N4, K4 = 2, 45, 5
    for rev in (False, True):
        add(Case(f"flaggems cumsum/cumprod middle dim reverse={rev}", F, "cumsum_cumprod_kernel", (M4, 2),
                 [Buf("inp", "fp32", M4 * N4 * K4, _near_one), Out("out_sum", "fp32", M4 * N4 * K4),
                  Out("out_prod", "fp32", M4 * N4 * K4), Scalar("M", M4), Scalar("N", N4), Scalar("K", K4)],
                 {"BLOCK_N": 16, "BLOCK_K": 4, "REVERSE": rev}, ref=cumsum_cumprod))
    add(Case("flaggems cumsum/cumprod inner dim fp16", F, "cumsum_cumprod_kernel", (6, 1),
             [Buf("inp", "fp16", 6 * 70, _near_one), Out("out_sum", "fp16", 6 * 70),
              Out("out_prod", "fp32", 6 * 70), Scalar("M", 6), Scalar("N", 70), Scalar("K", 1)],
             {"BLOCK_N": 32, "BLOCK_K": 1, "REVERSE": False}, tol={"fp16": (2e-2, 2e-2)}, ref=cumsum_cumprod))
    for corr, dt in ((1, "fp32"), (0, "fp16")):
        add(Case(f"flaggems var_mean welford correction={corr} {dt}", F, "var_mean_kernel", (5,),
                 [Buf("inp", dt, 5 * 203, scale=3.0), Out("out_var", "fp32", 5), Out("out_mean", dt, 5),
                  Out("out_std", "fp32", 5), Scalar("M", 5), Scalar("N", 203), Scalar("correction", corr)],
                 {"BLOCK_N": 64}, ref=var_mean))
    M5, N5, K5 = 2, 50, 12
    for log in (False, True):
        add(Case(f"flaggems softmax non-inner dim log={log}", F, "softmax_non_inner_kernel", (M5, 2),
                 [Out("out", "fp32", M5 * N5 * K5), Buf("inp", "fp32", M5 * N5 * K5, scale=4.0),
                  Scalar("M", M5), Scalar("N", N5), Scalar("K", K5)],
                 {"BLOCK_N": 16, "BLOCK_K": 8, "LOG": log}, ref=softmax_non_inner))
    add(Case("flaggems softmax non-inner bf16", F, "softmax_non_inner_kernel", (M5, 1),
             [Out("out", "bf16", M5 * N5 * K5), Buf("inp", "bf16", M5 * N5 * K5, scale=4.0),
              Scalar("M", M5), Scalar("N", N5), Scalar("K", K5)],
             {"BLOCK_N": 64, "BLOCK_K": 16, "LOG": False}, ref=softmax_non_inner))
    for one, tile in ((True, 256), (False, 64)):
        add(Case(f"flaggems log_softmax inner one_tile={one}", F, "log_softmax_inner_kernel", (4,),
                 [Out("out", "fp16", 4 * 200), Buf("inp", "fp16", 4 * 200, scale=3.0),
                  Scalar("M", 4), Scalar("N", 200)], {"TILE_N": tile, "ONE_TILE": one},
                 ref=log_softmax_inner))
    Bn, C, HW, G = 2, 12, 25, 4
    add(Case("flaggems group_norm affine", F, "group_norm_kernel", (Bn * G,),
             [Buf("X", "fp32", Bn * C * HW, scale=2.0), Out("Y", "fp32", Bn * C * HW), Buf("W", "fp32", C, "rand"),
              Buf("B", "fp32", C), Out("Mean", "fp32", Bn * G), Out("Rstd", "fp32", Bn * G),
              Scalar("group_size", C // G), Scalar("C", C), Scalar("HW", HW), Scalar("num_groups", G),
              Scalar("eps", 1e-5, "fp32")], {"BLOCK_GROUP_SIZE": 4, "BLOCK_HW": 32}, ref=group_norm))
    add(Case("flaggems group_norm no affine fp16", F, "group_norm_kernel", (Bn * G,),
             [Buf("X", "fp16", Bn * C * HW, scale=2.0), Out("Y", "fp16", Bn * C * HW), Null("W"),
              Null("B"), Out("Mean", "fp32", Bn * G), Out("Rstd", "fp32", Bn * G),
              Scalar("group_size", C // G), Scalar("C", C), Scalar("HW", HW), Scalar("num_groups", G),
              Scalar("eps", 1e-5, "fp32")], {"BLOCK_GROUP_SIZE": 4, "BLOCK_HW": 32}, ref=group_norm))
    M6, N6, L6 = 7, 40, 13
    add(Case("flaggems index_select dim1", F, "index_select_kernel", (2, 2),
             [Buf("inp", "fp32", M6 * N6), Out("out", "fp32", M6 * L6),
              Buf("index", "i64", L6, ("randint", 0, N6)), Scalar("M", M6), Scalar("N", N6), Scalar("L", L6)],
             {"BLOCK_M": 4, "BLOCK_L": 8}, ref=index_select))
    add(Case("flaggems gather dim0", F, "gather_dim0_kernel", (3,),
             [Buf("inp", "fp16", 9 * 30), Buf("index", "i64", 11 * 30, ("randint", 0, 9)),
              Out("out", "fp16", 11 * 30), Scalar("M_in", 9), Scalar("M_out", 11), Scalar("N", 30)],
             {"BLOCK_M": 4, "BLOCK_N": 16}, ref=gather_dim0))
    add(Case("flaggems scatter_add dim1", F, "scatter_add_dim1_kernel", (4,),
             [Buf("out", "fp32", 5 * 8, out=True), Buf("index", "i64", 5 * 30, ("randint", 0, 8)),
              Buf("src", "fp32", 5 * 30), Scalar("M", 5), Scalar("N_src", 30), Scalar("N_out", 8)],
             {"BLOCK": 64}, ref=scatter_add_dim1))
    n = 700
    for has_lo in (True, False):
        add(Case(f"flaggems where/clamp/masked_fill lo_tensor={has_lo}", F, "where_clamp_fill_kernel", (3,),
                 [Buf("cond", "u8", n, ("randint", 0, 2)), Buf("x", "fp16", n), Buf("y", "i32", n, ("randint", -100, 100)),
                  Buf("lo", "fp32", n, scale=0.5), Out("out_where", "fp16", n), Out("out_clamp", "fp32", n),
                  Out("out_fill", "fp16", n), Out("out_add", "fp32", n), Scalar("n", n),
                  Scalar("other", 0.3, "fp32"), Scalar("hi", 0.75, "fp32"), Scalar("fill_value", -2.5, "fp32")],
                 {"HAS_LO_TENSOR": has_lo, "BLOCK": 256}, ref=where_clamp_fill))

    def close_a(rng, n):
        a = rng.standard_normal(n)
        a[:6] = [np.nan, np.nan, np.inf, -np.inf, np.inf, 1.0]
        return a

    def close_b(rng, n):
        # same stream as close_a (each buffer draws after a, so rebuild from a fixed seed)
        r = np.random.default_rng(7)
        a = r.standard_normal(n)
        rel = r.choice([0.0, 1e-6, -2e-6, 1e-4, -1e-2], n)
        b = a * (1 + rel)
        return b

    def close_a2(rng, n):
        r = np.random.default_rng(7)
        a = r.standard_normal(n)
        a[:6] = [np.nan, np.nan, np.inf, -np.inf, np.inf, 1.0]
        return a

    def close_b2(rng, n):
        b = close_b(rng, n)
        b[:6] = [np.nan, 0.0, np.inf, np.inf, -np.inf, 1.0 + 1e-7]
        return b

    for eq_nan in (True, False):
        add(Case(f"flaggems isclose/allclose equal_nan={eq_nan}", F, "isclose_kernel", (3,),
                 [Buf("a", "fp32", 600, close_a2), Buf("b", "fp32", 600, close_b2), Out("out", "i8", 600),
                  Buf("flag", "i32", 1, "ones", out=True), Scalar("n", 600), Scalar("rtol", 1e-5, "fp32"),
                  Scalar("atol", 1e-8, "fp32")], {"EQUAL_NAN": eq_nan, "BLOCK": 256}, ref=isclose))
    add(Case("flaggems allclose all close", F, "isclose_kernel", (2,),
             [Buf("a", "fp32", 300, "arange"), Buf("b", "fp32", 300, "arange"), Out("out", "i8", 300),
              Buf("flag", "i32", 1, "ones", out=True), Scalar("n", 300), Scalar("rtol", 1e-5, "fp32"),
              Scalar("atol", 1e-8, "fp32")], {"EQUAL_NAN": False, "BLOCK": 256}, ref=isclose))
    for approx, e in (("none", 3), ("tanh", 0), ("none", 5)):
        add(Case(f"flaggems gelu {approx} and pow e={e}", F, "gelu_pow_kernel", (2,),
                 [Buf("x_ptr", "fp32", 500, scale=2.0), Buf("i_ptr", "i32", 500, ("randint", -9, 10)),
                  Out("gelu_out", "fp32", 500), Out("dgelu_out", "fp32", 500), Out("powf_out", "fp32", 500),
                  Out("powi_out", "i32", 500), Scalar("n", 500), Scalar("exponent", e)],
                 {"APPROX": approx, "BLOCK": 256}, ref=gelu_pow))
    add(Case("flaggems bitwise int32", F, "bitwise_kernel", (2,),
             [Buf("a_ptr", "i32", 400, ("randint", -2**31, 2**31 - 1)),
              Buf("b_ptr", "i32", 400, ("randint", -2**31, 2**31 - 1))] +
             [Out(k, "i32", 400) for k in ("and_out", "or_out", "xor_out", "not_out", "shl_out", "shr_out",
                                           "lshr_out")] + [Scalar("n", 400)],
             {"SHIFT": 5, "BLOCK": 256}, ref=bitwise))
    for off, dt in ((0, "i32"), ((3 << 32) + 7, "i64")):
        add(Case(f"flaggems rand/randn/randint offset {off}", F, "rand_randn_kernel", (2,),
                 [Out("out_u", "fp32", 400), Out("out_n", "fp32", 400), Out("out_i", "i32", 400),
                  Scalar("n", 400), Scalar("seed", 0x1234_5678_9A, "i64"), Scalar("philox_offset", off, dt)],
                 {"BLOCK": 256}, ref_tol={"fp32": (1e-5, 1e-4)}, ref=rand_randn))
    add(Case("flaggems nonzero prefix count", F, "nonzero_kernel", (1,),
             [Buf("inp", "i32", 1000, _sparse_ints), Out("out_idx", "i64", 1000), Out("out_count", "i64", 1),
              Scalar("n", 1000)], {"BLOCK": 128}, ref=nonzero))
    add(Case("flaggems topk packed keys", F, "topk_packed_kernel", (6,),
             [Buf("inp", "fp32", 6 * 100, lambda rng, n: np.round(rng.standard_normal(n) * 4) / 4 + 0.0),
              Out("out_val", "fp32", 6 * 7), Out("out_idx", "i64", 6 * 7),
              Scalar("M", 6), Scalar("N", 100), Scalar("K", 7)], {"BLOCK_N": 128, "BLOCK_K": 8},
             ref=topk_packed))
    M7, N7 = 5, 90
    add(Case("flaggems int8/uint8/bool sums, promoted cumsums, xor reduce", F, "int_reductions_kernel", (3,),
             [Buf("x8", "i8", M7 * N7, lambda rng, n: np.where(rng.random(n) < 0.2, 0, rng.integers(-128, 128, n))),
              Buf("xu8", "u8", M7 * N7, ("randint", 0, 256)), Buf("xb", "bf16", M7 * N7, "rand"),
              Out("out_sum8", "i32", M7), Out("out_sumu8", "i64", M7), Out("out_count", "i32", M7),
              Out("out_cum8", "i32", M7 * N7), Out("out_cumb", "fp32", M7 * N7), Out("out_xor", "i32", M7),
              Buf("out_total", "i32", 1, ("fill", 12345), out=True), Scalar("M", M7), Scalar("N", N7)],
             {"BLOCK_M": 2, "BLOCK_N": 128}, tol={"fp32": (1e-5, 1e-5)}, ref=int_reductions))

    def with_nans(rng, n):
        x = rng.standard_normal(n)
        x[rng.random(n) < 0.15] = np.nan
        return x

    add(Case("flaggems maximum/minimum/clamp propagate NaN", F, "nan_minmax_kernel", (2,),
             [Buf("x_ptr", "fp32", 300, with_nans), Buf("y_ptr", "fp32", 300, with_nans),
              Out("max_all", "fp32", 300), Out("min_all", "fp32", 300), Out("clamp_all", "fp32", 300),
              Scalar("n", 300), Scalar("lo", -0.5, "fp32"), Scalar("hi", 0.5, "fp32")],
             {"BLOCK": 256}, ref=nan_minmax))
    M8, N8 = 9, 21
    # a is the transpose of an (N, M) buffer; b is a row broadcast over M; out has a padded row stride
    add(Case("flaggems strided broadcast add+erf, grid-stride tiles", F, "add_erf_strided_kernel", (2,),
             [Buf("a", "fp16", M8 * N8), Buf("b", "fp32", N8), Out("out", "fp32", M8 * 24),
              Scalar("alpha", 0.5, "fp32"), Scalar("M", M8), Scalar("N", N8),
              Scalar("sa0", 1), Scalar("sa1", M8), Scalar("sb0", 0), Scalar("sb1", 1),
              Scalar("so0", 24), Scalar("so1", 1), Scalar("tiles_per_cta", 5)],
             {"BLOCK_M": 4, "BLOCK_N": 8}, ref=add_erf_strided))
    for off in (5, (1 << 32) - 100):
        add(Case(f"flaggems normal_ philox four per counter offset {off}", F, "normal_philox_kernel", (3,),
                 [Out("out", "fp32", 1400), Scalar("n", 1400), Scalar("mean", 1.5, "fp32"),
                  Scalar("std", 0.25, "fp32"), Scalar("seed", 987654321987, "i64"), Scalar("philox_offset", off, "i64")],
                 {"BLOCK": 128}, ref_tol={"fp32": (1e-5, 1e-4)}, ref=normal_philox))
    add(Case("flaggems bitonic argsort rows", F, "argsort_rows_kernel", (4,),
             [Buf("inp", "fp32", 4 * 50, lambda rng, n: np.round(rng.standard_normal(n) * 3) / 3 + 0.0),
              Out("out_val", "fp32", 4 * 50), Out("out_idx", "i64", 4 * 50), Scalar("N", 50)],
             {"BLOCK_N": 64, "LOG_N": 6}, ref=argsort_rows))
    n = 500
    add(Case("flaggems type promotion: literals, small ints, half and bf16 scalars", F, "promote_kernel", (2,),
             [Buf("a8_ptr", "i8", n, ("randint", -128, 128)), Buf("u8_ptr", "u8", n, ("randint", 0, 256)),
              Buf("h_ptr", "fp16", n, scale=30.0), Buf("b_ptr", "bf16", n, scale=3.0),
              Buf("k_ptr", "i32", n, ("randint", -2**31, 2**31 - 1)), Buf("s_ptr", "i16", n, ("randint", -30000, 30000)),
              Out("o_add8", "i32", n), Out("o_mulu8", "i32", n), Out("o_lit8", "i32", n), Out("o_mix16", "i32", n),
              Out("o_hmul", "fp32", n), Out("o_hdiv", "fp32", n), Out("o_bfadd", "fp32", n), Out("o_i8f", "fp32", n),
              Out("o_idiv", "fp32", n), Out("o_u32", "i32", n), Out("o_rt", "i32", n), Scalar("n", n),
              Scalar("s_int", 1000)], {"BLOCK": 256}, tol={"fp32": (1e-7, 1e-6)}, ref=promote))
    return out
