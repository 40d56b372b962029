/* sema.c: the specialisation driver. Binds module names and the kernel's
 * parameters (constexpr values from defines or defaults, runtime types from
 * the signature or annotations), then runs the body's statements, emitting
 * IR. Reports every user error to the Diag and returns NULL if there was one. */
#include <stdio.h>
#include <string.h>

#include "sema/spec.h"

/* ---- environments ------------------------------------------------------------- */

static int env_find(const Env *e, const char *name)
{
    if (e->index.n)
        return namemap_get(&e->index, name);
    for (int i = 0; i < e->n; i++)
        if (strcmp(e->b[i].name, name) == 0)
            return i;
    return -1;
}

static Arena *env_arena(Sema *s) { return s->env_a ? s->env_a : s->a; }

/* Builds or extends the index once the Env is large; without memory it
 * stays empty (or is dropped) and finding goes back to the linear scan. */
static void env_index(Sema *s, Env *e)
{
    if (e->n <= ENV_INDEX_MIN)
        return;
    for (int i = e->index.n; i < e->n; i++)
        if (!namemap_put(env_arena(s), &e->index, e->b[i].name, i)) {
            e->index = (NameMap){0};
            return;
        }
}

SVal *env_lookup(Env *e, const char *name, Span **at)
{
    int i = env_find(e, name);
    if (i < 0)
        return NULL;
    if (at)
        *at = &e->b[i].at;
    return &e->b[i].val;
}

void env_set(Sema *s, Env *e, const char *name, SVal v, Span at)
{
    int i = env_find(e, name);
    if (i >= 0) {
        e->b[i].val = v;
        e->b[i].at = at;
        return;
    }
    if (e->n == e->cap) {
        int cap = e->cap ? e->cap * 2 : 16;
        Binding *nb = arena_alloc(env_arena(s), sizeof(Binding) * (size_t)cap);
        if (e->n)
            memcpy(nb, e->b, sizeof(Binding) * (size_t)e->n);
        e->b = nb;
        e->cap = cap;
    }
    e->b[e->n++] = (Binding){name, v, at};
    env_index(s, e);
}

Env env_copy(Sema *s, const Env *e)
{
    Env c = {0};
    c.cap = e->n + 8;
    c.b = arena_alloc(env_arena(s), sizeof(Binding) * (size_t)c.cap);
    if (!c.b) /* out of memory (the arena says so): an empty copy, and sema stops */
        return (Env){0};
    if (e->n)
        memcpy(c.b, e->b, sizeof(Binding) * (size_t)e->n);
    c.n = e->n;
    env_index(s, &c);
    return c;
}

SVal sema_lookup(Sema *s, const char *name, Span at)
{
    SVal *v = env_lookup(s->env, name, NULL);
    if (!v && s->env != s->globals)
        v = env_lookup(s->globals, name, NULL);
    if (v) {
        if (v->k == SV_UNDEF && v->s) {
            SVal e = sema_err(s, at, "%s", v->s);
            if (v->fn) { /* the host condition that chose the binding, in its own file */
                const Source *here = s->d->src;
                s->d->src = v->src ? v->src : here;
                diag_report(s->d, DIAG_NOTE, v->fn->span, "the condition tk could not decide");
                s->d->src = here;
            }
            return e;
        }
        const char *refused = sema_host_fn_refused(s, *v, name);
        if (refused)
            return sema_err(s, at, "%s", refused);
        return *v;
    }
    if (sema_builtin_exists("builtins", name))
        return (SVal){.k = SV_BUILTIN, .s = name, .ns = "builtins"};
    if (sema_builtin_exists("tl", name))
        return sema_builtin_attr(s, "tl", name, at);
    return sema_err(s, at, "unknown name '%s'", name);
}

/* ---- module level ------------------------------------------------------------------ */

/* "triton.language" -> "tl", ... : the namespace a module path binds. */
const char *sema_module_ns(const char *path)
{
    static const struct {
        const char *path, *ns;
    } map[] = {
        {"triton", "triton"},
        {"triton.language", "tl"},
        {"triton.language.core", "tl"}, /* the modules tl is written in */
        {"triton.language.standard", "tl"},
        {"triton.language.math", "tl.math"},
        {"triton.language.extra", "tl.extra"},
        {"triton.language.extra.cuda", "tl.extra.cuda"},
        {"triton.language.target_info", "target_info"},
        {"triton.language.extra.libdevice", "libdevice"},
        {"triton.language.extra.cuda.libdevice", "libdevice"},
        {"triton.language.math.libdevice", "libdevice"},
        {"triton.language.libdevice", "libdevice"},
        {"math", "math"},
        {"torch", "torch"},         /* its dtypes, finfo, iinfo, version.hip */
        {"importlib", "importlib"}, /* to find triton's modules (builtins/importlib.c) */
        {"importlib.util", "importlib.util"},
    };
    for (int i = 0; i < TK_ARRAY_LEN(map); i++)
        if (strcmp(map[i].path, path) == 0)
            return map[i].ns;
    return NULL;
}

/* Line `line` of src (1-based) and its length, or NULL. */
static const char *src_line(const Source *src, int line, size_t *len)
{
    const char *p = src ? src->text : NULL;
    for (int l = 1; p && l < line; l++)
        p = (p = strchr(p, '\n')) ? p + 1 : NULL;
    if (!p)
        return NULL;
    const char *e = strchr(p, '\n');
    *len = e ? (size_t)(e - p) : strlen(p);
    return p;
}

/* Whether the host code at `line` is a class: 1, or 2 for one of Triton's
 * aggregate classes (@tl.core._aggregate), which tk does not take. */
static int host_class(const Source *src, int line)
{
    size_t n;
    const char *l = src_line(src, line, &n);
    while (l && n && (*l == ' ' || *l == '\t'))
        l++, n--;
    if (!l || n < 6 || strncmp(l, "class", 5) || (l[5] != ' ' && l[5] != '\t'))
        return 0;
    for (int k = line - 1; k > 0 && (l = src_line(src, k, &n)) != NULL; k--) {
        while (n && (*l == ' ' || *l == '\t'))
            l++, n--;
        if (!n || *l != '@')
            break;
        for (size_t i = 0; i + 9 <= n; i++)
            if (!strncmp(l + i, "aggregate", 9))
                return 2;
    }
    return 1;
}

/* A name that host Python code binds: using it in a kernel is an error at
 * the use, saying where the host code is. */
static void bind_host(Sema *s, const char *name, Span at, const Node *cond)
{
    const char *file = s->src && s->src->name ? s->src->name : "<string>";
    int cls = host_class(s->src, at.line);
    const char *why = cls == 2
        ? arena_printf(s->a,
                       "'%s' is an aggregate class (Triton's @tl.core._aggregate, "
                       "%s:%d), which tk does not take in kernels: pass its members, "
                       "or a tuple of them",
                       name, file, at.line)
        : arena_printf(s->a, "'%s' is set by %s (%s:%d), which tk does not run", name,
                       cls ? "a class, host Python code" : "host Python code", file, at.line);
    if (cond)
        why = arena_printf(s->a,
                           "%s: it is bound under `%s` (%s:%d:%d), a condition tk cannot "
                           "decide without running Python",
                           why, cond->name, file, cond->span.line, cond->span.col);
    env_set(s, s->globals, name, (SVal){.k = SV_UNDEF, .s = why, .fn = cond, .src = s->src}, at);
}

/* The name an import binds: `import a.b` binds a. */
static const char *import_binds(Sema *s, const Node *n)
{
    if (n->kind == N_FROM_IMPORT)
        return n->alias ? n->alias : n->str;
    if (n->alias)
        return n->alias;
    const char *dot = strchr(n->name, '.');
    return dot ? arena_strndup(s->a, n->name, (size_t)(dot - n->name)) : n->name;
}

/* `import pkg.missing` after `import pkg.ext` leaves `pkg` the package it
 * was: is `name`, bound by the host import `h`, such a package? */
static bool keeps_package(Sema *s, const Node *h, const char *name)
{
    SVal *bound = env_lookup(s->globals, name, NULL);
    if (!bound || bound->k != SV_MODULE)
        return false;
    for (int k = 0; k < h->list2.len; k++) {
        const Node *imp = h->list2.items[k];
        if (imp->kind == N_IMPORT && !imp->alias && !imp->target &&
            strcmp(import_binds(s, imp), name) == 0)
            return true;
    }
    return false;
}

/* An import of a module of the package that no file was found for: its
 * name is a host name, and the message says where tk looked. */
static void bind_unfound(Sema *s, const Node *imp)
{
    const char *m = imp->name;
    bool local = m &&
        (m[0] == '.' ||
         (strchr(m, '.') && strncmp(m, "triton.", 7) != 0 && strncmp(m, "torch.", 6) != 0));
    if (!local || (imp->kind == N_FROM_IMPORT && strcmp(imp->str, "*") == 0))
        return;
    const char *name = import_binds(s, imp);
    const char *file = s->src && s->src->name ? s->src->name : "<string>";
    const char *why = arena_printf(s->a,
                                   "'%s' is set by host Python code (%s:%d), which tk does "
                                   "not run: no package file was found for '%s' (tkc -I DIR "
                                   "adds a folder to search)",
                                   name, file, imp->span.line, m);
    env_set(s, s->globals, name, (SVal){.k = SV_UNDEF, .s = why}, imp->span);
}

static void bind_import(Sema *s, const Node *n)
{
    if (n->kind == N_IMPORT) {
        const char *ns = sema_module_ns(n->name);
        if (!ns) {
            bind_host(s, import_binds(s, n), n->span, NULL);
            return;
        }
        if (n->alias) {
            env_set(s, s->globals, n->alias, (SVal){.k = SV_NS, .s = ns}, n->span);
        } else {
            /* `import triton.language` binds `triton` */
            const char *dot = strchr(n->name, '.');
            const char *head =
                dot ? arena_strndup(s->a, n->name, (size_t)(dot - n->name)) : n->name;
            env_set(s, s->globals, head, (SVal){.k = SV_NS, .s = sema_module_ns(head)}, n->span);
        }
        return;
    }
    const char *full = arena_printf(s->a, "%s.%s", n->name, n->str);
    const char *ns = sema_module_ns(full);
    const char *bind = n->alias ? n->alias : n->str;
    if (ns) {
        env_set(s, s->globals, bind, (SVal){.k = SV_NS, .s = ns}, n->span);
        return;
    }
    const char *base = sema_module_ns(n->name);
    if (base) {
        if (strcmp(base, "triton") == 0 && strcmp(n->str, "jit") == 0) {
            env_set(s, s->globals, bind, (SVal){.k = SV_NS, .s = "triton"}, n->span);
            return;
        }
        if (sema_builtin_exists(base, n->str) ||
            (strcmp(base, "libdevice") == 0 && sema_libdevice_known(n->str))) {
            SVal v = sema_builtin_attr(s, base, n->str, n->span);
            if (v.k != SV_UNDEF)
                env_set(s, s->globals, bind, v, n->span);
            return;
        }
    }
    if (strcmp(n->str, "*") != 0)
        bind_host(s, bind, n->span, NULL);
}

/* A decorator names triton.jit (possibly called with options). */
static bool is_jit(const Node *d)
{
    if (d->kind == N_CALL)
        d = d->a;
    if (d->kind == N_NAME)
        return strcmp(d->name, "jit") == 0;
    return d->kind == N_ATTR && strcmp(d->name, "jit") == 0;
}

static const char *decorator_name(const Node *d)
{
    if (d->kind == N_CALL)
        d = d->a;
    return d->kind == N_NAME || d->kind == N_ATTR ? d->name : "?";
}

bool sema_func_is_jit(const Node *fn)
{
    for (int i = 0; i < fn->list2.len; i++)
        if (is_jit(fn->list2.items[i]))
            return true;
    return false;
}

/* Binds the plain names of an assignment target as host names whose
 * message carries why tk could not evaluate the value (`msg`). */
static void bind_unevaluated(Sema *s, const Node *t, int line, const char *msg, int len)
{
    if (t->kind == N_TUPLE || t->kind == N_LIST) {
        for (int i = 0; i < t->list.len; i++)
            bind_unevaluated(s, t->list.items[i], line, msg, len);
        return;
    }
    if (t->kind != N_NAME)
        return;
    const char *file = s->src && s->src->name ? s->src->name : "<string>";
    const char *why = arena_printf(s->a,
                                   "'%s' is set by host Python code (%s:%d), which tk does "
                                   "not run (as a constant: %.*s)",
                                   t->name, file, line, len, msg);
    env_set(s, s->globals, t->name, (SVal){.k = SV_UNDEF, .s = why}, t->span);
}

/* A module constant. Its value is evaluated with errors held back: one tk
 * cannot evaluate (`DEVICE = triton.runtime.driver.active...()`) is host
 * Python, an error only where a kernel uses the name, and that error says
 * what went wrong. */
static void bind_constant(Sema *s, const Node *n)
{
    const Node *val = n->kind == N_ASSIGN ? n->a : n->c;
    Diag *real = s->d;
    Diag held;
    diag_init(&held, real->src);
    held.max_errors = 1;
    s->d = &held;
    s->module_const++;
    SVal v = sema_eval(s, val);
    s->module_const--;
    if (v.k != SV_UNDEF && !sv_is_const(v) && v.k != SV_NS && v.k != SV_FUNC && v.k != SV_BUILTIN &&
        v.k != SV_MODULE)
        sema_err(s, val->span, "module constant must be a compile-time value, got %s",
                 sv_describe(s, v));
    s->d = real;
    if (held.errors) {
        const char *text = held.text.data ? held.text.data : "";
        const char *msg = strstr(text, "error: ");
        msg = msg ? msg + 7 : text;
        int len = (int)strcspn(msg, "\n");
        if (n->kind == N_ASSIGN)
            for (int t = 0; t < n->list.len; t++)
                bind_unevaluated(s, n->list.items[t], n->span.line, msg, len);
        else
            bind_unevaluated(s, n->a, n->span.line, msg, len);
    } else if (n->kind == N_ASSIGN) {
        for (int t = 0; t < n->list.len; t++)
            sema_assign(s, n->list.items[t], v, n->span);
    } else {
        sema_assign(s, n->a, v, n->span);
    }
    diag_free(&held);
}

void sema_open(Sema *s, const Node *module)
{
    s->module = s->root = module;
    if (!s->src && module)
        s->src = module->src;
    s->globals = &s->root_globals;
    s->env = s->globals;
    sema_bind_globals(s);
}

void sema_bind_globals(Sema *s)
{
    Env *saved = s->env;
    s->env = s->globals;
    Span none = {0};
    env_set(s, s->globals, "tl", (SVal){.k = SV_NS, .s = "tl"}, none);
    env_set(s, s->globals, "triton", (SVal){.k = SV_NS, .s = "triton"}, none);
    env_set(s, s->globals, "math", (SVal){.k = SV_NS, .s = "math"}, none);
    const NodeList *items = &s->module->list;
    for (int i = 0; i < items->len; i++) {
        const Node *n = items->items[i];
        if (n->kind == N_FUNC)
            env_set(s, s->globals, n->name, (SVal){.k = SV_FUNC, .fn = n}, n->span);
    }
    for (int i = 0; i < items->len; i++) {
        const Node *n = items->items[i];
        if (n->kind == N_HOST) {
            for (int k = 0; k < n->list.len; k++)
                if ((n->flags & (NF_CONSTEXPR_FN | NF_HOST_FN)) && !n->a) /* read when called */
                    env_set(s, s->globals, n->list.items[k]->name, sema_constexpr_fn_value(n),
                            n->list.items[k]->span);
                else if (!keeps_package(s, n, n->list.items[k]->name))
                    bind_host(s, n->list.items[k]->name, n->list.items[k]->span, n->a);
            for (int k = 0; k < n->list2.len; k++) {
                const Node *imp = n->list2.items[k];
                if (imp->target)
                    sema_bind_package_import(s, imp);
                else if (imp->kind == N_IMPORT && sema_module_ns(imp->name))
                    bind_import(s, imp); /* `import torch, triton.language as tl` */
                else if (!keeps_package(s, n, import_binds(s, imp)))
                    bind_unfound(s, imp);
            }
        } else if (n->kind == N_IMPORT || n->kind == N_FROM_IMPORT) {
            bind_import(s, n);
        } else if (n->kind == N_FUNC) {
            /* decorators are checked when the kernel is specialised */
        } else if (n->kind == N_ASSIGN || n->kind == N_ANNASSIGN) {
            bind_constant(s, n);
        } else if (n->kind != N_PASS && n->kind != N_EXPR_STMT) {
            sema_err(s, n->span,
                     "only imports, constants and @jit functions may appear at "
                     "module level");
        }
    }
    s->env = saved;
}

/* ---- kernel signatures ----------------------------------------------------------- */

static const Node *find_def(const Node *module, const char *name)
{
    for (int i = 0; module && i < module->list.len; i++) {
        const Node *n = module->list.items[i];
        if (n->kind == N_FUNC && strcmp(n->name, name) == 0)
            return n;
    }
    return NULL;
}

/* The def `name` names: its own, or the @jit def a module-level alias
 * binds (`kern = _impl`, which front/host.c makes of `kern =
 * triton.jit(_impl)`). */
static const Node *find_kernel(const Node *module, const char *name)
{
    const Node *fn = find_def(module, name);
    for (int i = 0; module && !fn && i < module->list.len; i++) {
        const Node *n = module->list.items[i];
        if (n->kind == N_ASSIGN && n->list.len == 1 && n->list.items[0]->kind == N_NAME &&
            strcmp(n->list.items[0]->name, name) == 0 && n->a->kind == N_NAME) {
            const Node *def = find_def(module, n->a->name);
            fn = def && sema_func_is_jit(def) ? def : NULL;
        }
    }
    return fn;
}

const char *sema_kernel_def(const Node *module, const char *name)
{
    const Node *fn = find_kernel(module, name);
    return fn ? fn->name : NULL;
}

bool sema_plain_def(const Node *module, const char *name, int *line, const char **decorator)
{
    const Node *fn = find_def(module, name);
    if (!fn || sema_func_is_jit(fn))
        return false;
    *line = fn->span.line;
    *decorator = fn->list2.len ? decorator_name(fn->list2.items[0]) : NULL;
    return true;
}

int sema_kernel_names(const Node *module, const char ***names, Arena *a)
{
    int n = 0;
    int cap = module ? module->list.len + 1 : 1;
    const char **out = arena_alloc(a, sizeof(char *) * (size_t)cap);
    for (int i = 0; module && i < module->list.len; i++) {
        const Node *f = module->list.items[i];
        if (f->kind == N_FUNC && sema_func_is_jit(f))
            out[n++] = f->name;
    }
    *names = out;
    return n;
}

/* Adds to `called` every name a call in `n` calls by its plain name,
 * except `self` (a function calling itself is not a helper for that). */
static void collect_calls(Arena *a, const Node *n, const char *self, NameMap *called);

static void collect_list_calls(Arena *a, const NodeList *l, const char *self, NameMap *called)
{
    for (int i = 0; i < l->len; i++)
        collect_calls(a, l->items[i], self, called);
}

static void collect_calls(Arena *a, const Node *n, const char *self, NameMap *called)
{
    if (!n)
        return;
    if (n->kind == N_CALL && n->a && n->a->kind == N_NAME && strcmp(n->a->name, self) != 0)
        namemap_put(a, called, n->a->name, 1);
    collect_calls(a, n->a, self, called);
    collect_calls(a, n->b, self, called);
    collect_calls(a, n->c, self, called);
    collect_list_calls(a, &n->list, self, called);
    collect_list_calls(a, &n->list2, self, called);
    collect_list_calls(a, &n->list3, self, called);
}

/* One walk over every function's body collects the names called, so the
 * cost is the size of the file, not kernels times file. */
int sema_entry_kernels(const Node *module, const char ***names, Arena *a)
{
    const char **all;
    int n = sema_kernel_names(module, &all, a);
    NameMap called = {0};
    for (int i = 0; n && i < module->list.len; i++) {
        const Node *f = module->list.items[i];
        if (f->kind == N_FUNC)
            collect_list_calls(a, &f->list3, f->name, &called);
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (namemap_get(&called, all[i]) < 0)
            all[k++] = all[i];
    *names = all;
    return k;
}

bool sema_kernel_sig(const Node *module, const char *kernel, Arena *a, KernelSig *out)
{
    memset(out, 0, sizeof *out);
    const Node *fn = find_kernel(module, kernel);
    if (!fn)
        return false;
    int n = fn->list.len;
    out->name = fn->name;
    out->nparams = n;
    out->param_names = arena_alloc(a, sizeof(char *) * (size_t)(n + 1));
    out->is_constexpr = arena_alloc(a, sizeof(bool) * (size_t)(n + 1));
    out->annotated = arena_alloc(a, sizeof(Type) * (size_t)(n + 1));
    out->has_default = arena_alloc(a, sizeof(bool) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        const Node *p = fn->list.items[i];
        bool bad;
        out->param_names[i] = p->name;
        out->is_constexpr[i] = sema_annot_is_constexpr(p->a);
        out->annotated[i] = sema_annot_type(p->a, &bad);
        out->has_default[i] = p->b != NULL;
    }
    /* decorator errors are reported when the kernel is specialised */
    Diag scratch;
    diag_init(&scratch, NULL);
    Sema s = {.a = a, .d = &scratch};
    s.f = ir_func_new(a, "module", NULL); /* a bad module constant may emit ops */
    s.b = (IrBuilder){.f = s.f, .blk = s.f->body};
    sema_open(&s, module);
    sema_tune_configs(&s, fn, out);
    diag_free(&scratch);
    return true;
}

/* Where host code binds `name` (a def inside `if torch.cuda.is_available():`
 * or a `with` block), or NULL. */
static const Node *host_binding(const Node *module, const char *name)
{
    for (int i = 0; module && i < module->list.len; i++) {
        const Node *h = module->list.items[i];
        for (int k = 0; h->kind == N_HOST && k < h->list.len; k++)
            if (strcmp(h->list.items[k]->name, name) == 0)
                return h->list.items[k];
    }
    return NULL;
}

IrFunc *sema_specialize(const Node *module, const Source *src, const SpecRequest *req, Arena *a,
                        Diag *d)
{
    const Node *fn = req && req->kernel ? find_kernel(module, req->kernel) : NULL;
    const Node *host = !fn && req && req->kernel ? host_binding(module, req->kernel) : NULL;
    if (host) {
        diag_report(d, DIAG_ERROR, host->span,
                    "'%s' is defined by host Python code, which tk does not run: a kernel must be "
                    "at module level or in a block that runs when triton is there (try: import "
                    "triton, if HAS_TRITON:, if triton is not None:)",
                    req->kernel);
        return NULL;
    }
    if (!fn) {
        diag_plain(d, DIAG_ERROR, "no @jit function named '%s'",
                   req && req->kernel ? req->kernel : "?");
        return NULL;
    }
    Arena envs;
    arena_init(&envs);
    Sema s = {.a = a, .env_a = &envs, .d = d, .src = src};
    s.errors_at_start = d->errors;
    s.f = ir_func_new(a, fn->name, src);
    s.f->span = fn->span;
    s.f->num_warps = req->num_warps; /* checked by spec_request_init */
    s.f->num_stages = req->num_stages;
    s.f->arch = req->arch ? arena_strdup(s.a, req->arch) : NULL;
    s.debug = req->debug;
    s.b = (IrBuilder){.f = s.f, .blk = s.f->body};
    sema_open(&s, module);
    if (!sema_func_is_jit(fn))
        sema_err(&s, fn->span, "'%s' is not decorated with @triton.jit", fn->name);
    for (int k = 0; k < fn->list2.len; k++) {
        const char *dn = decorator_name(fn->list2.items[k]);
        if (!is_jit(fn->list2.items[k]) && strcmp(dn, "autotune") && strcmp(dn, "heuristics"))
            diag_report(d, DIAG_WARNING, fn->list2.items[k]->span,
                        "decorator '@%s' is not a triton decorator; tk ignores it", dn);
    }
    KernelSig tune = {0};
    sema_tune_configs(&s, fn, &tune);
    Env env = {0};
    s.env = &env;
    sema_bind_params(&s, fn, req, &tune);
    s.stack[s.depth++] = fn;
    if (d->errors == s.errors_at_start) {
        sema_exec(&s, &fn->list3, 0, NULL);
        SVal *ret = env_lookup(s.env, "$ret", NULL);
        /* a value returned on some paths only is a value all the same */
        bool some = ret && ret->k == SV_UNDEF && ret->s == sema_partial_return;
        if (ret && ((ret->k != SV_NONE && ret->k != SV_UNDEF && ret->k != SV_VOID) || some))
            sema_err(&s, fn->span,
                     "kernel '%s' returns a value; kernels must return nothing "
                     "(store results through pointers)",
                     fn->name);
    }
    if (a->oom || envs.oom)
        diag_plain(d, DIAG_ERROR, "out of memory while specialising '%s'", fn->name);
    arena_free(&envs);
    return d->errors == s.errors_at_start ? s.f : NULL;
}
