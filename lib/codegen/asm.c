/* codegen/asm.c: tl.inline_asm_elementwise as LLVM inline asm, and the grid
 * dependency controls. Each thread calls the asm once per `pack` of its
 * elements: every argument contributes registers of up to 32 bits packed
 * with consecutive elements (as Triton packs them), then every result is
 * read back the same way. Values move into registers by their bits
 * (widened to the constraint's width), so "=r" holds an fp32 as ptxas
 * expects. Assumes ir_asm_regs accepted the op (sema and the verifier
 * check it). Where a thread's elements are not a whole number of packs
 * (pack=4 over a layout giving each thread 2), the last call's missing
 * arguments are undefined and its extra results dropped, as Triton pads. */
#include <string.h>

#include "codegen/cg.h"

static int letter_bits(char c)
{
    return c == 'h' ? 16 : c == 'r' || c == 'f' || c == 'n' ? 32 : 64;
}

static LLVMTypeRef reg_type(Cg *cg, char c)
{
    if (c == 'f')
        return LLVMFloatTypeInContext(cg->ctx);
    if (c == 'd')
        return LLVMDoubleTypeInContext(cg->ctx);
    return LLVMIntTypeInContext(cg->ctx, (unsigned)letter_bits(c));
}

/* One register from `per` elements of dt. */
static LLVMValueRef to_reg(Cg *cg, const LLVMValueRef *el, int per, DType dt, char c)
{
    LLVMBuilderRef b = cg->b;
    int bits = dtype_bits(dt) * per;
    LLVMTypeRef it = LLVMIntTypeInContext(cg->ctx, (unsigned)bits);
    LLVMValueRef v = el[0];
    if (per > 1) {
        v = LLVMGetUndef(LLVMVectorType(cg_type(cg, dt), (unsigned)per));
        for (int q = 0; q < per; q++)
            v = LLVMBuildInsertElement(b, v, el[q], cg_i32(cg, q), "");
    }
    v = dt == DT_PTR ? LLVMBuildPtrToInt(b, v, it, "") : LLVMBuildBitCast(b, v, it, "");
    if (bits < letter_bits(c))
        v = LLVMBuildZExt(b, v, LLVMIntTypeInContext(cg->ctx, (unsigned)letter_bits(c)), "");
    return c == 'f' || c == 'd' ? LLVMBuildBitCast(b, v, reg_type(cg, c), "") : v;
}

/* The `per` elements of dt one result register holds, into out. */
static void from_reg(Cg *cg, LLVMValueRef v, char c, int per, DType dt, LLVMValueRef *out)
{
    LLVMBuilderRef b = cg->b;
    int bits = dtype_bits(dt) * per;
    LLVMTypeRef it = LLVMIntTypeInContext(cg->ctx, (unsigned)bits);
    if (c == 'f' || c == 'd')
        v = LLVMBuildBitCast(b, v, LLVMIntTypeInContext(cg->ctx, (unsigned)letter_bits(c)), "");
    if (bits < letter_bits(c))
        v = LLVMBuildTrunc(b, v, it, "");
    else if (bits > letter_bits(c))
        v = LLVMBuildZExt(b, v, it, ""); /* an output the asm never writes (ir_asm_regs) */
    if (per == 1) {
        out[0] = dt == DT_PTR ? LLVMBuildIntToPtr(b, v, cg_type(cg, dt), "")
                              : LLVMBuildBitCast(b, v, cg_type(cg, dt), "");
        return;
    }
    v = LLVMBuildBitCast(b, v, LLVMVectorType(cg_type(cg, dt), (unsigned)per), "");
    for (int q = 0; q < per; q++)
        out[q] = LLVMBuildExtractElement(b, v, cg_i32(cg, q), "");
}

/* The inline asm value: registers of regs, outputs as one value or a struct. */
static LLVMValueRef asm_fn(Cg *cg, const IrOp *op, const IrAsmRegs *r, LLVMTypeRef *ft)
{
    LLVMTypeRef out[IR_ASM_MAX_REGS], in[IR_ASM_MAX_REGS];
    for (int k = 0; k < r->nout + r->nin; k++)
        *(k < r->nout ? &out[k] : &in[k - r->nout]) = reg_type(cg, r->letter[k]);
    LLVMTypeRef ret =
        r->nout == 1 ? out[0] : LLVMStructTypeInContext(cg->ctx, out, (unsigned)r->nout, 0);
    *ft = LLVMFunctionType(ret, in, (unsigned)r->nin, 0);
    return LLVMGetInlineAsm(*ft, op->str, strlen(op->str), op->str2, strlen(op->str2),
                            !(op->flags & IRF_PURE), 0, LLVMInlineAsmDialectATT, 0);
}

/* Element e of an argument with n elements per thread (one: a scalar,
 * the same in every call); past n, a pad. */
static LLVMValueRef arg_elem(Cg *cg, const CgVal *x, int e, int n, DType dt)
{
    return x->n == 1 ? x->el[0] : e < n ? x->el[e] : LLVMGetUndef(cg_type(cg, dt));
}

/* One call on slots s..s+pack-1 of every argument and result (of n a
 * thread). */
static void call_pack(Cg *cg, const IrOp *op, const IrAsmRegs *r, LLVMTypeRef ft, LLVMValueRef ia,
                      const CgVal *in, CgVal *res, int s, int n)
{
    int pack = (int)op->ival, k = 0;
    LLVMValueRef args[IR_ASM_MAX_REGS];
    for (int i = 0; i < op->nops; i++) {
        DType dt = op->operands[i]->type.dt;
        int per = ir_asm_per_reg(dt, pack);
        for (int j = 0; j < pack; j += per, k++) {
            LLVMValueRef el[16];
            for (int q = 0; q < per; q++)
                el[q] = arg_elem(cg, &in[i], s + j + q, n, dt);
            args[k] = to_reg(cg, el, per, dt, r->letter[r->nout + k]);
            /* LLVM takes an 'n' operand only as a constant (it checks with
             * assertions): sema saw one, a layout change must not hide it */
            if (r->letter[r->nout + k] == 'n' && !LLVMIsAConstantInt(args[k])) {
                cg_internal(cg, op->span, "inline asm: immediate operand $%d is not a constant",
                            r->nout + k);
                return;
            }
        }
    }
    LLVMValueRef call = LLVMBuildCall2(cg->b, ft, ia, args, (unsigned)r->nin, "");
    k = 0;
    for (int i = 0; i < op->nres; i++) {
        DType dt = op->results[i]->type.dt;
        int per = ir_asm_per_reg(dt, pack);
        for (int j = 0; j < pack; j += per, k++) {
            LLVMValueRef v =
                r->nout == 1 ? call : LLVMBuildExtractValue(cg->b, call, (unsigned)k, "");
            LLVMValueRef out[16];
            from_reg(cg, v, r->letter[k], per, dt, out);
            for (int q = 0; q < per && s + j + q < n; q++)
                res[i].el[s + j + q] = out[q];
        }
    }
}

static void emit_inline_asm(Cg *cg, const IrOp *op)
{
    IrAsmRegs r;
    char why[192];
    if (!ir_asm_regs(op, &r, why, sizeof why)) {
        cg_internal(cg, op->span, "inline asm: %s", why);
        return;
    }
    int pack = (int)op->ival, n = cg_layout(cg, op->results[0]).per_thread;
    CgVal in[IR_ASM_MAX_REGS], res[IR_ASM_MAX_REGS];
    for (int i = 0; i < op->nops; i++) {
        in[i] = cg_get(cg, op->operands[i]);
        if (in[i].n != n && in[i].n != 1) {
            cg_internal(cg, op->span,
                        "inline asm argument %d has %d elements per thread, the "
                        "result %d",
                        i, in[i].n, n);
            return;
        }
    }
    for (int i = 0; i < op->nres; i++)
        res[i] = cg_val_new(cg, n);
    LLVMTypeRef ft;
    LLVMValueRef ia = asm_fn(cg, op, &r, &ft);
    for (int s = 0; s < n && !cg->failed; s += pack)
        call_pack(cg, op, &r, ft, ia, in, res, s, n);
    for (int i = 0; i < op->nres; i++)
        cg_set(cg, op->results[i], res[i]);
}

/* griddepcontrol (PTX ISA 7.8, sm_90): the memory clobber keeps loads of
 * the previous grid's results after the wait. */
static void emit_gdc(Cg *cg, const IrOp *op)
{
    const char *name = op->sub ? "gdc_launch_dependents" : "gdc_wait";
    if (cg->sm < 90) {
        cg_error(cg, op->span, "%s() needs sm_90 or newer (griddepcontrol); the target is %s", name,
                 cg->o->arch);
        return;
    }
    const char *text = op->sub ? "griddepcontrol.launch_dependents;" : "griddepcontrol.wait;";
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), NULL, 0, text, "~{memory}", NULL);
}

bool cg_emit_asm(Cg *cg, const IrOp *op)
{
    if (op->kind == IR_INLINE_ASM)
        emit_inline_asm(cg, op);
    else if (op->kind == IR_GDC)
        emit_gdc(cg, op);
    else
        return false;
    return true;
}
