"""Comparisons of tiles with Python numbers, as library kernels write them
(a threshold on fp16 activations, a range test on int8 codes, a sentinel on
unsigned counts): the number takes part at the type Triton gives a literal
(fp32, int32, uint32 for 2**31), not at the tile's own type as it does in
arithmetic."""
import triton
import triton.language as tl


@triton.jit
def threshold_fp16_kernel(h_ptr, lt_ptr, eq_ptr, ge_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    h = tl.load(h_ptr + offs, mask=m, other=0.0)
    tl.store(lt_ptr + offs, (h < 0.1).to(tl.int32), mask=m)
    tl.store(eq_ptr + offs, (h == 0.1).to(tl.int32), mask=m)
    tl.store(ge_ptr + offs, (0.3 <= h).to(tl.int32), mask=m)


@triton.jit
def int_codes_kernel(a_ptr, u_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=0)  # int8
    u = tl.load(u_ptr + offs, mask=m, other=0)  # uint8
    w = tl.load(w_ptr + offs, mask=m, other=0).to(tl.uint32, bitcast=True)
    bits = (a < 200).to(tl.int32) | ((u > -1).to(tl.int32) << 1)
    bits |= (w > -1).to(tl.int32) << 2  # -1 as uint32: never true
    bits |= (offs < 2**31).to(tl.int32) << 3
    tl.store(out_ptr + offs, bits, mask=m)


@triton.jit
def threshold_fp64_kernel(d_ptr, lt_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    d = tl.load(d_ptr + offs, mask=m, other=0.0)
    tl.store(lt_ptr + offs, (d < 0.1).to(tl.int32), mask=m)
