/* rt_ptxas_fit.c: when rt_ptxas assembles again with .maxnreg so that one
 * more program shares an SM: only a tensor-core kernel, only where
 * registers (not shared memory, warps or a spill) are what limits, never
 * over the PTX's own limits; the count is the share of the register file
 * of one program more, placed right after .maxntid; when it keeps what
 * it got; and when that retry is known before the first run (it then runs
 * beside it); never below what a wgmma's accumulator needs. */
#include "rt_test.h"

#include "cuda/cuda.h"

static const char wgmma_ptx[] = ".visible .entry k(\n)\n.maxntid 128, 1, 1\n{\n"
                                "\twgmma.mma_async.sync.aligned.m64n128k16.f16.f16.f16 ...;\n}\n";

static const char eight[] = "\n.maxntid 256, 1, 1\n\tmma.sync.aligned.m16n8k8 ...;\n";

static int fit(const char *ptx, const char *arch, int64_t smem, int regs, int spills, int st,
               size_t *at)
{
    *at = 0;
    return rt_ptxas_more_programs(ptx, arch, smem, regs, spills, st, at);
}

static void test_gemm(void)
{
    size_t at;
    /* an int4 GEMM: 163 registers hold 3 programs of 4 warps, shared
     * memory 4 (50304 + 1024 bytes each of 228 KB): 128 registers admit 4 */
    CHECK(fit(wgmma_ptx, "sm_90a", 50304, 163, 0, 0, &at) == 128);
    CHECK(at ==
          (size_t)(strstr(wgmma_ptx, ".maxntid") - wgmma_ptx) + strlen(".maxntid 128, 1, 1\n"));
    /* already 4: shared memory is the limit */
    CHECK(fit(wgmma_ptx, "sm_90a", 50304, 128, 0, 0, &at) == 0);
    /* static shared memory counts with the dynamic: 3 fit either way */
    CHECK(fit(wgmma_ptx, "sm_90a", 50304, 163, 0, 20000, &at) == 0);
    /* on sm_80's 164 KB only 3 programs' shared memory fit */
    CHECK(fit(wgmma_ptx, "sm_80", 50304, 163, 0, 0, &at) == 0);
    CHECK(fit(wgmma_ptx, "sm_80", 30000, 163, 0, 0, &at) == 128);
    /* 1 program of 8 warps at 143 registers, 2 by shared memory */
    CHECK(fit(eight, "sm_90a", 98304, 143, 0, 0, &at) == 128);
    /* registers round up to 8: 87 hold 2 programs of 8 warps (88 each),
     * 3 programs' share is 85, rounded down to 80 */
    CHECK(fit(eight, "sm_90a", 0, 87, 0, 0, &at) == 80);
    /* 4 programs or more: one more is not worth a second run */
    CHECK(fit(wgmma_ptx, "sm_90a", 0, 128, 0, 0, &at) == 0);
    CHECK(fit(eight, "sm_90a", 0, 40, 0, 0, &at) == 0);
}

static void test_no_retry(void)
{
    size_t at;
    CHECK(fit(wgmma_ptx, "sm_90a", 50304, 163, 8, 0, &at) == 0); /* spilled already */
    CHECK(fit(wgmma_ptx, "sm_90a", -1, 163, 0, 0, &at) == 0);    /* shared memory unknown */
    CHECK(fit(wgmma_ptx, "sm_75", 50304, 163, 0, 0, &at) == 0);  /* an arch not listed */
    static const char plain[] = "\n.maxntid 128, 1, 1\n\tfma.rn.f32 ...;\n";
    CHECK(fit(plain, "sm_90a", 512, 80, 0, 0, &at) == 0); /* no tensor-core op */
    static const char own[] = "\n.maxntid 128, 1, 1\n.maxnreg 168\n\twgmma.mma_async ...;\n";
    CHECK(fit(own, "sm_90a", 50304, 163, 0, 0, &at) == 0);
    static const char one[] = "\n.maxntid 128, 1, 1\n.minnctapersm 1\n\tmma.sync ...;\n";
    CHECK(fit(one, "sm_90a", 50304, 163, 0, 0, &at) == 0);
    static const char none[] = "\twgmma.mma_async ...;\n"; /* no .maxntid */
    CHECK(fit(none, "sm_90a", 50304, 163, 0, 0, &at) == 0);
    /* 16 programs of 4 warps fill an SM's 64 warps: nothing to gain */
    CHECK(fit(wgmma_ptx, "sm_90a", 0, 32, 0, 0, &at) == 0);
}

/* The retry's cubin is kept with up to three words of spills (an int4
 * GEMM's 8 bytes stored and 4 loaded), not with more (a paged decode's
 * 16 and 8, 5% slower at 4 programs than without spills at 3), nor over
 * the register count asked for, nor where ptxas said nothing. */
static void test_kept(void)
{
    CHECK(rt_ptxas_retry_kept(128, 0, 128));
    CHECK(rt_ptxas_retry_kept(128, 12, 128));
    CHECK(!rt_ptxas_retry_kept(128, 24, 128));
    CHECK(!rt_ptxas_retry_kept(136, 0, 128));
    CHECK(!rt_ptxas_retry_kept(-1, 0, 128));
    CHECK(!rt_ptxas_retry_kept(128, -1, 128));
}

/* The retries run beside the first ptxas only where every register count
 * leads to at most two .maxnreg. */
static void test_foreseen(void)
{
    size_t at = 0;
    int r[2] = {0, 0};
    /* 8 warps, shared memory for 2 programs: only 1 -> 2 programs, at 128 */
    CHECK(rt_ptxas_retry_foreseen(eight, "sm_90a", 98304, r, &at) == 1 && r[0] == 128);
    CHECK(at == (size_t)(strstr(eight, ".maxntid") - eight) + strlen(".maxntid 256, 1, 1\n"));
    /* 4 warps, 4 programs' shared memory: 3 -> 4 (128) or 2 -> 3 (168) */
    CHECK(rt_ptxas_retry_foreseen(wgmma_ptx, "sm_90a", 50304, r, &at) == 2);
    CHECK(r[0] == 128 && r[1] == 168);
    /* 8 warps, nothing else limiting: 1 -> 2, 2 -> 3, 3 -> 4: too many */
    CHECK(rt_ptxas_retry_foreseen(eight, "sm_90a", 0, r, &at) == 0);
    /* shared memory for 1 program of 8 warps: no retry at any count */
    CHECK(rt_ptxas_retry_foreseen(eight, "sm_90a", 150000, r, &at) == 0);
    CHECK(rt_ptxas_retry_foreseen(eight, "sm_90a", -1, r, &at) == 0);
    static const char plain[] = "\n.maxntid 256, 1, 1\n\tfma.rn.f32 ...;\n";
    CHECK(rt_ptxas_retry_foreseen(plain, "sm_90a", 98304, r, &at) == 0);
    /* what it foresees is what the first run's count asks for */
    for (int regs = 129; regs <= 255; regs++)
        CHECK(fit(eight, "sm_90a", 98304, regs, 0, 0, &at) == 128);
    CHECK(fit(eight, "sm_90a", 98304, 128, 0, 0, &at) == 0);
    for (int regs = 1; regs <= 255; regs++) {
        int x = fit(wgmma_ptx, "sm_90a", 50304, regs, 0, 0, &at);
        CHECK(x == 0 || x == 168 || x == 128);
    }
}

/* A kernel whose wgmma accumulates 64 registers a thread (a 128x128 fp32
 * tile over two warpgroups): ptxas cannot assemble it at .maxnreg 80, so
 * the retry for a third program (112 registers, 8 warps) is not run; at
 * 32 accumulator registers it is. */
static void wgmma_acc(char *buf, size_t cap, int nacc)
{
    size_t n = (size_t)snprintf(buf, cap,
                                "\n.maxntid 256, 1, 1\n\twgmma.mma_async.sync.aligned."
                                "m64n%dk16.f32.bf16.bf16 {",
                                2 * nacc);
    for (int i = 0; i < nacc && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%%f%d", i ? ", " : "", i + 1);
    if (n < cap)
        snprintf(buf + n, cap - n, "}, %%rd1, %%rd2, p, 1, 1;\n");
}

static void test_floor(void)
{
    char ptx[2048];
    size_t at;
    wgmma_acc(ptx, sizeof ptx, 64);
    CHECK(fit(ptx, "sm_90a", 0, 112, 0, 0, &at) == 0);
    CHECK(fit(ptx, "sm_90a", 0, 168, 0, 0, &at) == 128); /* 1 -> 2 programs: 128 fits */
    wgmma_acc(ptx, sizeof ptx, 32);
    CHECK(fit(ptx, "sm_90a", 0, 112, 0, 0, &at) == 80);
}

int main(void)
{
    test_floor();
    test_kept();
    test_foreseen();
    test_gemm();
    test_no_retry();
    if (failures)
        fprintf(stderr, "rt_ptxas_fit: %d checks failed\n", failures);
    else
        printf("rt_ptxas_fit: all checks passed\n");
    return failures ? 1 : 0;
}
