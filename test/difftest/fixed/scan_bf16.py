# difftest: {"version":1,"kernel":"scan_bf16","grid":[1],"num_warps":4,"constexprs":{"BLOCK":8},"signature":"*bf16,*fp32","args":[{"name":"x_ptr","kind":"buffer","dtype":"bf16","size":8,"init":{"kind":"fill","value":1.0},"role":"in"},{"name":"out_ptr","kind":"buffer","dtype":"fp32","size":8,"init":{"kind":"fill","value":0},"role":"out","tol":{"class":"fp32","rtol":2.5e-07,"atol":1e-07}}],"features":[]}
import triton
import triton.language as tl


# tl.cumsum/tl.cumprod of bf16: Triton widens the input to fp32
# (_promote_bfloat16_to_float32) and the scan is fp32; tk scans in bf16, where
# 256 + 1 rounds back to 256.
@triton.jit
def scan_bf16(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    x = tl.where(offs == 0, x * 256, x)
    # Triton: cumsum widens bf16 to fp32: 256, 257, 258, ...
    tl.store(out_ptr + offs, tl.cumsum(x, axis=0))
