/* sema/predicate.c: per-element control flow in tl.map_elementwise's
 * scalar function. The function runs once on whole blocks, so an `if` on
 * an element's value runs both branches and merges each name with a select
 * on the condition; a `while` runs while any element still wants another
 * iteration and changes only those elements; a `return` records its value
 * for the elements that reach it and takes them off every later path.
 * Assumes s->pred is set (by tl.map_elementwise); guarantees that every
 * element ends with what its own path through the function computes, and
 * that a side effect under a per-element condition is an error at its line,
 * never done for the wrong elements. */
#include <string.h>

#include "sema/spec.h"

static SVal undef(const char *why) { return (SVal){.k = SV_UNDEF, .s = why}; }

static IrValue *mask_and(Sema *s, IrValue *a, IrValue *b, Span at)
{
    if (!a || !b)
        return a ? a : b;
    return ir_binary(&s->b, IR_AND, at, a, b, a->type);
}

static IrValue *mask_not(Sema *s, IrValue *a, Span at)
{
    return ir_unary(&s->b, IR_NOT, at, a, a->type);
}

IrValue *sema_pred_widen(Sema *s, IrValue *x, Span at)
{
    const Type *t = &s->pred->shape;
    if (!x || x->type.rank > t->rank)
        return x;
    return sema_broadcast(s, x, t->rank, t->shape, at);
}

IrValue *sema_pred_active(Sema *s, Span at)
{
    SemaPred *p = s->pred;
    if (!p->done)
        return p->mask;
    return mask_and(s, p->mask, mask_not(s, p->done, at), at);
}

/* The per-element choice between two values of one name: cond ? a : b.
 * A Python number on one side takes the dtype of the tensor on the other,
 * as a literal does in an expression. */
static SVal select_val(Sema *s, IrValue *cond, SVal a, SVal b, const char *what, Span at)
{
    if (sema_same_val(a, b) || a.k == SV_UNDEF || b.k == SV_UNDEF)
        return a.k == SV_UNDEF ? a : b.k == SV_UNDEF ? b : a;
    if (sv_is_struct(a) && a.k == b.k && a.n == b.n && a.i == b.i && type_eq(a.ty, b.ty)) {
        SVal t = a;
        t.items = sv_tuple(s, a.items, a.n).items;
        for (int i = 0; i < a.n; i++)
            t.items[i] = select_val(s, cond, a.items[i], b.items[i], what, at);
        return t;
    }
    bool ta = a.k == SV_TENSOR, tb = b.k == SV_TENSOR;
    if ((!ta && !sv_is_num(a)) || (!tb && !sv_is_num(b)))
        return sema_err(s, at,
                        "%s is %s on one path and %s on another; only tensors and numbers "
                        "can differ between an element's paths",
                        what, sv_describe(s, a), sv_describe(s, b));
    IrValue *x = ta ? a.v : tb ? sema_const(s, type_scalar(b.v->type.dt), a, at) : NULL;
    IrValue *y = tb ? b.v : ta ? sema_const(s, type_scalar(a.v->type.dt), b, at) : NULL;
    if (!x)
        x = sema_to_tensor(s, a, at);
    if (!y)
        y = sema_to_tensor(s, b, at);
    if (!x || !y)
        return undef(NULL);
    if (!type_eq(type_elem(x->type), type_elem(y->type)))
        return sema_err(s, at,
                        "%s is %s on one path and %s on another; every path must give it "
                        "the same type",
                        what, sema_type_str(s, type_elem(x->type)),
                        sema_type_str(s, type_elem(y->type)));
    x = sema_pred_widen(s, x, at);
    y = sema_pred_widen(s, y, at);
    IrValue *c = sema_pred_widen(s, cond, at);
    if (!x || !y || !c || !sema_broadcast_pair(s, &x, &y, at) ||
        !sema_broadcast_pair(s, &c, &x, at))
        return undef(NULL);
    return sv_tensor(
        ir_build(&s->b, IR_SELECT, at, (IrValue *[]){c, x, y}, 3, &x->type, 1)->results[0]);
}

/* One name after a predicated `if`: the then-value where cond holds. A
 * branch that returned for all its elements leaves the other's value. */
static void merge_name(Sema *s, Env *out, const char *name, Env envs[2], const bool ret[2],
                       IrValue *cond, const Node *n)
{
    Span *at = NULL;
    SVal *v1 = env_lookup(&envs[0], name, &at), *v2 = env_lookup(&envs[1], name, NULL);
    if (ret[0] || ret[1]) {
        SVal *v = ret[0] ? v2 : v1;
        if (v)
            env_set(s, out, name, *v, n->span);
        return;
    }
    if (!v1 || !v2) {
        env_set(
            s, out, name,
            undef(arena_printf(s->a, "'%s' is defined in only one branch of the 'if' at line %d",
                               name, n->span.line)),
            n->span);
        return;
    }
    if (sema_same_val(*v1, *v2)) {
        env_set(s, out, name, *v1, *at);
        return;
    }
    SVal m = select_val(s, cond, *v1, *v2, arena_printf(s->a, "'%s'", name), n->span);
    env_set(s, out, name, m, n->span);
}

void sema_pred_if(Sema *s, const Node *n, IrValue *cond, Cont *rest)
{
    SemaPred *p = s->pred;
    Span at = n->a->span;
    cond = sema_pred_widen(s, sema_to_bool(s, cond, at), at);
    if (!cond)
        return;
    IrValue *outer_mask = p->mask;
    IrValue *live = sema_pred_active(s, at);
    IrValue *branch_mask[2] = {mask_and(s, live, cond, at),
                               mask_and(s, live, mask_not(s, cond, at), at)};
    Env *outer = s->env;
    Env before = env_copy(s, outer), envs[2];
    bool ret[2];
    for (int r = 0; r < 2; r++) {
        envs[r] = env_copy(s, &before);
        s->env = &envs[r];
        p->mask = branch_mask[r];
        s->returned = false;
        sema_exec(s, r ? &n->list2 : &n->list, 0, NULL);
        ret[r] = s->returned;
    }
    p->mask = outer_mask;
    s->env = outer;
    Env merged = env_copy(s, &before);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < envs[r].n; i++) {
            const char *name = envs[r].b[i].name;
            if (name[0] == '$' || (r == 1 && env_lookup(&envs[0], name, NULL)))
                continue;
            merge_name(s, &merged, name, envs, ret, cond, n);
        }
    *outer = merged;
    s->returned = ret[0] && ret[1];
    if (rest && !s->returned)
        sema_exec(s, rest->list, rest->from, rest->next);
}

/* `return v` for the live elements: their result becomes v and they leave
 * every later path. The path itself ends here. */
void sema_pred_return(Sema *s, SVal v, Span at)
{
    SemaPred *p = s->pred;
    IrValue *live = sema_pred_active(s, at);
    if (p->ret.k == SV_VOID || !live)
        p->ret = v;
    else
        p->ret = select_val(s, live, v, p->ret, "the returned value", at);
    if (live)
        p->done = p->done ? ir_binary(&s->b, IR_OR, at, p->done, live, live->type) : live;
    s->returned = true;
}

/* A called function has its own returns: its frame starts with the
 * caller's live elements and nothing returned. */
void sema_pred_enter(Sema *s, SemaPred *saved)
{
    SemaPred *p = s->pred;
    *saved = *p;
    Span none = {0};
    p->mask = sema_pred_active(s, none);
    p->done = NULL;
    p->ret = (SVal){.k = SV_VOID};
}

SVal sema_pred_leave(Sema *s, const SemaPred *saved)
{
    SemaPred *p = s->pred;
    SVal r = p->ret;
    bool all = s->returned;
    *p = *saved;
    if (r.k == SV_VOID)
        return sv_none();
    if (!all)
        return undef("not every path returns a value");
    return r;
}

/* The condition of a per-element `while`: the elements still looping are
 * those live at this test whose condition holds (*next, what the body
 * runs with); the loop goes on while there is any. */
IrValue *sema_pred_loop_cond(Sema *s, IrValue *mask, SVal cv, Span at, IrValue **next)
{
    IrValue *c = cv.k == SV_UNDEF ? NULL : sema_to_tensor(s, cv, at);
    c = sema_pred_widen(s, sema_to_bool(s, c, at), at);
    if (!c)
        c = sema_pred_widen(s, sema_const(s, type_scalar(DT_I1), sv_bool(false), at), at);
    *next = mask_and(s, mask, c, at);
    if ((*next)->type.rank == 0)
        return *next;
    SVal any = sema_reduce(s, "max", sema_cast(s, *next, DT_I32, at), (SVal){.k = SV_VOID}, false,
                           (SVal){.k = SV_VOID}, at);
    return any.k == SV_TENSOR ? sema_to_bool(s, any.v, at) : NULL;
}

/* After a per-element loop body: elements that were not looping keep
 * their values. */
void sema_pred_loop_yields(Sema *s, IrValue *mask, IrValue **y, IrValue *const *args, int n,
                           Span at)
{
    for (int i = 0; i < n; i++)
        if (y[i] != args[i] && type_eq(y[i]->type, args[i]->type))
            y[i] = ir_build(&s->b, IR_SELECT, at, (IrValue *[]){mask, y[i], args[i]}, 3,
                            &y[i]->type, 1)
                       ->results[0];
}

/* Stores, atomics, loads, prints and asserts act on every element of the
 * block; under a per-element condition some of those elements are not on
 * the statement's path, so the statement is refused rather than done for
 * them (or, for a load, done at addresses their path never computed). */
bool sema_pred_effect_ok(Sema *s, const char *what, Span at)
{
    if (!s->pred || (!s->pred->mask && !s->pred->done))
        return true;
    sema_err(s, at,
             "%s under a condition on an element's value in tl.map_elementwise's function "
             "is not supported (it would act on every element); move it out of the "
             "function and use a mask",
             what);
    return false;
}
