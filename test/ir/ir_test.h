/* ir_test.h: shared helpers of the IR unit tests (not a test itself). */
#ifndef TK_IR_TEST_H
#define TK_IR_TEST_H

#include "driver/driver.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

static const Span T_SP = {1, 1, 1, 2, 0};

static inline Type t_i32(void) { return type_scalar(DT_I32); }
static inline Type t_vec(DType dt, int n) { return type_block(dt, 1, (int[]){n}); }
static inline Type t_mat(DType dt, int m, int n) { return type_block(dt, 2, (int[]){m, n}); }

static inline IrValue *t_op1(IrBuilder *b, IrKind k, IrValue *x, Type t, int sub)
{
    IrValue *r = ir_unary(b, k, T_SP, x, t);
    r->def->sub = sub;
    return r;
}

static inline IrValue *t_op2(IrBuilder *b, IrKind k, IrValue *x, IrValue *y, Type t)
{
    return ir_binary(b, k, T_SP, x, y, t);
}

static inline IrValue *t_op3(IrBuilder *b, IrKind k, IrValue *x, IrValue *y, IrValue *z, Type t)
{
    IrValue *ops[3] = {x, y, z};
    return ir_build(b, k, T_SP, ops, 3, &t, 1)->results[0];
}

static inline IrValue *t_arange(IrBuilder *b, int lo, int hi)
{
    Type t = t_vec(DT_I32, hi - lo);
    IrOp *op = ir_build(b, IR_ARANGE, T_SP, NULL, 0, &t, 1);
    op->ival = lo;
    op->ival2 = hi;
    return op->results[0];
}

static inline char *t_print(const IrFunc *f)
{
    StrBuf sb;
    sb_init(&sb);
    ir_print(&sb, f);
    return sb_take(&sb, NULL);
}

/* Verifies f; `want_ok` says whether it should pass, `needle` (or NULL) must
 * appear in the diagnostics when it should not. */
static inline bool t_verify(const IrFunc *f, bool want_ok, const char *needle)
{
    Diag d;
    diag_init(&d, NULL);
    bool ok = ir_verify(f, &d);
    bool good = ok == want_ok && (ok || !needle || (d.text.data && strstr(d.text.data, needle)));
    if (!good) {
        char *txt = t_print(f);
        fprintf(stderr, "verify gave %d, wanted %d (%s):\n%s%s", ok, want_ok, needle ? needle : "",
                d.text.data ? d.text.data : "", txt ? txt : "");
        tk_xfree(txt);
    }
    diag_free(&d);
    return good;
}

static inline int t_finish(const char *name)
{
    if (failures)
        fprintf(stderr, "%s: %d failure(s)\n", name, failures);
    else
        printf("%s: ok\n", name);
    return failures != 0;
}

#endif
