/* cases_misc.c: builtins outside the big groups: hints (multiple_of,
 * max_contiguous) that must not change values, block creation (full,
 * zeros_like, shape and dtype from a value), tl.range with num_stages,
 * debug_barrier and umulhi. Exact where no rounding happens; 1e-6 for a
 * short fp32 accumulation. */
#include "harness.h"

static void hinted_case(H *h, size_t n, int block, int warps)
{
    if (!h_begin(h, "misc.hinted_copy.n%zu.B%d.w%d", n, block, warps))
        return;
    tk_kernel *k = h_kernel(h, "misc.tk", "hinted_copy");
    double *x = h_rand_array(h, TK_F32, n, -5, 5);
    void *dx = h_upload(h, TK_F32, x, n), *dy = h_output(h, TK_F32, n + 8);
    h_launch(
        h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
        H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_i32((int)n), tk_const("BLOCK", block)),
        warps);
    double *y = h_download(h, TK_F32, dy, n), *ref = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        ref[i] = h_round_to(TK_F32, x[i] + 1);
    h_check(h, "y", y, ref, n, 0);
    h_check_untouched(h, "y", TK_F32, dy, n, 8);
    h_end(h);
}

static void creation_case(H *h, size_t n, int iters, int block)
{
    if (!h_begin(h, "misc.creation_range_umulhi.n%zu.iters%d.B%d", n, iters, block))
        return;
    tk_kernel *k = h_kernel(h, "misc.tk", "creation");
    double *x = h_rand_array(h, TK_F32, n, -5, 5);
    int64_t *u = h_malloc(h, n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++)
        u[i] = h_randint(h, 0, UINT32_MAX - 20000);
    void *dx = h_upload(h, TK_F32, x, n), *du = h_upload_int(h, TK_U32, u, n);
    void *dout = h_output(h, TK_F32, n), *dhi = h_output(h, TK_U32, n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(du, TK_U32), tk_ptr(dout, TK_F32),
                    tk_ptr(dhi, TK_U32), tk_i32((int)n), tk_i32(iters), tk_const("BLOCK", block)),
             4);
    double *out = h_download(h, TK_F32, dout, n);
    int64_t *hi = h_download_int(h, TK_U32, dhi, n);
    double *ref = h_malloc(h, n * sizeof(double));
    int64_t *rhi = h_malloc(h, n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        ref[i] = iters * (x[i] * 2 + 3.5);
        rhi[i] = (int64_t)(((uint64_t)u[i] * (uint64_t)(u[i] + 12345)) >> 32);
    }
    h_check(h, "acc", out, ref, n, 1e-6);
    h_check_int(h, "umulhi", hi, rhi, n);
    h_end(h);
}

/* Expected values are exact: no rounding anywhere. Each element of a, b, c is
 * drawn from a range that makes the negated operand win about a third of the
 * time. */
static void minmax_neg_case(H *h, tk_dtype t, size_t n)
{
    if (!h_begin(h, "misc.minmax_neg.%s.n%zu", h_dtype_name(t), n))
        return;
    tk_kernel *k = h_kernel(h, "misc.tk", "minmax_neg");
    int64_t *a = h_malloc(h, 3 * n * sizeof(int64_t)), *b = a + n, *c = b + n;
    for (size_t i = 0; i < 3 * n; i++)
        a[i] = h_randint(h, -1000, 1000);
    void *da = h_upload_int(h, t, a, n), *db = h_upload_int(h, t, b, n);
    void *dc = h_upload_int(h, t, c, n), *dout = h_output(h, t, 4 * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, 256), 1, 1),
             H_ARGS(tk_ptr(da, t), tk_ptr(db, t), tk_ptr(dc, t), tk_ptr(dout, t), tk_i32((int)n),
                    tk_const("BLOCK", 256)),
             4);
    int64_t *out = h_download_int(h, t, dout, 4 * n);
    int64_t *ref = h_malloc(h, 4 * n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        int64_t m = a[i] > -b[i] ? a[i] : -b[i];
        ref[i] = ref[n + i] = ref[2 * n + i] = m > c[i] ? m : c[i];
        int64_t lo = -a[i] < b[i] ? -a[i] : b[i];
        ref[3 * n + i] = lo < -c[i] ? lo : -c[i];
    }
    h_check_int(h, "out", out, ref, 4 * n);
    h_end(h);
}

static void max_of_neg_case(H *h, int block, int warps, unsigned programs)
{
    if (!h_begin(h, "misc.max_of_neg.B%d.w%d", block, warps))
        return;
    tk_kernel *k = h_kernel(h, "misc.tk", "max_of_neg");
    void *dout = h_output(h, TK_I32, 2 * programs);
    h_launch(h, k, h_grid(programs, 1, 1), H_ARGS(tk_ptr(dout, TK_I32), tk_const("BLOCK", block)),
             warps);
    int64_t *out = h_download_int(h, TK_I32, dout, 2 * programs);
    int64_t *ref = h_malloc(h, 2 * programs * sizeof(int64_t));
    for (unsigned p = 0; p < programs; p++) {
        ref[2 * p] = -(int64_t)p * block;
        ref[2 * p + 1] = -((int64_t)p * block + block - 1) - p;
    }
    h_check_int(h, "out", out, ref, 2 * programs);
    h_end(h);
}

void cases_misc(H *h)
{
    size_t n = h->gpu ? 1000003 : 20011;
    hinted_case(h, n, 1024, 4);
    hinted_case(h, 4096, 256, 4);
    hinted_case(h, 100, 16, 4);
    creation_case(h, 5001, 4, 256);
    creation_case(h, 100, 0, 32);
    minmax_neg_case(h, TK_I32, 5003);
    minmax_neg_case(h, TK_I64, 1001);
    minmax_neg_case(h, TK_I16, 1001);
    for (int w = 1; w <= 8; w *= 2)
        max_of_neg_case(h, 1024, w, 3);
    max_of_neg_case(h, 128, 4, 5);
}
