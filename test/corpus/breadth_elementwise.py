# Elementwise kernels in the manner of operator libraries (one op a kernel,
# a flat grid over n_elements, masks and dtype casts at the edges): integer
# division of negative numbers, bit tricks through bitcasts, libdevice
# activations, half-precision round trips, mixed-dtype where chains, Philox-free
# hashing with umulhi, and rows with runtime strides masked on both dims.
import triton
import triton.language as tl
from triton.language.extra import libdevice

# module-level constexprs, read inside the kernels
SQRT1_2 = tl.constexpr(0.7071067811865476)
HASH_MUL = tl.constexpr(0x9E3779B1)


@triton.jit
def int_divmod_kernel(a_ptr, b_ptr, q_ptr, r_ptr, fq_ptr, n_elements, BLOCK: tl.constexpr):
    # q, r: Triton's (C) truncating division; fq: floor division built from
    # them, as index math for negative offsets needs
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    q = a // b
    r = a % b
    fix = (r != 0) & ((r < 0) != (b < 0))
    fq = tl.where(fix, q - 1, q)
    tl.store(q_ptr + offs, q, mask=mask)
    tl.store(r_ptr + offs, r, mask=mask)
    tl.store(fq_ptr + offs, fq.to(tl.int64), mask=mask)


@triton.jit
def scalar_divmod_kernel(x_ptr, out_ptr, n_elements, d, BLOCK: tl.constexpr):
    # a runtime (possibly negative) divisor, and a negative constant one
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = (x // d) * 1000 + (x % d) * 10 + (x % -3) + (x // -7)
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def float_bits_kernel(x_ptr, abs_ptr, neg_ptr, exp_ptr, n_elements, BLOCK: tl.constexpr):
    # |x| and -x by masking the sign bit; the unbiased exponent from the bits
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    bits = tl.cast(x, tl.int32, bitcast=True)
    a = tl.cast(bits & 0x7FFFFFFF, tl.float32, bitcast=True)
    n = (bits ^ (-2147483648)).to(tl.float32, bitcast=True)
    e = ((bits >> 23) & 0xFF) - 127
    tl.store(abs_ptr + offs, a, mask=mask)
    tl.store(neg_ptr + offs, n, mask=mask)
    tl.store(exp_ptr + offs, e, mask=mask)


@triton.jit
def _hash_u32(x):
    # a multiplicative hash that mixes in the high word of the product
    h = x * HASH_MUL
    return h ^ tl.umulhi(x, 0x85EBCA6B)


@triton.jit
def umulhi_hash_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.uint32, bitcast=True)
    h = _hash_u32(x)
    tl.store(out_ptr + offs, h.to(tl.int32, bitcast=True), mask=mask)


@triton.jit
def gelu_erf_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    # exact GELU on half-precision storage, computed in fp32
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.math.erf(x * SQRT1_2))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def activations_kernel(x_ptr, elu_ptr, softplus_ptr, mish_ptr, rs_ptr, pw_ptr, n_elements,
                       alpha, BLOCK: tl.constexpr):
    # ELU through expm1, softplus through log1p, mish through tanh, and the
    # libdevice spellings of rsqrt and pow
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    elu = tl.where(x > 0, x, alpha * libdevice.expm1(x))
    sp = tl.where(x > 20.0, x, libdevice.log1p(tl.exp(x)))
    mish = x * libdevice.tanh(sp)
    rs = libdevice.rsqrt(tl.abs(x) + 1.0)
    pw = libdevice.pow(tl.abs(x) + 0.5, 1.5)
    tl.store(elu_ptr + offs, elu, mask=mask)
    tl.store(softplus_ptr + offs, sp, mask=mask)
    tl.store(mish_ptr + offs, mish, mask=mask)
    tl.store(rs_ptr + offs, rs, mask=mask)
    tl.store(pw_ptr + offs, pw, mask=mask)


@triton.jit
def clamp_fma_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n_elements, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_first")
    y = tl.load(y_ptr + offs, mask=mask, other=0.0, cache_modifier=".cg")
    z = tl.load(z_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_last")
    out = tl.clamp(tl.fma(x, y, z), lo, hi)
    tl.store(out_ptr + offs, out, mask=mask, cache_modifier=".cs")


@triton.jit
def half_round_trip_kernel(x_ptr, h_ptr, b_ptr, d_ptr, n_elements, BLOCK: tl.constexpr):
    # fp32 -> fp16 -> fp32 and fp32 -> bf16 -> fp32; d is the rounding error
    # of each, summed in fp32
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    h = x.to(tl.float16)
    b = x.to(tl.bfloat16)
    d = (x - h.to(tl.float32)) + (x - b.to(tl.float32))
    tl.store(h_ptr + offs, h, mask=mask)
    tl.store(b_ptr + offs, b, mask=mask)
    tl.store(d_ptr + offs, d, mask=mask)


@triton.jit
def where_chain_kernel(x_ptr, k_ptr, out_ptr, n_elements, thresh, BLOCK: tl.constexpr):
    # a piecewise function whose branches mix an int32 block, Python ints,
    # Python floats and a runtime fp32 scalar
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    k = tl.load(k_ptr + offs, mask=mask, other=0)
    y = tl.where(x < -thresh, -1,
                 tl.where(x > thresh, k,
                          tl.where(k % 2 == 0, x * 0.5, 2.5)))
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def strided_scale_kernel(x_ptr, y_ptr, scale_ptr, M, N, stride_xm, stride_xn, stride_ym,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # a 2-D tile of a strided (possibly transposed) view; int64 row offsets
    # so huge tensors do not overflow; both dims masked
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=mask, other=-1.0)
    s = tl.load(scale_ptr + rows, mask=rows < M, other=0.0)
    y = x * s[:, None]
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :], y, mask=mask)


@triton.jit
def _scaled_add(x, y, alpha: tl.constexpr = 1.0, USE_ALPHA: tl.constexpr = False):
    if USE_ALPHA:
        return x + alpha * y
    return x + y


@triton.heuristics({"EVEN_N": lambda args: args["n_elements"] % args["BLOCK"] == 0})
@triton.jit
def add_heuristics_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr,
                          EVEN_N: tl.constexpr):
    # the last, partial block returns early from a separate path; the helper
    # is called with and without its default constexprs
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs)
        tl.store(out_ptr + offs, _scaled_add(x, y, 0.5, True))
        return
    if (pid + 1) * BLOCK > n_elements:
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, _scaled_add(x, y), mask=mask)
        return
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, _scaled_add(x, y, USE_ALPHA=False))


@triton.jit
def collatz_steps_kernel(x_ptr, out_ptr, n_elements, max_steps, BLOCK: tl.constexpr):
    # a while loop over the block until every lane is done (bounded)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    v = tl.load(x_ptr + offs, mask=mask, other=1).to(tl.int64)
    steps = tl.zeros((BLOCK,), dtype=tl.int32)
    it = 0
    while (tl.max(v, axis=0) > 1) & (it < max_steps):
        live = v > 1
        nxt = tl.where(v % 2 == 0, v // 2, 3 * v + 1)
        v = tl.where(live, nxt, v)
        steps += live.to(tl.int32)
        it += 1
    tl.store(out_ptr + offs, steps, mask=mask)
