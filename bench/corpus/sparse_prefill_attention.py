"""Causal prefill attention over a sparse pattern chosen per query block on
the host, as long-context prefill libraries write it: a few key blocks
(their starting tokens in a table) plus single "vertical" key columns
gathered by index, BLOCK_N at a time; scores in base 2 with the scale
folded into Q, masked entries set to a large negative finite value so
that a block with nothing visible yet cannot make NaNs."""
import torch
import triton
import triton.language as tl


@triton.jit
def _visit(q, k, v, keep, m_i, l_i, acc):
    """One step of the running softmax over BLOCK_N keys, those outside
    `keep` set to -1e6."""
    qk = tl.where(keep, tl.dot(q, k), -1.0e6)
    m_new = tl.maximum(m_i, tl.max(qk, 1))
    alpha = tl.math.exp2(m_i - m_new)
    p = tl.math.exp2(qk - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
    return m_new, l_i, acc


@triton.jit
def _sparse_prefill_fwd(Q, K, V, Out, block_count, block_offset, column_count, column_index,
                        sm_scale, stride_z, stride_h, stride_n, H, N_CTX, NNZ_S, NNZ_V,
                        HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // H) * stride_z + (off_hz % H) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_n + offs_d[None, :],
                mask=offs_m[:, None] < N_CTX, other=0.0)
    q = (q * (sm_scale * 1.44269504)).to(Q.dtype.element_ty)
    meta = off_hz * tl.cdiv(N_CTX, BLOCK_M) + start_m
    n_blocks = tl.load(block_count + meta)
    n_cols = tl.load(column_count + meta)
    blocks = block_offset + meta * NNZ_S
    columns = column_index + meta * NNZ_V
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for i in range(0, n_blocks):
        cols = tl.load(blocks + i) + offs_n
        keep = (cols[None, :] <= offs_m[:, None]) & (cols[None, :] < N_CTX)
        k = tl.load(K + base + cols[None, :] * stride_n + offs_d[:, None],
                    mask=cols[None, :] < N_CTX, other=0.0)
        v = tl.load(V + base + cols[:, None] * stride_n + offs_d[None, :],
                    mask=cols[:, None] < N_CTX, other=0.0)
        m_i, l_i, acc = _visit(q, k, v, keep, m_i, l_i, acc)
    for j in range(0, n_cols, BLOCK_N):
        live = j + offs_n < n_cols
        cols = tl.load(columns + j + offs_n, mask=live, other=0)
        keep = live[None, :] & (cols[None, :] <= offs_m[:, None])
        k = tl.load(K + base + cols[None, :] * stride_n + offs_d[:, None], mask=live[None, :],
                    other=0.0)
        v = tl.load(V + base + cols[:, None] * stride_n + offs_d[None, :], mask=live[:, None],
                    other=0.0)
        m_i, l_i, acc = _visit(q, k, v, keep, m_i, l_i, acc)
    tl.store(Out + base + offs_m[:, None] * stride_n + offs_d[None, :],
             (acc / l_i[:, None]).to(Out.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


def sparse_prefill(q, k, v, block_count, block_offset, column_count, column_index,
                   BLOCK_M=64, BLOCK_N=64):
    """q, k, v [B, H, N, D]; the pattern's tables [B, H, cdiv(N, BLOCK_M), ...]."""
    B, H, N, D = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(N, BLOCK_M), B * H)
    _sparse_prefill_fwd[grid](q, k, v, o, block_count, block_offset, column_count,
                              column_index, D ** -0.5, q.stride(0), q.stride(1), q.stride(2),
                              H, N, block_offset.shape[-1], column_index.shape[-1],
                              HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4,
                              num_stages=2)
    return o
