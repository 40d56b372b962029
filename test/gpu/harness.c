/* harness.c: case life cycle, buffers, random inputs, narrow-dtype
 * conversions, error measures and stdout capture for the construct suite.
 * Assumes a tk context from the public API (interpreter or GPU); keeps every
 * failure as text so the runner can print one line per case. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- case life cycle -------------------------------------------------------- */

static uint64_t fnv1a(const char *s)
{
    uint64_t x = 1469598103934665603ull;
    for (; *s; s++)
        x = (x ^ (unsigned char)*s) * 1099511628211ull;
    return x;
}

bool h_begin(H *h, const char *fmt, ...)
{
    char name[sizeof h->name];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    if (h->filter && !strstr(name, h->filter))
        return false;
    if (h->poisoned_ctx) /* the parent restarts from here in a new process */
        return false;
    long idx = h->index++;
    if (idx < h->skip)
        return false;
    if (h->list) {
        printf("%s\n", name);
        return false;
    }
    memcpy(h->name, name, sizeof name);
    h->failed = false;
    h->why[0] = 0;
    h->worst = 0;
    /* Inputs depend on the case name only, so a case draws the same values
     * whether it runs alone (--filter) or in the whole suite. */
    h->rng = fnv1a(name) ^ (h->seed * 0x9E3779B97F4A7C15ull);
    if (h->protocol) {
        printf("@begin %ld %s\n", idx, name);
        fflush(stdout);
    }
    return true;
}

void h_fail(H *h, const char *fmt, ...)
{
    if (h->failed)
        return;
    h->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->why, sizeof h->why, fmt, ap);
    va_end(ap);
    /* Keep the report to one line: diagnostics may span several. */
    for (char *p = h->why; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

void h_expect(H *h, bool cond, const char *fmt, ...)
{
    if (cond || h->failed)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    h_fail(h, "%s", buf);
}

void h_end(H *h)
{
    if (h->failed) {
        printf("FAIL %s: %s\n", h->name, h->why);
        h->failedn++;
    } else {
        printf("PASS %s (rel err %.1e)\n", h->name, h->worst);
        h->passed++;
    }
    fflush(stdout);
    for (int i = 0; i < h->ndev; i++)
        tk_free(h->ctx, h->dev[i]);
    for (int i = 0; i < h->nhost; i++)
        free(h->host[i]);
    h->ndev = h->nhost = 0;
}

void h_cleanup(H *h)
{
    for (int i = 0; i < h->nmods; i++) {
        if (h->mods[i].mod)
            tk_module_destroy(h->mods[i].mod);
        free((char *)h->mods[i].err);
    }
    h->nmods = 0;
    free(h->host);
    h->host = NULL;
    h->caphost = 0;
    if (h->ctx)
        tk_context_destroy(h->ctx);
    h->ctx = NULL;
    free((char *)h->ctx_error);
    h->ctx_error = NULL;
}

/* ---- kernels and launches ------------------------------------------------------- */

static bool h_ctx(H *h)
{
    if (h->ctx)
        return true;
    if (h->ctx_error) {
        h_fail(h, "no context: %s", h->ctx_error);
        return false;
    }
    tk_context_options o = {0};
    o.interpret = h->gpu ? 0 : 1;
    if (tk_context_create(&h->ctx, &o) != TK_OK) {
        h->ctx = NULL;
        h->ctx_error = strdup(tk_last_error());
        h_fail(h, "no context (runtime): %s", h->ctx_error);
        return false;
    }
    return true;
}

tk_kernel *h_kernel(H *h, const char *file, const char *name)
{
    if (h->failed || !h_ctx(h))
        return NULL;
    int i = 0;
    while (i < h->nmods && strcmp(h->mods[i].file, file) != 0)
        i++;
    if (i == h->nmods) {
        if (h->nmods == H_MAX_MODULES) {
            h_fail(h, "harness: too many modules");
            return NULL;
        }
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", h->kdir, file);
        snprintf(h->mods[i].file, sizeof h->mods[i].file, "%s", file);
        if (tk_module_load_file(h->ctx, path, &h->mods[i].mod) != TK_OK) {
            h->mods[i].mod = NULL;
            h->mods[i].err = strdup(tk_last_error());
        }
        h->nmods++;
    }
    if (!h->mods[i].mod) {
        h_fail(h, "loading %s: %s", file, h->mods[i].err);
        return NULL;
    }
    tk_kernel *k = NULL;
    if (tk_module_kernel(h->mods[i].mod, name, &k) != TK_OK) {
        h_fail(h, "kernel %s in %s: %s", name, file, tk_last_error());
        return NULL;
    }
    return k;
}

tk_grid h_grid(unsigned x, unsigned y, unsigned z)
{
    tk_grid g = {x, y, z};
    return g;
}

static tk_status launch_with(H *h, tk_kernel *k, tk_grid grid, const tk_arg *args, int nargs,
                             const tk_launch_options *o, char *buf, size_t buflen)
{
    if (buflen)
        buf[0] = 0;
    if (!k)
        return TK_ERR_INVALID;
    tk_status s = tk_launch(k, grid, args, nargs, o);
    if (s == TK_OK)
        s = tk_synchronize(h->ctx);
    if (s != TK_OK && buflen)
        snprintf(buf, buflen, "%s", tk_last_error());
    if (s == TK_ERR_KERNEL_FAULT && h->gpu)
        h->poisoned_ctx = true;
    return s;
}

tk_status h_launch_status(H *h, tk_kernel *k, tk_grid grid, const tk_arg *args, int nargs,
                          int num_warps, char *buf, size_t buflen)
{
    tk_launch_options o = {0};
    o.num_warps = num_warps;
    o.debug = 1; /* a launch whose status is checked: device_asserts check too */
    return launch_with(h, k, grid, args, nargs, &o, buf, buflen);
}

bool h_launch_ctas(H *h, tk_kernel *k, tk_grid grid, const tk_arg *args, int nargs, int num_warps,
                   int num_ctas)
{
    if (h->failed || !k)
        return false;
    char msg[400];
    tk_launch_options o = {0};
    o.num_warps = num_warps;
    o.num_ctas = num_ctas;
    tk_status s = launch_with(h, k, grid, args, nargs, &o, msg, sizeof msg);
    if (s != TK_OK) {
        h_fail(h, "launch: %s: %s", tk_status_name(s), msg);
        return false;
    }
    return true;
}

bool h_launch(H *h, tk_kernel *k, tk_grid grid, const tk_arg *args, int nargs, int num_warps)
{
    return h_launch_ctas(h, k, grid, args, nargs, num_warps, 0);
}

/* ---- memory ---------------------------------------------------------------------- */

void *h_malloc(H *h, size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (p && h->nhost == h->caphost) {
        int cap = h->caphost ? 2 * h->caphost : 64;
        void **grown = realloc(h->host, (size_t)cap * sizeof(void *));
        if (!grown) {
            free(p);
            p = NULL;
        } else {
            h->host = grown;
            h->caphost = cap;
        }
    }
    if (!p) {
        fprintf(stderr, "harness: out of host memory\n");
        exit(2);
    }
    h->host[h->nhost++] = p;
    return p;
}

size_t h_dtype_size(tk_dtype t)
{
    switch (t) {
    case TK_I1:
    case TK_I8:
    case TK_U8:
    case TK_F8E4NV:
    case TK_F8E5:
    case TK_F8E4B15: return 1;
    case TK_I16:
    case TK_U16:
    case TK_F16:
    case TK_BF16: return 2;
    case TK_I32:
    case TK_U32:
    case TK_F32: return 4;
    case TK_I64:
    case TK_U64:
    case TK_F64: return 8;
    default: return 0;
    }
}

const char *h_dtype_name(tk_dtype t)
{
    static const char *names[] = {"void", "i1",   "i8",      "i16",   "i32",     "i64",
                                  "u8",   "u16",  "u32",     "u64",   "fp16",    "bf16",
                                  "fp32", "fp64", "fp8e4nv", "fp8e5", "fp8e4b15"};
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "?";
}

bool h_is_float(tk_dtype t)
{
    return t == TK_F16 || t == TK_BF16 || t == TK_F32 || t == TK_F64 || t == TK_F8E4NV ||
        t == TK_F8E5 || t == TK_F8E4B15;
}

static void *h_dev_alloc(H *h, size_t bytes)
{
    if (h->failed || !h_ctx(h))
        return NULL;
    void *d = NULL;
    if (h->ndev == H_MAX_ALLOCS || tk_alloc(h->ctx, bytes ? bytes : 1, &d) != TK_OK) {
        h_fail(h, "tk_alloc(%zu): %s", bytes, tk_last_error());
        return NULL;
    }
    h->dev[h->ndev++] = d;
    return d;
}

static void store_value(tk_dtype t, void *dst, double v)
{
    switch (t) {
    case TK_I1:
    case TK_I8:
    case TK_U8: {
        uint8_t x = (uint8_t)(int64_t)v;
        memcpy(dst, &x, 1);
        break;
    }
    case TK_I16:
    case TK_U16: {
        uint16_t x = (uint16_t)(int64_t)v;
        memcpy(dst, &x, 2);
        break;
    }
    case TK_I32:
    case TK_U32: {
        uint32_t x = (uint32_t)(int64_t)v;
        memcpy(dst, &x, 4);
        break;
    }
    case TK_I64: {
        int64_t x = (int64_t)v;
        memcpy(dst, &x, 8);
        break;
    }
    case TK_U64: {
        uint64_t x = (uint64_t)v;
        memcpy(dst, &x, 8);
        break;
    }
    case TK_F16: {
        uint16_t x = h_f32_to_f16((float)v);
        memcpy(dst, &x, 2);
        break;
    }
    case TK_BF16: {
        uint16_t x = h_f32_to_bf16((float)v);
        memcpy(dst, &x, 2);
        break;
    }
    case TK_F32: {
        float x = (float)v;
        memcpy(dst, &x, 4);
        break;
    }
    case TK_F64: memcpy(dst, &v, 8); break;
    case TK_F8E4NV:
    case TK_F8E5:
    case TK_F8E4B15: {
        uint8_t x = h_fp8_encode(t, v);
        memcpy(dst, &x, 1);
        break;
    }
    default: break;
    }
}

static double load_value(tk_dtype t, const void *src)
{
    switch (t) {
    case TK_I1: {
        uint8_t x;
        memcpy(&x, src, 1);
        return x != 0;
    }
    case TK_I8: {
        int8_t x;
        memcpy(&x, src, 1);
        return x;
    }
    case TK_U8: {
        uint8_t x;
        memcpy(&x, src, 1);
        return x;
    }
    case TK_I16: {
        int16_t x;
        memcpy(&x, src, 2);
        return x;
    }
    case TK_U16: {
        uint16_t x;
        memcpy(&x, src, 2);
        return x;
    }
    case TK_I32: {
        int32_t x;
        memcpy(&x, src, 4);
        return x;
    }
    case TK_U32: {
        uint32_t x;
        memcpy(&x, src, 4);
        return x;
    }
    case TK_I64: {
        int64_t x;
        memcpy(&x, src, 8);
        return (double)x;
    }
    case TK_U64: {
        uint64_t x;
        memcpy(&x, src, 8);
        return (double)x;
    }
    case TK_F16: {
        uint16_t x;
        memcpy(&x, src, 2);
        return h_f16_to_f32(x);
    }
    case TK_BF16: {
        uint16_t x;
        memcpy(&x, src, 2);
        return h_bf16_to_f32(x);
    }
    case TK_F32: {
        float x;
        memcpy(&x, src, 4);
        return x;
    }
    case TK_F64: {
        double x;
        memcpy(&x, src, 8);
        return x;
    }
    case TK_F8E4NV:
    case TK_F8E5:
    case TK_F8E4B15: {
        uint8_t x;
        memcpy(&x, src, 1);
        return h_fp8_decode(t, x);
    }
    default: return 0;
    }
}

void *h_upload_raw(H *h, const void *bytes, size_t n)
{
    void *d = h_dev_alloc(h, n);
    if (d && tk_copy_to(h->ctx, d, bytes, n) != TK_OK)
        h_fail(h, "tk_copy_to: %s", tk_last_error());
    return d;
}

void *h_upload(H *h, tk_dtype t, const double *vals, size_t n)
{
    size_t sz = h_dtype_size(t);
    unsigned char *tmp = h_malloc(h, n * sz);
    for (size_t i = 0; i < n; i++)
        store_value(t, tmp + i * sz, vals[i]);
    return h_upload_raw(h, tmp, n * sz);
}

static int poison_byte(tk_dtype t) { return h_is_float(t) ? 0xFF : 0xAB; }

void *h_output(H *h, tk_dtype t, size_t n)
{
    size_t bytes = n * h_dtype_size(t);
    void *d = h_dev_alloc(h, bytes);
    if (d && tk_memset(h->ctx, d, poison_byte(t), bytes) != TK_OK)
        h_fail(h, "tk_memset: %s", tk_last_error());
    return d;
}

void *h_download_raw(H *h, const void *dev, size_t bytes)
{
    unsigned char *p = h_malloc(h, bytes);
    if (!h->failed && dev && tk_copy_from(h->ctx, p, dev, bytes) != TK_OK)
        h_fail(h, "tk_copy_from: %s", tk_last_error());
    return p;
}

double *h_download(H *h, tk_dtype t, const void *dev, size_t n)
{
    size_t sz = h_dtype_size(t);
    unsigned char *raw = h_download_raw(h, dev, n * sz);
    double *out = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        out[i] = load_value(t, raw + i * sz);
    return out;
}

void *h_upload_int(H *h, tk_dtype t, const int64_t *vals, size_t n)
{
    size_t sz = h_dtype_size(t);
    unsigned char *tmp = h_malloc(h, n * sz);
    for (size_t i = 0; i < n; i++) {
        uint64_t u = (uint64_t)vals[i]; /* little-endian: the low bytes are the value */
        memcpy(tmp + i * sz, &u, sz);
    }
    return h_upload_raw(h, tmp, n * sz);
}

int64_t *h_download_int(H *h, tk_dtype t, const void *dev, size_t n)
{
    size_t sz = h_dtype_size(t);
    unsigned char *raw = h_download_raw(h, dev, n * sz);
    int64_t *out = h_malloc(h, n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        uint64_t u = 0;
        memcpy(&u, raw + i * sz, sz);
        out[i] = h_wrap(t, (int64_t)u);
    }
    return out;
}

/* ---- random inputs ------------------------------------------------------------------ */

uint64_t h_rand_u64(H *h)
{
    uint64_t z = (h->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double h_uniform(H *h, double lo, double hi)
{
    for (;;) {
        double u = (double)(h_rand_u64(h) >> 11) * 0x1p-53;
        double v = lo + (hi - lo) * u;
        if (v != 0.0)
            return v;
    }
}

double h_normal(H *h)
{
    double u1 = ((double)(h_rand_u64(h) >> 11) + 1.0) * 0x1p-53;
    double u2 = (double)(h_rand_u64(h) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

int64_t h_randint(H *h, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return (int64_t)((uint64_t)lo + (span ? h_rand_u64(h) % span : h_rand_u64(h)));
}

int64_t h_randint_nz(H *h, int64_t lo, int64_t hi)
{
    for (;;) {
        int64_t v = h_randint(h, lo, hi);
        if (v != 0 || (lo == 0 && hi == 0))
            return v;
    }
}

double *h_rand_array(H *h, tk_dtype t, size_t n, double lo, double hi)
{
    double *v = h_malloc(h, n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        v[i] = h_is_float(t) ? h_round_to(t, h_uniform(h, lo, hi))
                             : (double)h_randint_nz(h, (int64_t)lo, (int64_t)hi);
    return v;
}

/* ---- narrow dtypes ------------------------------------------------------------------- */

uint16_t h_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) { /* a half subnormal, or zero */
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000u;
        unsigned shift = (unsigned)(14 - e);
        uint32_t v = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (v & 1)))
            v++;
        return (uint16_t)(sign | v);
    }
    uint32_t v = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (v & 1)))
        v++; /* a carry into the exponent is right, up to infinity */
    return (uint16_t)(sign | v);
}

float h_f16_to_f32(uint16_t b)
{
    uint32_t sign = (uint32_t)(b & 0x8000u) << 16, exp = (b >> 10) & 0x1fu, man = b & 0x3ffu;
    float f;
    if (exp == 0) {
        f = (float)man * 0x1p-24f;
        return sign ? -f : f;
    }
    uint32_t x =
        exp == 31 ? sign | 0x7f800000u | (man << 13) : sign | ((exp + 112) << 23) | (man << 13);
    memcpy(&f, &x, 4);
    return f;
}

uint16_t h_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float h_bf16_to_f32(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

int64_t h_wrap(tk_dtype t, int64_t v)
{
    switch (t) {
    case TK_I1: return v & 1;
    case TK_I8: return (int8_t)(uint8_t)v;
    case TK_U8: return (uint8_t)v;
    case TK_I16: return (int16_t)(uint16_t)v;
    case TK_U16: return (uint16_t)v;
    case TK_I32: return (int32_t)(uint32_t)v;
    case TK_U32: return (uint32_t)v;
    default: return v;
    }
}

/* v rounded once, to nearest even, to fp16 (bf: bf16). Going through fp32
 * alone would round twice: a double just off a 16-bit halfway point lands
 * on it in fp32 and then goes to the even side, maybe the wrong one. */
static double round16(double v, bool bf)
{
    float f = (float)v;
    uint16_t b = bf ? h_f32_to_bf16(f) : h_f32_to_f16(f);
    double got = bf ? h_bf16_to_f32(b) : h_f16_to_f32(b);
    if (got == v || isnan(v) || isinf(got))
        return got;
    /* The neighbour on v's side; bits + 1 is one step away from zero. */
    uint16_t o = (uint16_t)(fabs(got) < fabs(v) ? b + 1 : b - 1);
    double other = bf ? h_bf16_to_f32(o) : h_f16_to_f32(o);
    return fabs(v - other) < fabs(v - got) ? other : got;
}

/* fp8 from its fields; the format: 4 exponent bits (bias 7, S.1111.111 is
 * NaN, no infinities; fp8e4b15: bias 15, no specials) or 5 (bias 15, IEEE
 * specials). */
double h_fp8_decode(tk_dtype t, uint8_t c)
{
    int ebits = t == TK_F8E5 ? 5 : 4, mbits = 7 - ebits;
    int bias = t == TK_F8E4NV ? 7 : 15;
    int e = (c >> mbits) & ((1 << ebits) - 1), m = c & ((1 << mbits) - 1);
    double s = (c & 0x80) ? -1 : 1;
    if ((t == TK_F8E4NV && e == 15 && m == 7) || (t == TK_F8E5 && e == 31 && m))
        return NAN;
    if (t == TK_F8E5 && e == 31)
        return s * INFINITY;
    if (e == 0)
        return s * ldexp(m, 1 - bias - mbits);
    return s * ldexp(m + (1 << mbits), e - bias - mbits);
}

/* fp8e4b15 as Triton converts an fp32 or fp16 value: toward zero to fp16,
 * the magnitude clamped to 1.75 (NaN too), then the nearest code by
 * searching, ties away from zero (to the larger code). */
static uint8_t b15_encode(double v)
{
    double a = isnan(v) || fabs(v) > 1.75 ? 1.75 : fabs(v);
    uint16_t hb = h_f32_to_f16((float)a); /* to nearest; one step back where it went up */
    double r = h_f16_to_f32(hb) > a ? h_f16_to_f32((uint16_t)(hb - 1)) : h_f16_to_f32(hb);
    int pick = 0;
    for (int c = 1; c < 0x7f; c++)
        if (fabs(h_fp8_decode(TK_F8E4B15, (uint8_t)c) - r) <=
            fabs(h_fp8_decode(TK_F8E4B15, (uint8_t)pick) - r))
            pick = c;
    return (uint8_t)((signbit(v) ? 0x80 : 0) | pick);
}

/* Nearest by searching every code (ties to the even code), clamped to the
 * largest finite value as cvt.rn.satfinite does; NaN -> 0x7f. */
uint8_t h_fp8_encode(tk_dtype t, double v)
{
    if (t == TK_F8E4B15)
        return b15_encode(v);
    if (isnan(v))
        return 0x7f;
    double maxv = t == TK_F8E4NV ? 448 : 57344, a = fabs(v), best = INFINITY;
    if (a > maxv)
        a = maxv;
    int pick = 0;
    for (int c = 0; c < 0x80; c++) {
        double x = h_fp8_decode(t, (uint8_t)c);
        if (isnan(x) || isinf(x))
            continue;
        double d = fabs(x - a);
        if (d < best || (d == best && !(c & 1)))
            best = d, pick = c;
    }
    return (uint8_t)((signbit(v) ? 0x80 : 0) | pick);
}

double h_round_to(tk_dtype t, double v)
{
    switch (t) {
    case TK_F16: return round16(v, false);
    case TK_BF16: return round16(v, true);
    case TK_F32: return (float)v;
    case TK_F64: return v;
    case TK_F8E4NV:
    case TK_F8E5:
    case TK_F8E4B15: return h_fp8_decode(t, h_fp8_encode(t, v));
    default: return (double)h_wrap(t, (int64_t)v);
    }
}

/* ---- checks ------------------------------------------------------------------------------ */

void h_check(H *h, const char *what, const double *out, const double *ref, size_t n, double tol)
{
    if (h->failed)
        return;
    double num = 0, den = 0, worst = -1;
    size_t wi = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(out[i]) != isnan(ref[i])) {
            h_fail(h, "%s[%zu] = %g, expected %g (NaN: output never written?)", what, i, out[i],
                   ref[i]);
            return;
        }
        if (isnan(ref[i]) || (isinf(ref[i]) && out[i] == ref[i]))
            continue;
        double d = fabs(out[i] - ref[i]);
        if (!(d <= worst)) {
            worst = d;
            wi = i;
        }
        num += d * d;
        den += ref[i] * ref[i];
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    if (tol == 0 && num > 0) {
        size_t i = 0;
        while (out[i] == ref[i] || (isnan(out[i]) && isnan(ref[i])))
            i++;
        h_fail(h, "%s[%zu] = %.17g, expected %.17g exactly (rel err %.1e)", what, i, out[i], ref[i],
               rel);
        return;
    }
    if (!(rel <= tol)) {
        h_fail(h, "%s: rel err %.2e > %.1e (worst at [%zu]: %.9g vs %.9g)", what, rel, tol, wi,
               out[wi], ref[wi]);
        return;
    }
    if (rel > h->worst)
        h->worst = rel;
}

void h_check_int(H *h, const char *what, const int64_t *out, const int64_t *ref, size_t n)
{
    if (h->failed)
        return;
    for (size_t i = 0; i < n; i++)
        if (out[i] != ref[i]) {
            h_fail(h, "%s[%zu] = %lld, expected %lld", what, i, (long long)out[i],
                   (long long)ref[i]);
            return;
        }
}

void h_check_abs(H *h, const char *what, const double *out, const double *ref, size_t n,
                 double atol)
{
    if (h->failed)
        return;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(out[i] - ref[i]);
        if (!(d <= atol)) {
            h_fail(h, "%s[%zu] = %.9g, expected %.9g (abs tol %.1e)", what, i, out[i], ref[i],
                   atol);
            return;
        }
        if (d > h->worst)
            h->worst = d;
    }
}

void h_check_untouched(H *h, const char *what, tk_dtype t, const void *dev, size_t off, size_t n)
{
    if (h->failed || !dev)
        return;
    size_t sz = h_dtype_size(t);
    const unsigned char *raw = h_download_raw(h, (const unsigned char *)dev + off * sz, n * sz);
    for (size_t i = 0; i < n * sz; i++)
        if (raw[i] != (unsigned char)poison_byte(t)) {
            h_fail(h, "%s: element %zu past the end was written (masked store leaked)", what,
                   off + i / sz);
            return;
        }
}

/* ---- stdout capture -------------------------------------------------------------------- */

static int cap_saved = -1, cap_fd = -1;

bool h_capture_begin(H *h)
{
    char path[] = "/tmp/tk_capture_XXXXXX";
    fflush(stdout);
    cap_fd = mkstemp(path);
    if (cap_fd < 0) {
        h_fail(h, "harness: mkstemp failed");
        return false;
    }
    unlink(path);
    cap_saved = dup(1);
    dup2(cap_fd, 1);
    return true;
}

char *h_capture_end(H *h)
{
    fflush(stdout);
    if (cap_fd < 0)
        return h_malloc(h, 1);
    dup2(cap_saved, 1);
    close(cap_saved);
    off_t len = lseek(cap_fd, 0, SEEK_END);
    char *text = h_malloc(h, (size_t)(len > 0 ? len : 0) + 1);
    if (len > 0 && pread(cap_fd, text, (size_t)len, 0) != len)
        text[0] = 0;
    close(cap_fd);
    cap_fd = cap_saved = -1;
    return text;
}

/* ---- Philox 4x32-10 ------------------------------------------------------------------------ */

/* The counter-based generator of Salmon et al. (Random123), as tl.rand uses
 * it: counter (offset, 0, 0, 0), key (low, high word of the seed). */
void h_philox(uint32_t k0, uint32_t k1, uint32_t c[4])
{
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
        c[0] = n0;
        c[1] = (uint32_t)p1;
        c[2] = n2;
        c[3] = (uint32_t)p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

/* A 32-bit draw to [0, 1): the bits as a signed int folded to non-negative,
 * scaled in fp32 by the largest factor that keeps INT_MAX below 1. */
float h_uint_to_uniform(uint32_t x)
{
    int32_t s = (int32_t)x;
    if (s < 0)
        s = -s - 1;
    return (float)s * 4.6566127342e-10f;
}

double h_rel_err(const double *out, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (out[i] - ref[i]) * (out[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

double *h_matmul_ref(H *h, const double *a, const double *b, const double *acc, int m, int n, int k,
                     bool bt)
{
    double *c = h_malloc(h, (size_t)m * n * sizeof(double));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = acc ? acc[(size_t)i * n + j] : 0;
            for (int l = 0; l < k; l++)
                s += a[(size_t)i * k + l] * (bt ? b[(size_t)j * k + l] : b[(size_t)l * n + j]);
            c[(size_t)i * n + j] = s;
        }
    return c;
}

HGemm h_gemm_operands(H *h, tk_dtype t, int m, int n, int k, bool bt)
{
    HGemm g = {t, m, n, k, bt, NULL, NULL, NULL, NULL, NULL};
    size_t na = k ? (size_t)m * k : 1, nb = k ? (size_t)k * n : 1;
    g.a = h_rand_array(h, t, na, -1, 1);
    g.b = h_rand_array(h, t, nb, -1, 1);
    g.da = h_upload(h, t, g.a, na);
    g.db = h_upload(h, t, g.b, nb);
    g.dc = h_output(h, t, (size_t)m * n);
    return g;
}

void h_gemm_check(H *h, const HGemm *g, double tol)
{
    size_t nc = (size_t)g->m * g->n;
    double *c = h_download(h, g->t, g->dc, nc);
    double *ref = h_matmul_ref(h, g->a, g->b, NULL, g->m, g->n, g->k, g->bt);
    if (g->k)
        h_check(h, "c", c, ref, nc, tol);
    else
        h_check(h, "c (no K step: zeros)", c, ref, nc, 0);
}

void h_persistent_gemm(H *h, tk_kernel *k, tk_dtype t, const int mnk[3], const int block[3],
                       int programs, int warps, double tol)
{
    HGemm g = h_gemm_operands(h, t, mnk[0], mnk[1], mnk[2], false);
    h_launch(h, k, h_grid((unsigned)programs, 1, 1),
             H_ARGS(tk_ptr(g.da, t), tk_ptr(g.db, t), tk_ptr(g.dc, t), tk_i32(mnk[0]),
                    tk_i32(mnk[1]), tk_i32(mnk[2]), tk_const("BM", block[0]),
                    tk_const("BN", block[1]), tk_const("BK", block[2]),
                    tk_const("NUM_SMS", programs)),
             warps);
    h_gemm_check(h, &g, tol);
}
