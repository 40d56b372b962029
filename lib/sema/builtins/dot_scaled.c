/* sema/builtins/dot_scaled.c: tl.dot_scaled, the product of two blocks in
 * the microscaling (MX) formats, emulated as Triton emulates it on GPUs
 * without block-scaled MMA (sm_80, sm_90): each operand is decoded to
 * bf16 (fp16 when either operand is fp16), multiplied by its e8m0 scale
 * (2^(s - 127), one per 32 elements along K) and fed to tl.dot with an
 * fp32 accumulator. Formats: e2m1 (two per uint8, the first in the low
 * nibble, packed along K, or along M (lhs) / N (rhs) with k_pack=False),
 * e4m3 and e5m2 (fp8 dtypes or their uint8 bits), bf16 and fp16; Triton
 * 3.6 refuses the fp6 formats too. Everything is built from existing ops,
 * so codegen and the interpreter run it unchanged. */
#include <math.h>
#include <string.h>

#include "sema/spec.h"

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

enum { MX_GROUP = 32 };

typedef enum { MX_E2M1, MX_E4M3, MX_E5M2, MX_BF16, MX_FP16, MX_BAD } MxFormat;

static const char *const mx_names[] = {"e2m1", "e4m3", "e5m2", "bf16", "fp16"};

static MxFormat mx_format(SVal v)
{
    const char *const *names = mx_names;
    for (int i = 0; v.k == SV_STR && i < TK_ARRAY_LEN(mx_names); i++)
        if (!strcmp(v.s, names[i]))
            return (MxFormat)i;
    return MX_BAD;
}

static IrValue *call_tl(Sema *s, const char *name, SVal *args, int n, Span at)
{
    Span sp[4] = {at, at, at, at};
    CallArgs ca = {.pos = args, .pos_at = sp, .npos = n, .at = at};
    SVal r = sema_call_builtin(s, "tl", name, (SVal){.k = SV_VOID}, &ca);
    return r.k == SV_TENSOR ? r.v : NULL;
}

static IrValue *bin(Sema *s, int op, IrValue *a, SVal b, Span at)
{
    bool cmp = op == OP_EQ || op == OP_NE || op == OP_LT;
    SVal r = !a ? bad()
        : cmp   ? sema_compare(s, op, sv_tensor(a), b, at)
                : sema_binary(s, op, sv_tensor(a), b, at);
    return r.k == SV_TENSOR ? r.v : NULL;
}

static IrValue *select3(Sema *s, IrValue *c, SVal x, SVal y, Span at)
{
    SVal args[3] = {sv_tensor(c), x, y};
    return c ? call_tl(s, "where", args, 3, at) : NULL;
}

/* The e2m1 nibble at bit lo of byte w (sign, 2 exponent bits, 1 mantissa
 * bit: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives) as fp32. Its three
 * magnitude bits placed at fp32's bits 22-24 read as that value times
 * 2^-126 (0.5 is the subnormal 2^-127), so one exact multiply by 2^126
 * finishes the decode with no select; the sign bit moves to bit 31. */
static IrValue *e2m1_value(Sema *s, IrValue *w, int lo, Span at)
{
    IrValue *mag =
        bin(s, OP_LSHIFT, bin(s, OP_BITAND, w, sv_int(7 << lo), at), sv_int(22 - lo), at);
    IrValue *sign =
        bin(s, OP_LSHIFT, bin(s, OP_BITAND, w, sv_int(8 << lo), at), sv_int(28 - lo), at);
    IrValue *all = mag && sign ? bin(s, OP_BITOR, mag, sv_tensor(sign), at) : NULL;
    IrValue *f = all ? sema_bitcast(s, all, DT_F32, at) : NULL;
    return f ? bin(s, OP_MUL, f, sv_float(0x1p126), at) : NULL;
}

/* x with its last two dims swapped, at any rank. */
static IrValue *swap_last(Sema *s, IrValue *x, Span at)
{
    int n = x->type.rank;
    SVal order[TK_MAX_RANK];
    for (int i = 0; i < n; i++)
        order[i] = sv_int(i < n - 2 ? i : i == n - 2 ? n - 1 : n - 2);
    SVal pa[2] = {sv_tensor(x), sv_tuple(s, order, n)};
    return call_tl(s, "permute", pa, 2, at);
}

/* x's shape with dim d multiplied by f. */
static IrValue *reshape_grown(Sema *s, IrValue *v, const Type *like, int d, int f, Span at)
{
    int shape[TK_MAX_RANK];
    for (int i = 0; i < like->rank; i++)
        shape[i] = like->shape[i] * (i == d ? f : 1);
    return v ? sema_reshape(s, v, like->rank, shape, at) : NULL;
}

/* Two values per byte along the last dim (last) or the one before, the
 * low nibble first: (.., R, C) -> (.., R, 2C) or (.., 2R, C). */
static IrValue *unpack_e2m1(Sema *s, IrValue *x, bool last, Span at)
{
    IrValue *u = x->type.dt == DT_U8 ? x : sema_bitcast(s, x, DT_U8, at);
    IrValue *w = u ? sema_cast(s, u, DT_I32, at) : NULL;
    IrValue *lo = w ? e2m1_value(s, w, 0, at) : NULL;
    IrValue *hi = w ? e2m1_value(s, w, 4, at) : NULL;
    SVal jn[2] = {sv_tensor(lo), sv_tensor(hi)};
    IrValue *j = lo && hi ? call_tl(s, "join", jn, 2, at) : NULL; /* (.., R, C, 2) */
    if (!j)
        return NULL;
    int n = x->type.rank;
    if (last)
        return reshape_grown(s, j, &x->type, n - 1, 2, at);
    return reshape_grown(s, swap_last(s, j, at), &x->type, n - 2, 2, at); /* (.., R, 2, C) */
}

/* The operand's values as fp32, before scaling, or in ct where they are
 * in ct already and no scale follows (a bf16 lhs goes in as it is, where
 * a round trip through fp32 took registers and two conversions per pair).
 * An e2m1 operand packed along K unpacks along its K dim (lhs last, rhs the one before); with
 * k_pack=False along the other one, M or N, as Triton's Fp4ToFp on that
 * axis. */
static IrValue *decode(Sema *s, IrValue *x, MxFormat f, bool rhs, bool k_pack, bool scaled,
                       DType ct, Span at)
{
    if (f == MX_E2M1)
        return unpack_e2m1(s, x, rhs != k_pack, at);
    if (f != MX_E2M1) { /* uint bits of the format, as Triton bitcasts them */
        static const DType fmt_dt[] = {DT_VOID, DT_F8E4, DT_F8E5, DT_BF16, DT_F16};
        if (x->type.dt != fmt_dt[f])
            x = sema_bitcast(s, x, fmt_dt[f], at);
    }
    if (x && x->type.dt == ct && !scaled)
        return x;
    return x ? sema_cast(s, x, DT_F32, at) : NULL;
}

/* e8m0 scales (.., R, K/32) as fp32 2^(s-127) spread to (.., R, K); 255
 * is NaN unless fast_math, as in Triton. */
static IrValue *spread_scale(Sema *s, IrValue *sc, bool fast_math, Span at)
{
    IrValue *u = sc->type.dt == DT_U8 ? sc : sema_bitcast(s, sc, DT_U8, at);
    IrValue *w = u ? sema_cast(s, u, DT_I32, at) : NULL;
    IrValue *bits = bin(s, OP_LSHIFT, w, sv_int(23), at);
    IrValue *f = bits ? sema_bitcast(s, bits, DT_F32, at) : NULL;
    if (f && !fast_math)
        f = select3(s, bin(s, OP_EQ, w, sv_int(255), at), sv_float(NAN), sv_tensor(f), at);
    if (!f)
        return NULL;
    int n = sc->type.rank, wide[TK_MAX_RANK];
    memcpy(wide, sc->type.shape, sizeof(int) * n);
    wide[n] = MX_GROUP;
    IrValue *e = sema_expand_dims(s, f, n, at);
    IrValue *b = e ? sema_broadcast(s, e, n + 1, wide, at) : NULL;
    return reshape_grown(s, b, &sc->type, n - 1, MX_GROUP, at);
}

static bool check_operand(Sema *s, IrValue *x, MxFormat f, Span at, const char *side)
{
    if (x->type.rank != 2 && x->type.rank != 3) {
        sema_err(s, at, "tl.dot_scaled needs a 2-D or 3-D (batched) %s, got %s", side,
                 sema_type_str(s, x->type));
        return false;
    }
    DType dt = x->type.dt;
    bool ok = f == MX_E2M1 ? dt == DT_U8 || dt == DT_I8
        : f == MX_BF16     ? dt == DT_BF16 || dt == DT_U16
        : f == MX_FP16     ? dt == DT_F16 || dt == DT_U16
        : f == MX_E4M3     ? dt == DT_F8E4 || dt == DT_U8 || dt == DT_I8
                           : dt == DT_F8E5 || dt == DT_U8 || dt == DT_I8;
    if (!ok)
        sema_err(s, at,
                 "tl.dot_scaled: a %s of %s cannot hold format '%s' (e2m1: uint8 pairs; "
                 "e4m3/e5m2: fp8 or uint8 bits; bf16, fp16: themselves or uint16 bits)",
                 side, sema_type_str(s, x->type), mx_names[f]);
    return ok;
}

/* The scale of a decoded operand d: (.., M, K/32) for the lhs, (.., N,
 * K/32) for the rhs (Triton takes both with K last), 8-bit integers. */
static bool check_scale(Sema *s, IrValue *sc, const Type *d, bool rhs, int k, Span at)
{
    int n = d->rank, want[TK_MAX_RANK];
    memcpy(want, d->shape, sizeof(int) * n);
    want[n - 2] = d->shape[rhs ? n - 1 : n - 2];
    want[n - 1] = k / MX_GROUP;
    bool ok = k % MX_GROUP == 0 && sc->type.rank == n && dtype_is_int(sc->type.dt) &&
        dtype_bits(sc->type.dt) == 8 && !memcmp(sc->type.shape, want, sizeof(int) * n);
    if (!ok) {
        Type wt = type_block(DT_U8, n, want);
        sema_err(s, at,
                 "tl.dot_scaled: the %s scale must be %s e8m0 exponents (one per %d "
                 "elements along K = %d), got %s",
                 rhs ? "rhs" : "lhs", sema_type_str(s, wt), MX_GROUP, k,
                 sema_type_str(s, sc->type));
    }
    return ok;
}

/* One operand decoded, scaled and in the compute dtype; k its K. */
static IrValue *operand(Sema *s, SVal v, SVal scale, MxFormat f, bool rhs, bool k_pack,
                        bool fast_math, DType ct, Span at, Span sc_at, int *k)
{
    const char *side = rhs ? "rhs" : "lhs";
    IrValue *x = sema_to_tensor(s, v, at);
    if (!x || !check_operand(s, x, f, at, side))
        return NULL;
    /* an e2m1 rhs packed along K is decoded as its transpose, K last, the
     * way the lhs is: its nibble pairs join and its scales spread along the
     * last dim, in each thread's registers, and the finished bf16 tile is
     * transposed back in registers (the layout pass' trans_follows), so
     * only the packed bytes (read from their shared ring) and that tile (to
     * the dot's operand) cross threads, where the decoded values (K along
     * the rows) and the spread scales crossed as fp32 tiles */
    bool flip = rhs && f == MX_E2M1 && k_pack;
    if (flip && !(x = swap_last(s, x, at)))
        return NULL;
    IrValue *d = decode(s, x, f, rhs && !flip, k_pack, sv_has(scale), ct, at);
    if (!d)
        return NULL;
    int n = d->type.rank;
    Type kn = d->type; /* the operand's shape, K before N for the rhs */
    if (flip)
        kn.shape[n - 2] = d->type.shape[n - 1], kn.shape[n - 1] = d->type.shape[n - 2];
    *k = kn.shape[rhs ? n - 2 : n - 1];
    if (sv_has(scale)) {
        IrValue *sc = sema_to_tensor(s, scale, sc_at);
        if (!sc || !check_scale(s, sc, &kn, rhs, *k, sc_at))
            return NULL;
        IrValue *sp = spread_scale(s, sc, fast_math, sc_at);
        if (sp && rhs && !flip)
            sp = swap_last(s, sp, sc_at);
        d = sp ? bin(s, OP_MUL, d, sv_tensor(sp), at) : NULL;
    }
    d = d ? sema_cast(s, d, ct, at) : NULL;
    return d && flip ? swap_last(s, d, at) : d;
}

/* A format tk does not take. fp6 (e2m3, e3m2) is named on its own:
 * Triton 3.6's dot_scaled refuses it too ("NYI"), on every target. */
static SVal bad_format(Sema *s, SVal v, Span at)
{
    if (v.k == SV_STR && (!strcmp(v.s, "e2m3") || !strcmp(v.s, "e3m2")))
        return sema_err(s, at,
                        "tl.dot_scaled: the fp6 format '%s' is not supported, as in Triton 3.6, "
                        "whose dot_scaled takes only 'e2m1', 'e4m3', 'e5m2', 'bf16' and 'fp16'",
                        v.s);
    return sema_err(s, at,
                    "tl.dot_scaled: format must be 'e2m1', 'e4m3', 'e5m2', 'bf16' or 'fp16', "
                    "got %s",
                    sv_describe(s, v));
}

/* dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format,
 * acc=None, fast_math=False, lhs_k_pack=True, rhs_k_pack=True,
 * out_dtype=tl.float32) */
static SVal b_dot_scaled(Sema *s, const Builtin *b, SVal *a, Span *at, Span call_at)
{
    TK_UNUSED(b);
    MxFormat lf = mx_format(a[2]), rf = mx_format(a[5]);
    if (lf == MX_BAD || rf == MX_BAD)
        return bad_format(s, a[lf == MX_BAD ? 2 : 5], at[lf == MX_BAD ? 2 : 5]);
    bool fast = false, lpack = true, rpack = true;
    if ((sv_has(a[7]) && !sema_truth(s, a[7], at[7], &fast)) ||
        (sv_has(a[8]) && !sema_truth(s, a[8], at[8], &lpack)) ||
        (sv_has(a[9]) && !sema_truth(s, a[9], at[9], &rpack)))
        return bad();
    if ((!lpack && lf != MX_E2M1) || (!rpack && rf != MX_E2M1)) {
        bool l = !lpack && lf != MX_E2M1;
        return sema_err(s, at[l ? 8 : 9],
                        "tl.dot_scaled: only e2m1 operands may be packed along M or N "
                        "(%s_k_pack=False); the %s is '%s', one value per element",
                        l ? "lhs" : "rhs", l ? "lhs" : "rhs", mx_names[l ? lf : rf]);
    }
    DType ct = lf == MX_FP16 || rf == MX_FP16 ? DT_F16 : DT_BF16;
    int kl, kr;
    IrValue *l = operand(s, a[0], a[1], lf, false, lpack, fast, ct, at[0], at[1], &kl);
    IrValue *r = l ? operand(s, a[3], a[4], rf, true, rpack, fast, ct, at[3], at[4], &kr) : NULL;
    if (!r)
        return bad();
    if (l->type.rank != r->type.rank)
        return sema_err(s, call_at,
                        "tl.dot_scaled: lhs and rhs must both be 2-D or both 3-D, got %s and %s",
                        sema_type_str(s, l->type), sema_type_str(s, r->type));
    if (kl != kr)
        return sema_err(s, call_at, "tl.dot_scaled: K differs: %d (lhs) and %d (rhs)", kl, kr);
    return sema_dot(s, l, r, a[6], (SVal){.k = SV_VOID}, (SVal){.k = SV_VOID}, a[10], call_at);
}

static const Builtin dot_scaled_items[] = {
    {"dot_scaled",
     "lhs,lhs_scale,lhs_format,rhs,rhs_scale,rhs_format,acc=,fast_math=,lhs_k_pack=,rhs_k_pack=,"
     "out_dtype=",
     b_dot_scaled, 0, false},
};
const BuiltinTable sema_tl_dot_scaled = {dot_scaled_items, TK_ARRAY_LEN(dot_scaled_items)};
