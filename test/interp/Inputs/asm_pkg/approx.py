import triton
import triton.language as tl


@triton.jit
def fast_copy(x):
    return tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32,
                                     is_pure=True, pack=1)
