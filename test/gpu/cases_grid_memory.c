/* cases_grid_memory.c: program ids on 1-, 2- and 3-D grids; loads and stores
 * with masks at ragged edges, `other`, cache hints; blocks smaller than the
 * thread count and far larger; 2-D tiles with broadcast row/column vectors.
 * Every output is poisoned first, so an element never written fails. */
#include "harness.h"

#include <stdint.h>
#include <stdio.h>

static void grid_case(H *h, const char *kernel, unsigned x, unsigned y, unsigned z)
{
    if (!h_begin(h, "grid.%s.%ux%ux%u", kernel, x, y, z))
        return;
    size_t total = (size_t)x * y * z;
    tk_kernel *k = h_kernel(h, "grid.tk", kernel);
    void *d = h_output(h, TK_I32, total * 6);
    h_launch(h, k, h_grid(x, y, z), H_ARGS(tk_ptr(d, TK_I32)), 4);
    int64_t *out = h_download_int(h, TK_I32, d, total * 6);
    int64_t *ref = h_malloc(h, total * 6 * sizeof(int64_t));
    for (unsigned c = 0; c < z; c++)
        for (unsigned b = 0; b < y; b++)
            for (unsigned a = 0; a < x; a++) {
                int64_t *r = ref + (((size_t)c * y + b) * x + a) * 6;
                r[0] = a;
                r[1] = b;
                r[2] = c;
                r[3] = x;
                r[4] = y;
                r[5] = z;
            }
    h_check_int(h, "ids", out, ref, total * 6);
    h_end(h);
}

/* y = x * a + b: one rounding of the fp32 result (fused or not) per element. */
static void scale_shift_case(H *h, size_t n, int block, int warps)
{
    if (!h_begin(h, "memory.masked_store.n%zu.B%d.w%d", n, block, warps))
        return;
    const size_t pad = 37;
    tk_kernel *k = h_kernel(h, "memory.tk", "scale_shift");
    double *x = h_rand_array(h, TK_F32, n, -4, 4);
    float a = (float)h_uniform(h, 0.5, 2), b = (float)h_uniform(h, -1, 1);
    void *dx = h_upload(h, TK_F32, x, n);
    void *dy = h_output(h, TK_F32, n + pad);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_i32((int)n), tk_f32(a), tk_f32(b),
                    tk_const("BLOCK", block)),
             warps);
    double *y = h_download(h, TK_F32, dy, n);
    double *ref = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        ref[i] = x[i] * a + b;
    h_check(h, "y", y, ref, n, 2e-7);
    h_check_untouched(h, "y", TK_F32, dy, n, pad);
    h_end(h);
}

/* Base pointers off 16-byte alignment (by `shift` elements): a kernel
 * specialised for aligned pointers must not be reused here. */
static void misaligned_case(H *h, tk_dtype t, size_t n, int shift, int block)
{
    if (!h_begin(h, "memory.misaligned_ptr_%s.n%zu.shift%d.B%d", h_dtype_name(t), n, shift, block))
        return;
    size_t sz = h_dtype_size(t), total = n + (size_t)shift;
    tk_kernel *k = h_kernel(h, "memory.tk", "scale_shift");
    double *x = h_rand_array(h, t, total, -4, 4);
    void *dx = h_upload(h, t, x, total), *dy = h_output(h, t, total);
    void *px = dx ? (char *)dx + shift * sz : NULL, *py = dy ? (char *)dy + shift * sz : NULL;
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(px, t), tk_ptr(py, t), tk_i32((int)n), tk_f32(2.0f), tk_f32(-1.0f),
                    tk_const("BLOCK", block)),
             4);
    double *y = h_download(h, t, dy, total);
    double *ref = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        ref[i] = h_round_to(t, x[shift + i] * 2 - 1);
    h_check_untouched(h, "y before the base", t, dy, 0, (size_t)shift);
    h_check(h, "y", y + shift, ref, n, 0);
    h_end(h);
}

static void load_other_case(H *h, size_t n, int block, int warps)
{
    if (!h_begin(h, "memory.load_other.n%zu.B%d.w%d", n, block, warps))
        return;
    size_t padded = h_cdiv(n, block) * block;
    tk_kernel *k = h_kernel(h, "memory.tk", "load_other");
    double *x = h_rand_array(h, TK_F32, n, -8, 8);
    void *dx = h_upload(h, TK_F32, x, n);
    void *dy = h_output(h, TK_F32, padded);
    h_launch(
        h, k, h_grid((unsigned)(padded / block), 1, 1),
        H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_i32((int)n), tk_const("BLOCK", block)),
        warps);
    double *y = h_download(h, TK_F32, dy, padded);
    double *ref = h_malloc(h, padded * sizeof(double));
    for (size_t i = 0; i < padded; i++)
        ref[i] = i < n ? 2 * x[i] : -7.0;
    h_check(h, "y", y, ref, padded, 0);
    h_end(h);
}

static void cache_hints_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "memory.cache_hints.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "memory.tk", "cache_hints");
    double *x = h_rand_array(h, TK_F32, n, -3, 3), *y = h_rand_array(h, TK_F32, n, -3, 3);
    void *dx = h_upload(h, TK_F32, x, n), *dy = h_upload(h, TK_F32, y, n);
    void *dz = h_output(h, TK_F32, 2 * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_ptr(dz, TK_F32), tk_i32((int)n),
                    tk_const("BLOCK", block)),
             4);
    double *z = h_download(h, TK_F32, dz, 2 * n);
    double *ref = h_malloc(h, 2 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        ref[i] = (float)(x[i] - y[i]);
        ref[n + i] = (float)(x[i] + y[i]);
    }
    h_check(h, "z", z, ref, 2 * n, 0);
    h_end(h);
}

/* A 2-D tile whose rows and columns run past m and n, stored into a wider
 * row stride: the columns between n and the stride must stay poisoned. */
static void tile_case(H *h, int m, int n, int bm, int bn, int warps)
{
    if (!h_begin(h, "memory.tile2d.%dx%d.B%dx%d.w%d", m, n, bm, bn, warps))
        return;
    int sx = n + 3, sy = n + 5;
    tk_kernel *k = h_kernel(h, "memory.tk", "tile_bias");
    double *x = h_rand_array(h, TK_F32, (size_t)m * sx, -2, 2);
    double *rb = h_rand_array(h, TK_F32, m, 0.5, 1.5), *cb = h_rand_array(h, TK_F32, n, -1, 1);
    void *dx = h_upload(h, TK_F32, x, (size_t)m * sx);
    void *drb = h_upload(h, TK_F32, rb, m), *dcb = h_upload(h, TK_F32, cb, n);
    void *dy = h_output(h, TK_F32, (size_t)m * sy);
    h_launch(h, k, h_grid((unsigned)h_cdiv(m, bm), (unsigned)h_cdiv(n, bn), 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(drb, TK_F32), tk_ptr(dcb, TK_F32),
                    tk_ptr(dy, TK_F32), tk_i32(m), tk_i32(n), tk_i32(sx), tk_i32(sy),
                    tk_const("BM", bm), tk_const("BN", bn)),
             warps);
    double *y = h_download(h, TK_F32, dy, (size_t)m * sy);
    double *got = h_malloc(h, (size_t)m * n * sizeof(double));
    double *ref = h_malloc(h, (size_t)m * n * sizeof(double));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            got[i * n + j] = y[(size_t)i * sy + j];
            ref[i * n + j] = x[(size_t)i * sx + j] * rb[i] + cb[j];
        }
    h_check(h, "y", got, ref, (size_t)m * n, 2e-7);
    for (int i = 0; i < m && !h->failed; i++)
        h_check_untouched(h, "y row padding", TK_F32, dy, (size_t)i * sy + n, (size_t)(sy - n));
    h_end(h);
}

/* Sizes no device or host can give, and sizes whose rounding would wrap:
 * each is TK_ERR_NO_MEMORY with a message and no pointer, and the context
 * still launches correctly afterwards. */
static void alloc_huge_case(H *h)
{
    if (!h_begin(h, "memory.alloc_huge"))
        return;
    static const size_t sizes[] = {SIZE_MAX, SIZE_MAX - 100, SIZE_MAX / 2 + 1, (size_t)1 << 62};
    h_kernel(h, "memory.tk", "scale_shift"); /* makes the case's context */
    for (int i = 0; i < 4 && h->ctx && !h->failed; i++) {
        void *p = (void *)1;
        tk_status s = tk_alloc(h->ctx, sizes[i], &p);
        h_expect(h, s == TK_ERR_NO_MEMORY && p == NULL && *tk_last_error(),
                 "tk_alloc(%zu): %s, '%s'", sizes[i], tk_status_name(s), tk_last_error());
    }
    h_end(h);
    scale_shift_case(h, 1000, 128, 4);
}

void cases_grid_memory(H *h)
{
    static const unsigned grids[][3] = {{7, 1, 1}, {1, 1, 1}, {5, 3, 1}, {3, 4, 2}, {2, 1, 5}};
    for (int i = 0; i < 5; i++) {
        grid_case(h, "grid_ids", grids[i][0], grids[i][1], grids[i][2]);
        grid_case(h, "grid_ids_block", grids[i][0], grids[i][1], grids[i][2]);
    }
    if (h->gpu) /* beyond 65535 programs on x */
        grid_case(h, "grid_ids", 70001, 3, 2);
    size_t big = h->gpu ? 1000003 : 20011;
    scale_shift_case(h, 1000, 128, 4);
    scale_shift_case(h, 1000, 16, 4); /* a block smaller than the 128 threads */
    scale_shift_case(h, 77, 32, 4);
    scale_shift_case(h, 3000, 256, 1);
    scale_shift_case(h, 3000, 256, 8);
    scale_shift_case(h, big, 8192, 4); /* 64 elements per thread */
    scale_shift_case(h, big, 1024, 8);
    scale_shift_case(h, 1, 128, 4); /* n == 1: an argument specialised as 1 */
    scale_shift_case(h, 5000, 512, 16);
    if (h->gpu)
        scale_shift_case(h, (1u << 24) + 3, 128, 4); /* 131073 programs */
    misaligned_case(h, TK_F32, 1001, 1, 256);
    misaligned_case(h, TK_F32, 4099, 3, 1024);
    misaligned_case(h, TK_F16, 1001, 1, 256);
    misaligned_case(h, TK_F16, 777, 4, 128);
    load_other_case(h, 1000, 128, 4);
    load_other_case(h, 300, 16, 4);
    load_other_case(h, 9000, 8192, 4);
    cache_hints_case(h, 5001, 256);
    alloc_huge_case(h);
    tile_case(h, 37, 53, 16, 16, 4);
    tile_case(h, 37, 53, 4, 8, 4); /* 32 elements over 128 threads */
    tile_case(h, 37, 53, 64, 64, 4);
    tile_case(h, 37, 53, 2, 128, 2);
    tile_case(h, 100, 9, 32, 8, 8);
    if (h->gpu)
        tile_case(h, 1000, 777, 64, 128, 4);
}
