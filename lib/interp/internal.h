/* internal.h: internals of the reference interpreter (lib/interp/).
 * A value lives in one fixed slot of a per-thread workspace, as a dense
 * row-major array in its *storage kind*: every integer dtype, i1 and
 * pointers as int64_t (normalised: sign- or zero-extended from the dtype's
 * width), fp8/fp16/bf16/fp32 as float (holding a value exactly representable
 * in the dtype), fp64 as double. Block ops are loops over those arrays. */
/* The semantics chosen where the GPU's are loose (each file says more):
 *  - ints wrap at their width; x // 0 = -1 (all ones), x % 0 = x; shifts by
 *    the width or more give 0 (or the sign for signed >>), as PTX clamps;
 *  - float -> int truncates and saturates, NaN -> 0 (cvt.rzi.sat); fp16 and
 *    bf16 round to nearest even after every op, as the GPU's f16 ALUs do;
 *  - math and libdevice functions run in double and round once;
 *  - sum reduces as a halving tree, max/min/arg* and custom combines left to
 *    right; dot accumulates k in order in fp32, tf32 inputs rounded to 10
 *    mantissa bits (ties away) when sub == DOT_TF32, and tf32x3 as the sum
 *    of three such products in the GPU's order (shape.c);
 *  - atomics and prints run program after program (x fastest), so results
 *    and output are deterministic; other kernels may use several threads,
 *    and the error reported is always that of the lowest failing program;
 *  - atomics have Triton's semantics at their strongest: each element's
 *    read-modify-write is one indivisible step and every access of a
 *    program happens in program order, so any sem= (relaxed, acquire,
 *    release, acq_rel) and scope= (cta, gpu, sys) holds; a scalar atomic is
 *    one operation per program whose old value every thread sees, as on the
 *    GPU; masked-off elements neither touch memory nor change it and give 0;
 *  - tl.debug_barrier() (a CTA barrier on the GPU) has nothing to wait for:
 *    a program is one sequence of block ops, already in order. A spin lock
 *    works because each program runs to its end before the next starts, so
 *    a lock is always free again when the next program looks at it. */
#ifndef TK_INTERP_INTERNAL_H
#define TK_INTERP_INTERNAL_H

#include "interp/interp.h"

#include <stdatomic.h>
#include <stdio.h>

typedef enum { ST_I, ST_F, ST_D } StoreKind; /* int64_t, float, double */

static inline StoreKind interp_kind(DType dt)
{
    if (dt == DT_F64)
        return ST_D;
    if (dt == DT_F16 || dt == DT_BF16 || dt == DT_F32 || dtype_is_fp8(dt))
        return ST_F;
    return ST_I;
}
static inline size_t interp_elsize(DType dt) { return interp_kind(dt) == ST_F ? 4 : 8; }
/* Bytes of one element in global memory (i1 is one byte). */
static inline size_t interp_memsize(DType dt)
{
    int bits = dtype_bits(dt);
    return bits <= 8 ? 1 : (size_t)bits / 8;
}

/* Shared by all workers of one launch; read-only while programs run. */
typedef struct InterpLaunch {
    const IrFunc *f;
    unsigned grid[3];
    const InterpArg *args;
    InterpBuffer *bufs; /* sorted by base */
    int nbufs;
    size_t *offset; /* workspace offset of each value id */
    size_t ws_bytes;
    size_t scratch_bytes;         /* for parallel copies of loop-carried values */
    size_t tmp_bytes;             /* working arrays of reductions and dot */
    StrBuf *out;                  /* device_print text; NULL: stdout */
    uint64_t max_steps;           /* programs plus loop iterations the launch may run */
    _Atomic uint64_t *steps_used; /* steps handed out to workers so far (interp.c) */
} InterpLaunch;

/* One worker's state while it runs programs one after another. */
typedef struct InterpProg {
    const InterpLaunch *L;
    unsigned char *ws;
    unsigned char *scratch;
    unsigned char *tmp;
    unsigned pid[3];
    uint64_t pending; /* steps not yet added to the launch's count */
    uint64_t seen;    /* the launch's count when this worker last added to it */
    bool failed;
    bool over_budget; /* the failure is the step budget running out */
    Span err_span;
    StrBuf err; /* the first error's message */
} InterpProg;

static inline void *interp_slot(InterpProg *p, const IrValue *v)
{
    return p->ws + p->L->offset[v->id];
}

/* Records the first error of this program (message without position);
 * returns false so callers can `return interp_fail(...)`. */
bool interp_fail(InterpProg *p, const IrOp *op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "(i, j)" of flat element `flat` in a block of type t; "()" for scalars. */
void interp_format_index(char *buf, size_t n, Type t, int64_t flat);

/* interp.c: runs a region (custom reductions call back into it); returns
 * its terminator or NULL after an error. */
const IrOp *interp_exec_block(InterpProg *p, const IrBlock *b);

/* interp/num.c: dtype arithmetic. */
float interp_round_tf32(float f);           /* 10-bit mantissa, ties away (cvt.rna.tf32) */
double interp_round_to(DType dt, double x); /* a double rounded to a float dtype */
int64_t interp_wrap(DType dt, int64_t v);
void interp_wrap_array(DType dt, int64_t *v, int64_t n);
void interp_round_array(DType dt, float *v, int64_t n); /* fp16/bf16 rounding */
/* Converts n elements with the language's cast semantics (fp->int
 * truncates and saturates, NaN -> 0; ->i1 is != 0; floats round to nearest even). */
void interp_cast(DType from, const void *src, DType to, void *dst, int64_t n);
/* fp32 -> fp16, bf16 or fp8e5 rounded toward zero (IR_CAST with CAST_RTZ). */
void interp_cast_rtz(const float *src, DType to, float *dst, int64_t n);
double interp_get_double(DType dt, const void *arr, int64_t i);
void interp_set_double(DType dt, void *arr, int64_t i, double x);
/* The bit pattern of an element as it sits in memory, and back. */
uint64_t interp_to_bits(DType dt, const void *arr, int64_t i);
void interp_from_bits(DType dt, void *arr, int64_t i, uint64_t bits);

/* interp/elem.c: elementwise arithmetic, casts, math, pointers. */
bool interp_elementwise(InterpProg *p, const IrOp *op);

/* interp/libdevice.c: IR_EXTERN (libdevice names mapped to C math). */
bool interp_extern(InterpProg *p, const IrOp *op);
/* interp/libdevice_more.c: rounding-mode conversions and arithmetic, bit
 * casts, integer helpers; false when the name is none of them. */
bool interp_extern_more(InterpProg *p, const IrOp *op);

/* interp/shape.c: constants, shape ops, reductions, scans, gather,
 * histogram, dot, rand. */
bool interp_shape_op(InterpProg *p, const IrOp *op);
bool interp_reduce(InterpProg *p, const IrOp *op);
bool interp_scan(InterpProg *p, const IrOp *op);
bool interp_gather(InterpProg *p, const IrOp *op);
bool interp_histogram(InterpProg *p, const IrOp *op);
bool interp_dot(InterpProg *p, const IrOp *op);
bool interp_rand(InterpProg *p, const IrOp *op);

/* interp/mem.c: checked memory access and debugging ops. */
bool interp_load(InterpProg *p, const IrOp *op);
bool interp_store(InterpProg *p, const IrOp *op);
bool interp_atomic(InterpProg *p, const IrOp *op);
bool interp_print(InterpProg *p, const IrOp *op);
bool interp_assert(InterpProg *p, const IrOp *op);

#endif
