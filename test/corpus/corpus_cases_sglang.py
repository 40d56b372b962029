"""Cases of the SGLang-style serving kernels (sglang_style.py) and their
float64 numpy references."""
import numpy as np

from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_cases_quant import fp8_encode, fp8_table

F = "sglang_style.py"
FP8_MAX = 448.0


def _ints(xs):
    return lambda rng, n: np.array(list(xs)[:n], dtype=np.int64)


def _distinct(hi):
    return lambda rng, n: rng.choice(hi, n, replace=False)


# ---- MoE align ------------------------------------------------------------------------------


def _topk_ids(E, topk):
    return lambda rng, n: np.concatenate([rng.choice(E, topk, replace=False) for _ in range(n // topk)])


def moe_align(v, c, s):
    n, E, BS = s["numel"], c["NUM_EXPERTS"], c["BLOCK_SIZE"]
    ids = v["topk_ids"][:n].astype(np.int64)
    out, eids = v["sorted_token_ids"].copy(), v["expert_ids"].copy()
    pos = 0
    for e in range(E):
        slots = np.flatnonzero(ids == e)
        out[pos:pos + slots.size] = slots
        nb = -(-slots.size // BS)
        eids[pos // BS:pos // BS + nb] = e
        pos += nb * BS
    return {"sorted_token_ids": out, "expert_ids": eids, "num_tokens_post_pad": np.array([pos])}


# ---- quantisation ---------------------------------------------------------------------------


def group_quant(v, c, s):
    gs, G, stride, cs = s["group_size"], s["groups_per_row"], s["y_row_stride"], s["y_s_col_stride"]
    T = v["y"].size // stride
    y = v["y"].reshape(T, stride)[:, :G * gs].reshape(T, G, gs).astype(np.float32)
    amax = np.maximum(np.abs(y).max(-1), np.float32(s["eps"]))
    sc = (amax / np.float32(FP8_MAX)).astype(np.float32)
    if c["SCALE_UE8M0"]:
        sc = np.exp2(np.ceil(np.log2(sc.astype(np.float64)))).astype(np.float32)
    q = np.clip(y / sc[..., None], np.float32(-FP8_MAX), np.float32(FP8_MAX))
    codes = fp8_encode(q.astype(np.float64), False).ravel()
    ys = np.full(v["y_s"].size, np.nan)
    if c["COLUMN_MAJOR_SCALES"]:
        for g in range(G):
            ys[g * cs:g * cs + T] = sc[:, g]
    else:
        ys[:T * G] = sc.ravel()
    return {"y_q": codes, "y_s": ys}


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def act_mul_quant(v, c, s):
    d, G, NG = s["d"], c["GROUP"], c["NUM_GROUPS"]
    x = v["x"].reshape(-1, s["stride_x"])
    gate, up = x[:, :d], x[:, d:2 * d]
    act = gate / (1.0 + np.exp(-gate)) if c["ACT"] == "silu" else _gelu_tanh(gate)
    y = (act * up).reshape(-1, NG, G)
    amax = np.maximum(np.abs(y).max(-1), s["eps"])
    sc = amax / s["fp8_max"]
    q = np.clip(y / sc[..., None], -s["fp8_max"], s["fp8_max"])
    return {"q": fp8_encode(q, False).ravel(), "s": sc.ravel()}


# ---- normalisation and rotary ---------------------------------------------------------------


def fused_add_rmsnorm(v, c, s):
    R, H = s["n_rows"], s["hidden"]
    x = v["x"].reshape(R, s["stride_x"])[:, :H]
    r = v["residual"].reshape(R, s["stride_r"])[:, :H]
    h = x + r
    w = v["w"] + (1.0 if c["GEMMA"] else 0.0)
    y = h / np.sqrt((h * h).mean(1, keepdims=True) + s["eps"]) * w
    res = v["residual"].reshape(R, s["stride_r"]).copy()
    res[:, :H] = h
    out = v["out"].reshape(R, s["stride_o"]).copy()
    out[:, :H] = y
    return {"residual": res.ravel(), "out": out.ravel()}


def rotary(v, c, s):
    hs, half = s["head_size"], c["HALF_ROT"]
    pos = v["positions"].astype(np.int64)
    cache = v["cos_sin_cache"].reshape(-1, s["cache_stride"])
    cos, sin = cache[pos, :half], cache[pos, half:2 * half]
    res = {}
    for name, nh, st in (("q", c["NUM_Q_HEADS"], s["q_token_stride"]),
                         ("k", c["NUM_KV_HEADS"], s["k_token_stride"])):
        x = v[name].reshape(-1, st).copy()
        T = x.shape[0]
        heads = x[:, :nh * hs].reshape(T, nh, hs)
        if c["IS_NEOX"]:
            i1, i2 = np.arange(half), np.arange(half) + half
        else:
            i1, i2 = 2 * np.arange(half), 2 * np.arange(half) + 1
        x1, x2 = heads[:, :, i1].copy(), heads[:, :, i2].copy()
        heads[:, :, i1] = x1 * cos[:, None] - x2 * sin[:, None]
        heads[:, :, i2] = x2 * cos[:, None] + x1 * sin[:, None]
        x[:, :nh * hs] = heads.reshape(T, -1)
        res[name] = x.ravel()
    return res


# ---- attention ------------------------------------------------------------------------------


def merge_states(v, c, s):
    D = c["HEAD_SIZE"]
    H = 3
    pl, sl = v["prefix_lse"].reshape(H, -1).copy(), v["suffix_lse"].reshape(H, -1).copy()
    T = pl.shape[1]
    pl[pl == np.inf], sl[sl == np.inf] = -np.inf, -np.inf
    m = np.maximum(pl, sl)
    pw, sw = np.exp(pl - m), np.exp(sl - m)
    tot = pw + sw
    po, so = v["prefix_out"].reshape(T, H, D), v["suffix_out"].reshape(T, H, D)
    o = po * (pw / tot).T[:, :, None] + so * (sw / tot).T[:, :, None]
    res = {"out": o.ravel()}
    if c["OUTPUT_LSE"]:
        res["out_lse"] = (np.log(tot) + m).ravel()
    return res


def decode_reduce(v, c, s):
    S, MB, Lv = c["NUM_KV_SPLITS"], c["MIN_BLOCK_KV"], c["Lv"]
    indptr = v["kv_indptr"].astype(np.int64)
    B, H = indptr.size - 1, s["stride_lse_b"] // s["stride_lse_h"]
    mo = v["mid_o"].reshape(B, H, S, -1)[..., :Lv]
    ml = v["mid_lse"].reshape(B, H, S)
    o = np.zeros((B, H, Lv))
    lse = np.zeros((B, H))
    for b in range(B):
        L = indptr[b + 1] - indptr[b]
        ps = -(-(-(-L // S)) // MB) * MB
        used = [k for k in range(S) if min(ps * k + ps, L) > ps * k]
        for h in range(H):
            lv = ml[b, h, used]
            m = lv.max()
            w = np.exp(lv - m)
            tot = w.sum()
            if c["HAS_SINK"]:
                tot += np.exp(v["sinks"][h] - m)
            o[b, h] = (w[:, None] * mo[b, h, used]).sum(0) / tot
            lse[b, h] = m + np.log(tot)
    return {"o": o.ravel(), "lse": lse.ravel()}


EXT_PREFIX, EXT_EXTEND = (10, 20), (21, 7)
EXT_H, EXT_KVH, EXT_LQ, EXT_LV, EXT_POOL = 4, 2, 48, 32, 48


def _custom_mask(rng, n):
    parts = []
    for p, e in zip(EXT_PREFIX, EXT_EXTEND):
        m = (rng.random((e, p + e)) < 0.6).astype(np.int64)
        m[np.arange(e), p + np.arange(e)] = 1
        parts.append(m.ravel())
    return np.concatenate(parts)[:n]


def extend_attention(v, c, s):
    H, KVH, Lq, Lv = EXT_H, EXT_KVH, EXT_LQ, EXT_LV
    qo, kvp = v["qo_indptr"].astype(np.int64), v["kv_indptr"].astype(np.int64)
    mask_ptr = v["mask_indptr"].astype(np.int64) if c["USE_CUSTOM_MASK"] else None
    q = v["Q_extend"].reshape(-1, H, Lq)
    ke, ve = v["K_extend"].reshape(-1, KVH, Lq), v["V_extend"].reshape(-1, KVH, Lv)
    kb, vb = v["K_buffer"].reshape(-1, KVH, Lq), v["V_buffer"].reshape(-1, KVH, Lv)
    o = v["O_extend"].reshape(-1, H, Lv).copy()
    cap, W = c["LOGIT_CAP"], c["SLIDING_WINDOW"]
    for b in range(qo.size - 1):
        P, E = kvp[b + 1] - kvp[b], qo[b + 1] - qo[b]
        locs = v["kv_indices"][kvp[b]:kvp[b + 1]].astype(np.int64)
        for h in range(H):
            kh = h // (H // KVH)
            keys = np.concatenate([kb[locs, kh], ke[qo[b]:qo[b + 1], kh]])
            vals = np.concatenate([vb[locs, kh], ve[qo[b]:qo[b + 1], kh]])
            sc = q[qo[b]:qo[b + 1], h] @ keys.T * s["sm_scale"]
            if cap > 0:
                sc = cap * np.tanh(sc / cap)
            i = np.arange(E)[:, None]
            j = np.arange(P + E)[None, :]
            if c["USE_CUSTOM_MASK"]:
                allowed = v["custom_mask"][mask_ptr[b]:mask_ptr[b] + E * (P + E)].reshape(E, P + E) != 0
            else:
                allowed = j <= P + i
            if W > 0:
                allowed = allowed & (P + i <= j + W)
            sc = np.where(allowed, sc, -np.inf)
            p = np.exp(sc - sc.max(1, keepdims=True))
            o[qo[b]:qo[b + 1], h] = (p @ vals) / p.sum(1, keepdims=True)
    return {"O_extend": o.ravel()}


# ---- KV cache, sampling ---------------------------------------------------------------------


def set_mla_kv(v, c, s):
    N, R = c["NOPE_DIM"], c["ROPE_DIM"]
    buf = v["kv_buffer"].reshape(-1, s["buffer_stride"]).copy()
    loc = v["loc"].astype(np.int64)
    buf[loc, :N] = v["k_nope"].reshape(-1, s["nope_stride"])[:, :N]
    buf[loc, N:N + R] = v["k_rope"].reshape(-1, s["rope_stride"])[:, :R]
    return {"kv_buffer": buf.ravel()}


def flat_kv_indices(v, c, s):
    r2t = v["req_to_token"].reshape(-1, s["req_to_token_stride"])
    out = v["kv_indices"].copy()
    for i, (req, n, off) in enumerate(zip(v["req_pool_indices"].astype(np.int64),
                                          v["seq_lens"].astype(np.int64),
                                          v["kv_indptr"].astype(np.int64))):
        st = int(v["kv_start_idx"][i]) if c["HAS_START"] else 0
        out[off:off + n] = r2t[req, st:st + n]
    return {"kv_indices": out}


TS_ROWS, TS_VOCAB = 4, 300


def _sorted_grid_probs(rng, n):
    """Rows of probabilities on a 2^-12 grid, each summing to one, sorted
    descending: every partial sum is exact in fp32."""
    rows = []
    for _ in range(n // TS_VOCAB):
        w = rng.exponential(size=TS_VOCAB) ** 3
        q = np.floor(w / w.sum() * 4096)
        q[np.argmax(q)] += 4096 - q.sum()
        rows.append(np.sort(q)[::-1] / 4096)
    return np.concatenate(rows)


def _perms(rng, n):
    return np.concatenate([rng.permutation(TS_VOCAB) for _ in range(n // TS_VOCAB)])


def top_k_top_p_min_p(v, c, s):
    V, st = s["vocab"], s["stride"]
    out = v["out"].copy()
    for r in range(v["top_ks"].size):
        p = v["probs_sort"][r * st:r * st + V]
        idx = v["probs_idx"][r * st:r * st + V].astype(np.int64)
        csum = np.cumsum(p)
        keep = (np.arange(V) < v["top_ks"][r]) & (csum - p <= np.float32(v["top_ps"][r]))
        if c["NEED_MIN_P"]:
            keep &= p >= np.float32(p.max()) * np.float32(v["min_ps"][r])
        kept = np.where(keep, p, 0.0)
        out[r * st + idx] = kept / kept.sum()
    return {"out": out}


# ---- batch 2 ---------------------------------------------------------------------------------

MOE_T, MOE_TOPK, MOE_E, MOE_N, MOE_K, MOE_BM, MOE_GN, MOE_GK = 8, 2, 4, 48, 96, 16, 16, 64
MOE_LOCAL = np.array([0, 1, 2, -1])  # expert 3 lives on another rank


def _moe_layout():
    rng = np.random.default_rng(11)
    ids = np.concatenate([rng.choice(MOE_E, MOE_TOPK, replace=False) for _ in range(MOE_T)])
    numel = ids.size
    cap = -(-(numel + MOE_E * (MOE_BM - 1)) // MOE_BM) * MOE_BM
    sorted_ids = np.full(cap, numel)
    eids = np.full(cap // MOE_BM, -1)
    pos = 0
    for e in range(MOE_E):
        slots = np.flatnonzero(ids == e)
        sorted_ids[pos:pos + slots.size] = slots
        nb = -(-slots.size // MOE_BM)
        eids[pos // MOE_BM:pos // MOE_BM + nb] = MOE_LOCAL[e]
        pos += nb * MOE_BM
    return ids, sorted_ids, eids, pos


def _moderate_fp8_codes(rng, n):
    t = fp8_table(False)
    ok = np.flatnonzero(np.isfinite(t) & (np.abs(t) >= 1 / 64) & (np.abs(t) <= 4))
    return rng.choice(ok, n)


def fused_moe_fp8(v, c, s):
    t = fp8_table(False)
    ids, _, _, _ = _moe_layout()
    N, K, gn, gk, tk = s["N"], s["K"], c["group_n"], c["group_k"], c["top_k"]
    a = t[v["a"].astype(np.int64)].reshape(-1, K)
    b = t[v["b"].astype(np.int64)].reshape(MOE_E, N, K)
    asc = np.repeat(v["a_scale"].reshape(a.shape[0], -1), gk, axis=1)[:, :K]
    bsc = np.repeat(np.repeat(v["b_scale"].reshape(MOE_E, -(-N // gn), -1), gn, axis=1), gk, axis=2)[:, :N, :K]
    out = np.zeros((ids.size, N))
    for slot, e in enumerate(ids):
        if MOE_LOCAL[e] < 0:
            continue
        out[slot] = ((a[slot // tk] * asc[slot // tk])[None, :] * b[e] * bsc[e]).sum(1)
        if c["MUL_ROUTED_WEIGHT"]:
            out[slot] *= v["topk_weights"][slot]
    return {"c": out.ravel()}


def rope_gptj(v, c, s):
    H, D = c["NUM_HEADS"], c["HEAD"]
    x = v["x"].reshape(-1, H, D).copy()
    cache = v["cos_sin_cache"].reshape(-1, s["cache_stride"])
    pos = v["positions"].astype(np.int64)
    cos, sin = cache[pos, None, :D // 2], cache[pos, None, D // 2:D]
    x1, x2 = x[..., 0::2].copy(), x[..., 1::2].copy()
    x[..., 0::2] = x1 * cos - x2 * sin
    x[..., 1::2] = x2 * cos + x1 * sin
    return {"x": x.ravel()}


def quant_int8_round(v, c, s):
    N = s["N"]
    x = v["x"].reshape(-1, s["stride_x"])[:, :N]
    amax = np.maximum(np.abs(x).max(1, keepdims=True), 1e-10)
    y = x * (127 / amax)
    q = np.sign(y) * np.floor(np.abs(y) + 0.5)
    return {"xq": q.ravel(), "scale": (amax / 127).ravel()}


GD_B, GD_QH, GD_KVH, GD_LK, GD_LV, GD_S, GD_POOL = 2, 8, 2, 48, 32, 4, 96
GD_LENS = (37, 50)


def grouped_decode(v, c, s):
    B, QH, KVH, Lk, Lv, S = GD_B, GD_QH, GD_KVH, GD_LK, GD_LV, GD_S
    q = v["Q"].reshape(B, QH, Lk)
    kb, vb = v["K_buffer"].reshape(-1, KVH, Lk), v["V_buffer"].reshape(-1, KVH, Lv)
    indptr = v["kv_indptr"].astype(np.int64)
    o = np.full((B, QH, S, Lv), np.nan)
    lse = np.full((B, QH, S), np.nan)
    cap, W = c["LOGIT_CAP"], c["SLIDING_WINDOW"]
    for b in range(B):
        L = indptr[b + 1] - indptr[b]
        locs = v["kv_indices"][indptr[b]:indptr[b + 1]].astype(np.int64)
        per = -(-L // S)
        for sp in range(S):
            lo, hi = per * sp, min(per * sp + per, L)
            if W > 0:
                lo = max(lo, L - 1 - W)
            if hi <= lo:
                continue
            for h in range(QH):
                kh = h // (QH // KVH)
                sc = kb[locs[lo:hi], kh] @ q[b, h] * s["sm_scale"]
                if cap > 0:
                    sc = cap * np.tanh(sc / cap)
                m = sc.max()
                p = np.exp(sc - m)
                o[b, h, sp] = p @ vb[locs[lo:hi], kh] / p.sum()
                lse[b, h, sp] = m + np.log(p.sum())
    return {"Att_Out": o.ravel(), "Att_Lse": lse.ravel()}


def cases():
    out = []
    add = out.append

    # moe align
    T, K, E = 40, 3, 8
    add(Case("sglang moe align block size", F, "_sg_moe_align_block_size", (1,),
             [Buf("topk_ids", "i32", T * K, _topk_ids(E, K)),
              Buf("sorted_token_ids", "i32", 256, ("fill", T * K), out=True),
              Buf("expert_ids", "i32", 16, ("fill", -1), out=True),
              Out("num_tokens_post_pad", "i32", 1), Scalar("numel", T * K)],
             {"NUM_EXPERTS": E, "BLOCK_SIZE": 16, "NUMEL_P2": 128, "MAX_BLOCKS": 16},
             ref=moe_align))

    # per-token-group fp8 quant
    T, G, GS = 6, 4, 128
    for ue8m0, colmajor, dt in ((False, True, "fp16"), (True, False, "bf16")):
        add(Case(f"sglang token-group fp8 quant ue8m0={ue8m0} colmajor={colmajor}", F,
                 "_sg_per_token_group_quant_fp8", (T * G,),
                 [Buf("y", dt, T * G * GS, scale=3.0), Out("y_q", "u8", T * G * GS),
                  Out("y_s", "fp32", G * 8), Scalar("group_size", GS), Scalar("groups_per_row", G),
                  Scalar("y_row_stride", G * GS), Scalar("y_s_col_stride", 8),
                  Scalar("eps", 1e-10, "fp32"), Scalar("fp8_min", -FP8_MAX, "fp32"),
                  Scalar("fp8_max", FP8_MAX, "fp32")],
                 {"BLOCK": GS, "SCALE_UE8M0": ue8m0, "COLUMN_MAJOR_SCALES": colmajor},
                 ref=group_quant))

    # activation and mul + group quant
    T, D, GR = 4, 256, 64
    for act, dt in (("silu", "bf16"), ("gelu", "fp16")):
        add(Case(f"sglang {act}-and-mul group fp8 quant", F, "_sg_act_and_mul_group_quant", (T,),
                 [Buf("x", dt, T * 2 * D, scale=2.0), Out("q", "u8", T * D), Out("s", "fp32", T * D // GR),
                  Scalar("d", D), Scalar("stride_x", 2 * D), Scalar("stride_q", D),
                  Scalar("stride_s", D // GR), Scalar("fp8_max", FP8_MAX, "fp32"),
                  Scalar("eps", 1e-10, "fp32")],
                 {"ACT": act, "GROUP": GR, "NUM_GROUPS": D // GR},
                 ref_tol={"u8": (1, 0)}, ref=act_mul_quant))

    # fused add rmsnorm
    R, H = 5, 300
    for gemma, dt in ((False, "bf16"), (True, "fp16")):
        add(Case(f"sglang fused add rmsnorm gemma={gemma}", F, "_sg_fused_add_rmsnorm", (3,),
                 [Buf("x", dt, R * 320), Buf("residual", dt, R * H, out=True),
                  Buf("w", dt, H, "rand"), Out("out", dt, R * H), Scalar("n_rows", R),
                  Scalar("hidden", H), Scalar("stride_x", 320), Scalar("stride_r", H),
                  Scalar("stride_o", H), Scalar("eps", 1e-6, "fp32")],
                 {"BLOCK_M": 2, "BLOCK_N": 512, "GEMMA": gemma}, ref=fused_add_rmsnorm))

    # rotary with cos/sin cache
    T, QH, KH, HS = 7, 6, 2, 64
    for neox, half, bd in ((True, 16, 16), (False, 24, 32)):
        add(Case(f"sglang rotary cos_sin_cache neox={neox}", F, "_sg_rotary_qk_cache", (T,),
                 [Buf("positions", "i64", T, ("randint", 0, 32)),
                  Buf("q", "fp16", T * QH * HS, out=True), Buf("k", "bf16", T * KH * HS, out=True),
                  Buf("cos_sin_cache", "fp32", 32 * 2 * half), Scalar("q_token_stride", QH * HS),
                  Scalar("k_token_stride", KH * HS), Scalar("head_size", HS),
                  Scalar("cache_stride", 2 * half)],
                 {"NUM_Q_HEADS": QH, "NUM_KV_HEADS": KH, "HALF_ROT": half, "BLOCK_D": bd,
                  "BLOCK_H": 4, "IS_NEOX": neox}, ref=rotary))

    # merge attention states
    T, H, D = 5, 3, 40

    def lse_with_inf(rng, n):
        x = rng.standard_normal(n) * 3.0
        x[2] = np.inf
        return x

    for out_lse in (True, False):
        add(Case(f"sglang merge attn states lse={out_lse}", F, "_sg_merge_attn_states", (T, H),
                 [Out("out", "fp16", T * H * D),
                  Out("out_lse", "fp32", H * T) if out_lse else Null("out_lse_ptr"),
                  Buf("prefix_out", "fp16", T * H * D), Buf("prefix_lse", "fp32", H * T, lse_with_inf),
                  Buf("suffix_out", "fp16", T * H * D), Buf("suffix_lse", "fp32", H * T, scale=3.0)],
                 {"HEAD_SIZE": D, "PADDED_HEAD_SIZE": 64, "OUTPUT_LSE": out_lse},
                 ref=merge_states))

    # decode stage 2 over kv splits
    B, H, S, Lv = 3, 2, 4, 40
    for sink in (False, True):
        add(Case(f"sglang decode softmax reducev sink={sink}", F, "_sg_decode_softmax_reducev", (B, H),
                 [Buf("mid_o", "fp32", B * H * S * Lv), Buf("mid_lse", "fp32", B * H * S, scale=2.0),
                  Out("o", "fp16", B * H * Lv), Out("lse", "fp32", B * H),
                  Buf("kv_indptr", "i32", B + 1, _ints([0, 5, 6, 43])),
                  Buf("sinks", "fp32", H) if sink else Null("sinks_ptr"),
                  Scalar("stride_mid_ob", H * S * Lv), Scalar("stride_mid_oh", S * Lv),
                  Scalar("stride_mid_os", Lv), Scalar("stride_lse_b", H * S), Scalar("stride_lse_h", S),
                  Scalar("stride_ob", H * Lv), Scalar("stride_oh", Lv)],
                 {"NUM_KV_SPLITS": S, "MIN_BLOCK_KV": 8, "BLOCK_DV": 64, "Lv": Lv, "HAS_SINK": sink},
                 ref=decode_reduce))

    # extend attention
    NT = sum(EXT_EXTEND)
    NP = sum(EXT_PREFIX)
    qo = np.concatenate([[0], np.cumsum(EXT_EXTEND)])
    kvp = np.concatenate([[0], np.cumsum(EXT_PREFIX)])
    msz = [e * (p + e) for p, e in zip(EXT_PREFIX, EXT_EXTEND)]
    H, KVH, Lq, Lv, POOL = EXT_H, EXT_KVH, EXT_LQ, EXT_LV, EXT_POOL
    for label, cap, win, custom in (("causal logit cap", 2.0, -1, False),
                                    ("sliding window", 0.0, 8, False),
                                    ("custom mask", 0.0, -1, True)):
        add(Case(f"sglang extend attention {label}", F, "_sg_extend_attention", (2, H, 2),
                 [Buf("Q_extend", "fp16", NT * H * Lq), Buf("K_extend", "fp16", NT * KVH * Lq),
                  Buf("V_extend", "fp16", NT * KVH * Lv), Out("O_extend", "fp16", NT * H * Lv),
                  Buf("K_buffer", "fp16", POOL * KVH * Lq), Buf("V_buffer", "fp16", POOL * KVH * Lv),
                  Buf("qo_indptr", "i32", 3, _ints(qo)), Buf("kv_indptr", "i32", 3, _ints(kvp)),
                  Buf("kv_indices", "i64", NP, _distinct(POOL)),
                  Buf("custom_mask", "u8", sum(msz), _custom_mask) if custom else Null("custom_mask"),
                  Buf("mask_indptr", "i64", 2, _ints([0, msz[0]])) if custom else Null("mask_indptr"),
                  Scalar("sm_scale", Lq ** -0.5, "fp32"),
                  Scalar("stride_qbs", H * Lq), Scalar("stride_qh", Lq),
                  Scalar("stride_kbs", KVH * Lq), Scalar("stride_kh", Lq),
                  Scalar("stride_vbs", KVH * Lv), Scalar("stride_vh", Lv),
                  Scalar("stride_obs", H * Lv), Scalar("stride_oh", Lv),
                  Scalar("stride_buf_kbs", KVH * Lq), Scalar("stride_buf_kh", Lq),
                  Scalar("stride_buf_vbs", KVH * Lv), Scalar("stride_buf_vh", Lv)],
                 {"LOGIT_CAP": cap, "SLIDING_WINDOW": win, "KV_GROUP": H // KVH, "Lq": Lq, "Lv": Lv,
                  "BLOCK_DMODEL": 64, "BLOCK_DV": 32, "BLOCK_M": 16, "BLOCK_N": 16,
                  "USE_CUSTOM_MASK": custom},
                 tol={"fp16": (2e-2, 2e-2)}, ref=extend_attention))

    # MLA kv buffer write
    T, NOPE, ROPE, SLOTS = 5, 128, 64, 16
    add(Case("sglang set mla kv buffer", F, "_sg_set_mla_kv_buffer", (T, 3),
             [Out("kv_buffer", "fp16", SLOTS * (NOPE + ROPE)), Buf("k_nope", "fp16", T * NOPE),
              Buf("k_rope", "fp16", T * ROPE), Buf("loc", "i64", T, _distinct(SLOTS)),
              Scalar("buffer_stride", NOPE + ROPE), Scalar("nope_stride", NOPE),
              Scalar("rope_stride", ROPE)],
             {"NOPE_DIM": NOPE, "ROPE_DIM": ROPE, "BLOCK": 64}, ref=set_mla_kv))

    # req_to_token -> flat kv indices
    lens = [37, 5, 64]
    ind = np.concatenate([[0], np.cumsum(lens)])
    for has_start in (True, False):
        add(Case(f"sglang create flat kv indices start={has_start}", F, "_sg_create_flat_kv_indices", (3,),
                 [Buf("req_to_token", "i32", 8 * 128, ("randint", 0, 10000)),
                  Buf("req_pool_indices", "i32", 3, _distinct(8)), Buf("seq_lens", "i32", 3, _ints(lens)),
                  Buf("kv_indptr", "i32", 4, _ints(ind)),
                  Buf("kv_start_idx", "i64", 3, _ints([10, 50, 64])) if has_start else Null("kv_start_idx_ptr"),
                  Out("kv_indices", "i32", int(ind[-1])), Scalar("req_to_token_stride", 128)],
                 {"BLOCK": 16, "HAS_START": has_start}, ref=flat_kv_indices))

    # top-k / top-p / min-p renormalisation
    V, R = TS_VOCAB, TS_ROWS
    for min_p in (False, True):
        add(Case(f"sglang top-k top-p min-p renorm min_p={min_p}", F, "_sg_top_k_top_p_min_p_renorm", (R,),
                 [Buf("probs_sort", "fp32", R * V, _sorted_grid_probs), Buf("probs_idx", "i32", R * V, _perms),
                  Out("out", "fp32", R * V), Buf("top_ks", "i32", R, _ints([5, 300, 50, 1])),
                  Buf("top_ps", "fp32", R, lambda rng, n: np.array([0.5, 0.9, 0.3, 1.0])[:n] + 2.0 ** -13),
                  Buf("min_ps", "fp32", R, lambda rng, n: np.array([0.0, 0.05123, 0.1234567, 0.2])[:n])
                  if min_p else Null("min_ps_ptr"),
                  Scalar("vocab", V), Scalar("stride", V)],
                 {"BLOCK_V": 512, "NEED_MIN_P": min_p}, ref=top_k_top_p_min_p))
    # fused MoE GEMM, block fp8
    ids, sorted_ids, eids, post = _moe_layout()
    T, E, N, K = MOE_T, MOE_E, MOE_N, MOE_K
    KG = -(-K // MOE_GK)
    for mul_w in (True, False):
        add(Case(f"sglang fused moe fp8 block-scaled routed_weight={mul_w}", F, "_sg_fused_moe_fp8_block",
                 (sorted_ids.size // MOE_BM * 2,),
                 [Buf("a", "u8", T * K, _moderate_fp8_codes), Buf("b", "u8", E * N * K, _moderate_fp8_codes),
                  Out("c", "bf16", ids.size * N), Buf("a_scale", "fp32", T * KG, "rand"),
                  Buf("b_scale", "fp32", E * (N // MOE_GN) * KG, "rand"),
                  Buf("topk_weights", "fp32", ids.size, "rand"),
                  Buf("sorted_token_ids", "i32", sorted_ids.size, _ints(sorted_ids)),
                  Buf("expert_ids", "i32", eids.size, _ints(eids)),
                  Buf("num_tokens_post_padded", "i32", 1, _ints([post])),
                  Scalar("N", N), Scalar("K", K), Scalar("EM", sorted_ids.size), Scalar("num_valid_tokens", ids.size),
                  Scalar("stride_am", K), Scalar("stride_ak", 1), Scalar("stride_be", N * K),
                  Scalar("stride_bk", 1), Scalar("stride_bn", K), Scalar("stride_cm", N), Scalar("stride_cn", 1),
                  Scalar("stride_asm", KG), Scalar("stride_ask", 1),
                  Scalar("stride_bse", (N // MOE_GN) * KG), Scalar("stride_bsk", 1),
                  Scalar("stride_bsn", KG)],
                 {"group_n": MOE_GN, "group_k": MOE_GK, "BLOCK_SIZE_M": MOE_BM, "BLOCK_SIZE_N": 32,
                  "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 2, "MUL_ROUTED_WEIGHT": mul_w, "top_k": MOE_TOPK},
                 ref=fused_moe_fp8))

    # GPT-J rotary through split/join
    add(Case("sglang rope gptj split/join", F, "_sg_rope_gptj_split_join", (5,),
             [Buf("x", "fp16", 5 * 4 * 32, out=True), Buf("positions", "i64", 5, ("randint", 0, 16)),
              Buf("cos_sin_cache", "fp32", 16 * 32), Scalar("stride_t", 128), Scalar("stride_h", 32),
              Scalar("cache_stride", 32)], {"NUM_HEADS": 4, "HEAD": 32}, ref=rope_gptj))

    # int8 per-token quant, libdevice round
    add(Case("sglang per-token int8 quant libdevice round", F, "_sg_per_token_quant_int8", (4,),
             [Buf("x", "bf16", 4 * 1000), Out("xq", "i8", 4 * 1000), Out("scale", "fp32", 4),
              Scalar("stride_x", 1000), Scalar("stride_xq", 1000), Scalar("N", 1000)],
             {"BLOCK": 1024}, ref_tol={"i8": (1, 0)}, ref=quant_int8_round))

    # grouped decode attention stage 1
    B, QH, KVH, Lk, Lv, S = GD_B, GD_QH, GD_KVH, GD_LK, GD_LV, GD_S
    gind = np.concatenate([[0], np.cumsum(GD_LENS)])
    for label, cap, win in (("", 0.0, -1), (" window logit cap", 1.5, 20)):
        add(Case(f"sglang grouped decode stage1{label}", F, "_sg_grouped_decode_stage1", (B, 2, S),
                 [Buf("Q", "fp16", B * QH * Lk), Buf("K_buffer", "fp16", GD_POOL * KVH * Lk),
                  Buf("V_buffer", "fp16", GD_POOL * KVH * Lv), Scalar("sm_scale", Lk ** -0.5, "fp32"),
                  Buf("kv_indptr", "i32", B + 1, _ints(gind)),
                  Buf("kv_indices", "i32", int(gind[-1]), _distinct(GD_POOL)),
                  Out("Att_Out", "fp32", B * QH * S * Lv), Out("Att_Lse", "fp32", B * QH * S),
                  Scalar("stride_qbs", QH * Lk), Scalar("stride_qh", Lk),
                  Scalar("stride_buf_kbs", KVH * Lk), Scalar("stride_buf_kh", Lk),
                  Scalar("stride_buf_vbs", KVH * Lv), Scalar("stride_buf_vh", Lv),
                  Scalar("stride_mid_ob", QH * S * Lv), Scalar("stride_mid_oh", S * Lv),
                  Scalar("stride_mid_os", Lv)],
                 {"kv_group_num": QH // KVH, "q_head_num": QH, "BLOCK_DMODEL": 64, "BLOCK_DV": 32,
                  "BLOCK_N": 16, "BLOCK_H": 16, "NUM_KV_SPLITS": S, "Lk": Lk, "Lv": Lv,
                  "LOGIT_CAP": cap, "SLIDING_WINDOW": win},
                 tol={"fp32": (2e-3, 2e-3)}, ref=grouped_decode))
    return out
