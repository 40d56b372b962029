/* rt_tma.c: the tensor maps of a TMA kernel (IrTmap, kept in the variant's
 * metadata), built at launch from the arguments with the driver's
 * cuTensorMapEncodeTiled and passed after the parameters. Each variant
 * keeps the maps of its last few argument sets: a launch with the same
 * pointers, extents and strides as a recent one copies 128 bytes per map
 * under the variant's lock. Arguments that make no valid map (a
 * misaligned base, a non-positive extent) are not an error: the caller
 * launches the kernel compiled without TMA instead. */
#include <string.h>

#include "rt.h"

bool (*rt_tma_encode_hook)(const RtTmaEncode *e, unsigned char *map);

static bool tma_dtype(int32_t dt, CUtensorMapDataType *out)
{
    switch (dt) {
    case DT_F16: *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; return true;
    case DT_F8E4:
    case DT_F8E5:
    case DT_I8:
    case DT_U8: *out = CU_TENSOR_MAP_DATA_TYPE_UINT8; return true; /* bytes, moved as they are */
    case DT_BF16: *out = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; return true;
    case DT_I16:
    case DT_U16: *out = CU_TENSOR_MAP_DATA_TYPE_UINT16; return true;
    case DT_F32: *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; return true; /* stores' maps */
    default: return false;
    }
}

static bool tma_swizzle(int32_t bytes, CUtensorMapSwizzle *out)
{
    switch (bytes) {
    case 32: *out = CU_TENSOR_MAP_SWIZZLE_32B; return true;
    case 64: *out = CU_TENSOR_MAP_SWIZZLE_64B; return true;
    case 128: *out = CU_TENSOR_MAP_SWIZZLE_128B; return true;
    default: return false;
    }
}

/* An extent: a constant times a product of parameters, plus a constant; unbounded dims get
 * the largest a signed 32-bit coordinate reaches. A product the kernel
 * computed in 32 bits may have wrapped there, so one past INT32_MAX makes
 * no map (the kernel without TMA then gives the kernel's own answer). */
static bool extent(const RtTmapMeta *m, int d, const int64_t *vals, int nvals, cuuint64_t *out)
{
    const int32_t *p = m->ext_param[d];
    if (p[0] == IR_TMA_UNBOUNDED) {
        *out = INT32_MAX;
        return true;
    }
    int64_t e = p[0] >= 0 ? m->ext_mul[d] : 0;
    for (int f = 0; f < IR_TMA_FACTORS && p[f] >= 0; f++)
        if (p[f] >= nvals || __builtin_mul_overflow(e, vals[p[f]], &e))
            return false;
    if (__builtin_add_overflow(e, m->ext_add[d], &e))
        return false;
    *out = (cuuint64_t)e;
    int64_t most = p[1] >= 0 || m->ext_mul[d] > 1 ? INT32_MAX : (int64_t)1 << 32;
    return e >= 1 && e <= most;
}

/* Dim 1's stride in elements: its parameter's value or the constant. */
static int64_t stride_of(const RtTmapMeta *m, const int64_t *vals, int nvals)
{
    if (m->stride < 0)
        return m->stride_const;
    return m->stride < nvals ? vals[m->stride] : 0;
}

bool rt_tma_plan(const RtTmapMeta *m, const int64_t *vals, int nvals, RtTmaEncode *out)
{
    memset(out, 0, sizeof *out);
    if (m->base < 0 || m->base >= nvals || !tma_dtype(m->dt, &out->dt) ||
        !tma_swizzle(m->swizzle, &out->swizzle))
        return false;
    int64_t bytes = dtype_bits((DType)m->dt) / 8, stride = stride_of(m, vals, nvals);
    uint64_t base = (uint64_t)vals[m->base];
    /* the driver takes row strides below 2**40 bytes; check before multiplying */
    if (base % 16 || stride <= 0 || bytes <= 0 || stride >= ((int64_t)1 << 40) / bytes ||
        stride * bytes % 16)
        return false;
    if (m->box[0] < 1 || m->box[0] * bytes > m->swizzle || m->box[1] < 1 || m->box[1] > 256)
        return false;
    out->base = (void *)(uintptr_t)base;
    out->stride[0] = (cuuint64_t)(stride * bytes);
    out->box[0] = (cuuint32_t)m->box[0];
    out->box[1] = (cuuint32_t)m->box[1];
    out->elem_stride[0] = out->elem_stride[1] = 1;
    return extent(m, 0, vals, nvals, &out->dim[0]) && extent(m, 1, vals, nvals, &out->dim[1]);
}

static bool encode(const RtTmaEncode *e, unsigned char *map)
{
    if (rt_tma_encode_hook)
        return rt_tma_encode_hook(e, map);
    if (!rt_cu.p_cuTensorMapEncodeTiled)
        return false; /* a driver before CUDA 12 */
    CUtensorMap tm;   /* 64-byte aligned, as the driver wants */
    CUresult r = rt_cu.p_cuTensorMapEncodeTiled(
        &tm, e->dt, 2, e->base, e->dim, e->stride, e->box, e->elem_stride,
        CU_TENSOR_MAP_INTERLEAVE_NONE, e->swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE); /* out of bounds: zeros, as other=0 */
    if (r != CUDA_SUCCESS)
        return false;
    memcpy(map, &tm, 128);
    return true;
}

/* The argument values the maps depend on. */
static int map_key(const RtVariant *v, const int64_t *vals, uint64_t *key)
{
    int n = 0;
    for (int i = 0; i < v->ntmaps; i++) {
        const RtTmapMeta *m = &v->tmaps[i];
        if (m->device) { /* the kernel writes it: nothing of the launch's goes in */
            for (int k = 0; k < 2 + 2 * IR_TMA_FACTORS; k++)
                key[n++] = 0;
            continue;
        }
        key[n++] = (uint64_t)vals[m->base];
        key[n++] = m->stride >= 0 ? (uint64_t)vals[m->stride] : 0;
        for (int d = 0; d < 2; d++)
            for (int f = 0; f < IR_TMA_FACTORS; f++)
                key[n++] = m->ext_param[d][f] >= 0 ? (uint64_t)vals[m->ext_param[d][f]] : 0;
    }
    return n;
}

tk_status rt_tma_maps(RtVariant *v, const int64_t *vals, unsigned char (*out)[128], bool *ok)
{
    uint64_t key[RT_TMA_KEY];
    int nkey = map_key(v, vals, key);
    *ok = true;
    pthread_mutex_lock(&v->tma_lock);
    for (int i = 0; i < RT_TMA_CACHE; i++) {
        const RtTmaEntry *e = &v->tma_cache[i];
        if (e->nkey == nkey && memcmp(e->key, key, sizeof key[0] * (size_t)nkey) == 0) {
            memcpy(out, e->maps, 128 * (size_t)v->ntmaps);
            pthread_mutex_unlock(&v->tma_lock);
            return TK_OK;
        }
    }
    pthread_mutex_unlock(&v->tma_lock);
    for (int i = 0; i < v->ntmaps && *ok; i++) {
        RtTmaEncode e;
        *ok = v->tmaps[i].device ||
            (rt_tma_plan(&v->tmaps[i], vals, v->nparams, &e) && encode(&e, out[i]));
    }
    if (!*ok)
        return TK_OK;
    pthread_mutex_lock(&v->tma_lock);
    RtTmaEntry *e = &v->tma_cache[v->tma_next];
    v->tma_next = (v->tma_next + 1) % RT_TMA_CACHE;
    e->nkey = nkey;
    memcpy(e->key, key, sizeof key[0] * (size_t)nkey);
    memcpy(e->maps, out, 128 * (size_t)v->ntmaps);
    pthread_mutex_unlock(&v->tma_lock);
    return TK_OK;
}
