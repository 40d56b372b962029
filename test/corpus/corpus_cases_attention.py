"""Cases of the attention kernels with a bias tile (attention_bias.py) and
their float64 numpy reference: the bias's element type and padding vary,
and the key count is no multiple of the key block, so the last step reads
a partial tile. Then the packed variable-length forward whose mask a
runtime flag chooses (attention_flag_mask.py), causal and not, and a
backward that keeps a key block's K and V for its loop over queries
(attention_bwd_kv.py)."""
import numpy as np

from corpus_cases import Buf, Case, Out, Scalar
from corpus_cases_lang import _bf16


def attn_bias(v, c, s):
    n, d, bm = s["N_CTX"], c["HEAD_DIM"], s["stride_bm"]
    q, k, vv = (v[x].reshape(-1, n, d) for x in ("Q", "K", "V"))
    bias = v["Bias"].reshape(q.shape[0], n, bm)[:, :, :n]
    sc = q @ k.transpose(0, 2, 1) * s["sm_scale"] + bias
    e = np.exp(sc - sc.max(axis=2, keepdims=True))
    return {"Out": (e @ vv / e.sum(axis=2, keepdims=True)).ravel()}


def cases():
    H, D, BM = 2, 32, 64
    out = []
    # key counts divisible by 16 let the bias tile move in 16-byte copies;
    # 100 keys leave it two bytes at a time
    for dt, n, pad_inf in (("fp16", 80, True), ("bf16", 112, False), ("fp32", 80, True),
                           ("fp16", 100, True)):
        stride_bm = (n + 15) // 16 * 16
        T = H * n * D
        out.append(Case(
            f"attention with a {dt} bias tile, {n} keys, {'-inf' if pad_inf else 'zero'} padding",
            "attention_bias.py", "attn_bias_fwd", ((n + BM - 1) // BM, H),
            [Buf("Q", "fp16", T), Buf("K", "fp16", T), Buf("V", "fp16", T),
             Buf("Bias", dt, H * n * stride_bm), Out("Out", "fp16", T),
             Scalar("sm_scale", D ** -0.5, "fp32"), Scalar("stride_h", n * D),
             Scalar("stride_m", D), Scalar("stride_bh", n * stride_bm),
             Scalar("stride_bm", stride_bm), Scalar("N_CTX", n)],
            {"HEAD_DIM": D, "BLOCK_M": BM, "BLOCK_N": 32, "PAD_INF": pad_inf}, num_stages=3,
            tol={"fp16": (1e-2, 1e-2)}, ref=attn_bias))
    return out + flag_mask_cases() + bwd_kv_cases() + chunk_state_cases() + gqa_group_cases()


SEQS = (0, 150, 170, 401)


def flag_mask(v, c, s):
    """Packed sequences [tokens, heads, dim]: each sequence's rows attend to
    its own keys (up to their own position when causal); the log-sum-exp
    is in base 2 of the scaled scores, per head over all tokens."""
    D, H, T = c["HEAD_DIM"], s["stride_n"] // c["HEAD_DIM"], SEQS[-1]
    q, k, vv = (v[x].reshape(T, H, D) for x in ("q", "k", "v"))
    o, lse = np.zeros((T, H, D)), np.zeros((H, T))
    for a, b in zip(SEQS[:-1], SEQS[1:]):
        for h in range(H):
            sc = q[a:b, h] @ k[a:b, h].T * s["sm_scale"]
            if s["causal"]:
                sc = np.where(np.tril(np.ones((b - a, b - a), bool)), sc, -np.inf)
            m = sc.max(axis=1, keepdims=True)
            e = np.exp(sc - m)
            o[a:b, h] = e @ vv[a:b, h] / e.sum(axis=1, keepdims=True)
            lse[h, a:b] = (m[:, 0] + np.log(e.sum(axis=1))) / np.log(2)
    return {"o": o.ravel(), "lse": lse.ravel()}


def flag_mask_cases():
    H, D, BQ = 2, 64, 128
    T, longest = SEQS[-1], max(b - a for a, b in zip(SEQS[:-1], SEQS[1:]))
    out = []
    for causal in (True, False):
        out.append(Case(
            f"varlen attention, mask chosen by a runtime flag (causal={causal})",
            "attention_flag_mask.py", "flag_mask_fwd", (len(SEQS) - 1, H, -(-longest // BQ)),
            [Buf("q", "fp16", T * H * D), Buf("k", "fp16", T * H * D), Buf("v", "fp16", T * H * D),
             Out("o", "fp16", T * H * D), Out("lse", "fp32", H * T),
             Buf("cu_seqlens", "i32", len(SEQS), lambda rng, n: np.array(SEQS)),
             Scalar("sm_scale", D ** -0.5, "fp32"), Scalar("causal", causal, "i1"),
             Scalar("stride_n", H * D), Scalar("stride_h", D), Scalar("stride_lh", T)],
            {"HEAD_DIM": D, "BLOCK_Q": BQ, "BLOCK_K": 64}, num_warps=8, num_stages=3,
            tol={"fp16": (1e-2, 1e-2)}, ref=flag_mask))
    return out


def bwd_kv(v, c, s):
    """dK = sum over query rows of dS^T Q, dV = P^T dO, with P =
    2^(Q K^T - lse) and dS = P (dO V^T - delta); P and dS rounded to the
    operands' type before their dots, as the kernel does."""
    D, nq = c["D"], s["n_q"]
    q, do = (v[x].reshape(-1, D)[:nq] for x in ("Q", "DO"))
    k, vv = (v[x].reshape(-1, D) for x in ("K", "V"))
    p = np.exp2(q @ k.T - v["LSE"][:nq, None])
    ds = p * (do @ vv.T - v["DELTA"][:nq, None])
    return {"DK": (_bf16(ds).T @ q).ravel(), "DV": (_bf16(p).T @ do).ravel()}


def bwd_kv_cases():
    D, NQ, NK = 128, 200, 128
    return [Case(
        "attention backward, K and V kept for the query loop and read transposed",
        "attention_bwd_kv.py", "dkdv_fixed_kv", (NK // 64,),
        [Buf("Q", "bf16", NQ * D, scale=0.1), Buf("K", "bf16", NK * D),
         Buf("V", "bf16", NK * D), Buf("DO", "bf16", NQ * D), Buf("LSE", "fp32", NQ),
         Buf("DELTA", "fp32", NQ), Out("DK", "bf16", NK * D), Out("DV", "bf16", NK * D),
         Scalar("stride_tok", D), Scalar("n_q", NQ)],
        {"BM": 64, "BN": 64, "D": D}, num_warps=4, num_stages=3,
        tol={"bf16": (3e-2, 3e-2)}, ref=bwd_kv), Case(
        # 2 programs over 4 key blocks: each program's K and V buffer is
        # filled twice
        "attention backward, key blocks walked by each program, K and V reloaded for each",
        "attention_bwd_kv.py", "dkdv_kv_blocks", (2,),
        [Buf("Q", "bf16", NQ * D, scale=0.1), Buf("K", "bf16", 2 * NK * D),
         Buf("V", "bf16", 2 * NK * D), Buf("DO", "bf16", NQ * D), Buf("LSE", "fp32", NQ),
         Buf("DELTA", "fp32", NQ), Out("DK", "bf16", 2 * NK * D), Out("DV", "bf16", 2 * NK * D),
         Scalar("stride_tok", D), Scalar("n_q", NQ), Scalar("n_kb", 2 * NK // 64)],
        {"BM": 64, "BN": 64, "D": D}, num_warps=4, num_stages=3,
        tol={"bf16": (3e-2, 3e-2)}, ref=bwd_kv)]


def chunk_state(v, c, s):
    """h before chunk i (every NTS-th): the sum over earlier rows t of
    k_t^T (v_t exp(G_i - g_t)) with G_i the last gate of the chunk before
    i, each chunk decayed as the kernel does; v scaled and rounded to bf16
    as the kernel rounds it before its dot."""
    H, K, V, BT, NTS = c["H"], c["K"], c["V"], c["BT"], c["NTS"]
    T = s["T"]
    k, vv = v["k"].reshape(T, H, K), v["v"].reshape(T, H, V)
    g = v["g"].reshape(T, H) if c["USE_G"] else np.zeros((T, H))
    n_t = -(-T // BT)
    n_s = -(-n_t // NTS)
    out = np.zeros((H, n_s, K, V))
    for i_h in range(H):
        st = np.zeros((K, V))
        for i_t in range(n_t):
            if i_t % NTS == 0:
                out[i_h, i_t // NTS] = st
            rows = slice(i_t * BT, min((i_t + 1) * BT, T))
            gl = g[rows.stop - 1, i_h]
            st = st * np.exp(gl) + k[rows, i_h].T @ _bf16(vv[rows, i_h] * np.exp(gl - g[rows, i_h])[:, None])
    if c["V_FIRST"]:
        out = out.transpose(0, 1, 3, 2)
    return {"h": out.ravel()}


def chunk_state_cases():
    H, K, V, BT, T = 2, 64, 64, 64, 300
    n_t = -(-T // BT)
    out = []
    for nts, v_first, use_g in ((2, True, False), (1, False, True), (3, True, True)):
        n_s = -(-n_t // nts)
        out.append(Case(
            f"chunked state scan, stored every {nts} chunks{', as [V, K]' if v_first else ''}"
            f"{', gated' if use_g else ''}",
            "chunk_state.py", "chunk_state_fwd", (H,),
            [Buf("k", "bf16", T * H * K, scale=0.2), Buf("v", "bf16", T * H * V),
             Buf("g", "fp32", T * H, lambda rng, n: -0.05 * rng.random(n)),
             Out("h", "fp32", H * n_s * K * V), Scalar("T", T)],
            {"H": H, "K": K, "V": V, "BT": BT, "NTS": nts, "V_FIRST": v_first, "USE_G": use_g},
            num_warps=4, num_stages=2, tol={"fp32": (2e-2, 2e-2)}, ref=chunk_state))
    return out


def gqa_group(v, c, s):
    G, D = c["G"], c["D"]
    n, kvh = s["seq_len"], s["stride_kt"] // D
    q = v["q"].reshape(kvh, G, D)
    k, vv = (v[x].reshape(-1, kvh, D)[:n] for x in ("k", "v"))
    out = np.zeros((kvh, G, D))
    for h in range(kvh):
        sc = q[h] @ k[:, h].T * s["sm_scale"]
        e = np.exp(sc - sc.max(axis=1, keepdims=True))
        out[h] = e @ vv[:, h] / e.sum(axis=1, keepdims=True)
    return {"o": out.ravel()}


def gqa_group_cases():
    KVH, D, N = 4, 64, 200
    out = []
    for g, dt in ((2, "fp16"), (4, "bf16"), (8, "fp16")):
        out.append(Case(
            f"decode attention, a GQA group of {g} query heads as the rows of its dots ({dt})",
            "gqa_small_group.py", "gqa_group_decode", (KVH,),
            [Buf("q", dt, KVH * g * D), Buf("k", dt, N * KVH * D), Buf("v", dt, N * KVH * D),
             Out("o", dt, KVH * g * D), Scalar("seq_len", N), Scalar("sm_scale", D ** -0.5, "fp32"),
             Scalar("stride_qh", D), Scalar("stride_kt", KVH * D), Scalar("stride_kh", D)],
            {"G": g, "D": D, "BN": 64}, num_warps=4, num_stages=2,
            tol={"fp16": (1e-2, 1e-2), "bf16": (3e-2, 3e-2)}, ref=gqa_group))
    return out
