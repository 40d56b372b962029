/* rt_nospec.c: tk_kernel_set_no_specialize (Triton's do_not_specialize):
 * without it, an integer argument of 16, 17 and 1 gives three variants
 * (divisible by 16, plain, equal to 1); with the parameter named, one
 * variant serves all three, with the right results; bad names and NULLs
 * are refused with a message and the kernel stays usable. The source's own
 * @triton.jit(do_not_specialize=[...]), by name or index, does the same,
 * so a step counter of 1 stays a runtime value (`step.to(tl.float32)`). */
#include "rt_test.h"

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def addn(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) + n, mask=m)\n";

/* The same kernel with the option in its decorator: n by name, then by
 * index; n.to() needs n to stay a value when it is 1. */
static const char source_decorated[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit(do_not_specialize=['n'])\n"
    "def addn(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) + n.to(tl.float32), mask=m)\n"
    "\n"
    "@triton.jit(do_not_specialize=[1])\n"
    "def addn_idx(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) + n.to(tl.float32), mask=m)\n";

static int builds;
static void count_build(tk_kernel *k) { builds++; }

/* Launches addn with n = 16, 17 and 1 on zeroed memory; checks each. */
static int launch_three(tk_context *ctx, tk_kernel *k)
{
    static const int ns[] = {16, 17, 1};
    int before = builds;
    for (int i = 0; i < 3; i++) {
        float host[32] = {0}, *dev;
        CHECK_OK(tk_alloc(ctx, sizeof host, (void **)&dev));
        CHECK_OK(tk_copy_to(ctx, dev, host, sizeof host));
        tk_arg args[] = {tk_ptr(dev, TK_F32), tk_i32(ns[i]), tk_const("BLOCK", 32)};
        CHECK_OK(tk_launch(k, (tk_grid){1, 1, 1}, args, 3, NULL));
        CHECK_OK(tk_copy_from(ctx, host, dev, sizeof host));
        for (int j = 0; j < 32; j++)
            CHECK(host[j] == (j < ns[i] ? (float)ns[i] : 0.0f));
        CHECK_OK(tk_free(ctx, dev));
    }
    return builds - before;
}

static tk_kernel *load_from(tk_context *ctx, tk_module **m, const char *src, const char *name)
{
    tk_kernel *k = NULL;
    CHECK_OK(tk_module_load_string(ctx, "addn.py", src, m));
    CHECK_OK(tk_module_kernel(*m, name, &k));
    return k;
}

static tk_kernel *load(tk_context *ctx, tk_module **m) { return load_from(ctx, m, source, "addn"); }

int main(void)
{
    setenv("TK_CACHE_DISABLE", "1", 1);
    tk_context_options o = {.interpret = 1};
    tk_context *ctx;
    CHECK_OK(tk_context_create(&ctx, &o));
    rt_build_hook = count_build;
    tk_module *m;
    tk_kernel *k = load(ctx, &m);
    CHECK(launch_three(ctx, k) == 3);
    tk_module_destroy(m);

    k = load(ctx, &m);
    const char *names[] = {"n"};
    CHECK_OK(tk_kernel_set_no_specialize(k, names, 1));
    CHECK(launch_three(ctx, k) == 1);
    CHECK_OK(tk_kernel_set_no_specialize(k, NULL, 0)); /* cleared: specialised again */
    CHECK(launch_three(ctx, k) == 2);                  /* 16 and 1 are new; 17 is not */

    const char *bad[] = {"BLOCK"}, *unknown[] = {"m"}, *null_name[] = {NULL};
    CHECK_FAILS(tk_kernel_set_no_specialize(k, bad, 1), TK_ERR_INVALID,
                "'BLOCK' is a constexpr of kernel 'addn'");
    CHECK_FAILS(tk_kernel_set_no_specialize(k, unknown, 1), TK_ERR_INVALID,
                "kernel 'addn' has no runtime parameter 'm'");
    CHECK_FAILS(tk_kernel_set_no_specialize(k, null_name, 1), TK_ERR_INVALID, "names[0] is NULL");
    CHECK_FAILS(tk_kernel_set_no_specialize(NULL, names, 1), TK_ERR_INVALID, "k is NULL");
    CHECK_FAILS(tk_kernel_set_no_specialize(k, NULL, 2), TK_ERR_INVALID, "names is NULL");
    CHECK_FAILS(tk_kernel_set_no_specialize(k, names, -1), TK_ERR_INVALID, "");
    CHECK(launch_three(ctx, k) == 0); /* still usable, nothing new to build */
    tk_module_destroy(m);

    k = load_from(ctx, &m, source_decorated, "addn");
    CHECK(launch_three(ctx, k) == 1);
    CHECK_OK(tk_module_kernel(m, "addn_idx", &k));
    CHECK(launch_three(ctx, k) == 1);
    rt_build_hook = NULL;
    tk_module_destroy(m);
    tk_context_destroy(ctx);
    if (failures)
        fprintf(stderr, "rt_nospec: %d checks failed\n", failures);
    else
        printf("rt_nospec: all checks passed\n");
    return failures ? 1 : 0;
}
