/* sema/modules.c: the other files of a package (front/package.c read them).
 * Each has its own globals, bound the first time a kernel reaches it; a
 * function runs in the globals of the file that defines it, and errors in
 * it are shown in that file. Assumes import nodes point at parsed modules
 * (`target`) and never walks those links except through here, once per
 * module, so import cycles are harmless. */
#include <string.h>

#include "sema/spec.h"

/* The globals of `module`, and whether they still need binding. Entries
 * are allocated one by one, so an Env stays where it is while binding one
 * module reads another. */
static Env *module_env(Sema *s, const Node *module, bool *fresh)
{
    *fresh = false;
    if (module == s->root)
        return &s->root_globals;
    for (int i = 0; i < s->nmods; i++)
        if (s->mods[i]->module == module)
            return &s->mods[i]->env;
    if (s->nmods == s->capmods) {
        int cap = s->capmods ? s->capmods * 2 : 8;
        SemaModule **m = arena_alloc(s->a, sizeof *m * (size_t)cap);
        if (!m)
            return NULL;
        if (s->nmods)
            memcpy(m, s->mods, sizeof *m * (size_t)s->nmods);
        s->mods = m;
        s->capmods = cap;
    }
    SemaModule *e = arena_alloc(s->a, sizeof *e);
    if (!e)
        return NULL;
    *e = (SemaModule){.module = module};
    s->mods[s->nmods++] = e;
    *fresh = true;
    return &e->env;
}

SemaScope sema_enter_module(Sema *s, const Node *module)
{
    SemaScope saved = {s->module, s->src, s->globals};
    if (!module || module == s->module)
        return saved;
    bool fresh;
    Env *env = module_env(s, module, &fresh);
    if (!env)
        return saved;
    s->module = module;
    s->src = module->src ? module->src : s->src;
    s->d->src = s->src;
    s->globals = env;
    if (fresh) {
        Env *saved_env = s->env;
        sema_bind_globals(s);
        s->env = saved_env;
    }
    return saved;
}

void sema_leave_module(Sema *s, SemaScope saved)
{
    s->module = saved.module;
    s->src = saved.src;
    s->d->src = saved.src;
    s->globals = saved.globals;
}

static bool module_defines(const Node *module, const Node *fn)
{
    for (int i = 0; module && i < module->list.len; i++)
        if (module->list.items[i] == fn)
            return true;
    return false;
}

const Node *sema_module_of(Sema *s, const Node *fn)
{
    if (module_defines(s->module, fn))
        return s->module;
    if (module_defines(s->root, fn))
        return s->root;
    for (int i = 0; i < s->nmods; i++)
        if (module_defines(s->mods[i]->module, fn))
            return s->mods[i]->module;
    return s->module;
}

const char *sema_module_file(const Node *module)
{
    return module->src && module->src->name ? module->src->name : "<string>";
}

/* A name of another module's globals, looked up from the current one. */
static SVal module_lookup(Sema *s, const Node *module, const char *name, bool *found)
{
    SemaScope saved = sema_enter_module(s, module);
    SVal *v = env_lookup(s->globals, name, NULL);
    SVal out = v ? *v : (SVal){.k = SV_VOID};
    sema_leave_module(s, saved);
    *found = v != NULL;
    return out;
}

/* `import pkg.ops.ext` binds `pkg` (its __init__.py, or an empty module
 * for a folder without one) and, as Python does, sets `ops` in pkg's
 * globals and `ext` in pkg.ops's; front/package.c put the packages on the
 * way in imp->list. */
static void bind_import_chain(Sema *s, const Node *imp)
{
    const NodeList *chain = &imp->list;
    if (chain->len == 0)
        return;
    const Node *head = chain->items[0];
    env_set(s, s->globals, head->name, (SVal){.k = SV_MODULE, .fn = head->target}, imp->span);
    for (int i = 0; i < chain->len; i++) {
        const Node *parent = chain->items[i];
        const Node *child = i + 1 < chain->len ? chain->items[i + 1]->target : imp->target;
        const char *part = imp->name + strlen(parent->name) + 1;
        const char *dot = strchr(part, '.');
        const char *name = dot ? arena_strndup(s->a, part, (size_t)(dot - part)) : part;
        SemaScope saved = sema_enter_module(s, parent->target);
        env_set(s, s->globals, name, (SVal){.k = SV_MODULE, .fn = child}, imp->span);
        sema_leave_module(s, saved);
    }
}

void sema_bind_package_import(Sema *s, const Node *imp)
{
    const Node *m = imp->target;
    if (!m)
        return;
    SVal mod = {.k = SV_MODULE, .fn = m};
    if (imp->kind == N_IMPORT) {
        /* with `as` or a one-part name it is the file itself */
        if (imp->alias || !strchr(imp->name, '.'))
            env_set(s, s->globals, imp->alias ? imp->alias : imp->name, mod, imp->span);
        else
            bind_import_chain(s, imp);
        return;
    }
    const char *bind = imp->alias ? imp->alias : imp->str;
    if (imp->flags & NF_SUBMODULE) {
        env_set(s, s->globals, bind, mod, imp->span);
        return;
    }
    if (strcmp(imp->str, "*") == 0) {
        /* every public name; the module is bound first so its table is complete */
        SemaScope saved = sema_enter_module(s, m);
        Env *e = s->globals;
        Binding *b = e->b;
        int n = e->n;
        sema_leave_module(s, saved);
        for (int i = 0; i < n; i++)
            if (b[i].name[0] != '_' && strcmp(b[i].name, "tl") && strcmp(b[i].name, "triton") &&
                strcmp(b[i].name, "math"))
                env_set(s, s->globals, b[i].name, b[i].val, imp->span);
        return;
    }
    bool found;
    SVal v = module_lookup(s, m, imp->str, &found);
    if (!found)
        v = (SVal){.k = SV_UNDEF,
                   .s = arena_printf(s->a,
                                     "'%s' is imported from %s, which has no jit function or "
                                     "constant of that name",
                                     imp->str, sema_module_file(m))};
    env_set(s, s->globals, bind, v, imp->span);
}

SVal sema_module_attr(Sema *s, SVal mod, const char *name, Span at)
{
    bool found;
    SVal v = module_lookup(s, mod.fn, name, &found);
    if (!found)
        return sema_err(s, at, "module '%s' has no jit function or constant '%s'",
                        sema_module_file(mod.fn), name);
    if (v.k == SV_UNDEF && v.s)
        return sema_err(s, at, "%s", v.s);
    return v;
}
