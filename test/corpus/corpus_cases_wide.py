"""Cases of tensor-core dots with fewer rows than the program's warps have
16-row tiles (64 rows on 8 or 16 warps): on sm_90a the warpgroups stand
side by side along N, each computing its own columns with wgmma (Triton's
warps [4, 2]); row reductions then cross warpgroups. The kernels are
small_dot.py's and attention.py's."""
import numpy as np

from corpus_cases import Buf, Case, Out, Scalar
from corpus_cases_dot import small_chain, small_gemm
from corpus_cases_quant import fp8_table
import corpus_refs as R_


def _gemms():
    """fp8 wgmma sums its products with fewer bits than fp32 (errors near
    1e-3 of the sum of the products' magnitudes on an H100, whatever the
    placement or the compiler): its codes are of values of at most 2, and
    its tolerance absolute."""
    out = []
    small = np.flatnonzero(np.abs(np.nan_to_num(fp8_table(False), nan=9.0)) <= 2.0)
    M, K = 150, 200
    # (dtype, kind, BN, warps, A read transposed, B read transposed)
    kinds = (("fp16", 0, 128, 8, False, False), ("bf16", 0, 64, 8, True, False),
             ("fp32", 0, 128, 8, False, False), ("u8", 1, 128, 8, False, True),
             ("i8", 2, 64, 8, False, True), ("fp16", 0, 256, 16, False, True),
             ("fp16", 0, 256, 8, True, True))
    for dt, kind, bn, warps, a_t, b_t in kinds:
        N = bn + 40
        bk = 64 if kind else 32
        init = (lambda rng, n: rng.choice(small, n)) if kind == 1 \
            else ("randint", -8, 8) if kind == 2 else "randn"
        sa = (1, M) if a_t else (K, 1)
        sb = (1, K) if b_t else (N, 1)
        how = ", A read transposed" if a_t else ""
        how += ", B read transposed" if b_t else ""
        out.append(Case(
            f"a GEMM of 64 x {bn} tiles on {warps} warps ({dt}{how})",
            "small_dot.py", "small_rows_gemm", (-(-M // 64), -(-N // bn)),
            [Buf("a", dt, M * K, init), Buf("b", dt, K * N, init),
             Out("c", "i32" if kind == 2 else "fp32", M * N), Scalar("M", M), Scalar("N", N),
             Scalar("K", K), Scalar("stride_am", sa[0]), Scalar("stride_ak", sa[1]),
             Scalar("stride_bk", sb[0]), Scalar("stride_bn", sb[1])],
            {"KIND": kind, "BM": 64, "BN": bn, "BK": bk}, num_warps=warps, num_stages=3,
            tol={"fp32": (2.0 if kind == 1 else 5e-2, 1e-2)}, ref=small_gemm))
    return out


def computed_b(v, c, s):
    BM, BN, BK = c["BM"], c["BN"], c["BK"]
    a = v["a"].astype(np.float64).reshape(-1, BK)
    b = v["b"].astype(np.float64).reshape(BK, BN) * 2
    return {"c": (a @ b).ravel()}


def cases():
    out = _gemms()
    for warps, bn in ((8, 128), (4, 128), (16, 256)):
        n, BK = 3, 64
        out.append(Case(
            f"64 x {bn} tiles times a B computed before the loop, on {warps} warps",
            "small_dot.py", "computed_b_gemm", (1,),
            [Buf("a", "fp16", n * 64 * BK), Buf("b", "fp16", BK * bn),
             Out("c", "fp32", n * 64 * bn), Scalar("n_tiles", n)],
            {"BM": 64, "BN": bn, "BK": BK}, num_warps=warps,
            tol={"fp32": (1e-2, 1e-2)}, ref=computed_b))
    for dt, warps in (("fp16", 8), ("bf16", 16)):
        D, H, R = 64, 256, 128
        out.append(Case(
            f"two chained dots of 64 rows on {warps} warps, then sums over the rows ({dt})",
            "small_dot.py", "small_rows_chain", (R // 64,),
            [Buf("x", dt, R * D, scale=0.3), Buf("w1", dt, D * H, scale=0.3),
             Buf("w2", dt, H * D, scale=0.3), Out("y", "fp32", R * D), Out("s", "fp32", R // 64 * H)],
            {"D": D, "H": H, "BM": 64}, num_warps=warps,
            tol={"fp32": (5e-2, 2e-2)}, ref=small_chain))
    Z, H, L, D = 1, 2, 192, 64
    T = Z * H * L * D
    strides = [Scalar(f"stride_{t}{a}", v) for t in "qkvo"
               for a, v in zip("zhmk" if t == "q" else "zhnk" if t == "k" else "zhkn" if t == "v" else "zhmn",
                               (H * L * D, L * D, D, 1))]
    for stage, bn in ((1, 32), (3, 64)):
        out.append(Case(
            f"attention fwd stage {stage}, 64 query rows x {bn} keys on 8 warps", "attention.py",
            "_attn_fwd", (L // 64, Z * H),
            [Buf("Q", "fp16", T), Buf("K", "fp16", T), Buf("V", "fp16", T),
             Scalar("sm_scale", 0.5, "fp32"), Out("M", "fp32", Z * H * L), Out("Out", "fp16", T)] +
            strides + [Scalar("Z", Z), Scalar("H", H), Scalar("N_CTX", L)],
            {"HEAD_DIM": D, "BLOCK_M": 64, "BLOCK_N": bn, "STAGE": stage}, num_warps=8,
            num_stages=3, tol={"fp32": (2e-3, 2e-3), "fp16": (1e-2, 1e-2)}, ref=R_.attention))
    return out
