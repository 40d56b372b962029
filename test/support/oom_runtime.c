/* oom_runtime.c: out-of-memory injection into the runtime's interpreter
 * path. With an interpreter context, every hooked allocation of loading a
 * module, looking up its kernel, allocating buffers, launching (specialise,
 * lower, run the interpreter) and copying back is made to fail in turn for a
 * small vector_add and softmax. Each call must fail with a status and a
 * message or succeed; the context must stay usable (a later normal launch
 * gives the right result); ASan checks that nothing leaks. One interpreter
 * thread keeps the failure points deterministic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/support.h"
#include "tk/tk.h"

enum { N = 300, ROWS = 5, COLS = 37 };

static const char *add_src = "import triton\nimport triton.language as tl\n\n@triton.jit\n"
                             "def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                             "    pid = tl.program_id(0)\n"
                             "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n"
                             "    inside = offs < n\n"
                             "    a = tl.load(x_ptr + offs, mask=inside)\n"
                             "    b = tl.load(y_ptr + offs, mask=inside)\n"
                             "    tl.store(out_ptr + offs, a + b, mask=inside)\n";

static const char *softmax_src =
    "import triton\nimport triton.language as tl\n\n@triton.jit\n"
    "def softmax_rows(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):\n"
    "    row = tl.program_id(0)\n"
    "    cols = tl.arange(0, BLOCK)\n"
    "    live = cols < n_cols\n"
    "    x = tl.load(in_ptr + row * in_stride + cols, mask=live, other=-float('inf'))\n"
    "    shifted = x - tl.max(x, axis=0)\n"
    "    e = tl.exp(shifted)\n"
    "    y = e / tl.sum(e, axis=0)\n"
    "    tl.store(out_ptr + row * out_stride + cols, y, mask=live)\n";

static float in_a[N], in_b[N], got[N];

static int bad;
static bool fired_before_retry; /* the injected failure hit a launch that was retried */

/* A failed call must say why. */
static bool call_failed(tk_status s, const char *what, long n)
{
    if (s == TK_OK)
        return false;
    const char *msg = tk_last_error();
    if (n > 0 && s == TK_ERR_KERNEL_FAULT) {
        fprintf(stderr, "allocation %ld: %s reports running out of memory as a kernel fault\n", n,
                what);
        bad++;
    }
    if (getenv("OOM_TRACE"))
        fprintf(stderr, "%ld: %s: %s: %s\n", n, what, tk_status_name(s), msg);
    if (!msg || !*msg) {
        fprintf(stderr, "allocation %ld: %s returned %s without a message\n", n, what,
                tk_status_name(s));
        bad++;
    }
    return true;
}

static tk_status launch(tk_kernel *k, bool softmax, void *const *bufs)
{
    if (softmax) {
        tk_arg args[] = {tk_ptr(bufs[0], TK_F32),
                         tk_ptr(bufs[1], TK_F32),
                         tk_i32(COLS),
                         tk_i32(COLS),
                         tk_i32(COLS),
                         tk_const("BLOCK", 64)};
        return tk_launch(k, (tk_grid){ROWS, 1, 1}, args, 6, NULL);
    }
    tk_arg args[] = {tk_ptr(bufs[1], TK_F32), tk_ptr(bufs[2], TK_F32), tk_ptr(bufs[0], TK_F32),
                     tk_i32(N), tk_const("BLOCK", 128)};
    return tk_launch(k, (tk_grid){(N + 127) / 128, 1, 1}, args, 5, NULL);
}

/* One whole use of the runtime: load, look up, allocate, copy in, launch,
 * copy out. Returns TK_OK only when every call succeeded; the output is in
 * got[]. Frees what it allocated on every path. */
static tk_status run_once(tk_context *ctx, bool softmax, long n)
{
    const char *src = softmax ? softmax_src : add_src;
    const char *name = softmax ? "softmax_rows" : "vector_add";
    size_t count = softmax ? ROWS * COLS : N;
    size_t bytes = count * sizeof(float);
    tk_module *m = NULL;
    tk_kernel *k = NULL;
    void *bufs[3] = {NULL, NULL, NULL};
    int nbufs = softmax ? 2 : 3;
    tk_status s = tk_module_load_string(ctx, name, src, &m);
    if (call_failed(s, "tk_module_load_string", n))
        return s;
    s = tk_module_kernel(m, name, &k);
    if (call_failed(s, "tk_module_kernel", n))
        goto done;
    for (int i = 0; i < nbufs; i++) {
        s = tk_alloc(ctx, bytes, &bufs[i]);
        if (call_failed(s, "tk_alloc", n))
            goto done;
    }
    s = tk_copy_to(ctx, bufs[1], in_a, bytes);
    if (!softmax && s == TK_OK)
        s = tk_copy_to(ctx, bufs[2], in_b, bytes);
    if (call_failed(s, "tk_copy_to", n))
        goto done;
    s = launch(k, softmax, bufs);
    if (call_failed(s, "tk_launch", n)) {
        if (n <= 0 || s == TK_ERR_KERNEL_FAULT)
            goto done;
        /* The same kernel, launched again once memory is back, must work. */
        fired_before_retry = tk_alloc_failure_fired();
        tk_alloc_fail_after(0);
        s = launch(k, softmax, bufs);
        if (s != TK_OK) {
            fprintf(stderr, "allocation %ld: a second launch of the kernel failed: %s\n", n,
                    tk_last_error());
            bad++;
            goto done;
        }
    }
    s = tk_copy_from(ctx, got, bufs[0], bytes);
    call_failed(s, "tk_copy_from", n);
done:
    for (int i = 0; i < nbufs; i++)
        if (bufs[i] && tk_free(ctx, bufs[i]) != TK_OK) {
            fprintf(stderr, "allocation %ld: tk_free failed\n", n);
            bad++;
        }
    tk_module_destroy(m);
    return s;
}

static bool result_right(bool softmax)
{
    if (!softmax) {
        for (int i = 0; i < N; i++)
            if (got[i] != in_a[i] + in_b[i])
                return false;
        return true;
    }
    for (int r = 0; r < ROWS; r++) {
        const float *x = in_a + r * COLS;
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < COLS; c++)
            mx = x[c] > mx ? x[c] : mx;
        for (int c = 0; c < COLS; c++)
            sum += exp(x[c] - mx);
        for (int c = 0; c < COLS; c++)
            if (fabs(got[r * COLS + c] - exp(x[c] - mx) / sum) > 1e-5)
                return false;
    }
    return true;
}

static tk_context *new_context(void)
{
    tk_context *ctx = NULL;
    tk_context_options o = {0};
    o.interpret = 1;
    if (tk_context_create(&ctx, &o) != TK_OK) {
        fprintf(stderr, "cannot create an interpreter context: %s\n", tk_last_error());
        exit(1);
    }
    return ctx;
}

/* Sweeps every failure point of one kernel's use, each on a fresh context
 * (so the context's own first-use allocations are swept too), which must
 * then still run the kernel right. */
static void sweep(bool softmax)
{
    const char *what = softmax ? "softmax_rows" : "vector_add";
    long n;
    for (n = 1; n < 100000; n++) {
        tk_context *ctx = new_context();
        memset(got, 0, sizeof got);
        fired_before_retry = false;
        tk_alloc_fail_after(n);
        tk_status s = run_once(ctx, softmax, n);
        bool fired = tk_alloc_failure_fired() || fired_before_retry;
        tk_alloc_fail_after(0);
        if (s == TK_OK && !result_right(softmax)) {
            fprintf(stderr, "%s: allocation %ld: success with a wrong result\n", what, n);
            bad++;
        }
        /* A success after a lost allocation is allowed only when the
         * allocation was not needed; the result check above vouches for it. */
        if (!fired) {
            if (s != TK_OK) {
                fprintf(stderr, "%s: fails with no failure injected: %s\n", what, tk_last_error());
                bad++;
            }
            tk_context_destroy(ctx);
            break;
        }
        memset(got, 0, sizeof got);
        if (run_once(ctx, softmax, -n) != TK_OK || !result_right(softmax)) {
            fprintf(stderr, "%s: after allocation %ld failed the context is not usable: %s\n", what,
                    n, tk_last_error());
            bad++;
        }
        tk_context_destroy(ctx);
    }
    printf("%-13s %ld failure points\n", what, n - 1);
}

int main(void)
{
    setenv("TK_INTERPRET_THREADS", "1", 1);
    setenv("TK_CACHE_DISABLE", "1", 1);
    srand(7);
    for (int i = 0; i < N; i++) {
        in_a[i] = (float)(rand() % 2001 - 1000) / 97.0f;
        in_b[i] = (float)(rand() % 2001 - 1000) / 89.0f;
    }
    clock_t t0 = clock();
    sweep(false);
    sweep(true);
    printf("%.1f s of CPU time\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
    printf("%s\n", bad ? "FAILED" : "all checks passed");
    return bad != 0;
}
