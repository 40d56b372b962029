/* cg_test.h: helpers for building kernels by hand in the code generation
 * tests (cg_build.c, cg_gpu.c); not a test itself. */
#ifndef TK_CG_TEST_H
#define TK_CG_TEST_H

#include "codegen/codegen.h"
#include "passes/passes.h"

#include <stdio.h>
#include <string.h>

static const Span SP = {1, 1, 1, 2, 0};

static inline Type vec(DType dt, int n) { return type_block(dt, 1, (int[]){n}); }
static inline Type mat(DType dt, int m, int n) { return type_block(dt, 2, (int[]){m, n}); }
static inline Type pvec(DType elem, int rank, const int *shape)
{
    return type_with_shape(type_ptr(elem), rank, shape);
}

static inline IrValue *op1(IrBuilder *b, IrKind k, IrValue *x, Type t, int sub)
{
    IrValue *r = ir_unary(b, k, SP, x, t);
    r->def->sub = sub;
    return r;
}
static inline IrValue *op2(IrBuilder *b, IrKind k, IrValue *x, IrValue *y, Type t)
{
    return ir_binary(b, k, SP, x, y, t);
}
static inline IrValue *opn(IrBuilder *b, IrKind k, IrValue **ops, int n, Type t)
{
    return ir_build(b, k, SP, ops, n, &t, 1)->results[0];
}
static inline IrValue *ci(IrBuilder *b, Type t, int64_t v) { return ir_const_int(b, SP, t, v); }
static inline IrValue *cf(IrBuilder *b, Type t, double v) { return ir_const_float(b, SP, t, v); }
static inline IrValue *arange(IrBuilder *b, int n)
{
    IrOp *op = ir_build(b, IR_ARANGE, SP, NULL, 0, (Type[]){vec(DT_I32, n)}, 1);
    op->ival = 0;
    op->ival2 = n;
    return op->results[0];
}
static inline IrValue *splat(IrBuilder *b, IrValue *x, Type t) { return op1(b, IR_SPLAT, x, t, 0); }
static inline IrValue *cmp(IrBuilder *b, int pred, IrValue *x, IrValue *y)
{
    IrValue *r =
        op2(b, IR_CMP, x, y, type_with_shape(type_scalar(DT_I1), x->type.rank, x->type.shape));
    r->def->sub = pred;
    return r;
}
static inline IrValue *load(IrBuilder *b, IrValue *p, IrValue *mask, IrValue *other)
{
    IrValue *ops[3] = {p, mask, other};
    Type t = type_with_shape(type_scalar(p->type.elem), p->type.rank, p->type.shape);
    return opn(b, IR_LOAD, ops, 3, t);
}
static inline IrOp *store(IrBuilder *b, IrValue *p, IrValue *v, IrValue *mask)
{
    IrValue *ops[3] = {p, v, mask};
    return ir_build(b, IR_STORE, SP, ops, 3, NULL, 0);
}
static inline IrValue *addptr(IrBuilder *b, IrValue *p, IrValue *off)
{
    return op2(b, IR_ADDPTR, p, off, p->type);
}
static inline IrValue *reduce(IrBuilder *b, IrValue *x, int axis, int kind, DType rdt)
{
    Type t = x->type;
    int shape[TK_MAX_RANK], r = 0;
    for (int i = 0; i < t.rank; i++)
        if (i != axis)
            shape[r++] = t.shape[i];
    Type rt = type_block(rdt, r, shape);
    IrOp *op = ir_build(b, IR_REDUCE, SP, &x, 1, &rt, 1);
    op->axis = axis;
    op->sub = kind;
    return op->results[0];
}

/* offs = pid * N + arange(N); mask = offs < n */
static inline IrValue *offsets(IrBuilder *b, int n, IrValue *limit, IrValue **mask)
{
    IrValue *pid = op1(b, IR_PROGRAM_ID, NULL, type_scalar(DT_I32), 0);
    pid->def->nops = 0;
    IrValue *base = op2(b, IR_MUL, pid, ci(b, type_scalar(DT_I32), n), type_scalar(DT_I32));
    IrValue *offs = op2(b, IR_ADD, splat(b, base, vec(DT_I32, n)), arange(b, n), vec(DT_I32, n));
    if (mask)
        *mask = cmp(b, CMP_LT, offs, splat(b, limit, vec(DT_I32, n)));
    return offs;
}


static inline IrFunc *new_kernel(Arena *a, const char *name, IrBuilder *b)
{
    IrFunc *f = ir_func_new(a, name, NULL);
    *b = (IrBuilder){f, f->body, NULL};
    return f;
}

typedef struct Want {
    const char *s[8];
    int n;
} Want;

static inline IrFunc *k_vector_add(Arena *a, int ndiv, Want *w)
{
    IrBuilder b;
    IrFunc *f = new_kernel(a, ndiv == 16 ? "vector_add_n16" : "vector_add", &b);
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), 16, SP);
    IrValue *y = ir_add_param(f, "y", type_ptr(DT_F32), 16, SP);
    IrValue *o = ir_add_param(f, "out", type_ptr(DT_F32), 16, SP);
    IrValue *n = ir_add_param(f, "n", type_scalar(DT_I32), ndiv, SP);
    IrValue *mask;
    IrValue *offs = offsets(&b, 1024, n, &mask);
    Type pt = pvec(DT_F32, 1, (int[]){1024});
    IrValue *va = load(&b, addptr(&b, splat(&b, x, pt), offs), mask, NULL);
    IrValue *vb = load(&b, addptr(&b, splat(&b, y, pt), offs), mask, NULL);
    store(&b, addptr(&b, splat(&b, o, pt), offs), op2(&b, IR_ADD, va, vb, va->type), mask);
    /* n % 16 == 0 makes the mask constant over 16-byte runs: vector accesses */
    if (ndiv == 16)
        *w = (Want){{"%ctaid.x", "@%p", "ld.global.v4.b32", "st.global.v4.b32"}, 4};
    else
        *w = (Want){{"%ctaid.x", "@%p", "ld.global.b32", "st.global.b32", ".maxntid 128"}, 5};
    return f;
}

/* softmax of one row of 1024: max, exp, sum, divide. */
static inline IrFunc *k_softmax(Arena *a, int n, int warps, Want *w)
{
    IrBuilder b;
    char name[64];
    snprintf(name, sizeof name, "softmax_%d_w%d", n, warps);
    IrFunc *f = new_kernel(a, name, &b);
    f->num_warps = warps;
    IrValue *o = ir_add_param(f, "out", type_ptr(DT_F32), 16, SP);
    IrValue *x = ir_add_param(f, "in", type_ptr(DT_F32), 16, SP);
    IrValue *stride = ir_add_param(f, "stride", type_scalar(DT_I32), 1, SP);
    IrValue *cols = ir_add_param(f, "n_cols", type_scalar(DT_I32), 1, SP);
    Type ft = vec(DT_F32, n), pt = pvec(DT_F32, 1, (int[]){n});
    IrValue *pid = op1(&b, IR_PROGRAM_ID, NULL, type_scalar(DT_I32), 0);
    pid->def->nops = 0;
    IrValue *roff = op2(&b, IR_MUL, pid, stride, pid->type);
    o = addptr(&b, o, roff);
    x = addptr(&b, x, roff);
    IrValue *ar = arange(&b, n);
    IrValue *live = cmp(&b, CMP_LT, ar, splat(&b, cols, vec(DT_I32, n)));
    IrValue *v = load(&b, addptr(&b, splat(&b, x, pt), ar), live,
                      splat(&b, cf(&b, type_scalar(DT_F32), -1.0 / 0.0), ft));
    IrValue *mx = reduce(&b, v, 0, RED_MAX, DT_F32);
    IrValue *sh = op2(&b, IR_SUB, v, splat(&b, mx, ft), ft);
    IrValue *e = op1(&b, IR_MATH, sh, ft, MATH_EXP);
    IrValue *sum = reduce(&b, e, 0, RED_SUM, DT_F32);
    IrValue *y = op2(&b, IR_DIV, e, splat(&b, sum, ft), ft);
    store(&b, addptr(&b, splat(&b, o, pt), ar), y, live);
    /* rows that fit in a warp need no shared memory */
    *w = (Want){{"shfl.sync.bfly", "ex2.approx", "bar.sync", "st.shared", "ld.shared"},
                n > 4 * 32 ? 5 : 2};
    return f;
}

/* 2-D tile: row max, row argmax, column sums with atomics (row_argmax.tk). */
static inline IrFunc *k_rows(Arena *a, Want *w)
{
    IrBuilder b;
    IrFunc *f = new_kernel(a, "row_stats", &b);
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), 16, SP);
    IrValue *mxp = ir_add_param(f, "mx", type_ptr(DT_F32), 16, SP);
    IrValue *argp = ir_add_param(f, "arg", type_ptr(DT_I32), 16, SP);
    IrValue *colp = ir_add_param(f, "col", type_ptr(DT_F32), 16, SP);
    IrValue *stride = ir_add_param(f, "stride", type_scalar(DT_I32), 1, SP);
    enum { R = 16, C = 64 };
    IrValue *rows = arange(&b, R), *cols = arange(&b, C);
    Type r1 = mat(DT_I32, R, 1), c1 = mat(DT_I32, 1, C), rc = mat(DT_I32, R, C);
    IrValue *re = op1(&b, IR_EXPAND_DIMS, rows, r1, 0);
    re->def->axis = 1;
    IrValue *ce = op1(&b, IR_EXPAND_DIMS, cols, c1, 0);
    ce->def->axis = 0;
    IrValue *rs = op2(&b, IR_MUL, re, splat(&b, stride, r1), r1);
    IrValue *off =
        op2(&b, IR_ADD, op1(&b, IR_BROADCAST, rs, rc, 0), op1(&b, IR_BROADCAST, ce, rc, 0), rc);
    IrValue *v =
        load(&b, addptr(&b, splat(&b, x, pvec(DT_F32, 2, (int[]){R, C})), off), NULL, NULL);
    IrValue *mx = reduce(&b, v, 1, RED_MAX, DT_F32);
    IrValue *am = reduce(&b, v, 1, RED_ARGMAX, DT_I32);
    store(&b, addptr(&b, splat(&b, mxp, pvec(DT_F32, 1, (int[]){R})), rows), mx, NULL);
    store(&b, addptr(&b, splat(&b, argp, pvec(DT_I32, 1, (int[]){R})), rows), am, NULL);
    IrValue *cs = reduce(&b, v, 0, RED_SUM, DT_F32);
    IrValue *ops[3] = {addptr(&b, splat(&b, colp, pvec(DT_F32, 1, (int[]){C})), cols), cs,
                       cmp(&b, CMP_LT, cols, splat(&b, stride, vec(DT_I32, C)))};
    IrOp *at = ir_build(&b, IR_ATOMIC_RMW, SP, ops, 3, (Type[]){vec(DT_F32, C)}, 1);
    at->sub = ATOM_ADD;
    *w = (Want){{"shfl.sync.bfly", "atom.", "bar.sync"}, 3};
    return f;
}

/* for with a carried block, while, if (layernorm-like accumulation). */
static inline IrFunc *k_flow(Arena *a, Want *w)
{
    IrBuilder b;
    IrFunc *f = new_kernel(a, "flow", &b);
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), 16, SP);
    IrValue *o = ir_add_param(f, "o", type_ptr(DT_F32), 16, SP);
    IrValue *n = ir_add_param(f, "n", type_scalar(DT_I32), 1, SP);
    Type ft = vec(DT_F32, 256), it = vec(DT_I32, 256), pt = pvec(DT_F32, 1, (int[]){256});
    Type i32 = type_scalar(DT_I32);
    IrValue *zero = cf(&b, ft, 0.0);
    IrValue *fops[4] = {ci(&b, i32, 0), n, ci(&b, i32, 256), zero};
    IrOp *fo = ir_build(&b, IR_FOR, SP, fops, 4, &ft, 1);
    IrBlock *body = ir_op_add_region(f, fo);
    IrValue *iv = ir_block_add_arg(f, body, i32, "i");
    IrValue *acc = ir_block_add_arg(f, body, ft, "acc");
    IrBuilder bb = {f, body, NULL};
    IrValue *cols = op2(&bb, IR_ADD, splat(&bb, iv, it), arange(&bb, 256), it);
    IrValue *m = cmp(&bb, CMP_LT, cols, splat(&bb, n, it));
    IrValue *v = load(&bb, addptr(&bb, splat(&bb, x, pt), cols), m, cf(&bb, ft, 0.0));
    IrValue *nacc = op2(&bb, IR_ADD, acc, v, ft);
    ir_build(&bb, IR_YIELD, SP, &nacc, 1, NULL, 0);
    IrValue *total = reduce(&b, fo->results[0], 0, RED_SUM, DT_F32);
    /* while (t > 1) t = t / 2 */
    Type f32 = type_scalar(DT_F32);
    IrOp *wo = ir_build(&b, IR_WHILE, SP, &total, 1, &f32, 1);
    IrBlock *bef = ir_op_add_region(f, wo), *aft = ir_op_add_region(f, wo);
    IrValue *t0 = ir_block_add_arg(f, bef, f32, "t");
    IrBuilder wb = {f, bef, NULL};
    IrValue *c = cmp(&wb, CMP_GT, t0, cf(&wb, f32, 1.0));
    IrValue *cops[2] = {c, t0};
    ir_build(&wb, IR_CONDITION, SP, cops, 2, NULL, 0);
    IrValue *t1 = ir_block_add_arg(f, aft, f32, "t");
    IrBuilder ab = {f, aft, NULL};
    IrValue *half = op2(&ab, IR_DIV, t1, cf(&ab, f32, 2.0), f32);
    ir_build(&ab, IR_YIELD, SP, &half, 1, NULL, 0);
    /* if (n > 5) r = t else r = -t */
    IrValue *cond = cmp(&b, CMP_GT, n, ci(&b, i32, 5));
    IrOp *io = ir_build(&b, IR_IF, SP, &cond, 1, &f32, 1);
    IrBlock *th = ir_op_add_region(f, io), *el = ir_op_add_region(f, io);
    IrBuilder tb = {f, th, NULL}, eb = {f, el, NULL};
    IrValue *wr = wo->results[0];
    ir_build(&tb, IR_YIELD, SP, &wr, 1, NULL, 0);
    IrValue *neg = op1(&eb, IR_NEG, wr, f32, 0);
    ir_build(&eb, IR_YIELD, SP, &neg, 1, NULL, 0);
    store(&b, o, io->results[0], NULL);
    *w = (Want){{"bra", "st.global"}, 2};
    return f;
}

/* dot of an MxK tile with a KxN one. */
static inline IrFunc *k_dot_sized(Arena *a, DType in, DType acc, int M, int K, int N, Want *w)
{
    IrBuilder b;
    char name[64];
    snprintf(name, sizeof name, "dot_%s_%s_%dx%dx%d", dtype_name(in), dtype_name(acc), M, K, N);
    IrFunc *f = new_kernel(a, name, &b);
    IrValue *ap = ir_add_param(f, "a", type_ptr(in), 16, SP);
    IrValue *bp = ir_add_param(f, "b", type_ptr(in), 16, SP);
    IrValue *cp = ir_add_param(f, "c", type_ptr(acc), 16, SP);
    IrValue *m = arange(&b, M), *k = arange(&b, K), *n = arange(&b, N);
    Type m1 = mat(DT_I32, M, 1), k1 = mat(DT_I32, 1, K), k2 = mat(DT_I32, K, 1),
         n1 = mat(DT_I32, 1, N);
    Type mk = mat(DT_I32, M, K), kn = mat(DT_I32, K, N), mn = mat(DT_I32, M, N);
    IrValue *me = op1(&b, IR_EXPAND_DIMS, m, m1, 0), *ke = op1(&b, IR_EXPAND_DIMS, k, k1, 0);
    IrValue *ke2 = op1(&b, IR_EXPAND_DIMS, k, k2, 0), *ne = op1(&b, IR_EXPAND_DIMS, n, n1, 0);
    me->def->axis = 1;
    ke2->def->axis = 1;
    IrValue *ao =
        op2(&b, IR_ADD, op1(&b, IR_BROADCAST, op2(&b, IR_MUL, me, ci(&b, m1, K), m1), mk, 0),
            op1(&b, IR_BROADCAST, ke, mk, 0), mk);
    IrValue *bo =
        op2(&b, IR_ADD, op1(&b, IR_BROADCAST, op2(&b, IR_MUL, ke2, ci(&b, k2, N), k2), kn, 0),
            op1(&b, IR_BROADCAST, ne, kn, 0), kn);
    IrValue *co =
        op2(&b, IR_ADD, op1(&b, IR_BROADCAST, op2(&b, IR_MUL, me, ci(&b, m1, N), m1), mn, 0),
            op1(&b, IR_BROADCAST, ne, mn, 0), mn);
    IrValue *av = load(&b, addptr(&b, splat(&b, ap, pvec(in, 2, (int[]){M, K})), ao), NULL, NULL);
    IrValue *bv = load(&b, addptr(&b, splat(&b, bp, pvec(in, 2, (int[]){K, N})), bo), NULL, NULL);
    IrValue *ops[3] = {av, bv, cf(&b, mat(acc, M, N), 0.0)};
    IrValue *d = opn(&b, IR_DOT, ops, 3, mat(acc, M, N));
    store(&b, addptr(&b, splat(&b, cp, pvec(acc, 2, (int[]){M, N})), co), d, NULL);
    /* fp16, bf16 and int8 run on tensor cores, fragments read with ldmatrix
     * (int8's B, which ldmatrix cannot transpose, with ld.shared); fp32 with
     * IEEE precision on FMA */
    bool mma = (in == DT_F16 || in == DT_BF16 || in == DT_I8) && M >= 16 && N >= 8;
    *w = (Want){{mma                       ? "mma.sync"
                     : dtype_is_float(acc) ? "fma.rn"
                                           : "mad.lo",
                 mma ? "ldmatrix" : "ld.shared", "bar.sync"},
                3};
    return f;
}

static inline IrFunc *k_dot(Arena *a, DType in, DType acc, Want *w)
{
    return k_dot_sized(a, in, acc, 64, 32, 64, w);
}

/* Casts between every dtype pair, fp16/bf16 arithmetic, libdevice math, print, assert. */
static inline IrFunc *k_misc(Arena *a, Want *w)
{
    static const DType all[] = {DT_I1,  DT_I8,  DT_I16, DT_I32,  DT_I64, DT_U8, DT_U16,
                                DT_U32, DT_U64, DT_F16, DT_BF16, DT_F32, DT_F64};
    IrBuilder b;
    IrFunc *f = new_kernel(a, "misc", &b);
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), 16, SP);
    IrValue *o = ir_add_param(f, "o", type_ptr(DT_F64), 16, SP);
    Type pt = pvec(DT_F32, 1, (int[]){64});
    IrValue *ar = arange(&b, 64);
    IrValue *v = load(&b, addptr(&b, splat(&b, x, pt), ar), NULL, NULL);
    IrValue *acc = op1(&b, IR_CAST, v, vec(DT_F64, 64), 0);
    for (int i = 0; i < TK_ARRAY_LEN(all); i++)
        for (int j = 0; j < TK_ARRAY_LEN(all); j++) {
            IrValue *s = op1(&b, IR_CAST, v, vec(all[i], 64), 0);
            IrValue *t = op1(&b, IR_CAST, s, vec(all[j], 64), 0);
            if (all[j] != DT_I1 && all[i] != DT_I1) {
                t = op2(&b, IR_ADD, t, t, t->type);
                t = op2(&b, IR_MUL, t, t, t->type);
                t = op2(&b, IR_DIV, t, t, t->type);
            }
            acc = op2(&b, IR_ADD, acc, op1(&b, IR_CAST, t, vec(DT_F64, 64), 0), acc->type);
        }
    IrValue *th = op1(&b, IR_MATH, v, v->type, MATH_TANH);
    IrValue *er = op1(&b, IR_MATH, th, v->type, MATH_ERF);
    IrValue *sq = op1(&b, IR_MATH, er, v->type, MATH_SQRT);
    acc = op2(&b, IR_ADD, acc, op1(&b, IR_CAST, sq, acc->type, 0), acc->type);
    IrOp *pr = ir_build(&b, IR_PRINT, SP, &acc, 1, NULL, 0);
    pr->str = "acc: ";
    IrValue *ok = cmp(&b, CMP_LT, v, cf(&b, v->type, 100.0));
    IrOp *as = ir_build(&b, IR_ASSERT, SP, &ok, 1, NULL, 0);
    as->str = "too big";
    as->str2 = "misc.tk";
    as->ival = 7;
    store(&b, addptr(&b, splat(&b, o, pvec(DT_F64, 1, (int[]){64})), ar), acc, NULL);
    *w = (Want){{"vprintf", "__assertfail", "cvt.rn.f16.f32"}, 3};
    return f;
}

/* 2-D [R, C] tile helpers: offsets r * C + c. */
static inline IrValue *tile_offsets(IrBuilder *b, int R, int C)
{
    Type r1 = mat(DT_I32, R, 1), c1 = mat(DT_I32, 1, C), rc = mat(DT_I32, R, C);
    IrValue *re = op1(b, IR_EXPAND_DIMS, arange(b, R), r1, 0);
    re->def->axis = 1;
    IrValue *ce = op1(b, IR_EXPAND_DIMS, arange(b, C), c1, 0);
    ce->def->axis = 0;
    IrValue *rs = op2(b, IR_MUL, re, ci(b, r1, C), r1);
    return op2(b, IR_ADD, op1(b, IR_BROADCAST, rs, rc, 0), op1(b, IR_BROADCAST, ce, rc, 0), rc);
}

static inline IrValue *tile_ptrs(IrBuilder *b, IrValue *p, IrValue *offs)
{
    Type t = type_with_shape(p->type, offs->type.rank, offs->type.shape);
    return addptr(b, splat(b, p, t), offs);
}

/* cumsum of x[16x64] along axis 1 -> o1, along axis 0 -> o0, reversed along 1 -> o2. */
static inline IrValue *scan(IrBuilder *b, IrValue *x, int axis, int flags)
{
    IrOp *op = ir_build(b, IR_SCAN, SP, &x, 1, &x->type, 1);
    op->axis = axis;
    op->sub = SCAN_SUM;
    op->flags = flags;
    return op->results[0];
}

static inline IrFunc *k_scan(Arena *a, Want *w)
{
    IrBuilder b;
    IrFunc *f = new_kernel(a, "scan", &b);
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), 16, SP);
    IrValue *o[3];
    for (int i = 0; i < 3; i++)
        o[i] = ir_add_param(f, "o", type_ptr(DT_F32), 16, SP);
    IrValue *offs = tile_offsets(&b, 16, 64);
    IrValue *v = load(&b, tile_ptrs(&b, x, offs), NULL, NULL);
    store(&b, tile_ptrs(&b, o[0], offs), scan(&b, v, 1, 0), NULL);
    store(&b, tile_ptrs(&b, o[1], offs), scan(&b, v, 0, 0), NULL);
    store(&b, tile_ptrs(&b, o[2], offs), scan(&b, v, 1, IRF_REVERSE), NULL);
    *w = (Want){{"bar.sync", "st.shared"}, 2};
    return f;
}

/* x[16x8] i32: o_t = trans(x) [8x16]; o_j = join(x, x + 1000) [16x8x2];
 * o_c = cat(x, x + 1000) [32x8]; o_s = split(join(..))[1] [16x8]; o_r = reshape [128] */
static inline IrFunc *k_shapes(Arena *a, Want *w)
{
    IrBuilder b;
    IrFunc *f = new_kernel(a, "shapes", &b);
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_I32), 16, SP);
    IrValue *ot = ir_add_param(f, "ot", type_ptr(DT_I32), 16, SP);
    IrValue *oj = ir_add_param(f, "oj", type_ptr(DT_I32), 16, SP);
    IrValue *oc = ir_add_param(f, "oc", type_ptr(DT_I32), 16, SP);
    IrValue *os = ir_add_param(f, "os", type_ptr(DT_I32), 16, SP);
    IrValue *offs = tile_offsets(&b, 16, 8);
    IrValue *v = load(&b, tile_ptrs(&b, x, offs), NULL, NULL);
    IrValue *t = op1(&b, IR_TRANS, v, mat(DT_I32, 8, 16), 0);
    t->def->ints[0] = 1;
    t->def->ints[1] = 0;
    t->def->nints = 2;
    store(&b, tile_ptrs(&b, ot, tile_offsets(&b, 8, 16)), t, NULL);
    IrValue *v2 = op2(&b, IR_ADD, v, ci(&b, v->type, 1000), v->type);
    IrValue *jops[2] = {v, v2};
    Type jt = type_block(DT_I32, 3, (int[]){16, 8, 2});
    IrValue *j = opn(&b, IR_JOIN, jops, 2, jt);
    IrValue *jflat = op1(&b, IR_RESHAPE, j, vec(DT_I32, 256), 0);
    store(&b, tile_ptrs(&b, oj, arange(&b, 256)), jflat, NULL);
    IrValue *c = opn(&b, IR_CAT, jops, 2, mat(DT_I32, 32, 8));
    store(&b, tile_ptrs(&b, oc, tile_offsets(&b, 32, 8)), c, NULL);
    Type st[2] = {v->type, v->type};
    IrOp *sp = ir_build(&b, IR_SPLIT, SP, &j, 1, st, 2);
    IrValue *d = op2(&b, IR_SUB, sp->results[1], sp->results[0], v->type);
    store(&b, tile_ptrs(&b, os, offs), d, NULL);
    *w = (Want){{"bar.sync", "st.shared"}, 2};
    return f;
}

/* Every program adds 1 to *counter with a scalar atomic and stores the old value;
 * a 4-element block atomic (repeated over the CTA) adds pid to acc[0..4). */
static inline IrFunc *k_counter(Arena *a, Want *w)
{
    IrBuilder b;
    IrFunc *f = new_kernel(a, "counter", &b);
    IrValue *cnt = ir_add_param(f, "counter", type_ptr(DT_I32), 16, SP);
    IrValue *old = ir_add_param(f, "old", type_ptr(DT_I32), 16, SP);
    IrValue *acc = ir_add_param(f, "acc", type_ptr(DT_I32), 16, SP);
    IrValue *pid = op1(&b, IR_PROGRAM_ID, NULL, type_scalar(DT_I32), 0);
    pid->def->nops = 0;
    IrValue *ops[3] = {cnt, ci(&b, type_scalar(DT_I32), 1), NULL};
    IrOp *at = ir_build(&b, IR_ATOMIC_RMW, SP, ops, 3, (Type[]){type_scalar(DT_I32)}, 1);
    at->sub = ATOM_ADD;
    store(&b, addptr(&b, old, pid), at->results[0], NULL);
    IrValue *ops2[3] = {tile_ptrs(&b, acc, arange(&b, 4)), splat(&b, pid, vec(DT_I32, 4)), NULL};
    IrOp *at2 = ir_build(&b, IR_ATOMIC_RMW, SP, ops2, 3, (Type[]){vec(DT_I32, 4)}, 1);
    at2->sub = ATOM_ADD;
    *w = (Want){{"atom.", "bar.sync"}, 2};
    return f;
}

/* u = rand(seed, offs), nrm = randn(seed, offs), i0 = randint4x(seed, offs)[0]
 * as IR_RAND ops. */
static inline IrFunc *k_rand(Arena *a, Want *w)
{
    IrBuilder b;
    IrFunc *f = new_kernel(a, "rand_ops", &b);
    IrValue *u = ir_add_param(f, "u", type_ptr(DT_F32), 16, SP);
    IrValue *nrm = ir_add_param(f, "nrm", type_ptr(DT_F32), 16, SP);
    IrValue *i0 = ir_add_param(f, "i0", type_ptr(DT_U32), 16, SP);
    IrValue *seed = ir_add_param(f, "seed", type_scalar(DT_I32), 1, SP);
    IrValue *offs = arange(&b, 256);
    IrValue *ops[2] = {seed, offs};
    IrOp *r1 = ir_build(&b, IR_RAND, SP, ops, 2, (Type[]){vec(DT_F32, 256)}, 1);
    r1->sub = RAND_UNIFORM;
    IrOp *r2 = ir_build(&b, IR_RAND, SP, ops, 2, (Type[]){vec(DT_F32, 256)}, 1);
    r2->sub = RAND_NORMAL;
    Type it[4] = {vec(DT_U32, 256), vec(DT_U32, 256), vec(DT_U32, 256), vec(DT_U32, 256)};
    IrOp *r3 = ir_build(&b, IR_RAND, SP, ops, 2, it, 4);
    r3->sub = RAND_INT4X;
    store(&b, tile_ptrs(&b, u, offs), r1->results[0], NULL);
    store(&b, tile_ptrs(&b, nrm, offs), r2->results[0], NULL);
    store(&b, tile_ptrs(&b, i0, offs), op2(&b, IR_XOR, r3->results[0], r3->results[3], it[0]),
          NULL);
    *w = (Want){{"mul.hi.u32", "st.global"}, 2};
    return f;
}

#endif
