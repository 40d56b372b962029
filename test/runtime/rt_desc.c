/* rt_desc.c: tensor descriptors built on the host (tk_desc, Triton's
 * TensorDescriptor) as launch arguments, on the interpreter: a kernel
 * reads and writes 2-D tiles through two descriptors, one over a strided
 * view, with edge tiles clipped at the shape; the cache key follows the
 * block shape, the dtype and the base's alignment; bad descriptors are
 * refused with TK_ERR_LAUNCH naming the fault, launch nothing, and leave
 * the context usable. */
#include "rt_test.h"

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def scale(a_desc, out_desc, n, BM: tl.constexpr):\n"
    "    x = a_desc.load([tl.program_id(0) * BM, 0])\n"
    "    out_desc.store([tl.program_id(0) * BM, 0], x.to(tl.float32) * n)\n"
    "\n"
    "@triton.jit\n"
    "def typed(a_desc: \"*fp32\", n):\n"
    "    pass\n";

/* a 40 x 32 view of a 40 x 48 fp16 array (row stride 48), into 40 x 32 fp32 */
enum { M = 40, N = 32, LD = 48 };
static uint16_t ha[M * LD];
static float hout[M * N];
static void *da, *dout, *da32;

static tk_tensor_desc in_desc(int bm)
{
    return tk_tensor_desc_make(da, TK_F16, 2, (int64_t[]){M, N}, (int64_t[]){LD, 1},
                               (int[]){bm, N});
}

static tk_tensor_desc out_desc(int bm)
{
    return tk_tensor_desc_make(dout, TK_F32, 2, (int64_t[]){M, N}, (int64_t[]){N, 1},
                               (int[]){bm, N});
}

static tk_status run(tk_kernel *k, const tk_tensor_desc *a, const tk_tensor_desc *o, int bm)
{
    tk_grid g = {(unsigned)((M + bm - 1) / bm), 1, 1};
    tk_arg args[] = {tk_desc(a), tk_desc(o), tk_i32(3), tk_const("BM", bm)};
    return tk_launch(k, g, args, 4, NULL);
}

static bool out_matches(tk_context *ctx)
{
    CHECK_OK(tk_copy_from(ctx, hout, dout, sizeof hout));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            if (hout[i * N + j] != tk_f16_to_f32(ha[i * LD + j]) * 3) {
                fprintf(stderr, "out[%d][%d] = %g\n", i, j, hout[i * N + j]);
                return false;
            }
    return true;
}

/* 16-row tiles: the last one is half outside the shape, and the store's
 * buffer ends at row 40, so an unclipped store would be caught. */
static void test_results(tk_context *ctx, tk_kernel *k)
{
    tk_tensor_desc a = in_desc(16), o = out_desc(16);
    CHECK_OK(tk_memset(ctx, dout, 0, sizeof hout));
    CHECK_OK(run(k, &a, &o, 16));
    CHECK(out_matches(ctx));
}

static void test_keys(tk_context *ctx, tk_kernel *k)
{
    RtStats s0, s1;
    tk_tensor_desc a = in_desc(16), o = out_desc(16);
    rt_stats_get(&s0);
    CHECK_OK(run(k, &a, &o, 16)); /* the same key as test_results */
    rt_stats_get(&s1);
    CHECK(s1.compiles == s0.compiles && s1.memory_hits == s0.memory_hits + 1);

    tk_tensor_desc a8 = in_desc(8), o8 = out_desc(8); /* another block shape */
    CHECK_OK(tk_memset(ctx, dout, 0, sizeof hout));
    CHECK_OK(run(k, &a8, &o8, 8));
    rt_stats_get(&s0);
    CHECK(s0.compiles == s1.compiles + 1);
    CHECK(out_matches(ctx));

    /* the same block and dtype over another shape and base: no new build */
    tk_tensor_desc small = a8;
    small.shape[0] = 8;
    CHECK_OK(run(k, &small, &o8, 8));
    rt_stats_get(&s1);
    CHECK(s1.compiles == s0.compiles);

    /* a base off 16-byte alignment: a new build (the :16 hint is gone) */
    tk_tensor_desc odd = a8;
    odd.base = (uint16_t *)da + 1;
    odd.shape[1] = N - 1;
    CHECK_OK(run(k, &odd, &o8, 8));
    rt_stats_get(&s0);
    CHECK(s0.compiles == s1.compiles + 1);

    /* another dtype: a new build, and the values converted from fp32 */
    tk_tensor_desc f32 =
        tk_tensor_desc_make(da32, TK_F32, 2, (int64_t[]){M, N}, (int64_t[]){N, 1}, (int[]){8, N});
    CHECK_OK(tk_memset(ctx, dout, 0, sizeof hout));
    CHECK_OK(run(k, &f32, &o8, 8));
    rt_stats_get(&s1);
    CHECK(s1.compiles == s0.compiles + 1);
    CHECK(out_matches(ctx));
}

/* Each bad descriptor is refused before anything runs. */
static void test_bad(tk_context *ctx, tk_kernel *k, tk_kernel *typed)
{
    tk_tensor_desc o = out_desc(16), d;
    CHECK_OK(tk_memset(ctx, dout, 0xee, sizeof hout));
#define BAD(field_edit, text)                                                                      \
    do {                                                                                           \
        d = in_desc(16);                                                                           \
        field_edit;                                                                                \
        CHECK_FAILS(run(k, &d, &o, 16), TK_ERR_LAUNCH, text);                                      \
    } while (0)
    BAD(d.rank = 0, "argument 1 ('a_desc'): a descriptor's rank must be 1 to 5, not 0");
    BAD(d.rank = 6, "a descriptor's rank must be 1 to 5, not 6");
    BAD(d.rank = -1, "rank must be 1 to 5, not -1");
    BAD(d.strides[1] = 2,
        "argument 1 ('a_desc'): the last stride of a descriptor must be 1, "
        "not 2");
    BAD(d.strides[1] = 0, "the last stride of a descriptor must be 1, not 0");
    BAD(d.base = NULL, "argument 1 ('a_desc'): the descriptor's base is NULL");
    BAD(d.block[0] = 12,
        "argument 1 ('a_desc'): block dim 0 of the descriptor is 12, not a "
        "power of two");
    BAD(d.block[1] = 0, "block dim 1 of the descriptor is 0, not a power of two");
    BAD(d.block[1] = -4, "block dim 1 of the descriptor is -4, not a power of two");
    BAD(d.block[1] = 1 << 21,
        "block dim 1 of the descriptor is 2097152, not a power of two "
        "up to 1048576");
    BAD(d.shape[0] = 0, "shape dim 0 of the descriptor is 0");
    BAD(d.shape[1] = (int64_t)1 << 31, "shape dim 1 of the descriptor is 2147483648");
    BAD(d.strides[0] = -48, "stride dim 0 of the descriptor is -48");
    BAD(d.dtype = TK_VOID, "argument 1 ('a_desc'): the descriptor has no valid dtype");
    BAD(d.dtype = (tk_dtype)99, "the descriptor has no valid dtype");
    BAD(d.dtype = TK_I1, "the descriptor has no valid dtype");
#undef BAD
    CHECK_FAILS(run(k, NULL, &o, 16), TK_ERR_LAUNCH,
                "argument 1 ('a_desc'): the descriptor is "
                "NULL");
    /* rank 3 against a kernel that indexes 2 dims: the source cannot take it */
    d = tk_tensor_desc_make(da, TK_F16, 3, (int64_t[]){1, M, N}, (int64_t[]){M * LD, LD, 1},
                            (int[]){1, 16, N});
    CHECK_FAILS(run(k, &d, &o, 16), TK_ERR_COMPILE, "cannot be specialised");
    /* a descriptor for a parameter annotated as a pointer */
    d = in_desc(16);
    CHECK_FAILS(tk_launch(typed, (tk_grid){1, 1, 1}, (tk_arg[]){tk_desc(&d), tk_i32(1)}, 2, NULL),
                TK_ERR_LAUNCH,
                "parameter 'a_desc' is declared *fp32 but "
                "the launch passes a tensor descriptor");
    /* nothing ran, and the context still works */
    unsigned char bytes[sizeof hout];
    CHECK_OK(tk_copy_from(ctx, bytes, dout, sizeof bytes));
    bool untouched = true;
    for (size_t i = 0; i < sizeof bytes; i++)
        untouched &= bytes[i] == 0xee;
    CHECK(untouched);
    test_results(ctx, k);
}

int main(void)
{
    setenv("TK_CACHE_DISABLE", "1", 1);
    tk_context *ctx = NULL;
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    if (!ctx)
        return 1;
    static float ha32[M * N];
    for (int i = 0; i < M * LD; i++)
        ha[i] = tk_f32_to_f16((float)(i * 7 % 23) * 0.5f - 5.0f);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            ha32[i * N + j] = tk_f16_to_f32(ha[i * LD + j]);
    CHECK_OK(tk_alloc(ctx, sizeof ha, &da));
    CHECK_OK(tk_alloc(ctx, sizeof hout, &dout));
    CHECK_OK(tk_alloc(ctx, sizeof ha32, &da32));
    CHECK_OK(tk_copy_to(ctx, da, ha, sizeof ha));
    CHECK_OK(tk_copy_to(ctx, da32, ha32, sizeof ha32));
    tk_module *mod = NULL;
    tk_kernel *k = NULL, *typed = NULL;
    CHECK_OK(tk_module_load_string(ctx, "desc.tk", source, &mod));
    if (mod) {
        CHECK_OK(tk_module_kernel(mod, "scale", &k));
        CHECK_OK(tk_module_kernel(mod, "typed", &typed));
    }
    if (k && typed) {
        test_results(ctx, k);
        test_keys(ctx, k);
        test_bad(ctx, k, typed);
    }
    tk_module_destroy(mod);
    tk_free(ctx, da);
    tk_free(ctx, dout);
    tk_free(ctx, da32);
    tk_context_destroy(ctx);
    if (failures)
        fprintf(stderr, "rt_desc: %d checks failed\n", failures);
    else
        printf("rt_desc: all checks passed\n");
    return failures ? 1 : 0;
}
