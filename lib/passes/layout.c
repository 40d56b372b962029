/* layout.c: layout assignment (pass_layout). Gives every block value a
 * layout and inserts convert_layout ops where a use needs another one.
 *
 * Anchors: loads and stores fix the blocked layout of their shape (vector
 * width from axis analysis, one layout per shape, as wide as the widest
 * access allows); a dot that tensor cores can run gets an mma accumulator
 * and dot-operand layouts for A and B. The mma layout then spreads forwards
 * through elementwise ops and loop-carried values, as long as their other
 * operands are cheap to recompute (index arithmetic, constants), so an
 * accumulator stays in registers across a K loop and is converted once, or
 * not at all when the store's pointers can be recomputed in its layout.
 * Ops that work on blocked layouts only (reductions, scans, shape ops, the
 * FMA dot, atomics) get their operands converted back; a gather and a
 * histogram read their src and input in any layout (through shared memory),
 * each with its index or mask beside it.
 *
 * Assumes verified IR without layouts; guarantees every block value has a
 * layout whose linear form exists for its shape, and that every op's
 * operands have the layouts the op needs (checked by ir_verify). */
#include "passes/layout_internal.h"

#include <string.h>


/* ---- the blocked layout of a shape ------------------------------------------------ */

static ShapeVec *shape_entry(LayoutPass *p, const Type *t)
{
    for (int i = 0; i < p->nshapes; i++)
        if (p->shapes[i].rank == t->rank &&
            memcmp(p->shapes[i].shape, t->shape, sizeof(int) * (size_t)t->rank) == 0)
            return &p->shapes[i];
    return NULL;
}

int lp_mem_bytes(DType dt) { return dt == DT_I1 ? 1 : dtype_bits(dt) / 8; }

static bool note_access(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    bool atomic = op->kind == IR_ATOMIC_RMW || op->kind == IR_ATOMIC_CAS;
    if ((op->kind != IR_LOAD && op->kind != IR_STORE && !atomic) || op->nops < 1)
        return true;
    const IrValue *ptr = op->operands[0];
    const IrValue *mask = op->kind == IR_LOAD ? (op->nops > 1 ? op->operands[1] : NULL)
        : op->kind == IR_ATOMIC_CAS           ? NULL
                                              : (op->nops > 2 ? op->operands[2] : NULL);
    if (ptr->type.rank == 0)
        return true;
    /* an atomic with no vector form takes one element an instruction: a
     * warp's instruction covers a whole line only when each thread holds
     * one element of each run of 32 (vectors of 4 spread it over four
     * lines, four times the transactions at the L2) */
    int vw = atomic && !ir_atomic_vectorizes(op, ptr->type.elem, ir_arch_sm(p->f->arch))
        ? 1
        : axis_vector_width(p->axis, ptr, mask, lp_mem_bytes(ptr->type.elem));
    vw = vw > 16 ? 16 : vw < 1 ? 1 : vw;
    ShapeVec *e = shape_entry(p, &ptr->type);
    if (!e) {
        if (p->nshapes >= MAX_SHAPES)
            return true;
        e = &p->shapes[p->nshapes++];
        memset(e, 0, sizeof *e);
        e->rank = ptr->type.rank;
        memcpy(e->shape, ptr->type.shape, sizeof e->shape);
        e->v = vw;
    } else if (vw > e->v) {
        e->v = vw;
    }
    if (op->kind == IR_LOAD && vw > e->load_v)
        e->load_v = vw;
    return true;
}

/* After the mma layouts have spread, before any blocked layout is made:
 * the stores whose values have no layout yet (they will take their shape's
 * blocked one) cap its vector (shape_vec). Atomics write too, and cap it
 * the same way (Triton's coalescing caps every op that writes at 16 bytes
 * a thread): a thread's run of two 16-byte vectors made each red/atom
 * instruction touch every other 16 bytes, twice the sectors the L2's
 * atomic units work through (attn_res backward's dW accumulation: 32
 * half-used sectors per warp instruction instead of 16 whole ones). */
static bool note_store(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    bool atomic = op->kind == IR_ATOMIC_RMW || op->kind == IR_ATOMIC_CAS;
    if ((op->kind != IR_STORE && !atomic) || op->nops < 2 || op->operands[1]->layout ||
        op->operands[0]->type.rank == 0)
        return true;
    if (lp_store_crosses(p, op))
        return true; /* it crosses to a layout of its own (store_blocked) */
    ShapeVec *e = shape_entry(p, &op->operands[0]->type);
    int cap = 16 / lp_mem_bytes(op->operands[0]->type.elem);
    if (e && (!e->store_cap || cap < e->store_cap))
        e->store_cap = cap;
    return true;
}

/* Whether v (a store's pointer or mask, or none) is remade in another
 * layout from at most a few values of at most one element a thread, which
 * are all that crosses threads (codegen's remat_staged: a MoE GEMM's
 * output rows, gathered through its sorted token ids). */
static bool few_small_leaves(const LayoutPass *p, const IrValue *v)
{
    const IrValue *leaves[4];
    int n = v ? pass_remat_leaves(v, leaves, 4) : 0;
    for (int i = 0; i < n; i++)
        if (type_numel(leaves[i]->type) > p->threads)
            return false;
    return n >= 0;
}

/* Whether plain store op, of a shape whose loads are wider than its own
 * 16-byte vector, crosses to a layout of one such vector a thread rather
 * than capping the shape's (note_store), as Triton's stores do. Where its
 * value is remade in any layout (zeros) and its pointer and mask from a
 * few small values, always: the crossing costs little (a MoE GEMM's zeros
 * for a filtered expert, capped at 8 bf16 a thread, had its int8 tiles of
 * the same shape read 8 bytes a thread, the kernel 25% slower than
 * Triton's). Where its pointer and mask are remade in any layout, when
 * either it runs in a loop (each iteration's loads gain; a group norm's
 * fp16 input read 16 bytes a thread rather than 8 ran 6% faster on an
 * H200) or the cap would leave a load 4 bytes a thread or less (a penalty
 * kernel's int8 mask read beside its fp32 logits: 17% faster). Elsewhere
 * the conversion's two barriers cost more than wider loads save once: a
 * layer norm backward that stores its partial sums under a lock lost 20%,
 * a fused add-norm 4%. */
bool lp_store_crosses(LayoutPass *p, const IrOp *op)
{
    if (op->kind != IR_STORE || op->nops < 2 || op->operands[0]->type.rank == 0)
        return false;
    const IrValue *ptr = op->operands[0], *mask = op->nops > 2 ? op->operands[2] : NULL;
    bool made = pass_can_remat(op->operands[1]);
    if (made ? !few_small_leaves(p, ptr) || !few_small_leaves(p, mask)
             : !pass_can_remat(ptr) || (mask && !pass_can_remat(mask)))
        return false;
    const ShapeVec *e = shape_entry(p, &ptr->type);
    int cap = 16 / lp_mem_bytes(ptr->type.elem);
    if (!e || e->load_v <= cap)
        return false;
    if (made)
        return true;
    for (const IrBlock *b = op->parent; b && b->parent; b = b->parent->parent)
        if (b->parent->kind == IR_FOR || b->parent->kind == IR_WHILE)
            return true;
    return e->load_v >= 4 * cap;
}

/* Elements per thread along the last dim: the widest access of the shape,
 * but no wider than leaves every thread some work (as Triton does), nor
 * than one 16-byte vector of the widest type a store that does not cross
 * (lp_store_crosses) writes: a thread's run of two vectors would make each
 * store instruction write every other 16 bytes (half-written sectors,
 * twice the write transactions), where loads of narrower elements, once,
 * lose less by moving 8 bytes each. 4 (or the dim) for shapes no load or
 * store touches. */
static int shape_vec(LayoutPass *p, const Type *t)
{
    int last = t->shape[t->rank - 1];
    int v = last < 4 ? (last > 0 ? last : 1) : 4;
    const ShapeVec *e = shape_entry(p, t);
    if (e && e->v <= last) {
        int64_t fill = type_numel(*t) / p->threads;
        v = e->store_cap && e->store_cap < e->v ? e->store_cap : e->v;
        while (v > 1 && v > fill)
            v /= 2;
    }
    return v;
}

const Layout *lp_slice_of(LayoutPass *p, const Layout *l, int dim)
{
    /* a blocked parent's rank less one; an mma layout's slices are rows */
    int rank = l->kind == LY_BLOCKED && l->rank > 1 ? l->rank - 1 : 1;
    Layout s = {.kind = LY_SLICE, .rank = rank, .parent = l, .dim = dim};
    const Layout *r = ir_layout_intern(p->f, &s);
    if (!r)
        p->failed = true;
    return r;
}

static Layout blocked_default(LayoutPass *p, const Type *t)
{
    return layout_blocked_default(t->rank, t->shape, shape_vec(p, t), p->threads);
}

/* A shape no load or store touches that a reshape makes from one whose
 * blocked layout is known takes that layout's image (layout_reshape.c) as
 * its own blocked layout: a block viewed as k dims of 2 to sort it, then
 * viewed back, stays in each thread's registers throughout, where in the
 * new shape's own layout every reshape crossed threads through shared
 * memory. In program order, so a chain of reshapes follows its first. */
static bool note_reshape(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    if (op->kind != IR_RESHAPE || p->nshapes >= MAX_SHAPES)
        return true;
    const Type *from = &op->operands[0]->type, *to = &op->results[0]->type;
    if (to->rank == 0 || from->rank == 0 || shape_entry(p, to))
        return true;
    const ShapeVec *src = shape_entry(p, from);
    Layout l = src && src->has_image ? src->image : blocked_default(p, from), img;
    if (!lp_reshape_image(p, &l, from, to, &img))
        return true;
    ShapeVec *e = &p->shapes[p->nshapes++];
    memset(e, 0, sizeof *e);
    e->rank = to->rank;
    memcpy(e->shape, to->shape, sizeof(int) * (size_t)to->rank);
    e->has_image = true;
    e->image = img;
    return true;
}

const Layout *lp_blocked_of(LayoutPass *p, const Type *t)
{
    const ShapeVec *e = shape_entry(p, t);
    Layout l = e && e->has_image ? e->image : blocked_default(p, t);
    const Layout *r = ir_layout_intern(p->f, &l);
    if (!r)
        p->failed = true;
    return r;
}

/* ---- which values can be recomputed in any layout ------------------------------------ */

static bool cheap_op(const IrOp *op)
{
    switch (op->kind) {
    case IR_ADD:
    case IR_SUB:
    case IR_MUL:
    case IR_AND:
    case IR_OR:
    case IR_XOR:
    case IR_SHL:
    case IR_SHR:
    case IR_MIN:
    case IR_MAX:
    case IR_NEG:
    case IR_NOT:
    case IR_CMP:
    case IR_SELECT:
    case IR_CAST:
    case IR_BITCAST:
    case IR_ADDPTR:
    case IR_PTR_TO_INT:
    case IR_INT_TO_PTR:
    case IR_UMULHI:
    case IR_FMA: return true;
    case IR_DIV:
    case IR_REM: return dtype_is_int(op->results[0]->type.dt);
    default: return false;
    }
}

static bool remat_ok(const IrValue *v, int *budget)
{
    if (v->type.rank == 0)
        return true;
    const IrOp *op = v->def;
    if (!op || --*budget < 0)
        return false;
    switch (op->kind) {
    case IR_CONST:
    case IR_ARANGE: return true;
    case IR_SPLAT:
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_BROADCAST:
    case IR_CONVERT_LAYOUT:
    case IR_HINT: /* a hint changes no value */ return remat_ok(op->operands[0], budget);
    default: break;
    }
    if (!cheap_op(op))
        return false;
    for (int i = 0; i < op->nops; i++)
        if (!remat_ok(op->operands[i], budget))
            return false;
    return true;
}

bool pass_can_remat(const IrValue *v)
{
    int budget = REMAT_BUDGET;
    return remat_ok(v, &budget);
}

static bool leaves_ok(const IrValue *v, const IrValue **leaves, int *n, int max, int *budget)
{
    if (pass_can_remat(v))
        return true;
    const IrOp *op = v->def;
    if (op && --*budget >= 0) {
        bool through = op->kind == IR_EXPAND_DIMS || op->kind == IR_RESHAPE ||
            op->kind == IR_BROADCAST || op->kind == IR_CONVERT_LAYOUT || op->kind == IR_HINT;
        if (through || cheap_op(op)) {
            for (int i = 0; i < (through ? 1 : op->nops); i++)
                if (!leaves_ok(op->operands[i], leaves, n, max, budget))
                    return false;
            return true;
        }
    }
    for (int i = 0; i < *n; i++)
        if (leaves[i] == v)
            return true;
    if (*n == max)
        return false;
    leaves[(*n)++] = v;
    return true;
}

int pass_remat_leaves(const IrValue *v, const IrValue **leaves, int max)
{
    int n = 0, budget = REMAT_BUDGET;
    return leaves_ok(v, leaves, &n, max, &budget) ? n : -1;
}

/* ---- tensor-core dots ------------------------------------------------------------------ */

/* The instruction K and the elements per 32-bit register of an mma.sync for
 * this dot, or false when it needs the FMA path. */
bool lp_mma_shape(const IrOp *op, int *instr_k, int *kpack)
{
    Type a = op->operands[0]->type, b = op->operands[1]->type, c = op->results[0]->type;
    bool fp8 = dtype_is_fp8(a.dt) && dtype_is_fp8(b.dt); /* either format on either side */
    if (a.rank != 2 || (a.dt != b.dt && !fp8))
        return false;
    if (((a.dt == DT_F16 || a.dt == DT_BF16) && c.dt == DT_F32) ||
        (a.dt == DT_F16 && c.dt == DT_F16)) {
        *instr_k = 16;
        *kpack = 2;
    } else if (a.dt == DT_F32 && c.dt == DT_F32 && (op->sub == DOT_TF32 || op->sub == DOT_TF32X3)) {
        /* tf32x3 runs as three tf32 products (codegen/mma.c) */
        *instr_k = 8;
        *kpack = 1;
    } else if ((a.dt == DT_I8 && c.dt == DT_I32) || (fp8 && c.dt == DT_F32)) {
        *instr_k = 32;
        *kpack = 4;
    } else {
        return false;
    }
    /* fewer than 16 rows or 8 columns run in one tile that repeats them
     * (codegen/mma.c) */
    return a.shape[1] >= *instr_k;
}

bool lp_fits(const LayoutPass *p, const Layout *l, const Type *t)
{
    LinLayout ll;
    return layout_linear(l, t->rank, t->shape, p->threads, &ll);
}

bool lp_is_mma(const IrValue *v) { return v && v->layout && v->layout->kind == LY_MMA; }


/* ---- default layouts ------------------------------------------------------------------ */

static void give_blocked(LayoutPass *p, IrValue *v)
{
    if (v && v->type.rank && !v->layout)
        v->layout = lp_blocked_of(p, &v->type);
}

bool lp_merges_pair(const IrOp *op, const Layout *l)
{
    Type in = op->operands[0]->type, out = op->results[0]->type;
    int k = in.rank - 1;
    if (k < 1 || out.rank != k || in.shape[k] != 2 || out.shape[k - 1] != 2 * in.shape[k - 1] ||
        l->rank != in.rank || l->spt[k] != 2 || l->tpw[k] != 1 || l->wpc[k] != 1 ||
        l->order[0] != k || l->order[1] != k - 1)
        return false;
    for (int d = 0; d < k - 1; d++)
        if (out.shape[d] != in.shape[d])
            return false;
    return true;
}

/* A join of two values in one blocked layout takes that layout with the
 * new dim in each thread's registers, fastest; a reshape that merges such
 * a pair into the row before it takes the row's layout with twice the run
 * (`tl.reshape(tl.join(a, b), (M, 2 * N))`, an interleaved output). Both
 * then stay in registers (codegen/layout.c), where in their shapes' own
 * blocked layouts each crossed threads through shared memory. */
static void pair_layouts(LayoutPass *p, IrOp *op)
{
    IrValue *r = op->nres == 1 ? op->results[0] : NULL;
    const Layout *l = op->nops ? op->operands[0]->layout : NULL;
    if (!r || r->layout || !l || l->kind != LY_BLOCKED)
        return;
    Layout n = *l;
    int k = l->rank;
    if (op->kind == IR_JOIN && op->nops == 2 && op->operands[1]->layout == l &&
        k < TK_LAYOUT_MAX_RANK) {
        n.rank = k + 1;
        n.spt[k] = 2, n.tpw[k] = 1, n.wpc[k] = 1;
        n.order[0] = k;
        for (int i = 0; i < k; i++)
            n.order[i + 1] = l->order[i];
    } else if (op->kind == IR_RESHAPE && lp_merges_pair(op, l)) {
        n.rank = k - 1;
        n.spt[k - 2] *= 2;
        for (int i = 0; i < k - 1; i++)
            n.order[i] = l->order[i + 1];
    } else {
        if (op->kind == IR_RESHAPE)
            r->layout = lp_reshape_layout(p, l, &op->operands[0]->type, &r->type);
        return;
    }
    const Layout *x = ir_layout_intern(p->f, &n);
    if (x && lp_fits(p, x, &r->type)) {
        r->layout = x;
        p->pair[r->id] = 1;
    }
}

/* The layout of an operand of elementwise op u of u's shape that a chain
 * of joins unpacked in registers, or NULL (none, or two in different
 * layouts). */
static const Layout *pair_operand(const LayoutPass *p, const IrOp *u)
{
    const Layout *l = NULL;
    for (int i = 0; u && lp_elementwise(u->kind) && u->nres == 1 && i < u->nops; i++) {
        const IrValue *o = u->operands[i];
        Type t = u->results[0]->type;
        if (!o->layout || !p->pair[o->id] || o->type.rank != t.rank ||
            memcmp(o->type.shape, t.shape, sizeof(int) * (size_t)t.rank) != 0)
            continue;
        if (l && l != o->layout)
            return NULL;
        l = o->layout;
    }
    return l;
}

const Layout *lp_unpaired(LayoutPass *p, const Layout *l)
{
    int k = l->rank - 1;
    if (l->kind != LY_BLOCKED || k < 1 || l->spt[k] != 2 || l->tpw[k] != 1 || l->wpc[k] != 1 ||
        l->order[0] != k)
        return NULL;
    Layout n = *l;
    n.rank = k;
    for (int i = 0; i < k; i++)
        n.order[i] = l->order[i + 1];
    return ir_layout_intern(p->f, &n);
}

/* The layout of a reshape's operand (.., C, 2) that merges its pairs into
 * a result (.., 2C) laid out in l, the pair in each thread's registers
 * (pair_layouts' merge, the other way round), or NULL. */
static const Layout *pre_merge(LayoutPass *p, const IrOp *op, const Layout *l)
{
    Type in = op->operands[0]->type, out = op->results[0]->type;
    int k = out.rank;
    if (l->kind != LY_BLOCKED || l->rank != k || in.rank != k + 1 || in.shape[k] != 2 ||
        out.shape[k - 1] != 2 * in.shape[k - 1] || l->spt[k - 1] % 2 || l->order[0] != k - 1)
        return NULL;
    Layout n = *l;
    n.rank = k + 1;
    n.spt[k - 1] /= 2;
    n.spt[k] = 2, n.tpw[k] = 1, n.wpc[k] = 1;
    n.order[0] = k;
    for (int i = 0; i < k; i++)
        n.order[i + 1] = l->order[i];
    return ir_layout_intern(p->f, &n);
}

/* Gives x, read by `reader` alone, layout l, and so on back along the
 * elementwise ops, joins and reshapes that made it from values read once
 * (by one op): a row of zero points widened by tl.interleave, shifted and
 * masked, then broadcast over a weight tile in l, is made in l at its own
 * size, and only what starts the chain (a few packed words) crosses
 * threads. */
static void pull_back(LayoutPass *p, const IrOp *reader, IrValue *x, const Layout *l, int depth)
{
    IrOp *d = x->def;
    int uses = 0;
    for (int i = 0; i < reader->nops; i++)
        uses += reader->operands[i] == x;
    if (!l || !d || depth == 0 || d->nres != 1 || x->type.rank != l->rank ||
        lp_reads_in(p->f->body, x) != uses || pass_can_remat(x) || !lp_fits(p, l, &x->type))
        return;
    const Layout *in = NULL;
    if (d->kind == IR_RESHAPE) {
        in = pre_merge(p, d, l);
        in = in ? in : lp_reshape_layout(p, l, &x->type, &d->operands[0]->type);
    } else if (d->kind == IR_JOIN)
        in = lp_unpaired(p, l);
    else if (!lp_elementwise(d->kind))
        return;
    x->layout = l;
    for (int i = 0; i < d->nops; i++) {
        IrValue *o = d->operands[i];
        if (i > 0 && o == d->operands[0])
            continue;
        if (lp_elementwise(d->kind) && o->type.rank == x->type.rank &&
            memcmp(o->type.shape, x->type.shape, sizeof(int) * (size_t)x->type.rank) == 0)
            pull_back(p, d, o, l, depth - 1);
        else if (in)
            pull_back(p, d, o, in, depth - 1);
    }
}

/* A vector expanded and broadcast (lp_assign_broadcast) that only op reads
 * is expanded and broadcast in l, op's layout, instead: the vector crosses
 * threads, not the tile. */
static void rebroadcast(LayoutPass *p, const IrOp *op, IrValue *b, const Layout *l)
{
    IrOp *d = b->def;
    /* one reshape after the broadcast (a per-group scale spread along K,
     * `reshape(broadcast(s[:, :, None], (N, G, 32)), (N, G * 32))`): the
     * broadcast and its expand_dims take l's image in their shape */
    if (d && d->kind == IR_RESHAPE && d->operands[0]->def &&
        d->operands[0]->def->kind == IR_BROADCAST && b->layout != l &&
        lp_reads_in(p->f->body, b) == 1 && lp_reads_in(p->f->body, d->operands[0]) == 1) {
        IrValue *in = d->operands[0];
        const Layout *pre = lp_reshape_layout(p, l, &b->type, &in->type);
        IrValue *e = in->def->operands[0];
        if (!pre || pre->kind != LY_BLOCKED || !e->def || e->def->kind != IR_EXPAND_DIMS ||
            lp_reads_in(p->f->body, e) != 1 || !lp_fits(p, pre, &e->type))
            return;
        in->layout = pre;
        e->layout = pre;
        b->layout = l;
        return;
    }
    IrValue *e = d && d->kind == IR_BROADCAST ? d->operands[0] : NULL;
    if (e && e->layout != l && e->def && e->def->kind != IR_EXPAND_DIMS &&
        lp_reads_in(p->f->body, b) == 1) {
        pull_back(p, d, e, l, 16);
        if (e->layout == l)
            b->layout = l;
        return;
    }
    if (!e || b->layout == l || !e->def || e->def->kind != IR_EXPAND_DIMS ||
        e->type.rank != l->rank || lp_reads_in(op->parent, b) != 1 ||
        lp_reads_in(d->parent, e) != 1 || lp_reads_in(p->f->body, b) != 1 ||
        lp_reads_in(p->f->body, e) != 1 || !lp_fits(p, l, &e->type))
        return;
    b->layout = l;
    e->layout = l;
}

/* Element-wise work on a tile that joins unpacked in registers (`b =
 * tl.interleave(b, b)` three times, then shifts, masks, a zero point
 * subtracted, a scale multiplied: an int4 weight's dequantization) stays
 * in that layout, and so does a row broadcast into it (the zero points,
 * the scales), as Triton's layouts follow their operands; in the shape's
 * own blocked layout every such op crossed the unpacked tile through
 * shared memory. */
static void follow_pairs(LayoutPass *p, IrOp *op)
{
    IrValue *r = op->nres == 1 ? op->results[0] : NULL;
    if (!r || r->layout || !r->type.rank)
        return;
    const Layout *l = NULL;
    if (lp_elementwise(op->kind))
        l = pair_operand(p, op);
    else if (op->kind == IR_BROADCAST && lp_reads_in(op->parent, r) == 1)
        l = pair_operand(p, lp_reader_after(op, r));
    if (!l || l->kind != LY_BLOCKED || !lp_fits(p, l, &r->type))
        return;
    r->layout = l;
    p->pair[r->id] = 1;
    for (int i = 0; lp_elementwise(op->kind) && i < op->nops; i++)
        rebroadcast(p, op, op->operands[i], l);
}

/* A gather's result lies where its index does (codegen reads each index
 * in the thread that gives its element), so neither is converted. */
static void gather_layout(IrOp *op)
{
    IrValue *r = op->results[0];
    const Layout *l = op->operands[1]->layout;
    if (!r->layout && l && l->kind != LY_SHARED)
        r->layout = l;
}

/* A branch's result that every arm yields in one layout already (a tile
 * each arm loads along its first dim, a paged-attention K block read one
 * way or the other) takes it: in the shape's default layout each arm
 * converted its value, and the dot after the branch converted it again. */
static void branch_layouts(IrOp *op)
{
    for (int i = 0; i < op->nres; i++)
        if (!op->results[i]->layout)
            op->results[i]->layout = lp_branch_layout(op, i);
}

bool pass_only_dots_read(IrBlock *b, const IrValue *v)
{
    int n = 0;
    for (const IrOp *o = b->first; o; o = o->next)
        for (int k = 0; k < o->nops; k++)
            if (o->operands[k] == v) {
                const Layout *l = o->kind == IR_CONVERT_LAYOUT ? o->results[0]->layout : NULL;
                if (!(o->kind == IR_DOT && k < 2) && !(l && l->kind == LY_DOT_OP))
                    return false;
                n++;
            }
    return n > 0 && n == ir_count_reads(b, v);
}

/* A trans of a tile made in registers that only dots read takes the
 * tile's layout, permuted, so it moves no data: the dot's conversion to
 * its operand is then the one crossing, where the trans crossed threads
 * to the shape's default layout and the dot crossed again (an mxfp4
 * weight decoded along K and transposed back). Where a store or other
 * ops read it, the trans' own conversion stays: moved to them it met
 * narrower accesses (a transposed mask stored bytes one at a time). A
 * tile loaded once or under a branch follows as well (unsloth's grouped
 * GEMM reads dY^T where a block has rows: the trans went through shared
 * memory element by element, then the dot staged it again). One loaded in a
 * loop's body is left to wanted (layout_convert.c), which reads it in the
 * permuted layout of the trans' result, and to the pipeliner, whose dots
 * read a transposed ring in place. */
static void trans_follows(LayoutPass *p, IrOp *op)
{
    IrValue *x = op->operands[0], *r = op->results[0];
    const IrOp *load = x->def && x->def->kind == IR_LOAD ? x->def : NULL;
    const IrOp *loop = load && load->parent ? load->parent->parent : NULL;
    if (r->layout || !x->layout || x->layout->kind != LY_BLOCKED ||
        (loop && loop->kind == IR_FOR) || !pass_only_dots_read(op->parent, r))
        return;
    r->layout = lp_trans_layout(p, x->layout, op, false);
}

static bool assign_default(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    if (op->kind == IR_LOAD && op->nres == 1)
        lp_assign_column_load(p, op);
    if (op->kind == IR_IF)
        branch_layouts(op);
    if (op->kind == IR_JOIN || op->kind == IR_RESHAPE)
        pair_layouts(p, op);
    if (op->kind == IR_TRANS)
        trans_follows(p, op);
    follow_pairs(p, op);
    if (op->kind == IR_GATHER)
        gather_layout(op);
    for (int i = 0; i < op->nres; i++)
        give_blocked(p, op->results[i]);
    for (int r = 0; r < op->nregions; r++)
        for (int i = 0; i < op->regions[r]->nargs; i++)
            give_blocked(p, op->regions[r]->args[i]);
    return !p->failed;
}

static bool find_ws_loop(IrOp *op, void *ctx)
{
    LayoutPass *p = ctx;
    p->ws |= (op->kind == IR_FOR || op->kind == IR_WHILE) && (op->flags & IRF_WARP_SPEC);
    return true;
}

bool pass_layout(IrFunc *f)
{
    LayoutPass p;
    memset(&p, 0, sizeof p);
    p.f = f;
    p.threads = f->num_warps * 32; /* checked by ir_launch_settings */
    p.axis = axis_analyze(f, f->arena);
    if (p.axis)
        ir_walk(f->body, note_access, &p);
    p.rows = arena_alloc(f->arena, (size_t)f->next_id + 1);
    p.pair = arena_alloc(f->arena, (size_t)f->next_id + 1);
    if (!p.rows || !p.pair || f->arena->oom)
        return false;
    memset(p.pair, 0, (size_t)f->next_id + 1);
    for (int round = 0; round < 16; round++) {
        p.changed = false;
        ir_walk(f->body, lp_mark_rows, &p);
        if (!p.changed)
            break;
    }
    lp_rows_wide(&p);
    ir_walk(f->body, find_ws_loop, &p);
    ir_walk(f->body, lp_assign_dot, &p);
    lp_spread_all(&p);
    ir_walk(f->body, note_store, &p);        /* before any shape's blocked layout is made */
    ir_walk(f->body, note_reshape, &p);      /* after the shapes' vectors are known */
    ir_walk(f->body, lp_assign_columns, &p); /* before loops give their arguments defaults */
    for (int round = 0; round < 4; round++) {
        p.changed = false;
        ir_walk(f->body, lp_follow_columns, &p);
        if (!p.changed)
            break;
    }
    ir_walk(f->body, lp_slice_reduction, &p);
    lp_spread_all(&p);
    ir_walk(f->body, lp_assign_broadcast, &p);
    ir_walk(f->body, assign_default, &p);
    if (!p.failed)
        ir_walk(f->body, lp_insert_converts, &p);
    if (!p.failed)
        lp_loads_in_place(&p);
    if (!p.failed && !lp_carry_in_place(&p))
        p.failed = true;
    if (p.failed || f->arena->oom)
        return false;
    ir_renumber(f);
    return true;
}
