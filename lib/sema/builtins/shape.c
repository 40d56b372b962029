/* sema/builtins/shape.c: shape builtins: expand_dims, broadcast_to, broadcast,
 * reshape/view/ravel, trans/permute, join, split, cat. Shapes stay static
 * and power-of-two; every mismatch is an error naming both shapes. */
#include <string.h>

#include "sema/spec.h"

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

static SVal b_expand_dims(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    if (!x)
        return bad();
    SVal one = a[1];
    const SVal *axes = a[1].k == SV_TUPLE ? a[1].items : &one;
    int n = a[1].k == SV_TUPLE ? a[1].n : 1;
    int rank = x->type.rank + n;
    if (rank > TK_MAX_RANK)
        return sema_err(s, call, "blocks have at most %d dimensions", TK_MAX_RANK);
    int norm[TK_MAX_RANK];
    for (int i = 0; i < n; i++)
        if ((norm[i] = sema_norm_axis(s, axes[i], rank, at[1])) < 0)
            return bad();
    for (int i = 0; i < n; i++) /* insert in increasing order */
        for (int j = i + 1; j < n; j++)
            if (norm[j] < norm[i]) {
                int t = norm[i];
                norm[i] = norm[j];
                norm[j] = t;
            }
    for (int i = 0; i < n && x; i++)
        x = sema_expand_dims(s, x, norm[i], call);
    return sv_tensor(x);
}

static SVal b_broadcast_to(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    int rank, dims[TK_MAX_RANK];
    if (!x || !sema_block_shape(s, a[1], call, &rank, dims))
        return bad();
    return sv_tensor(sema_broadcast(s, x, rank, dims, call));
}

static SVal b_broadcast(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    IrValue *y = sema_arg_tensor(s, a[1], at[1], b, "the other input");
    if (!x || !y || !sema_broadcast_pair(s, &x, &y, call))
        return bad();
    SVal r[2] = {sv_tensor(x), sv_tensor(y)};
    return sv_tuple(s, r, 2);
}

static SVal b_reshape(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    int rank, dims[TK_MAX_RANK];
    if (!x)
        return bad();
    if (b->arg) { /* ravel */
        int n = (int)type_numel(x->type);
        return sv_tensor(sema_reshape(s, x, 1, &n, call));
    }
    if (!sema_block_shape(s, a[1], call, &rank, dims))
        return bad();
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    if (n != type_numel(x->type))
        return sema_err(s, call, "cannot reshape %s (%lld elements) into %s (%lld elements)",
                        sema_type_str(s, x->type), (long long)type_numel(x->type),
                        sema_type_str(s, type_with_shape(x->type, rank, dims)), (long long)n);
    return sv_tensor(sema_reshape(s, x, rank, dims, call));
}

static SVal b_permute(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    if (!x)
        return bad();
    int rank = x->type.rank, perm[TK_MAX_RANK];
    if (a[1].n == 0) { /* the last two dims swapped, as Triton's trans does */
        if (rank < 2)
            return sema_err(s, call, "tl.%s without dims needs a block of 2 dims or more, got %s",
                            b->name, sema_type_str(s, x->type));
        for (int i = 0; i < rank; i++)
            perm[i] = i;
        perm[rank - 2] = rank - 1, perm[rank - 1] = rank - 2;
    } else {
        if (a[1].n != rank)
            return sema_err(s, call, "tl.%s needs %d dims for %s, got %d", b->name, rank,
                            sema_type_str(s, x->type), a[1].n);
        bool seen[TK_MAX_RANK] = {false};
        for (int i = 0; i < rank; i++) {
            int d = sema_norm_axis(s, a[1].items[i], rank, call);
            if (d < 0)
                return bad();
            if (seen[d])
                return sema_err(s, call, "tl.%s: dims must be a permutation of 0..%d", b->name,
                                rank - 1);
            seen[d] = true;
            perm[i] = d;
        }
    }
    int shape[TK_MAX_RANK];
    bool identity = true;
    for (int i = 0; i < rank; i++) {
        shape[i] = x->type.shape[perm[i]];
        identity &= perm[i] == i;
    }
    if (identity)
        return sv_tensor(x);
    IrOp *op =
        ir_build(&s->b, IR_TRANS, call, &x, 1, (Type[]){type_with_shape(x->type, rank, shape)}, 1);
    op->nints = rank;
    for (int i = 0; i < rank; i++)
        op->ints[i] = perm[i];
    return sv_tensor(op->results[0]);
}

static SVal b_join(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x, *y;
    TK_UNUSED(at);
    SVal second = a[1];
    /* integers of one width and two signednesses: the first's dtype, as
     * Triton's join takes it (the same bits), not the common unsigned one */
    if (a[0].k == SV_TENSOR && a[0].v && a[1].k == SV_TENSOR && a[1].v) {
        DType d0 = a[0].v->type.dt, d1 = a[1].v->type.dt;
        if (d0 != d1 && dtype_is_int(d0) && dtype_is_int(d1) && d0 != DT_I1 && d1 != DT_I1 &&
            dtype_bits(d0) == dtype_bits(d1))
            second = sv_tensor(sema_cast(s, a[1].v, d0, call));
    }
    if (!sema_binary_operands(s, a[0], second, false, &x, &y, call))
        return bad();
    if (x->type.rank >= TK_MAX_RANK)
        return sema_err(s, call, "tl.%s would give more than %d dimensions", b->name, TK_MAX_RANK);
    int shape[TK_MAX_RANK];
    memcpy(shape, x->type.shape, sizeof shape);
    shape[x->type.rank] = 2;
    if (!sema_check_numel(s, x->type.rank + 1, shape, call))
        return bad();
    Type rt = type_with_shape(x->type, x->type.rank + 1, shape);
    return sv_tensor(ir_binary(&s->b, IR_JOIN, call, x, y, rt));
}

/* interleave(a, b): join then merge the new last dim into the previous one */
static SVal b_interleave(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    SVal j = b_join(s, b, a, at, call);
    if (j.k != SV_TENSOR)
        return j;
    Type t = j.v->type;
    if (t.rank < 2) /* two scalars: their join, [a, b], as Triton's */
        return j;
    int shape[TK_MAX_RANK];
    memcpy(shape, t.shape, sizeof shape);
    shape[t.rank - 2] *= 2;
    return sv_tensor(sema_reshape(s, j.v, t.rank - 1, shape, call));
}

static SVal b_split(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    if (!x)
        return bad();
    int r = x->type.rank;
    if (r == 0 || x->type.shape[r - 1] != 2)
        return sema_err(s, call, "tl.split needs a last dimension of size 2, got %s",
                        sema_type_str(s, x->type));
    Type rt = type_with_shape(x->type, r - 1, x->type.shape);
    Type rts[2] = {rt, rt};
    IrOp *op = ir_build(&s->b, IR_SPLIT, call, &x, 1, rts, 2);
    SVal out[2] = {sv_tensor(op->results[0]), sv_tensor(op->results[1])};
    return sv_tuple(s, out, 2);
}

static SVal b_cat(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    IrValue *y = sema_arg_tensor(s, a[1], at[1], b, "the other input");
    bool reorder = false;
    if (!x || !y || (sv_has(a[2]) && !sema_truth(s, a[2], at[2], &reorder)))
        return bad();
    if (!reorder)
        return sema_err(s, call,
                        "tl.cat may reorder elements; pass can_reorder=True (as Triton "
                        "requires)");
    DType dx = x->type.dt, dy = y->type.dt; /* one width, two signednesses: x's, as Triton */
    if (dx != dy && dtype_is_int(dx) && dtype_is_int(dy) && dx != DT_I1 && dy != DT_I1 &&
        dtype_bits(dx) == dtype_bits(dy) && x->type.rank == y->type.rank)
        y = sema_cast(s, y, dx, call);
    if (!type_eq(x->type, y->type) || x->type.rank == 0)
        return sema_err(s, call, "tl.cat needs two blocks of one type, got %s and %s",
                        sema_type_str(s, x->type), sema_type_str(s, y->type));
    int shape[TK_MAX_RANK];
    memcpy(shape, x->type.shape, sizeof shape);
    shape[0] *= 2; /* at most 2 * SEMA_MAX_NUMEL: fits, and checked next */
    if (!sema_check_numel(s, x->type.rank, shape, call))
        return bad();
    return sv_tensor(
        ir_binary(&s->b, IR_CAT, call, x, y, type_with_shape(x->type, x->type.rank, shape)));
}

static const Builtin shape[] = {
    {"expand_dims", "input,axis", b_expand_dims, 0, true},
    {"broadcast_to", "input,*shape", b_broadcast_to, 0, true},
    {"broadcast", "input,other", b_broadcast, 0, true},
    {"reshape", "input,*shape,can_reorder=", b_reshape, 0, true},
    {"view", "input,*shape", b_reshape, 0, true},
    {"ravel", "x,can_reorder=", b_reshape, 1, true},
    {"trans", "input,*dims", b_permute, 0, true},
    {"permute", "input,*dims", b_permute, 0, true},
    {"join", "a,b", b_join, 0, true},
    {"split", "a", b_split, 0, true},
    {"interleave", "a,b", b_interleave, 0, true},
    {"cat", "input,other,can_reorder=", b_cat, 0, false},
};

const BuiltinTable sema_tl_shape = {shape, TK_ARRAY_LEN(shape)};
