/* ir/parse.h: what the IR reader's files share (not a public interface:
 * ir_parse in ir.h is): the reader's state, its limits, and its character-,
 * type- and attribute-level pieces (parse_lex.c, parse_type.c,
 * parse_attr.c) that parse.c puts together. Every piece reports the first
 * problem as a `file:line:col: error:` and returns false; after that all
 * of them give up at once. */
#ifndef TK_IR_PARSE_H
#define TK_IR_PARSE_H

#include "ir/ir.h"

enum {
    MAX_IDS = 1 << 20,   /* value ids; side tables are sized by them */
    MAX_DEPTH = 64,      /* nested regions */
    MAX_LAYOUTS = 4096,  /* #L entries of one kernel */
    MAX_LAYOUT_DEPTH = 8 /* slice/dot_op parents */
};

typedef struct Parser {
    const Source *src;
    Arena *a;
    Diag *d;
    const char *s;
    size_t pos, len, line_start;
    int line;
    bool failed;
    int depth;
    IrFunc *f;      /* the kernel being read (created at its first line) */
    IrValue **vals; /* by id in the text (heap) */
    int vals_cap, max_id;
    const Layout **lays; /* by #L number in the text */
    int nlays;
} Parser;

/* What an op line holds besides operands and results. */
typedef struct OpText {
    IrOp attrs;          /* axis, sub, flags, ival, ival2, fval, str, str2, ints */
    const char *literal; /* const's value, read once the type is known */
    Span literal_at;
} OpText;

/* ---- characters (parse_lex.c) ---------------------------------------------- */

static inline char peek_at(const Parser *p, size_t k)
{
    return p->pos + k < p->len ? p->s[p->pos + k] : 0;
}

static inline char peek(const Parser *p) { return peek_at(p, 0); }

static inline bool at_end(const Parser *p) { return p->pos >= p->len; }

/* A one-character span at the current position. */
static inline Span here(const Parser *p)
{
    int col = (int)(p->pos - p->line_start) + 1;
    return (Span){p->line, col, p->line, col + 1, 0};
}

static inline bool is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
        c == '.';
}

static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

void irp_advance(Parser *p);
/* Reports at `at` (the first problem only) and returns false. */
bool irp_fail_at(Parser *p, Span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define FAIL(p, ...) irp_fail_at((p), here(p), __VA_ARGS__)
void irp_skip_blanks(Parser *p);
bool irp_accept(Parser *p, const char *lit); /* the literal text, if it is next */
bool irp_expect(Parser *p, const char *lit); /* the same, or an error */
const char *irp_word(Parser *p, char *buf, size_t cap);
bool irp_accept_word(Parser *p, const char *w); /* w as a whole word */
bool irp_int(Parser *p, int64_t lo, int64_t hi, int64_t *out);
bool irp_int32(Parser *p, int lo, int hi, int *out);
bool irp_keyed_int(Parser *p, const char *key, int64_t lo, int64_t hi, int64_t *out);
bool irp_string(Parser *p, const char **out);
void irp_skip_lines(Parser *p);
bool irp_end_of_line(Parser *p);
bool irp_names(Parser *p, IrValue *const *vs, int n); /* "// a, _, c" */

/* ---- types and layouts (parse_type.c) -------------------------------------- */

bool irp_dtype(Parser *p, DType *out);
bool irp_type(Parser *p, Type *out);
bool irp_int_list(Parser *p, int *v, int *n, int lo, int hi);
bool irp_layout(Parser *p, Layout *l, int depth);
bool irp_layout_ref(Parser *p, const Layout **out); /* " #L3", or nothing */

/* ---- op attributes (parse_attr.c) ------------------------------------------ */

bool irp_prefix(Parser *p, IrKind k, IrOp *a);
bool irp_suffix(Parser *p, IrKind k, OpText *t);
bool irp_const_value(Parser *p, OpText *t, Type ty, IrOp *op);

#endif
