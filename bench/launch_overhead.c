/* launch_overhead: host cost of tk's launch path on a GPU, against a bare
 * cuLaunchKernel of the very same CUfunction; and compile times: cold
 * (source -> loaded kernel, nothing cached), warm from memory (a cache hit)
 * and warm from disk (a new module finding the cubin on disk) for softmax,
 * matmul and vector_add. Not a test: it needs a GPU and prints a table.
 * Usage: launch_overhead [launches-per-batch batches] (default 100 300). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cuda.h>
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tk/tk.h"

#define CHECK(call)                                                            \
    do {                                                                       \
        tk_status s_ = (call);                                                 \
        if (s_ != TK_OK) {                                                     \
            fprintf(stderr, "%s failed: %s: %s\n", #call, tk_status_name(s_),  \
                    tk_last_error());                                          \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Kernels live in the examples folder of the build (or $TK_EXAMPLES_DIR);
 * a path with a folder in it is relative to the source tree (or to the
 * working directory, a checkout on the GPU machine). */
static const char *kernel_path(const char *file)
{
    static char path[8400];
    if (strchr(file, '/')) {
        snprintf(path, sizeof path, "%s", file);
        if (access(path, R_OK) != 0)
            snprintf(path, sizeof path, "%s/../%s", TK_EXAMPLES_SOURCE_DIR, file);
        return path;
    }
    const char *env = getenv("TK_EXAMPLES_DIR");
    if (env && *env) {
        snprintf(path, sizeof path, "%s/%s", env, file);
        return path;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    snprintf(path, sizeof path, "%s/../examples/%s", exe, file);
    if (access(path, R_OK) != 0)
        snprintf(path, sizeof path, "%s/%s", TK_EXAMPLES_SOURCE_DIR, file);
    return path;
}

/* ---- the bare driver, loaded like tk loads it ----------------------------------- */

typedef CUresult (*LaunchFn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*SyncFn)(void);
typedef CUresult (*StreamFn)(CUstream *, unsigned);
static LaunchFn cu_launch;
static SyncFn cu_sync;
static StreamFn cu_stream_create;

static void load_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    cu_launch = h ? (LaunchFn)dlsym(h, "cuLaunchKernel") : NULL;
    cu_sync = h ? (SyncFn)dlsym(h, "cuCtxSynchronize") : NULL;
    cu_stream_create = h ? (StreamFn)dlsym(h, "cuStreamCreate") : NULL;
    if (!cu_launch || !cu_sync || !cu_stream_create) {
        fprintf(stderr, "launch_overhead: no CUDA driver here\n");
        exit(2);
    }
}

/* A driver call's failure, named with its code, ends the run. */
static void cu_check(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "launch_overhead: %s failed: CUresult %d\n", what, (int)r);
        exit(1);
    }
}

/* ---- compile times ------------------------------------------------------------------ */

typedef struct Job {
    const char *file, *kernel;
    tk_arg args[20];
    int nargs;
    tk_launch_options opts;
} Job;

/* Source to a loaded kernel through a fresh module: parse + compile (or
 * find it) + load; microseconds. */
static double prepare_fresh(tk_context *ctx, const Job *j, tk_module **keep, tk_kernel **kout)
{
    double t0 = now_us();
    tk_module *mod;
    tk_kernel *k;
    tk_kernel_info info;
    CHECK(tk_module_load_file(ctx, kernel_path(j->file), &mod));
    CHECK(tk_module_kernel(mod, j->kernel, &k));
    CHECK(tk_kernel_prepare(k, j->args, j->nargs, &j->opts, &info));
    double t = now_us() - t0;
    if (keep) {
        *keep = mod;
        *kout = k;
    } else
        tk_module_destroy(mod);
    return t;
}

static void compile_times(tk_context *ctx, Job *j, int reps)
{
    double cold[16], disk[16], mem[64];
    setenv("TK_ALWAYS_COMPILE", "1", 1); /* cold: neither memory nor disk */
    for (int r = 0; r < reps; r++)
        cold[r] = prepare_fresh(ctx, j, NULL, NULL);
    unsetenv("TK_ALWAYS_COMPILE");
    for (int r = 0; r < reps; r++)
        disk[r] = prepare_fresh(ctx, j, NULL, NULL);
    tk_module *mod;
    tk_kernel *k;
    prepare_fresh(ctx, j, &mod, &k);
    for (int r = 0; r < 64; r++) {
        tk_kernel_info info;
        double t0 = now_us();
        CHECK(tk_kernel_prepare(k, j->args, j->nargs, &j->opts, &info));
        mem[r] = now_us() - t0;
    }
    tk_module_destroy(mod);
    printf("%-22s cold %8.2f ms   warm disk %7.2f ms   warm memory %6.3f us\n", j->kernel,
           median(cold, reps) / 1e3, median(disk, reps) / 1e3, median(mem, 64));
}

/* ---- launch overhead ------------------------------------------------------------------ */

static void launch_cost(tk_context *ctx, int per_batch, int batches)
{
    const int n = 1024;
    void *x, *y, *out;
    CHECK(tk_alloc(ctx, n * 4, &x));
    CHECK(tk_alloc(ctx, n * 4, &y));
    CHECK(tk_alloc(ctx, n * 4, &out));
    tk_module *mod;
    tk_kernel *k;
    CHECK(tk_module_load_file(ctx, kernel_path("vector_add.tk"), &mod));
    CHECK(tk_module_kernel(mod, "vector_add", &k));
    tk_arg args[] = {tk_ptr(x, TK_F32), tk_ptr(y, TK_F32), tk_ptr(out, TK_F32), tk_i32(n),
                     tk_const("BLOCK", 1024)};
    tk_launch_options o = {.num_warps = 4};
    tk_kernel_info info;
    CHECK(tk_kernel_prepare(k, args, 5, &o, &info));
    tk_grid g = {1, 1, 1};

    double *tk_t = malloc(sizeof(double) * (size_t)batches);
    double *bare_t = malloc(sizeof(double) * (size_t)batches);
    double *buf_t = malloc(sizeof(double) * (size_t)batches);
    double *own_t = malloc(sizeof(double) * (size_t)batches);
    if (!tk_t || !bare_t || !buf_t || !own_t)
        exit(1);
    CUstream own;
    cu_check(cu_stream_create(&own, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    /* The same arguments the compiled kernel takes: x, y, out, n. */
    CUdeviceptr px = (CUdeviceptr)(uintptr_t)x, py = (CUdeviceptr)(uintptr_t)y;
    CUdeviceptr pout = (CUdeviceptr)(uintptr_t)out;
    int nn = n;
    void *params[] = {&px, &py, &pout, &nn};
    /* the same four as one buffer, as the driver lays parameters out */
    struct packed_params {
        CUdeviceptr x, y, out;
        int n;
    } packed = {px, py, pout, nn};
    /* the parameters' own bytes: the struct's tail padding is not one */
    size_t packed_size = offsetof(struct packed_params, n) + sizeof packed.n;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE,
                     &packed_size, CU_LAUNCH_PARAM_END};
    unsigned threads = (unsigned)info.num_warps * 32, dyn = (unsigned)info.dynamic_shared_bytes;
    CUfunction fn = (CUfunction)info.function;
    for (int warm = 0; warm < 2; warm++)
        for (int b = 0; b < batches; b++) {
            double t0 = now_us();
            for (int i = 0; i < per_batch; i++)
                CHECK(tk_launch(k, g, args, 5, &o));
            double t1 = now_us();
            for (int i = 0; i < per_batch; i++)
                cu_check(cu_launch(fn, 1, 1, 1, threads, 1, 1, dyn, NULL, params, NULL),
                         "cuLaunchKernel");
            double t2 = now_us();
            for (int i = 0; i < per_batch; i++)
                cu_check(cu_launch(fn, 1, 1, 1, threads, 1, 1, dyn, NULL, NULL, extra),
                         "cuLaunchKernel (parameters as one buffer)");
            double t3 = now_us();
            for (int i = 0; i < per_batch; i++)
                cu_check(cu_launch(fn, 1, 1, 1, threads, 1, 1, dyn, own, params, NULL),
                         "cuLaunchKernel (on its own stream)");
            double t4 = now_us();
            cu_check(cu_sync(), "cuCtxSynchronize");
            tk_t[b] = (t1 - t0) / per_batch;
            bare_t[b] = (t2 - t1) / per_batch;
            buf_t[b] = (t3 - t2) / per_batch;
            own_t[b] = (t4 - t3) / per_batch;
        }
    double mt = median(tk_t, batches), mb = median(bare_t, batches);
    printf("launch host cost (vector_add, grid 1, median of %d batches of %d):\n"
           "  tk_launch (cache hit)   %7.2f us\n  bare cuLaunchKernel      %7.2f us\n"
           "  tk overhead             %7.2f us (%+.0f%%)\n"
           "  bare, parameters as one buffer (extra)       %7.2f us\n"
           "  bare, on a non-blocking stream of its own    %7.2f us\n",
           batches, per_batch, mt, mb, mt - mb, 100.0 * (mt - mb) / mb, median(buf_t, batches),
           median(own_t, batches));
    free(tk_t);
    free(bare_t);
    free(buf_t);
    free(own_t);
    tk_module_destroy(mod);
    CHECK(tk_free(ctx, x));
    CHECK(tk_free(ctx, y));
    CHECK(tk_free(ctx, out));
}

int main(int argc, char **argv)
{
    int per_batch = argc > 2 ? atoi(argv[1]) : 100, batches = argc > 2 ? atoi(argv[2]) : 300;
    char dir[] = "/tmp/tk-bench-cache-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("TK_CACHE_DIR", dir, 1); /* a fresh disk cache for this run */
    unsetenv("TK_CACHE_DISABLE");
    /* The driver keeps its own cache of PTX it compiled (~/.nv/ComputeCache):
     * off, or "cold" would only be cold once. */
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    load_driver();
    tk_context *ctx;
    CHECK(tk_context_create(&ctx, &(tk_context_options){.device = 0}));
    tk_device_props p;
    CHECK(tk_device_properties(ctx, &p));
    printf("device: %s (sm_%d%d, %d SMs), tk %s\n", p.name, p.cc_major, p.cc_minor, p.sm_count,
           tk_version());

    void *a, *b, *c;
    const int m = 4096;
    CHECK(tk_alloc(ctx, (size_t)m * m * 4, &a));
    CHECK(tk_alloc(ctx, (size_t)m * m * 4, &b));
    CHECK(tk_alloc(ctx, (size_t)m * m * 4, &c));
    Job softmax = {"softmax.tk", "softmax",
                   {tk_ptr(c, TK_F32), tk_ptr(a, TK_F32), tk_i32(1024), tk_i32(1024), tk_i32(1000),
                    tk_const("BLOCK", 1024)}, 6, {.num_warps = 4}};
    Job matmul = {"matmul.tk", "matmul",
                  {tk_ptr(a, TK_F16), tk_ptr(b, TK_F16), tk_ptr(c, TK_F16), tk_i32(m), tk_i32(m),
                   tk_i32(m), tk_i32(m), tk_i32(1), tk_i32(m), tk_i32(1), tk_i32(m), tk_i32(1),
                   tk_const("BM", 128), tk_const("BN", 128), tk_const("BK", 64),
                   tk_const("GROUP", 8)}, 16, {.num_warps = 8, .num_stages = 3}};
    Job vadd = {"vector_add.tk", "vector_add",
                {tk_ptr(a, TK_F32), tk_ptr(b, TK_F32), tk_ptr(c, TK_F32), tk_i32(1 << 20),
                 tk_const("BLOCK", 1024)}, 5, {.num_warps = 4}};
    Job wide = matmul; /* the tutorial's largest tile */
    wide.args[12] = tk_const("BM", 128);
    wide.args[13] = tk_const("BN", 256);
    wide.kernel = "matmul";
    const int s = 4096, d = 64; /* [1, 1, s, d] fp16 */
    Job attn = {"bench/kernels/attention.tk", "attn_fwd",
                {tk_ptr(a, TK_F16), tk_ptr(b, TK_F16), tk_ptr(c, TK_F16), tk_ptr(a, TK_F16),
                 tk_f32(0.125f), tk_i32(s * d), tk_i32(s * d), tk_i32(d), tk_i32(1), tk_i32(1),
                 tk_i32(s), tk_const("D", d), tk_const("BM", 128), tk_const("BN", 64),
                 tk_const("CAUSAL", 1)}, 15, {.num_warps = 4, .num_stages = 3}};
    printf("compile (medians of 5; cold = parse + specialise + LLVM + PTX->cubin + load):\n");
    compile_times(ctx, &vadd, 5);
    compile_times(ctx, &softmax, 5);
    compile_times(ctx, &matmul, 5);
    printf("  (128x256x64 tiles, 8 warps:)\n");
    compile_times(ctx, &wide, 5);
    compile_times(ctx, &attn, 5);
    launch_cost(ctx, per_batch, batches);
    CHECK(tk_free(ctx, a));
    CHECK(tk_free(ctx, b));
    CHECK(tk_free(ctx, c));
    tk_context_destroy(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return 0;
}
