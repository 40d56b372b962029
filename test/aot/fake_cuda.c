/* fake_cuda.c: a stand-in for libcuda.so.1 with the entry points the AOT
 * header prelude uses, so its launchers can be tested where there is no
 * GPU (TK_LIBCUDA names this library). Two devices (cc 9.0 and 8.6), one
 * context each; streams name a context; launches and module loads are
 * recorded for the test to read through fake_log(). A grid of x = 7777
 * faults (illegal address); FAKE_CUDA_INIT=100 makes cuInit fail. */
#include <pthread.h>
#include <stdint.h>
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
    *name = r == 100 ? "CUDA_ERROR_NO_DEVICE" : r == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS"
          : r == 201 ? "CUDA_ERROR_INVALID_CONTEXT" : "CUDA_ERROR_FAKE";
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
    if (strcmp(name, log_.expect_kernel) != 0)
        return 500; /* CUDA_ERROR_NOT_FOUND */
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

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                        void **extra)
{
    (void)by, (void)bz, (void)extra;
    if (gx == 7777)
        return 700;
    int load = (int)(uintptr_t)f - 1;
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
        for (int p = 0; p < FAKE_PARAMS && params && params[p] && p < log_.nparams; p++)
            memcpy(&l->param[p], params[p], (size_t)log_.param_bytes[p]);
        log_.nlaunches++;
    }
    pthread_mutex_unlock(&lock);
    return i < FAKE_MAX ? 0 : 2;
}
