/* args.c: Python values to tk_args. Runtime arguments follow Triton: a
 * bool is i1, an int i32 (i64 or u64 when it does not fit), a float fp32,
 * None a constexpr None, and anything with a data pointer a pointer to its
 * element type: PyTorch tensors (read through data_ptr/dtype/get_device, so
 * torch need not be importable), objects with __cuda_array_interface__ or
 * __array_interface__ (numpy), and DLPack producers. Host memory is staged
 * into the interpreter's checked buffers for the launch and copied back
 * after it, as Triton's interpreter does. */
#include "tkpy.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static PyObject *dtype_cache; /* dtype object or typestr -> int tk_dtype */

/* The dtype objects seen (torch.float32, ...), matched by identity before
 * the dict: a launch reads one per tensor, and a pointer compare is the
 * cheapest way to its tk_dtype. Each holds a reference. */
static struct {
    PyObject *obj;
    tk_dtype dt;
} dtype_fast[16];
static int ndtype_fast;

/* The forms a buffer argument takes, remembered per Python type, so that
 * a launch tries the form its type had before instead of probing (a
 * missing attribute costs an AttributeError). */
typedef enum { FORM_NONE, FORM_TORCH, FORM_CAI, FORM_AI, FORM_DLPACK } Form;
static struct {
    PyTypeObject *type;
    Form form;
} forms[16];
static int nforms;

/* Attribute names made once (interned), not from C strings per launch. */
static PyObject *s_data_ptr, *s_dtype, *s_get_device, *s_shape, *s_stride, *s_cai, *s_ai, *s_dlpack;
static PyObject *s_block_shape, *s_tk_text, *s_value;

int tkpy_args_init(void)
{
    struct {
        PyObject **slot;
        const char *name;
    } n[] = {{&s_data_ptr, "data_ptr"},
             {&s_dtype, "dtype"},
             {&s_get_device, "get_device"},
             {&s_shape, "shape"},
             {&s_stride, "stride"},
             {&s_cai, "__cuda_array_interface__"},
             {&s_ai, "__array_interface__"},
             {&s_dlpack, "__dlpack__"},
             {&s_block_shape, "block_shape"},
             {&s_tk_text, "_tk_text"},
             {&s_value, "value"}};
    for (size_t i = 0; i < sizeof n / sizeof n[0]; i++)
        if (!*n[i].slot && !(*n[i].slot = PyUnicode_InternFromString(n[i].name)))
            return -1;
    return 0;
}

void tkpy_args_clear(void)
{
    Py_CLEAR(dtype_cache);
    for (int i = 0; i < ndtype_fast; i++)
        Py_CLEAR(dtype_fast[i].obj);
    for (int i = 0; i < nforms; i++)
        Py_CLEAR(forms[i].type);
    ndtype_fast = nforms = 0;
}

/* The repr of the base type's copy of v (PyNumber_Long, PyFloat_FromDouble
 * or PyUnicode_FromObject): a subclass's (an IntEnum, numpy's float64)
 * may name its class. */
static PyObject *base_repr(PyObject *copy)
{
    PyObject *r = copy ? PyObject_Repr(copy) : NULL;
    Py_XDECREF(copy);
    return r;
}

/* Copies text into the launch's scratch; NULL (and an exception) when full. */
static const char *keep_text(Launch *L, const char *s)
{
    size_t n = strlen(s) + 1;
    if (L->used + n > sizeof L->text) {
        PyErr_SetString(PyExc_ValueError, "tk: the launch's constexpr values are too long");
        return NULL;
    }
    char *p = L->text + L->used;
    memcpy(p, s, n);
    L->used += n;
    return p;
}

static const struct {
    const char *name;
    tk_dtype dt;
} names[] = {{"float32", TK_F32},
             {"float16", TK_F16},
             {"bfloat16", TK_BF16},
             {"float64", TK_F64},
             {"int8", TK_I8},
             {"int16", TK_I16},
             {"int32", TK_I32},
             {"int64", TK_I64},
             {"uint8", TK_U8},
             {"uint16", TK_U16},
             {"uint32", TK_U32},
             {"uint64", TK_U64},
             {"bool", TK_I1},
             {"float8_e4m3fn", TK_F8E4NV},
             {"float8_e5m2", TK_F8E5},
             {"f4", TK_F32},
             {"f2", TK_F16},
             {"f8", TK_F64},
             {"i1", TK_I8},
             {"i2", TK_I16},
             {"i4", TK_I32},
             {"i8", TK_I64},
             {"u1", TK_U8},
             {"u2", TK_U16},
             {"u4", TK_U32},
             {"u8", TK_U64},
             {"b1", TK_I1}};

/* "torch.float32" or a numpy typestr ("<f4", "|u1") to a tk_dtype;
 * TK_VOID when tk has no such element type. */
static tk_dtype parse_dtype(const char *s)
{
    if (!strncmp(s, "torch.", 6))
        s += 6;
    else if (s[0] == '<' || s[0] == '|' || s[0] == '=')
        s += 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name))
            return names[i].dt;
    return TK_VOID;
}

/* The tk_dtype of a dtype object (or typestr), cached by the object. */
static int lookup_dtype(PyObject *obj, const char *param, tk_dtype *out)
{
    for (int i = 0; i < ndtype_fast; i++)
        if (dtype_fast[i].obj == obj)
            return *out = dtype_fast[i].dt, 0;
    if (!dtype_cache && !(dtype_cache = PyDict_New()))
        return -1;
    PyObject *hit = PyDict_GetItem(dtype_cache, obj); /* borrowed */
    if (!hit) {
        PyObject *str = PyObject_Str(obj);
        char *s = str ? tkpy_strdup(str) : NULL;
        Py_XDECREF(str);
        if (!s)
            return -1;
        tk_dtype dt = parse_dtype(s);
        if (dt == TK_VOID)
            PyErr_Format(PyExc_TypeError,
                         "tk: argument '%s' has dtype %s, which tk kernels "
                         "cannot take",
                         param, s);
        PyMem_Free(s);
        if (dt == TK_VOID)
            return -1;
        hit = PyLong_FromLong(dt);
        if (!hit || PyDict_SetItem(dtype_cache, obj, hit) < 0) {
            Py_XDECREF(hit);
            return -1;
        }
        Py_DECREF(hit);
    }
    *out = (tk_dtype)PyLong_AsLong(hit);
    if (!PyUnicode_Check(obj) && ndtype_fast < (int)(sizeof dtype_fast / sizeof dtype_fast[0])) {
        Py_INCREF(obj); /* a typestr is a new str each time: only objects are kept */
        dtype_fast[ndtype_fast].obj = obj;
        dtype_fast[ndtype_fast++].dt = *out;
    }
    return 0;
}

static Py_ssize_t item_bytes(tk_dtype dt)
{
    switch (dt) {
    case TK_I1:
    case TK_I8:
    case TK_U8:
    case TK_F8E4NV:
    case TK_F8E5:
    case TK_F8E4B15: return 1;
    case TK_I16:
    case TK_U16:
    case TK_F16:
    case TK_BF16: return 2;
    case TK_I32:
    case TK_U32:
    case TK_F32: return 4;
    default: return 8;
    }
}

/* The byte extent [lo, hi) around the data pointer of an array with this
 * shape and these strides (in bytes; NULL: C-contiguous). */
static int extent(PyObject *shape, PyObject *strides, Py_ssize_t item, Slot *s)
{
    Py_ssize_t n = PySequence_Size(shape), step = item, lo = 0, hi = 0;
    if (n < 0)
        return -1;
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        PyObject *d = PySequence_GetItem(shape, i);
        PyObject *st = d && strides && strides != Py_None ? PySequence_GetItem(strides, i) : NULL;
        Py_ssize_t dim = d ? PyLong_AsSsize_t(d) : -1;
        Py_ssize_t stv = st ? PyLong_AsSsize_t(st) : step;
        Py_XDECREF(d);
        Py_XDECREF(st);
        if (PyErr_Occurred())
            return -1;
        if (dim == 0) {
            s->lo = s->hi = 0;
            return 0;
        }
        if (stv < 0)
            lo += (dim - 1) * stv;
        else
            hi += (dim - 1) * stv;
        step = dim * step;
    }
    s->lo = lo;
    s->hi = hi + item;
    return 0;
}

/* A host tensor at address 0 is empty, or on the 'meta' device, which
 * holds shapes and no data: -1 (a ValueError) for the latter. Asked only
 * of null pointers, so a launch pays nothing for it. */
static int no_data(PyObject *v, const char *param)
{
    PyObject *meta = PyObject_GetAttrString(v, "is_meta");
    int is = meta ? PyObject_IsTrue(meta) : 0;
    Py_XDECREF(meta);
    PyErr_Clear();
    if (is <= 0)
        return 0;
    PyErr_Format(PyExc_ValueError,
                 "tk: argument '%s' is on the 'meta' device, which holds no data; "
                 "a kernel takes CPU or CUDA tensors",
                 param);
    return -1;
}

/* The device index of tensor v, -1 on the CPU: get_device(), else the
 * type and index of its .device (a view object that offers data_ptr()
 * and dtype, which is all Triton asks of a pointer argument, and a torch
 * device, as FlagGems' strided buffers do). */
static PyObject *device_of(PyObject *v)
{
    PyObject *d = PyObject_CallMethodObjArgs(v, s_get_device, NULL);
    if (d || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return d;
    PyErr_Clear();
    PyObject *dev = PyObject_GetAttrString(v, "device");
    PyObject *type = dev ? PyObject_GetAttrString(dev, "type") : NULL;
    PyObject *index = type ? PyObject_GetAttrString(dev, "index") : NULL;
    int t = type && PyUnicode_Check(type);
    if (t && PyUnicode_CompareWithASCIIString(type, "cpu") == 0)
        d = PyLong_FromLong(-1);
    else if (t && index == Py_None)
        d = PyLong_FromLong(0);
    else if (t && index && PyLong_Check(index)) {
        d = index;
        Py_INCREF(d);
    } else if (index)
        PyErr_SetString(PyExc_TypeError, "a tensor's .device has no usable type and index");
    Py_XDECREF(dev);
    Py_XDECREF(type);
    Py_XDECREF(index);
    return d;
}

/* A torch view may read anywhere in its storage (a gather indexes a dim
 * whose stride the view set to 0, as FlagGems' restrided inputs do): where
 * v tells its storage (untyped_storage(): data_ptr(), nbytes()) and that
 * holds the view's extent, the extent is the storage's. */
static void storage_extent(PyObject *v, Slot *s)
{
    PyObject *st = PyObject_CallMethod(v, "untyped_storage", NULL);
    PyObject *p = st ? PyObject_CallMethod(st, "data_ptr", NULL) : NULL;
    PyObject *n = p ? PyObject_CallMethod(st, "nbytes", NULL) : NULL;
    if (n) {
        long long base = PyLong_AsLongLong(p), size = PyLong_AsLongLong(n);
        long long lo = base - (long long)(intptr_t)s->arg.v.ptr;
        if (!PyErr_Occurred() && size > 0 && lo <= s->lo && lo + size >= s->hi) {
            s->lo = (Py_ssize_t)lo;
            s->hi = (Py_ssize_t)(lo + size);
        }
    }
    Py_XDECREF(st);
    Py_XDECREF(p);
    Py_XDECREF(n);
    PyErr_Clear();
}

/* PyTorch: data_ptr(), dtype, get_device(); strides in elements. The
 * extent is measured for host tensors, and for GPU ones when L wants it. */
static int torch_arg(const Launch *L, PyObject *v, const char *param, Slot *s)
{
    /* called by name without a bound method object in between */
    PyObject *p = PyObject_CallMethodObjArgs(v, s_data_ptr, NULL);
    PyObject *dt = p ? PyObject_GetAttr(v, s_dtype) : NULL;
    PyObject *dev = dt ? device_of(v) : NULL;
    int ok = dev && lookup_dtype(dt, param, &s->arg.dtype) == 0;
    if (ok) {
        s->arg.v.ptr = PyLong_AsVoidPtr(p);
        s->device = (int)PyLong_AsLong(dev);
        ok = !PyErr_Occurred();
    }
    Py_XDECREF(p);
    Py_XDECREF(dt);
    Py_XDECREF(dev);
    if (!ok || (!s->arg.v.ptr && s->device < 0 && no_data(v, param) < 0))
        return -1;
    s->loc = s->device >= 0 ? SLOT_DEVICE : SLOT_HOST;
    if (s->loc == SLOT_DEVICE && !L->extents)
        return 0;
    Py_ssize_t item = item_bytes(s->arg.dtype);
    PyObject *shape = PyObject_GetAttr(v, s_shape);
    PyObject *st = shape ? PyObject_CallMethodObjArgs(v, s_stride, NULL) : NULL;
    PyObject *bytes = NULL;
    if (st) { /* element strides to byte strides */
        Py_ssize_t n = PySequence_Size(st);
        bytes = n >= 0 ? PyList_New(n) : NULL;
        for (Py_ssize_t i = 0; bytes && i < n; i++) {
            PyObject *e = PySequence_GetItem(st, i);
            long long x = e ? PyLong_AsLongLong(e) : 0;
            Py_XDECREF(e);
            PyObject *b = PyErr_Occurred() ? NULL : PyLong_FromLongLong(x * item);
            if (!b || PyList_SetItem(bytes, i, b) < 0)
                Py_CLEAR(bytes);
        }
    }
    int r = bytes ? extent(shape, bytes, item, s) : -1;
    if (r == 0 && s->hi > s->lo)
        storage_extent(v, s);
    Py_XDECREF(shape);
    Py_XDECREF(st);
    Py_XDECREF(bytes);
    s->host = s->arg.v.ptr;
    return r;
}

/* __cuda_array_interface__ or __array_interface__: a dict with data
 * (pointer, read-only), typestr, shape and strides (bytes, or None). */
static int iface_arg(const Launch *L, PyObject *v, PyObject *d, int on_gpu, const char *param,
                     Slot *s)
{
    PyObject *data = PyDict_GetItemString(d, "data"); /* borrowed */
    PyObject *ts = PyDict_GetItemString(d, "typestr");
    PyObject *shape = PyDict_GetItemString(d, "shape");
    if (!data || !ts || !shape || !PyTuple_Check(data) || PyTuple_Size(data) != 2) {
        PyErr_Format(PyExc_TypeError, "tk: argument '%s' has a malformed array interface", param);
        return -1;
    }
    if (lookup_dtype(ts, param, &s->arg.dtype) < 0)
        return -1;
    s->arg.v.ptr = PyLong_AsVoidPtr(PyTuple_GetItem(data, 0));
    s->readonly = PyObject_IsTrue(PyTuple_GetItem(data, 1));
    if (PyErr_Occurred())
        return -1;
    s->loc = on_gpu ? SLOT_DEVICE : SLOT_HOST;
    s->host = s->arg.v.ptr;
    s->device = 0;
    if (on_gpu) { /* CuPy and Numba name the device as .device.id */
        PyObject *dev = PyObject_GetAttrString(v, "device");
        PyObject *id = dev ? PyObject_GetAttrString(dev, "id") : NULL;
        s->device = id ? (int)PyLong_AsLong(id) : 0;
        Py_XDECREF(dev);
        Py_XDECREF(id);
        PyErr_Clear();
        if (!L->extents)
            return 0;
    }
    return extent(shape, PyDict_GetItemString(d, "strides"), item_bytes(s->arg.dtype), s);
}

/* The DLPack structs, as dlpack.h lays them out (version 0.x). */
typedef struct {
    int device_type, device_id;
} DLDev;
typedef struct {
    uint8_t code, bits;
    uint16_t lanes;
} DLType;
typedef struct {
    void *data;
    DLDev device;
    int32_t ndim;
    DLType dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} DLTensor;

static tk_dtype dl_dtype(DLType t)
{
    static const tk_dtype ints[] = {TK_I8, TK_I16, TK_I32, TK_I64};
    static const tk_dtype uints[] = {TK_U8, TK_U16, TK_U32, TK_U64};
    int i = t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 2 : t.bits == 64 ? 3 : -1;
    if (t.lanes != 1 || i < 0)
        return TK_VOID;
    switch (t.code) {
    case 0: return ints[i];
    case 1: return uints[i];
    case 2: return i == 1 ? TK_F16 : i == 2 ? TK_F32 : i == 3 ? TK_F64 : TK_VOID;
    case 4: return i == 1 ? TK_BF16 : TK_VOID;
    case 6: return i == 0 ? TK_I1 : TK_VOID;
    default: return TK_VOID;
    }
}

/* __dlpack__(): a capsule holding a DLManagedTensor, whose first member is
 * the DLTensor; the capsule stays unconsumed, so its destructor frees it. */
static int dlpack_arg(PyObject *fn, const char *param, Slot *s)
{
    PyObject *cap = PyObject_CallObject(fn, NULL);
    DLTensor *t = cap ? PyCapsule_GetPointer(cap, "dltensor") : NULL;
    if (!t) {
        Py_XDECREF(cap);
        return -1;
    }
    s->arg.dtype = dl_dtype(t->dtype);
    s->arg.v.ptr = (char *)t->data + t->byte_offset;
    s->host = s->arg.v.ptr;
    s->device = t->device.device_id;
    s->loc = t->device.device_type == 1 ? SLOT_HOST : SLOT_DEVICE;
    int r = 0;
    if (s->arg.dtype == TK_VOID) {
        PyErr_Format(PyExc_TypeError,
                     "tk: argument '%s' has a DLPack dtype (code %d, %d bits) "
                     "that tk kernels cannot take",
                     param, t->dtype.code, t->dtype.bits);
        r = -1;
    } else {
        Py_ssize_t item = item_bytes(s->arg.dtype), lo = 0, hi = 0, step = item;
        for (int i = t->ndim - 1; i >= 0; i--) {
            Py_ssize_t st = t->strides ? (Py_ssize_t)t->strides[i] * item : step;
            if (st < 0)
                lo += (Py_ssize_t)(t->shape[i] - 1) * st;
            else
                hi += (Py_ssize_t)(t->shape[i] - 1) * st;
            step *= (Py_ssize_t)t->shape[i];
        }
        s->lo = lo;
        s->hi = hi + item;
    }
    Py_DECREF(cap);
    return r;
}

/* Whether an __array_interface__ is a 0-d array (a numpy scalar). */
static int is_scalar(PyObject *iface)
{
    PyObject *shape = PyDict_GetItemString(iface, "shape"); /* borrowed */
    return shape && PyTuple_Check(shape) && PyTuple_Size(shape) == 0;
}

/* Whether v is a numpy array (of any number of dims, a subclass too), not
 * a numpy scalar, without importing numpy. */
static int is_ndarray(PyObject *v)
{
    PyObject *mro = PyObject_GetAttrString((PyObject *)Py_TYPE(v), "__mro__");
    int found = 0;
    for (Py_ssize_t i = 0; mro && PyTuple_Check(mro) && i < PyTuple_Size(mro) && !found; i++) {
        PyObject *name = PyObject_GetAttrString(PyTuple_GetItem(mro, i), "__qualname__");
        PyObject *mod = PyObject_GetAttrString(PyTuple_GetItem(mro, i), "__module__");
        found = name && mod && PyUnicode_Check(name) && PyUnicode_Check(mod) &&
            PyUnicode_CompareWithASCIIString(name, "ndarray") == 0 &&
            PyUnicode_CompareWithASCIIString(mod, "numpy") == 0;
        Py_XDECREF(name);
        Py_XDECREF(mod);
    }
    Py_XDECREF(mro);
    PyErr_Clear(); /* a type without the attributes is no array */
    return found;
}

/* The array-interface forms: a dict, or a numpy scalar's Python value (a
 * 0-d array is a buffer of one element, as a 0-d tensor is a pointer). */
static int iface_form(Launch *L, PyObject *v, PyObject *d, int on_gpu, const char *param, Slot *s)
{
    if (!on_gpu && PyDict_Check(d) && is_scalar(d) && !is_ndarray(v)) {
        PyObject *item = PyObject_CallMethod(v, "item", NULL); /* np.int32(5) */
        int r = item ? tkpy_runtime_arg(L, item, param, s) : -1;
        Py_XDECREF(item);
        return r;
    }
    if (!PyDict_Check(d))
        return PyErr_Format(PyExc_TypeError, "tk: %s of '%s' is not a dict",
                            on_gpu ? "__cuda_array_interface__" : "__array_interface__", param),
               -1;
    return iface_arg(L, v, d, on_gpu, param, s);
}

/* Reads v as `form`: 1 done, 0 v has no such attribute (nothing raised),
 * -1 an error. */
static int try_form(Launch *L, PyObject *v, Form form, const char *param, Slot *s)
{
    PyObject *name = form == FORM_TORCH ? s_data_ptr
        : form == FORM_CAI              ? s_cai
        : form == FORM_AI               ? s_ai
                                        : s_dlpack;
    if (form == FORM_TORCH) {
        int r = torch_arg(L, v, param, s);
        if (r < 0 && PyErr_ExceptionMatches(PyExc_AttributeError) && !PyObject_HasAttr(v, name))
            return PyErr_Clear(), 0;
        return r < 0 ? -1 : 1;
    }
    PyObject *a = PyObject_GetAttr(v, name);
    if (!a) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        return PyErr_Clear(), 0;
    }
    int r = form == FORM_DLPACK ? dlpack_arg(a, param, s)
                                : iface_form(L, v, a, form == FORM_CAI, param, s);
    Py_DECREF(a);
    return r < 0 ? -1 : 1;
}

static Form form_of(PyTypeObject *tp)
{
    for (int i = 0; i < nforms; i++)
        if (forms[i].type == tp)
            return forms[i].form;
    return FORM_NONE;
}

static void remember_form(PyTypeObject *tp, Form form)
{
    for (int i = 0; i < nforms; i++)
        if (forms[i].type == tp)
            return (void)(forms[i].form = form);
    if (nforms == (int)(sizeof forms / sizeof forms[0]))
        return;
    Py_INCREF(tp);
    forms[nforms].type = tp;
    forms[nforms++].form = form;
}

/* A buffer argument in any of the forms above, in that order (the form
 * its type had last time first); TypeError when none fits. */
static int buffer_arg(Launch *L, PyObject *v, const char *param, Slot *s)
{
    s->arg.kind = TK_ARG_PTR;
    Form known = form_of(Py_TYPE(v));
    int r = known != FORM_NONE ? try_form(L, v, known, param, s) : 0;
    for (Form f = FORM_TORCH; r == 0 && f <= FORM_DLPACK; f++) {
        if (f == known)
            continue;
        /* torch's probe must not call data_ptr on an object without it */
        if (f == FORM_TORCH && !PyObject_HasAttr(v, s_data_ptr))
            continue;
        r = try_form(L, v, f, param, s);
        if (r == 1)
            remember_form(Py_TYPE(v), f);
    }
    if (r != 0)
        return r < 0 ? -1 : 0;
    PyObject *tn = PyObject_GetAttrString((PyObject *)Py_TYPE(v), "__name__");
    char *name = tn ? tkpy_strdup(tn) : NULL;
    Py_XDECREF(tn);
    PyErr_Format(PyExc_TypeError,
                 "tk: argument '%s' is a %s; a kernel takes tensors, arrays, "
                 "ints, floats, bools and None",
                 param, name ? name : "?");
    PyMem_Free(name);
    return -1;
}

static int int_arg(PyObject *v, const char *param, Slot *s)
{
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred())
        return -1;
    s->arg.kind = TK_ARG_SCALAR;
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(v);
        if (PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "tk: argument '%s' does not fit in 64 bits", param);
            return -1;
        }
        s->arg.dtype = TK_U64;
        s->arg.v.u = u;
        return 0;
    }
    if (overflow < 0) {
        PyErr_Format(PyExc_ValueError, "tk: argument '%s' does not fit in 64 bits", param);
        return -1;
    }
    s->arg.dtype = x >= INT32_MIN && x <= INT32_MAX ? TK_I32 : TK_I64;
    s->arg.v.i = x;
    return 0;
}

tk_dtype tkpy_dtype_named(const char *name) { return parse_dtype(name); }

static const char *dtype_text(tk_dtype dt)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].dt == dt)
            return names[i].name;
    return "?";
}

static int is_float_type(tk_dtype dt)
{
    return dt == TK_F16 || dt == TK_BF16 || dt == TK_F32 || dt == TK_F64;
}

/* Whether an int type holds the int a slot carries (signed in v.i, or in
 * v.u when its dtype is u64, as int_arg makes them). */
static int int_fits(const tk_arg *a, tk_dtype want)
{
    int bits = want == TK_I1               ? 1
        : want == TK_I8 || want == TK_U8   ? 8
        : want == TK_I16 || want == TK_U16 ? 16
        : want == TK_I32 || want == TK_U32 ? 32
                                           : 64;
    int is_signed = want == TK_I8 || want == TK_I16 || want == TK_I32 || want == TK_I64;
    if (a->dtype == TK_U64) /* above INT64_MAX: only u64 holds it */
        return want == TK_U64;
    int64_t x = a->v.i;
    if (is_signed)
        return bits == 64 || (x >= -(INT64_C(1) << (bits - 1)) && x < (INT64_C(1) << (bits - 1)));
    return x >= 0 && (bits == 64 || (uint64_t)x < (UINT64_C(1) << bits));
}

int tkpy_typed_scalar(PyObject *v, const char *param, tk_dtype want, Slot *s)
{
    tk_arg *a = &s->arg;
    int from_float = is_float_type(a->dtype);
    if (a->kind != TK_ARG_SCALAR || want == TK_VOID)
        return 0;
    if (is_float_type(want)) {
        /* a float is read again from v: its slot holds it as fp32 */
        double d = from_float    ? PyFloat_AsDouble(v)
            : a->dtype == TK_U64 ? (double)a->v.u
                                 : (double)a->v.i;
        if (d == -1.0 && PyErr_Occurred())
            return -1;
        a->dtype = want;
        a->v.f = want == TK_F32 ? (double)(float)d : d;
        return 0;
    }
    if (from_float)
        return PyErr_Format(PyExc_TypeError,
                            "tk: parameter '%s' is declared %s but the launch passes a float",
                            param, dtype_text(want)),
               -1;
    if (!int_fits(a, want)) {
        char value[32];
        if (a->dtype == TK_U64)
            snprintf(value, sizeof value, "%llu", (unsigned long long)a->v.u);
        else
            snprintf(value, sizeof value, "%lld", (long long)a->v.i);
        return PyErr_Format(PyExc_OverflowError,
                            "tk: parameter '%s' is declared %s, which cannot hold %s", param,
                            dtype_text(want), value),
               -1;
    }
    a->dtype = want; /* the bits stay: the value fits */
    return 0;
}

/* n ints of sequence attribute `name` of v into out (at most TK_DESC_MAX_RANK
 * kept); -1 with ValueError when it is no sequence of ints. */
static Py_ssize_t desc_ints(PyObject *v, const char *name, const char *param, int64_t *out)
{
    PyObject *seq = PyObject_GetAttrString(v, name);
    Py_ssize_t n = seq && PySequence_Check(seq) ? PySequence_Size(seq) : -1;
    for (Py_ssize_t i = 0; n >= 0 && i < n && i < TK_DESC_MAX_RANK; i++) {
        PyObject *item = PySequence_GetItem(seq, i);
        out[i] = item ? PyLong_AsLongLong(item) : -1;
        Py_XDECREF(item);
        if (out[i] == -1 && PyErr_Occurred())
            n = -2;
    }
    Py_XDECREF(seq);
    if (n < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError,
                     n == -1 ? "tk: descriptor argument '%s' has no %s "
                               "sequence"
                             : "tk: descriptor argument '%s': %s holds a non-int",
                     param, name);
        return -1;
    }
    return n;
}

/* 0 where descriptor v reads zeros past its edges (no padding field, or
 * "zero"); -1 with a ValueError for "nan", which tk's host descriptors do
 * not give (an in-kernel tl.make_tensor_descriptor does). */
static int padding_nan(PyObject *v, const char *param)
{
    PyObject *pad = PyObject_GetAttrString(v, "padding");
    if (!pad) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int nan = PyUnicode_Check(pad) ? PyUnicode_CompareWithASCIIString(pad, "nan") == 0 : 0;
    Py_DECREF(pad);
    if (nan)
        PyErr_Format(PyExc_ValueError,
                     "tk: descriptor argument '%s' asks padding='nan': tk's host descriptors "
                     "read zeros past the tensor's edges (a descriptor made in the kernel with "
                     "tl.make_tensor_descriptor(..., padding_option=\"nan\") reads NaN)",
                     param);
    return nan ? -1 : 0;
}

/* A host-built tensor descriptor (an object with Triton's TensorDescriptor
 * fields: base, shape, strides, block_shape): the base converts as a
 * buffer, the rest waits in the slot for tkpy_slot_arg; the launch checks
 * the values. */
static int desc_arg(Launch *L, PyObject *v, const char *param, Slot *s)
{
    int64_t shape[TK_DESC_MAX_RANK] = {0}, strides[TK_DESC_MAX_RANK] = {0};
    int64_t block[TK_DESC_MAX_RANK] = {0};
    Py_ssize_t n = desc_ints(v, "shape", param, shape);
    Py_ssize_t ns = n < 0 ? -1 : desc_ints(v, "strides", param, strides);
    Py_ssize_t nb = ns < 0 ? -1 : desc_ints(v, "block_shape", param, block);
    if (nb < 0)
        return -1;
    if (ns != n || nb != n) {
        PyErr_Format(PyExc_ValueError,
                     "tk: descriptor argument '%s' needs shape, strides and "
                     "block_shape of one length (%zd, %zd, %zd)",
                     param, n, ns, nb);
        return -1;
    }
    if (padding_nan(v, param) != 0)
        return -1;
    PyObject *base = PyObject_GetAttrString(v, "base");
    if (!base)
        return -1;
    int r = buffer_arg(L, base, param, s);
    Py_DECREF(base);
    if (r < 0)
        return -1;
    s->is_desc = 1;
    memset(&s->desc, 0, sizeof s->desc);
    s->desc.rank = n > INT32_MAX ? INT32_MAX : (int)n;
    for (int i = 0; i < n && i < TK_DESC_MAX_RANK; i++) {
        s->desc.shape[i] = shape[i];
        s->desc.strides[i] = strides[i];
        /* out of int range reads as 0, which the launch refuses */
        s->desc.block[i] = block[i] > 0 && block[i] <= INT32_MAX ? (int)block[i] : 0;
    }
    return 0;
}

int tkpy_desc_reread(Slot *s, PyObject *v)
{
    if (!s->is_desc || !v || !PyObject_HasAttr(v, s_block_shape))
        return 0; /* a tuple's item: its object is the tuple */
    int64_t block[TK_DESC_MAX_RANK] = {0};
    Py_ssize_t n = desc_ints(v, "block_shape", s->param, block);
    if (n < 0)
        return -1;
    if (n != s->desc.rank) {
        PyErr_Format(PyExc_ValueError,
                     "tk: descriptor argument '%s' has a shape of %d dims but a hook set a "
                     "block_shape of %zd",
                     s->param, s->desc.rank, n);
        return -1;
    }
    for (int i = 0; i < n && i < TK_DESC_MAX_RANK; i++)
        s->desc.block[i] = block[i] > 0 && block[i] <= INT32_MAX ? (int)block[i] : 0;
    return 0;
}

tk_arg tkpy_slot_arg(Slot *s)
{
    if (!s->is_desc)
        return s->arg;
    s->desc.base = s->arg.v.ptr;
    s->desc.dtype = s->arg.dtype;
    return tk_desc(&s->desc);
}

/* Clears a slot up to its descriptor fields, which only desc_arg fills and
 * only a descriptor slot reads: clearing all of them cost every argument of
 * every launch a store of some 100 bytes. A copy of a blank slot, not a
 * memset: GCC compiles that memset to `rep stos`, whose start-up cost more
 * than the rest of a scalar argument's conversion; the copy is vector moves. */
static const Slot blank_slot;
static void clear_slot(Slot *s) { memcpy(s, &blank_slot, offsetof(Slot, desc)); }

int tkpy_runtime_arg(Launch *L, PyObject *v, const char *param, Slot *s)
{
    clear_slot(s);
    s->param = param;
    s->loc = SLOT_VALUE;
    if (v == Py_None) {
        s->arg = tk_none(param);
        return 0;
    }
    if (PyBool_Check(v)) {
        s->arg.kind = TK_ARG_SCALAR;
        s->arg.dtype = TK_I1;
        s->arg.v.u = v == Py_True;
        return 0;
    }
    if (PyLong_Check(v))
        return int_arg(v, param, s);
    if (PyFloat_Check(v)) {
        s->arg = tk_f32((float)PyFloat_AsDouble(v));
        return 0;
    }
    if (PyTuple_Check(v))
        return 0; /* tkpy_runtime_args appends the marker's items */
    /* by an interned name through PyObject_HasAttr: a tensor has no
     * block_shape, and PyObject_HasAttrString makes and formats an
     * AttributeError for that (CPython before 3.13) at every launch */
    if (PyObject_HasAttr(v, s_block_shape))
        return desc_arg(L, v, param, s);
    return buffer_arg(L, v, param, s);
}

static int append_runtime(Launch *L, PyObject *v, const char *param, int no_spec, int depth);

/* A tuple's marker and its items: None and tl.constexpr(v) are constexpr
 * items, the rest convert as arguments of their own named param[i]
 * (Triton specialises each leaf of a tuple argument). A namedtuple is
 * taken as a tuple. */
static int tuple_args(Launch *L, PyObject *v, const char *param, int no_spec, int depth, Slot *s)
{
    Py_ssize_t n = PyTuple_Size(v);
    if (depth == 8)
        return PyErr_Format(PyExc_ValueError, "tk: argument '%s' nests tuples more than 8 deep",
                            param),
               -1;
    s->arg = tk_tuple((int)n);
    for (Py_ssize_t i = 0; i < n; i++) {
        char name[256];
        snprintf(name, sizeof name, "%s[%zd]", param, i);
        const char *kept = keep_text(L, name);
        PyObject *item = PyTuple_GetItem(v, i);
        if (!kept || !item || append_runtime(L, item, kept, no_spec, depth + 1) < 0)
            return -1;
    }
    return 0;
}

static int append_runtime(Launch *L, PyObject *v, const char *param, int no_spec, int depth)
{
    if (L->n == TKPY_MAX_SLOTS)
        return PyErr_Format(PyExc_ValueError,
                            "tk: a launch takes at most %d arguments and tuple items",
                            TKPY_MAX_SLOTS),
               -1;
    Slot *s = &L->slots[L->n++];
    /* an item given as tl.constexpr(v) is a constexpr item, as in Triton */
    int r = depth > 0 && PyObject_HasAttr(v, s_tk_text) ? tkpy_const_arg(L, v, param, s)
                                                        : tkpy_runtime_arg(L, v, param, s);
    s->no_spec = no_spec;
    if (r == 0 && depth > 0 && s->arg.kind == TK_ARG_CONST)
        s->arg.name = NULL; /* an item: positional */
    return r == 0 && PyTuple_Check(v) ? tuple_args(L, v, param, no_spec, depth, s) : r;
}

int tkpy_runtime_args(Launch *L, PyObject *v, const char *param, int no_spec)
{
    return append_runtime(L, v, param, no_spec, 0);
}

static PyObject *const_text_at(PyObject *owner, PyObject *v, const char *param, int depth);

/* A tuple's text, "(a, b)" ("(a,)" for one item), its items' as
 * tkpy_const_text writes them. */
static PyObject *tuple_text(PyObject *owner, PyObject *v, const char *param, int depth)
{
    Py_ssize_t n = PyTuple_Size(v);
    PyObject *items = PyList_New(n);
    for (Py_ssize_t i = 0; items && i < n; i++) {
        PyObject *t = depth < 32 ? const_text_at(owner, PyTuple_GetItem(v, i), param, depth) : NULL;
        if (!t) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "tk: constexpr '%s' nests tuples too deep", param);
            Py_CLEAR(items);
            break;
        }
        PyList_SetItem(items, i, t); /* steals t */
    }
    PyObject *sep = items ? PyUnicode_FromString(", ") : NULL;
    PyObject *body = sep ? PyUnicode_Join(sep, items) : NULL;
    PyObject *r = body ? PyUnicode_FromFormat(n == 1 ? "(%U,)" : "(%U)", body) : NULL;
    Py_XDECREF(items), Py_XDECREF(sep), Py_XDECREF(body);
    return r;
}

/* Whether v's type has attribute `attr` equal to `text` (its __name__ or
 * __module__), read without importing the module that defines it. */
static int type_attr_is(PyObject *v, const char *attr, const char *text)
{
    PyObject *got = PyObject_GetAttrString((PyObject *)Py_TYPE(v), attr);
    int yes = got && PyUnicode_Check(got) && PyUnicode_CompareWithASCIIString(got, text) == 0;
    Py_XDECREF(got);
    PyErr_Clear();
    return yes;
}

/* Whether v is tl.constexpr(value) (tk's class of that name). */
static int is_constexpr(PyObject *v)
{
    return type_attr_is(v, "__name__", "constexpr") && PyObject_HasAttr(v, s_value);
}

/* Whether v is a torch.dtype. */
static int is_torch_dtype(PyObject *v)
{
    return type_attr_is(v, "__name__", "dtype") && type_attr_is(v, "__module__", "torch");
}

static PyObject *const_text_at(PyObject *owner, PyObject *v, const char *param, int depth)
{
    if (v == Py_None || PyBool_Check(v))
        return PyUnicode_FromString(v == Py_None ? "None" : v == Py_True ? "True" : "False");
    if (PyLong_Check(v))
        return base_repr(PyNumber_Long(v));
    if (PyFloat_Check(v))
        return base_repr(PyFloat_FromDouble(PyFloat_AsDouble(v)));
    if (PyUnicode_Check(v))
        return base_repr(PyUnicode_FromObject(v));
    if (PyTuple_Check(v))
        return tuple_text(owner, v, param, depth + 1);
    if (tkpy_is_kernel(v))
        return tkpy_jit_name(owner, v, param);
    PyObject *t = PyObject_GetAttr(v, s_tk_text); /* dtypes, tl.constexpr */
    if (t && is_constexpr(v)) { /* its value, which may be a tuple or a function */
        Py_DECREF(t);
        PyObject *inner = PyObject_GetAttr(v, s_value);
        t = inner && depth < 32 ? const_text_at(owner, inner, param, depth + 1) : NULL;
        Py_XDECREF(inner);
        return t;
    }
    if (t && PyUnicode_Check(t))
        return t;
    Py_XDECREF(t);
    PyErr_Clear();
    if (is_torch_dtype(v)) /* "torch.float16": the compiler reads it */
        return PyObject_Str(v);
    if (PyIndex_Check(v)) { /* numpy integers */
        PyObject *i = PyNumber_Index(v);
        t = i ? base_repr(PyNumber_Long(i)) : NULL;
        Py_XDECREF(i);
        return t;
    }
    return PyErr_Format(PyExc_TypeError,
                        "tk: constexpr '%s' must be an int, float, bool, str, None, a tl "
                        "or torch dtype, a @jit function or a tuple of those, not %R",
                        param, (PyObject *)Py_TYPE(v));
}

PyObject *tkpy_const_text(PyObject *owner, PyObject *v, const char *param)
{
    return const_text_at(owner, v, param, 0);
}

/* The text a constexpr value reads as in source, kept in the launch. */
static const char *const_text(Launch *L, PyObject *v, const char *param)
{
    PyObject *t = tkpy_const_text(L->owner, v, param);
    char *s = t ? tkpy_strdup(t) : NULL;
    Py_XDECREF(t);
    const char *kept = s ? keep_text(L, s) : NULL;
    PyMem_Free(s);
    return kept;
}

int tkpy_const_arg(Launch *L, PyObject *v, const char *param, Slot *s)
{
    clear_slot(s);
    s->loc = SLOT_VALUE;
    s->param = param;
    s->arg.kind = TK_ARG_CONST;
    s->arg.name = param;
    if (v == Py_None || PyBool_Check(v)) {
        s->arg.text = v == Py_None ? "None" : v == Py_True ? "True" : "False";
        return 0;
    }
    if (PyLong_Check(v)) {
        s->arg.dtype = TK_I64;
        s->arg.v.i = PyLong_AsLongLong(v);
        return PyErr_Occurred() ? -1 : 0;
    }
    if (PyFloat_Check(v)) {
        s->arg.dtype = TK_F64;
        s->arg.v.f = PyFloat_AsDouble(v);
        return 0;
    }
    if (PyIndex_Check(v) && !PyObject_HasAttr(v, s_tk_text)) {
        PyObject *i = PyNumber_Index(v); /* numpy integers */
        int r = i ? tkpy_const_arg(L, i, param, s) : -1;
        Py_XDECREF(i);
        return r;
    }
    s->arg.text = const_text(L, v, param);
    return s->arg.text ? 0 : -1;
}
