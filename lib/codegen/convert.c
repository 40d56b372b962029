/* codegen/convert.c: layout conversions through shared memory that move
 * whole runs of elements: the scratch (squeezed into rounds where it would
 * raise the kernel's shared memory, swizzled where its rows span every
 * bank), plain conversions, and transposes done as plain conversions over
 * the operand's index space. Every conversion ends in a barrier. */
#include "codegen/cg.h"

#include <stdio.h>

/* A plain conversion's scratch. Element bits that are register bits of
 * both layouts may be moved in rounds, the scratch holding the elements of
 * one value of those bits at a time (at the squeezed index: the index with
 * those bits taken out); rounds are used only where the scratch would
 * otherwise raise the kernel's shared memory (see conversion_rounds).
 * Rows of the squeezed scratch that span every bank (128 bytes or more)
 * are swizzled: the 16-byte chunk j of row r sits at chunk j ^ x(r), x
 * taking three bits of r. An access whose lanes cover less than a row
 * (an mma layout's 8 rows of the same columns, a transpose's reads down a
 * column) puts the lanes that differ only in r in one bank unless x tells
 * them apart, so x takes the row bits those lanes differ in; by default
 * (and for an mma layout) r mod 8. Padding each row by 16 bytes would
 * avoid the conflicts too, at 16 bytes a row of room. Squeeze and swizzle
 * are functions of the linear index alone, so both sides agree on them,
 * and both are linear over XOR: an element's place is the thread part's
 * place XOR the slot part's. */
typedef struct Scratch {
    int64_t rep; /* element bits moved in rounds */
    bool swz;    /* whether the squeezed index is swizzled */
    int shift;   /* log2 of the squeezed row length in elements */
    int chunk;   /* log2 of the elements in 16 bytes */
    int xb[3];   /* the row bits x takes, above shift */
} Scratch;

/* x(r) of a squeezed index e, in place for XOR into its chunk bits. */
static int64_t swizzle_const(const Scratch *sc, int64_t e)
{
    int64_t x = 0;
    for (int i = 0; i < 3; i++)
        x |= (e >> (sc->shift + sc->xb[i]) & 1) << i;
    return x << sc->chunk;
}

static int64_t squeeze_const(int64_t e, int64_t rep)
{
    for (int b = 62; b >= 0; b--)
        if (rep >> b & 1)
            e = (e & (((int64_t)1 << b) - 1)) | (e >> 1 & ~(((int64_t)1 << b) - 1));
    return e;
}

static int64_t scratch_const(const Scratch *sc, int64_t e)
{
    e = squeeze_const(e, sc->rep);
    return sc->swz ? e ^ swizzle_const(sc, e) : e;
}

/* Every bit a thread part of l may have in scratch. */
static int64_t scratch_thread_bits(const CgLayout *l, const Scratch *sc)
{
    int64_t m = 0;
    for (int i = 0; i < l->lin.nthread; i++)
        m |= l->lin.thread[i];
    m = squeeze_const(m, sc->rep);
    return sc->swz ? m | swizzle_const(sc, m) : m;
}

/* The thread part of l's index in scratch (it has none of the rep bits). */
static LLVMValueRef scratch_thread(Cg *cg, const CgLayout *l, const Scratch *sc)
{
    LLVMValueRef t = cg_thread_index(cg, l);
    for (int b = 62; b >= 0; b--)
        if (sc->rep >> b & 1) {
            LLVMValueRef hi = LLVMBuildLShr(cg->b, t, cg_i32(cg, 1), "");
            hi = LLVMBuildAnd(cg->b, hi, cg_i32(cg, ~(((int64_t)1 << b) - 1)), "");
            t = LLVMBuildOr(cg->b, LLVMBuildAnd(cg->b, t, cg_i32(cg, ((int64_t)1 << b) - 1), ""),
                            hi, "");
        }
    if (!sc->swz)
        return t;
    if (sc->xb[2] == sc->xb[0] + 2) { /* three bits in a row: one field */
        LLVMValueRef row =
            LLVMBuildAnd(cg->b, LLVMBuildLShr(cg->b, t, cg_i32(cg, sc->shift + sc->xb[0]), ""),
                         cg_i32(cg, 7), "");
        return LLVMBuildXor(cg->b, t, LLVMBuildShl(cg->b, row, cg_i32(cg, sc->chunk), ""), "");
    }
    LLVMValueRef x = NULL;
    for (int i = 0; i < 3; i++) {
        int from = sc->shift + sc->xb[i], to = sc->chunk + i;
        LLVMValueRef b = LLVMBuildAnd(cg->b, t, cg_i32(cg, (int64_t)1 << from), "");
        b = from > to ? LLVMBuildLShr(cg->b, b, cg_i32(cg, from - to), "")
                      : LLVMBuildShl(cg->b, b, cg_i32(cg, to - from), "");
        x = x ? LLVMBuildOr(cg->b, x, b, "") : b;
    }
    return LLVMBuildXor(cg->b, t, x, "");
}

/* The index in scratch of slot s of layout l. The slot's bits that no
 * thread part can have are added (LLVM folds them into the access's
 * immediate offset, and merges neighbours into vectors once the addition
 * is marked as not wrapping: indices stay below the scratch's size); the
 * others are XORed in. */
static LLVMValueRef scratch_index(Cg *cg, const CgLayout *l, LLVMValueRef tsc, const Scratch *sc,
                                  int s)
{
    int64_t c = scratch_const(sc, cg_slot_index(l, s) & ~sc->rep);
    int64_t m = scratch_thread_bits(l, sc);
    LLVMValueRef r = tsc;
    if (c & m)
        r = LLVMBuildXor(cg->b, r, cg_i32(cg, c & m), "");
    return c & ~m ? LLVMBuildNUWAdd(cg->b, r, cg_i32(cg, c & ~m), "") : r;
}

/* The alignment in bytes of slot s of l in scratch: the swizzle moves
 * whole 16-byte chunks, so what the squeezed index's bits below a chunk
 * allow (a thread's part is a multiple of its smallest bit), at most 16.
 * Stated on each access, so that LLVM merges neighbours into vectors. */
static unsigned scratch_align(const CgLayout *l, const Scratch *sc, int s, int bytes)
{
    int64_t a = (int64_t)1 << sc->chunk;
    for (int i = 0; i < l->lin.nthread; i++) {
        int64_t low = squeeze_const(l->lin.thread[i], sc->rep);
        low &= -low;
        if (low && low < a)
            a = low;
    }
    int64_t r = squeeze_const(cg_slot_index(l, s) & ~sc->rep, sc->rep);
    if (r && (r & -r) < a)
        a = r & -r;
    return (unsigned)(a * bytes);
}

static bool power_of_two_bases(const LinLayout *l)
{
    for (int i = 0; i < l->nreg; i++)
        if (l->reg[i] & (l->reg[i] - 1))
            return false;
    for (int i = 0; i < l->nthread; i++)
        if (l->thread[i] & (l->thread[i] - 1))
            return false;
    return true;
}

/* Element bits that are register bits of both layouts, the highest first
 * (they split a thread's vector accesses least). */
static int common_reg_bits(const CgLayout *a, const CgLayout *b, int64_t *bits, int max)
{
    int n = 0;
    if (!power_of_two_bases(&a->lin) || !power_of_two_bases(&b->lin))
        return 0;
    for (int i = a->lin.nreg - 1; i >= 0 && n < max; i--)
        for (int j = 0; j < b->lin.nreg; j++)
            if (a->lin.reg[i] && a->lin.reg[i] == b->lin.reg[j])
                bits[n++] = a->lin.reg[i];
    return n;
}

/* Rounds are taken where the scratch would set the kernel's shared memory
 * and cost it once: no rings are live (scratch beside live rings adds to
 * them whatever its size, and the rings' room is Triton's too), the
 * conversion is outside loops (its barriers would be paid on every
 * iteration), and it needs more than the kernel has needed so far. Then as
 * many rounds as bring it within that, up to four (two barriers a round). */
static int64_t conversion_rounds(Cg *cg, const IrOp *op, const CgLayout *li, const CgLayout *lo,
                                 int64_t bytes)
{
    int64_t bits[2], rep = 0;
    int n = cg->smem_reserved || cg_in_loop(op) ? 0 : common_reg_bits(li, lo, bits, 2);
    for (int i = 0; i < n && cg->smem_reserved + bytes > cg->smem_bytes; i++) {
        rep |= bits[i];
        bytes /= 2;
    }
    return rep;
}

/* The row bits (above sc->shift, as a mask) that l's lanes differ in,
 * where its lanes cover less than a row of 128 bytes: a warp's access
 * then meets its rows in the same banks unless the swizzle parts them. */
static unsigned narrow_row_lanes(const CgLayout *l, const Scratch *sc, int bytes)
{
    int ncol = 0, nlane = l->lin.nthread < 5 ? l->lin.nthread : 5;
    int width = l->v < (1 << sc->chunk) ? l->v : (1 << sc->chunk);
    unsigned rows = 0;
    for (int i = 0; i < nlane; i++) {
        int64_t v = squeeze_const(l->lin.thread[i], sc->rep);
        if (v && v < ((int64_t)1 << sc->shift))
            ncol++;
        else if (v && !(v & (v - 1)))
            rows |= 1u << (cg_ilog2(v) - sc->shift);
    }
    return ((int64_t)width * bytes << ncol) < 128 ? rows : 0;
}

/* The swizzle's three row bits, in increasing order: those the narrow
 * accesses of li, then lo, need parted, then the lowest others (r mod 8
 * where no access is narrow). */
static void swizzle_bits(const CgLayout *li, const CgLayout *lo, int bytes, Scratch *sc)
{
    unsigned want[3] = {narrow_row_lanes(li, sc, bytes), narrow_row_lanes(lo, sc, bytes), ~0u};
    unsigned take = 0;
    for (int w = 0; w < 3; w++)
        for (int b = 0; b < 32 && __builtin_popcount(take) < 3; b++)
            if (want[w] >> b & 1)
                take |= 1u << b;
    for (int b = 0, k = 0; k < 3; b++)
        if (take >> b & 1)
            sc->xb[k++] = b;
}

/* Whether li and lo step their lanes down different rows of a scratch read
 * as rows of 128 bytes: one side's warp then meets its rows in the same
 * banks unless a swizzle parts them. */
static bool lanes_down_rows(const CgLayout *li, const CgLayout *lo, const Scratch *sc, int bytes)
{
    Scratch rows128 = *sc;
    rows128.shift = sc->chunk + 3;
    return narrow_row_lanes(li, &rows128, bytes) != narrow_row_lanes(lo, &rows128, bytes);
}

/* The scratch of converting t's elements from li to lo. */
static Scratch scratch_for(Cg *cg, const IrOp *op, const CgLayout *li, const CgLayout *lo,
                           const Type *t)
{
    int bytes = cg_mem_bytes(t->dt);
    int64_t numel = type_numel(*t), row = t->rank >= 2 ? t->shape[t->rank - 1] : 0;
    Scratch sc = {conversion_rounds(cg, op, li, lo, numel * bytes), false, 0, 0, {0, 1, 2}};
    sc.chunk = bytes <= 16 ? cg_ilog2(16 / bytes) : 0;
    int64_t rowq = row >> __builtin_popcountll(sc.rep & (row - 1));
    int64_t nq = numel >> __builtin_popcountll(sc.rep);
    if (row > 0 && rowq * bytes >= 128 && (rowq * bytes) % 128 == 0 && bytes <= 16 && nq != rowq) {
        sc.swz = true;
        sc.shift = cg_ilog2(rowq);
        swizzle_bits(li, lo, bytes, &sc);
    } else if ((nq == rowq && rowq * bytes >= 256 && bytes <= 16) ||
               (row > 0 && rowq * bytes < 128 && 128 % (rowq * bytes) == 0 && nq * bytes >= 256 &&
                lanes_down_rows(li, lo, &sc, bytes))) {
        /* one row (a [1, N] tile, say zero points unpacked by joins): lanes
         * that each write a run of 128 bytes or more meet in the same banks,
         * so the row is swizzled as rows of 128 bytes. So are rows shorter
         * than 128 bytes where one side's lanes step down the rows (bytes
         * unpacked along K, lanes along K, into a layout along N: a warp's
         * 32 one-byte stores met in 2 banks of 64-byte rows, 16-way) */
        sc.swz = true;
        sc.shift = sc.chunk + 3;
        swizzle_bits(li, lo, bytes, &sc);
    }
    return sc;
}

/* How many slots from s on one access of l moves: consecutive slots at
 * consecutive indices, as many as slot s's alignment holds (a power of
 * two). i1 travels a byte at a time. */
static int scratch_run(const CgLayout *l, const Scratch *sc, int s, int n, DType dt)
{
    int bytes = cg_mem_bytes(dt);
    int max = dt == DT_I1 ? 1 : (int)scratch_align(l, sc, s, bytes) / bytes;
    int64_t base = cg_slot_index(l, s), round = base & sc->rep;
    base = squeeze_const(base & ~sc->rep, sc->rep);
    int k = 1;
    while (k < max && s + k < n && (cg_slot_index(l, s + k) & sc->rep) == round &&
           squeeze_const(cg_slot_index(l, s + k) & ~sc->rep, sc->rep) == base + k)
        k++;
    while (k & (k - 1))
        k &= k - 1;
    return k;
}

/* Writes slots s..s+k-1 of x as one vector of their own type (LLVM pairs
 * two float-to-half conversions into one where they meet in a vector);
 * an i1 (always alone) as a byte. */
static void put_run(Cg *cg, const CgVal *x, int s, int k, LLVMValueRef p, unsigned align)
{
    LLVMValueRef v = x->el[s];
    if (LLVMTypeOf(v) == LLVMInt1TypeInContext(cg->ctx))
        v = LLVMBuildZExt(cg->b, v, LLVMInt8TypeInContext(cg->ctx), "");
    if (k > 1) {
        v = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(x->el[s]), (unsigned)k));
        for (int j = 0; j < k; j++)
            v = LLVMBuildInsertElement(cg->b, v, x->el[s + j], cg_i32(cg, j), "");
    }
    LLVMSetAlignment(LLVMBuildStore(cg->b, v, p), align);
}

/* Reads k slots into el: elements under 32 bits as whole words, unpacked
 * as global accesses unpack them, so a run that goes on to a global store
 * is packed back into the very words read (no repacking per element). */
static void take_run(Cg *cg, DType dt, int k, LLVMValueRef p, unsigned align, LLVMValueRef *el)
{
    int bytes = cg_mem_bytes(dt), nw = k * bytes / 4;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    if (k == 1 || bytes >= 4 || nw < 1) {
        LLVMTypeRef t =
            k == 1 ? cg_mem_type(cg, dt) : LLVMVectorType(cg_mem_type(cg, dt), (unsigned)k);
        LLVMValueRef v = LLVMBuildLoad2(cg->b, t, p, "");
        LLVMSetAlignment(v, align);
        for (int j = 0; j < k; j++) {
            LLVMValueRef e = k == 1 ? v : LLVMBuildExtractElement(cg->b, v, cg_i32(cg, j), "");
            el[j] = dt == DT_I1 ? LLVMBuildTrunc(cg->b, e, LLVMInt1TypeInContext(cg->ctx), "") : e;
        }
        return;
    }
    LLVMValueRef v =
        LLVMBuildLoad2(cg->b, nw == 1 ? i32 : LLVMVectorType(i32, (unsigned)nw), p, "");
    LLVMSetAlignment(v, align);
    LLVMValueRef words[4];
    for (int w = 0; w < nw; w++)
        words[w] = nw == 1 ? v : LLVMBuildExtractElement(cg->b, v, cg_i32(cg, w), "");
    cg_unpack_words(cg, dt, k, words, el);
}

/* Whether sm_90's stmatrix can write l's 16-bit elements: a thread's slot
 * bit 0 and lane bits 0 and 1 are the element's three lowest bits, as in
 * an mma fragment (lanes 4r..4r+3 hold two columns each of row r of an 8x8
 * matrix), its other lane bits and slot bits 1 and 2 none of them, and the
 * scratch is swizzled (rows of 128 bytes or more), so that the eight rows
 * of one matrix fall in eight different banks. The swizzle moves whole
 * 16-byte chunks, so each row of eight stays in one place, 16-byte aligned.
 * Not for layouts whose threads hold copies of others' elements. */
static bool stmatrix_fits(const Cg *cg, const CgLayout *l, const Scratch *sc, DType dt)
{
    const LinLayout *ll = &l->lin;
    if (cg->sm < 90 || dt == DT_I1 || cg_mem_bytes(dt) != 2 || sc->rep || !sc->swz || l->copies ||
        ll->nreg < 1 || ll->nthread < 5 || ll->reg[0] != 1 || ll->thread[0] != 2 ||
        ll->thread[1] != 4)
        return false;
    for (int i = 2; i < 5; i++)
        if (ll->thread[i] < 8 || (ll->thread[i] & (ll->thread[i] - 1)))
            return false;
    for (int i = 1; i < 3 && i < ll->nreg; i++) /* the matrix bits: whole rows */
        if (ll->reg[i] & 7)
            return false;
    return true;
}

/* Whether stmatrix's .trans form can write l's 16-bit elements: each 8x8
 * matrix goes out transposed, memory row j taking the fragment's column j,
 * so a fragment's rows (lane bits 2..4) must be the element's three lowest
 * bits, and its columns (slot bit 0, lane bits 0 and 1) and the matrix
 * bits (slot bits 1 and 2) whole rows of eight. An mma tile over the
 * transposed index space (see column_major) lies so. */
static bool stmatrix_trans_layout(const Cg *cg, const CgLayout *l, DType dt)
{
    const LinLayout *ll = &l->lin;
    if (cg->sm < 90 || dt == DT_I1 || cg_mem_bytes(dt) != 2 || l->copies || ll->nreg < 1 ||
        ll->nthread < 5 || ll->thread[2] != 1 || ll->thread[3] != 2 || ll->thread[4] != 4)
        return false;
    const int64_t cols[3] = {ll->reg[0], ll->thread[0], ll->thread[1]};
    for (int i = 0; i < 3; i++)
        if (cols[i] < 8 || (cols[i] & (cols[i] - 1)))
            return false;
    for (int i = 1; i < 3 && i < ll->nreg; i++)
        if (ll->reg[i] & 7)
            return false;
    return true;
}

/* Writes x (in l) to scratch with stmatrix: each instruction four (or two,
 * or one) 8x8 matrices, the slots that differ in bits 1 and 2, a word of
 * two elements a thread each; lane i gives the address of row i % 8 of
 * matrix i / 8. That address is l's index with lane bits 2..4 (the rows)
 * moved to bits 0..2 and the matrix's slot bits on bits 3 and 4: a layout
 * of its own, whose place in scratch the swizzle gives as for any other.
 * A quarter of the stores of a word a thread at a time. */
static void put_stmatrix(Cg *cg, const CgLayout *l, const Scratch *sc, DType dt, const CgVal *x,
                         bool trans)
{
    int sel = l->lin.nreg - 1 < 2 ? l->lin.nreg - 1 : 2, nmat = 1 << sel;
    CgLayout a = *l;
    /* lane i's row: row i % 8 of the fragment, or with .trans its column */
    const int64_t rows[3] = {l->lin.thread[2], l->lin.thread[3], l->lin.thread[4]};
    const int64_t cols[3] = {l->lin.reg[0], l->lin.thread[0], l->lin.thread[1]};
    for (int i = 0; i < 3; i++)
        a.lin.thread[i] = trans ? cols[i] : rows[i];
    a.lin.thread[3] = sel > 0 ? l->lin.reg[1] : 0;
    a.lin.thread[4] = sel > 1 ? l->lin.reg[2] : 0;
    LLVMValueRef t = scratch_thread(cg, &a, sc);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), pt[5];
    char text[96], cons[40];
    snprintf(text, sizeof text, "stmatrix.sync.aligned.m8n8.x%d%s.shared.b16 [$0], {%s};", nmat,
             trans ? ".trans" : "",
             nmat == 4       ? "$1, $2, $3, $4"
                 : nmat == 2 ? "$1, $2"
                             : "$1");
    snprintf(cons, sizeof cons, "r%s,~{memory}",
             nmat == 4       ? ",r,r,r,r"
                 : nmat == 2 ? ",r,r"
                             : ",r");
    for (int i = 0; i < 5; i++)
        pt[i] = i32;
    for (int s = 0; s < x->n; s += 2 * nmat) {
        LLVMValueRef args[5];
        LLVMValueRef p = cg_smem_addr(cg, 0, scratch_index(cg, &a, t, sc, s), dt);
        args[0] = LLVMBuildPtrToInt(cg->b, p, i32, "");
        for (int m = 0; m < nmat; m++)
            args[1 + m] = cg_pack32(cg, dt, x->el + (s | m << 1), 2);
        cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 1 + nmat, text, cons, args);
    }
}

/* A conversion through scratch: op's operand, in li, to r in lo, both
 * over the index space of t (for a transpose, the operand's: lo is then
 * the result's layout with its dims permuted back). */
typedef struct Conversion {
    const IrOp *op;
    CgLayout li, lo;
    Type t;
} Conversion;

/* One round: the slots of x whose rep bits are `round` into scratch, and
 * those of r from it. */
static void convert_round(Cg *cg, const Conversion *c, const Scratch *sc, int64_t round, CgVal *r)
{
    DType dt = c->t.dt;
    int bytes = cg_mem_bytes(dt);
    const CgLayout *li = &c->li, *lo = &c->lo;
    CgVal x = cg_get(cg, c->op->operands[0]);
    bool st = stmatrix_fits(cg, li, sc, dt);
    bool tr = !st && !sc->rep && sc->swz && stmatrix_trans_layout(cg, li, dt);
    if (st || tr)
        put_stmatrix(cg, li, sc, dt, &x, tr);
    st = st || tr;
    LLVMValueRef tin = st ? NULL : scratch_thread(cg, li, sc);
    for (int s = 0, k = 1; !st && s < x.n; s += k) {
        k = 1;
        if ((cg_slot_index(li, s) & sc->rep) != round)
            continue;
        k = scratch_run(li, sc, s, x.n, dt);
        LLVMValueRef p = cg_smem_addr(cg, 0, scratch_index(cg, li, tin, sc, s), dt);
        put_run(cg, &x, s, k, p, scratch_align(li, sc, s, bytes));
    }
    cg_barrier(cg);
    LLVMValueRef tout = scratch_thread(cg, lo, sc);
    for (int s = 0, k = 1; s < r->n; s += k) {
        k = 1;
        if ((cg_slot_index(lo, s) & sc->rep) != round)
            continue;
        k = scratch_run(lo, sc, s, r->n, dt);
        LLVMValueRef p = cg_smem_addr(cg, 0, scratch_index(cg, lo, tout, sc, s), dt);
        take_run(cg, dt, k, p, scratch_align(lo, sc, s, bytes), r->el + s);
    }
    cg_barrier(cg);
}

static CgVal convert_through(Cg *cg, const Conversion *c)
{
    Scratch sc = scratch_for(cg, c->op, &c->li, &c->lo, &c->t);
    int64_t size = type_numel(c->t) * cg_mem_bytes(c->t.dt);
    cg_smem_need(cg, size >> __builtin_popcountll(sc.rep));
    CgVal r = cg_val_new(cg, c->lo.per_thread);
    /* every value of the rep bits: the subsets of the mask */
    int64_t round = 0;
    do {
        convert_round(cg, c, &sc, round, &r);
        round = (round - sc.rep) & sc.rep;
    } while (round);
    return r;
}

/* Index b of dst (linear over XOR: a sum of bit fields) as an index of
 * src, whose dim perm[d] is dst's dim d. */
static int64_t permute_index(int64_t b, const Type *dst, const Type *src, const int *perm)
{
    int64_t r = 0;
    for (int d = 0; d < dst->rank; d++) {
        int64_t c = (b >> cg_ilog2(cg_dim_stride(dst, d))) & (dst->shape[d] - 1);
        r |= c << cg_ilog2(cg_dim_stride(src, perm[d]));
    }
    return r;
}

static void permute_layout(CgLayout *l, const Type *from, const Type *to, const int *perm)
{
    for (int i = 0; i < l->lin.nreg; i++)
        l->lin.reg[i] = permute_index(l->lin.reg[i], from, to, perm);
    for (int i = 0; i < l->lin.nthread; i++)
        l->lin.thread[i] = permute_index(l->lin.thread[i], from, to, perm);
    cg_layout_finish(l);
}

/* c over the transposed index space of its 2-D tile, where the scratch is
 * column-major: an mma tile of 16-bit elements crossing to a layout that
 * runs down the columns (the column-major store of a weight gradient)
 * then goes in with stmatrix.trans and out in 16-byte vectors, where the
 * row-major scratch was read an element at a time. */
static bool column_major(Cg *cg, const Conversion *c, Conversion *t)
{
    if (c->t.rank != 2 || c->lo.lin.nreg < 1 || c->lo.lin.reg[0] != c->t.shape[1])
        return false;
    static const int swap[2] = {1, 0};
    *t = *c;
    t->t.shape[0] = c->t.shape[1];
    t->t.shape[1] = c->t.shape[0];
    permute_layout(&t->li, &c->t, &t->t, swap);
    permute_layout(&t->lo, &c->t, &t->t, swap);
    return t->lo.v >= 2 && stmatrix_trans_layout(cg, &t->li, c->t.dt);
}

CgVal cg_convert_plain(Cg *cg, const IrOp *op)
{
    const IrValue *in = op->operands[0], *out = op->results[0];
    Conversion c = {op, cg_layout(cg, in), cg_layout(cg, out), out->type}, t;
    return convert_through(cg, column_major(cg, &c, &t) ? &t : &c);
}

bool cg_pick_registers(Cg *cg, const LinLayout *li, const LinLayout *lo, CgVal x, int n, CgVal *out)
{
    if (li->nthread != lo->nthread)
        return false;
    for (int j = 0; j < li->nthread; j++)
        if (li->thread[j] != lo->thread[j])
            return false;
    int pos[64];
    for (int k = 0; k < 64; k++)
        pos[k] = -1;
    for (int i = 0; i < li->nreg; i++)
        if (li->reg[i])
            pos[cg_ilog2(li->reg[i])] = i;
    CgVal r = cg_val_new(cg, n);
    for (int s = 0; s < r.n; s++) {
        int64_t e = 0, slot = 0;
        for (int i = 0; i < lo->nreg; i++)
            if (s >> i & 1)
                e ^= lo->reg[i];
        for (int k = 0; e >> k; k++)
            if (e >> k & 1) {
                if (pos[k] < 0)
                    return false;
                slot |= (int64_t)1 << pos[k];
            }
        if (slot >= x.n)
            return false;
        r.el[s] = x.el[slot];
    }
    *out = r;
    return true;
}

/* A transpose as a plain conversion: the result's layout seen over the
 * operand's index space (each basis element's coordinates permuted back),
 * so that its scratch is swizzled for both sides' accesses and read and
 * written in runs, as any conversion's. Element by element through the
 * row-major scratch, a 64x64 fp16 transpose read each element alone, and
 * the 8 rows a warp read at once fell in one bank. */
CgVal cg_convert_trans(Cg *cg, const IrOp *op, const int *perm)
{
    const IrValue *in = op->operands[0], *out = op->results[0];
    Conversion c = {op, cg_layout(cg, in), cg_layout(cg, out), in->type};
    permute_layout(&c.lo, &out->type, &in->type, perm);
    /* a result laid out as its operand, permuted (the layout pass'
     * trans_follows), is picked from the operand's registers */
    CgVal r;
    return cg_pick_registers(cg, &c.li.lin, &c.lo.lin, cg_get(cg, in), c.lo.per_thread, &r)
        ? r
        : convert_through(cg, &c);
}
