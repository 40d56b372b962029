/* interp/shape.c: values that are made or moved rather than computed per
 * element: constants, arange, grid ids, splat/broadcast/reshape/trans/join/
 * split/cat, reductions, scans, gather, histogram and dot. Assumes static
 * shapes from the IR. Guarantees a fixed evaluation order: sums reduce as a
 * tree (element k gets k + n/2 added, halving until one is left, like the
 * GPU's butterfly), max/min/argmax/argmin and custom reductions and scans go
 * in index order, dot accumulates k in ascending order in fp32 (fp64 for
 * fp64 accumulators). */
#include "interp/internal.h"

#include <math.h>
#include <string.h>

/* Copies the strided view (shape, strides in elements) of src densely into dst. */
static void gather(void *dst, const void *src, size_t es, int rank, const int *shape,
                   const int64_t *stride)
{
    int64_t idx[TK_MAX_RANK] = {0}, n = 1, off = 0;
    for (int d = 0; d < rank; d++)
        n *= shape[d];
    for (int64_t i = 0; i < n; i++) {
        if (es == 8)
            ((int64_t *)dst)[i] = ((const int64_t *)src)[off];
        else
            ((int32_t *)dst)[i] = ((const int32_t *)src)[off];
        for (int d = rank - 1; d >= 0; d--) {
            off += stride[d];
            if (++idx[d] < shape[d])
                break;
            off -= stride[d] * shape[d];
            idx[d] = 0;
        }
    }
}

static void dense_strides(const Type *t, int64_t *stride)
{
    int64_t s = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= t->shape[d];
    }
}

static void fill(void *dst, size_t es, const void *one, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        memcpy((unsigned char *)dst + (size_t)i * es, one, es);
}

static bool constant(InterpProg *p, const IrOp *op)
{
    const IrValue *r = op->results[0];
    DType dt = r->type.dt;
    unsigned char one[8];
    if (interp_kind(dt) == ST_I) {
        int64_t v = dt == DT_I1 ? op->ival != 0 : interp_wrap(dt, op->ival);
        memcpy(one, &v, 8);
    } else {
        interp_set_double(dt, one, 0, op->fval);
    }
    fill(interp_slot(p, r), interp_elsize(dt), one, type_numel(r->type));
    return true;
}

static bool broadcast(InterpProg *p, const IrOp *op)
{
    const IrValue *x = op->operands[0], *r = op->results[0];
    int64_t in_stride[TK_MAX_RANK], stride[TK_MAX_RANK];
    dense_strides(&x->type, in_stride);
    int shift = r->type.rank - x->type.rank; /* shapes align from the right */
    for (int d = 0; d < r->type.rank; d++) {
        int xd = d - shift;
        stride[d] = xd < 0 || x->type.shape[xd] == 1 ? 0 : in_stride[xd];
    }
    gather(interp_slot(p, r), interp_slot(p, x), interp_elsize(r->type.dt), r->type.rank,
           r->type.shape, stride);
    return true;
}

static bool trans(InterpProg *p, const IrOp *op)
{
    const IrValue *x = op->operands[0], *r = op->results[0];
    int64_t in_stride[TK_MAX_RANK], stride[TK_MAX_RANK];
    dense_strides(&x->type, in_stride);
    for (int d = 0; d < r->type.rank; d++) {
        int from = op->nints == r->type.rank ? op->ints[d] : r->type.rank - 1 - d;
        if (from < 0 || from >= x->type.rank)
            return interp_fail(p, op, "internal error: bad permutation");
        stride[d] = in_stride[from];
    }
    gather(interp_slot(p, r), interp_slot(p, x), interp_elsize(r->type.dt), r->type.rank,
           r->type.shape, stride);
    return true;
}

static bool join_split(InterpProg *p, const IrOp *op)
{
    size_t es = interp_elsize(op->operands[0]->type.dt);
    if (op->kind == IR_JOIN) {
        const unsigned char *a = interp_slot(p, op->operands[0]),
                            *b = interp_slot(p, op->operands[1]);
        unsigned char *r = interp_slot(p, op->results[0]);
        int64_t n = type_numel(op->operands[0]->type);
        for (int64_t i = 0; i < n; i++) {
            memcpy(r + (size_t)(2 * i) * es, a + (size_t)i * es, es);
            memcpy(r + (size_t)(2 * i + 1) * es, b + (size_t)i * es, es);
        }
    } else {
        const unsigned char *x = interp_slot(p, op->operands[0]);
        unsigned char *a = interp_slot(p, op->results[0]), *b = interp_slot(p, op->results[1]);
        int64_t n = type_numel(op->results[0]->type);
        for (int64_t i = 0; i < n; i++) {
            memcpy(a + (size_t)i * es, x + (size_t)(2 * i) * es, es);
            memcpy(b + (size_t)i * es, x + (size_t)(2 * i + 1) * es, es);
        }
    }
    return true;
}

bool interp_shape_op(InterpProg *p, const IrOp *op)
{
    const IrValue *r = op->nres ? op->results[0] : NULL;
    switch (op->kind) {
    case IR_CONST: return constant(p, op);
    case IR_PROGRAM_ID:
    case IR_NUM_PROGRAMS: {
        int ax = op->axis >= 0 && op->axis < 3 ? op->axis : 0;
        int64_t v = op->kind == IR_PROGRAM_ID ? p->pid[ax] : p->L->grid[ax];
        int64_t *out = interp_slot(p, r);
        out[0] = interp_wrap(r->type.dt, v);
        return true;
    }
    case IR_ARANGE: {
        int64_t *out = interp_slot(p, r), n = type_numel(r->type);
        for (int64_t i = 0; i < n; i++)
            out[i] = interp_wrap(r->type.dt, op->ival + i);
        return true;
    }
    case IR_SPLAT:
        fill(interp_slot(p, r), interp_elsize(r->type.dt), interp_slot(p, op->operands[0]),
             type_numel(r->type));
        return true;
    case IR_BROADCAST: return broadcast(p, op);
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_HINT:
    case IR_CONVERT_LAYOUT: /* layouts place values on threads; no value changes */
        memmove(interp_slot(p, r), interp_slot(p, op->operands[0]),
                (size_t)type_numel(r->type) * interp_elsize(r->type.dt));
        return true;
    case IR_TRANS: return trans(p, op);
    case IR_JOIN:
    case IR_SPLIT: return join_split(p, op);
    case IR_PARTNER: {
        size_t es = interp_elsize(r->type.dt);
        const unsigned char *in = interp_slot(p, op->operands[0]);
        unsigned char *out = interp_slot(p, r);
        for (int64_t i = 0, n = type_numel(r->type); i < n; i++)
            memcpy(out + (size_t)i * es, in + (size_t)(i ^ op->ival) * es, es);
        return true;
    }
    case IR_CAT: {
        size_t a = (size_t)type_numel(op->operands[0]->type) * interp_elsize(r->type.dt);
        unsigned char *out = interp_slot(p, r);
        memcpy(out, interp_slot(p, op->operands[0]), a);
        memcpy(out + a, interp_slot(p, op->operands[1]),
               (size_t)type_numel(op->operands[1]->type) * interp_elsize(r->type.dt));
        return true;
    }
    default:
        return interp_fail(p, op, "internal error: '%s' is not a shape op", ir_kind_name(op->kind));
    }
}

/* ---- reductions -------------------------------------------------------------------- */

typedef struct Axis {
    int64_t outer, n, inner;
} Axis;

static Axis split_axis(Type t, int axis)
{
    Axis a = {1, 1, 1};
    for (int d = 0; d < t.rank; d++) {
        if (d < axis)
            a.outer *= t.shape[d];
        else if (d == axis)
            a.n = t.shape[d];
        else
            a.inner *= t.shape[d];
    }
    return a;
}

/* Tree sum over the axis, vectorised over `inner`, in place in t. */
#define TREE_SUM(NAME, T, ROUND)                                                                   \
    static void NAME(T *t, Axis ax, DType dt)                                                      \
    {                                                                                              \
        for (int64_t o = 0; o < ax.outer; o++) {                                                   \
            T *base = t + o * ax.n * ax.inner;                                                     \
            for (int64_t len = ax.n; len > 1;) {                                                   \
                int64_t h = (len + 1) / 2;                                                         \
                for (int64_t k = 0; k + h < len; k++)                                              \
                    for (int64_t i = 0; i < ax.inner; i++)                                         \
                        base[k * ax.inner + i] =                                                   \
                            ROUND(base[k * ax.inner + i] + base[(k + h) * ax.inner + i]);          \
                len = h;                                                                           \
            }                                                                                      \
        }                                                                                          \
        (void)dt;                                                                                  \
    }
#define NO_ROUND(x) (x)
#define ROUND_DT(x) ((float)interp_round_to(dt, (x)))
typedef double dbl;
typedef float flt;
TREE_SUM(tree_sum_dbl, dbl, NO_ROUND)
TREE_SUM(tree_sum_f32, flt, NO_ROUND)
TREE_SUM(tree_sum_f16, flt, ROUND_DT) /* fp16/bf16: rounded after every add, as the GPU adds */

static void sum_axis(InterpProg *p, DType dt, const void *x, Axis ax, void *r)
{
    size_t es = interp_elsize(dt);
    memcpy(p->tmp, x, (size_t)(ax.outer * ax.n * ax.inner) * es);
    if (interp_kind(dt) == ST_I) {
        int64_t *t = (int64_t *)p->tmp;
        for (int64_t o = 0; o < ax.outer; o++)
            for (int64_t k = 1; k < ax.n; k++)
                for (int64_t i = 0; i < ax.inner; i++)
                    t[o * ax.n * ax.inner + i] =
                        (int64_t)((uint64_t)t[o * ax.n * ax.inner + i] +
                                  (uint64_t)t[(o * ax.n + k) * ax.inner + i]);
    } else if (interp_kind(dt) == ST_D) {
        tree_sum_dbl((double *)p->tmp, ax, dt);
    } else if (dt == DT_F32) {
        tree_sum_f32((float *)p->tmp, ax, dt);
    } else {
        tree_sum_f16((float *)p->tmp, ax, dt);
    }
    for (int64_t o = 0; o < ax.outer; o++)
        memcpy((unsigned char *)r + (size_t)(o * ax.inner) * es,
               p->tmp + (size_t)(o * ax.n * ax.inner) * es, (size_t)ax.inner * es);
    if (interp_kind(dt) == ST_I)
        interp_wrap_array(dt, r, ax.outer * ax.inner);
}

/* Is x[e] a better max (or min) than x[b]? Plain max/min skip NaN (as
 * fmaxf); argmax/argmin take strictly better values only, so ties keep the
 * first index. */
static bool better(int kind, DType dt, const void *x, int64_t e, int64_t b)
{
    if (kind == RED_ANY)
        return false; /* the elements are equal: the first is the result */
    bool want_max = kind == RED_MAX || kind == RED_ARGMAX;
    bool arg = kind == RED_ARGMAX || kind == RED_ARGMIN;
    if (interp_kind(dt) == ST_I) {
        int64_t u = ((const int64_t *)x)[e], v = ((const int64_t *)x)[b];
        if (dt == DT_U64 || dt == DT_PTR)
            return want_max ? (uint64_t)u > (uint64_t)v : (uint64_t)u < (uint64_t)v;
        return want_max ? u > v : u < v;
    }
    double u = interp_get_double(dt, x, e), v = interp_get_double(dt, x, b);
    if (!arg && isnan(v) && !isnan(u))
        return true;
    return want_max ? u > v : u < v;
}

static void minmax_axis(int kind, DType dt, const void *x, Axis ax, void *r)
{
    size_t es = interp_elsize(dt);
    bool arg = kind == RED_ARGMAX || kind == RED_ARGMIN;
    for (int64_t o = 0; o < ax.outer; o++)
        for (int64_t i = 0; i < ax.inner; i++) {
            int64_t best = o * ax.n * ax.inner + i, at = 0;
            for (int64_t k = 1; k < ax.n; k++) {
                int64_t e = (o * ax.n + k) * ax.inner + i;
                if (better(kind, dt, x, e, best)) {
                    best = e;
                    at = k;
                }
            }
            if (arg)
                ((int64_t *)r)[o * ax.inner + i] = at;
            else
                memcpy((unsigned char *)r + (size_t)(o * ax.inner + i) * es,
                       (const unsigned char *)x + (size_t)best * es, es);
        }
}

enum { MAX_COMBINE = 16 };

static void copy_elem(void *dst, int64_t di, const void *src, int64_t si, size_t es)
{
    memcpy((unsigned char *)dst + (size_t)di * es, (const unsigned char *)src + (size_t)si * es,
           es);
}

/* Runs the combine region on (acc..., x...) with acc in the region's first
 * m arguments; the yielded values become the new acc. */
static bool combine(InterpProg *p, const IrOp *op, int m, const int64_t *elem)
{
    const IrBlock *b = op->regions[0];
    for (int j = 0; j < m; j++)
        copy_elem(interp_slot(p, b->args[m + j]), 0, interp_slot(p, op->operands[j]), elem[j],
                  interp_elsize(op->operands[j]->type.dt));
    const IrOp *t = interp_exec_block(p, b);
    if (!t)
        return false;
    if (t->nops < m)
        return interp_fail(p, op, "internal error: combine region yields %d values", t->nops);
    int64_t buf[MAX_COMBINE];
    for (int j = 0; j < m; j++)
        memcpy(&buf[j], interp_slot(p, t->operands[j]), interp_elsize(op->operands[j]->type.dt));
    for (int j = 0; j < m; j++)
        memcpy(interp_slot(p, b->args[j]), &buf[j], interp_elsize(op->operands[j]->type.dt));
    return true;
}

/* Custom reductions and scans, in index order (reverse for reverse scans). */
static bool custom(InterpProg *p, const IrOp *op, Axis ax, bool scan)
{
    int m = op->nops;
    const IrBlock *b = op->nregions ? op->regions[0] : NULL;
    if (!b || b->nargs != 2 * m || m > MAX_COMBINE || op->nres != m)
        return interp_fail(p, op, "internal error: malformed combine region");
    bool rev = scan && (op->flags & IRF_REVERSE);
    for (int64_t o = 0; o < ax.outer; o++)
        for (int64_t i = 0; i < ax.inner; i++)
            for (int64_t s = 0; s < ax.n; s++) {
                int64_t k = rev ? ax.n - 1 - s : s, elem[MAX_COMBINE];
                for (int j = 0; j < m; j++)
                    elem[j] = (o * ax.n + k) * ax.inner + i;
                if (s == 0) {
                    for (int j = 0; j < m; j++)
                        copy_elem(interp_slot(p, b->args[j]), 0, interp_slot(p, op->operands[j]),
                                  elem[j], interp_elsize(op->operands[j]->type.dt));
                } else if (!combine(p, op, m, elem)) {
                    return false;
                }
                if (!scan && s < ax.n - 1)
                    continue;
                for (int j = 0; j < m; j++)
                    copy_elem(interp_slot(p, op->results[j]), scan ? elem[j] : o * ax.inner + i,
                              interp_slot(p, b->args[j]), 0,
                              interp_elsize(op->operands[j]->type.dt));
            }
    return true;
}

/* The axis a reduce or scan works along, split for iteration; false (with
 * an internal error) when the op is malformed. */
static bool op_axis(InterpProg *p, const IrOp *op, const char *what, Axis *ax)
{
    if (op->nops < 1)
        return interp_fail(p, op, "internal error: %s without inputs", what);
    Type t = op->operands[0]->type;
    int axis = op->axis < 0 ? t.rank + op->axis : op->axis;
    if (axis < 0 || axis >= t.rank)
        return interp_fail(p, op, "internal error: %s axis %d of a rank-%d value", what, op->axis,
                           t.rank);
    *ax = split_axis(t, axis);
    return true;
}

bool interp_reduce(InterpProg *p, const IrOp *op)
{
    Axis ax;
    if (!op_axis(p, op, "reduce", &ax))
        return false;
    if (op->sub == RED_CUSTOM)
        return custom(p, op, ax, false);
    for (int j = 0; j < op->nops && j < op->nres; j++) {
        DType dt = op->operands[j]->type.dt;
        const void *x = interp_slot(p, op->operands[j]);
        void *r = interp_slot(p, op->results[j]);
        if (op->sub == RED_SUM)
            sum_axis(p, dt, x, ax, r);
        else
            minmax_axis(op->sub, dt, x, ax, r);
    }
    return true;
}

bool interp_scan(InterpProg *p, const IrOp *op)
{
    Axis ax;
    if (!op_axis(p, op, "scan", &ax))
        return false;
    if (op->sub == SCAN_CUSTOM)
        return custom(p, op, ax, true);
    bool rev = op->flags & IRF_REVERSE;
    for (int j = 0; j < op->nops && j < op->nres; j++) {
        DType dt = op->operands[j]->type.dt;
        const void *x = interp_slot(p, op->operands[j]);
        void *r = interp_slot(p, op->results[j]);
        for (int64_t o = 0; o < ax.outer; o++)
            for (int64_t i = 0; i < ax.inner; i++) {
                int64_t iacc = 0;
                double dacc = 0;
                for (int64_t s = 0; s < ax.n; s++) {
                    int64_t k = rev ? ax.n - 1 - s : s, e = (o * ax.n + k) * ax.inner + i;
                    if (interp_kind(dt) == ST_I) {
                        iacc = (int64_t)((uint64_t)iacc + (uint64_t)((const int64_t *)x)[e]);
                        ((int64_t *)r)[e] = interp_wrap(dt, iacc);
                    } else {
                        dacc = interp_round_to(dt, dacc + interp_get_double(dt, x, e));
                        interp_set_double(dt, r, e, dacc);
                    }
                }
            }
    }
    return true;
}

/* ---- gather and histogram ---------------------------------------------------------- */

/* Indices are stored sign- or zero-extended to 64 bits, so one unsigned
 * compare rejects negative ones and those past the end alike. */
static bool in_range(int64_t k, int64_t n) { return (uint64_t)k < (uint64_t)n; }

/* Each result element is src's at its own coordinates but along the axis,
 * where it takes its index's; an index outside src gives 0 (the zero of
 * every storage kind is all zero bytes), as on the GPU. */
bool interp_gather(InterpProg *p, const IrOp *op)
{
    const IrValue *x = op->operands[0], *ix = op->operands[1], *r = op->results[0];
    Axis in = split_axis(x->type, op->axis), out = split_axis(ix->type, op->axis);
    size_t es = interp_elsize(r->type.dt);
    const unsigned char *src = interp_slot(p, x);
    const int64_t *k = interp_slot(p, ix);
    unsigned char *dst = interp_slot(p, r);
    for (int64_t e = 0; e < type_numel(ix->type); e++) {
        int64_t o = e / (out.n * out.inner), i = e % out.inner;
        if (in_range(k[e], in.n))
            memcpy(dst + (size_t)e * es, src + (size_t)((o * in.n + k[e]) * in.inner + i) * es, es);
        else
            memset(dst + (size_t)e * es, 0, es);
    }
    return true;
}

/* Counts of the values 0..bins-1 among the elements where the mask holds;
 * other values are not counted. */
bool interp_histogram(InterpProg *p, const IrOp *op)
{
    const IrValue *x = op->operands[0], *m = op->nops > 1 ? op->operands[1] : NULL;
    const int64_t *v = interp_slot(p, x), *live = m ? interp_slot(p, m) : NULL;
    int64_t *count = interp_slot(p, op->results[0]);
    memset(count, 0, (size_t)op->ival * sizeof *count);
    for (int64_t i = 0; i < type_numel(x->type); i++)
        if ((!live || live[i]) && in_range(v[i], op->ival))
            count[v[i]]++;
    return true;
}

/* ---- dot --------------------------------------------------------------------------- */

/* tf32x3 as the GPU computes it (codegen/mma.c): each input x split into
 * big = tf32(x) and small = tf32(x - big); per element, the cross terms
 * small*big + big*small summed from zero (k ascending), a NaN there taken
 * as 0, big*big added on top and the accumulator C last. */
static void dot_tf32x3(const float *A, const float *B, float *C, int64_t batch, int64_t M,
                       int64_t N, int64_t K)
{
    for (int64_t z = 0; z < batch; z++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                float s = 0, *c = C + (z * M + i) * N + j;
                for (int pass = 0; pass < 2; pass++) {
                    for (int64_t k = 0; k < K; k++) {
                        float a = A[(z * M + i) * K + k], b = B[(z * K + k) * N + j];
                        float ab = interp_round_tf32(a), bb = interp_round_tf32(b);
                        if (pass == 1) {
                            s += ab * bb;
                            continue;
                        }
                        s += interp_round_tf32(a - ab) * bb;
                        s += ab * interp_round_tf32(b - bb);
                    }
                    if (pass == 0 && isnan(s))
                        s = 0;
                }
                *c = s + *c;
            }
}

/* Inputs go to fp32 (tf32-rounded for DOT_TF32 with fp32 inputs: the GPU's
 * tensor cores read 10 mantissa bits, so results differ from an fp32 dot
 * by about 1e-3 relative) or fp64, then C[i][j] += A[i][k] * B[k][j] with k
 * ascending; the GPU's MMA sums k in chunks, so the last bits may differ. */
bool interp_dot(InterpProg *p, const IrOp *op)
{
    const IrValue *a = op->operands[0], *b = op->operands[1], *c = op->operands[2];
    const IrValue *r = op->results[0];
    int rank = a->type.rank;
    if (rank < 2 || b->type.rank != rank || r->type.rank != rank)
        return interp_fail(p, op, "internal error: dot of rank %d", rank);
    int64_t batch = rank == 3 ? a->type.shape[0] : 1;
    int64_t M = a->type.shape[rank - 2], K = a->type.shape[rank - 1], N = b->type.shape[rank - 1];
    DType rd = r->type.dt;
    StoreKind rk = interp_kind(rd);
    DType work = rk == ST_I ? DT_I64 : rk == ST_D ? DT_F64 : DT_F32;
    size_t es = interp_elsize(work);
    unsigned char *A = p->tmp, *B = p->tmp + (size_t)(batch * M * K) * es;
    unsigned char *C = interp_slot(p, r);
    interp_cast(a->type.dt, interp_slot(p, a), work, A, batch * M * K);
    interp_cast(b->type.dt, interp_slot(p, b), work, B, batch * K * N);
    interp_cast(c->type.dt, interp_slot(p, c), work, C, batch * M * N);
    if (op->nops > 3 && ((const int64_t *)interp_slot(p, op->operands[3]))[0])
        memset(C, 0, (size_t)(batch * M * N) * es); /* fresh: the accumulator counts as zeros */
    if (op->sub == DOT_TF32X3 && work == DT_F32 && a->type.dt == DT_F32) {
        dot_tf32x3((const float *)A, (const float *)B, (float *)C, batch, M, N, K);
        interp_round_array(rd, (float *)C, batch * M * N);
        return true;
    }
    if (op->sub == DOT_TF32 && work == DT_F32 && (a->type.dt == DT_F32 || b->type.dt == DT_F32)) {
        for (int64_t i = 0; i < batch * M * K; i++)
            ((float *)A)[i] = interp_round_tf32(((float *)A)[i]);
        for (int64_t i = 0; i < batch * K * N; i++)
            ((float *)B)[i] = interp_round_tf32(((float *)B)[i]);
    }
    for (int64_t z = 0; z < batch; z++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t k = 0; k < K; k++) {
                int64_t ai = (z * M + i) * K + k, bi = (z * K + k) * N, ci = (z * M + i) * N;
                if (work == DT_F32) {
                    float av = ((float *)A)[ai], *cr = (float *)C + ci;
                    const float *br = (const float *)B + bi;
                    for (int64_t j = 0; j < N; j++)
                        cr[j] += av * br[j];
                } else if (work == DT_F64) {
                    double av = ((double *)A)[ai], *cr = (double *)C + ci;
                    const double *br = (const double *)B + bi;
                    for (int64_t j = 0; j < N; j++)
                        cr[j] += av * br[j];
                } else {
                    uint64_t av = (uint64_t)((int64_t *)A)[ai];
                    int64_t *cr = (int64_t *)C + ci;
                    const int64_t *br = (const int64_t *)B + bi;
                    for (int64_t j = 0; j < N; j++)
                        cr[j] = (int64_t)((uint64_t)cr[j] + av * (uint64_t)br[j]);
                }
            }
    if (rk == ST_I)
        interp_wrap_array(rd, (int64_t *)C, batch * M * N);
    else if (rk == ST_F)
        interp_round_array(rd, (float *)C, batch * M * N);
    return true;
}

/* ---- rand: Philox 4x32, the streams of triton.language.random -------------------- */

enum {
    PHILOX_KEY_A = 0x9E3779B9u,
    PHILOX_KEY_B = 0xBB67AE85u,
    PHILOX_ROUND_A = 0xD2511F53u,
    PHILOX_ROUND_B = 0xCD9E8D57u
};

static void philox(uint64_t seed, uint32_t offset, int rounds, uint32_t c[4])
{
    uint32_t c0 = offset, c1 = 0, c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < rounds; r++) {
        uint32_t p0 = c0, p2 = c2;
        c0 = (uint32_t)(((uint64_t)PHILOX_ROUND_B * p2) >> 32) ^ c1 ^ k0;
        c2 = (uint32_t)(((uint64_t)PHILOX_ROUND_A * p0) >> 32) ^ c3 ^ k1;
        c1 = PHILOX_ROUND_B * p2;
        c3 = PHILOX_ROUND_A * p0;
        k0 += PHILOX_KEY_A;
        k1 += PHILOX_KEY_B;
    }
    c[0] = c0, c[1] = c1, c[2] = c2, c[3] = c3;
}

/* uint32 -> [0, 1): as int32, negatives folded to -x - 1, times 2^-31 (rounded down). */
static float uniform(uint32_t u)
{
    int32_t x = (int32_t)u;
    x = x < 0 ? -x - 1 : x;
    return (float)x * 4.6566127342e-10f;
}

bool interp_rand(InterpProg *p, const IrOp *op)
{
    const IrValue *seed = op->operands[0], *offs = op->operands[1];
    if (dtype_bits(offs->type.dt) > 32)
        return interp_fail(p, op, "rand with 64-bit offsets is not supported by the interpreter");
    uint64_t s = (uint64_t)((const int64_t *)interp_slot(p, seed))[0];
    const int64_t *o = interp_slot(p, offs);
    int rounds = op->ival > 0 ? (int)op->ival : 10;
    int64_t n = type_numel(op->results[0]->type);
    for (int64_t i = 0; i < n; i++) {
        uint32_t c[4];
        philox(s, (uint32_t)o[i], rounds, c);
        const IrValue *r0 = op->results[0];
        switch (op->sub) {
        case RAND_UNIFORM:
            interp_set_double(r0->type.dt, interp_slot(p, r0), i, uniform(c[0]));
            break;
        case RAND_NORMAL: {
            float u1 = fmaxf(1.0e-7f, uniform(c[0])), th = 6.283185307179586f * uniform(c[1]);
            float rad = (float)sqrt(-2.0 * (double)(float)log(u1));
            interp_set_double(r0->type.dt, interp_slot(p, r0), i, rad * (float)cos(th));
            break;
        }
        default:
            for (int k = 0; k < op->nres && k < 4; k++)
                ((int64_t *)interp_slot(p, op->results[k]))[i] =
                    interp_wrap(op->results[k]->type.dt, (int64_t)c[k]);
            break;
        }
    }
    return true;
}
