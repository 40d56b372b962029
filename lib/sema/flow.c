/* sema/flow.c: `if` and conditional expressions in structured form. A
 * runtime `if` runs both branches on copies of the environment and merges
 * the names that differ into IR_IF results; a branch that returned merges
 * only its value. Constexpr conditions prune. A conditional expression
 * whose side must not run speculatively is an IR_IF too. In
 * tl.map_elementwise's function runtime conditions are per element
 * (sema/predicate.c). Loops are sema/loop.c. */
#include <string.h>

#include "sema/spec.h"

static SVal undef(const char *why) { return (SVal){.k = SV_UNDEF, .s = why}; }

const char sema_partial_return[] = "not every path returns a value";

static bool materializable(SVal v) { return v.k == SV_TENSOR || sv_is_num(v); }

static Type val_type(SVal v)
{
    return v.k == SV_TENSOR ? v.v->type : type_scalar(sema_literal_dtype(v));
}

void sema_terminate(Sema *s, IrBlock *blk, IrKind k, Span at, IrValue **vals, int n)
{
    IrBuilder saved = s->b;
    s->b.blk = blk;
    s->b.before = NULL;
    ir_build(&s->b, k, at, vals, n, NULL, 0);
    s->b = saved;
}

/* Puts an op built detached (with regions taken from `tmp`) where the
 * builder points. */
IrOp *sema_place_op(Sema *s, IrOp *op, IrOp *tmp)
{
    op->regions = tmp->regions;
    op->nregions = tmp->nregions;
    for (int r = 0; r < op->nregions; r++)
        op->regions[r]->parent = op;
    if (s->b.before)
        ir_insert_before(s->b.before, op);
    else
        ir_append(s->b.blk, op);
    return op;
}

IrValue *sema_value_in(Sema *s, IrBlock *blk, SVal v, Span at)
{
    if (v.k == SV_TENSOR)
        return v.v;
    IrBuilder saved = s->b;
    s->b.blk = blk;
    s->b.before = NULL;
    IrValue *r = sema_to_tensor(s, v, at);
    s->b = saved;
    return r;
}

/* ---- if ------------------------------------------------------------------------ */

/* The values both branches yield: slot i holds then-value y[0][i] and
 * else-value y[1][i]. A merged SVal refers to slot i by a placeholder
 * (SV_TENSOR with v == NULL, i = slot) until the IR_IF op exists. */
typedef struct Merge {
    IrBlock *blk[2];
    IrValue **y[2];
    Type *types;
    const char **names;
    int n, cap;
    bool ok;
} Merge;

static SVal merge_pair(Sema *s, Merge *m, const char *name, SVal v1, SVal v2, Span at)
{
    if (sema_same_val(v1, v2))
        return v1;
    if (v1.k == SV_UNDEF || v2.k == SV_UNDEF)
        return v1.k == SV_UNDEF ? v1 : v2;
    /* descriptors of one padding merge; the alignment contract holds where both state it */
    bool same_bits = v1.k == SV_DESC ? !((v1.i ^ v2.i) & DESC_NAN) : v1.i == v2.i;
    if (sv_is_struct(v1) && v1.k == v2.k && v1.n == v2.n && same_bits && type_eq(v1.ty, v2.ty)) {
        SVal t = v1;
        t.i = v1.k == SV_DESC ? v1.i & v2.i : v1.i;
        t.items = sv_tuple(s, v1.items, v1.n).items;
        for (int i = 0; i < v1.n; i++)
            t.items[i] = merge_pair(s, m, NULL, v1.items[i], v2.items[i], at);
        return t;
    }
    const char *what = name ? arena_printf(s->a, "'%s'", name) : "a tuple item";
    if (!strcmp(name ? name : "", "$ret"))
        what = "the returned value";
    if (!materializable(v1) || !materializable(v2)) {
        sema_err(s, at,
                 "%s is %s in one branch of the 'if' and %s in the other; only tensors "
                 "and numbers can differ between branches",
                 what, sv_describe(s, v1), sv_describe(s, v2));
        return (SVal){.k = SV_UNDEF};
    }
    if (!type_eq(val_type(v1), val_type(v2))) {
        sema_err(s, at,
                 "%s is %s in the then-branch but %s in the else-branch; both branches "
                 "must give it the same type",
                 what, sema_type_str(s, val_type(v1)), sema_type_str(s, val_type(v2)));
        return (SVal){.k = SV_UNDEF};
    }
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 8;
        for (int r = 0; r < 2; r++) {
            IrValue **ny = arena_alloc(s->a, sizeof(IrValue *) * (size_t)cap);
            if (m->n)
                memcpy(ny, m->y[r], sizeof(IrValue *) * (size_t)m->n);
            m->y[r] = ny;
        }
        Type *nt = arena_alloc(s->a, sizeof(Type) * (size_t)cap);
        const char **nn = arena_alloc(s->a, sizeof(char *) * (size_t)cap);
        if (m->n) {
            memcpy(nt, m->types, sizeof(Type) * (size_t)m->n);
            memcpy(nn, m->names, sizeof(char *) * (size_t)m->n);
        }
        m->types = nt;
        m->names = nn;
        m->cap = cap;
    }
    int i = m->n++;
    for (int r = 0; r < 2; r++) {
        m->y[r][i] = sema_value_in(s, m->blk[r], r ? v2 : v1, at);
        m->ok &= m->y[r][i] != NULL;
    }
    m->types[i] = m->y[0][i] ? m->y[0][i]->type : type_scalar(DT_I32);
    m->names[i] = name && name[0] != '$' ? name : NULL;
    return (SVal){.k = SV_TENSOR, .v = NULL, .i = i};
}

/* Replaces the placeholders of a merged value by the IR_IF's results; a
 * descriptor states its alignment contract on the new values. */
static SVal fill(Sema *s, SVal v, IrOp *op, Span at)
{
    if (v.k == SV_TENSOR && !v.v)
        return op ? sv_tensor(op->results[v.i]) : (SVal){.k = SV_UNDEF};
    if (sv_is_struct(v)) {
        SVal t = v;
        t.items = sv_tuple(s, v.items, v.n).items;
        bool merged = false;
        for (int i = 0; i < v.n; i++) {
            t.items[i] = fill(s, v.items[i], op, at);
            merged |= v.items[i].k == SV_TENSOR && !v.items[i].v;
        }
        if (merged && t.k == SV_DESC)
            sema_desc_contract(s, &t, at);
        return t;
    }
    return v;
}

void sema_exec_if(Sema *s, const Node *n, Cont *rest)
{
    SVal c = sema_eval(s, n->a);
    if (c.k == SV_UNDEF) /* reported; check both branches as if it were a runtime condition */
        c = sv_tensor(sema_const(s, type_scalar(DT_I1), sv_bool(false), n->a->span));
    if (c.k != SV_TENSOR) {
        bool t;
        if (!sema_truth(s, c, n->a->span, &t))
            return;
        sema_exec(s, t ? &n->list : &n->list2, 0, rest);
        return;
    }
    if (s->pred) { /* in tl.map_elementwise's function: a condition per element */
        sema_pred_if(s, n, c.v, rest);
        return;
    }
    if (c.v->type.rank != 0) {
        sema_err(s, n->a->span,
                 "the condition of 'if' must be a scalar, got %s (use tl.where "
                 "for blocks)",
                 sema_type_str(s, c.v->type));
        return;
    }
    IrValue *cond = sema_to_bool(s, c.v, n->a->span);
    bool early = sema_contains_return(&n->list) || sema_contains_return(&n->list2);
    Cont *bc = early ? rest : NULL;
    Env *outer = s->env;
    Env before = env_copy(s, outer);
    IrOp *tmp = ir_op_new(s->f, IR_IF, n->span, &cond, 1, NULL, 0);
    IrBlock *blk[2] = {ir_op_add_region(s->f, tmp), ir_op_add_region(s->f, tmp)};
    IrBuilder saved = s->b;
    Env envs[2];
    bool ret[2];
    for (int r = 0; r < 2; r++) {
        envs[r] = env_copy(s, &before);
        s->env = &envs[r];
        s->b = (IrBuilder){.f = s->f, .blk = blk[r]};
        s->returned = false;
        sema_exec(s, r ? &n->list2 : &n->list, 0, bc);
        ret[r] = s->returned;
    }
    s->b = saved;
    s->env = outer;
    Env merged = env_copy(s, &before);
    Merge m = {.blk = {blk[0], blk[1]}, .ok = true};
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < envs[r].n; i++) {
            const char *name = envs[r].b[i].name;
            if (r == 1 && env_lookup(&envs[0], name, NULL))
                continue; /* handled with the then-branch */
            Span *a1 = NULL;
            SVal *v1 = env_lookup(&envs[0], name, &a1), *v2 = env_lookup(&envs[1], name, NULL);
            bool is_ret = strcmp(name, "$ret") == 0;
            /* an 'if' that holds a return ran what follows it inside its
             * branches (bc): nothing after it reads its names but the
             * return value, so they are not merged (`if M == 0: return`
             * and then A = A + offs, a block, need not agree), and a value
             * made in a nested branch is not yielded out of this one */
            if (!is_ret && early) {
                env_set(s, &merged, name,
                        undef(arena_printf(s->a, "'%s' is not defined here", name)), n->span);
                continue;
            }
            if (is_ret && (!v1 || !v2) && (v1 ? v1 : v2)->k == SV_NONE)
                env_set(s, &merged, name, sv_none(), n->span);
            else if (!v1 || !v2)
                env_set(s, &merged, name,
                        undef(is_ret ? sema_partial_return
                                     : arena_printf(s->a,
                                                    "'%s' is defined in only one branch of "
                                                    "the 'if' at line %d",
                                                    name, n->span.line)),
                        n->span);
            else
                env_set(s, &merged, name, merge_pair(s, &m, name, *v1, *v2, n->span),
                        sema_same_val(*v1, *v2) ? *a1 : n->span);
        }
    IrOp *op = NULL;
    if (m.ok) {
        for (int r = 0; r < 2; r++)
            sema_terminate(s, blk[r], IR_YIELD, n->span, m.y[r], m.n);
        op = sema_place_op(s, ir_op_new(s->f, IR_IF, n->span, &cond, 1, m.types, m.n), tmp);
        for (int i = 0; i < m.n; i++)
            op->results[i]->name = m.names[i];
    }
    for (int i = 0; i < merged.n; i++)
        merged.b[i].val = fill(s, merged.b[i].val, op, n->span);
    *outer = merged;
    s->returned = ret[0] && ret[1];
    if (!early && rest && !s->returned)
        sema_exec(s, rest->list, rest->from, rest->next);
}

/* ---- a ? b : c with a runtime condition ----------------------------------------------- */

/* Whether evaluating an op where its condition is false can change what
 * the kernel does: memory accesses (a load may fault where the condition
 * guards its address), effects, assumptions, and anything inside regions
 * holding those. */
static bool speculatable(const IrBlock *b)
{
    for (const IrOp *op = b ? b->first : NULL; op; op = op->next) {
        if (op->kind == IR_YIELD || op->kind == IR_CONDITION)
            continue; /* a region's terminator */
        /* an op with regions is judged by what they hold, walked once here
         * (ir_op_has_effect would walk them again, and misses loads) */
        if (op->kind == IR_LOAD || (op->nregions == 0 && ir_op_has_effect(op)))
            return false;
        for (int r = 0; r < op->nregions; r++)
            if (!speculatable(op->regions[r]))
                return false;
    }
    return true;
}

/* Moves a region's ops to where the builder points, in order. */
static void hoist(Sema *s, IrBlock *from)
{
    while (from->first) {
        IrOp *op = from->first;
        ir_remove(op);
        if (s->b.before)
            ir_insert_before(s->b.before, op);
        else
            ir_append(s->b.blk, op);
    }
}

/* One side of the conditional, converted in its region to the type both
 * sides share (as Triton's binary operators promote and broadcast). */
static IrValue *side_as(Sema *s, IrBlock *blk, SVal v, DType dt, int rank, const int *shape,
                        Span at)
{
    IrBuilder saved = s->b;
    s->b = (IrBuilder){.f = s->f, .blk = blk};
    IrValue *x = v.k == SV_TENSOR ? v.v : sema_const(s, type_scalar(dt), v, at);
    if (x && type_elem(x->type).dt != dt)
        x = sema_cast(s, x, dt, at);
    if (x && x->type.rank != rank)
        x = sema_broadcast(s, x, rank, shape, at);
    s->b = saved;
    return x;
}

/* `a if cond else b` with a scalar runtime condition. Each side is built
 * in its own region; where neither touches memory nor has an effect, the
 * two are hoisted to the builder and returned in sides[] for the caller's
 * select (false), else an IR_IF runs only the side the condition takes, as
 * Triton's scf.if does (true, its result in *out): `0 if i == 0 else
 * tl.load(p + i - 1)` must not read p[-1]. */
bool sema_ifexp_branch(Sema *s, const Node *n, IrValue *cond, SVal sides[2], SVal *out)
{
    IrOp *tmp = ir_op_new(s->f, IR_IF, n->span, &cond, 1, NULL, 0);
    IrBlock *blk[2] = {ir_op_add_region(s->f, tmp), ir_op_add_region(s->f, tmp)};
    IrBuilder saved = s->b;
    SVal v[2];
    for (int r = 0; r < 2; r++) {
        s->b = (IrBuilder){.f = s->f, .blk = blk[r]};
        v[r] = sema_eval(s, r ? n->c : n->a);
    }
    s->b = saved;
    *out = (SVal){.k = SV_UNDEF};
    if (v[0].k == SV_UNDEF || v[1].k == SV_UNDEF)
        return true;
    if (speculatable(blk[0]) && speculatable(blk[1])) {
        hoist(s, blk[0]);
        hoist(s, blk[1]);
        sides[0] = v[0];
        sides[1] = v[1];
        return false;
    }
    IrValue *b = NULL;
    if (v[0].k == SV_NONE && v[1].k == SV_NONE) { /* `store(p) if c else store(q)` */
        for (int r = 0; r < 2; r++)
            sema_terminate(s, blk[r], IR_YIELD, n->span, NULL, 0);
        if ((b = sema_to_bool(s, cond, n->b->span)))
            sema_place_op(s, ir_op_new(s->f, IR_IF, n->span, &b, 1, NULL, 0), tmp);
        *out = b ? v[0] : (SVal){.k = SV_UNDEF};
        return true;
    }
    for (int r = 0; r < 2; r++)
        if (!materializable(v[r])) {
            sema_err(s, (r ? n->c : n->a)->span,
                     "a conditional expression with a runtime condition needs a tensor or "
                     "a number on each side, not %s",
                     sv_describe(s, v[r]));
            return true;
        }
    Type t0 = val_type(v[0]), t1 = val_type(v[1]);
    DType dt = type_elem(t0).dt;
    if (type_elem(t0).dt != type_elem(t1).dt || type_elem(t0).elem != type_elem(t1).elem)
        dt = sema_promote(s, type_elem(t0).dt, v[0].k != SV_TENSOR, type_elem(t1).dt,
                          v[1].k != SV_TENSOR, false, n->span);
    int rank = 0, shape[TK_MAX_RANK] = {0};
    if (dt == DT_VOID || !sema_broadcast_shapes(s, t0, t1, &rank, shape, n->span))
        return true;
    IrValue *y[2];
    for (int r = 0; r < 2; r++) {
        y[r] = side_as(s, blk[r], v[r], dt, rank, shape, (r ? n->c : n->a)->span);
        if (!y[r])
            return true;
        sema_terminate(s, blk[r], IR_YIELD, n->span, &y[r], 1);
    }
    Type rt = y[0]->type;
    b = sema_to_bool(s, cond, n->b->span);
    if (!b)
        return true;
    IrOp *op = sema_place_op(s, ir_op_new(s->f, IR_IF, n->span, &b, 1, &rt, 1), tmp);
    *out = sv_tensor(op->results[0]);
    return true;
}
