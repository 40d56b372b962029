# libdevice in a library-style file: a float's exponent and mantissa taken
# apart through its bits (float_as_int, ldexp), fixed-point codes rounded
# each of libdevice's four ways, and the bit statistics of integer words
# (popc, clz, brev, ffs) as compression and hashing kernels compute them.
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def float_parts_kernel(x_ptr, exp_ptr, mant_ptr, fixed_ptr, n_elements, FRAC_BITS: tl.constexpr,
                       BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    bits = libdevice.float_as_int(x)
    e = ((bits >> 23) & 0xFF) - 127
    tl.store(exp_ptr + offs, e, mask=mask)
    tl.store(mant_ptr + offs, libdevice.ldexp(x, -e), mask=mask)
    scaled = x * (1 << FRAC_BITS)
    tl.store(fixed_ptr + offs, libdevice.float2int_rn(scaled), mask=mask)
    tl.store(fixed_ptr + n_elements + offs, libdevice.float2int_rz(scaled), mask=mask)
    tl.store(fixed_ptr + 2 * n_elements + offs, libdevice.float2int_rd(scaled), mask=mask)
    tl.store(fixed_ptr + 3 * n_elements + offs, libdevice.float2int_ru(scaled), mask=mask)


@triton.jit
def bit_stats_kernel(w_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    w = tl.load(w_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, libdevice.popc(w), mask=mask)
    tl.store(out_ptr + n_elements + offs, libdevice.clz(w), mask=mask)
    tl.store(out_ptr + 2 * n_elements + offs, libdevice.brev(w), mask=mask)
    tl.store(out_ptr + 3 * n_elements + offs, libdevice.ffs(w), mask=mask)
