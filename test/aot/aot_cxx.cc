// aot_cxx.cc: generated headers compile as C++ (-Wall -Wextra -Werror), two
// in one translation unit, before <tk/tk.h>; a launch through the fake
// driver (TK_LIBCUDA) gives the same answers as from C.
#include "mixed_aot.h"
#include "vector_add_aot.h"

#include "tk/tk.h"

#include "fake_cuda.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    setenv("TK_LIBCUDA", argv[1], 1);
    void *p = tk_aot_cuda_symbol("fake_log");
    void *q = tk_aot_cuda_symbol("fake_set_current");
    if (!p || !q) {
        fprintf(stderr, "aot_cxx: %s\n", tk_aot_last_error());
        return 1;
    }
    fake_log_fn log_fn;
    fake_set_current_fn set_current;
    memcpy(&log_fn, &p, sizeof p);
    memcpy(&set_current, &q, sizeof q);
    FakeLog *fake = log_fn();
    fake->expect_kernel = "vector_add";
    set_current(0);
    tk_grid grid = {2, 1, 1};
    int failures = 0;
    failures += vector_add_aot(NULL, grid, 0x1000, 0x2000, 0x3000, 4096) != TK_OK;
    failures += fake->nlaunches != 1 || fake->launches[0].image != vector_add_aot_0d1d2d3d_ptx;
    failures += vector_add_aot(NULL, grid, 0x1001, 0x2000, 0x3000, 4096) != TK_OK;
    failures += fake->nlaunches != 2 || fake->launches[1].image != vector_add_aot_0123_ptx;
    tk_status s = mixed(NULL, grid, 0x1000, 1, 0, 0.0, 5, 0);
    failures += s != TK_ERR_INVALID;
    if (failures)
        fprintf(stderr, "aot_cxx: %d checks failed (%s)\n", failures, tk_aot_last_error());
    else
        printf("aot_cxx: all checks passed\n");
    return failures ? 1 : 0;
}
