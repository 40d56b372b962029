/* sema/builtins/asm.c: tl.inline_asm_elementwise and the grid dependency
 * controls of triton.language.extra.cuda (gdc_wait, gdc_launch_dependents).
 * Inline asm takes its arguments as Triton does: converted to tensors and
 * broadcast to one shape, dtypes unchanged; its results are that shape in
 * the dtypes asked for. The constraints are checked here against the values
 * (ir_asm_regs), so a mismatch is an error at the call, not in LLVM. */
#include <string.h>

#include "sema/spec.h"

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

static bool want_str(Sema *s, SVal v, Span at, const char *what)
{
    if (v.k == SV_STR)
        return true;
    if (v.k != SV_UNDEF)
        sema_err(s, at, "%s of tl.inline_asm_elementwise() must be a string, got %s", what,
                 sv_describe(s, v));
    return false;
}

/* The constraints without white space: Triton hands them to LLVM, which
 * skips it ("=r, l" is "=r,l"). */
static const char *no_spaces(Sema *s, const char *c)
{
    char *out = arena_alloc(s->a, strlen(c) + 1);
    if (!out)
        return c;
    size_t n = 0;
    for (; *c; c++)
        if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r')
            out[n++] = *c;
    out[n] = 0;
    return out;
}

/* The result dtypes: one dtype, or a tuple of them (several results). A
 * pointer dtype is one too, as in Triton: the asm sees its 64 bits (an "l"
 * register) and the result is that pointer, ready for tl.load. */
static int result_dtypes(Sema *s, SVal v, Span at, Type *out, bool *several)
{
    const SVal *items = &v;
    int n = 1;
    *several = v.k == SV_TUPLE;
    if (*several)
        items = v.items, n = v.n;
    if (n < 1 || n > IR_ASM_MAX_REGS) {
        sema_err(s, at, "dtype of tl.inline_asm_elementwise() must name 1 to %d dtypes, got %d",
                 IR_ASM_MAX_REGS, n);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (items[i].k != SV_DTYPE || items[i].ty.rank) {
            sema_err(s, at,
                     "dtype of tl.inline_asm_elementwise() must be a scalar or pointer dtype "
                     "or a tuple of them, got %s",
                     sv_describe(s, items[i]));
            return 0;
        }
        out[i] = items[i].ty;
    }
    return n;
}

/* The arguments as tensors broadcast to one shape (*rank, shape). */
static int asm_args(Sema *s, SVal v, Span at, IrValue **x, int *rank, int *shape)
{
    if (v.k != SV_TUPLE) {
        if (v.k != SV_UNDEF)
            sema_err(s, at, "args of tl.inline_asm_elementwise() must be a list of tensors, got %s",
                     sv_describe(s, v));
        return -1;
    }
    if (v.n > IR_ASM_MAX_REGS) {
        sema_err(s, at, "tl.inline_asm_elementwise() takes at most %d args, got %d",
                 IR_ASM_MAX_REGS, v.n);
        return -1;
    }
    Type shape_of = type_scalar(DT_I32);
    for (int i = 0; i < v.n; i++) {
        if (v.items[i].k != SV_TENSOR && !sv_is_num(v.items[i])) {
            sema_err(s, at,
                     "args[%d] of tl.inline_asm_elementwise() must be a tensor or a "
                     "number, got %s",
                     i, sv_describe(s, v.items[i]));
            return -1;
        }
        x[i] = sema_to_tensor(s, v.items[i], at);
        if (!x[i] || !sema_broadcast_shapes(s, shape_of, x[i]->type, rank, shape, at))
            return -1;
        shape_of = type_block(DT_I32, *rank, shape);
    }
    *rank = shape_of.rank;
    memcpy(shape, shape_of.shape, sizeof shape_of.shape);
    for (int i = 0; i < v.n; i++)
        if (!(x[i] = sema_broadcast(s, x[i], *rank, shape, at)))
            return -1;
    return v.n;
}

static SVal b_inline_asm(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b);
    Type dts[IR_ASM_MAX_REGS];
    IrValue *x[IR_ASM_MAX_REGS];
    int rank = 0, shape[TK_MAX_RANK] = {0};
    bool several, pure;
    int64_t pack;
    if (!want_str(s, a[0], at[0], "asm") || !want_str(s, a[1], at[1], "constraints"))
        return bad();
    int nargs = asm_args(s, a[2], at[2], x, &rank, shape);
    int nres = nargs < 0 ? 0 : result_dtypes(s, a[3], at[3], dts, &several);
    if (!nres || !sema_truth(s, a[4], at[4], &pure) ||
        !sema_const_int(s, a[5], at[5], "pack", &pack))
        return bad();
    if (pack < 1 || pack > 16 || (pack & (pack - 1)))
        return sema_err(s, at[5],
                        "pack of tl.inline_asm_elementwise() must be 1, 2, 4, 8 or "
                        "16, got %lld",
                        (long long)pack);
    Type rt[IR_ASM_MAX_REGS];
    for (int i = 0; i < nres; i++)
        rt[i] = type_with_shape(dts[i], rank, shape);
    IrOp *op = ir_build(&s->b, IR_INLINE_ASM, call, x, nargs, rt, nres);
    op->str = a[0].s, op->str2 = no_spaces(s, a[1].s), op->ival = pack;
    op->flags = pure ? IRF_PURE : 0;
    IrAsmRegs regs;
    char why[192];
    if (!ir_asm_regs(op, &regs, why, sizeof why))
        return sema_err(s, at[1], "tl.inline_asm_elementwise(): %s", why);
    if (!several)
        return sv_tensor(op->results[0]);
    SVal r[IR_ASM_MAX_REGS];
    for (int i = 0; i < nres; i++)
        r[i] = sv_tensor(op->results[i]);
    return sv_tuple(s, r, nres);
}

static SVal b_gdc(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(a), TK_UNUSED(at);
    IrOp *op = ir_build(&s->b, IR_GDC, call, NULL, 0, NULL, 0);
    op->sub = b->arg;
    return (SVal){.k = SV_NONE};
}

static const Builtin asm_items[] = {
    {"inline_asm_elementwise", "asm,constraints,args,dtype,is_pure,pack", b_inline_asm, 0, false},
};
const BuiltinTable sema_tl_asm = {asm_items, TK_ARRAY_LEN(asm_items)};

static const Builtin cuda_items[] = {
    {"gdc_wait", "", b_gdc, 0, false},
    {"gdc_launch_dependents", "", b_gdc, 1, false},
};
const BuiltinTable sema_tl_cuda = {cuda_items, TK_ARRAY_LEN(cuda_items)};
