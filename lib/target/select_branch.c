/* select_branch.c: the expensive arms of a block's selects computed only
 * where a lane of the warp takes one, after LLVM's pipeline and before the
 * NVPTX backend.
 *
 * libdevice writes some functions branch-free: __nv_tanhf computes both its
 * polynomial (small |x|) and its exponential form (ex2, then a reciprocal:
 * two MUFU instructions) and selects one. Over a tile every element pays
 * for both, though a softcapped logit almost always takes the polynomial.
 * Newer LLVMs turn such a select into a branch per element in the backend
 * (Triton's do); LLVM 19 keeps it. A branch per element has a cost of its
 * own where the lanes of a warp split (DyT's tanh(alpha * x)): both sides
 * run, one after the other, and the elements' MUFU operations, parted into
 * blocks of their own, no longer hide each other's latency.
 *
 * So here, per block: the selects between two formulas, one of which takes
 * two MUFU operations or more (as intrinsics or inline asm), form a group.
 * The expensive arms' own instructions (pure, read by nothing else) move
 * into one block, which runs when any lane of the warp needs any of them
 * (one vote), and each select reads its arm through a phi. A warp whose
 * lanes all take the cheap formulas skips the block; any other runs the
 * arms as before, together. */
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

/* Moves sel and everything after it in its block B into a new block J
 * after B, which B does not branch to yet; returns J. The C API cannot set
 * a phi's incoming block, but replacing B's uses by J renames B in its
 * successors' phis (and in its predecessors' branches, which are put back)
 * before J takes B's terminator; B's own phis are rebuilt where B loops to
 * itself. */
static LLVMBasicBlockRef split_at(LLVMContextRef ctx, LLVMBuilderRef bld, LLVMValueRef sel)
{
    LLVMBasicBlockRef b = LLVMGetInstructionParent(sel), after = LLVMGetNextBasicBlock(b);
    LLVMValueRef fn = LLVMGetBasicBlockParent(b);
    LLVMBasicBlockRef j = after ? LLVMInsertBasicBlockInContext(ctx, after, "")
                                : LLVMAppendBasicBlockInContext(ctx, fn, "");
    LLVMValueRef bv = LLVMBasicBlockAsValue(b);
    enum { MAX_PRED = 64 };
    LLVMValueRef term[MAX_PRED];
    unsigned slot[MAX_PRED];
    int np = 0;
    for (LLVMUseRef u = LLVMGetFirstUse(bv); u && np < MAX_PRED; u = LLVMGetNextUse(u)) {
        LLVMValueRef x = LLVMGetUser(u);
        for (unsigned i = 0; LLVMIsATerminatorInst(x) && i < LLVMGetNumSuccessors(x); i++)
            if (LLVMGetSuccessor(x, i) == b && np < MAX_PRED) {
                bool seen = false;
                for (int k = 0; k < np; k++)
                    seen |= term[k] == x && slot[k] == i;
                if (!seen) {
                    term[np] = x;
                    slot[np++] = i;
                }
            }
    }
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
    return j;
}

/* ---- a block's group ------------------------------------------------------------------- */

enum { MAX_GROUP = 64, MAX_HOIST = 4096 };

/* The selects of one block whose expensive arms move (see the file's
 * comment), and the instructions after the first that their conditions and
 * arms need, hoisted above it. */
typedef struct Group {
    LLVMBasicBlockRef b;
    LLVMValueRef sel[MAX_GROUP];
    Chain arm[MAX_GROUP]; /* the expensive arm's chain */
    int which[MAX_GROUP]; /* its operand: 1 (taken where the condition holds) or 2 */
    int n;
    LLVMValueRef hoist[MAX_HOIST];
    int nhoist;
    LLVMValueRef *order; /* b's instructions in order, for after() */
    int norder;
} Group;

/* Whether instruction v of g's block comes after `first`. */
static bool after(const Group *g, LLVMValueRef v, LLVMValueRef first)
{
    for (int i = 0; i < g->norder; i++) {
        if (g->order[i] == first)
            return true;
        if (g->order[i] == v)
            return false;
    }
    return false;
}

static bool listed(LLVMValueRef *xs, int n, LLVMValueRef v)
{
    for (int i = 0; i < n; i++)
        if (xs[i] == v)
            return true;
    return false;
}

/* Whether v is a group select or in an arm that moves. */
static bool grouped(const Group *g, LLVMValueRef v)
{
    for (int i = 0; i < g->n; i++)
        if (g->sel[i] == v || in_chain(&g->arm[i], v))
            return true;
    return false;
}

/* Adds to g's hoist list what v needs above `first` (v, when it is after
 * `first` in the block, then its operands); false when something cannot
 * move (memory, convergence, a group select or arm, a phi). */
static bool need(Group *g, LLVMValueRef v, LLVMValueRef first, int depth)
{
    bool mufu;
    if (!LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != g->b ||
        listed(g->hoist, g->nhoist, v) || !after(g, v, first))
        return true;
    if (depth > 64 || g->nhoist >= MAX_HOIST || grouped(g, v) || !movable(v, &mufu))
        return false;
    g->hoist[g->nhoist++] = v;
    int nops = LLVMGetNumOperands(v);
    for (int k = 0; k < nops; k++)
        if (!need(g, LLVMGetOperand(v, (unsigned)k), first, depth + 1))
            return false;
    return true;
}

/* Whether sel joins g: a choice between two formulas, one taking two MUFU
 * operations or more and the other fewer, whose condition and expensive
 * arm's operands can be had above the group's first select. A select
 * against a constant (`where(mask, exp(x), 0)`) or a lone reciprocal
 * (`where(x > 0, x / p, x * p)`) stays as it is. */
static bool join(Group *g, LLVMValueRef sel, Chain *t, Chain *f)
{
    LLVMValueRef cond = LLVMGetOperand(sel, 0);
    if (LLVMGetTypeKind(LLVMTypeOf(cond)) != LLVMIntegerTypeKind || g->n >= MAX_GROUP)
        return false;
    chain_of(sel, LLVMGetOperand(sel, 1), t);
    chain_of(sel, LLVMGetOperand(sel, 2), f);
    if (t->n == 0 || f->n == 0 || (t->mufu >= 2) == (f->mufu >= 2) || in_chain(t, cond) ||
        in_chain(f, cond))
        return false;
    const Chain *e = t->mufu >= 2 ? t : f;
    int mark = g->nhoist;
    LLVMValueRef first = g->n ? g->sel[0] : sel;
    bool ok = need(g, cond, first, 0);
    for (int i = 0; ok && i < e->n; i++) {
        int nops = LLVMGetNumOperands(e->ins[i]);
        for (int k = 0; ok && k < nops; k++) {
            LLVMValueRef o = LLVMGetOperand(e->ins[i], (unsigned)k);
            ok = in_chain(e, o) || need(g, o, first, 0);
        }
    }
    if (!ok) {
        g->nhoist = mark;
        return false;
    }
    g->sel[g->n] = sel;
    g->which[g->n] = e == t ? 1 : 2;
    g->arm[g->n++] = *e;
    return true;
}

static LLVMValueRef intrinsic(LLVMModuleRef mod, const char *name)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    return id ? LLVMGetIntrinsicDeclaration(mod, id, NULL, 0) : NULL;
}

/* g's rewrite: the hoisted instructions above the first select, a vote on
 * whether any lane needs any expensive arm, the arms' block T, and phis in
 * the rest J (0 where T did not run: no lane selects the arm then). */
static bool rewrite(LLVMModuleRef mod, LLVMBuilderRef bld, Group *g)
{
    LLVMContextRef ctx = LLVMGetModuleContext(mod);
    LLVMValueRef first = g->sel[0], mask_fn = intrinsic(mod, "llvm.nvvm.activemask"),
                 vote_fn = intrinsic(mod, "llvm.nvvm.vote.any.sync");
    if (!mask_fn || !vote_fn)
        return false;
    for (int i = 0; i < g->norder; i++) /* in their order in the block */
        if (listed(g->hoist, g->nhoist, g->order[i])) {
            LLVMInstructionRemoveFromParent(g->order[i]);
            LLVMPositionBuilderBefore(bld, first);
            LLVMInsertIntoBuilder(bld, g->order[i]);
        }
    LLVMPositionBuilderBefore(bld, first);
    LLVMValueRef any = NULL;
    for (int i = 0; i < g->n; i++) {
        LLVMValueRef c = LLVMGetOperand(g->sel[i], 0);
        if (g->which[i] == 2)
            c = LLVMBuildNot(bld, c, "");
        any = any ? LLVMBuildOr(bld, any, c, "") : c;
    }
    LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), i1 = LLVMInt1TypeInContext(ctx);
    LLVMValueRef mask =
        LLVMBuildCall2(bld, LLVMFunctionType(i32, NULL, 0, false), mask_fn, NULL, 0, "");
    LLVMTypeRef vt[2] = {i32, i1};
    LLVMValueRef va[2] = {mask, any};
    LLVMValueRef vote = LLVMBuildCall2(bld, LLVMFunctionType(i1, vt, 2, false), vote_fn, va, 2, "");
    LLVMBasicBlockRef b = g->b, j = split_at(ctx, bld, first);
    LLVMBasicBlockRef t = LLVMInsertBasicBlockInContext(ctx, j, "");
    LLVMPositionBuilderAtEnd(bld, b);
    LLVMBuildCondBr(bld, vote, t, j);
    LLVMPositionBuilderAtEnd(bld, t);
    for (int i = 0; i < g->n; i++) {
        move_chain(bld, b, &g->arm[i]);
        move_chain(bld, j, &g->arm[i]);
    }
    LLVMBuildBr(bld, j);
    for (int i = 0; i < g->n; i++) {
        LLVMValueRef arm = LLVMGetOperand(g->sel[i], (unsigned)g->which[i]);
        LLVMPositionBuilderBefore(bld, first);
        LLVMValueRef phi = LLVMBuildPhi(bld, LLVMTypeOf(arm), "");
        LLVMValueRef vals[2] = {arm, LLVMConstNull(LLVMTypeOf(arm))};
        LLVMBasicBlockRef from[2] = {t, b};
        LLVMAddIncoming(phi, vals, from, 2);
        LLVMSetOperand(g->sel[i], (unsigned)g->which[i], phi);
    }
    return true;
}

/* Builds the group of block b (g->order holds its instructions): its
 * selects in order, as long as each can join. */
static void gather(Group *g, LLVMBasicBlockRef b, Chain *t, Chain *f)
{
    g->b = b;
    g->n = g->nhoist = g->norder = 0;
    for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
        g->order[g->norder++] = i;
    for (int k = 0; k < g->norder; k++)
        if (LLVMGetInstructionOpcode(g->order[k]) == LLVMSelect && !grouped(g, g->order[k]))
            join(g, g->order[k], t, f);
}

int nvptx_select_branches(LLVMModuleRef mod, LLVMValueRef fn)
{
    int done = 0, cap = 0;
    Group *g = malloc(sizeof *g);
    Chain *t = malloc(sizeof *t), *f = malloc(sizeof *f);
    LLVMBuilderRef bld = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
    bool ok = g && t && f;
    if (ok)
        g->order = NULL;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); ok && b; b = LLVMGetNextBasicBlock(b)) {
        int n = 0;
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
            n++;
        if (n > cap) {
            LLVMValueRef *grown = realloc(g->order, sizeof *grown * (size_t)n);
            if (!grown) {
                ok = false;
                break;
            }
            g->order = grown;
            cap = n;
        }
        gather(g, b, t, f);
        if (g->n && rewrite(mod, bld, g)) /* b's rest went to the next block, seen next */
            done += g->n;
    }
    if (g)
        free(g->order);
    free(g);
    free(t);
    free(f);
    LLVMDisposeBuilder(bld);
    return ok ? done : -1;
}
