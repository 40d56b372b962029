/* rt_backend_interp.c: the interpreter backend. "Device memory" is host
 * memory registered here, with red zones around each buffer, so the
 * interpreter can bounds-check every access of a launch against the live
 * buffers; launches run at once on the CPU; times come from the host clock.
 * Guarantees: never touches libcuda; a copy or fill outside one buffer is
 * TK_ERR_INVALID, never a write into a neighbour. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_backend.h"

/* ---- opening ---------------------------------------------------------------------- */

static void interp_props(tk_context *ctx)
{
    tk_device_props *p = &ctx->props;
    snprintf(p->name, sizeof p->name, "tk reference interpreter (CPU)");
    p->sm_count = 8;
    p->cc_major = 8;
    p->cc_minor = 0;
    p->warp_size = 32;
    p->regs_per_sm = 65536;
    p->shared_per_sm = 167936;
    p->shared_per_block = 166912;
    p->max_threads_per_sm = 2048;
    p->max_threads_per_block = 1024;
    p->max_grid[0] = 2147483647;
    p->max_grid[1] = p->max_grid[2] = 65535;
    snprintf(ctx->arch, sizeof ctx->arch, "interp");
}

/* The step budget of launches: the option, else TK_INTERP_MAX_STEPS, else
 * the interpreter's default. */
static tk_status interp_budget(tk_context *ctx, const tk_context_options *o)
{
    const char *env = getenv("TK_INTERP_MAX_STEPS");
    ctx->interp_max_steps = INTERP_DEFAULT_MAX_STEPS;
    if (o && o->interp_max_steps) {
        ctx->interp_max_steps = o->interp_max_steps;
    } else if (env && *env) {
        char *end = NULL;
        errno = 0;
        unsigned long long n = strtoull(env, &end, 10);
        if (*env == '-' || *end || errno || n == 0)
            return err_set(TK_ERR_INVALID,
                           "TK_INTERP_MAX_STEPS='%s' is not a positive "
                           "integer below 2**64",
                           env);
        ctx->interp_max_steps = n;
    }
    return TK_OK;
}

static tk_status interp_open(tk_context *ctx, const tk_context_options *o)
{
    const char *threads = getenv("TK_INTERPRET_THREADS");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    ctx->interp_threads = threads && atoi(threads) > 0 ? atoi(threads)
                                                       : (int)(ncpu > 16      ? 16
                                                                   : ncpu > 0 ? ncpu
                                                                              : 1);
    tk_status s = interp_budget(ctx, o);
    if (s == TK_OK)
        interp_props(ctx);
    return s;
}

static void interp_close(tk_context *ctx)
{
    for (int i = 0; i < ctx->nbufs; i++)
        free(ctx->bufs[i].block);
    tk_xfree(ctx->bufs);
}

static tk_status interp_enter(tk_context *ctx)
{
    (void)ctx; /* no device context to make current */
    return TK_OK;
}

/* ---- buffers ------------------------------------------------------------------------ */

/* Index of the buffer holding [p, p + n), or -1. Caller holds the lock. */
static int find_buf(tk_context *ctx, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (int i = 0; i < ctx->nbufs; i++) {
        RtBuffer *b = &ctx->bufs[i];
        if (c >= b->base && c <= b->base + b->bytes && n <= (size_t)(b->base + b->bytes - c))
            return i;
    }
    return -1;
}

/* The red zone kept on each side of a buffer: a pointer that runs this far
 * past either end of one buffer lands in no buffer, so the interpreter
 * reports it instead of writing into a neighbour. An eighth of the block,
 * at least 1 KiB and at most 64 MiB (address space only: the pages are
 * never touched). A multiple of 256, so the buffer stays aligned. */
static size_t red_zone(size_t rounded)
{
    size_t rz = (rounded / 8 + 255) & ~(size_t)255;
    return rz<1024 ? 1024 : rz>((size_t)64 << 20) ? (size_t)64 << 20 : rz;
}

/* The host block for a buffer of `bytes`: red zone, the bytes rounded up
 * to 256, red zone. False when that does not fit in size_t or is more than
 * the host's memory (an allocator may abort rather than fail on such sizes). */
static bool block_size(size_t bytes, size_t *rz, size_t *total)
{
    size_t rounded;
    if (!size_add_ok(bytes ? bytes : 1, 255, &rounded))
        return false;
    rounded &= ~(size_t)255;
    *rz = red_zone(rounded);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t host;
    if (pages > 0 && page > 0 && size_mul_ok((size_t)pages, (size_t)page, &host) && rounded > host)
        return false;
    return size_add_ok(rounded, 2 * *rz, total);
}

/* Records a buffer; false when the table cannot grow. Caller holds the lock. */
static bool add_buf(tk_context *ctx, RtBuffer b)
{
    if (ctx->nbufs == ctx->capbufs) {
        if (ctx->capbufs > INT_MAX / 2)
            return false;
        int cap = ctx->capbufs ? 2 * ctx->capbufs : 16;
        RtBuffer *nb = tk_xrealloc(ctx->bufs, (size_t)cap * sizeof *nb);
        if (!nb)
            return false;
        ctx->bufs = nb;
        ctx->capbufs = cap;
    }
    b.id = ++ctx->next_buf_id;
    ctx->bufs[ctx->nbufs++] = b;
    return true;
}

static tk_status interp_alloc(tk_context *ctx, size_t bytes, void **dptr)
{
    size_t rz = 0, total = 0;
    unsigned char *block = NULL;
    if (block_size(bytes, &rz, &total))
        block = aligned_alloc(256, total);
    if (!block)
        return err_set(TK_ERR_NO_MEMORY,
                       "tk_alloc: cannot allocate %zu bytes of host memory "
                       "for the interpreter",
                       bytes);
    pthread_mutex_lock(&ctx->lock);
    bool added = add_buf(ctx, (RtBuffer){block + rz, bytes, block, 0});
    pthread_mutex_unlock(&ctx->lock);
    if (!added) {
        free(block);
        return err_set(TK_ERR_NO_MEMORY, "tk_alloc: out of memory");
    }
    *dptr = block + rz;
    return TK_OK;
}

static tk_status interp_free(tk_context *ctx, void *dptr)
{
    pthread_mutex_lock(&ctx->lock);
    int i;
    for (i = 0; i < ctx->nbufs && ctx->bufs[i].base != dptr; i++)
        ;
    bool found = i < ctx->nbufs;
    if (found) {
        free(ctx->bufs[i].block);
        ctx->bufs[i] = ctx->bufs[--ctx->nbufs];
    }
    pthread_mutex_unlock(&ctx->lock);
    return found ? TK_OK
                 : err_set(TK_ERR_INVALID, "tk_free: %p is not a live buffer from tk_alloc", dptr);
}

/* Checks that [p, p+n) lies inside one buffer. */
static tk_status check_range(tk_context *ctx, const void *p, size_t n, const char *what)
{
    pthread_mutex_lock(&ctx->lock);
    int i = find_buf(ctx, p, n);
    pthread_mutex_unlock(&ctx->lock);
    if (i < 0)
        return err_set(TK_ERR_INVALID, "%s: %p..+%zu is not inside a buffer from tk_alloc", what, p,
                       n);
    return TK_OK;
}

static tk_status interp_copy_to(tk_context *ctx, void *dst, const void *src, size_t bytes)
{
    tk_status s = check_range(ctx, dst, bytes, "tk_copy_to");
    if (s == TK_OK)
        memcpy(dst, src, bytes);
    return s;
}

static tk_status interp_copy_from(tk_context *ctx, void *dst, const void *src, size_t bytes)
{
    tk_status s = check_range(ctx, src, bytes, "tk_copy_from");
    if (s == TK_OK)
        memcpy(dst, src, bytes);
    return s;
}

static tk_status interp_fill(tk_context *ctx, void *dptr, int byte, size_t bytes)
{
    tk_status s = check_range(ctx, dptr, bytes, "tk_memset");
    if (s == TK_OK)
        memset(dptr, byte, bytes);
    return s;
}

/* Launches run synchronously, so "stream order" is now. */
static tk_status interp_zero_async(tk_context *ctx, void *p, size_t bytes, tk_stream stream)
{
    (void)stream;
    tk_status s = check_range(ctx, p, bytes, "zeroing a buffer for a tuning run");
    if (s == TK_OK)
        memset(p, 0, bytes);
    return s;
}

static tk_status interp_copy_async(tk_context *ctx, void *dst, const void *src, size_t bytes,
                                   tk_stream stream)
{
    (void)stream;
    tk_status s = check_range(ctx, src, bytes, "copying a buffer for a tuning run");
    if (s == TK_OK)
        s = check_range(ctx, dst, bytes, "copying a buffer for a tuning run");
    if (s == TK_OK)
        memcpy(dst, src, bytes);
    return s;
}

static tk_status interp_extent(tk_context *ctx, const void *p, size_t *bytes)
{
    pthread_mutex_lock(&ctx->lock);
    int i = find_buf(ctx, p, 0);
    if (i >= 0)
        *bytes = (size_t)(ctx->bufs[i].base + ctx->bufs[i].bytes - (const unsigned char *)p);
    pthread_mutex_unlock(&ctx->lock);
    return i >= 0 ? TK_OK : err_set(TK_ERR_INVALID, "%p is not inside a buffer from tk_alloc", p);
}

static tk_status interp_synchronize(tk_context *ctx)
{
    (void)ctx; /* every launch has finished when it returns */
    return TK_OK;
}

static tk_status interp_occupancy(tk_context *ctx, const tk_kernel_info *info, int *blocks)
{
    *blocks = rt_occupancy_estimate(&ctx->props, info);
    return TK_OK;
}

/* ---- launching ------------------------------------------------------------------------ */

/* A copy of the live buffers (under the lock), for one launch's checks. */
static InterpBuffer *snapshot(tk_context *ctx, int *n)
{
    pthread_mutex_lock(&ctx->lock);
    InterpBuffer *out = tk_xalloc((size_t)(ctx->nbufs + 1) * sizeof *out);
    *n = 0;
    if (out) {
        for (int i = 0; i < ctx->nbufs; i++)
            out[i] = (InterpBuffer){NULL, ctx->bufs[i].base, ctx->bufs[i].bytes};
        *n = ctx->nbufs;
    }
    pthread_mutex_unlock(&ctx->lock);
    return out;
}

/* The interpreter wants ints at their width (sign- or zero-extended) and
 * floats as doubles, rounded to the parameter's type as the GPU sees them. */
static InterpArg interp_value(const tk_arg *a, DType dt)
{
    InterpArg v;
    v.u = 0;
    if (a->kind == TK_ARG_PTR) {
        v.p = a->v.ptr;
        return v;
    }
    uint64_t bits = rt_pack_value(a, dt);
    switch (dt) {
    case DT_F16:
    case DT_BF16:
    case DT_F32:
    case DT_F64: {
        double f = rt_arg_is_float(a) ? a->v.f : (double)a->v.i;
        v.f = dt == DT_F64  ? f
            : dt == DT_F16  ? tk_f16_to_f32(tk_f32_to_f16((float)f))
            : dt == DT_BF16 ? tk_bf16_to_f32(tk_f32_to_bf16((float)f))
                            : (double)(float)f;
        break;
    }
    case DT_I8: v.i = (int8_t)bits; break;
    case DT_I16: v.i = (int16_t)bits; break;
    case DT_I32: v.i = (int32_t)bits; break;
    case DT_I64: v.i = (int64_t)bits; break;
    default: v.u = bits; break;
    }
    return v;
}

/* The status of a launch that ended with r, its message in d. */
static tk_status launch_status(const tk_kernel *k, InterpResult r, const Diag *d)
{
    const char *msg = d->text.data ? d->text.data : "(no message)";
    if (r == INTERP_NO_MEMORY) /* not the kernel's fault */
        return err_set(TK_ERR_NO_MEMORY, "kernel '%s': %s", k->name, msg);
    if (r == INTERP_OVER_BUDGET || r == INTERP_BAD_GRID)
        return err_set(TK_ERR_LAUNCH, "kernel '%s' stopped in the interpreter:\n%s", k->name, msg);
    if (r != INTERP_OK || d->errors)
        return err_set(TK_ERR_KERNEL_FAULT, "kernel '%s' faulted in the interpreter:\n%s", k->name,
                       msg);
    return TK_OK;
}

static tk_status run_on_cpu(tk_kernel *k, RtVariant *v, tk_grid g, RtLaunchArgs *la,
                            const tk_launch_options *o)
{
    (void)o; /* no stream to queue on; launch_pdl changes nothing when launches do not overlap */
    tk_context *ctx = k->mod->ctx;
    InterpArg args[RT_MAX_PARAMS];
    for (int i = 0; i < v->nparams; i++) {
        tk_arg part;
        const tk_arg *a = rt_part_arg(la->values[v->param_of[i]], v->param_part[i], &part);
        args[i] = interp_value(a, (DType)v->param_dt[i]);
    }
    int nbufs = 0;
    InterpBuffer *bufs = snapshot(ctx, &nbufs);
    if (!bufs)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    InterpMemory mem = {bufs, nbufs};
    unsigned grid[3] = {g.x, g.y, g.z};
    Diag d;
    diag_init(&d, &k->mod->comp.src);
    InterpOptions io = {.threads = ctx->interp_threads, .max_steps = ctx->interp_max_steps};
    tk_status s = launch_status(k, interp_run(v->ir, grid, args, &mem, &io, &d), &d);
    diag_free(&d);
    tk_xfree(bufs);
    return s;
}

const RtBackend rt_interp_backend = {
    .device_label = "interpreter",
    .timed = false,
    .queued = false,
    .open = interp_open,
    .close = interp_close,
    .enter = interp_enter,
    .alloc = interp_alloc,
    .free = interp_free,
    .copy_to = interp_copy_to,
    .copy_from = interp_copy_from,
    .fill = interp_fill,
    .zero_async = interp_zero_async,
    .copy_async = interp_copy_async,
    .extent = interp_extent,
    .synchronize = interp_synchronize,
    .occupancy = interp_occupancy,
    .build = rt_jit_build_interp,
    .launch = run_on_cpu,
    .bench = rt_bench_host,
};
