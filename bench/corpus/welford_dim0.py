"""Per-column mean and variance over the leading dimension, as a
batch-norm statistics pass over channels-last activations computes them:
x is [M, N] (M = batch * spatial positions, N = channels), each program
owns BLOCK_N adjacent channels and walks the M rows in BLOCK_M chunks.
For every chunk it forms exact chunk statistics per column (row count,
mean from a tl.sum along axis 0, and the sum of squared deviations from
that chunk mean), then folds them into its running (count, mean, M2)
with the pairwise (Chan et al.) Welford combination, which keeps the
variance accurate when the values sit far from zero. The variance is
divided by count - 1 or count depending on the UNBIASED constexpr; mean
and variance come back in fp32. Strides are runtime ints."""
import torch
import triton
import triton.language as tl


@triton.jit
def var_mean_dim0_kernel(x_ptr, mean_ptr, var_ptr, M, N, stride_xm, stride_xn,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, UNBIASED: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    rows = tl.arange(0, BLOCK_M)
    col_off = cols[None, :] * stride_xn

    count = 0.0
    mean = tl.zeros([BLOCK_N], dtype=tl.float32)
    m2 = tl.zeros([BLOCK_N], dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        r = m0 + rows
        ok = (r < M)[:, None] & col_ok[None, :]
        x = tl.load(x_ptr + r[:, None].to(tl.int64) * stride_xm + col_off, mask=ok, other=0.0)
        x = x.to(tl.float32)
        # statistics of this chunk alone
        n_b = tl.minimum(M - m0, BLOCK_M).to(tl.float32)
        mean_b = tl.sum(x, axis=0) / n_b
        dev = tl.where(ok, x - mean_b[None, :], 0.0)
        m2_b = tl.sum(dev * dev, axis=0)
        # pairwise merge into the running statistics
        n_ab = count + n_b
        delta = mean_b - mean
        frac = n_b / n_ab
        mean = mean + delta * frac
        m2 = m2 + m2_b + delta * delta * (count * frac)
        count = n_ab

    if UNBIASED:
        var = m2 / (count - 1.0)
    else:
        var = m2 / count
    tl.store(mean_ptr + cols, mean, mask=col_ok)
    tl.store(var_ptr + cols, var, mask=col_ok)


def var_mean_dim0(x, unbiased=True, BLOCK_M=128, BLOCK_N=32, num_warps=4):
    """(var, mean) of a 2-D x over dim 0, as torch.var_mean(x, dim=0), both fp32."""
    assert x.dim() == 2
    M, N = x.shape
    mean = torch.empty((N,), device=x.device, dtype=torch.float32)
    var = torch.empty((N,), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(N, BLOCK_N),)
    var_mean_dim0_kernel[grid](x, mean, var, M, N, x.stride(0), x.stride(1), BLOCK_M=BLOCK_M,
                               BLOCK_N=BLOCK_N, UNBIASED=unbiased, num_warps=num_warps)
    return var, mean
