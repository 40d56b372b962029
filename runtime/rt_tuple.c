/* rt_tuple.c: tuple arguments (tk_tuple, Triton's tuple arguments). In the
 * argument list a tuple is a marker holding its item count, followed by its
 * items, each whole. Sema flattens a tuple parameter's pointer and scalar
 * leaves into compiled parameters named after their place ("ptrs[1][0]");
 * constexpr items (tk_none(NULL), tk_const(NULL, 4)) fold. The key holds
 * the tuple's shape and each item's word, so within one variant every leaf
 * sits at a fixed offset from its marker: that offset is the leaf's part.
 * Guarantees: a malformed tuple is refused before anything reads past the
 * list, and an item is checked and specialised like an argument. */
#include <stdio.h>
#include <string.h>

#include "rt_backend.h"

enum { MAX_DEPTH = 8 };

static int span_at(const tk_arg *args, int i, int nargs, int depth)
{
    const tk_arg *a = &args[i];
    if (a->kind != TK_ARG_TUPLE)
        return 1;
    if (depth == MAX_DEPTH || a->v.i < 0 || a->v.i >= nargs - i)
        return -1;
    int at = i + 1;
    for (int64_t n = 0; n < a->v.i; n++) {
        int s = at < nargs ? span_at(args, at, nargs, depth + 1) : -1;
        if (s < 0)
            return -1;
        at += s;
    }
    return at - i;
}

int rt_arg_span(const tk_arg *args, int i, int nargs) { return span_at(args, i, nargs, 0); }

/* The span of an item already checked by rt_arg_span. */
static int span_of(const tk_arg *a)
{
    if (a->kind != TK_ARG_TUPLE)
        return 1;
    int at = 1;
    for (int64_t n = 0; n < a->v.i; n++)
        at += span_of(a + at);
    return at;
}

/* Item idx of tuple t. */
static const tk_arg *item_of(const tk_arg *t, int idx)
{
    const tk_arg *it = t + 1;
    for (int n = 0; n < idx; n++)
        it += span_of(it);
    return it;
}

static tk_status item_key(tk_kernel *k, int j, const char *path, const tk_arg *a, RtKey *key)
{
    if (a->kind == TK_ARG_CONST) {
        rt_key_const(key, a);
        return TK_OK;
    }
    if (a->kind == TK_ARG_DESC)
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s': item %s is a tensor descriptor; descriptors inside a "
                       "tuple are not supported yet",
                       k->name, path);
    if (a->kind == TK_ARG_PTR || a->kind == TK_ARG_SCALAR)
        return rt_leaf_word(k, j, path, a, rt_no_spec(k, j), &key->w[key->nwords++]);
    if (a->kind != TK_ARG_TUPLE)
        return err_set(TK_ERR_LAUNCH, "kernel '%s': item %s has an unknown kind", k->name, path);
    key->w[key->nwords++] = (uint64_t)TK_ARG_TUPLE << 8 | (uint64_t)a->v.i << 16;
    const tk_arg *it = a + 1;
    for (int i = 0; i < a->v.i; i++) {
        char sub[128];
        snprintf(sub, sizeof sub, "%s[%d]", path, i);
        tk_status s = item_key(k, j, sub, it, key);
        if (s != TK_OK)
            return s;
        it += span_of(it);
    }
    return TK_OK;
}

tk_status rt_tuple_key(tk_kernel *k, int j, const char *param, const tk_arg *a, RtKey *key)
{
    Type ann = k->sig.annotated[k->runtime_idx[j]];
    if (ann.dt != DT_VOID)
        return err_set(TK_ERR_LAUNCH,
                       "kernel '%s': parameter '%s' is declared %s%s but the launch passes a "
                       "tuple",
                       k->name, param, ann.dt == DT_PTR ? "*" : "",
                       dtype_name(ann.dt == DT_PTR ? ann.elem : ann.dt));
    return item_key(k, j, param, a, key);
}

tk_status rt_tuple_spec(const tk_kernel *k, const tk_arg *a, bool no_spec, Arena *ar, ArgSpec *out)
{
    memset(out, 0, sizeof *out);
    if (a->kind == TK_ARG_CONST) {
        out->is_const = true;
        tk_status s = rt_const_value(k->name, "a tuple item", a, &out->value);
        if (s == TK_OK && cv_has_text(&out->value)) {
            char *text = arena_strdup(ar, out->value.s); /* the copy was on the heap */
            tk_xfree((char *)out->value.s);
            out->value.s = text;
        }
        return s;
    }
    if (a->kind != TK_ARG_TUPLE) {
        rt_arg_spec(a, out);
        if (no_spec)
            out->divisibility = 1, out->equal_to_1 = false;
        return TK_OK;
    }
    ArgSpec *items = arena_alloc(ar, sizeof *items * (size_t)(a->v.i + 1));
    if (!items)
        return err_set(TK_ERR_NO_MEMORY, "out of memory");
    out->type = type_scalar(DT_VOID);
    out->is_tuple = true;
    out->nitems = (int)a->v.i;
    out->items = items;
    for (int i = 0; i < out->nitems; i++) {
        tk_status s = rt_tuple_spec(k, item_of(a, i), no_spec, ar, &items[i]);
        if (s != TK_OK)
            return s;
    }
    return TK_OK;
}

int rt_tuple_part(const tk_arg *a, const char *param, const char *compiled)
{
    size_t n = strlen(param);
    if (a->kind != TK_ARG_TUPLE || strncmp(compiled, param, n) != 0 || compiled[n] != '[')
        return -1;
    const tk_arg *at = a;
    for (const char *p = compiled + n; *p;) {
        int idx = 0;
        if (*p++ != '[' || *p < '0' || *p > '9')
            return -1;
        while (*p >= '0' && *p <= '9' && idx < 1 << 20)
            idx = idx * 10 + (*p++ - '0');
        if (*p++ != ']' || at->kind != TK_ARG_TUPLE || idx >= at->v.i)
            return -1;
        at = item_of(at, idx);
    }
    return at->kind == TK_ARG_PTR || at->kind == TK_ARG_SCALAR ? (int)(at - a) : -1;
}

bool rt_part_ok(const tk_arg *a, int part)
{
    if (!a || a->kind != TK_ARG_TUPLE)
        return part >= 0 && part < RT_DESC_PARTS;
    if (part < 1 || part >= span_of(a))
        return false;
    return a[part].kind == TK_ARG_PTR || a[part].kind == TK_ARG_SCALAR;
}
