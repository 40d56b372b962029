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
 * about its input: every length, number and nesting depth is bounded.
 *
 * This file reads values, ops, regions and kernels; parse_lex.c,
 * parse_type.c and parse_attr.c read the pieces (parse.h). */
#include "ir/parse.h"
#include "ir/verify.h"

#include <string.h>

/* ---- values ------------------------------------------------------------------- */

static bool value_id(Parser *p, int *id)
{
    irp_skip_blanks(p);
    if (peek(p) != '%')
        return FAIL(p, "expected a value");
    irp_advance(p);
    if (!is_digit(peek(p)))
        return FAIL(p, "expected a value number");
    return irp_int32(p, 0, MAX_IDS - 1, id);
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
            return irp_fail_at(p, at, "out of memory");
        memset(grown + p->vals_cap, 0, sizeof *grown * (size_t)(cap - p->vals_cap));
        p->vals = grown;
        p->vals_cap = cap;
    }
    if (p->vals[id])
        return irp_fail_at(p, at, "%%%d is defined twice", id);
    p->vals[id] = v;
    v->id = id;
    if (id > p->max_id)
        p->max_id = id;
    return true;
}

/* "%5" (defined earlier) or "_" (absent). */
static bool use(Parser *p, IrValue **out)
{
    irp_skip_blanks(p);
    if (irp_accept_word(p, "_")) {
        *out = NULL;
        return true;
    }
    Span at = here(p);
    int id;
    if (!value_id(p, &id))
        return false;
    if (id >= p->vals_cap || !p->vals[id])
        return irp_fail_at(p, at, "undefined value %%%d", id);
    *out = p->vals[id];
    return true;
}

static bool starts_value(Parser *p)
{
    irp_skip_blanks(p);
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
    } while (irp_accept(p, ","));
    return true;
}

/* ---- ops and regions -------------------------------------------------------------------- */

static bool parse_block(Parser *p, IrBlock *b);

static bool kind_of(Parser *p, IrKind *out)
{
    Span at = (irp_skip_blanks(p), here(p));
    char buf[32];
    irp_word(p, buf, sizeof buf);
    for (int k = 0; k < IR_OP_COUNT; k++)
        if (strcmp(buf, ir_kind_name((IrKind)k)) == 0) {
            *out = (IrKind)k;
            return true;
        }
    return irp_fail_at(p, at, buf[0] ? "unknown op '%s'" : "expected an op%s", buf);
}

/* "%4, %5 = " */
static bool result_ids(Parser *p, PtrVec *ids, PtrVec *spans)
{
    if (!starts_value(p))
        return true;
    do {
        Span *at = arena_alloc(p->a, sizeof *at);
        *at = (irp_skip_blanks(p), here(p));
        int id;
        if (!value_id(p, &id))
            return false;
        vec_push(p->a, ids, (void *)(intptr_t)id);
        vec_push(p->a, spans, at);
    } while (irp_accept(p, ","));
    return irp_expect(p, "=");
}

/* " : srctype -> <4xfp32> #L0, i32" into types/layouts; casts check the source. */
static bool result_types(Parser *p, IrKind k, const PtrVec *ops, int n, Type *types,
                         const Layout **lays)
{
    if (n == 0)
        return true;
    if (!irp_expect(p, ":"))
        return false;
    bool cast = k == IR_CAST || k == IR_BITCAST || k == IR_PTR_TO_INT || k == IR_INT_TO_PTR;
    if (cast && ops->len == 1 && ops->items[0]) {
        Span at = (irp_skip_blanks(p), here(p));
        Type from;
        const IrValue *x = ops->items[0];
        if (!irp_type(p, &from) || !irp_expect(p, "->"))
            return false;
        if (!type_eq(from, x->type))
            return irp_fail_at(p, at, "the operand is %s, not %s", type_str(p->a, x->type),
                               type_str(p->a, from));
    }
    for (int i = 0; i < n; i++)
        if ((i && !irp_expect(p, ",")) || !irp_type(p, &types[i]) || !irp_layout_ref(p, &lays[i]))
            return false;
    return true;
}

/* "^(%12: i32, %13: <16xfp32> #L0):  // i, acc" */
static bool region_args(Parser *p, IrBlock *b)
{
    if (!irp_accept(p, "^"))
        return true;
    if (!irp_expect(p, "("))
        return false;
    while (!irp_accept(p, ")")) {
        if (b->nargs && !irp_expect(p, ","))
            return false;
        Span at = (irp_skip_blanks(p), here(p));
        int id;
        Type t;
        const Layout *l;
        if (!value_id(p, &id) || !irp_expect(p, ":") || !irp_type(p, &t) || !irp_layout_ref(p, &l))
            return false;
        IrValue *v = ir_block_add_arg(p->f, b, t, NULL);
        v->layout = l;
        if (!define(p, v, id, at))
            return false;
    }
    return irp_expect(p, ":") && irp_names(p, b->args, b->nargs) && irp_end_of_line(p);
}

/* The region's body up to and with its closing '}'. */
static bool region_body(Parser *p, IrBlock *b)
{
    if (!region_args(p, b) || !parse_block(p, b))
        return false;
    return irp_expect(p, "}");
}

/* " { ... } else { ... }", " { ... } do { ... }", " { ... }, { ... }" */
static bool parse_regions(Parser *p, IrOp *op)
{
    if (!irp_accept(p, "{"))
        return irp_names(p, op->results, op->nres);
    if (++p->depth > MAX_DEPTH)
        return FAIL(p, "regions nested too deep");
    if (!irp_names(p, op->results, op->nres) || !irp_end_of_line(p) ||
        !region_body(p, ir_op_add_region(p->f, op)))
        return false;
    const char *more = op->kind == IR_IF ? "else" : op->kind == IR_WHILE ? "do" : ",";
    while (more[0] == ',' ? irp_accept(p, ",") : irp_accept_word(p, more)) {
        if (!irp_expect(p, "{") || !irp_end_of_line(p) ||
            !region_body(p, ir_op_add_region(p->f, op)))
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
    op->plan = a->plan;
    op->hints = a->hints;
    if (k == IR_CONST && (n != 1 || !irp_const_value(p, t, types[0], op)))
        return n == 1 ? NULL : (irp_fail_at(p, at, "a constant has one result"), NULL);
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
    if (!result_ids(p, &ids, &spans) || !kind_of(p, &k) || !irp_prefix(p, k, &t.attrs))
        return false;
    if (k == IR_FOR) {
        if (!use_list(p, &ops))
            return false;
        if (irp_accept_word(p, "iter") &&
            (!irp_expect(p, "(") || !use_list(p, &ops) || !irp_expect(p, ")")))
            return false;
    } else if (!use_list(p, &ops)) {
        return false;
    }
    if (!irp_suffix(p, k, &t))
        return false;
    IrOp *op = make_op(p, k, at, &ops, &ids, &spans, &t);
    if (!op)
        return false;
    ir_append(b, op);
    return parse_regions(p, op) && irp_end_of_line(p);
}

static bool parse_block(Parser *p, IrBlock *b)
{
    for (;;) {
        irp_skip_lines(p);
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
    if (!irp_expect(p, "#L") || !irp_int(p, 0, MAX_LAYOUTS - 1, &n))
        return false;
    if (n != p->nlays)
        return irp_fail_at(p, at, "layout #L%lld defined out of order (expected #L%d)",
                           (long long)n, p->nlays);
    if (!irp_expect(p, "=") || !irp_layout(p, &l, 0))
        return false;
    const Layout *c = ir_layout_intern(f, &l);
    if (!c)
        return irp_fail_at(p, at, "out of memory");
    if (p->nlays % 64 == 0) {
        const Layout **grown = arena_alloc(p->a, sizeof *grown * (size_t)(p->nlays + 64));
        if (p->a->oom)
            return irp_fail_at(p, at, "out of memory");
        if (p->nlays)
            memcpy(grown, p->lays, sizeof *grown * (size_t)p->nlays);
        p->lays = grown;
    }
    p->lays[p->nlays++] = c;
    return irp_end_of_line(p);
}

/* "param3", "param3*param5+64", "128*param3-1", "16" or "?" */
static bool tmap_extent(Parser *p, IrTmapExtent *e)
{
    int64_t v = 0;
    for (int i = 0; i < IR_TMA_FACTORS; i++)
        e->param[i] = -1;
    e->mul = 1;
    e->add = 0;
    if (irp_accept(p, "?")) {
        e->param[0] = IR_TMA_UNBOUNDED;
        return true;
    }
    if (!irp_accept_word(p, "param") && !irp_accept(p, "param")) {
        if (!irp_int(p, INT32_MIN, INT32_MAX, &e->add))
            return false;
        irp_skip_blanks(p);
        if (peek(p) != '*')
            return true;
        if (e->add < 1 || !irp_expect(p, "*") || !irp_expect(p, "param"))
            return e->add >= 1 || irp_fail_at(p, here(p), "an extent's coefficient is positive");
        e->mul = e->add;
        e->add = 0;
    }
    for (int i = 0;; i++) {
        if (!irp_int(p, 0, 255, &v))
            return false;
        e->param[i] = (int)v;
        irp_skip_blanks(p);
        if (peek(p) != '*')
            break;
        if (i + 1 == IR_TMA_FACTORS)
            return irp_fail_at(p, here(p), "an extent has at most %d factors", IR_TMA_FACTORS);
        if (!irp_expect(p, "*") || !irp_expect(p, "param"))
            return false;
    }
    return (peek(p) != '+' && peek(p) != '-') || irp_int(p, INT32_MIN, INT32_MAX, &e->add);
}

/* "stride=param6" or "stride=128" */
static bool tmap_stride(Parser *p, IrTmap *t)
{
    t->stride = -1;
    if (!irp_expect(p, "stride") || !irp_expect(p, "="))
        return false;
    if (irp_accept_word(p, "param") || irp_accept(p, "param"))
        return irp_int32(p, 0, 255, &t->stride);
    return irp_int(p, 1, INT32_MAX, &t->stride_const);
}

static bool param_ref(Parser *p, int *out)
{
    return irp_expect(p, "param") && irp_int32(p, 0, 255, out);
}

/* "#T0 = tmap(param0, fp16, [param5, param3], stride=param6, box=[64, 128],
 * cols=128, swizzle=128)" */
static bool tmap_def(Parser *p)
{
    Span at = here(p);
    IrFunc *f = current(p);
    int64_t n, v = 0;
    if (!irp_expect(p, "#T") || !irp_int(p, 0, IR_MAX_TMAPS - 1, &n))
        return false;
    if (n != f->ntmaps)
        return irp_fail_at(p, at, "tensor map #T%lld defined out of order", (long long)n);
    IrTmap t;
    memset(&t, 0, sizeof t);
    int box[TK_LAYOUT_MAX_RANK], nbox;
    if (!irp_expect(p, "=") || !irp_expect(p, "tmap") || !irp_expect(p, "("))
        return false;
    t.device = irp_accept_word(p, "device");
    if (t.device) {
        t.base = t.stride = -1;
        t.extent[0] = t.extent[1] = (IrTmapExtent){{IR_TMA_UNBOUNDED, -1, -1}, 1, 0};
    }
    if ((!t.device &&
         (!param_ref(p, &t.base) || !irp_expect(p, ",") || !irp_dtype(p, &t.dt) ||
          !irp_expect(p, ",") || !irp_expect(p, "[") || !tmap_extent(p, &t.extent[0]) ||
          !irp_expect(p, ",") || !tmap_extent(p, &t.extent[1]) || !irp_expect(p, "]") ||
          !irp_expect(p, ",") || !tmap_stride(p, &t))) ||
        (t.device && (!irp_expect(p, ",") || !irp_dtype(p, &t.dt))) || !irp_expect(p, ",") ||
        !irp_expect(p, "box") || !irp_expect(p, "=") || !irp_int_list(p, box, &nbox, 1, 256) ||
        !irp_expect(p, ",") || !irp_keyed_int(p, "cols", 1, 1 << 16, &v))
        return false;
    t.cols = (int)v;
    if (!irp_expect(p, ",") || !irp_keyed_int(p, "swizzle", 32, 128, &v) || !irp_expect(p, ")"))
        return false;
    t.swizzle = (int)v;
    if (nbox != 2 || (v != 32 && v != 64 && v != 128) ||
        (dtype_bits(t.dt) != 32 && dtype_bits(t.dt) != 16 && dtype_bits(t.dt) != 8) ||
        t.cols % box[0])
        return irp_fail_at(p, at, "a bad tensor map");
    t.box[0] = box[0], t.box[1] = box[1];
    IrTmap *maps = arena_alloc(p->a, sizeof *maps * (size_t)(f->ntmaps + 1));
    if (p->a->oom)
        return irp_fail_at(p, at, "out of memory");
    if (f->ntmaps)
        memcpy(maps, f->tmaps, sizeof *maps * (size_t)f->ntmaps);
    maps[f->ntmaps] = t;
    f->tmaps = maps;
    f->ntmaps++;
    return irp_end_of_line(p);
}

/* "%0: ptr<fp32> {div=16}" */
static bool kernel_param(Parser *p, IrFunc *f)
{
    Span at = (irp_skip_blanks(p), here(p));
    int id;
    Type t;
    int64_t div = 1;
    if (!value_id(p, &id) || !irp_expect(p, ":") || !irp_type(p, &t))
        return false;
    if (irp_accept(p, "{") && (!irp_keyed_int(p, "div", 1, 1 << 20, &div) || !irp_expect(p, "}")))
        return false;
    if (t.rank || t.dt == DT_VOID)
        return irp_fail_at(p, at, "a parameter is a scalar or a pointer");
    return define(p, ir_add_param(f, NULL, t, (int)div, at), id, at);
}

/* " num_warps=4 num_stages=3 arch=sm_90a tma buffers=2 producer_warps=4 num_ctas=2" */
static bool kernel_attrs(Parser *p, IrFunc *f)
{
    int64_t v;
    char buf[32];
    if (!irp_keyed_int(p, "num_warps", 1, 32, &v))
        return false;
    f->num_warps = (int)v;
    if (!irp_keyed_int(p, "num_stages", 0, 64, &v))
        return false;
    f->num_stages = (int)v;
    char why[128];
    if (!ir_launch_settings(&f->num_warps, &f->num_stages, NULL, why, sizeof why))
        return FAIL(p, "%s", why);
    if (irp_accept_word(p, "arch")) {
        if (!irp_expect(p, "=") || !*irp_word(p, buf, sizeof buf))
            return FAIL(p, "expected an arch");
        f->arch = arena_strdup(p->a, buf);
    }
    f->tma = irp_accept_word(p, "tma");
    if (irp_accept_word(p, "buffers")) {
        if (!irp_expect(p, "=") || !irp_int(p, 1, 1 << 10, &v))
            return false;
        f->nbuffers = (int)v;
    }
    if (irp_accept_word(p, "producer_warps")) {
        if (!irp_expect(p, "=") || !irp_int(p, 1, 32, &v))
            return false;
        f->producer_warps = (int)v;
    }
    if (irp_accept_word(p, "num_ctas")) {
        if (!irp_expect(p, "=") || !irp_int(p, 1, 2, &v))
            return false;
        f->num_ctas = (int)v;
    }
    return true;
}

static bool int_param(const IrFunc *f, int i)
{
    return i >= 0 && i < f->nparams && dtype_is_int(f->params[i].type.dt);
}

static bool tmaps_fit(Parser *p, const IrFunc *f)
{
    for (int i = 0; i < f->ntmaps; i++) {
        const IrTmap *t = &f->tmaps[i];
        if (t->device)
            continue;
        bool ok = t->base < f->nparams && f->params[t->base].type.dt == DT_PTR &&
            (t->stride < 0 || int_param(f, t->stride));
        for (int d = 0; d < 2; d++)
            for (int k = 0; k < IR_TMA_FACTORS; k++) {
                int q = t->extent[d].param[k];
                ok = ok && (q < 0 || int_param(f, q));
            }
        if (!ok)
            return irp_fail_at(p, f->span, "tensor map #T%d names a parameter that does not fit",
                               i);
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
        return irp_fail_at(p, f->span, "out of memory");
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
    if (!irp_expect(p, "kernel") || !irp_expect(p, "@"))
        return NULL;
    if (!*irp_word(p, name, sizeof name) || is_word_char(peek(p)))
        return FAIL(p, "expected a kernel name of at most %d characters", 255), NULL;
    f->name = arena_strdup(p->a, name);
    if (!irp_expect(p, "("))
        return NULL;
    while (!irp_accept(p, ")"))
        if ((f->nparams && !irp_expect(p, ",")) || !kernel_param(p, f))
            return NULL;
    if (!kernel_attrs(p, f) || !irp_expect(p, "{") ||
        !irp_names(p, f->body->args, f->body->nargs) || !irp_end_of_line(p) ||
        !parse_block(p, f->body) || !irp_expect(p, "}") || !irp_end_of_line(p))
        return NULL;
    /* a parameter the text leaves unnamed still needs a name (codegen and
     * the launcher match parameters by name); its value stays unnamed, so
     * the text prints back as it was */
    for (int i = 0; i < f->nparams; i++)
        f->params[i].name =
            f->body->args[i]->name ? f->body->args[i]->name : arena_printf(p->a, "arg%d", i);
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
    irp_skip_lines(&p);
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
