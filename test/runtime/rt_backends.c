/* rt_backends.c: the two backends behind one interface. Every operation of
 * both tables is there (a table missing one would crash the first call that
 * needs it), and the public calls go through the interpreter backend with
 * the same results and errors whatever the caller passes: copies, fills,
 * the no-op synchronize, occupancy from the hardware's limits, and a launch
 * that asks for launch_pdl (which changes nothing when launches do not
 * overlap). */
#include "rt_backend.h"
#include "rt_test.h"

static void check_table(const RtBackend *b, const char *name)
{
    const void *ops[] = {
        (const void *)b->open,       (const void *)b->close,  (const void *)b->enter,
        (const void *)b->alloc,      (const void *)b->free,   (const void *)b->copy_to,
        (const void *)b->copy_from,  (const void *)b->fill,   (const void *)b->zero_async,
        (const void *)b->copy_async, (const void *)b->extent, (const void *)b->synchronize,
        (const void *)b->occupancy,  (const void *)b->build,  (const void *)b->launch,
        (const void *)b->bench,
    };
    for (int i = 0; i < TK_ARRAY_LEN(ops); i++)
        if (!ops[i]) {
            fprintf(stderr, "rt_backends: the %s backend lacks operation %d\n", name, i);
            failures++;
        }
}

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def scale(x_ptr, n, a, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * a, mask=m)\n";

static void check_interp_calls(void)
{
    tk_context *ctx = NULL;
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    if (!ctx)
        return;
    CHECK(ctx->be == &rt_interp_backend);
    float h[100], back[100];
    for (int i = 0; i < 100; i++)
        h[i] = (float)i;
    void *d = NULL;
    CHECK_OK(tk_alloc(ctx, sizeof h, &d));
    CHECK_OK(tk_memset(ctx, d, 0, sizeof h));
    CHECK_OK(tk_copy_to(ctx, d, h, sizeof h));
    CHECK_FAILS(tk_copy_to(ctx, (char *)d + 8, h, sizeof h), TK_ERR_INVALID,
                "is not inside a buffer from tk_alloc");
    tk_module *mod = NULL;
    tk_kernel *k = NULL;
    CHECK_OK(tk_module_load_string(ctx, "scale.py", source, &mod));
    CHECK_OK(tk_module_kernel(mod, "scale", &k));
    tk_arg args[] = {tk_ptr(d, TK_F32), tk_i32(100), tk_f32(2.0f), tk_const("BLOCK", 64)};
    CHECK_OK(tk_launch(k, (tk_grid){2, 1, 1}, args, 4, &(tk_launch_options){.launch_pdl = 1}));
    CHECK_OK(tk_synchronize(ctx));
    CHECK_OK(tk_copy_from(ctx, back, d, sizeof back));
    int wrong = 0;
    for (int i = 0; i < 100; i++)
        wrong += back[i] != 2.0f * (float)i;
    CHECK(wrong == 0);
    /* fp_fusion: -1, 0 or 1 (Triton's enable_fp_fusion) */
    CHECK_FAILS(tk_launch(k, (tk_grid){2, 1, 1}, args, 4, &(tk_launch_options){.fp_fusion = 2}),
                TK_ERR_LAUNCH, "fp_fusion is 2 (0 for the default, 1 on, -1 off)");
    CHECK_OK(tk_launch(k, (tk_grid){2, 1, 1}, args, 4, &(tk_launch_options){.fp_fusion = -1}));
    tk_kernel_info info;
    CHECK_OK(tk_kernel_prepare(k, args, 4, NULL, &info));
    int per_sm = 0;
    CHECK_OK(tk_occupancy(ctx, &info, &per_sm));
    CHECK(per_sm == rt_occupancy_estimate(&ctx->props, &info) && per_sm > 0);
    tk_module_destroy(mod);
    CHECK_OK(tk_free(ctx, d));
    CHECK_FAILS(tk_free(ctx, d), TK_ERR_INVALID, "is not a live buffer");
    tk_context_destroy(ctx);
}

int main(void)
{
    setenv("TK_CACHE_DISABLE", "1", 1);
    check_table(&rt_cuda_backend, "CUDA");
    check_table(&rt_interp_backend, "interpreter");
    CHECK(rt_cuda_backend.timed && rt_cuda_backend.queued && !rt_cuda_backend.device_label);
    CHECK(!rt_interp_backend.timed && !rt_interp_backend.queued);
    check_interp_calls();
    if (failures)
        fprintf(stderr, "rt_backends: %d checks failed\n", failures);
    return failures ? 1 : 0;
}
