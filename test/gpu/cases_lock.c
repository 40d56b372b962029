/* cases_lock.c: spin locks. Many programs take a few locks with
 * atomic_cas(lock, 0, 1) and release them with atomic_xchg(lock, 0), and in
 * between read and write shared partial rows with plain loads and stores:
 * the pattern of Triton tutorial 05's layer-norm backward pass. Only the
 * acquire-release ordering of the two atomics keeps those accesses apart,
 * and a missing fence shows only some of the time, so the GPU runs each
 * size 200 times (20 for the tutorial), poisoning the outputs before every
 * launch and counting the launches that came out wrong. The data of the
 * lock case are integers, so the CPU's sums are exact; the tutorial runs in
 * fp32 against an fp64 reference. A control runs the lock case with
 * relaxed atomics and prints how many launches that got wrong (on the GPU
 * some should; on the interpreter none can). */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Resets the lock state (zeros) and poisons the outputs between launches. */
static void reset(H *h, void *dev, int byte, size_t bytes)
{
    if (!h->failed && tk_memset(h->ctx, dev, byte, bytes) != TK_OK)
        h_fail(h, "tk_memset: %s", tk_last_error());
}

static int poison(tk_dtype t) { return h_is_float(t) ? 0xFF : 0xAB; }

/* relaxed: the control, whose wrong launches are counted and printed but
 * never fail the case. */
static void lock_case(H *h, tk_dtype t, int rows, int cols, int block, int nlocks, int warps,
                      bool relaxed)
{
    int runs = h->gpu ? 200 : 3;
    if (!h_begin(h, "locks.%s_%s.rows%d.cols%d.locks%d.runs%d",
                 relaxed ? "control_relaxed_accumulate" : "spin_accumulate", h_dtype_name(t), rows,
                 cols, nlocks, runs))
        return;
    tk_kernel *k = h_kernel(h, "lock.tk", relaxed ? "lock_accumulate_relaxed" : "lock_accumulate");
    size_t n = (size_t)rows * cols, np = (size_t)nlocks * cols;
    int64_t *x = h_malloc(h, n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++)
        x[i] = h_randint(h, -1000, 1000); /* |sums| < 2^24: exact in fp32 too */
    int64_t *ref = h_malloc(h, np * sizeof(int64_t)), *rvis = h_malloc(h, nlocks * sizeof(int64_t));
    for (int r = 0; r < rows; r++) {
        rvis[r % nlocks]++;
        for (int c = 0; c < cols; c++)
            ref[(size_t)(r % nlocks) * cols + c] += x[(size_t)r * cols + c];
    }
    double *xd = h_malloc(h, n * sizeof(double)), *refd = h_malloc(h, np * sizeof(double));
    for (size_t i = 0; i < n; i++)
        xd[i] = (double)x[i];
    for (size_t i = 0; i < np; i++)
        refd[i] = (double)ref[i];
    void *dx = h_upload(h, t, xd, n), *dpart = h_output(h, t, np);
    void *dflag = h_output(h, TK_I32, nlocks), *dvis = h_output(h, TK_I32, nlocks);
    void *dlock = h_output(h, TK_I32, nlocks);
    int bad = 0, first_bad = -1;
    char first_why[200] = "";
    for (int run = 0; run < runs && !h->failed; run++) {
        reset(h, dpart, poison(t), np * h_dtype_size(t));
        reset(h, dflag, 0, nlocks * sizeof(int32_t));
        reset(h, dvis, 0, nlocks * sizeof(int32_t));
        reset(h, dlock, 0, nlocks * sizeof(int32_t));
        h_launch(h, k, h_grid((unsigned)rows, 1, 1),
                 H_ARGS(tk_ptr(dx, t), tk_ptr(dpart, t), tk_ptr(dflag, TK_I32),
                        tk_ptr(dvis, TK_I32), tk_ptr(dlock, TK_I32), tk_i32(cols),
                        tk_const("NLOCKS", nlocks), tk_const("BLOCK", block)),
                 warps);
        double *part = h_download(h, t, dpart, np);
        int64_t *vis = h_download_int(h, TK_I32, dvis, nlocks);
        int64_t *lock = h_download_int(h, TK_I32, dlock, nlocks);
        if (h->failed)
            break;
        size_t wrong = 0, at = 0;
        for (size_t i = 0; i < np; i++)
            if (part[i] != refd[i] && wrong++ == 0)
                at = i;
        int wrong_vis = 0, held = 0;
        for (int g = 0; g < nlocks; g++) {
            wrong_vis += vis[g] != rvis[g];
            held += lock[g] != 0;
        }
        if (wrong || wrong_vis || held) {
            if (bad++ == 0) {
                first_bad = run;
                snprintf(first_why, sizeof first_why,
                         "%zu sums wrong (first [%zu] = %.17g, want %.17g), %d visit counts "
                         "wrong, %d locks still held",
                         wrong, at, wrong ? part[at] : 0.0, wrong ? refd[at] : 0.0, wrong_vis,
                         held);
            }
        }
    }
    if (relaxed && !h->failed)
        printf("note: with relaxed atomics %d of %d launches came out wrong%s%s\n", bad, runs,
               bad ? "; the first: " : "", first_why);
    else if (bad)
        h_fail(h, "%d of %d launches wrong; the first, launch %d: %s", bad, runs, first_bad,
               first_why);
    h_end(h);
}

/* The tutorial's own host code: GROUP_SIZE_M by N partial sums, locks and
 * counts zeroed, then the column reduction of the partial sums. The
 * tutorial zeroes the partial sums too; with at least GROUP_SIZE_M rows the
 * first writer of every group stores, so here they are poisoned instead. */
static void layernorm_bwd_case(H *h, int M, int N)
{
    int runs = h->gpu ? 20 : 2;
    if (!h_begin(h, "locks.layernorm_bwd_tutorial05_fp32.M%d.N%d.runs%d", M, N, runs))
        return;
    int block = 1;
    while (block < N)
        block *= 2;
    int group = 64;
    if (N <= 8192)
        group = 96;
    if (N <= 4096)
        group = 128;
    if (N <= 1024)
        group = 256;
    if (M < group) {
        h_fail(h, "M %d < GROUP_SIZE_M %d: some partial sums would stay poisoned", M, group);
        h_end(h);
        return;
    }
    int warps = block / 256 < 1 ? 1 : block / 256 > 8 ? 8 : block / 256;
    tk_kernel *kdx = h_kernel(h, "lock.tk", "_layer_norm_bwd_dx_fused");
    tk_kernel *kdw = h_kernel(h, "lock.tk", "_layer_norm_bwd_dwdb");
    size_t n = (size_t)M * N;
    double *x = h_rand_array(h, TK_F32, n, -2, 2), *dy = h_rand_array(h, TK_F32, n, -1, 1);
    double *w = h_rand_array(h, TK_F32, N, 0.5, 1.5);
    double *mean = h_malloc(h, M * sizeof(double)), *rstd = h_malloc(h, M * sizeof(double));
    /* the forward pass's statistics, rounded to fp32 as it stores them */
    for (int r = 0; r < M && !h->failed; r++) {
        double s = 0, v = 0;
        for (int c = 0; c < N; c++)
            s += x[(size_t)r * N + c];
        double mu = s / N;
        for (int c = 0; c < N; c++)
            v += (x[(size_t)r * N + c] - mu) * (x[(size_t)r * N + c] - mu);
        mean[r] = h_round_to(TK_F32, mu);
        rstd[r] = h_round_to(TK_F32, 1.0 / sqrt(v / N + 1e-5));
    }
    double *rdx = h_malloc(h, n * sizeof(double));
    double *rdw = h_malloc(h, N * sizeof(double)), *rdb = h_malloc(h, N * sizeof(double));
    for (int r = 0; r < M && !h->failed; r++) {
        const double *xr = x + (size_t)r * N, *dyr = dy + (size_t)r * N;
        double c1 = 0, c2 = 0;
        for (int c = 0; c < N; c++) {
            double xhat = (xr[c] - mean[r]) * rstd[r], wdy = w[c] * dyr[c];
            c1 += xhat * wdy;
            c2 += wdy;
            rdw[c] += dyr[c] * xhat;
            rdb[c] += dyr[c];
        }
        c1 /= N;
        c2 /= N;
        for (int c = 0; c < N; c++) {
            double xhat = (xr[c] - mean[r]) * rstd[r], wdy = w[c] * dyr[c];
            rdx[(size_t)r * N + c] = (wdy - (xhat * c1 + c2)) * rstd[r];
        }
    }
    void *dX = h_upload(h, TK_F32, x, n), *dDY = h_upload(h, TK_F32, dy, n);
    void *dW = h_upload(h, TK_F32, w, N);
    void *dMean = h_upload(h, TK_F32, mean, M), *dRstd = h_upload(h, TK_F32, rstd, M);
    void *dDX = h_output(h, TK_F32, n);
    void *dpw = h_output(h, TK_F32, (size_t)group * N),
         *dpb = h_output(h, TK_F32, (size_t)group * N);
    void *dlocks = h_output(h, TK_I32, 2 * (size_t)group);
    void *dfw = h_output(h, TK_F32, N), *dfb = h_output(h, TK_F32, N);
    for (int run = 0; run < runs && !h->failed; run++) {
        reset(h, dDX, 0xFF, n * 4);
        reset(h, dpw, 0xFF, (size_t)group * N * 4);
        reset(h, dpb, 0xFF, (size_t)group * N * 4);
        reset(h, dlocks, 0, 2 * (size_t)group * 4);
        reset(h, dfw, 0xFF, (size_t)N * 4);
        reset(h, dfb, 0xFF, (size_t)N * 4);
        h_launch(h, kdx, h_grid((unsigned)M, 1, 1),
                 H_ARGS(tk_ptr(dDX, TK_F32), tk_ptr(dDY, TK_F32), tk_ptr(dpw, TK_F32),
                        tk_ptr(dpb, TK_F32), tk_ptr(dX, TK_F32), tk_ptr(dW, TK_F32),
                        tk_ptr(dMean, TK_F32), tk_ptr(dRstd, TK_F32), tk_ptr(dlocks, TK_I32),
                        tk_i32(N), tk_i32(N), tk_const("GROUP_SIZE_M", group),
                        tk_const("BLOCK_SIZE_N", block)),
                 warps);
        h_launch(h, kdw, h_grid((unsigned)h_cdiv((size_t)N, 128), 1, 1),
                 H_ARGS(tk_ptr(dpw, TK_F32), tk_ptr(dpb, TK_F32), tk_ptr(dfw, TK_F32),
                        tk_ptr(dfb, TK_F32), tk_i32(group), tk_i32(N), tk_const("BLOCK_SIZE_M", 32),
                        tk_const("BLOCK_SIZE_N", 128)),
                 4);
        double *dx = h_download(h, TK_F32, dDX, n);
        double *fw = h_download(h, TK_F32, dfw, N), *fb = h_download(h, TK_F32, dfb, N);
        char what[64];
        snprintf(what, sizeof what, "dx (launch %d)", run);
        h_check(h, what, dx, rdx, n, 1e-5);
        snprintf(what, sizeof what, "dw (launch %d)", run);
        h_check(h, what, fw, rdw, N, 1e-5);
        snprintf(what, sizeof what, "db (launch %d)", run);
        h_check(h, what, fb, rdb, N, 1e-5);
    }
    h_end(h);
}

void cases_lock(H *h)
{
    int big = h->gpu ? 16 : 1; /* programs per lock multiply on the GPU */
    lock_case(h, TK_I32, 256 * big, 1000, 1024, 8, 4, false);
    lock_case(h, TK_F32, 128 * big, 256, 256, 1, 4, false);
    lock_case(h, TK_I32, 512 * big, 64, 64, 32, 2, false);
    lock_case(h, TK_F32, 64 * big, 4096, 4096, 4, 8, false);
    lock_case(h, TK_I32, 300 * big, 37, 64, 3, 1, false);
    lock_case(h, TK_I32, 256 * big, 1000, 1024, 8, 4, true);
    layernorm_bwd_case(h, h->gpu ? 4096 : 300, 1000); /* GROUP_SIZE_M 256 */
    layernorm_bwd_case(h, h->gpu ? 1151 : 131, 4096); /* GROUP_SIZE_M 128 */
}
