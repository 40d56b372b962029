/* sema/builtins/libdevice_sigs.c: every libdevice function Triton 3.6's
 * tl.extra.cuda.libdevice offers, with its typed signatures (argument
 * dtypes, the __nv_ symbol, the result dtype). A call takes the signature
 * whose dtypes its arguments have exactly, as Triton's dispatch does
 * (Python ints are int32, floats fp32); the float functions that
 * python.c upcasts from fp16/bf16 keep that path. */
#include <string.h>

#include "sema/spec.h"

typedef struct {
    const char *name; /* libdevice.NAME */
    const char *sym;  /* the __nv_ function */
    int nargs;
    DType args[4];
    DType ret;
} LdSig;

static const LdSig sigs[] = {
    {"clz", "__nv_clz", 1, {DT_I32}, DT_I32},
    {"clz", "__nv_clzll", 1, {DT_I64}, DT_I32},
    {"popc", "__nv_popc", 1, {DT_I32}, DT_I32},
    {"popc", "__nv_popcll", 1, {DT_I64}, DT_I32},
    {"byte_perm", "__nv_byte_perm", 3, {DT_I32, DT_I32, DT_I32}, DT_I32},
    {"mulhi", "__nv_mulhi", 2, {DT_I32, DT_I32}, DT_I32},
    {"mulhi", "__nv_umulhi", 2, {DT_U32, DT_U32}, DT_U32},
    {"mulhi", "__nv_mul64hi", 2, {DT_I64, DT_I64}, DT_I64},
    {"mulhi", "__nv_umul64hi", 2, {DT_U64, DT_U64}, DT_U64},
    {"mul24", "__nv_mul24", 2, {DT_I32, DT_I32}, DT_I32},
    {"mul24", "__nv_umul24", 2, {DT_U32, DT_U32}, DT_U32},
    {"brev", "__nv_brev", 1, {DT_I32}, DT_I32},
    {"brev", "__nv_brevll", 1, {DT_I64}, DT_I64},
    {"sad", "__nv_sad", 3, {DT_I32, DT_I32, DT_U32}, DT_I32},
    {"sad", "__nv_usad", 3, {DT_U32, DT_U32, DT_U32}, DT_U32},
    {"abs", "__nv_abs", 1, {DT_I32}, DT_I32},
    {"abs", "__nv_llabs", 1, {DT_I64}, DT_I64},
    {"abs", "__nv_fabsf", 1, {DT_F32}, DT_F32},
    {"abs", "__nv_fabs", 1, {DT_F64}, DT_F64},
    {"floor", "__nv_floorf", 1, {DT_F32}, DT_F32},
    {"floor", "__nv_floor", 1, {DT_F64}, DT_F64},
    {"rcp64h", "__nv_rcp64h", 1, {DT_F64}, DT_F64},
    {"rsqrt", "__nv_rsqrtf", 1, {DT_F32}, DT_F32},
    {"rsqrt", "__nv_rsqrt", 1, {DT_F64}, DT_F64},
    {"ceil", "__nv_ceil", 1, {DT_F64}, DT_F64},
    {"ceil", "__nv_ceilf", 1, {DT_F32}, DT_F32},
    {"trunc", "__nv_trunc", 1, {DT_F64}, DT_F64},
    {"trunc", "__nv_truncf", 1, {DT_F32}, DT_F32},
    {"exp2", "__nv_exp2f", 1, {DT_F32}, DT_F32},
    {"exp2", "__nv_exp2", 1, {DT_F64}, DT_F64},
    {"saturatef", "__nv_saturatef", 1, {DT_F32}, DT_F32},
    {"fma_rn", "__nv_fmaf_rn", 3, {DT_F32, DT_F32, DT_F32}, DT_F32},
    {"fma_rn", "__nv_fma_rn", 3, {DT_F64, DT_F64, DT_F64}, DT_F64},
    {"fma_rz", "__nv_fmaf_rz", 3, {DT_F32, DT_F32, DT_F32}, DT_F32},
    {"fma_rz", "__nv_fma_rz", 3, {DT_F64, DT_F64, DT_F64}, DT_F64},
    {"fma_rd", "__nv_fmaf_rd", 3, {DT_F32, DT_F32, DT_F32}, DT_F32},
    {"fma_rd", "__nv_fma_rd", 3, {DT_F64, DT_F64, DT_F64}, DT_F64},
    {"fma_ru", "__nv_fmaf_ru", 3, {DT_F32, DT_F32, DT_F32}, DT_F32},
    {"fma_ru", "__nv_fma_ru", 3, {DT_F64, DT_F64, DT_F64}, DT_F64},
    {"fast_dividef", "__nv_fast_fdividef", 2, {DT_F32, DT_F32}, DT_F32},
    {"div_rn", "__nv_fdiv_rn", 2, {DT_F32, DT_F32}, DT_F32},
    {"div_rn", "__nv_ddiv_rn", 2, {DT_F64, DT_F64}, DT_F64},
    {"div_rz", "__nv_fdiv_rz", 2, {DT_F32, DT_F32}, DT_F32},
    {"div_rz", "__nv_ddiv_rz", 2, {DT_F64, DT_F64}, DT_F64},
    {"div_rd", "__nv_fdiv_rd", 2, {DT_F32, DT_F32}, DT_F32},
    {"div_rd", "__nv_ddiv_rd", 2, {DT_F64, DT_F64}, DT_F64},
    {"div_ru", "__nv_fdiv_ru", 2, {DT_F32, DT_F32}, DT_F32},
    {"div_ru", "__nv_ddiv_ru", 2, {DT_F64, DT_F64}, DT_F64},
    {"rcp_rn", "__nv_frcp_rn", 1, {DT_F32}, DT_F32},
    {"rcp_rn", "__nv_drcp_rn", 1, {DT_F64}, DT_F64},
    {"rcp_rz", "__nv_frcp_rz", 1, {DT_F32}, DT_F32},
    {"rcp_rz", "__nv_drcp_rz", 1, {DT_F64}, DT_F64},
    {"rcp_rd", "__nv_frcp_rd", 1, {DT_F32}, DT_F32},
    {"rcp_rd", "__nv_drcp_rd", 1, {DT_F64}, DT_F64},
    {"rcp_ru", "__nv_frcp_ru", 1, {DT_F32}, DT_F32},
    {"rcp_ru", "__nv_drcp_ru", 1, {DT_F64}, DT_F64},
    {"sqrt_rn", "__nv_fsqrt_rn", 1, {DT_F32}, DT_F32},
    {"sqrt_rn", "__nv_dsqrt_rn", 1, {DT_F64}, DT_F64},
    {"sqrt_rz", "__nv_fsqrt_rz", 1, {DT_F32}, DT_F32},
    {"sqrt_rz", "__nv_dsqrt_rz", 1, {DT_F64}, DT_F64},
    {"sqrt_rd", "__nv_fsqrt_rd", 1, {DT_F32}, DT_F32},
    {"sqrt_rd", "__nv_dsqrt_rd", 1, {DT_F64}, DT_F64},
    {"sqrt_ru", "__nv_fsqrt_ru", 1, {DT_F32}, DT_F32},
    {"sqrt_ru", "__nv_dsqrt_ru", 1, {DT_F64}, DT_F64},
    {"sqrt", "__nv_sqrtf", 1, {DT_F32}, DT_F32},
    {"sqrt", "__nv_sqrt", 1, {DT_F64}, DT_F64},
    {"add_rn", "__nv_dadd_rn", 2, {DT_F64, DT_F64}, DT_F64},
    {"add_rn", "__nv_fadd_rn", 2, {DT_F32, DT_F32}, DT_F32},
    {"add_rz", "__nv_dadd_rz", 2, {DT_F64, DT_F64}, DT_F64},
    {"add_rz", "__nv_fadd_rz", 2, {DT_F32, DT_F32}, DT_F32},
    {"add_rd", "__nv_dadd_rd", 2, {DT_F64, DT_F64}, DT_F64},
    {"add_rd", "__nv_fadd_rd", 2, {DT_F32, DT_F32}, DT_F32},
    {"add_ru", "__nv_dadd_ru", 2, {DT_F64, DT_F64}, DT_F64},
    {"add_ru", "__nv_fadd_ru", 2, {DT_F32, DT_F32}, DT_F32},
    {"mul_rn", "__nv_dmul_rn", 2, {DT_F64, DT_F64}, DT_F64},
    {"mul_rn", "__nv_fmul_rn", 2, {DT_F32, DT_F32}, DT_F32},
    {"mul_rz", "__nv_dmul_rz", 2, {DT_F64, DT_F64}, DT_F64},
    {"mul_rz", "__nv_fmul_rz", 2, {DT_F32, DT_F32}, DT_F32},
    {"mul_rd", "__nv_dmul_rd", 2, {DT_F64, DT_F64}, DT_F64},
    {"mul_rd", "__nv_fmul_rd", 2, {DT_F32, DT_F32}, DT_F32},
    {"double2float_rn", "__nv_double2float_rn", 1, {DT_F64}, DT_F32},
    {"double2float_rz", "__nv_double2float_rz", 1, {DT_F64}, DT_F32},
    {"double2float_rd", "__nv_double2float_rd", 1, {DT_F64}, DT_F32},
    {"double2float_ru", "__nv_double2float_ru", 1, {DT_F64}, DT_F32},
    {"double2int_rn", "__nv_double2int_rn", 1, {DT_F64}, DT_I32},
    {"double2int_rz", "__nv_double2int_rz", 1, {DT_F64}, DT_I32},
    {"double2int_rd", "__nv_double2int_rd", 1, {DT_F64}, DT_I32},
    {"double2int_ru", "__nv_double2int_ru", 1, {DT_F64}, DT_I32},
    {"double2uint_rn", "__nv_double2uint_rn", 1, {DT_F64}, DT_I32},
    {"double2uint_rz", "__nv_double2uint_rz", 1, {DT_F64}, DT_I32},
    {"double2uint_rd", "__nv_double2uint_rd", 1, {DT_F64}, DT_I32},
    {"double2uint_ru", "__nv_double2uint_ru", 1, {DT_F64}, DT_I32},
    {"int2double_rn", "__nv_int2double_rn", 1, {DT_I32}, DT_F64},
    {"uint2double_rn", "__nv_uint2double_rn", 1, {DT_U32}, DT_F64},
    {"float2int_rn", "__nv_float2int_rn", 1, {DT_F32}, DT_I32},
    {"float2int_rz", "__nv_float2int_rz", 1, {DT_F32}, DT_I32},
    {"float2int_rd", "__nv_float2int_rd", 1, {DT_F32}, DT_I32},
    {"float2int_ru", "__nv_float2int_ru", 1, {DT_F32}, DT_I32},
    {"float2uint_rn", "__nv_float2uint_rn", 1, {DT_F32}, DT_I32},
    {"float2uint_rz", "__nv_float2uint_rz", 1, {DT_F32}, DT_I32},
    {"float2uint_rd", "__nv_float2uint_rd", 1, {DT_F32}, DT_I32},
    {"float2uint_ru", "__nv_float2uint_ru", 1, {DT_F32}, DT_I32},
    {"int2float_rn", "__nv_int2float_rn", 1, {DT_I32}, DT_F32},
    {"int2float_rz", "__nv_int2float_rz", 1, {DT_I32}, DT_F32},
    {"int2float_rd", "__nv_int2float_rd", 1, {DT_I32}, DT_F32},
    {"int2float_ru", "__nv_int2float_ru", 1, {DT_I32}, DT_F32},
    {"uint2float_rn", "__nv_uint2float_rn", 1, {DT_U32}, DT_F32},
    {"uint2float_rz", "__nv_uint2float_rz", 1, {DT_U32}, DT_F32},
    {"uint2float_rd", "__nv_uint2float_rd", 1, {DT_U32}, DT_F32},
    {"uint2float_ru", "__nv_uint2float_ru", 1, {DT_U32}, DT_F32},
    {"hiloint2double", "__nv_hiloint2double", 2, {DT_I32, DT_I32}, DT_F64},
    {"double2loint", "__nv_double2loint", 1, {DT_F64}, DT_I32},
    {"double2hiint", "__nv_double2hiint", 1, {DT_F64}, DT_I32},
    {"float2ll_rn", "__nv_float2ll_rn", 1, {DT_F32}, DT_I64},
    {"float2ll_rz", "__nv_float2ll_rz", 1, {DT_F32}, DT_I64},
    {"float2ll_rd", "__nv_float2ll_rd", 1, {DT_F32}, DT_I64},
    {"float2ll_ru", "__nv_float2ll_ru", 1, {DT_F32}, DT_I64},
    {"float2ull_rn", "__nv_float2ull_rn", 1, {DT_F32}, DT_I64},
    {"float2ull_rz", "__nv_float2ull_rz", 1, {DT_F32}, DT_I64},
    {"float2ull_rd", "__nv_float2ull_rd", 1, {DT_F32}, DT_I64},
    {"float2ull_ru", "__nv_float2ull_ru", 1, {DT_F32}, DT_I64},
    {"double2ll_rn", "__nv_double2ll_rn", 1, {DT_F64}, DT_I64},
    {"double2ll_rz", "__nv_double2ll_rz", 1, {DT_F64}, DT_I64},
    {"double2ll_rd", "__nv_double2ll_rd", 1, {DT_F64}, DT_I64},
    {"double2ll_ru", "__nv_double2ll_ru", 1, {DT_F64}, DT_I64},
    {"double2ull_rn", "__nv_double2ull_rn", 1, {DT_F64}, DT_I64},
    {"double2ull_rz", "__nv_double2ull_rz", 1, {DT_F64}, DT_I64},
    {"double2ull_rd", "__nv_double2ull_rd", 1, {DT_F64}, DT_I64},
    {"double2ull_ru", "__nv_double2ull_ru", 1, {DT_F64}, DT_I64},
    {"ll2float_rn", "__nv_ll2float_rn", 1, {DT_I64}, DT_F32},
    {"ll2float_rz", "__nv_ll2float_rz", 1, {DT_I64}, DT_F32},
    {"ll2float_rd", "__nv_ll2float_rd", 1, {DT_I64}, DT_F32},
    {"ll2float_ru", "__nv_ll2float_ru", 1, {DT_I64}, DT_F32},
    {"ull2float_rn", "__nv_ull2float_rn", 1, {DT_U64}, DT_F32},
    {"ull2float_rz", "__nv_ull2float_rz", 1, {DT_U64}, DT_F32},
    {"ull2float_rd", "__nv_ull2float_rd", 1, {DT_U64}, DT_F32},
    {"ull2float_ru", "__nv_ull2float_ru", 1, {DT_U64}, DT_F32},
    {"ll2double_rn", "__nv_ll2double_rn", 1, {DT_I64}, DT_F64},
    {"ll2double_rz", "__nv_ll2double_rz", 1, {DT_I64}, DT_F64},
    {"ll2double_rd", "__nv_ll2double_rd", 1, {DT_I64}, DT_F64},
    {"ll2double_ru", "__nv_ll2double_ru", 1, {DT_I64}, DT_F64},
    {"ull2double_rn", "__nv_ull2double_rn", 1, {DT_U64}, DT_F64},
    {"ull2double_rz", "__nv_ull2double_rz", 1, {DT_U64}, DT_F64},
    {"ull2double_rd", "__nv_ull2double_rd", 1, {DT_U64}, DT_F64},
    {"ull2double_ru", "__nv_ull2double_ru", 1, {DT_U64}, DT_F64},
    {"int_as_float", "__nv_int_as_float", 1, {DT_I32}, DT_F32},
    {"float_as_int", "__nv_float_as_int", 1, {DT_F32}, DT_I32},
    {"uint_as_float", "__nv_uint_as_float", 1, {DT_U32}, DT_F32},
    {"float_as_uint", "__nv_float_as_uint", 1, {DT_F32}, DT_I32},
    {"longlong_as_double", "__nv_longlong_as_double", 1, {DT_I64}, DT_F64},
    {"double_as_longlong", "__nv_double_as_longlong", 1, {DT_F64}, DT_I64},
    {"fast_sinf", "__nv_fast_sinf", 1, {DT_F32}, DT_F32},
    {"fast_cosf", "__nv_fast_cosf", 1, {DT_F32}, DT_F32},
    {"fast_log2f", "__nv_fast_log2f", 1, {DT_F32}, DT_F32},
    {"fast_logf", "__nv_fast_logf", 1, {DT_F32}, DT_F32},
    {"fast_expf", "__nv_fast_expf", 1, {DT_F32}, DT_F32},
    {"fast_tanf", "__nv_fast_tanf", 1, {DT_F32}, DT_F32},
    {"fast_exp10f", "__nv_fast_exp10f", 1, {DT_F32}, DT_F32},
    {"fast_log10f", "__nv_fast_log10f", 1, {DT_F32}, DT_F32},
    {"fast_powf", "__nv_fast_powf", 2, {DT_F32, DT_F32}, DT_F32},
    {"hadd", "__nv_hadd", 2, {DT_I32, DT_I32}, DT_I32},
    {"hadd", "__nv_uhadd", 2, {DT_U32, DT_U32}, DT_U32},
    {"rhadd", "__nv_rhadd", 2, {DT_I32, DT_I32}, DT_I32},
    {"rhadd", "__nv_urhadd", 2, {DT_U32, DT_U32}, DT_U32},
    {"sub_rn", "__nv_fsub_rn", 2, {DT_F32, DT_F32}, DT_F32},
    {"sub_rn", "__nv_dsub_rn", 2, {DT_F64, DT_F64}, DT_F64},
    {"sub_rz", "__nv_fsub_rz", 2, {DT_F32, DT_F32}, DT_F32},
    {"sub_rz", "__nv_dsub_rz", 2, {DT_F64, DT_F64}, DT_F64},
    {"sub_rd", "__nv_fsub_rd", 2, {DT_F32, DT_F32}, DT_F32},
    {"sub_rd", "__nv_dsub_rd", 2, {DT_F64, DT_F64}, DT_F64},
    {"sub_ru", "__nv_fsub_ru", 2, {DT_F32, DT_F32}, DT_F32},
    {"sub_ru", "__nv_dsub_ru", 2, {DT_F64, DT_F64}, DT_F64},
    {"rsqrt_rn", "__nv_frsqrt_rn", 1, {DT_F32}, DT_F32},
    {"ffs", "__nv_ffs", 1, {DT_I32}, DT_I32},
    {"ffs", "__nv_ffsll", 1, {DT_I64}, DT_I32},
    {"rint", "__nv_rintf", 1, {DT_F32}, DT_F32},
    {"rint", "__nv_rint", 1, {DT_F64}, DT_F64},
    {"llrint", "__nv_llrintf", 1, {DT_F32}, DT_I64},
    {"llrint", "__nv_llrint", 1, {DT_F64}, DT_I64},
    {"nearbyint", "__nv_nearbyintf", 1, {DT_F32}, DT_F32},
    {"nearbyint", "__nv_nearbyint", 1, {DT_F64}, DT_F64},
    {"isnan", "__nv_isnanf", 1, {DT_F32}, DT_I32},
    {"isnan", "__nv_isnand", 1, {DT_F64}, DT_I32},
    {"signbit", "__nv_signbitf", 1, {DT_F32}, DT_I32},
    {"signbit", "__nv_signbitd", 1, {DT_F64}, DT_I32},
    {"copysign", "__nv_copysignf", 2, {DT_F32, DT_F32}, DT_F32},
    {"copysign", "__nv_copysign", 2, {DT_F64, DT_F64}, DT_F64},
    {"finitef", "__nv_finitef", 1, {DT_F32}, DT_I32},
    {"isinf", "__nv_isinff", 1, {DT_F32}, DT_I32},
    {"isinf", "__nv_isinfd", 1, {DT_F64}, DT_I32},
    {"nextafter", "__nv_nextafterf", 2, {DT_F32, DT_F32}, DT_F32},
    {"nextafter", "__nv_nextafter", 2, {DT_F64, DT_F64}, DT_F64},
    {"sin", "__nv_sinf", 1, {DT_F32}, DT_F32},
    {"sin", "__nv_sin", 1, {DT_F64}, DT_F64},
    {"cos", "__nv_cosf", 1, {DT_F32}, DT_F32},
    {"cos", "__nv_cos", 1, {DT_F64}, DT_F64},
    {"sinpi", "__nv_sinpif", 1, {DT_F32}, DT_F32},
    {"sinpi", "__nv_sinpi", 1, {DT_F64}, DT_F64},
    {"cospi", "__nv_cospif", 1, {DT_F32}, DT_F32},
    {"cospi", "__nv_cospi", 1, {DT_F64}, DT_F64},
    {"tan", "__nv_tanf", 1, {DT_F32}, DT_F32},
    {"tan", "__nv_tan", 1, {DT_F64}, DT_F64},
    {"log2", "__nv_log2f", 1, {DT_F32}, DT_F32},
    {"log2", "__nv_log2", 1, {DT_F64}, DT_F64},
    {"exp", "__nv_expf", 1, {DT_F32}, DT_F32},
    {"exp", "__nv_exp", 1, {DT_F64}, DT_F64},
    {"exp10", "__nv_exp10f", 1, {DT_F32}, DT_F32},
    {"exp10", "__nv_exp10", 1, {DT_F64}, DT_F64},
    {"cosh", "__nv_coshf", 1, {DT_F32}, DT_F32},
    {"cosh", "__nv_cosh", 1, {DT_F64}, DT_F64},
    {"sinh", "__nv_sinhf", 1, {DT_F32}, DT_F32},
    {"sinh", "__nv_sinh", 1, {DT_F64}, DT_F64},
    {"tanh", "__nv_tanhf", 1, {DT_F32}, DT_F32},
    {"tanh", "__nv_tanh", 1, {DT_F64}, DT_F64},
    {"atan2", "__nv_atan2f", 2, {DT_F32, DT_F32}, DT_F32},
    {"atan2", "__nv_atan2", 2, {DT_F64, DT_F64}, DT_F64},
    {"atan", "__nv_atanf", 1, {DT_F32}, DT_F32},
    {"atan", "__nv_atan", 1, {DT_F64}, DT_F64},
    {"asin", "__nv_asinf", 1, {DT_F32}, DT_F32},
    {"asin", "__nv_asin", 1, {DT_F64}, DT_F64},
    {"acos", "__nv_acosf", 1, {DT_F32}, DT_F32},
    {"acos", "__nv_acos", 1, {DT_F64}, DT_F64},
    {"log", "__nv_logf", 1, {DT_F32}, DT_F32},
    {"log", "__nv_log", 1, {DT_F64}, DT_F64},
    {"log10", "__nv_log10f", 1, {DT_F32}, DT_F32},
    {"log10", "__nv_log10", 1, {DT_F64}, DT_F64},
    {"log1p", "__nv_log1pf", 1, {DT_F32}, DT_F32},
    {"log1p", "__nv_log1p", 1, {DT_F64}, DT_F64},
    {"acosh", "__nv_acoshf", 1, {DT_F32}, DT_F32},
    {"acosh", "__nv_acosh", 1, {DT_F64}, DT_F64},
    {"asinh", "__nv_asinhf", 1, {DT_F32}, DT_F32},
    {"asinh", "__nv_asinh", 1, {DT_F64}, DT_F64},
    {"atanh", "__nv_atanhf", 1, {DT_F32}, DT_F32},
    {"atanh", "__nv_atanh", 1, {DT_F64}, DT_F64},
    {"expm1", "__nv_expm1f", 1, {DT_F32}, DT_F32},
    {"expm1", "__nv_expm1", 1, {DT_F64}, DT_F64},
    {"hypot", "__nv_hypotf", 2, {DT_F32, DT_F32}, DT_F32},
    {"hypot", "__nv_hypot", 2, {DT_F64, DT_F64}, DT_F64},
    {"rhypot", "__nv_rhypotf", 2, {DT_F32, DT_F32}, DT_F32},
    {"rhypot", "__nv_rhypot", 2, {DT_F64, DT_F64}, DT_F64},
    {"norm3d", "__nv_norm3df", 3, {DT_F32, DT_F32, DT_F32}, DT_F32},
    {"norm3d", "__nv_norm3d", 3, {DT_F64, DT_F64, DT_F64}, DT_F64},
    {"rnorm3d", "__nv_rnorm3df", 3, {DT_F32, DT_F32, DT_F32}, DT_F32},
    {"rnorm3d", "__nv_rnorm3d", 3, {DT_F64, DT_F64, DT_F64}, DT_F64},
    {"norm4d", "__nv_norm4df", 4, {DT_F32, DT_F32, DT_F32, DT_F32}, DT_F32},
    {"norm4d", "__nv_norm4d", 4, {DT_F64, DT_F64, DT_F64, DT_F64}, DT_F64},
    {"rnorm4d", "__nv_rnorm4df", 4, {DT_F32, DT_F32, DT_F32, DT_F32}, DT_F32},
    {"rnorm4d", "__nv_rnorm4d", 4, {DT_F64, DT_F64, DT_F64, DT_F64}, DT_F64},
    {"cbrt", "__nv_cbrtf", 1, {DT_F32}, DT_F32},
    {"cbrt", "__nv_cbrt", 1, {DT_F64}, DT_F64},
    {"rcbrt", "__nv_rcbrtf", 1, {DT_F32}, DT_F32},
    {"rcbrt", "__nv_rcbrt", 1, {DT_F64}, DT_F64},
    {"j0", "__nv_j0f", 1, {DT_F32}, DT_F32},
    {"j0", "__nv_j0", 1, {DT_F64}, DT_F64},
    {"j1", "__nv_j1f", 1, {DT_F32}, DT_F32},
    {"j1", "__nv_j1", 1, {DT_F64}, DT_F64},
    {"y0", "__nv_y0f", 1, {DT_F32}, DT_F32},
    {"y0", "__nv_y0", 1, {DT_F64}, DT_F64},
    {"y1", "__nv_y1f", 1, {DT_F32}, DT_F32},
    {"y1", "__nv_y1", 1, {DT_F64}, DT_F64},
    {"yn", "__nv_ynf", 2, {DT_I32, DT_F32}, DT_F32},
    {"yn", "__nv_yn", 2, {DT_I32, DT_F64}, DT_F64},
    {"jn", "__nv_jnf", 2, {DT_I32, DT_F32}, DT_F32},
    {"jn", "__nv_jn", 2, {DT_I32, DT_F64}, DT_F64},
    {"cyl_bessel_i0", "__nv_cyl_bessel_i0f", 1, {DT_F32}, DT_F32},
    {"cyl_bessel_i0", "__nv_cyl_bessel_i0", 1, {DT_F64}, DT_F64},
    {"cyl_bessel_i1", "__nv_cyl_bessel_i1f", 1, {DT_F32}, DT_F32},
    {"cyl_bessel_i1", "__nv_cyl_bessel_i1", 1, {DT_F64}, DT_F64},
    {"erf", "__nv_erff", 1, {DT_F32}, DT_F32},
    {"erf", "__nv_erf", 1, {DT_F64}, DT_F64},
    {"erfinv", "__nv_erfinvf", 1, {DT_F32}, DT_F32},
    {"erfinv", "__nv_erfinv", 1, {DT_F64}, DT_F64},
    {"erfc", "__nv_erfcf", 1, {DT_F32}, DT_F32},
    {"erfc", "__nv_erfc", 1, {DT_F64}, DT_F64},
    {"erfcx", "__nv_erfcxf", 1, {DT_F32}, DT_F32},
    {"erfcx", "__nv_erfcx", 1, {DT_F64}, DT_F64},
    {"erfcinv", "__nv_erfcinvf", 1, {DT_F32}, DT_F32},
    {"erfcinv", "__nv_erfcinv", 1, {DT_F64}, DT_F64},
    {"normcdfinv", "__nv_normcdfinvf", 1, {DT_F32}, DT_F32},
    {"normcdfinv", "__nv_normcdfinv", 1, {DT_F64}, DT_F64},
    {"normcdf", "__nv_normcdff", 1, {DT_F32}, DT_F32},
    {"normcdf", "__nv_normcdf", 1, {DT_F64}, DT_F64},
    {"lgamma", "__nv_lgammaf", 1, {DT_F32}, DT_F32},
    {"lgamma", "__nv_lgamma", 1, {DT_F64}, DT_F64},
    {"ldexp", "__nv_ldexpf", 2, {DT_F32, DT_I32}, DT_F32},
    {"ldexp", "__nv_ldexp", 2, {DT_F64, DT_I32}, DT_F64},
    {"scalbn", "__nv_scalbnf", 2, {DT_F32, DT_I32}, DT_F32},
    {"scalbn", "__nv_scalbn", 2, {DT_F64, DT_I32}, DT_F64},
    {"fmod", "__nv_fmodf", 2, {DT_F32, DT_F32}, DT_F32},
    {"fmod", "__nv_fmod", 2, {DT_F64, DT_F64}, DT_F64},
    {"remainder", "__nv_remainderf", 2, {DT_F32, DT_F32}, DT_F32},
    {"remainder", "__nv_remainder", 2, {DT_F64, DT_F64}, DT_F64},
    {"fma", "__nv_fmaf", 3, {DT_F32, DT_F32, DT_F32}, DT_F32},
    {"fma", "__nv_fma", 3, {DT_F64, DT_F64, DT_F64}, DT_F64},
    {"pow", "__nv_powif", 2, {DT_F32, DT_I32}, DT_F32},
    {"pow", "__nv_powi", 2, {DT_F64, DT_I32}, DT_F64},
    {"pow", "__nv_powf", 2, {DT_F32, DT_F32}, DT_F32},
    {"pow", "__nv_pow", 2, {DT_F64, DT_F64}, DT_F64},
    {"tgamma", "__nv_tgammaf", 1, {DT_F32}, DT_F32},
    {"tgamma", "__nv_tgamma", 1, {DT_F64}, DT_F64},
    {"round", "__nv_roundf", 1, {DT_F32}, DT_F32},
    {"round", "__nv_round", 1, {DT_F64}, DT_F64},
    {"llround", "__nv_llroundf", 1, {DT_F32}, DT_I64},
    {"llround", "__nv_llround", 1, {DT_F64}, DT_I64},
    {"fdim", "__nv_fdimf", 2, {DT_F32, DT_F32}, DT_F32},
    {"fdim", "__nv_fdim", 2, {DT_F64, DT_F64}, DT_F64},
    {"ilogb", "__nv_ilogbf", 1, {DT_F32}, DT_I32},
    {"ilogb", "__nv_ilogb", 1, {DT_F64}, DT_I32},
    {"logb", "__nv_logbf", 1, {DT_F32}, DT_F32},
    {"logb", "__nv_logb", 1, {DT_F64}, DT_F64},
    {"isfinited", "__nv_isfinited", 1, {DT_F64}, DT_I32},
};

static SVal bad(void) { return (SVal){.k = SV_UNDEF}; }

bool sema_libdevice_has_sig(const char *name)
{
    for (int i = 0; i < TK_ARRAY_LEN(sigs); i++)
        if (!strcmp(sigs[i].name, name))
            return true;
    return false;
}

static const LdSig *find_sig(const char *name, IrValue *const *args, int n)
{
    for (int i = 0; i < TK_ARRAY_LEN(sigs); i++) {
        const LdSig *g = &sigs[i];
        bool ok = !strcmp(g->name, name) && g->nargs == n;
        for (int j = 0; ok && j < n; j++)
            ok = args[j]->type.dt == g->args[j];
        if (ok)
            return g;
    }
    return NULL;
}

/* "(fp32, i32), (fp64, i32)": the signatures of name, for the error. */
static const char *sig_list(Sema *s, const char *name)
{
    const char *out = "";
    for (int i = 0; i < TK_ARRAY_LEN(sigs); i++) {
        if (strcmp(sigs[i].name, name))
            continue;
        const char *one = "";
        for (int j = 0; j < sigs[i].nargs; j++)
            one = arena_printf(s->a, "%s%s%s", one, j ? ", " : "", dtype_name(sigs[i].args[j]));
        out = arena_printf(s->a, "%s%s(%s)", out, *out ? ", " : "", one);
    }
    return out;
}

SVal sema_libdevice_sig_call(Sema *s, const char *ns, const char *name, CallArgs *ca)
{
    IrValue *args[4];
    if (ca->npos > 4)
        return sema_err(s, ca->at, "%s.%s() takes at most 4 arguments, got %d", ns, name, ca->npos);
    for (int i = 0; i < ca->npos; i++)
        if (!(args[i] = sema_to_tensor(s, ca->pos[i], ca->pos_at[i])))
            return bad();
    const LdSig *g = find_sig(name, args, ca->npos);
    if (!g) {
        const char *got = "";
        for (int i = 0; i < ca->npos; i++)
            got = arena_printf(s->a, "%s%s%s", got, i ? ", " : "", dtype_name(args[i]->type.dt));
        return sema_err(s, ca->at,
                        "%s.%s takes arguments of exactly one of the dtypes %s (as Triton "
                        "dispatches libdevice), got (%s)",
                        ns, name, sig_list(s, name), got);
    }
    int rank = 0, shape[TK_MAX_RANK] = {0};
    for (int i = 0; i < ca->npos; i++) {
        Type acc = type_block(g->ret, rank, shape);
        if (!sema_broadcast_shapes(s, acc, args[i]->type, &rank, shape, ca->at))
            return bad();
    }
    for (int i = 0; i < ca->npos; i++)
        if (!(args[i] = sema_broadcast(s, args[i], rank, shape, ca->at)))
            return bad();
    Type rt = type_block(g->ret, rank, shape);
    IrOp *op = ir_build(&s->b, IR_EXTERN, ca->at, args, ca->npos, &rt, 1);
    op->str = g->sym;
    return sv_tensor(op->results[0]);
}
