# difftest: {"version":1,"kernel":"fp16_bf16","grid":[1],"num_warps":4,"constexprs":{"BLOCK":8},"signature":"*fp16,*bf16,*fp32","args":[{"name":"h_ptr","kind":"buffer","dtype":"fp16","size":8,"init":{"kind":"fill","value":0.0009765625},"role":"in"},{"name":"b_ptr","kind":"buffer","dtype":"bf16","size":8,"init":{"kind":"fill","value":304.0},"role":"in"},{"name":"out_ptr","kind":"buffer","dtype":"fp32","size":8,"init":{"kind":"fill","value":0},"role":"out","tol":{"class":"fp32","rtol":2.5e-07,"atol":1e-07}}],"features":[]}
import triton
import triton.language as tl


# fp16 (op) bf16: Triton's computation_type_impl gives fp16 (rule 3: 'if one
# operand is half, the other is converted to half'); tk gives fp32 (and
# docs/LANGUAGE.md says fp32), so tk stores 304.0009765625 where Triton stores
# 304.0, and an `if` that assigns h + b in one branch and an fp16 value in the
# other is rejected by tk.
@triton.jit
def fp16_bf16(h_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    h = tl.load(h_ptr + offs)
    b = tl.load(b_ptr + offs)
    # Triton: fp16 with bf16 computes in fp16: 304.0
    tl.store(out_ptr + offs, h + b)
