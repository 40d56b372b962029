/* ir/parse.c: reads the text ir_print writes (tkc --emit=ir) back into
 * IrFuncs, so that passes and code generation can start from IR.
 *
 * Accepts exactly print.c's grammar: per kernel, its `#T` tensor maps and
 * `#L` layouts, then `kernel @name(params) attrs {`, one op a line, regions
 * in braces with their `^(args):` line, and the `// names` comments, which
 * give values their source names back. Besides that it skips blank lines
 * and lines whose first non-blank character is `#` followed by a blank (so
 * a lit test can carry its RUN lines). Several kernels may follow each other.
 *
 * Guarantees: the IR is built in the given arena as sema would build it
 * (values keep the ids of the text when those are dense, and are renumbered
 * otherwise), and every kernel passes ir_verify; anything else gets one
 * `file:line:col: error:` diagnostic and a NULL result. It assumes nothing
 * about its input: every length, number and nesting depth is bounded. */
#include "ir/ir.h"
#include "ir/verify.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    IrFunc *f;         /* the kernel being read (created at its first line) */
    IrValue **vals;    /* by id in the text (heap) */
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

/* ---- characters and errors ------------------------------------------------- */

static char peek_at(const Parser *p, size_t k)
{
    return p->pos + k < p->len ? p->s[p->pos + k] : 0;
}

static char peek(const Parser *p) { return peek_at(p, 0); }

static bool at_end(const Parser *p) { return p->pos >= p->len; }

static Span here(const Parser *p)
{
    int col = (int)(p->pos - p->line_start) + 1;
    return (Span){p->line, col, p->line, col + 1};
}

static void advance(Parser *p)
{
    if (at_end(p))
        return;
    if (p->s[p->pos] == '\n') {
        p->line++;
        p->line_start = p->pos + 1;
    }
    p->pos++;
}

/* Reports the first problem only: what follows it is seldom worth reading. */
static bool fail_at(Parser *p, Span at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail_at(Parser *p, Span at, const char *fmt, ...)
{
    if (!p->failed) {
        va_list ap;
        va_start(ap, fmt);
        diag_vreport(p->d, DIAG_ERROR, at, fmt, ap);
        va_end(ap);
    }
    p->failed = true;
    return false;
}

#define FAIL(p, ...) fail_at((p), here(p), __VA_ARGS__)

static void skip_blanks(Parser *p)
{
    while (peek(p) == ' ' || peek(p) == '\t' || peek(p) == '\r')
        advance(p);
}

static bool accept(Parser *p, const char *lit)
{
    skip_blanks(p);
    size_t n = strlen(lit);
    if (p->pos + n > p->len || memcmp(p->s + p->pos, lit, n) != 0)
        return false;
    for (size_t i = 0; i < n; i++)
        advance(p);
    return true;
}

static bool expect(Parser *p, const char *lit)
{
    if (accept(p, lit))
        return true;
    return FAIL(p, "expected '%s'", lit);
}

static bool is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* A run of letters, digits, '_' and '.' (at most cap-1 of them); "" if none. */
static const char *word(Parser *p, char *buf, size_t cap)
{
    skip_blanks(p);
    size_t n = 0;
    while (is_word_char(peek(p)) && n + 1 < cap) {
        buf[n++] = peek(p);
        advance(p);
    }
    buf[n] = 0;
    return buf;
}

static bool accept_word(Parser *p, const char *w)
{
    skip_blanks(p);
    size_t n = strlen(w);
    if (p->pos + n > p->len || memcmp(p->s + p->pos, w, n) != 0 || is_word_char(peek_at(p, n)))
        return false;
    for (size_t i = 0; i < n; i++)
        advance(p);
    return true;
}

/* An integer in [lo, hi]. */
static bool int_in(Parser *p, int64_t lo, int64_t hi, int64_t *out)
{
    skip_blanks(p);
    Span at = here(p);
    char buf[32];
    size_t n = 0;
    if (peek(p) == '-' || peek(p) == '+')
        buf[n++] = peek(p), advance(p);
    while (is_digit(peek(p)) && n + 1 < sizeof buf)
        buf[n++] = peek(p), advance(p);
    buf[n] = 0;
    if (n == 0 || !is_digit(buf[n - 1]))
        return fail_at(p, at, "expected an integer");
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno || v < lo || v > hi)
        return fail_at(p, at, "%s is outside %lld..%lld", buf, (long long)lo, (long long)hi);
    *out = v;
    return true;
}

static bool int32_in(Parser *p, int lo, int hi, int *out)
{
    int64_t v;
    if (!int_in(p, lo, hi, &v))
        return false;
    *out = (int)v;
    return true;
}

/* "..." with print.c's escapes, copied into the arena. */
static bool string_lit(Parser *p, const char **out)
{
    if (!expect(p, "\""))
        return false;
    StrBuf sb;
    sb_init(&sb);
    while (!at_end(p) && peek(p) != '"' && peek(p) != '\n') {
        char c = peek(p);
        advance(p);
        if (c == '\\' && peek(p) == 'x' && isxdigit((unsigned char)peek_at(p, 1)) &&
            isxdigit((unsigned char)peek_at(p, 2))) {
            char hex[3] = {peek_at(p, 1), peek_at(p, 2), 0};
            c = (char)strtol(hex, NULL, 16);
            advance(p), advance(p), advance(p);
        } else if (c == '\\' && (peek(p) == '"' || peek(p) == '\\' || peek(p) == 'n')) {
            c = peek(p) == 'n' ? '\n' : peek(p);
            advance(p);
        } else if (c == '\\') {
            sb_free(&sb);
            return FAIL(p, "unknown escape in a string");
        }
        sb_putc(&sb, c);
    }
    bool closed = peek(p) == '"';
    if (closed)
        advance(p);
    *out = arena_strndup(p->a, sb.data ? sb.data : "", sb.len);
    sb_free(&sb);
    return closed || FAIL(p, "unterminated string");
}

/* ---- lines ------------------------------------------------------------------- */

/* Skips blank lines and `# ` comment lines up to the next line with content. */
static void skip_lines(Parser *p)
{
    for (;;) {
        skip_blanks(p);
        char c = peek(p), next = peek_at(p, 1);
        bool comment = c == '#' && (next == ' ' || next == '\t' || next == '\n' || next == 0);
        if (comment)
            while (!at_end(p) && peek(p) != '\n')
                advance(p);
        if (!at_end(p) && peek(p) == '\n')
            advance(p);
        else if (!comment)
            return;
    }
}

static bool end_of_line(Parser *p)
{
    skip_blanks(p);
    if (at_end(p) || peek(p) == '\n') {
        skip_lines(p);
        return true;
    }
    return FAIL(p, "expected the end of the line");
}

/* "// a, _, c": n names, "_" kept as it reads (it prints the same). */
static bool names_comment(Parser *p, IrValue *const *vs, int n)
{
    if (!accept(p, "//"))
        return true;
    for (int i = 0; i < n; i++) {
        if (i && !expect(p, ","))
            return false;
        skip_blanks(p);
        size_t start = p->pos;
        while (!at_end(p) && peek(p) != ',' && peek(p) != '\n' && peek(p) != ' ')
            advance(p);
        if (p->pos == start)
            return FAIL(p, "expected a name");
        if (vs[i])
            vs[i]->name = arena_strndup(p->a, p->s + start, p->pos - start);
    }
    skip_blanks(p);
    return peek(p) != ',' || FAIL(p, "more names than values");
}

/* ---- types and layouts ------------------------------------------------------------ */

static bool dtype_word(Parser *p, DType *out)
{
    Span at = (skip_blanks(p), here(p));
    char buf[16];
    word(p, buf, sizeof buf);
    for (int t = DT_I1; t < DT_COUNT; t++)
        if (strcmp(buf, dtype_name((DType)t)) == 0) {
            *out = (DType)t;
            return true;
        }
    return fail_at(p, at, "unknown type '%s'", buf);
}

/* "fp32", "ptr<fp32>" */
static bool elem_type(Parser *p, Type *out)
{
    DType dt;
    if (!dtype_word(p, &dt))
        return false;
    if (dt != DT_PTR) {
        *out = type_scalar(dt);
        return true;
    }
    DType elem;
    if (!expect(p, "<") || !dtype_word(p, &elem) || !expect(p, ">"))
        return false;
    if (elem == DT_PTR)
        return FAIL(p, "a pointer to a pointer");
    *out = type_ptr(elem);
    return true;
}

/* "fp32", "ptr<fp32>", "<32x64xfp16>", "<128xptr<fp32>>" */
static bool parse_type(Parser *p, Type *out)
{
    if (!accept(p, "<"))
        return elem_type(p, out);
    int shape[TK_MAX_RANK], rank = 0;
    while (is_digit(peek(p))) {
        if (rank == TK_MAX_RANK)
            return FAIL(p, "more than %d dims", TK_MAX_RANK);
        if (!int32_in(p, 1, 1 << 24, &shape[rank++]) || !expect(p, "x"))
            return false;
    }
    if (rank == 0)
        return FAIL(p, "expected a dim");
    Type elem;
    if (!elem_type(p, &elem) || !expect(p, ">"))
        return false;
    *out = type_with_shape(elem, rank, shape);
    return true;
}

/* "[1,4]" or "[1, 4]": up to TK_LAYOUT_MAX_RANK ints of [lo, hi]. */
static bool int_list(Parser *p, int *v, int *n, int lo, int hi)
{
    *n = 0;
    if (!expect(p, "["))
        return false;
    while (!accept(p, "]")) {
        if (*n && !expect(p, ","))
            return false;
        if (*n == TK_LAYOUT_MAX_RANK)
            return FAIL(p, "more than %d entries", TK_LAYOUT_MAX_RANK);
        if (!int32_in(p, lo, hi, &v[(*n)++]))
            return false;
    }
    return true;
}

static bool keyed_list(Parser *p, const char *key, int *v, int rank, int lo, int hi)
{
    int n;
    Span at = (skip_blanks(p), here(p));
    if (!accept_word(p, key))
        return FAIL(p, "expected '%s='", key);
    if (!expect(p, "=") || !int_list(p, v, &n, lo, hi))
        return false;
    return n == rank || fail_at(p, at, "'%s' has %d entries, expected %d", key, n, rank);
}

static bool is_permutation(const int *order, int rank)
{
    int seen = 0;
    for (int i = 0; i < rank; i++)
        seen |= 1 << order[i];
    return seen == (1 << rank) - 1;
}

static bool pow2_all(const int *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!is_pow2(v[i]))
            return false;
    return true;
}

static bool parse_layout(Parser *p, Layout *l, int depth);

/* blocked<spt=[1], tpw=[32], wpc=[4], order=[0]> */
static bool read_blocked(Parser *p, Layout *l)
{
    int n;
    Span at = (skip_blanks(p), here(p));
    if (!expect(p, "spt") || !expect(p, "=") || !int_list(p, l->spt, &n, 1, 1 << 16))
        return false;
    if (n == 0)
        return fail_at(p, at, "a layout of rank 0");
    l->rank = n;
    if (!expect(p, ",") || !keyed_list(p, "tpw", l->tpw, n, 1, 32) || !expect(p, ",") ||
        !keyed_list(p, "wpc", l->wpc, n, 1, 32) || !expect(p, ",") ||
        !keyed_list(p, "order", l->order, n, 0, n - 1))
        return false;
    if (!pow2_all(l->spt, n) || !pow2_all(l->tpw, n) || !pow2_all(l->wpc, n))
        return fail_at(p, at, "sizes of a blocked layout must be powers of two");
    int lanes = 1;
    for (int i = 0; i < n; i++)
        lanes *= l->tpw[i];
    if (lanes != 32)
        return fail_at(p, at, "threads per warp multiply to %d, not 32", lanes);
    return is_permutation(l->order, n) || fail_at(p, at, "order is not a permutation");
}

/* slice<dim=0, parent=...> */
static bool read_slice(Parser *p, Layout *l, int depth, Layout **parent)
{
    Span at = (skip_blanks(p), here(p));
    if (!expect(p, "dim") || !expect(p, "=") || !int32_in(p, 0, TK_LAYOUT_MAX_RANK - 1, &l->dim) ||
        !expect(p, ",") || !expect(p, "parent") || !expect(p, "="))
        return false;
    *parent = arena_alloc(p->a, sizeof **parent);
    if (!parse_layout(p, *parent, depth + 1))
        return false;
    if ((*parent)->kind == LY_SHARED || (*parent)->rank < 2 || l->dim >= (*parent)->rank)
        return fail_at(p, at, "no slice of dim %d of that parent", l->dim);
    l->rank = (*parent)->rank - 1;
    return true;
}

/* mma<m16n8k16, warps=[4,1]> or mma<v3, m64nNk16, warps=[4,1]> */
static bool read_mma(Parser *p, Layout *l)
{
    Span at = (skip_blanks(p), here(p));
    int warps[TK_LAYOUT_MAX_RANK], n;
    l->rank = 2;
    l->version = accept_word(p, "v3") ? 3 : 0; /* 0: mma.sync, as layout_mma makes it */
    if (l->version == 3 && !expect(p, ","))
        return false;
    if (!expect(p, l->version == 3 ? "m64nNk" : "m16n8k") || !int32_in(p, 8, 32, &l->instr_k) ||
        !expect(p, ",") || !expect(p, "warps") || !expect(p, "=") ||
        !int_list(p, warps, &n, 1, 64))
        return false;
    if (n != 2 || (l->instr_k != 8 && l->instr_k != 16 && l->instr_k != 32) ||
        !pow2_all(warps, 2) || (l->version == 3 && warps[1] != 1))
        return fail_at(p, at, "a bad mma layout");
    l->wm = warps[0];
    l->wn = warps[1];
    return true;
}

/* dot_op<a, kpack=2, parent=mma<...>> */
static bool read_dot_op(Parser *p, Layout *l, int depth, Layout **parent)
{
    Span at = (skip_blanks(p), here(p));
    if (accept_word(p, "b"))
        l->opidx = 1;
    else if (!accept_word(p, "a"))
        return FAIL(p, "expected 'a' or 'b'");
    if (!expect(p, ",") || !expect(p, "kpack") || !expect(p, "=") ||
        !int32_in(p, 1, 4, &l->kpack) || !expect(p, ",") || !expect(p, "parent") ||
        !expect(p, "="))
        return false;
    *parent = arena_alloc(p->a, sizeof **parent);
    if (!parse_layout(p, *parent, depth + 1))
        return false;
    if ((*parent)->kind != LY_MMA || l->kpack == 3)
        return fail_at(p, at, "a dot_op layout needs an mma parent and kpack 1, 2 or 4");
    l->rank = 2;
    return true;
}

/* shared<vec=8, per_phase=1, max_phase=8, order=[1,0]> */
static bool read_shared(Parser *p, Layout *l)
{
    Span at = (skip_blanks(p), here(p));
    int n;
    if (!expect(p, "vec") || !expect(p, "=") || !int32_in(p, 1, 1 << 10, &l->vec) ||
        !expect(p, ",") || !expect(p, "per_phase") || !expect(p, "=") ||
        !int32_in(p, 1, 1 << 10, &l->per_phase) || !expect(p, ",") || !expect(p, "max_phase") ||
        !expect(p, "=") || !int32_in(p, 1, 1 << 10, &l->max_phase) || !expect(p, ",") ||
        !expect(p, "order") || !expect(p, "=") ||
        !int_list(p, l->order, &n, 0, TK_LAYOUT_MAX_RANK - 1))
        return false;
    l->rank = n;
    if (n == 0 || !is_permutation(l->order, n))
        return fail_at(p, at, "order is not a permutation");
    int sizes[3] = {l->vec, l->per_phase, l->max_phase};
    return pow2_all(sizes, 3) || fail_at(p, at, "sizes of a shared layout must be powers of two");
}

static bool parse_layout(Parser *p, Layout *l, int depth)
{
    memset(l, 0, sizeof *l);
    Span at = (skip_blanks(p), here(p));
    if (depth > MAX_LAYOUT_DEPTH)
        return fail_at(p, at, "layouts nested too deep");
    char kind[16];
    word(p, kind, sizeof kind);
    if (!expect(p, "<"))
        return false;
    Layout *parent = NULL;
    bool ok;
    if ((l->kind = LY_BLOCKED, strcmp(kind, "blocked") == 0))
        ok = read_blocked(p, l);
    else if ((l->kind = LY_SLICE, strcmp(kind, "slice") == 0))
        ok = read_slice(p, l, depth, &parent);
    else if ((l->kind = LY_MMA, strcmp(kind, "mma") == 0))
        ok = read_mma(p, l);
    else if ((l->kind = LY_DOT_OP, strcmp(kind, "dot_op") == 0))
        ok = read_dot_op(p, l, depth, &parent);
    else if ((l->kind = LY_SHARED, strcmp(kind, "shared") == 0))
        ok = read_shared(p, l);
    else
        return fail_at(p, at, "unknown layout '%s'", kind);
    l->parent = parent;
    return ok && expect(p, ">");
}

/* "#L3" after a type: the value's layout. */
static bool layout_ref(Parser *p, const Layout **out)
{
    *out = NULL;
    skip_blanks(p);
    if (peek(p) != '#')
        return true;
    Span at = here(p);
    int64_t n;
    if (!expect(p, "#L") || !int_in(p, 0, MAX_LAYOUTS, &n))
        return false;
    if (n >= p->nlays)
        return fail_at(p, at, "undefined layout #L%lld", (long long)n);
    *out = p->lays[n];
    return true;
}

/* ---- values ------------------------------------------------------------------- */

static bool value_id(Parser *p, int *id)
{
    skip_blanks(p);
    if (peek(p) != '%')
        return FAIL(p, "expected a value");
    advance(p);
    if (!is_digit(peek(p)))
        return FAIL(p, "expected a value number");
    return int32_in(p, 0, MAX_IDS - 1, id);
}

/* Enters v under the id the text gives it. */
static bool define(Parser *p, IrValue *v, int id, Span at)
{
    if (id >= p->vals_cap) {
        int cap = p->vals_cap ? p->vals_cap : 256;
        while (cap <= id)
            cap *= 2;
        IrValue **grown = tk_xrealloc(p->vals, sizeof *grown * (size_t)cap);
        if (!grown)
            return fail_at(p, at, "out of memory");
        memset(grown + p->vals_cap, 0, sizeof *grown * (size_t)(cap - p->vals_cap));
        p->vals = grown;
        p->vals_cap = cap;
    }
    if (p->vals[id])
        return fail_at(p, at, "%%%d is defined twice", id);
    p->vals[id] = v;
    v->id = id;
    if (id > p->max_id)
        p->max_id = id;
    return true;
}

/* "%5" (defined earlier) or "_" (absent). */
static bool use(Parser *p, IrValue **out)
{
    skip_blanks(p);
    if (accept_word(p, "_")) {
        *out = NULL;
        return true;
    }
    Span at = here(p);
    int id;
    if (!value_id(p, &id))
        return false;
    if (id >= p->vals_cap || !p->vals[id])
        return fail_at(p, at, "undefined value %%%d", id);
    *out = p->vals[id];
    return true;
}

static bool starts_value(Parser *p)
{
    skip_blanks(p);
    return peek(p) == '%' || (peek(p) == '_' && !is_word_char(peek_at(p, 1)));
}

/* "%1, _, %3" into ops (possibly none). */
static bool use_list(Parser *p, PtrVec *ops)
{
    if (!starts_value(p))
        return true;
    do {
        IrValue *v = NULL;
        if (!use(p, &v))
            return false;
        vec_push(p->a, ops, v);
    } while (accept(p, ","));
    return true;
}

/* ---- op attributes --------------------------------------------------------------- */

static const char *const cmp_names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
static const char *const reduce_names[] = {"sum", "max", "min", "argmax", "argmin", "custom"};
static const char *const scan_names[] = {"sum", "custom"};
static const char *const atomic_names[] = {"add", "max", "min", "xchg", "and", "or", "xor"};
static const char *const dot_names[] = {"ieee", "tf32", "tf32x3"};
static const char *const rand_names[] = {"uniform", "normal", "int", "int4x"};
static const char *const hint_names[] = {"multiple_of", "max_contiguous", "max_constancy"};

/* One name of a table; *out its index. */
static bool name_of(Parser *p, const char *const *names, int n, const char *what, int *out)
{
    Span at = (skip_blanks(p), here(p));
    char buf[32];
    word(p, buf, sizeof buf);
    for (int i = 0; i < n; i++)
        if (strcmp(buf, names[i]) == 0) {
            *out = i;
            return true;
        }
    return fail_at(p, at, "unknown %s '%s'", what, buf);
}

#define NAME(p, table, what, out) name_of((p), (table), TK_ARRAY_LEN(table), (what), (out))

static bool math_name(Parser *p, int *out)
{
    static const char *const names[] = {
#define X(k, n) n,
        TK_MATH_FNS(X)
#undef X
    };
    return NAME(p, names, "math function", out);
}

static bool keyed_int(Parser *p, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    if (!accept_word(p, key))
        return FAIL(p, "expected '%s='", key);
    return expect(p, "=") && int_in(p, lo, hi, out);
}

/* "axis=1" */
static bool axis_attr(Parser *p, IrOp *a)
{
    int64_t v;
    if (!keyed_int(p, "axis", 0, TK_MAX_RANK - 1, &v))
        return false;
    a->axis = (int)v;
    return true;
}

static bool op_ints(Parser *p, IrOp *a)
{
    return int_list(p, a->ints, &a->nints, -(1 << 30), 1 << 30);
}

/* What comes between the mnemonic and the operands (print_prefix). */
static bool parse_prefix(Parser *p, IrKind k, IrOp *a)
{
    switch (k) {
    case IR_CMP: return NAME(p, cmp_names, "predicate", &a->sub);
    case IR_MATH: return math_name(p, &a->sub);
    case IR_EXTERN: case IR_PRINT: return string_lit(p, &a->str);
    case IR_ATOMIC_RMW: return NAME(p, atomic_names, "atomic kind", &a->sub);
    case IR_REDUCE: return NAME(p, reduce_names, "reduction", &a->sub) && axis_attr(p, a);
    case IR_SCAN:
        if (!NAME(p, scan_names, "scan", &a->sub) || !axis_attr(p, a))
            return false;
        if (accept_word(p, "reverse"))
            a->flags |= IRF_REVERSE;
        return true;
    case IR_RAND: return NAME(p, rand_names, "random kind", &a->sub);
    case IR_HINT: return NAME(p, hint_names, "hint", &a->sub) && op_ints(p, a);
    default: return true;
    }
}

/* " cache=.ca evict=evict_last volatile" and " sem=acq_rel scope=gpu" */
static bool mem_attrs(Parser *p, IrOp *a, const char *k1, const char *k2)
{
    char buf[32];
    if (accept_word(p, k1)) {
        if (!expect(p, "=") || !*word(p, buf, sizeof buf))
            return FAIL(p, "expected a value for '%s'", k1);
        a->str = arena_strdup(p->a, buf);
    }
    if (accept_word(p, k2)) {
        if (!expect(p, "=") || !*word(p, buf, sizeof buf))
            return FAIL(p, "expected a value for '%s'", k2);
        a->str2 = arena_strdup(p->a, buf);
    }
    if (accept_word(p, "volatile"))
        a->flags |= IRF_VOLATILE;
    return true;
}

/* A number's text (const), converted once the result type is known. */
static bool literal(Parser *p, OpText *t)
{
    skip_blanks(p);
    t->literal_at = here(p);
    size_t start = p->pos;
    while (is_word_char(peek(p)) || peek(p) == '-' || peek(p) == '+')
        advance(p);
    if (p->pos == start || p->pos - start > 64)
        return fail_at(p, t->literal_at, "expected a constant");
    t->literal = arena_strndup(p->a, p->s + start, p->pos - start);
    return true;
}

static bool for_attrs(Parser *p, IrOp *a)
{
    if (accept_word(p, "num_stages") && (!expect(p, "=") || !int_in(p, 1, 64, &a->ival)))
        return false;
    if (accept_word(p, "flatten"))
        a->flags |= IRF_FLATTEN;
    if (accept_word(p, "warp_specialize"))
        a->flags |= IRF_WARP_SPEC;
    return true;
}

/* " buffer=0 slots=3" and what follows it for the ring ops. */
static bool ring_attrs(Parser *p, IrKind k, IrOp *a)
{
    if (k == IR_TMA_COPY) {
        int64_t m;
        if (!keyed_int(p, "tmap", 0, IR_MAX_TMAPS - 1, &m))
            return false;
        a->sub = (int)m;
    }
    if (!keyed_int(p, "buffer", 0, 1 << 10, &a->ival) ||
        !keyed_int(p, "slots", 1, 1 << 10, &a->ival2))
        return false;
    if (k == IR_TMA_WAIT && accept_word(p, "empty"))
        a->sub = 1;
    if ((k == IR_ASYNC_COPY || k == IR_SHARED_VIEW) && accept_word(p, "private")) {
        int64_t run;
        if (!keyed_int(p, "run", 1, 1 << 16, &run))
            return false;
        a->sub = (int)run;
    }
    return true;
}

/* " at \"file\":12" of an assert */
static bool assert_attrs(Parser *p, IrOp *a)
{
    if (!string_lit(p, &a->str))
        return false;
    if (!accept_word(p, "at"))
        return true;
    return string_lit(p, &a->str2) && expect(p, ":") && int_in(p, 0, INT32_MAX, &a->ival);
}

static bool simple_suffix(Parser *p, IrKind k, IrOp *a)
{
    switch (k) {
    case IR_DIV: a->sub = accept_word(p, "rn"); return true;
    case IR_MIN: case IR_MAX: a->sub = accept_word(p, "propagate_nan"); return true;
    case IR_PRINT: if (accept_word(p, "hex")) a->flags |= IRF_HEX; return true;
    case IR_RAND:
        return !accept_word(p, "rounds") || (expect(p, "=") && int_in(p, 1, 1 << 10, &a->ival));
    case IR_DOT:
        for (int i = DOT_TF32; i <= DOT_TF32X3 && !a->sub; i++)
            if (accept_word(p, dot_names[i]))
                a->sub = i;
        a->ival = accept_word(p, "async");
        return true;
    default: return true;
    }
}

/* What comes after the operands, before " : types" (print_suffix). */
static bool parse_suffix(Parser *p, IrKind k, OpText *t)
{
    IrOp *a = &t->attrs;
    int64_t v;
    switch (k) {
    case IR_PROGRAM_ID: case IR_NUM_PROGRAMS:
        return int_in(p, 0, 2, &v) && (a->axis = (int)v, true);
    case IR_CONST: return literal(p, t);
    case IR_ARANGE:
        return int_in(p, INT32_MIN, INT32_MAX, &a->ival) && expect(p, ",") &&
               int_in(p, INT32_MIN, INT32_MAX, &a->ival2);
    case IR_EXPAND_DIMS: case IR_CAT: case IR_SPLIT: return axis_attr(p, a);
    case IR_TRANS: return expect(p, "perm") && expect(p, "=") && op_ints(p, a);
    case IR_LOAD: case IR_STORE: return mem_attrs(p, a, "cache", "evict");
    case IR_ATOMIC_RMW: case IR_ATOMIC_CAS: return mem_attrs(p, a, "sem", "scope");
    case IR_FOR: return for_attrs(p, a);
    case IR_ASYNC_COPY: case IR_SHARED_VIEW: case IR_TMA_WAIT: case IR_TMA_RELEASE:
    case IR_TMA_COPY:
        return ring_attrs(p, k, a);
    case IR_ASYNC_WAIT:
        if (!int_in(p, -1, 64, &a->ival))
            return false;
        a->ival2 = accept_word(p, "fence");
        a->sub = accept_word(p, "no_barrier");
        return true;
    case IR_ASSERT: return assert_attrs(p, a);
    default: return simple_suffix(p, k, a);
    }
}

/* The constant's value for its result type: ints (true/false for i1), with
 * fval the same value, or floats, with ival 0, as sema makes them. */
static bool const_value(Parser *p, OpText *t, Type ty, IrOp *op)
{
    const char *s = t->literal;
    char *end = NULL;
    errno = 0;
    if (dtype_is_float(ty.dt)) {
        double v = strtod(s, &end);
        if (*end || (errno && isfinite(v) && fabs(v) > 1.0))
            return fail_at(p, t->literal_at, "bad float constant '%s'", s);
        op->fval = v;
        op->ival = 0; /* as sema and pass_fold make float constants */
        return true;
    }
    if (ty.dt == DT_I1 && (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)) {
        op->ival = s[0] == 't';
    } else if (ty.dt == DT_U64 && s[0] != '-') {
        op->ival = (int64_t)strtoull(s, &end, 10);
    } else if (dtype_is_int(ty.dt) && ty.dt != DT_I1) {
        op->ival = strtoll(s, &end, 10);
    } else {
        return fail_at(p, t->literal_at, "no constant of type %s", type_str(p->a, ty));
    }
    if ((end && (*end || end == s)) || errno)
        return fail_at(p, t->literal_at, "bad integer constant '%s'", s);
    op->fval = (double)op->ival;
    return true;
}

/* ---- ops and regions -------------------------------------------------------------------- */

static bool parse_block(Parser *p, IrBlock *b);

static bool kind_of(Parser *p, IrKind *out)
{
    Span at = (skip_blanks(p), here(p));
    char buf[32];
    word(p, buf, sizeof buf);
    for (int k = 0; k < IR_OP_COUNT; k++)
        if (strcmp(buf, ir_kind_name((IrKind)k)) == 0) {
            *out = (IrKind)k;
            return true;
        }
    return fail_at(p, at, buf[0] ? "unknown op '%s'" : "expected an op%s", buf);
}

/* "%4, %5 = " */
static bool result_ids(Parser *p, PtrVec *ids, PtrVec *spans)
{
    if (!starts_value(p))
        return true;
    do {
        Span *at = arena_alloc(p->a, sizeof *at);
        *at = (skip_blanks(p), here(p));
        int id;
        if (!value_id(p, &id))
            return false;
        vec_push(p->a, ids, (void *)(intptr_t)id);
        vec_push(p->a, spans, at);
    } while (accept(p, ","));
    return expect(p, "=");
}

/* " : srctype -> <4xfp32> #L0, i32" into types/layouts; casts check the source. */
static bool result_types(Parser *p, IrKind k, const PtrVec *ops, int n, Type *types,
                         const Layout **lays)
{
    if (n == 0)
        return true;
    if (!expect(p, ":"))
        return false;
    bool cast = k == IR_CAST || k == IR_BITCAST || k == IR_PTR_TO_INT || k == IR_INT_TO_PTR;
    if (cast && ops->len == 1 && ops->items[0]) {
        Span at = (skip_blanks(p), here(p));
        Type from;
        const IrValue *x = ops->items[0];
        if (!parse_type(p, &from) || !expect(p, "->"))
            return false;
        if (!type_eq(from, x->type))
            return fail_at(p, at, "the operand is %s, not %s", type_str(p->a, x->type),
                           type_str(p->a, from));
    }
    for (int i = 0; i < n; i++)
        if ((i && !expect(p, ",")) || !parse_type(p, &types[i]) || !layout_ref(p, &lays[i]))
            return false;
    return true;
}

/* "^(%12: i32, %13: <16xfp32> #L0):  // i, acc" */
static bool region_args(Parser *p, IrBlock *b)
{
    if (!accept(p, "^"))
        return true;
    if (!expect(p, "("))
        return false;
    while (!accept(p, ")")) {
        if (b->nargs && !expect(p, ","))
            return false;
        Span at = (skip_blanks(p), here(p));
        int id;
        Type t;
        const Layout *l;
        if (!value_id(p, &id) || !expect(p, ":") || !parse_type(p, &t) || !layout_ref(p, &l))
            return false;
        IrValue *v = ir_block_add_arg(p->f, b, t, NULL);
        v->layout = l;
        if (!define(p, v, id, at))
            return false;
    }
    return expect(p, ":") && names_comment(p, b->args, b->nargs) && end_of_line(p);
}

/* The region's body up to and with its closing '}'. */
static bool region_body(Parser *p, IrBlock *b)
{
    if (!region_args(p, b) || !parse_block(p, b))
        return false;
    return expect(p, "}");
}

/* " { ... } else { ... }", " { ... } do { ... }", " { ... }, { ... }" */
static bool parse_regions(Parser *p, IrOp *op)
{
    if (!accept(p, "{"))
        return names_comment(p, op->results, op->nres);
    if (++p->depth > MAX_DEPTH)
        return FAIL(p, "regions nested too deep");
    if (!names_comment(p, op->results, op->nres) || !end_of_line(p) ||
        !region_body(p, ir_op_add_region(p->f, op)))
        return false;
    const char *more = op->kind == IR_IF ? "else" : op->kind == IR_WHILE ? "do" : ",";
    while (more[0] == ',' ? accept(p, ",") : accept_word(p, more)) {
        if (!expect(p, "{") || !end_of_line(p) || !region_body(p, ir_op_add_region(p->f, op)))
            return false;
    }
    p->depth--;
    return true;
}

/* Builds the op once its operands, attributes and result types are known. */
static IrOp *make_op(Parser *p, IrKind k, Span at, const PtrVec *ops, const PtrVec *ids,
                     const PtrVec *spans, OpText *t)
{
    int n = ids->len;
    Type *types = arena_alloc(p->a, sizeof *types * (size_t)(n ? n : 1));
    const Layout **lays = arena_alloc(p->a, sizeof *lays * (size_t)(n ? n : 1));
    if (!result_types(p, k, ops, n, types, lays))
        return NULL;
    IrOp *op = ir_op_new(p->f, k, at, (IrValue *const *)ops->items, ops->len, types, n);
    IrOp *a = &t->attrs;
    op->axis = a->axis, op->sub = a->sub, op->flags = a->flags;
    op->ival = a->ival, op->ival2 = a->ival2, op->fval = a->fval;
    op->str = a->str, op->str2 = a->str2, op->nints = a->nints;
    memcpy(op->ints, a->ints, sizeof op->ints);
    if (k == IR_CONST && (n != 1 || !const_value(p, t, types[0], op)))
        return n == 1 ? NULL : (fail_at(p, at, "a constant has one result"), NULL);
    for (int i = 0; i < n; i++) {
        op->results[i]->layout = lays[i];
        if (!define(p, op->results[i], (int)(intptr_t)ids->items[i], *(Span *)spans->items[i]))
            return NULL;
    }
    return op;
}

static bool parse_op(Parser *p, IrBlock *b)
{
    Span at = here(p);
    PtrVec ids = {0}, spans = {0}, ops = {0};
    OpText t;
    memset(&t, 0, sizeof t);
    IrKind k = IR_CONST;
    if (!result_ids(p, &ids, &spans) || !kind_of(p, &k) || !parse_prefix(p, k, &t.attrs))
        return false;
    if (k == IR_FOR) {
        if (!use_list(p, &ops))
            return false;
        if (accept_word(p, "iter") && (!expect(p, "(") || !use_list(p, &ops) || !expect(p, ")")))
            return false;
    } else if (!use_list(p, &ops)) {
        return false;
    }
    if (!parse_suffix(p, k, &t))
        return false;
    IrOp *op = make_op(p, k, at, &ops, &ids, &spans, &t);
    if (!op)
        return false;
    ir_append(b, op);
    return parse_regions(p, op) && end_of_line(p);
}

static bool parse_block(Parser *p, IrBlock *b)
{
    for (;;) {
        skip_lines(p);
        if (at_end(p))
            return FAIL(p, "unexpected end of input: a '}' is missing");
        if (peek(p) == '}' || p->failed)
            return !p->failed;
        if (!parse_op(p, b))
            return false;
    }
}

/* ---- kernels ------------------------------------------------------------------------ */

static IrFunc *current(Parser *p)
{
    if (!p->f) {
        p->f = ir_func_new(p->a, NULL, p->src);
        p->nlays = 0;
        p->max_id = -1;
        if (p->vals)
            memset(p->vals, 0, sizeof *p->vals * (size_t)p->vals_cap);
    }
    return p->f;
}

/* "#L0 = blocked<...>": the definitions come in order. */
static bool layout_def(Parser *p)
{
    Span at = here(p);
    IrFunc *f = current(p);
    int64_t n;
    Layout l;
    if (!expect(p, "#L") || !int_in(p, 0, MAX_LAYOUTS - 1, &n))
        return false;
    if (n != p->nlays)
        return fail_at(p, at, "layout #L%lld defined out of order (expected #L%d)", (long long)n,
                       p->nlays);
    if (!expect(p, "=") || !parse_layout(p, &l, 0))
        return false;
    const Layout *c = ir_layout_intern(f, &l);
    if (!c)
        return fail_at(p, at, "out of memory");
    if (p->nlays % 64 == 0) {
        const Layout **grown = arena_alloc(p->a, sizeof *grown * (size_t)(p->nlays + 64));
        if (p->a->oom)
            return fail_at(p, at, "out of memory");
        if (p->nlays)
            memcpy(grown, p->lays, sizeof *grown * (size_t)p->nlays);
        p->lays = grown;
    }
    p->lays[p->nlays++] = c;
    return end_of_line(p);
}

/* "param3", "param3+64", "param3-1", "16" or "?" */
static bool tmap_extent(Parser *p, IrTmapExtent *e)
{
    int64_t v = 0;
    e->param = -1;
    e->add = 0;
    if (accept(p, "?")) {
        e->param = IR_TMA_UNBOUNDED;
        return true;
    }
    if (!accept_word(p, "param") && !accept(p, "param"))
        return int_in(p, INT32_MIN, INT32_MAX, &e->add);
    if (!int_in(p, 0, 255, &v))
        return false;
    e->param = (int)v;
    skip_blanks(p);
    return (peek(p) != '+' && peek(p) != '-') || int_in(p, INT32_MIN, INT32_MAX, &e->add);
}

static bool param_ref(Parser *p, int *out)
{
    return expect(p, "param") && int32_in(p, 0, 255, out);
}

/* "#T0 = tmap(param0, fp16, [param5, param3], stride=param6, box=[64, 128],
 * cols=128, swizzle=128)" */
static bool tmap_def(Parser *p)
{
    Span at = here(p);
    IrFunc *f = current(p);
    int64_t n, v = 0;
    if (!expect(p, "#T") || !int_in(p, 0, IR_MAX_TMAPS - 1, &n))
        return false;
    if (n != f->ntmaps)
        return fail_at(p, at, "tensor map #T%lld defined out of order", (long long)n);
    IrTmap t;
    memset(&t, 0, sizeof t);
    int box[TK_LAYOUT_MAX_RANK], nbox;
    if (!expect(p, "=") || !expect(p, "tmap") || !expect(p, "(") || !param_ref(p, &t.base) ||
        !expect(p, ",") || !dtype_word(p, &t.dt) || !expect(p, ",") || !expect(p, "[") ||
        !tmap_extent(p, &t.extent[0]) || !expect(p, ",") || !tmap_extent(p, &t.extent[1]) ||
        !expect(p, "]") || !expect(p, ",") || !expect(p, "stride") || !expect(p, "=") ||
        !param_ref(p, &t.stride) || !expect(p, ",") || !expect(p, "box") || !expect(p, "=") ||
        !int_list(p, box, &nbox, 1, 256) || !expect(p, ",") || !keyed_int(p, "cols", 1, 1 << 16, &v))
        return false;
    t.cols = (int)v;
    if (!expect(p, ",") || !keyed_int(p, "swizzle", 32, 128, &v) || !expect(p, ")"))
        return false;
    t.swizzle = (int)v;
    if (nbox != 2 || (v != 32 && v != 64 && v != 128) || dtype_bits(t.dt) != 16 ||
        t.cols % box[0])
        return fail_at(p, at, "a bad tensor map");
    t.box[0] = box[0], t.box[1] = box[1];
    IrTmap *maps = arena_alloc(p->a, sizeof *maps * (size_t)(f->ntmaps + 1));
    if (p->a->oom)
        return fail_at(p, at, "out of memory");
    if (f->ntmaps)
        memcpy(maps, f->tmaps, sizeof *maps * (size_t)f->ntmaps);
    maps[f->ntmaps] = t;
    f->tmaps = maps;
    f->ntmaps++;
    return end_of_line(p);
}

/* "%0: ptr<fp32> {div=16}" */
static bool kernel_param(Parser *p, IrFunc *f)
{
    Span at = (skip_blanks(p), here(p));
    int id;
    Type t;
    int64_t div = 1;
    if (!value_id(p, &id) || !expect(p, ":") || !parse_type(p, &t))
        return false;
    if (accept(p, "{") && (!keyed_int(p, "div", 1, 1 << 20, &div) || !expect(p, "}")))
        return false;
    if (t.rank || t.dt == DT_VOID)
        return fail_at(p, at, "a parameter is a scalar or a pointer");
    return define(p, ir_add_param(f, NULL, t, (int)div, at), id, at);
}

/* " num_warps=4 num_stages=3 arch=sm_90a tma buffers=2 producer_warps=4" */
static bool kernel_attrs(Parser *p, IrFunc *f)
{
    int64_t v;
    char buf[32];
    if (!keyed_int(p, "num_warps", 1, 32, &v))
        return false;
    f->num_warps = (int)v;
    if (!keyed_int(p, "num_stages", 0, 64, &v))
        return false;
    f->num_stages = (int)v;
    if (accept_word(p, "arch")) {
        if (!expect(p, "=") || !*word(p, buf, sizeof buf))
            return FAIL(p, "expected an arch");
        f->arch = arena_strdup(p->a, buf);
    }
    f->tma = accept_word(p, "tma");
    if (accept_word(p, "buffers")) {
        if (!expect(p, "=") || !int_in(p, 1, 1 << 10, &v))
            return false;
        f->nbuffers = (int)v;
    }
    if (accept_word(p, "producer_warps")) {
        if (!expect(p, "=") || !int_in(p, 1, 32, &v))
            return false;
        f->producer_warps = (int)v;
    }
    return true;
}

static bool tmaps_fit(Parser *p, const IrFunc *f)
{
    for (int i = 0; i < f->ntmaps; i++) {
        const IrTmap *t = &f->tmaps[i];
        bool ok = t->base < f->nparams && t->stride < f->nparams &&
                  f->params[t->base].type.dt == DT_PTR && dtype_is_int(f->params[t->stride].type.dt);
        for (int d = 0; d < 2; d++)
            ok = ok && t->extent[d].param < f->nparams &&
                 (t->extent[d].param < 0 || dtype_is_int(f->params[t->extent[d].param].type.dt));
        if (!ok)
            return fail_at(p, f->span, "tensor map #T%d names a parameter that does not fit", i);
    }
    return true;
}

/* Ids as the text gave them when dense, else renumbered; then the verifier. */
static bool finish_kernel(Parser *p, IrFunc *f)
{
    f->next_id = p->max_id + 1;
    for (int i = 0; i <= p->max_id; i++)
        if (!p->vals[i]) {
            ir_renumber(f);
            break;
        }
    if (p->a->oom)
        return fail_at(p, f->span, "out of memory");
    if (!tmaps_fit(p, f))
        return false;
    if (!ir_verify_as(f, p->d, DIAG_ERROR))
        p->failed = true; /* reported by the verifier */
    return !p->failed;
}

/* "kernel @name(params) attrs {  // names" up to the closing '}'. */
static IrFunc *parse_kernel(Parser *p)
{
    Span at = here(p);
    IrFunc *f = current(p);
    f->span = at;
    char name[256];
    if (!expect(p, "kernel") || !expect(p, "@"))
        return NULL;
    if (!*word(p, name, sizeof name) || is_word_char(peek(p)))
        return FAIL(p, "expected a kernel name of at most %d characters", 255), NULL;
    f->name = arena_strdup(p->a, name);
    if (!expect(p, "("))
        return NULL;
    while (!accept(p, ")"))
        if ((f->nparams && !expect(p, ",")) || !kernel_param(p, f))
            return NULL;
    if (!kernel_attrs(p, f) || !expect(p, "{") ||
        !names_comment(p, f->body->args, f->body->nargs) || !end_of_line(p) ||
        !parse_block(p, f->body) || !expect(p, "}") || !end_of_line(p))
        return NULL;
    for (int i = 0; i < f->nparams; i++)
        f->params[i].name = f->body->args[i]->name;
    return finish_kernel(p, f) ? f : NULL;
}

/* One top-level line: a tensor map, a layout, or a whole kernel. */
static bool parse_item(Parser *p, PtrVec *funcs)
{
    if (peek(p) == '#' && peek_at(p, 1) == 'T')
        return tmap_def(p);
    if (peek(p) == '#')
        return layout_def(p);
    IrFunc *f = parse_kernel(p);
    if (!f)
        return false;
    vec_push(p->a, funcs, f);
    p->f = NULL;
    return true;
}

int ir_parse(const Source *src, Arena *a, Diag *d, IrFunc ***out)
{
    Parser p;
    memset(&p, 0, sizeof p);
    p.src = src, p.a = a, p.d = d, p.s = src->text, p.len = src->len, p.line = 1;
    PtrVec funcs = {0};
    skip_lines(&p);
    while (!at_end(&p) && parse_item(&p, &funcs))
        ;
    if (!p.failed && p.f)
        FAIL(&p, "a kernel is missing after its layouts");
    if (!p.failed && funcs.len == 0)
        FAIL(&p, "no kernel in the IR");
    if (!p.failed && a->oom)
        FAIL(&p, "out of memory");
    tk_xfree(p.vals);
    *out = (IrFunc **)funcs.items;
    return p.failed ? -1 : funcs.len;
}
