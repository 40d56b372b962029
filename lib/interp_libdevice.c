/* interp_libdevice.c: IR_EXTERN calls of libdevice functions (__nv_tanhf,
 * __nv_powf, __nv_erf, ...) mapped to C math in double, rounded once to the
 * result dtype, and a few integer ones computed exactly. Assumes the name is
 * libdevice's; an unknown name stops the launch with an error naming it. */
#include "interp.h"

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
static double f_sinpi(double x) { return sin(M_PI * x); }
static double f_cospi(double x) { return cos(M_PI * x); }
static double f_div(double x, double y) { return x / y; }
static double f_ldexp(double x, double e) { return ldexp(x, (int)e); }
static double f_ilogb(double x) { return ilogb(x); }

typedef struct Fn {
    const char *name; /* without __nv_ and without the float suffix f */
    int nargs;
    double (*f1)(double);
    double (*f2)(double, double);
    double (*f3)(double, double, double);
} Fn;

static const Fn fns[] = {
    {"exp", 1, exp, 0, 0}, {"exp2", 1, exp2, 0, 0}, {"exp10", 1, f_exp10, 0, 0},
    {"expm1", 1, expm1, 0, 0}, {"log", 1, log, 0, 0}, {"log2", 1, log2, 0, 0},
    {"log10", 1, log10, 0, 0}, {"log1p", 1, log1p, 0, 0}, {"sqrt", 1, sqrt, 0, 0},
    {"rsqrt", 1, f_rsqrt, 0, 0}, {"cbrt", 1, cbrt, 0, 0}, {"rcp", 1, f_rcp, 0, 0},
    {"sin", 1, sin, 0, 0}, {"cos", 1, cos, 0, 0}, {"tan", 1, tan, 0, 0},
    {"asin", 1, asin, 0, 0}, {"acos", 1, acos, 0, 0}, {"atan", 1, atan, 0, 0},
    {"sinh", 1, sinh, 0, 0}, {"cosh", 1, cosh, 0, 0}, {"tanh", 1, tanh, 0, 0},
    {"asinh", 1, asinh, 0, 0}, {"acosh", 1, acosh, 0, 0}, {"atanh", 1, atanh, 0, 0},
    {"sinpi", 1, f_sinpi, 0, 0}, {"cospi", 1, f_cospi, 0, 0},
    {"erf", 1, erf, 0, 0}, {"erfc", 1, erfc, 0, 0}, {"normcdf", 1, f_normcdf, 0, 0},
    {"lgamma", 1, lgamma, 0, 0}, {"tgamma", 1, tgamma, 0, 0},
    {"fabs", 1, fabs, 0, 0}, {"floor", 1, floor, 0, 0}, {"ceil", 1, ceil, 0, 0},
    {"trunc", 1, trunc, 0, 0}, {"round", 1, round, 0, 0}, {"rint", 1, rint, 0, 0},
    {"nearbyint", 1, nearbyint, 0, 0}, {"saturate", 1, f_sat, 0, 0},
    {"isnan", 1, f_isnan, 0, 0}, {"isnand", 1, f_isnan, 0, 0},
    {"isinf", 1, f_isinf, 0, 0}, {"isinfd", 1, f_isinf, 0, 0},
    {"finite", 1, f_finite, 0, 0}, {"isfinited", 1, f_finite, 0, 0},
    {"signbit", 1, f_signbit, 0, 0}, {"signbitd", 1, f_signbit, 0, 0},
    {"ilogb", 1, f_ilogb, 0, 0},
    {"pow", 2, 0, pow, 0}, {"powi", 2, 0, pow, 0}, {"atan2", 2, 0, atan2, 0},
    {"fmod", 2, 0, fmod, 0}, {"remainder", 2, 0, remainder, 0}, {"hypot", 2, 0, hypot, 0},
    {"fmin", 2, 0, fmin, 0}, {"fmax", 2, 0, fmax, 0}, {"copysign", 2, 0, copysign, 0},
    {"fdim", 2, 0, fdim, 0}, {"fdivide", 2, 0, f_div, 0}, {"ldexp", 2, 0, f_ldexp, 0},
    {"scalbn", 2, 0, f_ldexp, 0}, {"nextafter", 2, 0, nextafter, 0},
    {"fma", 3, 0, 0, fma},
};

/* Integer functions, computed in int64 and wrapped to the result dtype. */
typedef enum { I_ABS, I_MIN, I_MAX, I_UMIN, I_UMAX, I_POPC, I_CLZ, I_MULHI, I_UMULHI } IntFn;
static const struct { const char *name; IntFn fn; int bits; } ifns[] = {
    {"abs", I_ABS, 32}, {"llabs", I_ABS, 64}, {"min", I_MIN, 32}, {"max", I_MAX, 32},
    {"llmin", I_MIN, 64}, {"llmax", I_MAX, 64}, {"umin", I_UMIN, 32}, {"umax", I_UMAX, 32},
    {"ullmin", I_UMIN, 64}, {"ullmax", I_UMAX, 64}, {"popc", I_POPC, 32}, {"popcll", I_POPC, 64},
    {"clz", I_CLZ, 32}, {"clzll", I_CLZ, 64}, {"mulhi", I_MULHI, 32}, {"umulhi", I_UMULHI, 32},
    {"mul64hi", I_MULHI, 64}, {"umul64hi", I_UMULHI, 64},
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
    case I_MULHI:
        return bits == 64 ? (int64_t)(((__int128)a * b) >> 64) : (a * b) >> 32;
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
    const Fn *f = lookup(name);
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
