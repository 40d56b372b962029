"""Cases of the unsloth-, mamba- and lightllm-style kernels in
unsloth_mamba_style.py (rotary embeddings, cross-entropy, gated MLP
activations, norms, selective state update, SSD chunk kernels, decode and
prefill attention, KV cache copies) and their float64 numpy references;
each reference takes (v, c, s) as corpus_refs.py describes. Every case
name starts with "uns "."""
import numpy as np

from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_cases_flaggems import _bf16, _f16
from corpus_cases_torchao import _dt
from corpus_cases_vllm import _cdiv

F = "unsloth_mamba_style.py"


def _f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


def _round(dt):
    return {"fp16": _f16, "bf16": _bf16, "fp32": _f32}[dt]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x):
    return np.where(x <= 20.0, np.log1p(np.exp(np.minimum(x, 20.0))), x)


def _labels(vocab, ignore=(1, 4)):
    """Labels below vocab, some rows ignored (-100)."""
    def make(rng, n):
        y = rng.integers(0, vocab, n)
        for i in ignore:
            if i < n:
                y[i] = -100
        return y
    return make


def _distinct(hi):
    return lambda rng, n: rng.choice(hi, n, replace=False)


def _values(*xs):
    return lambda rng, n: np.array(xs[:n], dtype=np.float64)


def _neg_rand(rng, n):
    return -(0.2 + rng.random(n))


def _positive(lo, width):
    return lambda rng, n: lo + width * rng.random(n)


# ---- unsloth references --------------------------------------------------------------------------


def rope_heads(v, c, s):
    D, H = c["head_dim"], c["n_heads"]
    half = D // 2
    q = v["Q"].reshape(-1, H, D).copy()
    pos = v["position_ids"].astype(np.int64)
    cs = c["cs_row_stride"]
    cos = v["cos"].reshape(-1, cs)[pos, :half][:, None, :]
    sin = v["sin"].reshape(-1, cs)[pos, :half][:, None, :]
    if c["BACKWARD_PASS"]:
        sin = -sin
    lo, hi = q[..., :half].copy(), q[..., half:].copy()
    q[..., :half] = lo * cos - hi * sin
    q[..., half:] = hi * cos + lo * sin
    return {"Q": q.ravel()}


def rope_qk(v, c, s):
    D, S = c["head_dim"], s["seqlen"]
    half = D // 2
    out = {}
    for name, nh in (("Q", None), ("K", c["n_heads_K"])):
        t = v[name].copy()
        B = v["rope_indices"].size // S
        nheads = t.size // (B * S * D)
        t = t.reshape(B, nheads, S, D)
        if c["HAS_ROPE_INDICES"]:
            pos = v["rope_indices"].astype(np.int64).reshape(B, S)
        else:
            pos = np.tile(np.arange(S), (B, 1))
        cos = v["cos"].reshape(-1, s["cs_stride"])[pos][..., :half][:, None]
        sin = v["sin"].reshape(-1, s["cs_stride"])[pos][..., :half][:, None]
        if c["BACKWARD_PASS"]:
            sin = -sin
        lo, hi = t[..., :half].copy(), t[..., half:].copy()
        t[..., :half] = lo * cos - hi * sin
        t[..., half:] = hi * cos + lo * sin
        out[name] = t.ravel()
    return out


def _xent_logits(z, c):
    if c["DO_LOGIT_SCALING"]:
        z = c["LOGIT_SCALE"] * z
    if c["DO_SOFTCAPPING"]:
        z = c["SOFTCAP"] * np.tanh(z / c["SOFTCAP"])
    return z


def _lse(z):
    m = z.max(1, keepdims=True)
    return (m + np.log(np.exp(z - m).sum(1, keepdims=True)))[:, 0]


def xent_fwd(v, c, s):
    V = c["VOCAB_SIZE"]
    y = v["labels_ptr"].astype(np.int64)
    R = y.size
    z = _xent_logits(v["logits_ptr"].reshape(R, -1)[:, :V], c)
    lse = _lse(z)
    picked = z[np.arange(R), np.where(y < 0, 0, y)]
    return {"loss_ptr": np.where(y == -100, 0.0, lse - picked), "lse_ptr": lse}


def xent_chunked(v, c, s):
    V, NC, BS = c["VOCAB_SIZE"], c["N_CHUNKS"], c["BLOCK_SIZE"]
    y = v["labels_ptr"].astype(np.int64)
    R = y.size
    z = _xent_logits(v["logits_ptr"].reshape(R, -1)[:, :V], c)
    lse = np.stack([_lse(z[:, k * BS:(k + 1) * BS]) for k in range(NC)], 1)
    picked = z[np.arange(R), np.where(y < 0, 0, y)]
    return {"loss_ptr": np.where(y == -100, 0.0, -picked), "lse_ptr": lse.ravel()}


def xent_bwd(v, c, s):
    V = c["VOCAB_SIZE"]
    y = v["labels_ptr"].astype(np.int64)
    R = y.size
    W = c["logits_row_stride"]
    x = v["logits_ptr"].reshape(R, W).copy()
    z = x[:, :V]
    if c["DO_LOGIT_SCALING"]:
        z = z * c["LOGIT_SCALE"]
    th = np.tanh(z / c["SOFTCAP"]) if c["DO_SOFTCAPPING"] else None
    if c["DO_SOFTCAPPING"]:
        z = c["SOFTCAP"] * th
    p = np.exp(z - v["lse_ptr"][:, None])
    p[np.arange(R), np.where(y < 0, V, y) % V] -= np.where(y < 0, 0.0, 1.0)
    if c["DO_LOGIT_SCALING"]:
        p = p * c["LOGIT_SCALE"]
    if c["DO_SOFTCAPPING"]:
        p = p * (1.0 - th * th)
    g = v["dloss_ptr"][np.arange(R) * c["dloss_row_stride"]]
    g = np.where(y == -100, 0.0, g)
    x[:, :V] = g[:, None] * p
    return {"logits_ptr": x.ravel()}


def swiglu_fwd(dt):
    r = _round(dt)

    def ref(v, c, s):
        e, g = v["e"], v["g"]
        return {"h": r(e * _sigmoid(e)) * g}
    return ref


def swiglu_bwd(dt):
    r = _round(dt)

    def ref(v, c, s):
        dw, e, g = v["DW"], v["e"], v["g"]
        sig = _sigmoid(e)
        act = r(sig * e)
        d_up = r(dw * g)
        return {"DW": act * g, "e": dw * act, "g": d_up * sig * (1.0 + e * (1.0 - sig))}
    return ref


def geglu_exact(dt):
    r = _round(dt)
    from math import erf
    verf = np.vectorize(erf)

    def ref(v, c, s):
        e, g = v["e"], v["g"]
        return {"h": r(0.5 * e * (1.0 + verf(e / np.sqrt(2.0)))) * g}
    return ref


def geglu_approx_bwd(dt):
    r = _round(dt)

    def ref(v, c, s):
        dw, e, g = v["DW"], v["e"], v["g"]
        k = 0.7978845608028654
        t = np.tanh(k * e * (1.0 + 0.044715 * e * e))
        act = r(0.5 * (1.0 + t) * e)
        d_act = 0.5 * (1.0 + t) + 0.5 * e * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * e * e)
        return {"DW": act * g, "e": dw * act, "g": r(dw * g) * d_act}
    return ref


def rms_fwd(wdt):
    r = _round(wdt)

    def ref(v, c, s):
        n = c["n_cols"]
        R = v["r"].size
        x = v["X"].reshape(R, -1)[:, :n]
        w = v["W"][:n]
        inv = 1.0 / np.sqrt((x * x).mean(1) + c["eps"])
        normed = x * inv[:, None]
        y = normed * (w + 1.0) if c["GEMMA"] else r(normed) * w
        out = v["Y"].reshape(R, -1).copy()
        out[:, :n] = y
        return {"Y": out.ravel(), "r": inv}
    return ref


def rms_bwd(v, c, s):
    n = c["n_cols"]
    R = v["r"].size
    dy_all = v["dY"].reshape(R, -1).copy()
    dy = dy_all[:, :n]
    x = v["X"].reshape(R, -1)[:, :n]
    w = v["W"][:n] + (1.0 if c["GEMMA"] else 0.0)
    inv = v["r"][:, None]
    normed = x * inv
    dyw = dy * w
    dy_all[:, :n] = inv / n * (n * dyw - normed * (dyw * normed).sum(1, keepdims=True))
    return {"dY": dy_all.ravel()}


def ln_fwd(v, c, s):
    n = c["n_cols"]
    R = v["r"].size
    x = v["X"].reshape(R, -1)[:, :n]
    mean = x.mean(1)
    var = ((x - mean[:, None]) ** 2).mean(1)
    inv = 1.0 / np.sqrt(var + c["eps"])
    out = v["Y"].reshape(R, -1).copy()
    out[:, :n] = (x - mean[:, None]) * inv[:, None] * v["W"][:n] + v["b"][:n]
    return {"Y": out.ravel(), "r": inv, "mu": mean}


def ln_bwd(v, c, s):
    n = c["n_cols"]
    R = v["r"].size
    dy_all = v["dY"].reshape(R, -1).copy()
    dy = dy_all[:, :n]
    x = v["X"].reshape(R, -1)[:, :n]
    inv, mean = v["r"][:, None], v["mu"][:, None]
    normed = (x - mean) * inv
    dyw = dy * v["W"][:n]
    dx = dyw - dyw.sum(1, keepdims=True) / n - normed * (dyw * normed).sum(1, keepdims=True) / n
    dy_all[:, :n] = dx * inv
    return {"dY": dy_all.ravel()}


# ---- mamba references ----------------------------------------------------------------------------


def state_update(v, c, s):
    Bt, H, dim, N, ratio = s["batch"], s["nheads"], s["dim"], s["dstate"], s["nheads_ngroups_ratio"]
    G = H // ratio
    st = v["state_ptr"].reshape(Bt, H, dim, N).copy()
    x = v["x_ptr"].reshape(Bt, H, dim)
    dt = v["dt_ptr"].reshape(Bt, H, dim)
    if "dt_bias_ptr" in v:
        dt = dt + v["dt_bias_ptr"].reshape(H, dim)[None]
    if c["DT_SOFTPLUS"]:
        dt = _softplus(dt)
    A = v["A_ptr"].reshape(H, dim, N)
    hg = np.arange(H) // ratio
    Bm = v["B_ptr"].reshape(Bt, G, N)[:, hg]
    Cm = v["C_ptr"].reshape(Bt, G, N)[:, hg]
    st = st * np.exp(A[None] * dt[..., None]) + Bm[:, :, None, :] * dt[..., None] * x[..., None]
    out = (st * Cm[:, :, None, :]).sum(-1)
    if "D_ptr" in v:
        out = out + x * v["D_ptr"].reshape(H, dim)[None]
    if "z_ptr" in v:
        z = v["z_ptr"].reshape(Bt, H, dim)
        out = out * z * _sigmoid(z)
    return {"state_ptr": st.ravel(), "out_ptr": out.ravel()}


def gated_norm(v, c, s):
    M, N = s["n_rows"], s["group_width"]
    G = v["rstd_ptr"].size // M
    x = v["inp_ptr"].reshape(M, -1)[:, :G * N].reshape(M, G, N)
    z = v["gate_ptr"].reshape(M, -1)[:, :G * N].reshape(M, G, N) if "gate_ptr" in v else None
    if z is not None and not c["NORM_BEFORE_GATE"]:
        x = x * z * _sigmoid(z)
    if c["IS_RMS_NORM"]:
        mean = np.zeros((M, G))
    else:
        mean = x.mean(-1)
    xc = x - mean[..., None]
    rstd = 1.0 / np.sqrt((xc * xc).mean(-1) + s["eps"])
    y = xc * rstd[..., None] * v["weight_ptr"].reshape(G, N)[None]
    if "bias_ptr" in v:
        y = y + v["bias_ptr"].reshape(G, N)[None]
    if z is not None and c["NORM_BEFORE_GATE"]:
        y = y * z * _sigmoid(z)
    out = v["res_ptr"].reshape(M, -1).copy()
    out[:, :G * N] = y.reshape(M, G * N)
    res = {"res_ptr": out.ravel(), "rstd_ptr": rstd.T.ravel()}
    if not c["IS_RMS_NORM"]:
        res["mean_ptr"] = mean.T.ravel()
    return res


def chunk_cumsum(v, c, s):
    Bt, L, H, cs = s["batch"], s["seqlen"], s["nheads"], s["chunk_size"]
    nc = _cdiv(L, cs)
    dt = np.zeros((Bt, nc * cs, H))
    dt[:, :L] = v["dt_ptr"].reshape(Bt, L, H)
    live = np.zeros(nc * cs, bool)
    live[:L] = True
    if c["HAS_DT_BIAS"]:
        dt = dt + v["dt_bias_ptr"][None, None, :]
    if c["DT_SOFTPLUS"]:
        dt = _softplus(dt)
    dt = np.clip(dt, np.float32(s["dt_min"]), np.float32(s["dt_max"]))
    dt = np.where(live[None, :, None], dt, 0.0)
    dt = dt.reshape(Bt, nc, cs, H).transpose(0, 3, 1, 2)  # b h c l
    dA = np.cumsum(dt * v["A_ptr"][None, :, None, None], -1)
    return {"dt_out_ptr": dt.ravel(), "dA_cumsum_ptr": dA.ravel()}


def chunk_state(v, c, s):
    hdim, N, cs = s["hdim"], s["dstate"], s["chunk_size"]
    Bt, L, ratio = s["batch"], s["seqlen"], s["nheads_ngroups_ratio"]
    nc = _cdiv(L, cs)
    x = v["x_ptr"].reshape(Bt, L, -1, hdim)
    H = x.shape[2]
    Bm = v["b_ptr"].reshape(Bt, L, -1, N)
    dt = v["dt_ptr"].reshape(Bt, H, nc, cs)
    dA = v["dA_cumsum_ptr"].reshape(Bt, H, nc, cs)
    seq = v["seq_idx_ptr"].reshape(Bt, L) if c["HAS_SEQ_IDX"] else None
    out = np.zeros((Bt, nc, H, hdim, N))
    for b in range(Bt):
        for ci in range(nc):
            lo, hi = ci * cs, min(L, (ci + 1) * cs)
            for h in range(H):
                scale = np.exp(np.minimum(dA[b, h, ci, cs - 1] - dA[b, h, ci, :hi - lo], 0.0)) * dt[b, h, ci, :hi - lo]
                if seq is not None:
                    scale = np.where(seq[b, lo:hi] == seq[b, hi - 1], scale, 0.0)
                bb = _f16(Bm[b, lo:hi, h // ratio] * scale[:, None])
                out[b, ci, h] = x[b, lo:hi, h].T @ bb
    return {"states_ptr": out.ravel()}


def state_passing(v, c, s):
    dim, nc = s["dim"], s["nchunks"]
    BH = v["final_states_ptr"].size // dim
    Bt = c["_batch"]
    H = BH // Bt
    states = v["states_ptr"].reshape(Bt, nc, H, dim)
    dA = v["dA_cs_ptr"].reshape(Bt, H, nc)
    cur = v["initstates_ptr"].reshape(Bt, H, dim).copy() if "initstates_ptr" in v else np.zeros((Bt, H, dim))
    out = np.zeros((Bt, nc, H, dim))
    for ci in range(nc):
        out[:, ci] = cur
        cur = np.exp(dA[:, :, ci])[..., None] * cur + states[:, ci]
    return {"out_ptr": out.ravel(), "final_states_ptr": cur.ravel()}


def bmm_chunk(v, c, s):
    L, cs, K, G = s["seqlen"], s["chunk_size"], s["K"], s["ngroups"]
    nc = _cdiv(L, cs)
    r = _bf16 if "bfloat16" in repr(c["dot_dtype"]) else _f16
    a = r(v["a_ptr"].reshape(-1, L, G, K))
    b = r(v["b_ptr"].reshape(-1, L, G, K))
    Bt = a.shape[0]
    out = v["out_ptr"].reshape(Bt, nc, G, cs, cs).copy()
    BM, BN = c["BLOCK_SIZE_M"], c["BLOCK_SIZE_N"]
    for bi in range(Bt):
        for ci in range(nc):
            lo, hi = ci * cs, min(L, (ci + 1) * cs)
            for g in range(G):
                ac = np.zeros((cs, K))
                bc = np.zeros((cs, K))
                ac[:hi - lo] = a[bi, lo:hi, g]
                bc[:hi - lo] = b[bi, lo:hi, g]
                full = ac @ bc.T
                for pm in range(_cdiv(cs, BM)):
                    for pn in range(_cdiv(cs, BN)):
                        if c["IS_CAUSAL"] and pn * BN >= (pm + 1) * BM:
                            continue
                        out[bi, ci, g, pm * BM:(pm + 1) * BM, pn * BN:(pn + 1) * BN] = \
                            full[pm * BM:(pm + 1) * BM, pn * BN:(pn + 1) * BN]
    return {"out_ptr": out.ravel()}


def chunk_scan(v, c, s):
    cs, hdim, N = s["chunk_size"], s["hdim"], s["dstate"]
    Bt, L, ratio = s["batch"], s["seqlen"], s["nheads_ngroups_ratio"]
    nc = _cdiv(L, cs)
    x = v["x_ptr"].reshape(Bt, L, -1, hdim)
    H = x.shape[2]
    G = H // ratio
    cb = v["cb_ptr"].reshape(Bt, nc, G, cs, cs)
    dt = v["dt_ptr"].reshape(Bt, H, nc, cs)
    dA = v["dA_cumsum_ptr"].reshape(Bt, H, nc, cs)
    C = v["C_ptr"].reshape(Bt, L, G, N)
    ps = _f16(v["prev_states_ptr"].reshape(Bt, nc, H, hdim, N))
    out = v["out_ptr"].reshape(Bt, L, H, hdim).copy()
    tri = np.tril(np.ones((cs, cs), bool))
    for b in range(Bt):
        for ci in range(nc):
            lo, hi = ci * cs, min(L, (ci + 1) * cs)
            n = hi - lo
            for h in range(H):
                g = h // ratio
                dm = dA[b, h, ci]
                acc = (C[b, lo:hi, g] @ ps[b, ci, h].T) * np.exp(dm[:n])[:, None]
                w = cb[b, ci, g] * np.exp(np.minimum(dm[:, None] - dm[None, :], 0.0)) * dt[b, h, ci][None, :]
                w = _f16(np.where(tri, w, 0.0))
                acc = acc + w[:n, :n] @ x[b, lo:hi, h]
                if "D_ptr" in v:
                    D = v["D_ptr"].reshape(H, -1)[h]
                    acc = acc + x[b, lo:hi, h] * (D[None, :] if c["D_HAS_HDIM"] else D[0])
                if "z_ptr" in v:
                    z = v["z_ptr"].reshape(Bt, L, H, hdim)[b, lo:hi, h]
                    acc = acc * z * _sigmoid(z)
                out[b, lo:hi, h] = acc
    return {"out_ptr": out.ravel()}


# ---- lightllm references -------------------------------------------------------------------------


def token_att_scores(v, c, s):
    D = c["BLOCK_DMODEL"]
    lens = v["B_Seqlen"].astype(np.int64)
    starts = v["B_Start_Loc"].astype(np.int64)
    reqs = v["B_req_idx"].astype(np.int64)
    G = s["kv_group_num"]
    H = s["stride_qbs"] // D
    KVH = s["stride_kbs"] // D
    q = v["Q"].reshape(-1, H, D)
    k = v["K"].reshape(-1, KVH, D)
    table = v["Req_to_tokens"].reshape(-1, s["stride_req_to_tokens_b"]).astype(np.int64)
    out = v["Att_Out"].reshape(H, -1).copy()
    for b in range(lens.size):
        toks = table[reqs[b], :lens[b]]
        for h in range(H):
            out[h, starts[b]:starts[b] + lens[b]] = k[toks, h // G] @ q[b, h] * s["sm_scale"]
    return {"Att_Out": out.ravel()}


def token_softmax_reducev(v, c, s):
    D = c["BLOCK_DMODEL"]
    lens = v["B_Seqlen"].astype(np.int64)
    starts = v["B_Start_Loc"].astype(np.int64)
    reqs = v["B_req_idx"].astype(np.int64)
    G = s["kv_group_num"]
    H = s["stride_obs"] // D
    KVH = s["stride_vbs"] // D
    logits = v["Logics"].reshape(H, -1)
    val = v["V"].reshape(-1, KVH, D)
    table = v["Req_to_tokens"].reshape(-1, s["stride_req_to_token_b"]).astype(np.int64)
    out = np.zeros((lens.size, H, D))
    for b in range(lens.size):
        toks = table[reqs[b], :lens[b]]
        for h in range(H):
            p = np.exp(logits[h, starts[b]:starts[b] + lens[b]] - logits[h, starts[b]:starts[b] + lens[b]].max())
            out[b, h] = (p / p.sum()) @ val[toks, h // G]
    return {"Out": out.ravel()}


def context_attention(v, c, s):
    D = c["BLOCK_DMODEL"]
    H, G = s["H"], s["kv_group_num"]
    KVH = H // G
    q = v["Q"].reshape(-1, H, D)
    k = v["K"].reshape(-1, KVH, D)
    val = v["V"].reshape(-1, KVH, D)
    out = v["Out"].reshape(-1, H, D).copy()
    for st, n in zip(v["B_Start_Loc"].astype(np.int64), v["B_Seqlen"].astype(np.int64)):
        causal = np.tril(np.ones((n, n), bool))
        for h in range(H):
            sc = q[st:st + n, h] @ k[st:st + n, h // G].T * s["sm_scale"]
            sc = np.where(causal, sc, -np.inf)
            p = np.exp(sc - sc.max(1, keepdims=True))
            out[st:st + n, h] = (p / p.sum(1, keepdims=True)) @ val[st:st + n, h // G]
    return {"Out": out.ravel()}


def ll_rotary(v, c, s):
    D = c["BLOCK_DMODEL"]
    half = D // 2
    T = s["max_total_len"]
    cos = v["Cos"].reshape(T, half)[:, None, :]
    sin = v["Sin"].reshape(T, half)[:, None, :]
    out = {}
    for name, nh in (("Q", s["HEAD_Q"]), ("K", s["HEAD_K"])):
        t = v[name].reshape(T, nh, D).copy()
        a, b = t[..., :half].copy(), t[..., half:].copy()
        t[..., :half] = a * cos - b * sin
        t[..., half:] = a * sin + b * cos
        out[name] = t.ravel()
    return out


def destindex_copy(v, c, s):
    D, H = c["BLOCK_DMODEL"], s["head_num"]
    k = v["K"].reshape(-1, H, D)
    out = v["Out"].reshape(-1, H, D).copy()
    out[v["Dest_loc"].astype(np.int64)] = k
    return {"Out": out.ravel()}


def destindex_quant(v, c, s):
    D, H = c["BLOCK_DMODEL"], s["head_num"]
    k = v["K"].reshape(-1, H, D).astype(np.float32)
    scale = (np.abs(k).max(-1) / np.float32(127.0)).astype(np.float32)
    scaled = (k / scale[..., None]).astype(np.float32)
    q = np.trunc(np.where(scaled >= 0, scaled + np.float32(0.5), scaled - np.float32(0.5)).astype(np.float32))
    out = v["Out"].reshape(-1, H, D).copy()
    sc = v["Out_scale"].reshape(-1, H).copy()
    dest = v["Dest_loc"].astype(np.int64)
    out[dest] = q
    sc[dest] = scale
    return {"Out": out.ravel(), "Out_scale": sc.ravel()}


def silu_and_mul(dt):
    r = _round(dt)

    def ref(v, c, s):
        M, N = s["size_m"], s["size_n"]
        x = v["input_ptr"].reshape(M, -1)
        gate, up = x[:, :N], x[:, N:2 * N]
        out = v["output_ptr"].reshape(M, -1).copy()
        out[:, :N] = up * r(gate * _sigmoid(gate))
        return {"output_ptr": out.ravel()}
    return ref


def rms_looped(v, c, s):
    N = s["N"]
    x = v["X"].reshape(-1, s["stride_x_row"])[:, :N]
    R = x.shape[0]
    rstd = 1.0 / np.sqrt((x * x).mean(1) + s["eps"])
    out = v["Y"].reshape(R, -1).copy()
    out[:, :N] = x * rstd[:, None] * v["W"][:N]
    return {"Y": out.ravel()}


# ---- cases ---------------------------------------------------------------------------------------


def _unsloth_cases():
    out = []
    add = out.append
    # in-place rope, grouped heads
    B, S, H, D, P = 2, 5, 6, 24, 8
    for dt, bwd in (("fp16", False), ("bf16", True)):
        add(Case(f"uns rope in place, heads looped in groups of 4, {dt}{' backward' if bwd else ''}", F,
                 "_uns_rope_heads_inplace", (B * S, _cdiv(H, 4)),
                 [Buf("Q", dt, B * S * H * D, out=True), Scalar("q_batch_stride", S * H * D),
                  Scalar("q_seq_stride", H * D), Buf("cos", "fp32", P * 12, "rand"), Buf("sin", "fp32", P * 12, "rand"),
                  Buf("position_ids", "i32", B * S, ("randint", 0, P)), Scalar("seqlen", S)],
                 {"cs_row_stride": 12, "n_heads": H, "head_dim": D, "HEAD_GROUP": 4, "BACKWARD_PASS": bwd,
                  "BLOCK_SIZE": 16}, ref=rope_heads))
    B, S, HQ, HK, D, P = 2, 5, 4, 2, 20, 9
    for dt, idx, bwd, cdt in (("fp32", True, False, "fp16"), ("bf16", False, True, "fp32")):
        add(Case(f"uns rope q/k strided, {'position table' if idx else 'row % seqlen'}, {dt}"
                 f"{' backward' if bwd else ''}", F, "_uns_rope_qk_strided", (B * S, HQ),
                 [Buf("Q", dt, B * HQ * S * D, out=True), Scalar("q_stride_b", HQ * S * D), Scalar("q_stride_h", S * D),
                  Scalar("q_stride_s", D), Buf("K", dt, B * HK * S * D, out=True), Scalar("k_stride_b", HK * S * D),
                  Scalar("k_stride_h", S * D), Scalar("k_stride_s", D), Buf("cos", cdt, P * 10, "rand"),
                  Buf("sin", cdt, P * 10, "rand"), Scalar("cs_stride", 10),
                  Buf("rope_indices", "i64", B * S, ("randint", 0, P)), Scalar("seqlen", S)],
                 {"head_dim": D, "n_heads_K": HK, "BACKWARD_PASS": bwd, "HAS_ROPE_INDICES": idx, "BLOCK_SIZE": 32},
                 ref=rope_qk))
    # cross-entropy
    R, V = 6, 1000
    for dt, cap, scale, W in (("bf16", 5.0, 0.0, 1000), ("fp16", 0.0, 0.5, 1024), ("fp32", 4.0, 1.5, 1000)):
        add(Case(f"uns cross-entropy fwd {dt} softcap {cap} scale {scale}", F, "_uns_xent_fwd", (R,),
                 [Buf("logits_ptr", dt, R * W, scale=3.0), Scalar("logits_row_stride", W), Out("loss_ptr", "fp32", R),
                  Out("lse_ptr", "fp32", R), Buf("labels_ptr", "i64", R, _labels(V))],
                 {"VOCAB_SIZE": V, "BLOCK_SIZE": 1024, "DO_SOFTCAPPING": cap != 0, "SOFTCAP": cap,
                  "DO_LOGIT_SCALING": scale != 0, "LOGIT_SCALE": scale}, ref=xent_fwd))
    R, V, BS = 4, 1000, 256
    add(Case("uns cross-entropy chunked vocab fwd fp16 softcap", F, "_uns_xent_chunked_fwd", (R, 4),
             [Buf("logits_ptr", "fp16", R * V, scale=4.0), Out("loss_ptr", "fp32", R), Out("lse_ptr", "fp32", R * 4),
              Buf("labels_ptr", "i64", R, _labels(V, (2,)))],
             {"logits_row_stride": V, "VOCAB_SIZE": V, "N_CHUNKS": 4, "BLOCK_SIZE": BS, "DO_SOFTCAPPING": True,
              "SOFTCAP": 3.0, "DO_LOGIT_SCALING": False, "LOGIT_SCALE": 0.0}, ref=xent_chunked))
    R, V, BS = 5, 700, 256
    for dt, cap, scale, dstride in (("bf16", 6.0, 0.75, 0), ("fp32", 0.0, 0.0, 1)):
        add(Case(f"uns cross-entropy bwd in place {dt} dloss stride {dstride}", F, "_uns_xent_bwd_inplace",
                 (R, _cdiv(V, BS)),
                 [Buf("logits_ptr", dt, R * V, out=True, scale=2.0), Buf("dloss_ptr", "fp32", R if dstride else 1, "rand"),
                  Buf("lse_ptr", "fp32", R, _positive(6.0, 1.0)), Buf("labels_ptr", "i64", R, _labels(V, (3,)))],
                 {"logits_row_stride": V, "dloss_row_stride": dstride, "VOCAB_SIZE": V, "BLOCK_SIZE": BS,
                  "DO_SOFTCAPPING": cap != 0, "SOFTCAP": cap, "DO_LOGIT_SCALING": scale != 0, "LOGIT_SCALE": scale},
                 ref=xent_bwd))
    # gated MLPs
    n = 3001
    add(Case("uns swiglu fwd fp16 int64 indexing", F, "_uns_swiglu_fwd", (_cdiv(n, 1024),),
             [Buf("e", "fp16", n, scale=2.0), Buf("g", "fp16", n), Out("h", "fp16", n), Scalar("n_elements", n)],
             {"BLOCK_SIZE": 1024, "LONG_INDEXING": True}, ref=swiglu_fwd("fp16")))
    n = 2500
    for dt, long in (("fp16", False), ("bf16", True)):
        add(Case(f"uns swiglu bwd in place {dt}{' int64 indexing' if long else ''}", F, "_uns_swiglu_bwd_inplace",
                 (_cdiv(n, 512),),
                 [Buf("DW", dt, n, out=True), Buf("e", dt, n, out=True, scale=2.0), Buf("g", dt, n, out=True),
                  Scalar("n_elements", n)], {"BLOCK_SIZE": 512, "LONG_INDEXING": long}, ref=swiglu_bwd(dt)))
    n = 2000
    add(Case("uns geglu exact (erf) fwd bf16", F, "_uns_geglu_exact_fwd", (_cdiv(n, 512),),
             [Buf("e", "bf16", n, scale=2.0), Buf("g", "bf16", n), Out("h", "bf16", n), Scalar("n_elements", n)],
             {"BLOCK_SIZE": 512}, ref=geglu_exact("bf16")))
    n = 1800
    add(Case("uns geglu tanh approx bwd in place fp16", F, "_uns_geglu_approx_bwd_inplace", (_cdiv(n, 256),),
             [Buf("DW", "fp16", n, out=True), Buf("e", "fp16", n, out=True, scale=2.0), Buf("g", "fp16", n, out=True),
              Scalar("n_elements", n)], {"BLOCK_SIZE": 256}, ref=geglu_approx_bwd("fp16")))
    # norms
    R, N, WX = 5, 200, 208
    for dt, gemma in (("fp16", False), ("bf16", True)):
        add(Case(f"uns rms norm fwd {dt}{' gemma (1 + w)' if gemma else ''}", F, "_uns_rms_fwd", (R,),
                 [Out("Y", dt, R * N), Scalar("Y_row_stride", N), Buf("X", dt, R * WX), Scalar("X_row_stride", WX),
                  Buf("W", dt, N, "rand"), Scalar("W_row_stride", N), Out("r", "fp32", R), Scalar("r_row_stride", 1)],
                 {"n_cols": N, "eps": 1e-6, "GEMMA": gemma, "BLOCK_SIZE": 256}, ref=rms_fwd(dt)))
    for dt, gemma in (("fp32", True), ("fp16", False)):
        add(Case(f"uns rms norm bwd in place {dt}{' gemma' if gemma else ''}", F, "_uns_rms_bwd_inplace", (R,),
                 [Buf("dY", dt, R * N, out=True), Scalar("dY_row_stride", N), Buf("X", dt, R * WX),
                  Scalar("X_row_stride", WX), Buf("W", dt, N, "rand"), Scalar("W_row_stride", N),
                  Buf("r", "fp32", R, _positive(0.5, 1.0)), Scalar("r_row_stride", 1)],
                 {"n_cols": N, "eps": 1e-6, "GEMMA": gemma, "BLOCK_SIZE": 256}, ref=rms_bwd))
    R, N = 6, 300
    add(Case("uns layernorm fwd fp16", F, "_uns_layernorm_fwd", (R,),
             [Out("Y", "fp16", R * N), Scalar("Y_row_stride", N), Buf("X", "fp16", R * N, scale=2.0),
              Scalar("X_row_stride", N), Buf("W", "fp16", N, "rand"), Buf("b", "fp16", N), Out("r", "fp32", R),
              Out("mu", "fp32", R)], {"n_cols": N, "eps": 1e-5, "BLOCK_SIZE": 512}, ref=ln_fwd))
    add(Case("uns layernorm bwd in place fp32", F, "_uns_layernorm_bwd_inplace", (R,),
             [Buf("dY", "fp32", R * N, out=True), Scalar("dY_row_stride", N), Buf("X", "fp32", R * N),
              Scalar("X_row_stride", N), Buf("W", "fp32", N, "rand"), Buf("b", "fp32", N),
              Buf("r", "fp32", R, _positive(0.5, 1.0)), Buf("mu", "fp32", R, scale=0.1)],
             {"n_cols": N, "eps": 1e-5, "BLOCK_SIZE": 512}, ref=ln_bwd))
    return out


def _mamba_cases():
    out = []
    add = out.append
    Bt, H, G, dim, N, BM = 2, 4, 2, 20, 12, 8
    ratio = H // G
    for full in (True, False):
        xdt = "bf16" if full else "fp32"
        args = [Buf("state_ptr", "fp32", Bt * H * dim * N, out=True), Buf("x_ptr", xdt, Bt * H * dim),
                Buf("dt_ptr", xdt, Bt * H * dim, scale=0.5) if full else Buf("dt_ptr", xdt, Bt * H * dim, "rand"),
                Buf("dt_bias_ptr", "fp32", H * dim, scale=0.3) if full else Null("dt_bias_ptr"),
                Buf("A_ptr", "fp32", H * dim * N, _neg_rand), Buf("B_ptr", "fp16" if full else "fp32", Bt * G * N),
                Buf("C_ptr", "fp16" if full else "fp32", Bt * G * N),
                Buf("D_ptr", "fp32", H * dim) if full else Null("D_ptr"),
                Buf("z_ptr", xdt, Bt * H * dim) if full else Null("z_ptr"), Out("out_ptr", xdt, Bt * H * dim),
                Scalar("batch", Bt), Scalar("nheads", H), Scalar("dim", dim), Scalar("dstate", N),
                Scalar("nheads_ngroups_ratio", ratio),
                Scalar("stride_state_batch", H * dim * N), Scalar("stride_state_head", dim * N),
                Scalar("stride_state_dim", N), Scalar("stride_state_dstate", 1),
                Scalar("stride_x_batch", H * dim), Scalar("stride_x_head", dim), Scalar("stride_x_dim", 1),
                Scalar("stride_dt_batch", H * dim), Scalar("stride_dt_head", dim), Scalar("stride_dt_dim", 1),
                Scalar("stride_dt_bias_head", dim if full else 0), Scalar("stride_dt_bias_dim", 1 if full else 0),
                Scalar("stride_A_head", dim * N), Scalar("stride_A_dim", N), Scalar("stride_A_dstate", 1),
                Scalar("stride_B_batch", G * N), Scalar("stride_B_group", N), Scalar("stride_B_dstate", 1),
                Scalar("stride_C_batch", G * N), Scalar("stride_C_group", N), Scalar("stride_C_dstate", 1),
                Scalar("stride_D_head", dim if full else 0), Scalar("stride_D_dim", 1 if full else 0),
                Scalar("stride_z_batch", H * dim if full else 0), Scalar("stride_z_head", dim if full else 0),
                Scalar("stride_z_dim", 1 if full else 0),
                Scalar("stride_out_batch", H * dim), Scalar("stride_out_head", dim), Scalar("stride_out_dim", 1)]
        add(Case(f"uns mamba selective state update {'dt bias, D, z, softplus' if full else 'bare'} {xdt}", F,
                 "_mb_state_update", (_cdiv(dim, BM), Bt, H), args,
                 {"DT_SOFTPLUS": full, "BLOCK_SIZE_M": BM, "HAS_DT_BIAS": full, "HAS_D": full, "HAS_Z": full,
                  "BLOCK_SIZE_DSTATE": 16}, tol={"fp32": (1e-4, 1e-4)}, ref=state_update))
    M, G, N, BN = 5, 2, 48, 64
    for dt, rms, bias, z, before in (("fp16", True, False, True, True), ("bf16", False, True, True, False),
                                     ("fp32", False, False, False, True)):
        WX = G * N + 4
        args = [Buf("inp_ptr", dt, M * WX), Out("res_ptr", dt, M * G * N), Buf("weight_ptr", dt, G * N, "rand"),
                Buf("bias_ptr", dt, G * N) if bias else Null("bias_ptr"),
                Buf("gate_ptr", dt, M * G * N) if z else Null("gate_ptr"),
                Null("mean_ptr") if rms else Out("mean_ptr", "fp32", G * M), Out("rstd_ptr", "fp32", G * M),
                Scalar("inp_row_stride", WX), Scalar("res_row_stride", G * N),
                Scalar("gate_row_stride", G * N if z else 0),
                Scalar("n_rows", M), Scalar("group_width", N), Scalar("eps", 1e-5, "fp32")]
        add(Case(f"uns mamba gated {'rms' if rms else 'layer'}norm groups of {N} {dt}"
                 f"{' bias' if bias else ''}{(' z ' + ('before' if before else 'after') + ' gate') if z else ''}",
                 F, "_mb_gated_norm_fwd", (M, G), args,
                 {"BLOCK_N": BN, "HAS_BIAS": bias, "HAS_Z": z, "NORM_BEFORE_GATE": before, "IS_RMS_NORM": rms},
                 ref=gated_norm))
    Bt, L, H, cs = 2, 40, 5, 16
    nc = _cdiv(L, cs)
    for sp, bh in ((True, 4), (False, 8)):
        args = [Buf("dt_ptr", "fp16" if sp else "fp32", Bt * L * H, scale=1.5) if sp else
                Buf("dt_ptr", "fp32", Bt * L * H, "rand", scale=3.0),
                Buf("A_ptr", "fp32", H, _neg_rand), Buf("dt_bias_ptr", "fp32", H, scale=0.5),
                Out("dt_out_ptr", "fp32", Bt * H * nc * cs), Out("dA_cumsum_ptr", "fp32", Bt * H * nc * cs),
                Scalar("batch", Bt), Scalar("seqlen", L), Scalar("nheads", H), Scalar("chunk_size", cs),
                Scalar("dt_min", 0.05, "fp32"), Scalar("dt_max", 2.0, "fp32"),
                Scalar("stride_dt_batch", L * H), Scalar("stride_dt_seqlen", H), Scalar("stride_dt_head", 1),
                Scalar("stride_A_head", 1), Scalar("stride_dt_bias_head", 1),
                Scalar("stride_dt_out_batch", H * nc * cs), Scalar("stride_dt_out_chunk", cs),
                Scalar("stride_dt_out_head", nc * cs), Scalar("stride_dt_out_csize", 1),
                Scalar("stride_dA_cs_batch", H * nc * cs), Scalar("stride_dA_cs_chunk", cs),
                Scalar("stride_dA_cs_head", nc * cs), Scalar("stride_dA_cs_csize", 1)]
        add(Case(f"uns mamba chunk cumsum dt*A{' softplus + bias' if sp else ''} heads of {bh}", F,
                 "_mb_chunk_cumsum_fwd", (Bt, nc, _cdiv(H, bh)), args,
                 {"DT_SOFTPLUS": sp, "HAS_DT_BIAS": sp, "BLOCK_SIZE_H": bh, "BLOCK_SIZE_CHUNK": cs},
                 ref=chunk_cumsum))
    Bt, L, H, G, hdim, N, cs = 2, 40, 4, 2, 24, 16, 16
    nc = _cdiv(L, cs)

    def _seq_idx(rng, n):
        # two sequences per batch row, the boundary inside the second chunk
        return np.concatenate([np.repeat([0, 1], [21, L - 21]), np.repeat([0, 1], [5, L - 5])])[:n]
    for seq in (False, True):
        args = [Buf("x_ptr", "fp16", Bt * L * H * hdim), Buf("b_ptr", "fp16", Bt * L * G * N),
                Out("states_ptr", "fp32", Bt * nc * H * hdim * N), Buf("dt_ptr", "fp32", Bt * H * nc * cs, "rand"),
                Buf("dA_cumsum_ptr", "fp32", Bt * H * nc * cs, scale=0.5),
                Buf("seq_idx_ptr", "i32", Bt * L, _seq_idx) if seq else Null("seq_idx_ptr"),
                Scalar("hdim", hdim), Scalar("dstate", N), Scalar("chunk_size", cs), Scalar("batch", Bt),
                Scalar("seqlen", L), Scalar("nheads_ngroups_ratio", H // G),
                Scalar("stride_x_batch", L * H * hdim), Scalar("stride_x_seqlen", H * hdim),
                Scalar("stride_x_head", hdim), Scalar("stride_x_hdim", 1),
                Scalar("stride_b_batch", L * G * N), Scalar("stride_b_seqlen", G * N), Scalar("stride_b_head", N),
                Scalar("stride_b_dstate", 1),
                Scalar("stride_states_batch", nc * H * hdim * N), Scalar("stride_states_chunk", H * hdim * N),
                Scalar("stride_states_head", hdim * N), Scalar("stride_states_hdim", N),
                Scalar("stride_states_dstate", 1),
                Scalar("stride_dt_batch", H * nc * cs), Scalar("stride_dt_chunk", cs), Scalar("stride_dt_head", nc * cs),
                Scalar("stride_dt_csize", 1),
                Scalar("stride_dA_cs_batch", H * nc * cs), Scalar("stride_dA_cs_chunk", cs),
                Scalar("stride_dA_cs_head", nc * cs), Scalar("stride_dA_cs_csize", 1),
                Scalar("stride_seq_idx_batch", L if seq else 0), Scalar("stride_seq_idx_seqlen", 1 if seq else 0)]
        add(Case(f"uns mamba chunk state (tl.dot){' with seq_idx' if seq else ''}", F, "_mb_chunk_state_fwd",
                 (_cdiv(hdim, 16) * _cdiv(N, 16), Bt * nc, H), args,
                 {"HAS_SEQ_IDX": seq, "BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 16, "BLOCK_SIZE_K": 16},
                 tol={"fp32": (2e-3, 2e-3)}, ref=chunk_state))
    Bt, H, dim, nc = 2, 3, 100, 4
    for init in (True, False):
        args = [Buf("states_ptr", "fp32", Bt * nc * H * dim), Out("out_ptr", "fp32", Bt * nc * H * dim),
                Out("final_states_ptr", "fp32", Bt * H * dim), Buf("dA_cs_ptr", "fp32", Bt * H * nc, _neg_rand),
                Buf("initstates_ptr", "fp32", Bt * H * dim) if init else Null("initstates_ptr"),
                Scalar("dim", dim), Scalar("nchunks", nc),
                Scalar("stride_states_batch", nc * H * dim), Scalar("stride_states_chunk", H * dim),
                Scalar("stride_states_head", dim), Scalar("stride_states_dim", 1),
                Scalar("stride_out_batch", nc * H * dim), Scalar("stride_out_chunk", H * dim),
                Scalar("stride_out_head", dim), Scalar("stride_out_dim", 1),
                Scalar("stride_final_states_batch", H * dim), Scalar("stride_final_states_head", dim),
                Scalar("stride_final_states_dim", 1),
                Scalar("stride_dA_cs_batch", H * nc), Scalar("stride_dA_cs_chunk", 1), Scalar("stride_dA_cs_head", nc),
                Scalar("stride_initstates_batch", H * dim if init else 0),
                Scalar("stride_initstates_head", dim if init else 0), Scalar("stride_initstates_dim", 1 if init else 0)]
        add(Case(f"uns mamba state passing{' from initial states' if init else ''}", F, "_mb_state_passing_fwd",
                 (_cdiv(dim, 64), Bt, H), args, {"HAS_INITSTATES": init, "BLOCK_SIZE": 64},
                 ref=_with_batch(state_passing, Bt)))
    Bt, L, cs, G, K = 2, 72, 32, 2, 24
    nc = _cdiv(L, cs)
    for causal, dt, dd in ((True, "fp16", "float16"), (False, "fp32", "bfloat16")):
        args = [Buf("a_ptr", dt, Bt * L * G * K), Buf("b_ptr", dt, Bt * L * G * K),
                Buf("out_ptr", "fp32", Bt * nc * G * cs * cs, "zeros", out=True),
                Scalar("seqlen", L), Scalar("chunk_size", cs), Scalar("K", K), Scalar("ngroups", G),
                Scalar("stride_a_batch", L * G * K), Scalar("stride_a_seqlen", G * K), Scalar("stride_a_head", K),
                Scalar("stride_ak", 1),
                Scalar("stride_b_batch", L * G * K), Scalar("stride_b_seqlen", G * K), Scalar("stride_b_head", K),
                Scalar("stride_bk", 1),
                Scalar("stride_out_batch", nc * G * cs * cs), Scalar("stride_out_chunk", G * cs * cs),
                Scalar("stride_out_head", cs * cs), Scalar("stride_outm", cs), Scalar("stride_outn", 1)]
        add(Case(f"uns mamba bmm chunk C.B^T {'causal early return' if causal else 'full'} {dd} dot", F,
                 "_mb_bmm_chunk_fwd", (_cdiv(cs, 16) ** 2, Bt, nc * G), args,
                 {"IS_CAUSAL": causal, "dot_dtype": _dt(dd), "BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 16,
                  "BLOCK_SIZE_K": 16}, tol={"fp32": (2e-3, 2e-3)}, ref=bmm_chunk))
    Bt, L, H, G, hdim, N, cs = 2, 40, 4, 2, 24, 12, 16
    nc = _cdiv(L, cs)
    for d_hdim, z in ((False, True), (True, False)):
        args = [Buf("cb_ptr", "fp32", Bt * nc * G * cs * cs, scale=0.5), Buf("x_ptr", "fp16", Bt * L * H * hdim),
                Buf("z_ptr", "fp16", Bt * L * H * hdim) if z else Null("z_ptr"),
                Out("out_ptr", "fp16", Bt * L * H * hdim), Buf("dt_ptr", "fp32", Bt * H * nc * cs, "rand"),
                Buf("dA_cumsum_ptr", "fp32", Bt * H * nc * cs, _cumsum_chunks(nc, cs)),
                Buf("C_ptr", "fp16", Bt * L * G * N), Buf("prev_states_ptr", "fp32", Bt * nc * H * hdim * N, scale=0.5),
                Buf("D_ptr", "fp32", H * hdim if d_hdim else H),
                Scalar("chunk_size", cs), Scalar("hdim", hdim), Scalar("dstate", N), Scalar("batch", Bt),
                Scalar("seqlen", L), Scalar("nheads_ngroups_ratio", H // G),
                Scalar("stride_cb_batch", nc * G * cs * cs), Scalar("stride_cb_chunk", G * cs * cs),
                Scalar("stride_cb_head", cs * cs), Scalar("stride_cb_csize_m", cs), Scalar("stride_cb_csize_k", 1),
                Scalar("stride_x_batch", L * H * hdim), Scalar("stride_x_seqlen", H * hdim),
                Scalar("stride_x_head", hdim), Scalar("stride_x_hdim", 1),
                Scalar("stride_z_batch", L * H * hdim if z else 0), Scalar("stride_z_seqlen", H * hdim if z else 0),
                Scalar("stride_z_head", hdim if z else 0), Scalar("stride_z_hdim", 1 if z else 0),
                Scalar("stride_out_batch", L * H * hdim), Scalar("stride_out_seqlen", H * hdim),
                Scalar("stride_out_head", hdim), Scalar("stride_out_hdim", 1),
                Scalar("stride_dt_batch", H * nc * cs), Scalar("stride_dt_chunk", cs), Scalar("stride_dt_head", nc * cs),
                Scalar("stride_dt_csize", 1),
                Scalar("stride_dA_cs_batch", H * nc * cs), Scalar("stride_dA_cs_chunk", cs),
                Scalar("stride_dA_cs_head", nc * cs), Scalar("stride_dA_cs_csize", 1),
                Scalar("stride_C_batch", L * G * N), Scalar("stride_C_seqlen", G * N), Scalar("stride_C_head", N),
                Scalar("stride_C_dstate", 1),
                Scalar("stride_states_batch", nc * H * hdim * N), Scalar("stride_states_chunk", H * hdim * N),
                Scalar("stride_states_head", hdim * N), Scalar("stride_states_hdim", N),
                Scalar("stride_states_dstate", 1), Scalar("stride_D_head", hdim if d_hdim else 1)]
        add(Case(f"uns mamba chunk scan causal, D {'per channel' if d_hdim else 'per head'}{', z gate' if z else ''}",
                 F, "_mb_chunk_scan_fwd", (_cdiv(cs, 16) * _cdiv(hdim, 16), Bt * nc, H), args,
                 {"IS_CAUSAL": True, "HAS_D": True, "D_HAS_HDIM": d_hdim, "HAS_Z": z, "BLOCK_SIZE_M": 16,
                  "BLOCK_SIZE_N": 16, "BLOCK_SIZE_K": 16, "BLOCK_SIZE_DSTATE": 16}, ref=chunk_scan))
    return out


def _with_batch(ref, batch):
    def r(v, c, s):
        return ref(v, {**c, "_batch": batch}, s)
    return r


def _cumsum_chunks(nc, cs):
    """Decreasing cumulative sums within each chunk (dt*A with A < 0)."""
    def make(rng, n):
        steps = -0.1 * rng.random(n).reshape(-1, cs)
        return np.cumsum(steps, 1).ravel()
    return make


def _lightllm_cases():
    out = []
    add = out.append
    lens = [13, 30, 7]
    starts = [0, 13, 43]
    total, H, KVH, D, slots, MAXL = 50, 4, 2, 32, 64, 32
    req_idx = [2, 0, 3]

    def _table(rng, n):
        t = np.zeros((4, MAXL), dtype=np.int64)
        perm = rng.permutation(slots)
        pos = 0
        for r_, ln in zip(req_idx, lens):
            t[r_, :ln] = perm[pos:pos + ln]
            pos += ln
        return t.ravel()[:n]
    meta = [Buf("B_req_idx", "i32", 3, _values(*req_idx)), Buf("B_Start_Loc", "i32", 3, _values(*starts)),
            Buf("B_Seqlen", "i32", 3, _values(*lens))]
    add(Case("uns lightllm token attention stage 1 (req-to-token table, gqa) fp16", F, "_ll_token_att_scores",
             (3, H, _cdiv(max(lens), 16)),
             [Buf("Q", "fp16", 3 * H * D), Buf("K", "fp16", slots * KVH * D), Scalar("sm_scale", D ** -0.5, "fp32"),
              Buf("Req_to_tokens", "i32", 4 * MAXL, _table)] + meta +
             [Out("Att_Out", "fp32", H * total), Scalar("stride_req_to_tokens_b", MAXL),
              Scalar("stride_req_to_tokens_s", 1), Scalar("stride_qbs", H * D), Scalar("stride_qh", D),
              Scalar("stride_qd", 1), Scalar("stride_kbs", KVH * D), Scalar("stride_kh", D), Scalar("stride_kd", 1),
              Scalar("att_stride_h", total), Scalar("att_stride_bs", 1), Scalar("kv_group_num", H // KVH)],
             {"BLOCK_DMODEL": D, "BLOCK_N": 16}, ref=token_att_scores))
    add(Case("uns lightllm token attention stage 2 (online softmax, reduce V) bf16", F, "_ll_token_softmax_reducev",
             (3, H),
             [Buf("Logics", "fp32", H * total, scale=2.0), Buf("V", "bf16", slots * KVH * D), Out("Out", "bf16", 3 * H * D),
              Buf("Req_to_tokens", "i32", 4 * MAXL, _table)] + meta +
             [Scalar("stride_logic_h", total), Scalar("stride_logic_bs", 1), Scalar("stride_vbs", KVH * D),
              Scalar("stride_vh", D), Scalar("stride_vd", 1), Scalar("stride_obs", H * D), Scalar("stride_oh", D),
              Scalar("stride_od", 1), Scalar("stride_req_to_token_b", MAXL), Scalar("stride_req_to_token_s", 1),
              Scalar("other_kv_index", 0), Scalar("kv_group_num", H // KVH)],
             {"BLOCK_DMODEL": D, "BLOCK_N": 8}, ref=token_softmax_reducev))
    lens2, starts2, total2 = [20, 37, 9], [0, 20, 57], 66
    for dt, BM, BN in (("fp16", 16, 16), ("bf16", 32, 16)):
        add(Case(f"uns lightllm context attention packed causal gqa {dt} BLOCK_M {BM}", F, "_ll_context_attention_fwd",
                 (_cdiv(max(lens2), BM), 3 * H),
                 [Buf("Q", dt, total2 * H * D), Buf("K", dt, total2 * KVH * D), Buf("V", dt, total2 * KVH * D),
                  Scalar("sm_scale", D ** -0.5, "fp32"), Out("Out", dt, total2 * H * D),
                  Buf("B_Start_Loc", "i32", 3, _values(*starts2)), Buf("B_Seqlen", "i32", 3, _values(*lens2)),
                  Scalar("stride_qbs", H * D), Scalar("stride_qh", D), Scalar("stride_qd", 1),
                  Scalar("stride_kbs", KVH * D), Scalar("stride_kh", D), Scalar("stride_kd", 1),
                  Scalar("stride_vbs", KVH * D), Scalar("stride_vh", D), Scalar("stride_vd", 1),
                  Scalar("stride_obs", H * D), Scalar("stride_oh", D), Scalar("stride_od", 1),
                  Scalar("kv_group_num", H // KVH), Scalar("H", H)],
                 {"BLOCK_DMODEL": D, "BLOCK_M": BM, "BLOCK_N": BN}, ref=context_attention))
    T, HQ, HK, D = 37, 6, 2, 32
    for dt in ("fp16",):
        add(Case(f"uns lightllm rotary (token, head, dim) blocks {dt}", F, "_ll_rotary_kernel",
                 (_cdiv(HQ, 4), _cdiv(T, 16)),
                 [Buf("Q", dt, T * HQ * D, out=True), Buf("K", dt, T * HK * D, out=True),
                  Buf("Cos", dt, T * D // 2, "rand"), Buf("Sin", dt, T * D // 2, "rand"),
                  Scalar("stride_qbs", HQ * D), Scalar("stride_qh", D), Scalar("stride_qd", 1),
                  Scalar("stride_kbs", HK * D), Scalar("stride_kh", D), Scalar("stride_kd", 1),
                  Scalar("stride_cosbs", D // 2), Scalar("stride_cosd", 1), Scalar("stride_sinbs", D // 2),
                  Scalar("stride_sind", 1), Scalar("max_total_len", T), Scalar("HEAD_Q", HQ), Scalar("HEAD_K", HK)],
                 {"BLOCK_HEAD": 4, "BLOCK_SEQ": 16, "BLOCK_DMODEL": D}, ref=ll_rotary))
    n, H, D, cache_rows = 7, 5, 32, 20
    add(Case("uns lightllm destindex copy kv fp16", F, "_ll_destindex_copy_kv", (n,),
             [Buf("K", "fp16", n * H * D), Buf("Dest_loc", "i32", n, _distinct(cache_rows)),
              Buf("Out", "fp16", cache_rows * H * D, "zeros", out=True),
              Scalar("stride_k_bs", H * D), Scalar("stride_k_h", D), Scalar("stride_k_d", 1),
              Scalar("stride_o_bs", H * D), Scalar("stride_o_h", D), Scalar("stride_o_d", 1), Scalar("head_num", H)],
             {"BLOCK_DMODEL": D, "BLOCK_HEAD": 8}, ref=destindex_copy))
    add(Case("uns lightllm destindex copy quantize kv int8 per-head scale", F, "_ll_destindex_copy_quantize_kv", (n,),
             [Buf("K", "bf16", n * H * D, scale=2.0), Buf("Dest_loc", "i32", n, _distinct(cache_rows)),
              Buf("Out", "i8", cache_rows * H * D, "zeros", out=True), Buf("Out_scale", "fp32", cache_rows * H, "zeros", out=True),
              Scalar("stride_k_bs", H * D), Scalar("stride_k_h", D), Scalar("stride_k_d", 1),
              Scalar("stride_o_bs", H * D), Scalar("stride_o_h", D), Scalar("stride_o_d", 1),
              Scalar("stride_os_bs", H), Scalar("stride_os_h", 1), Scalar("head_num", H)],
             {"BLOCK_DMODEL": D, "BLOCK_HEAD": 8}, ref=destindex_quant))
    M, N, W = 37, 100, 208
    add(Case("uns lightllm silu_and_mul 2-D grid fp16 padded rows", F, "_ll_silu_and_mul",
             (_cdiv(M, 16), _cdiv(N, 64)),
             [Buf("input_ptr", "fp16", M * W, scale=2.0), Out("output_ptr", "fp16", M * N),
              Scalar("stride_input_m", W), Scalar("stride_input_n", 1), Scalar("stride_output_m", N),
              Scalar("stride_output_n", 1), Scalar("size_m", M), Scalar("size_n", N)],
             {"BLOCK_M": 16, "BLOCK_N": 64}, ref=silu_and_mul("fp16")))
    R, N, WX = 4, 300, 304
    add(Case("uns lightllm rms norm looped over column blocks bf16", F, "_ll_rms_norm_looped", (R,),
             [Buf("X", "bf16", R * WX), Out("Y", "bf16", R * N), Buf("W", "fp32", N, "rand"),
              Scalar("stride_x_row", WX), Scalar("stride_y_row", N), Scalar("N", N), Scalar("eps", 1e-6, "fp32")],
             {"BLOCK_SIZE": 128}, ref=rms_looped))
    return out


def cases():
    return _unsloth_cases() + _mamba_cases() + _lightllm_cases()
