/* rt_jitcache.c: the JIT's disk cache end to end without a GPU: the first
 * request compiles and stores PTX + metadata, the next one reads it back;
 * TK_ALWAYS_COMPILE recompiles; a corrupted or truncated entry is refused
 * and rebuilt; two processes compiling the same kernel at once both succeed
 * and leave one good entry; TK_DUMP_DIR receives .ir, .ll and .ptx; a
 * compile's LLVM time is split into its steps (TK_VERBOSE), libdevice's
 * link among them when the kernel calls it. */
#include "rt_test.h"

#include <sys/wait.h>

static const char source[] = "import triton\n"
                             "import triton.language as tl\n"
                             "\n"
                             "@triton.jit\n"
                             "def scale_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                             "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                             "    m = offs < n\n"
                             "    x = tl.load(x_ptr + offs, mask=m)\n"
                             "    y = tl.load(y_ptr + offs, mask=m)\n"
                             "    tl.store(out_ptr + offs, 2 * x + y, mask=m)\n";

static _Alignas(256) float bufs[3][64];

typedef struct Fixture {
    tk_context *ctx;
    tk_module *mod;
    tk_kernel *k;
} Fixture;

static bool setup(Fixture *f)
{
    memset(f, 0, sizeof *f);
    if (tk_context_create(&f->ctx, &(tk_context_options){.interpret = 1}) != TK_OK ||
        tk_module_load_string(f->ctx, "jit.tk", source, &f->mod) != TK_OK ||
        tk_module_kernel(f->mod, "scale_add", &f->k) != TK_OK) {
        fprintf(stderr, "setup failed: %s\n", tk_last_error());
        return false;
    }
    return true;
}

static void teardown(Fixture *f)
{
    tk_module_destroy(f->mod);
    tk_context_destroy(f->ctx);
}

/* One request for the kernel's text with BLOCK = block, as a GPU launch makes. */
static tk_status request(Fixture *f, int block, RtJitText *t)
{
    tk_arg args[] = {tk_ptr(bufs[0], TK_F32), tk_ptr(bufs[1], TK_F32), tk_ptr(bufs[2], TK_F32),
                     tk_i32(64), tk_const("BLOCK", block)};
    RtLaunchArgs la;
    tk_status s = rt_launch_args(f->k, args, 5, NULL, &la);
    if (s != TK_OK)
        return s;
    pthread_mutex_lock(&f->mod->lock);
    s = rt_jit_text(f->k, &la, "sm_80", true, t);
    pthread_mutex_unlock(&f->mod->lock);
    return s;
}

static void flip_byte(const char *path, long at)
{
    FILE *fp = fopen(path, "r+b");
    CHECK(fp != NULL);
    if (!fp)
        return;
    fseek(fp, at, SEEK_SET);
    int c = fgetc(fp);
    fseek(fp, at, SEEK_SET);
    fputc(c ^ 0x21, fp);
    fclose(fp);
}

static void test_round_trip(Fixture *f, const char *dir)
{
    RtJitText t;
    RtStats s0, s1;
    rt_stats_get(&s0);
    CHECK_OK(request(f, 32, &t));
    rt_stats_get(&s1);
    CHECK(!t.from_disk && s1.compiles == s0.compiles + 1 && s1.disk_stores == s0.disk_stores + 1);
    CHECK(t.ptx && strstr(t.ptx, ".entry scale_add") && t.ptx[t.ptx_len - 1] == 0);
    CHECK(t.meta.nparams == 4 && t.meta.num_warps == 4);
    for (uint32_t i = 0; i < t.meta.nparams; i++)
        CHECK(t.meta.param_of[i] == (int)i);
    /* TK_VERBOSE's split of the LLVM time: the target's steps are part of
     * it, and a kernel that calls no libdevice function links none */
    const CgTimes *c = &t.llvm_steps;
    CHECK(c->opt_ms > 0 && c->emit_ms > 0 && c->link_ms == 0);
    CHECK(c->opt_ms + c->emit_ms <= t.llvm_ms && t.spec_ms > 0);
    char *first = strdup(t.ptx ? t.ptx : "");
    char path[1024];
    rt_disk_path(dir, t.digest, path, sizeof path);
    rt_jit_text_free(&t);
    CHECK(t_count_files(dir, ".tkc") == 1);

    /* Warm: from disk, the same text, no compile. */
    CHECK_OK(request(f, 32, &t));
    rt_stats_get(&s0);
    CHECK(t.from_disk && s0.compiles == s1.compiles && s0.disk_hits == s1.disk_hits + 1);
    CHECK(t.ptx && strcmp(t.ptx, first) == 0);
    CHECK(t.llvm_ms == 0 && t.llvm_steps.opt_ms == 0 && t.llvm_steps.emit_ms == 0);
    rt_jit_text_free(&t);

    /* TK_ALWAYS_COMPILE ignores the entry. */
    setenv("TK_ALWAYS_COMPILE", "1", 1);
    CHECK_OK(request(f, 32, &t));
    unsetenv("TK_ALWAYS_COMPILE");
    rt_stats_get(&s1);
    CHECK(!t.from_disk && s1.compiles == s0.compiles + 1);
    rt_jit_text_free(&t);

    /* Corrupt (a byte inside the PTX), then truncated: refused, rebuilt, healed. */
    for (int round = 0; round < 2; round++) {
        struct stat st;
        CHECK(stat(path, &st) == 0);
        if (round == 0)
            flip_byte(path, (long)st.st_size / 2);
        else
            CHECK(truncate(path, st.st_size - 7) == 0);
        rt_stats_get(&s0);
        CHECK_OK(request(f, 32, &t));
        rt_stats_get(&s1);
        CHECK(!t.from_disk && s1.disk_rejects == s0.disk_rejects + 1 &&
              s1.compiles == s0.compiles + 1);
        CHECK(t.ptx && strcmp(t.ptx, first) == 0);
        rt_jit_text_free(&t);
        CHECK_OK(request(f, 32, &t));
        CHECK(t.from_disk);
        rt_jit_text_free(&t);
    }

    /* Another constexpr value: another entry. */
    CHECK_OK(request(f, 64, &t));
    CHECK(!t.from_disk);
    rt_jit_text_free(&t);
    CHECK(t_count_files(dir, ".tkc") == 2);
    free(first);
}

/* Two processes, the same kernel, an empty cache, at the same moment. */
static void test_two_processes(const char *dir)
{
    pid_t kids[2];
    for (int p = 0; p < 2; p++) {
        kids[p] = fork();
        if (kids[p] == 0) {
            Fixture f;
            RtJitText t;
            bool ok = setup(&f) && request(&f, 128, &t) == TK_OK && t.ptx &&
                strstr(t.ptx, ".entry scale_add");
            _exit(ok ? 0 : 1);
        }
    }
    for (int p = 0; p < 2; p++) {
        int status = 0;
        CHECK(waitpid(kids[p], &status, 0) == kids[p]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    CHECK(t_count_files(dir, ".tkc") == 1);
    CHECK(t_count_files(dir, "") == 1); /* no temp files either */
    Fixture f;
    RtJitText t;
    if (setup(&f)) {
        CHECK_OK(request(&f, 128, &t));
        CHECK(t.from_disk);
        rt_jit_text_free(&t);
        teardown(&f);
    }
}

/* A kernel that calls libdevice (erf) has its link timed apart; where no
 * libdevice is installed the compile says so, and there is nothing to time. */
static void test_libdevice_steps(Fixture *f)
{
    static const char erf_source[] = "import triton\n"
                                     "import triton.language as tl\n"
                                     "\n"
                                     "@triton.jit\n"
                                     "def erf_rows(x_ptr, n, BLOCK: tl.constexpr):\n"
                                     "    offs = tl.arange(0, BLOCK)\n"
                                     "    m = offs < n\n"
                                     "    x = tl.load(x_ptr + offs, mask=m)\n"
                                     "    tl.store(x_ptr + offs, tl.erf(x), mask=m)\n";
    tk_module *mod = NULL;
    tk_kernel *k = NULL;
    CHECK_OK(tk_module_load_string(f->ctx, "erf.tk", erf_source, &mod));
    CHECK_OK(mod ? tk_module_kernel(mod, "erf_rows", &k) : TK_ERR_INVALID);
    if (!k) {
        tk_module_destroy(mod);
        return;
    }
    tk_arg args[] = {tk_ptr(bufs[0], TK_F32), tk_i32(64), tk_const("BLOCK", 64)};
    RtLaunchArgs la;
    RtJitText t;
    setenv("TK_ALWAYS_COMPILE", "1", 1);
    CHECK_OK(rt_launch_args(k, args, 3, NULL, &la));
    tk_status s = rt_jit_text(k, &la, "sm_80", false, &t);
    unsetenv("TK_ALWAYS_COMPILE");
    if (s == TK_OK) {
        const CgTimes *c = &t.llvm_steps;
        CHECK(c->link_ms > 0 && c->opt_ms > 0 && c->emit_ms > 0);
        CHECK(c->link_ms + c->opt_ms + c->emit_ms <= t.llvm_ms);
    } else {
        CHECK(strstr(tk_last_error(), "libdevice") != NULL);
        printf("rt_jitcache: no libdevice here, its link is not timed\n");
    }
    rt_jit_text_free(&t);
    tk_module_destroy(mod);
}

static void test_dump(Fixture *f, const char *dir)
{
    setenv("TK_DUMP_DIR", dir, 1);
    setenv("TK_ALWAYS_COMPILE", "1", 1);
    RtJitText t;
    CHECK_OK(request(f, 256, &t));
    rt_jit_text_free(&t);
    unsetenv("TK_DUMP_DIR");
    unsetenv("TK_ALWAYS_COMPILE");
    CHECK(t_count_files(dir, ".ir") == 1);
    CHECK(t_count_files(dir, ".ll") == 1);
    CHECK(t_count_files(dir, ".ptx") == 1);
}

int main(void)
{
    char dir[512], dir2[512], dump[512];
    snprintf(dir, sizeof dir, "%s", t_tempdir("jit"));
    snprintf(dir2, sizeof dir2, "%s", t_tempdir("jit2"));
    snprintf(dump, sizeof dump, "%s", t_tempdir("dump"));
    unsetenv("TK_CACHE_DISABLE");
    unsetenv("TK_ALWAYS_COMPILE");
    setenv("TK_CACHE_DIR", dir, 1);
    rt_disk_reset();
    Fixture f;
    if (setup(&f)) {
        test_round_trip(&f, dir);
        test_libdevice_steps(&f);
        test_dump(&f, dump);
        teardown(&f);
    } else
        failures++;
    setenv("TK_CACHE_DIR", dir2, 1);
    rt_disk_reset();
    test_two_processes(dir2);
    t_rmdir(dir);
    t_rmdir(dir2);
    t_rmdir(dump);
    if (failures)
        fprintf(stderr, "rt_jitcache: %d checks failed\n", failures);
    else
        printf("rt_jitcache: all checks passed\n");
    return failures ? 1 : 0;
}
