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
 * epilogue stores, down the columns for a column-major output (a weight
 * gradient stored transposed: along the rows each element was a 2-byte
 * store of its own). The shape's layout may hold a longer run, made for
 * the loads of a narrower type (an int8 GEMM's operands): a thread storing
 * two 16-byte vectors of a 32-byte run writes every other 16 bytes per
 * instruction, half of each sector. The pointer and mask are recomputed
 * in it (they are cheap: narrow_store's callers and lp_store_crosses
 * check). Also the layout of a blocked tile's store that crosses
 * (lp_store_crosses). */
static const Layout *store_blocked(LayoutPass *p, const IrOp *op)
{
    const IrValue *ptr = op->operands[0];
    const IrValue *mask = op->nops > 2 ? op->operands[2] : NULL;
    int bytes = lp_mem_bytes(ptr->type.elem), last = ptr->type.shape[ptr->type.rank - 1];
    const Layout *col = lp_column_layout(p, ptr, mask, 16 / bytes);
    if (col)
        return col;
    const Layout *shape = lp_blocked_of(p, &ptr->type);
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

/* A store contiguous along another dim than the last (a column-major
 * output) crosses to the column layout (one 16-byte vector a thread at a
 * time, as note_store caps a shape's) and leaves in vectors down the
 * columns, as Triton's stores do; in the shape's layout each element was
 * a store of its own, 1 byte for fp8. Otherwise the shape's layout. */
static const Layout *store_column(LayoutPass *p, const IrOp *op, const IrValue *x)
{
    const IrValue *ptr = op->operands[0];
    const IrValue *mask = op->nops > 2 ? op->operands[2] : NULL;
    if (lp_store_crosses(p, op))
        return store_blocked(p, op);
    const Layout *col = lp_column_layout(p, ptr, mask, 16 / lp_mem_bytes(ptr->type.elem));
    return col ? col : lp_blocked_of(p, &x->type);
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
        return store_column(p, op, x);
    case IR_YIELD: {
        const IrOp *parent = op->parent ? op->parent->parent : NULL;
        if (parent && parent->kind == IR_FOR && i + 1 < op->parent->nargs)
            return op->parent->args[i + 1]->layout;
        if (parent && parent->kind == IR_IF && i < parent->nres && parent->results[i]->layout)
            return parent->results[i]->layout; /* branch_layouts (layout.c) */
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
        /* a tile broadcast along its size-1 dims (a row of zero points
         * widened by joins, subtracted from a weight tile) crosses to the
         * result's layout at its own size, where each thread then holds
         * what it broadcasts: in the shape's default layout it crossed
         * there and again in the broadcast, at the result's size */
        if (op->kind == IR_BROADCAST && op->results[0]->layout->kind == LY_BLOCKED &&
            !pass_can_remat(x) && lp_fits(p, op->results[0]->layout, &x->type))
            return op->results[0]->layout;
        return lp_blocked_of(p, &x->type);
    case IR_GATHER:
        /* src goes to shared memory whole from wherever it lies; each
         * thread reads the indices of the elements it gives */
        return i == 1 ? op->results[0]->layout : NULL;
    case IR_HISTOGRAM: /* likewise: each mask beside its element */
        return i == 1 ? op->operands[0]->layout : NULL;
    case IR_TRANS: {
        /* the operand in the permuted layout of the result, so that the
         * trans moves no data, where that costs no crossing of its own: a
         * tile made in registers lies there already (layout.c's
         * trans_follows); a tile loaded in the loop body that transposes it
         * for ops other than dots is read that way from its shared ring
         * (pipelined; dots read a transposed ring in place, pipeline.c).
         * Not a tile loaded once, nor before the loop (converted there it
         * would stay in registers for the whole loop, where pipe_resident.c
         * keeps it in shared memory), nor an mma tile (attention backward's
         * p^T: its conversion to a column-major blocked layout met bank
         * conflicts that the transpose's own scratch avoids): those keep
         * the trans' own crossing */
        const Layout *r = op->results[0]->layout;
        const IrOp *loop = op->parent ? op->parent->parent : NULL;
        bool here = x->def && x->def->kind == IR_LOAD && x->def->parent == op->parent && loop &&
            loop->kind == IR_FOR && !pass_only_dots_read(op->parent, op->results[0]);
        Layout in;
        if (r && x->layout && lp_trans_image(p, r, op, true, &in) && layout_equal(&in, x->layout))
            return x->layout;
        const Layout *read = r && here ? lp_trans_layout(p, r, op, true) : NULL;
        return read ? read : lp_blocked_of(p, &x->type);
    }
    case IR_JOIN:
    case IR_RESHAPE: {
        /* a pair joined or merged in registers (layout.c's pair_layouts):
         * the operands keep the layout the result was made from */
        const Layout *l = op->operands[0]->layout, *r = op->results[0]->layout;
        const Layout *pair = op->kind == IR_JOIN && r ? lp_unpaired(p, r) : NULL;
        if (pair && lp_fits(p, pair, &x->type))
            return pair;
        if (l && r && l->kind == LY_BLOCKED && r->kind == LY_BLOCKED && op->kind == IR_RESHAPE &&
            lp_merges_pair(op, l))
            return l;
        /* a reshape reads in place from the layout its result's is the image of */
        const Layout *in = op->kind == IR_RESHAPE
            ? lp_reshape_layout(p, r, &op->results[0]->type, &x->type)
            : NULL;
        return in ? in : lp_blocked_of(p, &x->type);
    }
    case IR_PARTNER: /* moves elements between the threads of the result's layout */
        return op->results[0]->layout;
    default:
        if ((lp_elementwise(op->kind) || op->kind == IR_LOAD) && op->nres == 1 &&
            op->results[0]->type.rank)
            return op->results[0]->layout;
        return lp_blocked_of(p, &x->type);
    }
}


/* The registers a thread of l holds of x (distinct: its own elements, not
 * copies of them), or -1 when l does not lay x out. */
static int per_thread(const LayoutPass *p, const IrValue *x, const Layout *l, bool distinct)
{
    LinLayout ll;
    if (!layout_linear(l, x->type.rank, x->type.shape, p->threads, &ll))
        return -1;
    int bits = 0;
    for (int i = 0; i < ll.nreg; i++)
        bits += !distinct || ll.reg[i] != 0;
    return 1 << bits;
}

/* Whether a thread would hold more than 64 registers of x's fragments in
 * dot-operand layout `want`: a decode kernel's A of 512 columns on warps
 * that stand along N (each warp holds all of A). */
static bool fragments_large(const LayoutPass *p, const IrValue *x, const Layout *want)
{
    int n = per_thread(p, x, want, false);
    return n > 0 && (int64_t)n * dtype_bits(x->type.dt) > 64 * 32;
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
    if (want->kind == LY_DOT_OP ? fragments_large(p, x, want) : pass_can_remat(x))
        return op;
    return lp_outside_loops(op, x);
}

IrOp *lp_outside_loops(IrOp *op, const IrValue *x)
{
    IrOp *at = op;
    while (at->parent && at->parent->parent && at->parent->parent->kind == IR_FOR &&
           !ir_defined_in(x, at->parent))
        at = at->parent->parent;
    return at;
}

/* A conversion of x to `want` that runs before `at` in its block or in
 * an enclosing one (so its result is there wherever `at` runs): two
 * readers of one value in one other layout share a conversion, as a
 * reduction and an elementwise op of a row's top-k do; the walk back ends
 * at x's definition, before which no conversion of it can be. Not for a
 * dot's operands, which each dot stages itself. */
static IrOp *earlier_convert(IrOp *at, const IrValue *x, const Layout *want)
{
    if (want->kind == LY_DOT_OP)
        return NULL;
    for (IrOp *o = at; o; o = o->parent ? o->parent->parent : NULL)
        for (IrOp *q = o->prev; q; q = q->prev) {
            if (q == x->def)
                return NULL;
            if (q->kind == IR_CONVERT_LAYOUT && q->operands[0] == x &&
                layout_equal(q->results[0]->layout, want))
                return q;
        }
    return NULL;
}

static void convert_operand(LayoutPass *p, IrOp *op, int i, const Layout *want)
{
    IrValue *x = op->operands[i];
    IrOp *at = convert_point(p, op, x, want), *same = earlier_convert(at, x, want);
    if (same) {
        op->operands[i] = same->results[0];
        return;
    }
    IrOp *c = ir_op_new(p->f, IR_CONVERT_LAYOUT, op->span, &x, 1, &x->type, 1);
    if (!c || p->f->arena->oom) {
        p->failed = true;
        return;
    }
    c->results[0]->layout = want;
    c->results[0]->name = x->name;
    ir_insert_before(at, c);
    op->operands[i] = c->results[0];
}

/* The blocked layout an operand of wgmma dot op should reach its
 * dot-operand conversion in, or NULL where its own will do. 32- and 8-bit
 * tiles are staged K-major (codegen/mma.c); from registers that run along
 * M (A) or N (B), each thread stores them one element at a time, its lanes
 * spt rows apart in the 128-byte swizzle, which repeats every 8 rows: a
 * 4 * spt-way bank conflict on every store (32-way for mhc's x^T, spt 8:
 * 2048 shared-memory wavefronts a warp). Crossing first to a layout that
 * runs along K (convert.c swizzles the scratch by the rows the lanes
 * differ in) lets the dot stage 16-byte vectors. */
static const Layout *kmajor_first(LayoutPass *p, const IrOp *op, int i, const Layout *want)
{
    if (op->kind != IR_DOT || op->nres != 1 || i > 1)
        return NULL;
    const IrValue *x = op->operands[i];
    const Layout *m = op->results[0]->layout, *l = x->layout;
    int kdim = i == 0 ? 1 : 0, bytes = lp_mem_bytes(x->type.dt);
    if (!want || want->kind != LY_DOT_OP || !m || m->kind != LY_MMA || m->version != 3 ||
        !layout_needs_kmajor(m, bytes) || !l || l->kind != LY_BLOCKED || x->type.rank != 2 ||
        l->order[0] == kdim || l->spt[l->order[0]] < 2 || !x->def)
        return NULL;
    /* a tile loaded in a loop (transposed, cast on the way) is the
     * pipeline's: copied into its ring in the layout the dot reads */
    const IrOp *d = x->def;
    while (d && (d->kind == IR_TRANS || d->kind == IR_CAST) && d->operands[0]->def)
        d = d->operands[0]->def;
    if (d && d->kind == IR_LOAD && d->parent && d->parent->parent &&
        (d->parent->parent->kind == IR_FOR || d->parent->parent->kind == IR_WHILE))
        return NULL;
    int w = 16 / bytes, k = x->type.shape[kdim];
    while (w > 1 && (w > k || (int64_t)w * p->threads > type_numel(x->type)))
        w /= 2;
    Layout b = layout_blocked_along(2, x->type.shape, kdim, w, p->threads);
    const Layout *r = ir_layout_intern(p->f, &b);
    if (!r)
        p->failed = true;
    return r;
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
            !layout_equal(op->operands[i]->layout, want[i])) {
            const Layout *k = kmajor_first(p, op, i, want[i]);
            if (k)
                convert_operand(p, op, i, k);
            if (!p->failed)
                convert_operand(p, op, i, want[i]);
        }
    return !p->failed;
}

/* ---- small loads made where they are used ---------------------------------------------- */

/* A load of fewer elements than the program has threads (a vector of
 * token ids, a row of cos/sin factors) whose value, and the values made
 * from it by elementwise ops (a cast, the mask `ids < n`), are read only
 * through conversions, or by each other, is loaded in the layout those
 * conversions make, and those ops made there; once for each such layout
 * (Triton does the same): each thread loads the elements it uses, repeated
 * loads of one address hit the cache, and nothing crosses threads (Triton
 * rates such loads cheap to recompute in any layout). Every other operand
 * of those ops, and the load's pointer, mask and other, must be
 * recomputable there. In a loop too: a pipelined copy of such a load is
 * packed (pipe_plan.c), each element once in shared memory. */
#define MAX_CONVERTS 256
#define MAX_MOVED    16
#define MAX_PLACES   4

typedef struct Converts {
    IrOp *ops[MAX_CONVERTS];
    int n;
} Converts;

typedef struct Moved {
    IrValue *v[MAX_MOVED]; /* the load's result, then values made from it */
    int n;
    const Layout *want[MAX_PLACES]; /* the layouts conversions of them make */
    int nwant;
    const LayoutPass *p;
    bool ok;
} Moved;

static bool collect_converts(IrOp *op, void *ctx)
{
    Converts *c = ctx;
    if (op->kind == IR_CONVERT_LAYOUT && c->n < MAX_CONVERTS)
        c->ops[c->n++] = op;
    return true;
}

static bool moved(const Moved *m, const IrValue *v)
{
    for (int i = 0; i < m->n; i++)
        if (m->v[i] == v)
            return true;
    return false;
}

/* The one operand of elementwise op d that cannot be recomputed, or NULL
 * (none, or more than one). */
static IrValue *kept_operand(const IrOp *d)
{
    IrValue *k = NULL;
    for (int i = 0; i < d->nops; i++) {
        IrValue *o = d->operands[i];
        if (!o || !o->type.rank || pass_can_remat(o))
            continue;
        if (k)
            return NULL;
        k = o;
    }
    return k;
}

/* The small load x is made from through elementwise ops (a cast, `exp(-d)`)
 * whose other operands can be recomputed, or NULL. */
static IrOp *small_load(LayoutPass *p, IrValue *x)
{
    for (IrValue *v = x; v && v->def; v = kept_operand(v->def)) {
        IrOp *d = v->def;
        if (d->kind == IR_LOAD)
            return d->nres == 1 && type_numel(v->type) < p->threads ? d : NULL;
        if (!lp_elementwise(d->kind) || d->nres != 1)
            return NULL;
    }
    return NULL;
}

/* Whether every operand of op that is not moved can be recomputed. */
static bool others_recomputed(const Moved *m, const IrOp *op)
{
    for (int i = 0; i < op->nops; i++) {
        const IrValue *o = op->operands[i];
        if (o && o->type.rank && !moved(m, o) && !pass_can_remat(o))
            return false;
    }
    return true;
}

/* Whether a thread of l holds at most 16 elements of x: an epilogue's
 * bias in a column slice of a wgmma layout (64 a thread) keeps its one
 * conversion; loaded in place, with the accumulators live, it took a GEMM
 * from 128 registers to 170. */
bool lp_few_per_thread(const LayoutPass *p, const IrValue *x, const Layout *l)
{
    int n = per_thread(p, x, l, true);
    return n > 0 && n <= 16;
}

static int place_of(Moved *m, const Layout *l)
{
    for (int i = 0; i < m->nwant; i++)
        if (layout_equal(m->want[i], l))
            return i;
    if (m->nwant == MAX_PLACES)
        return -1;
    m->want[m->nwant] = l;
    return m->nwant++;
}

/* Checks one reader of moved values: a conversion (its layout noted), or
 * an elementwise op of the same shape, whose result is then moved too. */
static bool check_reader(IrOp *op, void *ctx)
{
    Moved *m = ctx;
    bool reads = false;
    for (int i = 0; i < op->nops; i++)
        reads |= moved(m, op->operands[i]);
    if (!reads || !m->ok)
        return m->ok;
    if (op->kind == IR_CONVERT_LAYOUT)
        return m->ok = lp_few_per_thread(m->p, op->results[0], op->results[0]->layout) &&
            place_of(m, op->results[0]->layout) >= 0;
    IrValue *r = op->nres == 1 ? op->results[0] : NULL;
    if (!lp_elementwise(op->kind) || !r || r->type.rank != m->v[0]->type.rank ||
        type_numel(r->type) != type_numel(m->v[0]->type) || !others_recomputed(m, op))
        return m->ok = false;
    if (!moved(m, r)) {
        if (m->n == MAX_MOVED)
            return m->ok = false;
        m->v[m->n++] = r;
    }
    return true;
}

/* Gives op's result layout l, its other operands converted to l. */
static void place_op(LayoutPass *p, const Moved *m, IrOp *op, const Layout *l)
{
    op->results[0]->layout = l;
    for (int k = 0; k < op->nops && !p->failed; k++) {
        IrValue *o = op->operands[k];
        if (o && o->type.rank && !moved(m, o) && !layout_equal(o->layout, l))
            convert_operand(p, op, k, l);
    }
}

typedef struct Cloner {
    LayoutPass *p;
    const Moved *m;
    const Layout *l;
    IrValue **map; /* by value id, below nmap: its copy in l */
    int nmap;
} Cloner;

/* Copies each op making a moved value, in program order, before it. */
static bool clone_moved(IrOp *op, void *ctx)
{
    Cloner *c = ctx;
    if (op->nres != 1 || !moved(c->m, op->results[0]))
        return true;
    IrBuilder b = {c->p->f, op->parent, op};
    IrOp *k = ir_clone(&b, op, c->map, c->nmap);
    if (!k)
        return !(c->p->failed = true);
    place_op(c->p, c->m, k, c->l);
    return !c->p->failed;
}

static void load_in_place(LayoutPass *p, Converts *c, int at)
{
    IrOp *load = small_load(p, c->ops[at]->operands[0]);
    if (!load)
        return;
    Moved m = {.v = {load->results[0]}, .n = 1, .p = p};
    if (!others_recomputed(&m, load))
        return;
    for (int n = 0; n != m.n;) { /* until no reader adds a value */
        n = m.n;
        m.ok = true;
        ir_walk(p->f->body, check_reader, &m);
        if (!m.ok)
            return;
    }
    /* copies for the second layout on (made from the originals' operands),
     * then the originals moved to the first */
    IrValue **map[MAX_PLACES] = {NULL};
    for (int w = 1; w < m.nwant && !p->failed; w++) {
        map[w] = arena_alloc(p->f->arena, sizeof(IrValue *) * (size_t)p->f->next_id);
        if (!map[w])
            return (void)(p->failed = true);
        memset(map[w], 0, sizeof(IrValue *) * (size_t)p->f->next_id);
        Cloner cl = {p, &m, m.want[w], map[w], p->f->next_id};
        ir_walk(p->f->body, clone_moved, &cl);
    }
    for (int i = 0; i < m.n && !p->failed; i++)
        place_op(p, &m, m.v[i]->def, m.want[0]);
    for (int i = 0; i < c->n && !p->failed; i++) {
        IrOp *cv = c->ops[i];
        if (!cv || !moved(&m, cv->operands[0]))
            continue;
        int w = place_of(&m, cv->results[0]->layout);
        IrValue *to = w ? map[w][cv->operands[0]->id] : cv->operands[0];
        ir_replace_uses(p->f->body, cv->results[0], to);
        ir_remove(cv);
        c->ops[i] = NULL;
    }
}

/* A conversion to a blocked layout or a slice of one, of a widening cast
 * read nowhere else, converts the narrow value and casts after (Triton
 * does the same): half the bytes cross threads, through half the scratch.
 * Dot operands keep their cast before the conversion (their layouts pack
 * the wide type). */
static void convert_narrow(LayoutPass *p, IrOp *cv)
{
    IrValue *x = cv->operands[0];
    IrOp *cast = x->def;
    LayoutKind lk = cv->results[0]->layout->kind;
    if (!cast || (lk != LY_BLOCKED && lk != LY_SLICE) || cast->kind != IR_CAST || cast->nops != 1 ||
        !cast->operands[0]->type.rank ||
        dtype_bits(cast->operands[0]->type.dt) >= dtype_bits(x->type.dt) ||
        lp_reads_in(p->f->body, x) != 1)
        return;
    IrValue *y = cast->operands[0], *out = cv->results[0];
    IrOp *nc = ir_op_new(p->f, IR_CONVERT_LAYOUT, cv->span, &y, 1, &y->type, 1);
    if (!nc || p->f->arena->oom)
        return (void)(p->failed = true);
    nc->results[0]->layout = out->layout;
    nc->results[0]->name = y->name;
    ir_insert_before(cv, nc);
    IrBuilder b = {p->f, cv->parent, cv};
    IrValue *map[1] = {NULL};
    IrOp *k = ir_clone(&b, cast, map, 0);
    if (!k)
        return (void)(p->failed = true);
    k->operands[0] = nc->results[0];
    k->results[0]->layout = out->layout;
    ir_replace_uses(p->f->body, out, k->results[0]);
    ir_remove(cv);
    ir_remove(cast);
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
    for (int i = 0; i < c->n && !p->failed; i++)
        if (c->ops[i])
            convert_narrow(p, c->ops[i]);
    return !p->failed;
}
