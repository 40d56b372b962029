/* interp/elem.c: elementwise ops as loops over whole arrays: arithmetic,
 * comparisons, select, fma, math and libdevice functions, casts, pointers.
 * Assumes the IR invariants (operands of one shape; same dtype except where
 * ir.h says otherwise). Integer results wrap at the dtype's width; x // 0
 * gives -1 (all ones, as the GPU's div) and x % 0 gives x; shifts by the
 * width or more give 0 (or the sign for arithmetic >>), as PTX clamps them. */
#include "interp/internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

static bool uns64(DType dt) { return dt == DT_U64 || dt == DT_PTR; }

static int64_t int_div(int64_t a, int64_t b, bool u)
{
    if (b == 0)
        return -1;
    if (u)
        return (int64_t)((uint64_t)a / (uint64_t)b);
    if (a == INT64_MIN && b == -1)
        return a;
    return a / b;
}

static int64_t int_rem(int64_t a, int64_t b, bool u)
{
    if (b == 0)
        return a;
    if (u)
        return (int64_t)((uint64_t)a % (uint64_t)b);
    if (b == -1)
        return 0;
    return a % b;
}

/* tl.umulhi: the high half of the unsigned product, for signed operands
 * too (their bits read as unsigned), as the GPU's mul.hi.u32/u64 gives it
 * and as codegen emits it. */
static int64_t int_mulhi(int64_t a, int64_t b, DType dt)
{
    int w = dtype_bits(dt);
    if (w == 64)
        return (int64_t)(uint64_t)(((unsigned __int128)(uint64_t)a * (uint64_t)b) >> 64);
    uint64_t mask = (UINT64_C(1) << w) - 1;
    return (int64_t)((((uint64_t)a & mask) * ((uint64_t)b & mask)) >> w);
}

static bool cmp_result(int pred, int c) /* c: -1, 0, 1 */
{
    switch (pred) {
    case CMP_EQ: return c == 0;
    case CMP_NE: return c != 0;
    case CMP_LT: return c < 0;
    case CMP_LE: return c <= 0;
    case CMP_GT: return c > 0;
    default: return c >= 0;
    }
}

static void int_binary(const IrOp *op, DType dt, const int64_t *a, const int64_t *b, int64_t *r,
                       int64_t n)
{
    bool u = uns64(dt);
    uint64_t w = (uint64_t)dtype_bits(dt);
    int64_t i;
    switch (op->kind) {
    case IR_ADD:
        for (i = 0; i < n; i++)
            r[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]);
        break;
    case IR_SUB:
        for (i = 0; i < n; i++)
            r[i] = (int64_t)((uint64_t)a[i] - (uint64_t)b[i]);
        break;
    case IR_MUL:
        for (i = 0; i < n; i++)
            r[i] = (int64_t)((uint64_t)a[i] * (uint64_t)b[i]);
        break;
    case IR_DIV:
        for (i = 0; i < n; i++)
            r[i] = int_div(a[i], b[i], u);
        break;
    case IR_REM:
        for (i = 0; i < n; i++)
            r[i] = int_rem(a[i], b[i], u);
        break;
    case IR_AND:
        for (i = 0; i < n; i++)
            r[i] = a[i] & b[i];
        break;
    case IR_OR:
        for (i = 0; i < n; i++)
            r[i] = a[i] | b[i];
        break;
    case IR_XOR:
        for (i = 0; i < n; i++)
            r[i] = a[i] ^ b[i];
        break;
    case IR_SHL:
        for (i = 0; i < n; i++)
            r[i] = (uint64_t)b[i] >= w ? 0 : (int64_t)((uint64_t)a[i] << b[i]);
        break;
    case IR_SHR:
        for (i = 0; i < n; i++) {
            uint64_t s = (uint64_t)b[i] >= w ? w - 1 : (uint64_t)b[i];
            if (dtype_is_signed(dt))
                r[i] = a[i] >> s;
            else
                r[i] = (uint64_t)b[i] >= w ? 0 : (int64_t)((uint64_t)a[i] >> s);
        }
        break;
    case IR_MIN:
    case IR_MAX:
        for (i = 0; i < n; i++) {
            bool lt = u ? (uint64_t)a[i] < (uint64_t)b[i] : a[i] < b[i];
            r[i] = (op->kind == IR_MIN) == lt ? a[i] : b[i];
        }
        break;
    case IR_UMULHI:
        for (i = 0; i < n; i++)
            r[i] = int_mulhi(a[i], b[i], dt);
        break;
    case IR_CMP:
        for (i = 0; i < n; i++) {
            int c = u ? ((uint64_t)a[i] > (uint64_t)b[i]) - ((uint64_t)a[i] < (uint64_t)b[i])
                      : (a[i] > b[i]) - (a[i] < b[i]);
            r[i] = cmp_result(op->sub, c);
        }
        return;
    default: break;
    }
    interp_wrap_array(dt, r, n);
}

/* Float comparisons are ordered (false on NaN) except NE. */
#define FLOAT_BINARY(T, FMIN, FMAX, FMOD)                                                          \
    static void T##_binary(const IrOp *op, const T *a, const T *b, void *out, int64_t n)           \
    {                                                                                              \
        T *r = out;                                                                                \
        int64_t i;                                                                                 \
        bool nan = op->sub == 1;                                                                   \
        switch (op->kind) {                                                                        \
        case IR_ADD:                                                                               \
            for (i = 0; i < n; i++)                                                                \
                r[i] = a[i] + b[i];                                                                \
            break;                                                                                 \
        case IR_SUB:                                                                               \
            for (i = 0; i < n; i++)                                                                \
                r[i] = a[i] - b[i];                                                                \
            break;                                                                                 \
        case IR_MUL:                                                                               \
            for (i = 0; i < n; i++)                                                                \
                r[i] = a[i] * b[i];                                                                \
            break;                                                                                 \
        case IR_DIV:                                                                               \
            for (i = 0; i < n; i++)                                                                \
                r[i] = a[i] / b[i];                                                                \
            break;                                                                                 \
        case IR_REM:                                                                               \
            for (i = 0; i < n; i++)                                                                \
                r[i] = FMOD(a[i], b[i]);                                                           \
            break;                                                                                 \
        case IR_MIN:                                                                               \
            for (i = 0; i < n; i++)                                                                \
                r[i] = nan && (isnan(a[i]) || isnan(b[i])) ? a[i] + b[i] : FMIN(a[i], b[i]);       \
            break;                                                                                 \
        case IR_MAX:                                                                               \
            for (i = 0; i < n; i++)                                                                \
                r[i] = nan && (isnan(a[i]) || isnan(b[i])) ? a[i] + b[i] : FMAX(a[i], b[i]);       \
            break;                                                                                 \
        case IR_CMP: {                                                                             \
            int64_t *c = out;                                                                      \
            for (i = 0; i < n; i++) {                                                              \
                T x = a[i], y = b[i];                                                              \
                switch (op->sub) {                                                                 \
                case CMP_EQ: c[i] = x == y; break;                                                 \
                case CMP_NE: c[i] = !(x == y); break;                                              \
                case CMP_LT: c[i] = x < y; break;                                                  \
                case CMP_LE: c[i] = x <= y; break;                                                 \
                case CMP_GT: c[i] = x > y; break;                                                  \
                default: c[i] = x >= y; break;                                                     \
                }                                                                                  \
            }                                                                                      \
            break;                                                                                 \
        }                                                                                          \
        default: break;                                                                            \
        }                                                                                          \
    }
typedef float flt;
typedef double dbl;
/* min and max with -0 below +0, as the GPU's min and max order them (C's
 * fmin and fmax may return either zero) */
static float min_f(float a, float b)
{
    return a == 0 && b == 0 ? (signbit(a) ? a : b) : fminf(a, b);
}
static float max_f(float a, float b)
{
    return a == 0 && b == 0 ? (signbit(a) ? b : a) : fmaxf(a, b);
}
static double min_d(double a, double b)
{
    return a == 0 && b == 0 ? (signbit(a) ? a : b) : fmin(a, b);
}
static double max_d(double a, double b)
{
    return a == 0 && b == 0 ? (signbit(a) ? b : a) : fmax(a, b);
}

FLOAT_BINARY(flt, min_f, max_f, fmodf)
FLOAT_BINARY(dbl, min_d, max_d, fmod)

static bool binary(InterpProg *p, const IrOp *op)
{
    DType dt = op->operands[0]->type.dt;
    const void *a = interp_slot(p, op->operands[0]), *b = interp_slot(p, op->operands[1]);
    void *r = interp_slot(p, op->results[0]);
    int64_t n = type_numel(op->results[0]->type);
    switch (interp_kind(dt)) {
    case ST_I:
        if (op->kind != IR_CMP && op->kind != IR_AND && op->kind != IR_OR && op->kind != IR_XOR &&
            op->kind != IR_MIN && op->kind != IR_MAX && dt == DT_PTR)
            return interp_fail(p, op, "%s on pointers is not supported", ir_kind_name(op->kind));
        int_binary(op, dt, a, b, r, n);
        break;
    case ST_F:
        if (op->kind == IR_UMULHI || op->kind == IR_AND || op->kind == IR_OR ||
            op->kind == IR_XOR || op->kind == IR_SHL || op->kind == IR_SHR)
            return interp_fail(p, op, "%s on %s", ir_kind_name(op->kind), dtype_name(dt));
        flt_binary(op, a, b, r, n);
        if (op->kind != IR_CMP)
            interp_round_array(dt, r, n);
        break;
    case ST_D:
        if (op->kind == IR_UMULHI || op->kind == IR_AND || op->kind == IR_OR ||
            op->kind == IR_XOR || op->kind == IR_SHL || op->kind == IR_SHR)
            return interp_fail(p, op, "%s on %s", ir_kind_name(op->kind), dtype_name(dt));
        dbl_binary(op, a, b, r, n);
        break;
    }
    return true;
}

static void unary(const IrOp *op, DType dt, const void *x, void *r, int64_t n)
{
    switch (interp_kind(dt)) {
    case ST_I: {
        const int64_t *a = x;
        int64_t *o = r;
        for (int64_t i = 0; i < n; i++)
            o[i] =
                op->kind == IR_NEG ? (int64_t)(0 - (uint64_t)a[i]) : (dt == DT_I1 ? !a[i] : ~a[i]);
        interp_wrap_array(dt, o, n);
        break;
    }
    case ST_F: {
        const float *a = x;
        float *o = r;
        for (int64_t i = 0; i < n; i++)
            o[i] = 0.0f - a[i]; /* Triton's minus: -(+0.0) is +0.0 */
        break;
    }
    case ST_D: {
        const double *a = x;
        double *o = r;
        for (int64_t i = 0; i < n; i++)
            o[i] = 0.0 - a[i];
        break;
    }
    }
}

static double rsqrt_d(double x) { return 1.0 / sqrt(x); }

typedef double (*Fn1)(double);
static Fn1 math_fn(MathFn f)
{
    switch (f) {
    case MATH_EXP: return exp;
    case MATH_EXP2: return exp2;
    case MATH_LOG: return log;
    case MATH_LOG2: return log2;
    case MATH_SQRT:
    case MATH_SQRT_RN: return sqrt;
    case MATH_RSQRT: return rsqrt_d;
    case MATH_SIN: return sin;
    case MATH_COS: return cos;
    case MATH_ABS: return fabs;
    case MATH_FLOOR: return floor;
    case MATH_CEIL: return ceil;
    case MATH_ERF: return erf;
    case MATH_TANH: return tanh;
    default: return NULL;
    }
}

/* Math in double, rounded once to the dtype: within 1 ulp of the exact
 * result, so within libdevice's own error bounds of the GPU result. */
static bool math(InterpProg *p, const IrOp *op)
{
    DType dt = op->operands[0]->type.dt;
    const void *x = interp_slot(p, op->operands[0]);
    void *r = interp_slot(p, op->results[0]);
    int64_t n = type_numel(op->results[0]->type);
    if (interp_kind(dt) == ST_I && op->sub == MATH_ABS) {
        const int64_t *a = x;
        int64_t *o = r;
        for (int64_t i = 0; i < n; i++)
            o[i] = dtype_is_signed(dt) && a[i] < 0 ? (int64_t)(0 - (uint64_t)a[i]) : a[i];
        interp_wrap_array(dt, o, n);
        return true;
    }
    Fn1 fn = math_fn((MathFn)op->sub);
    if (!fn || interp_kind(dt) == ST_I)
        return interp_fail(p, op, "math function %s on %s is not supported",
                           math_fn_name((MathFn)op->sub), dtype_name(dt));
    if (dt == DT_F32 && op->sub == MATH_SQRT_RN) {
        for (int64_t i = 0; i < n; i++)
            ((float *)r)[i] = sqrtf(((const float *)x)[i]);
        return true;
    }
    /* exp2 of fp32 and narrower flushes subnormal results to zero, as the
     * GPU's ex2.approx.ftz does */
    bool ftz = op->sub == MATH_EXP2 && dt != DT_F64;
    for (int64_t i = 0; i < n; i++) {
        double v = fn(interp_get_double(dt, x, i));
        interp_set_double(dt, r, i, ftz && fabs(v) < FLT_MIN ? 0.0 : v);
    }
    return true;
}

static bool fma_op(InterpProg *p, const IrOp *op)
{
    DType dt = op->results[0]->type.dt;
    const void *a = interp_slot(p, op->operands[0]), *b = interp_slot(p, op->operands[1]);
    const void *c = interp_slot(p, op->operands[2]);
    void *r = interp_slot(p, op->results[0]);
    int64_t n = type_numel(op->results[0]->type);
    for (int64_t i = 0; i < n; i++) {
        if (interp_kind(dt) == ST_I)
            ((int64_t *)r)[i] = interp_wrap(
                dt,
                (int64_t)((uint64_t)((const int64_t *)a)[i] * (uint64_t)((const int64_t *)b)[i] +
                          (uint64_t)((const int64_t *)c)[i]));
        else if (dt == DT_F32)
            ((float *)r)[i] =
                fmaf(((const float *)a)[i], ((const float *)b)[i], ((const float *)c)[i]);
        else
            interp_set_double(dt, r, i,
                              fma(interp_get_double(dt, a, i), interp_get_double(dt, b, i),
                                  interp_get_double(dt, c, i)));
    }
    return true;
}

static bool select_op(InterpProg *p, const IrOp *op)
{
    const int64_t *c = interp_slot(p, op->operands[0]);
    int64_t n = type_numel(op->results[0]->type);
    bool cs = op->operands[0]->type.rank == 0 && op->results[0]->type.rank > 0;
    size_t es = interp_elsize(op->results[0]->type.dt);
    const unsigned char *a = interp_slot(p, op->operands[1]), *b = interp_slot(p, op->operands[2]);
    unsigned char *r = interp_slot(p, op->results[0]);
    if (es == 8) {
        for (int64_t i = 0; i < n; i++)
            ((int64_t *)r)[i] = c[cs ? 0 : i] ? ((const int64_t *)a)[i] : ((const int64_t *)b)[i];
    } else {
        for (int64_t i = 0; i < n; i++)
            ((int32_t *)r)[i] = c[cs ? 0 : i] ? ((const int32_t *)a)[i] : ((const int32_t *)b)[i];
    }
    return true;
}

static bool bitcast(InterpProg *p, const IrOp *op)
{
    DType from = op->operands[0]->type.dt, to = op->results[0]->type.dt;
    const void *x = interp_slot(p, op->operands[0]);
    void *r = interp_slot(p, op->results[0]);
    int64_t n = type_numel(op->results[0]->type);
    for (int64_t i = 0; i < n; i++)
        interp_from_bits(to, r, i, interp_to_bits(from, x, i));
    return true;
}

static bool addptr(InterpProg *p, const IrOp *op)
{
    const IrValue *pv = op->operands[0];
    uint64_t es = interp_memsize(pv->type.elem);
    const int64_t *a = interp_slot(p, pv), *b = interp_slot(p, op->operands[1]);
    int64_t *r = interp_slot(p, op->results[0]);
    int64_t n = type_numel(op->results[0]->type);
    bool ub = uns64(op->operands[1]->type.dt);
    for (int64_t i = 0; i < n; i++) {
        uint64_t off = ub ? (uint64_t)b[i] : (uint64_t)(int64_t)b[i];
        r[i] = (int64_t)((uint64_t)a[i] + off * es);
    }
    return true;
}

bool interp_elementwise(InterpProg *p, const IrOp *op)
{
    const IrValue *res = op->nres ? op->results[0] : NULL;
    int64_t n = res ? type_numel(res->type) : 0;
    switch (op->kind) {
    case IR_ADD:
    case IR_SUB:
    case IR_MUL:
    case IR_DIV:
    case IR_REM:
    case IR_AND:
    case IR_OR:
    case IR_XOR:
    case IR_SHL:
    case IR_SHR:
    case IR_MIN:
    case IR_MAX:
    case IR_UMULHI:
    case IR_CMP: return binary(p, op);
    case IR_NEG:
    case IR_NOT:
        unary(op, res->type.dt, interp_slot(p, op->operands[0]), interp_slot(p, res), n);
        return true;
    case IR_SELECT: return select_op(p, op);
    case IR_FMA: return fma_op(p, op);
    case IR_MATH: return math(p, op);
    case IR_EXTERN: return interp_extern(p, op);
    case IR_CAST:
        if (op->sub == CAST_RTZ)
            interp_cast_rtz(interp_slot(p, op->operands[0]), res->type.dt, interp_slot(p, res), n);
        else
            interp_cast(op->operands[0]->type.dt, interp_slot(p, op->operands[0]), res->type.dt,
                        interp_slot(p, res), n);
        return true;
    case IR_BITCAST: return bitcast(p, op);
    case IR_ADDPTR: return addptr(p, op);
    case IR_PTR_TO_INT:
    case IR_INT_TO_PTR:
        memcpy(interp_slot(p, res), interp_slot(p, op->operands[0]), (size_t)n * 8);
        interp_wrap_array(res->type.dt, interp_slot(p, res), n);
        return true;
    default:
        return interp_fail(p, op, "internal error: '%s' is not elementwise",
                           ir_kind_name(op->kind));
    }
}
