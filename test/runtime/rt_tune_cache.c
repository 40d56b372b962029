/* rt_tune_cache.c: the autotuner's disk cache where things go wrong, with
 * the fake timer on the interpreter (rt_tune.c covers the plain paths, a
 * flipped byte, a second process after the first and a changed key): a
 * truncated or empty entry, another key's entry under this key's name, two
 * processes tuning the same key at once, a changed source, and
 * TK_CACHE_DISABLE. Each case says whether tuning ran (timer calls). */
#include <sys/wait.h>

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
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3, mask=m)\n";

enum { N = 200 };
static tk_context *ctx;
static void *dx, *dout;
static int timed;
static char dir[600];

static double fake_timer(tk_kernel *k, int index, const tk_bench_options *plan)
{
    (void)k, (void)plan;
    timed++;
    return index == 1 ? 1.0 : 2.0;
}

static tk_kernel *load(tk_module **m, const char *src)
{
    tk_kernel *k = NULL;
    CHECK_OK(tk_module_load_string(ctx, "triple.tk", src, m));
    CHECK_OK(tk_module_kernel(*m, "triple", &k));
    return k;
}

/* Launches key n in a fresh module (as a new process would); how many
 * configs were timed, -1 on failure. */
static int tune_once(const char *src, int n)
{
    tk_module *m;
    tk_kernel *k = load(&m, src);
    timed = 0;
    tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(n)};
    tk_status s = tk_launch(k, (tk_grid){8, 1, 1}, args, 3, NULL);
    tk_tune_choice c;
    if (s == TK_OK)
        s = tk_kernel_tuned_config(k, args, 3, NULL, &c);
    tk_module_destroy(m);
    return s == TK_OK && c.index == 1 ? timed : -1;
}

/* The one entry file in the cache folder whose name is not `except`. */
static bool entry_path(const char *except, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tkc") && (!except || !strstr(except, e->d_name))) {
            snprintf(out, cap, "%s/%s", dir, e->d_name);
            found = true;
        }
    if (d)
        closedir(d);
    return found;
}

static void truncate_to(const char *path, long len)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (f) {
        CHECK(ftruncate(fileno(f), len) == 0);
        fclose(f);
    }
}

static void test_truncated_and_empty(void)
{
    CHECK(tune_once(source, 40) == 3);
    char path[1024];
    CHECK(entry_path(NULL, path, sizeof path));
    struct stat st;
    CHECK(stat(path, &st) == 0);
    RtStats s0, s1;
    rt_stats_get(&s0);
    truncate_to(path, (long)st.st_size - 3);
    CHECK(tune_once(source, 40) == 3); /* the cut entry is not trusted */
    truncate_to(path, 0);
    CHECK(tune_once(source, 40) == 3); /* nor an empty one */
    CHECK(tune_once(source, 40) == 0); /* the rewritten entry is */
    rt_stats_get(&s1);
    CHECK(s1.disk_rejects >= s0.disk_rejects + 1);
    t_rmdir(dir);
    CHECK(mkdir(dir, 0755) == 0);
}

/* Key 48's entry copied over key 64's file: its identity does not match. */
static void test_foreign_entry(void)
{
    char a[1024], b[1024];
    CHECK(tune_once(source, 48) == 3);
    CHECK(entry_path(NULL, a, sizeof a));
    CHECK(tune_once(source, 64) == 3);
    CHECK(entry_path(a, b, sizeof b));
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", a, b);
    CHECK(system(cmd) == 0);
    CHECK(tune_once(source, 64) == 3);
    CHECK(tune_once(source, 48) == 0);
    CHECK(tune_once(source, 64) == 0);
    t_rmdir(dir);
    CHECK(mkdir(dir, 0755) == 0);
}

/* Two processes tune the same key at the same moment: both write the entry
 * (atomically), no temp file stays, and a third process reads it. */
static void test_concurrent_processes(void)
{
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t pid[2];
    fflush(NULL);
    for (int i = 0; i < 2; i++) {
        pid[i] = fork();
        if (pid[i] == 0) {
            char c;
            close(go[1]);
            if (read(go[0], &c, 1) != 1)
                _exit(3);
            int t = tune_once(source, 96);
            /* usually both tune; one that starts late may read the other's entry */
            _exit((t == 3 || t == 0) && failures == 0 ? 0 : 1);
        }
    }
    close(go[0]);
    CHECK(write(go[1], "gg", 2) == 2); /* both start now */
    close(go[1]);
    for (int i = 0; i < 2; i++) {
        int status = 0;
        CHECK(pid[i] > 0 && waitpid(pid[i], &status, 0) == pid[i] && WIFEXITED(status) &&
              WEXITSTATUS(status) == 0);
    }
    CHECK(t_count_files(dir, ".tkc") == 1);
    CHECK(t_count_files(dir, "") == 1); /* no temp files */
    CHECK(tune_once(source, 96) == 0);
}

/* A changed source (a comment) is another identity: tuned again. */
static void test_changed_source(void)
{
    char changed[sizeof source + 32];
    snprintf(changed, sizeof changed, "# tuned again\n%s", source);
    CHECK(tune_once(source, 96) == 0);
    CHECK(tune_once(changed, 96) == 3);
    CHECK(tune_once(changed, 96) == 0);
}

/* With TK_CACHE_DISABLE=1 nothing is written or read: each module tunes. */
static void test_cache_disabled(void)
{
    int before = t_count_files(dir, ".tkc");
    setenv("TK_CACHE_DISABLE", "1", 1);
    rt_disk_reset();
    CHECK(tune_once(source, 160) == 3);
    CHECK(tune_once(source, 160) == 3);
    CHECK(tune_once(source, 96) == 3); /* the entry on disk is not read either */
    unsetenv("TK_CACHE_DISABLE");
    rt_disk_reset();
    CHECK(t_count_files(dir, ".tkc") == before);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s", t_tempdir("tune-cache"));
    setenv("TK_CACHE_DIR", dir, 1);
    unsetenv("TK_CACHE_DISABLE");
    unsetenv("TK_PRINT_AUTOTUNING");
    rt_disk_reset();
    rt_tune_time_hook = fake_timer;
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    CHECK_OK(tk_alloc(ctx, N * sizeof(float), &dx));
    CHECK_OK(tk_alloc(ctx, N * sizeof(float), &dout));

    test_truncated_and_empty();
    test_foreign_entry();
    test_concurrent_processes();
    test_changed_source();
    test_cache_disabled();

    tk_free(ctx, dx);
    tk_free(ctx, dout);
    tk_context_destroy(ctx);
    t_rmdir(dir);
    if (failures)
        fprintf(stderr, "rt_tune_cache: %d checks failed\n", failures);
    else
        printf("rt_tune_cache: all checks passed\n");
    return failures ? 1 : 0;
}
