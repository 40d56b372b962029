/* layout_spread.c: the mma layouts of the layout pass. A dot that tensor
 * cores can run gets an mma accumulator (all warps along M where its rows
 * are reduced, along N where rows are few); the layout then spreads
 * forwards through elementwise ops, loop-carried values and reductions (to
 * a slice of it), as long as the other operands can be recomputed in it
 * or are vectors broadcast from a slice of it. See layout.c for the pass. */
#include "passes/layout_internal.h"

#include <string.h>

/* ---- which dots keep rows in one warp -------------------------------------------------- */

/* Values whose rows are reduced (attention's row max and row sum), traced
 * back through elementwise ops: a dot producing one puts all its warps along
 * M, so each row lives in one warp and the reduction needs no shared memory;
 * a dot whose A operand comes from such a value does the same, so that both
 * accumulators share one layout. */
bool lp_mark_rows(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    if (op->kind == IR_REDUCE && op->nops == 1 && op->operands[0]->type.rank == 2 &&
        op->axis == 1 && !p->rows[op->operands[0]->id]) {
        p->rows[op->operands[0]->id] = 1;
        p->changed = true;
    }
    if (op->nres == 1 && op->results[0]->type.rank && p->rows[op->results[0]->id]) {
        if (lp_elementwise(op->kind) || op->kind == IR_CONVERT_LAYOUT)
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
 * either majorness; fp16 also into an fp16 accumulator), tf32, tf32x3
 * (three tf32 products of split operands), int8 and fp8 of either format
 * on either side (operands K-major, which codegen and the pipeline
 * arrange), N of 16 at least (a narrower dot stays on mma.sync). Codegen falls back to mma.sync on the same placement where
 * an operand is not in shared memory as wgmma needs it. */
static bool wgmma_fits(const LayoutPass *p, const IrOp *op, int warps, int instr_k)
{
    Type a = op->operands[0]->type, b = op->operands[1]->type, c = op->results[0]->type;
    if (!p->f->arch || strcmp(p->f->arch, "sm_90a") != 0 || warps % 4 != 0)
        return false;
    bool f16 = ((a.dt == DT_F16 || a.dt == DT_BF16) && c.dt == DT_F32) ||
        (a.dt == DT_F16 && b.dt == DT_F16 && c.dt == DT_F16);
    bool tf32 = a.dt == DT_F32 && c.dt == DT_F32 && (op->sub == DOT_TF32 || op->sub == DOT_TF32X3);
    bool i8 = a.dt == DT_I8 && c.dt == DT_I32;
    bool fp8 = dtype_is_fp8(a.dt) && dtype_is_fp8(b.dt) && c.dt == DT_F32;
    if (!f16 && !tf32 && !i8 && !fp8)
        return false;
    if (a.shape[1] % instr_k != 0 || c.shape[1] % 16 != 0)
        return false;
    if (c.shape[0] % (16 * warps) == 0)
        return true;
    /* fewer rows than warps have 16-row tiles: whole warpgroups along M,
     * the others side by side along N (Triton's warps [4, 2] for 64 rows
     * on 8 warps), each instruction at least 16 and at most 256 wide; not
     * in a warp-specialized kernel, whose consumers take whole rows */
    Layout l = layout_wgmma(c.shape[0], warps);
    int n = c.shape[1] / l.wn;
    return l.wm % 4 == 0 && l.wm * l.wn == warps && c.shape[0] % (16 * l.wm) == 0 && n % 16 == 0 &&
        n <= 256 && !p->ws;
}

/* An mma layout that keeps each row in one warp where M has a 16-row tile
 * for every warp. Where it has fewer (decode: a few query heads), the
 * other warps go along N when `wide`, with row reductions crossing warps
 * through shared memory; else they repeat the same rows (see
 * lp_rows_wide). */
static Layout rows_layout(int M, int N, int warps, bool wide)
{
    Layout l = layout_mma_rows(M, warps);
    while (wide && l.wm * l.wn < warps && N >= 16 * l.wn)
        l.wn *= 2;
    return l;
}

/* Whether the dots whose rows are reduced stand spare warps along N: when
 * one of them would leave a thread holding more than 64 accumulator
 * elements with the rows repeated in every warp (MLA's 16x512 latent
 * output: 256 registers), or the rows would be repeated in 8 warps or
 * more, each reading every operand tile from shared memory and running
 * every mma (a block-sparse decode's 16 heads on 8 warps); and when every
 * one of them is wide enough to give each spare warp whole 8-column tiles
 * of its own (vLLM's grouped decode: 16x32 scores and a 16x128 output on
 * 4 warps ran 1.4x faster spread, at 168 registers against 71 repeated).
 * Else repeating is cheaper (a paged decode's 16x16 scores and 16x128
 * output on 4 warps: 1.17x Triton repeated, 0.87x spread), as every
 * cross-warp row reduction and every conversion between the dots goes
 * through shared memory on every page for little mma work saved. One
 * answer for all of them, so that chained dots (scores, then probabilities
 * times values) share their warps' placement. */
typedef struct RowsDots {
    LayoutPass *p;
    bool any, all_wide;
} RowsDots;

static bool rows_wide_dot(IrOp *op, void *ctx)
{
    RowsDots *d = ctx;
    LayoutPass *p = d->p;
    int instr_k, kpack;
    if (op->kind != IR_DOT || !p->rows[op->results[0]->id] || !lp_mma_shape(op, &instr_k, &kpack))
        return true;
    Type c = op->results[0]->type;
    int warps = p->threads / 32;
    Layout l = layout_mma_rows(c.shape[0], warps);
    if ((int64_t)c.shape[0] * c.shape[1] / (32 * l.wm) > 64 || warps / l.wm >= 8)
        p->rows_wide = true;
    d->any = true;
    if (c.shape[1] < 8 * (warps / l.wm))
        d->all_wide = false;
    return true;
}

void lp_rows_wide(LayoutPass *p)
{
    RowsDots d = {p, false, true};
    ir_walk(p->f->body, rows_wide_dot, &d);
    if (d.any && d.all_wide)
        p->rows_wide = true;
}

bool lp_assign_dot(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    int instr_k, kpack;
    if (op->kind != IR_DOT || !lp_mma_shape(op, &instr_k, &kpack))
        return true;
    Type c = op->results[0]->type;
    int warps = p->threads / 32;
    Layout mma = p->rows[op->results[0]->id]
        ? rows_layout(c.shape[0], c.shape[1], warps, p->rows_wide)
        : layout_mma(c.shape[0], c.shape[1], warps);
    if (wgmma_fits(p, op, warps, instr_k))
        mma = layout_wgmma(c.shape[0], warps);
    Layout a = layout_dot_op(&mma, 0, kpack), b = layout_dot_op(&mma, 1, kpack);
    if ((c.shape[0] < 16 * mma.wm && mma.wm > 1) || (c.shape[1] < 8 * mma.wn && mma.wn > 1) ||
        !lp_fits(p, &mma, &c) || !lp_fits(p, &a, &op->operands[0]->type) ||
        !lp_fits(p, &b, &op->operands[1]->type))
        return true;
    op->results[0]->layout = ir_layout_intern(p->f, &mma);
    return true;
}

/* ---- spreading the mma layouts ---------------------------------------------------------- */

/* An mma layout or a slice of one: kept as far as the values flow. */
bool lp_special(const IrValue *v)
{
    return v && v->type.rank && v->layout &&
        (v->layout->kind == LY_MMA || v->layout->kind == LY_SLICE);
}

/* A loop-carried value not yet placed: it takes whatever layout its loop
 * body gives it (spread_for decides). Its initial value is made in that
 * layout before the loop, recomputed where it is cheap (zeros), else
 * converted once (a state loaded before a chunk loop, the running max and
 * sum attention carries from one KV loop into the next), rather than the
 * body's value crossing threads in every iteration. */
bool lp_flexible(const IrValue *x)
{
    const IrOp *loop = !x->def && x->owner ? x->owner->parent : NULL;
    return loop && loop->kind == IR_FOR && !x->layout && x->index > 0 &&
        3 + x->index - 1 < loop->nops;
}

static void set_layout(LayoutPass *p, IrValue *v, const Layout *l)
{
    if (l && v->layout != l) {
        v->layout = l;
        p->changed = true;
    }
}

int lp_reads_in(IrBlock *b, const IrValue *x) { return ir_count_reads(b, x); }

/* Gives x layout l where x is the only use of a value made by pointer or
 * elementwise arithmetic (a scale load's `As_ptrs + k`), and so on back
 * along its operands, so that the conversion lands where the arithmetic
 * starts from shared or loop-invariant values. Values recomputed for free
 * (pass_can_remat) and values read elsewhere are left to be converted. */
static void pull_layout(LayoutPass *p, IrValue *x, const Layout *l, int depth)
{
    const IrOp *d = x ? x->def : NULL;
    if (!d || depth == 0 || x->layout || x->type.rank != 1 || d->nres != 1 ||
        (d->kind != IR_ADDPTR && !lp_elementwise(d->kind)) || pass_can_remat(x) ||
        lp_reads_in(p->f->body, x) != 1)
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
    if (m->kind != LY_MMA || !lp_fits(p, &s, &v->type))
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
 * expand_dims, or before the loops around it that do not change the vector
 * (attention backward's row sums, read in every step): a vector's conversion moves numel elements through shared
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
    ir_insert_before(pass_can_remat(v) ? d : lp_outside_loops(d, v), c);
    d->operands[0] = c->results[0];
    p->changed = true;
}

/* An elementwise op's operand that will follow: a loop-carried value, or
 * an elementwise op on those and cheap values (a running sum rescaled,
 * `acc * re + tl.sum(...)`). */
static bool will_follow(const IrValue *x)
{
    if (lp_flexible(x))
        return true;
    const IrOp *d = x->def;
    if (!d || x->layout || !lp_elementwise(d->kind))
        return false;
    bool carried = false;
    for (int i = 0; i < d->nops; i++) {
        const IrValue *y = d->operands[i];
        if (lp_flexible(y))
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
 * back through shared memory. What is broadcast may itself be a [M, 1] or
 * [1, N] tile made so (a block-scaled GEMM's `dot * (a_s[:, None] * b_s)`,
 * the row scale times a scalar before the broadcast): it is made in m at
 * its own shape, its vectors placed as scales are (place_scale). */
static bool from_vectors(LayoutPass *p, const IrValue *x, const Layout *m, int depth)
{
    const IrOp *d = x->def;
    if (x->type.rank != 2 || x->layout || !d || depth > 8)
        return false;
    if (d->kind == IR_BROADCAST) {
        const IrValue *t = d->operands[0]; /* [M, 1] or [1, N] */
        if (!t->def || t->layout || !lp_fits(p, m, &t->type))
            return false;
        if (t->def->kind != IR_EXPAND_DIMS)
            return lp_elementwise(t->def->kind) && from_vectors(p, t, m, depth + 1);
        d = t->def;
    }
    if (d->kind == IR_EXPAND_DIMS) {
        if (d->operands[0]->type.rank != 1)
            return false;
        Layout sl = {.kind = LY_SLICE, .rank = 1, .parent = m, .dim = d->axis};
        return lp_fits(p, &sl, &d->operands[0]->type);
    }
    if (!lp_elementwise(d->kind))
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

/* Converts each vector of a from_vectors tile to its slice of m, so that
 * the expand_dims, broadcasts and elementwise ops above it spread into m
 * (parts that can be recomputed are, in codegen); a vector that a loop
 * does not change is converted once, before it. */
static void pull_vectors(LayoutPass *p, IrValue *x, const Layout *m)
{
    IrOp *d = x->def;
    const IrOp *t = d->kind == IR_BROADCAST ? d->operands[0]->def : NULL;
    if (t && t->kind != IR_EXPAND_DIMS) { /* a [M, 1] tile made before its broadcast */
        pull_vectors(p, d->operands[0], m);
        return;
    }
    if (d->kind == IR_EXPAND_DIMS) { /* inside a broadcast [M, 1] tile */
        place_scale(p, x, slice_for(p, m, d->operands[0], d->axis));
        return;
    }
    if (d->kind != IR_BROADCAST) {
        bool pulled = false;
        for (int i = 0; i < d->nops; i++)
            if (!pass_can_remat(d->operands[i]) && from_vectors(p, d->operands[i], m, 0)) {
                pull_vectors(p, d->operands[i], m);
                pulled = true;
            }
        if (!pulled && !x->layout) { /* exp(...) of values codegen recomputes in m */
            x->layout = m;
            p->changed = true;
        }
        return;
    }
    IrOp *e = d->operands[0]->def;
    IrValue *v = e->operands[0];
    const Layout *want = lp_slice_of(p, m, e->axis);
    if (!want)
        return;
    if (v->layout && layout_equal(v->layout, want))
        return;
    IrOp *c = ir_op_new(p->f, IR_CONVERT_LAYOUT, e->span, &v, 1, &v->type, 1);
    if (!c || p->f->arena->oom) {
        p->failed = true;
        return;
    }
    c->results[0]->layout = want;
    c->results[0]->name = v->name;
    ir_insert_before(lp_outside_loops(e, v), c);
    e->operands[0] = c->results[0];
    p->changed = true;
}

/* The load at the start of x's chain, where x is a tile loaded in the
 * loop body `in` and taken on by elementwise ops (a cast), each the only
 * reader of the value before it, whose other operands can be recomputed:
 * a bias or mask tile read in every step of an attention loop. NULL
 * otherwise. */
static IrOp *loaded_tile(const IrValue *x, const IrBlock *in)
{
    for (int depth = 0; depth < 4; depth++) {
        IrOp *d = x->def;
        if (!d || x->layout || d->parent != in || d->nres != 1 ||
            lp_reads_in((IrBlock *)in, x) != 1)
            return NULL;
        if (d->kind == IR_LOAD)
            return x->type.rank == 2 ? d : NULL;
        if (!lp_elementwise(d->kind))
            return NULL;
        const IrValue *next = NULL;
        for (int i = 0; i < d->nops; i++) {
            if (pass_can_remat(d->operands[i]) || !d->operands[i]->type.rank)
                continue;
            if (next)
                return NULL;
            next = d->operands[i];
        }
        if (!next || next->type.rank != x->type.rank)
            return NULL;
        x = next;
    }
    return NULL;
}

/* An mma tile met in a loop by a tile loaded in the same iteration (qk +
 * bias): the load and the ops on its way are made in the mma layout, as
 * Triton reads such a tile from its ring straight into the accumulator's
 * layout. Otherwise the accumulator crossed to a blocked layout through
 * shared memory in every iteration, and everything after it (attention's
 * softmax, the next dot's operand) followed it there. */
static bool tile_can_follow(const IrOp *op, const IrValue *x, const Layout *m)
{
    const IrOp *loop = op->parent ? op->parent->parent : NULL;
    return m->kind == LY_MMA && loop && loop->kind == IR_FOR && loaded_tile(x, op->parent);
}

/* Whether load ld, made in a loop step whose mma value it meets, keeps
 * its own coalesced layout and is read into the mma layout where it is
 * used: the pipeline then copies it into a ring in 16-byte runs and reads
 * the ring straight into the mma layout (pipeline_loads.c), as Triton
 * does. The loop has stages and the load reaches a dot's operand (or the
 * loop asks for stages itself), as for the pipeline's other loads; its
 * pointer allows runs longer than the mma layout's two elements a thread,
 * each of which, loaded in the mma layout, is half a sector of one row;
 * masked-off elements other than zero are put back after the read, from
 * a mask and a value recomputed in the mma layout. */
static bool read_from_ring(LayoutPass *p, const IrOp *ld)
{
    const IrOp *loop = ld->parent->parent;
    const IrValue *ptr = ld->operands[0], *mask = ld->nops > 1 ? ld->operands[1] : NULL;
    const IrValue *other = ld->nops > 2 ? ld->operands[2] : NULL;
    int bits = dtype_bits(ld->results[0]->type.dt);
    int stages = (int)(loop->ival > 0 ? loop->ival : p->f->num_stages);
    if (stages < 2 || !p->axis || (bits != 16 && bits != 32) || (ld->flags & IRF_VOLATILE) ||
        ld->str || ld->str2 || (loop->ival < 2 && !pass_reaches_dot_operand(p->f, ld)))
        return false;
    if (other && mask && (!pass_can_remat(other) || !pass_can_remat(mask)))
        return false;
    int w = axis_vector_width_along(p->axis, ptr, mask, bits / 8, ptr->type.rank - 1);
    return w > 2 && w * bits / 8 >= 8;
}

static void place_tile(LayoutPass *p, IrValue *x, const Layout *m)
{
    while (x && !x->layout) {
        if (x->def->kind == IR_LOAD && read_from_ring(p, x->def))
            return;
        set_layout(p, x, m);
        IrOp *d = x->def;
        IrValue *next = NULL;
        for (int i = 0; d->kind != IR_LOAD && i < d->nops; i++)
            if (d->operands[i]->type.rank && !pass_can_remat(d->operands[i]))
                next = d->operands[i];
        x = next;
    }
}

/* Whether x is the result of a branch whose every arm yields a tile made
 * again in any layout: the mask tile a runtime flag chooses (`if causal:
 * qk += tl.where(...)`, else another mask). It takes the layout it meets,
 * and each arm makes its tile in it at the yield (layout_convert.c's yield
 * case; codegen recomputes it), rather than the mma tile crossing to the
 * branch's blocked layout through shared memory in every iteration. */
static bool branch_can_follow(const IrValue *x)
{
    const IrOp *d = x->def;
    if (!d || d->kind != IR_IF || x->layout || d->nregions == 0)
        return false;
    for (int r = 0; r < d->nregions; r++) {
        const IrOp *y = d->regions[r]->last;
        if (!y || y->kind != IR_YIELD || x->index >= y->nops ||
            !pass_can_remat(y->operands[x->index]))
            return false;
    }
    return true;
}

/* An elementwise op follows a special operand when its other block operands
 * share that layout, can be recomputed in it, are loop-carried values that
 * can follow too (attention's running row max), are vectors broadcast
 * against it that can be made in a slice of it (scale_can_follow), are
 * tiles loaded in the same loop iteration (tile_can_follow), or are
 * chosen by a branch from such tiles (branch_can_follow). */
static const Layout *follow(LayoutPass *p, const IrOp *op)
{
    const Layout *m = NULL;
    for (int i = 0; i < op->nops; i++)
        if (lp_special(op->operands[i]))
            m = op->operands[i]->layout;
    if (!m)
        return NULL;
    for (int i = 0; i < op->nops; i++) {
        const IrValue *x = op->operands[i];
        if (x->type.rank && !(x->layout && layout_equal(x->layout, m)) && !pass_can_remat(x) &&
            !will_follow(x) && !scale_can_follow(p, x, m) &&
            !(m->kind == LY_MMA && from_vectors(p, x, m, 0)) && !tile_can_follow(op, x, m) &&
            !branch_can_follow(x))
            return NULL;
    }
    return m;
}

/* A loop keeps a carried value in the layout its body yields; the initial
 * value is made in it before the loop (lp_flexible). */
static void spread_for(LayoutPass *p, IrOp *op)
{
    IrBlock *body = op->regions[0];
    const IrOp *y = body->last;
    if (!y || y->kind != IR_YIELD)
        return;
    for (int i = 0; i < y->nops && i + 3 < op->nops; i++) {
        IrValue *next = y->operands[i];
        if (!lp_special(next) || body->args[i + 1]->layout == next->layout)
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
        if (op->nops == 1 && l->kind == LY_MMA && x->type.rank == 2 && op->sub != RED_CUSTOM &&
            !warps_mixed(p, l, &x->type, op->axis)) {
            Layout s = {.kind = LY_SLICE, .rank = 1, .parent = l, .dim = op->axis};
            return ir_layout_intern(p->f, &s);
        }
        return NULL;
    case IR_EXPAND_DIMS:
        if (l->kind == LY_SLICE && l->dim == op->axis && lp_fits(p, l->parent, rt))
            return l->parent;
        return NULL;
    case IR_BROADCAST: return l->kind == LY_MMA && lp_fits(p, l, rt) ? l : NULL;
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
        const IrOp *d = x->type.rank && !x->layout && !pass_can_remat(x) && !lp_flexible(x)
            ? expansion_of(x)
            : NULL;
        if (d)
            place_scale(p, x, slice_for(p, m, d->operands[0], d->axis));
        else if (m->kind == LY_MMA && !pass_can_remat(x) && from_vectors(p, x, m, 0))
            pull_vectors(p, op->operands[i], m);
        else if (tile_can_follow(op, x, m))
            place_tile(p, op->operands[i], m);
        else if (branch_can_follow(x))
            set_layout(p, op->operands[i], m);
    }
    set_layout(p, op->results[0], m);
}

const Layout *lp_branch_layout(const IrOp *op, int i)
{
    const Layout *l = NULL;
    for (int r = 0; r < op->nregions; r++) {
        const IrOp *y = op->regions[r]->last;
        const IrValue *x = y && y->kind == IR_YIELD && i < y->nops ? y->operands[i] : NULL;
        if (x && x->type.rank && pass_can_remat(x))
            continue; /* made again in any layout (an accumulator reset to zeros) */
        if (!x || !x->layout || (l && !layout_equal(l, x->layout)))
            return NULL;
        l = x->layout;
    }
    return l;
}

/* Is x the value a loop carries that an arm of branch op gives back as
 * it was, where the loop carries the branch's result i on (a K step under
 * `if`, kept when skipped: unsloth's grouped GEMM accumulates an expert's
 * blocks only where the block has rows)? Its layout is the loop's, which
 * spread_for takes from the branch's: none yet. */
static bool carried_through(const IrOp *op, int i, const IrValue *x)
{
    const IrBlock *body = x->def || x->layout ? NULL : x->owner;
    const IrOp *loop = body ? body->parent : NULL;
    const IrOp *y = body ? body->last : NULL;
    int k = x->index - 1; /* the loop's argument 0 is its induction variable */
    return loop && loop->kind == IR_FOR && y && y->kind == IR_YIELD && k >= 0 && k < y->nops &&
        y->operands[k] == op->results[i];
}

/* The layout the arms of branch op yield result i in (lp_branch_layout),
 * leaving out also the arms that give back what the loop carries it as
 * (carried_through). */
static const Layout *branch_layout_in_loop(const IrOp *op, int i)
{
    const Layout *l = NULL;
    for (int r = 0; r < op->nregions; r++) {
        const IrOp *y = op->regions[r]->last;
        const IrValue *x = y && y->kind == IR_YIELD && i < y->nops ? y->operands[i] : NULL;
        if (x && (carried_through(op, i, x) || (x->type.rank && pass_can_remat(x))))
            continue;
        if (!x || !x->layout || (l && !layout_equal(l, x->layout)))
            return NULL;
        l = x->layout;
    }
    return l;
}

/* A branch yielding an mma value in every arm but those that make theirs
 * again in any layout (a flattened GEMM's epilogue, which stores the
 * accumulator and yields zeros, else yields it as it is) or give back what
 * the loop carries (carried_through) keeps it there; the loop carrying it
 * then does too (spread_for). */
static void spread_if(LayoutPass *p, IrOp *op)
{
    for (int i = 0; i < op->nres; i++) {
        const Layout *l = branch_layout_in_loop(op, i);
        if (!op->results[i]->layout && l && (l->kind == LY_MMA || l->kind == LY_SLICE))
            set_layout(p, op->results[i], l);
    }
}

static bool spread(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    if (op->kind == IR_DOT && op->nops > 2 && lp_is_mma(op->results[0]) &&
        branch_can_follow(op->operands[2]))
        set_layout(p, op->operands[2], op->results[0]->layout); /* the accumulator it starts from */
    else if (op->kind == IR_FOR && op->nregions == 1)
        spread_for(p, op);
    else if (op->kind == IR_IF)
        spread_if(p, op);
    else if (op->nres == 1 && op->results[0]->type.rank && !lp_special(op->results[0])) {
        if (lp_elementwise(op->kind))
            follow_with_scales(p, op);
        else if (op->nops >= 1 && lp_special(op->operands[0])) {
            const Layout *l = spread_shape(p, op);
            set_layout(p, op->results[0], l);
            /* a row brought back from a slice of a blocked layout lies in
             * that layout, not in its shape's default ([1, N] and [N, 1]
             * have their own): the elementwise ops on it follow it
             * (follow_pairs, layout.c), as Triton's do, where in the
             * shape's default `col_sum[None, :] + eps` crossed threads
             * through shared memory there and back, behind two barriers
             * each way (Sinkhorn's 20 iterations: 156 barriers) */
            if (l && l->kind == LY_BLOCKED && op->kind == IR_EXPAND_DIMS)
                p->pair[op->results[0]->id] = 1;
        }
    }
    return !p->failed;
}

/* A reduction of a blocked value (2-D, or 3-D: a row's runs or groups)
 * keeps its result where the rows are,
 * in a slice of that layout, as one of an mma value does: it combines in
 * registers and shuffles and crosses warps through shared memory only where
 * warps step along the axis, where otherwise a column sum moved the whole
 * tile through shared memory to put the axis last, and every result went
 * through shared memory again to reach its blocked layout. Runs after the
 * mma layouts have spread (an operand they reach is not blocked). An
 * argmax's index too: a top-k loop's `x == arg[:, None]` then reads it in
 * place, where from a blocked result it crossed back through shared memory
 * each step. */
bool lp_slice_reduction(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    if (op->kind != IR_REDUCE || op->nops < 1 || op->nres != op->nops ||
        (op->nops > 1 && op->sub != RED_CUSTOM))
        return true;
    const IrValue *x = op->operands[0];
    IrValue *r = op->results[0];
    if (r->layout || x->type.rank < 2 || r->type.rank != x->type.rank - 1)
        return true;
    /* a tuple's inputs (values and their indices) all read the first's
     * layout: a slice of it holds each of the results. Along the last dim
     * a tuple keeps the row path (reduce_last), which reads its partials
     * with fewer barriers; along another dim that path moved the whole
     * tile through shared memory each time (a max with its indices over
     * the rows of a column block ran at 0.2x of Triton). */
    if (op->nops > 1 && op->axis == x->type.rank - 1)
        return true;
    const Layout *l = x->layout ? x->layout : lp_blocked_of(p, &x->type);
    if (!l || l->kind != LY_BLOCKED || warps_mixed(p, l, &x->type, op->axis))
        return true;
    for (int i = 0; i < op->nres; i++)
        set_layout(p, op->results[i], lp_slice_of(p, l, op->axis));
    return true;
}

void lp_spread_all(LayoutPass *p)
{
    for (int round = 0; round < 16; round++) {
        p->changed = false;
        ir_walk(p->f->body, spread, p);
        if (!p->changed)
            break;
    }
}
