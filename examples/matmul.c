/* matmul: C = A @ B through the tk API in fp16 (fp16 output, fp32
 * accumulation) and fp32 (tf32 tensor cores by default, as Triton), checked
 * against a float64 CPU product of the same (rounded) inputs.
 * Usage: matmul [M N K] [fp16|fp32|both] [BM BN BK warps stages]
 * (default 512 512 512 both, 64 64 32 4 3). */
#include "example.h"

typedef struct Mat {
    unsigned m, n, k;
    bool half;
    unsigned bm, bn, bk; /* tile */
    int warps, stages;
} Mat;

static void fill(void *host, double *exact, size_t n, bool half)
{
    for (size_t i = 0; i < n; i++) {
        float v = ex_uniform(-1.0f, 1.0f);
        if (half) {
            uint16_t h = tk_f32_to_f16(v);
            ((uint16_t *)host)[i] = h;
            exact[i] = tk_f16_to_f32(h);
        } else {
            ((float *)host)[i] = v;
            exact[i] = v;
        }
    }
}

static int run(tk_context *ctx, tk_kernel *k, Mat s)
{
    const unsigned bm = s.bm, bn = s.bn, bk = s.bk, group = 8;
    size_t es = s.half ? 2 : 4;
    size_t na = (size_t)s.m * s.k, nb = (size_t)s.k * s.n, nc = (size_t)s.m * s.n;
    void *a = ex_malloc(na * es), *b = ex_malloc(nb * es), *c = ex_malloc(nc * es);
    double *ea = ex_malloc(na * sizeof(double)), *eb = ex_malloc(nb * sizeof(double));
    double *ref = ex_malloc(nc * sizeof(double)), *got = ex_malloc(nc * sizeof(double));
    fill(a, ea, na, s.half);
    fill(b, eb, nb, s.half);
    /* Big products are checked on a random sample of entries: the full
     * float64 product would take the CPU minutes. */
    size_t checked = (double)s.m * s.n * s.k > 1e8 ? 8192 : nc;
    size_t *at = ex_malloc(checked * sizeof(size_t));
    for (size_t e = 0; e < checked; e++) {
        at[e] = checked == nc ? e : (size_t)(ex_rand_u64() % nc);
        size_t i = at[e] / s.n, j = at[e] % s.n;
        double acc = 0;
        for (unsigned p = 0; p < s.k; p++)
            acc += ea[i * s.k + p] * eb[(size_t)p * s.n + j];
        ref[e] = acc;
    }
    void *da, *db, *dc;
    CHECK(tk_alloc(ctx, na * es, &da));
    CHECK(tk_alloc(ctx, nb * es, &db));
    CHECK(tk_alloc(ctx, nc * es, &dc));
    CHECK(tk_copy_to(ctx, da, a, na * es));
    CHECK(tk_copy_to(ctx, db, b, nb * es));
    CHECK(tk_memset(ctx, dc, 0xff, nc * es));

    tk_dtype t = s.half ? TK_F16 : TK_F32;
    tk_arg args[] = {
        tk_ptr(da, t),      tk_ptr(db, t),      tk_ptr(dc, t),      tk_i32((int)s.m),
        tk_i32((int)s.n),   tk_i32((int)s.k),   tk_i32((int)s.k),   tk_i32(1),
        tk_i32((int)s.n),   tk_i32(1),          tk_i32((int)s.n),   tk_i32(1),
        tk_const("BM", bm), tk_const("BN", bn), tk_const("BK", bk), tk_const("GROUP", group)};
    tk_grid grid = {ex_cdiv(s.m, bm) * ex_cdiv(s.n, bn), 1, 1};
    tk_launch_options lo = {.num_warps = s.warps, .num_stages = s.stages};
    double t0 = ex_now();
    CHECK(tk_launch(k, grid, args, TK_ARRAY_COUNT(args), &lo));
    CHECK(tk_synchronize(ctx));
    double t1 = ex_now();
    CHECK(tk_copy_from(ctx, c, dc, nc * es));
    for (size_t e = 0; e < checked; e++)
        got[e] = s.half ? tk_f16_to_f32(((uint16_t *)c)[at[e]]) : ((float *)c)[at[e]];
    double err = ex_rel_error(got, ref, checked), tol = s.half ? 2e-3 : 1e-3;
    printf("matmul: %s %ux%ux%u, grid=(%u,1,1), BM=%u BN=%u BK=%u, %d warps, %d stages, first "
           "launch (compile + run) %.1f ms, relative error %.2e over %s (tolerance %.0e): %s\n",
           s.half ? "fp16" : "fp32", s.m, s.n, s.k, grid.x, bm, bn, bk, s.warps, s.stages,
           (t1 - t0) * 1e3, err, checked == nc ? "every entry" : "8192 random entries", tol,
           err <= tol ? "OK" : "MISMATCH");
    CHECK(tk_free(ctx, da));
    CHECK(tk_free(ctx, db));
    CHECK(tk_free(ctx, dc));
    free(a);
    free(b);
    free(c);
    free(ea);
    free(eb);
    free(ref);
    free(got);
    free(at);
    return err <= tol ? 0 : 1;
}

int main(int argc, char **argv)
{
    Mat s = {512, 512, 512, false, 64, 64, 32, 4, 3};
    const char *which = "both";
    int at = 1;
    if (argc > 3) {
        s.m = (unsigned)strtoul(argv[1], NULL, 0);
        s.n = (unsigned)strtoul(argv[2], NULL, 0);
        s.k = (unsigned)strtoul(argv[3], NULL, 0);
        at = 4;
    }
    if (argc > at)
        which = argv[at];
    if (argc > at + 5) { /* a tile and launch shape: BM BN BK warps stages */
        s.bm = (unsigned)strtoul(argv[at + 1], NULL, 0);
        s.bn = (unsigned)strtoul(argv[at + 2], NULL, 0);
        s.bk = (unsigned)strtoul(argv[at + 3], NULL, 0);
        s.warps = atoi(argv[at + 4]);
        s.stages = atoi(argv[at + 5]);
    }
    ex_seed("matmul");
    tk_context *ctx = ex_context("matmul");
    tk_module *mod;
    tk_kernel *k;
    CHECK(tk_module_load_file(ctx, ex_kernel_path("matmul.tk"), &mod));
    CHECK(tk_module_kernel(mod, "matmul", &k));
    int bad = 0;
    if (strcmp(which, "fp32") != 0) {
        s.half = true;
        bad |= run(ctx, k, s);
    }
    if (strcmp(which, "fp16") != 0) {
        s.half = false;
        bad |= run(ctx, k, s);
    }
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    return bad;
}
