/* ir.h: the typed block IR. A kernel after specialisation is one IrFunc:
 * SSA values with a dtype and a static shape, in structured regions (for,
 * while, if) instead of a CFG. Ops carry the span of the source they came
 * from. Sema builds it; passes rewrite it; codegen and the interpreter read it.
 *
 * Invariants the verifier checks (ir_verify):
 *  - every operand is defined before use, in the same or an enclosing block;
 *  - elementwise ops have operands of identical shape (sema inserts
 *    IR_SPLAT/IR_BROADCAST) and, except where noted, identical dtype (sema
 *    inserts IR_CAST);
 *  - every region ends in its terminator (IR_YIELD, or IR_CONDITION for the
 *    first region of IR_WHILE) whose operand types match the parent's needs;
 *  - value ids are dense in 0..next_id-1 so stages can use side tables. */
#ifndef TK_IR_H
#define TK_IR_H

#include "support/support.h"

/* ---- layouts (layout.c) ---------------------------------------------------- */

/* Which thread of a program holds which element of a block value.
 * Every block value of a function that went through pass_layout carries one
 * (IrValue.layout); scalars and the interpreter ignore them, since a layout
 * changes no values. Kinds follow Triton's TritonGPU layouts:
 *
 *   blocked  size-per-thread x threads-per-warp x warps-per-CTA, `order`
 *            listing dims fastest first; the tile repeats (more registers)
 *            over a larger shape and wraps (copies) over a smaller one
 *   slice    the parent layout with dim `dim` removed (reduction results)
 *   mma      the accumulator of mma.sync m16n8kK, warps wm x wn (M first);
 *            version 3 is the same placement computed by sm_90a warpgroup
 *            MMA (wgmma m64nNkK): every warp along M, four warps (one
 *            warpgroup) per 64 rows; the instruction's N is the dot's
 *            (at most 256) and its K the operands' (8 tf32, 16 for 16-bit,
 *            32 for 8-bit types), neither part of the placement, so dots of
 *            different operand types share accumulator layouts (an int8
 *            QK^T and an fp16 PV)
 *   dot_op   the A (opidx 0) or B (1) fragments feeding an mma parent;
 *            `kpack` elements share one 32-bit register (2 for 16-bit
 *            types, 4 for 8-bit, 1 for tf32)
 *   shared   shared memory, swizzled in `vec`-element groups: row r's group
 *            g is stored at g ^ ((r / per_phase) % max_phase)
 *
 * Every distributed kind (all but shared) has a linear form (LinLayout): each
 * bit of a thread's register index and of its thread index names one element
 * offset, and an element's row-major index is the XOR of the offsets of the
 * set bits. Shapes are powers of two, so this covers every kind exactly; an
 * offset of 0 means the bit selects a copy (broadcast). Code generation works
 * from the linear form only. */
#include <stdbool.h>
#include <stdint.h>

/* Blocks have at most 16 dims (Triton's own sort, and kernels that copy
 * it, view a block of 2^k elements as k dims of 2); layouts as many.
 * Tensor descriptors stop at TMA's 5. */
#define TK_LAYOUT_MAX_RANK 16

typedef enum {
    LY_BLOCKED, /* spt, tpw, wpc, order */
    LY_SLICE,   /* parent, dim */
    LY_MMA,     /* wm, wn, version */
    LY_DOT_OP,  /* parent (mma), opidx, kpack */
    LY_SHARED,  /* vec, per_phase, max_phase, order */
} LayoutKind;

typedef struct Layout {
    LayoutKind kind;
    int rank;
    int spt[TK_LAYOUT_MAX_RANK], tpw[TK_LAYOUT_MAX_RANK], wpc[TK_LAYOUT_MAX_RANK];
    int order[TK_LAYOUT_MAX_RANK]; /* blocked, shared: dims fastest first */
    const struct Layout *parent;   /* slice, dot_op */
    int dim;                       /* slice */
    int wm, wn;                    /* mma */
    int version;                   /* mma: 3 for wgmma (wn == 1), else mma.sync */
    int opidx, kpack;              /* dot_op */
    int vec, per_phase, max_phase; /* shared */
    int id;                        /* index in the function's table, for printing */
} Layout;

#define TK_LIN_MAX_REG    24
#define TK_LIN_MAX_THREAD 10 /* up to 1024 threads */

typedef struct LinLayout {
    int nreg;    /* a thread holds 1 << nreg registers */
    int nthread; /* log2 of the threads per program */
    int64_t reg[TK_LIN_MAX_REG];
    int64_t thread[TK_LIN_MAX_THREAD]; /* lane bits 0..4, then warp bits */
} LinLayout;

/* The linear form of l for a value of `shape` (rank dims, powers of two) in a
 * program of `threads` threads. False when the shape does not fit the kind
 * (e.g. an mma tile larger than the value) or needs too many registers. */
bool layout_linear(const Layout *l, int rank, const int *shape, int threads, LinLayout *out);
/* The element index held in register `reg` of thread `tid` (for tests and
 * the interpreter's checks). */
int64_t lin_index(const LinLayout *ll, int64_t reg, int64_t tid);
/* Registers 0..v-1 hold v consecutive elements of the last dim: the widest
 * vector one access can move. */
int lin_contiguous(const LinLayout *ll);
/* Registers 0..v-1 hold v consecutive elements of one dim (*dim): the run
 * a vector access moves when that dim is contiguous in memory. */
int lin_run(const LinLayout *ll, int rank, const int *shape, int *dim);
/* Thread bits whose offset is 0 (copies of another thread's elements), and
 * register bits likewise. */
int64_t lin_thread_copies(const LinLayout *ll);
int64_t lin_reg_copies(const LinLayout *ll);
bool lin_equal(const LinLayout *a, const LinLayout *b);

bool layout_equal(const Layout *a, const Layout *b);
/* "blocked<spt=[1,4], tpw=[8,4], wpc=[4,1], order=[1,0]>" and the like. */
void layout_print(StrBuf *sb, const Layout *l);

/* Triton's default blocked layout for a shape: `vec` contiguous elements of
 * the last dim per thread, lanes then warps filling dims fastest first. */
Layout layout_blocked_default(int rank, const int *shape, int vec, int threads);
/* The same with dim `fast` first (contiguous in memory), the others after it
 * from the last dim down: a tile loaded column by column. */
Layout layout_blocked_along(int rank, const int *shape, int fast, int vec, int threads);
/* The warps of an mma accumulator tile: split between M and N so that each
 * warp covers a share as square as the instruction allows. */
Layout layout_mma(int M, int N, int num_warps);
Layout layout_dot_op(const Layout *mma, int opidx, int kpack);
/* An mma accumulator with every warp along M (as many as M has 16-row
 * tiles): each row lives in one warp. */
Layout layout_mma_rows(int M, int num_warps);
/* The accumulator of sm_90a warpgroup MMA: layout_mma_rows, warps along M
 * as far as M has 16-row tiles for them (whole warpgroups: 64 rows each);
 * the other warpgroups stand along N, each computing a contiguous N / wn
 * columns (64 rows on 8 warps: warps=[4,2]). */
Layout layout_wgmma(int M, int num_warps);
/* Whether the operands of a dot with accumulator layout `mma`, of
 * `elem_bytes`-byte elements, must lie K-major (K contiguous) in shared
 * memory: wgmma (version 3) transposes 16-bit tiles only. */
bool layout_needs_kmajor(const Layout *mma, int elem_bytes);
/* The element-index bits that hold dim `dim`'s coordinate. */
int64_t lin_dim_bits(int rank, const int *shape, int dim);
/* A row-major tile in shared memory swizzled in 16-byte chunks, so that the
 * eight rows one ldmatrix reads fall in different banks: rows shorter than
 * 128 bytes share a phase (per_phase rows), and the phase XORs the chunk. */
Layout layout_shared_tile(int rows, int cols, int elem_bytes);

/* ---- dtypes ------------------------------------------------------------- */

/* X(kind, name in the IR text / signatures, bits) */
/* clang-format off */
#define TK_DTYPES(X)                                                           \
    X(DT_VOID, "void", 0)                                                      \
    X(DT_I1, "i1", 1) X(DT_I8, "i8", 8) X(DT_I16, "i16", 16)                   \
    X(DT_I32, "i32", 32) X(DT_I64, "i64", 64)                                  \
    X(DT_U8, "u8", 8) X(DT_U16, "u16", 16) X(DT_U32, "u32", 32)                \
    X(DT_U64, "u64", 64)                                                       \
    /* 8-bit floats, held as their byte: e4m3fn (bias 7, no inf, NaN 0x7f      \
     * and 0xff, max 448), e5m2 (bias 15, IEEE-like, max 57344) and e4m3       \
     * of bias 15 (no inf or NaN, max 1.875; Triton's software format) */      \
    X(DT_F8E4, "fp8e4nv", 8) X(DT_F8E5, "fp8e5", 8)                            \
    X(DT_F8E4B15, "fp8e4b15", 8)                                               \
    X(DT_F16, "fp16", 16) X(DT_BF16, "bf16", 16) X(DT_F32, "fp32", 32)         \
    X(DT_F64, "fp64", 64)                                                      \
    X(DT_PTR, "ptr", 64) /* pointer to global memory; Type.elem says of what */
/* clang-format on */

typedef enum {
#define X(k, n, b) k,
    TK_DTYPES(X)
#undef X
        DT_COUNT
} DType;

const char *dtype_name(DType t);
int dtype_bits(DType t);
bool dtype_is_float(DType t);  /* fp8e4nv..fp64 */
bool dtype_is_fp8(DType t);    /* fp8e4nv, fp8e5, fp8e4b15 */
bool dtype_is_int(DType t);    /* i1..u64 */
bool dtype_is_signed(DType t); /* i8..i64 (i1 counts as unsigned) */
/* The value cast float -> int of IR_CAST, as the GPU computes it (cvt.rzi):
 * truncate, clamp to t's range (an 8-bit t: to 16 bits, then its low byte),
 * NaN -> 0; i1 is x != 0. Never undefined, whatever x is. */
int64_t dtype_float_to_int(DType t, double x);
/* The decimal digits of the largest index of a dim of `size` elements, to
 * which device_print pads an index as Triton does (0 for a size of 1). */
int ir_index_digits(int64_t size);
/* x rounded toward zero to float dtype t, as IR_CAST with CAST_RTZ gives it
 * (cvt.rz): a finite value beyond t's largest finite one gives that one
 * with x's sign; infinities, NaN and signed zeros stay. */
double dtype_round_toward_zero(DType t, double x);
/* The fp8 formats (ir/fp8.c). Encoding fp8e4nv and fp8e5 rounds to nearest
 * even and saturates as cvt.rn.satfinite does: a finite or infinite value
 * beyond the largest finite one gives that value with its sign; NaN gives
 * 0x7f with x's sign. Encoding fp8e4b15 is Triton's conversion from fp16
 * or fp32: x rounded toward zero to fp16, its magnitude clamped to 1.75
 * (NaN and infinities too) and rounded to 3 fraction bits, ties away from
 * zero, x's sign kept. Decoding is exact. */
uint8_t fp8_encode(DType t, double x);
double fp8_decode(DType t, uint8_t bits);
double fp8_round(DType t, double x); /* fp8_decode(fp8_encode(x)) */
double fp8_max(DType t);             /* 448, 57344 or 1.875 */
/* The code of a value the format holds (as fp8_decode gave it): as
 * fp8_encode, but an fp8e5 infinity stays one and fp8e4b15's 1.875, which
 * no conversion gives, keeps its code. For moving values, not converting
 * them. */
uint8_t fp8_bits(DType t, double x);
/* Parses "fp32", "float32", "f32", "i32", "int32", "bf16", "bfloat16",
 * "u8", "uint8", "int1", "bool"...; returns DT_VOID if unknown. */
DType dtype_parse(const char *s);

/* ---- types ----------------------------------------------------------------- */

#define TK_MAX_RANK 16

typedef struct Type {
    DType dt;   /* element dtype; DT_PTR for (blocks of) pointers */
    DType elem; /* pointee dtype when dt == DT_PTR, else DT_VOID */
    int rank;   /* 0 for scalars */
    int shape[TK_MAX_RANK];
} Type;

Type type_scalar(DType dt);
Type type_ptr(DType elem);
Type type_block(DType dt, int rank, const int *shape);
Type type_with_shape(Type elem_of, int rank, const int *shape); /* keeps dt/elem */
Type type_elem(Type t); /* the scalar type of t's elements */
bool type_eq(Type a, Type b);
bool type_same_shape(Type a, Type b);
int64_t type_numel(Type t); /* 1 for scalars */
/* "fp32", "<32x64xfp16>", "ptr<fp32>", "<128xptr<fp32>>" */
const char *type_str(Arena *a, Type t);
void type_print(StrBuf *sb, Type t);

/* ---- op kinds -------------------------------------------------------------- */

/* X(kind, mnemonic, what it does: operands -> results; attributes) */
/* clang-format off */
#define TK_IR_OPS(X)                                                           \
    X(IR_CONST, "const", "-> scalar or splat block; ival (ints, i1) or fval")  \
    X(IR_PROGRAM_ID, "program_id", "-> i32; axis")                             \
    X(IR_NUM_PROGRAMS, "num_programs", "-> i32; axis")                         \
    X(IR_ARANGE, "arange", "-> <N x i32>; ival = start, ival2 = end")          \
    X(IR_SPLAT, "splat", "scalar -> block of the result shape")                \
    X(IR_BROADCAST, "broadcast", "block -> same-rank block, size-1 dims "      \
                                  "stretched")                                 \
    X(IR_EXPAND_DIMS, "expand_dims", "x -> x with a size-1 dim at axis")       \
    X(IR_RESHAPE, "reshape", "x -> same element count, row-major order")       \
    X(IR_TRANS, "trans", "x -> permuted; perm[0..rank) in ints")               \
    X(IR_JOIN, "join", "a, b (same type) -> shape + [2]")                      \
    X(IR_SPLIT, "split", "x with last dim 2 -> two results without it")        \
    X(IR_CAT, "cat", "a, b (same type) -> concatenated along axis 0")          \
    X(IR_PARTNER, "partner", "x -> same type; each element takes the one "   \
                              "whose flat index differs from its own by xor " \
                              "ival (a power of two below the last dim)")    \
    X(IR_GATHER, "gather", "src, index (ints; src's shape but along axis) -> " \
                            "index's shape, src's dtype: src at the element's "\
                            "coordinates with the one along `axis` replaced "  \
                            "by its index; 0 where that is outside src")       \
    X(IR_HISTOGRAM, "histogram", "x (1-D ints), mask (x's shape)|NULL -> "     \
                                  "<ival x i32>: how many elements where mask "\
                                  "holds equal each of 0..ival-1 (others are " \
                                  "not counted)")                              \
    /* elementwise arithmetic; ints wrap, signedness from the dtype */         \
    X(IR_ADD, "add", "a, b -> a + b")                                          \
    X(IR_SUB, "sub", "a, b -> a - b")                                          \
    X(IR_MUL, "mul", "a, b -> a * b")                                          \
    X(IR_DIV, "div", "a, b -> a / b; floats: true division (rounding per "    \
                      "sub: 0 default, 1 div_rn); ints: truncates toward 0")   \
    X(IR_REM, "rem", "a, b -> remainder with the sign of a (C fmod / %)")      \
    X(IR_AND, "and", "a, b -> bitwise and (ints, i1)")                         \
    X(IR_OR, "or", "a, b -> bitwise or")                                       \
    X(IR_XOR, "xor", "a, b -> bitwise xor")                                    \
    X(IR_SHL, "shl", "a, b -> a << b")                                         \
    X(IR_SHR, "shr", "a, b -> a >> b, arithmetic for signed dtypes")           \
    X(IR_MIN, "min", "a, b -> minimum; floats: sub = 1 propagates NaN")        \
    X(IR_MAX, "max", "a, b -> maximum; floats: sub = 1 propagates NaN")        \
    X(IR_UMULHI, "umulhi", "a, b -> high half of the product")                 \
    X(IR_NEG, "neg", "a -> -a")                                                \
    X(IR_NOT, "not", "a -> ~a (ints), !a (i1)")                                \
    X(IR_CMP, "cmp", "a, b -> i1 block; sub = CmpPred; floats ordered "       \
                      "except NE")                                             \
    X(IR_SELECT, "select", "cond(i1), a, b -> cond ? a : b")                   \
    X(IR_FMA, "fma", "a, b, c -> a * b + c, fused")                            \
    X(IR_MATH, "math", "x -> f(x); sub = MathFn; float dtypes")                \
    X(IR_EXTERN, "extern", "args... -> libdevice function str (e.g. "         \
                            "__nv_tanhf), elementwise")                        \
    X(IR_CAST, "cast", "x -> x converted to the result dtype (value cast; "   \
                        "fp->int truncates, int->i1 is != 0); sub = "          \
                        "CastRounding of a float to a narrower float")         \
    X(IR_BITCAST, "bitcast", "x -> same bits, result dtype of equal width")    \
    X(IR_ADDPTR, "addptr", "ptr, offset(int) -> ptr + offset elements")        \
    X(IR_PTR_TO_INT, "ptrtoint", "ptr -> i64")                                 \
    X(IR_INT_TO_PTR, "inttoptr", "i64 -> ptr; result type gives elem")         \
    /* memory */                                                               \
    X(IR_LOAD, "load", "ptr, mask|NULL, other|NULL -> values; str = cache "   \
                        "modifier or NULL, str2 = eviction policy or NULL, "   \
                        "flags & IRF_VOLATILE, IRF_DESC")                      \
    X(IR_STORE, "store", "ptr, value, mask|NULL -> (); str, str2 as load")     \
    X(IR_ATOMIC_RMW, "atomic_rmw", "ptr, value, mask|NULL -> old values; "    \
                                    "sub = AtomicKind, str = sem, str2 = "     \
                                    "scope")                                   \
    X(IR_ATOMIC_CAS, "atomic_cas", "ptr, cmp, value -> old values; str, str2") \
    /* reductions and scans over one axis */                                   \
    X(IR_REDUCE, "reduce", "inputs... -> one result per input with `axis` "   \
                            "removed (rank 0 from 1-D); sub = ReduceKind; "    \
                            "RED_ARGMAX/RED_ARGMIN take one input and give "   \
                            "its i32 index (first on ties; as a left-to-right "\
                            "scan: a NaN at index 0 wins, other NaNs never "   \
                            "do; max/min skip NaN like fmax); RED_CUSTOM: "    \
                            "region 0 has 2n args (acc..., x...) and yields n")\
    X(IR_SCAN, "scan", "inputs... -> same shapes; axis; sub = ScanKind; "     \
                        "flags & IRF_REVERSE; SCAN_CUSTOM: region 0 as "       \
                        "RED_CUSTOM")                                          \
    X(IR_DOT, "dot", "a <MxK>, b <KxN>, acc <MxN>, fresh (i1 scalar)|absent "  \
                     "-> <MxN> acc dtype; acc counts as zeros where fresh "    \
                     "is true; ival 1: may leave its work in flight (read "    \
                     "through dot_wait); flags & IRF_SPARE: its "              \
                     "rings hold a spare slot; sub = DotPrecision")            \
    /* structured control flow */                                              \
    X(IR_FOR, "for", "lb, ub, step, init... -> final...; region 0 args: "     \
                      "(iv, iter...), yields next iter...; ival = "            \
                      "num_stages (0: default); flags & IRF_FLATTEN: "         \
                      "tl.range(flatten=True), or a loop pass_flatten made; "  \
                      "flags & IRF_WARP_SPEC: tl.range(warp_specialize=True) " \
                      "asks, and after pass_pipeline: the loop is warp-"       \
                      "specialized (its TMA copies in the producer op)")       \
    X(IR_WHILE, "while", "init... -> final...; region 0 (before) args = "     \
                          "carried, ends in condition(cond, pass...); region " \
                          "1 (after) args = pass..., yields carried")          \
    X(IR_IF, "if", "cond(i1 scalar) -> results; region 0 then, region 1 else, " \
                    "each yields the results")                                 \
    X(IR_YIELD, "yield", "values... -> (); terminator")                        \
    X(IR_CONDITION, "condition", "cond, values... -> (); ends while's "       \
                                  "before region")                             \
    /* debugging and hints */                                                  \
    X(IR_PRINT, "print", "values... -> (); str = prefix, flags & IRF_HEX")     \
    X(IR_ASSERT, "assert", "cond -> (); str = message, str2 = file, ival = "  \
                            "line")                                            \
    X(IR_RAND, "rand", "seed, offsets -> values; sub = RandKind, ival = "     \
                        "rounds")                                              \
    X(IR_HINT, "hint", "x -> x; sub = HintKind, ints = per-dim values")        \
    X(IR_ASSUME, "assume", "cond -> ()")                                       \
    X(IR_BARRIER, "barrier", "-> (); CTA barrier (debug_barrier)")          \
    X(IR_CONVERT_LAYOUT, "convert_layout", "x -> x in the result's layout "   \
                                            "(pass_layout inserts them)")      \
    /* software pipelining (pass_pipeline, GPU code only) */                  \
    X(IR_ASYNC_COPY, "async_copy", "ptr, mask|NULL, slot(i32) -> (); copies "\
                                    "the pointees into slot `slot` of shared " \
                                    "buffer ival (of ival2 slots), zeros "     \
                                    "where masked off; sub > 0: a private "    \
                                    "ring, runs of sub elements per thread "   \
                                    "(flags & IRF_PACKED: packed)")            \
    X(IR_ASYNC_COMMIT, "async_commit", "-> (); closes a group of copies")     \
    X(IR_ASYNC_WAIT, "async_wait", "-> (); waits until at most ival groups "  \
                                    "are in flight, then (ival2 1: after a "   \
                                    "fence for wgmma's async proxy) a CTA "    \
                                    "barrier, none when sub is 1")             \
    X(IR_SHARED_VIEW, "shared_view", "slot(i32) -> the block in slot `slot` "\
                                      "of shared buffer ival; sub > 0: read "  \
                                      "from a private ring into registers")    \
    X(IR_DOT_WAIT, "dot_wait", "x -> x; waits for the asynchronous dots "      \
                               "(dot with ival 1) that produce x")                \
    /* TMA (sm_90a): tiles of 2-D strided tensors copied whole */              \
    X(IR_TMA_COPY, "tma_copy", "inner, outer (i32), live (i1), slot (i32) -> "\
                                "(); when live, one thread copies the tile at "\
                                "(inner, outer) of tensor map `sub` into slot "\
                                "`slot` of shared buffer ival (of ival2 "      \
                                "slots), zeros out of bounds; the slot's "     \
                                "mbarrier counts its bytes")                   \
    X(IR_TMAP_MAKE, "tmap_make", "base (ptr), stride (int, elements), inner, "\
                                  "outer extent (int) -> (); one thread "      \
                                  "writes device tensor map `sub` of this "    \
                                  "program: the tensor at base, rows stride "  \
                                  "elements apart, the extents bounding its "  \
                                  "contiguous and its outer dim")              \
    X(IR_TMA_WAIT, "tma_wait", "slot (i32) -> (); waits on the mbarrier of "  \
                                "slot `slot` of shared buffer ival (of ival2 " \
                                "slots) until its tile landed; sub 1: on the " \
                                "slot's empty mbarrier until every consumer "  \
                                "thread released it (the producer's wait)")    \
    X(IR_TMA_STORE, "tma_store", "value, inner, outer (i32) -> (); the 2-D "   \
                                  "tile `value` goes through shared memory "   \
                                  "and one thread writes it at (inner, "      \
                                  "outer) of tensor map `sub`, dropping what " \
                                  "falls out of bounds; the shared memory is " \
                                  "free again after it (flags & IRF_NONNEG: " \
                                  "the origin is never negative)")             \
    /* warp specialization (sm_90a): a TMA producer beside the consumers */    \
    X(IR_TMA_RELEASE, "tma_release", "slot (i32), live (i1) -> (); when "      \
                                      "live, every consumer thread arrives on " \
                                      "the empty mbarrier of slot `slot` of "  \
                                      "shared buffer ival (of ival2 slots): "  \
                                      "the tiles there were read")             \
    X(IR_PRODUCER, "producer", "-> (); first op of the kernel body: region 0 " \
                                "(ending in yield) runs in one thread of an "  \
                                "extra warpgroup, which then exits; the ops "  \
                                "after it run in the num_warps consumer "      \
                                "warps only")                                 \
    /* inline PTX and grid dependency control */                              \
    X(IR_INLINE_ASM, "inline_asm", "args... (one shape) -> one result per "   \
                                    "dtype, that shape; str = the PTX, str2 = " \
                                    "constraints, ival = pack (elements per "  \
                                    "call), flags & IRF_PURE")                 \
    X(IR_GDC, "gdc", "-> (); sub 0: griddepcontrol.wait, 1: "                  \
                     "griddepcontrol.launch_dependents (sm_90+)")
/* clang-format on */

typedef enum {
#define X(k, m, d) k,
    TK_IR_OPS(X)
#undef X
        IR_OP_COUNT
} IrKind;

typedef enum { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } CmpPred;
/* How an IR_CAST rounds a float to a narrower float (Triton's
 * fp_downcast_rounding). Printed as `rtz` after the operand. */
typedef enum {
    CAST_RTNE, /* to nearest, ties to even: every conversion's default */
    CAST_RTZ,  /* toward zero (cvt.rz): only fp32 -> fp16, bf16, fp8e5 */
} CastRounding;

/* clang-format off */
#define TK_MATH_FNS(X)                                                         \
    X(MATH_EXP, "exp") X(MATH_EXP2, "exp2") X(MATH_LOG, "log")                 \
    X(MATH_LOG2, "log2") X(MATH_SQRT, "sqrt") X(MATH_RSQRT, "rsqrt")           \
    X(MATH_SIN, "sin") X(MATH_COS, "cos") X(MATH_ABS, "abs")                   \
    X(MATH_FLOOR, "floor") X(MATH_CEIL, "ceil") X(MATH_ERF, "erf")             \
    X(MATH_TANH, "tanh") X(MATH_SQRT_RN, "sqrt_rn")
/* clang-format on */

typedef enum {
#define X(k, n) k,
    TK_MATH_FNS(X)
#undef X
        MATH_COUNT
} MathFn;

/* RED_ANY: every element along the axis is the same (tl.topk's equal runs):
 * any of them is the result, taken with no exchange between threads */
typedef enum { RED_SUM, RED_MAX, RED_MIN, RED_ARGMAX, RED_ARGMIN, RED_CUSTOM, RED_ANY } ReduceKind;
typedef enum { SCAN_SUM, SCAN_CUSTOM } ScanKind;
typedef enum { ATOM_ADD, ATOM_MAX, ATOM_MIN, ATOM_XCHG, ATOM_AND, ATOM_OR, ATOM_XOR } AtomicKind;
/* An atomic's memory semantics and scope (Triton's sem= and scope=), kept in
 * op->str and op->str2 by these names; sema fills in the defaults (acq_rel,
 * gpu) and the verifier checks both are there. */
/* clang-format off */
#define TK_MEM_SEMS(X)                                                         \
    X(SEM_ACQ_REL, "acq_rel")  /* acquire and release (the default) */        \
    X(SEM_ACQUIRE, "acquire")  /* later accesses stay after it */             \
    X(SEM_RELEASE, "release")  /* earlier accesses stay before it */          \
    X(SEM_RELAXED, "relaxed")  /* atomic, no ordering */
/* clang-format on */
/* clang-format off */
#define TK_MEM_SCOPES(X)                                                       \
    X(SCOPE_GPU, "gpu")        /* all threads of the device (the default) */  \
    X(SCOPE_CTA, "cta")        /* the threads of one program */               \
    X(SCOPE_SYS, "sys")        /* the device, the host and peer devices */
/* clang-format on */

typedef enum {
#define X(k, n) k,
    TK_MEM_SEMS(X)
#undef X
        SEM_COUNT
} MemSem;
typedef enum {
#define X(k, n) k,
    TK_MEM_SCOPES(X)
#undef X
        SCOPE_COUNT
} MemScope;
/* Name -> kind; -1 for NULL or an unknown name. */
int mem_sem_parse(const char *s);
int mem_scope_parse(const char *s);
const char *mem_sem_name(MemSem m);
const char *mem_scope_name(MemScope m);

typedef enum { DOT_IEEE, DOT_TF32, DOT_TF32X3 } DotPrecision;
typedef enum { RAND_UNIFORM, RAND_NORMAL, RAND_INT, RAND_INT4X } RandKind;
typedef enum { HINT_MULTIPLE_OF, HINT_MAX_CONTIGUOUS, HINT_MAX_CONSTANCY } HintKind;

enum {
    IRF_VOLATILE = 1 << 0,
    IRF_HEX = 1 << 1,
    IRF_REVERSE = 1 << 2,
    IRF_FLATTEN = 1 << 3,
    IRF_WARP_SPEC = 1 << 4, /* for: warp-specialized (see IR_FOR) */
    IRF_PURE = 1 << 5,      /* inline_asm: no side effects (may be merged, removed) */
    IRF_NONNEG = 1 << 6,    /* tma_copy, tma_store: the origin is never negative (no check) */
    IRF_PACKED = 1 << 7,    /* private async_copy, shared_view: the packed ring (IrPlan) */
    IRF_SPARE = 1 << 8,     /* async dot: its rings hold a slot beyond the stages */
    IRF_ACROSS = 1 << 10,   /* async_copy: its ring holds the tile transposed to the way the
                               pointer runs, one 4-byte element a copy (IrPlan.across) */
    IRF_DESC = 1 << 9,      /* load: a tensor descriptor's (desc.load), whose tensor keeps
                               TMA's alignment (a device tensor map may copy it) */
};

const char *ir_kind_name(IrKind k);
const char *math_fn_name(MathFn f);

/* ---- values, ops, blocks, functions ------------------------------------- */

typedef struct IrOp IrOp;
typedef struct IrBlock IrBlock;

typedef struct IrValue {
    int id; /* dense per function: index for side tables */
    Type type;
    IrOp *def;            /* defining op, or NULL for a block argument */
    IrBlock *owner;       /* block whose argument this is (def == NULL) */
    int index;            /* result index in def, or argument index in owner */
    const char *name;     /* source variable name, for printing; may be NULL */
    const Layout *layout; /* blocks after pass_layout; NULL before and for scalars */
} IrValue;

/* The software pipelining plan (passes/pipe_plan.c): what pass
 * pipeline_plan decided for a loop, its loads and its dot, which the
 * rewrite passes (pipeline_rings, pipeline_async, pipeline_ws) then carry
 * out. Printed as `pipe(...)` after an op's other attributes. */
typedef enum {
    PIPE_NONE,      /* no plan */
    PIPE_LOOP,      /* for: pipelined, copies run stages-1 iterations ahead
                     * into rings of `slots` slots; ws: a producer warpgroup
                     * issues them (warp specialization) */
    PIPE_CP_ASYNC,  /* load: cp.async into a shared ring `buffer` */
    PIPE_PRIVATE,   /* load: cp.async into a private ring `buffer`, runs
                     * of `run` elements per thread. For both, refill: the
                     * ring has stages-1 slots, and each iteration, once
                     * its slot was read into registers (by every warp: a
                     * barrier), copies into that slot again */
    PIPE_TMA,       /* load: TMA into a shared ring `buffer`, by tensor map `tmap` */
    PIPE_ASYNC_DOT, /* dot: left in flight into the next iteration, at most
                     * `pending` wgmma groups (1) outstanding at its wait */
    PIPE_RESIDENT,  /* load outside loops whose value only wgmma dots in
                     * loops read (or mma.sync dots whose warps each hold
                     * it whole): cp.async once into shared buffer
                     * `buffer` (one slot), which the dots then read in place
                     * each iteration instead of holding it in registers */
} PipeMech;
typedef struct IrPlan {
    PipeMech mech;
    int stages, slots; /* PIPE_LOOP */
    bool ws;           /* PIPE_LOOP */
    int buffer;        /* loads */
    bool refill;       /* PIPE_CP_ASYNC, PIPE_PRIVATE */
    bool across;       /* PIPE_CP_ASYNC: the ring holds the tile transposed to
                        * the way its pointer runs (a tf32 B read along N that
                        * wgmma takes only along K), filled one 4-byte element
                        * a copy */
    int run;           /* PIPE_PRIVATE */
    bool packed;       /* PIPE_PRIVATE: a 1-D load whose threads hold copies
                        * of its elements: each slot holds each element once,
                        * at its index, copied by the thread holding its
                        * first copy and read by all behind the CTA barrier
                        * that the loop's shared rings already need */
    int tmap;          /* PIPE_TMA */
    int pending;       /* PIPE_ASYNC_DOT */
    bool spare;        /* PIPE_ASYNC_DOT: the rings it reads hold a slot
                        * beyond the stages (pipe_plan.c's ring_slots) */
} IrPlan;

/* Hints the source states about an op's result, as Triton keeps them: a
 * tl.multiple_of / tl.max_contiguous / tl.max_constancy of a value puts
 * its numbers on the op that defines the value, so every use sees them.
 * v[HintKind][d]: the stated value for dim d (a scalar uses d = 0), 0 when
 * none is stated. The axis analysis takes them over what it derives.
 * Printed as `hints(...)` after the plan. */
typedef struct IrHints {
    int v[3][TK_MAX_RANK];
} IrHints;

struct IrOp {
    IrKind kind;
    Span span;
    IrValue **operands; /* entries may be NULL where the kind says "|NULL" */
    int nops;
    IrValue **results;
    int nres;
    IrBlock **regions;
    int nregions;
    /* attributes; which ones mean something depends on the kind */
    int axis;
    int sub;
    int flags;
    int64_t ival, ival2;
    double fval;
    const char *str, *str2;
    int ints[TK_MAX_RANK];
    int nints;
    IrPlan plan;   /* software pipelining plan (see above) */
    IrHints hints; /* stated by the source (see above) */
    /* position */
    IrOp *prev, *next;
    IrBlock *parent;
};

struct IrBlock {
    IrValue **args;
    int nargs, args_cap;
    IrOp *first, *last;
    IrOp *parent; /* op owning this region; NULL for the function body */
};

/* A runtime parameter of the kernel (constexprs are gone by now). */
typedef struct IrParam {
    const char *name;
    Type type;        /* scalar or pointer */
    int divisibility; /* 16 when the value (pointer address or integer) is known divisible by 16, else 1 */
    Span span;
} IrParam;

/* A TMA tensor map (pass_pipeline) that the launcher builds from the
 * kernel's arguments and passes after the parameters: a 2-D tensor at a
 * pointer parameter, dim 0 contiguous, dim 1 `stride` elements apart (an
 * integer parameter, or the constant stride_const where stride is -1). An
 * extent is a constant times the product of up to IR_TMA_FACTORS integer
 * parameters, plus a constant (param[0] -1: the constant alone; IR_TMA_UNBOUNDED: no mask
 * bounds the dim); unused factors are -1. A device map is one the kernel
 * writes itself where base, stride or extents are values it computes (a
 * descriptor made from a pointer loaded from a table): each program writes
 * its own 128 bytes of a scratch buffer the launcher passes after the maps
 * (IR_TMAP_MAKE before the loop that copies through it). */
enum { IR_TMA_UNBOUNDED = -2, IR_MAX_TMAPS = 8, IR_TMA_FACTORS = 3 };
typedef struct IrTmapExtent {
    int param[IR_TMA_FACTORS];
    int64_t mul; /* the product's coefficient, at least 1 */
    int64_t add;
} IrTmapExtent;
typedef struct IrTmap {
    bool device;            /* built by the kernel (IR_TMAP_MAKE), not by the launcher: base,
                               stride and extents are unused (-1, 0, unbounded) */
    int base;               /* parameter index of the pointer */
    int stride;             /* parameter index of dim 1's stride, in elements; -1: stride_const */
    int64_t stride_const;   /* dim 1's stride where it is a constant */
    DType dt;               /* element type (8- or 16-bit; 32-bit for stores too) */
    IrTmapExtent extent[2]; /* dim 0, dim 1 */
    int box[2];             /* the box one copy instruction moves: dim 0, dim 1 */
    int swizzle;            /* bytes of the swizzle pattern: 32, 64 or 128 */
    int cols;               /* the tile's width along dim 0 (a multiple of box[0]) */
} IrTmap;

/* Whether two tensor maps describe the same copies. */
bool ir_tmap_equal(const IrTmap *a, const IrTmap *b);
/* Bytes of the tile one load through the map fills (cols x box[1]). */
int64_t ir_tmap_tile_bytes(const IrTmap *m);

/* An inlined @jit helper call: the ops sema made inside it carry its
 * index in their span's scope. Line tables (codegen/lines.c) turn the chain
 * of calls into inlined-at locations. */
typedef struct IrScope {
    const Source *src; /* the file the helper is written in */
    const char *name;  /* the helper's name */
    int line;          /* the line of its `def` */
    Span call;         /* the call, in the parent scope (call.scope) */
} IrScope;

typedef struct IrFunc {
    const char *name; /* kernel name, mangled with nothing: the PTX entry */
    Arena *arena;
    const Source *src;
    Span span;
    IrParam *params;
    int nparams;
    IrBlock *body; /* its args are the parameters, in order */
    int num_warps;
    int num_stages;
    const char *arch; /* the target it is specialised for; NULL: the interpreter */
    int next_id;
    Layout **layouts; /* the distinct layouts of its values (pass_layout) */
    int nlayouts;
    int nbuffers;  /* shared ring buffers of pass_pipeline */
    bool tma;      /* pass_pipeline may add tensor maps (the launcher builds them) */
    IrTmap *tmaps; /* the tensor maps, passed after the parameters in order */
    int ntmaps;
    int producer_warps; /* warps beyond num_warps: 4 when an IR_PRODUCER runs in them, else 0 */
    /* CTAs per cluster asked for (Triton's num_ctas): 0 or 1 none, 2 pairs
     * of neighbouring programs along x share their TMA tiles (codegen/cluster.c) */
    int num_ctas;
    /* inlined helper calls (scopes[0] is unused: scope 0 is the kernel),
     * and the scope new ops with a scope-0 span are put in */
    IrScope *scopes;
    int nscopes, scopes_cap, cur_scope;
} IrFunc;

/* How many of f's tensor maps the kernel writes itself (IrTmap.device). */
int ir_tmap_devices(const IrFunc *f);
/* The kernel parameter a launcher-built map i comes in: after the runtime
 * parameters and the launcher-built maps before it (device maps take none). */
int ir_tmap_param(const IrFunc *f, int i);

/* ---- inline asm (ir/asm.c) ----------------------------------------------- */

/* The register operands of an inline_asm op, as its constraint string
 * ("=r,=r,r,l,~{memory}") names them: outputs, then inputs, each one PTX
 * register of letter h (16 bits), r (32), l (64), f (fp32) or d (fp64); an
 * input tied to output k ("0") takes k's letter. A call passes `pack`
 * elements of each argument: narrow ones (below 32 bits) several to a
 * register, as Triton packs them. */
enum { IR_ASM_MAX_REGS = 64 };
typedef struct IrAsmRegs {
    int nout, nin;
    char letter[IR_ASM_MAX_REGS]; /* outputs first */
} IrAsmRegs;
/* Elements of dtype dt in one register when a call takes `pack` of them. */
int ir_asm_per_reg(DType dt, int pack);
/* Reads op's constraints and checks them against its arguments, results
 * and pack; false with the reason in why[0..n) when they do not fit. */
bool ir_asm_regs(const IrOp *op, IrAsmRegs *out, char *why, size_t n);

/* ---- building ------------------------------------------------------------- */

IrFunc *ir_func_new(Arena *a, const char *name, const Source *src);
IrBlock *ir_block_new(IrFunc *f, IrOp *parent);
IrValue *ir_block_add_arg(IrFunc *f, IrBlock *b, Type t, const char *name);
/* Appends a runtime parameter: an IrParam entry plus the body argument
 * holding its value (returned). divisibility: 16 or 1. */
IrValue *ir_add_param(IrFunc *f, const char *name, Type t, int divisibility, Span sp);
/* Records an inlined call of helper `name` (defined at line `line` of src)
 * made at `call` from the current scope; returns its index (0 when out of
 * memory: its ops are then attributed to the caller). */
int ir_scope_add(IrFunc *f, const Source *src, const char *name, int line, Span call);
/* A new op, not yet in any block; results get fresh values of the given
 * types. A span with scope 0 takes f->cur_scope. */
IrOp *ir_op_new(IrFunc *f, IrKind k, Span sp, IrValue *const *ops, int nops, const Type *res,
                int nres);
IrBlock *ir_op_add_region(IrFunc *f, IrOp *op);
void ir_append(IrBlock *b, IrOp *op);
void ir_insert_before(IrOp *at, IrOp *op);
void ir_remove(IrOp *op);
/* Replaces every use of `from` inside `scope` (recursively) with `to`. */
void ir_replace_uses(IrBlock *scope, IrValue *from, IrValue *to);

/* A cursor for emitting ops in order: appends to blk (or before `before`). */
typedef struct IrBuilder {
    IrFunc *f;
    IrBlock *blk;
    IrOp *before; /* NULL: append at the end of blk */
} IrBuilder;
IrOp *ir_build(IrBuilder *b, IrKind k, Span sp, IrValue *const *ops, int nops, const Type *res,
               int nres);
/* Builds a copy of op (its regions too) at b. Operands are taken through
 * map, indexed by value id below nmap (NULL entries: the value itself);
 * the copy's results and region arguments are entered in it. */
IrOp *ir_clone(IrBuilder *b, const IrOp *op, IrValue **map, int nmap);
/* Shorthands returning the single result. */
IrValue *ir_const_int(IrBuilder *b, Span sp, Type t, int64_t v);
IrValue *ir_const_float(IrBuilder *b, Span sp, Type t, double v);
IrValue *ir_unary(IrBuilder *b, IrKind k, Span sp, IrValue *x, Type res);
IrValue *ir_binary(IrBuilder *b, IrKind k, Span sp, IrValue *x, IrValue *y, Type res);
/* The i32 index of a loop's iteration from its induction value iv, first
 * value lb and constant step: (iv - lb) / step. */
IrValue *ir_iteration_index(IrBuilder *b, Span sp, IrValue *iv, IrValue *lb, int64_t step);
/* The i32 slot after x in a ring of n: x + 1, or 0 at n. */
IrValue *ir_next_slot(IrBuilder *b, Span sp, IrValue *x, int n);
/* A new `for` in place of `loop` carrying n more values, which start from
 * init[] and are the body's arguments args[] (named after init[]); the
 * loop's uses read the new one's results. */
IrOp *ir_for_carry_more(IrFunc *f, IrOp *loop, IrValue **init, int n, IrValue **args);
/* op reads x after its operands (a yield carrying one more value); out of
 * memory leaves it as it was, with the arena marked. */
void ir_append_operand(IrFunc *f, IrOp *op, IrValue *x);

/* ---- reading -------------------------------------------------------------- */

/* Walks every op of a block in order, entering regions first-to-last
 * (pre-order); stops early when fn returns false. */
typedef bool (*IrWalkFn)(IrOp *op, void *ctx);
bool ir_walk(IrBlock *b, IrWalkFn fn, void *ctx);
/* Arithmetic, comparison, select, math and cast ops: each result element
 * comes from the same element of every operand. */
bool ir_kind_elementwise(IrKind k);
/* Stores, atomics, prints, barriers, copies, volatile loads, impure asm:
 * what must run as written, itself or in its regions. */
bool ir_op_has_effect(const IrOp *op);
/* The number of an "sm_NN" or "sm_NNa" target (90 for sm_90a); 0 for none
 * (the interpreter) or a name of another form. */
int ir_arch_sm(const char *arch);
/* Whether atomic op on elements of dt has a vector form on sm: float adds
 * (.v2/.v4 of f32, .v2 to .v8 of f16 and bf16) from sm_90 on; every other
 * atomic takes one element an instruction. */
bool ir_atomic_vectorizes(const IrOp *op, DType dt, int sm);
/* How many operand slots of the ops in b (regions included) read x. */
int ir_count_reads(IrBlock *b, const IrValue *x);
/* Whether x is made in b or in a block nested in it (an op's result or a
 * region's argument there). */
bool ir_defined_in(const IrValue *x, const IrBlock *b);
/* The index of v among op's results, or -1. */
int ir_result_index(const IrOp *op, const IrValue *v);
/* Whether v is a constant zero, splatted or converted. */
bool ir_is_zero(const IrValue *v);
/* Gives values dense ids 0..next_id-1 again (after passes removed some), in
 * definition order: block args, then each op's results, then its regions. */
void ir_renumber(IrFunc *f);

/* Stable text form (--emit=ir). */
void ir_print(StrBuf *out, const IrFunc *f);
/* The function's copy of layout l (one per distinct layout, numbered in
 * order of first use); NULL when the arena is exhausted. */
const Layout *ir_layout_intern(IrFunc *f, const Layout *l);
/* Checks the invariants above; reports "internal error" diagnostics. */
bool ir_verify(const IrFunc *f, Diag *d);
/* ir_verify reporting diagnostics of the given kind: DIAG_ERROR for IR
 * that came from text, where a broken invariant is the text's fault. */
bool ir_verify_as(const IrFunc *f, Diag *d, DiagKind kind);
/* Reads the text ir_print writes (ir/parse.c): the kernels of src, built
 * in arena a and verified, into *out (an arena array). Returns how many,
 * or -1 after reporting errors to d. */
int ir_parse(const Source *src, Arena *a, Diag *d, IrFunc ***out);
/* The layout invariants, once pass_layout has run (verify_layout.c). */
bool ir_verify_layouts(const IrFunc *f, Diag *d);

/* ---- launch settings (launch.c) ------------------------------------------------ */

/* Triton's defaults for what a kernel is compiled for. */
enum { TK_DEFAULT_NUM_WARPS = 4, TK_DEFAULT_NUM_STAGES = 3 };
#define TK_DEFAULT_ARCH "sm_80"

/* The one check of a kernel's launch settings: replaces 0 by the default
 * and accepts num_warps a power of two from 1 to 32 and num_stages >= 0.
 * false with the message (each setting named after `field`, e.g.
 * "configs[2].", which may be NULL) in why. */
bool ir_launch_settings(int *num_warps, int *num_stages, const char *field, char *why, size_t cap);
/* The check of num_ctas (Triton's CTAs per cluster): 0 becomes 1, and 1 or
 * 2 are accepted; false with the message (named after `field`) in why. */
bool ir_launch_ctas(int *num_ctas, const char *field, char *why, size_t cap);

#endif
