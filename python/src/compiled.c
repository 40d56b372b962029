/* compiled.c: the compiled-kernel objects (tk.CompiledKernel, as Triton's
 * CompiledKernel) that warmup() and a launch give. Each Kernel keeps one
 * per specialisation (device, the runtime arguments' types and hints, the
 * constexprs, the compile options), found by a key of raw bytes so that a
 * launch pays a lookup, not a compile or a formatted signature. A miss asks
 * libtk for the kernel's resources (tk_kernel_prepare: a cache hit after a
 * launch) and has the Python layer make the object (Kernel._compiled). */
#include "kernel.h"

#include <stdio.h>
#include <string.h>

enum { KEY_CAP = 2048 };

typedef struct Key {
    unsigned char b[KEY_CAP];
    size_t n;
    int full; /* the specialisation did not fit: it is made anew, not kept */
} Key;

static void put(Key *k, const void *p, size_t n)
{
    if (k->full || n > KEY_CAP - k->n) {
        k->full = 1;
        return;
    }
    memcpy(k->b + k->n, p, n);
    k->n += n;
}

static void put_int(Key *k, long long v) { put(k, &v, sizeof v); }

static void put_str(Key *k, const char *s)
{
    s = s ? s : "";
    put(k, s, strlen(s) + 1);
}

/* What tells one compiled kernel from another: what the signature spells
 * (kinds, types, hints, descriptor blocks, tuple shapes), the constexprs,
 * the config's extra defines and the options that change the code. */
static void make_key(Key *key, const Launch *L, const tk_define *extra, int nextra,
                     const tk_launch_options *o)
{
    put_int(key, L->device);
    put_int(key, o->num_warps);
    put_int(key, o->num_stages);
    put_int(key, o->fp_fusion);
    put_int(key, o->launch_pdl);
    put_int(key, o->debug);
    for (int i = 0; i < L->n; i++) {
        const Slot *s = &L->slots[i];
        const tk_arg *a = &s->arg;
        unsigned char head[4] = {(unsigned char)a->kind, (unsigned char)a->dtype,
                                 (unsigned char)tkpy_slot_hint(s), (unsigned char)s->is_desc};
        put(key, head, sizeof head);
        if (a->kind == TK_ARG_TUPLE)
            put_int(key, a->v.i);
        if (a->kind == TK_ARG_CONST) {
            put_str(key, a->name);
            put(key, a->text ? "t" : "v", 1);
            if (a->text)
                put_str(key, a->text);
            else
                put(key, &a->v, sizeof a->v);
        }
        for (int r = 0; s->is_desc && r < s->desc.rank && r < TK_DESC_MAX_RANK; r++)
            put_int(key, s->desc.block[r]);
    }
    for (int i = 0; i < nextra; i++) {
        put_str(key, extra[i].name);
        put_str(key, extra[i].value);
    }
}

/* The constexprs as (name, text) pairs: the launch's, then the extra
 * defines (a tuned launch's config and its heuristics). */
static PyObject *define_list(const Launch *L, const tk_define *extra, int nextra)
{
    PyObject *out = PyList_New(0);
    for (int i = 0; out && i < L->n + nextra; i++) {
        const tk_arg *a = i < L->n ? &L->slots[i].arg : NULL;
        char buf[64];
        const char *name = a ? a->name : extra[i - L->n].name;
        const char *text = a ? (a->text ? a->text : buf) : extra[i - L->n].value;
        if (a && a->kind != TK_ARG_CONST)
            continue;
        if (a && !a->text && a->dtype == TK_F64)
            snprintf(buf, sizeof buf, "%.17g", a->v.f);
        else if (a && !a->text)
            snprintf(buf, sizeof buf, "%lld", (long long)a->v.i);
        PyObject *t = Py_BuildValue("(ss)", name, text);
        if (!t || PyList_Append(out, t) < 0)
            Py_CLEAR(out);
        Py_XDECREF(t);
    }
    return out;
}

/* A new compiled-kernel object: libtk's resources for the arguments (and
 * the extra defines), handed to self._compiled((registers, spill bytes,
 * shared bytes, num_warps, threads, signature, defines, device,
 * num_stages, max threads, fp fusion)). */
static PyObject *compiled_make(PyObject *self, tk_kernel *k, const Launch *L, const tk_arg *a,
                               const tk_define *extra, int nextra, const tk_launch_options *o)
{
    static PyObject *method;
    Kernel *K = (Kernel *)self;
    tk_arg all[TKPY_MAX_SLOTS + TKPY_MAX_EXTRA];
    tk_kernel_info info;
    char sig[2048];
    if (nextra > TKPY_MAX_EXTRA)
        return PyErr_Format(PyExc_ValueError, "tk: kernel '%s' has more constexprs than tk keeps",
                            K->name);
    if (!method && !(method = PyUnicode_InternFromString("_compiled")))
        return NULL;
    memcpy(all, a, sizeof *a * (size_t)L->n);
    for (int i = 0; i < nextra; i++)
        all[L->n + i] = tk_const_text(extra[i].name, extra[i].value);
    tk_status s;
    Py_BEGIN_ALLOW_THREADS s = tk_kernel_prepare(k, all, L->n + nextra, o, &info);
    Py_END_ALLOW_THREADS if (s != TK_OK) return tkpy_raise(s, K->where), NULL;
    if (tkpy_signature(L, sig, sizeof sig) < 0)
        return PyErr_Format(PyExc_ValueError, "tk: the signature of '%s' is too long", K->name);
    PyObject *defines = define_list(L, extra, nextra);
    PyObject *t = defines
        ? Py_BuildValue("(iiiiisNiiiii)", info.registers, info.spill_bytes, info.shared_bytes,
                        info.num_warps, info.threads, sig, defines, L->device,
                        o->num_stages ? o->num_stages : 3, info.max_threads, o->fp_fusion, o->debug)
        : NULL;
    PyObject *ck = t ? PyObject_CallMethodObjArgs(self, method, t, NULL) : NULL;
    Py_XDECREF(t);
    return ck;
}

/* Whether key is the last one looked up (K->last_key). */
static int is_last(const Kernel *K, const Key *key)
{
    if (!K->last_key || PyBytes_Size(K->last_key) != (Py_ssize_t)key->n)
        return 0;
    const char *b = PyBytes_AsString(K->last_key);
    return b && !memcmp(b, key->b, key->n);
}

/* The dict's object for key (a new reference), made on a miss; it and its
 * key become the last ones. */
static PyObject *compiled_lookup(PyObject *self, const Key *key, tk_kernel *k, const Launch *L,
                                 const tk_arg *a, const tk_define *extra, int nextra,
                                 const tk_launch_options *o)
{
    Kernel *K = (Kernel *)self;
    if (!K->compiled && !(K->compiled = PyDict_New()))
        return NULL;
    PyObject *kb = PyBytes_FromStringAndSize((const char *)key->b, (Py_ssize_t)key->n);
    PyObject *ck = kb ? PyDict_GetItemWithError(K->compiled, kb) : NULL; /* borrowed */
    if (ck)
        Py_INCREF(ck);
    else if (kb && !PyErr_Occurred()) {
        ck = compiled_make(self, k, L, a, extra, nextra, o);
        if (ck && PyDict_SetItem(K->compiled, kb, ck) < 0)
            Py_CLEAR(ck);
    }
    if (ck) { /* the old pair goes last: its release may run Python code */
        PyObject *old_key = K->last_key, *old_ck = K->last_ck;
        Py_INCREF(ck);
        K->last_key = kb, K->last_ck = ck;
        Py_XDECREF(old_key), Py_XDECREF(old_ck);
    } else
        Py_XDECREF(kb);
    return ck;
}

PyObject *tkpy_compiled(PyObject *self, tk_kernel *k, const Launch *L, const tk_arg *a,
                        const tk_define *extra, int nextra, const tk_launch_options *o)
{
    Kernel *K = (Kernel *)self;
    Key key;
    key.n = 0, key.full = 0;
    make_key(&key, L, extra, nextra, o);
    if (key.full)
        return compiled_make(self, k, L, a, extra, nextra, o);
    /* a launch most often repeats the last specialisation: its key is
     * compared, and no bytes object is made and hashed */
    if (is_last(K, &key)) {
        Py_INCREF(K->last_ck);
        return K->last_ck;
    }
    return compiled_lookup(self, &key, k, L, a, extra, nextra, o);
}
