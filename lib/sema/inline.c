/* sema/inline.c: calls. A @jit helper is inlined: its body runs in a fresh
 * environment whose parameters are the argument values themselves, so
 * constexpr arguments stay compile-time inside the callee. Also the
 * argument binder that every builtin uses (arity, keywords, defaults). */
#include <string.h>

#include "sema/spec.h"

SVal sema_call(Sema *s, SVal callee, CallArgs *args)
{
    switch (callee.k) {
    case SV_UNDEF: return callee;
    case SV_FUNC: return sema_inline(s, callee.fn, args);
    case SV_BUILTIN:
        if (callee.ns == sema_constexpr_fn_ns)
            return sema_call_constexpr_fn(s, callee, args);
        return sema_call_builtin(s, callee.ns, callee.s,
                                 callee.n ? callee.items[0] : (SVal){.k = SV_VOID}, args);
    default: break;
    }
    return sema_err(s, args->at, "%s is not callable", sv_describe(s, callee));
}

static bool has_jit(const Node *fn)
{
    for (int i = 0; i < fn->list2.len; i++) {
        const Node *d = fn->list2.items[i];
        if (d->kind == N_CALL)
            d = d->a;
        if ((d->kind == N_NAME || d->kind == N_ATTR) && !strcmp(d->name, "jit"))
            return true;
    }
    return false;
}

static bool check_recursion(Sema *s, const Node *fn, Span at)
{
    for (int i = 0; i < s->depth; i++)
        if (s->stack[i] == fn) {
            StrBuf chain;
            sb_init(&chain);
            for (int k = i; k < s->depth; k++)
                sb_printf(&chain, "%s -> ", s->stack[k]->name);
            sb_puts(&chain, fn->name);
            sema_err(s, at, "recursion is not supported: %s", chain.data ? chain.data : fn->name);
            sb_free(&chain);
            return false;
        }
    if (s->depth >= TK_ARRAY_LEN(s->stack)) {
        sema_err(s, at, "helper calls nest deeper than %d", TK_ARRAY_LEN(s->stack));
        return false;
    }
    return true;
}

/* Binds the call's arguments to fn's parameters in a new environment. */
static bool bind_args(Sema *s, const Node *fn, CallArgs *ca, Env *env)
{
    int np = fn->list.len;
    SVal *vals = arena_alloc(s->a, sizeof(SVal) * (size_t)(np + 1));
    bool *set = arena_alloc(s->a, sizeof(bool) * (size_t)(np + 1));
    if (ca->npos > np) {
        sema_err(s, ca->at, "'%s' takes %d argument%s but %d were given", fn->name, np,
                 np == 1 ? "" : "s", ca->npos);
        return false;
    }
    for (int i = 0; i < ca->npos; i++) {
        vals[i] = ca->pos[i];
        set[i] = true;
    }
    for (int k = 0; k < ca->nkw; k++) {
        int i = 0;
        while (i < np && strcmp(fn->list.items[i]->name, ca->kw[k]))
            i++;
        if (i == np) {
            sema_err(s, ca->kw_at[k], "'%s' got an unknown keyword argument '%s'", fn->name,
                     ca->kw[k]);
            return false;
        }
        if (set[i]) {
            sema_err(s, ca->kw_at[k], "'%s' got multiple values for argument '%s'", fn->name,
                     ca->kw[k]);
            return false;
        }
        vals[i] = ca->kwv[k];
        set[i] = true;
    }
    for (int i = 0; i < np; i++) {
        const Node *p = fn->list.items[i];
        if (!set[i]) {
            if (!p->b) {
                sema_err(s, ca->at, "'%s' is missing the argument '%s'", fn->name, p->name);
                return false;
            }
            Env *saved = s->env;
            s->env = s->globals; /* defaults are evaluated in module scope, as in Python */
            vals[i] = sema_eval(s, p->b);
            s->env = saved;
        }
        /* A helper's `tl.constexpr` annotation is not checked: Triton
         * decides what is constexpr from the arguments (tutorial 06 passes
         * tensors to offs_m: tl.constexpr), and a use that needs one says
         * so where it is. */
        env_set(s, env, p->name, vals[i], p->span);
    }
    return true;
}

/* The ops of the helper's body go into a new inline scope of the kernel
 * (for line tables); returns the scope to restore. */
static int enter_scope(Sema *s, const Node *fn, Span call)
{
    if (!s->f)
        return 0;
    int saved = s->f->cur_scope;
    int scope = ir_scope_add(s->f, s->src, fn->name, fn->span.line, call);
    if (scope)
        s->f->cur_scope = scope;
    return saved;
}

SVal sema_inline(Sema *s, const Node *fn, CallArgs *ca)
{
    if (!has_jit(fn))
        return sema_err(s, ca->at,
                        "'%s' is not a @triton.jit function and cannot be called "
                        "from a kernel",
                        fn->name);
    /* a function of another file of the package runs in that file's globals */
    return sema_inline_body(s, fn, sema_module_of(s, fn), ca);
}

SVal sema_inline_body(Sema *s, const Node *fn, const Node *owner, CallArgs *ca)
{
    if (!check_recursion(s, fn, ca->at))
        return (SVal){.k = SV_UNDEF};
    SemaScope scope = sema_enter_module(s, owner);
    int errors = s->d->errors;
    Env env = {0};
    if (!bind_args(s, fn, ca, &env)) {
        sema_leave_module(s, scope);
        return (SVal){.k = SV_UNDEF};
    }
    Env *saved_env = s->env;
    bool saved_ret = s->returned;
    int saved_loops = s->loop_depth;
    s->env = &env;
    s->returned = false;
    s->loop_depth = 0;
    s->stack[s->depth++] = fn;
    int saved_scope = enter_scope(s, fn, ca->at);
    SemaPred caller;
    if (s->pred) /* in tl.map_elementwise: the callee's returns are per element */
        sema_pred_enter(s, &caller);
    sema_exec(s, &fn->list3, 0, NULL);
    if (s->f)
        s->f->cur_scope = saved_scope;
    s->depth--;
    SVal *r = env_lookup(&env, "$ret", NULL);
    SVal ret = s->pred ? sema_pred_leave(s, &caller) : r ? *r : sv_none();
    s->env = saved_env;
    s->returned = saved_ret;
    s->loop_depth = saved_loops;
    sema_leave_module(s, scope);
    if (owner != s->module && s->d->errors > errors)
        diag_report(s->d, DIAG_NOTE, ca->at, "in '%s' of %s, called here", fn->name,
                    sema_module_file(owner));
    if (ret.k == SV_UNDEF && ret.s)
        return sema_err(s, ca->at, "in '%s': %s", fn->name, ret.s);
    return ret;
}

SVal sema_inline_values(Sema *s, const Node *fn, const SVal *vals, int n, Span at)
{
    CallArgs ca = {.npos = n, .at = at};
    ca.pos = arena_alloc(s->a, sizeof(SVal) * (size_t)(n + 1));
    ca.pos_at = arena_alloc(s->a, sizeof(Span) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        ca.pos[i] = vals[i];
        ca.pos_at[i] = at;
    }
    return sema_inline(s, fn, &ca);
}
