/* fuzz_ir.c: libFuzzer target for the IR reader (ir/parse.c). Each input is
 * read as --emit=ir text; what reads cleanly is printed, read again and
 * printed again, and the two prints must be the same (print and parse are
 * inverses). A crash, hang, leak, sanitizer report or an "internal error"
 * from the verifier on IR the reader accepted is a finding. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads text into arena a; prints every kernel read into out. */
static bool read_and_print(const char *text, size_t len, Arena *a, StrBuf *out, bool *internal)
{
    Source src = {"fuzz.tkir", text, len};
    Diag diag;
    diag_init(&diag, &src);
    IrFunc **fs;
    int n = ir_parse(&src, a, &diag, &fs);
    for (int i = 0; i < n; i++) {
        ir_print(out, fs[i]);
        *internal |= !ir_verify(fs[i], &diag); /* accepted IR must stay valid */
    }
    diag_free(&diag);
    return n > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Arena arena;
    arena_init(&arena);
    char *text = arena_alloc(&arena, size + 1);
    if (!text || arena.oom) {
        arena_free(&arena);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = 0;
    StrBuf first, second;
    sb_init(&first);
    sb_init(&second);
    bool internal = false;
    if (read_and_print(text, size, &arena, &first, &internal) && !first.oom) {
        const char *p = first.data ? first.data : "";
        if (!read_and_print(p, first.len, &arena, &second, &internal) || second.len != first.len ||
            memcmp(second.data, p, first.len) != 0)
            abort(); /* the printed IR does not read back as itself */
    }
    if (internal)
        abort();
    sb_free(&first);
    sb_free(&second);
    arena_free(&arena);
    return 0;
}
