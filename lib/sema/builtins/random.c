/* sema/builtins/random.c: tl.swizzle2d and the Philox-4x32/4x64 generator behind
 * tl.rand/randn/randint/randint4x/rand4x/randn4x (and tl.philox and its
 * rounds tl.philox_impl and helpers uint_to_uniform_float and
 * pair_uniform_to_normal), expanded into ordinary IR arithmetic
 * (umulhi, xor, mul) with the standard Philox constants and Triton's
 * defaults (10 rounds; the seed's halves as the key; offsets as counter 0),
 * so the streams match Triton's and codegen needs nothing special. */
#include <string.h>

#include "sema/spec.h"

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

/* The round multipliers and key increments of Philox, by counter width
 * (Triton's: the 64-bit ones for 64-bit counters). */
typedef struct PhiloxConsts {
    uint64_t round_a, round_b, key_a, key_b;
} PhiloxConsts;
static const PhiloxConsts philox32 = {0xD2511F53u, 0xCD9E8D57u, 0x9E3779B9u, 0xBB67AE85u};
static const PhiloxConsts philox64 = {0xD2E7470EE14C6C93ull, 0xCA5A826395121157ull,
                                      0x9E3779B97F4A7C15ull, 0xBB67AE8584CAA73Bull};

/* A u64 constant as a constexpr int (above INT64_MAX: its bits, big). */
static SVal sv_u64(uint64_t v)
{
    SVal r = sv_int((int64_t)v);
    r.big = v > (uint64_t)INT64_MAX;
    return r;
}

static SVal tl_call(Sema *s, const char *name, SVal x, SVal y, Span at)
{
    SVal args[2] = {x, y};
    Span sp[2] = {at, at};
    CallArgs ca = {.pos = args, .pos_at = sp, .npos = y.k == SV_VOID ? 1 : 2, .at = at};
    return sema_call_builtin(s, "tl", name, (SVal){.k = SV_VOID}, &ca);
}

static SVal bin(Sema *s, int op, SVal a, SVal b, Span at) { return sema_binary(s, op, a, b, at); }

/* Triton's grouping: programs walk size_g rows of a column before moving on. */
SVal sema_swizzle2d(Sema *s, SVal i, SVal j, SVal si, SVal sj, SVal sg, Span at)
{
    SVal ij = bin(s, OP_ADD, bin(s, OP_MUL, i, sj, at), j, at);
    SVal size_gj = bin(s, OP_MUL, sg, sj, at);
    SVal group = bin(s, OP_FLOORDIV, ij, size_gj, at);
    SVal off_i = bin(s, OP_MUL, group, sg, at);
    SVal rows = bin(s, OP_SUB, si, off_i, at);
    SVal g = sv_is_num(rows) && sv_is_num(sg) ? (rows.i < sg.i ? rows : sg)
                                              : tl_call(s, "minimum", rows, sg, at);
    SVal in_group = bin(s, OP_MOD, ij, size_gj, at);
    SVal new_i = bin(s, OP_ADD, off_i, bin(s, OP_MOD, in_group, g, at), at);
    SVal new_j = bin(s, OP_FLOORDIV, in_group, g, at);
    if (new_i.k == SV_UNDEF || new_j.k == SV_UNDEF)
        return bad();
    SVal r[2] = {new_i, new_j};
    return sv_tuple(s, r, 2);
}

static SVal b_swizzle2d(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(b), TK_UNUSED(at);
    return sema_swizzle2d(s, a[0], a[1], a[2], a[3], a[4], call);
}

/* ---- Philox ------------------------------------------------------------------------ */

static SVal as(Sema *s, SVal v, DType dt, bool bitcast, Span at)
{
    if (v.k != SV_TENSOR)
        return v;
    return sv_tensor(bitcast ? sema_bitcast(s, v.v, dt, at) : sema_cast(s, v.v, dt, at));
}

/* n rounds on four counters c and the key (k0, k1), all of one width. */
static bool philox_rounds(Sema *s, SVal *c, SVal k0, SVal k1, int bits, int64_t rounds, Span at)
{
    const PhiloxConsts *pc = bits == 32 ? &philox32 : &philox64;
    SVal A = sv_u64(pc->round_a), B = sv_u64(pc->round_b);
    for (int64_t r = 0; r < rounds; r++) {
        SVal c0 = c[0], c2 = c[2];
        c[0] =
            bin(s, OP_BITXOR, bin(s, OP_BITXOR, tl_call(s, "umulhi", B, c2, at), c[1], at), k0, at);
        c[2] =
            bin(s, OP_BITXOR, bin(s, OP_BITXOR, tl_call(s, "umulhi", A, c0, at), c[3], at), k1, at);
        c[1] = bin(s, OP_MUL, B, c2, at);
        c[3] = bin(s, OP_MUL, A, c0, at);
        k0 = bin(s, OP_ADD, k0, sv_u64(pc->key_a), at);
        k1 = bin(s, OP_ADD, k1, sv_u64(pc->key_b), at);
        for (int i = 0; i < 4; i++)
            if (c[i].k != SV_TENSOR)
                return false;
    }
    return true;
}

/* Four 32- or 64-bit counters -> four random words of the same width. */
static bool philox(Sema *s, SVal seed, SVal *c, int64_t rounds, Span at)
{
    IrValue *sd = sema_to_tensor(s, seed, at);
    if (!sd)
        return false;
    if (!dtype_is_int(sd->type.dt)) {
        sema_err(s, at, "the seed must be an integer, got %s", sema_type_str(s, sd->type));
        return false;
    }
    SVal seed64 = sv_tensor(sema_cast(s, sd, DT_U64, at));
    int bits = dtype_bits(c[0].v->type.dt);
    DType it = bits == 32 ? DT_U32 : DT_U64;
    SVal k0, k1;
    if (bits == 32) {
        SVal hi =
            bin(s, OP_BITAND, bin(s, OP_RSHIFT, seed64, sv_int(32), at), sv_int(0xffffffff), at);
        SVal lo = bin(s, OP_BITAND, seed64, sv_int(0xffffffff), at);
        k1 = as(s, hi, DT_U32, false, at);
        k0 = as(s, lo, DT_U32, false, at);
    } else if (bits == 64) {
        k0 = seed64;
        k1 = sv_tensor(sema_const(s, type_scalar(DT_U64), sv_int(0), at));
    } else {
        sema_err(s, at, "random offsets must be 32- or 64-bit integers, got %s",
                 sema_type_str(s, c[0].v->type));
        return false;
    }
    for (int i = 0; i < 4; i++)
        c[i] = as(s, c[i], it, true, at);
    return philox_rounds(s, c, k0, k1, bits, rounds, at);
}

/* Signed reinterpretation folded to [0, 2^(n-1)) and scaled below 1.0. */
static SVal to_uniform(Sema *s, SVal x, Span at)
{
    bool b32 = dtype_bits(x.v->type.dt) == 32;
    x = as(s, x, b32 ? DT_I32 : DT_I64, true, at);
    SVal scale = sv_float(b32 ? 4.6566127342e-10 : 1.0842020432385337e-19);
    SVal neg = sema_compare(s, OP_LT, x, sv_int(0), at);
    SVal flip = bin(s, OP_SUB, sema_unary(s, OP_NEG, x, at), sv_int(1), at);
    SVal args[3] = {neg, flip, x};
    Span sp[3] = {at, at, at};
    CallArgs ca = {.pos = args, .pos_at = sp, .npos = 3, .at = at};
    x = sema_call_builtin(s, "tl", "where", (SVal){.k = SV_VOID}, &ca);
    return bin(s, OP_MUL, x, scale, at);
}

/* Box-Muller: two uniforms in [0, 1) to two standard normals, the first
 * clamped away from 0 as Triton does so log stays finite. */
static void box_muller(Sema *s, SVal u1, SVal u2, SVal *n1, SVal *n2, Span at)
{
    SVal none = {.k = SV_VOID};
    u1 = tl_call(s, "maximum", sv_float(1.0e-7), u1, at);
    SVal th = bin(s, OP_MUL, sv_float(6.283185307179586), u2, at);
    SVal lg = tl_call(s, "log", u1, none, at);
    SVal r = tl_call(s, "sqrt", bin(s, OP_MUL, sv_float(-2.0), lg, at), none, at);
    *n1 = bin(s, OP_MUL, r, tl_call(s, "cos", th, none, at), at);
    *n2 = bin(s, OP_MUL, r, tl_call(s, "sin", th, none, at), at);
}

SVal sema_rand(Sema *s, const char *name, SVal seed, SVal offset, SVal rounds, Span at)
{
    int64_t n = 10;
    if (sv_has(rounds) && !sema_const_int(s, rounds, at, "n_rounds", &n))
        return bad();
    if (n < 1 || n > 64)
        return sema_err(s, at, "n_rounds must be between 1 and 64, got %lld", (long long)n);
    IrValue *off = sema_to_tensor(s, offset, at);
    if (!off)
        return bad();
    if (!dtype_is_int(off->type.dt) || off->type.dt == DT_I1)
        return sema_err(s, at, "tl.%s offsets must be integers, got %s", name,
                        sema_type_str(s, off->type));
    /* Triton's randint4x: 32-bit counters, a 64-bit offset split into its low
     * and high words, so offsets below 2**32 give the int32 stream */
    bool wide = dtype_bits(off->type.dt) > 32;
    SVal lo = wide ? sv_tensor(sema_cast(s, off, DT_U32, at)) : sv_tensor(off);
    SVal zero = bin(s, OP_MUL, lo, sv_int(0), at), hi = zero;
    if (wide)
        hi = sv_tensor(
            sema_cast(s, bin(s, OP_RSHIFT, sv_tensor(off), sv_int(32), at).v, DT_U32, at));
    SVal c[4] = {lo, hi, zero, zero};
    if (zero.k != SV_TENSOR || !philox(s, seed, c, n, at))
        return bad();
    if (!strcmp(name, "randint"))
        return c[0];
    if (!strcmp(name, "randint4x"))
        return sv_tuple(s, c, 4);
    if (!strcmp(name, "rand"))
        return to_uniform(s, c[0], at);
    SVal u[4];
    for (int i = 0; i < 4; i++)
        u[i] = to_uniform(s, c[i], at);
    if (!strcmp(name, "rand4x"))
        return sv_tuple(s, u, 4);
    SVal z[4];
    box_muller(s, u[0], u[1], &z[0], &z[1], at);
    if (!strcmp(name, "randn"))
        return z[0];
    box_muller(s, u[2], u[3], &z[2], &z[3], at);
    return sv_tuple(s, z, 4); /* randn4x */
}

static SVal b_rand(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    TK_UNUSED(at);
    return sema_rand(s, b->name, a[0], a[1], a[2], call);
}

/* tl.philox(seed, c0, c1, c2, c3, n_rounds=): the generator itself on four
 * counter blocks of one width (32 or 64 bits), giving four words. */
static SVal b_philox(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    int64_t n = 10;
    if (sv_has(a[5]) && !sema_const_int(s, a[5], at[5], "n_rounds", &n))
        return bad();
    if (n < 1 || n > 64)
        return sema_err(s, at[5], "n_rounds must be between 1 and 64, got %lld", (long long)n);
    SVal c[4] = {{.k = SV_VOID}, {.k = SV_VOID}, {.k = SV_VOID}, {.k = SV_VOID}};
    for (int i = 0; i < 4; i++) {
        IrValue *v = sema_arg_tensor(s, a[1 + i], at[1 + i], b, "a counter");
        if (!v)
            return bad();
        if (!dtype_is_int(v->type.dt) || v->type.dt == DT_I1 ||
            dtype_bits(v->type.dt) !=
                dtype_bits(c[0].k == SV_TENSOR ? c[0].v->type.dt : v->type.dt))
            return sema_err(s, at[1 + i],
                            "tl.philox counters must be integers of one width (32 "
                            "or 64 bits), got %s",
                            sema_type_str(s, v->type));
        c[i] = sv_tensor(v);
    }
    if (!philox(s, a[0], c, n, call))
        return bad();
    return sv_tuple(s, c, 4);
}

/* tl.philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=10): the rounds alone,
 * on uint32 or uint64 counters and key of one dtype, as Triton requires. */
static SVal b_philox_impl(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    int64_t n = 10;
    if (sv_has(a[6]) && !sema_const_int(s, a[6], at[6], "n_rounds", &n))
        return bad();
    if (n < 0 || n > 64)
        return sema_err(s, at[6], "n_rounds must be between 0 and 64, got %lld", (long long)n);
    SVal v[6];
    DType dt = DT_VOID;
    for (int i = 0; i < 6; i++) {
        IrValue *x = sema_arg_tensor(s, a[i], at[i], b, i < 4 ? "a counter" : "a key");
        if (!x)
            return bad();
        if (dt == DT_VOID)
            dt = x->type.dt;
        if ((x->type.dt != DT_U32 && x->type.dt != DT_U64) || x->type.dt != dt)
            return sema_err(s, at[i],
                            "tl.philox_impl needs counters and key all uint32 or all "
                            "uint64, got %s",
                            sema_type_str(s, x->type));
        v[i] = sv_tensor(x);
    }
    if (!philox_rounds(s, v, v[4], v[5], dt == DT_U32 ? 32 : 64, n, call))
        return bad();
    return sv_tuple(s, v, 4);
}

static SVal b_uint_to_uniform(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    IrValue *x = sema_arg_tensor(s, a[0], at[0], b, "the input");
    if (!x)
        return bad();
    int bits = dtype_bits(x->type.dt);
    if (!dtype_is_int(x->type.dt) || (bits != 32 && bits != 64))
        return sema_err(s, at[0], "tl.uint_to_uniform_float needs 32- or 64-bit integers, got %s",
                        sema_type_str(s, x->type));
    return to_uniform(s, sv_tensor(x), call);
}

static SVal b_pair_to_normal(Sema *s, const Builtin *b, SVal *a, Span *at, Span call)
{
    for (int i = 0; i < 2; i++) {
        IrValue *u = sema_arg_tensor(s, a[i], at[i], b, "a uniform");
        if (!u)
            return bad();
        if (!dtype_is_float(u->type.dt) || dtype_is_fp8(u->type.dt))
            return sema_err(s, at[i], "tl.pair_uniform_to_normal needs floats, got %s",
                            sema_type_str(s, u->type));
    }
    SVal n[2];
    box_muller(s, a[0], a[1], &n[0], &n[1], call);
    if (n[0].k == SV_UNDEF || n[1].k == SV_UNDEF)
        return bad();
    return sv_tuple(s, n, 2);
}

static const Builtin random_items[] = {
    {"philox", "seed,c0,c1,c2,c3,n_rounds=", b_philox, 0, false},
    {"philox_impl", "c0,c1,c2,c3,k0,k1,n_rounds=", b_philox_impl, 0, false},
    {"uint_to_uniform_float", "x", b_uint_to_uniform, 0, false},
    {"pair_uniform_to_normal", "u1,u2", b_pair_to_normal, 0, false},
    {"rand4x", "seed,offsets,n_rounds=", b_rand, 0, false},
    {"randn4x", "seed,offset,n_rounds=", b_rand, 0, false},
    {"swizzle2d", "i,j,size_i,size_j,size_g", b_swizzle2d, 0, false},
    {"rand", "seed,offset,n_rounds=", b_rand, 0, false},
    {"randn", "seed,offset,n_rounds=", b_rand, 0, false},
    {"randint", "seed,offset,n_rounds=", b_rand, 0, false},
    {"randint4x", "seed,offset,n_rounds=", b_rand, 0, false},
};

const BuiltinTable sema_tl_random = {random_items, TK_ARRAY_LEN(random_items)};
