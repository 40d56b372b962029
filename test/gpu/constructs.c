/* constructs.c: the per-construct numeric suite. Runs every case of the
 * case groups on the reference interpreter (default) or the GPU (--gpu),
 * printing `PASS name (rel err E)` or `FAIL name: why` per case and
 * `N passed, N failed` at the end; exit status 1 when anything failed.
 * Cases run in a child process that the parent watches: a crash, a hang or a
 * kernel fault that leaves the CUDA context unusable fails that one case and
 * the suite goes on with the next in a fresh child. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TK_SOURCE_DIR
#define TK_SOURCE_DIR "."
#endif

static void run_groups(H *h)
{
    void (*groups[])(H *) = {cases_grid_memory, cases_shape,        cases_gather,    cases_atomic,
                             cases_lock,        cases_arith,        cases_cast,      cases_math,
                             cases_reduce,      cases_dot,          cases_dot_prec,  cases_control,
                             cases_misc,        cases_random_debug, cases_fp8,       cases_pipeline,
                             cases_flatten,     cases_warp_spec,    cases_tma_store, cases_cluster};
    for (size_t i = 0; i < sizeof groups / sizeof *groups; i++) {
        groups[i](h);
        /* A kernel fault poisons a CUDA context for good: let the parent
         * start a fresh process for the remaining cases. */
        if (h->poisoned_ctx)
            return;
    }
    if (h->protocol) {
        printf("@done\n");
        fflush(stdout);
    }
}

/* The child: runs the cases from number `h->skip` on, in this process. */
static int run_child(H *h)
{
    run_groups(h);
    h_cleanup(h);
    return 0;
}

typedef struct Watch {
    long cur; /* index of the case that began last, -1 none */
    char name[200];
    bool reported; /* that case printed its PASS/FAIL */
    bool done;
    int passed, failed;
} Watch;

static void watch_line(Watch *w, char *line)
{
    if (strncmp(line, "@begin ", 7) == 0) {
        char *sp = strchr(line + 7, ' ');
        w->cur = strtol(line + 7, NULL, 10);
        snprintf(w->name, sizeof w->name, "%s", sp ? sp + 1 : "?");
        w->name[strcspn(w->name, "\n")] = 0;
        w->reported = false;
        return;
    }
    if (strcmp(line, "@done\n") == 0) {
        w->done = true;
        return;
    }
    if (strncmp(line, "PASS ", 5) == 0) {
        w->passed++;
        w->reported = true;
    } else if (strncmp(line, "FAIL ", 5) == 0) {
        w->failed++;
        w->reported = true;
    }
    fputs(line, stdout);
    fflush(stdout);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Runs one child from case `from`; returns false when the child got through
 * every case, else sets *next to the case after the one that broke it. */
static bool supervise_once(H *h, Watch *w, long from, int timeout_s, long *next)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(2);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        close(fds[1]);
        h->skip = from;
        h->protocol = true;
        _exit(run_child(h));
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    w->cur = -1;
    w->reported = true;
    w->done = false;
    char line[8192];
    size_t have = 0;
    bool timed_out = false;
    double last = now_s();
    for (;;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int r = poll(&p, 1, 1000);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0) {
            if (now_s() - last > timeout_s) {
                timed_out = true;
                kill(pid, SIGKILL);
                break;
            }
            continue;
        }
        ssize_t got = read(fds[0], line + have, sizeof line - 1 - have);
        if (got <= 0)
            break;
        have += (size_t)got;
        line[have] = 0;
        char *start = line, *nl;
        while ((nl = strchr(start, '\n'))) {
            char save = nl[1];
            nl[1] = 0;
            bool was_begin = strncmp(start, "@begin ", 7) == 0;
            watch_line(w, start);
            if (was_begin)
                last = now_s();
            nl[1] = save;
            start = nl + 1;
        }
        have = strlen(start);
        memmove(line, start, have + 1);
        if (have == sizeof line - 1) { /* an overlong line: pass it on as it is */
            fputs(line, stdout);
            have = 0;
        }
    }
    fclose(in);
    int st = 0;
    waitpid(pid, &st, 0);
    if (w->done)
        return false;
    if (w->cur >= 0 && !w->reported) {
        if (timed_out)
            printf("FAIL %s: timed out after %d s\n", w->name, timeout_s);
        else if (WIFSIGNALED(st))
            printf("FAIL %s: crashed (signal %d: %s)\n", w->name, WTERMSIG(st),
                   strsignal(WTERMSIG(st)));
        else
            printf("FAIL %s: the process exited with status %d mid-case\n", w->name,
                   WEXITSTATUS(st));
        w->failed++;
    } else if (w->cur < 0 && (WIFSIGNALED(st) || WEXITSTATUS(st) != 0)) {
        printf("FAIL suite: the runner died before its first case (status %d)\n", st);
        w->failed++;
        return false;
    }
    *next = w->cur + 1;
    return true;
}

static void usage(void)
{
    printf("usage: constructs [--gpu] [--filter SUBSTR] [--kernels DIR] [--seed N]\n"
           "                  [--timeout SECONDS] [--list] [--no-fork]\n"
           "Runs the per-construct numeric suite on the reference interpreter\n"
           "(default) or on the GPU (--gpu). Kernels come from DIR, else\n"
           "$TK_SOURCE_DIR/test/gpu/kernels, else the source tree it was built from.\n");
}

int main(int argc, char **argv)
{
    H h = {0};
    static char kdir[1024];
    const char *src = getenv("TK_SOURCE_DIR");
    snprintf(kdir, sizeof kdir, "%s/test/gpu/kernels", src && *src ? src : TK_SOURCE_DIR);
    h.kdir = kdir;
    h.seed = 1;
    bool nofork = false;
    int timeout_s = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (strcmp(a, "--gpu") == 0)
            h.gpu = true;
        else if (strcmp(a, "--filter") == 0 && more)
            h.filter = argv[++i];
        else if (strcmp(a, "--kernels") == 0 && more)
            h.kdir = argv[++i];
        else if (strcmp(a, "--seed") == 0 && more)
            h.seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(a, "--timeout") == 0 && more)
            timeout_s = atoi(argv[++i]);
        else if (strcmp(a, "--list") == 0)
            h.list = true;
        else if (strcmp(a, "--no-fork") == 0)
            nofork = true;
        else {
            usage();
            return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 ? 0 : 2;
        }
    }
    if (h.list) {
        run_groups(&h);
        return 0;
    }
    if (timeout_s <= 0)
        timeout_s = 120;
    printf("constructs: %s, kernels from %s\n", h.gpu ? "GPU" : "interpreter", h.kdir);
    int passed, failed;
    if (nofork) {
        run_child(&h);
        if (h.poisoned_ctx)
            printf("note: a kernel fault ended the CUDA context; later cases did not run\n");
        passed = h.passed;
        failed = h.failedn;
    } else {
        Watch w = {0};
        long from = 0, next = 0;
        while (supervise_once(&h, &w, from, timeout_s, &next))
            from = next;
        passed = w.passed;
        failed = w.failed;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
