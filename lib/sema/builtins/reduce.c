/* sema/builtins/reduce.c: reductions, scans and dot. Dtype rules follow Triton:
 * sum accumulates sub-32-bit integers in 32 bits, max/min compute
 * sub-32-bit values in fp32/i32 (with return_indices only bf16 in fp32),
 * argmax/argmin give i32; axis=None flattens first; custom combine
 * functions are inlined into the op's region. dot checks shapes (M, N,
 * K >= 16), dtypes, the accumulator and precision. */
#include <string.h>

#include "sema/spec.h"

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

int sema_norm_axis(Sema *s, SVal axis, int rank, Span at)
{
    int64_t ax;
    if (!sema_const_int(s, axis, at, "the axis", &ax))
        return -1;
    if (ax < -rank || ax >= rank) {
        sema_err(s, at, "axis %lld is out of range for a tensor of rank %d", (long long)ax, rank);
        return -1;
    }
    return (int)(ax < 0 ? ax + rank : ax);
}

static Type drop_axis(Type t, int axis)
{
    Type r = t;
    r.rank = 0;
    for (int i = 0; i < t.rank; i++)
        if (i != axis)
            r.shape[r.rank++] = t.shape[i];
    for (int i = r.rank; i < TK_MAX_RANK; i++)
        r.shape[i] = 0;
    return r;
}

static IrValue *flatten(Sema *s, IrValue *x, Span at)
{
    int n = (int)type_numel(x->type);
    return x->type.rank == 1 ? x : sema_reshape(s, x, 1, &n, at);
}

/* keep_dims after a reduction: put size-1 dims back where axes were. */
static IrValue *keep(Sema *s, IrValue *r, int rank, int axis, Span at)
{
    if (axis >= 0)
        return sema_expand_dims(s, r, axis, at);
    int ones[TK_MAX_RANK] = {1, 1, 1, 1};
    return sema_reshape(s, r, rank, ones, at);
}

static DType reduce_dtype(const char *name, DType dt)
{
    bool small = dtype_bits(dt) < 32;
    if (!strcmp(name, "sum") && dtype_is_int(dt) && small)
        return dtype_is_signed(dt) ? DT_I32 : DT_U32; /* i1 is unsigned in Triton */
    if ((!strcmp(name, "max") || !strcmp(name, "min")) && small)
        return dtype_is_float(dt) ? DT_F32 : DT_I32;
    return dt;
}

SVal sema_reduce(Sema *s, const char *name, IrValue *x, SVal axis, bool keep_dims, SVal dtype,
                 Span at)
{
    if (x->type.dt == DT_PTR)
        return sema_err(s, at, "tl.%s of pointers is not supported", name);
    if (x->type.rank == 0)
        return sema_err(s, at, "tl.%s needs a block, got the scalar %s", name,
                        sema_type_str(s, x->type));
    int rank = x->type.rank, ax = -1;
    if (sv_has(axis)) {
        if ((ax = sema_norm_axis(s, axis, rank, at)) < 0)
            return bad();
    }
    if (dtype.k == SV_DTYPE && dtype.ty.dt != DT_PTR)
        x = sema_cast(s, x, dtype.ty.dt, at);
    else
        x = sema_cast(s, x, reduce_dtype(name, x->type.dt), at);
    /* after the promotion: max/min of fp8 values compute in fp32 */
    if (!x || !sema_check_not_fp8(s, x->type.dt, at, arena_printf(s->a, "tl.%s", name)))
        return bad();
    IrValue *in = ax < 0 ? flatten(s, x, at) : x;
    int rax = ax < 0 ? 0 : ax;
    static const struct {
        const char *n;
        ReduceKind k;
    } kinds[] = {
        {"sum", RED_SUM},       {"max", RED_MAX}, {"min", RED_MIN}, {"argmax", RED_ARGMAX},
        {"argmin", RED_ARGMIN}, {"any", RED_ANY}}; /* tl.topk's runs, equal bit for bit (sort.c) */
    ReduceKind k = RED_SUM;
    for (int i = 0; i < TK_ARRAY_LEN(kinds); i++)
        if (!strcmp(kinds[i].n, name))
            k = kinds[i].k;
    Type rt = drop_axis(in->type, rax);
    if (k == RED_ARGMAX || k == RED_ARGMIN)
        rt.dt = DT_I32, rt.elem = DT_VOID;
    IrOp *op = ir_build(&s->b, IR_REDUCE, at, &in, 1, &rt, 1);
    op->axis = rax;
    op->sub = k;
    IrValue *r = op->results[0];
    return sv_tensor(keep_dims ? keep(s, r, rank, ax, at) : r);
}

static bool flag(Sema *s, SVal v, Span at, bool *out)
{
    *out = false;
    return !sv_has(v) || sema_truth(s, v, at, out);
}

static SVal b_sum(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    bool kd;
    if (!x || !flag(s, a[2], at[2], &kd))
        return bad();
    if (sv_has(a[3]) && a[3].k != SV_DTYPE)
        return sema_err(s, at[3], "dtype must be a dtype, got %s", sv_describe(s, a[3]));
    return sema_reduce(s, b->name, x, a[1], kd, a[3], sv_has(a[1]) ? at[1] : call);
}

/* Opens op's region 0 with 2n scalar args (the left operands, then the
 * right ones) and points the builder into it; combine_close restores it. */
static IrBlock *combine_open(Sema *s, IrOp *op, IrValue **xs, int n, SVal *args, IrBuilder *saved)
{
    IrBlock *blk = ir_op_add_region(s->f, op);
    *saved = s->b;
    s->b = (IrBuilder){.f = s->f, .blk = blk};
    for (int i = 0; i < 2 * n; i++)
        args[i] = sv_tensor(ir_block_add_arg(s->f, blk, type_elem(xs[i % n]->type), NULL));
    return blk;
}

/* Yields ys (the left operands where the combine failed) and leaves the region. */
static void combine_close(Sema *s, IrBlock *blk, IrValue **ys, int n, bool ok, IrBuilder saved,
                          Span at)
{
    ir_build(&s->b, IR_YIELD, at, ok ? ys : blk->args, n, NULL, 0);
    s->b = saved;
}

/* The combine of tl.max/tl.min with return_indices, Triton's: the left
 * (value, index) pair wins where its value is greater (less), or equal
 * with the lower index when ties break left. */
static bool arg_combine(Sema *s, const SVal *a, bool is_max, bool left, Span at, IrValue **ys)
{
    SVal win = sema_compare(s, is_max ? OP_GT : OP_LT, a[0], a[2], at);
    if (left && win.k != SV_UNDEF) {
        SVal tie = sema_binary(s, OP_BITAND, sema_compare(s, OP_EQ, a[0], a[2], at),
                               sema_compare(s, OP_LT, a[1], a[3], at), at);
        win = sema_binary(s, OP_BITOR, win, tie, at);
    }
    if (win.k != SV_TENSOR)
        return false;
    for (int i = 0; i < 2; i++) {
        IrValue *ops[3] = {win.v, a[i].v, a[i + 2].v};
        ys[i] = ir_build(&s->b, IR_SELECT, at, ops, 3, &a[i].v->type, 1)->results[0];
    }
    return true;
}

/* One reduction of (x, its index along axis ax) with arg_combine, as
 * Triton's _reduce_with_indices makes it: the values and their indices
 * found together, in one pass over the threads and warps. */
static SVal reduce_pair(Sema *s, IrValue *x, int ax, bool is_max, bool left, Span at)
{
    int n = x->type.shape[ax], rank = x->type.rank;
    Type it = type_block(DT_I32, 1, &n);
    IrOp *ar = ir_build(&s->b, IR_ARANGE, at, NULL, 0, &it, 1);
    ar->ival = 0, ar->ival2 = n;
    IrValue *idx = ar->results[0];
    for (int d = 0; d < rank && idx; d++)
        if (d != ax)
            idx = sema_expand_dims(s, idx, d, at);
    idx = idx ? sema_broadcast(s, idx, rank, x->type.shape, at) : NULL;
    if (!idx)
        return bad();
    IrValue *xs[2] = {x, idx};
    Type rts[2] = {drop_axis(x->type, ax), drop_axis(idx->type, ax)};
    IrOp *op = ir_build(&s->b, IR_REDUCE, at, xs, 2, rts, 2);
    op->axis = ax;
    op->sub = RED_CUSTOM;
    SVal args[4];
    IrBuilder saved;
    IrBlock *blk = combine_open(s, op, xs, 2, args, &saved);
    IrValue *ys[2];
    bool ok = arg_combine(s, args, is_max, left, at, ys);
    combine_close(s, blk, ys, 2, ok, saved, at);
    SVal pair[2] = {sv_tensor(op->results[0]), sv_tensor(op->results[1])};
    return ok ? sv_tuple(s, pair, 2) : bad();
}

/* tl.max / tl.min with return_indices: (values, int32 indices). */
static SVal max_with_indices(Sema *s, IrValue *x, SVal axis, bool is_max, bool left, bool kd,
                             Span at)
{
    if (x->type.dt == DT_PTR || x->type.rank == 0)
        return sema_err(s, at, "tl.%s with return_indices needs a block of numbers, got %s",
                        is_max ? "max" : "min", sema_type_str(s, x->type));
    int rank = x->type.rank, ax = -1;
    if (sv_has(axis) && (ax = sema_norm_axis(s, axis, rank, at)) < 0)
        return bad();
    /* Triton's combine compares the values in their own dtype, but bf16's
     * in fp32 (standard.py's _promote_bfloat16_to_float32) */
    x = sema_cast(s, x, x->type.dt == DT_BF16 ? DT_F32 : x->type.dt, at);
    if (!x || !sema_check_not_fp8(s, x->type.dt, at, "tl.max with return_indices"))
        return bad();
    SVal r = reduce_pair(s, ax < 0 ? flatten(s, x, at) : x, ax < 0 ? 0 : ax, is_max, left, at);
    if (r.k != SV_TUPLE || !kd)
        return r;
    SVal pair[2];
    for (int i = 0; i < 2; i++)
        pair[i] = sv_tensor(keep(s, r.items[i].v, rank, ax, at));
    return sv_tuple(s, pair, 2);
}

static SVal b_max(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    bool idx, kd;
    if (!x || !flag(s, a[2], at[2], &idx) || !flag(s, a[4], at[4], &kd))
        return bad();
    Span ax = sv_has(a[1]) ? at[1] : call;
    if (!idx)
        return sema_reduce(s, b->name, x, a[1], kd, (SVal){.k = SV_VOID}, ax);
    bool left = true; /* return_indices_tie_break_left defaults to True */
    if (sv_has(a[3]) && !flag(s, a[3], at[3], &left))
        return bad();
    return max_with_indices(s, x, a[1], b->arg, left, kd, ax);
}

static SVal b_argmax(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    bool kd;
    TK_UNUSED(call);
    if (!x || !flag(s, a[3], at[3], &kd))
        return bad();
    return sema_reduce(s, b->name, x, a[1], kd, (SVal){.k = SV_VOID}, at[1]);
}

/* ---- custom combines ---------------------------------------------------------------- */

/* Inputs of reduce/associative_scan: one tensor or a tuple of them, all of
 * one shape. */
static int combine_inputs(Sema *s, SVal input, Span at, IrValue **xs)
{
    int n = input.k == SV_TUPLE ? input.n : 1;
    if (n < 1 || n > 8) {
        sema_err(s, at, "a combine takes 1 to 8 inputs, got %d", n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        SVal v = input.k == SV_TUPLE ? input.items[i] : input;
        if (v.k != SV_TENSOR || v.v->type.rank == 0) {
            sema_err(s, at, "inputs of a combine must be blocks, got %s", sv_describe(s, v));
            return -1;
        }
        xs[i] = v.v;
        if (!type_same_shape(xs[i]->type, xs[0]->type)) {
            sema_err(s, at, "inputs of a combine must have one shape, got %s and %s",
                     sema_type_str(s, xs[0]->type), sema_type_str(s, xs[i]->type));
            return -1;
        }
    }
    return n;
}

/* Fills op's region 0: 2n scalar args, the combine inlined, n yields. fn is
 * a @jit function, or (internally) an SV_INT holding the OpKind to apply. */
static bool build_combine(Sema *s, IrOp *op, IrValue **xs, int n, SVal fn, Span at)
{
    SVal args[16];
    IrBuilder saved;
    IrBlock *blk = combine_open(s, op, xs, n, args, &saved);
    SVal r;
    if (fn.k == SV_FUNC) {
        r = sema_inline_values(s, fn.fn, args, 2 * n, at);
    } else {
        r = sema_binary(s, (int)fn.i, args[0], args[1], at);
    }
    IrValue *ys[8];
    bool ok = r.k != SV_UNDEF;
    int got = r.k == SV_TUPLE ? r.n : 1;
    if (ok && got != n) {
        sema_err(s, at, "the combine function returns %d value%s, expected %d", got,
                 got == 1 ? "" : "s", n);
        ok = false;
    }
    for (int i = 0; ok && i < n; i++) {
        SVal v = r.k == SV_TUPLE ? r.items[i] : r;
        Type want = type_elem(xs[i]->type);
        if (sv_is_num(v))
            v = sv_tensor(sema_const(s, want, v, at));
        if (v.k != SV_TENSOR || !type_eq(v.v->type, want)) {
            sema_err(s, at, "the combine function returns %s for input %d, expected %s",
                     sv_describe(s, v), i, sema_type_str(s, want));
            ok = false;
            break;
        }
        ys[i] = v.v;
    }
    combine_close(s, blk, ys, n, ok, saved, at);
    return ok;
}

/* Reductions and scans of fp8 values are errors, as their arithmetic is. */
static bool no_fp8_inputs(Sema *s, IrValue **xs, int n, Span at)
{
    for (int i = 0; i < n; i++)
        if (!sema_check_not_fp8(s, xs[i]->type.dt, at, "a reduction or scan"))
            return false;
    return true;
}

SVal sema_reduce_custom(Sema *s, SVal input, SVal axis, SVal fn, bool keep_dims, Span at)
{
    IrValue *xs[8];
    int n = combine_inputs(s, input, at, xs);
    if (n < 0 || !no_fp8_inputs(s, xs, n, at))
        return bad();
    if (fn.k != SV_FUNC && fn.k != SV_INT)
        return sema_err(s, at, "combine_fn must be a @jit function, got %s", sv_describe(s, fn));
    int rank = xs[0]->type.rank, ax = -1;
    if (sv_has(axis) && (ax = sema_norm_axis(s, axis, rank, at)) < 0)
        return bad();
    Type rts[8];
    for (int i = 0; i < n; i++) {
        if (ax < 0)
            xs[i] = flatten(s, xs[i], at);
        rts[i] = drop_axis(xs[i]->type, ax < 0 ? 0 : ax);
    }
    IrOp *op = ir_build(&s->b, IR_REDUCE, at, xs, n, rts, n);
    op->axis = ax < 0 ? 0 : ax;
    op->sub = RED_CUSTOM;
    if (!build_combine(s, op, xs, n, fn, at))
        return bad();
    SVal out[8];
    for (int i = 0; i < n; i++)
        out[i] = sv_tensor(keep_dims ? keep(s, op->results[i], rank, ax, at) : op->results[i]);
    /* a tuple in, a tuple out, even of one (Inductor unpacks `t, = ...`) */
    return n == 1 && input.k != SV_TUPLE ? out[0] : sv_tuple(s, out, n);
}

static SVal b_xor_sum(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    bool kd;
    if (!x || !flag(s, a[2], at[2], &kd))
        return bad();
    if (!dtype_is_int(x->type.dt))
        return sema_err(s, at[0], "tl.xor_sum needs integers, got %s", sema_type_str(s, x->type));
    return sema_reduce_custom(s, sv_tensor(x), a[1], sv_int(OP_BITXOR), kd, call);
}

static SVal b_reduce(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    bool kd;
    TK_UNUSED(b), TK_UNUSED(at);
    if (!flag(s, a[3], at[3], &kd))
        return bad();
    return sema_reduce_custom(s, a[0], a[1], a[2], kd, call);
}

SVal sema_scan(Sema *s, SVal input, SVal axis, SVal fn, bool reverse, int kind, DType dt, Span at)
{
    IrValue *xs[8];
    int n = combine_inputs(s, input, at, xs);
    if (n < 0 || !no_fp8_inputs(s, xs, n, at))
        return bad();
    int ax = sema_norm_axis(s, sv_has(axis) ? axis : sv_int(0), xs[0]->type.rank, at);
    if (ax < 0)
        return bad();
    Type rts[8];
    for (int i = 0; i < n; i++) {
        if (dt != DT_VOID)
            xs[i] = sema_cast(s, xs[i], dt, at);
        rts[i] = xs[i]->type;
    }
    IrOp *op = ir_build(&s->b, IR_SCAN, at, xs, n, rts, n);
    op->axis = ax;
    op->sub = kind;
    op->flags = reverse ? IRF_REVERSE : 0;
    if (kind == SCAN_CUSTOM && !build_combine(s, op, xs, n, fn, at))
        return bad();
    SVal out[8];
    for (int i = 0; i < n; i++)
        out[i] = sv_tensor(op->results[i]);
    return n == 1 && input.k != SV_TUPLE ? out[0] : sv_tuple(s, out, n);
}

static SVal b_cumsum(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    bool rev;
    if (!x || !flag(s, a[2], at[2], &rev))
        return bad();
    if (x->type.dt == DT_BF16) /* Triton scans bf16 in fp32 */
        x = sema_cast(s, x, DT_F32, at[0]);
    DType dt = reduce_dtype("sum", x->type.dt);
    if (a[3].k == SV_DTYPE)
        dt = a[3].ty.dt;
    if (b->arg) /* cumprod: a multiply combine */
        return sema_scan(s, sv_tensor(x), a[1], sv_int(OP_MUL), rev, SCAN_CUSTOM, DT_VOID, call);
    return sema_scan(s, sv_tensor(x), a[1], (SVal){.k = SV_VOID}, rev, SCAN_SUM, dt, call);
}

static SVal b_assoc_scan(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    bool rev;
    TK_UNUSED(b);
    if (!flag(s, a[3], at[3], &rev))
        return bad();
    if (a[2].k != SV_FUNC)
        return sema_err(s, at[2], "combine_fn must be a @jit function, got %s",
                        sv_describe(s, a[2]));
    return sema_scan(s, a[0], a[1], a[2], rev, SCAN_CUSTOM, DT_VOID, call);
}

/* ---- dot ------------------------------------------------------------------------------- */

SVal sema_dot(Sema *s, IrValue *a, IrValue *b, SVal acc, SVal prec, SVal allow_tf32, SVal out_dtype,
              Span at)
{
    Type ta = a->type, tb = b->type;
    if (ta.rank != tb.rank || (ta.rank != 2 && ta.rank != 3))
        return sema_err(s, at, "tl.dot needs two 2-D (or batched 3-D) blocks, got %s and %s",
                        sema_type_str(s, ta), sema_type_str(s, tb));
    int r = ta.rank;
    int m = ta.shape[r - 2], k = ta.shape[r - 1], k2 = tb.shape[r - 2], n = tb.shape[r - 1];
    if (k != k2)
        return sema_err(s, at, "tl.dot: inner dimensions differ: %s @ %s (K = %d vs %d)",
                        sema_type_str(s, ta), sema_type_str(s, tb), k, k2);
    if (r == 3 && ta.shape[0] != tb.shape[0])
        return sema_err(s, at, "tl.dot: batch dimensions differ: %s @ %s", sema_type_str(s, ta),
                        sema_type_str(s, tb));
    if (k < 16)
        return sema_err(s, at, "tl.dot needs K >= 16, got M=%d, N=%d, K=%d", m, n, k);
    DType da = ta.dt, db = tb.dt;
    bool fp8 = dtype_is_fp8(da) && dtype_is_fp8(db); /* any two fp8 formats, as in Triton */
    const char *upcast = ""; /* why the operands' dtype is not the one named */
    if (fp8 && (da == DT_F8E4B15 || db == DT_F8E4B15)) {
        /* no MMA takes fp8e4b15: Triton computes the dot in fp16 */
        upcast = " (Triton computes them in fp16)";
        a = sema_cast(s, a, DT_F16, at);
        b = sema_cast(s, b, DT_F16, at);
        da = db = DT_F16;
        fp8 = false;
    }
    if (da != db && !fp8)
        return sema_err(s, at, "tl.dot operands must have one dtype, got %s and %s", dtype_name(da),
                        dtype_name(db));
    if (da != DT_F16 && da != DT_BF16 && da != DT_F32 && da != DT_F64 && da != DT_I8 && !fp8)
        return sema_err(s, at,
                        "tl.dot does not support %s operands (fp16, bf16, fp32, fp64, "
                        "i8, fp8e4nv or fp8e5)",
                        dtype_name(da));
    if ((da == DT_I8 || fp8) && k < 32) /* the 8-bit MMA's K */
        return sema_err(s, at, "tl.dot with %s operands needs K >= 32, got K=%d", dtype_name(da),
                        k);
    DType out = da == DT_I8 ? DT_I32 : da == DT_F64 ? DT_F64 : DT_F32;
    /* as Triton's: int8 operands give int32 and fp32 or bf16 ones fp32
     * whatever out_dtype says (but bf16, refused) */
    bool ignored = out_dtype.k == SV_DTYPE &&
        (da == DT_I8 || ((da == DT_F32 || da == DT_BF16) && out_dtype.ty.dt != DT_BF16));
    if (out_dtype.k == SV_DTYPE && !ignored) {
        DType o = out_dtype.ty.dt;
        bool ok = da == DT_I8 ? o == DT_I32
            : fp8             ? o == DT_F32 || o == DT_F16
                  : o == DT_F32 || (o == da && da == DT_F16) || (da == DT_F64 && o == DT_F64);
        if (!ok)
            return sema_err(s, at, "tl.dot: out_dtype %s is not allowed for %s operands%s",
                            dtype_name(o), dtype_name(*upcast ? ta.dt : da), upcast);
        out = o;
    } else if (sv_has(out_dtype) && !ignored) {
        return sema_err(s, at, "tl.dot: out_dtype must be a dtype, got %s",
                        sv_describe(s, out_dtype));
    }
    int shape[3] = {ta.shape[0], 0, 0};
    shape[r - 2] = m;
    shape[r - 1] = n;
    if (!sema_check_numel(s, r, shape, at))
        return bad();
    Type rt = type_block(out, r, shape);
    IrValue *c;
    if (sv_has(acc)) {
        if (acc.k != SV_TENSOR || !type_eq(acc.v->type, rt))
            return sema_err(s, at, "tl.dot: acc must be %s (M x N of the output dtype), got %s",
                            sema_type_str(s, rt), sv_describe(s, acc));
        c = acc.v;
    } else {
        c = sema_const(s, rt, sv_int(0), at);
    }
    int p = da == DT_F32 ? DOT_TF32 : DOT_IEEE;
    if (sv_has(prec) && sv_has(allow_tf32))
        return sema_err(s, at, "tl.dot: give only one of input_precision and allow_tf32");
    if (sv_has(prec)) {
        if (prec.k != SV_STR)
            return sema_err(s, at, "input_precision must be a string");
        if (!strcmp(prec.s, "tf32"))
            p = DOT_TF32;
        else if (!strcmp(prec.s, "tf32x3"))
            p = DOT_TF32X3;
        else if (!strcmp(prec.s, "ieee"))
            p = DOT_IEEE;
        else
            return sema_err(s, at,
                            "unknown input_precision '%s' (expected 'tf32', 'tf32x3' or "
                            "'ieee')",
                            prec.s);
    } else if (sv_has(allow_tf32)) {
        bool t;
        if (!sema_truth(s, allow_tf32, at, &t))
            return bad();
        p = t ? DOT_TF32 : DOT_IEEE;
    }
    if (da != DT_F32)
        p = DOT_IEEE;
    /* fp8 operands into fp16: accumulated in fp32 and rounded to fp16 once
     * a dot, where Triton's MMA adds in fp16 (mma.sync's form of that
     * needs PTX ISA 8.7, past what LLVM 19 writes; one rule for both MMAs) */
    bool half = fp8 && out == DT_F16;
    if (half)
        c = sema_cast(s, c, DT_F32, at);
    IrOp *op = ir_build(&s->b, IR_DOT, at, (IrValue *[]){a, b, c}, 3, &c->type, 1);
    op->sub = p;
    IrValue *d = op->results[0];
    return sv_tensor(half ? sema_cast(s, d, DT_F16, at) : d);
}

static SVal b_dot(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the first operand");
    IrValue *y = sema_arg_tensor(s, a[1], at[1], b, "the second operand");
    if (!x || !y)
        return bad();
    return sema_dot(s, x, y, a[2], a[3], a[4], a[6], call);
}

static const Builtin reduce[] = {
    {"sum", "input,axis=,keep_dims=,dtype=", b_sum, 0, true},
    {"max", "input,axis=,return_indices=,return_indices_tie_break_left=,keep_dims=", b_max, 1,
     true},
    {"min", "input,axis=,return_indices=,return_indices_tie_break_left=,keep_dims=", b_max, 0,
     true},
    {"argmax", "input,axis,tie_break_left=,keep_dims=", b_argmax, 0, true},
    {"argmin", "input,axis,tie_break_left=,keep_dims=", b_argmax, 0, true},
    {"reduce", "input,axis,combine_fn,keep_dims=", b_reduce, 0, true},
    {"xor_sum", "input,axis=,keep_dims=", b_xor_sum, 0, true},
    {"cumsum", "input,axis=,reverse=,dtype=", b_cumsum, 0, true},
    {"cumprod", "input,axis=,reverse=", b_cumsum, 1, true},
    {"associative_scan", "input,axis,combine_fn,reverse=", b_assoc_scan, 0, true},
    {"dot", "input,other,acc=,input_precision=,allow_tf32=,max_num_imprecise_acc=,out_dtype=",
     b_dot, 0, false},
};

const BuiltinTable sema_tl_reduce = {reduce, TK_ARRAY_LEN(reduce)};
