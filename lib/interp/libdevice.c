/* interp/libdevice.c: IR_EXTERN calls of libdevice functions (__nv_tanhf,
 * __nv_powf, __nv_erf, ...) mapped to C math in double, rounded once to the
 * result dtype, and a few integer ones computed exactly. Assumes the name is
 * libdevice's; an unknown name stops the launch with an error naming it. */
#include "interp/internal.h"

#include <math.h>
#include <string.h>

static double f_rsqrt(double x) { return 1.0 / sqrt(x); }
static double f_rcp(double x) { return 1.0 / x; }
static double f_exp10(double x) { return pow(10.0, x); }
static double f_sat(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; } /* NaN -> 0 */
static double f_normcdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }
static double f_isnan(double x) { return isnan(x) != 0; }
static double f_isinf(double x) { return isinf(x) != 0; }
static double f_finite(double x) { return isfinite(x) != 0; }
static double f_signbit(double x) { return signbit(x) != 0; }

/* sin(pi x) (cos_too: cos(pi x)) exact at integers and half-integers, as
 * CUDA's are: x reduced exactly, modulo 2, to a quarter period f and its
 * quadrant q, where sin(M_PI * x) left sinpi(10) at -1.2e-15. Zeros take
 * the signs C's sinpi and cospi give. */
static double pi_periodic(double x, bool cos_too)
{
    double r = fmod(x, 2.0), n = nearbyint(2 * r), f = r - n * 0.5; /* all exact */
    int q = ((int)n % 4 + 4 + (cos_too ? 1 : 0)) % 4;
    double v = q == 0 ? sin(M_PI * f)
        : q == 1      ? cos(M_PI * f)
        : q == 2      ? -sin(M_PI * f)
                      : -cos(M_PI * f);
    if (v == 0)
        return cos_too ? 0.0 : copysign(0.0, x);
    return v;
}
static double f_sinpi(double x) { return pi_periodic(x, false); }
static double f_cospi(double x) { return pi_periodic(x, true); }
static double f_div(double x, double y) { return x / y; }
static double f_ldexp(double x, double e) { return ldexp(x, (int)e); }
static double f_ilogb(double x) { return ilogb(x); }
static double f_rcbrt(double x) { return 1.0 / cbrt(x); }
static double f_rhypot(double x, double y) { return 1.0 / hypot(x, y); }

/* erfcx(x) = exp(x^2) erfc(x); past x = 25 erfc underflows, so the
 * asymptotic series (relative error below 1e-12 there) takes over. */
static double f_erfcx(double x)
{
    if (x < 25)
        return exp(x * x) * erfc(x);
    double r = 1 / (x * x);
    return (1 - r / 2 + 0.75 * r * r - 1.875 * r * r * r) / (x * sqrt(M_PI));
}

/* erfinv: Giles' single-precision approximation ("Approximating the erfinv
 * function", 2010) polished by Newton steps on erf to double precision. */
static double f_erfinv(double y)
{
    if (isnan(y) || fabs(y) > 1)
        return NAN;
    if (fabs(y) == 1)
        return copysign(INFINITY, y);
    double w = -log((1 - y) * (1 + y)), p;
    if (w < 5) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    double x = p * y;
    for (int i = 0; i < 3; i++)
        x -= (erf(x) - y) / (2 / sqrt(M_PI) * exp(-x * x));
    return x;
}

/* erfcinv(y) = erfinv(1 - y), refined on erfc itself so small y keep
 * their precision. */
static double f_erfcinv(double y)
{
    if (isnan(y) || y < 0 || y > 2)
        return NAN;
    if (y == 0 || y == 2)
        return y == 0 ? INFINITY : -INFINITY;
    double x = f_erfinv(1 - y);
    if (!isfinite(x))
        x = y < 1 ? 27.0 : -27.0;
    for (int i = 0; i < 4; i++)
        x += (erfc(x) - y) / (2 / sqrt(M_PI) * exp(-x * x));
    return x;
}
static double f_normcdfinv(double p) { return -sqrt(2.0) * f_erfcinv(2 * p); }

typedef struct Fn {
    const char *name; /* without __nv_ and without the float suffix f */
    int nargs;
    double (*f1)(double);
    double (*f2)(double, double);
    double (*f3)(double, double, double);
} Fn;

static const Fn fns[] = {
    {"exp", 1, exp, 0, 0},
    {"exp2", 1, exp2, 0, 0},
    {"exp10", 1, f_exp10, 0, 0},
    {"expm1", 1, expm1, 0, 0},
    {"log", 1, log, 0, 0},
    {"log2", 1, log2, 0, 0},
    {"log10", 1, log10, 0, 0},
    {"log1p", 1, log1p, 0, 0},
    {"sqrt", 1, sqrt, 0, 0},
    {"rsqrt", 1, f_rsqrt, 0, 0},
    {"cbrt", 1, cbrt, 0, 0},
    {"rcp", 1, f_rcp, 0, 0},
    {"sin", 1, sin, 0, 0},
    {"cos", 1, cos, 0, 0},
    {"tan", 1, tan, 0, 0},
    {"asin", 1, asin, 0, 0},
    {"acos", 1, acos, 0, 0},
    {"atan", 1, atan, 0, 0},
    {"sinh", 1, sinh, 0, 0},
    {"cosh", 1, cosh, 0, 0},
    {"tanh", 1, tanh, 0, 0},
    {"asinh", 1, asinh, 0, 0},
    {"acosh", 1, acosh, 0, 0},
    {"atanh", 1, atanh, 0, 0},
    {"sinpi", 1, f_sinpi, 0, 0},
    {"cospi", 1, f_cospi, 0, 0},
    {"erf", 1, erf, 0, 0},
    {"erfc", 1, erfc, 0, 0},
    {"normcdf", 1, f_normcdf, 0, 0},
    {"lgamma", 1, lgamma, 0, 0},
    {"tgamma", 1, tgamma, 0, 0},
    {"fabs", 1, fabs, 0, 0},
    {"floor", 1, floor, 0, 0},
    {"ceil", 1, ceil, 0, 0},
    {"trunc", 1, trunc, 0, 0},
    {"round", 1, round, 0, 0},
    {"rint", 1, rint, 0, 0},
    {"nearbyint", 1, nearbyint, 0, 0},
    {"saturate", 1, f_sat, 0, 0},
    {"isnan", 1, f_isnan, 0, 0},
    {"isnand", 1, f_isnan, 0, 0},
    {"isinf", 1, f_isinf, 0, 0},
    {"isinfd", 1, f_isinf, 0, 0},
    {"finite", 1, f_finite, 0, 0},
    {"isfinited", 1, f_finite, 0, 0},
    {"signbit", 1, f_signbit, 0, 0},
    {"signbitd", 1, f_signbit, 0, 0},
    {"ilogb", 1, f_ilogb, 0, 0},
    {"pow", 2, 0, pow, 0},
    {"powi", 2, 0, pow, 0},
    {"atan2", 2, 0, atan2, 0},
    {"fmod", 2, 0, fmod, 0},
    {"remainder", 2, 0, remainder, 0},
    {"hypot", 2, 0, hypot, 0},
    {"fmin", 2, 0, fmin, 0},
    {"fmax", 2, 0, fmax, 0},
    {"copysign", 2, 0, copysign, 0},
    {"fdim", 2, 0, fdim, 0},
    {"fdivide", 2, 0, f_div, 0},
    {"ldexp", 2, 0, f_ldexp, 0},
    {"scalbn", 2, 0, f_ldexp, 0},
    {"nextafter", 2, 0, nextafter, 0},
    {"fma", 3, 0, 0, fma},
    {"logb", 1, logb, 0, 0},
    {"rcbrt", 1, f_rcbrt, 0, 0},
    {"rhypot", 2, 0, f_rhypot, 0},
    {"erfcx", 1, f_erfcx, 0, 0},
    {"erfinv", 1, f_erfinv, 0, 0},
    {"erfcinv", 1, f_erfcinv, 0, 0},
    {"normcdfinv", 1, f_normcdfinv, 0, 0},
    {"j0", 1, j0, 0, 0},
    {"j1", 1, j1, 0, 0},
    {"y0", 1, y0, 0, 0},
    {"y1", 1, y1, 0, 0},
};

/* Integer functions, computed in int64 and wrapped to the result dtype. */
typedef enum { I_ABS, I_MIN, I_MAX, I_UMIN, I_UMAX, I_POPC, I_CLZ, I_MULHI, I_UMULHI } IntFn;
static const struct {
    const char *name;
    IntFn fn;
    int bits;
} ifns[] = {
    {"abs", I_ABS, 32},       {"llabs", I_ABS, 64},     {"min", I_MIN, 32},
    {"max", I_MAX, 32},       {"llmin", I_MIN, 64},     {"llmax", I_MAX, 64},
    {"umin", I_UMIN, 32},     {"umax", I_UMAX, 32},     {"ullmin", I_UMIN, 64},
    {"ullmax", I_UMAX, 64},   {"popc", I_POPC, 32},     {"popcll", I_POPC, 64},
    {"clz", I_CLZ, 32},       {"clzll", I_CLZ, 64},     {"mulhi", I_MULHI, 32},
    {"umulhi", I_UMULHI, 32}, {"mul64hi", I_MULHI, 64}, {"umul64hi", I_UMULHI, 64},
};

static const Fn *find_fn(const char *base)
{
    for (int i = 0; i < TK_ARRAY_LEN(fns); i++)
        if (!strcmp(fns[i].name, base))
            return &fns[i];
    return NULL;
}

/* "__nv_tanhf" -> tanh; "__nv_fast_expf" -> exp; "__nv_fdividef" -> fdivide. */
static const Fn *lookup(const char *name)
{
    if (strncmp(name, "__nv_", 5))
        return NULL;
    const char *base = name + 5;
    if (!strncmp(base, "fast_", 5))
        base += 5;
    const Fn *f = find_fn(base);
    size_t n = strlen(base);
    if (!f && n > 1 && n < 32 && base[n - 1] == 'f') {
        char buf[32];
        memcpy(buf, base, n - 1);
        buf[n - 1] = 0;
        f = find_fn(buf);
    }
    return f;
}

/* __nv_fdiv_rz and friends: the IEEE quotient (or sqrt, reciprocal) with
 * a rounding mode. The round-to-nearest result is corrected by one ulp when
 * the exact remainder a - q*b (exact through fma) shows it on the wrong side. */
typedef enum { RM_RN, RM_RZ, RM_RD, RM_RU } RoundMode;
static const struct {
    const char *name;
    int op;
    RoundMode rm;
} rounded[] = {
    {"div_rn", 0, RM_RN},  {"div_rz", 0, RM_RZ},  {"div_rd", 0, RM_RD},  {"div_ru", 0, RM_RU},
    {"sqrt_rn", 1, RM_RN}, {"sqrt_rz", 1, RM_RZ}, {"sqrt_rd", 1, RM_RD}, {"sqrt_ru", 1, RM_RU},
    {"rcp_rn", 2, RM_RN},  {"rcp_rz", 2, RM_RZ},  {"rcp_rd", 2, RM_RD},  {"rcp_ru", 2, RM_RU},
};

/* above > 0 when q is above the exact result, < 0 below, 0 exact. */
static double adjust(double q, int above, RoundMode rm, bool f32)
{
    bool up = rm == RM_RU || (rm == RM_RZ && q < 0);
    bool down = rm == RM_RD || (rm == RM_RZ && q > 0);
    if (!isfinite(q) || (above > 0 && !down) || (above < 0 && !up) || !above)
        return q;
    double to = above > 0 ? -INFINITY : INFINITY;
    return f32 ? (double)nextafterf((float)q, (float)to) : nextafter(q, to);
}

static double rounded_op(int op, RoundMode rm, bool f32, double a, double b)
{
    if (op == 2) {
        b = a;
        a = 1;
    }
    if (op == 1) {
        double q = f32 ? (double)sqrtf((float)a) : sqrt(a);
        double r = fma(-q, q, a); /* > 0: q is below the exact root */
        return rm == RM_RN ? q : adjust(q, r < 0 ? 1 : r > 0 ? -1 : 0, rm, f32);
    }
    double q = f32 ? (double)((float)a / (float)b) : a / b;
    double r = fma(-q, b, a); /* exact: a - q*b */
    int above = r == 0 || isnan(r) ? 0 : ((r < 0) == (b > 0) ? 1 : -1);
    return rm == RM_RN ? q : adjust(q, above, rm, f32);
}

static int find_rounded(const char *name, bool *f32)
{
    if (strncmp(name, "__nv_", 5) || (name[5] != 'f' && name[5] != 'd'))
        return -1;
    *f32 = name[5] == 'f';
    for (int i = 0; i < TK_ARRAY_LEN(rounded); i++)
        if (!strcmp(name + 6, rounded[i].name))
            return i;
    return -1;
}

static int64_t int_fn(IntFn fn, int bits, int64_t a, int64_t b)
{
    uint64_t mask = bits == 64 ? UINT64_MAX : 0xffffffffu;
    uint64_t ua = (uint64_t)a & mask, ub = (uint64_t)b & mask;
    switch (fn) {
    case I_ABS: return a < 0 ? (int64_t)(0 - (uint64_t)a) : a;
    case I_MIN: return a < b ? a : b;
    case I_MAX: return a > b ? a : b;
    case I_UMIN: return (int64_t)(ua < ub ? ua : ub);
    case I_UMAX: return (int64_t)(ua > ub ? ua : ub);
    case I_POPC: return __builtin_popcountll(ua);
    case I_CLZ: return ua ? __builtin_clzll(ua) - (64 - bits) : bits;
    case I_MULHI: return bits == 64 ? (int64_t)(((__int128)a * b) >> 64) : (a * b) >> 32;
    default:
        return bits == 64 ? (int64_t)(uint64_t)(((unsigned __int128)ua * ub) >> 64)
                          : (int64_t)((ua * ub) >> 32);
    }
}

static bool run_int(InterpProg *p, const IrOp *op, IntFn fn, int bits)
{
    const IrValue *r = op->results[0];
    int64_t n = type_numel(r->type);
    int64_t *out = interp_slot(p, r);
    const int64_t *a = interp_slot(p, op->operands[0]);
    const int64_t *b = op->nops > 1 ? interp_slot(p, op->operands[1]) : a;
    for (int64_t i = 0; i < n; i++)
        out[i] = interp_wrap(r->type.dt, int_fn(fn, bits, a[i], b[i]));
    return true;
}

bool interp_extern(InterpProg *p, const IrOp *op)
{
    const char *name = op->str ? op->str : "";
    const IrValue *r = op->results[0];
    if (!strncmp(name, "__nv_", 5))
        for (int i = 0; i < TK_ARRAY_LEN(ifns); i++)
            if (!strcmp(ifns[i].name, name + 5) && op->nops >= 1)
                return run_int(p, op, ifns[i].fn, ifns[i].bits);
    bool f32;
    int ro = find_rounded(name, &f32);
    if (ro >= 0) {
        int want = rounded[ro].op == 0 ? 2 : 1;
        if (op->nops != want)
            return interp_fail(p, op, "'%s' takes %d argument%s, got %d", name, want,
                               want == 1 ? "" : "s", op->nops);
        int64_t n = type_numel(r->type);
        void *out = interp_slot(p, r);
        const void *a0 = interp_slot(p, op->operands[0]);
        const void *a1 = want == 2 ? interp_slot(p, op->operands[1]) : a0;
        for (int64_t i = 0; i < n; i++)
            interp_set_double(
                r->type.dt, out, i,
                rounded_op(rounded[ro].op, rounded[ro].rm, f32,
                           interp_get_double(op->operands[0]->type.dt, a0, i),
                           interp_get_double(op->operands[want - 1]->type.dt, a1, i)));
        return true;
    }
    const Fn *f = lookup(name);
    if (!f && interp_extern_more(p, op))
        return true;
    if (!f)
        return interp_fail(p, op, "the interpreter does not know the libdevice function '%s'",
                           name);
    if (op->nops != f->nargs)
        return interp_fail(p, op, "'%s' takes %d argument%s, got %d", name, f->nargs,
                           f->nargs == 1 ? "" : "s", op->nops);
    int64_t n = type_numel(r->type);
    void *out = interp_slot(p, r);
    const void *a[3] = {0};
    for (int k = 0; k < op->nops; k++)
        a[k] = interp_slot(p, op->operands[k]);
    for (int64_t i = 0; i < n; i++) {
        double x = interp_get_double(op->operands[0]->type.dt, a[0], i), y;
        if (f->nargs == 1) {
            y = f->f1(x);
        } else {
            double x1 = interp_get_double(op->operands[1]->type.dt, a[1], i);
            y = f->nargs == 2 ? f->f2(x, x1)
                              : f->f3(x, x1, interp_get_double(op->operands[2]->type.dt, a[2], i));
        }
        interp_set_double(r->type.dt, out, i, y);
    }
    return true;
}
