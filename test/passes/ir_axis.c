/* ir_axis.c: axis analysis on small hand-built kernels: the vector-add
 * addressing (contiguity 1024, 16-byte alignment, mask constancy from n's
 * divisibility), 2-D tiles with strides, loop-carried pointers, the loop
 * induction variable, div/rem and hints; and the vector width each gives. */
#include "ir_test.h"
#include "passes/passes.h"

static Arena arena;
static IrFunc *f;
static IrBuilder b;

static IrFunc *new_func(void)
{
    f = ir_func_new(&arena, "k", NULL);
    b = (IrBuilder){f, f->body, NULL};
    return f;
}

static Type with(Type t, DType dt)
{
    t.dt = dt;
    t.elem = DT_VOID;
    return t;
}
static Type ptrs(DType elem, Type shape_of)
{
    return type_with_shape(type_ptr(elem), shape_of.rank, shape_of.shape);
}

static IrValue *splat(IrValue *x, Type t) { return ir_unary(&b, IR_SPLAT, T_SP, x, t); }
static IrValue *add(IrValue *x, IrValue *y) { return ir_binary(&b, IR_ADD, T_SP, x, y, x->type); }
static IrValue *mul(IrValue *x, IrValue *y) { return ir_binary(&b, IR_MUL, T_SP, x, y, x->type); }
static IrValue *addptr(IrValue *p, IrValue *o)
{
    return ir_binary(&b, IR_ADDPTR, T_SP, p, o, p->type);
}
static IrValue *cint(int64_t v) { return ir_const_int(&b, T_SP, t_i32(), v); }

static IrValue *lt(IrValue *x, IrValue *y)
{
    IrValue *r = ir_binary(&b, IR_CMP, T_SP, x, y, with(x->type, DT_I1));
    r->def->sub = CMP_LT;
    return r;
}

static bool info_is(const AxisInfo *ai, const IrValue *v, int d, int64_t contig, int64_t div,
                    int64_t cst)
{
    const AxisInfo *x = &ai[v->id];
    bool ok = x->contiguity[d] == contig && x->divisibility[d] == div && x->constancy[d] == cst;
    if (!ok)
        fprintf(stderr,
                "  %%%d dim %d: contiguity %lld divisibility %lld constancy %lld, want %lld %lld "
                "%lld\n",
                v->id, d, (long long)x->contiguity[d], (long long)x->divisibility[d],
                (long long)x->constancy[d], (long long)contig, (long long)div, (long long)cst);
    return ok;
}

/* ptr + pid * 1024 + arange(0, 1024), mask offs < n */
static void test_vector_add(int ptr_div, int n_div, int want_width, int want_masked)
{
    new_func();
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), ptr_div, T_SP);
    IrValue *n = ir_add_param(f, "n", t_i32(), n_div, T_SP);
    Type v = t_vec(DT_I32, 1024);
    IrValue *pid = ir_build(&b, IR_PROGRAM_ID, T_SP, NULL, 0, (Type[]){t_i32()}, 1)->results[0];
    IrValue *start = mul(pid, cint(1024));
    IrValue *offs = add(splat(start, v), t_arange(&b, 0, 1024));
    IrValue *mask = lt(offs, splat(n, v));
    IrValue *p = addptr(splat(x, ptrs(DT_F32, v)), offs);
    CHECK(t_verify(f, true, NULL));
    AxisInfo *ai = axis_analyze(f, &arena);
    CHECK(ai != NULL);
    if (!ai)
        return;
    CHECK(info_is(ai, start, 0, 1, 1024, 1));
    CHECK(info_is(ai, offs, 0, 1024, 1024, 1));
    CHECK(info_is(ai, p, 0, 1024, ptr_div, 1));
    CHECK(info_is(ai, mask, 0, 1, 1, n_div));
    CHECK(axis_vector_width(ai, p, NULL, 4) == want_width);
    CHECK(axis_vector_width(ai, p, mask, 4) == want_masked);
}

/* ptr{16} + k + arange: k is a runtime offset of unknown alignment */
static void test_unaligned_offset(void)
{
    new_func();
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), 16, T_SP);
    IrValue *k = ir_add_param(f, "k", t_i32(), 1, T_SP);
    Type v = t_vec(DT_I32, 256);
    IrValue *offs = add(splat(k, v), t_arange(&b, 0, 256));
    IrValue *p = addptr(splat(x, ptrs(DT_F32, v)), offs);
    /* with a multiple_of(k, 4) hint the fp32 accesses are 16-byte aligned */
    IrValue *k4 = ir_unary(&b, IR_HINT, T_SP, k, t_i32());
    k4->def->sub = HINT_MULTIPLE_OF;
    k4->def->ints[0] = 4;
    k4->def->nints = 1;
    IrValue *p4 = addptr(splat(x, ptrs(DT_F32, v)), add(splat(k4, v), t_arange(&b, 0, 256)));
    IrValue *h = ir_build(&b, IR_LOAD, T_SP, (IrValue *[]){p, NULL, NULL}, 3,
                          (Type[]){t_vec(DT_F32, 256)}, 1)
                     ->results[0];
    CHECK(t_verify(f, true, NULL));
    AxisInfo *ai = axis_analyze(f, &arena);
    CHECK(info_is(ai, p, 0, 256, 4, 1));
    CHECK(axis_vector_width(ai, p, NULL, 4) == 1);
    CHECK(info_is(ai, p4, 0, 256, 16, 1));
    CHECK(axis_vector_width(ai, p4, NULL, 4) == 4);
    CHECK(axis_vector_width(ai, p4, NULL, 2) == 8);  /* fp16: 16 bytes = 8 */
    CHECK(axis_vector_width(ai, p4, NULL, 1) == 16); /* 16 bytes */
    CHECK(info_is(ai, h, 0, 1, 1, 1));
}

/* ptr + rows[:, None] * stride + cols[None, :] over a 32x64 tile */
static void test_tile(int stride_div, int want)
{
    new_func();
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), 16, T_SP);
    IrValue *stride = ir_add_param(f, "stride", t_i32(), stride_div, T_SP);
    Type tile = t_mat(DT_I32, 32, 64);
    IrValue *rows = ir_unary(&b, IR_EXPAND_DIMS, T_SP, t_arange(&b, 0, 32), t_mat(DT_I32, 32, 1));
    rows->def->axis = 1;
    IrValue *cols = ir_unary(&b, IR_EXPAND_DIMS, T_SP, t_arange(&b, 0, 64), t_mat(DT_I32, 1, 64));
    cols->def->axis = 0;
    IrValue *r = mul(rows, splat(stride, t_mat(DT_I32, 32, 1)));
    IrValue *offs = add(ir_unary(&b, IR_BROADCAST, T_SP, r, tile),
                        ir_unary(&b, IR_BROADCAST, T_SP, cols, tile));
    IrValue *p = addptr(splat(x, ptrs(DT_F32, tile)), offs);
    CHECK(t_verify(f, true, NULL));
    AxisInfo *ai = axis_analyze(f, &arena);
    CHECK(info_is(ai, rows, 0, 32, TK_AXIS_MAX_DIV, 1) && info_is(ai, rows, 1, 1, 1, 1));
    CHECK(info_is(ai, offs, 1, 64, stride_div, 1));
    CHECK(info_is(ai, offs, 0, 1, 1, 1)); /* i*stride + j: j breaks it */
    CHECK(info_is(ai, r, 0, 1, stride_div, 1));
    CHECK(axis_vector_width(ai, p, NULL, 4) == want);
}

/* for k in range(0, n, 16): acc += load(p); p += 32  (p carried) */
static void test_loop(void)
{
    new_func();
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), 16, T_SP);
    IrValue *n = ir_add_param(f, "n", t_i32(), 1, T_SP);
    Type v = t_vec(DT_I32, 128);
    IrValue *p0 = addptr(splat(x, ptrs(DT_F32, v)), t_arange(&b, 0, 128));
    IrValue *q0 = addptr(splat(x, ptrs(DT_F32, v)), t_arange(&b, 0, 128));
    IrValue *ops[5] = {cint(0), n, cint(16), p0, q0};
    IrOp *loop = ir_build(&b, IR_FOR, T_SP, ops, 5, (Type[]){p0->type, q0->type}, 2);
    IrBlock *body = ir_op_add_region(f, loop);
    IrValue *iv = ir_block_add_arg(f, body, t_i32(), "k");
    IrValue *p = ir_block_add_arg(f, body, p0->type, "p");
    IrValue *q = ir_block_add_arg(f, body, q0->type, "q");
    IrBuilder outer = b;
    b = (IrBuilder){f, body, NULL};
    IrValue *pn = addptr(p, splat(cint(32), v));  /* stays aligned */
    IrValue *qn = addptr(q, splat(iv, v));        /* k: multiple of 16 -> 64 bytes */
    IrValue *qodd = addptr(q, splat(cint(1), v)); /* would misalign q */
    ir_build(&b, IR_YIELD, T_SP, (IrValue *[]){pn, qodd}, 2, NULL, 0);
    b = outer;
    CHECK(t_verify(f, true, NULL));
    AxisInfo *ai = axis_analyze(f, &arena);
    CHECK(info_is(ai, iv, 0, 1, 16, 1));
    CHECK(info_is(ai, p, 0, 128, 16, 1) && axis_vector_width(ai, p, NULL, 4) == 4);
    CHECK(info_is(ai, loop->results[0], 0, 128, 16, 1));
    CHECK(info_is(ai, q, 0, 128, 4, 1) && axis_vector_width(ai, q, NULL, 4) == 1);
    CHECK(info_is(ai, qn, 0, 128, 4, 1));
}

static void test_div_rem(void)
{
    new_func();
    Type v = t_vec(DT_I32, 64);
    IrValue *a = t_arange(&b, 0, 64);
    IrValue *q = ir_binary(&b, IR_DIV, T_SP, a, splat(cint(4), v), v);
    IrValue *r = ir_binary(&b, IR_REM, T_SP, a, splat(cint(8), v), v);
    IrValue *sh = ir_binary(&b, IR_SHL, T_SP, splat(cint(3), v), splat(cint(4), v), v);
    IrValue *c = ir_binary(&b, IR_SUB, T_SP, a, splat(cint(16), v), v);
    AxisInfo *ai = axis_analyze(f, &arena);
    CHECK(info_is(ai, q, 0, 1, 1, 4));
    CHECK(info_is(ai, r, 0, 8, 8, 1));
    CHECK(info_is(ai, sh, 0, 1, 16, 64) && ai[sh->id].known_const && ai[sh->id].value == 48);
    CHECK(info_is(ai, c, 0, 64, 16, 1));
}

int main(void)
{
    arena_init(&arena);
    test_vector_add(16, 16, 4, 4);
    test_vector_add(16, 1, 4, 1);
    test_vector_add(1, 16, 1, 1);
    test_unaligned_offset();
    test_tile(16, 4);
    test_tile(1, 1);
    test_loop();
    test_div_rem();
    arena_free(&arena);
    return t_finish("ir_axis");
}
