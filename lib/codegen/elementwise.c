/* codegen/elementwise.c: per-thread straight-line code for elementwise ops:
 * constants, arange, arithmetic, comparisons, casts, math and libdevice
 * calls, pointer arithmetic. Operands share the result's layout (sema made
 * shapes equal), so slot s of the result depends on slot s of each operand.
 * bf16 arithmetic is computed in fp32 and rounded once (exact for + - *). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/cg.h"

LLVMValueRef cg_const_elem(Cg *cg, DType dt, int64_t iv, double fv)
{
    LLVMTypeRef t = cg_type(cg, dt);
    if (dtype_is_fp8(dt)) /* its byte (fv is a value of the format) */
        return LLVMConstInt(t, fp8_bits(dt, fv), 0);
    if (dtype_is_float(dt))
        return LLVMConstReal(t, fv);
    if (dt == DT_PTR)
        return LLVMConstIntToPtr(cg_i64(cg, iv), t);
    return LLVMConstInt(t, (unsigned long long)iv, dtype_is_signed(dt));
}

static LLVMValueRef to_f32(Cg *cg, LLVMValueRef x)
{
    return LLVMBuildFPExt(cg->b, x, LLVMFloatTypeInContext(cg->ctx), "");
}

static LLVMValueRef from_f32(Cg *cg, LLVMValueRef x, DType dt)
{
    return LLVMBuildFPTrunc(cg->b, x, cg_type(cg, dt), "");
}

/* fp64 -> fp32 truncated, made odd when inexact (round to odd keeps the
 * sticky bit), so that rounding it to nearest even into a narrower format
 * rounds once. A plain fptrunc then fptrunc would round twice. */
LLVMValueRef cg_f64_to_f32_odd(Cg *cg, LLVMValueRef x)
{
    LLVMBuilderRef b = cg->b;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMValueRef t = cg_intrinsic(cg, "llvm.nvvm.d2f.rz", NULL, 0, &x, 1);
    LLVMValueRef back = LLVMBuildFPExt(b, t, LLVMDoubleTypeInContext(cg->ctx), "");
    LLVMValueRef inexact = LLVMBuildFCmp(b, LLVMRealONE, back, x, "");
    LLVMValueRef bits =
        LLVMBuildOr(b, LLVMBuildBitCast(b, t, i32, ""), LLVMBuildZExt(b, inexact, i32, ""), "");
    return LLVMBuildBitCast(b, bits, LLVMFloatTypeInContext(cg->ctx), "");
}

/* fp64 -> fp16/bf16 rounded once. */
static LLVMValueRef f64_to_16(Cg *cg, LLVMValueRef x, DType to)
{
    return from_f32(cg, cg_f64_to_f32_odd(cg, x), to);
}

/* int -> fp16/bf16 rounded once: 16 bits or fewer are exact in fp32 and
 * round once from there; wider ones by one cvt.rn from the integer (fp16
 * anywhere, bf16 from sm_90, as Triton's lowering emits), else through
 * fp64 (exact up to 32 bits) and fp32 rounded to odd. */
static LLVMValueRef int_to_16(Cg *cg, LLVMValueRef x, DType from, DType to)
{
    int bits = dtype_bits(from);
    bool sgn = dtype_is_signed(from) && bits > 1;
    if (bits <= 16)
        return from_f32(cg,
                        sgn ? LLVMBuildSIToFP(cg->b, x, LLVMFloatTypeInContext(cg->ctx), "")
                            : LLVMBuildUIToFP(cg->b, x, LLVMFloatTypeInContext(cg->ctx), ""),
                        to);
    if (to == DT_BF16 && cg->sm < 90)
        return f64_to_16(cg, cg_convert(cg, x, from, DT_F64), to);
    char text[48];
    snprintf(text, sizeof text, "cvt.rn.%s.%c%d $0, $1;", to == DT_BF16 ? "bf16" : "f16",
             sgn ? 's' : 'u', bits);
    LLVMTypeRef it = LLVMTypeOf(x);
    LLVMValueRef h = cg_asm_pure(cg, LLVMInt16TypeInContext(cg->ctx), &it, 1, text,
                                 bits == 64 ? "=h,l" : "=h,r", &x);
    return LLVMBuildBitCast(cg->b, h, cg_type(cg, to), "");
}

LLVMValueRef cg_convert(Cg *cg, LLVMValueRef x, DType from, DType to)
{
    LLVMBuilderRef b = cg->b;
    LLVMTypeRef tt = cg_type(cg, to);
    if (from == to)
        return x;
    if (dtype_is_fp8(from) || dtype_is_fp8(to)) {
        LLVMValueRef out[2];
        cg_fp8_convert2(cg, x, x, from, to, out);
        return out[0];
    }
    if (from == DT_PTR)
        x = LLVMBuildPtrToInt(b, x, LLVMInt64TypeInContext(cg->ctx), ""), from = DT_I64;
    if (to == DT_PTR)
        return LLVMBuildIntToPtr(b, cg_convert(cg, x, from, DT_I64), tt, "");
    if (to == DT_I1) {
        if (dtype_is_float(from))
            return LLVMBuildFCmp(b, LLVMRealUNE, x, LLVMConstReal(cg_type(cg, from), 0), "");
        return LLVMBuildICmp(b, LLVMIntNE, x, LLVMConstInt(cg_type(cg, from), 0, 0), "");
    }
    bool ff = dtype_is_float(from), tf = dtype_is_float(to);
    if (!ff && !tf) {
        int fb = dtype_bits(from), tb = dtype_bits(to);
        if (tb < fb)
            return LLVMBuildTrunc(b, x, tt, "");
        if (tb == fb)
            return x;
        return dtype_is_signed(from) ? LLVMBuildSExt(b, x, tt, "") : LLVMBuildZExt(b, x, tt, "");
    }
    if (!ff) { /* int -> float */
        if (to == DT_BF16 || to == DT_F16)
            return int_to_16(cg, x, from, to);
        return dtype_is_signed(from) ? LLVMBuildSIToFP(b, x, tt, "")
                                     : LLVMBuildUIToFP(b, x, tt, "");
    }
    if (!tf) { /* float -> int truncates toward zero */
        if (from == DT_BF16 || from == DT_F16)
            x = to_f32(cg, x), from = DT_F32;
        return dtype_is_signed(to) ? LLVMBuildFPToSI(b, x, tt, "") : LLVMBuildFPToUI(b, x, tt, "");
    }
    if ((from == DT_F16 && to == DT_BF16) || (from == DT_BF16 && to == DT_F16))
        return from_f32(cg, to_f32(cg, x), to);
    if (dtype_bits(to) > dtype_bits(from))
        return LLVMBuildFPExt(b, x, tt, "");
    if (from == DT_F64 && (to == DT_F16 || to == DT_BF16))
        return f64_to_16(cg, x, to);
    return LLVMBuildFPTrunc(b, x, tt, "");
}

/* fp32 -> fp16, bf16 or fp8e5 rounded toward zero (a cast with CAST_RTZ),
 * by cvt.rz as Triton lowers it. An fp8e5 code is the high byte of the
 * fp16 of its value, so dropping the low byte of the truncated fp16
 * truncates again (Triton's fp16 -> fp8e5 rtz). */
static LLVMValueRef convert_rz(Cg *cg, LLVMValueRef x, DType to)
{
    LLVMTypeRef i16 = LLVMInt16TypeInContext(cg->ctx), f32 = LLVMFloatTypeInContext(cg->ctx);
    const char *text = to == DT_BF16 ? "cvt.rz.bf16.f32 $0, $1;" : "cvt.rz.f16.f32 $0, $1;";
    LLVMValueRef h = cg_asm_pure(cg, i16, &f32, 1, text, "=h,f", &x);
    if (to == DT_F8E5)
        return LLVMBuildTrunc(cg->b, LLVMBuildLShr(cg->b, h, LLVMConstInt(i16, 8, 0), ""),
                              LLVMInt8TypeInContext(cg->ctx), "");
    return LLVMBuildBitCast(cg->b, h, cg_type(cg, to), "");
}

static LLVMValueRef int_minmax(Cg *cg, bool is_max, DType dt, LLVMValueRef a, LLVMValueRef b)
{
    LLVMIntPredicate p = dtype_is_signed(dt) ? (is_max ? LLVMIntSGT : LLVMIntSLT)
                                             : (is_max ? LLVMIntUGT : LLVMIntULT);
    return LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, p, a, b, ""), a, b, "");
}

/* maxnum/minnum; with propagate (sub = 1) a NaN operand gives NaN. */
static LLVMValueRef float_minmax(Cg *cg, bool is_max, int propagate, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef args[2] = {a, b};
    LLVMValueRef r = cg_intrinsic(cg, is_max ? "llvm.maxnum" : "llvm.minnum", &t, 1, args, 2);
    if (!propagate)
        return r;
    LLVMValueRef nan = LLVMBuildFCmp(cg->b, LLVMRealUNO, a, b, "");
    return LLVMBuildSelect(cg->b, nan, LLVMBuildFAdd(cg->b, a, b, ""), r, "");
}

static LLVMValueRef div_full_f32(Cg *cg, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef f = LLVMFloatTypeInContext(cg->ctx);
    LLVMTypeRef pt[2] = {f, f};
    LLVMTypeRef ft = LLVMFunctionType(f, pt, 2, 0);
    const char *asm_text = "div.full.f32 $0, $1, $2;";
    const char *cons = "=f,f,f";
    LLVMValueRef ia = LLVMGetInlineAsm(ft, asm_text, strlen(asm_text), cons, strlen(cons), 0, 0,
                                       LLVMInlineAsmDialectATT, 0);
    LLVMValueRef args[2] = {a, b};
    return cg_returns(cg, LLVMBuildCall2(cg->b, ft, ia, args, 2, ""));
}

static LLVMValueRef nvvm1(Cg *cg, const char *name, LLVMValueRef x)
{
    return cg_intrinsic(cg, name, NULL, 0, &x, 1);
}

static LLVMValueRef llvm1(Cg *cg, const char *name, LLVMValueRef x)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    return cg_intrinsic(cg, name, &t, 1, &x, 1);
}

/* An fp32 x % y as Triton's LLVM lowers frem: x - trunc(x / y) * y in one
 * fma, x itself where y is infinite; by a constant power of two (exact
 * quotients) with x's sign on a zero result (-1.0 % 1.0 is -0.0 there).
 * LLVM 19's own lowering rounds the product and the difference apart. */
static LLVMValueRef frem_f32(Cg *cg, LLVMValueRef x, LLVMValueRef y)
{
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMBool loses = 0;
    double c = LLVMIsAConstantFP(y) ? LLVMConstRealGetDouble(y, &loses) : 0.0;
    int e = 0;
    bool pow2 = c != 0.0 && !loses && isfinite(c) && fabs(frexp(c, &e)) == 0.5;
    LLVMValueRef q = pow2 ? LLVMBuildFMul(cg->b, x, LLVMConstReal(t, 1.0 / c), "")
                          : LLVMBuildFDiv(cg->b, x, y, "");
    LLVMValueRef nq = LLVMBuildFNeg(cg->b, llvm1(cg, "llvm.trunc", q), "");
    LLVMValueRef fa[3] = {nq, y, x};
    LLVMValueRef r = cg_intrinsic(cg, "llvm.fma", &t, 1, fa, 3);
    if (pow2) {
        LLVMValueRef cs[2] = {r, x};
        return cg_intrinsic(cg, "llvm.copysign", &t, 1, cs, 2);
    }
    LLVMValueRef inf = LLVMBuildFCmp(cg->b, LLVMRealOEQ, llvm1(cg, "llvm.fabs", y),
                                     LLVMConstReal(t, INFINITY), "");
    return LLVMBuildSelect(cg->b, inf, x, r, "");
}

/* Float add, sub and mul may fuse into fma where one feeds the other, as
 * Triton compiles them by default (its enable_fp_fusion): LLVM contracts
 * pairs that both carry the flag, and the NVPTX backend (told so once, in
 * target/nvptx.c) prints the rest without a rounding suffix, which lets
 * ptxas fuse what LLVM did not see. With fusion off each op is one of
 * NVVM's explicitly rounded intrinsics, which neither may fuse. */
static LLVMValueRef fused_or_rounded(Cg *cg, IrKind k, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef B = cg->b;
    if (!cg->o->no_fp_fusion) {
        LLVMValueRef x = k == IR_ADD ? LLVMBuildFAdd(B, a, b, "")
            : k == IR_SUB            ? LLVMBuildFSub(B, a, b, "")
                                     : LLVMBuildFMul(B, a, b, "");
        if (LLVMIsAInstruction(x) && LLVMCanValueUseFastMathFlags(x))
            LLVMSetFastMathFlags(x, LLVMFastMathAllowContract);
        return x;
    }
    bool f64 = LLVMGetTypeKind(LLVMTypeOf(a)) == LLVMDoubleTypeKind;
    if (k == IR_SUB)
        b = LLVMBuildFNeg(B, b, ""); /* exact: a - b is a + (-b) rounded once */
    LLVMValueRef args[2] = {a, b};
    const char *name = k == IR_MUL ? (f64 ? "llvm.nvvm.mul.rn.d" : "llvm.nvvm.mul.rn.f")
                                   : (f64 ? "llvm.nvvm.add.rn.d" : "llvm.nvvm.add.rn.f");
    return cg_intrinsic(cg, name, NULL, 0, args, 2);
}

LLVMValueRef cg_binop(Cg *cg, IrKind k, int sub, DType dt, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef B = cg->b;
    bool fl = dtype_is_float(dt), sg = dtype_is_signed(dt);
    /* Without fusion, fp16 goes through fp32's rounded ops: fp32 carries
     * more than twice fp16's precision plus two bits, so rounding to fp32
     * and then to fp16 gives the correctly rounded fp16 result. */
    bool native16 =
        dt == DT_F16 && (k == IR_ADD || k == IR_SUB || k == IR_MUL) && !cg->o->no_fp_fusion;
    if ((dt == DT_BF16 || dt == DT_F16) && !native16)
        return from_f32(cg, cg_binop(cg, k, sub, DT_F32, to_f32(cg, a), to_f32(cg, b)), dt);
    switch (k) {
    case IR_ADD: return fl ? fused_or_rounded(cg, IR_ADD, a, b) : LLVMBuildAdd(B, a, b, "");
    case IR_SUB: return fl ? fused_or_rounded(cg, IR_SUB, a, b) : LLVMBuildSub(B, a, b, "");
    case IR_MUL: return fl ? fused_or_rounded(cg, IR_MUL, a, b) : LLVMBuildMul(B, a, b, "");
    case IR_DIV:
        if (fl)
            return dt == DT_F32 && sub == 0 ? div_full_f32(cg, a, b) : LLVMBuildFDiv(B, a, b, "");
        return sg ? LLVMBuildSDiv(B, a, b, "") : LLVMBuildUDiv(B, a, b, "");
    case IR_REM:
        if (fl)
            return dt == DT_F32 ? frem_f32(cg, a, b) : LLVMBuildFRem(B, a, b, "");
        return sg ? LLVMBuildSRem(B, a, b, "") : LLVMBuildURem(B, a, b, "");
    case IR_AND: return LLVMBuildAnd(B, a, b, "");
    case IR_OR: return LLVMBuildOr(B, a, b, "");
    case IR_XOR: return LLVMBuildXor(B, a, b, "");
    case IR_SHL: return LLVMBuildShl(B, a, b, "");
    case IR_SHR: return sg ? LLVMBuildAShr(B, a, b, "") : LLVMBuildLShr(B, a, b, "");
    case IR_MIN:
    case IR_MAX:
        return fl ? float_minmax(cg, k == IR_MAX, sub, a, b)
                  : int_minmax(cg, k == IR_MAX, dt, a, b);
    case IR_UMULHI: {
        int bits = dtype_bits(dt);
        LLVMTypeRef w = LLVMIntTypeInContext(cg->ctx, (unsigned)bits * 2);
        LLVMValueRef p =
            LLVMBuildMul(B, LLVMBuildZExt(B, a, w, ""), LLVMBuildZExt(B, b, w, ""), "");
        p = LLVMBuildLShr(B, p, LLVMConstInt(w, (unsigned)bits, 0), "");
        return LLVMBuildTrunc(B, p, LLVMTypeOf(a), "");
    }
    default: return LLVMGetUndef(LLVMTypeOf(a));
    }
}

static LLVMValueRef cmp(Cg *cg, int pred, DType dt, LLVMValueRef a, LLVMValueRef b)
{
    if (dtype_is_float(dt)) {
        static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                               LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
        return LLVMBuildFCmp(cg->b, fp[pred], a, b, "");
    }
    static const LLVMIntPredicate si[] = {LLVMIntEQ,  LLVMIntNE,  LLVMIntSLT,
                                          LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
    static const LLVMIntPredicate ui[] = {LLVMIntEQ,  LLVMIntNE,  LLVMIntULT,
                                          LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
    return LLVMBuildICmp(cg->b, dtype_is_signed(dt) ? si[pred] : ui[pred], a, b, "");
}

static LLVMValueRef libdevice_call(Cg *cg, const char *name, LLVMTypeRef ret, LLVMValueRef *args,
                                   int n)
{
    LLVMTypeRef pt[8];
    for (int i = 0; i < n && i < 8; i++)
        pt[i] = LLVMTypeOf(args[i]);
    cg->uses_libdevice = true;
    return cg_call_fn(cg, name, ret, pt, n, args, n, false);
}

/* Fast paths as Triton takes them for fp32; accurate libdevice code for fp64. */
static LLVMValueRef math(Cg *cg, MathFn fn, DType dt, LLVMValueRef x)
{
    if (dt == DT_F16 || dt == DT_BF16)
        return from_f32(cg, math(cg, fn, DT_F32, to_f32(cg, x)), dt);
    bool f32 = dt == DT_F32;
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMValueRef ld;
    static const char *const ld32[MATH_COUNT] = {
        [MATH_EXP] = "__nv_expf",   [MATH_EXP2] = "__nv_exp2f", [MATH_LOG] = "__nv_logf",
        [MATH_LOG2] = "__nv_log2f", [MATH_SIN] = "__nv_sinf",   [MATH_COS] = "__nv_cosf",
        [MATH_ERF] = "__nv_erff",   [MATH_TANH] = "__nv_tanhf", [MATH_RSQRT] = "__nv_rsqrtf"};
    static const char *const ld64[MATH_COUNT] = {
        [MATH_EXP] = "__nv_exp",   [MATH_EXP2] = "__nv_exp2", [MATH_LOG] = "__nv_log",
        [MATH_LOG2] = "__nv_log2", [MATH_SIN] = "__nv_sin",   [MATH_COS] = "__nv_cos",
        [MATH_ERF] = "__nv_erf",   [MATH_TANH] = "__nv_tanh", [MATH_RSQRT] = "__nv_rsqrt"};
    switch (fn) {
    case MATH_EXP:
        if (!f32)
            break;
        return nvvm1(cg, "llvm.nvvm.ex2.approx.f",
                     LLVMBuildFMul(cg->b, x, LLVMConstReal(t, 1.4426950408889634), ""));
    case MATH_EXP2: /* flushes subnormals, as Triton's exp2 does; it saves the
                     * denormal fix-up around every MUFU.EX2 in a softmax */
        if (!f32)
            break;
        return nvvm1(cg, "llvm.nvvm.ex2.approx.ftz.f", x);
    /* log and log2 are libdevice's accurate code, as in Triton (lg2.approx's
     * absolute error is most of log(x) near 1); libdevice runs with
     * subnormals flushed (target/nvptx.c), and so do sqrt, rsqrt, floor
     * and ceil here, as Triton's fp32 code has them */
    case MATH_SQRT:
        return f32 ? nvvm1(cg, "llvm.nvvm.sqrt.approx.ftz.f", x) : llvm1(cg, "llvm.sqrt", x);
    case MATH_SQRT_RN: return f32 ? nvvm1(cg, "llvm.nvvm.sqrt.rn.f", x) : llvm1(cg, "llvm.sqrt", x);
    case MATH_RSQRT:
        if (!f32)
            break;
        return nvvm1(cg, "llvm.nvvm.rsqrt.approx.ftz.f", x);
    case MATH_ABS: return llvm1(cg, "llvm.fabs", x);
    case MATH_FLOOR:
        return f32 ? nvvm1(cg, "llvm.nvvm.floor.ftz.f", x) : llvm1(cg, "llvm.floor", x);
    case MATH_CEIL: return f32 ? nvvm1(cg, "llvm.nvvm.ceil.ftz.f", x) : llvm1(cg, "llvm.ceil", x);
    default: break;
    }
    const char *name = (unsigned)fn < MATH_COUNT ? (f32 ? ld32 : ld64)[fn] : NULL;
    if (!name) {
        cg_internal(cg, cg->f->span, "math function %d has no lowering", (int)fn);
        return LLVMGetUndef(t);
    }
    ld = libdevice_call(cg, name, t, &x, 1);
    return ld;
}


/* Triton negates a float as 0 - x (its minus), which gives +0.0 for +0.0
 * where fneg gives -0.0. */
static LLVMValueRef neg_float(Cg *cg, LLVMValueRef x)
{
    return LLVMBuildFSub(cg->b, LLVMConstReal(LLVMTypeOf(x), 0.0), x, "");
}

static LLVMValueRef addptr(Cg *cg, DType elem, DType offdt, LLVMValueRef p, LLVMValueRef off)
{
    LLVMValueRef o = cg_convert(cg, off, offdt, dtype_is_signed(offdt) ? DT_I64 : DT_U64);
    return LLVMBuildGEP2(cg->b, cg_mem_type(cg, elem), p, &o, 1, "");
}

/* The value of one result slot from the operand slots. */
LLVMValueRef cg_elem_op(Cg *cg, const IrOp *op, LLVMValueRef *x, LLVMValueRef idx)
{
    DType rd = op->results[0]->type.dt;
    DType od = op->nops > 0 ? op->operands[0]->type.dt : rd;
    LLVMBuilderRef B = cg->b;
    switch (op->kind) {
    case IR_ARANGE: return op->ival ? LLVMBuildAdd(B, idx, cg_i32(cg, op->ival), "") : idx;
    case IR_NEG: /* a float's as Triton's, 0 - x: -(+0.0) is +0.0 */
        if (rd == DT_BF16 || rd == DT_F16)
            return from_f32(cg, neg_float(cg, to_f32(cg, x[0])), rd);
        return dtype_is_float(rd) ? neg_float(cg, x[0]) : LLVMBuildNeg(B, x[0], "");
    case IR_NOT: return LLVMBuildNot(B, x[0], "");
    case IR_CMP: return cmp(cg, op->sub, od, x[0], x[1]);
    case IR_SELECT: return LLVMBuildSelect(B, x[0], x[1], x[2], "");
    case IR_FMA: {
        if (rd == DT_BF16 || rd == DT_F16) {
            LLVMValueRef y[3] = {to_f32(cg, x[0]), to_f32(cg, x[1]), to_f32(cg, x[2])};
            LLVMTypeRef t = LLVMFloatTypeInContext(cg->ctx);
            return from_f32(cg, cg_intrinsic(cg, "llvm.fma", &t, 1, y, 3), rd);
        }
        LLVMTypeRef t = cg_type(cg, rd);
        return cg_intrinsic(cg, "llvm.fma", &t, 1, x, 3);
    }
    case IR_MATH: return math(cg, (MathFn)op->sub, rd, x[0]);
    case IR_EXTERN: return libdevice_call(cg, op->str, cg_type(cg, rd), x, op->nops);
    case IR_CAST:
        return op->sub == CAST_RTZ ? convert_rz(cg, x[0], rd) : cg_convert(cg, x[0], od, rd);
    case IR_BITCAST:
        if (od == DT_PTR || rd == DT_PTR)
            return cg_convert(cg, x[0], od, rd);
        return LLVMBuildBitCast(B, x[0], cg_type(cg, rd), "");
    case IR_ADDPTR:
        return addptr(cg, op->results[0]->type.elem, op->operands[1]->type.dt, x[0], x[1]);
    case IR_PTR_TO_INT: return LLVMBuildPtrToInt(B, x[0], cg_type(cg, rd), "");
    case IR_INT_TO_PTR: return LLVMBuildIntToPtr(B, x[0], cg_type(cg, DT_PTR), "");
    default: return cg_binop(cg, op->kind, op->sub, od, x[0], x[1]);
    }
}

bool cg_is_elementwise(IrKind k)
{
    return ir_kind_elementwise(k) || k == IR_ADDPTR || k == IR_PTR_TO_INT || k == IR_INT_TO_PTR ||
        k == IR_ARANGE;
}

/* Four 8-bit integers -> fp16/bf16, r[0..3] from x[0..3], by building each
 * value's 16 bits around the byte (prmt) and subtracting the bias the
 * exponent brings, two at a time: exact, and on the integer and half
 * pipes where one cvt an element (I2F) runs at a quarter rate (a w8a16
 * GEMM widens its whole weight tile every K step). Signed to fp16 flips
 * the sign bit (1024 + 128 + x); to bf16, whose 7 mantissa bits cannot
 * hold a byte, the sign bit is subtracted apart (128 + (x & 127) - (128 or
 * 256)); unsigned to fp16 is 1024 + x. False where no form fits. */
static bool int8_to_16x4(Cg *cg, DType od, DType rd, const LLVMValueRef *x, LLVMValueRef *r)
{
    const char *pre, *post;
    if (od == DT_I8 && rd == DT_BF16 && cg->sm >= 90)
        pre = "mov.b32 w, $1;\nprmt.b32 t, w, 0x43, %s;\n",
        post = "and.b32 a, t, 0xff7fff7f;\nand.b32 b, t, 0xff80ff80;\nsub.bf16x2 $0, a, b;";
    else if (od == DT_I8 && rd == DT_F16)
        pre = "xor.b32 w, $1, 0x80808080;\nprmt.b32 t, w, 0x64, %s;\n",
        post = "mov.b32 b, 0x64806480;\nsub.f16x2 $0, t, b;";
    else if (od == DT_U8 && rd == DT_F16)
        pre = "mov.b32 w, $1;\nprmt.b32 t, w, 0x64, %s;\n",
        post = "mov.b32 b, 0x64006400;\nsub.f16x2 $0, t, b;";
    else
        return false;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), bytes = LLVMVectorType(cg_type(cg, od), 4);
    LLVMValueRef v = LLVMGetUndef(bytes);
    for (int i = 0; i < 4; i++)
        v = LLVMBuildInsertElement(cg->b, v, x[i], cg_i32(cg, i), "");
    LLVMValueRef w = LLVMBuildBitCast(cg->b, v, i32, "");
    LLVMTypeRef vt = LLVMVectorType(cg_type(cg, rd), 2);
    for (int h = 0; h < 2; h++) {
        char text[256], head[96];
        snprintf(head, sizeof head, pre, h ? "0x4342" : "0x4140");
        snprintf(text, sizeof text, "{\n.reg .b32 w, t, a, b;\n%s%s\n}", head, post);
        LLVMValueRef y =
            LLVMBuildBitCast(cg->b, cg_asm_pure(cg, i32, &i32, 1, text, "=r,r", &w), vt, "");
        r[2 * h] = LLVMBuildExtractElement(cg->b, y, cg_i32(cg, 0), "");
        r[2 * h + 1] = LLVMBuildExtractElement(cg->b, y, cg_i32(cg, 1), "");
    }
    return true;
}

/* Casts two elements at a time: fp8 conversions (fp8.c), and fp32 ->
 * fp16/bf16 (cvt.{rn,rz}.{f16,bf16}x2.f32, sm_80 and up): fptrunc's
 * rounding (or the cast's toward zero) in half the instructions, and the
 * form after which ptxas keeps wgmma accumulators asynchronous (single
 * conversions of accumulator registers make it serialize the warpgroup
 * MMAs). */
static bool cast_pairs(Cg *cg, const IrOp *op, CgVal x, CgVal r)
{
    if (op->kind != IR_CAST)
        return false;
    DType od = op->operands[0]->type.dt, rd = op->results[0]->type.dt;
    bool rz = op->sub == CAST_RTZ;
    if ((dtype_is_fp8(od) || dtype_is_fp8(rd)) && !rz && x.n == r.n && r.n % 2 == 0) {
        for (int s = 0; s < r.n; s += 2)
            cg_fp8_convert2(cg, x.el[s], x.el[s + 1], od, rd, r.el + s);
        return true;
    }
    if (x.n == r.n && r.n % 4 == 0 && int8_to_16x4(cg, od, rd, x.el, r.el)) {
        for (int s = 4; s < r.n; s += 4)
            int8_to_16x4(cg, od, rd, x.el + s, r.el + s);
        return true;
    }
    if (od != DT_F32 || (rd != DT_F16 && rd != DT_BF16) || cg->sm < 80 || x.n != r.n || r.n % 2)
        return false;
    LLVMTypeRef f32 = LLVMFloatTypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMTypeRef pt[2] = {f32, f32};
    char text[40];
    snprintf(text, sizeof text, "cvt.%s.%s.f32 $0, $2, $1;", rz ? "rz" : "rn",
             rd == DT_F16 ? "f16x2" : "bf16x2");
    LLVMTypeRef vt = LLVMVectorType(cg_type(cg, rd), 2);
    for (int s = 0; s < r.n; s += 2) {
        LLVMValueRef args[2] = {x.el[s], x.el[s + 1]}; /* the first goes to the low half */
        LLVMValueRef v =
            LLVMBuildBitCast(cg->b, cg_asm_pure(cg, i32, pt, 2, text, "=r,f,f", args), vt, "");
        r.el[s] = LLVMBuildExtractElement(cg->b, v, cg_i32(cg, 0), "");
        r.el[s + 1] = LLVMBuildExtractElement(cg->b, v, cg_i32(cg, 1), "");
    }
    return true;
}

bool cg_emit_elementwise(Cg *cg, const IrOp *op)
{
    if (op->kind == IR_CONST) {
        Type t = op->results[0]->type;
        CgVal r = cg_val_new(cg, cg_layout(cg, op->results[0]).per_thread);
        LLVMValueRef c = cg_const_elem(cg, t.dt, op->ival, op->fval);
        for (int s = 0; s < r.n; s++)
            r.el[s] = c;
        cg_set(cg, op->results[0], r);
        return true;
    }
    if (!cg_is_elementwise(op->kind))
        return false;
    CgLayout l = cg_layout(cg, op->results[0]);
    CgVal r = cg_val_new(cg, l.per_thread);
    CgVal in[8];
    int n = op->nops < 8 ? op->nops : 8;
    if (op->nops > 8) {
        cg_error(cg, op->span, "at most 8 operands are supported in '%s'", ir_kind_name(op->kind));
        return true;
    }
    for (int i = 0; i < n; i++) {
        in[i] = cg_get(cg, op->operands[i]);
        if (in[i].n != r.n && in[i].n != 1) {
            cg_internal(cg, op->span,
                        "operand %d of '%s' has %d elements per thread, "
                        "the result %d",
                        i, ir_kind_name(op->kind), in[i].n, r.n);
            return true;
        }
    }
    if (n > 0 && cast_pairs(cg, op, in[0], r)) {
        cg_set(cg, op->results[0], r);
        return true;
    }
    int64_t same = cg_equal_bits(cg, op->results[0], &l);
    for (int s = 0; s < r.n; s++) {
        if (s & same) {
            r.el[s] = r.el[s & ~same];
            continue;
        }
        LLVMValueRef x[8];
        for (int i = 0; i < n; i++)
            x[i] = in[i].el[in[i].n == 1 ? 0 : s];
        LLVMValueRef idx = op->kind == IR_ARANGE ? cg_elem_index(cg, &l, s) : NULL;
        r.el[s] = cg_elem_op(cg, op, x, idx);
    }
    cg_set(cg, op->results[0], r);
    return true;
}
