/* rt_context.c: contexts, buffers, copies, device properties and occupancy:
 * the public functions, which check their arguments and call the context's
 * backend (rt_backend.h): a CUDA device, or the reference interpreter when
 * asked for (the option or TK_INTERPRET=1). Guarantees: a NULL argument is
 * TK_ERR_INVALID naming it; a context that fails to open is freed. */
#include <stdlib.h>
#include <string.h>

#include "rt_backend.h"

/* ---- contexts ----------------------------------------------------------------------- */

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
    bool interpret = (opts && opts->interpret) || rt_env_on("TK_INTERPRET");
    ctx->be = interpret ? &rt_interp_backend : &rt_cuda_backend;
    tk_status s = ctx->be->open(ctx, opts);
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
    ctx->be->close(ctx);
    pthread_mutex_destroy(&ctx->lock);
    tk_xfree(ctx);
}

/* ---- buffers and copies --------------------------------------------------------------- */

tk_status tk_alloc(tk_context *ctx, size_t bytes, void **dptr)
{
    if (!ctx || !dptr)
        return err_null_arg("tk_alloc", !ctx ? "ctx" : "dptr");
    *dptr = NULL;
    return ctx->be->alloc(ctx, bytes, dptr);
}

tk_status tk_free(tk_context *ctx, void *dptr)
{
    if (!ctx)
        return err_null_arg("tk_free", "ctx");
    return dptr ? ctx->be->free(ctx, dptr) : TK_OK;
}

tk_status tk_copy_to(tk_context *ctx, void *dst, const void *src, size_t bytes)
{
    if (!ctx || (bytes && (!dst || !src)))
        return err_null_arg("tk_copy_to", !ctx ? "ctx" : !dst ? "dst_dev" : "src_host");
    return bytes ? ctx->be->copy_to(ctx, dst, src, bytes) : TK_OK;
}

tk_status tk_copy_from(tk_context *ctx, void *dst, const void *src, size_t bytes)
{
    if (!ctx || (bytes && (!dst || !src)))
        return err_null_arg("tk_copy_from", !ctx ? "ctx" : !dst ? "dst_host" : "src_dev");
    return bytes ? ctx->be->copy_from(ctx, dst, src, bytes) : TK_OK;
}

tk_status tk_memset(tk_context *ctx, void *dptr, int byte, size_t bytes)
{
    if (!ctx || (bytes && !dptr))
        return err_null_arg("tk_memset", !ctx ? "ctx" : "dptr");
    return bytes ? ctx->be->fill(ctx, dptr, byte, bytes) : TK_OK;
}

tk_status tk_synchronize(tk_context *ctx)
{
    if (!ctx)
        return err_null_arg("tk_synchronize", "ctx");
    return ctx->be->synchronize(ctx);
}

/* ---- stream-ordered helpers for the autotuner ------------------------------------------ */

tk_status rt_buffer_extent(tk_context *ctx, const void *p, size_t *bytes)
{
    *bytes = 0;
    return ctx->be->extent(ctx, p, bytes);
}

tk_status rt_zero_async(tk_context *ctx, void *p, size_t bytes, tk_stream stream)
{
    return ctx->be->zero_async(ctx, p, bytes, stream);
}

tk_status rt_copy_async(tk_context *ctx, void *dst, const void *src, size_t bytes, tk_stream stream)
{
    return ctx->be->copy_async(ctx, dst, src, bytes, stream);
}

/* ---- properties and occupancy ------------------------------------------------------ */

tk_status tk_device_properties(tk_context *ctx, tk_device_props *props)
{
    if (!ctx || !props)
        return err_null_arg("tk_device_properties", !ctx ? "ctx" : "props");
    *props = ctx->props;
    return TK_OK;
}

int rt_occupancy_estimate(const tk_device_props *p, const tk_kernel_info *info)
{
    int threads = info->threads > 0 ? info->threads
        : info->num_warps > 0       ? info->num_warps * p->warp_size
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
    return ctx->be->occupancy(ctx, info, blocks_per_sm);
}
