/* rt_interp_limits.c: the interpreter context's limits hold against hostile
 * sizes and kernels. Sizes whose rounding wraps or that the host cannot
 * give are TK_ERR_NO_MEMORY; a store that runs up to 1 KiB past either end
 * of a buffer is reported even where a neighbour buffer lies close; an
 * endless loop stops at the step budget with the kernel, program and line;
 * grids with more programs than the budget are refused; the budget comes
 * from TK_INTERP_MAX_STEPS or the context option. After each, the same context still launches correctly. */
#include "rt_test.h"

#include <stdint.h>

static const char source[] = "import triton\n"
                             "import triton.language as tl\n"
                             "\n"
                             "@triton.jit\n"
                             "def scale(x_ptr, n, BLOCK: tl.constexpr):\n"
                             "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                             "    m = offs < n\n"
                             "    x = tl.load(x_ptr + offs, mask=m)\n"
                             "    tl.store(x_ptr + offs, x * 2.0, mask=m)\n"
                             "\n"
                             "@triton.jit\n"
                             "def poke(p, off):\n"
                             "    tl.store(p + off, 7.0)\n"
                             "\n"
                             "@triton.jit\n"
                             "def spin(p):\n"
                             "    i = 0\n"
                             "    while True:\n" /* line 18 */
                             "        i += 1\n"
                             "    tl.store(p, i)\n"
                             "\n"
                             "@triton.jit\n"
                             "def count(p, n):\n"
                             "    acc = 0\n"
                             "    for i in range(0, n):\n" /* line 25 */
                             "        acc += 1\n"
                             "    tl.store(p, acc)\n";

enum { N = 64 };

/* scale() doubles N floats; the result must be exact. */
static void check_still_works(tk_context *ctx, tk_kernel *scale)
{
    float h[N], back[N];
    void *d = NULL;
    for (int i = 0; i < N; i++)
        h[i] = (float)i;
    CHECK_OK(tk_alloc(ctx, sizeof h, &d));
    CHECK_OK(tk_copy_to(ctx, d, h, sizeof h));
    tk_arg args[] = {tk_ptr(d, TK_F32), tk_i32(N), tk_const("BLOCK", 16)};
    CHECK_OK(tk_launch(scale, (tk_grid){N / 16, 1, 1}, args, 3, NULL));
    memset(back, 0, sizeof back);
    CHECK_OK(tk_copy_from(ctx, back, d, sizeof back));
    for (int i = 0; i < N; i++)
        CHECK(back[i] == 2.0f * (float)i);
    CHECK_OK(tk_free(ctx, d));
}

/* 9 sizes, each refused with a message, nothing recorded. */
static void test_huge_allocs(tk_context *ctx, tk_kernel *scale)
{
    size_t sizes[] = {SIZE_MAX,         SIZE_MAX - 1,    SIZE_MAX - 100,
                      SIZE_MAX - 255,   SIZE_MAX - 256,  SIZE_MAX / 2,
                      SIZE_MAX / 2 + 1, (size_t)1 << 62, (size_t)1 << 50};
    for (int i = 0; i < TK_ARRAY_LEN(sizes); i++) {
        void *p = (void *)1;
        CHECK_FAILS(tk_alloc(ctx, sizes[i], &p), TK_ERR_NO_MEMORY, "tk_alloc");
        CHECK(p == NULL);
        check_still_works(ctx, scale);
    }
}

/* Stores from the middle of three small buffers at every float from the
 * end to 1 KiB past it, and from 1 KiB before the start: each must be
 * reported, whichever buffer the address might land in. */
static void test_neighbours(tk_context *ctx, tk_kernel *poke, tk_kernel *scale)
{
    void *b[3] = {0};
    for (int i = 0; i < 3; i++)
        CHECK_OK(tk_alloc(ctx, 256, &b[i]));
    int missed = 0;
    for (int64_t off = -256; off < 256 + 64; off++) {
        if (off == 0)
            off = 64; /* skip the buffer itself */
        tk_arg args[] = {tk_ptr(b[1], TK_F32), tk_i64(off)};
        tk_status s = tk_launch(poke, (tk_grid){1, 1, 1}, args, 2, NULL);
        if (s != TK_ERR_KERNEL_FAULT ||
            !strstr(tk_last_error(), "out-of-bounds store in kernel 'poke', program (0, 0, 0)")) {
            if (!missed++)
                fprintf(stderr, "store at element %lld of a 64-float buffer: %s: %s\n",
                        (long long)off, tk_status_name(s), tk_last_error());
        }
    }
    CHECK(missed == 0);
    /* a copy that runs from one buffer into the next is refused too */
    float h[64 + 256] = {0};
    CHECK_FAILS(tk_copy_to(ctx, b[1], h, sizeof h), TK_ERR_INVALID, "not inside a buffer");
    for (int i = 0; i < 3; i++)
        CHECK_OK(tk_free(ctx, b[i]));
    check_still_works(ctx, scale);
}

/* An endless while loop and a 2e9-iteration for loop stop at the budget
 * with the kernel, the program and the loop's line; a grid with more
 * programs than the budget is refused; then the context still works. */
static void test_budget(tk_context *ctx, tk_module *mod)
{
    tk_kernel *spin = NULL, *count = NULL, *scale = NULL;
    CHECK_OK(tk_module_kernel(mod, "spin", &spin));
    CHECK_OK(tk_module_kernel(mod, "count", &count));
    CHECK_OK(tk_module_kernel(mod, "scale", &scale));
    if (!spin || !count || !scale)
        return;
    void *d = NULL;
    CHECK_OK(tk_alloc(ctx, 4, &d));
    tk_arg p = tk_ptr(d, TK_I32);
    CHECK_FAILS(tk_launch(spin, (tk_grid){1, 1, 1}, &p, 1, NULL), TK_ERR_LAUNCH, "limits.tk:18:");
    CHECK(strstr(tk_last_error(),
                 "kernel 'spin', program (0, 0, 0): the loop ran past the "
                 "interpreter's budget of 100000 steps"));
    CHECK_FAILS(tk_launch(spin, (tk_grid){3, 1, 1}, &p, 1, NULL), TK_ERR_LAUNCH,
                "kernel 'spin', program (0, 0, 0): the loop ran past");
    check_still_works(ctx, scale);
    CHECK_FAILS(tk_launch(count, (tk_grid){1, 1, 1}, (tk_arg[]){p, tk_i32(2000000000)}, 2, NULL),
                TK_ERR_LAUNCH, "limits.tk:25:");
    CHECK(strstr(tk_last_error(), "kernel 'count', program (0, 0, 0): the loop ran past"));
    int32_t got = 0;
    CHECK_OK(tk_launch(count, (tk_grid){1, 1, 1}, (tk_arg[]){p, tk_i32(1000)}, 2, NULL));
    CHECK_OK(tk_copy_from(ctx, &got, d, 4));
    CHECK(got == 1000);
    tk_arg sargs[] = {tk_ptr(d, TK_F32), tk_i32(1), tk_const("BLOCK", 16)};
    CHECK_FAILS(tk_launch(scale, (tk_grid){2147483647, 65535, 65535}, sargs, 3, NULL),
                TK_ERR_LAUNCH,
                "kernel 'scale': the grid (2147483647, 65535, 65535) has "
                "9223090559730712575 programs, more than the interpreter's budget of 100000");
    CHECK_FAILS(tk_launch(scale, (tk_grid){100001, 1, 1}, sargs, 3, NULL), TK_ERR_LAUNCH,
                "has 100001 programs");
    CHECK_OK(tk_launch(scale, (tk_grid){100000, 1, 1}, sargs, 3, NULL));
    CHECK_OK(tk_free(ctx, d));
    check_still_works(ctx, scale);
}

/* The budget as a context option; a bad TK_INTERP_MAX_STEPS is refused. */
static void test_budget_option(void)
{
    tk_context *ctx = NULL;
    tk_module *mod = NULL;
    tk_kernel *count = NULL;
    void *d = NULL;
    CHECK_OK(
        tk_context_create(&ctx, &(tk_context_options){.interpret = 1, .interp_max_steps = 50}));
    if (ctx)
        CHECK_OK(tk_module_load_string(ctx, "limits.tk", source, &mod));
    if (mod)
        CHECK_OK(tk_module_kernel(mod, "count", &count));
    if (count)
        CHECK_OK(tk_alloc(ctx, 4, &d));
    if (d) {
        tk_arg p = tk_ptr(d, TK_I32);
        CHECK_OK(tk_launch(count, (tk_grid){1, 1, 1}, (tk_arg[]){p, tk_i32(49)}, 2, NULL));
        CHECK_FAILS(tk_launch(count, (tk_grid){1, 1, 1}, (tk_arg[]){p, tk_i32(50)}, 2, NULL),
                    TK_ERR_LAUNCH, "budget of 50 steps");
    }
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    const char *bad[] = {"0", "-5", "ten", "12x", "99999999999999999999999"};
    for (int i = 0; i < TK_ARRAY_LEN(bad); i++) {
        setenv("TK_INTERP_MAX_STEPS", bad[i], 1);
        tk_context *c = NULL;
        CHECK_FAILS(tk_context_create(&c, &(tk_context_options){.interpret = 1}), TK_ERR_INVALID,
                    "TK_INTERP_MAX_STEPS");
        tk_context_destroy(c);
    }
    unsetenv("TK_INTERP_MAX_STEPS");
}

int main(void)
{
    setenv("TK_CACHE_DISABLE", "1", 1);
    tk_context *ctx = NULL;
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    if (!ctx)
        return 1;
    tk_module *mod = NULL;
    tk_kernel *scale = NULL, *poke = NULL;
    CHECK_OK(tk_module_load_string(ctx, "limits.tk", source, &mod));
    if (mod) {
        CHECK_OK(tk_module_kernel(mod, "scale", &scale));
        CHECK_OK(tk_module_kernel(mod, "poke", &poke));
    }
    if (scale && poke) {
        test_huge_allocs(ctx, scale);
        test_neighbours(ctx, poke, scale);
    }
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    /* a context with a small budget from the environment */
    setenv("TK_INTERP_MAX_STEPS", "100000", 1);
    ctx = NULL;
    mod = NULL;
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    unsetenv("TK_INTERP_MAX_STEPS");
    if (ctx)
        CHECK_OK(tk_module_load_string(ctx, "limits.tk", source, &mod));
    if (mod)
        test_budget(ctx, mod);
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    test_budget_option();
    if (failures)
        fprintf(stderr, "rt_interp_limits: %d checks failed\n", failures);
    else
        printf("rt_interp_limits: all checks passed\n");
    return failures ? 1 : 0;
}
