/* tkc_values.c: the numbers of `tkc -run` buffers and scalars: a fixed,
 * portable random stream for rand/randn (no libm: tkc links only libtk),
 * and integers and floats read from the command line, checked against the
 * type that must hold them. */
#include "tkc_values.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "tkc_dtype.h"

/* splitmix64: a fixed, portable stream for rand/randn buffers. */
uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
double rng_uniform(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1p-53; }
/* Box-Muller without libm (tkc links only libtk): log by atanh series,
 * cos by Taylor series, sqrt by Newton; accurate to ~1e-15. */
static double series_log(double x)
{
    int e = 0;
    while (x >= 2)
        x /= 2, e++;
    while (x < 1)
        x *= 2, e--;
    double s = (x - 1) / (x + 1), s2 = s * s, term = s, sum = 0;
    for (int k = 1; k < 60; k += 2, term *= s2)
        sum += term / k;
    return 2 * sum + e * 0.6931471805599453;
}
static double series_cos(double t) /* t in [0, 2 pi) */
{
    t -= 3.141592653589793; /* cos(t + pi) = -cos(t) */
    double term = 1, sum = 1;
    for (int k = 1; k < 30; k++) {
        term *= -t * t / ((2 * k - 1) * (2 * k));
        sum += term;
    }
    return -sum;
}
static double newton_sqrt(double x)
{
    double y = x > 1 ? x : 1;
    for (int i = 0; i < 60; i++)
        y = 0.5 * (y + x / y);
    return y;
}
double rng_normal(uint64_t *s)
{
    double u1 = rng_uniform(s), u2 = rng_uniform(s);
    return newton_sqrt(-2.0 * series_log(u1 > 0 ? u1 : 0x1p-53)) *
        series_cos(6.283185307179586 * u2);
}

/* A float; *overflow when it is finite as written but beyond fp64 (an
 * underflow to 0 or a subnormal is no error, as in Python). */
bool parse_double(const char *s, double *out, bool *overflow)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    *overflow = errno == ERANGE && (*out > 1 || *out < -1);
    return *s && !*end && (!errno || errno == ERANGE);
}

/* The values an integer type holds. */
static void int_range(tk_dtype t, int64_t *lo, uint64_t *hi)
{
    int bits = (int)dt_size(t) * 8;
    if (t == TK_I1) {
        *lo = 0;
        *hi = 1;
    } else if (is_signed(t)) {
        *hi = bits == 64 ? (uint64_t)INT64_MAX : (UINT64_C(1) << (bits - 1)) - 1;
        *lo = -(int64_t)*hi - 1;
    } else {
        *lo = 0;
        *hi = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    }
}

/* An integer written in s (decimal, 0x..., as strtoll reads them) kept
 * exactly in *bits (two's complement); false when s is not an integer.
 * *fits says whether type t holds it. */
bool parse_int_value(const char *s, tk_dtype t, uint64_t *bits, bool *fits)
{
    int64_t lo;
    uint64_t hi;
    int_range(t, &lo, &hi);
    char *end;
    errno = 0;
    if (*s == '-') {
        long long v = strtoll(s, &end, 0);
        *fits = !errno && v >= lo;
        *bits = (uint64_t)v;
    } else {
        unsigned long long v = strtoull(s, &end, 0);
        *fits = !errno && v <= hi;
        *bits = v;
    }
    return *s && end != s && !*end;
}

/* A float value for integer type t truncates toward zero, as numpy's
 * casts do; NaN, infinities and values beyond t do not fit. */
bool double_to_int(double x, tk_dtype t, uint64_t *bits)
{
    int64_t lo;
    uint64_t hi;
    int_range(t, &lo, &hi);
    bool above_lo = lo == INT64_MIN ? x >= -0x1p63 : x > (double)lo - 1.0;
    if (!(above_lo && x < (double)hi + 1.0)) /* false for NaN too */
        return false;
    *bits = x < 0 ? (uint64_t)(int64_t)x : (uint64_t)x;
    return true;
}

/* Without libm (tkc links only libtk): false for infinities and NaN. */
static bool is_finite(double x) { return x - x == 0; }

/* Whether x, finite as written, stays finite in float type t; infinities
 * and NaN written as such are kept. fp8e4nv has no infinity: beyond 464 its
 * conversion would saturate to 448, a silent change. fp8e4b15 has neither
 * infinity nor NaN, and from the midpoint 1.8125 on it clamps to 1.75. */
bool float_fits(double x, tk_dtype t)
{
    double m = x < 0 ? -x : x;
    switch (t) {
    case TK_F8E4NV: return !is_finite(x) || m <= 464;
    case TK_F8E5: return !is_finite(x) || m < 61440;
    case TK_F8E4B15: return m < 1.8125; /* false for NaN */
    case TK_F16: return !is_finite(x) || is_finite(tk_f16_to_f32(tk_f32_to_f16((float)x)));
    case TK_BF16: return !is_finite(x) || is_finite(tk_bf16_to_f32(tk_f32_to_bf16((float)x)));
    case TK_F32: return !is_finite(x) || is_finite((float)x);
    default: return true;
    }
}
