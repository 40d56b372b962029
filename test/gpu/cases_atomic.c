/* cases_atomic.c: atomic_add (fp32, i32), atomic_max/min (fp32 of both
 * signs, i32), atomic_xchg, atomic_cas (i32, i64), all masked where the
 * builtin takes a mask, plus scalar atomics, the returned old values, and
 * contended row scatters of fp32/fp16/bf16 (vector adds on sm_90).
 * Integer results are exact; fp32 sums depend on the order of the adds, so
 * they get the same 1e-5 as the conformance column sums. */
#include "harness.h"

static void hist_case(H *h, tk_dtype t, size_t n, int nbins, int block)
{
    if (!h_begin(h, "atomic.add_%s.n%zu.bins%d.B%d", h_dtype_name(t), n, nbins, block))
        return;
    tk_kernel *k = h_kernel(h, "atomic.tk", "atomic_hist");
    double *x = h_rand_array(h, t, n, -1000, 1000);
    double *idx = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        idx[i] = (double)h_randint(h, 0, nbins - 1);
    double *init = h_rand_array(h, t, nbins, -50, 50);
    void *dx = h_upload(h, t, x, n), *di = h_upload(h, TK_I32, idx, n);
    void *db = h_upload(h, t, init, nbins);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(db, t), tk_ptr(dx, t), tk_ptr(di, TK_I32), tk_i32((int)n),
                    tk_const("BLOCK", block)),
             4);
    double *bins = h_download(h, t, db, nbins);
    double *ref = h_malloc(h, nbins * sizeof(double));
    for (int b = 0; b < nbins; b++)
        ref[b] = init[b];
    for (size_t i = 0; i < n; i++)
        ref[(int)idx[i]] += x[i];
    h_check(h, "bins", bins, ref, nbins, t == TK_F32 ? 1e-5 : 0);
    h_end(h);
}

static void maxmin_case(H *h, tk_dtype t, size_t n, int nbins, int block)
{
    if (!h_begin(h, "atomic.max_min_%s.n%zu.bins%d.B%d", h_dtype_name(t), n, nbins, block))
        return;
    tk_kernel *k = h_kernel(h, "atomic.tk", "atomic_maxmin");
    double *x = h_rand_array(h, t, n, -1e4, 1e4);
    double *idx = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        idx[i] = (double)h_randint(h, 0, nbins - 1);
    /* Start values inside the range so some bins keep theirs. */
    double *mx0 = h_rand_array(h, t, nbins, -1e4, 1e4), *mn0 = h_rand_array(h, t, nbins, -1e4, 1e4);
    void *dx = h_upload(h, t, x, n), *di = h_upload(h, TK_I32, idx, n);
    void *dmx = h_upload(h, t, mx0, nbins), *dmn = h_upload(h, t, mn0, nbins);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dmx, t), tk_ptr(dmn, t), tk_ptr(dx, t), tk_ptr(di, TK_I32),
                    tk_i32((int)n), tk_const("BLOCK", block)),
             4);
    double *mx = h_download(h, t, dmx, nbins), *mn = h_download(h, t, dmn, nbins);
    double *rmx = h_malloc(h, nbins * sizeof(double)), *rmn = h_malloc(h, nbins * sizeof(double));
    for (int b = 0; b < nbins; b++) {
        rmx[b] = mx0[b];
        rmn[b] = mn0[b];
    }
    for (size_t i = 0; i < n; i++) {
        int b = (int)idx[i];
        rmx[b] = x[i] > rmx[b] ? x[i] : rmx[b];
        rmn[b] = x[i] < rmn[b] ? x[i] : rmn[b];
    }
    h_check(h, "max", mx, rmx, nbins, 0);
    h_check(h, "min", mn, rmn, nbins, 0);
    h_end(h);
}

static void old_case(H *h, tk_dtype t, size_t n, int block)
{
    if (!h_begin(h, "atomic.old_values_add_xchg_%s.n%zu.B%d", h_dtype_name(t), n, block))
        return;
    tk_kernel *k = h_kernel(h, "atomic.tk", "atomic_old");
    double *x = h_rand_array(h, t, n, -100, 100);
    double *acc0 = h_rand_array(h, t, n + 5, -100, 100),
           *sw0 = h_rand_array(h, t, n + 5, -100, 100);
    void *dx = h_upload(h, t, x, n);
    void *dacc = h_upload(h, t, acc0, n + 5), *dsw = h_upload(h, t, sw0, n + 5);
    void *doa = h_output(h, t, n), *dos = h_output(h, t, n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dacc, t), tk_ptr(dsw, t), tk_ptr(dx, t), tk_ptr(doa, t), tk_ptr(dos, t),
                    tk_i32((int)n), tk_const("BLOCK", block)),
             4);
    double *acc = h_download(h, t, dacc, n + 5), *sw = h_download(h, t, dsw, n + 5);
    double *oa = h_download(h, t, doa, n), *os = h_download(h, t, dos, n);
    double *racc = h_malloc(h, (n + 5) * sizeof(double)),
           *rsw = h_malloc(h, (n + 5) * sizeof(double));
    for (size_t i = 0; i < n + 5; i++) {
        racc[i] = i < n ? h_round_to(t, acc0[i] + x[i]) : acc0[i];
        rsw[i] = i < n ? x[i] : sw0[i];
    }
    h_check(h, "acc (masked lanes past n untouched)", acc, racc, n + 5, 0);
    h_check(h, "old of add", oa, acc0, n, 0);
    h_check(h, "swapped (masked lanes past n untouched)", sw, rsw, n + 5, 0);
    h_check(h, "old of xchg", os, sw0, n, 0);
    h_end(h);
}

/* where_ptr: the ragged kernel that sends lanes past n to a sentinel slot
 * through tl.where on pointers; else n is a multiple of the block. */
static void cas_case(H *h, tk_dtype t, size_t n, int block, bool where_ptr)
{
    if (!h_begin(h, "atomic.cas%s_%s.n%zu.B%d", where_ptr ? "_where_ptr" : "", h_dtype_name(t), n,
                 block))
        return;
    tk_kernel *k = h_kernel(h, "atomic.tk", where_ptr ? "atomic_cas_lanes" : "atomic_cas_full");
    int64_t *acc0 = h_malloc(h, (n + 1) * sizeof(int64_t));
    int64_t *cmp = h_malloc(h, n * sizeof(int64_t)), *val = h_malloc(h, n * sizeof(int64_t));
    int64_t lim = t == TK_I64 ? (int64_t)1 << 60 : 1 << 30;
    for (size_t i = 0; i <= n; i++)
        acc0[i] = h_randint_nz(h, -lim, lim);
    for (size_t i = 0; i < n; i++) {
        cmp[i] = h_randint(h, 0, 1) ? acc0[i] : acc0[i] + 1;
        val[i] = h_randint_nz(h, -lim, lim);
    }
    void *dacc = h_upload_int(h, t, acc0, n + 1);
    void *dc = h_upload_int(h, t, cmp, n), *dv = h_upload_int(h, t, val, n);
    void *dold = h_output(h, t, n);
    if (where_ptr)
        h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
                 H_ARGS(tk_ptr(dacc, t), tk_ptr(dc, t), tk_ptr(dv, t), tk_ptr(dold, t),
                        tk_i32((int)n), tk_const("BLOCK", block)),
                 4);
    else
        h_launch(h, k, h_grid((unsigned)(n / block), 1, 1),
                 H_ARGS(tk_ptr(dacc, t), tk_ptr(dc, t), tk_ptr(dv, t), tk_ptr(dold, t),
                        tk_const("BLOCK", block)),
                 4);
    int64_t *acc = h_download_int(h, t, dacc, n + 1), *old = h_download_int(h, t, dold, n);
    int64_t *ref = h_malloc(h, (n + 1) * sizeof(int64_t));
    for (size_t i = 0; i <= n; i++)
        ref[i] = i < n && cmp[i] == acc0[i] ? val[i] : acc0[i];
    h_check_int(h, "acc (last: the sentinel)", acc, ref, n + 1);
    h_check_int(h, "old", old, acc0, n);
    h_end(h);
}

static void scalar_case(H *h, unsigned grid)
{
    if (!h_begin(h, "atomic.scalar_add_max.grid%u", grid))
        return;
    tk_kernel *k = h_kernel(h, "atomic.tk", "atomic_scalar");
    int64_t c0 = h_randint(h, 1, 100), m0 = -h_randint(h, 1, 100);
    void *dc = h_upload_int(h, TK_I32, &c0, 1), *dm = h_upload_int(h, TK_I32, &m0, 1);
    h_launch(h, k, h_grid(grid, 1, 1), H_ARGS(tk_ptr(dc, TK_I32), tk_ptr(dm, TK_I32)), 4);
    int64_t *c = h_download_int(h, TK_I32, dc, 1), *m = h_download_int(h, TK_I32, dm, 1);
    int64_t rc = c0 + grid, rm = 3 * (int64_t)(grid - 1);
    h_check_int(h, "count", c, &rc, 1);
    h_check_int(h, "max", m, &rm, 1);
    h_end(h);
}

/* Small integers, exact in every float dtype whatever the order of the
 * adds: at most 40 rows per target of |x| <= 3 (bf16 holds integers to 256). */
static double *small_ints(H *h, size_t n, int lo, int hi)
{
    double *v = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        v[i] = (double)h_randint(h, lo, hi);
    return v;
}

/* out[idx[r], :] += x[r, :] for n_rows rows of dim columns into ntarget
 * rows, 16 guard rows past them that must stay as they were. */
static void rows_case(H *h, tk_dtype t, bool relaxed, int n_rows, int dim, int ntarget)
{
    if (!h_begin(h, "atomic.rows%s_%s.rows%d.dim%d.targets%d", relaxed ? "_relaxed" : "",
                 h_dtype_name(t), n_rows, dim, ntarget))
        return;
    tk_kernel *k = h_kernel(h, "atomic.tk", relaxed ? "atomic_rows_relaxed" : "atomic_rows");
    size_t nx = (size_t)n_rows * dim, nout = (size_t)(ntarget + 16) * dim;
    double *x = small_ints(h, nx, -3, 3), *out0 = small_ints(h, nout, -10, 10);
    double *idx = h_malloc(h, (size_t)n_rows * sizeof(double));
    for (int r = 0; r < n_rows; r++)
        idx[r] = (double)h_randint(h, 0, ntarget - 1);
    void *dx = h_upload(h, t, x, nx), *di = h_upload(h, TK_I32, idx, (size_t)n_rows);
    void *dout = h_upload(h, t, out0, nout);
    int bm = 16, bn = 64;
    h_launch(h, k,
             h_grid((unsigned)h_cdiv((size_t)n_rows, bm), (unsigned)h_cdiv((size_t)dim, bn), 1),
             H_ARGS(tk_ptr(dout, t), tk_ptr(dx, t), tk_ptr(di, TK_I32), tk_i32(n_rows), tk_i32(dim),
                    tk_const("BM", bm), tk_const("BN", bn)),
             4);
    double *out = h_download(h, t, dout, nout);
    double *ref = h_malloc(h, nout * sizeof(double));
    for (size_t i = 0; i < nout; i++)
        ref[i] = out0[i];
    for (int r = 0; r < n_rows; r++)
        for (int c = 0; c < dim; c++)
            ref[(size_t)idx[r] * dim + c] += x[(size_t)r * dim + c];
    h_check(h, "out (guard rows untouched)", out, ref, nout, 0);
    h_end(h);
}

void cases_atomic(H *h)
{
    size_t n = h->gpu ? 1000003 : 5003;
    hist_case(h, TK_F32, n, 17, 256);
    hist_case(h, TK_I32, n, 17, 256);
    hist_case(h, TK_F32, 999, 1, 16);
    hist_case(h, TK_I32, 3001, 5, 1024);
    maxmin_case(h, TK_F32, n, 13, 128);
    maxmin_case(h, TK_I32, n, 13, 128);
    maxmin_case(h, TK_F32, 500, 200, 64);
    old_case(h, TK_F32, 1000, 128);
    old_case(h, TK_I32, 1000, 16);
    cas_case(h, TK_I32, 1024, 128, false);
    cas_case(h, TK_I64, 512, 64, false);
    cas_case(h, TK_I32, 1000, 128, true);
    cas_case(h, TK_I64, 777, 64, true);
    scalar_case(h, 37);
    scalar_case(h, h->gpu ? 5000 : 300);
    int rows = h->gpu ? 20000 : 300;
    rows_case(h, TK_F32, false, rows, 256, rows / 40); /* columns in 16-byte runs */
    rows_case(h, TK_F32, false, 301, 99, 8);           /* ragged: one column at a time */
    rows_case(h, TK_F32, true, rows, 256, rows / 40);
    rows_case(h, TK_F16, false, rows, 192, rows / 40);
    rows_case(h, TK_BF16, false, 301, 128, 8);
    rows_case(h, TK_F32, false, 1000, 64, 1); /* every row on one target */
}
