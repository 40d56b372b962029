"""Cases of the dots with fewer than 16 rows (small_dot.py) and their
float64 references."""
import numpy as np

from corpus_cases import Buf, Case, Out, Scalar
from corpus_cases_quant import _finite_codes, fp8_table


def _operands(v, s, kind):
    M, N, K = s["M"], s["N"], s["K"]
    a, b = v["a"].astype(np.float64), v["b"].astype(np.float64)
    if kind == 1:
        t = fp8_table(False)
        a, b = t[v["a"].astype(np.int64)], t[v["b"].astype(np.int64)]
    a = a.reshape(K, M).T if s["stride_am"] == 1 else a.reshape(M, K)
    b = b.reshape(N, K).T if s["stride_bk"] == 1 else b.reshape(K, N)
    return a, b


def small_gemm(v, c, s):
    a, b = _operands(v, s, c["KIND"])
    return {"c": (a @ b).ravel()}


def small_chain(v, c, s):
    D, H, BM = c["D"], c["H"], c["BM"]
    x = v["x"].reshape(-1, D)
    t = np.maximum(x @ v["w1"].reshape(D, H), 0.0)
    y = t @ v["w2"].reshape(H, D)
    rows = y.reshape(-1, BM, D)
    y = (rows - rows.max(axis=1, keepdims=True)).reshape(-1, D)
    return {"y": y.ravel(), "s": t.reshape(-1, BM, H).sum(axis=1).ravel()}


def router(v, c, s):
    D, E, BT, T = c["D"], c["E"], c["BT"], s["T"]
    sc = v["x"].reshape(T, D) @ v["w"].reshape(D, E)
    p = np.exp(sc - sc.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    pad = np.zeros((-(-T // BT) * BT, E))
    pad[:T] = p
    return {"p": p.ravel(), "load": pad.reshape(-1, BT, E).sum(axis=1).ravel()}


def cases():
    out = []
    M, N, K = 13, 80, 200
    kinds = (("fp16", 0, 4, False), ("bf16", 0, 2, True), ("fp32", 0, 8, False),
             ("u8", 1, 4, False), ("i8", 2, 1, False), ("fp16", 0, 8, True))
    for dt, kind, bm, a_mcontig in kinds:
        bk = 32 if kind else 16
        init = _finite_codes(False) if kind == 1 else ("randint", -8, 8) if kind == 2 else "randn"
        cdt = "i32" if kind == 2 else "fp32"
        strides = (1, M) if a_mcontig else (K, 1)
        out.append(Case(
            f"a GEMM of {bm} rows per program ({dt}{', A read transposed' if a_mcontig else ''})",
            "small_dot.py", "small_rows_gemm", (-(-M // bm), -(-N // 32)),
            [Buf("a", dt, M * K, init), Buf("b", dt, K * N, init), Out("c", cdt, M * N),
             Scalar("M", M), Scalar("N", N), Scalar("K", K), Scalar("stride_am", strides[0]),
             Scalar("stride_ak", strides[1]), Scalar("stride_bk", N), Scalar("stride_bn", 1)],
            {"KIND": kind, "BM": bm, "BN": 32, "BK": bk}, num_stages=3,
            tol={"fp32": (5e-2, 1e-2)}, ref=small_gemm))
    # fewer than 16 (or 8) columns: B read as [K, N] or transposed
    N = 6
    for dt, kind, bn, b_kcontig in (("fp16", 0, 4, False), ("bf16", 0, 8, True),
                                    ("fp32", 0, 2, False), ("u8", 1, 4, True),
                                    ("i8", 2, 1, False), ("fp16", 0, 1, True)):
        bk = 32 if kind else 16
        init = _finite_codes(False) if kind == 1 else ("randint", -8, 8) if kind == 2 else "randn"
        bstr = (1, K) if b_kcontig else (N, 1)
        out.append(Case(
            f"a GEMM of {bn} columns per program ({dt}{', B read transposed' if b_kcontig else ''})",
            "small_dot.py", "small_rows_gemm", (-(-64 // 32), -(-N // bn)),
            [Buf("a", dt, 64 * K, init), Buf("b", dt, K * N, init),
             Out("c", "i32" if kind == 2 else "fp32", 64 * N), Scalar("M", 64), Scalar("N", N),
             Scalar("K", K), Scalar("stride_am", K), Scalar("stride_ak", 1),
             Scalar("stride_bk", bstr[0]), Scalar("stride_bn", bstr[1])],
            {"KIND": kind, "BM": 32, "BN": bn, "BK": bk}, num_stages=3,
            tol={"fp32": (5e-2, 1e-2)}, ref=small_gemm))
    for dt, e, warps in (("fp16", 8, 4), ("bf16", 4, 4), ("fp16", 2, 8), ("fp16", 1, 4)):
        T, D, BT = 200, 64, 64
        out.append(Case(
            f"a router's softmax over {e} experts on {warps} warps ({dt})",
            "small_dot.py", "router_softmax", (-(-T // BT),),
            [Buf("x", dt, T * D, scale=0.5), Buf("w", dt, D * e, scale=0.5),
             Out("p", "fp32", T * e), Out("load", "fp32", -(-T // BT) * e), Scalar("T", T)],
            {"D": D, "E": e, "BT": BT}, num_warps=warps,
            tol={"fp32": (2e-2, 2e-2)}, ref=router))
    for dt, bm, warps in (("fp16", 4, 4), ("bf16", 2, 8), ("fp16", 8, 2)):
        D, H, R = 64, 128, 32
        out.append(Case(
            f"two chained dots of {bm} rows on {warps} warps, then sums over the rows ({dt})",
            "small_dot.py", "small_rows_chain", (R // bm,),
            [Buf("x", dt, R * D, scale=0.3), Buf("w1", dt, D * H, scale=0.3),
             Buf("w2", dt, H * D, scale=0.3), Out("y", "fp32", R * D), Out("s", "fp32", R // bm * H)],
            {"D": D, "H": H, "BM": bm}, num_warps=warps,
            tol={"fp32": (5e-2, 2e-2)}, ref=small_chain))
    return out
