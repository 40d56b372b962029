"""State-space-model kernels in the chunked (SSD) form: the per-chunk
cumulative sum of dt * A with softplus on dt; the chunk state
(states[c] = sum_t B[t]^T (x[t] * exp(dA_last - dA[t]) * dt[t])) as a small
batched dot per (batch*head, chunk); and the decode-time selective state
update for one token (state = state * exp(dt*A) + dt * B x; y = C state + D x)."""
import torch
import triton
import triton.language as tl


@triton.jit
def softplus(dt):
    # log(1 + e^x) written as max(x, 0) + log(1 + e^-|x|): the exponent is never positive,
    # so nothing overflows for large |x|
    pos = tl.maximum(dt, 0.0)
    return pos + tl.log(1.0 + tl.exp(-tl.abs(dt)))


@triton.jit
def _chunk_cumsum_fwd_kernel(dt_ptr, A_ptr, dt_bias_ptr, dt_out_ptr, dA_cumsum_ptr, seqlen,
                             nheads, chunk_size, stride_dt_batch, stride_dt_seqlen,
                             stride_out_batch, stride_out_head, stride_out_chunk,
                             DT_SOFTPLUS: tl.constexpr, BLOCK_SIZE_H: tl.constexpr,
                             BLOCK_SIZE_CHUNK: tl.constexpr):
    b_idx = tl.program_id(0)
    c_idx = tl.program_id(1)
    h_blk = tl.program_id(2)
    heads = h_blk * BLOCK_SIZE_H + tl.arange(0, BLOCK_SIZE_H)
    steps = tl.arange(0, BLOCK_SIZE_CHUNK)
    head_ok = heads < nheads
    in_chunk = steps < chunk_size
    pos = c_idx * chunk_size + steps
    live = head_ok[:, None] & (in_chunk & (pos < seqlen))[None, :]
    # tile is (heads, time in chunk); heads are the contiguous axis of dt
    src = dt_ptr + b_idx * stride_dt_batch + pos[None, :] * stride_dt_seqlen + heads[:, None]
    dt = tl.load(src, mask=live, other=0.0).to(tl.float32)
    bias = tl.load(dt_bias_ptr + heads, mask=head_ok, other=0.0).to(tl.float32)
    dt = dt + bias[:, None]
    if DT_SOFTPLUS:
        dt = softplus(dt)
    # steps past the sequence end contribute nothing
    dt = tl.where(live, dt, 0.0)
    a = tl.load(A_ptr + heads, mask=head_ok, other=0.0).to(tl.float32)
    run = tl.cumsum(dt * a[:, None], axis=1)
    dst = (b_idx * stride_out_batch + heads[:, None] * stride_out_head + c_idx * stride_out_chunk
           + steps[None, :])
    keep = head_ok[:, None] & in_chunk[None, :]
    tl.store(dt_out_ptr + dst, dt, mask=keep)
    tl.store(dA_cumsum_ptr + dst, run, mask=keep)


@triton.jit
def _chunk_state_fwd_kernel(x_ptr, b_ptr, states_ptr, dt_ptr, dA_cumsum_ptr, hdim, dstate,
                            chunk_size, seqlen, stride_x_seq, stride_b_seq, stride_dt_bh,
                            stride_states_bh, BLOCK_SIZE_M: tl.constexpr,
                            BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    m_blk = tl.program_id(0)
    bh = tl.program_id(1)
    chunk = tl.program_id(2)
    t0 = chunk * chunk_size
    span = tl.minimum(chunk_size, seqlen - t0)
    # x seen transposed: (hdim, time), so each step is a (M, K) by (K, N) product
    xt_blk = tl.make_block_ptr(base=x_ptr + bh * seqlen * stride_x_seq, shape=(hdim, seqlen),
                               strides=(1, stride_x_seq), offsets=(m_blk * BLOCK_SIZE_M, t0),
                               block_shape=(BLOCK_SIZE_M, BLOCK_SIZE_K), order=(0, 1))
    b_blk = tl.make_block_ptr(base=b_ptr + bh * seqlen * stride_b_seq, shape=(seqlen, dstate),
                              strides=(stride_b_seq, 1), offsets=(t0, 0),
                              block_shape=(BLOCK_SIZE_K, BLOCK_SIZE_N), order=(1, 0))
    dt_row = dt_ptr + bh * stride_dt_bh + t0
    da_row = dA_cumsum_ptr + bh * stride_dt_bh + t0
    da_end = tl.load(da_row + span - 1).to(tl.float32)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, span, BLOCK_SIZE_K):
        ks = k0 + tl.arange(0, BLOCK_SIZE_K)
        k_ok = ks < span
        da = tl.load(da_row + ks, mask=k_ok, other=0.0).to(tl.float32)
        dtv = tl.load(dt_row + ks, mask=k_ok, other=0.0).to(tl.float32)
        # weight of step t: decay from t to the chunk end, times dt[t]; zero past the chunk
        wgt = tl.where(k_ok, tl.exp(da_end - da) * dtv, 0.0)
        xt = tl.load(xt_blk, boundary_check=(0, 1), padding_option="zero")
        bt = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        bt = (bt.to(tl.float32) * wgt[:, None]).to(xt.dtype)
        acc = tl.dot(xt, bt, acc)
        xt_blk = tl.advance(xt_blk, (0, BLOCK_SIZE_K))
        b_blk = tl.advance(b_blk, (BLOCK_SIZE_K, 0))
    out_blk = tl.make_block_ptr(base=states_ptr + bh * stride_states_bh + chunk * hdim * dstate,
                                shape=(hdim, dstate), strides=(dstate, 1),
                                offsets=(m_blk * BLOCK_SIZE_M, 0),
                                block_shape=(BLOCK_SIZE_M, BLOCK_SIZE_N), order=(1, 0))
    tl.store(out_blk, acc.to(states_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def _selective_scan_update_kernel(state_ptr, x_ptr, dt_ptr, dt_bias_ptr, A_ptr, B_ptr, C_ptr,
                                  D_ptr, out_ptr, dim, dstate, stride_state_batch,
                                  stride_x_batch, BLOCK_SIZE_M: tl.constexpr,
                                  BLOCK_SIZE_DSTATE: tl.constexpr):
    d_blk = tl.program_id(0)
    bat = tl.program_id(1)
    rows = d_blk * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols = tl.arange(0, BLOCK_SIZE_DSTATE)
    row_ok = rows < dim
    col_ok = cols < dstate
    tile_ok = row_ok[:, None] & col_ok[None, :]
    grid_off = rows[:, None] * dstate + cols[None, :]
    st_ptrs = state_ptr + bat * stride_state_batch + grid_off
    st = tl.load(st_ptrs, mask=tile_ok, other=0.0).to(tl.float32)
    xv = tl.load(x_ptr + bat * stride_x_batch + rows, mask=row_ok, other=0.0).to(tl.float32)
    dtv = tl.load(dt_ptr + bat * stride_x_batch + rows, mask=row_ok, other=0.0).to(tl.float32)
    dtv = softplus(dtv + tl.load(dt_bias_ptr + rows, mask=row_ok, other=0.0).to(tl.float32))
    a = tl.load(A_ptr + grid_off, mask=tile_ok, other=0.0).to(tl.float32)
    bv = tl.load(B_ptr + bat * dstate + cols, mask=col_ok, other=0.0).to(tl.float32)
    cv = tl.load(C_ptr + bat * dstate + cols, mask=col_ok, other=0.0).to(tl.float32)
    # decay the old state, then add the rank-one input term (dt * x) outer B
    st = st * tl.exp(a * dtv[:, None]) + (dtv * xv)[:, None] * bv[None, :]
    tl.store(st_ptrs, st.to(state_ptr.dtype.element_ty), mask=tile_ok)
    y = tl.sum(st * cv[None, :], axis=1)
    if D_ptr is not None:
        y += xv * tl.load(D_ptr + rows, mask=row_ok, other=0.0).to(tl.float32)
    tl.store(out_ptr + bat * stride_x_batch + rows, y.to(out_ptr.dtype.element_ty), mask=row_ok)
