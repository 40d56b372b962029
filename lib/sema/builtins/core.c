/* sema/builtins/core.c: the tl builtins for the grid, creating blocks, casts,
 * elementwise math, hints and debugging. Each checks its arguments the way
 * Triton's semantic.py does and emits IR with explicit splats and casts. */
#include <string.h>

#include "sema/spec.h"


static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

/* ---- grid ------------------------------------------------------------------------ */

static SVal b_grid(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    int64_t axis;
    if (!sema_const_int(s, a[0], at[0], arena_printf(s->a, "the axis of tl.%s", b->name), &axis))
        return bad();
    if (axis < 0 || axis > 2)
        return sema_err(s, at[0], "%s axis must be 0, 1 or 2, got %lld", b->name, (long long)axis);
    Type t = type_scalar(DT_I32);
    IrKind k = b->arg ? IR_NUM_PROGRAMS : IR_PROGRAM_ID;
    /* inside a loop, the value made once at the kernel's top: a tile's
     * origin then reads only values from before the loop (tile.c) */
    IrValue **made = &s->grid[b->arg ? 1 : 0][axis];
    if (s->loop_depth > 0 && *made)
        return sv_tensor(*made);
    IrBuilder top = {s->f, s->f ? s->f->body : NULL, s->f ? s->f->body->first : NULL};
    bool hoist = s->loop_depth > 0 && top.blk;
    IrOp *op = ir_build(hoist ? &top : &s->b, k, call, NULL, 0, &t, 1);
    op->axis = (int)axis;
    if (hoist)
        *made = op->results[0];
    return sv_tensor(op->results[0]);
}

/* ---- creation ---------------------------------------------------------------------- */

static SVal b_arange(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    int64_t lo, hi;
    if (!sema_const_int(s, a[0], at[0], "arange's start", &lo) ||
        !sema_const_int(s, a[1], at[1], "arange's end", &hi))
        return bad();
    if (hi <= lo)
        return sema_err(s, call, "arange(%lld, %lld): end must be greater than start",
                        (long long)lo, (long long)hi);
    int64_t len;
    if (__builtin_sub_overflow(hi, lo, &len) || lo < INT32_MIN || hi > INT32_MAX)
        return sema_err(s, call, "arange(%lld, %lld): start and end must fit in int32",
                        (long long)lo, (long long)hi);
    if (!is_pow2(len))
        return sema_err(s, call,
                        "arange(%lld, %lld): the length end - start = %lld must be a "
                        "power of two",
                        (long long)lo, (long long)hi, (long long)len);
    if (len > SEMA_MAX_NUMEL)
        return sema_err(s, call, "arange(%lld, %lld) is too large (at most %d elements of i32)",
                        (long long)lo, (long long)hi, SEMA_MAX_NUMEL);
    int n = (int)len;
    Type t = type_block(DT_I32, 1, &n);
    IrOp *op = ir_build(&s->b, IR_ARANGE, call, NULL, 0, &t, 1);
    op->ival = lo;
    op->ival2 = hi;
    TK_UNUSED(b);
    return sv_tensor(op->results[0]);
}

bool sema_block_shape(Sema *s, SVal shape, Span at, int *rank, int *dims)
{
    SVal one = shape;
    const SVal *items = shape.k == SV_TUPLE ? shape.items : &one;
    int n = shape.k == SV_TUPLE ? shape.n : 1;
    if (n > TK_MAX_RANK) {
        sema_err(s, at, "blocks have at most %d dimensions, got %d", TK_MAX_RANK, n);
        return false;
    }
    int64_t numel = 1;
    for (int i = 0; i < n; i++) {
        int64_t d;
        if (!sema_const_int(s, items[i], at, "a block dimension", &d))
            return false;
        if (!is_pow2(d)) {
            sema_err(s, at, "block dimensions must be powers of two, got %lld", (long long)d);
            return false;
        }
        numel *= d;
        if (numel > SEMA_MAX_NUMEL) {
            sema_err(s, at, "block has more than %d elements", SEMA_MAX_NUMEL);
            return false;
        }
        dims[i] = (int)d;
    }
    *rank = n;
    return true;
}

static bool dtype_arg(Sema *s, SVal v, Span at, const char *what, DType *out)
{
    if (v.k == SV_DTYPE && v.ty.dt != DT_PTR) {
        *out = v.ty.dt;
        return true;
    }
    if (v.k != SV_UNDEF)
        sema_err(s, at, "%s must be a dtype such as tl.float32, got %s", what, sv_describe(s, v));
    return false;
}

static SVal full(Sema *s, int rank, const int *dims, SVal value, DType dt, Span vat, Span call)
{
    Type t = type_block(dt, rank, dims);
    if (sv_is_num(value))
        return sv_tensor(sema_const(s, t, value, call));
    if (value.k != SV_TENSOR || value.v->type.rank != 0)
        return sema_err(s, vat, "the fill value must be a scalar, got %s", sv_describe(s, value));
    return sv_tensor(sema_broadcast(s, sema_cast(s, value.v, dt, call), rank, dims, call));
}

static SVal b_full(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    int rank, dims[TK_MAX_RANK];
    DType dt;
    bool zeros = b->arg == 0;
    SVal dts = zeros ? a[1] : a[2];
    if (!sema_block_shape(s, a[0], at[0], &rank, dims) ||
        !dtype_arg(s, dts.k == SV_VOID ? sv_dtype(type_scalar(DT_F32)) : dts, call, "dtype", &dt))
        return bad();
    return full(s, rank, dims, zeros ? sv_int(0) : a[1], dt, zeros ? call : at[1], call);
}

static SVal b_full_like(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    if (!x)
        return bad();
    bool zeros = b->arg == 0;
    SVal dts = zeros ? a[1] : a[2];
    DType dt = x->type.dt;
    if (sv_has(dts) && !dtype_arg(s, dts, call, "dtype", &dt))
        return bad();
    return full(s, x->type.rank, x->type.shape, zeros ? sv_int(0) : a[1], dt, zeros ? call : at[1],
                call);
}

/* fp_downcast_rounding, checked as Triton 3.6's semantic.cast does once the
 * dtypes differ: a mode ("rtne", the default, too) names a float conversion
 * to fewer bits, and "rtz" only one its NVIDIA backend lowers (others abort
 * it). fp8e4b15's conversion rounds one way whatever the mode. */
static bool rounding_arg(Sema *s, SVal mode, Span at, DType from, DType to, bool *rtz)
{
    *rtz = false;
    if (!sv_has(mode))
        return true;
    if (mode.k != SV_STR || (strcmp(mode.s, "rtne") && strcmp(mode.s, "rtz"))) {
        sema_err(s, at, "fp_downcast_rounding must be 'rtne' or 'rtz'");
        return false;
    }
    if (!dtype_is_float(from) || !dtype_is_float(to) || dtype_bits(to) >= dtype_bits(from)) {
        sema_err(s, at,
                 "fp_downcast_rounding applies only to a float conversion to fewer bits, not "
                 "%s to %s",
                 dtype_name(from), dtype_name(to));
        return false;
    }
    if (strcmp(mode.s, "rtz") || to == DT_F8E4B15)
        return true;
    if (from != DT_F32 || (to != DT_F16 && to != DT_BF16 && to != DT_F8E5)) {
        sema_err(s, at,
                 "fp_downcast_rounding=\"rtz\" converts only fp32 to fp16, bf16 or fp8e5: "
                 "Triton 3.6 cannot lower %s to %s rounded toward zero",
                 dtype_name(from), dtype_name(to));
        return false;
    }
    *rtz = true;
    return true;
}

static SVal b_cast(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    if (a[1].k != SV_DTYPE)
        return sema_err(s, at[1], "the target of a cast must be a dtype, got %s",
                        sv_describe(s, a[1]));
    bool bitcast = false, rtz = false;
    if (sv_has(a[3]) && !sema_truth(s, a[3], at[3], &bitcast))
        return bad();
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    if (!x)
        return bad();
    /* a block type (a block pointer's element_ty) names its elements' type */
    Type to = type_elem(a[1].ty);
    /* a bitcast, and a cast to the same type, never read the mode */
    if (!bitcast && !type_eq(type_elem(x->type), to) &&
        !rounding_arg(s, a[2], at[2], x->type.dt, to.dt, &rtz))
        return bad();
    if (to.dt == DT_PTR) {
        Type r = type_with_shape(to, x->type.rank, x->type.shape);
        if (x->type.dt == DT_PTR)
            return sv_tensor(ir_unary(&s->b, IR_BITCAST, call, x, r));
        if (x->type.dt != DT_I64 && x->type.dt != DT_U64)
            return sema_err(s, call, "only 64-bit integers can become pointers, got %s",
                            sema_type_str(s, x->type));
        /* the IR converts i64 (a table of addresses read as uint64 first
         * takes the same bits as i64) */
        x = sema_bitcast(s, x, DT_I64, call);
        return x ? sv_tensor(ir_unary(&s->b, IR_INT_TO_PTR, call, x, r)) : bad();
    }
    if (bitcast)
        return sv_tensor(sema_bitcast(s, x, to.dt, call));
    IrValue *r = sema_cast(s, x, to.dt, call);
    if (r && rtz) /* an fp32 -> narrower float: sema_cast made one IR_CAST */
        r->def->sub = CAST_RTZ;
    return sv_tensor(r);
}

static SVal b_to_tensor(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(call);
    return sv_tensor(sema_arg_tensor(s, a[0], at[0], b, "the input"));
}

static SVal b_pointer_type(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    DType dt;
    TK_UNUSED(b), TK_UNUSED(call);
    if (!dtype_arg(s, a[0], at[0], "the element type", &dt))
        return bad();
    return sv_dtype(type_ptr(dt));
}

/* ---- elementwise math ------------------------------------------------------------------ */

static IrValue *float_arg(Sema *s, const Builtin *b, SVal v, Span at)
{
    IrValue *x = sema_arg_tensor(s, v, at, b, "the argument");
    if (x && !dtype_is_float(x->type.dt)) {
        sema_err(s, at, "tl.%s expects a floating-point argument, got %s", b->name,
                 sema_type_str(s, x->type));
        return NULL;
    }
    return x;
}

static SVal b_math(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = float_arg(s, b, a[0], at[0]);
    return x ? sv_tensor(sema_math(s, (MathFn)b->arg, x, call)) : bad();
}

static SVal b_abs(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the argument");
    if (!x)
        return bad();
    if (dtype_is_fp8(x->type.dt)) { /* the sign bit cleared, as Triton lowers fp8 abs */
        IrValue *u = sema_bitcast(s, x, DT_U8, call);
        SVal m = u ? sema_binary(s, OP_BITAND, sv_tensor(u), sv_int(0x7F), call) : bad();
        return m.k == SV_TENSOR ? sv_tensor(sema_bitcast(s, m.v, x->type.dt, call)) : bad();
    }
    if (dtype_is_float(x->type.dt))
        return sv_tensor(sema_math(s, MATH_ABS, x, call));
    if (!dtype_is_signed(x->type.dt))
        return sv_tensor(x);
    SVal neg = sema_compare(s, OP_LT, sv_tensor(x), sv_int(0), call);
    if (neg.k != SV_TENSOR)
        return bad();
    IrValue *m = ir_unary(&s->b, IR_NEG, call, x, x->type);
    return sv_tensor(
        ir_build(&s->b, IR_SELECT, call, (IrValue *[]){neg.v, m, x}, 3, &x->type, 1)->results[0]);
}

/* Triton's sigmoid is 1 / (1 + exp(-x)), with the usual promotions. */
static SVal b_sigmoid(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = float_arg(s, b, a[0], at[0]);
    if (!x)
        return bad();
    SVal neg = sema_unary(s, OP_NEG, sv_tensor(x), call);
    SVal e = sv_tensor(sema_math(s, MATH_EXP, neg.v, call));
    return sema_binary(s, OP_DIV, sv_int(1), sema_binary(s, OP_ADD, sv_int(1), e, call), call);
}

static SVal b_softmax(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = float_arg(s, b, a[0], at[0]);
    if (!x)
        return bad();
    SVal axis = sv_has(a[1]) ? a[1] : sv_int(0);
    SVal mx = sema_reduce(s, "max", x, axis, true, (SVal){.k = SV_VOID}, call);
    SVal z = sema_binary(s, OP_SUB, sv_tensor(x), mx, call);
    if (z.k != SV_TENSOR)
        return bad();
    SVal num = sv_tensor(sema_math(s, MATH_EXP, z.v, call));
    SVal den = sema_reduce(s, "sum", num.v, axis, true, (SVal){.k = SV_VOID}, call);
    return sema_binary(s, OP_DIV, num, den, call);
}

/* Triton's math functions take a number as a tensor of its own dtype (int32,
 * fp32), not as a weak literal, and compute bf16 in fp32. */
static SVal math_operand(Sema *s, SVal v, Span at)
{
    if (sv_is_num(v))
        return sv_tensor(sema_to_tensor(s, v, at));
    if (v.k == SV_TENSOR && v.v && v.v->type.dt == DT_BF16)
        return sv_tensor(sema_cast(s, v.v, DT_F32, at));
    return v;
}

static SVal b_minmax(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x, *y;
    TK_UNUSED(at);
    if (sv_is_num(a[0]) && sv_is_num(a[1]))
        return sema_compare(s, OP_LT, a[0], a[1], call).i == (b->arg == IR_MIN) ? a[0] : a[1];
    SVal l = math_operand(s, a[0], call), r = math_operand(s, a[1], call);
    if ((l.k == SV_TENSOR && !l.v) || (r.k == SV_TENSOR && !r.v) ||
        !sema_binary_operands(s, l, r, false, &x, &y, call))
        return bad();
    bool nan = false;
    if (sv_has(a[2]) && a[2].k != SV_UNDEF)
        nan = (a[2].k == SV_INT || a[2].k == SV_BOOL) && a[2].i != 0;
    /* fp8 compares in fp32: the larger (smaller) value converts back
     * exactly. Not fp8e4b15, which Triton cannot compare (and whose 1.875
     * would come back as 1.75). */
    DType dt = x->type.dt;
    if (dt == DT_F8E4B15 && !sema_check_not_fp8(s, dt, call, arena_printf(s->a, "tl.%s", b->name)))
        return bad();
    if (dtype_is_fp8(dt)) {
        x = sema_cast(s, x, DT_F32, call);
        y = sema_cast(s, y, DT_F32, call);
    }
    IrOp *op = ir_build(&s->b, (IrKind)b->arg, call, (IrValue *[]){x, y}, 2, &x->type, 1);
    op->sub = nan && dtype_is_float(x->type.dt);
    return sv_tensor(sema_cast(s, op->results[0], dt, call));
}

static SVal b_clamp(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    static const Builtin mx = {"maximum", "", b_minmax, IR_MAX, false};
    static const Builtin mn = {"minimum", "", b_minmax, IR_MIN, false};
    SVal t[3] = {a[0], a[1], a[3]};
    SVal lo = b_minmax(s, &mx, t, at, call);
    SVal u[3] = {lo, a[2], a[3]};
    return lo.k == SV_TENSOR ? b_minmax(s, &mn, u, at, call) : lo;
}

static SVal b_where(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *c = sema_to_bool(s, sema_arg_tensor(s, a[0], at[0], b, "the condition"), at[0]);
    IrValue *x, *y;
    bool px = a[1].k == SV_TENSOR && a[1].v->type.dt == DT_PTR;
    bool py = a[2].k == SV_TENSOR && a[2].v->type.dt == DT_PTR;
    if (c && (px || py)) { /* selecting between pointers: both of one pointer type */
        if (!px || !py || !type_eq(type_elem(a[1].v->type), type_elem(a[2].v->type)))
            return sema_err(s, call,
                            "tl.where between %s and %s: both must be pointers of one "
                            "type",
                            sv_describe(s, a[1]), sv_describe(s, a[2]));
        x = a[1].v;
        y = a[2].v;
        if (!sema_broadcast_pair(s, &x, &y, call))
            return bad();
    } else if (!c || !sema_binary_operands(s, a[1], a[2], false, &x, &y, call)) {
        return bad();
    }
    if (!sema_broadcast_pair(s, &c, &x, call) || !sema_broadcast_pair(s, &x, &y, call) ||
        !sema_broadcast_pair(s, &c, &y, call))
        return bad();
    return sv_tensor(
        ir_build(&s->b, IR_SELECT, call, (IrValue *[]){c, x, y}, 3, &x->type, 1)->results[0]);
}

static SVal b_fma(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x, *y, *z, *w;
    TK_UNUSED(at);
    if (!sema_binary_operands(s, a[0], a[1], false, &x, &y, call) ||
        !sema_binary_operands(s, sv_tensor(x), a[2], false, &z, &w, call) ||
        !sema_check_not_fp8(s, z->type.dt, call, "tl.fma"))
        return bad();
    if (!dtype_is_float(z->type.dt))
        return sema_err(s, call, "tl.%s expects floating-point arguments, got %s", b->name,
                        sema_type_str(s, z->type));
    y = sema_broadcast(s, sema_cast(s, y, z->type.dt, call), z->type.rank, z->type.shape, call);
    return sv_tensor(
        ir_build(&s->b, IR_FMA, call, (IrValue *[]){z, y, w}, 3, &z->type, 1)->results[0]);
}

static SVal b_cdiv(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b), TK_UNUSED(at);
    /* (x + (div - 1)) // div, as Triton writes it: div - 1 in div's own
     * dtype, so an int8 divisor of -128 wraps to 127 before x joins */
    SVal t = sema_binary(s, OP_SUB, a[1], sv_int(1), call);
    t = sema_binary(s, OP_ADD, a[0], t, call);
    return sema_binary(s, OP_FLOORDIV, t, a[1], call);
}

static SVal b_div(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x, *y;
    TK_UNUSED(at);
    if (!sema_binary_operands(s, a[0], a[1], true, &x, &y, call) ||
        !sema_check_not_fp8(s, x->type.dt, call, arena_printf(s->a, "tl.%s", b->name)))
        return bad();
    if (!dtype_is_float(x->type.dt))
        return sema_err(s, call, "tl.%s expects floating-point arguments, got %s", b->name,
                        sema_type_str(s, x->type));
    IrOp *op = ir_build(&s->b, IR_DIV, call, (IrValue *[]){x, y}, 2, &x->type, 1);
    op->sub = b->arg;
    return sv_tensor(op->results[0]);
}

static SVal b_umulhi(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x, *y;
    TK_UNUSED(at);
    if (!sema_binary_operands(s, a[0], a[1], false, &x, &y, call))
        return bad();
    if (!dtype_is_int(x->type.dt) || x->type.dt == DT_I1)
        return sema_err(s, call, "tl.%s expects integer arguments, got %s", b->name,
                        sema_type_str(s, x->type));
    return sv_tensor(ir_binary(&s->b, IR_UMULHI, call, x, y, x->type));
}

/* ---- hints ----------------------------------------------------------------------------- */

/* The op a hint about x is stated on, as Triton does it: the op that
 * defines x. A loop-carried x (an argument of a loop body still being
 * built) stands for its initial value here: Triton visits a loop body once
 * with the names bound to the values from before the loop to find what the
 * loop carries, and a hint statement in that visit annotates the initial
 * value's op. NULL where no single-result integer or pointer op defines x
 * (parameters, floats, loop results). */
static IrOp *hint_target(const IrValue *x)
{
    for (int depth = 0; x && depth < 64; depth++) {
        if (x->type.dt != DT_PTR && (!dtype_is_int(x->type.dt) || x->type.dt == DT_I1))
            return NULL;
        if (x->def) {
            IrKind k = x->def->kind;
            bool plain = x->def->nres == 1 && k != IR_FOR && k != IR_IF && k != IR_WHILE;
            return plain ? x->def : NULL;
        }
        const IrOp *loop = x->owner ? x->owner->parent : NULL;
        if (loop && loop->kind == IR_FOR && x->index >= 1 && 2 + x->index < loop->nops)
            x = loop->operands[2 + x->index];
        else if (loop && loop->kind == IR_WHILE && x->index < loop->nops)
            x = loop->operands[x->index];
        else
            return NULL;
    }
    return NULL;
}

/* Hint `kind` with per-dim vals on x: the values go on the op that defines
 * x (IrHints), so the statement form works and every use of x sees them.
 * x itself comes back, except where x has no such op of its own (a
 * parameter, a loop-carried value): there an IR_HINT op gives the hinted
 * value to what uses the result. */
SVal sema_hint(Sema *s, IrValue *x, int kind, const int *vals, int n, Span call)
{
    int v[TK_MAX_RANK] = {0};
    memcpy(v, vals, sizeof(int) * (size_t)n);
    IrOp *def = hint_target(x);
    if (def)
        memcpy(def->hints.v[kind], v, sizeof v);
    if (x->def && def == x->def)
        return sv_tensor(x);
    IrOp *op = ir_build(&s->b, IR_HINT, call, &x, 1, &x->type, 1);
    op->sub = kind;
    op->nints = n;
    memcpy(op->ints, v, sizeof v);
    return sv_tensor(op->results[0]);
}

/* tl.multiple_of / max_contiguous / max_constancy(x, values) (sema_hint). */
static SVal b_hint(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    if (!x)
        return bad();
    SVal one = a[1];
    const SVal *items = a[1].k == SV_TUPLE ? a[1].items : &one;
    int n = a[1].k == SV_TUPLE ? a[1].n : 1;
    int want = x->type.rank ? x->type.rank : 1;
    if (n != want)
        return sema_err(s, at[1], "tl.%s needs %d value%s (one per dimension of %s), got %d",
                        b->name, want, want == 1 ? "" : "s", sema_type_str(s, x->type), n);
    int vals[TK_MAX_RANK] = {0};
    for (int i = 0; i < n; i++) {
        int64_t v;
        if (!sema_const_int(s, items[i], at[1], "a hint value", &v))
            return bad();
        if (v < 1 || v > INT32_MAX)
            return sema_err(s, at[1], "hint values must be positive, got %lld", (long long)v);
        vals[i] = (int)v;
    }
    return sema_hint(s, x, b->arg, vals, n, call);
}

static SVal b_assume(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    if (a[0].k != SV_TENSOR) {
        bool t;
        if (sema_truth(s, a[0], at[0], &t) && !t)
            return sema_err(s, at[0], "tl.assume of a condition that is false at compile time");
        return sv_none();
    }
    IrValue *c = sema_to_bool(s, a[0].v, call);
    TK_UNUSED(b);
    ir_build(&s->b, IR_ASSUME, call, &c, 1, NULL, 0);
    return sv_none();
}

/* ---- debugging ------------------------------------------------------------------------- */

static SVal b_static_assert(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b);
    if (a[0].k == SV_TENSOR)
        return sema_err(s, at[0],
                        "static_assert needs a constexpr condition, got the runtime "
                        "value %s",
                        sema_type_str(s, a[0].v->type));
    bool t;
    if (!sema_truth(s, a[0], at[0], &t))
        return bad();
    const char *msg = a[1].k == SV_STR ? a[1].s : "";
    if (!t)
        return sema_err(s, call, "static_assert failed%s%s", msg[0] ? ": " : "", msg);
    return sv_none();
}

static void describe_into(Sema *s, StrBuf *sb, SVal v)
{
    switch (v.k) {
    case SV_INT:
        if (v.big)
            sb_printf(sb, "%llu", (unsigned long long)v.i);
        else
            sb_printf(sb, "%lld", (long long)v.i);
        break;
    case SV_FLOAT: sb_printf(sb, "%g", v.f); break;
    case SV_BOOL: sb_puts(sb, v.i ? "True" : "False"); break;
    case SV_STR: sb_puts(sb, v.s); break;
    case SV_DTYPE: sb_puts(sb, sema_type_str(s, v.ty)); break;
    case SV_TUPLE:
        sb_putc(sb, '(');
        for (int i = 0; i < v.n; i++) {
            if (i)
                sb_puts(sb, ", ");
            describe_into(s, sb, v.items[i]);
        }
        sb_puts(sb, v.n == 1 ? ",)" : ")");
        break;
    default: sb_puts(sb, sv_describe(s, v)); break;
    }
}

static SVal b_static_print(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    StrBuf sb;
    sb_init(&sb);
    TK_UNUSED(b), TK_UNUSED(at);
    for (int i = 0; i < a[0].n; i++) {
        if (i)
            sb_putc(&sb, ' ');
        describe_into(s, &sb, a[0].items[i]);
    }
    diag_report(s->d, DIAG_NOTE, call, "static_print: %s", sb.data ? sb.data : "");
    sb_free(&sb);
    return sv_none();
}

/* The prefix as Triton prints it: with values, ending in ": " (a last
 * character that is not a space becomes one first); longer than two
 * characters, starting with a space (it follows "idx (...)" directly). */
static const char *print_prefix(Sema *s, const char *p, bool values)
{
    size_t n = strlen(p);
    char *r = arena_alloc(s->a, n + 4);
    memcpy(r + 1, p, n + 1);
    char *q = r + 1;
    if (values && (n == 0 || q[n - 1] != ' '))
        q[n++] = ' ', q[n] = 0;
    if (values && (n < 2 || q[n - 2] != ':'))
        q[n - 1] = ':', q[n++] = ' ', q[n] = 0;
    if (n > 2 && q[0] != ' ')
        *--q = ' ';
    return q;
}

static SVal b_device_print(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    if (a[0].k != SV_STR)
        return sema_err(s, at[0], "device_print's prefix must be a string, got %s",
                        sv_describe(s, a[0]));
    bool hex = false;
    if (sv_has(a[2]) && !sema_truth(s, a[2], at[2], &hex))
        return bad();
    IrValue **vals = arena_alloc(s->a, sizeof(IrValue *) * (size_t)(a[1].n + 1));
    for (int i = 0; i < a[1].n; i++)
        if (!(vals[i] = sema_arg_tensor(s, a[1].items[i], call, b, "a printed value")) ||
            !sema_check_not_fp8(s, vals[i]->type.dt, call, "device_print"))
            return bad();
    IrOp *op = ir_build(&s->b, IR_PRINT, call, vals, a[1].n, NULL, 0);
    op->str = print_prefix(s, a[0].s, a[1].n > 0);
    op->flags = hex ? IRF_HEX : 0;
    return sv_none();
}

static SVal b_device_assert(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    if (!s->debug) /* as Triton: checked only with debug=True (TRITON_DEBUG=1) */
        return sv_none();
    const char *msg = a[1].k == SV_STR ? a[1].s : "";
    if (a[0].k != SV_TENSOR) {
        bool t;
        if (sema_truth(s, a[0], at[0], &t) && !t)
            return sema_err(s, call, "device_assert fails at compile time%s%s", msg[0] ? ": " : "",
                            msg);
        return sv_none();
    }
    IrValue *c = sema_to_bool(s, a[0].v, at[0]);
    if (sv_has(a[2])) { /* masked-off lanes pass */
        IrValue *m = sema_to_bool(s, sema_arg_tensor(s, a[2], at[2], b, "the mask"), at[2]);
        if (!m || !sema_broadcast_pair(s, &c, &m, call))
            return bad();
        IrValue *nm = ir_unary(&s->b, IR_NOT, call, m, m->type);
        c = ir_binary(&s->b, IR_OR, call, c, nm, c->type);
    }
    IrOp *op = ir_build(&s->b, IR_ASSERT, call, &c, 1, NULL, 0);
    op->str = msg;
    op->str2 = s->src && s->src->name ? s->src->name : "<input>";
    op->ival = call.line;
    return sv_none();
}

static SVal b_barrier(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b), TK_UNUSED(a), TK_UNUSED(at);
    ir_build(&s->b, IR_BARRIER, call, NULL, 0, NULL, 0);
    return sv_none();
}

static SVal b_loop_only(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(a), TK_UNUSED(at);
    return sema_err(s, call, "%s() can only be the iterable of a for loop", b->name);
}

static const Builtin core[] = {
    {"program_id", "axis", b_grid, 0, false},
    {"num_programs", "axis", b_grid, 1, false},
    {"arange", "start,end", b_arange, 0, false},
    {"zeros", "shape,dtype=", b_full, 0, false},
    {"full", "shape,value,dtype", b_full, 1, false},
    {"zeros_like", "input,dtype=", b_full_like, 0, false},
    {"full_like", "input,fill_value,dtype=", b_full_like, 1, false},
    {"cast", "input,dtype,fp_downcast_rounding=,bitcast=", b_cast, 0, true},
    {"to_tensor", "x", b_to_tensor, 0, false},
    {"pointer_type", "element_ty", b_pointer_type, 0, false},
    {"exp", "x", b_math, MATH_EXP, true},
    {"exp2", "x", b_math, MATH_EXP2, true},
    {"log", "x", b_math, MATH_LOG, true},
    {"log2", "x", b_math, MATH_LOG2, true},
    {"sqrt", "x", b_math, MATH_SQRT, true},
    {"sqrt_rn", "x", b_math, MATH_SQRT_RN, true},
    {"rsqrt", "x", b_math, MATH_RSQRT, true},
    {"sin", "x", b_math, MATH_SIN, true},
    {"cos", "x", b_math, MATH_COS, true},
    {"floor", "x", b_math, MATH_FLOOR, true},
    {"ceil", "x", b_math, MATH_CEIL, true},
    {"erf", "x", b_math, MATH_ERF, true},
    {"abs", "x", b_abs, 0, true},
    {"sigmoid", "x", b_sigmoid, 0, true},
    {"softmax", "x,dim=,keep_dims=,ieee_rounding=", b_softmax, 0, true},
    {"maximum", "x,y,propagate_nan=", b_minmax, IR_MAX, false},
    {"minimum", "x,y,propagate_nan=", b_minmax, IR_MIN, false},
    {"clamp", "x,min,max,propagate_nan=", b_clamp, 0, false},
    {"where", "condition,x,y", b_where, 0, false},
    {"fma", "x,y,z", b_fma, 0, false},
    {"cdiv", "x,div", b_cdiv, 0, true},
    {"div_rn", "x,y", b_div, 1, false},
    {"fdiv", "x,y,ieee_rounding=", b_div, 0, false},
    {"umulhi", "x,y", b_umulhi, 0, false},
    {"multiple_of", "input,values", b_hint, HINT_MULTIPLE_OF, false},
    {"max_contiguous", "input,values", b_hint, HINT_MAX_CONTIGUOUS, false},
    {"max_constancy", "input,values", b_hint, HINT_MAX_CONSTANCY, false},
    {"assume", "cond", b_assume, 0, false},
    {"static_assert", "cond,msg=", b_static_assert, 0, false},
    {"static_print", "*values", b_static_print, 0, false},
    {"device_print", "prefix,*args,hex=", b_device_print, 0, false},
    {"device_assert", "cond,msg=,mask=", b_device_assert, 0, false},
    {"debug_barrier", "", b_barrier, 0, false},
    {"range", "*args,num_stages=,loop_unroll_factor=", b_loop_only, 0, false},
    {"static_range", "*args", b_loop_only, 0, false},
};

const BuiltinTable sema_tl_core = {core, TK_ARRAY_LEN(core)};
