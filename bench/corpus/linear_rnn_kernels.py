"""Linear-RNN kernels as the gated-linear-attention and state-space
libraries write them, and a long scan as FlagGems writes it:

- chunk_gla_fwd_h: the inter-chunk pass of gated linear attention
  (flash-linear-attention's chunk_fwd_h). One program per (key block,
  value block, batch*head) walks the sequence chunk by chunk, storing the
  state that enters each chunk (fp32) before folding the chunk in:
  h <- h * exp(g_last)[:, None] + (k * exp(g_last - g))^T v, with g the
  gates' cumulative sum inside the chunk. k, g and v come in through block
  pointers, k and g through a transposed (K, T) view.
- mamba_chunk_state: mamba2's chunk state. Per (chunk, head) and tile of
  (headdim, dstate), the decay-and-dt weighted x^T B over the chunk's
  positions, as a K loop of [headdim, BLOCK_K] x [BLOCK_K, dstate] dots; B
  is shared by the heads of a group.
- fused_recurrent_delta: the fused recurrent delta rule, token by token.
  The [K, BV] state stays in registers for the whole sequence; each step
  is a few reductions over K and a rank-one update, q and k L2-normalised
  in the kernel.
- masked_cumsum_2d: a cumulative sum along the last dimension of a wide
  matrix, BLOCK_M rows at a time in column tiles, the running total per
  row carried from tile to tile; the last tile is ragged and masked.
"""
import torch
import triton
import triton.language as tl


# ---- gated linear attention: the state entering each chunk ------------------------------------

@triton.jit
def chunk_gla_fwd_h(k, v, g, h, h0, ht, s_k_bh, s_k_t, s_v_bh, s_v_t, s_h_bh, s_h_t, T,
                    K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr,
                    BV: tl.constexpr, USE_INITIAL_STATE: tl.constexpr,
                    STORE_FINAL_STATE: tl.constexpr):
    i_k, i_v, i_bh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    NT = tl.cdiv(T, BT)
    # the running [BK, BV] state of this (key block, value block) tile, in fp32
    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    if USE_INITIAL_STATE:
        p_h0 = tl.make_block_ptr(h0 + i_bh * K * V, (K, V), (V, 1), (i_k * BK, i_v * BV),
                                 (BK, BV), (1, 0))
        b_h += tl.load(p_h0, boundary_check=(0, 1)).to(tl.float32)
    # k and g read as (K, T) so a chunk arrives already transposed; v as (T, V)
    p_k = tl.make_block_ptr(k + i_bh * s_k_bh, (K, T), (1, s_k_t), (i_k * BK, 0), (BK, BT), (0, 1))
    p_g = tl.make_block_ptr(g + i_bh * s_k_bh, (K, T), (1, s_k_t), (i_k * BK, 0), (BK, BT), (0, 1))
    p_v = tl.make_block_ptr(v + i_bh * s_v_bh, (T, V), (s_v_t, 1), (0, i_v * BV), (BT, BV), (1, 0))
    o_k = i_k * BK + tl.arange(0, BK)
    k_in = o_k < K
    for i_t in range(NT):
        # the state entering chunk i_t
        p_h = tl.make_block_ptr(h + i_bh * s_h_bh + i_t * K * V, (K, V), (s_h_t, 1),
                                (i_k * BK, i_v * BV), (BK, BV), (1, 0))
        tl.store(p_h, b_h.to(p_h.dtype.element_ty), boundary_check=(0, 1))
        # the cumulative gate at the chunk's last valid position
        t_last = tl.minimum(i_t * BT + BT, T) - 1
        b_gl = tl.load(g + i_bh * s_k_bh + t_last * s_k_t + o_k, mask=k_in, other=0.0).to(tl.float32)
        b_k = tl.load(p_k, boundary_check=(0, 1))
        b_g = tl.load(p_g, boundary_check=(0, 1)).to(tl.float32)
        b_v = tl.load(p_v, boundary_check=(0, 1))
        # decay the carried state over the whole chunk, then add the decayed k^T v
        b_h *= tl.exp(b_gl)[:, None]
        b_kg = (b_k.to(tl.float32) * tl.exp(b_gl[:, None] - b_g)).to(b_v.dtype)
        b_h += tl.dot(b_kg, b_v)
        p_k = tl.advance(p_k, (0, BT))
        p_g = tl.advance(p_g, (0, BT))
        p_v = tl.advance(p_v, (BT, 0))
    if STORE_FINAL_STATE:
        p_ht = tl.make_block_ptr(ht + i_bh * K * V, (K, V), (V, 1), (i_k * BK, i_v * BV),
                                 (BK, BV), (1, 0))
        tl.store(p_ht, b_h.to(p_ht.dtype.element_ty), boundary_check=(0, 1))


def chunk_gla_fwd_states(k, g, v, h0=None, BT=64, BK=64, BV=64):
    BH, T, K = k.shape
    V = v.shape[-1]
    NT = triton.cdiv(T, BT)
    h = k.new_empty(BH, NT, K, V, dtype=torch.float32)
    ht = k.new_empty(BH, K, V, dtype=torch.float32)
    grid = (triton.cdiv(K, BK), triton.cdiv(V, BV), BH)
    chunk_gla_fwd_h[grid](k, v, g, h, h0, ht, k.stride(0), k.stride(1), v.stride(0), v.stride(1),
                          h.stride(0), h.stride(2), T, K=K, V=V, BT=BT, BK=BK, BV=BV,
                          USE_INITIAL_STATE=h0 is not None, STORE_FINAL_STATE=True,
                          num_warps=4, num_stages=2)
    return h, ht


# ---- mamba2: the state each chunk leaves behind --------------------------------------------------

@triton.jit
def mamba_chunk_state(x_ptr, b_ptr, dt_ptr, dA_cumsum_ptr, states_ptr,
                      chunk_size, hdim, dstate, batch, seqlen, nheads_per_group,
                      stride_x_batch, stride_x_seqlen, stride_x_head,
                      stride_b_batch, stride_b_seqlen, stride_b_group,
                      stride_dt_batch, stride_dt_head, stride_dt_chunk,
                      stride_st_batch, stride_st_chunk, stride_st_head, stride_st_hdim,
                      BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                      BLOCK_SIZE_K: tl.constexpr):
    # axis 0 tiles (hdim, dstate); axis 1 is (chunk, batch), batch fastest; axis 2 the head
    pid_mn = tl.program_id(0)
    pid_bc = tl.program_id(1)
    pid_h = tl.program_id(2)
    pid_b = pid_bc % batch
    pid_c = pid_bc // batch
    num_pid_n = tl.cdiv(dstate, BLOCK_SIZE_N)
    pid_m = pid_mn // num_pid_n
    pid_n = pid_mn % num_pid_n
    pid_g = pid_h // nheads_per_group
    chunk_start = pid_c * chunk_size
    # positions of this chunk that lie inside the sequence
    chunk_len = tl.minimum(chunk_size, seqlen - chunk_start)

    x_base = (x_ptr + pid_b.to(tl.int64) * stride_x_batch + chunk_start.to(tl.int64) * stride_x_seqlen
              + pid_h * stride_x_head)
    b_base = (b_ptr + pid_b.to(tl.int64) * stride_b_batch + chunk_start.to(tl.int64) * stride_b_seqlen
              + pid_g * stride_b_group)
    dt_base = dt_ptr + pid_b.to(tl.int64) * stride_dt_batch + pid_h * stride_dt_head + pid_c * stride_dt_chunk
    dA_base = (dA_cumsum_ptr + pid_b.to(tl.int64) * stride_dt_batch + pid_h * stride_dt_head
               + pid_c * stride_dt_chunk)

    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    m_in = offs_m < hdim
    n_in = offs_n < dstate
    # x tile as [hdim, positions], B tile as [positions, dstate]
    x_ptrs = x_base + offs_m[:, None] + offs_k[None, :] * stride_x_seqlen
    b_ptrs = b_base + offs_k[:, None] * stride_b_seqlen + offs_n[None, :]
    dt_ptrs = dt_base + offs_k
    dA_ptrs = dA_base + offs_k

    dA_end = tl.load(dA_base + chunk_len - 1).to(tl.float32)
    acc = tl.zeros([BLOCK_SIZE_M, BLOCK_SIZE_N], dtype=tl.float32)
    for k0 in range(0, chunk_len, BLOCK_SIZE_K):
        k_in = offs_k < chunk_len - k0
        xs = tl.load(x_ptrs, mask=m_in[:, None] & k_in[None, :], other=0.0)
        bs = tl.load(b_ptrs, mask=k_in[:, None] & n_in[None, :], other=0.0)
        dA_k = tl.load(dA_ptrs, mask=k_in, other=0.0).to(tl.float32)
        dt_k = tl.load(dt_ptrs, mask=k_in, other=0.0).to(tl.float32)
        # each position weighted by its dt and the decay from it to the chunk's end
        w = tl.exp(dA_end - dA_k) * dt_k
        bs = (bs.to(tl.float32) * w[:, None]).to(xs.dtype)
        acc += tl.dot(xs, bs)
        x_ptrs += BLOCK_SIZE_K * stride_x_seqlen
        b_ptrs += BLOCK_SIZE_K * stride_b_seqlen
        dt_ptrs += BLOCK_SIZE_K
        dA_ptrs += BLOCK_SIZE_K

    st_ptrs = (states_ptr + pid_b.to(tl.int64) * stride_st_batch + pid_c * stride_st_chunk
               + pid_h * stride_st_head + offs_m[:, None] * stride_st_hdim + offs_n[None, :])
    tl.store(st_ptrs, acc.to(states_ptr.dtype.element_ty), mask=m_in[:, None] & n_in[None, :])


def chunk_state(x, B, dt, dA_cumsum, BLOCK_SIZE_M=64, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64):
    batch, seqlen, nheads, hdim = x.shape
    _, _, ngroups, dstate = B.shape
    _, _, nchunks, chunk_size = dt.shape
    states = x.new_empty(batch, nchunks, nheads, hdim, dstate, dtype=torch.float32)
    grid = (triton.cdiv(hdim, BLOCK_SIZE_M) * triton.cdiv(dstate, BLOCK_SIZE_N),
            batch * nchunks, nheads)
    mamba_chunk_state[grid](x, B, dt, dA_cumsum, states, chunk_size, hdim, dstate, batch, seqlen,
                            nheads // ngroups, x.stride(0), x.stride(1), x.stride(2),
                            B.stride(0), B.stride(1), B.stride(2),
                            dt.stride(0), dt.stride(1), dt.stride(2),
                            states.stride(0), states.stride(1), states.stride(2),
                            states.stride(3), BLOCK_SIZE_M=BLOCK_SIZE_M,
                            BLOCK_SIZE_N=BLOCK_SIZE_N, BLOCK_SIZE_K=BLOCK_SIZE_K,
                            num_warps=4, num_stages=3)
    return states


# ---- the delta rule, one token at a time ------------------------------------------------------

@triton.jit
def fused_recurrent_delta(q, k, v, beta, o, ht, scale, T,
                          K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
                          USE_QK_L2NORM: tl.constexpr, STORE_FINAL_STATE: tl.constexpr):
    i_v, i_bh = tl.program_id(0), tl.program_id(1)
    o_k = tl.arange(0, BK)
    o_v = i_v * BV + tl.arange(0, BV)
    k_in = o_k < K
    v_in = o_v < V
    p_q = q + i_bh * T * K + o_k
    p_k = k + i_bh * T * K + o_k
    p_v = v + i_bh * T * V + o_v
    p_beta = beta + i_bh * T
    p_o = o + i_bh * T * V + o_v
    # the [BK, BV] state, rows over K, held in registers across all steps
    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    for _ in range(0, T):
        b_q = tl.load(p_q, mask=k_in, other=0.0).to(tl.float32)
        b_k = tl.load(p_k, mask=k_in, other=0.0).to(tl.float32)
        b_v = tl.load(p_v, mask=v_in, other=0.0).to(tl.float32)
        b_beta = tl.load(p_beta).to(tl.float32)
        if USE_QK_L2NORM:
            b_q = b_q / tl.sqrt(tl.sum(b_q * b_q, axis=0) + 1e-6)
            b_k = b_k / tl.sqrt(tl.sum(b_k * b_k, axis=0) + 1e-6)
        b_q = b_q * scale
        # the value the state currently predicts for k, replaced by v at rate beta
        b_pred = tl.sum(b_h * b_k[:, None], axis=0)
        b_vn = (b_v - b_pred) * b_beta
        b_h += b_k[:, None] * b_vn[None, :]
        b_o = tl.sum(b_h * b_q[:, None], axis=0)
        tl.store(p_o, b_o.to(p_o.dtype.element_ty), mask=v_in)
        p_q += K
        p_k += K
        p_v += V
        p_o += V
        p_beta += 1
    if STORE_FINAL_STATE:
        p_ht = ht + i_bh * K * V + o_k[:, None] * V + o_v[None, :]
        tl.store(p_ht, b_h.to(p_ht.dtype.element_ty), mask=k_in[:, None] & v_in[None, :])


def fused_recurrent_delta_rule(q, k, v, beta, scale=None, BV=32):
    BH, T, K = q.shape
    V = v.shape[-1]
    scale = K ** -0.5 if scale is None else scale
    o = torch.empty_like(v)
    ht = q.new_empty(BH, K, V, dtype=torch.float32)
    grid = (triton.cdiv(V, BV), BH)
    fused_recurrent_delta[grid](q, k, v, beta, o, ht, scale, T, K=K, V=V,
                                BK=triton.next_power_of_2(K), BV=BV, USE_QK_L2NORM=True,
                                STORE_FINAL_STATE=True, num_warps=4, num_stages=1)
    return o, ht


# ---- cumulative sum along rows, tile by tile with a carry ---------------------------------------

@triton.jit
def masked_cumsum_2d(inp, out, M, N, stride_in, stride_out, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_in = rows < M
    # 64-bit row offsets: rows * stride passes 2^31 elements at model sizes
    in_rows = inp + rows.to(tl.int64)[:, None] * stride_in
    out_rows = out + rows.to(tl.int64)[:, None] * stride_out
    # the running total of each row so far, kept as a [BLOCK_M, 1] column (keep_dims): a
    # [BLOCK_M] carry fed straight from tl.sum, unused after the loop, trips an assertion in
    # Triton 3.6's thread-locality pass
    running = tl.zeros([BLOCK_M, 1], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_in[:, None] & (cols[None, :] < N)
        x = tl.load(in_rows + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        # the masked tail loads as zeros, so the tile's sum is the row's true carry
        y = tl.cumsum(x, axis=1) + running
        tl.store(out_rows + cols[None, :], y.to(out.dtype.element_ty), mask=mask)
        running += tl.sum(x, axis=1, keep_dims=True)


def cumsum_dim1(x, BLOCK_M=4, BLOCK_N=1024):
    M, N = x.shape
    y = torch.empty_like(x)
    masked_cumsum_2d[(triton.cdiv(M, BLOCK_M),)](x, y, M, N, x.stride(0), y.stride(0),
                                                 BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
    return y
