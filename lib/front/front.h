/* front.h: the interface of the front end (lib/front/ and grammar/): the
 * lexer and parser that turn text into the syntax tree, the tree itself,
 * and the reading of imported package files. Below it is only support/. */
#ifndef TK_FRONT_H
#define TK_FRONT_H

#include "support/support.h"

/* The syntax tree the parser builds and every later stage reads.
 * Nodes live in the compilation's arena and carry the span of the source
 * they came from. One node struct serves every kind; the table below says
 * which fields each kind uses. */

/* X(kind, what it is; which fields it uses) */
/* clang-format off */
#define TK_NODE_KINDS(X)                                                      \
    /* ---- top level ---- */                                                 \
    X(N_MODULE, "a file; list = items in order, src = the file")             \
    X(N_IMPORT, "import NAME[.NAME] [as ALIAS]; name = dotted module, alias, "\
                "target = the package file's module when found")            \
    X(N_FROM_IMPORT, "from NAME import NAME [as ALIAS]; name = module (with "  \
                     "its leading dots), str = imported name, alias, target " \
                     "= the module it names, or with NF_SUBMODULE the module "\
                     "the imported name is")                                  \
    X(N_FUNC, "def; name, list = params (N_PARAM), list2 = decorators "       \
              "(exprs), list3 = body statements")                             \
    X(N_HOST, "top-level host Python tk does not run (blanked before "         \
              "scanning); list = the names it binds (N_NAME, at their spans), " \
              "list2 = an import's N_IMPORT/N_FROM_IMPORT nodes")        \
    X(N_PARAM, "parameter; name, a = annotation or NULL, b = default or NULL, " \
               "op = 1 for *name, 2 for **name (a lambda's)")                      \
    /* ---- statements ---- */                                                \
    X(N_ASSIGN, "t1 = t2 = value; list = targets, a = value")                \
    X(N_ANNASSIGN, "target: annotation [= value]; a = target, b = annot, "    \
                   "c = value or NULL")                                       \
    X(N_AUGASSIGN, "target op= value; op, a = target, b = value")            \
    X(N_IF, "if/elif/else; a = cond, list = then, list2 = else (an elif is "  \
            "a single N_IF in list2)")                                        \
    X(N_FOR, "for target in iter; a = target, b = iter expr, list = body, "   \
             "list2 = else body (rejected later)")                            \
    X(N_WHILE, "while cond; a = cond, list = body")                          \
    X(N_WITH, "with ctx [as x], ...; list = body, list2 = the contexts")      \
    X(N_RETURN, "return [value]; a = value or NULL (a tuple for several)")   \
    X(N_PASS, "pass")                                                         \
    X(N_BREAK, "break")                                                       \
    X(N_CONTINUE, "continue")                                                 \
    X(N_ASSERT, "assert cond[, msg]; a = cond, b = msg or NULL")             \
    X(N_RAISE, "raise [exc [from cause]]; a = exc or NULL, b = cause or "     \
               "NULL (an error where a kernel reaches it)")                   \
    X(N_EXPR_STMT, "expression statement; a = expr")                         \
    /* ---- expressions ---- */                                               \
    X(N_NAME, "identifier; name")                                            \
    X(N_INT, "integer literal; ival (uval when it does not fit int64, with "  \
             "flags & NF_BIG_INT)")                                           \
    X(N_FLOAT, "float literal; fval")                                        \
    X(N_STR, "string literal (adjacent literals joined); str, slen")         \
    X(N_FSTR, "f-string (adjacent literals joined); list = pieces: N_STR "   \
              "text and N_FIELD replacement fields, in order")                \
    X(N_FIELD, "{a!c} in an f-string; a = expr, op = conversion 'r', 's', "  \
               "'a', or 0 for none (a format spec is read and ignored, as "  \
               "Triton ignores it)")                                          \
    X(N_TRUE, "True")                                                         \
    X(N_FALSE, "False")                                                       \
    X(N_NONE, "None")                                                         \
    X(N_BINOP, "a op b; op in OP_ADD..OP_RSHIFT, OP_BITAND.., OP_MATMUL")     \
    X(N_UNARY, "op a; op = OP_NEG, OP_POS, OP_INVERT, OP_NOT")               \
    X(N_BOOLOP, "a and b / a or b; op = OP_AND or OP_OR")                    \
    X(N_COMPARE, "chained comparison; list = operands (n+1), ops[] in "      \
                 "cmp_ops (n entries)")                                       \
    X(N_CALL, "call; a = callee, list = positional args, list2 = keyword "    \
              "args (N_KEYWORD)")                                             \
    X(N_KEYWORD, "name=value in a call; name, a = value")                    \
    X(N_ATTR, "a.name")                                                       \
    X(N_SUBSCRIPT, "a[...]; list = indices (exprs, N_SLICE, N_NONE)")         \
    X(N_SLICE, "lo:hi:step inside [...]; a, b, c (each may be NULL)")        \
    X(N_TUPLE, "(x, y) or x, y; list = items")                               \
    X(N_LISTCOMP, "[a for b in c if ...]; a = element, b = target, c = "   \
                  "iterable, list = conditions")                              \
    X(N_ELLIPSIS, "...")                                                      \
    X(N_LIST, "[x, y]; list = items")                                        \
    X(N_DICT, "{k: v}; list = keys, list2 = values")                         \
    X(N_IFEXP, "a if cond else b; a = then, b = cond, c = else")             \
    X(N_NAMEDEXPR, "name := value; a = the name, b = the value")              \
    X(N_LAMBDA, "lambda params: body; list = params (N_PARAM), a = body")    \
    X(N_STARRED, "*a in a call argument list, or **a as a dict key; a")                            \
    X(N_PTR_TYPE, "*fp32 in an annotation; name = element type spelling")
/* clang-format on */

typedef enum {
#define X(k, doc) k,
    TK_NODE_KINDS(X)
#undef X
        N_KIND_COUNT
} NodeKind;

/* Operators, shared by N_BINOP, N_UNARY, N_BOOLOP, N_COMPARE, N_AUGASSIGN. */
/* clang-format off */
#define TK_OPERATORS(X)                                                       \
    X(OP_ADD, "+") X(OP_SUB, "-") X(OP_MUL, "*") X(OP_DIV, "/")             \
    X(OP_FLOORDIV, "//") X(OP_MOD, "%") X(OP_POW, "**") X(OP_MATMUL, "@")   \
    X(OP_LSHIFT, "<<") X(OP_RSHIFT, ">>") X(OP_BITAND, "&")                  \
    X(OP_BITOR, "|") X(OP_BITXOR, "^") X(OP_AND, "and") X(OP_OR, "or")      \
    X(OP_NOT, "not") X(OP_NEG, "-") X(OP_POS, "+") X(OP_INVERT, "~")        \
    X(OP_LT, "<") X(OP_LE, "<=") X(OP_GT, ">") X(OP_GE, ">=")               \
    X(OP_EQ, "==") X(OP_NE, "!=") X(OP_IS, "is") X(OP_IS_NOT, "is not")     \
    X(OP_IN, "in") X(OP_NOT_IN, "not in")
/* clang-format on */

typedef enum {
#define X(k, s) k,
    TK_OPERATORS(X)
#undef X
        OP_COUNT
} OpKind;

/* NF_SUBMODULE: `from pkg import mod` where mod is a file of the package;
 * NF_CONSTEXPR_FN: an N_HOST that is a def decorated with
 * @triton.constexpr_function (sema reads it when a kernel calls it);
 * NF_HOST_FN: an N_HOST that is an undecorated def of the module, which
 * module constants may call as Python does on import (sema reads it then) */
enum {
    NF_BIG_INT = 1 << 0,
    NF_PAREN = 1 << 1,
    NF_SUBMODULE = 1 << 2,
    NF_CONSTEXPR_FN = 1 << 3,
    NF_HOST_FN = 1 << 4
};

typedef struct Node Node;
typedef struct NodeList {
    Node **items;
    int len;
} NodeList;

struct Node {
    NodeKind kind;
    Span span;
    int op;    /* OpKind for operator nodes */
    int flags; /* NF_* */
    int depth; /* levels of expression below and including this node, as
                  the parser counts them (parse_deepen); 0 for a leaf */
    const char *name;
    const char *alias;
    const char *str;
    size_t slen;
    int64_t ival;
    uint64_t uval;
    double fval;
    Node *a, *b, *c;
    NodeList list, list2, list3;
    OpKind *cmp_ops;   /* N_COMPARE: list.len - 1 entries */
    const Source *src; /* N_MODULE: the file it was read from */
    /* N_IMPORT, N_FROM_IMPORT: the N_MODULE of another file of the package
     * (front/package.c). Never walked: imports may form cycles. */
    Node *target;
};

const char *ast_kind_name(NodeKind k);
const char *ast_op_spelling(OpKind op);

/* Prints the tree as an indented S-expression-like text, one node per
 * line with its line:col; stable, for golden tests (--emit=ast). */
void ast_print(StrBuf *out, const Node *module);

/* ---- the lexer and parser (grammar/) and packages (package.c) ------------- */

/* Writes one line per token ("LINE:COL KIND 'text'"), for --emit=tokens. */
bool lex_dump_tokens(const Source *src, Diag *d, StrBuf *out);
/* What the front end asks about tk's own builtins when it decides host
 * conditions (`hasattr(tl, NAME)`, libdevice names imported under another
 * module path). Sema answers; it sits above the front end, so the driver
 * passes the answers down once, before parsing. Unset, such conditions stay
 * undecided. */
typedef struct FrontBuiltins {
    bool (*exists)(const char *ns, const char *name);
    bool (*libdevice_known)(const char *name);
} FrontBuiltins;
void front_set_builtins(const FrontBuiltins *b);
/* The arch ("sm_90a") the next parse on this thread compiles for: host
 * device checks (`torch.cuda.get_device_capability()[0] >= 9`,
 * `triton.runtime.driver.active.get_current_target().arch`) are decided
 * from it. NULL or "": such checks stay undecided. */
void front_set_target(const char *arch);
/* The arch set by front_set_target on this thread ("" when none). */
const char *front_target(void);
/* Parses a whole file. Returns the N_MODULE (possibly partial) and reports
 * every syntax error to d; the caller checks d->errors. */
Node *parse_module(const Source *src, Arena *a, Diag *d);
/* Parses a file another module imports: host code is split off even when
 * the file has no kernel. */
Node *parse_python_module(const Source *src, Arena *a, Diag *d);
/* Reads the package files that the module's imports name (front/package.c),
 * relative to its file, then in `search` (NULL-terminated folders), then in
 * its file's parent folders; points each import node's `target` at the
 * parsed file. An import it cannot find stays a host name. Returns how many
 * files it read, their sources in *files. */
int package_load(Node *module, const char *const *search, Arena *a, Diag *d, const Source ***files);

/* Texts that stand for package files on disk (front/overlay.c, the public
 * tk_source_overlay): every later read of the file `path` by package.c, in
 * any compilation of the process, reads a copy of `text` instead; NULL
 * removes it. Paths are compared after realpath(); a text for a path that
 * names no file is TK_ERR_NOT_FOUND. */
tk_status overlay_set(const char *path, const char *text);
/* Whether a text stands for `path`: then *text is its copy in the arena
 * (NULL when the arena ran out) and *len its bytes. */
bool overlay_read(Arena *a, const char *path, char **text, size_t *len);
/* Folders every later compilation of the process searches for package
 * files (the public tk_source_search_path), kept once each by realpath();
 * a name that is no folder is TK_ERR_NOT_FOUND. overlay_search: a
 * NULL-terminated copy in the arena, NULL when none was added. */
tk_status overlay_search_add(const char *dir);
const char *const *overlay_search(Arena *a);

#endif
