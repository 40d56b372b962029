/* rt_threads.c: the JIT cache under concurrent launches (interpreter, no
 * GPU): many threads asking for the same few variants at once compile each
 * exactly once, every request is served, and launches from several threads
 * on their own buffers all compute the right answer. */
#include "rt_test.h"

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def shift(x_ptr, out_ptr, n, delta, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + delta, mask=m)\n";

enum { THREADS = 8, ROUNDS = 40, VARIANTS = 4, N = 300 };

static tk_context *ctx;
static tk_kernel *kern;
static int thread_errors[THREADS];

typedef struct Work {
    int id;
} Work;

static void *worker(void *p)
{
    int id = ((Work *)p)->id;
    void *dx, *dout;
    float x[N], out[N];
    if (tk_alloc(ctx, sizeof x, &dx) != TK_OK || tk_alloc(ctx, sizeof out, &dout) != TK_OK) {
        thread_errors[id]++;
        return NULL;
    }
    for (int i = 0; i < N; i++)
        x[i] = (float)(i + id);
    if (tk_copy_to(ctx, dx, x, sizeof x) != TK_OK)
        thread_errors[id]++;
    for (int r = 0; r < ROUNDS; r++) {
        int block = 32 << (r % VARIANTS);
        tk_arg args[] = {tk_ptr(dx, TK_F32), tk_ptr(dout, TK_F32), tk_i32(N), tk_i32(id * 100 + r),
                         tk_const("BLOCK", block)};
        tk_kernel_info info;
        if (tk_kernel_prepare(kern, args, 5, NULL, &info) != TK_OK)
            thread_errors[id]++;
        if (r % 8 != 0)
            continue; /* launch now and then: the interpreter is slower than the cache */
        unsigned grid = (N + (unsigned)block - 1) / (unsigned)block;
        if (tk_launch(kern, (tk_grid){grid, 1, 1}, args, 5, NULL) != TK_OK ||
            tk_copy_from(ctx, out, dout, sizeof out) != TK_OK) {
            thread_errors[id]++;
            continue;
        }
        for (int i = 0; i < N; i++)
            if (out[i] != x[i] + (float)(id * 100 + r))
                thread_errors[id]++;
    }
    tk_free(ctx, dx);
    tk_free(ctx, dout);
    return NULL;
}

int main(void)
{
    setenv("TK_CACHE_DISABLE", "1", 1);
    setenv("TK_INTERPRET_THREADS", "1", 1);
    tk_module *mod = NULL;
    CHECK_OK(tk_context_create(&ctx, &(tk_context_options){.interpret = 1}));
    if (ctx)
        CHECK_OK(tk_module_load_string(ctx, "threads.tk", source, &mod));
    if (mod)
        CHECK_OK(tk_module_kernel(mod, "shift", &kern));
    if (!kern)
        return 1;
    RtStats s0, s1;
    rt_stats_get(&s0);
    pthread_t th[THREADS];
    Work w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t].id = t;
        CHECK(pthread_create(&th[t], NULL, worker, &w[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    rt_stats_get(&s1);
    for (int t = 0; t < THREADS; t++)
        CHECK(thread_errors[t] == 0);
    long requests = (long)THREADS * (ROUNDS + ROUNDS / 8);
    /* delta is a runtime value: BLOCK and delta's specialisation (== 1,
     * divisible by 16, neither) make the variants. Each compiles once. */
    bool seen[VARIANTS][3] = {{false}};
    long distinct = 0;
    for (int t = 0; t < THREADS; t++)
        for (int r = 0; r < ROUNDS; r++) {
            int delta = t * 100 + r, spec = delta == 1 ? 0 : delta % 16 == 0 ? 1 : 2;
            if (!seen[r % VARIANTS][spec]) {
                seen[r % VARIANTS][spec] = true;
                distinct++;
            }
        }
    long compiles = s1.compiles - s0.compiles, hits = s1.memory_hits - s0.memory_hits;
    printf("rt_threads: %ld requests, %ld variants, %ld compiles, %ld memory hits\n", requests,
           distinct, compiles, hits);
    CHECK(compiles == distinct);
    CHECK(compiles + hits == requests);
    tk_module_destroy(mod);
    tk_context_destroy(ctx);
    if (failures)
        fprintf(stderr, "rt_threads: %d checks failed\n", failures);
    else
        printf("rt_threads: all checks passed\n");
    return failures ? 1 : 0;
}
