/* tkc_dtype.c: the element types of `tkc -run` buffers: their names on the
 * command line, sizes, and reading and writing one element of a host buffer
 * as a double (16- and 8-bit floats through tk.h's conversions). */
#include "tkc_dtype.h"

#include <string.h>

static const struct {
    const char *name;
    tk_dtype dt;
    size_t size;
    bool is_float;
} dtypes[] = {
    {"fp16", TK_F16, 2, true},         {"f16", TK_F16, 2, true},
    {"float16", TK_F16, 2, true},      {"bf16", TK_BF16, 2, true},
    {"bfloat16", TK_BF16, 2, true},    {"fp32", TK_F32, 4, true},
    {"f32", TK_F32, 4, true},          {"float32", TK_F32, 4, true},
    {"fp64", TK_F64, 8, true},         {"f64", TK_F64, 8, true},
    {"float64", TK_F64, 8, true},      {"i1", TK_I1, 1, false},
    {"bool", TK_I1, 1, false},         {"int1", TK_I1, 1, false},
    {"i8", TK_I8, 1, false},           {"int8", TK_I8, 1, false},
    {"i16", TK_I16, 2, false},         {"int16", TK_I16, 2, false},
    {"i32", TK_I32, 4, false},         {"int32", TK_I32, 4, false},
    {"i64", TK_I64, 8, false},         {"int64", TK_I64, 8, false},
    {"u8", TK_U8, 1, false},           {"uint8", TK_U8, 1, false},
    {"u16", TK_U16, 2, false},         {"uint16", TK_U16, 2, false},
    {"u32", TK_U32, 4, false},         {"uint32", TK_U32, 4, false},
    {"u64", TK_U64, 8, false},         {"uint64", TK_U64, 8, false},
    {"fp8e4nv", TK_F8E4NV, 1, true},   {"float8e4nv", TK_F8E4NV, 1, true},
    {"fp8e5", TK_F8E5, 1, true},       {"float8e5", TK_F8E5, 1, true},
    {"fp8e4b15", TK_F8E4B15, 1, true}, {"float8e4b15", TK_F8E4B15, 1, true},
};

int find_dtype(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strlen(dtypes[i].name) == len && !strncmp(dtypes[i].name, s, len))
            return (int)i;
    return -1;
}

bool is_float(tk_dtype t)
{
    return t == TK_F16 || t == TK_BF16 || t == TK_F32 || t == TK_F64 || t == TK_F8E4NV ||
        t == TK_F8E5 || t == TK_F8E4B15;
}
bool is_signed(tk_dtype t) { return t >= TK_I8 && t <= TK_I64; }

size_t dt_size(tk_dtype t)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dt == t)
            return dtypes[i].size;
    return 0;
}

const char *dt_name(tk_dtype t)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dt == t)
            return dtypes[i].name;
    return "?";
}

/* Element i of a host buffer as a double / from a double (ints wrap). */
double get_elem(const void *buf, tk_dtype t, size_t i)
{
    const unsigned char *b = buf;
    switch (t) {
    case TK_F16: {
        uint16_t h;
        memcpy(&h, b + 2 * i, 2);
        return tk_f16_to_f32(h);
    }
    case TK_BF16: {
        uint16_t h;
        memcpy(&h, b + 2 * i, 2);
        return tk_bf16_to_f32(h);
    }
    case TK_F32: {
        float f;
        memcpy(&f, b + 4 * i, 4);
        return f;
    }
    case TK_F64: {
        double f;
        memcpy(&f, b + 8 * i, 8);
        return f;
    }
    case TK_F8E4NV: return tk_fp8e4nv_to_f32(b[i]);
    case TK_F8E5: return tk_fp8e5_to_f32(b[i]);
    case TK_F8E4B15: return tk_fp8e4b15_to_f32(b[i]);
    case TK_I1:
    case TK_U8: return b[i];
    case TK_I8: return (int8_t)b[i];
    case TK_I16: {
        int16_t v;
        memcpy(&v, b + 2 * i, 2);
        return v;
    }
    case TK_U16: {
        uint16_t v;
        memcpy(&v, b + 2 * i, 2);
        return v;
    }
    case TK_I32: {
        int32_t v;
        memcpy(&v, b + 4 * i, 4);
        return v;
    }
    case TK_U32: {
        uint32_t v;
        memcpy(&v, b + 4 * i, 4);
        return v;
    }
    case TK_I64: {
        int64_t v;
        memcpy(&v, b + 8 * i, 8);
        return (double)v;
    }
    default: {
        uint64_t v;
        memcpy(&v, b + 8 * i, 8);
        return (double)v;
    }
    }
}

void set_elem(void *buf, tk_dtype t, size_t i, double x)
{
    unsigned char *b = buf;
    size_t sz = dt_size(t);
    if (t == TK_F16 || t == TK_BF16) {
        uint16_t h = t == TK_F16 ? tk_f32_to_f16((float)x) : tk_f32_to_bf16((float)x);
        memcpy(b + 2 * i, &h, 2);
    } else if (t == TK_F32) {
        float f = (float)x;
        memcpy(b + 4 * i, &f, 4);
    } else if (t == TK_F64) {
        memcpy(b + 8 * i, &x, 8);
    } else if (t == TK_F8E4NV || t == TK_F8E5) {
        /* through fp32, as fp16 and bf16 are */
        b[i] = t == TK_F8E4NV ? tk_f32_to_fp8e4nv((float)x) : tk_f32_to_fp8e5((float)x);
    } else if (t == TK_F8E4B15) {
        b[i] = tk_f32_to_fp8e4b15((float)x);
    } else {
        uint64_t v = t == TK_I1 ? x != 0 : (uint64_t)(int64_t)x;
        memcpy(b + sz * i, &v, sz); /* little-endian: the low bytes */
    }
}


tk_dtype dtype_at(int i) { return dtypes[i].dt; }
