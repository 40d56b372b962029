/* sema/builtins/sort.c: tl.sort, tl.topk and tl.bitonic_merge, the
 * bitonic network of Triton's standard library over the last dimension.
 *
 * Triton views the block as a hypercube of 2s and compares along one of
 * its dims at a time. Here each compare-and-swap step pairs the elements
 * whose index along the last dim differs in one bit: the partner op
 * (IR_PARTNER) gives every element its pair's value without reshaping
 * the block, so the step stays in the block's own layout (a register or
 * a lane across a butterfly shuffle in code generation), and a select
 * keeps the smaller or the larger. Results match Triton's element for
 * element, NaNs and ties included, since the compares are the same. */
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

/* Bit `bit` of the index along the last dim of an n-wide block of `rank`
 * dims: a (1, ..., 1, n) block of 0/1 that broadcasts against it. */
static IrValue *bit_of_index(Sema *s, int rank, int n, int bit, Span at)
{
    SVal args[2] = {sv_int(0), sv_int(n)};
    IrValue *ar = call_tl(s, "arange", args, 2, at);
    IrValue *b = binary(s, OP_RSHIFT, ar, sv_int(bit), at);
    b = binary(s, OP_BITAND, b, sv_int(1), at);
    int shape[TK_MAX_RANK];
    for (int d = 0; d < rank; d++)
        shape[d] = d == rank - 1 ? n : 1;
    return b ? sema_reshape(s, b, rank, shape, at) : NULL;
}

/* Each element of x gets the one whose last-dim index differs in bit `bit`. */
static IrValue *partner(Sema *s, IrValue *x, int bit, Span at)
{
    if (!x)
        return NULL;
    IrOp *op = ir_build(&s->b, IR_PARTNER, at, &x, 1, &x->type, 1);
    if (!op)
        return NULL;
    op->ival = (int64_t)1 << bit;
    return op->results[0];
}

/* One compare-and-swap between the elements whose last-dim indices
 * differ in bit `bit`: the left one of a pair keeps the smaller value when
 * its order is ascending, the right one the larger (Triton's rule: swap
 * when (x > partner) differs from (descending xor is_right)). `order` is 0
 * (every pair ascending), 1 (descending) or 2 (alternating with bit
 * `stage` of the index). */
static IrValue *compare_swap(Sema *s, IrValue *x, int bit, int stage, int order, Span at)
{
    IrValue *p = partner(s, x, bit, at);
    if (!p)
        return NULL;
    int rank = x->type.rank, n = x->type.shape[rank - 1];
    IrValue *flip = bit_of_index(s, rank, n, bit, at); /* is_right */
    if (order == 2)
        flip = binary(s, OP_BITXOR, flip, sv_tensor(bit_of_index(s, rank, n, stage, at)), at);
    else
        flip = binary(s, OP_BITXOR, flip, sv_int(order), at);
    SVal gt = sema_compare(s, OP_GT, sv_tensor(x), sv_tensor(p), at);
    SVal swap = flip && gt.k == SV_TENSOR ? sema_compare(s, OP_NE, gt, sv_tensor(flip), at) : bad();
    if (swap.k != SV_TENSOR)
        return NULL;
    SVal ws[3] = {swap, sv_tensor(p), sv_tensor(x)};
    return call_tl(s, "where", ws, 3, at);
}

/* `stage` rounds of compare-and-swap, from bit stage-1 down to bit 0;
 * order 2 alternates with bit `flip_bit` of the index. */
static IrValue *merge(Sema *s, IrValue *x, int stage, int flip_bit, int order, Span at)
{
    for (int r = stage - 1; r >= 0 && x; r--)
        x = compare_swap(s, x, r, flip_bit, order, at);
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

/* The first run of 2^log_k of every run of 2^log_n along the last dim, as
 * a block with the last dim 2^log_k. sort_impl leaves every run of a row
 * equal, bit for bit, so any run is the first: a reduction that takes any
 * element (RED_ANY), which each thread gives from its own registers with
 * no shuffle (a max over the runs took 4 levels of them for 16 runs). */
static IrValue *first_runs(Sema *s, IrValue *h, int log_n, int log_k, Span at)
{
    Type t = h->type;
    int n = 1 << log_n, k = 1 << log_k, view[3] = {(int)(numel_of(t) / n), n / k, k};
    IrValue *v = sema_reshape(s, h, 3, view, at);
    IrValue *bits = v ? sema_to_bits(s, v, at) : NULL;
    SVal m = bits ? sema_reduce(s, "any", bits, sv_int(1), false, (SVal){.k = SV_VOID}, at) : bad();
    IrValue *r = m.k == SV_TENSOR ? m.v : NULL;
    if (r && r->type.dt != bits->type.dt) /* small ints widen to i32: the same values */
        r = sema_cast(s, r, bits->type.dt, at);
    r = r ? sema_from_bits(s, r, t.dt, at) : NULL;
    t.shape[t.rank - 1] = k;
    return r ? sema_reshape(s, r, t.rank, t.shape, at) : NULL;
}

/* Sorts runs of 2^log_k, then for each bit of the index from log_k up
 * keeps the larger (descending) or smaller of each two neighbouring runs
 * and merges it. The block keeps its shape throughout: the kept run is
 * written to both places (the pair's lower one is the run Triton keeps;
 * its copies never feed it), so no step moves the block to another
 * layout, and the first run of each row is the result. k = n is a sort,
 * k < n a top-k. */
static SVal sort_impl(Sema *s, IrValue *x, int log_n, int log_k, int desc, Span at)
{
    IrValue *h = x;
    for (int i = 1; i <= log_k && h; i++)
        h = merge(s, h, i, i, i < log_n ? 2 : desc, at);
    for (int i = log_k + 1; i <= log_n && h; i++) {
        SVal ps[2] = {sv_tensor(h), sv_tensor(partner(s, h, i - 1, at))};
        h = ps[1].v ? call_tl(s, desc ? "maximum" : "minimum", ps, 2, at) : NULL;
        /* the kept runs' index bits log_k..i-1 are spent: the next merge
         * alternates with bit i, which stands where Triton's reshape puts
         * bit log_k */
        h = merge(s, h, log_k, i, i < log_n ? 2 : desc, at);
    }
    if (!h)
        return bad();
    if (log_k == log_n)
        return sv_tensor(h);
    IrValue *r = first_runs(s, h, log_n, log_k, at);
    return r ? sv_tensor(r) : bad();
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
    /* Triton selects the top k with tl.max (tl.min), which widens what is
     * narrower than 32 bits: its result is int32 or fp32 then */
    DType dt = x->type.dt;
    if (log_k < log_n && dtype_bits(dt) < 32)
        x = sema_cast(s, x, dtype_is_float(dt) ? DT_F32 : DT_I32, call_at);
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
    IrValue *h = merge(s, x, log_n, log_n, desc, call_at);
    return h ? sv_tensor(h) : bad();
}

static const Builtin sort_items[] = {
    {"sort", "x,dim=,descending=", b_sort, 0, true},
    {"topk", "x,k,dim=,descending=", b_topk, 0, true},
    {"bitonic_merge", "x,dim=,descending=", b_bitonic_merge, 0, false},
};
const BuiltinTable sema_tl_sort = {sort_items, TK_ARRAY_LEN(sort_items)};
