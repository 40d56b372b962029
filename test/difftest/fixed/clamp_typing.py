# difftest: {"version":1,"kernel":"clamp_typing","grid":[1],"num_warps":4,"constexprs":{"BLOCK":8},"signature":"*fp16,*fp32","args":[{"name":"x_ptr","kind":"buffer","dtype":"fp16","size":8,"init":{"kind":"fill","value":7.0},"role":"in"},{"name":"out_ptr","kind":"buffer","dtype":"fp32","size":8,"init":{"kind":"fill","value":0},"role":"out","tol":{"class":"fp32","rtol":2.5e-07,"atol":1e-07}}],"features":[]}
import triton
import triton.language as tl


# tl.clamp with literal bounds on fp16 (or bf16): Triton makes the bounds
# fp32 tensors (and widens bf16), so the clamp is fp32; tk keeps fp16 and
# 3.0 - 4096 rounds to -4092.
@triton.jit
def clamp_typing(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    # Triton: the bounds are fp32 tensors, the clamp is fp32: 3.0 - 4096 = -4093.0
    tl.store(out_ptr + offs, tl.clamp(x, -0.5, 3.0) - 4096)
