"""corpus_cases_elementwise.py: launches of the breadth_*.py kernels
(elementwise ops, reductions, scans, normalisations and losses written the
way operator libraries write them), with their float64 references; each
reference takes (v, c, s) as corpus_refs.py describes."""
import numpy as np

from corpus_cases import Buf, Case, Out, Scalar


def _nonzero_ints(lo, hi):
    """Integers in [lo, hi) without zero (divisors)."""
    def f(rng, n):
        v = rng.integers(lo, hi, n)
        return np.where(v == 0, 1, v)
    return f


def _trunc_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _c_mod(a, b):
    return a - _trunc_div(a, b) * b


def _f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32)


# ---- breadth_elementwise.py ------------------------------------------------------------------

def int_divmod(v, c, s):
    n = s["n_elements"]
    a, b = v["a_ptr"][:n], v["b_ptr"][:n]
    return {"q_ptr": _trunc_div(a, b), "r_ptr": _c_mod(a, b), "fq_ptr": a // b}


def scalar_divmod(v, c, s):
    x, d = v["x_ptr"][:s["n_elements"]], s["d"]
    return {"out_ptr": _trunc_div(x, d) * 1000 + _c_mod(x, d) * 10 + _c_mod(x, -3) + _trunc_div(x, -7)}


def float_bits(v, c, s):
    x = _f32(v["x_ptr"][:s["n_elements"]])
    _, e = np.frexp(x)
    return {"abs_ptr": np.abs(x), "neg_ptr": -x, "exp_ptr": np.where(x == 0, -127, e - 1)}


def umulhi_hash(v, c, s):
    x = v["x_ptr"][:s["n_elements"]].astype(np.int64) & 0xFFFFFFFF
    x = x.astype(np.uint64)
    h = (x * np.uint64(0x9E3779B1)) & np.uint64(0xFFFFFFFF)
    hi = (x * np.uint64(0x85EBCA6B)) >> np.uint64(32)
    w = (h ^ hi).astype(np.int64)
    return {"out_ptr": np.where(w >= 2**31, w - 2**32, w)}


def gelu_erf(v, c, s):
    from math import erf
    x = v["x_ptr"][:s["n_elements"]]
    return {"y_ptr": 0.5 * x * (1.0 + np.vectorize(erf)(x / np.sqrt(2.0)))}


def activations(v, c, s):
    x, a = v["x_ptr"][:s["n_elements"]], s["alpha"]
    sp = np.where(x > 20.0, x, np.log1p(np.exp(x)))
    return {"elu_ptr": np.where(x > 0, x, a * np.expm1(x)), "softplus_ptr": sp,
            "mish_ptr": x * np.tanh(sp), "rs_ptr": 1.0 / np.sqrt(np.abs(x) + 1.0),
            "pw_ptr": (np.abs(x) + 0.5) ** 1.5}


def clamp_fma(v, c, s):
    n = s["n_elements"]
    return {"out_ptr": np.clip(v["x_ptr"][:n] * v["y_ptr"][:n] + v["z_ptr"][:n], s["lo"], s["hi"])}


def half_round_trip(v, c, s):
    x = _f32(v["x_ptr"][:s["n_elements"]])
    h = x.astype(np.float16).astype(np.float64)
    # bf16 by round-to-nearest-even on the fp32 bits
    u = x.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    b = u.astype(np.uint32).view(np.float32).astype(np.float64)
    return {"h_ptr": h, "b_ptr": b, "d_ptr": (x - h) + (x - b)}


def where_chain(v, c, s):
    x, k, t = v["x_ptr"][:s["n_elements"]], v["k_ptr"][:s["n_elements"]], s["thresh"]
    y = np.where(x < -t, -1.0, np.where(x > t, k, np.where(k % 2 == 0, x * 0.5, 2.5)))
    return {"out_ptr": y}


def strided_scale(v, c, s):
    M, N = s["M"], s["N"]
    y = v["y_ptr"].copy()
    for i in range(M):
        for j in range(N):
            y[i * s["stride_ym"] + j] = v["x_ptr"][i * s["stride_xm"] + j * s["stride_xn"]] * v["scale_ptr"][i]
    return {"y_ptr": y}


def add_heuristics(v, c, s):
    n = s["n_elements"]
    x, y = v["x_ptr"][:n], v["y_ptr"][:n]
    return {"out_ptr": x + 0.5 * y if c["EVEN_N"] else x + y}


def collatz_steps(v, c, s):
    out = []
    for x in v["x_ptr"][:s["n_elements"]]:
        x, k = int(x), 0
        while x > 1 and k < s["max_steps"]:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            k += 1
        out.append(k)
    return {"out_ptr": np.array(out)}


# ---- breadth_reductions.py -------------------------------------------------------------------

def _rows(x, stride, n):
    return x.reshape(-1, stride)[:, :n]


def row_argmax_ties(v, c, s):
    x = _rows(v["x_ptr"], s["stride"], s["n_cols"])
    return {"val_ptr": x.max(axis=1), "idx_ptr": x.argmax(axis=1)}


def minmax_scale(v, c, s):
    R, N, st = s["n_rows"], s["n_cols"], s["stride"]
    x = v["x_ptr"].reshape(-1, st)[:R, :N]
    lo, hi = x.min(axis=1), x.max(axis=1)
    y = v["y_ptr"].reshape(-1, st).copy()
    y[:R, :N] = (x - lo[:, None]) / (hi - lo)[:, None]
    return {"y_ptr": y.ravel(), "lo_ptr": lo, "hi_ptr": hi}


def reverse_scans(v, c, s):
    st, n = s["stride"], s["n_cols"]
    x = v["x_ptr"].reshape(-1, st)
    sfx, prod = v["sfx_ptr"].reshape(-1, st).copy(), v["prod_ptr"].reshape(-1, st).copy()
    sfx[:, :n] = np.cumsum(x[:, :n][:, ::-1], axis=1)[:, ::-1]
    prod[:, :n] = np.cumprod(x[:, :n][:, ::-1], axis=1)[:, ::-1]
    return {"sfx_ptr": sfx.ravel(), "prod_ptr": prod.ravel()}


def discounted_return(v, c, s):
    T, g = s["n_steps"], s["gamma"]
    r, d = v["r_ptr"].reshape(-1, T), v["done_ptr"].reshape(-1, T)
    out = np.zeros_like(r)
    acc = np.zeros(r.shape[0])
    for t in range(T - 1, -1, -1):
        acc = r[:, t] + np.where(d[:, t] != 0, 0.0, g) * acc
        out[:, t] = acc
    return {"g_ptr": out.ravel()}


def sort_flip(v, c, s):
    x = v["x_ptr"].reshape(-1, c["BLOCK_N"])
    return {"asc_ptr": np.sort(x, axis=1).ravel(), "desc_ptr": -np.sort(-x, axis=1).ravel(),
            "flip_ptr": x[:, ::-1].ravel()}


def sort_rows_2d(v, c, s):
    x = v["x_ptr"].reshape(-1, c["BLOCK_N"])
    return {"out_ptr": -np.sort(-x, axis=1).ravel()}


def gather_perm(v, c, s):
    x, i = v["x_ptr"].reshape(c["ROWS"], -1), v["idx_ptr"].reshape(c["ROWS"], -1).astype(np.int64)
    return {"out_ptr": np.take_along_axis(x, i, axis=1).ravel()}


def histogram(v, c, s):
    x = v["x_ptr"][:s["n"]].astype(np.int64)
    return {"hist_ptr": np.bincount(x, minlength=c["NUM_BINS"]) + v["hist_ptr"]}


def complex_mul(v, c, s):
    n = s["n"]
    a, b = v["a_ptr"][:2 * n].reshape(-1, 2), v["b_ptr"][:2 * n].reshape(-1, 2)
    z = (a[:, 0] + 1j * a[:, 1]) * (b[:, 0] + 1j * b[:, 1])
    return {"out_ptr": np.stack([z.real, z.imag], axis=1).ravel()}


def interleave(v, c, s):
    n = s["n"]
    return {"out_ptr": np.stack([v["x_ptr"][:n], v["y_ptr"][:n]], axis=1).ravel()}


def _ties(rng, n):
    """Small integers as floats, so rows have repeated maxima; a few NaN."""
    x = rng.integers(-5, 6, n).astype(np.float64)
    return x


def _row_perms(cols):
    return lambda rng, n: np.concatenate([rng.integers(0, cols, cols) for _ in range(n // cols)])


# ---- breadth_losses.py -----------------------------------------------------------------------

def kl_div(v, c, s):
    n, eps = s["n_cols"], s["eps"]
    y = v["y_ptr"].reshape(-1, s["y_stride"])[:, :n]
    t = v["gt_ptr"].reshape(-1, s["gt_stride"])[:, :n]
    kl = np.exp(t) * (t - y) if c.get("log_target") else t * (np.log(np.maximum(t, eps)) - y)
    if c.get("reduction", 2) == 0:
        out = v["loss_ptr"].reshape(-1, s["loss_stride"]).copy()
        out[:, :n] = kl
        return {"loss_ptr": out.ravel()}
    out = v["loss_ptr"].copy()
    st = s["loss_stride"]
    out[:kl.shape[0] * st:st] = kl.sum(axis=1)
    return {"loss_ptr": out}


def ce_softcap(v, c, s):
    V = s["VOCAB"]
    x = v["logits_ptr"].reshape(-1, s["logits_row_stride"])[:, :V]
    if c["DO_LOGIT_SCALING"]:
        x = s["LOGIT_SCALE"] * x
    if c["DO_SOFTCAPPING"]:
        x = s["SOFTCAP"] * np.tanh(x / s["SOFTCAP"])
    m = x.max(axis=1)
    lse = m + np.log(np.exp(x - m[:, None]).sum(axis=1))
    lab = v["labels_ptr"].astype(np.int64)
    picked = x[np.arange(len(lab)), np.where(lab < 0, 0, lab)]
    return {"lse_ptr": lse, "loss_ptr": np.where(lab == -100, 0.0, lse - picked)}


def smooth_l1(v, c, s):
    n, b = s["n_elements"], s["beta"]
    d = np.abs(v["x_ptr"][:n] - v["y_ptr"][:n])
    return {"out_ptr": v["out_ptr"] + np.where(d < b, 0.5 * d * d / b, d - 0.5 * b).sum()}


def gemma_rms_norm(v, c, s):
    n = s["n_cols"]
    x = v["X"].reshape(-1, s["X_row_stride"])[:, :n]
    inv = 1.0 / np.sqrt((x * x).mean(axis=1) + s["eps"])
    y = v["Y"].reshape(-1, s["Y_row_stride"]).copy()
    y[:, :n] = x * inv[:, None] * (1.0 + v["W"][:n])
    return {"Y": y.ravel(), "r": inv}


def _labels_with_ignored(V):
    def f(rng, n):
        y = rng.integers(0, V, n)
        y[1] = -100
        return y
    return f


def cases():
    out = []
    add = out.append
    F = "breadth_elementwise.py"
    M = 3000
    add(Case("int divmod, negative operands", F, "int_divmod_kernel", (3,),
             [Buf("a_ptr", "i32", M, ("randint", -1000, 1000)), Buf("b_ptr", "i32", M, _nonzero_ints(-13, 14)),
              Out("q_ptr", "i32", M), Out("r_ptr", "i32", M), Out("fq_ptr", "i64", M),
              Scalar("n_elements", M)], {"BLOCK": 1024}, ref=int_divmod))
    for d in (5, -4):
        add(Case(f"scalar divmod by {d}", F, "scalar_divmod_kernel", (3,),
                 [Buf("x_ptr", "i64", M, ("randint", -100000, 100000)), Out("out_ptr", "i64", M),
                  Scalar("n_elements", M), Scalar("d", d)], {"BLOCK": 1024}, ref=scalar_divmod))
    add(Case("float bits (sign, exponent)", F, "float_bits_kernel", (3,),
             [Buf("x_ptr", "fp32", M, scale=100.0), Out("abs_ptr", "fp32", M), Out("neg_ptr", "fp32", M),
              Out("exp_ptr", "i32", M), Scalar("n_elements", M)], {"BLOCK": 1024}, ref=float_bits))
    add(Case("umulhi hash", F, "umulhi_hash_kernel", (3,),
             [Buf("x_ptr", "i32", M, ("randint", -2**31, 2**31 - 1)), Out("out_ptr", "i32", M),
              Scalar("n_elements", M)], {"BLOCK": 1024}, ref=umulhi_hash))
    for dt in ("fp16", "bf16"):
        add(Case(f"gelu erf {dt}", F, "gelu_erf_kernel", (3,),
                 [Buf("x_ptr", dt, M, scale=3.0), Out("y_ptr", dt, M), Scalar("n_elements", M)],
                 {"BLOCK": 1024}, ref=gelu_erf))
    add(Case("libdevice activations", F, "activations_kernel", (6,),
             [Buf("x_ptr", "fp32", M, scale=4.0), Out("elu_ptr", "fp32", M), Out("softplus_ptr", "fp32", M),
              Out("mish_ptr", "fp32", M), Out("rs_ptr", "fp32", M), Out("pw_ptr", "fp32", M),
              Scalar("n_elements", M), Scalar("alpha", 1.5, "fp32")], {"BLOCK": 512}, ref=activations))
    add(Case("clamp of fma, cache hints", F, "clamp_fma_kernel", (3,),
             [Buf("x_ptr", "fp32", M), Buf("y_ptr", "fp32", M), Buf("z_ptr", "fp32", M),
              Out("out_ptr", "fp32", M), Scalar("n_elements", M), Scalar("lo", -1.0, "fp32"),
              Scalar("hi", 0.75, "fp32")], {"BLOCK": 1024}, ref=clamp_fma))
    add(Case("fp16/bf16 round trip", F, "half_round_trip_kernel", (3,),
             [Buf("x_ptr", "fp32", M, scale=10.0), Out("h_ptr", "fp16", M), Out("b_ptr", "bf16", M),
              Out("d_ptr", "fp32", M), Scalar("n_elements", M)], {"BLOCK": 1024},
             tol={"fp16": (0, 0), "bf16": (0, 0), "fp32": (1e-6, 1e-6)}, ref=half_round_trip))
    add(Case("where chain, mixed scalars", F, "where_chain_kernel", (3,),
             [Buf("x_ptr", "fp16", M), Buf("k_ptr", "i32", M, ("randint", -50, 50)),
              Out("out_ptr", "fp32", M), Scalar("n_elements", M), Scalar("thresh", 0.8, "fp32")],
             {"BLOCK": 1024}, ref=where_chain))
    Mr, Nc = 37, 50
    add(Case("strided 2-D scale (transposed view)", F, "strided_scale_kernel", (3, 2),
             [Buf("x_ptr", "fp32", Mr * Nc), Out("y_ptr", "fp32", Mr * 64), Buf("scale_ptr", "fp32", Mr),
              Scalar("M", Mr), Scalar("N", Nc), Scalar("stride_xm", 1), Scalar("stride_xn", Mr),
              Scalar("stride_ym", 64)], {"BLOCK_M": 16, "BLOCK_N": 32}, ref=strided_scale))
    for n, even in ((3000, False), (2048, True)):
        add(Case(f"add with heuristics, EVEN_N={even}", F, "add_heuristics_kernel", ((n + 1023) // 1024,),
                 [Buf("x_ptr", "fp32", 3072), Buf("y_ptr", "fp32", 3072), Out("out_ptr", "fp32", n),
                  Scalar("n_elements", n)], {"BLOCK": 1024, "EVEN_N": even}, ref=add_heuristics))
    add(Case("collatz steps (while loop)", F, "collatz_steps_kernel", (2,),
             [Buf("x_ptr", "i32", 500, ("randint", 1, 200)), Out("out_ptr", "i32", 500),
              Scalar("n_elements", 500), Scalar("max_steps", 60)], {"BLOCK": 256}, ref=collatz_steps))
    F = "breadth_reductions.py"
    R, N = 6, 700
    add(Case("row argmax with ties (reduce over a tuple)", F, "row_argmax_ties_kernel", (R,),
             [Buf("x_ptr", "fp32", R * 768, _ties), Out("val_ptr", "fp32", R), Out("idx_ptr", "i32", R),
              Scalar("n_cols", N), Scalar("stride", 768)], {"BLOCK_N": 1024}, ref=row_argmax_ties))
    add(Case("min-max row scale (reduce, keep_dims)", F, "minmax_scale_kernel", (3,),
             [Buf("x_ptr", "fp32", 10 * 128), Out("y_ptr", "fp32", 10 * 128), Out("lo_ptr", "fp32", 10),
              Out("hi_ptr", "fp32", 10), Scalar("n_rows", 10), Scalar("n_cols", 100), Scalar("stride", 128)],
             {"BLOCK_M": 4, "BLOCK_N": 128}, ref=minmax_scale))
    add(Case("reverse cumsum and cumprod", F, "reverse_scans_kernel", (R,),
             [Buf("x_ptr", "fp32", R * 200, lambda rng, n: 0.9 + 0.2 * rng.random(n)),
              Out("sfx_ptr", "fp32", R * 200), Out("prod_ptr", "fp32", R * 200),
              Scalar("n_cols", 150), Scalar("stride", 200)], {"BLOCK_N": 256}, ref=reverse_scans))
    add(Case("discounted return (reverse tuple scan)", F, "discounted_return_kernel", (4,),
             [Buf("r_ptr", "fp32", 4 * 100), Buf("done_ptr", "i8", 4 * 100, lambda rng, n: rng.random(n) < 0.1),
              Out("g_ptr", "fp32", 4 * 100), Scalar("n_steps", 100), Scalar("gamma", 0.9, "fp32")],
             {"BLOCK_T": 128}, ref=discounted_return))
    add(Case("sort and flip rows", F, "sort_flip_kernel", (3,),
             [Buf("x_ptr", "fp32", 3 * 128), Out("asc_ptr", "fp32", 3 * 128), Out("desc_ptr", "fp32", 3 * 128),
              Out("flip_ptr", "fp32", 3 * 128)], {"BLOCK_N": 128}, ref=sort_flip))
    add(Case("sort 2-D tile descending (i32)", F, "sort_rows_2d_kernel", (1,),
             [Buf("x_ptr", "i32", 8 * 64, ("randint", -1000, 1000)), Out("out_ptr", "i32", 8 * 64)],
             {"ROWS": 8, "BLOCK_N": 64}, ref=sort_rows_2d))
    add(Case("gather along rows", F, "gather_perm_kernel", (1,),
             [Buf("x_ptr", "fp32", 16 * 32), Buf("idx_ptr", "i32", 16 * 32, _row_perms(32)),
              Out("out_ptr", "fp32", 16 * 32)], {"ROWS": 16, "COLS": 32}, ref=gather_perm))
    add(Case("histogram with atomics", F, "histogram_kernel", (4,),
             [Buf("x_ptr", "i32", 1000, ("randint", 0, 32)), Buf("hist_ptr", "i32", 32, "zeros", out=True),
              Scalar("n", 1000)], {"NUM_BINS": 32, "BLOCK": 256}, ref=histogram))
    add(Case("complex multiply (split/join)", F, "complex_mul_kernel", (2,),
             [Buf("a_ptr", "fp32", 2 * 400), Buf("b_ptr", "fp32", 2 * 400), Out("out_ptr", "fp32", 2 * 400),
              Scalar("n", 400)], {"BLOCK": 256}, ref=complex_mul))
    add(Case("interleave two int16 streams", F, "interleave_kernel", (2,),
             [Buf("x_ptr", "i16", 300, ("randint", -3000, 3000)), Buf("y_ptr", "i16", 300, ("randint", -3000, 3000)),
              Out("out_ptr", "i16", 600), Scalar("n", 300)], {"BLOCK": 256}, ref=interleave))
    F = "breadth_losses.py"
    R, V = 4, 500
    for log_target, red in ((False, 2), (True, 1), (False, 0)):
        add(Case(f"kl div log_target={log_target} reduction={red}", F, "kl_div_kernel", (R,),
                 [Buf("y_ptr", "fp32", R * 512, lambda rng, n: np.log(rng.random(n) + 1e-3)),
                  Scalar("y_stride", 512),
                  Buf("gt_ptr", "bf16", R * 512, (lambda rng, n: np.log(rng.random(n) + 1e-3))
                      if log_target else "rand"), Scalar("gt_stride", 512),
                  Out("loss_ptr", "fp32", R * 512), Scalar("loss_stride", 512 if red == 0 else 1),
                  Scalar("n_cols", V), Scalar("eps", 1e-10, "fp32")],
                 {"BLOCK": 128, **({"log_target": True} if log_target else {}),
                  **({"reduction": red} if red != 2 else {})},
                 tol={"fp32": (1e-4, 1e-4)}, ref=kl_div))
    for cap, scale in ((0.0, 1.0), (30.0, 0.5)):
        add(Case(f"cross entropy softcap={cap} scale={scale}", F, "ce_softcap_kernel", (R,),
                 [Buf("logits_ptr", "bf16", R * 512, scale=8.0), Scalar("logits_row_stride", 512),
                  Out("loss_ptr", "fp32", R), Out("lse_ptr", "fp32", R),
                  Buf("labels_ptr", "i64", R, _labels_with_ignored(V)), Scalar("VOCAB", V),
                  Scalar("SOFTCAP", cap, "fp32"), Scalar("LOGIT_SCALE", scale, "fp32")],
                 {"BLOCK": 512, "DO_SOFTCAPPING": cap != 0, "DO_LOGIT_SCALING": scale != 1.0},
                 ref=ce_softcap))
    add(Case("smooth L1 loss (atomic sum)", F, "smooth_l1_kernel", (4,),
             [Buf("x_ptr", "fp32", 1000), Buf("y_ptr", "fp32", 1000), Buf("out_ptr", "fp32", 1, "zeros", out=True),
              Scalar("n_elements", 1000), Scalar("beta", 0.5, "fp32")], {"BLOCK": 256},
             tol={"fp32": (1e-3, 1e-5)}, ref=smooth_l1))
    for dt in ("fp16", "bf16"):
        add(Case(f"gemma rms norm {dt}", F, "gemma_rms_norm_kernel", (R,),
                 [Out("Y", dt, R * 320), Scalar("Y_row_stride", 320), Buf("X", dt, R * 300),
                  Scalar("X_row_stride", 300), Buf("W", dt, 300, scale=0.1), Out("r", "fp32", R),
                  Scalar("n_cols", 300), Scalar("eps", 1e-6, "fp32")], {"BLOCK_SIZE": 512},
                 ref=gemma_rms_norm))
    return out
