"""Matrix-vector products as decode-time serving code and FlagGems' mv
write them: y[N] = W[N, K] @ x[K] with W and x in bf16 and the sum in
fp32. Each program owns BLOCK_N rows of W and walks K a BLOCK_K tile at
a time, folding every tile into a per-row partial with
tl.sum(w * x[None, :], axis=1); y is stored in bf16. The split-K variant
gives each (row block, K slice) pair its own program on a second grid
axis and adds its partial rows into a zeroed fp32 y with tl.atomic_add,
for tall-K shapes (a down projection) where N alone gives too few programs."""
import torch
import triton
import triton.language as tl


@triton.jit
def gemv_kernel(w_ptr, x_ptr, y_ptr, N, K, stride_wn,
                BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    row_mask = rows < N
    cols = tl.arange(0, BLOCK_K)
    w_rows = w_ptr + rows.to(tl.int64)[:, None] * stride_wn
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + cols
        k_mask = k < K
        x = tl.load(x_ptr + k, mask=k_mask, other=0.0).to(tl.float32)
        w = tl.load(w_rows + k[None, :], mask=row_mask[:, None] & k_mask[None, :],
                    other=0.0).to(tl.float32)
        acc += tl.sum(w * x[None, :], axis=1)
    tl.store(y_ptr + rows, acc.to(tl.bfloat16), mask=row_mask)


@triton.jit
def gemv_splitk_kernel(w_ptr, x_ptr, y_ptr, N, K, stride_wn,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    # each K slice is a whole number of BLOCK_K tiles; the last one may run short
    k_per_split = tl.cdiv(tl.cdiv(K, SPLIT_K), BLOCK_K) * BLOCK_K
    k_start = pid_k * k_per_split
    k_end = tl.minimum(k_start + k_per_split, K)
    rows = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_mask = rows < N
    cols = tl.arange(0, BLOCK_K)
    w_rows = w_ptr + rows.to(tl.int64)[:, None] * stride_wn
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(k_start, k_end, BLOCK_K):
        k = k0 + cols
        k_mask = k < k_end
        x = tl.load(x_ptr + k, mask=k_mask, other=0.0).to(tl.float32)
        w = tl.load(w_rows + k[None, :], mask=row_mask[:, None] & k_mask[None, :],
                    other=0.0).to(tl.float32)
        acc += tl.sum(w * x[None, :], axis=1)
    tl.atomic_add(y_ptr + rows, acc, mask=row_mask, sem="relaxed")


def gemv(w, x, split_k=1):
    N, K = w.shape
    if split_k == 1:
        y = torch.empty(N, device=w.device, dtype=torch.bfloat16)
        gemv_kernel[(triton.cdiv(N, 32),)](w, x, y, N, K, w.stride(0), BLOCK_N=32, BLOCK_K=256,
                                           num_warps=4)
        return y
    y = torch.zeros(N, device=w.device, dtype=torch.float32)
    grid = (triton.cdiv(N, 32), split_k)
    gemv_splitk_kernel[grid](w, x, y, N, K, w.stride(0), BLOCK_N=32, BLOCK_K=256,
                             SPLIT_K=split_k, num_warps=4)
    return y.to(torch.bfloat16)
