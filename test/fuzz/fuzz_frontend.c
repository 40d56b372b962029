/* fuzz_frontend.c: libFuzzer target for the scanner and parser. Each input
 * is lexed (--emit=tokens), parsed and, when it parsed cleanly, printed
 * (--emit=ast); everything lives in one arena freed before returning, so a
 * leak, crash, hang or sanitizer report in the front end shows up here. */
#include <stdint.h>
#include <string.h>

#include "front/front.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Arena arena;
    arena_init(&arena);
    char *text = arena_alloc(&arena, size + 1);
    if (!text) {
        arena_free(&arena);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = 0;
    Source src = {"fuzz.tk", text, size};

    Diag diag;
    diag_init(&diag, &src);
    StrBuf out;
    sb_init(&out);
    lex_dump_tokens(&src, &diag, &out);
    sb_free(&out);
    diag_free(&diag);

    diag_init(&diag, &src);
    Node *module = parse_module(&src, &arena, &diag);
    if (module && diag.errors == 0) {
        sb_init(&out);
        ast_print(&out, module);
        sb_free(&out);
    }
    diag_free(&diag);
    arena_free(&arena);
    return 0;
}
