# A package file with a syntax error inside a jit function.
import triton
import triton.language as tl


def host_side(n):
    return [i * i for i in range(n)]


@triton.jit
def broken(x):
    return x +* 2
