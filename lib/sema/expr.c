/* sema/expr.c: values, type promotion, broadcasting and the operators.
 * Follows Triton's semantic.py: Python numbers are "weak" and adapt to the
 * other operand's dtype; tensors meet by numpy broadcasting; every
 * elementwise IR op this file emits has operands of identical type. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sema/spec.h"

/* ---- values ------------------------------------------------------------------ */

SVal sv_int(int64_t i) { return (SVal){.k = SV_INT, .i = i}; }
SVal sv_float(double f) { return (SVal){.k = SV_FLOAT, .f = f}; }
SVal sv_bool(bool b) { return (SVal){.k = SV_BOOL, .i = b}; }
SVal sv_none(void) { return (SVal){.k = SV_NONE}; }
SVal sv_tensor(IrValue *v) { return v ? (SVal){.k = SV_TENSOR, .v = v} : (SVal){.k = SV_UNDEF}; }
SVal sv_dtype(Type t) { return (SVal){.k = SV_DTYPE, .ty = t}; }

/* Triton's tensor.type. A block of pointers has the Type of a block
 * pointer's pointer<block<T>>, so i tells the two apart. */
SVal sv_value_type(Type t)
{
    SVal d = sv_dtype(t);
    d.i = t.rank > 0 && t.dt == DT_PTR;
    return d;
}

bool sv_is_block_type(SVal v)
{
    return v.k == SV_DTYPE && v.ty.rank > 0 && (v.ty.dt != DT_PTR || v.i);
}
SVal sv_str(const char *s) { return (SVal){.k = SV_STR, .s = s}; }

SVal sv_tuple(Sema *s, const SVal *items, int n)
{
    SVal t = {.k = SV_TUPLE, .n = n};
    t.items = arena_alloc(s->a, sizeof(SVal) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        t.items[i] = items[i];
    return t;
}

bool sv_is_num(SVal v) { return v.k == SV_INT || v.k == SV_FLOAT || v.k == SV_BOOL; }

bool sv_is_const(SVal v)
{
    if (v.k == SV_TUPLE) {
        for (int i = 0; i < v.n; i++)
            if (!sv_is_const(v.items[i]))
                return false;
        return true;
    }
    return sv_is_num(v) || v.k == SV_DTYPE || v.k == SV_STR || v.k == SV_NONE;
}

const char *sema_type_str(Sema *s, Type t) { return type_str(s->a, t); }

const char *sv_describe(Sema *s, SVal v)
{
    switch (v.k) {
    case SV_INT:
        if (v.big)
            return arena_printf(s->a, "constexpr int %llu", (unsigned long long)v.i);
        return arena_printf(s->a, "constexpr int %lld", (long long)v.i);
    case SV_FLOAT: return arena_printf(s->a, "constexpr float %g", v.f);
    case SV_BOOL: return v.i ? "constexpr True" : "constexpr False";
    case SV_DTYPE: return arena_printf(s->a, "dtype %s", sema_type_str(s, v.ty));
    case SV_STR: return arena_printf(s->a, "string '%s'", v.s);
    case SV_NONE:
        return v.s ? arena_printf(s->a, "None (parameter '%s' was given None)", v.s) : "None";
    case SV_TUPLE: return arena_printf(s->a, "a tuple of %d", v.n);
    case SV_TENSOR: return sema_type_str(s, v.v->type);
    case SV_FUNC: return arena_printf(s->a, "function '%s'", v.fn->name);
    case SV_NS: return arena_printf(s->a, "module '%s'", v.s);
    case SV_MODULE:
        return arena_printf(s->a, "module '%s'",
                            v.fn->src && v.fn->src->name ? v.fn->src->name : "?");
    case SV_BUILTIN: return arena_printf(s->a, "builtin '%s'", v.s);
    case SV_SLICE: return "a slice";
    case SV_BLOCKPTR: return arena_printf(s->a, "a block pointer to %s", sema_type_str(s, v.ty));
    case SV_DESC: return arena_printf(s->a, "a tensor descriptor of %s", sema_type_str(s, v.ty));
    case SV_VOID: return "no value";
    default: return "an invalid value";
    }
}

SVal sema_err(Sema *s, Span at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(s->d, DIAG_ERROR, at, fmt, ap);
    va_end(ap);
    return (SVal){.k = SV_UNDEF};
}

/* An SV_UNDEF with no reason is the result of an earlier error: callers
 * propagate it silently so one mistake gives one message. */
static bool poisoned(SVal v) { return v.k == SV_UNDEF; }

/* ---- types of Python numbers ----------------------------------------------- */

DType sema_literal_dtype(SVal v)
{
    if (v.k == SV_BOOL)
        return DT_I1;
    if (v.k == SV_FLOAT) {
        double a = fabs(v.f);
        if (isinf(a) || a == 0 || isnan(a) || (a >= 0x1p-126 && a <= 0x1.fffffep127))
            return DT_F32;
        return DT_F64;
    }
    if (v.big)
        return DT_U64;
    if (v.i >= INT32_MIN && v.i <= INT32_MAX)
        return DT_I32;
    if (v.i > INT32_MAX && v.i <= (int64_t)UINT32_MAX)
        return DT_U32;
    return DT_I64;
}

static int kind_rank(DType t) { return t == DT_I1 ? 0 : dtype_is_int(t) ? 1 : 2; }

/* Triton's computation_type_impl: the dtype both operands of an
 * arithmetic op are converted to. divmod: the op is /, // or %. */
DType sema_promote(Sema *s, DType a, bool a_weak, DType b, bool b_weak, bool divmod, Span at)
{
    if (a_weak != b_weak) {
        DType sc = a_weak ? a : b, te = a_weak ? b : a;
        if (kind_rank(sc) <= kind_rank(te)) {
            if (divmod && (te == DT_F16 || te == DT_BF16))
                return DT_F32;
            return te;
        }
    }
    if (a == DT_F64 || b == DT_F64)
        return DT_F64;
    if (a == DT_F32 || b == DT_F32)
        return DT_F32;
    /* fp16 with bf16 computes in fp32 as docs/LANGUAGE.md states:
     * Triton 3.6 picks fp16, which overflows bf16 values past 65504
     * silently. fp16 with ints stays fp16, as in Triton. */
    if ((a == DT_F16 && b == DT_BF16) || (a == DT_BF16 && b == DT_F16))
        return DT_F32;
    if (a == DT_F16 || b == DT_F16)
        return divmod ? DT_F32 : DT_F16;
    if (a == DT_BF16 || b == DT_BF16) /* bf16 only with bf16; bf16 with an int is fp32 */
        return !divmod && a == b ? DT_BF16 : DT_F32;
    /* one fp8 stays (its arithmetic is then refused, where Triton 3.6
     * fails to lower it); two formats meet in fp16, '/' and '%' included */
    if (dtype_is_fp8(a) && dtype_is_fp8(b))
        return a == b ? a : DT_F16;
    if (dtype_is_fp8(a) || dtype_is_fp8(b)) {
        sema_err(s, at,
                 "cannot combine %s with %s: fp8 values do not mix with integers "
                 "(convert with .to())",
                 dtype_name(a), dtype_name(b));
        return DT_VOID;
    }
    if (a == DT_I1 && b == DT_I1)
        return DT_I1;
    bool as = dtype_is_signed(a) || a == DT_I1, bs = dtype_is_signed(b) || b == DT_I1;
    int ab = dtype_bits(a), bb = dtype_bits(b);
    if (divmod && as != bs && a != DT_I1 && b != DT_I1) {
        sema_err(s, at,
                 "cannot use '/', '//' or '%%' with %s and %s: they differ in signedness; "
                 "cast them to the same signedness",
                 dtype_name(a), dtype_name(b));
        return DT_VOID;
    }
    if (as == bs)
        return ab >= bb ? a : b;
    if (!as)
        return ab >= bb ? a : b;
    return bb >= ab ? b : a;
}

/* ---- making tensors ------------------------------------------------------------ */

static Type shaped(DType dt, Type like) { return type_block(dt, like.rank, like.shape); }

IrValue *sema_const(Sema *s, Type t, SVal c, Span at)
{
    IrOp *op = ir_build(&s->b, IR_CONST, at, NULL, 0, &t, 1);
    double fv = c.k == SV_FLOAT ? c.f : c.big ? (double)(uint64_t)c.i : (double)c.i;
    if (dtype_is_float(t.dt)) {
        /* an fp8 constant is the value the conversion would give */
        op->fval = dtype_is_fp8(t.dt) ? fp8_round(t.dt, fv) : fv;
        op->ival = 0;
    } else {
        /* a float for an int dtype converts as the cast would at run time
         * (saturating; 1e300 does not fit in 64 bits) */
        int64_t iv = c.k == SV_FLOAT ? dtype_float_to_int(t.dt, c.f) : c.i;
        if (t.dt == DT_I1)
            iv = iv != 0;
        op->ival = iv;
        op->fval = (double)iv;
    }
    return op->results[0];
}

IrValue *sema_to_tensor(Sema *s, SVal v, Span at)
{
    if (v.k == SV_TENSOR)
        return v.v;
    if (sv_is_num(v))
        return sema_const(s, type_scalar(sema_literal_dtype(v)), v, at);
    if (!poisoned(v))
        sema_err(s, at, "expected a tensor or a number, got %s", sv_describe(s, v));
    return NULL;
}

bool sema_check_not_fp8(Sema *s, DType dt, Span at, const char *what)
{
    if (!dtype_is_fp8(dt))
        return true;
    if (dt == DT_F8E4B15) { /* Triton types it i8: its ops would work on the bytes */
        sema_err(s, at,
                 "%s is not supported on fp8e4b15 values: Triton 3.6 holds them as bytes and "
                 "cannot compute on them; convert to tl.float16 or tl.float32 first (fp8e4b15 "
                 "values load, store, select, reshape, convert with .to(), feed tl.dot and "
                 "tl.abs)",
                 what);
        return false;
    }
    sema_err(s, at,
             "%s is not supported on %s values: Triton 3.6 cannot lower fp8 arithmetic "
             "either; convert to tl.float16 or tl.float32 first (fp8 values load, store, "
             "select, reshape, convert with .to(), feed tl.dot, tl.abs and tl.maximum, and "
             "two fp8 formats combine in fp16)",
             what, dtype_name(dt));
    return false;
}

bool sema_check_cast(Sema *s, DType from, DType to, Span at)
{
    if (from == to || !(dtype_is_fp8(from) || dtype_is_fp8(to)))
        return true;
    if (to == DT_F8E4B15 && from != DT_F16 && from != DT_F32) {
        sema_err(s, at,
                 "cannot convert %s to fp8e4b15: Triton 3.6 converts to it only from "
                 "tl.float16 and tl.float32 (convert to one of them first)",
                 dtype_name(from));
        return false;
    }
    if (dtype_is_float(from) && dtype_is_float(to))
        return true;
    sema_err(s, at,
             "cannot convert %s to %s: fp8 values convert only to and from float "
             "dtypes (go through tl.float32)",
             dtype_name(from), dtype_name(to));
    return false;
}

IrValue *sema_cast(Sema *s, IrValue *v, DType to, Span at)
{
    if (!v || v->type.dt == to)
        return v;
    if (!sema_check_cast(s, v->type.dt, to, at))
        return NULL;
    if (v->type.dt == DT_PTR) {
        if (to != DT_I64 && to != DT_U64) {
            sema_err(s, at, "cannot cast a pointer (%s) to %s", sema_type_str(s, v->type),
                     dtype_name(to));
            return NULL;
        }
        /* the IR gives i64; uint64 takes the same bits, as in Triton */
        IrValue *i = ir_unary(&s->b, IR_PTR_TO_INT, at, v, shaped(DT_I64, v->type));
        return to == DT_U64 ? sema_bitcast(s, i, DT_U64, at) : i;
    }
    return ir_unary(&s->b, IR_CAST, at, v, shaped(to, v->type));
}

IrValue *sema_bitcast(Sema *s, IrValue *v, DType to, Span at)
{
    if (!v || v->type.dt == to)
        return v;
    if (dtype_bits(v->type.dt) != dtype_bits(to) || v->type.dt == DT_PTR || to == DT_I1) {
        sema_err(s, at, "cannot bitcast %s to %s: the bit widths differ", sema_type_str(s, v->type),
                 dtype_name(to));
        return NULL;
    }
    return ir_unary(&s->b, IR_BITCAST, at, v, shaped(to, v->type));
}

IrValue *sema_expand_dims(Sema *s, IrValue *v, int axis, Span at)
{
    Type t = v->type;
    if (t.rank == 0) {
        int one = 1;
        Type r = type_with_shape(t, 1, &one);
        return ir_unary(&s->b, IR_SPLAT, at, v, r);
    }
    if (t.rank >= TK_MAX_RANK) {
        sema_err(s, at, "blocks have at most %d dimensions", TK_MAX_RANK);
        return NULL;
    }
    int shape[TK_MAX_RANK];
    for (int i = 0, j = 0; i <= t.rank; i++)
        shape[i] = i == axis ? 1 : t.shape[j++];
    IrOp *op = ir_build(&s->b, IR_EXPAND_DIMS, at, &v, 1,
                        (Type[]){type_with_shape(t, t.rank + 1, shape)}, 1);
    op->axis = axis;
    return op->results[0];
}

IrValue *sema_reshape(Sema *s, IrValue *v, int rank, const int *shape, Span at)
{
    Type r = type_with_shape(v->type, rank, shape);
    if (type_eq(r, v->type))
        return v;
    if (v->type.rank == 0 && rank > 0)
        return ir_unary(&s->b, IR_SPLAT, at, v, r);
    return ir_unary(&s->b, IR_RESHAPE, at, v, r);
}

bool sema_check_numel(Sema *s, int rank, const int *shape, Span at)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0 || __builtin_mul_overflow(n, (int64_t)shape[i], &n) ||
            n > SEMA_MAX_NUMEL) {
            sema_err(s, at, "block has more than %d elements", SEMA_MAX_NUMEL);
            return false;
        }
    }
    return true;
}

int sema_common_shape(Type a, Type b, int *rank, int *shape)
{
    int r = a.rank > b.rank ? a.rank : b.rank;
    for (int i = 0; i < r; i++) {
        int ai = a.rank - r + i, bi = b.rank - r + i;
        int x = ai >= 0 ? a.shape[ai] : 1, y = bi >= 0 ? b.shape[bi] : 1;
        if (x != y && x != 1 && y != 1)
            return i;
        shape[i] = x == 1 ? y : x;
    }
    *rank = r;
    return -1;
}

bool sema_broadcast_shapes(Sema *s, Type a, Type b, int *rank, int *shape, Span at)
{
    int i = sema_common_shape(a, b, rank, shape);
    if (i >= 0) {
        int r = a.rank > b.rank ? a.rank : b.rank;
        int ai = a.rank - r + i, bi = b.rank - r + i;
        sema_err(s, at, "shapes do not broadcast: %s and %s (dimension %d is %d vs %d)",
                 sema_type_str(s, a), sema_type_str(s, b), i, ai >= 0 ? a.shape[ai] : 1,
                 bi >= 0 ? b.shape[bi] : 1);
        return false;
    }
    return sema_check_numel(s, *rank, shape, at);
}

IrValue *sema_broadcast(Sema *s, IrValue *v, int rank, const int *shape, Span at)
{
    if (!v)
        return NULL;
    Type t = v->type;
    Type want = type_with_shape(t, rank, shape);
    if (type_eq(t, want))
        return v;
    if (t.rank == 0)
        return ir_unary(&s->b, IR_SPLAT, at, v, want);
    if (t.rank > rank) {
        sema_err(s, at, "cannot broadcast %s to the smaller shape %s", sema_type_str(s, t),
                 sema_type_str(s, want));
        return NULL;
    }
    if (!sema_check_numel(s, rank, shape, at))
        return NULL;
    while (v->type.rank < rank)
        v = sema_expand_dims(s, v, 0, at);
    t = v->type;
    for (int i = 0; i < rank; i++)
        if (t.shape[i] != shape[i] && t.shape[i] != 1) {
            sema_err(s, at, "cannot broadcast %s to %s (dimension %d is %d vs %d)",
                     sema_type_str(s, t), sema_type_str(s, want), i, t.shape[i], shape[i]);
            return NULL;
        }
    if (type_eq(t, want))
        return v;
    return ir_unary(&s->b, IR_BROADCAST, at, v, want);
}

bool sema_broadcast_pair(Sema *s, IrValue **a, IrValue **b, Span at)
{
    int rank, shape[TK_MAX_RANK];
    if (!sema_broadcast_shapes(s, (*a)->type, (*b)->type, &rank, shape, at))
        return false;
    *a = sema_broadcast(s, *a, rank, shape, at);
    *b = sema_broadcast(s, *b, rank, shape, at);
    return *a && *b;
}

/* A weak number becomes a constant of the target dtype and shape directly;
 * a tensor is cast and broadcast. */
/* Does the integer constant v fit the integer dtype dt? */
static bool int_fits(SVal v, DType dt)
{
    int w = dtype_bits(dt);
    if (v.big)
        return dt == DT_U64;
    if (!dtype_is_signed(dt))
        return v.i >= 0 && (w == 64 || v.i <= (int64_t)((UINT64_C(1) << w) - 1));
    return w == 64 || (v.i >= -(INT64_C(1) << (w - 1)) && v.i < (INT64_C(1) << (w - 1)));
}

/* An operand in the operation's dtype and shape. A number that does not
 * fit the integer dtype the operation takes (`x_i32 + 2**40`) is an error,
 * as in Triton; it would wrap silently. */
static IrValue *coerce(Sema *s, SVal v, DType dt, int rank, const int *shape, Span at)
{
    if (v.k == SV_INT && dtype_is_int(dt) && dt != DT_I1 && !int_fits(v, dt)) {
        sema_err(s, at, "the number %s is out of range for %s, the type of the operation",
                 v.big ? arena_printf(s->a, "%llu", (unsigned long long)v.i)
                       : arena_printf(s->a, "%lld", (long long)v.i),
                 dtype_name(dt));
        return NULL;
    }
    if (sv_is_num(v))
        return sema_const(s, type_block(dt, rank, shape), v, at);
    IrValue *x = sema_cast(s, v.v, dt, at);
    return sema_broadcast(s, x, rank, shape, at);
}

static DType dt_of(SVal v) { return v.k == SV_TENSOR ? v.v->type.dt : sema_literal_dtype(v); }
static Type type_of(SVal v)
{
    return v.k == SV_TENSOR ? v.v->type : type_scalar(sema_literal_dtype(v));
}

static bool check_operand(Sema *s, SVal v, Span at, const char *op)
{
    if (v.k == SV_TENSOR || sv_is_num(v))
        return true;
    if (!poisoned(v))
        sema_err(s, at, "unsupported operand for '%s': %s", op, sv_describe(s, v));
    return false;
}

static bool negative_weak(SVal v)
{
    return (v.k == SV_INT && !v.big && v.i < 0) || (v.k == SV_FLOAT && v.f < 0);
}

/* x >> y in their common type. As Triton's, the shift is arithmetic
 * where the tensor operand's own dtype (the left one's, or the right
 * one's after a number) is signed, even when the common type is unsigned
 * (an int32 tile shifted by a uint32 one keeps its sign bits). */
static IrValue *shift_right(Sema *s, SVal a, SVal b, IrValue *x, IrValue *y, Span at)
{
    DType own = a.k == SV_TENSOR ? a.v->type.dt : b.k == SV_TENSOR ? b.v->type.dt : x->type.dt;
    DType dt = x->type.dt;
    if (dtype_is_signed(dt) || !dtype_is_int(own) || !dtype_is_signed(own) || dt == DT_I1)
        return ir_binary(&s->b, IR_SHR, at, x, y, x->type);
    static const DType sgn[] = {
        [DT_U8] = DT_I8, [DT_U16] = DT_I16, [DT_U32] = DT_I32, [DT_U64] = DT_I64};
    IrValue *sx = sema_bitcast(s, x, sgn[dt], at), *sy = sema_bitcast(s, y, sgn[dt], at);
    if (!sx || !sy)
        return NULL;
    return sema_bitcast(s, ir_binary(&s->b, IR_SHR, at, sx, sy, sx->type), dt, at);
}

/* ---- pointer arithmetic ------------------------------------------------------- */

static SVal pointer_arith(Sema *s, int op, SVal a, SVal b, Span at)
{
    const char *sp = ast_op_spelling((OpKind)op);
    bool ap = dt_of(a) == DT_PTR, bp = dt_of(b) == DT_PTR;
    if (ap && bp)
        return sema_err(s, at, "cannot apply '%s' to two pointers (%s and %s)", sp,
                        sv_describe(s, a), sv_describe(s, b));
    if (op != OP_ADD && !(op == OP_SUB && ap))
        return sema_err(s, at, "'%s' is not defined on pointers (%s)", sp,
                        sv_describe(s, ap ? a : b));
    SVal ptr = ap ? a : b, off = ap ? b : a;
    DType odt = dt_of(off);
    if (!dtype_is_int(odt))
        return sema_err(s, at, "pointer arithmetic needs an integer offset, got %s",
                        sv_describe(s, off));
    IrValue *p = ptr.v;
    IrValue *o = sema_to_tensor(s, off, at);
    if (o && odt == DT_I1) /* a bool offsets by 0 or 1, as Triton zero-extends it */
        o = sema_cast(s, o, DT_I32, at);
    if (!o || !sema_broadcast_pair(s, &p, &o, at))
        return (SVal){.k = SV_UNDEF};
    if (op == OP_SUB)
        o = ir_unary(&s->b, IR_NEG, at, o, o->type);
    return sv_tensor(ir_binary(&s->b, IR_ADDPTR, at, p, o, p->type));
}

/* ---- binary operators ------------------------------------------------------------ */

static IrKind arith_kind(int op)
{
    switch (op) {
    case OP_ADD: return IR_ADD;
    case OP_SUB: return IR_SUB;
    case OP_MUL: return IR_MUL;
    case OP_DIV:
    case OP_FLOORDIV: return IR_DIV;
    case OP_MOD: return IR_REM;
    case OP_BITAND: return IR_AND;
    case OP_BITOR: return IR_OR;
    case OP_BITXOR: return IR_XOR;
    case OP_LSHIFT: return IR_SHL;
    case OP_RSHIFT: return IR_SHR;
    default: return IR_OP_COUNT;
    }
}

/* Upcasts fp16/bf16 to fp32 around a math function, as Triton's libdevice
 * wrappers do; codegen only ever sees fp32/fp64 math. */
IrValue *sema_math(Sema *s, MathFn fn, IrValue *x, Span at)
{
    DType dt = x->type.dt;
    if (!sema_check_not_fp8(s, dt, at, "this math function"))
        return NULL;
    IrValue *y = dt == DT_F16 || dt == DT_BF16 ? sema_cast(s, x, DT_F32, at) : x;
    IrOp *op = ir_build(&s->b, IR_MATH, at, &y, 1, &y->type, 1);
    op->sub = fn;
    return sema_cast(s, op->results[0], dt, at);
}

static SVal power(Sema *s, SVal a, SVal b, Span at)
{
    if (b.k == SV_TENSOR)
        return sema_err(s, at, "'**' needs a constexpr exponent, got %s", sv_describe(s, b));
    IrValue *x = a.v;
    if (!sema_check_not_fp8(s, x->type.dt, at, "'**'"))
        return (SVal){.k = SV_UNDEF};
    if (b.k != SV_FLOAT && b.i >= 0 && b.i <= 64) {
        if (b.i == 0)
            return sv_tensor(sema_const(s, x->type, sv_int(1), at));
        /* square-and-multiply keeps the product exact for ints */
        IrValue *acc = NULL, *sq = x;
        for (int64_t e = b.i; e; e >>= 1) {
            if (e & 1)
                acc = acc ? ir_binary(&s->b, IR_MUL, at, acc, sq, x->type) : sq;
            if (e > 1)
                sq = ir_binary(&s->b, IR_MUL, at, sq, sq, x->type);
        }
        return sv_tensor(acc);
    }
    DType dt = x->type.dt;
    if (!dtype_is_float(dt))
        x = sema_cast(s, x, DT_F32, at);
    DType cdt = x->type.dt == DT_F64 ? DT_F64 : DT_F32;
    IrValue *xc = sema_cast(s, x, cdt, at);
    if (b.k == SV_FLOAT && b.f == 0.5)
        return sv_tensor(sema_cast(s, sema_math(s, MATH_SQRT, xc, at), x->type.dt, at));
    IrValue *e = sema_const(s, xc->type, b, at);
    IrValue *ops[2] = {xc, e};
    IrOp *op = ir_build(&s->b, IR_EXTERN, at, ops, 2, &xc->type, 1);
    op->str = cdt == DT_F64 ? "__nv_pow" : "__nv_powf";
    return sv_tensor(sema_cast(s, op->results[0], x->type.dt, at));
}

/* t1 + t2 and t * n on tuples, as Triton's tl.tuple joins and repeats. */
static SVal tuple_arith(Sema *s, int op, SVal a, SVal b, Span at)
{
    if (op == OP_ADD && a.k == SV_TUPLE && b.k == SV_TUPLE) {
        SVal *items = arena_alloc(s->a, sizeof(SVal) * (size_t)(a.n + b.n + 1));
        for (int i = 0; items && i < a.n + b.n; i++)
            items[i] = i < a.n ? a.items[i] : b.items[i - a.n];
        return items ? sv_tuple(s, items, a.n + b.n) : (SVal){.k = SV_UNDEF};
    }
    SVal t = a.k == SV_TUPLE ? a : b, n = a.k == SV_TUPLE ? b : a;
    int64_t times;
    if (op != OP_MUL || n.k != SV_INT)
        return sema_err(s, at, "unsupported operand for '%s': %s and %s",
                        ast_op_spelling((OpKind)op), sv_describe(s, a), sv_describe(s, b));
    if (!sema_const_int(s, n, at, "a tuple's repeat count", &times))
        return (SVal){.k = SV_UNDEF};
    times = times < 0 ? 0 : times;
    if (times * (int64_t)t.n > 4096)
        return sema_err(s, at, "a tuple of %lld items is too long", (long long)(times * t.n));
    SVal *items = arena_alloc(s->a, sizeof(SVal) * (size_t)(times * t.n + 1));
    for (int64_t i = 0; items && i < times * t.n; i++)
        items[i] = t.items[i % t.n];
    return items ? sv_tuple(s, items, (int)(times * t.n)) : (SVal){.k = SV_UNDEF};
}

SVal sema_binary(Sema *s, int op, SVal a, SVal b, Span at)
{
    if (poisoned(a) || poisoned(b))
        return (SVal){.k = SV_UNDEF};
    if (a.k == SV_STR && op == OP_MOD)
        return sema_str_percent(s, a, b, at);
    if (a.k == SV_TUPLE || b.k == SV_TUPLE)
        return tuple_arith(s, op, a, b, at);
    if (sv_is_const(a) && sv_is_const(b))
        return sema_fold_binary(s, op, a, b, at);
    const char *sp = ast_op_spelling((OpKind)op);
    if (!check_operand(s, a, at, sp) || !check_operand(s, b, at, sp))
        return (SVal){.k = SV_UNDEF};
    if (dt_of(a) == DT_PTR || dt_of(b) == DT_PTR)
        return pointer_arith(s, op, a, b, at);
    if (op == OP_POW) {
        if (a.k != SV_TENSOR)
            return sema_err(s, at, "'**' with a tensor exponent is not supported");
        return power(s, a, b, at);
    }
    bool divmod = op == OP_DIV || op == OP_FLOORDIV || op == OP_MOD;
    bool aw = sv_is_num(a), bw = sv_is_num(b);
    DType dt = sema_promote(s, dt_of(a), aw, dt_of(b), bw, divmod, at);
    if (dt == DT_VOID)
        return (SVal){.k = SV_UNDEF};
    IrKind k = arith_kind(op);
    if (k == IR_OP_COUNT)
        return sema_err(s, at, "operator '%s' is not supported on tensors", sp);
    if (!sema_check_not_fp8(s, dt, at, arena_printf(s->a, "'%s'", sp)))
        return (SVal){.k = SV_UNDEF};
    bool bitwise = k == IR_AND || k == IR_OR || k == IR_XOR || k == IR_SHL || k == IR_SHR;
    if (bitwise && !dtype_is_int(dt))
        return sema_err(s, at, "'%s' needs integer operands, got %s and %s", sp, sv_describe(s, a),
                        sv_describe(s, b));
    if (!dtype_is_float(dt) && dtype_is_int(dt) && !dtype_is_signed(dt) && dt != DT_I1 &&
        (negative_weak(a) || negative_weak(b)))
        return sema_err(s, at,
                        "cannot combine the unsigned %s with a negative number; cast "
                        "one of them explicitly",
                        dtype_name(dt));
    if (op == OP_DIV && dtype_is_int(dt))
        dt = DT_F32;
    int rank, shape[TK_MAX_RANK];
    if (!sema_broadcast_shapes(s, type_of(a), type_of(b), &rank, shape, at))
        return (SVal){.k = SV_UNDEF};
    IrValue *x = coerce(s, a, dt, rank, shape, at);
    IrValue *y = coerce(s, b, dt, rank, shape, at);
    if (!x || !y)
        return (SVal){.k = SV_UNDEF};
    IrValue *r =
        k == IR_SHR ? shift_right(s, a, b, x, y, at) : ir_binary(&s->b, k, at, x, y, x->type);
    if (!r)
        return (SVal){.k = SV_UNDEF};
    if (op == OP_FLOORDIV && dtype_is_float(dt))
        r = sema_math(s, MATH_FLOOR, r, at);
    return sv_tensor(r);
}

/* Promotes and broadcasts two operands of an elementwise builtin
 * (maximum, where, fma, ...) exactly as the arithmetic operators do. */
bool sema_binary_operands(Sema *s, SVal a, SVal b, bool divmod, IrValue **x, IrValue **y, Span at)
{
    if (poisoned(a) || poisoned(b))
        return false;
    if (!check_operand(s, a, at, "an elementwise builtin") ||
        !check_operand(s, b, at, "an elementwise builtin"))
        return false;
    if (sv_is_num(a) && sv_is_num(b)) { /* two numbers: each its own type, as in Triton */
        a = sv_tensor(sema_to_tensor(s, a, at));
        b = sv_tensor(sema_to_tensor(s, b, at));
        if (!a.v || !b.v)
            return false;
    }
    if (dt_of(a) == DT_PTR || dt_of(b) == DT_PTR) {
        sema_err(s, at, "this builtin is not defined on pointers (%s, %s)", sv_describe(s, a),
                 sv_describe(s, b));
        return false;
    }
    DType dt = sema_promote(s, dt_of(a), sv_is_num(a), dt_of(b), sv_is_num(b), divmod, at);
    if (dt == DT_VOID)
        return false;
    int rank, shape[TK_MAX_RANK];
    if (!sema_broadcast_shapes(s, type_of(a), type_of(b), &rank, shape, at))
        return false;
    *x = coerce(s, a, dt, rank, shape, at);
    *y = coerce(s, b, dt, rank, shape, at);
    return *x && *y;
}

/* The number literal v becomes as Triton's comparisons take it: a tensor
 * of its literal type (to_tensor) cast to dt. A float literal typed fp32
 * keeps its fp32 value in fp64; an integer wraps to dt's width. */
static SVal literal_cast(SVal v, DType dt)
{
    if (v.k == SV_FLOAT && dt == DT_F64 && sema_literal_dtype(v) == DT_F32)
        v.f = (double)(float)v.f;
    if (v.k != SV_INT || !dtype_is_int(dt) || dt == DT_I1)
        return v;
    int bits = dtype_bits(dt);
    if (bits >= 64) { /* the same 64 bits, read at dt's signedness */
        v.big = !dtype_is_signed(dt) && v.i < 0;
        return v;
    }
    uint64_t u = (uint64_t)v.i & ((1ull << bits) - 1);
    if (dtype_is_signed(dt) && (u >> (bits - 1)))
        u |= ~((1ull << bits) - 1);
    v.i = (int64_t)u;
    v.big = false;
    return v;
}

SVal sema_compare(Sema *s, int op, SVal a, SVal b, Span at)
{
    if (poisoned(a) || poisoned(b))
        return (SVal){.k = SV_UNDEF};
    bool ok;
    if (sv_is_const(a) && sv_is_const(b))
        return sema_fold_compare(s, op, a, b, at, &ok);
    /* Python's identity on Triton's tensor objects: a name bound to
     * another's tensor is it (`alias = seed` makes `alias is seed`); a
     * tensor is never None */
    if (op == OP_IS || op == OP_IS_NOT) {
        bool same = a.k == SV_TENSOR && b.k == SV_TENSOR && a.v == b.v;
        return sv_bool((op == OP_IS) == same);
    }
    const char *sp = ast_op_spelling((OpKind)op);
    if (op == OP_IN || op == OP_NOT_IN)
        return sema_err(s, at, "'%s' is not supported on tensors", sp);
    if (!check_operand(s, a, at, sp) || !check_operand(s, b, at, sp))
        return (SVal){.k = SV_UNDEF};
    DType da = dt_of(a), db = dt_of(b), dt;
    if (da == DT_PTR || db == DT_PTR) {
        if (da != db)
            return sema_err(s, at, "cannot compare %s with %s", sv_describe(s, a),
                            sv_describe(s, b));
        dt = DT_PTR;
    } else {
        /* a number takes part at its own type (to_tensor), not as a weak
         * scalar as in arithmetic: an fp16 tile compares with 0.1 in fp32,
         * an int8 one with 200 in int32 */
        dt = sema_promote(s, da, false, db, false, false, at);
        if (dt == DT_VOID || !sema_check_not_fp8(s, dt, at, arena_printf(s->a, "'%s'", sp)))
            return (SVal){.k = SV_UNDEF};
        a = sv_is_num(a) ? literal_cast(a, dt) : a;
        b = sv_is_num(b) ? literal_cast(b, dt) : b;
    }
    int rank, shape[TK_MAX_RANK];
    if (!sema_broadcast_shapes(s, type_of(a), type_of(b), &rank, shape, at))
        return (SVal){.k = SV_UNDEF};
    IrValue *x =
        dt == DT_PTR ? sema_broadcast(s, a.v, rank, shape, at) : coerce(s, a, dt, rank, shape, at);
    IrValue *y =
        dt == DT_PTR ? sema_broadcast(s, b.v, rank, shape, at) : coerce(s, b, dt, rank, shape, at);
    if (!x || !y)
        return (SVal){.k = SV_UNDEF};
    static const CmpPred preds[] = {[OP_LT] = CMP_LT, [OP_LE] = CMP_LE, [OP_GT] = CMP_GT,
                                    [OP_GE] = CMP_GE, [OP_EQ] = CMP_EQ, [OP_NE] = CMP_NE};
    IrOp *o = ir_build(&s->b, IR_CMP, at, (IrValue *[]){x, y}, 2,
                       (Type[]){type_block(DT_I1, rank, shape)}, 1);
    o->sub = preds[op];
    return sv_tensor(o->results[0]);
}

IrValue *sema_to_bool(Sema *s, IrValue *v, Span at)
{
    if (!v || v->type.dt == DT_I1)
        return v;
    if (!sema_check_not_fp8(s, v->type.dt, at, "a truth test"))
        return NULL;
    IrValue *zero = sema_const(s, v->type, sv_int(0), at);
    IrOp *o =
        ir_build(&s->b, IR_CMP, at, (IrValue *[]){v, zero}, 2, (Type[]){shaped(DT_I1, v->type)}, 1);
    o->sub = CMP_NE;
    return o->results[0];
}

SVal sema_unary(Sema *s, int op, SVal a, Span at)
{
    if (poisoned(a))
        return a;
    if (sv_is_num(a)) {
        switch (op) {
        case OP_NEG:
            if (a.k == SV_FLOAT)
                return sv_float(-a.f);
            if (a.i == INT64_MIN && a.big) /* -(2**63), written as a literal */
                return sv_int(INT64_MIN);
            if (a.i == INT64_MIN)
                return sema_err(s, at, "constexpr integer overflow in '-'");
            return sv_int(-a.i);
        case OP_POS: return a.k == SV_BOOL ? sv_int(a.i) : a;
        case OP_NOT: return sv_bool(a.k == SV_FLOAT ? a.f == 0 : a.i == 0);
        case OP_INVERT:
            if (a.k == SV_FLOAT)
                return sema_err(s, at, "'~' needs an integer, got %s", sv_describe(s, a));
            return sv_int(~a.i);
        default: break;
        }
    }
    if (op == OP_NOT && sv_is_const(a)) {
        bool t;
        return sema_truth(s, a, at, &t) ? sv_bool(!t) : (SVal){.k = SV_UNDEF};
    }
    if (a.k != SV_TENSOR)
        return sema_err(s, at, "unsupported operand for '%s': %s", ast_op_spelling((OpKind)op),
                        sv_describe(s, a));
    IrValue *x = a.v;
    DType dt = x->type.dt;
    if (dt == DT_PTR && op != OP_POS)
        return sema_err(s, at, "'%s' is not defined on pointers (%s)", ast_op_spelling((OpKind)op),
                        sv_describe(s, a));
    switch (op) {
    case OP_POS: return a;
    case OP_NEG:
        if (!sema_check_not_fp8(s, dt, at, "'-'"))
            return (SVal){.k = SV_UNDEF};
        return sv_tensor(ir_unary(&s->b, IR_NEG, at, x, x->type));
    case OP_INVERT:
        if (!dtype_is_int(dt))
            return sema_err(s, at, "'~' needs an integer tensor, got %s", sv_describe(s, a));
        return sv_tensor(ir_unary(&s->b, IR_NOT, at, x, x->type));
    case OP_NOT:
        return sv_tensor(
            ir_unary(&s->b, IR_NOT, at, sema_to_bool(s, x, at), shaped(DT_I1, x->type)));
    default: return sema_err(s, at, "unsupported unary operator");
    }
}

/* ---- constexpr helpers ------------------------------------------------------------ */

bool sema_truth(Sema *s, SVal v, Span at, bool *out)
{
    switch (v.k) {
    case SV_INT:
    case SV_BOOL: *out = v.i != 0; return true;
    case SV_FLOAT: *out = v.f != 0; return true;
    case SV_NONE: *out = false; return true;
    case SV_STR: *out = v.s[0] != 0; return true;
    case SV_TUPLE: *out = v.n != 0; return true;
    case SV_DTYPE:
    case SV_FUNC:
    case SV_NS: /* a module (or an importlib spec of one), true as Python's objects are */
    case SV_MODULE: *out = true; return true;
    default: break;
    }
    if (!poisoned(v))
        sema_err(s, at, "expected a constexpr condition, got %s", sv_describe(s, v));
    return false;
}

bool sema_const_int(Sema *s, SVal v, Span at, const char *what, int64_t *out)
{
    if (v.k == SV_INT || v.k == SV_BOOL) {
        *out = v.i;
        return true;
    }
    if (v.k == SV_TENSOR && v.v->def && v.v->def->kind == IR_CONST)
        sema_err(s, at,
                 "%s must be a constexpr, got the runtime value %s (a number assigned "
                 "with '=' is a runtime value, as in Triton; write 'NAME: tl.constexpr = ...')",
                 what, sv_describe(s, v));
    else if (v.k == SV_TENSOR)
        sema_err(s, at, "%s must be a constexpr, got the runtime value %s", what,
                 sv_describe(s, v));
    else if (!poisoned(v))
        sema_err(s, at, "%s must be a constexpr integer, got %s", what, sv_describe(s, v));
    return false;
}

/* Same binding: the same IR value or equal compile-time values. */
bool sema_same_val(SVal a, SVal b)
{
    if (a.k != b.k)
        return false;
    switch (a.k) {
    case SV_TENSOR: return a.v == b.v;
    case SV_INT:
    case SV_BOOL: return a.i == b.i && a.big == b.big;
    case SV_FLOAT: return a.f == b.f || (a.f != a.f && b.f != b.f);
    case SV_DTYPE: return type_eq(a.ty, b.ty) && a.i == b.i;
    case SV_STR: return strcmp(a.s, b.s) == 0;
    case SV_NONE:
    case SV_VOID: return true;
    case SV_UNDEF: return a.s == b.s;
    case SV_FUNC:
    case SV_MODULE: return a.fn == b.fn;
    case SV_NS:
    case SV_BUILTIN: return a.s == b.s && a.ns == b.ns && a.n == b.n;
    case SV_TUPLE:
    case SV_BLOCKPTR:
    case SV_DESC:
        if (a.n != b.n || a.i != b.i || !type_eq(a.ty, b.ty))
            return false;
        for (int i = 0; i < a.n; i++)
            if (!sema_same_val(a.items[i], b.items[i]))
                return false;
        return true;
    default: return false;
    }
}
