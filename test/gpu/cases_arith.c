/* cases_arith.c: integer arithmetic on every width and signedness (wrap-
 * around, // and % truncating with negative operands, shifts), float
 * arithmetic in fp16/bf16/fp32/fp64, type promotion, comparisons and where.
 * Integers are exact. A float reference is the exact result rounded once to
 * the output dtype; the tolerance is two units of that dtype's rounding
 * (||.||-relative), which admits a correctly rounded or fused result and
 * nothing else. */
#include "harness.h"

#include <math.h>
#include <string.h>

static bool is_unsigned(tk_dtype t)
{
    return t == TK_U8 || t == TK_U16 || t == TK_U32 || t == TK_U64;
}

/* Unit roundoff of a float dtype. */
static double unit(tk_dtype t)
{
    switch (t) {
    case TK_F16: return 0x1p-11;
    case TK_BF16: return 0x1p-8;
    case TK_F32: return 0x1p-24;
    default: return 0x1p-53;
    }
}

/* Any value of t but the most negative (whose // -1 overflows), never 0;
 * half of them small so that quotients are not all 0. */
static int64_t rand_int_of(H *h, tk_dtype t)
{
    if (h_randint(h, 0, 1))
        return is_unsigned(t) ? h_randint_nz(h, 1, 9) : h_randint_nz(h, -9, 9);
    for (;;) {
        int64_t v = h_wrap(t, (int64_t)h_rand_u64(h));
        bool min = (t == TK_I8 && v == -128) || (t == TK_I16 && v == -32768) ||
            (t == TK_I32 && v == INT32_MIN) || (t == TK_I64 && v == INT64_MIN);
        if (v != 0 && !min)
            return v;
    }
}

#define N_INT_OPS 15
static const char *int_op_names[N_INT_OPS] = {
    "+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>", "minimum", "maximum", "a*3+7", "-a", "~a"};

static int64_t int_ref(tk_dtype t, int op, int64_t a, int64_t b)
{
    bool u = is_unsigned(t);
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b, r = 0;
    int s = (int)(b & 7);
    switch (op) {
    case 0: r = ua + ub; break;
    case 1: r = ua - ub; break;
    case 2: r = ua * ub; break;
    case 3: r = u ? ua / ub : (uint64_t)(a / b); break;
    case 4: r = u ? ua % ub : (uint64_t)(a % b); break;
    case 5: r = ua & ub; break;
    case 6: r = ua | ub; break;
    case 7: r = ua ^ ub; break;
    case 8: r = ua << s; break;
    case 9: r = u ? ua >> s : (uint64_t)(a >> s); break;
    case 10: r = u ? (ua < ub ? ua : ub) : (uint64_t)(a < b ? a : b); break;
    case 11: r = u ? (ua > ub ? ua : ub) : (uint64_t)(a > b ? a : b); break;
    case 12: r = ua * 3 + 7; break;
    case 13: r = 0 - ua; break;
    default: r = ~ua; break;
    }
    return h_wrap(t, (int64_t)r);
}

static void int_case(H *h, tk_dtype t, size_t n, int block)
{
    if (!h_begin(h, "arith.int_%s.n%zu.B%d", h_dtype_name(t), n, block))
        return;
    tk_kernel *k = h_kernel(h, "arith.tk", "int_ops");
    int64_t *a = h_malloc(h, n * sizeof(int64_t)), *b = h_malloc(h, n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        a[i] = rand_int_of(h, t);
        b[i] = rand_int_of(h, t);
    }
    void *da = h_upload_int(h, t, a, n), *db = h_upload_int(h, t, b, n);
    void *dout = h_output(h, t, N_INT_OPS * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(da, t), tk_ptr(db, t), tk_ptr(dout, t), tk_i32((int)n),
                    tk_const("BLOCK", block)),
             4);
    int64_t *out = h_download_int(h, t, dout, N_INT_OPS * n);
    int64_t *ref = h_malloc(h, n * sizeof(int64_t));
    for (int op = 0; op < N_INT_OPS && !h->failed; op++) {
        for (size_t i = 0; i < n; i++)
            ref[i] = int_ref(t, op, a[i], b[i]);
        h_check_int(h, int_op_names[op], out + op * n, ref, n);
    }
    h_end(h);
}

#define N_FLOAT_OPS 9
static const char *float_op_names[N_FLOAT_OPS] = {
    "+", "-", "*", "/", "minimum", "maximum", "-a", "a*0.5+1.25", "fma(a,b,a)"};

static double float_ref(tk_dtype t, int op, double a, double b)
{
    double r;
    switch (op) {
    case 0: r = a + b; break;
    case 1: r = a - b; break;
    case 2: r = a * b; break;
    case 3: r = a / b; break;
    case 4: r = a < b ? a : b; break;
    case 5: r = a > b ? a : b; break;
    case 6: r = -a; break;
    case 7: r = a * 0.5 + 1.25; break;
    default: r = fma(a, b, a); break;
    }
    return h_round_to(t, r);
}

static void float_case(H *h, tk_dtype t, size_t n, int block)
{
    if (!h_begin(h, "arith.float_%s.n%zu.B%d", h_dtype_name(t), n, block))
        return;
    tk_kernel *k = h_kernel(h, "arith.tk", "float_ops");
    double *a = h_rand_array(h, t, n, -10, 10), *b = h_rand_array(h, t, n, -10, 10);
    for (size_t i = 0; i < n; i += 7)
        b[i] = a[i]; /* ties for minimum/maximum, zeros for a - b */
    void *da = h_upload(h, t, a, n), *db = h_upload(h, t, b, n);
    void *dout = h_output(h, t, N_FLOAT_OPS * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(da, t), tk_ptr(db, t), tk_ptr(dout, t), tk_i32((int)n),
                    tk_const("BLOCK", block)),
             4);
    double *out = h_download(h, t, dout, N_FLOAT_OPS * n);
    double *ref = h_malloc(h, n * sizeof(double));
    for (int op = 0; op < N_FLOAT_OPS && !h->failed; op++) {
        for (size_t i = 0; i < n; i++)
            ref[i] = float_ref(t, op, a[i], b[i]);
        h_check(h, float_op_names[op], out + op * n, ref, n, 2 * unit(t));
    }
    h_end(h);
}

static void mixed_case(H *h, size_t n, int block)
{
    if (!h_begin(h, "arith.promotion_mixed.n%zu.B%d", n, block))
        return;
    tk_kernel *k = h_kernel(h, "arith.tk", "mixed");
    double *hv = h_rand_array(h, TK_F16, n, -100, 100),
           *bf = h_rand_array(h, TK_BF16, n, -100, 100);
    double *iv = h_rand_array(h, TK_I32, n, -1000, 1000),
           *cv = h_rand_array(h, TK_I8, n, -128, 127);
    double *uv = h_rand_array(h, TK_U8, n, 0, 255);
    void *dh = h_upload(h, TK_F16, hv, n), *dbf = h_upload(h, TK_BF16, bf, n);
    void *di = h_upload(h, TK_I32, iv, n), *dc = h_upload(h, TK_I8, cv, n);
    void *du = h_upload(h, TK_U8, uv, n);
    void *dfo = h_output(h, TK_F32, 3 * n), *dio = h_output(h, TK_I32, 2 * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(dh, TK_F16), tk_ptr(dbf, TK_BF16), tk_ptr(di, TK_I32), tk_ptr(dc, TK_I8),
                    tk_ptr(du, TK_U8), tk_ptr(dfo, TK_F32), tk_ptr(dio, TK_I32), tk_i32((int)n),
                    tk_const("BLOCK", block)),
             4);
    double *fo = h_download(h, TK_F32, dfo, 3 * n), *io = h_download(h, TK_I32, dio, 2 * n);
    double *ref = h_malloc(h, 3 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        ref[i] = (float)(hv[i] + bf[i]);
        ref[n + i] = h_round_to(TK_F16, hv[i] + h_round_to(TK_F16, iv[i]));
        ref[2 * n + i] = (float)((double)(float)iv[i] / 7.0);
    }
    h_check(h, "fp16 + i32 (fp16)", fo + n, ref + n, n, 2 * unit(TK_F16));
    h_check(h, "i32 / 7 (fp32)", fo + 2 * n, ref + 2 * n, n, 2 * unit(TK_F32));
    double *ri = h_malloc(h, 2 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        ri[i] = cv[i] + iv[i];
        ri[n + i] = uv[i] + iv[i];
    }
    h_check(h, "i8 + i32", io, ri, n, 0);
    h_check(h, "u8 + i32", io + n, ri + n, n, 0);
    /* Last, so the other checks report first. docs/LANGUAGE.md makes fp16 + bf16
     * fp32 (Triton 3.6 computes it in fp16 and overflows large bf16 values).
     * Exact: an fp16 sum is within one fp16 unit and would pass a tolerance. */
    h_check(h, "fp16 + bf16 (fp32, as docs/LANGUAGE.md)", fo, ref, n, 0);
    h_end(h);
}

static void promote_more_case(H *h, int block)
{
    if (!h_begin(h, "arith.promotion_more.B%d", block))
        return;
    size_t n = (size_t)block;
    tk_kernel *k = h_kernel(h, "arith.tk", "promote_more");
    double *c = h_rand_array(h, TK_I8, n, -128, 127), *u = h_rand_array(h, TK_U8, n, 0, 255);
    int64_t *w = h_malloc(h, n * sizeof(int64_t)), *iv = h_malloc(h, n * sizeof(int64_t));
    for (size_t i = 0; i < n; i++) {
        w[i] = h_randint(h, 0, UINT32_MAX);
        iv[i] = h_randint(h, INT32_MIN, INT32_MAX);
    }
    double *hv = h_rand_array(h, TK_F16, n, -100, 100), *g = h_rand_array(h, TK_F16, n, 0.5, 30);
    void *dc = h_upload(h, TK_I8, c, n), *du = h_upload(h, TK_U8, u, n);
    void *dw = h_upload_int(h, TK_U32, w, n), *di = h_upload_int(h, TK_I32, iv, n);
    void *dh = h_upload(h, TK_F16, hv, n), *dg = h_upload(h, TK_F16, g, n);
    void *dcu = h_output(h, TK_I32, n), *dwi = h_output(h, TK_I64, n);
    void *ddiv = h_output(h, TK_F32, n), *dsum = h_output(h, TK_I32, n + 1);
    h_launch(h, k, h_grid(1, 1, 1),
             H_ARGS(tk_ptr(dc, TK_I8), tk_ptr(du, TK_U8), tk_ptr(dw, TK_U32), tk_ptr(di, TK_I32),
                    tk_ptr(dh, TK_F16), tk_ptr(dg, TK_F16), tk_ptr(dcu, TK_I32),
                    tk_ptr(dwi, TK_I64), tk_ptr(ddiv, TK_F32), tk_ptr(dsum, TK_I32),
                    tk_const("BLOCK", block)),
             4);
    int64_t *cu = h_download_int(h, TK_I32, dcu, n), *wi = h_download_int(h, TK_I64, dwi, n);
    double *dv = h_download(h, TK_F32, ddiv, n);
    int64_t *sum = h_download_int(h, TK_I32, dsum, n + 1);
    int64_t *rcu = h_malloc(h, n * sizeof(int64_t)), *rwi = h_malloc(h, n * sizeof(int64_t));
    int64_t *rsum = h_malloc(h, (n + 1) * sizeof(int64_t));
    double *rdv = h_malloc(h, n * sizeof(double));
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        rcu[i] = (uint8_t)((int64_t)c[i] + (int64_t)u[i]);
        rwi[i] = (uint32_t)(w[i] + iv[i]);
        rdv[i] = (float)(hv[i] / g[i]);
        s += (int64_t)c[i];
        rsum[i] = s;
    }
    rsum[n] = s;
    h_check_int(h, "i8 + u8 (u8)", cu, rcu, n);
    h_check_int(h, "u32 + i32 (u32)", wi, rwi, n);
    h_check(h, "fp16 / fp16 (fp32)", dv, rdv, n, 2 * unit(TK_F32));
    h_check_int(h, "cumsum(i8), sum(i8) (i32)", sum, rsum, n + 1);
    h_end(h);
}

static void compare_case(H *h, tk_dtype t, size_t n, int block)
{
    if (!h_begin(h, "arith.compare_where_%s.n%zu.B%d", h_dtype_name(t), n, block))
        return;
    tk_kernel *k = h_kernel(h, "arith.tk", "compare");
    double *a = h_rand_array(h, t, n, -50, 50), *b = h_rand_array(h, t, n, -50, 50);
    for (size_t i = 0; i < n; i += 5)
        b[i] = a[i];
    if (t == TK_F32)
        for (size_t i = 3; i < n; i += 17)
            a[i] = NAN;
    void *da = h_upload(h, t, a, n), *db = h_upload(h, t, b, n);
    void *dcmp = h_output(h, TK_I8, 8 * n), *dsel = h_output(h, t, 2 * n);
    h_launch(h, k, h_grid((unsigned)h_cdiv(n, block), 1, 1),
             H_ARGS(tk_ptr(da, t), tk_ptr(db, t), tk_ptr(dcmp, TK_I8), tk_ptr(dsel, t),
                    tk_i32((int)n), tk_const("BLOCK", block)),
             4);
    double *cmp = h_download(h, TK_I8, dcmp, 8 * n), *sel = h_download(h, t, dsel, 2 * n);
    double *rc = h_malloc(h, 8 * n * sizeof(double)), *rs = h_malloc(h, 2 * n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double x = a[i], y = b[i];
        double r[8] = {x<y, x <= y, x> y, x >= y, x == y, x != y, (x < y && y > 0) || x == y,
                       (x > 0) != (y > 0)};
        for (int c = 0; c < 8; c++)
            rc[c * n + i] = r[c];
        rs[i] = x > y ? h_round_to(t, x - y) : h_round_to(t, y * 2);
        rs[n + i] = x < 0 ? 0 : x;
    }
    static const char *names[8] = {
        "<", "<=", ">", ">=", "==", "!=", "(a<b & b>0) | a==b", "(a>0) ^ (b>0)"};
    for (int c = 0; c < 8; c++)
        h_check(h, names[c], cmp + c * n, rc + c * n, n, 0);
    h_check(h, "where(a > b, a - b, b * 2)", sel, rs, n, 0);
    h_check(h, "where(a < 0, 0, a)", sel + n, rs + n, n, 0);
    h_end(h);
}

void cases_arith(H *h)
{
    static const tk_dtype ints[] = {TK_I8, TK_I16, TK_I32, TK_I64, TK_U8, TK_U16, TK_U32, TK_U64};
    static const tk_dtype floats[] = {TK_F16, TK_BF16, TK_F32, TK_F64};
    size_t n = h->gpu ? 100003 : 3001;
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        int_case(h, ints[i], n, 256);
    for (size_t i = 0; i < sizeof floats / sizeof *floats; i++)
        float_case(h, floats[i], n, 256);
    int_case(h, TK_I32, 100, 16);
    float_case(h, TK_F32, 5000, 2048);
    mixed_case(h, 2001, 128);
    promote_more_case(h, 256);
    promote_more_case(h, 32);
    compare_case(h, TK_F32, n, 512);
    compare_case(h, TK_I32, n, 64);
}
