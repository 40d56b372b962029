/* codegen/tmap.c: tensor maps the kernel writes itself (IrTmap.device, sm_90a).
 * A tensor descriptor over a pointer the kernel computes (loaded from a table
 * of groups, say) has no map the launcher could build. Each program owns 128
 * bytes per device map of a scratch buffer the launcher passes after the
 * maps it builds; thread 0 writes the map there (IR_TMAP_MAKE) before the
 * loop whose copies read it: zeros, then every field with tensormap.replace,
 * then a release of the generic proxy's writes to the tensor-map proxy and
 * its own acquire of them, since thread 0 is also the thread that issues
 * the copies. Field values are PTX's: rank - 1, extents, row stride in
 * bytes, the box, the element type code of tensormap.replace (not the
 * driver's enum, which orders f64 and bf16 differently). Values no map can
 * hold (an extent below 1, a base or row stride not a multiple of 16
 * bytes, which Triton's descriptors require) make the map bad: a copy
 * through it then traps, as a copy at a negative origin does. */
#include "codegen/cg.h"

#include <stdio.h>
#include <string.h>

void cg_tmap_device_setup(Cg *cg)
{
    const IrFunc *f = cg->f;
    int ndev = ir_tmap_devices(f);
    if (!ndev || !cg->tmap)
        return;
    cg->tmap_bad = cg_alloc(cg, sizeof(LLVMValueRef) * (size_t)f->ntmaps);
    LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx), i8 = LLVMInt8TypeInContext(cg->ctx);
    LLVMValueRef scratch = LLVMGetParam(cg->fn, (unsigned)ir_tmap_param(f, f->ntmaps));
    LLVMSetValueName2(scratch, "tk_tmap_scratch", strlen("tk_tmap_scratch"));
    /* this program's linear index: x + nx * (y + ny * z) */
    LLVMValueRef x = LLVMBuildZExt(cg->b, cg_sreg(cg, "ctaid.x"), i64, "");
    LLVMValueRef y = LLVMBuildZExt(cg->b, cg_sreg(cg, "ctaid.y"), i64, "");
    LLVMValueRef z = LLVMBuildZExt(cg->b, cg_sreg(cg, "ctaid.z"), i64, "");
    LLVMValueRef nx = LLVMBuildZExt(cg->b, cg_sreg(cg, "nctaid.x"), i64, "");
    LLVMValueRef ny = LLVMBuildZExt(cg->b, cg_sreg(cg, "nctaid.y"), i64, "");
    LLVMValueRef pid = LLVMBuildAdd(
        cg->b, x,
        LLVMBuildMul(cg->b, nx, LLVMBuildAdd(cg->b, y, LLVMBuildMul(cg->b, ny, z, ""), ""), ""),
        "");
    LLVMValueRef first = LLVMBuildMul(cg->b, pid, cg_i64(cg, (int64_t)ndev * 128), "");
    int k = 0;
    for (int i = 0; i < f->ntmaps; i++) {
        if (!f->tmaps[i].device)
            continue;
        LLVMValueRef off = LLVMBuildAdd(cg->b, first, cg_i64(cg, (int64_t)k++ * 128), "");
        cg->tmap[i] = LLVMBuildGEP2(cg->b, i8, scratch, &off, 1, "tk_tmap");
        cg->tmap_bad[i] = LLVMBuildAlloca(cg->b, LLVMInt1TypeInContext(cg->ctx), "tmap.bad");
        LLVMBuildStore(cg->b, LLVMConstInt(LLVMInt1TypeInContext(cg->ctx), 1, 0), cg->tmap_bad[i]);
    }
}

void cg_tmap_check(Cg *cg, int map)
{
    if (!cg->tmap_bad || !cg->tmap_bad[map])
        return;
    LLVMValueRef bad = LLVMBuildLoad2(cg->b, LLVMInt1TypeInContext(cg->ctx), cg->tmap_bad[map], "");
    LLVMBasicBlockRef done = cg_begin_if(cg, bad, "tmap.bad");
    cg_intrinsic(cg, "llvm.trap", NULL, 0, NULL, 0);
    cg_end_if(cg, done);
}

/* tensormap.replace's element type codes */
static int elem_code(DType dt)
{
    switch (dt) {
    case DT_F16: return 6;
    case DT_BF16: return 10;
    case DT_F32: return 7;
    case DT_I16:
    case DT_U16: return 1;
    default: return 0; /* 8-bit elements, moved as bytes */
    }
}

static int swizzle_code(int bytes) { return bytes == 128 ? 3 : bytes == 64 ? 2 : 1; }

/* One tensormap.replace of a field with a register or constant value. */
static void replace(Cg *cg, LLVMValueRef map, const char *field, int ord, LLVMValueRef v)
{
    LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx);
    bool wide = LLVMGetIntTypeWidth(LLVMTypeOf(v)) == 64;
    char text[128];
    if (ord < 0)
        snprintf(text, sizeof text, "tensormap.replace.tile.%s.global.b1024.b%d [$0], $1;", field,
                 wide ? 64 : 32);
    else
        snprintf(text, sizeof text, "tensormap.replace.tile.%s.global.b1024.b%d [$0], %d, $1;",
                 field, wide ? 64 : 32, ord);
    LLVMValueRef args[2] = {map, v};
    LLVMTypeRef pt[2] = {i64, LLVMTypeOf(v)};
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), pt, 2, text,
           wide ? "l,l,~{memory}" : "l,r,~{memory}", args);
}

/* The same for a field whose value must be an immediate. */
static void replace_imm(Cg *cg, LLVMValueRef map, const char *field, int value)
{
    char text[128];
    snprintf(text, sizeof text, "tensormap.replace.tile.%s.global.b1024.b32 [$0], %d;", field,
             value);
    LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx);
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), &i64, 1, text, "l,~{memory}", &map);
}

/* Whether the values make no map: an extent below 1, a base or row stride
 * off 16 bytes, a stride at or past 2^40 bytes. */
static LLVMValueRef bad_values(Cg *cg, LLVMValueRef base, LLVMValueRef stride, LLVMValueRef e0,
                               LLVMValueRef e1)
{
    LLVMValueRef c15 = cg_i64(cg, 15), zero = cg_i64(cg, 0);
    LLVMValueRef bad = LLVMBuildICmp(cg->b, LLVMIntSLT, e0, cg_i32(cg, 1), "");
    bad = LLVMBuildOr(cg->b, bad, LLVMBuildICmp(cg->b, LLVMIntSLT, e1, cg_i32(cg, 1), ""), "");
    LLVMValueRef low = LLVMBuildAnd(cg->b, LLVMBuildOr(cg->b, base, stride, ""), c15, "");
    bad = LLVMBuildOr(cg->b, bad, LLVMBuildICmp(cg->b, LLVMIntNE, low, zero, ""), "");
    LLVMValueRef most = cg_i64(cg, (int64_t)1 << 40);
    LLVMValueRef out = LLVMBuildICmp(cg->b, LLVMIntUGE, stride, most, "");
    return LLVMBuildOr(cg->b, bad, out, "");
}

static void emit_make(Cg *cg, const IrOp *op)
{
    const IrTmap *m = &cg->f->tmaps[op->sub];
    LLVMTypeRef i64 = LLVMInt64TypeInContext(cg->ctx), i32 = LLVMInt32TypeInContext(cg->ctx);
    LLVMValueRef base = LLVMBuildPtrToInt(cg->b, cg_get(cg, op->operands[0]).el[0], i64, "");
    LLVMValueRef stride = LLVMBuildIntCast2(cg->b, cg_get(cg, op->operands[1]).el[0], i64, 1, "");
    stride = LLVMBuildMul(cg->b, stride, cg_i64(cg, cg_mem_bytes(m->dt)), "");
    LLVMValueRef e0 = LLVMBuildIntCast2(cg->b, cg_get(cg, op->operands[2]).el[0], i32, 1, "");
    LLVMValueRef e1 = LLVMBuildIntCast2(cg->b, cg_get(cg, op->operands[3]).el[0], i32, 1, "");
    LLVMValueRef t0 = LLVMBuildICmp(cg->b, LLVMIntEQ, cg->tid, cg_i32(cg, 0), "");
    LLVMBasicBlockRef done = cg_begin_if(cg, t0, "tmap.make");
    LLVMValueRef bad = bad_values(cg, base, stride, e0, e1);
    LLVMBuildStore(cg->b, bad, cg->tmap_bad[op->sub]);
    LLVMValueRef generic = LLVMBuildPtrToInt(cg->b, cg->tmap[op->sub], i64, "");
    LLVMValueRef args[1] = {generic};
    LLVMTypeRef at[1] = {i64};
    /* the .global forms take global addresses */
    LLVMValueRef map = cg_asm(cg, i64, at, 1, "cvta.to.global.u64 $0, $1;", "=l,l", args);
    args[0] = map;
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), at, 1,
           "{\n.reg .b32 z;\nmov.b32 z, 0;\n"
           "st.global.v4.b32 [$0], {z, z, z, z};\nst.global.v4.b32 [$0+16], {z, z, z, z};\n"
           "st.global.v4.b32 [$0+32], {z, z, z, z};\nst.global.v4.b32 [$0+48], {z, z, z, z};\n"
           "st.global.v4.b32 [$0+64], {z, z, z, z};\nst.global.v4.b32 [$0+80], {z, z, z, z};\n"
           "st.global.v4.b32 [$0+96], {z, z, z, z};\nst.global.v4.b32 [$0+112], {z, z, z, z};\n}",
           "l,~{memory}", args);
    /* e0, e1 below 1 are bad; the map then holds 1 so its fields stay valid */
    LLVMValueRef one = cg_i32(cg, 1);
    e0 = LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, e0, one, ""), one, e0, "");
    e1 = LLVMBuildSelect(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, e1, one, ""), one, e1, "");
    replace(cg, map, "global_address", -1, base);
    replace_imm(cg, map, "rank", 1); /* rank - 1 */
    replace(cg, map, "box_dim", 0, cg_i32(cg, m->box[0]));
    replace(cg, map, "box_dim", 1, cg_i32(cg, m->box[1]));
    replace(cg, map, "global_dim", 0, e0);
    replace(cg, map, "global_dim", 1, e1);
    replace(cg, map, "global_stride", 0, stride);
    replace(cg, map, "element_stride", 0, one);
    replace(cg, map, "element_stride", 1, one);
    replace_imm(cg, map, "elemtype", elem_code(m->dt));
    replace_imm(cg, map, "interleave_layout", 0);
    replace_imm(cg, map, "swizzle_mode", swizzle_code(m->swizzle));
    replace_imm(cg, map, "fill_mode", 0); /* zeros out of bounds */
    args[0] = generic;
    cg_asm(cg, LLVMVoidTypeInContext(cg->ctx), at, 1,
           "fence.proxy.tensormap::generic.release.gpu;\n"
           "fence.proxy.tensormap::generic.acquire.gpu [$0], 128;",
           "l,~{memory}", args);
    cg_end_if(cg, done);
}

bool cg_emit_tmap(Cg *cg, const IrOp *op)
{
    if (op->sub < 0 || op->sub >= cg->f->ntmaps || !cg->f->tmaps[op->sub].device || !cg->tmap_bad) {
        cg_internal(cg, op->span, "tmap_make of tensor map %d, no device map", op->sub);
        return true;
    }
    emit_make(cg, op);
    return true;
}
