/* squeeze.c: a tile with one dim of size 1 loaded from addresses made by
 * expanding a vector (`scale_ptr + offs[:, None]`, a per-row or per-column
 * scale read as an [M, 1] column) is loaded as the vector and expanded;
 * the transpose of such an expanded vector (`scale_b.T`) is the vector
 * expanded along the other dim. The layout pass then reads the vector in
 * a slice of whatever layout the tile it scales lies in (an mma
 * accumulator), where an [M, 1] tile had a layout of its own and the
 * accumulator crossed to a blocked layout through shared memory to meet
 * it, as Triton's linear layouts never need to. */
#include "passes/passes.h"

#include <string.h>

typedef struct Squeeze {
    IrFunc *f;
    IrValue **map; /* value id -> its vector, while one load is rebuilt */
    int nmap;
    int limit; /* ids from here on are this pass's own; not looked through */
} Squeeze;

/* The dim of size 1 of a rank-2 tile whose other dim is not, or -1. */
static int unit_dim(Type t)
{
    if (t.rank != 2 || (t.shape[0] == 1) == (t.shape[1] == 1))
        return -1;
    return t.shape[0] == 1 ? 0 : 1;
}

static Type squeezed(Type t, int axis)
{
    int n = t.shape[1 - axis];
    return type_with_shape(t, 1, &n);
}

/* The one-element vector a [1, 1] tile expands, or NULL. */
static IrValue *one_element(const IrValue *x)
{
    const IrOp *e = x->def;
    if (x->type.rank != 2 || x->type.shape[0] != 1 || x->type.shape[1] != 1 || !e ||
        e->kind != IR_EXPAND_DIMS || e->operands[0]->type.rank != 1)
        return NULL;
    return e->operands[0];
}

/* Whether x, a tile with dim `axis` of size 1, is made from vectors and
 * scalars by expand_dims along axis, splats, constants and pointer or
 * integer arithmetic, so it can be made as the vector. */
static bool expandable(const Squeeze *s, const IrValue *x, int axis, int depth)
{
    const IrOp *d = x->def;
    if (!d || depth > 6 || x->type.rank != 2 || x->id >= s->limit)
        return false;
    switch (d->kind) {
    case IR_EXPAND_DIMS: return d->axis == axis && d->operands[0]->type.rank == 1;
    case IR_SPLAT: return d->operands[0]->type.rank == 0;
    case IR_BROADCAST: /* of a [1, 1] tile, one element expanded: `(arange(0, 1) < 1)[:, None]` */
        return one_element(d->operands[0]) != NULL;
    case IR_CONST: return true;
    case IR_ADDPTR:
    case IR_ADD:
    case IR_SUB:
    case IR_MUL:
    case IR_AND:
    case IR_OR:
    case IR_CMP:
        return expandable(s, d->operands[0], axis, depth + 1) &&
            expandable(s, d->operands[1], axis, depth + 1);
    default: return false;
    }
}

/* The vector x expands (built at b), following expandable. */
static IrValue *as_vector(Squeeze *s, IrBuilder *b, IrValue *x, int axis)
{
    IrOp *d = x->def;
    if (s->map[x->id])
        return s->map[x->id];
    Type t = squeezed(x->type, axis);
    IrValue *v;
    if (d->kind == IR_EXPAND_DIMS)
        v = d->operands[0];
    else if (d->kind == IR_SPLAT)
        v = ir_unary(b, IR_SPLAT, d->span, d->operands[0], t);
    else if (d->kind == IR_BROADCAST)
        v = ir_unary(b, IR_BROADCAST, d->span, one_element(d->operands[0]), t);
    else if (d->kind == IR_CONST)
        v = dtype_is_float(t.dt) ? ir_const_float(b, d->span, t, d->fval)
                                 : ir_const_int(b, d->span, t, d->ival);
    else {
        IrValue *l = as_vector(s, b, d->operands[0], axis);
        IrValue *r = as_vector(s, b, d->operands[1], axis);
        v = ir_binary(b, d->kind, d->span, l, r, t);
        v->def->sub = d->sub; /* a comparison's predicate */
    }
    return s->map[x->id] = v;
}

/* expand_dims(v, axis) at b, replacing every use of old. */
static IrValue *expand(Squeeze *s, IrBuilder *b, IrValue *v, int axis, IrValue *old)
{
    IrOp *e = ir_build(b, IR_EXPAND_DIMS, old->def->span, &v, 1, &old->type, 1);
    e->axis = axis;
    ir_replace_uses(s->f->body, old, e->results[0]);
    return e->results[0];
}

static void squeeze_load(Squeeze *s, IrOp *op)
{
    int axis = unit_dim(op->results[0]->type);
    if (axis < 0 || op->nregions)
        return;
    for (int i = 0; i < op->nops; i++)
        if (op->operands[i] && !expandable(s, op->operands[i], axis, 0))
            return;
    s->nmap = s->f->next_id; /* the ids below it; the pass makes new ones */
    s->map = arena_alloc(s->f->arena, sizeof *s->map * (size_t)(s->nmap + 1));
    if (!s->map)
        return;
    memset(s->map, 0, sizeof *s->map * (size_t)(s->nmap + 1));
    IrBuilder b = {s->f, op->parent, op};
    for (int i = 0; i < op->nops; i++)
        if (op->operands[i])
            as_vector(s, &b, op->operands[i], axis);
    IrOp *load = ir_clone(&b, op, s->map, s->nmap);
    if (!load)
        return;
    load->results[0]->type = squeezed(op->results[0]->type, axis);
    expand(s, &b, load->results[0], axis, op->results[0]);
}

/* trans(expand_dims(v, a)) of a rank-2 tile: expand_dims(v, 1 - a). */
static void squeeze_trans(Squeeze *s, IrOp *op)
{
    const IrOp *e = op->operands[0]->def;
    if (op->results[0]->type.rank != 2 || !e || e->kind != IR_EXPAND_DIMS ||
        e->operands[0]->type.rank != 1 || (op->nints == 2 && op->ints[0] != 1))
        return;
    IrBuilder b = {s->f, op->parent, op};
    expand(s, &b, e->operands[0], 1 - e->axis, op->results[0]);
}

static bool squeeze_op(IrOp *op, void *ctx)
{
    Squeeze *s = ctx;
    if (op->kind == IR_LOAD && op->nres == 1)
        squeeze_load(s, op);
    else if (op->kind == IR_TRANS && op->nres == 1)
        squeeze_trans(s, op);
    return !s->f->arena->oom;
}

void pass_squeeze(IrFunc *f)
{
    Squeeze s = {f, NULL, 0, f->next_id};
    ir_walk(f->body, squeeze_op, &s);
    ir_renumber(f);
}
