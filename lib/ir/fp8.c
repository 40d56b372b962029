/* ir/fp8.c: the two 8-bit float formats, bit by bit. e4m3fn (fp8e4nv):
 * 4 exponent bits of bias 7, 3 fraction bits, no infinities, S.1111.111 is
 * NaN. e5m2 (fp8e5): 5 exponent bits of bias 15, 2 fraction bits, IEEE
 * infinities and NaNs. Assumes IEEE doubles and round-to-nearest; every
 * fp8 value is exact in a double (and in a float), so encoding a double
 * rounds once. Guarantees the results of PTX's cvt.rn.satfinite.{e4m3x2,
 * e5m2x2} and cvt.rn.f16x2.{e4m3x2,e5m2x2}, which the interpreter, constant
 * folding and the host helpers share. */
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
    return (Fp8Format){3, 7, -6, 448.0, 0x7e};
}

double fp8_max(DType t) { return format_of(t).max; }

uint8_t fp8_encode(DType t, double x)
{
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
    return fp8_encode(t, x);
}
