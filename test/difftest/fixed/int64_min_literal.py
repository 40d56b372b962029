# difftest: {"version":1,"kernel":"int64_min_literal","grid":[1],"num_warps":4,"constexprs":{"BLOCK":8},"signature":"*i64,*i64","args":[{"name":"x_ptr","kind":"buffer","dtype":"i64","size":8,"init":{"kind":"arange"},"role":"in"},{"name":"out_ptr","kind":"buffer","dtype":"i64","size":8,"init":{"kind":"fill","value":0},"role":"out","tol":{"class":"exact","rtol":0.0,"atol":0.0}}],"features":[]}
import triton
import triton.language as tl


# The literal -9223372036854775808 (INT64_MIN, a Python int in Triton) is
# rejected by tk: "constexpr integer overflow in '-'" (the negation of
# 9223372036854775808 is computed in int64); -9223372036854775807 - 1 works.
@triton.jit
def int64_min_literal(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.maximum(x, -9223372036854775808))
