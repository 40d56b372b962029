/* rt_tuple.c: tuple launch arguments (tk_tuple, Triton's tuple arguments)
 * on the interpreter: a foreach kernel over tuples of pointers and a
 * (size, scale) tuple computes what the host does; constexpr items (None,
 * a value) fold; the cache key follows each item's specialisation and the
 * tuple's shape, and a disk entry of a tuple kernel maps its parameters
 * back to the tuple's leaves; malformed tuples are refused (TK_ERR_INVALID) and
 * tuples the kernel cannot take give TK_ERR_LAUNCH, launching nothing. */
#include "rt_test.h"

static const char source[] = "import triton\n"
                             "import triton.language as tl\n"
                             "\n"
                             "@triton.jit\n"
                             "def foreach(srcs, dsts, sizes, BLOCK: tl.constexpr):\n"
                             "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                             "    n, scale = sizes\n"
                             "    for i in tl.static_range(len(srcs)):\n"
                             "        x = tl.load(srcs[i] + offs, mask=offs < n)\n"
                             "        tl.store(dsts[i] + offs, x * scale + i, mask=offs < n)\n"
                             "\n"
                             "@triton.jit\n"
                             "def nested(args, out, BLOCK: tl.constexpr):\n"
                             "    data, extra = args\n"
                             "    x_ptr, n = data\n"
                             "    bias, shift = extra\n"
                             "    offs = tl.arange(0, BLOCK)\n"
                             "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
                             "    if bias is not None:\n"
                             "        x += tl.load(bias + offs, mask=offs < n)\n"
                             "    tl.store(out + offs, x + shift, mask=offs < n)\n"
                             "\n"
                             "@triton.jit\n"
                             "def typed(p: \"*fp32\"):\n"
                             "    pass\n";

enum { N = 50 };
static float ha[N], hb[N], hout[N];
static void *da, *db, *dc, *dd;

static tk_status run_foreach(tk_kernel *k, void *src1, int n, float scale)
{
    tk_arg args[] = {tk_tuple(2),        tk_ptr(da, TK_F32),   tk_ptr(src1, TK_F32), tk_tuple(2),
                     tk_ptr(dc, TK_F32), tk_ptr(dd, TK_F32),   tk_tuple(2),          tk_i32(n),
                     tk_f32(scale),      tk_const("BLOCK", 16)};
    return tk_launch(k, (tk_grid){4, 1, 1}, args, 10, NULL);
}

static bool foreach_right(tk_context *ctx, void *dst, const float *src, int n, float scale, int i)
{
    CHECK_OK(tk_copy_from(ctx, hout, dst, sizeof hout));
    for (int e = 0; e < n; e++)
        if (hout[e] != src[e] * scale + (float)i) {
            fprintf(stderr, "dst%d[%d] = %g, want %g\n", i, e, hout[e], src[e] * scale + i);
            return false;
        }
    return true;
}

static void test_foreach(tk_context *ctx, tk_kernel *k)
{
    CHECK_OK(run_foreach(k, db, N, 2.0f));
    CHECK(foreach_right(ctx, dc, ha, N, 2.0f, 0));
    CHECK(foreach_right(ctx, dd, hb, N, 2.0f, 1));
}

static void test_nested(tk_context *ctx, tk_kernel *k)
{
    tk_grid g = {1, 1, 1};
    /* ((x, n), (None, 3)): the None item folds the bias away, 3 is a constexpr item */
    tk_arg none[] = {tk_tuple(2),       tk_tuple(2),        tk_ptr(da, TK_F32),
                     tk_i32(N),         tk_tuple(2),        tk_none(NULL),
                     tk_const(NULL, 3), tk_ptr(dc, TK_F32), tk_const("BLOCK", 64)};
    CHECK_OK(tk_launch(k, g, none, 9, NULL));
    CHECK_OK(tk_copy_from(ctx, hout, dc, sizeof hout));
    CHECK(hout[0] == ha[0] + 3 && hout[N - 1] == ha[N - 1] + 3);
    tk_arg bias[] = {tk_tuple(2), tk_tuple(2),        tk_ptr(da, TK_F32),
                     tk_i32(N),   tk_tuple(2),        tk_ptr(db, TK_F32),
                     tk_i32(1),   tk_ptr(dc, TK_F32), tk_const("BLOCK", 64)};
    CHECK_OK(tk_launch(k, g, bias, 9, NULL));
    CHECK_OK(tk_copy_from(ctx, hout, dc, sizeof hout));
    CHECK(hout[7] == ha[7] + hb[7] + 1);
}

/* Each item is specialised like an argument; the shape is in the key too. */
static void test_keys(tk_kernel *k)
{
    RtStats s0, s1, s2, s3;
    rt_stats_get(&s0);
    CHECK_OK(run_foreach(k, db, N, 1.5f)); /* same key as test_foreach: a hit */
    rt_stats_get(&s1);
    CHECK(s1.compiles == s0.compiles);
    CHECK_OK(run_foreach(k, (float *)db + 1, N - 1, 1.5f)); /* an item not 16-byte aligned */
    CHECK_OK(run_foreach(k, db, 48, 1.5f));                 /* an item divisible by 16 */
    rt_stats_get(&s2);
    CHECK(s2.compiles == s1.compiles + 2);
    tk_arg three[] = {tk_tuple(3), tk_ptr(da, TK_F32), tk_ptr(db, TK_F32), tk_ptr(da, TK_F32),
                      tk_tuple(3), tk_ptr(dc, TK_F32), tk_ptr(dd, TK_F32), tk_ptr(dc, TK_F32),
                      tk_tuple(2), tk_i32(N),          tk_f32(1),          tk_const("BLOCK", 16)};
    CHECK_OK(tk_launch(k, (tk_grid){4, 1, 1}, three, 12, NULL));
    rt_stats_get(&s3);
    CHECK(s3.compiles == s2.compiles + 1);
}

static void test_errors(tk_kernel *k, tk_kernel *typed)
{
    tk_grid g = {1, 1, 1};
    tk_arg past[] = {tk_tuple(3), tk_ptr(da, TK_F32), tk_ptr(db, TK_F32)};
    CHECK_FAILS(tk_launch(k, g, past, 3, NULL), TK_ERR_INVALID,
                "args[0] is a tuple of 3 items that does not fit the list");
    tk_arg neg[] = {tk_tuple(-1)};
    CHECK_FAILS(tk_launch(k, g, neg, 1, NULL), TK_ERR_INVALID, "args[0] is a tuple of -1 items");
    tk_arg novalue[] = {tk_tuple(1), tk_const_text(NULL, NULL)};
    CHECK_FAILS(tk_launch(k, g, novalue, 2, NULL), TK_ERR_INVALID, "args[1].text");
    CHECK_FAILS(tk_launch(k, g, (tk_arg[]){tk_const(NULL, 3)}, 1, NULL), TK_ERR_INVALID,
                "args[0].name");
    CHECK_FAILS(tk_launch(typed, g, (tk_arg[]){tk_tuple(1), tk_ptr(da, TK_F32)}, 2, NULL),
                TK_ERR_LAUNCH, "'p' is declared *fp32 but the launch passes a tuple");
    tk_tensor_desc d =
        tk_tensor_desc_make(da, TK_F32, 1, (int64_t[]){N}, (int64_t[]){1}, (int[]){16});
    tk_arg desc[] = {tk_tuple(1), tk_desc(&d), tk_tuple(0), tk_tuple(0), tk_const("BLOCK", 16)};
    CHECK_FAILS(tk_launch(k, g, desc, 5, NULL), TK_ERR_LAUNCH,
                "item srcs[0] is a tensor descriptor");
    tk_arg many[RT_MAX_PARAMS + 8];
    many[0] = tk_tuple(RT_MAX_PARAMS + 1);
    for (int i = 1; i < RT_MAX_PARAMS + 2; i++)
        many[i] = tk_i32(i);
    CHECK_FAILS(tk_launch(k, g, many, RT_MAX_PARAMS + 2, NULL), TK_ERR_LAUNCH,
                "tuples hold more than 256 items");
    tk_arg odd[] = {tk_tuple(2), tk_ptr(da, TK_F32), tk_tuple(1),          tk_ptr(db, TK_F32),
                    tk_tuple(2), tk_ptr(dc, TK_F32), tk_ptr(dd, TK_F32),   tk_tuple(2),
                    tk_i32(N),   tk_f32(1),          tk_const("BLOCK", 16)};
    CHECK_FAILS(tk_launch(k, g, odd, 11, NULL), TK_ERR_COMPILE, "unsupported operand");
}

/* The text half (what a GPU launch builds, needing no GPU) of a tuple
 * kernel: each compiled parameter maps to its tuple's leaf, and a second
 * request reads the entry back from disk with the same map. */
static void test_disk(tk_kernel *k)
{
    const char *dir = t_tempdir("tuple");
    setenv("TK_CACHE_DIR", dir, 1);
    unsetenv("TK_CACHE_DISABLE");
    rt_disk_reset();
    tk_arg args[] = {tk_tuple(2),        tk_ptr(da, TK_F32),   tk_ptr(db, TK_F32), tk_tuple(2),
                     tk_ptr(dc, TK_F32), tk_ptr(dd, TK_F32),   tk_tuple(2),        tk_i32(N),
                     tk_f32(2),          tk_const("BLOCK", 16)};
    for (int round = 0; round < 2; round++) {
        RtLaunchArgs la;
        RtJitText t;
        CHECK_OK(rt_launch_args(k, args, 10, NULL, &la));
        pthread_mutex_lock(&k->mod->lock);
        tk_status s = rt_jit_text(k, &la, "sm_80", true, &t);
        pthread_mutex_unlock(&k->mod->lock);
        CHECK_OK(s);
        if (s != TK_OK)
            break;
        CHECK(t.from_disk == (round == 1));
        CHECK(t.meta.nparams == 6 && t.ptx && strstr(t.ptx, ".entry foreach"));
        for (uint32_t i = 0; i < t.meta.nparams && i < 6; i++)
            CHECK(t.meta.param_of[i] == (int)i / 2 && t.meta.param_part[i] == 1 + i % 2);
        rt_jit_text_free(&t);
    }
    t_rmdir(dir);
    setenv("TK_CACHE_DISABLE", "1", 1);
    rt_disk_reset();
}

int main(void)
{
    setenv("TK_CACHE_DISABLE", "1", 1);
    tk_context *ctx = NULL;
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    if (!ctx)
        return 1;
    for (int i = 0; i < N; i++) {
        ha[i] = (float)(i % 9) - 4.0f;
        hb[i] = (float)(i % 5) * 0.5f;
    }
    void **bufs[] = {&da, &db, &dc, &dd};
    for (int i = 0; i < 4; i++)
        CHECK_OK(tk_alloc(ctx, sizeof ha, bufs[i]));
    CHECK_OK(tk_copy_to(ctx, da, ha, sizeof ha));
    CHECK_OK(tk_copy_to(ctx, db, hb, sizeof hb));
    tk_module *mod = NULL;
    tk_kernel *foreach = NULL, *nested = NULL, *typed = NULL;
    CHECK_OK(tk_module_load_string(ctx, "tuple.tk", source, &mod));
    if (mod) {
        CHECK_OK(tk_module_kernel(mod, "foreach", &foreach));
        CHECK_OK(tk_module_kernel(mod, "nested", &nested));
        CHECK_OK(tk_module_kernel(mod, "typed", &typed));
    }
    if (foreach && nested && typed) {
        test_foreach(ctx, foreach);
        test_nested(ctx, nested);
        test_keys(foreach);
        test_errors(foreach, typed);
        test_foreach(ctx, foreach); /* still usable */
        test_disk(foreach);
    }
    for (int i = 0; i < 4; i++)
        CHECK_OK(tk_free(ctx, *bufs[i]));
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    if (failures)
        fprintf(stderr, "rt_tuple: %d checks failed\n", failures);
    else
        printf("rt_tuple: all checks passed\n");
    return failures ? 1 : 0;
}
