/* module.c: the tk._tk module: its exceptions, one tk context per device
 * (the GPU's primary CUDA context, the one PyTorch uses, or the CPU
 * interpreter), and the mapping of tk's statuses to Python exceptions.
 * Contexts live as long as the process: kernels compiled in them stay
 * cached, and PyTorch's tensors may outlive any module object. */
#include "tkpy.h"

#include <stdlib.h>
#include <string.h>

PyObject *tkpy_CompileError;
PyObject *tkpy_Error;
int tkpy_interpret;
int tkpy_skip_launch;

static tk_context *contexts[TKPY_MAX_DEV];
static tk_context *interp_ctx;
static int gpu_state;       /* 0 unknown, 1 usable, -1 none */
static PyObject *stream_fn; /* torch._C._cuda_getCurrentRawStream, once torch is loaded */

void tkpy_raise(tk_status s, const char *where)
{
    PyObject *cls = tkpy_Error;
    if (s == TK_ERR_COMPILE)
        cls = tkpy_CompileError;
    else if (s == TK_ERR_LAUNCH)
        cls = PyExc_TypeError;
    else if (s == TK_ERR_INVALID)
        cls = PyExc_ValueError;
    if (where && *where)
        PyErr_Format(cls, "%s\n%s", tk_last_error(), where);
    else
        PyErr_Format(cls, "%s", tk_last_error());
}

char *tkpy_strdup(PyObject *str)
{
    PyObject *b = PyUnicode_AsUTF8String(str);
    if (!b)
        return NULL;
    char *p = PyBytes_AsString(b);
    char *copy = p ? PyMem_Malloc(strlen(p) + 1) : NULL;
    if (p && !copy)
        PyErr_NoMemory();
    if (copy)
        strcpy(copy, p);
    Py_DECREF(b);
    return copy;
}

static tk_status create(tk_context **out, int device)
{
    tk_context_options o;
    memset(&o, 0, sizeof o);
    o.device = device < 0 ? 0 : device;
    o.interpret = device == TKPY_INTERP;
    tk_status s;
    Py_BEGIN_ALLOW_THREADS s = tk_context_create(out, &o);
    Py_END_ALLOW_THREADS return s;
}

/* Stores a context made without the GIL unless another thread stored one
 * first (then this one is destroyed); gives the one kept. */
static tk_context *keep(tk_context **slot, tk_context *made)
{
    if (*slot && made != *slot)
        tk_context_destroy(made);
    else
        *slot = made;
    return *slot;
}

tk_context *tkpy_context(int device)
{
    tk_context *made = NULL;
    if (device == TKPY_INTERP) {
        tk_status s = interp_ctx ? TK_OK : create(&made, TKPY_INTERP);
        if (s != TK_OK)
            tkpy_raise(s, NULL);
        return s != TK_OK ? NULL : made ? keep(&interp_ctx, made) : interp_ctx;
    }
    if (device < 0 || device >= TKPY_MAX_DEV) {
        PyErr_Format(PyExc_ValueError, "tk: device %d is out of range (0..%d)", device,
                     TKPY_MAX_DEV - 1);
        return NULL;
    }
    if (!contexts[device]) {
        tk_status s = create(&made, device);
        if (s != TK_OK) {
            tkpy_raise(s, NULL);
            return NULL;
        }
        gpu_state = 1;
        keep(&contexts[device], made);
    }
    return contexts[device];
}

int tkpy_have_gpu(void)
{
    if (gpu_state == 0) {
        tk_context *c = NULL;
        int ok = contexts[0] || create(&c, 0) == TK_OK;
        if (c)
            keep(&contexts[0], c);
        gpu_state = ok ? 1 : -1;
    }
    return gpu_state > 0;
}

/* torch._C._cuda_getCurrentRawStream, when torch has been imported (looked
 * up in sys.modules, so that tk never imports torch itself). */
static PyObject *find_stream_fn(void)
{
    PyObject *mods = PySys_GetObject("modules"); /* borrowed */
    PyObject *torch = mods ? PyDict_GetItemString(mods, "torch") : NULL;
    if (!torch)
        return NULL;
    PyObject *c = PyObject_GetAttrString(torch, "_C");
    PyObject *fn = c ? PyObject_GetAttrString(c, "_cuda_getCurrentRawStream") : NULL;
    Py_XDECREF(c);
    if (!fn)
        PyErr_Clear();
    return fn;
}

void *tkpy_torch_stream(int device)
{
    if (!stream_fn && !(stream_fn = find_stream_fn()))
        return NULL;
    /* a small int is CPython's own object: no format string, no tuple */
    PyObject *dev = PyLong_FromLong(device);
    PyObject *r = dev ? PyObject_CallFunctionObjArgs(stream_fn, dev, NULL) : NULL;
    Py_XDECREF(dev);
    if (!r) {
        PyErr_Clear();
        return NULL;
    }
    void *p = PyLong_AsVoidPtr(r);
    Py_DECREF(r);
    if (PyErr_Occurred())
        PyErr_Clear();
    return p;
}

static PyObject *py_version(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(tk_version());
}

static PyObject *py_have_gpu(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(!tkpy_interpret && tkpy_have_gpu());
}

static PyObject *py_synchronize(PyObject *self, PyObject *args)
{
    int device = 0;
    if (!PyArg_ParseTuple(args, "|i", &device))
        return NULL;
    tk_context *c = tkpy_context(tkpy_interpret ? TKPY_INTERP : device);
    if (!c)
        return NULL;
    tk_status s;
    Py_BEGIN_ALLOW_THREADS s = tk_synchronize(c);
    Py_END_ALLOW_THREADS if (s != TK_OK)
    {
        tkpy_raise(s, NULL);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* _skip_launch(flag): plain launches do everything but call tk_launch, so
 * that bench/py_launch.py can time the Python side of a launch alone. */
static PyObject *py_skip_launch(PyObject *self, PyObject *flag)
{
    int on = PyObject_IsTrue(flag);
    if (on < 0)
        return NULL;
    tkpy_skip_launch = on;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"_skip_launch", py_skip_launch, METH_O, "Profiling: launches stop short of tk_launch."},
    {"version", py_version, METH_NOARGS, "The libtk version that runs."},
    {"have_gpu", py_have_gpu, METH_NOARGS, "Whether launches can go to a GPU."},
    {"synchronize", py_synchronize, METH_VARARGS, "Waits for a device's work."},
    {"compile", (PyCFunction)(void (*)(void))tkpy_compile, METH_VARARGS | METH_KEYWORDS,
     "compile(path, kernel, signature, defines, num_warps, num_stages, emit) -> str|bytes"},
    {"bench", (PyCFunction)(void (*)(void))tkpy_bench, METH_VARARGS | METH_KEYWORDS,
     "bench(fn, warmup, rep, device) -> [ms of each timed run, in run order]"},
    {"device_properties", tkpy_device_properties, METH_VARARGS,
     "device_properties(device) -> dict"},
    {"source_search", tkpy_source_search, METH_VARARGS,
     "source_search(dir) -> None: libtk searches dir for imported package files"},
    {"source_overlay", tkpy_source_overlay, METH_VARARGS,
     "source_overlay(path, text) -> None: libtk reads text for the package file (None: the file)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT,
                                    "_tk",
                                    "libtk from Python: kernels, launches, tuning.",
                                    -1,
                                    methods,
                                    NULL,
                                    NULL,
                                    NULL,
                                    NULL};

static int add_exceptions(PyObject *m)
{
    tkpy_CompileError = PyErr_NewException("tk.CompileError", NULL, NULL);
    tkpy_Error =
        tkpy_CompileError ? PyErr_NewException("tk.TkError", PyExc_RuntimeError, NULL) : NULL;
    if (!tkpy_Error)
        return -1;
    Py_INCREF(tkpy_CompileError);
    if (PyModule_AddObject(m, "CompileError", tkpy_CompileError) < 0)
        return -1;
    Py_INCREF(tkpy_Error);
    return PyModule_AddObject(m, "TkError", tkpy_Error);
}

PyMODINIT_FUNC PyInit__tk(void)
{
    const char *e = getenv("TK_INTERPRET");
    tkpy_interpret = e && *e && strcmp(e, "0") != 0;
    PyObject *m = PyModule_Create(&moddef);
    if (!m)
        return NULL;
    if (tkpy_args_init() < 0 || add_exceptions(m) < 0 || tkpy_kernel_init_types(m) < 0 ||
        PyModule_AddIntConstant(m, "MAX_DEVICES", TKPY_MAX_DEV) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
