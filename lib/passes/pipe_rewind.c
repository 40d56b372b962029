/* pipe_rewind.c: values of the current iteration where the body needs a
 * value the address slice runs ahead. A pipelined loop carries its
 * advanced arguments S-1 iterations ahead (pipeline.c). Where the body
 * also reads such an argument, or a slice value computed from it, for
 * its own iteration (attention backward's query rows, which address the
 * row statistics and also build the causal mask), and the argument moves
 * by the same step every iteration (x + c, or a pointer advanced by c),
 * its value for iteration i is the carried one less (S-1) * c; the slice
 * ops between are computed again from that. Other arguments keep the
 * loop unpipelined. */
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
