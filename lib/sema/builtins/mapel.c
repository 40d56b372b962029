/* sema/builtins/mapel.c: tl.map_elementwise(scalar_fn, *args, pack=1).
 * The arguments broadcast to one shape and the function's body runs once
 * on the blocks, with per-element control flow (sema/predicate.c), so each
 * element gets what a call on that element alone gives. With pack=N the
 * function takes N consecutive elements along the last dimension of each
 * argument (argument-major: a0..aN-1, b0..bN-1, ...) and returns N values
 * per result (result-major), which are laid back in the same places, as
 * in Triton. */
#include <string.h>

#include "sema/spec.h"

/* Triton puts no bound on pack; 64 values per argument is far past any use. */
#define MAX_PACK 64

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

/* Splits x's last dimension into two halves of interleaved elements:
 * e[0] gets the even positions, e[1] the odd ones. */
static bool deinterleave(Sema *s, IrValue *x, IrValue **e, Span at)
{
    int r = x->type.rank, shape[TK_MAX_RANK];
    memcpy(shape, x->type.shape, sizeof shape);
    shape[r - 1] /= 2;
    shape[r] = 2;
    IrValue *y = sema_reshape(s, x, r + 1, shape, at);
    if (!y)
        return false;
    Type rt = type_with_shape(x->type, r, shape);
    IrOp *op = ir_build(&s->b, IR_SPLIT, at, &y, 1, (Type[]){rt, rt}, 2);
    e[0] = op->results[0];
    e[1] = op->results[1];
    return true;
}

/* slot[k] = x[..., pack * j + k]: even slots come from the even positions,
 * odd ones from the odd positions, recursively (pack is a power of two). */
static bool split_slots(Sema *s, IrValue *x, int pack, IrValue **slot, Span at)
{
    if (pack == 1) {
        slot[0] = x;
        return true;
    }
    IrValue *e[2], *half[2][MAX_PACK];
    if (!deinterleave(s, x, e, at))
        return false;
    for (int p = 0; p < 2; p++)
        if (!split_slots(s, e[p], pack / 2, half[p], at))
            return false;
    for (int k = 0; k < pack; k++)
        slot[k] = half[k % 2][k / 2];
    return true;
}

/* The inverse of split_slots: element pack * j + k of the result is slot[k][j]. */
static IrValue *join_slots(Sema *s, IrValue **slot, int pack, Span at)
{
    if (pack == 1)
        return slot[0];
    IrValue *part[2][MAX_PACK], *e[2];
    for (int k = 0; k < pack; k++)
        part[k % 2][k / 2] = slot[k];
    for (int p = 0; p < 2; p++)
        if (!(e[p] = join_slots(s, part[p], pack / 2, at)))
            return NULL;
    Type t = e[0]->type;
    int shape[TK_MAX_RANK];
    memcpy(shape, t.shape, sizeof shape);
    shape[t.rank] = 2;
    IrValue *j = ir_binary(&s->b, IR_JOIN, at, e[0], e[1], type_with_shape(t, t.rank + 1, shape));
    shape[t.rank - 1] *= 2;
    return sema_reshape(s, j, t.rank, shape, at);
}

/* Whether pack elements can be grouped along the last dimension of shape t. */
static bool check_pack(Sema *s, Type t, int64_t pack, Span at)
{
    if (pack < 1 || pack > MAX_PACK || (pack & (pack - 1))) {
        sema_err(s, at, "tl.map_elementwise's pack must be a power of two from 1 to %d, got %lld",
                 MAX_PACK, (long long)pack);
        return false;
    }
    if (pack == 1)
        return true;
    if (t.rank >= TK_MAX_RANK) { /* the slots are split off through one more dimension */
        sema_err(s, at,
                 "tl.map_elementwise with pack=%lld takes blocks of at most %d dimensions, got %s",
                 (long long)pack, TK_MAX_RANK - 1, sema_type_str(s, t));
        return false;
    }
    if (t.rank == 0) {
        sema_err(s, at, "tl.map_elementwise with pack=%lld needs blocks, got the scalar %s",
                 (long long)pack, sema_type_str(s, t));
        return false;
    }
    if (t.shape[t.rank - 1] % pack) {
        sema_err(s, at,
                 "tl.map_elementwise with pack=%lld groups consecutive elements of the last "
                 "dimension, which must be divisible by %lld; the arguments have the shape %s",
                 (long long)pack, (long long)pack, sema_type_str(s, t));
        return false;
    }
    return true;
}

/* One result of the function as a block of the mapped shape. */
static IrValue *result_block(Sema *s, SVal v, const char *fn, Span at)
{
    if (v.k != SV_TENSOR && !sv_is_num(v)) {
        if (v.k != SV_UNDEF)
            sema_err(s, at, "tl.map_elementwise's function '%s' must return tensors, got %s", fn,
                     sv_describe(s, v));
        return NULL;
    }
    return sema_pred_widen(s, sema_to_tensor(s, v, at), at);
}

/* Lays the function's results back: with pack=N, result i is made of the
 * values N*i .. N*i+N-1, one per slot, all of one type. */
static SVal unpack_results(Sema *s, SVal r, int pack, const char *fn, Span at)
{
    bool single = r.k != SV_TUPLE;
    int n = single ? 1 : r.n;
    SVal *items = single ? &r : r.items;
    if (pack > 1 && (single || n == 0 || n % pack))
        return sema_err(s, at,
                        "with pack=%d, '%s' must return a tuple of %d values per result "
                        "(a multiple of %d), got %s",
                        pack, fn, pack, pack,
                        single ? sv_describe(s, r) : arena_printf(s->a, "%d values", n));
    SVal *out = arena_alloc(s->a, sizeof(SVal) * (size_t)(n / pack + 1));
    IrValue *slot[MAX_PACK];
    for (int i = 0; i < n / pack; i++) {
        for (int k = 0; k < pack; k++) {
            if (!(slot[k] = result_block(s, items[i * pack + k], fn, at)))
                return bad();
            if (k && !type_eq(slot[k]->type, slot[0]->type))
                return sema_err(s, at,
                                "with pack=%d, the values of result %d of '%s' must have one "
                                "type; value %d is %s, value %d is %s",
                                pack, i, fn, i * pack, sema_type_str(s, slot[0]->type),
                                i * pack + k, sema_type_str(s, slot[k]->type));
        }
        IrValue *x = join_slots(s, slot, pack, at);
        if (!x)
            return bad();
        out[i] = sv_tensor(x);
    }
    return single ? out[0] : sv_tuple(s, out, n / pack);
}

/* The arguments broadcast to one shape, each split into pack slots. */
static SVal *slot_args(Sema *s, SVal t, int pack, Span at, Type *shape)
{
    IrValue **v = arena_alloc(s->a, sizeof(IrValue *) * (size_t)t.n);
    SVal *vals = arena_alloc(s->a, sizeof(SVal) * (size_t)(t.n * pack));
    IrValue *slot[MAX_PACK];
    for (int i = 0; i < t.n; i++)
        if (!(v[i] = sema_to_tensor(s, t.items[i], at)))
            return NULL;
    for (int i = 1; i < t.n; i++)
        if (!sema_broadcast_pair(s, &v[0], &v[i], at))
            return NULL;
    for (int i = 0; i < t.n; i++)
        if (!sema_broadcast_pair(s, &v[i], &v[0], at))
            return NULL;
    *shape = v[0]->type;
    if (!check_pack(s, *shape, pack, at))
        return NULL;
    for (int i = 0; i < t.n; i++) {
        if (!split_slots(s, v[i], pack, slot, at))
            return NULL;
        for (int k = 0; k < pack; k++)
            vals[i * pack + k] = sv_tensor(slot[k]);
    }
    return vals;
}

static SVal b_map_elementwise(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    TK_UNUSED(b);
    if (a[0].k != SV_FUNC)
        return sema_err(s, at[0], "tl.map_elementwise needs a @triton.jit function, got %s",
                        sv_describe(s, a[0]));
    int64_t pack = 1;
    if (sv_has(a[2]) && !sema_const_int(s, a[2], at[2], "tl.map_elementwise's pack", &pack))
        return bad();
    if (a[1].n == 0)
        return sema_err(s, call_at, "tl.map_elementwise needs at least one block argument");
    if (pack < 1 || pack > MAX_PACK || (pack & (pack - 1)))
        return check_pack(s, type_scalar(DT_I1), pack, at[2]), bad();
    Type shape;
    SVal *vals = slot_args(s, a[1], (int)pack, sv_has(a[2]) ? at[2] : at[1], &shape);
    if (!vals)
        return bad();
    int errors = s->d->errors;
    SemaPred *outer = s->pred, frame = {.ret = {.k = SV_VOID}};
    frame.nested = outer && (outer->mask || outer->done || outer->nested);
    frame.shape = type_with_shape(type_scalar(DT_I1), vals[0].v->type.rank, vals[0].v->type.shape);
    s->pred = &frame;
    SVal r = sema_inline_values(s, a[0].fn, vals, a[1].n * (int)pack, call_at);
    if (s->d->errors == errors)
        r = unpack_results(s, r, (int)pack, a[0].fn->name, call_at);
    s->pred = outer;
    return s->d->errors > errors ? bad() : r;
}

static const Builtin mapel_items[] = {
    {"map_elementwise", "scalar_fn,*args,pack=", b_map_elementwise, 0, false},
};
const BuiltinTable sema_tl_mapel = {mapel_items, TK_ARRAY_LEN(mapel_items)};
