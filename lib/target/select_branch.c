/* select_branch.c: selects whose arm is an expensive computation of its own
 * become branches, after LLVM's pipeline and before the NVPTX backend.
 *
 * libdevice writes some functions branch-free: __nv_tanhf computes both its
 * polynomial (small |x|) and its exponential form (ex2, then a reciprocal:
 * two MUFU instructions) and selects one. Over a tile every element pays
 * for both, though a softcapped logit almost always takes the polynomial.
 * Newer LLVMs turn such a select back into a branch in the backend; LLVM 19
 * keeps it. So here: where one arm of a select is computed by a chain of
 * pure instructions that nothing else reads and that holds MUFU operations
 * (approximate ex2, lg2, rcp, sqrt, sin, cos, tanh or division, as
 * intrinsics or as inline asm), the chains move into the arms of a branch
 * and a phi takes the select's place. A warp then runs the arm its lanes
 * take, or both one after the other where they differ; there the branch
 * costs (the elements' MUFU operations, parted into blocks of their own,
 * no longer hide each other's latency: Liger's DyT, whose lanes split on
 * most inputs, went from 1.16 to 0.97 of Triton on an H200, while the
 * softcapped cross-entropies went from 0.84 to 1.03 and 0.83 to 0.94).
 * Triton's LLVM branches the same way. One vote for all of a block's
 * arms, with what they need hoisted above the first, kept DyT at 1.07 but
 * took a chunked cross-entropy (33 elements a thread, 32 warps) to 0.18:
 * the hoisted values stayed live. */
#include "target/target.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_CHAIN = 96 };

typedef struct Chain {
    LLVMValueRef ins[MAX_CHAIN];
    int n;
    int mufu; /* MUFU operations among them */
} Chain;

static bool in_chain(const Chain *c, LLVMValueRef v)
{
    for (int i = 0; i < c->n; i++)
        if (c->ins[i] == v)
            return true;
    return false;
}

static bool mufu_name(const char *s, size_t len)
{
    static const char *const ops[] = {"ex2", "lg2", "rcp", "sqrt", "sin", "cos", "tanh", "div"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        size_t n = strlen(ops[i]);
        for (size_t j = 0; j + n <= len; j++)
            if (memcmp(s + j, ops[i], n) == 0)
                return true;
    }
    return false;
}

/* Whether call instruction v has no effect but its result; *mufu: it runs
 * on the MUFU unit (see the file's comment). */
static bool pure_call(LLVMValueRef v, bool *mufu)
{
    LLVMValueRef callee = LLVMGetCalledValue(v);
    size_t len = 0;
    if (callee && LLVMIsAInlineAsm(callee)) {
        if (LLVMGetInlineAsmHasSideEffects(callee))
            return false;
        const char *text = LLVMGetInlineAsmAsmString(callee, &len);
        const char *cons = LLVMGetInlineAsmConstraintString(callee, &len);
        if (!text || !cons || strstr(cons, "memory"))
            return false;
        *mufu = mufu_name(text, strlen(text));
        return true;
    }
    if (!callee || !LLVMIsAFunction(callee) || !LLVMGetIntrinsicID(callee))
        return false;
    const char *name = LLVMGetValueName2(callee, &len);
    /* the math intrinsics: no memory, no convergence (not a shuffle, vote,
     * barrier or read of a special register) */
    static const char *const ok[] = {
        "llvm.nvvm.ex2.",     "llvm.nvvm.lg2.", "llvm.nvvm.rcp.", "llvm.nvvm.sqrt.",
        "llvm.nvvm.rsqrt",    "llvm.nvvm.sin.", "llvm.nvvm.cos.", "llvm.nvvm.fma.",
        "llvm.nvvm.fabs",     "llvm.nvvm.div.", "llvm.nvvm.fmin", "llvm.nvvm.fmax",
        "llvm.nvvm.saturate", "llvm.fabs.",     "llvm.copysign.", "llvm.fma.",
        "llvm.fmuladd.",      "llvm.minnum.",   "llvm.maxnum.",   "llvm.sqrt.",
        "llvm.floor.",        "llvm.ceil.",     "llvm.trunc.",    "llvm.rint."};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (strncmp(name, ok[i], strlen(ok[i])) == 0) {
            *mufu = strncmp(name, "llvm.nvvm.", 10) == 0 && mufu_name(name + 10, len - 10) &&
                strncmp(name, "llvm.nvvm.fma.", 14) != 0;
            return true;
        }
    return false;
}

/* Whether v may move into a branch arm: an instruction without effects,
 * not a phi; *mufu as for pure_call. */
static bool movable(LLVMValueRef v, bool *mufu)
{
    *mufu = false;
    switch (LLVMGetInstructionOpcode(v)) {
    case LLVMFAdd:
    case LLVMFSub:
    case LLVMFMul:
    case LLVMFNeg:
    case LLVMAdd:
    case LLVMSub:
    case LLVMMul:
    case LLVMAnd:
    case LLVMOr:
    case LLVMXor:
    case LLVMShl:
    case LLVMLShr:
    case LLVMAShr:
    case LLVMICmp:
    case LLVMFCmp:
    case LLVMSelect:
    case LLVMTrunc:
    case LLVMZExt:
    case LLVMSExt:
    case LLVMFPToUI:
    case LLVMFPToSI:
    case LLVMUIToFP:
    case LLVMSIToFP:
    case LLVMFPTrunc:
    case LLVMFPExt:
    case LLVMBitCast:
    case LLVMExtractElement:
    case LLVMInsertElement: return true;
    case LLVMFDiv: *mufu = true; return true;
    case LLVMCall: return pure_call(v, mufu);
    default: return false;
    }
}

/* Whether every user of v is in c or is sel. */
static bool only_feeds(LLVMValueRef v, const Chain *c, LLVMValueRef sel)
{
    for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (user != sel && !in_chain(c, user))
            return false;
    }
    return true;
}

/* The instructions of sel's block that compute arm (and nothing else):
 * arm itself, then its operands in the block, as long as each only feeds
 * the chain. Empty when arm is no such instruction. */
static void chain_of(LLVMValueRef sel, LLVMValueRef arm, Chain *c)
{
    c->n = 0;
    c->mufu = 0;
    LLVMBasicBlockRef b = LLVMGetInstructionParent(sel);
    bool mufu;
    if (!LLVMIsAInstruction(arm) || LLVMGetInstructionParent(arm) != b || !movable(arm, &mufu) ||
        !only_feeds(arm, c, sel))
        return;
    c->ins[c->n++] = arm;
    c->mufu = mufu;
    for (int i = 0; i < c->n; i++) {
        int nops = LLVMGetNumOperands(c->ins[i]);
        for (int k = 0; k < nops; k++) {
            LLVMValueRef o = LLVMGetOperand(c->ins[i], (unsigned)k);
            if (!LLVMIsAInstruction(o) || LLVMGetInstructionParent(o) != b || in_chain(c, o) ||
                c->n >= MAX_CHAIN || !movable(o, &mufu) || !only_feeds(o, c, sel))
                continue;
            c->ins[c->n++] = o;
            c->mufu += mufu;
        }
    }
}

/* Moves c's instructions, in their order in the block, to the end of the
 * builder's block. */
static void move_chain(LLVMBuilderRef bld, LLVMBasicBlockRef from, const Chain *c)
{
    LLVMValueRef next;
    for (LLVMValueRef i = LLVMGetFirstInstruction(from); i; i = next) {
        next = LLVMGetNextInstruction(i);
        if (in_chain(c, i)) {
            LLVMInstructionRemoveFromParent(i);
            LLVMInsertIntoBuilder(bld, i);
        }
    }
}

/* B's phis that came from B itself (a loop of one block) come from j now:
 * each is rebuilt, since the C API cannot rename an incoming block (and
 * replacing B's uses renames it in the phis of its other successors only). */
static void self_loop_phis(LLVMBuilderRef bld, LLVMBasicBlockRef b, LLVMBasicBlockRef j)
{
    LLVMValueRef next;
    for (LLVMValueRef p = LLVMGetFirstInstruction(b); p && LLVMIsAPHINode(p); p = next) {
        next = LLVMGetNextInstruction(p);
        unsigned n = LLVMCountIncoming(p);
        bool self = false;
        for (unsigned i = 0; i < n; i++)
            self |= LLVMGetIncomingBlock(p, i) == b;
        if (!self)
            continue;
        LLVMPositionBuilderBefore(bld, p);
        LLVMValueRef q = LLVMBuildPhi(bld, LLVMTypeOf(p), "");
        for (unsigned i = 0; i < n; i++) {
            LLVMValueRef v = LLVMGetIncomingValue(p, i);
            LLVMBasicBlockRef from = LLVMGetIncomingBlock(p, i);
            if (from == b)
                from = j;
            LLVMAddIncoming(q, &v, &from, 1);
        }
        LLVMReplaceAllUsesWith(p, q);
        LLVMInstructionEraseFromParent(p);
    }
}

/* sel's block B keeps its instructions before sel but the chains' and
 * ends in a branch on the condition to T and F, which compute the arms
 * and go on to J, which takes sel (a phi in its place) and the rest of B.
 * LLVM's C API cannot set a phi's incoming block, but replacing B's uses
 * by J renames B in its successors' phis (and in its predecessors'
 * branches, which are put back) before J takes B's terminator; B's own
 * phis are rebuilt where B loops to itself. False, with nothing changed,
 * where B has more incoming edges than can be put back. */
static bool split(LLVMContextRef ctx, LLVMBuilderRef bld, LLVMValueRef sel, const Chain *t,
                  const Chain *f)
{
    LLVMBasicBlockRef b = LLVMGetInstructionParent(sel), after = LLVMGetNextBasicBlock(b);
    LLVMValueRef fn = LLVMGetBasicBlockParent(b);
    LLVMValueRef bv = LLVMBasicBlockAsValue(b);
    enum { MAX_PRED = 64 };
    LLVMValueRef term[MAX_PRED];
    unsigned slot[MAX_PRED];
    int np = 0;
    for (LLVMUseRef u = LLVMGetFirstUse(bv); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef x = LLVMGetUser(u);
        for (unsigned i = 0; LLVMIsATerminatorInst(x) && i < LLVMGetNumSuccessors(x); i++) {
            bool seen = LLVMGetSuccessor(x, i) != b;
            for (int k = 0; k < np; k++)
                seen |= term[k] == x && slot[k] == i;
            if (seen)
                continue;
            if (np == MAX_PRED) /* edges it could not put back: left as it is */
                return false;
            term[np] = x;
            slot[np++] = i;
        }
    }
    LLVMBasicBlockRef j = after ? LLVMInsertBasicBlockInContext(ctx, after, "")
                                : LLVMAppendBasicBlockInContext(ctx, fn, "");
    LLVMReplaceAllUsesWith(bv, LLVMBasicBlockAsValue(j));
    for (int k = 0; k < np; k++)
        LLVMSetSuccessor(term[k], slot[k], b);
    self_loop_phis(bld, b, j);
    LLVMPositionBuilderAtEnd(bld, j);
    LLVMValueRef next;
    for (LLVMValueRef i = sel; i; i = next) {
        next = LLVMGetNextInstruction(i);
        LLVMInstructionRemoveFromParent(i);
        LLVMInsertIntoBuilder(bld, i);
    }
    LLVMBasicBlockRef tb = LLVMInsertBasicBlockInContext(ctx, j, "");
    LLVMBasicBlockRef fb = LLVMInsertBasicBlockInContext(ctx, j, "");
    LLVMPositionBuilderAtEnd(bld, tb);
    move_chain(bld, b, t);
    LLVMBuildBr(bld, j);
    LLVMPositionBuilderAtEnd(bld, fb);
    move_chain(bld, b, f);
    LLVMBuildBr(bld, j);
    LLVMPositionBuilderAtEnd(bld, b);
    LLVMBuildCondBr(bld, LLVMGetOperand(sel, 0), tb, fb);
    LLVMPositionBuilderBefore(bld, sel);
    LLVMValueRef phi = LLVMBuildPhi(bld, LLVMTypeOf(sel), "");
    LLVMValueRef vals[2] = {LLVMGetOperand(sel, 1), LLVMGetOperand(sel, 2)};
    LLVMBasicBlockRef from[2] = {tb, fb};
    LLVMAddIncoming(phi, vals, from, 2);
    LLVMReplaceAllUsesWith(sel, phi);
    LLVMInstructionEraseFromParent(sel);
    return true;
}

/* Whether sel is a scalar select whose arms qualify (see the file's
 * comment); t and f get their chains. Both arms must be computations of
 * their own, a choice between two formulas, and one of them must take two
 * MUFU operations or more: `where(mask, exp(x), 0)` keeps its select, since
 * nearly every lane takes the exponential and a branch around each
 * element's would part the elements' MUFU operations, whose latencies hide
 * behind each other in one block; so does `where(x > 0, x / p, x * p)`,
 * whose lanes split both ways on most inputs, for one reciprocal. */
static bool worth_a_branch(LLVMValueRef sel, Chain *t, Chain *f)
{
    LLVMValueRef cond = LLVMGetOperand(sel, 0);
    if (LLVMGetTypeKind(LLVMTypeOf(cond)) != LLVMIntegerTypeKind)
        return false;
    chain_of(sel, LLVMGetOperand(sel, 1), t);
    chain_of(sel, LLVMGetOperand(sel, 2), f);
    return t->n > 0 && f->n > 0 && (t->mufu >= 2 || f->mufu >= 2) && !in_chain(t, cond) &&
        !in_chain(f, cond);
}

int nvptx_select_branches(LLVMModuleRef mod, LLVMValueRef fn)
{
    LLVMContextRef ctx = LLVMGetModuleContext(mod);
    int nsel = 0, cap = 0, done = 0;
    LLVMValueRef *sels = NULL;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b))
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
            if (LLVMGetInstructionOpcode(i) != LLVMSelect)
                continue;
            if (nsel == cap) {
                cap = cap ? 2 * cap : 64;
                LLVMValueRef *grown = realloc(sels, sizeof *sels * (size_t)cap);
                if (!grown) {
                    free(sels);
                    return -1;
                }
                sels = grown;
            }
            sels[nsel++] = i;
        }
    LLVMBuilderRef bld = LLVMCreateBuilderInContext(ctx);
    Chain *t = malloc(sizeof *t), *f = malloc(sizeof *f);
    /* the last first: a select in a later one's arm moves with that arm
     * and is then seen in the block it went to */
    for (int s = nsel - 1; t && f && s >= 0; s--)
        if (worth_a_branch(sels[s], t, f) && split(ctx, bld, sels[s], t, f))
            done++;
    bool oom = !t || !f;
    free(t);
    free(f);
    free(sels);
    LLVMDisposeBuilder(bld);
    return oom ? -1 : done;
}
