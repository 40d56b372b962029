/* assemble.c: PTX to a cubin for a named arch, ahead of time (--emit=cubin,
 * the cubins of --emit=header), and at run time where a ptxas is found
 * (rt_ptxas). Tries ptxas first ($TK_PTXAS, PATH, $CUDA_HOME/bin), then
 * the CUDA driver's linker (cuLink* with CU_JIT_TARGET, in the primary
 * context of device 0 when the thread has none), whose code is relocatable
 * and takes more registers; PTX with line tables gets a cubin with line
 * info. Assumes the PTX is NUL-terminated. Guarantees: every driver call
 * is checked, the thread's current context is as it was, temp files are
 * removed, and a failure gives one line saying what was tried and why each
 * way failed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda/cuda.h"

extern char **environ;

/* ---- the driver -------------------------------------------------------------------- */

/* "sm_90a" -> CU_TARGET_COMPUTE_90A; 0 for what is not sm_NN[a]. */
static int jit_target(const char *arch)
{
    if (strncmp(arch, "sm_", 3) != 0)
        return 0;
    char *end;
    long n = strtol(arch + 3, &end, 10);
    if (n < 50 || n > 999 || (*end && strcmp(end, "a") != 0))
        return 0;
    return (int)n + (*end ? CU_COMPUTE_ACCELERATED_TARGET_BASE : 0);
}

bool rt_ptx_has_lines(const char *ptx, size_t len)
{
    static const char dir[] = "\n\t.file\t";
    size_t dl = sizeof dir - 1;
    for (size_t i = 0; i + dl <= len; i++)
        if (ptx[i] == '\n' && memcmp(ptx + i, dir, dl) == 0)
            return true;
    return false;
}

static tk_status link_cubin(const char *ptx, size_t len, int target, const char *kernel,
                            StrBuf *out)
{
    static _Thread_local char log[8192];
    log[0] = 0;
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_TARGET, CU_JIT_GENERATE_LINE_INFO};
    void *vals[] = {log, (void *)(uintptr_t)sizeof log, (void *)(uintptr_t)target,
                    (void *)(uintptr_t)1};
    unsigned nopts = rt_ptx_has_lines(ptx, len) ? 4 : 3;
    CUlinkState st = NULL;
    tk_status s = TK_OK;
    void *bin = NULL;
    size_t n = 0;
    RT_CU_GO(s, done, kernel, cuLinkCreate, nopts, opts, vals, &st);
    RT_CU_GO(s, done, kernel, cuLinkAddData, st, CU_JIT_INPUT_PTX, (void *)ptx, len + 1, kernel, 0,
             NULL, NULL);
    RT_CU_GO(s, done, kernel, cuLinkComplete, st, &bin, &n);
    sb_write(out, bin, n);
    if (out->oom)
        s = err_set(TK_ERR_NO_MEMORY, "out of memory");
done:
    if (s != TK_OK && log[0]) {
        char first[512];
        snprintf(first, sizeof first, "%s", err_text());
        for (char *c = log; *c; c++)
            if (*c == '\n')
                *c = ' '; /* one line */
        err_set(s, "%s: %s", first, log);
    }
    if (st && rt_cu.p_cuLinkDestroy(st) != CUDA_SUCCESS && s == TK_OK)
        s = err_set(TK_ERR_DRIVER, "cuLinkDestroy failed for kernel '%s'", kernel);
    return s;
}

/* Links in the thread's context, or in device 0's primary context made
 * current for the call. */
static tk_status via_driver(const char *ptx, size_t len, int target, const char *kernel,
                            StrBuf *out)
{
    tk_status s = rt_driver_load();
    if (s != TK_OK)
        return err_set(s, "%s", rt_driver_problem()); /* without the interpreter's advice */
    CUcontext prev = NULL, ctx = NULL;
    CUdevice dev = 0;
    RT_CU(kernel, cuCtxGetCurrent, &prev);
    if (!prev) {
        RT_CU(kernel, cuDeviceGet, &dev, 0);
        RT_CU(kernel, cuDevicePrimaryCtxRetain, &ctx, dev);
        RT_CU_GO(s, release, kernel, cuCtxSetCurrent, ctx);
    }
    s = link_cubin(ptx, len, target, kernel, out);
    if (!prev && rt_cu.p_cuCtxSetCurrent(NULL) != CUDA_SUCCESS && s == TK_OK)
        s = err_set(TK_ERR_DRIVER, "cuCtxSetCurrent failed after linking '%s'", kernel);
release:
    if (!prev && rt_cu.p_cuDevicePrimaryCtxRelease(dev) != CUDA_SUCCESS && s == TK_OK)
        s = err_set(TK_ERR_DRIVER, "cuDevicePrimaryCtxRelease failed after linking '%s'", kernel);
    return s;
}

/* ---- ptxas ---------------------------------------------------------------------------- */

/* The ptxas to run, into path; false if none: $TK_PTXAS when set (a path;
 * 0 for none), else the first executable `ptxas` in $PATH, else
 * $CUDA_HOME/bin/ptxas. */
static bool find_ptxas(char *path, size_t cap)
{
    const char *forced = getenv("TK_PTXAS");
    if (forced && *forced) {
        snprintf(path, cap, "%s", forced);
        return strcmp(forced, "0") != 0 && access(path, X_OK) == 0;
    }
    const char *p = getenv("PATH");
    while (p && *p) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        if (n && n + 7 < cap) {
            snprintf(path, cap, "%.*s/ptxas", (int)n, p);
            if (access(path, X_OK) == 0)
                return true;
        }
        p = colon ? colon + 1 : NULL;
    }
    const char *home = getenv("CUDA_HOME");
    if (!home || !*home || strlen(home) + 11 >= cap)
        return false;
    snprintf(path, cap, "%s/bin/ptxas", home);
    return access(path, X_OK) == 0;
}

static bool read_all(const char *path, StrBuf *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        sb_write(out, chunk, n);
    bool ok = !ferror(f) && !out->oom;
    fclose(f);
    return ok;
}

/* ptxas's first line of complaint, for the one-line error. */
static void first_line(const char *path, char *out, size_t cap)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (f && fgets(out, (int)cap, f))
        out[strcspn(out, "\n")] = 0;
    if (f)
        fclose(f);
}

/* What ptxas -v says of the one kernel: registers and spill bytes. */
typedef struct PtxasUse {
    int regs, spills, smem; /* smem: static shared bytes */
} PtxasUse;

static void read_use(const char *log, PtxasUse *u)
{
    u->regs = u->spills = -1;
    u->smem = 0;
    FILE *f = fopen(log, "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        const char *r = strstr(line, "Used ");
        int st = 0, ld = 0;
        if (r)
            sscanf(r, "Used %d registers", &u->regs);
        const char *sm = r ? strstr(r, " bytes smem") : NULL;
        while (sm && sm > r && sm[-1] >= '0' && sm[-1] <= '9')
            sm--;
        if (sm && sm > r)
            u->smem = atoi(sm);
        if (sscanf(line, " %*d bytes stack frame, %d bytes spill stores, %d bytes spill loads", &st,
                   &ld) == 2)
            u->spills = st + ld;
    }
    if (f)
        fclose(f);
}

/* One ptxas process over STEM.ptx in a temp folder, writing STEM.cubin
 * and its output to STEM.log there. */
typedef struct PtxasRun {
    pid_t pid;
    char in[600], cubin[600], log[600];
} PtxasRun;

static void run_paths(PtxasRun *run, const char *dir, const char *stem)
{
    snprintf(run->in, sizeof run->in, "%s/%s.ptx", dir, stem);
    snprintf(run->cubin, sizeof run->cubin, "%s/%s.cubin", dir, stem);
    snprintf(run->log, sizeof run->log, "%s/%s.log", dir, stem);
}

/* Starts `ptxas -v -arch=ARCH [-lineinfo] -o STEM.cubin STEM.ptx`; STEM.ptx
 * is written already. */
static tk_status ptxas_start(const char *ptxas, const char *arch, bool lines, PtxasRun *run)
{
    char archopt[64], lineinfo[] = "-lineinfo", verbose[] = "-v", o[] = "-o";
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    char *argv[] = {(char *)ptxas, verbose, archopt, o, run->cubin, run->in, NULL, NULL};
    if (lines) { /* in front of the input, which stays last */
        argv[5] = lineinfo;
        argv[6] = run->in;
    }
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return err_set(TK_ERR_NO_MEMORY, "out of memory starting ptxas");
    int rc = posix_spawn_file_actions_addopen(&fa, 1, run->log,
                                              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (rc == 0)
        rc = posix_spawn(&run->pid, ptxas, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return err_set(TK_ERR_IO, "cannot run %s: %s", ptxas, strerror(rc));
    return TK_OK;
}

/* Waits for the run, its exit status in *status; false where waitpid
 * failed (errno says why). */
static bool ptxas_reap(const PtxasRun *run, int *status)
{
    while (waitpid(run->pid, status, 0) < 0)
        if (errno != EINTR)
            return false;
    return true;
}

/* Waits for the run; its cubin appended to out, what it used in *u. */
static tk_status ptxas_finish(const char *ptxas, const PtxasRun *run, StrBuf *out, PtxasUse *u)
{
    int status = 0;
    if (!ptxas_reap(run, &status))
        return err_set(TK_ERR_IO, "waiting for %s: %s", ptxas, strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char why[512];
        first_line(run->log, why, sizeof why);
        return err_set(TK_ERR_COMPILE, "%s failed: %s", ptxas, why[0] ? why : "(no message)");
    }
    if (!read_all(run->cubin, out))
        return err_set(TK_ERR_IO, "cannot read what %s wrote", ptxas);
    read_use(run->log, u);
    return TK_OK;
}

static void run_remove(const PtxasRun *run)
{
    unlink(run->in);
    unlink(run->cubin);
    unlink(run->log);
}

/* ---- one more program an SM --------------------------------------------------------- */

/* What an SM of an arch holds: shared memory (with 1 KB the driver keeps
 * per program), warps and programs; false for archs not listed. */
typedef struct SmLimits {
    int64_t smem;
    int warps, programs;
} SmLimits;

static bool sm_limits(const char *arch, SmLimits *l)
{
    if (strncmp(arch, "sm_", 3) != 0)
        return false;
    int sm = atoi(arch + 3);
    if (sm == 80 || sm == 90 || sm == 100 || sm == 103)
        *l = (SmLimits){sm == 80 ? 164 * 1024 : 228 * 1024, 64, 32};
    else if (sm == 86 || sm == 87 || sm == 89)
        *l = (SmLimits){100 * 1024, 48, sm == 86 ? 16 : 24};
    else
        return false;
    return true;
}

/* Threads of the .maxntid line at p (x, y, z multiplied); 0 if unreadable. */
static int maxntid_threads(const char *p)
{
    int x = 0, y = 1, z = 1;
    if (sscanf(p, ".maxntid %d, %d, %d", &x, &y, &z) < 1 || x < 1 || y < 1 || z < 1)
        return 0;
    return x * y * z;
}

static int programs_by_regs(int regs, int warps)
{
    return 65536 / ((regs + 7) / 8 * 8 * 32 * warps);
}

/* Given only .maxntid, ptxas may settle on a register count that lets one
 * program fewer share an SM than shared memory and warps would (an int4
 * GEMM: 163 registers, 3 programs of 4 warps, where 128 fit without a
 * spill and 4 programs' shared memory fit). The .maxnreg that admits one
 * more program, or 0 where registers are not what limits, or the PTX sets
 * its own limits, or it runs no tensor-core op; *at: where the directive
 * goes, after .maxntid. Only tensor-core kernels: on an H100 the extra
 * program sped up each of five that changed (an int8 attention 18%, a
 * fused linear cross-entropy 8%) while four of six kernels without one
 * (Welford, a recurrence, dropout, rotary) lost 3-7%. */
typedef struct RetryShape {
    int warps, limit; /* a program's warps; programs an SM without registers' limit */
    int floor;        /* no .maxnreg below this assembles (wgmma_floor) */
    size_t at;        /* where .maxnreg goes */
} RetryShape;

/* The fewest registers a .maxnreg may leave a kernel with wgmma: its
 * largest accumulator (the registers listed first in the instruction)
 * and a quarter more and 8 for the addresses, descriptors and loop
 * around it. A 128x128 fp32 tile over two warpgroups holds 64 a thread,
 * and ptxas refused .maxnreg 80 for it ("Insufficient registers", 90 or
 * more): that run cost a persistent GEMM's first call a third of its
 * ptxas time for nothing. 0 without wgmma. */
static int wgmma_floor(const char *ptx)
{
    int most = 0;
    for (const char *p = strstr(ptx, "wgmma.mma_async"); p; p = strstr(p + 1, "wgmma.mma_async")) {
        const char *open = strchr(p, '{'), *eol = strchr(p, '\n');
        if (!open || (eol && eol < open))
            continue;
        int n = 0;
        for (const char *q = open; *q && *q != '}'; q++)
            n += *q == '%';
        most = n > most ? n : most;
    }
    return most ? most + most / 4 + 8 : 0;
}

/* What the retry depends on besides registers; false where it never runs
 * (no tensor-core op, the PTX's own limits, an arch not listed). */
static bool retry_shape(const char *ptx, const char *arch, int64_t smem, RetryShape *s)
{
    SmLimits l;
    const char *m = strstr(ptx, "\n.maxntid ");
    bool mma = strstr(ptx, "\tmma.sync") || strstr(ptx, "\twgmma.mma_async");
    if (smem < 0 || !m || !mma || !sm_limits(arch, &l) || strstr(ptx, ".maxnreg") ||
        strstr(ptx, ".minnctapersm") || strstr(ptx, "setmaxnreg"))
        return false;
    int T = maxntid_threads(m + 1);
    const char *eol = T ? strchr(m + 1, '\n') : NULL;
    if (!eol)
        return false;
    s->warps = (T + 31) / 32;
    s->limit = l.programs < l.warps / s->warps ? l.programs : l.warps / s->warps;
    if (smem > 0 && l.smem / (smem + 1024) < s->limit)
        s->limit = (int)(l.smem / (smem + 1024));
    s->floor = wgmma_floor(ptx);
    s->at = (size_t)(eol + 1 - ptx);
    return true;
}

/* Programs an SM past which one more is not worth a second ptxas run:
 * of the 23 corpus kernels the retry tried, the 5 whose cubin it kept went
 * from 1, 2 or 3 programs; from 4 or more it added a quarter of the
 * programs at most, and its compile doubled the kernel's first call. */
enum { RETRY_MAX_PROGRAMS = 3 };

/* Retries run beside the first ptxas at most: with 4 warps, the ones from
 * 2 and from 3 programs (168 and 128 registers). */
enum { RETRY_FORESEEN = 2 };

static int retry_regs(const RetryShape *s, int regs)
{
    int have = programs_by_regs(regs, s->warps);
    if (have < 1 || have >= s->limit || have > RETRY_MAX_PROGRAMS)
        return 0;
    int r = 65536 / ((have + 1) * s->warps * 32) / 8 * 8;
    return r >= 32 && r >= s->floor && r < regs ? r : 0;
}

int rt_ptxas_more_programs(const char *ptx, const char *arch, int64_t smem, int regs, int spills,
                           int static_smem, size_t *at)
{
    RetryShape s;
    if (smem < 0 || regs < 1 || spills != 0 || !retry_shape(ptx, arch, smem + static_smem, &s))
        return 0;
    int r = retry_regs(&s, regs);
    if (r)
        *at = s.at;
    return r;
}

/* The retries that some register count ptxas could take (up to 255)
 * would call for, where there are at most RETRY_FORESEEN of them: they
 * can run beside the first ptxas rather than after it. Their .maxnreg
 * into r (distinct), the count returned; 0 where none or more. Static
 * shared memory is taken as none; rt_ptxas checks the first run's own
 * answer against them. */
int rt_ptxas_retry_foreseen(const char *ptx, const char *arch, int64_t smem, int *r, size_t *at)
{
    RetryShape s;
    if (smem < 0 || !retry_shape(ptx, arch, smem, &s))
        return 0;
    int n = 0;
    for (int regs = 1; regs <= 255; regs++) {
        int x = retry_regs(&s, regs);
        if (!x || (n && r[n - 1] == x))
            continue;
        if (n == RETRY_FORESEEN)
            return 0;
        r[n++] = x;
    }
    *at = s.at;
    return n;
}

/* Bytes of spill stores and loads together that the retry may add: three
 * words, where the extra program pays for them. On an H100, at 128
 * registers and 24 bytes of spills, an int4 GEMM ran 4% faster with 4
 * programs an SM than with 3 at 167 registers, and a paged decode
 * attention 5% slower than with 3 at 144; the GEMM, once its zero points
 * crossed threads at their own size, spills 12 bytes at 128 (CUDA 13's
 * ptxas). */
enum { RETRY_SPILL_BYTES = 12 };

bool rt_ptxas_retry_kept(int regs, int spills, int r)
{
    return regs > 0 && regs <= r && spills >= 0 && spills <= RETRY_SPILL_BYTES;
}

/* Writes the PTX with `.maxnreg r` at `at` to run->in and starts ptxas on
 * it. */
static tk_status retry_start(const char *ptxas, const char *arch, const char *ptx, size_t len,
                             bool lines, int r, size_t at, PtxasRun *run)
{
    char line[32];
    snprintf(line, sizeof line, ".maxnreg %d\n", r);
    FilePart parts[3] = {{ptx, at}, {line, strlen(line)}, {ptx + at, len - at}};
    int err = file_replace(run->in, parts, 3, 0600);
    if (err)
        return err_set(TK_ERR_IO, "cannot write %s: %s", run->in, strerror(err));
    return ptxas_start(ptxas, arch, lines, run);
}

/* The retry's cubin replaces the first one (from start in out) where it
 * assembled with at most a few words of spills at .maxnreg r (ptxas may
 * need the registers: then one program fewer it is). Always waits for the
 * run; leaves no error behind. */
static void retry_finish(const char *ptxas, const PtxasRun *run, int r, StrBuf *out, size_t start)
{
    StrBuf again;
    sb_init(&again);
    PtxasUse u;
    if (ptxas_finish(ptxas, run, &again, &u) == TK_OK && rt_ptxas_retry_kept(u.regs, u.spills, r) &&
        !again.oom) {
        out->len = start;
        sb_write(out, again.data, again.len);
    }
    err_clear();
    sb_free(&again);
}

/* ptxas processes this process runs at this moment (an autotuner
 * compiles its configs at once): foreseen retries take only CPUs that no
 * other compile is using, as a retry no register count calls for is work
 * thrown away. */
static atomic_int ptxas_running;

static int spare_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return (int)(n > 0 && n < 4096 ? n : 1) - atomic_load(&ptxas_running);
}

/* Starts the foreseen retries (rt_ptxas_retry_foreseen) beside the first
 * run, as many as there are spare CPUs for; how many started, their
 * .maxnreg in r. */
static int foresee(const char *ptxas, const char *dir, const char *ptx, size_t len, bool lines,
                   const char *arch, int64_t smem, int *r, PtxasRun *runs)
{
    size_t at = 0;
    int n = rt_ptxas_retry_foreseen(ptx, arch, smem, r, &at), started = 0;
    for (int i = 0; i < n && spare_cpus() > 0; i++) {
        char stem[16];
        snprintf(stem, sizeof stem, "retry%d", i);
        run_paths(&runs[started], dir, stem);
        if (retry_start(ptxas, arch, ptx, len, lines, r[i], at, &runs[started]) != TK_OK) {
            err_clear();
            run_remove(&runs[started]);
            continue;
        }
        atomic_fetch_add(&ptxas_running, 1);
        r[started++] = r[i];
    }
    return started;
}

/* The first ptxas run, with the retries it could call for beside it where
 * they are few (a tensor-core kernel's two compiles then take the time of
 * one), else the retry its registers call for after it. */
static tk_status assemble(const char *ptxas, const char *dir, const char *ptx, size_t len,
                          const char *arch, int64_t smem, StrBuf *out)
{
    PtxasRun first, runs[RETRY_FORESEEN + 1];
    run_paths(&first, dir, "in");
    size_t start = out->len, at = 0;
    FilePart part = {ptx, len};
    int err = file_replace(first.in, &part, 1, 0600);
    if (err)
        return err_set(TK_ERR_IO, "cannot write %s: %s", first.in, strerror(err));
    bool lines = rt_ptx_has_lines(ptx, len);
    int spec[RETRY_FORESEEN];
    atomic_fetch_add(&ptxas_running, 1); /* the first run's CPU */
    int n = foresee(ptxas, dir, ptx, len, lines, arch, smem, spec, runs);
    PtxasUse u = {-1, -1, 0};
    tk_status s = ptxas_start(ptxas, arch, lines, &first);
    if (s == TK_OK)
        s = ptxas_finish(ptxas, &first, out, &u);
    int r = s == TK_OK ? rt_ptxas_more_programs(ptx, arch, smem, u.regs, u.spills, u.smem, &at) : 0;
    for (int i = 0; i < n; i++) { /* each waited for: no process is left behind */
        if (r && r == spec[i]) {
            retry_finish(ptxas, &runs[i], r, out, start);
            r = 0;
        } else { /* its answer is not wanted: stopped, not waited for */
            int status;
            kill(runs[i].pid, SIGKILL);
            ptxas_reap(&runs[i], &status);
        }
        atomic_fetch_sub(&ptxas_running, 1);
        run_remove(&runs[i]);
    }
    if (r) {
        run_paths(&runs[n], dir, "retry");
        if (retry_start(ptxas, arch, ptx, len, lines, r, at, &runs[n]) == TK_OK)
            retry_finish(ptxas, &runs[n], r, out, start);
        else
            err_clear();
        run_remove(&runs[n]);
    }
    atomic_fetch_sub(&ptxas_running, 1);
    run_remove(&first);
    return s;
}

tk_status rt_ptxas(const char *ptx, size_t len, const char *arch, int64_t smem, StrBuf *out)
{
    if (len && !ptx[len - 1])
        len--; /* a NUL the driver wants would end ptxas's input early */
    char ptxas[4096];
    if (!find_ptxas(ptxas, sizeof ptxas))
        return err_set(TK_ERR_NOT_FOUND,
                       "no ptxas (not at $TK_PTXAS, on PATH or in $CUDA_HOME/bin)");
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tk-ptxas-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return err_set(TK_ERR_IO, "cannot make a temp folder for ptxas: %s", strerror(errno));
    tk_status s = assemble(ptxas, dir, ptx, len, arch, smem, out);
    rmdir(dir);
    return s;
}

/* ---- both ------------------------------------------------------------------------------- */

bool rt_assemble_ptx(const char *ptx, size_t len, const char *arch, const char *kernel,
                     int64_t smem, StrBuf *cubin, char *why, size_t cap)
{
    int target = jit_target(arch);
    if (!target) {
        snprintf(why, cap, "'%s' is not an architecture such as sm_90a", arch);
        return false;
    }
    /* ptxas first: it compiles the whole program, where the driver's
     * linker compiles PTX as relocatable code, with more registers */
    char first[1024];
    size_t start = cubin->len;
    if (rt_ptxas(ptx, len, arch, smem, cubin) == TK_OK)
        return true;
    snprintf(first, sizeof first, "%s", err_text());
    cubin->len = start;
    if (via_driver(ptx, len, target, kernel, cubin) == TK_OK)
        return true;
    cubin->len = start;
    snprintf(why, cap, "%s, and %s", first, err_text());
    err_clear();
    return false;
}
