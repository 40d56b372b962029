/* launch_host: the host cost of tk's launch path up to the backend's launch,
 * with no GPU: an interpreter context, vector_add compiled once, then the
 * work every cache-hit launch repeats (argument checks, the key, the cache
 * lookup) timed through tk_kernel_prepare, which stops where tk_launch would
 * hand the variant to the backend. Not a test: it prints ns per call, the
 * median of several batches, for comparing before and after a change to
 * the runtime; `perf record` over it shows where the time goes.
 * Usage: launch_host [calls-per-batch batches] (default 200000 15). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tk/tk.h"

static const char src[] = "import triton\n"
                          "import triton.language as tl\n"
                          "@triton.jit\n"
                          "def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                          "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                          "    mask = offs < n\n"
                          "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + "
                          "tl.load(y_ptr + offs, mask=mask), mask=mask)\n";

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: a shared machine disturbs it less */
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int fail(const char *what, tk_status s)
{
    fprintf(stderr, "launch_host: %s: %s: %s\n", what, tk_status_name(s), tk_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    int per_batch = argc > 2 ? atoi(argv[1]) : 200000, batches = argc > 2 ? atoi(argv[2]) : 15;
    if (per_batch < 1 || batches < 1 || batches > 1000)
        return fprintf(stderr, "usage: launch_host [calls-per-batch batches]\n"), 2;
    tk_context_options co = {0};
    co.interpret = 1;
    tk_context *ctx = NULL;
    tk_module *m = NULL;
    tk_kernel *k = NULL;
    tk_status s = tk_context_create(&ctx, &co);
    if (s == TK_OK)
        s = tk_module_load_string(ctx, "add.py", src, &m);
    if (s == TK_OK)
        s = tk_module_kernel(m, "add", &k);
    if (s != TK_OK)
        return fail("setup", s);
    void *x = NULL, *y = NULL, *out = NULL;
    size_t n = 4096;
    if ((s = tk_alloc(ctx, n * 4, &x)) != TK_OK || (s = tk_alloc(ctx, n * 4, &y)) != TK_OK ||
        (s = tk_alloc(ctx, n * 4, &out)) != TK_OK)
        return fail("tk_alloc", s);
    tk_arg args[] = {tk_ptr(x, TK_F32), tk_ptr(y, TK_F32), tk_ptr(out, TK_F32), tk_i32((int32_t)n),
                     tk_const("BLOCK", 1024)};
    int nargs = (int)(sizeof args / sizeof args[0]);
    tk_kernel_info info;
    if ((s = tk_kernel_prepare(k, args, nargs, NULL, &info)) != TK_OK) /* compiles */
        return fail("tk_kernel_prepare", s);
    double *t = malloc(sizeof(double) * (size_t)batches);
    if (!t)
        return 1;
    for (int b = 0; b < batches; b++) {
        double t0 = now_ns();
        for (int i = 0; i < per_batch; i++)
            if ((s = tk_kernel_prepare(k, args, nargs, NULL, &info)) != TK_OK)
                return fail("tk_kernel_prepare", s);
        t[b] = (now_ns() - t0) / per_batch;
    }
    qsort(t, (size_t)batches, sizeof *t, cmp_double);
    printf("runtime path of a cache-hit launch up to the backend (checks, key, lookup):\n"
           "  %.1f ns per call (median of %d batches of %d; fastest %.1f, slowest %.1f)\n",
           t[batches / 2], batches, per_batch, t[0], t[batches - 1]);
    free(t);
    tk_free(ctx, x), tk_free(ctx, y), tk_free(ctx, out);
    tk_module_destroy(m);
    tk_context_destroy(ctx);
    return 0;
}
