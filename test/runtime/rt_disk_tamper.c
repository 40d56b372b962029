/* rt_disk_tamper.c: the kernel cache against tampering and races, without a
 * GPU. Something other than an entry of ours at an entry's path (a FIFO, a
 * symlink, a folder, a file of another user or one others may write) is
 * refused with one warning and replaced by the next store, never followed or
 * waited on; a cache folder others may write is not used; the default folder
 * is made 0700; a link planted at a temp name is never written through; and
 * processes storing one key at once leave a valid entry. An alarm turns a
 * hang into a failure. */
#include "rt_test.h"

#include <signal.h>
#include <sys/wait.h>

static const char ptx_text[] = ".version 8.5\n.target sm_90\n// a kernel\n";
static const unsigned char key[] = "tk-key-1\0source\0kernel-a\0sm_90\0";
static const unsigned char meta[] = {1, 2, 3, 4, 5, 6, 7, 8};
static const RtDiskEntry good = {key,      sizeof key,      meta, sizeof meta,
                                 ptx_text, sizeof ptx_text, NULL, 0};

static bool loads(const char *dir, RtDigest d)
{
    RtDiskEntry got;
    void *buf = NULL;
    bool ok = rt_disk_load(dir, d, key, sizeof key, &got, &buf);
    ok = ok && got.ptx_len == sizeof ptx_text && memcmp(got.ptx, ptx_text, got.ptx_len) == 0;
    tk_xfree(buf);
    return ok;
}

static long rejects(void)
{
    RtStats s;
    rt_stats_get(&s);
    return s.disk_rejects;
}

static int count_of(const char *text, const char *word)
{
    int n = 0;
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
        n++;
    return n;
}

/* Loading what is at the entry's path is refused (a reject, not "absent"),
 * and a store then puts a good entry in its place. */
static void refused_then_healed(const char *dir, RtDigest d, const char *what)
{
    long before = rejects();
    if (loads(dir, d) || rejects() != before + 1) {
        fprintf(stderr, "rt_disk_tamper: %s at an entry's path was not refused\n", what);
        failures++;
    }
    CHECK(rt_disk_store(dir, d, &good));
    CHECK(loads(dir, d));
}

static void test_fifo(const char *dir)
{
    RtDigest d = {0x1, 0xf1f0};
    char path[1024];
    rt_disk_path(dir, d, path, sizeof path);
    CHECK(mkfifo(path, 0600) == 0);
    refused_then_healed(dir, d, "a FIFO");
    struct stat st;
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
}

/* A link to a valid entry elsewhere is not followed; the store replaces the
 * link, not its target. */
static void test_symlink(const char *dir, const char *elsewhere)
{
    RtDigest d = {0x2, 0x5111};
    char path[1024], target[1024];
    rt_disk_path(dir, d, path, sizeof path);
    CHECK(rt_disk_store(elsewhere, d, &good));
    rt_disk_path(elsewhere, d, target, sizeof target);
    CHECK(symlink(target, path) == 0);
    refused_then_healed(dir, d, "a symlink");
    struct stat st;
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    CHECK(loads(elsewhere, d)); /* the target is still the old good entry */
}

/* A folder at the entry's path: refused; a store fails with a warning and
 * leaves no temp file. */
static void test_folder(const char *dir)
{
    RtDigest d = {0x3, 0xd1};
    char path[1024];
    rt_disk_path(dir, d, path, sizeof path);
    CHECK(mkdir(path, 0700) == 0);
    long before = rejects();
    CHECK(!loads(dir, d));
    CHECK(rejects() == before + 1);
    t_stderr_begin(dir);
    CHECK(!rt_disk_store(dir, d, &good));
    const char *text = t_stderr_end();
    CHECK(strstr(text, "memory only") != NULL);
    CHECK(rmdir(path) == 0);
    CHECK(t_count_files(dir, "") == t_count_files(dir, ".tkc")); /* no temp left */
}

/* Entries others may write, or that another user owns (root only: chown),
 * are refused with one warning for all of them. */
static void test_foreign_entries(const char *dir)
{
    RtDigest dg = {0x4, 0x6}, dw = {0x4, 0x2}, du = {0x4, 0x65534};
    char path[1024];
    int failed_before = failures;
    rt_disk_reset();
    t_stderr_begin(dir);
    CHECK(rt_disk_store(dir, dg, &good));
    rt_disk_path(dir, dg, path, sizeof path);
    CHECK(chmod(path, 0664) == 0);
    refused_then_healed(dir, dg, "a group-writable entry");
    CHECK(rt_disk_store(dir, dw, &good));
    rt_disk_path(dir, dw, path, sizeof path);
    CHECK(chmod(path, 0646) == 0);
    refused_then_healed(dir, dw, "a world-writable entry");
    if (geteuid() == 0) {
        CHECK(rt_disk_store(dir, du, &good));
        rt_disk_path(dir, du, path, sizeof path);
        CHECK(chown(path, 65534, 65534) == 0);
        refused_then_healed(dir, du, "another user's entry");
        struct stat st;
        CHECK(stat(path, &st) == 0 && st.st_uid == 0);
    } else {
        printf("rt_disk_tamper: not root: skipping the entry owned by another user\n");
    }
    const char *text = t_stderr_end();
    CHECK(count_of(text, "warning") == 1);
    CHECK(strstr(text, "recompiling") != NULL);
    if (failures != failed_before)
        fprintf(stderr, "rt_disk_tamper: what the foreign entries printed:\n%s", text);
    /* Even under umask 0 the entries tk writes are not writable by others. */
    mode_t old = umask(0);
    RtDigest d0 = {0x4, 0};
    CHECK(rt_disk_store(dir, d0, &good));
    umask(old);
    rt_disk_path(dir, d0, path, sizeof path);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 022) == 0);
    CHECK(loads(dir, d0));
}

/* rt_disk_dir with TK_CACHE_DIR=path: whether the folder is used, and
 * whether that said "warning" once. */
static bool dir_used(const char *path, const char *scratch, bool *warned_once)
{
    setenv("TK_CACHE_DIR", path, 1);
    rt_disk_reset();
    t_stderr_begin(scratch);
    const char *got = rt_disk_dir();
    rt_disk_dir();
    const char *text = t_stderr_end();
    *warned_once = count_of(text, "warning") == 1;
    return got != NULL;
}

/* A cache folder others may write (sticky or not) or another user owns is
 * not used; a 0700 folder inside a sticky world-writable one is. */
static void test_folders(const char *base)
{
    char d[700];
    bool warned;
    unsetenv("TK_CACHE_DISABLE");
    struct {
        const char *name;
        mode_t mode;
        bool used;
    } cases[] = {
        {"open", 0777, false}, {"group", 0770, false},   {"sticky", 01777, false},
        {"mine", 0700, true},  {"readable", 0755, true},
    };
    for (int i = 0; i < TK_ARRAY_LEN(cases); i++) {
        snprintf(d, sizeof d, "%s/%s", base, cases[i].name);
        CHECK(mkdir(d, 0700) == 0 && chmod(d, cases[i].mode) == 0);
        bool used = dir_used(d, base, &warned);
        if (used != cases[i].used || (!used && !warned)) {
            fprintf(stderr, "rt_disk_tamper: cache folder of mode %o: used %d, warned %d\n",
                    (unsigned)cases[i].mode, used, warned);
            failures++;
        }
    }
    snprintf(d, sizeof d, "%s/sticky/mine", base);
    CHECK(mkdir(d, 0700) == 0);
    CHECK(dir_used(d, base, &warned));
    if (geteuid() == 0) {
        snprintf(d, sizeof d, "%s/theirs", base);
        CHECK(mkdir(d, 0700) == 0 && chown(d, 65534, 65534) == 0);
        CHECK(!dir_used(d, base, &warned) && warned);
    }
    /* The default folder, ~/.cache/tk, is made 0700. */
    char home[700];
    snprintf(home, sizeof home, "%s/home", base);
    CHECK(mkdir(home, 0755) == 0);
    unsetenv("TK_CACHE_DIR");
    setenv("HOME", home, 1);
    rt_disk_reset();
    const char *got = rt_disk_dir();
    struct stat st;
    CHECK(got && stat(got, &st) == 0 && (st.st_mode & 0777) == 0700);
    rt_disk_reset();
}

/* Links planted at the temp names an old writer would pick are not followed. */
static void test_planted_temps(const char *dir)
{
    RtDigest d = {0x5, 0x7};
    char path[1024], victim[1024], link[1200];
    snprintf(victim, sizeof victim, "%s.victim", dir);
    FILE *f = fopen(victim, "w");
    CHECK(f && fputs("precious\n", f) >= 0);
    if (f)
        fclose(f);
    rt_disk_path(dir, d, path, sizeof path);
    for (int seq = 0; seq < 64; seq++) {
        snprintf(link, sizeof link, "%s.tmp-%ld-%d", path, (long)getpid(), seq);
        CHECK(symlink(victim, link) == 0);
    }
    for (int i = 0; i < 8; i++)
        CHECK(rt_disk_store(dir, d, &good));
    CHECK(loads(dir, d));
    struct stat st;
    CHECK(stat(victim, &st) == 0 && st.st_size == 9);
    unlink(victim);
}

/* Processes storing and loading one key at once: every store succeeds and a
 * valid entry remains. */
static void test_race(const char *dir)
{
    RtDigest d = {0x6, 0x6};
    enum { PROCS = 3, ROUNDS = 150 };
    pid_t kids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        kids[p] = fork();
        if (kids[p] == 0) {
            int bad = 0;
            for (int r = 0; r < ROUNDS; r++) {
                bad += !rt_disk_store(dir, d, &good);
                RtDiskEntry got;
                void *buf = NULL;
                if (rt_disk_load(dir, d, key, sizeof key, &got, &buf) &&
                    memcmp(got.ptx, ptx_text, sizeof ptx_text) != 0)
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
    CHECK(loads(dir, d));
}

/* Removes base's tree two levels deep (folders made by the tests). */
static void remove_tree(const char *base)
{
    static const char *const subs[] = {"sticky/mine", "home/.cache/tk", "home/.cache", "home",
                                       "open",        "group",          "sticky",      "mine",
                                       "readable",    "theirs",         "entries",     "other"};
    char p[600];
    for (int i = 0; i < TK_ARRAY_LEN(subs); i++) {
        snprintf(p, sizeof p, "%s/%s", base, subs[i]);
        t_rmdir(p);
    }
    rmdir(base);
}

int main(void)
{
    alarm(60); /* a cache that blocks (on a FIFO) fails instead of hanging */
    const char *base = t_tempdir("tamper"); /* static storage */
    char dir[600], other[600];
    snprintf(dir, sizeof dir, "%s/entries", base);
    snprintf(other, sizeof other, "%s/other", base);
    CHECK(mkdir(dir, 0700) == 0 && mkdir(other, 0700) == 0);
    test_fifo(dir);
    test_symlink(dir, other);
    test_folder(dir);
    test_foreign_entries(dir);
    test_planted_temps(dir);
    test_race(dir);
    test_folders(base);
    remove_tree(base);
    if (failures)
        fprintf(stderr, "rt_disk_tamper: %d checks failed\n", failures);
    else
        printf("rt_disk_tamper: all checks passed\n");
    return failures ? 1 : 0;
}
