/* rt_bench.c: tk_bench without a GPU: argument checks, the interpreter's
 * wall-clock timing (flagged, never passed off as GPU times), run counts
 * from the time budget, ordered statistics, every run's time when asked,
 * and an error from the callback stopping the benchmark with its status. */
#include "rt_test.h"

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def scale(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n";

typedef struct Work {
    tk_kernel *k;
    void *x;
    int calls;
    int fail_at; /* 0: never */
} Work;

static tk_status run_scale(void *user)
{
    Work *w = user;
    w->calls++;
    if (w->fail_at && w->calls == w->fail_at)
        return TK_ERR_LAUNCH; /* as a failed launch would */
    tk_arg args[] = {tk_ptr(w->x, TK_F32), tk_i32(256), tk_const("BLOCK", 128)};
    return tk_launch(w->k, (tk_grid){2, 1, 1}, args, 3, NULL);
}

static tk_status no_op(void *user)
{
    (void)user;
    return TK_OK;
}

int main(void)
{
    tk_context *ctx = NULL;
    tk_module *m = NULL;
    Work w = {0};
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    CHECK_OK(tk_module_load_string(ctx, "scale.tk", source, &m));
    CHECK_OK(tk_module_kernel(m, "scale", &w.k));
    CHECK_OK(tk_alloc(ctx, 256 * sizeof(float), &w.x));
    CHECK_OK(tk_memset(ctx, w.x, 0, 256 * sizeof(float)));

    tk_bench_result r;
    CHECK_FAILS(tk_bench(NULL, run_scale, &w, NULL, &r), TK_ERR_INVALID, "ctx is NULL");
    CHECK_FAILS(tk_bench(ctx, NULL, &w, NULL, &r), TK_ERR_INVALID, "fn is NULL");
    CHECK_FAILS(tk_bench(ctx, run_scale, &w, NULL, NULL), TK_ERR_INVALID, "out is NULL");
    CHECK_FAILS(tk_bench(ctx, run_scale, &w, &(tk_bench_options){.rep_ms = -1}, &r), TK_ERR_INVALID,
                "rep_ms is -1");
    CHECK(w.calls == 0);

    /* interpreter: host wall-clock times, flagged */
    CHECK_OK(tk_bench(ctx, run_scale, &w, &(tk_bench_options){.rep_ms = 20}, &r));
    CHECK(r.wall_clock == 1);
    CHECK(r.runs >= 1 && w.calls == r.runs + 1);
    CHECK(r.min_ms <= r.p20_ms && r.p20_ms <= r.median_ms && r.median_ms <= r.p80_ms &&
          r.p80_ms <= r.max_ms);
    CHECK(r.min_ms <= r.mean_ms && r.mean_ms <= r.max_ms && r.min_ms >= 0);

    /* a near-free callback: the run count is capped by max_runs */
    CHECK_OK(tk_bench(ctx, no_op, NULL, &(tk_bench_options){.rep_ms = 5, .max_runs = 50}, &r));
    CHECK(r.runs == 50 && r.wall_clock == 1);

    /* the times of every run, handed out in run order: the statistics are theirs */
    double times[40], lo = 1e30, hi = -1, sum = 0;
    for (int i = 0; i < 40; i++)
        times[i] = -1;
    w.calls = 0;
    CHECK_OK(tk_bench(ctx, run_scale, &w,
                      &(tk_bench_options){.rep_ms = 1000, .max_runs = 40, .times = times}, &r));
    CHECK(r.runs == 40);
    for (int i = 0; i < r.runs; i++) {
        lo = times[i] < lo ? times[i] : lo;
        hi = times[i] > hi ? times[i] : hi;
        sum += times[i];
    }
    CHECK(lo >= 0 && lo == r.min_ms && hi == r.max_ms);
    CHECK(sum / r.runs > r.mean_ms - 1e-9 && sum / r.runs < r.mean_ms + 1e-9);

    /* an error from the callback stops the benchmark and is returned */
    w.calls = 0;
    w.fail_at = 3;
    CHECK(tk_bench(ctx, run_scale, &w, &(tk_bench_options){.rep_ms = 1000}, &r) == TK_ERR_LAUNCH);
    CHECK(w.calls == 3);

    tk_free(ctx, w.x);
    tk_module_destroy(m);
    tk_context_destroy(ctx);
    if (failures)
        fprintf(stderr, "rt_bench: %d checks failed\n", failures);
    else
        printf("rt_bench: all checks passed\n");
    return failures ? 1 : 0;
}
