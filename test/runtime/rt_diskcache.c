/* rt_diskcache.c: the on-disk kernel cache without a GPU or a compiler:
 * round trip with and without a cubin; corrupt, truncated and foreign
 * entries are refused (and a rewrite heals them); processes writing the same
 * entry at once leave one good file; an unusable folder degrades to memory
 * only with one warning. */
#include "rt_test.h"

#include <sys/wait.h>

static const char ptx_text[] = ".version 8.5\n.target sm_90\n// a kernel\n";
static const unsigned char cubin_bytes[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 42, 43, 44};
static const unsigned char key_a[] = "tk-key-1\0source\0kernel-a\0sm_90\0";
static const unsigned char key_b[] = "tk-key-1\0source\0kernel-b\0sm_90\0";
static const unsigned char meta[] = {1, 2, 3, 4, 5, 6, 7, 8};

static RtDiskEntry entry(const unsigned char *key, size_t key_len, bool with_cubin)
{
    return (RtDiskEntry){key,
                         key_len,
                         meta,
                         sizeof meta,
                         ptx_text,
                         sizeof ptx_text,
                         with_cubin ? cubin_bytes : NULL,
                         with_cubin ? sizeof cubin_bytes : 0};
}

static bool same(const RtDiskEntry *a, const RtDiskEntry *b)
{
    return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0 &&
        a->meta_len == b->meta_len && memcmp(a->meta, b->meta, a->meta_len) == 0 &&
        a->ptx_len == b->ptx_len && memcmp(a->ptx, b->ptx, a->ptx_len) == 0 &&
        a->cubin_len == b->cubin_len &&
        (a->cubin_len == 0 || memcmp(a->cubin, b->cubin, a->cubin_len) == 0);
}

static bool load_matches(const char *dir, RtDigest d, const RtDiskEntry *want)
{
    RtDiskEntry got;
    void *buf = NULL;
    bool ok = rt_disk_load(dir, d, want->key, want->key_len, &got, &buf);
    ok = ok && same(&got, want);
    tk_xfree(buf);
    return ok;
}

static void test_round_trip(const char *dir)
{
    RtDigest d = {0x1234, 0x5678};
    RtDiskEntry e = entry(key_a, sizeof key_a, true);
    CHECK(!load_matches(dir, d, &e)); /* absent */
    CHECK(rt_disk_store(dir, d, &e));
    CHECK(load_matches(dir, d, &e));
    RtDigest d2 = {0x1234, 0x9999};
    RtDiskEntry nocubin = entry(key_a, sizeof key_a, false);
    CHECK(rt_disk_store(dir, d2, &nocubin));
    CHECK(load_matches(dir, d2, &nocubin));
    CHECK(t_count_files(dir, ".tkc") == 2);
}

/* Flips one byte at `at` (from the end when negative). */
static void corrupt(const char *path, long at)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (!f)
        return;
    fseek(f, at, at < 0 ? SEEK_END : SEEK_SET);
    long pos = ftell(f);
    int c = fgetc(f);
    fseek(f, pos, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

static void test_damage(const char *dir)
{
    RtDigest d = {0xabc, 0xdef};
    RtDiskEntry e = entry(key_a, sizeof key_a, true);
    char path[1024];
    rt_disk_path(dir, d, path, sizeof path);
    RtStats before, after;

    long offsets[] = {0, 20, 70, -3, -20}; /* magic, digest, lengths, cubin, ptx */
    for (int i = 0; i < TK_ARRAY_LEN(offsets); i++) {
        CHECK(rt_disk_store(dir, d, &e));
        corrupt(path, offsets[i]);
        rt_stats_get(&before);
        CHECK(!load_matches(dir, d, &e));
        rt_stats_get(&after);
        CHECK(after.disk_rejects == before.disk_rejects + 1);
    }
    /* Truncated: mid-payload, and shorter than the header. */
    off_t sizes[] = {90, 10, 0};
    for (int i = 0; i < TK_ARRAY_LEN(sizes); i++) {
        CHECK(rt_disk_store(dir, d, &e));
        struct stat st;
        CHECK(stat(path, &st) == 0);
        CHECK(truncate(path, sizes[i] ? sizes[i] : st.st_size - 1) == 0);
        CHECK(!load_matches(dir, d, &e));
    }
    /* Foreign: the same file name, another kernel's identity. */
    RtDiskEntry other = entry(key_b, sizeof key_b, true);
    CHECK(rt_disk_store(dir, d, &other));
    CHECK(!load_matches(dir, d, &e));
    /* A rewrite heals it. */
    CHECK(rt_disk_store(dir, d, &e));
    CHECK(load_matches(dir, d, &e));
}

/* Several processes store and read the same entry at once: every read sees
 * either nothing or the whole entry, and one good file remains. */
static void test_concurrent(const char *dir)
{
    RtDigest d = {0x77, 0x88};
    enum { PROCS = 4, ROUNDS = 200 };
    pid_t kids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        kids[p] = fork();
        if (kids[p] == 0) {
            RtDiskEntry e = entry(key_a, sizeof key_a, true);
            int bad = 0;
            for (int r = 0; r < ROUNDS; r++) {
                if (!rt_disk_store(dir, d, &e))
                    bad++;
                RtDiskEntry got;
                void *buf = NULL;
                if (!rt_disk_load(dir, d, e.key, e.key_len, &got, &buf) || !same(&got, &e))
                    bad++;
                tk_xfree(buf);
            }
            _exit(bad ? 1 : 0);
        }
    }
    for (int p = 0; p < PROCS; p++) {
        int status = 0;
        CHECK(waitpid(kids[p], &status, 0) == kids[p]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    RtDiskEntry e = entry(key_a, sizeof key_a, true);
    CHECK(load_matches(dir, d, &e));
    char path[1024];
    rt_disk_path(dir, d, path, sizeof path);
    const char *name = strrchr(path, '/') + 1;
    int entries = 0, others = 0;
    DIR *dd = opendir(dir);
    struct dirent *de;
    while (dd && (de = readdir(dd))) {
        if (strcmp(de->d_name, name) == 0)
            entries++;
        else if (strstr(de->d_name, ".tmp-"))
            others++;
    }
    if (dd)
        closedir(dd);
    CHECK(entries == 1);
    CHECK(others == 0); /* no temp file left behind */
}

static int count_of(const char *text, const char *word)
{
    int n = 0;
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
        n++;
    return n;
}

/* A cache folder that cannot exist (its parent is a file): memory only,
 * warned once; TK_CACHE_DISABLE: memory only, silently. */
static void test_unusable(const char *dir)
{
    char file[600], bad[700];
    snprintf(file, sizeof file, "%s/plainfile", dir);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    snprintf(bad, sizeof bad, "%s/cache", file);
    setenv("TK_CACHE_DIR", bad, 1);
    unsetenv("TK_CACHE_DISABLE");
    rt_disk_reset();
    t_stderr_begin(dir);
    const char *got = rt_disk_dir();
    const char *again = rt_disk_dir();
    const char *text = t_stderr_end();
    CHECK(got == NULL && again == NULL);
    CHECK(strstr(text, "warning") && strstr(text, "memory only"));
    CHECK(count_of(text, "warning") == 1); /* once, not per call */

    /* A store into a folder that vanished: false, a warning, no crash. */
    t_stderr_begin(dir);
    RtDiskEntry e = entry(key_a, sizeof key_a, false);
    CHECK(!rt_disk_store(bad, (RtDigest){1, 2}, &e));
    text = t_stderr_end();
    CHECK(strstr(text, "memory only") != NULL);

    setenv("TK_CACHE_DISABLE", "1", 1);
    rt_disk_reset();
    t_stderr_begin(dir);
    got = rt_disk_dir();
    text = t_stderr_end();
    CHECK(got == NULL && text[0] == 0);

    /* A folder made read-only by its mode (root writes anyway: skip then). */
    unsetenv("TK_CACHE_DISABLE");
    char ro[700];
    snprintf(ro, sizeof ro, "%s/readonly", dir);
    CHECK(mkdir(ro, 0555) == 0);
    if (geteuid() != 0) {
        setenv("TK_CACHE_DIR", ro, 1);
        rt_disk_reset();
        t_stderr_begin(dir);
        got = rt_disk_dir();
        text = t_stderr_end();
        CHECK(got == NULL && strstr(text, "memory only"));
    }
    rmdir(ro);
    unlink(file);
    /* A missing folder is created. */
    char fresh[700];
    snprintf(fresh, sizeof fresh, "%s/a/b/c", dir);
    setenv("TK_CACHE_DIR", fresh, 1);
    rt_disk_reset();
    got = rt_disk_dir();
    CHECK(got && strcmp(got, fresh) == 0);
    rmdir(fresh);
    snprintf(fresh, sizeof fresh, "%s/a/b", dir);
    rmdir(fresh);
    snprintf(fresh, sizeof fresh, "%s/a", dir);
    rmdir(fresh);
    rt_disk_reset();
}

int main(void)
{
    const char *tmp = t_tempdir("disk");
    char dir[512];
    snprintf(dir, sizeof dir, "%s", tmp);
    test_round_trip(dir);
    test_damage(dir);
    t_rmdir(dir);
    CHECK(mkdir(dir, 0755) == 0);
    test_concurrent(dir);
    test_unusable(dir);
    t_rmdir(dir);
    if (failures)
        fprintf(stderr, "rt_diskcache: %d checks failed\n", failures);
    else
        printf("rt_diskcache: all checks passed\n");
    return failures ? 1 : 0;
}
