/* target/ptx_rewrite.c: the last edit of PTX text before it leaves the
 * compiler, for the assembler's sake.
 *
 * ptxas (CUDA 12.8 and 13.0) folds an integer negation into the operand of
 * the three-input min/max it forms on sm_90 from two chained max.s32 or
 * min.s32, and for the middle operand it drops the negation:
 * max(max(a, -b), c) comes out as max(a, b, c). The same PTX assembled at
 * -O0 is right. Writing each negation as a complement and an increment
 * keeps it out of the fold; the cost is one integer instruction.
 *
 * A module with line tables comes out as `.target sm_XX, debug`, and ptxas
 * compiles PTX that says `debug` without optimising it (more registers,
 * slower code). The line tables need no such flag (ptxas -lineinfo reads
 * the .loc directives), so it is dropped.
 *
 * An address computed as `mul.wide.s32 t, i, k` and `add.s64 p, base, t`
 * (what LLVM 19's NVPTX backend prints for base + i*k) becomes one
 * `mad.wide.s32 p, i, k, base`, the form later backends print. ptxas turns
 * the pair into an IMAD.WIDE with the base copied into vector registers,
 * and the mad into a LEA pair on the base in its uniform register; in a
 * K loop whose copies compute their addresses next to the wgmmas, the
 * IMAD.WIDEs stall at dispatch. The two are fused only where t has no
 * other reader and nothing but line directives comes between them, so
 * i, k and base hold the same values at the add. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "target/target.h"

/* Reads one PTX register name ("%r12", "%rd3", "%rs1") at s; its length, or
 * 0 when s holds none. */
static size_t reg_len(const char *s)
{
    if (s[0] != '%')
        return 0;
    size_t n = 1;
    while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9'))
        n++;
    return n > 1 ? n : 0;
}

/* One line "\tneg.sNN \tDST, SRC;" (as LLVM prints it) rewritten into out;
 * false when the line is anything else. */
static bool rewrite_neg(const char *line, size_t len, StrBuf *out)
{
    const char *p = line;
    while (*p == '\t' || *p == ' ')
        p++;
    int bits = 0;
    if (!strncmp(p, "neg.s16", 7))
        bits = 16;
    else if (!strncmp(p, "neg.s32", 7))
        bits = 32;
    else if (!strncmp(p, "neg.s64", 7))
        bits = 64;
    if (!bits || (p[7] != ' ' && p[7] != '\t'))
        return false;
    p += 7;
    while (*p == '\t' || *p == ' ')
        p++;
    size_t dl = reg_len(p);
    if (!dl || p[dl] != ',' || p[dl + 1] != ' ')
        return false;
    const char *dst = p, *src = p + dl + 2;
    size_t sl = reg_len(src);
    if (!sl || src[sl] != ';' || (size_t)(src + sl + 1 - line) != len)
        return false;
    char buf[160];
    int n = snprintf(buf, sizeof buf, "\tnot.b%d \t%.*s, %.*s;\n\tadd.s%d \t%.*s, %.*s, 1;", bits,
                     (int)dl, dst, (int)sl, src, bits, (int)dl, dst, (int)dl, dst);
    if (n < 0 || (size_t)n >= sizeof buf)
        return false;
    sb_write(out, buf, (size_t)n);
    return true;
}

/* ".target sm_90a, debug" written without ", debug"; false for any other line. */
static bool rewrite_target(const char *line, size_t len, StrBuf *out)
{
    static const char flag[] = ", debug";
    size_t fl = sizeof flag - 1;
    if (len < 8 + fl || strncmp(line, ".target ", 8) != 0 || memcmp(line + len - fl, flag, fl) != 0)
        return false;
    sb_write(out, line, len - fl);
    return true;
}

/* ---- mul.wide + add.s64 -> mad.wide ------------------------------------------------ */

typedef struct Line {
    const char *s;
    size_t n;
} Line;

/* The number N of a "%rdN" register name at s (which holds reg_len(s)
 * bytes of it); -1 for any other register. */
static long rd_number(const char *s, size_t n)
{
    if (n < 4 || strncmp(s, "%rd", 3) != 0)
        return -1;
    long v = 0;
    for (size_t i = 3; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > 100000000)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Counts the %rdN names of lines [a, b) into count[0..cap). */
static void count_rd(const Line *ln, size_t a, size_t b, int *count, long cap)
{
    for (size_t i = a; i < b; i++)
        for (size_t k = 0; k < ln[i].n; k++) {
            size_t rl = reg_len(ln[i].s + k);
            long r = rl ? rd_number(ln[i].s + k, rl) : -1;
            if (r >= 0 && r < cap)
                count[r]++;
            k += rl ? rl - 1 : 0;
        }
}

/* The operands of "\tOP \tA, B, C;" (OP given, three operands, each up
 * to a comma); false for any other line. */
static bool three_operands(const Line *l, const char *op, Line o[3])
{
    size_t ol = strlen(op);
    const char *p = l->s, *end = l->s + l->n;
    while (p < end && (*p == '\t' || *p == ' '))
        p++;
    if ((size_t)(end - p) < ol + 2 || strncmp(p, op, ol) != 0 || (p[ol] != ' ' && p[ol] != '\t'))
        return false;
    p += ol;
    for (int i = 0; i < 3; i++) {
        while (p < end && (*p == '\t' || *p == ' '))
            p++;
        const char *q = p;
        while (q < end && *q != ',' && *q != ';')
            q++;
        if (q == end || q == p || (*q == ';') != (i == 2))
            return false;
        o[i] = (Line){p, (size_t)(q - p)};
        p = q + 1;
    }
    return p == end;
}

static bool same(Line a, Line b) { return a.n == b.n && memcmp(a.s, b.s, a.n) == 0; }

static bool is_rd(Line a) { return reg_len(a.s) == a.n && rd_number(a.s, a.n) >= 0; }

static bool is_directive(const Line *l)
{
    const char *p = l->s;
    while (p < l->s + l->n && (*p == '\t' || *p == ' '))
        p++;
    return l->s + l->n - p >= 4 && strncmp(p, ".loc", 4) == 0;
}

/* Line m, "mul.wide.{s,u}32 T, I, K", and the next instruction line, "add.s64
 * P, X, Y" with T one of X and Y and read nowhere else: the fused line into
 * fused (its add's index in *at); false where they are not such a pair. */
static bool fuse_pair(const Line *ln, size_t m, size_t end, const int *count, long cap,
                      StrBuf *fused, size_t *at)
{
    Line mo[3], ao[3];
    const char *sign = "s32";
    if (!three_operands(&ln[m], "mul.wide.s32", mo)) {
        if (!three_operands(&ln[m], "mul.wide.u32", mo))
            return false;
        sign = "u32";
    }
    long t = is_rd(mo[0]) ? rd_number(mo[0].s, mo[0].n) : -1;
    if (t < 0 || t >= cap || count[t] != 2)
        return false;
    size_t a = m + 1;
    while (a < end && is_directive(&ln[a]))
        a++;
    if (a == end || !three_operands(&ln[a], "add.s64", ao) || !is_rd(ao[1]) || !is_rd(ao[2]))
        return false;
    Line base;
    if (same(ao[1], mo[0]) && !same(ao[2], mo[0]))
        base = ao[2];
    else if (same(ao[2], mo[0]) && !same(ao[1], mo[0]))
        base = ao[1];
    else
        return false;
    fused->len = 0;
    sb_printf(fused, "\tmad.wide.%s \t%.*s, %.*s, %.*s, %.*s;", sign, (int)ao[0].n, ao[0].s,
              (int)mo[1].n, mo[1].s, (int)mo[2].n, mo[2].s, (int)base.n, base.s);
    *at = a;
    return !fused->oom;
}

/* The end of the function whose body opens at or after line i: the line
 * after the one whose '}' brings the brace depth back to 0. */
static size_t function_end(const Line *ln, size_t i, size_t n)
{
    int depth = 0;
    bool opened = false;
    for (; i < n; i++) {
        for (size_t k = 0; k < ln[i].n; k++) {
            depth += ln[i].s[k] == '{';
            depth -= ln[i].s[k] == '}';
            opened |= ln[i].s[k] == '{';
        }
        if (opened && depth <= 0)
            return i + 1;
    }
    return n;
}

/* Writes line l to out: as it is, but for the neg and target edits. */
static void write_plain(const Line *l, StrBuf *out)
{
    if (!rewrite_target(l->s, l->n, out) && !rewrite_neg(l->s, l->n, out))
        sb_write(out, l->s, l->n);
    sb_write(out, "\n", 1);
}

/* Zeroed memory for n items of size sz, through the allocation hook. */
static void *zalloc(size_t n, size_t sz)
{
    void *p = n && sz <= SIZE_MAX / n ? tk_xalloc(n * sz) : NULL;
    if (p)
        memset(p, 0, n * sz);
    return p;
}

/* One function's lines [a, b) (or the text between functions) into out,
 * with the pairs fused: a fused add's text goes in texts, at repl[add] - 1,
 * and skip[] marks the mul lines it absorbed. */
static void write_function(const Line *ln, size_t a, size_t b, int *count, long cap, bool *skip,
                           size_t *repl, StrBuf *out)
{
    memset(count, 0, sizeof(int) * (size_t)cap);
    count_rd(ln, a, b, count, cap);
    StrBuf fused, texts;
    sb_init(&fused);
    sb_init(&texts);
    for (size_t i = a; i < b; i++) {
        size_t at;
        if (!skip[i] && fuse_pair(ln, i, b, count, cap, &fused, &at) && !repl[at]) {
            skip[i] = true;
            repl[at] = texts.len + 1;
            sb_write(&texts, fused.data, fused.len + 1);
        }
    }
    out->oom |= fused.oom || texts.oom;
    for (size_t i = a; i < b && !out->oom; i++) {
        if (skip[i])
            continue;
        if (repl[i]) {
            sb_puts(out, texts.data + repl[i] - 1);
            sb_write(out, "\n", 1);
        } else {
            write_plain(&ln[i], out);
        }
    }
    sb_free(&fused);
    sb_free(&texts);
}

void ptx_rewrite(const char *ptx, size_t len, StrBuf *out)
{
    const char *end = ptx + len;
    size_t n = 1;
    long cap = 1;
    for (const char *p = ptx; p < end; p++)
        n += *p == '\n';
    Line *ln = zalloc(n, sizeof *ln);
    bool *skip = zalloc(n, sizeof *skip);
    size_t *repl = zalloc(n, sizeof *repl);
    size_t k = 0;
    for (const char *line = ptx; ln && line < end; k++) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        ln[k] = (Line){line, nl ? (size_t)(nl - line) : (size_t)(end - line)};
        for (size_t i = 0; i < ln[k].n; i++) {
            size_t rl = reg_len(line + i);
            long r = rl ? rd_number(line + i, rl) : -1;
            cap = r >= cap ? r + 1 : cap;
        }
        line += ln[k].n + (nl != NULL);
    }
    int *count = zalloc((size_t)cap, sizeof *count);
    if (!ln || !skip || !repl || !count) {
        out->oom = true; /* the caller reports it: no PTX */
    } else {
        for (size_t a = 0; a < k;) {
            size_t b = function_end(ln, a, k);
            write_function(ln, a, b, count, cap, skip, repl, out);
            a = b;
        }
    }
    /* the text's last line had no newline: neither has the output's */
    if (len && ptx[len - 1] != '\n' && out->len && !out->oom)
        out->len--;
    tk_xfree(ln);
    tk_xfree(skip);
    tk_xfree(repl);
    tk_xfree(count);
}

bool ptx_cluster_dims(StrBuf *ptx, int n)
{
    const char *text = ptx->data ? ptx->data : "";
    const char *at = strstr(text, "\n.maxntid ");
    const char *eol = at ? strchr(at + 1, '\n') : NULL;
    if (!eol)
        return false;
    size_t head = (size_t)(eol + 1 - text);
    StrBuf out;
    sb_init(&out);
    sb_write(&out, text, head);
    sb_printf(&out, ".explicitcluster\n.reqnctapercluster %d, 1, 1\n", n);
    sb_write(&out, text + head, ptx->len - head);
    if (out.oom) {
        sb_free(&out);
        return false;
    }
    sb_free(ptx);
    *ptx = out;
    return true;
}
