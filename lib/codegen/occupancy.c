/* What the kernel tells ptxas about occupancy.
 *
 * Given only .maxntid, ptxas compiles a kernel as a whole program for as
 * many resident programs as it can, and holds registers down to get them:
 * in a loop it unrolls, it then issues a load or two, adds them up, and
 * only then issues the next. A loop that streams memory wants the
 * opposite: the more of its loads are in flight at once, the closer it
 * runs to the memory's bandwidth, whatever the occupancy. On an H100, a
 * row sum over 131072 columns with one program per SM ran at 1169 GB/s
 * with 32 registers and at 1626 GB/s with 54, all eight loads of four
 * unrolled iterations issued before the first add; a layer norm of 8192
 * columns went from 2532 to 2792 GB/s, from 64 registers to 121.
 *
 * .minnctapersm 1 says that one resident program an SM is enough, which
 * lifts that target. It is asked for only where memory sets a loop's
 * pace: the same change made GEMM epilogues (tensor-core dots) and
 * Welford loops (a division per element) 18-22% slower, since there the
 * programs resident beside each other hide the arithmetic; libdevice's
 * math (long_math) counts as such arithmetic. And only for
 * a loop that carries values (a running sum, a search's bounds): one
 * whose iterations share nothing (a plane loop of a bilinear upsampling,
 * 32 gathers an iteration) issues its loads together anyway, and there
 * the directive cost registers (110 against 80) and a third of the
 * resident programs, 11% of the kernel's speed.
 *
 * It is also asked for where an mma.sync dot in a loop reads an operand
 * that every warp holds whole from shared memory in each step (a decode's
 * query, kept resident by pipe_resident.c). There each warp's products
 * form one chain, each waiting on its ldmatrix, and ptxas, holding the
 * registers under the count of its next occupancy step, read each
 * fragment just before its product: on an H200, MLA's decode over a
 * 512-wide latent query took 168 registers and 0.282 ms so, and 222
 * registers and 0.228 ms with the fragments read ahead. A skinny GEMM of
 * the same dot shape that streams its weights through registers (split-K
 * AWQ) lost 6% to the same directive, so it goes with the resident
 * operand only. */
#include "codegen/cg.h"

typedef struct {
    bool dot;      /* a tensor-core dot anywhere */
    bool load;     /* a global load inside a loop that carries values */
    bool slow;     /* a float division or libdevice math inside a loop */
    bool carries;  /* the loop being walked carries values */
    bool resident; /* an mma.sync dot reads a resident operand (reads_resident) */
} Streams;

/* Math that libdevice computes (a logarithm, a sine, erf, tanh, every
 * fp64 function, a libdevice call): a dozen or more fmas an element, which,
 * as a division's work, the programs resident beside each other hide. A
 * row-wise KL divergence (a logarithm an element, 32 bf16 elements a
 * thread) took 80 registers under the directive and 32 without, as
 * Triton's. */
static bool long_math(const IrOp *o)
{
    if (o->kind == IR_EXTERN)
        return true;
    if (o->kind != IR_MATH)
        return false;
    switch ((MathFn)o->sub) {
    case MATH_LOG:
    case MATH_LOG2:
    case MATH_SIN:
    case MATH_COS:
    case MATH_ERF:
    case MATH_TANH: return true;
    default: return o->results[0]->type.dt == DT_F64;
    }
}

static bool in_loop(IrOp *o, void *ctx)
{
    Streams *s = ctx;
    if (o->kind == IR_LOAD && s->carries)
        s->load = true;
    if ((o->kind == IR_DIV && dtype_is_float(o->results[0]->type.dt)) || long_math(o))
        s->slow = true;
    return true;
}

/* An mma.sync dot in a loop whose operand is converted from a shared
 * buffer made outside every loop (pipe_resident's one-slot copy of a
 * loop-invariant tile). */
static bool reads_resident(const IrOp *dot)
{
    const Layout *m = dot->nres == 1 ? dot->results[0]->layout : NULL;
    if (!m || m->kind != LY_MMA || m->version == 3 || !cg_in_loop(dot))
        return false;
    for (int i = 0; i < 2 && i < dot->nops; i++) {
        const IrOp *c = dot->operands[i]->def;
        const IrOp *v = c && c->kind == IR_CONVERT_LAYOUT ? c->operands[0]->def : NULL;
        if (v && v->kind == IR_SHARED_VIEW && !cg_in_loop(v))
            return true;
    }
    return false;
}

static bool anywhere(IrOp *o, void *ctx)
{
    Streams *s = ctx;
    if (o->kind == IR_DOT) {
        s->dot = true;
        s->resident |= reads_resident(o);
    }
    if (o->kind == IR_FOR || o->kind == IR_WHILE) {
        s->carries = o->nres > 0;
        for (int r = 0; r < o->nregions; r++)
            ir_walk(o->regions[r], in_loop, s);
    }
    return true;
}

bool cg_one_program_enough(const IrFunc *f)
{
    Streams s = {0};
    ir_walk(f->body, anywhere, &s);
    return s.resident || (s.load && !s.dot && !s.slow);
}
