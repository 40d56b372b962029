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
 * the .loc directives), so it is dropped. */
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

void ptx_rewrite(const char *ptx, size_t len, StrBuf *out)
{
    const char *end = ptx + len;
    for (const char *line = ptx; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
        if (!rewrite_target(line, n, out) && !rewrite_neg(line, n, out))
            sb_write(out, line, n);
        if (nl)
            sb_write(out, "\n", 1);
        line += n + (nl != NULL);
    }
}
