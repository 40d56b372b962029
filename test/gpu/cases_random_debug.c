/* cases_random_debug.c: tl.rand/randn/randint against a C Philox 4x32-10
 * (the streams Triton documents), their statistics, determinism across
 * launches and seeds; device_print output captured from stdout;
 * device_assert passing and failing. rand and randint are exact (the same
 * integer and fp32 operations); randn goes through log/cos, so 1e-5.
 * Statistical bounds are six standard deviations of the estimate. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void kat_case(H *h)
{
    if (!h_begin(h, "rand.philox_reference_known_answers"))
        return;
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1}};
    for (int t = 0; t < 3; t++) {
        uint32_t c[4] = {kat[t][0], kat[t][1], kat[t][2], kat[t][3]};
        h_philox(kat[t][4], kat[t][5], c);
        for (int i = 0; i < 4; i++)
            h_expect(h, c[i] == kat[t][6 + i], "vector %d word %d: %08x, expected %08x", t, i, c[i],
                     kat[t][6 + i]);
    }
    h_end(h);
}

typedef struct Streams {
    double *u, *nrm;
    int64_t *bits;
} Streams;

static Streams launch_streams(H *h, tk_kernel *k, size_t n, int seed, int block)
{
    Streams s;
    void *du = h_output(h, TK_F32, n), *dn = h_output(h, TK_F32, n), *di = h_output(h, TK_U32, n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(du, TK_F32), tk_ptr(dn, TK_F32), tk_ptr(di, TK_U32), tk_i32((int)n),
                    tk_i32(seed), tk_const("BLOCK", block)),
             4);
    s.u = h_download(h, TK_F32, du, n);
    s.nrm = h_download(h, TK_F32, dn, n);
    s.bits = h_download_int(h, TK_U32, di, n);
    return s;
}

static void streams_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "rand.streams_match_philox.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "random.tk", "rand_streams");
    int seed = (int)h_randint(h, 1, 1 << 30);
    Streams s = launch_streams(h, k, n, seed, block);
    double *ru = h_malloc(h, n * sizeof(double)), *rn = h_malloc(h, n * sizeof(double));
    int64_t *rb = h_malloc(h, n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        uint32_t c[4] = {(uint32_t)i, 0, 0, 0};
        h_philox((uint32_t)seed, 0, c);
        rb[i] = c[0];
        ru[i] = h_uint_to_uniform(c[0]);
        double u1 = fmax(1e-7, (double)h_uint_to_uniform(c[0]));
        double u2 = h_uint_to_uniform(c[1]);
        rn[i] = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    }
    h_check_int(h, "randint", s.bits, rb, n);
    h_check(h, "rand", s.u, ru, n, 0);
    h_check(h, "randn", s.nrm, rn, n, 1e-5);
    h_end(h);
}

static void moments(const double *x, size_t n, double *mean, double *var)
{
    double s = 0, q = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *mean = s / n;
    for (size_t i = 0; i < n; i++)
        q += (x[i] - *mean) * (x[i] - *mean);
    *var = q / n;
}

static void stats_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "rand.statistics_determinism.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "random.tk", "rand_streams");
    int seed = (int)h_randint(h, 1, 1 << 30);
    Streams a = launch_streams(h, k, n, seed, block);
    Streams b = launch_streams(h, k, n, seed, block);
    Streams c = launch_streams(h, k, n, seed + 1, block);
    if (h->failed) {
        h_end(h);
        return;
    }
    double m, v, sn = sqrt((double)n);
    moments(a.u, n, &m, &v);
    h_expect(h, fabs(m - 0.5) < 6 * sqrt(1.0 / 12) / sn, "rand mean %.5f", m);
    h_expect(h, fabs(v - 1.0 / 12) < 6 * sqrt(1.0 / 80 - 1.0 / 144) / sn, "rand variance %.5f", v);
    for (size_t i = 0; i < n; i++)
        h_expect(h, a.u[i] >= 0 && a.u[i] < 1, "rand[%zu] = %g outside [0, 1)", i, a.u[i]);
    moments(a.nrm, n, &m, &v);
    h_expect(h, fabs(m) < 6 / sn, "randn mean %.5f", m);
    h_expect(h, fabs(v - 1) < 6 * sqrt(2.0) / sn, "randn variance %.5f", v);
    double *hi = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        hi[i] = (double)a.bits[i] * 0x1p-32;
    moments(hi, n, &m, &v);
    h_expect(h, fabs(m - 0.5) < 6 * sqrt(1.0 / 12) / sn, "randint / 2^32 mean %.5f", m);
    size_t same = 0;
    for (size_t i = 0; i < n; i++) {
        h_expect(h, a.bits[i] == b.bits[i] && a.u[i] == b.u[i] && a.nrm[i] == b.nrm[i],
                 "same seed, different value at %zu", i);
        same += a.bits[i] == c.bits[i];
    }
    h_expect(h, same < n / 100 + 2, "seed and seed + 1 agree at %zu of %zu offsets", same, n);
    h_end(h);
}

static bool has_token(const char *text, long v)
{
    char tok[32];
    int len = snprintf(tok, sizeof tok, "%ld", v);
    for (const char *p = strstr(text, tok); p; p = strstr(p + 1, tok)) {
        bool left = p == text || !(p[-1] >= '0' && p[-1] <= '9');
        bool right = !(p[len] >= '0' && p[len] <= '9');
        if (left && right)
            return true;
    }
    return false;
}

static void print_case(H *h, unsigned grid, int block, int warps)
{
    if (!h_begin(h, "debug.device_print.grid%u.B%d.w%d", grid, block, warps))
        return;
    size_t n = (size_t)grid * block;
    tk_kernel *k = h_kernel(h, "debug.tk", "print_values");
    double *x = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = (double)h_randint(h, 100000, 999999);
    void *dx = h_upload(h, TK_I32, x, n);
    char *text = NULL;
    if (!h->failed && h_capture_begin(h)) {
        h_launch(h, k, h_grid(grid, 1, 1), H_ARGS(tk_ptr(dx, TK_I32), tk_const("BLOCK", block)),
                 warps);
        text = h_capture_end(h);
    }
    if (text && !h->failed) {
        size_t lines = 0;
        for (const char *p = strstr(text, "tkval"); p; p = strstr(p + 1, "tkval"))
            lines++;
        h_expect(h, lines >= n, "%zu lines with the prefix for %zu elements", lines, n);
        for (size_t i = 0; i < n; i++)
            h_expect(h, has_token(text, (long)x[i]), "element %zu (%ld) not printed", i,
                     (long)x[i]);
        h_expect(h, strstr(text, "tkpid") != NULL, "the scalar print is missing");
    }
    h_end(h);
}

static void assert_case(H *h, const char *kernel, const char *msg, bool fail)
{
    if (!h_begin(h, "debug.%s.%s", kernel, fail ? "failing" : "passing"))
        return;
    const int n = 1000, block = 128, lim = 5000;
    tk_kernel *k = h_kernel(h, "debug.tk", kernel);
    double *x = h_rand_array(h, TK_I32, n, -lim + 1, lim - 1);
    if (fail)
        x[h_randint(h, 0, n - 1)] = lim + 3;
    void *dx = h_upload(h, TK_I32, x, n), *dy = h_output(h, TK_I32, n);
    char why[400] = "";
    tk_status s = TK_ERR_INVALID;
    if (!h->failed && k) {
        h_capture_begin(h); /* keep the device's own report out of the log */
        s = h_launch_status(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
                            H_ARGS(tk_ptr(dx, TK_I32), tk_ptr(dy, TK_I32), tk_i32(n), tk_i32(lim),
                                   tk_const("BLOCK", block)),
                            4, why, sizeof why);
        h_capture_end(h);
    }
    if (fail) {
        h_expect(h, s != TK_OK, "a failing device_assert gave no error");
        if (!h->gpu)
            h_expect(h, strstr(why, msg) != NULL, "the error does not quote the message: %s", why);
        if (h->gpu)
            h->poisoned_ctx = true; /* a trapped kernel leaves the context unusable */
    } else {
        h_expect(h, s == TK_OK, "launch: %s: %s", tk_status_name(s), why);
        double *y = h_download(h, TK_I32, dy, n), *ref = h_malloc(h, n * sizeof(double));
        for (int i = 0; i < n; i++)
            ref[i] = kernel[7] == 'b' ? x[i] + 1 : x[i] * 2;
        h_check(h, "y", y, ref, n, 0);
    }
    h_end(h);
}

void cases_random_debug(H *h)
{
    kat_case(h);
    streams_case(h, 1000, 128);
    streams_case(h, h->gpu ? 1000003 : 20011, 1024);
    stats_case(h, h->gpu ? 1 << 22 : 1 << 16, 512);
    print_case(h, 2, 32, 1);
    print_case(h, 3, 128, 4);
    assert_case(h, "assert_below", "tkassert value too big", false);
    assert_case(h, "assert_stmt", "tkassert statement failed", false);
    /* Last: on a GPU a failed assert ends the process's CUDA context. */
    assert_case(h, "assert_below", "tkassert value too big", true);
    assert_case(h, "assert_stmt", "tkassert statement failed", true);
}
