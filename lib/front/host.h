/* host.h: what the files that split a Python module into tk code and
 * host code share (front/host_lines.c cuts the text into logical lines,
 * front/host.c sorts the statements, front/host_decorators.c readies the
 * decorators of the defs kept, front/host_branch.c chooses the branch of
 * `try:` and `if HAS_TRITON:` blocks that holds the kernels, and
 * front/host_cond.c and front/host_helpers.c decide conditions). Internal
 * to lib/front. */
#ifndef TK_FRONT_HOST_H
#define TK_FRONT_HOST_H

#include "front/front.h"
#include "front/parse_build.h"

/* One logical line: [start, end) from its first non-blank byte to its
 * newline; indent counts the bytes of leading whitespace. */
typedef struct HostLine {
    size_t start, end;
    int indent;
    int line, end_line;
} HostLine;

/* A condition tk could not decide (`elif USE_TMA:` where a call set the
 * flag): where it is, for the error of a kernel that uses a name bound
 * under it. */
typedef struct HostUndecided {
    const HostLine *line; /* NULL: none */
    size_t at, len;
    const char *text;
} HostUndecided;

typedef struct HostScan {
    LexState *lx;
    char *text;
    size_t n;
    HostLine *lines;
    int nlines, cap;
    NameMap known;    /* names the kept code binds (triton aliases, constants, kernels) */
    NameMap host_fns; /* undecorated defs of the module: module constants may call them */
    PtrVec bound;     /* names the current host statement binds */
    PtrVec hosts;     /* the N_HOST nodes made so far, in line order */
    PtrVec wraps;     /* lines that call jit(...): `f = triton.jit(f)` */
    PtrVec prefixes;  /* names that stand for triton or triton.language (`tt`, `tl`) */
    PtrVec flags;     /* names that say triton is there (`HAS_TRITON`) */
    PtrVec jit_names; /* bare names that stand for triton.jit (`J = triton.jit`) */
    int depth;        /* lifted blocks open (host_branch recurses through host_block) */
    /* front/host_cond.c: module values and one-line helpers it can read */
    NameMap values, helpers; /* name -> index in value_list / helper_list, or -1 */
    PtrVec value_list, helper_list;
    StrBuf env_reads; /* "NAME=value\n" or "NAME unset\n" for each read */
    /* other files of the package whose helpers and values conditions
     * read (host_cond.c): the file scanned, its `from M import NAME`
     * lines, and the root scan (which holds the files read and the
     * environment reads) for a file read that way */
    const char *path;
    PtrVec imports;
    PtrVec loaded;
    struct HostScan *root;
    HostUndecided undecided; /* the last condition host_branch could not decide */
} HostScan;

/* ---- package.c: finding another file of the package ---- */
/* The file a module path written in `file` names (a relative path from
 * its folder, an absolute one from it and its parents), or NULL. */
char *package_find(Arena *a, const char *file, const char *module);
/* A whole file in the arena; NULL when it cannot be read. */
char *package_read(Arena *a, const char *path, size_t *len);

/* ---- host_lines.c: the text ---- */
bool host_is_id(char c);
/* Skips the string literal opening at t[i]; returns the index after it. */
size_t host_skip_string(const char *t, size_t n, size_t i, int *line);
/* The index of the newline that ends the comment at t[i] (or end). */
size_t host_skip_comment(const char *t, size_t end, size_t i);
/* Cuts the text into logical lines, skipping blank and comment-only ones. */
void host_lines(HostScan *h);
/* Does the logical line start with the keyword (a whole word)? */
bool host_starts(const HostScan *h, const HostLine *L, const char *kw);
/* The index of the bracket that closes the one at t[o], or `end`. */
size_t host_match(const char *t, size_t end, size_t o);
Span host_span_at(const HostScan *h, const HostLine *L, size_t at, size_t len);
/* Blanks [from, to) of the scanner's copy, keeping newlines. */
void host_blank(HostScan *h, size_t from, size_t to);
size_t host_skip_ws(const char *t, size_t p, size_t end);
/* Spaces and tabs only (host_skip_ws also passes brackets and commas). */
size_t host_skip_blank(const char *t, size_t p, size_t end);
/* The dotted name at p (`a.b.c`); returns its end. */
size_t host_dotted(const char *t, size_t p, size_t end);
/* Is [s, s+len) one of the names in `v` (strings)? */
bool host_in(const PtrVec *v, const char *s, size_t len);

/* ---- host.c: statements ---- */
/* The names an import binds go to the host statement `bind`, or with
 * `know` to the names kept code may use; `nodes` gets its import nodes.
 * Returns whether every module is one tk reads. */
bool host_import(HostScan *h, const HostLine *L, Node *bind, bool know, PtrVec *nodes);
/* Binds (to h->bound) what lines [first, last] bind at module level. */
void host_bind_block(HostScan *h, Node *host, int first, int last);
/* Sorts the statements of lines [first, last], which start at indentation
 * `base`: kept for the scanner, or blanked into N_HOST nodes. */
void host_block(HostScan *h, int first, int last, int base);
/* An N_HOST for lines [first, last] binding what lines [bind_first, last]
 * bind, less the names of the N_NAME nodes in `except`; the lines are
 * blanked. */
void host_statement(HostScan *h, int first, int last, int bind_first, const PtrVec *except);
/* Did the module bind the name before: kept code, a value a condition
 * reads, or host code? */
bool host_bound_before(const HostScan *h, const char *name);
/* The host statement just made binds its names under the condition u. */
void host_note_undecided(HostScan *h, const HostUndecided *u);

/* ---- host_decorators.c: decorator lines ---- */
/* Is a decorator line one of triton's: `@triton.jit(...)`, `@jit`,
 * `@triton.autotune(...)`, `@triton.heuristics(...)`? */
bool host_jit_decorator(const HostScan *h, const HostLine *L);
/* Does the statement [first, last] open with @triton.constexpr_function or
 * @tl.constexpr? */
bool host_constexpr_fn(const HostScan *h, int first, int last);
/* Notes the bare decorator names that stand for triton.jit through an
 * assignment or import, here or in the package file a name comes from. */
void host_jit_aliases(HostScan *h);
/* Readies a kept def's decorator line for the grammar: keeps what sema
 * reads of triton's, blanks the host Python of the rest. */
void host_decorator(HostScan *h, const HostLine *L);

/* ---- host_branch.c: blocks that decide on triton ---- */
/* Collects the names that stand for triton and triton.language, and
 * those bound to triton.jit in this file (h->jit_names). */
void host_triton_names(HostScan *h);
/* Is `NAME = importlib.util.find_spec("triton") is not None` a flag? */
void host_note_flag(HostScan *h, const HostLine *L);
/* A `try:` or `if` statement, lines [first, last], one branch of which
 * runs when triton is there: lifts that branch to module level (its
 * statements sorted like top-level ones) and makes the others host code.
 * Returns false, changing nothing, when no branch is known to run. */
bool host_branch(HostScan *h, int first, int last);

/* ---- host_helpers.c: helpers conditions call ---- */
/* One statement of a host helper's body: `NAME = EXPR`, `return EXPR`,
 * or `if`/`elif`/`else` (the lines under them are deeper). A `try:` adds
 * nothing, and its `except` clauses are dropped: a body is read only when
 * every statement it runs has a known value, so nothing in it raised. */
typedef enum { HS_ASSIGN, HS_RETURN, HS_IF, HS_ELIF, HS_ELSE } HostStmtKind;

typedef struct HostStmt {
    HostStmtKind k;
    int indent;
    const char *name; /* HS_ASSIGN */
    const char *expr; /* a copy: the def's lines are blanked */
} HostStmt;

enum { HELPER_MAX_STMTS = 16, HELPER_MAX_NAMES = 12, HELPER_MAX_PARAMS = 4 };

/* A host helper tk can read: plain parameters, and a body of the
 * statements above. */
typedef struct HostHelper {
    const char *params[HELPER_MAX_PARAMS];
    int nparams;
    HostStmt stmts[HELPER_MAX_STMTS];
    int nstmts;
} HostHelper;

/* A helper of lines [first, last] (a `def`, maybe decorated), or none. */
struct HostNote host_note_helper(HostScan *h, int first, int last);
/* Whether `name` in h's module is `what` imported from `module`
 * (`from typing import TYPE_CHECKING`). */
bool host_imported_from(const HostScan *h, const char *name, const char *module, const char *what);
/* The scan of the file of the package a name of h's module was imported
 * from (`from .utils import triton_ge`), its helpers and constants read,
 * and the name there; NULL when the name was not imported so. */
HostScan *host_imported(HostScan *h, const char *name, const char **there);

/* ---- host_cond.c: conditions decided without running Python ---- */
/* tk's builtins, as sema answers (front_set_builtins); false until it does. */
bool host_builtin_exists(const char *ns, const char *name);
/* Whether a dotted path under triton (`tl.uint_to_uniform_float`,
 * `triton.language.extra.cuda.libdevice.tanh`) names a builtin tk has: 1,
 * 0 when tk lacks it, -1 when the path is not one tk reads. */
int host_attr_exists(const HostScan *h, const char *path);
bool host_libdevice_known(const char *name);
typedef enum { COND_UNKNOWN, COND_TRUE, COND_FALSE } HostCond;
/* The truth of the expression [from, to) of the text. */
HostCond host_cond_value(HostScan *h, size_t from, size_t to);
/* `NAME = EXPR` (lines first == last) or a `def f(a): return EXPR`
 * helper (two lines) when host_cond can read it, read before the lines
 * are blanked and kept (host_keep_value) once host code bound the name. */
typedef struct HostNote {
    const char *name;
    void *value, *helper;
} HostNote;
HostNote host_read_value(HostScan *h, int first, int last);
void host_keep_value(HostScan *h, HostNote n);
/* Notes the module-level `from M import NAME` lines, whose names a
 * condition may call into (helpers of another file of the package). */
void host_note_imports(HostScan *h);
/* A name host code binds: its noted value no longer holds. */
void host_forget(HostScan *h, const char *name);
/* Do the import-only branches [first, last] of an if chain bind the same
 * names to the same builtins? */
bool host_same_imports(HostScan *h, const int *first, const int *last, int n);

#endif
