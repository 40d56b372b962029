/* rt_tune.c: the autotuner without a GPU. On the interpreter it takes the
 * first config and says so. With a fake timer (rt_tune_time_hook) the whole
 * tuning path runs on the interpreter: every config compiled and timed, the
 * fastest kept; a repeated key does not tune; a changed key does; a second
 * process (fork) finds the choice on disk; corrupt entries are ignored;
 * changed configs invalidate old choices; pruning, host configs with a grid
 * callback, explicit constexprs bypassing the tuner, TK_PRINT_AUTOTUNING. */
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>

#include "rt_test.h"

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "@triton.autotune(configs=[triton.Config({'BLOCK': 32}, num_warps=1),\n"
    "                          triton.Config({'BLOCK': 64}, num_warps=2),\n"
    "                          triton.Config({'BLOCK': 128})], key=['n'])\n"
    "@triton.jit\n"
    "def triple(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3, mask=m)\n"
    "@triton.jit\n"
    "def plain(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1, mask=m)\n"
    "@triton.autotune(configs=[triton.Config({'BLOCK': 32}), triton.Config({'BLOCK': 64})],\n"
    "                 key=['n'], warmup=25, rep=100.0)\n"
    "@triton.jit\n"
    "def budgeted(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 5, mask=m)\n"
    "def _prune(configs, named_args, **kwargs):\n"
    "    return configs[-1:]\n"
    "@triton.autotune(configs=[triton.Config({'BLOCK': 32}), triton.Config({'BLOCK': 64})],\n"
    "                 key=['n'], prune_configs_by={'early_config_prune': _prune})\n"
    "@triton.jit\n"
    "def pruned(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 7, mask=m)\n"
    "@triton.autotune(configs=[triton.Config({'BLOCK': 32}), triton.Config({'BLOCK': 64}),\n"
    "                          triton.Config({'BLOCK': 128})], key=['n'])\n"
    "@triton.heuristics({'EVEN': lambda args: args['n'] % args['BLOCK'] == 0})\n"
    "@triton.jit\n"
    "def even(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * (2 if EVEN else 4), mask=m)\n"
    "@triton.autotune(configs=[triton.Config({}, num_warps=1), triton.Config({}, num_warps=2)],\n"
    "                 key=['n'])\n"
    "@triton.jit\n"
    "def warps(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 5, mask=m)\n";

enum { N = 200 };
static tk_context *ctx;
static void *dx, *dout;
static int timed[8];                 /* fake timer calls per config */
static double warm_ms[8], rep_ms[8]; /* the budget each config was given */
static const double fake_ms[] = {3.0, 1.0, 2.0, 0.5};

static double fake_timer(tk_kernel *k, int index, const tk_bench_options *plan)
{
    (void)k;
    timed[index]++;
    warm_ms[index] = plan->warmup_ms;
    rep_ms[index] = plan->rep_ms;
    return fake_ms[index];
}

static int timer_calls(void)
{
    int n = 0;
    for (int i = 0; i < 8; i++)
        n += timed[i];
    memset(timed, 0, sizeof timed);
    return n;
}

static tk_status launch_n(tk_kernel *k, int n)
{
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(n)};
    return tk_launch(k, (tk_grid){8, 1, 1}, args, 3, NULL);
}

static int choice_of(tk_kernel *k, int n, tk_tune_choice *c)
{
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(n)};
    return tk_kernel_tuned_config(k, args, 3, NULL, c) == TK_OK ? c->index : -1;
}

static bool output_is(float factor, float add, int n)
{
    float out[N];
    if (tk_copy_from(ctx, out, dout, sizeof out) != TK_OK)
        return false;
    for (int i = 0; i < n; i++)
        if (out[i] != (float)i * factor + add)
            return false;
    return true;
}

static tk_kernel *load(tk_module **m, const char *name)
{
    tk_kernel *k = NULL;
    CHECK_OK(tk_module_load_string(ctx, "triple.tk", source, m));
    CHECK_OK(tk_module_kernel(*m, name, &k));
    return k;
}

/* The interpreter runs the first config, untimed, with a note. */
static void test_interpreter(const char *dir)
{
    tk_module *m;
    tk_kernel *k = load(&m, "triple");
    t_stderr_begin(dir);
    CHECK_OK(launch_n(k, N));
    CHECK_OK(launch_n(k, N));
    const char *err = t_stderr_end();
    CHECK(strstr(err, "the interpreter does not time configs and runs config 0 {BLOCK=32"));
    CHECK(!strstr(strstr(err, "tk: note") + 1, "tk: note"));
    CHECK(output_is(3, 0, N));
    tk_tune_choice c;
    CHECK(choice_of(k, N, &c) == 0 && c.interpreted && !c.tuned_here && c.ms == 0);
    CHECK(c.config.ndefines == 1 && strcmp(c.config.defines[0].value, "32") == 0);
    CHECK_FAILS(
        tk_kernel_tuned_config(k, (tk_arg[]){tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(7)},
                               3, NULL, &c),
        TK_ERR_NOT_FOUND, "no tuned config for [n=7]");
    CHECK_FAILS(tk_launch(k, (tk_grid){8, 1, 1}, (tk_arg[]){tk_ptr(dx, TK_F32)}, 1, NULL),
                TK_ERR_LAUNCH, "takes 3 runtime arguments");
    CHECK(timer_calls() == 0);
    tk_module_destroy(m);
}

/* Tuning with the fake timer, the memory and disk caches, and a changed key. */
static void test_tuning(const char *dir)
{
    rt_tune_time_hook = fake_timer;
    tk_module *m;
    tk_kernel *k = load(&m, "triple");
    RtStats s0, s1;
    rt_stats_get(&s0);
    setenv("TK_PRINT_AUTOTUNING", "1", 1);
    t_stderr_begin(dir);
    CHECK_OK(launch_n(k, N));
    const char *err = t_stderr_end();
    unsetenv("TK_PRINT_AUTOTUNING");
    CHECK(strstr(err,
                 "tk: autotune triple [n=200]: config 0 {BLOCK=32, num_warps=1, "
                 "num_stages=3}: 3.0000 ms"));
    CHECK(strstr(err, "chose config 1 (1.0000 ms)"));
    CHECK(timed[0] == 1 && timed[1] == 1 && timed[2] == 1 && timer_calls() == 3);
    /* no warmup= or rep=: a short budget a config, the first warming the clocks */
    CHECK(warm_ms[0] == 10 && warm_ms[1] == 1 && warm_ms[2] == 1);
    CHECK(rep_ms[0] == 5 && rep_ms[1] == 5 && rep_ms[2] == 5);
    CHECK(output_is(3, 0, N));
    tk_tune_choice c;
    CHECK(choice_of(k, N, &c) == 1 && c.tuned_here && !c.from_disk && c.ms == 1.0);
    CHECK(c.config.num_warps == 2);
    rt_stats_get(&s1);
    CHECK(s1.tunings == s0.tunings + 1 && s1.disk_stores == s0.disk_stores + 1);
    /* the same key again: no tuning */
    CHECK_OK(launch_n(k, N));
    CHECK(timer_calls() == 0);
    /* a changed key: tuned again */
    CHECK_OK(launch_n(k, N - 8));
    CHECK(timer_calls() == 3 && output_is(3, 0, N - 8));
    CHECK(t_count_files(dir, ".tkc") == 2);
    tk_module_destroy(m);

    /* a fresh module (as a new process would) finds both on disk */
    k = load(&m, "triple");
    rt_stats_get(&s0);
    CHECK_OK(launch_n(k, N));
    CHECK_OK(launch_n(k, N - 8));
    CHECK(timer_calls() == 0);
    CHECK(choice_of(k, N, &c) == 1 && c.from_disk && !c.tuned_here && c.ms == 1.0);
    rt_stats_get(&s1);
    CHECK(s1.tune_disk_hits == s0.tune_disk_hits + 2 && s1.tunings == s0.tunings);
    tk_module_destroy(m);
}

/* The decorator's warmup= and rep= are each config's budget, as in Triton;
 * tk_kernel_set_tuning's replace them (test/sema/autotune_budget.tk: bad ones). */
static void test_budgets(void)
{
    tk_module *m;
    tk_kernel *k = load(&m, "budgeted");
    CHECK_OK(launch_n(k, N));
    CHECK(timer_calls() == 2 && output_is(5, 0, N));
    CHECK(warm_ms[0] == 25 && warm_ms[1] == 25 && rep_ms[0] == 100 && rep_ms[1] == 100);
    tk_module_destroy(m);
    k = load(&m, "triple");
    CHECK_OK(tk_kernel_set_tuning(k, &(tk_tune_options){.warmup_ms = 3, .rep_ms = 7}));
    CHECK_OK(launch_n(k, N - 16));
    CHECK(timer_calls() == 3 && warm_ms[0] == 3 && warm_ms[2] == 3 && rep_ms[1] == 7);
    tk_module_destroy(m);
}

/* A second process tunes a key; this one then finds it on disk. */
static void test_two_processes(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        tk_module *m;
        tk_kernel *k = load(&m, "triple");
        int ok = launch_n(k, 48) == TK_OK;
        int calls = timer_calls();
        if (!ok || calls != 3)
            fprintf(stderr, "child: %s, %d timed\n", tk_last_error(), calls);
        ok = ok && calls == 3;
        tk_module_destroy(m);
        _exit(ok && failures == 0 ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    tk_module *m;
    tk_kernel *k = load(&m, "triple");
    tk_tune_choice c;
    CHECK_OK(launch_n(k, 48));
    CHECK(timer_calls() == 0 && choice_of(k, 48, &c) == 1 && c.from_disk);
    CHECK(output_is(3, 0, 48));
    tk_module_destroy(m);
}

/* Flips one byte in the middle of every entry: all are ignored, and tuning runs again. */
static void test_corrupt(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        if (!strstr(e->d_name, ".tkc"))
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        FILE *f = fopen(p, "r+b");
        if (!f)
            continue;
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, len / 2, SEEK_SET);
        int b = fgetc(f);
        fseek(f, len / 2, SEEK_SET);
        fputc(b ^ 0x5a, f);
        fclose(f);
        n++;
    }
    if (d)
        closedir(d);
    CHECK(n == 3);
    RtStats s0, s1;
    rt_stats_get(&s0);
    tk_module *m;
    tk_kernel *k = load(&m, "triple");
    tk_tune_choice c;
    CHECK_OK(launch_n(k, N));
    CHECK(timer_calls() == 3 && choice_of(k, N, &c) == 1 && c.tuned_here);
    rt_stats_get(&s1);
    CHECK(s1.disk_rejects > s0.disk_rejects);
    CHECK(output_is(3, 0, N));
    tk_module_destroy(m);
}

static void keep_last(const tk_config *configs, int n, const tk_arg *args, int nargs, int *keep,
                      void *user)
{
    (void)configs, (void)args, (void)nargs;
    *(int *)user += 1;
    for (int i = 0; i < n - 1; i++)
        keep[i] = 0;
}

static void keep_none(const tk_config *configs, int n, const tk_arg *args, int nargs, int *keep,
                      void *user)
{
    (void)configs, (void)args, (void)nargs, (void)user;
    for (int i = 0; i < n; i++)
        keep[i] = 0;
}

static int grid_calls;
static tk_grid grid_of(const tk_config *cfg, const tk_arg *args, int nargs, void *user)
{
    (void)nargs, (void)user;
    grid_calls++;
    unsigned block = (unsigned)atoi(cfg->defines[0].value);
    return (tk_grid){((unsigned)args[2].v.i + block - 1) / block, 1, 1};
}

/* Host configs on a kernel without @triton.autotune, a grid callback,
 * pruning, changed configs, and the explicit constexpr bypass. */
static void test_host_configs(void)
{
    tk_module *m;
    tk_kernel *k = load(&m, "plain");
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N)};
    CHECK_FAILS(tk_launch_tuned(k, grid_of, NULL, args, 3, NULL), TK_ERR_INVALID,
                "no autotune configs");
    CHECK_FAILS(tk_kernel_set_tuning(k, &(tk_tune_options){0}), TK_ERR_INVALID,
                "has no @triton.autotune configs");
    tk_define d[4][1] = {
        {{"BLOCK", "16"}}, {{"BLOCK", "32"}}, {{"BLOCK", "64"}}, {{"BLOCK", "128"}}};
    tk_config cf[4] = {{d[0], 1, 1, 0, 0, 0, {0}},
                       {d[1], 1, 2, 0, 0, 0, {0}},
                       {d[2], 1, 0, 0, 0, 0, {0}},
                       {d[3], 1, 4, 2, 0, 0, {0}}};
    /* a config whose define count is negative, or has no defines array */
    tk_config bad[2][1] = {{{d[0], -1, 1, 0, 0, 0, {0}}}, {{NULL, 2, 1, 0, 0, 0, {0}}}};
    for (int i = 0; i < 2; i++)
        CHECK_FAILS(tk_kernel_set_tuning(k, &(tk_tune_options){.configs = bad[i], .nconfigs = 1}),
                    TK_ERR_INVALID, "configs[0].");
    const char *key[] = {"n"};
    int prunes = 0;
    CHECK_OK(tk_kernel_set_tuning(k,
                                  &(tk_tune_options){.configs = cf,
                                                     .nconfigs = 4,
                                                     .key = key,
                                                     .nkey = 1,
                                                     .prune = keep_last,
                                                     .prune_user = &prunes}));
    grid_calls = 0;
    CHECK_OK(tk_launch_tuned(k, grid_of, NULL, args, 3, NULL));
    CHECK(prunes == 1 && timed[3] == 1 && timer_calls() == 1 && grid_calls >= 1);
    CHECK(output_is(1, 1, N));
    tk_tune_choice c;
    CHECK(choice_of(k, N, &c) == 3 && c.config.num_warps == 4 && c.config.num_stages == 2);
    CHECK_FAILS(tk_kernel_set_tuning(k, &(tk_tune_options){.prune = keep_none}), TK_ERR_INVALID,
                "before its first tuned launch");
    /* explicit constexprs run as given, untuned */
    CHECK_OK(tk_memset(ctx, dout, 0, N * sizeof(float)));
    tk_arg by_hand[] = {tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N),
                        tk_const("BLOCK", 256)};
    CHECK_OK(tk_launch(k, (tk_grid){1, 1, 1}, by_hand, 4, NULL));
    CHECK(timer_calls() == 0 && output_is(1, 1, N));
    tk_module_destroy(m);

    /* changed configs (three of the four): the disk entry no longer applies */
    k = load(&m, "plain");
    CHECK_OK(tk_kernel_set_tuning(
        k, &(tk_tune_options){.configs = cf, .nconfigs = 3, .key = key, .nkey = 1}));
    CHECK_OK(tk_launch_tuned(k, grid_of, NULL, args, 3, NULL));
    CHECK(timer_calls() == 3 && choice_of(k, N, &c) == 1);
    tk_module_destroy(m);

    k = load(&m, "plain");
    CHECK_OK(tk_kernel_set_tuning(
        k, &(tk_tune_options){.configs = cf, .nconfigs = 2, .prune = keep_none}));
    CHECK_FAILS(tk_launch_tuned(k, grid_of, NULL, args, 3, NULL), TK_ERR_INVALID, "kept no config");
    const char *bad_key[] = {"size"};
    tk_module_destroy(m);
    k = load(&m, "plain");
    CHECK_OK(tk_kernel_set_tuning(
        k, &(tk_tune_options){.configs = cf, .nconfigs = 2, .key = bad_key, .nkey = 1}));
    CHECK_FAILS(tk_launch_tuned(k, grid_of, NULL, args, 3, NULL), TK_ERR_INVALID,
                "autotune key 'size' is not a parameter");
    tk_module_destroy(m);
}

/* prune_configs_by is Python: a launch that would tune refuses, naming
 * it; one with the constexprs runs untuned; a host prune callback stands
 * for it. */
static void test_python_prune(void)
{
    rt_tune_time_hook = fake_timer;
    timer_calls();
    tk_module *m;
    tk_kernel *k = load(&m, "pruned");
    CHECK_FAILS(launch_n(k, N), TK_ERR_LAUNCH,
                "kernel 'pruned': its @triton.autotune has prune_configs_by, Python that tk does "
                "not run, so tk cannot tune it");
    CHECK(timer_calls() == 0);
    tk_arg by_hand[] = {tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N),
                        tk_const("BLOCK", 256)};
    CHECK_OK(tk_launch(k, (tk_grid){1, 1, 1}, by_hand, 4, NULL));
    CHECK(timer_calls() == 0 && output_is(7, 0, N));
    tk_module_destroy(m);
    k = load(&m, "pruned"); /* settings change only before a tuned launch */
    int prunes = 0;
    CHECK_OK(
        tk_kernel_set_tuning(k, &(tk_tune_options){.prune = keep_last, .prune_user = &prunes}));
    CHECK_OK(tk_memset(ctx, dout, 0, N * sizeof(float)));
    CHECK_OK(launch_n(k, N));
    tk_tune_choice c;
    CHECK(prunes == 1 && timer_calls() == 1 && choice_of(k, N, &c) == 1 && output_is(7, 0, N));
    tk_module_destroy(m);
    rt_tune_time_hook = NULL;
}

/* EVEN for a config and launch: n % BLOCK == 0 (Triton's heuristics
 * under autotune see each config's values). */
static int even_calls;
static int even_defines(const tk_config *cfg, const tk_arg *args, int nargs, tk_define *out,
                        int cap, void *user)
{
    (void)nargs;
    even_calls++;
    if (cap < 1 || strcmp((const char *)user, "fail") == 0)
        return -1;
    long block = atol(cfg->defines[0].value);
    out[0] = (tk_define){"EVEN", args[2].v.i % block == 0 ? "True" : "False"};
    return 1;
}

/* Constexprs computed per config (config_defines): each config compiled and
 * timed with its own, the launch with the chosen config's; a launch that
 * gives the config's constexprs runs untuned without them; a failing
 * callback stops the launch. */
static void test_config_defines(void)
{
    rt_tune_time_hook = fake_timer;
    timer_calls();
    tk_module *m;
    tk_kernel *k = load(&m, "even");
    CHECK_OK(tk_kernel_set_tuning(
        k, &(tk_tune_options){.config_defines = even_defines, .config_defines_user = "ok"}));
    even_calls = 0;
    CHECK_OK(launch_n(k, 192)); /* BLOCK 64 (fastest) divides 192: EVEN, so x2 */
    tk_tune_choice c;
    CHECK(timer_calls() == 3 && choice_of(k, 192, &c) == 1 && even_calls >= 4);
    CHECK(output_is(2, 0, 192));
    CHECK_OK(launch_n(k, 200)); /* 200 % 64 != 0: x4 */
    CHECK(timer_calls() == 3 && choice_of(k, 200, &c) == 1 && output_is(4, 0, 200));
    tk_arg by_hand[] = {tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N), tk_const("BLOCK", 256),
                        tk_const_text("EVEN", "True")};
    even_calls = 0;
    CHECK_OK(tk_launch(k, (tk_grid){1, 1, 1}, by_hand, 5, NULL));
    CHECK(even_calls == 0 && timer_calls() == 0 && output_is(2, 0, N));
    tk_module_destroy(m);

    k = load(&m, "even");
    CHECK_OK(tk_kernel_set_tuning(
        k, &(tk_tune_options){.config_defines = even_defines, .config_defines_user = "fail"}));
    CHECK_FAILS(launch_n(k, 96), TK_ERR_LAUNCH, "config_defines");
    tk_module_destroy(m);
    rt_tune_time_hook = NULL;
}

/* The host's hook around a config's runs (Triton's Config.pre_hook and
 * the autotune decorator's hooks): before and after each timed run, once
 * when a config is chosen, then before the chosen config's launch, and only
 * that at a later launch of the key; a failing hook stops the launch. */
static char hook_log[256];
static int hook_fail_at = -1;
static int log_hook(const tk_config *cfg, int stage, const tk_arg *args, int nargs, void *user)
{
    const tk_config *base = user;
    size_t n = strlen(hook_log);
    if (nargs != 3 || args[2].kind != TK_ARG_SCALAR || n + 3 > sizeof hook_log)
        return -1;
    snprintf(hook_log + n, sizeof hook_log - n, "%c%d", "balc"[stage], (int)(cfg - base));
    return (int)n / 2 == hook_fail_at ? -1 : 0;
}

/* The "even" kernel, its hook logging each stage. */
static tk_kernel *load_logged(tk_module **m)
{
    tk_kernel *k = load(m, "even");
    const tk_config *base;
    int n;
    CHECK_OK(tk_kernel_configs(k, &base, &n));
    CHECK_OK(tk_kernel_set_tuning(k,
                                  &(tk_tune_options){.hook = log_hook,
                                                     .hook_user = (void *)base,
                                                     .config_defines = even_defines,
                                                     .config_defines_user = "ok"}));
    return k;
}

static void test_hooks(void)
{
    rt_tune_time_hook = fake_timer;
    timer_calls();
    tk_module *m;
    tk_kernel *k = load_logged(&m);
    hook_log[0] = 0;
    CHECK_OK(launch_n(k, 128)); /* config 1 is the fastest */
    CHECK(strcmp(hook_log, "b0a0b0a0b1a1b1a1b2a2b2a2c1l1") == 0);
    CHECK(output_is(2, 0, 128));
    hook_log[0] = 0;
    CHECK_OK(launch_n(k, 128));
    CHECK(strcmp(hook_log, "l1") == 0);
    tk_module_destroy(m);

    k = load_logged(&m);
    rt_tune_time_hook = NULL; /* the interpreter's choice, untimed */
    hook_log[0] = 0;
    CHECK_OK(launch_n(k, 32));
    CHECK(strcmp(hook_log, "c0l0") == 0);
    rt_tune_time_hook = fake_timer;
    hook_log[0] = 0;
    hook_fail_at = 0;
    CHECK_FAILS(launch_n(k, 64), TK_ERR_LAUNCH, "hook");
    hook_fail_at = -1;
    tk_module_destroy(m);
    rt_tune_time_hook = NULL;
}

/* Configs that set no constexpr (num_warps alone) tune every launch,
 * unless the launch asks for its options as given (a compiled kernel's
 * launch): then no hook runs and nothing is timed. */
static int count_hook(const tk_config *cfg, int stage, const tk_arg *args, int nargs, void *user)
{
    (void)cfg, (void)stage, (void)args, (void)nargs;
    ++*(int *)user;
    return 0;
}

static void test_as_given(void)
{
    int hooks = 0;
    tk_module *m;
    tk_kernel *k = load(&m, "warps");
    CHECK_OK(tk_kernel_set_tuning(k, &(tk_tune_options){.hook = count_hook, .hook_user = &hooks}));
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N), tk_const("BLOCK", 32)};
    tk_launch_options o = {.num_warps = 2, .as_given = 1};
    CHECK_OK(tk_launch(k, (tk_grid){7, 1, 1}, args, 4, &o));
    CHECK(hooks == 0 && output_is(5, 0, N));
    o.as_given = 0;
    CHECK_OK(tk_launch(k, (tk_grid){7, 1, 1}, args, 4, &o));
    CHECK(hooks > 0 && output_is(5, 0, N));
    tk_module_destroy(m);
}

/* The configs of a new key compile at the same time: each build waits in
 * the build hook until all three are in it (or gives up after 5 s). */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_in, gate_peak;

static void gate(tk_kernel *k)
{
    (void)k;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&gate_lock);
    gate_in++;
    if (gate_in > gate_peak)
        gate_peak = gate_in;
    pthread_cond_broadcast(&gate_cond);
    while (gate_peak < 3 && pthread_cond_timedwait(&gate_cond, &gate_lock, &until) == 0)
        ;
    gate_in--;
    pthread_mutex_unlock(&gate_lock);
}

static void test_parallel_compiles(void)
{
    tk_module *m;
    tk_kernel *k = load(&m, "triple");
    gate_peak = 0;
    rt_build_hook = gate;
    CHECK_OK(launch_n(k, 77));
    rt_build_hook = NULL;
    CHECK(gate_peak == 3);
    CHECK(timer_calls() == 3 && output_is(3, 0, 77));
    tk_module_destroy(m);
}

int main(void)
{
    const char *dir = t_tempdir("tune");
    char cache[600];
    snprintf(cache, sizeof cache, "%s", dir);
    setenv("TK_CACHE_DIR", cache, 1);
    unsetenv("TK_CACHE_DISABLE");
    unsetenv("TK_PRINT_AUTOTUNING");
    rt_disk_reset();
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    CHECK_OK(tk_alloc(ctx, N * sizeof(float), &dx));
    CHECK_OK(tk_alloc(ctx, N * sizeof(float), &dout));
    float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i;
    CHECK_OK(tk_copy_to(ctx, dx, x, sizeof x));

    test_interpreter(cache);
    test_tuning(cache);
    test_two_processes();
    test_corrupt(cache);
    test_parallel_compiles();
    test_host_configs();
    test_budgets();
    test_python_prune();
    test_config_defines();
    test_hooks();
    test_as_given();

    tk_free(ctx, dx);
    tk_free(ctx, dout);
    tk_context_destroy(ctx);
    t_rmdir(cache);
    if (failures)
        fprintf(stderr, "rt_tune: %d checks failed\n", failures);
    else
        printf("rt_tune: all checks passed\n");
    return failures ? 1 : 0;
}
