/* layout_reshape.c: the layouts in which a reshape or a trans moves no
 * data.
 *
 * A reshape keeps every element's row-major index, so the blocked layout
 * of the new shape that gives each thread the same elements in the same
 * registers makes it free (codegen/layout.c reads it in place). In the
 * shapes' default layouts each reshape crossed threads through shared
 * memory: a sort written as Triton's own (a block of 2^k elements viewed
 * as k dims of 2, a compare and swap per dim) spent most of its time
 * there. The layout is found from the linear form: each register, lane and
 * warp bit of the source places one bit of the row-major index; the new
 * shape's dims take those bits from the lowest up, a dim's own as a
 * blocked layout orders them (its registers, then lanes, then warps, then
 * repeats of its registers). The result is checked against the source
 * bit for bit. */
#include "passes/layout_internal.h"

enum { BIT_NONE, BIT_REG, BIT_LANE, BIT_WARP };

static int log2_exact(int64_t x)
{
    int b = 0;
    while (x > 1 && !(x & 1))
        x >>= 1, b++;
    return x == 1 ? b : -1;
}

/* What places each bit of the row-major index in ll (kind[] of n bits);
 * false where a bit is placed twice, by a sum of bits, or not at all (a
 * layout that copies elements: a reshape image of it is not kept). */
static bool classify(const LinLayout *ll, int n, unsigned char *kind)
{
    for (int b = 0; b < n; b++)
        kind[b] = BIT_NONE;
    for (int i = 0; i < ll->nreg + ll->nthread; i++) {
        int64_t off = i < ll->nreg ? ll->reg[i] : ll->thread[i - ll->nreg];
        int b = log2_exact(off);
        if (off <= 0 || b < 0 || b >= n || kind[b] != BIT_NONE)
            return false;
        kind[b] = i < ll->nreg ? BIT_REG : i - ll->nreg < 5 ? BIT_LANE : BIT_WARP;
    }
    for (int b = 0; b < n; b++)
        if (kind[b] == BIT_NONE)
            return false;
    return true;
}

/* The blocked layout of shape t whose dims take the index bits as kind
 * says, or false where a dim's bits are not in a blocked layout's order. */
static bool candidate(const Type *t, const unsigned char *kind, Layout *c)
{
    *c = (Layout){.kind = LY_BLOCKED, .rank = t->rank};
    int bit = 0;
    for (int d = t->rank - 1; d >= 0; d--) {
        int w = log2_exact(t->shape[d]), stage = BIT_REG;
        if (w < 0)
            return false;
        c->spt[d] = c->tpw[d] = c->wpc[d] = 1;
        for (int k = 0; k < w; k++, bit++) {
            int kb = kind[bit];
            if (kb == BIT_REG && stage == BIT_REG)
                c->spt[d] *= 2;
            else if (kb == BIT_LANE && stage <= BIT_LANE)
                stage = BIT_LANE, c->tpw[d] *= 2;
            else if (kb == BIT_WARP && stage <= BIT_WARP)
                stage = BIT_WARP, c->wpc[d] *= 2;
            else if (kb == BIT_REG)
                stage = BIT_WARP + 1; /* repeats of the dim's registers */
            else
                return false;
        }
        c->order[t->rank - 1 - d] = d;
    }
    return true;
}

/* Whether b places the elements of shape t as a does those of its own
 * shape: the same threads, the same registers (in any order). */
static bool same_places(const LinLayout *a, const LinLayout *b)
{
    if (a->nreg != b->nreg || a->nthread != b->nthread)
        return false;
    for (int j = 0; j < a->nthread; j++)
        if (a->thread[j] != b->thread[j])
            return false;
    int64_t seen = 0, want = 0;
    for (int i = 0; i < a->nreg; i++) {
        if (log2_exact(b->reg[i]) < 0)
            return false;
        want |= a->reg[i], seen |= b->reg[i];
    }
    return seen == want;
}

bool lp_reshape_image(const LayoutPass *p, const Layout *l, const Type *from, const Type *to,
                      Layout *out)
{
    LinLayout a, b;
    int n = log2_exact(type_numel(*from));
    unsigned char kind[64];
    if (!l || l->kind != LY_BLOCKED || n < 0 || n >= 64 || from->rank == 0 || to->rank == 0 ||
        !layout_linear(l, from->rank, from->shape, p->threads, &a) || !classify(&a, n, kind))
        return false;
    return candidate(to, kind, out) && layout_linear(out, to->rank, to->shape, p->threads, &b) &&
        same_places(&a, &b) && lp_fits(p, out, to);
}

const Layout *lp_reshape_layout(LayoutPass *p, const Layout *l, const Type *from, const Type *to)
{
    Layout c;
    return lp_reshape_image(p, l, from, to, &c) ? ir_layout_intern(p->f, &c) : NULL;
}

/* A trans keeps each element in its thread and register when the blocked
 * layout's per-dim fields move with the dims and its order names the
 * moved dims: result dim i is source dim perm[i]. With `back`, l is the
 * result's layout and the source's is made. */
bool lp_trans_image(const LayoutPass *p, const Layout *l, const IrOp *trans, bool back, Layout *out)
{
    int n = l->rank, to[TK_LAYOUT_MAX_RANK]; /* source dim -> result dim */
    if (l->kind != LY_BLOCKED || trans->nints != n)
        return false;
    for (int i = 0; i < n; i++)
        to[trans->ints[i]] = i;
    *out = *l;
    for (int i = 0; i < n; i++) {
        int from = back ? to[i] : trans->ints[i];
        out->spt[i] = l->spt[from], out->tpw[i] = l->tpw[from], out->wpc[i] = l->wpc[from];
        out->order[i] = back ? trans->ints[l->order[i]] : to[l->order[i]];
    }
    const IrValue *v = back ? trans->operands[0] : trans->results[0];
    return lp_fits(p, out, &v->type);
}

const Layout *lp_trans_layout(LayoutPass *p, const Layout *l, const IrOp *trans, bool back)
{
    Layout t;
    if (!lp_trans_image(p, l, trans, back, &t))
        return NULL;
    const Layout *r = ir_layout_intern(p->f, &t);
    if (!r)
        p->failed = true;
    return r;
}
