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

/* Whether a value of type x broadcasts to the mapped shape t. */
static bool fits(const Type *t, Type x)
{
    if (x.rank > t->rank)
        return false;
    for (int i = 1; i <= x.rank; i++)
        if (x.shape[x.rank - i] != 1 && x.shape[x.rank - i] != t->shape[t->rank - i])
            return false;
    return true;
}

/* Leaves a value that does not broadcast to the mapped shape as it is:
 * per_element reports it where it matters. */
IrValue *sema_pred_widen(Sema *s, IrValue *x, Span at)
{
    const Type *t = &s->pred->shape;
    if (!x || !fits(t, x->type))
        return x;
    return sema_broadcast(s, x, t->rank, t->shape, at);
}

/* The path's mask leaves out the elements that have returned: a return
 * ends its own path, and the `if` around it narrows the mask it goes on
 * with (sema_pred_if), so no later statement needs to look at `done`. */
IrValue *sema_pred_active(Sema *s) { return s->pred->mask; }

/* x as one value per element of the mapped blocks. A block the function
 * builds itself (tl.arange, tl.full) has no element to follow, so it
 * cannot be chosen or tested per element. */
static IrValue *per_element(Sema *s, IrValue *x, const char *what, Span at)
{
    const Type *t = &s->pred->shape;
    if (!x || !(x = sema_pred_widen(s, x, at)))
        return NULL;
    if (x->type.rank == t->rank && !memcmp(x->type.shape, t->shape, sizeof(int) * (size_t)t->rank))
        return x;
    sema_err(s, at,
             "%s is %s, not one value per element of tl.map_elementwise's blocks (%s); "
             "only those can depend on an element's path",
             what, sema_type_str(s, x->type),
             sema_type_str(s, type_with_shape(x->type, t->rank, t->shape)));
    return NULL;
}

/* The per-element choice between two values of one name: cond ? a : b.
 * A Python number counts as its literal's dtype (i32, fp32, ...), so both
 * paths must agree on the type as the two branches of an `if` must (and as
 * Triton requires of a function's returns). */
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
    IrValue *x = sema_to_tensor(s, a, at), *y = sema_to_tensor(s, b, at);
    if (!x || !y)
        return undef(NULL);
    if (!type_eq(type_elem(x->type), type_elem(y->type)))
        return sema_err(s, at,
                        "%s is %s on one path and %s on another; every path must give it "
                        "the same type",
                        what, sema_type_str(s, type_elem(x->type)),
                        sema_type_str(s, type_elem(y->type)));
    x = per_element(s, x, what, at);
    y = x ? per_element(s, y, what, at) : NULL;
    IrValue *c = cond;
    if (!x || !y)
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
    cond = per_element(s, sema_to_bool(s, cond, at), "the condition", at);
    if (!cond)
        return;
    IrValue *outer_mask = p->mask, *outer_done = p->done;
    IrValue *branch_mask[2] = {mask_and(s, outer_mask, cond, at),
                               mask_and(s, outer_mask, mask_not(s, cond, at), at)};
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
    if (p->done != outer_done) /* elements returned in a branch leave the path */
        p->mask = mask_and(s, outer_mask, mask_not(s, p->done, at), at);
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
    IrValue *live = sema_pred_active(s);
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
    p->mask = sema_pred_active(s);
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
        return undef(sema_partial_return);
    return r;
}

/* The condition of a per-element `while`, evaluated for the elements
 * still looping (mask): those whose condition holds (*next, what the body
 * runs with) loop again; the loop goes on while there is any. */
IrValue *sema_pred_loop_cond(Sema *s, const Node *cond, IrValue *mask, IrValue **next)
{
    Span at = cond->span;
    IrValue *outer = s->pred->mask;
    s->pred->mask = mask;
    SVal cv = sema_eval(s, cond);
    s->pred->mask = outer;
    IrValue *c = cv.k == SV_UNDEF ? NULL : sema_to_tensor(s, cv, at);
    c = per_element(s, sema_to_bool(s, c, at), "the condition", at);
    if (!c)
        c = sema_pred_widen(s, sema_const(s, type_scalar(DT_I1), sv_bool(false), at), at);
    *next = mask_and(s, mask, c, at);
    if ((*next)->type.rank == 0)
        return *next;
    SVal any = sema_reduce(s, "max", sema_cast(s, *next, DT_I32, at), (SVal){.k = SV_VOID}, false,
                           (SVal){.k = SV_VOID}, at);
    return any.k == SV_TENSOR ? sema_to_bool(s, any.v, at) : NULL;
}

/* `a if cond else b` on an element's value: each side is evaluated for
 * every element, so each under its elements' mask (a load or store on one
 * side is refused), then selected per element. */
SVal sema_pred_ifexp(Sema *s, const Node *n, IrValue *cond)
{
    SemaPred *p = s->pred;
    IrValue *outer = p->mask;
    IrValue *c = per_element(s, sema_to_bool(s, cond, n->b->span), "the condition", n->b->span);
    if (!c)
        return undef(NULL);
    p->mask = mask_and(s, outer, c, n->span);
    SVal a = sema_eval(s, n->a);
    p->mask = mask_and(s, outer, mask_not(s, c, n->span), n->span);
    SVal b = sema_eval(s, n->c);
    p->mask = outer;
    if (a.k == SV_UNDEF || b.k == SV_UNDEF)
        return a.k == SV_UNDEF ? a : b;
    SVal args[3] = {sv_tensor(c), a, b};
    Span at[3] = {n->b->span, n->a->span, n->c->span};
    CallArgs ca = {.pos = args, .pos_at = at, .npos = 3, .at = n->span};
    return sema_call_builtin(s, "tl", "where", (SVal){.k = SV_VOID}, &ca);
}

/* After a per-element loop body: elements that were not looping keep
 * their values. */
void sema_pred_loop_yields(Sema *s, IrValue *mask, IrValue **y, IrValue *const *args, int n,
                           Span at)
{
    for (int i = 0; i < n; i++)
        if (y[i] != args[i] && type_eq(y[i]->type, args[i]->type) &&
            per_element(s, y[i], "a variable the loop changes", at))
            y[i] = ir_build(&s->b, IR_SELECT, at, (IrValue *[]){mask, y[i], args[i]}, 3,
                            &y[i]->type, 1)
                       ->results[0];
}

static Node *new_node(Sema *s, NodeKind k, Span at)
{
    Node *n = arena_alloc(s->a, sizeof(Node));
    if (n) {
        memset(n, 0, sizeof *n);
        n->kind = k;
        n->span = at;
    }
    return n;
}

static Node *name_node(Sema *s, const char *name, Span at)
{
    Node *n = new_node(s, N_NAME, at);
    if (n)
        n->name = name;
    return n;
}

/* `while i < ub: body; i += step` (i > ub for a negative step), the loop
 * a for over element values runs: its bounds live in hidden names. */
static Node *for_as_while(Sema *s, const Node *n, const char *ub, const char *step, bool down)
{
    Node *w = new_node(s, N_WHILE, n->span), *cmp = new_node(s, N_COMPARE, n->b->span);
    Node *inc = new_node(s, N_AUGASSIGN, n->span);
    Node **items = arena_alloc(s->a, sizeof(Node *) * (size_t)(n->list.len + 1));
    OpKind *ops = arena_alloc(s->a, sizeof(OpKind));
    Node **pair = arena_alloc(s->a, sizeof(Node *) * 2);
    if (!w || !cmp || !inc || !items || !ops || !pair)
        return NULL;
    pair[0] = name_node(s, n->a->name, n->a->span);
    pair[1] = name_node(s, ub, n->b->span);
    *ops = down ? OP_GT : OP_LT;
    cmp->list = (NodeList){pair, 2};
    cmp->cmp_ops = ops;
    inc->op = OP_ADD;
    inc->a = name_node(s, n->a->name, n->a->span);
    inc->b = name_node(s, step, n->span);
    for (int i = 0; i < n->list.len; i++)
        items[i] = n->list.items[i];
    items[n->list.len] = inc;
    w->a = cmp;
    w->list = (NodeList){items, n->list.len + 1};
    return w;
}

/* range(lb, ub, step) with bounds that are element values: the index is
 * per element too, so the loop runs as a per-element while. The step must
 * be a constexpr (its sign says which way the loop counts). Returns false
 * when every bound is a constexpr: an ordinary loop. */
bool sema_pred_for(Sema *s, const Node *n, const CallArgs *ca)
{
    SVal v[3] = {sv_int(0), sv_int(0), sv_int(1)};
    bool runtime = false;
    if (ca->npos < 1 || ca->npos > 3)
        return false; /* the ordinary loop reports it */
    for (int i = 0; i < ca->npos; i++) {
        v[ca->npos == 1 ? 1 : i] = ca->pos[i];
        runtime |= ca->pos[i].k == SV_TENSOR;
    }
    if (!runtime)
        return false;
    int64_t step;
    if (!sema_const_int(s, v[2], ca->at, "the step of a loop over element values", &step))
        return true;
    if (step == 0 || n->a->kind != N_NAME) {
        sema_err(s, step ? n->a->span : ca->at,
                 step ? "a loop over element values needs one name as its target"
                      : "range step must not be zero");
        return true;
    }
    IrValue *lb = sema_to_tensor(s, v[0], ca->at), *ub = sema_to_tensor(s, v[1], ca->at);
    if (!lb || !ub || !sema_broadcast_pair(s, &lb, &ub, ca->at))
        return true;
    if (!dtype_is_int(lb->type.dt) || !dtype_is_int(ub->type.dt)) {
        sema_err(s, ca->at, "range bounds must be integers, got %s and %s",
                 sema_type_str(s, lb->type), sema_type_str(s, ub->type));
        return true;
    }
    const char *ubn = arena_printf(s->a, "$ub%d.%d", n->span.line, n->span.col);
    const char *stepn = arena_printf(s->a, "$step%d.%d", n->span.line, n->span.col);
    Node *w = for_as_while(s, n, ubn, stepn, step < 0);
    if (!w)
        return true;
    Span *old_at = NULL;
    SVal *old = env_lookup(s->env, n->a->name, &old_at);
    Span was_at = old ? *old_at : n->span;
    SVal was = old ? *old
                   : undef(arena_printf(s->a,
                                        "'%s' is defined inside the for loop at line %d "
                                        "and cannot be used after it; define it before "
                                        "the loop",
                                        n->a->name, n->span.line));
    env_set(s, s->env, ubn, sv_tensor(ub), n->span);
    env_set(s, s->env, stepn, sv_int(step), n->span);
    env_set(s, s->env, n->a->name, sv_tensor(lb), n->a->span);
    sema_exec_while(s, w);
    /* as after any tk for loop, the index keeps its value from before */
    env_set(s, s->env, n->a->name, was, was_at);
    return true;
}

/* Stores, atomics, loads, prints and asserts act on every element of the
 * block; under a per-element condition some of those elements are not on
 * the statement's path, so the statement is refused rather than done for
 * them (or, for a load, done at addresses their path never computed). */
bool sema_pred_effect_ok(Sema *s, const char *what, Span at)
{
    if (!s->pred || (!s->pred->mask && !s->pred->done && !s->pred->nested))
        return true;
    sema_err(s, at,
             "%s under a condition on an element's value in tl.map_elementwise's function "
             "is not supported (it would act on every element); move it out of the "
             "function and use a mask",
             what);
    return false;
}
