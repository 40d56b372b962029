/* fake_cuda.c: a stand-in for libcuda.so.1 with the entry points the AOT
 * header prelude uses, so its launchers can be tested where there is no
 * GPU (TK_LIBCUDA names this library). Two devices (cc 9.0 and 8.6), one
 * context each; streams name a context; launches and module loads are
 * recorded for the test to read through fake_log(). A grid of x = 7777
 * faults (illegal address); FAKE_CUDA_INIT=100 makes cuInit fail. Device
 * memory is host memory, and with $FAKE_BLOCK set a kernel named
 * vector_add runs on the CPU (that BLOCK), so examples/aot runs here whole. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"

typedef int CUresult;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

/* Fake handles: contexts are &contexts[i], streams are FAKE_STREAM(i). */
static char contexts[FAKE_DEVICES];
static _Thread_local CUcontext current;
static _Thread_local CUcontext pushed[8];
static _Thread_local int npushed;
static FakeLog log_;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

FakeLog *fake_log(void) { return &log_; }

/* The test makes a context current as cuCtxSetCurrent would. */
void fake_set_current(int device) { current = device < 0 ? NULL : (CUcontext)&contexts[device]; }

int fake_current(void) { return current ? (int)((char *)current - contexts) : -1; }

static int ctx_index(CUcontext c) { return c ? (int)((char *)c - contexts) : -1; }

CUresult cuInit(unsigned flags)
{
    const char *fail = getenv("FAKE_CUDA_INIT");
    (void)flags;
    return fail ? atoi(fail) : 0;
}

CUresult cuGetErrorName(CUresult r, const char **name)
{
    *name = r == 100 ? "CUDA_ERROR_NO_DEVICE"
        : r == 700   ? "CUDA_ERROR_ILLEGAL_ADDRESS"
        : r == 201   ? "CUDA_ERROR_INVALID_CONTEXT"
                     : "CUDA_ERROR_FAKE";
    return 0;
}

CUresult cuGetErrorString(CUresult r, const char **text)
{
    (void)r;
    *text = "as the fake driver says";
    return 0;
}

CUresult cuCtxGetCurrent(CUcontext *c)
{
    *c = current;
    return 0;
}

CUresult cuCtxPushCurrent_v2(CUcontext c)
{
    if (npushed == 8)
        return 1;
    pushed[npushed++] = current;
    current = c;
    pthread_mutex_lock(&lock);
    log_.pushes++;
    pthread_mutex_unlock(&lock);
    return 0;
}

CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
    if (npushed == 0)
        return 201;
    if (c)
        *c = current;
    current = pushed[--npushed];
    return 0;
}

CUresult cuCtxGetDevice(int *dev)
{
    if (!current)
        return 201;
    *dev = ctx_index(current);
    return 0;
}

CUresult cuCtxGetId(CUcontext c, unsigned long long *id)
{
    *id = 1000 + (unsigned long long)ctx_index(c);
    return 0;
}

CUresult cuStreamGetCtx(CUstream s, CUcontext *c)
{
    if (!s) {
        *c = current;
        return current ? 0 : 201;
    }
    int i = (int)((uintptr_t)s - FAKE_STREAM_BASE);
    if (i < 0 || i >= FAKE_DEVICES)
        return 400;
    *c = (CUcontext)&contexts[i];
    return 0;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
    static const int cc[FAKE_DEVICES][2] = {{9, 0}, {8, 6}};
    if (dev < 0 || dev >= FAKE_DEVICES || (attr != 75 && attr != 76))
        return 1;
    *v = cc[dev][attr == 76];
    return 0;
}

CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    pthread_mutex_lock(&lock);
    int i = log_.nloads;
    if (i < FAKE_MAX) {
        log_.loads[i].image = image;
        log_.loads[i].context = ctx_index(current);
        log_.nloads++;
    }
    pthread_mutex_unlock(&lock);
    if (!current || i >= FAKE_MAX)
        return 201;
    *m = (CUmodule)(uintptr_t)(i + 1);
    return 0;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    if (log_.expect_kernel && strcmp(name, log_.expect_kernel) != 0)
        return 500; /* CUDA_ERROR_NOT_FOUND */
    int load = (int)(uintptr_t)m - 1;
    snprintf(log_.loads[load].kernel, sizeof log_.loads[load].kernel, "%s", name);
    *f = (CUfunction)m; /* function k belongs to load k - 1 */
    return 0;
}

CUresult cuModuleUnload(CUmodule m)
{
    pthread_mutex_lock(&lock);
    log_.unloads++;
    pthread_mutex_unlock(&lock);
    return m ? 0 : 400;
}

CUresult cuFuncSetAttribute(CUfunction f, int attr, int value)
{
    (void)f, (void)attr, (void)value;
    return 0;
}

/* out = x + y for i < n in the programs of the grid, as the kernel does. */
static void run_vector_add(unsigned gx, void **params)
{
    long block = atol(getenv("FAKE_BLOCK"));
    float *x, *y, *out;
    int32_t n;
    memcpy(&x, params[0], sizeof x);
    memcpy(&y, params[1], sizeof y);
    memcpy(&out, params[2], sizeof out);
    memcpy(&n, params[3], sizeof n);
    for (long i = 0; i < n && i < (long)gx * block; i++)
        out[i] = x[i] + y[i];
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                        void **extra)
{
    (void)by, (void)bz, (void)extra;
    if (gx == 7777)
        return 700;
    int load = (int)(uintptr_t)f - 1;
    if (strcmp(log_.loads[load].kernel, "vector_add") == 0 && getenv("FAKE_BLOCK"))
        run_vector_add(gx, params);
    pthread_mutex_lock(&lock);
    int i = log_.nlaunches;
    if (i < FAKE_MAX) {
        FakeLaunch *l = &log_.launches[i];
        l->image = log_.loads[load].image;
        l->load_context = log_.loads[load].context;
        l->context = ctx_index(current);
        l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = gz;
        l->block = bx;
        l->shared = shared;
        l->stream = (uintptr_t)s;
        for (int p = 0; p < log_.nparams && p < FAKE_PARAMS && params && params[p]; p++)
            memcpy(&l->param[p], params[p], (size_t)log_.param_bytes[p]);
        log_.nlaunches++;
    }
    pthread_mutex_unlock(&lock);
    return i < FAKE_MAX ? 0 : 2;
}

/* ---- what a host program calls: devices, contexts, memory, streams ---- */

CUresult cuDeviceGetCount(int *n)
{
    *n = FAKE_DEVICES;
    return 0;
}

CUresult cuDeviceGet(int *dev, int ordinal)
{
    *dev = ordinal;
    return ordinal >= 0 && ordinal < FAKE_DEVICES ? 0 : 101;
}

CUresult cuDeviceGetName(char *name, int len, int dev)
{
    snprintf(name, (size_t)len, "fake device %d", dev);
    return 0;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, int dev)
{
    *c = (CUcontext)&contexts[dev];
    return 0;
}

CUresult cuDevicePrimaryCtxRelease_v2(int dev)
{
    (void)dev;
    return 0;
}

CUresult cuCtxSetCurrent(CUcontext c)
{
    current = c;
    return 0;
}

CUresult cuCtxSynchronize(void) { return current ? 0 : 201; }

CUresult cuMemAlloc_v2(uint64_t *p, size_t bytes)
{
    void *m = malloc(bytes);
    *p = (uint64_t)(uintptr_t)m;
    return m ? 0 : 2;
}

CUresult cuMemFree_v2(uint64_t p)
{
    free((void *)(uintptr_t)p);
    return 0;
}

CUresult cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes)
{
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return 0;
}

CUresult cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes)
{
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return 0;
}

CUresult cuMemsetD8_v2(uint64_t p, unsigned char v, size_t bytes)
{
    memset((void *)(uintptr_t)p, v, bytes);
    return 0;
}

CUresult cuStreamCreate(CUstream *s, unsigned flags)
{
    (void)flags;
    if (!current)
        return 201;
    *s = (CUstream)FAKE_STREAM(ctx_index(current));
    return 0;
}

CUresult cuStreamDestroy_v2(CUstream s)
{
    (void)s;
    return 0;
}
