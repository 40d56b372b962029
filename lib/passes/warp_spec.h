/* warp_spec.h: the producer of a warp-specialized loop (warp_spec.c), which
 * pass pipeline_ws builds where tl.range(..., warp_specialize=True) asks and
 * every ring of the loop is filled by TMA. */
#ifndef TK_WARP_SPEC_H
#define TK_WARP_SPEC_H

#include "passes/tile.h"

/* One ring the producer fills: the tile its load reads, in TMA's terms. */
typedef struct WsRing {
    const TileMatch *tile;
    int tmap;   /* the tile's tensor map */
    int buffer; /* the ring's shared buffer */
    Span span;  /* the load's, for its copies */
} WsRing;

/* Whether a producer can run the iterations of `loop` on its own: the
 * loop's bounds and the scalars the tiles' origins read are parameters or
 * are computed from them by pure scalar ops at the top of the kernel (for
 * a flattened loop also in the ifs around it, and in its body from the
 * values it carries). */
bool ws_computable(IrFunc *f, const IrOp *loop, const WsRing *r, int n);
/* Puts the producer op first in the kernel: clones of those scalars, then
 * a loop over the iterations of `loop` (inside clones of the ifs around a
 * flattened one) that, in ring slot i % slots of iteration i, waits until
 * the consumers released the slot and copies the iteration's tiles into
 * it. Counts the producer's warps in f; false out of memory. */
bool ws_producer(IrFunc *f, const IrOp *loop, const WsRing *r, int n, int slots);

#endif
