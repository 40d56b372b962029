# Kernels written in the manner of xformers, FlagAttention, pytorch-labs
# applied-ai and flashinfer's Triton kernels (written fresh: the names, the
# structure and the comments are this corpus's own; only the calling
# conventions follow the libraries).
#
# xformers side: fused bias + activation + dropout with one Philox seed per
# column block (activation chosen by a constexpr string), a "k-softmax" over
# the last dim with causal and log variants (DEPTH from a heuristics lambda),
# RMS norm with the residual added in place (looped over column blocks with
# tl.range), layer norm forward and the fused backward whose dw/db partial
# sums go through a spin lock (atomic_cas / atomic_xchg), rotary embedding
# with the frequencies computed in the kernel (interleaved or half-split
# pairs), split-K decode attention over an int4 group-quantised KV cache
# (scale/shift packed as two halves in an int32) and the reduction of the
# splits, decode attention through block pointers (boundary_check chosen by a
# constexpr conditional expression), a dual GEMM with SiLU gate (SwiGLU, autotune config list) and a
# column sum over rows.
#
# FlagAttention side: flash attention forward (EVEN_M/EVEN_N heuristics,
# causal with a key prefix P_SEQ, GQA, exp2 with log2(e) folded into the
# scale, Philox dropout, log-sum-exp out), the backward preprocess and the
# dK/dV backward, piecewise attention (two q/k pairs chosen by distance), the
# total attention each key receives (tl.range with num_stages), and paged
# decode attention through a block table.
#
# applied-ai side: split-K GEMM with a grouped-launch helper and relaxed
# atomic adds, an fp8 (e4m3 codes) GEMM with row-wise scales, a stream-K-like
# GEMM (each program owns a range of MAC iterations across tiles), a MoE
# GEMM over tokens sorted by expert (expert offsets), and a persistent
# grouped GEMM reading its problems from offset tables.
#
# flashinfer side: fused add + RMS norm (Gemma's 1 + w), merging two
# attention states with base-2 log-sum-exps, merging a variable number of
# states per token through an indptr array, and appending K/V rows into a
# paged cache through kv_indptr/kv_indices.
import triton
import triton.language as tl

# ---- shared helpers ------------------------------------------------------------------------------


@triton.jit
def _xf_tanh(x):
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


@triton.jit
def _xf_activation(x, ACTIVATION: tl.constexpr):
    if ACTIVATION == "relu":
        x = tl.where(x >= 0, x, 0.0)
    elif ACTIVATION == "leaky_relu":
        x = tl.where(x >= 0.0, x, 0.01 * x)
    elif ACTIVATION == "gelu":
        x = 0.5 * x * (1.0 + _xf_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
    elif ACTIVATION == "squared_relu":
        r = tl.maximum(x, 0.0)
        x = r * r
    return x


# ---- xformers: fused bias + activation + dropout -------------------------------------------------


@triton.heuristics({"EVEN_N": lambda args: args["N"] % args["BLOCK_N"] == 0})
@triton.jit
def _xf_dropout_bias_act_fw(
    Y, X, BIAS, SEEDS,
    stride_ym, stride_xm,
    M, N, p,
    ACTIVATION: tl.constexpr,
    USE_BIAS: tl.constexpr,
    EVEN_N: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    row_blk = tl.program_id(0)
    col_blk = tl.program_id(1)
    rows = row_blk * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = col_blk * BLOCK_N + tl.arange(0, BLOCK_N)
    if EVEN_N:
        mask = (rows < M)[:, None]
    else:
        mask = (rows[:, None] < M) & (cols[None, :] < N)

    x = tl.load(X + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    if USE_BIAS:
        b = tl.load(BIAS + cols, mask=cols < N, other=0.0)
        x += b[None, :].to(tl.float32)
    x = _xf_activation(x, ACTIVATION)

    # one seed per column block; the Philox counter is the element's index
    seed = tl.load(SEEDS + col_blk)
    rand_offsets = rows[:, None] * N + cols[None, :]
    keep = tl.rand(seed, rand_offsets) > p
    y = tl.where(keep, x * (1.0 / (1.0 - p)), 0.0)
    tl.store(Y + rows[:, None] * stride_ym + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)


# ---- xformers: softmax over the last dim ---------------------------------------------------------


@triton.heuristics({"DEPTH": lambda nargs: triton.next_power_of_2(nargs["K"])})
@triton.jit
def _xf_k_softmax(
    Y, X,
    stride_ym, stride_yn,
    stride_xm, stride_xn,
    K,
    LOG: tl.constexpr,
    CAUSAL: tl.constexpr,
    DEPTH: tl.constexpr,
    IS_FP16: tl.constexpr,
):
    m = tl.program_id(0)
    n = tl.program_id(1)
    k = tl.arange(0, DEPTH)
    x_ptrs = X + m * stride_xm + n * stride_xn + k
    io_mask = k < K
    if CAUSAL:
        io_mask = io_mask & (k <= n)
    x = tl.load(x_ptrs, mask=io_mask, other=float("-inf"))
    if IS_FP16:
        # half inputs: stay finite when the whole row is masked out
        x = tl.where(io_mask, x, -65504.0)
    x = x.to(tl.float32)
    z = x - tl.max(x, axis=0)
    if LOG:
        y = z - tl.log(tl.sum(tl.exp(z), axis=0))
    else:
        num = tl.exp(z)
        y = num / tl.sum(num, axis=0)
    tl.store(Y + m * stride_ym + n * stride_yn + k, y, mask=io_mask)


# ---- xformers: RMS norm with the residual added in place -----------------------------------------


@triton.jit
def _xf_rms_norm_add(
    x_ptr, y_ptr, h1_ptr, w_ptr,
    eps,
    stride,
    N_COLS: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    INCLUDE_WEIGHT: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_ptr += row * stride
    y_ptr += row * stride
    h1_ptr += row * stride

    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for offset in tl.range(0, N_COLS, BLOCK_SIZE):
        cols = offset + tl.arange(0, BLOCK_SIZE)
        mask = cols < N_COLS
        ax = tl.load(x_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_last")
        ay = tl.load(y_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_first")
        ax += ay
        tl.store(x_ptr + cols, ax, mask=mask)
        a = ax.to(tl.float32)
        _mean += a * a
    rstd = tl.math.rsqrt(tl.sum(_mean, axis=0) / N_COLS + eps)

    for offset in tl.range(0, N_COLS, BLOCK_SIZE):
        cols = offset + tl.arange(0, BLOCK_SIZE)
        mask = cols < N_COLS
        a = tl.load(x_ptr + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        if INCLUDE_WEIGHT:
            w = tl.load(w_ptr + cols, mask=mask)
            x_hat = (a * rstd) * w
        else:
            x_hat = a * rstd
        tl.store(h1_ptr + cols, x_hat, mask=mask)


# ---- xformers: layer norm forward and the fused backward -----------------------------------------


@triton.jit
def _xf_layer_norm_fw(
    X, Y, W, B, Mean, Rstd,
    stride, N, eps,
    affine: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    x_ptrs = X + row * stride + cols
    x = tl.load(x_ptrs, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)

    mean = tl.sum(x, axis=0) / N
    x_zm = tl.where(mask, x - mean, 0.0)
    tl.store(Mean + row, mean)
    x_var = tl.sum(x_zm * x_zm, axis=0) / N
    rstd = 1.0 / tl.sqrt(x_var + eps)
    y = x_zm * rstd
    tl.store(Rstd + row, rstd)

    if affine:
        w = tl.load(W + cols, mask=mask, other=1.0)
        b = tl.load(B + cols, mask=mask, other=0.0)
        y = y * w + b
    tl.store(Y + row * stride + cols, y, mask=mask)


@triton.jit
def _xf_layer_norm_bwd_dx_fused(
    DX, DY, DW, DB,
    X, W, Mean, Rstd,
    Lock,
    stride, N,
    GROUP_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N

    x = tl.load(X + row * stride + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + row * stride + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)

    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.0)
    wdy = tl.where(mask, wdy, 0.0)
    mean1 = tl.sum(xhat * wdy, axis=0) / N
    mean2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * mean1 + mean2)) * rstd
    tl.store(DX + row * stride + cols, dx, mask=mask)

    # partial dw/db of this row go to one of GROUP_SIZE_M rows, under a lock
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = dy.to(w.dtype)
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask, other=0.0)
        partial_db += tl.load(DB, mask=mask, other=0.0)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.atomic_xchg(Lock, 0)


# ---- xformers: rotary embedding with the frequencies computed in the kernel ----------------------


@triton.jit
def _xf_rope_fw(
    OUT, X, SEQPOS,
    stride_xt, stride_xh,
    stride_ot, stride_oh,
    n_tokens, theta,
    HEAD_DIM: tl.constexpr,
    INTERLEAVED: tl.constexpr,
    BLOCK_T: tl.constexpr,
):
    tblk = tl.program_id(0)
    head = tl.program_id(1)
    HALF: tl.constexpr = HEAD_DIM // 2
    toks = tblk * BLOCK_T + tl.arange(0, BLOCK_T)
    tmask = toks < n_tokens
    i = tl.arange(0, HALF)
    if INTERLEAVED:
        d1 = 2 * i
        d2 = 2 * i + 1
    else:
        d1 = i
        d2 = i + HALF

    pos = tl.load(SEQPOS + toks, mask=tmask, other=0).to(tl.float32)
    # theta ** (-2i / HEAD_DIM) through exp2/log2
    inv_freq = tl.exp2(i.to(tl.float32) * (-2.0 / HEAD_DIM) * tl.log2(theta))
    angle = pos[:, None] * inv_freq[None, :]
    c = tl.cos(angle)
    s = tl.sin(angle)

    x_base = X + toks[:, None].to(tl.int64) * stride_xt + head * stride_xh
    x1 = tl.load(x_base + d1[None, :], mask=tmask[:, None], other=0.0).to(tl.float32)
    x2 = tl.load(x_base + d2[None, :], mask=tmask[:, None], other=0.0).to(tl.float32)
    o_base = OUT + toks[:, None].to(tl.int64) * stride_ot + head * stride_oh
    tl.store(o_base + d1[None, :], (x1 * c - x2 * s).to(OUT.dtype.element_ty), mask=tmask[:, None])
    tl.store(o_base + d2[None, :], (x2 * c + x1 * s).to(OUT.dtype.element_ty), mask=tmask[:, None])


# ---- xformers: split-K decode attention over an int4 group-quantised KV cache --------------------


@triton.jit
def _xf_unpack_half2(scale_shift):
    # two fp16 values packed in an int32: scale in the low half, shift in the high
    scale = (scale_shift & 0xFFFF).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)
    shift = (scale_shift >> 16).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)
    return scale, shift


@triton.jit
def _xf_load_dequant_int4(base, ss_base, offs_n, offs_d, n_mask, stride_n, stride_ssn,
                          PACKED_PER_VAL: tl.constexpr, GROUP_D: tl.constexpr):
    words = tl.load(base + offs_n[:, None] * stride_n + (offs_d // PACKED_PER_VAL)[None, :],
                    mask=n_mask[:, None], other=0)
    nib = (words >> ((offs_d % PACKED_PER_VAL) * 4)[None, :]) & 0xF
    ss = tl.load(ss_base + offs_n[:, None] * stride_ssn + (offs_d // GROUP_D)[None, :],
                 mask=n_mask[:, None], other=0)
    scale, shift = _xf_unpack_half2(ss)
    return nib.to(tl.float32) * scale + shift


@triton.jit
def _xf_splitk_int4_fwd(
    Q, K, V, K_ss, V_ss, sm_scale,
    Out_splitK, LSE_splitK,
    Seq_len,
    stride_qz, stride_qh, stride_qm,
    stride_kz, stride_kh, stride_kn,
    stride_kssz, stride_kssh, stride_kssn,
    stride_oz, stride_oh, stride_os, stride_om,
    stride_lz, stride_lh, stride_ls,
    Mq, H, G_kv,
    N_PER_SPLIT: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    D: tl.constexpr,
    PACKED_PER_VAL: tl.constexpr,
    N_GROUPS: tl.constexpr,
):
    tl.static_assert(D % (PACKED_PER_VAL * N_GROUPS) == 0)
    GROUP_D: tl.constexpr = D // N_GROUPS
    off_zh = tl.program_id(0)
    split = tl.program_id(1)
    off_z = off_zh // H
    off_h = off_zh % H
    off_hk = off_h // G_kv

    kv_len = tl.load(Seq_len + off_z)
    lo = split * N_PER_SPLIT
    hi = tl.minimum(lo + N_PER_SPLIT, kv_len)

    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    m_mask = offs_m < Mq
    q = tl.load(Q + off_z * stride_qz + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :],
                mask=m_mask[:, None], other=0.0)
    qk_scale = sm_scale * 1.44269504

    k_base = K + off_z * stride_kz + off_hk * stride_kh
    v_base = V + off_z * stride_kz + off_hk * stride_kh
    kss_base = K_ss + off_z * stride_kssz + off_hk * stride_kssh
    vss_base = V_ss + off_z * stride_kssz + off_hk * stride_kssh

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    for start_n in range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        n_mask = offs_n < hi
        k = _xf_load_dequant_int4(k_base, kss_base, offs_n, offs_d, n_mask, stride_kn, stride_kssn,
                                  PACKED_PER_VAL, GROUP_D).to(q.dtype)
        v = _xf_load_dequant_int4(v_base, vss_base, offs_n, offs_d, n_mask, stride_kn, stride_kssn,
                                  PACKED_PER_VAL, GROUP_D).to(q.dtype)
        qk = tl.dot(q, tl.trans(k)) * qk_scale
        qk = tl.where(n_mask[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    # an empty split leaves l_i = 0: write zeros and an lse of -inf
    has = l_i > 0
    out = tl.where(has[:, None], acc / tl.where(has, l_i, 1.0)[:, None], 0.0)
    lse = tl.where(has, (m_i + tl.math.log2(tl.where(has, l_i, 1.0))) / 1.44269504, float("-inf"))
    o_ptrs = Out_splitK + off_z * stride_oz + off_h * stride_oh + split * stride_os
    tl.store(o_ptrs + offs_m[:, None] * stride_om + offs_d[None, :], out, mask=m_mask[:, None])
    tl.store(LSE_splitK + off_z * stride_lz + off_h * stride_lh + split * stride_ls + offs_m, lse, mask=m_mask)


@triton.jit
def _xf_decode_blockptr(
    Q, K, V, sm_scale, Out, Seq_len,
    stride_qz, stride_qh,
    stride_kz, stride_kh, stride_kn,
    stride_oz, stride_oh,
    H, G_kv,
    BLOCK_N: tl.constexpr,
    D: tl.constexpr,
    BOUNDS_CHECKS_N: tl.constexpr,
):
    # one query row per (batch, head); K read transposed through a block pointer
    off_zh = tl.program_id(0)
    off_z = off_zh // H
    off_h = off_zh % H
    off_hk = off_h // G_kv
    hi = tl.load(Seq_len + off_z)
    K_block_ptr = tl.make_block_ptr(
        base=K + off_z * stride_kz + off_hk * stride_kh,
        shape=(D, hi),
        strides=(1, stride_kn),
        offsets=(0, 0),
        block_shape=(D, BLOCK_N),
        order=(0, 1),
    )
    V_block_ptr = tl.make_block_ptr(
        base=V + off_z * stride_kz + off_hk * stride_kh,
        shape=(hi, D),
        strides=(stride_kn, 1),
        offsets=(0, 0),
        block_shape=(BLOCK_N, D),
        order=(1, 0),
    )
    offs_d = tl.arange(0, D)
    q = tl.load(Q + off_z * stride_qz + off_h * stride_qh + offs_d).to(tl.float32)
    qk_scale = sm_scale * 1.44269504
    m_i = tl.full([1], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([1], dtype=tl.float32)
    acc = tl.zeros([D], dtype=tl.float32)
    for start_n in range(0, hi, BLOCK_N):
        k = tl.load(K_block_ptr, boundary_check=(1,) if BOUNDS_CHECKS_N else ())
        v = tl.load(V_block_ptr, boundary_check=(0,) if BOUNDS_CHECKS_N else ())
        qk = tl.sum(q[:, None] * k.to(tl.float32), axis=0) * qk_scale
        if BOUNDS_CHECKS_N:
            qk = tl.where(start_n + tl.arange(0, BLOCK_N) < hi, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=0))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(qk - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * v.to(tl.float32), axis=0)
        m_i = m_new
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
        V_block_ptr = tl.advance(V_block_ptr, (BLOCK_N, 0))
    tl.store(Out + off_z * stride_oz + off_h * stride_oh + offs_d, (acc / l_i).to(Out.dtype.element_ty))


@triton.jit
def _xf_splitk_reduce(
    Out_splitK, LSE_splitK, Out, LSE,
    stride_oz, stride_oh, stride_os, stride_om,
    stride_lz, stride_lh, stride_ls,
    stride_fz, stride_fh, stride_fm,
    stride_lse,
    H,
    SPLIT_K: tl.constexpr,
    D: tl.constexpr,
    WRITE_LSE: tl.constexpr,
):
    off_zh = tl.program_id(0)
    off_m = tl.program_id(1)
    off_z = off_zh // H
    off_h = off_zh % H
    splits = tl.arange(0, SPLIT_K)
    offs_d = tl.arange(0, D)
    lse = tl.load(LSE_splitK + off_z * stride_lz + off_h * stride_lh + splits * stride_ls + off_m)
    lse_max = tl.max(lse, axis=0)
    w = tl.exp(lse - lse_max)
    sumexp = tl.sum(w, axis=0)
    o = tl.load(Out_splitK + off_z * stride_oz + off_h * stride_oh + splits[:, None] * stride_os
                + off_m * stride_om + offs_d[None, :])
    acc = tl.sum(o * w[:, None], axis=0) / sumexp
    tl.store(Out + off_z * stride_fz + off_h * stride_fh + off_m * stride_fm + offs_d,
             acc.to(Out.dtype.element_ty))
    if WRITE_LSE:
        tl.store(LSE + off_zh * stride_lse + off_m, lse_max + tl.log(sumexp))


# ---- xformers: dual GEMM with a SiLU gate (SwiGLU) -----------------------------------------------


def _xf_swiglu_configs():
    return [
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32}, num_stages=2, num_warps=4),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16}, num_stages=3, num_warps=4),
    ]


@triton.autotune(configs=_xf_swiglu_configs(), key=["M", "N", "K"])
@triton.jit
def _xf_dual_gemm_silu(
    X, W1, W2, B1, B2, Y, X12,
    M, N, K,
    stride_xm, stride_wk, stride_ym,
    HAS_BIAS: tl.constexpr,
    STORE_X12: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc1 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + rk
        a = tl.load(X + rm[:, None] * stride_xm + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w_mask = (kk[:, None] < K) & (rn[None, :] < N)
        w1 = tl.load(W1 + kk[:, None] * stride_wk + rn[None, :], mask=w_mask, other=0.0)
        w2 = tl.load(W2 + kk[:, None] * stride_wk + rn[None, :], mask=w_mask, other=0.0)
        acc1 += tl.dot(a, w1)
        acc2 = tl.dot(a, w2, acc2)
    if HAS_BIAS:
        acc1 += tl.load(B1 + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
        acc2 += tl.load(B2 + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    out_mask = (rm[:, None] < M) & (rn[None, :] < N)
    if STORE_X12:
        x12 = X12 + rm[:, None] * (2 * N) + rn[None, :]
        tl.store(x12, acc1.to(X12.dtype.element_ty), mask=out_mask)
        tl.store(x12 + N, acc2.to(X12.dtype.element_ty), mask=out_mask)
    y = acc1 * tl.sigmoid(acc1) * acc2
    tl.store(Y + rm[:, None] * stride_ym + rn[None, :], y.to(Y.dtype.element_ty), mask=out_mask)


# ---- xformers: sum over the first dim ------------------------------------------------------------


@triton.jit
def _xf_sum_0(
    Out, X,
    M, N,
    stride_xm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    col_blk = tl.program_id(0)
    rn = col_blk * BLOCK_N + tl.arange(0, BLOCK_N)
    rm = tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_M):
        rows = i + rm
        x = tl.load(X + rows[:, None] * stride_xm + rn[None, :], mask=(rows[:, None] < M) & (rn[None, :] < N),
                    other=0.0)
        acc += x.to(tl.float32)
    tl.store(Out + rn, tl.sum(acc, 0), mask=rn < N)


# ---- FlagAttention: flash attention forward with dropout -----------------------------------------


@triton.heuristics({
    "EVEN_M": lambda args: args["M"] % args["BLOCK_M"] == 0,
    "EVEN_N": lambda args: args["N"] % args["BLOCK_N"] == 0,
})
@triton.jit
def _fa_fwd_kernel(
    Q, K, V, sm_scale,
    dropout_p, seed,
    L, O,
    stride_qz, stride_qh, stride_qm, stride_qk,
    stride_kz, stride_kh, stride_kn, stride_kk,
    stride_vz, stride_vh, stride_vn, stride_vk,
    stride_oz, stride_oh, stride_om, stride_ok,
    Z, H, M, N, P_SEQ,
    num_groups,
    BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr,
    IS_CAUSAL: tl.constexpr,
    IS_DROPOUT: tl.constexpr,
    EVEN_M: tl.constexpr, EVEN_N: tl.constexpr,
):
    input_dtype = Q.dtype.element_ty
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)
    off_z = tl.program_id(2)
    off_hk = off_h // num_groups
    log2e: tl.constexpr = 1.4426950408889634
    qk_scale = sm_scale * log2e

    Q += off_z * stride_qz + off_h * stride_qh
    K += off_z * stride_kz + off_hk * stride_kh
    V += off_z * stride_vz + off_hk * stride_vh
    O += off_z * stride_oz + off_h * stride_oh
    L += (off_z * H + off_h) * M

    if IS_DROPOUT:
        rowblock_base = (off_z * H + off_h) * M * N
        offset_base = rowblock_base + start_m * BLOCK_M * N

    offs_m_base = tl.arange(0, BLOCK_M)
    offs_m = start_m * BLOCK_M + offs_m_base
    offs_n_base = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_DMODEL)

    q_ptrs = Q + (offs_m[:, None] * stride_qm + offs_k[None, :] * stride_qk)
    o_ptrs = O + (offs_m[:, None] * stride_om + offs_k[None, :] * stride_ok)
    l_ptrs = L + offs_m

    m_i = tl.full([BLOCK_M], value=-float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)

    if EVEN_M:
        q = tl.load(q_ptrs)
    else:
        mask_m = offs_m < M
        q = tl.load(q_ptrs, mask=mask_m[:, None])

    if IS_CAUSAL:
        hi = tl.minimum(N, P_SEQ + (start_m + 1) * BLOCK_M)
    else:
        hi = N

    k_ptrs = K + (offs_k[:, None] * stride_kk + offs_n_base[None, :] * stride_kn)
    v_ptrs = V + (offs_n_base[:, None] * stride_vn + offs_k[None, :] * stride_vk)
    for start_n in range(0, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        offs_n = start_n + offs_n_base
        if EVEN_N:
            k = tl.load(k_ptrs, cache_modifier=".cg")
            v = tl.load(v_ptrs, cache_modifier=".cg")
        else:
            mask_n = offs_n < N
            k = tl.load(k_ptrs, mask=mask_n[None, :], cache_modifier=".cg")
            v = tl.load(v_ptrs, mask=mask_n[:, None], cache_modifier=".cg")

        s = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        s += tl.dot(q, k)
        if not EVEN_N:
            s = tl.where(mask_n[None, :], s, float("-inf"))
        if IS_CAUSAL:
            causal_mask = (P_SEQ + offs_m[:, None]) >= offs_n[None, :]
            s = tl.where(causal_mask, s, float("-inf"))

        m_i_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.math.exp2((m_i - m_i_new) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_i_new[:, None] * qk_scale)
        acc *= alpha[:, None]
        if IS_DROPOUT:
            offs_rng = offset_base + offs_m_base[:, None] * N + offs_n[None, :]
            keep = tl.rand(seed, offs_rng) > dropout_p
            p_kept = tl.where(keep, p * (1.0 / (1.0 - dropout_p)), 0.0)
            acc += tl.dot(p_kept.to(input_dtype), v)
        else:
            acc += tl.dot(p.to(input_dtype), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_i_new
        k_ptrs += BLOCK_N * stride_kn
        v_ptrs += BLOCK_N * stride_vn

    acc = acc * (1.0 / l_i[:, None])
    l = m_i * sm_scale + tl.log(l_i)
    if EVEN_M:
        tl.store(l_ptrs, l, cache_modifier=".cg")
        tl.store(o_ptrs, acc.to(input_dtype), cache_modifier=".cg")
    else:
        tl.store(l_ptrs, l, mask=mask_m, cache_modifier=".cg")
        tl.store(o_ptrs, acc.to(input_dtype), mask=mask_m[:, None], cache_modifier=".cg")


# ---- FlagAttention: backward preprocess and dK/dV ------------------------------------------------


@triton.jit
def _fa_bwd_preprocess(
    Out, DO, Delta,
    stride_oz, stride_oh, stride_om, stride_ok,
    stride_doz, stride_doh, stride_dom, stride_dok,
    stride_dz, stride_dh, stride_dm,
    M,
    BLOCK_M: tl.constexpr, D_HEAD: tl.constexpr,
    DIVISIBLE_M: tl.constexpr,
):
    off_h = tl.program_id(1)
    off_z = tl.program_id(2)
    Out += off_z * stride_oz + off_h * stride_oh
    DO += off_z * stride_doz + off_h * stride_doh
    Delta += off_z * stride_dz + off_h * stride_dh

    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_n = tl.arange(0, D_HEAD)
    o_ptrs = Out + off_m[:, None] * stride_om + off_n[None, :] * stride_ok
    do_ptrs = DO + off_m[:, None] * stride_dom + off_n[None, :] * stride_dok
    if DIVISIBLE_M:
        o = tl.load(o_ptrs).to(tl.float32)
        do = tl.load(do_ptrs).to(tl.float32)
    else:
        mask_m = off_m < M
        o = tl.load(o_ptrs, mask=mask_m[:, None]).to(tl.float32)
        do = tl.load(do_ptrs, mask=mask_m[:, None]).to(tl.float32)
    delta = tl.sum(o * do, axis=1)
    d_ptrs = Delta + off_m * stride_dm
    if DIVISIBLE_M:
        tl.store(d_ptrs, delta)
    else:
        tl.store(d_ptrs, delta, mask=mask_m)


@triton.heuristics({
    "DIVISIBLE_M": lambda args: args["M"] % args["BLOCK_M"] == 0,
    "DIVISIBLE_N": lambda args: args["N"] % args["BLOCK_N"] == 0,
})
@triton.jit
def _fa_bwd_kv_kernel(
    Q, K, V, sm_scale, DO,
    DK, DV,
    L, D,
    stride_qz, stride_qh, stride_qm, stride_qk,
    stride_kz, stride_kh, stride_kn, stride_kk,
    stride_doz, stride_doh, stride_dom, stride_dok,
    Z, H, M, N, P_SEQ,
    BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
    DIVISIBLE_M: tl.constexpr, DIVISIBLE_N: tl.constexpr,
):
    input_dtype = Q.dtype.element_ty
    start_n = tl.program_id(0)
    off_h = tl.program_id(1)
    off_z = tl.program_id(2)
    log2e: tl.constexpr = 1.4426950408889634
    qk_scale = sm_scale * log2e

    Q += off_z * stride_qz + off_h * stride_qh
    K += off_z * stride_kz + off_h * stride_kh
    V += off_z * stride_kz + off_h * stride_kh
    DO += off_z * stride_doz + off_h * stride_doh
    DK += off_z * stride_kz + off_h * stride_kh
    DV += off_z * stride_kz + off_h * stride_kh
    D += (off_z * H + off_h) * M
    L += (off_z * H + off_h) * M

    if CAUSAL:
        lo = tl.maximum(start_n * BLOCK_N - P_SEQ, 0)
        lo = (lo // BLOCK_M) * BLOCK_M
    else:
        lo = 0

    offs_m_init = lo + tl.arange(0, BLOCK_M)
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_m_base = tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_DMODEL)

    q_ptrs = Q + (offs_m_init[:, None] * stride_qm + offs_k[None, :] * stride_qk)
    k_ptrs = K + (offs_n[:, None] * stride_kn + offs_k[None, :] * stride_kk)
    v_ptrs = V + (offs_n[:, None] * stride_kn + offs_k[None, :] * stride_kk)
    do_ptrs = DO + (offs_m_init[:, None] * stride_dom + offs_k[None, :] * stride_dok)
    dv_ptrs = DV + (offs_n[:, None] * stride_kn + offs_k[None, :] * stride_kk)
    dk_ptrs = DK + (offs_n[:, None] * stride_kn + offs_k[None, :] * stride_kk)

    if DIVISIBLE_N:
        k = tl.load(k_ptrs)
        v = tl.load(v_ptrs)
    else:
        mask_n = offs_n < N
        k = tl.load(k_ptrs, mask=mask_n[:, None])
        v = tl.load(v_ptrs, mask=mask_n[:, None])

    dk = tl.zeros([BLOCK_N, BLOCK_DMODEL], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, BLOCK_DMODEL], dtype=tl.float32)
    for start_m in range(lo, M, BLOCK_M):
        start_m = tl.multiple_of(start_m, BLOCK_M)
        offs_m = start_m + offs_m_base
        causal_mask = (P_SEQ + offs_m[:, None]) >= (offs_n[None, :])
        if DIVISIBLE_M:
            q = tl.load(q_ptrs)
            do = tl.load(do_ptrs)
            l = tl.load(L + offs_m)
            delta = tl.load(D + offs_m)
        else:
            mask_m = offs_m < M
            q = tl.load(q_ptrs, mask=mask_m[:, None])
            do = tl.load(do_ptrs, mask=mask_m[:, None])
            l = tl.load(L + offs_m, mask=mask_m)
            delta = tl.load(D + offs_m, mask=mask_m)

        s = tl.dot(q, tl.trans(k))
        p = tl.math.exp2(s * qk_scale - l[:, None] * log2e)
        if not DIVISIBLE_M:
            valid_mask = mask_m[:, None]
            p = tl.where(valid_mask, p, 0.0)
        if CAUSAL:
            p = tl.where(causal_mask, p, 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        if not DIVISIBLE_M:
            ds = tl.where(valid_mask, ds, 0.0)
        if CAUSAL:
            ds = tl.where(causal_mask, ds, 0.0)
        ds = ds.to(input_dtype)
        dk += tl.dot(tl.trans(ds), q)

        q_ptrs += BLOCK_M * stride_qm
        do_ptrs += BLOCK_M * stride_dom

    dk *= sm_scale
    if DIVISIBLE_N:
        tl.store(dk_ptrs, dk.to(input_dtype))
        tl.store(dv_ptrs, dv.to(input_dtype))
    else:
        tl.store(dk_ptrs, dk.to(input_dtype), mask=mask_n[:, None])
        tl.store(dv_ptrs, dv.to(input_dtype), mask=mask_n[:, None])


# ---- FlagAttention: piecewise attention ----------------------------------------------------------


@triton.jit
def _fa_piecewise_fwd(
    Q1, K1, Q2, K2, V, sm_scale, L, O,
    stride_qz, stride_qh, stride_qm,
    stride_kz, stride_kh, stride_kn,
    stride_oz, stride_oh, stride_om,
    Z, H, M, N, P_SEQ,
    w: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr,
    IS_CAUSAL: tl.constexpr,
    DIVISIBLE_M: tl.constexpr, DIVISIBLE_N: tl.constexpr,
):
    input_dtype = Q1.dtype.element_ty
    start_m = tl.program_id(0)
    off_zh = tl.program_id(1)
    off_z = off_zh // H
    off_h = off_zh % H
    log2e: tl.constexpr = 1.4426950408889634
    qk_scale = sm_scale * log2e

    q_off = off_z * stride_qz + off_h * stride_qh
    k_off = off_z * stride_kz + off_h * stride_kh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_DMODEL)
    mask_m = offs_m < M
    q_ptrs = offs_m[:, None] * stride_qm + offs_k[None, :]
    if DIVISIBLE_M:
        q1 = tl.load(Q1 + q_off + q_ptrs)
        q2 = tl.load(Q2 + q_off + q_ptrs)
    else:
        q1 = tl.load(Q1 + q_off + q_ptrs, mask=mask_m[:, None])
        q2 = tl.load(Q2 + q_off + q_ptrs, mask=mask_m[:, None])

    m_i = tl.full([BLOCK_M], value=-float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    if IS_CAUSAL:
        hi = tl.minimum(N, P_SEQ + (start_m + 1) * BLOCK_M)
    else:
        hi = N
    for start_n in range(0, hi, BLOCK_N):
        offs_n = tl.multiple_of(start_n, BLOCK_N) + tl.arange(0, BLOCK_N)
        mask_n = offs_n < N
        kv_ptrs = k_off + offs_n[:, None] * stride_kn + offs_k[None, :]
        if DIVISIBLE_N:
            k1 = tl.load(K1 + kv_ptrs)
            k2 = tl.load(K2 + kv_ptrs)
            v = tl.load(V + kv_ptrs)
        else:
            k1 = tl.load(K1 + kv_ptrs, mask=mask_n[:, None])
            k2 = tl.load(K2 + kv_ptrs, mask=mask_n[:, None])
            v = tl.load(V + kv_ptrs, mask=mask_n[:, None])
        # near pairs score through (q1, k1), far ones through (q2, k2)
        piecewise_mask = tl.abs(P_SEQ + offs_m[:, None] - offs_n[None, :]) < w
        s = tl.where(piecewise_mask, tl.dot(q1, tl.trans(k1)), tl.dot(q2, tl.trans(k2)))
        if not DIVISIBLE_N:
            s = tl.where(mask_n[None, :], s, float("-inf"))
        if IS_CAUSAL:
            s = tl.where((P_SEQ + offs_m[:, None]) >= offs_n[None, :], s, float("-inf"))
        m_i_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.math.exp2((m_i - m_i_new) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_i_new[:, None] * qk_scale)
        acc = acc * alpha[:, None] + tl.dot(p.to(input_dtype), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_i_new

    acc = acc * (1.0 / l_i[:, None])
    l = m_i * sm_scale + tl.log(l_i)
    o_ptrs = O + off_z * stride_oz + off_h * stride_oh + offs_m[:, None] * stride_om + offs_k[None, :]
    tl.store(L + off_zh * M + offs_m, l, mask=mask_m)
    tl.store(o_ptrs, acc.to(input_dtype), mask=mask_m[:, None])


# ---- FlagAttention: total attention each key receives --------------------------------------------


@triton.jit
def _fa_total_attention(
    Q, K, L, TA, sm_scale,
    stride_qz, stride_qh, stride_qm, stride_qk,
    stride_kz, stride_kh, stride_kn, stride_kk,
    Z, H, M, N, P_SEQ,
    num_groups,
    BLOCK_M: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
    DIVISIBLE_M: tl.constexpr, DIVISIBLE_N: tl.constexpr,
):
    start_n = tl.program_id(0)
    off_h = tl.program_id(1)
    off_z = tl.program_id(2)
    off_hk = off_h // num_groups
    log2e: tl.constexpr = 1.4426950408889634
    qk_scale = sm_scale * log2e

    Q += off_z * stride_qz + off_h * stride_qh
    K += off_z * stride_kz + off_hk * stride_kh
    L += (off_z * H + off_h) * M
    TA += (off_z * H + off_h) * N

    if CAUSAL:
        lo = tl.maximum(start_n * BLOCK_N - P_SEQ, 0)
        lo = (lo // BLOCK_M) * BLOCK_M
    else:
        lo = 0
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_DMODEL)
    mask_n = offs_n < N
    k_ptrs = K + offs_n[:, None] * stride_kn + offs_k[None, :] * stride_kk
    if DIVISIBLE_N:
        k = tl.load(k_ptrs)
    else:
        k = tl.load(k_ptrs, mask=mask_n[:, None])

    tot = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start_m in tl.range(lo, M, BLOCK_M, num_stages=2):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        mask_m = offs_m < M
        q_ptrs = Q + offs_m[:, None] * stride_qm + offs_k[None, :] * stride_qk
        if DIVISIBLE_M:
            q = tl.load(q_ptrs)
            l = tl.load(L + offs_m)
        else:
            q = tl.load(q_ptrs, mask=mask_m[:, None])
            l = tl.load(L + offs_m, mask=mask_m)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        p = tl.math.exp2(s - l[:, None] * log2e)
        if not DIVISIBLE_M:
            p = tl.where(mask_m[:, None], p, 0.0)
        if CAUSAL:
            p = tl.where((P_SEQ + offs_m[:, None]) >= offs_n[None, :], p, 0.0)
        tot += tl.sum(p, 0)

    if DIVISIBLE_N:
        tl.store(TA + offs_n, tot)
    else:
        tl.store(TA + offs_n, tot, mask=mask_n)


# ---- FlagAttention: paged decode attention -------------------------------------------------------


@triton.jit
def _fa_paged_decode(
    out_ptr, q_ptr, k_cache_ptr, v_cache_ptr,
    context_lens_ptr, block_tables_ptr,
    attn_scale,
    stride_bt0, stride_bt1,
    stride_q0, stride_q1,
    stride_kb, stride_kh, stride_kt,
    stride_o0, stride_o1,
    NUM_KV_HEADS: tl.constexpr,
    QUERY_GROUP_SIZE: tl.constexpr,
    HEAD_SIZE: tl.constexpr,
    KV_BLOCK_SIZE: tl.constexpr,
):
    seq_idx = tl.program_id(0)
    head_idx = tl.program_id(1)
    kv_head_idx = head_idx // QUERY_GROUP_SIZE
    context_len = tl.load(context_lens_ptr + seq_idx)
    tl.assume(context_len > 0)
    num_blocks = tl.cdiv(context_len, KV_BLOCK_SIZE)

    offs_d = tl.arange(0, HEAD_SIZE)
    offs_t = tl.arange(0, KV_BLOCK_SIZE)
    q = tl.load(q_ptr + seq_idx * stride_q0 + head_idx * stride_q1 + offs_d).to(tl.float32)
    q = q * attn_scale

    m_i = float("-inf")
    l_i = 0.0
    acc = tl.zeros([HEAD_SIZE], dtype=tl.float32)
    for b in range(num_blocks):
        block_number = tl.load(block_tables_ptr + seq_idx * stride_bt0 + b * stride_bt1).to(tl.int64)
        kv_off = block_number * stride_kb + kv_head_idx * stride_kh + offs_t[:, None] * stride_kt + offs_d[None, :]
        tok = b * KV_BLOCK_SIZE + offs_t
        valid = tok < context_len
        k = tl.load(k_cache_ptr + kv_off, mask=valid[:, None], other=0.0).to(tl.float32)
        v = tl.load(v_cache_ptr + kv_off, mask=valid[:, None], other=0.0).to(tl.float32)
        qk = tl.sum(q[None, :] * k, axis=1)
        qk = tl.where(valid, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=0))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        m_i = m_new
    out = acc / l_i
    tl.store(out_ptr + seq_idx * stride_o0 + head_idx * stride_o1 + offs_d, out.to(out_ptr.dtype.element_ty))


# ---- applied-ai: split-K GEMM --------------------------------------------------------------------


@triton.jit
def _ai_grouped_launch(pid, m, n, block_m: tl.constexpr, block_n: tl.constexpr, group_m: tl.constexpr):
    grid_m = tl.cdiv(m, block_m)
    grid_n = tl.cdiv(n, block_n)
    width = group_m * grid_n
    group_id = pid // width
    group_size = tl.minimum(grid_m - group_id * group_m, group_m)
    pid_m = group_id * group_m + (pid % group_size)
    pid_n = (pid % width) // group_size
    return pid_m, pid_n


@triton.jit
def _ai_splitk_gemm(
    a_ptr, b_ptr, c_ptr,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    m, n, k,
    block_m: tl.constexpr, block_n: tl.constexpr, block_k: tl.constexpr,
    split_k: tl.constexpr, group_m: tl.constexpr,
):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    total_blocks_k = tl.cdiv(k, block_k * split_k)
    pid_m, pid_n = _ai_grouped_launch(pid, m, n, block_m, block_n, group_m)

    offs_am = pid_m * block_m + tl.arange(0, block_m)
    offs_bn = pid_n * block_n + tl.arange(0, block_n)
    offs_k = pid_k * block_k + tl.arange(0, block_k)
    offs_am = tl.max_contiguous(tl.multiple_of(offs_am, block_m), block_m)
    offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, block_n), block_n)

    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((block_m, block_n), dtype=tl.float32)
    for k_ in range(0, total_blocks_k):
        k_remaining = k - k_ * (block_k * split_k)
        a = tl.load(a_ptrs, mask=(offs_am[:, None] < m) & (offs_k[None, :] < k_remaining), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_remaining) & (offs_bn[None, :] < n), other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=tl.float32)
        a_ptrs += block_k * split_k * stride_ak
        b_ptrs += block_k * split_k * stride_bk

    offs_cm = pid_m * block_m + tl.arange(0, block_m)
    offs_cn = pid_n * block_n + tl.arange(0, block_n)
    c_ptrs = c_ptr + (offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn)
    mask = (offs_cm < m)[:, None] & (offs_cn < n)[None, :]
    tl.atomic_add(c_ptrs, acc, mask=mask, sem="relaxed", scope="gpu")


# ---- applied-ai: fp8 GEMM with row-wise scales ---------------------------------------------------


@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def _ai_fp8_rowwise_gemm(
    A, B, C, A_scale, B_scale, Bias,
    M, N, K,
    stride_am, stride_ak,
    stride_bn, stride_bk,
    stride_cm, stride_cn,
    USE_BIAS: tl.constexpr,
    EVEN_K: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    pid_m, pid_n = _ai_grouped_launch(pid, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # clamp the row and column indices instead of masking the loads
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = A + (ram[:, None] * stride_am + rk[None, :] * stride_ak)
    b_ptrs = B + (rk[:, None] * stride_bk + rbn[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            k_rem = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=rk[None, :] < k_rem, other=0)
            b = tl.load(b_ptrs, mask=rk[:, None] < k_rem, other=0)
        a = a.to(tl.float8e4nv, bitcast=True)
        b = b.to(tl.float8e4nv, bitcast=True)
        acc = tl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    a_scale = tl.load(A_scale + rm, mask=rm < M)
    b_scale = tl.load(B_scale + rn, mask=rn < N)
    acc *= a_scale[:, None] * b_scale[None, :]
    if USE_BIAS:
        bias = tl.load(Bias + rn, mask=rn < N)
        acc += bias[None, :]
    c = acc.to(C.dtype.element_ty)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    tl.store(C + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c, mask=mask)


# ---- applied-ai: stream-K-like GEMM --------------------------------------------------------------


@triton.jit
def _ai_mac_loop(A, B, C, M, N, K, stride_am, stride_bk, stride_cm,
                 tile_id, iter_start, iter_end,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m = tile_id // tiles_n
    pid_n = tile_id % tiles_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = iter_start * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for it in range(iter_start, iter_end):
        kk = it * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptrs, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.atomic_add(C + rm[:, None] * stride_cm + rn[None, :], acc, mask=mask, sem="relaxed")


@triton.jit
def _ai_streamk_gemm(
    A, B, C,
    M, N, K,
    stride_am, stride_bk, stride_cm,
    total_programs,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    iters_per_tile = tl.cdiv(K, BLOCK_K)
    total_tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    total_iters = total_tiles * iters_per_tile
    iters_per_program = tl.cdiv(total_iters, total_programs)
    it = pid * iters_per_program
    last = tl.minimum(it + iters_per_program, total_iters)
    # walk this program's MAC iterations, one tile segment at a time
    while it < last:
        tile_id = it // iters_per_tile
        seg_start = it % iters_per_tile
        seg_end = tl.minimum(iters_per_tile, seg_start + (last - it))
        _ai_mac_loop(A, B, C, M, N, K, stride_am, stride_bk, stride_cm, tile_id, seg_start, seg_end,
                     BLOCK_M, BLOCK_N, BLOCK_K)
        it += seg_end - seg_start


# ---- applied-ai: MoE GEMM over tokens sorted by expert -------------------------------------------


@triton.jit
def _ai_moe_gemm(
    X, W, Y, expert_offsets,
    N, K,
    stride_xm, stride_we, stride_wn, stride_wk, stride_ym,
    MAX_M_TILES: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    pid_n = tl.program_id(1)
    expert = pid // MAX_M_TILES
    m_tile = pid % MAX_M_TILES
    row_start = tl.load(expert_offsets + expert)
    row_end = tl.load(expert_offsets + expert + 1)
    first = row_start + m_tile * BLOCK_M
    if first >= row_end:
        return

    rm = first + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    m_mask = rm < row_end
    # column-major expert weights: W[e] is N x K with K contiguous
    w_base = W + expert.to(tl.int64) * stride_we
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        x = tl.load(X + rm[:, None] * stride_xm + kk[None, :], mask=m_mask[:, None] & (kk[None, :] < K), other=0.0)
        w = tl.load(w_base + rn[None, :] * stride_wn + kk[:, None] * stride_wk,
                    mask=(rn[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc += tl.dot(x, w)
    tl.store(Y + rm[:, None] * stride_ym + rn[None, :], acc.to(Y.dtype.element_ty),
             mask=m_mask[:, None] & (rn[None, :] < N))


# ---- applied-ai: persistent grouped GEMM from offset tables --------------------------------------


@triton.jit
def _ai_grouped_gemm(
    A, B, C,
    group_sizes,  # [G, 3]: m, n, k
    group_offsets,  # [G, 3]: element offsets of a, b, c (int64)
    group_lds,  # [G, 3]: lda, ldb, ldc
    group_count,
    NUM_SM: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_count):
        gm = tl.load(group_sizes + g * 3)
        gn = tl.load(group_sizes + g * 3 + 1)
        gk = tl.load(group_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_N)
        num_tiles = num_m_tiles * num_n_tiles
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            lda = tl.load(group_lds + g * 3)
            ldb = tl.load(group_lds + g * 3 + 1)
            ldc = tl.load(group_lds + g * 3 + 2)
            a_ptr = A + tl.load(group_offsets + g * 3)
            b_ptr = B + tl.load(group_offsets + g * 3 + 1)
            c_ptr = C + tl.load(group_offsets + g * 3 + 2)
            tile_in_group = tile_idx - last_problem_end
            tile_m = tile_in_group // num_n_tiles
            tile_n = tile_in_group % num_n_tiles
            offs_am = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_bn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_K)):
                ks = kk * BLOCK_K + offs_k
                a = tl.load(a_ptr + offs_am[:, None] * lda + ks[None, :],
                            mask=(offs_am[:, None] < gm) & (ks[None, :] < gk), other=0.0)
                b = tl.load(b_ptr + ks[:, None] * ldb + offs_bn[None, :],
                            mask=(ks[:, None] < gk) & (offs_bn[None, :] < gn), other=0.0)
                acc += tl.dot(a, b)
            c = acc.to(C.dtype.element_ty)
            tl.store(c_ptr + offs_am[:, None] * ldc + offs_bn[None, :], c,
                     mask=(offs_am[:, None] < gm) & (offs_bn[None, :] < gn))
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


# ---- flashinfer: fused add + RMS norm ------------------------------------------------------------


@triton.jit
def _fi_fused_add_rms_norm(
    input_ptr, residual_ptr, weight_ptr,
    input_stride, residual_stride,
    n_cols, eps,
    GEMMA: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0)
    input_ptr += row * input_stride
    residual_ptr += row * residual_stride
    sq = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in tl.range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(input_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(residual_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        x += r
        # the residual carries the sum, rounded to its storage type
        tl.store(residual_ptr + cols, x.to(residual_ptr.dtype.element_ty), mask=mask)
        xr = x.to(residual_ptr.dtype.element_ty).to(tl.float32)
        sq += xr * xr
    rrms = tl.rsqrt(tl.sum(sq, axis=0) / n_cols + eps)
    for off in tl.range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(residual_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(weight_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        if GEMMA:
            w = w + 1.0
        tl.store(input_ptr + cols, (x * rrms * w).to(input_ptr.dtype.element_ty), mask=mask)


# ---- flashinfer: merging attention states --------------------------------------------------------


@triton.jit
def _fi_merge_state(
    v_a_ptr, s_a_ptr, v_b_ptr, s_b_ptr,
    v_merged_ptr, s_merged_ptr,
    num_heads, head_dim,
    bdx: tl.constexpr,
):
    pos = tl.program_id(0)
    for head in tl.range(0, num_heads):
        s_a = tl.load(s_a_ptr + pos * num_heads + head)
        s_b = tl.load(s_b_ptr + pos * num_heads + head)
        s_max = tl.maximum(s_a, s_b)
        s_a = s_a - s_max
        s_b = s_b - s_max
        a_scale = tl.exp2(s_a)
        b_scale = tl.exp2(s_b)
        denom = a_scale + b_scale
        a_scale = a_scale / denom
        b_scale = b_scale / denom
        for d in tl.range(0, head_dim, bdx):
            offs = d + tl.arange(0, bdx)
            mask = offs < head_dim
            base = (pos * num_heads + head) * head_dim
            v_a = tl.load(v_a_ptr + base + offs, mask=mask).to(tl.float32)
            v_b = tl.load(v_b_ptr + base + offs, mask=mask).to(tl.float32)
            v_m = v_a * a_scale + v_b * b_scale
            tl.store(v_merged_ptr + base + offs, v_m.to(v_merged_ptr.dtype.element_ty), mask=mask)
        if s_merged_ptr is not None:
            tl.store(s_merged_ptr + pos * num_heads + head, tl.log2(denom) + s_max)


@triton.jit
def _fi_variable_length_merge_states(
    v_ptr, s_ptr, indptr,
    v_merged_ptr, s_merged_ptr,
    num_heads, head_dim: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pos = tl.program_id(0)
    head = tl.program_id(1)
    start = tl.load(indptr + pos)
    end = tl.load(indptr + pos + 1)
    offs = tl.arange(0, BLOCK_D)
    dmask = offs < head_dim
    s_max = float("-inf")
    d = 0.0
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for idx in range(start, end):
        s = tl.load(s_ptr + idx * num_heads + head)
        v = tl.load(v_ptr + (idx * num_heads + head) * head_dim + offs, mask=dmask, other=0.0).to(tl.float32)
        s_new = tl.maximum(s_max, s)
        d = d * tl.exp2(s_max - s_new) + tl.exp2(s - s_new)
        acc = acc * tl.exp2(s_max - s_new) + v * tl.exp2(s - s_new)
        s_max = s_new
    tl.store(v_merged_ptr + (pos * num_heads + head) * head_dim + offs,
             (acc / d).to(v_merged_ptr.dtype.element_ty), mask=dmask)
    tl.store(s_merged_ptr + pos * num_heads + head, s_max + tl.log2(d))


# ---- flashinfer: appending K/V rows to a paged cache ---------------------------------------------


@triton.jit
def _fi_append_paged_kv(
    k_ptr, v_ptr,
    batch_indices, positions,
    kv_indptr, kv_indices,
    k_cache, v_cache,
    stride_kt, stride_kh,
    stride_cp, stride_cs, stride_ch,
    num_heads,
    PAGE_SIZE: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_H: tl.constexpr,
):
    tok = tl.program_id(0)
    b = tl.load(batch_indices + tok)
    pos = tl.load(positions + tok)
    page_iter = pos // PAGE_SIZE
    entry = pos % PAGE_SIZE
    page = tl.load(kv_indices + tl.load(kv_indptr + b) + page_iter).to(tl.int64)
    heads = tl.arange(0, BLOCK_H)
    dims = tl.arange(0, HEAD_DIM)
    hmask = heads[:, None] < num_heads
    src = tok * stride_kt + heads[:, None] * stride_kh + dims[None, :]
    dst = page * stride_cp + entry * stride_cs + heads[:, None] * stride_ch + dims[None, :]
    tl.store(k_cache + dst, tl.load(k_ptr + src, mask=hmask), mask=hmask)
    tl.store(v_cache + dst, tl.load(v_ptr + src, mask=hmask), mask=hmask)
