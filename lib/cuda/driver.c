/* driver.c: the CUDA driver and the runtime's warnings. Loads the
 * driver with dlopen("libcuda.so.1") on first use and turns CUresults
 * into tk statuses. Nothing links against libcuda, so a machine with no GPU
 * gets TK_ERR_NO_DEVICE with the reason, never a failure to start. The
 * function table is written once (pthread_once), then only read. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/cuda.h"

/* Warnings go to stderr, not to tk_last_error: the call still succeeds. */
void rt_warn_once(int *flag, const char *fmt, ...)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    int seen = *flag;
    *flag = 1;
    pthread_mutex_unlock(&lock);
    if (seen)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("tk: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- the driver -------------------------------------------------------------- */

RtDriver rt_cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static tk_status load_status;
static char load_message[512]; /* why the driver cannot be used, without advice */
static bool load_missing;      /* no library at all: advise the interpreter */

static void driver_load_once(void)
{
    const char *lib = getenv("TK_LIBCUDA");
    if (!lib || !*lib)
        lib = "libcuda.so.1";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(load_message, sizeof load_message, "no CUDA driver: cannot load %s (%s)", lib,
                 why ? why : "not found");
        load_status = TK_ERR_NO_DEVICE;
        load_missing = true;
        return;
    }
#define X(f, sym)                                                                                  \
    rt_cu.p_##f = (__typeof__(rt_cu.p_##f))dlsym(h, sym);                                          \
    if (!rt_cu.p_##f) {                                                                            \
        snprintf(load_message, sizeof load_message,                                                \
                 "the CUDA driver %s lacks %s (driver too old?)", lib, sym);                       \
        load_status = TK_ERR_NO_DEVICE;                                                            \
        return;                                                                                    \
    }
    RT_CU_FUNCS(X)
#undef X
    rt_cu.p_cuTensorMapEncodeTiled =
        (__typeof__(rt_cu.p_cuTensorMapEncodeTiled))dlsym(h, "cuTensorMapEncodeTiled");
    rt_cu.p_cuLaunchKernelEx = (__typeof__(rt_cu.p_cuLaunchKernelEx))dlsym(h, "cuLaunchKernelEx");
    rt_cu.p_cuMemAllocAsync = (__typeof__(rt_cu.p_cuMemAllocAsync))dlsym(h, "cuMemAllocAsync");
    rt_cu.p_cuMemFreeAsync = (__typeof__(rt_cu.p_cuMemFreeAsync))dlsym(h, "cuMemFreeAsync");
    CUresult r = rt_cu.p_cuInit(0);
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        if (rt_cu.p_cuGetErrorName(r, &name) != CUDA_SUCCESS)
            name = NULL;
        snprintf(load_message, sizeof load_message, "no usable GPU: cuInit failed with %s",
                 name ? name : "an unknown error");
        load_status = TK_ERR_NO_DEVICE;
        return;
    }
    if (rt_cu.p_cuDriverGetVersion(&rt_cu.version) != CUDA_SUCCESS)
        rt_cu.version = 0;
    load_status = TK_OK;
}

tk_status rt_driver_load(void)
{
    pthread_once(&load_once, driver_load_once);
    if (load_status != TK_OK)
        return err_set(load_status, "%s%s", load_message,
                       load_missing ? "; set TK_INTERPRET=1 to run on the CPU interpreter" : "");
    return TK_OK;
}

const char *rt_driver_problem(void)
{
    pthread_once(&load_once, driver_load_once);
    return load_status == TK_OK ? NULL : load_message;
}

/* Errors after which the context is unusable: the kernel faulted. */
static const char *fault_words(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS: return "illegal address";
    case CUDA_ERROR_MISALIGNED_ADDRESS: return "misaligned address";
    case CUDA_ERROR_INVALID_ADDRESS_SPACE: return "invalid address space";
    case CUDA_ERROR_ILLEGAL_INSTRUCTION: return "illegal instruction";
    case CUDA_ERROR_INVALID_PC: return "invalid program counter";
    case CUDA_ERROR_HARDWARE_STACK_ERROR: return "hardware stack error";
    case CUDA_ERROR_ASSERT: return "device-side assert failed";
    case CUDA_ERROR_LAUNCH_FAILED: return "launch failed";
    case CUDA_ERROR_LAUNCH_TIMEOUT: return "timed out";
    default: return NULL;
    }
}

bool rt_cu_is_fault(CUresult r) { return fault_words(r) != NULL; }

tk_status rt_cu_fail(CUresult r, const char *call, const char *kernel)
{
    const char *name = NULL, *text = NULL;
    if (!rt_cu.p_cuGetErrorName || rt_cu.p_cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
        name = "CUDA_ERROR_UNKNOWN";
    if (!rt_cu.p_cuGetErrorString || rt_cu.p_cuGetErrorString(r, &text) != CUDA_SUCCESS || !text)
        text = "unknown error";
    const char *fault = fault_words(r);
    if (fault && strncmp(call, "cuModule", 8) == 0) /* the kernel loaded has not run yet */
        return err_set(TK_ERR_KERNEL_FAULT,
                       "a kernel launched earlier faulted: %s (%s, reported by %s while loading "
                       "kernel '%s'); the CUDA context is unusable from now on",
                       fault, name, call, kernel ? kernel : "?");
    if (fault)
        return err_set(TK_ERR_KERNEL_FAULT,
                       "kernel '%s' faulted: %s (%s, reported by %s); the CUDA context is "
                       "unusable from now on",
                       kernel ? kernel : "?", fault, name, call);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return err_set(TK_ERR_NO_MEMORY, "%s failed: %s (%s)%s%s%s", call, name, text,
                       kernel ? " for kernel '" : "", kernel ? kernel : "", kernel ? "'" : "");
    if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_INVALID_DEVICE)
        return err_set(TK_ERR_NO_DEVICE, "%s failed: %s (%s)", call, name, text);
    return err_set(TK_ERR_DRIVER, "%s failed: %s (%s)%s%s%s", call, name, text,
                   kernel ? " for kernel '" : "", kernel ? kernel : "", kernel ? "'" : "");
}

bool rt_env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

double rt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
