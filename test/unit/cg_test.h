/* cg_test.h: helpers for building kernels by hand in the code generation
 * tests (cg_build.c, cg_gpu.c); not a test itself. */
#ifndef TK_CG_TEST_H
#define TK_CG_TEST_H

#include "compiler.h"

#include <stdio.h>
#include <string.h>

static const Span SP = {1, 1, 1, 2};

static inline Type vec(DType dt, int n) { return type_block(dt, 1, (int[]){n}); }
static inline Type mat(DType dt, int m, int n) { return type_block(dt, 2, (int[]){m, n}); }
static inline Type pvec(DType elem, int rank, const int *shape)
{
    return type_with_shape(type_ptr(elem), rank, shape);
}

static inline IrValue *op1(IrBuilder *b, IrKind k, IrValue *x, Type t, int sub)
{
    IrValue *r = ir_unary(b, k, SP, x, t);
    r->def->sub = sub;
    return r;
}
static inline IrValue *op2(IrBuilder *b, IrKind k, IrValue *x, IrValue *y, Type t)
{
    return ir_binary(b, k, SP, x, y, t);
}
static inline IrValue *opn(IrBuilder *b, IrKind k, IrValue **ops, int n, Type t)
{
    return ir_build(b, k, SP, ops, n, &t, 1)->results[0];
}
static inline IrValue *ci(IrBuilder *b, Type t, int64_t v) { return ir_const_int(b, SP, t, v); }
static inline IrValue *cf(IrBuilder *b, Type t, double v) { return ir_const_float(b, SP, t, v); }
static inline IrValue *arange(IrBuilder *b, int n)
{
    IrOp *op = ir_build(b, IR_ARANGE, SP, NULL, 0, (Type[]){vec(DT_I32, n)}, 1);
    op->ival = 0;
    op->ival2 = n;
    return op->results[0];
}
static inline IrValue *splat(IrBuilder *b, IrValue *x, Type t) { return op1(b, IR_SPLAT, x, t, 0); }
static inline IrValue *cmp(IrBuilder *b, int pred, IrValue *x, IrValue *y)
{
    IrValue *r = op2(b, IR_CMP, x, y, type_with_shape(type_scalar(DT_I1), x->type.rank, x->type.shape));
    r->def->sub = pred;
    return r;
}
static inline IrValue *load(IrBuilder *b, IrValue *p, IrValue *mask, IrValue *other)
{
    IrValue *ops[3] = {p, mask, other};
    Type t = type_with_shape(type_scalar(p->type.elem), p->type.rank, p->type.shape);
    return opn(b, IR_LOAD, ops, 3, t);
}
static inline IrOp *store(IrBuilder *b, IrValue *p, IrValue *v, IrValue *mask)
{
    IrValue *ops[3] = {p, v, mask};
    return ir_build(b, IR_STORE, SP, ops, 3, NULL, 0);
}
static inline IrValue *addptr(IrBuilder *b, IrValue *p, IrValue *off)
{
    return op2(b, IR_ADDPTR, p, off, p->type);
}
static inline IrValue *reduce(IrBuilder *b, IrValue *x, int axis, int kind, DType rdt)
{
    Type t = x->type;
    int shape[TK_MAX_RANK], r = 0;
    for (int i = 0; i < t.rank; i++)
        if (i != axis)
            shape[r++] = t.shape[i];
    Type rt = type_block(rdt, r, shape);
    IrOp *op = ir_build(b, IR_REDUCE, SP, &x, 1, &rt, 1);
    op->axis = axis;
    op->sub = kind;
    return op->results[0];
}

/* offs = pid * N + arange(N); mask = offs < n */
static inline IrValue *offsets(IrBuilder *b, int n, IrValue *limit, IrValue **mask)
{
    IrValue *pid = op1(b, IR_PROGRAM_ID, NULL, type_scalar(DT_I32), 0);
    pid->def->nops = 0;
    IrValue *base = op2(b, IR_MUL, pid, ci(b, type_scalar(DT_I32), n), type_scalar(DT_I32));
    IrValue *offs = op2(b, IR_ADD, splat(b, base, vec(DT_I32, n)), arange(b, n), vec(DT_I32, n));
    if (mask)
        *mask = cmp(b, CMP_LT, offs, splat(b, limit, vec(DT_I32, n)));
    return offs;
}


static inline IrFunc *new_kernel(Arena *a, const char *name, IrBuilder *b)
{
    IrFunc *f = ir_func_new(a, name, NULL);
    *b = (IrBuilder){f, f->body, NULL};
    return f;
}

#endif
