/* codegen/mma.c: dot on tensor cores with mma.sync (sm_80 and up). The
 * layout pass has put A and B in dot_op layouts and the accumulator in an
 * mma layout, so each thread already holds the fragments the instruction
 * reads: this file only packs them into 32-bit registers and issues one
 * m16n8kK instruction per (M tile, N tile, K step). Fragment order follows
 * the linear forms in ir/layout.c: within one instruction A holds
 * kpack-element packs for (row, row+8) x (k, k+4*kpack), B for (k, k+4*kpack),
 * the accumulator (col, col+1) x (row, row+8); tiles repeat over K, then the
 * other dim. */
#include "codegen/cg.h"

typedef struct MmaKind {
    const char *intrinsic;
    int kpack;      /* elements per 32-bit register */
    bool half_args; /* fp16 operands go as <2 x half>, the rest as i32 */
    DType acc;
} MmaKind;

static bool mma_kind(DType in, DType acc, MmaKind *k)
{
    switch (in) {
    case DT_F16:
        *k = (MmaKind){"llvm.nvvm.mma.m16n8k16.row.col.f32.f32", 2, true, DT_F32};
        break;
    case DT_BF16:
        *k = (MmaKind){"llvm.nvvm.mma.m16n8k16.row.col.bf16", 2, false, DT_F32};
        break;
    case DT_F32:
        *k = (MmaKind){"llvm.nvvm.mma.m16n8k8.row.col.tf32", 1, false, DT_F32};
        break;
    case DT_I8:
        *k = (MmaKind){"llvm.nvvm.mma.m16n8k32.row.col.s8", 4, false, DT_I32};
        break;
    default:
        return false;
    }
    return acc == k->acc;
}

/* One 32-bit operand register from kpack consecutive fragment elements. */
static LLVMValueRef pack(Cg *cg, const MmaKind *k, DType dt, LLVMValueRef *el)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    if (k->kpack == 1)
        return LLVMBuildBitCast(cg->b, el[0], i32, "");
    LLVMTypeRef vt = LLVMVectorType(cg_type(cg, dt), (unsigned)k->kpack);
    LLVMValueRef v = LLVMGetUndef(vt);
    for (int i = 0; i < k->kpack; i++)
        v = LLVMBuildInsertElement(cg->b, v, el[i], cg_i32(cg, i), "");
    return k->half_args ? v : LLVMBuildBitCast(cg->b, v, i32, "");
}

typedef struct MmaTiles {
    int mr, nr, kr; /* instruction tiles per thread along M, N and K */
    int qa, qb;     /* fragment elements per instruction: A, B */
} MmaTiles;

static void mma_step(Cg *cg, const MmaKind *k, const MmaTiles *t, DType dt, CgVal a, CgVal b,
                     LLVMValueRef *acc, int mi, int ni, int ki)
{
    LLVMValueRef args[10];
    LLVMValueRef *ea = a.el + t->qa * (ki + t->kr * mi);
    LLVMValueRef *eb = b.el + t->qb * (ki + t->kr * ni);
    for (int r = 0; r < 4; r++)
        args[r] = pack(cg, k, dt, ea + r * k->kpack);
    for (int r = 0; r < 2; r++)
        args[4 + r] = pack(cg, k, dt, eb + r * k->kpack);
    for (int j = 0; j < 4; j++)
        args[6 + j] = acc[j];
    LLVMValueRef out = cg_intrinsic(cg, k->intrinsic, NULL, 0, args, 10);
    for (int j = 0; j < 4; j++)
        acc[j] = LLVMBuildExtractValue(cg->b, out, (unsigned)j, "");
}

void cg_emit_mma(Cg *cg, const IrOp *op)
{
    const IrValue *av = op->operands[0], *bv = op->operands[1], *res = op->results[0];
    const Layout *m = res->layout;
    MmaKind k;
    if (!mma_kind(av->type.dt, res->type.dt, &k) || !av->layout || av->layout->kind != LY_DOT_OP ||
        !bv->layout || bv->layout->kind != LY_DOT_OP) {
        cg_internal(cg, op->span, "dot with an mma layout but unsupported operands");
        return;
    }
    int M = res->type.shape[0], N = res->type.shape[1], K = av->type.shape[1];
    MmaTiles t = {M / (16 * m->wm), N / (8 * m->wn), K / m->instr_k, 4 * k.kpack, 2 * k.kpack};
    CgVal a = cg_get(cg, av), b = cg_get(cg, bv), c = cg_get(cg, op->operands[2]);
    CgVal r = cg_val_new(cg, 4 * t.mr * t.nr);
    if (a.n < t.qa * t.kr * t.mr || b.n < t.qb * t.kr * t.nr || c.n != r.n) {
        cg_internal(cg, op->span, "mma fragments of %d, %d and %d elements for %d tiles", a.n,
                    b.n, c.n, t.mr * t.nr);
        return;
    }
    for (int mi = 0; mi < t.mr; mi++)
        for (int ni = 0; ni < t.nr; ni++) {
            LLVMValueRef *acc = r.el + 4 * (ni + t.nr * mi);
            for (int j = 0; j < 4; j++)
                acc[j] = c.el[4 * (ni + t.nr * mi) + j];
            for (int ki = 0; ki < t.kr; ki++)
                mma_step(cg, &k, &t, av->type.dt, a, b, acc, mi, ni, ki);
        }
    cg_set(cg, res, r);
}
