/* vector_add_report: a table in the manner of Triton's perf_report for
 * vector_add over sizes 2^12 .. 2^max, timed with tk_bench (median and the
 * 0.2/0.8 quantiles, converted to GB/s for 12 bytes moved per element).
 * Each size is checked exactly against the CPU before it is timed.
 * Usage: vector_add_report [max_log2] (default 28; on the interpreter the
 * times are wall-clock and say so). */
#include "example.h"

typedef struct Run {
    tk_kernel *k;
    tk_grid grid;
    tk_arg args[5];
} Run;

static tk_status launch(void *user)
{
    Run *r = user;
    return tk_launch(r->k, r->grid, r->args, 5, &(tk_launch_options){.num_warps = 4});
}

/* Fills x and y, runs once, and compares out with x + y exactly. */
static int check(tk_context *ctx, Run *r, unsigned n, void *dx, void *dy, void *dout)
{
    size_t bytes = (size_t)n * sizeof(float);
    float *x = ex_malloc(bytes), *y = ex_malloc(bytes), *out = ex_malloc(bytes);
    for (unsigned i = 0; i < n; i++) {
        x[i] = ex_normal();
        y[i] = ex_normal();
    }
    CHECK(tk_copy_to(ctx, dx, x, bytes));
    CHECK(tk_copy_to(ctx, dy, y, bytes));
    CHECK(tk_memset(ctx, dout, 0xff, bytes));
    CHECK(launch(r));
    CHECK(tk_synchronize(ctx));
    CHECK(tk_copy_from(ctx, out, dout, bytes));
    unsigned bad = 0;
    for (unsigned i = 0; i < n; i++)
        bad += out[i] != x[i] + y[i];
    free(x);
    free(y);
    free(out);
    return bad == 0;
}

static double gbps(unsigned n, double ms) { return 12.0 * n / (ms * 1e6); }

int main(int argc, char **argv)
{
    int max_log2 = argc > 1 ? atoi(argv[1]) : 28;
    const unsigned block = 1024;
    ex_seed("vector_add_report");
    tk_context *ctx = ex_context("vector_add_report");
    tk_module *mod;
    Run r;
    CHECK(tk_module_load_file(ctx, ex_kernel_path("vector_add.tk"), &mod));
    CHECK(tk_module_kernel(mod, "vector_add", &r.k));
    int failed = 0, wall = 0;
    printf("vector-add-performance (GB/s; low and high from the p80 and p20 times):\n"
           "%12s %10s %10s %10s\n",
           "size", "median", "low", "high");
    for (int lg = 12; lg <= max_log2; lg += 2) {
        unsigned n = 1u << lg;
        size_t bytes = (size_t)n * sizeof(float);
        void *dx, *dy, *dout;
        CHECK(tk_alloc(ctx, bytes, &dx));
        CHECK(tk_alloc(ctx, bytes, &dy));
        CHECK(tk_alloc(ctx, bytes, &dout));
        r.grid = (tk_grid){ex_cdiv(n, block), 1, 1};
        r.args[0] = tk_ptr(dx, TK_F32);
        r.args[1] = tk_ptr(dy, TK_F32);
        r.args[2] = tk_ptr(dout, TK_F32);
        r.args[3] = tk_i32((int)n);
        r.args[4] = tk_const("BLOCK", block);
        tk_bench_result b;
        if (!check(ctx, &r, n, dx, dy, dout)) {
            printf("%12u  MISMATCH\n", n);
            failed = 1;
        } else {
            CHECK(tk_bench(ctx, launch, &r, NULL, &b));
            wall |= b.wall_clock;
            /* the fastest run gives the highest rate: p20 of times is p80 of rates */
            printf("%12u %10.1f %10.1f %10.1f\n", n, gbps(n, b.median_ms), gbps(n, b.p80_ms),
                   gbps(n, b.p20_ms));
        }
        CHECK(tk_free(ctx, dx));
        CHECK(tk_free(ctx, dy));
        CHECK(tk_free(ctx, dout));
    }
    if (wall)
        printf("(interpreter: host wall-clock times, not GPU times)\n");
    printf("vector_add_report: %s\n", failed ? "MISMATCH" : "all sizes exact");
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    return failed;
}
