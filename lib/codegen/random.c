/* codegen/random.c: IR_RAND, Philox-4x32 per element (Triton's streams: the
 * seed's halves as the key, the offset as counter word 0), with the
 * uniform, normal (Box-Muller) and raw-integer outputs of ir.h. Sema usually
 * expands tl.rand into plain arithmetic; this covers IR that keeps the op. */
#include "codegen/cg.h"

#define CG_PHILOX_A 0xD2511F53u
#define CG_PHILOX_B 0xCD9E8D57u
#define CG_KEY_A    0x9E3779B9u
#define CG_KEY_B    0xBB67AE85u

static LLVMValueRef u32c(Cg *cg, uint32_t v)
{
    return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), v, 0);
}

static LLVMValueRef mulhi(Cg *cg, uint32_t a, LLVMValueRef b)
{
    return cg_binop(cg, IR_UMULHI, 0, DT_U32, u32c(cg, a), b);
}

static void philox(Cg *cg, LLVMValueRef seed64, LLVMValueRef off, int rounds, LLVMValueRef c[4])
{
    LLVMBuilderRef B = cg->b;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMValueRef k0 = LLVMBuildTrunc(B, seed64, i32, "");
    LLVMValueRef k1 = LLVMBuildTrunc(B, LLVMBuildLShr(B, seed64, cg_i64(cg, 32), ""), i32, "");
    c[0] = off;
    c[1] = c[2] = c[3] = u32c(cg, 0);
    for (int r = 0; r < rounds; r++) {
        LLVMValueRef p0 = c[0], p2 = c[2];
        c[0] = LLVMBuildXor(B, LLVMBuildXor(B, mulhi(cg, CG_PHILOX_B, p2), c[1], ""), k0, "");
        c[2] = LLVMBuildXor(B, LLVMBuildXor(B, mulhi(cg, CG_PHILOX_A, p0), c[3], ""), k1, "");
        c[1] = LLVMBuildMul(B, u32c(cg, CG_PHILOX_B), p2, "");
        c[3] = LLVMBuildMul(B, u32c(cg, CG_PHILOX_A), p0, "");
        k0 = LLVMBuildAdd(B, k0, u32c(cg, CG_KEY_A), "");
        k1 = LLVMBuildAdd(B, k1, u32c(cg, CG_KEY_B), "");
    }
}

/* uint32 -> [0, 1): as int32, negatives folded to -x - 1, times 2^-31. */
static LLVMValueRef uniform(Cg *cg, LLVMValueRef u)
{
    LLVMBuilderRef B = cg->b;
    LLVMValueRef neg = LLVMBuildICmp(B, LLVMIntSLT, u, u32c(cg, 0), "");
    LLVMValueRef x = LLVMBuildSelect(B, neg, LLVMBuildNot(B, u, ""), u, "");
    LLVMTypeRef f = LLVMFloatTypeInContext(cg->ctx);
    return LLVMBuildFMul(B, LLVMBuildSIToFP(B, x, f, ""), LLVMConstReal(f, 4.6566127342e-10), "");
}

static LLVMValueRef normal(Cg *cg, LLVMValueRef a, LLVMValueRef b)
{
    LLVMBuilderRef B = cg->b;
    LLVMTypeRef f = LLVMFloatTypeInContext(cg->ctx);
    LLVMValueRef u1 = uniform(cg, a);
    LLVMValueRef lo = LLVMConstReal(f, 1.0e-7);
    LLVMValueRef args[2] = {u1, lo};
    u1 = cg_intrinsic(cg, "llvm.maxnum", &f, 1, args, 2);
    LLVMValueRef th = LLVMBuildFMul(B, uniform(cg, b), LLVMConstReal(f, 6.283185307179586), "");
    cg->uses_libdevice = true;
    LLVMValueRef lg = cg_call_fn(cg, "__nv_logf", f, &f, 1, &u1, 1, false);
    LLVMValueRef r = LLVMBuildFMul(B, LLVMConstReal(f, -2.0), lg, "");
    r = cg_call_fn(cg, "__nv_sqrtf", f, &f, 1, &r, 1, false);
    LLVMValueRef c = cg_call_fn(cg, "__nv_cosf", f, &f, 1, &th, 1, false);
    return LLVMBuildFMul(B, r, c, "");
}

bool cg_emit_rand(Cg *cg, const IrOp *op)
{
    if (op->kind != IR_RAND)
        return false;
    const IrValue *seed = op->operands[0], *offs = op->operands[1];
    if (dtype_bits(offs->type.dt) > 32 || !dtype_is_int(seed->type.dt)) {
        cg_error(cg, op->span, "rand needs an integer seed and offsets of at most 32 bits");
        return true;
    }
    LLVMValueRef s64 = cg_convert(cg, cg_get(cg, seed).el[0], seed->type.dt, DT_I64);
    CgVal o = cg_get(cg, offs);
    int rounds = op->ival > 0 ? (int)op->ival : 10;
    CgVal r[4];
    for (int k = 0; k < op->nres && k < 4; k++)
        r[k] = cg_val_new(cg, o.n);
    for (int s = 0; s < o.n; s++) {
        LLVMValueRef c[4];
        LLVMValueRef off = cg_convert(cg, o.el[s], offs->type.dt, DT_U32);
        philox(cg, s64, off, rounds, c);
        DType rd = op->results[0]->type.dt;
        if (op->sub == RAND_UNIFORM)
            r[0].el[s] = cg_convert(cg, uniform(cg, c[0]), DT_F32, rd);
        else if (op->sub == RAND_NORMAL)
            r[0].el[s] = cg_convert(cg, normal(cg, c[0], c[1]), DT_F32, rd);
        else
            for (int k = 0; k < op->nres && k < 4; k++)
                r[k].el[s] = cg_convert(cg, c[k], DT_U32, op->results[k]->type.dt);
    }
    for (int k = 0; k < op->nres && k < 4; k++)
        cg_set(cg, op->results[k], r[k]);
    return true;
}
