/* rt_api_null.c: every function of tk.h given bad arguments, on the
 * interpreter (no GPU). Each pointer argument NULL in turn, pointer/count
 * pairs that disagree, negative counts, out-of-range enums and zero sizes:
 * each call returns TK_ERR_INVALID with a message naming the argument, or
 * is a documented no-op (destroy/free of NULL, optional pointers). Failures
 * of tk_compile set tk_last_error whether or not diags is NULL. After all
 * of it the library still compiles and launches correctly. The list of
 * functions is checked against the declarations of include/tk/tk.h, so a
 * function added there without a case here fails this test. */
#include <ctype.h>
#include <stdint.h>

#include "rt_test.h"

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def twice(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)\n";

enum { N = 64 };
static tk_context *ctx;
static tk_module *mod;
static tk_kernel *kern;
static void *dx, *dout;

#define CHECK_INVALID(call, text) CHECK_FAILS(call, TK_ERR_INVALID, text)

static tk_arg *good_args(tk_arg a[4])
{
    a[0] = tk_ptr(dx, TK_F32);
    a[1] = tk_ptr(dout, TK_F32);
    a[2] = tk_i32(N);
    a[3] = tk_const("BLOCK", 32);
    return a;
}

/* ---- functions without pointer arguments ------------------------------------------ */

static void test_plain(void)
{
    CHECK(strcmp(tk_status_name((tk_status)99), "TK_ERR_UNKNOWN") == 0);
    CHECK(strcmp(tk_status_name((tk_status)-1), "TK_ERR_UNKNOWN") == 0);
    CHECK(strcmp(tk_version(), TK_VERSION_STRING) == 0);
    CHECK(tk_last_error() != NULL);
    CHECK(tk_f16_to_f32(tk_f32_to_f16(1.5f)) == 1.5f);
    CHECK(tk_bf16_to_f32(tk_f32_to_bf16(1.5f)) == 1.5f);
    CHECK(tk_fp8e4nv_to_f32(tk_f32_to_fp8e4nv(1e30f)) == 448.0f);
    CHECK(tk_fp8e5_to_f32(tk_f32_to_fp8e5(1.5f)) == 1.5f);
    CHECK(tk_f32_to_fp8e4b15(-1.8f) == 0xfe && tk_fp8e4b15_to_f32(0x7f) == 1.875f);
}

/* ---- the compiler ------------------------------------------------------------------- */

static tk_status compile(const tk_compile_options *o, char **diags)
{
    char *out = NULL;
    size_t len = 0;
    tk_status s = tk_compile("t.tk", source, strlen(source), o, &out, &len, diags);
    CHECK(s == TK_OK || out == NULL);
    tk_free_text(out);
    return s;
}

static void test_compile_pointers(void)
{
    tk_compile_options o = {.kernel = "twice",
                            .emit = TK_EMIT_IR,
                            .signature = "*fp32,*fp32,i32",
                            .defines = (tk_define[]){{"BLOCK", "32"}},
                            .ndefines = 1};
    char *out = NULL, *diags = NULL;
    size_t len = 0;
    CHECK_INVALID(tk_compile("t.tk", NULL, 3, &o, &out, &len, &diags), "tk_compile: src is NULL");
    CHECK(out == NULL && diags == NULL);
    CHECK_INVALID(tk_compile("t.tk", source, strlen(source), NULL, &out, &len, &diags),
                  "tk_compile: opts is NULL");
    CHECK_INVALID(tk_compile("t.tk", source, strlen(source), &o, NULL, &len, &diags),
                  "tk_compile: out is NULL");
    /* optional: filename ("<string>"), out_len and diags */
    CHECK_OK(tk_compile(NULL, source, strlen(source), &o, &out, NULL, NULL));
    CHECK(out && strstr(out, "twice"));
    tk_free_text(out);
    tk_free_text(NULL);

    o.defines = NULL;
    o.ndefines = 3;
    CHECK_INVALID(compile(&o, NULL), "tk_compile: defines is NULL but ndefines is 3");
    o.defines = (tk_define[]){{"BLOCK", "32"}};
    o.ndefines = -1;
    CHECK_INVALID(compile(&o, NULL), "tk_compile: ndefines is -1");
    o.ndefines = 2;
    o.defines = (tk_define[]){{"BLOCK", "32"}, {NULL, "1"}};
    CHECK_INVALID(compile(&o, NULL), "tk_compile: defines[1].name is NULL");
    o.defines = (tk_define[]){{"BLOCK", NULL}, {"X", "1"}};
    CHECK_INVALID(compile(&o, NULL), "tk_compile: defines[0].value is NULL");
}

static void test_compile_values(void)
{
    tk_compile_options o = {.kernel = "twice",
                            .emit = TK_EMIT_IR,
                            .signature = "*fp32,*fp32,i32",
                            .defines = (tk_define[]){{"BLOCK", "32"}},
                            .ndefines = 1};
    static const struct {
        int emit, warps, stages, opt;
        const char *text;
    } bad[] = {
        {99, 0, 0, -1, "tk_compile: emit is 99"},
        {-1, 0, 0, -1, "tk_compile: emit is -1"},
        {TK_EMIT_IR, -4, 0, -1, "tk_compile: num_warps is -4"},
        {TK_EMIT_IR, 3, 0, -1, "tk_compile: num_warps is 3"},
        {TK_EMIT_IR, 64, 0, -1, "tk_compile: num_warps is 64"},
        {TK_EMIT_IR, 0, -1, -1, "tk_compile: num_stages is -1"},
        {TK_EMIT_IR, 0, 0, 4, "tk_compile: opt_level is 4"},
        {TK_EMIT_IR, 0, 0, -2, "tk_compile: opt_level is -2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.emit = (tk_emit)bad[i].emit;
        o.num_warps = bad[i].warps;
        o.num_stages = bad[i].stages;
        o.opt_level = bad[i].opt;
        char *out = (char *)"x";
        size_t len = 7;
        CHECK_INVALID(tk_compile("t.tk", source, strlen(source), &o, &out, &len, NULL),
                      bad[i].text);
        CHECK(out == NULL);
    }
    /* line_info: 0 (the default), 1 or -1 */
    o.emit = TK_EMIT_IR;
    o.num_warps = o.num_stages = 0;
    o.opt_level = -1;
    static const struct {
        int v;
        const char *text;
    } lines[] = {{2, "tk_compile: line_info is 2"},
                 {-2, "tk_compile: line_info is -2"},
                 {1 << 30, "tk_compile: line_info is 1073741824"}};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        o.line_info = lines[i].v;
        char *out = (char *)"x";
        CHECK_INVALID(tk_compile("t.tk", source, strlen(source), &o, &out, NULL, NULL),
                      lines[i].text);
        CHECK(out == NULL);
    }
    for (int v = -1; v <= 1; v++) {
        o.line_info = v;
        char *out = NULL;
        CHECK(tk_compile("t.tk", source, strlen(source), &o, &out, NULL, NULL) == TK_OK);
        tk_free_text(out);
    }
}

/* Every failure sets tk_last_error, with diags or without. */
static void test_compile_last_error(void)
{
    tk_compile_options o = {.kernel = "twice",
                            .emit = TK_EMIT_IR,
                            .signature = "*fp32,*fp32,i32",
                            .defines = (tk_define[]){{"BLOCK", "32"}},
                            .ndefines = 1};
    char *out = NULL, *diags = NULL;
    const char *broken = "@triton.jit\ndef k(x):\n    y = = 1\n";
    for (int with_diags = 0; with_diags < 2; with_diags++) {
        err_clear();
        CHECK_FAILS(tk_compile("broken.tk", broken, strlen(broken), &o, &out, NULL,
                               with_diags ? &diags : NULL),
                    TK_ERR_COMPILE, "broken.tk:3:");
        CHECK(!with_diags || (diags && strstr(diags, "broken.tk:3:")));
        tk_free_text(diags);
        diags = NULL;
        err_clear();
        o.kernel = "nothere";
        CHECK_FAILS(compile(&o, with_diags ? &diags : NULL), TK_ERR_COMPILE, "nothere");
        tk_free_text(diags);
        diags = NULL;
        o.kernel = "twice";
        /* an empty source (len 0) has no kernel */
        err_clear();
        CHECK_FAILS(tk_compile("empty.tk", "", 0, &o, &out, NULL, NULL), TK_ERR_COMPILE,
                    "no @jit function named 'twice'");
    }
    /* a -D value that does not fit is refused, not clamped */
    o.defines = (tk_define[]){{"BLOCK", "99999999999999999999999"}};
    CHECK_FAILS(compile(&o, NULL), TK_ERR_COMPILE,
                "-D BLOCK=99999999999999999999999: value does not fit in int64");
    o.defines = (tk_define[]){{"BLOCK", "-0x8000000000000001"}};
    CHECK_FAILS(compile(&o, NULL), TK_ERR_COMPILE, "does not fit in int64");
    o.defines = (tk_define[]){{"BLOCK", "1e999"}};
    CHECK_FAILS(compile(&o, NULL), TK_ERR_COMPILE, "does not fit in float64");
    o.defines = (tk_define[]){{"BLOCK", "32"}};
    CHECK_OK(compile(&o, NULL));
}

/* ---- the runtime ----------------------------------------------------------------------- */

static void test_context(void)
{
    CHECK_INVALID(tk_context_create(NULL, NULL), "tk_context_create: ctx is NULL");
    tk_context *c = (tk_context *)&c;
    CHECK_INVALID(tk_context_create(&c, &(tk_context_options){.device = -1, .interpret = 1}),
                  "tk_context_create: device is -1");
    CHECK(c == NULL);
    CHECK_OK(tk_context_create(&c, NULL)); /* TK_INTERPRET=1 */
    tk_context_destroy(c);
    tk_context_destroy(NULL);
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
}

static void test_memory(void)
{
    void *p = NULL;
    unsigned char host[16] = {0};
    CHECK_INVALID(tk_alloc(NULL, 16, &p), "tk_alloc: ctx is NULL");
    CHECK_INVALID(tk_alloc(ctx, 16, NULL), "tk_alloc: dptr is NULL");
    CHECK_FAILS(tk_alloc(ctx, SIZE_MAX, &p), TK_ERR_NO_MEMORY, "tk_alloc");
    CHECK(p == NULL);
    CHECK_FAILS(tk_alloc(ctx, SIZE_MAX - 100, &p), TK_ERR_NO_MEMORY, "tk_alloc");
    CHECK_OK(tk_alloc(ctx, 0, &p)); /* zero bytes: a buffer that can be freed */
    CHECK_OK(tk_free(ctx, p));
    CHECK_INVALID(tk_free(NULL, dx), "tk_free: ctx is NULL");
    CHECK_OK(tk_free(ctx, NULL));

    CHECK_INVALID(tk_copy_to(NULL, dx, host, 16), "tk_copy_to: ctx is NULL");
    CHECK_INVALID(tk_copy_to(ctx, NULL, host, 16), "tk_copy_to: dst_dev is NULL");
    CHECK_INVALID(tk_copy_to(ctx, dx, NULL, 16), "tk_copy_to: src_host is NULL");
    CHECK_OK(tk_copy_to(ctx, NULL, NULL, 0));
    CHECK_INVALID(tk_copy_from(NULL, host, dx, 16), "tk_copy_from: ctx is NULL");
    CHECK_INVALID(tk_copy_from(ctx, NULL, dx, 16), "tk_copy_from: dst_host is NULL");
    CHECK_INVALID(tk_copy_from(ctx, host, NULL, 16), "tk_copy_from: src_dev is NULL");
    CHECK_OK(tk_copy_from(ctx, NULL, NULL, 0));
    CHECK_INVALID(tk_memset(NULL, dx, 0, 16), "tk_memset: ctx is NULL");
    CHECK_INVALID(tk_memset(ctx, NULL, 0, 16), "tk_memset: dptr is NULL");
    CHECK_OK(tk_memset(ctx, NULL, 0, 0));
    CHECK_INVALID(tk_synchronize(NULL), "tk_synchronize: ctx is NULL");
    CHECK_OK(tk_synchronize(ctx));

    tk_device_props props;
    CHECK_INVALID(tk_device_properties(NULL, &props), "tk_device_properties: ctx is NULL");
    CHECK_INVALID(tk_device_properties(ctx, NULL), "tk_device_properties: props is NULL");
    tk_kernel_info info = {.num_warps = 4};
    int blocks;
    CHECK_INVALID(tk_occupancy(NULL, &info, &blocks), "tk_occupancy: ctx is NULL");
    CHECK_INVALID(tk_occupancy(ctx, NULL, &blocks), "tk_occupancy: info is NULL");
    CHECK_INVALID(tk_occupancy(ctx, &info, NULL), "tk_occupancy: blocks_per_sm is NULL");
    CHECK_OK(tk_occupancy(ctx, &info, &blocks));
}

static void test_modules(void)
{
    tk_module *m = (tk_module *)&m;
    CHECK_INVALID(tk_module_load_string(NULL, "t", source, &m),
                  "tk_module_load_string: ctx is NULL");
    CHECK_INVALID(tk_module_load_string(ctx, "t", NULL, &m), "tk_module_load_string: src is NULL");
    CHECK_INVALID(tk_module_load_string(ctx, "t", source, NULL),
                  "tk_module_load_string: mod is NULL");
    CHECK_OK(tk_module_load_string(ctx, NULL, source, &m)); /* name NULL: "<string>" */
    tk_module_destroy(m);
    tk_module_destroy(NULL);
    CHECK_INVALID(tk_module_load_file(NULL, "t.tk", &m), "tk_module_load_file: ctx is NULL");
    CHECK_INVALID(tk_module_load_file(ctx, NULL, &m), "tk_module_load_file: path is NULL");
    CHECK_INVALID(tk_module_load_file(ctx, "t.tk", NULL), "tk_module_load_file: mod is NULL");

    CHECK_OK(tk_module_load_string(ctx, "t.tk", source, &mod));
    tk_kernel *k = (tk_kernel *)&k;
    CHECK_INVALID(tk_module_kernel(NULL, "twice", &k), "tk_module_kernel: mod is NULL");
    CHECK_INVALID(tk_module_kernel(mod, NULL, &k), "tk_module_kernel: name is NULL");
    CHECK_INVALID(tk_module_kernel(mod, "twice", NULL), "tk_module_kernel: k is NULL");
    CHECK_OK(tk_module_kernel(mod, "twice", &kern));
}

static void test_launch(void)
{
    tk_arg a[4];
    tk_grid g = {2, 1, 1};
    CHECK_INVALID(tk_launch(NULL, g, good_args(a), 4, NULL), "tk_launch: k is NULL");
    CHECK_INVALID(tk_launch(kern, g, NULL, 4, NULL), "tk_launch: args is NULL but nargs is 4");
    CHECK_INVALID(tk_launch(kern, g, good_args(a), -1, NULL), "tk_launch: nargs is -1");
    a[3] = tk_const_text(NULL, "32");
    CHECK_INVALID(tk_launch(kern, g, a, 4, NULL), "tk_launch: args[3].name is NULL");
    a[3] = tk_const_text("BLOCK", NULL);
    CHECK_INVALID(tk_launch(kern, g, a, 4, NULL), "tk_launch: args[3].text is NULL");

    /* an integer scalar built by hand that its dtype cannot hold */
    good_args(a)[2].v.i = INT64_C(1) << 40;
    CHECK_FAILS(tk_launch(kern, g, a, 4, NULL), TK_ERR_LAUNCH,
                "argument 3 ('n') holds 1099511627776, which does not fit in i32");
    a[2] = tk_u32(UINT32_MAX);
    a[2].dtype = TK_U16;
    CHECK_FAILS(tk_launch(kern, g, a, 4, NULL), TK_ERR_LAUNCH, "which does not fit in u16");
    a[2].dtype = TK_I1;
    a[2].v.i = -1;
    CHECK_FAILS(tk_launch(kern, g, a, 4, NULL), TK_ERR_LAUNCH, "which does not fit in i1");

    tk_kernel_info info;
    CHECK_INVALID(tk_kernel_prepare(NULL, good_args(a), 4, NULL, &info),
                  "tk_kernel_prepare: k is NULL");
    CHECK_INVALID(tk_kernel_prepare(kern, good_args(a), 4, NULL, NULL),
                  "tk_kernel_prepare: info is NULL");
    CHECK_INVALID(tk_kernel_prepare(kern, NULL, 2, NULL, &info),
                  "tk_kernel_prepare: args is NULL but nargs is 2");
    CHECK_INVALID(tk_kernel_prepare(kern, good_args(a), -3, NULL, &info),
                  "tk_kernel_prepare: nargs is -3");
    CHECK_OK(tk_kernel_prepare(kern, good_args(a), 4, NULL, &info));
}

static tk_status bench_fn(void *user)
{
    (void)user;
    tk_arg a[4];
    return tk_launch(kern, (tk_grid){2, 1, 1}, good_args(a), 4, NULL);
}

static void test_bench(void)
{
    tk_bench_result r;
    tk_bench_options o = {.warmup_ms = 1, .rep_ms = 1, .max_runs = 2};
    CHECK_INVALID(tk_bench(NULL, bench_fn, NULL, &o, &r), "tk_bench: ctx is NULL");
    CHECK_INVALID(tk_bench(ctx, NULL, NULL, &o, &r), "tk_bench: fn is NULL");
    CHECK_INVALID(tk_bench(ctx, bench_fn, NULL, &o, NULL), "tk_bench: out is NULL");
    CHECK_INVALID(tk_bench(ctx, bench_fn, NULL, &(tk_bench_options){.max_runs = -1}, &r),
                  "tk_bench: max_runs is -1");
    CHECK_OK(tk_bench(ctx, bench_fn, NULL, &o, &r)); /* user NULL */
}

static tk_grid grid_fn(const tk_config *cfg, const tk_arg *args, int nargs, void *user)
{
    (void)cfg, (void)args, (void)nargs, (void)user;
    return (tk_grid){2, 1, 1};
}

static void test_tuning(void)
{
    tk_define d[] = {{"BLOCK", "32"}, {"BLOCK", "64"}};
    tk_define no_name[] = {{NULL, "1"}}, no_value[] = {{"BLOCK", NULL}};
    tk_config cf[2] = {{d, 1, 0, 0, 0, 0, {0}}, {d + 1, 1, 0, 0, 0, 0, {0}}};
    const char *key[] = {"n", NULL};
    tk_arg a[3] = {tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N)};
    tk_tune_options o = {.configs = cf, .nconfigs = 2, .key = key, .nkey = 1};
    const char *fn = "tk_kernel_set_tuning: ";
    char want[128];
#define BAD_TUNING(field_change, text)                                                             \
    do {                                                                                           \
        tk_tune_options b = o;                                                                     \
        tk_config bc[2] = {cf[0], cf[1]};                                                          \
        b.configs = b.configs ? bc : NULL;                                                         \
        field_change;                                                                              \
        snprintf(want, sizeof want, "%s%s", fn, text);                                             \
        CHECK_INVALID(tk_kernel_set_tuning(kern, &b), want);                                       \
    } while (0)
    CHECK_INVALID(tk_kernel_set_tuning(NULL, &o), "tk_kernel_set_tuning: k is NULL");
    CHECK_INVALID(tk_kernel_set_tuning(kern, NULL), "tk_kernel_set_tuning: opts is NULL");
    BAD_TUNING(b.configs = NULL, "configs is NULL but nconfigs is 2");
    BAD_TUNING(b.nconfigs = -1, "nconfigs is -1");
    BAD_TUNING(b.nconfigs = 0, "configs is not NULL but nconfigs is 0");
    BAD_TUNING(bc[1].defines = NULL, "configs[1].defines is NULL but configs[1].ndefines is 1");
    BAD_TUNING(bc[0].ndefines = -2, "configs[0].ndefines is -2");
    BAD_TUNING(bc[0].num_warps = -1, "configs[0].num_warps is -1");
    BAD_TUNING(bc[1].num_stages = -1, "configs[1].num_stages is -1");
    BAD_TUNING(bc[1].defines = no_name, "configs[1].defines[0].name is NULL");
    BAD_TUNING(bc[1].defines = no_value, "configs[1].defines[0].value is NULL");
    BAD_TUNING(b.key = NULL, "key is NULL but nkey is 1");
    BAD_TUNING(b.nkey = -1, "nkey is -1");
    BAD_TUNING(b.nkey = 2, "key[1] is NULL");
    BAD_TUNING(b.warmup_ms = -1, "warmup_ms is -1");
    BAD_TUNING(b.rep_ms = -0.5, "rep_ms is -0.5");
#undef BAD_TUNING

    const tk_config *got = NULL;
    int n = -1;
    CHECK_INVALID(tk_kernel_configs(NULL, &got, &n), "tk_kernel_configs: k is NULL");
    CHECK_INVALID(tk_kernel_configs(kern, NULL, &n), "tk_kernel_configs: configs is NULL");
    CHECK_INVALID(tk_kernel_configs(kern, &got, NULL), "tk_kernel_configs: n is NULL");
    CHECK_OK(tk_kernel_configs(kern, &got, &n));
    CHECK(n == 0); /* no bad call above set any */

    CHECK_INVALID(tk_launch_tuned(NULL, grid_fn, NULL, a, 3, NULL), "tk_launch_tuned: k is NULL");
    CHECK_INVALID(tk_launch_tuned(kern, NULL, NULL, a, 3, NULL), "tk_launch_tuned: grid is NULL");
    CHECK_OK(tk_kernel_set_tuning(kern, &o));
    CHECK_INVALID(tk_launch_tuned(kern, grid_fn, NULL, NULL, 3, NULL),
                  "tk_launch_tuned: args is NULL but nargs is 3");
    CHECK_INVALID(tk_launch_tuned(kern, grid_fn, NULL, a, -1, NULL),
                  "tk_launch_tuned: nargs is -1");
    tk_tune_choice c;
    CHECK_INVALID(tk_kernel_tuned_config(NULL, a, 3, NULL, &c),
                  "tk_kernel_tuned_config: k is NULL");
    CHECK_INVALID(tk_kernel_tuned_config(kern, a, 3, NULL, NULL),
                  "tk_kernel_tuned_config: out is NULL");
    CHECK_INVALID(tk_kernel_tuned_config(kern, NULL, 3, NULL, &c),
                  "tk_kernel_tuned_config: args is NULL but nargs is 3");
    CHECK_INVALID(tk_kernel_tuned_config(kern, a, -2, NULL, &c),
                  "tk_kernel_tuned_config: nargs is -2");
    /* none of the bad launches counted as the first tuned launch */
    CHECK_OK(tk_kernel_set_tuning(kern, &o));
    CHECK_OK(tk_kernel_configs(kern, &got, &n));
    CHECK(n == 2 && got && strcmp(got[1].defines[0].value, "64") == 0);
    CHECK_OK(tk_launch_tuned(kern, grid_fn, NULL, a, 3, NULL)); /* user NULL, opts NULL */
    CHECK_OK(tk_kernel_tuned_config(kern, a, 3, NULL, &c));
    CHECK(c.index == 0);
}

/* ---- still usable ----------------------------------------------------------------------------- */

static void check_twice(void)
{
    float in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = (float)i;
    CHECK_OK(tk_copy_to(ctx, dx, in, sizeof in));
    CHECK_OK(tk_memset(ctx, dout, 0, sizeof out));
    tk_module *m;
    tk_kernel *k;
    CHECK_OK(tk_module_load_string(ctx, "again.tk", source, &m));
    CHECK_OK(tk_module_kernel(m, "twice", &k));
    tk_arg a[4];
    CHECK_OK(tk_launch(k, (tk_grid){2, 1, 1}, good_args(a), 4, NULL));
    CHECK_OK(tk_copy_from(ctx, out, dout, sizeof out));
    for (int i = 0; i < N; i++)
        CHECK(out[i] == 2.0f * (float)i);
    tk_module_destroy(m);
}

/* tk_compile_ir: the same pointer and option checks as tk_compile, and a
 * failure sets tk_last_error without diags. */
static void test_compile_ir(void)
{
    tk_compile_options o = {.kernel = "twice",
                            .emit = TK_EMIT_IR,
                            .signature = "*fp32,*fp32,i32",
                            .defines = (tk_define[]){{"BLOCK", "32"}},
                            .ndefines = 1};
    char *ir = NULL, *out = NULL, *diags = NULL;
    size_t len = 0;
    CHECK_OK(tk_compile("t.tk", source, strlen(source), &o, &ir, &len, NULL));
    tk_compile_options io = {.emit = TK_EMIT_IR};
    CHECK_INVALID(tk_compile_ir("t.tkir", NULL, 3, &io, NULL, &out, &len, &diags),
                  "tk_compile_ir: text is NULL");
    CHECK(out == NULL && diags == NULL);
    CHECK_INVALID(tk_compile_ir("t.tkir", ir, len, NULL, NULL, &out, &len, &diags),
                  "tk_compile_ir: opts is NULL");
    CHECK_INVALID(tk_compile_ir("t.tkir", ir, len, &io, NULL, NULL, &len, &diags),
                  "tk_compile_ir: out is NULL");
    io.emit = (tk_emit)99;
    CHECK_INVALID(tk_compile_ir("t.tkir", ir, len, &io, NULL, &out, &len, NULL),
                  "tk_compile_ir: emit is 99");
    io.emit = TK_EMIT_IR;
    CHECK_FAILS(tk_compile_ir("t.tkir", "kernel @k(", 10, &io, NULL, &out, &len, NULL),
                TK_ERR_COMPILE, "t.tkir:1:");
    CHECK_OK(tk_compile_ir(NULL, ir, strlen(ir), &io, NULL, &out, NULL, NULL));
    CHECK(out && strstr(out, "twice"));
    tk_free_text(out);
    tk_free_text(ir);
}

/* ---- every function of tk.h is covered ------------------------------------------------------ */

static const char *const covered[] = {
    "tk_last_error",
    "tk_status_name",
    "tk_version",
    "tk_f32_to_f16",
    "tk_f16_to_f32",
    "tk_f32_to_bf16",
    "tk_bf16_to_f32",
    "tk_f32_to_fp8e4nv",
    "tk_fp8e4nv_to_f32",
    "tk_f32_to_fp8e5",
    "tk_fp8e5_to_f32",
    "tk_f32_to_fp8e4b15",
    "tk_fp8e4b15_to_f32", /* test_plain */
    "tk_compile",
    "tk_compile_ir",
    "tk_free_text", /* test_compile_* */
    "tk_context_create",
    "tk_context_destroy", /* test_context */
    "tk_alloc",
    "tk_free",
    "tk_copy_to",
    "tk_copy_from",
    "tk_memset",
    "tk_synchronize",
    "tk_device_properties",
    "tk_occupancy", /* test_memory */
    "tk_module_load_file",
    "tk_module_load_string",
    "tk_module_destroy",
    "tk_module_kernel", /* test_modules */
    "tk_launch",
    "tk_kernel_prepare", /* test_launch */
    "tk_bench",          /* test_bench */
    "tk_kernel_set_tuning",
    "tk_kernel_configs",
    "tk_launch_tuned",
    "tk_kernel_tuned_config",      /* test_tuning */
    "tk_kernel_set_no_specialize", /* rt_nospec.c */
    "tk_source_overlay",           /* rt_overlay.c */
    "tk_source_search_path",       /* rt_overlay.c */
};

static bool is_covered(const char *name)
{
    for (size_t i = 0; i < sizeof covered / sizeof covered[0]; i++)
        if (strcmp(covered[i], name) == 0)
            return true;
    return false;
}

/* The header's rule (exports.cmake reads it the same way): a declaration
 * starts a line with its return type and names a tk_ function before the
 * first '('; static inline helpers and typedefs are not functions. */
static void test_header_covered(void)
{
    FILE *f = fopen(TK_SOURCE_DIR "/include/tk/tk.h", "r");
    CHECK(f != NULL);
    if (!f)
        return;
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        char *paren = strchr(line, '(');
        if (!paren || !(isalpha((unsigned char)line[0]) || line[0] == '_') ||
            !strncmp(line, "static", 6) || !strncmp(line, "typedef", 7))
            continue;
        char *end = paren;
        while (end > line && end[-1] == ' ')
            end--;
        char *start = end;
        while (start > line && (isalnum((unsigned char)start[-1]) || start[-1] == '_'))
            start--;
        if (end - start < 4 || strncmp(start, "tk_", 3) != 0 ||
            (start > line && start[-1] != ' ' && start[-1] != '*'))
            continue;
        *end = 0;
        found++;
        if (!is_covered(start)) {
            fprintf(stderr, "tk.h declares %s, which rt_api_null.c does not cover\n", start);
            failures++;
        }
    }
    fclose(f);
    CHECK(found == (int)(sizeof covered / sizeof covered[0]));
}

int main(void)
{
    setenv("TK_INTERPRET", "1", 1);
    setenv("TK_CACHE_DISABLE", "1", 1);
    test_header_covered();
    test_plain();
    test_compile_pointers();
    test_compile_values();
    test_compile_last_error();
    test_compile_ir();
    test_context();
    CHECK_OK(tk_alloc(ctx, N * sizeof(float), &dx));
    CHECK_OK(tk_alloc(ctx, N * sizeof(float), &dout));
    test_memory();
    test_modules();
    test_launch();
    test_bench();
    test_tuning();
    check_twice();
    tk_module_destroy(mod);
    CHECK_OK(tk_free(ctx, dx));
    CHECK_OK(tk_free(ctx, dout));
    tk_context_destroy(ctx);
    return failures != 0;
}
