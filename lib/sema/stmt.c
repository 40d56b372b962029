/* sema/stmt.c: statements. Runs a statement list in the current
 * environment: assignments bind names, `return` binds "$ret" and ends the
 * path, asserts become compile-time checks or IR_ASSERT. A runtime `if`
 * holding a `return` takes the rest of the body into its branches (Cont),
 * which is how early returns work without a CFG.
 * break/continue: Triton has neither; tk rejects them with a precise error. */
#include <stdio.h>
#include <string.h>

#include "sema/spec.h"

void sema_assign(Sema *s, const Node *target, SVal v, Span at)
{
    switch (target->kind) {
    case N_NAME:
        if (v.k == SV_VOID)
            v = sema_err(s, at, "the right-hand side has no value");
        env_set(s, s->env, target->name, v, at);
        return;
    case N_TUPLE:
    case N_LIST: {
        int n = target->list.len;
        if (v.k == SV_UNDEF) {
            for (int i = 0; i < n; i++)
                sema_assign(s, target->list.items[i], v, at);
            return;
        }
        if (v.k != SV_TUPLE || v.n != n) {
            SVal bad = sema_err(
                s, at, "cannot unpack %s into %d names",
                v.k == SV_TUPLE ? arena_printf(s->a, "%d values", v.n) : sv_describe(s, v), n);
            for (int i = 0; i < n; i++)
                sema_assign(s, target->list.items[i], bad, at);
            return;
        }
        for (int i = 0; i < n; i++)
            sema_assign(s, target->list.items[i], v.items[i], at);
        return;
    }
    default: sema_err(s, target->span, "only names and tuples of names can be assigned to");
    }
}

/* A plain `name = value` makes Python numbers runtime scalars (i32, fp32,
 * i1 ...), exactly as Triton's code generator does; only `name:
 * tl.constexpr = value`, parameters, module constants and static_range
 * indices stay compile-time. Tuples, dtypes, strings and None stay as they are.
 * In a @triton.constexpr_function, which is plain Python, every name does. */
static void assign_plain(Sema *s, const Node *target, SVal v, Span at)
{
    if (target->kind == N_NAME && sv_is_num(v) && !s->const_fn) {
        IrValue *x = sema_to_tensor(s, v, at);
        v = x ? sv_tensor(x) : (SVal){.k = SV_UNDEF};
    } else if ((target->kind == N_TUPLE || target->kind == N_LIST) && v.k == SV_TUPLE &&
               v.n == target->list.len) {
        for (int i = 0; i < v.n; i++)
            assign_plain(s, target->list.items[i], v.items[i], at);
        return;
    }
    sema_assign(s, target, v, at);
}

static void exec_assert(Sema *s, const Node *n)
{
    SVal c = sema_eval(s, n->a);
    SVal m = n->b ? sema_eval(s, n->b) : sv_str("");
    if (c.k == SV_UNDEF || m.k == SV_UNDEF || !s->debug)
        return; /* Triton's assert is device_assert, nothing without debug */
    const char *msg = m.k == SV_STR ? m.s : "";
    if (c.k != SV_TENSOR) {
        bool t;
        if (sema_truth(s, c, n->a->span, &t) && !t)
            sema_err(s, n->span, "assertion failed%s%s", msg[0] ? ": " : "", msg);
        return;
    }
    if (!sema_pred_effect_ok(s, "an assert", n->span))
        return;
    IrValue *cv = sema_to_bool(s, c.v, n->span);
    IrOp *op = ir_build(&s->b, IR_ASSERT, n->span, &cv, 1, NULL, 0);
    op->str = msg;
    op->str2 = s->src && s->src->name ? s->src->name : "<input>";
    op->ival = n->span.line;
}

static void exec_return(Sema *s, const Node *n)
{
    if (s->loop_depth > 0) {
        sema_err(s, n->span,
                 "'return' inside a loop is not supported (Triton loops have no "
                 "early exit)");
        return;
    }
    SVal v = n->a ? sema_eval(s, n->a) : sv_none();
    if (s->pred) { /* in tl.map_elementwise's function: for the elements that get here */
        sema_pred_return(s, v, n->span);
        return;
    }
    env_set(s, s->env, "$ret", v, n->span);
    s->returned = true;
}

static void exec_augassign(Sema *s, const Node *n)
{
    if (n->a->kind != N_NAME) {
        sema_err(s, n->a->span, "only names can be the target of '%s='",
                 ast_op_spelling((OpKind)n->op));
        return;
    }
    SVal cur = sema_lookup(s, n->a->name, n->a->span);
    SVal rhs = sema_eval(s, n->b);
    SVal r;
    if (n->op == OP_MATMUL) {
        if (cur.k != SV_TENSOR || rhs.k != SV_TENSOR)
            r = sema_err(s, n->span, "'@=' needs tensors");
        else
            r = sema_dot(s, cur.v, rhs.v, (SVal){.k = SV_VOID}, (SVal){.k = SV_VOID},
                         (SVal){.k = SV_VOID}, (SVal){.k = SV_VOID}, n->span);
    } else {
        r = sema_binary(s, n->op, cur, rhs, n->span);
    }
    assign_plain(s, n->a, r, n->span);
}

/* Two assignment forms that Python allows fail in Triton 3.6: a chain
 * (a = b = v), which its code generator asserts away, and a tuple target
 * holding another tuple (a, (b, c) = v), on which the scan of a function's
 * dependencies raises a TypeError. Both are reported here with the way
 * round, once however often the statement runs (a helper inlined twice);
 * the names are still bound so that no error follows from them. A
 * @triton.constexpr_function is plain Python and keeps both. */
static void check_assign_targets(Sema *s, const Node *n)
{
    if (s->const_fn)
        return;
    for (int i = 0; i < s->bad_assigns.len; i++)
        if (s->bad_assigns.items[i] == n)
            return;
    int errors = s->d->errors;
    if (n->list.len > 1)
        sema_err(s, n->list.items[1]->span,
                 "chained assignment is not supported (Triton fails on it); assign the "
                 "value to one name, then that name to the others");
    for (int i = 0; i < n->list.len; i++) {
        const Node *t = n->list.items[i];
        if (t->kind != N_TUPLE && t->kind != N_LIST)
            continue;
        for (int j = 0; j < t->list.len; j++) {
            const Node *e = t->list.items[j];
            if (e->kind == N_TUPLE || e->kind == N_LIST) {
                sema_err(s, e->span,
                         "nested tuple unpacking is not supported (Triton fails on it); "
                         "unpack the inner tuple in a second assignment");
                break;
            }
        }
    }
    if (s->d->errors != errors)
        vec_push(s->a, &s->bad_assigns, (void *)n);
}

static void exec_stmt(Sema *s, const Node *n)
{
    switch (n->kind) {
    case N_ASSIGN: {
        check_assign_targets(s, n);
        SVal v = sema_eval(s, n->a);
        for (int i = 0; i < n->list.len; i++)
            assign_plain(s, n->list.items[i], v, n->span);
        return;
    }
    case N_ANNASSIGN: {
        SVal v = n->c ? sema_eval(s, n->c) : sv_none();
        SVal annot = sema_eval(s, n->b);
        /* `x: tl.constexpr = v` keeps v as it is, as Triton wraps whatever
         * v is: a number stays compile-time, and a tensor (tl.cast of a
         * constant, tl.program_id()) works as that value, a use that needs
         * a compile-time value reporting it there */
        if (annot.k == SV_BUILTIN && !strcmp(annot.s, "constexpr"))
            sema_assign(s, n->a, v, n->span);
        else
            assign_plain(s, n->a, v, n->span);
        return;
    }
    case N_AUGASSIGN: exec_augassign(s, n); return;
    case N_FOR: sema_exec_for(s, n); return;
    case N_WHILE: sema_exec_while(s, n); return;
    case N_RETURN: exec_return(s, n); return;
    case N_PASS: return;
    case N_BREAK:
        sema_err(s, n->span,
                 "'break' is not supported in tk kernels (Triton has no break); "
                 "use a while loop with a condition instead");
        return;
    case N_CONTINUE:
        sema_err(s, n->span,
                 "'continue' is not supported in tk kernels (Triton has no "
                 "continue); use an if around the rest of the body");
        return;
    case N_ASSERT: exec_assert(s, n); return;
    case N_RAISE:
        /* Triton compiles a raise only where a constexpr condition leaves
         * its branch out, which sema never enters */
        sema_err(s, n->span,
                 "a 'raise' the kernel reaches is not supported (Triton accepts 'raise' "
                 "only in a branch that a constexpr condition leaves out)");
        return;
    case N_WITH:
        sema_err(s, n->span,
                 "'with' is not supported in tk kernels (Triton 3.6 has no context manager a "
                 "kernel can enter)");
        return;
    case N_EXPR_STMT: sema_eval(s, n->a); return;
    case N_FUNC: sema_err(s, n->span, "nested function definitions are not supported"); return;
    case N_IMPORT:
    case N_FROM_IMPORT: sema_err(s, n->span, "imports are only allowed at module level"); return;
    default: sema_err(s, n->span, "unsupported statement"); return;
    }
}

/* Runs l[from..] then the pending continuations. An `if` (runtime or
 * constexpr) takes the rest of the list as its continuation so that a
 * `return` inside it ends only its own path. */
void sema_exec(Sema *s, const NodeList *l, int from, Cont *cont)
{
    for (int i = from; i < l->len; i++) {
        if (s->returned)
            return;
        if (s->a->oom || s->d->errors > s->errors_at_start + 40)
            return;
        const Node *n = l->items[i];
        if (n->kind == N_IF) {
            Cont rest = {l, i + 1, cont};
            sema_exec_if(s, n, &rest);
            return;
        }
        exec_stmt(s, n);
    }
    if (cont && !s->returned)
        sema_exec(s, cont->list, cont->from, cont->next);
}

static bool contains_return(const Node *n)
{
    if (!n)
        return false;
    switch (n->kind) {
    case N_RETURN: return true;
    case N_IF: return sema_contains_return(&n->list) || sema_contains_return(&n->list2);
    default: return false; /* a return inside a loop is an error reported there */
    }
}

bool sema_contains_return(const NodeList *l)
{
    for (int i = 0; i < l->len; i++)
        if (contains_return(l->items[i]))
            return true;
    return false;
}
