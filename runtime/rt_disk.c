/* rt_disk.c: the on-disk JIT cache, one file per compiled kernel holding
 * its identity, metadata, PTX and cubin. Assumes nothing about the folder:
 * it may be missing, read-only or shared by concurrent processes.
 * Guarantees: a writer never exposes a partial file (temp + rename); a
 * reader trusts nothing it has not checked (magic, format, digest, identity,
 * lengths, checksum); any failure degrades to "not cached". No GPU needed. */
#include <errno.h>
#include <fcntl.h>
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
static int warned_dir, warned_write;

void rt_disk_reset(void)
{
    pthread_mutex_lock(&dir_lock);
    dir_known = false;
    dir_result = NULL;
    warned_dir = warned_write = 0;
    pthread_mutex_unlock(&dir_lock);
}

/* mkdir -p; true when the folder exists afterwards. */
static bool make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int r = mkdir(path, 0755);
        int e = errno;
        *p = '/';
        if (r != 0 && e != EEXIST)
            return false;
    }
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return false;
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Tries to create a file: access() says yes to root on read-only mounts. */
static bool dir_writable(const char *dir)
{
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.probe-%ld", dir, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return errno == EEXIST;
    close(fd);
    unlink(probe);
    return true;
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
            rt_warn_once(&warned_dir, "no $HOME and no $TK_CACHE_DIR: caching compiled "
                                      "kernels in memory only");
            return NULL;
        }
        snprintf(dir_path, sizeof dir_path, "%s/.cache/tk", home);
    }
    if (!make_dirs(dir_path) || !dir_writable(dir_path)) {
        rt_warn_once(&warned_dir, "cache folder '%s' cannot be written (%s): caching "
                                  "compiled kernels in memory only", dir_path, strerror(errno));
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

static bool write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}

bool rt_disk_store(const char *dir, RtDigest d, const RtDiskEntry *e)
{
    static unsigned long seq;
    char path[4200], tmp[4300];
    rt_disk_path(dir, d, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld-%lu", path, (long)getpid(),
             (unsigned long)__atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
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
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    bool ok = fd >= 0;
    ok = ok && write_all(fd, &h, sizeof h) && write_all(fd, e->key, e->key_len) &&
         write_all(fd, e->meta, e->meta_len) && write_all(fd, e->ptx, e->ptx_len) &&
         write_all(fd, e->cubin, e->cubin_len);
    int err = errno;
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    if (ok && rename(tmp, path) != 0) {
        err = errno;
        ok = false;
    }
    if (!ok) {
        if (fd >= 0)
            unlink(tmp);
        rt_warn_once(&warned_write, "cannot write the kernel cache entry %s (%s): "
                                    "keeping it in memory only", path, strerror(err));
        return false;
    }
    rt_stats_add(&rt_stats.disk_stores);
    return true;
}

/* Reads a whole file of at most MAX_ENTRY bytes. */
static void *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *buf = NULL;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size <= MAX_ENTRY)
        buf = tk_xalloc((size_t)st.st_size);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t r = read(fd, (char *)buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (buf && got != (size_t)st.st_size) {
        tk_xfree(buf);
        buf = NULL;
    }
    *len = got;
    return buf;
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
    unsigned char *buf = read_file(path, &len);
    *out = NULL;
    if (!buf)
        return false;
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
