/* rt_context.c: contexts, buffers, copies, device properties and occupancy.
 * A context is either a CUDA context (the device's primary one, or the
 * caller's) or an interpreter context whose "device memory" is host memory
 * registered here so the interpreter can bounds-check every access.
 * Guarantees: no driver call unchecked; an interpreter context never
 * touches libcuda. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"

static const char *ctx_kernel(tk_context *ctx) { return atomic_load(&ctx->last_kernel); }

tk_status rt_ctx_enter(tk_context *ctx)
{
    CUcontext cur = NULL;
    RT_CU(NULL, cuCtxGetCurrent, &cur);
    if (cur != ctx->cu)
        RT_CU(NULL, cuCtxSetCurrent, ctx->cu);
    return TK_OK;
}

/* ---- device properties ---------------------------------------------------------- */

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

static tk_status gpu_props(tk_context *ctx)
{
    tk_device_props *p = &ctx->props;
    CUdevice d = ctx->dev;
    RT_CU(NULL, cuDeviceGetName, p->name, (int)sizeof p->name, d);
    struct { int *out; CUdevice_attribute a; } attrs[] = {
        {&p->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
        {&p->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
        {&p->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
        {&p->warp_size, CU_DEVICE_ATTRIBUTE_WARP_SIZE},
        {&p->regs_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
        {&p->shared_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
        {&p->shared_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
        {&p->max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
        {&p->max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
        {&p->max_grid[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X},
        {&p->max_grid[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y},
        {&p->max_grid[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z},
    };
    for (int i = 0; i < TK_ARRAY_LEN(attrs); i++)
        RT_CU(NULL, cuDeviceGetAttribute, attrs[i].out, attrs[i].a, d);
    return TK_OK;
}

/* The LLVM target for this device: Hopper gets sm_90a (wgmma, TMA); newer
 * parts get sm_90 PTX that the driver compiles forward. TK_ARCH overrides. */
static void pick_arch(tk_context *ctx)
{
    const char *env = getenv("TK_ARCH");
    int cc = ctx->props.cc_major * 10 + ctx->props.cc_minor;
    if (env && *env)
        snprintf(ctx->arch, sizeof ctx->arch, "%s", env);
    else if (cc == 90)
        snprintf(ctx->arch, sizeof ctx->arch, "sm_90a");
    else if (cc > 90)
        snprintf(ctx->arch, sizeof ctx->arch, "sm_90");
    else
        snprintf(ctx->arch, sizeof ctx->arch, "sm_%d", cc);
}

/* ---- contexts ----------------------------------------------------------------------- */

static tk_status gpu_open(tk_context *ctx, const tk_context_options *o)
{
    tk_status s = rt_driver_load();
    if (s != TK_OK)
        return s;
    if (o && o->cu_context) {
        ctx->cu = (CUcontext)o->cu_context;
        RT_CU(NULL, cuCtxSetCurrent, ctx->cu);
        RT_CU(NULL, cuCtxGetDevice, &ctx->dev);
    } else {
        int n = 0;
        RT_CU(NULL, cuDeviceGetCount, &n);
        if (ctx->device < 0 || ctx->device >= n)
            return err_set(TK_ERR_NO_DEVICE, "no CUDA device %d (this machine has %d)",
                            ctx->device, n);
        RT_CU(NULL, cuDeviceGet, &ctx->dev, ctx->device);
        RT_CU(NULL, cuDevicePrimaryCtxRetain, &ctx->cu, ctx->dev);
        ctx->owns_primary = true;
        RT_CU(NULL, cuCtxSetCurrent, ctx->cu);
    }
    s = gpu_props(ctx);
    if (s == TK_OK)
        pick_arch(ctx);
    return s;
}

/* The step budget of interpreter launches: the option, else
 * TK_INTERP_MAX_STEPS, else the interpreter's default. */
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
            return err_set(TK_ERR_INVALID, "TK_INTERP_MAX_STEPS='%s' is not a positive "
                            "integer below 2**64", env);
        ctx->interp_max_steps = n;
    }
    return TK_OK;
}

tk_status tk_context_create(tk_context **out, const tk_context_options *opts)
{
    if (!out)
        return err_null_arg("tk_context_create", "ctx");
    *out = NULL;
    if (opts && opts->device < 0)
        return err_set(TK_ERR_INVALID, "tk_context_create: device is %d", opts->device);
    tk_context *ctx = tk_xalloc(sizeof *ctx);
    if (!ctx)
        return err_set(TK_ERR_NO_MEMORY, "out of memory creating a context");
    memset(ctx, 0, sizeof *ctx);
    pthread_mutex_init(&ctx->lock, NULL);
    ctx->device = opts ? opts->device : 0;
    ctx->search_paths = opts ? opts->search_paths : NULL;
    ctx->interpret = (opts && opts->interpret) || rt_env_on("TK_INTERPRET");
    const char *threads = getenv("TK_INTERPRET_THREADS");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    ctx->interp_threads = threads && atoi(threads) > 0 ? atoi(threads)
                                                       : (int)(ncpu > 16 ? 16 : ncpu > 0 ? ncpu : 1);
    tk_status s = ctx->interpret ? interp_budget(ctx, opts) : gpu_open(ctx, opts);
    if (s == TK_OK && ctx->interpret)
        interp_props(ctx);
    if (s != TK_OK) {
        tk_context_destroy(ctx);
        return s;
    }
    *out = ctx;
    return TK_OK;
}

void tk_context_destroy(tk_context *ctx)
{
    if (!ctx)
        return;
    for (int i = 0; i < ctx->nbufs; i++)
        free(ctx->bufs[i].block);
    tk_xfree(ctx->bufs);
    if (ctx->owns_primary && ctx->cu)
        rt_cu.p_cuDevicePrimaryCtxRelease(ctx->dev); /* nothing to report to */
    pthread_mutex_destroy(&ctx->lock);
    tk_xfree(ctx);
}

/* ---- interpreter buffers ---------------------------------------------------------- */

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

/* The red zone kept on each side of an interpreter buffer: a pointer that
 * runs this far past either end of one buffer lands in no buffer, so the
 * interpreter reports it instead of writing into a neighbour. An eighth of
 * the block, at least 1 KiB and at most 64 MiB (address space only: the
 * pages are never touched). A multiple of 256, so the buffer stays aligned. */
static size_t red_zone(size_t rounded)
{
    size_t rz = (rounded / 8 + 255) & ~(size_t)255;
    return rz < 1024 ? 1024 : rz > ((size_t)64 << 20) ? (size_t)64 << 20 : rz;
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
    if (pages > 0 && page > 0 && size_mul_ok((size_t)pages, (size_t)page, &host) &&
        rounded > host)
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
        return err_set(TK_ERR_NO_MEMORY, "tk_alloc: cannot allocate %zu bytes of host memory "
                        "for the interpreter", bytes);
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

InterpBuffer *rt_ctx_snapshot(tk_context *ctx, int *n)
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

/* Checks that [p, p+n) lies inside one interpreter buffer. */
static tk_status interp_check(tk_context *ctx, const void *p, size_t n, const char *what)
{
    pthread_mutex_lock(&ctx->lock);
    int i = find_buf(ctx, p, n);
    pthread_mutex_unlock(&ctx->lock);
    if (i < 0)
        return err_set(TK_ERR_INVALID, "%s: %p..+%zu is not inside a buffer from tk_alloc",
                        what, p, n);
    return TK_OK;
}

/* ---- buffers -------------------------------------------------------------------------- */

tk_status tk_alloc(tk_context *ctx, size_t bytes, void **dptr)
{
    if (!ctx || !dptr)
        return err_null_arg("tk_alloc", !ctx ? "ctx" : "dptr");
    *dptr = NULL;
    if (ctx->interpret)
        return interp_alloc(ctx, bytes, dptr);
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    CUdeviceptr p = 0;
    RT_CU(ctx_kernel(ctx), cuMemAlloc, &p, bytes ? bytes : 1);
    *dptr = (void *)(uintptr_t)p;
    return TK_OK;
}

tk_status tk_free(tk_context *ctx, void *dptr)
{
    if (!ctx)
        return err_null_arg("tk_free", "ctx");
    if (!dptr)
        return TK_OK;
    if (ctx->interpret) {
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
                     : err_set(TK_ERR_INVALID, "tk_free: %p is not a live buffer from tk_alloc",
                                dptr);
    }
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(ctx_kernel(ctx), cuMemFree, (CUdeviceptr)(uintptr_t)dptr);
    return TK_OK;
}

tk_status tk_copy_to(tk_context *ctx, void *dst, const void *src, size_t bytes)
{
    if (!ctx || (bytes && (!dst || !src)))
        return err_null_arg("tk_copy_to", !ctx ? "ctx" : !dst ? "dst_dev" : "src_host");
    if (!bytes)
        return TK_OK;
    if (ctx->interpret) {
        tk_status s = interp_check(ctx, dst, bytes, "tk_copy_to");
        if (s == TK_OK)
            memcpy(dst, src, bytes);
        return s;
    }
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(ctx_kernel(ctx), cuMemcpyHtoD, (CUdeviceptr)(uintptr_t)dst, src, bytes);
    return TK_OK;
}

tk_status tk_copy_from(tk_context *ctx, void *dst, const void *src, size_t bytes)
{
    if (!ctx || (bytes && (!dst || !src)))
        return err_null_arg("tk_copy_from", !ctx ? "ctx" : !dst ? "dst_host" : "src_dev");
    if (!bytes)
        return TK_OK;
    if (ctx->interpret) {
        tk_status s = interp_check(ctx, src, bytes, "tk_copy_from");
        if (s == TK_OK)
            memcpy(dst, src, bytes);
        return s;
    }
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(ctx_kernel(ctx), cuMemcpyDtoH, dst, (CUdeviceptr)(uintptr_t)src, bytes);
    return TK_OK;
}

tk_status tk_memset(tk_context *ctx, void *dptr, int byte, size_t bytes)
{
    if (!ctx || (bytes && !dptr))
        return err_null_arg("tk_memset", !ctx ? "ctx" : "dptr");
    if (!bytes)
        return TK_OK;
    if (ctx->interpret) {
        tk_status s = interp_check(ctx, dptr, bytes, "tk_memset");
        if (s == TK_OK)
            memset(dptr, byte, bytes);
        return s;
    }
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(ctx_kernel(ctx), cuMemsetD8, (CUdeviceptr)(uintptr_t)dptr, (unsigned char)byte, bytes);
    return TK_OK;
}

/* ---- stream-ordered helpers for the autotuner ------------------------------------------ */

tk_status rt_buffer_extent(tk_context *ctx, const void *p, size_t *bytes)
{
    *bytes = 0;
    if (ctx->interpret) {
        pthread_mutex_lock(&ctx->lock);
        int i = find_buf(ctx, p, 0);
        if (i >= 0)
            *bytes = (size_t)(ctx->bufs[i].base + ctx->bufs[i].bytes - (const unsigned char *)p);
        pthread_mutex_unlock(&ctx->lock);
        return i >= 0 ? TK_OK
                      : err_set(TK_ERR_INVALID, "%p is not inside a buffer from tk_alloc", p);
    }
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    CUdeviceptr base = 0;
    size_t size = 0;
    RT_CU(NULL, cuMemGetAddressRange, &base, &size, (CUdeviceptr)(uintptr_t)p);
    *bytes = (size_t)(base + size - (CUdeviceptr)(uintptr_t)p);
    return TK_OK;
}

tk_status rt_zero_async(tk_context *ctx, void *p, size_t bytes, tk_stream stream)
{
    if (ctx->interpret) { /* the interpreter runs launches synchronously */
        tk_status s = interp_check(ctx, p, bytes, "zeroing a buffer for a tuning run");
        if (s == TK_OK)
            memset(p, 0, bytes);
        return s;
    }
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(NULL, cuMemsetD8Async, (CUdeviceptr)(uintptr_t)p, 0, bytes, (CUstream)stream);
    return TK_OK;
}

tk_status rt_copy_async(tk_context *ctx, void *dst, const void *src, size_t bytes,
                        tk_stream stream)
{
    if (ctx->interpret) {
        tk_status s = interp_check(ctx, src, bytes, "copying a buffer for a tuning run");
        if (s == TK_OK)
            s = interp_check(ctx, dst, bytes, "copying a buffer for a tuning run");
        if (s == TK_OK)
            memcpy(dst, src, bytes);
        return s;
    }
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(NULL, cuMemcpyDtoDAsync, (CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src,
          bytes, (CUstream)stream);
    return TK_OK;
}

tk_status tk_synchronize(tk_context *ctx)
{
    if (!ctx)
        return err_null_arg("tk_synchronize", "ctx");
    if (ctx->interpret)
        return TK_OK;
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(ctx_kernel(ctx), cuCtxSynchronize);
    return TK_OK;
}

/* ---- properties and occupancy ------------------------------------------------------ */

tk_status tk_device_properties(tk_context *ctx, tk_device_props *props)
{
    if (!ctx || !props)
        return err_null_arg("tk_device_properties", !ctx ? "ctx" : "props");
    *props = ctx->props;
    return TK_OK;
}

/* The same limits the hardware applies, for interpreter contexts and
 * kernels with no CUfunction: threads, registers, shared memory, 32 blocks. */
static int occupancy_estimate(const tk_device_props *p, const tk_kernel_info *info)
{
    int threads = info->threads > 0     ? info->threads
                  : info->num_warps > 0 ? info->num_warps * p->warp_size
                                        : 128;
    int by_threads = p->max_threads_per_sm / threads;
    int regs = info->registers > 0 ? (info->registers + 7) / 8 * 8 : 32;
    int by_regs = p->regs_per_sm / (regs * threads);
    int shared = info->shared_bytes + info->dynamic_shared_bytes;
    int by_shared = shared > 0 ? p->shared_per_sm / (shared + 1024) : 32;
    int n = by_threads < by_regs ? by_threads : by_regs;
    n = n < by_shared ? n : by_shared;
    return n < 32 ? n : 32;
}

tk_status tk_occupancy(tk_context *ctx, const tk_kernel_info *info, int *blocks_per_sm)
{
    if (!ctx || !info || !blocks_per_sm)
        return err_null_arg("tk_occupancy", !ctx ? "ctx" : !info ? "info" : "blocks_per_sm");
    *blocks_per_sm = 0;
    if (ctx->interpret || !info->function) {
        *blocks_per_sm = occupancy_estimate(&ctx->props, info);
        return TK_OK;
    }
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    int n = 0;
    RT_CU(NULL, cuOccupancyMaxActiveBlocksPerMultiprocessor, &n, (CUfunction)info->function,
          info->threads > 0 ? info->threads : info->num_warps * ctx->props.warp_size,
          (size_t)info->dynamic_shared_bytes);
    *blocks_per_sm = n;
    return TK_OK;
}
