/* tk.y: placeholder grammar so the library links; the full grammar follows. */
%define api.pure full
%define api.prefix {tk_yy}
%expect 0
%code requires {
#include "base.h"
#include "ast.h"
}
%code {
#include "compiler.h"
static int tk_yylex(TK_YYSTYPE *v) { (void)v; return 0; }
static void tk_yyerror(const char *m) { (void)m; }
}
%%
module: %empty ;
%%
Node *parse_module(const Source *src, Arena *a, Diag *d)
{
    (void)src;
    (void)d;
    Node *m = arena_alloc(a, sizeof *m);
    m->kind = N_MODULE;
    tk_yyparse();
    return m;
}
