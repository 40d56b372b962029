"""Three kernels around a mixture-of-experts layer and its router, in the
forms training libraries write them:

- expert_wgrad_kernel: the weight gradient of a grouped GEMM over rows
  sorted by expert. Each program owns one (N, K) tile of every expert's
  dW and walks the experts' row blocks; a block runs only where it has
  rows (`if rows > 0`, with rows = min(BLOCK_M, m_size - t)), and dY's
  rows are gathered back from token order through a permutation.
- topk_gating_kernel: the router's softmax over experts and its top-k,
  taken k times as a max and an argmax with the winner masked off.
- norm_mix_bwd_kernel: the backward of mix = (x @ phi) * rstd, with
  rstd = rsqrt(mean(x^2) + eps): dX = (g * rstd) @ phi^T plus the norm's
  term, and dPhi = x^T @ (g * rstd) added with atomics, in fp32 (tf32
  products)."""
import torch
import triton
import triton.language as tl


@triton.jit
def expert_wgrad_kernel(x_ptr, dy_ptr, dw_ptr, sizes_ptr, perm_ptr, total_rows,
                        NUM_EXPERTS: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    n_tiles = tl.cdiv(N, BLOCK_N)
    n0 = (pid % n_tiles) * BLOCK_N
    k0 = (pid // n_tiles) * BLOCK_K
    rm = tl.arange(0, BLOCK_M)
    rn = n0 + tl.arange(0, BLOCK_N)
    rk = k0 + tl.arange(0, BLOCK_K)
    row_end = 0
    for e in range(NUM_EXPERTS):
        row_start = row_end
        m_size = tl.load(sizes_ptr + e).to(tl.int32)
        row_end = row_start + m_size
        acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
        for t in range(0, m_size, BLOCK_M):
            rows = tl.minimum(BLOCK_M, m_size - t)
            if rows > 0:
                live = rm < rows
                sorted_rows = row_start + t + rm
                token = tl.load(perm_ptr + sorted_rows, mask=live & (sorted_rows < total_rows),
                                other=0)
                x = tl.load(x_ptr + sorted_rows[:, None] * K + rk[None, :],
                            mask=live[:, None] & (rk[None, :] < K), other=0.0)
                dy = tl.load(dy_ptr + token[:, None] * N + rn[None, :],
                             mask=live[:, None] & (rn[None, :] < N), other=0.0)
                acc += tl.dot(dy.T, x)
        dw = dw_ptr + e * N * K + rn[:, None] * K + rk[None, :]
        tl.store(dw, acc.to(dw_ptr.dtype.element_ty), mask=(rn[:, None] < N) & (rk[None, :] < K))


def expert_wgrad(x, dy, sizes, perm, block_m=64, block_n=64, block_k=64):
    """dW[e] = dY[perm[rows of e]]^T @ x[rows of e], x sorted by expert."""
    E, N, K = sizes.numel(), dy.shape[1], x.shape[1]
    dw = torch.empty((E, N, K), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(N, block_n) * triton.cdiv(K, block_k),)
    expert_wgrad_kernel[grid](x, dy, dw, sizes, perm, x.shape[0], NUM_EXPERTS=E, N=N, K=K,
                              BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)
    return dw


@triton.jit
def topk_gating_kernel(logits_ptr, weights_ptr, ids_ptr, n_tokens, n_experts, top_k,
                       BLOCK_T: tl.constexpr, BLOCK_E: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    e = tl.arange(0, BLOCK_E)
    t_ok = t < n_tokens
    x = tl.load(logits_ptr + t[:, None] * n_experts + e[None, :],
                mask=t_ok[:, None] & (e[None, :] < n_experts), other=float("-inf"))
    x = tl.exp(x - tl.max(x, axis=1)[:, None])
    p = x / tl.sum(x, axis=1)[:, None]
    for j in range(top_k):
        best = tl.max(p, axis=1)
        arg = tl.argmax(p, axis=1)
        tl.store(weights_ptr + t * top_k + j, best, mask=t_ok)
        tl.store(ids_ptr + t * top_k + j, arg, mask=t_ok)
        p = tl.where(e[None, :] == arg[:, None], float("-inf"), p)


def topk_gating(logits, top_k):
    T, E = logits.shape
    block_e = triton.next_power_of_2(E)
    block_t = max(1, 1024 // block_e)
    w = torch.empty((T, top_k), device=logits.device, dtype=torch.float32)
    ids = torch.empty((T, top_k), device=logits.device, dtype=torch.int32)
    topk_gating_kernel[(triton.cdiv(T, block_t),)](logits, w, ids, T, E, top_k, BLOCK_T=block_t,
                                                   BLOCK_E=block_e)
    return w, ids


@triton.jit
def norm_mix_bwd_kernel(x_ptr, phi_ptr, rstd_ptr, g_ptr, dmix_ptr, dx_ptr, dphi_ptr,
                        N, K: tl.constexpr, M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr, BLOCK_M: tl.constexpr):
    """g = sum over m of dmix * mix / rstd (per row), computed by the host;
    dX = (dmix * rstd) @ phi^T - x * g * rstd^3 / K; dPhi += x^T @ (dmix * rstd)."""
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    rm = tl.arange(0, BLOCK_M)
    n_ok = rn < N
    rstd = tl.load(rstd_ptr + rn, mask=n_ok, other=0.0)
    x = tl.load(x_ptr + rn[:, None] * K + rk[None, :], mask=n_ok[:, None] & (rk[None, :] < K),
                other=0.0).to(tl.float32)
    dmix = tl.load(dmix_ptr + rn[:, None] * M + rm[None, :],
                   mask=n_ok[:, None] & (rm[None, :] < M), other=0.0)
    phi = tl.load(phi_ptr + rk[:, None] * M + rm[None, :],
                  mask=(rk[:, None] < K) & (rm[None, :] < M), other=0.0)
    gz = dmix * rstd[:, None]
    dx = tl.dot(gz, tl.trans(phi))
    g = tl.load(g_ptr + rn, mask=n_ok, other=0.0)
    dx += x * (-g * rstd * rstd * rstd / K)[:, None]
    tl.store(dx_ptr + rn[:, None] * K + rk[None, :], dx.to(dx_ptr.dtype.element_ty),
             mask=n_ok[:, None] & (rk[None, :] < K))
    dphi = tl.dot(tl.trans(x), gz)
    tl.atomic_add(dphi_ptr + rk[:, None] * M + rm[None, :], dphi,
                  mask=(rk[:, None] < K) & (rm[None, :] < M))


def norm_mix_bwd(x, phi, rstd, mix, dmix, block_n=32, block_k=256, block_m=32):
    N, K = x.shape
    M = phi.shape[1]
    g = (dmix * mix).sum(1) / rstd
    dx = torch.empty_like(x)
    dphi = torch.zeros_like(phi)
    grid = (triton.cdiv(N, block_n), triton.cdiv(K, block_k))
    norm_mix_bwd_kernel[grid](x, phi, rstd, g, dmix, dx, dphi, N, K=K, M=M, BLOCK_N=block_n,
                              BLOCK_K=block_k, BLOCK_M=block_m)
    return dx, dphi
