/* tile.c: recognises the loads TMA can make (tile_match). A load's pointer,
 * offsets and mask are read as polynomials with integer coefficients over
 * the iteration index J, the tile's indices r and c (its aranges) and
 * loop-invariant scalars (program ids, parameters). A tile is
 *   base + (outer + r) * stride + (inner + c)        (or r and c swapped)
 * with stride an integer parameter or a constant, and a mask that is a
 * conjunction of comparisons `r < E - outer`, `c < E' - inner` (any
 * equivalent form) where E and E' are a product of parameters plus a
 * constant: the extents the tensor map is built with; and perhaps `outer +
 * r >= 0`, `inner + c >= 0`, as descriptors and block pointers check their
 * offsets. Then TMA reads the same addresses where the mask is on and
 * gives zeros where it is off, as the load with other=0 does. Anything
 * else is not a tile, and the pipeline keeps cp.async for it. Reads the IR
 * only; tile_coord emits the origin where a copy is issued.
 *
 * In a loop pass_flatten made (one loop over (tile, K step)), a scalar the
 * body computes is a symbol too: the tile's carried row and column offsets
 * and the K step's index are no polynomial in J, but pass_pipeline's slice
 * computes them for the iteration a copy is for (its clones, or the
 * carried values that run ahead), and the copy's origin is made from those. */
#include "passes/tile.h"

#include <string.h>

enum { SYM_J, SYM_D0, SYM_D1, SYM_VALUE = TILE_FIRST_VALUE };

/* ---- polynomials ------------------------------------------------------------------ */

static int mono_cmp(const TileTerm *a, const TileTerm *b)
{
    if (a->deg != b->deg)
        return a->deg - b->deg;
    for (int i = 0; i < a->deg; i++)
        if (a->sym[i] != b->sym[i])
            return a->sym[i] - b->sym[i];
    return 0;
}

/* Adds coef * mono to p, keeping one term per monomial and none zero. */
static bool p_addterm(TilePoly *p, const TileTerm *t, int64_t scale)
{
    int64_t c;
    if (__builtin_mul_overflow(t->coef, scale, &c))
        return false;
    if (c == 0)
        return true;
    for (int i = 0; i < p->n; i++) {
        if (mono_cmp(&p->t[i], t) != 0)
            continue;
        if (__builtin_add_overflow(p->t[i].coef, c, &p->t[i].coef))
            return false;
        if (p->t[i].coef == 0)
            p->t[i] = p->t[--p->n];
        return true;
    }
    if (p->n == TILE_MAX_TERMS)
        return false;
    p->t[p->n] = *t;
    p->t[p->n++].coef = c;
    return true;
}

/* out = a + scale * b (out may be a). */
static bool p_add(TilePoly *out, const TilePoly *a, const TilePoly *b, int64_t scale)
{
    TilePoly r = *a;
    for (int i = 0; i < b->n; i++)
        if (!p_addterm(&r, &b->t[i], scale))
            return false;
    *out = r;
    return true;
}

static bool p_mul(TilePoly *out, const TilePoly *a, const TilePoly *b)
{
    TilePoly r = {0};
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++) {
            const TileTerm *x = &a->t[i], *y = &b->t[j];
            if (x->deg + y->deg > TILE_MAX_DEG)
                return false;
            TileTerm t = {0};
            if (__builtin_mul_overflow(x->coef, y->coef, &t.coef))
                return false;
            int p = 0, q = 0;
            while (p < x->deg || q < y->deg) /* merge the sorted symbol lists */
                t.sym[t.deg++] = q == y->deg || (p < x->deg && x->sym[p] <= y->sym[q])
                    ? x->sym[p++]
                    : y->sym[q++];
            if (!p_addterm(&r, &t, 1))
                return false;
        }
    *out = r;
    return true;
}

static TilePoly p_const(int64_t c)
{
    TilePoly p = {0};
    TileTerm t = {.coef = 1};
    p_addterm(&p, &t, c);
    return p;
}

static TilePoly p_sym(int s)
{
    TilePoly p = {0};
    TileTerm t = {.coef = 1, .deg = 1, .sym = {(uint8_t)s}};
    p_addterm(&p, &t, 1);
    return p;
}

/* How often symbol s occurs in a term. */
static int occurs(const TileTerm *t, int s)
{
    int n = 0;
    for (int i = 0; i < t->deg; i++)
        n += t->sym[i] == s;
    return n;
}

/* The term without one occurrence of s. */
static TileTerm drop(const TileTerm *t, int s)
{
    TileTerm r = {.coef = t->coef};
    bool gone = false;
    for (int i = 0; i < t->deg; i++) {
        if (t->sym[i] == s && !gone)
            gone = true;
        else
            r.sym[r.deg++] = t->sym[i];
    }
    return r;
}

static bool p_has(const TilePoly *p, int s)
{
    for (int i = 0; i < p->n; i++)
        if (occurs(&p->t[i], s))
            return true;
    return false;
}

/* expand_dims of a 1-D value at axis 0: its index becomes dim 1's. */
static void p_shift_dim(TilePoly *p)
{
    for (int i = 0; i < p->n; i++)
        for (int k = 0; k < p->t[i].deg; k++)
            if (p->t[i].sym[k] == SYM_D0)
                p->t[i].sym[k] = SYM_D1;
    /* D1 sorts after D0 and before every value: order still holds unless
     * D0 and D1 were both there, which a 1-D value never has */
}

/* ---- reading values ------------------------------------------------------------ */

typedef struct Ctx {
    const IrFunc *f;
    const IrOp *loop;
    const IrBlock *body;
    TileMatch *m;
    bool device; /* matching a device map: base, stride and extents may be any values */
} Ctx;

/* Whether v is computed in the loop; a store's tile has no loop, and every
 * scalar it reads is fixed where the store is. */
static bool inside_loop(const Ctx *c, const IrValue *v)
{
    if (!c->loop)
        return false;
    const IrBlock *b = v->def ? v->def->parent : v->owner;
    while (b) {
        if (b->parent == c->loop)
            return true;
        b = b->parent ? b->parent->parent : NULL;
    }
    return false;
}

static bool is_int(Type t) { return dtype_is_int(t.dt) && t.dt != DT_I1; }

/* A scalar of the body of a flattened loop (see the top): a carried value
 * or one computed at the body's top level, where the slice can reach it. */
static bool flat_scalar(const Ctx *c, const IrValue *v)
{
    if (!c->loop || !(c->loop->flags & IRF_FLATTEN) || v->type.rank != 0)
        return false;
    return v->def ? v->def->parent == c->body : v->owner == c->body && v->index > 0;
}

static bool value_sym(Ctx *c, const IrValue *v, TilePoly *out)
{
    int i;
    for (i = 0; i < c->m->nsyms && c->m->syms[i] != v; i++)
        ;
    if (i == c->m->nsyms) {
        if (i == TILE_MAX_SYMS || SYM_VALUE + i > 255)
            return false;
        c->m->syms[c->m->nsyms++] = v;
    }
    *out = p_sym(SYM_VALUE + i);
    return true;
}

static bool poly_of(Ctx *c, const IrValue *v, TilePoly *out, int depth);

/* The yield operand of carried argument v: v + inc each iteration (op is
 * IR_ADD or IR_ADDPTR); *inc gets inc's polynomial, free of J and r, c. */
static bool step_of(Ctx *c, const IrValue *v, IrKind op, TilePoly *inc, int depth)
{
    const IrOp *y = c->body->last;
    int k = v->index - 1;
    if (!y || y->kind != IR_YIELD || k < 0 || k >= y->nops || c->loop->nops <= 3 + k)
        return false;
    const IrOp *d = y->operands[k] ? y->operands[k]->def : NULL;
    if (!d || d->kind != op || d->nops != 2)
        return false;
    const IrValue *x = d->operands[0] == v    ? d->operands[1]
        : op == IR_ADD && d->operands[1] == v ? d->operands[0]
                                              : NULL;
    return x && poly_of(c, x, inc, depth + 1) && !p_has(inc, SYM_J) && !p_has(inc, SYM_D0) &&
        !p_has(inc, SYM_D1);
}

/* v + iteration J: the loop's induction variable lb + J * step, or a
 * carried value init + J * inc. */
static bool loop_arg(Ctx *c, const IrValue *v, TilePoly *out, int depth)
{
    if (v->index == 0) {
        const IrOp *st = c->loop->operands[2]->def;
        TilePoly j = p_sym(SYM_J);
        return st && st->kind == IR_CONST && poly_of(c, c->loop->operands[0], out, depth + 1) &&
            p_add(out, out, &j, st->ival);
    }
    TilePoly inc, j = p_sym(SYM_J);
    return is_int(v->type) && step_of(c, v, IR_ADD, &inc, depth) &&
        poly_of(c, c->loop->operands[3 + v->index - 1], out, depth + 1) && p_mul(&inc, &inc, &j) &&
        p_add(out, out, &inc, 1);
}

static bool poly_binary(Ctx *c, const IrOp *d, TilePoly *out, int depth)
{
    TilePoly a, b;
    if (!poly_of(c, d->operands[0], &a, depth + 1) || !poly_of(c, d->operands[1], &b, depth + 1))
        return false;
    if (d->kind == IR_MUL)
        return p_mul(out, &a, &b);
    return p_add(out, &a, &b, d->kind == IR_ADD ? 1 : -1);
}

/* The integer value v (scalar or block) as a polynomial. */
static bool poly_of(Ctx *c, const IrValue *v, TilePoly *out, int depth)
{
    if (!v || depth > 64 || !is_int(v->type))
        return false;
    if (c->body && !v->def && v->owner == c->body)
        return loop_arg(c, v, out, depth) || (flat_scalar(c, v) && value_sym(c, v, out));
    const IrOp *d = v->def;
    switch (d ? d->kind : IR_OP_COUNT) {
    case IR_CONST: *out = p_const(d->ival); return true;
    case IR_ARANGE: {
        TilePoly start = p_const(d->ival);
        *out = p_sym(SYM_D0);
        return v->type.rank == 1 && p_add(out, out, &start, 1);
    }
    case IR_SPLAT:
    case IR_BROADCAST:
    case IR_CONVERT_LAYOUT:
    case IR_HINT: return poly_of(c, d->operands[0], out, depth + 1);
    case IR_EXPAND_DIMS:
        if (!poly_of(c, d->operands[0], out, depth + 1) || v->type.rank > 2)
            return false;
        if (d->operands[0]->type.rank == 1 && d->axis == 0)
            p_shift_dim(out);
        return true;
    case IR_ADD:
    case IR_SUB:
    case IR_MUL: return poly_binary(c, d, out, depth);
    case IR_NEG:
        return poly_of(c, d->operands[0], out, depth + 1) && p_add(out, &(TilePoly){0}, out, -1);
    default: break;
    }
    /* anything else fixed for the whole loop is a symbol of its own; a cast
     * too: an int64 offset computed from int32 values must not be
     * recomputed in 32 bits */
    return v->type.rank == 0 && (!inside_loop(c, v) || flat_scalar(c, v)) && value_sym(c, v, out);
}

/* A pointer (block) value as base parameter + offset polynomial. */
static bool ptr_of(Ctx *c, const IrValue *v, const IrValue **base, TilePoly *off, int depth)
{
    if (!v || depth > 64 || v->type.dt != DT_PTR)
        return false;
    if (c->device && v->type.rank == 0 && !inside_loop(c, v)) {
        *base = v; /* a device map's base is the scalar pointer, offsets and all */
        *off = (TilePoly){0};
        return true;
    }
    if (!v->def && v->owner == c->f->body && v->type.rank == 0) {
        *base = v;
        *off = (TilePoly){0};
        return true;
    }
    if (c->body && !v->def && v->owner == c->body && v->index > 0) {
        TilePoly inc, j = p_sym(SYM_J);
        return step_of(c, v, IR_ADDPTR, &inc, depth) &&
            ptr_of(c, c->loop->operands[3 + v->index - 1], base, off, depth + 1) &&
            p_mul(&inc, &inc, &j) && p_add(off, off, &inc, 1);
    }
    const IrOp *d = v->def;
    switch (d ? d->kind : IR_OP_COUNT) {
    case IR_SPLAT:
    case IR_BROADCAST:
    case IR_CONVERT_LAYOUT:
    case IR_HINT: return ptr_of(c, d->operands[0], base, off, depth + 1);
    case IR_EXPAND_DIMS:
        if (!ptr_of(c, d->operands[0], base, off, depth + 1) || v->type.rank > 2)
            return false;
        if (d->operands[0]->type.rank == 1 && d->axis == 0)
            p_shift_dim(off);
        return true;
    case IR_ADDPTR: {
        TilePoly o;
        return ptr_of(c, d->operands[0], base, off, depth + 1) &&
            poly_of(c, d->operands[1], &o, depth + 1) && p_add(off, off, &o, 1);
    }
    default: return false;
    }
}

/* ---- the mask -------------------------------------------------------------------- */

enum { MAX_ATOMS = 4 };

typedef struct Atoms {
    TilePoly q[MAX_ATOMS]; /* each element is on where q > 0 */
    int n;
} Atoms;

static bool cmp_atom(Ctx *c, const IrOp *d, TilePoly *q, int depth)
{
    TilePoly l, r;
    const Type *t = &d->operands[0]->type;
    if (!is_int(*t) || !dtype_is_signed(t->dt) || !poly_of(c, d->operands[0], &l, depth + 1) ||
        !poly_of(c, d->operands[1], &r, depth + 1))
        return false;
    TilePoly one = p_const(1);
    switch (d->sub) {
    case CMP_LT: return p_add(q, &r, &l, -1);
    case CMP_LE: return p_add(q, &r, &l, -1) && p_add(q, q, &one, 1);
    case CMP_GT: return p_add(q, &l, &r, -1);
    case CMP_GE: return p_add(q, &l, &r, -1) && p_add(q, q, &one, 1);
    default: return false;
    }
}

static bool mask_of(Ctx *c, const IrValue *v, Atoms *a, int depth)
{
    const IrOp *d = v && depth <= 64 ? v->def : NULL;
    switch (d ? d->kind : IR_OP_COUNT) {
    case IR_AND:
        return mask_of(c, d->operands[0], a, depth + 1) && mask_of(c, d->operands[1], a, depth + 1);
    case IR_BROADCAST:
    case IR_CONVERT_LAYOUT: return mask_of(c, d->operands[0], a, depth + 1);
    case IR_EXPAND_DIMS: {
        int first = a->n;
        if (!mask_of(c, d->operands[0], a, depth + 1) || v->type.rank > 2)
            return false;
        if (d->operands[0]->type.rank == 1 && d->axis == 0)
            for (int i = first; i < a->n; i++)
                p_shift_dim(&a->q[i]);
        return true;
    }
    case IR_CMP: return a->n < MAX_ATOMS && cmp_atom(c, d, &a->q[a->n++], depth);
    default: return false;
    }
}

/* ---- matching ------------------------------------------------------------------------ */

static bool is_param(const Ctx *c, const IrValue *v)
{
    return v && !v->def && v->owner == c->f->body && v->index < c->f->nparams && v->type.rank == 0;
}

/* The parameter symbol p is, when the polynomial is exactly 1 * p. */
static const IrValue *lone_param(const Ctx *c, const TilePoly *p)
{
    if (p->n != 1 || p->t[0].coef != 1 || p->t[0].deg != 1 || p->t[0].sym[0] < SYM_VALUE)
        return NULL;
    const IrValue *v = c->m->syms[p->t[0].sym[0] - SYM_VALUE];
    return is_param(c, v) && is_int(v->type) ? v : NULL;
}

/* The loop-invariant integer scalar p is, when the polynomial is exactly
 * 1 * value: a device map's stride. */
static const IrValue *lone_value(const Ctx *c, const TilePoly *p)
{
    if (p->n != 1 || p->t[0].coef != 1 || p->t[0].deg != 1 || p->t[0].sym[0] < SYM_VALUE)
        return NULL;
    const IrValue *v = c->m->syms[p->t[0].sym[0] - SYM_VALUE];
    return v->type.rank == 0 && is_int(v->type) && !inside_loop(c, v) ? v : NULL;
}

/* The largest multiple_of hint stated on a parameter (walk's context). */
typedef struct ParamHint {
    const IrValue *param;
    int64_t div;
} ParamHint;

static bool param_hint(IrOp *op, void *ctx)
{
    ParamHint *h = ctx;
    if (op->kind == IR_HINT && op->sub == HINT_MULTIPLE_OF && op->nints > 0 &&
        op->operands[0] == h->param && op->ints[0] > h->div)
        h->div = op->ints[0];
    return true;
}

/* What is known to divide scalar v (a pointer's address in bytes): a
 * parameter's specialisation, a multiple_of hint on v (descriptors state
 * theirs, tl.make_tensor_descriptor), or a constant; else 1. A matched
 * polynomial reads a parameter, a loop's value or a branch's result
 * through the hints stated on it (a descriptor a loop carries states its
 * contract on the loop's values), so those are looked for. */
static int64_t known_div(const IrFunc *f, const IrValue *v)
{
    const IrOp *d = v->def;
    if (d && d->kind == IR_HINT && d->sub == HINT_MULTIPLE_OF && d->nints > 0)
        return d->ints[0];
    if (d && d->hints.v[HINT_MULTIPLE_OF][0] > 0)
        return d->hints.v[HINT_MULTIPLE_OF][0];
    if (d && d->kind == IR_CONST)
        return d->ival > 0 ? d->ival : 1;
    if (d && d->kind != IR_IF && d->kind != IR_FOR && d->kind != IR_WHILE)
        return 1;
    bool param = !d && v->owner == f->body && v->index < f->nparams;
    ParamHint h = {v, param ? f->params[v->index].divisibility : 1};
    ir_walk(f->body, param_hint, &h);
    return h.div;
}

/* Whether a device map's extent reads only values fixed before the loop. */
static bool invariant_poly(const Ctx *c, const TilePoly *p)
{
    for (int i = 0; i < p->n; i++)
        for (int k = 0; k < p->t[i].deg; k++) {
            int s = p->t[i].sym[k];
            if (s < SYM_VALUE || inside_loop(c, c->m->syms[s - SYM_VALUE]))
                return false;
        }
    return true;
}

static bool is_one(const TilePoly *p) { return p->n == 1 && p->t[0].deg == 0 && p->t[0].coef == 1; }

/* The constant the polynomial is, or 0 where it is none. */
static int64_t const_poly(const TilePoly *p)
{
    return p->n == 1 && p->t[0].deg == 0 ? p->t[0].coef : 0;
}

/* Whether term t is a positive constant times a product of integer
 * parameters; e gets them. */
static bool param_product(const Ctx *c, const TileTerm *t, IrTmapExtent *e)
{
    int *out = e->param;
    if (t->coef < 1 || t->coef > INT32_MAX || t->deg < 1 || t->deg > IR_TMA_FACTORS)
        return false;
    e->mul = t->coef;
    for (int k = 0; k < IR_TMA_FACTORS; k++)
        out[k] = -1;
    for (int k = 0; k < t->deg; k++) {
        TilePoly one = {1, {{1, 1, {t->sym[k]}}}};
        const IrValue *p = lone_param(c, &one);
        if (!p)
            return false;
        out[k] = p->index;
    }
    return true;
}

/* Splits the offset into origin + r * k0 + c * k1; false when r or c
 * appear otherwise (squared, together, scaled by J). */
static bool split_dims(const TilePoly *off, TilePoly *origin, TilePoly k[2])
{
    *origin = (TilePoly){0};
    k[0] = k[1] = (TilePoly){0};
    for (int i = 0; i < off->n; i++) {
        const TileTerm *t = &off->t[i];
        int n0 = occurs(t, SYM_D0), n1 = occurs(t, SYM_D1);
        if (n0 + n1 > 1)
            return false;
        TilePoly *into = n0 ? &k[0] : n1 ? &k[1] : origin;
        TileTerm x = n0 ? drop(t, SYM_D0) : n1 ? drop(t, SYM_D1) : *t;
        if (!p_addterm(into, &x, 1))
            return false;
    }
    return !p_has(&k[0], SYM_J) && !p_has(&k[1], SYM_J);
}

/* Whether a coordinate is computed in 32 bits: TMA's coordinates are i32,
 * so a 64-bit offset (an int64 batch offset, say) that may not fit keeps
 * cp.async. */
static bool fits_i32(const TileMatch *m, const TilePoly *p)
{
    for (int i = 0; i < p->n; i++) {
        if (p->t[i].coef < INT32_MIN || p->t[i].coef > INT32_MAX)
            return false;
        for (int k = 0; k < p->t[i].deg; k++) {
            int s = p->t[i].sym[k];
            if (s >= SYM_VALUE && dtype_bits(m->syms[s - SYM_VALUE]->type.dt) > 32)
                return false;
        }
    }
    return true;
}

/* origin = outer * stride + inner, stride being symbol s, or where s < 0
 * the constant cs: the terms it divides are outer's. Any split gives the
 * addresses; the masks' extents (atom_extent) check it is the one they
 * bound. */
static bool split_origin(const TilePoly *origin, int s, int64_t cs, TilePoly coord[2])
{
    coord[0] = coord[1] = (TilePoly){0};
    for (int i = 0; i < origin->n; i++) {
        const TileTerm *t = &origin->t[i];
        int n = s >= 0 ? occurs(t, s) : t->coef % cs == 0;
        if (n > 1)
            return false;
        TileTerm x = s < 0 ? *t : n ? drop(t, s) : *t;
        if (s < 0 && n)
            x.coef /= cs;
        if (!p_addterm(&coord[n ? 1 : 0], &x, 1))
            return false;
    }
    return true;
}

/* The tile dim (0 or 1) atom q bounds, and the sign of its index there:
 * -1 for an upper bound (q = E - coord - index), +1 for a lower one. */
static bool atom_dim(const TilePoly *q, int *d, int *sign)
{
    *d = -1;
    for (int i = 0; i < q->n; i++) {
        int n0 = occurs(&q->t[i], SYM_D0), n1 = occurs(&q->t[i], SYM_D1);
        if (n0 + n1 == 0)
            continue;
        if (*d >= 0 || q->t[i].deg != 1 || (q->t[i].coef != -1 && q->t[i].coef != 1))
            return false;
        *d = n0 ? 0 : 1;
        *sign = (int)q->t[i].coef;
    }
    return *d >= 0;
}

/* The extent an upper-bound atom bounds its dim by (q = E - coord - index,
 * q > 0), or for a lower-bound atom whether it is exactly coord + index >=
 * 0 (q = coord + index + 1): e->param[0] is then IR_TMA_UNBOUNDED and
 * *lower true. *dim gets the coordinate (0: inner, 1: outer). */
static bool atom_extent(const Ctx *c, const TilePoly *q, int *dim, IrTmapExtent *e, bool *lower)
{
    int d, sign;
    if (!atom_dim(q, &d, &sign))
        return false;
    int which = (d == 0) == c->m->trans ? 0 : 1; /* the contiguous dim is coordinate 0 */
    TilePoly ext, idx = p_sym(d == 0 ? SYM_D0 : SYM_D1);
    if (!p_add(&ext, q, &idx, -sign) || !p_add(&ext, &ext, &c->m->coord[which], -sign))
        return false;
    *dim = which;
    *lower = sign > 0;
    for (int k = 0; k < IR_TMA_FACTORS; k++)
        e->param[k] = -1;
    e->mul = 1;
    e->add = 0;
    if (*lower) { /* q - index - coord must be exactly 1 */
        e->param[0] = IR_TMA_UNBOUNDED;
        return ext.n == 1 && ext.t[0].deg == 0 && ext.t[0].coef == 1;
    }
    if (c->device) { /* the kernel computes it: any value fixed before the loop, in 32 bits */
        e->param[0] = IR_TMA_UNBOUNDED;
        c->m->extent[which] = ext;
        return invariant_poly(c, &ext) && fits_i32(c->m, &ext);
    }
    for (int i = 0; i < ext.n; i++) {
        if (ext.t[i].deg == 0)
            e->add = ext.t[i].coef;
        else if (e->param[0] >= 0 || !param_product(c, &ext.t[i], e))
            return false;
    }
    return true;
}

static bool extents(Ctx *c, const IrValue *mask)
{
    IrTmap *t = &c->m->map;
    for (int d = 0; d < 2; d++) {
        t->extent[d] = (IrTmapExtent){{IR_TMA_UNBOUNDED, -1, -1}, 1, 0};
        c->m->lower[d] = false;
    }
    Atoms a = {0};
    if (mask && !mask_of(c, mask, &a, 0))
        return false;
    bool seen[2] = {false, false};
    for (int i = 0; i < a.n; i++) {
        int which;
        bool lower;
        IrTmapExtent e;
        if (!atom_extent(c, &a.q[i], &which, &e, &lower))
            return false;
        if (lower) {
            c->m->lower[which] = true;
            continue;
        }
        if (seen[which])
            return false; /* two bounds on one dim would need their minimum */
        seen[which] = true;
        t->extent[which] = e;
    }
    return !c->device || (seen[0] && seen[1]); /* a device map bounds both dims */
}

/* The box and swizzle of a tile of `rows` x `cols` elements, cols
 * contiguous: 128-byte panels as codegen's shared tiles (cg_tile_geometry).
 * Loads take 8-bit tiles only from 8 KiB: on an H100, fp8 attention at a
 * head dim of 64 (K and V tiles of 64 x 64 bytes) ran 7% slower with TMA
 * than with cp.async, at 128 (tiles of 8 and 16 KiB) up to 8% faster. */
static bool geometry(IrTmap *t, int rows, int cols, bool store)
{
    int bytes = dtype_bits(t->dt) / 8;
    int panel = cols * bytes > 128 ? 128 / bytes : cols;
    t->swizzle = panel * bytes;
    t->box[0] = panel;
    t->box[1] = rows;
    t->cols = cols;
    if (bytes == 1 && rows * cols < 8192 && !store)
        return false;
    return (t->swizzle == 32 || t->swizzle == 64 || t->swizzle == 128) && rows >= 8 && rows <= 256;
}

/* The tile of pointers ptr under mask (NULL: none), for a load of c's
 * loop or (c->loop NULL) a store. */
static bool match(Ctx *c, const IrValue *ptr, const IrValue *mask, bool store)
{
    const IrFunc *f = c->f;
    TileMatch *m = c->m;
    const IrValue *base = NULL;
    TilePoly off, origin, k[2];
    int bits = dtype_bits(ptr->type.elem);
    if (ptr->type.rank != 2 || (bits != 16 && bits != 8 && !(store && bits == 32)) ||
        !ptr_of(c, ptr, &base, &off, 0) || !split_dims(&off, &origin, k))
        return false;
    /* one dim steps by 1 (the contiguous one), the other by a parameter or
     * a constant whose bytes are a multiple of 16 (TMA wants 16-byte
     * aligned bases and strides) */
    int inner = is_one(&k[1]) ? 1 : is_one(&k[0]) ? 0 : -1;
    const IrValue *stride = inner < 0 ? NULL
        : c->device                   ? lone_value(c, &k[1 - inner])
                                      : lone_param(c, &k[1 - inner]);
    int64_t cs = inner >= 0 && !stride ? const_poly(&k[1 - inner]) : 0;
    bool aligned = c->device
        ? known_div(f, base) % 16 == 0 && (!stride || known_div(f, stride) * bits / 8 % 16 == 0)
        : f->params[base->index].divisibility >= 16 &&
            (!stride || f->params[stride->index].divisibility >= 16);
    if ((!stride && (cs <= 0 || cs * bits / 8 % 16)) || !aligned)
        return false;
    m->trans = inner == 0;
    int s = -1;
    for (int i = 0; i < m->nsyms; i++)
        if (stride && m->syms[i] == stride)
            s = SYM_VALUE + i;
    if (!split_origin(&origin, s, cs, m->coord) || !fits_i32(m, &m->coord[0]) ||
        !fits_i32(m, &m->coord[1]))
        return false;
    m->map.device = c->device;
    m->map.base = c->device ? -1 : base->index;
    m->map.stride = stride && !c->device ? stride->index : -1;
    m->map.stride_const = cs;
    m->map.dt = ptr->type.elem;
    m->base = base;
    m->stride = stride;
    return extents(c, mask) &&
        geometry(&m->map, ptr->type.shape[1 - inner], ptr->type.shape[inner], store);
}

bool tile_match(const IrFunc *f, const IrOp *loop, const IrOp *ld, TileMatch *m)
{
    memset(m, 0, sizeof *m);
    Ctx c = {f, loop, loop->regions[0], m, false};
    const IrValue *ptr = ld->operands[0], *mask = ld->nops > 1 ? ld->operands[1] : NULL;
    if (match(&c, ptr, mask, false))
        return true;
    /* a descriptor's load alone: where no map is built at launch, Triton
     * copies those with maps the kernel writes, and other tiles by cp.async
     * (block pointers' over small tiles ran slower with them); a producer
     * warpgroup or a cluster partner would need the map too */
    if (!(ld->flags & IRF_DESC) || (loop->flags & (IRF_WARP_SPEC | IRF_FLATTEN)) || f->num_ctas > 1)
        return false;
    memset(m, 0, sizeof *m);
    c.device = true;
    return match(&c, ptr, mask, false);
}

bool tile_match_store(const IrFunc *f, const IrOp *st, TileMatch *m)
{
    memset(m, 0, sizeof *m);
    Ctx c = {f, NULL, NULL, m, false};
    return st->kind == IR_STORE &&
        match(&c, st->operands[0], st->nops > 2 ? st->operands[2] : NULL, true);
}

/* ---- emitting the origin --------------------------------------------------------------- */

static IrValue *as_i32(IrBuilder *b, Span sp, IrValue *v)
{
    if (v->type.dt == DT_I32)
        return v;
    return ir_unary(b, IR_CAST, sp, v, type_scalar(DT_I32));
}

static bool sym_nonneg(const TileMatch *m, int sym)
{
    if (sym == SYM_J)
        return true;
    if (sym < SYM_VALUE || sym - SYM_VALUE >= m->nsyms)
        return false;
    const IrValue *v = m->syms[sym - SYM_VALUE];
    return v && v->def && (v->def->kind == IR_PROGRAM_ID || v->def->kind == IR_NUM_PROGRAMS);
}

/* Whether every term of the origin's coordinates passes `ok`, skipping a
 * coordinate the mask keeps from falling below 0. */
typedef bool (*TermTest)(const TileMatch *m, const TileTerm *t, const IrOp *loop);
static bool every_term(const TileMatch *m, TermTest ok, const IrOp *loop)
{
    for (int which = 0; which < 2; which++)
        for (int i = 0; !m->lower[which] && i < m->coord[which].n; i++)
            if (!ok(m, &m->coord[which].t[i], loop))
                return false;
    return true;
}

static bool term_nonneg(const TileMatch *m, const TileTerm *t, const IrOp *loop)
{
    TK_UNUSED(loop);
    if (t->coef < 0)
        return false;
    for (int k = 0; k < t->deg; k++)
        if (!sym_nonneg(m, t->sym[k]))
            return false;
    return true;
}

bool tile_origin_nonneg(const TileMatch *m) { return every_term(m, term_nonneg, NULL); }

static bool outside(const IrValue *v, const IrOp *loop)
{
    const IrBlock *at = v->def ? v->def->parent : v->owner;
    for (; at; at = at->parent ? at->parent->parent : NULL)
        if (at->parent == loop)
            return false;
    return true;
}

/* A term without the iteration index reads only values fixed before the
 * loop; one with it is non-negative. */
static bool term_grows(const TileMatch *m, const TileTerm *t, const IrOp *loop)
{
    bool has_j = false;
    for (int k = 0; k < t->deg; k++) {
        if (t->sym[k] == SYM_J) {
            has_j = true;
            continue;
        }
        if (t->sym[k] < SYM_VALUE || t->sym[k] - SYM_VALUE >= m->nsyms ||
            !outside(m->syms[t->sym[k] - SYM_VALUE], loop))
            return false;
    }
    return !has_j || term_nonneg(m, t, loop);
}

bool tile_origin_grows(const TileMatch *m, const IrOp *loop)
{
    /* a flattened loop's tile indices change with it */
    return !(loop->flags & IRF_FLATTEN) && every_term(m, term_grows, loop);
}

/* Polynomial p of m's symbols as i32, J being j. */
static IrValue *emit_poly(IrBuilder *b, Span sp, const TileMatch *m, const TilePoly *p, IrValue *j)
{
    Type i32 = type_scalar(DT_I32);
    IrValue *sum = ir_const_int(b, sp, i32, 0);
    for (int i = 0; i < p->n; i++) {
        const TileTerm *t = &p->t[i];
        IrValue *x = ir_const_int(b, sp, i32, t->coef);
        for (int k = 0; k < t->deg; k++) {
            IrValue *s = t->sym[k] == SYM_J ? j : (IrValue *)m->syms[t->sym[k] - SYM_VALUE];
            x = ir_binary(b, IR_MUL, sp, x, as_i32(b, sp, s), i32);
        }
        sum = ir_binary(b, IR_ADD, sp, sum, x, i32);
    }
    return sum;
}

IrValue *tile_coord(IrBuilder *b, Span sp, const TileMatch *m, int which, IrValue *j)
{
    return emit_poly(b, sp, m, &m->coord[which], j);
}

void tile_make_map(IrBuilder *b, Span sp, const TileMatch *m, int map)
{
    IrValue *stride = m->stride ? (IrValue *)m->stride
                                : ir_const_int(b, sp, type_scalar(DT_I64), m->map.stride_const);
    IrValue *ops[4] = {(IrValue *)m->base, stride, emit_poly(b, sp, m, &m->extent[0], NULL),
                       emit_poly(b, sp, m, &m->extent[1], NULL)};
    IrOp *op = ir_build(b, IR_TMAP_MAKE, sp, ops, 4, NULL, 0);
    op->sub = map;
}

int tile_add_tmap(IrFunc *f, const IrTmap *t)
{
    for (int i = 0; i < f->ntmaps && !t->device; i++) /* each device map is its own tensor's */
        if (ir_tmap_equal(&f->tmaps[i], t))
            return i;
    if (f->ntmaps >= IR_MAX_TMAPS) /* the launcher passes no more */
        return -1;
    IrTmap *maps = arena_alloc(f->arena, sizeof(IrTmap) * (size_t)(f->ntmaps + 1));
    if (!maps || f->arena->oom)
        return -1;
    if (f->ntmaps)
        memcpy(maps, f->tmaps, sizeof(IrTmap) * (size_t)f->ntmaps);
    maps[f->ntmaps] = *t;
    f->tmaps = maps;
    return f->ntmaps++;
}

const IrValue *tile_pointer_source(const IrValue *v)
{
    if (!v->def)
        return NULL;
    switch (v->def->kind) {
    case IR_ADDPTR:
    case IR_SPLAT:
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_CONVERT_LAYOUT:
    case IR_TRANS:
    case IR_HINT: return v->def->operands[0];
    default: return NULL;
    }
}
