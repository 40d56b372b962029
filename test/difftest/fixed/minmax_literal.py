# difftest: {"version":1,"kernel":"minmax_literal","grid":[1],"num_warps":4,"constexprs":{"BLOCK":8},"signature":"*i8,*i32","args":[{"name":"x_ptr","kind":"buffer","dtype":"i8","size":8,"init":{"kind":"fill","value":100},"role":"in"},{"name":"out_ptr","kind":"buffer","dtype":"i32","size":8,"init":{"kind":"fill","value":0},"role":"out","tol":{"class":"exact","rtol":0.0,"atol":0.0}}],"features":[]}
import triton
import triton.language as tl


# tl.maximum/tl.minimum with a literal operand: Triton's core.maximum calls
# to_tensor on both operands, so `tl.maximum(x_int8, 3)` is int32 (and
# `tl.maximum(x_fp16, 0.5)` is fp32); tk keeps int8 (fp16), and the + 100
# wraps: tk stores -56, Triton 200.
@triton.jit
def minmax_literal(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # Triton: the literal 3 is an int32 tensor, so the maximum is int32: 200
    tl.store(out_ptr + offs, tl.maximum(x, 3) + 100)
