/* cases_gather.c: tl.gather along either axis of 2-D tiles and of 1-D
 * blocks, for float, bf16, 64-bit, 8-bit and boolean sources and indices of
 * several widths, with indices outside src (negative or past the end) that
 * give 0; tl.histogram of signed and unsigned inputs of every width with
 * values outside the bins, a mask, blocks smaller than the CTA (elements
 * held by several threads are counted once) and more bins than values.
 * Values are moved or counted, never computed, so every check is exact. */
#include "harness.h"

/* n indices in [-2, len + 2): about 4 in len + 4 fall outside src. */
static int64_t *rand_index(H *h, size_t n, int len)
{
    int64_t *ix = h_malloc(h, n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++)
        ix[i] = h_randint(h, -2, len + 1);
    return ix;
}

/* n source values of dtype t: integers of its range, floats in [-100, 100]. */
static double *rand_src(H *h, tk_dtype t, size_t n)
{
    bool u = t == TK_U8 || t == TK_U16 || t == TK_U32 || t == TK_U64;
    return h_rand_array(h, t, n, u ? 1 : -100, u ? 200 : 100);
}

/* y[r, c] = x at (r, c) with the coordinate along axis replaced by ix[r, c],
 * 0 outside; x is sm x sn, ix and y im x in. */
static double *gather_ref(H *h, const double *x, const int64_t *ix, int sn, int im, int in,
                          int axis, int len)
{
    double *y = h_malloc(h, (size_t)im * in * sizeof(double));
    for (int r = 0; r < im; r++)
        for (int c = 0; c < in; c++) {
            int64_t k = ix[(size_t)r * in + c];
            size_t at = axis ? (size_t)r * sn + (size_t)k : (size_t)k * sn + c;
            y[(size_t)r * in + c] = k >= 0 && k < len ? x[at] : 0;
        }
    return y;
}

/* Runs gather.tk's `kernel` (x: a t tile sm x sn, ix: a ti tile im x in;
 * dims = sm, sn, im, in, axis) and returns what it wrote. */
static double *run_gather_2d(H *h, const char *kernel, tk_dtype t, tk_dtype ti, const double *x,
                             const int64_t *ix, const int dims[5], int warps)
{
    size_t ns = (size_t)dims[0] * dims[1], ni = (size_t)dims[2] * dims[3];
    void *dx = h_upload(h, t, x, ns), *di = h_upload_int(h, ti, ix, ni);
    void *dy = h_output(h, t, ni);
    h_launch(h, h_kernel(h, "gather.tk", kernel), h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, t), tk_ptr(di, ti), tk_ptr(dy, t), tk_const("SM", dims[0]),
                    tk_const("SN", dims[1]), tk_const("IM", dims[2]), tk_const("IN", dims[3]),
                    tk_const("AXIS", dims[4])),
             warps);
    return h_download(h, t, dy, ni);
}

/* A gather of a t tile (sm x sn) by a ti index tile whose dim along axis
 * is `len_i`. */
static void gather_case(H *h, tk_dtype t, tk_dtype ti, int sm, int sn, int axis, int len_i,
                        int warps)
{
    int im = axis ? sm : len_i, in = axis ? len_i : sn, len = axis ? sn : sm;
    if (!h_begin(h, "gather.%s_by_%s.%dx%d.axis%d.%dx%d.w%d", h_dtype_name(t), h_dtype_name(ti), sm,
                 sn, axis, im, in, warps))
        return;
    size_t ns = (size_t)sm * sn, ni = (size_t)im * in;
    double *x = rand_src(h, t, ns);
    int64_t *ix = rand_index(h, ni, len);
    const int dims[5] = {sm, sn, im, in, axis};
    double *y = run_gather_2d(h, "gather_2d", t, ti, x, ix, dims, warps);
    h_check(h, "gather", y, gather_ref(h, x, ix, sn, im, in, axis, len), ni, 0);
    h_end(h);
}

/* 1-D: s source elements, i indices (i may be below the thread count). */
static void gather_1d_case(H *h, tk_dtype t, tk_dtype ti, int s, int i, int warps)
{
    if (!h_begin(h, "gather.1d_%s_by_%s.S%d.I%d.w%d", h_dtype_name(t), h_dtype_name(ti), s, i,
                 warps))
        return;
    tk_kernel *k = h_kernel(h, "gather.tk", "gather_1d");
    double *x = rand_src(h, t, (size_t)s);
    int64_t *ix = rand_index(h, (size_t)i, s);
    void *dx = h_upload(h, t, x, (size_t)s), *di = h_upload_int(h, ti, ix, (size_t)i);
    void *dy = h_output(h, t, (size_t)i);
    h_launch(
        h, k, h_grid(1, 1, 1),
        H_ARGS(tk_ptr(dx, t), tk_ptr(di, ti), tk_ptr(dy, t), tk_const("S", s), tk_const("I", i)),
        warps);
    double *y = h_download(h, t, dy, (size_t)i);
    h_check(h, "gather", y, gather_ref(h, x, ix, s, 1, i, 1, s), (size_t)i, 0);
    h_end(h);
}

static void gather_bool_case(H *h, int sm, int sn, int axis, int len_i, int warps)
{
    int im = axis ? sm : len_i, in = axis ? len_i : sn, len = axis ? sn : sm;
    if (!h_begin(h, "gather.bool.%dx%d.axis%d.%dx%d.w%d", sm, sn, axis, im, in, warps))
        return;
    size_t ns = (size_t)sm * sn, ni = (size_t)im * in;
    double *x = h_rand_array(h, TK_I32, ns, -9, 9);
    int64_t *ix = rand_index(h, ni, len);
    const int dims[5] = {sm, sn, im, in, axis};
    double *y = run_gather_2d(h, "gather_bool", TK_I32, TK_I32, x, ix, dims, warps);
    for (size_t j = 0; j < ns; j++)
        x[j] = x[j] > 0;
    h_check(h, "gather of x > 0", y, gather_ref(h, x, ix, sn, im, in, axis, len), ni, 0);
    h_end(h);
}

/* Counts of 0..bins-1 among the first n of b values in [lo, hi]. */
static void histogram_case(H *h, tk_dtype t, int b, int n, int bins, int64_t lo, int64_t hi,
                           int warps)
{
    if (!h_begin(h, "histogram.%s.B%d.n%d.bins%d.w%d", h_dtype_name(t), b, n, bins, warps))
        return;
    tk_kernel *k = h_kernel(h, "gather.tk", "histogram");
    int64_t *x = h_malloc(h, (size_t)b * sizeof(int64_t));
    int64_t *ref = h_malloc(h, (size_t)bins * sizeof(int64_t));
    for (int i = 0; i < b; i++) {
        x[i] = h_randint(h, lo, hi);
        if (i < n && x[i] >= 0 && x[i] < bins)
            ref[x[i]]++;
    }
    void *dx = h_upload_int(h, t, x, (size_t)b), *dh = h_output(h, TK_I32, (size_t)bins);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, t), tk_ptr(dh, TK_I32), tk_i32(n), tk_const("B", b),
                    tk_const("BINS", bins)),
             warps);
    h_check_int(h, "counts", h_download_int(h, TK_I32, dh, (size_t)bins), ref, (size_t)bins);
    h_end(h);
}

/* steps blocks of b values, each counted twice (unmasked, and under a
 * mask that always holds). */
static void histogram_loop_case(H *h, int b, int bins, int steps, int warps)
{
    if (!h_begin(h, "histogram.loop.B%d.bins%d.x%d.w%d", b, bins, steps, warps))
        return;
    size_t n = (size_t)b * steps;
    tk_kernel *k = h_kernel(h, "gather.tk", "histogram_loop");
    int64_t *x = h_malloc(h, n * sizeof(int64_t));
    int64_t *ref = h_malloc(h, (size_t)bins * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        x[i] = h_randint(h, -4, bins + 3);
        if (x[i] >= 0 && x[i] < bins)
            ref[x[i]] += 2;
    }
    void *dx = h_upload_int(h, TK_I32, x, n), *dh = h_output(h, TK_I32, (size_t)bins);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, TK_I32), tk_ptr(dh, TK_I32), tk_const("B", b),
                    tk_const("BINS", bins), tk_const("STEPS", steps)),
             warps);
    h_check_int(h, "counts", h_download_int(h, TK_I32, dh, (size_t)bins), ref, (size_t)bins);
    h_end(h);
}

void cases_gather(H *h)
{
    gather_case(h, TK_F32, TK_I32, 16, 256, 1, 256, 4); /* the corpus' permuted rows, taller */
    gather_case(h, TK_BF16, TK_I32, 2, 256, 1, 256, 4);
    gather_case(h, TK_F32, TK_I32, 8, 32, 0, 16, 4); /* an index taller than src */
    gather_case(h, TK_F32, TK_I64, 32, 8, 0, 4, 4);
    gather_case(h, TK_I64, TK_I16, 4, 64, 1, 16, 4);
    gather_case(h, TK_I8, TK_U8, 4, 8, 1, 8, 4); /* 32 elements on 128 threads */
    gather_case(h, TK_F16, TK_I32, 64, 64, 0, 64, 8);
    gather_1d_case(h, TK_F32, TK_I32, 32, 32, 4);
    gather_1d_case(h, TK_U16, TK_I8, 64, 8, 1);
    gather_1d_case(h, TK_F64, TK_U32, 1024, 2048, 4);
    gather_bool_case(h, 4, 8, 0, 4, 4);
    gather_bool_case(h, 16, 64, 1, 64, 2);
    histogram_case(h, TK_I32, 2048, 2000, 256, -8, 263, 4); /* the corpus' tile, a ragged end */
    histogram_case(h, TK_I32, 32, 32, 16, -2, 17, 4);       /* 32 values on 128 threads */
    histogram_case(h, TK_I16, 8, 6, 4, -1, 5, 1);
    histogram_case(h, TK_U8, 1024, 1024, 128, 0, 255, 4);
    histogram_case(h, TK_I8, 256, 200, 64, -128, 127, 4);
    histogram_case(h, TK_I64, 512, 512, 512, -600, 600, 8);
    histogram_case(h, TK_U32, 64, 64, 1024, 0, 1100, 4); /* more bins than values */
    histogram_loop_case(h, 128, 32, 3, 4);
}
