/* ir/asm.c: the register operands of tl.inline_asm_elementwise, read from
 * its constraint string and checked against its values, so that sema
 * reports a mismatch at the source, the verifier refuses it in IR text, and
 * codegen hands LLVM only inline asm it accepts (LLVM checks constraints
 * with assertions alone). */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

int ir_asm_per_reg(DType dt, int pack)
{
    int bits = dtype_bits(dt);
    int per = bits > 0 && bits < 32 ? 32 / bits : 1;
    return per < pack ? per : pack;
}

static int letter_bits(char c)
{
    switch (c) {
    case 'h': return 16;
    case 'r':
    case 'f': return 32;
    case 'l':
    case 'd': return 64;
    case 'n': return 32; /* an immediate: a compile-time integer, an input only */
    default: return 0;
    }
}

/* One comma-separated entry: "=r", "=&r", "r", "0", "~{memory}". Clobbers
 * give no register (returns true with *letter 0). */
static bool entry(const char *e, size_t len, bool *out, char *letter, int *tied)
{
    *out = false, *letter = 0, *tied = -1;
    if (len >= 3 && e[0] == '~' && e[1] == '{' && e[len - 1] == '}')
        return true;
    if (len && e[0] == '=') {
        *out = true, e++, len--;
        if (len && e[0] == '&')
            e++, len--;
    }
    if (len == 1 && letter_bits(e[0]) && !(*out && e[0] == 'n')) {
        *letter = e[0];
        return true;
    }
    if (!*out && len >= 1 && len <= 2 && e[0] >= '0' && e[0] <= '9' &&
        (len == 1 || (e[1] >= '0' && e[1] <= '9'))) {
        *tied = len == 1 ? e[0] - '0' : (e[0] - '0') * 10 + (e[1] - '0');
        return true;
    }
    return false;
}

static bool parse(const char *s, IrAsmRegs *r, char *why, size_t n)
{
    r->nout = r->nin = 0;
    bool clobbers = false;
    for (int k = 0;; k++) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        bool out;
        char letter;
        int tied;
        if (!entry(s, len, &out, &letter, &tied)) {
            snprintf(why, n,
                     "constraint %d ('%.*s') is not one of =h, =r, =l, =f, =d, h, r, "
                     "l, f, d, n, a tied output number or ~{clobber}",
                     k, (int)(len > 16 ? 16 : len), s);
            return false;
        }
        if (letter || tied >= 0) {
            if (clobbers || (out && r->nin)) {
                snprintf(why, n, "constraint %d: outputs come first, then inputs, then clobbers",
                         k);
                return false;
            }
            if (tied >= r->nout) {
                snprintf(why, n, "constraint %d is tied to output %d, which does not exist", k,
                         tied);
                return false;
            }
            if (r->nout + r->nin >= IR_ASM_MAX_REGS) {
                snprintf(why, n, "more than %d register operands", IR_ASM_MAX_REGS);
                return false;
            }
            r->letter[r->nout + r->nin] = tied >= 0 ? r->letter[tied] : letter;
            *(out ? &r->nout : &r->nin) += 1;
        } else {
            clobbers = true;
        }
        if (!c)
            return true;
        s = c + 1;
    }
}

/* Whether v is an integer known when the kernel is compiled: a constant,
 * or one spread over a block (every call of the asm sees the same). */
static bool compile_time_int(const IrValue *v)
{
    while (v->def &&
           (v->def->kind == IR_SPLAT || v->def->kind == IR_BROADCAST ||
            v->def->kind == IR_CONVERT_LAYOUT || v->def->kind == IR_EXPAND_DIMS))
        v = v->def->operands[0];
    return v->def && v->def->kind == IR_CONST && dtype_is_int(v->type.dt);
}

/* The operand a '$' at c names ($N or ${N}), -1 where no digits follow
 * (*c is then the '$'), or -2 for "$$" (a dollar; c steps over it). */
static long operand_at(const char **c)
{
    if ((*c)[1] == '$') {
        (*c)++;
        return -2;
    }
    const char *first = (*c)[1] == '{' ? *c + 2 : *c + 1, *d = first;
    long k = 0;
    while (*d >= '0' && *d <= '9' && k < 1000)
        k = k * 10 + (*d++ - '0');
    return d > first ? k : -1;
}

/* Whether the asm text names operand $k. */
static bool names_operand(const char *text, int k)
{
    for (const char *c = text; *c; c++)
        if (*c == '$' && operand_at(&c) == k)
            return true;
    return false;
}

/* The registers `v` needs per call fit their constraints (from index *at).
 * A result register the asm text never names (a dummy output of an asm run
 * for its side effect, as a signal's "=r" with dtype=ptrs.dtype) may be
 * narrower than its value: the value is the register's bits zero-extended,
 * as LLVM would give for Triton. `text` is NULL for arguments. */
static bool fit(const IrValue *v, int pack, const IrAsmRegs *r, int *at, int end, const char *what,
                int i, const char *text, char *why, size_t n)
{
    DType dt = v->type.dt;
    int per = ir_asm_per_reg(dt, pack);
    int bits = dtype_bits(dt) * per;
    for (int j = 0; j < pack / per; j++, (*at)++) {
        if (*at >= end)
            return true; /* the count check below reports it */
        char c = r->letter[*at];
        if (c == 'n' && (per != 1 || !compile_time_int(v))) {
            snprintf(why, n,
                     "immediate operand $%d ('n') needs an integer constant of at most 32 "
                     "bits, and %s %d is not one",
                     *at, what, i);
            return false;
        }
        int cb = letter_bits(c);
        bool dummy = text && c != 'f' && c != 'd' && !names_operand(text, *at);
        if ((bits > cb && !dummy) || ((c == 'f' || c == 'd') && bits != cb)) {
            snprintf(why, n, "register $%d ('%c', %d bits) cannot hold %s %d (%d x %s)", *at, c, cb,
                     what, i, per, dtype_name(dt));
            return false;
        }
    }
    return true;
}

/* Every $N of the asm text names a register operand ($$ is a dollar). */
static bool operands_named(const char *text, int nregs, char *why, size_t n)
{
    for (const char *c = text; *c; c++) {
        if (*c != '$')
            continue;
        long k = operand_at(&c);
        if (k == -1) {
            snprintf(why, n, "'$' at offset %d of the asm is not followed by an operand number",
                     (int)(c - text));
            return false;
        }
        if (k >= nregs) {
            snprintf(why, n, "the asm names $%ld, but the constraints give %d operand%s", k, nregs,
                     nregs == 1 ? "" : "s");
            return false;
        }
    }
    return true;
}

bool ir_asm_regs(const IrOp *op, IrAsmRegs *r, char *why, size_t n)
{
    int pack = (int)op->ival;
    if (!op->str2 || !parse(op->str2, r, why, n))
        return false;
    int want_out = 0, want_in = 0;
    for (int i = 0; i < op->nres; i++)
        want_out += pack / ir_asm_per_reg(op->results[i]->type.dt, pack);
    for (int i = 0; i < op->nops; i++)
        want_in += pack / ir_asm_per_reg(op->operands[i]->type.dt, pack);
    if (r->nout != want_out || r->nin != want_in) {
        snprintf(why, n,
                 "the constraints name %d output%s and %d input%s; %d result%s and %d "
                 "argument%s with pack=%d need %d and %d",
                 r->nout, r->nout == 1 ? "" : "s", r->nin, r->nin == 1 ? "" : "s", op->nres,
                 op->nres == 1 ? "" : "s", op->nops, op->nops == 1 ? "" : "s", pack, want_out,
                 want_in);
        return false;
    }
    if (!op->str) {
        snprintf(why, n, "no asm text");
        return false;
    }
    if (!operands_named(op->str, r->nout + r->nin, why, n))
        return false;
    int at = 0;
    for (int i = 0; i < op->nres; i++)
        if (!fit(op->results[i], pack, r, &at, r->nout, "result", i, op->str, why, n))
            return false;
    for (int i = 0; i < op->nops; i++)
        if (!fit(op->operands[i], pack, r, &at, r->nout + r->nin, "argument", i, NULL, why, n))
            return false;
    return true;
}
