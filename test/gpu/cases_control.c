/* cases_control.c: for loops carrying blocks and scalars (runtime bounds, a
 * step, zero trips), static_range, nested loops, while loops (one whose
 * condition is a reduction), runtime if/elif/else merging values, a
 * constexpr branch, helpers with several results and default/keyword
 * arguments, tl.map_elementwise with per-element branches, returns, a loop
 * and pack=2. Scalars are exact; fp32 blocks get 1e-6 (a few roundings of a
 * contracting recurrence). */
#include "harness.h"

#include <math.h>

static void for_case(H *h, int n, int iters, int block)
{
    if (!h_begin(h, "control.for_carried.n%d.iters%d.B%d", n, iters, block))
        return;
    unsigned grid = (unsigned)h_cdiv(n, block);
    tk_kernel *k = h_kernel(h, "control.tk", "for_carried");
    double *x = h_rand_array(h, TK_F32, n, -1, 1);
    void *dx = h_upload(h, TK_F32, x, n), *dout = h_output(h, TK_F32, n);
    void *dcnt = h_output(h, TK_I32, grid);
    h_launch(h, k, h_grid(grid, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_ptr(dcnt, TK_I32), tk_i32(n),
                    tk_i32(iters), tk_const("BLOCK", block)),
             4);
    double *out = h_download(h, TK_F32, dout, n), *cnt = h_download(h, TK_I32, dcnt, grid);
    double *ref = h_malloc(h, n * sizeof(double)), *rc = h_malloc(h, grid * sizeof(double));
    int count = iters > 0 ? iters : 0;
    double extra = 0;
    for (int j = 3; j < iters * 2; j += 3) {
        extra += j;
        count += 2;
    }
    for (int i = 0; i < n; i++) {
        double acc = 0;
        for (int it = 0; it < iters; it++)
            acc = acc * 0.5 + x[i] * it;
        ref[i] = acc + extra;
    }
    for (unsigned g = 0; g < grid; g++)
        rc[g] = count;
    h_check(h, "acc", out, ref, n, 1e-6);
    h_check(h, "count", cnt, rc, grid, 0);
    h_end(h);
}

static void nested_case(H *h, int n, int block, int r)
{
    if (!h_begin(h, "control.static_range_nested.n%d.B%d.R%d", n, block, r))
        return;
    tk_kernel *k = h_kernel(h, "control.tk", "nested_static");
    double *x = h_rand_array(h, TK_F32, (size_t)r * n, -2, 2);
    void *dx = h_upload(h, TK_F32, x, (size_t)r * n), *dout = h_output(h, TK_F32, n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(n), tk_const("BLOCK", block),
                    tk_const("R", r)),
             4);
    double *out = h_download(h, TK_F32, dout, n);
    double *ref = h_malloc(h, n * sizeof(double));
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < r; j++)
            s += x[(size_t)j * n + i] * (j + 1);
        ref[i] = s + 3; /* sum over i < 2, j < 3 of i * j */
    }
    h_check(h, "acc", out, ref, n, 1e-6);
    h_end(h);
}

static void while_case(H *h, int n, int block, int lim)
{
    if (!h_begin(h, "control.while.n%d.B%d.lim%d", n, block, lim))
        return;
    unsigned grid = (unsigned)h_cdiv(n, block);
    tk_kernel *k = h_kernel(h, "control.tk", "while_loops");
    double *x = h_malloc(h, n * sizeof(double));
    for (int i = 0; i < n; i++) /* each program's block has its own scale */
        x[i] = h_round_to(TK_F32, h_uniform(h, -1, 1) * pow(2.0, (double)((i / block) % 9)));
    void *dx = h_upload(h, TK_F32, x, n), *dout = h_output(h, TK_F32, n);
    void *dst = h_output(h, TK_I32, 2 * grid);
    h_launch(h, k, h_grid(grid, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_ptr(dst, TK_I32), tk_i32(n),
                    tk_i32(lim), tk_const("BLOCK", block)),
             4);
    double *out = h_download(h, TK_F32, dout, n), *st = h_download(h, TK_I32, dst, 2 * grid);
    double *ref = h_malloc(h, n * sizeof(double)), *rst = h_malloc(h, 2 * grid * sizeof(double));
    double sq = 0;
    for (int i = 0; i < lim; i++)
        sq += (double)i * i;
    for (unsigned g = 0; g < grid; g++) {
        int lo = (int)g * block, hi = lo + block < n ? lo + block : n, steps = 0;
        double m = 0;
        for (int i = lo; i < hi; i++)
            m = fmax(m, fabs(x[i]));
        while (m > 1.0) {
            m *= 0.5;
            steps++;
        }
        for (int i = lo; i < hi; i++)
            ref[i] = ldexp(x[i], -steps);
        rst[2 * g] = steps;
        rst[2 * g + 1] = sq;
    }
    h_check(h, "v", out, ref, n, 0);
    h_check(h, "steps, sum of squares", st, rst, 2 * grid, 0);
    h_end(h);
}

static void if_case(H *h, int n, int block, int flag, int mode)
{
    if (!h_begin(h, "control.if_else.n%d.B%d.flag%d.MODE%d", n, block, flag, mode))
        return;
    tk_kernel *k = h_kernel(h, "control.tk", "if_else");
    double *x = h_rand_array(h, TK_F32, n, -1, 1);
    for (int i = 0; i < n; i += 2 * block) /* some blocks entirely <= 0.5 */
        for (int j = i; j < i + block && j < n; j++)
            x[j] = h_round_to(TK_F32, h_uniform(h, -1, 0.5));
    void *dx = h_upload(h, TK_F32, x, n), *dout = h_output(h, TK_F32, n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(n), tk_i32(flag),
                    tk_const("BLOCK", block), tk_const("MODE", mode)),
             4);
    double *out = h_download(h, TK_F32, dout, n);
    double *ref = h_malloc(h, n * sizeof(double));
    for (int lo = 0; lo < n; lo += block) {
        int pid = lo / block, hi = lo + block < n ? lo + block : n;
        double mx = hi < lo + block ? 0 : -INFINITY; /* masked lanes load 0.0 */
        for (int i = lo; i < hi; i++)
            mx = fmax(mx, x[i]);
        for (int i = lo; i < hi; i++) {
            double y = flag > 0 ? x[i] * 2 : (float)(x[i] - 1);
            int z = flag > 0 ? 1 : 2;
            y = pid % 3 == 0 ? (float)(y + 100) : pid % 3 == 1 ? -y : y * 0.25;
            if (mx > 0.5)
                y = (float)(y + z);
            ref[i] = (float)(y + (mode == 1 ? 0.5 : -0.5));
        }
    }
    h_check(h, "y", out, ref, n, 1e-6);
    h_end(h);
}

static void helpers_case(H *h, int n, int block)
{
    if (!h_begin(h, "control.helper_multi_return.n%d.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "control.tk", "helpers");
    double *x = h_rand_array(h, TK_F32, n, 1, 3);
    void *dx = h_upload(h, TK_F32, x, n);
    void *dout = h_output(h, TK_F32, 2 * n), *dst = h_output(h, TK_F32, 2);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_ptr(dst, TK_F32), tk_i32(n),
                    tk_const("BLOCK", block)),
             4);
    double *out = h_download(h, TK_F32, dout, 2 * n), *st = h_download(h, TK_F32, dst, 2);
    double *ref = h_malloc(h, 2 * n * sizeof(double)), rst[2] = {0, 0};
    for (int i = 0; i < n; i++)
        rst[0] += x[i] / n;
    for (int i = 0; i < n; i++) {
        double d = x[i] - rst[0];
        rst[1] += d * d / n;
        ref[i] = 2 * d;
        ref[n + i] = -d;
    }
    h_check(h, "mean, var", st, rst, 2, 1e-5);
    h_check(h, "_scale(d), _scale(d, s=-1.0)", out, ref, 2 * (size_t)n, 1e-5);
    h_end(h);
}

static int popcount32(int64_t v)
{
    int c = 0;
    for (uint32_t w = (uint32_t)v; w; w &= w - 1)
        c++;
    return c;
}

static void map_elementwise_case(H *h, int n, int block)
{
    if (!h_begin(h, "control.map_elementwise.n%d.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "control.tk", "map_elementwise_flow");
    double *x = h_rand_array(h, TK_F32, n, -1, 1);
    int64_t *v = h_malloc(h, n * sizeof(int64_t));
    for (int i = 0; i < n; i++)
        v[i] = h_randint(h, 0, 0x7fffffff);
    void *dx = h_upload(h, TK_F32, x, n), *dv = h_upload_int(h, TK_I32, v, n);
    void *dy = h_output(h, TK_F32, n), *dc = h_output(h, TK_I32, n), *dp = h_output(h, TK_F32, n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dv, TK_I32), tk_ptr(dy, TK_F32), tk_ptr(dc, TK_I32),
                    tk_ptr(dp, TK_F32), tk_i32(n), tk_const("BLOCK", block)),
             4);
    double *y = h_download(h, TK_F32, dy, n), *c = h_download(h, TK_I32, dc, n);
    double *p = h_download(h, TK_F32, dp, n);
    double *ry = h_malloc(h, n * sizeof(double)), *rc = h_malloc(h, n * sizeof(double));
    double *rp = h_malloc(h, n * sizeof(double));
    for (int i = 0; i < n; i++) {
        int bits = popcount32(v[i]);
        ry[i] = x[i] > 0.5 ? 2 * x[i] : x[i] < -0.5 ? -x[i] : h_round_to(TK_F32, x[i] + 1);
        rc[i] = x[i] > 0.5 ? (double)v[i] : x[i] < -0.5 ? bits : 2 * bits;
        int e = i & ~1; /* the pair's even element; a partner past n loads 0.0 */
        double a0 = x[e], a1 = e + 1 < n ? x[e + 1] : 0.0;
        rp[i] = h_round_to(TK_F32, i == e ? a0 - a1 : a0 + a1);
    }
    h_check(h, "y", y, ry, n, 0);
    h_check(h, "c", c, rc, n, 0);
    h_check(h, "pack=2 pairs", p, rp, n, 0);
    h_end(h);
}

void cases_control(H *h)
{
    int n = h->gpu ? 100003 : 3001;
    for_case(h, n, 5, 256);
    for_case(h, 1000, 0, 128);
    for_case(h, 1000, 13, 16);
    nested_case(h, n, 512, 3);
    while_case(h, 5000, 256, 7);
    while_case(h, 100, 16, 0);
    if_case(h, 5000, 128, 1, 1);
    if_case(h, 5000, 128, -3, 2);
    if_case(h, 777, 16, 1, 2);
    helpers_case(h, 1000, 1024);
    helpers_case(h, 10, 16);
    map_elementwise_case(h, n, 256);
    map_elementwise_case(h, 333, 64);
}
