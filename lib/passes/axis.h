/* axis.h: axis analysis (Triton's AxisInfoAnalysis): for every integer or
 * pointer value, per dimension, what is known about runs of its elements,
 * so loads and stores can be vectorised. Read-only over the IR. */
#ifndef TK_AXIS_H
#define TK_AXIS_H

#include "ir/ir.h"

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
/* The dim along which ptr's elements are most contiguous (the last on ties). */
int axis_fast_dim(const AxisInfo *ai, const IrValue *ptr);

/* One line per value: "%7: contiguity=[1024] divisibility=[16] constancy=[1]". */
void axis_print(StrBuf *out, const IrFunc *f, const AxisInfo *ai);

#endif
