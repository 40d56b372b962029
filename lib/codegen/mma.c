/* codegen/mma.c: dot on tensor cores with mma.sync (sm_80 and up). The
 * layout pass has put the accumulator in an mma layout and A and B behind
 * convert_layout ops to dot_op layouts. Such a conversion is not made on its
 * own (layout.c leaves it to the dot): the operand goes from its blocked
 * registers to shared memory, swizzled in 16-byte chunks so that the eight
 * rows one ldmatrix reads fall in different banks, and each instruction's
 * fragments are read with ldmatrix (.trans for B of 16-bit types) just before
 * the instructions that use them, K step by K step, which keeps only one
 * step's fragments live. Fragment order follows the linear forms in
 * ir/layout.c: A holds kpack-element packs for (row, row+8) x (k, k+4*kpack),
 * B for (k, k+4*kpack), the accumulator (col, col+1) x (row, row+8); tiles
 * repeat over K, then the other dim. input_precision="tf32x3" splits each
 * fragment register as it is read and runs three tf32 instructions for one
 * (tf32x3 below). fp8 dots (sm_89 and up) take int8's m16n8k32 fragments;
 * LLVM 19 has no intrinsic for them, so they are inline PTX. */
#include "codegen/cg.h"

#include <stdio.h>
#include <string.h>

typedef struct MmaKind {
    const char *intrinsic; /* NULL: inline PTX, `ptx` */
    int kpack;             /* elements per 32-bit register */
    bool half_args;        /* fp16 operands go as <2 x half>, the rest as i32 */
    DType acc;
    char ptx[128]; /* the instruction where LLVM 19 has no intrinsic (fp8) */
} MmaKind;

static MmaKind kind(const char *intrinsic, int kpack, bool half_args, DType acc)
{
    return (MmaKind){.intrinsic = intrinsic, .kpack = kpack, .half_args = half_args, .acc = acc};
}

/* fp8 x fp8 -> fp32 (sm_89 and up, PTX ISA 8.4): A and B may differ in
 * format, as Triton allows. */
static void fp8_kind(DType a, DType b, MmaKind *k)
{
    *k = (MmaKind){.kpack = 4, .acc = DT_F32};
    snprintf(k->ptx, sizeof k->ptx,
             "mma.sync.aligned.m16n8k32.row.col.f32.%s.%s.f32 {$0, $1, $2, $3}, "
             "{$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
             a == DT_F8E5 ? "e5m2" : "e4m3", b == DT_F8E5 ? "e5m2" : "e4m3");
}

static bool mma_kind(DType in, DType in_b, DType acc, MmaKind *k)
{
    if (dtype_is_fp8(in) && dtype_is_fp8(in_b)) {
        fp8_kind(in, in_b, k);
        return acc == DT_F32;
    }
    if (in != in_b)
        return false;
    switch (in) {
    case DT_F16:
        if (acc == DT_F16) /* out_dtype=tl.float16: accumulators in halves too */
            *k = kind("llvm.nvvm.mma.m16n8k16.row.col.f16.f16", 2, true, DT_F16);
        else
            *k = kind("llvm.nvvm.mma.m16n8k16.row.col.f32.f32", 2, true, DT_F32);
        break;
    case DT_BF16: *k = kind("llvm.nvvm.mma.m16n8k16.row.col.bf16", 2, false, DT_F32); break;
    case DT_F32: *k = kind("llvm.nvvm.mma.m16n8k8.row.col.tf32", 1, false, DT_F32); break;
    case DT_I8: *k = kind("llvm.nvvm.mma.m16n8k32.row.col.s8", 4, false, DT_I32); break;
    default: return false;
    }
    return acc == k->acc;
}

typedef CgOperand Operand;

typedef struct Mma {
    Cg *cg;
    MmaKind k;
    DType dt;
    const Layout *m;
    int mr, nr, kr;        /* instruction tiles per thread along M, N and K */
    int rows, cols;        /* the dot's M and N (below 16 and 8, they repeat in a tile) */
    LLVMValueRef wmi, wni; /* this warp's position among the M and N warps */
    LLVMValueRef lane;
    Operand a, b;
} Mma;

bool cg_runs_down(Cg *cg, const IrValue *v)
{
    if (v->layout && v->layout->kind == LY_SHARED)
        return v->layout->order[0] == 0;
    CgLayout l = cg_layout(cg, v);
    int dim;
    lin_run(&l.lin, v->type.rank, v->type.shape, &dim);
    return v->type.rank == 2 && dim == 0 && v->type.shape[0] > 1;
}

/* Whether a 2-D register tile of one element a register has its lanes
 * step down dim 0. Staged for a dot, such a tile is best stored with dim 0
 * contiguous: each lane's element beside its neighbour's (an int4 weight
 * tile dequantised with its lanes along K: a warp's 32 stores fill 64 bytes
 * of one row, where stored the other way they hit 32 rows of the swizzled
 * tile). Only the staging here follows this; rings keep cg_runs_down's
 * order, which the pipeline's plan shares. */
static bool lanes_run_down(Cg *cg, const IrValue *v)
{
    if (v->type.rank != 2 || v->type.shape[0] < 2 || (v->layout && v->layout->kind == LY_SHARED))
        return false;
    CgLayout l = cg_layout(cg, v);
    int dim;
    return lin_run(&l.lin, 2, v->type.shape, &dim) == 1 && l.lin.nthread > 0 &&
        l.lin.thread[0] == v->type.shape[1];
}

void cg_tile_geometry(CgTile *o, const Type *t, bool trans)
{
    o->trans = trans;
    o->rows = t->shape[trans ? 1 : 0];
    o->cols = t->shape[trans ? 0 : 1];
    o->bytes = cg_mem_bytes(t->dt == DT_PTR ? t->elem : t->dt);
    /* rows wider than 128 bytes are cut into 128-byte panels stored one
     * after the other, the layout wgmma's descriptors read */
    o->panel = o->cols * o->bytes > 128 ? 128 / o->bytes : o->cols;
    Layout s = layout_shared_tile(o->rows, o->panel, o->bytes);
    o->vec = s.vec;
    o->per_phase = s.per_phase;
    o->max_phase = s.max_phase;
}

LLVMValueRef cg_tile_index(Cg *cg, const CgTile *o, LLVMValueRef r, LLVMValueRef c)
{
    if (o->trans) {
        LLVMValueRef t = r;
        r = c;
        c = t;
    }
    LLVMValueRef chunk = LLVMBuildLShr(cg->b, c, cg_i32(cg, cg_ilog2(o->vec)), "");
    LLVMValueRef phase = LLVMBuildLShr(cg->b, r, cg_i32(cg, cg_ilog2(o->per_phase)), "");
    phase = LLVMBuildAnd(cg->b, phase, cg_i32(cg, o->max_phase - 1), "");
    chunk = LLVMBuildAnd(cg->b, chunk, cg_i32(cg, o->panel / o->vec - 1), "");
    chunk = LLVMBuildXor(cg->b, chunk, phase, "");
    LLVMValueRef e = LLVMBuildShl(cg->b, r, cg_i32(cg, cg_ilog2(o->panel)), "");
    e = LLVMBuildOr(cg->b, e, LLVMBuildShl(cg->b, chunk, cg_i32(cg, cg_ilog2(o->vec)), ""), "");
    e = LLVMBuildOr(cg->b, e, LLVMBuildAnd(cg->b, c, cg_i32(cg, o->vec - 1), ""), "");
    if (o->panel == o->cols)
        return e;
    LLVMValueRef panel = LLVMBuildLShr(cg->b, c, cg_i32(cg, cg_ilog2(o->panel)), "");
    panel = LLVMBuildShl(cg->b, panel, cg_i32(cg, cg_ilog2((int64_t)o->rows * o->panel)), "");
    return LLVMBuildOr(cg->b, e, panel, "");
}

static LLVMValueRef tile_addr(Cg *cg, const Operand *o, LLVMValueRef r, LLVMValueRef c, DType dt)
{
    return cg_smem_addr_at(cg, o->off, cg_tile_index(cg, &o->t, r, c), dt);
}

/* Stores the blocked source of a convert_layout into the swizzled tile, a
 * vector per run of consecutive elements that stays inside one chunk. */
static void stage(Cg *cg, Operand *o, const IrValue *src, int64_t off)
{
    o->staged = true;
    o->off = cg_i32(cg, cg->smem_reserved + off); /* scratch starts after the ring buffers */
    CgLayout l = cg_layout(cg, src);
    CgVal x = cg_get(cg, src);
    int dim, run = lin_run(&l.lin, 2, src->type.shape, &dim);
    int w = run < o->t.vec ? run : o->t.vec;
    if ((dim == 0) != o->t.trans)
        w = 1; /* stored transposed to the registers' runs: one element each */
    LLVMTypeRef et = cg_mem_type(cg, src->type.dt);
    cg_smem_need(cg, off + l.numel * o->t.bytes);
    int lc = src->type.shape[1];
    for (int s = 0; s + w <= x.n; s += w) {
        LLVMValueRef e = cg_elem_index(cg, &l, s);
        LLVMValueRef r = LLVMBuildLShr(cg->b, e, cg_i32(cg, cg_ilog2(lc)), "");
        LLVMValueRef c = LLVMBuildAnd(cg->b, e, cg_i32(cg, lc - 1), "");
        LLVMValueRef p = tile_addr(cg, o, r, c, src->type.dt);
        if (w == 1) {
            LLVMBuildStore(cg->b, x.el[s], p);
            continue;
        }
        LLVMTypeRef vt = LLVMVectorType(et, (unsigned)w);
        LLVMValueRef v = LLVMGetUndef(vt);
        for (int i = 0; i < w; i++)
            v = LLVMBuildInsertElement(cg->b, v, x.el[s + i], cg_i32(cg, i), "");
        LLVMSetAlignment(LLVMBuildStore(cg->b, v, p), (unsigned)(w * o->t.bytes));
    }
}

static LLVMValueRef add(Cg *cg, LLVMValueRef a, int64_t b);

/* Element (r + dr, c + dc) of tile o, dr and dc constants (a K step's
 * offset). Whole swizzle periods (per_phase * max_phase rows) of the
 * offset along the rows the tile is stored by move no chunk: they are a
 * constant number of elements past the address of the rest, which LLVM
 * folds into the ld.shared's immediate, so that every K step of a dot
 * reads through the same few address registers. Added before the
 * swizzle, as plain index arithmetic, they left one address register
 * per element and step, which LLVM kept live across an unrolled K loop
 * (mhc's mm_norm forward: ~200 registers of addresses for tf32 B
 * fragments, 2 KB of spills). */
static LLVMValueRef smem_elem_at(Cg *cg, const Operand *o, DType dt, LLVMValueRef r, int64_t dr,
                                 LLVMValueRef c, int64_t dc)
{
    int64_t *along = o->t.trans ? &dc : &dr; /* the stored rows' offset */
    int64_t period = (int64_t)o->t.per_phase * o->t.max_phase;
    int64_t whole = *along > 0 && period > 0 ? *along / period * period : 0;
    *along -= whole;
    LLVMValueRef p = tile_addr(cg, o, dr ? add(cg, r, dr) : r, dc ? add(cg, c, dc) : c, dt);
    if (whole) {
        LLVMValueRef n = cg_i32(cg, whole * o->t.panel);
        p = LLVMBuildInBoundsGEP2(cg->b, cg_mem_type(cg, dt), p, &n, 1, "");
    }
    return LLVMBuildLoad2(cg->b, cg_mem_type(cg, dt), p, "");
}

LLVMValueRef cg_pack32(Cg *cg, DType dt, const LLVMValueRef *el, int n)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    if (n == 1)
        return LLVMBuildBitCast(cg->b, el[0], i32, "");
    LLVMTypeRef vt = LLVMVectorType(cg_type(cg, dt), (unsigned)n);
    LLVMValueRef v = LLVMGetUndef(vt);
    for (int i = 0; i < n; i++)
        v = LLVMBuildInsertElement(cg->b, v, el[i], cg_i32(cg, i), "");
    return LLVMBuildBitCast(cg->b, v, i32, "");
}

/* One 32-bit operand register from kpack consecutive elements. */
static LLVMValueRef pack(Cg *cg, const MmaKind *k, DType dt, LLVMValueRef *el)
{
    return cg_pack32(cg, dt, el, k->kpack);
}

void cg_ldmatrix(Cg *cg, int n, bool trans, LLVMValueRef ptr, LLVMValueRef *out)
{
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x%d%s.b16", n,
             trans ? ".trans" : "");
    LLVMTypeRef pt = LLVMTypeOf(ptr); /* overloaded on the pointer: shared (.p3) */
    LLVMValueRef r = cg_intrinsic(cg, name, &pt, 1, &ptr, 1);
    for (int i = 0; i < n; i++)
        out[i] = LLVMBuildExtractValue(cg->b, r, (unsigned)i, "");
}

static LLVMValueRef lane_bits(Mma *x, int shift, int mask)
{
    LLVMValueRef v = LLVMBuildLShr(x->cg->b, x->lane, cg_i32(x->cg, shift), "");
    return LLVMBuildAnd(x->cg->b, v, cg_i32(x->cg, mask), "");
}

static LLVMValueRef add(Cg *cg, LLVMValueRef a, int64_t b)
{
    return LLVMBuildAdd(cg->b, a, cg_i32(cg, b), "");
}

/* A row of A's 16-row instruction tile: of a tile of fewer rows, the copy
 * it repeats. */
static LLVMValueRef wrap_row(Mma *x, LLVMValueRef row)
{
    if (x->rows >= 16)
        return row;
    return LLVMBuildAnd(x->cg->b, row, cg_i32(x->cg, x->rows - 1), "");
}

/* The 8-column block of this warp's N tile `tile`: mma.sync's warps along N
 * interleave by block; warpgroup MMA's side-by-side warpgroups (a v3
 * layout with wn > 1, run here where wgmma cannot take the operands) each
 * hold nr contiguous blocks (ir/layout.c). */
static LLVMValueRef col_block(const Mma *x, LLVMValueRef tile)
{
    Cg *cg = x->cg;
    if (x->m->version == 3 && x->m->wn > 1)
        return LLVMBuildAdd(cg->b, LLVMBuildMul(cg->b, x->wni, cg_i32(cg, x->nr), ""), tile, "");
    return LLVMBuildAdd(cg->b, x->wni, LLVMBuildMul(cg->b, tile, cg_i32(cg, x->m->wn), ""), "");
}

/* A column of B's 8-column instruction tile: of a tile of fewer columns,
 * the copy it repeats. */
static LLVMValueRef wrap_col(Mma *x, LLVMValueRef col)
{
    if (x->cols >= 8)
        return col;
    return LLVMBuildAnd(x->cg->b, col, cg_i32(x->cg, x->cols - 1), "");
}

/* Whether B's fragments are read element by element: 32- and 8-bit tiles
 * stored K-major cannot be transposed by ldmatrix, and of fewer than 8
 * columns no ldmatrix.trans row (8 columns) exists. */
static bool b_by_element(const Mma *x)
{
    return !x->b.t.trans && (x->b.t.bytes != 2 || x->cols < 8);
}

/* A fragment (4 registers) of instruction tile (mi, ki). */
static void frag_a(Mma *x, int mi, int ki, LLVMValueRef *out)
{
    Cg *cg = x->cg;
    Operand *o = &x->a;
    int kp = x->k.kpack, ik = 8 * kp;
    if (!o->staged) {
        LLVMValueRef *e = o->el.el + 4 * kp * (ki + x->kr * mi);
        for (int r = 0; r < 4; r++)
            out[r] = pack(cg, &x->k, x->dt, e + r * kp);
        return;
    }
    /* row base of the tile: warp rows, then repeats */
    LLVMValueRef rbase = LLVMBuildShl(cg->b, x->wmi, cg_i32(cg, 4), "");
    rbase = add(cg, rbase, (int64_t)16 * x->m->wm * mi);
    /* matrices: (rows 0-7, k lo), (8-15, lo), (0-7, hi), (8-15, hi); lane l
     * addresses row l % 8 of matrix l / 8 */
    LLVMValueRef hi_row = LLVMBuildShl(cg->b, lane_bits(x, 3, 1), cg_i32(cg, 3), "");
    LLVMValueRef hi_k = LLVMBuildShl(cg->b, lane_bits(x, 4, 1), cg_i32(cg, cg_ilog2(ik / 2)), "");
    if (!o->t.trans) {
        LLVMValueRef row = wrap_row(x, LLVMBuildOr(cg->b, lane_bits(x, 0, 7), hi_row, ""));
        row = LLVMBuildAdd(cg->b, rbase, row, "");
        LLVMValueRef p = tile_addr(cg, o, row, add(cg, hi_k, (int64_t)ik * ki), x->dt);
        cg_ldmatrix(cg, 4, false, p, out);
        return;
    }
    /* stored K-major: rows of the 8x8 matrices are k, 8 rows of A wide */
    if (o->t.bytes == 2 && x->rows >= 8) {
        LLVMValueRef k =
            add(cg, LLVMBuildOr(cg->b, lane_bits(x, 0, 7), hi_k, ""), (int64_t)ik * ki);
        LLVMValueRef p =
            tile_addr(cg, o, LLVMBuildAdd(cg->b, rbase, wrap_row(x, hi_row), ""), k, x->dt);
        cg_ldmatrix(cg, 4, true, p, out);
        return;
    }
    LLVMValueRef g = lane_bits(x, 2, 7), tq = lane_bits(x, 0, 3);
    for (int r = 0; r < 4; r++) {
        LLVMValueRef el[4];
        LLVMValueRef row = LLVMBuildAdd(cg->b, rbase, wrap_row(x, add(cg, g, (r & 1) * 8)), "");
        for (int q = 0; q < kp; q++) {
            LLVMValueRef k = LLVMBuildMul(cg->b, tq, cg_i32(cg, kp), "");
            el[q] = smem_elem_at(cg, o, x->dt, row, 0, k, (int64_t)ik * ki + (r >> 1) * 4 * kp + q);
        }
        out[r] = pack(cg, &x->k, x->dt, el);
    }
}

/* B fragments (2 registers each) of tiles (ni, ki) and, when two, (ni+1, ki);
 * with kpair (count 1, 16-bit or N-major tiles in shared memory) of (ni, ki)
 * and (ni, ki+1), so that a lone N tile still reads four matrices at once. */
static void frag_b(Mma *x, int ni, int ki, int count, bool kpair, LLVMValueRef *out)
{
    Cg *cg = x->cg;
    Operand *o = &x->b;
    DType bdt = o->v->type.dt; /* fp8 dots may take another format than A */
    int kp = x->k.kpack, ik = 8 * kp;
    if (!o->staged) {
        for (int t = 0; t < count; t++) {
            LLVMValueRef *e = o->el.el + 2 * kp * (ki + x->kr * (ni + t));
            for (int r = 0; r < 2; r++)
                out[2 * t + r] = pack(cg, &x->k, bdt, e + r * kp);
        }
        return;
    }
    LLVMValueRef g = lane_bits(x, 2, 7), tq = lane_bits(x, 0, 3);
    if (o->t.trans) {
        /* stored N-major (K contiguous): matrices (tile ni, k lo), (ni, k hi),
         * (ni+1, lo), (ni+1, hi), rows n, read as they are for any dtype */
        LLVMValueRef tile = add(cg, count == 2 ? lane_bits(x, 4, 1) : cg_i32(cg, 0), ni);
        LLVMValueRef nb = col_block(x, tile);
        LLVMValueRef n =
            LLVMBuildOr(cg->b, LLVMBuildShl(cg->b, nb, cg_i32(cg, 3), ""), lane_bits(x, 0, 7), "");
        n = wrap_col(x, n);
        LLVMValueRef k =
            LLVMBuildShl(cg->b, lane_bits(x, 3, kpair ? 3 : 1), cg_i32(cg, cg_ilog2(4 * kp)), "");
        LLVMValueRef p = tile_addr(cg, o, add(cg, k, (int64_t)ik * ki), n, bdt);
        cg_ldmatrix(cg, kpair ? 4 : 2 * count, false, p, out);
        return;
    }
    if (!b_by_element(x)) {
        /* .trans: matrices (k lo, tile ni), (k hi, ni), (k lo, ni+1), (k hi, ni+1) */
        LLVMValueRef krow = add(cg, lane_bits(x, 0, kpair ? 31 : 15), (int64_t)ik * ki);
        LLVMValueRef tile = add(cg, count == 2 ? lane_bits(x, 4, 1) : cg_i32(cg, 0), ni);
        LLVMValueRef col = LLVMBuildShl(cg->b, col_block(x, tile), cg_i32(cg, 3), "");
        LLVMValueRef p = tile_addr(cg, o, krow, col, bdt);
        cg_ldmatrix(cg, kpair ? 4 : 2 * count, true, p, out);
        return;
    }
    for (int t = 0; t < count; t++) { /* one load each (b_by_element) */
        LLVMValueRef n = col_block(x, cg_i32(cg, ni + t));
        n = wrap_col(x, LLVMBuildOr(cg->b, LLVMBuildShl(cg->b, n, cg_i32(cg, 3), ""), g, ""));
        for (int r = 0; r < 2; r++) {
            LLVMValueRef el[4];
            for (int q = 0; q < kp; q++) {
                LLVMValueRef k = LLVMBuildMul(cg->b, tq, cg_i32(cg, kp), "");
                el[q] = smem_elem_at(cg, o, bdt, k, (int64_t)ik * ki + r * 4 * kp + q, n, 0);
            }
            out[2 * t + r] = pack(cg, &x->k, bdt, el);
        }
    }
}

/* One mma.sync as inline PTX: four fp32 accumulators in and out (tied). */
static void issue_ptx(Mma *x, LLVMValueRef *args, LLVMValueRef *acc)
{
    Cg *cg = x->cg;
    LLVMTypeRef f32 = LLVMFloatTypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMTypeRef pt[10] = {i32, i32, i32, i32, i32, i32, f32, f32, f32, f32};
    LLVMTypeRef rt[4] = {f32, f32, f32, f32};
    LLVMTypeRef ft = LLVMFunctionType(LLVMStructTypeInContext(cg->ctx, rt, 4, 0), pt, 10, 0);
    const char *cons = "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3";
    LLVMValueRef ia = LLVMGetInlineAsm(ft, x->k.ptx, strlen(x->k.ptx), cons, strlen(cons), 0, 0,
                                       LLVMInlineAsmDialectATT, 0);
    LLVMValueRef out = cg_returns(cg, LLVMBuildCall2(cg->b, ft, ia, args, 10, ""));
    for (int j = 0; j < 4; j++)
        acc[j] = LLVMBuildExtractValue(cg->b, out, (unsigned)j, "");
}

static void issue(Mma *x, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *acc)
{
    Cg *cg = x->cg;
    LLVMValueRef args[10];
    LLVMTypeRef h2 = LLVMVectorType(LLVMHalfTypeInContext(cg->ctx), 2);
    for (int r = 0; r < 4; r++)
        args[r] = x->k.half_args ? LLVMBuildBitCast(cg->b, a[r], h2, "") : a[r];
    for (int r = 0; r < 2; r++)
        args[4 + r] = x->k.half_args ? LLVMBuildBitCast(cg->b, b[r], h2, "") : b[r];
    if (x->k.acc == DT_F16) { /* (c0, c1) and (c2, c3) travel as <2 x half> */
        for (int j = 0; j < 2; j++) {
            LLVMValueRef v = LLVMGetUndef(h2);
            v = LLVMBuildInsertElement(cg->b, v, acc[2 * j], cg_i32(cg, 0), "");
            args[6 + j] = LLVMBuildInsertElement(cg->b, v, acc[2 * j + 1], cg_i32(cg, 1), "");
        }
        LLVMValueRef out = cg_intrinsic(cg, x->k.intrinsic, NULL, 0, args, 8);
        for (int j = 0; j < 4; j++)
            acc[j] = LLVMBuildExtractElement(
                cg->b, LLVMBuildExtractValue(cg->b, out, (unsigned)(j / 2), ""), cg_i32(cg, j % 2),
                "");
        return;
    }
    for (int j = 0; j < 4; j++)
        args[6 + j] = acc[j];
    if (!x->k.intrinsic) {
        issue_ptx(x, args, acc);
        return;
    }
    LLVMValueRef out = cg_intrinsic(cg, x->k.intrinsic, NULL, 0, args, 10);
    for (int j = 0; j < 4; j++)
        acc[j] = LLVMBuildExtractValue(cg->b, out, (unsigned)j, "");
}

/* What a K loop multiplies: the fragments as they are, or (tf32x3) the
 * split of each fp32 operand x into big = tf32(x) and small = tf32(x - big):
 * the two cross terms small*big + big*small, or big*big alone. */
typedef enum { PART_PLAIN, PART_SMALL, PART_BIG } Part;

LLVMValueRef cg_round_tf32(Cg *cg, LLVMValueRef bits, LLVMValueRef *small)
{
    LLVMTypeRef f32 = LLVMFloatTypeInContext(cg->ctx);
    LLVMValueRef x = LLVMBuildBitCast(cg->b, bits, f32, "");
    LLVMValueRef big = cg_intrinsic(cg, "llvm.nvvm.f2tf32.rna", NULL, 0, &x, 1);
    if (small) {
        /* exact: big is x with its low mantissa bits rounded off */
        LLVMValueRef rest = LLVMBuildFSub(cg->b, x, LLVMBuildBitCast(cg->b, big, f32, ""), "");
        *small = cg_intrinsic(cg, "llvm.nvvm.f2tf32.rna", NULL, 0, &rest, 1);
    }
    return big;
}

/* The registers of one K step's fragments made into the part's operands:
 * big in place, small (PART_SMALL) into `small`. */
static void split_regs(Cg *cg, Part part, LLVMValueRef *r, int n, LLVMValueRef *small)
{
    if (part == PART_PLAIN)
        return;
    for (int i = 0; i < n; i++)
        r[i] = cg_round_tf32(cg, r[i], part == PART_SMALL ? small + i : NULL);
}

/* acc (the 4 * mr * nr accumulator registers) += the part's products, K step
 * by K step; a K step's fragments are read just before its instructions. */
static void k_steps(Mma *x, LLVMValueRef *acc, Part part)
{
    Cg *cg = x->cg;
    size_t na = 4 * (size_t)x->mr, nb = 2 * (size_t)(x->nr + 1);
    LLVMValueRef *fa = cg_alloc(cg, sizeof(LLVMValueRef) * na);
    LLVMValueRef *fb = cg_alloc(cg, sizeof(LLVMValueRef) * nb);
    LLVMValueRef *sa = cg_alloc(cg, sizeof(LLVMValueRef) * na);
    LLVMValueRef *sb = cg_alloc(cg, sizeof(LLVMValueRef) * nb);
    /* a lone last N tile (an odd count: a decode kernel's 8 columns a warp)
     * reads two K steps with one ldmatrix.x4, keeping the second's half */
    bool kpair = x->nr % 2 && x->b.staged && !b_by_element(x);
    LLVMValueRef pair[4];
    for (int ki = 0; ki < x->kr; ki++) {
        for (int mi = 0; mi < x->mr; mi++)
            frag_a(x, mi, ki, fa + 4 * mi);
        for (int ni = 0; ni < x->nr; ni += 2) {
            LLVMValueRef *f = fb + 2 * ni;
            if (ni + 1 < x->nr || !kpair || (ki % 2 == 0 && ki + 1 == x->kr)) {
                frag_b(x, ni, ki, ni + 1 < x->nr ? 2 : 1, false, f);
                continue;
            }
            if (ki % 2 == 0)
                frag_b(x, ni, ki, 1, true, pair);
            f[0] = pair[2 * (ki % 2)];
            f[1] = pair[2 * (ki % 2) + 1];
        }
        split_regs(cg, part, fa, 4 * x->mr, sa);
        split_regs(cg, part, fb, 2 * x->nr, sb);
        for (int mi = 0; mi < x->mr; mi++)
            for (int ni = 0; ni < x->nr; ni++) {
                LLVMValueRef *c = acc + 4 * (ni + x->nr * mi);
                if (part == PART_SMALL) {
                    issue(x, sa + 4 * mi, fb + 2 * ni, c);
                    issue(x, fa + 4 * mi, sb + 2 * ni, c);
                } else {
                    issue(x, fa + 4 * mi, fb + 2 * ni, c);
                }
            }
    }
}

/* input_precision="tf32x3": fp32 accuracy from three tf32 products, summed
 * as Triton does: the cross terms small*big + big*small from zero over all
 * of K, a NaN there (an infinite input leaves inf - inf in its small part)
 * taken as 0 so that big*big alone carries the infinity, then big*big on
 * top, and the accumulator c added last. r: the result registers. */
static void tf32x3(Mma *x, const LLVMValueRef *c, LLVMValueRef *r)
{
    Cg *cg = x->cg;
    int n = 4 * x->mr * x->nr;
    LLVMValueRef zero = LLVMConstReal(LLVMFloatTypeInContext(cg->ctx), 0);
    for (int i = 0; i < n; i++)
        r[i] = zero;
    k_steps(x, r, PART_SMALL);
    for (int i = 0; i < n; i++) {
        LLVMValueRef nan = LLVMBuildFCmp(cg->b, LLVMRealUNO, r[i], r[i], "");
        r[i] = LLVMBuildSelect(cg->b, nan, zero, r[i], "");
    }
    k_steps(x, r, PART_BIG);
    for (int i = 0; i < n; i++)
        r[i] = LLVMBuildFAdd(cg->b, r[i], c[i], "");
}

/* What a dot operand's convert_layout reads: a ring's slot (a transposed
 * ring tile, pipeline.c view_transposes, is its slot too), else the op
 * that computed the registers the dot stages. A private ring's slot is
 * not a tile: each thread's copies lie at its own index (async.c), and
 * only that thread waited for them, so its view is registers, staged as
 * any other (a tile the loop also reads element-wise, fla's WY backward). */
static const IrOp *operand_source(const IrOp *def)
{
    const IrOp *src = def->operands[0]->def;
    if (src && src->kind == IR_TRANS && src->operands[0]->def &&
        src->operands[0]->def->kind == IR_SHARED_VIEW && !src->operands[0]->def->sub)
        src = src->operands[0]->def;
    return src && src->kind == IR_SHARED_VIEW && src->sub ? NULL : src;
}

/* Whether dot op stores an operand from registers into shared memory
 * before it reads any (and so meets a barrier first; cg_mma_operand). */
bool cg_dot_stages(const Cg *cg, const IrOp *op)
{
    if (op->kind != IR_DOT || !op->results[0]->layout || op->results[0]->layout->kind != LY_MMA)
        return false;
    for (int i = 0; i < 2; i++) {
        const IrValue *v = op->operands[i];
        const IrOp *def = v->def, *src;
        if (cg->have[v->id] || !def || def->kind != IR_CONVERT_LAYOUT)
            continue;
        src = operand_source(def);
        if (!src || src->kind != IR_SHARED_VIEW)
            return true;
    }
    return false;
}

/* An operand from registers, or staged from the blocked value behind the
 * convert_layout that layout.c left to this dot. */
bool cg_mma_operand(Cg *cg, Operand *o, const IrValue *v, int64_t *off)
{
    o->v = v;
    if (cg->have[v->id]) {
        o->el = cg_get(cg, v);
        return true;
    }
    const IrOp *def = v->def;
    if (!def || def->kind != IR_CONVERT_LAYOUT) {
        cg_internal(cg, cg->f->span, "mma operand %%%d is neither computed nor staged", v->id);
        return false;
    }
    const IrOp *src = operand_source(def);
    bool trans = cg_runs_down(cg, def->operands[0]);
    if (!trans && (!src || src->kind != IR_SHARED_VIEW)) /* staged here */
        trans = lanes_run_down(cg, def->operands[0]);
    const Layout *dl = v->layout;
    /* a tile staged here for wgmma of 32- or 8-bit elements is stored
     * K-major, whatever the order of the registers: B transposed, A not */
    if ((!src || src->kind != IR_SHARED_VIEW) && dl && dl->kind == LY_DOT_OP &&
        layout_needs_kmajor(dl->parent, cg_mem_bytes(v->type.dt)))
        trans = dl->opidx == 1;
    cg_tile_geometry(&o->t, &v->type, trans);
    if (src && src->kind == IR_SHARED_VIEW) {
        o->staged = o->copied = true;
        o->off = cg_buffer_slot(cg, (int)src->ival, cg_get(cg, src->operands[0]).el[0]);
        return true;
    }
    stage(cg, o, def->operands[0], *off);
    /* 1024-byte aligned: the 128-byte swizzle repeats every 8 rows */
    *off += (type_numel(v->type) * o->t.bytes + 1023) / 1024 * 1024;
    return true;
}

void cg_emit_mma(Cg *cg, const IrOp *op)
{
    const IrValue *av = op->operands[0], *bv = op->operands[1], *res = op->results[0];
    Mma x = {.cg = cg, .m = res->layout, .dt = av->type.dt};
    if (!mma_kind(av->type.dt, bv->type.dt, res->type.dt, &x.k)) {
        cg_internal(cg, op->span, "dot with an mma layout but unsupported operands");
        return;
    }
    int M = res->type.shape[0], N = res->type.shape[1], K = av->type.shape[1];
    /* fewer than 16 rows (a decode's query group): one tile whose rows
     * 16 / M repeat them, as the linear form's copies say (ir/layout.c) */
    x.mr = M < 16 ? 1 : M / (16 * x.m->wm);
    x.nr = N < 8 ? 1 : N / (8 * x.m->wn);
    x.rows = M;
    x.cols = N;
    x.kr = K / (8 * x.k.kpack); /* the instruction's K: 8 tf32, 16 halves, 32 bytes */
    LLVMValueRef warp = LLVMBuildLShr(cg->b, cg->tid, cg_i32(cg, 5), "");
    x.lane = LLVMBuildAnd(cg->b, cg->tid, cg_i32(cg, 31), "");
    x.wmi = LLVMBuildAnd(cg->b, warp, cg_i32(cg, x.m->wm - 1), "");
    x.wni = LLVMBuildAnd(cg->b, LLVMBuildLShr(cg->b, warp, cg_i32(cg, cg_ilog2(x.m->wm)), ""),
                         cg_i32(cg, x.m->wn - 1), "");
    int64_t off = 0;
    if (!cg_mma_operand(cg, &x.a, av, &off) || !cg_mma_operand(cg, &x.b, bv, &off))
        return;
    if (cg_emit_wgmma(cg, op, &x.a, &x.b, off))
        return;
    /* registers went to shared memory here: wait for every warp's part */
    bool staged = (x.a.staged && !x.a.copied) || (x.b.staged && !x.b.copied);
    if (staged)
        cg_barrier(cg);
    CgVal c = cg_dot_acc(cg, op);
    CgVal r = cg_val_new(cg, 4 * x.mr * x.nr);
    if (c.n != r.n) {
        cg_internal(cg, op->span, "mma accumulator of %d elements for %d tiles", c.n, x.mr * x.nr);
        return;
    }
    for (int i = 0; i < r.n; i++)
        r.el[i] = c.el[i];
    if (op->sub == DOT_TF32X3 && x.dt == DT_F32)
        tf32x3(&x, c.el, r.el);
    else
        k_steps(&x, r.el, PART_PLAIN);
    if (staged)
        cg_barrier(cg); /* the tiles may be overwritten once every warp has read them */
    cg_set(cg, res, r);
}
