/* softmax: row-wise softmax of a rows x cols fp32 matrix through the tk API,
 * two ways: one program per row (softmax.tk), and persistent programs
 * (softmax_persistent.tk) with grid = SMs x occupancy, found by compiling
 * first (tk_kernel_prepare) and asking tk_occupancy. Each is checked
 * against a float64 CPU reference (relative error <= 1e-5).
 * Usage: softmax [rows cols] (default 1823 781). */
#include "example.h"

static void reference(const float *x, double *ref, unsigned rows, unsigned cols)
{
    for (unsigned r = 0; r < rows; r++) {
        const float *row = x + (size_t)r * cols;
        double m = -INFINITY, sum = 0;
        for (unsigned c = 0; c < cols; c++)
            m = row[c] > m ? row[c] : m;
        for (unsigned c = 0; c < cols; c++)
            sum += exp(row[c] - m);
        for (unsigned c = 0; c < cols; c++)
            ref[(size_t)r * cols + c] = exp(row[c] - m) / sum;
    }
}

/* Triton's tutorial heuristic: more warps for longer rows. */
static int warps_for(unsigned block) { return block >= 4096 ? 16 : block >= 2048 ? 8 : 4; }

static int check(const char *what, tk_context *ctx, void *dout, const double *ref, size_t n,
                 double seconds)
{
    float *out = ex_malloc(n * sizeof(float));
    double *got = ex_malloc(n * sizeof(double));
    CHECK(tk_copy_from(ctx, out, dout, n * sizeof(float)));
    for (size_t i = 0; i < n; i++)
        got[i] = out[i];
    double err = ex_rel_error(got, ref, n);
    bool ok = err <= 1e-5;
    printf("softmax: %s: first launch (compile + run) %.1f ms, relative error %.2e: %s\n", what,
           seconds * 1e3, err, ok ? "OK" : "MISMATCH");
    free(out);
    free(got);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    unsigned rows = argc > 2 ? (unsigned)strtoul(argv[1], NULL, 0) : 1823;
    unsigned cols = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 781;
    unsigned block = ex_next_pow2(cols);
    int warps = warps_for(block);
    ex_seed("softmax");
    tk_context *ctx = ex_context("softmax");

    size_t n = (size_t)rows * cols, bytes = n * sizeof(float);
    float *x = ex_malloc(bytes);
    double *ref = ex_malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = 3.0f * ex_normal();
    reference(x, ref, rows, cols);
    void *dx, *dout;
    CHECK(tk_alloc(ctx, bytes, &dx));
    CHECK(tk_alloc(ctx, bytes, &dout));
    CHECK(tk_copy_to(ctx, dx, x, bytes));
    int bad = 0;

    /* One program per row. */
    tk_module *mod;
    tk_kernel *k;
    CHECK(tk_module_load_file(ctx, ex_kernel_path("softmax.tk"), &mod));
    CHECK(tk_module_kernel(mod, "softmax", &k));
    CHECK(tk_memset(ctx, dout, 0xff, bytes));
    tk_arg args[] = {tk_ptr(dout, TK_F32), tk_ptr(dx, TK_F32), tk_i32((int)cols),
                     tk_i32((int)cols),    tk_i32((int)cols),  tk_const("BLOCK", block)};
    tk_launch_options lo = {.num_warps = warps};
    double t0 = ex_now();
    CHECK(tk_launch(k, (tk_grid){rows, 1, 1}, args, 6, &lo));
    CHECK(tk_synchronize(ctx));
    char what[256];
    snprintf(what, sizeof what, "%ux%u, one program per row, grid=(%u,1,1), BLOCK=%u, num_warps=%d",
             rows, cols, rows, block, warps);
    bad |= check(what, ctx, dout, ref, n, ex_now() - t0);

    /* Persistent: compile first, then size the grid to what fits at once. */
    tk_module *pmod;
    tk_kernel *pk;
    CHECK(tk_module_load_file(ctx, ex_kernel_path("softmax_persistent.tk"), &pmod));
    CHECK(tk_module_kernel(pmod, "softmax_persistent", &pk));
    CHECK(tk_memset(ctx, dout, 0xff, bytes));
    tk_arg pargs[] = {tk_ptr(dout, TK_F32),     tk_ptr(dx, TK_F32),   tk_i32((int)cols),
                      tk_i32((int)cols),        tk_i32((int)rows),    tk_i32((int)cols),
                      tk_const("BLOCK", block), tk_const("STAGES", 2)};
    t0 = ex_now();
    tk_kernel_info info;
    CHECK(tk_kernel_prepare(pk, pargs, 8, &lo, &info));
    int per_sm = 0;
    CHECK(tk_occupancy(ctx, &info, &per_sm));
    tk_device_props props;
    CHECK(tk_device_properties(ctx, &props));
    unsigned programs = (unsigned)(props.sm_count * (per_sm > 0 ? per_sm : 1));
    programs = programs < rows ? programs : rows;
    CHECK(tk_launch(pk, (tk_grid){programs, 1, 1}, pargs, 8, &lo));
    CHECK(tk_synchronize(ctx));
    snprintf(what, sizeof what,
             "persistent, %d regs/thread, %d B shared, %d programs/SM x %d SMs "
             "-> grid=(%u,1,1)",
             info.registers, info.shared_bytes, per_sm, props.sm_count, programs);
    bad |= check(what, ctx, dout, ref, n, ex_now() - t0);

    CHECK(tk_free(ctx, dx));
    CHECK(tk_free(ctx, dout));
    tk_module_destroy(mod);
    tk_module_destroy(pmod);
    tk_context_destroy(ctx);
    free(x);
    free(ref);
    return bad;
}
