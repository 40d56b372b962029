/* ir/verify.h: what the verifier's two files share (not a public
 * interface): its state, its report, and the per-kind checks of
 * verify_kind.c that verify.c runs on every op. */
#ifndef TK_IR_VERIFY_H
#define TK_IR_VERIFY_H

#include "ir/ir.h"

typedef struct Verifier {
    const IrFunc *f;
    Diag *d;
    unsigned char *in_scope; /* by id: visible at the current point */
    unsigned char *seen;     /* by id: defined somewhere already */
    int nids;
    bool ok;
    DiagKind kind; /* DIAG_INTERNAL, or DIAG_ERROR for IR read from text */
} Verifier;

/* Reports one problem at op's span (the function's without op). */
void ir_vfail(Verifier *v, const IrOp *op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A short type text for messages (rotating buffers, so two fit in one call). */
const char *ir_vtype(Type t);
/* ir_verify_layouts reporting diagnostics of the given kind. */
bool ir_verify_layouts_as(const IrFunc *f, Diag *d, DiagKind kind);
/* The operand counts and types op's kind needs. */
void ir_check_kind(Verifier *v, const IrOp *op);
/* The software pipelining plan op carries, if any (verify_plan.c). */
void ir_check_plan(Verifier *v, const IrOp *op);

#endif
