/* layout_column.c: layouts of the layout pass that follow loads. A tile
 * loaded along another dim than the last (a transposed operand, a state
 * stored column-major) or packed along one (int4 weights two a byte along
 * K) gets a layout of its own, and the elementwise chain after it, with
 * the tiles it meets (a group scale, a broadcast vector), keeps it until a
 * narrower value or a dot's operand; a vector expanded and broadcast into
 * a tile takes the tile's layout from its expand_dims on. See layout.c for
 * the pass. */
#include "passes/layout_internal.h"

/* The operand of elementwise op d that the chain follows: the only one
 * that cannot be recomputed (`base + ids[:, None] * stride`: the ids' side
 * of the splat base and stride), or NULL. */
static IrValue *chain_operand(const IrOp *d)
{
    IrValue *r = NULL;
    for (int i = 0; i < d->nops; i++)
        if (!pass_can_remat(d->operands[i])) {
            if (r)
                return NULL;
            r = d->operands[i];
        }
    return r;
}

/* The values from a tile v back to the expand_dims that made it from a
 * vector (v a broadcast, or elementwise ops on one: `s[None, :]`, perhaps
 * cast on the way), each read once and not placed yet, into chain; their
 * number, or 0 where v is not such a tile or the vector can be recomputed
 * in any layout (offsets from an arange: it stays as it is). */
static int broadcast_chain(IrValue *v, IrValue **chain, int max)
{
    int n = 0;
    for (; v && n < max; v = chain_operand(v->def)) {
        if (v->layout || !v->def || v->type.rank != 2 || lp_reads_in(v->def->parent, v) != 1)
            return 0;
        chain[n++] = v;
        if (v->def->kind == IR_EXPAND_DIMS)
            break;
        if (!lp_elementwise(v->def->kind) && v->def->kind != IR_ADDPTR &&
            v->def->kind != IR_BROADCAST)
            return 0;
    }
    if (!n || chain[n - 1]->def->kind != IR_EXPAND_DIMS ||
        pass_can_remat(chain[n - 1]->def->operands[0]))
        return 0;
    return n;
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
    if (!lp_flexible(x))
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
    if (lp_reads_in(body, x) != 2 || lp_reads_in(body, next) != 1)
        return;
    x->layout = l;
    next->layout = l;
    loop->results[slot]->layout = l;
}

/* The op after `from` in its block that reads x, or NULL. */
IrOp *lp_reader_after(IrOp *from, const IrValue *x)
{
    for (IrOp *c = from->next; c; c = c->next)
        for (int i = 0; i < c->nops; i++)
            if (c->operands[i] == x)
                return c;
    return NULL;
}

/* How many addresses one warp instruction of a load in blocked layout l
 * reads, for a pointer of axis info a whose elements are read one by one:
 * along each dim, lanes that fall in one run of equal addresses share it. */
static int64_t warp_addresses(const AxisInfo *a, const Layout *l)
{
    int64_t n = 1;
    for (int d = 0; d < l->rank; d++) {
        int64_t span = (int64_t)l->tpw[d] * l->spt[d], c = a->constancy[d];
        n *= c >= l->spt[d] ? (span + c - 1) / c : l->tpw[d];
    }
    return n;
}

/* The values from tile o back to the load that makes it through casts and
 * other one-operand elementwise ops, each read once and not placed yet,
 * into chain: their number, or 0 where o is not such a tile or its load
 * would read more addresses a warp instruction in l than in its own
 * layout. A load read an element at a time qualifies when l's lanes run
 * along a dim over which its pointer repeats each address (a group scale
 * `s[(k0 + offs_k) // G, n]` under a weight tile's lanes along K): they
 * share one address there, where its own layout had every lane on a
 * column of its own. */
static int loaded_chain(LayoutPass *p, IrValue *o, const Layout *l, IrValue **chain, int max)
{
    int n = 0;
    for (; o && n < max; o = o->def->operands[0]) {
        IrOp *d = o->def;
        if (o->layout || !d || d->nres != 1 || lp_reads_in(d->parent, o) != 1)
            return 0;
        chain[n++] = o;
        if (d->kind == IR_LOAD)
            break;
        if (!lp_elementwise(d->kind) || d->nops != 1)
            return 0;
    }
    IrOp *ld = n ? chain[n - 1]->def : NULL;
    if (!ld || ld->kind != IR_LOAD || (ld->flags & IRF_VOLATILE) || !p->axis)
        return 0;
    const IrValue *ptr = ld->operands[0], *mask = ld->nops > 1 ? ld->operands[1] : NULL;
    const Layout *own = lp_blocked_of(p, &ptr->type);
    if (!own || axis_vector_width(p->axis, ptr, mask, lp_mem_bytes(ptr->type.elem)) > 1 ||
        warp_addresses(&p->axis[ptr->id], l) > warp_addresses(&p->axis[ptr->id], own))
        return 0;
    return n;
}

/* Whether operand o of an elementwise op can be had in layout l: it lies
 * there already (another column load's chain), it is recomputed there, it
 * is a vector broadcast into the tile (its chain then takes l), or a tile
 * loaded at one address per warp in l (loaded_chain; it takes l too). */
static bool follows(LayoutPass *p, IrValue *o, const Layout *l)
{
    IrValue *chain[8];
    if (o->layout)
        return layout_equal(o->layout, l);
    return !o->type.rank || pass_can_remat(o) || broadcast_chain(o, chain, 8) > 0 ||
        loaded_chain(p, o, l, chain, 8) > 0;
}

/* The elementwise ops after a column load, each the only reader of the
 * value before it (a cast, a scale `x * w[None, :]`, the cast back),
 * whose other operands can be had in its layout, take that layout up
 * to the last of them no wider than the load's elements: the conversion
 * the value then needs (into a dot operand: an SSM chunk's decayed input,
 * a state tile cast to fp16) moves after them and carries no more bytes,
 * where in a default layout the tile crossed threads twice, once for the
 * arithmetic and once more for the dot. Where the chain ends in a dot's
 * operand, all of it does, however wide: the dot's conversion is needed
 * anyway (an int4 weight unpacked to int32, scaled in fp32, cast to bf16,
 * whose packed bytes otherwise crossed to the scale tile's layout first,
 * every K step: vLLM's int4 MoE GEMM). */
static bool follow_column(LayoutPass *p, IrOp *load, const Layout *l)
{
    IrValue *x = load->results[0], *chain[8];
    int n = 0, keep = 0;
    for (IrOp *at = load; n < 8; at = x->def) {
        IrOp *c = lp_reader_after(at, x);
        if (!c || !lp_elementwise(c->kind) || c->nres != 1 || c->results[0]->layout ||
            c->results[0]->type.rank != x->type.rank || lp_reads_in(load->parent, x) != 1)
            break;
        bool ok = true;
        for (int i = 0; i < c->nops && ok; i++)
            ok = c->operands[i] == x || follows(p, c->operands[i], l);
        if (!ok)
            break;
        x = chain[n++] = c->results[0];
        if (dtype_bits(x->type.dt) <= dtype_bits(load->results[0]->type.dt))
            keep = n;
    }
    if (n && pass_only_dots_read(load->parent, x))
        keep = n;
    for (int i = 0; i < keep; i++) {
        IrOp *c = chain[i]->def;
        chain[i]->layout = l;
        for (int k = 0; k < c->nops; k++) {
            IrValue *b[8];
            int nb = c->operands[k]->layout ? 0 : broadcast_chain(c->operands[k], b, 8);
            if (!nb && !c->operands[k]->layout)
                nb = loaded_chain(p, c->operands[k], l, b, 8);
            for (int j = 0; j < nb; j++)
                b[j]->layout = l;
        }
    }
    return keep > 0;
}

/* The layout of an access that runs along no dim, whose lanes should
 * still meet in few sectors: where the last dim is neither contiguous nor
 * constant (a stride between its elements) and another dim repeats each
 * address in short runs (`offs_k // 2` into weights packed two a byte along
 * K), lanes go along that dim, one element each, so that a warp's
 * neighbouring lanes read the same or nearby bytes. Along the last dim
 * every lane read its own line: 32 sectors an instruction where 1 holds
 * them (vLLM's int4 MoE GEMM ran at 0.2x of Triton). NULL otherwise. */
static const Layout *packed_layout(LayoutPass *p, const IrValue *ptr)
{
    const AxisInfo *a = &p->axis[ptr->id];
    int rank = ptr->type.rank, best = -1;
    if (a->contiguity[rank - 1] > 1 || a->constancy[rank - 1] > 1)
        return NULL;
    for (int d = 0; d < rank - 1; d++)
        if (a->constancy[d] > 1 && a->constancy[d] < ptr->type.shape[d] &&
            (best < 0 || a->constancy[d] > a->constancy[best]))
            best = d;
    if (best < 0)
        return NULL;
    Layout l = layout_blocked_along(rank, ptr->type.shape, best, 1, p->threads);
    const Layout *r = ir_layout_intern(p->f, &l);
    if (!r)
        p->failed = true;
    return r;
}

/* The layout of an access contiguous along another dim than the last (a
 * transposed operand, K^T in attention, a column-major output) with that
 * dim first, so that each thread moves whole vectors of at most `cap`
 * elements, or NULL when the last dim is as good. */
const Layout *lp_column_layout(LayoutPass *p, const IrValue *ptr, const IrValue *mask, int cap)
{
    if (!p->axis || ptr->type.rank < 2)
        return NULL;
    int fast = axis_fast_dim(p->axis, ptr), bytes = lp_mem_bytes(ptr->type.elem);
    if (fast == ptr->type.rank - 1)
        return packed_layout(p, ptr);
    int w = axis_vector_width_along(p->axis, ptr, mask, bytes, fast);
    if (w <= axis_vector_width(p->axis, ptr, mask, bytes) || w <= 1)
        return NULL;
    while (w > 1 && (w > cap || w > type_numel(ptr->type) / p->threads))
        w /= 2;
    Layout l = layout_blocked_along(ptr->type.rank, ptr->type.shape, fast, w, p->threads);
    const Layout *r = ir_layout_intern(p->f, &l);
    if (!r)
        p->failed = true;
    return r;
}

/* A column load gets its column layout; its pointers are recomputed to
 * match. */
void lp_assign_column_load(LayoutPass *p, IrOp *op)
{
    IrValue *r = op->results[0];
    if (r->layout)
        return;
    r->layout =
        lp_column_layout(p, op->operands[0], op->nops > 1 ? op->operands[1] : NULL, 1 << 20);
    if (r->layout)
        carry_column(op, r->layout);
}

bool lp_assign_columns(IrOp *op, void *ctx)
{
    if (op->kind == IR_LOAD && op->nres == 1)
        lp_assign_column_load(ctx, op);
    return true;
}

/* The chains after the column loads (the only loads placed so far); a
 * chain that meets another's value (`k * exp(gn[:, None] - g)`, both
 * loads along K) goes on once that one has been followed. */
bool lp_follow_columns(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    const Layout *l = op->kind == IR_LOAD && op->nres == 1 ? op->results[0]->layout : NULL;
    if (l && l->kind == LY_BLOCKED && follow_column(p, op, l))
        p->changed = true;
    return true;
}

/* A vector expanded and broadcast into a tile takes the tile's blocked
 * layout from its expand_dims on, which then reads the vector in a slice
 * of it (wanted, layout_convert.c): expand_dims and broadcast stay in
 * registers and at most the vector itself crosses threads, once, as in
 * Triton. In their shapes' own blocked layouts, both ops crossed threads
 * through shared memory, each behind two barriers. */
bool lp_assign_broadcast(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    IrValue *r = op->nres == 1 ? op->results[0] : NULL;
    if (op->kind != IR_BROADCAST || !r || r->layout || r->type.rank != 2)
        return true;
    IrValue *chain[8];
    int n = broadcast_chain(op->operands[0], chain, 8);
    if (!n)
        return true;
    r->layout = lp_blocked_of(p, &r->type);
    for (int i = 0; i < n; i++)
        chain[i]->layout = r->layout;
    return !p->failed;
}
