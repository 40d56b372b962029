/* cg_build.c: code generation from hand-built IR: each kernel compiles to
 * PTX holding the instructions its construct needs. With an argument DIR,
 * the PTX files are also written there (for ptxas). */
#include "cg_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static const char *outdir;

#define CHECK(cond)                                                                \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                            \
        }                                                                          \
    } while (0)

static char *compile(IrFunc *f, const char *arch, bool want_llvm, char **llvm)
{
    Diag d;
    diag_init(&d, f->src);
    Diag vd;
    diag_init(&vd, f->src);
    if (!ir_verify(f, &vd))
        fprintf(stderr, "%s: IR verifier: %s\n", f->name, vd.text.data ? vd.text.data : "");
    diag_free(&vd);
    StrBuf ll, ptx;
    sb_init(&ll);
    sb_init(&ptx);
    CgOptions o = {arch, 3, NULL};
    bool ok = cg_compile(f, &o, &d, want_llvm ? &ll : NULL, &ptx);
    if (!ok)
        fprintf(stderr, "%s: %s\n", f->name, d.text.data ? d.text.data : "(no message)");
    CHECK(ok);
    diag_free(&d);
    if (llvm)
        *llvm = ll.data ? sb_take(&ll, NULL) : NULL;
    sb_free(&ll);
    char *text = ok && ptx.data ? sb_take(&ptx, NULL) : NULL;
    sb_free(&ptx);
    if (text && outdir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s_%s.ptx", outdir, f->name, arch);
        FILE *fp = fopen(path, "w");
        if (fp) {
            fputs(text, fp);
            fclose(fp);
        }
    }
    return text;
}

static void expect(const char *ptx, const char *what, const char *name)
{
    if (!ptx || !strstr(ptx, what)) {
        fprintf(stderr, "%s: PTX lacks '%s'\n", name, what);
        failures++;
    }
}

static void finish(IrFunc *f, const char *const *want, int nwant)
{
    const char *archs[] = {"sm_80", "sm_90"};
    for (int a = 0; a < 2; a++) {
        char *ptx = compile(f, archs[a], false, NULL);
        for (int i = 0; i < nwant; i++)
            expect(ptx, want[i], f->name);
        tk_xfree(ptx);
    }
}

static void k_vector_add(Arena *a)
{
    IrBuilder b;
    IrFunc *f = new_kernel(a, "vector_add", &b);
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), 16, SP);
    IrValue *y = ir_add_param(f, "y", type_ptr(DT_F32), 16, SP);
    IrValue *o = ir_add_param(f, "out", type_ptr(DT_F32), 16, SP);
    IrValue *n = ir_add_param(f, "n", type_scalar(DT_I32), 1, SP);
    IrValue *mask;
    IrValue *offs = offsets(&b, 1024, n, &mask);
    Type pt = pvec(DT_F32, 1, (int[]){1024});
    IrValue *va = load(&b, addptr(&b, splat(&b, x, pt), offs), mask, NULL);
    IrValue *vb = load(&b, addptr(&b, splat(&b, y, pt), offs), mask, NULL);
    store(&b, addptr(&b, splat(&b, o, pt), offs), op2(&b, IR_ADD, va, vb, va->type), mask);
    const char *want[] = {"%ctaid.x", "@%p", "ld.global.b32", "st.global.b32", ".maxntid 128"};
    finish(f, want, 5);
}

/* softmax of one row of 1024: max, exp, sum, divide. */
static void k_softmax(Arena *a, int n, int warps)
{
    IrBuilder b;
    char name[64];
    snprintf(name, sizeof name, "softmax_%d_w%d", n, warps);
    IrFunc *f = new_kernel(a, name, &b);
    f->num_warps = warps;
    IrValue *o = ir_add_param(f, "out", type_ptr(DT_F32), 16, SP);
    IrValue *x = ir_add_param(f, "in", type_ptr(DT_F32), 16, SP);
    IrValue *cols = ir_add_param(f, "n_cols", type_scalar(DT_I32), 1, SP);
    Type ft = vec(DT_F32, n), pt = pvec(DT_F32, 1, (int[]){n});
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
    const char *want[] = {"shfl.sync.bfly", "ex2.approx", "bar.sync", "st.shared", "ld.shared"};
    finish(f, want, n * 1 > 32 * warps ? 5 : 2); /* small rows stay within one warp */
}

/* 2-D tile: row max, row argmax, column sums with atomics (row_argmax.tk). */
static void k_rows(Arena *a)
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
    IrValue *off = op2(&b, IR_ADD, op1(&b, IR_BROADCAST, rs, rc, 0), op1(&b, IR_BROADCAST, ce, rc, 0), rc);
    IrValue *v = load(&b, addptr(&b, splat(&b, x, pvec(DT_F32, 2, (int[]){R, C})), off), NULL, NULL);
    IrValue *mx = reduce(&b, v, 1, RED_MAX, DT_F32);
    IrValue *am = reduce(&b, v, 1, RED_ARGMAX, DT_I32);
    store(&b, addptr(&b, splat(&b, mxp, pvec(DT_F32, 1, (int[]){R})), rows), mx, NULL);
    store(&b, addptr(&b, splat(&b, argp, pvec(DT_I32, 1, (int[]){R})), rows), am, NULL);
    IrValue *cs = reduce(&b, v, 0, RED_SUM, DT_F32);
    IrValue *ops[3] = {addptr(&b, splat(&b, colp, pvec(DT_F32, 1, (int[]){C})), cols), cs,
                       cmp(&b, CMP_LT, cols, splat(&b, stride, vec(DT_I32, C)))};
    IrOp *at = ir_build(&b, IR_ATOMIC_RMW, SP, ops, 3, (Type[]){vec(DT_F32, C)}, 1);
    at->sub = ATOM_ADD;
    const char *want[] = {"shfl.sync.bfly", "atom.", "bar.sync"};
    finish(f, want, 3);
}

/* for with a carried block, while, if (layernorm-like accumulation). */
static void k_flow(Arena *a)
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
    const char *want[] = {"bra", "st.global"};
    finish(f, want, 2);
}

/* dot of a 64x32 fp16 tile with a 32x64 one into fp32. */
static void k_dot(Arena *a, DType in, DType acc)
{
    IrBuilder b;
    char name[64];
    snprintf(name, sizeof name, "dot_%s_%s", dtype_name(in), dtype_name(acc));
    IrFunc *f = new_kernel(a, name, &b);
    IrValue *ap = ir_add_param(f, "a", type_ptr(in), 16, SP);
    IrValue *bp = ir_add_param(f, "b", type_ptr(in), 16, SP);
    IrValue *cp = ir_add_param(f, "c", type_ptr(acc), 16, SP);
    enum { M = 64, K = 32, N = 64 };
    IrValue *m = arange(&b, M), *k = arange(&b, K), *n = arange(&b, N);
    Type m1 = mat(DT_I32, M, 1), k1 = mat(DT_I32, 1, K), k2 = mat(DT_I32, K, 1), n1 = mat(DT_I32, 1, N);
    Type mk = mat(DT_I32, M, K), kn = mat(DT_I32, K, N), mn = mat(DT_I32, M, N);
    IrValue *me = op1(&b, IR_EXPAND_DIMS, m, m1, 0), *ke = op1(&b, IR_EXPAND_DIMS, k, k1, 0);
    IrValue *ke2 = op1(&b, IR_EXPAND_DIMS, k, k2, 0), *ne = op1(&b, IR_EXPAND_DIMS, n, n1, 0);
    me->def->axis = 1;
    ke2->def->axis = 1;
    IrValue *ao = op2(&b, IR_ADD, op1(&b, IR_BROADCAST, op2(&b, IR_MUL, me, ci(&b, m1, K), m1), mk, 0),
                      op1(&b, IR_BROADCAST, ke, mk, 0), mk);
    IrValue *bo = op2(&b, IR_ADD, op1(&b, IR_BROADCAST, op2(&b, IR_MUL, ke2, ci(&b, k2, N), k2), kn, 0),
                      op1(&b, IR_BROADCAST, ne, kn, 0), kn);
    IrValue *co = op2(&b, IR_ADD, op1(&b, IR_BROADCAST, op2(&b, IR_MUL, me, ci(&b, m1, N), m1), mn, 0),
                      op1(&b, IR_BROADCAST, ne, mn, 0), mn);
    IrValue *av = load(&b, addptr(&b, splat(&b, ap, pvec(in, 2, (int[]){M, K})), ao), NULL, NULL);
    IrValue *bv = load(&b, addptr(&b, splat(&b, bp, pvec(in, 2, (int[]){K, N})), bo), NULL, NULL);
    IrValue *ops[3] = {av, bv, cf(&b, mat(acc, M, N), 0.0)};
    IrValue *d = opn(&b, IR_DOT, ops, 3, mat(acc, M, N));
    store(&b, addptr(&b, splat(&b, cp, pvec(acc, 2, (int[]){M, N})), co), d, NULL);
    const char *want[] = {dtype_is_float(acc) ? "fma.rn" : "mad.lo", "ld.shared", "bar.sync"};
    finish(f, want, 3);
}

/* Casts between every dtype pair, fp16/bf16 arithmetic, libdevice math, print, assert. */
static void k_misc(Arena *a)
{
    static const DType all[] = {DT_I1, DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16,
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
    const char *want[] = {"vprintf", "__assertfail", "cvt.rn.f16.f32", "__nv_tanhf"};
    (void)want;
    const char *want2[] = {"vprintf", "__assertfail", "cvt.rn.f16.f32"};
    finish(f, want2, 3);
}

int main(int argc, char **argv)
{
    outdir = argc > 1 ? argv[1] : NULL;
    Arena a;
    arena_init(&a);
    k_vector_add(&a);
    k_softmax(&a, 1024, 4);
    k_softmax(&a, 16384, 8);
    k_softmax(&a, 8, 4);
    k_rows(&a);
    k_flow(&a);
    k_dot(&a, DT_F16, DT_F32);
    k_dot(&a, DT_BF16, DT_F32);
    k_dot(&a, DT_F32, DT_F32);
    k_dot(&a, DT_I8, DT_I32);
    k_misc(&a);
    arena_free(&a);
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
