/* ir_build.c: builds a vector-add kernel with the IR builder and checks the
 * dtypes/types helpers, the printed text form and the verifier. */
#include "ir_test.h"

static void test_dtypes(Arena *a)
{
    CHECK(dtype_parse("float32") == DT_F32);
    CHECK(dtype_parse("tl.bfloat16") == DT_BF16);
    CHECK(dtype_parse("bool") == DT_I1);
    CHECK(dtype_parse("uint8") == DT_U8);
    CHECK(dtype_parse("nope") == DT_VOID);
    CHECK(dtype_bits(DT_F16) == 16 && dtype_bits(DT_PTR) == 64);
    CHECK(dtype_is_signed(DT_I8) && !dtype_is_signed(DT_I1) && !dtype_is_signed(DT_U32));
    CHECK(dtype_is_int(DT_I1) && !dtype_is_int(DT_F32) && dtype_is_float(DT_BF16));
    int sh[2] = {32, 64};
    CHECK(strcmp(type_str(a, type_block(DT_F16, 2, sh)), "<32x64xfp16>") == 0);
    CHECK(strcmp(type_str(a, type_ptr(DT_F32)), "ptr<fp32>") == 0);
    Type pb = type_with_shape(type_ptr(DT_F32), 1, (int[]){128});
    CHECK(strcmp(type_str(a, pb), "<128xptr<fp32>>") == 0);
    CHECK(type_eq(type_elem(pb), type_ptr(DT_F32)));
    CHECK(type_numel(type_block(DT_F16, 2, sh)) == 2048);
    CHECK(!type_eq(type_ptr(DT_F32), type_ptr(DT_F16)));
}

static const char *expected =
    "kernel @vector_add(%0: ptr<fp32> {div=16}, %1: ptr<fp32>, %2: ptr<fp32>, %3: i32) "
    "num_warps=4 num_stages=3 {  // x, y, out, n\n"
    "  %4 = program_id 0 : i32  // pid\n"
    "  %5 = const 1024 : i32\n"
    "  %6 = mul %4, %5 : i32\n"
    "  %7 = arange 0, 1024 : <1024xi32>\n"
    "  %8 = splat %6 : <1024xi32>\n"
    "  %9 = add %8, %7 : <1024xi32>  // offs\n"
    "  %10 = splat %3 : <1024xi32>\n"
    "  %11 = cmp lt %9, %10 : <1024xi1>\n"
    "  %12 = splat %0 : <1024xptr<fp32>>\n"
    "  %13 = addptr %12, %9 : <1024xptr<fp32>>\n"
    "  %14 = load %13, %11, _ : <1024xfp32>\n"
    "  %15 = cast %14 : <1024xfp32> -> <1024xfp16>\n"
    "  store %13, %14, %11\n"
    "}\n";

static void test_vector_add(Arena *a)
{
    IrFunc *f = ir_func_new(a, "vector_add", NULL);
    Span sp = {1, 1, 1, 2, 0};
    IrValue *x = ir_add_param(f, "x", type_ptr(DT_F32), 16, sp);
    ir_add_param(f, "y", type_ptr(DT_F32), 1, sp);
    ir_add_param(f, "out", type_ptr(DT_F32), 1, sp);
    IrValue *n = ir_add_param(f, "n", type_scalar(DT_I32), 1, sp);
    IrBuilder b = {f, f->body, NULL};
    Type i32 = type_scalar(DT_I32);
    int sh[1] = {1024};
    Type vi = type_block(DT_I32, 1, sh);
    IrOp *pid = ir_build(&b, IR_PROGRAM_ID, sp, NULL, 0, &i32, 1);
    pid->results[0]->name = "pid";
    IrValue *c = ir_const_int(&b, sp, i32, 1024);
    IrValue *start = ir_binary(&b, IR_MUL, sp, pid->results[0], c, i32);
    IrOp *ar = ir_build(&b, IR_ARANGE, sp, NULL, 0, &vi, 1);
    ar->ival2 = 1024;
    IrValue *offs =
        ir_binary(&b, IR_ADD, sp, ir_unary(&b, IR_SPLAT, sp, start, vi), ar->results[0], vi);
    offs->name = "offs";
    IrValue *mask = ir_binary(&b, IR_CMP, sp, offs, ir_unary(&b, IR_SPLAT, sp, n, vi),
                              type_block(DT_I1, 1, sh));
    mask->def->sub = CMP_LT;
    Type vp = type_with_shape(type_ptr(DT_F32), 1, sh);
    IrValue *p = ir_binary(&b, IR_ADDPTR, sp, ir_unary(&b, IR_SPLAT, sp, x, vp), offs, vp);
    Type vf = type_block(DT_F32, 1, sh);
    IrValue *lops[3] = {p, mask, NULL};
    IrValue *v = ir_build(&b, IR_LOAD, sp, lops, 3, &vf, 1)->results[0];
    ir_unary(&b, IR_CAST, sp, v, type_block(DT_F16, 1, sh));
    IrValue *sops[3] = {p, v, mask};
    ir_build(&b, IR_STORE, sp, sops, 3, NULL, 0);

    StrBuf sb;
    sb_init(&sb);
    ir_print(&sb, f);
    if (strcmp(sb.data, expected) != 0) {
        fprintf(stderr, "printed:\n%s\nexpected:\n%s\n", sb.data, expected);
        failures++;
    }
    sb_free(&sb);
    Diag d;
    diag_init(&d, NULL);
    CHECK(ir_verify(f, &d));
    if (d.text.len)
        fprintf(stderr, "%s", d.text.data);
    diag_free(&d);
}

int main(void)
{
    Arena a;
    arena_init(&a);
    test_dtypes(&a);
    test_vector_add(&a);
    arena_free(&a);
    return t_finish("ir_build");
}
