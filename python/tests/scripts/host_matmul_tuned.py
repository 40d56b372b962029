"""A tiled matmul with the host wrapper matmul libraries write: a config
list built in a loop over block shapes, warps and stages, pruned by the
problem's shape (with Triton's (configs, named_args, **kwargs) signature),
tuned per (M, N, K) key; a heuristic under @autotune that reads the
chosen BLOCK_K to decide whether K needs a mask; the grid as a lambda of
META; and M, N, K that are and are not multiples of 16, and 1."""
import numpy as np
import triton
import triton.language as tl


def _configs():
    out = []
    for bm in (16, 32):
        for bn in (16, 32):
            for bk in (16, 32):
                for warps, stages in ((4, 2), (2, 3)):
                    out.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk},
                                             num_warps=warps, num_stages=stages))
    return out


PRUNE_CALLS = []


def prune_for_shape(configs, named_args, **kwargs):
    # Blocks wider than the problem waste lanes; keep those that fit, and at
    # least the smallest so a tiny problem still has a config.
    m, n, k = named_args["M"], named_args["N"], named_args["K"]
    PRUNE_CALLS.append((m, n, k))
    kept = [c for c in configs
            if c.kwargs["BLOCK_M"] <= max(m, 16) and c.kwargs["BLOCK_N"] <= max(n, 16)
            and c.kwargs["BLOCK_K"] <= max(k, 16)]
    # A K that the wide step divides takes it: fewer trips and no K mask.
    if k % 32 == 0:
        kept = [c for c in kept if c.kwargs["BLOCK_K"] == 32]
    return kept or configs[:1]


@triton.autotune(configs=_configs(), key=["M", "N", "K"],
                 prune_configs_by={"early_config_prune": prune_for_shape})
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  EVEN_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs, mask=rm[:, None] < M, other=0.0)
            b = tl.load(b_ptrs, mask=rn[None, :] < N, other=0.0)
        else:
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b):
    assert a.shape[1] == b.shape[0], "incompatible dimensions"
    M, K = a.shape
    _, N = b.shape
    c = np.empty((M, N), dtype=np.float32)
    item = a.itemsize

    def grid(META):
        return (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))

    matmul_kernel[grid](a, b, c, M, N, K,
                        a.strides[0] // item, a.strides[1] // item,
                        b.strides[0] // item, b.strides[1] // item,
                        c.strides[0] // 4, c.strides[1] // 4)
    return c


rng = np.random.default_rng(7)
for M, N, K in ((32, 32, 32), (17, 33, 40), (1, 16, 1), (48, 5, 64)):
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = matmul(a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    cfg = matmul_kernel.best_config
    assert cfg is not None and cfg.num_warps in (2, 4), cfg
    assert (cfg.kwargs["BLOCK_K"] == 32) == (K % 32 == 0), (M, N, K, cfg)
    assert prune_for_shape(matmul_kernel.configs, {"M": M, "N": N, "K": K}), "prune kept none"
    assert any(c.kwargs == cfg.kwargs for c in prune_for_shape(matmul_kernel.configs,
                                                                {"M": M, "N": N, "K": K})), cfg

# A transposed view: strides that are not the row-major ones.
a = rng.standard_normal((24, 40)).astype(np.float32).T
b = rng.standard_normal((24, 8)).astype(np.float32)
np.testing.assert_allclose(matmul(a, b), a @ b, rtol=1e-4, atol=1e-4)
assert len(matmul_kernel.configs) == 16 and PRUNE_CALLS, PRUNE_CALLS
print("matmul tuned OK")
