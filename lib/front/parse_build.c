/* front/parse_build.c: the node builders and checks behind the grammar's actions
 * (grammar/tk.y), and the tree-depth limit. Assumes nodes from the arena of
 * the LexState; guarantees recursion only as deep as the brackets, memory
 * only from the arena, and every check reported with the offending span. */
#include "front/parse_build.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

Node *parse_node(LexState *lx, NodeKind k, Span at)
{
    Node *n = arena_alloc(lx->arena, sizeof *n);
    n->kind = k;
    n->span = at;
    n->span.scope = 0; /* sema gives IR ops their inline scope */
    return n;
}

Node *parse_node2(LexState *lx, NodeKind k, Span at, int op, Node *a, Node *b)
{
    Node *n = parse_node(lx, k, at);
    n->op = op;
    n->a = a;
    n->b = b;
    return parse_deepen(lx, n);
}

static int list_depth(const NodeList *l)
{
    int d = 0;
    for (int i = 0; i < l->len; i++)
        if (l->items[i] && l->items[i]->depth > d)
            d = l->items[i]->depth;
    return d;
}

/* A left-leaning chain (`a + a + ...`, `f()()...`, `x.y.y...`) costs the
 * parser no stack, so only counting depth as the tree is built stops a
 * 5 MB one-line expression before it fills memory: past PARSE_MAX_DEPTH
 * the error is reported where the chain got too deep and the scanner gives
 * up (fatal), ending the parse. */
Node *parse_deepen(LexState *lx, Node *n)
{
    int d = list_depth(&n->list);
    int l2 = list_depth(&n->list2), l3 = list_depth(&n->list3);
    const Node *kids[3] = {n->a, n->b, n->c};
    d = l2 > d ? l2 : d;
    d = l3 > d ? l3 : d;
    for (int i = 0; i < 3; i++)
        if (kids[i] && kids[i]->depth > d)
            d = kids[i]->depth;
    n->depth = d + 1;
    if (n->depth > PARSE_MAX_DEPTH && !lx->fatal) {
        int col = n->span.end_col > 1 ? n->span.end_col - 1 : 1;
        parse_error(lx, (Span){n->span.end_line, col, n->span.end_line, col + 1, 0},
                    "expression or block nested too deeply (the limit is %d levels)",
                    PARSE_MAX_DEPTH);
        lx->fatal = true;
    }
    return n;
}

Node *parse_decorator(LexState *lx, Node *d)
{
    Node *name = d && d->kind == N_CALL ? d->a : d;
    for (int i = 0; name && name->kind == N_NAME && name->name && i < lx->jit_names.len; i++)
        if (strcmp(lx->jit_names.items[i], name->name) == 0)
            name->name = "jit";
    return d;
}

PtrVec parse_vec1(LexState *lx, void *item)
{
    PtrVec v = {0};
    vec_push(lx->arena, &v, item);
    return v;
}

void parse_vec_append(LexState *lx, PtrVec *to, PtrVec from)
{
    for (int i = 0; i < from.len; i++)
        vec_push(lx->arena, to, from.items[i]);
}

NodeList parse_list(LexState *lx, PtrVec v)
{
    NodeList l = {NULL, v.len};
    if (v.len) {
        l.items = arena_alloc(lx->arena, sizeof(Node *) * (size_t)v.len);
        if (!l.items)
            l.len = 0;
        for (int i = 0; i < l.len; i++)
            l.items[i] = v.items[i];
    }
    return l;
}

void parse_error(LexState *lx, Span at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(lx->diag, DIAG_ERROR, at, fmt, ap);
    va_end(ap);
}

/* A comma list is a tuple; one item without a comma is just that item. */
Node *parse_seq(LexState *lx, ParseSeq s, Span at)
{
    if (s.v.len == 1 && !s.comma)
        return s.v.items[0];
    Node *t = parse_node(lx, N_TUPLE, at);
    t->list = parse_list(lx, s.v);
    return parse_deepen(lx, t);
}

static const char *target_problem(const Node *n)
{
    switch (n->kind) {
    case N_CALL: return "a function call";
    case N_INT:
    case N_FLOAT:
    case N_STR:
    case N_FSTR:
    case N_TRUE:
    case N_FALSE:
    case N_NONE: return "a literal";
    case N_BINOP:
    case N_UNARY:
    case N_BOOLOP:
    case N_COMPARE: return "an expression";
    case N_LAMBDA: return "a lambda";
    case N_IFEXP: return "a conditional expression";
    case N_DICT: return "a dict";
    default: return "this expression";
    }
}

/* Only names, attributes, subscripts and tuples/lists of them can be
 * assigned; `aug` (x += 1) and annotations allow no tuples. */
void parse_check_target(LexState *lx, const Node *n, bool single, const char *what)
{
    if (n->kind == N_NAME || n->kind == N_ATTR || n->kind == N_SUBSCRIPT)
        return;
    if ((n->kind == N_TUPLE || n->kind == N_LIST) && !single) {
        for (int i = 0; i < n->list.len; i++)
            parse_check_target(lx, n->list.items[i], false, what);
        return;
    }
    if (n->kind == N_TUPLE || n->kind == N_LIST)
        parse_error(lx, n->span, "%s needs a single target, not a tuple", what);
    else
        parse_error(lx, n->span, "cannot assign to %s", target_problem(n));
}

Node *parse_binop(LexState *lx, Span at, int op, Node *a, Node *b)
{
    return parse_node2(lx, N_BINOP, at, op, a, b);
}

/* A chained comparison from its parts: operand, op, operand, op, ...;
 * `a < b < c` is one N_COMPARE with three operands. */
Node *parse_compare(LexState *lx, Span at, PtrVec parts)
{
    Node *c = parse_node(lx, N_COMPARE, at);
    int n = (parts.len + 1) / 2;
    Node **items = arena_alloc(lx->arena, sizeof(Node *) * (size_t)n);
    OpKind *ops = arena_alloc(lx->arena, sizeof(OpKind) * (size_t)(n - 1));
    if (!items || !ops)
        return c;
    for (int i = 0; i < parts.len; i++) {
        if (i % 2 == 0)
            items[i / 2] = parts.items[i];
        else
            ops[i / 2] = (OpKind)(intptr_t)parts.items[i];
    }
    c->list = (NodeList){items, n};
    c->cmp_ops = ops;
    return parse_deepen(lx, c);
}

Node *parse_param(LexState *lx, Node *name, Node *annot, Node *dflt)
{
    Node *p = parse_node(lx, N_PARAM, name->span);
    p->name = name->name;
    /* A string annotation "*fp32" means the same as *fp32. */
    if (annot && annot->kind == N_STR && annot->slen > 1 && annot->str[0] == '*') {
        Node *t = parse_node(lx, N_PTR_TYPE, annot->span);
        t->name = annot->str + 1;
        annot = t;
    }
    p->a = annot;
    p->b = dflt;
    return p;
}

Node *parse_ptr_type(LexState *lx, Span at, Node *elem)
{
    Node *t = parse_node(lx, N_PTR_TYPE, at);
    t->name = elem->name;
    return t;
}

void parse_add_arg(LexState *lx, ParseArgs *args, Node *arg)
{
    if (arg->kind == N_KEYWORD) {
        vec_push(lx->arena, &args->kw, arg);
        return;
    }
    if (args->kw.len > 0 && arg->kind != N_STARRED)
        parse_error(lx, arg->span, "positional argument follows keyword argument");
    vec_push(lx->arena, &args->pos, arg);
}

Node *parse_field(LexState *lx, Span at, Node *expr, int conv)
{
    return parse_node2(lx, N_FIELD, at, conv, expr, NULL);
}

/* Adjacent literals with an f-string among them make one f-string whose
 * pieces are theirs in order. */
static Node *join_fstrings(LexState *lx, PtrVec parts)
{
    Node *first = parts.items[0], *last = parts.items[parts.len - 1];
    Node *f = parse_node(lx, N_FSTR, span_join(first->span, last->span));
    PtrVec pieces = {0};
    for (int i = 0; i < parts.len; i++) {
        Node *p = parts.items[i];
        if (p->kind != N_FSTR) {
            vec_push(lx->arena, &pieces, p);
            continue;
        }
        for (int j = 0; j < p->list.len; j++)
            vec_push(lx->arena, &pieces, p->list.items[j]);
    }
    f->list = parse_list(lx, pieces);
    return parse_deepen(lx, f);
}

/* Adjacent literals make one string; joined once, so a long run of them
 * costs linear time. */
Node *parse_join_strings(LexState *lx, PtrVec parts)
{
    Node *first = parts.items[0];
    if (parts.len == 1)
        return first;
    for (int i = 0; i < parts.len; i++)
        if (((Node *)parts.items[i])->kind == N_FSTR)
            return join_fstrings(lx, parts);
    size_t len = 0;
    for (int i = 0; i < parts.len; i++)
        len += ((Node *)parts.items[i])->slen;
    Node *last = parts.items[parts.len - 1];
    Node *s = parse_node(lx, N_STR, span_join(first->span, last->span));
    char *buf = arena_alloc(lx->arena, len + 1);
    if (!buf)
        return first;
    size_t at = 0;
    for (int i = 0; i < parts.len; i++) {
        const Node *p = parts.items[i];
        if (p->slen)
            memcpy(buf + at, p->str, p->slen);
        at += p->slen;
    }
    buf[len] = 0;
    s->str = buf;
    s->slen = len;
    return s;
}

Node *parse_import(LexState *lx, Node *dotted, Node *alias)
{
    Node *n = parse_node(lx, N_IMPORT, dotted->span);
    n->name = dotted->name;
    n->alias = alias ? alias->name : NULL;
    return n;
}

/* Import nodes start at their statement's keyword. */
void parse_stmt_start(PtrVec *v, Span at)
{
    for (int i = 0; i < v->len; i++) {
        Node *n = v->items[i];
        n->span.line = at.line;
        n->span.col = at.col;
    }
}

void parse_from_module(PtrVec *v, const Node *module, Span at)
{
    for (int i = 0; i < v->len; i++)
        ((Node *)v->items[i])->name = module->name;
    parse_stmt_start(v, at);
}

void parse_unsupported(LexState *lx, Span at, const char *what)
{
    parse_error(lx, at, "%s not supported in tk kernels", what);
}

/* ---- the depth limit ------------------------------------------------------ */

typedef struct DepthItem {
    const Node *n;
    int depth;
} DepthItem;

static void depth_push(Arena *a, DepthItem **stack, int *len, int *cap, const Node *n, int d)
{
    if (!n)
        return;
    if (*len == *cap) {
        int ncap = *cap ? *cap * 2 : 256;
        DepthItem *s = arena_alloc(a, sizeof(DepthItem) * (size_t)ncap);
        if (!s)
            return;
        if (*len)
            memcpy(s, *stack, sizeof(DepthItem) * (size_t)*len);
        *stack = s;
        *cap = ncap;
    }
    (*stack)[(*len)++] = (DepthItem){n, d};
}

/* Later stages recurse over the tree, so a tree deeper than PARSE_MAX_DEPTH
 * (a 100k-term expression) is an error here; checked without recursion. */
void parse_check_depth(LexState *lx, const Node *root)
{
    DepthItem *stack = NULL;
    int len = 0, cap = 0;
    depth_push(lx->arena, &stack, &len, &cap, root, 1);
    while (len > 0) {
        DepthItem it = stack[--len];
        const Node *n = it.n;
        if (it.depth > PARSE_MAX_DEPTH) {
            parse_error(lx, n->span,
                        "expression or block nested too deeply (the limit is %d levels)",
                        PARSE_MAX_DEPTH);
            return;
        }
        depth_push(lx->arena, &stack, &len, &cap, n->a, it.depth + 1);
        depth_push(lx->arena, &stack, &len, &cap, n->b, it.depth + 1);
        depth_push(lx->arena, &stack, &len, &cap, n->c, it.depth + 1);
        const NodeList *lists[3] = {&n->list, &n->list2, &n->list3};
        for (int l = 0; l < 3; l++)
            for (int i = 0; i < lists[l]->len; i++)
                depth_push(lx->arena, &stack, &len, &cap, lists[l]->items[i], it.depth + 1);
    }
}


/* Reports the second of two nodes with the same name (parameters, keyword
 * arguments); a hash set in the arena keeps it linear. */
void parse_check_unique(LexState *lx, PtrVec nodes, const char *what)
{
    if (nodes.len < 2)
        return;
    size_t cap = 16;
    while (cap < (size_t)nodes.len * 2)
        cap *= 2;
    const Node **slots = arena_alloc(lx->arena, sizeof(Node *) * cap);
    if (!slots)
        return;
    for (int i = 0; i < nodes.len; i++) {
        const Node *n = nodes.items[i];
        if (!n->name)
            continue;
        size_t h = (size_t)hash_bytes(0, n->name, strlen(n->name)) & (cap - 1);
        while (slots[h] && strcmp(slots[h]->name, n->name) != 0)
            h = (h + 1) & (cap - 1);
        if (slots[h]) {
            parse_error(lx, n->span, "duplicate %s '%s'", what, n->name);
            continue;
        }
        slots[h] = n;
    }
}

/* Parameters: names unique, and no parameter without a default after one
 * with a default (Python's rules). */
void parse_check_params(LexState *lx, PtrVec params)
{
    bool seen_default = false;
    for (int i = 0; i < params.len; i++) {
        const Node *p = params.items[i];
        if (p->b)
            seen_default = true;
        else if (seen_default)
            parse_error(lx, p->span, "parameter '%s' without a default follows one with a default",
                        p->name);
    }
    parse_check_unique(lx, params, "parameter");
}
