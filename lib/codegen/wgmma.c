/* codegen/wgmma.c: dot on sm_90a's warpgroup MMA (wgmma.mma_async). The
 * layout pass gave the accumulator an mma layout of version 3: every warp
 * along M, so the four warps of a warpgroup hold 64 consecutive rows, in the
 * registers wgmma m64nNkK defines (the mma.sync m16n8 fragment, repeated
 * over N). Both operands are tiles in shared memory, staged or copied by the
 * pipeline in the panelled swizzle of cg_tile_index, and reach the
 * instruction as 64-bit descriptors (A may come from registers instead).
 * The swizzle works on 16-byte chunks of 128-byte panel rows whatever the
 * element size, and one instruction reads 32 bytes of K for every operand
 * type, so the same descriptors serve 16-, 32- and 8-bit elements; only
 * 16-bit tiles may be stored MN-major, the others must be K-major
 * (layout_needs_kmajor). fp8 operands may mix e4m3 and e5m2, as mma.sync's
 * do. input_precision="tf32x3" splits the operand tiles into big and small
 * tf32 tiles and runs three products into one accumulator (tf32x3 below).
 * LLVM 19 has no wgmma intrinsics, so the instructions are inline PTX; the
 * accumulators pass through every instruction and through the final wait
 * as tied operands, so that nothing reads them while the tensor cores
 * still write them. */
#include "codegen/cg.h"

#include <stdio.h>
#include <string.h>

static bool hopper(const Cg *cg) { return cg->o->arch && strcmp(cg->o->arch, "sm_90a") == 0; }

void cg_fence_async_shared(Cg *cg)
{
    cg_pay_slot_wait(cg); /* the fence orders what the wait saw land */
    cg->fence_owed = false;
    if (hopper(cg))
        cg_asm_void(cg, "fence.proxy.async.shared::cta;");
}

/* One wgmma form, by operand and accumulator dtype. */
typedef struct WgKind {
    DType in, acc;
    const char *name, *acc_name; /* the types in the instruction's name */
    int k;                       /* K of one instruction: 32 bytes of operand */
    int imm;                     /* immediates after scale-d: 4 (scale-a, scale-b,
                                  * trans-a, trans-b), 2 (scales only), 0 */
} WgKind;

static const WgKind wg_kinds[] = {
    {DT_F16, DT_F32, "f16", "f32", 16, 4},   {DT_BF16, DT_F32, "bf16", "f32", 16, 4},
    {DT_F32, DT_F32, "tf32", "f32", 8, 2},   {DT_I8, DT_I32, "s8", "s32", 32, 0},
    {DT_F8E4, DT_F32, "e4m3", "f32", 32, 2}, {DT_F8E5, DT_F32, "e5m2", "f32", 32, 2},
    {DT_F16, DT_F16, "f16", "f16", 16, 4}, /* out_dtype=tl.float16 */
};

static const WgKind *wg_kind(DType in, DType acc)
{
    for (size_t i = 0; i < sizeof wg_kinds / sizeof wg_kinds[0]; i++)
        if (wg_kinds[i].in == in && wg_kinds[i].acc == acc)
            return &wg_kinds[i];
    return NULL;
}

typedef struct Wg {
    Cg *cg;
    const WgKind *k, *kb; /* A's form, B's (another fp8 format than A's) */
    LLVMTypeRef acc_t;    /* type of an accumulator register */
    int per;              /* accumulator elements per register: 2 halves, else 1 */
    int n;                /* instruction width (N of m64nNkK) */
    int mr, nr, kr;       /* instructions along M (per warpgroup), N and K */
    int rep_rows;         /* rows one repeat of all warps covers */
    LLVMValueRef wg_row;  /* this warpgroup's first row within a repeat */
    LLVMValueRef wg_col;  /* its first column (warpgroups side by side along N) */
    CgOperand *a, *b;
} Wg;

/* The descriptor's swizzle mode for panel rows of `bytes` bytes. */
static int swizzle_mode(int bytes)
{
    return bytes == 128 ? 1 : bytes == 64 ? 2 : bytes == 32 ? 3 : -1;
}

/* Descriptor of the stored tile of o from its start: the address
 * (unswizzled: the hardware swizzles by address bits, hence the 1024-byte
 * aligned base) in 16-byte units, the panel stride as leading offset, eight
 * rows as stride offset. */
static LLVMValueRef tile_descriptor(Cg *cg, const CgOperand *o)
{
    const CgTile *t = &o->t;
    LLVMValueRef p = cg_smem_addr_at(cg, o->off, cg_i32(cg, 0), o->v->type.dt);
    LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx);
    LLVMValueRef addr = LLVMBuildPtrToInt(cg->b, p, i64, "");
    addr =
        LLVMBuildLShr(cg->b, LLVMBuildAnd(cg->b, addr, cg_i64(cg, 0x3FFFF), ""), cg_i64(cg, 4), "");
    int row = t->panel * t->bytes;
    uint64_t fixed = (uint64_t)((int64_t)t->rows * row >> 4) << 16 |
        (uint64_t)(8 * row >> 4) << 32 | (uint64_t)swizzle_mode(row) << 62;
    return LLVMBuildOr(cg->b, addr, LLVMConstInt(i64, fixed, 0), "");
}

/* idx elements of o's tile in 16-byte units, for a descriptor's address. */
static LLVMValueRef units(Cg *cg, const CgOperand *o, LLVMValueRef idx)
{
    LLVMValueRef bytes = LLVMBuildMul(cg->b, idx, cg_i32(cg, o->t.bytes), "");
    LLVMValueRef u = LLVMBuildLShr(cg->b, bytes, cg_i32(cg, 4), "");
    return LLVMBuildZExt(cg->b, u, LLVMInt64TypeInContext(cg->ctx), "");
}

/* Descriptor of the stored tile of o from physical (r0, c0) on: the
 * tile's descriptor plus the offsets of the row and of the column, each a
 * multiple of 16 bytes. Shared memory ends below 2^18 bytes, so the sums
 * never carry out of the address field; added apart, the row's part (a
 * warpgroup's rows) is shared by a step's instructions and the column's
 * (its k offsets) is a constant. */
static LLVMValueRef descriptor(Cg *cg, const CgOperand *o, LLVMValueRef r0, LLVMValueRef c0)
{
    const CgTile *t = &o->t;
    LLVMValueRef panel = LLVMBuildLShr(cg->b, c0, cg_i32(cg, cg_ilog2(t->panel)), "");
    panel = LLVMBuildShl(cg->b, panel, cg_i32(cg, cg_ilog2((int64_t)t->rows * t->panel)), "");
    LLVMValueRef col =
        LLVMBuildAdd(cg->b, panel, LLVMBuildAnd(cg->b, c0, cg_i32(cg, t->panel - 1), ""), "");
    LLVMValueRef row = LLVMBuildShl(cg->b, r0, cg_i32(cg, cg_ilog2(t->panel)), "");
    LLVMValueRef d = LLVMBuildAdd(cg->b, tile_descriptor(cg, o), units(cg, o, row), "");
    return LLVMBuildAdd(cg->b, d, units(cg, o, col), "");
}

/* Descriptors of A at (row, k) and B at (k, col), logical coordinates. */
static LLVMValueRef desc_a(Cg *cg, const CgOperand *a, LLVMValueRef row, int k)
{
    if (!a->t.trans)
        return descriptor(cg, a, row, cg_i32(cg, k));
    return descriptor(cg, a, cg_i32(cg, k), row); /* M-major: rows are columns */
}

static LLVMValueRef desc_b(Cg *cg, const CgOperand *b, int k, LLVMValueRef col)
{
    if (!b->t.trans)
        return descriptor(cg, b, cg_i32(cg, k), col);
    return descriptor(cg, b, col, cg_i32(cg, k));
}

/* Appends "$first, ..., $first+n-1" to buf. */
static void reg_list(StrBuf *sb, int first, int n)
{
    for (int i = 0; i < n; i++)
        sb_printf(sb, i ? ", $%d" : "$%d", first + i);
}

/* n tied accumulator registers (f32 or s32, of type et) in, n out, plus
 * `extra` inputs of types xt. */
static void tied(Cg *cg, LLVMTypeRef et, StrBuf *cons, LLVMTypeRef *pt, int n, const char *extra,
                 const LLVMTypeRef *xt, int nx)
{
    const char *out = et == LLVMFloatTypeInContext(cg->ctx) ? "=f" : "=r";
    for (int i = 0; i < n; i++)
        sb_printf(cons, "%s%s", i ? "," : "", out);
    for (int i = 0; i < n; i++) {
        sb_printf(cons, ",%d", i);
        pt[i] = et;
    }
    sb_puts(cons, extra);
    for (int i = 0; i < nx; i++)
        pt[n + i] = xt[i];
}

static void unpack(Cg *cg, LLVMValueRef s, LLVMValueRef *acc, int n)
{
    for (int i = 0; i < n; i++)
        acc[i] = LLVMBuildExtractValue(cg->b, s, (unsigned)i, "");
}

/* The accumulator's registers from its n elements: the elements
 * themselves, or (per 2) pairs of halves, each pair one 32-bit register
 * as wgmma's f16 accumulator holds them; undefined where `zero`. */
static LLVMValueRef *acc_regs(Cg *cg, int per, const LLVMValueRef *el, int n, bool zero)
{
    LLVMValueRef *r = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)n);
    LLVMTypeRef t = per == 2 ? LLVMInt32TypeInContext(cg->ctx) : n ? LLVMTypeOf(el[0]) : NULL;
    for (int i = 0; i < n / per; i++)
        r[i] = zero ? LLVMGetUndef(t) : per == 2 ? cg_pack32(cg, DT_F16, el + 2 * i, 2) : el[i];
    return r;
}

/* The n elements of the accumulator's registers (acc_regs undone). */
static void acc_elems(Cg *cg, int per, LLVMValueRef *regs, LLVMValueRef *el, int n)
{
    LLVMTypeRef h2 = LLVMVectorType(LLVMHalfTypeInContext(cg->ctx), 2);
    for (int i = 0; i < n; i++)
        el[i] = per == 1
            ? regs[i]
            : LLVMBuildExtractElement(cg->b, LLVMBuildBitCast(cg->b, regs[i / 2], h2, ""),
                                      cg_i32(cg, i % 2), "");
}

/* A's part of one instruction: a descriptor, or (A in registers) the four
 * 32-bit registers of the warp's 16 rows, as mma.sync's A fragment. */
typedef struct WgA {
    LLVMValueRef desc;
    LLVMValueRef reg[4];
} WgA;

/* The immediates after scale-d: unit scales, and for 16-bit operands the
 * transposes of the tiles ta and tb (none for A from registers). */
static void immediates(const Wg *w, StrBuf *text, const CgOperand *ta, const CgOperand *tb,
                       bool a_desc)
{
    if (w->k->imm >= 2)
        sb_puts(text, ", 1, 1");
    if (w->k->imm < 4)
        return;
    if (a_desc)
        sb_printf(text, ", %d", ta->t.trans ? 1 : 0);
    sb_printf(text, ", %d", tb->t.trans ? 0 : 1);
}

/* acc (n/2 registers) += A x B, or (add false: scale-d 0) acc = A x B: a
 * from tile ta (or its registers), B from descriptor db of tile tb. keep
 * (i1, with add): scale-d as a predicate, adding to acc only where true. */
static void issue(Wg *w, const CgOperand *ta, const CgOperand *tb, const WgA *a, LLVMValueRef db,
                  bool add, LLVMValueRef keep, LLVMValueRef *acc)
{
    Cg *cg = w->cg;
    int n = w->n / 2 / w->per, na = a->desc ? 1 : 4, x = n + na; /* operand number after A */
    bool pred = add && keep;
    StrBuf text, cons;
    sb_init(&text);
    sb_init(&cons);
    if (pred)
        sb_printf(&text, "{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\n", x + n + 1);
    sb_printf(&text, "wgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s {", w->n, w->k->k,
              w->k->acc_name, w->k->name, w->kb->name);
    reg_list(&text, 0, n);
    const char *scale = pred ? "p" : add ? "1" : "0";
    if (a->desc) {
        sb_printf(&text, "}, $%d, $%d, %s", 2 * n, x + n, scale);
    } else {
        sb_puts(&text, "}, {");
        reg_list(&text, 2 * n, 4);
        sb_printf(&text, "}, $%d, %s", x + n, scale);
    }
    immediates(w, &text, ta, tb, a->desc != NULL);
    sb_puts(&text, pred ? ";\n}" : ";");
    LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMTypeRef xt[6] = {i32, i32, i32, i32, i64, i32};
    if (a->desc)
        xt[0] = xt[1] = i64, xt[2] = i32;
    int nx = na + 1 + (pred ? 1 : 0);
    LLVMTypeRef *pt = cg_alloc(cg, sizeof(LLVMTypeRef) * (size_t)(n + 6));
    LLVMValueRef *args = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)(n + 6));
    const char *extra =
        a->desc ? (pred ? ",l,l,r" : ",l,l") : (pred ? ",r,r,r,r,l,r" : ",r,r,r,r,l");
    tied(cg, w->acc_t, &cons, pt, n, extra, xt, nx);
    for (int i = 0; i < n; i++)
        args[i] = acc[i];
    for (int i = 0; i < na; i++)
        args[n + i] = a->desc ? a->desc : a->reg[i];
    args[n + na] = db;
    if (pred)
        args[n + na + 1] = LLVMBuildZExt(cg->b, keep, i32, "");
    LLVMTypeRef st = LLVMStructTypeInContext(cg->ctx, pt, (unsigned)n, 0);
    if (!text.oom && !cons.oom && text.data && cons.data)
        unpack(cg, cg_asm(cg, st, pt, n + nx, text.data, cons.data, args), acc, n);
    else
        cg->failed = true;
    sb_free(&text);
    sb_free(&cons);
}

/* The accumulator registers one wait ties to itself at most. */
enum { WAIT_REGS = 128 };

/* Waits until at most `pending` groups are in flight; n registers of type
 * et pass through. */
static void wait_groups(Cg *cg, LLVMTypeRef et, int pending, LLVMValueRef *acc, int n)
{
    StrBuf cons;
    sb_init(&cons);
    LLVMTypeRef *pt = cg_alloc(cg, sizeof(LLVMTypeRef) * (size_t)n);
    tied(cg, et, &cons, pt, n, "", NULL, 0);
    LLVMTypeRef st = LLVMStructTypeInContext(cg->ctx, pt, (unsigned)n, 0);
    const char *text =
        pending ? "wgmma.wait_group.sync.aligned 1;" : "wgmma.wait_group.sync.aligned 0;";
    if (!cons.oom && cons.data)
        unpack(cg, cg_asm(cg, st, pt, n, text, cons.data, acc), acc, n);
    else
        cg->failed = true;
    sb_free(&cons);
}

/* The operands and shapes wgmma takes; anything else goes to mma.sync. */
static bool fits(const IrOp *op, const WgKind *k, const WgKind *kb, const CgOperand *a,
                 const CgOperand *b)
{
    const Layout *m = op->results[0]->layout;
    if (!k || !kb || !m || m->version != 3 || m->wm % 4 != 0 ||
        op->results[0]->type.shape[1] / m->wn % 16 != 0) /* each warpgroup's columns */
        return false;
    if (k != kb && !(dtype_is_fp8(k->in) && dtype_is_fp8(kb->in))) /* only fp8 formats mix */
        return false;
    if (k->in == DT_F32 && op->sub != DOT_TF32 && op->sub != DOT_TF32X3)
        return false;
    if (!b->staged)
        return false;
    /* K-major: B stored [N][K], A [M][K] */
    if (layout_needs_kmajor(m, cg_mem_bytes(k->in)) && (!b->t.trans || (a->staged && a->t.trans)))
        return false;
    int sb = b->t.panel * b->t.bytes;
    if (swizzle_mode(sb) < 0 || b->t.rows % 8 != 0)
        return false;
    if (!a->staged) /* A's fragments in registers: 8 elements per 16x16 piece */
        return a->el.n * 64 * m->wm == op->results[0]->type.shape[0] * a->v->type.shape[1] * 2;
    return swizzle_mode(a->t.panel * a->t.bytes) > 0 && a->t.rows % 8 == 0;
}

/* The warpgroup index, made visibly uniform (a shuffle from lane 0) for
 * the descriptors. Built once, in the entry block after the thread index:
 * a shuffle cannot leave a loop, and one in the loop keeps the row part of
 * every descriptor in the loop, behind the shuffle's latency. */
static LLVMValueRef warpgroup(Cg *cg)
{
    if (cg->wg)
        return cg->wg;
    if (cg->T <= 128) /* one warpgroup computes: a constant, for ptxas's uniform registers */
        return cg->wg = cg_i32(cg, 0);
    LLVMBasicBlockRef here = LLVMGetInsertBlock(cg->b);
    LLVMValueRef next = LLVMGetNextInstruction(cg->tid);
    if (next)
        LLVMPositionBuilderBefore(cg->b, next);
    else
        LLVMPositionBuilderAtEnd(cg->b, LLVMGetInstructionParent(cg->tid));
    LLVMValueRef g = LLVMBuildLShr(cg->b, cg->tid, cg_i32(cg, 7), "");
    LLVMValueRef args[4] = {cg_i32(cg, -1), g, cg_i32(cg, 0), cg_i32(cg, 31)};
    cg->wg = cg_intrinsic(cg, "llvm.nvvm.shfl.sync.idx.i32", NULL, 0, args, 4);
    LLVMPositionBuilderAtEnd(cg->b, here);
    return cg->wg;
}

static void setup(Wg *w, const IrOp *op)
{
    Cg *cg = w->cg;
    const Layout *m = op->results[0]->layout;
    int M = op->results[0]->type.shape[0], N = op->results[0]->type.shape[1];
    w->per = w->k->acc == DT_F16 ? 2 : 1;
    w->acc_t = w->per == 2 ? LLVMInt32TypeInContext(cg->ctx) : cg_type(cg, w->k->acc);
    int cols = N / m->wn; /* each warpgroup's (ir/layout.c) */
    w->n = cols < 256 ? cols : 256;
    w->rep_rows = 16 * m->wm;
    w->mr = M / w->rep_rows;
    w->nr = cols / w->n;
    w->kr = w->a->v->type.shape[1] / w->k->k;
    /* warpgroups along M first, then along N */
    LLVMValueRef g = warpgroup(cg);
    int gm = m->wm / 4;
    LLVMValueRef gi = m->wn == 1 ? g : LLVMBuildAnd(cg->b, g, cg_i32(cg, gm - 1), "");
    w->wg_row = LLVMBuildShl(cg->b, gi, cg_i32(cg, 6), "");
    w->wg_col = m->wn == 1
        ? cg_i32(cg, 0)
        : LLVMBuildMul(cg->b, LLVMBuildLShr(cg->b, g, cg_i32(cg, cg_ilog2(gm)), ""),
                       cg_i32(cg, cols), "");
}

void cg_emit_dot_wait(Cg *cg, const IrOp *op)
{
    if (cg->have[op->results[0]->id])
        return; /* waited on the loop's way out (codegen/flow.c) */
    CgVal x = cg_get(cg, op->operands[0]);
    CgVal r = cg_val_new(cg, x.n);
    for (int i = 0; i < x.n; i++)
        r.el[i] = x.el[i];
    LLVMTypeRef et = x.n > 0 ? LLVMTypeOf(x.el[0]) : NULL;
    int per = et == LLVMHalfTypeInContext(cg->ctx) ? 2 : 1; /* an f16 accumulator's pairs */
    if (hopper(cg) && et &&
        (et == LLVMFloatTypeInContext(cg->ctx) || et == LLVMInt32TypeInContext(cg->ctx) ||
         per == 2)) {
        LLVMValueRef *acc = acc_regs(cg, per, x.el, x.n, false);
        int n = x.n / per;
        for (int g = 0; g < n; g += WAIT_REGS)
            wait_groups(cg, LLVMTypeOf(acc[0]), 0, acc + g, n - g < WAIT_REGS ? n - g : WAIT_REGS);
        acc_elems(cg, per, acc, r.el, x.n);
    }
    cg_set(cg, op->results[0], r);
}

/* Which of A's registers an instruction takes: as they are, or (tf32x3
 * with A in registers) their big or small tf32 parts. Tiles in shared
 * memory are split before (split_tile). */
typedef enum { A_PLAIN, A_BIG, A_SMALL } APart;

/* A for instruction (mi, ki) from tile or registers a: the rows of repeat
 * mi, K step ki. */
static void part_a(Wg *w, const CgOperand *a, APart part, int mi, int ki, WgA *out)
{
    Cg *cg = w->cg;
    if (a->staged) {
        LLVMValueRef row =
            LLVMBuildAdd(cg->b, w->wg_row, cg_i32(cg, (int64_t)mi * w->rep_rows), "");
        out->desc = desc_a(cg, a, row, w->k->k * ki);
        return;
    }
    /* dot_op order, as mma.c: four registers of kpack elements per piece */
    int kpack = 4 / cg_mem_bytes(w->k->in);
    const LLVMValueRef *e = a->el.el + 4 * kpack * (ki + w->kr * mi);
    for (int r = 0; r < 4; r++) {
        LLVMValueRef small = NULL;
        out->reg[r] = cg_pack32(cg, w->k->in, e + r * kpack, kpack);
        if (part != A_PLAIN)
            out->reg[r] = cg_round_tf32(cg, out->reg[r], part == A_SMALL ? &small : NULL);
        if (part == A_SMALL)
            out->reg[r] = small;
    }
}

/* The first column of instruction ni of this warpgroup. */
static LLVMValueRef col(const Wg *w, int ni)
{
    return LLVMBuildAdd(w->cg->b, w->wg_col, cg_i32(w->cg, (int64_t)ni * w->n), "");
}

/* One product of a K loop: A (or a part of its registers) times B. */
typedef struct WgTerm {
    const CgOperand *a, *b;
    APart part;
} WgTerm;

/* acc += the terms' products over all of K, K step by K step, as one
 * commit group; from_zero: acc = that sum, the first K step not reading
 * acc (scale-d 0), whose registers then need no zeros; keep (i1, or NULL):
 * the first K step reads acc only where true. */
static void k_loop(Wg *w, const WgTerm *t, int nt, bool from_zero, LLVMValueRef keep,
                   LLVMValueRef *acc)
{
    Cg *cg = w->cg;
    cg_asm_void(cg, "wgmma.fence.sync.aligned;");
    for (int ki = 0; ki < w->kr; ki++)
        for (int mi = 0; mi < w->mr; mi++)
            for (int j = 0; j < nt; j++) {
                WgA wa = {0};
                part_a(w, t[j].a, t[j].part, mi, ki, &wa);
                for (int ni = 0; ni < w->nr; ni++)
                    issue(w, t[j].a, t[j].b, &wa, desc_b(cg, t[j].b, w->k->k * ki, col(w, ni)),
                          !from_zero || ki > 0 || j > 0, ki > 0 || j > 0 ? NULL : keep,
                          acc + (mi * w->nr + ni) * w->n / 2 / w->per);
            }
    cg_asm_void(cg, "wgmma.commit_group.sync.aligned;");
}

/* Waits until at most `pending` groups are in flight, for every
 * instruction's accumulator registers: one wait for up to WAIT_REGS of
 * them, as ptxas issues one WARPGROUP.DEPBAR per wait (a 128-row tile at
 * four warps took two, the second with nothing left to wait for). */
static void wait_all(Wg *w, int pending, LLVMValueRef *acc)
{
    int n = w->mr * w->nr * w->n / 2 / w->per;
    for (int g = 0; g < n; g += WAIT_REGS)
        wait_groups(w->cg, w->acc_t, pending, acc + g, n - g < WAIT_REGS ? n - g : WAIT_REGS);
}

/* The last part of a tile may be smaller than one vector per thread:
 * threads past its end skip it. Returns the block to go on in after it. */
static LLVMBasicBlockRef guard(Cg *cg, LLVMValueRef idx, int64_t numel)
{
    LLVMBasicBlockRef work = cg_new_bb(cg, "split.part"), done = cg_new_bb(cg, "split.done");
    LLVMValueRef in = LLVMBuildICmp(cg->b, LLVMIntULT, idx, cg_i32(cg, numel), "");
    LLVMBuildCondBr(cg->b, in, work, done);
    LLVMPositionBuilderAtEnd(cg->b, work);
    return done;
}

/* Scratch bytes of one split part of tile o. */
static int64_t part_bytes(const CgOperand *o)
{
    return ((int64_t)o->t.rows * o->t.cols * 4 + 1023) / 1024 * 1024; /* 1024-aligned */
}

/* Whether tf32x3's split tiles fit in sm_90's 227 KB beside the rings and
 * the tiles staged at scratch offsets below off; where they do not, the dot
 * stays on mma.sync, which splits its fragments in registers. */
static bool split_fits(const Cg *cg, const CgOperand *a, const CgOperand *b, int64_t off)
{
    int64_t need = 2 * part_bytes(b) + (a->staged ? 2 * part_bytes(a) : 0);
    return cg->smem_reserved + off + need + cg->tail_bytes <= 227 * 1024;
}

/* tf32x3: the big part tf32(x) and the small part tf32(x - big) of every
 * fp32 element of tile o, as two tiles of o's geometry in the scratch from
 * *off on; an element keeps its place, so the swizzle does not matter, and
 * o itself (perhaps a ring slot) is only read. Each thread takes 16-byte
 * vectors in turn. */
static void split_tile(Wg *w, const CgOperand *o, CgOperand *big, CgOperand *small, int64_t *off)
{
    Cg *cg = w->cg;
    int64_t numel = (int64_t)o->t.rows * o->t.cols, step = 4 * (int64_t)cg->T;
    int64_t bytes = part_bytes(o);
    *big = *small = *o;
    big->copied = small->copied = false;
    big->off = cg_i32(cg, cg->smem_reserved + *off);
    small->off = cg_i32(cg, cg->smem_reserved + *off + bytes);
    cg_smem_need(cg, *off + 2 * bytes);
    *off += 2 * bytes;
    LLVMTypeRef v4 = LLVMVectorType(LLVMInt32TypeInContext(cg->ctx), 4);
    LLVMValueRef first = LLVMBuildShl(cg->b, cg->tid, cg_i32(cg, 2), "");
    for (int64_t at = 0; at < numel; at += step) {
        LLVMValueRef idx = LLVMBuildAdd(cg->b, first, cg_i32(cg, at), "");
        LLVMBasicBlockRef done = at + step > numel ? guard(cg, idx, numel) : NULL;
        LLVMValueRef x = LLVMBuildLoad2(cg->b, v4, cg_smem_addr_at(cg, o->off, idx, DT_F32), "");
        LLVMSetAlignment(x, 16);
        LLVMValueRef vb = LLVMGetUndef(v4), vs = LLVMGetUndef(v4);
        for (int i = 0; i < 4; i++) {
            LLVMValueRef lo, e = LLVMBuildExtractElement(cg->b, x, cg_i32(cg, i), "");
            LLVMValueRef hi = cg_round_tf32(cg, e, &lo);
            vb = LLVMBuildInsertElement(cg->b, vb, hi, cg_i32(cg, i), "");
            vs = LLVMBuildInsertElement(cg->b, vs, lo, cg_i32(cg, i), "");
        }
        LLVMSetAlignment(LLVMBuildStore(cg->b, vb, cg_smem_addr_at(cg, big->off, idx, DT_F32)), 16);
        LLVMSetAlignment(LLVMBuildStore(cg->b, vs, cg_smem_addr_at(cg, small->off, idx, DT_F32)),
                         16);
        if (done) {
            LLVMBuildBr(cg->b, done);
            LLVMPositionBuilderAtEnd(cg->b, done);
        }
    }
}

/* input_precision="tf32x3", summed as mma.c's tf32x3 (and Triton) does: the
 * cross terms small*big + big*small from zero over all of K, a NaN there
 * (an infinite input leaves inf - inf in its small part) taken as 0 so
 * that big*big alone carries the infinity, then big*big on top, and the
 * accumulator c added last. The tiles are split in shared memory first
 * (A in registers is split as it is read); the tiles behind the split were
 * made visible by the caller. r: the result registers. */
static void tf32x3(Wg *w, const LLVMValueRef *c, LLVMValueRef *r, int64_t off)
{
    Cg *cg = w->cg;
    CgOperand ab = *w->a, as = *w->a, bb, bs;
    APart big = A_BIG, small = A_SMALL;
    if (w->a->staged) {
        split_tile(w, w->a, &ab, &as, &off);
        big = small = A_PLAIN;
    }
    split_tile(w, w->b, &bb, &bs, &off);
    cg_fence_async_shared(cg);
    cg_barrier(cg);
    LLVMValueRef zero = LLVMConstReal(w->acc_t, 0);
    int n = w->mr * w->nr * w->n / 2;
    for (int i = 0; i < n; i++)
        r[i] = zero;
    const WgTerm cross[2] = {{&as, &bb, small}, {&ab, &bs, big}}, main = {&ab, &bb, big};
    k_loop(w, cross, 2, false, NULL, r);
    wait_all(w, 0, r);
    for (int i = 0; i < n; i++) {
        LLVMValueRef nan = LLVMBuildFCmp(cg->b, LLVMRealUNO, r[i], r[i], "");
        r[i] = LLVMBuildSelect(cg->b, nan, zero, r[i], "");
    }
    k_loop(w, &main, 1, false, NULL, r);
    wait_all(w, 0, r);
    for (int i = 0; i < n; i++)
        r[i] = LLVMBuildFAdd(cg->b, r[i], c[i], "");
}

/* An accumulator of zeros (Q K^T's): x + 0 is x but for -0, which Triton's
 * scale-d 0 keeps too. */
static bool zero_acc(const IrValue *c)
{
    while (c->def && c->def->kind == IR_CONVERT_LAYOUT)
        c = c->def->operands[0];
    return c->def && c->def->kind == IR_CONST && c->def->ival == 0 && c->def->fval == 0.0;
}

/* Whether a dot after op in its block is planned to stay in flight. */
static bool later_async_dot(const IrOp *op)
{
    for (const IrOp *o = op->next; o; o = o->next)
        if (o->kind == IR_DOT && o->ival)
            return true;
    return false;
}

bool cg_emit_wgmma(Cg *cg, const IrOp *op, CgOperand *a, CgOperand *b, int64_t off)
{
    const WgKind *k = wg_kind(a->v->type.dt, op->results[0]->type.dt);
    const WgKind *kb = wg_kind(b->v->type.dt, op->results[0]->type.dt);
    if (!hopper(cg) || !fits(op, k, kb, a, b))
        return false;
    bool x3 = op->sub == DOT_TF32X3 && k->in == DT_F32;
    if (x3 && !split_fits(cg, a, b, off))
        return false;
    Wg w = {.cg = cg, .k = k, .kb = kb, .a = a, .b = b};
    setup(&w, op);
    bool staged = (a->staged && !a->copied) || (b->staged && !b->copied);
    if (staged && x3) {
        cg_barrier(cg);  /* the split reads what every warp staged */
    } else if (staged) { /* copied tiles need no fence: cp.async and TMA wrote them */
        cg_fence_async_shared(cg);
        cg_barrier(cg);
    }
    CgVal c = x3 ? cg_dot_acc(cg, op) : cg_get(cg, op->operands[2]);
    CgVal r = cg_val_new(cg, w.mr * w.nr * w.n / 2);
    if (c.n != r.n) {
        cg_internal(cg, op->span, "wgmma accumulator of %d elements, expected %d", c.n, r.n);
        return true;
    }
    if (x3) {
        tf32x3(&w, c.el, r.el, off);
    } else {
        bool zero = zero_acc(op->operands[2]);
        LLVMValueRef *acc = acc_regs(cg, w.per, c.el, r.n, zero);
        /* a fresh accumulator (pass_flatten) is scale-d 0 at run time */
        LLVMValueRef keep = NULL;
        if (op->nops > 3 && !zero)
            keep = LLVMBuildNot(cg->b, cg_get(cg, op->operands[3]).el[0], "");
        const WgTerm t = {a, b, A_PLAIN};
        k_loop(&w, &t, 1, zero, keep, acc);
        /* an asynchronous dot (pass_pipeline) waits only for the previous
         * iteration's group, whose tiles the next copies overwrite; A may be
         * a copied tile or registers (ptxas keeps those of a group in
         * flight), not scratch the next staging overwrites */
        bool keep_a = a->staged ? a->copied : true;
        bool inflight = op->ival && keep_a && b->copied;
        wait_all(&w, inflight ? 1 : 0, acc);
        acc_elems(cg, w.per, acc, r.el, r.n);
        /* with several warpgroups, the slot the next copies overwrite is
         * free once every one of them has waited for its dot i-1, unless
         * the rings have a spare slot (pipe_plan.c); where a later dot of
         * the body stays in flight too (attention backward's dV, then
         * dK), one barrier after the last of them does, owed until the
         * block's next copy or region, or its end */
        if (inflight && cg->f->num_warps > 4 && !cg->consumers && !(op->flags & IRF_SPARE)) {
            if (later_async_dot(op))
                cg->bar_owed = op->parent;
            else
                cg_barrier(cg);
        }
    }
    if (staged || x3)
        cg_barrier(cg); /* the scratch may be reused once every warp has read it */
    cg_set(cg, op->results[0], r);
    return true;
}
