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

/* The FMA path's plan. A thread's accumulator elements form rows x
 * columns: its linear index is the thread's part OR the slot's (disjoint
 * bits), and the row and column keys below are bitwise maps of it, so each
 * slot's key is the thread's key plus a constant. Each K step loads every
 * distinct row of A and column of B once and multiplies each pair the
 * thread holds, as an outer product. */
typedef struct FmaPlan {
    int64_t K, N, MN, boff;
    int rank, u; /* u: K steps an iteration, A read as one u-vector a row */
    DType cd;
    int nr, nc;              /* distinct rows, columns */
    LLVMValueRef *row, *col; /* A index of (row, k = 0), B index of (k = 0, col) */
    int *row_of, *col_of;    /* by slot */
} FmaPlan;

/* A's index of (row, 0): the rows over batches, times K. */
static int64_t row_key(const FmaPlan *p, int64_t e)
{
    return (e >> cg_ilog2(p->N)) << cg_ilog2(p->K);
}

/* B's index of (0, col): the column, plus the batch times K N. */
static int64_t col_key(const FmaPlan *p, int64_t e)
{
    int64_t c = e & (p->N - 1);
    if (p->rank == 3)
        c |= (e >> cg_ilog2(p->MN)) << cg_ilog2(p->K * p->N);
    return c;
}

/* Index of key in keys[0..*n), appended when new. */
static int key_slot(int64_t *keys, int *n, int64_t key)
{
    for (int i = 0; i < *n; i++)
        if (keys[i] == key)
            return i;
    keys[*n] = key;
    return (*n)++;
}

/* The thread's part of a key: the same bitwise map built in LLVM. */
static LLVMValueRef thread_key(Cg *cg, const FmaPlan *p, LLVMValueRef t, bool row)
{
    LLVMBuilderRef b = cg->b;
    if (row)
        return LLVMBuildShl(b, LLVMBuildLShr(b, t, cg_i32(cg, cg_ilog2(p->N)), ""),
                            cg_i32(cg, cg_ilog2(p->K)), "");
    LLVMValueRef c = LLVMBuildAnd(b, t, cg_i32(cg, p->N - 1), "");
    if (p->rank == 3) {
        LLVMValueRef bat = LLVMBuildLShr(b, t, cg_i32(cg, cg_ilog2(p->MN)), "");
        c = LLVMBuildOr(b, c, LLVMBuildShl(b, bat, cg_i32(cg, cg_ilog2(p->K * p->N)), ""), "");
    }
    return c;
}

static void fma_plan(Cg *cg, FmaPlan *p, const CgLayout *l)
{
    int n = l->per_thread;
    int64_t *rk = cg_alloc(cg, sizeof(int64_t) * (size_t)n);
    int64_t *ck = cg_alloc(cg, sizeof(int64_t) * (size_t)n);
    p->row_of = cg_alloc(cg, sizeof(int) * (size_t)n);
    p->col_of = cg_alloc(cg, sizeof(int) * (size_t)n);
    p->nr = p->nc = 0;
    for (int s = 0; s < n; s++) {
        int64_t e = cg_slot_index(l, s);
        p->row_of[s] = key_slot(rk, &p->nr, row_key(p, e));
        p->col_of[s] = key_slot(ck, &p->nc, col_key(p, e));
    }
    LLVMValueRef t = cg_thread_index(cg, l);
    LLVMValueRef tr = thread_key(cg, p, t, true), tc = thread_key(cg, p, t, false);
    p->row = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)p->nr);
    p->col = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)p->nc);
    for (int i = 0; i < p->nr; i++)
        p->row[i] = LLVMBuildOr(cg->b, tr, cg_i32(cg, rk[i]), "");
    for (int i = 0; i < p->nc; i++)
        p->col[i] = LLVMBuildOr(cg->b, tc, cg_i32(cg, ck[i]), "");
}

/* u values of A's row i from K step k, converted to the compute dtype:
 * one vector load (the row is contiguous along K, k a multiple of u). */
static void load_a(Cg *cg, const FmaPlan *p, DType dt, int i, LLVMValueRef k, LLVMValueRef *out)
{
    LLVMValueRef idx = LLVMBuildAdd(cg->b, p->row[i], k, "");
    LLVMTypeRef vt = LLVMVectorType(cg_mem_type(cg, dt), (unsigned)p->u);
    LLVMValueRef v = LLVMBuildLoad2(cg->b, vt, cg_smem_addr(cg, 0, idx, dt), "");
    int64_t align = p->u * cg_mem_bytes(dt);
    LLVMSetAlignment(v, (unsigned)(align < 16 ? align : 16));
    for (int j = 0; j < p->u; j++)
        out[j] = cg_convert(cg, LLVMBuildExtractElement(cg->b, v, cg_i32(cg, j), ""), dt, p->cd);
}

/* B's column i at K step k (adjacent columns merge into vector loads). */
static LLVMValueRef load_b(Cg *cg, const FmaPlan *p, DType dt, int i, LLVMValueRef k)
{
    LLVMValueRef kn = LLVMBuildShl(cg->b, k, cg_i32(cg, cg_ilog2(p->N)), "");
    LLVMValueRef idx = LLVMBuildAdd(cg->b, p->col[i], kn, "");
    LLVMValueRef v =
        LLVMBuildLoad2(cg->b, cg_mem_type(cg, dt), cg_smem_addr(cg, p->boff, idx, dt), "");
    return cg_convert(cg, v, dt, p->cd);
}

/* One iteration: u K steps from k, each an outer product into acc. */
static void fma_steps(Cg *cg, const FmaPlan *p, const Type *at, const Type *bt, int slots,
                      LLVMValueRef k, LLVMValueRef *acc)
{
    LLVMValueRef *a = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)(p->nr * p->u));
    LLVMValueRef *bv = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)p->nc);
    LLVMTypeRef ft = cg_type(cg, p->cd);
    for (int i = 0; i < p->nr; i++)
        load_a(cg, p, at->dt, i, k, a + i * p->u);
    for (int j = 0; j < p->u; j++) {
        LLVMValueRef kj = LLVMBuildAdd(cg->b, k, cg_i32(cg, j), "");
        for (int i = 0; i < p->nc; i++)
            bv[i] = load_b(cg, p, bt->dt, i, kj);
        for (int s = 0; s < slots; s++) {
            LLVMValueRef x = a[p->row_of[s] * p->u + j], y = bv[p->col_of[s]];
            if (dtype_is_float(p->cd)) {
                LLVMValueRef args[3] = {x, y, acc[s]};
                acc[s] = cg_intrinsic(cg, "llvm.fma", &ft, 1, args, 3);
            } else {
                acc[s] = LLVMBuildAdd(cg->b, LLVMBuildMul(cg->b, x, y, ""), acc[s], "");
            }
        }
    }
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
    FmaPlan p = {.K = at.shape[rank - 1], .N = bt.shape[rank - 1], .rank = rank};
    p.MN = ct.shape[rank - 2] * p.N;
    p.cd = compute_dtype(ct.dt);
    p.u = p.K < 4 ? (int)p.K : 4;
    p.boff = (type_numel(at) * cg_mem_bytes(at.dt) + 15) / 16 * 16;
    cg_smem_put(cg, cg_get(cg, op->operands[0]), op->operands[0], 0);
    cg_smem_put(cg, cg_get(cg, op->operands[1]), op->operands[1], p.boff);
    cg_barrier(cg);
    CgVal acc = cg_dot_acc(cg, op);
    CgLayout l = cg_layout(cg, op->results[0]);
    fma_plan(cg, &p, &l);
    int n = l.per_thread;
    LLVMValueRef *phi = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)n);
    LLVMValueRef *next = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)n);
    LLVMValueRef *init = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)n);
    for (int s = 0; s < n; s++)
        init[s] = cg_convert(cg, acc.el[acc.n == 1 ? 0 : s], ct.dt, p.cd);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef body = cg_new_bb(cg, "dot.k");
    LLVMBasicBlockRef done = cg_new_bb(cg, "dot.done");
    LLVMBuildBr(cg->b, body);
    LLVMPositionBuilderAtEnd(cg->b, body);
    LLVMValueRef k = LLVMBuildPhi(cg->b, LLVMInt32TypeInContext(cg->ctx), "k");
    for (int s = 0; s < n; s++)
        next[s] = phi[s] = LLVMBuildPhi(cg->b, cg_type(cg, p.cd), "");
    fma_steps(cg, &p, &at, &bt, n, k, next);
    LLVMValueRef k1 = LLVMBuildAdd(cg->b, k, cg_i32(cg, p.u), "");
    LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntULT, k1, cg_i32(cg, p.K), ""), body, done);
    LLVMBasicBlockRef from[2] = {pre, body};
    LLVMValueRef kin[2] = {cg_i32(cg, 0), k1};
    LLVMAddIncoming(k, kin, from, 2);
    for (int s = 0; s < n; s++) {
        LLVMValueRef in[2] = {init[s], next[s]};
        LLVMAddIncoming(phi[s], in, from, 2);
    }
    LLVMPositionBuilderAtEnd(cg->b, done);
    cg_barrier(cg);
    CgVal r = cg_val_new(cg, n);
    for (int s = 0; s < n; s++)
        r.el[s] = cg_convert(cg, next[s], p.cd, ct.dt);
    cg_set(cg, op->results[0], r);
    return true;
}
