/* vector_add_aot: out = x + y through a header tkc wrote ahead of time; no
 * libtk, no link against libcuda: the header loads the driver itself, and
 * this program asks it for the driver calls it makes (memory, copies).
 *
 *   tkc --emit=header vector_add.tk -k vector_add -D BLOCK=1024 \
 *       -s '*fp32:16,*fp32:16,*fp32:16,i32:16' -s '*fp32,*fp32,*fp32,i32' \
 *       --out-name vector_add_1024 [--cubin-arch sm_90a] -o vector_add_1024.h
 *   cc -I. vector_add_aot.c -ldl -o vector_add_aot
 *
 * On every GPU it runs the dispatcher with aligned arguments (the :16
 * specialisation), a misaligned pointer and an odd n (the plain one), and
 * from four threads on their own streams at once, each result checked
 * exactly against the CPU. Prints PASS or FAIL; exits 0, 1, or 77 (with
 * the reason) where there is no GPU. Usage: vector_add_aot [n] */
#include "vector_add_1024.h"

#include <pthread.h>

enum { NO_GPU = 77, THREADS = 4 };

/* The driver calls this program makes, from the library the header loaded. */
typedef struct Cuda {
    int (*cuDeviceGetCount)(int *);
    int (*cuDeviceGet)(int *, int);
    int (*cuDeviceGetName)(char *, int, int);
    int (*cuDevicePrimaryCtxRetain)(tk_aot_context *, int);
    int (*cuDevicePrimaryCtxRelease)(int);
    int (*cuCtxSetCurrent)(tk_aot_context);
    int (*cuCtxSynchronize)(void);
    int (*cuMemAlloc)(tk_devptr *, size_t);
    int (*cuMemFree)(tk_devptr);
    int (*cuMemcpyHtoD)(tk_devptr, const void *, size_t);
    int (*cuMemcpyDtoH)(void *, tk_devptr, size_t);
    int (*cuMemsetD8)(tk_devptr, unsigned char, size_t);
    int (*cuStreamCreate)(tk_stream *, unsigned);
    int (*cuStreamDestroy)(tk_stream);
} Cuda;

static Cuda cu;

static int bind(const char *name, void *slot)
{
    void *p = tk_aot_cuda_symbol(name);
    memcpy(slot, &p, sizeof p);
    return p != NULL;
}

static int bind_all(void)
{
    return bind("cuDeviceGetCount", &cu.cuDeviceGetCount) && bind("cuDeviceGet", &cu.cuDeviceGet) &&
        bind("cuDeviceGetName", &cu.cuDeviceGetName) &&
        bind("cuDevicePrimaryCtxRetain", &cu.cuDevicePrimaryCtxRetain) &&
        bind("cuDevicePrimaryCtxRelease_v2", &cu.cuDevicePrimaryCtxRelease) &&
        bind("cuCtxSetCurrent", &cu.cuCtxSetCurrent) &&
        bind("cuCtxSynchronize", &cu.cuCtxSynchronize) && bind("cuMemAlloc_v2", &cu.cuMemAlloc) &&
        bind("cuMemFree_v2", &cu.cuMemFree) && bind("cuMemcpyHtoD_v2", &cu.cuMemcpyHtoD) &&
        bind("cuMemcpyDtoH_v2", &cu.cuMemcpyDtoH) && bind("cuMemsetD8_v2", &cu.cuMemsetD8) &&
        bind("cuStreamCreate", &cu.cuStreamCreate) &&
        bind("cuStreamDestroy_v2", &cu.cuStreamDestroy);
}

/* A failed driver call of this program: say which, and fail the run. */
#define DRV(call)                                                                                  \
    do {                                                                                           \
        int drv_r_ = (call);                                                                       \
        if (drv_r_ != 0) {                                                                         \
            fprintf(stderr, "vector_add_aot: %s failed with CUDA error %d\n", #call, drv_r_);      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#define LAUNCH(call)                                                                               \
    do {                                                                                           \
        tk_status launch_s_ = (call);                                                              \
        if (launch_s_ != TK_OK) {                                                                  \
            fprintf(stderr, "vector_add_aot: %s failed (%d): %s\n", #call, (int)launch_s_,         \
                    tk_aot_last_error());                                                          \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

typedef struct Buffers {
    unsigned n;
    size_t bytes;           /* of each buffer: n + 4 floats */
    float *x, *y, *out;     /* host */
    tk_devptr dx, dy, dout; /* device */
} Buffers;

static tk_grid grid_for(unsigned n)
{
    tk_grid g = {(n + vector_add_1024_BLOCK - 1) / vector_add_1024_BLOCK, 1, 1};
    return g;
}

/* out[from..from+n) against x + y on the CPU, exactly; `shift` floats of x skipped. */
static unsigned mismatches(const Buffers *b, unsigned from, unsigned n, unsigned shift,
                           const char *what)
{
    unsigned bad = 0;
    for (unsigned i = from; i < from + n; i++) {
        float want = b->x[i + shift] + b->y[i];
        if (b->out[i] != want && bad++ < 3)
            fprintf(stderr, "vector_add_aot: %s: out[%u] = %g, expected %g\n", what, i,
                    (double)b->out[i], (double)want);
    }
    return bad;
}

/* Runs one launch of n values (x shifted by `shift` floats) and checks it. */
static int run_once(Buffers *b, unsigned n, unsigned shift, const char *what)
{
    DRV(cu.cuMemsetD8(b->dout, 0xff, b->bytes)); /* NaN: nothing unwritten passes */
    LAUNCH(vector_add_1024(NULL, grid_for(n), b->dx + shift * sizeof(float), b->dy, b->dout,
                           (int32_t)n));
    DRV(cu.cuCtxSynchronize());
    DRV(cu.cuMemcpyDtoH(b->out, b->dout, b->bytes));
    unsigned bad = mismatches(b, 0, n, shift, what);
    printf("  %-44s n=%-8u %s\n", what, n, bad ? "MISMATCH" : "exact");
    return bad != 0;
}

typedef struct Slice {
    Buffers *b;
    tk_stream stream;
    unsigned from, n;
    tk_status status;
    char message[1024]; /* tk_aot_last_error() is per thread */
} Slice;

/* A thread with no current context: the launcher uses its stream's. */
static void *run_slice(void *p)
{
    Slice *s = p;
    size_t at = (size_t)s->from * sizeof(float);
    s->status = vector_add_1024(s->stream, grid_for(s->n), s->b->dx + at, s->b->dy + at,
                                s->b->dout + at, (int32_t)s->n);
    snprintf(s->message, sizeof s->message, "%s", tk_aot_last_error());
    return NULL;
}

static int run_threads(Buffers *b)
{
    Slice s[THREADS];
    pthread_t t[THREADS];
    int started[THREADS];
    unsigned per = (b->n / THREADS) & ~15u; /* each slice stays 16-aligned */
    DRV(cu.cuMemsetD8(b->dout, 0xff, b->bytes));
    for (int i = 0; i < THREADS; i++) {
        s[i].b = b;
        s[i].from = per * (unsigned)i;
        s[i].n = i == THREADS - 1 ? b->n - s[i].from : per;
        DRV(cu.cuStreamCreate(&s[i].stream, 0));
    }
    for (int i = 0; i < THREADS; i++) {
        started[i] = pthread_create(&t[i], NULL, run_slice, &s[i]) == 0;
        if (!started[i])
            run_slice(&s[i]); /* no thread to be had: launch from here */
    }
    int failed = 0;
    for (int i = 0; i < THREADS; i++) {
        if (started[i])
            pthread_join(t[i], NULL);
        if (s[i].status != TK_OK) {
            fprintf(stderr, "vector_add_aot: thread %d: %s\n", i, s[i].message);
            failed = 1;
        }
    }
    DRV(cu.cuCtxSynchronize());
    for (int i = 0; i < THREADS; i++)
        DRV(cu.cuStreamDestroy(s[i].stream));
    DRV(cu.cuMemcpyDtoH(b->out, b->dout, b->bytes));
    unsigned bad = mismatches(b, 0, b->n, 0, "4 threads, own streams");
    printf("  %-44s n=%-8u %s\n", "4 threads on their own streams", b->n,
           bad || failed ? "MISMATCH" : "exact");
    return bad || failed;
}

static int run_device(int ordinal, unsigned n)
{
    int dev = 0;
    char name[256] = "";
    tk_aot_context ctx = NULL;
    DRV(cu.cuDeviceGet(&dev, ordinal));
    DRV(cu.cuDeviceGetName(name, sizeof name, dev));
    DRV(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
    DRV(cu.cuCtxSetCurrent(ctx));
    printf("device %d: %s\n", ordinal, name);
    size_t bytes = ((size_t)n + 4) * sizeof(float);
    Buffers b = {n, bytes, NULL, NULL, NULL, 0, 0, 0};
    b.x = malloc(bytes), b.y = malloc(bytes), b.out = malloc(bytes);
    if (!b.x || !b.y || !b.out)
        return 1;
    for (unsigned i = 0; i < n + 4; i++) {
        b.x[i] = (float)i * 0.5f - 3.0f;
        b.y[i] = 1.0f / (float)(i + 1);
    }
    DRV(cu.cuMemAlloc(&b.dx, bytes));
    DRV(cu.cuMemAlloc(&b.dy, bytes));
    DRV(cu.cuMemAlloc(&b.dout, bytes));
    DRV(cu.cuMemcpyHtoD(b.dx, b.x, bytes));
    DRV(cu.cuMemcpyHtoD(b.dy, b.y, bytes));
    LAUNCH(vector_add_1024_load(NULL)); /* both specialisations, here, now */
    printf("  runs from: %s (:16 launcher), %s (plain)\n",
           tk_aot_image_in(&vector_add_1024_0d1d2d3d_spec, NULL),
           tk_aot_image_in(&vector_add_1024_0123_spec, NULL));
    int bad = run_once(&b, n & ~15u, 0, "aligned, n % 16 == 0 (:16 launcher)");
    bad |= run_once(&b, n | 1u, 0, "odd n (plain launcher)");
    bad |= run_once(&b, n & ~15u, 1, "x misaligned by 4 bytes (plain launcher)");
    bad |= run_threads(&b);
    DRV(cu.cuMemFree(b.dx));
    DRV(cu.cuMemFree(b.dy));
    DRV(cu.cuMemFree(b.dout));
    DRV(cu.cuCtxSetCurrent(NULL));
    DRV(cu.cuDevicePrimaryCtxRelease(dev));
    free(b.x), free(b.y), free(b.out);
    return bad;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 1u << 20;
    if (n < 64 * THREADS)
        n = 64 * THREADS;
    if (!tk_aot_cuda_symbol("cuInit")) {
        printf("vector_add_aot: SKIP: no GPU here (%s)\n", tk_aot_last_error());
        return NO_GPU;
    }
    int count = 0;
    if (!bind_all() || cu.cuDeviceGetCount(&count) != 0 || count == 0) {
        printf("vector_add_aot: SKIP: no GPU here (%s)\n",
               count ? tk_aot_last_error() : "the driver sees no device");
        return NO_GPU;
    }
    int bad = 0;
    for (int d = 0; d < count && d < 8; d++)
        bad |= run_device(d, n);
    printf("%s: vector_add_aot on %d device%s\n", bad ? "FAIL" : "PASS", count < 8 ? count : 8,
           count == 1 ? "" : "s");
    return bad ? 1 : 0;
}
