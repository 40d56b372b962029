/* codegen/reduce.c: reductions and scans. A reduction along the last dim runs
 * in-thread over the elements a thread holds of one row, then shfl.sync.bfly
 * across the lanes holding the same row, then through shared memory across
 * warps; other axes are first transposed to the end. Scans run in registers
 * where the layout allows (scan.c), else walk each line in shared memory,
 * one thread per line. Combines keep left-to-right order,
 * so every thread ends with bit-identical results. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/cg.h"

/* argmax/argmin: NaN follows the sequential scan of ir.h (a NaN at index
 * 0 wins, any other NaN loses to every number). Each element enters the
 * reduction as a key that states this order without NaN: a first NaN is
 * the best value (+inf for argmax), any other NaN the worst, the rest
 * themselves, in the element's own type. Keys tie where the scan would not (a
 * later NaN against -inf), but a tie goes to the smaller index, and under
 * that order the best of the whole line is what the scan picks: a first
 * number m beats every NaN's key unless m is -inf, which then wins the tie
 * at index 0. The order is total, so the tree of shuffles gives what the
 * scan gives, with one compare a combine (mattered for MoE gating's top-k,
 * eight argmaxes in a row). */
static LLVMValueRef arg_key(Cg *cg, bool is_max, DType dt, LLVMValueRef v, LLVMValueRef idx)
{
    LLVMBuilderRef B = cg->b;
    if (!dtype_is_float(dt))
        return v;
    LLVMTypeRef t = LLVMTypeOf(v);
    LLVMValueRef best = LLVMConstReal(t, is_max ? INFINITY : -INFINITY);
    LLVMValueRef worst = LLVMConstReal(t, is_max ? -INFINITY : INFINITY);
    LLVMValueRef nan = LLVMBuildFCmp(B, LLVMRealUNO, v, v, "");
    LLVMValueRef first = LLVMBuildICmp(B, LLVMIntEQ, idx, cg_i32(cg, 0), "");
    return LLVMBuildSelect(B, nan, LLVMBuildSelect(B, first, best, worst, ""), v, "");
}

/* Does key (av, ai) win over (bv, bi)? Ties go to the smaller index. */
static LLVMValueRef arg_wins(Cg *cg, bool is_max, DType dt, LLVMValueRef av, LLVMValueRef ai,
                             LLVMValueRef bv, LLVMValueRef bi)
{
    LLVMBuilderRef B = cg->b;
    LLVMValueRef lower = LLVMBuildICmp(B, LLVMIntSLT, ai, bi, "");
    LLVMValueRef better, same;
    if (dtype_is_float(dt)) {
        if (dt == DT_F16 || dt == DT_BF16) {
            LLVMTypeRef f = LLVMFloatTypeInContext(cg->ctx);
            av = LLVMBuildFPExt(B, av, f, "");
            bv = LLVMBuildFPExt(B, bv, f, "");
        }
        better = LLVMBuildFCmp(B, is_max ? LLVMRealOGT : LLVMRealOLT, av, bv, "");
        same = LLVMBuildFCmp(B, LLVMRealOEQ, av, bv, "");
    } else {
        LLVMIntPredicate p = dtype_is_signed(dt) ? (is_max ? LLVMIntSGT : LLVMIntSLT)
                                                 : (is_max ? LLVMIntUGT : LLVMIntULT);
        better = LLVMBuildICmp(B, p, av, bv, "");
        same = LLVMBuildICmp(B, LLVMIntEQ, av, bv, "");
    }
    return LLVMBuildOr(B, better, LLVMBuildAnd(B, same, lower, ""), "");
}

static void combine(Red *r, LLVMValueRef *acc, LLVMValueRef *x) { cg_red_combine(r, acc, x); }

void cg_red_combine(Red *r, LLVMValueRef *acc, LLVMValueRef *x)
{
    Cg *cg = r->cg;
    const IrOp *op = r->op;
    switch (r->kind) {
    case RED_ANY: return; /* equal elements: acc is the result already */
    case RED_SUM:
    case RED_MAX:
    case RED_MIN: {
        IrKind k = r->kind == RED_SUM ? IR_ADD : r->kind == RED_MAX ? IR_MAX : IR_MIN;
        for (int i = 0; i < r->n; i++)
            acc[i] = cg_binop(cg, k, 0, r->dt[i], acc[i], x[i]);
        return;
    }
    case RED_ARGMAX:
    case RED_ARGMIN: {
        LLVMValueRef w = arg_wins(cg, r->kind == RED_ARGMAX, r->dt[0], acc[0], acc[1], x[0], x[1]);
        acc[0] = LLVMBuildSelect(cg->b, w, acc[0], x[0], "");
        acc[1] = LLVMBuildSelect(cg->b, w, acc[1], x[1], "");
        return;
    }
    case RED_CUSTOM: {
        const IrBlock *blk = op->nregions > 0 ? op->regions[0] : NULL;
        if (!blk || blk->nargs != 2 * r->n) {
            cg_internal(cg, op->span, "combine region needs %d arguments", 2 * r->n);
            return;
        }
        for (int i = 0; i < 2 * r->n; i++) {
            CgVal v = cg_val_new(cg, 1);
            v.el[0] = i < r->n ? acc[i] : x[i - r->n];
            cg_set(cg, blk->args[i], v);
        }
        const IrOp *y = cg_emit_block(cg, blk);
        if (!y || y->nops != r->n) {
            if (!cg->failed)
                cg_internal(cg, op->span, "combine region must yield %d values", r->n);
            return;
        }
        for (int i = 0; i < r->n; i++)
            acc[i] = cg_get(cg, y->operands[i]).el[0];
        return;
    }
    }
}

/* mode: bfly, up, down or idx; shfl.up clamps at lane 0, the others at 31. */
static LLVMValueRef shfl32(Cg *cg, const char *mode, LLVMValueRef v, LLVMValueRef off)
{
    int clamp = strcmp(mode, "up") == 0 ? 0 : 0x1f;
    LLVMValueRef args[4] = {cg_i32(cg, -1), v, off, cg_i32(cg, clamp)};
    bool fl = LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMFloatTypeKind;
    char name[48];
    snprintf(name, sizeof name, "llvm.nvvm.shfl.sync.%s.%s", mode, fl ? "f32" : "i32");
    return cg_intrinsic(cg, name, NULL, 0, args, 4);
}

static LLVMValueRef shfl(Cg *cg, LLVMValueRef v, DType dt, int off)
{
    return cg_shfl(cg, "bfly", v, dt, cg_i32(cg, off));
}

LLVMValueRef cg_shfl(Cg *cg, const char *mode, LLVMValueRef v, DType dt, LLVMValueRef off)
{
    LLVMBuilderRef B = cg->b;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx), i64 = LLVMInt64TypeInContext(cg->ctx);
    if (dt == DT_F32 || dt == DT_I32 || dt == DT_U32)
        return shfl32(cg, mode, v, off);
    int bits = dtype_bits(dt);
    if (bits == 64) {
        LLVMValueRef x =
            dt == DT_PTR ? LLVMBuildPtrToInt(B, v, i64, "") : LLVMBuildBitCast(B, v, i64, "");
        LLVMValueRef lo = shfl32(cg, mode, LLVMBuildTrunc(B, x, i32, ""), off);
        LLVMValueRef hi = shfl32(
            cg, mode, LLVMBuildTrunc(B, LLVMBuildLShr(B, x, cg_i64(cg, 32), ""), i32, ""), off);
        LLVMValueRef y =
            LLVMBuildOr(B, LLVMBuildZExt(B, lo, i64, ""),
                        LLVMBuildShl(B, LLVMBuildZExt(B, hi, i64, ""), cg_i64(cg, 32), ""), "");
        return dt == DT_PTR ? LLVMBuildIntToPtr(B, y, cg_type(cg, dt), "")
                            : LLVMBuildBitCast(B, y, cg_type(cg, dt), "");
    }
    LLVMTypeRef it = LLVMIntTypeInContext(cg->ctx, (unsigned)bits);
    LLVMValueRef x = dtype_is_float(dt) ? LLVMBuildBitCast(B, v, it, "") : v;
    x = shfl32(cg, mode, LLVMBuildZExt(B, x, i32, ""), off);
    x = LLVMBuildTrunc(B, x, it, "");
    return dtype_is_float(dt) ? LLVMBuildBitCast(B, x, cg_type(cg, dt), "") : x;
}

/* Butterfly over the low `bits` lane bits, keeping the lower lane's value first. */
static void lane_combine(Red *r, LLVMValueRef *acc, int off);

/* Whether r combines 32-bit integers by a sum, min or max: exact in any
 * order, so lanes need not keep theirs, and one redux.sync can do a warp's. */
static bool int32_exact(const Red *r)
{
    return r->n == 1 && (r->dt[0] == DT_I32 || r->dt[0] == DT_U32) &&
        (r->kind == RED_SUM || r->kind == RED_MAX || r->kind == RED_MIN);
}

/* A whole warp's integer sum, min or max in one redux.sync (sm_80 on), as
 * Triton's, where five shuffles, adds and selects were: a bisection top-k's
 * 24 counts took 192 fewer SASS instructions, and a bucketize's binary
 * search ran 6% faster on an H200. */
static bool warp_redux(Red *r, LLVMValueRef *acc)
{
    Cg *cg = r->cg;
    if (cg->sm < 80 || !int32_exact(r))
        return false;
    bool u = r->dt[0] == DT_U32;
    const char *name = r->kind == RED_SUM ? "llvm.nvvm.redux.sync.add"
        : r->kind == RED_MAX ? (u ? "llvm.nvvm.redux.sync.umax" : "llvm.nvvm.redux.sync.max")
                             : (u ? "llvm.nvvm.redux.sync.umin" : "llvm.nvvm.redux.sync.min");
    LLVMValueRef args[2] = {acc[0], cg_i32(cg, -1)};
    acc[0] = cg_intrinsic(cg, name, NULL, 0, args, 2);
    return true;
}

/* Whether the ops of blk (a user's combine) have no effect but their
 * values: run on lanes whose inputs are not a pair's, they change nothing. */
static bool pure_block(const IrBlock *blk)
{
    for (const IrOp *o = blk->first; o; o = o->next) {
        if (o->kind != IR_YIELD && ir_op_has_effect(o))
            return false;
        for (int i = 0; i < o->nregions; i++)
            if (!pure_block(o->regions[i]))
                return false;
    }
    return true;
}

/* A user's combine over the lane bits in mask, in their order, without
 * the selects that would put each butterfly's pair in lane order: at each
 * step the lower lane of a pair combines its value with the upper one's
 * (shfl.down), so only the lane whose bits in mask are all clear ends with
 * the whole result, and one shfl.idx from it gives that to the others. A
 * shuffle a component at the end instead of two selects a component at
 * every step: a row's argmax over (value, index) pairs loses 20 selects. */
static bool lanes_in_order(Red *r, LLVMValueRef *acc, int mask)
{
    Cg *cg = r->cg;
    const IrOp *op = r->op;
    if (r->kind != RED_CUSTOM || op->nregions < 1 || !pure_block(op->regions[0]))
        return false;
    for (int b = 0; b < 5; b++) {
        if (!(mask >> b & 1))
            continue;
        LLVMValueRef other[8];
        for (int i = 0; i < r->n; i++)
            other[i] = cg_shfl(cg, "down", acc[i], r->dt[i], cg_i32(cg, 1 << b));
        combine(r, acc, other);
    }
    LLVMValueRef from = LLVMBuildAnd(cg->b, cg->tid, cg_i32(cg, 31 & ~mask), "");
    for (int i = 0; i < r->n; i++)
        acc[i] = cg_shfl(cg, "idx", acc[i], r->dt[i], from);
    return true;
}

/* The lanes' values combined over the lane bits in mask, lower bits first. */
static void lanes_combine(Red *r, LLVMValueRef *acc, int mask)
{
    if (!mask || lanes_in_order(r, acc, mask))
        return;
    for (int b = 0; b < 5; b++)
        if (mask >> b & 1)
            lane_combine(r, acc, 1 << b);
}

static void warp_combine(Red *r, LLVMValueRef *acc, int bits)
{
    if (bits == 5 && warp_redux(r, acc))
        return;
    lanes_combine(r, acc, (1 << bits) - 1);
}

/* One butterfly step over lane bit `off`, the lower lane's value first;
 * argmax/argmin's in either order: their keys and indices are totally
 * ordered (arg_key), so both lanes pick the same element whichever comes
 * first, without the four selects that would put them in lane order; and
 * 32-bit integer sums, mins and maxes (int32_exact). */
static void lane_combine(Red *r, LLVMValueRef *acc, int off)
{
    Cg *cg = r->cg;
    LLVMValueRef lane = LLVMBuildAnd(cg->b, cg->tid, cg_i32(cg, 31), "");
    LLVMValueRef other[8], lo[8], hi[8];
    for (int i = 0; i < r->n; i++)
        other[i] = shfl(cg, acc[i], r->dt[i], off);
    if (r->kind == RED_ARGMAX || r->kind == RED_ARGMIN || int32_exact(r)) {
        combine(r, acc, other);
        return;
    }
    LLVMValueRef upper = LLVMBuildICmp(
        cg->b, LLVMIntNE, LLVMBuildAnd(cg->b, lane, cg_i32(cg, off), ""), cg_i32(cg, 0), "");
    for (int i = 0; i < r->n; i++) {
        lo[i] = LLVMBuildSelect(cg->b, upper, other[i], acc[i], "");
        hi[i] = LLVMBuildSelect(cg->b, upper, acc[i], other[i], "");
    }
    combine(r, lo, hi);
    for (int i = 0; i < r->n; i++)
        acc[i] = lo[i];
}

/* Places `count` elements of each of n components one after another, each
 * component's region 16-byte aligned and only as wide as its type, as
 * Triton sizes a reduction's scratch. Returns the bytes taken. */
static int64_t regions(const DType *dt, int n, int64_t count, int64_t *off)
{
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        off[i] = at;
        at += (count * cg_mem_bytes(dt[i]) + 15) / 16 * 16;
    }
    return at;
}

/* Combines the 1 << wbits partials of a row's warps, from shared memory,
 * into acc. Up to 8 every thread reads them all: vector loads side by side
 * and a short chain of combines, quicker than a chain of shuffles (a row
 * norm of 8 warps per row ran 17% slower on an H200 with the butterfly).
 * From 16 each lane reads the one of its number and a butterfly over wbits
 * lane bits combines them (lower warps first, as the serial order has
 * them): a 32-warp row costs a thread one load and 5 shuffles instead of
 * 32 loads and 31 combines (a cross entropy of 3 reductions an iteration
 * ran 9% faster). */
static void row_partials(Red *r, LLVMValueRef *acc, LLVMValueRef first, int wbits,
                         const int64_t *off)
{
    Cg *cg = r->cg;
    int n = 1 << wbits;
    bool tree = wbits > 3;
    LLVMValueRef lane = tree ? LLVMBuildAnd(cg->b, cg->tid, cg_i32(cg, n - 1), "") : NULL;
    for (int j = 0; j < (tree ? 1 : n); j++) {
        LLVMValueRef x[8];
        LLVMValueRef idx = LLVMBuildAdd(cg->b, first, tree ? lane : cg_i32(cg, j), "");
        for (int i = 0; i < r->n; i++)
            x[i] = LLVMBuildLoad2(cg->b, cg_type(cg, r->dt[i]),
                                  cg_smem_addr(cg, off[i], idx, r->dt[i]), "");
        if (j == 0)
            for (int i = 0; i < r->n; i++)
                acc[i] = x[i];
        else
            combine(r, acc, x);
    }
    if (tree)
        warp_combine(r, acc, wbits);
}

/* Partials of the warps that share a row meet in shared memory. */
static void cta_combine(Red *r, LLVMValueRef **part, int ng, int wbits)
{
    Cg *cg = r->cg;
    int nw = cg->T / 32;
    int64_t off[8];
    cg_smem_need(cg, regions(r->dt, r->n, (int64_t)ng * nw, off));
    LLVMValueRef warp = LLVMBuildLShr(cg->b, cg->tid, cg_i32(cg, 5), "");
    for (int q = 0; q < ng; q++)
        for (int i = 0; i < r->n; i++) {
            LLVMValueRef idx = LLVMBuildAdd(cg->b, warp, cg_i32(cg, (int64_t)q * nw), "");
            LLVMBuildStore(cg->b, part[q][i], cg_smem_addr(cg, off[i], idx, r->dt[i]));
        }
    cg_barrier(cg);
    LLVMValueRef first = LLVMBuildAnd(cg->b, warp, cg_i32(cg, ~((1 << wbits) - 1)), "");
    for (int q = 0; q < ng; q++)
        row_partials(r, part[q], LLVMBuildAdd(cg->b, first, cg_i32(cg, (int64_t)q * nw), ""), wbits,
                     off);
    cg_barrier(cg);
}

/* Moves dim `axis` to the end through shared memory. */
static CgVal to_last(Cg *cg, CgVal x, Type t, int axis, Type *out);

static void reduce_last(Red *r, CgVal *in, Type t)
{
    Cg *cg = r->cg;
    const IrOp *op = r->op;
    bool arg = op->sub == RED_ARGMAX || op->sub == RED_ARGMIN;
    CgLayout l = cg_layout_type(cg, t);
    int64_t L = t.shape[t.rank - 1];
    int64_t cpr = L / l.v;
    int rep = cpr > cg->T ? (int)(cpr / cg->T) : 1;
    int ng = l.k / rep;
    int tb = cg_ilog2(cpr) < cg_ilog2(cg->T) ? cg_ilog2(cpr) : cg_ilog2(cg->T);
    LLVMValueRef **part = cg_alloc(cg, sizeof(LLVMValueRef *) * (size_t)ng);
    LLVMValueRef *row = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)ng);
    for (int q = 0; q < ng; q++) {
        part[q] = cg_alloc(cg, sizeof(LLVMValueRef) * 8);
        for (int s = q * rep * l.v; s < (q + 1) * rep * l.v; s++) {
            LLVMValueRef x[8];
            LLVMValueRef e = cg_elem_index(cg, &l, s);
            if (arg) {
                x[1] = LLVMBuildAnd(cg->b, e, cg_i32(cg, L - 1), "");
                x[0] = arg_key(cg, op->sub == RED_ARGMAX, r->dt[0], in[0].el[s], x[1]);
            } else {
                for (int i = 0; i < r->n; i++)
                    x[i] = in[i].el[s];
            }
            if (s == q * rep * l.v) {
                row[q] = LLVMBuildLShr(cg->b, e, cg_i32(cg, cg_ilog2(L)), "");
                for (int i = 0; i < r->n; i++)
                    part[q][i] = x[i];
            } else {
                combine(r, part[q], x);
            }
        }
        warp_combine(r, part[q], tb < 5 ? tb : 5);
    }
    if (tb > 5)
        cta_combine(r, part, ng, tb - 5);
    int nres = op->nres;
    int comp0 = arg ? 1 : 0; /* argmax returns the index component */
    if (op->results[0]->type.rank == 0) {
        for (int k = 0; k < nres; k++) {
            CgVal v = cg_val_new(cg, 1);
            v.el[0] = part[0][comp0 + k];
            cg_set(cg, op->results[k], v);
        }
        return;
    }
    int64_t P = l.numel / L;
    int64_t off[8];
    cg_smem_need(cg, regions(r->dt + comp0, nres, P, off));
    for (int k = 0; k < nres; k++)
        for (int q = 0; q < ng; q++)
            LLVMBuildStore(cg->b, part[q][comp0 + k],
                           cg_smem_addr(cg, off[k], row[q], r->dt[comp0 + k]));
    cg_barrier(cg);
    for (int k = 0; k < nres; k++)
        cg_set(cg, op->results[k], cg_smem_take(cg, op->results[k], off[k], NULL, NULL));
    cg_barrier(cg);
}

/* Index of element e of `t` with dim `axis` dropped. */
static int64_t drop_axis(const Type *t, int axis, int64_t e)
{
    int64_t inner = 1;
    for (int d = t->rank - 1; d > axis; d--)
        inner *= t->shape[d];
    int64_t outer = e / (inner * t->shape[axis]);
    return outer * inner + e % inner;
}

/* The place along the axis of this thread's warp: its warp bits that step
 * along the axis, packed; *nbits says how many there are. */
static LLVMValueRef warp_place(Cg *cg, const LinLayout *li, int64_t amask, int *nbits)
{
    LLVMValueRef pos = cg_i32(cg, 0);
    *nbits = 0;
    for (int j = 5; j < li->nthread; j++)
        if (li->thread[j] & amask) {
            LLVMValueRef bit = LLVMBuildLShr(cg->b, cg->tid, cg_i32(cg, j), "");
            bit = LLVMBuildAnd(cg->b, bit, cg_i32(cg, 1), "");
            pos = LLVMBuildOr(cg->b, pos, LLVMBuildShl(cg->b, bit, cg_i32(cg, *nbits), ""), "");
            (*nbits)++;
        }
    return pos;
}

/* Warps that hold different parts of the axis (an mma accumulator of a few
 * rows with its warps along N) meet in shared memory: each writes its partial
 * of every result element at its place along the axis, then every thread
 * combines the places in order, so all copies agree bit for bit. `first[q]`
 * is the register whose element register q holds (q itself for the first).
 * Each of the r->n components (a tuple reduction's) has its own region. */
static void cross_warps(Red *r, const CgLayout *li, const CgLayout *lo, int64_t amask,
                        const int *first, CgVal *out)
{
    Cg *cg = r->cg;
    int nbits;
    LLVMValueRef pos = warp_place(cg, &li->lin, amask, &nbits);
    if (nbits == 0)
        return;
    int64_t off[8];
    cg_smem_need(cg, regions(r->dt, r->n, lo->numel << nbits, off));
    LLVMValueRef base = LLVMBuildMul(cg->b, pos, cg_i32(cg, lo->numel), "");
    for (int q = 0; q < out[0].n; q++)
        for (int i = 0; first[q] == q && i < r->n; i++) {
            DType dt = r->dt[i];
            LLVMValueRef e = LLVMBuildAdd(cg->b, base, cg_elem_index(cg, lo, q), "");
            LLVMValueRef v = out[i].el[q];
            if (dt == DT_I1)
                v = LLVMBuildZExt(cg->b, v, cg_mem_type(cg, dt), "");
            LLVMBuildStore(cg->b, v, cg_smem_addr(cg, off[i], e, dt));
        }
    cg_barrier(cg);
    for (int q = 0; q < out[0].n; q++) {
        LLVMValueRef acc[8], x[8];
        for (int w = 0; first[q] == q && w < 1 << nbits; w++) {
            LLVMValueRef e = LLVMBuildAdd(cg->b, cg_elem_index(cg, lo, q),
                                          cg_i32(cg, (int64_t)w * lo->numel), "");
            for (int i = 0; i < r->n; i++) {
                DType dt = r->dt[i];
                x[i] =
                    LLVMBuildLoad2(cg->b, cg_mem_type(cg, dt), cg_smem_addr(cg, off[i], e, dt), "");
                if (dt == DT_I1)
                    x[i] = LLVMBuildTrunc(cg->b, x[i], cg_type(cg, dt), "");
                if (w == 0)
                    acc[i] = x[i];
            }
            if (w > 0)
                combine(r, acc, x);
        }
        for (int i = 0; i < r->n; i++)
            out[i].el[q] = first[q] == q ? acc[i] : out[i].el[first[q]];
    }
    cg_barrier(cg);
}

/* The result register of li's register s along the axis dropped: key[q]
 * is the element offset result register q holds. */
static int result_slot(const CgLayout *li, const Type *t, int axis, const int64_t *key, int nq,
                       int s)
{
    int64_t o = 0;
    for (int i = 0; i < li->lin.nreg; i++)
        if (s >> i & 1)
            o |= li->lin.reg[i];
    int64_t k = drop_axis(t, axis, o);
    for (int q = 0; q < nq; q++)
        if (key[q] == k)
            return q; /* copies of q are filled later */
    return -1;
}

/* Element s of li as argmax/argmin combine it: its key (arg_key) and its
 * index along the axis. */
static void arg_pair(Red *r, const CgLayout *li, const Type *t, int axis, int s, LLVMValueRef *xs)
{
    Cg *cg = r->cg;
    xs[1] = cg_coord(cg, cg_elem_index(cg, li, s), t, axis);
    xs[0] = arg_key(cg, r->kind == RED_ARGMAX, r->dt[0], xs[0], xs[1]);
}

/* A reduction of values in one linear layout (an mma accumulator's rows,
 * a blocked tile's columns; one value or a tuple's, side by side):
 * registers of one line combine in the thread, then butterflies over the
 * lane bits that step along the axis, then shared memory across the warps
 * that do (cross_warps); the results are the slice layout the pass gave
 * them, every copy holding the full result. */
static void reduce_linear(Red *r, const Type *t, int axis)
{
    Cg *cg = r->cg;
    const IrOp *op = r->op;
    int n = r->n;
    CgLayout li = cg_layout(cg, op->operands[0]), lo = cg_layout(cg, op->results[0]);
    int64_t amask = lin_dim_bits(t->rank, t->shape, axis);
    int nq = lo.per_thread;
    bool arg = r->kind == RED_ARGMAX || r->kind == RED_ARGMIN;
    CgVal x[8], out[8];
    for (int i = 0; i < n; i++) {
        x[i] = cg_get(cg, op->operands[arg ? 0 : i]);
        out[i] = cg_val_new(cg, nq);
    }
    LLVMValueRef *acc = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)nq * (size_t)n);
    int64_t *key = cg_alloc(cg, sizeof(int64_t) * (size_t)nq);
    bool *have = cg_alloc(cg, sizeof(bool) * (size_t)nq);
    for (int q = 0; q < nq; q++) {
        key[q] = 0;
        for (int i = 0; i < lo.lin.nreg; i++)
            if (q >> i & 1)
                key[q] |= lo.lin.reg[i];
        have[q] = false;
    }
    int64_t dup = lin_reg_copies(&li.lin); /* a register repeating another (few mma rows) */
    for (int s = 0; s < x[0].n; s++) {
        int q = s & dup ? -1 : result_slot(&li, t, axis, key, nq, s); /* each element once */
        if (q < 0)
            continue;
        LLVMValueRef xs[8];
        for (int i = 0; i < n; i++)
            xs[i] = x[i].el[s];
        if (arg) /* (key, place along the axis), as reduce_last pairs them */
            arg_pair(r, &li, t, axis, s, xs);
        for (int i = 0; i < n; i++) {
            if (!have[q])
                acc[q * n + i] = xs[i];
        }
        if (have[q])
            combine(r, &acc[q * n], xs);
        have[q] = true;
    }
    /* copies (result registers with the same element) share the first one */
    int *first = cg_alloc(cg, sizeof(int) * (size_t)nq);
    for (int q = 0; q < nq; q++) {
        first[q] = 0;
        while (key[first[q]] != key[q])
            first[q]++;
        if (first[q] == q && have[q] && r->kind != RED_ANY) {
            int lanes = 0;
            for (int j = 0; j < li.lin.nthread && j < 5; j++)
                if (li.lin.thread[j] & amask)
                    lanes |= 1 << j;
            lanes_combine(r, &acc[q * n], lanes);
        }
        for (int i = 0; i < n; i++)
            out[i].el[q] = acc[first[q] * n + i];
    }
    if (r->kind != RED_ANY) /* each warp holds the result already */
        cross_warps(r, &li, &lo, amask, first, out);
    for (int i = 0; i < op->nres; i++)
        cg_set(cg, op->results[i], out[arg ? 1 : i]); /* argmax gives the index */
}

bool cg_emit_reduce(Cg *cg, const IrOp *op)
{
    if (op->kind != IR_REDUCE)
        return false;
    Red r = {cg, op, (ReduceKind)op->sub, 0, {0}};
    bool arg = op->sub == RED_ARGMAX || op->sub == RED_ARGMIN;
    if (op->nops < 1 || op->nops > (arg ? 1 : 8)) {
        cg_error(cg, op->span, "reductions take 1 to 8 inputs");
        return true;
    }
    r.n = arg ? 2 : op->nops;
    for (int i = 0; i < op->nops; i++)
        r.dt[i] = op->operands[i]->type.dt;
    if (arg)
        r.dt[1] = DT_I32;
    Type t = op->operands[0]->type;
    if (t.rank == 0) {
        cg_error(cg, op->span, "cannot reduce a scalar");
        return true;
    }
    int axis = op->axis < 0 ? op->axis + t.rank : op->axis;
    const Layout *il = op->operands[0]->layout, *rl = op->results[0]->layout;
    bool sliced = rl && op->results[0]->type.rank && rl->kind == LY_SLICE; /* pass_layout */
    /* a combine of one value too, in the order of the butterfly, as
     * Triton's reductions combine (they take the combine as commutative) */
    if (il && (il->kind != LY_BLOCKED || sliced) && (op->sub != RED_CUSTOM || sliced) &&
        (op->nops == 1 || sliced)) {
        reduce_linear(&r, &t, axis);
        return true;
    }
    CgVal in[8];
    Type tt = t;
    for (int i = 0; i < op->nops; i++) {
        in[i] = cg_get(cg, op->operands[i]);
        if (axis != t.rank - 1) {
            Type ti = op->operands[i]->type;
            in[i] = to_last(cg, in[i], ti, axis, &tt);
        }
    }
    reduce_last(&r, in, tt);
    return true;
}

/* ---- transposition and scans ---------------------------------------------------------- */

typedef struct MoveCtx {
    Type src;
    int axis;
} MoveCtx;

/* Destination (axis moved last) index -> source index. */
static LLVMValueRef map_move(Cg *cg, LLVMValueRef e, const Type *dst, void *p)
{
    MoveCtx *mc = p;
    LLVMValueRef r = cg_i32(cg, 0);
    int rank = dst->rank;
    for (int d = 0; d < rank; d++) {
        int sd = d == rank - 1 ? mc->axis : (d < mc->axis ? d : d + 1);
        int64_t stride = 1;
        for (int i = sd + 1; i < rank; i++)
            stride *= mc->src.shape[i];
        LLVMValueRef c = cg_coord(cg, e, dst, d);
        r = LLVMBuildOr(cg->b, r, LLVMBuildShl(cg->b, c, cg_i32(cg, cg_ilog2(stride)), ""), "");
    }
    return r;
}

static CgVal to_last(Cg *cg, CgVal x, Type t, int axis, Type *out)
{
    Type d = t;
    int k = 0;
    for (int i = 0; i < t.rank; i++)
        if (i != axis)
            d.shape[k++] = t.shape[i];
    d.shape[k] = t.shape[axis];
    *out = d;
    MoveCtx mc = {t, axis};
    CgLayout from = cg_layout_type(cg, t), to = cg_layout_type(cg, d);
    cg_smem_put_in(cg, x, &from, t.dt, 0);
    cg_barrier(cg);
    CgVal r = cg_smem_take_in(cg, &to, d, 0, map_move, &mc);
    cg_barrier(cg);
    return r;
}

/* Linear index of element j of line p along `axis`. */
static LLVMValueRef line_index(Cg *cg, LLVMValueRef p, LLVMValueRef j, const Type *t, int axis)
{
    int64_t inner = 1;
    for (int i = axis + 1; i < t->rank; i++)
        inner *= t->shape[i];
    int lb = cg_ilog2(inner);
    LLVMValueRef outer = LLVMBuildLShr(cg->b, p, cg_i32(cg, lb), "");
    LLVMValueRef in = LLVMBuildAnd(cg->b, p, cg_i32(cg, inner - 1), "");
    LLVMValueRef x = LLVMBuildAdd(
        cg->b, LLVMBuildShl(cg->b, outer, cg_i32(cg, cg_ilog2(t->shape[axis])), ""), j, "");
    return LLVMBuildOr(cg->b, LLVMBuildShl(cg->b, x, cg_i32(cg, lb), ""), in, "");
}

/* One thread scans line p in place: out[j] = combine(out[j-1], x[j]). */
static void scan_line(Red *r, LLVMValueRef p, const Type *t, int axis, const int64_t *off)
{
    Cg *cg = r->cg;
    int64_t L = t->shape[axis];
    bool rev = r->op->flags & IRF_REVERSE;
    LLVMValueRef acc0[8], acc[8], x[8], aphi[8];
    LLVMValueRef j0 = cg_i32(cg, rev ? L - 1 : 0);
    LLVMValueRef e0 = line_index(cg, p, j0, t, axis);
    if (L == 1)
        return;
    for (int i = 0; i < r->n; i++)
        acc0[i] = LLVMBuildLoad2(cg->b, cg_type(cg, r->dt[i]),
                                 cg_smem_addr(cg, off[i], e0, r->dt[i]), "");
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef body = cg_new_bb(cg, "scan");
    LLVMBasicBlockRef done = cg_new_bb(cg, "scan.done");
    LLVMBuildBr(cg->b, body);
    LLVMPositionBuilderAtEnd(cg->b, body);
    LLVMValueRef jphi = LLVMBuildPhi(cg->b, LLVMInt32TypeInContext(cg->ctx), "");
    for (int i = 0; i < r->n; i++)
        acc[i] = aphi[i] = LLVMBuildPhi(cg->b, cg_type(cg, r->dt[i]), "");
    LLVMValueRef j = LLVMBuildAdd(cg->b, jphi, cg_i32(cg, rev ? -1 : 1), "");
    LLVMValueRef e = line_index(cg, p, j, t, axis);
    for (int i = 0; i < r->n; i++)
        x[i] =
            LLVMBuildLoad2(cg->b, cg_type(cg, r->dt[i]), cg_smem_addr(cg, off[i], e, r->dt[i]), "");
    /* a reverse scan is the forward scan of the flipped line: the suffix
     * after x[j] is the combine's left operand, as in Triton */
    combine(r, acc, x);
    for (int i = 0; i < r->n; i++)
        LLVMBuildStore(cg->b, acc[i], cg_smem_addr(cg, off[i], e, r->dt[i]));
    LLVMValueRef more = LLVMBuildICmp(cg->b, LLVMIntNE, j, cg_i32(cg, rev ? 0 : L - 1), "");
    LLVMBasicBlockRef end = LLVMGetInsertBlock(cg->b);
    LLVMBuildCondBr(cg->b, more, body, done);
    LLVMBasicBlockRef from[2] = {pre, end};
    LLVMValueRef jin[2] = {j0, j};
    LLVMAddIncoming(jphi, jin, from, 2);
    for (int i = 0; i < r->n; i++) {
        LLVMValueRef in[2] = {acc0[i], acc[i]};
        LLVMAddIncoming(aphi[i], in, from, 2);
    }
    LLVMPositionBuilderAtEnd(cg->b, done);
}

/* Inputs go to shared memory, each line is scanned by one thread, results come back. */
bool cg_emit_scan(Cg *cg, const IrOp *op)
{
    if (op->kind != IR_SCAN)
        return false;
    if (op->nops < 1 || op->nops > 8) {
        cg_error(cg, op->span, "scans take 1 to 8 inputs");
        return true;
    }
    Red r = {cg, op, op->sub == SCAN_SUM ? RED_SUM : RED_CUSTOM, op->nops, {0}};
    for (int i = 0; i < op->nops; i++)
        r.dt[i] = op->operands[i]->type.dt;
    Type t = op->operands[0]->type;
    if (t.rank == 0) {
        cg_error(cg, op->span, "cannot scan a scalar");
        return true;
    }
    if (cg_scan_in_regs(cg, op, &r))
        return true;
    int axis = op->axis < 0 ? op->axis + t.rank : op->axis;
    int64_t numel = type_numel(t), off[8];
    cg_smem_need(cg, regions(r.dt, op->nops, numel, off));
    for (int i = 0; i < op->nops; i++)
        cg_smem_put(cg, cg_get(cg, op->operands[i]), op->operands[i], off[i]);
    cg_barrier(cg);
    int64_t lines = numel / t.shape[axis];
    for (int64_t m = 0; m < lines; m += cg->T) {
        LLVMValueRef p = LLVMBuildAdd(cg->b, cg->tid, cg_i32(cg, m), "");
        LLVMBasicBlockRef work = cg_new_bb(cg, "scan.line");
        LLVMBasicBlockRef next = cg_new_bb(cg, "scan.next");
        LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntULT, p, cg_i32(cg, lines), ""), work,
                        next);
        LLVMPositionBuilderAtEnd(cg->b, work);
        scan_line(&r, p, &t, axis, off);
        LLVMBuildBr(cg->b, next);
        LLVMPositionBuilderAtEnd(cg->b, next);
    }
    cg_barrier(cg);
    for (int i = 0; i < op->nres && i < op->nops; i++)
        cg_set(cg, op->results[i], cg_smem_take(cg, op->results[i], off[i], NULL, NULL));
    cg_barrier(cg);
    return true;
}
