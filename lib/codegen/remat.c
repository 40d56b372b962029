/* codegen/remat.c: rematerialisation. A value built only from arange, constants,
 * scalars and pure elementwise/shape ops is recomputed element by element in
 * the layout that needs it, instead of crossing threads through shared
 * memory. This keeps index and mask arithmetic (`rows[:, None] * w +
 * cols[None, :]`) free of barriers. Bounded in size so code does not grow.
 * A value recomputed from a few small values that cannot be (a gathered
 * row index broadcast into a tile of pointers) reads those from shared
 * memory as it goes: the index vector crosses threads, not the tile. */
#include "codegen/cg.h"

/* Which values qualify is the layout pass's rule, so that the conversions it
 * plans as free are free. */
bool cg_can_remat(Cg *cg, const IrValue *v) { return pass_can_remat(v); }

static int64_t stride_of(const Type *t, int d)
{
    int64_t s = 1;
    for (int i = d + 1; i < t->rank; i++)
        s *= t->shape[i];
    return s;
}

/* An element index kept in two parts with no bit in common: t, which
 * depends on the thread, and the constant c of the register slot. Each
 * coordinate then splits the same way, so the elements of one thread share
 * the values computed from t and differ by constants: `rows >= cols` over
 * an mma tile needs a few row and column bases, not one index per element. */
typedef struct RIdx {
    LLVMValueRef t;
    int64_t c;
} RIdx;

/* Coordinate d of idx in shape t, moved to dim d of shape src (stride s). */
static RIdx coord_to(Cg *cg, RIdx idx, const Type *t, int d, int64_t s)
{
    int sh = cg_ilog2(stride_of(t, d)), to = cg_ilog2(s);
    int64_t m = t->shape[d] - 1;
    LLVMValueRef x = cg_coord(cg, idx.t, t, d);
    RIdx r = {to ? LLVMBuildShl(cg->b, x, cg_i32(cg, to), "") : x, (idx.c >> sh & m) << to};
    return r;
}

/* Index in the broadcast operand's shape of element idx of the result. */
static RIdx unbroadcast(Cg *cg, RIdx idx, const Type *dst, const Type *src)
{
    RIdx r = {NULL, 0};
    for (int d = 0; d < dst->rank; d++) {
        if (src->shape[d] == 1)
            continue;
        RIdx x = coord_to(cg, idx, dst, d, stride_of(src, d));
        r.t = r.t ? LLVMBuildOr(cg->b, r.t, x.t, "") : x.t;
        r.c |= x.c;
    }
    if (!r.t)
        r.t = cg_i32(cg, 0);
    return r;
}

/* A leaf staged in shared memory: its element idx, read back. */
static LLVMValueRef staged_elem(Cg *cg, const IrValue *v, int64_t off, RIdx idx)
{
    LLVMValueRef lin = idx.c ? LLVMBuildAdd(cg->b, idx.t, cg_i32(cg, idx.c), "") : idx.t;
    DType dt = v->type.dt;
    LLVMValueRef x = LLVMBuildLoad2(cg->b, cg_mem_type(cg, dt), cg_smem_addr(cg, off, lin, dt), "");
    return dt == DT_I1 ? LLVMBuildTrunc(cg->b, x, LLVMInt1TypeInContext(cg->ctx), "") : x;
}

static LLVMValueRef remat(Cg *cg, const IrValue *v, RIdx idx, const CgStaged *st)
{
    if (v->type.rank == 0)
        return cg_get(cg, v).el[0];
    for (int i = 0; st && i < st->n; i++)
        if (st->leaf[i] == v)
            return staged_elem(cg, v, st->off[i], idx);
    const IrOp *op = v->def;
    switch (op->kind) {
    case IR_CONST: return cg_const_elem(cg, v->type.dt, op->ival, op->fval);
    case IR_SPLAT: return cg_get(cg, op->operands[0]).el[0];
    case IR_EXPAND_DIMS:
    case IR_RESHAPE: /* row-major order is unchanged */
    case IR_CONVERT_LAYOUT:
    case IR_HINT: return remat(cg, op->operands[0], idx, st);
    case IR_BROADCAST: {
        const IrValue *in = op->operands[0];
        return remat(cg, in, unbroadcast(cg, idx, &v->type, &in->type), st);
    }
    default: {
        LLVMValueRef x[8];
        for (int i = 0; i < op->nops && i < 8; i++)
            x[i] = remat(cg, op->operands[i], idx, st);
        /* the parts share no bit: adding them is or-ing them, and leaves
         * the constant where LLVM folds it into the arange's offset */
        LLVMValueRef lin = idx.c ? LLVMBuildAdd(cg->b, idx.t, cg_i32(cg, idx.c), "") : idx.t;
        return cg_elem_op(cg, op, x, lin);
    }
    }
}

LLVMValueRef cg_remat_elem(Cg *cg, const IrValue *v, LLVMValueRef t, int64_t c, const CgStaged *st)
{
    RIdx idx = {t, c};
    return remat(cg, v, idx, st);
}
