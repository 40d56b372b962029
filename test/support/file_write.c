/* file_write.c: support/file.c on its own: file_replace never writes through
 * what is at the name and leaves no temp file when it fails; file_write
 * follows links, writes through non-regular files and gives errno values for
 * what it cannot do; file_name_ok accepts only plain names. */
#include "support/support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static char base[256];

static const char *at(const char *name)
{
    static char path[2][512];
    static int which;
    which ^= 1;
    int n = snprintf(path[which], sizeof path[which], "%s/%s", base, name);
    CHECK(n > 0 && (size_t)n < sizeof path[which]); /* the test's names are short */
    return path[which];
}

static long size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Files in base whose names hold ".tmp-". */
static int temps(void)
{
    DIR *d = opendir(base);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".tmp-") != NULL;
    if (d)
        closedir(d);
    return n;
}

static void test_replace(void)
{
    FilePart parts[] = {{"abc", 3}, {"", 0}, {"defg", 4}};
    CHECK(file_replace(at("r"), parts, 3, 0644) == 0);
    CHECK(size_of(at("r")) == 7);
    /* A link at the name is replaced, its target left alone. */
    CHECK(file_replace(at("victim"), parts, 1, 0644) == 0);
    CHECK(symlink(at("victim"), at("link")) == 0);
    CHECK(file_replace(at("link"), parts, 3, 0644) == 0);
    struct stat st;
    CHECK(lstat(at("link"), &st) == 0 && S_ISREG(st.st_mode));
    CHECK(size_of(at("victim")) == 3);
    /* The mode is `mode` less the umask. */
    mode_t old = umask(077);
    CHECK(file_replace(at("private"), parts, 1, 0666) == 0);
    umask(old);
    CHECK(stat(at("private"), &st) == 0 && (st.st_mode & 0777) == 0600);
    /* Failures: a folder at the name, a missing folder; nothing left. */
    CHECK(mkdir(at("dir"), 0700) == 0);
    CHECK(file_replace(at("dir"), parts, 3, 0644) == EISDIR);
    CHECK(file_replace(at("nope/x"), parts, 3, 0644) == ENOENT);
    char longname[300];
    memset(longname, 'a', 250);
    longname[250] = 0;
    CHECK(file_replace(at(longname), parts, 3, 0644) == ENAMETOOLONG);
    CHECK(temps() == 0);
}

static void test_write(void)
{
    CHECK(file_write(at("w"), "hello", 5) == 0);
    CHECK(size_of(at("w")) == 5);
    /* A link chain ending in a missing name creates it; a loop is ELOOP. */
    CHECK(symlink("chain2", at("chain1")) == 0);
    CHECK(symlink(at("end"), at("chain2")) == 0);
    CHECK(file_write(at("chain1"), "xy", 2) == 0);
    CHECK(size_of(at("end")) == 2);
    struct stat st;
    CHECK(lstat(at("chain1"), &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(symlink("loop2", at("loop1")) == 0 && symlink("loop1", at("loop2")) == 0);
    CHECK(file_write(at("loop1"), "x", 1) == ELOOP);
    /* A FIFO with a reader is written through. */
    CHECK(mkfifo(at("fifo"), 0600) == 0);
    int rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
    CHECK(rd >= 0);
    CHECK(file_write(at("fifo"), "piped", 5) == 0);
    char got[8] = {0};
    CHECK(read(rd, got, sizeof got) == 5 && memcmp(got, "piped", 5) == 0);
    close(rd);
    CHECK(lstat(at("fifo"), &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(file_write(at("dir"), "x", 1) == EISDIR);
    CHECK(file_write(at("nope/x"), "x", 1) == ENOENT);
    CHECK(temps() == 0);
}

static void test_names(void)
{
    static const char *const good[] = {"x", "out.bin", "a b", "..x", ".hidden", "\xc3\xa9"};
    static const char *const bad[] = {"",     ".",    "..",   "a/b",     "/x",
                                      "../x", "a\tb", "a\nb", "\x1b[2J", "del\x7f"};
    for (int i = 0; i < (int)(sizeof good / sizeof good[0]); i++)
        CHECK(file_name_ok(good[i]));
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++)
        CHECK(!file_name_ok(bad[i]));
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/tk-file-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 2;
    }
    test_replace();
    test_write();
    test_names();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        fprintf(stderr, "file_write: could not remove %s\n", base);
    if (failures)
        fprintf(stderr, "file_write: %d checks failed\n", failures);
    else
        printf("file_write: all checks passed\n");
    return failures ? 1 : 0;
}
