/* pipe_rewind.c: values of the current iteration where the body needs a
 * value the address slice runs ahead. A pipelined loop carries its
 * advanced arguments S-1 iterations ahead (pipeline.c). Where the body
 * also reads such an argument, or a slice value computed from it, for
 * its own iteration (attention backward's query rows, which address the
 * row statistics and also build the causal mask), and the argument moves
 * by the same step every iteration (x + c, or a pointer advanced by c),
 * its value for iteration i is the carried one less (S-1) * c; the slice
 * ops between are computed again from that. Other scalars, and vectors
 * of up to 256 elements, are carried S-1 iterations behind the slice
 * (delayed values, below); blocks that neither can serve keep the loop
 * unpipelined. */
#include "passes/pipeline.h"

#include <string.h>

enum { REWIND_DEPTH = 16 };

/* The same every iteration: defined before the loop, or by pure ops of the
 * body over such values (a constant, a stride times a block size). */
static bool invariant(const Pipe *p, const IrValue *v, int depth)
{
    if (!v || !pipe_in_body(p, v))
        return v != NULL;
    const IrOp *d = v->def;
    if (!d || depth > REWIND_DEPTH || d->nregions || d->nres != 1 || d->kind == IR_LOAD ||
        !pipe_pure_op(d))
        return false;
    for (int i = 0; i < d->nops; i++)
        if (!invariant(p, d->operands[i], depth + 1))
            return false;
    return true;
}

/* The op that advances carried argument k by a step the same every
 * iteration (its operand 1), or NULL. */
static const IrOp *advance(const Pipe *p, int k)
{
    const IrOp *y = p->body->last;
    const IrValue *x = p->body->args[k + 1];
    if (!y || y->kind != IR_YIELD || k >= y->nops || !y->operands[k])
        return NULL;
    const IrOp *d = y->operands[k]->def;
    if (!d || d->parent != p->body || (d->kind != IR_ADD && d->kind != IR_ADDPTR) ||
        d->operands[0] != x)
        return NULL;
    return invariant(p, d->operands[1], 0) ? d : NULL;
}

bool pipe_rewindable(const Pipe *p, const IrValue *v, int depth)
{
    if (!v || !pipe_in_body(p, v) || depth > REWIND_DEPTH)
        return false;
    if (!v->def)
        return v->index > 0 && advance(p, v->index - 1) != NULL;
    const IrOp *d = v->def;
    if (d->kind == IR_LOAD || d->nregions || d->nres != 1 || !pipe_pure_op(d))
        return false;
    for (int i = 0; i < d->nops; i++)
        if (pipe_runs_ahead(p, d->operands[i]) && !pipe_rewindable(p, d->operands[i], depth + 1))
            return false;
    return true;
}

/* v (invariant) where `at` stands: the body ops computing it cloned. */
static IrValue *hoist(Pipe *p, IrBuilder *at, IrValue *v, IrValue **map)
{
    if (!pipe_in_body(p, v))
        return v;
    if (v->id < p->nids && map[v->id])
        return map[v->id];
    IrOp *d = v->def;
    for (int i = 0; i < d->nops; i++)
        hoist(p, at, d->operands[i], map);
    IrOp *c = ir_clone(at, d, map, p->nids);
    return c ? c->results[0] : v;
}

/* Carried argument x (moved by `adv`) for the current iteration. */
static IrValue *rewind_arg(Pipe *p, IrBuilder *at, IrValue *x, const IrOp *adv, IrValue **map)
{
    IrValue *c = hoist(p, at, adv->operands[1], map);
    IrValue *n = ir_const_int(at, adv->span, c->type, -(int64_t)(p->stages - 1));
    n->layout = c->layout;
    IrValue *back = ir_binary(at, IR_MUL, adv->span, c, n, c->type);
    back->layout = c->layout;
    IrValue *r = ir_binary(at, adv->kind, adv->span, x, back, x->type);
    r->layout = x->layout;
    r->name = x->name;
    return r;
}

/* v, which runs ahead, for the current iteration (map: the values built). */
static IrValue *rewind(Pipe *p, IrBuilder *at, IrValue *v, IrValue **map, IrValue **cur)
{
    if (v->id < p->nids && cur[v->id])
        return cur[v->id];
    IrValue *r;
    if (!v->def) {
        r = rewind_arg(p, at, v, advance(p, v->index - 1), map);
    } else {
        for (int i = 0; i < v->def->nops; i++)
            if (pipe_runs_ahead(p, v->def->operands[i]))
                rewind(p, at, v->def->operands[i], map, cur);
        IrOp *c = ir_clone(at, v->def, cur, p->nids);
        r = c ? c->results[0] : v;
    }
    if (v->id < p->nids)
        cur[v->id] = r;
    return r;
}

void pipe_rewind_reads(Pipe *p)
{
    size_t n = sizeof(IrValue *) * (size_t)p->nids;
    IrValue **map = arena_alloc(p->f->arena, n), **cur = arena_alloc(p->f->arena, n);
    if (!map || !cur || p->f->arena->oom)
        return;
    memset(map, 0, n);
    memset(cur, 0, n);
    for (IrOp *o = p->body->first; o; o = o->next) {
        if (o->kind == IR_YIELD || pipe_in_slice(p, o) || pipe_is_planned_load(p, o))
            continue;
        for (int i = 0; i < o->nops; i++) {
            IrValue *v = o->operands[i];
            if (!v || v->id >= p->nids || !pipe_runs_ahead(p, v))
                continue;
            IrBuilder at = {p->f, p->body, o};
            o->operands[i] = rewind(p, &at, v, map, cur);
        }
    }
}

/* ---- delayed values ------------------------------------------------------------------ */
/* A scalar or small vector that runs ahead and moves by no constant step
 * (a hand-flattened persistent loop's K index `ki = tl.where(ki == n - 1,
 * 0, ki + 1)`, the tile's row and column, or its offset vectors, set in an
 * `if ki == 0`, which its epilogue reads) is carried S-1 iterations behind
 * the slice, in its own layout: arguments q0 .. q(S-2) hold
 * its values for iterations i .. i+S-2, the body reads q0, and each
 * iteration shifts them and appends the slice's value for i+S-1. The
 * prologue's clones of the slice give their first values. */

bool pipe_delay(Pipe *p, IrValue *v)
{
    if (v->type.rank > 1 || type_numel(v->type) > MAX_DELAY_ELEMS ||
        (p->loop->flags & IRF_WARP_SPEC))
        return false;
    for (int i = 0; i < p->ndelay; i++)
        if (p->delay[i] == v)
            return true;
    if (p->ndelay == MAX_DELAYS)
        return false;
    p->delay[p->ndelay++] = v;
    return true;
}

/* The argument holding delayed value v for the current iteration, or NULL. */
static IrValue *delayed_now(const Pipe *p, const IrValue *v)
{
    for (int d = 0; d < p->ndelay; d++)
        if (p->delay[d] == v)
            return p->delayed[d * (p->stages - 1)];
    return NULL;
}

static bool read_delayed(IrOp *o, void *ctx)
{
    const Pipe *p = ctx;
    for (int i = 0; i < o->nops; i++) {
        IrValue *now = o->operands[i] ? delayed_now(p, o->operands[i]) : NULL;
        if (now)
            o->operands[i] = now;
    }
    return true;
}

bool pipe_delay_reads(Pipe *p, IrValue **init)
{
    int n = p->ndelay * (p->stages - 1);
    if (!n)
        return true;
    p->delayed = arena_alloc(p->f->arena, sizeof(IrValue *) * (size_t)n);
    if (!p->delayed || p->f->arena->oom || !pipe_carry_more(p, init, n, p->delayed))
        return false;
    for (int i = 0; i < n; i++)
        p->delayed[i]->name = p->delay[i / (p->stages - 1)]->name;
    for (IrOp *o = p->body->first; o; o = o->next) {
        if (pipe_in_slice(p, o) || pipe_is_planned_load(p, o))
            continue;
        if (o->kind != IR_YIELD) {
            read_delayed(o, p);
            for (int r = 0; r < o->nregions; r++)
                ir_walk(o->regions[r], read_delayed, p);
            continue;
        }
        for (int i = 0; i < o->nops && i < 64; i++) /* the slots that carry them keep them */
            if (!p->carried[i] && delayed_now(p, o->operands[i]))
                o->operands[i] = delayed_now(p, o->operands[i]);
    }
    return true;
}

void pipe_delay_yield(Pipe *p, IrValue **map)
{
    int s1 = p->stages - 1;
    IrOp *y = p->body->last;
    for (int d = 0; d < p->ndelay; d++) {
        for (int k = 1; k < s1; k++)
            pipe_yield_also(p, y, p->delayed[d * s1 + k]);
        IrValue *v = p->delay[d];
        pipe_yield_also(p, y, v->id < p->nids && map[v->id] ? map[v->id] : v);
    }
}
