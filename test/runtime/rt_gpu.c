/* rt_gpu.c: the runtime's GPU paths, on a machine with a GPU (skipped, exit
 * 77, where there is none): buffers round trip, a launch is right (with
 * launch_pdl and without fp fusion too), tk_kernel_prepare and tk_occupancy give sane numbers, the
 * second launch is a memory hit, a new module finds the PTX on disk without compiling
 * (and the cubin ptxas made, where there is a ptxas),
 * oversized grids are refused, and a kernel that writes through a bad
 * pointer is reported as a fault naming it (last: the context dies). */
#include "rt_test.h"

static const char source[] = "import triton\n"
                             "import triton.language as tl\n"
                             "\n"
                             "@triton.jit\n"
                             "def axpy(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr):\n"
                             "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                             "    m = offs < n\n"
                             "    x = tl.load(x_ptr + offs, mask=m)\n"
                             "    y = tl.load(y_ptr + offs, mask=m)\n"
                             "    tl.store(y_ptr + offs, a * x + y, mask=m)\n";

enum { N = 5000, BLOCK = 256 };

static void run_axpy_with(tk_context *ctx, tk_kernel *k, void *dx, void *dy,
                          const tk_launch_options *o)
{
    static float hx[N], hy[N], out[N];
    for (int i = 0; i < N; i++) {
        hx[i] = (float)(i % 97) * 0.5f;
        hy[i] = (float)(i % 13) - 6.0f;
    }
    CHECK_OK(tk_copy_to(ctx, dx, hx, sizeof hx));
    CHECK_OK(tk_copy_to(ctx, dy, hy, sizeof hy));
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_i32(N), tk_f32(3.0f),
                     tk_const("BLOCK", BLOCK)};
    CHECK_OK(tk_launch(k, (tk_grid){(N + BLOCK - 1) / BLOCK, 1, 1}, args, 5, o));
    CHECK_OK(tk_synchronize(ctx));
    CHECK_OK(tk_copy_from(ctx, out, dy, sizeof out));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += out[i] != 3.0f * hx[i] + hy[i];
    CHECK(wrong == 0);
}

static void run_axpy(tk_context *ctx, tk_kernel *k, void *dx, void *dy)
{
    run_axpy_with(ctx, k, dx, dy, NULL);
}

/* A ptxas the runtime would find (PATH, then $CUDA_HOME/bin), or "0". */
static const char *ptxas_here(char *path, size_t cap)
{
    const char *p = getenv("PATH"), *home = getenv("CUDA_HOME");
    while (p && *p) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(path, cap, "%.*s/ptxas", (int)n, p);
        if (n && access(path, X_OK) == 0)
            return path;
        p = colon ? colon + 1 : NULL;
    }
    snprintf(path, cap, "%s/bin/ptxas", home ? home : "/nonexistent");
    return access(path, X_OK) == 0 ? path : "0";
}

int main(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", t_tempdir("gpu"));
    setenv("TK_CACHE_DIR", dir, 1);
    unsetenv("TK_CACHE_DISABLE");
    unsetenv("TK_INTERPRET");
    char ptxas[1024];
    setenv("TK_PTXAS", ptxas_here(ptxas, sizeof ptxas), 1);
    bool with_ptxas = strcmp(getenv("TK_PTXAS"), "0") != 0;
    rt_disk_reset();
    tk_context *ctx = NULL;
    tk_status s = tk_context_create(&ctx, &(tk_context_options){.device = 0});
    if (s == TK_ERR_NO_DEVICE) {
        printf("rt_gpu: skipped: %s\n", tk_last_error());
        t_rmdir(dir);
        return 77;
    }
    CHECK_OK(s);
    if (!ctx)
        return 1;
    tk_device_props p;
    CHECK_OK(tk_device_properties(ctx, &p));
    printf("rt_gpu: %s, sm_%d%d, %d SMs, arch %s\n", p.name, p.cc_major, p.cc_minor, p.sm_count,
           ctx->arch);
    CHECK(p.sm_count > 0 && p.warp_size == 32 && p.max_grid[0] > 65535);

    void *dx, *dy;
    CHECK_OK(tk_alloc(ctx, N * 4, &dx));
    CHECK_OK(tk_alloc(ctx, N * 4, &dy));
    tk_module *mod;
    tk_kernel *k;
    CHECK_OK(tk_module_load_string(ctx, "axpy.tk", source, &mod));
    CHECK_OK(tk_module_kernel(mod, "axpy", &k));
    RtStats s0, s1, s2;
    rt_stats_get(&s0);
    run_axpy(ctx, k, dx, dy);
    run_axpy(ctx, k, dx, dy);
    rt_stats_get(&s1);
    CHECK(s1.compiles == s0.compiles + 1 && s1.memory_hits == s0.memory_hits + 1);
    CHECK(s1.disk_stores == s0.disk_stores + 1);
    /* with a ptxas, the machine code is its and goes to disk with the PTX */
    printf("rt_gpu: machine code from %s\n", with_ptxas ? ptxas : "the driver's JIT");
    CHECK(s1.ptxas_builds == s0.ptxas_builds + (with_ptxas ? 1 : 0));

    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_i32(N), tk_f32(3.0f),
                     tk_const("BLOCK", BLOCK)};
    tk_kernel_info info;
    CHECK_OK(tk_kernel_prepare(k, args, 5, NULL, &info));
    printf("rt_gpu: axpy: %d registers, %d spill bytes, %d shared bytes, max %d threads\n",
           info.registers, info.spill_bytes, info.shared_bytes, info.max_threads);
    CHECK(info.registers > 0 && info.max_threads >= 128 && info.function != NULL);
    int per_sm = 0;
    CHECK_OK(tk_occupancy(ctx, &info, &per_sm));
    CHECK(per_sm >= 1 && per_sm <= 64);

    /* A new module: the PTX comes from disk, nothing compiles. */
    tk_module *mod2;
    tk_kernel *k2;
    CHECK_OK(tk_module_load_string(ctx, "axpy.tk", source, &mod2));
    CHECK_OK(tk_module_kernel(mod2, "axpy", &k2));
    run_axpy(ctx, k2, dx, dy);
    rt_stats_get(&s2);
    CHECK(s2.compiles == s1.compiles && s2.disk_hits == s1.disk_hits + 1);
    CHECK(s2.cubin_loads == s1.cubin_loads + (with_ptxas ? 1 : 0));
    CHECK(s2.ptxas_builds == s1.ptxas_builds);
    tk_module_destroy(mod2);

    /* Programmatic dependent launch: the same result (sm_90 and later
     * launch through cuLaunchKernelEx; older GPUs launch as usual). */
    run_axpy_with(ctx, k, dx, dy, &(tk_launch_options){.launch_pdl = 1});

    /* Multiplies and adds kept apart (Triton's enable_fp_fusion=False): a
     * variant of its own, compiled once, as right (3x is exact here). */
    RtStats s3, s4;
    rt_stats_get(&s3);
    run_axpy_with(ctx, k, dx, dy, &(tk_launch_options){.fp_fusion = -1});
    run_axpy_with(ctx, k, dx, dy, &(tk_launch_options){.fp_fusion = -1});
    rt_stats_get(&s4);
    CHECK(s4.compiles == s3.compiles + 1);

    CHECK_FAILS(tk_launch(k, (tk_grid){1, (unsigned)p.max_grid[1] + 1, 1}, args, 5, NULL),
                TK_ERR_LAUNCH, "over the device's limit");

    /* Last: a fault. The store goes through a pointer that maps nothing. */
    tk_arg bad[] = {tk_ptr(dx, TK_F32), tk_ptr((void *)(uintptr_t)0x100000, TK_F32), tk_i32(N),
                    tk_f32(1.0f), tk_const("BLOCK", BLOCK)};
    s = tk_launch(k, (tk_grid){4, 1, 1}, bad, 5, NULL);
    if (s == TK_OK)
        s = tk_synchronize(ctx);
    CHECK(s == TK_ERR_KERNEL_FAULT);
    CHECK(strstr(tk_last_error(), "kernel 'axpy' faulted: illegal address") != NULL);
    printf("rt_gpu: the fault reads: %s\n", tk_last_error());
    /* A new specialisation after it: its module load reports the earlier
     * launch's fault, and does not blame the kernel being loaded, which
     * has not run (before, it read "kernel 'axpy' faulted ... reported by
     * cuModuleLoadDataEx", after a needless fall-back to the driver's JIT) */
    tk_arg again[] = {tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_i32(N), tk_f32(1.0f),
                      tk_const("BLOCK", 2 * BLOCK)};
    CHECK_FAILS(tk_launch(k, (tk_grid){4, 1, 1}, again, 5, NULL), TK_ERR_KERNEL_FAULT,
                "a kernel launched earlier faulted: illegal address "
                "(CUDA_ERROR_ILLEGAL_ADDRESS, reported by cuModuleLoadData while loading "
                "kernel 'axpy')");
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    t_rmdir(dir);
    if (failures)
        fprintf(stderr, "rt_gpu: %d checks failed\n", failures);
    else
        printf("rt_gpu: all checks passed\n");
    return failures ? 1 : 0;
}
