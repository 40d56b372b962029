"""Blockwise 8-bit quantization against a codebook, the scheme of 8-bit
optimizer states and 8-bit weights: the flat input is cut into blocks of
QBLOCK values, each block is scaled by its own absolute maximum into
[-1, 1], and every scaled value is replaced by the index of the closest
entry of a sorted 256-entry codebook (a dynamic map, dense near zero).
Outputs: one uint8 code per value and one fp32 absmax per block; decoding
is code[q] * absmax.

Each program takes BLOCKS_PER_PROG quantization blocks as the rows of a
2-D tile, so the per-block absmax is a row reduction. The codebook lookup
is a branch-free binary search of fixed length: CODE_BITS halving probes,
each one a gather from the (cache-resident) table, find the last entry not
above the value; the neighbour above is then checked and the nearer of
the two wins (ties to the lower index)."""
import torch
import triton
import triton.language as tl


@triton.jit
def quantize_blockwise_8bit_kernel(x_ptr, code_ptr, q_ptr, absmax_ptr, n_elements,
                                   QBLOCK: tl.constexpr, BLOCKS_PER_PROG: tl.constexpr,
                                   CODE_BITS: tl.constexpr):
    pid = tl.program_id(0)
    n_blocks = tl.cdiv(n_elements, QBLOCK)
    blocks = pid * BLOCKS_PER_PROG + tl.arange(0, BLOCKS_PER_PROG)
    offsets = blocks.to(tl.int64)[:, None] * QBLOCK + tl.arange(0, QBLOCK)[None, :]
    mask = offsets < n_elements

    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    absmax = tl.max(tl.abs(x), axis=1)
    tl.store(absmax_ptr + blocks, absmax, mask=blocks < n_blocks)
    inv_absmax = tl.where(absmax > 0.0, 1.0 / absmax, 0.0)
    normed = x * inv_absmax[:, None]

    # largest index whose code value is <= normed (index 0 if none is)
    lo = tl.zeros([BLOCKS_PER_PROG, QBLOCK], dtype=tl.int32)
    for k in tl.static_range(CODE_BITS):
        probe = lo + ((1 << (CODE_BITS - 1)) >> k)
        below = tl.load(code_ptr + probe) <= normed
        lo = tl.where(below, probe, lo)
    hi = tl.minimum(lo + 1, (1 << CODE_BITS) - 1)
    dist_lo = tl.abs(normed - tl.load(code_ptr + lo))
    dist_hi = tl.abs(tl.load(code_ptr + hi) - normed)
    idx = tl.where(dist_hi < dist_lo, hi, lo)
    tl.store(q_ptr + offsets, idx.to(tl.uint8), mask=mask)


def quantize_blockwise(A, code, blocksize=4096, out=None, absmax=None):
    """A (fp32/fp16/bf16, any shape) and code [256] fp32 sorted ascending ->
    (uint8 codes shaped like A, fp32 absmax per block of blocksize values)."""
    assert code.numel() == 256 and blocksize & (blocksize - 1) == 0
    n = A.numel()
    n_blocks = triton.cdiv(n, blocksize)
    if out is None:
        out = torch.empty_like(A, dtype=torch.uint8)
    if absmax is None:
        absmax = torch.empty(n_blocks, dtype=torch.float32, device=A.device)
    blocks_per_prog = max(1, 1024 // blocksize)
    grid = (triton.cdiv(n_blocks, blocks_per_prog),)
    quantize_blockwise_8bit_kernel[grid](A.reshape(-1), code, out, absmax, n, QBLOCK=blocksize,
                                         BLOCKS_PER_PROG=blocks_per_prog, CODE_BITS=8,
                                         num_warps=4 if blocksize <= 1024 else 8)
    return out, absmax
