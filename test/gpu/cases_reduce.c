/* cases_reduce.c: sum/max/min/argmax/argmin along each axis of 2-D tiles and
 * of ragged 1-D blocks, keep_dims, axis=None, tl.reduce with custom combine
 * functions (one value and a (value, index) pair), 3-D, cumsum and
 * associative_scan (over one value and over tuples, forward and reverse). Inputs of the arg* cases are small integers, so rows
 * hold ties and "first index on ties" is checked. max/min/arg*, integer sums
 * are exact; fp32 sums and scans of mixed-sign values accumulate in any
 * order, bounded here by 1e-5 (a tree of depth log2 N adds ~N^0.5 u). */
#include "harness.h"

#include <math.h>

static double *rand_ties(H *h, size_t n)
{
    double *x = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = (double)h_randint(h, -6, 6);
    return x;
}

/* NaN and infinities for the arg* reductions, in patterns that cycle over
 * the elements: NaN first along a row or column, NaN behind -inf and
 * before it, +inf after a first NaN. argmax/argmin follow a sequential
 * scan: a first NaN wins, any other loses to every number, -inf included. */
static void put_specials(H *h, double *x, int bm, int bn)
{
    static const double pat[] = {NAN, -INFINITY, NAN, -INFINITY, INFINITY, 3, NAN};
    for (int i = 0; i < bm; i++)
        for (int j = 0; j < bn; j++)
            if ((i * 7 + j * 3) % 5 < 2 || h_randint(h, 0, 3) == 0)
                x[(size_t)i * bn + j] = pat[(size_t)(i + 2 * j) % 7];
}

static void reduce_2d_run(H *h, tk_dtype t, int bm, int bn, int warps, bool specials)
{
    if (!h_begin(h, "reduce.%s_%s.%dx%d.w%d", specials ? "arg_nan" : "axis01", h_dtype_name(t), bm,
                 bn, warps))
        return;
    size_t n = (size_t)bm * bn;
    tk_kernel *k = h_kernel(h, "reduce.tk", "reduce_2d");
    double *x = rand_ties(h, n); /* small integers: exact sums in fp16 / bf16 too */
    if (t == TK_F32)             /* continuous values in half the rows, ties in the rest */
        for (size_t i = 0; i < n; i += 2)
            x[i] = h_round_to(TK_F32, h_uniform(h, -6, 6));
    if (specials && x)
        put_specials(h, x, bm, bn);
    void *dx = h_upload(h, t, x, n);
    void *d[10];
    for (int j = 0; j < 10; j++)
        d[j] = h_output(h, j < 6 ? t : TK_I32, j % 2 ? bm : bn);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, t), tk_ptr(d[0], t), tk_ptr(d[1], t), tk_ptr(d[2], t),
                    tk_ptr(d[3], t), tk_ptr(d[4], t), tk_ptr(d[5], t), tk_ptr(d[6], TK_I32),
                    tk_ptr(d[7], TK_I32), tk_ptr(d[8], TK_I32), tk_ptr(d[9], TK_I32),
                    tk_const("BM", bm), tk_const("BN", bn)),
             warps);
    static const char *names[10] = {
        "sum axis 0", "sum axis 1",    "max axis 0",    "max axis 1",    "min axis 0",
        "min axis 1", "argmax axis 0", "argmax axis 1", "argmin axis 0", "argmin axis 1"};
    for (int j = specials ? 6 : 0; j < 10 && !h->failed; j++) {
        int axis = j % 2, len = axis ? bm : bn, other = axis ? bn : bm;
        double *out = h_download(h, j < 6 ? t : TK_I32, d[j], len);
        double *ref = h_malloc(h, len * sizeof(double));
        for (int r = 0; r < len; r++) {
            double s = 0, best = 0;
            int arg = 0;
            for (int c = 0; c < other; c++) {
                double v = axis ? x[(size_t)r * bn + c] : x[(size_t)c * bn + r];
                s += v;
                bool better = j / 2 == 1 || j / 2 == 3 ? v > best : v < best;
                if (c == 0 || better) {
                    best = v;
                    arg = c;
                }
            }
            ref[r] = j < 2 ? s : j < 6 ? best : arg;
        }
        h_check(h, names[j], out, ref, len, j < 2 && t == TK_F32 ? 1e-5 : 0);
    }
    h_end(h);
}

static void reduce_2d_case(H *h, tk_dtype t, int bm, int bn, int warps)
{
    reduce_2d_run(h, t, bm, bn, warps, false);
}

static void reduce_1d_case(H *h, int n, int block, int warps)
{
    if (!h_begin(h, "reduce.1d_ragged.n%d.B%d.w%d", n, block, warps))
        return;
    tk_kernel *k = h_kernel(h, "reduce.tk", "reduce_1d");
    double *x = rand_ties(h, n);
    for (int i = 0; i < n; i += 3)
        x[i] = h_round_to(TK_F32, h_uniform(h, -7, 7));
    void *dx = h_upload(h, TK_F32, x, n);
    void *df = h_output(h, TK_F32, 5), *di = h_output(h, TK_I32, 2);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(df, TK_F32), tk_ptr(di, TK_I32), tk_i32(n),
                    tk_const("BLOCK", block)),
             warps);
    double *f = h_download(h, TK_F32, df, 5), *iv = h_download(h, TK_I32, di, 2);
    double s = 0, mx = x[0], mn = x[0], sa = 0;
    int amx = 0, amn = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        sa += fabs(x[i]);
        if (x[i] > mx) {
            mx = x[i];
            amx = i;
        }
        if (x[i] < mn) {
            mn = x[i];
            amn = i;
        }
    }
    /* Sums of mixed signs: bound by the sum of magnitudes. */
    h_expect(h, fabs(f[0] - s) <= 1e-6 * sa, "sum = %.9g, expected %.9g", f[0], s);
    h_expect(h, fabs(f[3] - s) <= 1e-6 * sa, "sum(axis=None) = %.9g, expected %.9g", f[3], s);
    h_expect(h, fabs(f[4] - s / 2) <= 1e-6 * sa, "x.sum() * 0.5 = %.9g, expected %.9g", f[4],
             s / 2);
    double rmm[2] = {mx, mn}, rarg[2] = {amx, amn};
    h_check(h, "max, min", f + 1, rmm, 2, 0);
    h_check(h, "argmax, argmin", iv, rarg, 2, 0);
    h_end(h);
}

static void keep_case(H *h, int bm, int bn, int warps)
{
    if (!h_begin(h, "reduce.keep_dims_axis_none.%dx%d.w%d", bm, bn, warps))
        return;
    size_t n = (size_t)bm * bn;
    tk_kernel *k = h_kernel(h, "reduce.tk", "reduce_keep");
    double *x = h_rand_array(h, TK_F32, n, 0.5, 2);
    void *dx = h_upload(h, TK_F32, x, n), *dy = h_output(h, TK_F32, n);
    void *dt = h_output(h, TK_F32, 3);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_ptr(dt, TK_F32), tk_const("BM", bm),
                    tk_const("BN", bn)),
             warps);
    double *y = h_download(h, TK_F32, dy, n), *tot = h_download(h, TK_F32, dt, 3);
    double *ref = h_malloc(h, n * sizeof(double)), rt[3] = {0, x[0], x[0]};
    for (int i = 0; i < bm; i++) {
        double s = 0;
        for (int j = 0; j < bn; j++)
            s += x[(size_t)i * bn + j];
        for (int j = 0; j < bn; j++) {
            double m = x[j];
            for (int r = 1; r < bm; r++)
                m = fmax(m, x[(size_t)r * bn + j]);
            ref[(size_t)i * bn + j] = x[(size_t)i * bn + j] - s + m;
        }
    }
    for (size_t i = 0; i < n; i++) {
        rt[0] += x[i];
        rt[1] = fmax(rt[1], x[i]);
        rt[2] = fmin(rt[2], x[i]);
    }
    h_check(h, "x - sum(keep_dims) + max(keep_dims)", y, ref, n, 1e-5);
    h_check(h, "sum(axis=None)", tot, rt, 1, 1e-5);
    h_check(h, "max(axis=None), min(min)", tot + 1, rt + 1, 2, 0);
    h_end(h);
}

static void custom_case(H *h, int bm, int bn, int warps)
{
    if (!h_begin(h, "reduce.custom_combine.%dx%d.w%d", bm, bn, warps))
        return;
    size_t n = (size_t)bm * bn;
    tk_kernel *k = h_kernel(h, "reduce.tk", "reduce_custom");
    double *x = rand_ties(h, n);
    void *dx = h_upload(h, TK_F32, x, n);
    void *dam = h_output(h, TK_F32, bm), *dss = h_output(h, TK_F32, bn);
    void *dmv = h_output(h, TK_F32, bm), *dmi = h_output(h, TK_I32, bm);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dam, TK_F32), tk_ptr(dss, TK_F32),
                    tk_ptr(dmv, TK_F32), tk_ptr(dmi, TK_I32), tk_const("BM", bm),
                    tk_const("BN", bn)),
             warps);
    double *am = h_download(h, TK_F32, dam, bm), *ss = h_download(h, TK_F32, dss, bn);
    double *mv = h_download(h, TK_F32, dmv, bm), *mi = h_download(h, TK_I32, dmi, bm);
    double *ram = h_malloc(h, bm * sizeof(double)), *rss = h_malloc(h, bn * sizeof(double));
    double *rmv = h_malloc(h, bm * sizeof(double)), *rmi = h_malloc(h, bm * sizeof(double));
    for (int i = 0; i < bm; i++) {
        ram[i] = 0;
        rmv[i] = x[(size_t)i * bn];
        for (int j = 0; j < bn; j++) {
            double v = x[(size_t)i * bn + j];
            ram[i] = fmax(ram[i], fabs(v));
            if (v < rmv[i]) {
                rmv[i] = v;
                rmi[i] = j;
            }
        }
    }
    for (int j = 0; j < bn; j++) {
        rss[j] = 0;
        for (int i = 0; i < bm; i++)
            rss[j] += x[(size_t)i * bn + j] * x[(size_t)i * bn + j];
    }
    h_check(h, "reduce(max |.|, axis 1)", am, ram, bm, 0);
    h_check(h, "reduce(+, x*x, axis 0)", ss, rss, bn, 0);
    h_check(h, "reduce(minloc) value", mv, rmv, bm, 0);
    h_check(h, "reduce(minloc) first index", mi, rmi, bm, 0);
    h_end(h);
}

/* The maps of row (or column) i, composed in order from the identity. */
static void compose_ref(const double *a, const double *b, int n, size_t step, double *ra,
                        double *rb)
{
    uint32_t A = 1, B = 0;
    for (int j = 0; j < n; j++) {
        uint32_t x = (uint32_t)(int32_t)a[j * step], y = (uint32_t)(int32_t)b[j * step];
        A *= x;
        B = B * x + y;
    }
    *ra = (int32_t)A;
    *rb = (int32_t)B;
}

static void ordered_case(H *h, int bm, int bn, int warps)
{
    if (!h_begin(h, "reduce.ordered_combine.%dx%d.w%d", bm, bn, warps))
        return;
    size_t n = (size_t)bm * bn;
    tk_kernel *k = h_kernel(h, "reduce.tk", "reduce_ordered");
    double *a = h_rand_array(h, TK_I32, n, -1000, 1000),
           *b = h_rand_array(h, TK_I32, n, -1000, 1000);
    void *da = h_upload(h, TK_I32, a, n), *db = h_upload(h, TK_I32, b, n);
    void *dra = h_output(h, TK_I32, bm), *drb = h_output(h, TK_I32, bm);
    void *dca = h_output(h, TK_I32, bn), *dcb = h_output(h, TK_I32, bn);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(da, TK_I32), tk_ptr(db, TK_I32), tk_ptr(dra, TK_I32),
                    tk_ptr(drb, TK_I32), tk_ptr(dca, TK_I32), tk_ptr(dcb, TK_I32),
                    tk_const("BM", bm), tk_const("BN", bn)),
             warps);
    double *ra = h_download(h, TK_I32, dra, bm), *rb = h_download(h, TK_I32, drb, bm);
    double *ca = h_download(h, TK_I32, dca, bn), *cb = h_download(h, TK_I32, dcb, bn);
    double *wra = h_malloc(h, bm * sizeof(double)), *wrb = h_malloc(h, bm * sizeof(double));
    double *wca = h_malloc(h, bn * sizeof(double)), *wcb = h_malloc(h, bn * sizeof(double));
    for (int i = 0; i < bm; i++)
        compose_ref(a + (size_t)i * bn, b + (size_t)i * bn, bn, 1, &wra[i], &wrb[i]);
    for (int j = 0; j < bn; j++)
        compose_ref(a + j, b + j, bm, (size_t)bn, &wca[j], &wcb[j]);
    h_check(h, "compose along rows: a", ra, wra, bm, 0);
    h_check(h, "compose along rows: b", rb, wrb, bm, 0);
    h_check(h, "compose along columns: a", ca, wca, bn, 0);
    h_check(h, "compose along columns: b", cb, wcb, bn, 0);
    h_end(h);
}

static void reduce_3d_case(H *h, int A, int B, int C, int warps)
{
    if (!h_begin(h, "reduce.3d_axis1.%dx%dx%d.w%d", A, B, C, warps))
        return;
    size_t n = (size_t)A * B * C;
    tk_kernel *k = h_kernel(h, "reduce.tk", "reduce_3d");
    double *x = rand_ties(h, n);
    void *dx = h_upload(h, TK_F32, x, n), *dy = h_output(h, TK_F32, (size_t)A * C);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_const("A", A), tk_const("B", B),
                    tk_const("C", C)),
             warps);
    double *y = h_download(h, TK_F32, dy, (size_t)A * C);
    double *ref = h_malloc(h, (size_t)A * C * sizeof(double));
    for (int i = 0; i < A; i++)
        for (int l = 0; l < C; l++) {
            double s = 0;
            for (int j = 0; j < B; j++)
                s += x[((size_t)i * B + j) * C + l];
            ref[i * C + l] = s;
        }
    h_check(h, "sum axis 1", y, ref, (size_t)A * C, 0); /* small integers: exact */
    h_end(h);
}

static void scan_1d_case(H *h, tk_dtype t, int block, int warps)
{
    if (!h_begin(h, "scan.cumsum_runmax_1d_%s.B%d.w%d", h_dtype_name(t), block, warps))
        return;
    tk_kernel *k = h_kernel(h, "reduce.tk", "scan_1d");
    double *x = h_rand_array(h, t, block, -100, 100);
    void *dx = h_upload(h, t, x, block);
    void *dy = h_output(h, t, block), *dz = h_output(h, t, block);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, t), tk_ptr(dy, t), tk_ptr(dz, t), tk_const("BLOCK", block)), warps);
    double *y = h_download(h, t, dy, block), *z = h_download(h, t, dz, block);
    double *ry = h_malloc(h, block * sizeof(double)), *rz = h_malloc(h, block * sizeof(double));
    double s = 0, m = x[0];
    for (int i = 0; i < block; i++) {
        s += x[i];
        m = fmax(m, x[i]);
        ry[i] = s;
        rz[i] = m;
    }
    h_check(h, "cumsum", y, ry, block, t == TK_F32 ? 1e-5 : 0);
    h_check(h, "associative_scan(maximum)", z, rz, block, 0);
    h_end(h);
}

static void scan_2d_case(H *h, tk_dtype t, int bm, int bn, int warps)
{
    if (!h_begin(h, "scan.cumsum_2d_%s.%dx%d.w%d", h_dtype_name(t), bm, bn, warps))
        return;
    size_t n = (size_t)bm * bn;
    tk_kernel *k = h_kernel(h, "reduce.tk", "scan_2d");
    double *x = h_rand_array(h, t, n, -100, 100);
    void *dx = h_upload(h, t, x, n), *dr = h_output(h, t, n), *dc = h_output(h, t, n);
    h_launch(
        h, k, h_grid(1, 1, 1),
        H_ARGS(tk_ptr(dx, t), tk_ptr(dr, t), tk_ptr(dc, t), tk_const("BM", bm), tk_const("BN", bn)),
        warps);
    double *r = h_download(h, t, dr, n), *c = h_download(h, t, dc, n);
    double *rr = h_malloc(h, n * sizeof(double)), *rc = h_malloc(h, n * sizeof(double));
    for (int i = 0; i < bm; i++)
        for (int j = 0; j < bn; j++) {
            size_t at = (size_t)i * bn + j;
            rr[at] = x[at] + (j ? rr[at - 1] : 0);
            rc[at] = x[at] + (i ? rc[at - bn] : 0);
        }
    double tol = t == TK_F32 ? 1e-5 : 0;
    h_check(h, "cumsum axis 1", r, rr, n, tol);
    h_check(h, "cumsum axis 0", c, rc, n, tol);
    h_end(h);
}

/* Element i of line `line` of a (bm, bn) tile along `axis`. */
static size_t line_at(int bn, int axis, int line, int i)
{
    return axis ? (size_t)line * bn + i : (size_t)i * bn + line;
}

/* The references of scan_tuple for one line, from its end when rev. */
static void scan_tuple_ref(const double *a, const double *b, const double *x, int bm, int bn,
                           int axis, bool rev, int line, double *r[5])
{
    int len = axis ? bn : bm;
    double ca = 0, cb = 0, mv = 0, mi = 0, cs = 0;
    for (int j = 0; j < len; j++) {
        int i = rev ? len - 1 - j : j;
        size_t e = line_at(bn, axis, line, i);
        if (j == 0) {
            ca = a[e], cb = b[e], mv = x[e], mi = (double)e, cs = x[e];
        } else {
            /* combine(acc, x): acc holds the elements before in scan order */
            cb = a[e] * cb + b[e];
            ca *= a[e];
            if (x[e] > mv || (x[e] == mv && (double)e < mi))
                mv = x[e], mi = (double)e;
            cs += x[e];
        }
        r[0][e] = ca, r[1][e] = cb, r[2][e] = mv, r[3][e] = mi, r[4][e] = cs;
    }
}

static void scan_tuple_case(H *h, int bm, int bn, int axis, bool rev, int warps)
{
    if (!h_begin(h, "scan.tuple_%saxis%d.%dx%d.w%d", rev ? "rev_" : "", axis, bm, bn, warps))
        return;
    size_t n = (size_t)bm * bn;
    tk_kernel *k = h_kernel(h, "reduce.tk", "scan_tuple");
    double *a = h_malloc(h, n * sizeof(double)), *b = h_malloc(h, n * sizeof(double));
    double *x = rand_ties(h, n); /* ties: the first index must win */
    for (size_t i = 0; i < n; i++) {
        a[i] = h_randint(h, 0, 1) ? 1 : -1; /* exact in i32 whatever the order */
        b[i] = (double)h_randint(h, -4, 4);
    }
    static const tk_dtype dt[5] = {TK_I32, TK_I32, TK_F32, TK_I32, TK_F32};
    void *da = h_upload(h, TK_I32, a, n), *db = h_upload(h, TK_I32, b, n);
    void *dx = h_upload(h, TK_F32, x, n), *d[5];
    for (int j = 0; j < 5; j++)
        d[j] = h_output(h, dt[j], n);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(da, TK_I32), tk_ptr(db, TK_I32), tk_ptr(dx, TK_F32),
                    tk_ptr(d[0], TK_I32), tk_ptr(d[1], TK_I32), tk_ptr(d[2], TK_F32),
                    tk_ptr(d[3], TK_I32), tk_ptr(d[4], TK_F32), tk_const("BM", bm),
                    tk_const("BN", bn), tk_const("AXIS", axis),
                    tk_const_text("REV", rev ? "True" : "False")),
             warps);
    double *ref[5];
    for (int j = 0; j < 5; j++)
        ref[j] = h_malloc(h, n * sizeof(double));
    for (int line = 0; line < (axis ? bm : bn); line++)
        scan_tuple_ref(a, b, x, bm, bn, axis, rev, line, ref);
    static const char *what[5] = {"affine a", "affine b", "maxloc value", "maxloc index", "cumsum"};
    for (int j = 0; j < 5 && !h->failed; j++)
        h_check(h, what[j], h_download(h, dt[j], d[j], n), ref[j], n, 0);
    h_end(h);
}

/* arg* of an fp16 product of small integers (exact in fp32, rows full of
 * ties): the first index of the best along each axis, as a scan gives. */
static void dot_argmax_case(H *h, int bm, int bn, int bk, int warps)
{
    if (!h_begin(h, "reduce.dot_argmax.%dx%dx%d.w%d", bm, bn, bk, warps))
        return;
    tk_kernel *k = h_kernel(h, "reduce.tk", "dot_argmax");
    double *a = h_malloc(h, (size_t)bm * bk * sizeof(double));
    double *b = h_malloc(h, (size_t)bk * bn * sizeof(double));
    for (int i = 0; a && b && i < bm * bk; i++)
        a[i] = (double)h_randint(h, -2, 2);
    for (int i = 0; a && b && i < bk * bn; i++)
        b[i] = (double)h_randint(h, -2, 2);
    void *da = h_upload(h, TK_F16, a, (size_t)bm * bk),
         *db = h_upload(h, TK_F16, b, (size_t)bk * bn);
    static const int axes[5] = {0, 1, 0, 1, 1};
    void *d[5];
    for (int j = 0; j < 5; j++)
        d[j] = h_output(h, j < 4 ? TK_I32 : TK_F32, axes[j] ? bm : bn);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(da, TK_F16), tk_ptr(db, TK_F16), tk_ptr(d[0], TK_I32),
                    tk_ptr(d[1], TK_I32), tk_ptr(d[2], TK_I32), tk_ptr(d[3], TK_I32),
                    tk_ptr(d[4], TK_F32), tk_const("BM", bm), tk_const("BN", bn),
                    tk_const("BK", bk)),
             warps);
    double *c = h_malloc(h, (size_t)bm * bn * sizeof(double));
    for (int i = 0; c && a && b && i < bm; i++)
        for (int j = 0; j < bn; j++) {
            double s = 0;
            for (int q = 0; q < bk; q++)
                s += a[(size_t)i * bk + q] * b[(size_t)q * bn + j];
            c[(size_t)i * bn + j] = s;
        }
    static const char *names[5] = {"argmax axis 0", "argmax axis 1", "argmin axis 0",
                                   "argmin axis 1", "max axis 1"};
    for (int j = 0; j < 5 && c && !h->failed; j++) {
        int axis = axes[j], len = axis ? bm : bn, other = axis ? bn : bm;
        double *out = h_download(h, j < 4 ? TK_I32 : TK_F32, d[j], len);
        double *ref = h_malloc(h, len * sizeof(double));
        for (int r = 0; ref && r < len; r++) {
            double best = 0;
            int arg = 0;
            for (int q = 0; q < other; q++) {
                double v = axis ? c[(size_t)r * bn + q] : c[(size_t)q * bn + r];
                if (q == 0 || (j == 2 || j == 3 ? v < best : v > best)) {
                    best = v;
                    arg = q;
                }
            }
            ref[r] = j < 4 ? arg : best;
        }
        h_check(h, names[j], out, ref, len, 0);
    }
    h_end(h);
}

void cases_reduce(H *h)
{
    static const int shapes[][3] = {{16, 32, 4},   {4, 8, 4},    {64, 64, 4}, {1, 128, 4},
                                    {128, 2, 4},   {32, 256, 8}, {8, 16, 1},  {128, 128, 8},
                                    {256, 32, 16}, {64, 128, 2}};
    for (int i = 0; i < 10; i++) {
        reduce_2d_case(h, TK_F32, shapes[i][0], shapes[i][1], shapes[i][2]);
        if (i < 3)
            reduce_2d_case(h, TK_I32, shapes[i][0], shapes[i][1], shapes[i][2]);
    }
    /* Layouts depend on the warp count: one tile over every count. */
    static const int warps[] = {1, 2, 8, 16};
    for (int i = 0; i < 4; i++)
        reduce_2d_case(h, TK_F32, 64, 64, warps[i]);
    reduce_2d_run(h, TK_F32, 16, 32, 4, true);
    reduce_2d_run(h, TK_F32, 64, 128, 8, true);
    reduce_2d_run(h, TK_BF16, 32, 64, 4, true);
    reduce_2d_case(h, TK_F16, 16, 32, 4);
    reduce_2d_case(h, TK_F16, 64, 64, 4);
    reduce_2d_case(h, TK_BF16, 16, 16, 4);
    reduce_2d_case(h, TK_BF16, 32, 8, 2);
    if (h->gpu) {
        reduce_2d_case(h, TK_F32, 128, 256, 4); /* 256 elements per thread */
        reduce_2d_case(h, TK_F32, 512, 64, 8);
    }
    dot_argmax_case(h, 64, 64, 32, 4);
    dot_argmax_case(h, 64, 128, 32, 8); /* warps along N too */
    dot_argmax_case(h, 128, 64, 16, 8);
    reduce_1d_case(h, 13, 16, 4);
    reduce_1d_case(h, 100, 128, 4);
    reduce_1d_case(h, 1000, 1024, 4);
    reduce_1d_case(h, 8000, 8192, 8);
    reduce_1d_case(h, 1, 32, 1);
    keep_case(h, 16, 32, 4);
    keep_case(h, 2, 4, 4);
    custom_case(h, 16, 32, 4);
    custom_case(h, 64, 8, 2);
    custom_case(h, 4, 4, 4);
    /* 8 to 32 warps along a row: their partials meet in a butterfly, whose
     * order must keep the first index of a tie */
    custom_case(h, 2, 4096, 32);
    custom_case(h, 4, 1024, 8);
    ordered_case(h, 16, 32, 4);
    ordered_case(h, 4, 256, 8);
    ordered_case(h, 32, 16, 4);
    ordered_case(h, 2, 2048, 16);
    reduce_2d_case(h, TK_F32, 2, 8192, 32);
    reduce_1d_case(h, 30000, 32768, 16);
    reduce_3d_case(h, 4, 8, 16, 4);
    reduce_3d_case(h, 2, 32, 4, 4);
    scan_1d_case(h, TK_F32, 16, 4);
    scan_1d_case(h, TK_F32, 256, 4);
    scan_1d_case(h, TK_I32, 1024, 4);
    scan_2d_case(h, TK_F32, 16, 32, 4);
    scan_2d_case(h, TK_I32, 64, 8, 4);
    scan_2d_case(h, TK_I32, 4, 4, 4);
    scan_2d_case(h, TK_F32, 64, 64, 1);
    scan_2d_case(h, TK_I32, 64, 64, 16);
    scan_1d_case(h, TK_I32, 4096, 8);
    /* lines in registers, lanes, warps and repeated chunks, each way */
    static const int tup[][3] = {{8, 256, 4}, {64, 16, 4}, {1, 2048, 8}, {256, 4, 8},
                                 {32, 64, 1}, {16, 8, 2},  {128, 128, 8}};
    for (int i = 0; i < 7; i++)
        for (int axis = 0; axis < 2; axis++)
            for (int rev = 0; rev < 2; rev++)
                scan_tuple_case(h, tup[i][0], tup[i][1], axis, rev, tup[i][2]);
}
