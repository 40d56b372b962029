/* layout.h: which thread of a program holds which element of a block value.
 * Every block value of a function that went through pass_layout carries one
 * (IrValue.layout); scalars and the interpreter ignore them, since a layout
 * changes no values. Kinds follow Triton's TritonGPU layouts:
 *
 *   blocked  size-per-thread x threads-per-warp x warps-per-CTA, `order`
 *            listing dims fastest first; the tile repeats (more registers)
 *            over a larger shape and wraps (copies) over a smaller one
 *   slice    the parent layout with dim `dim` removed (reduction results)
 *   mma      the accumulator of mma.sync m16n8kK, warps wm x wn (M first);
 *            version 3 is the same placement computed by sm_90a warpgroup
 *            MMA (wgmma m64nNk16): every warp along M, four warps (one
 *            warpgroup) per 64 rows; the instruction's N is the dot's
 *            (at most 256), not part of the placement
 *   dot_op   the A (opidx 0) or B (1) fragments feeding an mma parent;
 *            `kpack` elements share one 32-bit register (2 for 16-bit
 *            types, 4 for 8-bit, 1 for tf32)
 *   shared   shared memory, swizzled in `vec`-element groups: row r's group
 *            g is stored at g ^ ((r / per_phase) % max_phase)
 *
 * Every distributed kind (all but shared) has a linear form (LinLayout): each
 * bit of a thread's register index and of its thread index names one element
 * offset, and an element's row-major index is the XOR of the offsets of the
 * set bits. Shapes are powers of two, so this covers every kind exactly; an
 * offset of 0 means the bit selects a copy (broadcast). Code generation works
 * from the linear form only. */
#ifndef TK_LAYOUT_H
#define TK_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "support/base.h"

#define TK_LAYOUT_MAX_RANK 4

typedef enum {
    LY_BLOCKED, /* spt, tpw, wpc, order */
    LY_SLICE,   /* parent, dim */
    LY_MMA,     /* wm, wn, instr_k (16, 8 or 32) */
    LY_DOT_OP,  /* parent (mma), opidx, kpack */
    LY_SHARED,  /* vec, per_phase, max_phase, order */
} LayoutKind;

typedef struct Layout {
    LayoutKind kind;
    int rank;
    int spt[TK_LAYOUT_MAX_RANK], tpw[TK_LAYOUT_MAX_RANK], wpc[TK_LAYOUT_MAX_RANK];
    int order[TK_LAYOUT_MAX_RANK]; /* blocked, shared: dims fastest first */
    const struct Layout *parent;   /* slice, dot_op */
    int dim;                       /* slice */
    int wm, wn, instr_k;           /* mma */
    int version;                   /* mma: 3 for wgmma (wn == 1), else mma.sync */
    int opidx, kpack;              /* dot_op */
    int vec, per_phase, max_phase; /* shared */
    int id;                        /* index in the function's table, for printing */
} Layout;

#define TK_LIN_MAX_REG 24
#define TK_LIN_MAX_THREAD 10 /* up to 1024 threads */

typedef struct LinLayout {
    int nreg;    /* a thread holds 1 << nreg registers */
    int nthread; /* log2 of the threads per program */
    int64_t reg[TK_LIN_MAX_REG];
    int64_t thread[TK_LIN_MAX_THREAD]; /* lane bits 0..4, then warp bits */
} LinLayout;

/* The linear form of l for a value of `shape` (rank dims, powers of two) in a
 * program of `threads` threads. False when the shape does not fit the kind
 * (e.g. an mma tile larger than the value) or needs too many registers. */
bool layout_linear(const Layout *l, int rank, const int *shape, int threads, LinLayout *out);
/* The element index held in register `reg` of thread `tid` (for tests and
 * the interpreter's checks). */
int64_t lin_index(const LinLayout *ll, int64_t reg, int64_t tid);
/* Registers 0..v-1 hold v consecutive elements of the last dim: the widest
 * vector one access can move. */
int lin_contiguous(const LinLayout *ll);
/* Registers 0..v-1 hold v consecutive elements of one dim (*dim): the run
 * a vector access moves when that dim is contiguous in memory. */
int lin_run(const LinLayout *ll, int rank, const int *shape, int *dim);
/* Thread bits whose offset is 0 (copies of another thread's elements), and
 * register bits likewise. */
int64_t lin_thread_copies(const LinLayout *ll);
int64_t lin_reg_copies(const LinLayout *ll);
bool lin_equal(const LinLayout *a, const LinLayout *b);

bool layout_equal(const Layout *a, const Layout *b);
/* "blocked<spt=[1,4], tpw=[8,4], wpc=[4,1], order=[1,0]>" and the like. */
void layout_print(StrBuf *sb, const Layout *l);

/* Triton's default blocked layout for a shape: `vec` contiguous elements of
 * the last dim per thread, lanes then warps filling dims fastest first. */
Layout layout_blocked_default(int rank, const int *shape, int vec, int threads);
/* The same with dim `fast` first (contiguous in memory), the others after it
 * from the last dim down: a tile loaded column by column. */
Layout layout_blocked_along(int rank, const int *shape, int fast, int vec, int threads);
/* The warps of an mma accumulator tile: split between M and N so that each
 * warp covers a share as square as the instruction allows. */
Layout layout_mma(int M, int N, int num_warps, int instr_k);
Layout layout_dot_op(const Layout *mma, int opidx, int kpack);
/* An mma accumulator with every warp along M (as many as M has 16-row
 * tiles): each row lives in one warp. */
Layout layout_mma_rows(int M, int num_warps, int instr_k);
/* The accumulator of sm_90a warpgroup MMA of K `instr_k` per instruction
 * (16 for 16-bit operands, 8 for tf32, 32 for 8-bit): layout_mma_rows with
 * every warp along M (M a multiple of 16 * num_warps). */
Layout layout_wgmma(int M, int num_warps, int instr_k);
/* Whether the operands of a dot with accumulator layout `mma`, of
 * `elem_bytes`-byte elements, must lie K-major (K contiguous) in shared
 * memory: wgmma (version 3) transposes 16-bit tiles only. */
bool layout_needs_kmajor(const Layout *mma, int elem_bytes);
/* The element-index bits that hold dim `dim`'s coordinate. */
int64_t lin_dim_bits(int rank, const int *shape, int dim);
/* A row-major tile in shared memory swizzled in 16-byte chunks, so that the
 * eight rows one ldmatrix reads fall in different banks: rows shorter than
 * 128 bytes share a phase (per_phase rows), and the phase XORs the chunk. */
Layout layout_shared_tile(int rows, int cols, int elem_bytes);

#endif
