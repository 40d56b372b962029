/* cases_flatten.c: persistent GEMMs whose tile loop asks to be flattened
 * (tl.range(..., flatten=True)), which tk turns into one loop over (tile, K
 * step) so that the copies run ahead across tiles: more programs than
 * tiles, several tiles a program, partial tiles, one K step, K not a
 * multiple of the block, and K = 0 (no K step: every tile stores zeros).
 * The counting kernel checks the values the loops carry besides the
 * accumulator: a K-loop value that starts from the tile, and a tile count
 * read after the loop; the row sums have no dot, their loads may go to
 * private rings. */
#include "harness.h"

static double gemm_tol(tk_dtype t)
{
    return t == TK_F16 ? 1e-3 : t == TK_BF16 ? 8e-3 : 2e-3; /* one rounding; fp32 as tf32 */
}

static void tutorial_case(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk,
                          int programs, int warps, int stages)
{
    if (!h_begin(h, "flatten.gemm_%s.%dx%dx%d.B%dx%dx%d.P%d.w%d.s%d", h_dtype_name(t), m, n, k, bm,
                 bn, bk, programs, warps, stages))
        return;
    tk_kernel *kk = h_kernel(h, "flatten.tk", "persistent_gemm");
    HGemm g = h_gemm_operands(h, t, m, n, k, false);
    h_launch(h, kk, h_grid((unsigned)programs, 1, 1),
             H_ARGS(tk_ptr(g.da, t), tk_ptr(g.db, t), tk_ptr(g.dc, t), tk_i32(m), tk_i32(n),
                    tk_i32(k), tk_i32(k), tk_i32(1), tk_i32(n), tk_i32(1), tk_i32(n), tk_i32(1),
                    tk_const("BM", bm), tk_const("BN", bn), tk_const("BK", bk),
                    tk_const("GROUP", 2), tk_const("NUM_SMS", programs), tk_const("NS", stages)),
             warps);
    h_gemm_check(h, &g, gemm_tol(t));
    h_end(h);
}

static void affine_case(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk, int programs,
                        int warps)
{
    if (!h_begin(h, "flatten.affine_%s.%dx%dx%d.B%dx%dx%d.P%d.w%d", h_dtype_name(t), m, n, k, bm,
                 bn, bk, programs, warps))
        return;
    const int mnk[3] = {m, n, k}, block[3] = {bm, bn, bk};
    h_persistent_gemm(h, h_kernel(h, "flatten.tk", "persistent_gemm_affine"), t, mnk, block,
                      programs, warps, gemm_tol(t));
    h_end(h);
}

static void counts_case(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk, int programs)
{
    if (!h_begin(h, "flatten.counts_%s.%dx%dx%d.B%dx%dx%d.P%d", h_dtype_name(t), m, n, k, bm, bn,
                 bk, programs))
        return;
    tk_kernel *kk = h_kernel(h, "flatten.tk", "persistent_gemm_counts");
    int tiles = (int)(h_cdiv(m, bm) * h_cdiv(n, bn)), ksteps = (int)h_cdiv(k, bk);
    size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    double *a = h_rand_array(h, t, na ? na : 1, -1, 1);
    double *b = h_rand_array(h, t, nb ? nb : 1, -1, 1);
    void *da = h_upload(h, t, a, na ? na : 1), *db = h_upload(h, t, b, nb ? nb : 1);
    void *dc = h_output(h, TK_F32, nc);
    void *dsteps = h_output(h, TK_I32, (size_t)tiles), *ddone = h_output(h, TK_I32, programs);
    h_launch(h, kk, h_grid((unsigned)programs, 1, 1),
             H_ARGS(tk_ptr(da, t), tk_ptr(db, t), tk_ptr(dc, TK_F32), tk_ptr(dsteps, TK_I32),
                    tk_ptr(ddone, TK_I32), tk_i32(m), tk_i32(n), tk_i32(k), tk_const("BM", bm),
                    tk_const("BN", bn), tk_const("BK", bk), tk_const("NUM_SMS", programs)),
             4);
    double *c = h_download(h, TK_F32, dc, nc);
    double *steps = h_download(h, TK_I32, dsteps, (size_t)tiles);
    double *done = h_download(h, TK_I32, ddone, (size_t)programs);
    double *ref = h_matmul_ref(h, a, b, NULL, m, n, k, false);
    h_check(h, "c", c, ref, nc, k ? gemm_tol(t) : 0);
    int64_t *got = h_malloc(h, sizeof(int64_t) * (size_t)(tiles + programs));
    int64_t *want = h_malloc(h, sizeof(int64_t) * (size_t)(tiles + programs));
    for (int i = 0; i < tiles; i++) {
        got[i] = (int64_t)steps[i];
        want[i] = i + ksteps;
    }
    for (int p = 0; p < programs; p++) {
        got[tiles + p] = (int64_t)done[p];
        want[tiles + p] = p < tiles ? (tiles - 1 - p) / programs + 1 : 0;
    }
    h_check_int(h, "K steps per tile, tiles per program", got, want, (size_t)(tiles + programs));
    h_end(h);
}

static void row_sums_case(H *h, int rows, int cols, int block, int programs, int stages)
{
    if (!h_begin(h, "flatten.row_sums.%dx%d.B%d.P%d.S%d", rows, cols, block, programs, stages))
        return;
    tk_kernel *kk = h_kernel(h, "flatten.tk", "persistent_row_sums");
    int stride = (cols + 15) / 16 * 16 + 16;
    size_t n = (size_t)rows * stride;
    double *x = h_rand_array(h, TK_F32, n, -1, 1);
    void *dx = h_upload(h, TK_F32, x, n), *dout = h_output(h, TK_F32, (size_t)rows);
    void *dsteps = h_output(h, TK_I32, (size_t)rows);
    h_launch(h, kk, h_grid((unsigned)programs, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_ptr(dsteps, TK_I32), tk_i32(rows),
                    tk_i32(cols), tk_i32(stride), tk_const("BLOCK", block),
                    tk_const("NUM", programs), tk_const("NS", stages)),
             4);
    double *out = h_download(h, TK_F32, dout, (size_t)rows);
    double *steps = h_download(h, TK_I32, dsteps, (size_t)rows);
    double *ref = h_malloc(h, sizeof(double) * (size_t)rows);
    int64_t *got = h_malloc(h, sizeof(int64_t) * (size_t)rows);
    int64_t *want = h_malloc(h, sizeof(int64_t) * (size_t)rows);
    for (int r = 0; r < rows; r++) {
        ref[r] = 0;
        for (int c = 0; c < cols; c++)
            ref[r] += x[(size_t)r * stride + c];
        got[r] = (int64_t)steps[r];
        want[r] = r + (int64_t)h_cdiv(cols, block);
    }
    h_check(h, "row sums", out, ref, (size_t)rows, 1e-5);
    h_check_int(h, "steps per row", got, want, (size_t)rows);
    h_end(h);
}

void cases_flatten(H *h)
{
    tutorial_case(h, TK_F16, 80, 72, 96, 32, 32, 32, 3, 4, 3); /* 9 tiles over 3 programs */
    tutorial_case(h, TK_F16, 40, 40, 40, 32, 32, 16, 7, 4, 2); /* 4 tiles, 7 programs */
    tutorial_case(h, TK_F16, 64, 64, 32, 32, 32, 32, 2, 4, 3); /* one K step a tile */
    tutorial_case(h, TK_F16, 48, 40, 0, 32, 32, 32, 2, 4, 3);  /* K = 0 */
    tutorial_case(h, TK_BF16, 70, 96, 80, 32, 64, 32, 2, 4, 4);
    tutorial_case(h, TK_F32, 50, 48, 40, 32, 32, 16, 3, 4, 3);
    counts_case(h, TK_F16, 72, 50, 70, 32, 32, 32, 3);
    counts_case(h, TK_F16, 40, 40, 0, 32, 32, 32, 5);
    counts_case(h, TK_F32, 33, 17, 20, 16, 16, 16, 4);
    row_sums_case(h, 13, 300, 64, 4, 3);
    row_sums_case(h, 5, 64, 64, 8, 2); /* one step a row, more programs than rows */
    row_sums_case(h, 6, 0, 64, 2, 3);  /* no columns: zero sums */
    affine_case(h, TK_F16, 72, 48, 80, 32, 32, 16, 3, 4);
    if (!h->gpu)
        return;
    tutorial_case(h, TK_F16, 1000, 1100, 520, 128, 256, 64, 7, 8, 3);
    tutorial_case(h, TK_F16, 777, 999, 1000, 128, 128, 64, 11, 8, 4);
    tutorial_case(h, TK_BF16, 512, 384, 256, 128, 128, 64, 132, 4,
                  3); /* more programs than tiles */
    tutorial_case(h, TK_F16, 256, 256, 0, 128, 128, 64, 3, 8, 3);
    counts_case(h, TK_BF16, 500, 300, 333, 64, 64, 32, 9);
    row_sums_case(h, 1000, 4000, 256, 132, 4);
    /* N and K multiples of 16 (TMA's rows), partial tiles along M, N, K */
    affine_case(h, TK_F16, 1000, 1104, 528, 128, 256, 64, 7, 8);
    affine_case(h, TK_F16, 777, 1008, 1008, 128, 128, 64, 11, 8);
    affine_case(h, TK_BF16, 512, 384, 256, 128, 128, 64, 132, 4);
    affine_case(h, TK_F16, 256, 256, 0, 128, 256, 64, 3, 8); /* K = 0: the fallback's zeros */
    affine_case(h, TK_F32, 300, 272, 208, 128, 128, 32, 5, 8);
}
