/* copysign.c: llvm.copysign on scalars becomes bitwise operations, after
 * LLVM's pipeline and before the NVPTX backend.
 *
 * libdevice ends some odd functions (__nv_tanhf, __nv_erff) with
 * copysign(r, x). LLVM 19's NVPTX backend writes that as an abs and a
 * neg of r, a shift and a test of x's sign bit and a select: seven PTX
 * instructions and three SASS instructions for each element, on the path of
 * every tanh of a softcapped logit or a tanh-GELU. As bits it is
 * r ^ ((r ^ x) & sign), which ptxas makes one LOP3 (from
 * (r & ~sign) | (x & sign), with two masks, it made two), as Triton's newer
 * LLVM gets. Done after the pipeline, where only the backend runs: no
 * later fold can turn the bits back into the intrinsic. */
#include "target/target.h"

#include <string.h>

/* The integer type of float type t's bits; NULL for a vector or a type
 * without a bitwise form here (x86's fp80, ppc's double-double). */
static LLVMTypeRef bits_of(LLVMContextRef ctx, LLVMTypeRef t)
{
    switch (LLVMGetTypeKind(t)) {
    case LLVMHalfTypeKind:
    case LLVMBFloatTypeKind: return LLVMInt16TypeInContext(ctx);
    case LLVMFloatTypeKind: return LLVMInt32TypeInContext(ctx);
    case LLVMDoubleTypeKind: return LLVMInt64TypeInContext(ctx);
    default: return NULL;
    }
}

/* Whether call instruction v calls llvm.copysign. */
static bool is_copysign(LLVMValueRef v)
{
    if (LLVMGetInstructionOpcode(v) != LLVMCall)
        return false;
    LLVMValueRef callee = LLVMGetCalledValue(v);
    size_t len = 0;
    if (!callee || !LLVMIsAFunction(callee))
        return false;
    const char *name = LLVMGetValueName2(callee, &len);
    return name && strncmp(name, "llvm.copysign.", 14) == 0;
}

/* Replaces copysign call v by its bitwise form; false where its type has
 * none (it then stays). */
static bool rewrite(LLVMContextRef ctx, LLVMBuilderRef bld, LLVMValueRef v)
{
    LLVMTypeRef ft = LLVMTypeOf(v), it = bits_of(ctx, ft);
    if (!it)
        return false;
    unsigned width = LLVMGetIntTypeWidth(it);
    unsigned long long sign = 1ULL << (width - 1);
    LLVMPositionBuilderBefore(bld, v);
    LLVMValueRef mag = LLVMBuildBitCast(bld, LLVMGetOperand(v, 0), it, "");
    LLVMValueRef sgn = LLVMBuildBitCast(bld, LLVMGetOperand(v, 1), it, "");
    LLVMValueRef diff = LLVMBuildXor(bld, mag, sgn, "");
    diff = LLVMBuildAnd(bld, diff, LLVMConstInt(it, sign, false), "");
    LLVMValueRef r = LLVMBuildBitCast(bld, LLVMBuildXor(bld, mag, diff, ""), ft, "");
    LLVMReplaceAllUsesWith(v, r);
    LLVMInstructionEraseFromParent(v);
    return true;
}

int nvptx_copysign_bits(LLVMModuleRef mod, LLVMValueRef fn)
{
    LLVMContextRef ctx = LLVMGetModuleContext(mod);
    LLVMBuilderRef bld = LLVMCreateBuilderInContext(ctx);
    if (!bld)
        return -1;
    int done = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b))
        for (LLVMValueRef i = LLVMGetFirstInstruction(b), next; i; i = next) {
            next = LLVMGetNextInstruction(i); /* i may go */
            if (is_copysign(i) && rewrite(ctx, bld, i))
                done++;
        }
    LLVMDisposeBuilder(bld);
    return done;
}
