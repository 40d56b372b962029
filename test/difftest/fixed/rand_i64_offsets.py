# difftest: {"version":1,"kernel":"rand_i64_offsets","grid":[1],"num_warps":4,"constexprs":{"BLOCK":8},"signature":"*u32","args":[{"name":"out_ptr","kind":"buffer","dtype":"u32","size":8,"init":{"kind":"fill","value":0},"role":"out","tol":{"class":"exact","rtol":0.0,"atol":0.0}}],"features":[]}
import triton
import triton.language as tl


# tl.randint with int64 offsets: Triton's randint4x splits the offset into two
# 32-bit counters (lo, hi) and runs Philox-4x32, so for offsets below 2**32 the
# stream is the one of int32 offsets (and the result is uint32); tk runs a
# 64-bit Philox on the whole offset (uint64 results, another stream).
@triton.jit
def rand_i64_offsets(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK).to(tl.int64)
    tl.store(out_ptr + offs, tl.randint(1234, offs))
