/* cases_shape.c: expand_dims, [:, None], broadcast_to, reshape, trans, .T,
 * permute, join/split, cat and 3-D broadcasting, on shapes below, at and
 * above the thread count. Values are moved, not computed, so most checks are
 * exact; where one fp32 rounding happens the tolerance is 2^-23. */
#include "harness.h"

static void outer_case(H *h, int bm, int bn, int warps)
{
    if (!h_begin(h, "shape.outer_broadcast.%dx%d.w%d", bm, bn, warps))
        return;
    tk_kernel *k = h_kernel(h, "shape.tk", "outer");
    double *a = h_rand_array(h, TK_F32, bm, -2, 2), *b = h_rand_array(h, TK_F32, bn, -2, 2);
    void *da = h_upload(h, TK_F32, a, bm), *db = h_upload(h, TK_F32, b, bn);
    void *dy = h_output(h, TK_F32, (size_t)bm * bn);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(da, TK_F32), tk_ptr(db, TK_F32), tk_ptr(dy, TK_F32), tk_const("BM", bm),
                    tk_const("BN", bn)),
             warps);
    double *y = h_download(h, TK_F32, dy, (size_t)bm * bn);
    double *ref = h_malloc(h, (size_t)bm * bn * sizeof(double));
    for (int i = 0; i < bm; i++)
        for (int j = 0; j < bn; j++)
            ref[i * bn + j] = a[i] * b[j] + a[i];
    h_check(h, "y", y, ref, (size_t)bm * bn, 2.4e-7);
    h_end(h);
}

static void reshape_trans_case(H *h, int bm, int bn, int warps)
{
    if (!h_begin(h, "shape.reshape_trans_permute.%dx%d.w%d", bm, bn, warps))
        return;
    size_t n = (size_t)bm * bn;
    tk_kernel *k = h_kernel(h, "shape.tk", "reshape_trans");
    double *x = h_rand_array(h, TK_F32, n, -100, 100);
    void *dx = h_upload(h, TK_F32, x, n);
    void *dy = h_output(h, TK_F32, n), *dz = h_output(h, TK_F32, n), *dw = h_output(h, TK_F32, n);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_ptr(dz, TK_F32), tk_ptr(dw, TK_F32),
                    tk_const("BM", bm), tk_const("BN", bn)),
             warps);
    double *y = h_download(h, TK_F32, dy, n), *z = h_download(h, TK_F32, dz, n);
    double *w = h_download(h, TK_F32, dw, n);
    double *ry = h_malloc(h, n * sizeof(double)), *rz = h_malloc(h, n * sizeof(double));
    double *rw = h_malloc(h, n * sizeof(double));
    for (int i = 0; i < bm; i++)
        for (int j = 0; j < bn; j++) {
            double v = x[(size_t)i * bn + j];
            ry[(size_t)j * bm + i] = v;
            rz[(size_t)j * bm + i] = (float)(v + 1.0);
            rw[(size_t)j * bm + i] = 2 * v;
        }
    h_check(h, "trans", y, ry, n, 0);
    h_check(h, ".T + 1", z, rz, n, 0);
    h_check(h, "permute * 2", w, rw, n, 0);
    h_end(h);
}

static void join_split_case(H *h, int block, int warps)
{
    if (!h_begin(h, "shape.join_split.B%d.w%d", block, warps))
        return;
    tk_kernel *k = h_kernel(h, "shape.tk", "join_split");
    double *a = h_rand_array(h, TK_F32, block, -5, 5), *b = h_rand_array(h, TK_F32, block, -5, 5);
    double *c = h_rand_array(h, TK_F32, 2 * (size_t)block, -5, 5);
    void *da = h_upload(h, TK_F32, a, block), *db = h_upload(h, TK_F32, b, block);
    void *dc = h_upload(h, TK_F32, c, 2 * (size_t)block);
    void *di = h_output(h, TK_F32, 2 * (size_t)block), *de = h_output(h, TK_F32, block);
    void *dodd = h_output(h, TK_F32, block), *dd = h_output(h, TK_F32, block);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(da, TK_F32), tk_ptr(db, TK_F32), tk_ptr(dc, TK_F32), tk_ptr(di, TK_F32),
                    tk_ptr(de, TK_F32), tk_ptr(dodd, TK_F32), tk_ptr(dd, TK_F32),
                    tk_const("BLOCK", block)),
             warps);
    double *inter = h_download(h, TK_F32, di, 2 * (size_t)block);
    double *even = h_download(h, TK_F32, de, block), *odd = h_download(h, TK_F32, dodd, block);
    double *diff = h_download(h, TK_F32, dd, block);
    double *ri = h_malloc(h, 2 * block * sizeof(double)), *re = h_malloc(h, block * sizeof(double));
    double *ro = h_malloc(h, block * sizeof(double)), *rd = h_malloc(h, block * sizeof(double));
    for (int i = 0; i < block; i++) {
        ri[2 * i] = a[i];
        ri[2 * i + 1] = b[i];
        re[i] = c[2 * i];
        ro[i] = c[2 * i + 1];
        rd[i] = (float)(c[2 * i] - c[2 * i + 1]);
    }
    h_check(h, "join", inter, ri, 2 * (size_t)block, 0);
    h_check(h, "split even", even, re, block, 0);
    h_check(h, "split odd", odd, ro, block, 0);
    h_check(h, "split(reshape) even - odd", diff, rd, block, 0);
    h_end(h);
}

/* Sum of 2 BLOCK fp32 values in any order: rel err within 2 BLOCK u. */
static void cat_case(H *h, int block, int warps)
{
    if (!h_begin(h, "shape.cat.B%d.w%d", block, warps))
        return;
    tk_kernel *k = h_kernel(h, "shape.tk", "cat_reduce");
    double *a = h_rand_array(h, TK_F32, block, 0.5, 3),
           *b = h_rand_array(h, TK_F32, block, -3, -0.5);
    void *da = h_upload(h, TK_F32, a, block), *db = h_upload(h, TK_F32, b, block);
    void *dout = h_output(h, TK_F32, 3);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(da, TK_F32), tk_ptr(db, TK_F32), tk_ptr(dout, TK_F32),
                    tk_const("BLOCK", block)),
             warps);
    double *out = h_download(h, TK_F32, dout, 3);
    double s = 0, mx = a[0], mn = b[0], sa = 0;
    for (int i = 0; i < block; i++) {
        s += a[i] + b[i];
        sa += a[i] - b[i];
        mx = a[i] > mx ? a[i] : mx;
        mn = b[i] < mn ? b[i] : mn;
    }
    double ref_max[2] = {mx, mn};
    /* The sum cancels; bound its error by the sum of magnitudes. */
    h_expect(h, out[0] == out[0] && (out[0] - s < 1e-6 * sa && s - out[0] < 1e-6 * sa),
             "sum(cat) = %.9g, expected %.9g", out[0], s);
    h_check(h, "max, min of cat", out + 1, ref_max, 2, 0);
    h_end(h);
}

static void bcast3d_case(H *h, int A, int B, int C, int warps)
{
    if (!h_begin(h, "shape.broadcast3d.%dx%dx%d.w%d", A, B, C, warps))
        return;
    size_t n = (size_t)A * B * C;
    tk_kernel *k = h_kernel(h, "shape.tk", "bcast3d");
    double *a = h_rand_array(h, TK_F32, A, 0, 9), *b = h_rand_array(h, TK_F32, B, 0, 9);
    double *c = h_rand_array(h, TK_F32, C, 0, 9);
    for (int i = 0; i < A; i++)
        a[i] = (int)a[i] + 1; /* small integers: exact sums */
    for (int i = 0; i < B; i++)
        b[i] = (int)b[i] + 1;
    for (int i = 0; i < C; i++)
        c[i] = (int)c[i] + 1;
    void *da = h_upload(h, TK_F32, a, A), *db = h_upload(h, TK_F32, b, B);
    void *dc = h_upload(h, TK_F32, c, C), *dy = h_output(h, TK_F32, n);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(da, TK_F32), tk_ptr(db, TK_F32), tk_ptr(dc, TK_F32), tk_ptr(dy, TK_F32),
                    tk_const("A", A), tk_const("B", B), tk_const("C", C)),
             warps);
    double *y = h_download(h, TK_F32, dy, n);
    double *ref = h_malloc(h, n * sizeof(double));
    for (int i = 0; i < A; i++)
        for (int j = 0; j < B; j++)
            for (int l = 0; l < C; l++)
                ref[((size_t)i * B + j) * C + l] = a[i] + 10 * b[j] + 100 * c[l];
    h_check(h, "y", y, ref, n, 0);
    h_end(h);
}

void cases_shape(H *h)
{
    outer_case(h, 16, 32, 4);
    outer_case(h, 4, 4, 4);    /* 16 elements over 128 threads */
    outer_case(h, 64, 128, 4); /* 64 per thread */
    outer_case(h, 1, 64, 2);
    reshape_trans_case(h, 16, 32, 4);
    reshape_trans_case(h, 4, 8, 4);
    reshape_trans_case(h, 64, 64, 8);
    reshape_trans_case(h, 128, 2, 4);
    join_split_case(h, 64, 4);
    join_split_case(h, 8, 4);
    join_split_case(h, 1024, 4);
    cat_case(h, 32, 4);
    cat_case(h, 512, 4);
    reshape_trans_case(h, 64, 64, 1);
    reshape_trans_case(h, 32, 128, 16);
    join_split_case(h, 256, 8);
    join_split_case(h, 32, 1);
    if (h->gpu) {
        reshape_trans_case(h, 256, 128, 4);
        outer_case(h, 256, 256, 8);
    }
    bcast3d_case(h, 4, 8, 16, 4);
    bcast3d_case(h, 2, 2, 2, 1);
}
