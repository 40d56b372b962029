/* sema/builtins/blockptr.c: block pointers (tl.make_block_ptr, tl.advance)
 * and tensor descriptors (tl.make_tensor_descriptor, desc.load/store/atomic_*).
 * Both are compile-time structures, like tuples: a base pointer, the
 * tensor's shape and strides (numbers or runtime scalars), for a block
 * pointer its offsets, and a block shape fixed at compile time (kept in
 * SVal.ty). An access desugars into an ordinary block of pointers
 *   base + sum_d (offset_d + arange(0, block_d)) * stride_d
 * and a mask 0 <= offset_d + i < shape_d over the checked dims, so layouts,
 * pipelining and TMA treat it like any other load. Guarantees: offsets are
 * i32 (as Triton casts them), so a block pointer carried through a loop
 * keeps its types; index arithmetic is in the strides' dtype. */
#include <math.h>
#include <string.h>

#include "sema/spec.h"

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

/* The parts of one access: where the block starts and how it is laid out. */
typedef struct View {
    int rank;
    int block[TK_MAX_RANK];
    SVal base;
    const SVal *shape, *strides;
    SVal offs[TK_MAX_RANK];
} View;

/* ---- checking the arguments --------------------------------------------------------- */

static int items_of(SVal v, const SVal **items)
{
    if (v.k == SV_TUPLE) {
        *items = v.items;
        return v.n;
    }
    *items = NULL;
    return -1;
}

/* A list of `rank` integers (constexpr or runtime scalars) named `what`. */
static bool int_list(Sema *s, SVal v, Span at, int rank, const char *fn, const char *what,
                     const SVal **out)
{
    int n = items_of(v, out);
    if (n < 0)
        return sema_err(s, at, "%s: %s must be a tuple of %d integer%s, got %s", fn, what, rank,
                        rank == 1 ? "" : "s", sv_describe(s, v)),
               false;
    if (n != rank)
        return sema_err(s, at, "%s: %s has %d item%s but the block has rank %d", fn, what, n,
                        n == 1 ? "" : "s", rank),
               false;
    for (int i = 0; i < n; i++) {
        SVal x = (*out)[i];
        if (x.k == SV_UNDEF)
            return false;
        bool ok = x.k == SV_INT || x.k == SV_BOOL ||
            (x.k == SV_TENSOR && x.v->type.rank == 0 && dtype_is_int(x.v->type.dt));
        if (!ok)
            return sema_err(s, at, "%s: item %d of %s must be an integer scalar, got %s", fn, i,
                            what, sv_describe(s, x)),
                   false;
    }
    return true;
}

/* Offsets are i32, as Triton makes them: a runtime offset of another
 * integer type is converted, a number stays a number. */
static SVal offset_i32(Sema *s, SVal v, Span at)
{
    if (v.k != SV_TENSOR || v.v->type.dt == DT_I32)
        return v;
    return sv_tensor(sema_cast(s, v.v, DT_I32, at));
}

static bool block_dims(Sema *s, SVal v, Span at, const char *fn, int *rank, int *dims)
{
    const SVal *items;
    int n = items_of(v, &items);
    if (n < 1 || n > TK_MAX_RANK)
        return sema_err(s, at, "%s: block_shape must be a tuple of 1 to %d constexpr ints, got %s",
                        fn, TK_MAX_RANK, sv_describe(s, v)),
               false;
    for (int i = 0; i < n; i++) {
        int64_t d;
        if (!sema_const_int(s, items[i], at, "a block_shape entry", &d))
            return false;
        if (d < 1 || d > SEMA_MAX_NUMEL || (d & (d - 1)))
            return sema_err(s, at, "%s: block_shape entry %d is %lld; each must be a power of two",
                            fn, i, (long long)d),
                   false;
        dims[i] = (int)d;
    }
    *rank = n;
    return sema_check_numel(s, n, dims, at);
}

static bool base_pointer(Sema *s, SVal v, Span at, const char *fn)
{
    if (v.k == SV_TENSOR && v.v->type.dt == DT_PTR && v.v->type.rank == 0)
        return true;
    if (v.k != SV_UNDEF)
        sema_err(s, at, "%s: base must be a scalar pointer, got %s", fn, sv_describe(s, v));
    return false;
}

/* order: a permutation of 0..rank-1, kept as 4 bits per dim. */
static bool order_arg(Sema *s, SVal v, Span at, int rank, int64_t *packed)
{
    const SVal *items;
    int n = items_of(v, &items);
    if (n != rank)
        return sema_err(s, at,
                        "tl.make_block_ptr: order must be a tuple of %d constexpr ints "
                        "(a permutation of the dims), got %s",
                        rank, sv_describe(s, v)),
               false;
    unsigned seen = 0;
    *packed = 0;
    for (int i = 0; i < n; i++) {
        int64_t d;
        if (!sema_const_int(s, items[i], at, "an order entry", &d))
            return false;
        if (d < 0 || d >= rank || (seen & (1u << d)))
            return sema_err(s, at,
                            "tl.make_block_ptr: order (%s) is not a permutation of the "
                            "dims 0..%d",
                            sv_describe(s, v), rank - 1),
                   false;
        seen |= 1u << d;
        *packed |= d << (4 * i);
    }
    return true;
}

/* ---- building -------------------------------------------------------------------------- */

static SVal make_struct(Sema *s, SvKind k, DType elem, int rank, const int *block, int nitems)
{
    SVal v = {.k = k, .n = nitems};
    v.ty = type_block(elem, rank, block);
    v.items = arena_alloc(s->a, sizeof(SVal) * (size_t)nitems);
    return v;
}

static SVal b_make_block_ptr(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    const char *fn = "tl.make_block_ptr";
    int rank, block[TK_MAX_RANK];
    const SVal *shape, *strides, *offs;
    int64_t order;
    TK_UNUSED(b);
    if (!base_pointer(s, a[0], at[0], fn) || !block_dims(s, a[4], at[4], fn, &rank, block) ||
        !int_list(s, a[1], at[1], rank, fn, "shape", &shape) ||
        !int_list(s, a[2], at[2], rank, fn, "strides", &strides) ||
        !int_list(s, a[3], at[3], rank, fn, "offsets", &offs) ||
        !order_arg(s, a[5], at[5], rank, &order))
        return bad();
    SVal v = make_struct(s, SV_BLOCKPTR, a[0].v->type.elem, rank, block, 1 + 3 * rank);
    v.i = order;
    v.items[0] = a[0];
    for (int d = 0; d < rank; d++) {
        v.items[1 + d] = shape[d];
        v.items[1 + rank + d] = strides[d];
        v.items[1 + 2 * rank + d] = offset_i32(s, offs[d], call);
    }
    return v;
}

static SVal b_advance(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b);
    if (a[0].k != SV_BLOCKPTR) {
        if (a[0].k != SV_UNDEF)
            sema_err(s, at[0], "tl.advance expects a block pointer (tl.make_block_ptr), got %s",
                     sv_describe(s, a[0]));
        return bad();
    }
    int rank = a[0].ty.rank;
    const SVal *delta;
    if (!int_list(s, a[1], at[1], rank, "tl.advance", "offsets", &delta))
        return bad();
    SVal v = a[0];
    v.items = arena_alloc(s->a, sizeof(SVal) * (size_t)v.n);
    memcpy(v.items, a[0].items, sizeof(SVal) * (size_t)v.n);
    for (int d = 0; d < rank; d++) {
        SVal *o = &v.items[1 + 2 * rank + d];
        if (delta[d].k == SV_INT && delta[d].i == 0)
            continue; /* unchanged: a loop then sees the offset is invariant */
        SVal sum = sema_binary(s, OP_ADD, *o, offset_i32(s, delta[d], call), call);
        if (sum.k == SV_UNDEF)
            return bad();
        *o = offset_i32(s, sum, call);
    }
    return v;
}

/* A descriptor whose last dim is contiguous keeps Triton's contract: its
 * base is 16-byte aligned and its other strides are multiples of 16 bytes
 * (TMA reads it so; other values fault there). The values say so as
 * tl.multiple_of would, so its tiles are copied 16 bytes at a time and,
 * over pointers the kernel computes, by tensor maps it writes itself
 * (codegen/tmap.c). */
static void aligned_desc(Sema *s, SVal *v, int rank, Span call)
{
    const SVal *last = &v->items[2 * rank];
    int bytes = dtype_bits(v->ty.dt) / 8;
    if (last->k != SV_INT || last->i != 1 || bytes < 1 || 16 % bytes)
        return;
    v->i |= DESC_ALIGNED;
    int sixteen = 16, per = 16 / bytes;
    if (v->items[0].k == SV_TENSOR)
        v->items[0] = sema_hint(s, v->items[0].v, HINT_MULTIPLE_OF, &sixteen, 1, call);
    for (int d = 0; d + 1 < rank; d++) {
        SVal *st = &v->items[1 + rank + d];
        if (st->k != SV_TENSOR || st->v->type.rank != 0)
            continue;
        IrValue *plain = st->v;
        *st = sema_hint(s, plain, HINT_MULTIPLE_OF, &per, 1, call);
        /* The same value as a dim's size (a row stride that is the row's
         * length) is that multiple there too, which lets the bounds check
         * of a dim cover whole 16-byte vectors. */
        for (int e = 0; e < rank; e++)
            if (v->items[1 + e].k == SV_TENSOR && v->items[1 + e].v == plain)
                v->items[1 + e] = *st;
    }
}

void sema_desc_contract(Sema *s, SVal *v, Span at)
{
    if (v->k == SV_DESC && (v->i & DESC_ALIGNED))
        aligned_desc(s, v, v->ty.rank, at);
    else if (v->k == SV_TUPLE)
        for (int k = 0; k < v->n; k++)
            sema_desc_contract(s, &v->items[k], at);
}

enum { TMA_MAX_RANK = 5 };

static SVal b_make_desc(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    const char *fn = "tl.make_tensor_descriptor";
    int rank, block[TK_MAX_RANK];
    const SVal *shape, *strides;
    TK_UNUSED(b);
    if (!base_pointer(s, a[0], at[0], fn) || !block_dims(s, a[3], at[3], fn, &rank, block) ||
        !int_list(s, a[1], at[1], rank, fn, "shape", &shape) ||
        !int_list(s, a[2], at[2], rank, fn, "strides", &strides))
        return bad();
    if (rank > TMA_MAX_RANK)
        return sema_err(s, at[3],
                        "%s: a descriptor's block has at most %d dimensions (TMA's), got %d", fn,
                        TMA_MAX_RANK, rank);
    if (sv_has(a[4]) && (a[4].k != SV_STR || (strcmp(a[4].s, "zero") && strcmp(a[4].s, "nan"))))
        return sema_err(s, at[4], "%s: padding_option must be 'zero' or 'nan', got %s", fn,
                        sv_describe(s, a[4]));
    SVal v = make_struct(s, SV_DESC, a[0].v->type.elem, rank, block, 1 + 2 * rank);
    v.i = sv_has(a[4]) && !strcmp(a[4].s, "nan") ? DESC_NAN : 0;
    v.items[0] = a[0];
    for (int d = 0; d < rank; d++) {
        v.items[1 + d] = shape[d];
        v.items[1 + rank + d] = strides[d];
    }
    aligned_desc(s, &v, rank, call);
    return v;
}

/* ---- knowing an offset is not negative ----------------------------------------------- */

/* Whether integer value v is never negative: made of program ids, aranges,
 * constants >= 0 and counters of loops that count up from >= 0 by +, *, /,
 * %, min and max, or one of `known` (offsets a loop only
 * moves forward). Such an index needs no `>= 0` half in its mask, which
 * leaves one bound per dim: the form TMA tiles are recognised by. */
static bool nonneg(const IrValue *v, IrValue *const *known, int nknown, int depth)
{
    for (int i = 0; i < nknown; i++)
        if (v == known[i])
            return true;
    const IrOp *d = v->def;
    if (!d && v->owner && v->index == 0 && v->owner->parent &&
        v->owner->parent->kind == IR_FOR) { /* a for loop counting up from >= 0 */
        const IrOp *loop = v->owner->parent, *step = loop->operands[2]->def;
        return depth <= 32 && step && step->kind == IR_CONST && step->ival > 0 &&
            nonneg(loop->operands[0], known, nknown, depth + 1);
    }
    if (!d || depth > 32 || !dtype_is_int(v->type.dt))
        return false;
    switch (d->kind) {
    case IR_CONST: return d->ival >= 0;
    case IR_PROGRAM_ID:
    case IR_NUM_PROGRAMS: return true;
    case IR_ARANGE: return d->ival >= 0;
    case IR_SPLAT:
    case IR_EXPAND_DIMS:
    case IR_BROADCAST:
    case IR_RESHAPE: return nonneg(d->operands[0], known, nknown, depth + 1);
    case IR_ADD:
    case IR_MUL:
    case IR_DIV:
    case IR_MIN:
        return nonneg(d->operands[0], known, nknown, depth + 1) &&
            nonneg(d->operands[1], known, nknown, depth + 1);
    case IR_REM: /* the remainder has the sign of the dividend */
        return nonneg(d->operands[0], known, nknown, depth + 1);
    case IR_MAX:
        return nonneg(d->operands[0], known, nknown, depth + 1) ||
            nonneg(d->operands[1], known, nknown, depth + 1);
    default: return false;
    }
}

static bool sv_nonneg(SVal v)
{
    return v.k == SV_INT ? v.i >= 0 : v.k == SV_TENSOR && nonneg(v.v, NULL, 0, 0);
}

typedef struct Known {
    IrValue **v;
    int n;
} Known;

/* `(idx >= 0) & hi` with idx known not negative reads as hi. */
static bool drop_lower(IrOp *op, void *ctx)
{
    const Known *k = ctx;
    if (op->kind != IR_AND || op->nops != 2 || !op->operands[0]->def)
        return true;
    const IrOp *ge = op->operands[0]->def;
    if (ge->kind != IR_CMP || ge->sub != CMP_GE || !ge->operands[1]->def ||
        ge->operands[1]->def->kind != IR_CONST || ge->operands[1]->def->ival != 0 ||
        !nonneg(ge->operands[0], k->v, k->n, 0))
        return true;
    ir_replace_uses(op->parent, op->results[0], op->operands[1]);
    return true;
}

/* After a loop: a carried offset that starts >= 0 and only grows (the
 * yield adds a value >= 0 to it) is never negative, so the lower-bound
 * halves of the masks built from it in the body are dropped. */
void sema_blockptr_loop_done(Sema *s, IrBlock *body, IrValue **args, IrValue **init,
                             IrValue **yield, int n)
{
    Known k = {arena_alloc(s->a, sizeof(IrValue *) * (size_t)(n + 1)), 0};
    for (int i = 0; i < n; i++) {
        const IrOp *y = yield[i]->def;
        if (!nonneg(init[i], NULL, 0, 0) || !y || y->kind != IR_ADD || y->operands[0] != args[i] ||
            !nonneg(y->operands[1], NULL, 0, 0))
            continue;
        k.v[k.n++] = args[i];
    }
    if (k.n)
        ir_walk(body, drop_lower, &k);
}

/* ---- addresses and masks ------------------------------------------------------------- */

static View view_of(SVal v)
{
    View w = {.rank = v.ty.rank, .base = v.items[0]};
    memcpy(w.block, v.ty.shape, sizeof w.block);
    w.shape = &v.items[1];
    w.strides = &v.items[1 + w.rank];
    if (v.k == SV_BLOCKPTR)
        for (int d = 0; d < w.rank; d++)
            w.offs[d] = v.items[1 + 2 * w.rank + d];
    return w;
}

/* offset_d + arange(0, block_d), shaped to lie along dim d of the block. */
static SVal index_along(Sema *s, const View *w, int d, Span at)
{
    CallArgs ca = {.npos = 2, .at = at};
    SVal range[2] = {sv_int(0), sv_int(w->block[d])};
    Span spans[2] = {at, at};
    ca.pos = range;
    ca.pos_at = spans;
    SVal idx = sema_call_builtin(s, "tl", "arange", (SVal){.k = SV_VOID}, &ca);
    if (!(w->offs[d].k == SV_INT && w->offs[d].i == 0))
        idx = sema_binary(s, OP_ADD, idx, w->offs[d], at);
    if (idx.k != SV_TENSOR)
        return bad();
    /* expand_dims, as hand-written `offs[:, None]` is: the TMA matcher reads it */
    IrValue *v = idx.v;
    for (int k = 0; k < w->rank && v; k++)
        if (k != d)
            v = sema_expand_dims(s, v, k, at);
    return sv_tensor(v);
}

static SVal and_masks(Sema *s, SVal m, SVal x, Span at)
{
    return m.k == SV_VOID ? x : sema_binary(s, OP_BITAND, m, x, at);
}

static bool address(Sema *s, const View *w, const bool *check, Span at, IrValue **ptr, SVal *mask);

/* 0 <= idx < hi, or idx < hi where idx cannot be negative (off, the
 * block's offset along the dim, known >= 0). */
static SVal in_bounds(Sema *s, SVal idx, SVal off, SVal hi, Span at)
{
    SVal m = sema_compare(s, OP_LT, idx, hi, at);
    if (sv_nonneg(off) || m.k == SV_UNDEF)
        return m;
    return sema_binary(s, OP_BITAND, sema_compare(s, OP_GE, idx, sv_int(0), at), m, at);
}

/* An access whose block has dims of size 1 beside others ([1, BM, BK] of
 * a batched tensor): each unit dim adds a scalar offset and a scalar
 * check, the tile is addressed over the other dims and reshaped to the
 * block, so that pass squeeze loads it at that rank (and the pipeline and
 * TMA see a 2-D tile), where a rank-3 tile went unpipelined. */
static bool address_squeezed(Sema *s, const View *w, const bool *check, Span at, IrValue **ptr,
                             SVal *mask)
{
    View t = {.base = w->base};
    SVal shape[TK_MAX_RANK], strides[TK_MAX_RANK], m0 = {.k = SV_VOID};
    bool tcheck[TK_MAX_RANK] = {false};
    for (int d = 0; d < w->rank; d++) {
        if (w->block[d] != 1) {
            t.block[t.rank] = w->block[d];
            shape[t.rank] = w->shape[d];
            strides[t.rank] = w->strides[d];
            t.offs[t.rank] = w->offs[d];
            tcheck[t.rank++] = check[d];
            continue;
        }
        t.base = sema_binary(s, OP_ADD, t.base,
                             sema_binary(s, OP_MUL, w->offs[d], w->strides[d], at), at);
        if (check[d])
            m0 = and_masks(s, m0, in_bounds(s, w->offs[d], w->offs[d], w->shape[d], at), at);
        if (t.base.k == SV_UNDEF || m0.k == SV_UNDEF)
            return false;
    }
    t.shape = shape;
    t.strides = strides;
    IrValue *p;
    if (!address(s, &t, tcheck, at, &p, mask))
        return false;
    if (m0.k != SV_VOID && !(m0.k == SV_BOOL && m0.i)) {
        *mask = and_masks(s, *mask, m0, at);
        if (mask->k == SV_TENSOR)
            mask->v = sema_broadcast(s, mask->v, t.rank, t.block, at);
    }
    *ptr = sema_reshape(s, p, w->rank, w->block, at);
    if (mask->k == SV_TENSOR)
        mask->v = sema_reshape(s, mask->v, w->rank, w->block, at);
    return *ptr != NULL && mask->k != SV_UNDEF && (mask->k != SV_TENSOR || mask->v);
}

/* The block of pointers of an access, and its mask over the dims in
 * check[] (SV_VOID when none is checked). */
static bool address(Sema *s, const View *w, const bool *check, Span at, IrValue **ptr, SVal *mask)
{
    int units = 0;
    for (int d = 0; d < w->rank; d++)
        units += w->block[d] == 1;
    if (units && units < w->rank)
        return address_squeezed(s, w, check, at, ptr, mask);
    SVal p = w->base;
    *mask = (SVal){.k = SV_VOID};
    for (int d = 0; d < w->rank; d++) {
        SVal idx = index_along(s, w, d, at);
        if (idx.k == SV_UNDEF)
            return false;
        SVal st = w->strides[d];
        SVal term = st.k == SV_INT && st.i == 1 ? idx : sema_binary(s, OP_MUL, idx, st, at);
        p = sema_binary(s, OP_ADD, p, term, at);
        if (p.k == SV_UNDEF)
            return false;
        if (!check[d])
            continue;
        /* an offset known to be >= 0 cannot reach below the tensor */
        *mask = and_masks(s, *mask, in_bounds(s, idx, w->offs[d], w->shape[d], at), at);
        if (mask->k == SV_UNDEF)
            return false;
    }
    *ptr = sema_broadcast(s, p.v, w->rank, w->block, at);
    if (mask->k == SV_TENSOR)
        mask->v = sema_broadcast(s, mask->v, w->rank, w->block, at);
    return *ptr != NULL;
}

/* boundary_check=(dims...): which dims a block-pointer access checks. */
static bool checked_dims(Sema *s, SVal v, Span at, int rank, bool *check)
{
    memset(check, 0, sizeof(bool) * TK_MAX_RANK);
    if (!sv_has(v))
        return true;
    const SVal *items = &v;
    int n = v.k == SV_TUPLE ? v.n : 1;
    if (v.k == SV_TUPLE)
        items = v.items;
    for (int i = 0; i < n; i++) {
        int64_t d;
        if (!sema_const_int(s, items[i], at, "a boundary_check dim", &d))
            return false;
        if (d < 0 || d >= rank)
            return sema_err(s, at,
                            "boundary_check dim %lld is out of range for a block pointer "
                            "of rank %d",
                            (long long)d, rank),
                   false;
        check[d] = true;
    }
    return true;
}

bool sema_blockptr_access(Sema *s, SVal bp, SVal boundary_check, Span bc_at, Span at, IrValue **ptr,
                          SVal *mask)
{
    bool check[TK_MAX_RANK];
    View w = view_of(bp);
    return checked_dims(s, boundary_check, bc_at, w.rank, check) &&
        address(s, &w, check, at, ptr, mask);
}

/* The value out-of-bounds elements read as: padding_option "zero" or "nan"
 * ("" or None: no value, as in Triton, where they are undefined). */
bool sema_padding_value(Sema *s, SVal opt, Span at, DType elem, SVal *other)
{
    *other = (SVal){.k = SV_VOID};
    if (!sv_has(opt) || (opt.k == SV_STR && !opt.s[0]))
        return true;
    if (opt.k != SV_STR || (strcmp(opt.s, "zero") && strcmp(opt.s, "nan")))
        return sema_err(s, at, "padding_option must be \"zero\" or \"nan\", got %s",
                        sv_describe(s, opt)),
               false;
    if (!strcmp(opt.s, "nan") && !dtype_is_float(elem))
        return sema_err(s, at, "padding_option \"nan\" needs a floating-point pointer, got %s",
                        dtype_name(elem)),
               false;
    *other = !strcmp(opt.s, "nan") ? sv_float(NAN) : sv_int(0);
    return true;
}

/* ---- descriptor methods ------------------------------------------------------------- */

/* A descriptor access at `offsets`: every dim checked, as TMA does. */
static bool desc_access(Sema *s, const Builtin *b, SVal desc, SVal offsets, Span at, IrValue **ptr,
                        SVal *mask)
{
    View w = view_of(desc);
    const SVal *offs;
    if (!int_list(s, offsets, at, w.rank, arena_printf(s->a, "desc.%s", b->name), "offsets", &offs))
        return false;
    bool check[TK_MAX_RANK];
    for (int d = 0; d < w.rank; d++) {
        w.offs[d] = offset_i32(s, offs[d], at);
        check[d] = true;
    }
    return address(s, &w, check, at, ptr, mask);
}

/* Calls the ordinary builtin `name` on (ptr, value) with a mask and keywords. */
static SVal call_plain(Sema *s, const char *name, IrValue *ptr, SVal val, SVal mask,
                       const char **kw, SVal *kwv, int nkw, Span at)
{
    SVal pos[2] = {sv_tensor(ptr), val};
    Span pos_at[2] = {at, at};
    const char *kws[4];
    SVal kvs[4];
    Span kw_at[4] = {at, at, at, at};
    int n = 0;
    if (mask.k == SV_TENSOR) {
        kws[n] = "mask";
        kvs[n++] = mask;
    }
    for (int i = 0; i < nkw && n < 4; i++)
        if (sv_has(kwv[i])) {
            kws[n] = kw[i];
            kvs[n++] = kwv[i];
        }
    CallArgs ca = {.pos = pos,
                   .pos_at = pos_at,
                   .npos = val.k == SV_VOID ? 1 : 2,
                   .kw = kws,
                   .kwv = kvs,
                   .kw_at = kw_at,
                   .nkw = n,
                   .at = at};
    return sema_call_builtin(s, "tl", name, (SVal){.k = SV_VOID}, &ca);
}

static SVal d_load(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *ptr;
    SVal mask;
    if (!desc_access(s, b, a[0], a[1], at[1], &ptr, &mask))
        return bad();
    SVal other = mask.k == SV_TENSOR ? (a[0].i & DESC_NAN ? sv_float(NAN) : sv_int(0))
                                     : (SVal){.k = SV_VOID};
    const char *kw[3] = {"other", "cache_modifier", "eviction_policy"};
    SVal kv[3] = {other, a[2], a[3]};
    SVal r = call_plain(s, "load", ptr, (SVal){.k = SV_VOID}, mask, kw, kv, 3, call);
    if (r.k == SV_TENSOR && r.v->def && r.v->def->kind == IR_LOAD)
        r.v->def->flags |= IRF_DESC;
    return r;
}

static SVal d_store(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *ptr;
    SVal mask;
    if (!desc_access(s, b, a[0], a[1], at[1], &ptr, &mask))
        return bad();
    const char *kw[1] = {"cache_modifier"};
    SVal kv[1] = {a[3]};
    SVal r = call_plain(s, "store", ptr, a[2], mask, kw, kv, 1, call);
    return r.k == SV_UNDEF ? r : sv_none();
}

/* desc.gather(x_offsets, y_offset) / desc.scatter(value, x_offsets,
 * y_offset): rows x_offsets of a [1, N]-block 2-D descriptor, columns
 * y_offset .. y_offset + N, with Triton 3.6's checks (at least 8 rows, at
 * least 8 32-bit words a row). Addressed like a load of the descriptor,
 * the rows a block instead of offset + arange: out of bounds reads 0. */
static bool rows_access(Sema *s, const Builtin *b, SVal desc, SVal xo, SVal yo, Span at,
                        IrValue **ptr, SVal *mask)
{
    View w = view_of(desc);
    int min_cols = 32 / dtype_bits(desc.ty.dt) * 8;
    if (w.rank != 2 || w.block[0] != 1 || w.block[1] < min_cols)
        return sema_err(s, at,
                        "desc.%s needs a 2-D descriptor whose block is [1, N] with N >= %d for "
                        "%s, got block %s",
                        b->name, min_cols, dtype_name(desc.ty.dt), sema_type_str(s, desc.ty)),
               false;
    IrValue *x = sema_to_tensor(s, xo, at);
    if (!x)
        return false;
    if (x->type.rank != 1 || x->type.shape[0] < 8 || !dtype_is_int(x->type.dt))
        return sema_err(s, at,
                        "desc.%s: x_offsets must be a 1-D integer block of at least 8 rows, got %s",
                        b->name, sema_type_str(s, x->type)),
               false;
    w.block[0] = x->type.shape[0];
    w.offs[1] = offset_i32(s, yo, at);
    SVal cols = index_along(s, &w, 1, at);
    SVal rows = sv_tensor(sema_expand_dims(s, x, 1, at));
    if (cols.k == SV_UNDEF || rows.k != SV_TENSOR || !rows.v)
        return false;
    SVal p = sema_binary(s, OP_ADD, w.base, sema_binary(s, OP_MUL, rows, w.strides[0], at), at);
    p = sema_binary(s, OP_ADD, p, sema_binary(s, OP_MUL, cols, w.strides[1], at), at);
    SVal m = (SVal){.k = SV_VOID};
    SVal idx[2] = {rows, cols};
    for (int d = 0; d < 2; d++) {
        SVal in = sema_binary(s, OP_BITAND, sema_compare(s, OP_GE, idx[d], sv_int(0), at),
                              sema_compare(s, OP_LT, idx[d], w.shape[d], at), at);
        m = and_masks(s, m, in, at);
    }
    if (p.k != SV_TENSOR || m.k != SV_TENSOR)
        return false;
    *ptr = sema_broadcast(s, p.v, 2, w.block, at);
    *mask = sv_tensor(sema_broadcast(s, m.v, 2, w.block, at));
    return *ptr && mask->v;
}

static SVal d_gather(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *ptr;
    SVal mask;
    if (!rows_access(s, b, a[0], a[1], a[2], call, &ptr, &mask))
        return bad();
    SVal other = a[0].i & DESC_NAN ? sv_float(NAN) : sv_int(0);
    const char *kw[1] = {"other"};
    return call_plain(s, "load", ptr, (SVal){.k = SV_VOID}, mask, kw, &other, 1, call);
}

static SVal d_scatter(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *ptr;
    SVal mask;
    if (!rows_access(s, b, a[0], a[2], a[3], call, &ptr, &mask))
        return bad();
    SVal r = call_plain(s, "store", ptr, a[1], mask, NULL, NULL, 0, call);
    return r.k == SV_UNDEF ? r : sv_none();
}

static const char *const atomic_names[] = {"atomic_add", "atomic_min", "atomic_max",
                                           "atomic_and", "atomic_or",  "atomic_xor"};

static SVal d_atomic(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *ptr;
    SVal mask;
    if (!desc_access(s, b, a[0], a[1], at[1], &ptr, &mask))
        return bad();
    SVal r = call_plain(s, atomic_names[b->arg], ptr, a[2], mask, NULL, NULL, 0, call);
    return r.k == SV_UNDEF ? r : sv_none(); /* Triton's descriptor atomics return nothing */
}

/* desc.shape, desc.strides, desc.block_shape, desc.dtype, and its methods. */
SVal sema_desc_attr(Sema *s, SVal desc, const char *name, Span at)
{
    int rank = desc.ty.rank;
    if (!strcmp(name, "block_shape")) {
        SVal dims[TK_MAX_RANK];
        for (int i = 0; i < rank; i++)
            dims[i] = sv_int(desc.ty.shape[i]);
        return sv_tuple(s, dims, rank);
    }
    if (!strcmp(name, "shape"))
        return sv_tuple(s, &desc.items[1], rank);
    if (!strcmp(name, "strides"))
        return sv_tuple(s, &desc.items[1 + rank], rank);
    if (!strcmp(name, "dtype"))
        return sv_dtype(type_scalar(desc.ty.dt));
    for (int i = 0; i < sema_desc_methods.n; i++)
        if (!strcmp(sema_desc_methods.items[i].name, name)) {
            SVal m = {.k = SV_BUILTIN, .s = sema_desc_methods.items[i].name, .ns = "desc", .n = 1};
            m.items = arena_alloc(s->a, sizeof(SVal));
            m.items[0] = desc;
            return m;
        }
    return sema_err(s, at, "a tensor descriptor has no attribute '%s'", name);
}

static const Builtin blockptr[] = {
    {"make_block_ptr", "base,shape,strides,offsets,block_shape,order", b_make_block_ptr, 0, false},
    {"advance", "base,offsets", b_advance, 0, true},
    {"make_tensor_descriptor", "base,shape,strides,block_shape,padding_option=", b_make_desc, 0,
     false},
    {"_experimental_make_tensor_descriptor",
     "base,shape,strides,block_shape,padding_option=", b_make_desc, 0, false},
};

const BuiltinTable sema_tl_blockptr = {blockptr, TK_ARRAY_LEN(blockptr)};

static const Builtin desc_methods[] = {
    {"load", "desc,offsets,cache_modifier=,eviction_policy=", d_load, 0, true},
    {"store", "desc,offsets,value,cache_modifier=", d_store, 0, true},
    {"atomic_add", "desc,offsets,value", d_atomic, 0, true},
    {"atomic_min", "desc,offsets,value", d_atomic, 1, true},
    {"atomic_max", "desc,offsets,value", d_atomic, 2, true},
    {"atomic_and", "desc,offsets,value", d_atomic, 3, true},
    {"atomic_or", "desc,offsets,value", d_atomic, 4, true},
    {"atomic_xor", "desc,offsets,value", d_atomic, 5, true},
    {"gather", "desc,x_offsets,y_offset", d_gather, 0, true},
    {"scatter", "desc,value,x_offsets,y_offset", d_scatter, 0, true},
};

const BuiltinTable sema_desc_methods = {desc_methods, TK_ARRAY_LEN(desc_methods)};
