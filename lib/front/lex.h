/* lex.h: the scanner's helpers in lib/front/lex_values.c, which the rules
 * of grammar/tk.l call. Internal to the front end. */
#ifndef TK_LEX_H
#define TK_LEX_H

#include "front/front.h"
#include "tk.tab.h"

void lex_error(LexState *lx, Span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An unexpected byte, printable or not. */
void lex_stray(LexState *lx, const char *text, Span at);
/* Opens a bracket (tok, or END past the nesting limit). */
int lex_open_bracket(LexState *lx, char c, Span at, int tok);
/* The closing token matching the open bracket, reporting a mismatch; 0
 * (the byte dropped) with nothing open. */
int lex_close_bracket(LexState *lx, char c, Span at);
Node *lex_name(LexState *lx, const char *text, size_t len, Span at);
Node *lex_int(LexState *lx, const char *text, size_t len, Span at);
Node *lex_float(LexState *lx, const char *text, size_t len, Span at);
/* A whole literal with its prefix and quotes. */
Node *lex_string(LexState *lx, const char *text, size_t len, Span at);
/* Decodes one escape after a backslash at s[0]; returns the bytes used. */
size_t lex_escape(LexState *lx, const char *s, size_t left, char *out, size_t *k, Span at);

/* f-strings: a new one after its prefix and quotes (false past the
 * nesting limit), a piece of text, whether the scanner is at the bracket
 * level of the innermost open replacement field, a field's '{', its
 * {expr=} text, its '}' (returns whether it had a format spec), a
 * one-line f-string cut by a newline, and whether a newline cuts one. */
bool lex_fstring_start(LexState *lx, const char *text, size_t len, Span at);
Node *lex_ftext(LexState *lx, const char *text, size_t len, Span at);
bool lex_at_field(const LexState *lx);
int lex_field_open(LexState *lx, Span at);
Node *lex_field_eq(LexState *lx, Span at);
int lex_field_close(LexState *lx);
void lex_fstring_unterminated(LexState *lx);
bool lex_fstring_cut(const LexState *lx);

#endif
