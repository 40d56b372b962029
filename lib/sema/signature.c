/* sema/signature.c: the --signature text, parsed and printed. Entries are
 * comma-separated: "*fp32:16", "i32:1", "tensordesc<fp16[64, 64]>", and
 * tuples in parentheses, Triton's tuple arguments: "(*fp32:16,*fp32)",
 * nested "((i32,i32),*fp16)", one item "(i32,)", with constexpr items
 * ("None", "4") where Triton specialises an item into a constant.
 * Guarantees: parentheses balance and nest at most 8 deep; every bad
 * entry is reported with its text. Also the types a parameter's annotation
 * gives: constexpr, tk's spelling (`x: "*fp16"`, `n: i32`) or Triton's
 * (`n: tl.int64`, `x: tl.pointer_type(tl.int64)`), or none (Python type
 * hints, which Triton ignores). */
#include <ctype.h>
#include <string.h>

#include "sema/spec.h"

/* tuples nest at most this deep, as the runtime takes them (the parser
 * recurses once per level) */
enum { SIG_MAX_DEPTH = 8 };

/* Whether the parentheses of text balance and nest at most SIG_MAX_DEPTH
 * deep; the first fault in *why. (An unclosed '<' or '[' is reported by
 * the entry that holds it.) */
static bool sig_balanced(const char *text, Arena *a, const char **why)
{
    int depth = 0;
    for (const char *p = text; *p; p++) {
        if (*p == ')' && depth == 0) {
            *why = arena_printf(a, "unbalanced ')' at column %d", (int)(p - text) + 1);
            return false;
        }
        depth += (*p == '(') - (*p == ')');
        if (depth > SIG_MAX_DEPTH) {
            *why = arena_printf(a, "tuples nest more than %d deep at column %d", SIG_MAX_DEPTH,
                                (int)(p - text) + 1);
            return false;
        }
    }
    if (depth > 0)
        *why = "'(' is never closed (expected ')')";
    return depth == 0;
}

/* The end of the entry starting at p: its comma outside brackets, or the end. */
static const char *entry_end(const char *p, const char *end)
{
    for (int depth = 0; p < end && (*p != ',' || depth > 0); p++)
        depth += (*p == '<' || *p == '[' || *p == '(') - (*p == '>' || *p == ']' || *p == ')');
    return p;
}

static bool blank(const char *p, const char *end)
{
    for (; p < end; p++)
        if (!isspace((unsigned char)*p))
            return false;
    return true;
}

static bool parse_list(const char *p, const char *end, bool in_tuple, Arena *a, Diag *d,
                       ArgSpec **items, int *n);

/* A tuple's items, "(...)" without the parentheses. */
static bool parse_tuple(const char *item, const char *p, const char *end, Arena *a, Diag *d,
                        ArgSpec *out)
{
    ArgSpec *items;
    int n;
    if (!parse_list(p, end, true, a, d, &items, &n))
        return false;
    for (int i = 0; i < n; i++)
        if (items[i].desc_rank > 0) {
            diag_plain(d, DIAG_ERROR,
                       "bad signature entry '%s': a tensor descriptor inside a tuple is not "
                       "supported yet",
                       item);
            return false;
        }
    memset(out, 0, sizeof *out);
    out->type = type_scalar(DT_VOID);
    out->is_tuple = true;
    out->items = items;
    out->nitems = n;
    return true;
}

/* A constexpr item of a tuple: None, a number, True/False or a 'string'. */
static bool parse_const_item(const char *item, Arena *a, ArgSpec *out)
{
    ConstValue v;
    const char *why;
    if (!sema_parse_const(item, &v, &why))
        return false;
    if (cv_has_text(&v)) { /* sema_parse_const's copy is on the heap */
        const char *text = arena_strdup(a, v.s);
        tk_xfree((char *)v.s);
        v.s = text;
    }
    if (v.kind == CV_DTYPE || v.kind == CV_TUPLE || v.kind == CV_FUNC)
        return false;
    memset(out, 0, sizeof *out);
    out->type = type_scalar(DT_VOID);
    out->is_const = true;
    out->value = v;
    return true;
}

/* One entry, item (trimmed); a constexpr value is one only inside a tuple. */
static bool parse_entry(const char *item, bool in_tuple, Arena *a, Diag *d, ArgSpec *out)
{
    size_t len = strlen(item);
    Type t;
    int div;
    const char *why;
    if (item[0] == '(') {
        if (item[len - 1] != ')') {
            diag_plain(d, DIAG_ERROR, "bad signature entry '%s': text after the tuple's ')'", item);
            return false;
        }
        return parse_tuple(item, item + 1, item + len - 1, a, d, out);
    }
    if (sema_parse_desc(item, out, &why))
        return true;
    if (why) {
        diag_plain(d, DIAG_ERROR, "bad signature entry '%s': %s", item, why);
        return false;
    }
    if (!sema_parse_type(item, &t, &div)) {
        if (in_tuple && parse_const_item(item, a, out))
            return true;
        diag_plain(d, DIAG_ERROR,
                   "bad signature entry '%s' (expected e.g. *fp32, *fp16:16, i32, fp32, "
                   "(*fp32,i32)%s)",
                   item, in_tuple ? ", or a constexpr item: None, 4" : "");
        return false;
    }
    if (div == 1 && (t.dt == DT_PTR || !dtype_is_int(t.dt))) {
        diag_plain(d, DIAG_ERROR,
                   "bad signature entry '%s': ':1' (equal to 1) only applies to integers", item);
        return false;
    }
    /* Triton's AOT spelling: ":16" divisible by 16, ":1" equal to 1 */
    memset(out, 0, sizeof *out);
    out->type = t;
    out->divisibility = div == 16 ? 16 : 1;
    out->equal_to_1 = div == 1;
    return true;
}

/* The entries of p..end. At the top level an empty text is no entries; in
 * a tuple "()" is the empty tuple and a last comma may end the list. */
static bool parse_list(const char *p, const char *end, bool in_tuple, Arena *a, Diag *d,
                       ArgSpec **items, int *n)
{
    int cap = 1;
    for (const char *q = p; q < end; q++)
        cap += *q == ',';
    ArgSpec *out = arena_alloc(a, sizeof *out * (size_t)cap);
    *items = out;
    *n = 0;
    if (blank(p, end))
        return true;
    bool ok = true;
    const char *start = p, *list = arena_strndup(a, p, (size_t)(end - p));
    while (1) {
        const char *e = entry_end(p, end);
        while (p < e && isspace((unsigned char)*p))
            p++;
        size_t len = (size_t)(e - p);
        while (len && isspace((unsigned char)p[len - 1]))
            len--;
        char *item = arena_strndup(a, p, len);
        if (len == 0 && in_tuple && e == end && p > start)
            break; /* "(i32,)": a last comma */
        if (len == 0) {
            diag_plain(d, DIAG_ERROR,
                       in_tuple ? "bad signature entry '(%s)': an empty item"
                                : "bad signature '%s': an empty entry",
                       list);
            ok = false;
        } else if (parse_entry(item, in_tuple, a, d, &out[*n])) {
            (*n)++;
        } else {
            ok = false;
        }
        if (e == end)
            break;
        p = e + 1;
    }
    return ok;
}

bool sema_parse_signature(const char *text, Arena *a, Diag *d, ArgSpec **args, int *nargs)
{
    const char *why;
    *args = NULL;
    *nargs = 0;
    if (!sig_balanced(text, a, &why)) {
        diag_plain(d, DIAG_ERROR, "bad signature '%s': %s", text, why);
        return false;
    }
    return parse_list(text, text + strlen(text), false, a, d, args, nargs);
}

static void print_entry(StrBuf *sb, const ArgSpec *as)
{
    if (as->is_tuple) {
        sb_putc(sb, '(');
        for (int i = 0; i < as->nitems; i++) {
            if (i)
                sb_putc(sb, ',');
            print_entry(sb, &as->items[i]);
        }
        sb_puts(sb, as->nitems == 1 ? ",)" : ")");
    } else if (as->is_const) {
        const ConstValue *v = &as->value;
        if (v->kind == CV_INT)
            sb_printf(sb, "%lld", (long long)v->i);
        else if (v->kind == CV_FLOAT)
            sb_printf(sb, "%.17g", v->f);
        else if (v->kind == CV_BOOL)
            sb_puts(sb, v->i ? "True" : "False");
        else if (v->kind == CV_STR)
            sb_printf(sb, "'%s'", v->s);
        else
            sb_puts(sb, "None");
    } else if (as->desc_rank > 0) {
        sb_printf(sb, "tensordesc<%s[", dtype_name(as->type.elem));
        for (int i = 0; i < as->desc_rank; i++)
            sb_printf(sb, "%s%d", i ? ", " : "", as->desc_block[i]);
        sb_puts(sb, as->divisibility == 16 ? "]>:16" : "]>");
    } else {
        Type t = as->type;
        sb_printf(sb, "%s%s", t.dt == DT_PTR ? "*" : "",
                  dtype_name(t.dt == DT_PTR ? t.elem : t.dt));
        if (as->equal_to_1)
            sb_puts(sb, ":1");
        else if (as->divisibility == 16)
            sb_puts(sb, ":16");
    }
}

const char *sema_sig_entry(const ArgSpec *as, Arena *a)
{
    StrBuf sb;
    sb_init(&sb);
    print_entry(&sb, as);
    const char *out = arena_strdup(a, sb.data ? sb.data : "");
    sb_free(&sb);
    return out;
}

/* ---- parameter annotations ---------------------------------------------------------- */

bool sema_annot_is_constexpr(const Node *a)
{
    if (!a)
        return false;
    if (a->kind == N_SUBSCRIPT)
        a = a->a;
    if (a->kind == N_STR)
        return a->str && (strcmp(a->str, "constexpr") == 0 || strcmp(a->str, "tl.constexpr") == 0);
    return (a->kind == N_NAME || a->kind == N_ATTR) && strcmp(a->name, "constexpr") == 0;
}

/* Python type hints real kernels carry (`n: int`, `x: torch.Tensor`,
 * `y: Optional[torch.Tensor]`, `z: tl.tensor`): Triton ignores them. */
static bool annot_is_python_hint(const Node *a)
{
    static const char *const names[] = {"int", "float", "bool", "str", "Tensor", "tensor", "Any"};
    if (a->kind == N_SUBSCRIPT)
        return true;
    if (a->kind != N_NAME && a->kind != N_ATTR)
        return false;
    if (a->kind == N_ATTR && strcmp(a->name, "const") == 0)
        return true; /* tl.const: a read-only pointer; the launch gives its type */
    for (int i = 0; i < TK_ARRAY_LEN(names); i++)
        if (strcmp(a->name, names[i]) == 0)
            return true;
    return false;
}

/* `tl.pointer_type(tl.int64)` as an annotation: a pointer to that dtype, as
 * Triton reads it ("*i64"); its const= and address_space= change nothing
 * here. Else NULL. */
static const char *annot_pointer_elem(const Node *a)
{
    if (a->kind != N_CALL || !a->a || (a->a->kind != N_ATTR && a->a->kind != N_NAME) ||
        strcmp(a->a->name, "pointer_type") != 0)
        return NULL;
    const Node *e = a->list.len > 0 ? a->list.items[0] : NULL;
    for (int i = 0; !e && i < a->list2.len; i++)
        if (strcmp(a->list2.items[i]->name, "element_ty") == 0)
            e = a->list2.items[i]->a;
    return e && (e->kind == N_ATTR || e->kind == N_NAME) ? e->name : NULL;
}

Type sema_annot_type(const Node *a, bool *bad)
{
    Type t = type_scalar(DT_VOID);
    int div;
    *bad = false;
    if (!a || sema_annot_is_constexpr(a))
        return t;
    const char *elem = a->kind == N_PTR_TYPE ? a->name : annot_pointer_elem(a);
    if (elem) {
        DType dt = sema_dtype_name(elem);
        *bad = dt == DT_VOID;
        return dt == DT_VOID ? t : type_ptr(dt);
    }
    const char *text = a->kind == N_STR          ? a->str
        : a->kind == N_NAME || a->kind == N_ATTR ? a->name
                                                 : NULL;
    if (text && sema_parse_type(text, &t, &div))
        return t;
    if (annot_is_python_hint(a))
        return type_scalar(DT_VOID); /* a hint for Python's readers; the launch gives the type */
    *bad = true;
    return type_scalar(DT_VOID);
}
