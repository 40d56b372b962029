/* pipeline.h: what the files of software pipelining share (not a public
 * interface): the state of the loop being planned or rewritten, the load
 * analysis of pipeline_loads.c, and the pieces of the rewrites that more
 * than one pass uses. The plan (pipe_plan.c) decides and records IrPlan
 * attributes; pipeline.c (rings), pipe_async.c and pipe_ws.c rewrite from
 * them alone. */
#ifndef TK_PASSES_PIPELINE_H
#define TK_PASSES_PIPELINE_H

#include "passes/passes.h"
#include "passes/tile.h"

enum { MAX_LOADS = 8, MAX_DELAYS = 8, MAX_DELAY_ELEMS = 256 };

/* One load a loop stages: how its ring is filled. */
typedef struct PipeLoad {
    IrOp *op;
    TileMatch *tile; /* TMA's view of the load, NULL: cp.async */
    int run;         /* elements per run of a private ring, 0: a shared tile */
    int tmap;        /* the tensor map of a TMA load */
    int buf;         /* the shared buffer of its ring */
    bool refill;     /* stages-1 slots, refilled in place (IrPlan.refill) */
    bool packed;     /* a private ring holding each element once (IrPlan.packed) */
    bool across;     /* a shared tile transposed to the pointer's run (IrPlan.across) */
} PipeLoad;

typedef struct Pipe {
    /* the function */
    IrFunc *f;
    const AxisInfo *axis; /* pipe_plan.c */
    int *uses;            /* by value id (ids of the function before the pass) */
    int nids;
    int nbuf;       /* pipe_plan.c: buffers numbered so far */
    IrOp *ws_loop;  /* the function's warp-specialized loop, or NULL */
    IrOp *ws_alone; /* pipe_plan.c: a loop kept specialized by leaving short ones unplanned */
    /* the loop, as planned */
    IrOp *loop;
    IrBlock *body;
    int stages;
    int slots; /* ring size: stages, one more in a warp-specialized loop */
    IrOp *dot; /* the dot left in flight across iterations, or NULL */
    bool ws;   /* warp-specialized: a producer issues the TMA copies */
    PipeLoad ld[MAX_LOADS];
    int nloads;
    /* what follows from the plan */
    bool wgmma;   /* a wgmma dot reads the copies */
    int ncp;      /* loads copied by cp.async */
    IrOp **slice; /* the ops computing the loads' addresses, run ahead */
    int nslice;
    bool *carried; /* by iter arg index: advanced by the slice */
    /* scalars and small vectors that run ahead and that the body also
     * reads for its own iteration (pipe_rewind.c): carried S-1 iterations
     * behind the slice */
    IrValue *delay[MAX_DELAYS];
    IrValue **delayed; /* the body's arguments holding them, S-1 each */
    int ndelay;
    int body_writes; /* the body stores or writes memory: 1, 0, -1 not yet known */
    /* pipeline.c: the cp.async group of each load's copies within an
     * iteration, by the order of their refill points; 1 group, or more */
    int group[MAX_LOADS];
    int ngroups;
} Pipe;

/* pipeline.c: what the rewrites share */
/* Whether other threads read what load i's copies write. */
bool pipe_read_by_others(const Pipe *p, int i);
/* Allocates p's tables and counts the uses of f's values; false out of memory. */
bool pipe_init(Pipe *p, IrFunc *f);
/* Fills p from the plan of `loop` (a PIPE_LOOP for): its loads, their
 * rings and TMA tiles, and the address slice that runs ahead; false where
 * the plan cannot be followed (a plan written by hand for a loop the
 * analysis would leave alone). */
bool pipe_from_plan(Pipe *p, IrOp *loop);
/* A new `for` in place of p->loop with more carried slot counters, each
 * unless NULL: the one the body reads, the one its copies write (not where
 * a producer writes), the one refilled rings read and write (stages-1
 * slots); carried values start from ahead[]. */
IrOp *pipe_widen_loop(Pipe *p, IrValue **ahead, IrValue **rd, IrValue **wr, IrValue **rf);
/* A new `for` in place of p->loop carrying n more values, which start from
 * init[] and are the body's arguments args[] (named after init[]). */
IrOp *pipe_carry_more(Pipe *p, IrValue **init, int n, IrValue **args);
/* The slots of load i's ring. */
int pipe_ring_slots(const Pipe *p, int i);
/* Load i becomes a view of its ring's slot rd. */
IrValue *pipe_view_ring(Pipe *p, int i, IrValue *rd);
/* The yield of the body with one more value. */
void pipe_yield_also(Pipe *p, IrOp *yield, IrValue *x);
/* Bytes of tile v's elements. */
int64_t pipe_tile_bytes(const IrValue *v);
/* The dot, a direct child of the body, that alone reads load i (through
 * layout conversions and transposes); NULL when something else reads it. */
IrOp *pipe_ring_dot(const Pipe *p, int i);
/* How many operands of ops in b (nested too) are x. */
int pipe_reads_in(IrBlock *b, const IrValue *x);
/* Whether op reads x, as an operand or inside its regions. */
bool pipe_op_reads(IrOp *op, const IrValue *x);
/* Reads of x inside the regions of the body's ifs. */
int pipe_uses_in_ifs(const Pipe *p, const IrValue *x);
/* v without the layout conversions and transposes applied to it. */
const IrValue *pipe_strip_views(const IrValue *v);
/* Whether v is (a layout conversion of) one of p's loads. */
bool pipe_is_load_of(const Pipe *p, const IrValue *v);
/* Whether an sm_90a dot of the body reads an operand from the rings. */
bool pipe_reads_as_wgmma(const Pipe *p);
/* Collects the planned `for`s of f, in order. */
void pipe_planned_loops(IrFunc *f, PtrVec *out);

/* pipeline_loads.c */
/* The loads of p->body to stage (p->ld); false: none. */
bool pipe_find_loads(Pipe *p);
/* The loop's step when it is a constant of at least 1, else 0. */
int64_t pipe_const_step(const IrOp *loop);
/* Whether the loop's step is a constant of at least 1, or a scalar the loop
 * does not compute (a parameter, num_programs): its copies can run ahead. */
bool pipe_step_ok(const IrOp *loop);
/* iv has not passed the loop's bound, for its step's sign (a runtime step
 * may be negative; tk's loops count down then). */
IrValue *pipe_in_range(IrBuilder *b, Span sp, const IrOp *loop, IrValue *iv);
/* Adds what v needs to the slice; false when the slice cannot run ahead. */
bool pipe_pull(Pipe *p, IrValue *v, int depth);
/* Drops from p's loads those the slice runs ahead itself. */
void pipe_drop_slice_loads(Pipe *p);
/* Every use of a value that runs ahead is inside the slice, a staged load
 * or the yield slot that carries it. */
bool pipe_slice_closed(Pipe *p);
/* pipe_slice_closed, after adding to the slice each scalar load of the
 * body whose address it can compute ahead and whose uses can take the
 * value S-1 iterations late (pipe_delay): a block's scale, read as
 * Triton's pipeline reads it, S-1 iterations before its use, instead of
 * just before the dot whose result it scales (the load's latency then
 * stalls the softmax, and ptxas schedules around it badly). */
bool pipe_slice_closed_with_scalars(Pipe *p);
/* The shared layout of load i's ring. */
Layout pipe_shared_for(Pipe *p, int i);
/* The shared tile a cp.async copy of load ld fills (its run contiguous). */
Layout pipe_load_tile(const Pipe *p, const IrOp *ld);
/* Whether transpose o reads x, directly or through a register conversion
 * nothing else reads. */
bool pipe_trans_reads(const Pipe *p, const IrOp *o, const IrValue *x);
/* A 2-D shared tile's layout read the other way round: its order swapped
 * (a transpose of a ring's slot or a resident buffer, which codegen reads
 * in place); NULL when out of memory. */
const Layout *pipe_shared_transposed(IrFunc *f, const Layout *l);
/* Whether op computes a value and nothing else (a slice may hold it). */
bool pipe_pure_op(const IrOp *op);
/* Whether v is defined in p's loop body (by an op or as an argument). */
bool pipe_in_body(const Pipe *p, const IrValue *v);
/* Whether op is in the address slice. */
bool pipe_in_slice(const Pipe *p, const IrOp *op);
/* Whether x runs ahead: a carried argument the slice advances, or a slice
 * value computed from one. */
bool pipe_runs_ahead(const Pipe *p, const IrValue *x);
/* Whether o is one of the loads p pipelines. */
bool pipe_is_planned_load(const Pipe *p, const IrOp *o);

/* pipe_rewind.c */
/* Whether v, which runs ahead, can be computed again for the current
 * iteration: from carried arguments that move by a constant step. */
bool pipe_rewindable(const Pipe *p, const IrValue *v, int depth);
/* In the widened body, every op outside the slice that reads a value
 * running ahead reads it for its own iteration. */
void pipe_rewind_reads(Pipe *p);
/* Whether v, a value that runs ahead, can be carried S-1 iterations
 * behind the slice for the body's reads (a scalar, or a vector of up to
 * 256 elements); records it. */
bool pipe_delay(Pipe *p, IrValue *v);
/* In the widened loop, before the slice is cloned: the delayed values'
 * arguments, started from init[] (S-1 per value, the prologue's
 * iterations 0 .. S-2), and every read outside the slice moved to them. */
bool pipe_delay_reads(Pipe *p, IrValue **init);
/* After the slice's clone for iteration i+S-1 (map): each delayed value's
 * arguments shift by one and take that iteration's value last. */
void pipe_delay_yield(Pipe *p, IrValue **map);
/* Whether cp.async can copy ld's pointees (runs of 4, 8 or 16 bytes). */
bool pipe_copyable(const Pipe *p, const IrOp *ld);
/* Whether a ring of ld (through TMA tile m, or cp.async where NULL) holds
 * it in an order the dot operand layout dop can read, read through one
 * transpose where trans; filled across (IrPlan.across) where across. */
bool pipe_ring_order_fits(const Pipe *p, const IrOp *ld, const Layout *dop, const TileMatch *m,
                          bool trans, bool across);

/* pipe_resident.c */
/* Plans the loads that become resident operands (PIPE_RESIDENT), from
 * buffer p->nbuf on, after the loops are planned. */
void pipe_plan_resident(Pipe *p);
/* Carries out the resident plans: each such load becomes a copy into its
 * buffer, and the dots read a view of it. */
void pipe_resident_rewrite(IrFunc *f);

/* pipe_refill.c: refill points and copy groups of rings refilled in place */
/* Each load's early refill point in the body (NULL: at the body's end),
 * from the values reading its slot (views[i]). */
void pipe_early_points(Pipe *p, IrValue *const *views, IrOp **early);
/* p->group and p->ngroups, before the prologue copies group by group. */
void pipe_plan_groups(Pipe *p);
/* The waits for each group before its first reader; top is the body's
 * first wait. */
void pipe_wait_for_groups(Pipe *p, IrOp *top, IrValue *const *views, IrOp *const *early);

#endif
