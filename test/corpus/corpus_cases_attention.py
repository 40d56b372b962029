"""Cases of the attention kernels with a bias tile (attention_bias.py) and
their float64 numpy reference: the bias's element type and padding vary,
and the key count is no multiple of the key block, so the last step reads
a partial tile."""
import numpy as np

from corpus_cases import Buf, Case, Out, Scalar


def attn_bias(v, c, s):
    n, d, bm = s["N_CTX"], c["HEAD_DIM"], s["stride_bm"]
    q, k, vv = (v[x].reshape(-1, n, d) for x in ("Q", "K", "V"))
    bias = v["Bias"].reshape(q.shape[0], n, bm)[:, :, :n]
    sc = q @ k.transpose(0, 2, 1) * s["sm_scale"] + bias
    e = np.exp(sc - sc.max(axis=2, keepdims=True))
    return {"Out": (e @ vv / e.sum(axis=2, keepdims=True)).ravel()}


def cases():
    H, D, BM = 2, 32, 64
    out = []
    # key counts divisible by 16 let the bias tile move in 16-byte copies;
    # 100 keys leave it two bytes at a time
    for dt, n, pad_inf in (("fp16", 80, True), ("bf16", 112, False), ("fp32", 80, True),
                           ("fp16", 100, True)):
        stride_bm = (n + 15) // 16 * 16
        T = H * n * D
        out.append(Case(
            f"attention with a {dt} bias tile, {n} keys, {'-inf' if pad_inf else 'zero'} padding",
            "attention_bias.py", "attn_bias_fwd", ((n + BM - 1) // BM, H),
            [Buf("Q", "fp16", T), Buf("K", "fp16", T), Buf("V", "fp16", T),
             Buf("Bias", dt, H * n * stride_bm), Out("Out", "fp16", T),
             Scalar("sm_scale", D ** -0.5, "fp32"), Scalar("stride_h", n * D),
             Scalar("stride_m", D), Scalar("stride_bh", n * stride_bm),
             Scalar("stride_bm", stride_bm), Scalar("N_CTX", n)],
            {"HEAD_DIM": D, "BLOCK_M": BM, "BLOCK_N": 32, "PAD_INF": pad_inf}, num_stages=3,
            tol={"fp16": (1e-2, 1e-2)}, ref=attn_bias))
    return out
