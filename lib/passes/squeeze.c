/* squeeze.c: loads and stores at the rank their addresses have. A tile
 * whose addresses are a reshape adding dims of size 1 (a [1, BM, BK]
 * block of a batched tensor descriptor or block pointer, which sema
 * addresses as a [BM, BK] tile) is loaded or stored at the lower rank,
 * the value reshaped instead (and a reshape of it back to the lower
 * shape, `desc.load(...).reshape(BM, BK)`, is the load itself), so the
 * pipeline and TMA see the 2-D tile they handle. And a tile with one dim
 * of size 1 loaded from addresses made by
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

/* The pointer and integer arithmetic squeeze looks through, both
 * operands tiles. */
static bool arith(IrKind k)
{
    return k == IR_ADDPTR || k == IR_ADD || k == IR_SUB || k == IR_MUL || k == IR_AND ||
        k == IR_OR || k == IR_CMP;
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
    default:
        return arith(d->kind) && expandable(s, d->operands[0], axis, depth + 1) &&
            expandable(s, d->operands[1], axis, depth + 1);
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

/* v's shape without its dims of size 1 is x's (x has none). */
static bool adds_units(const IrValue *v, const IrValue *x)
{
    int n = 0;
    for (int d = 0; d < v->type.rank; d++)
        if (v->type.shape[d] != 1 && (n >= x->type.rank || v->type.shape[d] != x->type.shape[n++]))
            return false;
    for (int d = 0; d < x->type.rank; d++)
        if (x->type.shape[d] == 1)
            return false;
    return n == x->type.rank && v->type.rank > x->type.rank;
}

/* The value without unit dims that reshapes or expand_dims adding unit
 * dims make v from (`x[None, :, :]`), or NULL. */
static IrValue *unit_source(const IrValue *v)
{
    const IrOp *d = v ? v->def : NULL;
    for (int depth = 0; d && depth < 4 && (d->kind == IR_RESHAPE || d->kind == IR_EXPAND_DIMS);
         depth++) {
        IrValue *x = d->operands[0];
        if (adds_units(v, x))
            return x;
        d = x->def;
    }
    return NULL;
}

/* v (of a reshaped access's shape) at the lower shape of x, built at b
 * for op. */
static IrValue *lower(IrBuilder *b, const IrOp *op, IrValue *v, const IrValue *x)
{
    const IrValue *src = unit_source(v);
    if (src && src->type.rank == x->type.rank)
        return (IrValue *)src;
    IrOp *c = v->def && v->def->kind == IR_CONST ? v->def : NULL;
    Type t = type_with_shape(v->type, x->type.rank, x->type.shape);
    if (c)
        return dtype_is_float(t.dt) ? ir_const_float(b, c->span, t, c->fval)
                                    : ir_const_int(b, c->span, t, c->ival);
    return ir_unary(b, IR_RESHAPE, op->span, v, t);
}

typedef struct Reshapes {
    IrFunc *f;
    IrValue *r, *x;
} Reshapes;

static bool reshape_read(IrOp *u, void *ctx)
{
    Reshapes *w = ctx;
    if (u->kind != IR_RESHAPE || u->operands[0] != w->r)
        return true;
    if (type_eq(u->results[0]->type, w->x->type))
        ir_replace_uses(w->f->body, u->results[0], w->x);
    else
        u->operands[0] = w->x;
    return true;
}

/* The reshapes that read r read x, of which r is a reshape; those that
 * give back x's shape are x. */
static void reshapes_read(IrFunc *f, IrValue *r, IrValue *x)
{
    Reshapes w = {f, r, x};
    ir_walk(f->body, reshape_read, &w);
}

/* A load or store through a reshape that adds unit dims, at the lower
 * rank (the top of the file). */
static void squeeze_units(Squeeze *s, IrOp *op)
{
    IrValue *ptr = op->operands[0], *p2 = unit_source(ptr);
    IrValue *mask = op->nops > 2 ? op->operands[op->kind == IR_LOAD ? 1 : 2] : NULL;
    if (!p2 || op->nregions || (mask && !unit_source(mask)))
        return;
    IrBuilder b = {s->f, op->parent, op};
    IrValue *ops[3];
    for (int i = 0; i < op->nops && i < 3; i++)
        ops[i] = op->operands[i] ? lower(&b, op, op->operands[i], p2) : NULL;
    if (s->f->arena->oom)
        return;
    for (int i = 0; i < op->nops && i < 3; i++)
        op->operands[i] = ops[i];
    if (op->kind != IR_LOAD)
        return;
    IrValue *r = op->results[0];
    Type full = r->type;
    r->type = type_with_shape(full, p2->type.rank, p2->type.shape);
    IrBuilder after = {s->f, op->parent, op->next};
    IrValue *back = ir_unary(&after, IR_RESHAPE, op->span, r, full);
    ir_replace_uses(s->f->body, r, back);
    back->def->operands[0] = r;
    reshapes_read(s->f, back, r);
}

/* Whether every element of tile x is one value: a splat of a scalar, a
 * constant, shape ops of such, and arithmetic on such. */
static bool uniform(const Squeeze *s, const IrValue *x, int depth)
{
    const IrOp *d = x->def;
    if (!d || depth > 6 || x->type.rank == 0 || x->id >= s->limit)
        return false;
    switch (d->kind) {
    case IR_SPLAT: return d->operands[0]->type.rank == 0;
    case IR_CONST: return true;
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_CONVERT_LAYOUT: return uniform(s, d->operands[0], depth + 1);
    default:
        return arith(d->kind) && uniform(s, d->operands[0], depth + 1) &&
            uniform(s, d->operands[1], depth + 1);
    }
}

/* The scalar uniform tile x holds (built at b, following uniform). */
static IrValue *as_scalar(IrBuilder *b, IrValue *x)
{
    IrOp *d = x->def;
    Type t = type_with_shape(x->type, 0, NULL);
    switch (d->kind) {
    case IR_SPLAT: return d->operands[0];
    case IR_CONST:
        return dtype_is_float(t.dt) ? ir_const_float(b, d->span, t, d->fval)
                                    : ir_const_int(b, d->span, t, d->ival);
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_CONVERT_LAYOUT: return as_scalar(b, d->operands[0]);
    default: {
        IrValue *l = as_scalar(b, d->operands[0]), *r = as_scalar(b, d->operands[1]);
        IrValue *v = ir_binary(b, d->kind, d->span, l, r, t);
        v->def->sub = d->sub; /* a comparison's predicate */
        return v;
    }
    }
}

/* A load whose addresses (and mask and other) are all one is one scalar
 * load, splat: `tl.load(code_ptr + zeros + 128)`, the first probe of a
 * binary search, or the old idiom of a scalar read as `tl.load(p +
 * tl.zeros([B], tl.int32))`, read each address once per element and, as a
 * vector in a layout of its own, crossed to the layout of its users through
 * shared memory. */
static void squeeze_uniform(Squeeze *s, IrOp *op)
{
    IrValue *r = op->results[0];
    if (r->type.rank == 0 || op->nregions || op->nops > 3 ||
        op->operands[0]->type.rank != r->type.rank)
        return;
    for (int i = 0; i < op->nops; i++)
        if (op->operands[i] && !uniform(s, op->operands[i], 0))
            return;
    IrBuilder b = {s->f, op->parent, op};
    IrValue *ops[3] = {NULL, NULL, NULL};
    for (int i = 0; i < op->nops && i < 3; i++)
        ops[i] = op->operands[i] ? as_scalar(&b, op->operands[i]) : NULL;
    if (s->f->arena->oom)
        return;
    for (int i = 0; i < op->nops; i++)
        op->operands[i] = ops[i];
    Type full = r->type;
    r->type = type_with_shape(full, 0, NULL);
    IrBuilder after = {s->f, op->parent, op->next};
    IrValue *splat = ir_unary(&after, IR_SPLAT, op->span, r, full);
    ir_replace_uses(s->f->body, r, splat);
    splat->def->operands[0] = r;
}

static bool squeeze_op(IrOp *op, void *ctx)
{
    Squeeze *s = ctx;
    if (op->kind == IR_LOAD && op->nres == 1)
        squeeze_uniform(s, op);
    if ((op->kind == IR_LOAD && op->nres == 1) || (op->kind == IR_STORE && op->nops >= 2))
        squeeze_units(s, op);
    if (op->kind == IR_LOAD && op->nres == 1 && op->results[0]->type.rank)
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
