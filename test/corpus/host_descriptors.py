"""A matmul whose operands arrive as tensor descriptors built on the host,
the way Triton's persistent-matmul tutorial passes them: the launcher wraps
each tensor with TensorDescriptor.from_tensor(t, block_shape) and the kernel
reads and writes whole tiles through them, edge tiles clipped at the
shape."""
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def matmul_host_desc(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, off_n])
        acc = tl.dot(a, b, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))


def matmul(a, b, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32):
    """The host side: a (M, K) @ b (K, N) in fp16."""
    import torch
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=torch.float16, device=a.device)
    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])
    b_desc = TensorDescriptor.from_tensor(b, [BLOCK_K, BLOCK_N])
    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N])
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    matmul_host_desc[grid](a_desc, b_desc, c_desc, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K)
    return c
