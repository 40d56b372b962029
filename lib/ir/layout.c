/* ir/layout.c: layout kinds and their linear forms (see layout.h). Assumes
 * power-of-two shapes and thread counts; guarantees a linear form whose
 * non-zero offsets are distinct powers of two, so an element index is the
 * OR (equally the XOR or the sum) of the offsets of the set bits. */
#include "ir/ir.h"

#include <string.h>

static int log2i(int64_t v)
{
    int n = 0;
    while (((int64_t)1 << n) < v)
        n++;
    return n;
}

/* Builds a linear form bit by bit: each hardware bit gets the next unused
 * bit of one dim, or 0 once the dim is used up (a copy). */
typedef struct LinBuild {
    LinLayout *ll;
    int rank;
    int logs[TK_LAYOUT_MAX_RANK]; /* log2 of each dim */
    int used[TK_LAYOUT_MAX_RANK]; /* bits of each dim given out so far */
    int64_t stride[TK_LAYOUT_MAX_RANK];
    bool ok;
} LinBuild;

static void lb_init(LinBuild *b, LinLayout *ll, int rank, const int *shape, int threads)
{
    memset(ll, 0, sizeof *ll);
    memset(b, 0, sizeof *b);
    b->ll = ll;
    b->rank = rank;
    b->ok = true;
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        b->logs[d] = log2i(shape[d]);
        b->stride[d] = s;
        s *= shape[d];
    }
    ll->nthread = log2i(threads);
}

static int64_t lb_next(LinBuild *b, int d)
{
    if (d < 0 || b->used[d] >= b->logs[d])
        return 0;
    return b->stride[d] << b->used[d]++;
}

static void lb_reg(LinBuild *b, int d)
{
    if (b->ll->nreg >= TK_LIN_MAX_REG) {
        b->ok = false;
        return;
    }
    b->ll->reg[b->ll->nreg++] = lb_next(b, d);
}

static void lb_thread(LinBuild *b, int *at, int d)
{
    if (*at < b->ll->nthread)
        b->ll->thread[*at] = lb_next(b, d);
    (*at)++;
}

/* Registers for whatever of each dim is left, dims in `order`. */
static void lb_repeat(LinBuild *b, const int *order)
{
    for (int i = 0; i < b->rank; i++)
        while (b->used[order[i]] < b->logs[order[i]] && b->ok)
            lb_reg(b, order[i]);
}

static bool linear_blocked(const Layout *l, LinBuild *b)
{
    int at = 0;
    for (int i = 0; i < l->rank; i++)
        for (int k = log2i(l->spt[l->order[i]]); k > 0; k--)
            lb_reg(b, l->order[i]);
    for (int i = 0; i < l->rank; i++)
        for (int k = log2i(l->tpw[l->order[i]]); k > 0; k--)
            lb_thread(b, &at, l->order[i]);
    for (int i = 0; i < l->rank; i++)
        for (int k = log2i(l->wpc[l->order[i]]); k > 0; k--)
            lb_thread(b, &at, l->order[i]);
    lb_repeat(b, l->order);
    return at == b->ll->nthread;
}

/* Warpgroup MMA with warpgroups side by side along N (v3, wn > 1): each
 * warpgroup's instructions cover a contiguous N / wn columns, so the warp
 * bits the builder put at column bit 3 (mma.sync's interleaving by 8-column
 * tiles) belong above the instruction's own column bits. Rotates column
 * bits [3, logs) of dim d so that the w warp bits go to the top. */
static void lb_warps_above(LinBuild *b, int d, int w)
{
    int top = b->logs[d], up = top - 3 - w;
    if (w <= 0 || up <= 0)
        return;
    LinLayout *ll = b->ll;
    for (int i = 0; i < ll->nreg + ll->nthread; i++) {
        int64_t *v = i < ll->nreg ? &ll->reg[i] : &ll->thread[i - ll->nreg];
        if (*v < b->stride[d] || *v >= (b->stride[d] << top))
            continue;
        int bit = log2i(*v / b->stride[d]);
        if (bit >= 3 && bit < 3 + w)
            *v = b->stride[d] << (bit + up);
        else if (bit >= 3 + w)
            *v = b->stride[d] << (bit - w);
    }
}

/* mma.sync m16n8: c0,c1 hold (g, 2t..2t+1), c2,c3 (g+8, ...), where g is
 * lane / 4 and t lane % 4; warps split M first, then N; the rest repeats
 * over N, then M. */
static bool linear_mma(const Layout *l, LinBuild *b)
{
    if (b->rank != 2)
        return false; /* a shape smaller than the warps' tiles gets copies */
    int at = 0;
    lb_reg(b, 1);
    lb_thread(b, &at, 1);
    lb_thread(b, &at, 1);
    for (int k = 0; k < 3; k++)
        lb_thread(b, &at, 0);
    lb_reg(b, 0);
    for (int k = log2i(l->wm); k > 0; k--)
        lb_thread(b, &at, 0);
    for (int k = log2i(l->wn); k > 0; k--)
        lb_thread(b, &at, 1);
    while (at < b->ll->nthread) /* warps beyond the tile compute copies */
        lb_thread(b, &at, -1);
    const int order[2] = {1, 0};
    lb_repeat(b, order);
    if (l->version == 3)
        lb_warps_above(b, 1, log2i(l->wn));
    return at == b->ll->nthread;
}

/* The A ([M, K]) or B ([K, N]) fragments of one mma: kpack elements of K in
 * a register, lanes % 4 step K by kpack, lanes / 4 step the other dim; A's
 * second register steps M by 8, the last steps K by 4 * kpack. Warps along
 * the other operand's dim hold copies. The rest repeats over K, then the
 * non-K dim. */
static bool linear_dot_op(const Layout *l, LinBuild *b)
{
    const Layout *p = l->parent;
    int kd = l->opidx == 0 ? 1 : 0, od = 1 - kd;
    int kpack = log2i(l->kpack), kinst = kpack + 3; /* 8 x kpack elements of K */
    int need_o = l->opidx == 0 ? 4 + log2i(p->wm) : 3 + log2i(p->wn);
    /* A of fewer than 16 rows on one warp along M, B of fewer than 8
     * columns on one along N: they repeat (copies) */
    bool few = l->opidx == 0 ? p->wm == 1 : p->wn == 1;
    if (b->rank != 2 || b->logs[kd] < kinst || (b->logs[od] < need_o && !few))
        return false;
    int at = 0;
    for (int k = 0; k < kpack; k++)
        lb_reg(b, kd);
    lb_thread(b, &at, kd);
    lb_thread(b, &at, kd);
    for (int k = 0; k < 3; k++)
        lb_thread(b, &at, od);
    if (l->opidx == 0)
        lb_reg(b, od);
    lb_reg(b, kd);
    for (int k = log2i(p->wm); k > 0; k--)
        lb_thread(b, &at, l->opidx == 0 ? od : -1);
    for (int k = log2i(p->wn); k > 0; k--)
        lb_thread(b, &at, l->opidx == 1 ? od : -1);
    while (at < b->ll->nthread)
        lb_thread(b, &at, -1);
    const int order[2] = {kd, od};
    lb_repeat(b, order);
    if (p->version == 3 && l->opidx == 1)
        lb_warps_above(b, od, log2i(p->wn));
    return at == b->ll->nthread;
}

bool layout_linear(const Layout *l, int rank, const int *shape, int threads, LinLayout *out)
{
    if (!l || rank < 1 || rank > TK_LAYOUT_MAX_RANK)
        return false;
    if (l->kind == LY_SLICE) {
        /* the parent over the shape with the removed dim put back at size 1:
         * the threads along it become copies */
        int ps[TK_LAYOUT_MAX_RANK];
        if (!l->parent || rank + 1 > TK_LAYOUT_MAX_RANK || l->dim < 0 || l->dim > rank)
            return false;
        for (int d = 0, s = 0; d <= rank; d++)
            ps[d] = d == l->dim ? 1 : shape[s++];
        return layout_linear(l->parent, rank + 1, ps, threads, out);
    }
    if (l->rank != rank && l->kind != LY_DOT_OP)
        return false;
    LinBuild b;
    lb_init(&b, out, rank, shape, threads);
    bool ok = false;
    switch (l->kind) {
    case LY_BLOCKED: ok = linear_blocked(l, &b); break;
    case LY_MMA: ok = linear_mma(l, &b); break;
    case LY_DOT_OP: ok = l->parent && l->parent->kind == LY_MMA && linear_dot_op(l, &b); break;
    default: break;
    }
    return ok && b.ok;
}

int64_t lin_index(const LinLayout *ll, int64_t reg, int64_t tid)
{
    int64_t e = 0;
    for (int i = 0; i < ll->nreg; i++)
        if (reg >> i & 1)
            e ^= ll->reg[i];
    for (int i = 0; i < ll->nthread; i++)
        if (tid >> i & 1)
            e ^= ll->thread[i];
    return e;
}

int lin_contiguous(const LinLayout *ll)
{
    int n = 0;
    while (n < ll->nreg && ll->reg[n] == (int64_t)1 << n)
        n++;
    return 1 << n;
}

int lin_run(const LinLayout *ll, int rank, const int *shape, int *dim)
{
    *dim = rank - 1;
    if (ll->nreg == 0 || ll->reg[0] == 1)
        return lin_contiguous(ll);
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; stride *= shape[d--])
        if (ll->reg[0] == stride && shape[d] > 1) {
            int n = 0;
            while (n < ll->nreg && ll->reg[n] == stride << n && (1 << n) < shape[d])
                n++;
            *dim = d;
            return 1 << n;
        }
    return 1;
}

int64_t lin_thread_copies(const LinLayout *ll)
{
    int64_t m = 0;
    for (int i = 0; i < ll->nthread; i++)
        if (!ll->thread[i])
            m |= (int64_t)1 << i;
    return m;
}

int64_t lin_reg_copies(const LinLayout *ll)
{
    int64_t m = 0;
    for (int i = 0; i < ll->nreg; i++)
        if (!ll->reg[i])
            m |= (int64_t)1 << i;
    return m;
}

bool lin_equal(const LinLayout *a, const LinLayout *b)
{
    return a->nreg == b->nreg && a->nthread == b->nthread &&
        memcmp(a->reg, b->reg, sizeof(int64_t) * (size_t)a->nreg) == 0 &&
        memcmp(a->thread, b->thread, sizeof(int64_t) * (size_t)a->nthread) == 0;
}

static bool ints_equal(const int *a, const int *b, int n)
{
    return memcmp(a, b, sizeof(int) * (size_t)n) == 0;
}

bool layout_equal(const Layout *a, const Layout *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind || a->rank != b->rank)
        return false;
    switch (a->kind) {
    case LY_BLOCKED:
        return ints_equal(a->spt, b->spt, a->rank) && ints_equal(a->tpw, b->tpw, a->rank) &&
            ints_equal(a->wpc, b->wpc, a->rank) && ints_equal(a->order, b->order, a->rank);
    case LY_SLICE: return a->dim == b->dim && layout_equal(a->parent, b->parent);
    case LY_MMA: return a->wm == b->wm && a->wn == b->wn && a->version == b->version;
    case LY_DOT_OP:
        return a->opidx == b->opidx && a->kpack == b->kpack && layout_equal(a->parent, b->parent);
    case LY_SHARED:
        return a->vec == b->vec && a->per_phase == b->per_phase && a->max_phase == b->max_phase &&
            ints_equal(a->order, b->order, a->rank);
    }
    return false;
}

static void print_ints(StrBuf *sb, const char *key, const int *v, int n)
{
    sb_printf(sb, "%s=[", key);
    for (int i = 0; i < n; i++)
        sb_printf(sb, i ? ",%d" : "%d", v[i]);
    sb_putc(sb, ']');
}

void layout_print(StrBuf *sb, const Layout *l)
{
    switch (l->kind) {
    case LY_BLOCKED:
        sb_puts(sb, "blocked<");
        print_ints(sb, "spt", l->spt, l->rank);
        print_ints(sb, ", tpw", l->tpw, l->rank);
        print_ints(sb, ", wpc", l->wpc, l->rank);
        print_ints(sb, ", order", l->order, l->rank);
        sb_putc(sb, '>');
        break;
    case LY_SLICE:
        sb_printf(sb, "slice<dim=%d, parent=", l->dim);
        layout_print(sb, l->parent);
        sb_putc(sb, '>');
        break;
    case LY_MMA:
        if (l->version == 3)
            sb_printf(sb, "mma<v3, m64nN, warps=[%d,%d]>", l->wm, l->wn);
        else
            sb_printf(sb, "mma<m16n8, warps=[%d,%d]>", l->wm, l->wn);
        break;
    case LY_DOT_OP:
        sb_printf(sb, "dot_op<%s, kpack=%d, parent=", l->opidx ? "b" : "a", l->kpack);
        layout_print(sb, l->parent);
        sb_putc(sb, '>');
        break;
    case LY_SHARED:
        sb_printf(sb, "shared<vec=%d, per_phase=%d, max_phase=%d, ", l->vec, l->per_phase,
                  l->max_phase);
        print_ints(sb, "order", l->order, l->rank);
        sb_putc(sb, '>');
        break;
    }
}

static Layout layout_of(LayoutKind kind, int rank)
{
    Layout l;
    memset(&l, 0, sizeof l);
    l.kind = kind;
    l.rank = rank;
    return l;
}

Layout layout_blocked_default(int rank, const int *shape, int vec, int threads)
{
    return layout_blocked_along(rank, shape, rank - 1, vec, threads);
}

Layout layout_blocked_along(int rank, const int *shape, int fast, int vec, int threads)
{
    Layout l = layout_of(LY_BLOCKED, rank);
    l.order[0] = fast;
    for (int d = rank - 1, i = 1; d >= 0; d--)
        if (d != fast)
            l.order[i++] = d;
    for (int d = 0; d < rank; d++) {
        l.spt[d] = 1;
        l.tpw[d] = 1;
        l.wpc[d] = 1;
    }
    l.spt[fast] = vec;
    int lanes = 32, warps = threads / 32 > 0 ? threads / 32 : 1;
    for (int i = 0; i < rank; i++) {
        int d = l.order[i];
        int cap = shape[d] / l.spt[d] > 0 ? shape[d] / l.spt[d] : 1;
        l.tpw[d] = cap < lanes ? cap : lanes;
        lanes /= l.tpw[d];
    }
    l.tpw[l.order[rank - 1]] *= lanes;
    for (int i = 0; i < rank; i++) {
        int d = l.order[i];
        int cap = shape[d] / (l.spt[d] * l.tpw[d]) > 0 ? shape[d] / (l.spt[d] * l.tpw[d]) : 1;
        l.wpc[d] = cap < warps ? cap : warps;
        warps /= l.wpc[d];
    }
    l.wpc[l.order[rank - 1]] *= warps;
    return l;
}

Layout layout_mma(int M, int N, int num_warps)
{
    Layout l = layout_of(LY_MMA, 2);
    l.wm = 1;
    l.wn = 1;
    while (l.wm * l.wn < num_warps) {
        bool m_room = M >= 32 * l.wm, n_room = N >= 16 * l.wn;
        if (m_room && (M / l.wm >= N / l.wn || !n_room))
            l.wm *= 2;
        else if (n_room)
            l.wn *= 2;
        else
            break;
    }
    return l;
}

Layout layout_shared_tile(int rows, int cols, int elem_bytes)
{
    Layout l = layout_of(LY_SHARED, 2);
    l.order[0] = 1;
    l.order[1] = 0;
    l.vec = 16 / elem_bytes < cols ? 16 / elem_bytes : cols;
    int row_bytes = cols * elem_bytes;
    l.per_phase = row_bytes >= 128 ? 1 : 128 / row_bytes;
    int chunks = cols / l.vec, most = 8 / l.per_phase;
    l.max_phase = chunks < most ? chunks : most;
    if (l.max_phase < 1)
        l.max_phase = 1;
    (void)rows;
    return l;
}

Layout layout_mma_rows(int M, int num_warps)
{
    Layout l = layout_of(LY_MMA, 2);
    l.wn = 1;
    l.wm = 1;
    while (l.wm < num_warps && M >= 32 * l.wm)
        l.wm *= 2;
    return l;
}

Layout layout_wgmma(int M, int num_warps)
{
    Layout l = layout_mma_rows(M, num_warps);
    l.version = 3;
    if (l.wm % 4 == 0 && num_warps % l.wm == 0)
        l.wn = num_warps / l.wm; /* the other warpgroups take parts of N */
    return l;
}

bool layout_needs_kmajor(const Layout *mma, int elem_bytes)
{
    return mma && mma->kind == LY_MMA && mma->version == 3 && elem_bytes != 2;
}

int64_t lin_dim_bits(int rank, const int *shape, int dim)
{
    int64_t stride = 1;
    for (int d = rank - 1; d > dim; d--)
        stride *= shape[d];
    return (stride * shape[dim] - 1) & ~(stride - 1);
}

Layout layout_dot_op(const Layout *mma, int opidx, int kpack)
{
    Layout l = layout_of(LY_DOT_OP, 2);
    l.parent = mma;
    l.opidx = opidx;
    l.kpack = kpack;
    return l;
}
