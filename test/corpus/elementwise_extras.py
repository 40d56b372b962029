# Smaller parts of the language in a library-style file: an activation
# written as a scalar function mapped with tl.map_elementwise (inputs
# annotated tl.const), and a counter-based hash of (row, column) through
# tl.philox_impl with a per-row key, as sampling kernels build their own
# Philox streams.
import triton
import triton.language as tl


@triton.jit
def _softplus_scalar(x, beta, threshold):
    # above the threshold softplus is x to float precision
    bx = x * beta
    return tl.where(bx > threshold, x, tl.log(1.0 + tl.exp(bx)) / beta)


@triton.jit
def softplus_kernel(x_ptr: tl.const, y_ptr, n_elements, beta, threshold, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.map_elementwise(_softplus_scalar, x, beta, threshold)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def row_hash_kernel(seeds_ptr, out_ptr, n_cols, stride, N_ROUNDS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    seed = tl.load(seeds_ptr + row).to(tl.uint32)
    c0 = cols.to(tl.uint32)
    c1 = tl.full((BLOCK,), 0, tl.uint32) + row.to(tl.uint32)
    zero = tl.zeros((BLOCK,), dtype=tl.uint32)
    k0 = zero + seed
    k1 = zero + 0x5BD1E995
    w0, w1, w2, w3 = tl.philox_impl(c0, c1, zero, zero, k0, k1, N_ROUNDS)
    tl.store(out_ptr + row * stride + cols, (w0 ^ w3).to(tl.int32, bitcast=True), mask=mask)
