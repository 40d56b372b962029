/* conformance.c: runs every kernel of the conformance folder (test/conformance) at every
 * size its README lists, through the public API, on fresh random inputs
 * (fixed seeds, never zeros) with output buffers poisoned (NaN or 0xAB
 * bytes), and checks each result against a float64 CPU reference with the
 * README's tolerance. One line per case, then "N passed, N failed"; exit
 * status 1 on any failure.
 *
 *   conformance [--gpu] [--only NAME] [--seed N] [DIR]
 * DIR (or $TK_CONFORMANCE_DIR) defaults to test/conformance in the source
 * tree. Without --gpu the launches run on the interpreter. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tk/tk.h"

#ifndef TK_SOURCE_DIR
#define TK_SOURCE_DIR "."
#endif

typedef struct Runner {
    tk_context *ctx;
    char dir[4096];
    const char *only;
    uint64_t seed;
    int passed, failed;
    void *bufs[32]; /* device buffers of the current case */
    int nbufs;
} Runner;

/* ---- random inputs ---------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double uniform(Runner *r) { return ((double)(rng_next(&r->seed) >> 11) + 0.5) * 0x1p-53; }
static double normal(Runner *r)
{
    return sqrt(-2.0 * log(uniform(r))) * cos(6.283185307179586 * uniform(r));
}
static float *randn_f32(Runner *r, size_t n, double scale)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n && x; i++)
        x[i] = (float)(scale * normal(r));
    return x;
}

/* ---- device buffers ----------------------------------------------------------------------- */

static void *dev_upload(Runner *r, const void *host, size_t bytes)
{
    void *d = NULL;
    if (r->nbufs == 32 || tk_alloc(r->ctx, bytes, &d) != TK_OK)
        return NULL;
    r->bufs[r->nbufs++] = d;
    if (tk_copy_to(r->ctx, d, host, bytes) != TK_OK)
        return NULL;
    return d;
}

/* An output buffer poisoned with NaN (floats) or 0xAB bytes (ints). */
static void *dev_poison(Runner *r, size_t n, size_t esize, bool is_float)
{
    unsigned char *h = malloc(n * esize);
    if (!h)
        return NULL;
    memset(h, 0xAB, n * esize);
    if (is_float && esize == 4)
        for (size_t i = 0; i < n; i++)
            memcpy(h + 4 * i, &(float){NAN}, 4);
    if (is_float && esize == 2)
        for (size_t i = 0; i < n; i++)
            memcpy(h + 2 * i, &(uint16_t){0x7e00}, 2);
    void *d = dev_upload(r, h, n * esize);
    free(h);
    return d;
}

static bool fetch(Runner *r, void *host, const void *dev, size_t bytes)
{
    return dev && tk_copy_from(r->ctx, host, dev, bytes) == TK_OK;
}

static void free_bufs(Runner *r)
{
    for (int i = 0; i < r->nbufs; i++)
        tk_free(r->ctx, r->bufs[i]);
    r->nbufs = 0;
}

/* ---- reporting ------------------------------------------------------------------------------ */

static void report(Runner *r, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(Runner *r, bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s ", ok ? "PASS" : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    ok ? r->passed++ : r->failed++;
}

static double rel_err(const double *out, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (out[i] - ref[i]) * (out[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static double *f32_to_d(const float *x, size_t n)
{
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n && d; i++)
        d[i] = x[i];
    return d;
}

/* Loads FILE from the conformance folder and launches KERNEL; false after
 * reporting the failure. */
static bool launch(Runner *r, const char *file, const char *kernel, const char *label, tk_grid g,
                   const tk_arg *args, int nargs)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", r->dir, file);
    tk_module *m = NULL;
    tk_kernel *k = NULL;
    tk_launch_options lo = {.num_warps = 4};
    bool ok = tk_module_load_file(r->ctx, path, &m) == TK_OK &&
        tk_module_kernel(m, kernel, &k) == TK_OK && tk_launch(k, g, args, nargs, &lo) == TK_OK &&
        tk_synchronize(r->ctx) == TK_OK;
    if (!ok)
        report(r, false, "%s: %s", label, tk_last_error());
    tk_module_destroy(m);
    return ok;
}

static bool wanted(Runner *r, const char *name) { return !r->only || strstr(name, r->only); }

#define TRY(cond)                                                                                  \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            report(r, false, "%s: setup failed: %s", label, tk_last_error());                      \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* ---- the cases ----------------------------------------------------------------------------------- */

static void case_vector_add(Runner *r)
{
    const char *label = "vector_add n=98432";
    enum { N = 98432 };
    float *x = randn_f32(r, N, 1), *y = randn_f32(r, N, 1), *out = malloc(N * 4);
    void *dx = dev_upload(r, x, N * 4), *dy = dev_upload(r, y, N * 4),
         *dout = dev_poison(r, N, 4, true);
    TRY(dx && dy && dout);
    tk_arg a[] = {tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N),
                  tk_const("BLOCK", 1024)};
    if (launch(r, "vector_add.tk", "vector_add", label, (tk_grid){(N + 1023) / 1024, 1, 1}, a, 5)) {
        TRY(fetch(r, out, dout, N * 4));
        size_t bad = 0;
        for (size_t i = 0; i < N; i++)
            bad += out[i] != (float)((double)x[i] + (double)y[i]);
        report(r, bad == 0, "%s: %zu of %d elements differ (exact)", label, bad, N);
    }
done:
    free(x), free(y), free(out), free_bufs(r);
}

static void case_copy_strided(Runner *r)
{
    const char *label = "copy_strided n=37 step=3";
    enum { N = 37 };
    float *src = randn_f32(r, 3 * N, 1), out[N];
    void *ds = dev_upload(r, src, 3 * N * 4), *dd = dev_poison(r, N, 4, true);
    TRY(ds && dd);
    tk_arg a[] = {tk_ptr(ds, TK_F32), tk_ptr(dd, TK_F32), tk_i32(N), tk_i32(3), tk_const("BS", 4)};
    if (launch(r, "copy_strided.tk", "copy_strided", label, (tk_grid){(N + 3) / 4, 1, 1}, a, 5)) {
        TRY(fetch(r, out, dd, sizeof out));
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += memcmp(&out[i], &src[3 * i], 4) != 0;
        report(r, bad == 0, "%s: %d of %d elements differ (exact)", label, bad, N);
    }
done:
    free(src), free_bufs(r);
}

static void case_grey(Runner *r)
{
    const char *label = "rgb_to_grey 150x227";
    enum { H = 150, W = 227 };
    uint8_t *img = malloc(3 * H * W), *out = malloc(H * W);
    for (int i = 0; i < 3 * H * W; i++)
        img[i] = (uint8_t)(1 + rng_next(&r->seed) % 255);
    void *di = dev_upload(r, img, 3 * H * W), *dout = dev_poison(r, H * W, 1, false);
    TRY(di && dout);
    tk_arg a[] = {tk_ptr(di, TK_U8), tk_ptr(dout, TK_U8), tk_i32(H),
                  tk_i32(W),         tk_const("TH", 32),  tk_const("TW", 32)};
    if (launch(r, "grey.tk", "rgb_to_grey", label, (tk_grid){(H + 31) / 32, (W + 31) / 32, 1}, a,
               6)) {
        TRY(fetch(r, out, dout, H * W));
        int worst = 0;
        for (int i = 0; i < H * W; i++) {
            float g = 0.2989f * img[i] + 0.5870f * img[H * W + i] + 0.1140f * img[2 * H * W + i];
            int d = abs((int)out[i] - (int)truncf(g));
            worst = d > worst ? d : worst;
        }
        report(r, worst <= 1, "%s: max abs error %d (tolerance 1)", label, worst);
    }
done:
    free(img), free(out), free_bufs(r);
}

static int next_pow2(int n)
{
    int p = 1;
    while (p < n)
        p *= 2;
    return p;
}

static void softmax_ref(const float *x, double *ref, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        double mx = -INFINITY, s = 0;
        for (int j = 0; j < cols; j++)
            mx = fmax(mx, x[i * cols + j]);
        for (int j = 0; j < cols; j++)
            s += exp(x[i * cols + j] - mx);
        for (int j = 0; j < cols; j++)
            ref[i * cols + j] = exp(x[i * cols + j] - mx) / s;
    }
}

static void case_softmax(Runner *r, bool persistent, int rows, int cols)
{
    char label[96];
    snprintf(label, sizeof label, "%s %dx%d", persistent ? "softmax_persistent" : "softmax_rows",
             rows, cols);
    size_t n = (size_t)rows * cols;
    float *x = randn_f32(r, n, 2), *out = malloc(n * 4);
    double *ref = malloc(n * sizeof *ref), *got = NULL;
    void *dx = dev_upload(r, x, n * 4), *dout = dev_poison(r, n, 4, true);
    TRY(dx && dout);
    bool ok;
    if (persistent) {
        tk_arg a[] = {tk_ptr(dout, TK_F32),   tk_ptr(dx, TK_F32),   tk_i32(cols),
                      tk_i32(cols),           tk_i32(rows),         tk_i32(cols),
                      tk_const("BLOCK", 512), tk_const("STAGES", 2)};
        ok = launch(r, "softmax_persistent.tk", "softmax_persistent", label, (tk_grid){132, 1, 1},
                    a, 8);
    } else {
        tk_arg a[] = {tk_ptr(dout, TK_F32), tk_ptr(dx, TK_F32), tk_i32(cols),
                      tk_i32(cols),         tk_i32(cols),       tk_const("BLOCK", next_pow2(cols))};
        ok = launch(r, "softmax_rows.tk", "softmax_rows", label, (tk_grid){(unsigned)rows, 1, 1}, a,
                    6);
    }
    if (ok) {
        TRY(fetch(r, out, dout, n * 4));
        softmax_ref(x, ref, rows, cols);
        got = f32_to_d(out, n);
        double e = rel_err(got, ref, n);
        report(r, e <= 1e-5, "%s: relative error %.3g (tolerance 1e-5)", label, e);
    }
done:
    free(x), free(out), free(ref), free(got), free_bufs(r);
}

static void case_matmul(Runner *r, int M, int N, int K, bool f16)
{
    char label[96];
    snprintf(label, sizeof label, "matmul_grouped %dx%dx%d %s", M, N, K, f16 ? "fp16" : "fp32");
    size_t es = f16 ? 2 : 4;
    double *A = malloc((size_t)M * K * 8), *B = malloc((size_t)K * N * 8);
    double *ref = calloc((size_t)M * N, 8), *got = malloc((size_t)M * N * 8);
    unsigned char *ha = malloc((size_t)M * K * es), *hb = malloc((size_t)K * N * es);
    unsigned char *hc = malloc((size_t)M * N * es);
    /* inputs rounded to the kernel's dtype; the reference uses the rounded values */
    for (int pass = 0; pass < 2; pass++) {
        double *D = pass ? B : A;
        unsigned char *h = pass ? hb : ha;
        size_t n = pass ? (size_t)K * N : (size_t)M * K;
        for (size_t i = 0; i < n; i++) {
            float v = (float)normal(r);
            if (f16) {
                uint16_t b = tk_f32_to_f16(v);
                memcpy(h + 2 * i, &b, 2);
                D[i] = tk_f16_to_f32(b);
            } else {
                memcpy(h + 4 * i, &v, 4);
                D[i] = v;
            }
        }
    }
    tk_dtype dt = f16 ? TK_F16 : TK_F32;
    void *da = dev_upload(r, ha, (size_t)M * K * es), *db = dev_upload(r, hb, (size_t)K * N * es);
    void *dc = dev_poison(r, (size_t)M * N, es, true);
    TRY(da && db && dc);
    tk_arg a[] = {tk_ptr(da, dt),     tk_ptr(db, dt),     tk_ptr(dc, dt),     tk_i32(M),
                  tk_i32(N),          tk_i32(K),          tk_i32(K),          tk_i32(1),
                  tk_i32(N),          tk_i32(1),          tk_i32(N),          tk_i32(1),
                  tk_const("BM", 64), tk_const("BN", 64), tk_const("BK", 32), tk_const("GROUP", 4)};
    if (launch(r, "matmul_grouped.tk", "matmul_grouped", label,
               (tk_grid){(unsigned)(M + 63) / 64, (unsigned)(N + 63) / 64, 1}, a, 16)) {
        TRY(fetch(r, hc, dc, (size_t)M * N * es));
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++)
                for (int j = 0; j < N; j++)
                    ref[(size_t)i * N + j] += A[(size_t)i * K + k] * B[(size_t)k * N + j];
        for (size_t i = 0; i < (size_t)M * N; i++) {
            if (f16) {
                uint16_t b;
                memcpy(&b, hc + 2 * i, 2);
                got[i] = tk_f16_to_f32(b);
            } else {
                float v;
                memcpy(&v, hc + 4 * i, 4);
                got[i] = v;
            }
        }
        double tol = f16 ? 2e-3 : 1e-3, e = rel_err(got, ref, (size_t)M * N);
        report(r, e <= tol, "%s: relative error %.3g (tolerance %g)", label, e, tol);
    }
done:
    free(A), free(B), free(ref), free(got), free(ha), free(hb), free(hc), free_bufs(r);
}

static void case_gelu(Runner *r)
{
    const char *label = "gelu n=10000 x=4*randn";
    enum { N = 10000 };
    float *x = randn_f32(r, N, 4), *y = malloc(N * 4);
    double *ref = malloc(N * 8), *got = NULL;
    void *dx = dev_upload(r, x, N * 4), *dy = dev_poison(r, N, 4, true);
    TRY(dx && dy);
    tk_arg a[] = {tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_i32(N), tk_const("BLOCK", 512)};
    if (launch(r, "gelu.tk", "gelu", label, (tk_grid){(N + 511) / 512, 1, 1}, a, 4)) {
        TRY(fetch(r, y, dy, N * 4));
        for (int i = 0; i < N; i++) {
            double v = x[i];
            ref[i] = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
        }
        got = f32_to_d(y, N);
        double e = rel_err(got, ref, N);
        report(r, e <= 1e-6, "%s: relative error %.3g (tolerance 1e-6)", label, e);
    }
done:
    free(x), free(y), free(ref), free(got), free_bufs(r);
}

static void case_layernorm(Runner *r)
{
    const char *label = "layernorm_rows 64x1500";
    enum { R = 64, C = 1500 };
    float *x = randn_f32(r, R * C, 1), *w = randn_f32(r, C, 1), *b = randn_f32(r, C, 1);
    for (int i = 0; i < R * C; i++)
        x[i] = x[i] * 2.0f + 0.5f; /* a non-zero mean */
    float *y = malloc(R * C * 4), mean[R], rstd[R];
    double *ry = malloc(R * C * 8), rm[R], rr[R], *gy = NULL, *gm = NULL, *gr = NULL;
    void *dx = dev_upload(r, x, R * C * 4), *dy = dev_poison(r, R * C, 4, true);
    void *dw = dev_upload(r, w, C * 4), *db = dev_upload(r, b, C * 4);
    void *dm = dev_poison(r, R, 4, true), *dr = dev_poison(r, R, 4, true);
    TRY(dx && dy && dw && db && dm && dr);
    tk_arg a[] = {tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32),    tk_ptr(dw, TK_F32), tk_ptr(db, TK_F32),
                  tk_ptr(dm, TK_F32), tk_ptr(dr, TK_F32),    tk_i32(C),          tk_i32(C),
                  tk_f32(1e-5f),      tk_const("BLOCK", 512)};
    if (launch(r, "layernorm.tk", "layernorm_rows", label, (tk_grid){R, 1, 1}, a, 10)) {
        TRY(fetch(r, y, dy, R * C * 4) && fetch(r, mean, dm, sizeof mean) &&
            fetch(r, rstd, dr, sizeof rstd));
        for (int i = 0; i < R; i++) {
            double s = 0, q = 0;
            for (int j = 0; j < C; j++)
                s += x[i * C + j];
            rm[i] = s / C;
            for (int j = 0; j < C; j++)
                q += (x[i * C + j] - rm[i]) * (x[i * C + j] - rm[i]);
            rr[i] = 1 / sqrt(q / C + 1e-5);
            for (int j = 0; j < C; j++)
                ry[i * C + j] = (x[i * C + j] - rm[i]) * rr[i] * w[j] + b[j];
        }
        gy = f32_to_d(y, R * C), gm = f32_to_d(mean, R), gr = f32_to_d(rstd, R);
        double ey = rel_err(gy, ry, R * C), em = rel_err(gm, rm, R), er = rel_err(gr, rr, R);
        report(r, ey <= 1e-5 && em <= 1e-5 && er <= 1e-5,
               "%s: relative error y %.3g, mean %.3g, rstd %.3g (tolerance 1e-5)", label, ey, em,
               er);
    }
done:
    free(x), free(w), free(b), free(y), free(ry), free(gy), free(gm), free(gr), free_bufs(r);
}

static void case_row_stats(Runner *r)
{
    const char *label = "row_stats 100x50";
    enum { R = 100, C = 50 };
    float *x = randn_f32(r, R * C, 1), mx[R], colsum[C], zero[C] = {0};
    int32_t arg[R];
    for (int i = 0; i < R; i += 2) /* every other row in small integers: ties for argmax */
        for (int j = 0; j < C; j++)
            x[i * C + j] = (float)(int)(x[i * C + j] * 2.0f);
    double rc[C], gc[C];
    void *dx = dev_upload(r, x, R * C * 4), *dm = dev_poison(r, R, 4, true);
    void *da = dev_poison(r, R, 4, false), *dc = dev_upload(r, zero, sizeof zero);
    TRY(dx && dm && da && dc);
    tk_arg a[] = {tk_ptr(dx, TK_F32), tk_ptr(dm, TK_F32), tk_ptr(da, TK_I32),
                  tk_ptr(dc, TK_F32), tk_i32(R),          tk_i32(C),
                  tk_i32(C),          tk_const("R", 16),  tk_const("C", 64)};
    if (launch(r, "row_argmax.tk", "row_stats", label, (tk_grid){(R + 15) / 16, 1, 1}, a, 9)) {
        TRY(fetch(r, mx, dm, sizeof mx) && fetch(r, arg, da, sizeof arg) &&
            fetch(r, colsum, dc, sizeof colsum));
        int bad_max = 0, bad_arg = 0, ties = 0;
        for (int i = 0; i < R; i++) {
            int at = 0, count = 0;
            for (int j = 1; j < C; j++)
                if (x[i * C + j] > x[i * C + at])
                    at = j;
            for (int j = 0; j < C; j++)
                count += x[i * C + j] == x[i * C + at];
            ties += count > 1;
            bad_max += mx[i] != x[i * C + at];
            bad_arg += arg[i] != at;
        }
        for (int j = 0; j < C; j++) {
            rc[j] = 0;
            for (int i = 0; i < R; i++)
                rc[j] += x[i * C + j];
            gc[j] = colsum[j];
        }
        double e = rel_err(gc, rc, C);
        report(r, !bad_max && !bad_arg && e <= 1e-5,
               "%s: %d max and %d argmax differ (exact, %d rows with ties), column sums relative "
               "error %.3g (tolerance 1e-5)",
               label, bad_max, bad_arg, ties, e);
    }
done:
    free(x), free_bufs(r);
}

/* triton.language.swizzle2d, in C. */
static void swizzle2d(int i, int j, int ni, int nj, int g, int *si, int *sj)
{
    int ij = i * nj + j, gj = g * nj, group = ij / gj, off = group * g;
    int size = ni - off < g ? ni - off : g;
    ij %= gj;
    *si = off + ij % size;
    *sj = ij / size;
}

static void case_swizzle(Runner *r)
{
    const char *label = "swizzle_map grid 5x4 GROUP=3";
    int32_t out[20], ref[20];
    void *d = dev_poison(r, 20, 4, false);
    TRY(d);
    tk_arg a[] = {tk_ptr(d, TK_I32), tk_const("GROUP", 3)};
    if (launch(r, "swizzle_map.tk", "swizzle_map", label, (tk_grid){5, 4, 1}, a, 2)) {
        TRY(fetch(r, out, d, sizeof out));
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 4; j++) {
                int si, sj;
                swizzle2d(i, j, 5, 4, 3, &si, &sj);
                ref[si * 4 + sj] = i * 4 + j;
            }
        static const int32_t documented[20] = {0, 3,  6,  9,  1,  4,  7,  10, 2,  5,
                                               8, 11, 12, 14, 16, 18, 13, 15, 17, 19};
        report(r, !memcmp(out, ref, sizeof out) && !memcmp(ref, documented, sizeof ref), "%s: %s",
               label, memcmp(out, ref, sizeof out) ? "differs" : "matches (exact)");
    }
done:
    free_bufs(r);
}

/* ---- main --------------------------------------------------------------------------------------- */

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(int argc, char **argv)
{
    Runner r = {.seed = 20261122};
    bool gpu = false;
    const char *dir = getenv("TK_CONFORMANCE_DIR");
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gpu"))
            gpu = true;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            r.only = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            r.seed = strtoull(argv[++i], NULL, 0);
        else if (argv[i][0] != '-')
            dir = argv[i];
        else {
            fprintf(stderr, "usage: conformance [--gpu] [--only NAME] [--seed N] [DIR]\n");
            return 2;
        }
    }
    if (dir)
        snprintf(r.dir, sizeof r.dir, "%s", dir);
    else {
        snprintf(r.dir, sizeof r.dir, "%s/test/conformance", TK_SOURCE_DIR);
    }
    if (!is_dir(r.dir)) {
        fprintf(stderr, "conformance: no folder '%s' (give DIR or TK_CONFORMANCE_DIR)\n", r.dir);
        return 2;
    }
    tk_context_options co = {.device = 0, .interpret = !gpu};
    if (tk_context_create(&r.ctx, &co) != TK_OK) {
        fprintf(stderr, "conformance: %s\n", tk_last_error());
        return 2;
    }
    tk_device_props props;
    if (tk_device_properties(r.ctx, &props) == TK_OK)
        printf("device: %s; kernels from %s\n", props.name, r.dir);
    if (wanted(&r, "vector_add"))
        case_vector_add(&r);
    if (wanted(&r, "copy_strided"))
        case_copy_strided(&r);
    if (wanted(&r, "rgb_to_grey"))
        case_grey(&r);
    if (wanted(&r, "softmax_rows")) {
        case_softmax(&r, false, 4, 6);
        case_softmax(&r, false, 1823, 781);
        case_softmax(&r, false, 64, 4096);
    }
    if (wanted(&r, "softmax_persistent"))
        case_softmax(&r, true, 1000, 300);
    if (wanted(&r, "matmul_grouped")) {
        case_matmul(&r, 512, 512, 512, true);
        case_matmul(&r, 333, 257, 190, true);
        case_matmul(&r, 128, 96, 64, false);
    }
    if (wanted(&r, "gelu"))
        case_gelu(&r);
    if (wanted(&r, "layernorm_rows"))
        case_layernorm(&r);
    if (wanted(&r, "row_stats"))
        case_row_stats(&r);
    if (wanted(&r, "swizzle_map"))
        case_swizzle(&r);
    printf("%d passed, %d failed\n", r.passed, r.failed);
    tk_context_destroy(r.ctx);
    return r.failed || !r.passed ? 1 : 0;
}
