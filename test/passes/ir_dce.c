/* ir_dce.c: pass_dce removes dead pure ops (also in chains and inside
 * loops), keeps every side effect, drops unused loop-carried values and
 * unused `if` results, and leaves dense ids. */
#include "ir_test.h"

static Arena arena;
static IrFunc *f;
static IrBuilder b;
static IrValue *pp, *pn;

static void reset(void)
{
    f = ir_func_new(&arena, "k", NULL);
    pp = ir_add_param(f, "p", type_ptr(DT_F32), 16, T_SP);
    pn = ir_add_param(f, "n", t_i32(), 1, T_SP);
    b = (IrBuilder){f, f->body, NULL};
}

static int count_kind(IrBlock *blk, IrKind k)
{
    int n = 0;
    for (IrOp *op = blk->first; op; op = op->next) {
        n += op->kind == k;
        for (int r = 0; r < op->nregions; r++)
            n += count_kind(op->regions[r], k);
    }
    return n;
}

static int count_ops(IrBlock *blk)
{
    int n = 0;
    for (IrOp *op = blk->first; op; op = op->next) {
        n++;
        for (int r = 0; r < op->nregions; r++)
            n += count_ops(op->regions[r]);
    }
    return n;
}

static void dce_and_verify(void)
{
    pass_dce(f);
    CHECK(t_verify(f, true, NULL));
}

static void test_chains_and_effects(void)
{
    reset();
    Type f32 = type_scalar(DT_F32);
    IrValue *a = ir_binary(&b, IR_ADD, T_SP, pn, pn, t_i32());
    IrValue *m = ir_binary(&b, IR_MUL, T_SP, a, a, t_i32());
    ir_unary(&b, IR_CAST, T_SP, m, f32); /* dead chain: cast <- mul <- add */
    IrValue *lops[3] = {pp, NULL, NULL};
    ir_build(&b, IR_LOAD, T_SP, lops, 3, &f32, 1);                       /* dead load */
    ir_build(&b, IR_LOAD, T_SP, lops, 3, &f32, 1)->flags = IRF_VOLATILE; /* kept */
    IrValue *v = ir_const_float(&b, T_SP, f32, 1.0);
    IrValue *sops[3] = {pp, v, NULL};
    ir_build(&b, IR_STORE, T_SP, sops, 3, NULL, 0);
    IrValue *c = ir_const_int(&b, T_SP, type_scalar(DT_I1), 1);
    ir_build(&b, IR_ASSERT, T_SP, &c, 1, NULL, 0);
    ir_build(&b, IR_BARRIER, T_SP, NULL, 0, NULL, 0);
    IrValue *rops[3] = {pp, v, NULL};
    IrOp *rmw = ir_build(&b, IR_ATOMIC_RMW, T_SP, rops, 3, &f32, 1); /* result unused, kept */
    rmw->str = "acq_rel";
    rmw->str2 = "gpu";
    dce_and_verify();
    CHECK(count_kind(f->body, IR_ADD) == 0 && count_kind(f->body, IR_MUL) == 0);
    CHECK(count_kind(f->body, IR_CAST) == 0);
    CHECK(count_kind(f->body, IR_LOAD) == 1);
    CHECK(count_kind(f->body, IR_STORE) == 1 && count_kind(f->body, IR_ASSERT) == 1);
    CHECK(count_kind(f->body, IR_BARRIER) == 1 && count_kind(f->body, IR_ATOMIC_RMW) == 1);
    CHECK(count_ops(f->body) == 7);
    CHECK(f->next_id == 2 + 4); /* params, load, two consts, atomic: dense */
}

/* for i in range(0, n, 1) with carried (a: i32, s: fp32); a store inside
 * when `effect`. Returns the loop. */
static IrOp *loop(bool effect, IrValue **body_sum)
{
    IrValue *zero = ir_const_int(&b, T_SP, t_i32(), 0);
    IrValue *one = ir_const_int(&b, T_SP, t_i32(), 1);
    IrValue *fz = ir_const_float(&b, T_SP, type_scalar(DT_F32), 0.0);
    IrValue *ops[5] = {zero, pn, one, zero, fz};
    Type rt[2] = {t_i32(), type_scalar(DT_F32)};
    IrOp *l = ir_build(&b, IR_FOR, T_SP, ops, 5, rt, 2);
    IrBlock *body = ir_op_add_region(f, l);
    IrValue *iv = ir_block_add_arg(f, body, t_i32(), "i");
    IrValue *a = ir_block_add_arg(f, body, t_i32(), "a");
    IrValue *s = ir_block_add_arg(f, body, type_scalar(DT_F32), "s");
    IrBuilder in = {f, body, NULL};
    IrValue *a2 = ir_binary(&in, IR_ADD, T_SP, a, iv, t_i32());
    IrValue *s2 =
        ir_binary(&in, IR_ADD, T_SP, s, ir_unary(&in, IR_CAST, T_SP, iv, type_scalar(DT_F32)),
                  type_scalar(DT_F32));
    if (effect) {
        IrValue *sops[3] = {pp, s2, NULL};
        ir_build(&in, IR_STORE, T_SP, sops, 3, NULL, 0);
    }
    IrValue *y[2] = {a2, s2};
    ir_build(&in, IR_YIELD, T_SP, y, 2, NULL, 0);
    if (body_sum)
        *body_sum = s2;
    return l;
}

static void test_loops(void)
{
    reset();
    loop(false, NULL); /* nothing uses it: gone */
    dce_and_verify();
    CHECK(count_kind(f->body, IR_FOR) == 0 && count_ops(f->body) == 0 && f->next_id == 2);

    reset();
    loop(true, NULL); /* stores: stays, but carried `a` is dead */
    dce_and_verify();
    CHECK(count_kind(f->body, IR_FOR) == 1 && count_kind(f->body, IR_STORE) == 1);
    IrOp *l = f->body->last;
    CHECK(l->kind == IR_FOR && l->nres == 1 && l->nops == 4 && l->regions[0]->nargs == 2);
    CHECK(l->regions[0]->last->nops == 1 && count_kind(f->body, IR_CAST) == 1);
    CHECK(l->results[0]->type.dt == DT_F32);

    reset();
    IrOp *l2 = loop(false, NULL); /* only `a` read afterwards: `s` goes */
    IrValue *sops[3] = {pp, ir_unary(&b, IR_CAST, T_SP, l2->results[0], type_scalar(DT_F32)), NULL};
    ir_build(&b, IR_STORE, T_SP, sops, 3, NULL, 0);
    dce_and_verify();
    CHECK(l2->nres == 1 && l2->results[0]->type.dt == DT_I32 && l2->regions[0]->nargs == 2);
    CHECK(count_kind(l2->regions[0], IR_CAST) == 0 && count_kind(l2->regions[0], IR_ADD) == 1);
}

static void test_if_results(void)
{
    reset();
    IrValue *c = ir_const_int(&b, T_SP, type_scalar(DT_I1), 1);
    Type rt[2] = {t_i32(), t_i32()};
    IrOp *iff = ir_build(&b, IR_IF, T_SP, &c, 1, rt, 2);
    for (int r = 0; r < 2; r++) {
        IrBuilder in = {f, ir_op_add_region(f, iff), NULL};
        IrValue *x = ir_binary(&in, IR_ADD, T_SP, pn, pn, t_i32());
        IrValue *y = ir_binary(&in, IR_MUL, T_SP, pn, pn, t_i32());
        IrValue *ys[2] = {x, y};
        ir_build(&in, IR_YIELD, T_SP, ys, 2, NULL, 0);
    }
    IrValue *sv = ir_unary(&b, IR_CAST, T_SP, iff->results[1], type_scalar(DT_F32));
    IrValue *sops[3] = {pp, sv, NULL};
    ir_build(&b, IR_STORE, T_SP, sops, 3, NULL, 0);
    dce_and_verify();
    CHECK(iff->nres == 1 && count_kind(f->body, IR_ADD) == 0 && count_kind(f->body, IR_MUL) == 2);
}

int main(void)
{
    arena_init(&arena);
    test_chains_and_effects();
    test_loops();
    test_if_results();
    arena_free(&arena);
    return t_finish("ir_dce");
}
