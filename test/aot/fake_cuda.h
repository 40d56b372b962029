/* fake_cuda.h: what the fake driver (fake_cuda.c) records, for the tests
 * that load it through TK_LIBCUDA and read it with dlsym. */
#ifndef TK_FAKE_CUDA_H
#define TK_FAKE_CUDA_H

#include <stdint.h>

enum { FAKE_DEVICES = 2, FAKE_MAX = 4096, FAKE_PARAMS = 8 };
#define FAKE_STREAM_BASE    0x5000u
#define FAKE_STREAM(device) ((void *)(uintptr_t)(FAKE_STREAM_BASE + (unsigned)(device)))

typedef struct FakeLoad {
    const void *image; /* what cuModuleLoadData got */
    int context;       /* the device whose context was current */
    char kernel[32];   /* the function found in it */
} FakeLoad;

typedef struct FakeLaunch {
    const void *image; /* of the launched function's module */
    int load_context;  /* where that module was loaded */
    int context;       /* current at the launch */
    unsigned grid[3], block, shared;
    uintptr_t stream;
    uint64_t param[FAKE_PARAMS]; /* each parameter's bytes, zero-extended */
} FakeLaunch;

typedef struct FakeLog {
    const char *expect_kernel; /* cuModuleGetFunction finds only this name */
    int nparams;               /* how many parameters cuLaunchKernel copies */
    int param_bytes[FAKE_PARAMS];
    FakeLoad loads[FAKE_MAX];
    int nloads;
    FakeLaunch launches[FAKE_MAX];
    int nlaunches;
    int pushes;
    int unloads;
} FakeLog;

typedef FakeLog *(*fake_log_fn)(void);
typedef void (*fake_set_current_fn)(int device);
typedef int (*fake_current_fn)(void);

FakeLog *fake_log(void);
void fake_set_current(int device);
int fake_current(void);

#endif
