"""Cases of the MoE and linear-attention kernels in tk_kernels_style.py and
the tkk_*.py modules beside it, and their float64 numpy references; each reference takes (v, c, s) as
corpus_refs.py describes."""
import numpy as np

from corpus_cases import Buf, Case, Desc, DescOut, Null, Out, Scalar, Tuple
from corpus_cases_flaggems import _f16
from corpus_cases_quant import _finite_codes, fp8_encode, fp8_table
from corpus_cases_vllm import _cdiv, _ints
from corpus_refs import _e2m1

F = "tk_kernels_style.py"
F_CS = "tkk_cumsum_norm.py"
F_TRIL = "tkk_tril.py"
F_WY = "tkk_wy_chunk.py"
F_DS = "tkk_delta_state.py"
F_REC = "tkk_recurrent.py"


def _i32(words):
    """uint32 words as the int32 values an i32 buffer holds."""
    return np.asarray(words, dtype=np.int64).astype(np.uint32).view(np.int32).astype(np.int64)


def _u32(x):
    return np.asarray(x, dtype=np.int64).astype(np.int32).view(np.uint32).astype(np.int64)


def _f32_bits(x):
    return np.asarray(x, dtype=np.float32).view(np.int32).astype(np.int64)


def _chunk_indices(cu, bt):
    """(sequence, chunk) pairs of packed sequences, flattened."""
    out = []
    for n in range(len(cu) - 1):
        out += [(n, t) for t in range(_cdiv(cu[n + 1] - cu[n], bt))]
    return np.array(out, dtype=np.int64).reshape(-1)


def _spans(v, s, n_rows):
    """(bos, eos) of every sequence: packed by cu_seqlens, or n_rows // T
    sequences of length T."""
    if "cu_seqlens" in v:
        cu = v["cu_seqlens"].astype(np.int64)
        return [(int(cu[n]), int(cu[n + 1])) for n in range(len(cu) - 1)]
    T = s["T"]
    return [(b * T, b * T + T) for b in range(n_rows // T)]


def _chunks(bos, eos, bt):
    for r0 in range(bos, eos, bt):
        yield np.arange(r0, min(r0 + bt, eos))


# ---- MoE ----------------------------------------------------------------------------------------


def swiglu(v, c, s):
    M, N = s["M"], s["n_cols"]
    a = v["A"].reshape(M, 2 * N)
    glu, lin = a[:, 0::2], a[:, 1::2]
    if "limit" in s:
        glu = np.minimum(glu, s["limit"])
        lin = np.clip(lin, -s["limit"], s["limit"])
    out = glu / (1.0 + np.exp(-s["alpha"] * glu)) * (lin + 1.0)
    if c["OUT_FMT"] == "flex":
        res = {"OutActualScale": np.maximum(v["OutActualScale"], np.abs(out).max())}
        res["Out"] = np.clip(out / v["OutExpectedScale"][0], -c["FLEX_MAX"], c["FLEX_MAX"]).reshape(-1)
        return res
    return {"Out": out.reshape(-1)}


def topk_bitmatrix(v, c, s):
    R, E, K = s["n_rows"], s["n_expts"], c["N_ACT"]
    x = v["X"].reshape(R, E)
    idx = np.stack([np.lexsort((np.arange(E), -row))[:K] for row in x])
    val = np.take_along_axis(x, idx, 1)
    if c["APPLY_SOFTMAX"]:
        e = np.exp(val - val.max(1, keepdims=True))
        val = e / e.sum(1, keepdims=True)
    words = np.zeros((R, c["N_EXPTS_PAD"] // 32), dtype=np.int64)
    for r in range(R):
        for i in idx[r]:
            words[r, i // 32] |= 1 << (i % 32)
    return {"Yv": val.reshape(-1), "Yi": idx.reshape(-1), "Bits": _i32(words).reshape(-1)}


def _random_words(p):
    return lambda rng, n: _i32(np.where(rng.random((n, 32)) < p, 1, 0) @ (1 << np.arange(32)))


def bitmatrix_hist(v, c, s):
    R, E, W = s["n_rows"], s["n_expts"], c["N_WORDS"]
    w = _u32(v["Bits"]).reshape(R, W)
    bits = (w[:, :, None] >> np.arange(32)) & 1
    hist = v["Hist"].copy()
    hist[:E] += bits.sum(0).reshape(-1)[:E]
    return {"Hist": hist, "RowCount": bits.sum((1, 2))}


def _expert_rows(E, K):
    """Rows of K distinct experts each."""
    return lambda rng, n: np.concatenate([rng.choice(E, K, replace=False) for _ in range(n // K)])


def masked_compaction(v, c, s):
    R, K = s["n_rows"], c["N_ACT"]
    yv, yi = v["Yv"].reshape(R, K), v["Yi"].reshape(R, K).astype(np.int64)
    mask = _u32(v["BitMask"])
    ov, oi = np.zeros((R, K)), np.full((R, K), -1, dtype=np.int64)
    for r in range(R):
        keep = [j for j in range(K) if (mask[yi[r, j] // 32] >> (yi[r, j] % 32)) & 1]
        ov[r, :len(keep)], oi[r, :len(keep)] = yv[r, keep], yi[r, keep]
    return {"RetYv": ov.reshape(-1), "RetYi": oi.reshape(-1)}


def expt_offsets(v, c, s):
    h = v["Hist"].astype(np.int64)
    tiles = -(-h // c["BLOCK_M"])
    info = np.full(s["max_tiles"], -1, dtype=np.int64)
    t = 0
    for e, n in enumerate(tiles):
        for b in range(n):
            info[t] = (b << 16) | e
            t += 1
    return {"TokenStarts": np.concatenate([[0], np.cumsum(h)]),
            "TileStarts": np.concatenate([[0], np.cumsum(tiles)]), "TileInfo": info}


def _routing(hist, block_m, n_tiles):
    """token starts and the tile table of a fixed expert histogram."""
    starts = np.concatenate([[0], np.cumsum(hist)])
    info = [(b << 16) | e for e, n in enumerate(hist) for b in range(_cdiv(n, block_m))]
    info += [-1] * (n_tiles - len(info))
    return starts, np.array(info, dtype=np.int64)


def gather_matmul(hist, w_layout):
    def ref(v, c, s):
        N, K, NA = s["N"], s["K"], c["N_ACT"]
        E = len(hist)
        starts = np.concatenate([[0], np.cumsum(hist)])
        x = v["X"].reshape(-1, K)
        if c["X_FMT"] == "fp16":
            x = _f16(x)
        w = v["W"].reshape(E, K, N) if w_layout == "kn" else v["W"].reshape(E, N, K).transpose(0, 2, 1)
        y = np.zeros((starts[-1], N))
        for e in range(E):
            rows = np.arange(starts[e], starts[e + 1])
            src = v["GatherIndx"][rows].astype(np.int64) // NA
            y[rows] = x[src] @ w[e]
            if "Bias" in v:
                y[rows] += v["Bias"].reshape(E, N)[e]
        if "Gammas" in v:
            y *= v["Gammas"][:, None]
        return {"Y": y.reshape(-1)}
    return ref


def mxfp4_upcast(v, c, s):
    M, K = s["M"], s["K"]
    p = v["W"].astype(np.int64).reshape(M, K // 2)
    vals = np.stack([_e2m1(p & 15), _e2m1(p >> 4)], -1).reshape(M, K)
    scale = 2.0 ** (v["Scale"].astype(np.int64).reshape(M, K // 32) - 127)
    return {"Out": (vals.reshape(M, K // 32, 32) * scale[:, :, None]).reshape(-1)}


def _e4m3(b):
    """e4m3 bytes as the kernel decodes them through fp16 bits: no NaN code
    (0x7F is 480)."""
    b = np.asarray(b, dtype=np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    e, m = (b >> 3) & 15, b & 7
    return sign * np.where(e == 0, m * 2.0 ** -9, 2.0 ** (e - 7) * (1 + m / 8))


def masked_reduce(v, c, s):
    nk, M, N = s["n_k"], s["M"], s["N"]
    x = _e4m3(v["X"]).reshape(nk, M, N)
    if c["HAS_SCALE"]:
        x = x * v["XScale"][:, None, None]
    live = (v["Mask"].astype(np.int64)[None, :] >> np.arange(nk)[:, None]) & 1  # [nk, M]
    y = (x * live[:, :, None]).sum(0)
    cnt = np.repeat(live.sum(0)[:, None], N, 1)
    amax = max(_f32_bits(np.abs(y).max()).item(), v["YAbsMax"][0])
    return {"Y": y.reshape(-1), "Count": cnt.reshape(-1), "YAbsMax": np.array([amax])}


# ---- linear attention ---------------------------------------------------------------------------


def cumsum_scalar(v, c, s):
    H, BT = c["H"], c["BT"]
    x = v["s"]
    o = np.zeros_like(x)
    for bos, eos in _spans(v, s, x.size // H):
        for h in range(H):
            if c["HEAD_FIRST"]:
                idx = lambda r: bos * H + h * (eos - bos) + (r - bos)  # noqa: E731
            else:
                idx = lambda r: r * H + h  # noqa: E731
            for rows in _chunks(bos, eos, BT):
                seg = x[idx(rows)]
                cs = np.cumsum(seg[::-1])[::-1] if c["REVERSE"] else np.cumsum(seg)
                o[idx(rows)] = cs * s.get("scale", 1.0)
    return {"o": o}


def cumsum_vector(v, c, s):
    H, S, BT = c["H"], c["S"], c["BT"]
    x = v["s"].reshape(-1, H, S)
    o = np.zeros_like(x)
    for bos, eos in _spans(v, s, x.shape[0]):
        for rows in _chunks(bos, eos, BT):
            seg = x[rows]
            o[rows] = np.cumsum(seg[::-1], 0)[::-1] if c["REVERSE"] else np.cumsum(seg, 0)
    return {"o": o.reshape(-1)}


def l2norm(v, c, s):
    T, D = s["T"], c["D"]
    x = v["x"].reshape(T, D)
    r = 1 / np.sqrt((x * x).sum(1) + s["eps"])
    return {"y": (x * r[:, None]).reshape(-1), "rstd": r}


def solve_tril(v, c, s):
    H, BT = c["H"], c["BT"]
    A = v["A"].reshape(-1, H, BT)
    Ai = np.zeros((A.shape[0], H, 16))
    for bos, eos in _spans(v, s, A.shape[0]):
        for rows in _chunks(bos, eos, 16):
            n, col = len(rows), ((rows[0] - bos) % BT)
            for h in range(H):
                L = np.tril(A[rows, h, col:col + n], -1)
                Ai[rows, h, :n] = np.linalg.inv(np.eye(n) + L)
    return {"Ai": Ai.reshape(-1)}


def recompute_w_u(v, c, s):
    H, K, V, BT = c["H"], c["K"], c["V"], c["BT"]
    k, vv = v["k"].reshape(-1, H, K), v["v"].reshape(-1, H, V)
    beta, A = v["beta"].reshape(-1, H), v["A"].reshape(-1, H, BT)
    decay = np.exp(v["g"].reshape(-1, H)) if "g" in v else np.ones_like(beta)
    w, u = np.zeros_like(k), np.zeros_like(vv)
    for bos, eos in _spans(v, s, k.shape[0]):
        for rows in _chunks(bos, eos, BT):
            for h in range(H):
                a = A[rows, h, :len(rows)]
                u[rows, h] = a @ (vv[rows, h] * beta[rows, h, None])
                w[rows, h] = a @ (k[rows, h] * (beta[rows, h] * decay[rows, h])[:, None])
    return {"w": w.reshape(-1), "u": u.reshape(-1)}


def scaled_dot_kkt(v, c, s):
    H, K, BT = c["H"], c["K"], c["BT"]
    k, beta = v["k"].reshape(-1, H, K), v["beta"].reshape(-1, H)
    g = v["g"].reshape(-1, H) if "g" in v else np.zeros_like(beta)
    A = v["A"].reshape(-1, H, BT).copy()
    for bos, eos in _spans(v, s, k.shape[0]):
        for rows in _chunks(bos, eos, BT):
            n = len(rows)
            for h in range(H):
                kk = k[rows, h] @ k[rows, h].T * np.exp(g[rows, h][:, None] - g[rows, h][None, :])
                blk = np.zeros((n, BT))
                blk[:, :n] = np.tril(kk * beta[rows, h][:, None], -1)
                A[rows, h] = blk
    return {"A": A.reshape(-1)}


def fused_recurrent_gdr(v, c, s):
    H, HV, K, V = c["H"], c["HV"], c["K"], c["V"]
    q, k = v["q"].reshape(-1, H, K), v["k"].reshape(-1, H, K)
    vv, g, beta = v["v"].reshape(-1, HV, V), v["g"].reshape(-1, HV), v["beta"].reshape(-1, HV)
    o = np.zeros_like(vv)
    spans = _spans(v, s, vv.shape[0])
    ht = np.zeros((len(spans), HV, K, V))
    for n, (bos, eos) in enumerate(spans):
        for hv in range(HV):
            h = hv // (HV // H)
            st = v["h0"].reshape(-1, HV, K, V)[n, hv].copy() if "h0" in v else np.zeros((K, V))
            for t in range(bos, eos):
                bq, bk = q[t, h], k[t, h]
                if c["USE_QK_L2NORM_IN_KERNEL"]:
                    bq, bk = bq / np.sqrt((bq * bq).sum() + 1e-6), bk / np.sqrt((bk * bk).sum() + 1e-6)
                st = st * np.exp(g[t, hv])
                bv = (vv[t, hv] - bk @ st) * beta[t, hv]
                st = st + np.outer(bk, bv)
                o[t, hv] = (bq * s["scale"]) @ st
            ht[n, hv] = st
    res = {"o": o.reshape(-1)}
    if "ht" in v:
        res["ht"] = ht.reshape(-1)
    return res


def _fp16_words(rng, n):
    """int32 words each holding two fp16 values (low half first)."""
    h = (rng.standard_normal(2 * n) * 2).astype(np.float16).view(np.uint16).astype(np.int64)
    return _i32(h[0::2] | (h[1::2] << 16))


def _fp16_pairs(words):
    u = _u32(words)
    lo = (u & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)
    hi = (u >> 16).astype(np.uint16).view(np.float16).astype(np.float64)
    return np.stack([lo, hi], -1).reshape(-1)


def scatter_combine(v, c, s):
    T, N, K = s["n_tokens"], s["N"], c["N_ACT"]
    if c["X_FMT"] == "e4m3":
        x = fp8_table(False)[v["X"].astype(np.int64)].reshape(-1, N)
    else:
        x = _fp16_pairs(v["X"]).reshape(-1, N)
    rows = v["ScatterIndx"].astype(np.int64).reshape(T, K)
    g = v["Gammas"].reshape(T, K)
    y = (x[rows] * g[:, :, None]).sum(1)
    lim = min(s["sat"], 448.0)
    with np.errstate(invalid="ignore"):
        return {"Y": np.where(np.isnan(y), np.nan, np.clip(y, -lim, lim)).reshape(-1)}


def multi_absmax(names):
    def ref(v, c, s):
        amax = np.array([np.abs(v[n]).max() for n in names])
        arg = np.array([int(np.argmax(np.abs(v[n]))) for n in names])
        fmax = {"e4m3": 448.0, "e5m2": 57344.0}.get(c["FMT"], 65504.0)
        return {"Amax": amax, "Arg": arg, "Scale": amax / fmax}
    return ref


def chunk_fwd_o(v, c, s):
    H, K, V, BT = c["H"], c["K"], c["V"], c["BT"]
    q, k, vv = v["q"].reshape(-1, H, K), v["k"].reshape(-1, H, K), v["v"].reshape(-1, H, V)
    g = v["g"].reshape(-1, H) if "g" in v else np.zeros(q.shape[:2])
    h = v["h"].reshape(-1, H, K, V)
    o = np.zeros_like(vv)
    tg = 0
    for bos, eos in _spans(v, s, q.shape[0]):
        for rows in _chunks(bos, eos, BT):
            for hh in range(H):
                gr = g[rows, hh]
                A = np.tril(q[rows, hh] @ k[rows, hh].T * np.exp(gr[:, None] - gr[None, :]))
                o[rows, hh] = s["scale"] * ((q[rows, hh] @ h[tg, hh]) * np.exp(gr)[:, None] + A @ vv[rows, hh])
            tg += 1
    return {"o": o.reshape(-1)}


def persistent_matmul(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    w = fp8_table(False)[v["W"].astype(np.int64)].reshape(K, N)
    x = fp8_table(False)[v["X"].astype(np.int64)] if c.get("X_FP8") else v["X"]
    y = x.reshape(M, K) @ w * v["WScale"][None, :]
    if c["OUT_FP8"]:
        return {"Y": fp8_encode(y / v["YScale"][0], False).reshape(-1)}
    return {"Y": y.reshape(-1)}


def chunk_gdr_fwd_h(v, c, s):
    H, K, V, BT = c["H"], c["K"], c["V"], c["BT"]
    k, w, vv = v["k"].reshape(-1, H, K), v["w"].reshape(-1, H, K), v["v"].reshape(-1, H, V)
    g = v["g"].reshape(-1, H) if "g" in v else None
    h = np.zeros_like(v["h"]).reshape(-1, H, K, V)
    vn = np.zeros_like(vv)
    spans = _spans(v, s, k.shape[0])
    ht = np.zeros((len(spans), H, K, V))
    boh = 0
    for n, (bos, eos) in enumerate(spans):
        for hh in range(H):
            st = v["h0"].reshape(-1, H, K, V)[n, hh].copy() if "h0" in v else np.zeros((K, V))
            for i, rows in enumerate(_chunks(bos, eos, BT)):
                h[boh + i, hh] = st
                nv = vv[rows, hh] - w[rows, hh] @ st
                vn[rows, hh] = nv
                if g is not None:
                    gl = g[rows[-1], hh]
                    nv = nv * np.exp(gl - g[rows, hh])[:, None]
                    st = st * np.exp(gl)
                st = st + k[rows, hh].T @ nv
            ht[n, hh] = st
        boh += _cdiv(eos - bos, BT)
    res = {"h": h.reshape(-1)}
    if "v_new" in v:
        res["v_new"] = vn.reshape(-1)
    if "ht" in v:
        res["ht"] = ht.reshape(-1)
    return res


def expert_sort(v, c, s):
    n, E = s["n_entries"], c["N_EXPTS"]
    e = v["ExptIndx"][:n].astype(np.int64)
    order = np.argsort(e, kind="stable")
    hist = np.bincount(e, minlength=E)
    scatter = np.empty(n, dtype=np.int64)
    scatter[order] = np.arange(n)
    gather = v["GatherIndx"].copy()
    gather[:n] = order
    return {"GatherIndx": gather, "ScatterIndx": scatter,
            "ExptStarts": np.concatenate([[0], np.cumsum(hist)]), "ExptActive": np.array([(hist > 0).sum()])}


def quant_rows(v, c, s):
    M, N = s["M"], c["N_COLS"]
    sm = s["stride_xm"]
    x = np.stack([v["X"][r * sm:r * sm + N] for r in range(M)])
    e5 = c["OUT_FMT"] == "e5m2"
    fmax = 57344.0 if e5 else 448.0
    amax = np.abs(x).max(1)
    amax = np.where(amax == 0, 1.0, amax)
    q = v["Q"].reshape(M, -1).copy()
    q[:, :N] = fp8_encode(x * (fmax / amax)[:, None], e5)
    res = {"Q": q.reshape(-1)}
    if "Scale" in v:
        res["Scale"] = amax / fmax
    return res


def chunk_bwd_dh(v, c, s):
    H, K, V, BT, T = c["H"], c["K"], c["V"], c["BT"], s["T"]
    q, g, do = v["q"].reshape(-1, H, K), v["g"].reshape(-1, H), v["do"].reshape(-1, H, V)
    B, NT = q.shape[0] // T, _cdiv(T, BT)
    dh = np.zeros((B, NT, H, K, V))
    dh0 = np.zeros((B, H, K, V))
    for b in range(B):
        for hh in range(H):
            st = v["dht"].reshape(B, H, K, V)[b, hh].copy() if "dht" in v else np.zeros((K, V))
            for i in range(NT - 1, -1, -1):
                rows = b * T + np.arange(i * BT, min(i * BT + BT, T))
                dh[b, i, hh] = st
                qq = q[rows, hh] * (np.exp(g[rows, hh]) * s["scale"])[:, None]
                st = st * np.exp(g[rows[-1], hh]) + qq.T @ do[rows, hh]
            dh0[b, hh] = st
    res = {"dh": dh.reshape(-1)}
    if "dh0" in v:
        res["dh0"] = dh0.reshape(-1)
    return res


def rms_norm_gated(v, c, s):
    D = c["D"]
    x, z = v["x_desc"].reshape(-1, D), v["z_desc"].reshape(-1, D)
    y = x / np.sqrt((x * x).mean(1, keepdims=True) + s["eps"]) * v["w"][None, :]
    gate = 1 / (1 + np.exp(-z))
    return {"y_desc": (y * (z * gate if c["ACTIVATION"] == "swish" else gate)).reshape(-1)}


def _e2m1_code(v):
    a = np.abs(v)
    code = ((a > 0.25).astype(np.int64) + (a >= 0.75) + (a > 1.25) + (a >= 1.75) + (a > 2.5) + (a >= 3.5)
            + (a > 5.0))
    return np.where(v < 0, code | 8, code)


def downcast_mxfp4(v, c, s):
    M, K, BM, BK = s["M"], s["K"], c["BLOCK_M"], c["BLOCK_K"]
    x = v["X"].reshape(M, K)
    xg = x.reshape(M, K // 32, 32)
    amax = np.abs(xg).max(2).astype(np.float32)
    bits = (amax / np.float32(6.0)).astype(np.float32).view(np.uint32).astype(np.int64)
    e = (bits + 0x7FFFFF) & 0x7F800000
    quant = ((0x7F000000 - e) & 0x7F800000).astype(np.uint32).view(np.float32).astype(np.float64)
    q = _e2m1_code(xg * quant[:, :, None]).reshape(M, K // 2, 2)
    s8 = e >> 23
    res = {"Out": (q[:, :, 0] | (q[:, :, 1] << 4)).reshape(-1)}
    if c["SWIZZLE_SCALES"]:
        G = BK // 32
        sc = v["OutScale"].copy()
        nk = _cdiv(K, BK)
        pad = np.zeros((_cdiv(M, BM) * BM, nk * G), dtype=np.int64)
        pad[:M, :K // 32] = s8
        for pm in range(_cdiv(M, BM)):
            for pk in range(nk):
                tile = pad[pm * BM:(pm + 1) * BM, pk * G:(pk + 1) * G]
                flat = tile.reshape(BM // 8, 8, G).transpose(0, 2, 1).reshape(-1)
                o = (pm * nk + pk) * BM * G
                sc[o:o + BM * G] = flat
        res["OutScale"] = sc
    else:
        res["OutScale"] = s8.reshape(-1)
    return res


def solve_tril_32(v, c, s):
    H = c["H"]
    A = v["A"].reshape(-1, H, 32)
    Ai = np.zeros_like(A)
    for bos, eos in _spans(v, s, A.shape[0]):
        for rows in _chunks(bos, eos, 32):
            n = len(rows)
            for h in range(H):
                Ai[rows, h, :n] = np.linalg.inv(np.eye(n) + np.tril(A[rows, h, :n], -1))
    return {"Ai": Ai.reshape(-1)}


def l2norm_3d(v, c, s):
    D, T = c["D"], s["T"]
    x = v["x"].reshape(-1, T, D)
    r = 1 / np.sqrt((x * x).sum(2) + s["eps"])
    return {"y": (x * r[:, :, None]).reshape(-1), "rstd": r.reshape(-1)}


def packed_cumsum(v, c, s):
    H, T = c["H"], s["T_total"]
    cu = v["cu_seqlens"].astype(np.int64)
    x = v["s"].reshape(-1, H)
    o = v["o"].reshape(-1, H).copy()
    for n in range(s["n_seqs"]):
        seg = x[cu[n]:cu[n + 1]]
        o[cu[n]:cu[n + 1]] = np.cumsum(seg[::-1], 0)[::-1] if c["REVERSE"] else np.cumsum(seg, 0)
    return {"o": o.reshape(-1)}


def cases():
    out = []
    add = out.append

    # SwiGLU over interleaved gate/linear columns
    M, N = 37, 50
    for name, adt, odt, fmt, limit in (("flex fp32, limit", "fp32", "fp16", "flex", 7.0),
                                       ("flex fp16, no limit", "fp16", "fp16", "flex", None),
                                       ("bf16, limit", "bf16", "bf16", "bf16", 5.0)):
        flex = fmt == "flex"
        add(Case(f"tkk swiglu {name}", F, "_tkk_swiglu", (_cdiv(M, 16), _cdiv(N, 32)),
                 [Out("Out", odt, M * N),
                  Buf("OutActualScale", "fp32", 1, "zeros", out=True) if flex else Null("OutActualScale"),
                  Buf("OutExpectedScale", "fp32", 1, ("fill", 0.5)) if flex else Null("OutExpectedScale"),
                  Buf("A", adt, M * 2 * N, scale=3.0), Scalar("alpha", 1.702, "fp32"),
                  Scalar("limit", limit, "fp32") if limit is not None else Null("limit"),
                  Scalar("M", M), Scalar("n_cols", N), Scalar("stride_am", 2 * N), Scalar("stride_om", N)],
                 {"BLOCK_M": 16, "BLOCK_N": 32, "OUT_FMT": fmt, "FLEX_MAX": 448.0}, ref=swiglu))

    # router top-k with a bitmatrix of the chosen experts
    for name, xdt, R, E, EP, K, sm, init in (("fp32 softmax", "fp32", 45, 40, 64, 4, True, "randn"),
                                              ("bf16 ties", "bf16", 21, 128, 128, 8, False, ("randint", -3, 4))):
        add(Case(f"tkk topk bitmatrix {name}", F, "_tkk_topk_bitmatrix", (_cdiv(R, 16),),
                 [Out("Yv", "fp32", R * K), Out("Yi", "i16", R * K), Out("Bits", "i32", R * EP // 32),
                  Buf("X", xdt, R * E, init), Scalar("n_rows", R), Scalar("n_expts", E),
                  Scalar("stride_xm", E), Scalar("stride_ym", K), Scalar("stride_bm", EP // 32)],
                 {"BLOCK_M": 16, "N_EXPTS_PAD": EP, "N_ACT": K, "APPLY_SOFTMAX": sm}, ref=topk_bitmatrix))

    # histogram and row popcounts of a bitmatrix
    for R, E, W, p in ((50, 100, 4, 0.1), (19, 64, 2, 0.6)):
        add(Case(f"tkk bitmatrix histogram {E} experts", F, "_tkk_bitmatrix_hist", (_cdiv(R, 16),),
                 [Buf("Hist", "i32", W * 32, ("randint", 0, 5), out=True), Out("RowCount", "i32", R),
                  Buf("Bits", "i32", R * W, _random_words(p)), Scalar("n_rows", R), Scalar("n_expts", E),
                  Scalar("stride_bm", W)],
                 {"BLOCK_M": 16, "N_WORDS": W}, ref=bitmatrix_hist))

    # masked compaction of routed pairs
    for R, K, check in ((33, 4, False), (20, 8, True)):
        add(Case(f"tkk masked compaction k={K}", F, "_tkk_masked_compaction", (_cdiv(R, 16),),
                 [Out("RetYv", "fp32", R * K), Out("RetYi", "i32", R * K), Buf("Yv", "fp32", R * K, "rand"),
                  Buf("Yi", "i32", R * K, _expert_rows(64, K)), Buf("BitMask", "i32", 2, _random_words(0.5)),
                  Scalar("n_rows", R)],
                 {"N_ACT": K, "BLOCK_M": 16, "CHECK": check}, ref=masked_compaction))

    # expert offsets and the tile table
    for E, EP, bm, hist in ((13, 16, 16, ("randint", 0, 40)), (5, 8, 8, _ints([0, 0, 17, 8, 0]))):
        mt = E * _cdiv(40, bm) + 3
        add(Case(f"tkk expert offsets {E} experts, block {bm}", F, "_tkk_expt_offsets", (1,),
                 [Out("TokenStarts", "i32", E + 1), Out("TileStarts", "i32", E + 1), Out("TileInfo", "i32", mt),
                  Buf("Hist", "i32", E, hist), Scalar("n_expts", E), Scalar("max_tiles", mt)],
                 {"BLOCK_M": bm, "N_EXPTS_PAD": EP, "TILE_BLOCK": 16}, ref=expt_offsets))

    # gathered grouped matmul over the tile table
    hist, NA, BM = [7, 0, 20, 9], 2, 16
    n_rows, E = sum(hist), len(hist)
    n_tiles = 6
    starts, info = _routing(hist, BM, n_tiles)
    for name, xdt, fmt, K, N, layout, bias, gam, ydt in (
            ("fp16, bias, gammas", "fp16", "fp16", 40, 64, "kn", True, True, "fp32"),
            ("fp32 as fp16, transposed w", "fp32", "fp16", 32, 32, "nk", False, False, "fp16")):
        ws = (K * N, N, 1) if layout == "kn" else (K * N, 1, K)
        add(Case(f"tkk gather matmul {name}", F, "_tkk_gather_matmul", (n_tiles * _cdiv(N, 32),),
                 [Out("Y", ydt, n_rows * N), Scalar("stride_y", N), Buf("X", xdt, n_rows // NA * K),
                  Scalar("stride_x", K), Buf("W", "fp16", E * K * N, scale=0.3),
                  Tuple("W_STRIDES", [Scalar("sw_e", ws[0]), Scalar("sw_k", ws[1]), Scalar("sw_n", ws[2])]),
                  Buf("Bias", "fp32", E * N) if bias else Null("Bias"), Scalar("stride_b", N),
                  Buf("Gammas", "fp32", n_rows, "rand") if gam else Null("Gammas"),
                  Buf("GatherIndx", "i32", n_rows, lambda rng, n: rng.permutation(n)),
                  Tuple("EXPT_DATA", [Buf("TokenStarts", "i32", E + 1, _ints(starts)),
                                      Buf("TileInfo", "i32", n_tiles, _ints(info))]),
                  Scalar("N", N), Scalar("K", K)],
                 {"BLOCK_M": BM, "BLOCK_N": 32, "BLOCK_K": 16, "N_ACT": NA, "X_FMT": fmt,
                  "EVEN_K": K % 16 == 0}, ref=gather_matmul(hist, layout)))

    # mxfp4 weights to bf16 / fp32
    M, K = 20, 96
    for fmt in ("fp32", "bf16"):
        add(Case(f"tkk mxfp4 upcast {fmt}", F, "_tkk_mxfp4_upcast", (_cdiv(M, 16), _cdiv(K, 64)),
                 [Out("Out", fmt, M * K), Buf("W", "u8", M * K // 2, ("randint", 0, 256)),
                  Buf("Scale", "u8", M * K // 32, ("randint", 118, 137)), Scalar("M", M), Scalar("K", K),
                  Scalar("stride_wm", K // 2), Scalar("stride_sm", K // 32), Scalar("stride_om", K)],
                 {"BLOCK_M": 16, "BLOCK_K": 64, "OUT_FMT": fmt}, ref=mxfp4_upcast))

    # masked reduction of fp8 expert outputs
    nk, M, N = 5, 6, 40
    for scaled in (True, False):
        add(Case(f"tkk masked fp8 reduce{' scaled' if scaled else ''}", F, "_tkk_masked_reduce", (M, 2),
                 [Out("Y", "fp32", M * N), Out("Count", "i32", M * N),
                  Buf("YAbsMax", "i32", 1, "zeros", out=True), Buf("X", "u8", nk * M * N, ("randint", 0, 256)),
                  Buf("XScale", "fp32", nk, lambda rng, n: 2.0 ** rng.integers(-2, 3, n)) if scaled
                  else Null("XScale"),
                  Buf("Mask", "i32", M, ("randint", 0, 256)), Scalar("n_k", nk), Scalar("M", M), Scalar("N", N),
                  Scalar("stride_xk", M * N), Scalar("stride_xm", N)],
                 {"K_PAD": 8, "BLOCK_N": 32, "HAS_SCALE": scaled}, ref=masked_reduce))

    # chunk-local cumulative sums
    B, T, H, BT = 2, 50, 3, 16
    for name, sdt, odt, rev, scale, hf in (("forward", "fp32", "fp32", False, None, False),
                                           ("reverse scaled head-first", "bf16", "fp32", True, 0.5, True)):
        add(Case(f"tkk chunk cumsum scalar {name}", F_CS, "_tkk_chunk_local_cumsum_scalar", (_cdiv(T, BT), B * H),
                 [Buf("s", sdt, B * T * H), Out("o", odt, B * T * H),
                  Scalar("scale", scale, "fp32") if scale is not None else Null("scale"),
                  Null("cu_seqlens"), Null("chunk_indices"), Scalar("T", T)],
                 {"B": B, "H": H, "BT": BT, "REVERSE": rev, "HAS_SCALE": scale is not None, "IS_VARLEN": False,
                  "HEAD_FIRST": hf}, ref=cumsum_scalar))
    cu = [0, 13, 40, 45]
    ci = _chunk_indices(cu, BT)
    add(Case("tkk chunk cumsum scalar varlen reverse", F_CS, "_tkk_chunk_local_cumsum_scalar", (len(ci) // 2, H),
             [Buf("s", "fp32", cu[-1] * H), Out("o", "fp32", cu[-1] * H), Null("scale"),
              Buf("cu_seqlens", "i64", len(cu), _ints(cu)), Buf("chunk_indices", "i64", len(ci), _ints(ci)),
              Scalar("T", cu[-1])],
             {"B": 1, "H": H, "BT": BT, "REVERSE": True, "HAS_SCALE": False, "IS_VARLEN": True,
              "HEAD_FIRST": False}, ref=cumsum_scalar))
    B, T, H, S = 2, 40, 2, 24
    add(Case("tkk chunk cumsum vector", F_CS, "_tkk_chunk_local_cumsum_vector", (2, _cdiv(T, 16), B * H),
             [Buf("s", "fp32", B * T * H * S), Out("o", "fp32", B * T * H * S), Null("cu_seqlens"),
              Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "S": S, "BT": 16, "BS": 16, "REVERSE": False, "IS_VARLEN": False},
             ref=cumsum_vector))
    cu, S = [0, 21, 30, 64], 20
    ci = _chunk_indices(cu, 16)
    add(Case("tkk chunk cumsum vector varlen reverse fp16", F_CS, "_tkk_chunk_local_cumsum_vector",
             (1, len(ci) // 2, H),
             [Buf("s", "fp16", cu[-1] * H * S), Out("o", "fp32", cu[-1] * H * S),
              Buf("cu_seqlens", "i64", len(cu), _ints(cu)), Buf("chunk_indices", "i64", len(ci), _ints(ci)),
              Scalar("T", cu[-1])],
             {"H": H, "S": S, "BT": 16, "BS": 32, "REVERSE": True, "IS_VARLEN": True}, ref=cumsum_vector))

    # row L2 norm
    for T, D, BD, BT, dt, check in ((37, 48, 64, 16, "fp32", False), (29, 32, 32, 8, "bf16", True)):
        add(Case(f"tkk l2norm fwd {dt} D={D}", F_CS, "_tkk_l2norm_fwd", (_cdiv(T, BT),),
                 [Buf("x", dt, T * D), Out("y", dt, T * D), Out("rstd", "fp32", T), Scalar("eps", 1e-6, "fp32"),
                  Scalar("T", T)],
                 {"D": D, "BT": BT, "BD": BD, "CHECK": check}, ref=l2norm))

    # unit lower-triangular inverses
    B, T, H, BT = 2, 40, 2, 32
    add(Case("tkk solve tril 16x16 in 32-wide rows", F_TRIL, "_tkk_solve_tril_16", (_cdiv(T, 16), B * H),
             [Buf("A", "fp32", B * T * H * BT, scale=0.3), Out("Ai", "fp32", B * T * H * 16),
              Null("cu_seqlens"), Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "BT": BT, "IS_VARLEN": False}, ref=solve_tril))
    cu, H = [0, 20, 23, 50], 2
    ci = _chunk_indices(cu, 16)
    add(Case("tkk solve tril varlen", F_TRIL, "_tkk_solve_tril_16", (len(ci) // 2, H),
             [Buf("A", "fp32", cu[-1] * H * 16, scale=0.3), Out("Ai", "fp32", cu[-1] * H * 16),
              Buf("cu_seqlens", "i64", len(cu), _ints(cu)), Buf("chunk_indices", "i64", len(ci), _ints(ci)),
              Scalar("T", cu[-1])],
             {"H": H, "BT": 16, "IS_VARLEN": True}, ref=solve_tril))

    # WY recomputation
    B, T, H, K, V, BT = 1, 40, 2, 32, 24, 16
    add(Case("tkk recompute w u gated", F_WY, "_tkk_recompute_w_u", (_cdiv(T, BT), B * H),
             [Buf("k", "fp32", B * T * H * K), Buf("v", "fp32", B * T * H * V), Buf("beta", "fp32", B * T * H, "rand"),
              Out("w", "fp32", B * T * H * K), Out("u", "fp32", B * T * H * V),
              Buf("A", "fp32", B * T * H * BT, scale=0.3), Buf("g", "fp32", B * T * H, scale=0.3),
              Null("cu_seqlens"), Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 16, "BV": 16, "IS_VARLEN": False},
             ref=recompute_w_u))
    cu = [0, 9, 41]
    ci = _chunk_indices(cu, BT)
    Tt = cu[-1]
    add(Case("tkk recompute w u varlen", F_WY, "_tkk_recompute_w_u", (len(ci) // 2, H),
             [Buf("k", "fp32", Tt * H * K), Buf("v", "fp32", Tt * H * V), Buf("beta", "fp32", Tt * H, "rand"),
              Out("w", "fp32", Tt * H * K), Out("u", "fp32", Tt * H * V),
              Buf("A", "fp32", Tt * H * BT, scale=0.3), Null("g"),
              Buf("cu_seqlens", "i64", len(cu), _ints(cu)), Buf("chunk_indices", "i64", len(ci), _ints(ci)),
              Scalar("T", Tt)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 16, "BV": 32, "IS_VARLEN": True}, ref=recompute_w_u))

    # beta-scaled gated K K^T through tensor descriptors
    B, T, H, K, BT = 2, 36, 2, 32, 16
    add(Case("tkk scaled dot kkt gated", F_WY, "_tkk_chunk_scaled_dot_kkt", (_cdiv(T, BT), B * H),
             [Buf("k", "fp32", B * T * H * K, scale=0.5), Buf("g", "fp32", B * T * H, scale=0.3),
              Buf("beta", "fp32", B * T * H, "rand"), Out("A", "fp32", B * T * H * BT),
              Null("cu_seqlens"), Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "K": K, "BT": BT, "BK": 16, "USE_G": True, "IS_VARLEN": False},
             ref=scaled_dot_kkt))
    cu, H, K = [0, 17, 40], 1, 16
    ci = _chunk_indices(cu, BT)
    add(Case("tkk scaled dot kkt varlen", F_WY, "_tkk_chunk_scaled_dot_kkt", (len(ci) // 2, H),
             [Buf("k", "fp32", cu[-1] * H * K, scale=0.5), Null("g"), Buf("beta", "fp32", cu[-1] * H, "rand"),
              Out("A", "fp32", cu[-1] * H * BT), Buf("cu_seqlens", "i64", len(cu), _ints(cu)),
              Buf("chunk_indices", "i64", len(ci), _ints(ci)), Scalar("T", cu[-1])],
             {"H": H, "K": K, "BT": BT, "BK": 16, "USE_G": False, "IS_VARLEN": True}, ref=scaled_dot_kkt))

    # fused recurrent gated delta rule
    B, T, H, HV, K, V = 2, 9, 2, 4, 16, 24
    neg = lambda rng, n: -0.5 * rng.random(n)  # noqa: E731
    add(Case("tkk fused recurrent gdr, states, qk l2norm", F_REC, "_tkk_fused_recurrent_gdr_fwd", (2, B * HV),
             [Buf("q", "fp32", B * T * H * K), Buf("k", "fp32", B * T * H * K), Buf("v", "fp32", B * T * HV * V),
              Buf("g", "fp32", B * T * HV, neg), Buf("beta", "fp32", B * T * HV, "rand"),
              Out("o", "fp32", B * T * HV * V), Buf("h0", "fp32", B * HV * K * V, scale=0.5),
              Out("ht", "fp32", B * HV * K * V), Null("cu_seqlens"), Scalar("scale", K ** -0.5, "fp32"),
              Scalar("T", T)],
             {"H": H, "HV": HV, "K": K, "V": V, "BK": 16, "BV": 16, "USE_INITIAL_STATE": True,
              "STORE_FINAL_STATE": True, "USE_QK_L2NORM_IN_KERNEL": True, "IS_VARLEN": False},
             ref=fused_recurrent_gdr))
    cu, H, HV, K, V = [0, 5, 12], 1, 2, 32, 32
    Tt = cu[-1]
    add(Case("tkk fused recurrent gdr varlen fp16", F_REC, "_tkk_fused_recurrent_gdr_fwd", (1, 2 * HV),
             [Buf("q", "fp16", Tt * H * K, scale=0.3), Buf("k", "fp16", Tt * H * K, scale=0.3),
              Buf("v", "fp16", Tt * HV * V), Buf("g", "fp32", Tt * HV, neg), Buf("beta", "fp32", Tt * HV, "rand"),
              Out("o", "fp16", Tt * HV * V), Null("h0"), Null("ht"), Buf("cu_seqlens", "i64", len(cu), _ints(cu)),
              Scalar("scale", K ** -0.5, "fp32"), Scalar("T", Tt)],
             {"H": H, "HV": HV, "K": K, "V": V, "BK": 32, "BV": 32, "USE_INITIAL_STATE": False,
              "STORE_FINAL_STATE": False, "USE_QK_L2NORM_IN_KERNEL": False, "IS_VARLEN": True},
             ref=fused_recurrent_gdr))

    # gamma-weighted combine of scattered expert rows
    T, NA = 7, 4
    for fmt, N, xdt, xn, sat in (("e4m3", 40, "u8", 40, 300.0), ("fp16x2", 48, "i32", 24, 1e30)):
        add(Case(f"tkk scatter combine {fmt}", F, "_tkk_scatter_combine", (T, 2),
                 [Out("Y", "fp32", T * N),
                  Buf("X", xdt, T * NA * xn, ("randint", 0, 256) if fmt == "e4m3" else _fp16_words),
                  Buf("ScatterIndx", "i32", T * NA, lambda rng, n: rng.permutation(n)),
                  Buf("Gammas", "fp32", T * NA, "rand"), Scalar("n_tokens", T), Scalar("N", N),
                  Scalar("stride_x", xn), Scalar("stride_y", N), Scalar("sat", sat, "fp32")],
                 {"N_ACT": NA, "BLOCK_N": 32, "X_FMT": fmt}, ref=scatter_combine))

    # absolute maximum, first argmax and scale of each tensor of a tuple
    for fmt, specs in (("e4m3", (("a", "fp32", 1000, "randn"), ("b", "fp16", 333, "randn"),
                                 ("c", "bf16", 77, ("randint", -9, 10)))),
                       ("e5m2", (("a", "fp32", 517, ("randint", -50, 51)), ("b", "fp16", 16, "randn")))):
        add(Case(f"tkk multi-tensor absmax {len(specs)} tensors {fmt}", F, "_tkk_multi_absmax", (1,),
                 [Tuple("PTRS", [Buf(nm, dt, n, init) for nm, dt, n, init in specs]),
                  Tuple("NUMELS", [Scalar(f"n_{nm}", n) for nm, _, n, _ in specs]),
                  Out("Amax", "fp32", len(specs)), Out("Arg", "i32", len(specs)), Out("Scale", "fp32", len(specs))],
                 {"BLOCK": 128, "FMT": fmt}, ref=multi_absmax([nm for nm, _, _, _ in specs])))

    # chunk output from per-chunk states and the gated causal q K^T
    B, T, H, K, V, BT = 2, 40, 2, 32, 24, 16
    NT = _cdiv(T, BT)
    add(Case("tkk chunk fwd o gated", F_WY, "_tkk_chunk_fwd_o", (_cdiv(V, 16), NT, B * H),
             [Buf("q", "fp32", B * T * H * K, scale=0.5), Buf("k", "fp32", B * T * H * K, scale=0.5),
              Buf("v", "fp32", B * T * H * V), Buf("h", "fp32", B * NT * H * K * V, scale=0.3),
              Buf("g", "fp32", B * T * H, lambda rng, n: -0.3 * rng.random(n)), Out("o", "fp32", B * T * H * V),
              Null("cu_seqlens"), Null("chunk_indices"), Scalar("scale", K ** -0.5, "fp32"), Scalar("T", T)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 16, "BV": 16, "IS_VARLEN": False}, ref=chunk_fwd_o))
    cu, H = [0, 19, 45], 1
    ci = _chunk_indices(cu, BT)
    Tt, NC = cu[-1], len(ci) // 2
    add(Case("tkk chunk fwd o varlen", F_WY, "_tkk_chunk_fwd_o", (1, NC, H),
             [Buf("q", "fp32", Tt * H * K, scale=0.5), Buf("k", "fp32", Tt * H * K, scale=0.5),
              Buf("v", "fp32", Tt * H * V), Buf("h", "fp32", NC * H * K * V, scale=0.3), Null("g"),
              Out("o", "fp32", Tt * H * V), Buf("cu_seqlens", "i64", len(cu), _ints(cu)),
              Buf("chunk_indices", "i64", len(ci), _ints(ci)), Scalar("scale", 0.25, "fp32"), Scalar("T", Tt)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 32, "BV": 32, "IS_VARLEN": True}, ref=chunk_fwd_o))

    # persistent fp16 x fp8 matmul
    for M, N, K, fp8, sms in ((40, 64, 48, True, 3), (33, 32, 32, False, 2)):
        add(Case(f"tkk persistent matmul {'fp8' if fp8 else 'fp16'} out, {sms} programs", F,
                 "_tkk_persistent_matmul", (sms,),
                 [Out("Y", "u8" if fp8 else "fp16", M * N), Buf("YScale", "fp32", 1, ("fill", 2.0)),
                  Buf("X", "fp16", M * K), Buf("W", "u8", K * N, _finite_codes(False)),
                  Buf("WScale", "fp32", N, "rand"), Scalar("M", M), Scalar("N", N), Scalar("K", K),
                  Scalar("stride_xm", K), Scalar("stride_wk", N), Scalar("stride_ym", N)],
                 {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 2, "NUM_SMS": sms, "OUT_FP8": fp8},
                 tol={"u8": (1, 0)}, ref=persistent_matmul))

    # chunked state recurrence of the gated delta rule
    B, T, H, K, V, BT = 2, 37, 2, 32, 24, 16
    NT = _cdiv(T, BT)
    add(Case("tkk chunk gdr fwd h gated, states", F_DS, "_tkk_chunk_gdr_fwd_h", (_cdiv(V, 16), B * H),
             [Buf("k", "fp32", B * T * H * K, scale=0.3), Buf("v", "fp32", B * T * H * V),
              Buf("w", "fp32", B * T * H * K, scale=0.3), Out("v_new", "fp32", B * T * H * V),
              Buf("g", "fp32", B * T * H, lambda rng, n: -np.cumsum(0.05 * rng.random(n))),
              Out("h", "fp32", B * NT * H * K * V), Buf("h0", "fp32", B * H * K * V, scale=0.5),
              Out("ht", "fp32", B * H * K * V), Null("cu_seqlens"), Null("chunk_offsets"), Scalar("T", T)],
             {"H": H, "K": K, "V": V, "BT": BT, "BV": 16, "DOT_PRECISION": "ieee", "USE_G": True,
              "USE_INITIAL_STATE": True, "STORE_FINAL_STATE": True, "SAVE_NEW_VALUE": True, "IS_VARLEN": False},
             ref=chunk_gdr_fwd_h))
    cu, H, K = [0, 20, 53], 1, 16
    Tt, NC = cu[-1], _cdiv(20, BT) + _cdiv(33, BT)
    add(Case("tkk chunk gdr fwd h varlen", F_DS, "_tkk_chunk_gdr_fwd_h", (1, 2 * H),
             [Buf("k", "fp32", Tt * H * K, scale=0.3), Buf("v", "fp32", Tt * H * V),
              Buf("w", "fp32", Tt * H * K, scale=0.3), Null("v_new"), Null("g"),
              Out("h", "fp32", NC * H * K * V), Null("h0"), Null("ht"),
              Buf("cu_seqlens", "i64", len(cu), _ints(cu)), Buf("chunk_offsets", "i32", 2, _ints([0, 2])),
              Scalar("T", Tt)],
             {"H": H, "K": K, "V": V, "BT": BT, "BV": 32, "DOT_PRECISION": "ieee", "USE_G": False,
              "USE_INITIAL_STATE": False, "STORE_FINAL_STATE": False, "SAVE_NEW_VALUE": False,
              "IS_VARLEN": True}, ref=chunk_gdr_fwd_h))

    # stable sort of routed entries by expert
    for n, E, BLOCK in ((45, 8, 64), (128, 32, 128)):
        add(Case(f"tkk expert sort {n} entries {E} experts", F, "_tkk_expert_sort", (1,),
                 [Out("GatherIndx", "i32", BLOCK), Out("ScatterIndx", "i32", n), Out("ExptStarts", "i32", E + 1),
                  Out("ExptActive", "i32", 1), Buf("ExptIndx", "i16", n, ("randint", 0, E - E // 4)),
                  Scalar("n_entries", n)],
                 {"N_EXPTS": E, "BLOCK": BLOCK}, ref=expert_sort))

    # per-row fp8 quantisation
    for fmt, M, N, xdt, scale in (("e4m3", 37, 100, "fp32", True), ("e5m2", 20, 300, "bf16", False)):
        Np = N + 4
        add(Case(f"tkk quant rows {fmt} {xdt}", F, "_tkk_quant_rows", (_cdiv(M, 2048 // (1 << (N - 1).bit_length())),),
                 [Buf("X", xdt, M * Np, scale=3.0),
                  Tuple("OUTS", [Out("Q", "u8", M * Np), Out("Scale", "fp32", M) if scale else Null("Scale")]),
                  Tuple("STRIDES", [Tuple("sx", [Scalar("stride_xm", Np), Scalar("stride_xn", 1)]),
                                    Scalar("stride_qm", Np)]), Scalar("M", M)],
                 {"N_COLS": N, "OUT_FMT": fmt}, tol={"u8": (1, 0)}, ref=quant_rows))

    # reverse state-gradient recurrence
    B, T, H, K, V = 2, 37, 2, 32, 16
    NT = _cdiv(T, 16)
    for dht in (True, False):
        add(Case(f"tkk chunk bwd dh{' with final-state grad' if dht else ''}", F_DS, "_tkk_chunk_bwd_dh",
                 (2, 1, B * H),
                 [Buf("q", "fp32", B * T * H * K, scale=0.5), Buf("g", "fp32", B * T * H, lambda rng, n: -0.2 * rng.random(n)),
                  Buf("do", "fp32", B * T * H * V), Out("dh", "fp32", B * NT * H * K * V),
                  Out("dh0", "fp32", B * H * K * V) if dht else Null("dh0"),
                  Buf("dht", "fp32", B * H * K * V) if dht else Null("dht"), Scalar("scale", 0.5, "fp32"),
                  Scalar("T", T)],
                 {"H": H, "K": K, "V": V, "BT": 16, "BK": 16, "BV": 16}, ref=chunk_bwd_dh))

    # gated RMS norm through host-built descriptors
    for T, D, BT, dt, act in ((45, 32, 16, "fp16", "swish"), (20, 64, 8, "fp32", "sigmoid")):
        add(Case(f"tkk rms norm gated descriptors {dt} {act}", F, "_tkk_rms_norm_gated_desc", (_cdiv(T, BT),),
                 [Desc("x_desc", dt, (T, D), (BT, D)), Desc("z_desc", dt, (T, D), (BT, D)),
                  DescOut("y_desc", dt, (T, D), (BT, D)), Buf("w", "fp32", D, "rand"),
                  Scalar("eps", 1e-5, "fp32"), Scalar("T", T)],
                 {"D": D, "BT": BT, "ACTIVATION": act}, ref=rms_norm_gated))

    # fp32 to mxfp4 with e8m0 scales
    for M, K, BM, BK, sw in ((20, 96, 16, 64, False), (16, 128, 16, 64, True)):
        nt = _cdiv(M, BM) * _cdiv(K, BK)
        add(Case(f"tkk downcast mxfp4{' swizzled scales' if sw else ''}", F, "_tkk_downcast_mxfp4",
                 (_cdiv(M, BM), _cdiv(K, BK)),
                 [Out("Out", "u8", M * K // 2), Out("OutScale", "u8", nt * BM * BK // 32 if sw else M * K // 32),
                  Buf("X", "fp32", M * K, lambda rng, n: rng.standard_normal(n) * 2.0 ** rng.integers(-4, 5, n)),
                  Scalar("M", M), Scalar("K", K), Scalar("stride_xm", K), Scalar("stride_om", K // 2)],
                 {"BLOCK_M": BM, "BLOCK_K": BK, "SWIZZLE_SCALES": sw}, ref=downcast_mxfp4))

    # 32x32 triangular inverses merged from 16x16 ones
    B, T, H = 2, 45, 2
    add(Case("tkk solve tril 32 merged ieee", F_TRIL, "_tkk_solve_tril_32", (_cdiv(T, 32), B * H),
             [Buf("A", "fp32", B * T * H * 32, scale=0.2), Out("Ai", "fp32", B * T * H * 32),
              Null("cu_seqlens"), Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "DOT_PRECISION": "ieee", "IS_VARLEN": False}, ref=solve_tril_32))
    cu, H = [0, 40, 50, 90], 1
    ci = _chunk_indices(cu, 32)
    add(Case("tkk solve tril 32 merged tf32x3 varlen", F_TRIL, "_tkk_solve_tril_32", (len(ci) // 2, H),
             [Buf("A", "fp32", cu[-1] * H * 32, scale=0.2), Out("Ai", "fp32", cu[-1] * H * 32),
              Buf("cu_seqlens", "i64", len(cu), _ints(cu)), Buf("chunk_indices", "i64", len(ci), _ints(ci)),
              Scalar("T", cu[-1])],
             {"H": H, "DOT_PRECISION": "tf32x3", "IS_VARLEN": True}, ref=solve_tril_32))

    # L2 norm over 3-D block pointers and descriptors
    for B, T, D, BT, BD, dt in ((3, 37, 48, 16, 64, "fp32"), (2, 20, 32, 8, 32, "fp16")):
        add(Case(f"tkk l2norm 3d {dt} D={D}", F, "_tkk_l2norm_3d", (_cdiv(T, BT), B),
                 [Buf("x", dt, B * T * D), Out("y", dt, B * T * D), Out("rstd", "fp32", B * T),
                  Scalar("eps", 1e-6, "fp32"), Scalar("T", T)],
                 {"D": D, "BT": BT, "BD": BD}, ref=l2norm_3d))

    # fp8 x fp8 persistent matmul
    M, N, K = 24, 32, 64
    add(Case("tkk persistent matmul fp8 x fp8, fp16 out", F, "_tkk_persistent_matmul", (2,),
             [Out("Y", "fp16", M * N), Buf("YScale", "fp32", 1, ("fill", 1.0)),
              Buf("X", "u8", M * K, _finite_codes(False)), Buf("W", "u8", K * N, _finite_codes(False)),
              Buf("WScale", "fp32", N, lambda rng, n: 2.0 ** -rng.integers(6, 10, n)), Scalar("M", M), Scalar("N", N),
              Scalar("K", K), Scalar("stride_xm", K), Scalar("stride_wk", N), Scalar("stride_ym", N)],
             {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 2, "NUM_SMS": 2, "OUT_FP8": False,
              "X_FP8": True}, ref=persistent_matmul))

    # segmented scans over packed sequences
    for cu, H, rev, dt in (([0, 5, 6, 30, 41], 4, False, "fp32"), ([0, 17, 20, 64], 2, True, "bf16")):
        add(Case(f"tkk packed segmented cumsum{' reverse' if rev else ''} {dt}", F, "_tkk_packed_cumsum", (1,),
                 [Buf("s", dt, cu[-1] * H), Out("o", "fp32", cu[-1] * H),
                  Buf("cu_seqlens", "i32", len(cu), _ints(cu)), Scalar("n_seqs", len(cu) - 1),
                  Scalar("T_total", cu[-1])],
                 {"H": H, "BLOCK": 64, "REVERSE": rev}, ref=packed_cumsum))
    return out
