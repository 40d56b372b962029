/* ir/parse_type.c: types ("<32x64xfp16>", "ptr<fp32>") and layouts, as
 * type_print and layout_print write them, for the IR reader. A layout is
 * checked as far as reading it needs (ranks agree, sizes are powers of two,
 * orders are permutations, parents are what the kind allows); whether it
 * fits a value's shape is the verifier's question. */
#include "ir/parse.h"

#include <string.h>

bool irp_dtype(Parser *p, DType *out)
{
    Span at = (irp_skip_blanks(p), here(p));
    char buf[16];
    irp_word(p, buf, sizeof buf);
    for (int t = DT_I1; t < DT_COUNT; t++)
        if (strcmp(buf, dtype_name((DType)t)) == 0) {
            *out = (DType)t;
            return true;
        }
    return irp_fail_at(p, at, "unknown type '%s'", buf);
}

/* "fp32", "ptr<fp32>" */
static bool elem_type(Parser *p, Type *out)
{
    DType dt = DT_F32;
    if (!irp_dtype(p, &dt))
        return false;
    if (dt != DT_PTR) {
        *out = type_scalar(dt);
        return true;
    }
    DType elem = DT_F32;
    if (!irp_expect(p, "<") || !irp_dtype(p, &elem) || !irp_expect(p, ">"))
        return false;
    if (elem == DT_PTR)
        return FAIL(p, "a pointer to a pointer");
    *out = type_ptr(elem);
    return true;
}

/* "fp32", "ptr<fp32>", "<32x64xfp16>", "<128xptr<fp32>>" */
bool irp_type(Parser *p, Type *out)
{
    if (!irp_accept(p, "<"))
        return elem_type(p, out);
    int shape[TK_MAX_RANK], rank = 0;
    while (is_digit(peek(p))) {
        if (rank == TK_MAX_RANK)
            return FAIL(p, "more than %d dims", TK_MAX_RANK);
        if (!irp_int32(p, 1, 1 << 24, &shape[rank++]) || !irp_expect(p, "x"))
            return false;
    }
    if (rank == 0)
        return FAIL(p, "expected a dim");
    Type elem;
    if (!elem_type(p, &elem) || !irp_expect(p, ">"))
        return false;
    *out = type_with_shape(elem, rank, shape);
    return true;
}

/* "[1,4]" or "[1, 4]": up to TK_LAYOUT_MAX_RANK ints of [lo, hi]. */
bool irp_int_list(Parser *p, int *v, int *n, int lo, int hi)
{
    *n = 0;
    if (!irp_expect(p, "["))
        return false;
    while (!irp_accept(p, "]")) {
        if (*n && !irp_expect(p, ","))
            return false;
        if (*n == TK_LAYOUT_MAX_RANK)
            return FAIL(p, "more than %d entries", TK_LAYOUT_MAX_RANK);
        if (!irp_int32(p, lo, hi, &v[(*n)++]))
            return false;
    }
    return true;
}

static bool keyed_list(Parser *p, const char *key, int *v, int rank, int lo, int hi)
{
    int n;
    Span at = (irp_skip_blanks(p), here(p));
    if (!irp_accept_word(p, key))
        return FAIL(p, "expected '%s='", key);
    if (!irp_expect(p, "=") || !irp_int_list(p, v, &n, lo, hi))
        return false;
    return n == rank || irp_fail_at(p, at, "'%s' has %d entries, expected %d", key, n, rank);
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

/* blocked<spt=[1], tpw=[32], wpc=[4], order=[0]> */
static bool read_blocked(Parser *p, Layout *l)
{
    int n;
    Span at = (irp_skip_blanks(p), here(p));
    if (!irp_expect(p, "spt") || !irp_expect(p, "=") || !irp_int_list(p, l->spt, &n, 1, 1 << 16))
        return false;
    if (n == 0)
        return irp_fail_at(p, at, "a layout of rank 0");
    l->rank = n;
    if (!irp_expect(p, ",") || !keyed_list(p, "tpw", l->tpw, n, 1, 32) || !irp_expect(p, ",") ||
        !keyed_list(p, "wpc", l->wpc, n, 1, 32) || !irp_expect(p, ",") ||
        !keyed_list(p, "order", l->order, n, 0, n - 1))
        return false;
    if (!pow2_all(l->spt, n) || !pow2_all(l->tpw, n) || !pow2_all(l->wpc, n))
        return irp_fail_at(p, at, "sizes of a blocked layout must be powers of two");
    int lanes = 1;
    for (int i = 0; i < n; i++)
        lanes *= l->tpw[i];
    if (lanes != 32)
        return irp_fail_at(p, at, "threads per warp multiply to %d, not 32", lanes);
    return is_permutation(l->order, n) || irp_fail_at(p, at, "order is not a permutation");
}

/* slice<dim=0, parent=...> */
static bool read_slice(Parser *p, Layout *l, int depth, Layout **parent)
{
    Span at = (irp_skip_blanks(p), here(p));
    if (!irp_expect(p, "dim") || !irp_expect(p, "=") ||
        !irp_int32(p, 0, TK_LAYOUT_MAX_RANK - 1, &l->dim) || !irp_expect(p, ",") ||
        !irp_expect(p, "parent") || !irp_expect(p, "="))
        return false;
    *parent = arena_alloc(p->a, sizeof **parent);
    if (!irp_layout(p, *parent, depth + 1))
        return false;
    if ((*parent)->kind == LY_SHARED || (*parent)->rank < 2 || l->dim >= (*parent)->rank)
        return irp_fail_at(p, at, "no slice of dim %d of that parent", l->dim);
    l->rank = (*parent)->rank - 1;
    return true;
}

/* mma<m16n8, warps=[4,1]> or mma<v3, m64nN, warps=[4,1]>; the older
 * spelling with the instruction's K (m16n8k16, m64nNk32) is read too, its
 * K checked and dropped (the dot's operands give it). */
static bool read_mma(Parser *p, Layout *l)
{
    Span at = (irp_skip_blanks(p), here(p));
    int warps[TK_LAYOUT_MAX_RANK], n, k = 16;
    l->rank = 2;
    l->version = irp_accept_word(p, "v3") ? 3 : 0; /* 0: mma.sync, as layout_mma makes it */
    if (l->version == 3 && !irp_expect(p, ","))
        return false;
    if (!irp_expect(p, l->version == 3 ? "m64nN" : "m16n8") ||
        (irp_accept(p, "k") && !irp_int32(p, 8, 32, &k)) || !irp_expect(p, ",") ||
        !irp_expect(p, "warps") || !irp_expect(p, "=") || !irp_int_list(p, warps, &n, 1, 64))
        return false;
    if (n != 2 || (k != 8 && k != 16 && k != 32) || !pow2_all(warps, 2) ||
        (l->version == 3 && warps[1] != 1 && warps[0] % 4 != 0))
        return irp_fail_at(p, at, "a bad mma layout");
    l->wm = warps[0];
    l->wn = warps[1];
    return true;
}

/* dot_op<a, kpack=2, parent=mma<...>> */
static bool read_dot_op(Parser *p, Layout *l, int depth, Layout **parent)
{
    Span at = (irp_skip_blanks(p), here(p));
    if (irp_accept_word(p, "b"))
        l->opidx = 1;
    else if (!irp_accept_word(p, "a"))
        return FAIL(p, "expected 'a' or 'b'");
    if (!irp_expect(p, ",") || !irp_expect(p, "kpack") || !irp_expect(p, "=") ||
        !irp_int32(p, 1, 4, &l->kpack) || !irp_expect(p, ",") || !irp_expect(p, "parent") ||
        !irp_expect(p, "="))
        return false;
    *parent = arena_alloc(p->a, sizeof **parent);
    if (!irp_layout(p, *parent, depth + 1))
        return false;
    if ((*parent)->kind != LY_MMA || l->kpack == 3)
        return irp_fail_at(p, at, "a dot_op layout needs an mma parent and kpack 1, 2 or 4");
    l->rank = 2;
    return true;
}

/* shared<vec=8, per_phase=1, max_phase=8, order=[1,0]> */
static bool read_shared(Parser *p, Layout *l)
{
    Span at = (irp_skip_blanks(p), here(p));
    int n;
    if (!irp_expect(p, "vec") || !irp_expect(p, "=") || !irp_int32(p, 1, 1 << 10, &l->vec) ||
        !irp_expect(p, ",") || !irp_expect(p, "per_phase") || !irp_expect(p, "=") ||
        !irp_int32(p, 1, 1 << 10, &l->per_phase) || !irp_expect(p, ",") ||
        !irp_expect(p, "max_phase") || !irp_expect(p, "=") ||
        !irp_int32(p, 1, 1 << 10, &l->max_phase) || !irp_expect(p, ",") ||
        !irp_expect(p, "order") || !irp_expect(p, "=") ||
        !irp_int_list(p, l->order, &n, 0, TK_LAYOUT_MAX_RANK - 1))
        return false;
    l->rank = n;
    if (n == 0 || !is_permutation(l->order, n))
        return irp_fail_at(p, at, "order is not a permutation");
    int sizes[3] = {l->vec, l->per_phase, l->max_phase};
    return pow2_all(sizes, 3) ||
        irp_fail_at(p, at, "sizes of a shared layout must be powers of two");
}

bool irp_layout(Parser *p, Layout *l, int depth)
{
    memset(l, 0, sizeof *l);
    Span at = (irp_skip_blanks(p), here(p));
    if (depth > MAX_LAYOUT_DEPTH)
        return irp_fail_at(p, at, "layouts nested too deep");
    char kind[16];
    irp_word(p, kind, sizeof kind);
    if (!irp_expect(p, "<"))
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
        return irp_fail_at(p, at, "unknown layout '%s'", kind);
    l->parent = parent;
    return ok && irp_expect(p, ">");
}

/* "#L3" after a type: the value's layout. */
bool irp_layout_ref(Parser *p, const Layout **out)
{
    *out = NULL;
    irp_skip_blanks(p);
    if (peek(p) != '#')
        return true;
    Span at = here(p);
    int64_t n;
    if (!irp_expect(p, "#L") || !irp_int(p, 0, MAX_LAYOUTS, &n))
        return false;
    if (n >= p->nlays)
        return irp_fail_at(p, at, "undefined layout #L%lld", (long long)n);
    *out = p->lays[n];
    return true;
}
