/* layout_internal.h: what the files of the layout pass share (layout.c:
 * blocked layouts, recomputable values, defaults and the entry;
 * layout_spread.c: mma layouts for dots and how far they spread;
 * layout_convert.c: the conversions inserted where a use needs another
 * layout; layout_carry.c: loop-carried values moved to the layout they are
 * read in). Private to lib/passes. */
#ifndef TK_PASSES_LAYOUT_INTERNAL_H
#define TK_PASSES_LAYOUT_INTERNAL_H

#include "passes/passes.h"

enum { MAX_SHAPES = 64, REMAT_BUDGET = 48, PULL_DEPTH = 8 };

typedef struct ShapeVec {
    int rank;
    int shape[TK_MAX_RANK];
    int v;
    int load_v;     /* the widest load's vector */
    int store_cap;  /* elements of the widest stored type in 16 bytes (0: no store) */
    bool has_image; /* no access: its blocked layout is the reshape image of another's */
    Layout image;
} ShapeVec;

typedef struct LayoutPass {
    IrFunc *f;
    int threads;
    ShapeVec shapes[MAX_SHAPES];
    int nshapes;
    const AxisInfo *axis;
    unsigned char *rows; /* by value id: its rows are reduced (mark_rows) */
    unsigned char *pair; /* by value id: unpacked by joins in registers (follow_pairs) */
    bool rows_wide;      /* spare warps of those dots go along N (lp_rows_wide) */
    bool ws;             /* a loop asks for warp specialization */
    bool changed;
    bool failed;
} LayoutPass;

/* layout_column.c */
/* The layout of an access along a dim other than the last, runs of at most
 * cap elements, or NULL. */
const Layout *lp_column_layout(LayoutPass *p, const IrValue *ptr, const IrValue *mask, int cap);
/* A load takes its column layout where it has one (its pointers follow). */
void lp_assign_column_load(LayoutPass *p, IrOp *op);
/* ir_walk callbacks: column layouts for loads; the chains after them; the
 * layouts of vectors broadcast into tiles. */
bool lp_assign_columns(IrOp *op, void *ctx);
bool lp_follow_columns(IrOp *op, void *ctx);
bool lp_assign_broadcast(IrOp *op, void *ctx);
/* The op after `from` in its block that reads x, or NULL. */
IrOp *lp_reader_after(IrOp *from, const IrValue *x);

/* layout.c */
const Layout *lp_blocked_of(LayoutPass *p, const Type *t);
/* The slice of l along dim, interned (p->failed when it cannot be). */
const Layout *lp_slice_of(LayoutPass *p, const Layout *l, int dim);
int lp_mem_bytes(DType dt);
/* The instruction K and the elements per 32-bit register of an mma.sync for
 * this dot, or false when it needs the FMA path. */
bool lp_mma_shape(const IrOp *op, int *instr_k, int *kpack);
bool lp_fits(const LayoutPass *p, const Layout *l, const Type *t);
bool lp_is_mma(const IrValue *v);
static inline bool lp_elementwise(IrKind k) { return ir_kind_elementwise(k); }

/* The layout every arm of branch op yields result i in, skipping arms
 * whose value is made again in any layout (zeros); NULL where they differ
 * or one has none yet. */
const Layout *lp_branch_layout(const IrOp *op, int i);
/* layout_spread.c */
bool lp_special(const IrValue *v);
bool lp_flexible(const IrValue *x);
int lp_reads_in(IrBlock *b, const IrValue *x);
bool lp_mark_rows(IrOp *op, void *ctx);
void lp_rows_wide(LayoutPass *p);
bool lp_assign_dot(IrOp *op, void *ctx);
void lp_spread_all(LayoutPass *p);
bool lp_slice_reduction(IrOp *op, void *ctx);
/* A store that crosses to one 16-byte vector a thread (layout.c). */
bool lp_store_crosses(LayoutPass *p, const IrOp *op);

/* layout_convert.c */
/* op, or the outermost loop around it whose body does not define x: where
 * a conversion of x that crosses threads is made once. */
IrOp *lp_outside_loops(IrOp *op, const IrValue *x);
bool lp_insert_converts(IrOp *op, void *ctx);
/* Small loads read only through conversions to one layout are loaded in it. */
bool lp_loads_in_place(LayoutPass *p);
/* Whether a thread of l holds at most 16 distinct elements of x. */
bool lp_few_per_thread(const LayoutPass *p, const IrValue *x, const Layout *l);

/* layout_carry.c: loop-carried values read only through conversions to one
 * layout are carried in it. */
bool lp_carry_in_place(LayoutPass *p);
/* Whether reshape op merges the last two dims of its operand, a pair
 * (size 2) held in each thread's registers next to the run of the dim
 * before it in blocked layout l (layout.c). */
bool lp_merges_pair(const IrOp *op, const Layout *l);
/* l without its last dim, where that dim is a pair in each thread's
 * registers (a join's result): its operands' layout; NULL otherwise
 * (layout.c). */
const Layout *lp_unpaired(LayoutPass *p, const Layout *l);
/* layout_reshape.c: the blocked layout of shape `to` that holds each
 * element of a reshape from `from` in blocked layout l in the same thread
 * and register (the reshape then moves no data), interned; NULL where
 * none does. */
const Layout *lp_reshape_layout(LayoutPass *p, const Layout *l, const Type *from, const Type *to);
/* The same layout, not interned (false where there is none). */
bool lp_reshape_image(const LayoutPass *p, const Layout *l, const Type *from, const Type *to,
                      Layout *out);
/* The blocked layout in which trans moves no data: its result's, made
 * from l, its operand's (back: l is the result's); interned, NULL where
 * none fits. */
const Layout *lp_trans_layout(LayoutPass *p, const Layout *l, const IrOp *trans, bool back);
/* The same layout, not interned (false where there is none). */
bool lp_trans_image(const LayoutPass *p, const Layout *l, const IrOp *trans, bool back,
                    Layout *out);

#endif
