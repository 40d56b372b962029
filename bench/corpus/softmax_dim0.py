"""Softmax over the leading dimension of a row-major matrix, written the way
FlagGems-style libraries treat a softmax whose reduced dim is not the
innermost one: rather than one program per softmax "row" (which here would
be a strided column), each program takes BLOCK_N neighbouring columns, so
every load is a contiguous run of one row, and walks down M in BLOCK_M
row chunks twice. The first walk keeps, per column, a running maximum and
a running sum of exp(x - max), rescaling the sum whenever a chunk raises
the maximum (the chunk's own max and sum come from tl.max / tl.sum along
axis 0). The second walk reloads each chunk, exponentiates against the
final maximum and multiplies by the reciprocal of the final sum. Math is
fp32 whatever the storage type; the result is stored in the output's
dtype. Row strides are runtime ints; columns are taken as contiguous."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_dim0_kernel(out_ptr, in_ptr, M, N, stride_in_m, stride_out_m, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    rows = tl.arange(0, BLOCK_M)

    # pass 1: per-column running max and rescaled running denominator
    col_max = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
    col_den = tl.zeros([BLOCK_N], dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        r = m0 + rows
        ok = (r < M)[:, None] & col_ok[None, :]
        ptrs = in_ptr + r[:, None].to(tl.int64) * stride_in_m + cols[None, :]
        x = tl.load(ptrs, mask=ok, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(col_max, tl.max(x, axis=0))
        scale = tl.exp(col_max - new_max)
        col_den = col_den * scale + tl.sum(tl.exp(x - new_max[None, :]), axis=0)
        col_max = new_max

    # pass 2: normalise and store
    inv_den = 1.0 / col_den
    for m0 in range(0, M, BLOCK_M):
        r = m0 + rows
        ok = (r < M)[:, None] & col_ok[None, :]
        r64 = r[:, None].to(tl.int64)
        x = tl.load(in_ptr + r64 * stride_in_m + cols[None, :], mask=ok,
                    other=float("-inf")).to(tl.float32)
        y = tl.exp(x - col_max[None, :]) * inv_den[None, :]
        tl.store(out_ptr + r64 * stride_out_m + cols[None, :], y.to(out_ptr.dtype.element_ty),
                 mask=ok)


def softmax_dim0(x, BLOCK_M=128, BLOCK_N=32, num_warps=4):
    """torch.softmax(x, dim=0) for a 2-D x whose rows are contiguous."""
    assert x.dim() == 2 and x.stride(1) == 1
    M, N = x.shape
    out = torch.empty_like(x)
    grid = (triton.cdiv(N, BLOCK_N),)
    softmax_dim0_kernel[grid](out, x, M, N, x.stride(0), out.stride(0), BLOCK_M=BLOCK_M,
                              BLOCK_N=BLOCK_N, num_warps=num_warps)
    return out
