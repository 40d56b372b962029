/* passes.h: the map of lib/passes/. Each pass takes a verified IrFunc and
 * leaves a verified IrFunc that computes the same values; the pipeline
 * (lib/pipeline.c) runs fold, dce, then layout assignment, and the
 * verifier between them.
 * Analyses (axis.h) only read the IR and answer questions about it for
 * code generation. Passes allocate from the function's arena only. */
#ifndef TK_PASSES_H
#define TK_PASSES_H

#include "ir/ir.h"

/* constant folding and algebraic simplification (fold.c) */
void pass_fold(IrFunc *f);
/* removes ops whose results are unused and that have no effect (dce.c) */
void pass_dce(IrFunc *f);
/* hoists loop-invariant pure ops out of `for` bodies, then merges equal pure
 * ops (common subexpressions); run between pass_fold and pass_dce (cse.c) */
void pass_cse(IrFunc *f);

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
/* turns the loads feeding tensor-core dots in `for` loops with num_stages
 * >= 2 into cp.async copies S-1 iterations ahead (pipeline.c); after
 * pass_layout, for GPU code only */
void pass_pipeline(IrFunc *f);

#endif
