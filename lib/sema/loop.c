/* sema/loop.c: for and while in structured form. Loops carry the names
 * their body assigns that exist before the loop, item by item through
 * tuples, block pointers and descriptors (their dtype and shape may not
 * change).
 * tl.static_range and constexpr tuples unroll. In tl.map_elementwise's
 * function a `while` also carries the mask of the elements still
 * looping. Shares the region helpers of sema/flow.c. */
#include <string.h>

#include "sema/spec.h"

static SVal undef(const char *why) { return (SVal){.k = SV_UNDEF, .s = why}; }

static bool materializable(SVal v) { return v.k == SV_TENSOR || sv_is_num(v); }

/* ---- names a loop body assigns ------------------------------------------------------ */

static void add_name(Sema *s, PtrVec *v, const char *name)
{
    for (int i = 0; i < v->len; i++)
        if (strcmp(v->items[i], name) == 0)
            return;
    vec_push(s->a, v, (void *)name);
}

static void target_names(Sema *s, PtrVec *v, const Node *t)
{
    if (t->kind == N_NAME)
        add_name(s, v, t->name);
    else if (t->kind == N_TUPLE || t->kind == N_LIST)
        for (int i = 0; i < t->list.len; i++)
            target_names(s, v, t->list.items[i]);
}

static void assigned_names(Sema *s, PtrVec *v, const NodeList *l)
{
    for (int i = 0; i < l->len; i++) {
        const Node *n = l->items[i];
        switch (n->kind) {
        case N_ASSIGN:
            for (int t = 0; t < n->list.len; t++)
                target_names(s, v, n->list.items[t]);
            break;
        case N_ANNASSIGN:
        case N_AUGASSIGN: target_names(s, v, n->a); break;
        case N_IF:
            assigned_names(s, v, &n->list);
            assigned_names(s, v, &n->list2);
            break;
        case N_FOR:
            target_names(s, v, n->a);
            assigned_names(s, v, &n->list);
            break;
        case N_WHILE: assigned_names(s, v, &n->list); break;
        default: break;
        }
    }
}

/* The loop-carried values: names assigned in the body and bound before the
 * loop to a tensor, a number, a tuple of those (nested too, one leaf per
 * tensor or number, as Triton flattens a tuple into its loop's values), or
 * a block pointer, alone or in such a tuple (one leaf per offset:
 * tl.advance moves nothing else). */
typedef struct Carried {
    int n;              /* leaves */
    const char **names; /* the variable of each leaf */
    const int **path;   /* the leaf's place in its variable, item by item */
    int *depth;         /* the path's length; 0: the variable itself */
    bool *offset;       /* the leaf is a block pointer's offset */
    IrValue **init;
    SVal *before; /* the variable's value before the loop */
} Carried;

/* The items of a block pointer that a loop carries: its offsets. */
static int first_carried(SVal v) { return v.k == SV_BLOCKPTR ? 1 + 2 * v.ty.rank : 0; }

/* Whether item k of struct v is one of a loop's values: a block pointer's
 * offsets; a descriptor's parts that are runtime values (those given as
 * numbers, a last stride of 1 say, stay numbers: a loop may not change
 * them, as it may not change the block shape). */
static bool item_carried(SVal v, int k)
{
    return k >= first_carried(v) && (v.k != SV_DESC || v.items[k].k == SV_TENSOR);
}

static bool tuple_carriable(SVal v)
{
    if (v.k == SV_BLOCKPTR || v.k == SV_DESC)
        return true;
    if (v.k != SV_TUPLE || v.n == 0)
        return false;
    for (int i = 0; i < v.n; i++)
        if (!materializable(v.items[i]) && !tuple_carriable(v.items[i]))
            return false;
    return true;
}

static int count_leaves(SVal v)
{
    if (!sv_is_struct(v))
        return 1;
    int n = 0;
    for (int k = first_carried(v); k < v.n; k++)
        n += item_carried(v, k) ? count_leaves(v.items[k]) : 0;
    return n;
}

static void add_leaf(Sema *s, Carried *c, const char *name, const int *path, int depth, bool offset,
                     SVal v, Span at, SVal whole)
{
    IrValue *x = sema_to_tensor(s, v, at);
    if (x && s->pred) /* an element's variable may become its own per element */
        x = sema_pred_widen(s, x, at);
    if (!x)
        return;
    c->before[c->n] = whole;
    c->names[c->n] = name;
    c->path[c->n] = path;
    c->depth[c->n] = depth;
    c->offset[c->n] = offset;
    c->init[c->n++] = x;
}

/* Adds the leaves of v, which lies at path (of depth items) in whole. */
static void add_leaves(Sema *s, Carried *c, const char *name, const int *path, int depth,
                       bool offset, SVal v, Span at, SVal whole)
{
    if (!sv_is_struct(v)) {
        add_leaf(s, c, name, path, depth, offset, v, at, whole);
        return;
    }
    for (int k = first_carried(v); k < v.n; k++) {
        if (!item_carried(v, k))
            continue;
        int *p = arena_alloc(s->a, sizeof(int) * (size_t)(depth + 1));
        if (depth)
            memcpy(p, path, sizeof(int) * (size_t)depth);
        p[depth] = k;
        add_leaves(s, c, name, p, depth + 1, v.k == SV_BLOCKPTR, v.items[k], at, whole);
    }
}

static Carried carried_names(Sema *s, const NodeList *body, const Node *skip_target, Span at)
{
    PtrVec names = {0};
    assigned_names(s, &names, body);
    Carried c = {0};
    int cap = 2; /* room for a per-element loop's mask */
    for (int i = 0; i < names.len; i++) {
        SVal *v = env_lookup(s->env, names.items[i], NULL);
        cap += v && tuple_carriable(*v) ? count_leaves(*v) : 1;
    }
    c.names = arena_alloc(s->a, sizeof(char *) * (size_t)cap);
    c.path = arena_alloc(s->a, sizeof(int *) * (size_t)cap);
    c.depth = arena_alloc(s->a, sizeof(int) * (size_t)cap);
    c.offset = arena_alloc(s->a, sizeof(bool) * (size_t)cap);
    c.init = arena_alloc(s->a, sizeof(IrValue *) * (size_t)cap);
    c.before = arena_alloc(s->a, sizeof(SVal) * (size_t)cap);
    for (int i = 0; i < names.len; i++) {
        const char *name = names.items[i];
        if (skip_target && skip_target->kind == N_NAME && !strcmp(skip_target->name, name))
            continue;
        SVal *v = env_lookup(s->env, name, NULL);
        if (v && (materializable(*v) || tuple_carriable(*v)))
            add_leaves(s, &c, name, NULL, 0, false, *v, at, *v);
    }
    return c;
}

/* A copy of v whose item arrays (nested ones too) are its own. */
static SVal copy_struct(Sema *s, SVal v)
{
    if (!sv_is_struct(v))
        return v;
    SVal t = v;
    t.items = sv_tuple(s, v.items, v.n).items;
    for (int k = 0; k < v.n; k++)
        t.items[k] = copy_struct(s, v.items[k]);
    return t;
}

/* The item of v at path, or an SV_UNDEF where v has no such item. */
static SVal at_path(SVal v, const int *path, int depth)
{
    for (int d = 0; d < depth; d++) {
        if (!sv_is_struct(v) || path[d] >= v.n)
            return (SVal){.k = SV_UNDEF};
        v = v.items[path[d]];
    }
    return v;
}

/* Binds every carried variable to vals (one per leaf), rebuilding tuples. */
static void bind_carried(Sema *s, Env *env, const Carried *c, IrValue **vals, Span at)
{
    for (int i = 0; i < c->n;) {
        int j = i + 1;
        if (c->depth[i] == 0) {
            env_set(s, env, c->names[i], sv_tensor(vals[i]), at);
        } else {
            while (j < c->n && c->names[j] == c->names[i])
                j++;
            SVal v = copy_struct(s, c->before[i]);
            for (int k = i; k < j; k++) {
                SVal *slot = &v;
                for (int d = 0; d < c->depth[k]; d++)
                    slot = &slot->items[c->path[k][d]];
                *slot = sv_tensor(vals[k]);
            }
            sema_desc_contract(s, &v, at);
            env_set(s, env, c->names[i], v, at);
        }
        i = j;
    }
}

/* The name of a place in variable `name` (whose value is v), as `st[0][1]`
 * or `bp.offset0`. */
static const char *place_name(Sema *s, const char *name, SVal v, const int *path, int depth)
{
    const char *r = name;
    for (int d = 0; d < depth; d++) {
        int k = path[d], rank = v.ty.rank;
        if (v.k == SV_BLOCKPTR)
            r = arena_printf(s->a, "%s.offset%d", r, k - first_carried(v));
        else if (v.k == SV_DESC)
            r = k == 0      ? arena_printf(s->a, "%s.base", r)
                : k <= rank ? arena_printf(s->a, "%s.shape%d", r, k - 1)
                            : arena_printf(s->a, "%s.stride%d", r, k - 1 - rank);
        else
            r = arena_printf(s->a, "%s[%d]", r, k);
        v = v.items[path[d]];
    }
    return r;
}

static const char *leaf_name(Sema *s, const Carried *c, int i)
{
    return place_name(s, c->names[i], c->before[i], c->path[i], c->depth[i]);
}

/* Whether block pointer or descriptor v has the frame of `was`: what a
 * loop does not carry (a block pointer's base, shape and strides; a
 * descriptor's parts given as numbers), the block shape and dtype, the
 * padding; and, with `align`, where `was` states the alignment contract, v
 * does too. */
static bool same_frame(SVal v, SVal was, bool align)
{
    if (v.k != was.k || v.n != was.n || !type_eq(v.ty, was.ty))
        return false;
    int bits = v.k == SV_BLOCKPTR ? ~0 : align ? DESC_NAN | (was.i & DESC_ALIGNED) : DESC_NAN;
    if ((v.i & bits) != (was.i & bits))
        return false;
    for (int k = 0; k < v.n; k++)
        if (!item_carried(was, k) && !sema_same_val(v.items[k], was.items[k]))
            return false;
    return true;
}

/* Whether v, the value a carried variable has at the end of the body, keeps
 * the tuples and block pointers it had before the loop (`was`, at path in
 * the variable); if not, reports the first place that changes. */
static bool same_structure(Sema *s, const char *name, SVal whole, int *path, int depth, SVal v,
                           SVal was, Span at)
{
    if (!sv_is_struct(was))
        return true; /* a leaf: checked against its carried type */
    const char *where = place_name(s, name, whole, path, depth);
    if (was.k == SV_BLOCKPTR && !same_frame(v, was, true)) {
        sema_err(s, at,
                 "block pointer '%s' becomes %s inside the loop; a loop may move it with "
                 "tl.advance but not change its base, shape, strides or block shape",
                 where, sv_describe(s, v));
        return false;
    }
    if (was.k == SV_DESC && !same_frame(v, was, true)) {
        bool other = same_frame(v, was, false); /* all but the alignment */
        sema_err(s, at,
                 other ? "tensor descriptor '%s' is made in the kernel before the loop and is %s "
                         "(a kernel argument) inside it; make both in the kernel"
                       : "tensor descriptor '%s' becomes %s inside the loop; a loop may give it "
                         "a new base, shape or strides but must keep its dtype, block shape, "
                         "padding and the parts given as numbers",
                 where, sv_describe(s, v));
        return false;
    }
    if (was.k == SV_TUPLE && (v.k != SV_TUPLE || v.n != was.n)) {
        sema_err(s, at, "loop-carried tuple '%s' changes from %d items to %s", where, was.n,
                 sv_describe(s, v));
        return false;
    }
    for (int k = first_carried(was); k < was.n; k++) {
        if (!item_carried(was, k))
            continue;
        path[depth] = k;
        if (!same_structure(s, name, whole, path, depth + 1, v.items[k], was.items[k], at))
            return false;
    }
    return true;
}

/* After the body: the values to yield, checked against the carried types;
 * names new in the body are poisoned for use after the loop. */
static IrValue **loop_yields(Sema *s, Carried *c, Env *before, IrBlock *blk, IrValue **args,
                             const char *what, int line)
{
    IrValue **y = arena_alloc(s->a, sizeof(IrValue *) * (size_t)(c->n + 1));
    bool kept = true; /* the current variable keeps its structure */
    for (int i = 0; i < c->n; i++) {
        Span *at = NULL;
        SVal *v = env_lookup(s->env, c->names[i], &at);
        y[i] = args[i];
        if (!v || v->k == SV_UNDEF)
            continue;
        SVal leaf = *v;
        if (c->depth[i] > 0) {
            if (i == 0 || c->names[i - 1] != c->names[i]) {
                int deepest = 0;
                for (int j = i; j < c->n && c->names[j] == c->names[i]; j++)
                    deepest = c->depth[j] > deepest ? c->depth[j] : deepest;
                int *path = arena_alloc(s->a, sizeof(int) * (size_t)deepest);
                kept = same_structure(s, c->names[i], c->before[i], path, 0, *v, c->before[i], *at);
            }
            if (!kept)
                continue;
            leaf = at_path(*v, c->path[i], c->depth[i]);
        }
        if (!materializable(leaf)) {
            sema_err(s, *at, "loop-carried variable '%s' becomes %s inside the loop",
                     leaf_name(s, c, i), sv_describe(s, leaf));
            continue;
        }
        IrValue *x = sema_value_in(s, blk, leaf, *at);
        if (x && !type_eq(x->type, c->init[i]->type)) {
            sema_err(s, *at, "loop-carried variable '%s' changes type from %s to %s",
                     leaf_name(s, c, i), sema_type_str(s, c->init[i]->type),
                     sema_type_str(s, x->type));
            continue;
        }
        if (x)
            y[i] = x;
    }
    for (int i = 0; i < s->env->n; i++) {
        const Binding *b = &s->env->b[i];
        SVal *old = env_lookup(before, b->name, NULL);
        if (b->name[0] == '$')
            continue;
        if (!old)
            env_set(s, before, b->name,
                    undef(arena_printf(s->a,
                                       "'%s' is defined inside the %s loop at line %d and "
                                       "cannot be used after it; define it before the loop",
                                       b->name, what, line)),
                    b->at);
        else if (old->k != SV_UNDEF && !materializable(*old) && !tuple_carriable(*old) &&
                 !sema_same_val(*old, b->val) && b->val.k != SV_UNDEF)
            sema_err(s, b->at, "'%s' (%s) cannot be reassigned inside a loop", b->name,
                     sv_describe(s, *old));
    }
    return y;
}

/* A block pointer's offset that the body does not move is the same value in
 * every iteration: its uses read the initial value, so the slot is dead
 * (pass_dce drops it) and address analysis sees a loop-invariant offset.
 * Offsets that only grow from a start >= 0 get masks with no lower bound
 * (sema_blockptr_loop_done). */
static void blockptr_offsets(Sema *s, Carried *c, IrBlock *body, IrValue **args, IrValue **y)
{
    IrValue **a = arena_alloc(s->a, sizeof(IrValue *) * (size_t)(3 * c->n + 1));
    IrValue **init = a + c->n, **yv = a + 2 * c->n;
    int n = 0;
    for (int i = 0; i < c->n; i++) {
        if (!c->offset[i])
            continue;
        if (y[i] == args[i]) {
            ir_replace_uses(body, args[i], c->init[i]);
            y[i] = c->init[i];
            continue;
        }
        a[n] = args[i];
        init[n] = c->init[i];
        yv[n++] = y[i];
    }
    sema_blockptr_loop_done(s, body, a, init, yv, n);
}

/* The values the variables have after the loop: its results, or for an
 * invariant offset its initial value. */
static IrValue **after_loop(Sema *s, const Carried *c, IrOp *op, IrValue **y)
{
    IrValue **r = arena_alloc(s->a, sizeof(IrValue *) * (size_t)(c->n + 1));
    for (int i = 0; i < c->n; i++)
        r[i] = y[i] == c->init[i] && c->offset[i] ? c->init[i] : op->results[i];
    return r;
}

/* ---- for -------------------------------------------------------------------------- */

/* Bodies unrolled per kernel, all static_range loops together: nested
 * loops of 4096 each would otherwise run 16M bodies and never finish. */
#define SEMA_UNROLL_BUDGET 65536

static void unroll(Sema *s, const Node *n, const SVal *vals, int count)
{
    s->loop_depth++;
    for (int i = 0; i < count && !s->returned; i++) {
        if (++s->unrolled > SEMA_UNROLL_BUDGET) {
            if (s->unrolled == SEMA_UNROLL_BUDGET + 1)
                sema_err(s, n->span,
                         "static_range loops unroll more than %d bodies in "
                         "this kernel; use range() for the outer loops",
                         SEMA_UNROLL_BUDGET);
            break;
        }
        sema_assign(s, n->a, vals[i], n->span);
        sema_exec(s, &n->list, 0, NULL);
    }
    s->loop_depth--;
}

/* In a @triton.constexpr_function: Python's `for` over range() or a tuple,
 * run here, where a `return` may leave the loop (and the function). */
static void const_for(Sema *s, const Node *n, SVal it, CallArgs *ca)
{
    int64_t v[3] = {0, 0, 1};
    if (it.k != SV_TUPLE) {
        if (ca->npos < 1 || ca->npos > 3 || ca->nkw) {
            sema_err(s, ca->at, "range takes 1 to 3 positional arguments here");
            return;
        }
        for (int i = 0; i < ca->npos; i++)
            if (!sema_const_int(s, ca->pos[i], ca->pos_at[i], "a range bound",
                                &v[ca->npos == 1 ? 1 : i]))
                return;
        if (v[2] == 0) {
            sema_err(s, ca->at, "range step must not be zero");
            return;
        }
    }
    __int128 count = it.k == SV_TUPLE ? it.n
        : v[2] > 0                    ? ((__int128)v[1] - v[0] + v[2] - 1) / v[2]
                                      : ((__int128)v[0] - v[1] - v[2] - 1) / -v[2];
    for (__int128 i = 0; i < count && !s->returned; i++) {
        if (++s->unrolled > SEMA_UNROLL_BUDGET) {
            sema_err(s, n->span, "compile-time loops run more than %d bodies in this kernel",
                     SEMA_UNROLL_BUDGET);
            return;
        }
        sema_assign(s, n->a, it.k == SV_TUPLE ? it.items[i] : sv_int((int64_t)(v[0] + i * v[2])),
                    n->span);
        sema_exec(s, &n->list, 0, NULL);
    }
}

/* `while` in a @triton.constexpr_function: its condition is compile-time. */
static void const_while(Sema *s, const Node *n)
{
    while (!s->returned) {
        SVal c = sema_eval(s, n->a);
        bool go;
        if (c.k == SV_UNDEF || !sema_truth(s, c, n->a->span, &go) || !go)
            return;
        if (++s->unrolled > SEMA_UNROLL_BUDGET) {
            sema_err(s, n->span, "compile-time loops run more than %d bodies in this kernel",
                     SEMA_UNROLL_BUDGET);
            return;
        }
        sema_exec(s, &n->list, 0, NULL);
    }
}

static bool static_range(Sema *s, const Node *n, CallArgs *ca)
{
    int64_t v[3] = {0, 0, 1};
    if (ca->npos < 1 || ca->npos > 3) {
        sema_err(s, ca->at, "static_range takes 1 to 3 arguments, got %d", ca->npos);
        return false;
    }
    bool end_kw = false; /* static_range(arg1, arg2=, step=), as Triton's */
    for (int i = 0; i < ca->nkw; i++)
        end_kw |= ca->npos == 1 && !strcmp(ca->kw[i], "arg2");
    for (int i = 0; i < ca->npos; i++)
        if (!sema_const_int(s, ca->pos[i], ca->pos_at[i], "a static_range bound",
                            &v[ca->npos == 1 && !end_kw ? 1 : i]))
            return false;
    for (int i = 0; i < ca->nkw; i++) {
        const char *k = ca->kw[i];
        int slot = !strcmp(k, "step") && ca->npos < 3 ? 2 : !strcmp(k, "arg2") && end_kw ? 1 : -1;
        if (slot < 0) {
            sema_err(s, ca->kw_at[i], "static_range got an unexpected keyword argument '%s'", k);
            return false;
        }
        if (!sema_const_int(s, ca->kwv[i], ca->kw_at[i], "a static_range bound", &v[slot]))
            return false;
    }
    if (v[2] == 0) {
        sema_err(s, ca->at, "static_range step must not be zero");
        return false;
    }
    /* in 128 bits: static_range(-2**63, 2**63 - 1) overflows 64 */
    __int128 lo = v[0], hi = v[1], step = v[2];
    __int128 wide = step > 0 ? (hi - lo + step - 1) / step : (lo - hi - step - 1) / -step;
    if (wide > 4096) {
        sema_err(s, ca->at, "static_range unrolls %llu iterations; the limit is 4096",
                 (unsigned long long)wide);
        return false;
    }
    /* an empty range counts below zero, maybe below -2**63 */
    int64_t count = wide > 0 ? (int64_t)wide : 0;
    SVal *vals = arena_alloc(s->a, sizeof(SVal) * (size_t)(count > 0 ? count : 1));
    /* each value lies between the bounds, but i * step alone may not fit */
    for (int64_t i = 0; i < count; i++)
        vals[i] = sv_int((int64_t)(lo + i * step));
    unroll(s, n, vals, count > 0 ? (int)count : 0);
    return true;
}

/* range / tl.range arguments: lb, ub, step as tensors of one int type. A
 * negative constexpr step counts j = 0 .. cdiv(lb - ub, -step) upwards and
 * *down (the original lb and -step) lets the body compute i = lb - j * -step.
 * *flatten, *ws: tl.range(..., flatten=True, warp_specialize=True). */
static bool range_bounds(Sema *s, CallArgs *ca, IrValue **b, int64_t *stages, SVal *down,
                         int64_t *flatten, int64_t *ws)
{
    SVal v[3] = {sv_int(0), sv_int(0), sv_int(1)};
    if (ca->npos < 1 || ca->npos > 3) {
        sema_err(s, ca->at, "range takes 1 to 3 arguments, got %d", ca->npos);
        return false;
    }
    for (int i = 0; i < ca->npos; i++)
        v[ca->npos == 1 ? 1 : i] = ca->pos[i];
    for (int i = 0; i < ca->nkw; i++) {
        const char *k = ca->kw[i];
        if (!strcmp(k, "step") && ca->npos < 3) { /* tl.range's own name for it */
            v[2] = ca->kwv[i];
        } else if (!strcmp(k, "num_stages")) { /* None: the kernel's, as no keyword */
            if (ca->kwv[i].k != SV_NONE &&
                !sema_const_int(s, ca->kwv[i], ca->kw_at[i], "num_stages", stages))
                return false;
        } else if (!strcmp(k, "flatten")) {
            if (ca->kwv[i].k != SV_NONE &&
                !sema_const_int(s, ca->kwv[i], ca->kw_at[i], "flatten", flatten))
                return false;
        } else if (!strcmp(k, "warp_specialize")) {
            if (ca->kwv[i].k != SV_NONE &&
                !sema_const_int(s, ca->kwv[i], ca->kw_at[i], "warp_specialize", ws))
                return false;
        } else if (strcmp(k, "loop_unroll_factor") && strcmp(k, "disallow_acc_multi_buffer")) {
            sema_err(s, ca->kw_at[i], "range got an unknown keyword argument '%s'", k);
            return false;
        }
    }
    if ((v[2].k == SV_INT || v[2].k == SV_BOOL) && v[2].i == 0) {
        sema_err(s, ca->at, "range step must not be zero");
        return false;
    }
    down[0] = down[1] = (SVal){.k = SV_VOID};
    if (v[2].k == SV_INT && v[2].i < 0) {
        SVal k = sv_int(-v[2].i);
        SVal span = sema_binary(s, OP_SUB, v[0], v[1], ca->at);
        SVal count = sema_binary(
            s, OP_FLOORDIV,
            sema_binary(s, OP_ADD, span, sema_binary(s, OP_SUB, k, sv_int(1), ca->at), ca->at), k,
            ca->at);
        if (count.k == SV_UNDEF)
            return false;
        if (count.k == SV_INT && count.i < 0)
            count = sv_int(0); /* Python's floor division; a runtime count <= 0 runs nothing */
        down[0] = v[0];
        down[1] = k;
        v[0] = sv_int(0);
        v[1] = count;
        v[2] = sv_int(1);
    }
    DType dt = DT_VOID;
    for (int i = 0; i < 3; i++) {
        DType d = v[i].k == SV_TENSOR ? v[i].v->type.dt : sema_literal_dtype(v[i]);
        if (v[i].k == SV_TENSOR && v[i].v->type.rank != 0) {
            sema_err(s, ca->at, "range bounds must be scalars, got %s", sv_describe(s, v[i]));
            return false;
        }
        if (!dtype_is_int(d) || (v[i].k != SV_TENSOR && !sv_is_num(v[i]))) {
            sema_err(s, ca->at, "range bounds must be integers, got %s", sv_describe(s, v[i]));
            return false;
        }
        dt = dt == DT_VOID ? d : sema_promote(s, dt, false, d, false, false, ca->at);
    }
    /* a loop counting down runs its index as start - i * step: the index
     * takes their type too (a start near -2**63 is an i64) */
    for (int i = 0; i < 2 && down[0].k != SV_VOID; i++)
        if (down[i].k != SV_TENSOR)
            dt = sema_promote(s, dt, false, sema_literal_dtype(down[i]), false, false, ca->at);
        else
            dt = sema_promote(s, dt, false, down[i].v->type.dt, false, false, ca->at);
    if (dt == DT_I1 || dt == DT_I8 || dt == DT_I16)
        dt = DT_I32;
    for (int i = 0; i < 3; i++) {
        if (v[i].k == SV_TENSOR)
            b[i] = sema_cast(s, v[i].v, dt, ca->at);
        else
            b[i] = sema_const(s, type_scalar(dt), v[i], ca->at);
    }
    return true;
}

void sema_exec_for(Sema *s, const Node *n)
{
    if (n->list2.len) {
        sema_err(s, n->span, "'for ... else' is not supported");
        return;
    }
    SVal it;
    CallArgs ca = {0};
    bool is_call = n->b->kind == N_CALL;
    it = sema_eval(s, is_call ? n->b->a : n->b);
    if (it.k == SV_UNDEF)
        return;
    if (!is_call || it.k != SV_BUILTIN) {
        if (is_call)
            it = sema_eval(s, n->b);
        if (it.k == SV_TUPLE && s->const_fn) {
            const_for(s, n, it, &ca);
            return;
        }
        if (it.k == SV_TUPLE) {
            unroll(s, n, it.items, it.n);
            return;
        }
        if (it.k != SV_UNDEF)
            sema_err(s, n->b->span,
                     "a for loop needs range(...), tl.range(...), "
                     "tl.static_range(...) or a constexpr tuple, got %s",
                     sv_describe(s, it));
        return;
    }
    if (!sema_eval_args(s, n->b, &ca))
        return;
    if (s->const_fn && (!strcmp(it.s, "range") || !strcmp(it.s, "static_range"))) {
        const_for(s, n, it, &ca);
        return;
    }
    if (!strcmp(it.s, "static_range")) {
        static_range(s, n, &ca);
        return;
    }
    if (strcmp(it.s, "range")) {
        sema_err(s, n->b->span,
                 "a for loop needs range(...), tl.range(...) or "
                 "tl.static_range(...), got %s",
                 sv_describe(s, it));
        return;
    }
    if (s->pred && sema_pred_for(s, n, &ca)) /* bounds that are element values */
        return;
    IrValue *b[3];
    int64_t stages = 0, flatten = 0, ws = 0;
    SVal down[2];
    if (!range_bounds(s, &ca, b, &stages, down, &flatten, &ws))
        return;
    Carried c = carried_names(s, &n->list, n->a, n->span);
    IrValue **ops = arena_alloc(s->a, sizeof(IrValue *) * (size_t)(c.n + 3));
    Type *types = arena_alloc(s->a, sizeof(Type) * (size_t)(c.n + 1));
    for (int i = 0; i < 3; i++)
        ops[i] = b[i];
    for (int i = 0; i < c.n; i++) {
        ops[3 + i] = c.init[i];
        types[i] = c.init[i]->type;
    }
    IrOp *tmp = ir_op_new(s->f, IR_FOR, n->span, ops, c.n + 3, NULL, 0);
    IrBlock *body = ir_op_add_region(s->f, tmp);
    const char *ivname = n->a->kind == N_NAME ? n->a->name : NULL;
    IrValue *iv = ir_block_add_arg(s->f, body, b[0]->type, ivname);
    IrValue **args = arena_alloc(s->a, sizeof(IrValue *) * (size_t)(c.n + 1));
    Env *outer = s->env;
    Env before = env_copy(s, outer);
    Env inner = env_copy(s, outer);
    s->env = &inner;
    for (int i = 0; i < c.n; i++)
        args[i] = ir_block_add_arg(s->f, body, types[i], leaf_name(s, &c, i));
    IrBuilder saved = s->b;
    s->b = (IrBuilder){.f = s->f, .blk = body};
    bind_carried(s, &inner, &c, args, n->span);
    SVal ivv = sv_tensor(iv);
    if (down[0].k != SV_VOID)
        ivv =
            sema_binary(s, OP_SUB, down[0], sema_binary(s, OP_MUL, ivv, down[1], n->span), n->span);
    sema_assign(s, n->a, ivv, n->span);
    s->loop_depth++;
    sema_exec(s, &n->list, 0, NULL);
    s->loop_depth--;
    IrValue **y = loop_yields(s, &c, &before, body, args, "for", n->span.line);
    blockptr_offsets(s, &c, body, args, y);
    sema_terminate(s, body, IR_YIELD, n->span, y, c.n);
    s->b = saved;
    s->env = outer;
    IrOp *op = sema_place_op(s, ir_op_new(s->f, IR_FOR, n->span, ops, c.n + 3, types, c.n), tmp);
    op->ival = stages;
    op->flags = (flatten ? IRF_FLATTEN : 0) | (ws ? IRF_WARP_SPEC : 0);
    for (int i = 0; i < c.n; i++)
        op->results[i]->name = leaf_name(s, &c, i);
    bind_carried(s, &before, &c, after_loop(s, &c, op, y), n->span);
    *outer = before;
}

/* ---- while ------------------------------------------------------------------------ */

/* A per-element loop (in tl.map_elementwise's function) also carries the
 * elements still looping, its last leaf. */
static void add_mask_leaf(Sema *s, Carried *c, Span at)
{
    IrValue *m = sema_pred_active(s);
    if (!m)
        m = sema_pred_widen(s, sema_const(s, type_scalar(DT_I1), sv_bool(true), at), at);
    c->before[c->n] = sv_tensor(m);
    c->names[c->n] = "$mask";
    c->depth[c->n] = 0;
    c->offset[c->n] = false;
    c->init[c->n++] = m;
}

void sema_exec_while(Sema *s, const Node *n)
{
    if (s->const_fn) {
        const_while(s, n);
        return;
    }
    Carried c = carried_names(s, &n->list, NULL, n->span);
    if (s->pred)
        add_mask_leaf(s, &c, n->span);
    Type *types = arena_alloc(s->a, sizeof(Type) * (size_t)(c.n + 1));
    for (int i = 0; i < c.n; i++)
        types[i] = c.init[i]->type;
    IrOp *tmp = ir_op_new(s->f, IR_WHILE, n->span, c.init, c.n, NULL, 0);
    IrBlock *cond_b = ir_op_add_region(s->f, tmp), *body = ir_op_add_region(s->f, tmp);
    IrValue **cargs = arena_alloc(s->a, sizeof(IrValue *) * (size_t)(c.n + 1));
    IrValue **bargs = arena_alloc(s->a, sizeof(IrValue *) * (size_t)(c.n + 1));
    Env *outer = s->env;
    Env before = env_copy(s, outer);
    Env cenv = env_copy(s, outer);
    IrBuilder saved = s->b;
    /* the condition, over the carried values */
    s->env = &cenv;
    s->b = (IrBuilder){.f = s->f, .blk = cond_b};
    for (int i = 0; i < c.n; i++)
        cargs[i] = ir_block_add_arg(s->f, cond_b, types[i], leaf_name(s, &c, i));
    bind_carried(s, &cenv, &c, cargs, n->span);
    IrValue *cond = NULL, *looping = NULL;
    SVal cv = s->pred ? (SVal){.k = SV_UNDEF} : sema_eval(s, n->a);
    if (s->pred)
        cond = sema_pred_loop_cond(s, n->a, cargs[c.n - 1], &looping);
    else if (cv.k == SV_TENSOR && cv.v->type.rank != 0)
        sema_err(s, n->a->span, "the condition of 'while' must be a scalar, got %s",
                 sema_type_str(s, cv.v->type));
    else if (cv.k != SV_UNDEF)
        cond = sema_to_bool(s, sema_to_tensor(s, cv, n->a->span), n->a->span);
    if (!cond)
        cond = sema_const(s, type_scalar(DT_I1), sv_bool(false), n->a->span);
    IrValue **cops = arena_alloc(s->a, sizeof(IrValue *) * (size_t)(c.n + 1));
    cops[0] = cond;
    for (int i = 0; i < c.n; i++)
        cops[1 + i] = cargs[i];
    if (looping)
        cops[c.n] = looping;
    sema_terminate(s, cond_b, IR_CONDITION, n->span, cops, c.n + 1);
    /* the body */
    Env benv = env_copy(s, outer);
    s->env = &benv;
    s->b = (IrBuilder){.f = s->f, .blk = body};
    for (int i = 0; i < c.n; i++)
        bargs[i] = ir_block_add_arg(s->f, body, types[i], leaf_name(s, &c, i));
    bind_carried(s, &benv, &c, bargs, n->span);
    IrValue *outer_mask = s->pred ? s->pred->mask : NULL;
    if (s->pred)
        s->pred->mask = bargs[c.n - 1];
    s->loop_depth++;
    sema_exec(s, &n->list, 0, NULL);
    s->loop_depth--;
    IrValue **y = loop_yields(s, &c, &before, body, bargs, "while", n->span.line);
    if (s->pred) {
        y[c.n - 1] = bargs[c.n - 1];
        sema_pred_loop_yields(s, bargs[c.n - 1], y, bargs, c.n - 1, n->span);
        s->pred->mask = outer_mask;
    }
    sema_terminate(s, body, IR_YIELD, n->span, y, c.n);
    s->b = saved;
    s->env = outer;
    IrOp *op = sema_place_op(s, ir_op_new(s->f, IR_WHILE, n->span, c.init, c.n, types, c.n), tmp);
    for (int i = 0; i < c.n; i++)
        op->results[i]->name = leaf_name(s, &c, i);
    bind_carried(s, &before, &c, op->results, n->span);
    *outer = before;
}
