/* rt_desc.c: tensor descriptors built on the host (tk_desc) as launch
 * arguments. A descriptor argument feeds several parameters of the compiled
 * kernel, as sema expands it (lib/sema/desc_param.c): the base pointer
 * (part 0), the shape, i32 per dim (part 1 + d), and the strides but the
 * last, i64 (part RT_DESC_STRIDE + d). What the key keeps of it: the
 * dtype, the rank, the block shape and whether the base is 16-byte aligned;
 * shapes and strides are runtime values. Guarantees: a descriptor the
 * kernel could not use correctly is refused with TK_ERR_LAUNCH naming the
 * argument and the fault, before anything is built or launched. */
#include <stdio.h>
#include <string.h>

#include "rt_backend.h"

/* the most elements a block may have in the language (a larger dim could
 * never compile), so a dim fits in 5 bits of the key */
enum { MAX_BLOCK = 1 << 20 };

static const tk_tensor_desc *desc_of(const tk_arg *a) { return (const tk_tensor_desc *)a->v.ptr; }

static bool pow2_block(int b) { return b >= 1 && b <= MAX_BLOCK && (b & (b - 1)) == 0; }

/* What is wrong with d, into why; false when nothing is. */
static bool desc_fault(const tk_tensor_desc *d, char *why, size_t cap)
{
    if (!d)
        return snprintf(why, cap, "the descriptor is NULL"), true;
    if (rt_dtype(d->dtype) == DT_VOID || d->dtype == TK_I1)
        return snprintf(why, cap, "the descriptor has no valid dtype (%d)", (int)d->dtype), true;
    if (d->rank < 1 || d->rank > TK_DESC_MAX_RANK)
        return snprintf(why, cap, "a descriptor's rank must be 1 to %d, not %d", TK_DESC_MAX_RANK,
                        d->rank),
               true;
    if (!d->base)
        return snprintf(why, cap, "the descriptor's base is NULL"), true;
    for (int i = 0; i < d->rank; i++) {
        if (!pow2_block(d->block[i]))
            return snprintf(why, cap,
                            "block dim %d of the descriptor is %d, not a power of two "
                            "up to %d",
                            i, d->block[i], MAX_BLOCK),
                   true;
        /* the kernel reads the shape as i32 */
        if (d->shape[i] < 1 || d->shape[i] > INT32_MAX)
            return snprintf(why, cap, "shape dim %d of the descriptor is %lld, not 1 to %d", i,
                            (long long)d->shape[i], INT32_MAX),
                   true;
        if (d->strides[i] < 0)
            return snprintf(why, cap, "stride dim %d of the descriptor is %lld, below 0", i,
                            (long long)d->strides[i]),
                   true;
    }
    /* the kernel takes the last stride as 1 (Triton requires it) */
    if (d->strides[d->rank - 1] != 1)
        return snprintf(why, cap, "the last stride of a descriptor must be 1, not %lld",
                        (long long)d->strides[d->rank - 1]),
               true;
    return false;
}

static int log2_of(int b)
{
    int n = 0;
    while (b > 1)
        b >>= 1, n++;
    return n;
}

tk_status rt_desc_check(const tk_kernel *k, int j, const char *param, bool no_spec, const tk_arg *a,
                        uint64_t *word)
{
    char why[160];
    const tk_tensor_desc *d = desc_of(a);
    if (desc_fault(d, why, sizeof why))
        return err_set(TK_ERR_LAUNCH, "kernel '%s': argument %d ('%s'): %s", k->name, j + 1, param,
                       why);
    bool div16 = !no_spec && (uintptr_t)d->base % 16 == 0;
    /* block dims are powers of two up to 2^20: 5 bits each */
    uint64_t w = (uint64_t)d->dtype | (uint64_t)TK_ARG_DESC << 8 | (uint64_t)div16 << 16 |
        (uint64_t)d->rank << 20;
    for (int i = 0; i < d->rank; i++)
        w |= (uint64_t)log2_of(d->block[i]) << (24 + 5 * i);
    *word = w;
    return TK_OK;
}

void rt_desc_spec(const tk_arg *a, ArgSpec *out)
{
    const tk_tensor_desc *d = desc_of(a);
    memset(out, 0, sizeof *out);
    out->type = type_ptr(rt_dtype(d->dtype));
    out->divisibility = (uintptr_t)d->base % 16 == 0 ? 16 : 1;
    out->desc_rank = d->rank;
    for (int i = 0; i < d->rank; i++)
        out->desc_block[i] = d->block[i];
}

const tk_arg *rt_part_arg(const tk_arg *a, int part, tk_arg *tmp)
{
    if (a->kind == TK_ARG_TUPLE)
        return a + part;
    if (a->kind != TK_ARG_DESC)
        return a;
    const tk_tensor_desc *d = desc_of(a);
    if (part == 0)
        *tmp = tk_ptr(d->base, d->dtype);
    else if (part < RT_DESC_STRIDE)
        *tmp = tk_i32((int32_t)d->shape[part - 1]);
    else
        *tmp = tk_i64(d->strides[part - RT_DESC_STRIDE]);
    return tmp;
}

int rt_desc_part(const char *param, const char *compiled)
{
    size_t n = strlen(param);
    if (strncmp(compiled, param, n) != 0 || compiled[n] != '_')
        return -1;
    const char *rest = compiled + n + 1;
    int base = !strncmp(rest, "shape", 5) ? 1 : !strncmp(rest, "stride", 6) ? RT_DESC_STRIDE : 0;
    if (!base)
        return -1;
    rest += base == 1 ? 5 : 6;
    if (rest[0] < '0' || rest[0] >= '0' + TK_DESC_MAX_RANK || rest[1])
        return -1;
    return base + rest[0] - '0';
}
