/* codegen/layout.c: the canonical layout of a shape (which thread holds which
 * element), shared-memory access, and the shape ops built on it (plain
 * conversions and transposes through swizzled scratch: convert.c).
 * Assumes power-of-two shapes and thread counts; guarantees every shape op
 * is correct for blocks smaller than the CTA (repeated) and larger (several
 * chunks per thread), each conversion ending in a barrier so shared memory
 * can be reused by the next op. */
#include <stdio.h>
#include <string.h>

#include "codegen/cg.h"

static CgLayout layout_for(Cg *cg, const Layout *ly, const Type *t, int id)
{
    CgLayout l;
    memset(&l, 0, sizeof l);
    l.numel = type_numel(*t);
    l.per_thread = 1;
    l.v = 1;
    l.nchunks = 1;
    l.k = 1;
    if (t->rank == 0) {
        l.copies = cg->T - 1; /* every thread holds the one (uniform) value */
        return l;
    }
    if (!ly || !layout_linear(ly, t->rank, t->shape, cg->T, &l.lin)) {
        cg_internal(cg, cg->f->span, "value %%%d has no layout for its shape", id);
        return l;
    }
    cg_layout_finish(&l);
    return l;
}

void cg_layout_finish(CgLayout *l)
{
    l->per_thread = 1 << l->lin.nreg;
    l->v = lin_contiguous(&l->lin);
    if (l->v > 16)
        l->v = 16;
    l->nchunks = l->numel / l->v;
    l->k = l->per_thread / l->v;
    l->copies = lin_thread_copies(&l->lin);
}

CgLayout cg_layout(Cg *cg, const IrValue *v)
{
    Type scalar = type_scalar(DT_I32);
    return layout_for(cg, v ? v->layout : NULL, v ? &v->type : &scalar, v ? v->id : -1);
}

/* The blocked layouts the layout pass chose, by shape. */
struct CgShapeLayout {
    Type t;
    const Layout *l;
};

static bool index_op(IrOp *op, void *ctx)
{
    Cg *cg = ctx;
    for (int i = 0; i < op->nres && cg->nshape_layouts < 64; i++) {
        const IrValue *v = op->results[i];
        if (!v->layout || v->layout->kind != LY_BLOCKED)
            continue;
        int k = 0;
        while (k < cg->nshape_layouts && !type_same_shape(cg->shape_layouts[k].t, v->type))
            k++;
        if (k == cg->nshape_layouts) {
            cg->shape_layouts[k].t = v->type;
            cg->shape_layouts[k].l = v->layout;
            cg->nshape_layouts++;
        }
    }
    return true;
}

/* A dot stages the operands converted in its own block (mma.c); one made
 * elsewhere (hoisted out of a loop) is converted into registers once. */
static bool mark_staged(IrOp *op, void *ctx)
{
    Cg *cg = ctx;
    if (op->kind != IR_DOT || !op->results[0]->layout || op->results[0]->layout->kind != LY_MMA)
        return true;
    for (int i = 0; i < 2; i++) {
        const IrOp *c = op->operands[i]->def;
        if (c && c->kind == IR_CONVERT_LAYOUT && c->parent == op->parent)
            cg->staged[op->operands[i]->id] = true;
    }
    return true;
}

void cg_index_layouts(Cg *cg)
{
    cg->shape_layouts = cg_alloc(cg, sizeof(struct CgShapeLayout) * 64);
    cg->nshape_layouts = 0;
    cg->staged = cg_alloc(cg, sizeof(bool) * (size_t)(cg->f->next_id + 1));
    ir_walk(cg->f->body, index_op, cg);
    ir_walk(cg->f->body, mark_staged, cg);
}

CgLayout cg_layout_type(Cg *cg, Type t)
{
    for (int k = 0; k < cg->nshape_layouts; k++)
        if (type_same_shape(cg->shape_layouts[k].t, t))
            return layout_for(cg, cg->shape_layouts[k].l, &t, -1);
    int last = t.rank ? t.shape[t.rank - 1] : 1;
    Layout d = layout_blocked_default(t.rank ? t.rank : 1, t.rank ? t.shape : &last,
                                      last < 4 ? last : 4, cg->T);
    return layout_for(cg, &d, &t, -1);
}

bool cg_layout_same(Cg *cg, const IrValue *a, const IrValue *b)
{
    CgLayout x = cg_layout(cg, a), y = cg_layout(cg, b);
    return x.numel == y.numel && lin_equal(&x.lin, &y.lin);
}

/* The part of an element index that depends on the thread: runs of thread
 * bits that map to runs of index bits become one shift and mask. */
static LLVMValueRef build_thread_index(Cg *cg, const CgLayout *l)
{
    LLVMValueRef e = NULL;
    const LinLayout *ll = &l->lin;
    for (int i = 0; i < ll->nthread;) {
        if (!ll->thread[i]) {
            i++;
            continue;
        }
        int j = i + 1;
        while (j < ll->nthread && ll->thread[j] == ll->thread[j - 1] * 2)
            j++;
        LLVMValueRef bits = cg->tid;
        if (i)
            bits = LLVMBuildLShr(cg->b, bits, cg_i32(cg, i), "");
        bits = LLVMBuildAnd(cg->b, bits, cg_i32(cg, ((int64_t)1 << (j - i)) - 1), "");
        if (cg_ilog2(ll->thread[i]))
            bits = LLVMBuildShl(cg->b, bits, cg_i32(cg, cg_ilog2(ll->thread[i])), "");
        e = e ? LLVMBuildOr(cg->b, e, bits, "") : bits;
        i = j;
    }
    return e ? e : cg_i32(cg, 0);
}

static bool same_threads(const struct CgThreadIndex *c, const LinLayout *ll)
{
    if (c->nthread != ll->nthread)
        return false;
    for (int i = 0; i < ll->nthread; i++)
        if (c->thread[i] != ll->thread[i])
            return false;
    return true;
}

/* Every element of a value shares its thread part, so it is built once per
 * basic block and layout: the module LLVM optimises is then a fraction of
 * the size (the same code after CSE, in less compile time). A block's
 * cached value sits before the builder's position, as the builder only
 * appends to blocks. */
static LLVMValueRef thread_index(Cg *cg, const CgLayout *l)
{
    LLVMBasicBlockRef bb = LLVMGetInsertBlock(cg->b);
    int n = cg->ntix < 8 ? cg->ntix : 8;
    for (int i = 0; i < n; i++)
        if (cg->tix[i].bb == bb && same_threads(&cg->tix[i], &l->lin))
            return cg->tix[i].v;
    struct CgThreadIndex *c = &cg->tix[cg->ntix++ % 8];
    c->bb = bb;
    c->nthread = l->lin.nthread;
    memcpy(c->thread, l->lin.thread, sizeof c->thread);
    c->v = build_thread_index(cg, l);
    return c->v;
}

int64_t cg_slot_index(const CgLayout *l, int slot)
{
    int64_t r = 0;
    for (int i = 0; i < l->lin.nreg; i++)
        if (slot >> i & 1)
            r |= l->lin.reg[i];
    return r;
}

LLVMValueRef cg_thread_index(Cg *cg, const CgLayout *l) { return thread_index(cg, l); }

LLVMValueRef cg_elem_index(Cg *cg, const CgLayout *l, int slot)
{
    int64_t r = cg_slot_index(l, slot);
    LLVMValueRef t = thread_index(cg, l);
    return r ? LLVMBuildOr(cg->b, t, cg_i32(cg, r), "") : t;
}

LLVMValueRef cg_owner(Cg *cg, const CgLayout *l)
{
    if (!l->copies)
        return LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0);
    LLVMValueRef c = LLVMBuildAnd(cg->b, cg->tid, cg_i32(cg, l->copies), "");
    return LLVMBuildICmp(cg->b, LLVMIntEQ, c, cg_i32(cg, 0), "");
}

int64_t cg_dim_stride(const Type *t, int d)
{
    int64_t s = 1;
    for (int i = d + 1; i < t->rank; i++)
        s *= t->shape[i];
    return s;
}

LLVMValueRef cg_coord(Cg *cg, LLVMValueRef lin, const Type *t, int d)
{
    int sh = cg_ilog2(cg_dim_stride(t, d));
    LLVMValueRef x = sh ? LLVMBuildLShr(cg->b, lin, cg_i32(cg, sh), "") : lin;
    return LLVMBuildAnd(cg->b, x, cg_i32(cg, t->shape[d] - 1), "");
}

void cg_smem_need(Cg *cg, int64_t bytes)
{
    cg->rings_scratched |= cg->rings_owed && bytes > 0;
    if (cg->smem_reserved + bytes > cg->smem_bytes)
        cg->smem_bytes = cg->smem_reserved + bytes;
}

LLVMValueRef cg_smem_addr_at(Cg *cg, LLVMValueRef byte_off, LLVMValueRef idx, DType dt)
{
    LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx);
    LLVMValueRef base = LLVMBuildInBoundsGEP2(cg->b, i8, cg->smem, &byte_off, 1, "");
    return LLVMBuildInBoundsGEP2(cg->b, cg_mem_type(cg, dt), base, &idx, 1, "");
}

LLVMValueRef cg_smem_in_reg(Cg *cg, LLVMValueRef addr)
{
    if (!LLVMIsConstant(addr))
        return addr;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMValueRef a = LLVMBuildPtrToInt(cg->b, addr, i32, "");
    LLVMValueRef r = cg_asm_pure(cg, i32, &i32, 1, "mov.b32 $0, $1;", "=r,r", &a);
    return LLVMBuildIntToPtr(cg->b, r, LLVMTypeOf(addr), "");
}

LLVMValueRef cg_smem_addr(Cg *cg, int64_t byte_off, LLVMValueRef idx, DType dt)
{
    return cg_smem_addr_at(cg, cg_i32(cg, cg->smem_reserved + byte_off), idx, dt);
}

/* Whether the block being built ends in the last barrier, the same threads
 * meeting, with no access to memory and no call after it: a second
 * barrier there orders nothing the first does not (a wgmma's wait for the
 * previous group, then the copies' wait for the slot they refill). */
static bool just_met(Cg *cg)
{
    LLVMBasicBlockRef bb = LLVMGetInsertBlock(cg->b);
    if (!bb || !cg->last_bar || cg->last_bar_consumers != cg->consumers)
        return false;
    for (LLVMValueRef i = LLVMGetLastInstruction(bb); i; i = LLVMGetPreviousInstruction(i)) {
        if (i == cg->last_bar)
            return true;
        switch (LLVMGetInstructionOpcode(i)) {
        case LLVMCall:
        case LLVMLoad:
        case LLVMStore:
        case LLVMAtomicRMW:
        case LLVMAtomicCmpXchg:
        case LLVMFence: return false;
        default: break;
        }
    }
    return false;
}

/* Every thread of the program, or past a producer split the consumers
 * alone at named barrier 1 (the producer never arrives at barrier 0). */
void cg_barrier(Cg *cg)
{
    cg->bar_owed = NULL;
    cg->slot_owed = NULL;
    cg_pay_slot_wait(cg); /* a ring wait (async.c), then its fence, before its barrier */
    if (cg->fence_owed)
        cg_fence_async_shared(cg);
    if (just_met(cg))
        return;
    if (!cg->consumers) {
        cg->last_bar = cg_intrinsic(cg, "llvm.nvvm.barrier0", NULL, 0, NULL, 0);
    } else {
        char text[48];
        snprintf(text, sizeof text, "bar.sync 1, %d;", cg->consumers);
        cg->last_bar = cg_asm_void(cg, text);
    }
    cg->last_bar_consumers = cg->consumers;
}

void cg_smem_put_in(Cg *cg, CgVal x, const CgLayout *l, DType dt, int64_t off)
{
    cg_smem_need(cg, off + l->numel * cg_mem_bytes(dt));
    for (int s = 0; s < x.n; s++) {
        LLVMValueRef e = x.el[s];
        if (dt == DT_I1)
            e = LLVMBuildZExt(cg->b, e, LLVMInt8TypeInContext(cg->ctx), "");
        LLVMBuildStore(cg->b, e, cg_smem_addr(cg, off, cg_elem_index(cg, l, s), dt));
    }
}

void cg_smem_put(Cg *cg, CgVal x, const IrValue *v, int64_t off)
{
    CgLayout l = cg_layout(cg, v);
    cg_smem_put_in(cg, x, &l, v->type.dt, off);
}

CgVal cg_smem_take(Cg *cg, const IrValue *v, int64_t off, CgIndexMap map, void *ctx)
{
    CgLayout l = cg_layout(cg, v);
    return cg_smem_take_in(cg, &l, v->type, off, map, ctx);
}

CgVal cg_smem_take_in(Cg *cg, const CgLayout *l, Type t, int64_t off, CgIndexMap map, void *ctx)
{
    CgVal r = cg_val_new(cg, l->per_thread);
    for (int s = 0; s < r.n; s++) {
        LLVMValueRef e = cg_elem_index(cg, l, s);
        if (map)
            e = map(cg, e, &t, ctx);
        LLVMValueRef p = cg_smem_addr(cg, off, e, t.dt);
        LLVMValueRef x = LLVMBuildLoad2(cg->b, cg_mem_type(cg, t.dt), p, "");
        if (t.dt == DT_I1)
            x = LLVMBuildTrunc(cg->b, x, LLVMInt1TypeInContext(cg->ctx), "");
        r.el[s] = x;
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
        c = LLVMBuildShl(cg->b, c, cg_i32(cg, cg_ilog2(cg_dim_stride(src, d))), "");
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
    LLVMValueRef hi = LLVMBuildShl(cg->b, j, cg_i32(cg, cg_ilog2(jc->half)), "");
    return LLVMBuildOr(cg->b, hi, LLVMBuildLShr(cg->b, e, cg_i32(cg, 1), ""), "");
}

static LLVMValueRef map_split(Cg *cg, LLVMValueRef e, const Type *dst, void *ctx)
{
    JoinCtx *jc = ctx;
    LLVMValueRef x = LLVMBuildShl(cg->b, e, cg_i32(cg, 1), "");
    return LLVMBuildOr(cg->b, x, cg_i32(cg, jc->part), "");
}

/* ---- shape ops ------------------------------------------------------------------------ */

static CgVal splat(Cg *cg, LLVMValueRef x, const IrValue *v)
{
    CgVal r = cg_val_new(cg, cg_layout(cg, v).per_thread);
    for (int s = 0; s < r.n; s++)
        r.el[s] = x;
    return r;
}


static CgVal convert(Cg *cg, const IrOp *op, CgIndexMap map, void *ctx)
{
    if (!map)
        return cg_convert_plain(cg, op);
    cg_smem_put(cg, cg_get(cg, op->operands[0]), op->operands[0], 0);
    cg_barrier(cg);
    CgVal r = cg_smem_take(cg, op->results[0], 0, map, ctx);
    cg_barrier(cg);
    return r;
}

/* A join whose result holds each pair in one thread's registers, its
 * other elements where the operands hold them (layout.c's pair_layouts):
 * result register s is register s/2 of the first operand or the second. */
static bool join_in_registers(Cg *cg, const IrOp *op)
{
    const IrValue *a = op->operands[0], *b = op->operands[1], *out = op->results[0];
    if (op->kind != IR_JOIN || !cg_layout_same(cg, a, b))
        return false;
    CgLayout li = cg_layout(cg, a), lo = cg_layout(cg, out);
    if (lo.lin.nreg != li.lin.nreg + 1 || lo.lin.nthread != li.lin.nthread || lo.lin.reg[0] != 1)
        return false;
    for (int i = 0; i < li.lin.nreg; i++)
        if (lo.lin.reg[i + 1] != 2 * li.lin.reg[i])
            return false;
    for (int j = 0; j < li.lin.nthread; j++)
        if (lo.lin.thread[j] != 2 * li.lin.thread[j])
            return false;
    CgVal x = cg_get(cg, a), y = cg_get(cg, b), r = cg_val_new(cg, lo.per_thread);
    for (int s = 0; s < r.n; s++)
        r.el[s] = (s & 1 ? y : x).el[s >> 1];
    cg_set(cg, out, r);
    return true;
}

static void emit_join(Cg *cg, const IrOp *op)
{
    if (join_in_registers(cg, op))
        return;
    Type a = op->operands[0]->type;
    int64_t n = type_numel(a);
    cg_smem_put(cg, cg_get(cg, op->operands[0]), op->operands[0], 0);
    cg_smem_put(cg, cg_get(cg, op->operands[1]), op->operands[1], n * cg_mem_bytes(a.dt));
    cg_barrier(cg);
    JoinCtx jc = {n, 0};
    bool cat = op->kind == IR_CAT;
    cg_set(cg, op->results[0], cg_smem_take(cg, op->results[0], 0, cat ? NULL : map_join, &jc));
    cg_barrier(cg);
}

static void emit_split(Cg *cg, const IrOp *op)
{
    Type x = op->operands[0]->type;
    cg_smem_put(cg, cg_get(cg, op->operands[0]), op->operands[0], 0);
    cg_barrier(cg);
    for (int r = 0; r < op->nres && r < 2; r++) {
        JoinCtx jc = {type_numel(x) / 2, r};
        cg_set(cg, op->results[r], cg_smem_take(cg, op->results[r], 0, map_split, &jc));
    }
    cg_barrier(cg);
}

/* The index in `in` of element offset o of `out` (o a sum of distinct
 * single-bit offsets): size-1 dims of `in` read coordinate 0 (broadcast),
 * other shapes keep the row-major index (expand_dims, reshape). */
static int64_t map_offset(const Type *out, const Type *in, int64_t o, bool broadcast)
{
    if (!broadcast)
        return o;
    int64_t r = 0, so = 1, si = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        int64_t c = (o / so) % out->shape[d];
        if (in->shape[d] != 1)
            r += c * si;
        so *= out->shape[d];
        si *= in->shape[d];
    }
    return r;
}

/* A shape op or conversion done by picking registers: possible when every
 * thread already holds the input elements its result elements read. */
static bool reg_permute(Cg *cg, const IrOp *op, CgVal *res)
{
    const IrValue *in = op->operands[0], *out = op->results[0];
    if (in->type.rank == 0 || type_numel(in->type) < 1)
        return false;
    bool bc = op->kind == IR_BROADCAST;
    CgLayout li = cg_layout(cg, in), lo = cg_layout(cg, out);
    LinLayout m = lo.lin; /* the result's elements as indices of the operand */
    for (int j = 0; j < m.nthread; j++)
        m.thread[j] = map_offset(&out->type, &in->type, lo.lin.thread[j], bc);
    for (int i = 0; i < m.nreg; i++)
        m.reg[i] = map_offset(&out->type, &in->type, lo.lin.reg[i], bc);
    return cg_pick_registers(cg, &li.lin, &m, cg_get(cg, in), lo.per_thread, res);
}

/* Offsets combine by xor, so a register bit whose element offset stays,
 * in every dim, within the blocks of constant value axis analysis proves
 * can be cleared from any slot: only bits inside every block qualify. */
int64_t cg_equal_bits(Cg *cg, const IrValue *v, const CgLayout *l)
{
    const AxisInfo *ai = cg->axis && v->id >= 0 ? &cg->axis[v->id] : NULL;
    const Type *t = &v->type;
    if (!ai || t->rank == 0 || l->per_thread < 2)
        return 0;
    int64_t bits = 0;
    for (int i = 0; i < l->lin.nreg; i++) {
        int64_t off = l->lin.reg[i], stride = 1;
        bool inside = true;
        for (int d = t->rank - 1; d >= 0; stride *= t->shape[d--])
            inside = inside && off / stride % t->shape[d] < axis_constant_block(ai, d);
        if (inside)
            bits |= (int64_t)1 << i;
    }
    return bits;
}

/* The result of a shape op recomputed in its own layout, when its input allows. */
static bool remat(Cg *cg, const IrOp *op)
{
    if (!cg_can_remat(cg, op->operands[0]))
        return false;
    const IrValue *res = op->results[0];
    CgLayout l = cg_layout(cg, res);
    CgVal r = cg_val_new(cg, l.per_thread);
    int64_t same = cg_equal_bits(cg, res, &l);
    for (int s = 0; s < r.n; s++)
        r.el[s] = s & same
            ? r.el[s & ~same]
            : cg_remat_elem(cg, res, cg_thread_index(cg, &l), cg_slot_index(&l, s), NULL);
    cg_set(cg, res, r);
    return true;
}

/* The result of a shape op recomputed in its own layout from a few small
 * values that cannot be (pass_remat_leaves), which cross threads through
 * shared memory instead of the result: a paged attention's K tile of
 * pointers, gathered through a block table, is rebuilt from the 1-D row
 * index (256 bytes of scratch, not the tile's 64 KiB). Only where the
 * leaves take at most a quarter of the bytes the operand would: a
 * broadcast moves its small operand alone, and recomputing from the
 * leaves would only add arithmetic per element. */
static bool remat_staged(Cg *cg, const IrOp *op)
{
    const IrValue *res = op->results[0];
    CgStaged st = {{NULL}, {0}, 0};
    st.n = pass_remat_leaves(op->operands[0], st.leaf, 4);
    if (st.n <= 0)
        return false;
    int64_t bytes = 0;
    for (int i = 0; i < st.n; i++) {
        if (st.leaf[i]->type.rank == 0 || !st.leaf[i]->layout)
            return false;
        st.off[i] = bytes;
        bytes += (type_numel(st.leaf[i]->type) * cg_mem_bytes(st.leaf[i]->type.dt) + 15) / 16 * 16;
    }
    const IrValue *in = op->operands[0]; /* what convert() would move instead */
    if (bytes * 4 > type_numel(in->type) * cg_mem_bytes(in->type.dt))
        return false;
    for (int i = 0; i < st.n; i++)
        cg_smem_put(cg, cg_get(cg, st.leaf[i]), st.leaf[i], st.off[i]);
    cg_barrier(cg);
    CgLayout l = cg_layout(cg, res);
    CgVal r = cg_val_new(cg, l.per_thread);
    int64_t same = cg_equal_bits(cg, res, &l);
    for (int s = 0; s < r.n; s++)
        r.el[s] = s & same
            ? r.el[s & ~same]
            : cg_remat_elem(cg, res, cg_thread_index(cg, &l), cg_slot_index(&l, s), &st);
    cg_barrier(cg); /* the scratch may be reused once every warp has read it */
    cg_set(cg, res, r);
    return true;
}

static LLVMValueRef map_xor(Cg *cg, LLVMValueRef e, const Type *dst, void *ctx)
{
    TK_UNUSED(dst);
    return LLVMBuildXor(cg->b, e, cg_i32(cg, *(const int64_t *)ctx), "");
}

/* x's elements, each from the element whose flat index differs by xor m.
 * The layout is linear over GF(2): when m is the offset of one register
 * bit, the partner is that register of the same thread; when it is a lane
 * bit's, the same register of the lane across that bit (one butterfly
 * shuffle); otherwise (a warp bit) through shared memory. */
static CgVal partner(Cg *cg, const IrOp *op)
{
    const IrValue *x = op->operands[0];
    CgLayout l = cg_layout(cg, x);
    CgVal in = cg_get(cg, x), r = cg_val_new(cg, in.n);
    int64_t m = op->ival;
    for (int i = 0; i < l.lin.nreg; i++)
        if (l.lin.reg[i] == m) {
            for (int s = 0; s < r.n; s++)
                r.el[s] = in.el[s ^ (1 << i)];
            return r;
        }
    for (int j = 0; j < l.lin.nthread && j < 5; j++)
        if (l.lin.thread[j] == m) {
            for (int s = 0; s < r.n; s++)
                r.el[s] = cg_shfl(cg, "bfly", in.el[s], x->type.dt, cg_i32(cg, 1 << j));
            return r;
        }
    cg_smem_put(cg, in, x, 0);
    cg_barrier(cg);
    r = cg_smem_take(cg, op->results[0], 0, map_xor, &m);
    cg_barrier(cg);
    return r;
}

/* Whether cg_emit_shape gives op's result from the registers alone (no
 * scratch): a dot's operand its dot stages, a copy, a splat of one
 * element, a result recomputed from its leaves (remat). */
bool cg_shape_in_registers(Cg *cg, const IrOp *op)
{
    if (op->kind == IR_SPLAT)
        return true;
    if (op->kind != IR_CONVERT_LAYOUT && op->kind != IR_EXPAND_DIMS && op->kind != IR_RESHAPE &&
        op->kind != IR_BROADCAST)
        return false;
    const IrValue *in = op->operands[0], *res = op->results[0];
    if (op->kind == IR_CONVERT_LAYOUT && cg->staged[res->id])
        return true;
    if (in->layout && in->layout->kind == LY_SHARED)
        return false;
    return res->type.rank == 0 || (op->kind == IR_BROADCAST && type_numel(in->type) == 1) ||
        cg_layout_same(cg, in, res) || cg_can_remat(cg, in);
}

bool cg_emit_shape(Cg *cg, const IrOp *op)
{
    const IrValue *in = op->nops > 0 ? op->operands[0] : NULL;
    Type rt = op->nres > 0 ? op->results[0]->type : type_scalar(DT_VOID);
    switch (op->kind) {
    case IR_SPLAT:
        cg_set(cg, op->results[0], splat(cg, cg_get(cg, in).el[0], op->results[0]));
        return true;
    case IR_CONVERT_LAYOUT:
        /* A and B of a tensor-core dot are staged by the dot itself (mma.c),
         * unless the registers already hold the fragments (an accumulator
         * fed to the next dot) */
        if (cg->staged[op->results[0]->id] &&
            (!in->layout || in->layout->kind == LY_SHARED ||
             !cg_layout_same(cg, in, op->results[0]))) {
            cg_convert_quad(cg, op); /* else the dot stages it */
            return true;
        }
        if (in->def && in->def->kind == IR_SHARED_VIEW && !in->def->sub) {
            cg_read_ring(cg, op); /* a ring read into registers (pipeline_loads.c) */
            return true;
        }
        /* fall through */
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_BROADCAST: {
        CgVal r;
        if (rt.rank == 0) { /* a one-element block to its scalar (x.item()): any copy is it */
            r = cg_val_new(cg, 1);
            r.el[0] = cg_get(cg, in).el[0];
            cg_set(cg, op->results[0], r);
        } else if (op->kind == IR_BROADCAST && type_numel(in->type) == 1)
            cg_set(cg, op->results[0], splat(cg, cg_get(cg, in).el[0], op->results[0]));
        else if (cg_layout_same(cg, in, op->results[0]))
            cg_set(cg, op->results[0], cg_get(cg, in));
        else if (reg_permute(cg, op, &r))
            cg_set(cg, op->results[0], r);
        else if (!remat(cg, op) && !remat_staged(cg, op)) {
            Type src = in->type;
            bool bc = op->kind == IR_BROADCAST;
            cg_set(cg, op->results[0], convert(cg, op, bc ? map_broadcast : NULL, &src));
        }
        return true;
    }
    case IR_TRANS: {
        if (in->layout && in->layout->kind == LY_SHARED)
            return true; /* a ring tile read the other way round by its dot (mma.c) */
        int perm[TK_MAX_RANK];
        for (int d = 0; d < rt.rank; d++)
            perm[d] = op->nints > d ? op->ints[d] : rt.rank - 1 - d;
        cg_set(cg, op->results[0], cg_convert_trans(cg, op, perm));
        return true;
    }
    case IR_JOIN:
    case IR_CAT: emit_join(cg, op); return true;
    case IR_SPLIT: emit_split(cg, op); return true;
    case IR_PARTNER: cg_set(cg, op->results[0], partner(cg, op)); return true;
    default: return false;
    }
}
