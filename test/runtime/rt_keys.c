/* rt_keys.c: the JIT cache key changes when any one of its components
 * changes (source, kernel name, arch, compiler version, each launch word:
 * argument dtype/specialisation, constexpr value, num_warps, num_stages)
 * and only then; the in-memory table finds what was inserted, misses what
 * was not, and a hit costs well under a microsecond. */
#include "rt_test.h"

#include <time.h>

static RtKey launch_key(int nwords, uint64_t seed)
{
    RtKey k;
    memset(&k, 0, sizeof k);
    k.nwords = nwords;
    for (int i = 0; i < nwords; i++)
        k.w[i] = seed * 1000003u + (uint64_t)i;
    rt_key_finish(&k);
    return k;
}

static bool same_digest(RtDigest a, RtDigest b) { return a.lo == b.lo && a.hi == b.hi; }

static void test_digest(void)
{
    RtKey lk = launch_key(8, 7);
    char kernel[] = "softmax", arch[] = "sm_90a", version[] = "0.1.0";
    RtKeyParts base = {{11, 22}, kernel, arch, version, &lk, NULL};
    RtDigest d0 = rt_key_digest(&base);

    /* Equal parts held in other memory: the same digest. */
    char kernel2[] = "softmax", arch2[] = "sm_90a", version2[] = "0.1.0";
    RtKey lk2 = launch_key(8, 7);
    RtKeyParts copy = {{11, 22}, kernel2, arch2, version2, &lk2, NULL};
    CHECK(same_digest(d0, rt_key_digest(&copy)));
    CHECK(rt_key_eq(&lk, &lk2));

    /* Each component changed alone: a different digest. */
    RtDigest seen[64];
    int n = 0;
    RtKeyParts p;
    p = base;
    p.source_hash[0] ^= 1;
    seen[n++] = rt_key_digest(&p);
    p = base;
    p.source_hash[1] ^= 1;
    seen[n++] = rt_key_digest(&p);
    p = base;
    p.kernel = "softmax2";
    seen[n++] = rt_key_digest(&p);
    p = base;
    p.arch = "sm_90";
    seen[n++] = rt_key_digest(&p);
    p = base;
    p.version = "0.1.1";
    seen[n++] = rt_key_digest(&p);
    /* line tables on (they name the file), for two file names */
    p = base;
    p.lines = "k.py";
    seen[n++] = rt_key_digest(&p);
    p = base;
    p.lines = "k2.py";
    seen[n++] = rt_key_digest(&p);
    p = base;
    p.lines = "";
    seen[n++] = rt_key_digest(&p);
    for (int w = 0; w < lk.nwords; w++) {
        RtKey changed = lk;
        changed.w[w] ^= 1u << (w % 17);
        rt_key_finish(&changed);
        CHECK(!rt_key_eq(&lk, &changed));
        p = base;
        p.launch = &changed;
        seen[n++] = rt_key_digest(&p);
    }
    RtKey longer = launch_key(9, 7);
    p = base;
    p.launch = &longer;
    seen[n++] = rt_key_digest(&p);
    /* Boundaries between strings matter: "ab"+"c" differs from "a"+"bc". */
    p = base;
    p.kernel = "softma";
    p.arch = "xsm_90a";
    seen[n++] = rt_key_digest(&p);
    for (int i = 0; i < n; i++) {
        CHECK(!same_digest(seen[i], d0));
        for (int j = 0; j < i; j++)
            CHECK(!same_digest(seen[i], seen[j]));
    }

    /* The identity blob differs as well, so a colliding file name is refused. */
    size_t l0, l1;
    unsigned char *b0 = rt_key_blob(&base, &l0);
    p = base;
    p.arch = "sm_80";
    unsigned char *b1 = rt_key_blob(&p, &l1);
    CHECK(b0 && b1 && (l0 != l1 || memcmp(b0, b1, l0) != 0));
    tk_xfree(b0);
    tk_xfree(b1);

    uint64_t h1[2], h2[2];
    rt_hash_text("x = 1\n", 6, h1);
    rt_hash_text("x = 2\n", 6, h2);
    CHECK(h1[0] != h2[0] && h1[1] != h2[1]);
}

static const RtKey *key_of(void *v) { return v; }

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void test_table(void)
{
    enum { N = 1000 };
    static RtKey keys[N];
    RtTable t;
    rt_table_init(&t);
    for (int i = 0; i < N; i++) {
        keys[i] = launch_key(6, (uint64_t)i);
        CHECK(rt_table_insert(&t, &keys[i], &keys[i]) == &keys[i]);
    }
    for (int i = 0; i < N; i++)
        CHECK(rt_table_find(&t, &keys[i], key_of) == &keys[i]);
    RtKey absent = launch_key(6, N + 5);
    CHECK(rt_table_find(&t, &absent, key_of) == NULL);
    /* A second insert of an equal key keeps the first value. */
    RtKey dup = keys[3];
    CHECK(rt_table_insert(&t, &dup, &dup) == &keys[3]);

    /* Hits: the last-variant fast path, and the probed path alternating;
     * the best of a few trials, so a busy machine does not fail the test. */
    enum { REPS = 100000, TRIALS = 5 };
    double fast = 1e9, probed = 1e9;
    for (int trial = 0; trial < TRIALS; trial++) {
        int misses = 0;
        double t0 = now_ns();
        for (int i = 0; i < REPS; i++)
            misses += rt_table_find(&t, &keys[7], key_of) != &keys[7];
        double t1 = now_ns();
        for (int i = 0; i < REPS; i++)
            misses += rt_table_find(&t, &keys[i & 1 ? 9 : 10], key_of) == NULL;
        double t2 = now_ns();
        CHECK(misses == 0);
        fast = (t1 - t0) / REPS < fast ? (t1 - t0) / REPS : fast;
        probed = (t2 - t1) / REPS < probed ? (t2 - t1) / REPS : probed;
    }
    printf("rt_keys: table hit %.1f ns (last-key path), %.1f ns (probed)\n", fast, probed);
    CHECK(fast < 1000 && probed < 1000);
    rt_table_free(&t, NULL);
}

/* The compiler a key names: tk's version and the file the code came from
 * (this test's executable, into which the runtime is linked), stable
 * across calls. */
static void test_build_identity(void)
{
    const char *id = rt_build_identity();
    CHECK(strncmp(id, tk_version(), strlen(tk_version())) == 0);
    CHECK(strstr(id, " build ") != NULL);
    CHECK(rt_build_identity() == id);
}

int main(void)
{
    test_digest();
    test_build_identity();
    test_table();
    if (failures)
        fprintf(stderr, "rt_keys: %d checks failed\n", failures);
    else
        printf("rt_keys: all checks passed\n");
    return failures ? 1 : 0;
}
