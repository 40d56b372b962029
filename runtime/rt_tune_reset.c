/* rt_tune_reset.c: reset_to_zero and restore_value around the autotuner's
 * timed runs, so kernels that accumulate into a buffer or update one in
 * place tune on the same inputs each run and leave their arguments as the
 * caller gave them. Assumes the launch's pointer arguments are buffers from
 * tk_alloc or the driver (their size is the rest of their allocation) unless
 * the host gives a size callback. Guarantees: zeroing and restoring are
 * queued on the launch's stream, in order with the runs; the copies are
 * freed by rt_tune_bufs_end whatever happened before it. */
#include <stdio.h>
#include <string.h>

#include "rt_backend.h"

/* The launch argument of a named parameter: *out is NULL for a buffer given
 * None; false when the name is no runtime pointer argument (*why says why). */
static bool named_arg(const tk_kernel *k, const RtLaunchArgs *la, const char *name,
                      const tk_arg **out, const char **why)
{
    *out = NULL;
    int p;
    for (p = 0; p < k->sig.nparams && strcmp(k->sig.param_names[p], name) != 0; p++)
        ;
    *why = p == k->sig.nparams ? "is not a parameter" : "is a constexpr, not a buffer";
    for (int j = 0; p < k->sig.nparams && j < k->nruntime; j++)
        if (k->runtime_idx[j] == p) {
            *out = la->values[j];
            *why = "is not a pointer argument";
            return !*out || (*out)->kind == TK_ARG_PTR;
        }
    return false;
}

static tk_status add_buf(tk_kernel *k, const RtTuneReset *r, const RtLaunchArgs *la,
                         const char *name, bool zero, const tk_arg *args, int nargs,
                         RtTuneBufs *out)
{
    const char *option = zero ? "reset_to_zero" : "restore_value", *why;
    const tk_arg *a;
    if (!named_arg(k, la, name, &a, &why))
        return err_set(TK_ERR_LAUNCH, "kernel '%s': autotune %s names '%s', which %s", k->name,
                       option, name, why);
    if (!a || !a->v.ptr)
        return TK_OK; /* None or a null buffer: nothing to reset, as Triton skips None */
    RtTuneBuf *b = &out->b[out->n];
    memset(b, 0, sizeof *b);
    b->name = name;
    b->ptr = a->v.ptr;
    b->zero = zero;
    tk_status s = TK_OK;
    if (r->bytes)
        b->bytes = r->bytes(name, args, nargs, r->user);
    else
        s = rt_buffer_extent(out->ctx, b->ptr, &b->bytes);
    if (s != TK_OK)
        return err_set(s, "kernel '%s': autotune %s '%s': %s", k->name, option, name,
                       tk_last_error());
    out->n++;
    if (zero || !b->bytes)
        return TK_OK;
    s = tk_alloc(out->ctx, b->bytes, &b->saved);
    if (s == TK_OK)
        s = rt_copy_async(out->ctx, b->saved, b->ptr, b->bytes, out->stream);
    return s;
}

tk_status rt_tune_bufs_begin(tk_kernel *k, const RtTuneReset *r, const RtLaunchArgs *la,
                             const tk_arg *args, int nargs, tk_stream stream, RtTuneBufs *out)
{
    memset(out, 0, sizeof *out);
    out->ctx = k->mod->ctx;
    out->stream = stream;
    int n = r->nzero + r->nrestore;
    if (n == 0)
        return TK_OK;
    out->b = tk_xalloc(sizeof *out->b * (size_t)n);
    if (!out->b)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    tk_status s = TK_OK;
    for (int i = 0; i < r->nzero && s == TK_OK; i++)
        s = add_buf(k, r, la, r->zero[i], true, args, nargs, out);
    for (int i = 0; i < r->nrestore && s == TK_OK; i++)
        s = add_buf(k, r, la, r->restore[i], false, args, nargs, out);
    if (s != TK_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tk_last_error());
        rt_tune_bufs_end(out, false);
        return err_set(s, "%s", msg);
    }
    return TK_OK;
}

tk_status rt_tune_bufs_before(RtTuneBufs *b)
{
    for (int i = 0; i < b->n; i++)
        if (b->b[i].zero && b->b[i].bytes) {
            tk_status s = rt_zero_async(b->ctx, b->b[i].ptr, b->b[i].bytes, b->stream);
            if (s != TK_OK)
                return s;
        }
    return TK_OK;
}

tk_status rt_tune_bufs_after(RtTuneBufs *b)
{
    for (int i = 0; i < b->n; i++)
        if (b->b[i].saved) {
            tk_status s =
                rt_copy_async(b->ctx, b->b[i].ptr, b->b[i].saved, b->b[i].bytes, b->stream);
            if (s != TK_OK)
                return s;
        }
    return TK_OK;
}

/* The launch after tuning starts from zeroed reset_to_zero buffers too; the
 * copies are freed once the queued restores have run. */
tk_status rt_tune_bufs_end(RtTuneBufs *b, bool zero_again)
{
    tk_status s = zero_again ? rt_tune_bufs_before(b) : TK_OK;
    bool saved = false;
    for (int i = 0; i < b->n; i++)
        saved |= b->b[i].saved != NULL;
    if (saved && b->ctx->be->queued) {
        tk_status w = tk_synchronize(b->ctx);
        if (s == TK_OK)
            s = w;
    }
    for (int i = 0; i < b->n; i++)
        if (b->b[i].saved && tk_free(b->ctx, b->b[i].saved) != TK_OK && s == TK_OK)
            s = TK_ERR_DRIVER; /* tk_free set the message */
    tk_xfree(b->b);
    memset(b, 0, sizeof *b);
    return s;
}
