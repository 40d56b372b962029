/* cases_warp_spec.c: GEMMs whose loops ask for warp specialization. On an
 * H100 (--gpu: sm_90a with TMA) the plain K loop gets a producer warpgroup
 * that issues the TMA copies beside the consumer warps; on the interpreter
 * and wherever the request does not apply the loops run unchanged. Either
 * way the results must be the GEMM's: M, N and K not multiples of the
 * tile, K smaller than one tile, K of exactly one tile, K = 0, fp16 and
 * bf16, and a persistent flattened loop with more programs than tiles;
 * tutorial 09's persistent GEMM with affine tiles, with and without the
 * request: several tiles a program, more programs than tiles, partial
 * tiles, short K and K = 0; attention forward, plain and causal, its KV
 * loop specialized, against softmax(Q K^T) V in double.
 * Row strides are multiples of 16 elements, so that TMA can copy the
 * tiles; the strided case transposes B (a unit stride between its rows). */
#include "harness.h"

#include <math.h>

static double gemm_tol(tk_dtype t)
{
    return t == TK_F16 ? 1e-3 : 8e-3; /* one rounding of the fp32 result */
}

/* C = A @ B with A m x k (row stride k) and B k x n (row stride n), or
 * with bt B given as n x k (row stride k, read transposed). */
static void matmul_case(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk, int warps,
                        int stages, bool bt)
{
    if (!h_begin(h, "ws.matmul_%s%s.%dx%dx%d.B%dx%dx%d.w%d.s%d", h_dtype_name(t), bt ? "_bt" : "",
                 m, n, k, bm, bn, bk, warps, stages))
        return;
    tk_kernel *kk = h_kernel(h, "warp_spec.tk", "ws_matmul");
    HGemm g = h_gemm_operands(h, t, m, n, k, bt);
    int sbk = bt ? 1 : n, sbn = bt ? k : 1;
    h_launch(h, kk, h_grid((unsigned)h_cdiv(m, bm), (unsigned)h_cdiv(n, bn), 1),
             H_ARGS(tk_ptr(g.da, t), tk_ptr(g.db, t), tk_ptr(g.dc, t), tk_i32(m), tk_i32(n),
                    tk_i32(k), tk_i32(k), tk_i32(1), tk_i32(sbk), tk_i32(sbn), tk_i32(n), tk_i32(1),
                    tk_const("BM", bm), tk_const("BN", bn), tk_const("BK", bk),
                    tk_const("NS", stages)),
             warps);
    h_gemm_check(h, &g, gemm_tol(t));
    h_end(h);
}

static void persistent_case(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk,
                            int programs, int warps)
{
    if (!h_begin(h, "ws.persistent_%s.%dx%dx%d.B%dx%dx%d.P%d.w%d", h_dtype_name(t), m, n, k, bm, bn,
                 bk, programs, warps))
        return;
    const int mnk[3] = {m, n, k}, block[3] = {bm, bn, bk};
    h_persistent_gemm(h, h_kernel(h, "warp_spec.tk", "ws_persistent"), t, mnk, block, programs,
                      warps, gemm_tol(t));
    h_end(h);
}

/* The persistent GEMM in tutorial 09's shape with affine tiles
 * (ws_persistent_tma), with (ws) and without warp specialization: on
 * sm_90a with TMA its flattened loop copies the tiles by TMA either way. */
static void persistent_tma_case(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk,
                                int programs, int warps, int stages, bool ws)
{
    if (!h_begin(h, "ws.persistent_tma_%s.%dx%dx%d.B%dx%dx%d.P%d.w%d.s%d.ws%d", h_dtype_name(t), m,
                 n, k, bm, bn, bk, programs, warps, stages, ws))
        return;
    tk_kernel *kk = h_kernel(h, "warp_spec.tk", "ws_persistent_tma");
    HGemm g = h_gemm_operands(h, t, m, n, k, false);
    h_launch(h, kk, h_grid((unsigned)programs, 1, 1),
             H_ARGS(tk_ptr(g.da, t), tk_ptr(g.db, t), tk_ptr(g.dc, t), tk_i32(m), tk_i32(n),
                    tk_i32(k), tk_i32(k), tk_i32(1), tk_i32(n), tk_i32(1), tk_i32(n), tk_i32(1),
                    tk_const("BM", bm), tk_const("BN", bn), tk_const("BK", bk),
                    tk_const("GROUP", 4), tk_const("NUM_SMS", programs), tk_const("NS", stages),
                    tk_const("WS", ws)),
             warps);
    h_gemm_check(h, &g, gemm_tol(t));
    h_end(h);
}

/* softmax(Q K^T * scale, causal where asked) V in double, per head, for
 * the inputs as the kernel reads them (rounded to t). */
static double *attention_ref(H *h, const double *q, const double *k, const double *v, int zh, int s,
                             int d, double scale, bool causal)
{
    double *o = h_malloc(h, sizeof(double) * (size_t)zh * s * d);
    double *w = h_malloc(h, sizeof(double) * (size_t)s);
    for (int b = 0; b < zh && o && w; b++)
        for (int i = 0; i < s; i++) {
            const double *qi = q + ((size_t)b * s + i) * d;
            int keys = causal ? i + 1 : s;
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j < keys; j++) {
                const double *kj = k + ((size_t)b * s + j) * d;
                double x = 0;
                for (int c = 0; c < d; c++)
                    x += qi[c] * kj[c];
                w[j] = x * scale;
                mx = w[j] > mx ? w[j] : mx;
            }
            for (int j = 0; j < keys; j++)
                sum += w[j] = exp(w[j] - mx);
            double *oi = o + ((size_t)b * s + i) * d;
            for (int c = 0; c < d; c++) {
                double x = 0;
                for (int j = 0; j < keys; j++)
                    x += w[j] * v[((size_t)b * s + j) * d + c];
                oi[c] = x / sum;
            }
        }
    return o;
}

/* Attention forward (ws_attention): zh heads of s rows of head dim d. */
static void attention_case(H *h, tk_dtype t, int zh, int s, int d, int bm, int bn, int warps,
                           int stages, bool causal)
{
    if (!h_begin(h, "ws.attention_%s%s.ZH%d.S%d.D%d.B%dx%d.w%d.s%d", h_dtype_name(t),
                 causal ? "_causal" : "", zh, s, d, bm, bn, warps, stages))
        return;
    tk_kernel *kk = h_kernel(h, "warp_spec.tk", "ws_attention");
    size_t n = (size_t)zh * s * d;
    double *q = h_rand_array(h, t, n, -1.0, 1.0), *k = h_rand_array(h, t, n, -1.0, 1.0);
    double *v = h_rand_array(h, t, n, -1.0, 1.0);
    void *dq = h_upload(h, t, q, n), *dk = h_upload(h, t, k, n), *dv = h_upload(h, t, v, n);
    void *dout = h_output(h, t, n);
    double scale = 1.0 / sqrt((double)d);
    h_launch(h, kk, h_grid((unsigned)(s / bm), (unsigned)zh, 1),
             H_ARGS(tk_ptr(dq, t), tk_ptr(dk, t), tk_ptr(dv, t), tk_ptr(dout, t),
                    tk_f32((float)scale), tk_i32(s), tk_i32(zh * s), tk_const("D", d),
                    tk_const("BM", bm), tk_const("BN", bn), tk_const("NS", stages),
                    tk_const("CAUSAL", causal)),
             warps);
    double *ref = attention_ref(h, q, k, v, zh, s, d, scale, causal);
    if (!h->failed && ref) /* P is rounded to t before P V: a few ulps of t */
        h_check(h, "O", h_download(h, t, dout, n), ref, n, t == TK_F16 ? 4e-3 : 3e-2);
    h_end(h);
}

/* Each of them with and without warp specialization. */
static void persistent_tma_both(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk,
                                int programs, int warps, int stages)
{
    persistent_tma_case(h, t, m, n, k, bm, bn, bk, programs, warps, stages, false);
    persistent_tma_case(h, t, m, n, k, bm, bn, bk, programs, warps, stages, true);
}

void cases_warp_spec(H *h)
{
    if (!h->gpu) { /* small tiles: the interpreter runs every thread */
        matmul_case(h, TK_F16, 80, 48, 80, 32, 32, 32, 4, 3, false); /* K: 2.5 tiles */
        matmul_case(h, TK_BF16, 40, 72, 48, 32, 32, 32, 4, 4, false);
        matmul_case(h, TK_F16, 48, 32, 16, 32, 32, 32, 4, 3, false); /* K below one tile */
        matmul_case(h, TK_F16, 32, 48, 32, 32, 32, 32, 4, 3, false); /* K of one tile */
        matmul_case(h, TK_F16, 48, 40, 0, 32, 32, 32, 4, 3, false);  /* no K step: zeros */
        matmul_case(h, TK_F16, 40, 48, 64, 32, 32, 32, 4, 3, true);
        persistent_case(h, TK_F16, 48, 40, 48, 32, 32, 16, 7, 4); /* 4 tiles, 7 programs */
        persistent_case(h, TK_BF16, 70, 64, 80, 32, 32, 32, 2, 4);
        persistent_tma_both(h, TK_F16, 80, 72, 96, 32, 32, 32, 3, 4, 3);  /* 9 tiles, 3 programs */
        persistent_tma_both(h, TK_BF16, 70, 96, 80, 32, 64, 32, 2, 4, 4); /* partial tiles */
        persistent_tma_both(h, TK_F16, 48, 40, 16, 32, 32, 32, 2, 4, 3);  /* K below one tile */
        persistent_tma_both(h, TK_F16, 48, 40, 0, 32, 32, 32, 2, 4, 3);   /* K = 0: zeros */
        persistent_tma_both(h, TK_F16, 40, 40, 48, 32, 32, 16, 7, 4, 2);  /* 4 tiles, 7 programs */
        attention_case(h, TK_F16, 2, 64, 16, 32, 16, 4, 3, false);
        attention_case(h, TK_BF16, 2, 64, 16, 32, 32, 4, 2, true);
        return;
    }
    /* 128 x 128 x 64 tiles, the consumers at 8 warps (4 too), 3 and 4 stages */
    matmul_case(h, TK_F16, 1000, 1104, 528, 128, 128, 64, 8, 3, false);
    matmul_case(h, TK_F16, 777, 912, 1008, 128, 128, 64, 8, 4, false);
    matmul_case(h, TK_BF16, 1000, 1104, 528, 128, 128, 64, 8, 4, false);
    matmul_case(h, TK_BF16, 333, 272, 400, 128, 128, 64, 4, 3, false);
    matmul_case(h, TK_F16, 300, 200, 48, 128, 128, 64, 8, 3, false); /* K below one tile */
    matmul_case(h, TK_BF16, 300, 200, 48, 128, 128, 64, 8, 4, false);
    matmul_case(h, TK_F16, 256, 384, 64, 128, 128, 64, 8, 3, false); /* K of one tile */
    matmul_case(h, TK_BF16, 256, 384, 64, 128, 128, 64, 8, 4, false);
    matmul_case(h, TK_F16, 200, 136, 0, 128, 128, 64, 8, 3, false);      /* no K step */
    matmul_case(h, TK_F16, 512, 640, 4096, 128, 128, 64, 8, 4, false);   /* many slot reuses */
    matmul_case(h, TK_BF16, 2048, 2048, 320, 128, 128, 64, 8, 3, false); /* programs in waves */
    matmul_case(h, TK_F16, 500, 600, 1040, 128, 128, 64, 8, 3, true);
    persistent_case(h, TK_F16, 1000, 1104, 528, 128, 128, 64, 132, 8);
    persistent_case(h, TK_BF16, 512, 384, 256, 128, 128, 64, 132, 8); /* more programs than tiles */
    persistent_case(h, TK_F16, 300, 200, 64, 128, 128, 64, 5, 4);
    /* tutorial 09's persistent GEMM with affine tiles, ws off and on */
    persistent_tma_both(h, TK_F16, 1000, 1104, 528, 128, 128, 64, 132, 8, 3);
    persistent_tma_both(h, TK_BF16, 1000, 1104, 528, 128, 128, 64, 132, 8, 4);
    persistent_tma_both(h, TK_F16, 777, 912, 1008, 128, 256, 64, 132, 8, 3);
    persistent_tma_both(h, TK_BF16, 2560, 2560, 64, 128, 128, 64, 132, 8, 3); /* 400 tiles */
    persistent_tma_both(h, TK_F16, 2560, 2560, 176, 128, 128, 64, 132, 8, 4); /* 3 tiles each */
    persistent_tma_both(h, TK_F16, 300, 208, 48, 128, 128, 64, 132, 8, 3);    /* K below a tile */
    persistent_tma_both(h, TK_BF16, 200, 144, 0, 128, 128, 64, 132, 8, 3);    /* K = 0 */
    persistent_tma_both(h, TK_F16, 512, 384, 256, 128, 128, 64, 132, 8, 3);   /* 12 tiles */
    persistent_tma_both(h, TK_BF16, 333, 272, 400, 128, 128, 64, 5, 4, 3);    /* 4 warps */
    persistent_tma_both(h, TK_F16, 512, 512, 4096, 128, 128, 64, 7, 8, 3);    /* long K */
    /* 16 warps: the request leaves the kernel unspecialized */
    matmul_case(h, TK_F16, 600, 520, 400, 256, 128, 64, 16, 3, false);
    /* attention's KV loop: 128 x 64 tiles with 4 slots, 128 x 128 with 2
     * and Q resident, D 64 and 128, causal (the diagonal loop left
     * unpipelined; the first block of rows has no iteration before it) */
    attention_case(h, TK_F16, 3, 512, 128, 128, 64, 8, 3, false);
    attention_case(h, TK_F16, 3, 512, 128, 128, 128, 8, 2, false);
    attention_case(h, TK_BF16, 2, 768, 128, 128, 128, 8, 2, false);
    attention_case(h, TK_F16, 4, 256, 64, 128, 128, 8, 2, false);
    attention_case(h, TK_F16, 3, 512, 128, 128, 128, 8, 2, true);
    attention_case(h, TK_BF16, 3, 512, 128, 128, 64, 8, 3, true);
    attention_case(h, TK_F16, 4, 384, 64, 128, 128, 8, 2, true);
    attention_case(h, TK_F16, 2, 256, 128, 128, 128, 4, 2, false); /* one consumer warpgroup */
}
