/* sema/tune.c: the @triton.autotune and @triton.heuristics decorators (and
 * any other module's `autotune`, which libraries write around triton's
 * with the same arguments). Their
 * configs (constexpr values, num_warps, num_stages) and key names are read
 * into the KernelSig for the runtime's autotuner; heuristic lambdas are
 * evaluated on demand with the launch's argument values; reset_to_zero and
 * restore_value name the buffers the tuner resets around its timed runs.
 * Configs a conditional expression picks (`_A if IS_HOPPER else _B`) are
 * the arm the module's constants choose; one tk cannot decide is an error
 * at its condition.
 * Options that are Python (pre_hook, prune_configs_by, ..., and a
 * config's own pre_hook, which wins) are recorded,
 * never dropped: they change what tuning does, so the runtime refuses to
 * tune while one stands, and they change nothing a compile with the
 * constexprs given makes. A heuristic that host Python computes (a named
 * function) is never an error here either: the launch gives its constexpr. */
#include <string.h>

#include "sema/spec.h"

static const Node *kw_value(const Node *call, const char *name)
{
    for (int i = 0; i < call->list2.len; i++)
        if (!strcmp(call->list2.items[i]->name, name))
            return call->list2.items[i]->a;
    return NULL;
}

static bool callee_is(const Node *call, const char *name)
{
    const Node *c = call->kind == N_CALL ? call->a : call;
    return (c->kind == N_NAME || c->kind == N_ATTR) && !strcmp(c->name, name);
}

static bool const_int(Sema *s, const Node *n, int *out)
{
    SVal v = sema_eval(s, n);
    if (v.k != SV_INT) {
        if (v.k != SV_UNDEF)
            sema_err(s, n->span, "expected an integer constant, got %s", sv_describe(s, v));
        return false;
    }
    if (v.i < 0 || v.i > INT32_MAX) {
        sema_err(s, n->span, "expected a non-negative 32-bit integer, got %lld", (long long)v.i);
        return false;
    }
    *out = (int)v.i;
    return true;
}

/* An autotune decorator as its messages name it: as written
 * (`triton.autotune`, `tuning.autotune`), and whether another module's
 * (its root name is not triton's; a bare `autotune` may be triton's). */
typedef struct TuneDec {
    const char *name;
    bool foreign;
} TuneDec;

static const char *spelling(Sema *s, const Node *n)
{
    if (n->kind == N_ATTR)
        return arena_printf(s->a, "%s.%s", spelling(s, n->a), n->name);
    return n->kind == N_NAME ? n->name : "?";
}

static TuneDec tune_dec(Sema *s, const Node *dec)
{
    const Node *callee = dec->a, *root = callee;
    while (root->kind == N_ATTR)
        root = root->a;
    SVal *v = root->kind == N_NAME ? env_lookup(s->globals, root->name, NULL) : NULL;
    return (TuneDec){spelling(s, callee), root != callee && (!v || v->k != SV_NS)};
}

/* A config's own pre_hook, as the runtime's message names it: Python that
 * runs before every launch of the config, one config's too. */
static const char CONFIG_HOOK[] = "pre_hook in a triton.Config";

/* triton.Config({'BLOCK': 128}, num_warps=4, num_stages=2); a pre_hook
 * (not None) is recorded in sig */
static bool read_config(Sema *s, const Node *c, const TuneDec *td, KernelConfig *out,
                        KernelSig *sig)
{
    memset(out, 0, sizeof *out);
    if (c->kind != N_CALL || !callee_is(c, "Config")) {
        if (td->foreign)
            sema_err(s, c->span,
                     "@%s is read as @triton.autotune, whose configs are triton.Config(...) calls",
                     td->name);
        else
            sema_err(s, c->span, "autotune configs must be triton.Config(...) calls");
        return false;
    }
    const Node *d = c->list.len ? c->list.items[0] : kw_value(c, "kwargs");
    for (int i = 0; i < c->list2.len; i++) {
        const char *k = c->list2.items[i]->name;
        if (!strcmp(k, "pre_hook")) {
            if (c->list2.items[i]->a->kind != N_NONE) {
                sig->tune_python = CONFIG_HOOK;
                sig->tune_config_hook = true;
            }
            continue;
        }
        if (strcmp(k, "num_warps") && strcmp(k, "num_stages") && strcmp(k, "kwargs") &&
            strcmp(k, "num_ctas") && strcmp(k, "maxnreg")) {
            sema_err(s, c->list2.items[i]->span, "triton.Config option '%s' is not supported", k);
            return false;
        }
    }
    if (d && d->kind != N_DICT) {
        sema_err(s, d->span, "a triton.Config needs a dict of constexpr values");
        return false;
    }
    int n = d ? d->list.len : 0;
    out->defines = arena_alloc(s->a, sizeof(SpecDefine) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        const Node *key = d->list.items[i];
        SVal v = sema_eval(s, d->list2.items[i]);
        if (key->kind != N_STR) {
            sema_err(s, key->span, "config keys must be parameter names as strings");
            return false;
        }
        SpecDefine *def = &out->defines[out->ndefines++];
        def->name = key->str;
        def->span = d->list2.items[i]->span;
        if (!sema_to_constvalue(s, v, &def->value)) {
            sema_err(s, def->span, "config value for '%s' must be a constant", key->str);
            return false;
        }
    }
    const Node *w = kw_value(c, "num_warps"), *st = kw_value(c, "num_stages");
    return (!w || const_int(s, w, &out->num_warps)) && (!st || const_int(s, st, &out->num_stages));
}

/* A module constant that is a list literal (`CONFIGS = [triton.Config(...)]`)
 * stands for its value; any other name stays a name. */
static const Node *module_list(Sema *s, const Node *name)
{
    const Node *found = name;
    for (int i = 0; s->module && i < s->module->list.len; i++) {
        const Node *n = s->module->list.items[i];
        if (n->kind == N_ASSIGN && n->list.len == 1 && n->list.items[0]->kind == N_NAME &&
            strcmp(n->list.items[0]->name, name->name) == 0)
            found = n->a;
        else if (n->kind == N_HOST)
            for (int k = 0; k < n->list.len; k++)
                if (strcmp(n->list.items[k]->name, name->name) == 0)
                    found = name;
    }
    return found;
}

/* The source text of a one-line span (`IS_HOPPER`), or NULL. */
static const char *span_text(Sema *s, Span at)
{
    const char *p = s->src ? s->src->text : NULL;
    for (int l = 1; p && l < at.line; l++) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    if (!p || at.line != at.end_line || at.col < 1 || at.end_col <= at.col ||
        (size_t)(at.end_col - 1) > strcspn(p, "\n"))
        return NULL;
    return arena_strndup(s->a, p + at.col - 1, (size_t)(at.end_col - at.col));
}

/* The truth of a condition of the module's constants, its errors held
 * back: false, with *why the first one's message where there was one, when
 * tk cannot decide it. */
static bool held_truth(Sema *s, const Node *cond, bool *out, const char **why)
{
    Diag *real = s->d, held;
    diag_init(&held, real->src);
    held.max_errors = 1;
    s->d = &held;
    SVal v = sema_eval(s, cond);
    bool ok = v.k != SV_UNDEF && v.k != SV_TENSOR && sema_truth(s, v, cond->span, out) &&
        held.errors == 0;
    s->d = real;
    const char *text = held.text.data ? held.text.data : "";
    const char *msg = strstr(text, "error: ");
    if (!ok && msg)
        *why = arena_strndup(s->a, msg + 7, strcspn(msg + 7, "\n"));
    diag_free(&held);
    return ok;
}

/* `configs=_A if IS_HOPPER else _B` that the front end left (it picks the
 * arm where front/host_cond.c decides the condition): the arm the
 * module's constants pick, or NULL after an error at a condition tk
 * cannot decide. */
static const Node *pick_arm(Sema *s, const Node *n, const TuneDec *td)
{
    bool taken;
    const char *why = NULL;
    if (held_truth(s, n->b, &taken, &why))
        return taken ? n->a : n->c;
    const char *text = span_text(s, n->b->span);
    sema_err(s, n->b->span,
             "tk cannot decide %s%s%s, which picks the configs of @%s, without "
             "running Python%s%s",
             text ? "`" : "", text ? text : "this condition", text ? "`" : "", td->name,
             why ? ": " : "", why ? why : "");
    return NULL;
}

/* What configs= stands for: a module list for its name, the arm of a
 * conditional that tk decides; NULL after an error. */
static const Node *configs_value(Sema *s, const Node *c, const TuneDec *td)
{
    for (int hops = 0; c && hops < 16; hops++) {
        const Node *next = c->kind == N_IFEXP ? pick_arm(s, c, td)
            : c->kind == N_NAME               ? module_list(s, c)
                                              : c;
        if (next == c)
            break;
        c = next;
    }
    return c;
}

/* Configs that host Python builds (a name it binds, a call, a comprehension
 * the front end replaced by [__host__], a list of what a module function
 * returns, `[cfg(128), cfg(256, n_warps=8)]`): tk cannot read them. */
static bool configs_from_host(const Node *c)
{
    if (c->kind == N_LIST && c->list.len == 1 && c->list.items[0]->kind == N_NAME &&
        strcmp(c->list.items[0]->name, "__host__") == 0)
        return true;
    if (c->kind == N_LIST || c->kind == N_TUPLE) {
        for (int i = 0; i < c->list.len; i++)
            if (c->list.items[i]->kind == N_CALL && !callee_is(c->list.items[i], "Config"))
                return true;
        return false;
    }
    return c->kind == N_NAME || c->kind == N_CALL || c->kind == N_ATTR || c->kind == N_BINOP ||
        c->kind == N_SUBSCRIPT;
}

static bool is_param(const Node *fn, const char *name)
{
    for (int i = 0; i < fn->list.len; i++)
        if (strcmp(fn->list.items[i]->name, name) == 0)
            return true;
    return false;
}

/* reset_to_zero=['acc_ptr'], restore_value=['x_ptr']: parameter names. */
static int read_names(Sema *s, const Node *fn, const Node *dec, const char *option,
                      const char ***out)
{
    const Node *l = kw_value(dec, option);
    if (!l)
        return 0;
    if (l->kind != N_LIST && l->kind != N_TUPLE) {
        sema_err(s, l->span, "autotune %s must be a list of argument names", option);
        return 0;
    }
    *out = arena_alloc(s->a, sizeof(char *) * (size_t)(l->list.len + 1));
    int n = 0;
    for (int i = 0; i < l->list.len; i++) {
        const Node *k = l->list.items[i];
        if (k->kind != N_STR)
            sema_err(s, k->span, "autotune %s entries must be strings", option);
        else if (!is_param(fn, k->str))
            sema_err(s, k->span, "autotune %s names '%s', which is not a parameter of '%s'", option,
                     k->str, fn->name);
        else
            (*out)[n++] = k->str;
    }
    return n;
}

/* warmup=25, rep=100: a positive time in milliseconds, 0 when not given. */
static double read_ms(Sema *s, const Node *dec, const char *name)
{
    const Node *n = kw_value(dec, name);
    if (!n || n->kind == N_NONE)
        return 0;
    SVal v = sema_eval(s, n);
    double ms = v.k == SV_INT ? (double)v.i : v.k == SV_FLOAT ? v.f : -1;
    if (!(ms > 0) && v.k != SV_UNDEF)
        sema_err(s, n->span, "autotune %s must be a positive number of milliseconds, got %s", name,
                 sv_describe(s, v));
    return ms > 0 ? ms : 0;
}

static void read_autotune(Sema *s, const Node *fn, const Node *dec, KernelSig *out)
{
    static const char *const python[] = {"prune_configs_by", "pre_hook", "post_hook"};
    for (int i = 0; i < TK_ARRAY_LEN(python) && !out->tune_python; i++) {
        const Node *v = kw_value(dec, python[i]);
        bool none = v && (v->kind == N_NONE || (v->kind == N_DICT && v->list.len == 0));
        if (v && !none) /* None and {} are Triton's "no hook", "no pruning" */
            out->tune_python = python[i];
    }
    out->nreset_to_zero = read_names(s, fn, dec, "reset_to_zero", &out->reset_to_zero);
    out->nrestore_value = read_names(s, fn, dec, "restore_value", &out->restore_value);
    out->tune_warmup_ms = read_ms(s, dec, "warmup");
    out->tune_rep_ms = read_ms(s, dec, "rep");
    TuneDec td = tune_dec(s, dec);
    const Node *given = kw_value(dec, "configs");
    if (!given && dec->list.len)
        given = dec->list.items[0];
    const Node *configs = given ? configs_value(s, given, &td) : NULL;
    if (given && !configs)
        return; /* an undecided condition, reported */
    if (configs && configs_from_host(configs)) {
        out->configs_from_host = true; /* the caller passes the constexprs */
        return;
    }
    if (!configs || (configs->kind != N_LIST && configs->kind != N_TUPLE)) {
        sema_err(s, dec->span, "@%s needs configs=[triton.Config(...), ...]%s", td.name,
                 td.foreign ? " (tk reads a decorator named autotune as @triton.autotune)" : "");
        return;
    }
    out->configs = arena_alloc(s->a, sizeof(KernelConfig) * (size_t)(configs->list.len + 1));
    for (int i = 0; i < configs->list.len; i++)
        if (read_config(s, configs->list.items[i], &td, &out->configs[out->nconfigs], out))
            out->nconfigs++;
    const Node *key = kw_value(dec, "key");
    if (!key && dec->list.len > 1)
        key = dec->list.items[1];
    if (!key)
        return;
    if (key->kind != N_LIST && key->kind != N_TUPLE) {
        sema_err(s, key->span, "autotune key must be a list of argument names");
        return;
    }
    out->tune_keys = arena_alloc(s->a, sizeof(char *) * (size_t)(key->list.len + 1));
    for (int i = 0; i < key->list.len; i++) {
        const Node *k = key->list.items[i];
        if (k->kind != N_STR)
            sema_err(s, k->span, "autotune key entries must be strings");
        else
            out->tune_keys[out->ntune_keys++] = k->str;
    }
}

/* A lambda tk runs: one parameter, not *args or **kwargs. */
static bool one_param_lambda(const Node *f)
{
    return f->kind == N_LAMBDA && f->list.len == 1 && f->list.items[0]->op == 0;
}

/* How messages name the host code of a heuristic entry that is not a
 * lambda tk reads: FlagGems names module-level functions
 * (`{"BLOCK_N": heur_block_n}`). */
static const char *heuristic_host(Sema *s, const Node *f)
{
    const Node *callee = f->kind == N_CALL ? f->a : f;
    if (callee->kind == N_NAME || callee->kind == N_ATTR)
        return arena_printf(s->a, "the host function '%s'", callee->name);
    return f->kind == N_LAMBDA ? "a lambda of other than one parameter" : "host code";
}

static void read_heuristics(Sema *s, const Node *dec, KernelSig *out)
{
    const Node *d = dec->list.len ? dec->list.items[0] : kw_value(dec, "values");
    /* a module dict of lambdas is host code to the front end, like a call */
    if (d && configs_from_host(d)) {
        out->heuristics_from_host = true; /* the caller passes the constexprs */
        return;
    }
    if (!d || d->kind != N_DICT) {
        sema_err(s, dec->span, "@triton.heuristics needs a dict of name: lambda args: ...");
        return;
    }
    /* a kernel may have several @triton.heuristics: the entries add up */
    int had = out->nheuristics, n = had + d->list.len;
    const char **names = arena_alloc(s->a, sizeof(char *) * (size_t)(n + 1));
    const Node **fns = arena_alloc(s->a, sizeof(Node *) * (size_t)(n + 1));
    const char **hosts = arena_alloc(s->a, sizeof(char *) * (size_t)(n + 1));
    for (int i = 0; i < had; i++) {
        names[i] = out->heuristic_names[i];
        fns[i] = out->heuristic_fns[i];
        hosts[i] = out->heuristic_hosts[i];
    }
    out->heuristic_names = names;
    out->heuristic_fns = fns;
    out->heuristic_hosts = hosts;
    for (int i = 0; i < d->list.len; i++) {
        const Node *k = d->list.items[i], *f = d->list2.items[i];
        if (k->kind != N_STR) { /* a name host code holds: any constexpr may be it */
            out->heuristics_from_host = true;
            continue;
        }
        bool lambda = one_param_lambda(f);
        out->heuristic_names[out->nheuristics] = k->str;
        out->heuristic_hosts[out->nheuristics] = lambda ? NULL : heuristic_host(s, f);
        out->heuristic_fns[out->nheuristics++] = f;
    }
}

/* One entry of do_not_specialize: a parameter's name or index. */
static int jit_param(Sema *s, const Node *fn, const Node *e, const char *option)
{
    SVal v = sema_eval(s, e);
    for (int i = 0; v.k == SV_STR && i < fn->list.len; i++)
        if (strcmp(fn->list.items[i]->name, v.s) == 0)
            return i;
    if (v.k == SV_INT && v.i >= 0 && v.i < fn->list.len)
        return (int)v.i;
    if (v.k != SV_UNDEF)
        sema_err(s, e->span, "@triton.jit %s names %s, which is no parameter of '%s'", option,
                 sv_describe(s, v), fn->name);
    return -1;
}

/* @triton.jit(do_not_specialize=['n'], do_not_specialize_on_alignment=[2]):
 * the parameters launches leave unspecialised. Triton keeps the == 1
 * specialisation of the second list; tk, which specialises a parameter on
 * both or neither, leaves those unspecialised as well (one variant more
 * general than Triton's, never a wrong one). */
static void read_jit(Sema *s, const Node *fn, const Node *dec, KernelSig *out)
{
    static const char *const options[] = {"do_not_specialize", "do_not_specialize_on_alignment"};
    for (int o = 0; o < 2; o++) {
        const Node *l = kw_value(dec, options[o]);
        if (!l)
            continue;
        if (l->kind != N_LIST && l->kind != N_TUPLE) {
            sema_err(s, l->span, "@triton.jit %s must be a list of parameter names or indices",
                     options[o]);
            continue;
        }
        if (!out->no_specialize)
            out->no_specialize = arena_alloc(s->a, sizeof(bool) * (size_t)(fn->list.len + 1));
        if (!out->no_specialize)
            return;
        for (int i = 0; i < l->list.len; i++) {
            int p = jit_param(s, fn, l->list.items[i], options[o]);
            if (p >= 0)
                out->no_specialize[p] = true;
        }
    }
}

void sema_tune_configs(Sema *s, const Node *fn, KernelSig *out)
{
    Env *saved = s->env;
    s->env = s->globals;
    for (int i = 0; i < fn->list2.len; i++) {
        const Node *dec = fn->list2.items[i];
        if (dec->kind != N_CALL)
            continue;
        if (callee_is(dec, "autotune"))
            read_autotune(s, fn, dec, out);
        else if (callee_is(dec, "heuristics"))
            read_heuristics(s, dec, out);
        else if (callee_is(dec, "jit"))
            read_jit(s, fn, dec, out);
    }
    s->env = saved;
}

bool sema_eval_heuristic(const Node *module, const Node *lambda, const char *const *names,
                         const ConstValue *values, int n, Arena *a, Diag *d, ConstValue *out)
{
    Sema s = {.a = a, .d = d, .src = d->src};
    s.errors_at_start = d->errors;
    if (!one_param_lambda(lambda)) {
        sema_err(&s, lambda->span, "this heuristic is %s, which tk does not run",
                 heuristic_host(&s, lambda));
        return false;
    }
    s.f = ir_func_new(a, "heuristic", NULL); /* a lambda may build tensors (an error later) */
    s.b = (IrBuilder){.f = s.f, .blk = s.f->body};
    sema_open(&s, module);
    /* `args` is a dict of the launch arguments: an SV_CONFIG of (name, value) pairs */
    SVal args = {.k = SV_CONFIG, .n = n};
    args.items = arena_alloc(a, sizeof(SVal) * (size_t)(2 * n + 1));
    for (int i = 0; i < n; i++) {
        args.items[2 * i] = sv_str(names[i]);
        args.items[2 * i + 1] = sema_from_const(&s, values[i]);
    }
    Env env = {0};
    env_set(&s, &env, lambda->list.items[0]->name, args, lambda->span);
    s.env = &env;
    SVal v = sema_eval(&s, lambda->a);
    if (v.k != SV_UNDEF && !sema_to_constvalue(&s, v, out))
        sema_err(&s, lambda->a->span, "a heuristic must give a constant, got %s",
                 sv_describe(&s, v));
    return d->errors == s.errors_at_start;
}
