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
#include "support/support.h"
#define YYMALLOC tk_xalloc
#define YYFREE tk_xfree
}

%code requires {
#include "front/lex_state.h"

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
        (Cur).scope = 0;                                                   \
    } while (0)
}

%code provides {
bool lex_open(LexState *lx, const Source *src, Arena *a, Diag *d, bool python);
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

#include "front/front.h"
#include "front/parse_build.h"

#define tk_yylex lex_next
static void tk_yyerror(Span *loc, LexState *lx, const char *msg);
}

%token END 0 "end of file"
%token <node> NAME "identifier" INT "integer" FLOAT "number" STRING "string"
%token <node> RESERVED "reserved word"
%token NEWLINE "end of line" INDENT "indent" DEDENT "dedent"
%token DEF "def" RETURN "return" IF "if" ELIF "elif" ELSE "else" FOR "for" IN "in"
%token WHILE "while" PASS "pass" BREAK "break" CONTINUE "continue" AND "and" OR "or"
%token NOT "not" IS "is" NONE "None" TRUE "True" FALSE "False" IMPORT "import"
%token FROM "from" AS "as" LAMBDA "lambda" ASSERT "assert" RAISE "raise" WITH "with"
%token PLUS "+" MINUS "-" STAR "*" SLASH "/" DSLASH "//" PERCENT "%" DSTAR "**" AT "@"
%token LSHIFT "<<" RSHIFT ">>" AMP "&" PIPE "|" CARET "^" TILDE "~"
%token LT "<" GT ">" LE "<=" GE ">=" EQEQ "==" NE "!="
%token ASSIGN "=" ARROW "->" DOT "." COMMA "," COLON ":" SEMI ";" ELLIPSIS "..."
%token WALRUS ":="
%token LPAR "(" RPAR ")" LSQB "[" RSQB "]" LBRACE "{" RBRACE "}"
%token <op> AUGASSIGN "augmented assignment"
%token FSTR_START "f-string" FSTR_END "end of the f-string" FSTR_OPEN "'{' of an f-string field"
%token <node> FSTR_TEXT "f-string text" FSTR_EQ "'=' of an f-string field"
%token <op> FSTR_CONV "f-string conversion" FSTR_CLOSE "'}' of an f-string field"

%type <vec> stmts stmt simple_stmt small_stmts small_stmt import_names from_names
%type <vec> decorators dict_items params param_list lparams suite opt_loop_else strings
%type <vec> compare_chain fstring_parts fstring_field comp_ifs with_items
%type <node> fstring
%type <op> fstring_conv
%type <node> compound_stmt expr_stmt if_stmt for_stmt while_stmt with_stmt funcdef decorator namedexpr
%type <node> dotted dotted_as from_as param lparam annotation lambdef
%type <node> testlist targetlist test or_test and_test not_test comparison expr xor_expr
%type <node> and_expr shift_expr arith term factor power primary atom
%type <node> subscript opt_test arg
%type <seq> tests tests_tc exprs subscripts subscripts_tc assign_chain
%type <args> arglist args
%type <chain> if_chain
%type <op> comp_op

%%

module: stmts { lx->module->list = parse_list(lx, $1); }
    ;

stmts: %empty { $$ = (PtrVec){0}; }
    | stmts stmt { $$ = $1; parse_vec_append(lx, &$$, $2); }
    ;

stmt: simple_stmt { $$ = $1; lx->recovering = false; }
    | compound_stmt { $$ = parse_vec1(lx, $1); lx->recovering = false; }
    | error NEWLINE { $$ = (PtrVec){0}; yyerrok; }
    | INDENT {
        if (!lx->recovering && lx->indent_error_line != @1.line)
            parse_error(lx, (Span){@1.end_line, @1.end_col, @1.end_line, @1.end_col + 1},
                        "unexpected indent");
      } stmts DEDENT { $$ = $3; }
    ;

simple_stmt: small_stmts NEWLINE { $$ = $1; }
    | small_stmts ";" NEWLINE { $$ = $1; }
    ;

small_stmts: small_stmt { $$ = $1; }
    | small_stmts ";" small_stmt { $$ = $1; parse_vec_append(lx, &$$, $3); }
    ;

small_stmt: expr_stmt { $$ = parse_vec1(lx, $1); }
    | PASS { $$ = parse_vec1(lx, parse_node(lx, N_PASS, @1)); }
    | BREAK { $$ = parse_vec1(lx, parse_node(lx, N_BREAK, @1)); }
    | CONTINUE { $$ = parse_vec1(lx, parse_node(lx, N_CONTINUE, @1)); }
    | RETURN { $$ = parse_vec1(lx, parse_node(lx, N_RETURN, @1)); }
    | RETURN testlist { $$ = parse_vec1(lx, parse_node2(lx, N_RETURN, @$, 0, $2, NULL)); }
    | ASSERT test { $$ = parse_vec1(lx, parse_node2(lx, N_ASSERT, @$, 0, $2, NULL)); }
    | ASSERT test "," test { $$ = parse_vec1(lx, parse_node2(lx, N_ASSERT, @$, 0, $2, $4)); }
    | RAISE { $$ = parse_vec1(lx, parse_node(lx, N_RAISE, @1)); }
    | RAISE test { $$ = parse_vec1(lx, parse_node2(lx, N_RAISE, @$, 0, $2, NULL)); }
    | RAISE test FROM test { $$ = parse_vec1(lx, parse_node2(lx, N_RAISE, @$, 0, $2, $4)); }
    | IMPORT import_names { $$ = $2; parse_stmt_start(&$$, @1); }
    | FROM dotted IMPORT from_names { $$ = $4; parse_from_module(&$$, $2, @1); }
    | FROM dotted IMPORT "(" from_names ")" { $$ = $5; parse_from_module(&$$, $2, @1); }
    | FROM dotted IMPORT "(" from_names "," ")" { $$ = $5; parse_from_module(&$$, $2, @1); }
    | FROM dotted IMPORT "*" {
        Node *n = parse_node(lx, N_FROM_IMPORT, @$);
        n->name = $2->name;
        n->span = @$;
        n->str = "*";
        $$ = parse_vec1(lx, n);
      }
    ;

expr_stmt: testlist { $$ = parse_node2(lx, N_EXPR_STMT, @$, 0, $1, NULL); }
    | assign_chain {
        $$ = parse_node(lx, N_ASSIGN, @$);
        int n = $1.v.len - 1;
        $$->a = $1.v.items[n];
        $1.v.len = n;
        for (int i = 0; i < n; i++)
            parse_check_target(lx, $1.v.items[i], false, "assignment");
        $$->list = parse_list(lx, $1.v);
      }
    | testlist AUGASSIGN testlist {
        parse_check_target(lx, $1, true, "augmented assignment");
        $$ = parse_node2(lx, N_AUGASSIGN, @$, $2, $1, $3);
      }
    | testlist ":" annotation {
        parse_check_target(lx, $1, true, "an annotation");
        $$ = parse_node2(lx, N_ANNASSIGN, @$, 0, $1, $3);
      }
    | testlist ":" annotation "=" testlist {
        parse_check_target(lx, $1, true, "an annotation");
        $$ = parse_node2(lx, N_ANNASSIGN, @$, 0, $1, $3);
        $$->c = $5;
      }
    ;

assign_chain: testlist "=" testlist {
        $$.v = parse_vec1(lx, $1);
        vec_push(lx->arena, &$$.v, $3);
        $$.comma = false;
      }
    | assign_chain "=" testlist { $$ = $1; vec_push(lx->arena, &$$.v, $3); }
    ;

import_names: dotted_as { $$ = parse_vec1(lx, $1); }
    | import_names "," dotted_as { $$ = $1; vec_push(lx->arena, &$$, $3); }
    ;

dotted_as: dotted { $$ = parse_import(lx, $1, NULL); }
    | dotted AS NAME { $$ = parse_import(lx, $1, $3); $$->span = @$; }
    ;

dotted: NAME { $$ = $1; }
    | dotted "." NAME {
        $$ = parse_node(lx, N_NAME, @$);
        $$->name = arena_printf(lx->arena, "%s.%s", $1->name, $3->name);
      }
    ;

from_names: from_as { $$ = parse_vec1(lx, $1); }
    | from_names "," from_as { $$ = $1; vec_push(lx->arena, &$$, $3); }
    ;

from_as: NAME { $$ = parse_node(lx, N_FROM_IMPORT, @$); $$->str = $1->name; }
    | NAME AS NAME {
        $$ = parse_node(lx, N_FROM_IMPORT, @$);
        $$->str = $1->name;
        $$->alias = $3->name;
      }
    ;

compound_stmt: if_stmt | for_stmt | while_stmt | with_stmt | funcdef
    | decorators funcdef { $$ = $2; $$->list2 = parse_list(lx, $1); }
    ;

if_stmt: if_chain { $$ = $1.head; }
    | if_chain ELSE ":" suite { $$ = $1.head; $1.tail->list2 = parse_list(lx, $4); }
    ;

if_chain: IF namedexpr ":" suite {
        Node *n = parse_node2(lx, N_IF, @$, 0, $2, NULL);
        n->list = parse_list(lx, $4);
        $$.head = $$.tail = n;
      }
    | if_chain ELIF namedexpr ":" suite {
        Span at = {@2.line, @2.col, @5.end_line, @5.end_col};
        Node *n = parse_node2(lx, N_IF, at, 0, $3, NULL);
        n->list = parse_list(lx, $5);
        $1.tail->list2 = parse_list(lx, parse_vec1(lx, n));
        $$.head = $1.head;
        $$.tail = n;
      }
    ;

for_stmt: FOR targetlist IN testlist ":" suite opt_loop_else {
        parse_check_target(lx, $2, false, "a for loop");
        $$ = parse_node2(lx, N_FOR, @$, 0, $2, $4);
        $$->list = parse_list(lx, $6);
        $$->list2 = parse_list(lx, $7);
      }
    ;

while_stmt: WHILE namedexpr ":" suite opt_loop_else {
        $$ = parse_node2(lx, N_WHILE, @$, 0, $2, NULL);
        $$->list = parse_list(lx, $4);
      }
    ;

/* Read so that a module whose other kernels use none compiles; a kernel
 * that reaches one is an error in sema, as Triton has no context manager a
 * kernel can enter. */
with_stmt: WITH with_items ":" suite {
        $$ = parse_node(lx, N_WITH, @$);
        $$->list = parse_list(lx, $4);
        $$->list2 = parse_list(lx, $2);
      }
    ;

with_items: test { $$ = parse_vec1(lx, $1); }
    | test AS expr { $$ = parse_vec1(lx, $1); }
    | with_items "," test { $$ = $1; vec_push(lx->arena, &$$, $3); }
    | with_items "," test AS expr { $$ = $1; vec_push(lx->arena, &$$, $3); }
    ;

opt_loop_else: %empty { $$ = (PtrVec){0}; }
    | ELSE ":" suite { parse_unsupported(lx, @1, "'else' after a loop is"); $$ = $3; }
    ;

suite: simple_stmt { $$ = $1; }
    | NEWLINE INDENT stmts DEDENT { $$ = $3; }
    ;

funcdef: DEF NAME "(" params ")" opt_return ":" suite {
        $$ = parse_node(lx, N_FUNC, @$);
        $$->name = $2->name;
        parse_check_params(lx, $4);
        $$->list = parse_list(lx, $4);
        $$->list3 = parse_list(lx, $8);
      }
    ;

opt_return: %empty | "->" annotation { }
    ;

decorators: decorator { $$ = parse_vec1(lx, $1); }
    | decorators decorator { $$ = $1; vec_push(lx->arena, &$$, $2); }
    ;

decorator: "@" test NEWLINE { $$ = parse_decorator(lx, $2); }
    ;

params: %empty { $$ = (PtrVec){0}; }
    | param_list { $$ = $1; }
    | param_list "," { $$ = $1; }
    ;

param_list: param { $$ = parse_vec1(lx, $1); }
    | param_list "," param { $$ = $1; vec_push(lx->arena, &$$, $3); }
    ;

param: NAME { $$ = parse_param(lx, $1, NULL, NULL); }
    | NAME ":" annotation { $$ = parse_param(lx, $1, $3, NULL); }
    | NAME "=" test { $$ = parse_param(lx, $1, NULL, $3); }
    | NAME ":" annotation "=" test { $$ = parse_param(lx, $1, $3, $5); }
    | "*" NAME {
        parse_unsupported(lx, @$, "variadic parameters are");
        $$ = parse_param(lx, $2, NULL, NULL);
      }
    | "**" NAME {
        parse_unsupported(lx, @$, "variadic parameters are");
        $$ = parse_param(lx, $2, NULL, NULL);
      }
    ;

annotation: test { $$ = $1; }
    | "*" NAME { $$ = parse_ptr_type(lx, @$, $2); }
    ;

testlist: tests_tc { $$ = parse_seq(lx, $1, @$); }
    ;

/* Comma lists; the _tc forms allow one trailing comma. `comma` records
 * whether there was any comma, which makes `x,` a tuple. */
tests_tc: tests { $$ = $1; }
    | tests "," { $$ = $1; $$.comma = true; }
    ;

tests: test { $$.v = parse_vec1(lx, $1); $$.comma = false; }
    | tests "," test { $$ = $1; vec_push(lx->arena, &$$.v, $3); $$.comma = true; }
    ;

targetlist: exprs { $$ = parse_seq(lx, $1, @$); }
    | exprs "," { $1.comma = true; $$ = parse_seq(lx, $1, @$); }
    ;

exprs: expr { $$.v = parse_vec1(lx, $1); $$.comma = false; }
    | exprs "," expr { $$ = $1; vec_push(lx->arena, &$$.v, $3); $$.comma = true; }
    ;

/* `if m := f(x):` (Python's assignment expression, in a condition) */
namedexpr: test { $$ = $1; }
    | NAME WALRUS test { $$ = parse_node2(lx, N_NAMEDEXPR, @$, 0, $1, $3); }
    ;

test: or_test { $$ = $1; }
    | or_test IF or_test ELSE test {
        $$ = parse_node2(lx, N_IFEXP, @$, 0, $1, $3);
        $$->c = $5;
        parse_deepen(lx, $$);
      }
    | lambdef { $$ = $1; }
    ;

lambdef: LAMBDA ":" test {
        $$ = parse_node2(lx, N_LAMBDA, @$, 0, $3, NULL);
      }
    | LAMBDA lparams ":" test {
        $$ = parse_node2(lx, N_LAMBDA, @$, 0, $4, NULL);
        parse_check_params(lx, $2);
        $$->list = parse_list(lx, $2);
      }
    ;

lparams: lparam { $$ = parse_vec1(lx, $1); }
    | lparams "," lparam { $$ = $1; vec_push(lx->arena, &$$, $3); }
    ;

/* *args and **kwargs parse (a prune_configs_by lambda's, which host
 * Python runs); a lambda tk evaluates takes one plain parameter (tune.c) */
lparam: NAME { $$ = parse_param(lx, $1, NULL, NULL); }
    | NAME "=" test { $$ = parse_param(lx, $1, NULL, $3); }
    | "*" NAME { $$ = parse_param(lx, $2, NULL, NULL); $$->op = 1; }
    | "**" NAME { $$ = parse_param(lx, $2, NULL, NULL); $$->op = 2; }
    ;

or_test: and_test { $$ = $1; }
    | or_test OR and_test { $$ = parse_node2(lx, N_BOOLOP, @$, OP_OR, $1, $3); }
    ;

and_test: not_test { $$ = $1; }
    | and_test AND not_test { $$ = parse_node2(lx, N_BOOLOP, @$, OP_AND, $1, $3); }
    ;

not_test: NOT not_test { $$ = parse_node2(lx, N_UNARY, @$, OP_NOT, $2, NULL); }
    | comparison { $$ = $1; }
    ;

comparison: expr { $$ = $1; }
    | compare_chain { $$ = parse_compare(lx, @$, $1); }
    ;

/* operand, op, operand, op, ... collected first so that a long chain is
 * built once */
compare_chain: expr comp_op expr {
        $$ = parse_vec1(lx, $1);
        vec_push(lx->arena, &$$, (void *)(intptr_t)$2);
        vec_push(lx->arena, &$$, $3);
      }
    | compare_chain comp_op expr {
        $$ = $1;
        vec_push(lx->arena, &$$, (void *)(intptr_t)$2);
        vec_push(lx->arena, &$$, $3);
      }
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
    | expr "|" xor_expr { $$ = parse_binop(lx, @$, OP_BITOR, $1, $3); }
    ;

xor_expr: and_expr { $$ = $1; }
    | xor_expr "^" and_expr { $$ = parse_binop(lx, @$, OP_BITXOR, $1, $3); }
    ;

and_expr: shift_expr { $$ = $1; }
    | and_expr "&" shift_expr { $$ = parse_binop(lx, @$, OP_BITAND, $1, $3); }
    ;

shift_expr: arith { $$ = $1; }
    | shift_expr "<<" arith { $$ = parse_binop(lx, @$, OP_LSHIFT, $1, $3); }
    | shift_expr ">>" arith { $$ = parse_binop(lx, @$, OP_RSHIFT, $1, $3); }
    ;

arith: term { $$ = $1; }
    | arith "+" term { $$ = parse_binop(lx, @$, OP_ADD, $1, $3); }
    | arith "-" term { $$ = parse_binop(lx, @$, OP_SUB, $1, $3); }
    ;

term: factor { $$ = $1; }
    | term "*" factor { $$ = parse_binop(lx, @$, OP_MUL, $1, $3); }
    | term "/" factor { $$ = parse_binop(lx, @$, OP_DIV, $1, $3); }
    | term "//" factor { $$ = parse_binop(lx, @$, OP_FLOORDIV, $1, $3); }
    | term "%" factor { $$ = parse_binop(lx, @$, OP_MOD, $1, $3); }
    | term "@" factor { $$ = parse_binop(lx, @$, OP_MATMUL, $1, $3); }
    ;

factor: "-" factor { $$ = parse_node2(lx, N_UNARY, @$, OP_NEG, $2, NULL); }
    | "+" factor { $$ = parse_node2(lx, N_UNARY, @$, OP_POS, $2, NULL); }
    | "~" factor { $$ = parse_node2(lx, N_UNARY, @$, OP_INVERT, $2, NULL); }
    | power { $$ = $1; }
    ;

power: primary { $$ = $1; }
    | primary "**" factor { $$ = parse_binop(lx, @$, OP_POW, $1, $3); }
    ;

primary: atom { $$ = $1; }
    | primary "(" args ")" {
        $$ = parse_node2(lx, N_CALL, @$, 0, $1, NULL);
        $$->list = parse_list(lx, $3.pos);
        $$->list2 = parse_list(lx, $3.kw);
        parse_deepen(lx, $$);
      }
    | primary "(" test FOR targetlist IN or_test comp_ifs ")" {
        /* a generator expression, the call's only argument: read as the
         * list it yields (tk evaluates it at compile time) */
        parse_check_target(lx, $5, false, "a comprehension");
        Node *gen = parse_node2(lx, N_LISTCOMP, @$, 0, $3, $5);
        gen->c = $7;
        gen->list = parse_list(lx, $8);
        parse_deepen(lx, gen);
        $$ = parse_node2(lx, N_CALL, @$, 0, $1, NULL);
        $$->list = parse_list(lx, parse_vec1(lx, gen));
        parse_deepen(lx, $$);
      }
    | primary "[" subscripts_tc "]" {
        $$ = parse_node2(lx, N_SUBSCRIPT, @$, 0, $1, NULL);
        $$->list = parse_list(lx, $3.v);
        parse_deepen(lx, $$);
      }
    | primary "." NAME {
        $$ = parse_node2(lx, N_ATTR, @$, 0, $1, NULL);
        $$->name = $3->name;
      }
    ;

args: %empty { $$ = (ParseArgs){{0}, {0}}; }
    | arglist { $$ = $1; parse_check_unique(lx, $1.kw, "keyword argument"); }
    | arglist "," { $$ = $1; parse_check_unique(lx, $1.kw, "keyword argument"); }
    ;

arglist: arg { $$ = (ParseArgs){{0}, {0}}; parse_add_arg(lx, &$$, $1); }
    | arglist "," arg { $$ = $1; parse_add_arg(lx, &$$, $3); }
    ;

arg: test { $$ = $1; }
    | test "=" test {
        if ($1->kind != N_NAME || ($1->flags & NF_PAREN))
            parse_error(lx, $1->span, "keyword argument name must be an identifier "
                     "(use '==' to compare)");
        $$ = parse_node2(lx, N_KEYWORD, @$, 0, $3, NULL);
        $$->name = $1->kind == N_NAME ? $1->name : "?";
      }
    | "*" test { $$ = parse_node2(lx, N_STARRED, @$, 0, $2, NULL); }
    | "**" test { parse_unsupported(lx, @$, "'**' arguments are"); $$ = $2; }
    ;

subscripts_tc: subscripts { $$ = $1; }
    | subscripts "," { $$ = $1; $$.comma = true; }
    ;

subscripts: subscript { $$.v = parse_vec1(lx, $1); $$.comma = false; }
    | subscripts "," subscript { $$ = $1; vec_push(lx->arena, &$$.v, $3); $$.comma = true; }
    ;

subscript: test { $$ = $1; }
    | opt_test ":" opt_test {
        $$ = parse_node2(lx, N_SLICE, @$, 0, $1, $3);
      }
    | opt_test ":" opt_test ":" opt_test {
        $$ = parse_node2(lx, N_SLICE, @$, 0, $1, $3);
        $$->c = $5;
        parse_deepen(lx, $$);
      }
    ;

opt_test: %empty { $$ = NULL; }
    | test { $$ = $1; }
    ;

atom: NAME { $$ = $1; }
    | INT { $$ = $1; }
    | FLOAT { $$ = $1; }
    | strings { $$ = parse_join_strings(lx, $1); }
    | NONE { $$ = parse_node(lx, N_NONE, @$); }
    | TRUE { $$ = parse_node(lx, N_TRUE, @$); }
    | FALSE { $$ = parse_node(lx, N_FALSE, @$); }
    | "(" ")" { $$ = parse_node(lx, N_TUPLE, @$); }
    | "(" tests_tc ")" {
        if ($2.v.len == 1 && !$2.comma) {
            $$ = $2.v.items[0];
            $$->flags |= NF_PAREN;
        } else {
            $$ = parse_seq(lx, $2, @$);
        }
      }
    | "(" test FOR targetlist IN or_test comp_ifs ")" { /* a generator expression */
        parse_check_target(lx, $4, false, "a comprehension");
        $$ = parse_node2(lx, N_LISTCOMP, @$, 0, $2, $4);
        $$->c = $6;
        $$->list = parse_list(lx, $7);
        parse_deepen(lx, $$);
      }
    | "[" "]" { $$ = parse_node(lx, N_LIST, @$); }
    | "[" test FOR targetlist IN or_test comp_ifs "]" {
        parse_check_target(lx, $4, false, "a comprehension");
        $$ = parse_node2(lx, N_LISTCOMP, @$, 0, $2, $4);
        $$->c = $6;
        $$->list = parse_list(lx, $7);
        parse_deepen(lx, $$);
      }
    | ELLIPSIS { $$ = parse_node(lx, N_ELLIPSIS, @$); }
    | "[" tests_tc "]" {
        $$ = parse_node(lx, N_LIST, @$);
        $$->list = parse_list(lx, $2.v);
        parse_deepen(lx, $$);
      }
    | "{" "}" { $$ = parse_node(lx, N_DICT, @$); }
    | "{" dict_items "}" {
        $$ = parse_node(lx, N_DICT, @$);
        PtrVec keys = {0}, vals = {0};
        for (int i = 0; i + 1 < $2.len; i += 2) {
            vec_push(lx->arena, &keys, $2.items[i]);
            vec_push(lx->arena, &vals, $2.items[i + 1]);
        }
        $$->list = parse_list(lx, keys);
        $$->list2 = parse_list(lx, vals);
        parse_deepen(lx, $$);
      }
    | "{" dict_items "," "}" {
        $$ = parse_node(lx, N_DICT, @$);
        PtrVec keys = {0}, vals = {0};
        for (int i = 0; i + 1 < $2.len; i += 2) {
            vec_push(lx->arena, &keys, $2.items[i]);
            vec_push(lx->arena, &vals, $2.items[i + 1]);
        }
        $$->list = parse_list(lx, keys);
        $$->list2 = parse_list(lx, vals);
        parse_deepen(lx, $$);
      }
    | "{" tests_tc "}" {
        parse_unsupported(lx, @$, "set literals are");
        $$ = parse_node(lx, N_LIST, @$);
        $$->list = parse_list(lx, $2.v);
      }
    ;

dict_items: test ":" test { $$ = parse_vec1(lx, $1); vec_push(lx->arena, &$$, $3); }
    | "**" expr { $$ = parse_vec1(lx, parse_node2(lx, N_STARRED, @$, 0, $2, NULL)); vec_push(lx->arena, &$$, $2); }
    | dict_items "," test ":" test {
        $$ = $1;
        vec_push(lx->arena, &$$, $3);
        vec_push(lx->arena, &$$, $5);
      }
    | dict_items "," "**" expr {
        $$ = $1;
        vec_push(lx->arena, &$$, parse_node2(lx, N_STARRED, @3, 0, $4, NULL));
        vec_push(lx->arena, &$$, $4);
      }
    ;

comp_ifs: %empty { $$ = (PtrVec){0}; }
    | comp_ifs IF or_test { $$ = $1; vec_push(lx->arena, &$$, $3); }
    ;

strings: STRING { $$ = parse_vec1(lx, $1); }
    | fstring { $$ = parse_vec1(lx, $1); }
    | strings STRING { $$ = $1; vec_push(lx->arena, &$$, $2); }
    | strings fstring { $$ = $1; vec_push(lx->arena, &$$, $2); }
    ;

fstring: FSTR_START fstring_parts FSTR_END {
        $$ = parse_node(lx, N_FSTR, @$);
        $$->list = parse_list(lx, $2);
        parse_deepen(lx, $$);
      }
    ;

fstring_parts: %empty { $$ = (PtrVec){0}; }
    | fstring_parts FSTR_TEXT { $$ = $1; vec_push(lx->arena, &$$, $2); }
    | fstring_parts fstring_field { $$ = $1; parse_vec_append(lx, &$$, $2); }
    ;

/* {expr=} writes the expression's text before its value, and then takes
 * repr() unless a conversion or a format spec says otherwise, as Python. */
fstring_field: FSTR_OPEN tests_tc fstring_conv FSTR_CLOSE {
        $$ = parse_vec1(lx, parse_field(lx, @$, parse_seq(lx, $2, @2), $3));
      }
    | FSTR_OPEN tests_tc FSTR_EQ fstring_conv FSTR_CLOSE {
        int conv = $4 ? $4 : $5 ? 0 : 'r';
        $$ = parse_vec1(lx, $3);
        vec_push(lx->arena, &$$, parse_field(lx, @$, parse_seq(lx, $2, @2), conv));
      }
    ;

fstring_conv: %empty { $$ = 0; }
    | FSTR_CONV { $$ = $1; }
    ;

%%

/* ---- messages ------------------------------------------------------------ */

#define TK_TOKEN_NAMES(X)                                                       \
    X(END) X(NAME) X(INT) X(FLOAT) X(STRING) X(RESERVED) X(NEWLINE) X(INDENT)   \
    X(DEDENT) X(DEF) X(RETURN) X(IF) X(ELIF) X(ELSE) X(FOR) X(IN) X(WHILE)      \
    X(PASS) X(BREAK) X(CONTINUE) X(AND) X(OR) X(NOT) X(IS) X(NONE) X(TRUE)      \
    X(FALSE) X(IMPORT) X(FROM) X(AS) X(LAMBDA) X(ASSERT) X(RAISE) X(WITH) X(PLUS) X(MINUS)       \
    X(STAR) X(SLASH) X(DSLASH) X(PERCENT) X(DSTAR) X(AT) X(LSHIFT) X(RSHIFT)    \
    X(AMP) X(PIPE) X(CARET) X(TILDE) X(LT) X(GT) X(LE) X(GE) X(EQEQ) X(NE)      \
    X(ASSIGN) X(ARROW) X(DOT) X(COMMA) X(COLON) X(SEMI) X(LPAR) X(RPAR) X(LSQB) \
    X(RSQB) X(LBRACE) X(RBRACE) X(AUGASSIGN) X(FSTR_START) X(FSTR_END)          \
    X(FSTR_OPEN) X(FSTR_TEXT) X(FSTR_EQ) X(FSTR_CONV) X(FSTR_CLOSE) X(ELLIPSIS)

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
    case YYSYMBOL_AUGASSIGN: case YYSYMBOL_FSTR_START: case YYSYMBOL_FSTR_END:
    case YYSYMBOL_FSTR_TEXT: case YYSYMBOL_FSTR_CONV: case YYSYMBOL_FSTR_OPEN:
    case YYSYMBOL_FSTR_CLOSE: case YYSYMBOL_FSTR_EQ:
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
        parse_error(lx, at, "'%.*s' is not supported in tk kernels", (int)lx->tok_len,
                    lx->tok_text);
        return 0;
    }
    if (tok == YYSYMBOL_INDENT) {
        parse_error(lx, (Span){at.end_line, at.end_col, at.end_line, at.end_col + 1},
                    "unexpected indent");
        return 0;
    }
    yysymbol_kind_t exp[YYNTOKENS];
    int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
    if (n < 0)
        n = 0;
    if (n == 1 && exp[0] == YYSYMBOL_INDENT) {
        parse_error(lx, at, "expected an indented block");
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
    } else if (tok == YYSYMBOL_NEWLINE && has_symbol(exp, n, YYSYMBOL_ELSE)) {
        sb_puts(&sb, ", expected 'else'");
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
    parse_error(lx, at, "%s", sb.data ? sb.data : "syntax error");
    sb_free(&sb);
    return 0;
}

/* Bison calls this only when its stack is exhausted. */
static void tk_yyerror(Span *loc, LexState *lx, const char *msg)
{
    (void)msg;
    if (!lx->fatal)
        parse_error(lx, *loc, "expression or block nested too deeply to parse");
    lx->fatal = true;
}
