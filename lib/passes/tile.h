/* tile.h: which loads of a loop are tiles of 2-D strided tensors, the
 * shape TMA copies (tile.c); the pipelining plan asks, the rewrites
 * compute the copies' origins from it. */
#ifndef TK_TILE_H
#define TK_TILE_H

#include "ir/ir.h"

enum { TILE_MAX_SYMS = 24, TILE_MAX_TERMS = 16, TILE_MAX_DEG = 4, TILE_FIRST_VALUE = 3 };

/* coef * sym[0] * ... * sym[deg-1], symbols sorted; symbol 0 is the
 * iteration index J, 1 and 2 the indices along dims 0 and 1 of the tile,
 * TILE_FIRST_VALUE (3) on the scalars of TileMatch.syms: loop-invariant
 * ones, and in a flattened loop scalars its body computes (tile.c). */
typedef struct TileTerm {
    int64_t coef;
    int deg;
    uint8_t sym[TILE_MAX_DEG];
} TileTerm;

typedef struct TilePoly {
    int n;
    TileTerm t[TILE_MAX_TERMS];
} TilePoly;

typedef struct TileMatch {
    IrTmap map; /* what the launcher (or, map.device, the kernel) builds */
    /* a device map's tensor: base pointer, dim 1's stride (a value, else the
     * constant stride_const) and extents (inner, outer) over syms */
    const IrValue *base, *stride;
    TilePoly extent[2];
    bool trans;                         /* the tile's dim 0 is the contiguous one */
    TilePoly coord[2];                  /* the tile's origin: inner (contiguous) and outer index */
    bool lower[2];                      /* the mask keeps coordinate which + index >= 0 */
    const IrValue *syms[TILE_MAX_SYMS]; /* where a copy is issued: their values for its iteration */
    int nsyms;
} TileMatch;

/* Whether load `ld` of the body of `loop` (a `for` counting up by a
 * constant step) reads, in iteration J, the tile whose element (r, c) is
 * base[(outer + r) * stride + inner + c] (or the transpose) of an 8- or 16-bit
 * tensor, masked exactly where r or c leave extents fixed for the launch
 * (and, if at all, where they fall below 0); fills m when it does. Where
 * base, stride or extents are values the kernel computes before the loop
 * (a tensor descriptor over a pointer loaded from a table), each known
 * aligned to 16 bytes, a descriptor's load (IRF_DESC) matches as a device
 * map (m->map.device), except in warp-specialized and flattened loops and
 * in clusters. */
bool tile_match(const IrFunc *f, const IrOp *loop, const IrOp *ld, TileMatch *m);
/* Emits, at b, the op that writes device map `map` of match m (before the
 * loop whose copies read it, where m's values are all defined). */
void tile_make_map(IrBuilder *b, Span sp, const TileMatch *m, int map);
/* The same for store `st` wherever it is (no loop: the origin is a
 * polynomial in the scalars the store reads, which tile_coord emits where
 * the store is), of 8-, 16- or 32-bit elements, of any size. */
bool tile_match_store(const IrFunc *f, const IrOp *st, TileMatch *m);
/* Emits coordinate `which` (0: inner, 1: outer) of the tile of iteration
 * index j (i32 scalar; NULL for a store's tile), as i32. */
IrValue *tile_coord(IrBuilder *b, Span sp, const TileMatch *m, int which, IrValue *j);
/* Whether each coordinate of the origin is masked below 0 or is a sum of
 * non-negative multiples of the iteration index and program ids: TMA's
 * zeros for a negative coordinate are then what the load gives, so the
 * copy needs no check for a negative origin. */
bool tile_origin_nonneg(const TileMatch *m);
/* Whether each coordinate of the origin is masked below 0 or never falls
 * as the iteration index grows: the terms with the index have
 * non-negative coefficients and factors, and every other value it reads
 * is fixed before `loop` starts. The first iteration's copy then checks
 * the smallest origin of them all, and the later copies need no check. */
bool tile_origin_grows(const TileMatch *m, const IrOp *loop);
/* The index of f's tensor map equal to t (another loop's or store's copies
 * of the same tensor: a causal attention's diagonal loop), else of t
 * appended; -1 when f has IR_MAX_TMAPS already or out of memory. One map
 * less is 128 bytes less to encode and pass at every launch. */
int tile_add_tmap(IrFunc *f, const IrTmap *t);
/* The pointer v is computed from by an op that moves it or changes only
 * its shape or layout (an offset added, a splat, a view, a hint): what it
 * points into is that pointer's; NULL for any other op. */
const IrValue *tile_pointer_source(const IrValue *v);

#endif
