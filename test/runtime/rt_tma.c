/* rt_tma.c: the tensor maps of TMA kernels without a GPU. The encoding of
 * a map from parameter values (rt_tma_plan: dims contiguous first, byte
 * strides, box, swizzle) and the values that make none; the per-variant
 * cache (a repeat launch copies, new values encode again, values that make
 * no map say so); and the metadata the JIT's text half records for the
 * tutorial GEMM on sm_90a, with none when compiled without TMA. */
#include "rt_test.h"

static int encodes;
static bool fake_encode(const RtTmaEncode *e, unsigned char *map)
{
    encodes++;
    memset(map, 0, 128);
    memcpy(map, &e->dim[0], sizeof e->dim[0]); /* a recognisable map */
    memcpy(map + 8, &e->dim[1], sizeof e->dim[1]);
    return true;
}

/* A, M x K fp16 at param 0, rows `stride` apart: extents (K at param 2, M
 * at param 1), box 64 x 128, 128-byte swizzle. */
static RtTmapMeta gemm_a(void)
{
    return (RtTmapMeta){.base = 0,
                        .stride = 3,
                        .ext_param = {{2, -1, -1}, {1, -1, -1}},
                        .ext_mul = {1, 1},
                        .ext_add = {0, 0},
                        .dt = DT_F16,
                        .box = {64, 128},
                        .swizzle = 128};
}

static void test_plan(void)
{
    RtTmapMeta m = gemm_a();
    int64_t vals[4] = {0x7f0000001000, 1000, 1001, 1024};
    RtTmaEncode e;
    CHECK(rt_tma_plan(&m, vals, 4, &e));
    CHECK(e.dt == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 && e.swizzle == CU_TENSOR_MAP_SWIZZLE_128B);
    CHECK(e.dim[0] == 1001 && e.dim[1] == 1000 && e.stride[0] == 2048);
    CHECK(e.box[0] == 64 && e.box[1] == 128 && e.elem_stride[0] == 1 && e.elem_stride[1] == 1);
    CHECK((uintptr_t)e.base == 0x7f0000001000);

    /* a constant added to the extent; no mask: the 32-bit coordinate range */
    m.ext_add[0] = -1;
    m.ext_param[1][0] = IR_TMA_UNBOUNDED;
    CHECK(rt_tma_plan(&m, vals, 4, &e) && e.dim[0] == 1000 && e.dim[1] == INT32_MAX);

    /* a product of parameters (rows = params 1 * 2), a constant stride */
    m = gemm_a();
    m.ext_param[1][1] = 2;
    m.stride = -1;
    m.stride_const = 128;
    CHECK(rt_tma_plan(&m, vals, 4, &e) && e.dim[1] == 1001000 && e.stride[0] == 256);
    /* a product past INT32_MAX may have wrapped in the kernel's 32 bits */
    CHECK(!rt_tma_plan(&m, (int64_t[]){0x7f0000001000, 65536, 65536, 1024}, 4, &e));
    m.stride_const = 100; /* 200 bytes: not a multiple of 16 */
    CHECK(!rt_tma_plan(&m, vals, 4, &e));

    /* what makes no map: each alone */
    m = gemm_a();
    int64_t bad[][4] = {
        {0x7f0000001008, 1000, 1001, 1024},               /* base not 16-byte aligned */
        {0x7f0000001000, 1000, 1001, 1028},               /* stride of 2056 bytes */
        {0x7f0000001000, 1000, 0, 1024},                  /* no columns */
        {0x7f0000001000, -5, 1001, 1024},                 /* negative rows */
        {0x7f0000001000, 1000, 1001, -1024},              /* negative stride */
        {0x7f0000001000, 1000, 1001, 0x4000000000000008}, /* stride * 2 bytes wraps */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(!rt_tma_plan(&m, bad[i], 4, &e));
    /* an extent whose parameter plus constant wraps */
    m.ext_add[1] = 1;
    CHECK(!rt_tma_plan(&m, (int64_t[]){0x7f0000001000, INT64_MAX, 1001, 1024}, 4, &e));
    m = gemm_a();
    m.base = 4; /* a parameter the kernel does not have */
    CHECK(!rt_tma_plan(&m, vals, 4, &e));
    m = gemm_a();
    m.box[0] = 128; /* 256 bytes do not fit a 128-byte swizzle */
    CHECK(!rt_tma_plan(&m, vals, 4, &e));
}

static void test_cache(void)
{
    RtVariant *v = calloc(1, sizeof *v);
    CHECK(v != NULL);
    if (!v)
        return;
    pthread_mutex_init(&v->tma_lock, NULL);
    v->nparams = 4;
    v->ntmaps = 2;
    v->tmaps[0] = gemm_a();
    v->tmaps[1] = gemm_a();
    v->tmaps[1].base = 0; /* same tensor, other box */
    v->tmaps[1].box[1] = 64;
    rt_tma_encode_hook = fake_encode;
    unsigned char maps[RT_MAX_TMAPS][128];
    int64_t vals[4] = {0x7f0000001000, 1000, 1001, 1024};
    bool ok = false;
    encodes = 0;
    CHECK_OK(rt_tma_maps(v, vals, maps, &ok));
    CHECK(ok && encodes == 2);
    uint64_t dim0;
    memcpy(&dim0, maps[1], 8);
    CHECK(dim0 == 1001);
    /* the same arguments again: a copy, no encoding */
    memset(maps, 0xff, sizeof maps);
    CHECK_OK(rt_tma_maps(v, vals, maps, &ok));
    memcpy(&dim0, maps[0], 8);
    CHECK(ok && encodes == 2 && dim0 == 1001);
    /* a new extent: encoded again, then both are hits */
    int64_t vals2[4] = {0x7f0000001000, 1000, 999, 1024};
    CHECK_OK(rt_tma_maps(v, vals2, maps, &ok));
    memcpy(&dim0, maps[0], 8);
    CHECK(ok && encodes == 4 && dim0 == 999);
    CHECK_OK(rt_tma_maps(v, vals, maps, &ok));
    CHECK_OK(rt_tma_maps(v, vals2, maps, &ok));
    CHECK(ok && encodes == 4);
    /* more argument sets than entries: the oldest go */
    for (int i = 0; i < RT_TMA_CACHE; i++) {
        int64_t w[4] = {0x7f0000001000, 1000, 2000 + i, 1024};
        CHECK_OK(rt_tma_maps(v, w, maps, &ok));
    }
    CHECK(encodes == 4 + 2 * RT_TMA_CACHE);
    CHECK_OK(rt_tma_maps(v, vals, maps, &ok));
    CHECK(encodes == 6 + 2 * RT_TMA_CACHE);
    /* arguments that make no map: not an error, and nothing cached */
    int64_t misaligned[4] = {0x7f0000001002, 1000, 1001, 1024};
    CHECK_OK(rt_tma_maps(v, misaligned, maps, &ok));
    CHECK(!ok);
    rt_tma_encode_hook = NULL;
    pthread_mutex_destroy(&v->tma_lock);
    free(v);
}

static _Alignas(256) unsigned short bufs[3][64];

/* The tutorial GEMM's text for sm_90a: the two tiles' maps in the metadata,
 * the tensor-map parameters in the PTX; none when compiled without TMA. */
static void test_jit_meta(void)
{
    setenv("TK_CACHE_DISABLE", "1", 1);
    tk_context *ctx = NULL;
    tk_module *mod = NULL;
    tk_kernel *k = NULL;
    if (tk_context_create(&ctx, &(tk_context_options){.interpret = 1}) != TK_OK ||
        tk_module_load_file(ctx, TK_SOURCE_DIR "/examples/matmul.tk", &mod) != TK_OK ||
        tk_module_kernel(mod, "matmul", &k) != TK_OK) {
        fprintf(stderr, "setup failed: %s\n", tk_last_error());
        failures++;
        return;
    }
    tk_arg args[] = {tk_ptr(bufs[0], TK_F16),
                     tk_ptr(bufs[1], TK_F16),
                     tk_ptr(bufs[2], TK_F16),
                     tk_i32(100),
                     tk_i32(90),
                     tk_i32(70),
                     tk_i32(128),
                     tk_i32(1),
                     tk_i32(96),
                     tk_i32(1),
                     tk_i32(96),
                     tk_i32(1),
                     tk_const("BM", 128),
                     tk_const("BN", 128),
                     tk_const("BK", 64),
                     tk_const("GROUP", 8)};
    RtLaunchArgs la;
    CHECK_OK(
        rt_launch_args(k, args, 16, &(tk_launch_options){.num_warps = 4, .num_stages = 3}, &la));
    RtJitText t;
    CHECK_OK(rt_jit_text(k, &la, "sm_90a", false, &t));
    CHECK(t.meta.ntmaps == 2);
    const RtTmapMeta *a = &t.meta.tmaps[0], *b = &t.meta.tmaps[1];
    CHECK(a->base == 0 && a->stride == 6 && a->ext_param[0][0] == 5 && a->ext_param[1][0] == 3);
    CHECK(a->ext_param[0][1] == -1 && a->ext_param[1][1] == -1);
    CHECK(a->box[0] == 64 && a->box[1] == 128 && a->swizzle == 128 && a->dt == DT_F16);
    CHECK(b->base == 1 && b->stride == 8 && b->ext_param[0][0] == 4 && b->ext_param[1][0] == 5);
    CHECK(t.ptx && strstr(t.ptx, ".param .align 64 .b8 matmul_param_13[128]"));
    rt_jit_text_free(&t);
    la.no_tma = true;
    la.key.w[la.key.nwords++] = 1;
    rt_key_finish(&la.key);
    CHECK_OK(rt_jit_text(k, &la, "sm_90a", false, &t));
    CHECK(t.meta.ntmaps == 0 && t.ptx && !strstr(t.ptx, "cp.async.bulk.tensor"));
    rt_jit_text_free(&t);
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
}

int main(void)
{
    test_plan();
    test_cache();
    test_jit_meta();
    if (failures)
        fprintf(stderr, "rt_tma: %d checks failed\n", failures);
    else
        printf("rt_tma: all checks passed\n");
    return failures ? 1 : 0;
}
