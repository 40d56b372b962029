"""Cases of the vLLM-v1- and newer-SGLang-style kernels in
vllm_sglang_v1_style.py with their float64 numpy references; each reference
takes (v, c, s) as corpus_refs.py describes. Every case name starts with
"v1 "."""
import numpy as np

import corpus_refs as R_
from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_cases_flaggems import _bf16, _f16
from corpus_cases_quant import _finite_codes, fp8_encode, fp8_table

F = "vllm_sglang_v1_style.py"


def _cdiv(a, b):
    return -(-a // b)


def _f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


def _round(dt):
    return {"fp16": _f16, "bf16": _bf16, "fp32": _f32}[dt]


def _fixed(arr):
    arr = np.asarray(arr)
    return lambda rng, n: arr[:n].astype(np.float64) if arr.dtype.kind == "f" else arr[:n].astype(np.int64)


def _positive(lo, width):
    return lambda rng, n: lo + width * rng.random(n)


def _silu(x):
    return x / (1.0 + np.exp(-x))


# ---- segmented unified attention ----------------------------------------------------------------


def _attn_segments(q_lens, ctx_lens, G, D, DP, BS, TILE, BM, NSEG, fp8, qdt_name):
    BQ = BM // G

    def ref(v, c, s):
        Hq, Hkv = c["NUM_Q_HEADS"], c["NUM_KV_HEADS"]
        T = sum(q_lens)
        q = v["q_ptr"].reshape(T, Hq, D)
        nblk = v["k_cache_ptr"].size // (BS * Hkv * D)
        kc = v["k_cache_ptr"].reshape(nblk, BS, Hkv, D)
        vc = v["v_cache_ptr"].reshape(nblk, BS, Hkv, D)
        qdt = _round(qdt_name)
        if fp8:
            tab = fp8_table(False)
            kc = qdt(_f32(tab[kc.astype(np.int64)] * v["k_scale_ptr"][0]))
            vc = qdt(_f32(tab[vc.astype(np.int64)] * v["v_scale_ptr"][0]))
        bt = v["block_tables_ptr"].astype(np.int64).reshape(len(q_lens), -1)
        out = v["segm_out_ptr"].reshape(T, Hq, NSEG, DP).copy()
        mx = v["segm_max_ptr"].reshape(T, Hq, NSEG).copy()
        sm = v["segm_sum_ptr"].reshape(T, Hq, NSEG).copy()
        start = 0
        for sq, (ql, cl) in enumerate(zip(q_lens, ctx_lens)):
            sl = ql + cl
            tps = _cdiv(sl, NSEG * TILE)
            pos = np.arange(sl)
            phys = bt[sq, pos // BS]
            K = kc[phys, pos % BS]  # [sl, Hkv, D]
            V = vc[phys, pos % BS]
            for lb in range(_cdiv(ql, BQ)):
                causal_end = cl + min((lb + 1) * BQ, ql)
                for seg in range(NSEG):
                    if seg * tps * TILE >= sl:
                        continue
                    t_lo, t_hi = seg * tps, min((seg + 1) * tps, _cdiv(causal_end, TILE))
                    for qp in range(lb * BQ, min((lb + 1) * BQ, ql)):
                        for h in range(Hq):
                            g = h // G
                            m = v["sinks_ptr"][h] if (c["USE_SINKS"] and seg == 0) else -np.inf
                            l = 1.0 if m > -np.inf else 0.0
                            acc = np.zeros(D)
                            for t in range(t_lo, t_hi):
                                kp = t * TILE + np.arange(TILE)
                                ok = (kp < sl) & (kp <= cl + qp)
                                kpc = np.minimum(kp, sl - 1)
                                sc = s["scale"] * (K[kpc, g] @ q[start + qp, h])
                                sc = np.where(ok, sc, -np.inf)
                                mn = max(m, sc.max())
                                mn = mn if mn > -np.inf else 0.0
                                p = np.exp(sc - mn)
                                al = np.exp(m - mn)
                                l = l * al + p.sum()
                                acc = acc * al + qdt(p) @ V[kpc, g]
                                m = mn
                            out[start + qp, h, seg, :D] = acc
                            mx[start + qp, h, seg] = m
                            sm[start + qp, h, seg] = l
            start += ql
        return {"segm_out_ptr": out.ravel(), "segm_max_ptr": mx.ravel(), "segm_sum_ptr": sm.ravel()}
    return ref


# ---- sampling helpers -----------------------------------------------------------------------------


def _masked_logits(stride, BS):
    """Normal logits, with -inf over a whole vocab block of rows 1 and 2 and
    a few single entries (an allowed-token or bad-word mask)."""
    def init(rng, n):
        x = rng.standard_normal(n) * 3.0
        x[rng.random(n) < 0.02] = -np.inf
        x[stride + 2 * BS:stride + 3 * BS] = -np.inf
        x[2 * stride + BS:2 * stride + 2 * BS] = -np.inf
        return x
    return init


def gumbel(v, c, s):
    V, BS = s["vocab_size"], c["BLOCK_SIZE"]
    R = v["temp_ptr"].size
    nb = _cdiv(V, BS)
    x = v["logits_ptr"].reshape(R, -1)[:, :V]
    idx = v["local_idx_ptr"].reshape(R, -1).copy()
    mx = v["local_max_ptr"].reshape(R, -1).copy()
    cols = np.arange(nb * BS)
    for r in range(R):
        row = np.full(nb * BS, -np.inf)
        row[:V] = x[r]
        t = float(np.float32(v["temp_ptr"][r]))
        if t != 0.0:
            p = int(v["pos_ptr"][r]) & 0xFFFFFFFFFFFFFFFF  # an int64 position also fills the counter's high word
            key = int(R_.philox4(int(v["seeds_ptr"][r]), np.array([p & 0xFFFFFFFF]),
                                 hi=np.array([p >> 32]) if s["_pos64"] else None)[0][0])
            u = R_.philox_rand(key, cols)
            noise = _f32(-np.log(-np.log(u + 1e-20) + 1e-20))
            if c["APPLY_TEMPERATURE"]:
                row = _f32(row / t)
            row = np.where(cols < V, _f32(row + noise), -np.inf)
        for b in range(nb):
            blk = row[b * BS:(b + 1) * BS]
            idx[r, b] = b * BS + int(np.argmax(blk))
            mx[r, b] = blk.max()
    return {"local_idx_ptr": idx.ravel(), "local_max_ptr": mx.ravel()}


def topk_logprobs(v, c, s):
    V, NI = s["vocab_size"], c["NUM_IDS"]
    R = v["out_rank_ptr"].size
    x = v["logits_ptr"].reshape(R, -1)[:, :V]
    ids = v["ids_ptr"].reshape(R, -1)[:, :NI]
    m = x.max(1, keepdims=True)
    lse = (m + np.log(np.exp(x - m).sum(1, keepdims=True)))[:, 0]
    lp = np.take_along_axis(x, ids, 1) - lse[:, None]
    sampled = x[np.arange(R), ids[:, 0]]
    rank = (x > sampled[:, None]).sum(1) + 1
    return {"out_logprobs_ptr": lp.ravel(), "out_rank_ptr": rank}


def penalties(v, c, s):
    V = s["vocab_size"]
    R = v["temp_ptr"].size
    x = v["logits_ptr"].reshape(R, -1).copy()
    cnt = v["out_counts_ptr"].reshape(R, -1)[:, :V]
    bits = v["prompt_bits_ptr"].astype(np.int64).reshape(R, -1) & 0xFFFFFFFF
    cols = np.arange(V)
    for r in range(R):
        y = x[r, :V]
        rep = float(np.float32(v["rep_ptr"][r]))
        if rep != 1.0:
            inp = ((bits[r, cols // 32] >> (cols % 32)) & 1) != 0
            f = np.where(inp | (cnt[r] > 0), rep, 1.0)
            y = np.where(y > 0, y / f, y * f)
        y = y - v["freq_ptr"][r] * cnt[r] - v["pres_ptr"][r] * (cnt[r] > 0)
        t = float(np.float32(v["temp_ptr"][r]))
        if t != 0.0:
            y = y / t
        x[r, :V] = y
    return {"logits_ptr": x.ravel()}


def slot_mapping(v, c, s):
    BS, PAD = c["BLOCK_SIZE_KV"], c["PAD_ID"]
    qsl = v["qsl_ptr"].astype(np.int64)
    bt = v["block_table_ptr"].astype(np.int64).reshape(qsl.size - 1, -1)
    out = v["slot_ptr"].copy()
    pos = v["positions_ptr"].astype(np.int64)
    for r in range(qsl.size - 1):
        for i in range(qsl[r], qsl[r + 1]):
            out[i] = bt[r, pos[i] // BS] * BS + pos[i] % BS
    out[s["num_tokens"]:s["max_num_tokens"]] = PAD
    return {"slot_ptr": out}


# ---- causal conv1d ------------------------------------------------------------------------------


def conv_varlen(dim, lens):
    def ref(v, c, s):
        W = c["KERNEL_WIDTH"]
        S = W - 1
        total = sum(lens)
        x = v["x_ptr"].reshape(dim, total)
        w = v["w_ptr"].reshape(dim, W)
        b = v["bias_ptr"] if c["HAS_BIAS"] else np.zeros(dim)
        st = v["conv_states_ptr"].reshape(-1, dim, S).copy()
        o = v["o_ptr"].reshape(dim, total).copy()
        idx = v["cache_indices_ptr"].astype(np.int64)
        qsl = np.concatenate([[0], np.cumsum(lens)])
        for sq, n in enumerate(lens):
            line = idx[sq]
            if line == c["pad_slot_id"]:
                continue
            prev = st[line] if v["has_init_ptr"][sq] else np.zeros((dim, S))
            full = np.concatenate([prev, x[:, qsl[sq]:qsl[sq] + n]], 1)
            y = sum(w[:, k:k + 1] * full[:, k:k + n] for k in range(W)) + b[:, None]
            o[:, qsl[sq]:qsl[sq] + n] = _silu(y) if c["SILU_ACTIVATION"] else y
            st[line] = full[:, -S:]
        return {"o_ptr": o.ravel(), "conv_states_ptr": st.ravel()}
    return ref


def conv_update(B, dim, L):
    def ref(v, c, s):
        W = c["KERNEL_WIDTH"]
        S = W - 1
        x = v["x_ptr"].reshape(B, dim, L)
        w = v["w_ptr"].reshape(dim, W)
        b = v["bias_ptr"] if c["HAS_BIAS"] else np.zeros(dim)
        st = v["conv_state_ptr"].reshape(-1, dim, S).copy()
        o = v["o_ptr"].reshape(B, dim, L).copy()
        for bi in range(s["batch"]):
            line = int(v["state_indices_ptr"][bi])
            if line == c["pad_slot_id"]:
                continue
            full = np.concatenate([st[line], x[bi]], 1)
            y = sum(w[:, k:k + 1] * full[:, k:k + L] for k in range(W)) + b[:, None]
            o[bi] = _silu(y) if c["SILU_ACTIVATION"] else y
            st[line] = full[:, -S:]
        return {"o_ptr": o.ravel(), "conv_state_ptr": st.ravel()}
    return ref


# ---- MLA -------------------------------------------------------------------------------------------


def mla_decode(B, H, seq_lens, LV, LK, PS, NS, qdt):
    rnd = _round(qdt)

    def ref(v, c, s):
        q = v["q_ptr"].reshape(B, H, LK)
        kv = v["kv_buffer_ptr"].reshape(-1, LK)
        pt = v["page_table_ptr"].astype(np.int64).reshape(B, -1)
        out = v["att_out_ptr"].reshape(B, H, NS, LV + 1).copy()
        cap = c["logit_cap"]
        for b in range(B):
            sl = seq_lens[b]
            per = _cdiv(sl, NS)
            n = np.arange(sl)
            loc = pt[b, n // PS] * PS + n % PS
            K = kv[loc]
            for sp in range(NS):
                lo, hi = sp * per, min(sp * per + per, sl)
                if hi <= lo:
                    continue
                qk = (q[b] @ K[lo:hi].T) * s["sm_scale"]
                if cap > 0:
                    qk = cap * np.tanh(qk / cap)
                m = qk.max(1, keepdims=True)
                p = np.exp(qk - m)
                out[b, :, sp, :LV] = (rnd(p) @ K[lo:hi, :LV]) / p.sum(1, keepdims=True)
                out[b, :, sp, LV] = m[:, 0] + np.log(p.sum(1))
        return {"att_out_ptr": out.ravel()}
    return ref


def concat_cache_mla(v, c, s):
    LC, LR, BS = c["LC"], c["LR"], c["BLOCK_SIZE"]
    T = v["slot_mapping_ptr"].size
    cache = v["cache_ptr"].reshape(-1, BS, LC + LR).copy()
    row = np.concatenate([v["kv_c_ptr"].reshape(T, -1)[:, :LC], v["k_pe_ptr"].reshape(T, -1)[:, :LR]], 1)
    if c["FP8_CACHE"]:
        inv = np.float32(1.0) / np.float32(v["scale_ptr"][0])
        row = fp8_encode((row.astype(np.float32) * inv).astype(np.float64), False)
    for t in range(T):
        sl = int(v["slot_mapping_ptr"][t])
        if sl >= 0:
            cache[sl // BS, sl % BS] = row[t]
    return {"cache_ptr": cache.ravel()}


# ---- fused MoE w8a8 ----------------------------------------------------------------------------------


def _moe_routing(M, topk, E, BM, local, seed):
    rs = np.random.RandomState(seed)
    ids = np.stack([rs.choice(E, topk, replace=False) for _ in range(M)])
    flat = ids.ravel()
    sorted_ids, experts = [], []
    for e in range(E):
        toks = list(np.flatnonzero(flat == e))
        n = _cdiv(max(len(toks), 1), BM) * BM
        sorted_ids += toks + [M * topk] * (n - len(toks))
        experts += [e if e in local else -1] * (n // BM)
    padded = len(sorted_ids)
    sorted_ids += [M * topk] * BM  # a block past num_tokens_post_padded
    experts += [0]
    return flat, np.array(sorted_ids), np.array(experts), padded


def fused_moe_w8a8(flat, local, topk, N, K):
    def ref(v, c, s):
        M = v["a_scale_ptr"].size
        E = v["b_scale_ptr"].size // N
        a = v["a_ptr"].reshape(M, K)
        b = v["b_ptr"].reshape(E, N, K)
        if not c["USE_INT8"]:
            tab = fp8_table(False)
            a, b = tab[a.astype(np.int64)], tab[b.astype(np.int64)]
        out = v["c_ptr"].reshape(M * topk, N).copy()
        for t, e in enumerate(flat):
            if e not in local:
                out[t] = 0.0
                continue
            y = (a[t // topk] @ b[e].T) * v["a_scale_ptr"][t // topk] * v["b_scale_ptr"].reshape(E, N)[e]
            if c["HAS_BIAS"]:
                y = y + v["bias_ptr"].reshape(E, N)[e]
            if c["MUL_ROUTED_WEIGHT"]:
                y = y * v["topk_weights_ptr"][t]
            out[t] = y
        return {"c_ptr": out.ravel()}
    return ref


# ---- SGLang helpers ---------------------------------------------------------------------------------


def moe_sum_reduce(v, c, s):
    T, K, H = s["token_num"], s["topk_num"], s["hidden_dim"]
    x = v["in_ptr"].reshape(T, K, H)
    return {"out_ptr": (x.sum(1) * c["routed_scaling_factor"]).ravel()}


def softcap(v, c, s):
    cap = float(np.float32(s["softcapping_value"]))
    return {"x_ptr": cap * np.tanh(v["x_ptr"] / cap)}


def extend_positions(v, c, s):
    pre = v["extend_prefix_lens_ptr"].astype(np.int64) if c["has_prefix"] else np.zeros(v["extend_seq_lens_ptr"].size,
                                                                                       dtype=np.int64)
    n = v["extend_seq_lens_ptr"].astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(n)[:-1]])
    pos = np.concatenate([p + np.arange(k) for p, k in zip(pre, n)])
    return {"positions_ptr": pos, "extend_start_loc_ptr": starts}


def write_req_to_token(v, c, s):
    W = c["req_to_token_stride"]
    r2t = v["req_to_token_ptr"].reshape(-1, W).copy()
    pre, end = v["pre_lens"].astype(np.int64), v["seq_lens"].astype(np.int64)
    before = 0
    for i, pool in enumerate(v["req_pool_indices"].astype(np.int64)):
        n = end[i] - pre[i]
        r2t[pool, pre[i]:end[i]] = v["out_cache_loc"][before:before + n]
        before += int(v["extend_lens"][i])
    return {"req_to_token_ptr": r2t.ravel()}


def flashmla_pages(has_start):
    def ref(v, c, s):
        P = c.get("PAGED_SIZE", 64)
        W, KW = c["req_to_token_stride"], c["kv_indices_stride"]
        r2t = v["req_to_token_ptr"].astype(np.int64).reshape(-1, W)
        out = v["kv_indices_ptr"].reshape(-1, KW).copy()
        for b, pool in enumerate(v["req_pool_indices_ptr"].astype(np.int64)):
            st = int(v["kv_start_idx"][b]) if has_start else 0
            n = _cdiv(int(v["page_kernel_lens_ptr"][b]), P)
            out[b, :n] = r2t[pool, st + np.arange(n) * P] // P
        return {"kv_indices_ptr": out.ravel()}
    return ref


# ---- the cases ----------------------------------------------------------------------------------------


def cases():
    out = []
    add = out.append

    # segmented unified attention: query-start-loc table, block tables, GQA packed rows
    for qdt, fp8, sinks in (("fp16", False, True), ("bf16", True, False)):
        q_lens, ctx_lens = (5, 17, 1), (20, 3, 40)
        Hq, Hkv, D, DP, BS, TILE, BM, NSEG = 4, 2, 24, 32, 16, 16, 16, 4
        G = Hq // Hkv
        T = sum(q_lens)
        nblk = 12
        maxb = 3
        rs = np.random.RandomState(7)
        bt = np.stack([rs.choice(nblk, maxb, replace=False) for _ in q_lens]).ravel()
        qsl = np.concatenate([[0], np.cumsum(q_lens)])
        n_qblocks = sum(_cdiv(q, BM // G) for q in q_lens)
        kvdt = "u8" if fp8 else qdt
        kv_init = _finite_codes(False) if fp8 else "randn"
        ncache = nblk * BS * Hkv * D
        add(Case(f"v1 vllm unified attention segments {'fp8 kv ' if fp8 else ''}{'sinks ' if sinks else ''}{qdt}",
                 F, "_v1_unified_attn_segments", (n_qblocks, Hkv, NSEG),
                 [Out("segm_out_ptr", "fp32", T * Hq * NSEG * DP), Out("segm_max_ptr", "fp32", T * Hq * NSEG),
                  Out("segm_sum_ptr", "fp32", T * Hq * NSEG), Buf("q_ptr", qdt, T * Hq * D),
                  Buf("k_cache_ptr", kvdt, ncache, kv_init), Buf("v_cache_ptr", kvdt, ncache, kv_init),
                  Buf("sinks_ptr", "fp32", Hq) if sinks else Null("sinks_ptr"),
                  Buf("block_tables_ptr", "i32", bt.size, _fixed(bt)),
                  Buf("seq_lens_ptr", "i32", 3, _fixed(np.add(q_lens, ctx_lens))),
                  Buf("qsl_ptr", "i32", 4, _fixed(qsl)),
                  Buf("k_scale_ptr", "fp32", 1, _fixed([0.02])), Buf("v_scale_ptr", "fp32", 1, _fixed([0.03])),
                  Scalar("scale", 0.2, "fp32"), Scalar("num_seqs", 3), Scalar("block_table_stride", maxb, "i64"),
                  Scalar("q_stride_0", Hq * D, "i64"), Scalar("q_stride_1", D, "i64"),
                  Scalar("kc_stride_0", BS * Hkv * D, "i64"), Scalar("kc_stride_1", Hkv * D, "i64"),
                  Scalar("kc_stride_2", D, "i64"), Scalar("vc_stride_0", BS * Hkv * D, "i64"),
                  Scalar("vc_stride_1", Hkv * D, "i64"), Scalar("vc_stride_2", D, "i64")],
                 {"NUM_Q_HEADS": Hq, "NUM_KV_HEADS": Hkv, "HEAD_SIZE": D, "HEAD_PAD": DP, "BLOCK_SIZE": BS,
                  "TILE": TILE, "BLOCK_Q": BM // G, "BLOCK_M": BM, "NUM_SEGMENTS": NSEG, "USE_SINKS": sinks,
                  "KV_FP8": fp8},
                 ref_tol={"fp32": (3e-3, 3e-3)},
                 ref=_attn_segments(q_lens, ctx_lens, G, D, DP, BS, TILE, BM, NSEG, fp8, qdt)))

    # Gumbel-max block argmax
    R, V, BS = 3, 1001, 256
    nb = _cdiv(V, BS)
    for dt, apply_t, pdt in (("fp32", True, "i32"), ("bf16", False, "i64")):
        pos_init = ("randint", 0, 5000) if pdt == "i32" else ("randint", 2 ** 32, 2 ** 40)
        add(Case(f"v1 vllm gumbel block argmax {dt} temperature={apply_t} {pdt} positions", F, "_v1_gumbel_block_argmax", (R, nb),
                 [Out("local_idx_ptr", "i64", R * nb), Scalar("local_idx_stride", nb),
                  Out("local_max_ptr", "fp32", R * nb), Scalar("local_max_stride", nb),
                  Buf("logits_ptr", dt, R * (V + 3), _masked_logits(V + 3, BS)), Scalar("logits_stride", V + 3),
                  Buf("seeds_ptr", "i64", R, ("randint", 1, 2 ** 31 - 1)), Buf("pos_ptr", pdt, R, pos_init),
                  Buf("temp_ptr", "fp32", R, _fixed([0.7, 0.0, 1.3])), Scalar("vocab_size", V)],
                 {"BLOCK_SIZE": BS, "APPLY_TEMPERATURE": apply_t},
                 ref=(lambda p64: lambda v, c, s: gumbel(v, c, {**s, "_pos64": p64}))(pdt == "i64")))

    # top-k logprobs with the rank of the sampled token
    R, V, NI = 3, 777, 5
    for dt in ("fp16",):
        add(Case(f"v1 vllm topk logprobs and rank {dt}", F, "_v1_topk_logprobs_and_rank", (R,),
                 [Out("out_logprobs_ptr", "fp32", R * NI), Out("out_rank_ptr", "i32", R),
                  Buf("logits_ptr", dt, R * V, scale=2.0), Scalar("logits_stride", V),
                  Buf("ids_ptr", "i64", R * 6, ("randint", 0, V)), Scalar("ids_stride", 6), Scalar("vocab_size", V)],
                 {"NUM_IDS": NI, "NUM_IDS_PAD": 8, "BLOCK": 128}, ref=topk_logprobs))

    # penalties and temperature over a packed prompt bitmask
    R, V, BS = 3, 300, 128
    for dt in ("fp32", "bf16"):
        add(Case(f"v1 vllm penalties and temperature {dt}", F, "_v1_penalties_and_temperature", (R, _cdiv(V, BS)),
                 [Buf("logits_ptr", dt, R * V, scale=2.0, out=True), Scalar("logits_stride", V),
                  Buf("rep_ptr", "fp32", R, _fixed([1.0, 1.3, 0.8])), Buf("freq_ptr", "fp32", R, _fixed([0.1, 0.0, 0.5])),
                  Buf("pres_ptr", "fp32", R, _fixed([0.2, 0.3, 0.0])), Buf("temp_ptr", "fp32", R, _fixed([0.0, 0.5, 1.0])),
                  Buf("out_counts_ptr", "i32", R * V,
                      lambda rng, n: rng.integers(0, 3, n) * (rng.random(n) < 0.3)),
                  Scalar("counts_stride", V), Buf("prompt_bits_ptr", "i32", R * 10, ("randint", -2 ** 31, 2 ** 31)),
                  Scalar("bits_stride", 10), Scalar("vocab_size", V)],
                 {"BLOCK_SIZE": BS}, ref=penalties))

    # slot mapping from positions and block tables, tail padded
    qsl = [0, 3, 10, 11]
    pos = np.concatenate([np.arange(13, 16), np.arange(40, 47), [2]])
    bt = np.array([5, 9, 1, 0, 7, 2, 11, 4, 3, 8, 6, 10])
    add(Case("v1 vllm slot mapping with padded tail", F, "_v1_slot_mapping", (4,),
             [Out("slot_ptr", "i64", 20), Buf("positions_ptr", "i64", 11, _fixed(pos)),
              Buf("qsl_ptr", "i32", 4, _fixed(qsl)), Buf("block_table_ptr", "i32", 12, _fixed(bt)),
              Scalar("block_table_stride", 4), Scalar("num_tokens", 11), Scalar("max_num_tokens", 20)],
             {"BLOCK_SIZE_KV": 16, "PAD_ID": -1, "TILE": 8}, ref=slot_mapping))

    # causal conv1d, varlen prefill
    dim = 37
    for dt, W, lens, idx, init, bias, silu in (("fp32", 4, (5, 2, 11), (2, -1, 0), (1, 1, 0), True, True),
                                               ("fp16", 3, (9, 1, 4), (1, 3, 0), (1, 1, 0), False, False)):
        total = sum(lens)
        S = W - 1
        args = [Buf("x_ptr", dt, dim * total), Buf("w_ptr", dt, dim * W, scale=0.5),
                Buf("bias_ptr", dt, dim) if bias else Null("bias_ptr"),
                Buf("conv_states_ptr", dt, 4 * dim * S, out=True),
                Buf("cache_indices_ptr", "i32", 3, _fixed(idx)), Buf("has_init_ptr", "i32", 3, _fixed(init)),
                Buf("qsl_ptr", "i32", 4, _fixed(np.concatenate([[0], np.cumsum(lens)]))),
                Out("o_ptr", dt, dim * total), Scalar("total_tokens", total)]
        add(Case(f"v1 vllm causal conv1d varlen fwd width {W} {dt}", F, "_v1_conv1d_varlen_fwd", (3, _cdiv(dim, 16)),
                 args,
                 {"dim": dim, "stride_x_dim": total, "stride_x_token": 1, "stride_w_dim": W, "stride_w_width": 1,
                  "stride_st_seq": dim * S, "stride_st_dim": S, "stride_st_tok": 1, "pad_slot_id": -1,
                  "HAS_BIAS": bias, "KERNEL_WIDTH": W, "SILU_ACTIVATION": silu,
                  "NP2_STATELEN": 1 << (S - 1).bit_length(), "BLOCK_M": 8, "BLOCK_N": 16},
                 ref=conv_varlen(dim, lens)))

    # causal conv1d, decode update (two speculative tokens)
    B, dim, L = 3, 40, 2
    for dt, W, idx, bias, silu in (("fp32", 4, (3, -1, 0), True, True), ("bf16", 3, (1, 2, 0), False, False),
                                   ("fp16", 2, (0, 1, 2), True, True)):
        S = W - 1
        add(Case(f"v1 vllm causal conv1d update width {W} {dt}", F, "_v1_conv1d_update", (B + 1, _cdiv(dim, 16)),
                 [Buf("x_ptr", dt, B * dim * L), Buf("w_ptr", dt, dim * W, scale=0.5),
                  Buf("bias_ptr", dt, dim) if bias else Null("bias_ptr"),
                  Buf("conv_state_ptr", dt, 4 * dim * S, out=True),
                  Buf("state_indices_ptr", "i32", B, _fixed(idx)), Out("o_ptr", dt, B * dim * L), Scalar("batch", B)],
                 {"dim": dim, "seqlen": L, "stride_x_seq": dim * L, "stride_x_dim": L, "stride_x_token": 1,
                  "stride_w_dim": W, "stride_w_width": 1, "stride_st_seq": dim * S, "stride_st_dim": S,
                  "stride_st_tok": 1, "pad_slot_id": -1, "HAS_BIAS": bias, "KERNEL_WIDTH": W,
                  "SILU_ACTIVATION": silu, "BLOCK_N": 16},
                 ref=conv_update(B, dim, L)))

    # MLA paged grouped decode
    B, H, LV, DPE, PS, NS = 2, 8, 40, 16, 4, 3
    LK = LV + DPE
    for dt, seq_lens, cap in (("fp16", (13, 30), 0.0), ("bf16", (2, 29), 5.0)):
        rs = np.random.RandomState(3)
        pt = np.stack([rs.choice(20, 8, replace=False) for _ in range(B)]).ravel()
        add(Case(f"v1 vllm mla paged grouped decode {dt} logit_cap={cap} seq_lens={seq_lens}", F,
                 "_v1_mla_decode_grouped", (B, _cdiv(H, 16), NS),
                 [Buf("q_ptr", dt, B * H * LK), Buf("kv_buffer_ptr", dt, 80 * LK), Scalar("sm_scale", 0.3, "fp32"),
                  Buf("page_table_ptr", "i32", pt.size, _fixed(pt)), Buf("seq_lens_ptr", "i32", B, _fixed(seq_lens)),
                  Out("att_out_ptr", "fp32", B * H * NS * (LV + 1)), Scalar("stride_req_page", 8),
                  Scalar("stride_qb", H * LK), Scalar("stride_qh", LK), Scalar("stride_buf_kbs", LK),
                  Scalar("stride_mid_ob", H * NS * (LV + 1)), Scalar("stride_mid_oh", NS * (LV + 1)),
                  Scalar("stride_mid_os", LV + 1)],
                 {"q_head_num": H, "BLOCK_DMODEL": 64, "BLOCK_DPE": DPE, "BLOCK_DV": 64, "BLOCK_N": 16,
                  "BLOCK_H": 16, "NUM_KV_SPLITS": NS, "PAGE_SIZE": PS, "logit_cap": cap, "LK": LK, "LV": LV},
                 ref_tol={"fp32": (3e-3, 3e-3)}, ref=mla_decode(B, H, seq_lens, LV, LK, PS, NS, dt)))

    # MLA cache write, plain and fp8
    T, LC, LR, BS = 7, 40, 12, 4
    slots = np.array([3, 17, -1, 0, 9, 12, 6])
    for dt, fp8 in (("fp16", False), ("bf16", True)):
        add(Case(f"v1 vllm concat and cache mla {dt}{' fp8 cache' if fp8 else ''}", F, "_v1_concat_and_cache_mla", (T,),
                 [Buf("kv_c_ptr", dt, T * 48), Buf("k_pe_ptr", dt, T * LR),
                  Buf("cache_ptr", "u8" if fp8 else dt, 5 * BS * (LC + LR), "zeros" if fp8 else "randn", out=True),
                  Buf("slot_mapping_ptr", "i64", T, _fixed(slots)), Buf("scale_ptr", "fp32", 1, _fixed([0.05])),
                  Scalar("kv_c_stride", 48), Scalar("k_pe_stride", LR), Scalar("block_stride", BS * (LC + LR)),
                  Scalar("entry_stride", LC + LR)],
                 {"LC": LC, "LR": LR, "BLOCK_C": 64, "BLOCK_R": 16, "BLOCK_SIZE": BS, "FP8_CACHE": fp8},
                 ref=concat_cache_mla))

    # fused MoE, int8 w8a8
    M, topk, E, N, K, BM, BN, BK = 5, 2, 3, 40, 70, 16, 32, 32
    for dt, bias, mulw, local, i8 in (("fp16", True, True, (0, 2), True), ("bf16", False, False, (0, 1, 2), False)):
        flat, sids, eids, padded = _moe_routing(M, topk, E, BM, local, 11)
        EM = sids.size
        wdt, winit = ("i8", ("randint", -128, 128)) if i8 else ("u8", _finite_codes(False))
        add(Case(f"v1 vllm fused moe w8a8 {'int8' if i8 else 'fp8'} {dt} bias={bias} routed_weight={mulw} experts {local}",
                 F,
                 "_v1_fused_moe_w8a8", (_cdiv(EM, BM) * _cdiv(N, BN),),
                 [Buf("a_ptr", wdt, M * K, winit), Buf("b_ptr", wdt, E * N * K, winit),
                  Out("c_ptr", dt, M * topk * N), Buf("bias_ptr", dt, E * N) if bias else Null("bias_ptr"),
                  Buf("a_scale_ptr", "fp32", M, _positive(1e-3, 1e-3)), Buf("b_scale_ptr", "fp32", E * N, _positive(1e-3, 1e-3)),
                  Buf("topk_weights_ptr", "fp32", M * topk, "rand"),
                  Buf("sorted_token_ids_ptr", "i32", EM, _fixed(sids)), Buf("expert_ids_ptr", "i32", eids.size, _fixed(eids)),
                  Buf("num_tokens_post_padded_ptr", "i32", 1, _fixed([padded])),
                  Scalar("N", N), Scalar("K", K), Scalar("EM", EM), Scalar("num_valid_tokens", M * topk),
                  Scalar("stride_am", K), Scalar("stride_ak", 1), Scalar("stride_be", N * K), Scalar("stride_bk", 1),
                  Scalar("stride_bn", K), Scalar("stride_cm", N), Scalar("stride_cn", 1), Scalar("stride_bse", N),
                  Scalar("stride_bsn", 1), Scalar("stride_bias_e", N)],
                 {"BLOCK_SIZE_M": BM, "BLOCK_SIZE_N": BN, "BLOCK_SIZE_K": BK, "GROUP_SIZE_M": 2,
                  "MUL_ROUTED_WEIGHT": mulw, "top_k": topk, "HAS_BIAS": bias, "USE_INT8": i8},
                 ref=fused_moe_w8a8(flat, local, topk, N, K)))

    # SGLang: moe sum reduce
    T, K, H = 7, 3, 100
    add(Case("v1 sglang moe sum reduce bf16", F, "_v1_moe_sum_reduce", (_cdiv(T, 4), _cdiv(H, 64)),
             [Buf("in_ptr", "bf16", T * K * H), Scalar("in_stride_0", K * H), Scalar("in_stride_1", H),
              Scalar("in_stride_2", 1), Out("out_ptr", "bf16", T * H), Scalar("out_stride_0", H),
              Scalar("out_stride_1", 1), Scalar("token_num", T), Scalar("topk_num", K), Scalar("hidden_dim", H)],
             {"routed_scaling_factor": 2.5, "BLOCK_M": 4, "BLOCK_DIM": 64, "NUM_STAGE": 2}, ref=moe_sum_reduce))

    # SGLang: fused softcap in place, grid-stride loop
    n = 1000
    add(Case("v1 sglang fused softcap in place fp16", F, "_v1_fused_softcap", (3,),
             [Buf("x_ptr", "fp16", n, scale=40.0, out=True), Scalar("softcapping_value", 30.0, "fp32"),
              Scalar("n_elements", n)], {"BLOCK_SIZE": 128}, ref=softcap))

    # SGLang: extend positions
    for has_prefix in (True, False):
        lens = [3, 70, 1, 9]
        add(Case(f"v1 sglang compute extend positions has_prefix={has_prefix}", F, "_v1_compute_extend_positions", (4,),
                 [Out("positions_ptr", "i64", sum(lens)), Out("extend_start_loc_ptr", "i32", 4),
                  Buf("extend_prefix_lens_ptr", "i32", 4, _fixed([0, 5, 17, 3])),
                  Buf("extend_seq_lens_ptr", "i32", 4, _fixed(lens))], {"has_prefix": has_prefix},
                 ref=extend_positions))

    # SGLang: req_to_token writes
    add(Case("v1 sglang write req_to_token", F, "_v1_write_req_to_token", (3,),
             [Buf("req_to_token_ptr", "i32", 5 * 80, ("randint", 0, 1000), out=True),
              Buf("req_pool_indices", "i64", 3, _fixed([3, 0, 4])), Buf("pre_lens", "i32", 3, _fixed([2, 0, 10])),
              Buf("seq_lens", "i32", 3, _fixed([40, 5, 47])), Buf("extend_lens", "i32", 3, _fixed([38, 5, 37])),
              Buf("out_cache_loc", "i32", 80, lambda rng, n: 3 * np.arange(n))],
             {"req_to_token_stride": 80}, ref=write_req_to_token))

    # SGLang: FlashMLA page indices
    for has_start in (True, False):
        args = [Buf("req_to_token_ptr", "i32", 3 * 300, ("randint", 0, 10000)),
                Buf("req_pool_indices_ptr", "i32", 2, _fixed([2, 0])),
                Buf("page_kernel_lens_ptr", "i32", 2, _fixed([130, 64])),
                Buf("kv_start_idx", "i32", 2, _fixed([5, 0])) if has_start else Null("kv_start_idx"),
                Out("kv_indices_ptr", "i32", 2 * 8)]
        consts = {"req_to_token_stride": 300, "kv_indices_stride": 8}
        if not has_start:
            consts["PAGED_SIZE"] = 32
        add(Case(f"v1 sglang flashmla page indices start={has_start}", F, "_v1_flashmla_page_indices", (2,),
                 args, consts, ref=flashmla_pages(has_start)))
    return out
