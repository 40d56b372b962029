/* rt_overlay.c: tk_source_overlay on the interpreter. A module imports a
 * helper from a package file; once a text is set for that file, compiles
 * and launches read it instead of the file (whatever spelling of the path
 * set it), the module's source hash (the JIT cache key's part for the
 * text) changes with it, and removing it gives the file, and its hash,
 * back. tk_source_search_path: a context with no search paths finds the
 * package only once the process names its folder. Bad arguments are
 * refused. */
#include "rt_test.h"

static const char source[] = "import triton\n"
                             "import triton.language as tl\n"
                             "from ovl.helper import bump\n"
                             "\n"
                             "@triton.jit\n"
                             "def apply(x_ptr, BLOCK: tl.constexpr):\n"
                             "    offs = tl.arange(0, BLOCK)\n"
                             "    tl.store(x_ptr + offs, bump(tl.load(x_ptr + offs)))\n";

static const char helper[] = "import triton\n"
                             "\n"
                             "@triton.jit\n"
                             "def bump(x):\n"
                             "    return x + %s\n";

enum { N = 16 };

static void write_helper(const char *path, const char *amount)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, helper, amount);
        fclose(f);
    }
}

/* A new module of `source` launched once: x[i] = i, then bump(x[i]);
 * gives what bump added, and the module's source hash (the key's part that
 * stands for its text and its package files') in hash. */
static float launch_once(tk_context *ctx, uint64_t hash[2])
{
    tk_module *mod = NULL;
    tk_kernel *k = NULL;
    void *dx = NULL;
    float h[N];
    for (int i = 0; i < N; i++)
        h[i] = (float)i;
    CHECK_OK(tk_module_load_string(ctx, "apply.tk", source, &mod));
    if (mod) {
        CHECK_OK(tk_module_kernel(mod, "apply", &k));
        memcpy(hash, mod->source_hash, sizeof mod->source_hash);
    }
    CHECK_OK(tk_alloc(ctx, sizeof h, &dx));
    CHECK_OK(tk_copy_to(ctx, dx, h, sizeof h));
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_const("BLOCK", N)};
    h[3] = -1.0f; /* what a launch that fails leaves */
    if (k && tk_launch(k, (tk_grid){1, 1, 1}, args, 2, NULL) == TK_OK)
        CHECK_OK(tk_copy_from(ctx, h, dx, sizeof h));
    tk_free(ctx, dx);
    tk_module_destroy(mod);
    return h[3] - 3.0f; /* what bump added */
}

static void test_arguments(const char *file)
{
    CHECK_FAILS(tk_source_overlay(NULL, "x = 1\n"), TK_ERR_INVALID,
                "tk_source_overlay: path is NULL");
    CHECK_FAILS(tk_source_overlay("", "x = 1\n"), TK_ERR_INVALID,
                "tk_source_overlay: path is empty");
    CHECK_FAILS(tk_source_overlay("/nonexistent-tk/none.py", "x = 1\n"), TK_ERR_NOT_FOUND,
                "no file '/nonexistent-tk/none.py'");
    CHECK_OK(tk_source_overlay("/nonexistent-tk/none.py", NULL)); /* nothing to remove */
    CHECK_OK(tk_source_overlay(file, NULL));
}

/* A context without search paths: the package is found only once the
 * process names its folder (as the Python package does for a package
 * Python found on sys.path). */
static void test_search_path(const char *dir, const char *file)
{
    CHECK_FAILS(tk_source_search_path(NULL), TK_ERR_INVALID, "tk_source_search_path: dir is NULL");
    CHECK_FAILS(tk_source_search_path(""), TK_ERR_INVALID, "tk_source_search_path: dir is empty");
    CHECK_FAILS(tk_source_search_path("/nonexistent-tk"), TK_ERR_NOT_FOUND,
                "no folder '/nonexistent-tk'");
    CHECK_FAILS(tk_source_search_path(file), TK_ERR_NOT_FOUND, "is not a folder");
    tk_context *ctx = NULL;
    tk_module *mod = NULL;
    tk_kernel *k = NULL;
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    if (!ctx)
        return;
    float x[N] = {0};
    void *dx = NULL;
    CHECK_OK(tk_alloc(ctx, sizeof x, &dx));
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_const("BLOCK", N)};
    CHECK_OK(tk_module_load_string(ctx, "apply.tk", source, &mod));
    if (mod)
        CHECK_OK(tk_module_kernel(mod, "apply", &k));
    CHECK(k && tk_launch(k, (tk_grid){1, 1, 1}, args, 2, NULL) == TK_ERR_COMPILE);
    CHECK(strstr(tk_last_error(), "no package file was found for 'ovl.helper'") != NULL);
    tk_free(ctx, dx);
    tk_module_destroy(mod);
    CHECK_OK(tk_source_search_path(dir));
    CHECK_OK(tk_source_search_path(dir)); /* kept once */
    uint64_t hash[2];
    CHECK(launch_once(ctx, hash) == 1.0f);
    tk_context_destroy(ctx);
}

int main(void)
{
    const char *tmp = t_tempdir("overlay");
    char dir[512], pkg[600], file[700], other[800], text[256];
    snprintf(dir, sizeof dir, "%s", tmp);
    snprintf(pkg, sizeof pkg, "%s/ovl", dir);
    snprintf(file, sizeof file, "%s/helper.py", pkg);
    snprintf(other, sizeof other, "%s/../ovl/./helper.py", pkg);
    CHECK(mkdir(pkg, 0755) == 0);
    write_helper(file, "1");
    setenv("TK_CACHE_DISABLE", "1", 1);
    test_arguments(file);

    const char *search[] = {dir, NULL};
    tk_context *ctx = NULL;
    CHECK_OK(
        tk_context_create(&ctx, &(tk_context_options){.interpret = 1, .search_paths = search}));
    if (ctx) {
        uint64_t from_file[2] = {0}, set[2] = {0}, again[2] = {0};
        CHECK(launch_once(ctx, from_file) == 1.0f);
        snprintf(text, sizeof text, helper, "100");
        CHECK_OK(tk_source_overlay(other, text));
        CHECK(launch_once(ctx, set) == 100.0f);
        CHECK(memcmp(set, from_file, sizeof set) != 0);
        snprintf(text, sizeof text, helper, "7");
        CHECK_OK(tk_source_overlay(file, text)); /* replaces it: one file, two spellings */
        CHECK(launch_once(ctx, set) == 7.0f);
        CHECK_OK(tk_source_overlay(other, NULL));
        CHECK(launch_once(ctx, again) == 1.0f);
        CHECK(memcmp(again, from_file, sizeof again) == 0);
        tk_context_destroy(ctx);
    }

    /* tk_compile reads it too */
    snprintf(text, sizeof text, helper, "100");
    CHECK_OK(tk_source_overlay(file, text));
    tk_compile_options o = {.kernel = "apply",
                            .signature = "*fp32",
                            .defines = (tk_define[]){{"BLOCK", "16"}},
                            .ndefines = 1,
                            .emit = TK_EMIT_IR,
                            .search_paths = search};
    char *out = NULL;
    CHECK_OK(tk_compile("apply.tk", source, strlen(source), &o, &out, NULL, NULL));
    CHECK(out && strstr(out, "100.0"));
    tk_free_text(out);
    CHECK_OK(tk_source_overlay(file, NULL));
    test_search_path(dir, file);

    t_rmdir(dir);
    if (failures)
        fprintf(stderr, "rt_overlay: %d check(s) failed\n", failures);
    return failures != 0;
}
