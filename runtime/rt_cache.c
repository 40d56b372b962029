/* rt_cache.c: JIT cache keys and the in-memory table of compiled variants.
 * A key is the launch-dependent words (argument dtypes and specialisation
 * bits, constexpr values, num_warps, num_stages); the kernel's own parts
 * (source hash, name, arch, compiler version) join it only for the disk
 * digest. A hit on the table costs a compare against the last variant, or
 * one probe under a read lock: no allocation, no system call. */
#include <stdatomic.h>
#include <string.h>

#include "rt.h"

RtStats rt_stats;

void rt_stats_add(long *counter) { __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED); }

void rt_stats_get(RtStats *out)
{
    out->compiles = __atomic_load_n(&rt_stats.compiles, __ATOMIC_RELAXED);
    out->memory_hits = __atomic_load_n(&rt_stats.memory_hits, __ATOMIC_RELAXED);
    out->disk_hits = __atomic_load_n(&rt_stats.disk_hits, __ATOMIC_RELAXED);
    out->disk_stores = __atomic_load_n(&rt_stats.disk_stores, __ATOMIC_RELAXED);
    out->disk_rejects = __atomic_load_n(&rt_stats.disk_rejects, __ATOMIC_RELAXED);
    out->tunings = __atomic_load_n(&rt_stats.tunings, __ATOMIC_RELAXED);
    out->tune_disk_hits = __atomic_load_n(&rt_stats.tune_disk_hits, __ATOMIC_RELAXED);
}

/* ---- hashing ------------------------------------------------------------------ */

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* FNV-1a over bytes, finished with a strong mix so nearby inputs spread. */
uint64_t rt_hash64(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    return mix64(h);
}

/* Two hashes with unrelated seeds: a 128-bit identity for the source. */
void rt_hash_text(const char *text, size_t len, uint64_t out[2])
{
    out[0] = rt_hash64(0xcbf29ce484222325ULL, text, len);
    out[1] = rt_hash64(0x84222325cbf29ce4ULL ^ (uint64_t)len, text, len);
}

void rt_key_finish(RtKey *k)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)k->nwords;
    for (int i = 0; i < k->nwords; i++)
        h = (h ^ k->w[i]) * 0x9e3779b97f4a7c15ULL + (h >> 29);
    k->hash = mix64(h);
}

bool rt_key_eq(const RtKey *a, const RtKey *b)
{
    return a->hash == b->hash && a->nwords == b->nwords &&
        memcmp(a->w, b->w, (size_t)a->nwords * sizeof a->w[0]) == 0;
}

/* ---- the disk identity ----------------------------------------------------------- */

static void blob_put(StrBuf *sb, const void *p, size_t n) { sb_write(sb, p, n); }

static void blob_str(StrBuf *sb, const char *s)
{
    s = s ? s : "";
    blob_put(sb, s, strlen(s) + 1);
}

unsigned char *rt_key_blob(const RtKeyParts *p, size_t *len)
{
    StrBuf sb;
    sb_init(&sb);
    blob_str(&sb, "tk-key-1");
    blob_put(&sb, p->source_hash, sizeof p->source_hash);
    blob_str(&sb, p->kernel);
    blob_str(&sb, p->arch);
    blob_str(&sb, p->version);
    uint32_t n = (uint32_t)p->launch->nwords;
    blob_put(&sb, &n, sizeof n);
    blob_put(&sb, p->launch->w, n * sizeof p->launch->w[0]);
    unsigned char lines = p->lines != NULL;
    blob_put(&sb, &lines, 1);
    if (lines)
        blob_str(&sb, p->lines);
    if (sb.oom) {
        sb_free(&sb);
        *len = 0;
        return NULL;
    }
    return (unsigned char *)sb_take(&sb, len);
}

RtDigest rt_key_digest(const RtKeyParts *p)
{
    RtDigest d = {0, 0};
    size_t len = 0;
    unsigned char *blob = rt_key_blob(p, &len);
    if (!blob)
        return d;
    uint64_t h[2];
    rt_hash_text((const char *)blob, len, h);
    tk_xfree(blob);
    d.lo = h[0];
    d.hi = h[1];
    return d;
}

/* ---- the table --------------------------------------------------------------------- */

void rt_table_init(RtTable *t)
{
    memset(t, 0, sizeof *t);
    pthread_rwlock_init(&t->lock, NULL);
    atomic_store(&t->last, NULL);
}

void rt_table_free(RtTable *t, void (*free_value)(void *))
{
    for (int i = 0; i < t->cap; i++)
        if (t->slots[i].value && free_value)
            free_value(t->slots[i].value);
    tk_xfree(t->slots);
    t->slots = NULL;
    t->cap = t->count = 0;
    pthread_rwlock_destroy(&t->lock);
}

static struct RtSlot *probe(struct RtSlot *slots, int cap, const RtKey *key)
{
    unsigned mask = (unsigned)cap - 1;
    for (unsigned i = (unsigned)key->hash & mask;; i = (i + 1) & mask)
        if (!slots[i].key || rt_key_eq(slots[i].key, key))
            return &slots[i];
}

void *rt_table_find(RtTable *t, const RtKey *key, const RtKey *(*key_of)(void *))
{
    void *last = atomic_load_explicit(&t->last, memory_order_acquire);
    if (last && rt_key_eq(key_of(last), key))
        return last;
    void *found = NULL;
    pthread_rwlock_rdlock(&t->lock);
    if (t->cap)
        found = probe(t->slots, t->cap, key)->value;
    pthread_rwlock_unlock(&t->lock);
    if (found)
        atomic_store_explicit(&t->last, found, memory_order_release);
    return found;
}

static bool grow(RtTable *t)
{
    int cap = t->cap ? t->cap * 2 : 16;
    struct RtSlot *slots = tk_xalloc((size_t)cap * sizeof *slots);
    if (!slots)
        return false;
    memset(slots, 0, (size_t)cap * sizeof *slots);
    for (int i = 0; i < t->cap; i++)
        if (t->slots[i].key)
            *probe(slots, cap, t->slots[i].key) = t->slots[i];
    tk_xfree(t->slots);
    t->slots = slots;
    t->cap = cap;
    return true;
}

/* The key pointer stored is the value's own copy (the caller passes it). */
void *rt_table_insert(RtTable *t, const RtKey *key, void *value)
{
    pthread_rwlock_wrlock(&t->lock);
    void *result = NULL;
    if ((t->count + 1) * 2 > t->cap && !grow(t))
        goto done;
    struct RtSlot *s = probe(t->slots, t->cap, key);
    if (!s->key) {
        s->key = (RtKey *)key;
        s->value = value;
        t->count++;
    }
    result = s->value;
done:
    pthread_rwlock_unlock(&t->lock);
    if (result)
        atomic_store_explicit(&t->last, result, memory_order_release);
    return result;
}
