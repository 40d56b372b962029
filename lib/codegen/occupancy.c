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
 * programs resident beside each other hide the arithmetic. And only for
 * a loop that carries values (a running sum, a search's bounds): one
 * whose iterations share nothing (a plane loop of a bilinear upsampling,
 * 32 gathers an iteration) issues its loads together anyway, and there
 * the directive cost registers (110 against 80) and a third of the
 * resident programs, 11% of the kernel's speed. */
#include "codegen/cg.h"

typedef struct {
    bool dot;     /* a tensor-core dot anywhere */
    bool load;    /* a global load inside a loop that carries values */
    bool slow;    /* a float division inside a loop */
    bool carries; /* the loop being walked carries values */
} Streams;

static bool in_loop(IrOp *o, void *ctx)
{
    Streams *s = ctx;
    if (o->kind == IR_LOAD && s->carries)
        s->load = true;
    if (o->kind == IR_DIV && dtype_is_float(o->results[0]->type.dt))
        s->slow = true;
    return true;
}

static bool anywhere(IrOp *o, void *ctx)
{
    Streams *s = ctx;
    if (o->kind == IR_DOT)
        s->dot = true;
    if (o->kind == IR_FOR || o->kind == IR_WHILE) {
        s->carries = o->nres > 0;
        for (int r = 0; r < o->nregions; r++)
            ir_walk(o->regions[r], in_loop, s);
    }
    return true;
}

bool cg_streams_memory(const IrFunc *f)
{
    Streams s = {0};
    ir_walk(f->body, anywhere, &s);
    return s.load && !s.dot && !s.slow;
}
