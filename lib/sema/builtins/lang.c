/* sema/builtins/lang.c: the names of triton.language that are Python
 * classes rather than functions: tl.tuple (a tuple built from any
 * sequence), tl.condition (a `while` condition with loop options) and
 * tl.const (the annotation of read-only pointers), and constexpr helpers
 * of triton.language.core and .standard. Tuples are compile-time structures
 * in tk (SV_TUPLE), so these emit no IR. */
#include "sema/spec.h"

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

/* tl.tuple(args, type=None): Triton's tuple class takes any sequence;
 * `type` is the tuple type Triton's own code passes when it rebuilds one,
 * so only None is accepted here. */
static SVal b_tuple(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    TK_UNUSED(b), TK_UNUSED(call_at);
    if (sv_has(a[1]))
        return sema_err(s, at[1], "tl.tuple's type is for Triton's own code; leave it out, got %s",
                        sv_describe(s, a[1]));
    if (a[0].k != SV_VOID && a[0].k != SV_TUPLE)
        return sema_err(s, at[0], "tl.tuple needs a tuple or a list, got %s", sv_describe(s, a[0]));
    return a[0].k == SV_VOID ? sv_tuple(s, NULL, 0) : a[0];
}

/* while tl.condition(cond, disable_licm=False): the condition itself.
 * disable_licm asks Triton to keep loop-invariant code inside the loop,
 * a scheduling hint tk reads and ignores like tl.range's. */
static SVal b_condition(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    bool off;
    TK_UNUSED(b), TK_UNUSED(call_at);
    if (sv_has(a[1]) && !sema_truth(s, a[1], at[1], &off))
        return bad();
    if (a[0].k != SV_TENSOR && !sv_is_num(a[0]))
        return sema_err(s, at[0], "tl.condition needs a boolean condition, got %s",
                        sv_describe(s, a[0]));
    return a[0];
}

/* tl.const only annotates parameters (`x_ptr: tl.const`), which tk reads
 * and ignores; as a call it would build Triton's class, which kernels do
 * not do. */
static SVal b_const(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    TK_UNUSED(b), TK_UNUSED(a), TK_UNUSED(at);
    return sema_err(s, call_at,
                    "tl.const is a parameter annotation (`x_ptr: tl.const`), not a "
                    "function to call");
}

/* triton.language.standard's _log2 and _is_power_of_two, constexpr
 * helpers kernel libraries import by name (bitonic sorts and top-k):
 * floor(log2(n)), and whether n is a power of two. */
static SVal b_log2(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    TK_UNUSED(b), TK_UNUSED(call_at);
    int64_t n;
    if (!sema_const_int(s, a[0], at[0], "_log2's argument", &n))
        return bad();
    int r = 0;
    for (; n > 1; n >>= 1)
        r++;
    return sv_int(r);
}

static SVal b_is_pow2(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    TK_UNUSED(b), TK_UNUSED(call_at);
    int64_t n;
    if (!sema_const_int(s, a[0], at[0], "_is_power_of_two's argument", &n))
        return bad();
    return sv_bool(n != 0 && (n & (n - 1)) == 0);
}

/* triton.language.core.get_int_dtype(bitwidth, signed): the integer dtype
 * of that width (Triton's bitonic sort reinterprets keys through it). */
static SVal b_int_dtype(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    TK_UNUSED(b), TK_UNUSED(call_at);
    int64_t bits;
    bool sign;
    if (!sema_const_int(s, a[0], at[0], "get_int_dtype's bitwidth", &bits) ||
        !sema_truth(s, a[1], at[1], &sign))
        return bad();
    static const DType by_width[2][4] = {{DT_U8, DT_U16, DT_U32, DT_U64},
                                         {DT_I8, DT_I16, DT_I32, DT_I64}};
    if (bits == 1)
        return sv_dtype(type_scalar(DT_I1));
    for (int i = 0; i < 4; i++)
        if (bits == 8 << i)
            return sv_dtype(type_scalar(by_width[sign][i]));
    return sema_err(s, at[0], "get_int_dtype: unsupported bitwidth %lld", (long long)bits);
}

static const Builtin lang_items[] = {
    {"get_int_dtype", "bitwidth,signed", b_int_dtype, 0, false},
    {"_log2", "i", b_log2, 0, false},
    {"_is_power_of_two", "i", b_is_pow2, 0, false},
    {"tuple", "args=,type=", b_tuple, 0, false},
    {"condition", "arg,disable_licm=", b_condition, 0, false},
    {"const", "*args", b_const, 0, false},
};
const BuiltinTable sema_tl_lang = {lang_items, TK_ARRAY_LEN(lang_items)};
