# Tuples as kernel values, as recent kernel libraries write them: the
# running state of an online log-sum-exp kept as a (max, sum) tuple that
# helpers take and return, and a 2-D copy whose program ids, shapes and
# strides travel as tuples (reversed with a slice for the transpose). The
# block sizes go to the helper as constexprs of their own: Triton 3.6 does
# not keep a tuple's elements constexpr across a call.
import triton
import triton.language as tl


@triton.jit
def _chunk_state(x):
    m = tl.max(x, axis=0)
    return tl.tuple((m, tl.sum(tl.exp(x - m), axis=0)))


@triton.jit
def _merge_state(a, b):
    m_a, s_a = a
    m_b, s_b = b
    m = tl.maximum(m_a, m_b)
    return m, s_a * tl.exp(m_a - m) + s_b * tl.exp(m_b - m)


@triton.jit
def logsumexp_rows_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    state = (-float("inf"), 0.0)
    col = 0
    while tl.condition(col < n_cols):
        x = tl.load(x_ptr + row * stride_row + col + offs, mask=col + offs < n_cols,
                    other=-float("inf")).to(tl.float32)
        state = _merge_state(state, _chunk_state(x))
        col += BLOCK
    m, s = state
    tl.store(out_ptr + row, m + tl.log(s))


@triton.jit
def _tile(pid, shape, strides, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.tuple((pid[0] * BM + tl.arange(0, BM), pid[1] * BN + tl.arange(0, BN)))
    ptr_offs = offs[0][:, None] * strides[0] + offs[1][None, :] * strides[1]
    mask = (offs[0][:, None] < shape[0]) & (offs[1][None, :] < shape[1])
    return ptr_offs, mask


@triton.jit
def transpose_copy_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym, stride_yn,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = (tl.program_id(0), tl.program_id(1))
    src, mask = _tile(pid, (M, N), (stride_xm, stride_xn), BLOCK_M, BLOCK_N)
    # y is N x M: the same tile, its strides given in y's own order and reversed
    dst, _ = _tile(pid, (M, N), (stride_ym, stride_yn)[::-1], BLOCK_M, BLOCK_N)
    tl.store(y_ptr + dst, tl.load(x_ptr + src, mask=mask), mask=mask)
