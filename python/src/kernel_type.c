/* kernel_type.c: the Python types of kernel.c: Kernel (subclassed by
 * tk.JITFunction) with its construction, its tuning, heuristics and warmup
 * methods, and Bound, the object kernel[grid] gives, whose call is the
 * launch (and gives the compiled kernel it ran). */
#include "kernel.h"

#include <string.h>

static PyTypeObject *bound_type;
static PyTypeObject *kernel_type;

int tkpy_is_kernel(PyObject *v) { return kernel_type && PyObject_TypeCheck(v, kernel_type); }

/* The key of `globals` bound to f (a new reference), or NULL. */
static PyObject *name_bound_to(PyObject *globals, PyObject *f)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (globals && PyDict_Check(globals) && PyDict_Next(globals, &pos, &key, &value))
        if (value == f && PyUnicode_Check(key))
            return Py_INCREF(key), key;
    return NULL;
}

PyObject *tkpy_jit_name(PyObject *owner, PyObject *f, const char *param)
{
    Kernel *F = (Kernel *)f, *K = (Kernel *)owner;
    if (!K || !strcmp(K->path, F->path))
        return PyUnicode_FromString(F->name);
    /* another file's function: tk finds it by the name the kernel's module
     * imports it under, as that module's Python does */
    PyObject *fn = PyObject_GetAttrString(owner, "fn");
    PyObject *globals = fn ? PyObject_GetAttrString(fn, "__globals__") : NULL;
    Py_XDECREF(fn);
    PyErr_Clear();
    PyObject *name = name_bound_to(globals, f);
    Py_XDECREF(globals);
    if (!name)
        PyErr_Format(PyExc_TypeError,
                     "tk: constexpr '%s' is the @jit function '%s' of %s, which the module of "
                     "kernel '%s' does not name: import it there, as tk looks it up in that "
                     "module",
                     param, F->name, F->path, K->name);
    return name;
}

/* A C string kept alive by a bytes object in `keep`. */
static const char *kept_str(PyObject *keep, PyObject *str)
{
    PyObject *b = PyUnicode_AsUTF8String(str);
    if (!b || PyList_Append(keep, b) < 0) {
        Py_XDECREF(b);
        return NULL;
    }
    Py_DECREF(b);
    return PyBytes_AsString(b);
}

/* One config: (Config, [(name, text), ...], num_warps, num_stages). */
static int read_config(Kernel *K, PyObject *item, tk_config *c, tk_define **next)
{
    PyObject *cfg, *defs;
    int warps, stages;
    if (!PyArg_ParseTuple(item, "OO!ii", &cfg, &PyList_Type, &defs, &warps, &stages))
        return -1;
    c->defines = *next;
    c->ndefines = (int)PyList_Size(defs);
    c->num_warps = warps;
    c->num_stages = stages;
    for (int i = 0; i < c->ndefines; i++) {
        PyObject *name, *text;
        if (!PyArg_ParseTuple(PyList_GetItem(defs, i), "UU", &name, &text))
            return -1;
        tk_define *d = (*next)++;
        if (!(d->name = kept_str(K->tune_keep, name)) || !(d->value = kept_str(K->tune_keep, text)))
            return -1;
    }
    return PyList_Append(K->configs, cfg);
}

static int count_defines(PyObject *configs, Py_ssize_t *n)
{
    *n = 0;
    for (Py_ssize_t i = 0; i < PyList_Size(configs); i++) {
        PyObject *item = PyList_GetItem(configs, i);
        PyObject *defs = item && PyTuple_Check(item) ? PyTuple_GetItem(item, 1) : NULL;
        if (!defs || !PyList_Check(defs)) {
            PyErr_SetString(PyExc_TypeError, "tk: configs are (Config, defines, warps, stages)");
            return -1;
        }
        *n += PyList_Size(defs);
    }
    return 0;
}

/* _set_tuning(configs, key, prune, warmup_ms, rep_ms[, pre_hook,
 * post_hook]): the autotuner's configs for every device's tk_kernel from
 * now on. */
static PyObject *set_tuning(PyObject *self, PyObject *args)
{
    Kernel *K = (Kernel *)self;
    PyObject *configs, *key, *prune, *pre = Py_None, *post = Py_None;
    double warmup, rep;
    Py_ssize_t ndefs;
    if (!PyArg_ParseTuple(args, "O!O!Odd|OO", &PyList_Type, &configs, &PyList_Type, &key, &prune,
                          &warmup, &rep, &pre, &post) ||
        count_defines(configs, &ndefs) < 0)
        return NULL;
    tkpy_free_tuning(K);
    Py_ssize_t n = PyList_Size(configs), nk = PyList_Size(key);
    K->cfgs = PyMem_Calloc((size_t)n + 1, sizeof *K->cfgs);
    K->defs = PyMem_Calloc((size_t)ndefs + 1, sizeof *K->defs);
    K->key = PyMem_Calloc((size_t)nk + 1, sizeof *K->key);
    K->tune_keep = PyList_New(0);
    K->configs = PyList_New(0);
    if (!K->cfgs || !K->defs || !K->key || !K->tune_keep || !K->configs)
        return tkpy_free_tuning(K), PyErr_NoMemory();
    tk_define *next = K->defs;
    for (Py_ssize_t i = 0; i < n; i++)
        if (read_config(K, PyList_GetItem(configs, i), &K->cfgs[i], &next) < 0)
            return tkpy_free_tuning(K), NULL;
    for (Py_ssize_t i = 0; i < nk; i++)
        if (!(K->key[i] = kept_str(K->tune_keep, PyList_GetItem(key, i))))
            return tkpy_free_tuning(K), NULL;
    K->ncfgs = (int)n, K->nkey = (int)nk;
    K->warmup_ms = warmup, K->rep_ms = rep;
    if (prune != Py_None)
        Py_INCREF(prune), K->prune = prune;
    if (pre != Py_None)
        Py_INCREF(pre), K->pre_hook = pre;
    if (post != Py_None)
        Py_INCREF(post), K->post_hook = post;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *h = PyObject_GetAttrString(PyList_GetItem(K->configs, i), "pre_hook");
        if (!h)
            PyErr_Clear();
        K->config_hooks |= h && h != Py_None;
        Py_XDECREF(h);
    }
    memset(K->k, 0, sizeof K->k); /* found again, and tuned with these */
    Py_RETURN_NONE;
}

tk_status tkpy_apply_no_spec(Kernel *K, tk_kernel *k)
{
    const char *names[TKPY_MAX_ARGS];
    int n = 0;
    for (int p = 0; p < K->nparams; p++)
        if (K->no_spec[p])
            names[n++] = K->pnames[p];
    return tk_kernel_set_no_specialize(k, names, n);
}

/* _set_no_specialize([name or index, ...]): do_not_specialize. */
static PyObject *set_no_specialize(PyObject *self, PyObject *arg)
{
    Kernel *K = (Kernel *)self;
    unsigned char mark[TKPY_MAX_ARGS] = {0};
    Py_ssize_t n = PySequence_Size(arg);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_GetItem(arg, i);
        long p = !item ? -2 : PyLong_Check(item) ? PyLong_AsLong(item) : -1;
        char *name = item && p == -1 && PyUnicode_Check(item) ? tkpy_strdup(item) : NULL;
        for (int q = 0; name && q < K->nparams; q++)
            if (!strcmp(K->pnames[q], name))
                p = q;
        if (p >= 0 && p < K->nparams && !K->is_const[p])
            mark[p] = 1;
        else if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError,
                         "tk: do_not_specialize names %R, not a runtime "
                         "parameter of '%s'\n%s",
                         item, K->name, K->where);
        Py_XDECREF(item);
        PyMem_Free(name);
        if (PyErr_Occurred())
            return NULL;
    }
    if (n < 0)
        return NULL;
    memcpy(K->no_spec, mark, (size_t)K->nparams);
    for (int i = 0; i <= TKPY_MAX_DEV; i++)
        if (K->k[i] && tkpy_apply_no_spec(K, K->k[i]) != TK_OK)
            return tkpy_raise(TK_ERR_INVALID, K->where), NULL;
    Py_RETURN_NONE;
}

/* _set_debug(flag): @jit(debug=True/False), the launches' default. */
static PyObject *set_debug(PyObject *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    ((Kernel *)self)->debug = on ? 1 : -1;
    Py_RETURN_NONE;
}

/* _set_heuristics([(name, fn), ...] above @autotune, [...] below it) */
static PyObject *set_heuristics(PyObject *self, PyObject *args)
{
    Kernel *K = (Kernel *)self;
    PyObject *above, *below;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &above, &PyList_Type, &below))
        return NULL;
    Py_XDECREF(K->heuristics);
    Py_XDECREF(K->cfg_heuristics);
    K->heuristics = PyList_Size(above) ? (Py_INCREF(above), above) : NULL;
    K->cfg_heuristics = PyList_Size(below) ? (Py_INCREF(below), below) : NULL;
    Py_RETURN_NONE;
}

/* _warmup(*args, **kw): compiles without launching and gives the compiled
 * kernel, the same object a launch of the same specialisation gives. */
static PyObject *kernel_warmup(PyObject *self, PyObject *args, PyObject *kw)
{
    Kernel *K = (Kernel *)self;
    Launch L;
    PyObject *objs[TKPY_MAX_SLOTS], *meta = NULL, *out = NULL;
    tk_launch_options o;
    tk_arg a[TKPY_MAX_SLOTS];
    tk_kernel *k = tkpy_prepare(K, args, kw, &L, objs, &meta, &o, 0, NULL);
    if (k) {
        for (int i = 0; i < L.n; i++)
            a[i] = tkpy_slot_arg(&L.slots[i]);
        out = tkpy_compiled(self, k, &L, a, NULL, 0, &o);
    }
    if (L.ctx)
        tkpy_unstage(&L, 0);
    Py_XDECREF(meta);
    return out;
}

static PyObject *kernel_getitem(PyObject *self, PyObject *grid)
{
    PyObject *b = PyType_GenericAlloc(bound_type, 0);
    if (!b)
        return NULL;
    PyObject **slots = (PyObject **)((char *)b + sizeof(PyObject));
    Py_INCREF(self), Py_INCREF(grid);
    slots[0] = self, slots[1] = grid;
    return b;
}

static PyObject *bound_call(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject **slots = (PyObject **)((char *)self + sizeof(PyObject));
    return tkpy_do_launch((Kernel *)slots[0], slots[1], args, kw);
}

static void bound_dealloc(PyObject *self)
{
    PyObject **slots = (PyObject **)((char *)self + sizeof(PyObject));
    PyTypeObject *tp = Py_TYPE(self);
    Py_CLEAR(slots[0]);
    Py_CLEAR(slots[1]);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyObject *kernel_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    return alloc(tp, 0); /* zeroed */
}

static PyMethodDef kernel_methods[] = {
    {"_set_tuning", set_tuning, METH_VARARGS, "Sets the autotuner's configs."},
    {"_set_heuristics", set_heuristics, METH_VARARGS, "Sets the heuristics."},
    {"_set_no_specialize", set_no_specialize, METH_O, "Sets do_not_specialize."},
    {"_set_debug", set_debug, METH_O, "Sets debug (device_assert checks)."},
    {"_warmup", (PyCFunction)(void (*)(void))kernel_warmup, METH_VARARGS | METH_KEYWORDS,
     "Compiles for these arguments without launching."},
    {NULL, NULL, 0, NULL}};

/* The type a parameter's annotation declares: None, or a type name as
 * torch spells it ("int64"); TK_VOID for None, -1 with an exception for a
 * name tk does not know. */
static int declared_type(PyObject *types, Py_ssize_t p, tk_dtype *out)
{
    *out = TK_VOID;
    if (types == Py_None)
        return 0;
    PyObject *t = PySequence_GetItem(types, p);
    char *name = t && t != Py_None ? tkpy_strdup(t) : NULL;
    int r = t && (t == Py_None || name) ? 0 : -1;
    if (name && (*out = tkpy_dtype_named(name)) == TK_VOID)
        PyErr_Format(PyExc_ValueError, "tk: no scalar type is named '%s'", name), r = -1;
    Py_XDECREF(t);
    PyMem_Free(name);
    return r;
}

static int kernel_params(Kernel *K, PyObject *params, PyObject *consts, PyObject *types)
{
    Py_ssize_t n = PySequence_Size(params);
    if (n < 0 || n > TKPY_MAX_ARGS || PySequence_Size(consts) != n ||
        (types != Py_None && PySequence_Size(types) != n)) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError,
                         "tk: a kernel takes at most %d parameters, and one "
                         "constexpr flag and one type each",
                         TKPY_MAX_ARGS);
        return -1;
    }
    K->pnames = PyMem_Calloc((size_t)n + 1, sizeof(char *));
    K->pobjs = PyMem_Calloc((size_t)n + 1, sizeof(PyObject *));
    K->is_const = PyMem_Calloc((size_t)n + 1, 1);
    K->no_spec = PyMem_Calloc((size_t)n + 1, 1);
    K->types = PyMem_Calloc((size_t)n + 1, sizeof(tk_dtype));
    if (!K->pnames || !K->pobjs || !K->is_const || !K->no_spec || !K->types)
        return PyErr_NoMemory(), -1;
    for (Py_ssize_t p = 0; p < n; p++) {
        PyObject *name = PySequence_GetItem(params, p), *c = PySequence_GetItem(consts, p);
        K->pnames[p] = name ? tkpy_strdup(name) : NULL;
        K->pobjs[p] = K->pnames[p] ? PyUnicode_InternFromString(K->pnames[p]) : NULL;
        K->is_const[p] = c && PyObject_IsTrue(c) == 1;
        Py_XDECREF(name), Py_XDECREF(c);
        K->nparams = (int)p + 1;
        if (!K->pobjs[p] || declared_type(types, p, &K->types[p]) < 0)
            return -1;
    }
    return 0;
}

/* Kernel(path, name, params, is_constexpr, defaults, where[, source[, types]]):
 * types holds, per parameter, the scalar type its annotation declares
 * ("int64") or None. */
int tkpy_kernel_init(PyObject *self, PyObject *args, PyObject *kw)
{
    Kernel *K = (Kernel *)self;
    PyObject *path, *name, *params, *consts, *defaults, *where, *source = Py_None;
    PyObject *types = Py_None;
    if (!PyArg_ParseTuple(args, "UUOOO!U|OO", &path, &name, &params, &consts, &PyDict_Type,
                          &defaults, &where, &source, &types))
        return -1;
    if (K->path) {
        PyErr_SetString(PyExc_RuntimeError, "tk: a Kernel is initialised once");
        return -1;
    }
    if (!(K->path = tkpy_strdup(path)) || !(K->name = tkpy_strdup(name)) ||
        !(K->where = tkpy_strdup(where)) || kernel_params(K, params, consts, types) < 0 ||
        (source != Py_None && !(K->source = tkpy_strdup(source))))
        return -1;
    Py_INCREF(defaults);
    K->defaults = defaults;
    return 0;
}

static PyType_Slot kernel_slots[] = {
    {Py_tp_new, (void *)kernel_new},
    {Py_tp_init, (void *)tkpy_kernel_init},
    {Py_tp_dealloc, (void *)tkpy_kernel_dealloc},
    {Py_tp_methods, kernel_methods},
    {Py_mp_subscript, (void *)kernel_getitem},
    {Py_tp_doc, (void *)"A @jit function of a source file, launched as kernel[grid](...)."},
    {0, NULL}};

static PyType_Spec kernel_spec = {"tk._tk.Kernel", sizeof(Kernel), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, kernel_slots};

static PyType_Slot bound_slots[] = {
    {Py_tp_call, (void *)bound_call},
    {Py_tp_dealloc, (void *)bound_dealloc},
    {Py_tp_doc, (void *)"kernel[grid]: call it with the kernel's arguments to launch."},
    {0, NULL}};

static PyType_Spec bound_spec = {"tk._tk.Bound", sizeof(PyObject) + 2 * sizeof(PyObject *), 0,
                                 Py_TPFLAGS_DEFAULT, bound_slots};

int tkpy_kernel_init_types(PyObject *m)
{
    PyObject *kt = PyType_FromSpec(&kernel_spec);
    if (!kt)
        return -1;
    kernel_type = (PyTypeObject *)kt;
    Py_INCREF(kt); /* kernel_type keeps one */
    if (PyModule_AddObject(m, "Kernel", kt) < 0) {
        Py_DECREF(kt);
        return -1;
    }
    bound_type = (PyTypeObject *)PyType_FromSpec(&bound_spec);
    if (!bound_type)
        return -1;
    Py_INCREF(bound_type);
    if (PyModule_AddObject(m, "Bound", (PyObject *)bound_type) < 0) {
        Py_DECREF(bound_type);
        return -1;
    }
    return 0;
}
