/* interp/libdevice_more.c: the libdevice functions that are not plain
 * double math: conversions with a rounding mode (__nv_double2int_rd, ...),
 * bit reinterpretations (__nv_float_as_int, ...), arithmetic with a
 * rounding mode (__nv_fadd_rz, __nv_fma_ru, ...), the integer helpers
 * (__nv_brev, __nv_byte_perm, __nv_sad, ...) and a few math functions C
 * lacks (norm3d, jn, cyl_bessel_i0, ...). A directed rounding takes the
 * round-to-nearest result and moves it one ulp when the exact residual
 * shows it on the wrong side, as libdevice.c's div_rz does. */
#include "interp/internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef enum { RM_RN, RM_RZ, RM_RD, RM_RU, RM_NONE } Rm;

/* One argument or result: the float value (exact in a double) or the
 * integer (its bits, for unsigned 64-bit). */
typedef struct {
    double f;
    int64_t i;
} Val;

static Rm parse_rm(const char *s)
{
    static const char *const n[] = {"_rn", "_rz", "_rd", "_ru"};
    for (int k = 0; k < 4; k++)
        if (!strcmp(s, n[k]))
            return (Rm)k;
    return RM_NONE;
}

/* r (a float or double result of round-to-nearest) moved one ulp toward
 * the mode's side when the exact value lies on the other: sign < 0 when r
 * is above the exact value, > 0 below, 0 exact. */
static double directed(double r, int sign, Rm rm, bool f32)
{
    if (rm == RM_RN || !sign || !isfinite(r))
        return r;
    bool toward_zero = rm == RM_RZ;
    bool want_down = rm == RM_RD || (toward_zero && r > 0);
    bool want_up = rm == RM_RU || (toward_zero && r < 0);
    if ((sign < 0 && want_down) || (sign > 0 && want_up)) {
        double to = sign < 0 ? -INFINITY : INFINITY;
        return f32 ? (double)nextafterf((float)r, (float)to) : nextafter(r, to);
    }
    return r;
}

static int sgn(double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }

/* hi + lo (hi the double nearest to the exact value, |lo| <= half its
 * ulp) rounded to fp32 with rm. */
static double to_f32(double hi, double lo, Rm rm)
{
    float r = (float)hi;
    if (!isfinite(hi) || !isfinite(r))
        return r;
    double d = hi - (double)r; /* exact */
    int rest = d != 0 ? sgn(d) : sgn(lo);
    if (rm == RM_RN) {
        double half = fabs((double)nextafterf(r, d > 0 ? INFINITY : -INFINITY) - (double)r) / 2;
        if (d != 0 && fabs(d) == half && lo != 0 && sgn(lo) == sgn(d))
            return nextafterf(r, d > 0 ? INFINITY : -INFINITY);
        return r;
    }
    return directed(r, rest, rm, true);
}

static double round_to(double hi, double lo, Rm rm, bool f32)
{
    return f32 ? to_f32(hi, lo, rm) : directed(hi, sgn(lo), rm, false);
}

/* a + b, a * b, a * b + c with a rounding mode; fp32 goes through the
 * exact double (sum: through the error-free two-sum). */
static double add_rm(double a, double b, Rm rm, bool f32)
{
    double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);
    return round_to(s, isfinite(s) ? e : 0, rm, f32);
}

static double mul_rm(double a, double b, Rm rm, bool f32)
{
    double p = a * b, e = isfinite(p) ? fma(a, b, -p) : 0;
    return round_to(p, e, rm, f32);
}

/* The residual of the fused result comes from a quad-precision sum (the
 * product is exact there); the sign is right unless c is far below it. */
#ifdef __SIZEOF_FLOAT128__
typedef __float128 Wide;
#else
typedef long double Wide;
#endif

static double fma_rm(double a, double b, double c, Rm rm, bool f32)
{
    double r = fma(a, b, c);
    double e = isfinite(r) ? (double)((Wide)a * b + c - r) : 0;
    return round_to(r, e, rm, f32);
}

/* A float value to an integer dtype: rounded by rm, saturated to the
 * dtype's range, NaN to 0 (as cvt.r*i does). */
static int64_t float_to_int_rm(double x, Rm rm, DType to)
{
    if (isnan(x))
        return 0;
    double v = rm == RM_RN ? nearbyint(x)
        : rm == RM_RZ      ? trunc(x)
        : rm == RM_RD      ? floor(x)
                           : ceil(x);
    switch (to) {
    case DT_I32: return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int64_t)v;
    case DT_U32: return v < 0 ? 0 : v > UINT32_MAX ? UINT32_MAX : (int64_t)v;
    case DT_U64: return v < 0 ? 0 : v >= 0x1p64 ? -1 : (int64_t)(uint64_t)v;
    default: return v < -0x1p63 ? INT64_MIN : v >= 0x1p63 ? INT64_MAX : (int64_t)v;
    }
}

/* An integer (signed or not, of from's dtype) to fp32 or fp64 with rm:
 * long double holds every 64-bit integer exactly. */
static double int_to_float_rm(int64_t i, DType from, Rm rm, bool f32)
{
    long double x = dtype_is_signed(from) ? (long double)i : (long double)(uint64_t)i;
    double r = f32 ? (double)(float)x : (double)x;
    long double d = x - (long double)r;
    return directed(r, d > 0 ? 1 : d < 0 ? -1 : 0, rm, f32);
}

/* "double2int_rd" and the like: from, to and the mode; false if name is
 * no such conversion. */
static bool conversion(const char *b, const Val *a, DType src, DType rd, Val *out)
{
    const char *two = strchr(b, '2'), *us = strrchr(b, '_');
    if (!two || !us || us < two)
        return false;
    Rm rm = parse_rm(us);
    if (rm == RM_NONE)
        return false;
    bool from_float = !strncmp(b, "double2", 7) || !strncmp(b, "float2", 6);
    /* the name, not Triton's declared result (int32 for uint), says how
     * the value saturates; the result keeps its bits */
    static const struct {
        const char *name;
        DType dt;
    } to[] = {{"int", DT_I32}, {"uint", DT_U32}, {"ll", DT_I64}, {"ull", DT_U64}};
    DType dst = rd;
    for (int k = 0; k < 4; k++)
        if ((size_t)(us - two - 1) == strlen(to[k].name) &&
            !strncmp(two + 1, to[k].name, strlen(to[k].name)))
            dst = to[k].dt;
    if (from_float && !dtype_is_float(rd)) {
        out->i = float_to_int_rm(a[0].f, rm, dst);
    } else if (from_float) {
        out->f = round_to(a[0].f, 0, rm, rd == DT_F32);
    } else {
        out->f = int_to_float_rm(a[0].i, src, rm, rd == DT_F32);
    }
    return true;
}

static bool bits(const char *b, const Val *a, Val *out)
{
    float f;
    uint32_t u;
    double d;
    uint64_t q;
    if (!strcmp(b, "float_as_int") || !strcmp(b, "float_as_uint")) {
        f = (float)a[0].f;
        memcpy(&u, &f, 4);
        out->i = b[9] == 'i' ? (int64_t)(int32_t)u : (int64_t)u;
    } else if (!strcmp(b, "int_as_float") || !strcmp(b, "uint_as_float")) {
        u = (uint32_t)a[0].i;
        memcpy(&f, &u, 4);
        out->f = f;
    } else if (!strcmp(b, "double_as_longlong")) {
        memcpy(&q, &a[0].f, 8);
        out->i = (int64_t)q;
    } else if (!strcmp(b, "longlong_as_double")) {
        q = (uint64_t)a[0].i;
        memcpy(&d, &q, 8);
        out->f = d;
    } else if (!strcmp(b, "double2hiint") || !strcmp(b, "double2loint")) {
        memcpy(&q, &a[0].f, 8);
        out->i = (int32_t)(uint32_t)(b[7] == 'h' ? q >> 32 : q);
    } else if (!strcmp(b, "hiloint2double")) {
        q = (uint64_t)(uint32_t)a[0].i << 32 | (uint32_t)a[1].i;
        memcpy(&d, &q, 8);
        out->f = d;
    } else {
        return false;
    }
    return true;
}

static uint64_t reverse_bits(uint64_t x, int n)
{
    uint64_t r = 0;
    for (int k = 0; k < n; k++)
        r |= ((x >> k) & 1) << (n - 1 - k);
    return r;
}

/* The low 24 bits of v as a signed number (mul24's operands), without
 * shifting a negative value. */
static int64_t sext24(int64_t v)
{
    return (int64_t)(((uint64_t)v & 0xFFFFFF) ^ 0x800000) - 0x800000;
}

/* The integer helpers; signedness from the symbol (u prefix: unsigned). */
static bool integer(const char *b, const Val *a, Val *out)
{
    int64_t x = a[0].i, y = a[1].i;
    uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
    if (!strcmp(b, "brev") || !strcmp(b, "brevll"))
        out->i = (int64_t)reverse_bits((uint64_t)x, b[4] ? 64 : 32);
    else if (!strcmp(b, "ffs") || !strcmp(b, "ffsll"))
        out->i = b[3] ? __builtin_ffsll(x) : __builtin_ffs((int)x);
    else if (!strcmp(b, "byte_perm")) {
        uint64_t both = (uint64_t)uy << 32 | ux;
        uint32_t r = 0;
        for (int k = 0; k < 4; k++)
            r |= (uint32_t)((both >> (8 * ((a[2].i >> (4 * k)) & 7))) & 0xFF) << (8 * k);
        out->i = (int32_t)r;
    } else if (!strcmp(b, "mul24"))
        out->i = sext24(x) * sext24(y);
    else if (!strcmp(b, "umul24"))
        out->i = (int64_t)((uint64_t)(ux & 0xFFFFFF) * (uy & 0xFFFFFF));
    else if (!strcmp(b, "sad"))
        out->i = (x > y ? x - y : y - x) + (uint32_t)a[2].i;
    else if (!strcmp(b, "usad"))
        out->i = (int64_t)((ux > uy ? ux - uy : uy - ux) + (uint32_t)a[2].i);
    else if (!strcmp(b, "hadd") || !strcmp(b, "rhadd"))
        out->i = (x + y + (b[0] == 'r')) >> 1;
    else if (!strcmp(b, "uhadd") || !strcmp(b, "urhadd"))
        out->i = (int64_t)(((uint64_t)ux + uy + (b[1] == 'r')) >> 1);
    else
        return false;
    return true;
}

/* I0 and I1 by their power series, which converge for every x (the terms
 * grow to about e^|x|, and the result overflows first). */
static double bessel_i(double x, int order)
{
    double q = x * x / 4, term = order ? x / 2 : 1, sum = term;
    for (int k = 1; k < 2000 && isfinite(sum) && fabs(term) > 1e-17 * fabs(sum); k++) {
        term *= q / ((double)k * (k + order));
        sum += term;
    }
    return sum;
}

static bool math_more(const char *b, const Val *a, Val *out)
{
    size_t n = strlen(b);
    char base[24];
    if (n >= sizeof base)
        return false;
    memcpy(base, b, n + 1);
    if (n > 1 && base[n - 1] == 'f' && strcmp(base, "rcp64h"))
        base[n - 1] = 0; /* the fp32 spelling */
    double x = a[0].f, y = a[1].f, z = a[2].f, w = a[3].f;
    if (!strcmp(base, "llrint"))
        out->i = float_to_int_rm(x, RM_RN, DT_I64);
    else if (!strcmp(base, "llround"))
        out->i = isnan(x) ? 0 : float_to_int_rm(round(x), RM_RZ, DT_I64);
    else if (!strcmp(base, "norm3d") || !strcmp(base, "rnorm3d"))
        out->f = base[0] == 'r' ? 1 / hypot(hypot(x, y), z) : hypot(hypot(x, y), z);
    else if (!strcmp(base, "norm4d") || !strcmp(base, "rnorm4d")) {
        double h = hypot(hypot(x, y), hypot(z, w));
        out->f = base[0] == 'r' ? 1 / h : h;
    } else if (!strcmp(base, "jn"))
        out->f = jn((int)a[0].i, y);
    else if (!strcmp(base, "yn"))
        out->f = yn((int)a[0].i, y);
    else if (!strcmp(base, "cyl_bessel_i0") || !strcmp(base, "cyl_bessel_i1"))
        out->f = bessel_i(x, base[12] == '1');
    else if (!strcmp(base, "rcp64h")) { /* 1/x with its low 32 bits cleared */
        double r = 1 / x;
        uint64_t q;
        memcpy(&q, &r, 8);
        q &= ~(uint64_t)0xFFFFFFFF;
        memcpy(&r, &q, 8);
        out->f = r;
    } else
        return false;
    return true;
}

/* fadd_rz, dmul_rn, fmaf_ru, fma_rd, fsub_ru, frsqrt_rn. */
static bool arith(const char *b, const Val *a, Val *out)
{
    const char *us = strrchr(b, '_');
    Rm rm = us ? parse_rm(us) : RM_NONE;
    if (rm == RM_NONE)
        return false;
    size_t n = (size_t)(us - b);
    bool f32 = b[0] == 'f' && strncmp(b, "fma_", 4);
    const char *op = !strncmp(b, "fma", 3) ? "fma" : b + 1;
    if (!strncmp(op, "fma", 3) && (n == 3 || n == 4))
        out->f = fma_rm(a[0].f, a[1].f, a[2].f, rm, f32);
    else if (!strncmp(op, "add", 3) && n == 4)
        out->f = add_rm(a[0].f, a[1].f, rm, f32);
    else if (!strncmp(op, "sub", 3) && n == 4)
        out->f = add_rm(a[0].f, -a[1].f, rm, f32);
    else if (!strncmp(op, "mul", 3) && n == 4)
        out->f = mul_rm(a[0].f, a[1].f, rm, f32);
    else if (!strncmp(op, "rsqrt", 5) && n == 6)
        out->f = f32 ? (double)(float)(1 / sqrt(a[0].f)) : 1 / sqrt(a[0].f);
    else
        return false;
    return true;
}

/* One element of base (the name without __nv_); false if unknown. */
static bool eval(const char *base, const Val *a, DType src, DType rd, Val *out)
{
    return bits(base, a, out) || integer(base, a, out) || arith(base, a, out) ||
        conversion(base, a, src, rd, out) || math_more(base, a, out);
}

bool interp_extern_more(InterpProg *p, const IrOp *op)
{
    const char *name = op->str ? op->str : "";
    if (strncmp(name, "__nv_", 5) || op->nops > 4)
        return false;
    const IrValue *r = op->results[0];
    DType rd = r->type.dt, src = op->nops ? op->operands[0]->type.dt : rd;
    const void *in[4] = {0};
    for (int k = 0; k < op->nops; k++)
        in[k] = interp_slot(p, op->operands[k]);
    void *out = interp_slot(p, r);
    int64_t n = type_numel(r->type);
    for (int64_t i = 0; i < n; i++) {
        Val a[4] = {{0, 0}}, v = {0, 0};
        for (int k = 0; k < op->nops; k++) {
            DType dt = op->operands[k]->type.dt;
            if (dtype_is_float(dt))
                a[k].f = interp_get_double(dt, in[k], i);
            else
                a[k].i = ((const int64_t *)in[k])[i];
        }
        if (!eval(name + 5, a, src, rd, &v))
            return false;
        if (dtype_is_float(rd))
            interp_set_double(rd, out, i, v.f);
        else
            ((int64_t *)out)[i] = interp_wrap(rd, v.i);
    }
    return true;
}
