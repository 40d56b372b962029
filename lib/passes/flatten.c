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
 *   nk = count(klb, kub, kstep)
 *   if nk > 0:
 *     for it in range(0, count(lb, ub, step) * nk) iter(o..., i...):   (u64)
 *       t = lb + it / nk * step;  k = klb + it % nk * kstep
 *       PRE's ops that the K loop reads (recomputed each step)
 *       i' = it % nk == 0 ? init : i    (a dot's zero accumulator takes
 *                                         the dot's fresh operand instead)
 *       BODY
 *       o' = if it % nk == nk - 1 { PRE's other ops; POST } else { o }
 *   else:
 *     the original loop, its K loop replaced by the inits
 *
 * The K loop's bounds may not depend on the tile (they are computed once,
 * before), PRE may hold no memory access or region, both loops count up by
 * constant steps over i32 (the flat count, a product of two such counts,
 * fits u64). Loops that do not fit stay nested: the same values, with the
 * pipeline drained per tile. */
#include "passes/passes.h"

#include <string.h>

typedef struct Flat {
    IrFunc *f;
    IrOp *outer, *inner;
    IrBlock *ob, *ib;     /* their bodies */
    IrValue **map;        /* by value id of the function before the pass */
    int nmap;
    bool *need;           /* by value id: a PRE result the K loop reads */
    bool *fresh;          /* by K-loop carried index: a dot's zero accumulator */
    Span sp;
} Flat;

/* What PRE may hold: ops without effects, regions or much work, which can
 * run once per K step instead of once per tile. */
static bool cheap_pure(const IrOp *op)
{
    if (op->nregions || op->nres == 0)
        return false;
    switch (op->kind) {
    case IR_LOAD: case IR_STORE: case IR_ATOMIC_RMW: case IR_ATOMIC_CAS: case IR_PRINT:
    case IR_ASSERT: case IR_ASSUME: case IR_BARRIER: case IR_RAND: case IR_DOT: case IR_REDUCE:
    case IR_SCAN: case IR_ASYNC_COPY: case IR_ASYNC_COMMIT: case IR_ASYNC_WAIT:
    case IR_SHARED_VIEW: case IR_DOT_WAIT: case IR_TMA_COPY: case IR_TMA_WAIT:
        return false;
    default:
        return true;
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
    return mapped(fl, v);
}

static bool is_zero_const(const IrValue *v)
{
    const IrOp *d = v->def;
    while (d && d->kind == IR_SPLAT)
        d = d->operands[0]->def;
    return d && d->kind == IR_CONST && d->ival == 0 && d->fval == 0.0;
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
    return is_zero_const(fl->inner->operands[3 + j]) && u.n == 1 && u.last->kind == IR_DOT &&
           u.last->parent == fl->ib && u.last->nops == 3 && u.last->operands[2] == u.v;
}

static void mark_need(Flat *fl, const IrValue *v)
{
    if (!v || !in_outer_body(fl, v) || !v->def || fl->need[v->id])
        return;
    fl->need[v->id] = true;
    for (int i = 0; i < v->def->nops; i++)
        mark_need(fl, v->def->operands[i]);
}

/* A PRE op the K loop reads, not yet computed in front of the loop. */
static bool needed(const Flat *fl, const IrOp *op)
{
    bool any = false;
    for (int i = 0; i < op->nres; i++) {
        if (fl->map[op->results[i]->id])
            return false; /* hoisted */
        any = any || fl->need[op->results[i]->id];
    }
    return any;
}

/* A PRE op for the epilogue: one the K loop does not read, not hoisted. */
static bool epilogue_only(const Flat *fl, const IrOp *op)
{
    for (int i = 0; i < op->nres; i++)
        if (fl->map[op->results[i]->id] || fl->need[op->results[i]->id])
            return false;
    return true;
}

static bool mark_operands(IrOp *op, void *ctx)
{
    for (int i = 0; i < op->nops; i++)
        mark_need(ctx, op->operands[i]);
    return true;
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
    IrValue *n = ir_binary(b, IR_ADD, sp,
                           ir_binary(b, IR_DIV, sp, d, ir_const_int(b, sp, i64, step), i64), one,
                           i64);
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

static IrValue *yield(IrBuilder *b, Span sp, IrValue **v, int n)
{
    ir_build(b, IR_YIELD, sp, v, n, NULL, 0);
    return NULL;
}

/* o' = if last { PRE's ops the K loop did not need; POST } else { o }. */
static IrOp *epilogue(Flat *fl, IrBuilder *b, IrValue *last, IrValue **o)
{
    int no = fl->outer->nres;
    Type *types = arena_alloc(fl->f->arena, sizeof(Type) * (size_t)(no + 1));
    for (int i = 0; i < no; i++)
        types[i] = fl->outer->results[i]->type;
    IrOp *e = ir_build(b, IR_IF, fl->sp, &last, 1, types, no);
    IrBuilder tb = {fl->f, ir_op_add_region(fl->f, e), NULL};
    IrBuilder eb = {fl->f, ir_op_add_region(fl->f, e), NULL};
    bool post = false;
    for (IrOp *x = fl->ob->first; x; x = x->next) {
        if (x == fl->inner) {
            post = true;
        } else if (x->kind == IR_YIELD) {
            IrValue **ys = arena_alloc(fl->f->arena, sizeof(IrValue *) * (size_t)(x->nops + 1));
            for (int i = 0; i < x->nops; i++)
                ys[i] = mapped(fl, x->operands[i]);
            yield(&tb, fl->sp, ys, x->nops);
        } else if (post || epilogue_only(fl, x)) {
            ir_clone(&tb, x, fl->map, fl->nmap);
        }
    }
    yield(&eb, fl->sp, o, no);
    return e;
}

/* The flat loop's body: indices, PRE's needed ops, BODY, the epilogue. */
static void flat_body(Flat *fl, IrOp *loop, IrValue *nk, IrValue *nk1)
{
    IrBlock *body = loop->regions[0];
    IrBuilder b = {fl->f, body, NULL};
    Span sp = fl->sp;
    int no = fl->outer->nres, ni = fl->inner->nres;
    Type u64 = type_scalar(DT_U64);
    IrValue *it = body->args[0];
    IrValue *q = ir_binary(&b, IR_DIV, sp, it, nk, u64);
    IrValue *r = ir_binary(&b, IR_SUB, sp, it, ir_binary(&b, IR_MUL, sp, q, nk, u64), u64);
    fl->map[fl->ob->args[0]->id] = nth(&b, sp, fl->outer->operands[0], q, fl->outer->operands[2]);
    fl->map[fl->ib->args[0]->id] =
        nth(&b, sp, mapped(fl, fl->inner->operands[0]), r, fl->inner->operands[2]);
    IrValue *first = cmp(&b, sp, CMP_EQ, r, ir_const_int(&b, sp, u64, 0));
    IrValue *last = cmp(&b, sp, CMP_EQ, r, nk1);
    for (int i = 0; i < no; i++)
        fl->map[fl->ob->args[i + 1]->id] = body->args[i + 1];
    for (IrOp *x = fl->ob->first; x != fl->inner; x = x->next)
        if (needed(fl, x))
            ir_clone(&b, x, fl->map, fl->nmap);
    for (int j = 0; j < ni; j++) {
        IrValue *carried = body->args[1 + no + j];
        fl->map[fl->ib->args[j + 1]->id] =
            fl->fresh[j] ? carried
                         : pick(&b, sp, first, mapped(fl, fl->inner->operands[3 + j]), carried);
    }
    IrValue **next = arena_alloc(fl->f->arena, sizeof(IrValue *) * (size_t)(no + ni + 1));
    for (IrOp *x = fl->ib->first; x; x = x->next) {
        if (x->kind == IR_YIELD) {
            for (int j = 0; j < ni; j++)
                next[no + j] = fl->map[fl->inner->results[j]->id] = mapped(fl, x->operands[j]);
            continue;
        }
        IrOp *c = ir_clone(&b, x, fl->map, fl->nmap);
        for (int j = 0; c && j < ni; j++)
            if (fl->fresh[j] && x->kind == IR_DOT && x->operands[2] == fl->ib->args[j + 1]) {
                IrValue **ops = arena_alloc(fl->f->arena, sizeof(IrValue *) * 4);
                memcpy(ops, c->operands, sizeof(IrValue *) * 3);
                ops[3] = first;
                c->operands = ops;
                c->nops = 4;
            }
    }
    IrOp *e = epilogue(fl, &b, last, body->args + 1);
    for (int i = 0; i < no; i++)
        next[i] = e->results[i];
    yield(&b, sp, next, no + ni);
}

/* The flat loop, in the then-region of `if nk > 0`; yields its results. */
static void flat_loop(Flat *fl, IrBuilder *b, IrValue *nt, IrValue *nk)
{
    Span sp = fl->sp;
    int no = fl->outer->nres, ni = fl->inner->nres;
    Type u64 = type_scalar(DT_U64);
    IrValue *total = ir_binary(b, IR_MUL, sp, nt, nk, u64);
    IrValue *nk1 = ir_binary(b, IR_SUB, sp, nk, ir_const_int(b, sp, u64, 1), u64);
    IrValue **ops = arena_alloc(fl->f->arena, sizeof(IrValue *) * (size_t)(3 + no + ni));
    Type *types = arena_alloc(fl->f->arena, sizeof(Type) * (size_t)(no + ni + 1));
    ops[0] = ir_const_int(b, sp, u64, 0);
    ops[1] = total;
    ops[2] = ir_const_int(b, sp, u64, 1);
    for (int i = 0; i < no; i++)
        ops[3 + i] = fl->outer->operands[3 + i];
    for (int j = 0; j < ni; j++) {
        IrValue *init = fl->inner->operands[3 + j];
        /* a tile's first step never reads the value it starts with */
        ops[3 + no + j] = invariant(fl, init, 0) ? mapped(fl, init)
                          : dtype_is_float(init->type.dt)
                              ? ir_const_float(b, sp, init->type, 0.0)
                              : ir_const_int(b, sp, init->type, 0);
    }
    for (int i = 0; i < no + ni; i++)
        types[i] = ops[3 + i]->type;
    IrOp *loop = ir_build(b, IR_FOR, sp, ops, 3 + no + ni, types, no + ni);
    loop->flags = IRF_FLATTEN;
    loop->ival = fl->inner->ival ? fl->inner->ival : fl->outer->ival;
    IrBlock *body = ir_op_add_region(fl->f, loop);
    ir_block_add_arg(fl->f, body, u64, "it");
    for (int i = 0; i < no + ni; i++)
        ir_block_add_arg(fl->f, body, types[i],
                         i < no ? fl->ob->args[i + 1]->name : fl->ib->args[i - no + 1]->name);
    flat_body(fl, loop, nk, nk1);
    yield(b, sp, loop->results, no);
}

static void flatten(Flat *fl)
{
    IrOp *outer = fl->outer, *inner = fl->inner;
    fl->sp = outer->span;
    int no = outer->nres, ni = inner->nres;
    memset(fl->map, 0, sizeof(IrValue *) * (size_t)fl->nmap);
    memset(fl->need, 0, sizeof(bool) * (size_t)fl->nmap);
    fl->fresh = arena_alloc(fl->f->arena, sizeof(bool) * (size_t)(ni + 1));
    for (int j = 0; j < ni; j++)
        fl->fresh[j] = dot_accumulator(fl, j);
    mark_operands(inner, fl);
    ir_walk(fl->ib, mark_operands, fl);
    for (int j = 0; j < ni; j++)
        if (invariant(fl, inner->operands[3 + j], 0))
            hoist(fl, inner->operands[3 + j]);
    IrBuilder b = {fl->f, outer->parent, outer};
    IrValue *nk = trip_count(&b, fl->sp, hoist(fl, inner->operands[0]),
                             hoist(fl, inner->operands[1]), inner->operands[2]->def->ival);
    IrValue *nt = trip_count(&b, fl->sp, outer->operands[0], outer->operands[1],
                             outer->operands[2]->def->ival);
    IrValue *any = cmp(&b, fl->sp, CMP_GT, nk, ir_const_int(&b, fl->sp, type_scalar(DT_U64), 0));
    Type *types = arena_alloc(fl->f->arena, sizeof(Type) * (size_t)(no + 1));
    for (int i = 0; i < no; i++)
        types[i] = outer->results[i]->type;
    IrOp *choice = ir_build(&b, IR_IF, fl->sp, &any, 1, types, no);
    IrBuilder tb = {fl->f, ir_op_add_region(fl->f, choice), NULL};
    IrBlock *other = ir_op_add_region(fl->f, choice);
    flat_loop(fl, &tb, nt, nk);
    for (int i = 0; i < no; i++)
        ir_replace_uses(outer->parent, outer->results[i], choice->results[i]);
    /* no K steps: the original loop without its K loop */
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
    fl.need = arena_alloc(f->arena, sizeof(bool) * (size_t)(fl.nmap + 1));
    if (!fl.map || !fl.need || f->arena->oom)
        return false;
    bool any = false;
    /* innermost first: a flattened loop holds no K loop, so its parent stays nested */
    for (int i = fd.v.len - 1; i >= 0 && !f->arena->oom; i--) {
        fl.outer = fd.v.items[i];
        fl.outer->flags &= ~IRF_FLATTEN;
        if (fits(&fl)) {
            flatten(&fl);
            any = true;
        }
    }
    ir_renumber(f);
    return any;
}
