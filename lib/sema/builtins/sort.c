/* sema/builtins/sort.c: tl.sort, tl.topk and tl.bitonic_merge, the
 * bitonic network of Triton's standard library over the last dimension.
 *
 * Triton views the block as a hypercube of 2s and compares along one of
 * its dims at a time. tk's blocks have at most TK_MAX_RANK dims, so each
 * compare-and-swap step views the block instead as (outer, 2, inner)
 * with inner = 2^bit: axis 1 is the bit of the flat index being compared.
 * The partner of every element comes from an xor reduction over that
 * axis (exact for any dtype, through its bits), and a select keeps the
 * smaller or the larger. Results match Triton's element for element,
 * NaNs and ties included, since the compares are the same. Nothing here
 * needs an IR op of its own, so codegen and the interpreter run it. */
#include "sema/spec.h"

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

static IrValue *call_tl(Sema *s, const char *name, SVal *args, int n, Span at)
{
    Span sp[4] = {at, at, at, at};
    CallArgs ca = {.pos = args, .pos_at = sp, .npos = n, .at = at};
    SVal r = sema_call_builtin(s, "tl", name, (SVal){.k = SV_VOID}, &ca);
    return r.k == SV_TENSOR ? r.v : NULL;
}

static IrValue *binary(Sema *s, int op, IrValue *a, SVal b, Span at)
{
    if (!a)
        return NULL;
    SVal r = sema_binary(s, op, sv_tensor(a), b, at);
    return r.k == SV_TENSOR ? r.v : NULL;
}

static IrValue *view3(Sema *s, IrValue *x, int64_t outer, int64_t inner, Span at)
{
    int shape[3] = {(int)outer, 2, (int)inner};
    return x ? sema_reshape(s, x, 3, shape, at) : NULL;
}

/* A (n0, n1, n2) block of 0/1: bit `bit` of arange(0, n) laid along `axis`. */
static IrValue *bit_of_index(Sema *s, int n, int bit, int axis, Span at)
{
    SVal args[2] = {sv_int(0), sv_int(n)};
    IrValue *ar = call_tl(s, "arange", args, 2, at);
    IrValue *b = binary(s, OP_RSHIFT, ar, sv_int(bit), at);
    b = binary(s, OP_BITAND, b, sv_int(1), at);
    int shape[3] = {1, 1, 1};
    shape[axis] = n;
    return b ? sema_reshape(s, b, 3, shape, at) : NULL;
}

/* One compare-and-swap between the elements whose flat indices differ in
 * bit `bit`: the left one of a pair keeps the smaller value when its
 * order is ascending, the right one the larger (Triton's rule: swap when
 * (x > partner) differs from (descending xor is_right)). `order` is 0
 * (every pair ascending), 1 (descending) or 2 (alternating with bit
 * `stage` of the flat index). */
static IrValue *compare_swap(Sema *s, IrValue *x, int64_t numel, int bit, int stage, int order,
                             Span at)
{
    int64_t inner = (int64_t)1 << bit, outer = numel / (2 * inner);
    IrValue *v = view3(s, x, outer, inner, at);
    IrValue *bits = v ? sema_to_bits(s, v, at) : NULL;
    SVal xs[3] = {sv_tensor(bits), sv_int(1), sv_bool(true)};
    IrValue *sum = bits ? call_tl(s, "xor_sum", xs, 3, at) : NULL;
    IrValue *pb = sum ? binary(s, OP_BITXOR, bits, sv_tensor(sum), at) : NULL;
    IrValue *partner = pb ? sema_from_bits(s, pb, v->type.dt, at) : NULL;
    if (!partner)
        return NULL;
    IrValue *flip = bit_of_index(s, 2, 0, 1, at); /* is_right */
    if (order == 2)
        flip = binary(s, OP_BITXOR, flip,
                      sv_tensor(bit_of_index(s, (int)outer, stage - bit - 1, 0, at)), at);
    else
        flip = binary(s, OP_BITXOR, flip, sv_int(order), at);
    SVal gt = sema_compare(s, OP_GT, sv_tensor(v), sv_tensor(partner), at);
    SVal swap = flip && gt.k == SV_TENSOR ? sema_compare(s, OP_NE, gt, sv_tensor(flip), at) : bad();
    if (swap.k != SV_TENSOR)
        return NULL;
    SVal ws[3] = {swap, sv_tensor(partner), sv_tensor(v)};
    return call_tl(s, "where", ws, 3, at);
}

/* `stage` rounds of compare-and-swap, from bit stage-1 down to bit 0. */
static IrValue *merge(Sema *s, IrValue *x, int64_t numel, int stage, int order, Span at)
{
    for (int r = stage - 1; r >= 0 && x; r--)
        x = compare_swap(s, x, numel, r, stage, order, at);
    return x;
}

/* ---- argument checks ---------------------------------------------------------------- */

static int log2_exact(int64_t n)
{
    int l = 0;
    while (((int64_t)1 << l) < n)
        l++;
    return ((int64_t)1 << l) == n ? l : -1;
}

/* The input block, its last dim's log2 in *log_n, the dim checked to be
 * the last one (the only one Triton sorts along); a[dim] is the dim. */
static IrValue *sort_input(Sema *s, const Builtin *b, SVal *a, Span *at, int dim, int *log_n)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    if (!x)
        return NULL;
    int rank = x->type.rank;
    if (rank == 0) {
        sema_err(s, at[0], "tl.%s needs a block, got %s", b->name, sema_type_str(s, x->type));
        return NULL;
    }
    if (!sema_check_not_fp8(s, x->type.dt, at[0], b->name))
        return NULL;
    int d = sv_has(a[dim]) ? sema_norm_axis(s, a[dim], rank, at[dim]) : rank - 1;
    if (d < 0)
        return NULL;
    if (d != rank - 1) {
        sema_err(s, at[dim], "tl.%s works along the last dimension only (%d), got dim %d", b->name,
                 rank - 1, d);
        return NULL;
    }
    *log_n = log2_exact(x->type.shape[rank - 1]);
    if (*log_n < 0) {
        sema_err(s, at[0], "tl.%s needs the last dimension a power of two, got %s", b->name,
                 sema_type_str(s, x->type));
        return NULL;
    }
    return x;
}

static bool descending_arg(Sema *s, SVal v, Span at, bool dflt, int *out)
{
    bool d = dflt;
    if (sv_has(v) && !sema_truth(s, v, at, &d))
        return false;
    *out = d;
    return true;
}

static int64_t numel_of(Type t)
{
    int64_t n = 1;
    for (int i = 0; i < t.rank; i++)
        n *= t.shape[i];
    return n;
}

/* Sorts runs of 2^log_k and then, while runs remain that are not the
 * last dim's, keeps the larger (descending) or smaller half of each two
 * neighbouring runs and merges it: k = n is a sort, k < n a top-k. */
static SVal sort_impl(Sema *s, IrValue *x, int log_n, int log_k, int desc, Span at)
{
    Type t = x->type;
    int64_t numel = numel_of(t);
    IrValue *h = x;
    for (int i = 1; i <= log_k && h; i++)
        h = merge(s, h, numel, i, i < log_n ? 2 : desc, at);
    for (int i = log_k + 1; i <= log_n && h; i++) {
        int64_t k = (int64_t)1 << log_k;
        SVal rs[2] = {sv_tensor(view3(s, h, numel / (2 * k), k, at)), sv_int(1)};
        h = rs[0].v ? call_tl(s, desc ? "max" : "min", rs, 2, at) : NULL;
        numel /= 2;
        h = merge(s, h, numel, log_k, i < log_n ? 2 : desc, at);
    }
    if (!h)
        return bad();
    t.shape[t.rank - 1] = 1 << log_k;
    return sv_tensor(sema_reshape(s, h, t.rank, t.shape, at));
}

/* ---- the builtins ------------------------------------------------------------------- */

static SVal b_sort(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    int log_n, desc;
    IrValue *x = sort_input(s, b, a, at, 1, &log_n);
    if (!x || !descending_arg(s, a[2], at[2], false, &desc))
        return bad();
    return sort_impl(s, x, log_n, log_n, desc, call_at);
}

/* topk(x, k, dim=None, descending=True): Triton 3.6 always takes the
 * largest; `descending=False` (the smallest k) is accepted as later
 * Triton versions do. */
static SVal b_topk(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    int log_n, desc;
    int64_t k;
    IrValue *x = sort_input(s, b, a, at, 2, &log_n);
    if (!x || !sema_const_int(s, a[1], at[1], "tl.topk's k", &k) ||
        !descending_arg(s, a[3], at[3], true, &desc))
        return bad();
    int log_k = log2_exact(k);
    if (log_k < 0 || log_k > log_n)
        return sema_err(s, at[1],
                        "tl.topk needs k a power of two no larger than the last "
                        "dimension (%d), got %lld",
                        1 << log_n, (long long)k);
    return sort_impl(s, x, log_n, log_k, desc, call_at);
}

/* bitonic_merge sorts a last dim that is already bitonic (rising then
 * falling, or the reverse): the last merge of a sort alone. */
static SVal b_bitonic_merge(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    int log_n, desc;
    IrValue *x = sort_input(s, b, a, at, 1, &log_n);
    if (!x || !descending_arg(s, a[2], at[2], false, &desc))
        return bad();
    IrValue *h = merge(s, x, numel_of(x->type), log_n, desc, call_at);
    return h ? sv_tensor(sema_reshape(s, h, x->type.rank, x->type.shape, call_at)) : bad();
}

static const Builtin sort_items[] = {
    {"sort", "x,dim=,descending=", b_sort, 0, true},
    {"topk", "x,k,dim=,descending=", b_topk, 0, true},
    {"bitonic_merge", "x,dim=,descending=", b_bitonic_merge, 0, false},
};
const BuiltinTable sema_tl_sort = {sort_items, TK_ARRAY_LEN(sort_items)};
