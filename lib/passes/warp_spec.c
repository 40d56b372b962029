/* warp_spec.c: the producer half of a warp-specialized loop (sm_90a). The
 * kernel then runs in num_warps consumer warps plus one producer
 * warpgroup; one thread of the producer walks the loop's iterations ahead
 * of the consumers, and per iteration i, for each ring:
 *
 *   wait until slot i % S is empty (its empty mbarrier: every consumer
 *   thread arrived after the wgmma that read it completed), then copy the
 *   iteration's tile into it by TMA (the slot's full mbarrier counts the
 *   bytes, and the consumers wait on it).
 *
 * The producer op is the kernel's first op, so the producer runs none of
 * the consumers' code; it computes the loop's bounds and the tiles'
 * origins itself, from clones of the pure scalar ops of the kernel's top
 * level that give them (a tile's origin is a polynomial over the iteration
 * index and such scalars, tile.c). Pass pipeline_plan decides where this
 * applies, and pipeline_ws (pipe_ws.c) rewrites the consumers' side of
 * the loop.
 *
 * A flattened loop (pass_flatten) sits in an `if` (there are tiles and K
 * steps), and its tiles' origins read scalars its body computes: the
 * tile's row and column offsets, carried and recomputed in a pure `if`
 * when the tile changes, and the K step's counter. The producer then
 * walks the same (tile, K step) iterations: its loop carries those values
 * too, from clones of their initial values, and repeats the body's scalar
 * ops that advance them; around it, the enclosing ifs with their
 * conditions, so that it runs exactly where the consumers' loop does. */
#include "passes/warp_spec.h"

#include <string.h>

enum { WS_UNKNOWN, WS_YES, WS_NO };
enum { WS_MAX_CHAIN = 8 };

typedef struct Ws {
    IrFunc *f;
    const IrOp *loop;
    const IrBlock *body; /* a flattened loop's body, whose scalars the producer repeats, or NULL */
    const IrBlock *chain[WS_MAX_CHAIN]; /* the blocks around the loop, its own first */
    int nchain;
    int nids;      /* ids below this are the function's before the producer */
    char *state;   /* by value id: WS_YES where the producer can compute it */
    bool *need;    /* by value id: a clone is needed */
    IrValue **map; /* by value id: the clone */
} Ws;

/* Scalar ops that compute their value from their operands alone. */
static bool scalar_op(const IrOp *op)
{
    if (op->nregions || op->nres != 1 || op->results[0]->type.rank != 0)
        return false;
    switch (op->kind) {
    case IR_CONST:
    case IR_PROGRAM_ID:
    case IR_NUM_PROGRAMS:
    case IR_ADD:
    case IR_SUB:
    case IR_MUL:
    case IR_DIV:
    case IR_REM:
    case IR_AND:
    case IR_OR:
    case IR_XOR:
    case IR_SHL:
    case IR_SHR:
    case IR_MIN:
    case IR_MAX:
    case IR_UMULHI:
    case IR_NEG:
    case IR_NOT:
    case IR_CMP:
    case IR_SELECT:
    case IR_CAST:
    case IR_BITCAST:
    case IR_HINT: return true;
    default: return false;
    }
}

static bool computable(Ws *w, const IrValue *v, int depth);

/* Whether block b holds the loop (the kernel's body counts). */
static bool encloses(const Ws *w, const IrBlock *b)
{
    for (int i = 0; i < w->nchain; i++)
        if (w->chain[i] == b)
            return true;
    return false;
}

/* An if of scalars whose regions hold scalar ops only (a flattened loop's
 * recomputation of the tile's offsets), reading computable values. */
static bool scalar_if(Ws *w, const IrOp *op, int depth)
{
    if (op->kind != IR_IF || !computable(w, op->operands[0], depth + 1))
        return false;
    for (int i = 0; i < op->nres; i++)
        if (op->results[i]->type.rank)
            return false;
    for (int r = 0; r < op->nregions; r++)
        for (const IrOp *o = op->regions[r]->first; o; o = o->next) {
            if (o->kind != IR_YIELD && !scalar_op(o))
                return false;
            for (int i = 0; i < o->nops; i++) {
                const IrValue *x = o->operands[i];
                bool local = x && x->def && x->def->parent == op->regions[r];
                if (!local && !computable(w, x, depth + 1))
                    return false;
            }
        }
    return true;
}

/* A carried value of a flattened loop's body: its initial value and what
 * the body yields for it are computable. Taken as computable while that
 * is checked (the yield may lead back to it). */
static bool carried(Ws *w, const IrValue *v, int depth)
{
    int k = v->index - 1;
    const IrOp *y = w->body->last;
    if (k < 0)
        return true; /* the induction variable: the producer's own */
    if (w->state[v->id] != WS_UNKNOWN)
        return w->state[v->id] == WS_YES;
    w->state[v->id] = WS_YES;
    bool ok = 3 + k < w->loop->nops && y && y->kind == IR_YIELD && k < y->nops &&
        computable(w, w->loop->operands[3 + k], depth + 1) &&
        computable(w, y->operands[k], depth + 1);
    w->state[v->id] = ok ? WS_YES : WS_NO;
    return ok;
}

/* A parameter, or a pure scalar op in a block around the loop (the
 * kernel's top level, unless the loop is flattened) whose operands are
 * computable too; in a flattened loop's body also its carried values and
 * scalar ops (memoised: the ops form a DAG but for the loop's carried
 * values). */
static bool computable(Ws *w, const IrValue *v, int depth)
{
    if (!v || depth > 64)
        return false;
    if (!v->def)
        return v->owner == w->f->body || (w->body && v->owner == w->body && carried(w, v, depth));
    if (w->state[v->id] != WS_UNKNOWN)
        return w->state[v->id] == WS_YES;
    const IrOp *d = v->def;
    bool ok;
    if (w->body && d->parent == w->body && d->kind == IR_IF) {
        ok = scalar_if(w, d, depth);
    } else {
        ok = (encloses(w, d->parent) || (w->body && d->parent == w->body)) && scalar_op(d);
        for (int i = 0; ok && i < d->nops; i++)
            ok = computable(w, d->operands[i], depth + 1);
    }
    for (int i = 0; i < d->nres; i++)
        w->state[d->results[i]->id] = ok ? WS_YES : WS_NO;
    return ok;
}

/* Marks what computing v takes (computable(v) holds): the ops, and a
 * flattened loop's carried values with their initial and next values. */
static void mark(Ws *w, const IrValue *v)
{
    if (!v || w->need[v->id])
        return;
    if (!v->def) {
        if (!w->body || v->owner != w->body || v->index < 1)
            return;
        w->need[v->id] = true;
        mark(w, w->loop->operands[3 + v->index - 1]);
        mark(w, w->body->last->operands[v->index - 1]);
        return;
    }
    const IrOp *d = v->def;
    for (int i = 0; i < d->nres; i++)
        w->need[d->results[i]->id] = true;
    for (int i = 0; i < d->nops; i++)
        mark(w, d->operands[i]);
    for (int r = 0; r < d->nregions; r++) /* what a scalar if reads from outside */
        for (const IrOp *o = d->regions[r]->first; o; o = o->next)
            for (int i = 0; i < o->nops; i++)
                mark(w, o->operands[i]);
}

/* Whether symbol s occurs in an origin coordinate of tile t. */
static bool sym_used(const TileMatch *t, int s)
{
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < t->coord[c].n; i++)
            for (int k = 0; k < t->coord[c].t[i].deg; k++)
                if (t->coord[c].t[i].sym[k] == TILE_FIRST_VALUE + s)
                    return true;
    return false;
}

/* Applies fn to the values the producer needs: the conditions of the ifs
 * around the loop, bounds, then the scalars of the tiles' origins; false
 * when fn is false for one. */
static bool each_input(Ws *w, const IrOp *loop, const WsRing *r, int n,
                       bool (*fn)(Ws *, const IrValue *))
{
    for (int i = 0; i + 1 < w->nchain; i++)
        if (!fn(w, w->chain[i]->parent->operands[0]))
            return false;
    for (int i = 0; i < 3; i++)
        if (!fn(w, loop->operands[i]))
            return false;
    for (int k = 0; k < n; k++)
        for (int s = 0; s < r[k].tile->nsyms; s++)
            if (sym_used(r[k].tile, s) && !fn(w, r[k].tile->syms[s]))
                return false;
    return true;
}

static bool check_input(Ws *w, const IrValue *v) { return computable(w, v, 0); }

static bool mark_input(Ws *w, const IrValue *v)
{
    mark(w, v);
    return true;
}

/* The blocks from the loop's out to the kernel's body: the kernel's body
 * itself, or for a flattened loop the regions of ifs too. */
static bool find_chain(Ws *w, const IrOp *loop)
{
    bool flat = (loop->flags & IRF_FLATTEN) != 0;
    w->nchain = 0;
    for (const IrBlock *b = loop->parent; b && w->nchain < WS_MAX_CHAIN;) {
        w->chain[w->nchain++] = b;
        if (b == w->f->body)
            return true;
        const IrOp *o = b->parent;
        if (!flat || !o || o->kind != IR_IF || o->nops != 1)
            return false;
        b = o->parent;
    }
    return false;
}

static bool ws_init(Ws *w, IrFunc *f, const IrOp *loop)
{
    size_t n = (size_t)f->next_id + 1;
    w->f = f;
    w->loop = loop;
    w->body = (loop->flags & IRF_FLATTEN) && loop->nregions == 1 ? loop->regions[0] : NULL;
    w->nids = f->next_id;
    w->state = arena_alloc(f->arena, n);
    w->need = arena_alloc(f->arena, sizeof(bool) * n);
    w->map = arena_alloc(f->arena, sizeof(IrValue *) * n);
    if (!w->state || !w->need || !w->map || f->arena->oom)
        return false;
    memset(w->state, 0, n);
    memset(w->need, 0, sizeof(bool) * n);
    memset(w->map, 0, sizeof(IrValue *) * n);
    return find_chain(w, loop);
}

bool ws_computable(IrFunc *f, const IrOp *loop, const WsRing *r, int n)
{
    Ws w;
    return ws_init(&w, f, loop) && each_input(&w, loop, r, n, check_input);
}

static IrValue *mapped(const Ws *w, IrValue *v)
{
    return v && v->id < w->nids && w->map[v->id] ? w->map[v->id] : v;
}

/* One iteration of the producer's loop: for each ring, the wait for its
 * slot to be empty, then the copy (attention's K tile goes as soon as its
 * slot is free, whatever V's, which a later dot releases). */
static void produce(Ws *w, IrBuilder *b, const IrOp *loop, const WsRing *r, int n, int slots,
                    IrValue *iv, IrValue *slot)
{
    Span sp = loop->span;
    IrValue *j =
        ir_iteration_index(b, sp, iv, mapped(w, loop->operands[0]), loop->operands[2]->def->ival);
    IrValue *live = ir_const_int(b, sp, type_scalar(DT_I1), 1);
    for (int k = 0; k < n; k++) {
        IrOp *wait = ir_build(b, IR_TMA_WAIT, sp, &slot, 1, NULL, 0);
        wait->ival = r[k].buffer;
        wait->ival2 = slots;
        wait->sub = 1;
        TileMatch t = *r[k].tile; /* its scalars, as the producer computes them */
        bool nonneg = tile_origin_nonneg(&t);
        for (int s = 0; s < t.nsyms; s++)
            t.syms[s] = mapped(w, (IrValue *)t.syms[s]);
        IrValue *ops[4] = {tile_coord(b, sp, &t, 0, j), tile_coord(b, sp, &t, 1, j), live, slot};
        IrOp *c = ir_build(b, IR_TMA_COPY, r[k].span, ops, 4, NULL, 0);
        c->ival = r[k].buffer;
        c->ival2 = slots;
        c->sub = r[k].tmap;
        if (nonneg)
            c->flags |= IRF_NONNEG;
    }
}

/* The producer's loop over the iterations of `loop`: the slot counter,
 * and the carried values of a flattened loop's body that it needs, which
 * the clones of the body's scalar ops advance each iteration. */
static void walk_loop(Ws *w, IrBuilder *b, const WsRing *r, int n, int slots)
{
    const IrOp *loop = w->loop;
    Span sp = loop->span;
    Type i32 = type_scalar(DT_I32);
    int nc = loop->nops - 3, m = 0;
    IrValue **ops = arena_alloc(w->f->arena, sizeof(IrValue *) * (size_t)(4 + nc));
    Type *types = arena_alloc(w->f->arena, sizeof(Type) * (size_t)(1 + nc));
    int *which = arena_alloc(w->f->arena, sizeof(int) * (size_t)(1 + nc));
    if (!ops || !types || !which || w->f->arena->oom)
        return;
    for (int i = 0; i < 3; i++)
        ops[i] = mapped(w, loop->operands[i]);
    ops[3] = ir_const_int(b, sp, i32, 0);
    types[0] = i32;
    for (int k = 0; w->body && k < nc && k + 1 < w->body->nargs; k++)
        if (w->need[w->body->args[k + 1]->id]) {
            which[m] = k;
            ops[4 + m] = mapped(w, loop->operands[3 + k]);
            types[1 + m++] = loop->operands[3 + k]->type;
        }
    IrOp *walk = ir_build(b, IR_FOR, sp, ops, 4 + m, types, 1 + m);
    IrBlock *body = ir_op_add_region(w->f, walk);
    IrValue *iv = ir_block_add_arg(w->f, body, ops[0]->type, "it");
    IrValue *slot = ir_block_add_arg(w->f, body, i32, "slot");
    IrValue **next = arena_alloc(w->f->arena, sizeof(IrValue *) * (size_t)(1 + m));
    if (!next || w->f->arena->oom)
        return;
    for (int j = 0; j < m; j++)
        w->map[w->body->args[which[j] + 1]->id] = ir_block_add_arg(w->f, body, types[1 + j], NULL);
    IrBuilder in = {w->f, body, NULL};
    for (const IrOp *o = w->body ? w->body->first : NULL; o; o = o->next)
        if (o->nres && w->need[o->results[0]->id])
            ir_clone(&in, o, w->map, w->nids);
    produce(w, &in, loop, r, n, slots, iv, slot);
    next[0] = ir_next_slot(&in, sp, slot, slots);
    for (int j = 0; j < m; j++)
        next[1 + j] = mapped(w, w->body->last->operands[which[j]]);
    ir_build(&in, IR_YIELD, sp, next, 1 + m, NULL, 0);
}

/* Level i of the blocks around the loop (chain[i]): clones of the scalars
 * it computes that the producer needs, then the loop, or the if that
 * holds it with its condition, the region holding it built the same way. */
static void build_level(Ws *w, IrBuilder *b, int i, const WsRing *r, int n, int slots)
{
    const IrBlock *blk = w->chain[i];
    const IrOp *inner = i ? w->chain[i - 1]->parent : w->loop;
    for (const IrOp *o = blk->first; o && o != inner; o = o->next)
        if (o->kind != IR_PRODUCER && o->nres == 1 && w->need[o->results[0]->id])
            ir_clone(b, o, w->map, w->nids);
    if (i == 0) {
        walk_loop(w, b, r, n, slots);
        return;
    }
    IrValue *c = mapped(w, inner->operands[0]);
    IrOp *e = ir_build(b, IR_IF, inner->span, &c, 1, NULL, 0);
    for (int k = 0; k < inner->nregions; k++) {
        IrBuilder rb = {w->f, ir_op_add_region(w->f, e), NULL};
        if (inner->regions[k] == w->chain[i - 1])
            build_level(w, &rb, i - 1, r, n, slots);
        ir_build(&rb, IR_YIELD, inner->span, NULL, 0, NULL, 0);
    }
}

bool ws_producer(IrFunc *f, const IrOp *loop, const WsRing *r, int n, int slots)
{
    Ws w;
    if (!ws_init(&w, f, loop) || !each_input(&w, loop, r, n, check_input))
        return false;
    each_input(&w, loop, r, n, mark_input);
    IrBuilder top = {f, f->body, f->body->first};
    IrOp *prod = ir_build(&top, IR_PRODUCER, loop->span, NULL, 0, NULL, 0);
    IrBlock *region = ir_op_add_region(f, prod);
    IrBuilder b = {f, region, NULL};
    build_level(&w, &b, w.nchain - 1, r, n, slots);
    ir_build(&b, IR_YIELD, loop->span, NULL, 0, NULL, 0);
    f->producer_warps = 4;
    return !f->arena->oom;
}
