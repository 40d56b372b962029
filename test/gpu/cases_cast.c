/* cases_cast.c: casts between dtype groups and bitcasts. fp32 -> fp16/bf16
 * inputs include exact halfway points, so round-to-nearest-even is checked
 * and not merely "close"; fp -> int truncates toward zero; int -> fp rounds
 * beyond 2^24. Every cast has one right answer, so every check is exact. */
#include "harness.h"

#include <math.h>
#include <string.h>

/* A value exactly halfway between two neighbours of fp16 (bf16 when bf). */
static double halfway(H *h, bool bf)
{
    double lo, hi;
    if (bf) {
        uint16_t b = (uint16_t)h_randint(h, 0x3f80, 0x4479); /* 1 .. ~1000 */
        lo = h_bf16_to_f32(b);
        hi = h_bf16_to_f32((uint16_t)(b + 1));
    } else {
        uint16_t b = (uint16_t)h_randint(h, 0x3c00, 0x63cf); /* 1 .. ~1000 */
        lo = h_f16_to_f32(b);
        hi = h_f16_to_f32((uint16_t)(b + 1));
    }
    double v = (lo + hi) / 2; /* exact in fp32: both have short mantissas */
    return h_randint(h, 0, 1) ? v : -v;
}

static void from_f32_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "cast.from_fp32.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "cast.tk", "cast_from_f32");
    double *x = h_rand_array(h, TK_F32, n, -1000, 1000);
    for (size_t i = 0; i < n; i += 4)
        x[i] = halfway(h, false);
    for (size_t i = 1; i < n; i += 4)
        x[i] = halfway(h, true);
    void *dx = h_upload(h, TK_F32, x, n);
    void *dh = h_output(h, TK_F16, n), *dbf = h_output(h, TK_BF16, n);
    void *di = h_output(h, TK_I32, n), *di8 = h_output(h, TK_I8, n);
    void *du8 = h_output(h, TK_U8, n), *dd = h_output(h, TK_F64, n);
    void *db = h_output(h, TK_I32, 2 * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dh, TK_F16), tk_ptr(dbf, TK_BF16),
                    tk_ptr(di, TK_I32), tk_ptr(di8, TK_I8), tk_ptr(du8, TK_U8), tk_ptr(dd, TK_F64),
                    tk_ptr(db, TK_I32), tk_i32((int)n), tk_const("BLOCK", block)),
             4);
    double *oh = h_download(h, TK_F16, dh, n), *obf = h_download(h, TK_BF16, dbf, n);
    double *oi = h_download(h, TK_I32, di, n), *oi8 = h_download(h, TK_I8, di8, n);
    double *ou8 = h_download(h, TK_U8, du8, n), *od = h_download(h, TK_F64, dd, n);
    double *ob = h_download(h, TK_I32, db, 2 * n);
    double *r[6];
    for (int j = 0; j < 6; j++)
        r[j] = h_malloc(h, 2 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        float f = (float)x[i];
        r[0][i] = h_f16_to_f32(h_f32_to_f16(f));
        r[1][i] = h_bf16_to_f32(h_f32_to_bf16(f));
        r[2][i] = truncf(f);
        r[3][i] = truncf(f * 0.1f);
        r[4][i] = truncf(fabsf(f) * 0.25f);
        r[5][i] = f > 0;
        r[5][n + i] = f < 0 ? 5 : 0;
    }
    h_check(h, "fp32 -> fp16", oh, r[0], n, 0);
    h_check(h, "fp32 -> bf16", obf, r[1], n, 0);
    h_check(h, "fp32 -> i32", oi, r[2], n, 0);
    h_check(h, "fp32 * 0.1 -> i8", oi8, r[3], n, 0);
    h_check(h, "|fp32| * 0.25 -> u8", ou8, r[4], n, 0);
    h_check(h, "fp32 -> fp64", od, x, n, 0);
    h_check(h, "i1 -> i32 / fp32", ob, r[5], 2 * n, 0);
    h_end(h);
}

static void ints_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "cast.integers.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "cast.tk", "cast_ints");
    int64_t *iv = h_malloc(h, n * sizeof(int64_t)), *uv = h_malloc(h, n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        iv[i] = h_randint_nz(h, INT32_MIN, INT32_MAX);
        uv[i] = h_randint_nz(h, 0, UINT32_MAX);
    }
    void *di = h_upload_int(h, TK_I32, iv, n), *du = h_upload_int(h, TK_U32, uv, n);
    void *df = h_output(h, TK_F32, 2 * n), *dh = h_output(h, TK_F16, n);
    void *d8 = h_output(h, TK_I8, n), *dw = h_output(h, TK_I64, 4 * n);
    void *dd = h_output(h, TK_F64, n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(di, TK_I32), tk_ptr(du, TK_U32), tk_ptr(df, TK_F32), tk_ptr(dh, TK_F16),
                    tk_ptr(d8, TK_I8), tk_ptr(dw, TK_I64), tk_ptr(dd, TK_F64), tk_i32((int)n),
                    tk_const("BLOCK", block)),
             4);
    double *of = h_download(h, TK_F32, df, 2 * n), *oh = h_download(h, TK_F16, dh, n);
    int64_t *o8 = h_download_int(h, TK_I8, d8, n), *ow = h_download_int(h, TK_I64, dw, 4 * n);
    double *od = h_download(h, TK_F64, dd, n);
    double *rf = h_malloc(h, 2 * n * sizeof(double)), *rh = h_malloc(h, n * sizeof(double));
    double *rd = h_malloc(h, n * sizeof(double));
    int64_t *r8 = h_malloc(h, n * sizeof(int64_t)), *rw = h_malloc(h, 4 * n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        rf[i] = (float)(int32_t)iv[i];
        rf[n + i] = (float)(uint32_t)uv[i];
        rh[i] = (double)(iv[i] % 1000);
        r8[i] = (int8_t)(uint8_t)iv[i];
        rw[i] = (int8_t)(uint8_t)iv[i];
        rw[n + i] = (uint8_t)iv[i];
        rw[2 * n + i] = (uint32_t)uv[i];
        rw[3 * n + i] = iv[i] * 4096;
        rd[i] = (double)iv[i];
    }
    h_check(h, "i32 -> fp32", of, rf, n, 0);
    h_check(h, "u32 -> fp32", of + n, rf + n, n, 0);
    h_check(h, "(i32 % 1000) -> fp16", oh, rh, n, 0);
    h_check_int(h, "i32 -> i8", o8, r8, n);
    h_check_int(h, "i32 -> i8 -> i64", ow, rw, n);
    h_check_int(h, "i32 -> u8 -> i64", ow + n, rw + n, n);
    h_check_int(h, "u32 -> i64", ow + 2 * n, rw + 2 * n, n);
    h_check_int(h, "i32 -> i64 * 4096", ow + 3 * n, rw + 3 * n, n);
    h_check(h, "i32 -> fp64", od, rd, n, 0);
    h_end(h);
}

static void floats_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "cast.floats.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "cast.tk", "cast_floats");
    double *d = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        d[i] = h_normal(h) * 300;
    /* Traps for double rounding: a hair off an fp16 halfway point (rounds
     * to it in fp32), and a hair off an fp32 halfway point. */
    for (size_t i = 0; i < n; i += 8) {
        double tie = halfway(h, false), hair = tie * 0x1p-40;
        d[i] = h_randint(h, 0, 1) ? tie + hair : tie - hair;
    }
    for (size_t i = 4; i < n; i += 8) {
        float f = (float)d[i];
        double up = nextafterf(f, INFINITY), tie = (f + up) / 2, hair = fabs(tie) * 0x1p-45;
        d[i] = h_randint(h, 0, 1) ? tie + hair : tie - hair;
    }
    double *hv = h_rand_array(h, TK_F16, n, -60000, 60000);
    double *bf = h_rand_array(h, TK_BF16, n, -1e30, 1e30);
    void *dd = h_upload(h, TK_F64, d, n), *dh = h_upload(h, TK_F16, hv, n);
    void *dbf = h_upload(h, TK_BF16, bf, n);
    void *dfo = h_output(h, TK_F32, 3 * n), *dho = h_output(h, TK_F16, n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dd, TK_F64), tk_ptr(dh, TK_F16), tk_ptr(dbf, TK_BF16),
                    tk_ptr(dfo, TK_F32), tk_ptr(dho, TK_F16), tk_i32((int)n),
                    tk_const("BLOCK", block)),
             4);
    double *fo = h_download(h, TK_F32, dfo, 3 * n), *ho = h_download(h, TK_F16, dho, n);
    double *rf = h_malloc(h, n * sizeof(double)), *rh = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        rf[i] = (float)d[i];
        rh[i] = h_round_to(TK_F16, d[i]);
    }
    h_check(h, "fp64 -> fp32", fo, rf, n, 0);
    h_check(h, "fp16 -> fp32", fo + n, hv, n, 0);
    h_check(h, "bf16 -> fp32", fo + 2 * n, bf, n, 0);
    h_check(h, "fp64 -> fp16", ho, rh, n, 0);
    h_end(h);
}

static void bitcast_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "cast.bitcast.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "cast.tk", "bitcasts");
    double *x = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = h_normal(h) * pow(2.0, (double)h_randint(h, -60, 60));
    double *hv = h_rand_array(h, TK_F16, n, -3, 3);
    void *dx = h_upload(h, TK_F32, x, n), *dh = h_upload(h, TK_F16, hv, n);
    void *dbits = h_output(h, TK_I32, n), *dnext = h_output(h, TK_F32, n);
    void *dhb = h_output(h, TK_I16, n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dh, TK_F16), tk_ptr(dbits, TK_I32),
                    tk_ptr(dnext, TK_F32), tk_ptr(dhb, TK_I16), tk_i32((int)n),
                    tk_const("BLOCK", block)),
             4);
    int64_t *bits = h_download_int(h, TK_I32, dbits, n), *hb = h_download_int(h, TK_I16, dhb, n);
    double *next = h_download(h, TK_F32, dnext, n);
    int64_t *rb = h_malloc(h, n * sizeof(int64_t)), *rhb = h_malloc(h, n * sizeof(int64_t));
    double *rn = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        float f = (float)x[i];
        int32_t b;
        memcpy(&b, &f, 4);
        rb[i] = b;
        b += 1;
        memcpy(&f, &b, 4);
        rn[i] = f;
        rhb[i] = (int16_t)h_f32_to_f16((float)hv[i]);
    }
    h_check_int(h, "fp32 -> i32 bits", bits, rb, n);
    h_check(h, "(bits + 1) -> fp32", next, rn, n, 0);
    h_check_int(h, "fp16 -> i16 bits", hb, rhb, n);
    h_end(h);
}

/* v rounded to nearest even with mant significant bits (11 for fp16, 8
 * for bf16), in integer arithmetic: the exact answer to compare with. */
static double round_int(int64_t v, int mant)
{
    uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    int top = 63;
    while (top > 0 && !(m >> top))
        top--;
    if (top >= mant) {
        int drop = top - mant + 1;
        uint64_t q = m >> drop, rest = m & (((uint64_t)1 << drop) - 1),
                 half = (uint64_t)1 << (drop - 1);
        q += rest > half || (rest == half && (q & 1));
        return (v < 0 ? -1.0 : 1.0) * ldexp((double)q, drop);
    }
    return (double)v;
}

/* int32 and int64 to fp16 / bf16: values past the formats' exact range,
 * with ties (2049, 2051 in fp16) among them, so one rounding is checked and
 * not a double one through fp32. fp16 stays below its overflow. */
static void ints_16_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "cast.ints_to_16.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "cast.tk", "cast_ints_16");
    int64_t *iv = h_malloc(h, n * sizeof(int64_t)), *lv = h_malloc(h, n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        iv[i] = i % 3 == 0 ? 2049 + 2 * (int64_t)(i % 64) : h_randint_nz(h, -65000, 65000);
        /* a hair above a bf16 tie that fp32 would round onto the tie */
        int64_t trap = ((int64_t)1 << (i % 8 < 4 ? 30 : 40)) * 257 / 256 + 1;
        lv[i] = i % 4 == 1 ? (i % 8 == 1 ? -trap : trap)
            : i % 2        ? h_randint_nz(h, INT32_MIN, INT32_MAX)
                           : h_randint_nz(h, -((int64_t)1 << 50), (int64_t)1 << 50);
    }
    void *di = h_upload_int(h, TK_I32, iv, n), *dl = h_upload_int(h, TK_I64, lv, n);
    void *dh = h_output(h, TK_F16, n), *db = h_output(h, TK_BF16, 2 * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(di, TK_I32), tk_ptr(dl, TK_I64), tk_ptr(dh, TK_F16), tk_ptr(db, TK_BF16),
                    tk_i32((int)n), tk_const("BLOCK", block)),
             4);
    double *oh = h_download(h, TK_F16, dh, n), *ob = h_download(h, TK_BF16, db, 2 * n);
    double *rh = h_malloc(h, n * sizeof(double)), *rb = h_malloc(h, 2 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        rh[i] = round_int(iv[i], 11);
        rb[i] = round_int(iv[i], 8);
        rb[n + i] = round_int(lv[i], 8);
    }
    h_check(h, "i32 -> fp16", oh, rh, n, 0);
    h_check(h, "i32 -> bf16", ob, rb, n, 0);
    h_check(h, "i64 -> bf16", ob + n, rb + n, n, 0);
    h_end(h);
}

/* Every byte value, signed and unsigned, to fp16 and bf16 (all exact),
 * many to a thread, as a dequantising GEMM widens its weights. */
static void bytes_16_case(H *h, size_t n, int block)
{
    h_begin(h, "cast.bytes_16");
    tk_kernel *k = h_kernel(h, "cast.tk", "cast_bytes_16");
    int64_t *sv = h_malloc(h, n * sizeof(int64_t)), *uv = h_malloc(h, n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        sv[i] = i < 256 ? (int64_t)i - 128 : h_randint_nz(h, -128, 127);
        uv[i] = i < 256 ? (int64_t)(255 - i) : h_randint_nz(h, 0, 255);
    }
    void *ds = h_upload_int(h, TK_I8, sv, n), *du = h_upload_int(h, TK_U8, uv, n);
    void *dh = h_output(h, TK_F16, 2 * n), *db = h_output(h, TK_BF16, 2 * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(ds, TK_I8), tk_ptr(du, TK_U8), tk_ptr(dh, TK_F16), tk_ptr(db, TK_BF16),
                    tk_i32((int)n), tk_const("BLOCK", block)),
             4);
    double *oh = h_download(h, TK_F16, dh, 2 * n), *ob = h_download(h, TK_BF16, db, 2 * n);
    double *r = h_malloc(h, 2 * n * sizeof(double)), *rb = h_malloc(h, 2 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        r[i] = (double)sv[i];
        r[n + i] = (double)uv[i];
        rb[i] = (double)sv[i];
        rb[n + i] = round_int(uv[i], 8); /* 8 significant bits: exact too */
    }
    h_check(h, "i8 -> fp16", oh, r, n, 0);
    h_check(h, "u8 -> fp16", oh + n, r + n, n, 0);
    h_check(h, "i8 -> bf16", ob, rb, n, 0);
    h_check(h, "u8 -> bf16", ob + n, rb + n, n, 0);
    h_end(h);
}

/* A loop widening fp16 rows to fp32, and fp32 values halved where an int8
 * mask says so: loads of a narrower type than the store's, where the store
 * crosses to a layout of its own. Row length and n are multiples of 16 (the
 * runs vectorise) but not of the block (the masks cut the last one). */
static void store_cross_case(H *h, int rows, int ncols, size_t n)
{
    if (!h_begin(h, "cast.store_cross.%dx%d.n%zu", rows, ncols, n))
        return;
    tk_kernel *kr = h_kernel(h, "cast.tk", "cast_rows_widen");
    tk_kernel *kb = h_kernel(h, "cast.tk", "cast_byte_mask");
    size_t m = (size_t)rows * (size_t)ncols;
    double *x = h_rand_array(h, TK_F16, m, -100, 100);
    void *dx = h_upload(h, TK_F16, x, m), *dy = h_output(h, TK_F32, m);
    h_launch(h, kr, h_grid((unsigned)rows, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F16), tk_ptr(dy, TK_F32), tk_i32(ncols), tk_const("BLOCK", 2048)),
             8);
    double *y = h_download(h, TK_F32, dy, m), *r = h_malloc(h, m * sizeof(double));
    for (size_t i = 0; i < m; i++)
        r[i] = 2 * x[i];
    h_check(h, "fp16 rows * 2 -> fp32", y, r, m, 0);
    double *v = h_rand_array(h, TK_F32, n, -100, 100);
    int64_t *kv = h_malloc(h, n * sizeof(int64_t));
    double *rv = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        kv[i] = h_randint(h, 0, 3) == 0 ? h_randint(h, -128, 127) : 0;
        rv[i] = kv[i] ? (double)(float)(v[i] * 0.5) : v[i];
    }
    void *dv = h_upload(h, TK_F32, v, n), *dk = h_upload_int(h, TK_I8, kv, n);
    h_launch(h, kb, h_grid((unsigned)h_cdiv(n, 4096), 1, 1),
             H_ARGS(tk_ptr(dv, TK_F32), tk_ptr(dk, TK_I8), tk_i32((int)n), tk_const("BLOCK", 4096)),
             8);
    h_check(h, "x halved where an int8 mask is set", h_download(h, TK_F32, dv, n), rv, n, 0);
    h_end(h);
}

void cases_cast(H *h)
{
    size_t n = h->gpu ? 100003 : 4001;
    from_f32_case(h, n, 256);
    from_f32_case(h, 100, 16);
    ints_case(h, n, 128);
    ints_16_case(h, n, 256);
    bytes_16_case(h, n, 2048);
    floats_case(h, n, 512);
    bitcast_case(h, n, 256);
    store_cross_case(h, h->gpu ? 37 : 3, 3008, h->gpu ? 100016 : 4000);
}
