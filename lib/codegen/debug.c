/* codegen/debug.c: device_print through vprintf and device_assert through
 * __assertfail, as CUDA's printf/assert do. Each element is printed (or
 * checked) once, by the thread holding its first copy; a line reads
 * "pid (x, y, z) idx (  i,  j) prefix: value" in Triton's format (each index
 * padded to its dim's digits, hex values to their type's; sema gives the
 * prefix Triton's spaces and colon). */
#include <stdio.h>
#include <string.h>

#include "codegen/cg.h"

static const char *spec(Cg *cg, DType dt, bool hex)
{
    if (dt == DT_PTR)
        return "%p";
    int digits = dtype_bits(dt) / 4;
    if (hex)
        return arena_printf(cg->a, "0x%%0%d%sx", digits ? digits : 1,
                            dtype_bits(dt) == 64 ? "ll" : "");
    if (dtype_is_float(dt))
        return "%f";
    if (dtype_bits(dt) == 64)
        return dtype_is_signed(dt) ? "%lld" : "%llu";
    return dtype_is_signed(dt) ? "%d" : "%u";
}

/* The value as vprintf wants it: doubles, 32- or 64-bit integers. */
static LLVMValueRef vararg(Cg *cg, LLVMValueRef v, DType dt, bool hex)
{
    LLVMBuilderRef B = cg->b;
    int bits = dtype_bits(dt);
    if (dtype_is_float(dt) && hex) {
        v = LLVMBuildBitCast(B, v, LLVMIntTypeInContext(cg->ctx, (unsigned)bits), "");
        return bits == 64 ? v : LLVMBuildZExt(B, v, LLVMInt32TypeInContext(cg->ctx), "");
    }
    if (dtype_is_float(dt))
        return cg_convert(cg, v, dt, DT_F64);
    if (dt == DT_PTR || bits == 64)
        return v;
    return cg_convert(cg, v, dt, dtype_is_signed(dt) ? DT_I32 : DT_U32);
}

static void call_vprintf(Cg *cg, const char *fmt, LLVMValueRef *args, int n)
{
    LLVMTypeRef ts[TK_MAX_RANK + 8];
    for (int i = 0; i < n; i++)
        ts[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef st = LLVMStructTypeInContext(cg->ctx, ts, (unsigned)n, 0);
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(cg->b);
    LLVMPositionBuilderBefore(cg->b, LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(cg->fn)));
    LLVMValueRef buf = LLVMBuildAlloca(cg->b, st, "printbuf");
    LLVMPositionBuilderAtEnd(cg->b, cur);
    for (int i = 0; i < n; i++)
        LLVMBuildStore(cg->b, args[i], LLVMBuildStructGEP2(cg->b, st, buf, (unsigned)i, ""));
    LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
    LLVMTypeRef pt[2] = {ptr, ptr};
    LLVMValueRef a[2] = {cg_cstring(cg, fmt), buf};
    cg_call_fn(cg, "vprintf", LLVMInt32TypeInContext(cg->ctx), pt, 2, a, 2, false);
}

/* Runs the code that follows only where pred holds; returns the join block. */
static LLVMBasicBlockRef guard(Cg *cg, LLVMValueRef pred, const char *name)
{
    LLVMBasicBlockRef then_bb = cg_new_bb(cg, name);
    LLVMBasicBlockRef join = cg_new_bb(cg, "debug.cont");
    LLVMBuildCondBr(cg->b, pred, then_bb, join);
    LLVMPositionBuilderAtEnd(cg->b, then_bb);
    return join;
}

/* The prefix as printf text: each '%' doubled. */
static const char *escaped(Cg *cg, const char *p)
{
    StrBuf b;
    sb_init(&b);
    for (; *p; p++)
        sb_printf(&b, *p == '%' ? "%%%%" : "%c", *p);
    char *r = arena_strdup(cg->a, b.data ? b.data : "");
    sb_free(&b);
    return r;
}

static void emit_print(Cg *cg, const IrOp *op)
{
    bool hex = op->flags & IRF_HEX;
    const char *prefix = escaped(cg, op->str ? op->str : "");
    LLVMValueRef pid[3] = {cg_sreg(cg, "ctaid.x"), cg_sreg(cg, "ctaid.y"), cg_sreg(cg, "ctaid.z")};
    if (op->nops == 0) {
        char *fmt = arena_printf(cg->a, "pid (%%u, %%u, %%u)%s\n", prefix);
        call_vprintf(cg, fmt, pid, 3);
        return;
    }
    for (int k = 0; k < op->nops; k++) {
        const IrValue *v = op->operands[k];
        Type t = v->type;
        CgLayout l = cg_layout(cg, v);
        StrBuf f;
        sb_init(&f);
        sb_puts(&f, "pid (%u, %u, %u) idx (");
        for (int d = 0; d < t.rank; d++) {
            int w = ir_index_digits(t.shape[d]);
            sb_printf(&f, w > 1 ? "%s%%%du" : "%s%%u", d ? ", " : "", w);
        }
        sb_printf(&f, ")%s", prefix);
        if (op->nops > 1)
            sb_printf(&f, "(operand %d) ", k);
        sb_printf(&f, "%s\n", spec(cg, t.dt, hex));
        char *fmt = arena_strdup(cg->a, f.data ? f.data : "");
        sb_free(&f);
        CgVal x = cg_get(cg, v);
        for (int s = 0; s < x.n; s++) {
            LLVMBasicBlockRef join = NULL;
            if (l.copies)
                join = guard(cg, cg_owner(cg, &l), "print");
            LLVMValueRef args[TK_MAX_RANK + 8];
            int n = 0;
            for (int i = 0; i < 3; i++)
                args[n++] = pid[i];
            LLVMValueRef e = cg_elem_index(cg, &l, s);
            for (int d = 0; d < t.rank; d++)
                args[n++] = cg_coord(cg, e, &t, d);
            args[n++] = vararg(cg, x.el[s], t.dt, hex);
            call_vprintf(cg, fmt, args, n);
            if (join) {
                LLVMBuildBr(cg->b, join);
                LLVMPositionBuilderAtEnd(cg->b, join);
            }
        }
    }
}

static void emit_assert(Cg *cg, const IrOp *op)
{
    const IrValue *c = op->operands[0];
    CgLayout l = cg_layout(cg, c);
    CgVal x = cg_get(cg, c);
    LLVMValueRef bad = LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 0, 0);
    for (int s = 0; s < x.n; s++) {
        LLVMValueRef v = cg_convert(cg, x.el[s], c->type.dt, DT_I1);
        bad = LLVMBuildOr(cg->b, bad, LLVMBuildNot(cg->b, v, ""), "");
    }
    if (l.copies)
        bad = LLVMBuildAnd(cg->b, bad, cg_owner(cg, &l), "");
    LLVMBasicBlockRef join = guard(cg, bad, "assert.fail");
    LLVMTypeRef ptr = LLVMPointerTypeInContext(cg->ctx, 0);
    LLVMTypeRef pt[5] = {ptr, ptr, LLVMInt32TypeInContext(cg->ctx), ptr,
                         LLVMInt64TypeInContext(cg->ctx)};
    LLVMValueRef a[5] = {cg_cstring(cg, op->str ? op->str : "assertion failed"),
                         cg_cstring(cg,
                                    op->str2         ? op->str2
                                        : cg->f->src ? cg->f->src->name
                                                     : "?"),
                         cg_i32(cg, op->ival), cg_cstring(cg, cg->f->name), cg_i64(cg, 1)};
    cg_call_fn(cg, "__assertfail", LLVMVoidTypeInContext(cg->ctx), pt, 5, a, 5, false);
    LLVMBuildBr(cg->b, join);
    LLVMPositionBuilderAtEnd(cg->b, join);
}

bool cg_emit_debug(Cg *cg, const IrOp *op)
{
    switch (op->kind) {
    case IR_PRINT: emit_print(cg, op); return true;
    case IR_ASSERT: emit_assert(cg, op); return true;
    default: return false;
    }
}
