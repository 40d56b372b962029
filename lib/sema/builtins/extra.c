/* sema/builtins/extra.c: the smaller tl builtins: the functional
 * arithmetic forms (tl.add/sub/mul), tl.reduce_or, tl.flip, tl.gather,
 * tl.histogram, the functional descriptor forms
 * (tl.load_tensor_descriptor/store_tensor_descriptor), the special
 * registers of triton.language.extra.cuda (smid, globaltimer: inline PTX
 * reads; num_threads, num_warps: the launch's constexprs) and its fp8e4b15
 * conversions (casts). tl.gather and tl.histogram build IR ops of their own
 * (codegen runs them through shared memory); the others expand into
 * reshapes, compares, selects, casts and reductions, so codegen and the
 * interpreter run them unchanged. */
#include <string.h>

#include "sema/spec.h"

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

static SVal call(Sema *s, const char *name, SVal *args, int n, Span at)
{
    Span sp[6] = {at, at, at, at, at, at};
    CallArgs ca = {.pos = args, .pos_at = sp, .npos = n, .at = at};
    return sema_call_builtin(s, "tl", name, (SVal){.k = SV_VOID}, &ca);
}

/* ---- tl.add / tl.sub / tl.mul ----------------------------------------------------- */

/* sanitize_overflow asks Triton to add overflow checks in debug builds;
 * tk has no debug-mode overflow checks, so it is read and ignored. */
static SVal b_arith(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    bool sanitize;
    if (sv_has(a[2]) && !sema_truth(s, a[2], at[2], &sanitize))
        return bad();
    TK_UNUSED(b);
    return sema_binary(s, b->arg, a[0], a[1], call_at);
}

/* ---- tl.reduce_or ----------------------------------------------------------------- */

static SVal b_reduce_or(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    bool kd = false;
    if (!x || (sv_has(a[2]) && !sema_truth(s, a[2], at[2], &kd)))
        return bad();
    if (!dtype_is_int(x->type.dt))
        return sema_err(s, at[0], "tl.reduce_or needs integers, got %s", sema_type_str(s, x->type));
    return sema_reduce_custom(s, sv_tensor(x), a[1], sv_int(OP_BITOR), kd, call_at);
}

/* ---- bits: values moved exactly through xor reductions ------------------------------ */

static DType int_of_bits(int bits)
{
    return bits <= 8 ? DT_I8 : bits == 16 ? DT_I16 : bits == 32 ? DT_I32 : DT_I64;
}

/* The value as an integer of its width (i1 widened to i8), so xor moves it
 * exactly, NaNs and signed zeros included. */
IrValue *sema_to_bits(Sema *s, IrValue *x, Span at)
{
    if (x->type.dt == DT_I1)
        return sema_cast(s, x, DT_I8, at);
    DType it = int_of_bits(dtype_bits(x->type.dt));
    return dtype_is_int(x->type.dt) ? x : sema_bitcast(s, x, it, at);
}

IrValue *sema_from_bits(Sema *s, IrValue *y, DType dt, Span at)
{
    if (dt == DT_I1)
        return sema_cast(s, y, DT_I1, at);
    return dtype_is_int(dt) ? y : sema_bitcast(s, y, dt, at);
}

static IrValue *xor_sum(Sema *s, IrValue *y, int axis, bool keep, Span at)
{
    SVal args[3] = {sv_tensor(y), sv_int(axis), sv_bool(keep)};
    SVal r = call(s, "xor_sum", args, 3, at);
    return r.k == SV_TENSOR ? r.v : NULL;
}

/* ---- tl.flip ------------------------------------------------------------------------ */

/* Flipping n = 2^k elements swaps the halves of every block of 2^(j+1)
 * for each j < k. Each level views the block as (before, 2, after), all
 * contiguous, and swaps the pair with y ^ xor_sum(y): linear work and
 * rank 3 whatever the input's rank. */
static SVal b_flip(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    if (!x)
        return bad();
    int rank = x->type.rank;
    if (rank == 0)
        return sema_err(s, at[0], "tl.flip needs a block, got %s", sema_type_str(s, x->type));
    int d = sv_has(a[1]) ? sema_norm_axis(s, a[1], rank, at[1]) : rank - 1;
    if (d < 0)
        return bad();
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < rank; i++)
        if (i < d)
            outer *= x->type.shape[i];
        else if (i > d)
            inner *= x->type.shape[i];
    int n = x->type.shape[d];
    IrValue *y = sema_to_bits(s, x, call_at);
    for (int half = 1; half < n && y; half *= 2) {
        int view[3] = {(int)(outer * (n / (2 * half))), 2, (int)(half * inner)};
        IrValue *v = sema_reshape(s, y, 3, view, call_at);
        IrValue *sum = v ? xor_sum(s, v, 1, true, call_at) : NULL;
        SVal sw = sum ? sema_binary(s, OP_BITXOR, sv_tensor(v), sv_tensor(sum), call_at) : bad();
        y = sw.k == SV_TENSOR ? sema_reshape(s, sw.v, rank, x->type.shape, call_at) : NULL;
    }
    return y ? sv_tensor(sema_from_bits(s, y, x->type.dt, call_at)) : bad();
}

/* ---- tl.gather ---------------------------------------------------------------------- */

/* out[.., i, ..] = src[.., index[.., i, ..], ..] along axis: one gather op,
 * which codegen runs through shared memory. An index outside the axis
 * gives 0 (Triton leaves it undefined). */
static SVal b_gather(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    IrValue *src = sema_arg_tensor(s, a[0], at[0], b, "src");
    IrValue *idx = src ? sema_arg_tensor(s, a[1], at[1], b, "index") : NULL;
    if (!idx)
        return bad();
    int rank = src->type.rank;
    if (rank == 0 || idx->type.rank != rank)
        return sema_err(s, call_at,
                        "tl.gather needs src and index blocks of one rank, got %s "
                        "and %s",
                        sema_type_str(s, src->type), sema_type_str(s, idx->type));
    if (!dtype_is_int(idx->type.dt) || idx->type.dt == DT_I1)
        return sema_err(s, at[1], "tl.gather's index must be integers, got %s",
                        sema_type_str(s, idx->type));
    int axis = sema_norm_axis(s, a[2], rank, at[2]);
    if (axis < 0)
        return bad();
    for (int i = 0; i < rank; i++)
        if (i != axis && idx->type.shape[i] != src->type.shape[i])
            return sema_err(s, call_at,
                            "tl.gather: index %s and src %s differ in dimension %d "
                            "(only the axis %d may differ)",
                            sema_type_str(s, idx->type), sema_type_str(s, src->type), i, axis);
    Type rt = type_with_shape(src->type, rank, idx->type.shape);
    IrOp *op = ir_build(&s->b, IR_GATHER, call_at, (IrValue *[]){src, idx}, 2, &rt, 1);
    op->axis = axis;
    return sv_tensor(op->results[0]);
}

/* ---- tl.histogram ------------------------------------------------------------------- */

/* Counts (i32) of the values 0 .. num_bins-1 among the input's elements
 * where mask holds; other values are not counted. One histogram op, with
 * the mask (a scalar or a block) broadcast to the input's shape. */
static SVal b_histogram(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    int64_t bins;
    if (!x || !sema_const_int(s, a[1], at[1], "num_bins", &bins))
        return bad();
    if (x->type.rank != 1 || !dtype_is_int(x->type.dt) || x->type.dt == DT_I1)
        return sema_err(s, at[0], "tl.histogram needs a 1-D block of integers, got %s",
                        sema_type_str(s, x->type));
    if (bins < 1 || !is_pow2(bins) || bins > SEMA_MAX_NUMEL)
        return sema_err(s, at[1], "num_bins must be a power of two, got %lld", (long long)bins);
    IrValue *ops[2] = {x, NULL};
    if (sv_has(a[2])) {
        IrValue *m = sema_arg_tensor(s, a[2], at[2], b, "mask");
        m = m ? sema_to_bool(s, m, at[2]) : NULL;
        ops[1] = m ? sema_broadcast(s, m, 1, x->type.shape, at[2]) : NULL;
        if (!ops[1])
            return bad();
    }
    int n = (int)bins;
    Type rt = type_block(DT_I32, 1, &n);
    IrOp *op = ir_build(&s->b, IR_HISTOGRAM, call_at, ops, ops[1] ? 2 : 1, &rt, 1);
    op->ival = bins;
    return sv_tensor(op->results[0]);
}

/* ---- functional descriptor forms ---------------------------------------------------- */

static SVal b_desc_fn(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    int n = b->arg ? 3 : 2;
    CallArgs ca = {.pos = a, .pos_at = at, .npos = n, .at = call_at};
    if (a[0].k != SV_DESC)
        return sema_err(s, at[0], "tl.%s needs a tensor descriptor, got %s", b->name,
                        sv_describe(s, a[0]));
    return sema_call_builtin(s, "desc", b->arg ? "store" : "load", (SVal){.k = SV_VOID}, &ca);
}

/* x.item(): a one-element block as a scalar, as Triton's unsplat. */
static SVal b_item(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the tensor");
    if (!x)
        return bad();
    if (type_numel(x->type) != 1)
        return sema_err(s, call, "x.item() needs a block of one element, got %s",
                        sema_type_str(s, x->type));
    int none[1] = {0};
    return sv_tensor(sema_reshape(s, x, 0, none, call));
}

/* x.logical_and(y), x.logical_or(y): Triton bitcasts both sides to int1,
 * so they take booleans (a Python bool included) and nothing wider. */
static SVal b_logical(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *v[2] = {sema_arg_tensor(s, a[0], at[0], b, "the tensor"), NULL};
    v[1] = v[0] ? sema_to_tensor(s, a[1], at[1]) : NULL;
    if (!v[1])
        return bad();
    for (int i = 0; i < 2; i++)
        if (v[i]->type.dt != DT_I1)
            return sema_err(s, at[i], "x.%s() takes booleans (int1), got %s", b->name,
                            sema_type_str(s, v[i]->type));
    return sema_binary(s, b->arg, sv_tensor(v[0]), sv_tensor(v[1]), call);
}

static const Builtin extra_items[] = {
    {"add", "x,y,sanitize_overflow=", b_arith, OP_ADD, false},
    {"sub", "x,y,sanitize_overflow=", b_arith, OP_SUB, false},
    {"mul", "x,y,sanitize_overflow=", b_arith, OP_MUL, false},
    {"reduce_or", "input,axis,keep_dims=", b_reduce_or, 0, true},
    {"flip", "x,dim=", b_flip, 0, true},
    {"gather", "src,index,axis", b_gather, 0, true},
    {"histogram", "input,num_bins,mask=", b_histogram, 0, true},
    {"item", "input", b_item, 0, true},
    {"logical_and", "input,other", b_logical, OP_BITAND, true},
    {"logical_or", "input,other", b_logical, OP_BITOR, true},
    {"load_tensor_descriptor", "desc,offsets", b_desc_fn, 0, false},
    {"store_tensor_descriptor", "desc,offsets,value", b_desc_fn, 1, false},
};
const BuiltinTable sema_tl_extra = {extra_items, TK_ARRAY_LEN(extra_items)};

/* ---- triton.language.extra.cuda special registers ----------------------------------- */

/* One PTX move from a special register into an i32 or i64 scalar; not
 * pure, so two reads stay two reads. The interpreter refuses inline PTX,
 * so smid and globaltimer are GPU only (it has no SMs and no GPU clock). */
static IrValue *sreg(Sema *s, const char *asm_text, DType dt, Span at)
{
    Type t = type_scalar(dt);
    IrOp *op = ir_build(&s->b, IR_INLINE_ASM, at, NULL, 0, &t, 1);
    op->str = asm_text;
    op->str2 = dt == DT_I64 ? "=l" : "=r";
    op->ival = 1;
    op->flags = 0;
    return op->results[0];
}

/* num_warps and num_threads are the launch's settings, constexprs as in
 * Triton, so they fold and the interpreter has them too. */
static SVal b_sreg(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    TK_UNUSED(a), TK_UNUSED(at);
    switch (b->arg) {
    case 0: return sv_tensor(sreg(s, "mov.u32 $0, %smid;", DT_I32, call_at));
    case 1: return sv_tensor(sreg(s, "mov.u64 $0, %globaltimer;", DT_I64, call_at));
    case 2: return sv_int((int64_t)s->f->num_warps * 32);
    default: return sv_int(s->f->num_warps);
    }
}

/* ---- triton.language.extra.cuda's fp8e4b15 conversions ------------------------------ */

/* convert_custom_float8_sm80/_sm70(arg, dst_ty, fp_downcast_rounding=None):
 * the conversions Triton's .to() calls for fp8e4b15, the two differing
 * only in the PTX Triton picks, so both are tk's cast. From fp8e4b15 the
 * result has the float dtype asked for (Triton gives fp16 for any but
 * fp32); to it, arg must be fp16 or fp32 and dst_ty fp8e4b15 (Triton
 * gives fp8e4b15 whatever dst_ty says). The rounding mode is checked and
 * ignored, as Triton ignores it. */
static SVal b_custom_fp8(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "arg");
    if (!x)
        return bad();
    if (a[1].k != SV_DTYPE || a[1].ty.dt == DT_PTR)
        return sema_err(s, at[1], "dst_ty of %s must be a dtype such as tl.float8e4b15, got %s",
                        b->name, sv_describe(s, a[1]));
    if (sv_has(a[2]) && (a[2].k != SV_STR || (strcmp(a[2].s, "rtne") && strcmp(a[2].s, "rtz"))))
        return sema_err(s, at[2], "fp_downcast_rounding must be 'rtne' or 'rtz'");
    DType from = x->type.dt, to = a[1].ty.dt;
    if (from == DT_F8E4B15 ? !dtype_is_float(to) : to != DT_F8E4B15)
        return sema_err(s, call,
                        "%s converts fp8e4b15 to a float dtype, or tl.float16 and tl.float32 "
                        "to fp8e4b15; not %s to %s",
                        b->name, dtype_name(from), dtype_name(to));
    return sv_tensor(sema_cast(s, x, to, call));
}

static const Builtin cuda_items[] = {
    {"smid", "", b_sreg, 0, false},
    {"globaltimer", "", b_sreg, 1, false},
    {"num_threads", "", b_sreg, 2, false},
    {"num_warps", "", b_sreg, 3, false},
    {"convert_custom_float8_sm80", "arg,dst_ty,fp_downcast_rounding=", b_custom_fp8, 0, false},
    {"convert_custom_float8_sm70", "arg,dst_ty,fp_downcast_rounding=", b_custom_fp8, 0, false},
};
const BuiltinTable sema_tl_cuda_extra = {cuda_items, TK_ARRAY_LEN(cuda_items)};
