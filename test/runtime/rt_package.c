/* rt_package.c: the API side of package imports and None arguments (on the
 * interpreter): a module compiled from a string finds `mylib` only through
 * the search paths of its options (tk_compile) or of its context
 * (tk_module_load_string); without them the imported names are host names,
 * an error at the launch that uses them. tk_none() passes None for a runtime
 * parameter. */
#include "rt_test.h"

static const char source[] = "import triton\n"
                             "import triton.language as tl\n"
                             "import mylib.ops.ext as tle\n"
                             "from mylib.utils import scaled\n"
                             "\n"
                             "@triton.jit\n"
                             "def scale(x_ptr, bias_ptr, n, BLOCK: tl.constexpr):\n"
                             "    offs = tle.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                             "    x = scaled(tl.load(x_ptr + offs, mask=offs < n))\n"
                             "    if bias_ptr is not None:\n"
                             "        x += tl.load(bias_ptr + offs, mask=offs < n)\n"
                             "    tl.store(x_ptr + offs, x, mask=offs < n)\n";

static const char *const search[] = {TK_SOURCE_DIR "/test/sema/Inputs", NULL};

static void test_compile(void)
{
    tk_compile_options o = {.kernel = "scale",
                            .signature = "*fp32,*fp32,i32",
                            .defines = (tk_define[]){{"BLOCK", "64"}},
                            .ndefines = 1,
                            .emit = TK_EMIT_IR,
                            .opt_level = -1};
    char *out = NULL, *diags = NULL;
    CHECK(tk_compile("scale.tk", source, strlen(source), &o, &out, NULL, &diags) == TK_ERR_COMPILE);
    CHECK(diags && strstr(diags, "'tle' is set by host Python code"));
    tk_free_text(out);
    tk_free_text(diags);
    out = diags = NULL;
    o.search_paths = search;
    CHECK(tk_compile("scale.tk", source, strlen(source), &o, &out, NULL, &diags) == TK_OK);
    CHECK(out && strstr(out, "kernel @scale("));
    if (diags)
        fprintf(stderr, "%s", diags);
    tk_free_text(out);
    tk_free_text(diags);
}

static void run(tk_context *ctx, bool with_bias)
{
    tk_module *mod = NULL;
    tk_kernel *k = NULL;
    CHECK_OK(tk_module_load_string(ctx, "scale.tk", source, &mod));
    if (mod)
        CHECK_OK(tk_module_kernel(mod, "scale", &k));
    float h[100], b[100];
    for (int i = 0; i < 100; i++) {
        h[i] = (float)i;
        b[i] = 1000.0f;
    }
    void *dx = NULL, *db = NULL;
    CHECK_OK(tk_alloc(ctx, sizeof h, &dx));
    CHECK_OK(tk_alloc(ctx, sizeof b, &db));
    CHECK_OK(tk_copy_to(ctx, dx, h, sizeof h));
    CHECK_OK(tk_copy_to(ctx, db, b, sizeof b));
    tk_arg bias = with_bias ? tk_ptr(db, TK_F32) : tk_none("bias_ptr");
    tk_arg args[] = {tk_ptr(dx, TK_F32), bias, tk_i32(100), tk_const("BLOCK", 32)};
    if (k) {
        CHECK_OK(tk_launch(k, (tk_grid){4, 1, 1}, args, 4, NULL));
        CHECK_OK(tk_copy_from(ctx, h, dx, sizeof h));
        CHECK(h[0] == (with_bias ? 1000.0f : 0.0f) && h[99] == 99.0f * 2 + (with_bias ? 1000 : 0));
    }
    tk_free(ctx, dx);
    tk_free(ctx, db);
    tk_module_destroy(mod);
}

int main(void)
{
    setenv("TK_CACHE_DISABLE", "1", 1);
    test_compile();

    /* without search paths the import is host code: the launch says so */
    tk_context *bare = NULL;
    CHECK_OK(tk_context_create(&bare, &(tk_context_options){.interpret = 1}));
    if (bare) {
        tk_module *mod = NULL;
        tk_kernel *k = NULL;
        CHECK_OK(tk_module_load_string(bare, "scale.tk", source, &mod));
        if (mod)
            CHECK_OK(tk_module_kernel(mod, "scale", &k));
        void *dx = NULL;
        CHECK_OK(tk_alloc(bare, 400, &dx));
        tk_arg args[] = {tk_ptr(dx, TK_F32), tk_none("bias_ptr"), tk_i32(100),
                         tk_const("BLOCK", 32)};
        if (k)
            CHECK_FAILS(tk_launch(k, (tk_grid){4, 1, 1}, args, 4, NULL), TK_ERR_COMPILE,
                        "'tle' is set by host Python code");
        tk_free(bare, dx);
        tk_module_destroy(mod);
        tk_context_destroy(bare);
    }

    tk_context *ctx = NULL;
    CHECK_OK(
        tk_context_create(&ctx, &(tk_context_options){.interpret = 1, .search_paths = search}));
    if (ctx) {
        run(ctx, false);
        run(ctx, true);
        tk_context_destroy(ctx);
    }
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures != 0;
}
