/* driver.h: the interface of lib/driver/, the compiler driver: one
 * Compilation (source, arena, diagnostics, module), the specialisation
 * request built from tk_compile's options, and the stages strung
 * together down to PTX or a cubin. Above every compiler stage and cuda/;
 * aot/, the public API (api/) and the runtime call it, it calls none of them. */
#ifndef TK_DRIVER_H
#define TK_DRIVER_H

#include "codegen/codegen.h"
#include "cuda/cuda.h"
#include "front/front.h"
#include "passes/passes.h"
#include "sema/sema.h"

/* One compilation: source, arena, diagnostics. */
typedef struct Compilation {
    Source src;
    Arena arena;
    Diag diag;
    Node *module;
    const char *const *search_paths; /* for package imports; NULL-terminated, may be NULL */
    const char *arch;                /* the target ("sm_90a"): decides host device checks */
    const Source **imported;         /* the package files comp_parse read */
    int nimported;
} Compilation;

bool comp_init(Compilation *c, const char *name, const char *text, size_t len);
/* The specialisation request of one kernel from tk_compile's options, with
 * `signature` (NULL: types from annotations); false after reporting to
 * c->diag. */
struct tk_compile_options;
bool comp_request(Compilation *c, const struct tk_compile_options *o, const char *kernel,
                  const char *signature, SpecRequest *req);
void comp_free(Compilation *c);
bool comp_parse(Compilation *c);
/* What a launch asks of a parsed module, for the runtime (which reaches
 * sema through here): the names of its @jit functions, one kernel's
 * signature, and a constexpr value given as text ("1024", "tl.float16"). */
int comp_kernel_names(Compilation *c, const char ***names);
bool comp_kernel_sig(Compilation *c, const char *kernel, KernelSig *sig);
/* The def kernel name `name` names (an alias's def, sema_kernel_def), or NULL. */
const char *comp_kernel_def(Compilation *c, const char *name);
/* A def `name` of the module that is no kernel (sema_plain_def). */
bool comp_plain_def(Compilation *c, const char *name, int *line, const char **decorator);
bool comp_parse_const(const char *text, ConstValue *out, const char **why);
/* The build of one kernel reads the parsed module and never writes it; it
 * allocates in its own arena and reports to the Diag it is given (not
 * c->diag), so several builds of one module may run in parallel threads. */
/* Specialises one kernel into IR allocated in ir_arena, then verifies and
 * runs the IR passes. NULL after reporting errors to d. */
IrFunc *comp_specialize(const Compilation *c, Diag *d, const SpecRequest *req, Arena *ir_arena,
                        const PassOptions *po);
/* The IR passes only GPU code runs (software pipelining); what the
 * interpreter runs stops before them. */
bool comp_lower(Diag *d, IrFunc *f, const PassOptions *po);
/* Lowers (comp_lower) and turns the IR into LLVM IR text (llvm may be NULL)
 * and the compiled kernel: PTX text and its metadata (out, from cg_kernel_init). */
bool comp_codegen(Diag *d, IrFunc *f, const CgOptions *o, const PassOptions *po, StrBuf *llvm,
                  CgKernel *out);
/* The pass options tk_compile's print_ir_before/after ask for; the IR
 * goes into c's diagnostics text. */
struct tk_compile_options;
PassOptions comp_pass_options(Compilation *c, const struct tk_compile_options *o);
/* The checks of tk_compile's options, for the API function `fn`:
 * TK_ERR_INVALID naming the argument, or TK_OK. */
tk_status comp_check_options(const char *fn, const tk_compile_options *o);
/* Whether code generation writes line tables, from tk_compile_options'
 * line_info (1 on, -1 off, 0 the default: on unless TK_DISABLE_LINE_INFO
 * is set and not "0"); the runtime's JIT asks with 0. */
bool comp_line_info(int option);
/* Whether float mul and add may fuse into fma, from tk_compile_options'
 * fp_fusion (1 on, -1 off, 0 the default: on unless TK_DEFAULT_FP_FUSION is
 * "0", the knob Triton reads as TRITON_DEFAULT_FP_FUSION). */
bool comp_fp_fusion(int option);
/* Whether runtime asserts are kept (Triton's debug), from an option (1 on,
 * -1 off, 0 the default: TRITON_DEBUG or TK_DEBUG set and not "0"). */
bool comp_debug(int option);
/* The end of tk_compile and tk_compile_ir: the output `res` (when ok and
 * no error was reported) or none, the diagnostics, tk_last_error after a
 * failure; frees `res` and the compilation. */
/* The kernels tk_compile lowers: the one o->kernel names, or the entry
 * kernels of the module; 0 after reporting that there are none, or several
 * where the output holds one. */
int comp_choose_kernels(Compilation *c, const tk_compile_options *o, const char ***kernels);
/* Lowers each kernel to o->emit (IR, LLVM IR, PTX or a cubin), appended
 * to out; false after reporting to c->diag. */
bool comp_lower_kernels(Compilation *c, const tk_compile_options *o, const char **kernels, int n,
                        StrBuf *out);
/* tk_compile_ir's work (compile_ir.c): reads IR text, runs the named passes
 * and lowers the result to o->emit. */
bool comp_run_ir(Compilation *c, const tk_compile_options *o, const char *passes, StrBuf *out);
tk_status comp_finish(Compilation *c, bool ok, StrBuf *res, char **out, size_t *out_len,
                      char **diags);

#endif
