/* layout_convert.c: the conversions of the layout pass. For each operand,
 * the layout its op needs (wanted); where the operand has another, a
 * convert_layout is inserted, before the op or hoisted before the loops
 * whose iterations do not change it. See layout.c for the pass. */
#include "passes/layout_internal.h"

#include <string.h>

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
 * wider vectors), or where the pair cannot go as one vector either (a
 * pointer of unknown alignment, loaded from a table): each store of the
 * mma layout then writes 2 bytes in each of 8 rows' sectors, where the
 * blocked layout's warp writes 32 adjacent elements of one row. */
static bool narrow_store(LayoutPass *p, const IrOp *op)
{
    const IrValue *v = op->operands[1], *ptr = op->operands[0];
    const IrValue *mask = op->nops > 2 ? op->operands[2] : NULL;
    if (dtype_bits(v->type.dt) >= 32 || v->layout->version != 3 || in_dot_loop(op) || !p->axis)
        return false;
    int bytes = lp_mem_bytes(ptr->type.elem);
    return axis_vector_width(p->axis, ptr, mask, bytes) != 2;
}

/* The blocked layout a narrow store of an mma tile crosses to: 16 bytes
 * of its own elements per thread where pointer and mask allow, as Triton's
 * epilogue stores. The shape's layout may hold a longer run, made for the
 * loads of a narrower type (an int8 GEMM's operands): a thread storing two
 * 16-byte vectors of a 32-byte run writes every other 16 bytes per
 * instruction, half of each sector. The pointer and mask are recomputed
 * in it (they are cheap: narrow_store's callers check). */
static const Layout *store_blocked(LayoutPass *p, const IrOp *op)
{
    const IrValue *ptr = op->operands[0];
    const IrValue *mask = op->nops > 2 ? op->operands[2] : NULL;
    const Layout *shape = lp_blocked_of(p, &ptr->type);
    int bytes = lp_mem_bytes(ptr->type.elem), last = ptr->type.shape[ptr->type.rank - 1];
    int v = axis_vector_width(p->axis, ptr, mask, bytes);
    if (v > 16 / bytes)
        v = 16 / bytes;
    if (!shape || v < 1 || v > last || shape->spt[ptr->type.rank - 1] <= v)
        return shape;
    while (v > 1 && v > type_numel(ptr->type) / p->threads)
        v /= 2;
    Layout l = layout_blocked_default(ptr->type.rank, ptr->type.shape, v, p->threads);
    const Layout *r = ir_layout_intern(p->f, &l);
    if (!r)
        p->failed = true;
    return r;
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
        if (lp_is_mma(op->results[0])) {
            const Layout *m = op->results[0]->layout;
            if (i == 2)
                return m;
            int instr_k = 16, kpack = 2;
            lp_mma_shape(op, &instr_k, &kpack);
            Layout d = layout_dot_op(m, i, kpack);
            return ir_layout_intern(p->f, &d);
        }
        return lp_blocked_of(p, &x->type);
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
        if (lp_is_mma(op->operands[1]) && pass_can_remat(op->operands[0]) &&
            (op->nops < 3 || !op->operands[2] || pass_can_remat(op->operands[2])))
            return narrow_store(p, op) ? store_blocked(p, op) : op->operands[1]->layout;
        return lp_blocked_of(p, &x->type);
    case IR_YIELD: {
        const IrOp *parent = op->parent ? op->parent->parent : NULL;
        if (parent && parent->kind == IR_FOR && i + 1 < op->parent->nargs)
            return op->parent->args[i + 1]->layout;
        return lp_blocked_of(p, &x->type);
    }
    case IR_ADDPTR: /* a carried column pointer's step keeps its layout (carry_column) */
        return op->results[0]->layout ? op->results[0]->layout : lp_blocked_of(p, &x->type);
    case IR_FOR:
        if (i >= 3 && i - 2 < op->regions[0]->nargs)
            return op->regions[0]->args[i - 2]->layout;
        return NULL;
    case IR_REDUCE:
        /* a result in a slice (spread_shape, lp_slice_reduction) reads its parent */
        if (op->nres >= 1 && lp_special(op->results[0]))
            return op->results[0]->layout->parent;
        return lp_blocked_of(p, &x->type);
    case IR_EXPAND_DIMS:
    case IR_BROADCAST:
        /* kept in an mma layout (spread_shape): the operand stays where it is;
         * a row brought back from a slice of a blocked layout is broadcast
         * in that layout, in registers */
        if (op->nres >= 1 && (lp_special(op->results[0]) || from_row(x, op->results[0])))
            return NULL;
        if (op->kind == IR_EXPAND_DIMS && op->results[0]->type.rank == 2 &&
            op->results[0]->layout->kind == LY_BLOCKED && !pass_can_remat(x))
            return lp_slice_of(p, op->results[0]->layout, op->axis);
        return lp_blocked_of(p, &x->type);
    case IR_JOIN:
    case IR_RESHAPE: {
        /* a pair joined or merged in registers (layout.c's pair_layouts):
         * the operands keep the layout the result was made from */
        const Layout *l = op->operands[0]->layout, *r = op->results[0]->layout;
        if (l && r && l->kind == LY_BLOCKED && r->kind == LY_BLOCKED &&
            (op->kind == IR_JOIN ? r->rank == l->rank + 1 && r->spt[l->rank] == 2
                                 : lp_merges_pair(op, l)))
            return l;
        return lp_blocked_of(p, &x->type);
    }
    default:
        if ((lp_elementwise(op->kind) || op->kind == IR_LOAD) && op->nres == 1 &&
            op->results[0]->type.rank)
            return op->results[0]->layout;
        return lp_blocked_of(p, &x->type);
    }
}

bool lp_defined_in(const IrValue *x, const IrBlock *b)
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
           !lp_defined_in(x, at->parent))
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

/* Every operand's layout is decided before any is converted: a store's
 * decision reads its pointer's axis facts, which a converted copy has not. */
bool lp_insert_converts(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    const Layout **want = arena_alloc(p->f->arena, sizeof *want * (size_t)(op->nops + 1));
    if (!want)
        return !(p->failed = true);
    for (int i = 0; i < op->nops; i++)
        want[i] = wanted(p, op, i);
    for (int i = 0; i < op->nops && !p->failed; i++)
        if (want[i] && op->operands[i]->layout != want[i] &&
            !layout_equal(op->operands[i]->layout, want[i]))
            convert_operand(p, op, i, want[i]);
    return !p->failed;
}

/* ---- small loads made where they are used ---------------------------------------------- */

/* A load of fewer elements than the program has threads (a vector of
 * token ids, a row of cos/sin factors), perhaps cast, that is read only
 * through conversions to one layout, is loaded in that layout instead:
 * each thread loads the elements it uses, repeated loads of the same
 * address hit the cache, and nothing crosses threads (Triton rates such
 * loads cheap to recompute in any layout). Its pointer, mask and other
 * must be recomputable there. Outside loops only, where nothing pipelines
 * the load. */
#define MAX_CONVERTS 256

typedef struct Converts {
    IrOp *ops[MAX_CONVERTS];
    int n;
} Converts;

static bool collect_converts(IrOp *op, void *ctx)
{
    Converts *c = ctx;
    if (op->kind == IR_CONVERT_LAYOUT && c->n < MAX_CONVERTS)
        c->ops[c->n++] = op;
    return true;
}

static bool outside_loops(const IrOp *op)
{
    for (const IrBlock *b = op->parent; b && b->parent; b = b->parent->parent)
        if (b->parent->kind == IR_FOR || b->parent->kind == IR_WHILE)
            return false;
    return true;
}

/* The small load x is a cast of (through values read only there), with the
 * values on the way in chain, or NULL. */
static IrOp *small_load(LayoutPass *p, IrValue *x, IrValue **chain, int *n)
{
    *n = 0;
    for (IrValue *v = x; v->def && *n < 4; v = v->def->operands[0]) {
        if (v != x && lp_reads_in(p->f->body, v) != 1)
            return NULL;
        chain[(*n)++] = v;
        IrOp *d = v->def;
        if (d->kind == IR_LOAD && d->nres == 1 && type_numel(v->type) < p->threads &&
            outside_loops(d)) {
            for (int i = 0; i < d->nops; i++)
                if (d->operands[i] && d->operands[i]->type.rank && !pass_can_remat(d->operands[i]))
                    return NULL;
            return d;
        }
        if (d->kind != IR_CAST || d->nops != 1)
            return NULL;
    }
    return NULL;
}

/* Whether every read of x is one of c's conversions to want. */
static bool read_as(LayoutPass *p, const Converts *c, const IrValue *x, const Layout *want)
{
    int k = 0;
    for (int i = 0; i < c->n; i++)
        if (c->ops[i] && c->ops[i]->operands[0] == x) {
            if (!layout_equal(c->ops[i]->results[0]->layout, want))
                return false;
            k++;
        }
    return k == lp_reads_in(p->f->body, x);
}

static void load_in_place(LayoutPass *p, Converts *c, int at)
{
    IrValue *x = c->ops[at]->operands[0], *chain[4];
    const Layout *want = c->ops[at]->results[0]->layout;
    int n;
    IrOp *load = small_load(p, x, chain, &n);
    if (!load || !read_as(p, c, x, want))
        return;
    for (int i = 0; i < n; i++)
        chain[i]->layout = want;
    for (int i = 0; i < load->nops && !p->failed; i++) {
        IrValue *o = load->operands[i];
        if (o && o->type.rank && !layout_equal(o->layout, want))
            convert_operand(p, load, i, want);
    }
    for (int i = 0; i < c->n && !p->failed; i++)
        if (c->ops[i] && c->ops[i]->operands[0] == x) {
            ir_replace_uses(p->f->body, c->ops[i]->results[0], x);
            ir_remove(c->ops[i]);
            c->ops[i] = NULL;
        }
}

bool lp_loads_in_place(LayoutPass *p)
{
    Converts *c = arena_alloc(p->f->arena, sizeof *c);
    if (!c)
        return false;
    c->n = 0;
    ir_walk(p->f->body, collect_converts, c);
    for (int i = 0; i < c->n && !p->failed; i++)
        if (c->ops[i])
            load_in_place(p, c, i);
    return !p->failed;
}
