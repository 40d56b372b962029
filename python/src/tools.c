/* tools.c: what the Python layer needs besides launches: the text of a
 * compiled kernel (warmup's asm: ptx, cubin, ir), do_bench on tk_bench
 * with a Python callable as the work, the device-property query that
 * Triton's host code makes, and the live texts of package files
 * (tk_source_overlay). */
#include "tkpy.h"

#include <string.h>

/* The most timed runs of one bench() (tk_bench's own cap). */
enum { TKPY_BENCH_RUNS = 10000 };

/* The file's text, or NULL with an exception set; *len its bytes. */
static char *read_all(const char *path, long *len)
{
    char *src = NULL;
    FILE *f = fopen(path, "rb");
    *len = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (*len >= 0 && fseek(f, 0, SEEK_SET) == 0 && (src = PyMem_Malloc((size_t)*len + 1)) &&
        fread(src, 1, (size_t)*len, f) != (size_t)*len) {
        PyMem_Free(src);
        src = NULL;
    }
    if (f)
        fclose(f);
    if (!src)
        PyErr_Format(PyExc_OSError, "tk: cannot read %s", path);
    return src;
}

/* compile(path, source, kernel, signature, [(name, text)], num_warps,
 * num_stages, emit, arch) -> str (bytes for the cubin); source None: the
 * file's text. */
PyObject *tkpy_compile(PyObject *self, PyObject *args, PyObject *kw)
{
    const char *path, *given, *kernel, *sig, *emit, *arch = NULL;
    PyObject *defs;
    int warps, stages;
    if (!PyArg_ParseTuple(args, "szssO!iis|z", &path, &given, &kernel, &sig, &PyList_Type, &defs,
                          &warps, &stages, &emit, &arch))
        return NULL;
    static const char *const emits[] = {"tokens", "ast", "ir", "llvm", "ptx", "cubin"};
    int e = 0;
    while (e < 6 && strcmp(emits[e], emit))
        e++;
    Py_ssize_t n = PyList_Size(defs);
    if (e == 6 || n > TKPY_MAX_ARGS)
        return PyErr_Format(PyExc_ValueError, "tk: cannot emit '%s' (or too many defines)", emit);
    tk_define d[TKPY_MAX_ARGS];
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyArg_ParseTuple(PyList_GetItem(defs, i), "ss", &d[i].name, &d[i].value))
            return NULL;
    PyObject *text = NULL;
    char *out = NULL, *src = NULL;
    size_t out_len = 0;
    long len = given ? (long)strlen(given) : 0;
    if (!given && !(src = read_all(path, &len)))
        return NULL;
    tk_compile_options o;
    memset(&o, 0, sizeof o);
    o.kernel = kernel, o.defines = d, o.ndefines = (int)n, o.signature = sig;
    o.num_warps = warps, o.num_stages = stages, o.opt_level = -1, o.emit = (tk_emit)e;
    o.arch = arch;
    tk_status s;
    Py_BEGIN_ALLOW_THREADS s =
        tk_compile(path, given ? given : src, (size_t)len, &o, &out, &out_len, NULL);
    Py_END_ALLOW_THREADS if (s != TK_OK) tkpy_raise(s, NULL);
    else if (e == 5) text = PyBytes_FromStringAndSize(out, (Py_ssize_t)out_len);
    else text = PyUnicode_FromStringAndSize(out, (Py_ssize_t)out_len);
    PyMem_Free(src);
    tk_free_text(out);
    return text;
}

typedef struct {
    PyObject *fn;
    int failed;
} BenchCall;

/* tk_bench's work: one call of the Python function. */
static tk_status bench_cb(void *user)
{
    BenchCall *b = user;
    PyGILState_STATE st = PyGILState_Ensure();
    PyObject *r = b->failed ? NULL : PyObject_CallObject(b->fn, NULL);
    Py_XDECREF(r);
    if (!r)
        b->failed = 1;
    PyGILState_Release(st);
    return r ? TK_OK : TK_ERR_INVALID;
}

/* bench(fn, warmup_ms, rep_ms, device) -> [ms, ...]: every timed run's
 * milliseconds, in run order (do_bench's statistics are made from them);
 * device -1: the interpreter (host wall-clock times). */
PyObject *tkpy_bench(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *fn;
    double warmup, rep;
    int device;
    if (!PyArg_ParseTuple(args, "Oddi", &fn, &warmup, &rep, &device))
        return NULL;
    if (tkpy_interpret || (device >= 0 && !tkpy_have_gpu()))
        device = TKPY_INTERP;
    tk_context *ctx = tkpy_context(device);
    if (!ctx)
        return NULL;
    BenchCall b = {fn, 0};
    tk_bench_options o;
    tk_bench_result r;
    memset(&o, 0, sizeof o);
    o.warmup_ms = warmup, o.rep_ms = rep;
    o.max_runs = TKPY_BENCH_RUNS;
    o.stream = device >= 0 ? tkpy_torch_stream(device) : NULL;
    if (!(o.times = PyMem_Calloc(TKPY_BENCH_RUNS, sizeof *o.times)))
        return PyErr_NoMemory();
    tk_status s;
    Py_BEGIN_ALLOW_THREADS s = tk_bench(ctx, bench_cb, &b, &o, &r);
    Py_END_ALLOW_THREADS if (s != TK_OK && !b.failed) tkpy_raise(s, NULL);
    /* on a failure fn's exception, or tk's, is set */
    PyObject *out = s == TK_OK && !b.failed ? PyList_New(r.runs) : NULL;
    for (int i = 0; out && i < r.runs; i++) {
        PyObject *t = PyFloat_FromDouble(o.times[i]);
        if (!t || PyList_SetItem(out, i, t) < 0) /* steals t, even on failure */
            Py_CLEAR(out);
    }
    PyMem_Free(o.times);
    return out;
}

/* device_properties(device) -> dict, with Triton's names for what
 * driver.active.utils.get_device_properties gives. */
PyObject *tkpy_device_properties(PyObject *self, PyObject *args)
{
    int device = 0;
    if (!PyArg_ParseTuple(args, "|i", &device))
        return NULL;
    if (tkpy_interpret || !tkpy_have_gpu())
        device = TKPY_INTERP;
    tk_context *ctx = tkpy_context(device);
    tk_device_props p;
    tk_status s = ctx ? tk_device_properties(ctx, &p) : TK_OK;
    if (!ctx)
        return NULL;
    if (s != TK_OK)
        return tkpy_raise(s, NULL), NULL;
    return Py_BuildValue("{s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "name", p.name,
                         "multiprocessor_count", p.sm_count, "max_shared_mem", p.shared_per_block,
                         "max_num_regs", p.regs_per_sm, "warpSize", p.warp_size,
                         "max_threads_per_sm", p.max_threads_per_sm, "cc_major", p.cc_major,
                         "cc_minor", p.cc_minor, "sm_clock_rate", p.sm_clock_khz, "mem_clock_rate",
                         p.mem_clock_khz, "mem_bus_width", p.mem_bus_width_bits);
}

/* source_overlay(path, text or None): the text libtk compiles for the
 * package file path from now on (tk/live.py), or the file again. */
PyObject *tkpy_source_search(PyObject *self, PyObject *args)
{
    const char *dir;
    if (!PyArg_ParseTuple(args, "s", &dir))
        return NULL;
    tk_status s = tk_source_search_path(dir);
    if (s != TK_OK)
        return tkpy_raise(s, NULL), NULL;
    Py_RETURN_NONE;
}

PyObject *tkpy_source_overlay(PyObject *self, PyObject *args)
{
    const char *path, *text;
    if (!PyArg_ParseTuple(args, "sz", &path, &text))
        return NULL;
    tk_status s = tk_source_overlay(path, text);
    if (s != TK_OK)
        return tkpy_raise(s, NULL), NULL;
    Py_RETURN_NONE;
}
