# difftest: {"version":1,"kernel":"minmax_bf16","grid":[1],"num_warps":4,"constexprs":{"BLOCK":8},"signature":"*bf16,*bf16,*fp32","args":[{"name":"a_ptr","kind":"buffer","dtype":"bf16","size":8,"init":{"kind":"fill","value":1.0},"role":"in"},{"name":"c_ptr","kind":"buffer","dtype":"bf16","size":8,"init":{"kind":"fill","value":0.00390625},"role":"in"},{"name":"out_ptr","kind":"buffer","dtype":"fp32","size":8,"init":{"kind":"fill","value":0},"role":"out","tol":{"class":"fp32","rtol":2.5e-07,"atol":1e-07}}],"features":[]}
import triton
import triton.language as tl


# tl.maximum/tl.minimum of bf16: Triton widens bf16 operands to fp32
# (_promote_bfloat16_to_float32), so the result and what follows is fp32;
# tk keeps bf16 and rounds 1 + 2**-8 to 1.0.
@triton.jit
def minmax_bf16(a_ptr, c_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    c = tl.load(c_ptr + offs)
    # Triton: bf16 operands of maximum are widened to fp32, the sum is fp32: 1.00390625
    tl.store(out_ptr + offs, tl.maximum(a, a) + c)
