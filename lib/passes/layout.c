/* layout.c: layout assignment (pass_layout). Gives every block value a
 * layout and inserts convert_layout ops where a use needs another one.
 *
 * Anchors: loads and stores fix the blocked layout of their shape (vector
 * width from axis analysis, one layout per shape, as wide as the widest
 * access allows); a dot that tensor cores can run gets an mma accumulator
 * and dot-operand layouts for A and B. The mma layout then spreads forwards
 * through elementwise ops and loop-carried values, as long as their other
 * operands are cheap to recompute (index arithmetic, constants), so an
 * accumulator stays in registers across a K loop and is converted once, or
 * not at all when the store's pointers can be recomputed in its layout.
 * Ops that work on blocked layouts only (reductions, scans, shape ops, the
 * FMA dot, atomics) get their operands converted back.
 *
 * Assumes verified IR without layouts; guarantees every block value has a
 * layout whose linear form exists for its shape, and that every op's
 * operands have the layouts the op needs (checked by ir_verify). */
#include "passes/passes.h"

#include <string.h>

enum { MAX_SHAPES = 64, REMAT_BUDGET = 48, PULL_DEPTH = 8 };

typedef struct ShapeVec {
    int rank;
    int shape[TK_MAX_RANK];
    int v;
} ShapeVec;

typedef struct LayoutPass {
    IrFunc *f;
    int threads;
    ShapeVec shapes[MAX_SHAPES];
    int nshapes;
    const AxisInfo *axis;
    unsigned char *rows; /* by value id: its rows are reduced (mark_rows) */
    bool changed;
    bool failed;
} LayoutPass;

/* ---- the blocked layout of a shape ------------------------------------------------ */

static ShapeVec *shape_entry(LayoutPass *p, const Type *t)
{
    for (int i = 0; i < p->nshapes; i++)
        if (p->shapes[i].rank == t->rank &&
            memcmp(p->shapes[i].shape, t->shape, sizeof(int) * (size_t)t->rank) == 0)
            return &p->shapes[i];
    return NULL;
}

static int mem_bytes(DType dt) { return dt == DT_I1 ? 1 : dtype_bits(dt) / 8; }

static bool note_access(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    if ((op->kind != IR_LOAD && op->kind != IR_STORE) || op->nops < 1)
        return true;
    const IrValue *ptr = op->operands[0];
    const IrValue *mask = op->kind == IR_LOAD ? (op->nops > 1 ? op->operands[1] : NULL)
                                              : (op->nops > 2 ? op->operands[2] : NULL);
    if (ptr->type.rank == 0)
        return true;
    int vw = axis_vector_width(p->axis, ptr, mask, mem_bytes(ptr->type.elem));
    vw = vw > 16 ? 16 : vw < 1 ? 1 : vw;
    ShapeVec *e = shape_entry(p, &ptr->type);
    if (!e) {
        if (p->nshapes >= MAX_SHAPES)
            return true;
        e = &p->shapes[p->nshapes++];
        e->rank = ptr->type.rank;
        memcpy(e->shape, ptr->type.shape, sizeof e->shape);
        e->v = vw;
    } else if (vw > e->v) {
        e->v = vw;
    }
    return true;
}

/* Elements per thread along the last dim: the widest access of the shape,
 * but no wider than leaves every thread some work (as Triton does); 4 (or
 * the dim) for shapes no load or store touches. */
static int shape_vec(LayoutPass *p, const Type *t)
{
    int last = t->shape[t->rank - 1];
    int v = last < 4 ? (last > 0 ? last : 1) : 4;
    const ShapeVec *e = shape_entry(p, t);
    if (e && e->v <= last) {
        int64_t fill = type_numel(*t) / p->threads;
        v = e->v;
        while (v > 1 && v > fill)
            v /= 2;
    }
    return v;
}

static const Layout *blocked_of(LayoutPass *p, const Type *t)
{
    Layout l = layout_blocked_default(t->rank, t->shape, shape_vec(p, t), p->threads);
    const Layout *r = ir_layout_intern(p->f, &l);
    if (!r)
        p->failed = true;
    return r;
}

/* ---- which values can be recomputed in any layout ------------------------------------ */

static bool cheap_op(const IrOp *op)
{
    switch (op->kind) {
    case IR_ADD:
    case IR_SUB:
    case IR_MUL:
    case IR_AND:
    case IR_OR:
    case IR_XOR:
    case IR_SHL:
    case IR_SHR:
    case IR_MIN:
    case IR_MAX:
    case IR_NEG:
    case IR_NOT:
    case IR_CMP:
    case IR_SELECT:
    case IR_CAST:
    case IR_BITCAST:
    case IR_ADDPTR:
    case IR_PTR_TO_INT:
    case IR_INT_TO_PTR:
    case IR_UMULHI:
    case IR_FMA: return true;
    case IR_DIV:
    case IR_REM: return dtype_is_int(op->results[0]->type.dt);
    default: return false;
    }
}

static bool remat_ok(const IrValue *v, int *budget)
{
    if (v->type.rank == 0)
        return true;
    const IrOp *op = v->def;
    if (!op || --*budget < 0)
        return false;
    switch (op->kind) {
    case IR_CONST:
    case IR_ARANGE: return true;
    case IR_SPLAT:
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_BROADCAST:
    case IR_CONVERT_LAYOUT:
    case IR_HINT: /* a hint changes no value */ return remat_ok(op->operands[0], budget);
    default: break;
    }
    if (!cheap_op(op))
        return false;
    for (int i = 0; i < op->nops; i++)
        if (!remat_ok(op->operands[i], budget))
            return false;
    return true;
}

bool pass_can_remat(const IrValue *v)
{
    int budget = REMAT_BUDGET;
    return remat_ok(v, &budget);
}

/* ---- tensor-core dots ------------------------------------------------------------------ */

/* The instruction K and the elements per 32-bit register of an mma.sync for
 * this dot, or false when it needs the FMA path. */
static bool mma_shape(const IrOp *op, int *instr_k, int *kpack)
{
    Type a = op->operands[0]->type, b = op->operands[1]->type, c = op->results[0]->type;
    bool fp8 = dtype_is_fp8(a.dt) && dtype_is_fp8(b.dt); /* either format on either side */
    if (a.rank != 2 || (a.dt != b.dt && !fp8))
        return false;
    if (((a.dt == DT_F16 || a.dt == DT_BF16) && c.dt == DT_F32) ||
        (a.dt == DT_F16 && c.dt == DT_F16)) {
        *instr_k = 16;
        *kpack = 2;
    } else if (a.dt == DT_F32 && c.dt == DT_F32 && (op->sub == DOT_TF32 || op->sub == DOT_TF32X3)) {
        /* tf32x3 runs as three tf32 products (codegen/mma.c) */
        *instr_k = 8;
        *kpack = 1;
    } else if ((a.dt == DT_I8 && c.dt == DT_I32) || (fp8 && c.dt == DT_F32)) {
        *instr_k = 32;
        *kpack = 4;
    } else {
        return false;
    }
    return c.shape[0] >= 16 && c.shape[1] >= 8 && a.shape[1] >= *instr_k;
}

static bool fits(const LayoutPass *p, const Layout *l, const Type *t)
{
    LinLayout ll;
    return layout_linear(l, t->rank, t->shape, p->threads, &ll);
}

static bool is_mma(const IrValue *v) { return v && v->layout && v->layout->kind == LY_MMA; }

static bool elementwise(IrKind k) { return ir_kind_elementwise(k); }

/* ---- which dots keep rows in one warp -------------------------------------------------- */

/* Values whose rows are reduced (attention's row max and row sum), traced
 * back through elementwise ops: a dot producing one puts all its warps along
 * M, so each row lives in one warp and the reduction needs no shared memory;
 * a dot whose A operand comes from such a value does the same, so that both
 * accumulators share one layout. */
static bool mark_rows(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    if (op->kind == IR_REDUCE && op->nops == 1 && op->operands[0]->type.rank == 2 &&
        op->axis == 1 && !p->rows[op->operands[0]->id]) {
        p->rows[op->operands[0]->id] = 1;
        p->changed = true;
    }
    if (op->nres == 1 && op->results[0]->type.rank && p->rows[op->results[0]->id]) {
        if (elementwise(op->kind) || op->kind == IR_CONVERT_LAYOUT)
            for (int i = 0; i < op->nops; i++)
                if (op->operands[i]->type.rank && !p->rows[op->operands[i]->id]) {
                    p->rows[op->operands[i]->id] = 1;
                    p->changed = true;
                }
    }
    const IrValue *a = op->kind == IR_DOT ? op->operands[0] : NULL;
    while (a && a->def && (a->def->kind == IR_CAST || a->def->kind == IR_CONVERT_LAYOUT) &&
           !p->rows[a->id])
        a = a->def->operands[0];
    if (a && p->rows[a->id] && !p->rows[op->results[0]->id]) {
        p->rows[op->results[0]->id] = 1;
        p->changed = true;
    }
    return true;
}

/* sm_90a: warpgroup MMA where every warp can stand along M (a warpgroup per
 * 64 rows) and the dtypes have a wgmma form: fp16 and bf16 (operands of
 * either majorness), tf32, tf32x3 (three tf32 products of split operands),
 * int8 and fp8 of either format on either side (operands K-major, which
 * codegen and the pipeline arrange). Codegen falls back to mma.sync on the
 * same placement where an operand is not in shared memory as wgmma needs it. */
static bool wgmma_fits(const LayoutPass *p, const IrOp *op, int warps, int instr_k)
{
    Type a = op->operands[0]->type, b = op->operands[1]->type, c = op->results[0]->type;
    if (!p->f->arch || strcmp(p->f->arch, "sm_90a") != 0 || warps % 4 != 0)
        return false;
    bool f16 = (a.dt == DT_F16 || a.dt == DT_BF16) && c.dt == DT_F32;
    bool tf32 = a.dt == DT_F32 && c.dt == DT_F32 && (op->sub == DOT_TF32 || op->sub == DOT_TF32X3);
    bool i8 = a.dt == DT_I8 && c.dt == DT_I32;
    bool fp8 = dtype_is_fp8(a.dt) && dtype_is_fp8(b.dt) && c.dt == DT_F32;
    if (!f16 && !tf32 && !i8 && !fp8)
        return false;
    return c.shape[0] % (16 * warps) == 0 && c.shape[1] % 8 == 0 && a.shape[1] % instr_k == 0;
}

/* An mma layout that keeps each row in one warp where M has a 16-row tile
 * for every warp; where it has fewer (decode: a few query heads), the other
 * warps go along N rather than repeat the same rows, and row reductions
 * cross warps through shared memory, which costs less than every warp doing
 * the whole product (and holding the whole accumulator). */
static Layout rows_layout(int M, int N, int warps, int instr_k)
{
    Layout l = layout_mma_rows(M, warps, instr_k);
    while (l.wm * l.wn < warps && N >= 16 * l.wn)
        l.wn *= 2;
    return l;
}

static bool assign_dot(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    int instr_k, kpack;
    if (op->kind != IR_DOT || !mma_shape(op, &instr_k, &kpack))
        return true;
    Type c = op->results[0]->type;
    int warps = p->threads / 32;
    Layout mma = p->rows[op->results[0]->id] ? rows_layout(c.shape[0], c.shape[1], warps, instr_k)
                                             : layout_mma(c.shape[0], c.shape[1], warps, instr_k);
    if (wgmma_fits(p, op, warps, instr_k))
        mma = layout_wgmma(c.shape[0], warps, instr_k);
    Layout a = layout_dot_op(&mma, 0, kpack), b = layout_dot_op(&mma, 1, kpack);
    if (c.shape[0] < 16 * mma.wm || c.shape[1] < 8 * mma.wn || !fits(p, &mma, &c) ||
        !fits(p, &a, &op->operands[0]->type) || !fits(p, &b, &op->operands[1]->type))
        return true;
    op->results[0]->layout = ir_layout_intern(p->f, &mma);
    return true;
}

/* ---- spreading the mma layouts ---------------------------------------------------------- */

/* An mma layout or a slice of one: kept as far as the values flow. */
static bool special(const IrValue *v)
{
    return v && v->type.rank && v->layout &&
        (v->layout->kind == LY_MMA || v->layout->kind == LY_SLICE);
}

/* Whether a loop's initial value can start in whatever layout the body
 * gives the carried value: it is cheap to recompute, or it already lies in
 * an mma layout or a slice of one (the running max and sum attention
 * carries from one KV loop into the next), converted once before the loop
 * rather than in every iteration. */
static bool init_can_follow(const IrValue *init) { return pass_can_remat(init) || special(init); }

/* A loop-carried value not yet placed whose initial value can follow: it
 * can take whatever layout its loop body gives it (spread_for decides). */
static bool flexible(const IrValue *x)
{
    const IrOp *loop = !x->def && x->owner ? x->owner->parent : NULL;
    return loop && loop->kind == IR_FOR && !x->layout && x->index > 0 &&
        3 + x->index - 1 < loop->nops && init_can_follow(loop->operands[3 + x->index - 1]);
}

static void set_layout(LayoutPass *p, IrValue *v, const Layout *l)
{
    if (l && v->layout != l) {
        v->layout = l;
        p->changed = true;
    }
}

static int reads_in(IrBlock *b, const IrValue *x) { return ir_count_reads(b, x); }

/* Gives x layout l where x is the only use of a value made by pointer or
 * elementwise arithmetic (a scale load's `As_ptrs + k`), and so on back
 * along its operands, so that the conversion lands where the arithmetic
 * starts from shared or loop-invariant values. Values recomputed for free
 * (pass_can_remat) and values read elsewhere are left to be converted. */
static void pull_layout(LayoutPass *p, IrValue *x, const Layout *l, int depth)
{
    const IrOp *d = x ? x->def : NULL;
    if (!d || depth == 0 || x->layout || x->type.rank != 1 || d->nres != 1 ||
        (d->kind != IR_ADDPTR && !elementwise(d->kind)) || pass_can_remat(x) ||
        reads_in(p->f->body, x) != 1)
        return;
    set_layout(p, x, l);
    for (int i = 0; i < d->nops; i++)
        pull_layout(p, d->operands[i], l, depth - 1);
}

/* The expand_dims that x broadcasts a rank-1 vector from (x = broadcast of
 * expand_dims(v, axis), or the expand_dims itself), or NULL. */
static IrOp *expansion_of(const IrValue *x)
{
    IrOp *d = x->def;
    if (d && d->kind == IR_BROADCAST)
        d = d->operands[0]->def;
    if (!d || d->kind != IR_EXPAND_DIMS || d->operands[0]->type.rank != 1 || x->type.rank != 2)
        return NULL;
    return d;
}

/* The slice of mma layout m that vector v, expanded along axis, needs to
 * reach m by expand_dims and broadcast alone, or NULL when it has none. */
static const Layout *slice_for(LayoutPass *p, const Layout *m, const IrValue *v, int axis)
{
    Layout s = {.kind = LY_SLICE, .rank = 1, .parent = m, .dim = axis};
    if (m->kind != LY_MMA || !fits(p, &s, &v->type))
        return NULL;
    const Layout *r = ir_layout_intern(p->f, &s);
    if (!r)
        p->failed = true;
    return r;
}

/* Whether x, a vector broadcast against an mma value (a per-row or
 * per-column scale: `d * a_s[:, None]`), can reach mma layout m in
 * registers once its vector is in a slice of m (place_scale). */
static bool scale_can_follow(LayoutPass *p, const IrValue *x, const Layout *m)
{
    const IrOp *d = expansion_of(x);
    return d && slice_for(p, m, d->operands[0], d->axis);
}

/* Puts the vector that x broadcasts into slice s. A vector not yet placed
 * with fewer elements than threads takes s itself: its load reads a few
 * elements per thread, the same lines as every other thread (as Triton
 * judges such loads cheap). Any other is converted to s once, at the
 * expand_dims: a vector's conversion moves numel elements through shared
 * memory, while a slice of an mma layout can hold many per thread (32 of
 * 128 columns for wgmma), whose loads would each need its own pointer. */
static void place_scale(LayoutPass *p, const IrValue *x, const Layout *s)
{
    IrOp *d = expansion_of(x);
    IrValue *v = d ? d->operands[0] : NULL;
    if (!v || !s || (v->layout && layout_equal(v->layout, s)))
        return;
    /* only a value a plain op makes: a loop's or branch's result shares its
     * layout with the region's values, which are placed on their own */
    if (!v->layout && v->def && v->def->nregions == 0 && type_numel(v->type) < p->threads) {
        set_layout(p, v, s);
        for (int i = 0; v->def && v->def->kind == IR_LOAD && i < v->def->nops; i++)
            pull_layout(p, v->def->operands[i], s, PULL_DEPTH);
        return;
    }
    IrOp *c = ir_op_new(p->f, IR_CONVERT_LAYOUT, d->span, &v, 1, &v->type, 1);
    if (!c || p->f->arena->oom) {
        p->failed = true;
        return;
    }
    c->results[0]->layout = s;
    c->results[0]->name = v->name;
    ir_insert_before(d, c);
    d->operands[0] = c->results[0];
    p->changed = true;
}

/* An elementwise op's operand that will follow: a loop-carried value, or
 * an elementwise op on those and cheap values (a running sum rescaled,
 * `acc * re + tl.sum(...)`). */
static bool will_follow(const IrValue *x)
{
    if (flexible(x))
        return true;
    const IrOp *d = x->def;
    if (!d || x->layout || !elementwise(d->kind))
        return false;
    bool carried = false;
    for (int i = 0; i < d->nops; i++) {
        const IrValue *y = d->operands[i];
        if (flexible(y))
            carried = true;
        else if (y->type.rank && !pass_can_remat(y))
            return false;
    }
    return carried;
}

/* A tile built only from vectors broadcast into it (x[:, None],
 * y[None, :]) through elementwise ops and cheap values, each vector of which
 * has a slice of mma layout m: an SSM chunk scan scales its accumulators by
 * exp(dA[:, None] - dA[None, :]) * dt[None, :]. Such a tile is made in m
 * from its vectors, each converted on its own (a few registers a thread,
 * pull_vectors), rather than the mma tile crossing to a blocked layout and
 * back through shared memory. */
static bool from_vectors(LayoutPass *p, const IrValue *x, const Layout *m, int depth)
{
    const IrOp *d = x->def;
    if (x->type.rank != 2 || x->layout || !d || depth > 8)
        return false;
    if (d->kind == IR_BROADCAST) {
        const IrOp *e = d->operands[0]->def;
        if (!e || e->kind != IR_EXPAND_DIMS || e->results[0]->layout ||
            e->operands[0]->type.rank != 1 || !fits(p, m, &e->results[0]->type))
            return false;
        Layout sl = {.kind = LY_SLICE, .rank = 1, .parent = m, .dim = e->axis};
        return fits(p, &sl, &e->operands[0]->type);
    }
    if (!elementwise(d->kind))
        return false;
    bool any = false;
    for (int i = 0; i < d->nops; i++) {
        const IrValue *y = d->operands[i];
        if (y->type.rank && from_vectors(p, y, m, depth + 1))
            any = true;
        else if (y->type.rank && !pass_can_remat(y))
            return false;
    }
    return any;
}

static bool defined_in(const IrValue *x, const IrBlock *b);

/* Converts each vector of a from_vectors tile to its slice of m, so that
 * the expand_dims, broadcasts and elementwise ops above it spread into m
 * (parts that can be recomputed are, in codegen); a vector that a loop
 * does not change is converted once, before it. */
static void pull_vectors(LayoutPass *p, IrValue *x, const Layout *m)
{
    IrOp *d = x->def;
    if (d->kind != IR_BROADCAST) {
        for (int i = 0; i < d->nops; i++)
            if (!pass_can_remat(d->operands[i]) && from_vectors(p, d->operands[i], m, 0))
                pull_vectors(p, d->operands[i], m);
        return;
    }
    IrOp *e = d->operands[0]->def;
    IrValue *v = e->operands[0];
    Layout sl = {.kind = LY_SLICE, .rank = 1, .parent = m, .dim = e->axis};
    const Layout *want = ir_layout_intern(p->f, &sl);
    if (!want) {
        p->failed = true;
        return;
    }
    if (v->layout && layout_equal(v->layout, want))
        return;
    IrOp *c = ir_op_new(p->f, IR_CONVERT_LAYOUT, e->span, &v, 1, &v->type, 1);
    if (!c || p->f->arena->oom) {
        p->failed = true;
        return;
    }
    c->results[0]->layout = want;
    c->results[0]->name = v->name;
    IrOp *at = e;
    while (at->parent && at->parent->parent && at->parent->parent->kind == IR_FOR &&
           !defined_in(v, at->parent))
        at = at->parent->parent;
    ir_insert_before(at, c);
    e->operands[0] = c->results[0];
    p->changed = true;
}

/* An elementwise op follows a special operand when its other block operands
 * share that layout, can be recomputed in it, are loop-carried values that
 * can follow too (attention's running row max), or are vectors broadcast
 * against it that can be made in a slice of it (scale_can_follow). */
static const Layout *follow(LayoutPass *p, const IrOp *op)
{
    const Layout *m = NULL;
    for (int i = 0; i < op->nops; i++)
        if (special(op->operands[i]))
            m = op->operands[i]->layout;
    if (!m)
        return NULL;
    for (int i = 0; i < op->nops; i++) {
        const IrValue *x = op->operands[i];
        if (x->type.rank && !(x->layout && layout_equal(x->layout, m)) && !pass_can_remat(x) &&
            !will_follow(x) && !scale_can_follow(p, x, m) &&
            !(m->kind == LY_MMA && from_vectors(p, x, m, 0)))
            return NULL;
    }
    return m;
}

/* A loop keeps a carried value in the layout its body yields when the
 * initial value can be made in that layout cheaply. */
static void spread_for(LayoutPass *p, IrOp *op)
{
    IrBlock *body = op->regions[0];
    const IrOp *y = body->last;
    if (!y || y->kind != IR_YIELD)
        return;
    for (int i = 0; i < y->nops && i + 3 < op->nops; i++) {
        IrValue *next = y->operands[i], *init = op->operands[i + 3];
        if (!special(next) || body->args[i + 1]->layout == next->layout)
            continue;
        if (!(init->layout && layout_equal(init->layout, next->layout)) && !init_can_follow(init))
            continue;
        set_layout(p, body->args[i + 1], next->layout);
        set_layout(p, op->results[i], next->layout);
    }
}

/* Whether a warp bit of l steps along dim `axis` of t and along another dim
 * at once. Otherwise a reduction along the axis stays in registers and
 * shuffles within a warp and crosses the warps that step along it through
 * shared memory, leaving the result in a slice of l (codegen/reduce.c). */
static bool warps_mixed(LayoutPass *p, const Layout *l, const Type *t, int axis)
{
    LinLayout ll;
    if (!layout_linear(l, t->rank, t->shape, p->threads, &ll))
        return true;
    int64_t mask = lin_dim_bits(t->rank, t->shape, axis);
    for (int j = 5; j < ll.nthread; j++)
        if ((ll.thread[j] & mask) && (ll.thread[j] & ~mask))
            return true;
    return false;
}

/* Reductions of mma values keep the rows where they are (a slice of the
 * layout); expand_dims and broadcast bring them back. */
static const Layout *spread_shape(LayoutPass *p, const IrOp *op)
{
    const IrValue *x = op->operands[0];
    const Layout *l = x->layout;
    const Type *rt = &op->results[0]->type;
    switch (op->kind) {
    case IR_REDUCE:
        if (op->nops == 1 && l->kind == LY_MMA && x->type.rank == 2 && op->sub <= RED_MIN &&
            !warps_mixed(p, l, &x->type, op->axis)) {
            Layout s = {.kind = LY_SLICE, .rank = 1, .parent = l, .dim = op->axis};
            return ir_layout_intern(p->f, &s);
        }
        return NULL;
    case IR_EXPAND_DIMS:
        if (l->kind == LY_SLICE && l->dim == op->axis && fits(p, l->parent, rt))
            return l->parent;
        return NULL;
    case IR_BROADCAST: return l->kind == LY_MMA && fits(p, l, rt) ? l : NULL;
    default: return NULL;
    }
}

/* An elementwise op takes its special operand's layout (follow); the
 * vectors it broadcasts that cannot be recomputed take the matching slices,
 * so that the next round spreads the layout to their expand_dims and
 * broadcasts, and the loads that make them read in the slice layout. */
static void follow_with_scales(LayoutPass *p, IrOp *op)
{
    const Layout *m = follow(p, op);
    if (!m)
        return;
    for (int i = 0; i < op->nops && !p->failed; i++) {
        const IrValue *x = op->operands[i];
        const IrOp *d = x->type.rank && !x->layout && !pass_can_remat(x) && !flexible(x)
            ? expansion_of(x)
            : NULL;
        if (d)
            place_scale(p, x, slice_for(p, m, d->operands[0], d->axis));
        else if (m->kind == LY_MMA && !pass_can_remat(x) && from_vectors(p, x, m, 0))
            pull_vectors(p, op->operands[i], m);
    }
    set_layout(p, op->results[0], m);
}

static bool spread(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    if (op->kind == IR_FOR && op->nregions == 1)
        spread_for(p, op);
    else if (op->nres == 1 && op->results[0]->type.rank && !special(op->results[0])) {
        if (elementwise(op->kind))
            follow_with_scales(p, op);
        else if (op->nops >= 1 && special(op->operands[0]))
            set_layout(p, op->results[0], spread_shape(p, op));
    }
    return !p->failed;
}

/* A reduction of a blocked 2-D value keeps its result where the rows are,
 * in a slice of that layout, as one of an mma value does: it combines in
 * registers and shuffles and crosses warps through shared memory only where
 * warps step along the axis, where otherwise a column sum moved the whole
 * tile through shared memory to put the axis last, and every result went
 * through shared memory again to reach its blocked layout. Runs after the
 * mma layouts have spread (an operand they reach is not blocked). */
static bool slice_reduction(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    if (op->kind != IR_REDUCE || op->nops != 1 || op->nres != 1 || op->sub > RED_MIN)
        return true;
    const IrValue *x = op->operands[0];
    IrValue *r = op->results[0];
    if (r->layout || x->type.rank != 2 || r->type.rank != 1)
        return true;
    const Layout *l = x->layout ? x->layout : blocked_of(p, &x->type);
    if (!l || l->kind != LY_BLOCKED || warps_mixed(p, l, &x->type, op->axis))
        return true;
    Layout s = {.kind = LY_SLICE, .rank = 1, .parent = l, .dim = op->axis};
    set_layout(p, r, ir_layout_intern(p->f, &s));
    return true;
}

static void spread_all(LayoutPass *p)
{
    for (int round = 0; round < 16; round++) {
        p->changed = false;
        ir_walk(p->f->body, spread, p);
        if (!p->changed)
            break;
    }
}

/* ---- default layouts ------------------------------------------------------------------ */

static void give_blocked(LayoutPass *p, IrValue *v)
{
    if (v && v->type.rank && !v->layout)
        v->layout = blocked_of(p, &v->type);
}

/* A loop-carried pointer tile that only a column load reads, stepped by a
 * cheap addptr into its yield slot (`b_ptrs += BLOCK_K * stride`), takes
 * the load's layout for the whole loop: its initial value is recomputed in
 * it once, outside. Otherwise the tile of 64-bit pointers would cross
 * threads through shared memory every iteration, in scratch as large as
 * eight tiles of 8-bit elements. */
static void carry_column(IrOp *load, const Layout *l)
{
    IrValue *x = load->operands[0];
    if (!flexible(x))
        return;
    IrBlock *body = x->owner;
    IrOp *y = body->last, *loop = body->parent;
    int slot = x->index - 1;
    if (!y || y->kind != IR_YIELD || slot >= y->nops || slot >= loop->nres)
        return;
    IrValue *next = y->operands[slot];
    IrOp *step = next->def;
    if (!step || step->kind != IR_ADDPTR || step->parent != body || step->operands[0] != x ||
        next->layout || !pass_can_remat(step->operands[1]))
        return;
    if (reads_in(body, x) != 2 || reads_in(body, next) != 1)
        return;
    x->layout = l;
    next->layout = l;
    loop->results[slot]->layout = l;
}

/* A load contiguous along another dim than the last (a transposed operand,
 * K^T in attention) gets a layout of its own with that dim first, so that
 * each thread reads whole vectors; its pointers are recomputed to match. */
static void assign_column_load(LayoutPass *p, IrOp *op)
{
    const IrValue *ptr = op->operands[0];
    const IrValue *mask = op->nops > 1 ? op->operands[1] : NULL;
    IrValue *r = op->results[0];
    if (!p->axis || r->layout || ptr->type.rank < 2)
        return;
    int fast = axis_fast_dim(p->axis, ptr), bytes = mem_bytes(ptr->type.elem);
    if (fast == ptr->type.rank - 1)
        return;
    int w = axis_vector_width_along(p->axis, ptr, mask, bytes, fast);
    if (w <= axis_vector_width(p->axis, ptr, mask, bytes) || w <= 1)
        return;
    while (w > 1 && w > type_numel(ptr->type) / p->threads)
        w /= 2;
    Layout l = layout_blocked_along(ptr->type.rank, ptr->type.shape, fast, w, p->threads);
    r->layout = ir_layout_intern(p->f, &l);
    if (r->layout)
        carry_column(op, r->layout);
}

static bool assign_columns(IrOp *op, void *ctx)
{
    if (op->kind == IR_LOAD && op->nres == 1)
        assign_column_load(ctx, op);
    return true;
}

static bool assign_default(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    if (op->kind == IR_LOAD && op->nres == 1)
        assign_column_load(p, op);
    for (int i = 0; i < op->nres; i++)
        give_blocked(p, op->results[i]);
    for (int r = 0; r < op->nregions; r++)
        for (int i = 0; i < op->regions[r]->nargs; i++)
            give_blocked(p, op->regions[r]->args[i]);
    return !p->failed;
}

/* ---- conversions ---------------------------------------------------------------------- */

/* Whether x, the operand of an expand_dims or broadcast, already lies in
 * the blocked layout of its result r: a slice of it along the new dim, or
 * that layout itself (a reduced row brought back, in registers). */
static bool from_row(const IrValue *x, const IrValue *r)
{
    const Layout *l = x->layout;
    if (!l || !r->layout || r->layout->kind != LY_BLOCKED)
        return false;
    if (l->kind == LY_SLICE)
        return r->def && r->def->kind == IR_EXPAND_DIMS && l->dim == r->def->axis &&
            layout_equal(l->parent, r->layout);
    return layout_equal(l, r->layout);
}

/* Whether op lies in a loop whose own body (not a loop nested in it) runs
 * a dot: the store of a flattened persistent GEMM, under its last K step. */
static bool in_dot_loop(const IrOp *op)
{
    const IrBlock *b = op->parent;
    while (b && b->parent && b->parent->kind != IR_FOR && b->parent->kind != IR_WHILE)
        b = b->parent->parent;
    if (!b || !b->parent)
        return false;
    for (const IrOp *o = b->first; o; o = o->next)
        if (o->kind == IR_DOT)
            return true;
    return false;
}

/* Whether store op of an mma tile should cross to a blocked layout (see
 * wanted): 16- or 8-bit elements in a wgmma layout, outside a loop that
 * runs the dots, where the blocked layout stores more than the two adjacent
 * elements a thread of the mma layout holds (the mask and alignment allow
 * wider vectors). */
static bool narrow_store(LayoutPass *p, const IrOp *op)
{
    const IrValue *v = op->operands[1], *ptr = op->operands[0];
    const IrValue *mask = op->nops > 2 ? op->operands[2] : NULL;
    if (dtype_bits(v->type.dt) >= 32 || v->layout->version != 3 || in_dot_loop(op) || !p->axis)
        return false;
    int bytes = mem_bytes(ptr->type.elem);
    return axis_vector_width(p->axis, ptr, mask, bytes) > 2;
}

/* The layout operand i of op must have; NULL: whatever it has. */
static const Layout *wanted(LayoutPass *p, const IrOp *op, int i)
{
    const IrValue *x = op->operands[i];
    if (!x || x->type.rank == 0)
        return NULL;
    switch (op->kind) {
    case IR_CONVERT_LAYOUT: return NULL;
    case IR_DOT:
        if (is_mma(op->results[0])) {
            const Layout *m = op->results[0]->layout;
            if (i == 2)
                return m;
            int instr_k = 16, kpack = 2;
            mma_shape(op, &instr_k, &kpack);
            Layout d = layout_dot_op(m, i, kpack);
            return ir_layout_intern(p->f, &d);
        }
        return blocked_of(p, &x->type);
    case IR_STORE:
        /* the stored value decides, when pointer and mask can follow it and
         * its elements are 32-bit or wider: a thread of an mma layout holds
         * two adjacent elements of a row at a time, so 16- and 8-bit tiles
         * would be stored 4 or 2 bytes at a time, half a sector per row of a
         * warp; they cross to the blocked layout through shared memory and
         * leave in 16-byte vectors, as Triton's epilogue does; not in a loop
         * whose body runs the dots too (a flattened persistent GEMM), where
         * the conversion's registers add to the accumulators the loop keeps
         * live and ptxas spills. Hopper's wgmma layouts only: with mma.sync's
         * the conversion took attention past 255 registers */
        if (is_mma(op->operands[1]) && !narrow_store(p, op) && pass_can_remat(op->operands[0]) &&
            (op->nops < 3 || !op->operands[2] || pass_can_remat(op->operands[2])))
            return op->operands[1]->layout;
        return blocked_of(p, &x->type);
    case IR_YIELD: {
        const IrOp *parent = op->parent ? op->parent->parent : NULL;
        if (parent && parent->kind == IR_FOR && i + 1 < op->parent->nargs)
            return op->parent->args[i + 1]->layout;
        return blocked_of(p, &x->type);
    }
    case IR_ADDPTR: /* a carried column pointer's step keeps its layout (carry_column) */
        return op->results[0]->layout ? op->results[0]->layout : blocked_of(p, &x->type);
    case IR_FOR:
        if (i >= 3 && i - 2 < op->regions[0]->nargs)
            return op->regions[0]->args[i - 2]->layout;
        return NULL;
    case IR_REDUCE:
        /* a result in a slice (spread_shape, slice_reduction) reads its parent */
        if (op->nres >= 1 && special(op->results[0]))
            return op->results[0]->layout->parent;
        return blocked_of(p, &x->type);
    case IR_EXPAND_DIMS:
    case IR_BROADCAST:
        /* kept in an mma layout (spread_shape): the operand stays where it is;
         * a row brought back from a slice of a blocked layout is broadcast
         * in that layout, in registers */
        if (op->nres >= 1 && (special(op->results[0]) || from_row(x, op->results[0])))
            return NULL;
        return blocked_of(p, &x->type);
    default:
        if ((elementwise(op->kind) || op->kind == IR_LOAD) && op->nres == 1 &&
            op->results[0]->type.rank)
            return op->results[0]->layout;
        return blocked_of(p, &x->type);
    }
}

static bool defined_in(const IrValue *x, const IrBlock *b)
{
    const IrBlock *at = x->def ? x->def->parent : x->owner;
    for (; at; at = at->parent ? at->parent->parent : NULL)
        if (at == b)
            return true;
    return false;
}

/* Whether a thread would hold more than 64 registers of x's fragments in
 * dot-operand layout `want`: a decode kernel's A of 512 columns on warps
 * that stand along N (each warp holds all of A). */
static bool fragments_large(const LayoutPass *p, const IrValue *x, const Layout *want)
{
    LinLayout ll;
    if (!layout_linear(want, x->type.rank, x->type.shape, p->threads, &ll))
        return false;
    return ((int64_t)1 << ll.nreg) * dtype_bits(x->type.dt) > 64 * 32;
}

/* Where a conversion of x for `op` goes: right before op, or before the
 * outermost loop x does not change in when the result is a dot operand
 * (attention's Q: its fragments are made once, not every iteration) or
 * when the conversion crosses threads through shared memory (x cannot be
 * recomputed in the new layout: a gathered row index, a mask made from
 * loaded values), which then happens once instead of in every iteration;
 * not for a dot operand whose fragments would take too many registers for
 * the whole loop: the dot then reads them from shared memory as it goes
 * (codegen/mma.c). */
static IrOp *convert_point(const LayoutPass *p, IrOp *op, const IrValue *x, const Layout *want)
{
    IrOp *at = op;
    if (want->kind == LY_DOT_OP ? fragments_large(p, x, want) : pass_can_remat(x))
        return at;
    while (at->parent && at->parent->parent && at->parent->parent->kind == IR_FOR &&
           !defined_in(x, at->parent))
        at = at->parent->parent;
    return at;
}

static void convert_operand(LayoutPass *p, IrOp *op, int i, const Layout *want)
{
    IrValue *x = op->operands[i];
    IrOp *c = ir_op_new(p->f, IR_CONVERT_LAYOUT, op->span, &x, 1, &x->type, 1);
    if (!c || p->f->arena->oom) {
        p->failed = true;
        return;
    }
    c->results[0]->layout = want;
    c->results[0]->name = x->name;
    ir_insert_before(convert_point(p, op, x, want), c);
    op->operands[i] = c->results[0];
}

static bool insert_converts(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    for (int i = 0; i < op->nops && !p->failed; i++) {
        const Layout *want = wanted(p, op, i);
        if (want && op->operands[i]->layout != want && !layout_equal(op->operands[i]->layout, want))
            convert_operand(p, op, i, want);
    }
    return !p->failed;
}

bool pass_layout(IrFunc *f)
{
    LayoutPass p;
    memset(&p, 0, sizeof p);
    p.f = f;
    p.threads = f->num_warps * 32; /* checked by ir_launch_settings */
    p.axis = axis_analyze(f, f->arena);
    if (p.axis)
        ir_walk(f->body, note_access, &p);
    p.rows = arena_alloc(f->arena, (size_t)f->next_id + 1);
    if (!p.rows || f->arena->oom)
        return false;
    for (int round = 0; round < 16; round++) {
        p.changed = false;
        ir_walk(f->body, mark_rows, &p);
        if (!p.changed)
            break;
    }
    ir_walk(f->body, assign_dot, &p);
    spread_all(&p);
    ir_walk(f->body, assign_columns, &p); /* before loops give their arguments defaults */
    ir_walk(f->body, slice_reduction, &p);
    spread_all(&p);
    ir_walk(f->body, assign_default, &p);
    if (!p.failed)
        ir_walk(f->body, insert_converts, &p);
    if (p.failed || f->arena->oom)
        return false;
    ir_renumber(f);
    return true;
}
