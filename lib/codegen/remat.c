/* codegen/remat.c: rematerialisation. A value built only from arange, constants,
 * scalars and pure elementwise/shape ops is recomputed element by element in
 * the layout that needs it, instead of crossing threads through shared
 * memory. This keeps index and mask arithmetic (`rows[:, None] * w +
 * cols[None, :]`) free of barriers. Bounded in size so code does not grow. */
#include "codegen/cg.h"

/* Which values qualify is the layout pass's rule, so that the conversions it
 * plans as free are free. */
bool cg_can_remat(Cg *cg, const IrValue *v)
{
    return pass_can_remat(v);
}

static int64_t stride_of(const Type *t, int d)
{
    int64_t s = 1;
    for (int i = d + 1; i < t->rank; i++)
        s *= t->shape[i];
    return s;
}

/* Index in the broadcast operand's shape of element idx of the result. */
static LLVMValueRef unbroadcast(Cg *cg, LLVMValueRef idx, const Type *dst, const Type *src)
{
    LLVMValueRef r = cg_i32(cg, 0);
    for (int d = 0; d < dst->rank; d++) {
        if (src->shape[d] == 1)
            continue;
        LLVMValueRef c = cg_coord(cg, idx, dst, d);
        r = LLVMBuildOr(cg->b, r, LLVMBuildShl(cg->b, c, cg_i32(cg, cg_ilog2(stride_of(src, d))), ""), "");
    }
    return r;
}

LLVMValueRef cg_remat_elem(Cg *cg, const IrValue *v, LLVMValueRef idx)
{
    if (v->type.rank == 0)
        return cg_get(cg, v).el[0];
    const IrOp *op = v->def;
    switch (op->kind) {
    case IR_CONST:
        return cg_const_elem(cg, v->type.dt, op->ival, op->fval);
    case IR_SPLAT:
        return cg_get(cg, op->operands[0]).el[0];
    case IR_EXPAND_DIMS:
    case IR_RESHAPE: /* row-major order is unchanged */
    case IR_CONVERT_LAYOUT:
        return cg_remat_elem(cg, op->operands[0], idx);
    case IR_BROADCAST: {
        const IrValue *in = op->operands[0];
        return cg_remat_elem(cg, in, unbroadcast(cg, idx, &v->type, &in->type));
    }
    default: {
        LLVMValueRef x[8];
        for (int i = 0; i < op->nops && i < 8; i++)
            x[i] = cg_remat_elem(cg, op->operands[i], idx);
        return cg_elem_op(cg, op, x, idx);
    }
    }
}
