/* rt_nvtx.c: NVTX ranges (rt_nvtx.h) without NVTX headers or a link-time
 * library. CUDA 13 ships NVTX as headers only, whose code finds a tool
 * through NVTX_INJECTION64_PATH (Nsight Systems sets it in the process it
 * profiles) and hands it tables of function pointers to fill in. This
 * file speaks that protocol itself, for the two calls it needs (push a
 * named range, pop it); where no tool is injected it tries the NVTX
 * library, libnvToolsExt.so.1, which does the same for its callers.
 * Assumes the protocol of NVTX 3 (export tables 1 and 3, module 1, slots
 * 9 and 11). Guarantees: nothing is loaded unless TK_NVTX is set; a tool
 * or library that cannot be loaded, lacks the symbol or fails to start
 * leaves the ranges as no-ops (one warning); never exits. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda/cuda.h"
#include "rt_nvtx.h"

typedef void (*AnyFn)(void);
typedef int (*PushFn)(const char *);
typedef int (*PopFn)(void);

static RtNvtxMode mode = RT_NVTX_OFF;
static PushFn push_fn;
static PopFn pop_fn;

/* ---- the injection protocol -------------------------------------------------------- */

/* Export table ids, the core module and its slots, as NVTX 3 numbers them. */
enum {
    ET_CALLBACKS = 1,
    ET_VERSION = 3,
    MODULE_CORE = 1,
    SLOT_PUSH_A = 9,
    SLOT_POP = 11,
    CORE_SLOTS = 16,
    API_VERSION = 3
};

/* The tool stores its implementation of core call i through core_table[i];
 * slots other than push and pop are filled and never called. The extra
 * NULL entry ends the table, as the protocol has it. */
static AnyFn core_fns[CORE_SLOTS];
static AnyFn *core_table[CORE_SLOTS + 1];
static AnyFn *no_table[1];

static int module_table(int module, AnyFn ***table, unsigned *size)
{
    bool core = module == MODULE_CORE;
    if (table)
        *table = core ? core_table : no_table;
    if (size) /* other modules: no slots, so the tool writes nothing there */
        *size = core ? CORE_SLOTS : 0;
    return 1;
}

static void set_tool_version(uint32_t version) { (void)version; }

static const struct {
    size_t size;
    int (*get)(int module, AnyFn ***table, unsigned *size);
} callbacks = {sizeof callbacks, module_table};

static const struct {
    size_t size;
    uint32_t version, reserved;
    void (*set)(uint32_t);
} version_info = {sizeof version_info, API_VERSION, 0, set_tool_version};

static const void *export_table(uint32_t id)
{
    return id == ET_CALLBACKS ? (const void *)&callbacks
        : id == ET_VERSION    ? (const void *)&version_info
                              : NULL;
}

static bool start_tool(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return false;
    typedef int (*InitFn)(const void *(*)(uint32_t));
    InitFn init = (InitFn)dlsym(h, "InitializeInjectionNvtx2");
    if (!init) {
        dlclose(h);
        return false;
    }
    for (int i = 0; i < CORE_SLOTS; i++)
        core_table[i] = &core_fns[i];
    /* once started the tool stays loaded: it may run threads of its own */
    if (!init(export_table) || !core_fns[SLOT_PUSH_A] || !core_fns[SLOT_POP])
        return false;
    push_fn = (PushFn)core_fns[SLOT_PUSH_A];
    pop_fn = (PopFn)core_fns[SLOT_POP];
    return true;
}

/* ---- the library ---------------------------------------------------------------------- */

static bool open_library(void)
{
    const char *name = getenv("TK_LIBNVTX");
    void *h = dlopen(name && *name ? name : "libnvToolsExt.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return false;
    PushFn push = (PushFn)dlsym(h, "nvtxRangePushA");
    PopFn pop = (PopFn)dlsym(h, "nvtxRangePop");
    if (!push || !pop) {
        dlclose(h);
        return false;
    }
    push_fn = push;
    pop_fn = pop;
    return true;
}

/* ---- the ranges ------------------------------------------------------------------------ */

static RtNvtxMode decide(void)
{
    push_fn = NULL;
    pop_fn = NULL;
    if (!rt_env_on("TK_NVTX"))
        return RT_NVTX_OFF;
    const char *tool = getenv("NVTX_INJECTION64_PATH");
    if (tool && *tool && start_tool(tool))
        return RT_NVTX_INJECTION;
    if (open_library())
        return RT_NVTX_LIBRARY;
    static int warned;
    rt_warn_once(&warned,
                 "TK_NVTX is set, but no NVTX tool (NVTX_INJECTION64_PATH) or library "
                 "(libnvToolsExt.so.1) could be loaded: no ranges");
    return RT_NVTX_NONE;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void decide_once(void) { mode = decide(); }

RtNvtxMode rt_nvtx_mode(void)
{
    pthread_once(&once, decide_once);
    return mode;
}

RtNvtxMode rt_nvtx_reload(void)
{
    pthread_once(&once, decide_once);
    mode = decide();
    return mode;
}

void rt_nvtx_push(const char *what, const char *name)
{
    if (rt_nvtx_mode() < RT_NVTX_INJECTION)
        return;
    char text[256];
    snprintf(text, sizeof text, "tk %s%s%s", what, name ? " " : "", name ? name : "");
    push_fn(text);
}

void rt_nvtx_pop(void)
{
    if (rt_nvtx_mode() >= RT_NVTX_INJECTION)
        pop_fn();
}
