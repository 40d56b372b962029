/* rt_disk.c: the on-disk JIT cache, one file per compiled kernel holding
 * its identity, metadata, PTX and a cubin (may be empty). Assumes nothing
 * about the folder: it may be missing, read-only or shared by concurrent
 * processes.
 * Guarantees: a writer never exposes a partial file (a fresh temp file +
 * rename, support/file.c); a reader trusts nothing it has not checked: the
 * folder and the entry must be this user's and writable by no one else (the
 * folder is made 0700), the entry a regular file opened without following a
 * link or waiting on a FIFO, then magic, format, digest, identity, lengths
 * and checksum; any failure degrades to "not cached". No GPU needed. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"

enum { DISK_FORMAT = 1, MAX_ENTRY = 256 << 20 };
static const char disk_magic[8] = {'T', 'K', 'J', 'I', 'T', 'C', 0, 1};

typedef struct DiskHeader {
    char magic[8];
    uint32_t format, reserved;
    uint64_t digest_lo, digest_hi;
    uint64_t key_len, meta_len, ptx_len, cubin_len;
    uint64_t checksum; /* of everything after the header */
} DiskHeader;

static pthread_mutex_t dir_lock = PTHREAD_MUTEX_INITIALIZER;
static bool dir_known;
static char dir_path[4096];
static const char *dir_result;
static int warned_dir, warned_write, warned_entry;

void rt_disk_reset(void)
{
    pthread_mutex_lock(&dir_lock);
    dir_known = false;
    dir_result = NULL;
    warned_dir = warned_write = warned_entry = 0;
    pthread_mutex_unlock(&dir_lock);
}

/* mkdir -p, each new folder 0700 (ours alone); true when the folder exists
 * afterwards. */
static bool make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int r = mkdir(path, 0700);
        int e = errno;
        *p = '/';
        if (r != 0 && e != EEXIST)
            return false;
    }
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return false;
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Tries to create a file: access() says yes to root on read-only mounts. */
static bool dir_writable(const char *dir)
{
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.probe-%ld", dir, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno == EEXIST;
    close(fd);
    unlink(probe);
    return true;
}

/* Ours alone: owned by this user and writable by no group or other user.
 * Anything else in the cache may have been put there by someone else (a
 * shared /tmp folder), and what it holds would be loaded and run. */
static bool trusted(const struct stat *st)
{
    return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static const char *find_dir(void)
{
    if (rt_env_on("TK_CACHE_DISABLE"))
        return NULL;
    const char *env = getenv("TK_CACHE_DIR");
    if (env && *env)
        snprintf(dir_path, sizeof dir_path, "%s", env);
    else {
        const char *home = getenv("HOME");
        if (!home || !*home) {
            rt_warn_once(&warned_dir,
                         "no $HOME and no $TK_CACHE_DIR: caching compiled "
                         "kernels in memory only");
            return NULL;
        }
        snprintf(dir_path, sizeof dir_path, "%s/.cache/tk", home);
    }
    if (!make_dirs(dir_path) || !dir_writable(dir_path)) {
        rt_warn_once(&warned_dir,
                     "cache folder '%s' cannot be written (%s): caching "
                     "compiled kernels in memory only",
                     dir_path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (stat(dir_path, &st) != 0 || !trusted(&st)) {
        rt_warn_once(&warned_dir,
                     "cache folder '%s' is not yours alone (it must be owned by "
                     "you and writable by no one else, e.g. mode 0700): caching "
                     "compiled kernels in memory only",
                     dir_path);
        return NULL;
    }
    return dir_path;
}

const char *rt_disk_dir(void)
{
    pthread_mutex_lock(&dir_lock);
    if (!dir_known) {
        dir_result = find_dir();
        dir_known = true;
    }
    const char *d = dir_result;
    pthread_mutex_unlock(&dir_lock);
    return d;
}

void rt_disk_path(const char *dir, RtDigest d, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%016llx%016llx.tkc", dir, (unsigned long long)d.hi,
             (unsigned long long)d.lo);
}

static uint64_t payload_checksum(const RtDiskEntry *e)
{
    uint64_t h = 0x6a09e667f3bcc908ULL;
    h = rt_hash64(h, e->key, e->key_len);
    h = rt_hash64(h, e->meta, e->meta_len);
    h = rt_hash64(h, e->ptx, e->ptx_len);
    return rt_hash64(h, e->cubin, e->cubin_len);
}

bool rt_disk_store(const char *dir, RtDigest d, const RtDiskEntry *e)
{
    char path[4200];
    rt_disk_path(dir, d, path, sizeof path);
    DiskHeader h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, disk_magic, sizeof h.magic);
    h.format = DISK_FORMAT;
    h.digest_lo = d.lo;
    h.digest_hi = d.hi;
    h.key_len = e->key_len;
    h.meta_len = e->meta_len;
    h.ptx_len = e->ptx_len;
    h.cubin_len = e->cubin_len;
    h.checksum = payload_checksum(e);
    FilePart parts[] = {{&h, sizeof h},
                        {e->key, e->key_len},
                        {e->meta, e->meta_len},
                        {e->ptx, e->ptx_len},
                        {e->cubin, e->cubin_len}};
    /* 0644 less the umask: never writable by others, even under umask 0 or
     * 002, which the next reader would refuse */
    int err = file_replace(path, parts, TK_ARRAY_LEN(parts), 0644);
    if (err) {
        rt_warn_once(&warned_write,
                     "cannot write the kernel cache entry %s (%s): "
                     "keeping it in memory only",
                     path, strerror(err));
        return false;
    }
    rt_stats_add(&rt_stats.disk_stores);
    return true;
}

typedef enum { ENTRY_ABSENT, ENTRY_UNTRUSTED, ENTRY_BAD, ENTRY_READ } EntryRead;

/* Reads a whole entry of at most MAX_ENTRY bytes into *buf. A link is not
 * followed and a FIFO not waited on (O_NOFOLLOW | O_NONBLOCK); only a regular
 * file of ours alone is read. */
static EntryRead read_entry(const char *path, void **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? ENTRY_ABSENT : ENTRY_UNTRUSTED;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !trusted(&st)) {
        close(fd);
        return ENTRY_UNTRUSTED;
    }
    if (st.st_size > 0 && st.st_size <= MAX_ENTRY)
        *buf = tk_xalloc((size_t)st.st_size);
    size_t got = 0;
    while (*buf && got < (size_t)st.st_size) {
        ssize_t r = read(fd, (char *)*buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!*buf || got != (size_t)st.st_size) {
        tk_xfree(*buf);
        *buf = NULL;
        return ENTRY_BAD;
    }
    *len = got;
    return ENTRY_READ;
}

static bool reject(void *buf)
{
    tk_xfree(buf);
    rt_stats_add(&rt_stats.disk_rejects);
    return false;
}

bool rt_disk_load(const char *dir, RtDigest d, const unsigned char *key, size_t key_len,
                  RtDiskEntry *e, void **out)
{
    char path[4200];
    rt_disk_path(dir, d, path, sizeof path);
    size_t len = 0;
    void *raw = NULL;
    EntryRead r = read_entry(path, &raw, &len);
    unsigned char *buf = raw;
    *out = NULL;
    if (r == ENTRY_ABSENT)
        return false;
    if (r == ENTRY_UNTRUSTED)
        rt_warn_once(&warned_entry,
                     "ignoring the kernel cache entry %s: it is not a regular "
                     "file of yours that only you can write; recompiling",
                     path);
    if (r != ENTRY_READ)
        return reject(buf);
    DiskHeader h;
    if (len < sizeof h)
        return reject(buf);
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, disk_magic, sizeof h.magic) != 0 || h.format != DISK_FORMAT ||
        h.digest_lo != d.lo || h.digest_hi != d.hi)
        return reject(buf);
    uint64_t body = len - sizeof h;
    if (h.key_len > body || h.meta_len > body || h.ptx_len > body || h.cubin_len > body ||
        h.key_len + h.meta_len + h.ptx_len + h.cubin_len != body)
        return reject(buf);
    unsigned char *p = buf + sizeof h;
    e->key = p;
    e->key_len = h.key_len;
    e->meta = p + h.key_len;
    e->meta_len = h.meta_len;
    e->ptx = (const char *)(e->meta + h.meta_len);
    e->ptx_len = h.ptx_len;
    e->cubin = (const unsigned char *)e->ptx + h.ptx_len;
    e->cubin_len = h.cubin_len;
    if (payload_checksum(e) != h.checksum || e->key_len != key_len ||
        memcmp(e->key, key, key_len) != 0)
        return reject(buf);
    *out = buf;
    return true;
}

/* ---- the build's identity ------------------------------------------------------ */

static pthread_once_t build_once = PTHREAD_ONCE_INIT;
static char build_id[96];

static void find_build(void)
{
    snprintf(build_id, sizeof build_id, "%s", tk_version());
    Dl_info info;
    struct stat st;
    if (!dladdr((void *)find_build, &info) || !info.dli_fname || stat(info.dli_fname, &st) != 0)
        return;
    snprintf(build_id, sizeof build_id, "%s build %" PRIu64 " %" PRId64 ".%09ld", tk_version(),
             (uint64_t)st.st_size, (int64_t)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
}

const char *rt_build_identity(void)
{
    pthread_once(&build_once, find_build);
    return build_id;
}
