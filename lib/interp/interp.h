/* interp.h: the interface of the reference interpreter (lib/interp/):
 * runs a kernel's block IR on the CPU over host buffers, every access
 * checked. Below it: ir/. Its internals are in interp/internal.h. */
#ifndef TK_INTERP_H
#define TK_INTERP_H

#include "ir/ir.h"

/* A host buffer the interpreter may touch; every access is checked against these. */
typedef struct InterpBuffer {
    const char *name; /* for messages; may be NULL */
    unsigned char *base;
    size_t bytes;
} InterpBuffer;

typedef struct InterpMemory {
    const InterpBuffer *bufs;
    int nbufs;
} InterpMemory;

/* One slot per runtime parameter, in order: the address for pointers, the
 * value for scalars (ints in i/u at their width, floats in f). */
typedef union InterpArg {
    int64_t i;
    uint64_t u;
    double f;
    void *p;
} InterpArg;

/* How a launch runs. threads > 1 lets programs run in parallel when the
 * kernel has no atomics and no prints (0: one thread per CPU); errors are
 * those of the lowest failing program either way. max_steps bounds the
 * work of one launch: every program started and every loop iteration
 * (for and while back-edges) is one step (0: INTERP_DEFAULT_MAX_STEPS).
 * device_print text goes to `out` (stdout when NULL). */
typedef struct InterpOptions {
    int threads;
    uint64_t max_steps;
    StrBuf *out;
} InterpOptions;

/* 2**17 times what the largest launch of the test suite takes (under
 * 2**13), and a minute or two of a loop that does nothing (about 80 ns a
 * step): a runaway kernel stops, and no real one gets near it. */
#define INTERP_DEFAULT_MAX_STEPS ((uint64_t)1 << 30)

typedef enum InterpResult {
    INTERP_OK,
    INTERP_FAULT,       /* the kernel went wrong: out of bounds, assert, unsupported op */
    INTERP_NO_MEMORY,   /* the host had no memory for the workspaces (not the kernel's fault) */
    INTERP_OVER_BUDGET, /* the launch ran past max_steps; what it stored so far stays */
    INTERP_BAD_GRID     /* an empty grid, or more programs than the budget or host can count */
} InterpResult;

/* Runs every program of the grid. An out-of-bounds access, a failed
 * device_assert, an unsupported op or the step budget running out stops the
 * launch with an error in d naming the kernel, the program id and (for
 * accesses) the element and the address, at the op's source position. */
InterpResult interp_run(const IrFunc *f, const unsigned grid[3], const InterpArg *args,
                        const InterpMemory *mem, const InterpOptions *o, Diag *d);
/* interp_run with the default budget: true when it ran to the end. */
bool interp_launch(const IrFunc *f, const unsigned grid[3], const InterpArg *args,
                   const InterpMemory *mem, int threads, Diag *d, StrBuf *out);

/* fp16 and bf16 from and to float as the GPU rounds (num.c); the public
 * tk_f32_to_f16 and its kin are these. */
float interp_f16_to_float(uint16_t h);
uint16_t interp_float_to_f16(float f); /* round to nearest even */
float interp_bf16_to_float(uint16_t h);
uint16_t interp_float_to_bf16(float f); /* round to nearest even */

#endif
