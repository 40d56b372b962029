/* harness.h: the small test harness of the per-construct numeric suite.
 * Assumes only the public API (tk/tk.h), so one binary runs on the reference
 * interpreter and on a GPU. Guarantees: every case draws fresh seeded random
 * inputs, poisons its outputs before the launch, and reports exactly one
 * PASS or FAIL line; helpers are no-ops once a case has failed, so case code
 * reads straight through. */
#ifndef TK_TEST_GPU_HARNESS_H
#define TK_TEST_GPU_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tk/tk.h"

#define H_MAX_MODULES 32
#define H_MAX_ALLOCS  64

typedef struct H {
    /* options */
    bool gpu;           /* launch on the GPU instead of the interpreter */
    const char *filter; /* run only cases whose name contains this */
    const char *kdir;   /* folder of the .tk kernels */
    uint64_t seed;      /* base seed; each case mixes in its name */
    long skip;          /* matching cases to skip (restart after a crash) */
    bool list;          /* only print the case names */
    bool protocol;      /* print @begin lines for the watching parent */
    /* state */
    tk_context *ctx;
    const char *ctx_error; /* why the context could not be created */
    struct {
        char file[64];
        tk_module *mod;
        const char *err;
    } mods[H_MAX_MODULES];
    int nmods;
    long index;     /* matching cases seen so far */
    char name[160]; /* the current case */
    char why[512];  /* first failure of the current case */
    bool failed;
    double worst;      /* largest error among the case's checks */
    bool poisoned_ctx; /* a kernel faulted: the CUDA context is unusable */
    uint64_t rng;
    void **host;
    int nhost, caphost; /* host buffers of the current case */
    void *dev[H_MAX_ALLOCS];
    int ndev;
    int passed, failedn;
} H;

/* ---- case life cycle ---------------------------------------------------- */

/* Starts a case named by fmt; false when filtered out or skipped. */
bool h_begin(H *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records a failure (the first reason is kept). */
void h_fail(H *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints PASS/FAIL for the current case, frees its buffers. */
void h_end(H *h);
/* Releases the modules and the context. */
void h_cleanup(H *h);

/* ---- kernels and launches ------------------------------------------------- */

tk_kernel *h_kernel(H *h, const char *file, const char *name);
/* Launches and synchronises; a failure is recorded with tk_last_error(). */
bool h_launch(H *h, tk_kernel *k, tk_grid grid, const tk_arg *args, int nargs, int num_warps);
/* As h_launch, in clusters of num_ctas CTAs (Triton's num_ctas; 0: 1). */
bool h_launch_ctas(H *h, tk_kernel *k, tk_grid grid, const tk_arg *args, int nargs, int num_warps,
                   int num_ctas);
/* As h_launch, but returns the status and records nothing (for cases that
 * expect an error), with debug on (device_asserts check). *msg gets
 * tk_last_error() copied into buf. */
tk_status h_launch_status(H *h, tk_kernel *k, tk_grid grid, const tk_arg *args, int nargs,
                          int num_warps, char *buf, size_t buflen);
#define H_ARGS(...)                                                                                \
    ((const tk_arg[]){__VA_ARGS__}), (int)(sizeof((const tk_arg[]){__VA_ARGS__}) / sizeof(tk_arg))
tk_grid h_grid(unsigned x, unsigned y, unsigned z);

/* ---- memory ------------------------------------------------------------------- */

void *h_malloc(H *h, size_t bytes); /* zeroed host memory, freed by h_end */
size_t h_dtype_size(tk_dtype t);
const char *h_dtype_name(tk_dtype t);
bool h_is_float(tk_dtype t);
/* A device buffer holding n values of type t converted from vals. */
void *h_upload(H *h, tk_dtype t, const double *vals, size_t n);
void *h_upload_raw(H *h, const void *bytes, size_t n);
/* A device buffer of n values of type t, poisoned (NaN for floats, 0xAB bytes for ints). */
void *h_output(H *h, tk_dtype t, size_t n);
/* Copies n values of type t back and widens them to double. */
double *h_download(H *h, tk_dtype t, const void *dev, size_t n);
void *h_download_raw(H *h, const void *dev, size_t bytes);
/* Integer buffers with every bit kept (i64/u64 beyond 2^53). */
void *h_upload_int(H *h, tk_dtype t, const int64_t *vals, size_t n);
int64_t *h_download_int(H *h, tk_dtype t, const void *dev, size_t n);

/* ---- random inputs ----------------------------------------------------------- */

uint64_t h_rand_u64(H *h);
double h_uniform(H *h, double lo, double hi); /* never exactly 0 */
double h_normal(H *h);
int64_t h_randint(H *h, int64_t lo, int64_t hi);    /* inclusive */
int64_t h_randint_nz(H *h, int64_t lo, int64_t hi); /* inclusive, never 0 (unless lo == hi == 0) */
/* n values valid for dtype t: floats uniform in [lo, hi] rounded to t, ints
 * in [lo, hi] and never 0 (so they can divide). */
double *h_rand_array(H *h, tk_dtype t, size_t n, double lo, double hi);

/* ---- values of narrow dtypes ------------------------------------------------- */

uint16_t h_f32_to_f16(float f); /* round to nearest even */
float h_f16_to_f32(uint16_t b);
uint16_t h_f32_to_bf16(float f); /* round to nearest even */
float h_bf16_to_f32(uint16_t b);
/* fp8 (TK_F8E4NV, TK_F8E5, TK_F8E4B15) from and to its byte, computed
 * independently of the library: decode from the fields, encode by searching
 * all codes (fp8e4b15 as Triton converts: see harness.c). */
double h_fp8_decode(tk_dtype t, uint8_t c);
uint8_t h_fp8_encode(tk_dtype t, double v);
/* v rounded to the nearest value of dtype t (ints wrap like a C cast of an int64). */
double h_round_to(tk_dtype t, double v);
/* Wraps an integer to dtype t's width and signedness. */
int64_t h_wrap(tk_dtype t, int64_t v);

/* ---- checks ----------------------------------------------------------------------- */

/* ||out - ref|| / ||ref|| <= tol (tol 0: exact); NaN anywhere fails. */
void h_check(H *h, const char *what, const double *out, const double *ref, size_t n, double tol);
/* ||out - ref|| / ||ref|| (||out - ref|| when ref is all zeros), the
 * measure h_check applies. */
double h_rel_err(const double *out, const double *ref, size_t n);
/* acc + a @ b in double for row-major a (m x k) and b (k x n, or n x k when
 * bt); acc may be NULL. */
double *h_matmul_ref(H *h, const double *a, const double *b, const double *acc, int m, int n, int k,
                     bool bt);
/* A GEMM's operands: random A (m x k) and B (k x n, or n x k when bt) in
 * [-1, 1] on the device, and a poisoned C (m x n). With K = 0 the operands
 * are one-element buffers, so every pointer stays valid. */
typedef struct HGemm {
    tk_dtype t;
    int m, n, k;
    bool bt;
    double *a, *b;
    void *da, *db, *dc;
} HGemm;
HGemm h_gemm_operands(H *h, tk_dtype t, int m, int n, int k, bool bt);
/* Downloads C and checks it against the fp64 product within tol; with
 * K = 0, C must be exactly zero. */
void h_gemm_check(H *h, const HGemm *g, double tol);
/* C = A @ B (contiguous) by a persistent kernel taking (a, b, c, M, N, K)
 * and the constexprs BM, BN, BK, NUM_SMS, on `programs` programs, checked
 * within tol. */
void h_persistent_gemm(H *h, tk_kernel *k, tk_dtype t, const int mnk[3], const int block[3],
                       int programs, int warps, double tol);
/* Exact integer equality. */
void h_check_int(H *h, const char *what, const int64_t *out, const int64_t *ref, size_t n);
/* Element-wise |out - ref| <= atol (for values whose norm says little). */
void h_check_abs(H *h, const char *what, const double *out, const double *ref, size_t n,
                 double atol);
/* The n bytes from dev + off*size still hold the poison of h_output. */
void h_check_untouched(H *h, const char *what, tk_dtype t, const void *dev, size_t off, size_t n);
/* Records a failure unless cond holds. */
void h_expect(H *h, bool cond, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- stdout capture (device_print) -------------------------------------------- */

/* Starts sending fd 1 to a temporary file; h_capture_end returns its text. */
bool h_capture_begin(H *h);
char *h_capture_end(H *h);

/* ---- Philox 4x32-10, the generator behind tl.rand (Triton's streams) --------- */

void h_philox(uint32_t seed_lo, uint32_t seed_hi, uint32_t c[4]);
float h_uint_to_uniform(uint32_t x);

/* ---- the case groups --------------------------------------------------------- */

void cases_grid_memory(H *h);
void cases_shape(H *h);
void cases_gather(H *h);
void cases_atomic(H *h);
void cases_lock(H *h);
void cases_arith(H *h);
void cases_cast(H *h);
void cases_math(H *h);
void cases_reduce(H *h);
void cases_dot(H *h);
void cases_dot_prec(H *h);
void cases_control(H *h);
void cases_misc(H *h);
void cases_random_debug(H *h);
void cases_fp8(H *h);
void cases_pipeline(H *h);
void cases_flatten(H *h);
void cases_warp_spec(H *h);
void cases_tma_store(H *h);
void cases_cluster(H *h);

static inline size_t h_cdiv(size_t a, size_t b) { return (a + b - 1) / b; }

#endif
