/* rt_tune_config.c: the settings of an autotuned kernel: its configs,
 * tuning key, pruning, and the reset_to_zero / restore_value buffers, read
 * from @triton.autotune (through sema's KernelSig) or given by the host with
 * tk_kernel_set_tuning. Assumes settings change only before the first tuned
 * launch (rt_tune.c sets `launched`). Guarantees: the tuner owns deep
 * copies; a changed config list changes configs_hash, so old disk choices
 * no longer apply. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rt.h"

static char *dup_text(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = tk_xalloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static void free_configs(tk_config *c, int n)
{
    for (int i = 0; c && i < n; i++) {
        for (int j = 0; j < c[i].ndefines; j++) {
            tk_xfree((char *)c[i].defines[j].name);
            tk_xfree((char *)c[i].defines[j].value);
        }
        tk_xfree((tk_define *)c[i].defines);
    }
    tk_xfree(c);
}

static void free_key(char **key, int n)
{
    for (int i = 0; key && i < n; i++)
        tk_xfree(key[i]);
    tk_xfree(key);
}

/* an entry of RtTune.table (rt_tune.c's TuneEntry): one block */
static void free_entry(void *e) { tk_xfree(e); }

void rt_tune_free(tk_kernel *k)
{
    RtTune *t = k->tune;
    if (!t)
        return;
    free_configs(t->configs, t->nconfigs);
    free_key(t->key, t->nkey);
    free_key(t->reset.zero, t->reset.nzero);
    free_key(t->reset.restore, t->reset.nrestore);
    rt_table_free(&t->table, free_entry);
    pthread_mutex_destroy(&t->lock);
    tk_xfree(t);
    k->tune = NULL;
}

/* A constexpr value as the text tk_const_text takes. */
static void value_text(const ConstValue *v, char *out, size_t cap)
{
    switch (v->kind) {
    case CV_INT: snprintf(out, cap, "%" PRId64, v->i); break;
    case CV_FLOAT: /* "1.0", not "1", which would read as an int */
        snprintf(out, cap, "%.17g", v->f);
        if (!strpbrk(out, ".eni") && strlen(out) + 2 < cap)
            strcat(out, ".0");
        break;
    case CV_BOOL: snprintf(out, cap, "%s", v->i ? "True" : "False"); break;
    case CV_DTYPE:
        snprintf(out, cap, "tl.%s", dtype_name(v->type.dt == DT_PTR ? v->type.elem : v->type.dt));
        break;
    case CV_STR: snprintf(out, cap, "'%s'", v->s ? v->s : ""); break;
    default: snprintf(out, cap, "None"); break;
    }
}

/* Deep copies of configs given as tk_config or as sema's KernelConfig. */
static tk_status copy_configs(const tk_config *in, const KernelConfig *kin, int n, tk_config **out)
{
    tk_config *c = tk_xalloc(sizeof *c * (size_t)(n ? n : 1));
    if (!c)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    memset(c, 0, sizeof *c * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        int nd = in ? in[i].ndefines : kin[i].ndefines; /* checked by check_config */
        tk_define *d = tk_xalloc(sizeof *d * (size_t)(nd ? nd : 1));
        if (!d) {
            free_configs(c, i);
            return err_set(TK_ERR_NO_MEMORY, "out of memory");
        }
        memset(d, 0, sizeof *d * (size_t)(nd ? nd : 1));
        c[i].defines = d;
        c[i].ndefines = nd;
        c[i].num_warps = in ? in[i].num_warps : kin[i].num_warps;
        c[i].num_stages = in ? in[i].num_stages : kin[i].num_stages;
        c[i].num_ctas = in ? in[i].num_ctas : 0;
        for (int j = 0; j < nd; j++) {
            char text[128];
            const ConstValue *cv = in ? NULL : &kin[i].defines[j].value;
            if (cv)
                value_text(cv, text, sizeof text);
            const char *name = in ? in[i].defines[j].name : kin[i].defines[j].name;
            const char *value = text;
            if (in)
                value = in[i].defines[j].value;
            else if ((cv->kind == CV_TUPLE || cv->kind == CV_FUNC) && cv->s)
                value = cv->s; /* a tuple's text may be long: it is its own */
            d[j].name = dup_text(name);
            d[j].value = dup_text(value);
            if (!d[j].name || !d[j].value) {
                free_configs(c, i + 1);
                return err_set(TK_ERR_NO_MEMORY, "out of memory");
            }
        }
    }
    *out = c;
    return TK_OK;
}

static tk_status copy_key(const char *const *in, int n, char ***out)
{
    char **key = tk_xalloc(sizeof *key * (size_t)(n ? n : 1));
    if (!key)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    memset(key, 0, sizeof *key * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        if (!in[i] || !(key[i] = dup_text(in[i]))) {
            free_key(key, n);
            return err_set(in[i] ? TK_ERR_NO_MEMORY : TK_ERR_INVALID, "bad tuning key %d", i);
        }
    *out = key;
    return TK_OK;
}

/* The configs' identity on disk: a changed config list invalidates old choices. */
static uint64_t hash_configs(const tk_config *c, int n)
{
    uint64_t h = rt_hash64(0x7475e1ULL, &n, sizeof n);
    for (int i = 0; i < n; i++) {
        h = rt_hash64(h, &c[i].num_warps, sizeof c[i].num_warps);
        h = rt_hash64(h, &c[i].num_stages, sizeof c[i].num_stages);
        if (c[i].num_ctas > 1) /* hashes of configs without it stay as they were */
            h = rt_hash64(h, &c[i].num_ctas, sizeof c[i].num_ctas);
        for (int j = 0; j < c[i].ndefines; j++) {
            h = rt_hash64(h, c[i].defines[j].name, strlen(c[i].defines[j].name) + 1);
            h = rt_hash64(h, c[i].defines[j].value, strlen(c[i].defines[j].value) + 1);
        }
    }
    return h;
}

static tk_status tune_make(tk_kernel *k, RtTune **out)
{
    RtTune *t = tk_xalloc(sizeof *t);
    if (!t)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    rt_table_init(&t->table);
    t->warmup_ms = k->sig.tune_warmup_ms; /* 0: the tuner's own budget */
    t->python = k->sig.tune_python;       /* a static string */
    t->config_hook = k->sig.tune_config_hook;
    t->rep_ms = k->sig.tune_rep_ms;
    tk_status s = copy_configs(NULL, k->sig.configs, k->sig.nconfigs, &t->configs);
    if (s == TK_OK) {
        t->nconfigs = k->sig.nconfigs;
        s = copy_key(k->sig.tune_keys, k->sig.ntune_keys, &t->key);
    }
    if (s == TK_OK)
        t->nkey = k->sig.ntune_keys;
    if (s == TK_OK)
        s = copy_key(k->sig.reset_to_zero, k->sig.nreset_to_zero, &t->reset.zero);
    if (s == TK_OK)
        t->reset.nzero = k->sig.nreset_to_zero;
    if (s == TK_OK)
        s = copy_key(k->sig.restore_value, k->sig.nrestore_value, &t->reset.restore);
    if (s == TK_OK)
        t->reset.nrestore = k->sig.nrestore_value;
    t->configs_hash = hash_configs(t->configs, t->nconfigs);
    k->tune = t;
    if (s != TK_OK)
        rt_tune_free(k);
    *out = k->tune;
    return s;
}

tk_status rt_tune_init(tk_kernel *k)
{
    RtTune *t;
    return k->sig.nconfigs > 0 ? tune_make(k, &t) : TK_OK;
}

static const char set_tuning[] = "tk_kernel_set_tuning";

/* Config i as tk_kernel_set_tuning reads it: counts, names and values. */
static tk_status check_config(const tk_config *c, int i)
{
    char p[48], n[48];
    snprintf(p, sizeof p, "configs[%d].defines", i);
    snprintf(n, sizeof n, "configs[%d].ndefines", i);
    tk_status s = err_check_count(set_tuning, p, c->defines, n, c->ndefines);
    int warps = c->num_warps, stages = c->num_stages;
    char why[160];
    snprintf(p, sizeof p, "configs[%d].", i);
    int ctas = c->num_ctas;
    if (s == TK_OK &&
        (!ir_launch_settings(&warps, &stages, p, why, sizeof why) ||
         !ir_launch_ctas(&ctas, p, why, sizeof why)))
        s = err_set(TK_ERR_INVALID, "%s: %s", set_tuning, why);
    for (int j = 0; s == TK_OK && j < c->ndefines; j++)
        if (!c->defines[j].name || !c->defines[j].value) {
            snprintf(p, sizeof p, "configs[%d].defines[%d].%s", i, j,
                     c->defines[j].name ? "value" : "name");
            s = err_null_arg(set_tuning, p);
        }
    return s;
}

/* Everything tk_kernel_set_tuning reads, checked before anything changes. */
static tk_status check_tuning(const tk_tune_options *o)
{
    if (o->configs && o->nconfigs == 0)
        return err_set(TK_ERR_INVALID, "%s: configs is not NULL but nconfigs is 0", set_tuning);
    tk_status s = err_check_count(set_tuning, "configs", o->configs, "nconfigs", o->nconfigs);
    for (int i = 0; s == TK_OK && o->configs && i < o->nconfigs; i++)
        s = check_config(&o->configs[i], i);
    if (s == TK_OK)
        s = err_check_count(set_tuning, "key", o->key, "nkey", o->nkey);
    for (int i = 0; s == TK_OK && o->key && i < o->nkey; i++)
        if (!o->key[i]) {
            char what[32];
            snprintf(what, sizeof what, "key[%d]", i);
            s = err_null_arg(set_tuning, what);
        }
    if (s == TK_OK && !(o->warmup_ms >= 0 && o->rep_ms >= 0))
        s = err_set(TK_ERR_INVALID, "%s: %s is %g", set_tuning,
                    o->warmup_ms >= 0 ? "rep_ms" : "warmup_ms",
                    o->warmup_ms >= 0 ? o->rep_ms : o->warmup_ms);
    return s;
}

tk_status tk_kernel_set_tuning(tk_kernel *k, const tk_tune_options *o)
{
    if (!k || !o)
        return err_null_arg(set_tuning, !k ? "k" : "opts");
    tk_status s = check_tuning(o);
    if (s != TK_OK)
        return s;
    pthread_mutex_lock(&k->mod->lock);
    RtTune *t = k->tune;
    if (t && t->launched)
        s = err_set(TK_ERR_INVALID,
                    "kernel '%s': tuning settings change only before its first "
                    "tuned launch",
                    k->name);
    else if (!t && !o->configs)
        s = err_set(TK_ERR_INVALID,
                    "kernel '%s' has no @triton.autotune configs: pass "
                    "configs",
                    k->name);
    else if (!t)
        s = tune_make(k, &t);
    if (s == TK_OK && o->configs) {
        tk_config *c;
        s = copy_configs(o->configs, NULL, o->nconfigs, &c);
        if (s == TK_OK) {
            free_configs(t->configs, t->nconfigs);
            t->configs = c;
            t->nconfigs = o->nconfigs;
            t->configs_hash = hash_configs(c, o->nconfigs);
        }
    }
    if (s == TK_OK && o->key) {
        char **key;
        s = copy_key(o->key, o->nkey, &key);
        if (s == TK_OK) {
            free_key(t->key, t->nkey);
            t->key = key;
            t->nkey = o->nkey;
        }
    }
    if (s == TK_OK) {
        t->prune = o->prune;
        t->prune_user = o->prune_user;
        t->config_defines = o->config_defines;
        t->config_defines_user = o->config_defines_user;
        t->hook = o->hook;
        t->hook_user = o->hook_user;
        t->reset.bytes = o->buffer_bytes;
        t->reset.user = o->buffer_user;
        if (o->warmup_ms > 0)
            t->warmup_ms = o->warmup_ms;
        if (o->rep_ms > 0)
            t->rep_ms = o->rep_ms;
    }
    pthread_mutex_unlock(&k->mod->lock);
    return s;
}

tk_status tk_kernel_configs(tk_kernel *k, const tk_config **configs, int *n)
{
    if (!k || !configs || !n)
        return err_null_arg("tk_kernel_configs", !k ? "k" : !configs ? "configs" : "n");
    const RtTune *t = k->tune;
    *configs = t ? t->configs : NULL;
    *n = t ? t->nconfigs : 0;
    return TK_OK;
}

bool rt_tune_applies(const tk_kernel *k, const tk_arg *args, int nargs)
{
    const RtTune *t = k->tune;
    if (!t)
        return false;
    for (int i = 0; args && i < nargs; i++) {
        if (args[i].kind != TK_ARG_CONST || !args[i].name)
            continue;
        for (int c = 0; c < t->nconfigs; c++)
            for (int j = 0; j < t->configs[c].ndefines; j++)
                if (strcmp(t->configs[c].defines[j].name, args[i].name) == 0)
                    return false; /* run as given, by hand */
    }
    return true;
}
