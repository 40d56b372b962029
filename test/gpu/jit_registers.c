/* jit_registers.c: the runtime's JIT compiles a kernel's PTX as a whole
 * program, as ptxas does, not as relocatable code (which the driver's
 * linker makes, with up to a third more registers and so fewer programs an
 * SM). A group-norm kernel with a Welford loop is prepared through the
 * runtime, its PTX is taken from TK_DUMP_DIR, and ptxas (from PATH) says
 * how many registers the whole-program code needs: the runtime's kernel
 * must need no more. Exits 77 (a skip) with no GPU or no ptxas. Ends with
 * `N passed, N failed`, as scripts/gpu_suite.sh reads it. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tk/tk.h"

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def welford_combine(m1, s1, w1, m2, s2, w2):\n"
    "    w = w1 + w2\n"
    "    f = tl.where(w == 0.0, 0.0, w2 / tl.where(w == 0.0, 1.0, w))\n"
    "    d = m2 - m1\n"
    "    return m1 + d * f, s1 + s2 + d * d * w1 * f, w\n"
    "\n"
    "@triton.jit\n"
    "def group_norm(X, Y, W, B, group_size, HW, num_groups, C, eps, BLOCK: tl.constexpr):\n"
    "    pid = tl.program_id(0)\n"
    "    base = pid.to(tl.int64) * group_size\n"
    "    offs = tl.arange(0, BLOCK)\n"
    "    mean_acc = tl.zeros([BLOCK], dtype=tl.float32)\n"
    "    m2_acc = tl.zeros([BLOCK], dtype=tl.float32)\n"
    "    n_acc = tl.zeros([BLOCK], dtype=tl.float32)\n"
    "    for start in range(0, group_size, BLOCK):\n"
    "        m = start + offs < group_size\n"
    "        x = tl.load(X + base + start + offs, mask=m, other=0.0).to(tl.float32)\n"
    "        n_new = n_acc + m.to(tl.float32)\n"
    "        d = x - mean_acc\n"
    "        mean_acc = tl.where(m, mean_acc + d / tl.maximum(n_new, 1.0), mean_acc)\n"
    "        m2_acc = tl.where(m, m2_acc + d * (x - mean_acc), m2_acc)\n"
    "        n_acc = n_new\n"
    "    mean, m2, n = tl.reduce((mean_acc, m2_acc, n_acc), 0, welford_combine)\n"
    "    rstd = tl.rsqrt(m2 / n + eps)\n"
    "    per = C // num_groups\n"
    "    for start in range(0, group_size, BLOCK):\n"
    "        idx = start + offs\n"
    "        m = idx < group_size\n"
    "        ch = (pid % num_groups) * per + idx // HW\n"
    "        x = tl.load(X + base + idx, mask=m, other=0.0).to(tl.float32)\n"
    "        w = tl.load(W + ch, mask=m, other=1.0)\n"
    "        b = tl.load(B + ch, mask=m, other=0.0)\n"
    "        tl.store(Y + base + idx, (x - mean) * rstd * w + b, mask=m)\n";

/* The one .ptx file under dir, into path. */
static int find_ptx(const char *dir, char *path, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".ptx") == 0) {
            snprintf(path, cap, "%s/%s", dir, e->d_name);
            found++;
        }
    }
    closedir(d);
    return found == 1;
}

/* The arch the PTX targets (".target sm_90a"), into arch. */
static int ptx_target(const char *ptx, char *arch, size_t cap)
{
    FILE *f = fopen(ptx, "r");
    if (!f)
        return 0;
    char line[512];
    int ok = 0;
    while (!ok && fgets(line, sizeof line, f))
        ok = sscanf(line, " .target %31[a-z0-9_]", arch) == 1 && cap > 31;
    fclose(f);
    return ok;
}

/* Registers ptxas gives the PTX at path, or -1; the cubin goes into the
 * test's own temp folder, next to the PTX. */
static int ptxas_registers(const char *ptx)
{
    char arch[32], cmd[2304];
    if (!ptx_target(ptx, arch, sizeof arch))
        return -1;
    snprintf(cmd, sizeof cmd, "ptxas -arch=%s -v -o '%s.cubin' '%s' 2>&1", arch, ptx, ptx);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[512];
    int regs = -1;
    while (fgets(line, sizeof line, p)) {
        const char *u = strstr(line, "Used ");
        if (u)
            sscanf(u, "Used %d registers", &regs);
    }
    return pclose(p) == 0 ? regs : -1;
}

static int has_ptxas(void) { return system("ptxas --version > /dev/null 2>&1") == 0; }

int main(void)
{
    char dir[] = "/tmp/tk_jit_registers.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("TK_DUMP_DIR", dir, 1);
    setenv("TK_CACHE_DISABLE", "1", 1); /* compiled here, so the dump is written */
    unsetenv("TK_INTERPRET");
    tk_context *ctx = NULL;
    tk_status s = tk_context_create(&ctx, &(tk_context_options){.device = 0});
    if (s == TK_ERR_NO_DEVICE || !has_ptxas()) {
        printf("jit_registers: skipped: %s\n",
               s == TK_ERR_NO_DEVICE ? tk_last_error() : "no ptxas");
        if (ctx)
            tk_context_destroy(ctx);
        rmdir(dir);
        return 77;
    }
    int failed = 1;
    void *buf = NULL;
    tk_module *mod = NULL;
    tk_kernel *k = NULL;
    tk_kernel_info info;
    char ptx[1024];
    if (s != TK_OK || tk_alloc(ctx, 1 << 20, &buf) != TK_OK ||
        tk_module_load_string(ctx, "group_norm.py", source, &mod) != TK_OK ||
        tk_module_kernel(mod, "group_norm", &k) != TK_OK) {
        printf("FAIL setup: %s\n", tk_last_error());
        goto done;
    }
    tk_arg args[] = {
        tk_ptr(buf, TK_F16), tk_ptr(buf, TK_F32),    tk_ptr(buf, TK_F32), tk_ptr(buf, TK_F32),
        tk_i32(65536),       tk_i32(4096),           tk_i32(32),          tk_i32(512),
        tk_f32(1e-5f),       tk_const("BLOCK", 2048)};
    tk_launch_options o = {.num_warps = 8};
    if (tk_kernel_prepare(k, args, 10, &o, &info) != TK_OK) {
        printf("FAIL prepare: %s\n", tk_last_error());
        goto done;
    }
    if (!find_ptx(dir, ptx, sizeof ptx)) {
        printf("FAIL: no single .ptx in %s\n", dir);
        goto done;
    }
    int whole = ptxas_registers(ptx);
    printf("jit_registers: the runtime's kernel uses %d registers; ptxas gives its PTX %d\n",
           info.registers, whole);
    if (whole <= 0)
        printf("FAIL: ptxas did not assemble %s\n", ptx);
    else if (info.registers > whole)
        printf("FAIL: the JIT used %d registers where the whole program needs %d\n", info.registers,
               whole);
    else
        failed = 0;
done:
    if (mod)
        tk_module_destroy(mod);
    if (buf)
        tk_free(ctx, buf);
    tk_context_destroy(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("jit_registers: could not remove %s\n", dir);
    printf("%d passed, %d failed\n", 1 - failed, failed);
    return failed;
}
