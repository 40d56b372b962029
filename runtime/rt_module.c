/* rt_module.c: modules (a source file parsed once) and kernels (one @jit
 * function of a module, with its parameter signature from sema). The parsed
 * module is only read once made; what writes to the module (its arena,
 * kernels made on first lookup, the list of builds in flight) holds its
 * mutex, and builds run outside it. Kernels live as long as their module. Guarantees: syntax errors come back as TK_ERR_COMPILE with every
 * diagnostic, unknown kernels as TK_ERR_NOT_FOUND listing the known ones. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_backend.h"

/* The arch host device checks in the module's Python are decided for:
 * the device's; on the interpreter, TK_ARCH when set, else sm_80 (the
 * compiler's default target, which its device properties model). The
 * module's source hash covers the choice (module->str notes it). */
static const char *module_target(const tk_context *ctx)
{
    if (strncmp(ctx->arch, "sm_", 3) == 0)
        return ctx->arch;
    const char *env = getenv("TK_ARCH");
    return env && strncmp(env, "sm_", 3) == 0 ? env : "sm_80";
}

static tk_status module_make(tk_context *ctx, const char *name, const char *text, size_t len,
                             tk_module **out)
{
    tk_module *m = tk_xalloc(sizeof *m);
    if (!m)
        return err_set(TK_ERR_NO_MEMORY, "out of memory loading '%s'", name);
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->built, NULL);
    if (!comp_init(&m->comp, name, text, len)) {
        tk_module_destroy(m);
        return err_set(TK_ERR_NO_MEMORY, "out of memory loading '%s'", name);
    }
    m->comp.search_paths = ctx->search_paths;
    m->comp.arch = module_target(ctx);
    if (!comp_parse(&m->comp)) {
        tk_status s = err_set(TK_ERR_COMPILE, "%s",
                              m->comp.diag.text.data ? m->comp.diag.text.data : "syntax errors");
        tk_module_destroy(m);
        return s;
    }
    rt_hash_text(m->comp.src.text, m->comp.src.len, m->source_hash);
    /* a change in an imported package file is a change of the source */
    for (int i = 0; i < m->comp.nimported; i++) {
        const Source *f = m->comp.imported[i];
        uint64_t h[2];
        rt_hash_text(f->text, f->len, h);
        m->source_hash[0] = (m->source_hash[0] ^ h[0]) * 0x9e3779b97f4a7c15ULL;
        m->source_hash[1] = (m->source_hash[1] ^ h[1]) * 0xc2b2ae3d27d4eb4fULL;
    }
    /* so is a change of an environment variable a host condition read */
    if (m->comp.module->str) {
        uint64_t h[2];
        rt_hash_text(m->comp.module->str, strlen(m->comp.module->str), h);
        m->source_hash[0] = (m->source_hash[0] ^ h[0]) * 0x9e3779b97f4a7c15ULL;
        m->source_hash[1] = (m->source_hash[1] ^ h[1]) * 0xc2b2ae3d27d4eb4fULL;
    }
    m->nnames = comp_kernel_names(&m->comp, &m->names);
    m->kernels = arena_alloc(&m->comp.arena, sizeof *m->kernels * (size_t)(m->nnames + 1));
    if (m->comp.arena.oom || !m->kernels) {
        tk_module_destroy(m);
        return err_set(TK_ERR_NO_MEMORY, "out of memory loading '%s'", name);
    }
    *out = m;
    return TK_OK;
}

tk_status tk_module_load_string(tk_context *ctx, const char *name, const char *src, tk_module **mod)
{
    if (!ctx || !src || !mod)
        return err_null_arg("tk_module_load_string", !ctx ? "ctx" : !src ? "src" : "mod");
    *mod = NULL;
    return module_make(ctx, name ? name : "<string>", src, strlen(src), mod);
}

tk_status tk_module_load_file(tk_context *ctx, const char *path, tk_module **mod)
{
    if (!ctx || !path || !mod)
        return err_null_arg("tk_module_load_file", !ctx ? "ctx" : !path ? "path" : "mod");
    *mod = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(TK_ERR_NOT_FOUND, "cannot open '%s': %s", path, strerror(errno));
    StrBuf sb;
    sb_init(&sb);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        sb_write(&sb, chunk, n);
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad || sb.oom) {
        sb_free(&sb);
        return err_set(bad ? TK_ERR_IO : TK_ERR_NO_MEMORY, "cannot read '%s'", path);
    }
    tk_status s = module_make(ctx, path, sb.data ? sb.data : "", sb.len, mod);
    sb_free(&sb);
    return s;
}

static const RtKey *variant_key(void *v) { return &((RtVariant *)v)->key; }

void rt_variant_free(void *p)
{
    RtVariant *v = p;
    if (v->mod && rt_cu.p_cuModuleUnload)
        rt_cu.p_cuModuleUnload(v->mod); /* teardown: nothing to report to */
    arena_free(&v->ir_arena);
    pthread_mutex_destroy(&v->tma_lock);
    tk_xfree(v);
}

void tk_module_destroy(tk_module *m)
{
    if (!m)
        return;
    if (m->kernels && m->ctx->be->enter(m->ctx) != TK_OK)
        err_clear(); /* unload below may then fail; still free host memory */
    for (int i = 0; m->kernels && i < m->nnames; i++)
        if (m->kernels[i]) {
            rt_tune_free(m->kernels[i]);
            rt_table_free(&m->kernels[i]->table, rt_variant_free);
            tk_xfree(m->kernels[i]);
        }
    comp_free(&m->comp);
    pthread_cond_destroy(&m->built);
    pthread_mutex_destroy(&m->lock);
    tk_xfree(m);
}

static tk_status not_found(tk_module *m, const char *name)
{
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < m->nnames; i++)
        sb_printf(&sb, "%s%s", i ? ", " : "", m->names[i]);
    /* a def under that name whose decorator tk does not read as
     * triton.jit is the likely mistake: say so */
    int line = 0;
    const char *dec = NULL;
    if (comp_plain_def(&m->comp, name, &line, &dec) && dec)
        sb_printf(&sb,
                  "%s; '%s' (line %d) is a def, but tk does not read its decorator @%s as "
                  "triton.jit",
                  m->nnames ? "" : "(none)", name, line, dec);
    else if (line)
        sb_printf(&sb, "%s; '%s' (line %d) is a def with no @triton.jit decorator",
                  m->nnames ? "" : "(none)", name, line);
    else if (!m->nnames)
        sb_printf(&sb,
                  "(none) (a kernel is a def decorated with @triton.jit, @jit or a name "
                  "bound to triton.jit)");
    tk_status s = err_set(TK_ERR_NOT_FOUND, "no kernel '%s' in '%s'; its kernels: %s", name,
                          m->comp.src.name, sb.len ? sb.data : "(none)");
    sb_free(&sb);
    return s;
}

static tk_status kernel_make(tk_module *m, int i, tk_kernel **out)
{
    tk_kernel *k = tk_xalloc(sizeof *k);
    if (!k)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    memset(k, 0, sizeof *k);
    k->mod = m;
    k->name = m->names[i];
    if (!comp_kernel_sig(&m->comp, k->name, &k->sig)) {
        tk_xfree(k);
        return err_set(TK_ERR_INTERNAL, "internal error: no signature for kernel '%s'",
                       m->names[i]);
    }
    if (k->sig.nparams > RT_MAX_PARAMS) {
        tk_xfree(k);
        return err_set(TK_ERR_INVALID, "kernel '%s' has %d parameters; tk launches at most %d",
                       m->names[i], k->sig.nparams, RT_MAX_PARAMS);
    }
    for (int p = 0; p < k->sig.nparams; p++)
        if (!k->sig.is_constexpr[p])
            k->runtime_idx[k->nruntime++] = p;
    rt_table_init(&k->table);
    tk_status s = rt_tune_init(k);
    if (s != TK_OK) {
        rt_table_free(&k->table, NULL);
        tk_xfree(k);
        return s;
    }
    *out = k;
    return TK_OK;
}

tk_status tk_module_kernel(tk_module *m, const char *name, tk_kernel **k)
{
    if (!m || !name || !k)
        return err_null_arg("tk_module_kernel", !m ? "mod" : !name ? "name" : "k");
    *k = NULL;
    /* an alias (`kern = triton.jit(_impl)`) is its def's kernel */
    const char *def = comp_kernel_def(&m->comp, name);
    int i;
    for (i = 0; i < m->nnames && strcmp(m->names[i], def ? def : name) != 0; i++)
        ;
    if (i == m->nnames)
        return not_found(m, name);
    tk_status s = TK_OK;
    pthread_mutex_lock(&m->lock);
    if (!m->kernels[i])
        s = kernel_make(m, i, &m->kernels[i]);
    *k = m->kernels[i];
    pthread_mutex_unlock(&m->lock);
    return s;
}

void (*rt_build_hook)(tk_kernel *k);

/* A build in flight, on its builder's stack, listed in the module. */
typedef struct RtBuilding {
    const tk_kernel *k;
    const RtKey *key;
    struct RtBuilding *next;
} RtBuilding;

static bool building(const tk_module *m, const tk_kernel *k, const RtKey *key)
{
    for (const RtBuilding *b = m->building; b; b = b->next)
        if (b->k == k && rt_key_eq(b->key, key))
            return true;
    return false;
}

static void unlist(tk_module *m, const RtBuilding *b)
{
    RtBuilding **at = &m->building;
    while (*at != b)
        at = &(*at)->next;
    *at = b->next;
}

/* Cache hits stop here. A miss builds outside the module lock, so builds of
 * different keys (the configs of an autotuned kernel) run in parallel; a
 * thread whose key is being built waits for that build and then finds it
 * (or, if it failed, builds it again and reports the error itself). */
tk_status rt_variant_get(tk_kernel *k, const RtLaunchArgs *la, RtVariant **out)
{
    RtVariant *v = rt_table_find(&k->table, &la->key, variant_key);
    if (v) {
        rt_stats_add(&rt_stats.memory_hits);
        *out = v;
        return TK_OK;
    }
    tk_module *m = k->mod;
    tk_status s = TK_OK;
    pthread_mutex_lock(&m->lock);
    while (!(v = rt_table_find(&k->table, &la->key, variant_key)) && building(m, k, &la->key))
        pthread_cond_wait(&m->built, &m->lock);
    if (v) {
        rt_stats_add(&rt_stats.memory_hits); /* another thread built it meanwhile */
    } else {
        RtBuilding me = {k, &la->key, m->building};
        m->building = &me;
        pthread_mutex_unlock(&m->lock);
        if (rt_build_hook)
            rt_build_hook(k);
        s = rt_jit_build(k, la, &v);
        pthread_mutex_lock(&m->lock);
        unlist(m, &me);
        if (s == TK_OK && !rt_table_insert(&k->table, &v->key, v)) {
            rt_variant_free(v);
            v = NULL;
            s = err_set(TK_ERR_NO_MEMORY, "out of memory caching kernel '%s'", k->name);
        }
        pthread_cond_broadcast(&m->built);
    }
    pthread_mutex_unlock(&m->lock);
    *out = v;
    return s;
}
