/* codegen/layout.c: the canonical layout of a shape (which thread holds which
 * element), shared-memory conversion, and the shape ops built on it.
 * Assumes power-of-two shapes and thread counts; guarantees every shape op
 * is correct for blocks smaller than the CTA (repeated) and larger (several
 * chunks per thread), each conversion ending in a barrier so shared memory
 * can be reused by the next op. */
#include <stdio.h>
#include <string.h>

#include "codegen/cg.h"

static int log2i(int64_t v)
{
    int n = 0;
    while (((int64_t)1 << n) < v)
        n++;
    return n;
}

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
    l.per_thread = 1 << l.lin.nreg;
    l.v = lin_contiguous(&l.lin);
    if (l.v > 16)
        l.v = 16;
    l.nchunks = l.numel / l.v;
    l.k = l.per_thread / l.v;
    l.copies = lin_thread_copies(&l.lin);
    return l;
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
        if (log2i(ll->thread[i]))
            bits = LLVMBuildShl(cg->b, bits, cg_i32(cg, log2i(ll->thread[i])), "");
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

static int64_t stride_of(const Type *t, int d)
{
    int64_t s = 1;
    for (int i = d + 1; i < t->rank; i++)
        s *= t->shape[i];
    return s;
}

LLVMValueRef cg_coord(Cg *cg, LLVMValueRef lin, const Type *t, int d)
{
    int sh = log2i(stride_of(t, d));
    LLVMValueRef x = sh ? LLVMBuildLShr(cg->b, lin, cg_i32(cg, sh), "") : lin;
    return LLVMBuildAnd(cg->b, x, cg_i32(cg, t->shape[d] - 1), "");
}

void cg_smem_need(Cg *cg, int64_t bytes)
{
    if (cg->smem_reserved + bytes > cg->smem_bytes)
        cg->smem_bytes = cg->smem_reserved + bytes;
}

LLVMValueRef cg_smem_addr_at(Cg *cg, LLVMValueRef byte_off, LLVMValueRef idx, DType dt)
{
    LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx);
    LLVMValueRef base = LLVMBuildInBoundsGEP2(cg->b, i8, cg->smem, &byte_off, 1, "");
    return LLVMBuildInBoundsGEP2(cg->b, cg_mem_type(cg, dt), base, &idx, 1, "");
}

LLVMValueRef cg_smem_addr(Cg *cg, int64_t byte_off, LLVMValueRef idx, DType dt)
{
    return cg_smem_addr_at(cg, cg_i32(cg, cg->smem_reserved + byte_off), idx, dt);
}

/* Every thread of the program, or past a producer split the consumers
 * alone at named barrier 1 (the producer never arrives at barrier 0). */
void cg_barrier(Cg *cg)
{
    if (!cg->consumers) {
        cg_intrinsic(cg, "llvm.nvvm.barrier0", NULL, 0, NULL, 0);
        return;
    }
    char text[48];
    snprintf(text, sizeof text, "bar.sync 1, %d;", cg->consumers);
    cg_asm_void(cg, text);
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
        c = LLVMBuildShl(cg->b, c, cg_i32(cg, log2i(stride_of(src, d))), "");
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

static CgVal splat(Cg *cg, LLVMValueRef x, const IrValue *v)
{
    CgVal r = cg_val_new(cg, cg_layout(cg, v).per_thread);
    for (int s = 0; s < r.n; s++)
        r.el[s] = x;
    return r;
}

/* A plain conversion's scratch. Element bits that are register bits of
 * both layouts may be moved in rounds, the scratch holding the elements of
 * one value of those bits at a time (at the squeezed index: the index with
 * those bits taken out); rounds are used only where the scratch would
 * otherwise raise the kernel's shared memory (see conversion_rounds).
 * Rows of the squeezed scratch that span every bank (128 bytes or more)
 * are swizzled: the 16-byte chunk j of row r sits at chunk j ^ x(r), x
 * taking three bits of r. An access whose lanes cover less than a row
 * (an mma layout's 8 rows of the same columns, a transpose's reads down a
 * column) puts the lanes that differ only in r in one bank unless x tells
 * them apart, so x takes the row bits those lanes differ in; by default
 * (and for an mma layout) r mod 8. Padding each row by 16 bytes would
 * avoid the conflicts too, at 16 bytes a row of room. Squeeze and swizzle
 * are functions of the linear index alone, so both sides agree on them,
 * and both are linear over XOR: an element's place is the thread part's
 * place XOR the slot part's. */
typedef struct Scratch {
    int64_t rep; /* element bits moved in rounds */
    bool swz;    /* whether the squeezed index is swizzled */
    int shift;   /* log2 of the squeezed row length in elements */
    int chunk;   /* log2 of the elements in 16 bytes */
    int xb[3];   /* the row bits x takes, above shift */
} Scratch;

/* x(r) of a squeezed index e, in place for XOR into its chunk bits. */
static int64_t swizzle_const(const Scratch *sc, int64_t e)
{
    int64_t x = 0;
    for (int i = 0; i < 3; i++)
        x |= (e >> (sc->shift + sc->xb[i]) & 1) << i;
    return x << sc->chunk;
}

static int64_t squeeze_const(int64_t e, int64_t rep)
{
    for (int b = 62; b >= 0; b--)
        if (rep >> b & 1)
            e = (e & (((int64_t)1 << b) - 1)) | (e >> 1 & ~(((int64_t)1 << b) - 1));
    return e;
}

static int64_t scratch_const(const Scratch *sc, int64_t e)
{
    e = squeeze_const(e, sc->rep);
    return sc->swz ? e ^ swizzle_const(sc, e) : e;
}

/* Every bit a thread part of l may have in scratch. */
static int64_t scratch_thread_bits(const CgLayout *l, const Scratch *sc)
{
    int64_t m = 0;
    for (int i = 0; i < l->lin.nthread; i++)
        m |= l->lin.thread[i];
    m = squeeze_const(m, sc->rep);
    return sc->swz ? m | swizzle_const(sc, m) : m;
}

/* The thread part of l's index in scratch (it has none of the rep bits). */
static LLVMValueRef scratch_thread(Cg *cg, const CgLayout *l, const Scratch *sc)
{
    LLVMValueRef t = cg_thread_index(cg, l);
    for (int b = 62; b >= 0; b--)
        if (sc->rep >> b & 1) {
            LLVMValueRef hi = LLVMBuildLShr(cg->b, t, cg_i32(cg, 1), "");
            hi = LLVMBuildAnd(cg->b, hi, cg_i32(cg, ~(((int64_t)1 << b) - 1)), "");
            t = LLVMBuildOr(cg->b, LLVMBuildAnd(cg->b, t, cg_i32(cg, ((int64_t)1 << b) - 1), ""),
                            hi, "");
        }
    if (!sc->swz)
        return t;
    if (sc->xb[2] == sc->xb[0] + 2) { /* three bits in a row: one field */
        LLVMValueRef row =
            LLVMBuildAnd(cg->b, LLVMBuildLShr(cg->b, t, cg_i32(cg, sc->shift + sc->xb[0]), ""),
                         cg_i32(cg, 7), "");
        return LLVMBuildXor(cg->b, t, LLVMBuildShl(cg->b, row, cg_i32(cg, sc->chunk), ""), "");
    }
    LLVMValueRef x = NULL;
    for (int i = 0; i < 3; i++) {
        int from = sc->shift + sc->xb[i], to = sc->chunk + i;
        LLVMValueRef b = LLVMBuildAnd(cg->b, t, cg_i32(cg, (int64_t)1 << from), "");
        b = from > to ? LLVMBuildLShr(cg->b, b, cg_i32(cg, from - to), "")
                      : LLVMBuildShl(cg->b, b, cg_i32(cg, to - from), "");
        x = x ? LLVMBuildOr(cg->b, x, b, "") : b;
    }
    return LLVMBuildXor(cg->b, t, x, "");
}

/* The index in scratch of slot s of layout l. The slot's bits that no
 * thread part can have are added (LLVM folds them into the access's
 * immediate offset, and merges neighbours into vectors once the addition
 * is marked as not wrapping: indices stay below the scratch's size); the
 * others are XORed in. */
static LLVMValueRef scratch_index(Cg *cg, const CgLayout *l, LLVMValueRef tsc, const Scratch *sc,
                                  int s)
{
    int64_t c = scratch_const(sc, cg_slot_index(l, s) & ~sc->rep);
    int64_t m = scratch_thread_bits(l, sc);
    LLVMValueRef r = tsc;
    if (c & m)
        r = LLVMBuildXor(cg->b, r, cg_i32(cg, c & m), "");
    return c & ~m ? LLVMBuildNUWAdd(cg->b, r, cg_i32(cg, c & ~m), "") : r;
}

/* The alignment in bytes of slot s of l in scratch: the swizzle moves
 * whole 16-byte chunks, so what the squeezed index's bits below a chunk
 * allow (a thread's part is a multiple of its smallest bit), at most 16.
 * Stated on each access, so that LLVM merges neighbours into vectors. */
static unsigned scratch_align(const CgLayout *l, const Scratch *sc, int s, int bytes)
{
    int64_t a = (int64_t)1 << sc->chunk;
    for (int i = 0; i < l->lin.nthread; i++) {
        int64_t low = squeeze_const(l->lin.thread[i], sc->rep);
        low &= -low;
        if (low && low < a)
            a = low;
    }
    int64_t r = squeeze_const(cg_slot_index(l, s) & ~sc->rep, sc->rep);
    if (r && (r & -r) < a)
        a = r & -r;
    return (unsigned)(a * bytes);
}

static bool power_of_two_bases(const LinLayout *l)
{
    for (int i = 0; i < l->nreg; i++)
        if (l->reg[i] & (l->reg[i] - 1))
            return false;
    for (int i = 0; i < l->nthread; i++)
        if (l->thread[i] & (l->thread[i] - 1))
            return false;
    return true;
}

/* Element bits that are register bits of both layouts, the highest first
 * (they split a thread's vector accesses least). */
static int common_reg_bits(const CgLayout *a, const CgLayout *b, int64_t *bits, int max)
{
    int n = 0;
    if (!power_of_two_bases(&a->lin) || !power_of_two_bases(&b->lin))
        return 0;
    for (int i = a->lin.nreg - 1; i >= 0 && n < max; i--)
        for (int j = 0; j < b->lin.nreg; j++)
            if (a->lin.reg[i] && a->lin.reg[i] == b->lin.reg[j])
                bits[n++] = a->lin.reg[i];
    return n;
}

/* Rounds are taken where the scratch would set the kernel's shared memory
 * and cost it once: no rings are live (scratch beside live rings adds to
 * them whatever its size, and the rings' room is Triton's too), the
 * conversion is outside loops (its barriers would be paid on every
 * iteration), and it needs more than the kernel has needed so far. Then as
 * many rounds as bring it within that, up to four (two barriers a round). */
static int64_t conversion_rounds(Cg *cg, const IrOp *op, const CgLayout *li, const CgLayout *lo,
                                 int64_t bytes)
{
    int64_t bits[2], rep = 0;
    int n = cg->smem_reserved || cg_in_loop(op) ? 0 : common_reg_bits(li, lo, bits, 2);
    for (int i = 0; i < n && cg->smem_reserved + bytes > cg->smem_bytes; i++) {
        rep |= bits[i];
        bytes /= 2;
    }
    return rep;
}

/* The row bits (above sc->shift) that l's lanes differ in, where its
 * lanes cover less than a row of 128 bytes: a warp's access then meets
 * its rows in the same banks unless the swizzle parts them. */
static int narrow_row_lanes(const CgLayout *l, const Scratch *sc, int bytes, int *bits)
{
    int ncol = 0, n = 0, nlane = l->lin.nthread < 5 ? l->lin.nthread : 5;
    int width = l->v < (1 << sc->chunk) ? l->v : (1 << sc->chunk);
    for (int i = 0; i < nlane; i++) {
        int64_t v = squeeze_const(l->lin.thread[i], sc->rep);
        if (v && v < ((int64_t)1 << sc->shift))
            ncol++;
        else if (v && !(v & (v - 1)))
            bits[n++] = log2i(v) - sc->shift;
    }
    return ((int64_t)width * bytes << ncol) < 128 ? n : 0;
}

/* The swizzle's row bits: those the narrow accesses of li, then lo, need
 * parted, then the lowest others, in increasing order. */
static void swizzle_bits(const CgLayout *li, const CgLayout *lo, int bytes, Scratch *sc)
{
    int bits[20], n = narrow_row_lanes(li, sc, bytes, bits), k = 0;
    n += narrow_row_lanes(lo, sc, bytes, bits + n);
    for (int i = 0; i < n && k < 3; i++) {
        bool seen = false;
        for (int j = 0; j < k; j++)
            seen |= sc->xb[j] == bits[i];
        if (!seen)
            sc->xb[k++] = bits[i];
    }
    for (int b = 0; k < 3; b++) {
        bool seen = false;
        for (int j = 0; j < k; j++)
            seen |= sc->xb[j] == b;
        if (!seen)
            sc->xb[k++] = b;
    }
    for (int i = 1; i < 3; i++) /* in order: r mod 8 stays the plain mask */
        for (int j = i; j > 0 && sc->xb[j - 1] > sc->xb[j]; j--) {
            int x = sc->xb[j];
            sc->xb[j] = sc->xb[j - 1];
            sc->xb[j - 1] = x;
        }
}

/* The scratch of converting t's elements from li to lo. */
static Scratch scratch_for(Cg *cg, const IrOp *op, const CgLayout *li, const CgLayout *lo,
                           const Type *t)
{
    int bytes = cg_mem_bytes(t->dt);
    int64_t numel = type_numel(*t), row = t->rank >= 2 ? t->shape[t->rank - 1] : 0;
    Scratch sc = {conversion_rounds(cg, op, li, lo, numel * bytes), false, 0, 0, {0, 1, 2}};
    sc.chunk = bytes <= 16 ? log2i(16 / bytes) : 0;
    int64_t rowq = row >> __builtin_popcountll(sc.rep & (row - 1));
    int64_t nq = numel >> __builtin_popcountll(sc.rep);
    if (row > 0 && rowq * bytes >= 128 && (rowq * bytes) % 128 == 0 && bytes <= 16 && nq != rowq) {
        sc.swz = true;
        sc.shift = log2i(rowq);
        swizzle_bits(li, lo, bytes, &sc);
    }
    return sc;
}

/* How many slots from s on one access of l moves: consecutive slots at
 * consecutive indices, as many as slot s's alignment holds (a power of
 * two). i1 travels a byte at a time. */
static int scratch_run(const CgLayout *l, const Scratch *sc, int s, int n, DType dt)
{
    int bytes = cg_mem_bytes(dt);
    int max = dt == DT_I1 ? 1 : (int)scratch_align(l, sc, s, bytes) / bytes;
    int64_t base = cg_slot_index(l, s), round = base & sc->rep;
    base = squeeze_const(base & ~sc->rep, sc->rep);
    int k = 1;
    while (k < max && s + k < n && (cg_slot_index(l, s + k) & sc->rep) == round &&
           squeeze_const(cg_slot_index(l, s + k) & ~sc->rep, sc->rep) == base + k)
        k++;
    while (k & (k - 1))
        k &= k - 1;
    return k;
}

/* Writes slots s..s+k-1 of x as one vector of their own type (LLVM pairs
 * two float-to-half conversions into one where they meet in a vector);
 * an i1 (always alone) as a byte. */
static void put_run(Cg *cg, const CgVal *x, int s, int k, LLVMValueRef p, unsigned align)
{
    LLVMValueRef v = x->el[s];
    if (LLVMTypeOf(v) == LLVMInt1TypeInContext(cg->ctx))
        v = LLVMBuildZExt(cg->b, v, LLVMInt8TypeInContext(cg->ctx), "");
    if (k > 1) {
        v = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(x->el[s]), (unsigned)k));
        for (int j = 0; j < k; j++)
            v = LLVMBuildInsertElement(cg->b, v, x->el[s + j], cg_i32(cg, j), "");
    }
    LLVMSetAlignment(LLVMBuildStore(cg->b, v, p), align);
}

/* Reads k slots into el: elements under 32 bits as whole words, unpacked
 * as global accesses unpack them, so a run that goes on to a global store
 * is packed back into the very words read (no repacking per element). */
static void take_run(Cg *cg, DType dt, int k, LLVMValueRef p, unsigned align, LLVMValueRef *el)
{
    int bytes = cg_mem_bytes(dt), nw = k * bytes / 4;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    if (k == 1 || bytes >= 4 || nw < 1) {
        LLVMTypeRef t =
            k == 1 ? cg_mem_type(cg, dt) : LLVMVectorType(cg_mem_type(cg, dt), (unsigned)k);
        LLVMValueRef v = LLVMBuildLoad2(cg->b, t, p, "");
        LLVMSetAlignment(v, align);
        for (int j = 0; j < k; j++) {
            LLVMValueRef e = k == 1 ? v : LLVMBuildExtractElement(cg->b, v, cg_i32(cg, j), "");
            el[j] = dt == DT_I1 ? LLVMBuildTrunc(cg->b, e, LLVMInt1TypeInContext(cg->ctx), "") : e;
        }
        return;
    }
    LLVMValueRef v =
        LLVMBuildLoad2(cg->b, nw == 1 ? i32 : LLVMVectorType(i32, (unsigned)nw), p, "");
    LLVMSetAlignment(v, align);
    LLVMValueRef words[4];
    for (int w = 0; w < nw; w++)
        words[w] = nw == 1 ? v : LLVMBuildExtractElement(cg->b, v, cg_i32(cg, w), "");
    cg_unpack_words(cg, dt, k, words, el);
}

/* A conversion through scratch: op's operand, in li, to r in lo, both
 * over the index space of t (for a transpose, the operand's: lo is then
 * the result's layout with its dims permuted back). */
typedef struct Conversion {
    const IrOp *op;
    CgLayout li, lo;
    Type t;
} Conversion;

/* One round: the slots of x whose rep bits are `round` into scratch, and
 * those of r from it. */
static void convert_round(Cg *cg, const Conversion *c, const Scratch *sc, int64_t round, CgVal *r)
{
    DType dt = c->t.dt;
    int bytes = cg_mem_bytes(dt);
    CgLayout li = c->li, lo = c->lo;
    CgVal x = cg_get(cg, c->op->operands[0]);
    LLVMValueRef tin = scratch_thread(cg, &li, sc);
    for (int s = 0, k = 1; s < x.n; s += k) {
        k = 1;
        if ((cg_slot_index(&li, s) & sc->rep) != round)
            continue;
        k = scratch_run(&li, sc, s, x.n, dt);
        LLVMValueRef p = cg_smem_addr(cg, 0, scratch_index(cg, &li, tin, sc, s), dt);
        put_run(cg, &x, s, k, p, scratch_align(&li, sc, s, bytes));
    }
    cg_barrier(cg);
    LLVMValueRef tout = scratch_thread(cg, &lo, sc);
    for (int s = 0, k = 1; s < r->n; s += k) {
        k = 1;
        if ((cg_slot_index(&lo, s) & sc->rep) != round)
            continue;
        k = scratch_run(&lo, sc, s, r->n, dt);
        LLVMValueRef p = cg_smem_addr(cg, 0, scratch_index(cg, &lo, tout, sc, s), dt);
        take_run(cg, dt, k, p, scratch_align(&lo, sc, s, bytes), r->el + s);
    }
    cg_barrier(cg);
}

static CgVal convert_through(Cg *cg, const Conversion *c)
{
    Scratch sc = scratch_for(cg, c->op, &c->li, &c->lo, &c->t);
    int64_t size = type_numel(c->t) * cg_mem_bytes(c->t.dt);
    cg_smem_need(cg, size >> __builtin_popcountll(sc.rep));
    CgVal r = cg_val_new(cg, c->lo.per_thread);
    /* every value of the rep bits: the subsets of the mask */
    int64_t round = 0;
    do {
        convert_round(cg, c, &sc, round, &r);
        round = (round - sc.rep) & sc.rep;
    } while (round);
    return r;
}

static CgVal convert_plain(Cg *cg, const IrOp *op)
{
    const IrValue *in = op->operands[0], *out = op->results[0];
    Conversion c = {op, cg_layout(cg, in), cg_layout(cg, out), out->type};
    return convert_through(cg, &c);
}

/* Index b of dst (linear over XOR: a sum of bit fields) as an index of
 * src, whose dim perm[d] is dst's dim d. */
static int64_t permute_index(int64_t b, const Type *dst, const Type *src, const int *perm)
{
    int64_t r = 0;
    for (int d = 0; d < dst->rank; d++) {
        int64_t c = (b >> log2i(stride_of(dst, d))) & (dst->shape[d] - 1);
        r |= c << log2i(stride_of(src, perm[d]));
    }
    return r;
}

/* A transpose as a plain conversion: the result's layout seen over the
 * operand's index space (each basis element's coordinates permuted back),
 * so that its scratch is swizzled for both sides' accesses and read and
 * written in runs, as any conversion's. Element by element through the
 * row-major scratch, a 64x64 fp16 transpose read each element alone, and
 * the 8 rows a warp read at once fell in one bank. */
static CgVal trans_plain(Cg *cg, const IrOp *op, const int *perm)
{
    const IrValue *in = op->operands[0], *out = op->results[0];
    Conversion c = {op, cg_layout(cg, in), cg_layout(cg, out), in->type};
    LinLayout *ll = &c.lo.lin;
    for (int i = 0; i < ll->nreg; i++)
        ll->reg[i] = permute_index(ll->reg[i], &out->type, &in->type, perm);
    for (int i = 0; i < ll->nthread; i++)
        ll->thread[i] = permute_index(ll->thread[i], &out->type, &in->type, perm);
    c.lo.v = lin_contiguous(ll) < 16 ? lin_contiguous(ll) : 16;
    c.lo.nchunks = c.lo.numel / c.lo.v;
    c.lo.k = c.lo.per_thread / c.lo.v;
    return convert_through(cg, &c);
}

static CgVal convert(Cg *cg, const IrOp *op, CgIndexMap map, void *ctx)
{
    if (!map)
        return convert_plain(cg, op);
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
    if (li.lin.nthread != lo.lin.nthread)
        return false;
    for (int j = 0; j < lo.lin.nthread; j++)
        if (map_offset(&out->type, &in->type, lo.lin.thread[j], bc) != li.lin.thread[j])
            return false;
    int pos[64];
    for (int k = 0; k < 64; k++)
        pos[k] = -1;
    for (int i = 0; i < li.lin.nreg; i++)
        if (li.lin.reg[i])
            pos[log2i(li.lin.reg[i])] = i;
    CgVal x = cg_get(cg, in);
    CgVal r = cg_val_new(cg, lo.per_thread);
    for (int s = 0; s < r.n; s++) {
        int64_t o = 0;
        for (int i = 0; i < lo.lin.nreg; i++)
            if (s >> i & 1)
                o |= lo.lin.reg[i];
        int64_t t = map_offset(&out->type, &in->type, o, bc), slot = 0;
        for (int k = 0; t >> k; k++)
            if (t >> k & 1) {
                if (pos[k] < 0)
                    return false;
                slot |= (int64_t)1 << pos[k];
            }
        if (slot >= x.n)
            return false;
        r.el[s] = x.el[slot];
    }
    *res = r;
    return true;
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
             !cg_layout_same(cg, in, op->results[0])))
            return true;
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
        cg_set(cg, op->results[0], trans_plain(cg, op, perm));
        return true;
    }
    case IR_JOIN:
    case IR_CAT: emit_join(cg, op); return true;
    case IR_SPLIT: emit_split(cg, op); return true;
    default: return false;
    }
}
