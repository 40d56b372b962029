/* rt_backend.h: what a context runs on, behind one table of operations.
 * A context runs either on a CUDA device through the driver
 * (rt_backend_cuda.c) or on the reference interpreter, whose "device
 * memory" is host memory it bounds-checks (rt_backend_interp.c). The public
 * functions check their arguments and then call through ctx->be; nothing
 * else in the runtime asks which backend a context has, so a third backend
 * is one more table. */
#ifndef TK_RT_BACKEND_H
#define TK_RT_BACKEND_H

#include "rt.h"

/* How tk_bench runs: budgets for the warm-up and the timed runs, the run
 * cap, whether to flush L2 before each run, and the stream (rt_bench.c). */
typedef struct RtBenchPlan {
    double warmup_ms, rep_ms;
    int max_runs;
    bool flush;
    tk_stream stream;
    double *times; /* NULL, or room for max_runs times: each run's, in run order */
} RtBenchPlan;

typedef struct RtBackend {
    /* how the tuner's disk identity and messages name the device; NULL:
     * the device's own name (props.name) */
    const char *device_label;
    /* kernel times come from the device's clock: the tuner times configs
     * (without it, it runs the first config and says so) */
    bool timed;
    /* launches and stream-ordered copies are queued: whoever frees memory
     * they may still read synchronizes first */
    bool queued;
    tk_status (*open)(tk_context *ctx, const tk_context_options *o);
    void (*close)(tk_context *ctx);
    /* makes the context current on this thread before work on it */
    tk_status (*enter)(tk_context *ctx);
    tk_status (*alloc)(tk_context *ctx, size_t bytes, void **dptr);
    tk_status (*free)(tk_context *ctx, void *dptr);
    tk_status (*copy_to)(tk_context *ctx, void *dst, const void *src, size_t bytes);
    tk_status (*copy_from)(tk_context *ctx, void *dst, const void *src, size_t bytes);
    tk_status (*fill)(tk_context *ctx, void *dptr, int byte, size_t bytes);
    /* stream-ordered zeroing and device-to-device copies for the tuner */
    tk_status (*zero_async)(tk_context *ctx, void *p, size_t bytes, tk_stream stream);
    tk_status (*copy_async)(tk_context *ctx, void *dst, const void *src, size_t bytes,
                            tk_stream stream);
    /* the bytes from p to the end of the allocation that holds it */
    tk_status (*extent)(tk_context *ctx, const void *p, size_t *bytes);
    tk_status (*synchronize)(tk_context *ctx);
    tk_status (*occupancy)(tk_context *ctx, const tk_kernel_info *info, int *blocks_per_sm);
    /* compiles (or reads from disk) one variant into v (rt_jit.c) */
    tk_status (*build)(tk_kernel *k, const RtLaunchArgs *la, RtVariant *v);
    /* runs one variant; la may gain the no-TMA key when the GPU relaunches */
    tk_status (*launch)(tk_kernel *k, RtVariant *v, tk_grid g, RtLaunchArgs *la,
                        const tk_launch_options *o);
    tk_status (*bench)(tk_context *ctx, tk_bench_fn fn, void *user, const RtBenchPlan *p,
                       tk_bench_result *out);
} RtBackend;

extern const RtBackend rt_cuda_backend;
extern const RtBackend rt_interp_backend;

/* ---- the pieces the two tables share or take from other files -------------------- */

/* The occupancy the hardware's limits allow (threads, registers, shared
 * memory, 32 blocks), for kernels with no CUfunction (rt_context.c). */
int rt_occupancy_estimate(const tk_device_props *p, const tk_kernel_info *info);
/* Builds of one variant (rt_jit.c). */
tk_status rt_jit_build_cuda(tk_kernel *k, const RtLaunchArgs *la, RtVariant *v);
tk_status rt_jit_build_interp(tk_kernel *k, const RtLaunchArgs *la, RtVariant *v);
/* Timing by CUDA events, and by the host clock (rt_bench.c). */
tk_status rt_bench_events(tk_context *ctx, tk_bench_fn fn, void *user, const RtBenchPlan *p,
                          tk_bench_result *out);
tk_status rt_bench_host(tk_context *ctx, tk_bench_fn fn, void *user, const RtBenchPlan *p,
                        tk_bench_result *out);
/* A launch argument's bits as the compiled parameter of type dt takes them
 * (rt_launch.c). */
uint64_t rt_pack_value(const tk_arg *a, DType dt);
/* Whether a scalar argument carries a float (v.f) rather than an integer. */
bool rt_arg_is_float(const tk_arg *a);

#endif
