/* codegen/gather.c: gather and histogram through shared memory. A gather
 * stores src whole, row-major, and each thread loads the result elements
 * it holds from where their indices point; a histogram zeroes i32 counters
 * and each element's owner adds 1 to its value's counter atomically. The
 * work is linear in the elements (the one-hot forms sema used to build
 * compared every element with every position or bin).
 * Assumes the layout pass put a gather's index in its result's layout and a
 * histogram's mask in its input's; guarantees an index outside src gives 0
 * and a value outside the bins is not counted, with no shared access out of
 * bounds, and ends each op in a barrier so the scratch can be reused. */
#include "codegen/cg.h"

/* Whether the integer element k (of dtype dt) lies in [0, n), as i1; *at
 * gets it as an i32 for addressing, 0 where it does not. Narrow elements
 * widen as their dtype reads (a negative signed one becomes a large
 * unsigned), so one unsigned compare rejects both sides. */
static LLVMValueRef index_in(Cg *cg, LLVMValueRef k, DType dt, int64_t n, LLVMValueRef *at)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    if (dtype_bits(dt) < 32)
        k = dtype_is_signed(dt) ? LLVMBuildSExt(cg->b, k, i32, "")
                                : LLVMBuildZExt(cg->b, k, i32, "");
    LLVMTypeRef t = LLVMTypeOf(k);
    LLVMValueRef ok =
        LLVMBuildICmp(cg->b, LLVMIntULT, k, LLVMConstInt(t, (unsigned long long)n, 0), "");
    if (LLVMGetIntTypeWidth(t) > 32)
        k = LLVMBuildTrunc(cg->b, k, i32, "");
    *at = LLVMBuildSelect(cg->b, ok, k, cg_i32(cg, 0), "");
    return ok;
}

/* The row-major index in src of the result element at linear index e (of
 * the index's shape) whose index is k: the dims after the axis are the
 * same in both shapes, so their part of e stays; the dims before it move
 * by the ratio of the two shapes' sizes along the axis. */
static LLVMValueRef src_index(Cg *cg, const IrOp *op, LLVMValueRef e, LLVMValueRef k)
{
    const Type *src = &op->operands[0]->type, *ix = &op->operands[1]->type;
    int64_t inner = cg_dim_stride(src, op->axis);
    LLVMValueRef r = LLVMBuildShl(cg->b, k, cg_i32(cg, cg_ilog2(inner)), "");
    if (inner > 1)
        r = LLVMBuildOr(cg->b, r, LLVMBuildAnd(cg->b, e, cg_i32(cg, inner - 1), ""), "");
    if (op->axis > 0) {
        int from = cg_ilog2(inner * ix->shape[op->axis]);
        int to = cg_ilog2(inner * src->shape[op->axis]);
        LLVMValueRef outer = LLVMBuildLShr(cg->b, e, cg_i32(cg, from), "");
        r = LLVMBuildOr(cg->b, r, LLVMBuildShl(cg->b, outer, cg_i32(cg, to), ""), "");
    }
    return r;
}

/* src to the scratch, a barrier, then each slot of the result loads its
 * element; out-of-range indices load element 0 and give 0 instead. */
static void emit_gather(Cg *cg, const IrOp *op)
{
    const IrValue *src = op->operands[0], *ix = op->operands[1], *res = op->results[0];
    DType dt = res->type.dt;
    CgLayout l = cg_layout(cg, res);
    CgVal k = cg_get(cg, ix), r = cg_val_new(cg, l.per_thread);
    if (k.n != r.n) {
        cg_internal(cg, op->span, "gather: the index is not in the result's layout");
        return;
    }
    cg_smem_put(cg, cg_get(cg, src), src, 0);
    cg_barrier(cg);
    LLVMValueRef zero = LLVMConstNull(cg_type(cg, dt));
    for (int s = 0; s < r.n; s++) {
        LLVMValueRef at, ok = index_in(cg, k.el[s], ix->type.dt, src->type.shape[op->axis], &at);
        LLVMValueRef e = src_index(cg, op, cg_elem_index(cg, &l, s), at);
        LLVMValueRef x = LLVMBuildLoad2(cg->b, cg_mem_type(cg, dt), cg_smem_addr(cg, 0, e, dt), "");
        if (dt == DT_I1)
            x = LLVMBuildTrunc(cg->b, x, LLVMInt1TypeInContext(cg->ctx), "");
        r.el[s] = LLVMBuildSelect(cg->b, ok, x, zero, "");
    }
    cg_barrier(cg); /* the scratch may be reused once every warp has read it */
    cg_set(cg, res, r);
}

/* One count where `ok` holds: a predicated reduction with no value
 * returned, instead of a branch around an atomic per element. */
static void count(Cg *cg, LLVMValueRef ok, LLVMValueRef counter)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMValueRef a[2] = {ok, LLVMBuildPtrToInt(cg->b, counter, i32, "")};
    LLVMTypeRef pt[2] = {LLVMInt1TypeInContext(cg->ctx), i32};
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 2, "@$0 red.shared.add.u32 [$1], 1;",
           "b,r,~{memory}", a);
}

/* Counters zeroed in the result's layout, a barrier, one add per counted
 * element, a barrier, the counters read back in the result's layout. An
 * element a layout holds in several threads (a block smaller than the CTA)
 * or in several registers is counted by its first copy. */
static void emit_histogram(Cg *cg, const IrOp *op)
{
    const IrValue *x = op->operands[0], *m = op->nops > 1 ? op->operands[1] : NULL;
    const IrValue *res = op->results[0];
    CgLayout lx = cg_layout(cg, x), lr = cg_layout(cg, res);
    CgVal v = cg_get(cg, x), live = m ? cg_get(cg, m) : v, zeros = cg_val_new(cg, lr.per_thread);
    for (int s = 0; s < zeros.n; s++)
        zeros.el[s] = cg_i32(cg, 0);
    cg_smem_put(cg, zeros, res, 0);
    cg_barrier(cg);
    LLVMValueRef owner = cg_owner(cg, &lx);
    int64_t copies = lin_reg_copies(&lx.lin);
    for (int s = 0; s < v.n; s++) {
        if (s & copies)
            continue;
        LLVMValueRef at, ok = index_in(cg, v.el[s], x->type.dt, op->ival, &at);
        ok = LLVMBuildAnd(cg->b, ok, owner, "");
        if (m)
            ok = LLVMBuildAnd(cg->b, ok, live.el[s], "");
        count(cg, ok, cg_smem_addr(cg, 0, at, DT_I32));
    }
    cg_barrier(cg);
    cg_set(cg, res, cg_smem_take(cg, res, 0, NULL, NULL));
    cg_barrier(cg);
}

bool cg_emit_gather(Cg *cg, const IrOp *op)
{
    switch (op->kind) {
    case IR_GATHER: emit_gather(cg, op); return true;
    case IR_HISTOGRAM: emit_histogram(cg, op); return true;
    default: return false;
    }
}
