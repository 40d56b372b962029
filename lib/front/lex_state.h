/* lex_state.h: the state of one run of the scanner and parser, and the
 * value types of the grammar's actions. grammar/tk.y includes it in the
 * parser's header (tk.tab.h), so the scanner, the grammar and the front
 * end's builders share one definition. Internal to the front end. */
#ifndef TK_LEX_STATE_H
#define TK_LEX_STATE_H

#include <setjmp.h>

#include "front/front.h"
#include "support/support.h"

enum {
    LEX_MAX_BRACKETS = 200, /* open brackets at once */
    LEX_MAX_INDENT = 100,   /* open indentation blocks at once (Python's limit) */
    LEX_MAX_FSTRINGS = 16,  /* f-strings nested in each other's replacement fields */
    PARSE_MAX_DEPTH = 1000  /* depth of the finished tree, for stages that recurse */
};

/* Lines [first, last] of a block host.c lifted to module level (the body
 * of `if HAS_TRITON:` or of `try:` around triton kernels): the scanner
 * reads their indentation without the block's own prefix ws[0..len). */
typedef struct LexLift {
    int first, last;
    const char *ws;
    int len;
} LexLift;

/* An f-string being scanned: its quotes, and the replacement field open
 * in it (the scanner reads the field's expression as ordinary tokens). */
typedef struct LexFString {
    char quote; /* ' or " */
    bool triple, raw;
    int field;       /* index in bracket[] of the open field's '{'; -1: none */
    size_t field_at; /* offset just after that '{' ({expr=} repeats the text) */
    int spec_depth;  /* braces open inside the field's format spec */
    bool spec;       /* the field has a format spec */
    Span at;         /* the opening quote, for "unterminated" */
} LexFString;

/* Everything one run of the scanner and parser needs; no global state. */
typedef struct LexState {
    const Source *src;
    Arena *arena;
    Diag *diag;
    void *scanner;        /* flex's yyscan_t */
    jmp_buf oom_jump;     /* where flex's fatal error (out of memory) lands */
    size_t offset;        /* bytes of src->text consumed */
    int line, col;        /* position of the next byte */
    const char *tok_text; /* source text of the last token (empty for layout) */
    size_t tok_len;
    /* layout: the whitespace prefix of each open block; [0] is the file's "" */
    const char *indent_ws[LEX_MAX_INDENT + 1];
    int indent_len[LEX_MAX_INDENT + 1];
    int nindent;
    int pending_dedents;
    Span pending_span;
    bool line_has_tokens; /* a token since the last NEWLINE */
    char bracket[LEX_MAX_BRACKETS];
    Span bracket_at[LEX_MAX_BRACKETS];
    int nbrackets;
    LexFString fstr[LEX_MAX_FSTRINGS];
    int nfstr;
    bool fatal;            /* give up: END from now on, no more syntax errors */
    bool recovering;       /* a syntax error since the last complete statement */
    int error_line;        /* line of the last error the scanner reported */
    int indent_error_line; /* line whose indentation was wrong */
    Node *module;
    PtrVec hosts;          /* N_HOST statements, in line order (front/host.c) */
    bool python;           /* a package file another module imports: split
                               host code off even when it has no kernel */
    PtrVec lifts;          /* LexLift regions, outer before inner (front/host_branch.c) */
    PtrVec jit_names;      /* bare names bound to triton.jit (front/host_decorators.c) */
    const char *env_reads; /* environment reads that decided host conditions
                               (front/host_cond.c); NULL when none */
} LexState;

typedef struct ParseSeq { /* a comma-separated list; comma: a trailing one */
    PtrVec v;
    bool comma;
} ParseSeq;

typedef struct ParseArgs { /* call arguments */
    PtrVec pos, kw;
} ParseArgs;

typedef struct ParseChain { /* if/elif chain: first and last N_IF */
    Node *head, *tail;
} ParseChain;

#endif
