/* rt_args.c: launches that do not match the kernel fail with a clear
 * message and launch nothing (checked on the interpreter, no GPU): wrong
 * argument count, missing/unknown/duplicate constexprs, a runtime parameter
 * passed as a constexpr, pointer/scalar mix-ups against annotations, empty
 * or oversized grids, bad num_warps, unknown kernels, syntax errors. The
 * context stays usable afterwards. Also: the cache key follows Triton's
 * specialisation (16-byte alignment, divisibility by 16, == 1) and nothing
 * else, a repeated launch is a cache hit, and an out-of-bounds access is a
 * fault after which the context still works. */
#include "rt_test.h"

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, SCALE: tl.constexpr = 2):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    x = tl.load(x_ptr + offs, mask=m)\n"
    "    y = tl.load(y_ptr + offs, mask=m)\n"
    "    tl.store(out_ptr + offs, x + y * SCALE, mask=m)\n"
    "\n"
    "@triton.jit\n"
    "def fill(out: *fp32, n: i32, value, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(out + offs, value, mask=offs < n)\n";

enum { N = 100 };
static float hx[N], hy[N], hout[N];
static void *dx, *dy, *dout;

static bool out_untouched(tk_context *ctx)
{
    unsigned char bytes[N * 4];
    CHECK_OK(tk_copy_from(ctx, bytes, dout, sizeof bytes));
    for (int i = 0; i < N * 4; i++)
        if (bytes[i] != 0xee)
            return false;
    return true;
}

static void test_mismatches(tk_context *ctx, tk_kernel *add, tk_kernel *fill)
{
    tk_grid g = {4, 1, 1};
    tk_arg x = tk_ptr(dx, TK_F32), y = tk_ptr(dy, TK_F32), out = tk_ptr(dout, TK_F32);
    tk_arg n = tk_i32(N), block = tk_const("BLOCK", 32);
    CHECK_OK(tk_memset(ctx, dout, 0xee, N * 4));

    CHECK_FAILS(tk_launch(add, g, (tk_arg[]){x, y, n, block}, 4, NULL), TK_ERR_LAUNCH,
                "takes 4 runtime arguments (x_ptr, y_ptr, out_ptr, n) but the launch gives 3");
    CHECK_FAILS(tk_launch(add, g, (tk_arg[]){x, y, out, n, tk_i32(5), block}, 6, NULL),
                TK_ERR_LAUNCH, "but the launch gives 5");
    CHECK_FAILS(tk_launch(add, g, (tk_arg[]){x, y, out, n}, 4, NULL), TK_ERR_LAUNCH,
                "needs a value for constexpr 'BLOCK'");
    CHECK_FAILS(tk_launch(add, g, (tk_arg[]){x, y, out, n, tk_const("BLOK", 32)}, 5, NULL),
                TK_ERR_LAUNCH, "no parameter 'BLOK'; its constexprs: BLOCK, SCALE");
    CHECK_FAILS(tk_launch(add, g, (tk_arg[]){x, y, out, n, block, block}, 6, NULL), TK_ERR_LAUNCH,
                "'BLOCK' is given twice");
    CHECK_FAILS(tk_launch(add, g, (tk_arg[]){x, y, out, block, tk_const("n", 5)}, 5, NULL),
                TK_ERR_LAUNCH, "'n' is a runtime parameter");
    CHECK_FAILS(tk_launch(add, (tk_grid){0, 1, 1}, (tk_arg[]){x, y, out, n, block}, 5, NULL),
                TK_ERR_LAUNCH, "grid (0, 1, 1) is empty");
    CHECK_FAILS(tk_launch(add, (tk_grid){1, 70000, 1}, (tk_arg[]){x, y, out, n, block}, 5, NULL),
                TK_ERR_LAUNCH, "over the device's limit");
    CHECK_FAILS(
        tk_launch(add, g, (tk_arg[]){x, y, out, n, block}, 5, &(tk_launch_options){.num_warps = 3}),
        TK_ERR_LAUNCH, "kernel 'add': num_warps is 3 (a power of two from 1 to 32");
    tk_arg untyped = tk_ptr(dx, TK_VOID);
    CHECK_FAILS(tk_launch(add, g, (tk_arg[]){untyped, y, out, n, block}, 5, NULL), TK_ERR_LAUNCH,
                "argument 1 ('x_ptr') has no valid dtype");

    /* Against the annotations of `fill(out: *fp32, n: i32, value, ...)`. */
    tk_arg fb = tk_const("BLOCK", 32);
    CHECK_FAILS(tk_launch(fill, g, (tk_arg[]){tk_i64(0), n, tk_f32(1), fb}, 4, NULL), TK_ERR_LAUNCH,
                "'out' is a pointer (*fp32) but the launch passes a scalar i64");
    CHECK_FAILS(tk_launch(fill, g, (tk_arg[]){out, x, tk_f32(1), fb}, 4, NULL), TK_ERR_LAUNCH,
                "'n' is declared i32 but the launch passes a pointer to fp32");
    CHECK_FAILS(tk_launch(fill, g, (tk_arg[]){tk_ptr(dout, TK_F16), n, tk_f32(1), fb}, 4, NULL),
                TK_ERR_LAUNCH, "'out' is declared *fp32 but the launch passes a pointer to fp16");
    CHECK_FAILS(tk_launch(fill, g, (tk_arg[]){out, tk_i64(1LL << 40), tk_f32(1), fb}, 4, NULL),
                TK_ERR_LAUNCH, "'n' is declared i32, which cannot hold 1099511627776");
    CHECK_FAILS(tk_launch(fill, g, (tk_arg[]){out, tk_i64(-(1LL << 40)), tk_f32(1), fb}, 4, NULL),
                TK_ERR_LAUNCH, "'n' is declared i32, which cannot hold -1099511627776");
    CHECK_FAILS(tk_launch(fill, g, (tk_arg[]){out, tk_f32(N), tk_f32(1), fb}, 4, NULL),
                TK_ERR_LAUNCH, "'n' is declared i32 but the launch passes fp32");
    CHECK(out_untouched(ctx)); /* nothing ran */
}

/* A scalar of another type than its annotation's is converted to it, as
 * Triton's launcher converts a Python int: an i64, u8 or i16 that fits is
 * `n: i32`'s value. */
static void test_declared_types(tk_context *ctx, tk_kernel *fill)
{
    tk_arg out = tk_ptr(dout, TK_F32), fb = tk_const("BLOCK", 32);
    tk_grid g = {(N + 31) / 32, 1, 1};
    tk_arg given[] = {tk_i64(N),
                      {TK_ARG_SCALAR, TK_U8, 0, {.u = N}, 0},
                      {TK_ARG_SCALAR, TK_I16, 0, {.i = N - 1}, 0}};
    for (int c = 0; c < 3; c++) {
        CHECK_OK(tk_memset(ctx, dout, 0xee, N * 4));
        CHECK_OK(tk_launch(fill, g, (tk_arg[]){out, given[c], tk_f32(3 + c), fb}, 4, NULL));
        CHECK_OK(tk_copy_from(ctx, hout, dout, sizeof hout));
        int wrong = 0, n = c == 2 ? N - 1 : N;
        for (int i = 0; i < n; i++)
            wrong += hout[i] != 3 + c;
        CHECK(wrong == 0);
    }
}

/* An access outside every buffer is a fault naming the kernel; the
 * interpreter's context carries on. */
static void test_fault(tk_kernel *add)
{
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N + 40),
                     tk_const("BLOCK", 32)};
    CHECK_FAILS(tk_launch(add, (tk_grid){(N + 40 + 31) / 32, 1, 1}, args, 5, NULL),
                TK_ERR_KERNEL_FAULT, "kernel 'add' faulted in the interpreter");
}

/* The same launch after all those errors runs and is right. */
static void test_still_usable(tk_context *ctx, tk_kernel *add)
{
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N),
                     tk_const("BLOCK", 32)};
    CHECK_OK(tk_launch(add, (tk_grid){(N + 31) / 32, 1, 1}, args, 5, NULL));
    CHECK_OK(tk_copy_from(ctx, hout, dout, sizeof hout));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += hout[i] != hx[i] + hy[i] * 2;
    CHECK(wrong == 0);
}

/* tk_none() for a runtime parameter: a constexpr None, as in Triton; the
 * other runtime arguments fill the remaining parameters in order. */
static void test_none(tk_context *ctx, tk_kernel *add)
{
    static const char src[] = "import torch\n"
                              "import triton\n"
                              "import triton.language as tl\n"
                              "\n"
                              "@triton.jit\n"
                              "def bias_add(x_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                              "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                              "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
                              "    if b_ptr is not None:\n"
                              "        x += tl.load(b_ptr + offs, mask=offs < n)\n"
                              "    tl.store(out_ptr + offs, x, mask=offs < n)\n"
                              "\n"
                              "if __name__ == '__main__':\n"
                              "    print(torch.cuda.is_available())\n";
    tk_module *mod = NULL;
    tk_kernel *k = NULL;
    CHECK_OK(tk_module_load_string(ctx, "none.py", src, &mod));
    if (mod)
        CHECK_OK(tk_module_kernel(mod, "bias_add", &k));
    if (!k) {
        tk_module_destroy(mod);
        return;
    }
    tk_grid g = {(N + 31) / 32, 1, 1};
    CHECK_OK(tk_launch(k, g,
                       (tk_arg[]){tk_ptr(dx, TK_F32), tk_none("b_ptr"), tk_ptr(dout, TK_F32),
                                  tk_i32(N), tk_const("BLOCK", 32)},
                       5, NULL));
    CHECK_OK(tk_copy_from(ctx, hout, dout, sizeof hout));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += hout[i] != hx[i];
    CHECK(wrong == 0);
    CHECK_OK(tk_launch(k, g,
                       (tk_arg[]){tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_ptr(dout, TK_F32),
                                  tk_i32(N), tk_const("BLOCK", 32)},
                       5, NULL));
    CHECK_OK(tk_copy_from(ctx, hout, dout, sizeof hout));
    wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += hout[i] != hx[i] + hy[i];
    CHECK(wrong == 0);
    CHECK_FAILS(tk_launch(add, g,
                          (tk_arg[]){tk_ptr(dx, TK_F32), tk_none("y_ptr"), tk_ptr(dout, TK_F32),
                                     tk_i32(N), tk_const("BLOCK", 32)},
                          5, NULL),
                TK_ERR_COMPILE, "parameter 'y_ptr' was given None");
    tk_module_destroy(mod);
}

/* Runtime parameters left out at the end of a launch take their defaults,
 * as in Triton (a float as fp32, an int as i32); one without a default
 * may not be left out. */
static void test_defaults(tk_context *ctx)
{
    static const char src[] =
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "@triton.jit\n"
        "def affine(x_ptr, out_ptr, n, scale=2.0, shift=3, BLOCK: tl.constexpr = 32):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    tl.store(out_ptr + offs, x * scale + shift, mask=offs < n)\n";
    tk_module *mod = NULL;
    tk_kernel *k = NULL;
    CHECK_OK(tk_module_load_string(ctx, "defaults.py", src, &mod));
    if (mod)
        CHECK_OK(tk_module_kernel(mod, "affine", &k));
    if (!k) {
        tk_module_destroy(mod);
        return;
    }
    tk_grid g = {(N + 31) / 32, 1, 1};
    const float scale[3] = {2.0f, 0.5f, 0.5f}, shift[3] = {3, 3, -1};
    for (int c = 0; c < 3; c++) {
        tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N), tk_f32(0.5f),
                         tk_i32(-1)};
        CHECK_OK(tk_launch(k, g, args, 3 + c, NULL));
        CHECK_OK(tk_copy_from(ctx, hout, dout, sizeof hout));
        int wrong = 0;
        for (int i = 0; i < N; i++)
            wrong += hout[i] != hx[i] * scale[c] + shift[c];
        CHECK(wrong == 0);
    }
    CHECK_FAILS(tk_launch(k, g, (tk_arg[]){tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32)}, 2, NULL),
                TK_ERR_LAUNCH, "takes 5 runtime arguments (x_ptr, out_ptr, n, scale, shift)");
    tk_module_destroy(mod);
}

static RtKey key_for(tk_kernel *k, const tk_arg *args, int nargs, const tk_launch_options *o)
{
    RtLaunchArgs la;
    tk_status s = rt_launch_args(k, args, nargs, o, &la);
    CHECK(s == TK_OK);
    return la.key;
}

static void test_keys(tk_kernel *add)
{
    unsigned char *b = dx;
    tk_arg base[] = {tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_ptr(dout, TK_F32), tk_i32(32),
                     tk_const("BLOCK", 32)};
    RtKey k0 = key_for(add, base, 5, NULL);
    tk_arg a[5];

    /* Only then: other aligned pointers, other multiples of 16, defaults
     * spelled out (num_warps 4, num_stages 3), constexprs in another order. */
    memcpy(a, base, sizeof a);
    a[0] = tk_ptr(b + 256, TK_F32);
    a[3] = tk_i32(48);
    RtKey same = key_for(add, a, 5, &(tk_launch_options){.num_warps = 4, .num_stages = 3});
    CHECK(rt_key_eq(&k0, &same));
    tk_arg reordered[] = {tk_const("BLOCK", 32), base[0], base[1], base[2], base[3]};
    same = key_for(add, reordered, 5, NULL);
    CHECK(rt_key_eq(&k0, &same));

    /* When: each component alone. */
    RtKey diff[16];
    int nd = 0;
    memcpy(a, base, sizeof a);
    a[0] = tk_ptr(b + 4, TK_F32);
    diff[nd++] = key_for(add, a, 5, NULL);
    memcpy(a, base, sizeof a);
    a[3] = tk_i32(33);
    diff[nd++] = key_for(add, a, 5, NULL);
    memcpy(a, base, sizeof a);
    a[3] = tk_i32(1);
    diff[nd++] = key_for(add, a, 5, NULL);
    memcpy(a, base, sizeof a);
    a[3] = tk_i64(32);
    diff[nd++] = key_for(add, a, 5, NULL);
    memcpy(a, base, sizeof a);
    a[2] = tk_ptr(dout, TK_F16);
    diff[nd++] = key_for(add, a, 5, NULL);
    memcpy(a, base, sizeof a);
    a[4] = tk_const("BLOCK", 64);
    diff[nd++] = key_for(add, a, 5, NULL);
    diff[nd++] = key_for(add, base, 5, &(tk_launch_options){.num_warps = 8});
    diff[nd++] = key_for(add, base, 5, &(tk_launch_options){.num_stages = 2});
    tk_arg scaled[] = {base[0], base[1], base[2], base[3], base[4], tk_const("SCALE", 3)};
    diff[nd++] = key_for(add, scaled, 6, NULL);
    for (int i = 0; i < nd; i++) {
        CHECK(!rt_key_eq(&k0, &diff[i]));
        for (int j = 0; j < i; j++)
            CHECK(!rt_key_eq(&diff[i], &diff[j]));
    }

    /* The specialisation bits themselves, as the compiler receives them. */
    ArgSpec sp;
    tk_arg misaligned = tk_ptr(b + 4, TK_F32);
    rt_arg_spec(&misaligned, &sp);
    CHECK(sp.divisibility == 1 && sp.type.dt == DT_PTR && sp.type.elem == DT_F32);
    rt_arg_spec(&base[1], &sp);
    CHECK(sp.divisibility == 16 && !sp.equal_to_1);
    rt_arg_spec(&(tk_arg){TK_ARG_SCALAR, TK_I32, NULL, {.i = 1}, NULL}, &sp);
    CHECK(sp.equal_to_1 && sp.divisibility == 1 && sp.type.dt == DT_I32);
    rt_arg_spec(&(tk_arg){TK_ARG_SCALAR, TK_I64, NULL, {.i = -64}, NULL}, &sp);
    CHECK(!sp.equal_to_1 && sp.divisibility == 16 && sp.type.dt == DT_I64);
    rt_arg_spec(&(tk_arg){TK_ARG_SCALAR, TK_F32, NULL, {.f = 32.0}, NULL}, &sp);
    CHECK(sp.divisibility == 1 && !sp.equal_to_1); /* floats are not specialised */
}

/* Compiling happens once per key; the next prepare or launch is a hit. */
static void test_hits(tk_kernel *add)
{
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N),
                     tk_const("BLOCK", 64)};
    RtStats s0, s1, s2, s3;
    tk_kernel_info info;
    rt_stats_get(&s0);
    CHECK_OK(tk_kernel_prepare(add, args, 5, NULL, &info));
    rt_stats_get(&s1);
    CHECK(s1.compiles == s0.compiles + 1);
    CHECK(info.num_warps == 4 && info.max_threads > 0);
    CHECK_OK(tk_launch(add, (tk_grid){2, 1, 1}, args, 5, NULL));
    CHECK_OK(tk_kernel_prepare(add, args, 5, NULL, &info));
    rt_stats_get(&s2);
    CHECK(s2.compiles == s1.compiles && s2.memory_hits == s1.memory_hits + 2);
    args[4] = tk_const("BLOCK", 128);
    CHECK_OK(tk_kernel_prepare(add, args, 5, NULL, &info));
    rt_stats_get(&s3);
    CHECK(s3.compiles == s2.compiles + 1);
}

static void test_modules(tk_context *ctx, tk_module *mod)
{
    tk_kernel *k;
    CHECK_FAILS(tk_module_kernel(mod, "ad", &k), TK_ERR_NOT_FOUND,
                "no kernel 'ad' in 'args.tk'; its kernels: add, fill");
    tk_module *bad;
    CHECK_FAILS(tk_module_load_string(ctx, "broken.tk", "@triton.jit\ndef f(:\n    pass\n", &bad),
                TK_ERR_COMPILE, "broken.tk:2:");
    CHECK_FAILS(tk_module_load_file(ctx, "/nonexistent/k.tk", &bad), TK_ERR_NOT_FOUND,
                "cannot open '/nonexistent/k.tk'");
    CHECK(strcmp(tk_status_name(TK_ERR_LAUNCH), "TK_ERR_LAUNCH") == 0);
    /* a def whose decorator tk does not read as triton.jit: the error says
     * which decorator, not only that the module has no kernels */
    static const char plain[] = "import triton.language as tl\n@other\ndef k(p):\n"
                                "    tl.store(p, 1.0)\ndef h(p):\n    tl.store(p, 2.0)\n";
    tk_module *py;
    CHECK_OK(tk_module_load_string(ctx, "plain.tk", plain, &py));
    CHECK_FAILS(tk_module_kernel(py, "k", &k), TK_ERR_NOT_FOUND,
                "its kernels: (none); 'k' (line 3) is a def, but tk does not read its decorator "
                "@other as triton.jit");
    CHECK_FAILS(tk_module_kernel(py, "h", &k), TK_ERR_NOT_FOUND,
                "'h' (line 5) is a def with no @triton.jit decorator");
    CHECK_FAILS(tk_module_kernel(py, "other", &k), TK_ERR_NOT_FOUND,
                "(a kernel is a def decorated with @triton.jit");
    tk_module_destroy(py);
}

int main(void)
{
    setenv("TK_CACHE_DISABLE", "1", 1);
    tk_context *ctx = NULL;
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    if (!ctx)
        return 1;
    for (int i = 0; i < N; i++) {
        hx[i] = (float)(i * 7 % 13) - 6.5f;
        hy[i] = (float)(i * 5 % 11) * 0.25f;
    }
    CHECK_OK(tk_alloc(ctx, sizeof hx, &dx));
    CHECK_OK(tk_alloc(ctx, sizeof hy, &dy));
    CHECK_OK(tk_alloc(ctx, sizeof hout, &dout));
    CHECK(((uintptr_t)dx & 255) == 0);
    CHECK_OK(tk_copy_to(ctx, dx, hx, sizeof hx));
    CHECK_OK(tk_copy_to(ctx, dy, hy, sizeof hy));
    CHECK_FAILS(tk_copy_to(ctx, dx, hx, sizeof hx + 1), TK_ERR_INVALID, "not inside a buffer");
    tk_module *mod = NULL;
    tk_kernel *add = NULL, *fill = NULL;
    CHECK_OK(tk_module_load_string(ctx, "args.tk", source, &mod));
    if (mod) {
        CHECK_OK(tk_module_kernel(mod, "add", &add));
        CHECK_OK(tk_module_kernel(mod, "fill", &fill));
    }
    if (add && fill) {
        test_mismatches(ctx, add, fill);
        test_keys(add);
        test_hits(add);
        test_fault(add);
        test_still_usable(ctx, add);
        test_declared_types(ctx, fill);
        test_none(ctx, add);
        test_defaults(ctx);
        test_modules(ctx, mod);
    }
    CHECK_OK(tk_free(ctx, dx));
    CHECK_FAILS(tk_free(ctx, dx), TK_ERR_INVALID, "not a live buffer");
    CHECK_OK(tk_free(ctx, dy));
    CHECK_OK(tk_free(ctx, dout));
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    if (failures)
        fprintf(stderr, "rt_args: %d checks failed\n", failures);
    else
        printf("rt_args: all checks passed\n");
    return failures ? 1 : 0;
}
