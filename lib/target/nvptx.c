/* target/nvptx.c: the NVPTX end of code generation: target machine per arch,
 * libdevice linking, LLVM's optimisation pipeline and PTX emission.
 * Assumes a verified-or-not module from lib/codegen; guarantees that every
 * LLVM failure becomes a diagnostic (never a crash) and the module is left
 * for the caller to dispose. */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "target/target.h"

#define TK_NVPTX_TRIPLE "nvptx64-nvidia-cuda"

static pthread_once_t nvptx_once = PTHREAD_ONCE_INIT;

/* LLVM reports some failures (a backend that cannot select an instruction)
 * as fatal errors and then exits the process. While this thread compiles,
 * the handler jumps back to nvptx_finish instead, which reports an
 * internal error; the context involved is then leaked, never reused. */
static _Thread_local jmp_buf *fatal_jump;
static _Thread_local char fatal_reason[512];

static void on_fatal(const char *reason)
{
    if (!fatal_jump)
        return; /* not ours: LLVM exits as it would have */
    snprintf(fatal_reason, sizeof fatal_reason, "%s", reason ? reason : "?");
    longjmp(*fatal_jump, 1);
}

void nvptx_diag_handler(LLVMDiagnosticInfoRef di, void *ctx)
{
    CgLlvmDiag *ld = ctx;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError)
        return;
    char *msg = LLVMGetDiagInfoDescription(di);
    diag_plain(ld->d, DIAG_INTERNAL, "internal error: LLVM: %s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    ld->errors++;
}

/* Whether the NVPTX target machines LLVM makes now use 32-bit pointers
 * for shared memory. */
static bool short_shared_pointers(void)
{
    LLVMTargetRef target;
    char *err = NULL;
    if (LLVMGetTargetFromTriple(TK_NVPTX_TRIPLE, &target, &err)) {
        LLVMDisposeMessage(err);
        return true; /* nvptx_machine says why */
    }
    LLVMTargetMachineRef tm =
        LLVMCreateTargetMachine(target, TK_NVPTX_TRIPLE, "sm_80", "", LLVMCodeGenLevelDefault,
                                LLVMRelocDefault, LLVMCodeModelDefault);
    if (!tm)
        return true;
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    char *dl = LLVMCopyStringRepOfTargetData(td);
    bool yes = dl && strstr(dl, "p3:32") != NULL;
    LLVMDisposeMessage(dl);
    LLVMDisposeTargetData(td);
    LLVMDisposeTargetMachine(tm);
    return yes;
}

static void nvptx_init(void)
{
    LLVMInstallFatalErrorHandler(on_fatal);
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    /* Shared memory is addressed with 32 bits, as Triton does: a ring
     * slot's or a scratch element's address is one add, with constant
     * offsets folded into the instruction, not a 64-bit add pair. The
     * option is LLVM's (it sizes the target machine's pointers); it is
     * given once, and not where it already holds.
     * Float add, sub and mul are printed without a rounding suffix, as
     * Triton's fp fusion has them, so ptxas may fuse a multiply into the
     * add it feeds; the C API cannot set the target machine's fusion
     * option, and the backend reads this one first. A compile with fusion
     * off gets explicitly rounded ops from codegen instead. */
    const char *argv[3] = {"tk", "-nvptx-fma-level=1", "-nvptx-short-ptr"};
    LLVMParseCommandLineOptions(short_shared_pointers() ? 2 : 3, argv, NULL);
}

/* PTX ISA versions LLVM 19 knows that ptxas of CUDA 12/13 accepts for each arch. */
static const char *nvptx_features(const char *arch)
{
    if (strncmp(arch, "sm_90", 5) == 0)
        return "+ptx80";
    return "+ptx78";
}

static bool nvptx_arch_ok(const char *arch)
{
    static const char *const known[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};
    for (int i = 0; i < TK_ARRAY_LEN(known); i++)
        if (strcmp(arch, known[i]) == 0)
            return true;
    return false;
}

LLVMTargetMachineRef nvptx_machine(const char *arch, int opt_level, bool ptx84, Diag *d)
{
    pthread_once(&nvptx_once, nvptx_init);
    if (!nvptx_arch_ok(arch)) {
        diag_plain(d, DIAG_ERROR,
                   "unsupported target '%s' (expected sm_80, sm_86, sm_89, "
                   "sm_90 or sm_90a)",
                   arch);
        return NULL;
    }
    LLVMTargetRef target;
    char *err = NULL;
    if (LLVMGetTargetFromTriple(TK_NVPTX_TRIPLE, &target, &err)) {
        diag_plain(d, DIAG_INTERNAL, "internal error: no NVPTX target in LLVM: %s",
                   err ? err : "?");
        LLVMDisposeMessage(err);
        return NULL;
    }
    LLVMCodeGenOptLevel lvl = opt_level <= 0 ? LLVMCodeGenLevelNone
        : opt_level == 1                     ? LLVMCodeGenLevelLess
        : opt_level == 2                     ? LLVMCodeGenLevelDefault
                                             : LLVMCodeGenLevelAggressive;
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, TK_NVPTX_TRIPLE, arch,
                                                      ptx84 ? "+ptx84" : nvptx_features(arch), lvl,
                                                      LLVMRelocDefault, LLVMCodeModelDefault);
    if (!tm)
        diag_plain(d, DIAG_INTERNAL,
                   "internal error: cannot create the NVPTX target "
                   "machine for %s",
                   arch);
    return tm;
}

/* Where libdevice is: the option, the path CMake found, then $CUDA_HOME. */
static const char *libdevice_path(const CgOptions *o, char *buf, size_t cap)
{
    if (o->libdevice)
        return o->libdevice;
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        snprintf(buf, cap, "%s/nvvm/libdevice/libdevice.10.bc", home);
        if (access(buf, R_OK) == 0)
            return buf;
    }
#ifdef TK_LIBDEVICE_DEFAULT
    if (access(TK_LIBDEVICE_DEFAULT, R_OK) == 0)
        return TK_LIBDEVICE_DEFAULT;
#endif
    return home && *home ? buf : NULL;
}

/* Marks libdevice's external functions link-once, so that linking copies
 * only the ones the kernel calls, and those they call: with the module read
 * lazily, the bodies of the hundreds of others are never read. */
static void link_only_needed(LLVMModuleRef ld)
{
    for (LLVMValueRef f = LLVMGetFirstFunction(ld); f; f = LLVMGetNextFunction(f))
        if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage)
            LLVMSetLinkage(f, LLVMLinkOnceODRLinkage);
    for (LLVMValueRef g = LLVMGetFirstGlobal(ld); g; g = LLVMGetNextGlobal(g))
        if (!LLVMIsDeclaration(g) && LLVMGetLinkage(g) == LLVMExternalLinkage)
            LLVMSetLinkage(g, LLVMLinkOnceODRLinkage);
}

static bool link_libdevice(LLVMModuleRef mod, const CgOptions *o, Diag *d)
{
    char buf[4096];
    const char *path = libdevice_path(o, buf, sizeof buf);
    const char *home = getenv("CUDA_HOME");
    if (!path) {
        diag_plain(d, DIAG_ERROR,
                   "libdevice not found: this kernel needs "
                   "libdevice.10.bc (looked in CUDA_HOME=%s and at the build's default "
                   "path); set CUDA_HOME to the CUDA toolkit",
                   home ? home : "(unset)");
        return false;
    }
    LLVMMemoryBufferRef mb;
    char *msg = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(path, &mb, &msg)) {
        diag_plain(d, DIAG_ERROR, "cannot read libdevice '%s' (CUDA_HOME=%s): %s", path,
                   home ? home : "(unset)", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return false;
    }
    LLVMModuleRef ld = NULL;
    /* read lazily: the module owns the buffer from here on success */
    if (LLVMGetBitcodeModuleInContext2(LLVMGetModuleContext(mod), mb, &ld) || !ld) {
        LLVMDisposeMemoryBuffer(mb);
        diag_plain(d, DIAG_ERROR, "libdevice '%s' is not valid LLVM bitcode", path);
        return false;
    }
    link_only_needed(ld);
    LLVMSetTarget(ld, LLVMGetTarget(mod));
    LLVMSetDataLayout(ld, LLVMGetDataLayoutStr(mod));
    if (LLVMLinkModules2(mod, ld)) {
        diag_plain(d, DIAG_INTERNAL, "internal error: linking libdevice '%s' failed", path);
        return false;
    }
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
        size_t len;
        const char *name = LLVMGetValueName2(f, &len);
        if (LLVMIsDeclaration(f) && strncmp(name, "__nv_", 5) == 0 && LLVMGetFirstUse(f)) {
            diag_plain(d, DIAG_ERROR, "'%s' is not a libdevice function (libdevice '%s')", name,
                       path);
            return false;
        }
    }
    LLVMContextRef ctx = LLVMGetModuleContext(mod);
    /* libdevice's fp32 code with subnormals flushed, as Triton links it:
     * rsqrt, sin or log of a subnormal give what Triton's give */
    LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16,
                      LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx), 1, 0)));
    return true;
}

/* Everything but the kernel becomes internal so the optimiser drops unused
 * libdevice code and inlines the rest. */
static void internalize(LLVMModuleRef mod, const char *kernel)
{
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        size_t len;
        const char *name = LLVMGetValueName2(fn, &len);
        if (LLVMIsDeclaration(fn) || strcmp(name, kernel) == 0)
            continue;
        LLVMSetLinkage(fn, LLVMInternalLinkage);
    }
    for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g))
        if (!LLVMIsDeclaration(g))
            LLVMSetLinkage(g, LLVMInternalLinkage);
}

static bool verify(LLVMModuleRef mod, Diag *d, const char *when)
{
    char *msg = NULL;
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
        diag_plain(d, DIAG_INTERNAL, "internal error: invalid LLVM module %s: %s", when,
                   msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return false;
    }
    LLVMDisposeMessage(msg);
    return true;
}

static bool run_passes(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level, Diag *d)
{
    char pipeline[32];
    snprintf(pipeline, sizeof pipeline, "default<O%d>",
             opt_level < 0       ? 0
                 : opt_level > 3 ? 3
                                 : opt_level);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(mod, pipeline, tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        diag_plain(d, DIAG_INTERNAL, "internal error: LLVM pass pipeline failed: %s", msg);
        LLVMDisposeErrorMessage(msg);
        return false;
    }
    return true;
}

static bool out_of_memory(Diag *d, const char *what)
{
    diag_plain(d, DIAG_ERROR, "out of memory while writing the %s text", what);
    return false;
}

static bool finish(LLVMModuleRef mod, LLVMTargetMachineRef tm, const CgOptions *o,
                   bool need_libdevice, const char *kernel, Diag *d, StrBuf *llvm_out,
                   StrBuf *ptx_out, CgTimes *ct);

bool nvptx_finish(LLVMModuleRef mod, LLVMTargetMachineRef tm, const CgOptions *o,
                  bool need_libdevice, const char *kernel, Diag *d, StrBuf *llvm_out,
                  StrBuf *ptx_out, CgTimes *times, bool *fatal)
{
    jmp_buf here;
    *fatal = false;
    if (setjmp(here)) {
        fatal_jump = NULL;
        *fatal = true;
        diag_plain(d, DIAG_INTERNAL, "internal error: LLVM failed on kernel '%s': %s", kernel,
                   fatal_reason);
        return false;
    }
    fatal_jump = &here;
    bool ok = finish(mod, tm, o, need_libdevice, kernel, d, llvm_out, ptx_out, times);
    fatal_jump = NULL;
    return ok;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Adds the time since *t to *into and restarts the clock. */
static void lap(double *into, double *t)
{
    double now = now_ms();
    *into += now - *t;
    *t = now;
}

static bool finish(LLVMModuleRef mod, LLVMTargetMachineRef tm, const CgOptions *o,
                   bool need_libdevice, const char *kernel, Diag *d, StrBuf *llvm_out,
                   StrBuf *ptx_out, CgTimes *ct)
{
    *ct = (CgTimes){0, 0, 0};
    double t = now_ms();
    if (!verify(mod, d, "from code generation"))
        return false;
    lap(&ct->opt_ms, &t);
    if (need_libdevice) {
        if (!link_libdevice(mod, o, d))
            return false;
        lap(&ct->link_ms, &t);
    }
    internalize(mod, kernel);
    bool ok = run_passes(mod, tm, o->opt_level, d) && verify(mod, d, "after optimisation");
    LLVMValueRef fn = ok && o->opt_level > 0 ? LLVMGetNamedFunction(mod, kernel) : NULL;
    if (fn &&
        (nvptx_select_branches(mod, fn) < 0 || nvptx_copysign_bits(mod, fn) < 0 ||
         nvptx_sink_unpacks(mod, fn) < 0))
        return out_of_memory(d, "LLVM IR");
    ok = ok && (!fn || verify(mod, d, "after turning selects into branches"));
    lap(&ct->opt_ms, &t);
    if (!ok)
        return false;
    if (llvm_out) {
        char *text = LLVMPrintModuleToString(mod);
        sb_puts(llvm_out, text);
        LLVMDisposeMessage(text);
        if (llvm_out->oom) /* a truncated text must not pass for the module */
            return out_of_memory(d, "LLVM IR");
        t = now_ms(); /* the text is no step of the build */
    }
    if (!ptx_out)
        return true;
    LLVMMemoryBufferRef buf = NULL;
    char *msg = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg, &buf)) {
        diag_plain(d, DIAG_INTERNAL, "internal error: PTX emission failed: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return false;
    }
    ptx_rewrite(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), ptx_out);
    LLVMDisposeMemoryBuffer(buf);
    lap(&ct->emit_ms, &t);
    return ptx_out->oom ? out_of_memory(d, "PTX") : true;
}
