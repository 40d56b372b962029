/* passes.h: the map of lib/passes/. Each pass takes a verified IrFunc and
 * leaves a verified IrFunc that computes the same values; the pass manager
 * (manager.c) holds them in one table, runs the default pipeline or a
 * list a test names, prints the IR around the passes asked for, and runs
 * the verifier between them.
 * Analyses (axis.c, below) only read the IR and answer questions about it for
 * code generation. Passes allocate from the function's arena only. */
#ifndef TK_PASSES_H
#define TK_PASSES_H

#include "ir/ir.h"

/* constant folding and algebraic simplification (fold.c) */
void pass_fold(IrFunc *f);
/* loop-carried integer blocks stepped by an invariant block are made from
 * the iteration's index in the body, so they can be recomputed in any
 * layout (induction.c) */
void pass_induction(IrFunc *f);
/* a tile with one dim of size 1 loaded from an expanded vector's addresses
 * is loaded as the vector and expanded; the transpose of an expanded
 * vector is it expanded along the other dim (squeeze.c) */
void pass_squeeze(IrFunc *f);
/* a dot's accumulator that the loop resets to zeros in a branch, after the
 * dot or before it, becomes the dot's fresh flag (fresh.c); false out of
 * memory */
bool pass_fresh(IrFunc *f);
/* removes ops whose results are unused and that have no effect (dce.c) */
void pass_dce(IrFunc *f);

/* turns a loop over tiles marked tl.range(..., flatten=True) and the K
 * loop inside it into one loop over (tile, K step), so that pipelining runs
 * across tiles (flatten.c); true when it changed a loop */
bool pass_flatten(IrFunc *f);
/* gives every block value a layout and inserts convert_layout ops where a
 * use needs another (layout.c); false on out-of-memory */
bool pass_layout(IrFunc *f);
/* v is built from arange, constants, scalars and cheap elementwise or shape
 * ops, so it can be recomputed in any layout instead of moved (layout.c) */
bool pass_can_remat(const IrValue *v);
/* v is read in b (at its top level), and only by dots, as A or B, or by
 * conversions to a dot operand's layout (layout.c) */
bool pass_only_dots_read(IrBlock *b, const IrValue *v);
/* The values v is recomputed from where pass_can_remat is false: the
 * leaves (at most max, into leaves) that the ops above them, cheap
 * elementwise and shape ops, cannot recompute; -1 where there are more or
 * the tree is too large. A gathered row index broadcast into a tile of
 * pointers has one leaf, the 1-D index vector. */
int pass_remat_leaves(const IrValue *v, const IrValue **leaves, int max);
/* Whether load ld's value reaches an operand (A or B) of a dot through the
 * ops after it in its block: pass_pipeline stages such a load with the
 * kernel's stages, as Triton stages a dot's own operands. */
bool pass_reaches_dot_operand(IrFunc *f, const IrOp *ld);
/* Software pipelining, after pass_layout, for GPU code only: a plan, then
 * the rewrites that follow it. false: out of memory, or a plan (read from
 * text) the rewrite cannot follow. */
/* decides per loop and load: cp.async, private or TMA ring, stages and
 * slots, async wgmma, warp specialization; records IrPlan (pipe_plan.c) */
bool pass_pipeline_plan(IrFunc *f);
/* planned loads become copies into rings, S-1 iterations ahead (pipeline.c) */
bool pass_pipeline_rings(IrFunc *f);
/* planned dots stay in flight across iterations, read through dot_wait
 * (pipe_async.c) */
bool pass_pipeline_async(IrFunc *f);
/* planned loops get a TMA producer warpgroup (pipe_ws.c) */
bool pass_pipeline_ws(IrFunc *f);
/* the four above in order (the group `pipeline` of --passes) */
bool pass_pipeline(IrFunc *f);
/* stores of whole tiles of 2-D strided tensors outside K loops become TMA
 * stores, sm_90a with tensor maps (tma_store.c) */
bool pass_tma_store(IrFunc *f);
/* Global loads moved, with their address computations, above the pure
 * element-wise ops before them in their block (loads_early.c). */
bool pass_loads_early(IrFunc *f);
/* Bytes of shared memory the TMA store that pass_tma_store would make of
 * st would stage in a flattened loop's epilogue, beside the loop's live
 * rings (where they leave room); 0 where st is no such store. For the
 * pipeline's plan, before the rings exist. */
int64_t tma_store_flat_staging(IrFunc *f, IrOp *st);


/* ---- the pass manager (manager.c) ---- */

/* The targets whose code a pass serves in the default pipeline. */
typedef enum PassTarget {
    PASS_PTX = 1u << 0,    /* code generation */
    PASS_INTERP = 1u << 1, /* the interpreter, which runs the IR itself */
} PassTarget;

typedef struct PassInfo {
    const char *name;
    bool (*run)(IrFunc *f); /* false: the pass could not finish */
    unsigned targets;       /* PassTarget bits */
    const char *what;       /* one line saying what it does */
} PassInfo;

typedef struct PassOptions {
    const char *print_before; /* "all" or comma-separated pass names; NULL: none */
    const char *print_after;
    StrBuf *dump;     /* where the printed IR goes (NULL: nowhere) */
    bool verify_each; /* verify after every pass (always in debug builds) */
} PassOptions;

/* Where a default pipeline run stops: the IR the interpreter runs, or the
 * rest of the passes, which serve code generation only. */
typedef enum PassStage { PASS_STAGE_SPECIALIZE, PASS_STAGE_LOWER } PassStage;

const PassInfo *pass_lookup(const char *name, size_t len);
int pass_count(void);
const PassInfo *pass_at(int i);
/* The first name of a comma-separated list that names no pass (its
 * length in *len), or NULL; with all_ok, "all" names every pass. */
const char *pass_first_unknown(const char *list, bool all_ok, size_t *len);
/* Appends the names of every pass, comma-separated. */
void pass_names(StrBuf *out);
/* Checks a comma-separated list of pass names before anything runs (with
 * all_ok, "all" too); false with an error naming the option otherwise. */
bool pass_check_list(Diag *d, const char *option, const char *list, bool all_ok);
/* Runs the listed passes in order. */
bool pass_run_list(Diag *d, IrFunc *f, const char *list, const PassOptions *o);
/* Runs the default pipeline's passes of one stage, in order. */
bool pass_run_default(Diag *d, IrFunc *f, PassStage stage, const PassOptions *o);

/* ---- axis analysis (axis.c), read by code generation ---------------------- */

/* Axis analysis (Triton's AxisInfoAnalysis): for every integer or
 * pointer value, per dimension, what is known about runs of its elements,
 * so loads and stores can be vectorised. Read-only over the IR. */
/* Divisibility of 0 (and the cap for everything else). */
#define TK_AXIS_MAX_DIV ((int64_t)1 << 30)

/* Per dim d (a scalar uses index 0 as if it were a 1-element block):
 *  contiguity[d]  : split along d into aligned groups of this many
 *                   elements, each group holds consecutive (+1) values;
 *  divisibility[d]: a power of two dividing the first element of every such
 *                   group (for pointers: the address in bytes);
 *  constancy[d]   : likewise, aligned groups of this many equal values.
 * known_const/value: every element equals `value` (integers only). */
typedef struct AxisInfo {
    int rank;
    int64_t contiguity[TK_MAX_RANK], divisibility[TK_MAX_RANK], constancy[TK_MAX_RANK];
    bool known_const;
    int64_t value;
} AxisInfo;

/* One entry per value id (f->next_id of them); values the analysis knows
 * nothing about (floats, reductions...) get contiguity/divisibility/
 * constancy 1. NULL only when the arena cannot hold the table. */
AxisInfo *axis_analyze(const IrFunc *f, Arena *a);

/* How many consecutive elements of the last dim one thread may move with one
 * vector access of at most 16 bytes, given the pointer block's contiguity and
 * byte divisibility and the mask's constancy (mask may be NULL). A power of
 * two, 1 when nothing is known; the layout may lower it further. */
int axis_vector_width(const AxisInfo *ai, const IrValue *ptr, const IrValue *mask, int elem_bytes);
/* The same along dim d instead of the last. */
int axis_vector_width_along(const AxisInfo *ai, const IrValue *ptr, const IrValue *mask,
                            int elem_bytes, int d);
/* The largest power of two that divides ai's constancy along d: aligned
 * blocks of that many elements along d hold one value. */
int64_t axis_constant_block(const AxisInfo *ai, int d);
/* The dim along which ptr's elements are most contiguous (the last on ties). */
int axis_fast_dim(const AxisInfo *ai, const IrValue *ptr);

/* One line per value: "%7: contiguity=[1024] divisibility=[16] constancy=[1]". */
void axis_print(StrBuf *out, const IrFunc *f, const AxisInfo *ai);

#endif
