/* cases_pipeline.c: loops whose loads feed reductions, with num_stages on
 * the loop, which tk copies ahead into private rings of shared memory:
 * ragged and exact column counts, a single iteration and none, 2 to 4
 * stages, fp32, fp16 and bf16 runs of 16 bytes, fp32 runs of 4 bytes (rows
 * not aligned), 16-bit elements with ragged columns (not copied: runs of 2
 * bytes), int32 2-D tiles through carried
 * pointers, two loads a step, and an in-place chain whose loads read what
 * the previous iteration stored (left as plain loads: the result must still
 * be the sequential one). Sums of integers are exact; fp32 sums of random
 * values are bounded by 1e-5. */
#include "harness.h"

/* stride 0: a multiple of 16 elements, so rows start 16-byte aligned */
static void row_sum_case(H *h, tk_dtype t, int rows, int cols, int block, int stages, int stride)
{
    if (!stride)
        stride = (cols + 15) / 16 * 16 + 16;
    if (!h_begin(h, "pipeline.row_sum_%s.%dx%d.s%d.B%d.S%d", h_dtype_name(t), rows, cols, stride,
                 block, stages))
        return;
    size_t n = (size_t)rows * stride;
    tk_kernel *k = h_kernel(h, "pipeline.tk", "row_sum");
    double *x = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = t == TK_F32 ? h_round_to(t, h_uniform(h, -1, 1)) : (double)h_randint(h, -8, 8);
    void *dx = h_upload(h, t, x, n), *dout = h_output(h, TK_F32, rows);
    h_launch(h, k, h_grid(rows, 1, 1),
             H_ARGS(tk_ptr(dx, t), tk_ptr(dout, TK_F32), tk_i32(stride), tk_i32(cols),
                    tk_const("BLOCK", block), tk_const("STAGES", stages)),
             4);
    double *out = h_download(h, TK_F32, dout, rows);
    double *ref = h_malloc(h, rows * sizeof(double));
    for (int r = 0; r < rows; r++) {
        ref[r] = 0;
        for (int c = 0; c < cols; c++)
            ref[r] += x[(size_t)r * stride + c];
    }
    h_check(h, "row sums", out, ref, rows, t == TK_F32 ? 1e-5 : 0);
    h_end(h);
}

static void row_dot_max_case(H *h, tk_dtype t, int rows, int cols, int block, int stages)
{
    if (!h_begin(h, "pipeline.row_dot_max_%s.%dx%d.B%d.S%d", h_dtype_name(t), rows, cols, block,
                 stages))
        return;
    size_t n = (size_t)rows * cols;
    tk_kernel *k = h_kernel(h, "pipeline.tk", "row_dot_max");
    double *x = h_malloc(h, n * sizeof(double)), *y = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)h_randint(h, -6, 6);
        y[i] = (double)h_randint(h, -6, 6);
    }
    void *dx = h_upload(h, t, x, n), *dy = h_upload(h, t, y, n);
    void *ddot = h_output(h, TK_F32, rows), *dmax = h_output(h, TK_F32, rows);
    h_launch(h, k, h_grid(rows, 1, 1),
             H_ARGS(tk_ptr(dx, t), tk_ptr(dy, t), tk_ptr(ddot, TK_F32), tk_ptr(dmax, TK_F32),
                    tk_i32(cols), tk_i32(cols), tk_const("BLOCK", block),
                    tk_const("STAGES", stages)),
             4);
    double *dot = h_download(h, TK_F32, ddot, rows), *mx = h_download(h, TK_F32, dmax, rows);
    double *rd = h_malloc(h, rows * sizeof(double)), *rm = h_malloc(h, rows * sizeof(double));
    for (int r = 0; r < rows; r++) {
        rd[r] = 0;
        rm[r] = x[(size_t)r * cols];
        for (int c = 0; c < cols; c++) {
            rd[r] += x[(size_t)r * cols + c] * y[(size_t)r * cols + c];
            rm[r] = x[(size_t)r * cols + c] > rm[r] ? x[(size_t)r * cols + c] : rm[r];
        }
    }
    h_check(h, "row dot products", dot, rd, rows, 0);
    h_check(h, "row maxima", mx, rm, rows, 0);
    h_end(h);
}

static void tile_case(H *h, int rows, int cols, int br, int block, int stages)
{
    if (!h_begin(h, "pipeline.tile_row_sum.%dx%d.%dx%d.S%d", rows, cols, br, block, stages))
        return;
    int stride = (cols + 15) / 16 * 16 + 16;
    size_t n = (size_t)rows * stride;
    tk_kernel *k = h_kernel(h, "pipeline.tk", "tile_row_sum");
    double *x = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = (double)h_randint(h, -1000, 1000);
    void *dx = h_upload(h, TK_I32, x, n), *dout = h_output(h, TK_I32, rows);
    h_launch(h, k, h_grid((rows + br - 1) / br, 1, 1),
             H_ARGS(tk_ptr(dx, TK_I32), tk_ptr(dout, TK_I32), tk_i32(rows), tk_i32(cols),
                    tk_i32(stride), tk_const("BR", br), tk_const("BLOCK", block),
                    tk_const("STAGES", stages)),
             4);
    double *out = h_download(h, TK_I32, dout, rows);
    double *ref = h_malloc(h, rows * sizeof(double));
    for (int r = 0; r < rows; r++) {
        ref[r] = 0;
        for (int c = 0; c < cols; c++)
            ref[r] += x[(size_t)r * stride + c];
    }
    h_check(h, "tile row sums", out, ref, rows, 0);
    h_end(h);
}

static void chain_case(H *h, int cols, int block, int stages)
{
    if (!h_begin(h, "pipeline.chain_in_place.n%d.B%d.S%d", cols, block, stages))
        return;
    tk_kernel *k = h_kernel(h, "pipeline.tk", "chain_in_place");
    double *x = h_malloc(h, (size_t)cols * sizeof(double));
    for (int i = 0; i < cols; i++)
        x[i] = (double)h_randint(h, -100, 100);
    void *dx = h_upload(h, TK_F32, x, cols);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_i32(cols), tk_const("BLOCK", block),
                    tk_const("STAGES", stages)),
             4);
    double *out = h_download(h, TK_F32, dx, cols);
    for (int i = block; i < cols; i++)
        x[i] = x[i - block] + 1.0; /* the sequential loop, block by block */
    h_check(h, "chained blocks", out, x, cols, 0);
    h_end(h);
}

/* C = A @ B through gemm_even_k, whose K loop loads without masks: K a
 * multiple of BK (0, fewer iterations than stages, many); rows and columns
 * wrap inside A and B, and only the store is masked. */
static void even_k_case(H *h, tk_dtype t, int m, int n, int k, int bm, int bn, int bk, int warps)
{
    if (!h_begin(h, "pipeline.gemm_even_k_%s.%dx%dx%d.B%dx%dx%d.w%d", h_dtype_name(t), m, n, k, bm,
                 bn, bk, warps))
        return;
    tk_kernel *kk = h_kernel(h, "pipeline.tk", "gemm_even_k");
    HGemm g = h_gemm_operands(h, t, m, n, k, false);
    h_launch(h, kk, h_grid((unsigned)h_cdiv(m, bm), (unsigned)h_cdiv(n, bn), 1),
             H_ARGS(tk_ptr(g.da, t), tk_ptr(g.db, t), tk_ptr(g.dc, t), tk_i32(m), tk_i32(n),
                    tk_i32(k), tk_i32(k), tk_i32(n), tk_i32(n), tk_const("BM", bm),
                    tk_const("BN", bn), tk_const("BK", bk)),
             warps);
    h_gemm_check(h, &g, t == TK_F16 ? 1e-3 : 8e-3);
    h_end(h);
}

/* dot_and_colsum: C = A @ (the sum over the K steps of each B tile) and the
 * column sums of B, fp16 integers (exact); 2 warps take mma, 4 wgmma. */
static void dot_colsum_case(H *h, int k, int warps)
{
    enum { BM = 64, BN = 64, BK = 32 };
    if (!h_begin(h, "pipeline.dot_and_colsum.K%d.w%d", k, warps))
        return;
    tk_kernel *kk = h_kernel(h, "pipeline.tk", "dot_and_colsum");
    double *a = h_malloc(h, BM * BK * sizeof(double)),
           *b = h_malloc(h, (size_t)k * BN * sizeof(double));
    for (int i = 0; i < BM * BK; i++)
        a[i] = (double)h_randint(h, -3, 3);
    for (int i = 0; i < k * BN; i++)
        b[i] = (double)h_randint(h, -3, 3);
    void *da = h_upload(h, TK_F16, a, BM * BK), *db = h_upload(h, TK_F16, b, (size_t)k * BN);
    void *dc = h_output(h, TK_F32, BM * BN), *ds = h_output(h, TK_F32, BN);
    h_launch(h, kk, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(da, TK_F16), tk_ptr(db, TK_F16), tk_ptr(dc, TK_F32), tk_ptr(ds, TK_F32),
                    tk_i32(k), tk_const("BM", BM), tk_const("BN", BN), tk_const("BK", BK)),
             warps);
    double *c = h_download(h, TK_F32, dc, BM * BN), *s = h_download(h, TK_F32, ds, BN);
    double *rc = h_malloc(h, BM * BN * sizeof(double)), *rs = h_malloc(h, BN * sizeof(double));
    for (int n = 0; n < BN; n++) {
        rs[n] = 0;
        for (int r = 0; r < k; r++)
            rs[n] += b[(size_t)r * BN + n];
        for (int m = 0; m < BM; m++) {
            rc[m * BN + n] = 0;
            for (int r = 0; r < k; r++)
                rc[m * BN + n] += a[m * BK + r % BK] * b[(size_t)r * BN + n];
        }
    }
    h_check(h, "products", c, rc, BM * BN, 0);
    h_check(h, "column sums", s, rs, BN, 0);
    h_end(h);
}

/* rows_max_persistent: programs take rows num_programs apart (a runtime
 * step, counting up or down); more programs than rows leaves some with
 * none. Masked-off columns must read as -inf (the copies fill zeros, and
 * every row is negative), so a wrong fill shows in the maximum. */
static void persistent_case(H *h, int rows, int cols, int block, int progs, int stages, bool down)
{
    if (!h_begin(h, "pipeline.rows_max_persistent.%dx%d.B%d.P%d.S%d%s", rows, cols, block, progs,
                 stages, down ? ".down" : ""))
        return;
    int stride = (cols + 15) / 16 * 16;
    size_t n = (size_t)rows * stride;
    tk_kernel *k = h_kernel(h, "pipeline.tk", "rows_max_persistent");
    double *x = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = h_round_to(TK_F32, h_uniform(h, -9, -1));
    void *dx = h_upload(h, TK_F32, x, n), *dout = h_output(h, TK_F32, rows);
    h_launch(h, k, h_grid((unsigned)progs, 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(stride), tk_i32(rows),
                    tk_i32(cols), tk_const("BLOCK", block), tk_const("STAGES", stages),
                    tk_const("DOWN", down)),
             4);
    double *out = h_download(h, TK_F32, dout, rows);
    double *ref = h_malloc(h, rows * sizeof(double));
    for (int r = 0; r < rows; r++) {
        ref[r] = x[(size_t)r * stride];
        for (int c = 1; c < cols; c++)
            ref[r] = x[(size_t)r * stride + c] > ref[r] ? x[(size_t)r * stride + c] : ref[r];
    }
    h_check(h, "row maxima", out, ref, rows, 0);
    h_end(h);
}

/* gemm_dequant_u8: C = A @ ((Q - 8) * scale) with Q bytes; the byte tile's
 * copies run ahead through a private ring (the kernel's stages), masked on
 * the K tail and N (a masked byte reads 0, whose dequantised -8 * scale
 * meets a masked, zero, A column). Poisoned C, fp64 reference. */
static void dequant_case(H *h, int m, int n, int k, int bm, int bn, int bk)
{
    if (!h_begin(h, "pipeline.gemm_dequant_u8.%dx%dx%d.B%dx%dx%d", m, n, k, bm, bn, bk))
        return;
    tk_kernel *kk = h_kernel(h, "pipeline.tk", "gemm_dequant_u8");
    int sq = (n + 15) / 16 * 16;
    double *a = h_rand_array(h, TK_F16, (size_t)m * k, -1, 1);
    int64_t *q = h_malloc(h, (size_t)k * sq * sizeof(int64_t));
    double *deq = h_malloc(h, (size_t)k * n * sizeof(double));
    double *scale = h_malloc(h, (size_t)n * sizeof(double));
    for (int j = 0; j < n; j++)
        scale[j] = h_round_to(TK_F16, h_uniform(h, 0.01, 0.1));
    for (int r = 0; r < k; r++)
        for (int j = 0; j < sq; j++) {
            q[(size_t)r * sq + j] = h_randint(h, 0, 15);
            if (j < n)
                deq[(size_t)r * n + j] =
                    h_round_to(TK_F16, ((double)q[(size_t)r * sq + j] - 8.0) * scale[j]);
        }
    void *da = h_upload(h, TK_F16, a, (size_t)m * k),
         *dq = h_upload_int(h, TK_U8, q, (size_t)k * sq);
    void *ds = h_upload(h, TK_F16, scale, (size_t)n), *dc = h_output(h, TK_F32, (size_t)m * n);
    h_launch(h, kk, h_grid((unsigned)h_cdiv(m, bm), (unsigned)h_cdiv(n, bn), 1),
             H_ARGS(tk_ptr(da, TK_F16), tk_ptr(dq, TK_U8), tk_ptr(ds, TK_F16), tk_ptr(dc, TK_F32),
                    tk_i32(m), tk_i32(n), tk_i32(k), tk_i32(k), tk_i32(sq), tk_i32(n),
                    tk_const("BM", bm), tk_const("BN", bn), tk_const("BK", bk)),
             4);
    double *c = h_download(h, TK_F32, dc, (size_t)m * n);
    h_check(h, "dequantised product", c, h_matmul_ref(h, a, deq, NULL, m, n, k, false),
            (size_t)m * n, 1e-3);
    h_end(h);
}

void cases_pipeline(H *h)
{
    static const int sizes[][4] = {{64, 1000, 256, 3}, {32, 4096, 1024, 3}, {16, 3001, 512, 2},
                                   {8, 17, 256, 4},    {4, 0, 256, 3},      {128, 2048, 128, 4},
                                   {3, 256, 256, 2}};
    for (int i = 0; i < 7; i++)
        row_sum_case(h, TK_F32, sizes[i][0], sizes[i][1], sizes[i][2], sizes[i][3], 0);
    row_sum_case(h, TK_F32, 16, 1002, 256, 3, 1003); /* unaligned rows: runs of 4 bytes */
    row_sum_case(h, TK_F16, 32, 4096, 1024, 3, 0);
    row_sum_case(h, TK_BF16, 16, 1024, 256, 4, 0);
    row_sum_case(h, TK_BF16, 16, 777, 256, 4, 0); /* 2-byte runs: loads stay */
    row_dot_max_case(h, TK_F32, 32, 2000, 512, 3);
    row_dot_max_case(h, TK_F16, 16, 4096, 1024, 2);
    tile_case(h, 100, 1000, 16, 64, 3);
    tile_case(h, 64, 64, 32, 64, 2);
    tile_case(h, 33, 517, 8, 128, 4);
    chain_case(h, 4096, 256, 3);
    chain_case(h, 1000, 128, 2);
    even_k_case(h, TK_F16, 96, 80, 64, 32, 32, 32, 4); /* 2 iterations, 3 stages */
    even_k_case(h, TK_F16, 64, 64, 0, 32, 32, 32, 4);
    persistent_case(h, 37, 100, 128, 8, 3, false);
    persistent_case(h, 5, 64, 64, 8, 2, false); /* three programs get no row */
    persistent_case(h, 37, 100, 128, 8, 3, true);
    dequant_case(h, 40, 36, 70, 16, 32, 32);
    dot_colsum_case(h, 256, 2);
    dot_colsum_case(h, 256, 4);
    dot_colsum_case(h, 32, 4); /* one step */
    if (h->gpu) {
        persistent_case(h, 4096, 1000, 1024, 132, 4, false);
        persistent_case(h, 1000, 1000, 1024, 132, 3, true);
        even_k_case(h, TK_F16, 1000, 776, 1024, 128, 128, 64, 4);
        dequant_case(h, 256, 1000, 1000, 64, 128, 64);
        even_k_case(h, TK_BF16, 512, 512, 64, 128, 128, 64, 4); /* 1 iteration */
        even_k_case(h, TK_F16, 2048, 2048, 2048, 128, 256, 64, 8);
    }
}
