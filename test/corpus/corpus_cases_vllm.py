"""Cases of the vLLM-style serving kernels (vllm_style.py) and their float64
numpy references; each reference takes (v, c, s) as corpus_refs.py
describes."""
import numpy as np

from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_cases_flaggems import _bf16, _f16, _f32
from corpus_cases_quant import _finite_codes, fp8_encode, fp8_table
from corpus_refs import sigmoid

F = "vllm_style.py"


def _ints(xs):
    return lambda rng, n: np.array(list(xs)[:n], dtype=np.int64)


def _vals(xs):
    return lambda rng, n: np.array(list(xs)[:n], dtype=np.float64)


def _distinct(hi):
    return lambda rng, n: rng.choice(hi, n, replace=False)


def _round(x, dtype):
    return {"fp16": _f16, "bf16": _bf16, "fp32": _f32}[dtype](x)


def _cdiv(a, b):
    return -(-a // b)


def _softmax_out(logits, values, sink=None):
    """softmax(logits) @ values, a sink logit joining the normaliser only."""
    m = logits.max() if sink is None else max(logits.max(), sink)
    e = np.exp(logits - m)
    denom = e.sum() + (0.0 if sink is None else np.exp(sink - m))
    return e @ values / denom


# ---- attention ------------------------------------------------------------------------------


def unified_attention(v, c, s):
    H, G, D, BS = c["NUM_Q_HEADS"], c["Q_PER_KV"], c["HEAD_SIZE"], c["BLOCK_SIZE"]
    n, W = s["num_seqs"], c["SLIDING_WINDOW"]
    cu, lens = v["cu_seqlens_q"].astype(np.int64), v["seq_lens"].astype(np.int64)
    q = v["q"].reshape(-1, H, D)
    kc = v["k_cache"].reshape(-1, BS, H // G, D)
    vc = v["v_cache"].reshape(-1, BS, H // G, D)
    table = v["block_table"].reshape(n, -1).astype(np.int64)
    out = v["out"].reshape(-1, H, D).copy()
    for b in range(n):
        ql, L = cu[b + 1] - cu[b], lens[b]
        ctx = L - ql
        keys = np.arange(L)
        pages, slots = table[b, keys // BS], keys % BS
        for h in range(H):
            K, V = kc[pages, slots, h // G], vc[pages, slots, h // G]
            for i in range(ql):
                qp = ctx + i
                sc = s["scale"] * (K[:qp + 1] @ q[cu[b] + i, h])
                if c["USE_SOFTCAP"]:
                    sc = s["softcap"] * np.tanh(sc / s["softcap"])
                j = keys[:qp + 1]
                if c["USE_ALIBI"]:
                    sc = sc + v["alibi_slopes"][h] * (j - ctx)
                keep = (qp - j < W) if W > 0 else np.ones(j.size, bool)
                sink = v["sinks"][h] if c["USE_SINKS"] else None
                out[cu[b] + i, h] = _softmax_out(sc[keep], V[:qp + 1][keep], sink)
    return {"out": out.ravel()}


def reduce_segments(v, c, s):
    H, D, DP, NS, T = c["NUM_Q_HEADS"], c["HEAD_SIZE"], c["HEAD_SIZE_PADDED"], c["NUM_SEGMENTS"], c["TILE_SIZE"]
    cu, lens = v["cu_seqlens_q"].astype(np.int64), v["seq_lens"].astype(np.int64)
    mx = v["segm_max"].reshape(-1, H, NS)
    es = v["segm_expsum"].reshape(-1, H, NS)
    so = v["segm_out"].reshape(-1, H, NS, DP)
    out = v["out"].reshape(-1, H, D).copy()
    for t in range(out.shape[0]):
        b = np.searchsorted(cu[:s["num_seqs"]], t, side="right") - 1
        tps = _cdiv(lens[b], NS * T)
        act = _cdiv(lens[b], tps * T)
        for h in range(H):
            m = mx[t, h, :act]
            w = np.exp(m - m.max())
            total = (es[t, h, :act] * w).sum()
            acc = (w[:, None] * so[t, h, :act, :D]).sum(0)
            acc = np.zeros(D) if total == 0 else acc / total
            if c["USE_FP8"]:
                acc = np.clip(acc * v["out_scale_inv"][0], -448.0, 448.0)
            out[t, h] = acc
    return {"out": out.ravel()}


def paged_decode_x(v, c, s):
    G, D, BS, X, W = c["Q_PER_KV"], c["HEAD_SIZE"], c["BLOCK_SIZE"], c["X"], c["SLIDING_WINDOW"]
    H = s["num_q_heads"]
    cu, lens = v["cu_seqlens_q"].astype(np.int64), v["seq_lens"].astype(np.int64)
    n = lens.size
    q = v["q"].reshape(-1, H, D)
    kc, vc = v["k_cache"], v["v_cache"]
    if c["KV_FP8"]:
        tab = fp8_table(False)
        kc = _f16(_f32(tab[kc.astype(np.int64)]) * _f32(v["k_scale"][0]))
        vc = _f16(_f32(tab[vc.astype(np.int64)]) * _f32(v["v_scale"][0]))
    kc = kc.reshape(-1, H // G, D // X, BS, X)
    vc = vc.reshape(-1, H // G, D, BS)
    table = v["block_table"].reshape(n, -1).astype(np.int64)
    out = v["out"].reshape(-1, H, D).copy()
    for b in range(n):
        if c["FILTER_BY_QUERY_LEN"]:
            if cu[b + 1] - cu[b] > 1:
                continue
            tok = cu[b]
        else:
            tok = b
        L = lens[b]
        keys = np.arange(L)
        pages, slots = table[b, keys // BS], keys % BS
        for h in range(H):
            kvh = h // G
            K = kc[pages, kvh][np.arange(L), :, slots].reshape(L, D)
            V = vc[pages, kvh][np.arange(L), :, slots]
            sc = s["scale"] * (K @ q[tok, h])
            keep = (L - 1 - keys < W) if W > 0 else np.ones(L, bool)
            out[tok, h] = _softmax_out(sc[keep], V[keep])
    return {"out": out.ravel()}


_MERGE_T, _MERGE_H = 5, 3


def _merge_lse(inf_at, ninf_at):
    """log-sum-exps with an empty partial's +inf (and a -inf) among them."""
    def init(rng, n):
        x = rng.standard_normal(n) * 2.0
        x[list(inf_at)] = np.inf
        x[list(ninf_at)] = -np.inf
        return x
    return init


def prefix_prefill(v, c, s):
    D, BS, X, W = c["BLOCK_DMODEL"], c["BLOCK_SIZE"], c["x"], c["SLIDING_WINDOW"]
    G, H = s["num_queries_per_kv"], s["stride_qbs"] // s["stride_qh"]
    KVH = H // G
    cu, lens = v["B_Start_Loc"].astype(np.int64), v["B_Seqlen"].astype(np.int64)
    n = lens.size
    q = v["Q"].reshape(-1, H, D)
    kn, vn = v["K"].reshape(-1, KVH, D), v["V"].reshape(-1, KVH, D)
    kc = v["K_cache"].reshape(-1, KVH, D // X, BS, X)
    vc = v["V_cache"].reshape(-1, KVH, D, BS)
    table = v["B_Loc"].reshape(n, -1).astype(np.int64)
    out = v["Out"].reshape(-1, H, D).copy()
    for b in range(n):
        ql = cu[b + 1] - cu[b]
        ctx = lens[b] - ql
        if c["SKIP_DECODE"] and ql == 1:
            continue
        j = np.arange(ctx)
        pages, slots = table[b, j // BS], j % BS
        for h in range(H):
            kvh = h // G
            K = np.concatenate([kc[pages, kvh][j, :, slots].reshape(ctx, D), kn[cu[b]:cu[b + 1], kvh]])
            V = np.concatenate([vc[pages, kvh][j, :, slots], vn[cu[b]:cu[b + 1], kvh]])
            for i in range(ql):
                qp = ctx + i
                sc = s["sm_scale"] * (K[:qp + 1] @ q[cu[b] + i, h])
                keep = (qp - np.arange(qp + 1) < W) if W > 0 else np.ones(qp + 1, bool)
                out[cu[b] + i, h] = _softmax_out(sc[keep], V[:qp + 1][keep])
    return {"Out": out.ravel()}


def merge_states(v, c, s):
    T, H, D = _MERGE_T, _MERGE_H, c["HEAD_SIZE"]
    p, q = v["prefix_lse"].copy(), v["suffix_lse"].copy()
    p[p == np.inf] = -np.inf
    q[q == np.inf] = -np.inf
    m = np.maximum(p, q)
    pe, qe = np.exp(p - m), np.exp(q - m)
    tot = pe + qe
    pw, qw = (pe / tot).reshape(H, T).T, (qe / tot).reshape(H, T).T
    po = v["prefix_output"].reshape(T, H, D)
    so = v["suffix_output"].reshape(T, H, D)
    res = {"output": (po * pw[..., None] + so * qw[..., None]).ravel()}
    if c["OUTPUT_LSE"]:
        res["output_lse"] = np.log(tot) + m
    return res


# ---- KV cache -------------------------------------------------------------------------------


def reshape_and_cache(v, c, s):
    HD = c["num_heads"] * c["head_size"]
    slots = v["slot_mapping"].astype(np.int64)
    res = {}
    for name, src, stride, sc in (("key_cache", "key", s["key_stride"], "k_scale"),
                                  ("value_cache", "value", s["value_stride"], "v_scale")):
        cache = v[name].copy()
        x = v[src].reshape(-1, stride)[:, :HD]
        for t, slot in enumerate(slots):
            if slot < 0:
                continue
            b, o = slot // c["block_size"], slot % c["block_size"]
            dst = b * s["block_stride"] + o * s["page_stride"]
            if c["FP8_KV_CACHE"]:
                cache[dst:dst + HD] = fp8_encode(_f32(_f32(x[t]) / _f32(v[sc][0])), False)
            else:
                cache[dst:dst + HD] = x[t]
        res[name] = cache
    return res


# ---- LoRA -----------------------------------------------------------------------------------

# the adapter of each of 20 tokens (-1: none) and the tables the host derives from it
_MAPPING = np.array([0, 2, -1, 3, 0, 0, 2, 3, -1, 0, 3, 2, 2, 0, 3, 0, -1, 2, 0, 3])
_LORA_IDS = np.unique(_MAPPING)
_COUNTS = np.array([(_MAPPING == i).sum() for i in _LORA_IDS])
_STARTS = np.concatenate([[0], np.cumsum(_COUNTS)])
_SORTED = np.argsort(_MAPPING, kind="stable")
_NUM_LORAS = 4


def _lora_tables():
    return [Buf("token_indices_sorted_by_lora_ids", "i32", _SORTED.size, _ints(_SORTED)),
            Buf("num_tokens_per_lora", "i32", _COUNTS.size, _ints(_COUNTS)),
            Buf("lora_token_start_loc", "i32", _STARTS.size, _ints(_STARTS)),
            Buf("lora_ids", "i32", _LORA_IDS.size, _ints(_LORA_IDS))]


def lora_shrink(v, c, s):
    S, M, N, K = c["SLICE_NUM"], s["M"], s["N"], s["K"]
    x = v["input"].reshape(M, K)
    w = v["lora"].reshape(S, _NUM_LORAS, N, K)
    out = v["out"].reshape(S, M, N).copy()
    for t in range(M):
        if _MAPPING[t] >= 0:
            out[:, t] = s["scaling"] * np.einsum("snk,k->sn", w[:, _MAPPING[t]], x[t])
    return {"out": out.ravel()}


def lora_expand(dt):
    return lambda v, c, s: _lora_expand(v, c, s, dt)


def _lora_expand(v, c, s, dt):
    S, M, K = c["SLICE_NUM"], s["M"], s["K"]
    if c["SAME_STRIDE"]:
        sizes, starts, offsets = [s["N"]] * S, [s["slice_start_loc"]] * S, [0]
    else:
        sizes = v["output_hs"].astype(np.int64)
        starts = v["slice_start_loc"].astype(np.int64)
        offsets = v["lora_slice_offsets"].astype(np.int64)
    x = v["input"].reshape(S, M, K)
    if c["CAST_TYPE"]:
        x = _round(x, "fp16")
    out = v["out"].reshape(M, -1).copy()
    for sl in range(S):
        n, st = sizes[sl], starts[sl]
        w = v["lora"][offsets[sl]:offsets[sl] + _NUM_LORAS * n * K].reshape(_NUM_LORAS, n, K)
        for t in range(M):
            if _MAPPING[t] < 0:
                continue
            y = _round(w[_MAPPING[t]] @ x[sl, t], dt)
            if c["ADD_INPUTS"]:
                y = y + out[t, st:st + n]
            out[t, st:st + n] = y
    return {"out": out.ravel()}


# ---- speculative decoding ---------------------------------------------------------------------

_NUM_DRAFT = np.array([3, 0, 4, 2])
_CU_DRAFT = np.cumsum(_NUM_DRAFT)
_VOCAB = 100


def _spec_tokens():
    """Draft tokens and the target's argmax: the first request rejects at its
    second token, the third accepts all four, the last rejects at its first."""
    g = np.random.default_rng(7)
    draft = g.integers(0, _VOCAB, _CU_DRAFT[-1])
    target = draft.copy()
    target[1] = (draft[1] + 1) % _VOCAB
    target[7] = (draft[7] + 5) % _VOCAB
    return draft, target


def _logits_with_masked(rng, n):
    """Logits, a few already masked to -inf (as a grammar bitmask leaves them)."""
    x = rng.standard_normal(n) * 2.0
    x[[600, 611, 2060, 2300, 2301]] = -np.inf
    return x


def topk_topp(v, c, s):
    V, B, st = c["VOCAB_SIZE"], s["batch_size"], s["logits_stride"]
    out = v["logits"].reshape(-1, st).copy()
    for r in range(B):
        row = out[r, :V].copy()
        pivot = -np.inf
        if c["TOPK_ENABLED"]:
            k = int(v["k"][r])
            if k < np.isfinite(row).sum():
                pivot = np.sort(row)[::-1][k - 1]
        if c["TOPP_ENABLED"]:
            kept = np.sort(row[row >= pivot])[::-1]
            e = np.exp(kept - row.max())
            cums = np.cumsum(e) / e.sum()
            pivot = max(pivot, kept[np.argmax(cums >= v["p"][r])])
        out[r, :V] = np.where(row >= pivot, row, -np.inf)
    return {"logits": out.ravel()}


def rejection_greedy(v, c, s):
    out = v["output_token_ids"].reshape(_NUM_DRAFT.size, -1).copy()
    draft, target = v["draft_token_ids"], v["target_argmax"]
    greedy = v["is_greedy"] if "is_greedy" in v else np.ones(_NUM_DRAFT.size)
    for r, n in enumerate(_NUM_DRAFT):
        if not greedy[r]:
            continue
        st = _CU_DRAFT[r] - n
        rejected = False
        for p in range(n):
            out[r, p] = target[st + p]
            if draft[st + p] != target[st + p]:
                rejected = True
                break
        if not rejected:
            out[r, n] = v["bonus_token_ids"][r]
    return {"output_token_ids": out.ravel()}


def rejection_random(v, c, s):
    V = s["vocab_size"]
    out = v["output_token_ids"].reshape(_NUM_DRAFT.size, -1).copy()
    draft = v["draft_token_ids"].astype(np.int64)
    tp = v["target_probs"].reshape(-1, V)
    for r, n in enumerate(_NUM_DRAFT):
        if v["is_greedy"][r]:
            continue
        st = _CU_DRAFT[r] - n
        rejected = False
        for p in range(n):
            i = st + p
            dp = np.float32(1.0) if c["IS_NGRAM"] else np.float32(v["draft_probs"].reshape(-1, V)[i, draft[i]])
            if dp > 0 and np.float32(tp[i, draft[i]]) / dp >= np.float32(v["uniform_probs"][i]):
                out[r, p] = draft[i]
            else:
                out[r, p] = v["recovered_token_ids"][i]
                rejected = True
                break
        if not rejected:
            out[r, n] = v["bonus_token_ids"][r]
    return {"output_token_ids": out.ravel()}


def recovered_tokens(v, c, s):
    V = s["vocab_size"]
    tp = v["target_probs"].reshape(-1, V)
    q = v["q"].reshape(-1, V)
    out = v["output_token_ids"].copy()
    for r, n in enumerate(_NUM_DRAFT):
        for p in range(n):
            i = _CU_DRAFT[r] - n + p
            if c["IS_NGRAM"]:
                prob = tp[i].copy()
                prob[int(v["draft_token_ids"][i])] = 0.0
            else:
                prob = np.maximum(tp[i] - v["draft_probs"].reshape(-1, V)[i], 0.0)
            out[i] = np.argmax(_f32(_f32(prob) / _f32(q[r])))
    res = {"output_token_ids": out}
    if c["IS_NGRAM"]:
        res["target_probs"] = v["target_probs"]
    return res


def expand_per_request(v, c, s):
    out = v["output"].copy()
    vals = np.where(v["input"] == s["replace_from"], s["replace_to"], v["input"])
    for r, n in enumerate(_NUM_DRAFT):
        out[_CU_DRAFT[r] - n:_CU_DRAFT[r]] = vals[r]
    return {"output": out}


def eagle_next_token(v, c, s):
    G, st = s["max_gen_len"], s["sampled_stride"]
    ids = v["sampled_token_ids"].reshape(-1, st)[:, :G]
    nxt, cnt = v["next_token_ids"].copy(), v["valid_count"].copy()
    for r in range(ids.shape[0]):
        valid = (ids[r] != -1) & (ids[r] < s["vocab_size"])
        cnt[r] = valid.sum()
        nxt[r] = ids[r, np.flatnonzero(valid)[-1]] if valid.any() else v["backup_next_token_ids"][r]
    return {"next_token_ids": nxt, "valid_count": cnt}


def prepare_eagle_input(v, c, s):
    out = v["out"].copy()
    cu, cq = v["cu_num_tokens"].astype(np.int64), v["cu_query_lens"].astype(np.int64)
    for r in range(cu.size - 1):
        out[cu[r]:cu[r + 1]] = cq[r] + np.arange(cu[r + 1] - cu[r])
    return {"out": out}


# ---- batch-invariant ops ----------------------------------------------------------------------


def _strided(x, rows, cols, srow, scol):
    return np.lib.stride_tricks.as_strided(x, (rows, cols), (srow * 8, scol * 8))


def matmul_persistent(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    a = _strided(v["a"], M, K, s["stride_am"], s["stride_ak"])
    b = _strided(v["b"], K, N, s["stride_bk"], s["stride_bn"])
    y = a @ b
    if c["HAS_BIAS"]:
        y = y + v["bias"][None, :N]
    return {"c": y.ravel()}


def log_softmax(v, c, s):
    n = s["n_cols"]
    x = v["input"].reshape(-1, s["input_row_stride"])[:, :n]
    y = x - x.max(1, keepdims=True)
    y = y - np.log(np.exp(y).sum(1, keepdims=True))
    out = v["output"].reshape(-1, s["output_row_stride"]).copy()
    out[:, :n] = y
    return {"output": out.ravel()}


def rms_norm(dt):
    def ref(v, c, s):
        n = s["n_cols"]
        x = v["input"].reshape(-1, s["input_row_stride"])[:, :n]
        y = x / np.sqrt((x * x).mean(1, keepdims=True) + s["eps"]) * v["weight"][None, :n]
        out = v["output"].reshape(-1, s["output_row_stride"]).copy()
        out[:, :n] = _round(y, dt)
        return {"output": out.ravel()}
    return ref


def mean_dim(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    x = np.lib.stride_tricks.as_strided(
        v["input"], (M, N, K), (s["input_stride0"] * 8, s["input_stride1"] * 8, s["input_stride2"] * 8))
    out = v["output"].copy()
    idx = np.arange(M)[:, None] * s["output_stride0"] + np.arange(K)[None, :] * s["output_stride1"]
    out[idx] = x.mean(1)
    return {"output": out}


# ---- quantised GEMMs ----------------------------------------------------------------------------


def scaled_mm(dt):
    return lambda v, c, s: _scaled_mm(v, c, s, dt)


def _scaled_mm(v, c, s, dt):
    M, N, K = s["M"], s["N"], s["K"]
    a = _strided(v["a"], M, K, s["stride_am"], s["stride_ak"])
    b = _strided(v["b"], K, N, s["stride_bk"], s["stride_bn"])
    sa = v["scale_a"] if c["BLOCK_SIZE_SCALE_A"] > 1 else np.full(M, v["scale_a"][0])
    sb = v["scale_b"] if c["BLOCK_SIZE_SCALE_B"] > 1 else np.full(N, v["scale_b"][0])
    y = sb[None, :] * (sa[:, None] * (a @ b))
    y = _round(y, dt)
    if "bias" in v:
        y = _round(y + v["bias"][None, :], dt)
    return {"c": y.ravel()}


def _moe_routing(T, E, topk, BM, local_off):
    """(sorted slot ids padded per expert with the sentinel T * topk, the
    expert of each block, -1 for an expert held elsewhere)."""
    g = np.random.default_rng(5)
    ids = np.concatenate([g.choice(E, topk, replace=False) for _ in range(T)])
    sorted_ids, experts = [], []
    for e in range(E):
        slots = np.flatnonzero(ids == e)
        nb = _cdiv(slots.size, BM)
        sorted_ids += list(slots) + [T * topk] * (nb * BM - slots.size)
        experts += [-1 if e == local_off else e] * nb
    return np.array(sorted_ids), np.array(experts)


def moe_wna16(dt):
    return lambda v, c, s: _moe_wna16(v, c, s, dt)


def _moe_wna16(v, c, s, dt):
    N, K, G, BM, top_k = c["N"], c["K"], c["group_size"], c["BLOCK_SIZE_M"], c["top_k"]
    E = v["b_scale"].size // (N * (K // G))
    a = v["a"].reshape(-1, K)
    scale = v["b_scale"].reshape(E, N, K // G)
    kk = np.arange(K)
    if c["use_int4_w4a16"]:
        packed = v["b"].reshape(E, N, K // 2).astype(np.int64)
        q = (packed[:, :, kk // 2] >> ((kk % 2) * 4)) & 0xF
        if c["has_zp"]:
            zp = v["b_zp"].reshape(E, N // 2, K // G).astype(np.int64)
            nn = np.arange(N)
            zp = (zp[:, nn // 2, :] >> ((nn % 2) * 4)[None, :, None]) & 0xF
            zp = zp[:, :, kk // G]
        else:
            zp = 8
    else:
        q = v["b"].reshape(E, N, K).astype(np.int64)
        zp = 128
    w = _round((q - zp) * scale[:, :, kk // G], dt)
    out = v["c"].reshape(-1, N).copy()
    sorted_ids = v["sorted_token_ids"].astype(np.int64)
    experts = v["expert_ids"].astype(np.int64)
    for blk, e in enumerate(experts):
        for slot in sorted_ids[blk * BM:(blk + 1) * BM]:
            if slot >= s["num_valid_tokens"]:
                continue
            if e < 0:
                out[slot] = 0.0
                continue
            y = w[e] @ a[slot // top_k]
            if c["MUL_ROUTED_WEIGHT"]:
                y = y * v["topk_weights"][slot]
            out[slot] = y
    return {"c": out.ravel()}


# ---- Mamba and rotary -----------------------------------------------------------------------


def selective_state_update(v, c, s):
    dim, ds = s["dim"], s["dstate"]
    nh = s["stride_x_batch"] // s["stride_x_head"]
    nb = v["x"].size // s["stride_x_batch"]
    ratio = s["nheads_ngroups_ratio"]
    x = v["x"].reshape(nb, nh, dim)
    if c["TIE_HDIM"]:
        dt = np.repeat(v["dt"].reshape(nb, nh)[:, :, None], dim, 2)
        A = np.broadcast_to(v["A"].reshape(nh)[:, None, None], (nh, dim, ds))
    else:
        dt = v["dt"].reshape(nb, nh, dim)
        A = v["A"].reshape(nh, dim, ds)
    if c["HAS_DT_BIAS"]:
        dt = dt + v["dt_bias"].reshape(nh, dim)[None]
    if c["DT_SOFTPLUS"]:
        dt = np.where(dt <= 20.0, np.log1p(np.exp(dt)), dt)
    ng = nh // ratio
    Bm, Cm = v["B"].reshape(nb, ng, ds), v["C"].reshape(nb, ng, ds)
    state_all = v["state"].reshape(-1, nh, dim, ds).copy()
    out = v["out"].reshape(nb, nh, dim).copy()
    for b in range(nb):
        slot = int(v["state_batch_indices"][b]) if c["HAS_STATE_BATCH_INDICES"] else b
        pad = c["HAS_STATE_BATCH_INDICES"] and slot == s["pad_slot_id"]
        for h in range(nh):
            st = np.zeros((dim, ds)) if pad else state_all[slot, h]
            dA = np.exp(A[h] * dt[b, h][:, None])
            new = st * dA + Bm[b, h // ratio][None, :] * dt[b, h][:, None] * x[b, h][:, None]
            if not pad:
                state_all[slot, h] = new
            y = (new * Cm[b, h // ratio][None, :]).sum(1)
            if c["HAS_D"]:
                y = y + x[b, h] * v["D"].reshape(nh, dim)[h]
            if c["HAS_Z"]:
                z = v["z"].reshape(nb, nh, dim)[b, h]
                y = y * z * sigmoid(z)
            out[b, h] = y
    return {"state": state_all.ravel(), "out": out.ravel()}


def gated_delta_rule(v, c, s):
    H, HV, K, V = c["H"], c["HV"], c["K"], c["V"]
    if c["IS_VARLEN"]:
        cu = v["cu_seqlens"].astype(np.int64)
    else:
        cu = np.arange(c["B"] + 1) * s["T"]
    total = cu[-1]
    q, k = v["q"].reshape(total, H, K), v["k"].reshape(total, H, K)
    vv, g = v["v"].reshape(total, HV, V), v["g"].reshape(total, HV)
    beta = v["beta"].reshape(total, HV, V) if c["IS_BETA_HEADWISE"] else v["beta"].reshape(total, HV, 1)
    o = v["o"].reshape(total, HV, V).copy()
    ht = v["ht"].reshape(-1, HV, K, V).copy()
    for n in range(cu.size - 1):
        slot = int(v["ssm_state_indices"][n]) if c["IS_CONTINUOUS_BATCHING"] else n
        for hv in range(HV):
            h = hv // (HV // H)
            st = v["h0"].reshape(-1, HV, K, V)[slot, hv].copy() if c["USE_INITIAL_STATE"] else np.zeros((K, V))
            for t in range(cu[n], cu[n + 1]):
                bq, bk = q[t, h], k[t, h]
                if c["USE_QK_L2NORM_IN_KERNEL"]:
                    bq = bq / np.sqrt((bq * bq).sum() + 1e-6)
                    bk = bk / np.sqrt((bk * bk).sum() + 1e-6)
                st = st * np.exp(g[t, hv])
                dv = (vv[t, hv] - bk @ st) * beta[t, hv]
                st = st + np.outer(bk, dv)
                o[t, hv] = (bq * s["scale"]) @ st
            if c["STORE_FINAL_STATE"]:
                ht[slot, hv] = st
    return {"o": o.ravel(), "ht": ht.ravel()}


def mrope(v, c, s):
    T, hd, half = s["num_tokens"], c["hd"], c["rd"] // 2
    f = np.arange(half)
    if c["is_interleaved"]:
        hm = (f % 3 == 1) & (f <= 3 * c["mrope_section_h"])
        wm = (f % 3 == 2) & (f <= 3 * c["mrope_section_w"])
        tm = ~(hm | wm)
    else:
        tm = f < c["mrope_section_t"]
        hm = (f >= c["mrope_section_t"]) & (f < c["mrope_section_t"] + c["mrope_section_h"])
        wm = f >= c["mrope_section_t"] + c["mrope_section_h"]
    row = np.where(tm, 0, np.where(hm, 1, 2))
    cs, sn = v["cos"].reshape(3, T, half), v["sin"].reshape(3, T, half)
    cos, sin = cs[row, :, f].T, sn[row, :, f].T  # [T, half]
    res = {}
    for name, nh in (("q", c["n_qh"]), ("k", c["n_kh"])):
        x = v[name].reshape(T, nh, hd).copy()
        x1, x2 = x[:, :, :half].copy(), x[:, :, half:2 * half].copy()
        x[:, :, :half] = x1 * cos[:, None] - x2 * sin[:, None]
        x[:, :, half:2 * half] = x2 * cos[:, None] + x1 * sin[:, None]
        res[name] = x.ravel()
    return res


# ---- cases ----------------------------------------------------------------------------------


def _e4m3_moderate(rng, n):
    """e4m3 codes of either sign with magnitudes from 1/8 to 15."""
    return rng.integers(0x20, 0x58, n) | (rng.integers(0, 2, n) << 7)


def _attention_cases():
    out = []
    # three sequences: 5 new tokens after 20 cached, 1 after 33, 12 with no context
    QL, CTX = [5, 1, 12], [20, 33, 0]
    cu = np.concatenate([[0], np.cumsum(QL)])
    lens = np.array(QL) + np.array(CTX)
    T, H, KVH, D, DP, BS, NB, MAXB = cu[-1], 4, 2, 40, 64, 16, 12, 4
    G = H // KVH
    kv_n = NB * BS * KVH * D
    for name, dt, tile, extra in (("fp16 causal", "fp16", 32, {}),
                                  ("bf16, window, softcap, sinks, alibi", "bf16", 16,
                                   {"SLIDING_WINDOW": 8, "USE_SOFTCAP": True, "USE_SINKS": True,
                                    "USE_ALIBI": True})):
        consts = {"NUM_Q_HEADS": H, "Q_PER_KV": G, "k_stride_3": 1, "v_stride_3": 1, "BLOCK_SIZE": BS,
                  "TILE_SIZE": tile, "HEAD_SIZE": D, "HEAD_SIZE_PADDED": DP, "BLOCK_Q": 16 // G,
                  "BLOCK_M": 16, "SLIDING_WINDOW": 0, "USE_SOFTCAP": False, "USE_SINKS": False,
                  "USE_ALIBI": False, **extra}
        sinks = Buf("sinks", "fp32", H) if consts["USE_SINKS"] else Null("sinks_ptr")
        alibi = (Buf("alibi_slopes", "fp32", H, _vals([0.5, 0.25, 0.125, 0.0625]))
                 if consts["USE_ALIBI"] else Null("alibi_slopes_ptr"))
        out.append(Case(f"vllm unified attention over a block table, {name}", F, "_vl_unified_attention_2d",
                        (T // consts["BLOCK_Q"] + 3, KVH),
                        [Out("out", dt, T * H * D), Buf("q", dt, T * H * D), Buf("k_cache", dt, kv_n),
                         Buf("v_cache", dt, kv_n), sinks, Buf("block_table", "i32", 3 * MAXB, _distinct(NB)),
                         Buf("seq_lens", "i32", 3, _ints(lens)), alibi, Buf("cu_seqlens_q", "i32", 4, _ints(cu)),
                         Scalar("scale", D ** -0.5, "fp32"), Scalar("softcap", 5.0 if extra else 0.0, "fp32"),
                         Scalar("num_seqs", 3), Scalar("block_table_stride", MAXB, "i64"),
                         Scalar("q_stride_0", H * D, "i64"), Scalar("q_stride_1", D, "i64"),
                         Scalar("o_stride_0", H * D, "i64"), Scalar("o_stride_1", D, "i64"),
                         Scalar("k_stride_0", BS * KVH * D, "i64"), Scalar("k_stride_1", KVH * D, "i64"),
                         Scalar("k_stride_2", D, "i64"), Scalar("v_stride_0", BS * KVH * D, "i64"),
                         Scalar("v_stride_1", KVH * D, "i64"), Scalar("v_stride_2", D, "i64")],
                        consts, ref=unified_attention))

    # split-KV segments of 6 tokens in two sequences of 40 and 20 keys
    T, H, D, DP, NS = 6, 2, 24, 32, 4

    def _sums(rng, n):  # one (token, head) whose partials are all empty
        x = rng.random(n)
        x[(3 * H + 1) * NS:(3 * H + 2) * NS] = 0.0
        return x

    for fp8 in (False, True):
        out.append(Case(f"vllm reduce split-KV segments{', fp8 clamp' if fp8 else ''}", F, "_vl_reduce_segments",
                        (T, H),
                        [Out("out", "fp32" if fp8 else "fp16", T * H * D),
                         Buf("segm_out", "fp32", T * H * NS * DP, scale=600.0 if fp8 else 1.0),
                         Buf("segm_max", "fp32", T * H * NS, scale=2.0), Buf("segm_expsum", "fp32", T * H * NS, _sums),
                         Buf("seq_lens", "i32", 2, _ints([40, 20])), Buf("cu_seqlens_q", "i32", 3, _ints([0, 2, 6])),
                         Buf("out_scale_inv", "fp32", 1, ("fill", 1.5)), Scalar("num_seqs", 2),
                         Scalar("o_stride_0", H * D, "i64"), Scalar("o_stride_1", D, "i64")],
                        {"NUM_Q_HEADS": H, "TILE_SIZE": 16, "HEAD_SIZE": D, "HEAD_SIZE_PADDED": DP, "BLOCK_Q": 8,
                         "NUM_SEGMENTS": NS, "USE_FP8": fp8}, ref=reduce_segments))

    # decode over a key cache in x-wide chunks: [blocks, kv heads, D / X, block, X]
    H, KVH, D, DP, BS, NB, MAXB = 6, 2, 48, 64, 16, 16, 4
    lens = [37, 20, 16, 50]
    for fp8, cu, X, W in ((False, [0, 1, 4, 5, 6], 8, 0), (True, None, 16, 20)):
        T = cu[-1] if cu else 4
        kv_dt, kv_init = ("u8", _e4m3_moderate) if fp8 else ("fp16", "randn")
        kv_n = NB * KVH * D * BS
        out.append(Case(f"vllm paged decode, x-split key cache{', fp8 with scales, window' if fp8 else ''}", F,
                        "_vl_paged_decode_x_layout", (4, KVH),
                        [Out("out", "fp16", T * H * D), Buf("q", "fp16", T * H * D), Buf("k_cache", kv_dt, kv_n, kv_init),
                         Buf("v_cache", kv_dt, kv_n, kv_init), Buf("block_table", "i32", 4 * MAXB, _distinct(NB)),
                         Buf("seq_lens", "i32", 4, _ints(lens)),
                         Buf("cu_seqlens_q", "i32", 5, _ints(cu)) if cu else Buf("cu_seqlens_q", "i32", 5, "arange"),
                         Buf("k_scale", "fp32", 1, ("fill", 0.1)), Buf("v_scale", "fp32", 1, ("fill", 0.2)),
                         Scalar("scale", D ** -0.5, "fp32"), Scalar("num_q_heads", H),
                         Scalar("block_table_stride", MAXB, "i64"), Scalar("q_stride_0", H * D, "i64"),
                         Scalar("q_stride_1", D, "i64"), Scalar("o_stride_0", H * D, "i64"),
                         Scalar("o_stride_1", D, "i64"), Scalar("k_stride_0", KVH * D * BS, "i64"),
                         Scalar("k_stride_1", D * BS, "i64"), Scalar("k_stride_2", BS * X, "i64"),
                         Scalar("k_stride_3", X, "i64"), Scalar("v_stride_0", KVH * D * BS, "i64"),
                         Scalar("v_stride_1", D * BS, "i64"), Scalar("v_stride_2", BS, "i64")],
                        {"k_stride_4": 1, "v_stride_3": 1, "Q_PER_KV": H // KVH, "Q_PER_KV_PADDED": 16,
                         "BLOCK_SIZE": BS, "HEAD_SIZE": D, "HEAD_SIZE_PADDED": DP, "X": X, "SLIDING_WINDOW": W,
                         "FILTER_BY_QUERY_LEN": cu is not None, "KV_FP8": fp8}, ref=paged_decode_x))

    # prefix prefill: 7 new tokens after 19 cached, 1 after 30, 20 after 5
    QL, CTX = [7, 1, 20], [19, 30, 5]
    cu = np.concatenate([[0], np.cumsum(QL)])
    lens = np.array(QL) + np.array(CTX)
    T, H, KVH, D, DP, BS, NB, MAXB = cu[-1], 4, 2, 40, 64, 16, 8, 2
    for dt, X, prec, W, skip in (("fp32", 4, "ieee", 0, False), ("fp16", 8, None, 12, True)):
        kv_n = NB * KVH * D * BS
        out.append(Case(f"vllm prefix prefill over a paged context, {dt}" +
                        (", IEEE dots" if prec else f", window {W}, decode rows skipped"), F, "_vl_prefix_prefill",
                        (3, H, 2),
                        [Buf("Q", dt, T * H * D), Buf("K", dt, T * KVH * D), Buf("V", dt, T * KVH * D),
                         Buf("K_cache", dt, kv_n), Buf("V_cache", dt, kv_n),
                         Buf("B_Loc", "i32", 3 * MAXB, _distinct(NB)), Scalar("sm_scale", D ** -0.5, "fp32"),
                         Buf("B_Start_Loc", "i32", 4, _ints(cu)), Buf("B_Seqlen", "i32", 3, _ints(lens)),
                         Out("Out", dt, T * H * D), Scalar("stride_b_loc_b", MAXB), Scalar("stride_b_loc_s", 1),
                         Scalar("stride_qbs", H * D), Scalar("stride_qh", D), Scalar("stride_qd", 1),
                         Scalar("stride_kbs", KVH * D), Scalar("stride_kh", D), Scalar("stride_kd", 1),
                         Scalar("stride_vbs", KVH * D), Scalar("stride_vh", D), Scalar("stride_vd", 1),
                         Scalar("stride_obs", H * D), Scalar("stride_oh", D), Scalar("stride_od", 1),
                         Scalar("stride_k_cache_bs", KVH * D * BS), Scalar("stride_k_cache_h", D * BS),
                         Scalar("stride_k_cache_d", BS * X), Scalar("stride_k_cache_x", 1),
                         Scalar("stride_v_cache_bs", KVH * D * BS), Scalar("stride_v_cache_h", D * BS),
                         Scalar("stride_v_cache_d", BS), Scalar("stride_v_cache_bl", 1),
                         Scalar("num_queries_per_kv", H // KVH)],
                        {"x": X, "stride_k_cache_bl": X, "IN_PRECISION": prec, "BLOCK_M": 16, "BLOCK_DMODEL": D,
                         "BLOCK_DMODEL_PADDED": DP, "BLOCK_SIZE": BS, "BLOCK_N": 16, "SLIDING_WINDOW": W,
                         "SKIP_DECODE": skip}, ref=prefix_prefill))

    T, H, D = _MERGE_T, _MERGE_H, 48
    for dt, lse in (("fp32", True), ("bf16", False)):
        out.append(Case(f"vllm merge attention states, {dt}{', with lse' if lse else ''}", F,
                        "_vl_merge_attn_states", (T, H),
                        [Out("output", dt, T * H * D), Out("output_lse", "fp32", T * H) if lse else Null("output_lse"),
                         Buf("prefix_output", dt, T * H * D), Buf("prefix_lse", "fp32", T * H, _merge_lse([1, 9], [13])),
                         Buf("suffix_output", dt, T * H * D), Buf("suffix_lse", "fp32", T * H, _merge_lse([4], [7]))],
                        {"HEAD_SIZE": D, "PADDED_HEAD_SIZE": 64, "OUTPUT_LSE": lse}, ref=merge_states))
    return out


def _cache_and_lora_cases():
    out = []
    T, H, D, BS, NB = 7, 2, 24, 8, 4
    slots = [5, 17, -1, 0, 31, 12, 22]
    for fp8 in (False, True):
        src, cache = ("bf16", "u8") if fp8 else ("fp16", "fp16")
        init = _finite_codes(False) if fp8 else "randn"
        out.append(Case(f"vllm reshape_and_cache_flash{', fp8 with scales' if fp8 else ''}", F,
                        "_vl_reshape_and_cache_flash", (T, 2),
                        [Buf("key", src, T * 64), Buf("value", src, T * H * D),
                         Buf("key_cache", cache, NB * BS * H * D, init, out=True),
                         Buf("value_cache", cache, NB * BS * H * D, init, out=True),
                         Buf("slot_mapping", "i64", T, _ints(slots)), Buf("k_scale", "fp32", 1, ("fill", 0.05)),
                         Buf("v_scale", "fp32", 1, ("fill", 0.02)), Scalar("key_stride", 64, "i64"),
                         Scalar("value_stride", H * D, "i64"), Scalar("block_stride", BS * H * D, "i64"),
                         Scalar("page_stride", H * D, "i64")],
                        {"num_heads": H, "head_size": D, "block_size": BS, "FP8_KV_CACHE": fp8, "TILE_SIZE": 32},
                        ref=reshape_and_cache))

    M, L = _MAPPING.size, _LORA_IDS.size
    # shrink: two slices through the pointer table, split-K by atomics; one slice, even K
    for S, dt, N, K, BN, BK, SK, even in ((2, "fp16", 16, 72, 16, 16, 2, False), (1, "bf16", 32, 64, 16, 32, 1, True)):
        o = Buf("out", "fp32", S * M * N, "zeros", out=True) if SK > 1 else Out("out", "fp32", S * M * N)
        out.append(Case(f"vllm lora shrink, {S} slice{'s' if S > 1 else ''}, split-K {SK}", F, "_vl_lora_shrink",
                        (SK * _cdiv(M, 4) * _cdiv(N, BN), S, L),
                        [Buf("input", dt, M * K), Buf("lora", dt, S * _NUM_LORAS * N * K, scale=0.2), o,
                         Buf("lora_ptr_table", "i64", S, "zeros") if S > 1 else Null("lora_ptr_table"),
                         Scalar("M", M), Scalar("N", N), Scalar("K", K)] + _lora_tables() +
                        [Scalar("scaling", 0.5, "fp32"), Scalar("input_d0_stride", K), Scalar("input_d1_stride", 1),
                         Scalar("lora_slice_stride", _NUM_LORAS * N * K), Scalar("lora_d0_stride", N * K),
                         Scalar("lora_d1_stride", K), Scalar("lora_d2_stride", 1),
                         Scalar("output_d0_stride", M * N), Scalar("output_d1_stride", N),
                         Scalar("output_d2_stride", 1)],
                        {"BLOCK_M": 4, "BLOCK_N": BN, "BLOCK_K": BK, "EVEN_K": even, "SPLIT_K": SK,
                         "GROUP_SIZE_M": 2, "SLICE_NUM": S, "USE_GDC": False}, ref=lora_shrink))

    # expand: two slices of 48 and 32 columns with strides read from memory, added to the output
    K, sizes = 16, [48, 32]
    offs = [0, _NUM_LORAS * sizes[0] * K]
    out.append(Case("vllm lora expand, 2 slices, per-slice strides, add inputs", F, "_vl_lora_expand",
                    (_cdiv(M, 4) * 3, 2, L),
                    [Buf("input", "fp32", 2 * M * K), Buf("lora", "fp16", _NUM_LORAS * sum(sizes) * K, scale=0.2),
                     Buf("out", "fp16", M * sum(sizes), out=True), Buf("lora_ptr_table", "i64", 2, "zeros"),
                     Buf("lora_slice_offsets", "i64", 2, _ints(offs)), Scalar("M", M), Scalar("N", max(sizes)),
                     Scalar("K", K)] + _lora_tables() +
                    [Buf("slice_start_loc", "i64", 2, _ints([0, sizes[0]])), Scalar("input_d0_stride", M * K),
                     Scalar("input_d1_stride", K), Scalar("input_d2_stride", 1),
                     Buf("ls_d0", "i64", 2, _ints([n * K for n in sizes])), Buf("ls_d1", "i64", 2, _ints([K, K])),
                     Buf("ls_d2", "i64", 2, _ints([1, 1])), Scalar("output_d0_stride", sum(sizes)),
                     Scalar("output_d1_stride", 1), Buf("output_hs", "i32", 2, _ints(sizes))],
                    {"BLOCK_M": 4, "BLOCK_N": 16, "BLOCK_K": 16, "EVEN_K": True, "ADD_INPUTS": True,
                     "CAST_TYPE": True, "SLICE_NUM": 2, "SAME_STRIDE": False, "USE_GDC": True, "launch_pdl": True},
                    ref=lora_expand("fp16")))
    K, N = 24, 64
    out.append(Case("vllm lora expand, 1 slice, scalar strides, uneven K", F, "_vl_lora_expand",
                    (_cdiv(M, 4) * 2, 1, L),
                    [Buf("input", "bf16", M * K), Buf("lora", "bf16", _NUM_LORAS * N * K, scale=0.2),
                     Out("out", "bf16", M * N), Null("lora_ptr_table"), Null("lora_slice_offsets"), Scalar("M", M),
                     Scalar("N", N), Scalar("K", K)] + _lora_tables() +
                    [Scalar("slice_start_loc", 0), Scalar("input_d0_stride", M * K), Scalar("input_d1_stride", K),
                     Scalar("input_d2_stride", 1), Scalar("ls_d0_ptr", N * K), Scalar("ls_d1_ptr", K),
                     Scalar("ls_d2_ptr", 1), Scalar("output_d0_stride", N), Scalar("output_d1_stride", 1),
                     Null("output_hs_ptr")],
                    {"BLOCK_M": 4, "BLOCK_N": 32, "BLOCK_K": 16, "EVEN_K": False, "ADD_INPUTS": False,
                     "CAST_TYPE": False, "SLICE_NUM": 1, "SAME_STRIDE": True, "USE_GDC": False,
                     "launch_pdl": False}, ref=lora_expand("bf16")))
    return out


def _spec_decode_cases():
    out = []
    B, T, V, S = _NUM_DRAFT.size, _CU_DRAFT[-1], _VOCAB, 4
    draft, target = _spec_tokens()

    def tokens(*bufs):
        return [Buf("cu_num_draft_tokens", "i32", B, _ints(_CU_DRAFT)),
                Buf("draft_token_ids", "i32", T, _ints(draft))] + list(bufs)

    # flags held as bytes: any nonzero byte is true
    for greedy in (None, [1, 2, 0, -1]):
        out.append(Case(f"vllm rejection sampler, greedy{', per-request flags' if greedy else ''}", F,
                        "_vl_rejection_greedy_sample", (B,),
                        [Buf("output_token_ids", "i32", B * (S + 1), ("fill", -1), out=True)] +
                        tokens(Buf("target_argmax", "i64", T, _ints(target)),
                               Buf("bonus_token_ids", "i32", B, ("randint", 0, V)),
                               Buf("is_greedy", "i8", B, _ints(greedy)) if greedy else Null("is_greedy_ptr"),
                               Scalar("max_spec_len", S)), {}, ref=rejection_greedy))
    for ngram in (False, True):
        out.append(Case(f"vllm rejection sampler, random{', n-gram drafts' if ngram else ''}", F,
                        "_vl_rejection_random_sample", (B,),
                        [Buf("output_token_ids", "i32", B * (S + 1), ("fill", -1), out=True)] +
                        tokens(Null("draft_probs_ptr") if ngram else Buf("draft_probs", "fp32", T * V, "rand"),
                               Buf("target_probs", "fp32", T * V, "rand"),
                               Buf("bonus_token_ids", "i32", B, ("randint", 0, V)),
                               Buf("recovered_token_ids", "i32", T, ("randint", 0, V)),
                               Buf("uniform_probs", "fp32", T, "rand"),
                               Buf("is_greedy", "i8", B, _ints([0, 0, 4, 0])), Scalar("max_spec_len", S),
                               Scalar("vocab_size", V)),
                        {"IS_NGRAM": ngram}, ref=rejection_random))

    def _exp(rng, n):
        return rng.exponential(1.0, n)

    for ngram in (False, True):
        tp = Buf("target_probs", "fp32", T * V, "rand", out=ngram)
        out.append(Case(f"vllm recovered tokens{', n-gram drafts' if ngram else ''}", F,
                        "_vl_sample_recovered_tokens", (B, S),
                        [Out("output_token_ids", "i32", T)] +
                        tokens(Null("draft_probs_ptr") if ngram else Buf("draft_probs", "fp32", T * V, "rand"),
                               tp, Buf("q", "fp32", B * V, _exp), Scalar("vocab_size", V)),
                        {"PADDED_VOCAB_SIZE": 128, "IS_NGRAM": ngram}, ref=recovered_tokens))
    for name, topk, topp in (("top-k and top-p", True, True), ("top-k", True, False), ("top-p", False, True)):
        out.append(Case(f"vllm {name} logit mask by pivot search", F, "_vl_topk_topp_mask", (2,),
                        [Buf("logits", "fp32", 5 * 512, _logits_with_masked, out=True), Scalar("logits_stride", 512),
                         Buf("k", "i32", 5, _ints([5, 50, 600, 1, 20])) if topk else Null("k_ptr"),
                         Buf("p", "fp32", 5, _vals([0.9, 0.5, 0.8, 0.95, 0.3])) if topp else Null("p_ptr"),
                         Scalar("batch_size", 5)],
                        {"VOCAB_SIZE": 500, "BLOCK_SIZE": 128, "TOPK_ENABLED": topk, "TOPP_ENABLED": topp,
                         "MAX_ITERS": 60, "TOPP_ITERS": 40}, ref=topk_topp))
    out.append(Case("vllm expand per-request values", F, "_vl_expand_per_request", (B,),
                    [Out("output", "i32", T), Buf("input", "i32", B, _ints([5, 9, -1, 2])),
                     Buf("cu_num_tokens", "i32", B, _ints(_CU_DRAFT)), Scalar("replace_from", -1),
                     Scalar("replace_to", 0)], {"MAX_NUM_TOKENS": 8}, ref=expand_per_request))
    rows = [[3, 7, -1, 0, 0], [-1, -1, -1, 0, 0], [1, 2, 3, 0, 0], [5, 150, -1, 0, 0], [150, -1, -1, 0, 0]]
    out.append(Case("vllm draft next token from sampled rows", F, "_vl_eagle_next_token", (5,),
                    [Buf("sampled_token_ids", "i32", 25, _ints(np.ravel(rows))),
                     Buf("backup_next_token_ids", "i32", 5, ("randint", 0, 100)), Out("next_token_ids", "i32", 5),
                     Out("valid_count", "i32", 5), Scalar("sampled_stride", 5), Scalar("max_gen_len", 3),
                     Scalar("vocab_size", 100)], {"BLOCK_SIZE_TOKENS": 4}, ref=eagle_next_token))
    out.append(Case("vllm prepare draft inputs", F, "_vl_prepare_eagle_input", (3,),
                    [Out("out", "i32", 10), Buf("cu_query_lens", "i32", 4, _ints([0, 4, 6, 15])),
                     Buf("cu_num_tokens", "i32", 4, _ints([0, 3, 3, 10]))], {"BLOCK_SIZE": 4},
                    ref=prepare_eagle_input))
    return out


def _gemm_cases():
    out = []
    M, N, K = 70, 50, 40
    for dt, bias, trans, large, sms in (("fp16", True, False, False, 4), ("bf16", False, True, True, 3)):
        out.append(Case(f"vllm batch-invariant persistent matmul, {dt}{', bias' if bias else ', B transposed'}",
                        F, "_vl_matmul_persistent", (sms,),
                        [Buf("a", dt, M * K), Buf("b", dt, K * N), Out("c", dt, M * N),
                         Buf("bias", "fp32", N) if bias else Null("bias_ptr"), Scalar("M", M), Scalar("N", N),
                         Scalar("K", K), Scalar("stride_am", K), Scalar("stride_ak", 1),
                         Scalar("stride_bk", 1 if trans else N), Scalar("stride_bn", K if trans else 1),
                         Scalar("stride_cm", N), Scalar("stride_cn", 1)],
                        {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 2,
                         "NUM_SMS": sms, "A_LARGE": large, "B_LARGE": large, "C_LARGE": large, "HAS_BIAS": bias},
                        ref=matmul_persistent))
    out.append(Case("vllm batch-invariant log-softmax", F, "_vl_log_softmax", (3,),
                    [Buf("input", "fp32", 3 * 1024, scale=3.0), Out("output", "fp32", 3 * 1000),
                     Scalar("input_row_stride", 1024), Scalar("output_row_stride", 1000), Scalar("n_cols", 1000)],
                    {"BLOCK_SIZE": 256}, ref=log_softmax))
    out.append(Case("vllm batch-invariant RMS norm, bf16", F, "_vl_rms_norm", (4,),
                    [Buf("input", "bf16", 4 * 1000), Buf("weight", "bf16", 1000, "rand"),
                     Out("output", "bf16", 4 * 1024), Scalar("input_row_stride", 1000),
                     Scalar("output_row_stride", 1024), Scalar("n_cols", 1000), Scalar("eps", 1e-6, "fp32")],
                    {"BLOCK_SIZE": 256}, ref=rms_norm("bf16")))
    out.append(Case("vllm batch-invariant mean over a strided dim", F, "_vl_mean_dim", (23,),
                    [Buf("input", "fp32", 3 * 7 * 50), Out("output", "fp32", 21), Scalar("input_stride0", 350),
                     Scalar("input_stride1", 1), Scalar("input_stride2", 50), Scalar("output_stride0", 7),
                     Scalar("output_stride1", 1), Scalar("M", 3), Scalar("N", 50), Scalar("K", 7)],
                    {"BLOCK_SIZE": 16}, ref=mean_dim))

    M, N, K = 40, 48, 96
    for name, ab, cdt, sa, sb, bias, trans in (
            ("int8, per-token and per-channel scales, bias", "i8", "fp16", 32, 32, True, False),
            ("int8, per-tensor scales, B transposed", "i8", "bf16", 1, 1, False, True),
            ("fp16, per-token scales, bias", "fp16", "fp16", 32, 1, True, False)):
        ini = ("randint", -128, 128) if ab == "i8" else "randn"
        out.append(Case(f"vllm scaled mm, {name}", F, "_vl_scaled_mm", (_cdiv(M, 32) * _cdiv(N, 32),),
                        [Buf("a", ab, M * K, ini), Buf("b", ab, K * N, ini),
                         Buf("scale_a", "fp32", M if sa > 1 else 1, "rand", scale=0.02),
                         Buf("scale_b", "fp32", N if sb > 1 else 1, "rand", scale=0.02), Out("c", cdt, M * N),
                         Buf("bias", cdt, N) if bias else Null("bias_ptr"), Scalar("M", M), Scalar("N", N),
                         Scalar("K", K), Scalar("stride_am", K), Scalar("stride_ak", 1),
                         Scalar("stride_bk", 1 if trans else N), Scalar("stride_bn", K if trans else 1),
                         Scalar("stride_cm", N), Scalar("stride_cn", 1)],
                        {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "BLOCK_SIZE_SCALE_A": sa,
                         "BLOCK_SIZE_SCALE_B": sb}, ref=scaled_mm(cdt)))

    Tk, E, top_k, BM, N = 10, 4, 2, 16, 64
    sorted_ids, experts = _moe_routing(Tk, E, top_k, BM, local_off=3)
    for int4, K, G, even, dt in ((True, 64, 32, True, "fp16"), (False, 80, 16, False, "bf16")):
        b_n = E * N * K // (2 if int4 else 1)
        kb = K // 2 if int4 else K
        out.append(Case(f"vllm MoE weight-only GEMM, {'int4 with zero points' if int4 else 'uint8, uneven K'}",
                        F, "_vl_fused_moe_wna16", (_cdiv(sorted_ids.size, BM) * _cdiv(N, 32),),
                        [Buf("a", dt, Tk * K), Buf("b", "u8", b_n, ("randint", 0, 256)), Out("c", dt, Tk * top_k * N),
                         Buf("b_scale", dt, E * N * (K // G), "rand", scale=0.02),
                         Buf("b_zp", "u8", E * N // 2 * (K // G), ("randint", 0, 256)) if int4 else Null("b_zp_ptr"),
                         Buf("topk_weights", "fp32", Tk * top_k, "rand"),
                         Buf("sorted_token_ids", "i32", sorted_ids.size, _ints(sorted_ids)),
                         Buf("expert_ids", "i32", experts.size, _ints(experts)),
                         Buf("num_tokens_post_padded", "i32", 1, _ints([sorted_ids.size])),
                         Scalar("EM", sorted_ids.size), Scalar("num_valid_tokens", Tk * top_k),
                         Scalar("stride_am", K), Scalar("stride_ak", 1), Scalar("stride_be", N * kb),
                         Scalar("stride_bk", 1), Scalar("stride_bn", kb), Scalar("stride_cm", N),
                         Scalar("stride_cn", 1), Scalar("stride_bse", N * (K // G)), Scalar("stride_bsk", 1),
                         Scalar("stride_bsn", K // G), Scalar("stride_bze", N // 2 * (K // G) if int4 else 0),
                         Scalar("stride_bzk", 1 if int4 else 0), Scalar("stride_bzn", K // G if int4 else 0)],
                        {"N": N, "K": K, "group_size": G, "BLOCK_SIZE_M": BM, "BLOCK_SIZE_N": 32,
                         "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 2, "MUL_ROUTED_WEIGHT": int4, "top_k": top_k,
                         "has_zp": int4, "use_int4_w4a16": int4, "use_int8_w8a16": not int4, "even_Ks": even},
                        ref=moe_wna16(dt)))
    return out


def _mamba_rotary_cases():
    out = []
    nb, nh, ng, dim, ds = 3, 4, 2, 24, 16

    def _neg(rng, n):
        return -rng.random(n) * 2.0

    def _dt(rng, n):
        return rng.standard_normal(n) - 1.0

    out.append(Case("vllm selective state update, every option", F, "_vl_selective_state_update", (2, nb, nh),
                    [Buf("state", "fp32", 5 * nh * dim * ds, out=True), Buf("x", "bf16", nb * nh * dim),
                     Buf("dt", "bf16", nb * nh * dim, _dt), Buf("dt_bias", "fp32", nh * dim, scale=0.5),
                     Buf("A", "fp32", nh * dim * ds, _neg), Buf("B", "bf16", nb * ng * ds),
                     Buf("C", "bf16", nb * ng * ds), Buf("D", "fp32", nh * dim), Buf("z", "bf16", nb * nh * dim),
                     Out("out", "bf16", nb * nh * dim), Buf("state_batch_indices", "i32", nb, _ints([4, -1, 1])),
                     Scalar("pad_slot_id", -1), Scalar("dim", dim), Scalar("dstate", ds),
                     Scalar("nheads_ngroups_ratio", nh // ng), Scalar("stride_state_batch", nh * dim * ds),
                     Scalar("stride_state_head", dim * ds), Scalar("stride_state_dim", ds),
                     Scalar("stride_state_dstate", 1), Scalar("stride_x_batch", nh * dim),
                     Scalar("stride_x_head", dim), Scalar("stride_x_dim", 1), Scalar("stride_dt_batch", nh * dim),
                     Scalar("stride_dt_head", dim), Scalar("stride_dt_dim", 1), Scalar("stride_dt_bias_head", dim),
                     Scalar("stride_dt_bias_dim", 1), Scalar("stride_A_head", dim * ds), Scalar("stride_A_dim", ds),
                     Scalar("stride_A_dstate", 1), Scalar("stride_B_batch", ng * ds), Scalar("stride_B_group", ds),
                     Scalar("stride_B_dstate", 1), Scalar("stride_C_batch", ng * ds), Scalar("stride_C_group", ds),
                     Scalar("stride_C_dstate", 1), Scalar("stride_D_head", dim), Scalar("stride_D_dim", 1),
                     Scalar("stride_z_batch", nh * dim), Scalar("stride_z_head", dim), Scalar("stride_z_dim", 1),
                     Scalar("stride_out_batch", nh * dim), Scalar("stride_out_head", dim),
                     Scalar("stride_out_dim", 1)],
                    {"DT_SOFTPLUS": True, "TIE_HDIM": False, "BLOCK_SIZE_M": 16, "HAS_DT_BIAS": True, "HAS_D": True,
                     "HAS_Z": True, "HAS_STATE_BATCH_INDICES": True, "BLOCK_SIZE_DSTATE": 16},
                    ref=selective_state_update))
    nb, nh, ng, dim, ds = 3, 2, 1, 20, 12
    out.append(Case("vllm selective state update, one dt and A per head", F, "_vl_selective_state_update",
                    (3, nb, nh),
                    [Buf("state", "bf16", nb * nh * dim * ds, out=True), Buf("x", "fp32", nb * nh * dim),
                     Buf("dt", "fp32", nb * nh, "rand"), Null("dt_bias_ptr"), Buf("A", "fp32", nh, _neg),
                     Buf("B", "fp32", nb * ng * ds), Buf("C", "fp32", nb * ng * ds), Null("D_ptr"), Null("z_ptr"),
                     Out("out", "fp32", nb * nh * dim), Null("state_batch_indices_ptr"), Scalar("pad_slot_id", -1),
                     Scalar("dim", dim), Scalar("dstate", ds), Scalar("nheads_ngroups_ratio", nh // ng),
                     Scalar("stride_state_batch", nh * dim * ds), Scalar("stride_state_head", dim * ds),
                     Scalar("stride_state_dim", ds), Scalar("stride_state_dstate", 1),
                     Scalar("stride_x_batch", nh * dim), Scalar("stride_x_head", dim), Scalar("stride_x_dim", 1),
                     Scalar("stride_dt_batch", nh), Scalar("stride_dt_head", 1), Scalar("stride_dt_dim", 0),
                     Scalar("stride_dt_bias_head", 0), Scalar("stride_dt_bias_dim", 0), Scalar("stride_A_head", 1),
                     Scalar("stride_A_dim", 0), Scalar("stride_A_dstate", 0), Scalar("stride_B_batch", ng * ds),
                     Scalar("stride_B_group", ds), Scalar("stride_B_dstate", 1), Scalar("stride_C_batch", ng * ds),
                     Scalar("stride_C_group", ds), Scalar("stride_C_dstate", 1), Scalar("stride_D_head", 0),
                     Scalar("stride_D_dim", 0), Scalar("stride_z_batch", 0), Scalar("stride_z_head", 0),
                     Scalar("stride_z_dim", 0), Scalar("stride_out_batch", nh * dim),
                     Scalar("stride_out_head", dim), Scalar("stride_out_dim", 1)],
                    {"DT_SOFTPLUS": False, "TIE_HDIM": True, "BLOCK_SIZE_M": 8, "HAS_DT_BIAS": False,
                     "HAS_D": False, "HAS_Z": False, "HAS_STATE_BATCH_INDICES": False, "BLOCK_SIZE_DSTATE": 16},
                    ref=selective_state_update))

    # gated delta rule: three packed sequences with state slots, then a batch of two
    H, HV, K, V = 2, 4, 24, 20

    def _decay(rng, n):
        return -rng.random(n) * 0.5

    for varlen, dt in ((True, "fp16"), (False, "bf16")):
        if varlen:
            cu, B, T, slots = [0, 5, 6, 13], 1, 13, 5
        else:
            cu, B, T, slots = None, 2, 6, 2
        total = cu[-1] if cu else B * T
        n_seq = len(cu) - 1 if cu else B
        state_n = slots * HV * K * V
        out.append(Case(f"vllm recurrent gated delta rule, {'packed sequences, state slots' if varlen else 'batch'}",
                        F, "_vl_fused_recurrent_gated_delta_rule", (1, 2, n_seq * HV),
                        [Buf("q", dt, total * H * K), Buf("k", dt, total * H * K), Buf("v", dt, total * HV * V),
                         Buf("g", "fp32", total * HV, _decay),
                         Buf("beta", dt, total * HV * (1 if varlen else V), "rand"),
                         Out("o", dt, total * HV * V),
                         Buf("h0", "fp32", state_n, scale=0.5) if varlen else Null("h0"),
                         Out("ht", "fp32", state_n),
                         Buf("cu_seqlens", "i32", 4, _ints(cu)) if varlen else Null("cu_seqlens"),
                         Buf("ssm_state_indices", "i32", 3, _ints([3, 0, 4])) if varlen else Null("ssm_state_indices"),
                         Scalar("scale", K ** -0.5, "fp32"), Scalar("N", n_seq, "i64"), Scalar("T", T, "i64")],
                        {"B": B, "H": H, "HV": HV, "K": K, "V": V, "BK": 32, "BV": 16, "USE_INITIAL_STATE": varlen,
                         "STORE_FINAL_STATE": True, "IS_BETA_HEADWISE": not varlen, "USE_QK_L2NORM_IN_KERNEL": varlen,
                         "IS_VARLEN": varlen, "IS_CONTINUOUS_BATCHING": varlen}, ref=gated_delta_rule))

    T = 5
    for inter, dt, qh, kh, hd, rd, sec in ((False, "fp16", 4, 2, 64, 48, (8, 8, 8)),
                                           (True, "bf16", 3, 1, 32, 32, (6, 5, 5))):
        half = rd // 2
        out.append(Case(f"vllm multimodal rotary, {'interleaved' if inter else 'sectioned'} t/h/w", F, "_vl_mrope",
                        (T,),
                        [Buf("q", dt, T * qh * hd, out=True), Buf("k", dt, T * kh * hd, out=True),
                         Buf("cos", "fp32", 3 * T * half), Buf("sin", "fp32", 3 * T * half), Scalar("num_tokens", T)],
                        {"n_qh": qh, "n_kh": kh, "hd": hd, "rd": rd, "pad_n_qh": 4, "pad_n_kh": max(kh, 1),
                         "pad_hd": hd, "mrope_section_t": sec[0], "mrope_section_h": sec[1],
                         "mrope_section_w": sec[2], "is_interleaved": inter}, ref=mrope))
    return out


def cases():
    return _attention_cases() + _cache_and_lora_cases() + _spec_decode_cases() + _gemm_cases() + \
        _mamba_rotary_cases()
