# A jit helper in a file of its own: its ops keep this file's lines in the
# line tables of a kernel that inlines it (test/codegen/line_info.tk).
import triton
import triton.language as tl


@triton.jit
def scale_sub(a, b):
    return a * 0.5 - b
