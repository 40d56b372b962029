/* tk.y: the grammar of .tk files (Python's syntax, the part Triton kernels
 * use). Pure bison parser with locations; actions only build AST nodes in the
 * arena and check what the grammar alone cannot (assignment targets,
 * argument order). Guarantees: every syntax error is reported once with an
 * exact span, recovery resumes at the next line so one run reports several
 * errors, and the returned tree is never deeper than PARSE_MAX_DEPTH. */
%define api.pure full
%define api.prefix {tk_yy}
%define api.location.type {Span}
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%param {LexState *lx}

%code top {
#include "base.h"
#define YYMALLOC tk_xalloc
#define YYFREE tk_xfree
}

%code requires {
#include <setjmp.h>

#include "ast.h"
#include "base.h"

enum {
    LEX_MAX_BRACKETS = 200, /* open brackets at once */
    LEX_MAX_INDENT = 100,   /* open indentation blocks at once (Python's limit) */
    PARSE_MAX_DEPTH = 1000  /* depth of the finished tree, for stages that recurse */
};

/* Everything one run of the scanner and parser needs; no global state. */
typedef struct LexState {
    const Source *src;
    Arena *arena;
    Diag *diag;
    void *scanner;          /* flex's yyscan_t */
    jmp_buf oom_jump;       /* where flex's fatal error (out of memory) lands */
    size_t offset;          /* bytes of src->text consumed */
    int line, col;          /* position of the next byte */
    const char *tok_text;   /* source text of the last token (empty for layout) */
    size_t tok_len;
    /* layout: the whitespace prefix of each open block; [0] is the file's "" */
    const char *indent_ws[LEX_MAX_INDENT + 1];
    int indent_len[LEX_MAX_INDENT + 1];
    int nindent;
    int pending_dedents;
    Span pending_span;
    bool line_has_tokens;   /* a token since the last NEWLINE */
    char bracket[LEX_MAX_BRACKETS];
    Span bracket_at[LEX_MAX_BRACKETS];
    int nbrackets;
    bool fatal;             /* give up: END from now on, no more syntax errors */
    bool recovering;        /* a syntax error since the last complete statement */
    int error_line;         /* line of the last error the scanner reported */
    int indent_error_line;  /* line whose indentation was wrong */
    Node *module;
} LexState;

typedef struct ParseSeq {   /* a comma-separated list; comma: a trailing one */
    PtrVec v;
    bool comma;
} ParseSeq;

typedef struct ParseArgs {  /* call arguments */
    PtrVec pos, kw;
} ParseArgs;

typedef struct ParseChain { /* if/elif chain: first and last N_IF */
    Node *head, *tail;
} ParseChain;

#define YYLLOC_DEFAULT(Cur, Rhs, N)                                        \
    do {                                                                   \
        if (N) {                                                           \
            (Cur).line = YYRHSLOC(Rhs, 1).line;                            \
            (Cur).col = YYRHSLOC(Rhs, 1).col;                              \
            (Cur).end_line = YYRHSLOC(Rhs, N).end_line;                    \
            (Cur).end_col = YYRHSLOC(Rhs, N).end_col;                      \
        } else {                                                           \
            (Cur).line = (Cur).end_line = YYRHSLOC(Rhs, 0).end_line;       \
            (Cur).col = (Cur).end_col = YYRHSLOC(Rhs, 0).end_col;          \
        }                                                                  \
    } while (0)
}

%code provides {
bool lex_open(LexState *lx, const Source *src, Arena *a, Diag *d);
void lex_close(LexState *lx);
int lex_next(TK_YYSTYPE *val, Span *loc, LexState *lx);
const char *parse_token_name(int tok);
}

%union {
    Node *node;
    PtrVec vec;
    ParseSeq seq;
    ParseArgs args;
    ParseChain chain;
    int op;
}

%code {
#include <string.h>

#include "compiler.h"

#define tk_yylex lex_next
static void tk_yyerror(Span *loc, LexState *lx, const char *msg);

static Node *mk(LexState *lx, NodeKind k, Span at)
{
    Node *n = arena_alloc(lx->arena, sizeof *n);
    n->kind = k;
    n->span = at;
    return n;
}

static Node *mk2(LexState *lx, NodeKind k, Span at, int op, Node *a, Node *b)
{
    Node *n = mk(lx, k, at);
    n->op = op;
    n->a = a;
    n->b = b;
    return n;
}

static PtrVec vec1(LexState *lx, void *item)
{
    PtrVec v = {0};
    vec_push(lx->arena, &v, item);
    return v;
}

static void vec_append(LexState *lx, PtrVec *to, PtrVec from)
{
    for (int i = 0; i < from.len; i++)
        vec_push(lx->arena, to, from.items[i]);
}

static NodeList list_of(LexState *lx, PtrVec v)
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

static void error_at(LexState *lx, Span at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void error_at(LexState *lx, Span at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(lx->diag, DIAG_ERROR, at, fmt, ap);
    va_end(ap);
}

/* A comma list is a tuple; one item without a comma is just that item. */
static Node *seq_node(LexState *lx, ParseSeq s, Span at)
{
    if (s.v.len == 1 && !s.comma)
        return s.v.items[0];
    Node *t = mk(lx, N_TUPLE, at);
    t->list = list_of(lx, s.v);
    return t;
}

static const char *target_problem(const Node *n)
{
    switch (n->kind) {
    case N_CALL: return "a function call";
    case N_INT: case N_FLOAT: case N_STR: case N_TRUE: case N_FALSE: case N_NONE:
        return "a literal";
    case N_BINOP: case N_UNARY: case N_BOOLOP: case N_COMPARE: return "an expression";
    case N_LAMBDA: return "a lambda";
    case N_IFEXP: return "a conditional expression";
    case N_DICT: return "a dict";
    default: return "this expression";
    }
}

/* Only names, attributes, subscripts and tuples/lists of them can be
 * assigned; `aug` (x += 1) and annotations allow no tuples. */
static void check_target(LexState *lx, const Node *n, bool single, const char *what)
{
    if (n->kind == N_NAME || n->kind == N_ATTR || n->kind == N_SUBSCRIPT)
        return;
    if ((n->kind == N_TUPLE || n->kind == N_LIST) && !single) {
        for (int i = 0; i < n->list.len; i++)
            check_target(lx, n->list.items[i], false, what);
        return;
    }
    if (n->kind == N_TUPLE || n->kind == N_LIST)
        error_at(lx, n->span, "%s needs a single target, not a tuple", what);
    else
        error_at(lx, n->span, "cannot assign to %s", target_problem(n));
}

static Node *binop(LexState *lx, Span at, int op, Node *a, Node *b)
{
    return mk2(lx, N_BINOP, at, op, a, b);
}

/* `a < b < c` is one N_COMPARE with three operands. */
static Node *compare(LexState *lx, Span at, Node *lhs, int op, Node *rhs)
{
    if (lhs->kind != N_COMPARE || (lhs->flags & NF_PAREN)) {
        Node *c = mk(lx, N_COMPARE, at);
        Node **items = arena_alloc(lx->arena, sizeof(Node *) * 2);
        c->cmp_ops = arena_alloc(lx->arena, sizeof(OpKind));
        items[0] = lhs;
        items[1] = rhs;
        c->list = (NodeList){items, 2};
        c->cmp_ops[0] = (OpKind)op;
        return c;
    }
    int n = lhs->list.len;
    Node **items = arena_alloc(lx->arena, sizeof(Node *) * (size_t)(n + 1));
    OpKind *ops = arena_alloc(lx->arena, sizeof(OpKind) * (size_t)n);
    if (!items || !ops)
        return lhs;
    memcpy(items, lhs->list.items, sizeof(Node *) * (size_t)n);
    memcpy(ops, lhs->cmp_ops, sizeof(OpKind) * (size_t)(n - 1));
    items[n] = rhs;
    ops[n - 1] = (OpKind)op;
    lhs->list = (NodeList){items, n + 1};
    lhs->cmp_ops = ops;
    lhs->span = at;
    return lhs;
}

static Node *param(LexState *lx, Node *name, Node *annot, Node *dflt)
{
    Node *p = mk(lx, N_PARAM, name->span);
    p->name = name->name;
    /* A string annotation "*fp32" means the same as *fp32. */
    if (annot && annot->kind == N_STR && annot->slen > 1 && annot->str[0] == '*') {
        Node *t = mk(lx, N_PTR_TYPE, annot->span);
        t->name = annot->str + 1;
        annot = t;
    }
    p->a = annot;
    p->b = dflt;
    return p;
}

static Node *ptr_type(LexState *lx, Span at, Node *elem)
{
    Node *t = mk(lx, N_PTR_TYPE, at);
    t->name = elem->name;
    return t;
}

static void add_arg(LexState *lx, ParseArgs *args, Node *arg)
{
    if (arg->kind == N_KEYWORD) {
        vec_push(lx->arena, &args->kw, arg);
        return;
    }
    if (args->kw.len > 0 && arg->kind != N_STARRED)
        error_at(lx, arg->span, "positional argument follows keyword argument");
    vec_push(lx->arena, &args->pos, arg);
}

static Node *join_strings(LexState *lx, Node *a, Node *b)
{
    Node *s = mk(lx, N_STR, span_join(a->span, b->span));
    char *buf = arena_alloc(lx->arena, a->slen + b->slen + 1);
    if (!buf)
        return a;
    memcpy(buf, a->str, a->slen);
    memcpy(buf + a->slen, b->str, b->slen);
    buf[a->slen + b->slen] = 0;
    s->str = buf;
    s->slen = a->slen + b->slen;
    return s;
}

static Node *import_node(LexState *lx, Node *dotted, Node *alias)
{
    Node *n = mk(lx, N_IMPORT, dotted->span);
    n->name = dotted->name;
    n->alias = alias ? alias->name : NULL;
    return n;
}

/* Import nodes start at their statement's keyword. */
static void stmt_start(PtrVec *v, Span at)
{
    for (int i = 0; i < v->len; i++) {
        Node *n = v->items[i];
        n->span.line = at.line;
        n->span.col = at.col;
    }
}

static void from_module(PtrVec *v, const Node *module, Span at)
{
    for (int i = 0; i < v->len; i++)
        ((Node *)v->items[i])->name = module->name;
    stmt_start(v, at);
}

static void unsupported(LexState *lx, Span at, const char *what)
{
    error_at(lx, at, "%s not supported in tk kernels", what);
}
}

%token END 0 "end of file"
%token <node> NAME "identifier" INT "integer" FLOAT "number" STRING "string"
%token <node> RESERVED "reserved word"
%token NEWLINE "end of line" INDENT "indent" DEDENT "dedent"
%token DEF "def" RETURN "return" IF "if" ELIF "elif" ELSE "else" FOR "for" IN "in"
%token WHILE "while" PASS "pass" BREAK "break" CONTINUE "continue" AND "and" OR "or"
%token NOT "not" IS "is" NONE "None" TRUE "True" FALSE "False" IMPORT "import"
%token FROM "from" AS "as" LAMBDA "lambda" ASSERT "assert"
%token PLUS "+" MINUS "-" STAR "*" SLASH "/" DSLASH "//" PERCENT "%" DSTAR "**" AT "@"
%token LSHIFT "<<" RSHIFT ">>" AMP "&" PIPE "|" CARET "^" TILDE "~"
%token LT "<" GT ">" LE "<=" GE ">=" EQEQ "==" NE "!="
%token ASSIGN "=" ARROW "->" DOT "." COMMA "," COLON ":" SEMI ";"
%token LPAR "(" RPAR ")" LSQB "[" RSQB "]" LBRACE "{" RBRACE "}"
%token <op> AUGASSIGN "augmented assignment"

%type <vec> stmts stmt simple_stmt small_stmts small_stmt import_names from_names
%type <vec> decorators dict_items params param_list lparams suite opt_loop_else
%type <node> compound_stmt expr_stmt if_stmt for_stmt while_stmt funcdef decorator
%type <node> dotted dotted_as from_as param lparam annotation lambdef
%type <node> testlist targetlist test or_test and_test not_test comparison expr xor_expr
%type <node> and_expr shift_expr arith term factor power primary atom strings
%type <node> subscript opt_test arg
%type <seq> tests tests_tc exprs subscripts subscripts_tc assign_chain
%type <args> arglist args
%type <chain> if_chain
%type <op> comp_op

%%

module: stmts { lx->module->list = list_of(lx, $1); }
    ;

stmts: %empty { $$ = (PtrVec){0}; }
    | stmts stmt { $$ = $1; vec_append(lx, &$$, $2); }
    ;

stmt: simple_stmt { $$ = $1; lx->recovering = false; }
    | compound_stmt { $$ = vec1(lx, $1); lx->recovering = false; }
    | error NEWLINE { $$ = (PtrVec){0}; yyerrok; }
    | INDENT {
        if (!lx->recovering && lx->indent_error_line != @1.line)
            error_at(lx, (Span){@1.end_line, @1.end_col, @1.end_line, @1.end_col + 1},
                     "unexpected indent");
      } stmts DEDENT { $$ = $3; }
    ;

simple_stmt: small_stmts NEWLINE { $$ = $1; }
    | small_stmts ";" NEWLINE { $$ = $1; }
    ;

small_stmts: small_stmt { $$ = $1; }
    | small_stmts ";" small_stmt { $$ = $1; vec_append(lx, &$$, $3); }
    ;

small_stmt: expr_stmt { $$ = vec1(lx, $1); }
    | PASS { $$ = vec1(lx, mk(lx, N_PASS, @1)); }
    | BREAK { $$ = vec1(lx, mk(lx, N_BREAK, @1)); }
    | CONTINUE { $$ = vec1(lx, mk(lx, N_CONTINUE, @1)); }
    | RETURN { $$ = vec1(lx, mk(lx, N_RETURN, @1)); }
    | RETURN testlist { $$ = vec1(lx, mk2(lx, N_RETURN, @$, 0, $2, NULL)); }
    | ASSERT test { $$ = vec1(lx, mk2(lx, N_ASSERT, @$, 0, $2, NULL)); }
    | ASSERT test "," test { $$ = vec1(lx, mk2(lx, N_ASSERT, @$, 0, $2, $4)); }
    | IMPORT import_names { $$ = $2; stmt_start(&$$, @1); }
    | FROM dotted IMPORT from_names { $$ = $4; from_module(&$$, $2, @1); }
    | FROM dotted IMPORT "(" from_names ")" { $$ = $5; from_module(&$$, $2, @1); }
    | FROM dotted IMPORT "(" from_names "," ")" { $$ = $5; from_module(&$$, $2, @1); }
    | FROM dotted IMPORT "*" {
        Node *n = mk(lx, N_FROM_IMPORT, @$);
        n->name = $2->name;
        n->span = @$;
        n->str = "*";
        $$ = vec1(lx, n);
      }
    ;

expr_stmt: testlist { $$ = mk2(lx, N_EXPR_STMT, @$, 0, $1, NULL); }
    | assign_chain {
        $$ = mk(lx, N_ASSIGN, @$);
        int n = $1.v.len - 1;
        $$->a = $1.v.items[n];
        $1.v.len = n;
        for (int i = 0; i < n; i++)
            check_target(lx, $1.v.items[i], false, "assignment");
        $$->list = list_of(lx, $1.v);
      }
    | testlist AUGASSIGN testlist {
        check_target(lx, $1, true, "augmented assignment");
        $$ = mk2(lx, N_AUGASSIGN, @$, $2, $1, $3);
      }
    | testlist ":" annotation {
        check_target(lx, $1, true, "an annotation");
        $$ = mk2(lx, N_ANNASSIGN, @$, 0, $1, $3);
      }
    | testlist ":" annotation "=" testlist {
        check_target(lx, $1, true, "an annotation");
        $$ = mk2(lx, N_ANNASSIGN, @$, 0, $1, $3);
        $$->c = $5;
      }
    ;

assign_chain: testlist "=" testlist { $$.v = vec1(lx, $1); vec_push(lx->arena, &$$.v, $3); $$.comma = false; }
    | assign_chain "=" testlist { $$ = $1; vec_push(lx->arena, &$$.v, $3); }
    ;

import_names: dotted_as { $$ = vec1(lx, $1); }
    | import_names "," dotted_as { $$ = $1; vec_push(lx->arena, &$$, $3); }
    ;

dotted_as: dotted { $$ = import_node(lx, $1, NULL); }
    | dotted AS NAME { $$ = import_node(lx, $1, $3); $$->span = @$; }
    ;

dotted: NAME { $$ = $1; }
    | dotted "." NAME {
        $$ = mk(lx, N_NAME, @$);
        $$->name = arena_printf(lx->arena, "%s.%s", $1->name, $3->name);
      }
    ;

from_names: from_as { $$ = vec1(lx, $1); }
    | from_names "," from_as { $$ = $1; vec_push(lx->arena, &$$, $3); }
    ;

from_as: NAME { $$ = mk(lx, N_FROM_IMPORT, @$); $$->str = $1->name; }
    | NAME AS NAME { $$ = mk(lx, N_FROM_IMPORT, @$); $$->str = $1->name; $$->alias = $3->name; }
    ;

compound_stmt: if_stmt | for_stmt | while_stmt | funcdef
    | decorators funcdef { $$ = $2; $$->list2 = list_of(lx, $1); }
    ;

if_stmt: if_chain { $$ = $1.head; }
    | if_chain ELSE ":" suite { $$ = $1.head; $1.tail->list2 = list_of(lx, $4); }
    ;

if_chain: IF test ":" suite {
        Node *n = mk2(lx, N_IF, @$, 0, $2, NULL);
        n->list = list_of(lx, $4);
        $$.head = $$.tail = n;
      }
    | if_chain ELIF test ":" suite {
        Node *n = mk2(lx, N_IF, (Span){@2.line, @2.col, @5.end_line, @5.end_col}, 0, $3, NULL);
        n->list = list_of(lx, $5);
        $1.tail->list2 = list_of(lx, vec1(lx, n));
        $$.head = $1.head;
        $$.tail = n;
      }
    ;

for_stmt: FOR targetlist IN testlist ":" suite opt_loop_else {
        check_target(lx, $2, false, "a for loop");
        $$ = mk2(lx, N_FOR, @$, 0, $2, $4);
        $$->list = list_of(lx, $6);
        $$->list2 = list_of(lx, $7);
      }
    ;

while_stmt: WHILE test ":" suite opt_loop_else {
        $$ = mk2(lx, N_WHILE, @$, 0, $2, NULL);
        $$->list = list_of(lx, $4);
      }
    ;

opt_loop_else: %empty { $$ = (PtrVec){0}; }
    | ELSE ":" suite { unsupported(lx, @1, "'else' after a loop is"); $$ = $3; }
    ;

suite: simple_stmt { $$ = $1; }
    | NEWLINE INDENT stmts DEDENT { $$ = $3; }
    ;

funcdef: DEF NAME "(" params ")" opt_return ":" suite {
        $$ = mk(lx, N_FUNC, @$);
        $$->name = $2->name;
        $$->list = list_of(lx, $4);
        $$->list3 = list_of(lx, $8);
      }
    ;

opt_return: %empty | "->" annotation { }
    ;

decorators: decorator { $$ = vec1(lx, $1); }
    | decorators decorator { $$ = $1; vec_push(lx->arena, &$$, $2); }
    ;

decorator: "@" test NEWLINE { $$ = $2; }
    ;

params: %empty { $$ = (PtrVec){0}; }
    | param_list { $$ = $1; }
    | param_list "," { $$ = $1; }
    ;

param_list: param { $$ = vec1(lx, $1); }
    | param_list "," param { $$ = $1; vec_push(lx->arena, &$$, $3); }
    ;

param: NAME { $$ = param(lx, $1, NULL, NULL); }
    | NAME ":" annotation { $$ = param(lx, $1, $3, NULL); }
    | NAME "=" test { $$ = param(lx, $1, NULL, $3); }
    | NAME ":" annotation "=" test { $$ = param(lx, $1, $3, $5); }
    | "*" NAME { unsupported(lx, @$, "variadic parameters are"); $$ = param(lx, $2, NULL, NULL); }
    | "**" NAME { unsupported(lx, @$, "variadic parameters are"); $$ = param(lx, $2, NULL, NULL); }
    ;

annotation: test { $$ = $1; }
    | "*" NAME { $$ = ptr_type(lx, @$, $2); }
    ;

testlist: tests_tc { $$ = seq_node(lx, $1, @$); }
    ;

/* Comma lists; the _tc forms allow one trailing comma. `comma` records
 * whether there was any comma, which makes `x,` a tuple. */
tests_tc: tests { $$ = $1; }
    | tests "," { $$ = $1; $$.comma = true; }
    ;

tests: test { $$.v = vec1(lx, $1); $$.comma = false; }
    | tests "," test { $$ = $1; vec_push(lx->arena, &$$.v, $3); $$.comma = true; }
    ;

targetlist: exprs { $$ = seq_node(lx, $1, @$); }
    | exprs "," { $1.comma = true; $$ = seq_node(lx, $1, @$); }
    ;

exprs: expr { $$.v = vec1(lx, $1); $$.comma = false; }
    | exprs "," expr { $$ = $1; vec_push(lx->arena, &$$.v, $3); $$.comma = true; }
    ;

test: or_test { $$ = $1; }
    | or_test IF or_test ELSE test {
        $$ = mk2(lx, N_IFEXP, @$, 0, $1, $3);
        $$->c = $5;
      }
    | lambdef { $$ = $1; }
    ;

lambdef: LAMBDA ":" test {
        $$ = mk2(lx, N_LAMBDA, @$, 0, $3, NULL);
      }
    | LAMBDA lparams ":" test {
        $$ = mk2(lx, N_LAMBDA, @$, 0, $4, NULL);
        $$->list = list_of(lx, $2);
      }
    ;

lparams: lparam { $$ = vec1(lx, $1); }
    | lparams "," lparam { $$ = $1; vec_push(lx->arena, &$$, $3); }
    ;

lparam: NAME { $$ = param(lx, $1, NULL, NULL); }
    | NAME "=" test { $$ = param(lx, $1, NULL, $3); }
    | "*" NAME { unsupported(lx, @$, "variadic parameters are"); $$ = param(lx, $2, NULL, NULL); }
    ;

or_test: and_test { $$ = $1; }
    | or_test OR and_test { $$ = mk2(lx, N_BOOLOP, @$, OP_OR, $1, $3); }
    ;

and_test: not_test { $$ = $1; }
    | and_test AND not_test { $$ = mk2(lx, N_BOOLOP, @$, OP_AND, $1, $3); }
    ;

not_test: NOT not_test { $$ = mk2(lx, N_UNARY, @$, OP_NOT, $2, NULL); }
    | comparison { $$ = $1; }
    ;

comparison: expr { $$ = $1; }
    | comparison comp_op expr { $$ = compare(lx, @$, $1, $2, $3); }
    ;

comp_op: "<" { $$ = OP_LT; }
    | ">" { $$ = OP_GT; }
    | "<=" { $$ = OP_LE; }
    | ">=" { $$ = OP_GE; }
    | "==" { $$ = OP_EQ; }
    | "!=" { $$ = OP_NE; }
    | IN { $$ = OP_IN; }
    | NOT IN { $$ = OP_NOT_IN; }
    | IS { $$ = OP_IS; }
    | IS NOT { $$ = OP_IS_NOT; }
    ;

expr: xor_expr { $$ = $1; }
    | expr "|" xor_expr { $$ = binop(lx, @$, OP_BITOR, $1, $3); }
    ;

xor_expr: and_expr { $$ = $1; }
    | xor_expr "^" and_expr { $$ = binop(lx, @$, OP_BITXOR, $1, $3); }
    ;

and_expr: shift_expr { $$ = $1; }
    | and_expr "&" shift_expr { $$ = binop(lx, @$, OP_BITAND, $1, $3); }
    ;

shift_expr: arith { $$ = $1; }
    | shift_expr "<<" arith { $$ = binop(lx, @$, OP_LSHIFT, $1, $3); }
    | shift_expr ">>" arith { $$ = binop(lx, @$, OP_RSHIFT, $1, $3); }
    ;

arith: term { $$ = $1; }
    | arith "+" term { $$ = binop(lx, @$, OP_ADD, $1, $3); }
    | arith "-" term { $$ = binop(lx, @$, OP_SUB, $1, $3); }
    ;

term: factor { $$ = $1; }
    | term "*" factor { $$ = binop(lx, @$, OP_MUL, $1, $3); }
    | term "/" factor { $$ = binop(lx, @$, OP_DIV, $1, $3); }
    | term "//" factor { $$ = binop(lx, @$, OP_FLOORDIV, $1, $3); }
    | term "%" factor { $$ = binop(lx, @$, OP_MOD, $1, $3); }
    | term "@" factor { $$ = binop(lx, @$, OP_MATMUL, $1, $3); }
    ;

factor: "-" factor { $$ = mk2(lx, N_UNARY, @$, OP_NEG, $2, NULL); }
    | "+" factor { $$ = mk2(lx, N_UNARY, @$, OP_POS, $2, NULL); }
    | "~" factor { $$ = mk2(lx, N_UNARY, @$, OP_INVERT, $2, NULL); }
    | power { $$ = $1; }
    ;

power: primary { $$ = $1; }
    | primary "**" factor { $$ = binop(lx, @$, OP_POW, $1, $3); }
    ;

primary: atom { $$ = $1; }
    | primary "(" args ")" {
        $$ = mk2(lx, N_CALL, @$, 0, $1, NULL);
        $$->list = list_of(lx, $3.pos);
        $$->list2 = list_of(lx, $3.kw);
      }
    | primary "[" subscripts_tc "]" {
        $$ = mk2(lx, N_SUBSCRIPT, @$, 0, $1, NULL);
        $$->list = list_of(lx, $3.v);
      }
    | primary "." NAME {
        $$ = mk2(lx, N_ATTR, @$, 0, $1, NULL);
        $$->name = $3->name;
      }
    ;

args: %empty { $$ = (ParseArgs){{0}, {0}}; }
    | arglist { $$ = $1; }
    | arglist "," { $$ = $1; }
    ;

arglist: arg { $$ = (ParseArgs){{0}, {0}}; add_arg(lx, &$$, $1); }
    | arglist "," arg { $$ = $1; add_arg(lx, &$$, $3); }
    ;

arg: test { $$ = $1; }
    | test "=" test {
        if ($1->kind != N_NAME || ($1->flags & NF_PAREN))
            error_at(lx, $1->span, "keyword argument name must be an identifier "
                     "(use '==' to compare)");
        $$ = mk2(lx, N_KEYWORD, @$, 0, $3, NULL);
        $$->name = $1->kind == N_NAME ? $1->name : "?";
      }
    | "*" test { $$ = mk2(lx, N_STARRED, @$, 0, $2, NULL); }
    | "**" test { unsupported(lx, @$, "'**' arguments are"); $$ = $2; }
    ;

subscripts_tc: subscripts { $$ = $1; }
    | subscripts "," { $$ = $1; $$.comma = true; }
    ;

subscripts: subscript { $$.v = vec1(lx, $1); $$.comma = false; }
    | subscripts "," subscript { $$ = $1; vec_push(lx->arena, &$$.v, $3); $$.comma = true; }
    ;

subscript: test { $$ = $1; }
    | opt_test ":" opt_test {
        $$ = mk2(lx, N_SLICE, @$, 0, $1, $3);
      }
    | opt_test ":" opt_test ":" opt_test {
        $$ = mk2(lx, N_SLICE, @$, 0, $1, $3);
        $$->c = $5;
      }
    ;

opt_test: %empty { $$ = NULL; }
    | test { $$ = $1; }
    ;

atom: NAME { $$ = $1; }
    | INT { $$ = $1; }
    | FLOAT { $$ = $1; }
    | strings { $$ = $1; }
    | NONE { $$ = mk(lx, N_NONE, @$); }
    | TRUE { $$ = mk(lx, N_TRUE, @$); }
    | FALSE { $$ = mk(lx, N_FALSE, @$); }
    | "(" ")" { $$ = mk(lx, N_TUPLE, @$); }
    | "(" tests_tc ")" {
        if ($2.v.len == 1 && !$2.comma) {
            $$ = $2.v.items[0];
            $$->flags |= NF_PAREN;
        } else {
            $$ = seq_node(lx, $2, @$);
        }
      }
    | "[" "]" { $$ = mk(lx, N_LIST, @$); }
    | "[" tests_tc "]" { $$ = mk(lx, N_LIST, @$); $$->list = list_of(lx, $2.v); }
    | "{" "}" { $$ = mk(lx, N_DICT, @$); }
    | "{" dict_items "}" {
        $$ = mk(lx, N_DICT, @$);
        PtrVec keys = {0}, vals = {0};
        for (int i = 0; i + 1 < $2.len; i += 2) {
            vec_push(lx->arena, &keys, $2.items[i]);
            vec_push(lx->arena, &vals, $2.items[i + 1]);
        }
        $$->list = list_of(lx, keys);
        $$->list2 = list_of(lx, vals);
      }
    | "{" dict_items "," "}" {
        $$ = mk(lx, N_DICT, @$);
        PtrVec keys = {0}, vals = {0};
        for (int i = 0; i + 1 < $2.len; i += 2) {
            vec_push(lx->arena, &keys, $2.items[i]);
            vec_push(lx->arena, &vals, $2.items[i + 1]);
        }
        $$->list = list_of(lx, keys);
        $$->list2 = list_of(lx, vals);
      }
    | "{" tests_tc "}" {
        unsupported(lx, @$, "set literals are");
        $$ = mk(lx, N_LIST, @$);
        $$->list = list_of(lx, $2.v);
      }
    ;

dict_items: test ":" test { $$ = vec1(lx, $1); vec_push(lx->arena, &$$, $3); }
    | dict_items "," test ":" test { $$ = $1; vec_push(lx->arena, &$$, $3); vec_push(lx->arena, &$$, $5); }
    ;

strings: STRING { $$ = $1; }
    | strings STRING { $$ = join_strings(lx, $1, $2); }
    ;

%%

/* ---- messages ------------------------------------------------------------ */

#define TK_TOKEN_NAMES(X)                                                       \
    X(END) X(NAME) X(INT) X(FLOAT) X(STRING) X(RESERVED) X(NEWLINE) X(INDENT)   \
    X(DEDENT) X(DEF) X(RETURN) X(IF) X(ELIF) X(ELSE) X(FOR) X(IN) X(WHILE)      \
    X(PASS) X(BREAK) X(CONTINUE) X(AND) X(OR) X(NOT) X(IS) X(NONE) X(TRUE)      \
    X(FALSE) X(IMPORT) X(FROM) X(AS) X(LAMBDA) X(ASSERT) X(PLUS) X(MINUS)       \
    X(STAR) X(SLASH) X(DSLASH) X(PERCENT) X(DSTAR) X(AT) X(LSHIFT) X(RSHIFT)    \
    X(AMP) X(PIPE) X(CARET) X(TILDE) X(LT) X(GT) X(LE) X(GE) X(EQEQ) X(NE)      \
    X(ASSIGN) X(ARROW) X(DOT) X(COMMA) X(COLON) X(SEMI) X(LPAR) X(RPAR) X(LSQB) \
    X(RSQB) X(LBRACE) X(RBRACE) X(AUGASSIGN)

/* The token's kind as --emit=tokens prints it. */
const char *parse_token_name(int tok)
{
    switch (tok) {
#define X(t) case t: return #t;
        TK_TOKEN_NAMES(X)
#undef X
    }
    return "UNKNOWN";
}

/* How a token is named in a message: keywords and operators quoted,
 * others by what they are. */
static void describe_symbol(StrBuf *sb, yysymbol_kind_t k)
{
    const char *name = yysymbol_name(k);
    switch (k) {
    case YYSYMBOL_YYEOF: case YYSYMBOL_NEWLINE: case YYSYMBOL_INDENT: case YYSYMBOL_DEDENT:
    case YYSYMBOL_NAME: case YYSYMBOL_INT: case YYSYMBOL_FLOAT: case YYSYMBOL_STRING:
    case YYSYMBOL_AUGASSIGN:
        sb_puts(sb, name);
        return;
    default:
        sb_printf(sb, "'%s'", name);
    }
}

static bool has_symbol(const yysymbol_kind_t *list, int n, yysymbol_kind_t k)
{
    for (int i = 0; i < n; i++)
        if (list[i] == k)
            return true;
    return false;
}

/* One message per syntax error, naming what was found and, when the choice
 * is small, what would have been valid there. */
static int yyreport_syntax_error(const yypcontext_t *ctx, LexState *lx)
{
    lx->recovering = true;
    if (lx->fatal)
        return 0;
    yysymbol_kind_t tok = yypcontext_token(ctx);
    Span at = *yypcontext_location(ctx);
    /* The scanner already explained what is wrong with this line. */
    if (lx->error_line == at.line)
        return 0;
    if (tok == YYSYMBOL_RESERVED) {
        error_at(lx, at, "'%.*s' is not supported in tk kernels", (int)lx->tok_len,
                 lx->tok_text);
        return 0;
    }
    if (tok == YYSYMBOL_INDENT) {
        error_at(lx, (Span){at.end_line, at.end_col, at.end_line, at.end_col + 1},
                 "unexpected indent");
        return 0;
    }
    yysymbol_kind_t exp[YYNTOKENS];
    int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
    if (n < 0)
        n = 0;
    if (n == 1 && exp[0] == YYSYMBOL_INDENT) {
        error_at(lx, at, "expected an indented block");
        return 0;
    }
    StrBuf sb;
    sb_init(&sb);
    sb_puts(&sb, "syntax error: unexpected ");
    describe_symbol(&sb, tok);
    if (lx->tok_len > 0 && (tok == YYSYMBOL_NAME || tok == YYSYMBOL_INT ||
                            tok == YYSYMBOL_FLOAT || tok == YYSYMBOL_AUGASSIGN))
        sb_printf(&sb, " '%.*s'", lx->tok_len > 40 ? 40 : (int)lx->tok_len, lx->tok_text);
    if (tok == YYSYMBOL_NEWLINE && has_symbol(exp, n, YYSYMBOL_COLON)) {
        sb_puts(&sb, ", expected ':'");
    } else if (n == 1 && exp[0] == YYSYMBOL_NAME) {
        sb_puts(&sb, ", expected an identifier");
    } else if (has_symbol(exp, n, YYSYMBOL_INT) && !has_symbol(exp, n, YYSYMBOL_DEF)) {
        sb_puts(&sb, ", expected an expression");
    } else if (n > 0 && n <= 4 && !has_symbol(exp, n, YYSYMBOL_NAME)) {
        sb_puts(&sb, ", expected ");
        for (int i = 0; i < n; i++) {
            if (i > 0)
                sb_puts(&sb, i == n - 1 ? " or " : ", ");
            describe_symbol(&sb, exp[i]);
        }
    }
    /* A bracket left open lines ago is the usual cause of a puzzling error. */
    if (lx->nbrackets > 0 && lx->bracket_at[0].line < at.line)
        sb_printf(&sb, " (is the '%c' opened at line %d closed?)", lx->bracket[0],
                  lx->bracket_at[0].line);
    error_at(lx, at, "%s", sb.data ? sb.data : "syntax error");
    sb_free(&sb);
    return 0;
}

/* Bison calls this only when its stack is exhausted. */
static void tk_yyerror(Span *loc, LexState *lx, const char *msg)
{
    (void)msg;
    if (!lx->fatal)
        error_at(lx, *loc, "expression or block nested too deeply to parse");
    lx->fatal = true;
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
static void check_depth(LexState *lx, const Node *root)
{
    DepthItem *stack = NULL;
    int len = 0, cap = 0;
    depth_push(lx->arena, &stack, &len, &cap, root, 1);
    while (len > 0) {
        DepthItem it = stack[--len];
        const Node *n = it.n;
        if (it.depth > PARSE_MAX_DEPTH) {
            error_at(lx, n->span, "expression or block nested too deeply (the limit is %d levels)",
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

Node *parse_module(const Source *src, Arena *a, Diag *d)
{
    LexState *lx = arena_alloc(a, sizeof *lx);
    Node *module = arena_alloc(a, sizeof *module);
    if (!lx || !module || a->oom) {
        diag_plain(d, DIAG_ERROR, "out of memory while parsing");
        return NULL;
    }
    module->kind = N_MODULE;
    module->span = (Span){1, 1, 1, 1};
    if (!lex_open(lx, src, a, d)) {
        diag_plain(d, DIAG_ERROR, "out of memory while reading the source");
        return module;
    }
    lx->module = module;
    int errors = d->errors;
    int rc = tk_yyparse(lx);
    lex_close(lx);
    if (rc != 0 && d->errors == errors)
        diag_plain(d, DIAG_ERROR, "the parser gave up (out of memory)");
    if (d->errors == errors && !a->oom)
        check_depth(lx, module);
    return module;
}
