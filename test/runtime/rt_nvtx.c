/* rt_nvtx.c: the NVTX ranges are off without TK_NVTX, and with it but no
 * tool or library to load (a missing file, or a library without the NVTX
 * entry points) they stay no-ops: pushes and pops do nothing, launches
 * work. Where libnvToolsExt.so.1 is installed, TK_NVTX=1 loads it. */
#include <dlfcn.h>

#include "rt_nvtx.h"
#include "rt_test.h"

static const char source[] = "import triton\n"
                             "import triton.language as tl\n"
                             "\n"
                             "@triton.jit\n"
                             "def inc(x_ptr, BLOCK: tl.constexpr):\n"
                             "    offs = tl.arange(0, BLOCK)\n"
                             "    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)\n";

/* A launch (with its compile) still runs and gives the right result. */
static void launch_once(tk_context *ctx)
{
    tk_module *m;
    tk_kernel *k;
    CHECK_OK(tk_module_load_string(ctx, "nvtx.py", source, &m));
    CHECK_OK(tk_module_kernel(m, "inc", &k));
    float host[16] = {0}, *dev;
    CHECK_OK(tk_alloc(ctx, sizeof host, (void **)&dev));
    CHECK_OK(tk_copy_to(ctx, dev, host, sizeof host));
    tk_arg args[] = {tk_ptr(dev, TK_F32), tk_const("BLOCK", 16)};
    CHECK_OK(tk_launch(k, (tk_grid){1, 1, 1}, args, 2, NULL));
    CHECK_OK(tk_copy_from(ctx, host, dev, sizeof host));
    for (int i = 0; i < 16; i++)
        CHECK(host[i] == 1.0f);
    CHECK_OK(tk_free(ctx, dev));
    tk_module_destroy(m);
}

/* Nested ranges; with `extra`, one pop too many (harmless when the
 * ranges are no-ops). */
static void push_pop(bool extra)
{
    rt_nvtx_push("compile", "k");
    rt_nvtx_push("launch", NULL);
    rt_nvtx_pop();
    rt_nvtx_pop();
    if (extra)
        rt_nvtx_pop();
}

int main(void)
{
    setenv("TK_CACHE_DISABLE", "1", 1);
    unsetenv("TK_NVTX");
    unsetenv("TK_LIBNVTX");
    tk_context_options o = {.interpret = 1};
    tk_context *ctx;
    CHECK_OK(tk_context_create(&ctx, &o));

    /* unset: off, whatever else the environment holds */
    setenv("NVTX_INJECTION64_PATH", "/nonexistent/libinjection.so", 1);
    CHECK(rt_nvtx_mode() == RT_NVTX_OFF);
    push_pop(true);
    launch_once(ctx);
    setenv("TK_NVTX", "0", 1);
    CHECK(rt_nvtx_reload() == RT_NVTX_OFF);
    setenv("TK_NVTX", "", 1);
    CHECK(rt_nvtx_reload() == RT_NVTX_OFF);

    /* set, with nothing there to load */
    setenv("TK_NVTX", "1", 1);
    setenv("TK_LIBNVTX", "/nonexistent/libnvToolsExt.so.1", 1);
    CHECK(rt_nvtx_reload() == RT_NVTX_NONE);
    push_pop(true);
    launch_once(ctx);
    /* real libraries without the entry points: a tool without
     * InitializeInjectionNvtx2, a library without nvtxRangePushA */
    setenv("NVTX_INJECTION64_PATH", "libm.so.6", 1);
    setenv("TK_LIBNVTX", "libm.so.6", 1);
    CHECK(rt_nvtx_reload() == RT_NVTX_NONE);
    push_pop(true);
    setenv("NVTX_INJECTION64_PATH", "", 1);
    CHECK(rt_nvtx_reload() == RT_NVTX_NONE);
    launch_once(ctx);

    /* the NVTX library, where one is installed */
    unsetenv("TK_LIBNVTX");
    unsetenv("NVTX_INJECTION64_PATH");
    void *lib = dlopen("libnvToolsExt.so.1", RTLD_NOW | RTLD_LOCAL);
    RtNvtxMode m = rt_nvtx_reload();
    CHECK(m == (lib ? RT_NVTX_LIBRARY : RT_NVTX_NONE));
    if (lib) {
        push_pop(false);
        launch_once(ctx);
        dlclose(lib);
    }
    unsetenv("TK_NVTX");
    CHECK(rt_nvtx_reload() == RT_NVTX_OFF);
    tk_context_destroy(ctx);
    return failures ? 1 : 0;
}
