/* interp_fp8.c: the fp8 formats (ir/fp8.c) as the interpreter, constant
 * folding and the host helpers use them: every one of the 256 codes of each
 * format decodes to the value its fields give; encoding rounds to nearest
 * even (checked against a search over all codes), saturates as
 * cvt.rn.satfinite, keeps NaN and the sign of zero; and the interpreter's
 * casts from fp64 round once. */
#include "interp/internal.h"
#include "interp/internal.h"
#include "tk/tk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* The value of a code from its fields, written out independently of ir/fp8.c. */
static double by_fields(DType t, unsigned c)
{
    int ebits = t == DT_F8E4 ? 4 : 5, mbits = 7 - ebits, bias = t == DT_F8E4 ? 7 : 15;
    unsigned e = (c >> mbits) & ((1u << ebits) - 1), m = c & ((1u << mbits) - 1);
    double s = (c & 0x80) ? -1 : 1;
    if (t == DT_F8E4 && e == 15 && m == 7)
        return NAN;
    if (t == DT_F8E5 && e == 31)
        return m ? NAN : s * INFINITY;
    if (e == 0)
        return s * m * pow(2, 1 - bias - mbits);
    return s * (1 + m / (double)(1 << mbits)) * pow(2, (int)e - bias);
}

static void check_decode(DType t)
{
    for (unsigned c = 0; c < 256; c++) {
        double want = by_fields(t, c), got = fp8_decode(t, (uint8_t)c);
        if (isnan(want)) {
            CHECK(isnan(got));
            continue;
        }
        CHECK(got == want && signbit(got) == signbit(want));
        /* every finite code encodes back to itself (-0 included), and
         * every code is kept by the memory form */
        CHECK(isinf(got) || fp8_encode(t, got) == c);
        CHECK(fp8_bits(t, got) == c);
    }
}

/* Round to nearest even by searching every finite code: the reference. */
static uint8_t nearest(DType t, double x)
{
    uint8_t sign = signbit(x) ? 0x80 : 0;
    double a = fabs(x), best = INFINITY;
    unsigned pick = 0;
    if (a > fp8_max(t))
        a = fp8_max(t);
    for (unsigned c = 0; c < 0x80; c++) {
        double v = by_fields(t, c);
        if (isnan(v) || isinf(v))
            continue;
        double d = fabs(v - a);
        if (d < best || (d == best && (c & 1) == 0)) {
            best = d;
            pick = c;
        }
    }
    return sign | (uint8_t)pick;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1p-53;
}

static void check_rounding(DType t)
{
    /* every midpoint between neighbours, and a hair either side of it */
    for (unsigned c = 0; c + 1 < 0x80; c++) {
        double lo = by_fields(t, c), hi = by_fields(t, c + 1);
        if (isnan(hi) || isinf(hi))
            break;
        double mid = (lo + hi) / 2, eps = (hi - lo) * 0x1p-20;
        uint8_t even = (c & 1) ? (uint8_t)(c + 1) : (uint8_t)c;
        CHECK(fp8_encode(t, mid) == even);
        CHECK(fp8_encode(t, -mid) == (0x80 | even));
        CHECK(fp8_encode(t, mid - eps) == c);
        CHECK(fp8_encode(t, mid + eps) == c + 1);
    }
    /* random values over the whole range, both signs */
    for (int i = 0; i < 200000; i++) {
        double x = ldexp(urand() + 0.5, (int)(urand() * 44) - 26) * (urand() < 0.5 ? -1 : 1);
        uint8_t want = nearest(t, x), got = fp8_encode(t, x);
        if (got != want) {
            fprintf(stderr, "%s: %.17g encodes to 0x%02x, want 0x%02x\n", dtype_name(t), x, got,
                    want);
            failures++;
            return;
        }
    }
}

static void check_specials(void)
{
    /* e4m3: max 448 (0x7e); beyond it, infinities included, saturates */
    CHECK(fp8_encode(DT_F8E4, 448) == 0x7e);
    CHECK(fp8_encode(DT_F8E4, 449) == 0x7e);
    CHECK(fp8_encode(DT_F8E4, 464) == 0x7e); /* the midpoint to the would-be 480 */
    CHECK(fp8_encode(DT_F8E4, 1e30) == 0x7e);
    CHECK(fp8_encode(DT_F8E4, INFINITY) == 0x7e);
    CHECK(fp8_encode(DT_F8E4, -INFINITY) == 0xfe);
    CHECK(fp8_encode(DT_F8E4, NAN) == 0x7f);
    CHECK(fp8_encode(DT_F8E4, -NAN) == 0xff);
    CHECK(fp8_decode(DT_F8E4, 0x38) == 1.0 && fp8_decode(DT_F8E4, 0x7e) == 448.0);
    CHECK(isnan(fp8_decode(DT_F8E4, 0x7f)) && isnan(fp8_decode(DT_F8E4, 0xff)));
    /* e4m3 subnormals: units of 2^-9 */
    CHECK(fp8_decode(DT_F8E4, 0x01) == 0x1p-9 && fp8_decode(DT_F8E4, 0x07) == 7 * 0x1p-9);
    CHECK(fp8_decode(DT_F8E4, 0x08) == 0x1p-6);
    CHECK(fp8_encode(DT_F8E4, 0x1p-10) == 0x00);  /* half the least: tie to 0 */
    CHECK(fp8_encode(DT_F8E4, -0x1p-10) == 0x80); /* keeps the sign */
    CHECK(fp8_encode(DT_F8E4, 0x1.8p-10) == 0x01);
    CHECK(fp8_encode(DT_F8E4, 3 * 0x1p-10) == 0x02);  /* 1.5 units: tie to even 2 */
    CHECK(fp8_encode(DT_F8E4, 15 * 0x1p-10) == 0x08); /* 7.5 units: up to the least normal */
    CHECK(fp8_encode(DT_F8E4, 1e-30) == 0x00 && fp8_encode(DT_F8E4, -0.0) == 0x80);
    /* e5m2: max 57344 (0x7b), inf 0x7c; .satfinite clamps inf as well */
    CHECK(fp8_encode(DT_F8E5, 57344) == 0x7b);
    CHECK(fp8_encode(DT_F8E5, 61440) == 0x7b);
    CHECK(fp8_encode(DT_F8E5, 1e9) == 0x7b);
    CHECK(fp8_encode(DT_F8E5, INFINITY) == 0x7b && fp8_encode(DT_F8E5, -INFINITY) == 0xfb);
    CHECK(fp8_encode(DT_F8E5, NAN) == 0x7f);
    CHECK(isinf(fp8_decode(DT_F8E5, 0x7c)) && fp8_decode(DT_F8E5, 0xfc) < 0);
    CHECK(isnan(fp8_decode(DT_F8E5, 0x7d)) && isnan(fp8_decode(DT_F8E5, 0xfe)));
    CHECK(fp8_decode(DT_F8E5, 0x3c) == 1.0 && fp8_decode(DT_F8E5, 0x01) == 0x1p-16);
    CHECK(fp8_encode(DT_F8E5, 0x1p-17) == 0x00 && fp8_encode(DT_F8E5, 0x1.8p-16) == 0x02);
    /* ties to even in the normal range: 1.0625 lies between 1.0 (0x38) and 1.125 */
    CHECK(fp8_encode(DT_F8E4, 1.0625) == 0x38 && fp8_encode(DT_F8E4, 1.1875) == 0x3a);
    CHECK(fp8_encode(DT_F8E5, 1.125) == 0x3c && fp8_encode(DT_F8E5, 1.375) == 0x3e);
}

/* The interpreter's casts, memory bits and the public host helpers. */
static void check_interp(void)
{
    /* fp64 rounds once: 1.0625 + 2^-40 is above the tie, so 1.125 (through
     * fp32 it would become the tie 1.0625 and round to even, 1.0) */
    double d = 1.0625 + 0x1p-40;
    float out;
    interp_cast(DT_F64, &d, DT_F8E4, &out, 1);
    CHECK(out == 1.125f);
    float f[4] = {300.0f, -0.1f, 1e-6f, INFINITY}, r[4];
    interp_cast(DT_F32, f, DT_F8E4, r, 4);
    CHECK(r[0] == 288.0f && r[1] == -0.1015625f && r[2] == 0 && r[3] == 448.0f);
    interp_cast(DT_F32, f, DT_F8E5, r, 4);
    CHECK(r[0] == 320.0f && r[1] == -0.09375f && r[2] == 0 && r[3] == 57344.0f);
    /* fp8 -> fp16/bf16/fp64 are exact */
    float e5 = (float)fp8_decode(DT_F8E5, 0x01), h;
    interp_cast(DT_F8E5, &e5, DT_F16, &h, 1);
    CHECK(h == 0x1p-16f);
    interp_cast(DT_F8E5, &e5, DT_BF16, &h, 1);
    CHECK(h == 0x1p-16f);
    /* fp16 and bf16 sources round from their exact values */
    float half = interp_f16_to_float(0x3c40); /* 1.0625 in fp16: a tie in e4m3 */
    interp_cast(DT_F16, &half, DT_F8E4, &out, 1);
    CHECK(out == 1.0f);
    float arr[2];
    interp_from_bits(DT_F8E4, arr, 0, 0xb9);
    interp_from_bits(DT_F8E5, arr, 1, 0x7c);
    CHECK(arr[0] == -1.125f && isinf(arr[1]));
    CHECK(interp_to_bits(DT_F8E4, arr, 0) == 0xb9 && interp_to_bits(DT_F8E5, arr, 1) == 0x7c);
    CHECK(tk_f32_to_fp8e4nv(-448.0f) == 0xfe && tk_fp8e4nv_to_f32(0x7e) == 448.0f);
    CHECK(tk_f32_to_fp8e5(0.0f) == 0 && tk_fp8e5_to_f32(0x7b) == 57344.0f);
}

int main(void)
{
    check_decode(DT_F8E4);
    check_decode(DT_F8E5);
    check_rounding(DT_F8E4);
    check_rounding(DT_F8E5);
    check_specials();
    check_interp();
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    return failures != 0;
}
