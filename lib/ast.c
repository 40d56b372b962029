/* ast.c: names of node kinds and operators, and the AST printer (placeholder). */
#include "ast.h"

const char *ast_kind_name(NodeKind k)
{
    static const char *names[] = {
#define X(k, doc) #k,
        TK_NODE_KINDS(X)
#undef X
    };
    return (unsigned)k < N_KIND_COUNT ? names[k] + 2 : "?";
}

const char *ast_op_spelling(OpKind op)
{
    static const char *names[] = {
#define X(k, s) s,
        TK_OPERATORS(X)
#undef X
    };
    return (unsigned)op < OP_COUNT ? names[op] : "?";
}

void ast_print(StrBuf *out, const Node *module)
{
    (void)out;
    (void)module;
}
