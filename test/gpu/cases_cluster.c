/* cases_cluster.c: GEMMs launched with num_ctas=2 (kernels/cluster.tk). On
 * an H100 (--gpu) the K loops copy their tiles by TMA and neighbouring
 * programs along x run as a cluster of two CTAs, a tile both copy at the
 * same coordinates going once to both (multicast); on the interpreter
 * num_ctas changes nothing. Either way the product must come out the same:
 * tiles along M that pair up (B shared), an odd number of them (the launch
 * falls back to the kernel without clusters), M, N and K that are not
 * multiples of the tile, a grouped tile order whose pairs share B, A or
 * nothing, 8 warps with B's four boxes split between the pair, and loops
 * that run a different number of times in the two CTAs of a cluster (no
 * tile shared). Rows of A, B and C are multiples of 16 elements apart, as
 * TMA wants. */
#include "harness.h"

static int round16(int x) { return (x + 15) / 16 * 16; }
static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* rows x cols of src in a buffer rows x ld, the rest zero. */
static double *padded(H *h, const double *src, int rows, int cols, int ld)
{
    double *p = h_malloc(h, sizeof(double) * (size_t)rows * ld);
    for (int r = 0; r < rows && p && src; r++)
        for (int c = 0; c < cols; c++)
            p[(size_t)r * ld + c] = src[(size_t)r * cols + c];
    return p;
}

/* C = A B for the kernel `kernel` (a 2-D grid of BM x BN tiles, or with
 * group > 0 the grouped order on a 1-D grid), num_ctas=2. */
static void gemm_case(H *h, const char *kernel, tk_dtype t, int m, int n, int k, int bm, int bn,
                      int bk, int group, int warps)
{
    if (!h_begin(h, "cluster.%s_%s.%dx%dx%d.B%dx%dx%d.w%d", kernel, h_dtype_name(t), m, n, k, bm,
                 bn, bk, warps))
        return;
    tk_kernel *kk = h_kernel(h, "cluster.tk", kernel);
    int lda = round16(k) + 16, ldb = round16(n) + 16, ldc = round16(n) + 16;
    double *a = h_rand_array(h, t, (size_t)m * k, -1, 1);
    double *b = h_rand_array(h, t, (size_t)k * n, -1, 1);
    void *da = h_upload(h, t, padded(h, a, m, k, lda), (size_t)m * lda);
    void *db = h_upload(h, t, padded(h, b, k, n, ldb), (size_t)k * ldb);
    void *dc = h_output(h, t, (size_t)m * ldc);
    tk_arg args[13] = {tk_ptr(da, t),
                       tk_ptr(db, t),
                       tk_ptr(dc, t),
                       tk_i32(m),
                       tk_i32(n),
                       tk_i32(k),
                       tk_i32(lda),
                       tk_i32(ldb),
                       tk_i32(ldc),
                       tk_const("BM", bm),
                       tk_const("BN", bn),
                       tk_const("BK", bk),
                       tk_const("GROUP", group)};
    tk_grid grid = group ? h_grid((unsigned)(cdiv(m, bm) * cdiv(n, bn)), 1, 1)
                         : h_grid((unsigned)cdiv(m, bm), (unsigned)cdiv(n, bn), 1);
    h_launch_ctas(h, kk, grid, args, group ? 13 : 12, warps, 2);
    double *c = h_download(h, t, dc, (size_t)m * ldc);
    double *ref = h_matmul_ref(h, a, b, NULL, m, n, k, false);
    double *got = h_malloc(h, sizeof(double) * (size_t)m * n);
    for (int r = 0; r < m && c && got; r++)
        for (int j = 0; j < n; j++)
            got[(size_t)r * n + j] = c[(size_t)r * ldc + j];
    h_check(h, "c", got, ref, (size_t)m * n, t == TK_F16 ? 1e-3 : 8e-3);
    for (int r = 0; r < m && !h->failed; r++)
        h_check_untouched(h, "c past N", t, dc, (size_t)r * ldc + n, ldc - n);
    h_end(h);
}

void cases_cluster(H *h)
{
    /* tiles along M in pairs: B's tile shared at every K step */
    gemm_case(h, "mm2d", TK_F16, 256, 256, 256, 128, 128, 64, 0, 4);
    gemm_case(h, "mm2d", TK_BF16, 512, 384, 320, 128, 128, 64, 0, 4);
    /* M, N and K not multiples of the tile (the last pair's second CTA
     * partly past M, its stores masked, its copies still met) */
    gemm_case(h, "mm2d", TK_F16, 200, 328, 96, 128, 128, 64, 0, 4);
    gemm_case(h, "mm2d", TK_F16, 250, 100, 72, 64, 64, 32, 0, 4);
    /* an odd number of tiles along M: no whole clusters, launched as
     * num_ctas=1 */
    gemm_case(h, "mm2d", TK_F16, 384, 256, 128, 128, 128, 64, 0, 4);
    gemm_case(h, "mm2d", TK_BF16, 300, 200, 100, 64, 64, 32, 0, 4);
    /* 8 warps, BN = 256: B's four boxes, two from each CTA */
    gemm_case(h, "mm2d", TK_F16, 512, 512, 256, 128, 256, 64, 0, 8);
    /* grouped order: pairs inside a group share B; 5 rows of tiles in
     * groups of 4 leave a group of one row, whose pairs share A; 3 x 2
     * tiles in one group give a pair that shares nothing */
    gemm_case(h, "mm_grouped", TK_F16, 640, 512, 192, 128, 128, 64, 4, 4);
    gemm_case(h, "mm_grouped", TK_F16, 384, 256, 128, 128, 128, 64, 8, 4);
    gemm_case(h, "mm_grouped", TK_BF16, 333, 272, 100, 64, 64, 32, 8, 4);
    /* the two CTAs of a cluster run their K loops a different number of
     * times: each copies its own tiles */
    gemm_case(h, "mm_ragged", TK_F16, 256, 256, 192, 128, 128, 64, 0, 4);
    gemm_case(h, "mm_ragged", TK_F16, 200, 130, 72, 64, 64, 32, 0, 4);
}
