/* flatten.c: tl.range(..., flatten=True) (pass_flatten). A persistent
 * kernel's loop over output tiles with a K loop inside,
 *
 *   for t in range(lb, ub, step) [flatten] iter(o... = o0...):
 *       PRE      (pure scalar and index arithmetic: the tile's offsets)
 *       r... = for k in range(klb, kub, kstep) iter(i... = init...): BODY
 *       POST     (the epilogue: stores, the next o...)
 *
 * becomes one loop over every (tile, K step) pair, so that pass_pipeline's
 * copies run ahead across tile boundaries instead of the K pipeline
 * filling and draining once per tile:
 *
 *   nk = count(klb, kub, kstep), nt = count(lb, ub, step)
 *   if nk > 0 and nt > 0:
 *     F = PRE's values that BODY reads, for the first tile
 *     for it in range(0, nt * nk) iter(o..., i..., (qs, rs, F), (q, r)):
 *       k = klb + rs * kstep;  BODY reads F and PRE's blocks made from it
 *       i' = r == 0 ? init : i    (a dot's zero accumulator takes the
 *                                   dot's fresh operand instead)
 *       o' = if r == nk - 1 { PRE for tile q; POST } else { o }
 *       (qs, rs) and (q, r) step on;  F = if qs changed { PRE for tile qs }
 *
 * Two counters walk the same (tile, step) pairs: (qs, rs) and F, PRE's
 * scalars that BODY needs, feed only the loads' addresses, which
 * pass_pipeline then runs S-1 steps ahead; F is recomputed once per tile
 * like the original loop, the few elements a thread holds of PRE's blocks
 * (row and column offsets) every step; (q, r) serve the rest.
 * The K loop's bounds may not depend on the tile (they are computed once,
 * before), PRE may hold no memory access or region, both loops count up by
 * constant steps over i32 (the flat count, a product of two such counts,
 * fits u64). Without tiles or K steps the original loop runs, its K loop
 * replaced by the inits. Loops that do not fit stay nested: the same
 * values, with the pipeline drained per tile. */
#include "passes/passes.h"

#include <string.h>

typedef struct Flat {
    IrFunc *f;
    IrOp *outer, *inner;
    IrBlock *ob, *ib; /* their bodies */
    IrValue **map;    /* by value id of the function before the pass */
    int nmap;
    bool *hoisted;   /* by value id: computed once before the loop */
    bool *want;      /* by value id: scratch for the PRE ops a value needs */
    bool *per_step;  /* by value id: a block of PRE recomputed every step */
    bool *fresh;     /* by K-loop carried index: a dot's zero accumulator */
    IrValue **front; /* PRE's scalars (or the tile) that BODY reads */
    int nfront;
    Span sp;
} Flat;

/* What PRE may hold: ops without effects, regions or much work, which can
 * run once per K step instead of once per tile. */
static bool cheap_pure(const IrOp *op)
{
    if (op->nregions || op->nres == 0)
        return false;
    switch (op->kind) {
    case IR_LOAD:
    case IR_STORE:
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS:
    case IR_PRINT:
    case IR_ASSERT:
    case IR_ASSUME:
    case IR_BARRIER:
    case IR_RAND:
    case IR_DOT:
    case IR_REDUCE:
    case IR_SCAN:
    case IR_GATHER:
    case IR_HISTOGRAM:
    case IR_PARTNER:
    case IR_ASYNC_COPY:
    case IR_ASYNC_COMMIT:
    case IR_ASYNC_WAIT:
    case IR_SHARED_VIEW:
    case IR_DOT_WAIT:
    case IR_TMA_COPY:
    case IR_TMA_STORE:
    case IR_TMA_WAIT:
    case IR_TMA_RELEASE:
    case IR_PRODUCER:
    case IR_INLINE_ASM:
    case IR_GDC: return false;
    default: return true;
    }
}

static bool in_outer_body(const Flat *fl, const IrValue *v)
{
    return v->def ? v->def->parent == fl->ob : v->owner == fl->ob;
}

/* v does not change from tile to tile: defined before the loop, or by PRE
 * ops of such values. */
static bool invariant(const Flat *fl, const IrValue *v, int depth)
{
    if (!in_outer_body(fl, v))
        return true;
    if (!v->def || depth > 64 || !cheap_pure(v->def))
        return false;
    for (int i = 0; i < v->def->nops; i++)
        if (v->def->operands[i] && !invariant(fl, v->def->operands[i], depth + 1))
            return false;
    return true;
}

static IrValue *mapped(const Flat *fl, IrValue *v)
{
    return v && v->id < fl->nmap && fl->map[v->id] ? fl->map[v->id] : v;
}

/* Clones the ops an invariant v is computed by in front of the loop. */
static IrValue *hoist(Flat *fl, IrValue *v)
{
    if (!in_outer_body(fl, v) || fl->map[v->id])
        return mapped(fl, v);
    for (int i = 0; i < v->def->nops; i++)
        if (v->def->operands[i])
            hoist(fl, v->def->operands[i]);
    IrBuilder b = {fl->f, fl->outer->parent, fl->outer};
    ir_clone(&b, v->def, fl->map, fl->nmap);
    for (int i = 0; i < v->def->nres; i++)
        fl->hoisted[v->def->results[i]->id] = true;
    return mapped(fl, v);
}

typedef struct Uses {
    const IrValue *v;
    int n;
    IrOp *last;
} Uses;

static bool count_use(IrOp *op, void *ctx)
{
    Uses *u = ctx;
    for (int i = 0; i < op->nops; i++)
        if (op->operands[i] == u->v) {
            u->n++;
            u->last = op;
        }
    return true;
}

/* K-loop carried value j starts at zero and only a dot of BODY adds to it:
 * the dot then takes "fresh" at a tile's first step instead of a select. */
static bool dot_accumulator(const Flat *fl, int j)
{
    Uses u = {fl->ib->args[j + 1], 0, NULL};
    ir_walk(fl->ib, count_use, &u);
    return ir_is_zero(fl->inner->operands[3 + j]) && u.n == 1 && u.last->kind == IR_DOT &&
        u.last->parent == fl->ib && u.last->nops == 3 && u.last->operands[2] == u.v;
}

/* Marks in fl->want the PRE ops v is computed by. */
static void want(Flat *fl, const IrValue *v)
{
    if (!v || !v->def || !in_outer_body(fl, v) || fl->hoisted[v->id] || fl->want[v->id])
        return;
    for (int i = 0; i < v->def->nres; i++)
        fl->want[v->def->results[i]->id] = true;
    for (int i = 0; i < v->def->nops; i++)
        want(fl, v->def->operands[i]);
}

/* Clones the PRE ops marked in fl->want at b for the tile t (i32), the
 * tile loop's carried values read as o; clears the marks. */
static void clone_pre(Flat *fl, IrBuilder *b, IrValue *t, IrValue **o)
{
    fl->map[fl->ob->args[0]->id] = t;
    for (int i = 1; i < fl->ob->nargs; i++)
        fl->map[fl->ob->args[i]->id] = o[i - 1];
    for (IrOp *x = fl->ob->first; x != fl->inner; x = x->next)
        if (fl->want[x->results[0]->id])
            ir_clone(b, x, fl->map, fl->nmap);
    memset(fl->want, 0, sizeof(bool) * (size_t)fl->nmap);
}

/* What BODY reads of the tile's part: its scalars are carried (front),
 * its blocks are recomputed every step from them (per_step), in whatever
 * layout BODY needs: a block carried through the loop would be moved
 * between layouts every step, and a few elements a thread are cheap. */
static void add_front(Flat *fl, IrValue *v, int depth)
{
    if (!v || !in_outer_body(fl, v) || fl->hoisted[v->id] || depth > 64)
        return;
    if (!v->def && v->index > 0)
        return; /* a carried value of the tile loop: BODY reads it as it is */
    if (v->def && v->type.rank) {
        if (fl->per_step[v->id])
            return;
        for (int i = 0; i < v->def->nres; i++)
            fl->per_step[v->def->results[i]->id] = true;
        for (int i = 0; i < v->def->nops; i++)
            add_front(fl, v->def->operands[i], depth + 1);
        return;
    }
    for (int i = 0; i < fl->nfront; i++)
        if (fl->front[i] == v)
            return;
    fl->front[fl->nfront++] = v;
}

static bool collect_front(IrOp *op, void *ctx)
{
    for (int i = 0; i < op->nops; i++)
        add_front(ctx, op->operands[i], 0);
    return true;
}

/* The front values for tile t, computed at b. */
static void front_at(Flat *fl, IrBuilder *b, IrValue *t, IrValue **o, IrValue **out)
{
    for (int j = 0; j < fl->nfront; j++)
        want(fl, fl->front[j]);
    clone_pre(fl, b, t, o);
    for (int j = 0; j < fl->nfront; j++)
        out[j] = mapped(fl, fl->front[j]);
}

/* The loop nest has the shape above; finds the K loop. */
static bool fits(Flat *fl)
{
    IrOp *o = fl->outer;
    const IrOp *st = o->operands[2]->def;
    if (o->nregions != 1 || !st || st->kind != IR_CONST || st->ival < 1 ||
        o->operands[0]->type.dt != DT_I32)
        return false;
    fl->ob = o->regions[0];
    fl->inner = NULL;
    for (IrOp *x = fl->ob->first; x; x = x->next) {
        if (!fl->inner && x->kind == IR_FOR)
            fl->inner = x;
        else if (!fl->inner && !cheap_pure(x))
            return false;
    }
    IrOp *in = fl->inner;
    if (!in || in->nregions != 1 || in->operands[0]->type.dt != DT_I32)
        return false;
    st = in->operands[2]->def;
    if (!st || st->kind != IR_CONST || st->ival < 1 || !invariant(fl, in->operands[0], 0) ||
        !invariant(fl, in->operands[1], 0))
        return false;
    fl->ib = in->regions[0];
    for (int j = 0; j + 3 < in->nops; j++) {
        IrValue *init = in->operands[3 + j];
        if (!invariant(fl, init, 0) && init->type.dt == DT_PTR)
            return false; /* no placeholder value to start the flat loop with */
    }
    return true;
}

static IrValue *cmp(IrBuilder *b, Span sp, CmpPred p, IrValue *x, IrValue *y)
{
    Type i1 = type_with_shape(type_scalar(DT_I1), x->type.rank, x->type.shape);
    IrValue *r = ir_binary(b, IR_CMP, sp, x, y, i1);
    r->def->sub = p;
    return r;
}

static IrValue *pick(IrBuilder *b, Span sp, IrValue *c, IrValue *x, IrValue *y)
{
    Type t = x->type;
    if (t.rank) {
        Type ct = type_with_shape(type_scalar(DT_I1), t.rank, t.shape);
        c = ir_unary(b, IR_SPLAT, sp, c, ct);
    }
    return ir_build(b, IR_SELECT, sp, (IrValue *[]){c, x, y}, 3, &t, 1)->results[0];
}

/* Iterations of range(lb, ub, step) for a constant step >= 1, as u64. */
static IrValue *trip_count(IrBuilder *b, Span sp, IrValue *lb, IrValue *ub, int64_t step)
{
    Type i64 = type_scalar(DT_I64);
    IrValue *l = ir_unary(b, IR_CAST, sp, lb, i64), *u = ir_unary(b, IR_CAST, sp, ub, i64);
    IrValue *one = ir_const_int(b, sp, i64, 1), *zero = ir_const_int(b, sp, i64, 0);
    IrValue *d = ir_binary(b, IR_SUB, sp, ir_binary(b, IR_SUB, sp, u, l, i64), one, i64);
    IrValue *n = ir_binary(
        b, IR_ADD, sp, ir_binary(b, IR_DIV, sp, d, ir_const_int(b, sp, i64, step), i64), one, i64);
    n = pick(b, sp, cmp(b, sp, CMP_GT, u, l), n, zero);
    return ir_unary(b, IR_CAST, sp, n, type_scalar(DT_U64));
}

/* base + (i32)idx * step, wrapping as the original induction variable. */
static IrValue *nth(IrBuilder *b, Span sp, IrValue *base, IrValue *idx, const IrValue *step)
{
    Type i32 = type_scalar(DT_I32);
    IrValue *i = ir_unary(b, IR_CAST, sp, idx, i32);
    IrValue *s = ir_const_int(b, sp, i32, step->def->ival);
    return ir_binary(b, IR_ADD, sp, base, ir_binary(b, IR_MUL, sp, i, s, i32), i32);
}

static void yield(IrBuilder *b, Span sp, IrValue **v, int n)
{
    ir_build(b, IR_YIELD, sp, v, n, NULL, 0);
}

static IrValue **values(Flat *fl, int n)
{
    return arena_alloc(fl->f->arena, sizeof(IrValue *) * (size_t)(n + 1));
}

/* An if on c yielding x (built by fn in the then-region) or y. */
typedef void (*ThenFn)(Flat *fl, IrBuilder *b, void *ctx, IrValue **out);
static IrOp *branch(Flat *fl, IrBuilder *b, IrValue *c, IrValue **y, int n, ThenFn fn, void *ctx)
{
    Type *types = arena_alloc(fl->f->arena, sizeof(Type) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        types[i] = y[i]->type;
    IrOp *e = ir_build(b, IR_IF, fl->sp, &c, 1, types, n);
    IrBuilder tb = {fl->f, ir_op_add_region(fl->f, e), NULL};
    IrBuilder eb = {fl->f, ir_op_add_region(fl->f, e), NULL};
    IrValue **x = values(fl, n);
    fn(fl, &tb, ctx, x);
    yield(&tb, fl->sp, x, n);
    yield(&eb, fl->sp, y, n);
    return e;
}

/* The tile with index q (u64): lb + q * step. */
static IrValue *tile_of(Flat *fl, IrBuilder *b, IrValue *q)
{
    return nth(b, fl->sp, fl->outer->operands[0], q, fl->outer->operands[2]);
}

typedef struct Epi {
    IrValue *t;
    IrValue **o;
} Epi;

/* The epilogue: PRE for the finished tile, then POST; its next o. */
static void epilogue(Flat *fl, IrBuilder *b, void *ctx, IrValue **out)
{
    const Epi *e = ctx;
    for (IrOp *x = fl->ob->first; x != fl->inner; x = x->next)
        want(fl, x->results[0]);
    clone_pre(fl, b, e->t, e->o);
    IrOp *x = fl->inner->next;
    for (; x && x->kind != IR_YIELD; x = x->next)
        ir_clone(b, x, fl->map, fl->nmap);
    for (int i = 0; x && i < x->nops; i++)
        out[i] = mapped(fl, x->operands[i]);
}

/* The front values of the next tile the loads read. */
static void next_front(Flat *fl, IrBuilder *b, void *ctx, IrValue **out)
{
    const Epi *e = ctx;
    front_at(fl, b, e->t, e->o, out);
}

typedef struct Init {
    int j;
    IrValue *t;
    IrValue **o;
} Init;

/* K-loop carried value j at a tile's first step: its init for that tile. */
static void init_of(Flat *fl, IrBuilder *b, void *ctx, IrValue **out)
{
    const Init *in = ctx;
    want(fl, fl->inner->operands[3 + in->j]);
    clone_pre(fl, b, in->t, in->o);
    out[0] = mapped(fl, fl->inner->operands[3 + in->j]);
}

/* (q, r) one step on: r wraps at nk to 0 and moves q on. */
static void step_on(IrBuilder *b, Span sp, IrValue *q, IrValue *r, IrValue *nk1, IrValue **nq,
                    IrValue **nr, IrValue **wrap)
{
    Type u64 = type_scalar(DT_U64);
    IrValue *one = ir_const_int(b, sp, u64, 1);
    *wrap = cmp(b, sp, CMP_EQ, r, nk1);
    *nr = pick(b, sp, *wrap, ir_const_int(b, sp, u64, 0), ir_binary(b, IR_ADD, sp, r, one, u64));
    *nq = pick(b, sp, *wrap, ir_binary(b, IR_ADD, sp, q, one, u64), q);
}

/* Carried values of the flat loop: o..., i..., qs, rs, F..., q, r. */
enum { C_QS, C_RS };

static void flat_body(Flat *fl, IrOp *loop, IrValue *nt, IrValue *nk1)
{
    IrBlock *body = loop->regions[0];
    IrBuilder b = {fl->f, body, NULL};
    Span sp = fl->sp;
    int no = fl->outer->nres, ni = fl->inner->nres, nf = fl->nfront;
    IrValue **o = body->args + 1, **i = o + no, **sc = i + ni, **fr = sc + 2, **bc = fr + nf;
    Type u64 = type_scalar(DT_U64);
    /* BODY: the K step from rs, the tile's values from F */
    fl->map[fl->ib->args[0]->id] =
        nth(&b, sp, mapped(fl, fl->inner->operands[0]), sc[C_RS], fl->inner->operands[2]);
    IrValue *first = cmp(&b, sp, CMP_EQ, bc[1], ir_const_int(&b, sp, u64, 0));
    IrValue *t = tile_of(fl, &b, bc[0]);
    for (int j = 0; j < ni; j++) {
        IrValue *init = fl->inner->operands[3 + j];
        IrValue *in = i[j];
        if (fl->fresh[j])
            ;
        else if (fl->hoisted[init->id] || !in_outer_body(fl, init))
            in = pick(&b, sp, first, mapped(fl, init), i[j]);
        else
            in = branch(fl, &b, first, &i[j], 1, init_of, &(Init){j, t, o})->results[0];
        fl->map[fl->ib->args[j + 1]->id] = in;
    }
    /* after the inits, which map PRE's values to their own copies */
    for (int j = 0; j < fl->ob->nargs - 1; j++)
        fl->map[fl->ob->args[j + 1]->id] = o[j];
    for (int j = 0; j < nf; j++)
        fl->map[fl->front[j]->id] = fr[j];
    for (IrOp *x = fl->ob->first; x != fl->inner; x = x->next)
        if (fl->per_step[x->results[0]->id])
            ir_clone(&b, x, fl->map, fl->nmap);
    IrValue **next = values(fl, no + ni + 2 + nf + 2);
    for (IrOp *x = fl->ib->first; x; x = x->next) {
        if (x->kind == IR_YIELD) {
            for (int j = 0; j < ni; j++)
                next[no + j] = fl->map[fl->inner->results[j]->id] = mapped(fl, x->operands[j]);
            continue;
        }
        IrOp *c = ir_clone(&b, x, fl->map, fl->nmap);
        for (int j = 0; c && j < ni; j++)
            if (fl->fresh[j] && x->kind == IR_DOT && x->operands[2] == fl->ib->args[j + 1]) {
                IrValue **ops = values(fl, 4);
                memcpy(ops, c->operands, sizeof(IrValue *) * 3);
                ops[3] = first;
                c->operands = ops;
                c->nops = 4;
            }
    }
    /* the epilogue at a tile's last step, for tile q */
    IrValue *nq, *nr, *last;
    step_on(&b, sp, bc[0], bc[1], nk1, &nq, &nr, &last);
    IrOp *e = branch(fl, &b, last, o, no, epilogue, &(Epi){t, o});
    for (int j = 0; j < no; j++)
        next[j] = e->results[j];
    next[no + ni + 2 + nf] = nq;
    next[no + ni + 2 + nf + 1] = nr;
    /* the loads' counters, and F once their tile changes */
    IrValue *nqs, *nrs, *wrap;
    step_on(&b, sp, sc[C_QS], sc[C_RS], nk1, &nqs, &nrs, &wrap);
    next[no + ni + C_QS] = nqs;
    next[no + ni + C_RS] = nrs;
    if (nf) {
        IrValue *more = cmp(&b, sp, CMP_LT, nqs, nt);
        IrValue *c = ir_binary(&b, IR_AND, sp, wrap, more, type_scalar(DT_I1));
        IrOp *nfo = branch(fl, &b, c, fr, nf, next_front, &(Epi){tile_of(fl, &b, nqs), o});
        for (int j = 0; j < nf; j++)
            next[no + ni + 2 + j] = nfo->results[j];
    }
    yield(&b, sp, next, no + ni + 2 + nf + 2);
}

/* The flat loop, in the then-region of `if nk > 0 and nt > 0`; yields its
 * results. */
static void flat_loop(Flat *fl, IrBuilder *b, IrValue *nt, IrValue *nk)
{
    Span sp = fl->sp;
    int no = fl->outer->nres, ni = fl->inner->nres, nf = fl->nfront;
    int nc = no + ni + 2 + nf + 2;
    Type u64 = type_scalar(DT_U64);
    IrValue *total = ir_binary(b, IR_MUL, sp, nt, nk, u64);
    IrValue *nk1 = ir_binary(b, IR_SUB, sp, nk, ir_const_int(b, sp, u64, 1), u64);
    IrValue *zero = ir_const_int(b, sp, u64, 0);
    IrValue **ops = values(fl, 3 + nc);
    Type *types = arena_alloc(fl->f->arena, sizeof(Type) * (size_t)(nc + 1));
    ops[0] = zero;
    ops[1] = total;
    ops[2] = ir_const_int(b, sp, u64, 1);
    IrValue **init = ops + 3;
    for (int j = 0; j < no; j++)
        init[j] = fl->outer->operands[3 + j];
    for (int j = 0; j < ni; j++) {
        IrValue *v = fl->inner->operands[3 + j];
        /* a tile's first step never reads the value it starts with */
        init[no + j] = fl->hoisted[v->id] || !in_outer_body(fl, v) ? mapped(fl, v)
            : dtype_is_float(v->type.dt) ? ir_const_float(b, sp, v->type, 0.0)
                                         : ir_const_int(b, sp, v->type, 0);
    }
    init[no + ni + C_QS] = init[no + ni + C_RS] = zero;
    front_at(fl, b, fl->outer->operands[0], init, init + no + ni + 2);
    init[nc - 2] = init[nc - 1] = zero;
    for (int j = 0; j < nc; j++)
        types[j] = init[j]->type;
    IrOp *loop = ir_build(b, IR_FOR, sp, ops, 3 + nc, types, nc);
    loop->flags = IRF_FLATTEN | (fl->outer->flags & IRF_WARP_SPEC);
    loop->ival = fl->inner->ival ? fl->inner->ival : fl->outer->ival;
    IrBlock *body = ir_op_add_region(fl->f, loop);
    ir_block_add_arg(fl->f, body, u64, "it");
    for (int j = 0; j < nc; j++)
        ir_block_add_arg(fl->f, body, types[j],
                         j < no            ? fl->ob->args[j + 1]->name
                             : j < no + ni ? fl->ib->args[j - no + 1]->name
                                           : NULL);
    flat_body(fl, loop, nt, nk1);
    yield(b, sp, loop->results, no);
}

static void flatten(Flat *fl)
{
    IrOp *outer = fl->outer, *inner = fl->inner;
    fl->sp = outer->span;
    int no = outer->nres, ni = inner->nres;
    fl->fresh = arena_alloc(fl->f->arena, sizeof(bool) * (size_t)(ni + 1));
    for (int j = 0; j < ni; j++)
        fl->fresh[j] = dot_accumulator(fl, j);
    for (int j = 0; j < ni; j++)
        if (invariant(fl, inner->operands[3 + j], 0))
            hoist(fl, inner->operands[3 + j]);
    IrBuilder b = {fl->f, outer->parent, outer};
    IrValue *nk = trip_count(&b, fl->sp, hoist(fl, inner->operands[0]),
                             hoist(fl, inner->operands[1]), inner->operands[2]->def->ival);
    IrValue *nt = trip_count(&b, fl->sp, outer->operands[0], outer->operands[1],
                             outer->operands[2]->def->ival);
    fl->nfront = 0;
    fl->front = values(fl, fl->nmap);
    ir_walk(fl->ib, collect_front, fl);
    IrValue *zero = ir_const_int(&b, fl->sp, type_scalar(DT_U64), 0);
    IrValue *any = ir_binary(&b, IR_AND, fl->sp, cmp(&b, fl->sp, CMP_GT, nk, zero),
                             cmp(&b, fl->sp, CMP_GT, nt, zero), type_scalar(DT_I1));
    Type *types = arena_alloc(fl->f->arena, sizeof(Type) * (size_t)(no + 1));
    for (int i = 0; i < no; i++)
        types[i] = outer->results[i]->type;
    IrOp *choice = ir_build(&b, IR_IF, fl->sp, &any, 1, types, no);
    IrBuilder tb = {fl->f, ir_op_add_region(fl->f, choice), NULL};
    IrBlock *other = ir_op_add_region(fl->f, choice);
    flat_loop(fl, &tb, nt, nk);
    for (int i = 0; i < no; i++)
        ir_replace_uses(outer->parent, outer->results[i], choice->results[i]);
    /* no tiles or no K steps: the original loop without its K loop */
    for (int j = 0; j < ni; j++)
        ir_replace_uses(fl->ob, inner->results[j], inner->operands[3 + j]);
    ir_remove(inner);
    ir_remove(outer);
    ir_append(other, outer);
    IrBuilder eb = {fl->f, other, NULL};
    yield(&eb, fl->sp, outer->results, no);
}

typedef struct Found {
    Arena *a;
    PtrVec v;
} Found;

static bool find_flatten(IrOp *op, void *ctx)
{
    Found *fd = ctx;
    if (op->kind == IR_FOR && (op->flags & IRF_FLATTEN))
        vec_push(fd->a, &fd->v, op);
    return true;
}

bool pass_flatten(IrFunc *f)
{
    Found fd = {f->arena, {0}};
    ir_walk(f->body, find_flatten, &fd);
    if (!fd.v.len)
        return false;
    Flat fl = {.f = f, .nmap = f->next_id};
    fl.map = arena_alloc(f->arena, sizeof(IrValue *) * (size_t)(fl.nmap + 1));
    fl.hoisted = arena_alloc(f->arena, sizeof(bool) * (size_t)(fl.nmap + 1));
    fl.want = arena_alloc(f->arena, sizeof(bool) * (size_t)(fl.nmap + 1));
    fl.per_step = arena_alloc(f->arena, sizeof(bool) * (size_t)(fl.nmap + 1));
    if (!fl.map || !fl.hoisted || !fl.want || !fl.per_step || f->arena->oom)
        return false;
    bool any = false;
    /* innermost first: a flattened loop holds no K loop, so its parent stays nested */
    for (int i = fd.v.len - 1; i >= 0 && !f->arena->oom; i--) {
        fl.outer = fd.v.items[i];
        fl.outer->flags &= ~IRF_FLATTEN;
        if (fits(&fl)) {
            memset(fl.map, 0, sizeof(IrValue *) * (size_t)fl.nmap);
            memset(fl.hoisted, 0, sizeof(bool) * (size_t)fl.nmap);
            memset(fl.per_step, 0, sizeof(bool) * (size_t)fl.nmap);
            flatten(&fl);
            any = true;
        }
    }
    ir_renumber(f);
    return any;
}
