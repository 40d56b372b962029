/* parse.c: parses one module: runs the generated parser over the scanner,
 * checks the finished tree's depth and puts the host statements host.c
 * split off back among the parsed ones (front.h's parse_module and
 * parse_python_module). */
#include "front/front.h"
#include "front/parse_build.h"

/* Puts the host statements among the parsed ones, in line order. */
static void parse_merge_hosts(LexState *lx, Node *module)
{
    if (lx->hosts.len == 0)
        return;
    PtrVec all = {0};
    int h = 0;
    for (int i = 0; i < module->list.len; i++) {
        Node *n = module->list.items[i];
        while (h < lx->hosts.len && ((Node *)lx->hosts.items[h])->span.line < n->span.line)
            vec_push(lx->arena, &all, lx->hosts.items[h++]);
        vec_push(lx->arena, &all, n);
    }
    while (h < lx->hosts.len)
        vec_push(lx->arena, &all, lx->hosts.items[h++]);
    module->list = parse_list(lx, all);
}

static Node *parse_file(const Source *src, Arena *a, Diag *d, bool python)
{
    LexState *lx = arena_alloc(a, sizeof *lx);
    Node *module = arena_alloc(a, sizeof *module);
    if (!lx || !module || a->oom) {
        diag_plain(d, DIAG_ERROR, "out of memory while parsing");
        return NULL;
    }
    module->kind = N_MODULE;
    module->span = (Span){1, 1, 1, 1, 0};
    module->src = src;
    if (!lex_open(lx, src, a, d, python)) {
        diag_plain(d, DIAG_ERROR, "out of memory while reading the source");
        return module;
    }
    lx->module = module;
    int errors = d->errors;
    int rc = tk_yyparse(lx);
    lex_close(lx);
    if (rc != 0 && d->errors == errors)
        diag_plain(d, DIAG_ERROR, "the parser gave up (out of memory)");
    if (d->errors == errors && !a->oom)
        parse_check_depth(lx, module);
    parse_merge_hosts(lx, module);
    host_attach_wrappers(lx, module);
    module->str = lx->env_reads; /* part of the cache key (runtime/rt_module.c) */
    return module;
}

Node *parse_module(const Source *src, Arena *a, Diag *d) { return parse_file(src, a, d, false); }

Node *parse_python_module(const Source *src, Arena *a, Diag *d)
{
    return parse_file(src, a, d, true);
}
