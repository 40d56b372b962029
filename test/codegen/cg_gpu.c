/* cg_gpu.c: runs the hand-built kernels of cg_test.h on a GPU and checks
 * each output against a CPU reference (fresh random inputs, outputs
 * poisoned first). Without a CUDA driver it prints "skipped" and exits 77,
 * which ctest reports as skipped. */
#include "cg_test.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUctx, *CUmod, *CUfn;

static struct {
    CUresult (*init)(unsigned);
    CUresult (*dev_get)(int *, int);
    CUresult (*attr)(int *, int, int);
    CUresult (*retain)(CUctx *, int);
    CUresult (*set_current)(CUctx);
    CUresult (*load)(CUmod *, const void *);
    CUresult (*get_fn)(CUfn *, CUmod, const char *);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*launch)(CUfn, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       void *, void **, void **);
    CUresult (*sync)(void);
    CUresult (*err)(CUresult, const char **);
} cu;

static CUresult (*set_attr)(CUfn, int, int);
static int failures, passed;
static char arch[16] = "sm_90";

#define CU(call)                                                                                   \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_) {                                                                                  \
            const char *m_ = "?";                                                                  \
            cu.err(r_, &m_);                                                                       \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, m_);              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static bool cu_load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h)
        return false;
    void **slots[] = {(void **)&cu.init,   (void **)&cu.dev_get,     (void **)&cu.attr,
                      (void **)&cu.retain, (void **)&cu.set_current, (void **)&cu.load,
                      (void **)&cu.get_fn, (void **)&cu.alloc,       (void **)&cu.free,
                      (void **)&cu.htod,   (void **)&cu.dtoh,        (void **)&cu.launch,
                      (void **)&cu.sync,   (void **)&cu.err};
    const char *names[] = {
        "cuInit",           "cuDeviceGet",      "cuDeviceGetAttribute", "cuDevicePrimaryCtxRetain",
        "cuCtxSetCurrent",  "cuModuleLoadData", "cuModuleGetFunction",  "cuMemAlloc_v2",
        "cuMemFree_v2",     "cuMemcpyHtoD_v2",  "cuMemcpyDtoH_v2",      "cuLaunchKernel",
        "cuCtxSynchronize", "cuGetErrorString"};
    for (int i = 0; i < TK_ARRAY_LEN(names); i++)
        if (!(*slots[i] = dlsym(h, names[i])))
            return false;
    set_attr = (CUresult(*)(CUfn, int, int))dlsym(h, "cuFuncSetAttribute");
    if (!set_attr || cu.init(0))
        return false;
    int dev, major, minor;
    CUctx ctx;
    CU(cu.dev_get(&dev, 0));
    CU(cu.attr(&major, 75, dev));
    CU(cu.attr(&minor, 76, dev));
    snprintf(arch, sizeof arch, "sm_%d%d", major >= 9 ? 9 : 8,
             major >= 9 ? 0
                        : (minor >= 9       ? 9
                               : minor >= 6 ? 6
                                            : 0));
    CU(cu.retain(&ctx, dev));
    CU(cu.set_current(ctx));
    return true;
}

static bool have_gpu;
static int dyn_smem; /* of the kernel compiled last */

/* Compiles f for the GPU's arch. With CG_PTX_DIR set the PTX is also written
 * there; a build without LLVM (CG_GPU_NO_LLVM) reads it back from there
 * instead, so the GPU machine needs no LLVM. NULL when there is no GPU. */
static CUfn kernel(IrFunc *f)
{
    const char *dir = getenv("CG_PTX_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.ptx", dir ? dir : ".", f->name);
    StrBuf ptx;
    sb_init(&ptx);
#ifndef CG_GPU_NO_LLVM
    Diag d;
    diag_init(&d, NULL);
    CgOptions o = {arch, 3, NULL, false, false};
    pass_layout(f);
    CgKernel k;
    cg_kernel_init(&k);
    if (!cg_compile(f, &o, &d, NULL, &k)) {
        fprintf(stderr, "%s: %s\n", f->name, d.text.data);
        exit(1);
    }
    diag_free(&d);
    sb_write(&ptx, k.ptx.data, k.ptx.len);
    dyn_smem = k.dynamic_shared; /* the kernel's metadata */
    cg_kernel_free(&k);
    FILE *fp = dir ? fopen(path, "w") : NULL;
    if (fp) {
        fputs(ptx.data, fp);
        fclose(fp);
    }
    /* the metadata the PTX does not carry, beside it */
    snprintf(path, sizeof path, "%s/%s.smem", dir ? dir : ".", f->name);
    fp = dir ? fopen(path, "w") : NULL;
    if (fp) {
        fprintf(fp, "%d\n", dyn_smem);
        fclose(fp);
    }
#else
    FILE *fp = fopen(path, "r");
    if (!fp) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, fp)) > 0)
        sb_write(&ptx, buf, got);
    fclose(fp);
    snprintf(path, sizeof path, "%s/%s.smem", dir ? dir : ".", f->name);
    fp = fopen(path, "r");
    if (!fp || fscanf(fp, "%d", &dyn_smem) != 1) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    fclose(fp);
#endif
    if (!have_gpu) {
        sb_free(&ptx);
        return NULL;
    }
    CUmod m;
    CUfn fn;
    CU(cu.load(&m, ptx.data));
    CU(cu.get_fn(&fn, m, f->name));
    if (dyn_smem > 48 * 1024)
        CU(set_attr(fn, 8 /* MAX_DYNAMIC_SHARED_SIZE_BYTES */, dyn_smem));
    sb_free(&ptx);
    return fn;
}

static CUdeviceptr dbuf(const void *host, size_t bytes)
{
    CUdeviceptr p;
    CU(cu.alloc(&p, bytes));
    if (host) {
        CU(cu.htod(p, host, bytes));
    } else {
        void *poison = malloc(bytes);
        memset(poison, 0x7f, bytes);
        CU(cu.htod(p, poison, bytes));
        free(poison);
    }
    return p;
}

static void fetch(void *host, CUdeviceptr p, size_t bytes) { CU(cu.dtoh(host, p, bytes)); }

static void run(CUfn fn, unsigned gx, unsigned gy, int warps, void **args)
{
    CU(cu.launch(fn, gx, gy, 1, (unsigned)warps * 32, 1, 1, (unsigned)dyn_smem, NULL, args, NULL));
    CU(cu.sync());
}

static void verdict(const char *name, bool ok)
{
    printf("%s %s\n", ok ? "PASS" : "FAIL", name);
    if (ok)
        passed++;
    else
        failures++;
}

static float frand(void) { return (float)rand() / (float)RAND_MAX * 8.0f - 4.0f; }

static double rel_err(const float *got, const double *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)got[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void t_vector_add(Arena *a, int n, int ndiv)
{
    Want w;
    CUfn fn = kernel(k_vector_add(a, ndiv, &w));
    if (!fn)
        return;
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    float *o = malloc(sizeof(float) * (size_t)(n + 64));
    for (int i = 0; i < n; i++)
        x[i] = frand(), y[i] = frand();
    CUdeviceptr dx = dbuf(x, sizeof(float) * (size_t)n), dy = dbuf(y, sizeof(float) * (size_t)n);
    CUdeviceptr dout = dbuf(NULL, sizeof(float) * (size_t)(n + 64));
    void *args[] = {&dx, &dy, &dout, &n};
    run(fn, (unsigned)(n + 1023) / 1024, 1, 4, args);
    fetch(o, dout, sizeof(float) * (size_t)(n + 64));
    bool ok = true;
    for (int i = 0; i < n; i++)
        ok &= o[i] == x[i] + y[i];
    unsigned guard;
    memcpy(&guard, &o[n], 4);
    ok &= guard == 0x7f7f7f7fu; /* masked-off lanes wrote nothing */
    char name[64];
    snprintf(name, sizeof name, "vector_add n=%d%s", n,
             ndiv == 16 ? " (n%16 == 0: vector access)" : "");
    verdict(name, ok);
    cu.free(dx), cu.free(dy), cu.free(dout);
    free(x), free(y), free(o);
}

static void t_softmax(Arena *a, int rows, int cols, int block, int warps)
{
    Want w;
    IrFunc *f = k_softmax(a, block, warps, &w);
    CUfn fn = kernel(f);
    if (!fn)
        return;
    size_t n = (size_t)rows * (size_t)cols;
    float *x = malloc(sizeof(float) * n), *o = malloc(sizeof(float) * n);
    double *ref = malloc(sizeof(double) * n);
    for (size_t i = 0; i < n; i++)
        x[i] = frand();
    for (int r = 0; r < rows; r++) {
        double mx = -INFINITY, s = 0;
        for (int c = 0; c < cols; c++)
            mx = fmax(mx, x[(size_t)r * cols + c]);
        for (int c = 0; c < cols; c++)
            s += exp(x[(size_t)r * cols + c] - mx);
        for (int c = 0; c < cols; c++)
            ref[(size_t)r * cols + c] = exp(x[(size_t)r * cols + c] - mx) / s;
    }
    CUdeviceptr dx = dbuf(x, sizeof(float) * n), dout = dbuf(NULL, sizeof(float) * n);
    void *args[] = {&dout, &dx, &cols, &cols};
    run(fn, (unsigned)rows, 1, warps, args);
    fetch(o, dout, sizeof(float) * n);
    double e = rel_err(o, ref, n);
    char name[96];
    snprintf(name, sizeof name, "softmax %dx%d BLOCK=%d warps=%d (rel err %.2g)", rows, cols, block,
             warps, e);
    verdict(name, e < 1e-5);
    cu.free(dx), cu.free(dout);
    free(x), free(o), free(ref);
}

static void t_rows(Arena *a)
{
    enum { R = 16, C = 64 };
    Want w;
    CUfn fn = kernel(k_rows(a, &w));
    if (!fn)
        return;
    float x[R * C], mx[R], col[C];
    int arg[R], stride = C;
    for (int i = 0; i < R * C; i++)
        x[i] = (float)(rand() % 11 - 5); /* many ties */
    x[0] = NAN;                          /* row 0: a NaN first wins argmax, max skips it */
    x[C + 5] = NAN;                      /* row 1: a later NaN is ignored */
    x[2 * C + C - 1] = NAN;
    memset(col, 0, sizeof col);
    CUdeviceptr dx = dbuf(x, sizeof x), dm = dbuf(NULL, sizeof mx), da = dbuf(NULL, sizeof arg);
    CUdeviceptr dc = dbuf(col, sizeof col);
    void *args[] = {&dx, &dm, &da, &dc, &stride};
    run(fn, 1, 1, 4, args);
    fetch(mx, dm, sizeof mx), fetch(arg, da, sizeof arg), fetch(col, dc, sizeof col);
    bool ok = true;
    for (int r = 0; r < R; r++) {
        int best = 0;
        float m = x[r * C];
        for (int c = 1; c < C; c++) {
            if (x[r * C + c] > x[r * C + best])
                best = c;
            m = fmaxf(m, x[r * C + c]);
        }
        ok &= mx[r] == m && arg[r] == best;
    }
    verdict("row max / argmax (first index on ties, NaN as a sequential scan)", ok);
    ok = true;
    for (int c = 0; c < C; c++) {
        float s = 0;
        for (int r = 0; r < R; r++)
            s += x[r * C + c];
        ok &= col[c] == s || (isnan(col[c]) && isnan(s));
    }
    verdict("column sums through atomic_add", ok);
    cu.free(dx), cu.free(dm), cu.free(da), cu.free(dc);
}

static void t_flow(Arena *a, int n)
{
    Want w;
    CUfn fn = kernel(k_flow(a, &w));
    if (!fn)
        return;
    float *x = malloc(sizeof(float) * (size_t)n), o;
    double t = 0;
    for (int i = 0; i < n; i++)
        x[i] = frand() + 4.5f, t += x[i];
    while (t > 1)
        t /= 2;
    if (!(n > 5))
        t = -t;
    CUdeviceptr dx = dbuf(x, sizeof(float) * (size_t)n), dout = dbuf(NULL, 4);
    void *args[] = {&dx, &dout, &n};
    run(fn, 1, 1, 4, args);
    fetch(&o, dout, 4);
    char name[64];
    snprintf(name, sizeof name, "for/while/if n=%d (%g vs %g)", n, o, t);
    verdict(name, fabs(o - t) < 1e-5);
    cu.free(dx), cu.free(dout);
    free(x);
}

static uint16_t to_half(float v) /* exact for the small values used here */
{
    _Float16 h = (_Float16)v;
    uint16_t b;
    memcpy(&b, &h, 2);
    return b;
}

static uint16_t to_bf16(float v)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    return (uint16_t)(b >> 16);
}

static void t_dot(Arena *a, DType in, DType acc, int M, int K, int N)
{
    Want w;
    CUfn fn = kernel(k_dot_sized(a, in, acc, M, K, N, &w));
    if (!fn)
        return;
    float *av = malloc(sizeof(float) * (size_t)(M * K)),
          *bv = malloc(sizeof(float) * (size_t)(K * N));
    unsigned char *abuf = malloc((size_t)(M * K * 4)), *bbuf = malloc((size_t)(K * N * 4));
    int es = dtype_bits(in) / 8;
    for (int i = 0; i < M * K; i++)
        av[i] = (float)(rand() % 9 - 4) / (in == DT_I8 ? 1 : 4);
    for (int i = 0; i < K * N; i++)
        bv[i] = (float)(rand() % 9 - 4) / (in == DT_I8 ? 1 : 4);
    for (int pass = 0; pass < 2; pass++) {
        float *src = pass ? bv : av;
        unsigned char *dst = pass ? bbuf : abuf;
        int cnt = pass ? K * N : M * K;
        for (int i = 0; i < cnt; i++) {
            if (in == DT_F16) {
                uint16_t h = to_half(src[i]);
                memcpy(dst + 2 * i, &h, 2);
            } else if (in == DT_BF16) {
                uint16_t h = to_bf16(src[i]);
                memcpy(dst + 2 * i, &h, 2);
            } else if (in == DT_F32)
                memcpy(dst + 4 * i, &src[i], 4);
            else
                dst[i] = (unsigned char)(signed char)src[i];
        }
    }
    CUdeviceptr da = dbuf(abuf, (size_t)(M * K * es)), db = dbuf(bbuf, (size_t)(K * N * es));
    CUdeviceptr dc = dbuf(NULL, (size_t)(M * N * 4));
    void *args[] = {&da, &db, &dc};
    run(fn, 1, 1, 4, args);
    unsigned char *out = malloc((size_t)(M * N * 4));
    fetch(out, dc, (size_t)(M * N * 4));
    bool ok = true;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += (double)av[m * K + k] * bv[k * N + n];
            if (acc == DT_I32) {
                int32_t g;
                memcpy(&g, out + 4 * (m * N + n), 4);
                ok &= g == (int32_t)s;
            } else {
                float g;
                memcpy(&g, out + 4 * (m * N + n), 4);
                ok &= g == (float)s;
            }
        }
    char name[64];
    snprintf(name, sizeof name, "dot %s -> %s %dx%dx%d%s", dtype_name(in), dtype_name(acc), M, K, N,
             dyn_smem ? " (dynamic shared memory)" : "");
    verdict(name, ok);
    cu.free(da), cu.free(db), cu.free(dc);
    free(av), free(bv), free(abuf), free(bbuf), free(out);
}

static void t_scan(Arena *a)
{
    enum { R = 16, C = 64 };
    Want w;
    CUfn fn = kernel(k_scan(a, &w));
    if (!fn)
        return;
    float x[R * C], o[3][R * C];
    double ref[3][R * C];
    for (int i = 0; i < R * C; i++)
        x[i] = frand();
    for (int r = 0; r < R; r++) {
        double s = 0;
        for (int c = 0; c < C; c++)
            ref[0][r * C + c] = s += x[r * C + c];
        s = 0;
        for (int c = C - 1; c >= 0; c--)
            ref[2][r * C + c] = s += x[r * C + c];
    }
    for (int c = 0; c < C; c++) {
        double s = 0;
        for (int r = 0; r < R; r++)
            ref[1][r * C + c] = s += x[r * C + c];
    }
    CUdeviceptr dx = dbuf(x, sizeof x), d[3];
    for (int i = 0; i < 3; i++)
        d[i] = dbuf(NULL, sizeof o[i]);
    void *args[] = {&dx, &d[0], &d[1], &d[2]};
    run(fn, 1, 1, 4, args);
    const char *names[3] = {"cumsum axis 1", "cumsum axis 0", "cumsum axis 1 reverse"};
    for (int i = 0; i < 3; i++) {
        fetch(o[i], d[i], sizeof o[i]);
        verdict(names[i], rel_err(o[i], ref[i], R * C) < 1e-5);
        cu.free(d[i]);
    }
    cu.free(dx);
}

static void t_shapes(Arena *a)
{
    enum { R = 16, C = 8 };
    Want w;
    CUfn fn = kernel(k_shapes(a, &w));
    if (!fn)
        return;
    int x[R * C], ot[R * C], oj[2 * R * C], oc[2 * R * C], os[R * C];
    for (int i = 0; i < R * C; i++)
        x[i] = rand() % 1000;
    CUdeviceptr dx = dbuf(x, sizeof x), dt = dbuf(NULL, sizeof ot), dj = dbuf(NULL, sizeof oj);
    CUdeviceptr dc = dbuf(NULL, sizeof oc), ds = dbuf(NULL, sizeof os);
    void *args[] = {&dx, &dt, &dj, &dc, &ds};
    run(fn, 1, 1, 4, args);
    fetch(ot, dt, sizeof ot), fetch(oj, dj, sizeof oj), fetch(oc, dc, sizeof oc),
        fetch(os, ds, sizeof os);
    bool t = true, j = true, c = true, s = true;
    for (int r = 0; r < R; r++)
        for (int k = 0; k < C; k++) {
            t &= ot[k * R + r] == x[r * C + k];
            j &= oj[(r * C + k) * 2] == x[r * C + k] &&
                oj[(r * C + k) * 2 + 1] == x[r * C + k] + 1000;
            c &= oc[r * C + k] == x[r * C + k] && oc[(R + r) * C + k] == x[r * C + k] + 1000;
            s &= os[r * C + k] == 1000;
        }
    verdict("trans", t);
    verdict("join + reshape", j);
    verdict("cat", c);
    verdict("split", s);
    cu.free(dx), cu.free(dt), cu.free(dj), cu.free(dc), cu.free(ds);
}

static void t_counter(Arena *a)
{
    enum { P = 100 };
    Want w;
    CUfn fn = kernel(k_counter(a, &w));
    if (!fn)
        return;
    int zero[4] = {0, 0, 0, 0}, old[P], acc[4];
    CUdeviceptr dc = dbuf(zero, 4), dold = dbuf(NULL, sizeof old), dacc = dbuf(zero, sizeof zero);
    void *args[] = {&dc, &dold, &dacc};
    run(fn, P, 1, 4, args);
    fetch(old, dold, sizeof old), fetch(acc, dacc, sizeof acc);
    int seen[P] = {0};
    bool ok = true;
    for (int i = 0; i < P; i++) {
        ok &= old[i] >= 0 && old[i] < P && !seen[old[i]];
        if (old[i] >= 0 && old[i] < P)
            seen[old[i]] = 1;
    }
    verdict("scalar atomic_add once per program, old values", ok);
    ok = true;
    for (int i = 0; i < 4; i++)
        ok &= acc[i] == P * (P - 1) / 2;
    verdict("small-block atomic_add once per element", ok);
    cu.free(dc), cu.free(dold), cu.free(dacc);
}

static void ref_philox(uint64_t seed, uint32_t offset, uint32_t c[4])
{
    uint32_t c0 = offset, c1 = 0, c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint32_t p0 = c0, p2 = c2;
        c0 = (uint32_t)(((uint64_t)0xCD9E8D57u * p2) >> 32) ^ c1 ^ k0;
        c2 = (uint32_t)(((uint64_t)0xD2511F53u * p0) >> 32) ^ c3 ^ k1;
        c1 = 0xCD9E8D57u * p2;
        c3 = 0xD2511F53u * p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    c[0] = c0, c[1] = c1, c[2] = c2, c[3] = c3;
}

static float ref_uniform(uint32_t u)
{
    int32_t x = (int32_t)u;
    x = x < 0 ? -x - 1 : x;
    return (float)x * 4.6566127342e-10f;
}

static void t_rand(Arena *a)
{
    Want w;
    CUfn fn = kernel(k_rand(a, &w));
    if (!fn)
        return;
    int seed = -12345;
    float u[256], nrm[256];
    uint32_t i0[256];
    CUdeviceptr du = dbuf(NULL, sizeof u), dn = dbuf(NULL, sizeof nrm), di = dbuf(NULL, sizeof i0);
    void *args[] = {&du, &dn, &di, &seed};
    run(fn, 1, 1, 4, args);
    fetch(u, du, sizeof u), fetch(nrm, dn, sizeof nrm), fetch(i0, di, sizeof i0);
    bool ok_u = true, ok_n = true, ok_i = true;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c[4];
        ref_philox((uint64_t)(int64_t)seed, i, c);
        ok_u &= u[i] == ref_uniform(c[0]);
        ok_i &= i0[i] == (c[0] ^ c[3]);
        float u1 = fmaxf(1.0e-7f, ref_uniform(c[0])), th = 6.283185307179586f * ref_uniform(c[1]);
        double want = sqrt(-2.0 * log(u1)) * cos(th);
        ok_n &= fabs(nrm[i] - want) < 1e-5 * (1 + fabs(want));
    }
    verdict("rand (Philox uniform)", ok_u);
    verdict("randn (Box-Muller)", ok_n);
    verdict("randint4x", ok_i);
    cu.free(du), cu.free(dn), cu.free(di);
}

int main(void)
{
    have_gpu = cu_load();
    if (!have_gpu && !getenv("CG_PTX_DIR")) {
        printf("skipped: no CUDA driver or GPU\n");
        return 77;
    }
    srand(1234);
    Arena a;
    arena_init(&a);
    t_vector_add(&a, 98432, 1);
    t_vector_add(&a, 1000, 1);
    t_vector_add(&a, 98432, 16);
    t_vector_add(&a, 1008, 16);
    t_softmax(&a, 4, 6, 8, 4);
    t_softmax(&a, 1823, 781, 1024, 4);
    t_softmax(&a, 64, 4096, 4096, 8);
    t_softmax(&a, 8, 16384, 16384, 8);
    t_softmax(&a, 5, 100, 128, 1);
    t_softmax(&a, 7, 33, 64, 2);
    t_softmax(&a, 9, 2000, 2048, 32);
    t_rows(&a);
    t_flow(&a, 1000);
    t_flow(&a, 3);
    t_dot(&a, DT_F16, DT_F32, 64, 32, 64);
    t_dot(&a, DT_BF16, DT_F32, 64, 32, 64);
    t_dot(&a, DT_F32, DT_F32, 64, 32, 64);
    t_dot(&a, DT_I8, DT_I32, 64, 32, 64);
    t_dot(&a, DT_F32, DT_F32, 128, 64, 128);
    t_dot(&a, DT_F16, DT_F32, 16, 16, 16);
    t_scan(&a);
    t_shapes(&a);
    t_counter(&a);
    t_rand(&a);
    arena_free(&a);
    if (have_gpu)
        printf("%d passed, %d failed (%s)\n", passed, failures, arch);
    else
        printf("no GPU: PTX written to %s\n", getenv("CG_PTX_DIR"));
    return failures ? 1 : 0;
}
