/* codegen/module.c: the code generator's driver: one LLVM module and kernel per
 * IrFunc, parameters, the value table and the op dispatch.
 * Assumes IR that passed ir_verify (sema's invariants of ir.h); guarantees
 * an unsupported construct is a diagnostic, never a crash, and that the
 * LLVM context is disposed on every path. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"

void cg_error(Cg *cg, Span at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(cg->d, DIAG_ERROR, at, fmt, ap);
    va_end(ap);
    cg->failed = true;
}

void cg_internal(Cg *cg, Span at, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_report(cg->d, DIAG_INTERNAL, at, "%s", msg); /* the kind names it */
    cg->failed = true;
}

/* When the arena cannot grow it still hands small requests a shared scratch
 * block, but large ones get NULL; callers fill every element of a new value
 * right away, so give them writable memory and stop after this op. */
struct CgSink {
    struct CgSink *next;
    LLVMValueRef el[];
};

static void *sink(Cg *cg, size_t bytes)
{
    struct CgSink *s = tk_xalloc(sizeof *s + bytes);
    if (!s)
        return NULL;
    memset(s->el, 0, bytes); /* zeroed like the arena's memory */
    s->next = cg->sinks;
    cg->sinks = s;
    return s->el;
}

static void free_sinks(Cg *cg)
{
    while (cg->sinks) {
        struct CgSink *next = cg->sinks->next;
        tk_xfree(cg->sinks);
        cg->sinks = next;
    }
}

void *cg_alloc(Cg *cg, size_t bytes)
{
    void *p = arena_alloc(cg->a, bytes);
    if (!p) { /* the arena is out of memory; a second failure here is not covered */
        cg->failed = true;
        p = sink(cg, bytes);
    }
    return p;
}

CgVal cg_val_new(Cg *cg, int n)
{
    CgVal v = {cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)(n > 0 ? n : 1)), n};
    return v;
}

CgVal cg_get(Cg *cg, const IrValue *v)
{
    if (!v || v->id < 0 || v->id >= cg->f->next_id || !cg->have[v->id]) {
        cg_internal(cg, cg->f->span, "value %%%d used before codegen defined it", v ? v->id : -1);
        CgVal z = cg_val_new(cg, v ? cg_layout(cg, v).per_thread : 1);
        LLVMTypeRef t = cg_type(cg, v ? v->type.dt : DT_I32);
        for (int i = 0; i < z.n; i++)
            z.el[i] = LLVMGetUndef(t);
        return z;
    }
    return cg->vals[v->id];
}

void cg_set(Cg *cg, const IrValue *v, CgVal x)
{
    if (v->id < 0 || v->id >= cg->f->next_id) {
        cg_internal(cg, cg->f->span, "value id %d out of range", v->id);
        return;
    }
    cg->vals[v->id] = x;
    cg->have[v->id] = true;
}

LLVMTypeRef cg_type(Cg *cg, DType dt)
{
    LLVMContextRef c = cg->ctx;
    switch (dt) {
    case DT_I1: return LLVMInt1TypeInContext(c);
    case DT_I8:
    case DT_U8: return LLVMInt8TypeInContext(c);
    case DT_F8E4:
    case DT_F8E5:
    case DT_F8E4B15: return LLVMInt8TypeInContext(c); /* the byte */
    case DT_I16:
    case DT_U16: return LLVMInt16TypeInContext(c);
    case DT_I32:
    case DT_U32: return LLVMInt32TypeInContext(c);
    case DT_I64:
    case DT_U64: return LLVMInt64TypeInContext(c);
    case DT_F16: return LLVMHalfTypeInContext(c);
    case DT_BF16: return LLVMBFloatTypeInContext(c);
    case DT_F32: return LLVMFloatTypeInContext(c);
    case DT_F64: return LLVMDoubleTypeInContext(c);
    case DT_PTR: return LLVMPointerTypeInContext(c, 1);
    default: return LLVMInt32TypeInContext(c);
    }
}

LLVMTypeRef cg_mem_type(Cg *cg, DType dt)
{
    return dt == DT_I1 ? LLVMInt8TypeInContext(cg->ctx) : cg_type(cg, dt);
}

int cg_mem_bytes(DType dt) { return dt == DT_I1 ? 1 : dtype_bits(dt) / 8; }

int cg_ilog2(int64_t v)
{
    int n = 0;
    while (((int64_t)1 << n) < v)
        n++;
    return n;
}

LLVMValueRef cg_i32(Cg *cg, int64_t v)
{
    return LLVMConstInt(LLVMInt32TypeInContext(cg->ctx), (unsigned long long)v, 1);
}

LLVMValueRef cg_i64(Cg *cg, int64_t v)
{
    return LLVMConstInt(LLVMInt64TypeInContext(cg->ctx), (unsigned long long)v, 1);
}

/* The compiler's own PTX and NVVM intrinsics return and never unwind; said
 * on the call, LLVM may hoist a loop-invariant division or remainder that
 * follows a barrier out of the loop (it moves a trapping instruction only
 * where every instruction before it in the loop returns). */
LLVMValueRef cg_returns(Cg *cg, LLVMValueRef call)
{
    static const char *names[] = {"nounwind", "willreturn"};
    for (int i = 0; i < 2; i++) {
        unsigned kind = LLVMGetEnumAttributeKindForName(names[i], strlen(names[i]));
        LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                                 LLVMCreateEnumAttribute(cg->ctx, kind, 0));
    }
    return call;
}

LLVMValueRef cg_intrinsic(Cg *cg, const char *name, LLVMTypeRef *ov, int nov, LLVMValueRef *args,
                          int nargs)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) {
        cg_internal(cg, cg->f->span, "unknown LLVM intrinsic %s", name);
        return LLVMGetUndef(LLVMInt32TypeInContext(cg->ctx));
    }
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cg->mod, id, ov, (size_t)nov);
    LLVMTypeRef ft = LLVMIntrinsicGetType(cg->ctx, id, ov, (size_t)nov);
    LLVMValueRef call = LLVMBuildCall2(cg->b, ft, fn, args, (unsigned)nargs, "");
    return strcmp(name, "llvm.trap") ? cg_returns(cg, call) : call;
}

LLVMValueRef cg_call_fn(Cg *cg, const char *name, LLVMTypeRef ret, LLVMTypeRef *pt, int np,
                        LLVMValueRef *args, int nargs, bool vararg)
{
    LLVMTypeRef ft = LLVMFunctionType(ret, pt, (unsigned)np, vararg);
    LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
    if (!fn)
        fn = LLVMAddFunction(cg->mod, name, ft);
    return LLVMBuildCall2(cg->b, ft, fn, args, (unsigned)nargs, "");
}

LLVMValueRef cg_sreg(Cg *cg, const char *name)
{
    char full[64];
    snprintf(full, sizeof full, "llvm.nvvm.read.ptx.sreg.%s", name);
    return cg_intrinsic(cg, full, NULL, 0, NULL, 0);
}

LLVMValueRef cg_cstring(Cg *cg, const char *s)
{
    char name[32];
    snprintf(name, sizeof name, "tk_str%d", cg->nstr++);
    LLVMValueRef init = LLVMConstStringInContext(cg->ctx, s, (unsigned)strlen(s), 0);
    LLVMValueRef g = LLVMAddGlobal(cg->mod, LLVMTypeOf(init), name);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    return g;
}

/* Inline PTX; `effects`: LLVM keeps it where it is and as often as it is
 * written (a barrier, a copy), else it may merge or drop it like an op. */
static LLVMValueRef asm_call(Cg *cg, LLVMTypeRef ret, LLVMTypeRef *pt, int np, const char *text,
                             const char *cons, LLVMValueRef *args, LLVMBool effects)
{
    LLVMTypeRef ft = LLVMFunctionType(ret, pt, (unsigned)np, 0);
    LLVMValueRef ia = LLVMGetInlineAsm(ft, text, strlen(text), cons, strlen(cons), effects, 0,
                                       LLVMInlineAsmDialectATT, 0);
    return cg_returns(cg, LLVMBuildCall2(cg->b, ft, ia, args, (unsigned)np, ""));
}

LLVMValueRef cg_asm(Cg *cg, LLVMTypeRef ret, LLVMTypeRef *pt, int np, const char *text,
                    const char *cons, LLVMValueRef *args)
{
    return asm_call(cg, ret, pt, np, text, cons, args, 1);
}

LLVMValueRef cg_asm_pure(Cg *cg, LLVMTypeRef ret, LLVMTypeRef *pt, int np, const char *text,
                         const char *cons, LLVMValueRef *args)
{
    return asm_call(cg, ret, pt, np, text, cons, args, 0);
}

LLVMValueRef cg_asm_void(Cg *cg, const char *text)
{
    return cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), NULL, 0, text, "", NULL);
}

LLVMBasicBlockRef cg_new_bb(Cg *cg, const char *name)
{
    return LLVMAppendBasicBlockInContext(cg->ctx, cg->fn, name);
}

LLVMBasicBlockRef cg_begin_if(Cg *cg, LLVMValueRef cond, const char *name)
{
    LLVMBasicBlockRef then = cg_new_bb(cg, name), done = cg_new_bb(cg, "done");
    LLVMBuildCondBr(cg->b, cond, then, done);
    LLVMPositionBuilderAtEnd(cg->b, then);
    return done;
}

void cg_end_if(Cg *cg, LLVMBasicBlockRef done)
{
    LLVMBuildBr(cg->b, done);
    LLVMPositionBuilderAtEnd(cg->b, done);
}

/* ---- ops with no better home ---------------------------------------------------- */

static bool emit_misc(Cg *cg, const IrOp *op)
{
    switch (op->kind) {
    case IR_PROGRAM_ID:
    case IR_NUM_PROGRAMS: {
        static const char *const ax[] = {"x", "y", "z"};
        char nm[16];
        int a = op->axis >= 0 && op->axis < 3 ? op->axis : 0;
        snprintf(nm, sizeof nm, "%s.%s", op->kind == IR_PROGRAM_ID ? "ctaid" : "nctaid", ax[a]);
        CgVal r = cg_val_new(cg, 1);
        r.el[0] = cg_sreg(cg, nm);
        cg_set(cg, op->results[0], r);
        return true;
    }
    case IR_HINT: /* hints feed the analyses; the value is unchanged */
        cg_set(cg, op->results[0], cg_get(cg, op->operands[0]));
        return true;
    case IR_ASSUME: return true;
    case IR_BARRIER: cg_barrier(cg); return true;
    default: return false;
    }
}

static void emit_op(Cg *cg, const IrOp *op)
{
    if (emit_misc(cg, op) || cg_emit_shape(cg, op) || cg_emit_elementwise(cg, op) ||
        cg_emit_memory(cg, op) || cg_emit_reduce(cg, op) || cg_emit_scan(cg, op) ||
        cg_emit_dot(cg, op) || cg_emit_flow(cg, op) || cg_emit_debug(cg, op) ||
        cg_emit_rand(cg, op) || cg_emit_async(cg, op) || cg_emit_tma(cg, op) ||
        cg_emit_producer(cg, op) || cg_emit_asm(cg, op) || cg_emit_gather(cg, op))
        return;
    cg_error(cg, op->span, "code generation does not support '%s' yet", ir_kind_name(op->kind));
}

const IrOp *cg_emit_block(Cg *cg, const IrBlock *blk)
{
    LLVMMetadataRef loc = cg_lines_get(cg); /* the op owning the region goes on at its line */
    const IrOp *end = NULL;
    for (const IrOp *op = blk->first; op && !cg->failed && !cg->a->oom; op = op->next) {
        if (op->kind == IR_YIELD || op->kind == IR_CONDITION) {
            end = op;
            break;
        }
        cg_lines_at(cg, op->span);
        if (cg->rings_owed)
            cg_ring_use(cg, op);
        if (cg->bar_owed == blk &&
            (op->nregions || op->kind == IR_ASYNC_COPY || op->kind == IR_TMA_COPY))
            cg_barrier(cg);
        if (cg->slot_owed == blk && !cg_passes_slot_wait(cg, op))
            cg_barrier(cg);
        if (cg_cluster_first(cg, op))
            cg_cluster_bounds(cg);
        emit_op(cg, op);
    }
    if (cg->bar_owed == blk || cg->slot_owed == blk)
        cg_barrier(cg);
    cg_lines_set(cg, loc);
    return end;
}

/* ---- the kernel ----------------------------------------------------------------- */

static LLVMTypeRef param_type(Cg *cg, const IrParam *p)
{
    /* i1 arguments travel as one byte, like C's bool */
    return p->type.dt == DT_I1 ? LLVMInt8TypeInContext(cg->ctx) : cg_type(cg, p->type.dt);
}

static void add_annotation(Cg *cg, const char *key, int value)
{
    LLVMValueRef md[3] = {cg->fn, LLVMMDStringInContext(cg->ctx, key, (unsigned)strlen(key)),
                          cg_i32(cg, value)};
    LLVMAddNamedMetadataOperand(cg->mod, "nvvm.annotations", LLVMMDNodeInContext(cg->ctx, md, 3));
}

static void make_kernel(Cg *cg)
{
    const IrFunc *f = cg->f;
    /* the launcher's tensor maps come last, then the device maps' scratch */
    int n = ir_tmap_param(f, f->ntmaps) + (ir_tmap_devices(f) > 0);
    LLVMTypeRef *pt = cg_alloc(cg, sizeof(LLVMTypeRef) * (size_t)(n + 1));
    for (int i = 0; i < f->nparams; i++)
        pt[i] = param_type(cg, &f->params[i]);
    for (int i = f->nparams; i < n; i++)
        pt[i] = LLVMPointerTypeInContext(cg->ctx, 0);
    LLVMTypeRef ft = LLVMFunctionType(LLVMVoidTypeInContext(cg->ctx), pt, (unsigned)n, 0);
    cg->fn = LLVMAddFunction(cg->mod, f->name, ft);
    LLVMSetFunctionCallConv(cg->fn, LLVMPTXKernelCallConv);
    cg_lines_begin(cg);
    add_annotation(cg, "kernel", 1);
    /* a producer warpgroup runs beside the T threads the layouts count; the
     * launcher reads the total from the kernel's metadata (rt_jit.c) */
    add_annotation(cg, "maxntidx", cg->T + 32 * f->producer_warps);
    /* a kernel with a producer gets maxnreg once its shared memory is
     * known (cg_compile) */
    if (!f->producer_warps && cg_one_program_enough(f))
        add_annotation(cg, "minctasm", 1);
    cg_tma_params(cg, n);
    unsigned align_kind = LLVMGetEnumAttributeKindForName("align", 5);
    for (int i = 0; i < f->nparams; i++) {
        LLVMValueRef p = LLVMGetParam(cg->fn, (unsigned)i);
        LLVMSetValueName2(p, f->params[i].name, strlen(f->params[i].name));
        if (f->params[i].type.dt == DT_PTR && f->params[i].divisibility >= 16)
            LLVMAddAttributeAtIndex(cg->fn, (unsigned)i + 1,
                                    LLVMCreateEnumAttribute(cg->ctx, align_kind, 16));
    }
    LLVMPositionBuilderAtEnd(cg->b, cg_new_bb(cg, "entry"));
    cg->tid = cg_sreg(cg, "tid.x");
    LLVMTypeRef i8 = LLVMInt8TypeInContext(cg->ctx);
    cg->smem = LLVMAddGlobalInAddressSpace(cg->mod, LLVMArrayType(i8, 1), "tk_smem_tmp", 3);
    for (int i = 0; i < f->nparams && i < f->body->nargs; i++) {
        CgVal v = cg_val_new(cg, 1);
        v.el[0] = LLVMGetParam(cg->fn, (unsigned)i);
        if (f->params[i].type.dt == DT_I1)
            v.el[0] = LLVMBuildICmp(cg->b, LLVMIntNE, v.el[0], LLVMConstInt(i8, 0, 0), "");
        cg_set(cg, f->body->args[i], v);
    }
    cg_tma_setup(cg);
}

/* Above this, shared memory is dynamic: sized at launch (CgKernel's
 * dynamic_shared tells the launcher how much). */
#define CG_STATIC_SMEM_MAX (48 * 1024)

/* wgmma's swizzled descriptors need tiles on 1024-byte boundaries. */
static unsigned smem_align(const Cg *cg)
{
    return cg->o->arch && strcmp(cg->o->arch, "sm_90a") == 0 ? 1024 : 16;
}

void cg_kernel_init(CgKernel *k)
{
    memset(k, 0, sizeof *k);
    sb_init(&k->ptx);
}

void cg_kernel_free(CgKernel *k) { sb_free(&k->ptx); }

void cg_kernel_describe(const IrFunc *f, CgKernel *k)
{
    k->name = f->name;
    k->num_warps = f->num_warps;
    k->threads = (f->num_warps + f->producer_warps) * 32;
    k->dynamic_shared = 0;
    k->params = f->params;
    k->nparams = f->nparams;
    k->tmaps = f->tmaps;
    k->ntmaps = f->ntmaps;
    k->cluster = 1;
}

/* Appends one entry of the shared-memory plan, when it fits. */
static void plan_add(char *s, const char *text)
{
    size_t n = strlen(s), m = strlen(text);
    if (n + m + 3 < CG_SMEM_PLAN_LEN)
        snprintf(s + n, CG_SMEM_PLAN_LEN - n, "%s%s", n ? "; " : "", text);
}

/* What takes the shared memory, largest first: each pipeline ring (the
 * line of its load; the rings of loops that run one after another share
 * their place), the TMA rings' barriers, and the scratch of layout
 * conversions and reductions (it reuses the rings once they are dead, so
 * it counts only past them). */
static void smem_plan(const Cg *cg, char *out)
{
    out[0] = 0;
    int64_t taken[64] = {0};
    int n = cg->nbufs < 64 ? cg->nbufs : 64;
    int64_t scratch = cg->smem_bytes - cg->tail_bytes - cg->rings_end;
    for (int round = 0; round <= n; round++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!taken[i] &&
                (best < 0 ||
                 cg->buf_slot[i] * cg->buf_nslots[i] > cg->buf_slot[best] * cg->buf_nslots[best]))
                best = i;
        char text[160];
        if (scratch > 0 && (best < 0 || scratch >= cg->buf_slot[best] * cg->buf_nslots[best])) {
            snprintf(text, sizeof text, "layout and reduction scratch %lld", (long long)scratch);
            plan_add(out, text);
            scratch = 0;
        }
        if (best < 0)
            break;
        taken[best] = 1;
        snprintf(text, sizeof text, "ring of the load at line %d: %d x %lld%s", cg->buf_line[best],
                 cg->buf_nslots[best], (long long)cg->buf_slot[best],
                 cg->buf_seg[best] >= 0 ? " (its place reused by other loops)" : "");
        plan_add(out, text);
    }
    if (cg->bar_bytes > 0) {
        char text[48];
        snprintf(text, sizeof text, "ring barriers %lld", (long long)cg->bar_bytes);
        plan_add(out, text);
    }
}

/* The metadata of the compiled kernel: the IR's, and the shared memory
 * the code needs. */
static void kernel_meta(const Cg *cg, CgKernel *k)
{
    cg_kernel_describe(cg->f, k);
    k->dynamic_shared = cg->smem_bytes > CG_STATIC_SMEM_MAX ? (int)cg->smem_bytes : 0;
    smem_plan(cg, k->smem_plan);
}

/* The tail rings (cg->buf_tail) go past the scratch, whose end is known
 * now: each read of tail_base becomes that offset. */
static void place_tail(Cg *cg)
{
    if (cg->tail_bytes <= 0)
        return;
    int64_t base = (cg->smem_bytes + 15) / 16 * 16;
    cg->smem_bytes = base + cg->tail_bytes;
    if (!cg->tail_base)
        return;
    LLVMValueRef c = cg_i32(cg, base);
    for (LLVMUseRef u = LLVMGetFirstUse(cg->tail_base); u; u = LLVMGetFirstUse(cg->tail_base)) {
        LLVMValueRef load = LLVMGetUser(u);
        LLVMReplaceAllUsesWith(load, c);
        LLVMInstructionEraseFromParent(load);
    }
    LLVMDeleteGlobal(cg->tail_base);
    cg->tail_base = NULL;
}

/* The shared array gets its final size once every op has said what it
 * needs; the PTX then says how much it is and what takes it, in a comment
 * at its top (for the reader, and for tests: the runtime's refusal of a
 * kernel too big for the device lists the same). */
static void finish_smem(Cg *cg)
{
    place_tail(cg);
    if (cg->smem_bytes > 0) {
        char plan[CG_SMEM_PLAN_LEN], text[CG_SMEM_PLAN_LEN + 96];
        smem_plan(cg, plan);
        int n = snprintf(text, sizeof text, "// tk: %lld bytes of %s shared memory: %s",
                         (long long)cg->smem_bytes,
                         cg->smem_bytes > CG_STATIC_SMEM_MAX ? "dynamic" : "static", plan);
        LLVMAppendModuleInlineAsm(cg->mod, text,
                                  (size_t)(n < (int)sizeof text ? n : (int)sizeof text - 1));
    }
    LLVMValueRef old = cg->smem;
    if (cg->smem_bytes > CG_STATIC_SMEM_MAX) {
        LLVMTypeRef at = LLVMArrayType(LLVMInt8TypeInContext(cg->ctx), 0);
        LLVMValueRef g = LLVMAddGlobalInAddressSpace(cg->mod, at, "tk_smem", 3);
        LLVMSetLinkage(g, LLVMExternalLinkage);
        LLVMSetAlignment(g, smem_align(cg));
        LLVMReplaceAllUsesWith(old, g);
    } else if (cg->smem_bytes > 0) {
        LLVMTypeRef at = LLVMArrayType(LLVMInt8TypeInContext(cg->ctx), (unsigned)cg->smem_bytes);
        LLVMValueRef g = LLVMAddGlobalInAddressSpace(cg->mod, at, "tk_smem", 3);
        LLVMSetInitializer(g, LLVMGetUndef(at));
        LLVMSetLinkage(g, LLVMInternalLinkage);
        LLVMSetAlignment(g, smem_align(cg));
        LLVMReplaceAllUsesWith(old, g);
    }
    LLVMDeleteGlobal(old);
}

static int arch_number(const char *arch)
{
    int n = ir_arch_sm(arch);
    return n ? n : 80;
}

bool cg_compile(const IrFunc *f, const CgOptions *o, Diag *d, StrBuf *llvm_out, CgKernel *out)
{
    CgOptions opts = *o;
    if (!opts.arch)
        opts.arch = TK_DEFAULT_ARCH;
    int warps = f->num_warps; /* checked when the kernel was asked for (ir_launch_settings) */
    /* tensor maps the kernel writes (tensormap.replace) need 8.3 as well */
    bool ptx84 =
        cg_fp8_used(f) || cg_vector_atomics(f, arch_number(opts.arch)) || ir_tmap_devices(f) > 0;
    LLVMTargetMachineRef tm = nvptx_machine(opts.arch, opts.opt_level, ptx84, d);
    if (!tm)
        return false;
    Cg cg = {.f = f,
             .o = &opts,
             .d = d,
             .a = f->arena,
             .T = warps * 32,
             .sm = arch_number(opts.arch),
             .wait_owed = -1};
    cg.vals = cg_alloc(&cg, sizeof(CgVal) * (size_t)(f->next_id + 1));
    cg.have = cg_alloc(&cg, sizeof(bool) * (size_t)(f->next_id + 1));
    cg.axis = axis_analyze(f, cg.a);
    cg_index_layouts(&cg);
    char cluster_why[CG_NOTE_LEN];
    cg_cluster_plan(&cg, cluster_why, sizeof cluster_why);
    cg_plan_buffers(&cg);
    cg.ctx = LLVMContextCreate();
    CgLlvmDiag llvm_diag = {d, 0};
    LLVMContextSetDiagnosticHandler(cg.ctx, nvptx_diag_handler, &llvm_diag);
    cg.mod = LLVMModuleCreateWithNameInContext(f->name, cg.ctx);
    cg.b = LLVMCreateBuilderInContext(cg.ctx);
    LLVMSetTarget(cg.mod, "nvptx64-nvidia-cuda");
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    char *dl = LLVMCopyStringRepOfTargetData(td);
    LLVMSetDataLayout(cg.mod, dl);
    LLVMDisposeMessage(dl);
    LLVMDisposeTargetData(td);

    make_kernel(&cg);
    if (cg_fp8_check(&cg))
        cg_emit_block(&cg, f->body);
    if (!cg.failed && !cg.f->arena->oom) {
        cg_cluster_exit(&cg);
        LLVMBuildRetVoid(cg.b);
        finish_smem(&cg);
        if (f->producer_warps) /* the registers setmaxnreg moves between the groups */
            add_annotation(&cg, "maxnreg", cg_ws_regs(cg.T, cg_ws_programs(&cg)).entry);
    }
    cg_lines_finish(&cg); /* the debug info is complete before LLVM checks the module */
    bool ok = !cg.failed && !cg.f->arena->oom;
    if (cg.f->arena->oom)
        diag_plain(d, DIAG_ERROR, "out of memory during code generation");
    bool fatal = false;
    if (ok)
        ok = nvptx_finish(cg.mod, tm, &opts, cg.uses_libdevice, f->name, d, llvm_out, &out->ptx,
                          &out->times, &fatal);
    ok = ok && llvm_diag.errors == 0;
    if (ok && cg.cl) /* LLVM 19 writes no cluster directives */
        ok = ptx_cluster_dims(&out->ptx, 2);
    if (ok) {
        kernel_meta(&cg, out);
        out->cluster = cg.cl ? 2 : 1;
        snprintf(out->cluster_note, sizeof out->cluster_note, "%s", cluster_why);
    }
    free_sinks(&cg);
    if (fatal) /* LLVM's state after a fatal error is unknown: leak it */
        return false;
    LLVMDisposeBuilder(cg.b);
    LLVMDisposeModule(cg.mod);
    LLVMContextDispose(cg.ctx);
    LLVMDisposeTargetMachine(tm);
    return ok;
}
