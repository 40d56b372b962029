/* clash.c: a host program with functions of its own named like libtk's
 * internals (arena_alloc is one; sema_init could be). Each side must keep
 * its own: libtk's calls may not land here, and this program's calls may
 * not land in libtk. Before libtk hid its internals, the dynamic linker
 * bound libtk's own calls to arena_alloc to this one, with other arguments. */
#include <stdio.h>
#include <string.h>
#include <tk/tk.h>

static int host_allocs, host_inits;
static char pool[256];

void *arena_alloc(size_t size);
int sema_init(int value);

void *arena_alloc(size_t size)
{
    host_allocs++;
    return size <= sizeof pool ? pool : NULL;
}

int sema_init(int value)
{
    host_inits++;
    return value + 1;
}

#define TRY(call)                                                                                  \
    if ((call) != TK_OK)                                                                           \
    return fprintf(stderr, "clash: %s\n", tk_last_error()), 1

int main(void)
{
    if (arena_alloc(16) != pool || sema_init(41) != 42 || host_allocs != 1 || host_inits != 1) {
        fprintf(stderr, "clash: the host's own functions do not answer\n");
        return 1;
    }
    /* The compiler (arenas, specialisation) and the runtime, on the interpreter. */
    const char *src = "import triton.language as tl\n@triton.jit\n"
                      "def twice(x, N: tl.constexpr):\n"
                      "    i = tl.arange(0, N)\n    tl.store(x + i, tl.load(x + i) * 2)\n";
    tk_define n = {"N", "4"};
    tk_compile_options o = {.kernel = "twice",
                            .defines = &n,
                            .ndefines = 1,
                            .signature = "*fp32",
                            .opt_level = -1,
                            .emit = TK_EMIT_IR};
    char *ir = NULL;
    TRY(tk_compile("twice.tk", src, strlen(src), &o, &ir, NULL, NULL));
    int ir_ok = ir && strstr(ir, "twice") != NULL;
    tk_free_text(ir);

    float h[4] = {1, 2, 3, 4};
    void *d;
    tk_context *c;
    tk_module *m;
    tk_kernel *k;
    TRY(tk_context_create(&c, &(tk_context_options){.interpret = 1}));
    TRY(tk_alloc(c, sizeof h, &d));
    TRY(tk_copy_to(c, d, h, sizeof h));
    TRY(tk_module_load_string(c, "twice.tk", src, &m));
    TRY(tk_module_kernel(m, "twice", &k));
    tk_arg args[] = {tk_ptr(d, TK_F32), tk_const("N", 4)};
    TRY(tk_launch(k, (tk_grid){1, 1, 1}, args, 2, NULL));
    TRY(tk_copy_from(c, h, d, sizeof h));
    tk_module_destroy(m);
    tk_context_destroy(c);

    int ok = ir_ok && h[0] == 2 && h[3] == 8 && host_allocs == 1 && host_inits == 1 &&
        arena_alloc(8) == pool && sema_init(1) == 2;
    printf("clash: libtk %s, host arena_alloc calls %d, sema_init calls %d: %s\n",
           ok ? "works" : "FAILS", host_allocs, host_inits,
           ok ? "each side kept its own" : "mixed up");
    return ok ? 0 : 1;
}
