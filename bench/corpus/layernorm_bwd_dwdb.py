"""The weight and bias gradients of LayerNorm, the column-reduction half of
its backward (the row half, dx, is a separate kernel): with
x_hat = (x - mean) * rstd recomputed from the saved per-row statistics,
dgamma[j] = sum_i dy[i, j] * x_hat[i, j] and dbeta[j] = sum_i dy[i, j].
Both sums run over the leading dim, so as in the Triton tutorial's and
Liger's dw/db stage each program takes a strip of BLOCK_N columns and
walks every row in BLOCK_M chunks, adding each chunk elementwise into two
[BLOCK_M, BLOCK_N] fp32 partials; only after the last chunk are the
partials collapsed along their rows with tl.sum(axis=0) and stored as fp32.
Rows and columns past the edge load as zero, and mean/rstd are read once
per chunk as [BLOCK_M] vectors broadcast across the strip."""
import torch
import triton
import triton.language as tl


@triton.jit
def layer_norm_bwd_dwdb_kernel(DY, X, Mean, Rstd, DW, DB, M, N, stride_dy, stride_x,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    dw = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for row_start in range(0, M, BLOCK_M):
        rows = row_start + tl.arange(0, BLOCK_M)
        row_mask = rows < M
        mask = row_mask[:, None] & col_mask[None, :]
        dy = tl.load(DY + rows[:, None] * stride_dy + cols[None, :], mask=mask, other=0.0)
        x = tl.load(X + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
        mean = tl.load(Mean + rows, mask=row_mask, other=0.0)
        rstd = tl.load(Rstd + rows, mask=row_mask, other=0.0)
        dy = dy.to(tl.float32)
        x_hat = (x.to(tl.float32) - mean[:, None]) * rstd[:, None]
        dw += dy * x_hat
        db += dy
    tl.store(DW + cols, tl.sum(dw, axis=0), mask=col_mask)
    tl.store(DB + cols, tl.sum(db, axis=0), mask=col_mask)


def layer_norm_bwd_dwdb(dy, x, mean, rstd, BLOCK_M=128, BLOCK_N=32, num_warps=4):
    """dy, x [M, N] (fp16/bf16), mean, rstd [M] fp32 -> (dgamma [N], dbeta [N]) in fp32."""
    assert dy.shape == x.shape and x.dim() == 2
    assert dy.stride(1) == 1 and x.stride(1) == 1
    M, N = x.shape
    dw = torch.empty((N,), device=x.device, dtype=torch.float32)
    db = torch.empty((N,), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(N, BLOCK_N),)
    layer_norm_bwd_dwdb_kernel[grid](dy, x, mean, rstd, dw, db, M, N, dy.stride(0), x.stride(0),
                                     BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return dw, db
