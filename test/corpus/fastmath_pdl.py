# Fast-math elementwise kernels through hand-written PTX, and a pair of
# kernels chained with programmatic dependent launch, in the manner of a
# kernel library's low-level ops module.
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait


@triton.jit
def _tanh_approx(x):
    # the MUFU tanh: about 2^-11 relative error, one instruction
    return tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", [x],
                                     dtype=tl.float32, is_pure=True, pack=1)


@triton.jit
def gelu_fast_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    y = 0.5 * x * (1.0 + _tanh_approx(inner))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def dequant_u8_kernel(q_ptr, scale_ptr, out_ptr, n_elements, zero_point,
                      BLOCK: tl.constexpr):
    # four bytes unpacked per asm call: one 32-bit register in, four out
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    q = tl.load(q_ptr + offs, mask=mask, other=0)
    scale = tl.load(scale_ptr)
    vals = tl.inline_asm_elementwise(
        asm="""{
        .reg .b8 q<4>;
        mov.b32 {q0, q1, q2, q3}, $4;
        cvt.rn.f32.u8 $0, q0;
        cvt.rn.f32.u8 $1, q1;
        cvt.rn.f32.u8 $2, q2;
        cvt.rn.f32.u8 $3, q3;
        }""",
        constraints="=f,=f,=f,=f,r",
        args=[q],
        dtype=tl.float32,
        is_pure=True,
        pack=4,
    )
    vals = vals - zero_point.to(tl.float32)
    tl.store(out_ptr + offs, vals * scale, mask=mask)


@triton.jit
def mul_wide_kernel(a_ptr, b_ptr, lo_ptr, hi_ptr, n_elements, BLOCK: tl.constexpr):
    # a 32x32 -> 64-bit product as two results of one asm call
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=0)
    lo, hi = tl.inline_asm_elementwise(
        "{ .reg .b64 t; mul.wide.u32 t, $2, $3; mov.b64 {$0, $1}, t; }",
        "=r,=r,r,r", [a, b], dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    tl.store(lo_ptr + offs, lo, mask=mask)
    tl.store(hi_ptr + offs, hi, mask=mask)


@triton.jit
def scale_shift_pdl_kernel(x_ptr, y_ptr, n_elements, alpha, beta,
                           BLOCK: tl.constexpr, USE_GDC: tl.constexpr):
    # launched with launch_pdl=True after the kernel that writes x: the
    # index math runs before the wait, the read of x after it
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    if USE_GDC:
        gdc_wait()
    x = tl.load(x_ptr + offs, mask=mask)
    if USE_GDC:
        gdc_launch_dependents()
    tl.store(y_ptr + offs, x * alpha + beta, mask=mask)


def _exp_log1p_asm(n):
    # one block of PTX per packed element: out_k = log2(1 + 2^in_k), or in_k
    # itself above 15 (where the sum rounds to 2^in_k); built at import time
    # by plain Python, as softplus modules build theirs
    text = ""
    for k in range(n):
        text += ("{ .reg .pred big; setp.gt.f32 big, $%d, 15.0; @big mov.f32 $%d, $%d; "
                 "@!big ex2.approx.ftz.f32 $%d, $%d; @!big add.f32 $%d, $%d, 1.0; "
                 "@!big lg2.approx.ftz.f32 $%d, $%d; } " % (k + n, k, k + n, k, k + n, k, k, k, k))
    return text


SOFTPLUS_PACK = tl.constexpr(4)
softplus_asm = tl.constexpr(_exp_log1p_asm(4))
softplus_constraints = tl.constexpr(",".join(["=r"] * 4 + ["r"] * 4))


@triton.jit
def softplus_pack4_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    # pack=4 where a thread holds only 2 elements (BLOCK 256 over 128
    # threads): the call is padded, its extra results dropped
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.inline_asm_elementwise(softplus_asm, softplus_constraints, [x * 1.4426950408889634],
                                  dtype=tl.float32, is_pure=True, pack=SOFTPLUS_PACK)
    tl.store(out_ptr + offs, y * 0.6931471805599453, mask=mask)


NIBBLE_MASK = tl.constexpr(0x000F000F)
FP16_1024 = tl.constexpr(0x64006400)


@triton.jit
def nibbles_imm_kernel(w_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    # two low nibbles of each word as fp16 1024 + v, through lop3 with its
    # mask, magic and lookup table as immediate ('n') operands
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    w = tl.load(w_ptr + offs, mask=mask, other=0)
    lo, hi = tl.inline_asm_elementwise(
        "{ .reg .b32 t; lop3.b32 t, $2, $3, $4, $5; mov.b32 {$0, $1}, t; }",
        "=h,=h,r,n,n,n", args=[w, NIBBLE_MASK, FP16_1024, 0xEA],
        dtype=(tl.float16, tl.float16), is_pure=True, pack=1)
    tl.store(out_ptr + offs, lo.to(tl.float32) - 1024.0 + 16.0 * (hi.to(tl.float32) - 1024.0),
             mask=mask)
