/* ir_verify.c: the verifier accepts well-formed control flow and rejects
 * each kind of broken IR with a diagnostic, without crashing. */
#include "ir_test.h"

#include <stdlib.h>

static IrFunc *new_func(Arena *a, IrBuilder *b, IrValue **p, IrValue **n)
{
    IrFunc *f = ir_func_new(a, "k", NULL);
    *p = ir_add_param(f, "p", type_ptr(DT_F32), 16, T_SP);
    *n = ir_add_param(f, "n", t_i32(), 1, T_SP);
    *b = (IrBuilder){f, f->body, NULL};
    return f;
}

/* for i in range(0, n, 1): acc += i   (acc: fp32 and i32 carried) */
static IrOp *build_for(IrBuilder *b, IrValue *n, IrValue **iv_out)
{
    IrValue *zero = ir_const_int(b, T_SP, t_i32(), 0);
    IrValue *one = ir_const_int(b, T_SP, t_i32(), 1);
    IrValue *fz = ir_const_float(b, T_SP, type_scalar(DT_F32), 0.0);
    IrValue *ops[5] = {zero, n, one, fz, zero};
    Type rt[2] = {type_scalar(DT_F32), t_i32()};
    IrOp *loop = ir_build(b, IR_FOR, T_SP, ops, 5, rt, 2);
    IrBlock *body = ir_op_add_region(b->f, loop);
    IrValue *iv = ir_block_add_arg(b->f, body, t_i32(), "i");
    IrValue *facc = ir_block_add_arg(b->f, body, type_scalar(DT_F32), "acc");
    IrValue *iacc = ir_block_add_arg(b->f, body, t_i32(), "k");
    IrBuilder in = {b->f, body, NULL};
    IrValue *fi = ir_unary(&in, IR_CAST, T_SP, iv, type_scalar(DT_F32));
    IrValue *s = t_op2(&in, IR_ADD, facc, fi, type_scalar(DT_F32));
    IrValue *k = t_op2(&in, IR_ADD, iacc, iv, t_i32());
    IrValue *y[2] = {s, k};
    ir_build(&in, IR_YIELD, T_SP, y, 2, NULL, 0);
    if (iv_out)
        *iv_out = iv;
    return loop;
}

static IrFunc *build_good(Arena *a)
{
    IrBuilder b;
    IrValue *p, *n;
    IrFunc *f = new_func(a, &b, &p, &n);
    IrOp *loop = build_for(&b, n, NULL);
    /* if n > 0: r = loop.0 else r = 1.0 */
    IrValue *zero = ir_const_int(&b, T_SP, t_i32(), 0);
    IrValue *c = t_op2(&b, IR_CMP, n, zero, type_scalar(DT_I1));
    c->def->sub = CMP_GT;
    Type f32 = type_scalar(DT_F32);
    IrOp *iff = ir_build(&b, IR_IF, T_SP, &c, 1, &f32, 1);
    IrBuilder th = {f, ir_op_add_region(f, iff), NULL};
    ir_build(&th, IR_YIELD, T_SP, &loop->results[0], 1, NULL, 0);
    IrBuilder el = {f, ir_op_add_region(f, iff), NULL};
    IrValue *one = ir_const_float(&el, T_SP, f32, 1.0);
    ir_build(&el, IR_YIELD, T_SP, &one, 1, NULL, 0);
    /* while k < n: k += 1 */
    IrOp *w = ir_build(&b, IR_WHILE, T_SP, &zero, 1, (Type[]){t_i32()}, 1);
    IrBlock *before = ir_op_add_region(f, w);
    IrValue *k = ir_block_add_arg(f, before, t_i32(), "k");
    IrBuilder bb = {f, before, NULL};
    IrValue *cc = t_op2(&bb, IR_CMP, k, n, type_scalar(DT_I1));
    cc->def->sub = CMP_LT;
    ir_build(&bb, IR_CONDITION, T_SP, (IrValue *[]){cc, k}, 2, NULL, 0);
    IrBlock *after = ir_op_add_region(f, w);
    IrValue *k2 = ir_block_add_arg(f, after, t_i32(), "k");
    IrBuilder ab = {f, after, NULL};
    IrValue *inc = t_op2(&ab, IR_ADD, k2, ir_const_int(&ab, T_SP, t_i32(), 1), t_i32());
    ir_build(&ab, IR_YIELD, T_SP, &inc, 1, NULL, 0);
    /* a custom reduce and a sum over <4x8xfp32> */
    Type m = t_mat(DT_F32, 4, 8);
    IrValue *x = ir_unary(&b, IR_SPLAT, T_SP, iff->results[0], m);
    IrOp *red = ir_build(&b, IR_REDUCE, T_SP, &x, 1, (Type[]){t_vec(DT_F32, 4)}, 1);
    red->axis = 1;
    red->sub = RED_CUSTOM;
    IrBlock *comb = ir_op_add_region(f, red);
    IrValue *ra = ir_block_add_arg(f, comb, f32, NULL);
    IrValue *rb = ir_block_add_arg(f, comb, f32, NULL);
    IrBuilder cb = {f, comb, NULL};
    IrValue *mx = t_op2(&cb, IR_MAX, ra, rb, f32);
    ir_build(&cb, IR_YIELD, T_SP, &mx, 1, NULL, 0);
    IrOp *am = ir_build(&b, IR_REDUCE, T_SP, &x, 1, (Type[]){t_vec(DT_I32, 8)}, 1);
    am->axis = 0;
    am->sub = RED_ARGMAX;
    /* dot <4x8> x <8x4> + <4x4> */
    IrValue *bm = ir_unary(&b, IR_SPLAT, T_SP, iff->results[0], t_mat(DT_F32, 8, 4));
    IrValue *acc = ir_unary(&b, IR_SPLAT, T_SP, iff->results[0], t_mat(DT_F32, 4, 4));
    t_op3(&b, IR_DOT, x, bm, acc, t_mat(DT_F32, 4, 4));
    return f;
}

static void test_good(Arena *a)
{
    IrFunc *f = build_good(a);
    CHECK(t_verify(f, true, NULL));
    char *txt = t_print(f);
    if (getenv("IR_DUMP"))
        fputs(txt, stderr);
    CHECK(txt &&
          strstr(txt,
                 "%5, %6 = for %2, %1, %3 iter(%4, %2) : fp32, i32 {\n"
                 "  ^(%7: i32, %8: fp32, %9: i32):  // i, acc, k\n"));
    CHECK(txt && strstr(txt, "} else {\n"));
    CHECK(txt && strstr(txt, "} do {\n"));
    CHECK(txt && strstr(txt, "reduce custom axis=1"));
    CHECK(txt && strstr(txt, "reduce argmax axis=0"));
    CHECK(txt && strstr(txt, "condition %"));
    tk_xfree(txt);
}

typedef void (*Breaker)(IrBuilder *b, IrValue *p, IrValue *n);

static void use_before_def(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *x = t_op2(b, IR_ADD, n, n, t_i32());
    IrValue *y = t_op2(b, IR_ADD, x, n, t_i32());
    ir_remove(x->def);
    ir_append(b->blk, x->def); /* now after its use */
    TK_UNUSED(y);
}

static void null_operand(IrBuilder *b, IrValue *p, IrValue *n)
{
    t_op2(b, IR_ADD, n, NULL, t_i32());
}

static void mixed_dtypes(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *f = ir_const_float(b, T_SP, type_scalar(DT_F32), 1.0);
    t_op2(b, IR_ADD, n, f, t_i32());
}

static void cmp_not_i1(IrBuilder *b, IrValue *p, IrValue *n) { t_op2(b, IR_CMP, n, n, t_i32()); }

static void bad_mask(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *ps = ir_unary(b, IR_SPLAT, T_SP, p, type_with_shape(type_ptr(DT_F32), 1, (int[]){8}));
    IrValue *m =
        ir_unary(b, IR_SPLAT, T_SP, ir_const_int(b, T_SP, type_scalar(DT_I1), 1), t_vec(DT_I1, 4));
    t_op3(b, IR_LOAD, ps, m, NULL, t_vec(DT_F32, 8));
}

static void load_wrong_type(IrBuilder *b, IrValue *p, IrValue *n)
{
    t_op3(b, IR_LOAD, p, NULL, NULL, type_scalar(DT_F16));
}

static void addptr_float(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *f = ir_const_float(b, T_SP, type_scalar(DT_F32), 1.0);
    t_op2(b, IR_ADDPTR, p, f, type_ptr(DT_F32));
}

static void yield_in_body(IrBuilder *b, IrValue *p, IrValue *n)
{
    ir_build(b, IR_YIELD, T_SP, &n, 1, NULL, 0);
}

static void for_yield_mismatch(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrOp *loop = build_for(b, n, NULL);
    IrOp *y = loop->regions[0]->last;
    y->operands[1] = y->operands[0]; /* fp32 where i32 is carried */
}

static void for_no_terminator(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrOp *loop = build_for(b, n, NULL);
    ir_remove(loop->regions[0]->last);
}

static void region_value_escapes(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *iv;
    build_for(b, n, &iv);
    t_op2(b, IR_ADD, iv, n, t_i32());
}

static void float_bounds(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrOp *loop = build_for(b, n, NULL);
    loop->operands[1] = loop->operands[5 - 2]; /* fp32 upper bound */
}

static void bad_reduce_shape(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *x = ir_unary(b, IR_SPLAT, T_SP, n, t_mat(DT_I32, 4, 8));
    IrOp *r = ir_build(b, IR_REDUCE, T_SP, &x, 1, (Type[]){t_vec(DT_I32, 8)}, 1);
    r->axis = 1;
}

static void bad_dot(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *f = ir_const_float(b, T_SP, type_scalar(DT_F32), 1.0);
    IrValue *x = ir_unary(b, IR_SPLAT, T_SP, f, t_mat(DT_F32, 4, 8));
    IrValue *acc = ir_unary(b, IR_SPLAT, T_SP, f, t_mat(DT_F32, 4, 4));
    t_op3(b, IR_DOT, x, x, acc, t_mat(DT_F32, 4, 4));
}

static void bad_select(IrBuilder *b, IrValue *p, IrValue *n)
{
    t_op3(b, IR_SELECT, n, n, n, t_i32());
}

static void bad_if_cond(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrOp *iff = ir_build(b, IR_IF, T_SP, &n, 1, NULL, 0);
    IrBuilder th = {b->f, ir_op_add_region(b->f, iff), NULL};
    ir_build(&th, IR_YIELD, T_SP, NULL, 0, NULL, 0);
}

static void bad_broadcast(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *x = ir_unary(b, IR_SPLAT, T_SP, n, t_mat(DT_I32, 2, 8));
    ir_unary(b, IR_BROADCAST, T_SP, x, t_mat(DT_I32, 4, 8));
}

static void bad_arange(IrBuilder *b, IrValue *p, IrValue *n) { t_arange(b, 0, 8)->def->ival2 = 16; }

static void duplicate_id(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *x = t_op2(b, IR_ADD, n, n, t_i32());
    x->id = n->id;
}

static void id_out_of_range(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *x = t_op2(b, IR_ADD, n, n, t_i32());
    x->id = 9999;
}

static void id_gap(IrBuilder *b, IrValue *p, IrValue *n)
{
    Type t = t_i32();
    ir_op_new(b->f, IR_ADD, T_SP, (IrValue *[]){n, n}, 2, &t, 1); /* never placed */
    t_op2(b, IR_ADD, n, n, t);
}

static void null_regions(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrOp *loop = build_for(b, n, NULL);
    loop->regions[0] = NULL;
}

static void missing_operand_array(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *x = t_op2(b, IR_ADD, n, n, t_i32());
    x->def->operands = NULL;
}

static void huge_rank(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *x = ir_unary(b, IR_SPLAT, T_SP, n, t_vec(DT_I32, 4));
    x->type.rank = 77;
    t_op2(b, IR_ADD, x, x, t_vec(DT_I32, 4));
}

static void wrong_trans(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrValue *x = ir_unary(b, IR_SPLAT, T_SP, n, t_mat(DT_I32, 4, 8));
    IrValue *t = ir_unary(b, IR_TRANS, T_SP, x, t_mat(DT_I32, 4, 8));
    t->def->nints = 2;
    t->def->ints[0] = 1;
    t->def->ints[1] = 0;
}

static void while_cond_not_i1(IrBuilder *b, IrValue *p, IrValue *n)
{
    IrOp *w = ir_build(b, IR_WHILE, T_SP, &n, 1, (Type[]){t_i32()}, 1);
    IrBlock *before = ir_op_add_region(b->f, w);
    IrValue *k = ir_block_add_arg(b->f, before, t_i32(), "k");
    IrBuilder bb = {b->f, before, NULL};
    ir_build(&bb, IR_CONDITION, T_SP, (IrValue *[]){k, k}, 2, NULL, 0);
    IrBlock *after = ir_op_add_region(b->f, w);
    IrValue *k2 = ir_block_add_arg(b->f, after, t_i32(), "k");
    IrBuilder ab = {b->f, after, NULL};
    ir_build(&ab, IR_YIELD, T_SP, &k2, 1, NULL, 0);
}

/* atomics carry Triton's sem and scope by name; anything else is broken IR */
static void atomic_rmw_on(IrBuilder *b, IrValue *p, const char *sem, const char *scope)
{
    IrValue *one = ir_const_float(b, T_SP, type_scalar(DT_F32), 1.0);
    IrOp *op = ir_build(b, IR_ATOMIC_RMW, T_SP, (IrValue *[]){p, one, NULL}, 3,
                        (Type[]){type_scalar(DT_F32)}, 1);
    op->str = sem;
    op->str2 = scope;
}

static void atomic_bad_sem(IrBuilder *b, IrValue *p, IrValue *n)
{
    TK_UNUSED(n);
    atomic_rmw_on(b, p, "seq_cst", "gpu");
}

static void atomic_no_scope(IrBuilder *b, IrValue *p, IrValue *n)
{
    TK_UNUSED(n);
    atomic_rmw_on(b, p, "relaxed", NULL);
}

static void cas_bad_scope(IrBuilder *b, IrValue *p, IrValue *n)
{
    TK_UNUSED(n);
    IrValue *one = ir_const_float(b, T_SP, type_scalar(DT_F32), 1.0);
    IrOp *op = ir_build(b, IR_ATOMIC_CAS, T_SP, (IrValue *[]){p, one, one}, 3,
                        (Type[]){type_scalar(DT_F32)}, 1);
    op->str = "acq_rel";
    op->str2 = "warp";
}

static const struct {
    const char *name;
    Breaker fn;
    const char *needle;
} cases[] = {
    {"use before def", use_before_def, "not defined before this use"},
    {"null operand", null_operand, "operand 1 is missing"},
    {"mixed dtypes", mixed_dtypes, "operand and result types differ"},
    {"cmp not i1", cmp_not_i1, "result must be i1"},
    {"bad mask", bad_mask, "mask <4xi1> does not match pointer <8xptr<fp32>>"},
    {"load wrong type", load_wrong_type, "result is not the pointee"},
    {"addptr float", addptr_float, "offset must be an integer"},
    {"yield in body", yield_in_body, "terminator outside"},
    {"for yield mismatch", for_yield_mismatch, "value 1 is fp32, 'for' needs i32"},
    {"for no terminator", for_no_terminator, "does not end in 'yield'"},
    {"region value escapes", region_value_escapes, "not defined before this use"},
    {"float bounds", float_bounds, "bounds must be scalar ints"},
    {"bad reduce shape", bad_reduce_shape, "result 0 is <8xi32>, expected <4xi32>"},
    {"bad dot", bad_dot, "shapes do not multiply"},
    {"bad select", bad_select, "condition must be i1"},
    {"bad if cond", bad_if_cond, "condition must be a scalar i1"},
    {"bad broadcast", bad_broadcast, "cannot broadcast"},
    {"bad arange", bad_arange, "range [0, 16)"},
    {"duplicate id", duplicate_id, "defined twice"},
    {"id out of range", id_out_of_range, "outside"},
    {"id gap", id_gap, "not dense: no value has id %2"},
    {"null region", null_regions, "region 0 is missing"},
    {"missing operand array", missing_operand_array, "arrays are missing"},
    {"huge rank", huge_rank, "rank 77"},
    {"wrong trans", wrong_trans, "bad permutation"},
    {"while cond not i1", while_cond_not_i1, "condition must be a scalar i1"},
    {"atomic bad sem", atomic_bad_sem, "bad memory semantics 'seq_cst'"},
    {"atomic no scope", atomic_no_scope, "bad memory scope '(none)'"},
    {"cas bad scope", cas_bad_scope, "bad memory scope 'warp'"},
};

/* ---- random damage: the verifier and the printer must survive anything ---- */

static unsigned long rng = 12345;

static int rnd(int n)
{
    rng = rng * 6364136223846793005ul + 1442695040888963407ul;
    return (int)((rng >> 33) % (unsigned long)(n > 0 ? n : 1));
}

static bool collect(IrOp *op, void *ctx)
{
    PtrVec *v = ((void **)ctx)[0];
    Arena *a = ((void **)ctx)[1];
    vec_push(a, v, op);
    return true;
}

static void damage(IrOp *op, IrOp *other)
{
    switch (rnd(9)) {
    case 0:
        if (op->nops)
            op->operands[rnd(op->nops)] = NULL;
        break;
    case 1:
        if (op->nops && other->nres)
            op->operands[rnd(op->nops)] = other->results[0];
        break;
    case 2: op->kind = (IrKind)rnd(IR_OP_COUNT + 3); break;
    case 3:
        if (op->nops)
            op->nops = rnd(op->nops);
        break;
    case 4:
        if (op->nres) {
            Type *t = &op->results[0]->type;
            t->rank = rnd(TK_MAX_RANK + 1);
            for (int d = 0; d < TK_MAX_RANK; d++)
                t->shape[d] = rnd(5) - 1;
            t->dt = (DType)rnd(DT_COUNT);
            t->elem = (DType)rnd(DT_COUNT);
        }
        break;
    case 5:
        op->sub = rnd(40) - 5;
        op->axis = rnd(10) - 3;
        op->nints = rnd(TK_MAX_RANK + 1);
        break;
    case 6:
        if (op->parent && op->kind != IR_YIELD)
            ir_remove(op);
        break;
    case 7:
        if (op->nregions)
            op->regions[rnd(op->nregions)]->nargs = 0;
        break;
    default:
        if (op->nres)
            op->results[0]->id = rnd(200) - 10;
        break;
    }
}

static void test_fuzz(void)
{
    int rejected = 0;
    for (int iter = 0; iter < 3000; iter++) {
        Arena a;
        arena_init(&a);
        IrFunc *f = build_good(&a);
        PtrVec ops = {0};
        void *ctx[2] = {&ops, &a};
        ir_walk(f->body, collect, ctx);
        int hits = 1 + rnd(3);
        for (int h = 0; h < hits; h++)
            damage(ops.items[rnd(ops.len)], ops.items[rnd(ops.len)]);
        Diag d;
        diag_init(&d, NULL);
        rejected += !ir_verify(f, &d);
        diag_free(&d);
        char *txt = t_print(f);
        tk_xfree(txt);
        arena_free(&a);
    }
    if (getenv("IR_DUMP"))
        fprintf(stderr, "rejected %d\n", rejected);
    CHECK(rejected > 2000); /* most damage is caught; none of it crashes */
}

/* After pass_layout the verifier checks layouts: an add whose operands sit in
 * different layouts (no convert_layout between them) is rejected, the same
 * function with the pass's layouts is accepted. */
static void test_layouts(Arena *a)
{
    IrBuilder b;
    IrValue *p, *n;
    IrFunc *f = new_func(a, &b, &p, &n);
    IrValue *x = t_arange(&b, 0, 128);
    IrValue *y = t_op2(&b, IR_ADD, x, x, t_vec(DT_I32, 128));
    (void)y;
    CHECK(pass_layout(f));
    CHECK(t_verify(f, true, NULL));
    Layout other = layout_blocked_default(1, (int[]){128}, 1, 128);
    x->layout = ir_layout_intern(f, &other);
    CHECK(t_verify(f, false, "operand layout differs from the result's"));
    Layout huge = layout_mma(128, 128, 4);
    x->layout = ir_layout_intern(f, &huge);
    CHECK(t_verify(f, false, "layout does not fit the shape"));
}

int main(void)
{
    Arena a;
    arena_init(&a);
    test_good(&a);
    test_layouts(&a);
    for (int i = 0; i < TK_ARRAY_LEN(cases); i++) {
        IrBuilder b;
        IrValue *p, *n;
        IrFunc *f = new_func(&a, &b, &p, &n);
        cases[i].fn(&b, p, n);
        if (!t_verify(f, false, cases[i].needle)) {
            fprintf(stderr, "  in case '%s'\n", cases[i].name);
            failures++;
        }
        char *txt = t_print(f); /* printing broken IR must not crash either */
        tk_xfree(txt);
    }
    arena_free(&a);
    test_fuzz();
    return t_finish("ir_verify");
}
