"""Chunked and recurrent kernels for delta-rule linear attention (DeltaNet,
gated DeltaNet and KDA with per-channel decays).

Tensors are laid out [B, T, H, D] (or packed [1, total, H, D] with
``cu_seqlens`` for variable-length batches, where ``chunk_indices`` holds the
flattened (sequence, chunk) pairs a program visits and ``chunk_offsets`` each
sequence's first chunk). In the chunked kernels, gates named ``gk`` are
per-channel and in log2 units (the kernels use ``exp2``); scalar gates ``g`` are
in natural-log units unless a kernel says otherwise. The recurrent kernels take
natural-log decays.

Kernels:
  l2norm_fwd_kernel1 / l2norm_bwd_kernel / l2norm_bwd_kernel1  -- row L2 norm
  kda_gate_chunk_cumsum_kernel       -- KDA decay gate fused with the chunk-local cumsum
  chunk_global_cumsum_vector_kernel  -- whole-sequence cumsum of vector gates
  chunk_kda_fwd_kernel_intra         -- intra-chunk Akk / Aqk with per-channel decay
  chunk_kda_fwd_kernel_intra_sub_chunk -- the diagonal sub-blocks of the same, one column per step
  merge_16x16_to_64x64_inverse_kernel -- (I + A)^-1 of 64-row chunks
  chunk_scaled_dot_kkt_solve_kernel  -- beta K K^T on 32-row chunks and its inverse
  recompute_w_u_kda_fwd_kernel       -- WY representation w, u (and the decayed keys)
  chunk_gated_delta_rule_fwd_kernel_h_blockdim64 -- chunk-level state recurrence
  chunk_kda_fwd_kernel_o / chunk_fwd_kernel_o_exp2 -- chunk outputs
  chunk_bwd_kernel_dv_local / chunk_gated_delta_rule_bwd_kernel_dhu -- backward pieces
  prepare_wy_repr_bwd_kernel         -- backward of the WY representation
  fused_recurrent_kda_fwd_kernel     -- token-by-token KDA
  fused_sigmoid_gating_delta_rule_update_kernel -- decoding step on a state pool
"""
import triton
import triton.language as tl

RCP_LN2 = 1.4426950408889634


@triton.jit
def _locate_chunk(i_t, i_b, T, cu_seqlens, chunk_indices, IS_VARLEN: tl.constexpr):
    """The chunk program i_t of sequence i_b works on, as (its index in its
    sequence, the sequence's first row, the sequence's length); a varlen
    program reads its (sequence, chunk) pair from chunk_indices."""
    if IS_VARLEN:
        i_n = tl.load(chunk_indices + i_t * 2).to(tl.int32)
        i_t = tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos = tl.load(cu_seqlens + i_n).to(tl.int32)
        eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos = i_b * T
    return i_t, bos, T


@triton.jit
def _global_chunk(i_t, i_b, T, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    """Program i_t's chunk among all sequences' (the index of its state in
    h): chunk_indices lists the varlen pairs in that order already."""
    if IS_VARLEN:
        return i_t
    else:
        return i_b * tl.cdiv(T, BT) + i_t


@triton.jit
def _softplus(x):
    # linear above 20, where log(1 + e^x) == x in fp32
    return tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(tl.minimum(x, 20.0))))


@triton.jit
def _unit_lower_inverse(b_a, BC: tl.constexpr):
    """(I + tril(b_a, -1))^-1 of one BC x BC block by forward substitution.

    Writing the inverse as I + Y with Y strictly lower, row i of Y is
    -a_i - sum_j a_ij Y_j, so rows are completed top to bottom."""
    o_i = tl.arange(0, BC)
    b_l = tl.where(o_i[:, None] > o_i[None, :], b_a, 0.)
    b_y = tl.zeros([BC, BC], dtype=tl.float32)
    for i in range(1, BC):
        # row i of the strictly lower part, then row i of Y from the rows above it
        b_li = tl.sum(tl.where(o_i[:, None] == i, b_l, 0.), 0)
        b_yi = -b_li - tl.sum(b_li[:, None] * b_y, 0)
        b_y = tl.where(o_i[:, None] == i, b_yi[None, :], b_y)
    return b_y + tl.where(o_i[:, None] == o_i[None, :], 1., 0.)


# ---------------------------------------------------------------------------------------------
# L2 norm
# ---------------------------------------------------------------------------------------------


@triton.jit
def l2norm_fwd_kernel1(x, y, rstd, eps, D, BD: tl.constexpr):
    i_row = tl.program_id(0).to(tl.int64)
    o_d = tl.arange(0, BD)
    m_d = o_d < D
    b_x = tl.load(x + i_row * D + o_d, mask=m_d, other=0.).to(tl.float32)
    b_r = 1. / tl.sqrt(tl.sum(b_x * b_x) + eps)
    tl.store(y + i_row * D + o_d, (b_x * b_r).to(y.dtype.element_ty), mask=m_d)
    tl.store(rstd + i_row, b_r)


@triton.autotune(
    configs=[triton.Config({'BT': bt}, num_warps=nw) for bt in (8, 16, 32) for nw in (1, 2, 4)],
    key=['D'],
)
@triton.jit
def l2norm_bwd_kernel(y, rstd, dy, dx, T, D: tl.constexpr, BD: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    o_t = i_t * BT + tl.arange(0, BT)
    o_d = tl.arange(0, BD)
    m_t = o_t < T
    m = m_t[:, None] & (o_d < D)[None, :]
    offs = o_t[:, None] * D + o_d[None, :]
    b_y = tl.load(y + offs, mask=m, other=0.).to(tl.float32)
    b_dy = tl.load(dy + offs, mask=m, other=0.).to(tl.float32)
    b_r = tl.load(rstd + o_t, mask=m_t, other=0.).to(tl.float32)
    # remove the component of dy along y, then undo the normalisation
    b_dx = (b_dy - b_y * tl.sum(b_dy * b_y, 1)[:, None]) * b_r[:, None]
    tl.store(dx + offs, b_dx.to(dx.dtype.element_ty), mask=m)


@triton.jit
def l2norm_bwd_kernel1(x, dy, dx, eps, D, BD: tl.constexpr):
    i_row = tl.program_id(0).to(tl.int64)
    o_d = tl.arange(0, BD)
    m_d = o_d < D
    b_x = tl.load(x + i_row * D + o_d, mask=m_d, other=0.).to(tl.float32)
    b_dy = tl.load(dy + i_row * D + o_d, mask=m_d, other=0.).to(tl.float32)
    b_r = 1. / tl.sqrt(tl.sum(b_x * b_x) + eps)
    b_dx = b_dy * b_r - tl.sum(b_dy * b_x) * (b_r * b_r * b_r) * b_x
    tl.store(dx + i_row * D + o_d, b_dx.to(dx.dtype.element_ty), mask=m_d)


# ---------------------------------------------------------------------------------------------
# gates and cumulative sums
# ---------------------------------------------------------------------------------------------


@triton.heuristics({
    'HAS_BIAS': lambda args: args['dt_bias'] is not None,
    'HAS_SCALE': lambda args: args['scale'] is not None,
    'IS_VARLEN': lambda args: args['cu_seqlens'] is not None,
})
@triton.jit
def kda_gate_chunk_cumsum_kernel(
    g, A_log, dt_bias, o, scale, cu_seqlens, chunk_indices, T,
    H: tl.constexpr, S: tl.constexpr, BT: tl.constexpr, BS: tl.constexpr,
    REVERSE: tl.constexpr, HAS_SCALE: tl.constexpr, HAS_BIAS: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    i_s, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = _locate_chunk(i_t, i_b, T, cu_seqlens, chunk_indices, IS_VARLEN)

    o_t = i_t * BT + tl.arange(0, BT)
    o_s = i_s * BS + tl.arange(0, BS)
    m_t = o_t < T
    m_s = o_s < S
    m = m_t[:, None] & m_s[None, :]
    offs = ((bos + o_t) * H + i_h)[:, None] * S + o_s[None, :]

    b_x = tl.load(g + offs, mask=m, other=0.).to(tl.float32)
    if HAS_BIAS:
        b_x += tl.load(dt_bias + i_h * S + o_s, mask=m_s, other=0.).to(tl.float32)[None, :]
    b_decay = -tl.exp(tl.load(A_log + i_h).to(tl.float32))
    # rows past the end must add nothing to a reverse (suffix) sum
    b_a = tl.where(m, b_decay * _softplus(b_x), 0.)
    b_o = tl.cumsum(b_a, axis=0, reverse=REVERSE)
    if HAS_SCALE:
        b_o *= scale
    tl.store(o + offs, b_o.to(o.dtype.element_ty), mask=m)


@triton.heuristics({
    'HAS_SCALE': lambda args: args['scale'] is not None,
    'IS_VARLEN': lambda args: args['cu_seqlens'] is not None,
})
@triton.jit
def chunk_global_cumsum_vector_kernel(
    s, z, scale, cu_seqlens, T,
    H: tl.constexpr, S: tl.constexpr, BT: tl.constexpr, BS: tl.constexpr,
    REVERSE: tl.constexpr, HAS_SCALE: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    i_s, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i_b).to(tl.int32)
        eos = tl.load(cu_seqlens + i_b + 1).to(tl.int32)
        T = eos - bos
    else:
        bos = i_b * T
    NT = tl.cdiv(T, BT)

    o_s = i_s * BS + tl.arange(0, BS)
    m_s = o_s < S
    o_c = tl.arange(0, BT)
    # running total of the chunks already done
    b_carry = tl.zeros([BS], dtype=tl.float32)
    for i_c in range(NT):
        if REVERSE:
            i_t = NT - 1 - i_c
        else:
            i_t = i_c
        o_t = i_t * BT + o_c
        m = (o_t < T)[:, None] & m_s[None, :]
        offs = ((bos + o_t) * H + i_h)[:, None] * S + o_s[None, :]
        b_x = tl.load(s + offs, mask=m, other=0.).to(tl.float32)
        b_z = tl.cumsum(b_x, axis=0, reverse=REVERSE) + b_carry[None, :]
        b_carry += tl.sum(b_x, 0)
        if HAS_SCALE:
            b_z *= scale
        tl.store(z + offs, b_z.to(z.dtype.element_ty), mask=m)


# ---------------------------------------------------------------------------------------------
# intra-chunk matrices and their inverses
# ---------------------------------------------------------------------------------------------


@triton.heuristics({'IS_VARLEN': lambda args: args['cu_seqlens'] is not None})
@triton.jit
def chunk_kda_fwd_kernel_intra(
    q, k, g, beta, Akk, Aqk, scale, cu_seqlens, chunk_indices, T,
    H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = _locate_chunk(i_t, i_b, T, cu_seqlens, chunk_indices, IS_VARLEN)

    o_i = tl.arange(0, BT)
    o_t = i_t * BT + o_i
    m_t = o_t < T
    row = (bos + o_t) * H + i_h

    b_qk = tl.zeros([BT, BT], dtype=tl.float32)
    b_kk = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        o_k = i_k * BK + tl.arange(0, BK)
        m_k = o_k < K
        m = m_t[:, None] & m_k[None, :]
        offs = row[:, None] * K + o_k[None, :]
        b_q = tl.load(q + offs, mask=m, other=0.).to(tl.float32)
        b_k = tl.load(k + offs, mask=m, other=0.).to(tl.float32)
        b_g = tl.load(g + offs, mask=m, other=0.).to(tl.float32)
        # split 2^(g_i - g_j) around the gate of the chunk's first row
        b_g0 = tl.load(g + (bos + i_t * BT) * H * K + i_h * K + o_k, mask=m_k, other=0.).to(tl.float32)
        b_up = tl.exp2(b_g - b_g0[None, :])
        b_dn = tl.exp2(b_g0[None, :] - b_g)
        b_kt = tl.trans(b_k * b_dn)
        b_qk += tl.dot(b_q * b_up, b_kt)
        b_kk += tl.dot(b_k * b_up, b_kt)

    b_beta = tl.load(beta + row, mask=m_t, other=0.).to(tl.float32)
    b_kk = tl.where(o_i[:, None] > o_i[None, :], b_kk * b_beta[:, None], 0.)
    b_qk = tl.where(o_i[:, None] >= o_i[None, :], b_qk * scale, 0.)
    offs_a = row[:, None] * BT + o_i[None, :]
    tl.store(Akk + offs_a, b_kk.to(Akk.dtype.element_ty), mask=m_t[:, None])
    tl.store(Aqk + offs_a, b_qk.to(Aqk.dtype.element_ty), mask=m_t[:, None])


@triton.heuristics({'IS_VARLEN': lambda args: args['cu_seqlens'] is not None})
@triton.jit
def chunk_kda_fwd_kernel_intra_sub_chunk(
    q, k, g, beta, Aqk, Akk, scale, cu_seqlens, chunk_indices, T,
    H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    i_t, i_c, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = _locate_chunk(i_t, i_b, T, cu_seqlens, chunk_indices, IS_VARLEN)

    o_i = tl.arange(0, BC)
    t0 = i_t * BT + i_c * BC
    o_t = t0 + o_i
    m_t = o_t < T
    row = (bos + o_t) * H + i_h
    m_lo = o_i[:, None] >= o_i[None, :]

    b_qk = tl.zeros([BC, BC], dtype=tl.float32)
    b_kk = tl.zeros([BC, BC], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        o_k = i_k * BK + tl.arange(0, BK)
        m_k = o_k < K
        m = m_t[:, None] & m_k[None, :]
        offs = row[:, None] * K + o_k[None, :]
        b_q = tl.load(q + offs, mask=m, other=0.).to(tl.float32)
        b_k = tl.load(k + offs, mask=m, other=0.).to(tl.float32)
        b_g = tl.load(g + offs, mask=m, other=0.).to(tl.float32)
        for j in range(BC):
            # column j: key j against every row, decayed by 2^(g_i - g_j) per channel
            m_j = m_k & (t0 + j < T)
            p_j = ((bos + t0 + j) * H + i_h) * K + o_k
            b_kj = tl.load(k + p_j, mask=m_j, other=0.).to(tl.float32)
            b_gj = tl.load(g + p_j, mask=m_j, other=0.).to(tl.float32)
            # rows above j are dropped below; keep their exponent at 0
            b_e = tl.exp2(tl.where((o_i >= j)[:, None], b_g - b_gj[None, :], 0.))
            b_kje = b_kj[None, :] * b_e
            b_cq = tl.sum(b_q * b_kje, 1)
            b_ck = tl.sum(b_k * b_kje, 1)
            m_col = o_i[None, :] == j
            b_qk += tl.where(m_col, b_cq[:, None], 0.)
            b_kk += tl.where(m_col, b_ck[:, None], 0.)

    b_beta = tl.load(beta + row, mask=m_t, other=0.).to(tl.float32)
    b_qk = tl.where(m_lo, b_qk * scale, 0.)
    b_kk = tl.where(o_i[:, None] > o_i[None, :], b_kk * b_beta[:, None], 0.)
    # only this diagonal block of the chunk's rows, columns of valid rows only
    offs_a = row[:, None] * BT + (i_c * BC + o_i)[None, :]
    m_a = m_t[:, None] & m_t[None, :]
    tl.store(Aqk + offs_a, b_qk.to(Aqk.dtype.element_ty), mask=m_a)
    tl.store(Akk + offs_a, b_kk.to(Akk.dtype.element_ty), mask=m_a)


@triton.jit
def _load_block16(p, row0, col0, n_valid, STRIDE: tl.constexpr):
    """A 16 x 16 tile of a row-major matrix with row stride STRIDE; rows at or past n_valid read as 0."""
    o_r = row0 + tl.arange(0, 16)
    o_c = col0 + tl.arange(0, 16)
    return tl.load(p + o_r[:, None] * STRIDE + o_c[None, :], mask=(o_r < n_valid)[:, None], other=0.).to(tl.float32)


@triton.jit
def _store_block16(p, b, row0, col0, n_valid, STRIDE: tl.constexpr):
    o_r = row0 + tl.arange(0, 16)
    o_c = col0 + tl.arange(0, 16)
    tl.store(p + o_r[:, None] * STRIDE + o_c[None, :], b.to(p.dtype.element_ty), mask=(o_r < n_valid)[:, None])


@triton.heuristics({'IS_VARLEN': lambda args: args['cu_seqlens'] is not None})
@triton.jit
def merge_16x16_to_64x64_inverse_kernel(
    A, Ai, cu_seqlens, chunk_indices, T,
    H: tl.constexpr, BT: tl.constexpr, DOT_PRECISION: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    tl.static_assert(BT == 64, "64-row chunks")
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = _locate_chunk(i_t, i_b, T, cu_seqlens, chunk_indices, IS_VARLEN)

    # this chunk's rows, stride H * BT between them
    n = T - i_t * BT
    p_a = A + ((bos + i_t * BT) * H + i_h) * BT
    p_ai = Ai + ((bos + i_t * BT) * H + i_h) * BT
    HB: tl.constexpr = H * BT

    # diagonal blocks
    b_a11 = _load_block16(p_a, 0, 0, n, HB)
    b_a22 = _load_block16(p_a, 16, 16, n, HB)
    b_a33 = _load_block16(p_a, 32, 32, n, HB)
    b_a44 = _load_block16(p_a, 48, 48, n, HB)
    b_i11 = _unit_lower_inverse(b_a11, 16)
    b_i22 = _unit_lower_inverse(b_a22, 16)
    b_i33 = _unit_lower_inverse(b_a33, 16)
    b_i44 = _unit_lower_inverse(b_a44, 16)

    # blocks below the diagonal: X_ij = -X_ii sum_{j <= m < i} A_im X_mj
    b_a21 = _load_block16(p_a, 16, 0, n, HB)
    b_a31 = _load_block16(p_a, 32, 0, n, HB)
    b_a32 = _load_block16(p_a, 32, 16, n, HB)
    b_a41 = _load_block16(p_a, 48, 0, n, HB)
    b_a42 = _load_block16(p_a, 48, 16, n, HB)
    b_a43 = _load_block16(p_a, 48, 32, n, HB)

    b_i21 = -tl.dot(b_i22, tl.dot(b_a21, b_i11, input_precision=DOT_PRECISION), input_precision=DOT_PRECISION)
    b_i32 = -tl.dot(b_i33, tl.dot(b_a32, b_i22, input_precision=DOT_PRECISION), input_precision=DOT_PRECISION)
    b_i43 = -tl.dot(b_i44, tl.dot(b_a43, b_i33, input_precision=DOT_PRECISION), input_precision=DOT_PRECISION)
    b_s31 = tl.dot(b_a31, b_i11, input_precision=DOT_PRECISION)
    b_s31 = tl.dot(b_a32, b_i21, b_s31, input_precision=DOT_PRECISION)
    b_i31 = -tl.dot(b_i33, b_s31, input_precision=DOT_PRECISION)
    b_s42 = tl.dot(b_a42, b_i22, input_precision=DOT_PRECISION)
    b_s42 = tl.dot(b_a43, b_i32, b_s42, input_precision=DOT_PRECISION)
    b_i42 = -tl.dot(b_i44, b_s42, input_precision=DOT_PRECISION)
    b_s41 = tl.dot(b_a41, b_i11, input_precision=DOT_PRECISION)
    b_s41 = tl.dot(b_a42, b_i21, b_s41, input_precision=DOT_PRECISION)
    b_s41 = tl.dot(b_a43, b_i31, b_s41, input_precision=DOT_PRECISION)
    b_i41 = -tl.dot(b_i44, b_s41, input_precision=DOT_PRECISION)

    b_zero = tl.zeros([16, 16], dtype=tl.float32)
    _store_block16(p_ai, b_i11, 0, 0, n, HB)
    _store_block16(p_ai, b_zero, 0, 16, n, HB)
    _store_block16(p_ai, b_zero, 0, 32, n, HB)
    _store_block16(p_ai, b_zero, 0, 48, n, HB)
    _store_block16(p_ai, b_i21, 16, 0, n, HB)
    _store_block16(p_ai, b_i22, 16, 16, n, HB)
    _store_block16(p_ai, b_zero, 16, 32, n, HB)
    _store_block16(p_ai, b_zero, 16, 48, n, HB)
    _store_block16(p_ai, b_i31, 32, 0, n, HB)
    _store_block16(p_ai, b_i32, 32, 16, n, HB)
    _store_block16(p_ai, b_i33, 32, 32, n, HB)
    _store_block16(p_ai, b_zero, 32, 48, n, HB)
    _store_block16(p_ai, b_i41, 48, 0, n, HB)
    _store_block16(p_ai, b_i42, 48, 16, n, HB)
    _store_block16(p_ai, b_i43, 48, 32, n, HB)
    _store_block16(p_ai, b_i44, 48, 48, n, HB)


@triton.heuristics({
    'USE_G': lambda args: args['g'] is not None,
    'IS_VARLEN': lambda args: args['cu_seqlens'] is not None,
})
@triton.jit
def chunk_scaled_dot_kkt_solve_kernel(
    k, g, beta, Ai, cu_seqlens, chunk_indices, T,
    H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr,
    USE_G: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    tl.static_assert(BT == 2 * BC, "a chunk is two sub-chunks")
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = _locate_chunk(i_t, i_b, T, cu_seqlens, chunk_indices, IS_VARLEN)

    o_c = tl.arange(0, BC)
    o_t1 = i_t * BT + o_c
    o_t2 = o_t1 + BC
    m_t1 = o_t1 < T
    m_t2 = o_t2 < T
    row1 = (bos + o_t1) * H + i_h
    row2 = (bos + o_t2) * H + i_h

    b_a11 = tl.zeros([BC, BC], dtype=tl.float32)
    b_a21 = tl.zeros([BC, BC], dtype=tl.float32)
    b_a22 = tl.zeros([BC, BC], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        o_k = i_k * BK + tl.arange(0, BK)
        m_k = o_k < K
        b_k1 = tl.load(k + row1[:, None] * K + o_k[None, :], mask=m_t1[:, None] & m_k[None, :], other=0.)
        b_k2 = tl.load(k + row2[:, None] * K + o_k[None, :], mask=m_t2[:, None] & m_k[None, :], other=0.)
        b_k1 = b_k1.to(tl.float32)
        b_k2 = b_k2.to(tl.float32)
        b_a11 += tl.dot(b_k1, tl.trans(b_k1), input_precision="ieee")
        b_a21 += tl.dot(b_k2, tl.trans(b_k1), input_precision="ieee")
        b_a22 += tl.dot(b_k2, tl.trans(b_k2), input_precision="ieee")

    b_b1 = tl.load(beta + row1, mask=m_t1, other=0.).to(tl.float32)
    b_b2 = tl.load(beta + row2, mask=m_t2, other=0.).to(tl.float32)
    if USE_G:
        b_g1 = tl.load(g + row1, mask=m_t1, other=0.).to(tl.float32)
        b_g2 = tl.load(g + row2, mask=m_t2, other=0.).to(tl.float32)
        b_a11 *= tl.exp(b_g1[:, None] - b_g1[None, :])
        b_a21 *= tl.exp(b_g2[:, None] - b_g1[None, :])
        b_a22 *= tl.exp(b_g2[:, None] - b_g2[None, :])
    b_a11 *= b_b1[:, None]
    b_a21 *= b_b2[:, None]
    b_a22 *= b_b2[:, None]

    b_i11 = _unit_lower_inverse(b_a11, BC)
    b_i22 = _unit_lower_inverse(b_a22, BC)
    b_i21 = -tl.dot(tl.dot(b_i22, b_a21, input_precision="ieee"), b_i11, input_precision="ieee")

    tl.store(Ai + row1[:, None] * BT + o_c[None, :], b_i11.to(Ai.dtype.element_ty), mask=m_t1[:, None])
    tl.store(Ai + row1[:, None] * BT + BC + o_c[None, :], tl.zeros([BC, BC], dtype=Ai.dtype.element_ty),
             mask=m_t1[:, None])
    tl.store(Ai + row2[:, None] * BT + o_c[None, :], b_i21.to(Ai.dtype.element_ty), mask=m_t2[:, None])
    tl.store(Ai + row2[:, None] * BT + BC + o_c[None, :], b_i22.to(Ai.dtype.element_ty), mask=m_t2[:, None])


@triton.heuristics({
    'STORE_KG': lambda args: args['kg'] is not None,
    'IS_VARLEN': lambda args: args['cu_seqlens'] is not None,
})
@triton.jit
def recompute_w_u_kda_fwd_kernel(
    k, v, beta, w, u, kg, A, gk, cu_seqlens, chunk_indices, T,
    H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    STORE_KG: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = _locate_chunk(i_t, i_b, T, cu_seqlens, chunk_indices, IS_VARLEN)

    o_i = tl.arange(0, BT)
    o_t = i_t * BT + o_i
    m_t = o_t < T
    row = (bos + o_t) * H + i_h
    # the inverse, with the columns of rows past the end cleared
    b_a = tl.load(A + row[:, None] * BT + o_i[None, :], mask=m_t[:, None] & m_t[None, :], other=0.)
    b_a = b_a.to(tl.float32)
    b_beta = tl.load(beta + row, mask=m_t, other=0.).to(tl.float32)
    last = (bos + tl.minimum(i_t * BT + BT, T) - 1) * H + i_h

    for i_v in range(tl.cdiv(V, BV)):
        o_v = i_v * BV + tl.arange(0, BV)
        m = m_t[:, None] & (o_v < V)[None, :]
        offs = row[:, None] * V + o_v[None, :]
        b_v = tl.load(v + offs, mask=m, other=0.).to(tl.float32)
        b_u = tl.dot(b_a, b_v * b_beta[:, None])
        tl.store(u + offs, b_u.to(u.dtype.element_ty), mask=m)

    for i_k in range(tl.cdiv(K, BK)):
        o_k = i_k * BK + tl.arange(0, BK)
        m_k = o_k < K
        m = m_t[:, None] & m_k[None, :]
        offs = row[:, None] * K + o_k[None, :]
        b_k = tl.load(k + offs, mask=m, other=0.).to(tl.float32)
        b_gk = tl.load(gk + offs, mask=m, other=0.).to(tl.float32)
        b_w = tl.dot(b_a, b_k * b_beta[:, None] * tl.exp2(b_gk))
        tl.store(w + offs, b_w.to(w.dtype.element_ty), mask=m)
        if STORE_KG:
            b_gl = tl.load(gk + last * K + o_k, mask=m_k, other=0.).to(tl.float32)
            b_kg = b_k * tl.exp2(b_gl[None, :] - b_gk)
            tl.store(kg + offs, b_kg.to(kg.dtype.element_ty), mask=m)


# ---------------------------------------------------------------------------------------------
# chunk-level state recurrence and outputs
# ---------------------------------------------------------------------------------------------


@triton.heuristics({
    'USE_G': lambda args: args['g'] is not None,
    'USE_GK': lambda args: args['gk'] is not None,
    'USE_INITIAL_STATE': lambda args: args['h0'] is not None,
    'STORE_FINAL_STATE': lambda args: args['ht'] is not None,
    'SAVE_NEW_VALUE': lambda args: args['v_new'] is not None,
    'IS_VARLEN': lambda args: args['cu_seqlens'] is not None,
})
@triton.autotune(
    configs=[triton.Config({}, num_warps=nw, num_stages=ns) for nw in (2, 4) for ns in (1, 2)],
    key=['H', 'K', 'V', 'BT', 'BV', 'USE_G', 'USE_GK'],
)
@triton.jit
def chunk_gated_delta_rule_fwd_kernel_h_blockdim64(
    k, v, w, v_new, g, gk, h, h0, ht, cu_seqlens, chunk_offsets, T,
    H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BV: tl.constexpr,
    USE_G: tl.constexpr, USE_GK: tl.constexpr, USE_INITIAL_STATE: tl.constexpr,
    STORE_FINAL_STATE: tl.constexpr, SAVE_NEW_VALUE: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    """The state h [K, V] is carried in two slices of 64 key rows (K <= 128)."""
    tl.static_assert(K <= 128, "at most two 64-row slices")
    i_v, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // H, i_nh % H
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i_n).to(tl.int32)
        eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
        NT = tl.cdiv(T, BT)
        boh = tl.load(chunk_offsets + i_n).to(tl.int32)
    else:
        bos = i_n * T
        NT = tl.cdiv(T, BT)
        boh = i_n * NT

    o_v = i_v * BV + tl.arange(0, BV)
    m_v = o_v < V
    o_k1 = tl.arange(0, 64)
    m_k1 = o_k1 < K
    m_s1 = m_k1[:, None] & m_v[None, :]
    offs_s1 = o_k1[:, None] * V + o_v[None, :]
    o_c = tl.arange(0, BT)

    b_h1 = tl.zeros([64, BV], dtype=tl.float32)
    if K > 64:
        o_k2 = 64 + tl.arange(0, 64)
        m_k2 = o_k2 < K
        m_s2 = m_k2[:, None] & m_v[None, :]
        offs_s2 = o_k2[:, None] * V + o_v[None, :]
        b_h2 = tl.zeros([64, BV], dtype=tl.float32)
    if USE_INITIAL_STATE:
        p_h0 = h0 + i_nh * K * V
        b_h1 += tl.load(p_h0 + offs_s1, mask=m_s1, other=0.).to(tl.float32)
        if K > 64:
            b_h2 += tl.load(p_h0 + offs_s2, mask=m_s2, other=0.).to(tl.float32)

    for i_t in range(NT):
        # the state entering this chunk
        p_h = h + ((boh + i_t) * H + i_h) * K * V
        tl.store(p_h + offs_s1, b_h1.to(h.dtype.element_ty), mask=m_s1)
        if K > 64:
            tl.store(p_h + offs_s2, b_h2.to(h.dtype.element_ty), mask=m_s2)

        o_t = i_t * BT + o_c
        m_t = o_t < T
        row = (bos + o_t) * H + i_h
        m_tv = m_t[:, None] & m_v[None, :]
        last = bos + tl.minimum(i_t * BT + BT, T) - 1

        # v_new = v - w h
        b_w1 = tl.load(w + row[:, None] * K + o_k1[None, :], mask=m_t[:, None] & m_k1[None, :], other=0.)
        b_vn = tl.load(v + row[:, None] * V + o_v[None, :], mask=m_tv, other=0.).to(tl.float32)
        b_vn -= tl.dot(b_w1, b_h1.to(b_w1.dtype))
        if K > 64:
            b_w2 = tl.load(w + row[:, None] * K + o_k2[None, :], mask=m_t[:, None] & m_k2[None, :], other=0.)
            b_vn -= tl.dot(b_w2, b_h2.to(b_w2.dtype))
        if SAVE_NEW_VALUE:
            tl.store(v_new + row[:, None] * V + o_v[None, :], b_vn.to(v_new.dtype.element_ty), mask=m_tv)

        if USE_G:
            b_gl = tl.load(g + last * H + i_h).to(tl.float32)
            b_g = tl.load(g + row, mask=m_t, other=0.).to(tl.float32)
            b_vn *= tl.where(m_t, tl.exp(b_gl - b_g), 0.)[:, None]
            b_h1 *= tl.exp(b_gl)
            if K > 64:
                b_h2 *= tl.exp(b_gl)

        # h <- decayed h + k^T v_new, keys read transposed [64, BT]
        m_kt1 = m_k1[:, None] & m_t[None, :]
        b_kt1 = tl.load(k + row[None, :] * K + o_k1[:, None], mask=m_kt1, other=0.)
        if USE_GK:
            b_gkl1 = tl.load(gk + (last * H + i_h) * K + o_k1, mask=m_k1, other=0.).to(tl.float32)
            b_gkt1 = tl.load(gk + row[None, :] * K + o_k1[:, None], mask=m_kt1, other=0.).to(tl.float32)
            b_kt1 = (b_kt1 * tl.where(m_kt1, tl.exp2(b_gkl1[:, None] - b_gkt1), 0.)).to(b_kt1.dtype)
            b_h1 *= tl.exp2(b_gkl1)[:, None]
        b_h1 += tl.dot(b_kt1, b_vn.to(b_kt1.dtype))
        if K > 64:
            m_kt2 = m_k2[:, None] & m_t[None, :]
            b_kt2 = tl.load(k + row[None, :] * K + o_k2[:, None], mask=m_kt2, other=0.)
            if USE_GK:
                b_gkl2 = tl.load(gk + (last * H + i_h) * K + o_k2, mask=m_k2, other=0.).to(tl.float32)
                b_gkt2 = tl.load(gk + row[None, :] * K + o_k2[:, None], mask=m_kt2, other=0.).to(tl.float32)
                b_kt2 = (b_kt2 * tl.where(m_kt2, tl.exp2(b_gkl2[:, None] - b_gkt2), 0.)).to(b_kt2.dtype)
                b_h2 *= tl.exp2(b_gkl2)[:, None]
            b_h2 += tl.dot(b_kt2, b_vn.to(b_kt2.dtype))

    if STORE_FINAL_STATE:
        p_ht = ht + i_nh * K * V
        tl.store(p_ht + offs_s1, b_h1.to(ht.dtype.element_ty), mask=m_s1)
        if K > 64:
            tl.store(p_ht + offs_s2, b_h2.to(ht.dtype.element_ty), mask=m_s2)


@triton.heuristics({'IS_VARLEN': lambda args: args['cu_seqlens'] is not None})
@triton.jit
def chunk_kda_fwd_kernel_o(
    q, v, gk, h, Aqk, o, scale, cu_seqlens, chunk_indices, T,
    H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    i_v, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    i_tg = _global_chunk(i_t, i_b, T, BT, IS_VARLEN)
    i_t, bos, T = _locate_chunk(i_t, i_b, T, cu_seqlens, chunk_indices, IS_VARLEN)

    o_i = tl.arange(0, BT)
    o_t = i_t * BT + o_i
    m_t = o_t < T
    row = (bos + o_t) * H + i_h
    o_v = i_v * BV + tl.arange(0, BV)
    m_v = o_v < V
    m_tv = m_t[:, None] & m_v[None, :]
    p_h = h + (i_tg * H + i_h) * K * V

    # inter-chunk part: (q * 2^gk) h
    b_o = tl.zeros([BT, BV], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        o_k = i_k * BK + tl.arange(0, BK)
        m_k = o_k < K
        m = m_t[:, None] & m_k[None, :]
        offs = row[:, None] * K + o_k[None, :]
        b_q = tl.load(q + offs, mask=m, other=0.)
        b_gk = tl.load(gk + offs, mask=m, other=0.).to(tl.float32)
        b_qg = (b_q.to(tl.float32) * tl.exp2(b_gk)).to(b_q.dtype)
        b_h = tl.load(p_h + o_k[:, None] * V + o_v[None, :], mask=m_k[:, None] & m_v[None, :], other=0.)
        b_o += tl.dot(b_qg, b_h.to(b_qg.dtype))
    b_o *= scale

    # intra-chunk part: Aqk v over the chunk's valid columns
    b_a = tl.load(Aqk + row[:, None] * BT + o_i[None, :], mask=m_t[:, None] & m_t[None, :], other=0.)
    b_v = tl.load(v + row[:, None] * V + o_v[None, :], mask=m_tv, other=0.)
    b_o += tl.dot(b_a.to(b_v.dtype), b_v)
    tl.store(o + row[:, None] * V + o_v[None, :], b_o.to(o.dtype.element_ty), mask=m_tv)


@triton.heuristics({
    'USE_G': lambda args: args['g'] is not None,
    'IS_VARLEN': lambda args: args['cu_seqlens'] is not None,
})
@triton.jit
def chunk_fwd_kernel_o_exp2(
    q, k, v, h, g, o, scale, cu_seqlens, chunk_indices, T,
    H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    USE_G: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    """Gates g are cumulative and in log2 units."""
    i_v, i_t, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_b, i_h = i_bh // H, i_bh % H
    i_tg = _global_chunk(i_t, i_b, T, BT, IS_VARLEN)
    i_t, bos, T = _locate_chunk(i_t, i_b, T, cu_seqlens, chunk_indices, IS_VARLEN)

    o_i = tl.arange(0, BT)
    o_t = i_t * BT + o_i
    m_t = o_t < T
    row = (bos + o_t) * H + i_h
    o_v = i_v * BV + tl.arange(0, BV)
    m_v = o_v < V
    m_tv = m_t[:, None] & m_v[None, :]
    p_h = h + (i_tg * H + i_h) * K * V

    # q h and q k^T, accumulated over key blocks
    b_o = tl.zeros([BT, BV], dtype=tl.float32)
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        o_k = i_k * BK + tl.arange(0, BK)
        m_k = o_k < K
        m = m_t[:, None] & m_k[None, :]
        offs = row[:, None] * K + o_k[None, :]
        b_q = tl.load(q + offs, mask=m, other=0.)
        b_k = tl.load(k + offs, mask=m, other=0.)
        b_h = tl.load(p_h + o_k[:, None] * V + o_v[None, :], mask=m_k[:, None] & m_v[None, :], other=0.)
        b_o += tl.dot(b_q, b_h.to(b_q.dtype), input_precision="ieee")
        b_A += tl.dot(b_q, tl.trans(b_k), input_precision="ieee")

    m_lo = o_i[:, None] >= o_i[None, :]
    if USE_G:
        b_g = tl.load(g + row, mask=m_t, other=0.).to(tl.float32)
        b_o *= tl.exp2(b_g)[:, None]
        b_A *= tl.exp2(tl.where(m_lo, b_g[:, None] - b_g[None, :], 0.))
    b_A = tl.where(m_lo, b_A, 0.)

    b_v = tl.load(v + row[:, None] * V + o_v[None, :], mask=m_tv, other=0.)
    b_o += tl.dot(b_A.to(b_v.dtype), b_v, input_precision="ieee")
    b_o *= scale
    tl.store(o + row[:, None] * V + o_v[None, :], b_o.to(o.dtype.element_ty), mask=m_tv)


# ---------------------------------------------------------------------------------------------
# backward pieces
# ---------------------------------------------------------------------------------------------


@triton.heuristics({
    'USE_G': lambda args: args['g'] is not None,
    'IS_VARLEN': lambda args: args['cu_seqlens'] is not None,
})
@triton.jit
def chunk_bwd_kernel_dv_local(
    q, k, g, do, dv, scale, cu_seqlens, chunk_indices, T,
    H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    USE_G: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = _locate_chunk(i_t, i_b, T, cu_seqlens, chunk_indices, IS_VARLEN)

    o_i = tl.arange(0, BT)
    o_t = i_t * BT + o_i
    m_t = o_t < T
    row = (bos + o_t) * H + i_h

    # b_A[i, j] = k_i . q_j, kept for j >= i
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        o_k = i_k * BK + tl.arange(0, BK)
        m = m_t[:, None] & (o_k < K)[None, :]
        offs = row[:, None] * K + o_k[None, :]
        b_k = tl.load(k + offs, mask=m, other=0.)
        b_q = tl.load(q + offs, mask=m, other=0.)
        b_A += tl.dot(b_k, tl.trans(b_q))

    m_up = o_i[:, None] <= o_i[None, :]
    if USE_G:
        b_g = tl.load(g + row, mask=m_t, other=0.).to(tl.float32)
        b_A *= tl.exp(tl.where(m_up, b_g[None, :] - b_g[:, None], 0.))
    b_A = tl.where(m_up, b_A * scale, 0.)

    for i_v in range(tl.cdiv(V, BV)):
        o_v = i_v * BV + tl.arange(0, BV)
        m = m_t[:, None] & (o_v < V)[None, :]
        offs = row[:, None] * V + o_v[None, :]
        b_do = tl.load(do + offs, mask=m, other=0.)
        b_dv = tl.dot(b_A.to(b_do.dtype), b_do)
        tl.store(dv + offs, b_dv.to(dv.dtype.element_ty), mask=m)


@triton.heuristics({
    'USE_G': lambda args: args['g'] is not None,
    'USE_FINAL_STATE_GRADIENT': lambda args: args['dht'] is not None,
    'STORE_INITIAL_STATE_GRADIENT': lambda args: args['dh0'] is not None,
    'IS_VARLEN': lambda args: args['cu_seqlens'] is not None,
})
@triton.jit
def chunk_gated_delta_rule_bwd_kernel_dhu(
    q, k, w, g, dht, dh0, do, dh, dv, dv2, scale, cu_seqlens, chunk_offsets, T,
    H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    USE_G: tl.constexpr, USE_FINAL_STATE_GRADIENT: tl.constexpr, STORE_INITIAL_STATE_GRADIENT: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    """Walks the chunks backwards carrying dh [K, V] (K <= BK)."""
    i_v, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // H, i_nh % H
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i_n).to(tl.int32)
        eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
        NT = tl.cdiv(T, BT)
        boh = tl.load(chunk_offsets + i_n).to(tl.int32)
    else:
        bos = i_n * T
        NT = tl.cdiv(T, BT)
        boh = i_n * NT

    o_k = tl.arange(0, BK)
    m_k = o_k < K
    o_v = i_v * BV + tl.arange(0, BV)
    m_v = o_v < V
    m_s = m_k[:, None] & m_v[None, :]
    offs_s = o_k[:, None] * V + o_v[None, :]
    o_c = tl.arange(0, BT)

    b_dh = tl.zeros([BK, BV], dtype=tl.float32)
    if USE_FINAL_STATE_GRADIENT:
        b_dh += tl.load(dht + (i_n * H + i_h) * K * V + offs_s, mask=m_s, other=0.).to(tl.float32)

    for i_t in range(NT - 1, -1, -1):
        tl.store(dh + ((boh + i_t) * H + i_h) * K * V + offs_s, b_dh.to(dh.dtype.element_ty), mask=m_s)
        o_t = i_t * BT + o_c
        m_t = o_t < T
        row = (bos + o_t) * H + i_h
        m_tk = m_t[:, None] & m_k[None, :]
        m_kt = m_k[:, None] & m_t[None, :]
        m_tv = m_t[:, None] & m_v[None, :]

        b_k = tl.load(k + row[:, None] * K + o_k[None, :], mask=m_tk, other=0.).to(tl.float32)
        b_qt = tl.load(q + row[None, :] * K + o_k[:, None], mask=m_kt, other=0.).to(tl.float32)
        b_wt = tl.load(w + row[None, :] * K + o_k[:, None], mask=m_kt, other=0.).to(tl.float32)
        b_do = tl.load(do + row[:, None] * V + o_v[None, :], mask=m_tv, other=0.).to(tl.float32)
        b_dv = tl.load(dv + row[:, None] * V + o_v[None, :], mask=m_tv, other=0.).to(tl.float32)

        if USE_G:
            last = (bos + tl.minimum(i_t * BT + BT, T) - 1) * H + i_h
            b_gl = tl.load(g + last).to(tl.float32)
            b_g = tl.load(g + row, mask=m_t, other=0.).to(tl.float32)
            b_k *= tl.where(m_t, tl.exp(b_gl - b_g), 0.)[:, None]
            b_qt *= tl.where(m_t, tl.exp(b_g), 0.)[None, :]

        b_dv += tl.dot(b_k, b_dh)
        tl.store(dv2 + row[:, None] * V + o_v[None, :], b_dv.to(dv2.dtype.element_ty), mask=m_tv)

        if USE_G:
            b_dh *= tl.exp(b_gl)
        b_dh += tl.dot(b_qt * scale, b_do) - tl.dot(b_wt, b_dv)

    if STORE_INITIAL_STATE_GRADIENT:
        tl.store(dh0 + (i_n * H + i_h) * K * V + offs_s, b_dh.to(dh0.dtype.element_ty), mask=m_s)


@triton.heuristics({'IS_VARLEN': lambda args: args['cu_seqlens'] is not None})
@triton.jit
def prepare_wy_repr_bwd_kernel(
    k, v, beta, A, dw, du, dk, dv, dbeta, cu_seqlens, chunk_indices, T,
    H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    """Backward of w = A (beta k), u = A (beta v) with A = (I + stril(diag(beta) K K^T))^-1."""
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // H, i_bh % H
    i_t, bos, T = _locate_chunk(i_t, i_b, T, cu_seqlens, chunk_indices, IS_VARLEN)

    o_i = tl.arange(0, BT)
    o_t = i_t * BT + o_i
    m_t = o_t < T
    row = (bos + o_t) * H + i_h
    # A^T straight from memory: b_at[j, i] = A[i, j]
    b_at = tl.load(A + row[None, :] * BT + o_i[:, None], mask=m_t[:, None] & m_t[None, :], other=0.)
    b_at = b_at.to(tl.float32)
    b_beta = tl.load(beta + row, mask=m_t, other=0.).to(tl.float32)

    b_dA = tl.zeros([BT, BT], dtype=tl.float32)
    b_db = tl.zeros([BT], dtype=tl.float32)
    for i_v in range(tl.cdiv(V, BV)):
        o_v = i_v * BV + tl.arange(0, BV)
        m = m_t[:, None] & (o_v < V)[None, :]
        offs = row[:, None] * V + o_v[None, :]
        b_v = tl.load(v + offs, mask=m, other=0.).to(tl.float32)
        b_du = tl.load(du + offs, mask=m, other=0.).to(tl.float32)
        b_dA += tl.dot(b_du, tl.trans(b_v * b_beta[:, None]), input_precision="ieee")
        b_dvb = tl.dot(b_at, b_du, input_precision="ieee")
        b_db += tl.sum(b_dvb * b_v, 1)
        tl.store(dv + offs, (b_dvb * b_beta[:, None]).to(dv.dtype.element_ty), mask=m)

    for i_k in range(tl.cdiv(K, BK)):
        o_k = i_k * BK + tl.arange(0, BK)
        m = m_t[:, None] & (o_k < K)[None, :]
        offs = row[:, None] * K + o_k[None, :]
        b_k = tl.load(k + offs, mask=m, other=0.).to(tl.float32)
        b_dw = tl.load(dw + offs, mask=m, other=0.).to(tl.float32)
        b_dA += tl.dot(b_dw, tl.trans(b_k * b_beta[:, None]), input_precision="ieee")

    # gradient reaching the strictly lower part of diag(beta) K K^T
    b_dM = tl.dot(tl.dot(b_at, b_dA, input_precision="ieee"), b_at, input_precision="ieee")
    b_dM = tl.where(o_i[:, None] > o_i[None, :], -b_dM, 0.)

    for i_k in range(tl.cdiv(K, BK)):
        o_k = i_k * BK + tl.arange(0, BK)
        m = m_t[:, None] & (o_k < K)[None, :]
        offs = row[:, None] * K + o_k[None, :]
        b_k = tl.load(k + offs, mask=m, other=0.).to(tl.float32)
        b_dw = tl.load(dw + offs, mask=m, other=0.).to(tl.float32)
        b_dkb = tl.dot(b_at, b_dw, input_precision="ieee") + tl.dot(b_dM, b_k, input_precision="ieee")
        b_db += tl.sum(b_dkb * b_k, 1)
        b_dk = b_dkb * b_beta[:, None] + tl.dot(tl.trans(b_dM), b_k * b_beta[:, None], input_precision="ieee")
        tl.store(dk + offs, b_dk.to(dk.dtype.element_ty), mask=m)

    tl.store(dbeta + row, b_db.to(dbeta.dtype.element_ty), mask=m_t)


# ---------------------------------------------------------------------------------------------
# token-by-token recurrences
# ---------------------------------------------------------------------------------------------


@triton.heuristics({
    'USE_INITIAL_STATE': lambda args: args['h0'] is not None,
    'STORE_FINAL_STATE': lambda args: args['ht'] is not None,
    'IS_VARLEN': lambda args: args['cu_seqlens'] is not None,
})
@triton.jit
def fused_recurrent_kda_fwd_kernel(
    q, k, v, gk, beta, o, h0, ht, cu_seqlens, scale, T,
    H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
    USE_INITIAL_STATE: tl.constexpr, STORE_FINAL_STATE: tl.constexpr, IS_BETA_HEADWISE: tl.constexpr,
    USE_QK_L2NORM_IN_KERNEL: tl.constexpr, IS_VARLEN: tl.constexpr,
):
    """HV value heads share H query/key heads; gk [T, HV, K] is a natural-log decay."""
    i_v, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_hv = i_nh // HV, i_nh % HV
    i_h = i_hv // (HV // H)
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i_n).to(tl.int64)
        eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
        T = eos - bos
    else:
        bos = i_n.to(tl.int64) * T

    o_k = tl.arange(0, BK)
    m_k = o_k < K
    o_v = i_v * BV + tl.arange(0, BV)
    m_v = o_v < V
    m_h = m_k[:, None] & m_v[None, :]
    offs_h = o_k[:, None] * V + o_v[None, :]

    p_q = q + (bos * H + i_h) * K + o_k
    p_k = k + (bos * H + i_h) * K + o_k
    p_v = v + (bos * HV + i_hv) * V + o_v
    p_gk = gk + (bos * HV + i_hv) * K + o_k
    p_o = o + (bos * HV + i_hv) * V + o_v
    if IS_BETA_HEADWISE:
        p_beta = beta + (bos * HV + i_hv) * V + o_v
    else:
        p_beta = beta + bos * HV + i_hv

    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    if USE_INITIAL_STATE:
        b_h += tl.load(h0 + i_nh * K * V + offs_h, mask=m_h, other=0.).to(tl.float32)

    for _ in range(0, T):
        b_q = tl.load(p_q, mask=m_k, other=0.).to(tl.float32)
        b_k = tl.load(p_k, mask=m_k, other=0.).to(tl.float32)
        b_v = tl.load(p_v, mask=m_v, other=0.).to(tl.float32)
        b_gk = tl.load(p_gk, mask=m_k, other=0.).to(tl.float32)
        if IS_BETA_HEADWISE:
            b_beta = tl.load(p_beta, mask=m_v, other=0.).to(tl.float32)
        else:
            b_beta = tl.load(p_beta).to(tl.float32)
        if USE_QK_L2NORM_IN_KERNEL:
            b_q = b_q / tl.sqrt(tl.sum(b_q * b_q) + 1e-6)
            b_k = b_k / tl.sqrt(tl.sum(b_k * b_k) + 1e-6)
        b_q = b_q * scale
        # decay per key channel, then the delta-rule correction
        b_h *= tl.exp(b_gk)[:, None]
        b_r = b_beta * (b_v - tl.sum(b_k[:, None] * b_h, 0))
        b_h += b_k[:, None] * b_r[None, :]
        b_o = tl.sum(b_q[:, None] * b_h, 0)
        tl.store(p_o, b_o.to(o.dtype.element_ty), mask=m_v)

        p_q += H * K
        p_k += H * K
        p_v += HV * V
        p_gk += HV * K
        p_o += HV * V
        if IS_BETA_HEADWISE:
            p_beta += HV * V
        else:
            p_beta += HV

    if STORE_FINAL_STATE:
        tl.store(ht + i_nh * K * V + offs_h, b_h.to(ht.dtype.element_ty), mask=m_h)


@triton.heuristics({
    'USE_INITIAL_STATE': lambda args: args['h0_source'] is not None,
    'IS_VARLEN': lambda args: args['cu_seqlens'] is not None,
})
@triton.jit
def fused_sigmoid_gating_delta_rule_update_kernel(
    A_log, a, dt_bias, softplus_beta, softplus_threshold, q, k, v, b, o, h0_source, h0_indices, cu_seqlens,
    scale, T,
    B: tl.constexpr, H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
    BK: tl.constexpr, BV: tl.constexpr, USE_INITIAL_STATE: tl.constexpr, USE_QK_L2NORM_IN_KERNEL: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    """One decoding step per token: the gate g = -exp(A_log) softplus(a + dt_bias) and
    beta = sigmoid(b) are computed here; states live in a pool indexed by h0_indices."""
    i_k, i_v, i_nh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_n, i_hv = i_nh // HV, i_nh % HV
    i_h = i_hv // (HV // H)
    # all tokens of the launch (the stride of the key-block axis of o)
    all_T = B * T
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i_n).to(tl.int64)
        eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
        T = eos - bos
    else:
        bos = i_n.to(tl.int64) * T

    o_k = i_k * BK + tl.arange(0, BK)
    m_k = o_k < K
    o_v = i_v * BV + tl.arange(0, BV)
    m_v = o_v < V
    m_h = m_k[:, None] & m_v[None, :]
    offs_h = o_k[:, None] * V + o_v[None, :]

    p_q = q + (bos * H + i_h) * K + o_k
    p_k = k + (bos * H + i_h) * K + o_k
    p_v = v + (bos * HV + i_hv) * V + o_v
    p_a = a + bos * HV + i_hv
    p_b = b + bos * HV + i_hv
    p_o = o + ((i_k * all_T + bos) * HV + i_hv) * V + o_v

    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    if USE_INITIAL_STATE:
        # a negative slot means no state: start from zero and write nothing back
        i_slot = tl.load(h0_indices + i_n).to(tl.int64)
        m_slot = m_h & (i_slot >= 0)
        p_state = h0_source + (i_slot * HV + i_hv) * K * V + offs_h
        b_h += tl.load(p_state, mask=m_slot, other=0.).to(tl.float32)

    b_decay = -tl.exp(tl.load(A_log + i_hv).to(tl.float32))
    b_bias = tl.load(dt_bias + i_hv).to(tl.float32)

    for _ in range(0, T):
        b_x = tl.load(p_a).to(tl.float32) + b_bias
        b_bx = softplus_beta * b_x
        b_sp = tl.where(b_bx <= softplus_threshold,
                        tl.log(1. + tl.exp(tl.minimum(b_bx, softplus_threshold))) / softplus_beta, b_x)
        b_g = b_decay * b_sp
        b_beta = 1. / (1. + tl.exp(-tl.load(p_b).to(tl.float32)))

        b_q = tl.load(p_q, mask=m_k, other=0.).to(tl.float32)
        b_k = tl.load(p_k, mask=m_k, other=0.).to(tl.float32)
        b_v = tl.load(p_v, mask=m_v, other=0.).to(tl.float32)
        if USE_QK_L2NORM_IN_KERNEL:
            b_q = b_q / tl.sqrt(tl.sum(b_q * b_q) + 1e-6)
            b_k = b_k / tl.sqrt(tl.sum(b_k * b_k) + 1e-6)
        b_q = b_q * scale

        b_h *= tl.exp(b_g)
        b_r = b_beta * (b_v - tl.sum(b_k[:, None] * b_h, 0))
        b_h += b_k[:, None] * b_r[None, :]
        b_o = tl.sum(b_q[:, None] * b_h, 0)
        tl.store(p_o, b_o.to(o.dtype.element_ty), mask=m_v)

        p_q += H * K
        p_k += H * K
        p_v += HV * V
        p_a += HV
        p_b += HV
        p_o += HV * V

    if USE_INITIAL_STATE:
        tl.store(p_state, b_h.to(h0_source.dtype.element_ty), mask=m_slot)
