"""Cases of the index-heavy and attention-like kernels (breadth_indexing*.py)
and their float64 numpy references."""
import numpy as np

from corpus_cases import Buf, Case, Null, Out, Scalar

F = "breadth_indexing.py"


def _ints(*xs):
    return lambda rng, n: np.array(xs[:n], dtype=np.int64)


# ---- references ------------------------------------------------------------------------------


def _softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def paged_decode(v, c, s):
    G, D, P = c["NUM_Q_PER_KV"], c["HEAD_DIM"], c["PAGE_SIZE"]
    QH = s["stride_q_seq"] // D
    KVH = QH // G
    lens = v["seq_lens"].astype(np.int64)
    out = v["out"].reshape(len(lens), QH, D).copy()
    kc = v["k_cache"].reshape(-1, P, KVH, D)
    vc = v["v_cache"].reshape(-1, P, KVH, D)
    bt = v["block_tables"].astype(np.int64).reshape(len(lens), -1)
    q = v["q"].reshape(len(lens), QH, D)
    for b, n in enumerate(lens):
        if n == 0:
            continue
        toks = np.arange(n)
        pages = bt[b, toks // P]
        for h in range(QH):
            k = kc[pages, toks % P, h // G]
            vv = vc[pages, toks % P, h // G]
            p = _softmax_rows(k @ q[b, h] * s["scale"])
            out[b, h] = p @ vv
    return {"out": out.ravel()}


def varlen_prefill(v, c, s):
    D, W, causal = c["HEAD_DIM"], c["WINDOW"], c["IS_CAUSAL"]
    H = s["stride_tok"] // D
    cu = v["cu_seqlens"].astype(np.int64)
    q, k, vv = (v[n].reshape(-1, H, D) for n in ("q", "k", "v"))
    o = v["o"].reshape(-1, H, D).copy()
    lse = v["lse"].reshape(H, -1).copy()
    for b in range(len(cu) - 1):
        lo, hi = cu[b], cu[b + 1]
        n = hi - lo
        if n == 0:
            continue
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        keep = np.ones((n, n), dtype=bool)
        if causal:
            keep &= i >= j
        if W > 0:
            keep &= i - j < W
        for h in range(H):
            sc = q[lo:hi, h] @ k[lo:hi, h].T * s["sm_scale"]
            sc = np.where(keep, sc, -np.inf)
            m = sc.max(axis=1, keepdims=True)
            e = np.exp(sc - m)
            o[lo:hi, h] = e @ vv[lo:hi, h] / e.sum(axis=1, keepdims=True)
            lse[h, lo:hi] = m[:, 0] + np.log(e.sum(axis=1))
    return {"o": o.ravel(), "lse": lse.ravel()}


def merge_splits(v, c, s):
    S, D = c["MAX_SPLITS"], c["HEAD_DIM"]
    n = v["num_splits"].astype(np.int64)
    po = v["part_o"].reshape(len(n), S, D)
    pl = v["part_lse"].reshape(len(n), S)
    out = np.zeros((len(n), D))
    for h, k in enumerate(n):
        w = np.exp(pl[h, :k] - pl[h, :k].max())
        out[h] = (w / w.sum()) @ po[h, :k]
    return {"out": out.ravel()}


def chunk_local_cumsum(v, c, s):
    H, S, BT = c["H"], c["S"], c["BT"]
    cu = v["cu_seqlens"].astype(np.int64)
    g = v["g"].reshape(-1, H, S)
    o = np.zeros_like(g)
    for b in range(len(cu) - 1):
        for t0 in range(cu[b], cu[b + 1], BT):
            blk = g[t0:min(t0 + BT, cu[b + 1])]
            cs = np.cumsum(blk[::-1], axis=0)[::-1] if c["REVERSE"] else np.cumsum(blk, axis=0)
            o[t0:t0 + len(blk)] = cs
    if c["HAS_SCALE"]:
        o *= s["scale"]
    return {"o": o.ravel()}


def chunk_indices(cu, bt):
    """(sequence, chunk) pairs of every chunk of bt tokens, as flat ints."""
    out = []
    for b in range(len(cu) - 1):
        n = cu[b + 1] - cu[b]
        out += [x for i in range(-(-n // bt)) for x in (b, i)]
    return out


def chunk_state(v, c, s):
    H, K, V, BT = c["H"], c["K"], c["V"], c["BT"]
    T = s["T"]
    k = v["k"].reshape(-1, T, H, K)
    vv = v["v"].reshape(-1, T, H, V)
    g = v["g"].reshape(-1, T, H)
    B = k.shape[0]
    NT = -(-T // BT)
    h_out = np.zeros((B, NT, H, K, V))
    ht = np.zeros((B, H, K, V))
    for b in range(B):
        for hh in range(H):
            st = v["h0"].reshape(B, H, K, V)[b, hh].copy() if c["USE_INITIAL_STATE"] else np.zeros((K, V))
            for t in range(NT):
                h_out[b, t, hh] = st
                lo, hi = t * BT, min((t + 1) * BT, T)
                gl = g[b, hi - 1, hh]
                st = st * np.exp(gl) + k[b, lo:hi, hh].T @ (vv[b, lo:hi, hh] * np.exp(gl - g[b, lo:hi, hh])[:, None])
            ht[b, hh] = st
    out = {"h": h_out.ravel()}
    if c["STORE_FINAL_STATE"]:
        out["ht"] = ht.ravel()
    return out


def selective_scan(v, c, s):
    N = c["DSTATE"]
    L, Dm = s["seqlen"], s["dim"]
    x = v["x"].reshape(-1, L, Dm)
    dt = v["dt"].reshape(-1, L, Dm)
    A = v["A"].reshape(Dm, N)
    Bm = v["B"].reshape(-1, L, N)
    Cm = v["C"].reshape(-1, L, N)
    if c["DT_SOFTPLUS"]:
        dt = np.where(dt <= 20.0, np.log1p(np.exp(dt)), dt)
    out = np.zeros_like(x)
    for b in range(x.shape[0]):
        st = np.zeros((Dm, N))
        for t in range(L):
            st = st * np.exp(A * dt[b, t][:, None]) + (dt[b, t] * x[b, t])[:, None] * Bm[b, t][None, :]
            y = st @ Cm[b, t]
            if c["HAS_D"]:
                y = y + x[b, t] * v["D"]
            if c["HAS_Z"]:
                z = v["z"].reshape(-1, L, Dm)[b, t]
                y = y * z / (1.0 + np.exp(-z))
            out[b, t] = y
    return {"out": out.ravel()}


def batched_dot(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    a = v["a"].reshape(-1, M, K)
    b = v["b"].reshape(-1, K, N)
    cc = a @ b
    return {"c": cc.ravel(), "ct": cc.transpose(0, 2, 1).ravel()}


def rotary(v, c, s):
    D = c["HEAD_DIM"]
    half = D // 2
    T, H = s["num_tokens"], s["num_heads"]
    q = v["q"].reshape(T, H, D).copy()
    cs = v["cos_sin"].reshape(-1, D)
    pos = v["positions"].astype(np.int64)
    cos, sin = cs[pos, :half][:, None, :], cs[pos, half:][:, None, :]
    if c["IS_NEOX"]:
        x1, x2 = q[..., :half].copy(), q[..., half:].copy()
        q[..., :half], q[..., half:] = x1 * cos - x2 * sin, x2 * cos + x1 * sin
    else:
        x1, x2 = q[..., 0::2].copy(), q[..., 1::2].copy()
        q[..., 0::2], q[..., 1::2] = x1 * cos - x2 * sin, x2 * cos + x1 * sin
    return {"q": q.ravel()}


def expert_scatter(v, c, s):
    E = s["num_experts"]
    ids = v["topk_ids"].astype(np.int64)
    counts = v["counts"].copy()
    mx = v["max_weight"].copy()
    for i, w in zip(ids, v["topk_weights"]):
        counts[i] += 1
        mx[i] = max(mx[i], w)
    assert ids.max() < E
    return {"counts": counts, "max_weight": mx, "token_expert_pos": ids.astype(np.float64)}


def reverse_chunk_state(v, c, s):
    K, V, BT = c["K"], c["V"], c["BT"]
    T, decay = s["T"], s["decay"]
    k = v["k"].reshape(-1, T, K)
    vv = v["v"].reshape(-1, T, V)
    NT = -(-T // BT)
    dh = np.zeros((k.shape[0], NT, K, V))
    for b in range(k.shape[0]):
        st = np.zeros((K, V))
        for t in range(NT - 1, -1, -1):
            dh[b, t] = st
            st = st * decay + k[b, t * BT:(t + 1) * BT].T @ vv[b, t * BT:(t + 1) * BT]
    return {"dh": dh.ravel()}


def tile_stats(v, c, s):
    M, N = s["M"], s["N"]
    x = v["x"].reshape(M, N)
    return {"rmax": x.max(axis=1), "ridx": x.argmax(axis=1).astype(np.float64),
            "rsuffix": np.cumsum(x[:, ::-1], axis=1)[:, ::-1].ravel()}


def desc_scores(v, c, s):
    D, T = c["D"], s["T"]
    q = v["q"].reshape(-1, T, D)
    k = v["k"].reshape(-1, T, D)
    return {"s": (q @ k.transpose(0, 2, 1) * s["scale"]).ravel()}


def split_sum(v, c, s):
    return {"out": np.array([v["x"].sum()]), "counter": np.zeros(1)}


def chunk_scan(v, c, s):
    T, C = s["T"], s["C"]
    a, x = v["a"].reshape(T, C), v["x"].reshape(T, C)
    h = np.zeros((T, C))
    st = np.zeros(C)
    for t in range(T):
        st = a[t] * st + x[t]
        h[t] = st
    return {"h": h.ravel(), "best": h.max(axis=0), "best_t": h.argmax(axis=0).astype(np.float64)}


def causal_conv1d(v, c, s):
    W = c["WIDTH"]
    L, Dm = s["seqlen"], s["dim"]
    sb, sd, st = s["stride_x_b"], s["stride_x_d"], s["stride_x_t"]
    B = v["x"].size // (L * Dm)
    b_, d_, t_ = np.meshgrid(np.arange(B), np.arange(Dm), np.arange(L), indexing="ij")
    idx = b_ * sb + d_ * sd + t_ * st
    x = v["x"][idx]
    if c["HAS_INIT"]:
        pre = v["init_state"].reshape(B, Dm, W - 1)
    else:
        pre = np.zeros((B, Dm, W - 1))
    xp = np.concatenate([pre, x], axis=2)
    w = v["w"].reshape(Dm, W)
    y = np.zeros((B, Dm, L))
    for i in range(W):
        y += xp[:, :, i:i + L] * w[None, :, i:i + 1]
    if c["HAS_BIAS"]:
        y += v["bias"][None, :, None]
    if c["SILU"]:
        y = y / (1.0 + np.exp(-y))
    out = v["out"].copy()
    out[idx] = y
    return {"out": out}


def block_ptr_3d(v, c, s):
    B, R, C = s["B"], s["R"], s["C"]
    return {"y": (v["x"].reshape(B, R, C).transpose(0, 2, 1) * 2).ravel()}


def window_decode(v, c, s):
    D, W = c["D"], s["window"]
    q = v["q"].reshape(-1, D)
    k = v["k"].reshape(-1, D)
    vv = v["v"].reshape(-1, D)
    o = np.zeros_like(q)
    for i, p in enumerate(v["q_pos"].astype(np.int64)):
        lo = max(p - W + 1, 0)
        sc = k[lo:p + 1] @ q[i] * s["scale"]
        e = np.exp(sc - sc.max())
        o[i] = e @ vv[lo:p + 1] / e.sum()
    return {"o": o.ravel()}


def lookback(v, c, s):
    D, L, T = c["D"], c["LOOKBACK"], s["T"]
    x = v["x"].reshape(T, D)
    bp = np.full((T, D), np.nan)
    desc = np.zeros((T, D))
    bp[L:] = desc[L:] = x[:T - L]
    return {"y_bp": bp.ravel(), "y_desc": desc.ravel()}


def topk_route(v, c, s):
    E, K, BT = c["E"], c["TOPK"], c["BLOCK_T"]
    n = s["num_tokens"]
    lg = v["logits"].reshape(n, E)
    thr = -np.sort(-lg, axis=1)[:, K - 1:K]
    chosen = lg >= thr
    p = np.where(chosen, np.exp(lg - lg.max(axis=1, keepdims=True)), 0.0)
    if c["RENORMALIZE"]:
        p /= p.sum(axis=1, keepdims=True)
    nb = -(-n // BT)
    counts = np.zeros((nb, E))
    for b in range(nb):
        counts[b] = chosen[b * BT:(b + 1) * BT].sum(axis=0)
    perm = v["perm"].astype(np.int64)
    return {"weights": p.ravel(), "permuted": lg[:, perm].ravel(), "counts": counts.ravel()}


def select_source(v, c, s):
    D, n = c["D"], s["num_tokens"]
    slot = v["slot"].astype(np.int64)
    cache = v["cache"].reshape(-1, D)
    new = v["new"].reshape(-1, D)
    x = np.where((slot >= 0)[:, None], cache[np.maximum(slot, 0)], new[:n])
    return {"out": x.ravel(), "rowsum": np.cumsum(x, axis=1).max(axis=1)}


# ---- cases -----------------------------------------------------------------------------------


def cases():
    out = []
    add = out.append

    # paged decode: 3 sequences (one empty), 8 query heads over 2 kv heads,
    # pages of 16 tokens scattered through a pool of 12
    B, QH, KVH, D, P, POOL, MAXP = 3, 8, 2, 32, 16, 12, 4

    def block_tables(rng, n, POOL=POOL):
        return rng.permutation(POOL)[:n]

    for dt in ("fp16", "bf16"):
        add(Case(f"paged decode GQA {dt}", F, "paged_decode_kernel", (B, KVH),
                 [Out("out", dt, B * QH * D), Buf("q", dt, B * QH * D),
                  Buf("k_cache", dt, POOL * P * KVH * D), Buf("v_cache", dt, POOL * P * KVH * D),
                  Buf("block_tables", "i32", B * MAXP, block_tables),
                  Buf("seq_lens", "i32", B, _ints(37, 0, 64)),
                  Scalar("scale", D ** -0.5, "fp32"), Scalar("stride_q_seq", QH * D),
                  Scalar("stride_q_head", D), Scalar("stride_kc_blk", P * KVH * D),
                  Scalar("stride_kc_tok", KVH * D), Scalar("stride_kc_head", D),
                  Scalar("stride_bt_seq", MAXP), Scalar("stride_o_seq", QH * D),
                  Scalar("stride_o_head", D)],
                 {"NUM_Q_PER_KV": QH // KVH, "Q_GROUP_PAD": 16, "HEAD_DIM": D, "PAGE_SIZE": P},
                 tol={"fp16": (2e-2, 2e-2), "bf16": (5e-2, 5e-2)}, ref=paged_decode))

    # varlen prefill over three sequences (one empty, one ragged)
    H, D = 2, 16
    cu = [0, 45, 45, 77]
    TOT = cu[-1]
    for causal, window in ((True, 0), (False, 0), (True, 20)):
        add(Case(f"varlen prefill causal={causal} window={window}", F, "varlen_prefill_kernel",
                 (3, H, len(cu) - 1),
                 [Buf("q", "fp32", TOT * H * D), Buf("k", "fp32", TOT * H * D),
                  Buf("v", "fp32", TOT * H * D), Out("o", "fp32", TOT * H * D),
                  Out("lse", "fp32", H * TOT), Buf("cu_seqlens", "i32", len(cu), _ints(*cu)),
                  Scalar("sm_scale", 0.3, "fp32"), Scalar("stride_tok", H * D),
                  Scalar("stride_head", D), Scalar("stride_lse_head", TOT)],
                 {"IS_CAUSAL": causal, "WINDOW": window, "BLOCK_M": 16, "BLOCK_N": 16,
                  "HEAD_DIM": D}, tol={"fp32": (2e-4, 2e-4)}, ref=varlen_prefill))

    NH, S, D = 3, 8, 32
    add(Case("merge split-KV partials", F, "merge_splits_kernel", (NH,),
             [Out("out", "fp32", NH * D), Buf("part_o", "fp32", NH * S * D),
              Buf("part_lse", "fp32", NH * S, scale=3.0), Buf("num_splits", "i32", NH, _ints(1, 5, 8)),
              Scalar("stride_po_split", D), Scalar("stride_po_head", S * D),
              Scalar("stride_pl_head", S), Scalar("stride_o_head", D)],
             {"MAX_SPLITS": S, "HEAD_DIM": D}, ref=merge_splits))

    H, S, BT, BS = 2, 16, 16, 8
    cu = [0, 21, 37, 70]
    ci = chunk_indices(cu, BT)
    for rev, scaled, dt in ((False, False, "fp32"), (True, True, "fp32"), (False, True, "bf16")):
        add(Case(f"chunk-local cumsum reverse={rev} scale={scaled} {dt}", F,
                 "chunk_local_cumsum_kernel", (S // BS, len(ci) // 2, H),
                 [Buf("g", dt, cu[-1] * H * S), Out("o", dt, cu[-1] * H * S),
                  Scalar("scale", 0.5, "fp32"), Buf("cu_seqlens", "i32", len(cu), _ints(*cu)),
                  Buf("chunk_indices", "i32", len(ci), _ints(*ci))],
                 {"H": H, "S": S, "BT": BT, "BS": BS, "REVERSE": rev, "HAS_SCALE": scaled},
                 tol={"fp32": (1e-4, 1e-4)}, ref=chunk_local_cumsum))

    B, T, H, K, V, BT = 2, 40, 2, 32, 32, 16
    NT = -(-T // BT)

    def gates(rng, n, B=B, T=T, H=H, BT=BT):
        # cumulative log-decays within each chunk, as the kernel expects
        g = -0.1 * rng.random((B, T, H))
        for t0 in range(0, T, BT):
            g[:, t0:t0 + BT] = np.cumsum(g[:, t0:t0 + BT], axis=1)
        return g.ravel()

    for init in (True, False):
        add(Case(f"chunk states initial={init}", F, "chunk_state_kernel", (K // 16, 1, B * H),
                 [Buf("k", "fp16", B * T * H * K, scale=0.5), Buf("v", "fp16", B * T * H * V),
                  Buf("g", "fp32", B * T * H, gates), Out("h", "fp32", B * NT * H * K * V),
                  Buf("h0", "fp32", B * H * K * V) if init else Null("h0_ptr"),
                  Out("ht", "fp32", B * H * K * V) if init else Null("ht_ptr"), Scalar("T", T)],
                 {"H": H, "K": K, "V": V, "BT": BT, "BK": 16, "BV": 32,
                  "USE_INITIAL_STATE": init, "STORE_FINAL_STATE": init},
                 tol={"fp32": (2e-3, 2e-3)}, ref=chunk_state))

    B, L, Dm, N = 2, 12, 40, 16
    for softplus, has_d, has_z, dt in ((True, True, True, "fp32"), (False, False, False, "fp16")):
        add(Case(f"selective scan softplus={softplus} D={has_d} z={has_z} {dt}", F,
                 "selective_scan_kernel", (2, B),
                 [Buf("x", dt, B * L * Dm), Buf("dt", dt, B * L * Dm, "rand", scale=0.5),
                  Buf("A", "fp32", Dm * N, lambda rng, n: -rng.random(n) - 0.1),
                  Buf("B", dt, B * L * N), Buf("C", dt, B * L * N),
                  Buf("D", "fp32", Dm) if has_d else Null("D_ptr"),
                  Buf("z", dt, B * L * Dm) if has_z else Null("z_ptr"), Out("out", "fp32", B * L * Dm),
                  Scalar("seqlen", L), Scalar("dim", Dm), Scalar("stride_x_b", L * Dm),
                  Scalar("stride_x_l", Dm), Scalar("stride_bc_b", L * N), Scalar("stride_bc_l", N)],
                 {"DSTATE": N, "BLOCK_D": 32, "DT_SOFTPLUS": softplus, "HAS_D": has_d, "HAS_Z": has_z},
                 tol={"fp32": (1e-3, 1e-3)}, ref=selective_scan))

    NB, M, N, K = 4, 20, 24, 40
    add(Case("batched 3-D dot and permute", F, "batched_dot_3d_kernel", (NB // 2,),
             [Buf("a", "fp16", NB * M * K), Buf("b", "fp16", NB * K * N),
              Out("c", "fp32", NB * M * N), Out("ct", "fp16", NB * M * N),
              Scalar("M", M), Scalar("N", N), Scalar("K", K)],
             {"BLOCK_B": 2, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16},
             tol={"fp32": (1e-3, 1e-3)}, ref=batched_dot))

    T, H, D, MAXPOS = 7, 6, 64, 32
    for neox in (True, False):
        add(Case(f"rotary {'neox' if neox else 'gpt-j'}", F, "rotary_kernel", (3, 2),
                 [Buf("q", "fp16", T * H * D, out=True),
                  Buf("positions", "i64", T, ("randint", 0, MAXPOS)),
                  Buf("cos_sin", "fp32", MAXPOS * D, "rand"), Scalar("num_tokens", T),
                  Scalar("num_heads", H), Scalar("stride_q_tok", H * D), Scalar("stride_cs_pos", D)],
                 {"HEAD_DIM": D, "BLOCK_H": 4, "IS_NEOX": neox}, ref=rotary))

    NP, E = 300, 10
    add(Case("expert scatter (atomic add/max)", F, "expert_scatter_kernel", (3,),
             [Buf("topk_ids", "i64", NP, ("randint", 0, E)), Buf("topk_weights", "fp32", NP, "rand"),
              Buf("counts", "i32", E, "zeros", out=True), Buf("max_weight", "fp32", E, "zeros", out=True),
              Out("token_expert_pos", "i32", NP), Scalar("num_pairs", NP), Scalar("num_experts", E)],
             {"BLOCK": 128}, ref=expert_scatter))
    F2 = "breadth_indexing_2.py"
    B, T, K = 2, 40, 16
    NT = -(-T // 16)
    add(Case("reverse chunk state (advance backwards)", F2, "reverse_chunk_state_kernel", (B,),
             [Buf("k", "fp32", B * T * K), Buf("v", "fp32", B * T * K), Out("dh", "fp32", B * NT * K * K),
              Scalar("T", T), Scalar("decay", 0.9, "fp32")], {"K": K, "V": K, "BT": 16},
             tol={"fp32": (1e-3, 1e-3)}, ref=reverse_chunk_state))
    M, N = 37, 27
    add(Case("tile stats (constexpr tuple block)", F2, "tile_stats_kernel", (3,),
             [Buf("x", "fp32", M * N), Out("rmax", "fp32", M), Out("ridx", "i32", M),
              Out("rsuffix", "fp32", M * N), Scalar("M", M), Scalar("N", N), Scalar("stride_m", N)],
             {"BLOCK": (16, 32)}, ref=tile_stats))
    H, T, D = 2, 40, 32
    add(Case("scores through 3-D descriptors", F2, "desc_scores_kernel", (H, 3, 3),
             [Buf("q", "fp16", H * T * D), Buf("k", "fp16", H * T * D), Out("s", "fp32", H * T * T),
              Scalar("T", T), Scalar("scale", 0.2, "fp32")], {"D": D, "BT": 16},
             tol={"fp32": (2e-3, 2e-3)}, ref=desc_scores))
    add(Case("split sum, last program finishes", F2, "split_sum_kernel", (5,),
             [Buf("x", "fp32", 3000), Out("partial", "fp32", 5), Buf("counter", "i32", 1, "zeros", out=True),
              Out("out", "fp32", 1), Scalar("N", 3000)], {"BLOCK": 128, "MAX_PROGRAMS": 8},
             tol={"fp32": (1e-3, 1e-4)}, ref=split_sum))
    T, C = 45, 20
    add(Case("chunked linear scan (tuple scan and reduce)", F2, "chunk_scan_kernel", (2,),
             [Buf("a", "fp32", T * C, lambda rng, n: 0.5 + 0.5 * rng.random(n)), Buf("x", "fp32", T * C),
              Out("h", "fp32", T * C), Out("best", "fp32", C), Out("best_t", "i32", C),
              Scalar("T", T), Scalar("C", C)], {"BT": 16, "BC": 16},
             tol={"fp32": (1e-4, 1e-4)}, ref=chunk_scan))
    B, Dm, L, W = 2, 24, 30, 4
    for bias, init, silu, layout in ((True, True, True, "bdt"), (False, False, False, "btd")):
        strides = (Dm * L, L, 1) if layout == "bdt" else (Dm * L, 1, Dm)
        add(Case(f"causal conv1d bias={bias} init={init} silu={silu} {layout}", F2,
                 "causal_conv1d_kernel", (2, 2, B),
                 [Buf("x", "fp16", B * Dm * L), Buf("w", "fp32", Dm * W),
                  Buf("bias", "fp32", Dm) if bias else Null("bias_ptr"),
                  Buf("init_state", "fp16", B * Dm * (W - 1)) if init else Null("init_state_ptr"),
                  Out("out", "fp16", B * Dm * L), Scalar("seqlen", L), Scalar("dim", Dm),
                  Scalar("stride_x_b", strides[0]), Scalar("stride_x_d", strides[1]),
                  Scalar("stride_x_t", strides[2])],
                 {"WIDTH": W, "BLOCK_T": 16, "BLOCK_D": 16, "HAS_BIAS": bias, "HAS_INIT": init,
                  "SILU": silu}, ref=causal_conv1d))
    B, R, C = 4, 19, 13
    add(Case("3-D block pointers, transposed store", F2, "block_ptr_3d_kernel", (2, 2, 2),
             [Buf("x", "fp32", B * R * C), Out("y", "fp32", B * R * C), Scalar("B", B), Scalar("R", R),
              Scalar("C", C)], {"BB": 2, "BR": 16, "BC": 8}, ref=block_ptr_3d))
    NQ, L, D = 5, 50, 32
    add(Case("sliding-window decode (while, carried tuple)", F2, "window_decode_kernel", (NQ,),
             [Buf("q", "fp32", NQ * D), Buf("k", "fp32", L * D), Buf("v", "fp32", L * D),
              Out("o", "fp32", NQ * D), Buf("q_pos", "i32", NQ, _ints(0, 7, 16, 33, 49)),
              Scalar("window", 12), Scalar("scale", 0.2, "fp32")], {"D": D, "BLOCK_N": 8},
             ref=window_decode))
    F3 = "breadth_indexing_3.py"
    T, D = 45, 16
    add(Case("lookback before the start (nan padding, negative coordinates)", F3, "lookback_kernel",
             (3,), [Buf("x", "fp32", T * D), Out("y_bp", "fp32", T * D), Out("y_desc", "fp32", T * D),
                    Scalar("T", T)], {"D": D, "BT": 16, "LOOKBACK": 5}, ref=lookback))
    NT, E = 37, 16
    for renorm in (True, False):
        add(Case(f"top-k routing renormalize={renorm}", F3, "topk_route_kernel", (3,),
                 [Buf("logits", "fp32", NT * E), Buf("perm", "i32", E, lambda rng, n: rng.permutation(n)),
                  Out("weights", "fp32", NT * E), Out("permuted", "fp32", NT * E),
                  Out("counts", "i32", 3 * E), Scalar("num_tokens", NT)],
                 {"E": E, "TOPK": 4, "BLOCK_T": 16, "RENORMALIZE": renorm}, ref=topk_route))
    NT, D, SLOTS = 21, 32, 10

    def slots(rng, n, SLOTS=SLOTS):
        return np.where(rng.random(n) < 0.5, rng.integers(0, SLOTS, n), -1)

    add(Case("gather from cache or new rows (where on pointers)", F3, "select_source_kernel", (2,),
             [Buf("cache", "bf16", SLOTS * D), Buf("new", "bf16", NT * D), Buf("slot", "i32", NT, slots),
              Out("out", "fp32", NT * D), Out("rowsum", "fp32", NT), Scalar("num_tokens", NT)],
             {"D": D, "BLOCK_T": 16}, ref=select_source))
    return out
