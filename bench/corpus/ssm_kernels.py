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
    return tl.where(dt <= 20.0, tl.log(tl.exp(dt) + 1), dt)


@triton.jit
def _chunk_cumsum_fwd_kernel(dt_ptr, A_ptr, dt_bias_ptr, dt_out_ptr, dA_cumsum_ptr, seqlen,
                             nheads, chunk_size, stride_dt_batch, stride_dt_seqlen,
                             stride_out_batch, stride_out_head, stride_out_chunk,
                             DT_SOFTPLUS: tl.constexpr, BLOCK_SIZE_H: tl.constexpr,
                             BLOCK_SIZE_CHUNK: tl.constexpr):
    pid_b = tl.program_id(axis=0)
    pid_c = tl.program_id(axis=1)
    pid_h = tl.program_id(axis=2)
    dt_ptr += pid_b * stride_dt_batch + pid_c * chunk_size * stride_dt_seqlen
    out_off = pid_b * stride_out_batch + pid_c * stride_out_chunk
    offs_h = pid_h * BLOCK_SIZE_H + tl.arange(0, BLOCK_SIZE_H)
    offs_c = tl.arange(0, BLOCK_SIZE_CHUNK)
    chunk_len = min(chunk_size, seqlen - pid_c * chunk_size)
    mask = (offs_h[:, None] < nheads) & (offs_c[None, :] < chunk_len)
    dt = tl.load(dt_ptr + offs_h[:, None] + offs_c[None, :] * stride_dt_seqlen, mask=mask,
                 other=0.0).to(tl.float32)
    dt_bias = tl.load(dt_bias_ptr + offs_h, mask=offs_h < nheads, other=0.0).to(tl.float32)
    dt += dt_bias[:, None]
    if DT_SOFTPLUS:
        dt = softplus(dt)
    dt = tl.where(mask, dt, 0.0)
    A = tl.load(A_ptr + offs_h, mask=offs_h < nheads, other=0.0).to(tl.float32)
    dA = dt * A[:, None]
    dA_cs = tl.cumsum(dA, axis=1)
    out_ptrs = out_off + offs_h[:, None] * stride_out_head + offs_c[None, :]
    out_mask = (offs_h[:, None] < nheads) & (offs_c[None, :] < chunk_size)
    tl.store(dt_out_ptr + out_ptrs, dt, mask=out_mask)
    tl.store(dA_cumsum_ptr + out_ptrs, dA_cs, mask=out_mask)


@triton.jit
def _chunk_state_fwd_kernel(x_ptr, b_ptr, states_ptr, dt_ptr, dA_cumsum_ptr, hdim, dstate,
                            chunk_size, seqlen, stride_x_seq, stride_b_seq, stride_dt_bh,
                            stride_states_bh, BLOCK_SIZE_M: tl.constexpr,
                            BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    pid_bh = tl.program_id(axis=1)
    pid_c = tl.program_id(axis=2)
    pid_m = tl.program_id(axis=0)
    nchunks = tl.cdiv(seqlen, chunk_size)
    x_ptr += pid_bh * seqlen * stride_x_seq + pid_c * chunk_size * stride_x_seq
    b_ptr += pid_bh * seqlen * stride_b_seq + pid_c * chunk_size * stride_b_seq
    dt_ptr += pid_bh * stride_dt_bh + pid_c * chunk_size
    dA_cumsum_ptr += pid_bh * stride_dt_bh + pid_c * chunk_size
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    x_ptrs = x_ptr + offs_m[:, None] + offs_k[None, :] * stride_x_seq
    b_ptrs = b_ptr + offs_n[None, :] + offs_k[:, None] * stride_b_seq
    chunk_len = min(chunk_size, seqlen - pid_c * chunk_size)
    dA_cs_last = tl.load(dA_cumsum_ptr + (chunk_len - 1)).to(tl.float32)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, chunk_len, BLOCK_SIZE_K):
        kmask = offs_k < chunk_len - k
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < hdim) & kmask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=kmask[:, None] & (offs_n[None, :] < dstate), other=0.0)
        dA_cs_k = tl.load(dA_cumsum_ptr + k + offs_k, mask=kmask, other=0.0).to(tl.float32)
        dt_k = tl.load(dt_ptr + k + offs_k, mask=kmask, other=0.0).to(tl.float32)
        scale = tl.exp(dA_cs_last - dA_cs_k) * dt_k
        b = (b * scale[:, None]).to(x_ptr.dtype.element_ty)
        acc += tl.dot(x, b)
        x_ptrs += BLOCK_SIZE_K * stride_x_seq
        b_ptrs += BLOCK_SIZE_K * stride_b_seq
    states_ptr += pid_bh * stride_states_bh + pid_c * hdim * dstate
    s_ptrs = states_ptr + offs_m[:, None] * dstate + offs_n[None, :]
    tl.store(s_ptrs, acc, mask=(offs_m[:, None] < hdim) & (offs_n[None, :] < dstate))


@triton.jit
def _selective_scan_update_kernel(state_ptr, x_ptr, dt_ptr, dt_bias_ptr, A_ptr, B_ptr, C_ptr,
                                  D_ptr, out_ptr, dim, dstate, stride_state_batch,
                                  stride_x_batch, BLOCK_SIZE_M: tl.constexpr,
                                  BLOCK_SIZE_DSTATE: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_b = tl.program_id(axis=1)
    state_ptr += pid_b * stride_state_batch
    x_ptr += pid_b * stride_x_batch
    dt_ptr += pid_b * stride_x_batch
    out_ptr += pid_b * stride_x_batch
    B_ptr += pid_b * dstate
    C_ptr += pid_b * dstate
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = tl.arange(0, BLOCK_SIZE_DSTATE)
    state_ptrs = state_ptr + offs_m[:, None] * dstate + offs_n[None, :]
    mask2 = (offs_m[:, None] < dim) & (offs_n[None, :] < dstate)
    state = tl.load(state_ptrs, mask=mask2, other=0.0)
    x = tl.load(x_ptr + offs_m, mask=offs_m < dim, other=0.0).to(tl.float32)
    dt = tl.load(dt_ptr + offs_m, mask=offs_m < dim, other=0.0).to(tl.float32)
    dt = softplus(dt + tl.load(dt_bias_ptr + offs_m, mask=offs_m < dim, other=0.0))
    A = tl.load(A_ptr + offs_m[:, None] * dstate + offs_n[None, :], mask=mask2, other=0.0)
    dA = tl.exp(A * dt[:, None])
    B = tl.load(B_ptr + offs_n, mask=offs_n < dstate, other=0.0).to(tl.float32)
    C = tl.load(C_ptr + offs_n, mask=offs_n < dstate, other=0.0).to(tl.float32)
    D = tl.load(D_ptr + offs_m, mask=offs_m < dim, other=0.0).to(tl.float32)
    dB = B[None, :] * dt[:, None]
    state = state * dA + dB * x[:, None]
    tl.store(state_ptrs, state, mask=mask2)
    out = tl.sum(state * C[None, :], axis=1) + x * D
    tl.store(out_ptr + offs_m, out.to(out_ptr.dtype.element_ty), mask=offs_m < dim)
