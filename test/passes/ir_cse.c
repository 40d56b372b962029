/* ir_cse.c: pass_cse merges equal pure ops in dominating scopes only, never
 * loads or side effects, and hoists loop-invariant pure ops (not integer
 * division, not loads) out of nested `for` loops. */
#include "ir_test.h"

static Arena arena;
static IrFunc *f;
static IrBuilder b;
static IrValue *pp, *pn, *pm;

static void reset(void)
{
    f = ir_func_new(&arena, "k", NULL);
    pp = ir_add_param(f, "p", type_ptr(DT_I32), 16, T_SP);
    pn = ir_add_param(f, "n", t_i32(), 1, T_SP);
    pm = ir_add_param(f, "m", t_i32(), 1, T_SP);
    b = (IrBuilder){f, f->body, NULL};
}

static IrOp *sink(IrBuilder *bb, IrValue *v) { return ir_build(bb, IR_PRINT, T_SP, &v, 1, NULL, 0); }
static IrValue *add(IrBuilder *bb, IrValue *x, IrValue *y) { return ir_binary(bb, IR_ADD, T_SP, x, y, x->type); }

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

static void test_cse(void)
{
    reset();
    IrValue *a1 = add(&b, pn, pm), *a2 = add(&b, pn, pm), *a3 = add(&b, pm, pn);
    IrValue *c1 = ir_const_int(&b, T_SP, t_i32(), 7), *c2 = ir_const_int(&b, T_SP, t_i32(), 7);
    IrValue *lt = ir_binary(&b, IR_CMP, T_SP, pn, pm, type_scalar(DT_I1));
    lt->def->sub = CMP_LT;
    IrValue *gt = ir_binary(&b, IR_CMP, T_SP, pn, pm, type_scalar(DT_I1));
    gt->def->sub = CMP_GT;
    IrValue *l1 = ir_build(&b, IR_LOAD, T_SP, (IrValue *[]){pp, NULL, NULL}, 3, (Type[]){t_i32()}, 1)->results[0];
    IrValue *l2 = ir_build(&b, IR_LOAD, T_SP, (IrValue *[]){pp, NULL, NULL}, 3, (Type[]){t_i32()}, 1)->results[0];
    IrOp *s[] = {sink(&b, a1), sink(&b, a2), sink(&b, a3), sink(&b, c1), sink(&b, c2),
                 sink(&b, lt), sink(&b, gt), sink(&b, l1), sink(&b, l2)};
    /* inside an if: a copy of a1 is replaced by the outer one; copies in
     * the two branches are not merged with each other */
    IrOp *iff = ir_build(&b, IR_IF, T_SP, &lt, 1, NULL, 0);
    IrBuilder th = {f, ir_op_add_region(f, iff), NULL};
    IrOp *in1 = sink(&th, add(&th, pn, pm));
    IrOp *t1 = sink(&th, ir_binary(&th, IR_MUL, T_SP, pn, pn, t_i32()));
    ir_build(&th, IR_YIELD, T_SP, NULL, 0, NULL, 0);
    IrBuilder el = {f, ir_op_add_region(f, iff), NULL};
    IrOp *e1 = sink(&el, ir_binary(&el, IR_MUL, T_SP, pn, pn, t_i32()));
    ir_build(&el, IR_YIELD, T_SP, NULL, 0, NULL, 0);
    pass_cse(f);
    CHECK(t_verify(f, true, NULL));
    CHECK(s[0]->operands[0] == a1 && s[1]->operands[0] == a1 && s[2]->operands[0] == a3);
    CHECK(s[3]->operands[0] == c1 && s[4]->operands[0] == c1);
    CHECK(s[5]->operands[0] != s[6]->operands[0]);
    CHECK(s[7]->operands[0] == l1 && s[8]->operands[0] == l2);
    CHECK(in1->operands[0] == a1);
    CHECK(t1->operands[0] != e1->operands[0] && count_kind(f->body, IR_MUL) == 2);
}

/* for i: for j: print(n*m + i, n / m, load p, (n+1)*2) */
static void test_licm(void)
{
    reset();
    IrValue *zero = ir_const_int(&b, T_SP, t_i32(), 0), *one = ir_const_int(&b, T_SP, t_i32(), 1);
    IrValue *outer_nm = ir_binary(&b, IR_MUL, T_SP, pn, pm, t_i32()); /* merges with the hoisted copy */
    sink(&b, outer_nm);
    IrOp *lo = ir_build(&b, IR_FOR, T_SP, (IrValue *[]){zero, pn, one}, 3, NULL, 0);
    IrBlock *ob = ir_op_add_region(f, lo);
    IrValue *i = ir_block_add_arg(f, ob, t_i32(), "i");
    IrBuilder ib = {f, ob, NULL};
    IrOp *li = ir_build(&ib, IR_FOR, T_SP, (IrValue *[]){zero, pm, one}, 3, NULL, 0);
    ir_build(&ib, IR_YIELD, T_SP, NULL, 0, NULL, 0);
    IrBlock *inb = ir_op_add_region(f, li);
    ir_block_add_arg(f, inb, t_i32(), "j");
    IrBuilder jb = {f, inb, NULL};
    IrValue *nm = ir_binary(&jb, IR_MUL, T_SP, pn, pm, t_i32());
    IrValue *v = add(&jb, nm, i);
    IrValue *q = ir_binary(&jb, IR_DIV, T_SP, pn, pm, t_i32());
    IrValue *ld = ir_build(&jb, IR_LOAD, T_SP, (IrValue *[]){pp, NULL, NULL}, 3, (Type[]){t_i32()}, 1)->results[0];
    IrValue *k = ir_binary(&jb, IR_MUL, T_SP, add(&jb, pn, ir_const_int(&jb, T_SP, t_i32(), 1)),
                           ir_const_int(&jb, T_SP, t_i32(), 2), t_i32());
    IrOp *sv = sink(&jb, v);
    sink(&jb, q);
    sink(&jb, ld);
    IrOp *sk = sink(&jb, k);
    ir_build(&jb, IR_YIELD, T_SP, NULL, 0, NULL, 0);
    pass_cse(f);
    CHECK(t_verify(f, true, NULL));
    CHECK(sv->operands[0]->def->parent == ob);                        /* n*m + i: out of j only */
    CHECK(sv->operands[0]->def->operands[0] == outer_nm);             /* n*m: hoisted, then merged */
    CHECK(q->def->parent == inb && ld->def->parent == inb);           /* division, load stay */
    CHECK(sk->operands[0]->def->parent == f->body);                   /* (n+1)*2: out of both */
    CHECK(count_kind(f->body, IR_MUL) == 2);
}

/* Equal blocks in different layouts (after pass_layout) stay apart: a
 * dot's accumulator must keep its mma layout (found by fuzz_sema). */
static void test_layouts(void)
{
    reset();
    Type t = type_block(DT_F32, 2, (int[]){16, 16});
    IrValue *z1 = ir_const_float(&b, T_SP, t, 0.0), *z2 = ir_const_float(&b, T_SP, t, 0.0);
    IrValue *z3 = ir_const_float(&b, T_SP, t, 0.0);
    Layout mma = layout_mma(16, 16, 4, 16);
    Layout blocked = layout_blocked_default(2, (int[]){16, 16}, 1, 128);
    z1->layout = z3->layout = ir_layout_intern(f, &blocked);
    z2->layout = ir_layout_intern(f, &mma);
    IrOp *s1 = sink(&b, z1), *s2 = sink(&b, z2), *s3 = sink(&b, z3);
    pass_cse(f);
    CHECK(s1->operands[0] == z1 && s2->operands[0] == z2 && s3->operands[0] == z1);
    CHECK(s2->operands[0]->layout->kind == LY_MMA);
}

int main(void)
{
    arena_init(&arena);
    test_cse();
    test_licm();
    test_layouts();
    arena_free(&arena);
    return t_finish("ir_cse");
}
