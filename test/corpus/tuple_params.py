# Tuple kernel arguments, as kernel libraries pass them since Triton took
# tuples as parameters: an attention-score tile whose Q and K pointers come
# as one tuple and whose strides come as a nested tuple (the unit strides
# specialise to the constant 1); a foreach-style add over tuples of
# tensors (one launch for a whole list of parameters, as multi-tensor
# optimizers do); a per-tensor sum of squares over (pointer, length)
# pairs; and a residual add whose optional tensors travel in a tuple with
# None for the absent ones.
import triton
import triton.language as tl


@triton.jit
def _tile_load(base, strides, rows, cols, n_rows, n_cols):
    ptrs = base + rows[:, None] * strides[0] + cols[None, :] * strides[1]
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    return tl.load(ptrs, mask=mask, other=0.0)


@triton.jit
def qk_scores_kernel(qk, out_ptr, strides, seq_q, seq_k, head_dim, sm_scale,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    q_ptr, k_ptr = qk
    q_strides, k_strides, out_strides = strides
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for d0 in range(0, head_dim, BLOCK_D):
        q = _tile_load(q_ptr, q_strides, offs_m, d0 + offs_d, seq_q, head_dim)
        k = _tile_load(k_ptr, k_strides, offs_n, d0 + offs_d, seq_k, head_dim)
        acc = tl.dot(q, tl.trans(k), acc)
    out = out_ptr + offs_m[:, None] * out_strides[0] + offs_n[None, :] * out_strides[1]
    tl.store(out, acc * sm_scale, mask=(offs_m[:, None] < seq_q) & (offs_n[None, :] < seq_k))


@triton.jit
def foreach_add_kernel(srcs, others, dsts, alpha, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    for i in tl.static_range(len(srcs)):
        x = tl.load(srcs[i] + offs, mask=mask)
        y = tl.load(others[i] + offs, mask=mask)
        tl.store(dsts[i] + offs, x + alpha * y, mask=mask)


@triton.jit
def multi_tensor_sumsq_kernel(tensors, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    for t in tl.static_range(len(tensors)):
        ptr, numel = tensors[t]
        x = tl.load(ptr + offs, mask=offs < numel, other=0.0).to(tl.float32)
        tl.store(out_ptr + pid * len(tensors) + t, tl.sum(x * x, axis=0))


@triton.jit
def residual_add_kernel(x_ptr, extras, out_ptr, n_elements, BLOCK: tl.constexpr):
    residual_ptr, bias_ptr = extras
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    if residual_ptr is not None:
        x += tl.load(residual_ptr + offs, mask=mask).to(tl.float32)
    if bias_ptr is not None:
        x += tl.load(bias_ptr + offs % BLOCK, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, x.to(out_ptr.dtype.element_ty), mask=mask)
