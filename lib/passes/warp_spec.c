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
 * index and such scalars, tile.c). pass_pipeline decides where this
 * applies and rewrites the consumers' side of the loop. */
#include "passes/warp_spec.h"

#include <string.h>

enum { WS_UNKNOWN, WS_YES, WS_NO };

typedef struct Ws {
    IrFunc *f;
    int nids;        /* ids below this are the function's before the producer */
    char *state;     /* by value id: WS_YES where the producer can compute it */
    bool *need;      /* by value id: a clone is needed */
    IrValue **map;   /* by value id: the clone */
} Ws;

/* Scalar ops that compute their value from their operands alone. */
static bool scalar_op(const IrOp *op)
{
    if (op->nregions || op->nres != 1 || op->results[0]->type.rank != 0)
        return false;
    switch (op->kind) {
    case IR_CONST: case IR_PROGRAM_ID: case IR_NUM_PROGRAMS: case IR_ADD: case IR_SUB:
    case IR_MUL: case IR_DIV: case IR_REM: case IR_AND: case IR_OR: case IR_XOR: case IR_SHL:
    case IR_SHR: case IR_MIN: case IR_MAX: case IR_UMULHI: case IR_NEG: case IR_NOT:
    case IR_CMP: case IR_SELECT: case IR_CAST: case IR_BITCAST: case IR_HINT:
        return true;
    default:
        return false;
    }
}

/* A parameter, or a pure scalar op at the kernel's top level whose
 * operands are computable too (memoised: the ops form a DAG). */
static bool computable(Ws *w, const IrValue *v, int depth)
{
    if (!v || depth > 64)
        return false;
    if (!v->def)
        return v->owner == w->f->body;
    if (w->state[v->id] != WS_UNKNOWN)
        return w->state[v->id] == WS_YES;
    const IrOp *d = v->def;
    bool ok = d->parent == w->f->body && scalar_op(d);
    for (int i = 0; ok && i < d->nops; i++)
        ok = computable(w, d->operands[i], depth + 1);
    w->state[v->id] = ok ? WS_YES : WS_NO;
    return ok;
}

/* Marks what computing v takes (computable(v) holds). */
static void mark(Ws *w, const IrValue *v)
{
    if (!v->def || w->need[v->id])
        return;
    w->need[v->id] = true;
    for (int i = 0; i < v->def->nops; i++)
        mark(w, v->def->operands[i]);
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

/* Applies fn to the values the producer needs: bounds, then the scalars
 * of the tiles' origins; false when fn is false for one. */
static bool each_input(Ws *w, const IrOp *loop, const WsRing *r, int n,
                       bool (*fn)(Ws *, const IrValue *))
{
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

static bool ws_init(Ws *w, IrFunc *f)
{
    size_t n = (size_t)f->next_id + 1;
    w->f = f;
    w->nids = f->next_id;
    w->state = arena_alloc(f->arena, n);
    w->need = arena_alloc(f->arena, sizeof(bool) * n);
    w->map = arena_alloc(f->arena, sizeof(IrValue *) * n);
    if (!w->state || !w->need || !w->map || f->arena->oom)
        return false;
    memset(w->state, 0, n);
    memset(w->need, 0, sizeof(bool) * n);
    memset(w->map, 0, sizeof(IrValue *) * n);
    return true;
}

bool ws_computable(IrFunc *f, const IrOp *loop, const WsRing *r, int n)
{
    Ws w;
    return loop->parent == f->body && ws_init(&w, f) && each_input(&w, loop, r, n, check_input);
}

static IrValue *mapped(const Ws *w, IrValue *v)
{
    return v && v->id < w->nids && w->map[v->id] ? w->map[v->id] : v;
}

/* The iteration index of induction value iv: (iv - lb) / step, as i32. */
static IrValue *iteration(IrBuilder *b, Span sp, IrValue *iv, IrValue *lb, int64_t step)
{
    IrValue *j = ir_binary(b, IR_SUB, sp, iv, lb, iv->type);
    if (step != 1)
        j = ir_binary(b, IR_DIV, sp, j, ir_const_int(b, sp, iv->type, step), iv->type);
    return j->type.dt == DT_I32 ? j : ir_unary(b, IR_CAST, sp, j, type_scalar(DT_I32));
}

/* The slot after x in a ring of n. */
static IrValue *next_slot(IrBuilder *b, Span sp, IrValue *x, int n)
{
    Type i32 = type_scalar(DT_I32);
    IrValue *one = ir_binary(b, IR_ADD, sp, x, ir_const_int(b, sp, i32, 1), i32);
    IrValue *wrap = ir_binary(b, IR_CMP, sp, one, ir_const_int(b, sp, i32, n), type_scalar(DT_I1));
    wrap->def->sub = CMP_EQ;
    IrValue *ops[3] = {wrap, ir_const_int(b, sp, i32, 0), one};
    return ir_build(b, IR_SELECT, sp, ops, 3, &i32, 1)->results[0];
}

/* One iteration of the producer's loop: the waits for empty slots, then
 * the copies. */
static void produce(Ws *w, IrBuilder *b, const IrOp *loop, const WsRing *r, int n, int slots,
                    IrValue *iv, IrValue *slot)
{
    Span sp = loop->span;
    IrValue *j = iteration(b, sp, iv, mapped(w, loop->operands[0]),
                           loop->operands[2]->def->ival);
    for (int k = 0; k < n; k++) {
        IrOp *wait = ir_build(b, IR_TMA_WAIT, sp, &slot, 1, NULL, 0);
        wait->ival = r[k].buffer;
        wait->ival2 = slots;
        wait->sub = 1;
    }
    IrValue *live = ir_const_int(b, sp, type_scalar(DT_I1), 1);
    for (int k = 0; k < n; k++) {
        TileMatch t = *r[k].tile; /* its scalars, as the producer computes them */
        for (int s = 0; s < t.nsyms; s++)
            t.syms[s] = mapped(w, (IrValue *)t.syms[s]);
        IrValue *ops[4] = {tile_coord(b, sp, &t, 0, j), tile_coord(b, sp, &t, 1, j), live, slot};
        IrOp *c = ir_build(b, IR_TMA_COPY, sp, ops, 4, NULL, 0);
        c->ival = r[k].buffer;
        c->ival2 = slots;
        c->sub = r[k].tmap;
    }
}

bool ws_producer(IrFunc *f, const IrOp *loop, const WsRing *r, int n, int slots)
{
    Ws w;
    if (!ws_init(&w, f) || !each_input(&w, loop, r, n, check_input))
        return false;
    each_input(&w, loop, r, n, mark_input);
    IrBuilder top = {f, f->body, f->body->first};
    IrOp *prod = ir_build(&top, IR_PRODUCER, loop->span, NULL, 0, NULL, 0);
    IrBlock *region = ir_op_add_region(f, prod);
    IrBuilder b = {f, region, NULL};
    for (IrOp *o = prod->next; o && o != loop; o = o->next)
        if (o->nres == 1 && w.need[o->results[0]->id])
            ir_clone(&b, o, w.map, w.nids);
    Type i32 = type_scalar(DT_I32);
    IrValue *ops[4] = {mapped(&w, loop->operands[0]), mapped(&w, loop->operands[1]),
                       mapped(&w, loop->operands[2]), ir_const_int(&b, loop->span, i32, 0)};
    IrOp *walk = ir_build(&b, IR_FOR, loop->span, ops, 4, &i32, 1);
    IrBlock *body = ir_op_add_region(f, walk);
    IrValue *iv = ir_block_add_arg(f, body, ops[0]->type, "it");
    IrValue *slot = ir_block_add_arg(f, body, i32, "slot");
    IrBuilder in = {f, body, NULL};
    produce(&w, &in, loop, r, n, slots, iv, slot);
    IrValue *next = next_slot(&in, loop->span, slot, slots);
    ir_build(&in, IR_YIELD, loop->span, &next, 1, NULL, 0);
    ir_build(&b, IR_YIELD, loop->span, NULL, 0, NULL, 0);
    f->producer_warps = 4;
    return !f->arena->oom;
}
