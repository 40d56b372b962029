# Row reductions and scans as operator libraries write them: a user combine
# function over two tensors (argmax with ties to the lower index, min and max
# in one pass), reverse cumulative sums and products, a tuple associative
# scan (a first-order linear recurrence run backwards), sort, flip, gather,
# histogram and join/split of interleaved complex numbers.
import triton
import triton.language as tl


@triton.jit
def _argmax_lowest(v0, i0, v1, i1):
    # NaN wins, then the larger value, then the lower index
    n0 = v0 != v0
    n1 = v1 != v1
    left = (n0 & ~n1) | (v0 > v1) | (((v0 == v1) | (n0 & n1)) & (i0 < i1))
    return tl.where(left, v0, v1), tl.where(left, i0, i1)


@triton.jit
def row_argmax_ties_kernel(x_ptr, val_ptr, idx_ptr, n_cols, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    v, i = tl.reduce((x, cols), 0, _argmax_lowest)
    tl.store(val_ptr + row, v)
    tl.store(idx_ptr + row, i)


@triton.jit
def _minmax(lo0, hi0, lo1, hi1):
    return tl.minimum(lo0, lo1), tl.maximum(hi0, hi1)


@triton.jit
def minmax_scale_kernel(x_ptr, y_ptr, lo_ptr, hi_ptr, n_rows, n_cols, stride,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # per-row min and max in one reduction, then rescale the row to [0, 1]
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    rmask = rows < n_rows
    mask = rmask[:, None] & (cols[None, :] < n_cols)
    ptrs = x_ptr + rows[:, None] * stride + cols[None, :]
    x = tl.load(ptrs, mask=mask, other=0.0)
    lo, hi = tl.reduce((tl.where(mask, x, float("inf")), tl.where(mask, x, -float("inf"))), axis=1,
                       combine_fn=_minmax, keep_dims=True)
    y = (x - lo) / (hi - lo)
    tl.store(y_ptr + rows[:, None] * stride + cols[None, :], y, mask=mask)
    tl.store(lo_ptr + rows, tl.reshape(lo, (BLOCK_M,)), mask=rmask)
    tl.store(hi_ptr + rows[:, None], hi, mask=rmask[:, None])


@triton.jit
def reverse_scans_kernel(x_ptr, sfx_ptr, prod_ptr, n_cols, stride, BLOCK_N: tl.constexpr):
    # suffix sums and suffix products of a row (the backward of a cumsum)
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    sfx = tl.cumsum(x, axis=0, reverse=True)
    prod = tl.cumprod(tl.where(mask, x, 1.0), 0, reverse=True)
    tl.store(sfx_ptr + row * stride + cols, sfx, mask=mask)
    tl.store(prod_ptr + row * stride + cols, prod, mask=mask)


@triton.jit
def _affine_compose(a0, b0, a1, b1):
    # h -> a * h + b, the later map applied after the earlier one
    return a1 * a0, a1 * b0 + b1


@triton.jit
def discounted_return_kernel(r_ptr, done_ptr, g_ptr, n_steps, gamma, BLOCK_T: tl.constexpr):
    # G[t] = r[t] + gamma * (1 - done[t]) * G[t + 1], one episode batch per program
    b = tl.program_id(0)
    t = tl.arange(0, BLOCK_T)
    mask = t < n_steps
    r = tl.load(r_ptr + b * n_steps + t, mask=mask, other=0.0)
    done = tl.load(done_ptr + b * n_steps + t, mask=mask, other=1).to(tl.int1)
    a = tl.where(done, 0.0, gamma)
    _, g = tl.associative_scan((a, r), axis=0, combine_fn=_affine_compose, reverse=True)
    tl.store(g_ptr + b * n_steps + t, g, mask=mask)


@triton.jit
def sort_flip_kernel(x_ptr, asc_ptr, desc_ptr, flip_ptr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * BLOCK_N + cols)
    tl.store(asc_ptr + row * BLOCK_N + cols, tl.sort(x))
    tl.store(desc_ptr + row * BLOCK_N + cols, tl.sort(x, descending=True))
    tl.store(flip_ptr + row * BLOCK_N + cols, tl.flip(x, 0))


@triton.jit
def sort_rows_2d_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    # a whole 2-D tile sorted along its last dim, largest first
    r = tl.arange(0, ROWS)
    c = tl.arange(0, BLOCK_N)
    offs = r[:, None] * BLOCK_N + c[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.sort(x, dim=1, descending=True))


@triton.jit
def gather_perm_kernel(x_ptr, idx_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    # out[i, j] = x[i, idx[i, j]] within the tile
    r = tl.arange(0, ROWS)
    c = tl.arange(0, COLS)
    offs = r[:, None] * COLS + c[None, :]
    x = tl.load(x_ptr + offs)
    idx = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.gather(x, idx, axis=1))


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    # bins of a block, accumulated over programs with atomics
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    h = tl.histogram(x, NUM_BINS, mask=mask)
    tl.atomic_add(hist_ptr + tl.arange(0, NUM_BINS), h)


@triton.jit
def complex_mul_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # interleaved (re, im) pairs: split into halves, multiply, join back
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    pair = tl.arange(0, 2)
    offs2 = offs[:, None] * 2 + pair[None, :]
    mask2 = mask[:, None]
    a = tl.load(a_ptr + offs2, mask=mask2, other=0.0)
    b = tl.load(b_ptr + offs2, mask=mask2, other=0.0)
    ar, ai = tl.split(a)
    br, bi = tl.split(b)
    re = ar * br - ai * bi
    im = ar * bi + ai * br
    tl.store(out_ptr + offs2, tl.join(re, im), mask=mask2)


@triton.jit
def interleave_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    y = tl.load(y_ptr + offs, mask=offs < n, other=0)
    o = tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + o, tl.interleave(x, y), mask=o < 2 * n)
