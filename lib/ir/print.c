/* ir/print.c: the stable text form of the IR (tkc --emit=ir), one op a line.
 * Assumes nothing about validity: NULL operands print as `_`, so a broken IR
 * can still be dumped while debugging. Guarantees the same text for the
 * same IR, which lit tests rely on.
 *
 * Shape:
 *   #L0 = blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>   layouts (pass_layout)
 *   kernel @name(%0: ptr<fp32> {div=16}, %1: i32) num_warps=4 num_stages=3 arch=sm_80 {  // p, n
 *     %2 = program_id 0 : i32
 *     %3 = const 1024 : i32                      consts: ints, true/false, floats
 *     %4 = mul %2, %3 : i32                      elementwise: operands : result type
 *     %5 = arange 0, 1024 : <1024xi32> #L0               a block's layout
 *     %6 = cmp lt %a, %b : <1024xi1>             predicate / math fn / kind first
 *     %7 = cast %x : i32 -> fp32                 casts show both types
 *     %8 = load %p, %mask, _ cache=.ca evict=evict_last volatile : <1024xfp32>
 *     store %p, %v, %mask
 *     %9 = reduce sum axis=0 %x : fp32
 *     %10, %11 = for %lb, %ub, %st iter(%a, %b) num_stages=2 : fp32, i32 {
 *     ^(%12: i32, %13: fp32, %14: i32):  // i, acc, n   region arguments
 *       yield %15, %16
 *     }
 *     %17 = if %c : i32 { ... } else { ... }     while: { before } do { after }
 *   }
 * Attributes follow the mnemonic as `key=value` (or a bare word); source
 * variable names of the results, if known, end the line (after the `{` of an
 * op with regions) as `// name` or `// a, _, c`, and so do those of the
 * parameters and region arguments. The kernel line ends with what passes
 * need of the function: its target (arch=), whether tensor maps may be
 * added (tma), the shared ring buffers (buffers=), the producer warps and
 * the CTAs per cluster asked for (num_ctas=, when more than one).
 * ir/parse.c reads all of it back: keep the two in step. */
#include "ir/ir.h"
#include "ir/names.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ir_cmp_names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
const char *const ir_reduce_names[] = {"sum", "max", "min", "argmax", "argmin", "custom", "any"};
const char *const ir_scan_names[] = {"sum", "custom"};
const char *const ir_atomic_names[] = {"add", "max", "min", "xchg", "and", "or", "xor"};
const char *const ir_dot_names[] = {"ieee", "tf32", "tf32x3"};
const char *const ir_rand_names[] = {"uniform", "normal", "int", "int4x"};
const char *const ir_hint_names[] = {"multiple_of", "max_contiguous", "max_constancy"};
const char *const ir_gdc_names[] = {"wait", "launch_dependents"};

#define NAME_OF(table, i) ((unsigned)(i) < (unsigned)TK_ARRAY_LEN(table) ? (table)[i] : "?")

static void print_value(StrBuf *sb, const IrValue *v)
{
    if (v)
        sb_printf(sb, "%%%d", v->id);
    else
        sb_putc(sb, '_');
}

static void print_layout_ref(StrBuf *sb, const IrValue *v)
{
    if (v && v->layout)
        sb_printf(sb, " #L%d", v->layout->id);
}

static void print_value_list(StrBuf *sb, IrValue *const *vs, int n)
{
    for (int i = 0; i < n; i++) {
        if (i)
            sb_puts(sb, ", ");
        print_value(sb, vs ? vs[i] : NULL);
    }
}

/* The shortest decimal that reads back as the same double, always with a
 * '.', 'e', "inf" or "nan" so it never looks like an integer. */
static void print_double(StrBuf *sb, double x)
{
    if (isnan(x)) {
        sb_puts(sb, "nan");
        return;
    }
    if (isinf(x)) {
        sb_puts(sb, x < 0 ? "-inf" : "inf");
        return;
    }
    char buf[40];
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    sb_puts(sb, buf);
    if (!strpbrk(buf, ".e"))
        sb_puts(sb, ".0");
}

static void print_string(StrBuf *sb, const char *s)
{
    sb_putc(sb, '"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            sb_printf(sb, "\\%c", c);
        else if (c == '\n')
            sb_puts(sb, "\\n");
        else if (c < 32 || c >= 127)
            sb_printf(sb, "\\x%02x", c);
        else
            sb_putc(sb, (char)c);
    }
    sb_putc(sb, '"');
}

static void print_const(StrBuf *sb, const IrOp *op)
{
    DType dt = op->nres ? op->results[0]->type.dt : DT_VOID;
    if (dtype_is_float(dt))
        print_double(sb, op->fval);
    else if (dt == DT_I1)
        sb_puts(sb, op->ival ? "true" : "false");
    else if (dt == DT_U64)
        sb_printf(sb, "%llu", (unsigned long long)op->ival);
    else
        sb_printf(sb, "%lld", (long long)op->ival);
}

static void print_ints(StrBuf *sb, const IrOp *op)
{
    sb_putc(sb, '[');
    for (int i = 0; i < op->nints && i < TK_MAX_RANK; i++)
        sb_printf(sb, i ? ",%d" : "%d", op->ints[i]);
    sb_putc(sb, ']');
}

static void print_mem_attrs(StrBuf *sb, const IrOp *op, const char *k1, const char *k2)
{
    if (op->str)
        sb_printf(sb, " %s=%s", k1, op->str);
    if (op->str2)
        sb_printf(sb, " %s=%s", k2, op->str2);
    if (op->flags & IRF_VOLATILE)
        sb_puts(sb, " volatile");
    if (op->flags & IRF_DESC)
        sb_puts(sb, " desc");
}

/* What comes between the mnemonic and the operands. */
static void print_prefix(StrBuf *sb, const IrOp *op)
{
    switch (op->kind) {
    case IR_CMP: sb_printf(sb, " %s", NAME_OF(ir_cmp_names, op->sub)); break;
    case IR_MATH: sb_printf(sb, " %s", math_fn_name((MathFn)op->sub)); break;
    case IR_EXTERN:
        sb_putc(sb, ' ');
        print_string(sb, op->str);
        break;
    case IR_ATOMIC_RMW: sb_printf(sb, " %s", NAME_OF(ir_atomic_names, op->sub)); break;
    case IR_REDUCE:
        sb_printf(sb, " %s axis=%d", NAME_OF(ir_reduce_names, op->sub), op->axis);
        break;
    case IR_SCAN:
        sb_printf(sb, " %s axis=%d%s", NAME_OF(ir_scan_names, op->sub), op->axis,
                  op->flags & IRF_REVERSE ? " reverse" : "");
        break;
    case IR_RAND: sb_printf(sb, " %s", NAME_OF(ir_rand_names, op->sub)); break;
    case IR_HINT:
        sb_printf(sb, " %s ", NAME_OF(ir_hint_names, op->sub));
        print_ints(sb, op);
        break;
    case IR_PRINT:
        sb_putc(sb, ' ');
        print_string(sb, op->str);
        break;
    case IR_INLINE_ASM:
        sb_putc(sb, ' ');
        print_string(sb, op->str);
        sb_putc(sb, ' ');
        print_string(sb, op->str2);
        break;
    case IR_GDC: sb_printf(sb, " %s", NAME_OF(ir_gdc_names, op->sub)); break;
    default: break;
    }
}

/* What comes after the operands, before " : types". */
static void print_suffix(StrBuf *sb, const IrOp *op)
{
    switch (op->kind) {
    case IR_PROGRAM_ID:
    case IR_NUM_PROGRAMS: sb_printf(sb, " %d", op->axis); break;
    case IR_CONST:
        sb_putc(sb, ' ');
        print_const(sb, op);
        break;
    case IR_ARANGE: sb_printf(sb, " %lld, %lld", (long long)op->ival, (long long)op->ival2); break;
    case IR_EXPAND_DIMS:
    case IR_CAT:
    case IR_SPLIT:
    case IR_GATHER: sb_printf(sb, " axis=%d", op->axis); break;
    case IR_PARTNER: sb_printf(sb, " xor=%lld", (long long)op->ival); break;
    case IR_HISTOGRAM: sb_printf(sb, " bins=%lld", (long long)op->ival); break;
    case IR_TRANS:
        sb_puts(sb, " perm=");
        print_ints(sb, op);
        break;
    case IR_DIV:
        if (op->sub == 1)
            sb_puts(sb, " rn");
        break;
    case IR_CAST:
        if (op->sub == CAST_RTZ)
            sb_puts(sb, " rtz");
        break;
    case IR_MIN:
    case IR_MAX:
        if (op->sub == 1)
            sb_puts(sb, " propagate_nan");
        break;
    case IR_LOAD:
    case IR_STORE: print_mem_attrs(sb, op, "cache", "evict"); break;
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS: print_mem_attrs(sb, op, "sem", "scope"); break;
    case IR_DOT:
        if (op->sub)
            sb_printf(sb, " %s", NAME_OF(ir_dot_names, op->sub));
        if (op->ival)
            sb_puts(sb, op->flags & IRF_SPARE ? " async spare" : " async");
        break;
    case IR_FOR:
        if (op->ival)
            sb_printf(sb, " num_stages=%lld", (long long)op->ival);
        if (op->flags & IRF_FLATTEN)
            sb_puts(sb, " flatten");
        if (op->flags & IRF_WARP_SPEC)
            sb_puts(sb, " warp_specialize");
        break;
    case IR_ASYNC_COPY:
    case IR_SHARED_VIEW:
    case IR_TMA_WAIT:
    case IR_TMA_RELEASE:
        sb_printf(sb, " buffer=%lld slots=%lld", (long long)op->ival, (long long)op->ival2);
        if (op->kind == IR_TMA_WAIT && op->sub)
            sb_puts(sb, " empty");
        else if (op->kind != IR_TMA_WAIT && op->kind != IR_TMA_RELEASE && op->sub)
            sb_printf(sb, " private run=%d%s", op->sub, op->flags & IRF_PACKED ? " packed" : "");
        if (op->kind == IR_ASYNC_COPY && (op->flags & IRF_ACROSS))
            sb_puts(sb, " across");
        break;
    case IR_TMA_COPY:
        sb_printf(sb, " tmap=%d buffer=%lld slots=%lld", op->sub, (long long)op->ival,
                  (long long)op->ival2);
        if (op->flags & IRF_NONNEG)
            sb_puts(sb, " nonneg");
        break;
    case IR_TMAP_MAKE: sb_printf(sb, " tmap=%d", op->sub); break;
    case IR_TMA_STORE:
        sb_printf(sb, " tmap=%d%s", op->sub, op->ival ? " trans" : "");
        if (op->flags & IRF_NONNEG)
            sb_puts(sb, " nonneg");
        break;
    case IR_ASYNC_WAIT:
        sb_printf(sb, " %lld%s%s", (long long)op->ival, op->ival2 ? " fence" : "",
                  op->sub ? " no_barrier" : "");
        break;
    case IR_PRINT:
        if (op->flags & IRF_HEX)
            sb_puts(sb, " hex");
        break;
    case IR_ASSERT:
        sb_puts(sb, " ");
        print_string(sb, op->str);
        if (op->str2) {
            sb_puts(sb, " at ");
            print_string(sb, op->str2);
            sb_printf(sb, ":%lld", (long long)op->ival);
        }
        break;
    case IR_RAND:
        if (op->ival)
            sb_printf(sb, " rounds=%lld", (long long)op->ival);
        break;
    case IR_INLINE_ASM:
        sb_printf(sb, " pack=%lld%s", (long long)op->ival, op->flags & IRF_PURE ? " pure" : "");
        break;
    default: break;
    }
}

/* " pipe(...)": the software pipelining plan (IrPlan), the inverse of
 * parse_attr.c's plan_attrs. */
static void print_plan(StrBuf *sb, const IrPlan *pl)
{
    switch (pl->mech) {
    case PIPE_NONE: return;
    case PIPE_LOOP:
        sb_printf(sb, " pipe(stages=%d, slots=%d%s)", pl->stages, pl->slots,
                  pl->ws ? ", warp_specialized" : "");
        return;
    case PIPE_CP_ASYNC:
        sb_printf(sb, " pipe(cp_async, buffer=%d%s%s)", pl->buffer, pl->refill ? ", refill" : "",
                  pl->across ? ", across" : "");
        return;
    case PIPE_PRIVATE:
        sb_printf(sb, " pipe(private, buffer=%d, run=%d%s%s)", pl->buffer, pl->run,
                  pl->refill ? ", refill" : "", pl->packed ? ", packed" : "");
        return;
    case PIPE_TMA: sb_printf(sb, " pipe(tma, buffer=%d, tmap=%d)", pl->buffer, pl->tmap); return;
    case PIPE_RESIDENT: sb_printf(sb, " pipe(resident, buffer=%d)", pl->buffer); return;
    case PIPE_ASYNC_DOT:
        sb_printf(sb, " pipe(async, pending=%d%s)", pl->pending, pl->spare ? ", spare" : "");
        return;
    }
    sb_printf(sb, " pipe(<bad %d>)", (int)pl->mech);
}

/* " hints(multiple_of=[16,16], ...)": what the source stated about the
 * result (IrHints), the inverse of parse_attr.c's hint_attrs. */
static void print_hints(StrBuf *sb, const IrOp *op)
{
    int dims = op->nres && op->results && op->results[0] && op->results[0]->type.rank > 0
        ? op->results[0]->type.rank
        : 1;
    bool first = true;
    for (int k = 0; k < 3; k++) {
        if (!op->hints.v[k][0])
            continue;
        sb_printf(sb, "%s%s=[", first ? " hints(" : ", ", ir_hint_names[k]);
        for (int d = 0; d < dims && d < TK_MAX_RANK; d++)
            sb_printf(sb, d ? ",%d" : "%d", op->hints.v[k][d]);
        sb_putc(sb, ']');
        first = false;
    }
    if (!first)
        sb_putc(sb, ')');
}

static void print_operands(StrBuf *sb, const IrOp *op)
{
    if (op->kind == IR_FOR && op->nops >= 3 && op->operands) {
        sb_putc(sb, ' ');
        print_value_list(sb, op->operands, 3);
        if (op->nops > 3) {
            sb_puts(sb, " iter(");
            print_value_list(sb, op->operands + 3, op->nops - 3);
            sb_putc(sb, ')');
        }
        return;
    }
    if (op->nops) {
        sb_putc(sb, ' ');
        print_value_list(sb, op->operands, op->nops);
    }
}

static void indent(StrBuf *sb, int depth)
{
    for (int i = 0; i < depth; i++)
        sb_puts(sb, "  ");
}

static void print_block(StrBuf *sb, const IrBlock *b, int depth);

/* "  // a, b" from the values' source names, or nothing. */
static void print_value_names(StrBuf *sb, IrValue *const *vs, int n)
{
    bool any = false;
    for (int i = 0; vs && i < n; i++)
        any |= vs[i] && vs[i]->name && vs[i]->name[0];
    if (!any)
        return;
    sb_puts(sb, "  //");
    for (int i = 0; i < n; i++) {
        const char *name = vs[i] ? vs[i]->name : NULL;
        sb_printf(sb, "%s %s", i ? "," : "", name && name[0] ? name : "_");
    }
}

static void print_names(StrBuf *sb, const IrOp *op)
{
    print_value_names(sb, op->results, op->nres);
}

static void print_regions(StrBuf *sb, const IrOp *op, int depth)
{
    for (int r = 0; r < op->nregions; r++) {
        if (r == 0) {
            sb_puts(sb, " {");
            print_names(sb, op);
            sb_putc(sb, '\n');
        } else if (op->kind == IR_IF)
            sb_puts(sb, " else {\n");
        else if (op->kind == IR_WHILE)
            sb_puts(sb, " do {\n");
        else
            sb_puts(sb, ", {\n");
        const IrBlock *b = op->regions[r];
        if (b && b->nargs) {
            indent(sb, depth);
            sb_puts(sb, "^(");
            for (int i = 0; i < b->nargs; i++) {
                IrValue *arg = b->args ? b->args[i] : NULL;
                if (i)
                    sb_puts(sb, ", ");
                print_value(sb, arg);
                if (arg) {
                    sb_puts(sb, ": ");
                    type_print(sb, arg->type);
                    print_layout_ref(sb, arg);
                }
            }
            sb_puts(sb, "):");
            print_value_names(sb, b->args, b->nargs);
            sb_putc(sb, '\n');
        }
        print_block(sb, b, depth + 1);
        indent(sb, depth);
        sb_putc(sb, '}');
    }
}

static void print_op(StrBuf *sb, const IrOp *op, int depth)
{
    indent(sb, depth);
    if ((op->nres && !op->results) || (op->nregions && !op->regions)) {
        sb_printf(sb, "<broken %s>\n", ir_kind_name(op->kind));
        return;
    }
    if (op->nres) {
        print_value_list(sb, op->results, op->nres);
        sb_puts(sb, " = ");
    }
    sb_puts(sb, ir_kind_name(op->kind));
    print_prefix(sb, op);
    print_operands(sb, op);
    print_suffix(sb, op);
    print_plan(sb, &op->plan);
    print_hints(sb, op);
    if (op->nres) {
        sb_puts(sb, " : ");
        bool cast = op->kind == IR_CAST || op->kind == IR_BITCAST || op->kind == IR_PTR_TO_INT ||
            op->kind == IR_INT_TO_PTR;
        if (cast && op->nops == 1 && op->operands && op->operands[0]) {
            type_print(sb, op->operands[0]->type);
            sb_puts(sb, " -> ");
        }
        for (int i = 0; i < op->nres; i++) {
            if (i)
                sb_puts(sb, ", ");
            if (op->results[i])
                type_print(sb, op->results[i]->type);
            else
                sb_putc(sb, '?');
            print_layout_ref(sb, op->results[i]);
        }
    }
    if (op->nregions)
        print_regions(sb, op, depth);
    else
        print_names(sb, op);
    sb_putc(sb, '\n');
}

static void print_block(StrBuf *sb, const IrBlock *b, int depth)
{
    if (!b)
        return;
    for (const IrOp *op = b->first; op; op = op->next)
        print_op(sb, op, depth);
}

static void print_extent(StrBuf *out, const IrTmapExtent *e)
{
    if (e->param[0] == IR_TMA_UNBOUNDED) {
        sb_puts(out, "?");
        return;
    }
    if (e->param[0] < 0) {
        sb_printf(out, "%lld", (long long)e->add);
        return;
    }
    if (e->mul != 1)
        sb_printf(out, "%lld*", (long long)e->mul);
    sb_printf(out, "param%d", e->param[0]);
    for (int i = 1; i < IR_TMA_FACTORS && e->param[i] >= 0; i++)
        sb_printf(out, "*param%d", e->param[i]);
    if (e->add)
        sb_printf(out, "%+lld", (long long)e->add);
}

/* "#T0 = tmap(param0, fp16, [param5, param3*param4], stride=param6, box=[64, 128], cols=64,
 * swizzle=128)"; a constant stride is written as its number */
static void print_tmap(StrBuf *out, int i, const IrTmap *t)
{
    if (t->device) {
        sb_printf(out, "#T%d = tmap(device, %s, box=[%d, %d], cols=%d, swizzle=%d)\n", i,
                  dtype_name(t->dt), t->box[0], t->box[1], t->cols, t->swizzle);
        return;
    }
    sb_printf(out, "#T%d = tmap(param%d, %s, [", i, t->base, dtype_name(t->dt));
    print_extent(out, &t->extent[0]);
    sb_puts(out, ", ");
    print_extent(out, &t->extent[1]);
    if (t->stride >= 0)
        sb_printf(out, "], stride=param%d", t->stride);
    else
        sb_printf(out, "], stride=%lld", (long long)t->stride_const);
    sb_printf(out, ", box=[%d, %d], cols=%d, swizzle=%d)\n", t->box[0], t->box[1], t->cols,
              t->swizzle);
}

void ir_print(StrBuf *out, const IrFunc *f)
{
    for (int i = 0; i < f->ntmaps; i++)
        print_tmap(out, i, &f->tmaps[i]);
    for (int i = 0; i < f->nlayouts; i++) {
        sb_printf(out, "#L%d = ", i);
        layout_print(out, f->layouts[i]);
        sb_putc(out, '\n');
    }
    sb_printf(out, "kernel @%s(", f->name ? f->name : "?");
    const IrBlock *body = f->body;
    for (int i = 0; body && body->args && i < body->nargs; i++) {
        if (i)
            sb_puts(out, ", ");
        print_value(out, body->args[i]);
        if (!body->args[i])
            continue;
        sb_puts(out, ": ");
        type_print(out, body->args[i]->type);
        if (i < f->nparams && f->params && f->params[i].divisibility > 1)
            sb_printf(out, " {div=%d}", f->params[i].divisibility);
    }
    sb_printf(out, ") num_warps=%d num_stages=%d", f->num_warps, f->num_stages);
    if (f->arch)
        sb_printf(out, " arch=%s", f->arch);
    if (f->tma)
        sb_puts(out, " tma");
    if (f->nbuffers)
        sb_printf(out, " buffers=%d", f->nbuffers);
    if (f->producer_warps)
        sb_printf(out, " producer_warps=%d", f->producer_warps);
    if (f->num_ctas > 1)
        sb_printf(out, " num_ctas=%d", f->num_ctas);
    sb_puts(out, " {");
    if (body)
        print_value_names(out, body->args, body->nargs);
    sb_putc(out, '\n');
    print_block(out, body, 1);
    sb_puts(out, "}\n");
}
