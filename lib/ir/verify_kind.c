/* ir/verify_kind.c: the verifier's per-kind checks: operand and result
 * counts, types and shapes each op kind needs. Assumes nothing about the
 * op (NULL operands, wrong counts); reports through ir_vfail. */
#include "ir/verify.h"

#include <stdio.h>
#include <string.h>

/* ---- small predicates --------------------------------------------------- */

static IrValue *opnd(const IrOp *op, int i)
{
    return op->operands && i >= 0 && i < op->nops ? op->operands[i] : NULL;
}

static IrValue *res(const IrOp *op, int i)
{
    return op->results && i >= 0 && i < op->nres ? op->results[i] : NULL;
}

static bool is_int_t(Type t) { return dtype_is_int(t.dt); }
static bool is_scalar_int(const IrValue *x) { return x && x->type.rank == 0 && is_int_t(x->type); }
static bool is_i1(Type t) { return t.dt == DT_I1; }

static bool counts(Verifier *v, const IrOp *op, int lo, int hi, int nres)
{
    if (op->nops < lo || (hi >= 0 && op->nops > hi)) {
        ir_vfail(v, op, "has %d operands", op->nops);
        return false;
    }
    if (nres >= 0 && op->nres != nres) {
        ir_vfail(v, op, "has %d results, expected %d", op->nres, nres);
        return false;
    }
    for (int i = 0; i < op->nres; i++)
        if (!res(op, i)) {
            ir_vfail(v, op, "result %d is missing", i);
            return false;
        }
    return true;
}

/* Operands [0, n) must be present. */
static bool present(Verifier *v, const IrOp *op, int n)
{
    for (int i = 0; i < n; i++)
        if (!opnd(op, i)) {
            ir_vfail(v, op, "operand %d is missing", i);
            return false;
        }
    return true;
}

static void same_type(Verifier *v, const IrOp *op, Type a, Type b, const char *what)
{
    if (!type_eq(a, b))
        ir_vfail(v, op, "%s: %s vs %s", what, ir_vtype(a), ir_vtype(b));
}

static void same_shape(Verifier *v, const IrOp *op, Type a, Type b, const char *what)
{
    if (!type_same_shape(a, b))
        ir_vfail(v, op, "%s: shapes of %s and %s differ", what, ir_vtype(a), ir_vtype(b));
}

/* ---- per-kind checks ------------------------------------------------------ */

static void check_elementwise(Verifier *v, const IrOp *op, int n)
{
    if (!counts(v, op, n, n, 1) || !present(v, op, n))
        return;
    Type r = op->results[0]->type;
    for (int i = 0; i < n; i++)
        same_type(v, op, op->operands[i]->type, r, "operand and result types differ");
    if (r.dt == DT_PTR || r.dt == DT_VOID || dtype_is_fp8(r.dt))
        ir_vfail(v, op, "not defined on %s", ir_vtype(r));
    bool int_only = op->kind == IR_AND || op->kind == IR_OR || op->kind == IR_XOR ||
        op->kind == IR_SHL || op->kind == IR_SHR || op->kind == IR_UMULHI || op->kind == IR_NOT;
    bool float_only = op->kind == IR_FMA || (op->kind == IR_MATH && op->sub != MATH_ABS);
    if (int_only && !is_int_t(r))
        ir_vfail(v, op, "needs integers, got %s", ir_vtype(r));
    if (float_only && !dtype_is_float(r.dt))
        ir_vfail(v, op, "needs floats, got %s", ir_vtype(r));
    if (op->kind == IR_MATH && (op->sub < 0 || op->sub >= MATH_COUNT))
        ir_vfail(v, op, "bad math function %d", op->sub);
}

/* The partner is along the last dim: its bits are the flat index's lowest. */
static void check_partner(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 1, 1, 1) || !present(v, op, 1))
        return;
    Type x = op->operands[0]->type;
    same_type(v, op, x, op->results[0]->type, "result differs from the operand");
    int64_t m = op->ival;
    if (x.rank < 1 || m <= 0 || (m & (m - 1)) || m >= x.shape[x.rank - 1])
        ir_vfail(v, op, "xor=%lld is no power of two below the last dim of %s", (long long)m,
                 ir_vtype(x));
}

static void check_shape_op(Verifier *v, const IrOp *op)
{
    int nres = op->kind == IR_SPLIT ? 2 : 1;
    int nops = op->kind == IR_JOIN || op->kind == IR_CAT ? 2 : 1;
    if (!counts(v, op, nops, nops, nres) || !present(v, op, nops))
        return;
    Type x = op->operands[0]->type, r = op->results[0]->type;
    if (!type_eq(type_elem(x), type_elem(r)))
        ir_vfail(v, op, "element types differ: %s vs %s", ir_vtype(x), ir_vtype(r));
    switch (op->kind) {
    case IR_SPLAT:
        if (x.rank != 0)
            ir_vfail(v, op, "operand must be a scalar, got %s", ir_vtype(x));
        break;
    case IR_BROADCAST:
        if (x.rank != r.rank) {
            ir_vfail(v, op, "rank changes: %s -> %s", ir_vtype(x), ir_vtype(r));
            break;
        }
        for (int i = 0; i < x.rank; i++)
            if (x.shape[i] != r.shape[i] && x.shape[i] != 1)
                ir_vfail(v, op, "dim %d cannot broadcast: %s -> %s", i, ir_vtype(x), ir_vtype(r));
        break;
    case IR_EXPAND_DIMS: {
        bool good =
            r.rank == x.rank + 1 && op->axis >= 0 && op->axis < r.rank && r.shape[op->axis] == 1;
        for (int i = 0, j = 0; good && i < r.rank; i++)
            if (i != op->axis && r.shape[i] != x.shape[j++])
                good = false;
        if (!good)
            ir_vfail(v, op, "axis %d: %s -> %s", op->axis, ir_vtype(x), ir_vtype(r));
        break;
    }
    case IR_RESHAPE:
        if (type_numel(x) != type_numel(r))
            ir_vfail(v, op, "element count changes: %s -> %s", ir_vtype(x), ir_vtype(r));
        break;
    case IR_TRANS: {
        bool good = op->nints == x.rank && r.rank == x.rank;
        unsigned used = 0;
        for (int i = 0; good && i < x.rank; i++) {
            int p = op->ints[i];
            if (p < 0 || p >= x.rank || (used & (1u << p)) || r.shape[i] != x.shape[p])
                good = false;
            else
                used |= 1u << p;
        }
        if (!good)
            ir_vfail(v, op, "bad permutation for %s -> %s", ir_vtype(x), ir_vtype(r));
        break;
    }
    case IR_JOIN: {
        same_type(v, op, x, op->operands[1]->type, "operands differ");
        bool good = r.rank == x.rank + 1 && r.shape[x.rank] == 2;
        for (int i = 0; good && i < x.rank; i++)
            good = r.shape[i] == x.shape[i];
        if (!good)
            ir_vfail(v, op, "%s -> %s", ir_vtype(x), ir_vtype(r));
        break;
    }
    case IR_SPLIT: {
        IrValue *r1 = op->results[1];
        bool good =
            x.rank >= 1 && x.shape[x.rank - 1] == 2 && r.rank == x.rank - 1 && type_eq(r, r1->type);
        for (int i = 0; good && i < r.rank; i++)
            good = r.shape[i] == x.shape[i];
        if (!good)
            ir_vfail(v, op, "%s -> %s", ir_vtype(x), ir_vtype(r));
        break;
    }
    case IR_CAT: {
        Type y = op->operands[1]->type;
        same_type(v, op, x, y, "operands differ");
        bool good = x.rank >= 1 && r.rank == x.rank && r.shape[0] == x.shape[0] + y.shape[0];
        for (int i = 1; good && i < r.rank; i++)
            good = r.shape[i] == x.shape[i];
        if (!good)
            ir_vfail(v, op, "%s, %s -> %s", ir_vtype(x), ir_vtype(y), ir_vtype(r));
        break;
    }
    default: break;
    }
}

/* gather: an integer index of src's rank and shape but along the axis,
 * and a result of the index's shape holding src's elements. */
static void check_gather(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 2, 2, 1) || !present(v, op, 2))
        return;
    Type x = op->operands[0]->type, ix = op->operands[1]->type, r = op->results[0]->type;
    bool good = x.rank >= 1 && x.rank <= TK_MAX_RANK && ix.rank == x.rank && op->axis >= 0 &&
        op->axis < x.rank;
    for (int d = 0; good && d < x.rank; d++)
        good = d == op->axis || ix.shape[d] == x.shape[d];
    if (!good)
        ir_vfail(v, op, "axis %d: index %s does not fit src %s", op->axis, ir_vtype(ix),
                 ir_vtype(x));
    if (!is_int_t(ix) || is_i1(ix))
        ir_vfail(v, op, "index must be integers, got %s", ir_vtype(ix));
    if (!type_eq(r, type_with_shape(x, ix.rank, ix.shape)))
        ir_vfail(v, op, "result is %s, expected src's elements at the index's shape", ir_vtype(r));
}

/* histogram: a 1-D integer block, an i1 mask of its shape or none, and
 * ival (a power of two) i32 counts. */
static void check_histogram(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 1, 2, 1) || !present(v, op, 1))
        return;
    Type x = op->operands[0]->type, r = op->results[0]->type;
    IrValue *m = opnd(op, 1);
    if (x.rank != 1 || !is_int_t(x) || is_i1(x))
        ir_vfail(v, op, "needs a 1-D block of integers, got %s", ir_vtype(x));
    if (m && (!is_i1(m->type) || !type_same_shape(m->type, x)))
        ir_vfail(v, op, "mask %s does not match %s", ir_vtype(m->type), ir_vtype(x));
    if (op->ival < 1 || (op->ival & (op->ival - 1)) || r.dt != DT_I32 || r.rank != 1 ||
        r.shape[0] != op->ival)
        ir_vfail(v, op, "%lld bins do not give %s", (long long)op->ival, ir_vtype(r));
}

/* Every argument and result of inline asm has one shape; a call takes
 * `pack` elements of each. */
static void check_inline_asm(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 0, -1, -1) || !present(v, op, op->nops))
        return;
    if (op->nres < 1 || !op->str || !op->str2)
        ir_vfail(v, op, "needs a result, the asm text and constraints");
    else if (op->ival < 1 || op->ival > 16 || (op->ival & (op->ival - 1)))
        ir_vfail(v, op, "pack %lld is not a power of two in 1..16", (long long)op->ival);
    else {
        IrAsmRegs r;
        char why[192];
        if (!ir_asm_regs(op, &r, why, sizeof why))
            ir_vfail(v, op, "%s", why);
    }
    for (int i = 0; i < op->nres; i++)
        same_shape(v, op, op->results[i]->type, op->results[0]->type, "result");
    for (int i = 0; i < op->nops && op->nres; i++)
        same_shape(v, op, op->operands[i]->type, op->results[0]->type, "argument");
}

static void check_cast(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 1, 1, 1) || !present(v, op, 1))
        return;
    Type x = op->operands[0]->type, r = op->results[0]->type;
    same_shape(v, op, x, r, "cast");
    switch (op->kind) {
    case IR_CAST:
        if (r.dt == DT_VOID || x.dt == DT_VOID || ((x.dt == DT_PTR) != (r.dt == DT_PTR)))
            ir_vfail(v, op, "cannot cast %s to %s", ir_vtype(x), ir_vtype(r));
        if ((dtype_is_fp8(x.dt) || dtype_is_fp8(r.dt)) &&
            !(dtype_is_float(x.dt) && dtype_is_float(r.dt)))
            ir_vfail(v, op, "fp8 converts only to and from floats: %s to %s", ir_vtype(x),
                     ir_vtype(r));
        if (r.dt == DT_F8E4B15 && x.dt != DT_F16 && x.dt != DT_F32 && x.dt != r.dt)
            ir_vfail(v, op, "fp8e4b15 converts only from fp16 and fp32: %s to %s", ir_vtype(x),
                     ir_vtype(r));
        if (op->sub != CAST_RTNE && op->sub != CAST_RTZ)
            ir_vfail(v, op, "bad rounding %d", op->sub);
        if (op->sub == CAST_RTZ &&
            !(x.dt == DT_F32 && (r.dt == DT_F16 || r.dt == DT_BF16 || r.dt == DT_F8E5)))
            ir_vfail(v, op, "rtz rounds only fp32 to fp16, bf16 or fp8e5: %s to %s", ir_vtype(x),
                     ir_vtype(r));
        break;
    case IR_BITCAST:
        if (dtype_bits(x.dt) != dtype_bits(r.dt) || r.dt == DT_VOID)
            ir_vfail(v, op, "widths differ: %s to %s", ir_vtype(x), ir_vtype(r));
        break;
    case IR_PTR_TO_INT:
        if (x.dt != DT_PTR || r.dt != DT_I64)
            ir_vfail(v, op, "needs ptr -> i64, got %s -> %s", ir_vtype(x), ir_vtype(r));
        break;
    default: /* IR_INT_TO_PTR */
        if (x.dt != DT_I64 || r.dt != DT_PTR)
            ir_vfail(v, op, "needs i64 -> ptr, got %s -> %s", ir_vtype(x), ir_vtype(r));
        break;
    }
}

static void check_mask(Verifier *v, const IrOp *op, int i, Type ptr)
{
    IrValue *m = opnd(op, i);
    if (m && (!is_i1(m->type) || !type_same_shape(m->type, ptr)))
        ir_vfail(v, op, "mask %s does not match pointer %s", ir_vtype(m->type), ir_vtype(ptr));
}

/* The type a load of `ptr` gives: the pointee at the pointer's shape. */
static Type pointee(Type ptr)
{
    Type t = ptr;
    t.dt = ptr.elem;
    t.elem = DT_VOID;
    return t;
}

static void check_memory(Verifier *v, const IrOp *op)
{
    int nres = op->kind == IR_STORE ? 0 : 1;
    int lo = op->kind == IR_LOAD ? 1 : op->kind == IR_ATOMIC_CAS ? 3 : 2;
    if (!counts(v, op, lo, 3, nres) || !present(v, op, lo))
        return;
    Type p = op->operands[0]->type;
    if (p.dt != DT_PTR || p.elem == DT_VOID || p.elem == DT_PTR) {
        ir_vfail(v, op, "needs a pointer to data, got %s", ir_vtype(p));
        return;
    }
    Type val = pointee(p);
    switch (op->kind) {
    case IR_LOAD:
        same_type(v, op, op->results[0]->type, val, "result is not the pointee");
        check_mask(v, op, 1, p);
        if (opnd(op, 2))
            same_type(v, op, op->operands[2]->type, val, "other is not the pointee");
        break;
    case IR_STORE:
        same_type(v, op, op->operands[1]->type, val, "value is not the pointee");
        check_mask(v, op, 2, p);
        break;
    case IR_ATOMIC_RMW:
        same_type(v, op, op->results[0]->type, val, "result is not the pointee");
        same_type(v, op, op->operands[1]->type, val, "value is not the pointee");
        check_mask(v, op, 2, p);
        if (op->sub < ATOM_ADD || op->sub > ATOM_XOR)
            ir_vfail(v, op, "bad atomic kind %d", op->sub);
        break;
    default: /* IR_ATOMIC_CAS */
        same_type(v, op, op->results[0]->type, val, "result is not the pointee");
        same_type(v, op, op->operands[1]->type, val, "cmp is not the pointee");
        same_type(v, op, op->operands[2]->type, val, "value is not the pointee");
        break;
    }
    if (op->kind == IR_ATOMIC_RMW || op->kind == IR_ATOMIC_CAS) {
        if (mem_sem_parse(op->str) < 0)
            ir_vfail(v, op, "bad memory semantics '%s'", op->str ? op->str : "(none)");
        if (mem_scope_parse(op->str2) < 0)
            ir_vfail(v, op, "bad memory scope '%s'", op->str2 ? op->str2 : "(none)");
    }
}

static void check_addptr(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 2, 2, 1) || !present(v, op, 2))
        return;
    Type p = op->operands[0]->type, o = op->operands[1]->type;
    if (p.dt != DT_PTR)
        ir_vfail(v, op, "needs a pointer, got %s", ir_vtype(p));
    if (!is_int_t(o) || o.dt == DT_I1)
        ir_vfail(v, op, "offset must be an integer, got %s", ir_vtype(o));
    same_shape(v, op, p, o, "pointer and offset");
    same_type(v, op, op->results[0]->type, p, "result is not the pointer type");
}

/* The last op of region r of op must be `want` with operand types `types`
 * (n of them, starting at operand `skip`). */
static void check_terminator(Verifier *v, const IrOp *op, int r, IrKind want, IrValue *const *vals,
                             const Type *types, int n, int skip)
{
    IrBlock *b = op->regions[r];
    IrOp *t = b ? b->last : NULL;
    if (!t || t->kind != want) {
        ir_vfail(v, op, "region %d does not end in '%s'", r, ir_kind_name(want));
        return;
    }
    if (t->nops != n + skip) {
        ir_vfail(v, t, "has %d operands, its parent '%s' needs %d", t->nops, ir_kind_name(op->kind),
                 n + skip);
        return;
    }
    for (int i = 0; i < n; i++) {
        IrValue *x = opnd(t, i + skip);
        Type want_t = vals ? (vals[i] ? vals[i]->type : type_scalar(DT_VOID)) : types[i];
        if (x && !type_eq(x->type, want_t))
            ir_vfail(v, t, "value %d is %s, '%s' needs %s", i, ir_vtype(x->type),
                     ir_kind_name(op->kind), ir_vtype(want_t));
    }
}

static void check_region_args(Verifier *v, const IrOp *op, int r, IrValue *const *vals, int n,
                              int skip)
{
    IrBlock *b = op->regions[r];
    if (!b || b->nargs != n + skip) {
        ir_vfail(v, op, "region %d has %d arguments, expected %d", r, b ? b->nargs : -1, n + skip);
        return;
    }
    for (int i = 0; i < n; i++)
        if (vals[i] && b->args[i + skip] && !type_eq(b->args[i + skip]->type, vals[i]->type))
            ir_vfail(v, op, "region %d argument %d is %s, expected %s", r, i + skip,
                     ir_vtype(b->args[i + skip]->type), ir_vtype(vals[i]->type));
}

static bool regions_ok(Verifier *v, const IrOp *op, int lo, int hi)
{
    if (op->nregions < lo || op->nregions > hi || (op->nregions && !op->regions)) {
        ir_vfail(v, op, "has %d regions", op->nregions);
        return false;
    }
    for (int r = 0; r < op->nregions; r++)
        if (!op->regions[r]) {
            ir_vfail(v, op, "region %d is missing", r);
            return false;
        }
    return true;
}

static void check_for(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 3, -1, op->nops - 3) || !present(v, op, op->nops) ||
        !regions_ok(v, op, 1, 1))
        return;
    IrValue *lb = op->operands[0], *ub = op->operands[1], *st = op->operands[2];
    if (!is_scalar_int(lb) || !type_eq(lb->type, ub->type) || !type_eq(lb->type, st->type))
        ir_vfail(v, op, "bounds must be scalar ints of one type: %s, %s, %s", ir_vtype(lb->type),
                 ir_vtype(ub->type), ir_vtype(st->type));
    int n = op->nops - 3;
    for (int i = 0; i < n; i++)
        same_type(v, op, op->operands[3 + i]->type, op->results[i]->type,
                  "init and result types differ");
    IrBlock *b = op->regions[0];
    if (b->nargs >= 1 && b->args[0] && !type_eq(b->args[0]->type, lb->type))
        ir_vfail(v, op, "induction variable is %s, bounds are %s", ir_vtype(b->args[0]->type),
                 ir_vtype(lb->type));
    check_region_args(v, op, 0, op->results, n, 1);
    check_terminator(v, op, 0, IR_YIELD, op->results, NULL, n, 0);
}

static void check_while(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 0, -1, -1) || !present(v, op, op->nops) || !regions_ok(v, op, 2, 2))
        return;
    check_region_args(v, op, 0, op->operands, op->nops, 0);
    check_region_args(v, op, 1, op->results, op->nres, 0);
    check_terminator(v, op, 0, IR_CONDITION, op->results, NULL, op->nres, 1);
    check_terminator(v, op, 1, IR_YIELD, op->operands, NULL, op->nops, 0);
    IrOp *c = op->regions[0]->last;
    if (c && c->kind == IR_CONDITION) {
        IrValue *cond = opnd(c, 0);
        if (!cond || cond->type.rank != 0 || !is_i1(cond->type))
            ir_vfail(v, c, "condition must be a scalar i1");
    }
}

static void check_if(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 1, 1, -1) || !present(v, op, 1) || !regions_ok(v, op, op->nres ? 2 : 1, 2))
        return;
    Type c = op->operands[0]->type;
    if (c.rank != 0 || !is_i1(c))
        ir_vfail(v, op, "condition must be a scalar i1, got %s", ir_vtype(c));
    for (int r = 0; r < op->nregions; r++) {
        if (op->regions[r]->nargs)
            ir_vfail(v, op, "region %d has arguments", r);
        check_terminator(v, op, r, IR_YIELD, op->results, NULL, op->nres, 0);
    }
}

/* A packed ring (IrPlan.packed) is a private ring of 1-D blocks. */
static void check_packed(Verifier *v, const IrOp *op, const IrValue *block)
{
    if ((op->flags & IRF_PACKED) && (op->sub <= 0 || (block && block->type.rank != 1)))
        ir_vfail(v, op, "a packed ring is a private ring of 1-D blocks");
}

/* A ring filled across (IrPlan.across) is a shared tile of a 2-D block of
 * 4-byte elements: each copy moves one of them. */
static void check_across(Verifier *v, const IrOp *op, const IrValue *ptr)
{
    if (!(op->flags & IRF_ACROSS) || !ptr)
        return;
    if (op->sub || ptr->type.rank != 2 || ptr->type.dt != DT_PTR ||
        dtype_bits(ptr->type.elem) != 32)
        ir_vfail(v, op, "a ring filled across is a shared tile of a 2-D block of 4-byte elements");
}

/* The producer of a warp-specialized loop: the kernel's first op, one
 * region without arguments ending in an empty yield, and the warps it
 * runs in counted in the function. */
static void check_producer(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 0, 0, 0) || !regions_ok(v, op, 1, 1))
        return;
    if (op->parent != v->f->body || op->prev)
        ir_vfail(v, op, "is not the first op of the kernel");
    if (v->f->producer_warps != 4)
        ir_vfail(v, op, "runs in %d extra warps, expected a warpgroup", v->f->producer_warps);
    if (op->regions[0]->nargs)
        ir_vfail(v, op, "region 0 has arguments");
    check_terminator(v, op, 0, IR_YIELD, NULL, NULL, 0, 0);
}

/* Reduce/scan: n inputs of one shape; custom combines have a 2n-argument
 * region of the element types yielding n values. */
static void check_reduce_scan(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 1, -1, -1) || !present(v, op, op->nops))
        return;
    bool reduce = op->kind == IR_REDUCE;
    bool custom = reduce ? op->sub == RED_CUSTOM : op->sub == SCAN_CUSTOM;
    bool arg = reduce && (op->sub == RED_ARGMAX || op->sub == RED_ARGMIN);
    if (op->sub < 0 || op->sub > (reduce ? RED_ANY : SCAN_CUSTOM))
        ir_vfail(v, op, "bad kind %d", op->sub);
    if (op->nres != op->nops || (!custom && op->nops != 1)) {
        ir_vfail(v, op, "%d inputs, %d results", op->nops, op->nres);
        return;
    }
    Type x0 = op->operands[0]->type;
    for (int i = 0; i < op->nops; i++)
        if (dtype_is_fp8(op->operands[i]->type.dt))
            ir_vfail(v, op, "not defined on %s", ir_vtype(op->operands[i]->type));
    if (op->axis < 0 || op->axis >= x0.rank) {
        ir_vfail(v, op, "axis %d out of range for %s", op->axis, ir_vtype(x0));
        return;
    }
    Type elems[2 * 8];
    for (int i = 0; i < op->nops; i++) {
        Type x = op->operands[i]->type;
        same_shape(v, op, x, x0, "inputs");
        Type want = x;
        if (reduce) {
            want.rank = 0;
            for (int d = 0; d < x.rank; d++)
                if (d != op->axis)
                    want.shape[want.rank++] = x.shape[d];
            for (int d = want.rank; d < TK_MAX_RANK; d++)
                want.shape[d] = 0;
        }
        if (arg)
            want.dt = DT_I32, want.elem = DT_VOID;
        Type got = op->results[i]->type;
        got.rank = got.rank > TK_MAX_RANK ? TK_MAX_RANK : got.rank;
        if (!type_eq(got, want))
            ir_vfail(v, op, "result %d is %s, expected %s", i, ir_vtype(op->results[i]->type),
                     ir_vtype(want));
        if (i < 8)
            elems[i] = elems[op->nops + i] = type_elem(x);
    }
    if (!custom) {
        if (op->nregions)
            ir_vfail(v, op, "only custom combines have a region");
        return;
    }
    if (!regions_ok(v, op, 1, 1) || op->nops > 8)
        return;
    IrBlock *b = op->regions[0];
    if (b->nargs != 2 * op->nops)
        ir_vfail(v, op, "combine region has %d arguments, expected %d", b->nargs, 2 * op->nops);
    for (int i = 0; i < b->nargs && i < 2 * op->nops; i++)
        if (b->args[i] && !type_eq(b->args[i]->type, elems[i]))
            ir_vfail(v, op, "combine argument %d is %s, expected %s", i, ir_vtype(b->args[i]->type),
                     ir_vtype(elems[i]));
    check_terminator(v, op, 0, IR_YIELD, NULL, elems, op->nops, 0);
}

static void check_dot(Verifier *v, const IrOp *op)
{
    if (!counts(v, op, 3, 4, 1) || !present(v, op, op->nops))
        return;
    if (op->nops == 4 && !type_eq(op->operands[3]->type, type_scalar(DT_I1)))
        ir_vfail(v, op, "fresh must be an i1 scalar, got %s", ir_vtype(op->operands[3]->type));
    Type a = op->operands[0]->type, b = op->operands[1]->type, c = op->operands[2]->type;
    same_type(v, op, op->results[0]->type, c, "result is not the accumulator type");
    int r = a.rank;
    bool fp8 = dtype_is_fp8(a.dt) && dtype_is_fp8(b.dt); /* e4m3 with e5m2 is allowed */
    bool good = (r == 2 || r == 3) && b.rank == r && c.rank == r && (a.dt == b.dt || fp8) &&
        a.shape[r - 1] == b.shape[r - 2] && c.shape[r - 2] == a.shape[r - 2] &&
        c.shape[r - 1] == b.shape[r - 1] &&
        (r == 2 || (a.shape[0] == b.shape[0] && a.shape[0] == c.shape[0]));
    if (!good)
        ir_vfail(v, op, "shapes do not multiply: %s x %s + %s", ir_vtype(a), ir_vtype(b),
                 ir_vtype(c));
    if (a.dt == DT_F8E4B15 || b.dt == DT_F8E4B15) /* no MMA takes it: sema converts to fp16 */
        ir_vfail(v, op, "fp8e4b15 operands: %s x %s", ir_vtype(a), ir_vtype(b));
    if ((op->flags & IRF_SPARE) && !op->ival)
        ir_vfail(v, op, "a spare slot for a dot that is not asynchronous");
}

void ir_check_kind(Verifier *v, const IrOp *op)
{
    switch (op->kind) {
    case IR_CONST:
        if (counts(v, op, 0, 0, 1) && op->results[0]->type.dt == DT_VOID)
            ir_vfail(v, op, "has no dtype");
        break;
    case IR_PROGRAM_ID:
    case IR_NUM_PROGRAMS:
        if (counts(v, op, 0, 0, 1) &&
            (!type_eq(op->results[0]->type, type_scalar(DT_I32)) || op->axis < 0 || op->axis > 2))
            ir_vfail(v, op, "must be an i32 with axis 0..2");
        break;
    case IR_ARANGE:
        if (counts(v, op, 0, 0, 1)) {
            Type r = op->results[0]->type;
            if (r.dt != DT_I32 || r.rank != 1 || op->ival2 <= op->ival ||
                r.shape[0] != op->ival2 - op->ival)
                ir_vfail(v, op, "range [%lld, %lld) does not give %s", (long long)op->ival,
                         (long long)op->ival2, ir_vtype(r));
        }
        break;
    case IR_SPLAT:
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_TRANS:
    case IR_JOIN:
    case IR_SPLIT:
    case IR_CAT: check_shape_op(v, op); break;
    case IR_PARTNER: check_partner(v, op); break;
    case IR_GATHER: check_gather(v, op); break;
    case IR_HISTOGRAM: check_histogram(v, op); break;
    case IR_ADD:
    case IR_SUB:
    case IR_MUL:
    case IR_DIV:
    case IR_REM:
    case IR_AND:
    case IR_OR:
    case IR_XOR:
    case IR_SHL:
    case IR_SHR:
    case IR_MIN:
    case IR_MAX:
    case IR_UMULHI: check_elementwise(v, op, 2); break;
    case IR_NEG:
    case IR_NOT:
    case IR_MATH: check_elementwise(v, op, 1); break;
    case IR_FMA: check_elementwise(v, op, 3); break;
    case IR_CMP:
        if (counts(v, op, 2, 2, 1) && present(v, op, 2)) {
            Type a = op->operands[0]->type, r = op->results[0]->type;
            same_type(v, op, a, op->operands[1]->type, "operands differ");
            if (dtype_is_fp8(a.dt))
                ir_vfail(v, op, "not defined on %s", ir_vtype(a));
            if (!is_i1(r) || !type_same_shape(a, r))
                ir_vfail(v, op, "result must be i1 of the operand shape, got %s", ir_vtype(r));
            if (op->sub < CMP_EQ || op->sub > CMP_GE)
                ir_vfail(v, op, "bad predicate %d", op->sub);
        }
        break;
    case IR_SELECT:
        if (counts(v, op, 3, 3, 1) && present(v, op, 3)) {
            Type c = op->operands[0]->type, r = op->results[0]->type;
            if (!is_i1(c) || !type_same_shape(c, r))
                ir_vfail(v, op, "condition must be i1 of the result shape, got %s", ir_vtype(c));
            same_type(v, op, op->operands[1]->type, r, "true value and result differ");
            same_type(v, op, op->operands[2]->type, r, "false value and result differ");
        }
        break;
    case IR_EXTERN:
        if (counts(v, op, 0, -1, 1) && present(v, op, op->nops)) {
            if (!op->str)
                ir_vfail(v, op, "has no function name");
            for (int i = 0; i < op->nops; i++)
                same_shape(v, op, op->operands[i]->type, op->results[0]->type, "argument");
        }
        break;
    case IR_INLINE_ASM: check_inline_asm(v, op); break;
    case IR_GDC:
        if (counts(v, op, 0, 0, 0) && (op->sub < 0 || op->sub > 1))
            ir_vfail(v, op, "bad grid dependency control %d", op->sub);
        break;
    case IR_CAST:
    case IR_BITCAST:
    case IR_PTR_TO_INT:
    case IR_INT_TO_PTR: check_cast(v, op); break;
    case IR_ADDPTR: check_addptr(v, op); break;
    case IR_LOAD:
    case IR_STORE:
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS: check_memory(v, op); break;
    case IR_REDUCE:
    case IR_SCAN: check_reduce_scan(v, op); break;
    case IR_DOT: check_dot(v, op); break;
    case IR_FOR: check_for(v, op); break;
    case IR_WHILE: check_while(v, op); break;
    case IR_IF: check_if(v, op); break;
    case IR_YIELD: counts(v, op, 0, -1, 0); break;
    case IR_CONDITION:
        if (counts(v, op, 1, -1, 0))
            present(v, op, 1);
        break;
    case IR_PRINT: counts(v, op, 0, -1, 0); break;
    case IR_ASSERT:
    case IR_ASSUME:
        if (counts(v, op, 1, 1, 0) && present(v, op, 1) && !is_i1(op->operands[0]->type))
            ir_vfail(v, op, "condition must be i1, got %s", ir_vtype(op->operands[0]->type));
        break;
    case IR_RAND:
        if (counts(v, op, 2, 2, op->sub == RAND_INT4X ? 4 : 1) && present(v, op, 2)) {
            Type o = op->operands[1]->type;
            if (!is_int_t(o) || !is_scalar_int(op->operands[0]))
                ir_vfail(v, op, "needs a scalar int seed and int offsets");
            for (int i = 0; i < op->nres; i++)
                same_shape(v, op, op->results[i]->type, o, "result and offsets");
        }
        break;
    case IR_HINT:
        if (counts(v, op, 1, 1, 1) && present(v, op, 1)) {
            same_type(v, op, op->operands[0]->type, op->results[0]->type, "hint changes type");
            int rank = op->operands[0]->type.rank;
            if (op->nints < 1 || op->nints > (rank ? rank : 1))
                ir_vfail(v, op, "%d hint values for %s", op->nints,
                         ir_vtype(op->operands[0]->type));
        }
        break;
    case IR_BARRIER: counts(v, op, 0, 0, 0); break;
    case IR_ASYNC_COPY:
        if (counts(v, op, 3, 3, 0) && opnd(op, 0) && opnd(op, 2) && !is_scalar_int(opnd(op, 2)))
            ir_vfail(v, op, "slot must be an integer scalar");
        check_packed(v, op, opnd(op, 0));
        check_across(v, op, opnd(op, 0));
        break;
    case IR_ASYNC_COMMIT:
    case IR_ASYNC_WAIT: counts(v, op, 0, 0, 0); break;
    case IR_TMA_COPY:
        if (counts(v, op, 4, 4, 0) && present(v, op, 4) &&
            (!is_scalar_int(opnd(op, 0)) || !is_scalar_int(opnd(op, 1)) ||
             !is_scalar_int(opnd(op, 3))))
            ir_vfail(v, op, "coordinates and slot must be integer scalars");
        if (op->sub < 0 || op->sub >= v->f->ntmaps)
            ir_vfail(v, op, "no tensor map %d", op->sub);
        break;
    case IR_TMAP_MAKE:
        if (counts(v, op, 4, 4, 0) && present(v, op, 4) &&
            (opnd(op, 0)->type.dt != DT_PTR || opnd(op, 0)->type.rank ||
             !is_scalar_int(opnd(op, 1)) || !is_scalar_int(opnd(op, 2)) ||
             !is_scalar_int(opnd(op, 3))))
            ir_vfail(v, op, "takes a scalar pointer and integer scalars");
        if (op->sub < 0 || op->sub >= v->f->ntmaps || !v->f->tmaps[op->sub].device)
            ir_vfail(v, op, "no device tensor map %d", op->sub);
        break;
    case IR_TMA_STORE:
        if (counts(v, op, 3, 3, 0) && present(v, op, 3) &&
            (opnd(op, 0)->type.rank != 2 || !is_scalar_int(opnd(op, 1)) ||
             !is_scalar_int(opnd(op, 2))))
            ir_vfail(v, op, "takes a 2-D tile and integer scalar coordinates");
        if (op->sub < 0 || op->sub >= v->f->ntmaps)
            ir_vfail(v, op, "no tensor map %d", op->sub);
        else if (op->nops == 3 && opnd(op, 0) && opnd(op, 0)->type.rank == 2) {
            const IrTmap *m = &v->f->tmaps[op->sub];
            const int *shape = opnd(op, 0)->type.shape;
            int rows = shape[op->ival ? 1 : 0], cols = shape[op->ival ? 0 : 1];
            if (opnd(op, 0)->type.dt != m->dt || rows != m->box[1] || cols != m->cols)
                ir_vfail(v, op, "the tile is not one of tensor map %d's", op->sub);
        }
        break;
    case IR_TMA_WAIT:
        if (counts(v, op, 1, 1, 0) && present(v, op, 1) && !is_scalar_int(opnd(op, 0)))
            ir_vfail(v, op, "slot must be an integer scalar");
        break;
    case IR_TMA_RELEASE:
        if (counts(v, op, 2, 2, 0) && present(v, op, 2) &&
            (!is_scalar_int(opnd(op, 0)) || opnd(op, 1)->type.rank != 0 ||
             !is_i1(opnd(op, 1)->type)))
            ir_vfail(v, op, "takes an integer slot and a scalar i1");
        break;
    case IR_PRODUCER: check_producer(v, op); break;
    case IR_DOT_WAIT:
        if (counts(v, op, 1, 1, 1) && present(v, op, 1))
            same_type(v, op, op->operands[0]->type, op->results[0]->type, "dot_wait changes type");
        break;
    case IR_SHARED_VIEW:
        if (counts(v, op, 1, 1, 1) && present(v, op, 1) && !is_scalar_int(opnd(op, 0)))
            ir_vfail(v, op, "slot must be an integer scalar");
        check_packed(v, op, op->nres == 1 ? op->results[0] : NULL);
        break;
    case IR_CONVERT_LAYOUT:
        if (counts(v, op, 1, 1, 1) && present(v, op, 1)) {
            same_type(v, op, op->operands[0]->type, op->results[0]->type,
                      "convert_layout changes type");
            if (!op->results[0]->layout)
                ir_vfail(v, op, "convert_layout without a result layout");
        }
        break;
    default: ir_vfail(v, op, "unknown op kind %d", (int)op->kind); break;
    }
}
