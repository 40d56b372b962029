/* codegen/fp8.c: conversions to and from the fp8 dtypes. fp8e4nv and fp8e5
 * use PTX's packed cvt (sm_89 and up, PTX ISA 8.1 and later):
 * cvt.rn.f16x2.{e4m3x2,e5m2x2} to decode, cvt.rn.satfinite.{e4m3x2,e5m2x2}.
 * {f32,f16x2} to encode, two elements per instruction. fp8e4b15, Triton's
 * software format, has no cvt: its conversions are integer ops on fp16 bits,
 * two lanes of a <2 x i16> at a time, on any target. An fp8 value lives in an
 * i8 register. Assumes sema allowed only float <-> fp8 conversions (to
 * fp8e4b15 from fp16 and fp32 only) and cg_fp8_check has passed; guarantees
 * one rounding to nearest even (fp64 goes through fp32 rounded to odd, which
 * keeps the sticky bit) and the saturation of .satfinite, and for fp8e4b15
 * the bits of ir/fp8.c. */
#include <stdio.h>
#include <string.h>

#include "codegen/cg.h"

static const char *ptx_name(DType t) { return t == DT_F8E5 ? "e5m2x2" : "e4m3x2"; }

static LLVMValueRef asm_call(Cg *cg, LLVMTypeRef ret, LLVMTypeRef *pt, int np, const char *text,
                             const char *cons, LLVMValueRef *args)
{
    LLVMTypeRef ft = LLVMFunctionType(ret, pt, (unsigned)np, 0);
    LLVMValueRef ia = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), 0, 0,
                                       LLVMInlineAsmDialectATT, 0);
    return cg_returns(cg, LLVMBuildCall2(cg->b, ft, ia, args, (unsigned)np, ""));
}

/* Two fp8 bytes -> two halves (exact). Bytes are joined and split with
 * shifts: NVPTX moves a <2 x i8> bitcast through local memory. */
static void decode2(Cg *cg, DType t, LLVMValueRef x0, LLVMValueRef x1, LLVMValueRef out[2])
{
    LLVMTypeRef i16 = LLVMInt16TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMValueRef hi =
        LLVMBuildShl(cg->b, LLVMBuildZExt(cg->b, x1, i16, ""), LLVMConstInt(i16, 8, 0), "");
    LLVMValueRef in = LLVMBuildOr(cg->b, LLVMBuildZExt(cg->b, x0, i16, ""), hi, "");
    char text[48];
    snprintf(text, sizeof text, "cvt.rn.f16x2.%s $0, $1;", ptx_name(t));
    LLVMValueRef r = asm_call(cg, i32, &i16, 1, text, "=r,h", &in);
    LLVMValueRef h =
        LLVMBuildBitCast(cg->b, r, LLVMVectorType(LLVMHalfTypeInContext(cg->ctx), 2), "");
    out[0] = LLVMBuildExtractElement(cg->b, h, cg_i32(cg, 0), "");
    out[1] = LLVMBuildExtractElement(cg->b, h, cg_i32(cg, 1), "");
}

/* The 16-bit result of an encoding cvt -> two fp8 bytes, low byte first. */
static void split_bytes(Cg *cg, LLVMValueRef r, LLVMValueRef out[2])
{
    LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx);
    out[0] = LLVMBuildTrunc(cg->b, r, i8, "");
    out[1] = LLVMBuildTrunc(cg->b, LLVMBuildLShr(cg->b, r, LLVMConstInt(LLVMTypeOf(r), 8, 0), ""),
                            i8, "");
}

/* Two fp32 -> two fp8. The instruction's first source fills the high byte. */
static void encode_f32(Cg *cg, DType t, LLVMValueRef x0, LLVMValueRef x1, LLVMValueRef out[2])
{
    LLVMTypeRef f32 = LLVMFloatTypeInContext(cg->ctx);
    LLVMTypeRef pt[2] = {f32, f32};
    LLVMValueRef args[2] = {x1, x0};
    char text[64];
    snprintf(text, sizeof text, "cvt.rn.satfinite.%s.f32 $0, $1, $2;", ptx_name(t));
    split_bytes(cg, asm_call(cg, LLVMInt16TypeInContext(cg->ctx), pt, 2, text, "=h,f,f", args),
                out);
}

/* Two halves -> two fp8; the low half gives the low byte. */
static void encode_f16(Cg *cg, DType t, LLVMValueRef x0, LLVMValueRef x1, LLVMValueRef out[2])
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(LLVMHalfTypeInContext(cg->ctx), 2));
    v = LLVMBuildInsertElement(cg->b, v, x0, cg_i32(cg, 0), "");
    v = LLVMBuildInsertElement(cg->b, v, x1, cg_i32(cg, 1), "");
    LLVMValueRef in = LLVMBuildBitCast(cg->b, v, i32, "");
    char text[64];
    snprintf(text, sizeof text, "cvt.rn.satfinite.%s.f16x2 $0, $1;", ptx_name(t));
    split_bytes(cg, asm_call(cg, LLVMInt16TypeInContext(cg->ctx), &i32, 1, text, "=h,r", &in), out);
}

/* A float of any other width as fp32 with nothing lost for the rounding to
 * fp8 that follows: bf16 widens exactly, fp64 rounds to odd. */
static LLVMValueRef as_f32(Cg *cg, LLVMValueRef x, DType from)
{
    if (from == DT_F64)
        return cg_f64_to_f32_odd(cg, x);
    return cg_convert(cg, x, from, DT_F32);
}

/* ---- fp8e4b15 ------------------------------------------------------------------------ */

static LLVMValueRef splat2(LLVMTypeRef elem, unsigned long long v)
{
    LLVMValueRef c[2] = {LLVMConstInt(elem, v, 0), LLVMConstInt(elem, v, 0)};
    return LLVMConstVector(c, 2);
}

static LLVMValueRef pair(Cg *cg, LLVMTypeRef elem, LLVMValueRef x0, LLVMValueRef x1)
{
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(elem, 2));
    v = LLVMBuildInsertElement(cg->b, v, x0, cg_i32(cg, 0), "");
    return LLVMBuildInsertElement(cg->b, v, x1, cg_i32(cg, 1), "");
}

/* Two codes -> two halves (exact): the exponent fields share bias 15, so a
 * code's low 7 bits are the half's bits 7..13 and its bit 7 the sign. The
 * bytes widen one by one (NVPTX has no <2 x i8> registers). */
static void b15_decode2(Cg *cg, LLVMValueRef x0, LLVMValueRef x1, LLVMValueRef out[2])
{
    LLVMBuilderRef b = cg->b;
    LLVMTypeRef i16 = LLVMInt16TypeInContext(cg->ctx);
    LLVMValueRef c = pair(cg, i16, LLVMBuildZExt(b, x0, i16, ""), LLVMBuildZExt(b, x1, i16, ""));
    LLVMValueRef mag =
        LLVMBuildShl(b, LLVMBuildAnd(b, c, splat2(i16, 0x7f), ""), splat2(i16, 7), "");
    LLVMValueRef sign =
        LLVMBuildShl(b, LLVMBuildAnd(b, c, splat2(i16, 0x80), ""), splat2(i16, 8), "");
    LLVMValueRef h = LLVMBuildBitCast(b, LLVMBuildOr(b, mag, sign, ""),
                                      LLVMVectorType(LLVMHalfTypeInContext(cg->ctx), 2), "");
    for (int i = 0; i < 2; i++)
        out[i] = LLVMBuildExtractElement(b, h, cg_i32(cg, i), "");
}

/* The fp16 bits of two values (<2 x i16>) -> two codes, as Triton converts:
 * the magnitude clamped to 1.75 (0x3f00; NaN and infinities have larger
 * bits, so they clamp too), 7 fraction bits dropped with ties away from
 * zero by (m + 0x40) >> 7, the sign put back as bit 7. */
static void b15_encode_bits(Cg *cg, LLVMValueRef h, LLVMValueRef out[2])
{
    LLVMBuilderRef b = cg->b;
    LLVMTypeRef i16 = LLVMInt16TypeInContext(cg->ctx), v2 = LLVMVectorType(i16, 2);
    LLVMValueRef lim[2] = {LLVMBuildAnd(b, h, splat2(i16, 0x7fff), ""), splat2(i16, 0x3f00)};
    LLVMValueRef mag = cg_intrinsic(cg, "llvm.umin", &v2, 1, lim, 2);
    LLVMValueRef code =
        LLVMBuildLShr(b, LLVMBuildAdd(b, mag, splat2(i16, 0x40), ""), splat2(i16, 7), "");
    LLVMValueRef sign =
        LLVMBuildAnd(b, LLVMBuildLShr(b, h, splat2(i16, 8), ""), splat2(i16, 0x80), "");
    code = LLVMBuildOr(b, code, sign, "");
    for (int i = 0; i < 2; i++)
        out[i] = LLVMBuildTrunc(b, LLVMBuildExtractElement(b, code, cg_i32(cg, i), ""),
                                LLVMInt8TypeInContext(cg->ctx), "");
}

/* Two fp32 -> their fp16 bits rounded toward zero, Triton's first step.
 * Magnitudes clamp to 1.75 first, as the encoding's clamp would (so NaN
 * and infinities need no care); fptrunc rounds to nearest, and where that
 * went up, the half below is the truncation. */
static LLVMValueRef f32_to_f16_bits_rz(Cg *cg, LLVMValueRef x0, LLVMValueRef x1)
{
    LLVMBuilderRef b = cg->b;
    LLVMTypeRef i16 = LLVMInt16TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMTypeRef f32 = LLVMFloatTypeInContext(cg->ctx), vi32 = LLVMVectorType(i32, 2);
    LLVMTypeRef vf32 = LLVMVectorType(f32, 2), vi16 = LLVMVectorType(i16, 2);
    LLVMValueRef u = LLVMBuildBitCast(b, pair(cg, f32, x0, x1), vi32, "");
    LLVMValueRef lim[2] = {LLVMBuildAnd(b, u, splat2(i32, 0x7fffffff), ""),
                           splat2(i32, 0x3fe00000)};
    LLVMValueRef a = LLVMBuildBitCast(b, cg_intrinsic(cg, "llvm.umin", &vi32, 1, lim, 2), vf32, "");
    LLVMValueRef h = LLVMBuildFPTrunc(b, a, LLVMVectorType(LLVMHalfTypeInContext(cg->ctx), 2), "");
    LLVMValueRef up = LLVMBuildFCmp(b, LLVMRealOGT, LLVMBuildFPExt(b, h, vf32, ""), a, "");
    LLVMValueRef bits =
        LLVMBuildSub(b, LLVMBuildBitCast(b, h, vi16, ""), LLVMBuildZExt(b, up, vi16, ""), "");
    LLVMValueRef sign =
        LLVMBuildAnd(b, LLVMBuildTrunc(b, LLVMBuildLShr(b, u, splat2(i32, 16), ""), vi16, ""),
                     splat2(i16, 0x8000), "");
    return LLVMBuildOr(b, bits, sign, "");
}

/* fp8e4b15 from fp16 or fp32, or to any float through fp16, which holds
 * its values exactly. */
static void b15_convert2(Cg *cg, LLVMValueRef x0, LLVMValueRef x1, DType from, DType to,
                         LLVMValueRef out[2])
{
    if (to == DT_F8E4B15) {
        LLVMTypeRef vi16 = LLVMVectorType(LLVMInt16TypeInContext(cg->ctx), 2);
        LLVMValueRef bits = from == DT_F16
            ? LLVMBuildBitCast(cg->b, pair(cg, LLVMHalfTypeInContext(cg->ctx), x0, x1), vi16, "")
            : f32_to_f16_bits_rz(cg, x0, x1);
        b15_encode_bits(cg, bits, out);
        return;
    }
    LLVMValueRef h[2];
    b15_decode2(cg, x0, x1, h);
    if (dtype_is_fp8(to)) {
        encode_f16(cg, to, h[0], h[1], out);
        return;
    }
    for (int i = 0; i < 2; i++)
        out[i] = cg_convert(cg, h[i], DT_F16, to);
}

/* ---- either kind -------------------------------------------------------------------- */

void cg_fp8_convert2(Cg *cg, LLVMValueRef x0, LLVMValueRef x1, DType from, DType to,
                     LLVMValueRef out[2])
{
    if (from == DT_F8E4B15 || to == DT_F8E4B15) {
        b15_convert2(cg, x0, x1, from, to, out);
        return;
    }
    if (dtype_is_fp8(from)) {
        LLVMValueRef h[2];
        decode2(cg, from, x0, x1, h);
        if (dtype_is_fp8(to)) {
            encode_f16(cg, to, h[0], h[1], out);
            return;
        }
        for (int i = 0; i < 2; i++)
            out[i] = cg_convert(cg, h[i], DT_F16, to);
        return;
    }
    if (from == DT_F16) {
        encode_f16(cg, to, x0, x1, out);
        return;
    }
    encode_f32(cg, to, as_f32(cg, x0, from), as_f32(cg, x1, from), out);
}

/* fp8e4nv and fp8e5, which need the hardware's cvt and ISA 8.4. */
static bool hw_fp8(DType t) { return dtype_is_fp8(t) && t != DT_F8E4B15; }

/* Walk state of cg_fp8_check. */
typedef struct Fp8Check {
    Cg *cg;
    bool ok;
} Fp8Check;

static bool check_op(IrOp *op, void *ctx)
{
    Fp8Check *c = ctx;
    DType t = DT_VOID;
    if (op->kind == IR_CAST) {
        DType a = op->operands[0]->type.dt, r = op->results[0]->type.dt;
        t = hw_fp8(a) ? a : r;
    } else if (op->kind == IR_DOT) {
        t = op->operands[0]->type.dt;
    }
    if (!hw_fp8(t) || c->cg->sm >= 89)
        return true;
    if (op->kind == IR_DOT)
        cg_error(c->cg, op->span,
                 "tl.dot with %s operands needs sm_89 or newer; the target "
                 "is sm_%d",
                 dtype_name(t), c->cg->sm);
    else
        cg_error(c->cg, op->span, "%s conversions need sm_89 or newer; the target is sm_%d",
                 dtype_name(t), c->cg->sm);
    c->ok = false;
    return false; /* one message says it */
}

bool cg_fp8_check(Cg *cg)
{
    Fp8Check c = {cg, true};
    ir_walk(cg->f->body, check_op, &c);
    return c.ok;
}

static bool find_fp8(IrOp *op, void *ctx)
{
    bool *found = ctx;
    for (int i = 0; i < op->nres && !*found; i++)
        *found = hw_fp8(op->results[i]->type.dt);
    return !*found;
}

bool cg_fp8_used(const IrFunc *f)
{
    for (int i = 0; i < f->nparams; i++)
        if (hw_fp8(f->params[i].type.elem) || hw_fp8(f->params[i].type.dt))
            return true;
    bool found = false;
    ir_walk(f->body, find_fp8, &found);
    return found;
}
