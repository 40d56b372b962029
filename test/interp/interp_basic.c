/* interp_basic.c: the reference interpreter on IR built by hand: number
 * formats and casts, integer division rules, a masked vector add (with and
 * without threads), bounds errors, reductions, scans, dot, loops,
 * device_print and device_assert. */
#include "interp/internal.h"
#include "interp/internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
static const char *src_text = "line one\n    x = tl.load(p + offs)\n    tl.store(q, x)\n"
                              "    tl.device_assert(x > 0, 'positive')\n";
static Source src = {"k.tk", NULL, 0};
static Span at(int line) { return (Span){line, 5, line, 9, 0}; }

typedef struct K {
    Arena a;
    IrFunc *f;
    IrBuilder b;
} K;

static void k_init(K *k, const char *name)
{
    arena_init(&k->a);
    src.text = src_text;
    src.len = strlen(src_text);
    k->f = ir_func_new(&k->a, name, &src);
    k->b = (IrBuilder){k->f, k->f->body, NULL};
}

static Type vec(DType dt, int n) { return type_block(dt, 1, (int[]){n}); }
static Type mat(DType dt, int m, int n) { return type_block(dt, 2, (int[]){m, n}); }
static Type pvec(DType elem, int n) { return type_with_shape(type_ptr(elem), 1, (int[]){n}); }

static IrValue *op(K *k, IrKind kind, int line, Type t, int nops, IrValue *a, IrValue *b,
                   IrValue *c)
{
    IrValue *ops[3] = {a, b, c};
    return ir_build(&k->b, kind, at(line), ops, nops, &t, 1)->results[0];
}

static IrValue *arange(K *k, int n)
{
    IrOp *o = ir_build(&k->b, IR_ARANGE, at(1), NULL, 0, (Type[]){vec(DT_I32, n)}, 1);
    o->ival2 = n;
    return o->results[0];
}

static IrValue *cmp(K *k, int pred, IrValue *a, IrValue *b, Type t)
{
    IrValue *r = op(k, IR_CMP, 1, t, 2, a, b, NULL);
    r->def->sub = pred;
    return r;
}

static bool run(K *k, unsigned gx, InterpArg *args, InterpBuffer *bufs, int nbufs, int threads,
                Diag *d, StrBuf *out)
{
    unsigned grid[3] = {gx, 1, 1};
    InterpMemory mem = {bufs, nbufs};
    diag_init(d, &src);
    return interp_launch(k->f, grid, args, &mem, threads, d, out);
}

/* ---- number formats ------------------------------------------------------------- */

static void test_formats(void)
{
    CHECK(interp_float_to_f16(1.0f / 3.0f) == 0x3555);
    CHECK(interp_float_to_f16(65504.0f) == 0x7bff);
    CHECK(interp_float_to_f16(65519.0f) == 0x7bff);
    CHECK(interp_float_to_f16(65520.0f) == 0x7c00);
    CHECK(interp_float_to_f16(0x1p-25f) == 0);        /* tie to even: 0 */
    CHECK(interp_float_to_f16(0x1.8p-24f) == 0x0002); /* 1.5 units: tie to even 2 */
    CHECK(interp_float_to_f16(-0x1p-14f) == 0x8400);
    CHECK(interp_float_to_f16(1.0f + 0x1p-11f) == 0x3c00); /* tie to even down */
    CHECK(interp_float_to_f16(1.0f + 0x1.8p-10f) == 0x3c02);
    CHECK(interp_f16_to_float(0x0001) == 0x1p-24f);
    CHECK(isnan(interp_f16_to_float(interp_float_to_f16(NAN))));
    CHECK(interp_float_to_bf16(1.0f + 0x1p-8f) == 0x3f80);   /* tie to even down */
    CHECK(interp_float_to_bf16(1.0f + 0x1.8p-7f) == 0x3f82); /* tie to even up */
    CHECK(interp_bf16_to_float(0x3f81) == 1.0f + 0x1p-7f);
    CHECK(interp_round_tf32(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);             /* ties away */
    CHECK(interp_round_to(DT_F16, 1.0 + 0x1p-11 + 0x1p-40) == 1.0 + 0x1p-10); /* one rounding */
    CHECK(interp_round_to(DT_F16, 70000.0) == INFINITY);

    float f[6] = {NAN, 1e10f, -1e10f, 300.7f, -5.5f, 2.9f};
    int64_t r[6];
    interp_cast(DT_F32, f, DT_I32, r, 6);
    CHECK(r[0] == 0 && r[1] == INT32_MAX && r[2] == INT32_MIN && r[3] == 300 && r[4] == -5);
    interp_cast(DT_F32, f, DT_U8, r, 6);
    /* 8-bit: the low byte of the 16-bit conversion, as the GPU's (300.7: 44) */
    CHECK(r[0] == 0 && r[1] == 255 && r[2] == 0 && r[3] == 44 && r[4] == 0 && r[5] == 2);
    int64_t iv[3] = {300, -1, 0};
    interp_cast(DT_I32, iv, DT_U8, r, 3);
    CHECK(r[0] == 44 && r[1] == 255 && r[2] == 0);
    interp_cast(DT_I32, iv, DT_I1, r, 3);
    CHECK(r[0] == 1 && r[1] == 1 && r[2] == 0);
    int64_t big = (int64_t)UINT64_MAX;
    float fb;
    interp_cast(DT_U64, &big, DT_F32, &fb, 1);
    CHECK(fb == 0x1p64f);
}

/* ---- integer arithmetic ------------------------------------------------------------- */

static void test_int_ops(void)
{
    K k;
    k_init(&k, "ints");
    Type t = vec(DT_I32, 4);
    IrValue *out = ir_add_param(k.f, "out", type_ptr(DT_I32), 1, at(1));
    IrValue *a = ir_add_param(k.f, "a", type_ptr(DT_I32), 1, at(1));
    IrValue *i = arange(&k, 4);
    IrValue *pa = op(&k, IR_ADDPTR, 1, pvec(DT_I32, 4), 2,
                     op(&k, IR_SPLAT, 1, pvec(DT_I32, 4), 1, a, 0, 0), i, 0);
    IrValue *x = op(&k, IR_LOAD, 1, t, 1, pa, 0, 0);
    IrValue *pb =
        op(&k, IR_ADDPTR, 1, pvec(DT_I32, 4), 2, pa, op(&k, IR_CONST, 1, t, 0, 0, 0, 0), 0);
    pb->def->operands[1]->def->ival = 4;
    IrValue *y = op(&k, IR_LOAD, 1, t, 1, pb, 0, 0);
    IrKind kinds[4] = {IR_DIV, IR_REM, IR_ADD, IR_SHR};
    IrValue *po = op(&k, IR_SPLAT, 1, pvec(DT_I32, 4), 1, out, 0, 0);
    for (int j = 0; j < 4; j++) {
        IrValue *r = op(&k, kinds[j], 1, t, 2, x, y, 0);
        IrValue *c = op(&k, IR_CONST, 1, t, 0, 0, 0, 0);
        c->def->ival = 4 * j;
        IrValue *p =
            op(&k, IR_ADDPTR, 1, pvec(DT_I32, 4), 2, po, op(&k, IR_ADD, 1, t, 2, i, c, 0), 0);
        ir_build(&k.b, IR_STORE, at(3), (IrValue *[]){p, r}, 2, NULL, 0);
    }
    int32_t in[8] = {-7, 5, INT32_MAX, -8, 2, 0, 1, 40};
    int32_t res[16];
    InterpBuffer bufs[2] = {{"out", (unsigned char *)res, sizeof res},
                            {"a", (unsigned char *)in, sizeof in}};
    InterpArg args[2] = {{.p = res}, {.p = in}};
    Diag d;
    CHECK(run(&k, 1, args, bufs, 2, 1, &d, NULL));
    CHECK(res[0] == -3 && res[1] == -1 && res[2] == INT32_MAX && res[3] == 0);   /* // */
    CHECK(res[4] == -1 && res[5] == 5 && res[6] == 0 && res[7] == -8);           /* % */
    CHECK(res[8] == -5 && res[9] == 5 && res[10] == INT32_MIN && res[11] == 32); /* + wraps */
    CHECK(res[12] == -2 && res[13] == 5 && res[14] == INT32_MAX / 2 &&
          res[15] == -1); /* >> clamps */
    diag_free(&d);
    arena_free(&k.a);
}

/* umulhi on u32 needs the full 64-bit unsigned product (Philox relies on it). */
static void test_umulhi(void)
{
    K k;
    k_init(&k, "mulhi");
    IrValue *o = ir_add_param(k.f, "out", type_ptr(DT_U32), 1, at(1));
    Type u32 = type_scalar(DT_U32);
    IrValue *a = ir_const_int(&k.b, at(1), u32, 0xFFFFFFFFll);
    IrValue *b = ir_const_int(&k.b, at(1), u32, 0xD2511F53ll);
    IrValue *hi = op(&k, IR_UMULHI, 1, u32, 2, a, b, 0);
    ir_build(&k.b, IR_STORE, at(3), (IrValue *[]){o, hi}, 2, NULL, 0);
    uint32_t out = 0;
    InterpBuffer bufs[1] = {{"out", (unsigned char *)&out, sizeof out}};
    InterpArg args[1] = {{.p = &out}};
    Diag d;
    CHECK(run(&k, 1, args, bufs, 1, 1, &d, NULL));
    CHECK(out == (uint32_t)((0xFFFFFFFFull * 0xD2511F53ull) >> 32));
    diag_free(&d);
    arena_free(&k.a);
}

/* ---- vector add: masks, bounds, threads ------------------------------------------ */

/* out[i] = x[i] + y[i]; masked by i < n unless `unmasked`. */
static void build_vadd(K *k, int block, bool unmasked)
{
    k_init(k, "vadd");
    IrValue *x = ir_add_param(k->f, "x", type_ptr(DT_F32), 16, at(1));
    IrValue *y = ir_add_param(k->f, "y", type_ptr(DT_F32), 16, at(1));
    IrValue *o = ir_add_param(k->f, "out", type_ptr(DT_F32), 16, at(1));
    IrValue *n = ir_add_param(k->f, "n", type_scalar(DT_I32), 1, at(1));
    Type vi = vec(DT_I32, block), vp = pvec(DT_F32, block), vf = vec(DT_F32, block);
    IrValue *pid = op(k, IR_PROGRAM_ID, 1, type_scalar(DT_I32), 0, 0, 0, 0);
    IrValue *bs = ir_const_int(&k->b, at(1), type_scalar(DT_I32), block);
    IrValue *start = op(k, IR_MUL, 1, type_scalar(DT_I32), 2, pid, bs, 0);
    IrValue *offs =
        op(k, IR_ADD, 1, vi, 2, op(k, IR_SPLAT, 1, vi, 1, start, 0, 0), arange(k, block), 0);
    IrValue *mask = unmasked
        ? NULL
        : cmp(k, CMP_LT, offs, op(k, IR_SPLAT, 1, vi, 1, n, 0, 0), vec(DT_I1, block));
    IrValue *px = op(k, IR_ADDPTR, 1, vp, 2, op(k, IR_SPLAT, 1, vp, 1, x, 0, 0), offs, 0);
    IrValue *py = op(k, IR_ADDPTR, 1, vp, 2, op(k, IR_SPLAT, 1, vp, 1, y, 0, 0), offs, 0);
    IrValue *po = op(k, IR_ADDPTR, 1, vp, 2, op(k, IR_SPLAT, 1, vp, 1, o, 0, 0), offs, 0);
    IrValue *a = op(k, IR_LOAD, 2, vf, mask ? 2 : 1, px, mask, 0);
    IrValue *b = op(k, IR_LOAD, 2, vf, mask ? 2 : 1, py, mask, 0);
    IrValue *s = op(k, IR_ADD, 1, vf, 2, a, b, 0);
    ir_build(&k->b, IR_STORE, at(3), (IrValue *[]){po, s, mask}, mask ? 3 : 2, NULL, 0);
}

static void test_vadd(int threads)
{
    enum { N = 1000 };
    static float x[N], y[N], out[N + 24];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = 1000.0f - (float)i;
    }
    memset(out, 0xAB, sizeof out);
    K k;
    build_vadd(&k, 64, false);
    InterpBuffer bufs[3] = {{"x", (unsigned char *)x, sizeof x},
                            {"y", (unsigned char *)y, sizeof y},
                            {"out", (unsigned char *)out, sizeof out}};
    InterpArg args[4] = {{.p = x}, {.p = y}, {.p = out}, {.i = N}};
    Diag d;
    CHECK(run(&k, (N + 63) / 64, args, bufs, 3, threads, &d, NULL)); /* masked lanes past x: fine */
    CHECK(d.errors == 0);
    bool same = true;
    for (int i = 0; i < N; i++)
        same &= out[i] == x[i] + y[i];
    CHECK(same);
    uint32_t poison;
    memcpy(&poison, &out[N], 4);
    CHECK(poison == 0xABABABABu); /* masked-off lanes store nothing */
    diag_free(&d);
    arena_free(&k.a);
}

static void test_out_of_bounds(int threads)
{
    enum { N = 100 };
    static float x[N], y[N], out[N];
    K k;
    build_vadd(&k, 32, true);
    InterpBuffer bufs[3] = {{NULL, (unsigned char *)x, sizeof x},
                            {NULL, (unsigned char *)y, sizeof y},
                            {NULL, (unsigned char *)out, sizeof out}};
    InterpArg args[4] = {{.p = x}, {.p = y}, {.p = out}, {.i = N}};
    Diag d;
    CHECK(!run(&k, 4, args, bufs, 3, threads, &d, NULL));
    char want[256];
    snprintf(
        want, sizeof want,
        "k.tk:2:5: error: out-of-bounds load in kernel 'vadd', program (3, 0, 0), element (4): "
        "address %p is 0 bytes after the end of buffer 'x' (400 bytes at %p)",
        (void *)(x + N), (void *)x);
    CHECK(d.errors == 1 && d.text.data && strstr(d.text.data, want) == d.text.data);
    if (!d.text.data || !strstr(d.text.data, want))
        fprintf(stderr, "got:  %s\nwant: %s\n", d.text.data ? d.text.data : "", want);
    diag_free(&d);
    arena_free(&k.a);
}

/* A pointer at the very top of the address space, where address + size
 * wraps to 0, is still described as lying after the buffer. */
static void test_top_of_memory(void)
{
    static float x[4], y[4], out[4];
    K k;
    build_vadd(&k, 4, true);
    InterpBuffer bufs[3] = {{"x", (unsigned char *)x, sizeof x},
                            {"y", (unsigned char *)y, sizeof y},
                            {"out", (unsigned char *)out, sizeof out}};
    InterpArg args[4] = {{.u = UINT64_MAX - 3}, {.p = y}, {.p = out}, {.i = 4}};
    Diag d;
    CHECK(!run(&k, 1, args, bufs, 3, 1, &d, NULL));
    CHECK(d.text.data && strstr(d.text.data, "element (0): address 0xfffffffffffffffc is "));
    /* the nearest buffer is the one that ends highest */
    const char *top = (uintptr_t)out > (uintptr_t)x && (uintptr_t)out > (uintptr_t)y ? "'out'"
        : (uintptr_t)y > (uintptr_t)x                                                ? "'y'"
                                                                                     : "'x'";
    char want[64];
    snprintf(want, sizeof want, "bytes after the end of buffer %s", top);
    CHECK(d.text.data && strstr(d.text.data, want));
    if (!d.text.data || !strstr(d.text.data, want))
        fprintf(stderr, "got: %s\n", d.text.data ? d.text.data : "");
    diag_free(&d);
    arena_free(&k.a);
}

/* ---- reductions, scans, dot ------------------------------------------------------------ */

static IrValue *reduce(K *k, int kind, IrValue *x, int axis, Type t)
{
    IrValue *r = op(k, IR_REDUCE, 1, t, 1, x, 0, 0);
    r->def->sub = kind;
    r->def->axis = axis;
    return r;
}

static void test_reduce_dot(void)
{
    K k;
    k_init(&k, "red");
    IrValue *xp = ir_add_param(k.f, "x", type_ptr(DT_F32), 1, at(1));
    IrValue *op_ = ir_add_param(k.f, "out", type_ptr(DT_F32), 1, at(1));
    /* x as a 4x8 block: rows r, cols c at r*8 + c */
    IrValue *i32 = arange(&k, 32);
    IrValue *flat = op(&k, IR_LOAD, 1, vec(DT_F32, 32), 1,
                       op(&k, IR_ADDPTR, 1, pvec(DT_F32, 32), 2,
                          op(&k, IR_SPLAT, 1, pvec(DT_F32, 32), 1, xp, 0, 0), i32, 0),
                       0, 0);
    IrValue *m = op(&k, IR_RESHAPE, 1, mat(DT_F32, 4, 8), 1, flat, 0, 0);
    IrValue *rs = reduce(&k, RED_SUM, m, 1, vec(DT_F32, 4));
    IrValue *cm = reduce(&k, RED_MAX, m, 0, vec(DT_F32, 8));
    IrValue *am = reduce(&k, RED_ARGMAX, m, 1, vec(DT_I32, 4));
    IrValue *cs = op(&k, IR_SCAN, 1, vec(DT_F32, 32), 1, flat, 0, 0);
    /* dot: (4x8) @ (8x4 = first 8x4 of x reshaped) + 1 */
    IrValue *b = op(&k, IR_RESHAPE, 1, mat(DT_F32, 8, 4), 1, flat, 0, 0);
    IrValue *one = op(&k, IR_CONST, 1, mat(DT_F32, 4, 4), 0, 0, 0, 0);
    one->def->fval = 1.0;
    IrValue *dt = op(&k, IR_DOT, 1, mat(DT_F32, 4, 4), 3, m, b, one);
    dt->def->sub = DOT_IEEE;
    IrValue *results[5] = {rs, cm, op(&k, IR_CAST, 1, vec(DT_F32, 4), 1, am, 0, 0), cs,
                           op(&k, IR_RESHAPE, 1, vec(DT_F32, 16), 1, dt, 0, 0)};
    int base = 0;
    for (int j = 0; j < 5; j++) {
        int n = (int)type_numel(results[j]->type);
        IrValue *c = ir_const_int(&k.b, at(1), type_scalar(DT_I32), base);
        IrValue *p = op(&k, IR_ADDPTR, 1, type_ptr(DT_F32), 2, op_, c, 0);
        IrValue *pv = op(&k, IR_ADDPTR, 1, pvec(DT_F32, n), 2,
                         op(&k, IR_SPLAT, 1, pvec(DT_F32, n), 1, p, 0, 0), arange(&k, n), 0);
        ir_build(&k.b, IR_STORE, at(3), (IrValue *[]){pv, results[j]}, 2, NULL, 0);
        base += n;
    }
    float x[32], out[64];
    for (int i = 0; i < 32; i++)
        x[i] = (float)((i * 7) % 5);
    InterpBuffer bufs[2] = {{"x", (unsigned char *)x, sizeof x},
                            {"out", (unsigned char *)out, sizeof out}};
    InterpArg args[2] = {{.p = x}, {.p = out}};
    Diag d;
    CHECK(run(&k, 1, args, bufs, 2, 1, &d, NULL));
    if (d.errors)
        fprintf(stderr, "%s", d.text.data);
    bool ok = true;
    for (int r = 0; r < 4; r++) {
        float s = 0, best = x[r * 8];
        int arg = 0;
        for (int c = 0; c < 8; c++) {
            s += x[r * 8 + c];
            if (x[r * 8 + c] > best)
                best = x[r * 8 + c], arg = c;
        }
        ok &= out[r] == s && out[12 + r] == (float)arg;
    }
    for (int c = 0; c < 8; c++) {
        float best = x[c];
        for (int r = 1; r < 4; r++)
            best = fmaxf(best, x[r * 8 + c]);
        ok &= out[4 + c] == best;
    }
    float run_sum = 0;
    for (int i = 0; i < 32; i++) {
        run_sum += x[i];
        ok &= out[16 + i] == run_sum;
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            float s = 1;
            for (int q = 0; q < 8; q++)
                s += x[i * 8 + q] * x[q * 4 + j];
            ok &= out[48 + i * 4 + j] == s;
        }
    CHECK(ok);
    diag_free(&d);
    arena_free(&k.a);
}

/* argmax as a left-to-right scan: a NaN at index 0 wins, later NaNs never;
 * max skips NaN like fmax. Rows: [1, NaN, 3, 3] and [NaN, 5, 1, 5]. */
static void test_nan_argmax(void)
{
    K k;
    k_init(&k, "nanarg");
    IrValue *xp = ir_add_param(k.f, "x", type_ptr(DT_F32), 1, at(1));
    IrValue *op_ = ir_add_param(k.f, "out", type_ptr(DT_F32), 1, at(1));
    IrValue *i8 = arange(&k, 8);
    IrValue *x = op(&k, IR_LOAD, 1, vec(DT_F32, 8), 1,
                    op(&k, IR_ADDPTR, 1, pvec(DT_F32, 8), 2,
                       op(&k, IR_SPLAT, 1, pvec(DT_F32, 8), 1, xp, 0, 0), i8, 0),
                    0, 0);
    IrValue *m = op(&k, IR_RESHAPE, 1, mat(DT_F32, 2, 4), 1, x, 0, 0);
    IrValue *am =
        op(&k, IR_CAST, 1, vec(DT_F32, 2), 1, reduce(&k, RED_ARGMAX, m, 1, vec(DT_I32, 2)), 0, 0);
    IrValue *mx = reduce(&k, RED_MAX, m, 1, vec(DT_F32, 2));
    IrValue *i2 = arange(&k, 2);
    IrValue *po = op(&k, IR_SPLAT, 1, pvec(DT_F32, 2), 1, op_, 0, 0);
    IrValue *p0 = op(&k, IR_ADDPTR, 1, pvec(DT_F32, 2), 2, po, i2, 0);
    IrValue *two = op(&k, IR_CONST, 1, vec(DT_I32, 2), 0, 0, 0, 0);
    two->def->ival = 2;
    IrValue *p1 = op(&k, IR_ADDPTR, 1, pvec(DT_F32, 2), 2, p0, two, 0);
    ir_build(&k.b, IR_STORE, at(3), (IrValue *[]){p0, am}, 2, NULL, 0);
    ir_build(&k.b, IR_STORE, at(3), (IrValue *[]){p1, mx}, 2, NULL, 0);
    float in[8] = {1, NAN, 3, 3, NAN, 5, 1, 5}, out[4];
    InterpBuffer bufs[2] = {{"x", (unsigned char *)in, sizeof in},
                            {"out", (unsigned char *)out, sizeof out}};
    InterpArg args[2] = {{.p = in}, {.p = out}};
    Diag d;
    CHECK(run(&k, 1, args, bufs, 2, 1, &d, NULL));
    CHECK(out[0] == 2 && out[1] == 0 && out[2] == 3 && out[3] == 5);
    diag_free(&d);
    arena_free(&k.a);
}

/* IR_EXTERN: libdevice names through C math, the directed-rounding
 * division, the inverse error functions, and an unknown name. */
static float run_extern(const char *name, int nargs, float a, float b, Diag *d)
{
    K k;
    k_init(&k, "ext");
    IrValue *ap = ir_add_param(k.f, "a", type_ptr(DT_F32), 1, at(1));
    IrValue *op_ = ir_add_param(k.f, "out", type_ptr(DT_F32), 1, at(1));
    Type f32 = type_scalar(DT_F32);
    IrValue *x = op(&k, IR_LOAD, 1, f32, 1, ap, 0, 0);
    IrValue *y = op(&k, IR_LOAD, 1, f32, 1,
                    op(&k, IR_ADDPTR, 1, type_ptr(DT_F32), 2, ap,
                       ir_const_int(&k.b, at(1), type_scalar(DT_I32), 1), 0),
                    0, 0);
    IrValue *r = op(&k, IR_EXTERN, 2, f32, nargs, x, y, 0);
    r->def->str = name;
    ir_build(&k.b, IR_STORE, at(3), (IrValue *[]){op_, r}, 2, NULL, 0);
    float in[2] = {a, b}, out = NAN;
    InterpBuffer bufs[2] = {{"a", (unsigned char *)in, sizeof in},
                            {"out", (unsigned char *)&out, sizeof out}};
    InterpArg args[2] = {{.p = in}, {.p = &out}};
    run(&k, 1, args, bufs, 2, 1, d, NULL);
    arena_free(&k.a);
    return out;
}

static void test_libdevice(void)
{
    Diag d;
    float third = 1.0f / 3.0f; /* rounded up: 0x3eaaaaab */
    CHECK(run_extern("__nv_fdiv_rn", 2, 1, 3, &d) == third);
    diag_free(&d);
    CHECK(run_extern("__nv_fdiv_rz", 2, 1, 3, &d) == nextafterf(third, 0));
    diag_free(&d);
    CHECK(run_extern("__nv_fdiv_rd", 2, -1, 3, &d) == -third);
    diag_free(&d);
    CHECK(run_extern("__nv_fdiv_ru", 2, 1, 3, &d) == third);
    diag_free(&d);
    /* sqrt(2) in fp32 rounds down (1.41421354 < 1.41421356) */
    CHECK(run_extern("__nv_fsqrt_rz", 1, 2, 0, &d) == sqrtf(2));
    diag_free(&d);
    CHECK(run_extern("__nv_fsqrt_ru", 1, 2, 0, &d) == nextafterf(sqrtf(2), 2));
    diag_free(&d);
    CHECK(run_extern("__nv_tanhf", 1, 0.5f, 0, &d) == (float)tanh(0.5));
    diag_free(&d);
    CHECK(run_extern("__nv_powf", 2, 2, 10, &d) == 1024.0f);
    diag_free(&d);
    CHECK(fabsf(run_extern("__nv_erfinvf", 1, (float)erf(0.5), 0, &d) - 0.5f) < 1e-6f);
    diag_free(&d);
    CHECK(fabsf(run_extern("__nv_erfcinvf", 1, (float)erfc(3.0), 0, &d) - 3.0f) < 1e-5f);
    diag_free(&d);
    CHECK(fabsf(run_extern("__nv_normcdfinvf", 1, 0.975f, 0, &d) - 1.959964f) < 1e-5f);
    diag_free(&d);
    CHECK(run_extern("__nv_fast_expf", 1, 1, 0, &d) == (float)exp(1.0));
    diag_free(&d);
    CHECK(isnan(run_extern("__nv_frobnicatef", 1, 1, 0, &d)));
    CHECK(d.text.data &&
          strstr(d.text.data,
                 "error: the interpreter does not know the libdevice function '__nv_frobnicatef'"));
    diag_free(&d);
}

/* ---- loops, print, assert ------------------------------------------------------------------ */

static void test_loops_print_assert(void)
{
    K k;
    k_init(&k, "loops");
    IrValue *o = ir_add_param(k.f, "out", type_ptr(DT_I32), 1, at(1));
    Type i32 = type_scalar(DT_I32);
    /* for i in range(0, 10, 3): acc += i  -> 0+3+6+9 = 18 */
    IrValue *lb = ir_const_int(&k.b, at(1), i32, 0), *ub = ir_const_int(&k.b, at(1), i32, 10);
    IrValue *st = ir_const_int(&k.b, at(1), i32, 3), *z = ir_const_int(&k.b, at(1), i32, 0);
    IrOp *loop = ir_build(&k.b, IR_FOR, at(1), (IrValue *[]){lb, ub, st, z}, 4, &i32, 1);
    IrBlock *body = ir_op_add_region(k.f, loop);
    IrValue *iv = ir_block_add_arg(k.f, body, i32, "i");
    IrValue *acc = ir_block_add_arg(k.f, body, i32, "acc");
    IrBuilder outer = k.b;
    k.b = (IrBuilder){k.f, body, NULL};
    IrValue *next = op(&k, IR_ADD, 1, i32, 2, acc, iv, 0);
    ir_build(&k.b, IR_YIELD, at(1), &next, 1, NULL, 0);
    k.b = outer;
    /* while v < 100: v *= 2, from 3 -> 192 */
    IrValue *three = ir_const_int(&k.b, at(1), i32, 3);
    IrOp *wh = ir_build(&k.b, IR_WHILE, at(1), &three, 1, &i32, 1);
    IrBlock *before = ir_op_add_region(k.f, wh), *after = ir_op_add_region(k.f, wh);
    IrValue *v = ir_block_add_arg(k.f, before, i32, "v");
    k.b = (IrBuilder){k.f, before, NULL};
    IrValue *c = cmp(&k, CMP_LT, v, ir_const_int(&k.b, at(1), i32, 100), type_scalar(DT_I1));
    ir_build(&k.b, IR_CONDITION, at(1), (IrValue *[]){c, v}, 2, NULL, 0);
    IrValue *w = ir_block_add_arg(k.f, after, i32, "w");
    k.b = (IrBuilder){k.f, after, NULL};
    IrValue *dbl = op(&k, IR_MUL, 1, i32, 2, w, ir_const_int(&k.b, at(1), i32, 2), 0);
    ir_build(&k.b, IR_YIELD, at(1), &dbl, 1, NULL, 0);
    k.b = outer;
    IrValue *pid = op(&k, IR_PROGRAM_ID, 1, i32, 0, 0, 0, 0);
    IrValue *p0 = op(&k, IR_ADDPTR, 1, type_ptr(DT_I32), 2, o,
                     op(&k, IR_MUL, 1, i32, 2, pid, ir_const_int(&k.b, at(1), i32, 2), 0), 0);
    IrValue *p1 =
        op(&k, IR_ADDPTR, 1, type_ptr(DT_I32), 2, p0, ir_const_int(&k.b, at(1), i32, 1), 0);
    ir_build(&k.b, IR_STORE, at(3), (IrValue *[]){p0, loop->results[0]}, 2, NULL, 0);
    ir_build(&k.b, IR_STORE, at(3), (IrValue *[]){p1, wh->results[0]}, 2, NULL, 0);
    IrValue *ar = arange(&k, 2);
    IrOp *pr = ir_build(&k.b, IR_PRINT, at(1), &ar, 1, NULL, 0);
    pr->str = " ar: "; /* as sema gives Triton's prefix */
    /* assert arange(0, 2) < 1 + pid fails in program 0 at element 1 */
    IrValue *lim = op(&k, IR_SPLAT, 1, vec(DT_I32, 2), 1,
                      op(&k, IR_ADD, 1, i32, 2, pid, ir_const_int(&k.b, at(1), i32, 1), 0), 0, 0);
    IrValue *ok = cmp(&k, CMP_LT, ar, lim, vec(DT_I1, 2));
    IrOp *as = ir_build(&k.b, IR_ASSERT, at(4), &ok, 1, NULL, 0);
    as->str = "positive";

    int32_t out[4] = {0};
    InterpBuffer bufs[1] = {{"out", (unsigned char *)out, sizeof out}};
    InterpArg args[1] = {{.p = out}};
    Diag d;
    StrBuf text;
    sb_init(&text);
    CHECK(!run(&k, 2, args, bufs, 1, 4, &d, &text));
    CHECK(out[0] == 18 && out[1] == 192);
    CHECK(text.data &&
          !strcmp(text.data, "pid (0, 0, 0) idx (0) ar: 0\npid (0, 0, 0) idx (1) ar: 1\n"));
    const char *want =
        "k.tk:4:5: error: device assertion failed in kernel 'loops', program (0, 0, 0), "
        "element (1): positive";
    CHECK(d.text.data && strstr(d.text.data, want) == d.text.data);
    if (!d.text.data || !strstr(d.text.data, want))
        fprintf(stderr, "got: %s\n", d.text.data ? d.text.data : "");
    sb_free(&text);
    diag_free(&d);
    arena_free(&k.a);
}

/* Grids with more programs than a long can index, or than the default step
 * budget, are refused before any program runs. */
static void test_grid_limits(void)
{
    static float x[4], y[4], out[4];
    K k;
    build_vadd(&k, 4, false);
    InterpBuffer bufs[3] = {{"x", (unsigned char *)x, sizeof x},
                            {"y", (unsigned char *)y, sizeof y},
                            {"out", (unsigned char *)out, sizeof out}};
    InterpArg args[4] = {{.p = x}, {.p = y}, {.p = out}, {.i = 4}};
    InterpMemory mem = {bufs, 3};
    struct {
        unsigned g[3];
        const char *want;
    } cases[] = {
        {{UINT_MAX, UINT_MAX, UINT_MAX}, "more programs than the interpreter can count"},
        {{UINT_MAX, UINT_MAX, 2}, "more programs than the interpreter can count"},
        {{65536, 65536, 65536},
         "has 281474976710656 programs, more than the interpreter's "
         "budget of 1073741824 steps"},
    };
    for (int i = 0; i < TK_ARRAY_LEN(cases); i++) {
        Diag d;
        diag_init(&d, &src);
        CHECK(!interp_launch(k.f, cases[i].g, args, &mem, 2, &d, NULL));
        CHECK(d.text.data && strstr(d.text.data, cases[i].want));
        if (!d.text.data || !strstr(d.text.data, cases[i].want))
            fprintf(stderr, "got: %s\n", d.text.data ? d.text.data : "");
        diag_free(&d);
    }
    arena_free(&k.a);
}

/* IR not from sema may carry blocks of any shape: a value whose bytes do
 * not fit in size_t, or more than the host has, is refused before any
 * program runs (it used to wrap to a tiny workspace and overrun it). */
static void test_huge_values(void)
{
    int shapes[][3] = {{INT_MAX, INT_MAX, INT_MAX}, {1 << 20, 1 << 20, 1 << 20}};
    for (int i = 0; i < TK_ARRAY_LEN(shapes); i++) {
        K k;
        k_init(&k, "huge");
        Type big = type_block(DT_F32, 3, shapes[i]);
        IrValue *one = ir_const_int(&k.b, at(2), type_scalar(DT_F32), 1);
        op(&k, IR_SPLAT, 2, big, 1, one, 0, 0);
        Diag d;
        CHECK(!run(&k, 1, NULL, NULL, 0, 1, &d, NULL));
        const char *want = "kernel 'huge' needs more interpreter workspace than this host has";
        CHECK(d.text.data && strstr(d.text.data, want));
        if (!d.text.data || !strstr(d.text.data, want))
            fprintf(stderr, "got: %s\n", d.text.data ? d.text.data : "");
        diag_free(&d);
        arena_free(&k.a);
    }
}

/* A broken IR invariant is an internal error, not a user error. */
static void test_internal_error(void)
{
    K k;
    k_init(&k, "broken");
    Type i32 = type_scalar(DT_I32);
    IrValue *c = ir_const_int(&k.b, at(2), i32, 1);
    ir_build(&k.b, IR_FOR, at(2), (IrValue *[]){c, c, c}, 3, NULL, 0); /* no body region */
    Diag d;
    CHECK(!run(&k, 1, NULL, NULL, 0, 1, &d, NULL));
    CHECK(d.text.data &&
          strstr(d.text.data, "k.tk:2:5: internal error: malformed for loop") == d.text.data);
    diag_free(&d);
    arena_free(&k.a);
}

int main(void)
{
    test_formats();
    test_int_ops();
    test_umulhi();
    test_vadd(1);
    test_vadd(4);
    test_out_of_bounds(1);
    test_out_of_bounds(3);
    test_top_of_memory();
    test_reduce_dot();
    test_nan_argmax();
    test_libdevice();
    test_loops_print_assert();
    test_internal_error();
    test_grid_limits();
    test_huge_values();
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("interp_basic: all checks passed\n");
    return 0;
}
