#include <stdio.h>
#include <tk/tk.h>
#define TRY(call)                                                                                  \
    if ((call) != TK_OK)                                                                           \
    return fprintf(stderr, "tk: %s\n", tk_last_error()), 1
int main(void)
{ /* doubles four floats on the GPU, or on the CPU with TK_INTERPRET=1 */
    const char *src = "import triton.language as tl\n@triton.jit\ndef twice(x, N: tl.constexpr):\n"
                      "    i = tl.arange(0, N)\n    tl.store(x + i, tl.load(x + i) * 2)\n";
    float h[4] = {1, 2, 3, 4};
    void *d;
    tk_context *c;
    tk_module *m;
    tk_kernel *k;
    TRY(tk_context_create(&c, &(tk_context_options){0}));
    TRY(tk_alloc(c, sizeof h, &d));
    TRY(tk_copy_to(c, d, h, sizeof h));
    TRY(tk_module_load_string(c, "twice.tk", src, &m));
    tk_arg args[] = {tk_ptr(d, TK_F32), tk_const("N", 4)};
    TRY(tk_module_kernel(m, "twice", &k));
    TRY(tk_launch(k, (tk_grid){1, 1, 1}, args, 2, NULL));
    TRY(tk_copy_from(c, h, d, sizeof h));
    printf("tk %s: %g %g %g %g\n", tk_version(), h[0], h[1], h[2], h[3]);
    tk_module_destroy(m);
    tk_context_destroy(c);
    return h[3] != 8;
}
