/* vector_add: out = x + y on n fp32 values through the tk API, checked
 * exactly against the CPU. Usage: vector_add [n] (default 98432). */
#include "example.h"

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 98432;
    const unsigned block = 1024;
    ex_seed("vector_add");
    tk_context *ctx = ex_context("vector_add");
    tk_module *mod;
    tk_kernel *k;
    CHECK(tk_module_load_file(ctx, ex_kernel_path("vector_add.tk"), &mod));
    CHECK(tk_module_kernel(mod, "vector_add", &k));

    size_t bytes = (size_t)n * sizeof(float);
    float *x = ex_malloc(bytes), *y = ex_malloc(bytes), *out = ex_malloc(bytes);
    for (unsigned i = 0; i < n; i++) {
        x[i] = ex_normal();
        y[i] = ex_normal();
    }
    void *dx, *dy, *dout;
    CHECK(tk_alloc(ctx, bytes, &dx));
    CHECK(tk_alloc(ctx, bytes, &dy));
    CHECK(tk_alloc(ctx, bytes, &dout));
    CHECK(tk_copy_to(ctx, dx, x, bytes));
    CHECK(tk_copy_to(ctx, dy, y, bytes));
    CHECK(tk_memset(ctx, dout, 0xff, bytes)); /* NaN everywhere: nothing left unwritten passes */

    tk_grid grid = {ex_cdiv(n, block), 1, 1};
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_ptr(dout, TK_F32), tk_i32((int)n),
                     tk_const("BLOCK", block)};
    double t0 = ex_now();
    CHECK(tk_launch(k, grid, args, 5, &(tk_launch_options){.num_warps = 4}));
    CHECK(tk_synchronize(ctx));
    double t1 = ex_now();
    CHECK(tk_copy_from(ctx, out, dout, bytes));

    unsigned bad = 0;
    for (unsigned i = 0; i < n; i++)
        if (out[i] != x[i] + y[i]) {
            if (bad < 5)
                fprintf(stderr, "vector_add: out[%u] = %g, expected %g\n", i, out[i], x[i] + y[i]);
            bad++;
        }
    printf("vector_add: n=%u, grid=(%u,1,1), BLOCK=%u, first launch (compile + run) %.1f ms: %s\n",
           n, grid.x, block, (t1 - t0) * 1e3, bad ? "MISMATCH" : "exact match");
    CHECK(tk_free(ctx, dx));
    CHECK(tk_free(ctx, dy));
    CHECK(tk_free(ctx, dout));
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    free(x);
    free(y);
    free(out);
    return bad ? 1 : 0;
}
