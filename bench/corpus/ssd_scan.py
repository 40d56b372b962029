"""The chunked state-space (SSD) pipeline after the chunk states: passing
the state from chunk to chunk (state entering chunk c+1 = exp(dA of the
whole chunk c) * state entering c + the chunk's own state), one program per
block of the flattened (headdim x dstate) state walking the chunks in
order; and the chunk scan that turns states into outputs: the state
entering the chunk read through C with exp(dA_cs[t]) decay, plus the
chunk-local causal part (C B^T scaled by exp(dA_cs[t] - dA_cs[s]) * dt[s])
applied to x, plus the D skip."""
import torch
import triton
import triton.language as tl


@triton.jit
def _state_passing_fwd_kernel(states_ptr, out_ptr, final_states_ptr, dA_cs_ptr, dim, nchunks,
                              chunk_size, stride_states_bh, stride_states_chunk, stride_dA_bh,
                              stride_dA_chunk, BLOCK_SIZE: tl.constexpr):
    pid_bh = tl.program_id(axis=1)
    pid_m = tl.program_id(axis=0)
    states_ptr += pid_bh * stride_states_bh
    out_ptr += pid_bh * stride_states_bh
    final_states_ptr += pid_bh * dim
    dA_cs_ptr += pid_bh * stride_dA_bh + chunk_size - 1
    offs_m = pid_m * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs_m < dim
    states = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for c in range(nchunks):
        tl.store(out_ptr + offs_m, states, mask=mask)
        new_states = tl.load(states_ptr + offs_m, mask=mask, other=0.0).to(tl.float32)
        scale = tl.exp(tl.load(dA_cs_ptr).to(tl.float32))
        states = scale * states + new_states
        states_ptr += stride_states_chunk
        out_ptr += stride_states_chunk
        dA_cs_ptr += stride_dA_chunk
    tl.store(final_states_ptr + offs_m, states, mask=mask)


@triton.jit
def _chunk_scan_fwd_kernel(x_ptr, b_ptr, c_ptr, dt_ptr, dA_cs_ptr, prev_states_ptr, D_ptr,
                           out_ptr, seqlen, chunk_size, hdim, dstate, stride_x_bh, stride_x_seq,
                           stride_bc_bh, stride_bc_seq, stride_dt_bh, stride_st_bh,
                           stride_st_chunk, BLOCK_SIZE_M: tl.constexpr,
                           BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                           BLOCK_SIZE_DSTATE: tl.constexpr):
    pid_n = tl.program_id(axis=0)
    pid_c = tl.program_id(axis=1)
    pid_bh = tl.program_id(axis=2)
    chunk_start = pid_c * chunk_size
    chunk_len = min(chunk_size, seqlen - chunk_start)
    x_ptr += pid_bh * stride_x_bh + chunk_start * stride_x_seq
    out_ptr += pid_bh * stride_x_bh + chunk_start * stride_x_seq
    b_ptr += pid_bh * stride_bc_bh + chunk_start * stride_bc_seq
    c_ptr += pid_bh * stride_bc_bh + chunk_start * stride_bc_seq
    dt_ptr += pid_bh * stride_dt_bh + chunk_start
    dA_cs_ptr += pid_bh * stride_dt_bh + chunk_start
    prev_states_ptr += pid_bh * stride_st_bh + pid_c * stride_st_chunk
    offs_m = tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_s = tl.arange(0, BLOCK_SIZE_DSTATE)
    mask_m = offs_m < chunk_len
    dA_cs_m = tl.load(dA_cs_ptr + offs_m, mask=mask_m, other=0.0).to(tl.float32)
    # the state entering this chunk, read out through C
    c = tl.load(c_ptr + offs_m[:, None] * stride_bc_seq + offs_s[None, :],
                mask=mask_m[:, None] & (offs_s[None, :] < dstate), other=0.0)
    st = tl.load(prev_states_ptr + offs_n[None, :] * dstate + offs_s[:, None],
                 mask=(offs_s[:, None] < dstate) & (offs_n[None, :] < hdim), other=0.0)
    acc = tl.dot(c, st.to(c.dtype)) * tl.exp(dA_cs_m)[:, None]
    # the chunk-local causal part
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    hi = tl.minimum(chunk_len, BLOCK_SIZE_M)
    for k in range(0, hi, BLOCK_SIZE_K):
        kk = k + offs_k
        mask_k = kk < chunk_len
        b = tl.load(b_ptr + kk[None, :] * stride_bc_seq + offs_s[:, None],
                    mask=mask_k[None, :] & (offs_s[:, None] < dstate), other=0.0)
        cb = tl.dot(c, b)
        dA_cs_k = tl.load(dA_cs_ptr + kk, mask=mask_k, other=0.0).to(tl.float32)
        dt_k = tl.load(dt_ptr + kk, mask=mask_k, other=0.0).to(tl.float32)
        cb *= tl.exp(dA_cs_m[:, None] - dA_cs_k[None, :]) * dt_k[None, :]
        cb = tl.where((offs_m[:, None] >= kk[None, :]) & mask_k[None, :], cb, 0.0)
        x = tl.load(x_ptr + kk[:, None] * stride_x_seq + offs_n[None, :],
                    mask=mask_k[:, None] & (offs_n[None, :] < hdim), other=0.0)
        acc += tl.dot(cb.to(x_ptr.dtype.element_ty), x)
    x_m = tl.load(x_ptr + offs_m[:, None] * stride_x_seq + offs_n[None, :],
                  mask=mask_m[:, None] & (offs_n[None, :] < hdim), other=0.0).to(tl.float32)
    acc += x_m * tl.load(D_ptr + pid_bh).to(tl.float32)
    tl.store(out_ptr + offs_m[:, None] * stride_x_seq + offs_n[None, :],
             acc.to(out_ptr.dtype.element_ty), mask=mask_m[:, None] & (offs_n[None, :] < hdim))
