/* codegen/scan.c: scans (cumsum, associative_scan over one value or a tuple)
 * in registers. A blocked layout gives the bits of a line's axis position,
 * lowest first, from a thread's registers, then from consecutive lane bits,
 * then from warp bits, then from registers again (the layout repeated along
 * the line: "chunks"). The scan follows that order: each thread scans its
 * registers of a chunk, lanes scan the thread totals with shfl.sync.up,
 * warps exchange their totals through a few words of shared memory, and
 * chunks pass their totals on in the thread. A reverse scan runs the same
 * steps from the other end (shfl.sync.down). Layouts of another shape
 * return false and take the shared-memory path of reduce.c. */
#include <string.h>

#include "codegen/cg.h"

#define SCAN_BITS TK_LIN_MAX_REG

/* Sources of the axis position's bits, lowest first. */
typedef struct ScanPlan {
    int nlo, nl, nw, nhi;
    int lo[SCAN_BITS], hi[SCAN_BITS]; /* register bits */
    int lane0;                        /* lane bits lane0 .. lane0 + nl - 1 */
    int warp[TK_LIN_MAX_THREAD];      /* thread bits (>= 5) */
    int lb;                           /* log2 of the stride of the axis */
    int m;                            /* log2 of the axis length */
    int axis_slots;                   /* register bits that step along the axis */
} ScanPlan;

/* Which basis vector of the layout is exactly `bit`: *reg or *th (-1: none);
 * false when more than one is. */
static bool find_bit(const LinLayout *ll, int64_t bit, int *reg, int *th)
{
    int found = 0;
    *reg = *th = -1;
    for (int i = 0; i < ll->nreg; i++)
        if (ll->reg[i] == bit) {
            *reg = i;
            found++;
        }
    for (int j = 0; j < ll->nthread; j++)
        if (ll->thread[j] == bit) {
            *th = j;
            found++;
        }
    return found == 1;
}

/* Every basis vector that touches the axis must be one of its bits. */
static bool single_bits(const LinLayout *ll, int64_t mask)
{
    for (int i = 0; i < ll->nreg + ll->nthread; i++) {
        int64_t b = i < ll->nreg ? ll->reg[i] : ll->thread[i - ll->nreg];
        if ((b & mask) && (b & (b - 1)))
            return false;
    }
    return true;
}

static bool scan_plan(const LinLayout *ll, const Type *t, int axis, ScanPlan *p)
{
    memset(p, 0, sizeof *p);
    int64_t inner = 1;
    for (int d = axis + 1; d < t->rank; d++)
        inner *= t->shape[d];
    p->lb = cg_ilog2(inner);
    p->m = cg_ilog2(t->shape[axis]);
    if (!single_bits(ll, lin_dim_bits(t->rank, t->shape, axis)))
        return false;
    int stage = 0; /* 0: low registers, 1: lanes, 2: warps, 3: high registers */
    for (int k = 0; k < p->m; k++) {
        int reg, th;
        if (!find_bit(ll, inner << k, &reg, &th))
            return false;
        if (reg >= 0) {
            if (stage > 0)
                stage = 3;
            if (stage == 0)
                p->lo[p->nlo++] = reg;
            else
                p->hi[p->nhi++] = reg;
            p->axis_slots |= 1 << reg;
        } else if (th < 5) {
            if (stage > 1 || (stage == 1 && th != p->lane0 + p->nl))
                return false;
            if (stage == 0)
                p->lane0 = th;
            stage = 1;
            p->nl++;
        } else {
            if (stage > 2)
                return false;
            stage = 2;
            p->warp[p->nw++] = th;
        }
    }
    return true;
}

/* A partial result that some threads may not have: present at compile
 * time, and where `have` is set only in threads where that i1 is true. */
typedef struct Part {
    bool present;
    LLVMValueRef have; /* NULL: every thread has it */
    LLVMValueRef v[8];
} Part;

typedef struct Scan {
    Red *r;
    ScanPlan p;
    bool rev;
    CgLayout l;
    LLVMValueRef rlane, rwarp; /* positions in scan order (reversed for rev) */
    LLVMValueRef lane, warp;   /* as the hardware numbers them */
} Scan;

/* a = combine(a, b) where a comes first in scan order. A reverse scan is the
 * forward scan of the flipped line (as in Triton and the interpreter): the
 * suffix after an element is the combine's left operand. */
static void ordered(Scan *s, LLVMValueRef *a, LLVMValueRef *b) { cg_red_combine(s->r, a, b); }

static void pick(Scan *s, LLVMValueRef c, LLVMValueRef *out, LLVMValueRef *yes, LLVMValueRef *no)
{
    for (int i = 0; i < s->r->n; i++)
        out[i] = LLVMBuildSelect(s->r->cg->b, c, yes[i], no[i], "");
}

/* a then b: each may be missing in some threads. */
static Part join(Scan *s, Part a, Part b)
{
    if (!a.present)
        return b;
    if (!b.present)
        return a;
    Part c = a;
    ordered(s, c.v, b.v);
    LLVMBuilderRef B = s->r->cg->b;
    if (a.have && b.have) {
        LLVMValueRef t[8];
        pick(s, b.have, t, c.v, a.v);
        pick(s, a.have, c.v, t, b.v);
        c.have = LLVMBuildOr(B, a.have, b.have, "");
    } else if (a.have) {
        pick(s, a.have, c.v, c.v, b.v);
        c.have = NULL;
    } else if (b.have) {
        pick(s, b.have, c.v, c.v, a.v);
        c.have = NULL;
    }
    return c;
}

static LLVMValueRef bits_of(Cg *cg, const int *bit, int n, bool rev)
{
    LLVMValueRef p = cg_i32(cg, 0);
    for (int k = 0; k < n; k++) {
        LLVMValueRef b = LLVMBuildAnd(cg->b, LLVMBuildLShr(cg->b, cg->tid, cg_i32(cg, bit[k]), ""),
                                      cg_i32(cg, 1), "");
        p = LLVMBuildOr(cg->b, p, LLVMBuildShl(cg->b, b, cg_i32(cg, k), ""), "");
    }
    return rev ? LLVMBuildXor(cg->b, p, cg_i32(cg, (1 << n) - 1), "") : p;
}

/* Inclusive scan of v over the lanes of a line (Hillis-Steele with shfl.up,
 * shfl.down for rev); *ex becomes the exclusive one (the lanes before). */
static void lane_scan(Scan *s, LLVMValueRef *v, Part *ex)
{
    Cg *cg = s->r->cg;
    const char *mode = s->rev ? "down" : "up";
    for (int k = 0; k < s->p.nl; k++) {
        LLVMValueRef u[8], c[8];
        for (int i = 0; i < s->r->n; i++)
            u[i] = cg_shfl(cg, mode, v[i], s->r->dt[i], cg_i32(cg, 1 << (s->p.lane0 + k)));
        memcpy(c, u, sizeof(LLVMValueRef) * (size_t)s->r->n);
        ordered(s, c, v);
        LLVMValueRef on = LLVMBuildICmp(cg->b, LLVMIntUGE, s->rlane, cg_i32(cg, 1 << k), "");
        pick(s, on, v, c, v);
    }
    ex->present = true;
    ex->have = LLVMBuildICmp(cg->b, LLVMIntNE, s->rlane, cg_i32(cg, 0), "");
    for (int i = 0; i < s->r->n; i++)
        ex->v[i] = cg_shfl(cg, mode, v[i], s->r->dt[i], cg_i32(cg, 1 << s->p.lane0));
}

/* The value of v in the line's last lane (in scan order). */
static void last_lane(Scan *s, LLVMValueRef *v, LLVMValueRef *out)
{
    Cg *cg = s->r->cg;
    int mask = ((1 << s->p.nl) - 1) << s->p.lane0;
    LLVMValueRef src = LLVMBuildAnd(cg->b, s->lane, cg_i32(cg, ~mask & 31), "");
    if (!s->rev)
        src = LLVMBuildOr(cg->b, src, cg_i32(cg, mask), "");
    for (int i = 0; i < s->r->n; i++)
        out[i] = cg_shfl(cg, "idx", v[i], s->r->dt[i], src);
}

static int spread(const int *bit, int n, int v)
{
    int s = 0;
    for (int k = 0; k < n; k++)
        if (v >> k & 1)
            s |= 1 << bit[k];
    return s;
}

/* One chunk of one line as a thread holds it. */
typedef struct Chunk {
    int base;            /* slot of its first register (no low axis bits) */
    LLVMValueRef *pre;   /* inclusive prefixes in the thread, in scan order */
    LLVMValueRef seg[8]; /* inclusive over the lanes: in the last lane, the warp's part */
    Part lex, wex;       /* the lanes and the warps before this thread */
    LLVMValueRef ct[8];  /* the chunk's total over the whole line */
    LLVMValueRef at;     /* its warp 0 word in the shared exchange */
} Chunk;

static void chunk_local(Scan *s, Chunk *ch, const CgVal *x)
{
    int nlo = 1 << s->p.nlo, n = s->r->n;
    size_t bytes = sizeof(LLVMValueRef) * (size_t)n;
    ch->pre = cg_alloc(s->r->cg, bytes * (size_t)nlo);
    LLVMValueRef acc[8];
    for (int ii = 0; ii < nlo; ii++) {
        int slot = ch->base | spread(s->p.lo, s->p.nlo, s->rev ? nlo - 1 - ii : ii);
        LLVMValueRef e[8];
        for (int i = 0; i < n; i++)
            e[i] = x[i].el[slot];
        if (ii == 0)
            memcpy(acc, e, bytes);
        else
            ordered(s, acc, e);
        memcpy(&ch->pre[ii * n], acc, bytes);
    }
    memcpy(ch->seg, acc, bytes);
    if (s->p.nl)
        lane_scan(s, ch->seg, &ch->lex);
}

/* The last lane of each warp's part of a line stores that part's total. */
static void warp_put(Scan *s, const Chunk *ch, const int64_t *off)
{
    Cg *cg = s->r->cg;
    LLVMBasicBlockRef done = NULL;
    if (s->p.nl) {
        LLVMBasicBlockRef put = cg_new_bb(cg, "scan.put");
        done = cg_new_bb(cg, "scan.put.done");
        LLVMValueRef last =
            LLVMBuildICmp(cg->b, LLVMIntEQ, s->rlane, cg_i32(cg, (1 << s->p.nl) - 1), "");
        LLVMBuildCondBr(cg->b, last, put, done);
        LLVMPositionBuilderAtEnd(cg->b, put);
    }
    LLVMValueRef idx = LLVMBuildAdd(cg->b, ch->at, s->warp, "");
    for (int i = 0; i < s->r->n; i++)
        LLVMBuildStore(cg->b, ch->seg[i], cg_smem_addr(cg, off[i], idx, s->r->dt[i]));
    if (done) {
        LLVMBuildBr(cg->b, done);
        LLVMPositionBuilderAtEnd(cg->b, done);
    }
}

/* Every thread reads the totals of its line's warps: those before its warp
 * and all of them (the chunk's total). */
static void warp_take(Scan *s, Chunk *ch, const int64_t *off)
{
    Cg *cg = s->r->cg;
    int nw = 1 << s->p.nw, n = s->r->n;
    LLVMValueRef run[8], ex[8];
    for (int jj = 0; jj < nw; jj++) {
        LLVMValueRef idx = LLVMBuildAdd(cg->b, ch->at, cg_i32(cg, s->rev ? nw - 1 - jj : jj), "");
        LLVMValueRef v[8];
        for (int i = 0; i < n; i++)
            v[i] = LLVMBuildLoad2(cg->b, cg_type(cg, s->r->dt[i]),
                                  cg_smem_addr(cg, off[i], idx, s->r->dt[i]), "");
        if (jj == 0) {
            memcpy(run, v, sizeof(LLVMValueRef) * (size_t)n);
            memcpy(ex, v, sizeof(LLVMValueRef) * (size_t)n);
            continue;
        }
        ordered(s, run, v);
        if (jj + 1 < nw)
            pick(s, LLVMBuildICmp(cg->b, LLVMIntEQ, s->rwarp, cg_i32(cg, jj + 1), ""), ex, run, ex);
    }
    ch->wex.present = true;
    ch->wex.have = LLVMBuildICmp(cg->b, LLVMIntNE, s->rwarp, cg_i32(cg, 0), "");
    memcpy(ch->wex.v, ex, sizeof(LLVMValueRef) * (size_t)n);
    memcpy(ch->ct, run, sizeof(LLVMValueRef) * (size_t)n);
}

/* Index of the line (the element's position with the axis dropped). */
static LLVMValueRef line_of(Scan *s, int slot)
{
    Cg *cg = s->r->cg;
    LLVMValueRef e = cg_elem_index(cg, &s->l, slot);
    LLVMValueRef outer = LLVMBuildLShr(cg->b, e, cg_i32(cg, s->p.lb + s->p.m), "");
    LLVMValueRef in = LLVMBuildAnd(cg->b, e, cg_i32(cg, ((int64_t)1 << s->p.lb) - 1), "");
    return LLVMBuildOr(cg->b, LLVMBuildShl(cg->b, outer, cg_i32(cg, s->p.lb), ""), in, "");
}

/* The line of element offset e (the axis dropped). */
static int64_t line_at(const ScanPlan *p, int64_t e)
{
    return (e >> (p->lb + p->m)) << p->lb | (e & (((int64_t)1 << p->lb) - 1));
}

/* A line's row in the exchange holds its warps' totals, `row` bytes. Lanes
 * that read at once hold lines some distance apart (a thread's run of
 * columns: 8 lines); where that many rows make a multiple of 128 bytes,
 * they share their banks (a column scan's 16-byte rows, lines 8 apart,
 * read 4 times over). Then a row of padding goes after every 128 bytes of
 * rows: the log2 of the rows between pads, or -1 for none. */
static int pad_rows(const Scan *s, int64_t row)
{
    int64_t d = 0;
    for (int j = 0; j < s->l.lin.nthread && j < 5; j++) {
        int64_t l = line_at(&s->p, s->l.lin.thread[j]);
        if (l > 0 && (d == 0 || l < d))
            d = l;
    }
    if (row >= 128 || d == 0 || (d * row) % 128 != 0)
        return -1;
    return cg_ilog2(128 / row);
}

/* Bytes of shared memory one round of the warps' exchange may take. */
#define SCAN_ROUND_BYTES 16384

/* Across warps through shared memory, or the chunk totals from the lanes.
 * Where warps hold few elements of many lines, the exchange is as large as
 * the value, so chunks go in rounds that each fit SCAN_ROUND_BYTES. */
static void exchange(Scan *s, Chunk *ch, int nq, int64_t lines)
{
    Cg *cg = s->r->cg;
    int nch = 1 << s->p.nhi, n = s->r->n;
    if (!s->p.nw) {
        for (int q = 0; q < nq && nch > 1; q++)
            if (s->p.nl)
                last_lane(s, ch[q].seg, ch[q].ct);
            else
                memcpy(ch[q].ct, ch[q].seg, sizeof ch[q].ct);
        return;
    }
    int64_t entry = 0, off[8], end = 0;
    for (int i = 0; i < n; i++)
        entry += cg_mem_bytes(s->r->dt[i]);
    int round = nch;
    while (round > 1 && (lines * round << s->p.nw) * entry > SCAN_ROUND_BYTES)
        round /= 2;
    int64_t row = ((int64_t)1 << s->p.nw) * cg_mem_bytes(s->r->dt[0]);
    int pad = pad_rows(s, row);
    int64_t rows = lines * round + (pad >= 0 ? (lines * round >> pad) : 0);
    for (int i = 0; i < n; i++) {
        off[i] = end;
        end += ((rows << s->p.nw) * cg_mem_bytes(s->r->dt[i]) + 15) / 16 * 16;
    }
    cg_smem_need(cg, end);
    for (int c0 = 0; c0 < nch; c0 += round) {
        for (int g = 0; g < nq; g += nch)
            for (int c = c0; c < c0 + round; c++) {
                Chunk *k = &ch[g + c];
                /* chunk-major: the lanes' lines of one chunk keep their spacing */
                LLVMValueRef line =
                    LLVMBuildAdd(cg->b, line_of(s, k->base), cg_i32(cg, (c - c0) * lines), "");
                if (pad >= 0)
                    line = LLVMBuildAdd(cg->b, line,
                                        LLVMBuildLShr(cg->b, line, cg_i32(cg, pad), ""), "");
                k->at = LLVMBuildShl(cg->b, line, cg_i32(cg, s->p.nw), "");
                warp_put(s, k, off);
            }
        cg_barrier(cg);
        for (int g = 0; g < nq; g += nch)
            for (int c = c0; c < c0 + round; c++)
                warp_take(s, &ch[g + c], off);
        cg_barrier(cg);
    }
}

/* Each element: the chunks before, the warps before, the lanes before, then
 * the thread's own prefix. */
static void finish(Scan *s, Chunk *ch, int nq, CgVal *out)
{
    int nch = 1 << s->p.nhi, nlo = 1 << s->p.nlo, n = s->r->n;
    for (int g = 0; g < nq; g += nch) {
        Part carry = {0};
        for (int cc = 0; cc < nch; cc++) {
            Chunk *k = &ch[g + (s->rev ? nch - 1 - cc : cc)];
            Part pre = join(s, join(s, carry, k->wex), k->lex);
            for (int ii = 0; ii < nlo; ii++) {
                Part e = {true, NULL, {0}};
                memcpy(e.v, &k->pre[ii * n], sizeof(LLVMValueRef) * (size_t)n);
                Part o = join(s, pre, e);
                int slot = k->base | spread(s->p.lo, s->p.nlo, s->rev ? nlo - 1 - ii : ii);
                for (int i = 0; i < n; i++)
                    out[i].el[slot] = o.v[i];
            }
            if (cc + 1 < nch) {
                Part t = {true, NULL, {0}};
                memcpy(t.v, k->ct, sizeof t.v);
                carry = join(s, carry, t);
            }
        }
    }
}

/* Whether every operand and result has the layout of the first operand. */
static bool one_layout(Cg *cg, const IrOp *op, const CgLayout *l)
{
    if (op->nres != op->nops)
        return false;
    for (int i = 0; i < op->nops; i++) {
        CgLayout a = cg_layout(cg, op->operands[i]), b = cg_layout(cg, op->results[i]);
        if (!lin_equal(&a.lin, &l->lin) || !lin_equal(&b.lin, &l->lin))
            return false;
    }
    return true;
}

bool cg_scan_in_regs(Cg *cg, const IrOp *op, Red *r)
{
    Type t = op->operands[0]->type;
    int axis = op->axis < 0 ? op->axis + t.rank : op->axis;
    Scan s;
    memset(&s, 0, sizeof s);
    s.r = r;
    s.rev = (op->flags & IRF_REVERSE) != 0;
    s.l = cg_layout(cg, op->operands[0]);
    if (!one_layout(cg, op, &s.l) || !scan_plan(&s.l.lin, &t, axis, &s.p))
        return false;
    int lmask = (1 << s.p.nl) - 1;
    s.lane = LLVMBuildAnd(cg->b, cg->tid, cg_i32(cg, 31), "");
    s.rlane = LLVMBuildAnd(cg->b, LLVMBuildLShr(cg->b, s.lane, cg_i32(cg, s.p.lane0), ""),
                           cg_i32(cg, lmask), "");
    if (s.rev)
        s.rlane = LLVMBuildXor(cg->b, s.rlane, cg_i32(cg, lmask), "");
    s.warp = bits_of(cg, s.p.warp, s.p.nw, false);
    s.rwarp = bits_of(cg, s.p.warp, s.p.nw, s.rev);
    CgVal x[8], out[8];
    for (int i = 0; i < r->n; i++) {
        x[i] = cg_get(cg, op->operands[i]);
        out[i] = cg_val_new(cg, s.l.per_thread);
    }
    int nq = s.l.per_thread >> s.p.nlo, nch = 1 << s.p.nhi, q = 0;
    Chunk *ch = cg_alloc(cg, sizeof(Chunk) * (size_t)nq);
    memset(ch, 0, sizeof(Chunk) * (size_t)nq);
    int64_t lines = type_numel(t) >> s.p.m;
    for (int g = 0; g < s.l.per_thread; g++) {
        if (g & s.p.axis_slots)
            continue;
        for (int c = 0; c < nch; c++) {
            ch[q + c].base = g | spread(s.p.hi, s.p.nhi, c);
            chunk_local(&s, &ch[q + c], x);
        }
        /* without warps a line is done here: fewer values live at once */
        if (!s.p.nw) {
            exchange(&s, &ch[q], nch, lines);
            finish(&s, &ch[q], nch, out);
        }
        q += nch;
    }
    if (s.p.nw) {
        exchange(&s, ch, nq, lines);
        finish(&s, ch, nq, out);
    }
    for (int i = 0; i < r->n; i++)
        cg_set(cg, op->results[i], out[i]);
    return true;
}
