/* example.h: what every example host program shares: a check macro that
 * prints tk's message and exits, the kernel file next to the executable,
 * fresh random inputs (seed printed; TK_SEED repeats a run) and the
 * relative-error measure the conformance table uses. */
#ifndef TK_EXAMPLE_H
#define TK_EXAMPLE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tk/tk.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        tk_status check_s_ = (call);                                                               \
        if (check_s_ != TK_OK) {                                                                   \
            fprintf(stderr, "%s:%d: %s failed: %s\n%s\n", __FILE__, __LINE__, #call,               \
                    tk_status_name(check_s_), tk_last_error());                                    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static inline void *ex_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* The kernel file: beside the executable (CMake copies it there), else in
 * $TK_EXAMPLES_DIR, else in the source folder this was built from. */
static inline const char *ex_kernel_path(const char *file)
{
    static char path[8400];
    const char *env = getenv("TK_EXAMPLES_DIR");
    if (env && *env) {
        snprintf(path, sizeof path, "%s/%s", env, file);
        return path;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(path, sizeof path, "%s/%s", exe, file);
        if (access(path, R_OK) == 0)
            return path;
    }
    snprintf(path, sizeof path, "%s/%s", TK_EXAMPLES_SOURCE_DIR, file);
    return path;
}

/* xorshift64*: fast, seeded from the clock unless TK_SEED is set. */
static uint64_t ex_rng_state;

static inline void ex_seed(const char *name)
{
    const char *env = getenv("TK_SEED");
    ex_rng_state =
        env && *env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    if (!ex_rng_state)
        ex_rng_state = 1;
    printf("%s: seed %llu (set TK_SEED to repeat)\n", name, (unsigned long long)ex_rng_state);
}

static inline uint64_t ex_rand_u64(void)
{
    ex_rng_state ^= ex_rng_state >> 12;
    ex_rng_state ^= ex_rng_state << 25;
    ex_rng_state ^= ex_rng_state >> 27;
    return ex_rng_state * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [lo, hi). */
static inline float ex_uniform(float lo, float hi)
{
    return lo + (hi - lo) * (float)((ex_rand_u64() >> 40) * (1.0 / 16777216.0));
}

/* Standard normal (Box-Muller). */
static inline float ex_normal(void)
{
    double u1 = (ex_rand_u64() >> 11) * (1.0 / 9007199254740992.0) + 1e-300;
    double u2 = (ex_rand_u64() >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* ||got - ref|| / ||ref|| over n values; NaN (a poisoned output left
 * unwritten) makes it infinite. */
static inline double ex_rel_error(const double *got, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(got[i]))
            return INFINITY;
        num += (got[i] - ref[i]) * (got[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

#define TK_ARRAY_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static inline unsigned ex_cdiv(unsigned a, unsigned b) { return (a + b - 1) / b; }

static inline unsigned ex_next_pow2(unsigned v)
{
    unsigned p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

static inline double ex_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A context on device 0 (or the interpreter under TK_INTERPRET=1); prints which. */
static inline tk_context *ex_context(const char *name)
{
    tk_context *ctx = NULL;
    CHECK(tk_context_create(&ctx, &(tk_context_options){.device = 0}));
    tk_device_props p;
    CHECK(tk_device_properties(ctx, &p));
    printf("%s: running on %s\n", name, p.name);
    return ctx;
}

#endif
