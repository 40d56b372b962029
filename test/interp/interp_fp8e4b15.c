/* interp_fp8e4b15.c: fp8e4b15 (ir/fp8.c) as the interpreter, constant
 * folding and the host helpers use it, against a model of Triton 3.6's own
 * conversion written here on bits, as its PTX computes it: fp32 truncated
 * to fp16, then on the fp16 bits h (m the magnitude bits) the code is
 * (sign(h) | (min(m, 0x3f00) * 2 + 0x80)) >> 8. Every fp16 value and a
 * sweep of fp32 values encode as the model does; every code decodes to its
 * fields' value and back; ties go away from zero; NaN and infinities clamp
 * to 1.75; the interpreter's casts and memory bits agree. */
#include "interp/internal.h"
#include "tk/tk.h"

#include <math.h>
#include <string.h>

#include "check.h"

/* ---- the model ------------------------------------------------------------------ */

/* fp32 bits -> fp16 bits rounded toward zero (NaN stays a NaN of x's sign). */
static uint16_t f16_toward_zero(uint32_t u)
{
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t a = u & 0x7fffffff, e = a >> 23;
    if (a > 0x7f800000)
        return sign | 0x7e00;
    if (a == 0x7f800000)
        return sign | 0x7c00;
    if (a >= 0x47800000) /* 65536 and up: toward zero stops at 65504 */
        return sign | 0x7bff;
    if (a >= 0x38800000) /* normal in fp16: drop 13 fraction bits, rebias */
        return sign | (uint16_t)((a >> 13) - (112u << 10));
    if (e < 103) /* below 2^-24 */
        return sign;
    return sign | (uint16_t)(((a & 0x7fffff) | 0x800000) >> (126 - e)); /* units of 2^-24 */
}

static uint8_t model_from_f16(uint16_t h)
{
    uint32_t m = h & 0x7fff;
    if (m > 0x3f00) /* min.f16x2 with 1.75: NaN gives the other operand too */
        m = 0x3f00;
    return (uint8_t)(((h & 0x8000u) | (m * 2 + 0x80)) >> 8);
}

static double f16_value(uint16_t h) { return interp_f16_to_float(h); }

static float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* A code's value from its fields: 4 exponent bits of bias 15, 3 fraction
 * bits, exponent 0 subnormal, no specials. */
static double by_fields(unsigned c)
{
    unsigned e = (c >> 3) & 15, m = c & 7;
    double s = (c & 0x80) ? -1 : 1;
    return e ? s * (8 + m) * ldexp(1, (int)e - 18) : s * m * ldexp(1, -17);
}

/* ---- the checks ---------------------------------------------------------------- */

static void check_decode(void)
{
    for (unsigned c = 0; c < 256; c++) {
        double v = fp8_decode(DT_F8E4B15, (uint8_t)c);
        uint16_t h = (uint16_t)(((c & 0x80) << 8) | ((c & 0x7f) << 7));
        CHECK(v == by_fields(c) && signbit(v) == !!(c & 0x80));
        CHECK(v == f16_value(h) && signbit(v) == signbit(f16_value(h)));
        CHECK(fp8_bits(DT_F8E4B15, v) == c); /* memory keeps every code, 1.875 too */
        if ((c & 0x7f) != 0x7f)              /* no conversion gives 1.875 */
            CHECK(fp8_encode(DT_F8E4B15, v) == c);
        CHECK(tk_fp8e4b15_to_f32((uint8_t)c) == (float)v);
    }
    CHECK(fp8_decode(DT_F8E4B15, 0x7f) == 1.875 && fp8_decode(DT_F8E4B15, 0xff) == -1.875);
    CHECK(fp8_encode(DT_F8E4B15, 1.875) == 0x7e && fp8_max(DT_F8E4B15) == 1.875);
}

static void check_every_f16(void)
{
    int bad = 0;
    for (unsigned h = 0; h < 0x10000 && bad < 5; h++) {
        uint8_t want = model_from_f16((uint16_t)h), got = fp8_encode(DT_F8E4B15, f16_value(h));
        if (got != want) {
            fprintf(stderr, "fp16 0x%04x encodes to 0x%02x, the model gives 0x%02x\n", h, got,
                    want);
            failures++, bad++;
        }
    }
}

static void check_f32(uint32_t u, int *bad)
{
    float x = f32_of(u);
    uint8_t want = model_from_f16(f16_toward_zero(u));
    uint8_t got = fp8_encode(DT_F8E4B15, x), host = tk_f32_to_fp8e4b15(x);
    if ((got != want || host != want) && (*bad)++ < 5) {
        fprintf(stderr,
                "fp32 0x%08x (%.9g) encodes to 0x%02x (host 0x%02x), the model gives 0x%02x\n", u,
                x, got, host, want);
        failures++;
    }
}

/* Every 211th fp32 bit pattern, and each tie between neighbouring codes
 * with the fp32 values either side of it. */
static void check_f32_sweep(void)
{
    int bad = 0;
    for (uint64_t u = 0; u < 0x100000000ull; u += 211)
        check_f32((uint32_t)u, &bad);
    for (unsigned c = 0; c < 0x7f; c++) {
        float tie = (float)((by_fields(c) + by_fields(c + 1)) / 2);
        uint32_t t;
        memcpy(&t, &tie, 4);
        for (uint32_t d = 0; d < 3; d++) {
            check_f32(t - 1 + d, &bad);
            check_f32((t - 1 + d) | 0x80000000u, &bad);
        }
    }
}

static void check_specials(void)
{
    static const struct {
        double x;
        uint8_t code;
    } cases[] = {
        {0.0, 0x00},       {-0.0, 0x80},      {1.0, 0x78},        {-1.0, 0xf8},
        {1.75, 0x7e},      {1.8, 0x7e},       {-1.8, 0xfe},       {1.8125, 0x7e},
        {1e30, 0x7e},      {INFINITY, 0x7e},  {-INFINITY, 0xfe},  {NAN, 0x7e},
        {-NAN, 0xfe},      {0x1p-14, 0x08},   {0x1p-17, 0x01},    {0x1p-18, 0x01},
        {0x1.fp-19, 0x00}, {0x1.8p-17, 0x02}, {-0x1.8p-17, 0x82}, {0x1p-30, 0x00},
        {1.0625, 0x79},    {1.1875, 0x7a},    {0.3, 0x6a},        {-0.3, 0xea},
        {0x1.ep-15, 0x08}, {0x1.cp-15, 0x07}, {65504.0, 0x7e},    {1.71875, 0x7e},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint8_t got = fp8_encode(DT_F8E4B15, cases[i].x);
        if (got != cases[i].code) {
            fprintf(stderr, "%.9g encodes to 0x%02x, want 0x%02x\n", cases[i].x, got,
                    cases[i].code);
            failures++;
        }
    }
    /* fp32 rounds toward zero to fp16 first: just below the tie 1.0625 the
     * fp16 value is below it too (to nearest it would be the tie, which
     * goes up to 1.125) */
    CHECK(fp8_encode(DT_F8E4B15, 1.0625f - 0x1p-23f) == 0x78);
    CHECK(fp8_encode(DT_F8E4B15, 0x1.8p-17f - 0x1p-40f) == 0x01); /* 1.5 units less a hair */
    CHECK(fp8_round(DT_F8E4B15, 1.8) == 1.75 && fp8_round(DT_F8E4B15, -0.3) == -0.3125);
}

/* The interpreter's casts (fp32 and fp16 in, any float out) and the bits
 * its memory holds. */
static void check_interp(void)
{
    float src[5] = {1.8f, -0.0f, 1.0625f - 0x1p-23f, INFINITY, 0x1p-18f}, r[5];
    interp_cast(DT_F32, src, DT_F8E4B15, r, 5);
    CHECK(r[0] == 1.75f && r[1] == 0 && signbit(r[1]) && r[2] == 1.0f && r[3] == 1.75f);
    CHECK(r[4] == 0x1p-17f);
    float half = interp_f16_to_float(0x3c40), out; /* 1.0625, a tie: away from zero */
    interp_cast(DT_F16, &half, DT_F8E4B15, &out, 1);
    CHECK(out == 1.125f);
    float top = (float)fp8_decode(DT_F8E4B15, 0xff), h, b, e;
    double d;
    interp_cast(DT_F8E4B15, &top, DT_F16, &h, 1);
    interp_cast(DT_F8E4B15, &top, DT_BF16, &b, 1);
    interp_cast(DT_F8E4B15, &top, DT_F64, &d, 1);
    CHECK(h == -1.875f && b == -1.875f && d == -1.875);
    float tiny = (float)fp8_decode(DT_F8E4B15, 0x03); /* 3 * 2^-17: e4m3's least is 2^-9 */
    interp_cast(DT_F8E4B15, &tiny, DT_F8E4, &e, 1);
    CHECK(e == 0);
    float arr[2];
    interp_from_bits(DT_F8E4B15, arr, 0, 0x7f);
    interp_from_bits(DT_F8E4B15, arr, 1, 0x80);
    CHECK(arr[0] == 1.875f && arr[1] == 0 && signbit(arr[1]));
    CHECK(interp_to_bits(DT_F8E4B15, arr, 0) == 0x7f && interp_to_bits(DT_F8E4B15, arr, 1) == 0x80);
    CHECK(interp_round_to(DT_F8E4B15, 1.8) == 1.75);
}

int main(void)
{
    check_decode();
    check_every_f16();
    check_f32_sweep();
    check_specials();
    check_interp();
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    return failures != 0;
}
