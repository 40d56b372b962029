/* cases_math.c: the math builtins against C's double-precision functions.
 * Tolerances (||.||-relative) follow what the GPU may use, as Triton does:
 * fast approximations (ex2/lg2/rsqrt/sin/cos .approx, about 2^-22 relative
 * or absolute) get 1e-6 (2e-6 for sin/cos); libdevice functions (~2 ulp)
 * 1e-6; correctly rounded ones (sqrt_rn, div_rn, abs, floor, ceil, clamp)
 * are exact; fp64: 1e-15. Triton 3.6 rejects fp16/bf16 operands of these
 * functions (all but abs), so no case asks for them. */
#include "harness.h"

#include <math.h>

typedef struct Fn {
    const char *name;
    double (*f)(double);
    double tol; /* for fp32 */
} Fn;

static double f_rsqrt(double x) { return 1 / sqrt(x); }
static double f_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double f_clamp(double x) { return x < -0.5 ? -0.5 : x > 0.75 ? 0.75 : x; }
static double f_div3(double x) { return (float)(x / 3.0); }
static double f_sqrt_rn(double x) { return (float)sqrt(x); }
static double f_softcap3(double x) { return 3.0 * tanh(x / 3.0); }
static double f_tanh_pos(double x) { return x > 0 ? tanh(x * 0.1) : x; }

/* Runs `kernel` on x (dtype t) and checks output k against fns[k]. */
static void unary_case(H *h, const char *kernel, tk_dtype t, const Fn *fns, int nfn, double lo,
                       double hi, size_t n, int block)
{
    if (!h_begin(h, "math.%s_%s.n%zu.B%d", kernel, h_dtype_name(t), n, block))
        return;
    tk_kernel *k = h_kernel(h, "math.tk", kernel);
    double *x = h_rand_array(h, t, n, lo, hi);
    void *dx = h_upload(h, t, x, n), *dout = h_output(h, t, nfn * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, t), tk_ptr(dout, t), tk_i32((int)n), tk_const("BLOCK", block)), 4);
    double *out = h_download(h, t, dout, nfn * n);
    double *ref = h_malloc(h, n * sizeof(double));
    for (int j = 0; j < nfn && !h->failed; j++) {
        for (size_t i = 0; i < n; i++)
            ref[i] = h_round_to(t, fns[j].f(x[i]));
        double tol = t == TK_F16 ? 9.8e-4 : t == TK_F64 ? (fns[j].tol ? 1e-15 : 0) : fns[j].tol;
        h_check(h, fns[j].name, out + j * n, ref, n, tol);
    }
    h_end(h);
}

static void binary_case(H *h, const char *kernel, size_t n, int block)
{
    if (!h_begin(h, "math.%s_fp32.n%zu.B%d", kernel, n, block))
        return;
    bool alias = kernel[5] == 'a';
    int nout = alias ? 2 : 3;
    tk_kernel *k = h_kernel(h, "math.tk", kernel);
    double *x = h_rand_array(h, TK_F32, n, 0.1, 10), *y = h_rand_array(h, TK_F32, n, -2, 2);
    void *dx = h_upload(h, TK_F32, x, n), *dy = h_upload(h, TK_F32, y, n);
    void *dout = h_output(h, TK_F32, nout * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, TK_F32), tk_ptr(dy, TK_F32), tk_ptr(dout, TK_F32), tk_i32((int)n),
                    tk_const("BLOCK", block)),
             4);
    double *out = h_download(h, TK_F32, dout, nout * n);
    double *ref = h_malloc(h, 3 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        ref[i] = pow(x[i], y[i]);
        ref[n + i] = tanh(y[i]);
        ref[2 * n + i] = log1p(x[i]);
    }
    h_check(h, alias ? "tl.math.pow" : "libdevice.pow", out, ref, n, 1e-6);
    h_check(h, alias ? "tl.math.tanh" : "libdevice.tanh", out + n, ref + n, n, 1e-6);
    if (!alias)
        h_check(h, "libdevice.log1p", out + 2 * n, ref + 2 * n, n, 1e-6);
    h_end(h);
}

static void int_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "math.int_abs_clamp_cdiv_i32.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "math.tk", "math_int");
    double *x = h_rand_array(h, TK_I32, n, -100000, 100000);
    int lim = (int)h_randint(h, 1000, 50000);
    void *dx = h_upload(h, TK_I32, x, n), *dout = h_output(h, TK_I32, 3 * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dx, TK_I32), tk_ptr(dout, TK_I32), tk_i32((int)n), tk_i32(lim),
                    tk_const("BLOCK", block)),
             4);
    double *out = h_download(h, TK_I32, dout, 3 * n);
    double *ref = h_malloc(h, 3 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double a = fabs(x[i]);
        ref[i] = a;
        ref[n + i] = x[i] < -lim ? -lim : x[i] > lim ? lim : x[i];
        ref[2 * n + i] = floor((a + 6) / 7);
    }
    h_check(h, "abs", out, ref, n, 0);
    h_check(h, "minimum(maximum(x, -lim), lim)", out + n, ref + n, n, 0);
    h_check(h, "cdiv(abs(x), 7)", out + 2 * n, ref + 2 * n, n, 0);
    h_end(h);
}

void cases_math(H *h)
{
    static const Fn pos[] = {{"log", log, 1e-6},
                             {"log2", log2, 1e-6},
                             {"sqrt", sqrt, 1e-6},
                             {"rsqrt", f_rsqrt, 1e-6},
                             {"sqrt_rn", f_sqrt_rn, 0}};
    static const Fn any[] = {{"exp", exp, 1e-6},
                             {"exp2", exp2, 1e-6},
                             {"sin", sin, 2e-6},
                             {"cos", cos, 2e-6},
                             {"abs", fabs, 0},
                             {"floor", floor, 0},
                             {"ceil", ceil, 0},
                             {"erf", erf, 1e-6},
                             {"sigmoid", f_sigmoid, 1e-6},
                             {"libdevice.tanh", tanh, 1e-6},
                             {"clamp", f_clamp, 0},
                             {"div_rn", f_div3, 0}};
    static const Fn tanhs[] = {{"libdevice.tanh", tanh, 1e-6},
                               {"softcap", f_softcap3, 1e-6},
                               {"where_tanh", f_tanh_pos, 1e-6}};
    static const Fn typed[] = {{"exp", exp, 1e-6}, {"log", log, 1e-6}, {"sqrt", sqrt, 1e-6},
                               {"sin", sin, 1e-6}, {"cos", cos, 1e-6}, {"abs", fabs, 0}};
    size_t n = h->gpu ? 100003 : 3001;
    unary_case(h, "math_pos", TK_F32, pos, 5, 0.01, 100, n, 256);
    unary_case(h, "math_any", TK_F32, any, 12, -4, 4, n, 256);
    unary_case(h, "math_tanh", TK_F32, tanhs, 3, -12, 12, n, 256);
    unary_case(h, "math_typed", TK_F64, typed, 6, 0.1, 4, n, 128);
    binary_case(h, "math_libdevice", n, 256);
    binary_case(h, "math_alias", 1000, 64);
    int_case(h, n, 256);
}
