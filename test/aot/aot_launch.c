/* aot_launch.c: the launchers of headers tkc --emit=header wrote, run
 * against the fake driver (fake_cuda.c) named by TK_LIBCUDA, with no libtk
 * and no GPU. Checks the dispatcher's choice by alignment and divisibility,
 * the arguments each launch passes (i1 as a byte), one module load per
 * specialisation and context under launches from many threads, launches on
 * another context's stream, error codes (no context, empty grid, a fault,
 * misfit arguments, no driver, a failing cuInit) and the image chosen for
 * each device. Includes <tk/tk.h> first: the shared types must agree. */
#define _GNU_SOURCE
#include "tk/tk.h"

#include "mixed_aot.h"
#include "vector_add_aot.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_cuda.h"

static int failures;
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__,      \
                    #cond, tk_aot_last_error());                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static FakeLog *fake;
static fake_set_current_fn set_current;
static fake_current_fn current;

static tk_grid grid1(unsigned x)
{
    tk_grid g = {x, 1, 1};
    return g;
}

static const FakeLaunch *last_launch(void) { return &fake->launches[fake->nlaunches - 1]; }

static void expect_vector_add_params(void)
{
    fake->expect_kernel = "vector_add";
    fake->nparams = 4;
    fake->param_bytes[0] = fake->param_bytes[1] = fake->param_bytes[2] = 8;
    fake->param_bytes[3] = 4;
}

/* Aligned pointers and n % 16 == 0 take the :16 specialisation; anything
 * else the plain one; the arguments arrive as given. */
static void test_dispatch(void)
{
    expect_vector_add_params();
    set_current(0);
    CHECK(vector_add_aot(NULL, grid1(4), 0x1000, 0x2000, 0x3000, 1024) == TK_OK);
    const FakeLaunch *l = last_launch();
    CHECK(l->image == vector_add_aot_0d1d2d3d_ptx && l->context == 0 && l->grid[0] == 4);
    CHECK(l->block == vector_add_aot_NUM_WARPS * 32 && l->shared == 0 && l->stream == 0);
    CHECK(l->param[0] == 0x1000 && l->param[1] == 0x2000 && l->param[2] == 0x3000);
    CHECK(l->param[3] == 1024);
    CHECK(vector_add_aot(NULL, grid1(4), 0x1004, 0x2000, 0x3000, 1024) == TK_OK);
    CHECK(last_launch()->image == vector_add_aot_0123_ptx && last_launch()->param[0] == 0x1004);
    CHECK(vector_add_aot(NULL, grid1(4), 0x1000, 0x2000, 0x3000, 1000) == TK_OK);
    CHECK(last_launch()->image == vector_add_aot_0123_ptx && last_launch()->param[3] == 1000);
    /* a specialisation's own launcher refuses arguments that miss its hints */
    int n = fake->nlaunches;
    CHECK(vector_add_aot_0d1d2d3d(NULL, grid1(4), 0x1008, 0x2000, 0x3000, 1024) == TK_ERR_INVALID);
    CHECK(strstr(tk_aot_last_error(), "do not meet its hints (*fp32:16,*fp32:16,*fp32:16,i32:16)"));
    CHECK(fake->nlaunches == n);
    CHECK(vector_add_aot_BLOCK == 256);
}

/* i1 travels as one byte, fp16 as its bits, the renamed parameters in place. */
static void test_types(void)
{
    fake->expect_kernel = "mixed";
    fake->nparams = 6;
    int bytes[] = {8, 1, 2, 8, 8, 1};
    memcpy(fake->param_bytes, bytes, sizeof bytes);
    set_current(0);
    CHECK(mixed(NULL, grid1(1), 0x4000, 7, 0x3c00, 2.5, 32, 200) == TK_OK);
    const FakeLaunch *l = last_launch();
    double x;
    memcpy(&x, &l->param[3], sizeof x);
    CHECK(l->image == mixed_0d1234d5_ptx && l->param[0] == 0x4000 && l->param[1] == 1);
    CHECK(l->param[2] == 0x3c00 && x == 2.5 && l->param[4] == 32 && l->param[5] == 200);
    CHECK(mixed(NULL, grid1(1), 0x4000, 0, 0, 0.0, 1, 0) == TK_OK);
    CHECK(last_launch()->image == mixed_01234c5_ptx && last_launch()->param[1] == 0);
    CHECK(mixed(NULL, grid1(1), 0x4000, 0, 0, 0.0, 3, 0) == TK_ERR_INVALID);
    CHECK(strstr(tk_aot_last_error(), "mixed: the arguments fit none of its specialisations"));
}

static int loads_of(const void *image, int context)
{
    int n = 0;
    for (int i = 0; i < fake->nloads; i++)
        n += fake->loads[i].image == image && fake->loads[i].context == context;
    return n;
}

enum { THREADS = 8, LAUNCHES = 50 };
static int thread_failures[THREADS];

static void *launcher_thread(void *p)
{
    int id = (int)(intptr_t)p;
    set_current(0); /* this thread's current context, as cuCtxSetCurrent */
    for (int i = 0; i < LAUNCHES; i++) {
        tk_devptr x = 0x10000 + (tk_devptr)(i % 2) * 4; /* both specialisations */
        if (vector_add_aot(NULL, grid1(1), x, 0x2000, 0x3000, 64) != TK_OK)
            thread_failures[id]++;
    }
    return NULL;
}

/* Many threads launch on one context: each specialisation is loaded there once. */
static void test_threads(void)
{
    expect_vector_add_params();
    int before = fake->nlaunches;
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, launcher_thread, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++)
        CHECK(thread_failures[i] == 0);
    CHECK(fake->nlaunches == before + THREADS * LAUNCHES);
    CHECK(loads_of(vector_add_aot_0d1d2d3d_ptx, 0) == 1);
    CHECK(loads_of(vector_add_aot_0123_ptx, 0) == 1);
}

/* A stream of the other device's context: the module is loaded there, that
 * context is current for the launch, and the caller's is current again after. */
static void test_other_context(void)
{
    expect_vector_add_params();
    set_current(0);
    int pushes = fake->pushes;
    CHECK(vector_add_aot(FAKE_STREAM(1), grid1(2), 0x1000, 0x2000, 0x3000, 32) == TK_OK);
    const FakeLaunch *l = last_launch();
    CHECK(l->context == 1 && l->load_context == 1 && l->stream == (uintptr_t)FAKE_STREAM(1));
    CHECK(fake->pushes == pushes + 1 && current() == 0);
    CHECK(loads_of(vector_add_aot_0d1d2d3d_ptx, 1) == 1);
    /* a stream of the current context needs no push */
    CHECK(vector_add_aot(FAKE_STREAM(0), grid1(2), 0x1000, 0x2000, 0x3000, 32) == TK_OK);
    CHECK(fake->pushes == pushes + 1 && last_launch()->context == 0);
    /* vector_add_aot_load loads what is missing in a context and launches nothing */
    set_current(1);
    int n = fake->nlaunches;
    CHECK(vector_add_aot_load(NULL) == TK_OK);
    CHECK(loads_of(vector_add_aot_0123_ptx, 1) == 1 && fake->nlaunches == n);
}

static void test_errors(void)
{
    expect_vector_add_params();
    set_current(-1);
    CHECK(vector_add_aot(NULL, grid1(1), 0x1000, 0x2000, 0x3000, 16) == TK_ERR_INVALID);
    CHECK(strstr(tk_aot_last_error(), "no CUDA context for this launch"));
    set_current(0);
    CHECK(vector_add_aot(NULL, grid1(0), 0x1000, 0x2000, 0x3000, 16) == TK_ERR_LAUNCH);
    CHECK(strstr(tk_aot_last_error(), "grid (0, 1, 1) is empty"));
    CHECK(vector_add_aot(NULL, grid1(7777), 0x1000, 0x2000, 0x3000, 16) == TK_ERR_KERNEL_FAULT);
    CHECK(strstr(tk_aot_last_error(),
                 "vector_add_aot_0d1d2d3d: cuLaunchKernel failed: CUDA_ERROR_ILLEGAL_ADDRESS"));
    /* a module whose kernel is not found: the driver's error, nothing kept */
    fake->expect_kernel = "other";
    set_current(1);
    int unloads = fake->unloads;
    CHECK(mixed(NULL, grid1(1), 0x4000, 0, 0, 0.0, 1, 0) == TK_ERR_DRIVER);
    CHECK(strstr(tk_aot_last_error(), "cuModuleGetFunction"));
    CHECK(fake->unloads == unloads + 1);
    CHECK(mixed_01234c5_nloaded == 0 || mixed_01234c5_loaded[0].context_id != 1001);
}

/* A cubin for exactly sm_90a, one for sm_80 and later 8.x minors, else PTX. */
static void test_images(void)
{
    static const unsigned char a90[] = {1}, b80[] = {2};
    tk_aot_image images[] = {{"sm_90a", 9, 0, 1, a90, 1}, {"sm_80", 8, 0, 0, b80, 1}};
    tk_aot_spec s = vector_add_aot_0123_spec;
    s.images = images;
    s.nimages = 2;
    CHECK(tk_aot_pick_image(&s, 9, 0) == &images[0]);
    CHECK(tk_aot_pick_image(&s, 8, 6) == &images[1]);
    CHECK(tk_aot_pick_image(&s, 8, 0) == &images[1]);
    CHECK(tk_aot_pick_image(&s, 10, 0) == NULL); /* the PTX */
    CHECK(tk_aot_pick_image(&s, 7, 5) == NULL);
    /* what was loaded where: the PTX here (no cubins), nothing in an unused context */
    set_current(0);
    CHECK(tk_aot_image_in(&vector_add_aot_0d1d2d3d_spec, NULL) != NULL &&
          strcmp(tk_aot_image_in(&vector_add_aot_0d1d2d3d_spec, NULL), "PTX") == 0);
    CHECK(tk_aot_image_in(&mixed_0d1234d5_spec, FAKE_STREAM(1)) == NULL);
}

/* In a child process (the driver loads once per process): how a launch
 * fails with `lib` as the driver and FAKE_CUDA_INIT=`init`. */
static int child_status(const char *lib, const char *init, const char *want)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TK_LIBCUDA", lib, 1);
        if (init)
            setenv("FAKE_CUDA_INIT", init, 1);
        tk_status s = vector_add_aot(NULL, grid1(1), 0x1000, 0x2000, 0x3000, 16);
        if (!strstr(tk_aot_last_error(), want))
            fprintf(stderr, "child: %s\n", tk_aot_last_error());
        _exit(strstr(tk_aot_last_error(), want) ? (int)s : 100);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: aot_launch path/to/libtk_fake_cuda.so\n");
        return 2;
    }
    CHECK(child_status("/nonexistent/libcuda.so.1", NULL, "no CUDA driver: cannot load") ==
          TK_ERR_NO_DEVICE);
    CHECK(child_status(argv[1], "100", "no usable GPU: cuInit failed with CUDA_ERROR_NO_DEVICE") ==
          TK_ERR_NO_DEVICE);
    setenv("TK_LIBCUDA", argv[1], 1);
    fake_log_fn log_fn;
    void *p;
    CHECK((p = tk_aot_cuda_symbol("fake_log")) != NULL);
    memcpy(&log_fn, &p, sizeof p);
    CHECK((p = tk_aot_cuda_symbol("fake_set_current")) != NULL);
    memcpy(&set_current, &p, sizeof p);
    CHECK((p = tk_aot_cuda_symbol("fake_current")) != NULL);
    memcpy(&current, &p, sizeof p);
    CHECK(tk_aot_cuda_symbol("cuNoSuchCall") == NULL);
    CHECK(strstr(tk_aot_last_error(), "the CUDA driver has no cuNoSuchCall"));
    if (failures)
        return 1;
    fake = log_fn();
    test_dispatch();
    test_types();
    test_threads();
    test_other_context();
    test_errors();
    test_images();
    if (failures)
        fprintf(stderr, "aot_launch: %d checks failed\n", failures);
    else
        printf("aot_launch: all checks passed\n");
    return failures ? 1 : 0;
}
