"""FlagGems-style index_add and scatter with reduce='add'. index_add along
dim 0 adds alpha * src[i, :] into out[index[i], :] for int64 indices that
may repeat, a 2-D tile of source rows by columns per program, accumulated
with tl.atomic_add into an fp32 output. scatter along dim 1 writes
src[i, j] to out[i, index[i, j]]: with IS_ADD it accumulates through
tl.atomic_add (reduce='add', duplicate columns in a row allowed), without
it a plain store (indices unique within a row)."""
import triton
import triton.language as tl


@triton.jit
def index_add_dim0_kernel(out_ptr, index_ptr, src_ptr, alpha, n_index, n_cols, stride_out,
                          stride_src, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_mask = rows < n_index
    col_mask = cols < n_cols
    mask = row_mask[:, None] & col_mask[None, :]
    dst_rows = tl.load(index_ptr + rows, mask=row_mask, other=0)
    src = tl.load(src_ptr + rows.to(tl.int64)[:, None] * stride_src + cols[None, :], mask=mask,
                  other=0.0)
    val = src.to(tl.float32) * alpha
    tl.atomic_add(out_ptr + dst_rows[:, None] * stride_out + cols[None, :], val, mask=mask,
                  sem="relaxed")


def index_add_(out, index, src, alpha=1.0, BLOCK_M=16, BLOCK_N=256):
    """out.index_add_(0, index, src, alpha=alpha) for a 2-D fp32 out."""
    n_index, n_cols = src.shape
    grid = (triton.cdiv(n_index, BLOCK_M), triton.cdiv(n_cols, BLOCK_N))
    index_add_dim0_kernel[grid](out, index, src, alpha, n_index, n_cols, out.stride(0),
                                src.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
    return out


@triton.jit
def scatter_dim1_kernel(out_ptr, index_ptr, src_ptr, n_rows, n_idx_cols, stride_out_m,
                        stride_idx_m, stride_src_m, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr, IS_ADD: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows < n_rows)[:, None] & (cols < n_idx_cols)[None, :]
    rows64 = rows.to(tl.int64)
    dst_cols = tl.load(index_ptr + rows64[:, None] * stride_idx_m + cols[None, :], mask=mask,
                       other=0)
    src = tl.load(src_ptr + rows64[:, None] * stride_src_m + cols[None, :], mask=mask, other=0.0)
    dst = out_ptr + rows64[:, None] * stride_out_m + dst_cols
    if IS_ADD:
        tl.atomic_add(dst, src, mask=mask, sem="relaxed")
    else:
        tl.store(dst, src, mask=mask)


def scatter_(out, index, src, reduce=None, BLOCK_M=8, BLOCK_N=512):
    """out.scatter_(1, index, src, reduce=reduce) for 2-D contiguous tensors."""
    n_rows, n_idx_cols = index.shape
    grid = (triton.cdiv(n_rows, BLOCK_M), triton.cdiv(n_idx_cols, BLOCK_N))
    scatter_dim1_kernel[grid](out, index, src, n_rows, n_idx_cols, out.stride(0), index.stride(0),
                              src.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                              IS_ADD=reduce == "add", num_warps=4)
    return out

