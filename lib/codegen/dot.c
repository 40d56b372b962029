/* codegen/dot.c: dot(a, b, acc). With an mma result layout the tensor-core
 * path runs (mma.c); otherwise FMA: both operands go to shared memory and
 * every thread computes the accumulator elements it holds, looping over K.
 * Batched (3-D) products take this path, each element reading its batch.
 * Floats multiply-add in fp32 (fp64 for fp64), integers in i32/i64; tf32 and tf32x3
 * on this path are computed as plain fp32. */
#include "codegen/cg.h"

/* The dtype the products are accumulated in. */
static DType compute_dtype(DType acc)
{
    if (dtype_is_float(acc))
        return acc == DT_F64 ? DT_F64 : DT_F32;
    return dtype_bits(acc) > 32 ? DT_I64 : DT_I32;
}

CgVal cg_dot_acc(Cg *cg, const IrOp *op)
{
    CgVal acc = cg_get(cg, op->operands[2]);
    if (op->nops < 4)
        return acc;
    LLVMValueRef fresh = cg_get(cg, op->operands[3]).el[0];
    CgVal r = cg_val_new(cg, acc.n);
    for (int i = 0; i < acc.n; i++)
        r.el[i] =
            LLVMBuildSelect(cg->b, fresh, LLVMConstNull(LLVMTypeOf(acc.el[i])), acc.el[i], "");
    return r;
}

bool cg_emit_dot(Cg *cg, const IrOp *op)
{
    if (op->kind != IR_DOT)
        return false;
    if (op->results[0]->layout && op->results[0]->layout->kind == LY_MMA) {
        cg_emit_mma(cg, op);
        return true;
    }
    Type at = op->operands[0]->type, bt = op->operands[1]->type, ct = op->results[0]->type;
    int rank = ct.rank;
    if (rank < 2 || rank > 3 || at.rank != rank || bt.rank != rank) {
        cg_error(cg, op->span, "internal error: dot of %d-D blocks", rank);
        return true;
    }
    /* a row of the result is a row of a across batches (e >> log2 N), so
     * only b's index needs the batch: (e >> log2 (M N)) K N */
    int64_t K = at.shape[rank - 1], N = bt.shape[rank - 1], MN = ct.shape[rank - 2] * N;
    DType cd = compute_dtype(ct.dt);
    int64_t boff = (type_numel(at) * cg_mem_bytes(at.dt) + 15) / 16 * 16;
    cg_smem_put(cg, cg_get(cg, op->operands[0]), op->operands[0], 0);
    cg_smem_put(cg, cg_get(cg, op->operands[1]), op->operands[1], boff);
    cg_barrier(cg);
    CgVal acc = cg_dot_acc(cg, op);
    CgLayout l = cg_layout(cg, op->results[0]);
    LLVMValueRef *m = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)l.per_thread);
    LLVMValueRef *n = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)l.per_thread);
    LLVMValueRef *init = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)l.per_thread);
    LLVMValueRef *phi = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)l.per_thread);
    LLVMValueRef *next = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)l.per_thread);
    for (int s = 0; s < l.per_thread; s++) {
        LLVMValueRef e = cg_elem_index(cg, &l, s);
        m[s] = LLVMBuildLShr(cg->b, e, cg_i32(cg, cg_ilog2(N)), "");
        n[s] = LLVMBuildAnd(cg->b, e, cg_i32(cg, N - 1), "");
        if (rank == 3) {
            LLVMValueRef bat = LLVMBuildLShr(cg->b, e, cg_i32(cg, cg_ilog2(MN)), "");
            LLVMValueRef boff_b = LLVMBuildShl(cg->b, bat, cg_i32(cg, cg_ilog2(K * N)), "");
            n[s] = LLVMBuildAdd(cg->b, n[s], boff_b, "");
        }
        init[s] = cg_convert(cg, acc.el[acc.n == 1 ? 0 : s], ct.dt, cd);
    }
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef body = cg_new_bb(cg, "dot.k");
    LLVMBasicBlockRef done = cg_new_bb(cg, "dot.done");
    LLVMBuildBr(cg->b, body);
    LLVMPositionBuilderAtEnd(cg->b, body);
    LLVMValueRef k = LLVMBuildPhi(cg->b, LLVMInt32TypeInContext(cg->ctx), "k");
    for (int s = 0; s < l.per_thread; s++)
        phi[s] = LLVMBuildPhi(cg->b, cg_type(cg, cd), "");
    LLVMTypeRef ft = cg_type(cg, cd);
    for (int s = 0; s < l.per_thread; s++) {
        LLVMValueRef ai =
            LLVMBuildAdd(cg->b, LLVMBuildShl(cg->b, m[s], cg_i32(cg, cg_ilog2(K)), ""), k, "");
        LLVMValueRef bi =
            LLVMBuildAdd(cg->b, LLVMBuildShl(cg->b, k, cg_i32(cg, cg_ilog2(N)), ""), n[s], "");
        LLVMValueRef av =
            LLVMBuildLoad2(cg->b, cg_mem_type(cg, at.dt), cg_smem_addr(cg, 0, ai, at.dt), "");
        LLVMValueRef bv =
            LLVMBuildLoad2(cg->b, cg_mem_type(cg, bt.dt), cg_smem_addr(cg, boff, bi, bt.dt), "");
        av = cg_convert(cg, av, at.dt, cd);
        bv = cg_convert(cg, bv, bt.dt, cd);
        if (dtype_is_float(cd)) {
            LLVMValueRef args[3] = {av, bv, phi[s]};
            next[s] = cg_intrinsic(cg, "llvm.fma", &ft, 1, args, 3);
        } else {
            next[s] = LLVMBuildAdd(cg->b, LLVMBuildMul(cg->b, av, bv, ""), phi[s], "");
        }
    }
    LLVMValueRef k1 = LLVMBuildAdd(cg->b, k, cg_i32(cg, 1), "");
    LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntULT, k1, cg_i32(cg, K), ""), body, done);
    LLVMBasicBlockRef from[2] = {pre, body};
    LLVMValueRef kin[2] = {cg_i32(cg, 0), k1};
    LLVMAddIncoming(k, kin, from, 2);
    for (int s = 0; s < l.per_thread; s++) {
        LLVMValueRef in[2] = {init[s], next[s]};
        LLVMAddIncoming(phi[s], in, from, 2);
    }
    LLVMPositionBuilderAtEnd(cg->b, done);
    cg_barrier(cg);
    CgVal r = cg_val_new(cg, l.per_thread);
    for (int s = 0; s < l.per_thread; s++)
        r.el[s] = cg_convert(cg, next[s], cd, ct.dt);
    cg_set(cg, op->results[0], r);
    return true;
}
