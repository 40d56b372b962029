"""corpus_cases_lang.py: launches of the breadth_lang*.py kernels (language
features in library idioms) with their float64 references; each reference
takes (v, c, s) as corpus_refs.py describes."""
import numpy as np

from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_refs import philox4

F = "breadth_lang.py"
_M32 = np.uint64(0xFFFFFFFF)


def _f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32)


# ---- references ------------------------------------------------------------------------------


def welford(v, c, s):
    R, N, ld = s["n_rows"], s["n_cols"], s["stride"]
    x = v["x_ptr"].reshape(-1, ld)[:R, :N]
    return {"mean_ptr": x.mean(1), "var_ptr": x.var(1, ddof=s["correction"])}


def ln_bwd(v, c, s):
    N, ld, G = s["N"], s["stride"], c["GROUP_SIZE_M"]
    R = v["mean_ptr"].size
    x = v["x_ptr"].reshape(R, ld)[:, :N]
    dy = v["dy_ptr"].reshape(R, ld)[:, :N]
    w = v["w_ptr"][:N]
    xhat = (x - v["mean_ptr"][:, None]) * v["rstd_ptr"][:, None]
    wdy = w * dy
    c1 = (xhat * wdy).sum(1, keepdims=True) / N
    c2 = wdy.sum(1, keepdims=True) / N
    dx = v["dx_ptr"].reshape(R, ld).copy()
    dx[:, :N] = (wdy - (xhat * c1 + c2)) * v["rstd_ptr"][:, None]
    dw = np.zeros((G, N))
    db = np.zeros((G, N))
    for r in range(R):
        dw[r % G] += dy[r] * xhat[r]
        db[r % G] += dy[r]
    lock = np.zeros(2 * G)
    lock[G:G + min(G, R)] = 1
    return {"dx_ptr": dx.ravel(), "dw_part_ptr": dw.ravel(), "db_part_ptr": db.ravel(),
            "lock_ptr": lock}


def seg_starts(v, c, s):
    ids = v["sorted_ids_ptr"][:s["n"]]
    n_out = v["seg_ptr"].size
    return {"seg_ptr": np.searchsorted(ids, np.arange(n_out), side="left")}


def _sorted_ids(num_experts):
    def f(rng, n):
        ids = np.sort(rng.integers(0, num_experts, n))
        return np.where(ids == 3, 4, ids)   # one expert with no rows
    return f


NF4 = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                0.07958029955625534, 0.16093020141124725, 0.24611230731010437, 0.33791524171829224,
                0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0])


def nf4_dequant(v, c, s):
    n = s["n_bytes"]
    b = v["packed_ptr"][:n].astype(np.int64) & 0xFF
    code = _f32(v["code_ptr"]).astype(np.float64)
    idx = np.stack([b >> 4, b & 0xF], axis=1).ravel()
    scale = _f32(v["absmax_ptr"]).astype(np.float64)[np.arange(2 * n) // c["QBLOCK"]]
    out = v["out_ptr"].copy()
    out[:2 * n] = code[idx] * scale
    return {"out_ptr": out}


def jsd(v, c, s):
    V, beta = s["n_cols"], c["beta"]
    R = v["label_ptr"].size
    x = v["x_ptr"].reshape(R, -1)[:, :V]
    y = v["y_ptr"].reshape(R, -1)[:, :V]
    q, p = np.exp(x), np.exp(y)
    if beta == 0.0:
        loss, dx = p * (y - x), -p
    elif beta == 1.0:
        loss = q * (x - y)
        dx = loss + q
    else:
        m = beta * p + (1 - beta) * q
        loss = beta * p * y + (1 - beta) * q * x - m * np.log(m)
        dx = (1 - beta) * q * (x - np.log(m))
    n = s["n_non_ignore"]
    out_loss = v["loss_ptr"].reshape(R, -1).copy()
    out_dx = v["dx_ptr"].reshape(R, -1).copy()
    ign = (v["label_ptr"] == c["ignore_index"]) if c.get("HAS_LABEL") else np.zeros(R, bool)
    out_loss[~ign, :V] = (loss / n)[~ign]
    out_dx[~ign, :V] = (dx / n)[~ign]
    out_dx[ign, :V] = 0.0
    return {"loss_ptr": out_loss.ravel(), "dx_ptr": out_dx.ravel()}


def _log_probs(rng, n):
    x = rng.standard_normal(n).reshape(-1, 256) * 2.0
    return (x - np.log(np.exp(x).sum(1, keepdims=True))).ravel()


def recurrent_delta(v, c, s):
    H, K, V = c["H"], c["K"], c["V"]
    T = s["T"]
    B = v["g"].size // (T * H)
    q = v["q"].reshape(B, T, H, K)
    k = v["k"].reshape(B, T, H, K)
    val = v["v"].reshape(B, T, H, V)
    g = v["g"].reshape(B, T, H)
    beta = v["beta"].reshape(B, T, H)
    o = np.zeros((B, T, H, V))
    hT = np.zeros((B, H, K, V))
    for b in range(B):
        for h in range(H):
            st = v["h0"].reshape(B, H, K, V)[b, h].copy() if c["USE_INITIAL_STATE"] else np.zeros((K, V))
            for t in range(T):
                qq, kk = q[b, t, h], k[b, t, h]
                if c["USE_QK_L2NORM"]:
                    qq = qq / np.sqrt((qq * qq).sum() + 1e-6)
                    kk = kk / np.sqrt((kk * kk).sum() + 1e-6)
                qq = qq * s["scale"]
                st = st * np.exp(g[b, t, h])
                vv = (val[b, t, h] - kk @ st) * beta[b, t, h]
                st = st + np.outer(kk, vv)
                o[b, t, h] = qq @ st
            hT[b, h] = st
    out = {"o": o.ravel()}
    if c["STORE_FINAL_STATE"]:
        out["ht"] = hT.ravel()
    return out


def top_p(v, c, s):
    V, ld = s["n_vocab"], s["stride"]
    R = v["top_p_ptr"].size
    x = v["logits_ptr"].reshape(R, ld)[:, :V]
    e = np.exp(x - x.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    out = v["probs_ptr"].reshape(R, ld).copy()
    for r in range(R):
        sp = -np.sort(-p[r])
        before = np.cumsum(sp) - sp
        cutoff = sp[before < v["top_p_ptr"][r]].min()
        kept = np.where(p[r] >= cutoff, p[r], 0.0)
        out[r, :V] = kept / kept.sum()
    return {"probs_ptr": out.ravel()}


def dropout4x(v, c, s):
    n, p = s["n_elements"], np.float32(s["p"])
    n_offs = (n + 3) // 4
    # join(join(r0, r1), join(r2, r3)) stacks along new last dims: r0 r2 r1 r3
    c0, c1, c2, c3 = philox4(s["seed"], np.arange(n_offs))
    words = np.stack([c0, c2, c1, c3], axis=1).ravel()[:n]
    thr = np.uint64(np.float32(p) * np.float32(4294967296.0))
    keep = words >= thr
    x = v["x_ptr"][:n]
    return {"out_ptr": np.where(keep, _f32(x / _f32(1 - p)), 0.0), "keep_ptr": keep.astype(np.int64)}


def amax_amin(v, c, s):
    n, BLOCK = s["n_elements"], c["BLOCK"]
    x = v["x_ptr"][:n]
    amax = v["amax_ptr"].copy()
    amax[0] = max(amax[0], np.abs(x).max())
    for j in range(8):
        amax[1 + j] = max(amax[1 + j], x[j::8].max())
    return {"amax_ptr": amax, "lo_ptr": np.minimum(v["lo_ptr"], x.min()),
            "hi_ptr": np.maximum(v["hi_ptr"], x.max())}


def _with_specials(rng, n):
    x = rng.standard_normal(n) * 3.0
    x[rng.random(n) < 0.1] = np.nan
    x[rng.random(n) < 0.05] = np.inf
    x[rng.random(n) < 0.05] = -np.inf
    x[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return x


def nan_guard(v, c, s):
    n, lo, hi, big = s["n_elements"], s["lo"], s["hi"], s["big"]
    x, y = v["x_ptr"][:n], v["y_ptr"][:n]
    with np.errstate(invalid="ignore"):
        clamp = np.where(np.isnan(x), np.nan, np.minimum(np.maximum(x, lo), hi))
        clamp_plain = np.fmin(np.fmax(x, lo), hi)
        maxn = np.maximum(x, y)
    return {"clamp_ptr": clamp_plain, "clampn_ptr": clamp, "maxn_ptr": maxn,
            "fixed_ptr": np.nan_to_num(x, nan=0.0, posinf=big, neginf=-big)}


def _fmix32(h):
    m = np.uint64(0xFFFFFFFF)
    h = h ^ (h >> np.uint64(16))
    h = (h * np.uint64(0x85EBCA6B)) & m
    h = h ^ (h >> np.uint64(13))
    h = (h * np.uint64(0xC2B2AE35)) & m
    return h ^ (h >> np.uint64(16))


def hash_bucket(v, c, s):
    n = s["n"]
    key = v["keys_ptr"][:n].astype(np.int64)
    lo = key.astype(np.uint64) & _M32
    hi = (key >> 32).astype(np.uint64) & _M32
    h = _fmix32(lo ^ _fmix32((hi + np.uint64(s["seed"] & 0xFFFFFFFF)) & _M32))
    bucket = (h % np.uint64(s["num_buckets"])).astype(np.int64)
    counts = v["counts_ptr"] + np.bincount(bucket, minlength=c["NUM_BUCKETS"])
    return {"bucket_ptr": bucket, "counts_ptr": counts}


# ---- breadth_lang_2.py -----------------------------------------------------------------------


def _bf16(x):
    """float32 to bfloat16 (round to nearest even), back as float64."""
    u = _f32(x).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


def cat_stats(v, c, s):
    BM, BN, ld = c["BM"], c["BN"], s["stride"]
    a = v["a_ptr"].reshape(-1, ld)[:BM, :BN]
    b = v["b_ptr"].reshape(-1, ld)[:BM, :BN]
    both = np.concatenate([a.ravel(), b.ravel()])
    return {"out_ptr": np.array([both.sum(), both.max(), (both * both).sum(), a.sum()])}


def downcast_modes(v, c, s):
    n = s["n"]
    x = _f32(v["x_ptr"][:n])
    with np.errstate(over="ignore"):
        h = x.astype(np.float16)
    h_rtz = np.where(np.abs(h.astype(np.float32)) > np.abs(x), np.nextafter(h, np.float16(0)), h)
    h_rtz = np.where(np.isinf(h_rtz) & np.isfinite(x), np.copysign(np.float16(65504), x), h_rtz)
    bits = x.view(np.uint32)
    b_rtz = (bits & np.uint32(0xFFFF0000)).view(np.float32)
    return {"h_rne_ptr": h.astype(np.float64), "h_rtz_ptr": h_rtz.astype(np.float64),
            "b_rne_ptr": _bf16(x), "b_rtz_ptr": b_rtz.astype(np.float64)}


def _downcast_inputs(rng, n):
    x = (rng.standard_normal(n) * 100.0).astype(np.float32)
    x[:6] = [70000.0, -70000.0, 65519.0, 1e-6, -3e-8, 0.0]
    return x


def const_globals(v, c, s):
    n = s["n"]
    x = v["x_ptr"][:n]
    B = min(c["BLOCK"], 1024)
    small = np.abs(x) < (0.25 if B >= 64 else 0.125)
    poly = (1.0, 0.5, 0.16666666666666666, 0.041666666666666664, 0.008333333333333333)
    acc = np.full_like(x, poly[-1])
    for k in range(len(poly) - 2, -1, -1):
        acc = acc * x + poly[k]
    y = np.where(small, acc * x, np.expm1(x))
    return {"y_ptr": y}


def standardize(v, c, s):
    N, ld, eps = s["n_cols"], s["stride"], s["eps"]
    x = v["x_ptr"].reshape(-1, ld)
    R = x.shape[0]
    y = v["y_ptr"].reshape(R, ld).copy()
    xs = x[:, :N]
    mean = xs.mean(1)
    var = (xs * xs).mean(1) - mean * mean
    inv = np.where(var <= 0, 1 / np.sqrt(eps), 1 / np.sqrt(np.maximum(var, 0) + eps))
    y[:, :N] = (xs - mean[:, None]) * inv[:, None]
    return {"y_ptr": y.ravel(), "stats_ptr": np.stack([mean, inv, np.full(R, N)], 1).ravel()}


def _constant_rows(rng, n):
    x = rng.standard_normal(n)
    x[:128] = 2.5     # a row whose variance is zero
    return x


def batched_transpose(v, c, s):
    B, M, N = s["B"], s["M"], s["N"]
    x = v["x_ptr"][:B * M * N].reshape(B, M, N)
    return {"y_ptr": x.transpose(0, 2, 1).ravel()}


def split_heads(v, c, s):
    T, H, D = s["T"], c["H"], c["D"]
    x = v["x_ptr"].reshape(T, H, D) + v["bias_ptr"][None, :, None]
    return {"y_ptr": x.transpose(1, 0, 2).ravel()}


def swiglu_interleaved(v, c, s):
    M, N, alpha, limit = s["M"], s["N"], s["alpha"], s["limit"]
    x = v["x_ptr"].reshape(M, N, 2)
    gate = np.minimum(x[..., 0], limit)
    lin = np.clip(x[..., 1], -limit, limit)
    return {"out_ptr": (gate / (1 + np.exp(-alpha * gate)) * (lin + 1)).ravel()}


def segmented_cumsum(v, c, s):
    n = s["n"]
    x, f = v["x_ptr"][:n], v["start_ptr"][:n] != 0
    y = np.zeros(n)
    acc = 0.0
    for i in range(n):
        acc = x[i] if f[i] else acc + x[i]
        y[i] = acc
    return {"y_ptr": y, "total_ptr": np.array([f.sum()])}


def embedding_bag(v, c, s):
    D = s["D"]
    w = v["weight_ptr"].reshape(-1, D)
    offs = v["offsets_ptr"].astype(np.int64)
    idx = v["idx_ptr"].astype(np.int64)
    out = np.zeros((len(offs) - 1, D))
    for b in range(len(offs) - 1):
        rows = w[idx[offs[b]:offs[b + 1]]]
        if c["HAS_PSW"]:
            rows = rows * v["psw_ptr"][offs[b]:offs[b + 1], None]
        if offs[b + 1] == offs[b]:
            continue
        out[b] = {0: rows.sum(0), 1: rows.mean(0), 2: rows.max(0)}[c["MODE"]]
    return {"out_ptr": out.ravel()}


def _bag_offsets(rng, n):
    sizes = rng.integers(0, 6, n - 1)
    sizes[2] = 0
    return np.concatenate([[0], np.cumsum(sizes)])


def gumbel_sample(v, c, s):
    from corpus_refs import philox_rand
    V, ld = s["n_vocab"], s["stride"]
    R = v["seeds_ptr"].size
    p = _f32(v["probs_ptr"].reshape(R, ld)[:, :V])
    out = np.zeros(R)
    for r in range(R):
        u = philox_rand(int(v["seeds_ptr"][r]), r * ld + np.arange(V)).astype(np.float32)
        q = -np.log(np.maximum(u, np.float32(1e-10)).astype(np.float32)).astype(np.float32)
        out[r] = np.argmax(p[r] / q)
    return {"out_ptr": out}


def range_options_mm(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    a = v["a_ptr"].reshape(M, K)
    b = v["b_ptr"].reshape(K, N)
    return {"c_ptr": (a @ b + 1.5).ravel()}


def ternary_pack(v, c, s):
    G = s["n_groups"]
    t = v["t_ptr"][:G * 5].astype(np.int64).reshape(G, 5)
    code = ((t + 1) * 3 ** np.arange(5)).sum(1)
    return {"packed_ptr": code, "back_ptr": t.ravel()}


def newton_rsqrt(v, c, s):
    n, BLOCK, tol, max_iters = s["n"], c["BLOCK"], s["tol"], s["max_iters"]
    x = _f32(v["x_ptr"][:n]).astype(np.float64)
    y = np.zeros(n)
    iters = []
    for p in range(0, n, BLOCK):
        xb = x[p:p + BLOCK]
        yb = 1.0 / np.maximum(xb, 1.0)
        it, err = 0, np.inf
        while err > tol and it < max_iters:
            yn = yb * (1.5 - 0.5 * xb * yb * yb)
            err = np.abs(yn - yb).max()
            yb = yn
            it += 1
        y[p:p + BLOCK] = yb
        iters.append(it)
    return {"y_ptr": y, "iters_ptr": np.array(iters)}


# ---- cases -----------------------------------------------------------------------------------


def cases():
    out = []
    add = out.append
    R, N, LD = 13, 300, 320
    add(Case("welford var/mean (three-field tl.reduce)", F, "welford_var_mean_kernel", (4,),
             [Buf("x_ptr", "fp32", R * LD, scale=2.0), Out("mean_ptr", "fp32", R), Out("var_ptr", "fp32", R),
              Scalar("n_rows", R), Scalar("n_cols", N), Scalar("stride", LD), Scalar("correction", 1)],
             {"BLOCK_M": 4, "BLOCK_N": 64}, ref=welford))
    add(Case("welford var/mean, one column block", F, "welford_var_mean_kernel", (2,),
             [Buf("x_ptr", "fp16", 16 * 100, scale=4.0), Out("mean_ptr", "fp32", 16), Out("var_ptr", "fp32", 16),
              Scalar("n_rows", 16), Scalar("n_cols", 100), Scalar("stride", 100), Scalar("correction", 0)],
             {"BLOCK_M": 8, "BLOCK_N": 128}, ref=welford))
    R, N, G = 24, 200, 8
    for wdt in ("fp32",):
        add(Case("layer-norm backward, locked partial dw/db", F, "ln_bwd_dx_fused_kernel", (R,),
                 [Out("dx_ptr", "fp32", R * N), Buf("dy_ptr", "fp32", R * N),
                  Buf("dw_part_ptr", "fp32", G * N, "zeros", out=True),
                  Buf("db_part_ptr", "fp32", G * N, "zeros", out=True), Buf("x_ptr", "fp32", R * N),
                  Buf("w_ptr", wdt, N, "rand"), Buf("mean_ptr", "fp32", R, scale=0.1),
                  Buf("rstd_ptr", "fp32", R, lambda rng, n: 0.5 + rng.random(n)),
                  Buf("lock_ptr", "i32", 2 * G, "zeros", out=True), Scalar("stride", N), Scalar("N", N)],
                 {"GROUP_SIZE_M": G, "BLOCK_N": 256}, tol={"fp32": (1e-4, 1e-4)}, ref=ln_bwd))
    E, n = 16, 300
    add(Case("expert segment starts (while-loop binary search)", F, "seg_start_search_kernel", (E + 1,),
             [Buf("sorted_ids_ptr", "i32", n, _sorted_ids(E)), Out("seg_ptr", "i32", E + 1), Scalar("n", n)],
             ref=seg_starts))
    add(Case("expert segment starts (unrolled block search)", F, "seg_start_block_kernel", (2,),
             [Buf("sorted_ids_ptr", "i32", n, _sorted_ids(E)), Out("seg_ptr", "i32", E + 1), Scalar("n", n),
              Scalar("num_experts", E)], {"LOG_N": 9, "BLOCK_E": 16}, ref=seg_starts))
    nb = 1000
    for gather in (False, True):
        add(Case(f"nf4 dequant ({'gather' if gather else 'table loads'})", F, "nf4_dequant_kernel", (4,),
                 [Buf("packed_ptr", "u8", nb, ("randint", 0, 256)), Buf("code_ptr", "fp32", 16, lambda rng, n: NF4),
                  Buf("absmax_ptr", "fp32", 2 * nb // 64 + 1, "rand"), Out("out_ptr", "fp16", 2 * nb),
                  Scalar("n_bytes", nb)], {"QBLOCK": 64, "BLOCK": 256, "USE_GATHER": gather},
                 ref=nf4_dequant))
    R, V = 6, 200
    for beta, lab in ((0.5, True), (0.0, False), (1.0, True)):
        labels = lambda rng, n: np.where(rng.random(n) < 0.3, -100, rng.integers(0, V, n))
        add(Case(f"jsd beta={beta} labels={lab}", F, "jsd_kernel", (R,),
                 [Buf("x_ptr", "fp32", R * 256, _log_probs), Scalar("x_stride", 256),
                  Buf("y_ptr", "fp32", R * 256, _log_probs), Scalar("y_stride", 256),
                  Out("loss_ptr", "fp32", R * 256), Scalar("loss_stride", 256),
                  Out("dx_ptr", "fp32", R * 256), Scalar("dx_stride", 256),
                  Buf("label_ptr", "i64", R, labels), Scalar("n_non_ignore", 4.0, "fp32"),
                  Scalar("n_cols", V)],
                 {"beta": beta, "ignore_index": -100, "BLOCK": 64, "HAS_LABEL": lab}, ref=jsd))
    B, T, H, K, V = 2, 9, 2, 16, 32
    for norm, init in ((True, True), (False, False)):
        args = [Buf("q", "fp16", B * T * H * K), Buf("k", "fp16", B * T * H * K, scale=0.3),
                Buf("v", "fp16", B * T * H * V), Buf("g", "fp32", B * T * H, lambda rng, n: -rng.random(n) * 0.2),
                Buf("beta", "fp32", B * T * H, "rand"), Out("o", "fp32", B * T * H * V)]
        args += [Buf("h0", "fp32", B * H * K * V, scale=0.2), Out("ht", "fp32", B * H * K * V)] if init else \
            [Null("h0"), Null("ht")]
        args += [Scalar("scale", K ** -0.5, "fp32"), Scalar("T", T)]
        add(Case(f"fused recurrent delta rule l2norm={norm} state={init}", F, "fused_recurrent_delta_kernel",
                 (2, B * H), args,
                 {"H": H, "K": K, "V": V, "BK": 16, "BV": 16, "USE_QK_L2NORM": norm,
                  "USE_INITIAL_STATE": init, "STORE_FINAL_STATE": init},
                 tol={"fp32": (1e-3, 1e-3)}, ref=recurrent_delta))
    R, V = 5, 300
    add(Case("top-p renormalisation (descending sort, cumsum)", F, "top_p_renorm_kernel", (R,),
             [Buf("logits_ptr", "fp32", R * 320, scale=3.0),
              Buf("top_p_ptr", "fp32", R, lambda rng, n: np.array([0.5, 0.9, 0.99, 1.0, 0.05])[:n]),
              Out("probs_ptr", "fp32", R * 320), Scalar("n_vocab", V), Scalar("stride", 320)],
             {"BLOCK_V": 512}, tol={"fp32": (1e-6, 1e-4)}, ref=top_p))
    n = 4000
    add(Case("dropout from randint4x words", F, "dropout4x_kernel", (4,),
             [Buf("x_ptr", "fp32", n), Out("out_ptr", "fp32", n), Out("keep_ptr", "i8", n),
              Scalar("n_elements", n), Scalar("p", 0.25, "fp32"), Scalar("seed", 1234)],
             {"BLOCK": 256}, ref=dropout4x))
    n = 3000
    add(Case("amax/min/max by float atomics (sem, scope)", F, "amax_amin_kernel", (6,),
             [Buf("x_ptr", "fp32", n, scale=5.0), Buf("amax_ptr", "fp32", 9, ("fill", -1e30), out=True),
              Buf("lo_ptr", "fp32", 1, ("fill", 1e30), out=True), Buf("hi_ptr", "fp32", 1, ("fill", -1e30), out=True),
              Scalar("n_elements", n)], {"BLOCK": 512}, ref=amax_amin))
    n = 1000
    add(Case("NaN-aware clamp, maximum and nan_to_num", F, "nan_guard_kernel", (4,),
             [Buf("x_ptr", "fp32", n, _with_specials), Buf("y_ptr", "fp32", n, _with_specials),
              Out("clamp_ptr", "fp32", n), Out("clampn_ptr", "fp32", n), Out("maxn_ptr", "fp32", n),
              Out("fixed_ptr", "fp32", n), Scalar("n_elements", n), Scalar("lo", -1.5, "fp32"),
              Scalar("hi", 2.0, "fp32"), Scalar("big", 1e30, "fp32")], {"BLOCK": 256}, ref=nan_guard))
    n = 2000
    add(Case("32-bit hash into buckets (uint32 wraps, histogram)", F, "hash_bucket_kernel", (8,),
             [Buf("keys_ptr", "i64", n, lambda rng, n: rng.integers(-2**62, 2**62, n)),
              Out("bucket_ptr", "i32", n), Buf("counts_ptr", "i32", 32, "zeros", out=True), Scalar("n", n),
              Scalar("num_buckets", 29), Scalar("seed", 77)], {"NUM_BUCKETS": 32, "BLOCK": 256},
             ref=hash_bucket))

    F2 = "breadth_lang_2.py"
    add(Case("cat, ravel, view and reshape(can_reorder) of two tiles", F2, "cat_stats_kernel", (1,),
             [Buf("a_ptr", "fp32", 16 * 40), Buf("b_ptr", "fp32", 16 * 40), Out("out_ptr", "fp32", 4),
              Scalar("stride", 40)], {"BM": 16, "BN": 32}, ref=cat_stats))
    add(Case("fp16/bf16 downcasts rtne and rtz", F2, "downcast_modes_kernel", (4,),
             [Buf("x_ptr", "fp32", 1000, _downcast_inputs), Out("h_rne_ptr", "fp16", 1000),
              Out("h_rtz_ptr", "fp16", 1000), Out("b_rne_ptr", "bf16", 1000), Out("b_rtz_ptr", "bf16", 1000),
              Scalar("n", 1000)], {"BLOCK": 256}, tol={"fp16": (0, 0), "bf16": (0, 0)}, ref=downcast_modes))
    for block, exp2 in ((256, True), (32, False)):
        add(Case(f"module constexprs, dtype and tuple (BLOCK={block}, exp2={exp2})", F2,
                 "const_globals_kernel", (1000 // block + 1,),
                 [Buf("x_ptr", "fp32", 1000, scale=0.4), Out("y_ptr", "fp16", 1000), Scalar("n", 1000)],
                 {"BLOCK": block, "USE_EXP2": exp2}, tol={"fp16": (1e-3, 1e-3)}, ref=const_globals))
    add(Case("helper returning a nested tuple, noinline scalar helper with early return", F2, "standardize_kernel", (6,),
             [Buf("x_ptr", "fp32", 6 * 128, _constant_rows), Out("y_ptr", "fp32", 6 * 128),
              Out("stats_ptr", "fp32", 18), Scalar("n_cols", 100), Scalar("stride", 128),
              Scalar("eps", 1e-5, "fp32")], {"BLOCK": 128}, tol={"fp32": (1e-4, 1e-4)}, ref=standardize))
    B, M, N = 5, 40, 72
    add(Case("persistent batched transpose (3-D grid, num_programs)", F2, "batched_transpose_kernel", (2, 3, 2),
             [Buf("x_ptr", "fp32", B * M * N), Out("y_ptr", "fp32", B * M * N), Scalar("B", B), Scalar("M", M),
              Scalar("N", N), Scalar("stride_b", M * N), Scalar("stride_m", N)], {"BM": 32, "BN": 32},
             ref=batched_transpose))
    T, H, D = 37, 4, 16
    add(Case("split heads (reshape, permute, expand_dims over two axes)", F2, "split_heads_kernel", (3,),
             [Buf("x_ptr", "fp16", T * H * D), Out("y_ptr", "fp16", T * H * D), Buf("bias_ptr", "fp16", H),
              Scalar("T", T)], {"H": H, "D": D, "BT": 16}, ref=split_heads))
    M, N = 50, 96
    add(Case("interleaved swiglu (split of a reshaped tile)", F2, "swiglu_interleaved_kernel", (4, 2),
             [Buf("x_ptr", "bf16", M * 2 * N, scale=4.0), Out("out_ptr", "bf16", M * N), Scalar("M", M),
              Scalar("N", N), Scalar("alpha", 1.702, "fp32"), Scalar("limit", 7.0, "fp32")],
             {"BM": 16, "BN": 64}, ref=swiglu_interleaved))
    add(Case("segmented cumsum ((value, flag) scan)", F2, "segmented_cumsum_kernel", (1,),
             [Buf("x_ptr", "fp32", 900), Buf("start_ptr", "i8", 900, lambda rng, n: rng.random(n) < 0.05),
              Out("y_ptr", "fp32", 900), Out("total_ptr", "i32", 1), Scalar("n", 900)], {"BLOCK": 1024},
             tol={"fp32": (1e-5, 1e-5)}, ref=segmented_cumsum))
    nb, D = 9, 80
    for mode, psw in ((0, True), (1, False), (2, False)):
        add(Case(f"embedding bag mode={mode} weights={psw} (cache hints)", F2, "embedding_bag_kernel", (nb, 2),
                 [Buf("weight_ptr", "fp16", 50 * D), Buf("idx_ptr", "i64", 60, ("randint", 0, 50)),
                  Buf("offsets_ptr", "i32", nb + 1, _bag_offsets),
                  Buf("psw_ptr", "fp32", 60, "rand") if psw else Null("psw_ptr"), Out("out_ptr", "fp32", nb * D),
                  Scalar("D", D)], {"MODE": mode, "HAS_PSW": psw, "BLOCK_D": 64}, ref=embedding_bag))
    R, V = 6, 500
    add(Case("gumbel-max sampling from tl.rand", F2, "gumbel_sample_kernel", (R,),
             [Buf("probs_ptr", "fp32", R * 512, "rand"), Buf("seeds_ptr", "i64", R, ("randint", 0, 2**40)),
              Out("out_ptr", "i64", R), Scalar("n_vocab", V), Scalar("stride", 512)], {"BLOCK_V": 512},
             ref=gumbel_sample))
    M, N, K = 40, 48, 100
    add(Case("dot loop under tl.range options", F2, "range_options_mm_kernel", (3, 2),
             [Buf("a_ptr", "fp16", M * K), Buf("b_ptr", "fp16", K * N), Out("c_ptr", "fp32", M * N),
              Scalar("M", M), Scalar("N", N), Scalar("K", K)], {"BM": 16, "BN": 32, "BK": 32},
             tol={"fp32": (1e-2, 1e-2)}, ref=range_options_mm))
    add(Case("balanced ternary pack (remainders of negatives)", F2, "ternary_pack_kernel", (2,),
             [Buf("t_ptr", "i8", 300 * 5, ("randint", -1, 2)), Out("packed_ptr", "u8", 300),
              Out("back_ptr", "i8", 300 * 5), Scalar("n_groups", 300)], {"BLOCK": 256}, ref=ternary_pack))
    add(Case("newton rsqrt while a block's error is large", F2, "newton_rsqrt_kernel", (4,),
             [Buf("x_ptr", "fp32", 900, lambda rng, n: 0.5 + 3 * rng.random(n)), Out("y_ptr", "fp32", 900),
              Out("iters_ptr", "i32", 4), Scalar("n", 900), Scalar("tol", 1e-6, "fp32"), Scalar("max_iters", 50)],
             {"BLOCK": 256}, tol={"fp32": (1e-5, 1e-5)}, ref=newton_rsqrt))
    return out
