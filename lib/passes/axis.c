/* axis.c: axis analysis: contiguity, divisibility and constancy of every
 * integer and pointer value, per dimension, following the semantics of
 * Triton's AxisInfoAnalysis (rules re-derived here, see each comment).
 * Assumes verified IR; guarantees only facts that hold for every launch
 * (parameters contribute only their divisibility-by-16 specialisation), and
 * a fixpoint for loop-carried values (iteration from the initial values,
 * joined with what the body yields). */
#include "passes/passes.h"

#include <string.h>

typedef struct Axis {
    const IrFunc *f;
    AxisInfo *info; /* by id */
    int nids;
} Axis;

/* ---- lattice helpers ---------------------------------------------------- */

/* On magnitudes, in unsigned arithmetic: -INT64_MIN does not fit. The
 * lattice values are capped far below 2^63; were one not, 1 is the answer
 * that claims nothing. */
static int64_t gcd64(int64_t a, int64_t b)
{
    uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a;
    uint64_t y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return x > (uint64_t)INT64_MAX ? 1 : (int64_t)x;
}

static int64_t gcd3(int64_t a, int64_t b, int64_t c) { return gcd64(gcd64(a, b), c); }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static int64_t pow2_div(int64_t v)
{
    if (v == 0)
        return TK_AXIS_MAX_DIV;
    uint64_t u = (uint64_t)v, low = u & (~u + 1); /* 2^63 for INT64_MIN */
    return low > (uint64_t)TK_AXIS_MAX_DIV ? TK_AXIS_MAX_DIV : (int64_t)low;
}

static int64_t mul_div(int64_t a, int64_t b)
{
    return a > TK_AXIS_MAX_DIV / (b > 0 ? b : 1) ? TK_AXIS_MAX_DIV : a * b;
}

static int nd(int rank) { return rank > 0 ? rank : 1; }
static int64_t dim(Type t, int d) { return t.rank > 0 ? t.shape[d] : 1; }

static AxisInfo pessimistic(int rank)
{
    AxisInfo r;
    memset(&r, 0, sizeof r);
    r.rank = rank;
    for (int d = 0; d < nd(rank); d++)
        r.contiguity[d] = r.divisibility[d] = r.constancy[d] = 1;
    return r;
}

static const AxisInfo *get(const Axis *ax, const IrValue *v)
{
    static AxisInfo none = {0, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, false, 0};
    return v && v->id >= 0 && v->id < ax->nids ? &ax->info[v->id] : &none;
}

static void set(Axis *ax, const IrValue *v, AxisInfo ai)
{
    if (v && v->id >= 0 && v->id < ax->nids)
        ax->info[v->id] = ai;
}

static bool is_int_like(Type t) { return dtype_is_int(t.dt) || t.dt == DT_PTR; }

static bool const_is(const AxisInfo *a, int64_t v) { return a->known_const && a->value == v; }

/* Every element along d is part of one run covering the whole dim. */
static bool contiguous_dim(const AxisInfo *a, Type t, int d)
{
    return a->contiguity[d] == dim(t, d);
}
static bool constant_dim(const AxisInfo *a, Type t, int d) { return a->constancy[d] == dim(t, d); }

/* Divisibility of a value that is either a or b element-wise: the run
 * starts of the merged value are run starts of both only when contiguity is
 * the same, otherwise elements inside runs count too. */
static int64_t merged_div(const AxisInfo *a, const AxisInfo *b, int d)
{
    if (a->contiguity[d] == b->contiguity[d])
        return gcd64(a->divisibility[d], b->divisibility[d]);
    return gcd64(gcd64(a->divisibility[d], b->divisibility[d]),
                 gcd64(a->contiguity[d], b->contiguity[d]));
}

static AxisInfo join(const AxisInfo *a, const AxisInfo *b)
{
    AxisInfo r = pessimistic(a->rank);
    for (int d = 0; d < nd(a->rank); d++) {
        r.contiguity[d] = gcd64(a->contiguity[d], b->contiguity[d]);
        r.divisibility[d] = merged_div(a, b, d);
        r.constancy[d] = gcd64(a->constancy[d], b->constancy[d]);
    }
    r.known_const = a->known_const && b->known_const && a->value == b->value;
    r.value = r.known_const ? a->value : 0;
    return r;
}

static bool same_info(const AxisInfo *a, const AxisInfo *b)
{
    return memcmp(a->contiguity, b->contiguity, sizeof a->contiguity) == 0 &&
        memcmp(a->divisibility, b->divisibility, sizeof a->divisibility) == 0 &&
        memcmp(a->constancy, b->constancy, sizeof a->constancy) == 0 &&
        a->known_const == b->known_const && a->value == b->value;
}

/* A known constant over the whole type. */
static AxisInfo constant(Type t, int64_t v)
{
    AxisInfo r = pessimistic(t.rank);
    for (int d = 0; d < nd(t.rank); d++) {
        r.divisibility[d] = pow2_div(v);
        r.constancy[d] = dim(t, d);
    }
    r.known_const = true;
    r.value = v;
    return r;
}

/* ---- per-op transfer functions ---------------------------------------------- */

static int elem_bytes(Type ptr)
{
    int b = dtype_bits(ptr.elem) / 8;
    return b > 0 ? b : 1;
}

/* add / sub / addptr: a run of b's consecutive values plus a constant run
 * of a stays consecutive (and vice versa); sub only with a constant rhs. */
static AxisInfo rule_add(const IrOp *op, const AxisInfo *a, const AxisInfo *b)
{
    Type t = op->results[0]->type;
    int64_t scale = op->kind == IR_ADDPTR ? elem_bytes(op->operands[0]->type) : 1;
    if (a->known_const && b->known_const) {
        uint64_t x = (uint64_t)a->value, y = (uint64_t)b->value * (uint64_t)scale;
        return constant(t, (int64_t)(op->kind == IR_SUB ? x - y : x + y));
    }
    AxisInfo r = pessimistic(t.rank);
    for (int d = 0; d < nd(t.rank); d++) {
        if (op->kind == IR_SUB)
            r.contiguity[d] = gcd64(a->contiguity[d], b->constancy[d]);
        else
            r.contiguity[d] = max64(gcd64(a->constancy[d], b->contiguity[d]),
                                    gcd64(a->contiguity[d], b->constancy[d]));
        r.divisibility[d] = gcd64(a->divisibility[d], mul_div(b->divisibility[d], scale));
        r.constancy[d] = gcd64(a->constancy[d], b->constancy[d]);
    }
    return r;
}

/* mul: only x*1 keeps runs; a run start k*2^n times anything loses 2^n
 * once the run moves on, so contiguous operands count as divisibility 1. */
static AxisInfo rule_mul(const IrOp *op, const AxisInfo *a, const AxisInfo *b)
{
    Type t = op->results[0]->type;
    if (a->known_const && b->known_const)
        return constant(t, (int64_t)((uint64_t)a->value * (uint64_t)b->value));
    AxisInfo r = pessimistic(t.rank);
    for (int d = 0; d < nd(t.rank); d++) {
        r.contiguity[d] = const_is(b, 1) ? a->contiguity[d] : const_is(a, 1) ? b->contiguity[d] : 1;
        int64_t da = a->contiguity[d] > 1 && !const_is(b, 1) ? 1 : a->divisibility[d];
        int64_t db = b->contiguity[d] > 1 && !const_is(a, 1) ? 1 : b->divisibility[d];
        r.divisibility[d] = mul_div(da, db);
        r.constancy[d] = gcd64(a->constancy[d], b->constancy[d]);
    }
    return r;
}

/* div: a consecutive run divided by a constant is constant over
 * gcd(run, divisibilities) elements; an exact power-of-two division of
 * non-runs divides the divisibility. */
static AxisInfo rule_div(const IrOp *op, const AxisInfo *a, const AxisInfo *b)
{
    Type t = op->results[0]->type;
    if (a->known_const && b->known_const && b->value != 0 &&
        !(b->value == -1 && a->value == INT64_MIN))
        return constant(t, a->value / b->value);
    AxisInfo r = pessimistic(t.rank);
    for (int d = 0; d < nd(t.rank); d++) {
        r.contiguity[d] = const_is(b, 1) ? a->contiguity[d] : 1;
        r.constancy[d] = gcd64(a->constancy[d], b->constancy[d]);
        if (t.rank && contiguous_dim(a, t, d) && constant_dim(b, t, d))
            r.constancy[d] = max64(r.constancy[d],
                                   gcd3(a->contiguity[d], a->divisibility[d], b->divisibility[d]));
        if (const_is(a, 0) || const_is(b, 1))
            r.divisibility[d] = a->divisibility[d];
        else if (b->known_const && b->value != INT64_MIN &&
                 is_pow2(b->value < 0 ? -b->value : b->value) && a->contiguity[d] == 1)
            r.divisibility[d] =
                max64(1, a->divisibility[d] / (b->value < 0 ? -b->value : b->value));
    }
    return r;
}

/* rem: a consecutive run modulo a constant stays consecutive for
 * gcd(run, divisibilities) elements. */
static AxisInfo rule_rem(const IrOp *op, const AxisInfo *a, const AxisInfo *b)
{
    Type t = op->results[0]->type;
    if (a->known_const && b->known_const && b->value != 0 && b->value != -1)
        return constant(t, a->value % b->value);
    if (const_is(b, 1) || const_is(b, -1))
        return constant(t, 0);
    AxisInfo r = pessimistic(t.rank);
    for (int d = 0; d < nd(t.rank); d++) {
        if (t.rank && contiguous_dim(a, t, d) && constant_dim(b, t, d))
            r.contiguity[d] = gcd3(a->contiguity[d], a->divisibility[d], b->divisibility[d]);
        r.divisibility[d] = b->constancy[d] > 1 ? gcd64(a->divisibility[d], b->divisibility[d]) : 1;
        r.constancy[d] = gcd64(a->constancy[d], b->constancy[d]);
    }
    return r;
}

static AxisInfo rule_shift(const IrOp *op, const AxisInfo *a, const AxisInfo *b)
{
    Type t = op->results[0]->type;
    int bits = dtype_bits(t.dt);
    bool known_shift = b->known_const && b->value >= 0 && b->value < bits && b->value < 62;
    if (a->known_const && known_shift) {
        int64_t v = op->kind == IR_SHL ? (int64_t)((uint64_t)a->value << b->value)
            : dtype_is_signed(t.dt)
            ? (a->value < 0 ? ~(~a->value >> b->value) : a->value >> b->value)
            : (int64_t)((uint64_t)a->value >> b->value);
        return constant(t, v);
    }
    AxisInfo r = pessimistic(t.rank);
    int64_t shift = known_shift ? b->value : 0;
    for (int d = 0; d < nd(t.rank); d++) {
        r.contiguity[d] = const_is(b, 0) ? a->contiguity[d] : 1;
        r.constancy[d] = gcd64(a->constancy[d], b->constancy[d]);
        int64_t da = a->contiguity[d] > 1 && shift ? 1 : a->divisibility[d];
        if (op->kind == IR_SHL)
            r.divisibility[d] = mul_div(da, (int64_t)1 << min64(shift, 30));
        else if (known_shift)
            r.divisibility[d] = max64(1, da >> shift);
    }
    return r;
}

static AxisInfo rule_bitwise(const IrOp *op, const AxisInfo *a, const AxisInfo *b)
{
    Type t = op->results[0]->type;
    if (a->known_const && b->known_const) {
        int64_t v = op->kind == IR_AND ? a->value & b->value
            : op->kind == IR_OR        ? a->value | b->value
                                       : a->value ^ b->value;
        return constant(t, v);
    }
    AxisInfo r = pessimistic(t.rank);
    for (int d = 0; d < nd(t.rank); d++)
        r.constancy[d] = gcd64(a->constancy[d], b->constancy[d]);
    return r;
}

static AxisInfo rule_minmax(const IrOp *op, const AxisInfo *a, const AxisInfo *b)
{
    Type t = op->results[0]->type;
    if (a->known_const && b->known_const) {
        bool lt =
            dtype_is_signed(t.dt) ? a->value < b->value : (uint64_t)a->value < (uint64_t)b->value;
        bool take_a = op->kind == IR_MIN ? lt : !lt;
        return constant(t, take_a ? a->value : b->value);
    }
    AxisInfo r = join(a, b);
    r.known_const = false;
    return r;
}

/* cmp: i1 results; a consecutive run against a constant only flips once,
 * at a point aligned to the divisibilities, for lt/ge (run on the left) and
 * gt/le (run on the right). */
static AxisInfo rule_cmp(const IrOp *op, const AxisInfo *a, const AxisInfo *b)
{
    Type t = op->results[0]->type;
    Type ot = op->operands[0]->type;
    if (!is_int_like(ot))
        return pessimistic(t.rank);
    AxisInfo r = pessimistic(t.rank);
    CmpPred p = (CmpPred)op->sub;
    bool sg = dtype_is_signed(ot.dt);
    if (a->known_const && b->known_const) {
        int64_t x = a->value, y = b->value;
        bool lt = sg ? x < y : (uint64_t)x < (uint64_t)y;
        bool v = p == CMP_EQ ? x == y
            : p == CMP_NE    ? x != y
            : p == CMP_LT    ? lt
            : p == CMP_LE    ? lt || x == y
            : p == CMP_GT    ? !lt && x != y
                             : !lt;
        return constant(t, v);
    }
    for (int d = 0; d < nd(t.rank); d++) {
        int64_t c = gcd64(a->constancy[d], b->constancy[d]);
        if (t.rank && (p == CMP_GT || p == CMP_LE) && constant_dim(a, ot, d))
            c = max64(c, gcd3(b->contiguity[d], a->divisibility[d], b->divisibility[d]));
        else if (t.rank && (p == CMP_LT || p == CMP_GE) && constant_dim(b, ot, d))
            c = max64(c, gcd3(a->contiguity[d], a->divisibility[d], b->divisibility[d]));
        r.constancy[d] = c;
    }
    return r;
}

/* x != 0 of an integer (a mask written `tl.where(c, 1, 0).to(tl.int1)`):
 * equal where x is, so runs of it stay masks a vector load can take. */
static AxisInfo rule_to_bool(Type t, const AxisInfo *x)
{
    if (x->known_const)
        return constant(t, x->value != 0);
    AxisInfo r = pessimistic(t.rank);
    for (int d = 0; d < nd(t.rank); d++)
        r.constancy[d] = x->constancy[d];
    return r;
}

static AxisInfo rule_select(const IrOp *op, const AxisInfo *c, const AxisInfo *a, const AxisInfo *b)
{
    Type t = op->results[0]->type;
    if (c->known_const)
        return c->value ? *a : *b;
    AxisInfo r = join(a, b);
    if (op->operands[0]->type.rank > 0)
        for (int d = 0; d < nd(t.rank); d++) {
            r.constancy[d] = gcd64(r.constancy[d], c->constancy[d]);
            r.contiguity[d] = gcd64(r.contiguity[d], c->constancy[d]);
        }
    return r;
}

static AxisInfo rule_splat(const IrOp *op, const AxisInfo *x)
{
    Type t = op->results[0]->type;
    AxisInfo r = pessimistic(t.rank);
    for (int d = 0; d < nd(t.rank); d++) {
        r.divisibility[d] = x->divisibility[0];
        r.constancy[d] = dim(t, d);
    }
    r.known_const = x->known_const;
    r.value = x->value;
    return r;
}

static AxisInfo rule_broadcast(const IrOp *op, const AxisInfo *x)
{
    Type t = op->results[0]->type, xt = op->operands[0]->type;
    AxisInfo r = pessimistic(t.rank);
    for (int d = 0; d < nd(t.rank); d++) {
        bool stretched = dim(xt, d) == 1;
        r.contiguity[d] = stretched ? 1 : x->contiguity[d];
        r.divisibility[d] = x->divisibility[d];
        r.constancy[d] = stretched ? dim(t, d) : x->constancy[d];
    }
    r.known_const = x->known_const;
    r.value = x->value;
    return r;
}

/* The new size-1 dim: each element starts its own run, so its divisibility
 * must hold for every element, not just run starts. */
static AxisInfo rule_expand(const IrOp *op, const AxisInfo *x)
{
    Type t = op->results[0]->type, xt = op->operands[0]->type;
    AxisInfo r = pessimistic(t.rank);
    int ax = op->axis;
    int64_t every = x->known_const ? pow2_div(x->value) : 0;
    if (!x->known_const)
        for (int d = 0; d < nd(xt.rank); d++)
            every = gcd64(every, x->contiguity[d] > 1 ? 1 : x->divisibility[d]);
    for (int d = 0, s = 0; d < t.rank; d++) {
        if (d == ax) {
            r.divisibility[d] = every ? every : 1;
            continue;
        }
        r.contiguity[d] = x->contiguity[s];
        r.divisibility[d] = x->divisibility[s];
        r.constancy[d] = x->constancy[s];
        s++;
    }
    r.known_const = x->known_const;
    r.value = x->value;
    return r;
}

static AxisInfo rule_trans(const IrOp *op, const AxisInfo *x)
{
    Type t = op->results[0]->type;
    AxisInfo r = pessimistic(t.rank);
    for (int d = 0; d < t.rank && d < op->nints; d++) {
        int s = op->ints[d];
        if (s < 0 || s >= TK_MAX_RANK)
            return pessimistic(t.rank);
        r.contiguity[d] = x->contiguity[s];
        r.divisibility[d] = x->divisibility[s];
        r.constancy[d] = x->constancy[s];
    }
    r.known_const = x->known_const;
    r.value = x->value;
    return r;
}

static AxisInfo rule_hint(const IrOp *op, const AxisInfo *x)
{
    AxisInfo r = *x;
    if (op->nints < 1)
        return r;
    for (int d = 0; d < nd(r.rank); d++) {
        int64_t v = op->ints[d < op->nints ? d : op->nints - 1];
        if (v < 1)
            continue;
        if (op->sub == HINT_MULTIPLE_OF)
            r.divisibility[d] = min64(v, TK_AXIS_MAX_DIV);
        else if (op->sub == HINT_MAX_CONTIGUOUS)
            r.contiguity[d] = v;
        else if (op->sub == HINT_MAX_CONSTANCY)
            r.constancy[d] = v;
    }
    return r;
}

/* Hints stated on the op that defines a value (IrHints) replace what the
 * rules derive, as in Triton: the source vouches for them. */
static AxisInfo apply_hints(const IrOp *op, AxisInfo r)
{
    for (int d = 0; d < nd(r.rank); d++) {
        if (op->hints.v[HINT_MULTIPLE_OF][d] > 0)
            r.divisibility[d] = min64(op->hints.v[HINT_MULTIPLE_OF][d], TK_AXIS_MAX_DIV);
        if (op->hints.v[HINT_MAX_CONTIGUOUS][d] > 0)
            r.contiguity[d] = op->hints.v[HINT_MAX_CONTIGUOUS][d];
        if (op->hints.v[HINT_MAX_CONSTANCY][d] > 0)
            r.constancy[d] = op->hints.v[HINT_MAX_CONSTANCY][d];
    }
    return r;
}

static AxisInfo rule_load(const IrOp *op, const AxisInfo *p, const AxisInfo *m)
{
    Type t = op->results[0]->type;
    AxisInfo r = pessimistic(t.rank);
    for (int d = 0; d < nd(t.rank); d++)
        r.constancy[d] = gcd64(p->constancy[d], m ? m->constancy[d] : 0);
    return r;
}

static void analyze_block(Axis *ax, const IrBlock *b);

static const IrOp *terminator(const IrBlock *b, IrKind k, int nops)
{
    const IrOp *t = b ? b->last : NULL;
    return t && t->kind == k && t->nops == nops ? t : NULL;
}

/* Loop-carried values: start from the inits, join with what the body
 * yields until nothing changes (gcds only shrink, so this ends quickly). */
static void analyze_for(Axis *ax, const IrOp *op)
{
    const IrBlock *body = op->nregions == 1 ? op->regions[0] : NULL;
    int n = op->nres;
    const IrOp *y = terminator(body, IR_YIELD, n);
    if (!body || body->nargs != n + 1 || op->nops != n + 3) {
        for (int i = 0; i < n; i++)
            set(ax, op->results[i], pessimistic(op->results[i]->type.rank));
        return;
    }
    AxisInfo iv = pessimistic(0);
    iv.divisibility[0] =
        gcd64(get(ax, op->operands[0])->divisibility[0], get(ax, op->operands[2])->divisibility[0]);
    set(ax, body->args[0], iv);
    for (int i = 0; i < n; i++)
        set(ax, body->args[i + 1], *get(ax, op->operands[3 + i]));
    bool stable = false;
    for (int round = 0; round < 16 && !stable; round++) {
        analyze_block(ax, body);
        stable = true;
        for (int i = 0; y && i < n; i++) {
            AxisInfo j = join(get(ax, body->args[i + 1]), get(ax, y->operands[i]));
            if (!same_info(&j, get(ax, body->args[i + 1]))) {
                set(ax, body->args[i + 1], j);
                stable = false;
            }
        }
    }
    if (!y || !stable) {
        for (int i = 0; i < n; i++)
            set(ax, body->args[i + 1], pessimistic(body->args[i + 1]->type.rank));
        analyze_block(ax, body);
    }
    for (int i = 0; i < n; i++)
        set(ax, op->results[i], *get(ax, body->args[i + 1]));
}

static void analyze_if(Axis *ax, const IrOp *op)
{
    for (int r = 0; r < op->nregions; r++)
        analyze_block(ax, op->regions[r]);
    const IrOp *y0 = op->nregions > 0 ? terminator(op->regions[0], IR_YIELD, op->nres) : NULL;
    const IrOp *y1 = op->nregions > 1 ? terminator(op->regions[1], IR_YIELD, op->nres) : NULL;
    for (int i = 0; i < op->nres; i++) {
        AxisInfo r = y0 && y1 ? join(get(ax, y0->operands[i]), get(ax, y1->operands[i]))
                              : pessimistic(op->results[i]->type.rank);
        set(ax, op->results[i], r);
    }
}

/* while: the carried values are not followed around the loop (pessimistic);
 * what the condition passes on is known exactly. */
static void analyze_while(Axis *ax, const IrOp *op)
{
    const IrBlock *before = op->nregions > 0 ? op->regions[0] : NULL;
    const IrBlock *after = op->nregions > 1 ? op->regions[1] : NULL;
    const IrOp *c = before ? terminator(before, IR_CONDITION, op->nres + 1) : NULL;
    for (int i = 0; before && i < before->nargs; i++)
        set(ax, before->args[i], pessimistic(before->args[i]->type.rank));
    analyze_block(ax, before);
    for (int i = 0; after && i < after->nargs; i++)
        set(ax, after->args[i],
            c && i < op->nres ? *get(ax, c->operands[i + 1])
                              : pessimistic(after->args[i]->type.rank));
    analyze_block(ax, after);
    for (int i = 0; i < op->nres; i++)
        set(ax, op->results[i],
            c ? *get(ax, c->operands[i + 1]) : pessimistic(op->results[i]->type.rank));
}

static AxisInfo transfer(Axis *ax, const IrOp *op)
{
    Type t = op->results[0]->type;
    const AxisInfo *a = get(ax, op->nops > 0 ? op->operands[0] : NULL);
    const AxisInfo *b = get(ax, op->nops > 1 ? op->operands[1] : NULL);
    switch (op->kind) {
    case IR_CONST:
        if (dtype_is_int(t.dt))
            return constant(t, op->ival);
        else {
            AxisInfo r = constant(t, 0); /* a float: equal everywhere, value unknown here */
            r.known_const = false;
            for (int d = 0; d < nd(t.rank); d++)
                r.divisibility[d] = 1;
            return r;
        }
    case IR_ARANGE: {
        AxisInfo r = pessimistic(1);
        r.contiguity[0] = op->ival2 - op->ival;
        r.divisibility[0] = pow2_div(op->ival);
        return r;
    }
    case IR_SPLAT: return rule_splat(op, a);
    case IR_BROADCAST: return rule_broadcast(op, a);
    case IR_EXPAND_DIMS: return rule_expand(op, a);
    case IR_TRANS: return rule_trans(op, a);
    case IR_ADD:
    case IR_SUB:
    case IR_ADDPTR: return rule_add(op, a, b);
    case IR_MUL: return rule_mul(op, a, b);
    case IR_DIV: return rule_div(op, a, b);
    case IR_REM: return rule_rem(op, a, b);
    case IR_SHL:
    case IR_SHR: return rule_shift(op, a, b);
    case IR_AND:
    case IR_OR:
    case IR_XOR: return rule_bitwise(op, a, b);
    case IR_MIN:
    case IR_MAX: return rule_minmax(op, a, b);
    case IR_CMP: return rule_cmp(op, a, b);
    case IR_SELECT: return rule_select(op, a, b, get(ax, op->operands[2]));
    case IR_HINT: return rule_hint(op, a);
    case IR_CONVERT_LAYOUT: return *a;
    case IR_LOAD: return rule_load(op, a, op->nops > 1 && op->operands[1] ? b : NULL);
    case IR_CAST:
    case IR_BITCAST:
    case IR_PTR_TO_INT:
    case IR_INT_TO_PTR:
        /* int<->int (extend/truncate) and pointer<->int keep the facts */
        if (is_int_like(t) && is_int_like(op->operands[0]->type) && t.dt != DT_I1) {
            AxisInfo r = *a;
            r.rank = t.rank;
            return r;
        }
        if (op->kind == IR_CAST && t.dt == DT_I1 && is_int_like(op->operands[0]->type))
            return rule_to_bool(t, a);
        return pessimistic(t.rank);
    default: return pessimistic(t.rank);
    }
}

static bool operands_present(const IrOp *op)
{
    static const signed char optional_from[IR_OP_COUNT] = {
        [IR_LOAD] = 1, [IR_STORE] = 2, [IR_ATOMIC_RMW] = 2};
    int first_optional = optional_from[op->kind] ? optional_from[op->kind] : op->nops;
    for (int i = 0; i < first_optional && i < op->nops; i++)
        if (!op->operands[i])
            return false;
    return true;
}

static void analyze_block(Axis *ax, const IrBlock *b)
{
    if (!b)
        return;
    for (const IrOp *op = b->first; op; op = op->next) {
        if (op->kind == IR_FOR)
            analyze_for(ax, op);
        else if (op->kind == IR_IF)
            analyze_if(ax, op);
        else if (op->kind == IR_WHILE)
            analyze_while(ax, op);
        else {
            for (int r = 0; r < op->nregions; r++) { /* custom combines */
                for (int i = 0; i < op->regions[r]->nargs; i++)
                    set(ax, op->regions[r]->args[i],
                        pessimistic(op->regions[r]->args[i]->type.rank));
                analyze_block(ax, op->regions[r]);
            }
            if (op->nres == 1 && operands_present(op))
                set(ax, op->results[0], apply_hints(op, transfer(ax, op)));
            else
                for (int i = 0; i < op->nres; i++)
                    set(ax, op->results[i], pessimistic(op->results[i]->type.rank));
        }
    }
}

AxisInfo *axis_analyze(const IrFunc *f, Arena *a)
{
    Axis ax = {f, NULL, f->next_id};
    ax.info = arena_alloc(a, sizeof(AxisInfo) * (size_t)(ax.nids > 0 ? ax.nids : 1));
    if (!ax.info || a->oom)
        return NULL;
    for (int i = 0; i < ax.nids; i++)
        ax.info[i] = pessimistic(0);
    const IrBlock *body = f->body;
    for (int i = 0; i < body->nargs; i++) {
        const IrValue *p = body->args[i];
        AxisInfo r = pessimistic(p->type.rank);
        if (i < f->nparams && is_int_like(p->type) && f->params[i].divisibility > 1)
            r.divisibility[0] = f->params[i].divisibility;
        set(&ax, p, r);
    }
    analyze_block(&ax, body);
    return ax.info;
}

/* ---- queries -------------------------------------------------------------------- */

static int64_t pow2_floor(int64_t v)
{
    int64_t p = 1;
    while (p <= v / 2)
        p *= 2;
    return v < 1 ? 1 : p;
}

int64_t axis_constant_block(const AxisInfo *ai, int d)
{
    return ai->constancy[d] > 0 ? pow2_div(ai->constancy[d]) : 1;
}

int axis_vector_width(const AxisInfo *ai, const IrValue *ptr, const IrValue *mask, int elem_bytes_)
{
    return axis_vector_width_along(ai, ptr, mask, elem_bytes_, ptr ? ptr->type.rank - 1 : 0);
}

int axis_fast_dim(const AxisInfo *ai, const IrValue *ptr)
{
    int rank = ptr->type.rank, best = rank - 1;
    const AxisInfo *p = &ai[ptr->id];
    for (int d = rank - 2; d >= 0; d--)
        if (p->contiguity[d] > p->contiguity[best])
            best = d;
    return best;
}

int axis_vector_width_along(const AxisInfo *ai, const IrValue *ptr, const IrValue *mask,
                            int elem_bytes_, int d)
{
    if (!ai || !ptr || ptr->type.rank < 1 || elem_bytes_ < 1 || elem_bytes_ > 16 || d < 0 ||
        d >= ptr->type.rank)
        return 1;
    const AxisInfo *p = &ai[ptr->id];
    int64_t contig = pow2_div(p->contiguity[d]);                /* runs must hold whole vectors */
    int64_t align = max64(1, p->divisibility[d] / elem_bytes_); /* ... and start aligned */
    int64_t w = min64(min64(contig, align), 16 / elem_bytes_);
    if (mask && mask->type.rank == ptr->type.rank)
        w = min64(w, pow2_div(ai[mask->id].constancy[d]));
    return (int)pow2_floor(min64(w, ptr->type.shape[d]));
}

static void print_vec(StrBuf *out, const char *name, const int64_t *v, int rank)
{
    sb_printf(out, " %s=[", name);
    for (int d = 0; d < nd(rank); d++)
        sb_printf(out, d ? ",%lld" : "%lld", (long long)v[d]);
    sb_putc(out, ']');
}

static bool print_op_info(IrOp *op, void *ctx)
{
    void **c = ctx;
    StrBuf *out = c[0];
    const AxisInfo *ai = c[1];
    for (int i = 0; i < op->nres; i++) {
        const IrValue *v = op->results[i];
        if (!is_int_like(v->type))
            continue;
        const AxisInfo *x = &ai[v->id];
        sb_printf(out, "%%%d:", v->id);
        print_vec(out, "contiguity", x->contiguity, x->rank);
        print_vec(out, "divisibility", x->divisibility, x->rank);
        print_vec(out, "constancy", x->constancy, x->rank);
        if (x->known_const)
            sb_printf(out, " value=%lld", (long long)x->value);
        sb_putc(out, '\n');
    }
    return true;
}

void axis_print(StrBuf *out, const IrFunc *f, const AxisInfo *ai)
{
    if (!ai)
        return;
    void *ctx[2] = {out, (void *)ai};
    ir_walk(f->body, print_op_info, ctx);
}
