/* ast.c: names of node kinds and operators, and the tree printer behind
 * --emit=ast. Assumes a tree built by the parser (grammar/tk.y).
 * Guarantees a stable text, one node per line:
 *
 *     [ROLE: ]KIND[ DETAIL] @LINE:COL
 *
 * indented two spaces per level below its parent. KIND is the node kind
 * without its N_ prefix (FUNC, PARAM, BINOP, ...). DETAIL is the name
 * (NAME, ATTR, FUNC, PARAM, KEYWORD), the value (INT, FLOAT, STR quoted
 * with escapes), the operator (BINOP +, UNARY -, BOOLOP and, AUGASSIGN +=,
 * COMPARE < <=), `module [as alias]` (IMPORT), `module import name [as
 * alias]` (FROM_IMPORT), or `*elem` (PTR_TYPE). ROLE names a child whose
 * place is not obvious from its kind: decorator, annotation, default,
 * target, value, then, else, cond, iter, index, lo, hi, step, key, msg,
 * body. Children come in field order (a, b, c, list, list2, list3). */
#include "front/front.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* A guard for trees the parser did not check (it rejects deeper ones). */
enum { AST_PRINT_MAX_DEPTH = 2000 };

const char *ast_kind_name(NodeKind k)
{
    static const char *const names[] = {
#define X(k, doc) #k,
        TK_NODE_KINDS(X)
#undef X
    };
    return (unsigned)k < N_KIND_COUNT ? names[k] + 2 : "?";
}

const char *ast_op_spelling(OpKind op)
{
    static const char *const names[] = {
#define X(k, s) s,
        TK_OPERATORS(X)
#undef X
    };
    return (unsigned)op < OP_COUNT ? names[op] : "?";
}

static void print_quoted(StrBuf *out, const char *s, size_t n)
{
    sb_putc(out, '\'');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\'' || c == '\\')
            sb_printf(out, "\\%c", c);
        else if (c == '\n')
            sb_puts(out, "\\n");
        else if (c == '\t')
            sb_puts(out, "\\t");
        else if (c < 0x20 || c == 0x7f)
            sb_printf(out, "\\x%02x", c);
        else
            sb_putc(out, (char)c);
    }
    sb_putc(out, '\'');
}

/* The shortest %g form that reads back as the same double. */
static void print_float(StrBuf *out, double v)
{
    char buf[64];
    int prec = 1;
    for (; prec < 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v || v != v)
            break;
    }
    /* Whole numbers below 1e16 print without an exponent. */
    double mag = v < 0 ? -v : v;
    int digits = 0;
    for (double p = 1; p <= mag && digits < 17; p *= 10)
        digits++;
    snprintf(buf, sizeof buf, "%.*g", prec > digits ? prec : digits, v);
    sb_printf(out, " %s", buf);
}

/* What follows the kind on a node's line. */
static void print_detail(StrBuf *out, const Node *n)
{
    switch (n->kind) {
    case N_NAME:
    case N_ATTR:
    case N_FUNC:
    case N_PARAM:
    case N_KEYWORD: sb_printf(out, " %s", n->name ? n->name : "?"); break;
    case N_INT:
        if (n->flags & NF_BIG_INT)
            sb_printf(out, " %" PRIu64 " (big)", n->uval);
        else
            sb_printf(out, " %" PRId64, n->ival);
        break;
    case N_FLOAT: print_float(out, n->fval); break;
    case N_STR:
        sb_putc(out, ' ');
        print_quoted(out, n->str ? n->str : "", n->str ? n->slen : 0);
        break;
    case N_FIELD:
        if (n->op)
            sb_printf(out, " !%c", n->op);
        break;
    case N_BINOP:
    case N_UNARY:
    case N_BOOLOP: sb_printf(out, " %s", ast_op_spelling((OpKind)n->op)); break;
    case N_AUGASSIGN: sb_printf(out, " %s=", ast_op_spelling((OpKind)n->op)); break;
    case N_COMPARE:
        for (int i = 0; i + 1 < n->list.len; i++)
            sb_printf(out, " %s", ast_op_spelling(n->cmp_ops[i]));
        break;
    case N_IMPORT:
        sb_printf(out, " %s", n->name ? n->name : "?");
        if (n->alias)
            sb_printf(out, " as %s", n->alias);
        break;
    case N_FROM_IMPORT:
        sb_printf(out, " %s import %s", n->name ? n->name : "?", n->str ? n->str : "?");
        if (n->alias)
            sb_printf(out, " as %s", n->alias);
        break;
    case N_PTR_TYPE: sb_printf(out, " *%s", n->name ? n->name : "?"); break;
    default: break;
    }
    /* the package file an import was found in */
    if ((n->kind == N_IMPORT || n->kind == N_FROM_IMPORT) && n->target && n->target->src)
        sb_printf(out, " -> %s%s", n->target->src->name,
                  n->flags & NF_SUBMODULE ? " (module)" : "");
}

static void print_node(StrBuf *out, const Node *n, int depth, const char *role);

static void print_list(StrBuf *out, const NodeList *l, int depth, const char *role)
{
    for (int i = 0; i < l->len; i++)
        print_node(out, l->items[i], depth, role);
}

/* The roles of a, b and c for each kind (NULL: no label). */
static void child_roles(NodeKind k, const char *r[3])
{
    r[0] = r[1] = r[2] = NULL;
    switch (k) {
    case N_PARAM:
        r[0] = "annotation";
        r[1] = "default";
        break;
    case N_ASSIGN: r[0] = "value"; break;
    case N_ANNASSIGN:
        r[0] = "target";
        r[1] = "annotation";
        r[2] = "value";
        break;
    case N_AUGASSIGN:
        r[0] = "target";
        r[1] = "value";
        break;
    case N_FOR:
        r[0] = "target";
        r[1] = "iter";
        break;
    case N_ASSERT: r[1] = "msg"; break;
    case N_RAISE:
        r[0] = "exc";
        r[1] = "cause";
        break;
    case N_SLICE:
        r[0] = "lo";
        r[1] = "hi";
        r[2] = "step";
        break;
    case N_IFEXP:
        r[0] = "then";
        r[1] = "cond";
        r[2] = "else";
        break;
    case N_LAMBDA: r[0] = "body"; break;
    case N_NAMEDEXPR:
        r[0] = "name";
        r[1] = "value";
        break;
    default: break;
    }
}

static void print_children(StrBuf *out, const Node *n, int depth)
{
    const char *r[3];
    child_roles(n->kind, r);
    if (n->kind == N_DICT) {
        for (int i = 0; i < n->list.len && i < n->list2.len; i++) {
            print_node(out, n->list.items[i], depth, "key");
            print_node(out, n->list2.items[i], depth, "value");
        }
        return;
    }
    if (n->kind == N_LAMBDA || n->kind == N_FUNC) {
        /* Parameters first, then the rest, as the source reads. */
        print_list(out, &n->list2, depth, "decorator");
        print_list(out, &n->list, depth, NULL);
        if (n->a)
            print_node(out, n->a, depth, r[0]);
        print_list(out, &n->list3, depth, NULL);
        return;
    }
    if (n->kind == N_ASSIGN) {
        print_list(out, &n->list, depth, "target");
        print_node(out, n->a, depth, r[0]);
        return;
    }
    if (n->a)
        print_node(out, n->a, depth, r[0]);
    if (n->b)
        print_node(out, n->b, depth, r[1]);
    if (n->c)
        print_node(out, n->c, depth, r[2]);
    const char *l1 = n->kind == N_IF ? "then" : n->kind == N_SUBSCRIPT ? "index" : NULL;
    const char *l2 = n->kind == N_IF || n->kind == N_FOR ? "else"
        : n->kind == N_HOST                              ? "import"
                                                         : NULL;
    print_list(out, &n->list, depth, l1);
    print_list(out, &n->list2, depth, l2);
    print_list(out, &n->list3, depth, NULL);
}

static void print_node(StrBuf *out, const Node *n, int depth, const char *role)
{
    if (!n)
        return;
    for (int i = 0; i < depth; i++)
        sb_puts(out, "  ");
    if (depth > AST_PRINT_MAX_DEPTH) {
        sb_puts(out, "...\n");
        return;
    }
    if (role)
        sb_printf(out, "%s: ", role);
    sb_puts(out, ast_kind_name(n->kind));
    print_detail(out, n);
    sb_printf(out, " @%d:%d\n", n->span.line, n->span.col);
    print_children(out, n, depth + 1);
}

void ast_print(StrBuf *out, const Node *module) { print_node(out, module, 0, NULL); }
