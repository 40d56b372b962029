/* cases_fp8.c: the fp8 dtypes (tl.float8e4nv, tl.float8e5, and Triton's
 * software format tl.float8e4b15, whose own rounding b15_case checks
 * against the harness's encoder). Conversions
 * have one right answer each, so they are checked byte for byte against
 * the harness's own search-based encoder: inputs include every halfway
 * point between neighbouring fp8 values (ties go to the even code), values
 * past the largest finite one and infinities (saturated, as cvt.rn.satfinite
 * does), subnormals, signed zeros and NaN (any NaN code), and fp64 values a
 * hair off a halfway point (rounded once, not through fp32). Decoding all
 * 256 codes is exact, and so are abs, minimum and e4m3 + e5m2 in fp16.
 * The dot runs on fp8 inputs into fp32 with M, N and K off the tile sizes
 * and transposed operands, against a float64 product of the decoded inputs;
 * products of fp8 values are exact, so the error is the accumulation's:
 * bounded by 4e-3 relative (the tensor cores may add fp8 products with
 * fewer than fp32's bits). */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool is_nan_code(tk_dtype t, uint8_t c) { return isnan(h_fp8_decode(t, c)); }

/* Exact bytes, NaN codes matching any NaN code. */
static void check_codes(H *h, const char *what, tk_dtype t, const uint8_t *out, const double *src,
                        size_t n)
{
    for (size_t i = 0; i < n && !h->failed; i++) {
        uint8_t want = h_fp8_encode(t, src[i]);
        bool ok = is_nan_code(t, want) ? is_nan_code(t, out[i]) : out[i] == want;
        h_expect(h, ok, "%s: element %zu (%.9g) gave 0x%02x, expected 0x%02x", what, i, src[i],
                 out[i], want);
    }
}

/* Exact values, signs of zero included; NaN matches NaN. */
static void check_exact(H *h, const char *what, const double *out, const double *ref, size_t n)
{
    for (size_t i = 0; i < n && !h->failed; i++) {
        bool ok =
            isnan(ref[i]) ? isnan(out[i]) : out[i] == ref[i] && signbit(out[i]) == signbit(ref[i]);
        h_expect(h, ok, "%s: element %zu gave %.9g, expected %.9g", what, i, out[i], ref[i]);
    }
}

/* Source values for the encoders: halfway points of both formats, specials,
 * then magnitudes spread from 2^-20 to 2^17 with random signs. */
static double *encode_inputs(H *h, size_t n)
{
    static const double specials[] = {0.0,      -0.0,      INFINITY,    -INFINITY,    NAN,
                                      448,      -449,      464,         465,          480,
                                      57344,    61440,     -61441,      1e10,         0x1p-10,
                                      -0x1p-17, 0x1.8p-10, 3 * 0x1p-10, 15 * 0x1p-10, 1e-30};
    double *x = h_malloc(h, n * sizeof(double));
    size_t i = 0;
    for (size_t j = 0; j < sizeof specials / sizeof *specials && i < n; j++)
        x[i++] = specials[j];
    for (int f = 0; f < 2; f++) {
        tk_dtype t = f ? TK_F8E5 : TK_F8E4NV;
        for (int c = 0; c + 1 < 0x80 && i < n; c++) {
            double lo = h_fp8_decode(t, (uint8_t)c), hi = h_fp8_decode(t, (uint8_t)(c + 1));
            if (isnan(hi) || isinf(hi))
                break;
            x[i++] = (c & 1 ? -0.5 : 0.5) * (lo + hi);
        }
    }
    for (; i < n; i++)
        x[i] =
            ldexp(h_uniform(h, 1, 2), (int)h_randint(h, -20, 17)) * (h_randint(h, 0, 1) ? 1 : -1);
    return x;
}

static void encode_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "fp8.encode.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "fp8.tk", "fp8_encode");
    double *x = encode_inputs(h, n);
    double *xh = h_malloc(h, n * sizeof(double)), *xb = h_malloc(h, n * sizeof(double));
    double *xd = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        xh[i] = h_round_to(TK_F16, x[i]);
        xb[i] = h_round_to(TK_BF16, x[i]);
        /* fp64: a hair past each value, so halfway points must round up */
        xd[i] = isfinite(x[i]) ? x[i] * (1 + 0x1p-40) : x[i];
        x[i] = h_round_to(TK_F32, x[i]);
    }
    void *dx = h_upload(h, TK_F32, x, n), *dh = h_upload(h, TK_F16, xh, n);
    void *db = h_upload(h, TK_BF16, xb, n), *dd = h_upload(h, TK_F64, xd, n);
    void *e4 = h_output(h, TK_F8E4NV, 4 * n), *e5 = h_output(h, TK_F8E5, 4 * n);
    tk_grid g = h_grid((unsigned)h_cdiv(n, block), 1, 1);
    h_launch(h, k, g,
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dh, TK_F16), tk_ptr(db, TK_BF16),
                    tk_ptr(e4, TK_F8E4NV), tk_ptr(e5, TK_F8E5), tk_i32((int)n),
                    tk_const("BLOCK", block)),
             4);
    h_launch(h, h_kernel(h, "fp8.tk", "fp8_encode_f64"), g,
             H_ARGS(tk_ptr(dd, TK_F64), tk_ptr((char *)e4 + 3 * n, TK_F8E4NV),
                    tk_ptr((char *)e5 + 3 * n, TK_F8E5), tk_i32((int)n), tk_const("BLOCK", block)),
             4);
    uint8_t *o4 = h_download_raw(h, e4, 4 * n), *o5 = h_download_raw(h, e5, 4 * n);
    const double *src[4] = {x, xh, xb, xd};
    static const char *const names[4] = {"fp32", "fp16", "bf16", "fp64"};
    char what[64];
    for (int j = 0; j < 4 && o4 && o5; j++) {
        snprintf(what, sizeof what, "%s -> fp8e4nv", names[j]);
        check_codes(h, what, TK_F8E4NV, o4 + j * n, src[j], n);
        snprintf(what, sizeof what, "%s -> fp8e5", names[j]);
        check_codes(h, what, TK_F8E5, o5 + j * n, src[j], n);
    }
    h_end(h);
}

static void decode_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "fp8.decode.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "fp8.tk", "fp8_decode");
    uint8_t *c4 = h_malloc(h, n), *c5 = h_malloc(h, n);
    for (size_t i = 0; i < n; i++) { /* every code, in two different orders */
        c4[i] = (uint8_t)i;
        c5[i] = (uint8_t)(i * 7 + 3);
    }
    void *d4 = h_upload_raw(h, c4, n), *d5 = h_upload_raw(h, c5, n);
    void *df = h_output(h, TK_F32, 5 * n), *dh = h_output(h, TK_F16, 2 * n);
    void *db = h_output(h, TK_BF16, 2 * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(d4, TK_F8E4NV), tk_ptr(d5, TK_F8E5), tk_ptr(df, TK_F32),
                    tk_ptr(dh, TK_F16), tk_ptr(db, TK_BF16), tk_i32((int)n),
                    tk_const("BLOCK", block)),
             4);
    double *of = h_download(h, TK_F32, df, 5 * n), *oh = h_download(h, TK_F16, dh, 2 * n);
    double *ob = h_download(h, TK_BF16, db, 2 * n);
    double *ref = h_malloc(h, 5 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        ref[i] = h_fp8_decode(TK_F8E4NV, c4[i]);
        ref[n + i] = h_fp8_decode(TK_F8E5, c5[i]);
        ref[2 * n + i] = h_round_to(TK_F16, ref[i] + ref[n + i]);
        ref[3 * n + i] = fabs(ref[i]);
        ref[4 * n + i] = isnan(ref[i]) ? NAN : fmin(ref[i], 1.5);
    }
    if (of && oh && ob) {
        check_exact(h, "fp8e4nv -> fp32, fp8e5 -> fp32, fp8e4nv + fp8e5 in fp16, abs, minimum", of,
                    ref, 5 * n);
        check_exact(h, "fp8 -> fp16", oh, ref, 2 * n);
        check_exact(h, "fp8 -> bf16", ob, ref, 2 * n);
    }
    h_end(h);
}

/* fp8e4b15 inputs: specials, every tie between neighbouring codes with the
 * fp32 values either side of it (fp32 is truncated to fp16 first, so just
 * below a tie rounds down), then magnitudes from 2^-20 to 4. */
static double *b15_inputs(H *h, size_t n)
{
    static const double specials[] = {0.0,      -0.0,      INFINITY, -INFINITY, NAN,       1.75,
                                      1.8,      -1.8125,   2,        65504,     1e10,      0x1p-18,
                                      -0x1p-18, 0x1.8p-17, 1e-30,    0x1.ep-15, -0x1.cp-15};
    double *x = h_malloc(h, n * sizeof(double));
    size_t i = 0;
    for (size_t j = 0; j < sizeof specials / sizeof *specials && i < n; j++)
        x[i++] = specials[j];
    for (int c = 0; c < 0x7e && i + 3 <= n; c++) {
        float tie = (float)((h_fp8_decode(TK_F8E4B15, (uint8_t)c) +
                             h_fp8_decode(TK_F8E4B15, (uint8_t)(c + 1))) /
                            2);
        x[i++] = tie;
        x[i++] = -nextafterf(tie, 0);
        x[i++] = nextafterf(tie, 2);
    }
    for (; i < n; i++)
        x[i] = ldexp(h_uniform(h, 1, 2), (int)h_randint(h, -20, 1)) * (h_randint(h, 0, 1) ? 1 : -1);
    return x;
}

/* fp8e4b15, Triton's software format: fp32 and fp16 to it through .to()
 * and convert_custom_float8_sm80, byte for byte against the harness's
 * encoder (toward zero to fp16, clamped to 1.75, ties away from zero); all
 * 256 codes back to fp32 (.to() and convert_custom_float8_sm70), fp16 and
 * bf16 exactly, and their abs. */
static void b15_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "fp8.e4b15.n%zu.B%d", n, block))
        return;
    double *x = b15_inputs(h, n), *xh = h_malloc(h, n * sizeof(double));
    uint8_t *c = h_malloc(h, n);
    for (size_t i = 0; i < n; i++) {
        x[i] = h_round_to(TK_F32, x[i]);
        xh[i] = h_round_to(TK_F16, x[i]);
        c[i] = (uint8_t)(i * 5 + 1); /* every code, in another order */
    }
    void *dx = h_upload(h, TK_F32, x, n), *dh = h_upload(h, TK_F16, xh, n);
    void *dc = h_upload_raw(h, c, n), *q = h_output(h, TK_F8E4B15, 3 * n);
    void *df = h_output(h, TK_F32, 3 * n), *d16 = h_output(h, TK_F16, n);
    void *dbf = h_output(h, TK_BF16, n);
    h_launch(h, h_kernel(h, "fp8.tk", "fp8e4b15_convert"), h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dh, TK_F16), tk_ptr(q, TK_F8E4B15),
                    tk_ptr(dc, TK_U8), tk_ptr(df, TK_F32), tk_ptr(d16, TK_F16),
                    tk_ptr(dbf, TK_BF16), tk_i32((int)n), tk_const("BLOCK", block)),
             4);
    uint8_t *oq = h_download_raw(h, q, 3 * n);
    double *of = h_download(h, TK_F32, df, 3 * n), *o16 = h_download(h, TK_F16, d16, n);
    double *obf = h_download(h, TK_BF16, dbf, n), *ref = h_malloc(h, 3 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        ref[i] = ref[n + i] = h_fp8_decode(TK_F8E4B15, c[i]);
        ref[2 * n + i] = fabs(ref[i]);
    }
    if (oq && of && o16 && obf) {
        check_codes(h, "fp32 -> fp8e4b15", TK_F8E4B15, oq, x, n);
        check_codes(h, "fp16 -> fp8e4b15", TK_F8E4B15, oq + n, xh, n);
        check_codes(h, "fp32 -> fp8e4b15 (convert_custom_float8_sm80)", TK_F8E4B15, oq + 2 * n, x,
                    n);
        check_exact(h, "fp8e4b15 -> fp32 (.to(), convert_custom_float8_sm70), abs", of, ref, 3 * n);
        check_exact(h, "fp8e4b15 -> fp16", o16, ref, n);
        check_exact(h, "fp8e4b15 -> bf16", obf, ref, n);
    }
    h_end(h);
}

/* One fp8 GEMM: A (m x k) of format ta, B (k x n) of tb, tiles bm x bn x
 * bk. at: A stored K x M (M contiguous); bt: B stored N x K (K
 * contiguous). stages 0: fp8.tk's fp8_gemm, a plain K loop; else dot.tk's
 * dot_gemm_prec, whose loop the pipeline copies into rings of that many
 * stages (on sm_90a K-major tiles for wgmma, the dot in flight across
 * iterations where both operands are copied). */
typedef struct Fp8Gemm {
    tk_dtype ta, tb;
    int m, n, k, bm, bn, bk, warps, stages;
    bool at, bt;
} Fp8Gemm;

static void launch_gemm(H *h, const Fp8Gemm *g, void *da, void *db, void *dc)
{
    int s_am = g->at ? 1 : g->k, s_ak = g->at ? g->m : 1;
    int s_bk = g->bt ? 1 : g->n, s_bn = g->bt ? g->k : 1;
    tk_grid grid = h_grid((unsigned)h_cdiv(g->m, g->bm), (unsigned)h_cdiv(g->n, g->bn), 1);
    if (!g->stages) {
        h_launch(h, h_kernel(h, "fp8.tk", "fp8_gemm"), grid,
                 H_ARGS(tk_ptr(da, g->ta), tk_ptr(db, g->tb), tk_ptr(dc, TK_F32), tk_i32(g->m),
                        tk_i32(g->n), tk_i32(g->k), tk_i32(s_am), tk_i32(s_ak), tk_i32(s_bk),
                        tk_i32(s_bn), tk_const("BM", g->bm), tk_const("BN", g->bn),
                        tk_const("BK", g->bk)),
                 g->warps);
        return;
    }
    h_launch(h, h_kernel(h, "dot.tk", "dot_gemm_prec"), grid,
             H_ARGS(tk_ptr(da, g->ta), tk_ptr(db, g->tb), tk_ptr(dc, TK_F32), tk_i32(g->m),
                    tk_i32(g->n), tk_i32(g->k), tk_i32(s_am), tk_i32(s_ak), tk_i32(s_bk),
                    tk_i32(s_bn), tk_i32(g->n), tk_i32(1), tk_const("BM", g->bm),
                    tk_const("BN", g->bn), tk_const("BK", g->bk), tk_const("NS", g->stages),
                    tk_const_text("PREC", "\"tf32\"")),
             g->warps);
}

static void gemm_case(H *h, Fp8Gemm g)
{
    char st[16] = "";
    if (g.stages)
        snprintf(st, sizeof st, ".s%d", g.stages);
    if (!h_begin(h, "fp8.gemm_%s_%s%s%s.%dx%dx%d.B%dx%dx%d.w%d%s", h_dtype_name(g.ta),
                 h_dtype_name(g.tb), g.at ? "_at" : "", g.bt ? "_bt" : "", g.m, g.n, g.k, g.bm,
                 g.bn, g.bk, g.warps, st))
        return;
    double *a = h_rand_array(h, g.ta, (size_t)g.m * g.k, -2, 2); /* row-major M x K */
    double *b = h_rand_array(h, g.tb, (size_t)g.k * g.n, -2, 2); /* row-major K x N */
    double *as = h_malloc(h, (size_t)g.m * g.k * sizeof(double));
    double *bs = h_malloc(h, (size_t)g.k * g.n * sizeof(double));
    for (int i = 0; i < g.m; i++)
        for (int l = 0; l < g.k; l++)
            as[g.at ? (size_t)l * g.m + i : (size_t)i * g.k + l] = a[(size_t)i * g.k + l];
    for (int l = 0; l < g.k; l++)
        for (int j = 0; j < g.n; j++)
            bs[g.bt ? (size_t)j * g.k + l : (size_t)l * g.n + j] = b[(size_t)l * g.n + j];
    void *da = h_upload(h, g.ta, as, (size_t)g.m * g.k);
    void *db = h_upload(h, g.tb, bs, (size_t)g.k * g.n);
    void *dc = h_output(h, TK_F32, (size_t)g.m * g.n);
    launch_gemm(h, &g, da, db, dc);
    double *c = h_download(h, TK_F32, dc, (size_t)g.m * g.n);
    double *ref = h_matmul_ref(h, a, b, NULL, g.m, g.n, g.k, false);
    h_check(h, "c", c, ref, (size_t)g.m * g.n, 4e-3);
    h_end(h);
}

/* dot.tk's dot_hoisted: A's fragments made once, then fed from registers
 * to every dot (wgmma's A from registers on sm_90a). */
static void hoisted_case(H *h, tk_dtype ta, tk_dtype tb, int m, int n, int bk)
{
    if (!h_begin(h, "fp8.hoisted_%s_%s.%dx%dx%d", h_dtype_name(ta), h_dtype_name(tb), m, n, bk))
        return;
    double *a = h_rand_array(h, ta, (size_t)m * bk, -2, 2);
    double *b = h_rand_array(h, tb, (size_t)bk * n, -2, 2);
    void *da = h_upload(h, ta, a, (size_t)m * bk), *db = h_upload(h, tb, b, (size_t)bk * n);
    void *dc = h_output(h, TK_F32, (size_t)m * n);
    h_launch(h, h_kernel(h, "dot.tk", "dot_hoisted"), h_grid((unsigned)h_cdiv(m, 64), 1, 1),
             H_ARGS(tk_ptr(da, ta), tk_ptr(db, tb), tk_ptr(dc, TK_F32), tk_i32(m), tk_i32(n),
                    tk_const("BM", 64), tk_const("BN", 64), tk_const("BK", bk),
                    tk_const_text("PREC", "\"tf32\"")),
             4);
    double *c = h_download(h, TK_F32, dc, (size_t)m * n);
    double *ref = h_matmul_ref(h, a, b, NULL, m, n, bk, false);
    h_check(h, "c", c, ref, (size_t)m * n, 4e-3);
    h_end(h);
}

void cases_fp8(H *h)
{
    encode_case(h, 1000, 256);
    decode_case(h, 777, 128);
    b15_case(h, 1000, 256);
    const tk_dtype e4 = TK_F8E4NV, e5 = TK_F8E5, b15 = TK_F8E4B15;
    /* fp8e4b15 operands are multiplied in fp16, as Triton does (with
     * another fp8 format too): K need only be a multiple of 16 */
    gemm_case(h, (Fp8Gemm){b15, b15, 100, 72, 80, 64, 64, 16, 4, 0, false, false});
    gemm_case(h, (Fp8Gemm){b15, e4, 70, 90, 96, 32, 32, 32, 4, 0, false, true});
    gemm_case(h, (Fp8Gemm){e4, e4, 100, 72, 200, 64, 64, 64, 4, 0, false, false});
    gemm_case(h, (Fp8Gemm){e5, e5, 48, 40, 96, 32, 32, 32, 4, 0, false, false});
    gemm_case(h, (Fp8Gemm){e4, e5, 100, 72, 200, 64, 64, 64, 4, 0, false, true});
    gemm_case(h, (Fp8Gemm){e5, e4, 70, 90, 130, 64, 32, 32, 4, 0, true, false});
    gemm_case(h, (Fp8Gemm){e4, e5, 70, 90, 64, 64, 64, 64, 4, 1, false, true});
    hoisted_case(h, e4, e5, 100, 150, 64);
    if (!h->gpu)
        return;
    encode_case(h, 5000, 1024);
    gemm_case(h, (Fp8Gemm){e4, e4, 333, 200, 520, 128, 128, 64, 8, 0, false, true});
    gemm_case(h, (Fp8Gemm){e4, e4, 200, 136, 264, 64, 128, 32, 4, 0, true, false});
    /* pipelined: K-major rings, B transposed from registers, A transposed */
    gemm_case(h, (Fp8Gemm){e4, e4, 333, 200, 528, 128, 128, 64, 8, 3, false, true});
    gemm_case(h, (Fp8Gemm){e5, e5, 150, 100, 208, 64, 64, 64, 4, 3, false, false});
    gemm_case(h, (Fp8Gemm){e4, e5, 300, 260, 272, 128, 128, 64, 8, 3, false, true});
    gemm_case(h, (Fp8Gemm){e5, e4, 150, 100, 208, 64, 64, 64, 4, 3, true, false});
    gemm_case(h, (Fp8Gemm){e5, e4, 333, 190, 517, 128, 64, 128, 4, 3, false, true});
    hoisted_case(h, e5, e4, 200, 300, 128);
}
