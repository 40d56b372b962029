/* fold.c: constant folding and algebraic simplification. Folds elementwise
 * ops, casts, bitcasts and shape ops on constants (scalar or splat), a
 * handful of identities (x+0, x*1, x*0 for ints, addptr p, 0, x == x, ...),
 * the accumulator of x + dot(a, b, 0) moved into the dot, compares that a
 * scalar's known lower bound decides, `if` on a constant condition and
 * `for` loops whose constant bounds run no iteration. Assumes verified IR;
 * guarantees the result still verifies, never folds what the GPU would not
 * compute the same way (division by zero, out-of-range shifts and
 * float-to-int conversions), and leaves dead operands for pass_dce. Ids are
 * dense again at the end. */
#include "passes/passes.h"

#include <math.h>
#include <string.h>

/* ---- constants ------------------------------------------------------------ */

static IrOp *const_def(const IrValue *v)
{
    return v && v->def && v->def->kind == IR_CONST ? v->def : NULL;
}

/* A value as the canonical ival of dtype dt: i1 is 0/1, signed dtypes are
 * sign-extended from their width, unsigned ones zero-extended. */
static int64_t wrap_int(DType dt, uint64_t v)
{
    int bits = dtype_bits(dt);
    if (dt == DT_I1)
        return (int64_t)(v & 1);
    if (bits >= 64 || bits <= 0)
        return (int64_t)v;
    uint64_t mask = (1ull << bits) - 1;
    v &= mask;
    if (dtype_is_signed(dt) && (v >> (bits - 1)))
        v |= ~mask;
    return (int64_t)v;
}

/* The canonical integer of a constant (sema may store u32 -1 either way). */
static int64_t ival_of(const IrOp *c)
{
    return wrap_int(c->results[0]->type.dt, (uint64_t)c->ival);
}

static bool is_int_const(const IrValue *v, int64_t want)
{
    IrOp *c = const_def(v);
    return c && dtype_is_int(v->type.dt) && ival_of(c) == want;
}

/* Rounds x to a binary float with `mant` fraction bits, smallest normal
 * exponent `emin` and largest finite `maxv`, ties to even. */
static double round_to(double x, int mant, int emin, double maxv)
{
    if (isnan(x) || isinf(x) || x == 0)
        return x;
    int e;
    frexp(fabs(x), &e); /* |x| = m * 2^e, m in [0.5, 1) */
    e -= 1;
    if (e < emin)
        e = emin;
    double q = ldexp(1.0, e - mant);
    double r = nearbyint(fabs(x) / q) * q;
    if (r > maxv)
        r = INFINITY;
    return x < 0 ? -r : r;
}

static double round_float(DType dt, double x)
{
    switch (dt) {
    case DT_F16: return round_to(x, 10, -14, 65504.0);
    case DT_BF16: return round_to(x, 7, -126, 0x1.fep127);
    case DT_F32: return (double)(float)x;
    case DT_F8E4:
    case DT_F8E5:
    case DT_F8E4B15: return fp8_round(dt, x);
    default: return x;
    }
}

/* Turns op into a constant of its (single) result type, in place, so every
 * use keeps pointing at the same value. */
static void make_const(IrOp *op, int64_t iv, double fv)
{
    DType dt = op->results[0]->type.dt;
    op->kind = IR_CONST;
    op->nops = 0;
    op->operands = NULL;
    op->sub = op->flags = op->axis = op->nints = 0;
    op->str = op->str2 = NULL;
    if (dtype_is_float(dt)) {
        op->fval = round_float(dt, fv);
        op->ival = 0;
    } else {
        op->ival = wrap_int(dt, (uint64_t)iv);
        op->fval = (double)op->ival;
    }
}

/* Replaces every use of op's result with v and drops op. */
static void forward(IrOp *op, IrValue *v)
{
    ir_replace_uses(op->parent, op->results[0], v);
    ir_remove(op);
}

/* ---- integer and float arithmetic ------------------------------------------- */

static int64_t int_cmp(CmpPred p, DType dt, int64_t a, int64_t b)
{
    bool lt = dtype_is_signed(dt) ? a < b : (uint64_t)a < (uint64_t)b;
    bool eq = a == b;
    switch (p) {
    case CMP_EQ: return eq;
    case CMP_NE: return !eq;
    case CMP_LT: return lt;
    case CMP_LE: return lt || eq;
    case CMP_GT: return !lt && !eq;
    case CMP_GE: return !lt;
    }
    return 0;
}

static int64_t float_cmp(CmpPred p, double a, double b)
{
    switch (p) {
    case CMP_EQ: return a == b;
    case CMP_NE: return a != b; /* unordered: true on NaN */
    case CMP_LT: return a < b;
    case CMP_LE: return a <= b;
    case CMP_GT: return a > b;
    case CMP_GE: return a >= b;
    }
    return 0;
}

/* Integer binary op at dtype dt; false when the GPU result is undefined or
 * we choose not to fold (division by zero, shifts past the width). */
static bool int_binary(IrKind k, DType dt, int64_t a, int64_t b, int64_t *out)
{
    bool sg = dtype_is_signed(dt);
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    int bits = dtype_bits(dt);
    switch (k) {
    case IR_ADD: *out = (int64_t)(ua + ub); return true;
    case IR_SUB: *out = (int64_t)(ua - ub); return true;
    case IR_MUL: *out = (int64_t)(ua * ub); return true;
    case IR_DIV:
    case IR_REM:
        if (b == 0)
            return false;
        if (!sg)
            *out = (int64_t)(k == IR_DIV ? ua / ub : ua % ub);
        else if (b == -1) /* avoids the C overflow on INT64_MIN / -1 */
            *out = k == IR_DIV ? (int64_t)(0 - ua) : 0;
        else
            *out = k == IR_DIV ? a / b : a % b;
        return true;
    case IR_AND: *out = a & b; return true;
    case IR_OR: *out = a | b; return true;
    case IR_XOR: *out = a ^ b; return true;
    case IR_SHL:
    case IR_SHR:
        if (b < 0 || b >= bits)
            return false;
        if (k == IR_SHL)
            *out = (int64_t)(ua << b);
        else if (sg)
            *out = a < 0 ? ~(~a >> b) : a >> b;
        else
            *out = (int64_t)(ua >> b);
        return true;
    case IR_MIN: *out = int_cmp(CMP_LT, dt, a, b) ? a : b; return true;
    case IR_MAX: *out = int_cmp(CMP_GT, dt, a, b) ? a : b; return true;
    default: return false;
    }
}

static bool float_binary(IrKind k, int sub, double a, double b, double *out)
{
    switch (k) {
    case IR_ADD: *out = a + b; return true;
    case IR_SUB: *out = a - b; return true;
    case IR_MUL: *out = a * b; return true;
    case IR_DIV: *out = a / b; return true;
    case IR_REM: *out = fmod(a, b); return true;
    case IR_MIN:
    case IR_MAX:
        if (isnan(a) || isnan(b)) {
            *out = sub == 1 ? NAN : isnan(a) ? b : a;
            return true;
        }
        if (a == b && signbit(a) != signbit(b))
            return false; /* -0 vs +0: leave it to the hardware */
        *out = (k == IR_MIN) == (a < b) ? a : b;
        return true;
    default: return false;
    }
}

/* ---- folding one op ------------------------------------------------------------ */

static bool fold_binary_consts(IrOp *op)
{
    IrOp *ca = const_def(op->operands[0]), *cb = const_def(op->operands[1]);
    if (!ca || !cb)
        return false;
    DType dt = op->operands[0]->type.dt;
    if (op->kind == IR_CMP) {
        int64_t r = dtype_is_float(dt)
            ? float_cmp((CmpPred)op->sub, round_float(dt, ca->fval), round_float(dt, cb->fval))
            : int_cmp((CmpPred)op->sub, dt, ival_of(ca), ival_of(cb));
        make_const(op, r, 0);
        return true;
    }
    if (dtype_is_float(dt)) {
        double r;
        if (!float_binary(op->kind, op->sub, round_float(dt, ca->fval), round_float(dt, cb->fval),
                          &r))
            return false;
        make_const(op, 0, r);
        return true;
    }
    int64_t r;
    if (!dtype_is_int(dt) || !int_binary(op->kind, dt, ival_of(ca), ival_of(cb), &r))
        return false;
    make_const(op, r, 0);
    return true;
}

static bool fold_unary_const(IrOp *op)
{
    IrOp *c = const_def(op->operands[0]);
    if (!c)
        return false;
    DType dt = op->operands[0]->type.dt;
    int64_t iv = dtype_is_int(dt) ? ival_of(c) : 0;
    double fv = round_float(dt, c->fval);
    if (op->kind == IR_NEG)
        make_const(op, (int64_t)(0 - (uint64_t)iv), 0.0 - fv); /* Triton's 0 - x */
    else if (dtype_is_int(dt))                                 /* IR_NOT */
        make_const(op, dt == DT_I1 ? !iv : ~iv, 0);
    else
        return false;
    return true;
}

/* Value casts between int and float dtypes of a constant; a float narrowed
 * with the cast's rounding. */
static bool fold_cast(IrOp *op)
{
    IrOp *c = const_def(op->operands[0]);
    if (!c)
        return false;
    DType from = op->operands[0]->type.dt, to = op->results[0]->type.dt;
    if (from == DT_PTR || to == DT_PTR)
        return false;
    if (dtype_is_int(from)) {
        int64_t iv = ival_of(c);
        double f = dtype_is_signed(from) || from == DT_I1 ? (double)iv : (double)(uint64_t)iv;
        if (to == DT_I1)
            make_const(op, iv != 0, 0);
        else
            make_const(op, iv, f);
        return true;
    }
    double x = round_float(from, c->fval);
    if (dtype_is_float(to) && op->sub == CAST_RTZ) {
        /* rounded once, toward zero; make_const's rounding to nearest
         * would then turn an fp8e5 infinity into its largest value */
        double r = dtype_round_toward_zero(to, x);
        make_const(op, 0, r);
        op->fval = r;
        return true;
    }
    if (dtype_is_float(to)) {
        make_const(op, 0, x);
        return true;
    }
    if (to == DT_I1) {
        make_const(op, x != 0, 0);
        return true;
    }
    /* float -> int: fold only when the truncated value fits */
    if (isnan(x))
        return false;
    double t = trunc(x);
    int bits = dtype_bits(to);
    double lo = dtype_is_signed(to) ? -ldexp(1.0, bits - 1) : 0;
    double hi = dtype_is_signed(to) ? ldexp(1.0, bits - 1) : ldexp(1.0, bits);
    if (t < lo || t >= hi)
        return false;
    make_const(op, dtype_is_signed(to) ? (int64_t)t : (int64_t)(uint64_t)t, 0);
    return true;
}

/* The bits of a constant of dtype dt: false for the 16- and 8-bit floats
 * (their encodings are left to codegen) and for NaN, whose payload a
 * double need not keep. */
static bool const_bits(const IrOp *c, DType dt, uint64_t *out)
{
    if (dtype_is_int(dt)) {
        *out = (uint64_t)ival_of(c);
        return true;
    }
    if (isnan(c->fval) || (dt != DT_F32 && dt != DT_F64))
        return false;
    if (dt == DT_F32) {
        float f = (float)c->fval;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        *out = u;
    } else {
        memcpy(out, &c->fval, sizeof *out);
    }
    return true;
}

/* A bitcast of a constant (tl.cast(1 << 23, tl.float32, bitcast=True)):
 * the constant its bits make, for ints and fp32/fp64 (NaN left to the
 * GPU's own bitcast). */
static bool fold_bitcast(IrOp *op)
{
    IrOp *c = const_def(op->operands[0]);
    DType from = op->operands[0]->type.dt, to = op->results[0]->type.dt;
    uint64_t bits;
    if (!c || dtype_bits(from) != dtype_bits(to) || !const_bits(c, from, &bits))
        return false;
    if (dtype_is_int(to)) {
        make_const(op, (int64_t)bits, 0);
        return true;
    }
    double v;
    if (to == DT_F32) {
        uint32_t u = (uint32_t)bits;
        float f;
        memcpy(&f, &u, sizeof f);
        v = f;
    } else if (to == DT_F64) {
        memcpy(&v, &bits, sizeof v);
    } else {
        return false;
    }
    if (isnan(v))
        return false;
    make_const(op, 0, v);
    return true;
}

/* x+0, x-0, x*1, x/1, x*0, x|0, x^0, x&0, x&-1, x<<0, x>>0 and their mirrors;
 * for floats only the exact ones (x*1, x/1, x-(+0), x+(-0)). */
static bool fold_identity(IrOp *op)
{
    IrValue *a = op->operands[0], *b = op->operands[1];
    DType dt = op->results[0]->type.dt;
    if (dtype_is_float(dt)) {
        IrOp *cb = const_def(b), *ca = const_def(a);
        bool b_one = cb && cb->fval == 1.0, a_one = ca && ca->fval == 1.0;
        bool b_pz = cb && cb->fval == 0 && !signbit(cb->fval);
        bool b_nz = cb && cb->fval == 0 && signbit(cb->fval);
        if (((op->kind == IR_MUL || op->kind == IR_DIV) && b_one) || (op->kind == IR_SUB && b_pz) ||
            (op->kind == IR_ADD && b_nz)) {
            forward(op, a);
            return true;
        }
        if (op->kind == IR_MUL && a_one) {
            forward(op, b);
            return true;
        }
        return false;
    }
    if (!dtype_is_int(dt))
        return false;
    int64_t ones = wrap_int(dt, ~0ull);
    switch (op->kind) {
    case IR_ADD:
    case IR_OR:
    case IR_XOR:
        if (is_int_const(b, 0)) {
            forward(op, a);
            return true;
        }
        if (is_int_const(a, 0)) {
            forward(op, b);
            return true;
        }
        return false;
    case IR_SUB:
    case IR_SHL:
    case IR_SHR:
        if (is_int_const(b, 0)) {
            forward(op, a);
            return true;
        }
        if (op->kind == IR_SUB && a == b) {
            make_const(op, 0, 0);
            return true;
        }
        return false;
    case IR_MUL:
        if (is_int_const(b, 1)) {
            forward(op, a);
            return true;
        }
        if (is_int_const(a, 1)) {
            forward(op, b);
            return true;
        }
        if (is_int_const(a, 0) || is_int_const(b, 0)) {
            make_const(op, 0, 0);
            return true;
        }
        return false;
    case IR_DIV:
        if (is_int_const(b, 1)) {
            forward(op, a);
            return true;
        }
        return false;
    case IR_AND:
        if (is_int_const(b, ones)) {
            forward(op, a);
            return true;
        }
        if (is_int_const(a, ones)) {
            forward(op, b);
            return true;
        }
        if (is_int_const(a, 0) || is_int_const(b, 0)) {
            make_const(op, 0, 0);
            return true;
        }
        return false;
    default: return false;
    }
}

static bool fold_select(IrOp *op)
{
    IrOp *c = const_def(op->operands[0]);
    if (c) {
        forward(op, op->operands[ival_of(c) ? 1 : 2]);
        return true;
    }
    if (op->operands[1] == op->operands[2]) {
        forward(op, op->operands[1]);
        return true;
    }
    return false;
}

/* A shape op of a (uniform) constant is the same constant in the new shape. */
static bool fold_shape_of_const(IrOp *op)
{
    IrOp *c = const_def(op->operands[0]);
    if (!c)
        return false;
    make_const(op, c->ival, c->fval);
    return true;
}

static int count_uses(const IrBlock *b, const IrValue *v)
{
    int n = 0;
    for (const IrOp *op = b->first; op; op = op->next) {
        for (int i = 0; i < op->nops; i++)
            n += op->operands[i] == v;
        for (int r = 0; r < op->nregions; r++)
            n += count_uses(op->regions[r], v);
    }
    return n;
}

/* x + dot(a, b, 0) -> dot(a, b, x) when the add is the dot's only user, so
 * the accumulator stays in the dot (as Triton's combine pass does; the sum
 * is rounded once less). The dot moves down to the add, below x's def. */
static bool dot_from_zero(IrOp *op, int s)
{
    IrValue *dv = op->operands[s];
    IrOp *d = dv->def;
    if (!d || d->kind != IR_DOT || d->nops != 3 || !d->operands[2] || !d->parent)
        return false;
    IrOp *acc = const_def(d->operands[2]);
    bool zero = acc && (dtype_is_float(dv->type.dt) ? acc->fval == 0 : ival_of(acc) == 0);
    return zero && type_eq(dv->type, op->results[0]->type) && count_uses(d->parent, dv) == 1;
}

/* Whether op a comes after op b in b's block. */
static bool comes_after(const IrOp *a, const IrOp *b)
{
    for (const IrOp *o = b->next; o; o = o->next)
        if (o == a)
            return true;
    return false;
}

/* When both operands are such dots (an unrolled `acc += tl.dot(...)`
 * whose first step already folded into dot(a0, b0, 0)), the later one
 * takes the other as its accumulator: the earlier dot moved down to the
 * add kept its operand tiles live across the next step's loads and dot
 * (mhc's mm_norm forward, 8 unrolled K steps: 2 KB of spills). */
static bool fold_dot_add(IrOp *op)
{
    bool z0 = dot_from_zero(op, 0), z1 = dot_from_zero(op, 1);
    int s = z0 && z1 ? (comes_after(op->operands[0]->def, op->operands[1]->def) ? 0 : 1)
        : z1         ? 1
        : z0         ? 0
                     : -1;
    if (s < 0)
        return false;
    IrValue *dv = op->operands[s], *x = op->operands[1 - s];
    IrOp *d = dv->def;
    ir_remove(d);
    ir_insert_before(op, d);
    d->operands[2] = x;
    forward(op, dv);
    return true;
}

/* Integer compares of a value with itself. */
static bool fold_cmp_self(IrOp *op)
{
    if (op->operands[0] != op->operands[1] || !dtype_is_int(op->operands[0]->type.dt))
        return false;
    CmpPred p = (CmpPred)op->sub;
    make_const(op, p == CMP_EQ || p == CMP_LE || p == CMP_GE, 0);
    return true;
}

/* ---- lower bounds of scalar integers -------------------------------------- */

/* Whether v is the index of a `for` that counts up from a constant lb >= 0
 * by a constant step > 0 to ub: in every iteration lb <= v < ub. */
static bool index_below(const IrValue *v, const IrValue *ub)
{
    const IrOp *loop = !v->def && v->owner && v->index == 0 ? v->owner->parent : NULL;
    if (!loop || loop->kind != IR_FOR || loop->operands[1] != ub)
        return false;
    IrOp *lb = const_def(loop->operands[0]), *st = const_def(loop->operands[2]);
    return lb && st && ival_of(lb) >= 0 && ival_of(st) > 0;
}

/* A lower bound of signed scalar integer v, where one is known: a
 * constant, ub - i for the index i of a loop to ub (at least 1: lb <= i <
 * ub with lb >= 0, so the difference neither wraps nor reaches 0), and the
 * min and max of bounded values. The guard `if tl.minimum(BLOCK, n - i) >
 * 0` inside `for i in range(0, n, BLOCK)` is then true, and its loads are
 * the loop's own, which the pipeline can take. */
static bool lower_bound(const IrValue *v, int depth, int64_t *out)
{
    const IrOp *d = v->def;
    int64_t a, b;
    if (v->type.rank || !dtype_is_int(v->type.dt) || !dtype_is_signed(v->type.dt) || depth > 8)
        return false;
    if (d && d->kind == IR_CONST) {
        *out = ival_of(d);
        return true;
    }
    if (!d || d->nops != 2)
        return false;
    if (d->kind == IR_SUB && index_below(d->operands[1], d->operands[0])) {
        *out = 1;
        return true;
    }
    if (d->kind != IR_MIN && d->kind != IR_MAX)
        return false; /* no walk into operands that would bound nothing */
    bool ka = lower_bound(d->operands[0], depth + 1, &a);
    bool kb = lower_bound(d->operands[1], depth + 1, &b);
    if (d->kind == IR_MIN && ka && kb) {
        *out = a < b ? a : b;
        return true;
    }
    if (d->kind == IR_MAX && (ka || kb)) {
        *out = ka && kb ? (a > b ? a : b) : ka ? a : b;
        return true;
    }
    return false;
}

/* x > c and x >= c (c < x, c <= x) with constant c below (or at) x's
 * lower bound. */
static bool fold_cmp_bound(IrOp *op)
{
    CmpPred p = (CmpPred)op->sub;
    int x = const_def(op->operands[0]) ? 1 : 0;
    if (x)
        p = p == CMP_LT ? CMP_GT : p == CMP_LE ? CMP_GE : CMP_EQ;
    IrOp *c = const_def(op->operands[1 - x]);
    int64_t lo;
    if ((p != CMP_GT && p != CMP_GE) || !c || !lower_bound(op->operands[x], 0, &lo))
        return false;
    int64_t k = ival_of(c);
    if (p == CMP_GT ? lo <= k : lo < k)
        return false;
    make_const(op, 1, 0);
    return true;
}

/* A `for` whose constant bounds give no iteration yields its inits. */
static bool fold_empty_for(IrOp *op)
{
    IrOp *lb = const_def(op->operands[0]), *ub = const_def(op->operands[1]);
    IrOp *st = const_def(op->operands[2]);
    if (!lb || !ub || !st || op->nops != op->nres + 3)
        return false;
    DType dt = op->operands[0]->type.dt;
    int64_t step = ival_of(st);
    bool up = dtype_is_signed(dt) ? step > 0 : step != 0;
    if (step == 0 || int_cmp(up ? CMP_LT : CMP_GT, dt, ival_of(lb), ival_of(ub)))
        return false; /* runs at least once (or forever) */
    for (int i = 0; i < op->nres; i++)
        ir_replace_uses(op->parent, op->results[i], op->operands[3 + i]);
    ir_remove(op);
    return true;
}

/* `if` on a constant: the taken region's ops move before the if and its
 * yield's values replace the results. */
static bool fold_if(IrOp *op)
{
    IrOp *c = const_def(op->operands[0]);
    if (!c)
        return false;
    int r = ival_of(c) ? 0 : 1;
    IrBlock *taken = r < op->nregions ? op->regions[r] : NULL;
    if (!taken) {
        if (op->nres)
            return false;
        ir_remove(op);
        return true;
    }
    IrOp *y = taken->last;
    if (!y || y->kind != IR_YIELD || y->nops != op->nres)
        return false;
    while (taken->first != y) {
        IrOp *m = taken->first;
        ir_remove(m);
        ir_insert_before(op, m);
    }
    for (int i = 0; i < op->nres; i++)
        ir_replace_uses(op->parent, op->results[i], y->operands[i]);
    ir_remove(op);
    return true;
}

static bool fold_op(IrOp *op)
{
    for (int i = 0; i < op->nops; i++)
        if (!op->operands[i] && op->kind != IR_LOAD && op->kind != IR_STORE &&
            op->kind != IR_ATOMIC_RMW)
            return false;
    switch (op->kind) {
    case IR_ADD: return fold_binary_consts(op) || fold_identity(op) || fold_dot_add(op);
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
    case IR_MAX: return fold_binary_consts(op) || fold_identity(op);
    case IR_CMP: return fold_binary_consts(op) || fold_cmp_self(op) || fold_cmp_bound(op);
    case IR_NEG:
    case IR_NOT: return fold_unary_const(op);
    case IR_CAST: return fold_cast(op);
    case IR_BITCAST: return fold_bitcast(op);
    case IR_SELECT: return fold_select(op);
    case IR_SPLAT:
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_TRANS: return fold_shape_of_const(op);
    case IR_ADDPTR:
        if (is_int_const(op->operands[1], 0)) {
            forward(op, op->operands[0]);
            return true;
        }
        return false;
    case IR_IF: return fold_if(op);
    case IR_FOR: return fold_empty_for(op);
    default: return false;
    }
}

/* Regions first, so an `if` being inlined has folded contents and the ops
 * it moves out need no second visit; then the op itself. */
static bool fold_block(IrBlock *b)
{
    bool changed = false;
    for (IrOp *op = b->first, *next; op; op = next) {
        next = op->next;
        for (int r = 0; r < op->nregions; r++)
            changed |= fold_block(op->regions[r]);
        changed |= fold_op(op);
    }
    return changed;
}

void pass_fold(IrFunc *f)
{
    for (int round = 0; round < 8 && fold_block(f->body); round++)
        ;
    ir_renumber(f);
}
