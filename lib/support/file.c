/* file.c: writing files safely (see file.h). Assumes POSIX and Linux's
 * getrandom. Guarantees: a temp file is always a new file of our own; an
 * existing file is opened for writing only when it is the non-regular target
 * the output is meant to go through; a failed write leaves no temp behind. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "support/support.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { MAX_LINKS = 40, SUFFIX_LEN = 12, TEMP_TRIES = 100 };

/* Letters and digits another user cannot guess. Without entropy (early boot)
 * the clock, pid and a counter still give a fresh name; O_EXCL is what keeps
 * the open safe either way. */
static void random_suffix(char out[SUFFIX_LEN + 1])
{
    static const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    static unsigned long counter;
    unsigned char r[SUFFIX_LEN];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
            ((uint64_t)getpid() << 16) ^ __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
        for (int i = 0; i < SUFFIX_LEN; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            r[i] = (unsigned char)(x >> 56);
        }
    }
    for (int i = 0; i < SUFFIX_LEN; i++)
        out[i] = abc[r[i] % 36];
    out[SUFFIX_LEN] = 0;
}

/* 0 or an errno value. */
static int write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        if (w == 0)
            return EIO;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A new file named path.tmp-RANDOM, its name into tmp. */
static int open_temp(const char *path, char *tmp, size_t cap, unsigned mode, int *fd)
{
    for (int tries = 0; tries < TEMP_TRIES; tries++) {
        char suffix[SUFFIX_LEN + 1];
        random_suffix(suffix);
        if ((size_t)snprintf(tmp, cap, "%s.tmp-%s", path, suffix) >= cap)
            return ENAMETOOLONG;
        *fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
        if (*fd >= 0)
            return 0;
        if (errno != EEXIST)
            return errno;
    }
    return EEXIST;
}

int file_replace(const char *path, const FilePart *parts, int nparts, unsigned mode)
{
    char tmp[PATH_MAX + 32];
    int fd = -1;
    int err = open_temp(path, tmp, sizeof tmp, mode, &fd);
    if (err)
        return err;
    for (int i = 0; i < nparts && !err; i++)
        err = write_all(fd, parts[i].data, parts[i].len);
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err)
        unlink(tmp);
    return err;
}

/* Follows the links from path to the first name that does not exist (a
 * relative target counts from its link's folder), into out. */
static int resolve_dangling(const char *path, char *out, size_t cap)
{
    char cur[PATH_MAX], link[PATH_MAX];
    if ((size_t)snprintf(cur, sizeof cur, "%s", path) >= sizeof cur)
        return ENAMETOOLONG;
    for (int hops = 0; hops <= MAX_LINKS; hops++) {
        struct stat st;
        bool missing = lstat(cur, &st) != 0;
        if (missing && errno != ENOENT)
            return errno;
        if (missing || !S_ISLNK(st.st_mode)) /* one that appeared since is taken as found */
            return (size_t)snprintf(out, cap, "%s", cur) >= cap ? ENAMETOOLONG : 0;
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0)
            return errno;
        link[n] = 0;
        const char *slash = strrchr(cur, '/');
        size_t dir = link[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
        if (dir + (size_t)n >= sizeof cur)
            return ENAMETOOLONG;
        memcpy(cur + dir, link, (size_t)n + 1);
    }
    return ELOOP;
}

/* Writes into an existing file without replacing it; -1 when it turned out
 * to be a regular file after all (swapped in since the caller looked). */
static int write_through(const char *path, const void *data, size_t len, bool regular_ok)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (regular_ok ? O_TRUNC : 0));
    if (fd < 0)
        return errno;
    struct stat st;
    int err = fstat(fd, &st) != 0 ? errno : 0;
    if (!err && S_ISREG(st.st_mode) && !regular_ok)
        err = -1;
    if (!err)
        err = write_all(fd, data, len);
    if (close(fd) != 0 && !err)
        err = errno;
    return err;
}

int file_write(const char *path, const void *data, size_t len)
{
    FilePart part = {data, len};
    char target[PATH_MAX];
    struct stat st, real;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT)
            return errno;
        int err = resolve_dangling(path, target, sizeof target);
        return err ? err : file_replace(target, &part, 1, 0666);
    }
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    if (!S_ISREG(st.st_mode)) {
        int err = write_through(path, data, len, false);
        if (err != -1)
            return err;
    }
    /* A regular file: replace it under its real name. A file with no name
     * left (a deleted one behind /proc/self/fd) can only be written in place. */
    if (!realpath(path, target) || lstat(target, &real) != 0 || !S_ISREG(real.st_mode) ||
        real.st_dev != st.st_dev || real.st_ino != st.st_ino)
        return write_through(path, data, len, true);
    return file_replace(target, &part, 1, 0666);
}

bool file_name_ok(const char *name)
{
    if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return false;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p == '/' || *p < 0x20 || *p == 0x7f)
            return false;
    return true;
}
