import triton
import triton.language as tl


# Fused attention backward in the shape of Triton's tutorial 06: Q, K, V, O
# and dO are [Z, H, S, D] with strides passed at run time; M holds the
# forward's base-2 log-sum-exp per row and DELTA the rowwise sum of O * dO
# (attn_bwd_prep). The host passes K already multiplied by sm_scale / ln 2,
# so exp2(K Q^T - M) is P^T. One program computes dK and dV for BN1 keys,
# walking the queries in steps of BM1, and then dQ for BM2 queries, walking
# the keys in steps of BN2. When CAUSAL, the steps across the diagonal are
# made SLICE times narrower and masked; the rest need no mask.
@triton.jit
def attn_bwd_prep(O, DO, DELTA, S, D: tl.constexpr, BM: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    zh = tl.program_id(1)
    cols = tl.arange(0, D)
    offs = zh * S * D + rows[:, None] * D + cols[None, :]
    o = tl.load(O + offs).to(tl.float32)
    do = tl.load(DO + offs).to(tl.float32)
    tl.store(DELTA + zh * S + rows, tl.sum(o * do, axis=1))


@triton.jit
def _dkdv_steps(dk, dv, Q, DO, M, DELTA, k, v, start_n, start_m, n_steps, stride_tok, stride_d,
                BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr, MASK: tl.constexpr):
    keys = start_n + tl.arange(0, BN)
    dims = tl.arange(0, D)
    rows = start_m + tl.arange(0, BM)
    q_t_ptrs = Q + rows[None, :] * stride_tok + dims[:, None] * stride_d
    do_ptrs = DO + rows[:, None] * stride_tok + dims[None, :] * stride_d
    for _ in range(n_steps):
        q_t = tl.load(q_t_ptrs)
        m = tl.load(M + rows)
        p_t = tl.math.exp2(tl.dot(k, q_t) - m[None, :])
        if MASK:
            p_t = tl.where(rows[None, :] >= keys[:, None], p_t, 0.0)
        do = tl.load(do_ptrs)
        dv += tl.dot(p_t.to(do.dtype), do)
        delta = tl.load(DELTA + rows)
        dp_t = tl.dot(v, tl.trans(do)).to(tl.float32)
        ds_t = p_t * (dp_t - delta[None, :])
        dk += tl.dot(ds_t.to(q_t.dtype), tl.trans(q_t))
        rows += BM
        q_t_ptrs += BM * stride_tok
        do_ptrs += BM * stride_tok
    return dk, dv


@triton.jit
def _dq_steps(dq, q, do, m, delta, K, V, start_m, start_n, n_steps, stride_tok, stride_d,
              BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr, MASK: tl.constexpr):
    rows = start_m + tl.arange(0, BM)
    dims = tl.arange(0, D)
    keys = start_n + tl.arange(0, BN)
    k_t_ptrs = K + keys[None, :] * stride_tok + dims[:, None] * stride_d
    v_t_ptrs = V + keys[None, :] * stride_tok + dims[:, None] * stride_d
    for _ in range(n_steps):
        k_t = tl.load(k_t_ptrs)
        v_t = tl.load(v_t_ptrs)
        p = tl.math.exp2(tl.dot(q, k_t) - m)
        if MASK:
            p = tl.where(rows[:, None] >= keys[None, :], p, 0.0)
        dp = tl.dot(do, v_t).to(tl.float32)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k_t.dtype), tl.trans(k_t))
        keys += BN
        k_t_ptrs += BN * stride_tok
        v_t_ptrs += BN * stride_tok
    return dq


@triton.jit
def attn_bwd(Q, K, V, sm_scale, DO, DQ, DK, DV, M, DELTA, stride_z, stride_h, stride_tok,
             stride_d, H, S, D: tl.constexpr, BM1: tl.constexpr, BN1: tl.constexpr,
             BM2: tl.constexpr, BN2: tl.constexpr, SLICE: tl.constexpr, CAUSAL: tl.constexpr):
    LN2: tl.constexpr = 0.6931471824645996
    zh = tl.program_id(2)
    base = ((zh // H) * stride_z + (zh % H) * stride_h).to(tl.int64)
    Q += base
    K += base
    V += base
    DO += base
    DQ += base
    DK += base
    DV += base
    M += zh * S
    DELTA += zh * S
    pid = tl.program_id(0)
    dims = tl.arange(0, D)

    # dK and dV for keys [start_n, start_n + BN1)
    start_n = pid * BN1
    keys = start_n + tl.arange(0, BN1)
    kv_offs = keys[:, None] * stride_tok + dims[None, :] * stride_d
    k = tl.load(K + kv_offs)
    v = tl.load(V + kv_offs)
    dk = tl.zeros([BN1, D], dtype=tl.float32)
    dv = tl.zeros([BN1, D], dtype=tl.float32)
    start_m = 0
    if CAUSAL:
        start_m = start_n
        MASK_BM1: tl.constexpr = BM1 // SLICE
        n_diag = BN1 // MASK_BM1
        dk, dv = _dkdv_steps(dk, dv, Q, DO, M, DELTA, k, v, start_n, start_m, n_diag,
                             stride_tok, stride_d, MASK_BM1, BN1, D, True)
        start_m += n_diag * MASK_BM1
    dk, dv = _dkdv_steps(dk, dv, Q, DO, M, DELTA, k, v, start_n, start_m,
                         (S - start_m) // BM1, stride_tok, stride_d, BM1, BN1, D, False)
    tl.store(DV + kv_offs, dv.to(v.dtype))
    dk *= sm_scale
    tl.store(DK + kv_offs, dk.to(k.dtype))

    # dQ for queries [start_m, start_m + BM2)
    start_m = pid * BM2
    rows = start_m + tl.arange(0, BM2)
    q_offs = rows[:, None] * stride_tok + dims[None, :] * stride_d
    q = tl.load(Q + q_offs)
    do = tl.load(DO + q_offs)
    m = tl.load(M + rows)[:, None]
    delta = tl.load(DELTA + rows)
    dq = tl.zeros([BM2, D], dtype=tl.float32)
    end_n = start_m + BM2 if CAUSAL else S
    if CAUSAL:
        MASK_BN2: tl.constexpr = BN2 // SLICE
        n_diag = BM2 // MASK_BN2
        dq = _dq_steps(dq, q, do, m, delta, K, V, start_m, end_n - n_diag * MASK_BN2, n_diag,
                       stride_tok, stride_d, BM2, MASK_BN2, D, True)
        end_n -= n_diag * MASK_BN2
    dq = _dq_steps(dq, q, do, m, delta, K, V, start_m, 0, end_n // BN2, stride_tok, stride_d,
                   BM2, BN2, D, False)
    dq *= LN2
    tl.store(DQ + q_offs, dq.to(q.dtype))
