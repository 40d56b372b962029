/* cuda.h: the interface of lib/cuda/, the CUDA driver below the compiler:
 * libcuda.so.1 loaded with dlopen into one function table (driver.c),
 * the check every driver call goes through, and PTX assembled into a cubin
 * (assemble.c) by the driver's linker or ptxas. The driver (--emit=cubin),
 * aot/ (the cubins of a header) and the runtime (the JIT) all use it.
 * Below it: support/ only. Its names keep the runtime's rt_ tag, which
 * the runtime's many calls know them by. */
#ifndef TK_CUDA_H
#define TK_CUDA_H

#include <pthread.h>
#include <stdbool.h>

#include <cuda.h> /* types only: nothing links against libcuda */

#include "support/support.h"

/* ---- errors ------------------------------------------------------------------ */

/* Prints "tk: warning: ..." to stderr once per `flag`. */
void rt_warn_once(int *flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- environment and clock (driver.c) ------------------------------------- */
/* A TK_* switch: set, not empty and not "0". */
bool rt_env_on(const char *name);
/* Monotonic milliseconds. */
double rt_now_ms(void);

/* ---- the driver (driver.c) ------------------------------------------------- */

/* X(field, symbol exported by libcuda.so.1). __typeof__ of the cuda.h name
 * gives the prototype; the symbol names the ABI version cuda.h maps to. */
/* clang-format off */
#define RT_CU_FUNCS(X)                                                         \
    X(cuInit, "cuInit")                                                        \
    X(cuGetErrorName, "cuGetErrorName")                                        \
    X(cuGetErrorString, "cuGetErrorString")                                    \
    X(cuDriverGetVersion, "cuDriverGetVersion")                                \
    X(cuDeviceGetCount, "cuDeviceGetCount")                                    \
    X(cuDeviceGet, "cuDeviceGet")                                              \
    X(cuDeviceGetName, "cuDeviceGetName")                                      \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                            \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                    \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")               \
    X(cuCtxGetCurrent, "cuCtxGetCurrent")                                      \
    X(cuCtxSetCurrent, "cuCtxSetCurrent")                                      \
    X(cuCtxGetDevice, "cuCtxGetDevice")                                        \
    X(cuCtxSynchronize, "cuCtxSynchronize")                                    \
    X(cuMemAlloc, "cuMemAlloc_v2")                                             \
    X(cuMemFree, "cuMemFree_v2")                                               \
    X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")                                         \
    X(cuMemcpyDtoH, "cuMemcpyDtoH_v2")                                         \
    X(cuMemsetD8, "cuMemsetD8_v2")                                             \
    X(cuLinkCreate, "cuLinkCreate_v2")                                         \
    X(cuLinkAddData, "cuLinkAddData_v2")                                       \
    X(cuLinkComplete, "cuLinkComplete")                                        \
    X(cuLinkDestroy, "cuLinkDestroy")                                          \
    X(cuModuleLoadData, "cuModuleLoadData")                                    \
    X(cuModuleLoadDataEx, "cuModuleLoadDataEx")                                \
    X(cuModuleUnload, "cuModuleUnload")                                        \
    X(cuModuleGetFunction, "cuModuleGetFunction")                              \
    X(cuFuncGetAttribute, "cuFuncGetAttribute")                                \
    X(cuFuncSetAttribute, "cuFuncSetAttribute")                                \
    X(cuLaunchKernel, "cuLaunchKernel")                                        \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor,                             \
      "cuOccupancyMaxActiveBlocksPerMultiprocessor")                           \
    X(cuMemsetD8Async, "cuMemsetD8Async")                                      \
    X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2")                               \
    X(cuMemGetAddressRange, "cuMemGetAddressRange_v2")                         \
    X(cuEventCreate, "cuEventCreate")                                          \
    X(cuEventDestroy, "cuEventDestroy_v2")                                     \
    X(cuEventRecord, "cuEventRecord")                                          \
    X(cuEventSynchronize, "cuEventSynchronize")                                \
    X(cuEventElapsedTime, "cuEventElapsedTime")
/* clang-format on */

typedef struct RtDriver {
#define X(f, sym) __typeof__(f) *p_##f;
    RT_CU_FUNCS(X)
#undef X
    /* CUDA 12 and later; NULL on older drivers (TMA kernels then fall back) */
    __typeof__(cuTensorMapEncodeTiled) *p_cuTensorMapEncodeTiled;
    /* CUDA 11.8 and later; NULL on older drivers (launch_pdl is then refused) */
    __typeof__(cuLaunchKernelEx) *p_cuLaunchKernelEx;
    /* CUDA 11.2 and later; NULL on older drivers (kernels that write their own
     * tensor maps then launch without TMA) */
    __typeof__(cuMemAllocAsync) *p_cuMemAllocAsync;
    __typeof__(cuMemFreeAsync) *p_cuMemFreeAsync;
    int version;
} RtDriver;

extern RtDriver rt_cu;

/* Loads libcuda.so.1 ($TK_LIBCUDA names another) and calls cuInit once per
 * process; TK_ERR_NO_DEVICE (with the reason) when there is no driver or
 * no GPU. */
tk_status rt_driver_load(void);
/* Why the driver cannot be used (one line, no advice), or NULL when it can. */
const char *rt_driver_problem(void);
/* Turns a failed CUresult into a status and message naming the call and
 * the kernel (may be NULL); faults become TK_ERR_KERNEL_FAULT. */
tk_status rt_cu_fail(CUresult r, const char *call, const char *kernel);
/* Is r a fault of a launch, after which the context is unusable? */
bool rt_cu_is_fault(CUresult r);

/* Every driver call goes through this: on failure it records the call and
 * returns the status from the enclosing function. */
#define RT_CU(kernel, fn, ...)                                                                     \
    do {                                                                                           \
        CUresult rt_r_ = rt_cu.p_##fn(__VA_ARGS__);                                                \
        if (rt_r_ != CUDA_SUCCESS)                                                                 \
            return rt_cu_fail(rt_r_, #fn, (kernel));                                               \
    } while (0)

/* The same check where cleanup is needed: sets `st` and jumps to `label`. */
#define RT_CU_GO(st, label, kernel, fn, ...)                                                       \
    do {                                                                                           \
        CUresult rt_r_ = rt_cu.p_##fn(__VA_ARGS__);                                                \
        if (rt_r_ != CUDA_SUCCESS) {                                                               \
            (st) = rt_cu_fail(rt_r_, #fn, (kernel));                                               \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)

/* ---- PTX -> cubin (assemble.c) ----------------------------------------------- */

/* Assembles NUL-terminated PTX of `len` bytes for `arch` ("sm_90a"),
 * appending the cubin to out: with `ptxas` from PATH, else through the
 * CUDA driver's linker when a driver and GPU are there. false with a one-line
 * reason in why (what was tried, why each failed) when neither can. */
bool rt_assemble_ptx(const char *ptx, size_t len, const char *arch, const char *kernel,
                     int64_t smem, StrBuf *out, char *why, size_t cap);
/* Assembles PTX of len bytes (a final NUL is not written to ptxas) for
 * `arch` with ptxas ($TK_PTXAS, else PATH, else
 * $CUDA_HOME/bin; TK_PTXAS=0: none), as whole-program code, appending the
 * cubin to out; TK_ERR_NOT_FOUND where there is no ptxas. Thread-safe:
 * each call runs its own process in its own temp folder. smem: the
 * kernel's dynamic shared memory per program (-1: unknown); where it is
 * known and registers alone keep a tensor-core kernel at 1, 2 or 3
 * programs an SM where one more would fit, ptxas runs again with the
 * .maxnreg that admits it, kept when it spills at most a few words
 * (rt_ptxas_retry_kept); beside the first run, on spare CPUs, where that
 * .maxnreg is foreseen (rt_ptxas_retry_foreseen). */
tk_status rt_ptxas(const char *ptx, size_t len, const char *arch, int64_t smem, StrBuf *out);
/* rt_ptxas's retry: for PTX that ptxas assembled with regs registers and
 * spills bytes of spill, smem dynamic and static_smem static shared bytes
 * a program, the .maxnreg that lets one more program share an SM of arch,
 * with *at where the directive goes; 0 for no retry. */
int rt_ptxas_more_programs(const char *ptx, const char *arch, int64_t smem, int regs, int spills,
                           int static_smem, size_t *at);
/* The retries (their .maxnreg into r, distinct, at most 2) that some
 * register count of the first run could call for, with *at; rt_ptxas
 * runs them beside the first run. 0 where none or more than 2 could. */
int rt_ptxas_retry_foreseen(const char *ptx, const char *arch, int64_t smem, int *r, size_t *at);
/* Whether the retry's cubin, regs registers and spills bytes of spill
 * stores and loads at .maxnreg r, replaces the first one. */
bool rt_ptxas_retry_kept(int regs, int spills, int r);
/* Whether PTX text carries line tables (.file directives): its cubin is
 * then made with line info (CU_JIT_GENERATE_LINE_INFO, ptxas -lineinfo),
 * which the assembler otherwise drops. */
bool rt_ptx_has_lines(const char *ptx, size_t len);

#endif
