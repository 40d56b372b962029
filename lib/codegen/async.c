/* codegen/async.c: the software pipeline's ops (pass_pipeline): cp.async
 * copies from global memory into ring buffers of shared memory, laid out
 * as the swizzled tiles the tensor-core dot reads (cg_tile_index), and the
 * commit and wait that order them. Ring buffers take the start of shared
 * memory for the whole kernel; the scratch other ops use starts after them,
 * so a conversion inside the loop never overwrites a copy in flight. A
 * shared_view of a tile is not a value: the dot reads its slot in place
 * (mma.c). A private ring (copies with sub = W > 0) holds each thread's
 * elements in chunks of W: chunk q of thread t at (q * threads + t) * W, so
 * that a warp's 16-byte accesses fall on consecutive addresses; its
 * shared_view reads them back into the registers of the load it replaced. */
#include "codegen/cg.h"

#include <stdio.h>
#include <string.h>

typedef struct Plan {
    Cg *cg;
    int64_t *slots; /* by ring */
    bool *tma;      /* by ring: TMA fills it, so it has mbarriers */
    bool *empty;    /* by ring: a producer fills it, so it has empty mbarriers too */
} Plan;

static int threads(const Cg *cg) { return cg->f->num_warps * 32; }

static bool plan_op(IrOp *op, void *ctx)
{
    Plan *pl = ctx;
    Cg *cg = pl->cg;
    if (op->kind == IR_TMA_RELEASE && op->ival >= 0 && op->ival < cg->nbufs)
        pl->empty[op->ival] = true;
    if ((op->kind != IR_ASYNC_COPY && op->kind != IR_TMA_COPY) || op->ival < 0 ||
        op->ival >= cg->nbufs)
        return true;
    int64_t bytes;
    if (op->kind == IR_TMA_COPY) {
        const IrTmap *m = &cg->f->tmaps[op->sub];
        bytes = ir_tmap_tile_bytes(m);
        pl->tma[op->ival] = true;
    } else if (op->sub && !(op->flags & IRF_PACKED)) {
        const IrValue *ptr = op->operands[0];
        bytes = (int64_t)cg_layout(cg, ptr).per_thread * threads(cg) * cg_mem_bytes(ptr->type.elem);
    } else {
        const Type *t = &op->operands[0]->type;
        bytes = type_numel(*t) * cg_mem_bytes(t->elem);
    }
    /* A tile's slots keep the 1024-byte alignment of its swizzle (see
     * cg_tile_index); a private ring's need 16 bytes, and those of a size
     * that would leave a gap go past the scratch, as Triton packs its
     * small buffers after its large ones. */
    bool tail = op->sub && bytes % 1024;
    cg->buf_tail[op->ival] = tail;
    cg->buf_slot[op->ival] = tail ? (bytes + 15) / 16 * 16 : (bytes + 1023) / 1024 * 1024;
    cg->buf_line[op->ival] = op->span.line;
    pl->slots[op->ival] = op->ival2;
    return true;
}

/* The buffer an op reads or fills, or -1. */
static bool is_ring_op(IrKind k)
{
    return k == IR_ASYNC_COPY || k == IR_SHARED_VIEW || k == IR_TMA_COPY || k == IR_TMA_WAIT ||
        k == IR_TMA_RELEASE;
}

static int op_buffer(const Cg *cg, const IrOp *op)
{
    return is_ring_op(op->kind) && op->ival >= 0 && op->ival < cg->nbufs ? (int)op->ival : -1;
}

typedef struct Segs {
    const Cg *cg;
    int cur;        /* the segment being walked */
    int *first;     /* by ring: the first segment that uses it, -1 none */
    int *last;      /* and the last */
    bool *async;    /* by segment: it holds a dot that may leave work in flight */
    bool split;     /* a producer warpgroup fills rings beside the consumers */
    bool waited;    /* no wgmma of the segment left unread since its last loop */
    bool in_loop;   /* walking a loop's regions */
    bool *resident; /* by ring: viewed outside loops */
} Segs;

static bool seg_op(IrOp *op, void *ctx)
{
    Segs *sg = ctx;
    int b = op_buffer(sg->cg, op);
    if (b >= 0) {
        if (sg->first[b] < 0)
            sg->first[b] = sg->cur;
        sg->last[b] = sg->cur;
    }
    /* a view outside loops (a resident operand, pipe_resident.c) is read
     * by the loops after it, whatever their segments */
    if (b >= 0 && op->kind == IR_SHARED_VIEW && !sg->in_loop)
        sg->resident[b] = true;
    if (op->kind == IR_DOT && op->ival == 1)
        sg->async[sg->cur] = true;
    sg->split |= op->kind == IR_PRODUCER;
    return true;
}

static bool count_op(IrOp *op, void *ctx)
{
    TK_UNUSED(op);
    (*(size_t *)ctx)++;
    return true;
}

/* Whether op is a loop's drain, behind which every copy has landed: the
 * barrier after it (async_wait 0; -1 after a loop whose copies are all
 * TMA's, which waited for each copy it issued), past the dot_waits of
 * the loop's results. A wait before a loop (a resident operand's) is
 * none. */
static bool is_drain(const IrOp *op)
{
    if (op->kind != IR_ASYNC_WAIT || op->ival > 0 || op->sub)
        return false;
    const IrOp *o = op->prev;
    while (o && o->kind == IR_DOT_WAIT)
        o = o->prev;
    return o && (o->kind == IR_FOR || o->kind == IR_WHILE);
}

/* Walks b in program order, an if's regions one after the other (a CTA
 * takes one of them, all its threads the same), a loop as one step. A
 * drain of every copy ends a segment, provided no wgmma of the segment
 * still reads a ring: a dot_wait since its last loop, or no dot left in
 * flight at all. */
static void seg_block(Segs *sg, IrBlock *b)
{
    for (IrOp *o = b->first; o; o = o->next) {
        if (o->kind == IR_IF) {
            for (int r = 0; r < o->nregions; r++)
                seg_block(sg, o->regions[r]);
            continue;
        }
        seg_op(o, sg);
        sg->in_loop = true;
        for (int r = 0; r < o->nregions; r++)
            ir_walk(o->regions[r], seg_op, sg);
        sg->in_loop = false;
        if (o->nregions)
            sg->waited = false;
        if (o->kind == IR_DOT_WAIT)
            sg->waited = true;
        if (is_drain(o) && (sg->waited || !sg->async[sg->cur]))
            sg->cur++;
    }
}

/* Each ring's segment (runs of loops between drains, seg_block): a ring
 * used within one segment alone is dead past its drain; -1 where it lives
 * across segments. */
static void ring_segments(Cg *cg, int *seg)
{
    size_t n = (size_t)cg->nbufs, nops = 1;
    ir_walk(cg->f->body, count_op, &nops);
    Segs sg = {cg,
               0,
               cg_alloc(cg, sizeof(int) * n),
               cg_alloc(cg, sizeof(int) * n),
               cg_alloc(cg, sizeof(bool) * nops),
               false,
               true,
               false,
               cg_alloc(cg, sizeof(bool) * n)};
    for (size_t i = 0; i < n; i++)
        sg.first[i] = sg.last[i] = -1;
    seg_block(&sg, cg->f->body);
    for (size_t i = 0; i < n; i++)
        seg[i] = !sg.split && !sg.resident[i] && sg.first[i] >= 0 && sg.first[i] == sg.last[i]
            ? sg.first[i]
            : -1;
}

/* Lays the rings out from `at`: first those that live across segments,
 * then each segment's from one common offset, as Triton frees a loop's
 * buffers for the loop after it (a TMA ring's mbarriers have their own
 * place, cg_plan_buffers). The tail rings (buf_tail) get offsets from the
 * tail's start, one after the other. */
static void place_rings(Cg *cg, const Plan *pl, int64_t at)
{
    int *seg = cg->buf_seg, nseg = 0;
    ring_segments(cg, seg);
    for (int i = 0; i < cg->nbufs; i++)
        nseg = seg[i] + 1 > nseg ? seg[i] + 1 : nseg;
    cg->tma_segs = false;
    for (int i = 0; i < cg->nbufs; i++) {
        if (nseg < 2) /* one run of loops: nothing to share */
            seg[i] = -1;
        cg->tma_segs |= seg[i] >= 0 && pl->tma[i];
        cg->buf_nslots[i] = (int)pl->slots[i];
        if (cg->buf_tail[i]) {
            seg[i] = -1;
            cg->buf_off[i] = cg->tail_bytes;
            cg->tail_bytes += pl->slots[i] * cg->buf_slot[i];
        } else if (seg[i] < 0) {
            cg->buf_off[i] = at;
            at += pl->slots[i] * cg->buf_slot[i];
        }
    }
    int64_t end = at;
    cg->segs_start = nseg >= 2 ? at : -1;
    for (int g = 0; g < nseg; g++) {
        int64_t p = at;
        for (int i = 0; i < cg->nbufs; i++)
            if (seg[i] == g && !cg->buf_tail[i]) {
                cg->buf_off[i] = p;
                p += pl->slots[i] * cg->buf_slot[i];
            }
        end = p > end ? p : end;
    }
    cg->rings_end = (end + 1023) / 1024 * 1024; /* scratch tiles stay 1024-aligned */
    cg->smem_reserved = cg->rings_end;
    cg_smem_need(cg, 0);
}

void cg_plan_buffers(Cg *cg)
{
    cg->nbufs = cg->f->nbuffers;
    cg->smem_reserved = 0;
    cg->segs_start = -1;
    if (cg->nbufs <= 0)
        return;
    size_t n = (size_t)cg->nbufs;
    cg->buf_off = cg_alloc(cg, sizeof(int64_t) * n);
    cg->buf_slot = cg_alloc(cg, sizeof(int64_t) * n);
    cg->bar_off = cg_alloc(cg, sizeof(int64_t) * n);
    cg->empty_off = cg_alloc(cg, sizeof(int64_t) * n);
    cg->phase = cg_alloc(cg, sizeof(LLVMValueRef) * n);
    cg->empty_phase = cg_alloc(cg, sizeof(LLVMValueRef) * n);
    cg->bar_slots = cg_alloc(cg, sizeof(int) * n);
    cg->buf_line = cg_alloc(cg, sizeof(int) * n);
    cg->buf_nslots = cg_alloc(cg, sizeof(int) * n);
    cg->buf_seg = cg_alloc(cg, sizeof(int) * n);
    cg->buf_tail = cg_alloc(cg, sizeof(bool) * n);
    Plan pl = {cg, cg_alloc(cg, sizeof(int64_t) * n), cg_alloc(cg, sizeof(bool) * n),
               cg_alloc(cg, sizeof(bool) * n)};
    ir_walk(cg->f->body, plan_op, &pl);
    /* The mbarriers of the TMA rings first: 8 bytes per slot, twice where a
     * producer fills the ring (full, then empty). They stay where they are
     * when the rings' place is reused after the loop (scratch_after);
     * reusing an mbarrier's own memory would need mbarrier.inval. */
    int64_t at = 0;
    for (int i = 0; i < cg->nbufs; i++) {
        cg->bar_off[i] = pl.tma[i] ? at : -1;
        cg->bar_slots[i] = pl.tma[i] ? (int)pl.slots[i] : 0;
        at += pl.tma[i] ? 8 * pl.slots[i] : 0;
        cg->empty_off[i] = pl.tma[i] && pl.empty[i] ? at : -1;
        at += cg->empty_off[i] >= 0 ? 8 * pl.slots[i] : 0;
    }
    at = cg_cluster_place(cg, at);
    cg->bar_bytes = at;
    at = (at + 1023) / 1024 * 1024; /* TMA's swizzled tiles want 1024-byte alignment */
    cg->rings_start = at;
    place_rings(cg, &pl, at);
}

LLVMValueRef cg_buffer_slot(Cg *cg, int buf, LLVMValueRef slot)
{
    if (buf < 0 || buf >= cg->nbufs) {
        cg_internal(cg, cg->f->span, "no ring buffer %d", buf);
        return cg_i32(cg, 0);
    }
    LLVMValueRef off = LLVMBuildMul(cg->b, slot, cg_i32(cg, cg->buf_slot[buf]), "");
    off = LLVMBuildAdd(cg->b, off, cg_i32(cg, cg->buf_off[buf]), "");
    if (!cg->buf_tail[buf])
        return off;
    if (!cg->tail_base) {
        LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
        cg->tail_base = LLVMAddGlobal(cg->mod, i32, "tk_smem_tail");
        LLVMSetLinkage(cg->tail_base, LLVMInternalLinkage);
        LLVMSetInitializer(cg->tail_base, cg_i32(cg, 0));
    }
    LLVMValueRef base = LLVMBuildLoad2(cg->b, LLVMInt32TypeInContext(cg->ctx), cg->tail_base, "");
    return LLVMBuildAdd(cg->b, off, base, "");
}

/* Code from here on runs in the threads that hold the first copy of
 * layout l's elements, until owner_end with the block returned. */
static LLVMBasicBlockRef owner_begin(Cg *cg, const CgLayout *l)
{
    LLVMBasicBlockRef work = cg_new_bb(cg, "copy.owner"), done = cg_new_bb(cg, "copy.done");
    LLVMBuildCondBr(cg->b, cg_owner(cg, l), work, done);
    LLVMPositionBuilderAtEnd(cg->b, work);
    return done;
}

static void owner_end(Cg *cg, LLVMBasicBlockRef done)
{
    if (!done)
        return;
    LLVMBuildBr(cg->b, done);
    LLVMPositionBuilderAtEnd(cg->b, done);
}

/* One cp.async of `size` bytes: args are the shared destination, the
 * global source and the bytes to read (the rest of size is zeroed). In
 * asm, as Triton writes it: LLVM 19 selects the intrinsic for 64-bit
 * shared addresses only, and tk's are 32-bit (target/nvptx.c). */
static void cp_async(Cg *cg, int size, LLVMValueRef *args)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(cg->ctx);
    char text[80];
    snprintf(text, sizeof text, "cp.async.%s.shared.global [$0], [$1], %d, $2;",
             size == 16 ? "cg" : "ca", size);
    LLVMValueRef a[3] = {LLVMBuildPtrToInt(cg->b, args[0], i32, ""), args[1], args[2]};
    LLVMTypeRef pt[3] = {i32, LLVMTypeOf(args[1]), i32};
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 3, text, "r,l,r,~{memory}", a);
}

/* The index in the swizzled tile t of row-major index e of a tile lc
 * elements wide. */
static LLVMValueRef tile_index_of(Cg *cg, const CgTile *t, LLVMValueRef e, int lc)
{
    LLVMValueRef r = LLVMBuildLShr(cg->b, e, cg_i32(cg, cg_ilog2(lc)), "");
    LLVMValueRef c = LLVMBuildAnd(cg->b, e, cg_i32(cg, lc - 1), "");
    return cg_tile_index(cg, t, r, c);
}

/* The offset in the swizzled tile t (element units) of register bits rs
 * of a row-major index into a tile lc elements wide, when adding them to
 * any thread's index adds that offset: their rows leave the swizzle's
 * phase and their columns its chunk as they are. False otherwise. */
static bool tile_offset(const CgTile *t, int64_t rs, int lc, int64_t *d)
{
    int64_t r = rs >> cg_ilog2(lc), c = rs & (lc - 1);
    if (t->trans) {
        int64_t x = r;
        r = c;
        c = x;
    }
    /* a phase past the chunks would carry into the row's bits */
    if (t->max_phase > t->panel / t->vec || r & ((int64_t)(t->max_phase - 1) * t->per_phase) ||
        c & (t->panel - 1) & ~(t->vec - 1))
        return false;
    *d = (r << cg_ilog2(t->panel)) + (c & (t->vec - 1)) +
        ((c >> cg_ilog2(t->panel)) << cg_ilog2((int64_t)t->rows * t->panel));
    return true;
}

/* One thread's copies: a cp.async per run of w consecutive elements, reading
 * nothing (and writing zeros) where the mask is off. Where a run's register
 * bits keep the swizzle's phase and chunk (tile_offset), its address is the
 * thread's first one plus a constant, one register for all of them, as the
 * assembler then folds the constant into each copy. */
static void emit_copy(Cg *cg, const IrOp *op)
{
    const IrValue *ptr = op->operands[0], *mask = op->operands[1];
    CgLayout l = cg_layout(cg, ptr);
    CgVal p = cg_get(cg, ptr), m = mask ? cg_get(cg, mask) : p;
    CgTile t;
    bool across = op->flags & IRF_ACROSS; /* the ring transposed: one element a copy */
    cg_tile_geometry(&t, &ptr->type, cg_runs_down(cg, ptr) != across);
    int dim, run = lin_run(&l.lin, 2, ptr->type.shape, &dim);
    int w = cg->axis ? axis_vector_width_along(cg->axis, ptr, mask, t.bytes, dim) : 1;
    w = w < run ? w : run;
    w = w < t.vec ? w : t.vec;
    w = across ? 1 : w;
    int size = w * t.bytes;
    if (size != 4 && size != 8 && size != 16) {
        cg_internal(cg, op->span, "async copy of %d bytes per thread", size);
        return;
    }
    /* copies of another thread's elements would write twice */
    LLVMBasicBlockRef done = l.copies ? owner_begin(cg, &l) : NULL;
    LLVMValueRef base = cg_buffer_slot(cg, (int)op->ival, cg_get(cg, op->operands[2]).el[0]);
    int lc = ptr->type.shape[1];
    int64_t tbits = 0, d;
    for (int j = 0; j < l.lin.nthread; j++)
        tbits |= l.lin.thread[j];
    LLVMValueRef first = NULL; /* the index of the thread's own part */
    for (int s = 0; s + w <= p.n; s += w) {
        int64_t rs = cg_slot_index(&l, s);
        LLVMValueRef idx;
        if (!(rs & tbits) && tile_offset(&t, rs, lc, &d)) {
            if (!first)
                first = tile_index_of(cg, &t, cg_thread_index(cg, &l), lc);
            idx = LLVMBuildAdd(cg->b, first, cg_i32(cg, d), "");
        } else {
            idx = tile_index_of(cg, &t, cg_elem_index(cg, &l, s), lc);
        }
        LLVMValueRef args[3];
        args[0] = cg_smem_addr_at(cg, base, idx, ptr->type.elem);
        args[1] = p.el[s];
        args[2] = mask
            ? LLVMBuildSelect(cg->b, m.el[m.n == 1 ? 0 : s], cg_i32(cg, size), cg_i32(cg, 0), "")
            : cg_i32(cg, size);
        cp_async(cg, size, args);
    }
    owner_end(cg, done);
}

/* Element index (of the ring's type) of register slot s in a private ring
 * with chunks of W elements. */
static LLVMValueRef private_index(Cg *cg, int s, int W)
{
    LLVMValueRef q = cg_i32(cg, (int64_t)(s / W) * threads(cg));
    LLVMValueRef chunk = LLVMBuildAdd(cg->b, q, cg->tid, "");
    return LLVMBuildAdd(cg->b, LLVMBuildMul(cg->b, chunk, cg_i32(cg, W), ""), cg_i32(cg, s % W),
                        "");
}

/* Element index (of the ring's type) of register slot s of a private
 * ring's value in layout l: the thread's own chunk, or in a packed ring
 * the element's index in the block. */
static LLVMValueRef ring_index(Cg *cg, const IrOp *op, const CgLayout *l, int s, int W)
{
    return op->flags & IRF_PACKED ? cg_elem_index(cg, l, s) : private_index(cg, s, W);
}

/* Whether register slot s repeats an element of an earlier slot of the
 * same thread (a register bit of no offset). */
static bool repeats(const CgLayout *l, int s)
{
    for (int i = 0; i < l->lin.nreg; i++)
        if ((s >> i & 1) && l->lin.reg[i] == 0)
            return true;
    return false;
}

/* A private ring's copies: this thread's elements, runs of w <= W at once
 * (w as this function's alignment facts allow; the chunks stay W). A
 * packed ring's are made by the threads that hold the first copy of their
 * elements, each element once. */
static void emit_private_copy(Cg *cg, const IrOp *op)
{
    const IrValue *ptr = op->operands[0], *mask = op->operands[1];
    CgLayout l = cg_layout(cg, ptr);
    CgVal p = cg_get(cg, ptr), m = mask ? cg_get(cg, mask) : p;
    int W = op->sub, bytes = cg_mem_bytes(ptr->type.elem);
    int dim, run = lin_run(&l.lin, ptr->type.rank, ptr->type.shape, &dim);
    int w = cg->axis ? axis_vector_width_along(cg->axis, ptr, mask, bytes, dim) : 1;
    w = w < run ? w : run;
    w = w < W ? w : W;
    int size = w * bytes;
    if ((size != 4 && size != 8 && size != 16) || W % w || p.n % W) {
        cg_internal(cg, op->span, "private async copy of %d bytes per run", size);
        return;
    }
    bool packed = op->flags & IRF_PACKED;
    LLVMBasicBlockRef done = packed && l.copies ? owner_begin(cg, &l) : NULL;
    LLVMValueRef base = cg_buffer_slot(cg, (int)op->ival, cg_get(cg, op->operands[2]).el[0]);
    for (int s = 0; s < p.n; s += w) {
        if (packed && repeats(&l, s))
            continue;
        LLVMValueRef args[3];
        args[0] = cg_smem_addr_at(cg, base, ring_index(cg, op, &l, s, W), ptr->type.elem);
        args[1] = p.el[s];
        args[2] = mask
            ? LLVMBuildSelect(cg->b, m.el[m.n == 1 ? 0 : s], cg_i32(cg, size), cg_i32(cg, 0), "")
            : cg_i32(cg, size);
        cp_async(cg, size, args);
    }
    owner_end(cg, done);
}

/* A private ring's slot back into registers, a chunk per load. */
static void emit_private_view(Cg *cg, const IrOp *op)
{
    const IrValue *res = op->results[0];
    DType dt = res->type.dt;
    CgLayout l = cg_layout(cg, res);
    int W = op->sub, n = l.per_thread;
    if (n % W) {
        cg_internal(cg, op->span, "private ring of %d elements in chunks of %d", n, W);
        return;
    }
    if (op->flags & IRF_PACKED) { /* a chunk is a run of consecutive elements */
        int dim, run = lin_run(&l.lin, res->type.rank, res->type.shape, &dim);
        while (W > run)
            W /= 2;
    }
    LLVMTypeRef vt = LLVMVectorType(cg_mem_type(cg, dt), (unsigned)W);
    LLVMValueRef base = cg_buffer_slot(cg, (int)op->ival, cg_get(cg, op->operands[0]).el[0]);
    CgVal r = cg_val_new(cg, n);
    for (int s = 0; s < n; s += W) {
        LLVMValueRef v = LLVMBuildLoad2(
            cg->b, vt, cg_smem_addr_at(cg, base, ring_index(cg, op, &l, s, W), dt), "");
        LLVMSetAlignment(v, (unsigned)(W * cg_mem_bytes(dt)));
        for (int i = 0; i < W; i++)
            r.el[s + i] = LLVMBuildExtractElement(cg->b, v, cg_i32(cg, i), "");
    }
    cg_set(cg, res, r);
}

/* ---- a ring read into registers ------------------------------------------------------ */

/* Whether layout l reads tile t (16-bit, stored row-major, lc columns)
 * with ldmatrix: register bit 0 is the next column and lane bits 0-4
 * columns 2 and 4 and rows 1, 2 and 4, as an mma accumulator holds its 8x8
 * blocks and ldmatrix gives them to a lane; every other register and warp
 * bit moves whole blocks. */
static bool ldmatrix_reads(const CgLayout *l, const CgTile *t, int lc)
{
    const LinLayout *ll = &l->lin;
    const int64_t lane[5] = {2, 4, lc, 2 * (int64_t)lc, 4 * (int64_t)lc};
    if (t->bytes != 2 || t->trans || ll->nreg < 2 || ll->reg[0] != 1 || ll->nthread < 5)
        return false;
    for (int j = 0; j < 5; j++)
        if (ll->thread[j] != lane[j])
            return false;
    for (int i = 1; i < ll->nreg; i++)
        if (ll->reg[i] == 0 || (ll->reg[i] % lc) % 8 || (ll->reg[i] / lc) % 8)
            return false;
    for (int j = 5; j < ll->nthread; j++)
        if ((ll->thread[j] % lc) % 8 || (ll->thread[j] / lc) % 8)
            return false;
    return true;
}

/* Slot `slot` read with ldmatrix: matrix q of an instruction is register
 * pair q after the group's first, so lane bits 3 and 4 address register
 * bits 1 and 2, and lane bits 0-2 its rows. */
static void ring_ldmatrix(Cg *cg, const IrOp *op, const CgTile *t, LLVMValueRef base, CgVal *r)
{
    const IrValue *res = op->results[0];
    CgLayout l = cg_layout(cg, res), addr = l;
    int lc = res->type.shape[1], n = l.lin.nreg >= 3 ? 4 : 2;
    const int64_t lane[5] = {lc, 2 * (int64_t)lc, 4 * (int64_t)lc, l.lin.reg[1],
                             n == 4 ? l.lin.reg[2] : 0};
    memcpy(addr.lin.thread, lane, sizeof lane);
    LLVMTypeRef pair = LLVMVectorType(cg_mem_type(cg, res->type.dt), 2);
    for (int s = 0; s < r->n; s += 2 * n) {
        LLVMValueRef e = cg_elem_index(cg, &addr, s), out[4];
        cg_ldmatrix(cg, n, false,
                    cg_smem_addr_at(cg, base, tile_index_of(cg, t, e, lc), res->type.dt), out);
        for (int q = 0; q < n; q++) {
            LLVMValueRef v = LLVMBuildBitCast(cg->b, out[q], pair, "");
            for (int i = 0; i < 2; i++)
                r->el[s + 2 * q + i] = LLVMBuildExtractElement(cg->b, v, cg_i32(cg, i), "");
        }
    }
}

/* A vector per run of the layout's consecutive elements that stays in one
 * 16-byte chunk of the tile; one element at a time across the stored rows. */
static void ring_vectors(Cg *cg, const IrOp *op, const CgTile *t, LLVMValueRef base, CgVal *r)
{
    const IrValue *res = op->results[0];
    CgLayout l = cg_layout(cg, res);
    int lc = res->type.shape[1], dim, run = lin_run(&l.lin, 2, res->type.shape, &dim);
    int w = (dim == 0) == t->trans ? (run < t->vec ? run : t->vec) : 1;
    LLVMTypeRef vt = LLVMVectorType(cg_mem_type(cg, res->type.dt), (unsigned)w);
    for (int s = 0; s < r->n; s += w) {
        LLVMValueRef e = cg_elem_index(cg, &l, s);
        LLVMValueRef p = cg_smem_addr_at(cg, base, tile_index_of(cg, t, e, lc), res->type.dt);
        LLVMValueRef v = LLVMBuildLoad2(cg->b, vt, p, "");
        LLVMSetAlignment(v, (unsigned)(w * t->bytes));
        for (int i = 0; i < w; i++)
            r->el[s + i] = LLVMBuildExtractElement(cg->b, v, cg_i32(cg, i), "");
    }
}

void cg_read_ring(Cg *cg, const IrOp *op)
{
    const IrValue *view = op->operands[0], *res = op->results[0];
    const IrOp *src = view->def;
    CgTile t;
    cg_tile_geometry(&t, &view->type, cg_runs_down(cg, view));
    CgLayout l = cg_layout(cg, res);
    LLVMValueRef base = cg_buffer_slot(cg, (int)src->ival, cg_get(cg, src->operands[0]).el[0]);
    CgVal r = cg_val_new(cg, l.per_thread);
    if (ldmatrix_reads(&l, &t, res->type.shape[1]))
        ring_ldmatrix(cg, op, &t, base, &r);
    else
        ring_vectors(cg, op, &t, base, &r);
    cg_set(cg, res, r);
}

/* A ring op, a producer, or a dot operand converted from a view made
 * before (a resident operand's). */
static bool uses_ring(IrOp *op, void *ctx)
{
    bool *found = ctx;
    const IrOp *src = op->kind == IR_CONVERT_LAYOUT ? op->operands[0]->def : NULL;
    *found |=
        is_ring_op(op->kind) || op->kind == IR_PRODUCER || (src && src->kind == IR_SHARED_VIEW);
    return !*found;
}

/* Whether b is the kernel's body or, up to it, in every level a loop's
 * body (a for's, a while's after-region) or a region of an if: codegen
 * emits such a block once, all of it whenever it runs, and cg_rings_back
 * runs at its end, before whatever follows it in time. */
static bool in_whole_regions(const Cg *cg, const IrBlock *b)
{
    for (; b != cg->f->body; b = b->parent->parent) {
        const IrOp *p = b->parent;
        if (!p ||
            !(p->kind == IR_FOR || p->kind == IR_IF ||
              (p->kind == IR_WHILE && p->nregions > 1 && p->regions[1] == b)))
            return false;
    }
    return true;
}

static bool async_dot(IrOp *op, void *ctx)
{
    bool *found = ctx;
    *found |= op->kind == IR_DOT && op->ival == 1;
    return !*found;
}

/* Whether the loop nearest before `wait` leaves no wgmma in flight past
 * it: it has none, or a dot_wait lies between the two. */
static bool dots_waited(const IrOp *wait)
{
    for (const IrOp *o = wait->prev; o; o = o->prev) {
        if (o->kind == IR_DOT_WAIT)
            return true;
        bool found = false;
        for (int r = 0; r < o->nregions && !found; r++)
            ir_walk(o->regions[r], async_dot, &found);
        if (found)
            return false;
    }
    return true;
}

/* Whether drain `wait` follows a warp-specialized loop (and its
 * dot_waits): the producer copied exactly the loop's iterations, and the
 * consumers waited for every copy before they left it. */
static bool after_ws_loop(const IrOp *wait)
{
    const IrOp *o = wait->prev;
    while (o && o->kind == IR_DOT_WAIT)
        o = o->prev;
    return o && o->kind == IR_FOR && (o->flags & IRF_WARP_SPEC);
}

static bool op_uses_ring(IrOp *o)
{
    bool found = false;
    uses_ring(o, &found);
    for (int r = 0; r < o->nregions && !found; r++)
        ir_walk(o->regions[r], uses_ring, &found);
    return found;
}

/* The rings are dead after drain `wait` where it drains every copy (cp.async
 * groups, or none left in flight where every copy is TMA's: the loop
 * issues only the copies of its own iterations and waits for each), after
 * the dot_waits of the loop before it, and its barrier then orders every
 * warp's last read of a ring before any write after it; no ring op
 * follows in its block, and no producer warp fills a ring but that of the
 * warp-specialized loop the drain follows (pipe_ws.c). The scratch of
 * what follows (the epilogue's conversions) may then take the rings'
 * place, as Triton reuses the pipeline's buffers after its loop; the TMA
 * barriers before the rings stay. Inside a loop's body (a persistent
 * kernel's tile loop) or an if's region (the rest of a kernel after an
 * early return) the place is given back at the block's end, behind a
 * barrier, before the next iteration's or the next op's copies
 * (cg_rings_back).
 *
 * Between two runs of loops whose rings share one place, that place is
 * free too: the scratch of what lies between (attention backward's dK and
 * dV stores before its dQ loops) takes it, and the first op after that
 * touches a ring waits behind a barrier for the scratch's last readers
 * (cg_ring_use). Returns where the scratch may start: the rings' start,
 * the runs' shared place (only at the kernel's top level), or -1. */
static int64_t scratch_after(Cg *cg, const IrOp *wait)
{
    if (cg->nbufs <= 0 || wait->ival > 0 || wait->sub || !in_whole_regions(cg, wait->parent) ||
        !dots_waited(wait))
        return -1;
    bool producer = cg->consumers != 0;
    for (int i = 0; i < cg->nbufs; i++)
        producer |= cg->empty_off[i] >= 0;
    if (producer && !after_ws_loop(wait))
        return -1;
    bool found = false;
    for (IrOp *o = wait->next; o && !found; o = o->next)
        found = op_uses_ring(o);
    if (!found)
        return cg->rings_start;
    if (cg->segs_start < 0 || wait->parent != cg->f->body || !is_drain(wait))
        return -1;
    cg->rings_owed = true;
    return cg->segs_start;
}

void cg_ring_use(Cg *cg, const IrOp *op)
{
    if (!op_uses_ring((IrOp *)op))
        return;
    if (cg->rings_scratched)
        cg_rings_back(cg, cg->rings_end);
    cg->smem_reserved = cg->rings_end;
    cg->rings_owed = cg->rings_scratched = false;
}

void cg_rings_back(Cg *cg, int64_t reserved)
{
    if (cg->smem_reserved == reserved)
        return;
    /* Every warp's last access to scratch in the rings' place comes before
     * any copy of the next iteration writes there; a TMA copy writes
     * through the async proxy, so the generic writes are fenced first. */
    bool tma = false;
    for (int i = 0; i < cg->nbufs; i++)
        tma |= cg->bar_off[i] >= 0;
    if (tma)
        cg_fence_async_shared(cg);
    cg_barrier(cg);
    cg->smem_reserved = reserved;
}

/* Whether op is the wait at the top of a pipelined loop's body for the
 * slot it reads. The wait, its fence and its barrier may go down to the
 * body's first op that reads shared memory: the loads of a register tile
 * the body's dot stages are then in flight while the copies land, and
 * the staging shares the barrier, one a K step (module.c). Only where
 * such a dot comes before any other op that reads shared memory; a drain
 * does not move: the scratch after it may lie on the rings. */
static bool slot_wait(Cg *cg, const IrOp *op)
{
    const IrOp *loop = op->parent->parent;
    if (op->ival < 0 || op->sub || cg->consumers || is_drain(op) || !loop ||
        (loop->kind != IR_FOR && loop->kind != IR_WHILE))
        return false;
    for (const IrOp *o = op->next; o && cg_passes_slot_wait(cg, o); o = o->next)
        if (o->kind == IR_DOT)
            return true;
    return false;
}

/* Whether op, emitted while a ring wait's barrier is owed, neither reads
 * shared memory nor writes any that another thread may read before that
 * barrier: register arithmetic, loads from global memory, views of a
 * slot, and a dot that stores an operand first and meets the barrier
 * before reading. */
bool cg_passes_slot_wait(Cg *cg, const IrOp *op)
{
    if (op->nregions)
        return false;
    switch (op->kind) {
    case IR_CONST:
    case IR_LOAD:
    case IR_HINT:
    case IR_ASSUME: return true;
    case IR_SHARED_VIEW: return !op->sub;
    case IR_DOT: return cg_dot_stages(cg, op);
    default: return cg_is_elementwise(op->kind) || cg_shape_in_registers(cg, op);
    }
}

void cg_pay_slot_wait(Cg *cg)
{
    if (cg->wait_owed < 0)
        return;
    LLVMValueRef n = cg_i32(cg, cg->wait_owed);
    cg->wait_owed = -1;
    cg_intrinsic(cg, "llvm.nvvm.cp.async.wait.group", NULL, 0, &n, 1);
}

bool cg_emit_async(Cg *cg, const IrOp *op)
{
    switch (op->kind) {
    case IR_ASYNC_COPY:
        if (op->sub)
            emit_private_copy(cg, op);
        else
            emit_copy(cg, op);
        return true;
    case IR_ASYNC_COMMIT:
        cg_intrinsic(cg, "llvm.nvvm.cp.async.commit.group", NULL, 0, NULL, 0);
        return true;
    case IR_ASYNC_WAIT: {
        if (slot_wait(cg, op)) {
            cg->slot_owed = op->parent;
            cg->wait_owed = (int)op->ival;
            cg->fence_owed = op->ival2 != 0;
            return true;
        }
        LLVMValueRef n = cg_i32(cg, op->ival);
        if (op->ival >= 0) /* -1: the loop's copies are all TMA's */
            cg_intrinsic(cg, "llvm.nvvm.cp.async.wait.group", NULL, 0, &n, 1);
        /* the next segment's TMA copies may write where this one's
         * threads read and wrote through the generic proxy */
        if (op->ival2 || (cg->tma_segs && is_drain(op)))
            cg_fence_async_shared(cg);
        if (!op->sub)
            cg_barrier(cg);
        int64_t at = scratch_after(cg, op);
        if (at >= 0 && at < cg->smem_reserved)
            cg->smem_reserved = at;
        return true;
    }
    case IR_SHARED_VIEW:
        if (op->sub)
            emit_private_view(cg, op);
        return true; /* a tile: read in place by the dot it feeds */
    case IR_DOT_WAIT: cg_emit_dot_wait(cg, op); return true;
    default: return false;
    }
}
