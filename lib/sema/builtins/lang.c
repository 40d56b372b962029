/* sema/builtins/lang.c: the names of triton.language that are Python
 * classes rather than functions: tl.tuple (a tuple built from any
 * sequence), tl.condition (a `while` condition with loop options) and
 * tl.const (the annotation of read-only pointers), and tl.map_elementwise
 * (a scalar @jit function over blocks). Tuples are compile-time structures
 * in tk (SV_TUPLE), so the first three emit no IR. */
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

/* tl.map_elementwise(scalar_fn, *args, pack=1): the arguments broadcast
 * to one shape and the function's body run on the blocks, which gives
 * each element what a per-element call gives while the body is straight-
 * line code. A branch or loop on an element's value needs per-element
 * control flow, which tk does not have: the `if` is an error there (a
 * runtime condition on a block), naming the line. */
static SVal b_map_elementwise(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    TK_UNUSED(b);
    if (a[0].k != SV_FUNC)
        return sema_err(s, at[0], "tl.map_elementwise needs a @triton.jit function, got %s",
                        sv_describe(s, a[0]));
    int64_t pack = 1;
    if (sv_has(a[2]) && !sema_const_int(s, a[2], at[2], "tl.map_elementwise's pack", &pack))
        return bad();
    if (pack != 1)
        return sema_err(s, at[2],
                        "tl.map_elementwise with pack=%lld is not implemented (the "
                        "function would take %lld elements of each argument); use pack=1",
                        (long long)pack, (long long)pack);
    SVal t = a[1];
    if (t.n == 0)
        return sema_err(s, call_at, "tl.map_elementwise needs at least one block argument");
    IrValue **v = arena_alloc(s->a, sizeof(IrValue *) * (size_t)t.n);
    SVal *vals = arena_alloc(s->a, sizeof(SVal) * (size_t)t.n);
    if (!v || !vals)
        return bad();
    for (int i = 0; i < t.n; i++)
        if (!(v[i] = sema_to_tensor(s, t.items[i], at[1])))
            return bad();
    for (int i = 1; i < t.n; i++)
        if (!sema_broadcast_pair(s, &v[0], &v[i], at[1]))
            return bad();
    for (int i = 0; i < t.n; i++) {
        if (!sema_broadcast_pair(s, &v[i], &v[0], at[1]))
            return bad();
        vals[i] = sv_tensor(v[i]);
    }
    int errors = s->d->errors;
    SVal r = sema_inline_values(s, a[0].fn, vals, t.n, call_at);
    return s->d->errors > errors ? bad() : r;
}

static const Builtin lang_items[] = {
    {"tuple", "args=,type=", b_tuple, 0, false},
    {"condition", "arg,disable_licm=", b_condition, 0, false},
    {"const", "*args", b_const, 0, false},
    {"map_elementwise", "scalar_fn,*args,pack=", b_map_elementwise, 0, false},
};
const BuiltinTable sema_tl_lang = {lang_items, TK_ARRAY_LEN(lang_items)};
