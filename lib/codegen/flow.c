/* codegen/flow.c: structured control flow to LLVM blocks: for (phis for the
 * induction variable and carried values), while (before/after regions), if
 * (uniform scalar condition, results through phis). A carried block value
 * becomes one phi per element a thread holds. */
#include "codegen/cg.h"

/* Phis in the current block for each element of each value's type. */
static CgVal *make_phis(Cg *cg, CgVal *init, int n)
{
    CgVal *ph = cg_alloc(cg, sizeof(CgVal) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) {
        ph[i] = cg_val_new(cg, init[i].n);
        for (int s = 0; s < init[i].n; s++)
            ph[i].el[s] = LLVMBuildPhi(cg->b, LLVMTypeOf(init[i].el[s]), "");
    }
    return ph;
}

static void add_incoming(Cg *cg, CgVal *ph, CgVal *vals, int n, LLVMBasicBlockRef from)
{
    for (int i = 0; i < n; i++)
        for (int s = 0; s < ph[i].n; s++) {
            LLVMValueRef v = vals[i].el[vals[i].n == 1 ? 0 : s];
            LLVMAddIncoming(ph[i].el[s], &v, &from, 1);
        }
}

static bool check_term(Cg *cg, const IrOp *parent, const IrOp *term, IrKind want, int nops)
{
    if (cg->failed)
        return false;
    if (!term || term->kind != want || term->nops != nops) {
        cg_internal(cg, parent->span, "region of '%s' lacks its %s of %d values",
                    ir_kind_name(parent->kind), ir_kind_name(want), nops);
        return false;
    }
    return true;
}

static CgVal *values_of(Cg *cg, IrValue *const *v, int n)
{
    CgVal *r = cg_alloc(cg, sizeof(CgVal) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++)
        r[i] = cg_get(cg, v[i]);
    return r;
}

/* iv has not passed ub, for a step of either sign. */
static LLVMValueRef in_range(Cg *cg, LLVMValueRef iv, LLVMValueRef ub, LLVMValueRef step, DType dt)
{
    bool sg = dtype_is_signed(dt);
    LLVMValueRef zero = LLVMConstInt(cg_type(cg, dt), 0, 0);
    LLVMValueRef up = LLVMBuildICmp(cg->b, sg ? LLVMIntSLT : LLVMIntULT, iv, ub, "");
    LLVMValueRef down = LLVMBuildICmp(cg->b, sg ? LLVMIntSGT : LLVMIntUGT, iv, ub, "");
    LLVMValueRef pos = sg ? LLVMBuildICmp(cg->b, LLVMIntSGT, step, zero, "")
                          : LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0);
    return LLVMBuildSelect(cg->b, pos, up, down, "");
}

/* A loop whose results pass_pipeline reads through dot_waits (right after
 * it) is entered only when it runs at least once; the waits go on its way
 * out, and the initial values of a loop that never ran join their results
 * after. A path that never issued the wgmma then reaches no wait with
 * accumulators of its own, which would make ptxas serialize every wgmma. */
static void join_waited(Cg *cg, const IrOp *op, CgVal *init, LLVMBasicBlockRef skip)
{
    int nc = op->nops - 3;
    for (const IrOp *w = op->next; w && w->kind == IR_DOT_WAIT; w = w->next)
        cg_emit_dot_wait(cg, w);
    LLVMBasicBlockRef exit = LLVMGetInsertBlock(cg->b), join = cg_new_bb(cg, "for.join");
    LLVMBuildBr(cg->b, join);
    LLVMPositionBuilderAtEnd(cg->b, skip);
    LLVMBuildBr(cg->b, join);
    LLVMPositionBuilderAtEnd(cg->b, join);
    for (int i = 0; i < op->nres && i < nc; i++) {
        const IrValue *r = op->results[i];
        CgVal now = cg_get(cg, r), *ph = make_phis(cg, &init[i], 1);
        add_incoming(cg, ph, &now, 1, exit);
        add_incoming(cg, ph, &init[i], 1, skip);
        cg_set(cg, r, ph[0]);
        for (const IrOp *w = op->next; w && w->kind == IR_DOT_WAIT; w = w->next) {
            if (w->operands[0] != r)
                continue;
            CgVal done = cg_get(cg, w->results[0]), *wp = make_phis(cg, &init[i], 1);
            add_incoming(cg, wp, &done, 1, exit);
            add_incoming(cg, wp, &init[i], 1, skip);
            cg_set(cg, w->results[0], wp[0]);
        }
    }
}

static void emit_for(Cg *cg, const IrOp *op)
{
    const IrBlock *body = op->regions[0];
    int nc = op->nops - 3;
    DType dt = op->operands[0]->type.dt;
    LLVMValueRef lb = cg_get(cg, op->operands[0]).el[0];
    LLVMValueRef ub =
        cg_convert(cg, cg_get(cg, op->operands[1]).el[0], op->operands[1]->type.dt, dt);
    LLVMValueRef step =
        cg_convert(cg, cg_get(cg, op->operands[2]).el[0], op->operands[2]->type.dt, dt);
    CgVal *init = values_of(cg, op->operands + 3, nc);
    LLVMBasicBlockRef skip = NULL;
    if (op->next && op->next->kind == IR_DOT_WAIT) {
        LLVMBasicBlockRef enter = cg_new_bb(cg, "for.enter");
        skip = cg_new_bb(cg, "for.skip");
        LLVMBuildCondBr(cg->b, in_range(cg, lb, ub, step, dt), enter, skip);
        LLVMPositionBuilderAtEnd(cg->b, enter);
    }
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef head = cg_new_bb(cg, "for.head");
    LLVMBasicBlockRef loop = cg_new_bb(cg, "for.body");
    LLVMBasicBlockRef exit = cg_new_bb(cg, "for.exit");
    LLVMBuildBr(cg->b, head);
    LLVMPositionBuilderAtEnd(cg->b, head);
    LLVMValueRef iv = LLVMBuildPhi(cg->b, cg_type(cg, dt), "iv");
    CgVal *ph = make_phis(cg, init, nc);
    add_incoming(cg, ph, init, nc, pre);
    LLVMAddIncoming(iv, &lb, &pre, 1);
    LLVMBuildCondBr(cg->b, in_range(cg, iv, ub, step, dt), loop, exit);
    LLVMPositionBuilderAtEnd(cg->b, loop);
    if (body->nargs != nc + 1) {
        cg_internal(cg, op->span, "for body has %d arguments, expected %d", body->nargs, nc + 1);
        return;
    }
    CgVal ivv = cg_val_new(cg, 1);
    ivv.el[0] = iv;
    cg_set(cg, body->args[0], ivv);
    for (int i = 0; i < nc; i++)
        cg_set(cg, body->args[i + 1], ph[i]);
    int64_t reserved = cg->smem_reserved;
    const IrOp *y = cg_emit_block(cg, body);
    if (!check_term(cg, op, y, IR_YIELD, nc))
        return;
    cg_rings_back(cg, reserved);
    CgVal *next = values_of(cg, y->operands, nc);
    LLVMValueRef iv2 = LLVMBuildAdd(cg->b, iv, step, "");
    LLVMBasicBlockRef end = LLVMGetInsertBlock(cg->b);
    LLVMBuildBr(cg->b, head);
    add_incoming(cg, ph, next, nc, end);
    LLVMAddIncoming(iv, &iv2, &end, 1);
    LLVMPositionBuilderAtEnd(cg->b, exit);
    for (int i = 0; i < op->nres && i < nc; i++)
        cg_set(cg, op->results[i], ph[i]);
    if (skip)
        join_waited(cg, op, init, skip);
}

static void emit_while(Cg *cg, const IrOp *op)
{
    if (op->nregions < 2) {
        cg_internal(cg, op->span, "while needs two regions");
        return;
    }
    const IrBlock *before = op->regions[0], *after = op->regions[1];
    int nc = op->nops;
    CgVal *init = values_of(cg, op->operands, nc);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
    LLVMBasicBlockRef head = cg_new_bb(cg, "while.head");
    LLVMBasicBlockRef loop = cg_new_bb(cg, "while.body");
    LLVMBasicBlockRef exit = cg_new_bb(cg, "while.exit");
    LLVMBuildBr(cg->b, head);
    LLVMPositionBuilderAtEnd(cg->b, head);
    CgVal *ph = make_phis(cg, init, nc);
    add_incoming(cg, ph, init, nc, pre);
    for (int i = 0; i < nc && i < before->nargs; i++)
        cg_set(cg, before->args[i], ph[i]);
    const IrOp *c = cg_emit_block(cg, before);
    if (!check_term(cg, op, c, IR_CONDITION, c ? c->nops : 0) || c->nops < 1)
        return;
    int np = c->nops - 1;
    CgVal *pass = values_of(cg, c->operands + 1, np);
    LLVMBuildCondBr(cg->b, cg_get(cg, c->operands[0]).el[0], loop, exit);
    LLVMPositionBuilderAtEnd(cg->b, loop);
    for (int i = 0; i < np && i < after->nargs; i++)
        cg_set(cg, after->args[i], pass[i]);
    int64_t reserved = cg->smem_reserved;
    const IrOp *y = cg_emit_block(cg, after);
    if (!check_term(cg, op, y, IR_YIELD, nc))
        return;
    cg_rings_back(cg, reserved);
    CgVal *next = values_of(cg, y->operands, nc);
    LLVMBasicBlockRef end = LLVMGetInsertBlock(cg->b);
    LLVMBuildBr(cg->b, head);
    add_incoming(cg, ph, next, nc, end);
    LLVMPositionBuilderAtEnd(cg->b, exit);
    for (int i = 0; i < op->nres && i < np; i++)
        cg_set(cg, op->results[i], pass[i]);
}

static void emit_if(Cg *cg, const IrOp *op)
{
    int nr = op->nres;
    LLVMValueRef cond = cg_get(cg, op->operands[0]).el[0];
    LLVMBasicBlockRef then_bb = cg_new_bb(cg, "if.then");
    LLVMBasicBlockRef else_bb = cg_new_bb(cg, "if.else");
    LLVMBasicBlockRef merge = cg_new_bb(cg, "if.end");
    LLVMBuildCondBr(cg->b, cond, then_bb, else_bb);
    CgVal *vals[2] = {NULL, NULL};
    LLVMBasicBlockRef ends[2];
    int64_t reserved = cg->smem_reserved;
    for (int r = 0; r < 2; r++) {
        LLVMPositionBuilderAtEnd(cg->b, r == 0 ? then_bb : else_bb);
        if (r < op->nregions) {
            const IrOp *y = cg_emit_block(cg, op->regions[r]);
            if (nr > 0 || y) {
                if (!check_term(cg, op, y, IR_YIELD, nr))
                    return;
                vals[r] = values_of(cg, y->operands, nr);
            }
            cg_rings_back(cg, reserved);
        } else if (nr > 0) {
            cg_internal(cg, op->span, "if with results needs an else region");
            return;
        }
        ends[r] = LLVMGetInsertBlock(cg->b);
        LLVMBuildBr(cg->b, merge);
    }
    LLVMPositionBuilderAtEnd(cg->b, merge);
    for (int i = 0; i < nr; i++) {
        CgLayout l = cg_layout(cg, op->results[i]);
        CgVal res = cg_val_new(cg, l.per_thread);
        for (int s = 0; s < res.n; s++) {
            LLVMValueRef in[2];
            for (int r = 0; r < 2; r++)
                in[r] = vals[r][i].el[vals[r][i].n == 1 ? 0 : s];
            res.el[s] = LLVMBuildPhi(cg->b, LLVMTypeOf(in[0]), "");
            LLVMAddIncoming(res.el[s], in, ends, 2);
        }
        cg_set(cg, op->results[i], res);
    }
}

bool cg_emit_flow(Cg *cg, const IrOp *op)
{
    switch (op->kind) {
    case IR_FOR:
        if (op->nops < 3 || op->nregions < 1)
            cg_internal(cg, op->span, "malformed for");
        else
            emit_for(cg, op);
        return true;
    case IR_WHILE: emit_while(cg, op); return true;
    case IR_IF: emit_if(cg, op); return true;
    default: return false;
    }
}
