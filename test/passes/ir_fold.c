/* ir_fold.c: one check per folding rule of pass_fold: integer wrap-around
 * and C division, float rounding per dtype, compares, casts, select, shape
 * ops of constants, algebraic identities and `if` on a constant. */
#include "ir_test.h"

#include <math.h>

static Arena arena;
static IrFunc *f;
static IrBuilder b;
static IrValue *pn, *px, *pp; /* i32, fp32, ptr<fp32> parameters */

static void reset(void)
{
    f = ir_func_new(&arena, "k", NULL);
    pp = ir_add_param(f, "p", type_ptr(DT_F32), 16, T_SP);
    pn = ir_add_param(f, "n", t_i32(), 1, T_SP);
    px = ir_add_param(f, "x", type_scalar(DT_F32), 1, T_SP);
    b = (IrBuilder){f, f->body, NULL};
}

static IrValue *ci(DType dt, int64_t v) { return ir_const_int(&b, T_SP, type_scalar(dt), v); }
static IrValue *cf(DType dt, double v) { return ir_const_float(&b, T_SP, type_scalar(dt), v); }

/* A use that keeps v alive and shows what it was replaced with. */
static IrOp *sink(IrValue *v) { return ir_build(&b, IR_PRINT, T_SP, &v, 1, NULL, 0); }

static IrValue *bin(IrKind k, IrValue *x, IrValue *y)
{
    return ir_binary(&b, k, T_SP, x, y, x->type);
}

static bool is_const_i(IrValue *v, int64_t want)
{
    bool ok = v->def && v->def->kind == IR_CONST && v->def->ival == want;
    if (!ok)
        fprintf(stderr, "  %%%d: kind %s ival %lld, want %lld\n", v->id,
                v->def ? ir_kind_name(v->def->kind) : "arg", v->def ? (long long)v->def->ival : 0,
                (long long)want);
    return ok;
}

static bool is_const_f(IrValue *v, double want)
{
    bool ok = v->def && v->def->kind == IR_CONST &&
        (v->def->fval == want || (isnan(want) && isnan(v->def->fval))) &&
        signbit(v->def->fval) == signbit(want);
    if (!ok)
        fprintf(stderr, "  %%%d: kind %s fval %.17g, want %.17g\n", v->id,
                v->def ? ir_kind_name(v->def->kind) : "arg", v->def ? v->def->fval : 0, want);
    return ok;
}

static bool kept(IrValue *v, IrKind k) { return v->def && v->def->kind == k; }

static void fold_and_verify(void)
{
    pass_fold(f);
    CHECK(t_verify(f, true, NULL));
}

static void test_ints(void)
{
    reset();
    IrValue *wrap = bin(IR_ADD, ci(DT_I32, 0x7fffffff), ci(DT_I32, 1));
    IrValue *u8 = bin(IR_MUL, ci(DT_U8, 200), ci(DT_U8, 2));
    IrValue *dv = bin(IR_DIV, ci(DT_I32, -7), ci(DT_I32, 2));
    IrValue *rm = bin(IR_REM, ci(DT_I32, -7), ci(DT_I32, 2));
    IrValue *dz = bin(IR_DIV, ci(DT_I32, 7), ci(DT_I32, 0));
    IrValue *rz = bin(IR_REM, ci(DT_I32, 7), ci(DT_I32, 0));
    IrValue *ud = bin(IR_DIV, ci(DT_U32, -1), ci(DT_U32, 2));
    IrValue *minn = bin(IR_DIV, ci(DT_I32, INT32_MIN), ci(DT_I32, -1));
    IrValue *sr = bin(IR_SHR, ci(DT_I32, -8), ci(DT_I32, 1));
    IrValue *ur = bin(IR_SHR, ci(DT_U32, 0xfffffff8), ci(DT_U32, 1));
    IrValue *sl = bin(IR_SHL, ci(DT_I32, 1), ci(DT_I32, 32));
    IrValue *sl8 = bin(IR_SHL, ci(DT_I8, 1), ci(DT_I8, 7));
    IrValue *umin = bin(IR_MIN, ci(DT_U32, -1), ci(DT_U32, 3));
    IrValue *smin = bin(IR_MIN, ci(DT_I32, -1), ci(DT_I32, 3));
    IrValue *x = bin(IR_XOR, ci(DT_I64, 0xff00), ci(DT_I64, 0x0ff0));
    IrValue *nt = ir_unary(&b, IR_NOT, T_SP, ci(DT_I1, 1), type_scalar(DT_I1));
    IrValue *ng = ir_unary(&b, IR_NEG, T_SP, ci(DT_I16, -32768), type_scalar(DT_I16));
    IrValue *chain = bin(IR_MUL, bin(IR_ADD, ci(DT_I32, 2), ci(DT_I32, 3)), ci(DT_I32, 4));
    IrValue *all[] = {wrap, u8, dv,  rm,   dz,   rz, ud, minn, sr,
                      ur,   sl, sl8, umin, smin, x,  nt, ng,   chain};
    for (int i = 0; i < TK_ARRAY_LEN(all); i++)
        sink(all[i]);
    fold_and_verify();
    CHECK(is_const_i(wrap, INT32_MIN));
    CHECK(is_const_i(u8, 144));
    CHECK(is_const_i(dv, -3));
    CHECK(is_const_i(rm, -1));
    CHECK(kept(dz, IR_DIV) && kept(rz, IR_REM));
    CHECK(is_const_i(ud, 2147483647));
    CHECK(is_const_i(minn, INT32_MIN));
    CHECK(is_const_i(sr, -4));
    CHECK(is_const_i(ur, 0x7ffffffc));
    CHECK(kept(sl, IR_SHL));
    CHECK(is_const_i(sl8, -128));
    CHECK(is_const_i(umin, 3));
    CHECK(is_const_i(smin, -1));
    CHECK(is_const_i(x, 0xf0f0));
    CHECK(is_const_i(nt, 0));
    CHECK(is_const_i(ng, -32768));
    CHECK(is_const_i(chain, 20));
}

static void test_floats(void)
{
    reset();
    IrValue *f32 = bin(IR_ADD, cf(DT_F32, 0.1), cf(DT_F32, 0.2));
    IrValue *h1 = bin(IR_ADD, cf(DT_F16, 1.0), cf(DT_F16, 0.0001));
    IrValue *hinf = bin(IR_MUL, cf(DT_F16, 65504.0), cf(DT_F16, 2.0));
    IrValue *hmax = bin(IR_ADD, cf(DT_F16, 65504.0), cf(DT_F16, 15.0));
    IrValue *bf = bin(IR_ADD, cf(DT_BF16, 1.0), cf(DT_BF16, 1.0 / 256));
    IrValue *bf3 = bin(IR_ADD, cf(DT_BF16, 1.0), cf(DT_BF16, 3.0 / 256));
    IrValue *hsub = bin(IR_MUL, cf(DT_F16, 0x1p-20), cf(DT_F16, 0x1p-5)); /* 2^-25: tie -> 0 */
    IrValue *dv0 = bin(IR_DIV, cf(DT_F32, 1.0), cf(DT_F32, 0.0));
    IrValue *fm = bin(IR_REM, cf(DT_F64, -7.5), cf(DT_F64, 2.0));
    IrValue *mn = bin(IR_MIN, cf(DT_F32, NAN), cf(DT_F32, 2.0));
    IrValue *mnp = bin(IR_MIN, cf(DT_F32, NAN), cf(DT_F32, 2.0));
    mnp->def->sub = 1;
    IrValue *ng = ir_unary(&b, IR_NEG, T_SP, cf(DT_F32, 0.0), type_scalar(DT_F32));
    IrValue *all[] = {f32, h1, hinf, hmax, bf, bf3, hsub, dv0, fm, mn, mnp, ng};
    for (int i = 0; i < TK_ARRAY_LEN(all); i++)
        sink(all[i]);
    fold_and_verify();
    CHECK(is_const_f(f32, (double)(0.1f + 0.2f)));
    CHECK(is_const_f(h1, 1.0));
    CHECK(is_const_f(hinf, INFINITY));
    CHECK(is_const_f(hmax, 65504.0));
    CHECK(is_const_f(bf, 1.0));
    CHECK(is_const_f(bf3, 1.0 + 4.0 / 256));
    CHECK(is_const_f(hsub, 0.0));
    CHECK(is_const_f(dv0, INFINITY));
    CHECK(is_const_f(fm, -1.5));
    CHECK(is_const_f(mn, 2.0));
    CHECK(is_const_f(mnp, NAN));
    CHECK(is_const_f(ng, 0.0)); /* Triton's minus is 0 - x: -(+0.0) is +0.0 */
}

static IrValue *cmp(CmpPred p, IrValue *x, IrValue *y)
{
    IrValue *r = ir_binary(&b, IR_CMP, T_SP, x, y,
                           type_with_shape(type_scalar(DT_I1), x->type.rank, x->type.shape));
    r->def->sub = p;
    return r;
}

static void test_cmp_select(void)
{
    reset();
    IrValue *s = cmp(CMP_LT, ci(DT_I32, -1), ci(DT_I32, 1));
    IrValue *u = cmp(CMP_LT, ci(DT_U32, -1), ci(DT_U32, 1));
    IrValue *nne = cmp(CMP_NE, cf(DT_F32, NAN), cf(DT_F32, 1.0));
    IrValue *nlt = cmp(CMP_LT, cf(DT_F32, NAN), cf(DT_F32, 1.0));
    IrValue *ge = cmp(CMP_GE, cf(DT_F64, 2.0), cf(DT_F64, 2.0));
    IrValue *sel = t_op3(&b, IR_SELECT, ci(DT_I1, 0), pn, ci(DT_I32, 5), t_i32());
    IrValue *same = t_op3(&b, IR_SELECT, cmp(CMP_LT, pn, pn), pn, pn, t_i32());
    IrValue *all[] = {s, u, nne, nlt, ge};
    for (int i = 0; i < TK_ARRAY_LEN(all); i++)
        sink(all[i]);
    IrOp *ss = sink(sel), *ssame = sink(same);
    fold_and_verify();
    CHECK(is_const_i(s, 1));
    CHECK(is_const_i(u, 0));
    CHECK(is_const_i(nne, 1));
    CHECK(is_const_i(nlt, 0));
    CHECK(is_const_i(ge, 1));
    CHECK(is_const_i(ss->operands[0], 5));
    CHECK(ssame->operands[0] == pn);
}

static IrValue *cast(IrValue *x, DType to)
{
    return ir_unary(&b, IR_CAST, T_SP, x, type_scalar(to));
}

static void test_casts(void)
{
    reset();
    IrValue *a = cast(cf(DT_F32, 3.7), DT_I32);
    IrValue *bn = cast(cf(DT_F32, -3.7), DT_I32);
    IrValue *big = cast(cf(DT_F32, 1e10), DT_I32);
    IrValue *nan = cast(cf(DT_F32, NAN), DT_I32);
    IrValue *neg_u = cast(cf(DT_F32, -1.0), DT_U32);
    IrValue *u8 = cast(ci(DT_I32, -1), DT_U8);
    IrValue *uf = cast(ci(DT_U32, -1), DT_F32);
    IrValue *bl = cast(ci(DT_I32, 5), DT_I1);
    IrValue *fb = cast(cf(DT_F32, 0.5), DT_I1);
    IrValue *h = cast(cf(DT_F32, 0.1), DT_F16);
    IrValue *ext = cast(ci(DT_I8, -5), DT_I64);
    IrValue *zext = cast(ci(DT_U8, 251), DT_I32);
    IrValue *all[] = {a, bn, big, nan, neg_u, u8, uf, bl, fb, h, ext, zext};
    for (int i = 0; i < TK_ARRAY_LEN(all); i++)
        sink(all[i]);
    fold_and_verify();
    CHECK(is_const_i(a, 3));
    CHECK(is_const_i(bn, -3));
    CHECK(kept(big, IR_CAST) && kept(nan, IR_CAST) && kept(neg_u, IR_CAST));
    CHECK(is_const_i(u8, 255));
    CHECK(is_const_f(uf, 4294967296.0));
    CHECK(is_const_i(bl, 1));
    CHECK(is_const_i(fb, 1));
    CHECK(is_const_f(h, 0.0999755859375));
    CHECK(is_const_i(ext, -5));
    CHECK(is_const_i(zext, 251));
}

static void test_shapes(void)
{
    reset();
    Type v = t_vec(DT_I32, 8);
    IrValue *sp = ir_unary(&b, IR_SPLAT, T_SP, ci(DT_I32, 3), v);
    IrValue *sum = bin(IR_ADD, sp, ir_unary(&b, IR_SPLAT, T_SP, ci(DT_I32, 4), v));
    IrValue *ex = ir_unary(&b, IR_EXPAND_DIMS, T_SP, sum, t_mat(DT_I32, 1, 8));
    IrValue *bc = ir_unary(&b, IR_BROADCAST, T_SP, ex, t_mat(DT_I32, 4, 8));
    IrValue *c = cmp(CMP_EQ, bc, ir_unary(&b, IR_SPLAT, T_SP, ci(DT_I32, 7), t_mat(DT_I32, 4, 8)));
    sink(c);
    fold_and_verify();
    CHECK(is_const_i(sp, 3) && sp->type.rank == 1);
    CHECK(is_const_i(sum, 7));
    CHECK(is_const_i(bc, 7) && bc->type.rank == 2 && bc->type.shape[0] == 4);
    CHECK(is_const_i(c, 1) && c->type.dt == DT_I1 && c->type.rank == 2);
}

static void test_identities(void)
{
    reset();
    IrValue *add0 = bin(IR_ADD, pn, ci(DT_I32, 0));
    IrValue *add0l = bin(IR_ADD, ci(DT_I32, 0), pn);
    IrValue *mul1 = bin(IR_MUL, pn, ci(DT_I32, 1));
    IrValue *mul0 = bin(IR_MUL, pn, ci(DT_I32, 0));
    IrValue *sub = bin(IR_SUB, pn, pn);
    IrValue *and0 = bin(IR_AND, pn, ci(DT_I32, 0));
    IrValue *andm = bin(IR_AND, pn, ci(DT_I32, -1));
    IrValue *div1 = bin(IR_DIV, pn, ci(DT_I32, 1));
    IrValue *shl0 = bin(IR_SHL, pn, ci(DT_I32, 0));
    IrValue *fm1 = bin(IR_MUL, px, cf(DT_F32, 1.0));
    IrValue *fadd0 = bin(IR_ADD, px, cf(DT_F32, 0.0));   /* -0 + 0 = +0: kept */
    IrValue *faddn0 = bin(IR_ADD, px, cf(DT_F32, -0.0)); /* exact */
    IrValue *fmul0 = bin(IR_MUL, px, cf(DT_F32, 0.0));   /* NaN*0: kept */
    IrValue *ap = ir_binary(&b, IR_ADDPTR, T_SP, pp, ci(DT_I32, 0), pp->type);
    IrOp *s[] = {sink(add0),  sink(add0l),  sink(mul1),  sink(mul0), sink(sub),
                 sink(and0),  sink(andm),   sink(div1),  sink(shl0), sink(fm1),
                 sink(fadd0), sink(faddn0), sink(fmul0), sink(ap)};
    fold_and_verify();
    CHECK(s[0]->operands[0] == pn && s[1]->operands[0] == pn && s[2]->operands[0] == pn);
    CHECK(is_const_i(mul0, 0) && is_const_i(sub, 0) && is_const_i(and0, 0));
    CHECK(s[6]->operands[0] == pn && s[7]->operands[0] == pn && s[8]->operands[0] == pn);
    CHECK(s[9]->operands[0] == px);
    CHECK(kept(fadd0, IR_ADD) && s[10]->operands[0] == fadd0);
    CHECK(s[11]->operands[0] == px);
    CHECK(kept(fmul0, IR_MUL));
    CHECK(s[13]->operands[0] == pp);
}

static void test_if(void)
{
    reset();
    Type i32 = t_i32();
    IrValue *c = cmp(CMP_GT, ci(DT_I32, 2), ci(DT_I32, 1));
    IrOp *iff = ir_build(&b, IR_IF, T_SP, &c, 1, &i32, 1);
    IrBuilder th = {f, ir_op_add_region(f, iff), NULL};
    IrValue *t = ir_binary(&th, IR_MUL, T_SP, pn, pn, i32);
    ir_build(&th, IR_YIELD, T_SP, &t, 1, NULL, 0);
    IrBuilder el = {f, ir_op_add_region(f, iff), NULL};
    IrValue *e = ir_const_int(&el, T_SP, i32, 9);
    ir_build(&el, IR_YIELD, T_SP, &e, 1, NULL, 0);
    IrOp *s = sink(iff->results[0]);
    /* if False with no else: disappears */
    IrValue *c2 = ci(DT_I1, 0);
    IrOp *if2 = ir_build(&b, IR_IF, T_SP, &c2, 1, NULL, 0);
    IrBuilder th2 = {f, ir_op_add_region(f, if2), NULL};
    ir_build(&th2, IR_PRINT, T_SP, &pn, 1, NULL, 0);
    ir_build(&th2, IR_YIELD, T_SP, NULL, 0, NULL, 0);
    fold_and_verify();
    CHECK(s->operands[0] == t && t->def->parent == f->body);
    char *txt = t_print(f);
    CHECK(txt && !strstr(txt, "if ") && !strstr(txt, "yield"));
    tk_xfree(txt);
}

/* for i in range(lo, hi, step) carrying n: folded away only when empty */
static IrOp *counted_loop(int64_t lo, int64_t hi, int64_t step, IrOp **use)
{
    IrValue *ops[4] = {ci(DT_I32, lo), ci(DT_I32, hi), ci(DT_I32, step), pn};
    Type i32 = t_i32();
    IrOp *l = ir_build(&b, IR_FOR, T_SP, ops, 4, &i32, 1);
    IrBlock *body = ir_op_add_region(f, l);
    IrValue *iv = ir_block_add_arg(f, body, i32, "i");
    IrValue *acc = ir_block_add_arg(f, body, i32, "acc");
    IrBuilder in = {f, body, NULL};
    IrValue *nx = ir_binary(&in, IR_ADD, T_SP, acc, iv, i32);
    ir_build(&in, IR_YIELD, T_SP, &nx, 1, NULL, 0);
    *use = sink(l->results[0]);
    return l;
}

static void test_loops_and_self_compare(void)
{
    reset();
    IrOp *u1, *u2, *u3, *u4;
    IrOp *empty = counted_loop(5, 5, 1, &u1);
    IrOp *runs = counted_loop(0, 4, 1, &u2);
    IrOp *down = counted_loop(4, 0, -1, &u3);  /* runs */
    IrOp *down0 = counted_loop(0, 4, -1, &u4); /* empty */
    IrValue *eq = cmp(CMP_EQ, pn, pn), *ltv = cmp(CMP_LT, pn, pn);
    IrValue *feq = cmp(CMP_EQ, px, px); /* NaN != NaN: kept */
    sink(eq);
    sink(ltv);
    sink(feq);
    fold_and_verify();
    CHECK(u1->operands[0] == pn && empty->parent == NULL);
    CHECK(u2->operands[0] == runs->results[0] && runs->parent == f->body);
    CHECK(u3->operands[0] == down->results[0] && down->parent == f->body);
    CHECK(u4->operands[0] == pn && down0->parent == NULL);
    CHECK(is_const_i(eq, 1) && is_const_i(ltv, 0) && kept(feq, IR_CMP));
}

/* acc + dot(a, b, 0) inside a loop becomes dot(a, b, acc); not when the
 * dot has a second user. */
static void test_dot_add(void)
{
    reset();
    Type m = t_mat(DT_F32, 16, 16);
    IrValue *a = ir_unary(&b, IR_SPLAT, T_SP, px, m);
    IrValue *z = ir_const_float(&b, T_SP, m, 0.0);
    IrValue *d = t_op3(&b, IR_DOT, a, a, z, m);
    IrValue *acc = ir_unary(&b, IR_SPLAT, T_SP, cf(DT_F32, 2.0), m); /* defined after the dot */
    IrValue *s = bin(IR_ADD, acc, d);
    IrOp *u = sink(s);
    IrValue *d2 = t_op3(&b, IR_DOT, a, a, z, m);
    IrValue *s2 = bin(IR_ADD, d2, acc);
    sink(s2);
    sink(d2); /* second user: stays apart */
    fold_and_verify();
    CHECK(u->operands[0] == d && d->def->operands[2] == acc && d->def->next == u);
    CHECK(kept(s2, IR_ADD) && d2->def->operands[2] == z);
}

int main(void)
{
    arena_init(&arena);
    test_ints();
    test_floats();
    test_cmp_select();
    test_casts();
    test_shapes();
    test_identities();
    test_if();
    test_loops_and_self_compare();
    test_dot_add();
    arena_free(&arena);
    return t_finish("ir_fold");
}
