/* rt_tune_reset.c: reset_to_zero and restore_value with the fake timer on
 * the interpreter. An in-place kernel (x += 1) and an accumulating one
 * (acc += x) are tuned over three configs, each run twice: afterwards x has
 * moved by one launch only and acc holds one launch's sum; a cached launch
 * resets nothing; a size callback limits what is reset; a name that is no
 * pointer argument is an error naming it; a size callback that claims more
 * than the buffer holds is an error, not a write past it. As Triton's
 * autotuner zeroes the reset_to_zero buffers once whenever it picks a
 * config for a new key, so does tk when the choice comes from the disk
 * cache or from the interpreter, which times nothing; a kernel of one
 * config is not tuned, and resets nothing, as in Triton. */
#include "rt_test.h"

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "@triton.autotune(configs=[triton.Config({'BLOCK': 32}), triton.Config({'BLOCK': 64}),\n"
    "                          triton.Config({'BLOCK': 128})], key=['n'],\n"
    "                 reset_to_zero=['acc_ptr'], restore_value=['x_ptr'])\n"
    "@triton.jit\n"
    "def bump(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    x = tl.load(x_ptr + offs, mask=m, other=0.0)\n"
    "    tl.store(x_ptr + offs, x + 1, mask=m)\n"
    "    tl.atomic_add(acc_ptr + offs, x, mask=m)\n"
    "@triton.autotune(configs=[triton.Config({'BLOCK': 32}), triton.Config({'BLOCK': 64})],\n"
    "                 key=['n'], restore_value=['n'])\n"
    "@triton.jit\n"
    "def scalar(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(x_ptr + offs, 1.0, mask=offs < n)\n"
    "@triton.autotune(configs=[triton.Config({'BLOCK': 32})], key=['n'],\n"
    "                 reset_to_zero=['acc_ptr'], restore_value=['x_ptr'])\n"
    "@triton.jit\n"
    "def one(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    x = tl.load(x_ptr + offs, mask=m, other=0.0)\n"
    "    tl.store(x_ptr + offs, x + 1, mask=m)\n"
    "    tl.atomic_add(acc_ptr + offs, x, mask=m)\n";

enum { N = 200, LIMIT = 120 };
static tk_context *ctx;
static void *dx, *dacc;
static int timed;

static double fake_timer(tk_kernel *k, int index, const tk_bench_options *plan)
{
    (void)k, (void)plan;
    timed++;
    return index == 1 ? 1.0 : 2.0;
}

/* x[i] = i, and acc all `acc0`. */
static void fill_with(float acc0)
{
    float x[N], acc[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i, acc[i] = acc0;
    CHECK_OK(tk_copy_to(ctx, dx, x, sizeof x));
    CHECK_OK(tk_copy_to(ctx, dacc, acc, sizeof acc));
}

static void fill(void) { fill_with(0); }

/* x[i] == i + dx_moved and acc[i] == acc_factor * i + acc_add for i < upto. */
static bool buffers_are(float x_moved, float acc_factor, float acc_add, int from, int upto)
{
    float x[N], acc[N];
    if (tk_copy_from(ctx, x, dx, sizeof x) != TK_OK || tk_copy_from(ctx, acc, dacc, sizeof acc))
        return false;
    for (int i = from; i < upto; i++)
        if (x[i] != (float)i + x_moved || acc[i] != acc_factor * (float)i + acc_add) {
            fprintf(stderr, "at %d: x %g acc %g\n", i, (double)x[i], (double)acc[i]);
            return false;
        }
    return true;
}

static tk_kernel *load(tk_module **m, const char *name)
{
    tk_kernel *k = NULL;
    CHECK_OK(tk_module_load_string(ctx, "bump.tk", source, m));
    CHECK_OK(tk_module_kernel(*m, name, &k));
    return k;
}

static tk_status launch(tk_kernel *k)
{
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dacc, TK_F32), tk_i32(N)};
    return tk_launch(k, (tk_grid){8, 1, 1}, args, 3, NULL);
}

static void test_reset_and_restore(void)
{
    fill();
    tk_module *m;
    tk_kernel *k = load(&m, "bump");
    timed = 0;
    CHECK_OK(launch(k));
    CHECK(timed == 3);
    /* six timed runs, then the launch: x moved once, acc holds one sum of x */
    CHECK(buffers_are(1, 1, 0, 0, N));
    /* the key is tuned: nothing is reset or restored */
    CHECK_OK(launch(k));
    CHECK(timed == 3);
    CHECK(buffers_are(2, 2, 1, 0, N));
    tk_module_destroy(m);
}

static tk_status launch_n(tk_kernel *k, int n)
{
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dacc, TK_F32), tk_i32(n)};
    return tk_launch(k, (tk_grid){8, 1, 1}, args, 3, NULL);
}

/* The disk cache gives the choice to a second module: nothing is timed,
 * and acc is zeroed once before the launch, as if it had been tuned (a
 * key of its own: the test above tuned n = N). */
static void test_disk_choice_resets(void)
{
    enum { n = N - 4 };
    tk_module *m;
    tk_kernel *k = load(&m, "bump");
    timed = 0;
    fill_with(5);
    CHECK_OK(launch_n(k, n));
    CHECK(timed == 3);
    CHECK(buffers_are(1, 1, 0, 0, n) && buffers_are(0, 0, 0, n, N));
    tk_module_destroy(m);
    k = load(&m, "bump");
    fill_with(5);
    CHECK_OK(launch_n(k, n));
    CHECK(timed == 3);
    tk_tune_choice c;
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dacc, TK_F32), tk_i32(n)};
    CHECK_OK(tk_kernel_tuned_config(k, args, 3, NULL, &c));
    CHECK(c.from_disk == 1 && c.index == 1);
    CHECK(buffers_are(1, 1, 0, 0, n) && buffers_are(0, 0, 0, n, N));
    CHECK_OK(launch_n(k, n)); /* a known key: nothing is reset */
    CHECK(buffers_are(2, 2, 1, 0, n));
    tk_module_destroy(m);
}

/* Without a timer the interpreter runs the first config untimed; acc is
 * zeroed before that launch all the same, and only before the first. */
static void test_untimed_choice_resets(void)
{
    rt_tune_time_hook = NULL;
    tk_module *m;
    tk_kernel *k = load(&m, "bump");
    fill_with(5);
    CHECK_OK(launch(k));
    CHECK(buffers_are(1, 1, 0, 0, N));
    CHECK_OK(launch(k));
    CHECK(buffers_are(2, 2, 1, 0, N));
    tk_module_destroy(m);
    rt_tune_time_hook = fake_timer;
}

/* One config: no timing and no reset, as Triton's autotuner does nothing
 * for a single config. */
static void test_one_config_is_not_tuned(void)
{
    tk_module *m;
    tk_kernel *k = load(&m, "one");
    timed = 0;
    fill_with(5);
    CHECK_OK(launch(k));
    CHECK(timed == 0);
    CHECK(buffers_are(1, 1, 5, 0, N));
    tk_module_destroy(m);
}

static size_t first_floats(const char *name, const tk_arg *args, int nargs, void *user)
{
    (void)args, (void)nargs;
    *(int *)user += 1;
    return strcmp(name, "acc_ptr") == 0 ? LIMIT * sizeof(float) : N * sizeof(float);
}

/* With a size callback only the first LIMIT floats of acc are zeroed; the
 * rest sums every run (six timed runs and the launch, x restored each time). */
static void test_size_callback(void)
{
    fill();
    tk_module *m;
    tk_kernel *k = load(&m, "bump");
    int calls = 0;
    CHECK_OK(tk_kernel_set_tuning(
        k, &(tk_tune_options){.buffer_bytes = first_floats, .buffer_user = &calls}));
    timed = 0;
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dacc, TK_F32), tk_i32(N - 8)};
    CHECK_OK(tk_launch(k, (tk_grid){8, 1, 1}, args, 3, NULL));
    CHECK(timed == 3 && calls == 2);
    CHECK(buffers_are(1, 1, 0, 0, LIMIT));
    CHECK(buffers_are(1, 7, 0, LIMIT, N - 8));
    tk_module_destroy(m);
}

/* A size callback that claims more than the buffer holds: an error naming
 * the range, never a write past the buffer; the context goes on working. */
static size_t too_many(const char *name, const tk_arg *args, int nargs, void *user)
{
    (void)args, (void)nargs;
    const char *which = user;
    return strcmp(name, which) != 0     ? N * sizeof(float)
        : strcmp(which, "acc_ptr") == 0 ? (N + 1) * sizeof(float)
                                        : SIZE_MAX / 2;
}

static void test_size_too_big(void)
{
    const char *which[] = {"acc_ptr", "x_ptr"};
    for (int i = 0; i < 2; i++) {
        fill();
        tk_module *m;
        tk_kernel *k = load(&m, "bump");
        CHECK_OK(tk_kernel_set_tuning(
            k, &(tk_tune_options){.buffer_bytes = too_many, .buffer_user = (void *)which[i]}));
        tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dacc, TK_F32), tk_i32(N - 16 - 8 * i)};
        tk_status s = tk_launch(k, (tk_grid){8, 1, 1}, args, 3, NULL);
        CHECK(s == (i == 0 ? TK_ERR_INVALID : TK_ERR_NO_MEMORY));
        CHECK(strstr(tk_last_error(), i == 0 ? "is not inside a buffer" : "cannot allocate"));
        if (s == TK_OK)
            fprintf(stderr, "a reset of %s past its buffer was not refused\n", which[i]);
        tk_module_destroy(m);
    }
    fill(); /* the context still works */
    CHECK(buffers_are(0, 0, 0, 0, N));
}

static void test_not_a_buffer(void)
{
    tk_module *m;
    tk_kernel *k = load(&m, "scalar");
    timed = 0;
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_i32(N)};
    CHECK_FAILS(tk_launch(k, (tk_grid){8, 1, 1}, args, 2, NULL), TK_ERR_LAUNCH,
                "autotune restore_value names 'n', which is not a pointer argument");
    CHECK(timed == 0);
    tk_module_destroy(m);
}

int main(void)
{
    const char *dir = t_tempdir("tune-reset");
    char cache[600];
    snprintf(cache, sizeof cache, "%s", dir);
    setenv("TK_CACHE_DIR", cache, 1);
    unsetenv("TK_CACHE_DISABLE");
    rt_disk_reset();
    rt_tune_time_hook = fake_timer;
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    CHECK_OK(tk_alloc(ctx, N * sizeof(float), &dx));
    CHECK_OK(tk_alloc(ctx, N * sizeof(float), &dacc));

    test_reset_and_restore();
    test_disk_choice_resets();
    test_untimed_choice_resets();
    test_one_config_is_not_tuned();
    test_size_callback();
    test_not_a_buffer();
    test_size_too_big();

    tk_free(ctx, dx);
    tk_free(ctx, dacc);
    tk_context_destroy(ctx);
    t_rmdir(cache);
    if (failures)
        fprintf(stderr, "rt_tune_reset: %d checks failed\n", failures);
    else
        printf("rt_tune_reset: all checks passed\n");
    return failures ? 1 : 0;
}
