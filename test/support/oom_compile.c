/* oom_compile.c: out-of-memory injection into every stage of tk_compile.
 * Every allocation that goes through the hook while a conformance
 * kernel is turned into tokens, AST, IR, LLVM IR and PTX (our arena chunks,
 * StrBufs and side tables; LLVM's own memory is not hooked) fails in turn.
 * Each run must end with TK_ERR_NO_MEMORY or TK_ERR_COMPILE, or with TK_OK
 * and the baseline text when no failure fired; ASan checks for leaks.
 * Every point of every kernel is swept: a compile makes only a dozen or so
 * hooked allocations (arena chunks are 64 KiB), so the whole sweep takes
 * about 20 s in a sanitizer Debug build. If it ever grows past ~30 s,
 * raise STRIDE for all but the first FULL_CASES kernels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/support.h"
#include "tk/tk.h"

enum { FULL_CASES = 100, STRIDE = 7, FIRST_BIG = 10 };

typedef struct Case {
    const char *file, *kernel, *signature;
    tk_define defines[4];
    int ndefines;
    int num_warps; /* 0: the default */
} Case;

static const Case cases[] = {
    {"vector_add.tk", "vector_add", "*fp32,*fp32,*fp32,i32", {{"BLOCK", "1024"}}, 1, 0},
    {"copy_strided.tk", "copy_strided", "*fp32,*fp32,i32,i32", {{"BS", "4"}}, 1, 0},
    {"grey.tk", "rgb_to_grey", "*u8,*u8,i32,i32", {{"TH", "32"}, {"TW", "32"}}, 2, 0},
    {"softmax_rows.tk", "softmax_rows", "*fp32,*fp32,i32,i32,i32", {{"BLOCK", "1024"}}, 1, 0},
    {"softmax_persistent.tk",
     "softmax_persistent",
     "*fp32,*fp32,i32,i32,i32,i32",
     {{"BLOCK", "512"}, {"STAGES", "2"}},
     2,
     0},
    {"matmul_grouped.tk",
     "matmul_grouped",
     "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
     {{"BM", "64"}, {"BN", "64"}, {"BK", "32"}, {"GROUP", "4"}},
     4,
     0},
    {"gelu.tk", "gelu", "*fp32,*fp32,i32", {{"BLOCK", "512"}}, 1, 0},
    {"layernorm.tk",
     "layernorm_rows",
     "*fp32,*fp32,*fp32,*fp32,*fp32,*fp32,i32,i32,fp32",
     {{"BLOCK", "512"}},
     1,
     0},
    {"row_argmax.tk",
     "row_stats",
     "*fp32,*fp32,*i32,*fp32,i32,i32,i32",
     {{"R", "16"}, {"C", "64"}},
     2,
     0},
    {"swizzle_map.tk", "swizzle_map", "*i32", {{"GROUP", "3"}}, 1, 0},
    /* Many values per thread (swept for PTX only, at -O0): code generation's
     * side tables outgrow an arena chunk, so a failure lands inside cg_*
     * and not only before or after it. */
    {"matmul_grouped.tk",
     "matmul_grouped",
     "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
     {{"BM", "128"}, {"BN", "128"}, {"BK", "64"}, {"GROUP", "4"}},
     4,
     2},
    {"row_argmax.tk",
     "row_stats",
     "*fp32,*fp32,*i32,*fp32,i32,i32,i32",
     {{"R", "64"}, {"C", "128"}},
     2,
     1},
    /* 1024 values per thread: a value's array is larger than the arena's
     * out-of-memory scratch, so the failed allocation returns NULL. */
    {"vector_add.tk", "vector_add", "*fp32,*fp32,*fp32,i32", {{"BLOCK", "32768"}}, 1, 1},
};

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    *len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[*len] = 0;
    return buf;
}

/* Runs one compilation with the n-th allocation failing (0: none). */
static tk_status compile(const Case *c, const char *src, size_t len, tk_emit emit, long n,
                         char **out, bool *fired)
{
    tk_compile_options o = {0};
    o.kernel = c->kernel;
    o.signature = c->signature;
    o.defines = c->defines;
    o.ndefines = c->ndefines;
    /* LLVM's optimiser allocates nothing through the hook, so the large
     * launches skip it (-O0) to keep the sweep short. */
    o.opt_level = c->num_warps ? 0 : -1;
    o.num_warps = c->num_warps;
    o.emit = emit;
    char *diags = NULL;
    size_t out_len;
    tk_alloc_fail_after(n);
    tk_status st = tk_compile(c->file, src, len, &o, out, &out_len, &diags);
    *fired = tk_alloc_failure_fired();
    tk_alloc_fail_after(0);
    if (getenv("OOM_TRACE") && *fired) /* where each point lands, for debugging */
        fprintf(stderr, "%s %ld: %s: %.100s\n", c->file, n, tk_status_name(st),
                diags ? diags : "(no diagnostic)");
    tk_free_text(diags);
    return st;
}

/* Sweeps the failure points of one case and emit kind, every stride-th
 * one; returns the number of failed checks. */
static int sweep(const Case *c, const char *src, size_t len, tk_emit emit, long stride)
{
    char *want = NULL;
    bool fired;
    if (compile(c, src, len, emit, 0, &want, &fired) != TK_OK) {
        fprintf(stderr, "%s: does not compile without injected failures\n", c->file);
        return 1;
    }
    int bad = 0;
    long n, tried = 0;
    for (n = 1; n < 100000; n += stride) {
        char *got = NULL;
        tk_status st = compile(c, src, len, emit, n, &got, &fired);
        if (!fired) {
            if (st != TK_OK || strcmp(got, want) != 0) {
                fprintf(stderr, "%s: output changed with no failure injected (%s)\n", c->file,
                        tk_status_name(st));
                bad++;
            }
            tk_free_text(got);
            break;
        }
        tried++;
        if (st == TK_OK) {
            fprintf(stderr, "%s emit %d: allocation %ld failed but the compile succeeded\n",
                    c->file, (int)emit, n);
            bad++;
        } else if (st != TK_ERR_NO_MEMORY && st != TK_ERR_COMPILE) {
            fprintf(stderr, "%s emit %d: allocation %ld: unexpected status %s\n", c->file,
                    (int)emit, n, tk_status_name(st));
            bad++;
        } else if (got) {
            fprintf(stderr, "%s emit %d: allocation %ld: output returned with an error\n", c->file,
                    (int)emit, n);
            bad++;
        }
        tk_free_text(got);
    }
    printf("%-22s %-5s emit %d: %ld of about %ld failure points tried\n", c->file,
           c->defines[0].value, (int)emit, tried, n - 1);
    tk_free_text(want);
    return bad;
}

int main(void)
{
    const char *dir = getenv("TK_CONFORMANCE_DIR");
    char path[4096];
    int bad = 0;
    clock_t t0 = clock();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (dir)
            snprintf(path, sizeof path, "%s/%s", dir, cases[i].file);
        else
            snprintf(path, sizeof path, "%s/test/conformance/%s", TK_SOURCE_DIR, cases[i].file);
        size_t len;
        char *src = read_file(path, &len);
        if (!src) {
            fprintf(stderr, "cannot read %s\n", path);
            return 1;
        }
        long stride = i < FULL_CASES ? 1 : STRIDE;
        bad += sweep(&cases[i], src, len, TK_EMIT_PTX, stride);
        if (i >= FIRST_BIG)
            continue;
        static const tk_emit early[] = {TK_EMIT_TOKENS, TK_EMIT_AST, TK_EMIT_IR, TK_EMIT_LLVM};
        for (size_t e = 0; e < sizeof early / sizeof early[0]; e++)
            bad += sweep(&cases[i], src, len, early[e], stride);
    }
    printf("%.1f s of CPU time\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
    printf("%s\n", bad ? "FAILED" : "all checks passed");
    return bad != 0;
}
