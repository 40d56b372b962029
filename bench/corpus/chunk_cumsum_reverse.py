"""Chunk-local cumulative sums of gates, as flash-linear-attention's chunked
kernels prepare them, here in the REVERSE direction that the backward
passes (and reversed-gate forward variants) need: within every chunk of BT
time steps, o[t] = sum of s[t'] for t <= t' < end of the chunk (an inclusive
suffix sum), chunks independent of each other.

The tensors keep the head-last layout [B, T, H] (scalar gates, one per head)
or [B, T, H, K] (a gate per key channel); T and H arrive as runtime ints and
every row is addressed through a block pointer whose time stride is H (or
H * K), so a chunk of one head is a strided column of the tensor. One
program per (chunk, batch * head), plus a BK-wide block of channels for the
vector form.

- scalar: the chunk is loaded as a [BT] vector and scanned with
  tl.cumsum(..., reverse=REVERSE).
- vector: the [BT, BK] tile is scanned by one fp32 matrix product with a
  triangular 0/1 matrix (upper for the suffix sum, lower for the prefix
  sum), tl.dot with IEEE precision so the sums are not rounded to tf32.
The sums run in fp32 and are stored in the output's dtype."""
import torch
import triton
import triton.language as tl


@triton.jit
def chunk_local_cumsum_scalar_kernel(s, o, T, H, BT: tl.constexpr, REVERSE: tl.constexpr):
    i_t = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // H
    i_h = i_bh % H
    # the column of head i_h in batch i_b: one element every H along time
    base = i_b.to(tl.int64) * T * H + i_h
    p_s = tl.make_block_ptr(s + base, (T,), (H,), (i_t * BT,), (BT,), (0,))
    p_o = tl.make_block_ptr(o + base, (T,), (H,), (i_t * BT,), (BT,), (0,))
    # rows past T load as zero and so add nothing to the sums of valid rows
    x = tl.load(p_s, boundary_check=(0,), padding_option="zero").to(tl.float32)
    y = tl.cumsum(x, axis=0, reverse=REVERSE)
    tl.store(p_o, y.to(o.dtype.element_ty), boundary_check=(0,))


@triton.jit
def chunk_local_cumsum_vector_kernel(s, o, T, H, K, BT: tl.constexpr, BK: tl.constexpr,
                                     REVERSE: tl.constexpr):
    i_k = tl.program_id(0)
    i_t = tl.program_id(1)
    i_bh = tl.program_id(2)
    i_b = i_bh // H
    i_h = i_bh % H
    base = (i_b.to(tl.int64) * T * H + i_h) * K
    p_s = tl.make_block_ptr(s + base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    p_o = tl.make_block_ptr(o + base, (T, K), (H * K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    x = tl.load(p_s, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
    # 0/1 scan matrix: row r sums the source rows c with c >= r (suffix) or c <= r (prefix)
    r = tl.arange(0, BT)[:, None]
    c = tl.arange(0, BT)[None, :]
    if REVERSE:
        m = tl.where(c >= r, 1.0, 0.0)
    else:
        m = tl.where(c <= r, 1.0, 0.0)
    y = tl.dot(m, x, input_precision="ieee")
    tl.store(p_o, y.to(o.dtype.element_ty), boundary_check=(0, 1))


def chunk_local_cumsum(g, chunk_size=64, reverse=True, BK=32, num_warps=4):
    """g [B, T, H] or [B, T, H, K] -> the chunk-local (reverse) cumsum along T, fp32."""
    out = torch.empty_like(g, dtype=torch.float32)
    if g.dim() == 3:
        b, t, h = g.shape
        grid = (triton.cdiv(t, chunk_size), b * h)
        chunk_local_cumsum_scalar_kernel[grid](g, out, t, h, BT=chunk_size, REVERSE=reverse,
                                               num_warps=num_warps)
    else:
        b, t, h, k = g.shape
        grid = (triton.cdiv(k, BK), triton.cdiv(t, chunk_size), b * h)
        chunk_local_cumsum_vector_kernel[grid](g, out, t, h, k, BT=chunk_size, BK=BK,
                                               REVERSE=reverse, num_warps=num_warps)
    return out
