/* ir/fp8.c: the three 8-bit float formats, bit by bit. e4m3fn (fp8e4nv):
 * 4 exponent bits of bias 7, 3 fraction bits, no infinities, S.1111.111 is
 * NaN. e5m2 (fp8e5): 5 exponent bits of bias 15, 2 fraction bits, IEEE
 * infinities and NaNs. e4m3 of bias 15 (fp8e4b15): 4 exponent bits of bias
 * 15, 3 fraction bits, neither infinities nor NaN (S.1111.111 is 1.875), so
 * every code is an fp16 value whose low 7 bits are zero. Assumes IEEE
 * doubles and round-to-nearest; every fp8 value is exact in a double (and
 * in a float), so encoding a double rounds once. Guarantees the results of
 * PTX's cvt.rn.satfinite.{e4m3x2,e5m2x2} and cvt.rn.f16x2.{e4m3x2,e5m2x2},
 * and of Triton's fp8e4b15 conversions (codegen/fp8.c builds the same),
 * which the interpreter, constant folding and the host helpers share. */
#include "ir/ir.h"

#include <math.h>

typedef struct Fp8Format {
    int mant; /* fraction bits */
    int bias;
    int emin;   /* exponent of the smallest normal: 1 - bias */
    double max; /* largest finite value */
    uint8_t max_bits;
} Fp8Format;

static Fp8Format format_of(DType t)
{
    if (t == DT_F8E5)
        return (Fp8Format){2, 15, -14, 57344.0, 0x7b};
    if (t == DT_F8E4B15)
        return (Fp8Format){3, 15, -14, 1.875, 0x7f};
    return (Fp8Format){3, 7, -6, 448.0, 0x7e};
}

double fp8_max(DType t) { return format_of(t).max; }

/* The fp16 bits of a (0 <= a < 2), rounded toward zero. */
static unsigned f16_bits_toward_zero(double a)
{
    if (a < 0x1p-14) /* zero or subnormal: units of 2^-24 */
        return (unsigned)floor(scalbn(a, 24));
    int e = ilogb(a);
    unsigned frac = (unsigned)floor(scalbn(a, 10 - e)); /* 1024 .. 2047 */
    return (unsigned)(e + 15) << 10 | (frac - 1024);
}

/* Triton's conversion to fp8e4b15: x truncated to fp16 (a no-op for an
 * fp16 value), then on the fp16 bits h of the magnitude clamped to 1.75
 * (0x3f00), (h + 0x40) >> 7 drops 7 fraction bits with ties away from
 * zero, the fp16 exponent field becoming the code's. */
static uint8_t b15_encode(double x)
{
    uint8_t sign = signbit(x) ? 0x80 : 0;
    double a = fabs(x);
    if (isnan(a) || a >= 1.75)
        return sign | 0x7e;
    return sign | (uint8_t)((f16_bits_toward_zero(a) + 0x40) >> 7);
}

uint8_t fp8_encode(DType t, double x)
{
    if (t == DT_F8E4B15)
        return b15_encode(x);
    Fp8Format f = format_of(t);
    uint8_t sign = signbit(x) ? 0x80 : 0;
    if (isnan(x))
        return sign | 0x7f;
    double a = fabs(x);
    if (a > f.max) /* satfinite: infinities and overflow clamp */
        return sign | f.max_bits;
    if (a == 0)
        return sign;
    int e = ilogb(a);
    if (e < f.emin)
        e = f.emin;
    /* units of the last place at exponent e; nearbyint rounds ties to even */
    double units = nearbyint(scalbn(a, f.mant - e));
    if (units >= (double)(2 << f.mant)) /* rounded up into the next binade */
        units /= 2, e++;
    if (scalbn(units, e - f.mant) > f.max)
        return sign | f.max_bits;
    int n = (int)units;
    if (n < (1 << f.mant)) /* subnormal (e == emin): exponent field 0 */
        return sign | (uint8_t)n;
    return sign | (uint8_t)((e + f.bias) << f.mant) | (uint8_t)(n - (1 << f.mant));
}

double fp8_decode(DType t, uint8_t bits)
{
    Fp8Format f = format_of(t);
    int ebits = 7 - f.mant;
    int exp = (bits >> f.mant) & ((1 << ebits) - 1);
    int frac = bits & ((1 << f.mant) - 1);
    double sign = bits & 0x80 ? -1.0 : 1.0;
    if (t == DT_F8E4 && exp == 15 && frac == 7)
        return copysign(NAN, sign);
    if (t == DT_F8E5 && exp == 31)
        return frac ? copysign(NAN, sign) : sign * INFINITY;
    if (exp == 0)
        return sign * scalbn(frac, f.emin - f.mant);
    return sign * scalbn(frac + (1 << f.mant), exp - f.bias - f.mant);
}

double fp8_round(DType t, double x) { return fp8_decode(t, fp8_encode(t, x)); }

uint8_t fp8_bits(DType t, double x)
{
    if (t == DT_F8E5 && isinf(x))
        return signbit(x) ? 0xfc : 0x7c;
    if (t == DT_F8E4B15 && fabs(x) == 1.875) /* beyond what conversions give */
        return signbit(x) ? 0xff : 0x7f;
    return fp8_encode(t, x);
}
