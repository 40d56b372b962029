/* cg.h: internal map of the code generator (block IR -> LLVM IR).
 * Takes IR after pass_layout: every block value carries a layout, and every
 * op's operands have the layouts it needs. A value is the per-thread array
 * of the elements its layout gives the thread (codegen/layout.c). */
#ifndef TK_CG_H
#define TK_CG_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "codegen/codegen.h"
#include "passes/passes.h"
#include "target/target.h"

/* The elements one thread holds of a value: el[slot], n slots. Scalars have
 * n == 1 and every thread holds the same (uniform) value. */
typedef struct CgVal {
    LLVMValueRef *el;
    int n;
} CgVal;

/* Where the elements of a value live (its IR layout in linear form): slot s
 * of thread t holds element lin_index(lin, s, t). */
typedef struct CgLayout {
    int64_t numel;
    LinLayout lin;
    int per_thread;  /* slots: 1 << lin.nreg */
    int v;           /* slots 0..v-1 hold consecutive elements (<= 16) */
    int64_t nchunks; /* numel / v */
    int k;           /* per_thread / v */
    int64_t copies;  /* thread bits whose threads hold copies of others' elements */
} CgLayout;

typedef struct Cg {
    const IrFunc *f;
    const CgOptions *o;
    Diag *d;
    Arena *a;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMValueRef fn;
    CgVal *vals;           /* by IrValue id */
    bool *have;            /* by IrValue id */
    int T;                 /* threads per program */
    int sm;                /* 80, 86, 89, 90 */
    LLVMValueRef tid;      /* i32 thread index */
    LLVMValueRef wg;       /* the uniform warpgroup index, once built (wgmma.c) */
    LLVMValueRef last_bar; /* the last barrier emitted, and the threads it met */
    int last_bar_consumers;
    const IrBlock *bar_owed; /* a barrier is owed before this block's next copy (wgmma.c) */
    /* a ring wait's barrier (and fence, for wgmma) owed before this
     * block's next op that may read what other threads copied (async.c) */
    const IrBlock *slot_owed;
    int wait_owed; /* the copy groups it may leave in flight; -1: none owed */
    bool fence_owed;
    LLVMValueRef smem; /* placeholder for the kernel's shared array */
    int64_t smem_bytes;
    bool uses_libdevice;
    bool failed;
    int nstr;                            /* counter for string globals */
    struct AxisInfo *axis;               /* axis analysis by value id; NULL: unknown */
    struct CgShapeLayout *shape_layouts; /* cg_index_layouts */
    bool *staged;                        /* by value id: a dot operand its dot stages (mma.c) */
    int nshape_layouts;
    struct CgSink *sinks;
    int64_t *buf_off, *buf_slot; /* ring buffers: start and slot bytes, by id */
    int *buf_line, *buf_nslots;  /* ring buffers: the line of their load, their slots */
    int64_t bar_bytes;           /* the mbarriers of the TMA rings */
    int64_t *bar_off;            /* a TMA ring's mbarriers (8 bytes per slot), or -1 */
    int64_t *empty_off;          /* a producer-filled ring's empty mbarriers, or -1 */
    int *bar_slots;              /* a TMA ring's slots (and mbarriers) */
    LLVMValueRef *phase;         /* a TMA ring's phase bits (an i32 per thread), by id */
    LLVMValueRef *empty_phase;   /* the same for its empty mbarriers (the producer's) */
    bool producer;               /* emitting the producer's region (one thread runs it) */
    int consumers;               /* after the producer split: the threads that meet at
                                  * barriers (num_warps * 32); 0: the whole CTA */
    LLVMValueRef ws_dec, ws_inc; /* the split's setmaxnreg calls (cg_ws_programs) */
    LLVMValueRef *tmap;          /* the tensor maps: parameters, or device maps' addresses */
    LLVMValueRef *tmap_bad;      /* a device map's i1 (thread 0's): written from values no
                                    map can hold (codegen/tmap.c) */
    int nbufs;
    int *buf_seg;           /* by ring: the run of loops it serves alone, -1 across runs */
    bool *buf_tail;         /* by ring: placed past the scratch (buf_off from tail_base) */
    int64_t tail_bytes;     /* those rings' bytes */
    LLVMValueRef tail_base; /* an i32 global read where their place is needed, made a
                             * constant once the scratch's end is known (finish_smem) */
    int64_t smem_reserved;  /* bytes of ring buffers before the scratch */
    int64_t rings_start;    /* where the rings begin (after the TMA barriers) */
    int64_t rings_end;      /* and end, 1024-aligned: the scratch's start while they live */
    bool tma_segs;          /* TMA rings of loops run one after another share their place */
    int64_t segs_start;     /* where the rings of runs of loops share their place */
    bool rings_owed;        /* the scratch may take that place between two runs */
    bool rings_scratched;   /* and did: the next ring op waits for its readers */
    struct CgThreadIndex {  /* thread parts of element indices, per block (layout.c) */
        LLVMBasicBlockRef bb;
        int nthread;
        int64_t thread[TK_LIN_MAX_THREAD];
        LLVMValueRef v;
    } tix[8];
    int ntix;
    struct CgLines *lines; /* line tables being built (lines.c); NULL: none */
    struct CgCluster *cl;  /* clusters of two CTAs (cluster.c); NULL: none */
} Cg;

/* ---- codegen/module.c ------------------------------------------------------------ */
void cg_error(Cg *cg, Span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cg_internal(Cg *cg, Span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
CgVal cg_get(Cg *cg, const IrValue *v);
void cg_set(Cg *cg, const IrValue *v, CgVal x);
/* Codegen's own arrays: from the arena, or on out-of-memory a writable
 * stand-in (the compile is then marked failed and stops after this op). */
void *cg_alloc(Cg *cg, size_t bytes);
CgVal cg_val_new(Cg *cg, int n);
/* Emits the ops of a region; returns its terminator (yield/condition) or NULL. */
const IrOp *cg_emit_block(Cg *cg, const IrBlock *blk);
LLVMTypeRef cg_type(Cg *cg, DType dt);     /* register type of one element */
LLVMTypeRef cg_mem_type(Cg *cg, DType dt); /* in memory (i1 is stored as i8) */
int cg_mem_bytes(DType dt);
/* vw small elements from vw * bits / 32 words, element 0 in the low bits
 * (how global accesses carry 8- and 16-bit elements) */
void cg_unpack_words(Cg *cg, DType dt, int vw, const LLVMValueRef *words, LLVMValueRef *el);
LLVMValueRef cg_i32(Cg *cg, int64_t v);
/* log2 of v rounded up (shapes and tiles are powers of two). */
int cg_ilog2(int64_t v);
LLVMValueRef cg_i64(Cg *cg, int64_t v);
LLVMValueRef cg_returns(Cg *cg, LLVMValueRef call);
LLVMValueRef cg_intrinsic(Cg *cg, const char *name, LLVMTypeRef *ov, int nov, LLVMValueRef *args,
                          int nargs);
LLVMValueRef cg_call_fn(Cg *cg, const char *name, LLVMTypeRef ret, LLVMTypeRef *pt, int np,
                        LLVMValueRef *args, int nargs, bool vararg);
LLVMValueRef cg_sreg(Cg *cg, const char *name); /* llvm.nvvm.read.ptx.sreg.NAME */
LLVMValueRef cg_cstring(Cg *cg, const char *s); /* pointer to a constant string */
LLVMBasicBlockRef cg_new_bb(Cg *cg, const char *name);
/* Runs what the caller emits next only where cond holds; returns the block
 * to close the branch with (cg_end_if), where code goes on for every thread. */
LLVMBasicBlockRef cg_begin_if(Cg *cg, LLVMValueRef cond, const char *name);
void cg_end_if(Cg *cg, LLVMBasicBlockRef done);
/* Every thread waits until the mbarrier at bar completes the phase whose
 * parity is bit `slot` of the i32 at phase, then flips that bit; with
 * acquire semantics at cluster scope where cluster holds (what the other
 * CTA wrote before its arrival is visible after the wait). */
void cg_mbarrier_wait(Cg *cg, LLVMValueRef bar, LLVMValueRef phase, LLVMValueRef slot,
                      bool cluster);
/* Inline PTX (LLVM has no intrinsic for it): a call with side effects. */
LLVMValueRef cg_asm(Cg *cg, LLVMTypeRef ret, LLVMTypeRef *pt, int np, const char *text,
                    const char *cons, LLVMValueRef *args);
/* The same without side effects (a conversion): LLVM may merge or drop it. */
LLVMValueRef cg_asm_pure(Cg *cg, LLVMTypeRef ret, LLVMTypeRef *pt, int np, const char *text,
                         const char *cons, LLVMValueRef *args);
LLVMValueRef cg_asm_void(Cg *cg, const char *text);

/* ---- codegen/layout.c ------------------------------------------------------------ */
CgLayout cg_layout(Cg *cg, const IrValue *v);
bool cg_layout_same(Cg *cg, const IrValue *a, const IrValue *b);
/* The blocked layout of a shape (for values made inside one op, such as a
 * reduction's transposed copy): the one the layout pass chose for that
 * shape, else the default. */
CgLayout cg_layout_type(Cg *cg, Type t);
/* Fills the fields of l that follow from l->numel and l->lin. */
void cg_layout_finish(CgLayout *l);
/* Elements between neighbours along dim d of t (row-major). */
int64_t cg_dim_stride(const Type *t, int d);
void cg_index_layouts(Cg *cg);
/* The linear (row-major) index of the element this thread holds in `slot`:
 * the thread's part (cg_thread_index) with the slot's bits (cg_slot_index)
 * set; the two never share a bit. */
LLVMValueRef cg_elem_index(Cg *cg, const CgLayout *l, int slot);
LLVMValueRef cg_thread_index(Cg *cg, const CgLayout *l);
int64_t cg_slot_index(const CgLayout *l, int slot);
/* i1: this thread holds the first copy of its elements (false for copies). */
LLVMValueRef cg_owner(Cg *cg, const CgLayout *l);
/* Coordinate d of a linear index in a shape. */
LLVMValueRef cg_coord(Cg *cg, LLVMValueRef lin, const Type *t, int d);
LLVMValueRef cg_smem_addr(Cg *cg, int64_t byte_off, LLVMValueRef idx, DType dt);
/* The same at a computed byte offset; ring-buffer offsets are absolute,
 * cg_smem_addr's start after the ring buffers. */
LLVMValueRef cg_smem_addr_at(Cg *cg, LLVMValueRef byte_off, LLVMValueRef idx, DType dt);
void cg_smem_need(Cg *cg, int64_t bytes);
/* addr (a shared address) as a register LLVM cannot fold back into the
 * symbol: a store at a constant address such as [tk_smem] made ptxas keep
 * a whole loop's uniform values (a wgmma's descriptors) in per-thread
 * registers, moved to uniform ones before each use. */
LLVMValueRef cg_smem_in_reg(Cg *cg, LLVMValueRef addr);
/* Register bits of value v (in layout l) that do not change its value, by
 * the constancy axis analysis proves (a mask compared against a bound
 * divisible by 16 is one predicate per 16 rows, as Triton computes it):
 * slot s holds the value of slot s & ~bits. 0 when nothing is known. */
int64_t cg_equal_bits(Cg *cg, const IrValue *v, const CgLayout *l);
/* Whether op is inside a for or while body. */
bool cg_in_loop(const IrOp *op);
void cg_barrier(Cg *cg);
/* Shared-memory conversion in two halves: cg_smem_put stores every element
 * of x (the elements of value v, in its layout) at byte offset off + index *
 * size; cg_smem_take loads the elements of value v, in its layout, from off
 * + map(index) * size. The caller places barriers. */
void cg_smem_put(Cg *cg, CgVal x, const IrValue *v, int64_t off);
typedef LLVMValueRef (*CgIndexMap)(Cg *cg, LLVMValueRef dst_index, const Type *dst, void *ctx);
CgVal cg_smem_take(Cg *cg, const IrValue *v, int64_t off, CgIndexMap map, void *ctx);
/* The same for elements in layout l that no IR value holds (a value of type t
 * made inside one op). */
void cg_smem_put_in(Cg *cg, CgVal x, const CgLayout *l, DType dt, int64_t off);
CgVal cg_smem_take_in(Cg *cg, const CgLayout *l, Type t, int64_t off, CgIndexMap map, void *ctx);
/* Shape ops (expand_dims, reshape, broadcast, splat, trans, join, split,
 * cat) and convert_layout: reused registers where the layouts agree,
 * recomputation where the input allows, else shared memory. */
bool cg_emit_shape(Cg *cg, const IrOp *op);
bool cg_shape_in_registers(Cg *cg, const IrOp *op);

/* ---- codegen/gather.c ------------------------------------------------------------------ */
/* gather and histogram, through shared memory. */
bool cg_emit_gather(Cg *cg, const IrOp *op);

/* ---- codegen/elementwise.c ---------------------------------------------------------- */
bool cg_emit_elementwise(Cg *cg, const IrOp *op);
LLVMValueRef cg_convert(Cg *cg, LLVMValueRef x, DType from, DType to);
/* fp64 -> fp32 rounded to odd: rounding that to a narrower format rounds once. */
LLVMValueRef cg_f64_to_f32_odd(Cg *cg, LLVMValueRef x);
/* One scalar binary op of kind k (IR_ADD ... IR_MAX) on dtype dt. */
LLVMValueRef cg_binop(Cg *cg, IrKind k, int sub, DType dt, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_const_elem(Cg *cg, DType dt, int64_t iv, double fv);
bool cg_is_elementwise(IrKind k);
/* One element of an elementwise op from its operands' elements (idx: the
 * element's linear index, for arange). */
LLVMValueRef cg_elem_op(Cg *cg, const IrOp *op, LLVMValueRef *x, LLVMValueRef idx);

/* ---- codegen/fp8.c ---------------------------------------------------------------------- */
/* Converts two elements (x1 may be x0, for one) where from or to is an fp8
 * dtype, into out[0..1]. */
void cg_fp8_convert2(Cg *cg, LLVMValueRef x0, LLVMValueRef x1, DType from, DType to,
                     LLVMValueRef out[2]);
/* Reports each fp8e4nv/fp8e5 conversion or dot that the target cannot run
 * (below sm_89; fp8e4b15 converts anywhere); false when there was one. */
bool cg_fp8_check(Cg *cg);
/* Whether the kernel has fp8e4nv or fp8e5 values or pointers (its PTX then
 * needs ISA 8.4). */
bool cg_fp8_used(const IrFunc *f);

/* ---- codegen/remat.c ------------------------------------------------------------------- */
/* Instead of moving a value between layouts through shared memory, index
 * arithmetic (arange, constants, splats of scalars, shape ops and pure
 * elementwise ops over them) can be recomputed where it is needed. */
bool cg_can_remat(Cg *cg, const IrValue *v);
/* Leaves of a recomputation that are read from shared memory instead:
 * each stored whole at byte offset off (of the scratch) in row-major
 * order (pass_remat_leaves). */
typedef struct CgStaged {
    const IrValue *leaf[4];
    int64_t off[4];
    int n;
} CgStaged;
/* Element t | c (linear index in v's shape: a thread's part t and a
 * constant c with no bit in common) of v, recomputed; st: staged leaves,
 * or NULL. */
LLVMValueRef cg_remat_elem(Cg *cg, const IrValue *v, LLVMValueRef t, int64_t c, const CgStaged *st);

/* ---- codegen/memory.c --------------------------------------------------------------- */
bool cg_emit_memory(Cg *cg, const IrOp *op);
/* Whether the kernel may use sm_90's vector atomics (its PTX then needs ISA 8.1). */
bool cg_vector_atomics(const IrFunc *f, int sm);

/* ---- codegen/reduce.c --------------------------------------------------------------- */
bool cg_emit_reduce(Cg *cg, const IrOp *op);
bool cg_emit_scan(Cg *cg, const IrOp *op);
/* The combine of a reduction or scan over n components (tuples). */
typedef struct Red {
    Cg *cg;
    const IrOp *op;
    ReduceKind kind; /* how to combine (scans map to RED_SUM / RED_CUSTOM) */
    int n;           /* accumulator components */
    DType dt[8];     /* their dtypes */
} Red;
/* acc = combine(acc, x), both arrays of r->n components. */
void cg_red_combine(Red *r, LLVMValueRef *acc, LLVMValueRef *x);
/* shfl.sync of one element of any dtype; mode bfly, up, down or idx. */
LLVMValueRef cg_shfl(Cg *cg, const char *mode, LLVMValueRef v, DType dt, LLVMValueRef off);

/* ---- codegen/scan.c ------------------------------------------------------------------ */
/* A scan whose lines run through registers, then lanes, then warps, then
 * registers again: done in registers and shuffles with one small exchange
 * through shared memory across warps. False (nothing emitted) for other
 * layouts. */
bool cg_scan_in_regs(Cg *cg, const IrOp *op, Red *r);

/* ---- codegen/dot.c ---------------------------------------------------------------------- */
bool cg_emit_dot(Cg *cg, const IrOp *op);
/* The accumulator dot op adds to: its acc operand, zeros where its fresh
 * operand (pass_flatten) is true. */
CgVal cg_dot_acc(Cg *cg, const IrOp *op);

/* ---- codegen/mma.c ------------------------------------------------------------------- */
/* dot on tensor cores: operands in dot_op layouts, accumulator in mma. */
void cg_emit_mma(Cg *cg, const IrOp *op);
/* A 2-D tile in shared memory, row-major and swizzled in 16-byte chunks so
 * that the eight rows one ldmatrix reads fall in different banks. Rows of
 * more than 128 bytes are cut into panels of `panel` columns, each stored
 * whole (rows x panel) after the one before: element (r, c) sits at
 * (c / panel) * rows * panel + r * panel + ((c % panel / vec) ^ ((r /
 * per_phase) % max_phase)) * vec + c % vec. That is the 128/64/32-byte
 * swizzle of wgmma's shared-memory descriptors, from a 1024-byte aligned
 * base. Dot operands are staged and copied (cp.async) this way. */
typedef struct CgTile {
    int rows, cols, vec, per_phase, max_phase, bytes; /* of the stored (physical) tile */
    int panel;  /* columns per panel: cols, or 128 bytes' worth */
    bool trans; /* dim 0 is contiguous: stored as [cols][rows] of the logical tile */
} CgTile;
/* type: the tile or its pointers; trans as above */
void cg_tile_geometry(CgTile *t, const Type *type, bool trans);
/* Whether a value's layout runs along dim 0 of its 2-D shape (stored
 * transposed when it goes to shared memory). */
bool cg_runs_down(Cg *cg, const IrValue *v);
/* ldmatrix of n 8x8 matrices of 16-bit elements (n = 2 or 4; .trans where
 * trans): lane l gives the address of row l % 8 of matrix l / 8 in ptr,
 * out[i] holds this lane's two elements of matrix i. */
void cg_ldmatrix(Cg *cg, int n, bool trans, LLVMValueRef ptr, LLVMValueRef *out);
/* Element index of logical (r, c). */
LLVMValueRef cg_tile_index(Cg *cg, const CgTile *t, LLVMValueRef r, LLVMValueRef c);
/* One dot operand: its fragments in registers (el), or a swizzled tile in
 * shared memory at byte offset `off`. */
typedef struct CgOperand {
    const IrValue *v; /* the dot_op value */
    CgVal el;         /* registers, when not staged */
    bool staged;      /* in shared memory: staged here or copied by cp.async */
    bool copied;      /* a ring-buffer slot of the pipeline (no barrier after) */
    LLVMValueRef off;
    CgTile t;
} CgOperand;
/* n (1, 2 or 4) elements of dtype dt in one 32-bit register, the first in
 * the low bits: an operand register of mma.sync and wgmma. */
LLVMValueRef cg_pack32(Cg *cg, DType dt, const LLVMValueRef *el, int n);
/* Takes operand v: its registers, its ring-buffer slot, or a tile staged at
 * scratch offset *off (advanced past it). */
bool cg_mma_operand(Cg *cg, CgOperand *o, const IrValue *v, int64_t *off);
bool cg_dot_stages(const Cg *cg, const IrOp *op);
/* One register of fp32 bits rounded to tf32 (to nearest, ties away, as
 * cvt.rna.tf32.f32), and with `small` the rounded remainder too: the
 * split of input_precision="tf32x3". */
LLVMValueRef cg_round_tf32(Cg *cg, LLVMValueRef bits, LLVMValueRef *small);
/* Tells whether this dot runs as wgmma (sm_90a, B in shared memory) and,
 * if so, emits it; scratch tiles it needs go from scratch offset `off` on. */
bool cg_emit_wgmma(Cg *cg, const IrOp *op, CgOperand *a, CgOperand *b, int64_t off);
/* Makes this thread's generic-proxy writes to shared memory visible to
 * wgmma's async proxy (before the barrier that precedes it); nothing below
 * sm_90a. */
void cg_fence_async_shared(Cg *cg);
void cg_pay_slot_wait(Cg *cg);
/* dot_wait: the registers of x once no wgmma writes them any more. */
void cg_emit_dot_wait(Cg *cg, const IrOp *op);

/* ---- codegen/async.c ------------------------------------------------------------------ */
/* cp.async copies into the pipeline's ring buffers, commit, wait. */
bool cg_emit_async(Cg *cg, const IrOp *op);
/* A conversion of a ring's slot (a shared_view no dot reads) into the
 * registers of its result's layout, read straight from the slot. */
void cg_read_ring(Cg *cg, const IrOp *op);
bool cg_passes_slot_wait(Cg *cg, const IrOp *op);
/* Lays the ring buffers out at the start of shared memory (before anything
 * else uses it). */
void cg_plan_buffers(Cg *cg);
/* At the end of a loop's body emitted with `reserved` as the scratch's
 * start: where a drain in the body let the scratch take the rings' place,
 * a barrier (and an async-proxy fence where TMA fills a ring) before the
 * next iteration's copies, and the scratch back after the rings. */
void cg_rings_back(Cg *cg, int64_t reserved);
/* Before top-level op `op`: where the scratch took the shared place of the
 * rings of runs of loops and op touches a ring, the rings' place back. */
void cg_ring_use(Cg *cg, const IrOp *op);
/* Byte offset of slot `slot` of ring buffer `buf`. */
LLVMValueRef cg_buffer_slot(Cg *cg, int buf, LLVMValueRef slot);

/* ---- codegen/tma.c -------------------------------------------------------------------- */
/* The tensor maps as kernel parameters (.param .align 64 .b8 [128], grid
 * constants), the last f->ntmaps of the kernel's n; once the kernel exists. */
void cg_tma_params(Cg *cg, int n);
/* At the kernel's start: the mbarriers of the TMA rings initialised and
 * their phase bits cleared. */
void cg_tma_setup(Cg *cg);

/* ---- codegen/tmap.c --------------------------------------------------------------- */
/* At the kernel's start: where each device map lives, this program's
 * 128 bytes of the scratch parameter. */
void cg_tmap_device_setup(Cg *cg);
/* Thread 0, before a copy through device map `map`: traps where the map
 * could not be written (cg->tmap_bad). */
void cg_tmap_check(Cg *cg, int map);
bool cg_emit_tmap(Cg *cg, const IrOp *op);

/* ---- codegen/cluster.c ------------------------------------------------------------ */
/* Whether f (num_ctas=2) can run in clusters of two: sets cg->cl, or
 * writes why not into why[0..cap) ("" when num_ctas asks for none). */
void cg_cluster_plan(Cg *cg, char *why, size_t cap);
/* Places the cluster's mbarriers and mailboxes from shared byte `at`
 * (among the TMA barriers); returns the end. */
int64_t cg_cluster_place(Cg *cg, int64_t at);
bool cg_cluster_first(const Cg *cg, const IrOp *op);
void cg_cluster_init(Cg *cg);   /* thread 0: initialises its mbarriers */
void cg_cluster_start(Cg *cg);  /* every thread, after that: meets the other CTA */
void cg_cluster_bounds(Cg *cg); /* every thread, before the first copy */
/* Every thread, at a TMA copy: whether the other CTA copies the same live
 * tile (i1), after meeting it. */
LLVMValueRef cg_cluster_share(Cg *cg, int buf, LLVMValueRef slot, LLVMValueRef inner,
                              LLVMValueRef outer, LLVMValueRef live);
LLVMValueRef cg_cluster_mine(Cg *cg, int p); /* i1: box p is this CTA's to multicast */
void cg_cluster_exit(Cg *cg);                /* every thread, at the end */
/* tma_copy, tma_wait, tma_release and tma_store. */
bool cg_emit_tma(Cg *cg, const IrOp *op);

/* ---- codegen/convert.c ---------------------------------------------------------------- */
/* op's operand in its layout to op's result in its layout, through scratch. */
CgVal cg_convert_plain(Cg *cg, const IrOp *op);
/* The transpose op (result dim d is operand dim perm[d]) through scratch. */
CgVal cg_convert_trans(Cg *cg, const IrOp *op, const int *perm);
/* The n registers of layout lo (its elements given as indices of x's
 * value, laid out by li) picked from x's, where each thread of li holds
 * the elements lo gives it; false where one crosses threads. */
bool cg_pick_registers(Cg *cg, const LinLayout *li, const LinLayout *lo, CgVal x, int n,
                       CgVal *out);

/* ---- codegen/occupancy.c ---------------------------------------------------------------- */
/* Whether ptxas is told that one resident program an SM is enough
 * (.minnctapersm 1), so that it keeps more loads in flight rather than
 * fewer registers: where memory sets the pace of the kernel's loops (a
 * loop loads, and no dot or float division runs in it), or an mma.sync
 * dot reads a resident operand from shared memory in each step. */
bool cg_one_program_enough(const IrFunc *f);

/* ---- codegen/quad.c -------------------------------------------------------------------- */
/* An 8-bit wgmma A operand converted from an accumulator's registers by
 * shuffles within quads of lanes; false (nothing emitted) where the two
 * layouts do not allow it, and the dot stages the operand. */
bool cg_convert_quad(Cg *cg, const IrOp *op);

/* ---- codegen/warp_spec.c ---------------------------------------------------------------- */
/* Registers per thread of a kernel with a producer warpgroup beside T
 * consumer threads, `programs` of which share an SM: at launch, in the
 * producer, in the consumers. */
typedef struct CgRegs {
    int entry, producer, consumer;
} CgRegs;
CgRegs cg_ws_regs(int T, int programs);
/* How many programs of the kernel share an SM, once its shared memory is
 * known (cg->smem_bytes); where two, the split's register counts are made
 * those of two. Returns the count (1 without a producer). */
int cg_ws_programs(Cg *cg);
/* The producer op: the split of the kernel into the producer warpgroup,
 * which runs the op's region in one thread and exits, and the consumers,
 * which go on with the ops after it. */
bool cg_emit_producer(Cg *cg, const IrOp *op);

/* ---- codegen/asm.c ------------------------------------------------------------------------ */
/* inline_asm (tl.inline_asm_elementwise) and gdc (griddepcontrol, sm_90+). */
bool cg_emit_asm(Cg *cg, const IrOp *op);

/* ---- codegen/flow.c ----------------------------------------------------------------------- */
bool cg_emit_flow(Cg *cg, const IrOp *op);

/* ---- codegen/random.c --------------------------------------------------------------------- */
bool cg_emit_rand(Cg *cg, const IrOp *op);

/* ---- codegen/lines.c ---------------------------------------------------------------------- */
/* With o->line_info: starts the debug info of the kernel (cg->fn made) and
 * puts the builder at its `def` line; else nothing. */
void cg_lines_begin(Cg *cg);
/* Instructions built from now on come from source position sp. */
void cg_lines_at(Cg *cg, Span sp);
/* The builder's current location, to put back after a region (NULL: none). */
LLVMMetadataRef cg_lines_get(Cg *cg);
void cg_lines_set(Cg *cg, LLVMMetadataRef loc);
/* Completes the debug info and adds the module flags the backend needs. */
void cg_lines_finish(Cg *cg);

/* ---- codegen/debug.c ---------------------------------------------------------------------- */
bool cg_emit_debug(Cg *cg, const IrOp *op);

#endif
