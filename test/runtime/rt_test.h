/* rt_test.h: shared helpers of the runtime unit tests (not a test itself):
 * a check macro that counts failures, a fresh temporary cache folder per
 * test, and capture of what a call writes to stderr (for warnings). */
#ifndef TK_RT_TEST_H
#define TK_RT_TEST_H

#include "rt.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>

#include "check.h"

/* A call that must succeed; prints tk's message when it does not. */
#define CHECK_OK(call)                                                                             \
    do {                                                                                           \
        tk_status s_ = (call);                                                                     \
        if (s_ != TK_OK) {                                                                         \
            fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call,               \
                    tk_status_name(s_), tk_last_error());                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* A call that must fail with `status` and a message containing `text`. */
#define CHECK_FAILS(call, status, text)                                                            \
    do {                                                                                           \
        tk_status s_ = (call);                                                                     \
        if (s_ != (status) || !strstr(tk_last_error(), (text))) {                                  \
            fprintf(stderr, "%s:%d: %s: expected %s with \"%s\", got %s: %s\n", __FILE__,          \
                    __LINE__, #call, tk_status_name(status), (text), tk_status_name(s_),           \
                    tk_last_error());                                                              \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* A new empty folder under $TMPDIR (or /tmp). */
static inline const char *t_tempdir(const char *tag)
{
    static char path[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/tk-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    if (!mkdtemp(path)) {
        perror("mkdtemp");
        exit(2);
    }
    return path;
}

/* Files in dir whose names end with suffix. */
static inline int t_count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    struct dirent *e;
    size_t sl = strlen(suffix);
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] != '.' && l >= sl && strcmp(e->d_name + l - sl, suffix) == 0)
            n++;
    }
    closedir(d);
    return n;
}

/* Removes dir and the files in it (one level). */
static inline void t_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[1024];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Redirects stderr into a file until t_stderr_end, which returns the text. */
static int t_saved_stderr = -1;
static char t_stderr_path[600];

static inline void t_stderr_begin(const char *dir)
{
    fflush(stderr);
    snprintf(t_stderr_path, sizeof t_stderr_path, "%s.stderr", dir);
    int fd = open(t_stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    t_saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

static inline const char *t_stderr_end(void)
{
    static char text[8192];
    fflush(stderr);
    dup2(t_saved_stderr, 2);
    close(t_saved_stderr);
    FILE *f = fopen(t_stderr_path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = 0;
    if (f)
        fclose(f);
    unlink(t_stderr_path);
    return text;
}

#endif
