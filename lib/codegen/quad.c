/* codegen/quad.c: an 8-bit wgmma A operand made from an accumulator's
 * registers (attention's P, cast to fp8 for its P V) by shuffles inside
 * each quad of lanes rather than through shared memory.
 *
 * The accumulator gives a lane two neighbouring columns of each group of
 * eight; the A fragment wants four neighbouring columns of each group of
 * sixteen: the same rows, so every half word (two elements) of a lane's A
 * registers is a pair of neighbouring registers of one lane of its quad.
 * Two A words whose halves come from the same lanes (a row and the row
 * eight below) travel together: in each of two rounds a lane reads one
 * 32-bit word from a lane of its quad, the pair for each of the two rows,
 * so a group of two words takes two shuffles. Which lane a lane reads, and
 * which pairs a lane offers, are tables over the lane's place in its quad
 * (one lane bit may say which half it takes first, so that the lanes a
 * source serves in a round want the same pairs of it).
 *
 * The plan is made from the two layouts' linear forms and checked for
 * every thread before any code is emitted: where it does not hold, the
 * caller stages the operand through shared memory as before. */
#include "codegen/cg.h"

#include <stdint.h>

#define QUAD_MAX_WORDS 64 /* 256 bytes of A a thread */

typedef struct QuadGroup {
    int w[2];           /* the two A words (slots 4w .. 4w + 3) */
    int from[2][4];     /* by round and quad place: the quad place read */
    int offer[2][4][2]; /* by round and quad place: the pairs offered, for w[0] and w[1] */
} QuadGroup;

typedef struct QuadPlan {
    int nwords, ngroups;
    int bit; /* lane bit saying which half a lane takes in round 0 (-1: half 0) */
    QuadGroup g[QUAD_MAX_WORDS / 2];
    /* by thread and A word: the quad place and pair of each half */
    int8_t *src, *pair;
} QuadPlan;

/* Where the input holds each element: thread and slot. */
static bool invert(const CgLayout *li, int threads, int32_t *who)
{
    for (int64_t e = 0; e < li->numel; e++)
        who[e] = -1;
    for (int t = 0; t < threads; t++)
        for (int s = 0; s < li->per_thread; s++) {
            int64_t e = lin_index(&li->lin, s, t);
            if (e < 0 || e >= li->numel || who[e] >= 0)
                return false; /* copies: not this plan's */
            who[e] = t * li->per_thread + s;
        }
    return true;
}

/* Each half of each A word of each thread: a pair (even slot, the next)
 * of one lane of the same quad. */
static bool halves(const CgLayout *li, const CgLayout *lo, int threads, const int32_t *who,
                   QuadPlan *p)
{
    for (int t = 0; t < threads; t++)
        for (int w = 0; w < p->nwords; w++)
            for (int h = 0; h < 2; h++) {
                int64_t e0 = lin_index(&lo->lin, 4 * w + 2 * h, t);
                int64_t e1 = lin_index(&lo->lin, 4 * w + 2 * h + 1, t);
                if (e0 < 0 || e0 >= li->numel || e1 < 0 || e1 >= li->numel)
                    return false;
                int a = who[e0], b = who[e1], pt = a / li->per_thread, ps = a % li->per_thread;
                if (b != a + 1 || ps % 2 || pt >> 2 != t >> 2 || ps / 2 > INT8_MAX)
                    return false;
                int at = (t * p->nwords + w) * 2 + h;
                p->src[at] = (int8_t)(pt & 3);
                p->pair[at] = (int8_t)(ps / 2);
            }
    return true;
}

/* Words w and v take their halves from the same lanes in every thread. */
static bool same_lanes(const QuadPlan *p, int threads, int w, int v)
{
    for (int t = 0; t < threads; t++)
        for (int h = 0; h < 2; h++)
            if (p->src[(t * p->nwords + w) * 2 + h] != p->src[(t * p->nwords + v) * 2 + h])
                return false;
    return true;
}

/* The rounds of group g with `bit`: the same tables for every quad, and
 * each source offering one word to every lane that reads it. */
static bool rounds(QuadPlan *p, QuadGroup *g, int threads)
{
    for (int k = 0; k < 2; k++)
        for (int q = 0; q < 4; q++)
            g->from[k][q] = g->offer[k][q][0] = g->offer[k][q][1] = -1;
    for (int t = 0; t < threads; t++)
        for (int k = 0; k < 2; k++) {
            int q = t & 3, h = k ^ (p->bit < 0 ? 0 : (q >> p->bit & 1));
            int a0 = (t * p->nwords + g->w[0]) * 2 + h, a1 = (t * p->nwords + g->w[1]) * 2 + h;
            int from = p->src[a0];
            if (g->from[k][q] >= 0 && g->from[k][q] != from)
                return false;
            g->from[k][q] = from;
            int *o = g->offer[k][from];
            if ((o[0] >= 0 && o[0] != p->pair[a0]) || (o[1] >= 0 && o[1] != p->pair[a1]))
                return false;
            o[0] = p->pair[a0];
            o[1] = p->pair[a1];
        }
    return true;
}

/* The plan run as emit() runs it, for every thread: each element of A
 * that the thread ends with is the one the output layout puts there. */
static bool simulate(const QuadPlan *p, const CgLayout *li, const CgLayout *lo, int threads)
{
    for (int t = 0; t < threads; t++) {
        int q = t & 3, c = p->bit < 0 ? 0 : (q >> p->bit & 1);
        for (int i = 0; i < p->ngroups; i++) {
            const QuadGroup *g = &p->g[i];
            for (int h = 0; h < 2; h++) {
                int k = h ^ c, from = g->from[k][q], u = (t & ~3) | from;
                const int *o = g->offer[k][from];
                for (int j = 0; j < 2; j++)
                    for (int b = 0; b < 2; b++)
                        if (o[j] < 0 ||
                            lin_index(&li->lin, 2 * o[j] + b, u) !=
                                lin_index(&lo->lin, 4 * g->w[j] + 2 * h + b, t))
                            return false;
            }
        }
    }
    return true;
}

static bool plan(Cg *cg, const CgLayout *li, const CgLayout *lo, QuadPlan *p)
{
    int threads = 1 << li->lin.nthread;
    if (lo->lin.nthread != li->lin.nthread || lo->numel != li->numel ||
        lo->per_thread != li->per_thread || li->per_thread % 4 ||
        li->per_thread / 4 > QUAD_MAX_WORDS)
        return false;
    p->nwords = li->per_thread / 4;
    int32_t *who = cg_alloc(cg, sizeof(int32_t) * (size_t)li->numel);
    size_t n = (size_t)threads * (size_t)p->nwords * 2;
    p->src = cg_alloc(cg, n);
    p->pair = cg_alloc(cg, n);
    if (!invert(li, threads, who) || !halves(li, lo, threads, who, p))
        return false;
    bool used[QUAD_MAX_WORDS] = {false};
    p->ngroups = 0;
    for (int w = 0; w < p->nwords; w++) {
        if (used[w])
            continue;
        int v = w + 1;
        while (v < p->nwords && (used[v] || !same_lanes(p, threads, w, v)))
            v++;
        if (v == p->nwords)
            return false;
        used[w] = used[v] = true;
        p->g[p->ngroups++] = (QuadGroup){.w = {w, v}};
    }
    for (p->bit = -1; p->bit < 2; p->bit++) {
        bool ok = true;
        for (int i = 0; i < p->ngroups && ok; i++)
            ok = rounds(p, &p->g[i], threads);
        if (ok)
            return simulate(p, li, lo, threads);
    }
    return false;
}

/* Pair i of the input as 16 bits, element 2i in the low byte: the two
 * bytes one cvt of two fp32 gives, which LLVM folds back to them. */
static LLVMValueRef pair16(Cg *cg, const CgVal *x, int i)
{
    LLVMTypeRef et = LLVMTypeOf(x->el[0]);
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(et, 2));
    v = LLVMBuildInsertElement(cg->b, v, x->el[2 * i], cg_i32(cg, 0), "");
    v = LLVMBuildInsertElement(cg->b, v, x->el[2 * i + 1], cg_i32(cg, 1), "");
    return LLVMBuildBitCast(cg->b, v, LLVMInt16TypeInContext(cg->ctx), "");
}

/* Pairs a and b as one word, a in the low half. */
static LLVMValueRef pairs_word(Cg *cg, const CgVal *x, const int *ab)
{
    if (ab[0] < 0)
        return cg_i32(cg, 0);
    LLVMTypeRef i16 = LLVMInt16TypeInContext(cg->ctx);
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(i16, 2));
    v = LLVMBuildInsertElement(cg->b, v, pair16(cg, x, ab[0]), cg_i32(cg, 0), "");
    v = LLVMBuildInsertElement(cg->b, v, pair16(cg, x, ab[1]), cg_i32(cg, 1), "");
    return LLVMBuildBitCast(cg->b, v, LLVMInt32TypeInContext(cg->ctx), "");
}

/* t[q] for the lane's quad place q, as selects. */
static LLVMValueRef by_place(Cg *cg, LLVMValueRef q, LLVMValueRef *t)
{
    LLVMValueRef v = t[3];
    for (int i = 2; i >= 0; i--) {
        LLVMValueRef is = LLVMBuildICmp(cg->b, LLVMIntEQ, q, cg_i32(cg, i), "");
        v = LLVMBuildSelect(cg->b, is, t[i], v, "");
    }
    return v;
}

static bool same_pairs(const int *a, const int *b) { return a[0] == b[0] && a[1] == b[1]; }

/* The word a lane offers, by its quad place q: one select where a single
 * bit of q decides (the usual case), else one per place. */
static LLVMValueRef offered(Cg *cg, const int (*t)[2], const CgVal *x, LLVMValueRef q)
{
    for (int o = 0; o <= 2; o++) { /* the mask of the deciding bit */
        bool by_bit = true;        /* o = 0: the same for all */
        for (int i = 0; i < 4; i++)
            by_bit &= same_pairs(t[i], t[i & o]);
        if (!by_bit)
            continue;
        if (!o)
            return pairs_word(cg, x, t[0]);
        LLVMValueRef set = LLVMBuildICmp(
            cg->b, LLVMIntNE, LLVMBuildAnd(cg->b, q, cg_i32(cg, o), ""), cg_i32(cg, 0), "");
        return LLVMBuildSelect(cg->b, set, pairs_word(cg, x, t[o]), pairs_word(cg, x, t[0]), "");
    }
    LLVMValueRef w[4];
    for (int i = 0; i < 4; i++)
        w[i] = pairs_word(cg, x, t[i]);
    return by_place(cg, q, w);
}

/* One round of group g: the word this lane offers, read from the lane
 * its quad place says. */
static LLVMValueRef round_word(Cg *cg, const QuadGroup *g, int k, const CgVal *x, LLVMValueRef q,
                               LLVMValueRef base)
{
    int64_t table = 0;
    for (int i = 0; i < 4; i++)
        table |= (int64_t)(g->from[k][i] & 3) << (2 * i);
    LLVMValueRef from =
        LLVMBuildLShr(cg->b, cg_i32(cg, table), LLVMBuildShl(cg->b, q, cg_i32(cg, 1), ""), "");
    from = LLVMBuildOr(cg->b, base, LLVMBuildAnd(cg->b, from, cg_i32(cg, 3), ""), "");
    return cg_shfl(cg, "idx", offered(cg, g->offer[k], x, q), DT_I32, from);
}

/* prmt.b32: bytes of {b, a} picked by the selector's nibbles. */
static LLVMValueRef permute(Cg *cg, LLVMValueRef a, LLVMValueRef b, LLVMValueRef sel)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), pt[3] = {i32, i32, i32};
    LLVMValueRef args[3] = {a, b, sel};
    return cg_asm_pure(cg, i32, pt, 3, "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r", args);
}

static CgVal emit(Cg *cg, const QuadPlan *p, const CgVal *x, DType dt)
{
    CgVal r = cg_val_new(cg, x->n);
    LLVMValueRef lane = LLVMBuildAnd(cg->b, cg->tid, cg_i32(cg, 31), "");
    LLVMValueRef q = LLVMBuildAnd(cg->b, lane, cg_i32(cg, 3), "");
    LLVMValueRef base = LLVMBuildAnd(cg->b, lane, cg_i32(cg, ~3), "");
    /* half h came in round h, or with the bit set in round 1 - h: the low
     * halves of the two words make the first A word, the high ones the
     * second, each in one prmt */
    LLVMValueRef sel[2] = {cg_i32(cg, 0x5410), cg_i32(cg, 0x7632)};
    if (p->bit >= 0) {
        LLVMValueRef set =
            LLVMBuildICmp(cg->b, LLVMIntNE, LLVMBuildAnd(cg->b, q, cg_i32(cg, 1 << p->bit), ""),
                          cg_i32(cg, 0), "");
        sel[0] = LLVMBuildSelect(cg->b, set, cg_i32(cg, 0x1054), sel[0], "");
        sel[1] = LLVMBuildSelect(cg->b, set, cg_i32(cg, 0x3276), sel[1], "");
    }
    LLVMTypeRef bytes = LLVMVectorType(cg_type(cg, dt), 4);
    for (int i = 0; i < p->ngroups; i++) {
        const QuadGroup *g = &p->g[i];
        LLVMValueRef got[2] = {round_word(cg, g, 0, x, q, base), round_word(cg, g, 1, x, q, base)};
        for (int j = 0; j < 2; j++) {
            LLVMValueRef w =
                LLVMBuildBitCast(cg->b, permute(cg, got[0], got[1], sel[j]), bytes, "");
            for (int b = 0; b < 4; b++)
                r.el[4 * g->w[j] + b] = LLVMBuildExtractElement(cg->b, w, cg_i32(cg, b), "");
        }
    }
    return r;
}

bool cg_convert_quad(Cg *cg, const IrOp *op)
{
    const IrValue *in = op->operands[0], *res = op->results[0];
    const Layout *il = in->layout, *ol = res->layout;
    if (cg->sm != 90 || !cg->o->arch || dtype_bits(in->type.dt) != 8 || !il || !ol ||
        il->kind != LY_MMA || il->version != 3 || ol->kind != LY_DOT_OP || ol->opidx != 0 ||
        ol->kpack != 4)
        return false;
    CgLayout li = cg_layout(cg, in), lo = cg_layout(cg, res);
    QuadPlan *p = cg_alloc(cg, sizeof *p);
    if (!plan(cg, &li, &lo, p))
        return false;
    CgVal x = cg_get(cg, in);
    if (x.n != li.per_thread)
        return false;
    cg_set(cg, res, emit(cg, p, &x, in->type.dt));
    return true;
}
