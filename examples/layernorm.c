/* layernorm: layer norm over the rows of a rows x cols fp32 matrix through
 * the tk API (a runtime fp32 eps, chunked columns), checking y, mean and
 * rstd against a float64 CPU reference (relative error <= 1e-5).
 * Usage: layernorm [rows cols] (default 64 1500). */
#include "example.h"

int main(int argc, char **argv)
{
    unsigned rows = argc > 2 ? (unsigned)strtoul(argv[1], NULL, 0) : 64;
    unsigned cols = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 1500;
    const unsigned block = 512;
    const float eps = 1e-5f;
    ex_seed("layernorm");
    tk_context *ctx = ex_context("layernorm");
    tk_module *mod;
    tk_kernel *k;
    CHECK(tk_module_load_file(ctx, ex_kernel_path("layernorm.tk"), &mod));
    CHECK(tk_module_kernel(mod, "layernorm", &k));

    size_t n = (size_t)rows * cols;
    float *x = ex_malloc(n * 4), *w = ex_malloc(cols * 4), *b = ex_malloc(cols * 4);
    float *y = ex_malloc(n * 4), *mean = ex_malloc(rows * 4), *rstd = ex_malloc(rows * 4);
    for (size_t i = 0; i < n; i++)
        x[i] = 2.0f * ex_normal() + 0.5f;
    for (unsigned c = 0; c < cols; c++) {
        w[c] = ex_uniform(0.5f, 1.5f);
        b[c] = ex_uniform(-0.5f, 0.5f);
    }
    double *ry = ex_malloc(n * 8), *rm = ex_malloc(rows * 8), *rr = ex_malloc(rows * 8);
    for (unsigned r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * cols;
        double s = 0, v = 0;
        for (unsigned c = 0; c < cols; c++)
            s += xr[c];
        double m = s / cols;
        for (unsigned c = 0; c < cols; c++)
            v += (xr[c] - m) * (xr[c] - m);
        double inv = 1 / sqrt(v / cols + eps);
        rm[r] = m;
        rr[r] = inv;
        for (unsigned c = 0; c < cols; c++)
            ry[(size_t)r * cols + c] = (xr[c] - m) * inv * w[c] + b[c];
    }
    void *dx, *dy, *dw, *db, *dmean, *drstd;
    CHECK(tk_alloc(ctx, n * 4, &dx));
    CHECK(tk_alloc(ctx, n * 4, &dy));
    CHECK(tk_alloc(ctx, cols * 4, &dw));
    CHECK(tk_alloc(ctx, cols * 4, &db));
    CHECK(tk_alloc(ctx, rows * 4, &dmean));
    CHECK(tk_alloc(ctx, rows * 4, &drstd));
    CHECK(tk_copy_to(ctx, dx, x, n * 4));
    CHECK(tk_copy_to(ctx, dw, w, cols * 4));
    CHECK(tk_copy_to(ctx, db, b, cols * 4));
    CHECK(tk_memset(ctx, dy, 0xff, n * 4));
    CHECK(tk_memset(ctx, dmean, 0xff, rows * 4));
    CHECK(tk_memset(ctx, drstd, 0xff, rows * 4));

    tk_arg args[] = {tk_ptr(dx, TK_F32),      tk_ptr(dy, TK_F32),    tk_ptr(dw, TK_F32),
                     tk_ptr(db, TK_F32),      tk_ptr(dmean, TK_F32), tk_ptr(drstd, TK_F32),
                     tk_i32((int)cols),       tk_i32((int)cols),     tk_f32(eps),
                     tk_const("BLOCK", block)};
    double t0 = ex_now();
    CHECK(tk_launch(k, (tk_grid){rows, 1, 1}, args, TK_ARRAY_COUNT(args),
                    &(tk_launch_options){.num_warps = 4}));
    CHECK(tk_synchronize(ctx));
    double t1 = ex_now();
    CHECK(tk_copy_from(ctx, y, dy, n * 4));
    CHECK(tk_copy_from(ctx, mean, dmean, rows * 4));
    CHECK(tk_copy_from(ctx, rstd, drstd, rows * 4));
    double *gy = ex_malloc(n * 8), *gm = ex_malloc(rows * 8), *gr = ex_malloc(rows * 8);
    for (size_t i = 0; i < n; i++)
        gy[i] = y[i];
    for (unsigned r = 0; r < rows; r++) {
        gm[r] = mean[r];
        gr[r] = rstd[r];
    }
    double ey = ex_rel_error(gy, ry, n), em = ex_rel_error(gm, rm, rows);
    double er = ex_rel_error(gr, rr, rows);
    bool ok = ey <= 1e-5 && em <= 1e-5 && er <= 1e-5;
    printf("layernorm: %ux%u, grid=(%u,1,1), BLOCK=%u, eps=%g, first launch (compile + run) "
           "%.1f ms, relative errors y %.2e, mean %.2e, rstd %.2e: %s\n",
           rows, cols, rows, block, eps, (t1 - t0) * 1e3, ey, em, er, ok ? "OK" : "MISMATCH");
    void *bufs[] = {dx, dy, dw, db, dmean, drstd};
    for (int i = 0; i < 6; i++)
        CHECK(tk_free(ctx, bufs[i]));
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    free(x);
    free(w);
    free(b);
    free(y);
    free(mean);
    free(rstd);
    free(ry);
    free(rm);
    free(rr);
    free(gy);
    free(gm);
    free(gr);
    return ok ? 0 : 1;
}
