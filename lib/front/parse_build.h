/* parse_build.h: node builders and checks the grammar's actions call
 * (lib/front/parse_build.c). LexState, ParseSeq and ParseArgs are
 * front/lex_state.h's, through the generated parser header. */
#ifndef TK_PARSE_BUILD_H
#define TK_PARSE_BUILD_H

#include "front/front.h"
#include "support/support.h"
#include "tk.tab.h"

Node *parse_node(LexState *lx, NodeKind k, Span at);
Node *parse_node2(LexState *lx, NodeKind k, Span at, int op, Node *a, Node *b);
/* Sets n->depth from its children; past PARSE_MAX_DEPTH reports the error
 * and stops the parse. Returns n. parse_node2 calls it; actions that attach
 * lists or a third child afterwards call it again. */
Node *parse_deepen(LexState *lx, Node *n);
PtrVec parse_vec1(LexState *lx, void *item);
void parse_vec_append(LexState *lx, PtrVec *to, PtrVec from);
/* Copies a vector into a NodeList in the arena. */
NodeList parse_list(LexState *lx, PtrVec v);
void parse_error(LexState *lx, Span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "<what> not supported in tk kernels" */
void parse_unsupported(LexState *lx, Span at, const char *what);

/* A comma list: a tuple, or the single item when there was no comma. */
Node *parse_seq(LexState *lx, ParseSeq s, Span at);
/* Reports targets that cannot be assigned; `single` forbids tuples. */
void parse_check_target(LexState *lx, const Node *n, bool single, const char *what);
Node *parse_binop(LexState *lx, Span at, int op, Node *a, Node *b);
/* Builds a chained comparison from operand, op, operand, ... */
Node *parse_compare(LexState *lx, Span at, PtrVec parts);
Node *parse_param(LexState *lx, Node *name, Node *annot, Node *dflt);
Node *parse_ptr_type(LexState *lx, Span at, Node *elem);
/* Adds a call argument, checking that positional ones come first. */
void parse_add_arg(LexState *lx, ParseArgs *args, Node *arg);
/* An f-string's replacement field: expr, its conversion ('r', 's', 'a', 0). */
Node *parse_field(LexState *lx, Span at, Node *expr, int conv);
/* Joins adjacent string literals (at least one), f-strings among them. */
Node *parse_join_strings(LexState *lx, PtrVec parts);
Node *parse_import(LexState *lx, Node *dotted, Node *alias);
void parse_stmt_start(PtrVec *v, Span at);
void parse_from_module(PtrVec *v, const Node *module, Span at);
/* Reports repeated names among parameters or keyword arguments. */
void parse_check_unique(LexState *lx, PtrVec nodes, const char *what);
/* Unique names; no parameter without a default after one with a default. */
void parse_check_params(LexState *lx, PtrVec params);
/* Reports a tree deeper than PARSE_MAX_DEPTH (without recursing). */
void parse_check_depth(LexState *lx, const Node *root);

/* A decorator as sema reads it: a bare name bound to triton.jit
 * (lx->jit_names; `J = triton.jit`), alone or called, is `jit`. */
Node *parse_decorator(LexState *lx, Node *d);
/* Splits the module into TK code and host code (lib/front/host.c): blanks
 * each top-level host statement in `text` (the scanner's copy) and records
 * it as an N_HOST node in lx->hosts. */
void host_split(LexState *lx, char *text, size_t n);
/* Turns `f = triton.jit(f)` and `f = triton.heuristics({...})(f)` after a
 * def into decorators of that def. */
void host_attach_wrappers(LexState *lx, Node *module);

#endif
