/* rt_backend_cuda.c: the CUDA backend. A context is the device's primary
 * CUDA context (or the caller's); memory is device memory; launches are
 * queued on the caller's stream, with tensor maps made per launch and, when
 * asked, programmatic dependent launch. Guarantees: every driver call is
 * checked; a fault names the kernel that was last launched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_backend.h"

static const char *ctx_kernel(tk_context *ctx) { return atomic_load(&ctx->last_kernel); }

tk_status rt_ctx_enter(tk_context *ctx)
{
    CUcontext cur = NULL;
    RT_CU(NULL, cuCtxGetCurrent, &cur);
    if (cur != ctx->cu)
        RT_CU(NULL, cuCtxSetCurrent, ctx->cu);
    return TK_OK;
}

/* ---- opening ---------------------------------------------------------------------- */

static tk_status cuda_props(tk_context *ctx)
{
    tk_device_props *p = &ctx->props;
    CUdevice d = ctx->dev;
    RT_CU(NULL, cuDeviceGetName, p->name, (int)sizeof p->name, d);
    struct {
        int *out;
        CUdevice_attribute a;
    } attrs[] = {
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
    /* clocks and the bus, which Triton's host code reads to estimate peak
     * bandwidth: a driver that no longer reports them leaves 0, not an
     * unusable context */
    struct {
        int *out;
        CUdevice_attribute a;
    } optional[] = {
        {&p->sm_clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
        {&p->mem_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE},
        {&p->mem_bus_width_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH},
    };
    for (int i = 0; i < TK_ARRAY_LEN(optional); i++)
        if (rt_cu.p_cuDeviceGetAttribute(optional[i].out, optional[i].a, d) != CUDA_SUCCESS)
            *optional[i].out = 0;
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

static tk_status cuda_open(tk_context *ctx, const tk_context_options *o)
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
            return err_set(TK_ERR_NO_DEVICE, "no CUDA device %d (this machine has %d)", ctx->device,
                           n);
        RT_CU(NULL, cuDeviceGet, &ctx->dev, ctx->device);
        RT_CU(NULL, cuDevicePrimaryCtxRetain, &ctx->cu, ctx->dev);
        ctx->owns_primary = true;
        RT_CU(NULL, cuCtxSetCurrent, ctx->cu);
    }
    s = cuda_props(ctx);
    if (s == TK_OK)
        pick_arch(ctx);
    return s;
}

static void cuda_close(tk_context *ctx)
{
    if (ctx->owns_primary && ctx->cu)
        rt_cu.p_cuDevicePrimaryCtxRelease(ctx->dev); /* nothing to report to */
}

/* ---- memory ------------------------------------------------------------------------- */

static tk_status cuda_alloc(tk_context *ctx, size_t bytes, void **dptr)
{
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    CUdeviceptr p = 0;
    RT_CU(ctx_kernel(ctx), cuMemAlloc, &p, bytes ? bytes : 1);
    *dptr = (void *)(uintptr_t)p;
    return TK_OK;
}

static tk_status cuda_free(tk_context *ctx, void *dptr)
{
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(ctx_kernel(ctx), cuMemFree, (CUdeviceptr)(uintptr_t)dptr);
    return TK_OK;
}

static tk_status cuda_copy_to(tk_context *ctx, void *dst, const void *src, size_t bytes)
{
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(ctx_kernel(ctx), cuMemcpyHtoD, (CUdeviceptr)(uintptr_t)dst, src, bytes);
    return TK_OK;
}

static tk_status cuda_copy_from(tk_context *ctx, void *dst, const void *src, size_t bytes)
{
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(ctx_kernel(ctx), cuMemcpyDtoH, dst, (CUdeviceptr)(uintptr_t)src, bytes);
    return TK_OK;
}

static tk_status cuda_fill(tk_context *ctx, void *dptr, int byte, size_t bytes)
{
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(ctx_kernel(ctx), cuMemsetD8, (CUdeviceptr)(uintptr_t)dptr, (unsigned char)byte, bytes);
    return TK_OK;
}

static tk_status cuda_zero_async(tk_context *ctx, void *p, size_t bytes, tk_stream stream)
{
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(NULL, cuMemsetD8Async, (CUdeviceptr)(uintptr_t)p, 0, bytes, (CUstream)stream);
    return TK_OK;
}

static tk_status cuda_copy_async(tk_context *ctx, void *dst, const void *src, size_t bytes,
                                 tk_stream stream)
{
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(NULL, cuMemcpyDtoDAsync, (CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes,
          (CUstream)stream);
    return TK_OK;
}

static tk_status cuda_extent(tk_context *ctx, const void *p, size_t *bytes)
{
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    CUdeviceptr base = 0;
    size_t size = 0;
    RT_CU(NULL, cuMemGetAddressRange, &base, &size, (CUdeviceptr)(uintptr_t)p);
    *bytes = (size_t)(base + size - (CUdeviceptr)(uintptr_t)p);
    return TK_OK;
}

static tk_status cuda_synchronize(tk_context *ctx)
{
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    RT_CU(ctx_kernel(ctx), cuCtxSynchronize);
    return TK_OK;
}

static tk_status cuda_occupancy(tk_context *ctx, const tk_kernel_info *info, int *blocks)
{
    if (!info->function) { /* a kernel that was never loaded: the hardware's limits */
        *blocks = rt_occupancy_estimate(&ctx->props, info);
        return TK_OK;
    }
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    int n = 0;
    RT_CU(NULL, cuOccupancyMaxActiveBlocksPerMultiprocessor, &n, (CUfunction)info->function,
          info->threads > 0 ? info->threads : info->num_warps * ctx->props.warp_size,
          (size_t)info->dynamic_shared_bytes);
    *blocks = n;
    return TK_OK;
}

/* ---- launching ------------------------------------------------------------------------ */

/* The parameter values as the kernel reads them: addresses, and integers
 * at the compiled parameter's width (what the tensor maps are built from). */
static void kernel_values(const RtVariant *v, const uint64_t *slots, int64_t *vals)
{
    for (int i = 0; i < v->nparams; i++) {
        switch ((DType)v->param_dt[i]) {
        case DT_I8: vals[i] = (int8_t)slots[i]; break;
        case DT_I16: vals[i] = (int16_t)slots[i]; break;
        case DT_I32: vals[i] = (int32_t)slots[i]; break;
        default: vals[i] = (int64_t)slots[i]; break;
        }
    }
}

/* Queues v. With launch_pdl on sm_90 and later the launch may start while
 * the previous kernel of the stream finishes (programmatic stream
 * serialisation); the kernel waits for it where it calls gdc_wait. Older
 * GPUs have no such overlap, so there it is an ordinary launch. A kernel
 * compiled for clusters (v->cluster CTAs along x) is launched in them; the
 * grid's x is then a multiple of it (cuda_launch). */
static tk_status queue(tk_kernel *k, RtVariant *v, tk_grid g, void **ptrs,
                       const tk_launch_options *o)
{
    tk_stream stream = o ? o->stream : NULL;
    bool pdl = o && o->launch_pdl && k->mod->ctx->props.cc_major >= 9;
    bool cluster = v->cluster > 1;
    if ((pdl || cluster) && !rt_cu.p_cuLaunchKernelEx)
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s': %s needs cuLaunchKernelEx, which "
                       "this CUDA driver lacks",
                       k->name, pdl ? "launch_pdl" : "num_ctas=2");
    if (!pdl && !cluster) {
        RT_CU(k->name, cuLaunchKernel, v->fn, g.x, g.y, g.z, (unsigned)v->threads, 1, 1,
              (unsigned)v->dyn_shared, (CUstream)stream, ptrs, NULL);
        return TK_OK;
    }
    CUlaunchAttribute attr[2];
    memset(attr, 0, sizeof attr);
    unsigned n = 0;
    if (pdl) {
        attr[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr[n++].value.programmaticStreamSerializationAllowed = 1;
    }
    if (cluster) {
        attr[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr[n].value.clusterDim.x = (unsigned)v->cluster;
        attr[n].value.clusterDim.y = 1;
        attr[n++].value.clusterDim.z = 1;
    }
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = g.x, cfg.gridDimY = g.y, cfg.gridDimZ = g.z;
    cfg.blockDimX = (unsigned)v->threads, cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = (unsigned)v->dyn_shared;
    cfg.hStream = (CUstream)stream;
    cfg.attrs = attr;
    cfg.numAttrs = n;
    RT_CU(k->name, cuLaunchKernelEx, &cfg, v->fn, ptrs, NULL);
    return TK_OK;
}

/* The scratch a kernel writes its own tensor maps into: 128 bytes per
 * device map and program, allocated in stream order for this launch alone
 * (two launches on two streams never share it). *none when the driver has
 * no stream-ordered allocator: the caller launches without TMA then. */
static tk_status map_scratch(tk_kernel *k, tk_grid g, int ndev, tk_stream stream, CUdeviceptr *out,
                             bool *none)
{
    *out = 0;
    *none = !rt_cu.p_cuMemAllocAsync || !rt_cu.p_cuMemFreeAsync;
    if (*none)
        return TK_OK;
    size_t bytes = (size_t)g.x * g.y * g.z * (size_t)ndev * 128;
    RT_CU(k->name, cuMemAllocAsync, out, bytes, (CUstream)stream);
    return TK_OK;
}

/* Launches v; *no_maps is set (and nothing launched) when its tensor maps
 * cannot be made from these arguments. */
static tk_status launch_variant(tk_kernel *k, RtVariant *v, tk_grid g, const RtLaunchArgs *la,
                                const tk_launch_options *o, bool *no_maps)
{
    tk_context *ctx = k->mod->ctx;
    uint64_t slots[RT_MAX_PARAMS];
    void *ptrs[RT_MAX_PARAMS + RT_MAX_TMAPS];
    _Alignas(64) unsigned char maps[RT_MAX_TMAPS][128];
    for (int i = 0; i < v->nparams; i++) {
        tk_arg part;
        const tk_arg *a = rt_part_arg(la->values[v->param_of[i]], v->param_part[i], &part);
        slots[i] = rt_pack_value(a, (DType)v->param_dt[i]);
        ptrs[i] = &slots[i];
    }
    *no_maps = false;
    tk_status s = rt_ctx_enter(ctx);
    if (s != TK_OK)
        return s;
    int at = v->nparams, ndev = 0;
    if (v->ntmaps) {
        int64_t vals[RT_MAX_PARAMS];
        bool ok;
        kernel_values(v, slots, vals);
        s = rt_tma_maps(v, vals, maps, &ok);
        if (s != TK_OK || !ok) {
            *no_maps = s == TK_OK;
            return s;
        }
        for (int i = 0; i < v->ntmaps; i++) {
            if (v->tmaps[i].device)
                ndev++;
            else
                ptrs[at++] = maps[i];
        }
    }
    tk_stream stream = o ? o->stream : NULL;
    CUdeviceptr scratch = 0;
    if (ndev) {
        s = map_scratch(k, g, ndev, stream, &scratch, no_maps);
        if (s != TK_OK || *no_maps)
            return s;
        ptrs[at++] = &scratch;
    }
    atomic_store_explicit(&ctx->last_kernel, k->name, memory_order_relaxed);
    s = queue(k, v, g, ptrs, o);
    if (scratch) {
        CUresult r = rt_cu.p_cuMemFreeAsync(scratch, (CUstream)stream);
        if (r != CUDA_SUCCESS && s == TK_OK)
            s = rt_cu_fail(r, "cuMemFreeAsync", k->name);
    }
    return s;
}

/* The launch again with the kernel compiled without TMA: its own variant,
 * keyed apart. */
static tk_status launch_without_tma(tk_kernel *k, tk_grid g, RtLaunchArgs *la,
                                    const tk_launch_options *o)
{
    la->no_tma = true;
    la->key.w[la->key.nwords++] = RT_KEY_NO_TMA;
    rt_key_finish(&la->key);
    RtVariant *v = NULL;
    bool no_maps = false;
    tk_status s = rt_variant_get(k, la, &v);
    if (s == TK_OK)
        s = launch_variant(k, v, g, la, o, &no_maps);
    if (s == TK_OK && no_maps) /* a variant without TMA takes none */
        s = err_set(TK_ERR_INTERNAL,
                    "internal error: kernel '%s' compiled without TMA takes "
                    "tensor maps",
                    k->name);
    return s;
}

/* A grid whose x is not a multiple of the cluster: the kernel compiled
 * without clusters (each program computes the same either way), keyed
 * apart; TK_VERBOSE says so once. */
static tk_status unclustered(tk_kernel *k, tk_grid g, RtLaunchArgs *la, RtVariant **v)
{
    static int said;
    if (rt_env_on("TK_VERBOSE"))
        rt_warn_once(&said,
                     "kernel '%s': a grid of %u programs along x is no multiple of num_ctas=%d; "
                     "launched as num_ctas=1",
                     k->name, g.x, la->num_ctas);
    memmove(&la->key.w[la->ctas_word], &la->key.w[la->ctas_word + 1],
            sizeof la->key.w[0] * (size_t)(la->key.nwords - la->ctas_word - 1));
    la->key.nwords--;
    la->num_ctas = 1;
    rt_key_finish(&la->key);
    return rt_variant_get(k, la, v);
}

static tk_status cuda_launch(tk_kernel *k, RtVariant *v, tk_grid g, RtLaunchArgs *la,
                             const tk_launch_options *o)
{
    bool no_maps = false;
    tk_status s = TK_OK;
    if (v->cluster > 1 && g.x % (unsigned)v->cluster)
        s = unclustered(k, g, la, &v);
    if (s == TK_OK)
        s = launch_variant(k, v, g, la, o, &no_maps);
    return s == TK_OK && no_maps ? launch_without_tma(k, g, la, o) : s;
}

const RtBackend rt_cuda_backend = {
    .device_label = NULL,
    .timed = true,
    .queued = true,
    .open = cuda_open,
    .close = cuda_close,
    .enter = rt_ctx_enter,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_to = cuda_copy_to,
    .copy_from = cuda_copy_from,
    .fill = cuda_fill,
    .zero_async = cuda_zero_async,
    .copy_async = cuda_copy_async,
    .extent = cuda_extent,
    .synchronize = cuda_synchronize,
    .occupancy = cuda_occupancy,
    .build = rt_jit_build_cuda,
    .launch = cuda_launch,
    .bench = rt_bench_events,
};
