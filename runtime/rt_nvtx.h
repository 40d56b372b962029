/* rt_nvtx.h: NVTX ranges around the runtime's work (compile, module load,
 * autotune, launch), so that an Nsight Systems timeline shows where a
 * first call spends its time. Only with TK_NVTX=1, and only when a tool
 * or library is there to receive them (rt_nvtx.c says how it is found);
 * otherwise every call is a no-op after one check. No build dependency on
 * NVTX or CUDA headers. */
#ifndef TK_RT_NVTX_H
#define TK_RT_NVTX_H

typedef enum {
    RT_NVTX_OFF,       /* TK_NVTX is not set */
    RT_NVTX_NONE,      /* set, but no tool or library could be loaded */
    RT_NVTX_INJECTION, /* the tool named by NVTX_INJECTION64_PATH (as nsys sets it) */
    RT_NVTX_LIBRARY    /* libnvToolsExt.so.1 ($TK_LIBNVTX names another) */
} RtNvtxMode;

/* The mode, decided once per process from the environment. */
RtNvtxMode rt_nvtx_mode(void);
/* Opens a range named "tk WHAT NAME" (name may be NULL) on this thread. */
void rt_nvtx_push(const char *what, const char *name);
/* Closes the thread's innermost range opened by rt_nvtx_push. */
void rt_nvtx_pop(void);
/* Decides the mode again from the environment now (for tests; not safe
 * while other threads use the ranges). */
RtNvtxMode rt_nvtx_reload(void);

#endif
