/* ir_axis_hints.c: hints stated on the op that defines a value (IrHints)
 * replace what the axis analysis derives for it, and for every use; read
 * from IR text, so the printed form is checked too. Also the IR reader's
 * and verifier's answers to hints that cannot stand. */
#include "ir_test.h"
#include "passes/passes.h"

static Arena arena;

/* The kernels of text, or NULL with the diagnostics in *msg. */
static IrFunc *parse(const char *text, StrBuf *msg)
{
    Source src = {"hints.tkir", text, strlen(text)};
    Diag d;
    diag_init(&d, &src);
    IrFunc **fs = NULL;
    int n = ir_parse(&src, &arena, &d, &fs);
    if (msg && d.text.data)
        sb_puts(msg, d.text.data);
    diag_free(&d);
    return n == 1 ? fs[0] : NULL;
}

static const IrValue *value(const IrFunc *f, int id)
{
    const IrOp *o = f->body->first;
    for (; o; o = o->next)
        if (o->nres == 1 && o->results[0]->id == id)
            return o->results[0];
    return NULL;
}

/* A pointer loaded from a table, offset by a 2-D tile of a loaded stride:
 * nothing is known of its alignment until multiple_of says so, on the
 * addptr that makes the tile; contiguity along dim 1 is still derived. */
static void test_table_pointer(void)
{
    const char *text =
        "kernel @k(%0: ptr<i64>, %1: ptr<i32>) num_warps=4 num_stages=3 arch=sm_80 {\n"
        "  %2 = load %0, _, _ : i64\n"
        "  %3 = inttoptr %2 : i64 -> ptr<fp16>\n"
        "  %4 = load %1, _, _ : i32\n"
        "  %5 = arange 0, 64 : <64xi32>\n"
        "  %6 = expand_dims %5 axis=1 : <64x1xi32>\n"
        "  %7 = splat %4 : <64x1xi32>\n"
        "  %8 = mul %6, %7 : <64x1xi32>\n"
        "  %9 = splat %3 : <64x1xptr<fp16>>\n"
        "  %10 = addptr %9, %8 : <64x1xptr<fp16>>\n"
        "  %11 = expand_dims %5 axis=0 : <1x64xi32>\n"
        "  %12 = broadcast %10 : <64x64xptr<fp16>>\n"
        "  %13 = broadcast %11 : <64x64xi32>\n"
        "  %14 = addptr %12, %13";
    const char *tail = " : <64x64xptr<fp16>>\n"
                       "  %15 = const 8 : <64x64xi32>\n"
                       "  %16 = addptr %14, %15 : <64x64xptr<fp16>>\n"
                       "}\n";
    for (int hinted = 0; hinted < 2; hinted++) {
        StrBuf src, msg;
        sb_init(&src), sb_init(&msg);
        sb_puts(&src, text);
        sb_puts(&src, hinted ? " hints(multiple_of=[16,16])" : "");
        sb_puts(&src, tail);
        IrFunc *f = parse(src.data, &msg);
        CHECK(f != NULL);
        if (!f) {
            fprintf(stderr, "%s\n", msg.data ? msg.data : "");
            continue;
        }
        AxisInfo *ai = axis_analyze(f, &arena);
        const IrValue *p = value(f, 14), *q = value(f, 16);
        CHECK(ai && p && q);
        if (ai && p && q) {
            CHECK(ai[p->id].contiguity[1] == 64);
            CHECK(ai[p->id].divisibility[0] == (hinted ? 16 : 1));
            CHECK(ai[p->id].divisibility[1] == (hinted ? 16 : 1));
            /* the use sees it: 8 halves on is still 16 bytes aligned */
            CHECK(ai[q->id].divisibility[1] == (hinted ? 16 : 1));
            CHECK(axis_vector_width(ai, p, NULL, 2) == (hinted ? 8 : 1));
            CHECK(axis_vector_width(ai, q, NULL, 2) == (hinted ? 8 : 1));
        }
        /* printed as read */
        StrBuf out;
        sb_init(&out);
        ir_print(&out, f);
        CHECK((strstr(out.data, "hints(multiple_of=[16,16])") != NULL) == hinted);
        sb_free(&out), sb_free(&src), sb_free(&msg);
    }
}

/* The three kinds on a scalar, and a hint replacing (not joining) what the
 * analysis knows: a constant 64 said to be a multiple of 8 is taken at its
 * word, as Triton does. */
static void test_scalar_kinds(void)
{
    IrFunc *f =
        parse("kernel @k(%0: ptr<i64>) num_warps=4 num_stages=3 arch=sm_80 {\n"
              "  %1 = load %0, _, _ hints(multiple_of=[32], max_contiguous=[1], "
              "max_constancy=[1]) : i64\n"
              "  %2 = const 64 hints(multiple_of=[8]) : i32\n"
              "  %3 = arange 0, 128 hints(max_contiguous=[4], max_constancy=[2]) : <128xi32>\n"
              "}\n",
              NULL);
    CHECK(f != NULL);
    if (!f)
        return;
    AxisInfo *ai = axis_analyze(f, &arena);
    const IrValue *ld = value(f, 1), *c = value(f, 2), *r = value(f, 3);
    CHECK(ai && ld && c && r);
    if (!ai || !ld || !c || !r)
        return;
    CHECK(ai[ld->id].divisibility[0] == 32);
    CHECK(ai[c->id].divisibility[0] == 8);
    CHECK(ai[r->id].contiguity[0] == 4 && ai[r->id].constancy[0] == 2);
}

/* Hints the reader or the verifier refuses, each with an error (no crash):
 * a count that is not the result's rank, zero or negative values, an
 * unknown kind, a float result, an op without a result, too many values. */
static void test_bad_hints(void)
{
    static const char *const bad[] = {
        "  %1 = arange 0, 64 hints(multiple_of=[16,16]) : <64xi32>\n",
        "  %1 = arange 0, 64 hints(multiple_of=[0]) : <64xi32>\n",
        "  %1 = arange 0, 64 hints(multiple_of=[-16]) : <64xi32>\n",
        "  %1 = arange 0, 64 hints(aligned=[16]) : <64xi32>\n",
        "  %1 = const 1.0 hints(multiple_of=[16]) : fp32\n",
        "  %1 = arange 0, 64 hints(multiple_of=[16,16,16,16,16]) : <64xi32>\n",
        "  %1 = arange 0, 64 hints(multiple_of=[16] : <64xi32>\n",
        "  %1 = arange 0, 64 hints(multiple_of=[]) : <64xi32>\n",
        "  %1 = arange 0, 64 hints() : <64xi32>\n",
        "  %1 = const 0 : i32\n  store %0, %1, _ hints(multiple_of=[4])\n",
    };
    for (size_t i = 0; i < TK_ARRAY_LEN(bad); i++) {
        StrBuf src, msg;
        sb_init(&src), sb_init(&msg);
        sb_puts(&src, "kernel @k(%0: ptr<i32>) num_warps=4 num_stages=3 arch=sm_80 {\n");
        sb_puts(&src, bad[i]);
        sb_puts(&src, "}\n");
        IrFunc *f = parse(src.data, &msg);
        CHECK(f == NULL);
        CHECK(msg.data && strstr(msg.data, "error:"));
        if (f || !msg.data)
            fprintf(stderr, "  accepted: %s", bad[i]);
        sb_free(&src), sb_free(&msg);
    }
}

int main(void)
{
    arena_init(&arena);
    test_table_pointer();
    test_scalar_kinds();
    test_bad_hints();
    arena_free(&arena);
    return t_finish("ir_axis_hints");
}
