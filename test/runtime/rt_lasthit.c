/* rt_lasthit.c: launches that alternate between specialisations of one
 * kernel (element type, a pointer's 16-byte alignment, a scalar equal to 1
 * or divisible by 16 or neither, a constexpr value, num_warps) each run the
 * variant of their own key: every variant is compiled once, every later
 * launch is a memory hit on it, the variant a launch ran is the one its key
 * names, and the results are right. A cache-hit shortcut that kept the last
 * variant across a change of any key word fails here. */
#include "rt_test.h"

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def affine(x_ptr, out_ptr, n, BLOCK: tl.constexpr, ADD: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = offs < n\n"
    "    x = tl.load(x_ptr + offs, mask=m)\n"
    "    tl.store(out_ptr + offs, 2 * x + n + ADD, mask=m)\n";

enum { N = 64 };

typedef struct Case {
    const char *what;
    tk_dtype dt; /* TK_F32 or TK_I32 */
    int skew;    /* elements the pointers are moved by (1: not 16-byte aligned) */
    int n, block, add, warps;
} Case;

static const Case cases[] = {
    {"f32, aligned, n % 16 == 0", TK_F32, 0, 16, 16, 0, 0},
    {"f32, misaligned pointers", TK_F32, 1, 16, 16, 0, 0},
    {"f32, n == 1", TK_F32, 0, 1, 16, 0, 0},
    {"f32, n neither 1 nor a multiple of 16", TK_F32, 0, 17, 16, 0, 0},
    {"i32 elements", TK_I32, 0, 16, 16, 0, 0},
    {"constexpr BLOCK changed", TK_F32, 0, 16, 32, 0, 0},
    {"constexpr ADD changed", TK_F32, 0, 16, 16, 3, 0},
    {"num_warps 2", TK_F32, 0, 16, 16, 0, 2},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

typedef struct Fixture {
    tk_context *ctx;
    tk_module *mod;
    tk_kernel *k;
    void *x, *out; /* N + 4 elements of 4 bytes */
} Fixture;

static bool setup(Fixture *f)
{
    memset(f, 0, sizeof *f);
    if (tk_context_create(&f->ctx, &(tk_context_options){.interpret = 1}) != TK_OK ||
        tk_module_load_string(f->ctx, "lasthit.tk", source, &f->mod) != TK_OK ||
        tk_module_kernel(f->mod, "affine", &f->k) != TK_OK ||
        tk_alloc(f->ctx, (N + 4) * 4, &f->x) != TK_OK ||
        tk_alloc(f->ctx, (N + 4) * 4, &f->out) != TK_OK) {
        fprintf(stderr, "setup failed: %s\n", tk_last_error());
        return false;
    }
    return true;
}

/* The inputs of case c: x[i] = i - 5 in its element type, out zeroed. */
static void fill(Fixture *f, const Case *c)
{
    uint32_t x[N + 4], zero[N + 4] = {0};
    for (int i = 0; i < N + 4; i++) {
        float v = (float)(i - 5);
        int32_t w = i - 5;
        if (c->dt == TK_F32)
            memcpy(&x[i], &v, 4);
        else
            memcpy(&x[i], &w, 4);
    }
    CHECK_OK(tk_copy_to(f->ctx, f->x, x, sizeof x));
    CHECK_OK(tk_copy_to(f->ctx, f->out, zero, sizeof zero));
}

/* out[i] = 2 x[i] + n + ADD for i < n, untouched (0) past n. */
static void check_result(Fixture *f, const Case *c, int round)
{
    uint32_t got[N + 4];
    CHECK_OK(tk_copy_from(f->ctx, got, f->out, sizeof got));
    for (int i = 0; i < N; i++) {
        int j = i + c->skew; /* the element the kernel's i-th lane wrote */
        double want = i < c->n ? 2.0 * (j - 5) + c->n + c->add : 0.0;
        float fv;
        int32_t iv;
        memcpy(&fv, &got[j], 4);
        memcpy(&iv, &got[j], 4);
        double v = c->dt == TK_F32 ? fv : iv;
        if (v != want) {
            fprintf(stderr, "round %d, %s: out[%d] = %g, want %g\n", round, c->what, i, v, want);
            failures++;
            return;
        }
    }
}

/* Launches case c and checks that the variant it ran is the one of its
 * key (the table's last hit after the launch). */
static void launch(Fixture *f, const Case *c, int round)
{
    fill(f, c);
    char *x = (char *)f->x + 4 * c->skew, *out = (char *)f->out + 4 * c->skew;
    tk_arg args[] = {tk_ptr(x, c->dt), tk_ptr(out, c->dt), tk_i32(c->n),
                     tk_const("BLOCK", c->block), tk_const("ADD", c->add)};
    tk_launch_options o = {0};
    o.num_warps = c->warps;
    tk_grid g = {(unsigned)((N + c->block - 1) / c->block), 1, 1};
    CHECK_OK(tk_launch(f->k, g, args, 5, &o));
    RtLaunchArgs la;
    CHECK_OK(rt_launch_args(f->k, args, 5, &o, &la));
    RtVariant *ran = atomic_load(&f->k->table.last);
    CHECK(ran && rt_key_eq(&ran->key, &la.key));
    check_result(f, c, round);
}

int main(void)
{
    setenv("TK_CACHE_DIR", t_tempdir("lasthit"), 1);
    Fixture f;
    if (!setup(&f))
        return 1;
    RtStats before, after;
    rt_stats_get(&before);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < NCASES; i++)
            launch(&f, &cases[i], round);
        rt_stats_get(&after);
        /* one compile per case, all in the first round; then only hits */
        CHECK(after.compiles - before.compiles == NCASES);
        CHECK(after.memory_hits - before.memory_hits == (long)round * NCASES);
    }
    /* the same case twice in a row, then back: still its own variant */
    launch(&f, &cases[2], 3);
    launch(&f, &cases[2], 3);
    launch(&f, &cases[3], 3);
    launch(&f, &cases[2], 3);
    rt_stats_get(&after);
    CHECK(after.compiles - before.compiles == NCASES);
    tk_free(f.ctx, f.x);
    tk_free(f.ctx, f.out);
    tk_module_destroy(f.mod);
    tk_context_destroy(f.ctx);
    return failures != 0;
}
