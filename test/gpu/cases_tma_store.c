/* cases_tma_store.c: tile stores that sm_90a writes by TMA through shared
 * memory (kernels/tma_store.tk). On an H100 (--gpu) the epilogues of
 * kernels whose K loops load by TMA go by TMA where N is a multiple of 16
 * elements (plain stores otherwise, and in desc_scale, which has no K
 * loop); on the interpreter they are plain stores. Either way: the product in C's rows and columns, in fp16, bf16
 * and fp32, at M and N that are and are not multiples of the tile, and
 * nothing written past N in C's padded rows (TMA drops what falls outside
 * the tensor as the mask does); a persistent GEMM storing from its tile
 * loop; a store whose mask is not the bounds (a plain store); K = 0, whose
 * tensor maps cannot be built (the launch falls back to the kernel without
 * TMA: C = 0); and a descriptor's load and store with no loop at all.
 * Rows of A, B and C are multiples of 16 elements apart, as TMA wants. */
#include "harness.h"

static int round16(int x) { return (x + 15) / 16 * 16; }

/* rows x cols of src in a buffer rows x ld, the rest zero. */
static double *padded(H *h, const double *src, int rows, int cols, int ld)
{
    double *p = h_malloc(h, sizeof(double) * (size_t)(rows ? rows : 1) * (ld ? ld : 1));
    for (int r = 0; r < rows && p && src; r++)
        for (int c = 0; c < cols; c++)
            p[(size_t)r * ld + c] = src[(size_t)r * cols + c];
    return p;
}

static double tol_of(tk_dtype t)
{
    return t == TK_F32 ? 1e-5 : t == TK_F16 ? 1e-3 : 8e-3; /* fp32 sums; one rounding */
}

typedef struct Gemm {
    tk_dtype t, tc;
    int m, n, k, lda, ldb, ldc;
    double *a, *b;
    void *da, *db, *dc;
} Gemm;

/* A (m x k) and B (k x n) random in [-1, 1] of type t, C (m x ldc) of
 * type tc poisoned; leading dimensions padded past 16 elements. */
static Gemm operands(H *h, tk_dtype t, tk_dtype tc, int m, int n, int k)
{
    Gemm g = {t,    tc,   m,    n,    k,   round16(k) + 16, round16(n) + 16, round16(n) + 16,
              NULL, NULL, NULL, NULL, NULL};
    g.a = h_rand_array(h, t, (size_t)m * (k ? k : 1), -1, 1);
    g.b = h_rand_array(h, t, (size_t)(k ? k : 1) * n, -1, 1);
    g.da = h_upload(h, t, padded(h, g.a, m, k, g.lda), (size_t)m * g.lda);
    g.db = h_upload(h, t, padded(h, g.b, k, n, g.ldb), (size_t)(k ? k : 1) * g.ldb);
    g.dc = h_output(h, tc, (size_t)m * g.ldc);
    return g;
}

/* C against the product in double, where keep(r, c) (NULL: everywhere);
 * every other element of C, and the padding past N, left poisoned. */
static void check(H *h, const Gemm *g, bool (*keep)(int r, int c))
{
    double *c = h_download(h, g->tc, g->dc, (size_t)g->m * g->ldc);
    double *ref = h_matmul_ref(h, g->a, g->b, NULL, g->m, g->n, g->k, false);
    double *got = h_malloc(h, sizeof(double) * (size_t)g->m * g->n);
    if (!c || !ref || !got)
        return;
    size_t nk = 0;
    for (int r = 0; r < g->m; r++)
        for (int j = 0; j < g->n; j++) {
            if (keep && !keep(r, j)) {
                h_check_untouched(h, "c outside the mask", g->tc, g->dc, (size_t)r * g->ldc + j, 1);
                continue;
            }
            got[nk] = c[(size_t)r * g->ldc + j];
            ref[nk++] = ref[(size_t)r * g->n + j];
        }
    h_check(h, g->k ? "c" : "c (no K step: zeros)", got, ref, nk, g->k ? tol_of(g->tc) : 0);
    for (int r = 0; r < g->m && !h->failed; r++)
        h_check_untouched(h, "c past N", g->tc, g->dc, (size_t)r * g->ldc + g->n, g->ldc - g->n);
}

static void launch(H *h, tk_kernel *kk, const Gemm *g, tk_grid grid, int bm, int bn, int bk,
                   int programs, int warps)
{
    tk_arg args[14] = {tk_ptr(g->da, g->t),
                       tk_ptr(g->db, g->t),
                       tk_ptr(g->dc, g->tc),
                       tk_i32(g->m),
                       tk_i32(g->n),
                       tk_i32(g->k),
                       tk_i32(g->lda),
                       tk_i32(g->ldb),
                       tk_i32(g->ldc),
                       tk_const("BM", bm),
                       tk_const("BN", bn),
                       tk_const("BK", bk),
                       tk_const("NUM_SMS", programs)};
    h_launch(h, kk, grid, args, programs ? 13 : 12, warps);
}

static void mm_case(H *h, const char *kernel, tk_dtype t, tk_dtype tc, int m, int n, int k, int bm,
                    int bn, int bk, int warps)
{
    if (!h_begin(h, "tma_store.%s_%s_%s.%dx%dx%d.B%dx%dx%d.w%d", kernel, h_dtype_name(t),
                 h_dtype_name(tc), m, n, k, bm, bn, bk, warps))
        return;
    tk_kernel *kk = h_kernel(h, "tma_store.tk", kernel);
    Gemm g = operands(h, t, tc, m, n, k);
    launch(h, kk, &g, h_grid((unsigned)((m + bm - 1) / bm), (unsigned)((n + bn - 1) / bn), 1), bm,
           bn, bk, 0, warps);
    check(h, &g, NULL);
    h_end(h);
}

static bool lower_triangle(int r, int c) { return c <= r; }

static void tril_case(H *h, int m, int n, int k)
{
    if (!h_begin(h, "tma_store.mm_tril_fp16.%dx%dx%d", m, n, k))
        return;
    tk_kernel *kk = h_kernel(h, "tma_store.tk", "mm_tril");
    Gemm g = operands(h, TK_F16, TK_F16, m, n, k);
    launch(h, kk, &g, h_grid((unsigned)((m + 127) / 128), (unsigned)((n + 127) / 128), 1), 128, 128,
           64, 0, 8);
    check(h, &g, lower_triangle);
    h_end(h);
}

static void persistent_case(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk,
                            int programs, int warps)
{
    if (!h_begin(h, "tma_store.persistent_%s.%dx%dx%d.B%dx%dx%d.P%d.w%d", h_dtype_name(t), m, n, k,
                 bm, bn, bk, programs, warps))
        return;
    tk_kernel *kk = h_kernel(h, "tma_store.tk", "persistent");
    Gemm g = operands(h, t, t, m, n, k);
    launch(h, kk, &g, h_grid((unsigned)programs, 1, 1), bm, bn, bk, programs, warps);
    check(h, &g, NULL);
    h_end(h);
}

/* y = 2 x through descriptors: fp32 and fp16, with Y's rows padded and
 * checked untouched past N. */
static void desc_scale_case(H *h, tk_dtype t, int m, int n, int bm, int bn)
{
    if (!h_begin(h, "tma_store.desc_scale_%s.%dx%d.B%dx%d", h_dtype_name(t), m, n, bm, bn))
        return;
    tk_kernel *kk = h_kernel(h, "tma_store.tk", "desc_scale");
    int ld = round16(n) + 16;
    double *x = h_rand_array(h, t, (size_t)m * n, -4, 4);
    void *dx = h_upload(h, t, padded(h, x, m, n, ld), (size_t)m * ld);
    void *dy = h_output(h, t, (size_t)m * ld);
    h_launch(h, kk, h_grid((unsigned)((m + bm - 1) / bm), (unsigned)((n + bn - 1) / bn), 1),
             H_ARGS(tk_ptr(dx, t), tk_ptr(dy, t), tk_i32(m), tk_i32(n), tk_i32(ld), tk_i32(ld),
                    tk_const("BM", bm), tk_const("BN", bn)),
             4);
    double *y = h_download(h, t, dy, (size_t)m * ld);
    double *got = h_malloc(h, sizeof(double) * (size_t)m * n);
    double *ref = h_malloc(h, sizeof(double) * (size_t)m * n);
    for (int r = 0; r < m && y && got && ref; r++)
        for (int c = 0; c < n; c++) {
            got[(size_t)r * n + c] = y[(size_t)r * ld + c];
            ref[(size_t)r * n + c] = 2 * x[(size_t)r * n + c];
        }
    h_check(h, "y", got, ref, (size_t)m * n, 0);
    for (int r = 0; r < m && !h->failed; r++)
        h_check_untouched(h, "y past N", t, dy, (size_t)r * ld + n, ld - n);
    h_end(h);
}

void cases_tma_store(H *h)
{
    /* multiples of the tile, and not */
    mm_case(h, "mm", TK_F16, TK_F16, 256, 256, 128, 128, 128, 64, 8);
    mm_case(h, "mm", TK_F16, TK_F16, 200, 328, 96, 128, 128, 64, 8);
    mm_case(h, "mm", TK_BF16, TK_BF16, 136, 72, 200, 64, 64, 32, 4);
    mm_case(h, "mm", TK_F16, TK_F16, 300, 520, 64, 128, 256, 64, 8);
    /* fp32 outputs: 32-bit elements, 32 columns a 128-byte panel */
    mm_case(h, "mm", TK_F16, TK_F32, 256, 128, 64, 128, 128, 64, 8);
    mm_case(h, "mm", TK_F16, TK_F32, 130, 112, 72, 64, 64, 32, 4);
    /* N not a whole number of 16 bytes: TMA would write up to the next 16
     * bytes past it, so the store stays a plain one */
    mm_case(h, "mm", TK_F16, TK_F16, 100, 90, 64, 64, 64, 32, 4);
    mm_case(h, "mm", TK_F16, TK_F32, 130, 100, 72, 64, 64, 32, 4);
    /* K = 0: no tensor map for A's extent of 0, the kernel without TMA */
    mm_case(h, "mm", TK_F16, TK_F16, 96, 80, 0, 64, 64, 32, 4);
    /* the descriptors' GEMM */
    mm_case(h, "desc_mm", TK_F16, TK_F16, 256, 384, 192, 128, 128, 64, 8);
    mm_case(h, "desc_mm", TK_BF16, TK_BF16, 190, 208, 100, 64, 128, 64, 4);
    mm_case(h, "desc_mm", TK_BF16, TK_BF16, 190, 210, 100, 64, 128, 64, 4);
    /* a mask that is not the bounds: a plain store */
    tril_case(h, 256, 256, 64);
    tril_case(h, 200, 150, 96);
    /* persistent: several tiles a program, partial tiles, more programs
     * than tiles */
    persistent_case(h, TK_F16, 512, 384, 256, 128, 128, 64, 5, 8);
    persistent_case(h, TK_BF16, 333, 272, 100, 128, 128, 64, 4, 8);
    persistent_case(h, TK_F16, 100, 80, 64, 64, 64, 32, 9, 4);
    persistent_case(h, TK_F16, 100, 90, 64, 64, 64, 32, 9, 4);
    /* a descriptor's store in a kernel with no loop */
    desc_scale_case(h, TK_F32, 200, 100, 64, 64);
    desc_scale_case(h, TK_F16, 256, 512, 64, 128);
    desc_scale_case(h, TK_BF16, 77, 90, 32, 64);
}
