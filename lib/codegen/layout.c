/* codegen/layout.c: the canonical layout of a shape (which thread holds which
 * element), shared-memory conversion, and the shape ops built on it.
 * Assumes power-of-two shapes and thread counts; guarantees every shape op
 * is correct for blocks smaller than the CTA (repeated) and larger (several
 * chunks per thread), each conversion ending in a barrier so shared memory
 * can be reused by the next op. */
#include <string.h>

#include "codegen/cg.h"
#include "passes/axis.h"

static int log2i(int64_t v)
{
    int n = 0;
    while (((int64_t)1 << n) < v)
        n++;
    return n;
}

struct CgShapeV {
    int rank;
    int shape[TK_MAX_RANK];
    int v;
};

static struct CgShapeV *shape_entry(Cg *cg, const Type *t)
{
    for (int i = 0; i < cg->nshape_v; i++) {
        struct CgShapeV *e = &cg->shape_v[i];
        if (e->rank == t->rank && memcmp(e->shape, t->shape, sizeof(int) * (size_t)t->rank) == 0)
            return e;
    }
    return NULL;
}

static bool plan_op(IrOp *op, void *ctx)
{
    Cg *cg = ctx;
    if ((op->kind != IR_LOAD && op->kind != IR_STORE) || op->nops < 1)
        return true;
    const IrValue *ptr = op->operands[0];
    const IrValue *mask = op->kind == IR_LOAD ? (op->nops > 1 ? op->operands[1] : NULL)
                                             : (op->nops > 2 ? op->operands[2] : NULL);
    if (ptr->type.rank == 0)
        return true;
    int vw = axis_vector_width(cg->axis, ptr, mask, cg_mem_bytes(ptr->type.elem));
    vw = vw > 16 ? 16 : vw < 1 ? 1 : vw;
    struct CgShapeV *e = shape_entry(cg, &ptr->type);
    if (!e) {
        if (cg->nshape_v >= 64)
            return true;
        e = &cg->shape_v[cg->nshape_v++];
        e->rank = ptr->type.rank;
        memcpy(e->shape, ptr->type.shape, sizeof e->shape);
        e->v = vw;
    } else if (vw > e->v) {
        e->v = vw;
    }
    return true;
}

void cg_plan_layouts(Cg *cg)
{
    cg->shape_v = cg_alloc(cg, sizeof(struct CgShapeV) * 64);
    cg->nshape_v = 0;
    if (cg->axis)
        ir_walk(cg->f->body, plan_op, cg);
}

CgLayout cg_layout(Cg *cg, Type t)
{
    CgLayout l;
    l.numel = type_numel(t);
    int last = t.rank > 0 ? t.shape[t.rank - 1] : 1;
    l.v = last < 4 ? (last > 0 ? last : 1) : 4;
    const struct CgShapeV *e = t.rank > 0 ? shape_entry(cg, &t) : NULL;
    if (e && e->v <= last) {
        /* like Triton: no wider than what leaves every thread some work */
        int64_t fill = l.numel / cg->T;
        l.v = e->v;
        while (l.v > 1 && l.v > fill)
            l.v /= 2;
    }
    l.nchunks = l.numel / l.v;
    if (l.nchunks < 1)
        l.nchunks = 1;
    l.k = l.nchunks > cg->T ? (int)(l.nchunks / cg->T) : 1;
    l.per_thread = l.k * l.v;
    return l;
}

bool cg_layout_same(Cg *cg, Type a, Type b)
{
    CgLayout x = cg_layout(cg, a), y = cg_layout(cg, b);
    return x.numel == y.numel && x.v == y.v;
}

LLVMValueRef cg_elem_index(Cg *cg, const CgLayout *l, int slot)
{
    int i = slot / l->v, w = slot % l->v;
    LLVMValueRef c;
    if (l->nchunks >= cg->T)
        c = LLVMBuildAdd(cg->b, cg->tid, cg_i32(cg, (int64_t)i * cg->T), "");
    else
        c = LLVMBuildAnd(cg->b, cg->tid, cg_i32(cg, l->nchunks - 1), "");
    LLVMValueRef e = LLVMBuildShl(cg->b, c, cg_i32(cg, log2i(l->v)), "");
    return w ? LLVMBuildOr(cg->b, e, cg_i32(cg, w), "") : e;
}

LLVMValueRef cg_owner(Cg *cg, const CgLayout *l)
{
    if (l->nchunks >= cg->T)
        return LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0);
    return LLVMBuildICmp(cg->b, LLVMIntULT, cg->tid, cg_i32(cg, l->nchunks), "");
}

static int64_t stride_of(const Type *t, int d)
{
    int64_t s = 1;
    for (int i = d + 1; i < t->rank; i++)
        s *= t->shape[i];
    return s;
}

LLVMValueRef cg_coord(Cg *cg, LLVMValueRef lin, const Type *t, int d)
{
    LLVMValueRef x = LLVMBuildLShr(cg->b, lin, cg_i32(cg, log2i(stride_of(t, d))), "");
    return LLVMBuildAnd(cg->b, x, cg_i32(cg, t->shape[d] - 1), "");
}

void cg_smem_need(Cg *cg, int64_t bytes)
{
    if (bytes > cg->smem_bytes)
        cg->smem_bytes = bytes;
}

LLVMValueRef cg_smem_addr(Cg *cg, int64_t byte_off, LLVMValueRef idx, DType dt)
{
    LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx);
    LLVMValueRef off = cg_i32(cg, byte_off);
    LLVMValueRef base = LLVMBuildInBoundsGEP2(cg->b, i8, cg->smem, &off, 1, "");
    return LLVMBuildInBoundsGEP2(cg->b, cg_mem_type(cg, dt), base, &idx, 1, "");
}

void cg_barrier(Cg *cg)
{
    cg_intrinsic(cg, "llvm.nvvm.barrier0", NULL, 0, NULL, 0);
}

void cg_smem_put(Cg *cg, CgVal x, Type t, int64_t off)
{
    CgLayout l = cg_layout(cg, t);
    cg_smem_need(cg, off + l.numel * cg_mem_bytes(t.dt));
    for (int s = 0; s < x.n; s++) {
        LLVMValueRef v = x.el[s];
        if (t.dt == DT_I1)
            v = LLVMBuildZExt(cg->b, v, LLVMInt8TypeInContext(cg->ctx), "");
        LLVMBuildStore(cg->b, v, cg_smem_addr(cg, off, cg_elem_index(cg, &l, s), t.dt));
    }
}

CgVal cg_smem_take(Cg *cg, Type t, int64_t off, CgIndexMap map, void *ctx)
{
    CgLayout l = cg_layout(cg, t);
    CgVal r = cg_val_new(cg, l.per_thread);
    for (int s = 0; s < r.n; s++) {
        LLVMValueRef e = cg_elem_index(cg, &l, s);
        if (map)
            e = map(cg, e, &t, ctx);
        LLVMValueRef p = cg_smem_addr(cg, off, e, t.dt);
        LLVMValueRef v = LLVMBuildLoad2(cg->b, cg_mem_type(cg, t.dt), p, "");
        if (t.dt == DT_I1)
            v = LLVMBuildTrunc(cg->b, v, LLVMInt1TypeInContext(cg->ctx), "");
        r.el[s] = v;
    }
    return r;
}

/* ---- index maps (destination index -> source index) ------------------------------- */

static LLVMValueRef map_broadcast(Cg *cg, LLVMValueRef e, const Type *dst, void *ctx)
{
    const Type *src = ctx;
    LLVMValueRef r = cg_i32(cg, 0);
    for (int d = 0; d < dst->rank; d++) {
        if (src->shape[d] == 1)
            continue;
        LLVMValueRef c = cg_coord(cg, e, dst, d);
        c = LLVMBuildShl(cg->b, c, cg_i32(cg, log2i(stride_of(src, d))), "");
        r = LLVMBuildOr(cg->b, r, c, "");
    }
    return r;
}

typedef struct TransCtx {
    const Type *src;
    const int *perm;
} TransCtx;

/* Result dim d is source dim perm[d]. */
static LLVMValueRef map_trans(Cg *cg, LLVMValueRef e, const Type *dst, void *ctx)
{
    TransCtx *tc = ctx;
    LLVMValueRef r = cg_i32(cg, 0);
    for (int d = 0; d < dst->rank; d++) {
        LLVMValueRef c = cg_coord(cg, e, dst, d);
        c = LLVMBuildShl(cg->b, c, cg_i32(cg, log2i(stride_of(tc->src, tc->perm[d]))), "");
        r = LLVMBuildOr(cg->b, r, c, "");
    }
    return r;
}

typedef struct JoinCtx {
    int64_t half; /* elements of each joined operand */
    int part;     /* split: which half */
} JoinCtx;

static LLVMValueRef map_join(Cg *cg, LLVMValueRef e, const Type *dst, void *ctx)
{
    JoinCtx *jc = ctx;
    LLVMValueRef j = LLVMBuildAnd(cg->b, e, cg_i32(cg, 1), "");
    LLVMValueRef hi = LLVMBuildShl(cg->b, j, cg_i32(cg, log2i(jc->half)), "");
    return LLVMBuildOr(cg->b, hi, LLVMBuildLShr(cg->b, e, cg_i32(cg, 1), ""), "");
}

static LLVMValueRef map_split(Cg *cg, LLVMValueRef e, const Type *dst, void *ctx)
{
    JoinCtx *jc = ctx;
    LLVMValueRef x = LLVMBuildShl(cg->b, e, cg_i32(cg, 1), "");
    return LLVMBuildOr(cg->b, x, cg_i32(cg, jc->part), "");
}

/* ---- shape ops ------------------------------------------------------------------------ */

static CgVal splat(Cg *cg, LLVMValueRef x, Type t)
{
    CgVal r = cg_val_new(cg, cg_layout(cg, t).per_thread);
    for (int s = 0; s < r.n; s++)
        r.el[s] = x;
    return r;
}

static CgVal convert(Cg *cg, CgVal x, Type from, Type to, CgIndexMap map, void *ctx)
{
    cg_smem_put(cg, x, from, 0);
    cg_barrier(cg);
    CgVal r = cg_smem_take(cg, to, 0, map, ctx);
    cg_barrier(cg);
    return r;
}

static void emit_join(Cg *cg, const IrOp *op)
{
    Type a = op->operands[0]->type;
    int64_t n = type_numel(a);
    cg_smem_put(cg, cg_get(cg, op->operands[0]), a, 0);
    cg_smem_put(cg, cg_get(cg, op->operands[1]), a, n * cg_mem_bytes(a.dt));
    cg_barrier(cg);
    JoinCtx jc = {n, 0};
    bool cat = op->kind == IR_CAT;
    cg_set(cg, op->results[0],
           cg_smem_take(cg, op->results[0]->type, 0, cat ? NULL : map_join, &jc));
    cg_barrier(cg);
}

static void emit_split(Cg *cg, const IrOp *op)
{
    Type x = op->operands[0]->type;
    cg_smem_put(cg, cg_get(cg, op->operands[0]), x, 0);
    cg_barrier(cg);
    for (int r = 0; r < op->nres && r < 2; r++) {
        JoinCtx jc = {type_numel(x) / 2, r};
        cg_set(cg, op->results[r], cg_smem_take(cg, op->results[r]->type, 0, map_split, &jc));
    }
    cg_barrier(cg);
}

/* The result of a shape op recomputed in its own layout, when its input allows. */
static bool remat(Cg *cg, const IrOp *op)
{
    if (!cg_can_remat(cg, op->operands[0]))
        return false;
    const IrValue *res = op->results[0];
    CgLayout l = cg_layout(cg, res->type);
    CgVal r = cg_val_new(cg, l.per_thread);
    for (int s = 0; s < r.n; s++)
        r.el[s] = cg_remat_elem(cg, res, cg_elem_index(cg, &l, s));
    cg_set(cg, res, r);
    return true;
}

bool cg_emit_shape(Cg *cg, const IrOp *op)
{
    const IrValue *in = op->nops > 0 ? op->operands[0] : NULL;
    Type rt = op->nres > 0 ? op->results[0]->type : type_scalar(DT_VOID);
    switch (op->kind) {
    case IR_SPLAT:
        cg_set(cg, op->results[0], splat(cg, cg_get(cg, in).el[0], rt));
        return true;
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
        if (cg_layout_same(cg, in->type, rt))
            cg_set(cg, op->results[0], cg_get(cg, in));
        else if (!remat(cg, op))
            cg_set(cg, op->results[0], convert(cg, cg_get(cg, in), in->type, rt, NULL, NULL));
        return true;
    case IR_BROADCAST:
        if (type_numel(in->type) == 1)
            cg_set(cg, op->results[0], splat(cg, cg_get(cg, in).el[0], rt));
        else if (type_numel(in->type) == type_numel(rt))
            cg_set(cg, op->results[0], cg_get(cg, in));
        else if (!remat(cg, op)) {
            Type src = in->type;
            cg_set(cg, op->results[0],
                   convert(cg, cg_get(cg, in), src, rt, map_broadcast, &src));
        }
        return true;
    case IR_TRANS: {
        Type src = in->type;
        int perm[TK_MAX_RANK];
        for (int d = 0; d < rt.rank; d++)
            perm[d] = op->nints > d ? op->ints[d] : rt.rank - 1 - d;
        TransCtx tc = {&src, perm};
        cg_set(cg, op->results[0], convert(cg, cg_get(cg, in), src, rt, map_trans, &tc));
        return true;
    }
    case IR_JOIN:
    case IR_CAT:
        emit_join(cg, op);
        return true;
    case IR_SPLIT:
        emit_split(cg, op);
        return true;
    default:
        return false;
    }
}
