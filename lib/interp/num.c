/* interp/num.c: the interpreter's number formats: fp16/bf16/tf32 rounding
 * written out bit by bit, integer wrap-around at a dtype's width, and the
 * language's casts (fp8 through ir/fp8.c). Assumes IEEE binary32/64 C floats with round-to-nearest;
 * guarantees results bit-identical to the PTX conversions (cvt.rn for floats,
 * cvt.rz where a cast asks, cvt.rzi.sat for float -> int, NaN -> 0). */
#include "interp/internal.h"
#include "tk/tk.h"

#include <math.h>
#include <string.h>

/* ---- half and bfloat16 ------------------------------------------------------ */

float interp_f16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) { /* zero or subnormal: mant * 2^-24 is exact in float */
        float v = (float)mant * 0x1p-24f;
        return sign ? -v : v;
    }
    if (exp == 31)
        bits = sign | 0x7f800000 | (mant << 13);
    else
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t interp_float_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffff;
    if (ax > 0x7f800000)
        return sign | 0x7e00; /* NaN stays a (quiet) NaN */
    if (ax >= 0x477ff000)     /* >= 65520 (and inf) rounds to inf */
        return sign | 0x7c00;
    if (ax < 0x38800000) { /* below 2^-14: a subnormal half, unit 2^-24 */
        float a;
        memcpy(&a, &ax, 4);
        return sign | (uint16_t)nearbyintf(a * 0x1p24f); /* 0x400 encodes 2^-14 */
    }
    uint32_t v = ax - 0x38000000; /* rebias the exponent from 127 to 15 */
    v += 0xfff + ((v >> 13) & 1); /* round to nearest, ties to even */
    return sign | (uint16_t)(v >> 13);
}

float interp_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t interp_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

float interp_round_tf32(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7f800000) == 0x7f800000)
        return f;
    x = (x + 0x1000) & 0xffffe000u; /* 13 bits dropped, ties away from zero */
    memcpy(&f, &x, 4);
    return f;
}

/* Rounds a double to a format with `mant` fraction bits, minimum normal
 * exponent emin and largest finite value maxv, in one step (no double
 * rounding through float). */
static double round_format(double x, int mant, int emin, double maxv)
{
    if (x == 0 || isnan(x) || isinf(x))
        return x;
    int e = ilogb(x);
    if (e < emin)
        e = emin;
    double r = scalbn(nearbyint(scalbn(x, mant - e)), e - mant);
    return fabs(r) > maxv ? copysign(INFINITY, x) : r;
}

double interp_round_to(DType dt, double x)
{
    switch (dt) {
    case DT_F16: return round_format(x, 10, -14, 65504.0);
    case DT_BF16: return round_format(x, 7, -126, 0x1.fep127);
    case DT_F32: return (float)x;
    case DT_F8E4:
    case DT_F8E5:
    case DT_F8E4B15: return fp8_round(dt, x);
    default: return x;
    }
}

void interp_round_array(DType dt, float *v, int64_t n)
{
    if (dt == DT_F16)
        for (int64_t i = 0; i < n; i++)
            v[i] = interp_f16_to_float(interp_float_to_f16(v[i]));
    else if (dt == DT_BF16)
        for (int64_t i = 0; i < n; i++)
            v[i] = interp_bf16_to_float(interp_float_to_bf16(v[i]));
}

/* ---- integers ------------------------------------------------------------------ */

int64_t interp_wrap(DType dt, int64_t v)
{
    switch (dt) {
    case DT_I1: return v & 1;
    case DT_I8: return (int8_t)v;
    case DT_I16: return (int16_t)v;
    case DT_I32: return (int32_t)v;
    case DT_U8: return (uint8_t)v;
    case DT_U16: return (uint16_t)v;
    case DT_U32: return (uint32_t)v;
    default: return v;
    }
}

void interp_wrap_array(DType dt, int64_t *v, int64_t n)
{
    switch (dt) {
    case DT_I64:
    case DT_U64:
    case DT_PTR: return;
    case DT_I32:
        for (int64_t i = 0; i < n; i++)
            v[i] = (int32_t)v[i];
        return;
    case DT_U32:
        for (int64_t i = 0; i < n; i++)
            v[i] = (uint32_t)v[i];
        return;
    default:
        for (int64_t i = 0; i < n; i++)
            v[i] = interp_wrap(dt, v[i]);
        return;
    }
}

/* cvt.rzi with saturation: truncate, clamp to the dtype's range, NaN -> 0. */
static int64_t float_to_int(DType dt, double x) { return dtype_float_to_int(dt, x); }

static bool is_unsigned64(DType dt) { return dt == DT_U64 || dt == DT_PTR; }

/* ---- casts ----------------------------------------------------------------------- */

static void cast_from_int(DType from, const int64_t *s, DType to, void *dst, int64_t n)
{
    bool u = is_unsigned64(from);
    switch (interp_kind(to)) {
    case ST_I: {
        int64_t *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = to == DT_I1 ? s[i] != 0 : interp_wrap(to, s[i]);
        break;
    }
    case ST_F: {
        float *d = dst;
        for (int64_t i = 0; i < n; i++) {
            if (to == DT_F32)
                d[i] = u ? (float)(uint64_t)s[i] : (float)s[i];
            else
                d[i] = (float)interp_round_to(to, u ? (double)(uint64_t)s[i] : (double)s[i]);
        }
        break;
    }
    case ST_D: {
        double *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = u ? (double)(uint64_t)s[i] : (double)s[i];
        break;
    }
    }
}

void interp_cast(DType from, const void *src, DType to, void *dst, int64_t n)
{
    StoreKind fk = interp_kind(from), tk = interp_kind(to);
    if (fk == ST_I) {
        cast_from_int(from, src, to, dst, n);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        double x = fk == ST_F ? (double)((const float *)src)[i] : ((const double *)src)[i];
        if (tk == ST_I)
            ((int64_t *)dst)[i] = float_to_int(to, x);
        else if (tk == ST_D)
            ((double *)dst)[i] = x;
        else if (fk == ST_F && to == DT_F16)
            ((float *)dst)[i] = interp_f16_to_float(interp_float_to_f16((float)x));
        else if (fk == ST_F && to == DT_BF16)
            ((float *)dst)[i] = interp_bf16_to_float(interp_float_to_bf16((float)x));
        else
            ((float *)dst)[i] = (float)interp_round_to(to, x);
    }
}

void interp_cast_rtz(const float *src, DType to, float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = (float)dtype_round_toward_zero(to, src[i]);
}

double interp_get_double(DType dt, const void *arr, int64_t i)
{
    switch (interp_kind(dt)) {
    case ST_I: {
        int64_t v = ((const int64_t *)arr)[i];
        return is_unsigned64(dt) ? (double)(uint64_t)v : (double)v;
    }
    case ST_F: return ((const float *)arr)[i];
    default: return ((const double *)arr)[i];
    }
}

void interp_set_double(DType dt, void *arr, int64_t i, double x)
{
    switch (interp_kind(dt)) {
    case ST_I: ((int64_t *)arr)[i] = float_to_int(dt, x); break;
    case ST_F: ((float *)arr)[i] = (float)interp_round_to(dt, x); break;
    default: ((double *)arr)[i] = x; break;
    }
}

/* ---- memory bit patterns ------------------------------------------------------------ */

uint64_t interp_to_bits(DType dt, const void *arr, int64_t i)
{
    switch (interp_kind(dt)) {
    case ST_I: return (uint64_t)((const int64_t *)arr)[i];
    case ST_F: {
        float f = ((const float *)arr)[i];
        if (dt == DT_F16)
            return interp_float_to_f16(f);
        if (dt == DT_BF16)
            return interp_float_to_bf16(f);
        if (dtype_is_fp8(dt))
            return fp8_bits(dt, f);
        uint32_t b;
        memcpy(&b, &f, 4);
        return b;
    }
    default: {
        uint64_t b;
        memcpy(&b, (const double *)arr + i, 8);
        return b;
    }
    }
}

void interp_from_bits(DType dt, void *arr, int64_t i, uint64_t bits)
{
    switch (interp_kind(dt)) {
    case ST_I:
        ((int64_t *)arr)[i] = dt == DT_I1 ? (bits & 0xff) != 0 : interp_wrap(dt, (int64_t)bits);
        break;
    case ST_F: {
        float f;
        if (dt == DT_F16) {
            f = interp_f16_to_float((uint16_t)bits);
        } else if (dt == DT_BF16) {
            f = interp_bf16_to_float((uint16_t)bits);
        } else if (dtype_is_fp8(dt)) {
            f = (float)fp8_decode(dt, (uint8_t)bits);
        } else {
            uint32_t b = (uint32_t)bits;
            memcpy(&f, &b, 4);
        }
        ((float *)arr)[i] = f;
        break;
    }
    default: memcpy((double *)arr + i, &bits, 8); break;
    }
}
