"""Cases of the xformers-, FlagAttention-, applied-ai- and flashinfer-style
kernels in xformers_flag_style.py and their float64 numpy references; each
reference takes (v, c, s) as corpus_refs.py describes. Every case name
starts with "xfa "."""
import numpy as np

import corpus_refs as R_
from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_cases_flaggems import _bf16, _f16
from corpus_cases_quant import _finite_codes

F = "xformers_flag_style.py"
LOG2E = 1.4426950408889634


def _cdiv(a, b):
    return -(-a // b)


def _f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


def _round(dt):
    return {"fp16": _f16, "bf16": _bf16, "fp32": _f32}[dt]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _values(*xs):
    return lambda rng, n: np.array(xs[:n], dtype=np.float64)


def _positive(lo, width):
    return lambda rng, n: lo + width * rng.random(n)


def _distinct(hi):
    return lambda rng, n: rng.choice(hi, n, replace=False)


def _act(x, name):
    if name == "relu":
        return np.maximum(x, 0.0)
    if name == "leaky_relu":
        return np.where(x >= 0, x, 0.01 * x)
    if name == "gelu":
        return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    if name == "squared_relu":
        return np.maximum(x, 0.0) ** 2
    return x


# ---- xformers references -------------------------------------------------------------------------


def dropout_bias_act(v, c, s):
    M, N, BN = s["M"], s["N"], c["BLOCK_N"]
    x = v["X"].reshape(M, -1)[:, :N]
    if c["USE_BIAS"]:
        x = x + v["BIAS"][None, :N]
    x = _act(x, c["ACTIVATION"])
    p = float(np.float32(s["p"]))
    rows, cols = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
    seeds = v["SEEDS"].astype(np.int64)[cols // BN]
    r = np.zeros((M, N))
    for sd in np.unique(seeds):
        sel = seeds == sd
        r[sel] = R_.philox_rand(int(sd), (rows * N + cols)[sel])
    y = np.where(r > p, x * float(np.float32(1.0 / (1.0 - p))), 0.0)
    out = v["Y"].reshape(M, -1).copy()
    out[:, :N] = y
    return {"Y": out.ravel()}


def k_softmax(v, c, s):
    K = s["K"]
    L = s["stride_xm"] // s["stride_xn"]
    x = v["X"].reshape(-1, L, K).copy()
    y = v["Y"].reshape(-1, L, K).copy()
    mask = np.ones((L, K), dtype=bool)
    if c["CAUSAL"]:
        mask = np.arange(K)[None, :] <= np.arange(L)[:, None]
    z = np.where(mask[None], x, -np.inf)
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    res = z - np.log(e.sum(-1, keepdims=True)) if c["LOG"] else e / e.sum(-1, keepdims=True)
    y[:, mask] = res[:, mask]
    return {"Y": y.ravel()}


def rms_norm_add(dt):
    r = _round(dt)

    def ref(v, c, s):
        N, W = c["N_COLS"], s["stride"]
        x = v["x_ptr"].reshape(-1, W).copy()
        a = r(x[:, :N] + v["y_ptr"].reshape(-1, W)[:, :N])
        x[:, :N] = a
        rstd = 1.0 / np.sqrt((a * a).mean(1, keepdims=True) + s["eps"])
        h = v["h1_ptr"].reshape(-1, W).copy()
        h[:, :N] = a * rstd * (v["w_ptr"][None, :N] if c["INCLUDE_WEIGHT"] else 1.0)
        return {"x_ptr": x.ravel(), "h1_ptr": h.ravel()}
    return ref


def layer_norm_fw(v, c, s):
    N, W = s["N"], s["stride"]
    x = v["X"].reshape(-1, W)[:, :N]
    mean = x.mean(1)
    xz = x - mean[:, None]
    rstd = 1.0 / np.sqrt((xz * xz).mean(1) + s["eps"])
    y = xz * rstd[:, None]
    if c["affine"]:
        y = y * v["W"][None, :N] + v["B"][None, :N]
    out = v["Y"].reshape(-1, W).copy()
    out[:, :N] = y
    return {"Y": out.ravel(), "Mean": mean, "Rstd": rstd}


def layer_norm_bwd(v, c, s):
    N, W, G = s["N"], s["stride"], c["GROUP_SIZE_M"]
    x = v["X"].reshape(-1, W)[:, :N]
    dy = v["DY"].reshape(-1, W)[:, :N]
    R = x.shape[0]
    w = v["W"][:N]
    xhat = (x - v["Mean"][:, None]) * v["Rstd"][:, None]
    wdy = w[None] * dy
    m1 = (xhat * wdy).mean(1, keepdims=True)
    m2 = wdy.mean(1, keepdims=True)
    dx = (wdy - (xhat * m1 + m2)) * v["Rstd"][:, None]
    out = v["DX"].reshape(-1, W).copy()
    out[:, :N] = dx
    dw = np.zeros((G, N))
    db = np.zeros((G, N))
    for r in range(R):
        dw[r % G] += dy[r] * xhat[r]
        db[r % G] += dy[r]
    lock = np.concatenate([np.zeros(G), np.minimum(np.bincount(np.arange(R) % G, minlength=G), 1)])
    return {"DX": out.ravel(), "DW": dw.ravel(), "DB": db.ravel(), "Lock": lock}


def rope_fw(v, c, s):
    D = c["HEAD_DIM"]
    half = D // 2
    T = s["n_tokens"]
    x = v["X"].reshape(T, -1, D)
    pos = v["SEQPOS"][:T].astype(np.float64)
    inv = float(s["theta"]) ** (-2.0 * np.arange(half) / D)
    ang = pos[:, None, None] * inv[None, None, :]
    cs, sn = np.cos(ang), np.sin(ang)
    if c["INTERLEAVED"]:
        d1, d2 = 2 * np.arange(half), 2 * np.arange(half) + 1
    else:
        d1, d2 = np.arange(half), np.arange(half) + half
    out = np.empty_like(x)
    out[..., d1] = x[..., d1] * cs - x[..., d2] * sn
    out[..., d2] = x[..., d2] * cs + x[..., d1] * sn
    return {"OUT": out.ravel()}


def _half_bits(rng, n):
    """int32 words holding fp16 (scale, shift): scale low, shift high."""
    scale = (0.05 + 0.1 * rng.random(n)).astype(np.float16).view(np.uint16).astype(np.int64)
    shift = (-1.0 + 0.5 * rng.random(n)).astype(np.float16).view(np.uint16).astype(np.int64)
    return ((shift << 16) | scale).astype(np.uint32).view(np.int32).astype(np.int64)


def _int4_words(rng, n):
    return rng.integers(-2 ** 31, 2 ** 31, n)


def _dequant_int4(words, ss, D, groups):
    """words [..., D/8] int32, ss [..., groups] int32 -> [..., D] float (rounded to fp16)."""
    w = words.astype(np.int64) & 0xFFFFFFFF
    d = np.arange(D)
    nib = (w[..., d // 8] >> (4 * (d % 8))) & 0xF
    u = ss.astype(np.int64) & 0xFFFFFFFF
    sc = (u & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)
    sh = (u >> 16).astype(np.uint16).view(np.float16).astype(np.float64)
    gd = D // groups
    val = _f32(nib * _f32(sc[..., d // gd]) + sh[..., d // gd])
    return _f16(val)


def splitk_int4(v, c, s):
    D, S, NPS, G = c["D"], s["_splits"], c["N_PER_SPLIT"], c["N_GROUPS"]
    Z, H, Mq, Gkv = s["_Z"], s["H"], s["Mq"], s["G_kv"]
    Hk = H // Gkv
    Nmax = s["stride_kh"] // (D // 8)
    lens = v["Seq_len"].astype(np.int64)
    q = v["Q"].reshape(Z, H, Mq, D)
    K = _dequant_int4(v["K"].reshape(Z, Hk, Nmax, D // 8), v["K_ss"].reshape(Z, Hk, Nmax, G), D, G)
    V = _dequant_int4(v["V"].reshape(Z, Hk, Nmax, D // 8), v["V_ss"].reshape(Z, Hk, Nmax, G), D, G)
    o = np.zeros((Z, H, S, Mq, D))
    lse = np.full((Z, H, S, Mq), -np.inf)
    for z in range(Z):
        for h in range(H):
            for sp in range(S):
                lo, hi = sp * NPS, min(sp * NPS + NPS, lens[z])
                if hi <= lo:
                    continue
                k, vv = K[z, h // Gkv, lo:hi], V[z, h // Gkv, lo:hi]
                sc = q[z, h] @ k.T * s["sm_scale"]
                m = sc.max(1, keepdims=True)
                p = np.exp(sc - m)
                o[z, h, sp] = p @ vv / p.sum(1, keepdims=True)
                lse[z, h, sp] = (m + np.log(p.sum(1, keepdims=True)))[:, 0]
    return {"Out_splitK": o.ravel(), "LSE_splitK": lse.ravel()}


def decode_blockptr(v, c, s):
    D, H, G = c["D"], s["H"], s["G_kv"]
    lens = v["Seq_len"].astype(np.int64)
    Z = lens.size
    q = v["Q"].reshape(Z, H, D)
    Nmax = s["stride_kh"] // D
    k = v["K"].reshape(Z, H // G, Nmax, D)
    vv = v["V"].reshape(Z, H // G, Nmax, D)
    out = np.zeros((Z, H, D))
    for z in range(Z):
        for h in range(H):
            n = lens[z]
            sc = k[z, h // G, :n] @ q[z, h] * s["sm_scale"]
            p = np.exp(sc - sc.max())
            out[z, h] = p @ vv[z, h // G, :n] / p.sum()
    return {"Out": out.ravel()}


def splitk_reduce(v, c, s):
    S, D, H = c["SPLIT_K"], c["D"], s["H"]
    lse = v["LSE_splitK"].reshape(-1, H, S, s["stride_ls"])
    Z, Mq = lse.shape[0], lse.shape[3]
    o = v["Out_splitK"].reshape(Z, H, S, Mq, D)
    mx = lse.max(2, keepdims=True)
    w = np.exp(lse - mx)
    acc = (o * w[..., None]).sum(2) / w.sum(2)[..., None]
    out = {"Out": acc.ravel()}
    if c["WRITE_LSE"]:
        out["LSE"] = (mx[:, :, 0] + np.log(w.sum(2))).ravel()
    return out


def dual_gemm_silu(dt):
    r = _round(dt)

    def ref(v, c, s):
        M, N, K = s["M"], s["N"], s["K"]
        x = v["X"].reshape(M, K)
        a1 = x @ v["W1"].reshape(K, N)
        a2 = x @ v["W2"].reshape(K, N)
        if c["HAS_BIAS"]:
            a1 = a1 + v["B1"][None]
            a2 = a2 + v["B2"][None]
        out = {"Y": (a1 * _sigmoid(a1) * a2).ravel()}
        if c["STORE_X12"]:
            out["X12"] = np.concatenate([r(a1), r(a2)], 1).ravel()
        return out
    return ref


def sum_0(v, c, s):
    M, N, W = s["M"], s["N"], s["stride_xm"]
    return {"Out": v["X"].reshape(M, W)[:, :N].sum(0)}


# ---- FlagAttention references --------------------------------------------------------------------


def _attn_dims(s, c):
    Z, H, M, N = s["Z"], s["H"], s["M"], s["N"]
    D = c["BLOCK_DMODEL"]
    return Z, H, M, N, D


def fa_fwd(dt):
    r = _round(dt)

    def ref(v, c, s):
        Z, H, M, N, D = _attn_dims(s, c)
        G = s["num_groups"]
        q = v["Q"].reshape(Z, H, M, D)
        k = v["K"].reshape(Z, H // G, N, D)
        vv = v["V"].reshape(Z, H // G, N, D)
        o = np.zeros((Z, H, M, D))
        lse = np.zeros((Z, H, M))
        causal = (s["P_SEQ"] + np.arange(M)[:, None]) >= np.arange(N)[None, :]
        p_drop = float(np.float32(s["dropout_p"]))
        for z in range(Z):
            for h in range(H):
                sc = q[z, h] @ k[z, h // G].T * s["sm_scale"]
                if c["IS_CAUSAL"]:
                    sc = np.where(causal, sc, -np.inf)
                m = sc.max(1, keepdims=True)
                p = np.exp(sc - m)
                l_ = p.sum(1, keepdims=True)
                lse[z, h] = (m + np.log(l_))[:, 0]
                if c["IS_DROPOUT"]:
                    offs = (z * H + h) * M * N + np.arange(M)[:, None] * N + np.arange(N)[None, :]
                    keep = R_.philox_rand(s["seed"], offs) > p_drop
                    p = np.where(keep, p / (1.0 - p_drop), 0.0)
                o[z, h] = r(p) @ vv[z, h // G] / l_
        return {"O": o.ravel(), "L": lse.ravel()}
    return ref


def bwd_preprocess(v, c, s):
    D = c["D_HEAD"]
    o = v["Out"].reshape(-1, D)
    do = v["DO"].reshape(-1, D)
    return {"Delta": (o * do).sum(1)}


def bwd_kv(dt):
    r = _round(dt)

    def ref(v, c, s):
        Z, H, M, N, D = _attn_dims(s, c)
        sm = s["sm_scale"]
        q = v["Q"].reshape(Z, H, M, D)
        k = v["K"].reshape(Z, H, N, D)
        vv = v["V"].reshape(Z, H, N, D)
        do = v["DO"].reshape(Z, H, M, D)
        L = v["L"].reshape(Z, H, M)
        Dl = v["D"].reshape(Z, H, M)
        dk = np.zeros((Z, H, N, D))
        dv = np.zeros((Z, H, N, D))
        causal = (s["P_SEQ"] + np.arange(M)[:, None]) >= np.arange(N)[None, :]
        for z in range(Z):
            for h in range(H):
                p = np.exp(q[z, h] @ k[z, h].T * sm - L[z, h][:, None])
                if c["CAUSAL"]:
                    p = np.where(causal, p, 0.0)
                dv[z, h] = r(p).T @ do[z, h]
                dp = do[z, h] @ vv[z, h].T
                ds = r(p * (dp - Dl[z, h][:, None]))
                dk[z, h] = ds.T @ q[z, h] * sm
        return {"DK": dk.ravel(), "DV": dv.ravel()}
    return ref


def piecewise(dt):
    r = _round(dt)

    def ref(v, c, s):
        Z, H, M, N, D = _attn_dims(s, c)
        q1, q2 = v["Q1"].reshape(Z, H, M, D), v["Q2"].reshape(Z, H, M, D)
        k1, k2, vv = (v[n].reshape(Z, H, N, D) for n in ("K1", "K2", "V"))
        dist = s["P_SEQ"] + np.arange(M)[:, None] - np.arange(N)[None, :]
        o = np.zeros((Z, H, M, D))
        lse = np.zeros((Z, H, M))
        for z in range(Z):
            for h in range(H):
                sc = np.where(np.abs(dist) < c["w"], q1[z, h] @ k1[z, h].T, q2[z, h] @ k2[z, h].T) * s["sm_scale"]
                if c["IS_CAUSAL"]:
                    sc = np.where(dist >= 0, sc, -np.inf)
                m = sc.max(1, keepdims=True)
                p = np.exp(sc - m)
                l_ = p.sum(1, keepdims=True)
                o[z, h] = r(p) @ vv[z, h] / l_
                lse[z, h] = (m + np.log(l_))[:, 0]
        return {"O": o.ravel(), "L": lse.ravel()}
    return ref


def total_attention(v, c, s):
    Z, H, M, N, D = _attn_dims(s, c)
    G = s["num_groups"]
    q = v["Q"].reshape(Z, H, M, D)
    k = v["K"].reshape(Z, H // G, N, D)
    L = v["L"].reshape(Z, H, M)
    ta = np.zeros((Z, H, N))
    causal = (s["P_SEQ"] + np.arange(M)[:, None]) >= np.arange(N)[None, :]
    for z in range(Z):
        for h in range(H):
            p = np.exp(q[z, h] @ k[z, h // G].T * s["sm_scale"] - L[z, h][:, None])
            if c["CAUSAL"]:
                p = np.where(causal, p, 0.0)
            ta[z, h] = p.sum(0)
    return {"TA": ta.ravel()}


def paged_decode(v, c, s):
    D, PS, QG, HK = c["HEAD_SIZE"], c["KV_BLOCK_SIZE"], c["QUERY_GROUP_SIZE"], c["NUM_KV_HEADS"]
    lens = v["context_lens_ptr"].astype(np.int64)
    B = lens.size
    q = v["q_ptr"].reshape(B, -1, D)
    H = q.shape[1]
    kc = v["k_cache_ptr"].reshape(-1, HK, PS, D)
    vc = v["v_cache_ptr"].reshape(-1, HK, PS, D)
    bt = v["block_tables_ptr"].astype(np.int64).reshape(B, -1)
    out = np.zeros((B, H, D))
    for b in range(B):
        n = lens[b]
        pages = bt[b, :_cdiv(n, PS)]
        for h in range(H):
            k = kc[pages, h // QG].reshape(-1, D)[:n]
            vv = vc[pages, h // QG].reshape(-1, D)[:n]
            sc = k @ q[b, h] * s["attn_scale"]
            p = np.exp(sc - sc.max())
            out[b, h] = p @ vv / p.sum()
    return {"out_ptr": out.ravel()}


# ---- applied-ai references -----------------------------------------------------------------------


def gemm_ab(a_name, b_name, c_name, add_init=True):
    def ref(v, c, s):
        m = s.get("m", s.get("M"))
        n = s.get("n", s.get("N"))
        k = s.get("k", s.get("K"))
        res = v[a_name].reshape(m, k) @ v[b_name].reshape(k, n)
        return {c_name: (v[c_name] + res.ravel()) if add_init else res.ravel()}
    return ref


def fp8_rowwise(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    a = R_._e4m3(v["A"]).reshape(M, K)
    b = R_._e4m3(v["B"]).reshape(N, K)
    out = (a @ b.T) * v["A_scale"][:, None] * v["B_scale"][None, :]
    if c["USE_BIAS"]:
        out = out + v["Bias"][None, :]
    return {"C": out.ravel()}


def moe_gemm(v, c, s):
    N, K = s["N"], s["K"]
    offs = v["expert_offsets"].astype(np.int64)
    x = v["X"].reshape(-1, K)
    w = v["W"].reshape(-1, N, K)
    y = np.zeros((x.shape[0], N))
    for e in range(offs.size - 1):
        y[offs[e]:offs[e + 1]] = x[offs[e]:offs[e + 1]] @ w[e].T
    return {"Y": y.ravel()}


def grouped_gemm(v, c, s):
    sizes = v["group_sizes"].astype(np.int64).reshape(-1, 3)
    offs = v["group_offsets"].astype(np.int64).reshape(-1, 3)
    out = v["C"].copy()
    for (m, n, k), (oa, ob, oc) in zip(sizes, offs):
        a = v["A"][oa:oa + m * k].reshape(m, k)
        b = v["B"][ob:ob + k * n].reshape(k, n)
        out[oc:oc + m * n] = (a @ b).ravel()
    return {"C": out}


# ---- flashinfer references -----------------------------------------------------------------------


def fused_add_rms(dt):
    r = _round(dt)

    def ref(v, c, s):
        N = s["n_cols"]
        xi = v["input_ptr"].reshape(-1, s["input_stride"]).copy()
        rs = v["residual_ptr"].reshape(-1, s["residual_stride"]).copy()
        x = r(xi[:, :N] + rs[:, :N])
        rs[:, :N] = x
        w = v["weight_ptr"][:N] + (1.0 if c["GEMMA"] else 0.0)
        xi[:, :N] = x / np.sqrt((x * x).mean(1, keepdims=True) + s["eps"]) * w[None]
        return {"input_ptr": xi.ravel(), "residual_ptr": rs.ravel()}
    return ref


def merge_state(v, c, s):
    H, D = s["num_heads"], s["head_dim"]
    sa, sb = v["s_a_ptr"].reshape(-1, H), v["s_b_ptr"].reshape(-1, H)
    va, vb = v["v_a_ptr"].reshape(-1, H, D), v["v_b_ptr"].reshape(-1, H, D)
    mx = np.maximum(sa, sb)
    a, b = 2.0 ** (sa - mx), 2.0 ** (sb - mx)
    out = {"v_merged_ptr": ((va * a[..., None] + vb * b[..., None]) / (a + b)[..., None]).ravel()}
    if "s_merged_ptr" in v:
        out["s_merged_ptr"] = (np.log2(a + b) + mx).ravel()
    return out


def var_merge_states(v, c, s):
    H, D = s["num_heads"], c["head_dim"]
    ind = v["indptr"].astype(np.int64)
    vs = v["v_ptr"].reshape(-1, H, D)
    ss = v["s_ptr"].reshape(-1, H)
    T = ind.size - 1
    vm = np.zeros((T, H, D))
    sm = np.zeros((T, H))
    for t in range(T):
        sl = ss[ind[t]:ind[t + 1]]
        mx = sl.max(0)
        w = 2.0 ** (sl - mx)
        vm[t] = (vs[ind[t]:ind[t + 1]] * w[..., None]).sum(0) / w.sum(0)[:, None]
        sm[t] = mx + np.log2(w.sum(0))
    return {"v_merged_ptr": vm.ravel(), "s_merged_ptr": sm.ravel()}


def append_paged(v, c, s):
    PS, D = c["PAGE_SIZE"], c["HEAD_DIM"]
    H = s["num_heads"]
    bi = v["batch_indices"].astype(np.int64)
    pos = v["positions"].astype(np.int64)
    indptr = v["kv_indptr"].astype(np.int64)
    idx = v["kv_indices"].astype(np.int64)
    out = {}
    for name, src in (("k_cache", "k_ptr"), ("v_cache", "v_ptr")):
        cache = v[name].reshape(-1, PS, H, D).copy()
        x = v[src].reshape(-1, H, D)
        for t in range(bi.size):
            page = idx[indptr[bi[t]] + pos[t] // PS]
            cache[page, pos[t] % PS] = x[t]
        out[name] = cache.ravel()
    return out


# ---- cases ---------------------------------------------------------------------------------------


def _xformers_cases():
    out = []
    add = out.append
    M, N, BM, BN = 37, 100, 16, 32
    for act, bias, dt, p, n in (("gelu", True, "fp16", 0.3, 100), ("squared_relu", False, "bf16", 0.5, 100),
                                ("leaky_relu", True, "fp32", 0.1, 64)):
        W = n + 3
        add(Case(f"xfa xformers dropout+bias+{act} {dt} p={p} N={n}", F, "_xf_dropout_bias_act_fw",
                 (_cdiv(M, BM), _cdiv(n, BN)),
                 [Out("Y", dt, M * n), Buf("X", dt, M * W), Buf("BIAS", dt, n),
                  Buf("SEEDS", "i32", _cdiv(n, BN), ("randint", 1, 2 ** 31 - 1)),
                  Scalar("stride_ym", n), Scalar("stride_xm", W), Scalar("M", M), Scalar("N", n),
                  Scalar("p", p, "fp32")],
                 {"ACTIVATION": act, "USE_BIAS": bias, "EVEN_N": n % BN == 0, "BLOCK_M": BM, "BLOCK_N": BN},
                 ref_tol={"fp32": (2e-4, 2e-4)}, ref=dropout_bias_act))
    B = 3
    for causal, log, dt, L, K in ((True, False, "fp16", 37, 37), (False, True, "fp32", 5, 50)):
        add(Case(f"xfa xformers k-softmax {'causal ' if causal else ''}{'log ' if log else ''}{dt} K={K}", F,
                 "_xf_k_softmax", (B, L),
                 [Out("Y", dt, B * L * K), Buf("X", dt, B * L * K, scale=2.0),
                  Scalar("stride_ym", L * K), Scalar("stride_yn", K), Scalar("stride_xm", L * K),
                  Scalar("stride_xn", K), Scalar("K", K)],
                 {"LOG": log, "CAUSAL": causal, "DEPTH": 64, "IS_FP16": dt == "fp16"}, ref=k_softmax))
    R, N, W = 5, 300, 304
    for dt, wt in (("fp16", True), ("fp32", False)):
        add(Case(f"xfa xformers rms norm + residual in place {dt}{' weight' if wt else ''}", F, "_xf_rms_norm_add",
                 (R,),
                 [Buf("x_ptr", dt, R * W, out=True), Buf("y_ptr", dt, R * W), Out("h1_ptr", dt, R * W),
                  Buf("w_ptr", dt, N, "rand"), Scalar("eps", 1e-6, "fp32"), Scalar("stride", W)],
                 {"N_COLS": N, "BLOCK_SIZE": 128, "INCLUDE_WEIGHT": wt}, ref=rms_norm_add(dt)))
    R, N = 6, 200
    for dt, aff, W in (("fp16", True, 200),):
        add(Case(f"xfa xformers layer norm fw {dt}{' affine' if aff else ''}", F, "_xf_layer_norm_fw", (R,),
                 [Buf("X", dt, R * W, scale=2.0), Out("Y", dt, R * W), Buf("W", dt, N, "rand"), Buf("B", dt, N),
                  Out("Mean", "fp32", R), Out("Rstd", "fp32", R), Scalar("stride", W), Scalar("N", N),
                  Scalar("eps", 1e-5, "fp32")],
                 {"affine": aff, "BLOCK_SIZE_N": 256}, ref=layer_norm_fw))
    for dt, R, N, G in (("fp32", 10, 100, 4),):
        add(Case(f"xfa xformers layer norm bwd dx fused, dw/db under a spin lock {dt} groups {G}", F,
                 "_xf_layer_norm_bwd_dx_fused", (R,),
                 [Out("DX", dt, R * N), Buf("DY", dt, R * N), Buf("DW", dt, G * N, "zeros", out=True),
                  Buf("DB", dt, G * N, "zeros", out=True), Buf("X", dt, R * N), Buf("W", dt, N, "rand"),
                  Buf("Mean", "fp32", R, scale=0.1), Buf("Rstd", "fp32", R, _positive(0.5, 1.0)),
                  Buf("Lock", "i32", 2 * G, "zeros", out=True), Scalar("stride", N), Scalar("N", N)],
                 {"GROUP_SIZE_M": G, "BLOCK_SIZE_N": 128}, ref=layer_norm_bwd))
    T, H, D = 37, 3, 32
    for dt, inter in (("fp16", True), ("fp32", False)):
        add(Case(f"xfa xformers rotary, in-kernel frequencies {'interleaved' if inter else 'half split'} {dt}", F,
                 "_xf_rope_fw", (_cdiv(T, 16), H),
                 [Out("OUT", dt, T * H * D), Buf("X", dt, T * H * D), Buf("SEQPOS", "i32", T, ("randint", 0, 64)),
                  Scalar("stride_xt", H * D), Scalar("stride_xh", D), Scalar("stride_ot", H * D),
                  Scalar("stride_oh", D), Scalar("n_tokens", T), Scalar("theta", 10000.0, "fp32")],
                 {"HEAD_DIM": D, "INTERLEAVED": inter, "BLOCK_T": 16}, ref_tol={"fp32": (5e-4, 5e-4)},
                 ref=rope_fw))
    Z, H, Gkv, Mq, D, Nmax, NPS, G = 2, 4, 2, 3, 32, 48, 16, 2
    S = _cdiv(Nmax, NPS)
    Hk = H // Gkv
    for lens, BN in (((45, 29), 16),):
        scal = {"_splits": S, "_Z": Z}
        args = [Buf("Q", "fp16", Z * H * Mq * D), Buf("K", "i32", Z * Hk * Nmax * D // 8, _int4_words),
                Buf("V", "i32", Z * Hk * Nmax * D // 8, _int4_words),
                Buf("K_ss", "i32", Z * Hk * Nmax * G, _half_bits), Buf("V_ss", "i32", Z * Hk * Nmax * G, _half_bits),
                Scalar("sm_scale", D ** -0.5, "fp32"),
                Out("Out_splitK", "fp32", Z * H * S * Mq * D), Out("LSE_splitK", "fp32", Z * H * S * Mq),
                Buf("Seq_len", "i32", Z, _values(*lens)),
                Scalar("stride_qz", H * Mq * D), Scalar("stride_qh", Mq * D), Scalar("stride_qm", D),
                Scalar("stride_kz", Hk * Nmax * D // 8), Scalar("stride_kh", Nmax * D // 8), Scalar("stride_kn", D // 8),
                Scalar("stride_kssz", Hk * Nmax * G), Scalar("stride_kssh", Nmax * G), Scalar("stride_kssn", G),
                Scalar("stride_oz", H * S * Mq * D), Scalar("stride_oh", S * Mq * D), Scalar("stride_os", Mq * D),
                Scalar("stride_om", D), Scalar("stride_lz", H * S * Mq), Scalar("stride_lh", S * Mq),
                Scalar("stride_ls", Mq), Scalar("Mq", Mq), Scalar("H", H), Scalar("G_kv", Gkv)]

        def _ref(v, c, s, scal=scal):
            return splitk_int4(v, c, {**s, **scal})
        add(Case(f"xfa xformers split-K decode, int4 group-quantised KV, lens {lens} BLOCK_N {BN}", F,
                 "_xf_splitk_int4_fwd", (Z * H, S), args,
                 {"N_PER_SPLIT": NPS, "BLOCK_M": 16, "BLOCK_N": BN, "D": D, "PACKED_PER_VAL": 8, "N_GROUPS": G},
                 tol={"fp32": (2e-3, 2e-3)}, ref=_ref))
    Z, H, G, D, Nmax = 3, 4, 2, 32, 48
    for dt, lens, bounds in (("fp16", (45, 29, 7), True), ("bf16", (48, 32, 16), False)):
        add(Case(f"xfa xformers decode through block pointers {dt} lens {lens}{' boundary_check' if bounds else ''}",
                 F, "_xf_decode_blockptr", (Z * H,),
                 [Buf("Q", dt, Z * H * D), Buf("K", dt, Z * (H // G) * Nmax * D), Buf("V", dt, Z * (H // G) * Nmax * D),
                  Scalar("sm_scale", D ** -0.5, "fp32"), Out("Out", dt, Z * H * D), Buf("Seq_len", "i32", Z, _values(*lens)),
                  Scalar("stride_qz", H * D), Scalar("stride_qh", D), Scalar("stride_kz", (H // G) * Nmax * D),
                  Scalar("stride_kh", Nmax * D), Scalar("stride_kn", D), Scalar("stride_oz", H * D), Scalar("stride_oh", D),
                  Scalar("H", H), Scalar("G_kv", G)],
                 {"BLOCK_N": 16, "D": D, "BOUNDS_CHECKS_N": bounds}, ref=decode_blockptr))
    Z, H, SK, Mq, D = 2, 3, 4, 5, 32
    for wl in (True,):
        add(Case(f"xfa xformers split-K reduce (lse merge){' + lse' if wl else ''}", F, "_xf_splitk_reduce",
                 (Z * H, Mq),
                 [Buf("Out_splitK", "fp32", Z * H * SK * Mq * D), Buf("LSE_splitK", "fp32", Z * H * SK * Mq, scale=2.0),
                  Out("Out", "fp16", Z * H * Mq * D), Out("LSE", "fp32", Z * H * Mq),
                  Scalar("stride_oz", H * SK * Mq * D), Scalar("stride_oh", SK * Mq * D), Scalar("stride_os", Mq * D),
                  Scalar("stride_om", D), Scalar("stride_lz", H * SK * Mq), Scalar("stride_lh", SK * Mq),
                  Scalar("stride_ls", Mq), Scalar("stride_fz", H * Mq * D), Scalar("stride_fh", Mq * D),
                  Scalar("stride_fm", D), Scalar("stride_lse", Mq), Scalar("H", H)],
                 {"SPLIT_K": SK, "D": D, "WRITE_LSE": wl}, ref=splitk_reduce))
    M, N, K = 37, 50, 40
    for dt, bias, x12, (bm, bn, bk) in (("fp16", True, True, (16, 32, 32)), ("bf16", False, False, (32, 32, 16))):
        add(Case(f"xfa xformers dual gemm silu (swiglu) {dt}{' bias' if bias else ''}{' store x12' if x12 else ''}",
                 F, "_xf_dual_gemm_silu", (_cdiv(M, bm), _cdiv(N, bn)),
                 [Buf("X", dt, M * K), Buf("W1", dt, K * N, scale=0.3), Buf("W2", dt, K * N, scale=0.3),
                  Buf("B1", dt, N), Buf("B2", dt, N), Out("Y", dt, M * N), Out("X12", dt, M * 2 * N),
                  Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("stride_xm", K), Scalar("stride_wk", N),
                  Scalar("stride_ym", N)],
                 {"HAS_BIAS": bias, "STORE_X12": x12, "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, ref=dual_gemm_silu(dt)))
    for dt, M, N, W in (("fp32", 77, 50, 53),):
        add(Case(f"xfa xformers sum over dim 0 {dt} {M}x{N}", F, "_xf_sum_0", (_cdiv(N, 32),),
                 [Out("Out", "fp32", N), Buf("X", dt, M * W), Scalar("M", M), Scalar("N", N), Scalar("stride_xm", W)],
                 {"BLOCK_M": 16, "BLOCK_N": 32}, ref_tol={"fp32": (5e-4, 5e-4)}, ref=sum_0))
    return out


def _attn_args(Z, H, Hk, M, N, D):
    return [Scalar("stride_qz", H * M * D), Scalar("stride_qh", M * D), Scalar("stride_qm", D), Scalar("stride_qk", 1),
            Scalar("stride_kz", Hk * N * D), Scalar("stride_kh", N * D), Scalar("stride_kn", D), Scalar("stride_kk", 1)]


def _flag_cases():
    out = []
    add = out.append
    D = 32
    for Z, H, Hk, M, N, causal, dt, drop, BM, BN in ((2, 4, 2, 48, 48, True, "fp16", 0.0, 16, 16),
                                                       (1, 4, 2, 37, 53, True, "bf16", 0.2, 16, 16),
                                                       (2, 2, 2, 20, 45, False, "fp16", 0.0, 32, 16)):
        P = N - M
        args = [Buf("Q", dt, Z * H * M * D), Buf("K", dt, Z * Hk * N * D), Buf("V", dt, Z * Hk * N * D),
                Scalar("sm_scale", D ** -0.5, "fp32"), Scalar("dropout_p", drop, "fp32"), Scalar("seed", 1234),
                Out("L", "fp32", Z * H * M), Out("O", dt, Z * H * M * D)] + _attn_args(Z, H, Hk, M, N, D)
        args += [Scalar("stride_vz", Hk * N * D), Scalar("stride_vh", N * D), Scalar("stride_vn", D),
                 Scalar("stride_vk", 1), Scalar("stride_oz", H * M * D), Scalar("stride_oh", M * D),
                 Scalar("stride_om", D), Scalar("stride_ok", 1), Scalar("Z", Z), Scalar("H", H), Scalar("M", M),
                 Scalar("N", N), Scalar("P_SEQ", P), Scalar("num_groups", H // Hk)]
        add(Case(f"xfa flag flash fwd {'causal ' if causal else ''}{'dropout ' if drop else ''}gqa {H}/{Hk} "
                 f"M={M} N={N} {dt}", F, "_fa_fwd_kernel", (_cdiv(M, BM), H, Z), args,
                 {"BLOCK_M": BM, "BLOCK_DMODEL": D, "BLOCK_N": BN, "IS_CAUSAL": causal, "IS_DROPOUT": drop > 0,
                  "EVEN_M": M % BM == 0, "EVEN_N": N % BN == 0}, ref=fa_fwd(dt)))
    for Z, H, M, dt in ((2, 3, 37, "fp16"),):
        st = [Scalar("stride_oz", H * M * D), Scalar("stride_oh", M * D), Scalar("stride_om", D), Scalar("stride_ok", 1)]
        add(Case(f"xfa flag bwd preprocess delta {dt} M={M}", F, "_fa_bwd_preprocess", (_cdiv(M, 16), H, Z),
                 [Buf("Out", dt, Z * H * M * D), Buf("DO", dt, Z * H * M * D), Out("Delta", "fp32", Z * H * M)] + st +
                 [Scalar("stride_doz", H * M * D), Scalar("stride_doh", M * D), Scalar("stride_dom", D),
                  Scalar("stride_dok", 1), Scalar("stride_dz", H * M), Scalar("stride_dh", M), Scalar("stride_dm", 1),
                  Scalar("M", M)], {"BLOCK_M": 16, "D_HEAD": D, "DIVISIBLE_M": M % 16 == 0}, ref=bwd_preprocess))
    for Z, H, M, N, causal, dt in ((1, 2, 37, 45, True, "fp16"), (2, 1, 32, 32, False, "bf16")):
        args = [Buf("Q", dt, Z * H * M * D), Buf("K", dt, Z * H * N * D), Buf("V", dt, Z * H * N * D),
                Scalar("sm_scale", D ** -0.5, "fp32"), Buf("DO", dt, Z * H * M * D),
                Out("DK", dt, Z * H * N * D), Out("DV", dt, Z * H * N * D),
                Buf("L", "fp32", Z * H * M, _positive(2.5, 1.0)), Buf("D", "fp32", Z * H * M)]
        args += _attn_args(Z, H, H, M, N, D)
        args += [Scalar("stride_doz", H * M * D), Scalar("stride_doh", M * D), Scalar("stride_dom", D),
                 Scalar("stride_dok", 1), Scalar("Z", Z), Scalar("H", H), Scalar("M", M), Scalar("N", N),
                 Scalar("P_SEQ", N - M)]
        add(Case(f"xfa flag flash bwd dk/dv {'causal ' if causal else ''}M={M} N={N} {dt}", F, "_fa_bwd_kv_kernel",
                 (_cdiv(N, 16), H, Z), args,
                 {"BLOCK_M": 16, "BLOCK_DMODEL": D, "BLOCK_N": 16, "CAUSAL": causal,
                  "DIVISIBLE_M": M % 16 == 0, "DIVISIBLE_N": N % 16 == 0},
                 tol={"fp16": (2e-2, 2e-2), "bf16": (5e-2, 5e-2)}, ref=bwd_kv(dt)))
    for Z, H, M, N, causal, dt, w in ((1, 2, 37, 45, True, "fp16", 12), (2, 1, 32, 32, False, "bf16", 8)):
        args = [Buf("Q1", dt, Z * H * M * D), Buf("K1", dt, Z * H * N * D), Buf("Q2", dt, Z * H * M * D),
                Buf("K2", dt, Z * H * N * D), Buf("V", dt, Z * H * N * D), Scalar("sm_scale", D ** -0.5, "fp32"),
                Out("L", "fp32", Z * H * M), Out("O", dt, Z * H * M * D),
                Scalar("stride_qz", H * M * D), Scalar("stride_qh", M * D), Scalar("stride_qm", D),
                Scalar("stride_kz", H * N * D), Scalar("stride_kh", N * D), Scalar("stride_kn", D),
                Scalar("stride_oz", H * M * D), Scalar("stride_oh", M * D), Scalar("stride_om", D),
                Scalar("Z", Z), Scalar("H", H), Scalar("M", M), Scalar("N", N), Scalar("P_SEQ", N - M)]
        add(Case(f"xfa flag piecewise attention w={w} {'causal ' if causal else ''}M={M} N={N} {dt}", F,
                 "_fa_piecewise_fwd", (_cdiv(M, 16), Z * H), args,
                 {"w": w, "BLOCK_M": 16, "BLOCK_DMODEL": D, "BLOCK_N": 16, "IS_CAUSAL": causal,
                  "DIVISIBLE_M": M % 16 == 0, "DIVISIBLE_N": N % 16 == 0}, ref=piecewise(dt)))
    for Z, H, Hk, M, N, causal, dt in ((1, 4, 2, 37, 45, True, "fp16"),):
        args = [Buf("Q", dt, Z * H * M * D), Buf("K", dt, Z * Hk * N * D), Buf("L", "fp32", Z * H * M, _positive(3.0, 1.0)),
                Out("TA", "fp32", Z * H * N), Scalar("sm_scale", D ** -0.5, "fp32")]
        args += _attn_args(Z, H, Hk, M, N, D)
        args += [Scalar("Z", Z), Scalar("H", H), Scalar("M", M), Scalar("N", N), Scalar("P_SEQ", N - M),
                 Scalar("num_groups", H // Hk)]
        add(Case(f"xfa flag total attention (tl.range num_stages) {'causal ' if causal else ''}M={M} N={N} {dt}", F,
                 "_fa_total_attention", (_cdiv(N, 16), H, Z), args,
                 {"BLOCK_M": 16, "BLOCK_DMODEL": D, "BLOCK_N": 16, "CAUSAL": causal,
                  "DIVISIBLE_M": M % 16 == 0, "DIVISIBLE_N": N % 16 == 0},
                 tol={"fp32": (1e-3, 1e-3)}, ref=total_attention))
    B, H, HK, D, PS, NB, MAXB = 3, 4, 2, 32, 16, 10, 3
    for dt, lens in (("bf16", (37, 1, 16)),):
        add(Case(f"xfa flag paged decode attention gqa {dt} lens {lens}", F, "_fa_paged_decode", (B, H),
                 [Out("out_ptr", dt, B * H * D), Buf("q_ptr", dt, B * H * D), Buf("k_cache_ptr", dt, NB * HK * PS * D),
                  Buf("v_cache_ptr", dt, NB * HK * PS * D), Buf("context_lens_ptr", "i32", B, _values(*lens)),
                  Buf("block_tables_ptr", "i32", B * MAXB, _distinct(NB)), Scalar("attn_scale", D ** -0.5, "fp32"),
                  Scalar("stride_bt0", MAXB), Scalar("stride_bt1", 1), Scalar("stride_q0", H * D),
                  Scalar("stride_q1", D), Scalar("stride_kb", HK * PS * D), Scalar("stride_kh", PS * D),
                  Scalar("stride_kt", D), Scalar("stride_o0", H * D), Scalar("stride_o1", D)],
                 {"NUM_KV_HEADS": HK, "QUERY_GROUP_SIZE": H // HK, "HEAD_SIZE": D, "KV_BLOCK_SIZE": PS},
                 ref=paged_decode))
    return out


def _applied_cases():
    out = []
    add = out.append
    m, n, k = 37, 50, 100
    for dt, (bm, bn, bk, sk, gm) in (("bf16", (16, 32, 16, 3, 2)),):
        add(Case(f"xfa applied-ai split-K gemm atomics {dt} split {sk} group_m {gm}", F, "_ai_splitk_gemm",
                 (_cdiv(m, bm) * _cdiv(n, bn), sk),
                 [Buf("a_ptr", dt, m * k), Buf("b_ptr", dt, k * n), Buf("c_ptr", "fp32", m * n, "zeros", out=True),
                  Scalar("stride_am", k), Scalar("stride_ak", 1), Scalar("stride_bk", n), Scalar("stride_bn", 1),
                  Scalar("stride_cm", n), Scalar("stride_cn", 1), Scalar("m", m), Scalar("n", n), Scalar("k", k)],
                 {"block_m": bm, "block_n": bn, "block_k": bk, "split_k": sk, "group_m": gm},
                 tol={"fp32": (1e-3, 1e-3)}, ref=gemm_ab("a_ptr", "b_ptr", "c_ptr")))
    M, N = 33, 40
    for K, bias in ((64, True), (80, False)):
        sc = lambda rng, n: 1e-3 + 1e-3 * rng.random(n)  # noqa: E731
        add(Case(f"xfa applied-ai fp8 e4m3 row-wise gemm K={K}{' bias' if bias else ''}", F, "_ai_fp8_rowwise_gemm",
                 (_cdiv(M, 16) * _cdiv(N, 16),),
                 [Buf("A", "u8", M * K, _finite_codes(False)), Buf("B", "u8", N * K, _finite_codes(False)),
                  Out("C", "bf16", M * N), Buf("A_scale", "fp32", M, sc), Buf("B_scale", "fp32", N, sc),
                  Buf("Bias", "fp32", N), Scalar("M", M), Scalar("N", N), Scalar("K", K),
                  Scalar("stride_am", K), Scalar("stride_ak", 1), Scalar("stride_bn", K), Scalar("stride_bk", 1),
                  Scalar("stride_cm", N), Scalar("stride_cn", 1)],
                 {"USE_BIAS": bias, "EVEN_K": K % 32 == 0, "BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 32,
                  "GROUP_M": 2}, ref=fp8_rowwise))
    M, N, K = 37, 40, 72
    for progs, blk in ((7, 16), (5, 32)):
        add(Case(f"xfa applied-ai stream-K gemm {progs} programs blocks {blk}", F, "_ai_streamk_gemm", (progs,),
                 [Buf("A", "fp16", M * K), Buf("B", "fp16", K * N), Buf("C", "fp32", M * N, "zeros", out=True),
                  Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("stride_am", K), Scalar("stride_bk", N),
                  Scalar("stride_cm", N), Scalar("total_programs", progs)],
                 {"BLOCK_M": blk, "BLOCK_N": blk, "BLOCK_K": blk}, tol={"fp32": (1e-3, 1e-3)},
                 ref=gemm_ab("A", "B", "C")))
    counts = (5, 0, 19, 9)
    offs = np.concatenate([[0], np.cumsum(counts)])
    T, E, N, K = int(offs[-1]), len(counts), 48, 40
    for dt, BM in (("bf16", 32),):
        mt = _cdiv(max(counts), BM)
        add(Case(f"xfa applied-ai moe gemm expert offsets {dt} BLOCK_M {BM}", F, "_ai_moe_gemm", (E * mt, _cdiv(N, 16)),
                 [Buf("X", dt, T * K), Buf("W", dt, E * N * K, scale=0.3), Out("Y", dt, T * N),
                  Buf("expert_offsets", "i32", E + 1, _values(*offs)), Scalar("N", N), Scalar("K", K),
                  Scalar("stride_xm", K), Scalar("stride_we", N * K), Scalar("stride_wn", K), Scalar("stride_wk", 1),
                  Scalar("stride_ym", N)],
                 {"MAX_M_TILES": mt, "BLOCK_M": BM, "BLOCK_N": 16, "BLOCK_K": 16}, ref=moe_gemm))
    probs = ((20, 24, 32), (37, 16, 20), (9, 40, 48))
    oa = np.concatenate([[0], np.cumsum([m * k for m, n, k in probs])])
    ob = np.concatenate([[0], np.cumsum([k * n for m, n, k in probs])])
    oc = np.concatenate([[0], np.cumsum([m * n for m, n, k in probs])])
    sizes = [x for p in probs for x in p]
    offsets = [x for i in range(3) for x in (oa[i], ob[i], oc[i])]
    lds = [x for m, n, k in probs for x in (k, n, n)]
    for nsm in (7,):
        add(Case(f"xfa applied-ai persistent grouped gemm from offset tables {nsm} programs", F, "_ai_grouped_gemm",
                 (nsm,),
                 [Buf("A", "fp16", int(oa[-1])), Buf("B", "fp16", int(ob[-1])), Out("C", "fp16", int(oc[-1])),
                  Buf("group_sizes", "i32", 9, _values(*sizes)), Buf("group_offsets", "i64", 9, _values(*offsets)),
                  Buf("group_lds", "i32", 9, _values(*lds)), Scalar("group_count", 3)],
                 {"NUM_SM": nsm, "BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}, ref=grouped_gemm))
    return out


def _flashinfer_cases():
    out = []
    add = out.append
    R, N = 4, 300
    for dt, gemma in (("bf16", True),):
        add(Case(f"xfa flashinfer fused add rms norm {dt}{' gemma' if gemma else ''}", F, "_fi_fused_add_rms_norm",
                 (R,),
                 [Buf("input_ptr", dt, R * 304, out=True), Buf("residual_ptr", dt, R * N, out=True),
                  Buf("weight_ptr", dt, N, "rand"), Scalar("input_stride", 304), Scalar("residual_stride", N),
                  Scalar("n_cols", N), Scalar("eps", 1e-6, "fp32")],
                 {"GEMMA": gemma, "BLOCK_SIZE": 128}, ref=fused_add_rms(dt)))
    S, H, D = 5, 3, 40
    for with_s in (True, False):
        add(Case(f"xfa flashinfer merge two attention states{' + lse' if with_s else ' (s_merged None)'}", F,
                 "_fi_merge_state", (S,),
                 [Buf("v_a_ptr", "fp16", S * H * D), Buf("s_a_ptr", "fp32", S * H, scale=3.0),
                  Buf("v_b_ptr", "fp16", S * H * D), Buf("s_b_ptr", "fp32", S * H, scale=3.0),
                  Out("v_merged_ptr", "fp16", S * H * D),
                  Out("s_merged_ptr", "fp32", S * H) if with_s else Null("s_merged_ptr"),
                  Scalar("num_heads", H), Scalar("head_dim", D)], {"bdx": 16}, ref=merge_state))
    ind = (0, 3, 4, 8, 10)
    T, H, D = len(ind) - 1, 2, 40
    add(Case("xfa flashinfer variable-length merge states (indptr)", F, "_fi_variable_length_merge_states", (T, H),
             [Buf("v_ptr", "bf16", ind[-1] * H * D), Buf("s_ptr", "fp32", ind[-1] * H, scale=3.0),
              Buf("indptr", "i32", T + 1, _values(*ind)), Out("v_merged_ptr", "bf16", T * H * D),
              Out("s_merged_ptr", "fp32", T * H), Scalar("num_heads", H)], {"head_dim": D, "BLOCK_D": 64},
             ref=var_merge_states))
    PS, H, D, NP = 4, 3, 32, 8
    bidx, pos = (0, 0, 0, 1, 2, 2, 2), (5, 6, 7, 10, 0, 1, 2)
    for dt in ("bf16",):
        add(Case(f"xfa flashinfer append paged kv cache {dt}", F, "_fi_append_paged_kv", (len(bidx),),
                 [Buf("k_ptr", dt, len(bidx) * H * D), Buf("v_ptr", dt, len(bidx) * H * D),
                  Buf("batch_indices", "i32", len(bidx), _values(*bidx)), Buf("positions", "i32", len(bidx), _values(*pos)),
                  Buf("kv_indptr", "i32", 4, _values(0, 2, 5, 6)), Buf("kv_indices", "i32", 6, _distinct(NP)),
                  Buf("k_cache", dt, NP * PS * H * D, "zeros", out=True),
                  Buf("v_cache", dt, NP * PS * H * D, "zeros", out=True),
                  Scalar("stride_kt", H * D), Scalar("stride_kh", D), Scalar("stride_cp", PS * H * D),
                  Scalar("stride_cs", H * D), Scalar("stride_ch", D), Scalar("num_heads", H)],
                 {"PAGE_SIZE": PS, "HEAD_DIM": D, "BLOCK_H": 4}, ref=append_paged))
    return out


def cases():
    return _xformers_cases() + _flag_cases() + _applied_cases() + _flashinfer_cases()
