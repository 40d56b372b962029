/* grey: planar RGB (uint8) to grey through the tk API on a 2-D grid of 2-D
 * tiles, checked against trunc(0.2989 r + 0.5870 g + 0.1140 b) computed in
 * fp32 on the CPU (at most 1 apart, for rounding inside the sum).
 * Usage: grey [h w] (default 150 227). */
#include "example.h"

int main(int argc, char **argv)
{
    unsigned h = argc > 2 ? (unsigned)strtoul(argv[1], NULL, 0) : 150;
    unsigned w = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 227;
    const unsigned th = 32, tw = 32;
    ex_seed("grey");
    tk_context *ctx = ex_context("grey");
    tk_module *mod;
    tk_kernel *k;
    CHECK(tk_module_load_file(ctx, ex_kernel_path("grey.tk"), &mod));
    CHECK(tk_module_kernel(mod, "grey", &k));

    size_t plane = (size_t)h * w;
    uint8_t *img = ex_malloc(3 * plane), *out = ex_malloc(plane);
    for (size_t i = 0; i < 3 * plane; i++)
        img[i] = (uint8_t)(ex_rand_u64() >> 56);
    void *dimg, *dout;
    CHECK(tk_alloc(ctx, 3 * plane, &dimg));
    CHECK(tk_alloc(ctx, plane, &dout));
    CHECK(tk_copy_to(ctx, dimg, img, 3 * plane));
    CHECK(tk_memset(ctx, dout, 0xa5, plane));

    tk_grid grid = {ex_cdiv(h, th), ex_cdiv(w, tw), 1};
    tk_arg args[] = {tk_ptr(dimg, TK_U8), tk_ptr(dout, TK_U8), tk_i32((int)h),
                     tk_i32((int)w),      tk_const("TH", th),  tk_const("TW", tw)};
    double t0 = ex_now();
    CHECK(tk_launch(k, grid, args, TK_ARRAY_COUNT(args), &(tk_launch_options){.num_warps = 4}));
    CHECK(tk_synchronize(ctx));
    double t1 = ex_now();
    CHECK(tk_copy_from(ctx, out, dout, plane));
    size_t bad = 0;
    int worst = 0;
    for (size_t i = 0; i < plane; i++) {
        float g = 0.2989f * img[i] + 0.5870f * img[plane + i] + 0.1140f * img[2 * plane + i];
        int diff = abs((int)out[i] - (int)(uint8_t)(int)g);
        worst = diff > worst ? diff : worst;
        bad += diff > 1;
    }
    printf("grey: %ux%u image, grid=(%u,%u,1), tiles %ux%u, first launch (compile + run) %.1f ms, "
           "largest difference %d: %s\n",
           h, w, grid.x, grid.y, th, tw, (t1 - t0) * 1e3, worst, bad ? "MISMATCH" : "OK");
    CHECK(tk_free(ctx, dimg));
    CHECK(tk_free(ctx, dout));
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    free(img);
    free(out);
    return bad ? 1 : 0;
}
