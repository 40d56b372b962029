/* kernel.c: the Kernel type, one @jit function of a source file, and
 * kernel[grid](...). A launch binds the Python arguments to the function's
 * parameters (positional, then by name, then the defaults), evaluates the
 * heuristics (those under @autotune per config, when libtk asks for a
 * config's constexprs), converts every value (args.c), picks the device
 * from the buffers, and calls tk_launch (or tk_launch_tuned when the grid
 * depends on an autotuned config) without the GIL, on the stream PyTorch
 * has current for that device unless stream= names one. The tk_kernel of
 * each device is found once and kept, so a repeated launch is a hit in
 * tk's cache. */
#include "kernel.h"

#include <stdio.h>
#include <string.h>


/* The launch in progress on this thread, for the tuner's callbacks. */
typedef struct Current {
    Kernel *K;
    Launch *L;
    PyObject *meta;                          /* parameter name -> value */
    PyObject *grid;                          /* the grid callable */
    const tk_config *cfg_base;               /* the tk_kernel's copy of the configs */
    PyObject **objs;                         /* the argument objects, by slot */
    PyObject *err_type, *err_value, *err_tb; /* an exception raised in a callback */
    int per_config;                          /* K->cfg_heuristics run per config */
    PyObject *keep; /* bytes the per-config defines' texts live in, or NULL */
    PyObject *kw;   /* the launch's keyword arguments (borrowed), or NULL */
} Current;
static _Thread_local Current *current;

/* ---- modules: one per (context, file), shared by the kernels of the file ---- */

typedef struct {
    tk_context *ctx;
    char *path;
    tk_module *mod;
} ModEntry;
static ModEntry mods[256];
static int nmods;

static tk_module *module_for(tk_context *ctx, const char *path, const char *source,
                             const char *where)
{
    for (int i = 0; i < nmods; i++)
        if (mods[i].ctx == ctx && !strcmp(mods[i].path, path))
            return mods[i].mod;
    if (nmods == (int)(sizeof mods / sizeof mods[0])) {
        PyErr_SetString(tkpy_Error, "tk: too many source files loaded");
        return NULL;
    }
    tk_module *m = NULL;
    tk_status s;
    Py_BEGIN_ALLOW_THREADS s =
        source ? tk_module_load_string(ctx, path, source, &m) : tk_module_load_file(ctx, path, &m);
    Py_END_ALLOW_THREADS char *copy = s == TK_OK ? PyMem_Malloc(strlen(path) + 1) : NULL;
    if (s != TK_OK || !copy) {
        if (s != TK_OK)
            tkpy_raise(s, where);
        else
            PyErr_NoMemory(), tk_module_destroy(m);
        return NULL;
    }
    strcpy(copy, path);
    mods[nmods++] = (ModEntry){ctx, copy, m};
    return m;
}

/* ---- tuning callbacks (called by libtk without the GIL) ---- */

static void keep_error(Current *c)
{
    if (!c->err_type)
        PyErr_Fetch(&c->err_type, &c->err_value, &c->err_tb);
    else
        PyErr_Clear();
}

/* A grid from a tuple, list or int ("(n,)", "n"); -1 on a bad one.
 * Triton's launcher reads three dimensions and ignores any past them
 * (FlagGems passes (M, n, 1, 1)): tk takes those when they are 1 and
 * refuses any other, which Triton would drop without a word. */
static int grid_of(PyObject *g, tk_grid *out)
{
    unsigned d[3] = {1, 1, 1};
    PyObject *seq = PyTuple_Check(g) ? (Py_INCREF(g), g)
        : PyLong_Check(g)            ? PyTuple_Pack(1, g)
                                     : PySequence_Tuple(g);
    if (!seq)
        return -1;
    Py_ssize_t n = PyTuple_Size(seq);
    if (n < 1) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "tk: a grid has 1 to 3 dimensions");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v = PyLong_AsLongLong(PyTuple_GetItem(seq, i));
        if (v < 0 || v > 0xffffffffLL || (i >= 3 && v != 1)) {
            if (!PyErr_Occurred() && i >= 3)
                PyErr_Format(PyExc_ValueError,
                             "tk: grid dimension %zd is %lld; a launch has 1 to 3 dimensions "
                             "(past the third, only 1 is allowed)",
                             i, v);
            else if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "tk: grid dimension %lld is out of range", v);
            Py_DECREF(seq);
            return -1;
        }
        if (i < 3)
            d[i] = (unsigned)v;
    }
    Py_DECREF(seq);
    *out = (tk_grid){d[0], d[1], d[2]};
    return 0;
}

static int run_heuristics(Kernel *K, PyObject *list, PyObject *meta, PyObject **vals);

/* META for a config: the launch's values, the config's (kwargs, or
 * Triton's all_kwargs with num_warps and the like where the config has
 * it), and the results of the heuristics below @autotune, which Triton
 * runs for each config. */
static PyObject *config_meta(Current *c, const tk_config *tc)
{
    Kernel *K = c->K;
    Py_ssize_t index = tc && c->cfg_base ? tc - c->cfg_base : -1;
    if (index < 0 || index >= PyList_Size(K->configs))
        return PyErr_Format(PyExc_RuntimeError, "tk: a callback got a config tk does not know");
    PyObject *meta = PyDict_Copy(c->meta);
    PyObject *cfg = meta ? PyList_GetItem(K->configs, index) : NULL;
    PyObject *kw = NULL;
    if (cfg && PyObject_HasAttrString(cfg, "all_kwargs"))
        kw = PyObject_CallMethod(cfg, "all_kwargs", NULL);
    else if (cfg)
        kw = PyObject_GetAttrString(cfg, "kwargs");
    int ok = kw && PyDict_Update(meta, kw) == 0;
    Py_XDECREF(kw);
    if (ok && c->per_config)
        ok = run_heuristics(K, K->cfg_heuristics, meta, NULL) == 0;
    if (!ok)
        Py_CLEAR(meta);
    return meta;
}

static tk_grid grid_cb(const tk_config *cfg, const tk_arg *args, int nargs, void *user)
{
    Current *c = user;
    tk_grid g = {0, 0, 0};
    PyGILState_STATE st = PyGILState_Ensure();
    PyObject *meta = config_meta(c, cfg);
    PyObject *r = meta ? PyObject_CallFunctionObjArgs(c->grid, meta, NULL) : NULL;
    if (!r || grid_of(r, &g) < 0) {
        keep_error(c);
        g = (tk_grid){0, 0, 0};
    }
    Py_XDECREF(meta);
    Py_XDECREF(r);
    PyGILState_Release(st);
    return g;
}

static void mark_kept(PyObject *all, PyObject *kept, int *keep, int n)
{
    for (int i = 0; i < n; i++) {
        PyObject *cfg = PyList_GetItem(all, i);
        int in = cfg ? PySequence_Contains(kept, cfg) : -1;
        keep[i] = in != 0; /* an error keeps the config */
    }
}

/* Does the function take **kwargs? */
static int takes_var_keywords(PyObject *fn)
{
    PyObject *code =
        PyObject_HasAttrString(fn, "__code__") ? PyObject_GetAttrString(fn, "__code__") : NULL;
    PyObject *flags = code ? PyObject_GetAttrString(code, "co_flags") : NULL;
    long f = flags ? PyLong_AsLong(flags) : 0;
    Py_XDECREF(code);
    Py_XDECREF(flags);
    PyErr_Clear();
    return (f & 0x08) != 0; /* CO_VARKEYWORDS */
}

/* Triton calls prune(configs, named_args, **kwargs), kwargs being the
 * launch's keyword arguments with grid and warmup (unsloth reads a
 * pointer passed by keyword from them); named_args here holds every
 * argument. A function without **kwargs (older Triton's form) gets two. */
static PyObject *call_prune(Current *c)
{
    PyObject *fn = c->K->prune;
    if (!takes_var_keywords(fn))
        return PyObject_CallFunctionObjArgs(fn, c->K->configs, c->meta, NULL);
    PyObject *pos = PyTuple_Pack(2, c->K->configs, c->meta);
    PyObject *kw = c->kw ? PyDict_Copy(c->kw) : PyDict_New();
    PyObject *r = NULL;
    if (pos && kw && PyDict_SetItemString(kw, "grid", c->grid ? c->grid : Py_None) == 0 &&
        PyDict_SetItemString(kw, "warmup", Py_False) == 0)
        r = PyObject_Call(fn, pos, kw);
    Py_XDECREF(pos);
    Py_XDECREF(kw);
    return r;
}

static void prune_cb(const tk_config *configs, int n, const tk_arg *args, int nargs, int *keep,
                     void *user)
{
    Current *c = current;
    if (!c || !c->K->prune) /* another Kernel of the function set the pruning */
        return;
    PyGILState_STATE st = PyGILState_Ensure();
    PyObject *r = call_prune(c);
    if (r && n == (int)PyList_Size(c->K->configs))
        mark_kept(c->K->configs, r, keep, n);
    if (!r)
        keep_error(c);
    Py_XDECREF(r);
    PyErr_Clear();
    PyGILState_Release(st);
}

/* A constexpr value as source text, in a new bytes object: what a
 * heuristic gives, as tk_const_text takes it ("64", "True", "tl.float16",
 * "'text'", "(1, 2)", "_relu"); numpy scalars by their item(). NULL with
 * TypeError. */
static PyObject *const_bytes(Kernel *K, PyObject *v, PyObject *name, int depth)
{
    PyObject *t = NULL;
    if (v == Py_None || PyBool_Check(v) || PyUnicode_Check(v) || PyLong_Check(v) ||
        PyFloat_Check(v) || PyTuple_Check(v) || tkpy_is_kernel(v) ||
        PyObject_HasAttrString(v, "_tk_text")) {
        char *param = tkpy_strdup(name);
        t = param ? tkpy_const_text((PyObject *)K, v, param) : NULL;
        PyMem_Free(param);
    } else if (depth == 0 && PyObject_HasAttrString(v, "item")) {
        PyObject *item = PyObject_CallMethod(v, "item", NULL);
        PyObject *b = item ? const_bytes(K, item, name, 1) : NULL;
        Py_XDECREF(item);
        return b;
    } else
        return PyErr_Format(PyExc_TypeError, "tk: heuristic %R gives %R, which no constexpr holds",
                            name, v);
    PyObject *b = t ? PyUnicode_AsUTF8String(t) : NULL;
    Py_XDECREF(t);
    return b;
}

/* A C string that lives as long as the launch: the bytes go to c->keep. */
static const char *kept_c(Current *c, PyObject *bytes)
{
    if (!bytes || (!c->keep && !(c->keep = PyList_New(0))) || PyList_Append(c->keep, bytes) < 0) {
        Py_XDECREF(bytes);
        return NULL;
    }
    Py_DECREF(bytes); /* the list holds it */
    return PyBytes_AsString(bytes);
}

/* The name heuristic i of a list sets (borrowed); NULL with an exception. */
static PyObject *heuristic_name(PyObject *list, Py_ssize_t i)
{
    PyObject *pair = PyList_GetItem(list, i);
    return pair ? PyTuple_GetItem(pair, 0) : NULL;
}

/* Whether heuristic i sets a name an earlier one of the list sets too
 * (the define goes out once, with the last value); -1 on an error. */
static int set_before(PyObject *list, Py_ssize_t i, PyObject *name)
{
    int seen = 0;
    for (Py_ssize_t j = 0; j < i && seen == 0; j++) {
        PyObject *other = heuristic_name(list, j);
        seen = other ? PyObject_RichCompareBool(other, name, Py_EQ) : -1;
    }
    return seen;
}

/* The heuristics below @autotune for one config (libtk's config_defines):
 * each name they set, once, with its value after them all. */
static int defines_cb(const tk_config *cfg, const tk_arg *args, int nargs, tk_define *out, int cap,
                      void *user)
{
    Current *c = current;
    if (!c)
        return -1;
    PyGILState_STATE st = PyGILState_Ensure();
    PyObject *meta = config_meta(c, cfg), *list = c->K->cfg_heuristics;
    int n = meta ? 0 : -1;
    for (Py_ssize_t i = 0; n >= 0 && i < PyList_Size(list); i++) {
        PyObject *name = heuristic_name(list, i);
        int seen = name ? set_before(list, i, name) : -1;
        if (seen == 1)
            continue;
        PyObject *v = seen == 0 ? PyDict_GetItem(meta, name) : NULL; /* borrowed */
        const char *key = v ? kept_c(c, PyUnicode_AsUTF8String(name)) : NULL;
        const char *text = key ? kept_c(c, const_bytes(c->K, v, name, 0)) : NULL;
        if (!text || n == cap)
            n = -1;
        else
            out[n++] = (tk_define){key, text};
    }
    if (n < 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "tk: kernel '%s' has more heuristics than tk can pass",
                         c->K->name);
        keep_error(c);
    }
    Py_XDECREF(meta);
    PyGILState_Release(st);
    return n;
}

/* The bytes of a reset_to_zero/restore_value buffer from its pointer on:
 * PyTorch sub-allocates, so the tuner must not go by the allocation. */
static size_t bytes_cb(const char *name, const tk_arg *args, int nargs, void *user)
{
    Current *c = current;
    if (!c)
        return 0;
    for (int i = 0; i < c->L->n; i++) {
        Slot *s = &c->L->slots[i];
        if (s->arg.kind == TK_ARG_PTR && !strcmp(s->param, name))
            return (size_t)(s->hi > 0 ? s->hi : 0);
    }
    return 0;
}

/* fn(meta, **kw); 0 with the exception set when it raised. */
static int call_hook(PyObject *fn, PyObject *meta, PyObject *kw)
{
    PyObject *a = PyTuple_Pack(1, meta);
    PyObject *r = a ? PyObject_Call(fn, a, kw) : NULL;
    int ok = r != NULL;
    Py_XDECREF(a);
    Py_XDECREF(r);
    return ok;
}

/* Triton's hooks around a config's runs, given the launch's named values
 * with the config's (config_meta): the config's pre_hook before each run,
 * timed or not, @autotune's pre_hook and post_hook around each timed run,
 * and its pre_hook with reset_only=True once a config is chosen. */
static int hook_cb(const tk_config *cfg, int stage, const tk_arg *args, int nargs, void *user)
{
    Current *c = current;
    if (!c)
        return -1;
    PyGILState_STATE st = PyGILState_Ensure();
    PyObject *meta = config_meta(c, cfg);
    PyObject *conf = meta ? PyList_GetItem(c->K->configs, cfg - c->cfg_base) : NULL; /* borrowed */
    PyObject *pre = conf ? PyObject_GetAttrString(conf, "pre_hook") : NULL;
    if (conf && !pre && PyErr_ExceptionMatches(PyExc_AttributeError)) { /* a config without one */
        PyErr_Clear();
        Py_INCREF(Py_None);
        pre = Py_None;
    }
    int ok = pre != NULL, run = stage == TK_HOOK_BEFORE_TIMED || stage == TK_HOOK_BEFORE_LAUNCH;
    /* an interpreted launch's buffers as the runtime left them (the
     * reset_to_zero buffers it zeroed after its choice), for the hooks to
     * see and for the restaging below not to undo */
    if (ok && c->L->ctx)
        ok = tkpy_sync_host(c->L) == 0;
    if (ok && run && pre != Py_None)
        ok = call_hook(pre, meta, NULL);
    if (ok && stage == TK_HOOK_CHOSEN && c->K->pre_hook) {
        PyObject *kw = Py_BuildValue("{s:O}", "reset_only", Py_True);
        ok = kw && call_hook(c->K->pre_hook, meta, kw);
        Py_XDECREF(kw);
    }
    if (ok && stage == TK_HOOK_BEFORE_TIMED && c->K->pre_hook)
        ok = call_hook(c->K->pre_hook, meta, NULL);
    if (ok && stage == TK_HOOK_AFTER_TIMED && c->K->post_hook) {
        PyObject *kw = Py_BuildValue("{s:O}", "exception", Py_None);
        ok = kw && call_hook(c->K->post_hook, meta, kw);
        Py_XDECREF(kw);
    }
    /* descriptors' blocks the hooks set reach the launch's specialisation */
    for (int i = 0; ok && run && i < c->L->n; i++)
        ok = tkpy_desc_reread(&c->L->slots[i], c->objs[i]) == 0;
    /* host buffers the hooks changed reach an interpreted launch */
    if (ok && stage != TK_HOOK_AFTER_TIMED && c->L->ctx)
        ok = tkpy_restage(c->L) == 0;
    if (!ok)
        keep_error(c);
    Py_XDECREF(pre);
    Py_XDECREF(meta);
    PyGILState_Release(st);
    return ok ? 0 : -1;
}

/* ---- finding the tk_kernel ---- */

/* Whether k has K's configs already: another Kernel of the same function
 * (the one under a heuristics decorator, as .fn gives it) set them, and
 * after its first tuned launch they stand. */
static int has_configs(Kernel *K, tk_kernel *k)
{
    const tk_config *c;
    int n;
    if (tk_kernel_configs(k, &c, &n) != TK_OK || n != K->ncfgs)
        return 0;
    for (int i = 0; i < n; i++) {
        const tk_config *mine = &K->cfgs[i];
        if (c[i].num_warps != mine->num_warps || c[i].num_stages != mine->num_stages ||
            c[i].ndefines != mine->ndefines)
            return 0;
        for (int j = 0; j < mine->ndefines; j++)
            if (strcmp(c[i].defines[j].name, mine->defines[j].name) ||
                strcmp(c[i].defines[j].value, mine->defines[j].value))
                return 0;
    }
    return 1;
}

/* At the first launch the module has run: the text to compile takes the
 * live values of the names its host code binds (tk/live.py), from the
 * Python method _live_source; None leaves the text as it is. */
static int take_live_source(Kernel *K)
{
    if (K->live)
        return 0;
    PyObject *text = PyObject_CallMethod((PyObject *)K, "_live_source", NULL);
    if (!text)
        return -1;
    int keep = text == Py_None;
    char *copy = keep ? NULL : tkpy_strdup(text);
    Py_DECREF(text);
    if (!keep && !copy)
        return -1;
    if (copy) {
        PyMem_Free(K->source);
        K->source = copy;
    }
    K->live = 1;
    return 0;
}

static tk_kernel *kernel_for(Kernel *K, Launch *L)
{
    int i = L->device == TKPY_INTERP ? 0 : 1 + L->device;
    if (K->k[i])
        return K->k[i];
    if (take_live_source(K) < 0)
        return NULL;
    tk_module *m = module_for(L->ctx, K->path, K->source, K->where);
    tk_kernel *k = NULL;
    tk_status s = m ? tk_module_kernel(m, K->name, &k) : TK_OK;
    if (!m)
        return NULL;
    if (s == TK_OK)
        s = tkpy_apply_no_spec(K, k);
    if (s == TK_OK && K->ncfgs > 0) {
        tk_tune_options o;
        memset(&o, 0, sizeof o);
        o.configs = K->cfgs;
        o.nconfigs = K->ncfgs;
        o.key = K->key;
        o.nkey = K->nkey;
        o.prune = K->prune ? prune_cb : NULL;
        o.warmup_ms = K->warmup_ms;
        o.rep_ms = K->rep_ms;
        o.buffer_bytes = bytes_cb;
        o.config_defines = K->cfg_heuristics ? defines_cb : NULL;
        o.hook = K->config_hooks || K->pre_hook || K->post_hook ? hook_cb : NULL;
        s = tk_kernel_set_tuning(k, &o);
        if (s == TK_ERR_INVALID && has_configs(K, k))
            s = TK_OK;
    }
    if (s != TK_OK) {
        tkpy_raise(s, K->where);
        return NULL;
    }
    return K->k[i] = k;
}

/* ---- binding the arguments ---- */

/* The parameter a str names, without converting it. */
static int param_index_obj(Kernel *K, PyObject *key)
{
    for (int p = 0; p < K->nparams; p++) /* a call's keywords are interned names */
        if (K->pobjs[p] == key)
            return p;
    for (int p = 0; p < K->nparams; p++)
        if (PyUnicode_CompareWithASCIIString(key, K->pnames[p]) == 0)
            return p;
    return -1;
}

/* The launch options kernel[grid](...) takes besides the parameters;
 * the first five are read (opt[0..4], borrowed), the others accepted. */
static const char *const option_names[] = {"num_warps",        "num_stages", "stream",
                                           "enable_fp_fusion", "launch_pdl", "debug",
                                           "num_ctas",         "grid",       "maxnreg"};
enum { NOPTIONS = sizeof option_names / sizeof option_names[0], NREAD = 6 };

/* Whether key is an option; its value goes to opt[] when it is read. */
static int take_option(PyObject *key, PyObject *value, PyObject **opt)
{
    for (int i = 0; i < NOPTIONS; i++)
        if (PyUnicode_CompareWithASCIIString(key, option_names[i]) == 0) {
            if (i < NREAD)
                opt[i] = value;
            return 1;
        }
    return 0;
}

/* Whether some config sets parameter p: its value, not the default, is
 * the one a tuned launch passes, as Triton's autotuner passes it (a
 * default would also name the constexpr and make the launch untuned). */
static int set_by_config(Kernel *K, int p)
{
    for (int i = 0; i < K->ncfgs; i++)
        for (int j = 0; j < K->cfgs[i].ndefines; j++)
            if (!strcmp(K->pnames[p], K->cfgs[i].defines[j].name))
                return 1;
    return 0;
}

/* Fills vals[p] (borrowed) from the positional arguments, then the
 * keywords other than the launch options (those go to opt), then the
 * defaults. */
static int bind(Kernel *K, PyObject *args, PyObject *kw, PyObject **vals, PyObject **opt)
{
    Py_ssize_t n = PyTuple_Size(args);
    if (n > K->nparams)
        return PyErr_Format(PyExc_TypeError,
                            "tk: kernel '%s' takes %d arguments but %zd were "
                            "given\n%s",
                            K->name, K->nparams, n, K->where),
               -1;
    for (int p = 0; p < K->nparams; p++)
        vals[p] = p < n ? PyTuple_GetItem(args, p) : NULL;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (kw && PyDict_Next(kw, &pos, &key, &value)) {
        int p = param_index_obj(K, key);
        /* a parameter named like an option (tutorial 02's num_stages
         * constexpr): a keyword sets both, as Triton passes its keywords
         * to the parameters and to its compile options (not the stream);
         * after the parameter's value by position, the keyword is the
         * option alone (a compiled kernel's launch gives both) */
        int compile_opt = p >= 0 && PyUnicode_CompareWithASCIIString(key, "stream") != 0;
        if (compile_opt && vals[p] && take_option(key, value, opt))
            continue;
        if (compile_opt && PyLong_Check(value))
            take_option(key, value, opt);
        if (p >= 0 && vals[p])
            return PyErr_Format(PyExc_TypeError,
                                "tk: kernel '%s' got multiple values for "
                                "argument '%U'\n%s",
                                K->name, key, K->where),
                   -1;
        if (p >= 0)
            vals[p] = value;
        else if (!take_option(key, value, opt))
            return PyErr_Format(PyExc_TypeError,
                                "tk: kernel '%s' got an unexpected keyword "
                                "argument '%U'\n%s",
                                K->name, key, K->where),
                   -1;
    }
    for (int p = 0; p < K->nparams; p++) /* by the interned name: no str made per launch */
        if (!vals[p] && K->defaults && !set_by_config(K, p))
            vals[p] = PyDict_GetItem(K->defaults, K->pobjs[p]);
    return 0;
}

/* The launch's named values: what META and heuristics see, the launch
 * options given as keywords (num_warps=...) too, as Triton's heuristics
 * see a launch's keywords (under @autotune, the config's). */
static PyObject *named(Kernel *K, PyObject **vals, PyObject *kw)
{
    PyObject *d = PyDict_New(), *key, *value, *unread[NREAD];
    for (int p = 0; d && p < K->nparams; p++)
        if (vals[p] && PyDict_SetItem(d, K->pobjs[p], vals[p]) < 0)
            Py_CLEAR(d);
    Py_ssize_t pos = 0;
    while (d && kw && PyDict_Next(kw, &pos, &key, &value))
        if (param_index_obj(K, key) < 0 && take_option(key, value, unread) &&
            PyDict_SetItem(d, key, value) < 0)
            Py_CLEAR(d);
    return d;
}

/* Heuristics: each fn(named values) of `list` sets a constexpr; results
 * go in meta (which owns them) and, when vals is not NULL, in vals. */
static int run_heuristics(Kernel *K, PyObject *list, PyObject *meta, PyObject **vals)
{
    Py_ssize_t n = list ? PyList_Size(list) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GetItem(list, i);
        PyObject *name = pair ? PyTuple_GetItem(pair, 0) : NULL;
        PyObject *fn = pair ? PyTuple_GetItem(pair, 1) : NULL;
        PyObject *v = fn ? PyObject_CallFunctionObjArgs(fn, meta, NULL) : NULL;
        int ok = v && PyDict_SetItem(meta, name, v) == 0;
        Py_XDECREF(v);
        if (!ok && list == K->heuristics && K->ncfgs > 0 &&
            PyErr_ExceptionMatches(PyExc_KeyError)) {
            PyObject *t, *val, *tb; /* most likely a config's constexpr */
            PyErr_Fetch(&t, &val, &tb);
            PyErr_NormalizeException(&t, &val, &tb);
            PyErr_Format(PyExc_KeyError,
                         "tk: heuristic %R of kernel '%s' reads %S, which the launch does not "
                         "give: a heuristic above @autotune runs before tuning, as in Triton, so "
                         "it cannot read a config's values (put it below @autotune)\n%s",
                         name, K->name, val ? val : Py_None, K->where);
            Py_XDECREF(t), Py_XDECREF(val), Py_XDECREF(tb);
        }
        if (!ok)
            return -1;
        if (!PyUnicode_Check(name))
            return PyErr_Format(PyExc_TypeError,
                                "tk: a heuristic of kernel '%s' is named %R; a "
                                "heuristic names a constexpr parameter (a str)\n%s",
                                K->name, name, K->where),
                   -1;
        int p = param_index_obj(K, name);
        if (p >= 0 && vals)
            vals[p] = PyDict_GetItem(meta, name);
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* Whether the bound values give a constexpr some config sets: libtk then
 * runs the launch as given, untuned (rt_tune_applies). */
static int names_config(Kernel *K, PyObject **vals)
{
    for (int i = 0; i < K->ncfgs; i++)
        for (int j = 0; j < K->cfgs[i].ndefines; j++)
            for (int p = 0; p < K->nparams; p++)
                if (vals[p] && K->is_const[p] && !strcmp(K->pnames[p], K->cfgs[i].defines[j].name))
                    return 1;
    return 0;
}

/* Converts the bound values into L's slots; a runtime parameter left
 * without a value is a TypeError naming every one. */
static int convert(Kernel *K, PyObject **vals, PyObject **objs, Launch *L)
{
    char missing[512];
    missing[0] = 0;
    for (int p = 0; p < K->nparams; p++) {
        if (!vals[p]) {
            if (!K->is_const[p] && strlen(missing) + strlen(K->pnames[p]) + 4 < sizeof missing)
                strcat(strcat(missing, *missing ? ", " : ""), K->pnames[p]);
            continue;
        }
        int first = L->n;
        int r = K->is_const[p] ? tkpy_const_arg(L, vals[p], K->pnames[p], &L->slots[L->n++])
                               : tkpy_runtime_args(L, vals[p], K->pnames[p], K->no_spec[p]);
        if (r == 0 && K->types[p] != TK_VOID)
            r = tkpy_typed_scalar(vals[p], K->pnames[p], K->types[p], &L->slots[first]);
        if (r < 0) {
            PyObject *t, *v, *tb; /* add the kernel's def line to the message */
            PyErr_Fetch(&t, &v, &tb);
            PyObject *str = v ? PyObject_Str(v) : NULL;
            if (str)
                PyErr_Format(t, "%U\n%s", str, K->where);
            else
                PyErr_Restore(t, v, tb), t = v = tb = NULL;
            Py_XDECREF(str), Py_XDECREF(t), Py_XDECREF(v), Py_XDECREF(tb);
            return -1;
        }
        for (int i = first; i < L->n; i++)
            objs[i] = vals[p];
    }
    if (*missing)
        return PyErr_Format(PyExc_TypeError, "tk: kernel '%s' is missing argument%s %s\n%s",
                            K->name, strchr(missing, ',') ? "s" : "", missing, K->where),
               -1;
    return 0;
}

/* num_warps, num_stages, stream=, enable_fp_fusion, launch_pdl and debug
 * (opt[0..5], as bind found them; debug: else the kernel's @jit(debug=)). */
static int launch_options(PyObject **opt, Launch *L, const Kernel *K, tk_launch_options *o)
{
    memset(o, 0, sizeof *o);
    PyObject *w = opt[0], *st = opt[1], *sm = opt[2], *fu = opt[3], *pdl = opt[4], *dbg = opt[5];
    o->debug = K->debug;
    if (dbg && dbg != Py_None) {
        int on = PyObject_IsTrue(dbg);
        if (on < 0)
            return -1;
        o->debug = on ? 1 : -1;
    }
    o->num_warps = w && w != Py_None ? (int)PyLong_AsLong(w) : 0;
    o->num_stages = st && st != Py_None ? (int)PyLong_AsLong(st) : 0;
    if (fu && fu != Py_None) {
        int on = PyObject_IsTrue(fu);
        if (on < 0)
            return -1;
        o->fp_fusion = on ? 1 : -1;
    }
    if (pdl && pdl != Py_None) {
        int on = PyObject_IsTrue(pdl);
        if (on < 0)
            return -1;
        o->launch_pdl = on;
    }
    if (sm && sm != Py_None) {
        PyObject *raw =
            PyLong_Check(sm) ? (Py_INCREF(sm), sm) : PyObject_GetAttrString(sm, "cuda_stream");
        o->stream = raw ? PyLong_AsVoidPtr(raw) : NULL;
        Py_XDECREF(raw);
    } else if (L->device >= 0)
        o->stream = tkpy_torch_stream(L->device);
    return PyErr_Occurred() ? -1 : 0;
}

/* Everything a launch and a warmup share: binding, heuristics, slots,
 * placement and the tk_kernel. On success meta holds the named values. */
tk_kernel *tkpy_prepare(Kernel *K, PyObject *args, PyObject *kw, Launch *L, PyObject **objs,
                        PyObject **meta, tk_launch_options *o, int need_meta, int *per_config)
{
    PyObject *vals[TKPY_MAX_ARGS], *opt[NREAD] = {NULL};
    L->n = 0;
    L->used = 0;
    L->ctx = NULL;
    L->owner = (PyObject *)K;
    L->extents = K->ncfgs > 0;
    *meta = NULL;
    need_meta = need_meta || K->heuristics || K->cfg_heuristics || K->prune || K->config_hooks ||
        K->pre_hook || K->post_hook;
    if (bind(K, args, kw, vals, opt) < 0 || (need_meta && !(*meta = named(K, vals, kw))) ||
        run_heuristics(K, K->heuristics, *meta, vals) < 0)
        return NULL;
    /* below @autotune, Triton runs them for each config; here when nothing is tuned */
    int tuned = per_config && K->ncfgs > 0 && K->cfg_heuristics && !names_config(K, vals);
    if (per_config)
        *per_config = tuned;
    if ((!tuned && run_heuristics(K, K->cfg_heuristics, *meta, vals) < 0) ||
        convert(K, vals, objs, L) < 0 || tkpy_place(L, K->where) < 0 ||
        launch_options(opt, L, K, o) < 0)
        return NULL;
    return kernel_for(K, L);
}

/* The tk_args of the slots, one after another, as tk_launch takes them. */
static tk_arg *arg_array(Launch *L, tk_arg *out)
{
    for (int i = 0; i < L->n; i++)
        out[i] = tkpy_slot_arg(&L->slots[i]);
    return out;
}

static tk_status launch_tuned(tk_kernel *k, PyObject *grid, Current *c, Launch *L,
                              const tk_launch_options *o, const tk_arg *a)
{
    tk_status s;
    c->grid = grid;
    Py_BEGIN_ALLOW_THREADS s = tk_launch_tuned(k, grid_cb, c, a, L->n, o);
    Py_END_ALLOW_THREADS return s;
}

static tk_status launch_plain(tk_kernel *k, PyObject *grid, Current *c, Launch *L,
                              const tk_launch_options *o, tk_arg *a, int *launched)
{
    tk_grid g;
    *launched = 0;
    PyObject *r = PyCallable_Check(grid) ? PyObject_CallFunctionObjArgs(grid, c->meta, NULL)
                                         : (Py_INCREF(grid), grid);
    int ok = r && grid_of(r, &g) == 0;
    Py_XDECREF(r);
    if (!ok)
        return TK_ERR_INTERNAL; /* the Python exception is set */
    if (g.x == 0 || g.y == 0 || g.z == 0)
        return TK_OK; /* an empty grid launches nothing, as in Triton */
    *launched = 1;
    if (tkpy_skip_launch)
        return TK_OK;
    /* a Kernel without configs never tunes, though another Kernel of the
     * function (its @autotune layer, whose compiled kernel this may be)
     * gave the shared tk_kernel configs */
    tk_launch_options given = *o;
    given.as_given = c->K->ncfgs == 0;
    tk_status s;
    Py_BEGIN_ALLOW_THREADS s = tk_launch(k, g, a, L->n, &given);
    Py_END_ALLOW_THREADS return s;
}

/* Whether the launch's constexprs give one that some config sets: libtk
 * then ran it as given, untuned (rt_tune_applies). */
static int slots_name_config(Kernel *K, const Launch *L)
{
    for (int i = 0; i < L->n; i++) {
        const tk_arg *a = &L->slots[i].arg;
        for (int c = 0; a->kind == TK_ARG_CONST && a->name && c < K->ncfgs; c++)
            for (int j = 0; j < K->cfgs[c].ndefines; j++)
                if (!strcmp(a->name, K->cfgs[c].defines[j].name))
                    return 1;
    }
    return 0;
}

/* The compiled kernel a launch ran. A tuned launch ran its chosen
 * config's (with the heuristics under @autotune run for it), and that
 * config becomes the kernel's best_config, as Triton's autotuner sets it. */
static PyObject *launched_kernel(Kernel *K, tk_kernel *k, Current *c, const Launch *L,
                                 const tk_launch_options *o, const tk_arg *a)
{
    static PyObject *best_name;
    if (K->ncfgs == 0 || slots_name_config(K, L))
        return tkpy_compiled((PyObject *)K, k, L, a, NULL, 0, o);
    if (!best_name && !(best_name = PyUnicode_InternFromString("best_config")))
        return NULL;
    tk_tune_choice ch;
    tk_status s = tk_kernel_tuned_config(k, a, L->n, o, &ch); /* its callbacks take the GIL */
    if (s != TK_OK && !c->err_type)
        return tkpy_raise(s, K->where), NULL;
    PyObject *cfg = s == TK_OK ? PyList_GetItem(K->configs, ch.index) : NULL; /* borrowed */
    if (!cfg || PyObject_SetAttr((PyObject *)K, best_name, cfg) < 0)
        return NULL;
    tk_define extra[TKPY_MAX_EXTRA];
    int n = ch.config.ndefines < TKPY_MAX_EXTRA ? ch.config.ndefines : TKPY_MAX_EXTRA;
    memcpy(extra, ch.config.defines, sizeof *extra * (size_t)n);
    if (c->per_config) {
        int more = defines_cb(&c->cfg_base[ch.index], a, L->n, extra + n, TKPY_MAX_EXTRA - n, c);
        if (more < 0)
            return NULL; /* the error is kept in c */
        n += more;
    }
    tk_launch_options co = *o;
    co.num_warps = ch.config.num_warps ? ch.config.num_warps : o->num_warps;
    co.num_stages = ch.config.num_stages ? ch.config.num_stages : o->num_stages;
    return tkpy_compiled((PyObject *)K, k, L, a, extra, n, &co);
}

PyObject *tkpy_do_launch(Kernel *K, PyObject *grid, PyObject *args, PyObject *kw)
{
    Launch L;
    PyObject *objs[TKPY_MAX_SLOTS], *meta = NULL, *out = NULL;
    tk_launch_options o;
    tk_arg a[TKPY_MAX_SLOTS];
    int per_config = 0, launched = 0;
    tk_kernel *k =
        tkpy_prepare(K, args, kw, &L, objs, &meta, &o, PyCallable_Check(grid), &per_config);
    tk_status s = TK_ERR_INTERNAL;
    Current c = {K, &L, meta, NULL, NULL, objs, NULL, NULL, NULL, per_config, NULL, kw};
    int n = 0;
    if (k && K->ncfgs > 0 && (s = tk_kernel_configs(k, &c.cfg_base, &n)) != TK_OK)
        k = NULL, tkpy_raise(s, K->where);
    if (k) {
        current = &c;
        if (K->ncfgs > 0 && PyCallable_Check(grid))
            s = launch_tuned(k, grid, &c, &L, &o, arg_array(&L, a)), launched = 1;
        else
            s = launch_plain(k, grid, &c, &L, &o, arg_array(&L, a), &launched);
        /* what ran, found while the arguments are staged and the tuner's
         * callbacks can run */
        if (s == TK_OK && !c.err_type && launched && !(out = launched_kernel(K, k, &c, &L, &o, a)))
            keep_error(&c);
        current = NULL;
        if (c.err_type)
            PyErr_Restore(c.err_type, c.err_value, c.err_tb);
        else if (s != TK_OK && !PyErr_Occurred())
            tkpy_raise(s, K->where);
    }
    if (L.ctx && tkpy_unstage(&L, s == TK_OK) < 0)
        s = TK_ERR_IO;
    Py_XDECREF(meta);
    Py_XDECREF(c.keep);
    if (s != TK_OK || PyErr_Occurred()) {
        Py_XDECREF(out);
        return NULL;
    }
    if (!out)
        Py_RETURN_NONE; /* an empty grid */
    return out;
}

/* ---- the Python face ---- */

void tkpy_free_tuning(Kernel *K)
{
    PyMem_Free(K->cfgs);
    PyMem_Free(K->defs);
    PyMem_Free((void *)K->key);
    K->cfgs = NULL, K->defs = NULL, K->key = NULL, K->ncfgs = K->nkey = 0;
    Py_CLEAR(K->tune_keep);
    Py_CLEAR(K->configs);
    Py_CLEAR(K->prune);
    Py_CLEAR(K->pre_hook);
    Py_CLEAR(K->post_hook);
    K->config_hooks = 0;
}

void tkpy_kernel_dealloc(PyObject *self)
{
    Kernel *K = (Kernel *)self;
    PyTypeObject *tp = Py_TYPE(self);
    tkpy_free_tuning(K);
    Py_CLEAR(K->compiled);
    Py_CLEAR(K->last_key);
    Py_CLEAR(K->last_ck);
    Py_CLEAR(K->defaults);
    Py_CLEAR(K->heuristics);
    Py_CLEAR(K->cfg_heuristics);
    for (int p = 0; K->pnames && p < K->nparams; p++)
        PyMem_Free(K->pnames[p]);
    for (int p = 0; K->pobjs && p < K->nparams; p++)
        Py_XDECREF(K->pobjs[p]);
    PyMem_Free(K->pnames);
    PyMem_Free(K->pobjs);
    PyMem_Free(K->is_const);
    PyMem_Free(K->no_spec);
    PyMem_Free(K->types);
    PyMem_Free(K->path), PyMem_Free(K->name), PyMem_Free(K->where), PyMem_Free(K->source);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}
