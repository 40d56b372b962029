/* rt_bench.c: tk_bench, timing of queued GPU work in the manner of Triton's
 * do_bench: an estimate from a few runs sets the warm-up and timed run counts
 * from time budgets; each timed run follows an L2 flush and sits between two
 * CUDA events. Assumes the callback queues its work on the stream it was
 * given. Guarantees: every event and buffer is released on every path; an
 * interpreter context gives host wall-clock times flagged as such, never
 * numbers that pass for GPU times. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_backend.h"

enum { BENCH_ESTIMATE_RUNS = 5, BENCH_MAX_RUNS = 10000 };

static double host_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics, as torch.quantile does. */
static double quantile(const double *sorted, int n, double q)
{
    double at = q * (n - 1);
    int lo = (int)at;
    if (lo >= n - 1)
        return sorted[n - 1];
    return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * (at - lo);
}

/* Hands the times out in run order (when asked), then sorts them and
 * fills the statistics. */
static void summarise(const RtBenchPlan *p, double *t, int n, tk_bench_result *out)
{
    if (p->times)
        memcpy(p->times, t, sizeof *t * (size_t)n);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    out->runs = n;
    out->min_ms = t[0];
    out->max_ms = t[n - 1];
    out->mean_ms = sum / n;
    out->median_ms = quantile(t, n, 0.5);
    out->p20_ms = quantile(t, n, 0.2);
    out->p80_ms = quantile(t, n, 0.8);
}


/* Run counts from the budgets and one run's estimated time (at least one each). */
static void plan_counts(const RtBenchPlan *p, double est_ms, int *warmup, int *runs)
{
    double est = est_ms > 1e-6 ? est_ms : 1e-6;
    double w = p->warmup_ms / est, r = p->rep_ms / est;
    *warmup = w < 1 ? 1 : w > p->max_runs ? p->max_runs : (int)w;
    *runs = r < 1 ? 1 : r > p->max_runs ? p->max_runs : (int)r;
}

/* The interpreter runs launches synchronously, so the host clock measures them. */
tk_status rt_bench_host(tk_context *ctx, tk_bench_fn fn, void *user, const RtBenchPlan *p,
                        tk_bench_result *out)
{
    (void)ctx;
    double t0 = host_ms();
    tk_status s = fn(user);
    if (s != TK_OK)
        return s;
    int warmup, runs;
    plan_counts(p, host_ms() - t0, &warmup, &runs); /* the first call was the warm-up */
    double *t = tk_xalloc(sizeof *t * (size_t)runs);
    if (!t)
        return err_set(TK_ERR_NO_MEMORY, "tk_bench: out of memory");
    for (int i = 0; i < runs && s == TK_OK; i++) {
        double a = host_ms();
        s = fn(user);
        t[i] = host_ms() - a;
    }
    if (s == TK_OK) {
        summarise(p, t, runs, out);
        out->warmup_runs = 1;
        out->wall_clock = 1;
    }
    tk_xfree(t);
    return s;
}

/* Events, two per run (start, end); released by events_free on every path. */
typedef struct Events {
    CUevent *ev;
    int n;
} Events;

static void events_free(Events *e)
{
    for (int i = 0; i < e->n; i++)
        if (e->ev[i])
            rt_cu.p_cuEventDestroy(e->ev[i]); /* teardown: nothing to report to */
    tk_xfree(e->ev);
    memset(e, 0, sizeof *e);
}

static tk_status events_make(Events *e, int n)
{
    e->ev = tk_xalloc(sizeof *e->ev * (size_t)n);
    if (!e->ev)
        return err_set(TK_ERR_NO_MEMORY, "tk_bench: out of memory");
    memset(e->ev, 0, sizeof *e->ev * (size_t)n);
    e->n = n;
    for (int i = 0; i < n; i++)
        RT_CU(NULL, cuEventCreate, &e->ev[i], CU_EVENT_DEFAULT);
    return TK_OK;
}

/* Milliseconds between two recorded events, after waiting for the second. */
static tk_status elapsed(tk_context *ctx, CUevent a, CUevent b, double *ms)
{
    float f = 0;
    RT_CU(ctx->last_kernel, cuEventSynchronize, b);
    RT_CU(ctx->last_kernel, cuEventElapsedTime, &f, a, b);
    *ms = f;
    return TK_OK;
}

typedef struct Flush {
    CUdeviceptr buf;
    size_t bytes;
} Flush;

/* The L2 size from the driver; twice that (at least 32 MiB) is the flush buffer. */
static tk_status flush_make(tk_context *ctx, Flush *f)
{
    int l2 = 0;
    RT_CU(NULL, cuDeviceGetAttribute, &l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, ctx->dev);
    f->bytes = (size_t)l2 * 2;
    if (f->bytes < ((size_t)32 << 20))
        f->bytes = (size_t)32 << 20;
    RT_CU(NULL, cuMemAlloc, &f->buf, f->bytes);
    return TK_OK;
}

/* One run: the flush (when asked), then fn, with events recorded around fn
 * where start and end are not NULL. */
static tk_status timed_run(const Flush *f, const RtBenchPlan *p, tk_bench_fn fn, void *user,
                           CUevent start, CUevent end)
{
    if (f->buf)
        RT_CU(NULL, cuMemsetD8Async, f->buf, 0, f->bytes, (CUstream)p->stream);
    if (start)
        RT_CU(NULL, cuEventRecord, start, (CUstream)p->stream);
    tk_status s = fn(user);
    if (s != TK_OK)
        return s;
    if (end)
        RT_CU(NULL, cuEventRecord, end, (CUstream)p->stream);
    return TK_OK;
}

tk_status rt_bench_events(tk_context *ctx, tk_bench_fn fn, void *user, const RtBenchPlan *p,
                          tk_bench_result *out)
{
    Flush f = {0, 0};
    Events est = {NULL, 0}, ev = {NULL, 0};
    double *t = NULL, est_ms = 0;
    int warmup = 0, runs = 0;
    tk_status s = rt_ctx_enter(ctx);
    if (s == TK_OK)
        s = fn(user); /* compiles what the first call needs, outside the timing */
    if (s == TK_OK && p->flush)
        s = flush_make(ctx, &f);
    if (s == TK_OK)
        s = events_make(&est, 2);
    /* the estimate: BENCH_ESTIMATE_RUNS runs between one pair of events */
    for (int i = 0; i < BENCH_ESTIMATE_RUNS && s == TK_OK; i++)
        s = timed_run(&f, p, fn, user, i == 0 ? est.ev[0] : NULL,
                      i == BENCH_ESTIMATE_RUNS - 1 ? est.ev[1] : NULL);
    if (s == TK_OK)
        s = elapsed(ctx, est.ev[0], est.ev[1], &est_ms);
    if (s == TK_OK) {
        plan_counts(p, est_ms / BENCH_ESTIMATE_RUNS, &warmup, &runs);
        s = events_make(&ev, 2 * runs);
    }
    for (int i = 0; i < warmup && s == TK_OK; i++)
        s = fn(user);
    for (int i = 0; i < runs && s == TK_OK; i++)
        s = timed_run(&f, p, fn, user, ev.ev[2 * i], ev.ev[2 * i + 1]);
    if (s == TK_OK && !(t = tk_xalloc(sizeof *t * (size_t)runs)))
        s = err_set(TK_ERR_NO_MEMORY, "tk_bench: out of memory");
    for (int i = 0; i < runs && s == TK_OK; i++)
        s = elapsed(ctx, ev.ev[2 * i], ev.ev[2 * i + 1], &t[i]);
    if (s == TK_OK) {
        summarise(p, t, runs, out);
        out->warmup_runs = warmup;
    }
    tk_xfree(t);
    events_free(&est);
    events_free(&ev);
    if (f.buf)
        rt_cu.p_cuMemFree(f.buf); /* teardown: nothing to report to */
    return s;
}

tk_status tk_bench(tk_context *ctx, tk_bench_fn fn, void *user, const tk_bench_options *opts,
                   tk_bench_result *out)
{
    if (!ctx || !fn || !out)
        return err_null_arg("tk_bench", !ctx ? "ctx" : !fn ? "fn" : "out");
    memset(out, 0, sizeof *out);
    tk_bench_options o;
    memset(&o, 0, sizeof o);
    if (opts)
        o = *opts;
    if (o.warmup_ms < 0 || o.rep_ms < 0)
        return err_set(TK_ERR_INVALID, "tk_bench: %s is %g",
                       o.warmup_ms < 0 ? "warmup_ms" : "rep_ms",
                       o.warmup_ms < 0 ? o.warmup_ms : o.rep_ms);
    if (o.max_runs < 0)
        return err_set(TK_ERR_INVALID, "tk_bench: max_runs is %d", o.max_runs);
    RtBenchPlan p = {o.warmup_ms > 0 ? o.warmup_ms : 25,
                     o.rep_ms > 0 ? o.rep_ms : 100,
                     o.max_runs > 0 ? o.max_runs : BENCH_MAX_RUNS,
                     !o.no_flush,
                     o.stream,
                     o.times};
    if (p.max_runs > BENCH_MAX_RUNS)
        p.max_runs = BENCH_MAX_RUNS;
    return ctx->be->bench(ctx, fn, user, &p, out);
}
