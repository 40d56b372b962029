/* sink_unpack.c: what is computed from the words of a masked load, one
 * value at a time (the bits taken apart, a conversion, arithmetic or a
 * comparison with a constant), moves down into the block that dominates
 * all its uses, after LLVM's pipeline and before the NVPTX backend.
 *
 * A thread's tile of 16-bit values arrives packed two to a 32-bit word,
 * and code generation takes every word apart right after the load. Where
 * each element's computation is a branch of its own (libdevice's tanh, or
 * a select made a branch by select_branch.c), the backend computes all the
 * halves where they were written, before the first branch, and all of them
 * stay live across every later branch: a softcapped cross-entropy over 64
 * bf16 logits a thread held 64 halves where 32 words would do, and
 * spilled 354 stores against the 156 of Triton's build (120 now). Moved
 * down, the words stay packed until each element's turn. A computation on
 * one value never holds more registers for moving later: its operand
 * lives longer, its result shorter. Nothing moves into a loop it was not
 * in (it would be repeated), nor next to a phi. */
#include "target/target.h"

#include <stdlib.h>

typedef struct BlockKey {
    LLVMBasicBlockRef b;
    int i;
} BlockKey;

/* The blocks of a function, numbered in its order (0 is the entry), with
 * their edges and dominators. */
typedef struct Cfg {
    int n;
    LLVMBasicBlockRef *bb;
    BlockKey *keys;         /* sorted by block, for block_index */
    int *succ_start, *succ; /* block i's successors: succ[succ_start[i] .. succ_start[i + 1]) */
    int *pred_start, *pred;
    int *rpo, n_rpo, *num; /* reverse post-order of the reached blocks; each one's place (-1) */
    int *idom;             /* immediate dominator, the entry's itself; -1 unreached */
    int *mark, stamp;      /* visit marks of walks */
    int *stack;            /* 2n + 2 ints for walks */
} Cfg;

static int key_cmp(const void *a, const void *b)
{
    const BlockKey *x = a, *y = b;
    return x->b < y->b ? -1 : x->b > y->b;
}

static int block_index(const Cfg *g, LLVMBasicBlockRef b)
{
    BlockKey k = {b, 0}, *f = bsearch(&k, g->keys, (size_t)g->n, sizeof k, key_cmp);
    return f ? f->i : -1;
}

static int *ints(int n) { return calloc((size_t)n + 1, sizeof(int)); }

static void cfg_free(Cfg *g)
{
    void *all[] = {g->bb,  g->keys, g->succ_start, g->succ, g->pred_start, g->pred,
                   g->rpo, g->num,  g->idom,       g->mark, g->stack};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]);
}

/* Fills the successor and predecessor lists. */
static bool edges(Cfg *g)
{
    int ne = 0;
    for (int i = 0; i < g->n; i++) {
        LLVMValueRef t = LLVMGetBasicBlockTerminator(g->bb[i]);
        ne += t ? (int)LLVMGetNumSuccessors(t) : 0;
    }
    int k = 0, *fill = ints(g->n);
    if (!fill || !(g->succ = ints(ne)) || !(g->pred = ints(ne))) {
        free(fill);
        return false;
    }
    for (int i = 0; i < g->n; i++) {
        g->succ_start[i] = k;
        LLVMValueRef t = LLVMGetBasicBlockTerminator(g->bb[i]);
        for (unsigned s = 0, ns = t ? LLVMGetNumSuccessors(t) : 0; s < ns; s++) {
            int j = block_index(g, LLVMGetSuccessor(t, s));
            if (j >= 0) {
                g->succ[k++] = j;
                g->pred_start[j + 1]++;
            }
        }
    }
    g->succ_start[g->n] = k;
    for (int i = 0; i < g->n; i++)
        g->pred_start[i + 1] += g->pred_start[i];
    for (int i = 0; i < g->n; i++)
        for (int e = g->succ_start[i]; e < g->succ_start[i + 1]; e++)
            g->pred[g->pred_start[g->succ[e]] + fill[g->succ[e]]++] = i;
    free(fill);
    return true;
}

/* Reverse post-order from the entry: a depth-first walk on a stack of
 * (block, next edge) pairs. */
static void order(Cfg *g)
{
    int top = 0, left = g->n, stamp = ++g->stamp;
    int *post = g->rpo; /* filled from the end */
    g->mark[0] = stamp;
    g->stack[top++] = 0;
    g->stack[top++] = g->succ_start[0];
    while (top) {
        int b = g->stack[top - 2], e = g->stack[top - 1];
        if (e == g->succ_start[b + 1]) {
            top -= 2;
            post[--left] = b;
            continue;
        }
        g->stack[top - 1]++;
        int s = g->succ[e];
        if (g->mark[s] != stamp) {
            g->mark[s] = stamp;
            g->stack[top++] = s;
            g->stack[top++] = g->succ_start[s];
        }
    }
    g->n_rpo = g->n - left;
    for (int i = 0; i < g->n_rpo; i++)
        g->rpo[i] = post[left + i];
    for (int i = 0; i < g->n; i++)
        g->num[i] = -1;
    for (int i = 0; i < g->n_rpo; i++)
        g->num[g->rpo[i]] = i;
}

/* The nearest block dominating both a and b. */
static int intersect(const Cfg *g, int a, int b)
{
    while (a != b) {
        while (g->num[a] > g->num[b])
            a = g->idom[a];
        while (g->num[b] > g->num[a])
            b = g->idom[b];
    }
    return a;
}

/* Immediate dominators, by iterating over the reverse post-order until
 * nothing changes (Cooper, Harvey and Kennedy's algorithm). */
static void dominators(Cfg *g)
{
    for (int i = 0; i < g->n; i++)
        g->idom[i] = -1;
    g->idom[0] = 0;
    for (bool changed = true; changed;) {
        changed = false;
        for (int r = 1; r < g->n_rpo; r++) {
            int b = g->rpo[r], d = -1;
            for (int e = g->pred_start[b]; e < g->pred_start[b + 1]; e++) {
                int p = g->pred[e];
                if (g->idom[p] >= 0)
                    d = d < 0 ? p : intersect(g, d, p);
            }
            if (d != g->idom[b]) {
                g->idom[b] = d;
                changed = true;
            }
        }
    }
}

static bool cfg_build(Cfg *g, LLVMValueRef fn)
{
    int n = g->n = (int)LLVMCountBasicBlocks(fn);
    g->bb = calloc((size_t)n + 1, sizeof *g->bb);
    g->keys = calloc((size_t)n + 1, sizeof *g->keys);
    if (!g->bb || !g->keys || !(g->succ_start = ints(n)) || !(g->pred_start = ints(n)) ||
        !(g->rpo = ints(n)) || !(g->num = ints(n)) || !(g->idom = ints(n)) ||
        !(g->mark = ints(n)) || !(g->stack = ints(2 * n + 2)))
        return false;
    LLVMGetBasicBlocks(fn, g->bb);
    for (int i = 0; i < n; i++)
        g->keys[i] = (BlockKey){g->bb[i], i};
    qsort(g->keys, (size_t)n, sizeof *g->keys, key_cmp);
    if (!edges(g))
        return false;
    order(g);
    dominators(g);
    return true;
}

/* Whether moving a value from block a down into block b keeps it out of
 * any loop it was not in: every path from b back to b passes through a. */
static bool same_loops(Cfg *g, int a, int b)
{
    int top = 0, stamp = ++g->stamp;
    g->stack[top++] = b;
    while (top) {
        int x = g->stack[--top];
        for (int e = g->succ_start[x]; e < g->succ_start[x + 1]; e++) {
            int s = g->succ[e];
            if (s == b)
                return false;
            if (s != a && g->mark[s] != stamp) {
                g->mark[s] = stamp;
                g->stack[top++] = s;
            }
        }
    }
    return true;
}

/* The one operand of i that is not a constant, where i is a computation
 * without side effects on one value (the rest constants); NULL otherwise. */
static LLVMValueRef one_value(LLVMValueRef i)
{
    if (!LLVMIsAInstruction(i))
        return NULL;
    LLVMOpcode op = LLVMGetInstructionOpcode(i);
    int n = LLVMGetNumOperands(i);
    if (op == LLVMCall) { /* inline asm such as div.full by a constant */
        LLVMValueRef callee = LLVMGetCalledValue(i);
        if (!callee || !LLVMIsAInlineAsm(callee) || LLVMGetInlineAsmHasSideEffects(callee))
            return NULL;
        n--; /* the callee */
    } else {
        bool arith = op == LLVMFNeg || (op >= LLVMAdd && op <= LLVMXor) || op == LLVMICmp ||
            op == LLVMFCmp || op == LLVMExtractElement;
        bool cast = (op >= LLVMTrunc && op <= LLVMBitCast) || op == LLVMAddrSpaceCast;
        if (!arith && !cast)
            return NULL;
    }
    LLVMValueRef v = NULL;
    for (int k = 0; k < n; k++) {
        LLVMValueRef o = LLVMGetOperand(i, (unsigned)k);
        if (LLVMIsAConstant(o))
            continue;
        if (v)
            return NULL;
        v = o;
    }
    return v;
}

/* Whether i may move: a computation on one value that is, through others
 * such, the result of inline asm that stays where it is: a word of a
 * masked or cached load (as Triton's loads are), or of another asm. Not
 * what comes of a plain load: once all its users have gone, the backend
 * sinks the load after them, and its latency no longer overlaps what came
 * before. */
static bool sinkable(LLVMValueRef i)
{
    LLVMValueRef v = one_value(i);
    for (int depth = 0; v && depth < 16; depth++) {
        LLVMValueRef up = one_value(v);
        if (up) {
            v = up;
            continue;
        }
        if (LLVMIsAExtractValueInst(v))
            v = LLVMGetOperand(v, 0);
        LLVMValueRef callee = LLVMIsACallInst(v) ? LLVMGetCalledValue(v) : NULL;
        return callee && LLVMIsAInlineAsm(callee);
    }
    return false;
}

/* The block i should move to (the nearest dominating all its uses), -1
 * where it stays, and there the instruction to put it before in *at. */
static int target(Cfg *g, LLVMValueRef i, int home, LLVMValueRef *at)
{
    int t = -1;
    for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (!LLVMIsAInstruction(user) || LLVMIsAPHINode(user))
            return -1;
        int b = block_index(g, LLVMGetInstructionParent(user));
        if (b < 0 || g->num[b] < 0)
            return -1;
        t = t < 0 ? b : intersect(g, t, b);
    }
    if (t < 0 || t == home || !same_loops(g, home, t))
        return -1;
    *at = LLVMGetBasicBlockTerminator(g->bb[t]);
    for (LLVMValueRef k = LLVMGetFirstInstruction(g->bb[t]); k != *at;
         k = LLVMGetNextInstruction(k))
        for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u))
            if (LLVMGetUser(u) == k) {
                *at = k;
                return t;
            }
    return t;
}

int nvptx_sink_unpacks(LLVMModuleRef mod, LLVMValueRef fn)
{
    if (LLVMCountBasicBlocks(fn) < 2)
        return 0;
    Cfg g = {0};
    LLVMBuilderRef bld = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
    if (!bld || !cfg_build(&g, fn)) {
        if (bld)
            LLVMDisposeBuilder(bld);
        cfg_free(&g);
        return -1;
    }
    int done = 0;
    /* the last blocks first, and in each the last instruction first: a
     * value's users have gone where they go before it is looked at, so a
     * chain moves as a whole */
    for (int r = g.n_rpo - 1; r >= 0; r--)
        for (LLVMValueRef i = LLVMGetLastInstruction(g.bb[g.rpo[r]]), prev; i; i = prev) {
            prev = LLVMGetPreviousInstruction(i);
            LLVMValueRef at = NULL;
            if (!sinkable(i) || target(&g, i, g.rpo[r], &at) < 0)
                continue;
            LLVMInstructionRemoveFromParent(i);
            LLVMPositionBuilderBefore(bld, at);
            LLVMInsertIntoBuilder(bld, i);
            done++;
        }
    cfg_free(&g);
    LLVMDisposeBuilder(bld);
    return done;
}
