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
 * (layout_needs_kmajor). LLVM 19 has no wgmma intrinsics, so the
 * instructions are inline PTX; the accumulators pass through every
 * instruction and through the final wait as tied operands, so that nothing
 * reads them while the tensor cores still write them. */
#include "codegen/cg.h"

#include <stdio.h>
#include <string.h>

static bool hopper(const Cg *cg)
{
    return cg->o->arch && strcmp(cg->o->arch, "sm_90a") == 0;
}

void cg_fence_async_shared(Cg *cg)
{
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
    {DT_F16, DT_F32, "f16", "f32", 16, 4},
    {DT_BF16, DT_F32, "bf16", "f32", 16, 4},
    {DT_F32, DT_F32, "tf32", "f32", 8, 2},
    {DT_I8, DT_I32, "s8", "s32", 32, 0},
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
    const WgKind *k;
    LLVMTypeRef acc_t;   /* register type of an accumulator element */
    int n;               /* instruction width (N of m64nNkK) */
    int mr, nr, kr;      /* instructions along M (per warpgroup), N and K */
    int rep_rows;        /* rows one repeat of all warps covers */
    LLVMValueRef wg_row; /* this warpgroup's first row within a repeat */
    CgOperand *a, *b;
} Wg;

/* The descriptor's swizzle mode for panel rows of `bytes` bytes. */
static int swizzle_mode(int bytes)
{
    return bytes == 128 ? 1 : bytes == 64 ? 2 : bytes == 32 ? 3 : -1;
}

/* Descriptor of the stored tile of o from physical (r0, c0) on: start
 * address (unswizzled: the hardware swizzles by address bits, hence the
 * 1024-byte aligned base), the panel stride as leading offset, eight rows
 * as stride offset. */
static LLVMValueRef descriptor(Cg *cg, const CgOperand *o, LLVMValueRef r0, LLVMValueRef c0)
{
    const CgTile *t = &o->t;
    LLVMValueRef panel = LLVMBuildLShr(cg->b, c0, cg_i32(cg, cg_ilog2(t->panel)), "");
    panel = LLVMBuildShl(cg->b, panel, cg_i32(cg, cg_ilog2((int64_t)t->rows * t->panel)), "");
    LLVMValueRef idx = LLVMBuildShl(cg->b, r0, cg_i32(cg, cg_ilog2(t->panel)), "");
    idx = LLVMBuildAdd(cg->b, idx, panel, "");
    idx = LLVMBuildAdd(cg->b, idx, LLVMBuildAnd(cg->b, c0, cg_i32(cg, t->panel - 1), ""), "");
    LLVMValueRef p = cg_smem_addr_at(cg, o->off, idx, o->v->type.dt);
    LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx);
    LLVMValueRef addr = LLVMBuildPtrToInt(cg->b, p, i64, "");
    addr = LLVMBuildLShr(cg->b, LLVMBuildAnd(cg->b, addr, cg_i64(cg, 0x3FFFF), ""), cg_i64(cg, 4), "");
    int row = t->panel * t->bytes;
    uint64_t fixed = (uint64_t)((int64_t)t->rows * row >> 4) << 16 | (uint64_t)(8 * row >> 4) << 32 |
                     (uint64_t)swizzle_mode(row) << 62;
    return LLVMBuildOr(cg->b, addr, LLVMConstInt(i64, fixed, 0), "");
}

/* Descriptors of A at (row, k) and B at (k, col), logical coordinates. */
static LLVMValueRef desc_a(Wg *w, LLVMValueRef row, int k)
{
    Cg *cg = w->cg;
    if (!w->a->t.trans)
        return descriptor(cg, w->a, row, cg_i32(cg, k));
    return descriptor(cg, w->a, cg_i32(cg, k), row); /* M-major: rows are columns */
}

static LLVMValueRef desc_b(Wg *w, int k, int col)
{
    Cg *cg = w->cg;
    if (!w->b->t.trans)
        return descriptor(cg, w->b, cg_i32(cg, k), cg_i32(cg, col));
    return descriptor(cg, w->b, cg_i32(cg, col), cg_i32(cg, k));
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

/* A's part of one instruction: a descriptor, or (A in registers) the four
 * 32-bit registers of the warp's 16 rows, as mma.sync's A fragment. */
typedef struct WgA {
    LLVMValueRef desc;
    LLVMValueRef reg[4];
} WgA;

/* The immediates after scale-d: unit scales, and for 16-bit operands the
 * transposes (none for A from registers). */
static void immediates(const Wg *w, StrBuf *text, bool a_desc)
{
    if (w->k->imm >= 2)
        sb_puts(text, ", 1, 1");
    if (w->k->imm < 4)
        return;
    if (a_desc)
        sb_printf(text, ", %d", w->a->t.trans ? 1 : 0);
    sb_printf(text, ", %d", w->b->t.trans ? 0 : 1);
}

/* acc (n/2 registers) += A x B. */
static void issue(Wg *w, const WgA *a, LLVMValueRef db, LLVMValueRef *acc)
{
    Cg *cg = w->cg;
    int n = w->n / 2, na = a->desc ? 1 : 4, x = n + na; /* operand number after A */
    StrBuf text, cons;
    sb_init(&text);
    sb_init(&cons);
    sb_printf(&text, "{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\n", x + n + 1);
    sb_printf(&text, "wgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s {", w->n, w->k->k,
              w->k->acc_name, w->k->name, w->k->name);
    reg_list(&text, 0, n);
    if (a->desc) {
        sb_printf(&text, "}, $%d, $%d, p", 2 * n, x + n);
    } else {
        sb_puts(&text, "}, {");
        reg_list(&text, 2 * n, 4);
        sb_printf(&text, "}, $%d, p", x + n);
    }
    immediates(w, &text, a->desc != NULL);
    sb_puts(&text, ";\n}");
    LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMTypeRef xt[6] = {i32, i32, i32, i32, i64, i32};
    if (a->desc)
        xt[0] = i64;
    LLVMTypeRef *pt = cg_alloc(cg, sizeof(LLVMTypeRef) * (size_t)(n + 6));
    LLVMValueRef *args = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)(n + 6));
    if (a->desc) {
        xt[1] = i64;
        xt[2] = i32;
    }
    tied(cg, w->acc_t, &cons, pt, n, a->desc ? ",l,l,r" : ",r,r,r,r,l,r", xt, na + 2);
    for (int i = 0; i < n; i++)
        args[i] = acc[i];
    for (int i = 0; i < na; i++)
        args[n + i] = a->desc ? a->desc : a->reg[i];
    args[n + na] = db;
    args[n + na + 1] = cg_i32(cg, 1);
    LLVMTypeRef st = LLVMStructTypeInContext(cg->ctx, pt, (unsigned)n, 0);
    if (!text.oom && !cons.oom && text.data && cons.data)
        unpack(cg, cg_asm(cg, st, pt, n + na + 2, text.data, cons.data, args), acc, n);
    else
        cg->failed = true;
    sb_free(&text);
    sb_free(&cons);
}

/* Waits until at most `pending` groups are in flight; n registers of type
 * et pass through. */
static void wait_groups(Cg *cg, LLVMTypeRef et, int pending, LLVMValueRef *acc, int n)
{
    StrBuf cons;
    sb_init(&cons);
    LLVMTypeRef *pt = cg_alloc(cg, sizeof(LLVMTypeRef) * (size_t)n);
    tied(cg, et, &cons, pt, n, "", NULL, 0);
    LLVMTypeRef st = LLVMStructTypeInContext(cg->ctx, pt, (unsigned)n, 0);
    const char *text = pending ? "wgmma.wait_group.sync.aligned 1;" : "wgmma.wait_group.sync.aligned 0;";
    if (!cons.oom && cons.data)
        unpack(cg, cg_asm(cg, st, pt, n, text, cons.data, acc), acc, n);
    else
        cg->failed = true;
    sb_free(&cons);
}

/* The operands and shapes wgmma takes; anything else goes to mma.sync. */
static bool fits(const IrOp *op, const WgKind *k, const CgOperand *a, const CgOperand *b)
{
    const Layout *m = op->results[0]->layout;
    if (!k || !m || m->version != 3 || m->wn != 1 || m->wm % 4 != 0 || m->instr_k != k->k)
        return false;
    if (k->in == DT_F32 && op->sub != DOT_TF32)
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

static void setup(Wg *w, const IrOp *op)
{
    Cg *cg = w->cg;
    const Layout *m = op->results[0]->layout;
    int M = op->results[0]->type.shape[0], N = op->results[0]->type.shape[1];
    w->acc_t = cg_type(cg, w->k->acc);
    w->n = N < 256 ? N : 256;
    w->rep_rows = 16 * m->wm;
    w->mr = M / w->rep_rows;
    w->nr = N / w->n;
    w->kr = w->a->v->type.shape[1] / w->k->k;
    /* the warpgroup index, made visibly uniform for the descriptors */
    LLVMValueRef g = LLVMBuildLShr(cg->b, cg->tid, cg_i32(cg, 7), "");
    LLVMValueRef args[4] = {cg_i32(cg, -1), g, cg_i32(cg, 0), cg_i32(cg, 31)};
    g = cg_intrinsic(cg, "llvm.nvvm.shfl.sync.idx.i32", NULL, 0, args, 4);
    w->wg_row = LLVMBuildShl(cg->b, g, cg_i32(cg, 6), "");
}

void cg_emit_dot_wait(Cg *cg, const IrOp *op)
{
    CgVal x = cg_get(cg, op->operands[0]);
    CgVal r = cg_val_new(cg, x.n);
    for (int i = 0; i < x.n; i++)
        r.el[i] = x.el[i];
    LLVMTypeRef et = x.n > 0 ? LLVMTypeOf(x.el[0]) : NULL;
    if (hopper(cg) && et &&
        (et == LLVMFloatTypeInContext(cg->ctx) || et == LLVMInt32TypeInContext(cg->ctx)))
        for (int g = 0; g < x.n; g += 64)
            wait_groups(cg, et, 0, r.el + g, x.n - g < 64 ? x.n - g : 64);
    cg_set(cg, op->results[0], r);
}

/* A for instruction (mi, ki): the rows of repeat mi, K step ki. */
static void part_a(Wg *w, int mi, int ki, WgA *out)
{
    Cg *cg = w->cg;
    if (w->a->staged) {
        LLVMValueRef row = LLVMBuildAdd(cg->b, w->wg_row, cg_i32(cg, (int64_t)mi * w->rep_rows), "");
        out->desc = desc_a(w, row, w->k->k * ki);
        return;
    }
    /* dot_op order, as mma.c: four registers of kpack elements per piece */
    int kpack = 4 / cg_mem_bytes(w->k->in);
    const LLVMValueRef *e = w->a->el.el + 4 * kpack * (ki + w->kr * mi);
    for (int r = 0; r < 4; r++)
        out->reg[r] = cg_pack32(cg, w->k->in, e + r * kpack, kpack);
}

bool cg_emit_wgmma(Cg *cg, const IrOp *op, CgOperand *a, CgOperand *b)
{
    const WgKind *k = wg_kind(a->v->type.dt, op->results[0]->type.dt);
    if (!hopper(cg) || !fits(op, k, a, b))
        return false;
    Wg w = {.cg = cg, .k = k, .a = a, .b = b};
    setup(&w, op);
    bool staged = (a->staged && !a->copied) || (b->staged && !b->copied);
    if (staged) { /* copied tiles were fenced at the pipeline's wait */
        cg_fence_async_shared(cg);
        cg_barrier(cg);
    }
    CgVal c = cg_get(cg, op->operands[2]);
    CgVal r = cg_val_new(cg, w.mr * w.nr * w.n / 2);
    if (c.n != r.n) {
        cg_internal(cg, op->span, "wgmma accumulator of %d elements, expected %d", c.n, r.n);
        return true;
    }
    for (int i = 0; i < r.n; i++)
        r.el[i] = c.el[i];
    cg_asm_void(cg, "wgmma.fence.sync.aligned;");
    for (int ki = 0; ki < w.kr; ki++)
        for (int mi = 0; mi < w.mr; mi++) {
            WgA wa = {0};
            part_a(&w, mi, ki, &wa);
            for (int ni = 0; ni < w.nr; ni++)
                issue(&w, &wa, desc_b(&w, w.k->k * ki, ni * w.n), r.el + (mi * w.nr + ni) * w.n / 2);
        }
    cg_asm_void(cg, "wgmma.commit_group.sync.aligned;");
    /* an asynchronous dot (pass_pipeline) waits only for the previous
     * iteration's group, whose tiles the next copies overwrite */
    int pending = op->ival && a->staged && a->copied && b->copied ? 1 : 0;
    for (int g = 0; g < w.mr * w.nr; g++)
        wait_groups(cg, w.acc_t, pending, r.el + g * w.n / 2, w.n / 2);
    if (staged)
        cg_barrier(cg); /* the scratch may be reused once every warp has read it */
    cg_set(cg, op->results[0], r);
    return true;
}
