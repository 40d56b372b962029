/* cases_dot.c: tl.dot for fp16, bf16, fp32 (ieee and tf32), int8 -> int32,
 * with an accumulator, with trans, on square and rectangular shapes from
 * 16x16x16 to 64x64x64, and a tiled K loop ragged in every dimension.
 * Tolerances: products of fp16/bf16 are exact in fp32 and fp32 ieee ones
 * round once, so the error is the fp32 summation: ~sqrt(K) u relative,
 * bounded by 1e-5 for K <= 512. tf32 rounds both inputs to 11 significant
 * bits (2^-11 = 4.9e-4 each): ~7e-4 relative for random signs, bounded by
 * 2e-3. int8 is exact. An fp16 result adds one fp16 rounding (1e-3). */
#include "harness.h"

#include <stdio.h>
#include <string.h>

static double dot_tol(const char *kernel, tk_dtype t)
{
    if (t == TK_I8)
        return 0;
    if (strcmp(kernel, "dot_f16acc") == 0)
        return 4e-3; /* every partial sum rounds to fp16 */
    if (t == TK_F32 &&
        (strcmp(kernel, "dot_tile") == 0 || strcmp(kernel, "dot_tf32") == 0 ||
         strcmp(kernel, "dot_loop") == 0))
        return 2e-3;
    return 1e-5;
}

static void tile_case(H *h, const char *kernel, tk_dtype t, int m, int n, int k, int warps)
{
    if (!h_begin(h, "dot.%s_%s.%dx%dx%d.w%d", kernel, h_dtype_name(t), m, n, k, warps))
        return;
    bool acc_trans = strcmp(kernel, "dot_acc_trans") == 0;
    tk_dtype ct = t == TK_I8 ? TK_I32 : TK_F32;
    double lim = t == TK_I8 ? 127 : 1;
    tk_kernel *kk = h_kernel(h, "dot.tk", kernel);
    double *a = h_rand_array(h, t, (size_t)m * k, -lim, lim);
    double *b = h_rand_array(h, t, (size_t)k * n, -lim, lim);
    double *acc = acc_trans ? h_rand_array(h, ct, (size_t)m * n, -4, 4) : NULL;
    void *da = h_upload(h, t, a, (size_t)m * k), *db = h_upload(h, t, b, (size_t)k * n);
    void *dc = acc ? h_upload(h, ct, acc, (size_t)m * n) : h_output(h, ct, (size_t)m * n);
    h_launch(h, kk, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(da, t), tk_ptr(db, t), tk_ptr(dc, ct), tk_const("BM", m),
                    tk_const("BN", n), tk_const("BK", k)),
             warps);
    double *c = h_download(h, ct, dc, (size_t)m * n);
    double *ref = h_matmul_ref(h, a, b, acc, m, n, k, acc_trans);
    h_check(h, "c", c, ref, (size_t)m * n, dot_tol(kernel, t));
    h_end(h);
}

/* dot_loop, or with colmajor dot_loop_colmajor, whose c is stored
 * transposed (checked after transposing it back). */
static void loop_case(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk, int warps,
                      bool colmajor)
{
    const char *kernel = colmajor ? "dot_loop_colmajor" : "dot_loop";
    if (!h_begin(h, "dot.%s_%s.%dx%dx%d.B%dx%dx%d.w%d", kernel + 4, h_dtype_name(t), m, n, k, bm,
                 bn, bk, warps))
        return;
    tk_kernel *kk = h_kernel(h, "dot.tk", kernel);
    double *a = h_rand_array(h, t, (size_t)m * k, -1, 1);
    double *b = h_rand_array(h, t, (size_t)k * n, -1, 1);
    void *da = h_upload(h, t, a, (size_t)m * k), *db = h_upload(h, t, b, (size_t)k * n);
    void *dc = h_output(h, t, (size_t)m * n);
    h_launch(h, kk, h_grid((unsigned)h_cdiv(m, bm), (unsigned)h_cdiv(n, bn), 1),
             H_ARGS(tk_ptr(da, t), tk_ptr(db, t), tk_ptr(dc, t), tk_i32(m), tk_i32(n), tk_i32(k),
                    tk_const("BM", bm), tk_const("BN", bn), tk_const("BK", bk)),
             warps);
    double *c = h_download(h, t, dc, (size_t)m * n);
    double *ref = h_matmul_ref(h, a, b, NULL, m, n, k, false);
    double *rows = colmajor ? h_malloc(h, sizeof *rows * (size_t)m * n) : c;
    for (int i = 0; colmajor && c && rows && i < m; i++)
        for (int j = 0; j < n; j++)
            rows[(size_t)i * n + j] = c[(size_t)j * m + i];
    /* the output's own rounding: 2^-11 (fp16) or 2^-8 (bf16) of each element */
    double tol = t == TK_F16 ? 1e-3 : t == TK_BF16 ? 8e-3 : dot_tol("dot_loop", t);
    h_check(h, "c", c ? rows : NULL, ref, (size_t)m * n, tol);
    h_end(h);
}

/* dot_batched: nb products of one 3-D tl.dot, each checked against its
 * own reference so a product reading another batch's operand fails. */
static void batched_case(H *h, tk_dtype t, int nb, int m, int n, int k, int warps)
{
    if (!h_begin(h, "dot.batched_%s.%dx%dx%dx%d.w%d", h_dtype_name(t), nb, m, n, k, warps))
        return;
    tk_kernel *kk = h_kernel(h, "dot.tk", "dot_batched");
    size_t na = (size_t)m * k, nbb = (size_t)k * n, nc = (size_t)m * n;
    double *a = h_rand_array(h, t, na * nb, -1, 1);
    double *b = h_rand_array(h, t, nbb * nb, -1, 1);
    void *da = h_upload(h, t, a, na * nb), *db = h_upload(h, t, b, nbb * nb);
    void *dc = h_output(h, TK_F32, nc * nb);
    h_launch(h, kk, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(da, t), tk_ptr(db, t), tk_ptr(dc, TK_F32), tk_const("NB", nb),
                    tk_const("BM", m), tk_const("BN", n), tk_const("BK", k)),
             warps);
    double *c = h_download(h, TK_F32, dc, nc * nb);
    for (int i = 0; a && b && c && i < nb; i++) {
        double *ref = h_matmul_ref(h, a + na * i, b + nbb * i, NULL, m, n, k, false);
        h_check(h, "c", c + nc * i, ref, nc, dot_tol("dot_batched", t));
    }
    h_end(h);
}

/* dot_gemm: C = A @ B with B stored [K, N] or, when bt, [N, K] (read through
 * strides, a transposed operand), over a K loop of `stages` stages. */
static void gemm_case_acc(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk, int warps,
                          int stages, bool bt, bool f16acc)
{
    if (!h_begin(h, "dot.gemm_%s%s%s.%dx%dx%d.B%dx%dx%d.w%d.s%d", h_dtype_name(t), bt ? "_bt" : "",
                 f16acc ? "_f16acc" : "", m, n, k, bm, bn, bk, warps, stages))
        return;
    tk_kernel *kk = h_kernel(h, "dot.tk", "dot_gemm");
    double *a = h_rand_array(h, t, (size_t)m * k, -1, 1);
    double *b = h_rand_array(h, t, (size_t)k * n, -1, 1);
    void *da = h_upload(h, t, a, (size_t)m * k), *db = h_upload(h, t, b, (size_t)k * n);
    void *dc = h_output(h, t, (size_t)m * n);
    int s_bk = bt ? 1 : n, s_bn = bt ? k : 1;
    h_launch(h, kk, h_grid((unsigned)h_cdiv(m, bm), (unsigned)h_cdiv(n, bn), 1),
             H_ARGS(tk_ptr(da, t), tk_ptr(db, t), tk_ptr(dc, t), tk_i32(m), tk_i32(n), tk_i32(k),
                    tk_i32(k), tk_i32(1), tk_i32(s_bk), tk_i32(s_bn), tk_i32(n), tk_i32(1),
                    tk_const("BM", bm), tk_const("BN", bn), tk_const("BK", bk),
                    tk_const("NS", stages), tk_const("F16ACC", f16acc)),
             warps);
    double *c = h_download(h, t, dc, (size_t)m * n);
    double *ref = h_matmul_ref(h, a, b, NULL, m, n, k, bt);
    /* fp16/bf16 outputs round once; fp32 inputs run as tf32; an fp16
     * accumulator rounds every partial sum (~sqrt(K / 16) halves' ulps) */
    double tol = f16acc ? 1e-2 : t == TK_F16 ? 1e-3 : t == TK_BF16 ? 8e-3 : 2e-3;
    h_check(h, "c", c, ref, (size_t)m * n, tol);
    h_end(h);
}

static void gemm_case(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk, int warps,
                      int stages, bool bt)
{
    gemm_case_acc(h, t, m, n, k, bm, bn, bk, warps, stages, bt, false);
}

/* Tiles whose stages do not fit in a program's shared memory (6 stages of
 * 128x64 and 64x256 fp16 tiles: 288 KB) are refused at launch with a
 * message that says so, and the context stays usable. */
static void gemm_too_big_case(H *h)
{
    if (!h->gpu || !h_begin(h, "dot.gemm_shared_too_big.B128x256x64.s6"))
        return;
    const int m = 256, n = 256, k = 512;
    tk_kernel *kk = h_kernel(h, "dot.tk", "dot_gemm");
    void *da = h_output(h, TK_F16, (size_t)m * k), *db = h_output(h, TK_F16, (size_t)k * n);
    void *dc = h_output(h, TK_F16, (size_t)m * n);
    char why[700] = "";
    tk_status s = TK_ERR_INVALID;
    if (!h->failed && kk)
        s = h_launch_status(h, kk, h_grid(2, 1, 1),
                            H_ARGS(tk_ptr(da, TK_F16), tk_ptr(db, TK_F16), tk_ptr(dc, TK_F16),
                                   tk_i32(m), tk_i32(n), tk_i32(k), tk_i32(k), tk_i32(1), tk_i32(n),
                                   tk_i32(1), tk_i32(n), tk_i32(1), tk_const("BM", 128),
                                   tk_const("BN", 256), tk_const("BK", 64), tk_const("NS", 6)),
                            8, why, sizeof why);
    h_expect(h, s == TK_ERR_LAUNCH, "launch gave %s, not TK_ERR_LAUNCH: %s", tk_status_name(s),
             why);
    h_expect(h, strstr(why, "bytes of shared memory") != NULL,
             "the error does not say the shared memory is too small: %s", why);
    /* and which buffers take it: the rings of A and B, by their loads' lines */
    h_expect(h, strstr(why, "taken by: ring of the load at line") != NULL,
             "the error does not name the buffers: %s", why);
    h_end(h);
}

static void gemm_cases(H *h)
{
    gemm_too_big_case(h);
    /* odd M and N (partial tiles), 16-aligned strides so the copies run */
    gemm_case(h, TK_F16, 83, 80, 64, 64, 64, 32, 4, 3, false);
    gemm_case(h, TK_F16, 64, 48, 64, 32, 32, 16, 4, 2, true);
    gemm_case(h, TK_F16, 32, 32, 32, 32, 32, 32, 4, 3, false); /* one K iteration */
    gemm_case(h, TK_BF16, 48, 80, 96, 32, 64, 32, 4, 4, false);
    gemm_case(h, TK_F32, 40, 48, 64, 32, 32, 16, 4, 3, false);
    gemm_case(h, TK_F32, 40, 48, 64, 32, 32, 16, 4, 3, true);
    if (!h->gpu)
        return;
    gemm_case(h, TK_F16, 333, 208, 512, 128, 128, 32, 4, 4, false);
    gemm_case(h, TK_F16, 200, 192, 256, 128, 64, 64, 4, 3, true);
    gemm_case(h, TK_BF16, 256, 208, 320, 128, 256, 64, 8, 3, false);
    gemm_case(h, TK_F16, 128, 128, 32, 128, 128, 32, 8, 3, false);
    gemm_case(h, TK_F32, 130, 144, 96, 64, 64, 32, 4, 2, false);
    gemm_case(h, TK_BF16, 300, 176, 1024, 64, 128, 64, 4, 4, true);
    /* fp16 accumulators: wgmma's f16 form on sm_90a, in a pipelined loop */
    gemm_case_acc(h, TK_F16, 200, 264, 256, 64, 128, 64, 4, 3, false, true);
    gemm_case_acc(h, TK_F16, 256, 256, 256, 128, 128, 32, 8, 3, true, true);
}

/* dot_two_loops: the reference sums each K block's product P into C and
 * the row sums of P*P into l, halving l before each block of the second
 * loop, then divides C by l. A row vector carried from one loop into the
 * next must keep one layout in both. */
static void two_loops_ref(const double *a, const double *b, double *c, int bm, int bn, int bk,
                          int k1, int k2)
{
    int k = k1 + k2;
    for (int i = 0; i < bm; i++) {
        double l = 0, *row = c + (size_t)i * bn;
        memset(row, 0, sizeof *row * (size_t)bn);
        for (int k0 = 0; k0 < k; k0 += bk) {
            double sq = 0;
            for (int j = 0; j < bn; j++) {
                double p = 0;
                for (int q = k0; q < k0 + bk; q++)
                    p += a[(size_t)i * k + q] * b[(size_t)q * bn + j];
                row[j] += p;
                sq += p * p;
            }
            l = (k0 >= k1 ? l * 0.5 : l) + sq;
        }
        for (int j = 0; j < bn; j++)
            row[j] /= l;
    }
}

static void two_loops_case(H *h, int bm, int bn, int bk, int k1, int k2, int warps)
{
    if (!h_begin(h, "dot.two_loops.B%dx%dx%d.k%d+%d.w%d", bm, bn, bk, k1, k2, warps))
        return;
    tk_kernel *kk = h_kernel(h, "dot.tk", "dot_two_loops");
    int k = k1 + k2;
    double *a = h_rand_array(h, TK_F16, (size_t)bm * k, -1, 1);
    double *b = h_rand_array(h, TK_F16, (size_t)k * bn, -1, 1);
    void *da = h_upload(h, TK_F16, a, (size_t)bm * k), *db = h_upload(h, TK_F16, b, (size_t)k * bn);
    void *dc = h_output(h, TK_F32, (size_t)bm * bn);
    h_launch(h, kk, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(da, TK_F16), tk_ptr(db, TK_F16), tk_ptr(dc, TK_F32), tk_i32(k1),
                    tk_i32(k2), tk_const("BM", bm), tk_const("BN", bn), tk_const("BK", bk)),
             warps);
    double *c = h_download(h, TK_F32, dc, (size_t)bm * bn);
    double *ref = h_malloc(h, sizeof *ref * (size_t)bm * bn);
    if (ref) {
        two_loops_ref(a, b, ref, bm, bn, bk, k1, k2);
        h_check(h, "c", c, ref, (size_t)bm * bn, 1e-4);
    }
    h_end(h);
}

/* dot_two_acc over n_steps blocks of bm rows: P and dS are rounded to fp16
 * before their products, as the kernel casts them. */
static void two_acc_ref(const double *const in[5], double *dk, double *dv, int bn, int bm, int d,
                        int steps)
{
    const double *k = in[0], *v = in[1], *q = in[2], *dO = in[3], *m = in[4];
    memset(dk, 0, sizeof *dk * (size_t)bn * d);
    memset(dv, 0, sizeof *dv * (size_t)bn * d);
    for (int i = 0; i < bn; i++)
        for (int r = 0; r < bm * steps; r++) {
            double p = -m[r], dp = 0;
            for (int j = 0; j < d; j++) {
                p += k[(size_t)i * d + j] * q[(size_t)r * d + j];
                dp += v[(size_t)i * d + j] * dO[(size_t)r * d + j];
            }
            double p16 = h_round_to(TK_F16, p), ds16 = h_round_to(TK_F16, p * dp);
            for (int j = 0; j < d; j++) {
                dv[(size_t)i * d + j] += p16 * dO[(size_t)r * d + j];
                dk[(size_t)i * d + j] += ds16 * q[(size_t)r * d + j];
            }
        }
}

static void two_acc_case(H *h, int bn, int bm, int d, int steps, int warps)
{
    if (!h_begin(h, "dot.two_acc.B%dx%dx%d.s%d.w%d", bn, bm, d, steps, warps))
        return;
    tk_kernel *kk = h_kernel(h, "dot.tk", "dot_two_acc");
    size_t nk = (size_t)bn * d, nq = (size_t)bm * steps * d, nm = (size_t)bm * steps;
    double *in[5] = {h_rand_array(h, TK_F16, nk, -0.5, 0.5), h_rand_array(h, TK_F16, nk, -0.5, 0.5),
                     h_rand_array(h, TK_F16, nq, -0.5, 0.5), h_rand_array(h, TK_F16, nq, -0.5, 0.5),
                     h_rand_array(h, TK_F32, nm, -1, 1)};
    void *dev[5];
    for (int i = 0; i < 5; i++)
        dev[i] = h_upload(h, i < 4 ? TK_F16 : TK_F32, in[i], i < 2 ? nk : i < 4 ? nq : nm);
    void *ddk = h_output(h, TK_F32, nk), *ddv = h_output(h, TK_F32, nk);
    h_launch(h, kk, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dev[0], TK_F16), tk_ptr(dev[1], TK_F16), tk_ptr(dev[2], TK_F16),
                    tk_ptr(dev[3], TK_F16), tk_ptr(dev[4], TK_F32), tk_ptr(ddk, TK_F32),
                    tk_ptr(ddv, TK_F32), tk_i32(steps), tk_const("BN", bn), tk_const("BM", bm),
                    tk_const("D", d)),
             warps);
    double *dk = h_download(h, TK_F32, ddk, nk), *dv = h_download(h, TK_F32, ddv, nk);
    double *ref = h_malloc(h, sizeof *ref * nk * 2);
    if (ref) {
        two_acc_ref((const double *const *)in, ref, ref + nk, bn, bm, d, steps);
        h_check(h, "dk", dk, ref, nk, 1e-2);
        h_check(h, "dv", dv, ref + nk, nk, 1e-2);
    }
    h_end(h);
}

/* dot_grouped_dw: per group g, dw[g] = dy[rows of g]^T @ x[rows of g],
 * groups of 0, part of a block and several blocks of rows; fp16 integers
 * (exact). */
static void grouped_dw_case(H *h, int bm, int bn, int bk, int warps)
{
    enum { G = 4 };
    static const int64_t sizes[G] = {70, 0, 5, 130};
    if (!h_begin(h, "dot.grouped_dw.%dx%dx%d.w%d", bm, bn, bk, warps))
        return;
    tk_kernel *kk = h_kernel(h, "dot.tk", "dot_grouped_dw");
    int rows = 0;
    for (int g = 0; g < G; g++)
        rows += (int)sizes[g];
    double *x = h_malloc(h, sizeof *x * (size_t)rows * bk),
           *dy = h_malloc(h, sizeof *dy * (size_t)rows * bn);
    for (int i = 0; i < rows * bk; i++)
        x[i] = (double)h_randint(h, -3, 3);
    for (int i = 0; i < rows * bn; i++)
        dy[i] = (double)h_randint(h, -3, 3);
    void *dx = h_upload(h, TK_F16, x, (size_t)rows * bk),
         *ddy = h_upload(h, TK_F16, dy, (size_t)rows * bn), *ds = h_upload_int(h, TK_I32, sizes, G);
    size_t nw = (size_t)G * bn * bk;
    void *dw = h_output(h, TK_F32, nw);
    h_launch(h, kk, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F16), tk_ptr(ddy, TK_F16), tk_ptr(dw, TK_F32), tk_ptr(ds, TK_I32),
                    tk_const("G", G), tk_const("BM", bm), tk_const("BN", bn), tk_const("BK", bk)),
             warps);
    double *w = h_download(h, TK_F32, dw, nw), *ref = h_malloc(h, sizeof *ref * nw);
    for (int g = 0, r0 = 0; ref && g < G; r0 += (int)sizes[g++])
        for (int n = 0; n < bn; n++)
            for (int k = 0; k < bk; k++) {
                double s = 0;
                for (int r = r0; r < r0 + (int)sizes[g]; r++)
                    s += dy[(size_t)r * bn + n] * x[(size_t)r * bk + k];
                ref[((size_t)g * bn + n) * bk + k] = s;
            }
    if (ref)
        h_check(h, "dw", w, ref, nw, 0);
    h_end(h);
}

/* dot_trans_a: x (t, BN x BK) transposed times g (fp32, BN x BM), tf32. */
static void trans_a_case(H *h, tk_dtype t, int bn, int bk, int bm, int warps)
{
    if (!h_begin(h, "dot.trans_a_%s.%dx%dx%d.w%d", h_dtype_name(t), bk, bm, bn, warps))
        return;
    tk_kernel *kk = h_kernel(h, "dot.tk", "dot_trans_a");
    double *x = h_rand_array(h, t, (size_t)bn * bk, -1, 1);
    double *g = h_rand_array(h, TK_F32, (size_t)bn * bm, -1, 1);
    double *xt = h_malloc(h, sizeof *xt * (size_t)bn * bk);
    for (int i = 0; x && xt && i < bn; i++)
        for (int j = 0; j < bk; j++)
            xt[(size_t)j * bn + i] = x[(size_t)i * bk + j];
    void *dx = h_upload(h, t, x, (size_t)bn * bk), *dg = h_upload(h, TK_F32, g, (size_t)bn * bm);
    void *dc = h_output(h, TK_F32, (size_t)bk * bm);
    h_launch(h, kk, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, t), tk_ptr(dg, TK_F32), tk_ptr(dc, TK_F32), tk_const("BN", bn),
                    tk_const("BK", bk), tk_const("BM", bm)),
             warps);
    double *c = h_download(h, TK_F32, dc, (size_t)bk * bm);
    double *ref = h_matmul_ref(h, xt, g, NULL, bk, bm, bn, false);
    h_check(h, "c", c, ref, (size_t)bk * bm, 2e-3);
    h_end(h);
}

void cases_dot(H *h)
{
    gemm_cases(h);
    static const int shapes[][3] = {{16, 16, 16}, {32, 32, 32}, {64, 64, 64}, {16, 64, 32},
                                    {64, 16, 32}, {32, 16, 64}, {16, 32, 16}};
    for (int i = 0; i < 7; i++)
        tile_case(h, "dot_tile", TK_F16, shapes[i][0], shapes[i][1], shapes[i][2], 4);
    for (int i = 0; i < 7; i += 2) {
        tile_case(h, "dot_tile", TK_BF16, shapes[i][0], shapes[i][1], shapes[i][2], 4);
        tile_case(h, "dot_ieee", TK_F32, shapes[i][0], shapes[i][1], shapes[i][2], 4);
    }
    /* int8 needs K >= 32 in Triton 3.6 (the int8 MMA's K). */
    static const int int8_shapes[][3] = {{16, 16, 32}, {64, 64, 64}, {64, 16, 32}, {16, 32, 64}};
    for (int i = 0; i < 4; i++)
        tile_case(h, "dot_int8", TK_I8, int8_shapes[i][0], int8_shapes[i][1], int8_shapes[i][2], 4);
    tile_case(h, "dot_tile", TK_F32, 32, 32, 32, 4);
    tile_case(h, "dot_tf32", TK_F32, 64, 32, 16, 4);
    tile_case(h, "dot_tile", TK_F16, 16, 16, 16, 1);
    tile_case(h, "dot_tile", TK_F16, 64, 64, 64, 8);
    tile_case(h, "dot_tile", TK_F16, 64, 64, 64, 2);
    tile_case(h, "dot_tile", TK_F16, 64, 64, 64, 16);
    tile_case(h, "dot_ieee", TK_F32, 32, 64, 32, 1);
    if (h->gpu) {
        tile_case(h, "dot_tile", TK_F16, 128, 128, 64, 4);
        tile_case(h, "dot_ieee", TK_F32, 128, 64, 128, 8);
        tile_case(h, "dot_tf32", TK_F32, 32, 32, 256, 4); /* K steps past swizzle periods */
    }
    tile_case(h, "dot_f16acc", TK_F16, 64, 64, 64, 4);
    tile_case(h, "dot_f16acc", TK_F16, 16, 32, 16, 4);
    tile_case(h, "dot_acc_trans", TK_F16, 32, 64, 16, 4);
    tile_case(h, "dot_acc_trans", TK_F32, 16, 16, 32, 4);
    batched_case(h, TK_F16, 2, 16, 32, 16, 4);
    batched_case(h, TK_BF16, 4, 16, 16, 32, 4);
    loop_case(h, TK_F16, 50, 70, 90, 32, 32, 16, 4, false);
    loop_case(h, TK_F32, 37, 20, 45, 16, 16, 16, 4, false);
    loop_case(h, TK_F16, 176, 96, 64, 64, 64, 32, 4, true);
    loop_case(h, TK_BF16, 48, 40, 32, 16, 16, 16, 4, true);
    if (h->gpu) {
        loop_case(h, TK_F16, 300, 200, 500, 64, 64, 32, 4, false);
        loop_case(h, TK_BF16, 320, 160, 128, 128, 64, 64, 8, true);
    }
    two_loops_case(h, 16, 16, 16, 32, 48, 1);
    two_acc_case(h, 64, 32, 32, 3, 4);
    if (h->gpu) {
        two_acc_case(h, 128, 64, 64, 8, 4);
        two_acc_case(h, 128, 64, 64, 8, 8);
        two_acc_case(h, 128, 32, 64, 5, 8);
    }
    two_loops_case(h, 64, 64, 32, 64, 96, 4);
    if (h->gpu)
        two_loops_case(h, 128, 64, 32, 128, 256, 8);
    grouped_dw_case(h, 32, 16, 16, 2);
    grouped_dw_case(h, 64, 64, 64, 4);
    if (h->gpu)
        grouped_dw_case(h, 64, 128, 64, 8);
    trans_a_case(h, TK_F32, 32, 64, 32, 4);
    trans_a_case(h, TK_BF16, 16, 128, 32, 4);
    if (h->gpu) {
        trans_a_case(h, TK_BF16, 32, 256, 32, 4);
        trans_a_case(h, TK_F32, 32, 256, 64, 8);
    }
}
