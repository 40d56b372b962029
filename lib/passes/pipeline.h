/* pipeline.h: what the files of pass_pipeline share (not a public interface):
 * the state of the loop being pipelined, and the analysis of pipeline_loads.c
 * that pipeline.c's rewriting uses. */
#ifndef TK_PASSES_PIPELINE_H
#define TK_PASSES_PIPELINE_H

#include "passes/passes.h"
#include "passes/tile.h"

enum { MAX_LOADS = 8 };

typedef struct Pipe {
    IrFunc *f;
    const AxisInfo *axis;
    int *uses;          /* by value id (ids of the function before the pass) */
    int nids;
    IrOp *loop;
    IrBlock *body;
    int stages;
    int slots;          /* ring size: stages, one more under an asynchronous dot read by
                         * several warpgroups (ring_slots) */
    IrOp *dot;          /* the dot left in flight across iterations, or NULL */
    bool wgmma;         /* a wgmma dot reads the copies */
    IrOp *loads[MAX_LOADS];
    int nloads;
    IrOp **slice;
    int nslice;
    bool *carried;      /* by iter arg index */
    TileMatch *tile[MAX_LOADS]; /* TMA's view of each load, NULL: cp.async */
    int priv[MAX_LOADS];        /* elements per run of a private ring, 0: a shared tile */
    int tmap[MAX_LOADS];        /* the tensor map of a TMA load */
    int ncp;                    /* loads copied by cp.async */
    bool ws;                    /* warp-specialized: a producer issues the TMA copies */
    IrOp *ws_loop;              /* the function's warp-specialized loop, or NULL */
} Pipe;

/* pipeline_loads.c */
/* The loads of p->body to stage (p->loads, p->tile, p->priv); false: none. */
bool pipe_find_loads(Pipe *p);
/* Adds what v needs to the slice; false when the slice cannot run ahead. */
bool pipe_pull(Pipe *p, IrValue *v, int depth);
/* Every use of a value that runs ahead is inside the slice, a staged load
 * or the yield slot that carries it. */
bool pipe_slice_closed(Pipe *p);
/* The shared layout of load i's ring. */
Layout pipe_shared_for(Pipe *p, int i);

#endif
