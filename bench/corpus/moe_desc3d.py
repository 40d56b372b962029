"""Expert GEMM of a mixture-of-experts layer over tensor descriptors, as
MoE kernels that keep all experts' weights in one [E, N, K] tensor write
it: the tokens arrive sorted by expert (expert_offsets[e] .. [e+1] are
expert e's rows of x), the weights are read through a 3-D descriptor with
a [1, BLOCK_N, BLOCK_K] block and reshaped to a 2-D tile, x and the output
through 2-D descriptors made per expert from the offsets. bf16 in and
out, fp32 accumulation; a program per (M tile, N tile, expert), leaving
early past its expert's rows."""
import torch
import triton
import triton.language as tl


@triton.jit
def expert_gemm_desc3d(x_ptr, w_ptr, out_ptr, expert_offsets, N, K, E,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    expert = tl.program_id(2)
    first = tl.load(expert_offsets + expert)
    rows = tl.load(expert_offsets + expert + 1) - first
    if pid_m * BLOCK_M >= rows:
        return
    x_desc = tl.make_tensor_descriptor(x_ptr + first * K, shape=[rows, K], strides=[K, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    w_desc = tl.make_tensor_descriptor(w_ptr, shape=[E, N, K], strides=[N * K, K, 1],
                                       block_shape=[1, BLOCK_N, BLOCK_K])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        x = x_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        w = w_desc.load([expert, pid_n * BLOCK_N, k * BLOCK_K]).reshape(BLOCK_N, BLOCK_K)
        acc = tl.dot(x, w.T, acc)
    o_desc = tl.make_tensor_descriptor(out_ptr + first * N, shape=[rows, N], strides=[N, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    o_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.bfloat16))


def expert_gemm(x, w, expert_offsets, max_rows):
    E, N, K = w.shape
    out = torch.empty((x.shape[0], N), device=x.device, dtype=x.dtype)
    triton.set_allocator(lambda size, alignment, stream:
                         torch.empty(size, device=x.device, dtype=torch.int8))
    grid = (triton.cdiv(max_rows, 128), triton.cdiv(N, 128), E)
    expert_gemm_desc3d[grid](x, w, out, expert_offsets, N, K, E, BLOCK_M=128, BLOCK_N=128,
                             BLOCK_K=64, num_warps=8, num_stages=3)
    return out
