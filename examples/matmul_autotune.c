/* matmul_autotune: the autotuned fp16 matmul (matmul_autotune.tk, the
 * tutorial's config list keyed on M, N, K). The first launch tunes (or reads
 * the choice from the disk cache, when another process tuned this size) and
 * its output is checked against a float64 CPU product; then tk_bench times
 * the tuned launch and, with --compare, every config run by hand.
 * Usage: matmul_autotune [M N K] [--compare]   (default 1024 1024 1024)
 * Prints "tuned-here" or "from-disk" for the choice, and with --compare
 * whether the tuned kernel is within 5% of the best config by hand. */
#include "example.h"

typedef struct Problem {
    tk_kernel *k;
    tk_arg args[12];
    unsigned m, n;
} Problem;

static int config_value(const tk_config *cfg, const char *name)
{
    for (int i = 0; i < cfg->ndefines; i++)
        if (strcmp(cfg->defines[i].name, name) == 0)
            return atoi(cfg->defines[i].value);
    return 1;
}

/* Triton's grid = lambda META: (cdiv(M, META['BM']) * cdiv(N, META['BN']),) */
static tk_grid grid_of(const tk_config *cfg, const tk_arg *args, int nargs, void *user)
{
    (void)args, (void)nargs;
    const Problem *p = user;
    return (tk_grid){ex_cdiv(p->m, (unsigned)config_value(cfg, "BM")) *
                         ex_cdiv(p->n, (unsigned)config_value(cfg, "BN")),
                     1, 1};
}

static tk_status launch_tuned(void *user)
{
    Problem *p = user;
    return tk_launch_tuned(p->k, grid_of, p, p->args, 12, NULL);
}

/* One config run by hand: its constexprs named, so the tuner stays out. */
typedef struct ByHand {
    Problem *p;
    const tk_config *cfg;
    tk_arg args[16];
} ByHand;

static tk_status launch_by_hand(void *user)
{
    ByHand *h = user;
    tk_launch_options lo = {.num_warps = h->cfg->num_warps, .num_stages = h->cfg->num_stages};
    return tk_launch(h->p->k, grid_of(h->cfg, NULL, 0, h->p), h->args, 16, &lo);
}

int main(int argc, char **argv)
{
    unsigned m = 1024, n = 1024, kk = 1024;
    bool compare = argc > 1 && strcmp(argv[argc - 1], "--compare") == 0;
    if (argc - compare > 3) {
        m = (unsigned)strtoul(argv[1], NULL, 0);
        n = (unsigned)strtoul(argv[2], NULL, 0);
        kk = (unsigned)strtoul(argv[3], NULL, 0);
    }
    ex_seed("matmul_autotune");
    tk_context *ctx = ex_context("matmul_autotune");
    tk_module *mod;
    Problem p = {NULL, {{0}}, m, n};
    CHECK(tk_module_load_file(ctx, ex_kernel_path("matmul_autotune.tk"), &mod));
    CHECK(tk_module_kernel(mod, "matmul", &p.k));

    size_t na = (size_t)m * kk, nb = (size_t)kk * n, nc = (size_t)m * n;
    uint16_t *a = ex_malloc(na * 2), *b = ex_malloc(nb * 2), *c = ex_malloc(nc * 2);
    for (size_t i = 0; i < na; i++)
        a[i] = tk_f32_to_f16(ex_uniform(-1, 1));
    for (size_t i = 0; i < nb; i++)
        b[i] = tk_f32_to_f16(ex_uniform(-1, 1));
    void *da, *db, *dc;
    CHECK(tk_alloc(ctx, na * 2, &da));
    CHECK(tk_alloc(ctx, nb * 2, &db));
    CHECK(tk_alloc(ctx, nc * 2, &dc));
    CHECK(tk_copy_to(ctx, da, a, na * 2));
    CHECK(tk_copy_to(ctx, db, b, nb * 2));
    CHECK(tk_memset(ctx, dc, 0xff, nc * 2));
    tk_arg args[12] = {tk_ptr(da, TK_F16), tk_ptr(db, TK_F16), tk_ptr(dc, TK_F16), tk_i32((int)m),
                       tk_i32((int)n),     tk_i32((int)kk),    tk_i32((int)kk),    tk_i32(1),
                       tk_i32((int)n),     tk_i32(1),          tk_i32((int)n),     tk_i32(1)};
    memcpy(p.args, args, sizeof args);

    double t0 = ex_now();
    CHECK(launch_tuned(&p));
    CHECK(tk_synchronize(ctx));
    double first_ms = (ex_now() - t0) * 1e3;
    tk_tune_choice ch;
    CHECK(tk_kernel_tuned_config(p.k, p.args, 12, NULL, &ch));
    printf("matmul_autotune: %ux%ux%u fp16: config %d {BM=%d BN=%d BK=%d, %d warps, %d stages} "
           "%s; first launch %.1f ms\n",
           m, n, kk, ch.index, config_value(&ch.config, "BM"), config_value(&ch.config, "BN"),
           config_value(&ch.config, "BK"), ch.config.num_warps, ch.config.num_stages,
           ch.interpreted     ? "untimed (interpreter)"
               : ch.from_disk ? "from-disk (no tuning)"
                              : "tuned-here",
           first_ms);

    /* a sample of entries against float64 (the full product takes the CPU long) */
    CHECK(tk_copy_from(ctx, c, dc, nc * 2));
    size_t checked = nc < 4096 ? nc : 4096;
    double *got = ex_malloc(checked * sizeof(double)), *ref = ex_malloc(checked * sizeof(double));
    for (size_t e = 0; e < checked; e++) {
        size_t at = checked == nc ? e : (size_t)(ex_rand_u64() % nc), i = at / n, j = at % n;
        double acc = 0;
        for (unsigned q = 0; q < kk; q++)
            acc += (double)tk_f16_to_f32(a[i * kk + q]) * tk_f16_to_f32(b[(size_t)q * n + j]);
        ref[e] = acc;
        got[e] = tk_f16_to_f32(c[at]);
    }
    double err = ex_rel_error(got, ref, checked);
    bool ok = err <= 2e-3;
    printf("matmul_autotune: relative error %.2e over %zu entries (tolerance 2e-3): %s\n", err,
           checked, ok ? "OK" : "MISMATCH");

    tk_bench_result r;
    CHECK(tk_bench(ctx, launch_tuned, &p, NULL, &r));
    double tflops = 2.0 * m * n * kk / (r.median_ms * 1e-3) / 1e12;
    printf("matmul_autotune: tuned launch median %.4f ms (p20 %.4f, p80 %.4f), %.1f TFLOP/s%s\n",
           r.median_ms, r.p20_ms, r.p80_ms, tflops,
           r.wall_clock ? " [interpreter wall-clock, not GPU time]" : "");
    if (compare && !r.wall_clock) {
        double best = 0;
        int best_i = -1;
        const tk_config *cfgs;
        int ncfg;
        CHECK(tk_kernel_configs(p.k, &cfgs, &ncfg));
        for (int i = 0; i < ncfg; i++) {
            ByHand h = {&p, &cfgs[i], {{0}}};
            memcpy(h.args, p.args, sizeof p.args);
            for (int j = 0; j < cfgs[i].ndefines && j < 4; j++)
                h.args[12 + j] = tk_const_text(cfgs[i].defines[j].name, cfgs[i].defines[j].value);
            tk_bench_result hr;
            if (tk_bench(ctx, launch_by_hand, &h, NULL, &hr) != TK_OK) {
                printf("matmul_autotune: config %d by hand: %s\n", i, tk_last_error());
                continue;
            }
            printf("matmul_autotune: config %d by hand: median %.4f ms\n", i, hr.median_ms);
            if (best_i < 0 || hr.median_ms < best) {
                best = hr.median_ms;
                best_i = i;
            }
        }
        bool near = best_i >= 0 && r.median_ms <= best * 1.05;
        printf("matmul_autotune: tuned %.4f ms vs best by hand (config %d) %.4f ms: %s\n",
               r.median_ms, best_i, best, near ? "within 5%" : "NOT within 5%");
        ok = ok && near;
    }
    CHECK(tk_free(ctx, da));
    CHECK(tk_free(ctx, db));
    CHECK(tk_free(ctx, dc));
    free(a);
    free(b);
    free(c);
    free(got);
    free(ref);
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    return ok ? 0 : 1;
}
