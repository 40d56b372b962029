/* ---- tk AOT runtime ---------------------------------------------------------------------
 * The part every header `tkc --emit=header` writes begins with (lib/aot/prelude.h in tk).
 * It loads the CUDA driver with dlopen on first use (no link against libcuda, no libtk),
 * loads each kernel's module lazily in each CUDA context that launches it, and reports
 * every failure as a tk_status with a message from tk_aot_last_error() (per thread); it
 * never exits or aborts. Thread-safe: the driver is loaded once (pthread_once), modules
 * are loaded under a lock, and launches read the loaded modules without taking it.
 * Needs only libc, libdl and pthreads: cc prog.c -ldl (add -pthread before glibc 2.34).
 * Compiles as C11 and as C++ with GCC or Clang. Everything is static: each translation
 * unit that includes a header keeps its own driver handle and modules, and the include
 * guard keeps one copy of this part when it includes several headers. Environment:
 *   TK_LIBCUDA=path   the driver library to load (default libcuda.so.1) */
#ifndef TK_AOT_RUNTIME_H
#define TK_AOT_RUNTIME_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The same definitions as <tk/tk.h>, so a program may include both, in any order. */
#ifndef TK_STATUS_DEFINED
#define TK_STATUS_DEFINED
typedef enum tk_status {
    TK_OK = 0,
    TK_ERR_COMPILE,      /* the source has errors; the message holds diagnostics */
    TK_ERR_INVALID,      /* a bad argument to an API call */
    TK_ERR_NOT_FOUND,    /* unknown kernel, missing file */
    TK_ERR_LAUNCH,       /* launch arguments do not match the kernel */
    TK_ERR_NO_DEVICE,    /* no libcuda, no GPU */
    TK_ERR_DRIVER,       /* a CUDA driver call failed */
    TK_ERR_KERNEL_FAULT, /* the kernel faulted (illegal address, assert) */
    TK_ERR_NO_MEMORY,
    TK_ERR_IO,
    TK_ERR_INTERNAL
} tk_status;
#endif
#ifndef TK_STREAM_DEFINED
#define TK_STREAM_DEFINED
typedef void *tk_stream; /* a CUstream, or NULL for the default stream */
#endif
#ifndef TK_GRID_DEFINED
#define TK_GRID_DEFINED
/* one line, the same in tk.h and the AOT prelude */
/* clang-format off */
typedef struct tk_grid { unsigned x, y, z; } tk_grid;
/* clang-format on */
#endif

/* A device address, as the driver's CUdeviceptr: pointer arguments of the
 * launchers are these 64-bit handles (what cuMemAlloc gives). */
typedef unsigned long long tk_devptr;

#ifdef __cplusplus
#define TK_AOT_THREAD_LOCAL thread_local
#else
#define TK_AOT_THREAD_LOCAL _Thread_local
#endif

/* The driver's types and the values used here, so no cuda.h is needed.
 * The struct tags are cuda.h's, so its handles convert without casts. */
typedef int tk_aot_result;
typedef int tk_aot_device;
typedef struct CUctx_st *tk_aot_context;
typedef struct CUmod_st *tk_aot_module;
typedef struct CUfunc_st *tk_aot_function_t;
typedef struct CUstream_st *tk_aot_stream;
enum {
    TK_AOT_CUDA_SUCCESS = 0,
    TK_AOT_CUDA_ERROR_OUT_OF_MEMORY = 2,
    TK_AOT_CUDA_ERROR_NO_DEVICE = 100,
    TK_AOT_CUDA_ERROR_INVALID_DEVICE = 101,
    TK_AOT_CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    TK_AOT_CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    TK_AOT_CUDA_ERROR_ASSERT = 710,
    TK_AOT_CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    TK_AOT_CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    TK_AOT_CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    TK_AOT_CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    TK_AOT_CUDA_ERROR_INVALID_PC = 718,
    TK_AOT_CUDA_ERROR_LAUNCH_FAILED = 719,
    TK_AOT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    TK_AOT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    TK_AOT_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    TK_AOT_MAX_CONTEXTS = 64 /* contexts one specialisation can be loaded in */
};

/* The driver entry points, by the symbols cuda.h maps its names to. */
typedef struct tk_aot_driver_t {
    tk_aot_result (*cuInit)(unsigned);
    tk_aot_result (*cuGetErrorName)(tk_aot_result, const char **);
    tk_aot_result (*cuGetErrorString)(tk_aot_result, const char **);
    tk_aot_result (*cuCtxGetCurrent)(tk_aot_context *);
    tk_aot_result (*cuCtxPushCurrent)(tk_aot_context);
    tk_aot_result (*cuCtxPopCurrent)(tk_aot_context *);
    tk_aot_result (*cuCtxGetDevice)(tk_aot_device *);
    tk_aot_result (*cuCtxGetId)(tk_aot_context, unsigned long long *); /* CUDA 12; may be NULL */
    tk_aot_result (*cuStreamGetCtx)(tk_aot_stream, tk_aot_context *);
    tk_aot_result (*cuDeviceGetAttribute)(int *, int, tk_aot_device);
    tk_aot_result (*cuModuleLoadData)(tk_aot_module *, const void *);
    tk_aot_result (*cuModuleGetFunction)(tk_aot_function_t *, tk_aot_module, const char *);
    tk_aot_result (*cuModuleUnload)(tk_aot_module);
    tk_aot_result (*cuFuncSetAttribute)(tk_aot_function_t, int, int);
    tk_aot_result (*cuLaunchKernel)(tk_aot_function_t, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, unsigned, tk_aot_stream, void **, void **);
    void *handle;
    tk_status status;
    char why[512];
} tk_aot_driver_t;

static tk_aot_driver_t tk_aot_cu;
static pthread_once_t tk_aot_cu_once = PTHREAD_ONCE_INIT;
static TK_AOT_THREAD_LOCAL char tk_aot_message[1024];

/* The message of the last failed call on this thread ("" if none). */
static inline const char *tk_aot_last_error(void) { return tk_aot_message; }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline tk_status
tk_aot_error(tk_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tk_aot_message, sizeof tk_aot_message, fmt, ap);
    va_end(ap);
    return s;
}

/* dlsym into a typed slot (memcpy: C and C++ both forbid the plain cast). */
static inline int tk_aot_sym(void *handle, const char *name, void *slot, int required)
{
    void *p = dlsym(handle, name);
    memcpy(slot, &p, sizeof p);
    if (!p && required)
        snprintf(tk_aot_cu.why, sizeof tk_aot_cu.why, "the CUDA driver lacks %s (driver too old?)",
                 name);
    return p != NULL || !required;
}

static inline void tk_aot_load_driver(void)
{
    tk_aot_driver_t *d = &tk_aot_cu;
    const char *lib = getenv("TK_LIBCUDA");
    if (!lib || !*lib)
        lib = "libcuda.so.1";
    d->status = TK_ERR_NO_DEVICE;
    d->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!d->handle) {
        const char *why = dlerror();
        snprintf(d->why, sizeof d->why, "no CUDA driver: cannot load %s (%s)", lib,
                 why ? why : "not found");
        return;
    }
    void *h = d->handle;
    int ok = tk_aot_sym(h, "cuInit", &d->cuInit, 1) &&
        tk_aot_sym(h, "cuGetErrorName", &d->cuGetErrorName, 1) &&
        tk_aot_sym(h, "cuGetErrorString", &d->cuGetErrorString, 1) &&
        tk_aot_sym(h, "cuCtxGetCurrent", &d->cuCtxGetCurrent, 1) &&
        tk_aot_sym(h, "cuCtxPushCurrent_v2", &d->cuCtxPushCurrent, 1) &&
        tk_aot_sym(h, "cuCtxPopCurrent_v2", &d->cuCtxPopCurrent, 1) &&
        tk_aot_sym(h, "cuCtxGetDevice", &d->cuCtxGetDevice, 1) &&
        tk_aot_sym(h, "cuCtxGetId", &d->cuCtxGetId, 0) &&
        tk_aot_sym(h, "cuStreamGetCtx", &d->cuStreamGetCtx, 1) &&
        tk_aot_sym(h, "cuDeviceGetAttribute", &d->cuDeviceGetAttribute, 1) &&
        tk_aot_sym(h, "cuModuleLoadData", &d->cuModuleLoadData, 1) &&
        tk_aot_sym(h, "cuModuleGetFunction", &d->cuModuleGetFunction, 1) &&
        tk_aot_sym(h, "cuModuleUnload", &d->cuModuleUnload, 1) &&
        tk_aot_sym(h, "cuFuncSetAttribute", &d->cuFuncSetAttribute, 1) &&
        tk_aot_sym(h, "cuLaunchKernel", &d->cuLaunchKernel, 1);
    if (!ok)
        return;
    tk_aot_result r = d->cuInit(0);
    if (r != TK_AOT_CUDA_SUCCESS) {
        const char *name = NULL;
        if (d->cuGetErrorName(r, &name) != TK_AOT_CUDA_SUCCESS)
            name = NULL;
        snprintf(d->why, sizeof d->why, "no usable GPU: cuInit failed with %s",
                 name ? name : "an unknown error");
        return;
    }
    d->status = TK_OK;
}

/* Loads the driver once per process (per translation unit); TK_ERR_NO_DEVICE
 * with the reason when there is no driver or no GPU. */
static inline tk_status tk_aot_driver(void)
{
    if (pthread_once(&tk_aot_cu_once, tk_aot_load_driver) != 0)
        return tk_aot_error(TK_ERR_INTERNAL, "pthread_once failed loading the CUDA driver");
    if (tk_aot_cu.status != TK_OK)
        return tk_aot_error(tk_aot_cu.status, "%s", tk_aot_cu.why);
    return TK_OK;
}

/* Any other driver function (cuMemAlloc_v2, ...), from the library the
 * launchers use, for host code that links no libcuda either; NULL (with the
 * reason in tk_aot_last_error) when there is none. */
static inline void *tk_aot_cuda_symbol(const char *name)
{
    if (tk_aot_driver() != TK_OK)
        return NULL;
    void *p = dlsym(tk_aot_cu.handle, name);
    if (!p)
        tk_aot_error(TK_ERR_NOT_FOUND, "the CUDA driver has no %s", name);
    return p;
}

/* A failed driver call as a status and message naming the call and kernel. */
static inline tk_status tk_aot_fail(tk_aot_result r, const char *call, const char *launcher)
{
    const char *name = NULL, *text = NULL;
    if (tk_aot_cu.cuGetErrorName(r, &name) != TK_AOT_CUDA_SUCCESS || !name)
        name = "CUDA_ERROR_UNKNOWN";
    if (tk_aot_cu.cuGetErrorString(r, &text) != TK_AOT_CUDA_SUCCESS || !text)
        text = "unknown error";
    tk_status s = TK_ERR_DRIVER;
    switch (r) {
    case TK_AOT_CUDA_ERROR_OUT_OF_MEMORY: s = TK_ERR_NO_MEMORY; break;
    case TK_AOT_CUDA_ERROR_NO_DEVICE:
    case TK_AOT_CUDA_ERROR_INVALID_DEVICE: s = TK_ERR_NO_DEVICE; break;
    case TK_AOT_CUDA_ERROR_ILLEGAL_ADDRESS:
    case TK_AOT_CUDA_ERROR_LAUNCH_TIMEOUT:
    case TK_AOT_CUDA_ERROR_ASSERT:
    case TK_AOT_CUDA_ERROR_HARDWARE_STACK_ERROR:
    case TK_AOT_CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case TK_AOT_CUDA_ERROR_MISALIGNED_ADDRESS:
    case TK_AOT_CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case TK_AOT_CUDA_ERROR_INVALID_PC:
    case TK_AOT_CUDA_ERROR_LAUNCH_FAILED:
        s = TK_ERR_KERNEL_FAULT; /* the context is unusable from now on */
        break;
    default: break;
    }
    return tk_aot_error(s, "%s: %s failed: %s (%s)", launcher, call, name, text);
}

#define TK_AOT_CHECK(launcher, call)                                                               \
    do {                                                                                           \
        tk_aot_result tk_aot_r_ = (call);                                                          \
        if (tk_aot_r_ != TK_AOT_CUDA_SUCCESS)                                                      \
            return tk_aot_fail(tk_aot_r_, #call, (launcher));                                      \
    } while (0)

/* One compiled image of a specialisation: a cubin for one architecture. */
typedef struct tk_aot_image {
    const char *arch;        /* "sm_90a" */
    int major, minor, exact; /* runs on major.minor and later minors; exact: only there */
    const unsigned char *data;
    size_t size;
} tk_aot_image;

/* Where one specialisation is loaded: a slot per CUDA context. */
typedef struct tk_aot_loaded {
    unsigned long long context_id;
    tk_aot_module module;
    tk_aot_function_t function;
    const char *image; /* what was loaded: a cubin's arch, or "PTX" */
} tk_aot_loaded;

/* One specialisation: its code and its per-context state. */
typedef struct tk_aot_spec {
    const char *kernel;   /* the entry's name in the PTX */
    const char *launcher; /* for messages */
    const char *ptx;
    const tk_aot_image *images;
    int nimages;
    int num_warps, dynamic_shared;
    int threads; /* per program at launch: num_warps * 32 and any producer warps */
    pthread_mutex_t *lock;
    tk_aot_loaded *loaded; /* TK_AOT_MAX_CONTEXTS slots */
    int *nloaded;          /* slots in use; published after the slot is written */
} tk_aot_spec;

/* A context's identity: its id where the driver has one (a handle can be
 * reused after cuCtxDestroy), else the handle. */
static inline tk_status tk_aot_context_id(const tk_aot_spec *s, tk_aot_context ctx,
                                          unsigned long long *id)
{
    *id = (unsigned long long)(uintptr_t)ctx;
    if (tk_aot_cu.cuCtxGetId)
        TK_AOT_CHECK(s->launcher, tk_aot_cu.cuCtxGetId(ctx, id));
    return TK_OK;
}

/* The cubin for the current device when there is one, else the PTX (which
 * the driver compiles for it). */
static inline const tk_aot_image *tk_aot_pick_image(const tk_aot_spec *s, int major, int minor)
{
    for (int i = 0; i < s->nimages; i++) {
        const tk_aot_image *im = &s->images[i];
        if (im->major == major && (im->exact ? im->minor == minor : im->minor <= minor))
            return im;
    }
    return NULL;
}

/* Loads the module in the current context (the caller holds s->lock). */
static inline tk_status tk_aot_load(const tk_aot_spec *s, tk_aot_loaded *slot)
{
    tk_aot_device dev = 0;
    int major = 0, minor = 0;
    TK_AOT_CHECK(s->launcher, tk_aot_cu.cuCtxGetDevice(&dev));
    TK_AOT_CHECK(s->launcher,
                 tk_aot_cu.cuDeviceGetAttribute(
                     &major, TK_AOT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    TK_AOT_CHECK(s->launcher,
                 tk_aot_cu.cuDeviceGetAttribute(
                     &minor, TK_AOT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    const tk_aot_image *cubin = tk_aot_pick_image(s, major, minor);
    tk_aot_result r = cubin ? tk_aot_cu.cuModuleLoadData(&slot->module, cubin->data) : 1;
    slot->image = cubin ? cubin->arch : "PTX";
    if (r != TK_AOT_CUDA_SUCCESS) { /* no cubin, or one this driver cannot load */
        r = tk_aot_cu.cuModuleLoadData(&slot->module, s->ptx);
        slot->image = "PTX";
    }
    if (r != TK_AOT_CUDA_SUCCESS)
        return tk_aot_fail(r, "cuModuleLoadData", s->launcher);
    const char *call = "cuModuleGetFunction";
    r = tk_aot_cu.cuModuleGetFunction(&slot->function, slot->module, s->kernel);
    if (r == TK_AOT_CUDA_SUCCESS && s->dynamic_shared > 48 * 1024) {
        call = "cuFuncSetAttribute";
        r = tk_aot_cu.cuFuncSetAttribute(slot->function,
                                         TK_AOT_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         s->dynamic_shared);
    }
    if (r == TK_AOT_CUDA_SUCCESS)
        return TK_OK;
    tk_status st = tk_aot_fail(r, call, s->launcher);
    (void)tk_aot_cu.cuModuleUnload(slot->module); /* the first failure is reported; this one
                                                      could only leak the module */
    return st;
}

/* The specialisation's function in the current context, loading its module
 * on first use there. Launches read the slots without the lock: a slot is
 * written before the count that makes it visible. */
static inline tk_status tk_aot_function(const tk_aot_spec *s, tk_aot_context ctx,
                                        tk_aot_function_t *fn)
{
    unsigned long long id;
    tk_status st = tk_aot_context_id(s, ctx, &id);
    if (st != TK_OK)
        return st;
    int n = __atomic_load_n(s->nloaded, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (s->loaded[i].context_id == id) {
            *fn = s->loaded[i].function;
            return TK_OK;
        }
    if (pthread_mutex_lock(s->lock) != 0)
        return tk_aot_error(TK_ERR_INTERNAL, "%s: cannot take its lock", s->launcher);
    n = *s->nloaded;
    int i = 0;
    while (i < n && s->loaded[i].context_id != id)
        i++;
    if (i == n && n == TK_AOT_MAX_CONTEXTS)
        st = tk_aot_error(TK_ERR_INVALID,
                          "%s: loaded in %d CUDA contexts already, the most "
                          "a generated header keeps",
                          s->launcher, n);
    else if (i == n)
        st = tk_aot_load(s, &s->loaded[n]);
    if (st == TK_OK && i == n) {
        s->loaded[n].context_id = id;
        __atomic_store_n(s->nloaded, n + 1, __ATOMIC_RELEASE);
    }
    if (st == TK_OK)
        *fn = s->loaded[i].function;
    pthread_mutex_unlock(s->lock);
    return st;
}

/* The context of `stream`: the thread's current one for NULL (the legacy
 * default stream), the stream's own otherwise. */
static inline tk_aot_result tk_aot_stream_context(tk_stream stream, tk_aot_context *ctx)
{
    *ctx = NULL;
    if (!stream)
        return tk_aot_cu.cuCtxGetCurrent(ctx);
    return tk_aot_cu.cuStreamGetCtx((tk_aot_stream)stream, ctx);
}

/* What a specialisation runs from in the context of `stream` (the current
 * one for NULL): a cubin's arch ("sm_90a"), "PTX" (compiled by the driver),
 * or NULL where it is not loaded yet. */
static inline const char *tk_aot_image_in(const tk_aot_spec *s, tk_stream stream)
{
    tk_aot_context ctx = NULL;
    unsigned long long id = 0;
    if (tk_aot_driver() != TK_OK || tk_aot_stream_context(stream, &ctx) != TK_AOT_CUDA_SUCCESS ||
        !ctx || tk_aot_context_id(s, ctx, &id) != TK_OK)
        return NULL;
    int n = __atomic_load_n(s->nloaded, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (s->loaded[i].context_id == id)
            return s->loaded[i].image;
    return NULL;
}

/* Makes the context of `stream` (the current one for NULL) current for a
 * call if it is not; *pushed says tk_aot_leave must pop it. */
static inline tk_status tk_aot_enter(const tk_aot_spec *s, tk_stream stream, tk_aot_context *ctx,
                                     int *pushed)
{
    *pushed = 0;
    tk_status st = tk_aot_driver();
    if (st != TK_OK)
        return st;
    tk_aot_context cur = NULL;
    tk_aot_result r = tk_aot_stream_context(stream, ctx);
    if (r != TK_AOT_CUDA_SUCCESS || !*ctx)
        return tk_aot_error(TK_ERR_INVALID,
                            "%s: no CUDA context for this launch: make one "
                            "current on this thread (cuCtxSetCurrent) or pass a stream",
                            s->launcher);
    TK_AOT_CHECK(s->launcher, tk_aot_cu.cuCtxGetCurrent(&cur));
    if (cur != *ctx) {
        TK_AOT_CHECK(s->launcher, tk_aot_cu.cuCtxPushCurrent(*ctx));
        *pushed = 1;
    }
    return TK_OK;
}

/* Undoes tk_aot_enter; the first failure is the one reported. */
static inline tk_status tk_aot_leave(const tk_aot_spec *s, int pushed, tk_status st)
{
    tk_aot_context popped = NULL;
    tk_aot_result r = pushed ? tk_aot_cu.cuCtxPopCurrent(&popped) : TK_AOT_CUDA_SUCCESS;
    if (r != TK_AOT_CUDA_SUCCESS && st == TK_OK)
        return tk_aot_fail(r, "cuCtxPopCurrent", s->launcher);
    return st;
}

/* Launches one specialisation in the context of `stream`. */
static inline tk_status tk_aot_launch(const tk_aot_spec *s, tk_stream stream, tk_grid grid,
                                      void **params)
{
    if (grid.x == 0 || grid.y == 0 || grid.z == 0)
        return tk_aot_error(TK_ERR_LAUNCH, "%s: grid (%u, %u, %u) is empty", s->launcher, grid.x,
                            grid.y, grid.z);
    tk_aot_context ctx = NULL;
    int pushed = 0;
    tk_status st = tk_aot_enter(s, stream, &ctx, &pushed);
    if (st != TK_OK)
        return st;
    tk_aot_function_t fn = NULL;
    st = tk_aot_function(s, ctx, &fn);
    if (st == TK_OK) {
        tk_aot_result r = tk_aot_cu.cuLaunchKernel(fn, grid.x, grid.y, grid.z, (unsigned)s->threads,
                                                   1, 1, (unsigned)s->dynamic_shared,
                                                   (tk_aot_stream)stream, params, NULL);
        if (r != TK_AOT_CUDA_SUCCESS)
            st = tk_aot_fail(r, "cuLaunchKernel", s->launcher);
    }
    return tk_aot_leave(s, pushed, st);
}

/* Loads one specialisation in the context of `stream` without launching
 * (to see errors early, or to keep load time out of a timed region). */
static inline tk_status tk_aot_preload(const tk_aot_spec *s, tk_stream stream)
{
    tk_aot_context ctx = NULL;
    int pushed = 0;
    tk_status st = tk_aot_enter(s, stream, &ctx, &pushed);
    if (st != TK_OK)
        return st;
    tk_aot_function_t fn = NULL;
    return tk_aot_leave(s, pushed, tk_aot_function(s, ctx, &fn));
}

#endif /* TK_AOT_RUNTIME_H */
