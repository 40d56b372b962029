/* cases_dot_prec.c: tl.dot's fp32 precisions and the tensor-core forms that
 * depend on operand order. tf32x3 against a float64 reference must be
 * close to fp32 FMA (relative error below 2e-5 for K <= 1024) and at least
 * 30 times closer than plain tf32 on the same inputs. tf32x3 (three
 * products of split operands), tf32 (within 2e-3) and int8 (exact) run as
 * wgmma on sm_90a, whose operands must be K-major in shared memory: each
 * case stores A row- or column-major and B [K, N] or [N, K], so that both
 * the copied K-major rings and the tiles transposed from registers are
 * used, with M, N and K that do not divide the tiles, a K loop of one
 * iteration, and 1 or 3 stages. dot_hoisted feeds A from registers. */
#include "harness.h"

#include <math.h>
#include <stdio.h>

/* A logical rows x cols matrix v laid out row-major, or (trans) as its
 * transpose [cols][rows]. */
static double *lay_out(H *h, const double *v, int rows, int cols, bool trans)
{
    double *p = h_malloc(h, (size_t)rows * cols * sizeof(double));
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            p[trans ? (size_t)j * rows + i : (size_t)i * cols + j] = v[(size_t)i * cols + j];
    return p;
}

typedef struct Gemm {
    int m, n, k, bm, bn, bk, warps, stages;
    bool at, bt; /* A stored [K, M]; B stored [N, K] */
} Gemm;

/* One launch of dot_gemm_prec on logical a (m x k) and b (k x n); returns
 * C widened to double, NULL once the case failed. */
static double *run_gemm(H *h, tk_dtype t, const Gemm *g, const double *a, const double *b,
                        const char *prec)
{
    tk_dtype ct = t == TK_I8 ? TK_I32 : TK_F32;
    tk_kernel *kk = h_kernel(h, "dot.tk", "dot_gemm_prec");
    double *pa = lay_out(h, a, g->m, g->k, g->at), *pb = lay_out(h, b, g->k, g->n, g->bt);
    void *da = h_upload(h, t, pa, (size_t)g->m * g->k);
    void *db = h_upload(h, t, pb, (size_t)g->k * g->n);
    void *dc = h_output(h, ct, (size_t)g->m * g->n);
    int s_am = g->at ? 1 : g->k, s_ak = g->at ? g->m : 1;
    int s_bk = g->bt ? 1 : g->n, s_bn = g->bt ? g->k : 1;
    h_launch(h, kk, h_grid((unsigned)h_cdiv(g->m, g->bm), (unsigned)h_cdiv(g->n, g->bn), 1),
             H_ARGS(tk_ptr(da, t), tk_ptr(db, t), tk_ptr(dc, ct), tk_i32(g->m), tk_i32(g->n),
                    tk_i32(g->k), tk_i32(s_am), tk_i32(s_ak), tk_i32(s_bk), tk_i32(s_bn),
                    tk_i32(g->n), tk_i32(1), tk_const("BM", g->bm), tk_const("BN", g->bn),
                    tk_const("BK", g->bk), tk_const("NS", g->stages), tk_const_text("PREC", prec)),
             g->warps);
    if (h->failed)
        return NULL;
    return h_download(h, ct, dc, (size_t)g->m * g->n);
}

static bool begin_gemm(H *h, const char *what, const Gemm *g)
{
    return h_begin(h, "dot_prec.%s%s%s.%dx%dx%d.B%dx%dx%d.w%d.s%d", what, g->at ? "_at" : "",
                   g->bt ? "_bt" : "", g->m, g->n, g->k, g->bm, g->bn, g->bk, g->warps, g->stages);
}

/* tf32x3 within fp32 accuracy, and far closer than tf32 on the same inputs. */
static void x3_case(H *h, Gemm g)
{
    if (!begin_gemm(h, "tf32x3", &g))
        return;
    double *a = h_rand_array(h, TK_F32, (size_t)g.m * g.k, -1, 1);
    double *b = h_rand_array(h, TK_F32, (size_t)g.k * g.n, -1, 1);
    double *ref = h_matmul_ref(h, a, b, NULL, g.m, g.n, g.k, false);
    double *x3 = run_gemm(h, TK_F32, &g, a, b, "\"tf32x3\"");
    double *t1 = run_gemm(h, TK_F32, &g, a, b, "\"tf32\"");
    if (x3 && t1) {
        size_t n = (size_t)g.m * g.n;
        double ex3 = h_rel_err(x3, ref, n), et = h_rel_err(t1, ref, n);
        h_check(h, "tf32x3", x3, ref, n, 2e-5);
        h_check(h, "tf32", t1, ref, n, 2e-3);
        h_expect(h, ex3 * 30 < et, "tf32x3 rel err %.2e is not far below tf32's %.2e", ex3, et);
        printf("  %s: tf32x3 rel err %.2e, tf32 %.2e\n", h->name, ex3, et);
    }
    h_end(h);
}

/* tf32 (within 2e-3) or int8 (exact) through dot_gemm_prec. */
static void order_case(H *h, tk_dtype t, Gemm g)
{
    if (!begin_gemm(h, t == TK_I8 ? "int8" : "tf32", &g))
        return;
    double lim = t == TK_I8 ? 127 : 1;
    double *a = h_rand_array(h, t, (size_t)g.m * g.k, -lim, lim);
    double *b = h_rand_array(h, t, (size_t)g.k * g.n, -lim, lim);
    double *ref = h_matmul_ref(h, a, b, NULL, g.m, g.n, g.k, false);
    double *c = run_gemm(h, t, &g, a, b, "\"tf32\"");
    if (c)
        h_check(h, "c", c, ref, (size_t)g.m * g.n, t == TK_I8 ? 0 : 2e-3);
    h_end(h);
}

/* dot_hoisted: A's fragments made once and fed from registers; x3: with
 * input_precision="tf32x3" (fp32 only), which splits them as it reads them. */
static void hoisted_case(H *h, tk_dtype t, int m, int n, int bk, bool x3)
{
    if (!h_begin(h, "dot_prec.hoisted_%s%s.%dx%dx%d", h_dtype_name(t), x3 ? "_x3" : "", m, n, bk))
        return;
    tk_dtype ct = t == TK_I8 ? TK_I32 : TK_F32;
    double lim = t == TK_I8 ? 127 : 1;
    double *a = h_rand_array(h, t, (size_t)m * bk, -lim, lim);
    double *b = h_rand_array(h, t, (size_t)bk * n, -lim, lim);
    void *da = h_upload(h, t, a, (size_t)m * bk), *db = h_upload(h, t, b, (size_t)bk * n);
    void *dc = h_output(h, ct, (size_t)m * n);
    tk_kernel *kk = h_kernel(h, "dot.tk", "dot_hoisted");
    h_launch(h, kk, h_grid((unsigned)h_cdiv(m, 64), 1, 1),
             H_ARGS(tk_ptr(da, t), tk_ptr(db, t), tk_ptr(dc, ct), tk_i32(m), tk_i32(n),
                    tk_const("BM", 64), tk_const("BN", 64), tk_const("BK", bk),
                    tk_const_text("PREC", x3 ? "\"tf32x3\"" : "\"tf32\"")),
             4);
    double *c = h_download(h, ct, dc, (size_t)m * n);
    double *ref = h_matmul_ref(h, a, b, NULL, m, n, bk, false);
    h_check(h, "c", c, ref, (size_t)m * n, t == TK_I8 ? 0 : x3 ? 2e-5 : 2e-3);
    h_end(h);
}

/* Each order of A and B for one dtype: K-major rings, B transposed from
 * registers, A transposed, a single K iteration (K below and equal to BK). */
static void order_cases(H *h, tk_dtype t)
{
    int bk = t == TK_I8 ? 64 : 32;
    order_case(h, t, (Gemm){150, 112, 208, 64, 64, bk, 4, 3, false, true});
    order_case(h, t, (Gemm){150, 100, 200, 64, 64, bk, 4, 3, false, false});
    order_case(h, t, (Gemm){150, 100, 200, 64, 64, bk, 4, 1, true, true});
    order_case(h, t, (Gemm){70, 90, bk - 8, 64, 64, bk, 4, 3, false, true});
    order_case(h, t, (Gemm){70, 90, bk, 64, 64, bk, 4, 1, false, false});
    if (!h->gpu)
        return;
    order_case(h, t, (Gemm){300, 260, 4 * bk + 16, 128, 128, bk, 8, 3, false, true});
    order_case(h, t, (Gemm){300, 260, 4 * bk + 16, 128, 128, bk, 8, 3, true, false});
    order_case(h, t, (Gemm){333, 190, 517, 128, 64, bk, 4, 3, false, true});
}

void cases_dot_prec(H *h)
{
    x3_case(h, (Gemm){70, 50, 90, 32, 32, 16, 4, 3, false, false});
    x3_case(h, (Gemm){40, 24, 20, 64, 32, 32, 4, 1, false, true});
    x3_case(h, (Gemm){100, 72, 64, 64, 64, 32, 4, 3, false, true});
    if (h->gpu) {
        x3_case(h, (Gemm){333, 200, 517, 64, 64, 32, 4, 3, false, false});
        x3_case(h, (Gemm){256, 256, 1024, 128, 128, 32, 8, 3, true, true});
        /* both K-major rings; A transposed with one stage; K from 64 to 512 */
        x3_case(h, (Gemm){300, 260, 512, 128, 64, 32, 4, 3, false, true});
        x3_case(h, (Gemm){150, 100, 128, 64, 64, 32, 4, 1, true, false});
        x3_case(h, (Gemm){200, 136, 256, 128, 128, 32, 8, 3, false, true});
        /* split tiles too big for shared memory beside the rings: mma.sync */
        x3_case(h, (Gemm){300, 200, 320, 128, 64, 64, 4, 3, false, true});
    }
    order_cases(h, TK_F32);
    order_cases(h, TK_I8);
    hoisted_case(h, TK_F32, 100, 150, 32, false);
    hoisted_case(h, TK_F32, 100, 150, 32, true);
    hoisted_case(h, TK_I8, 100, 150, 64, false);
}
