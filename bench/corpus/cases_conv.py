"""Corpus cases: convolutions (a 2-D NHWC convolution as an implicit GEMM,
a depthwise causal 1-D convolution with SiLU)."""
import numpy as np

from registry import I32, case, cdiv, floats, out


def conv_out_hw(S):
    p = (S["h"] + 2 * S["pad"] - S["dil"] * (S["r"] - 1) - 1) // S["st"] + 1
    q = (S["w"] + 2 * S["pad"] - S["dil"] * (S["s"] - 1) - 1) // S["st"] + 1
    return p, q


def conv2d_make(rng, S):
    n, h, w, c, k, r, s = (S[v] for v in ("n", "h", "w", "c", "k", "r", "s"))
    p, q = conv_out_hw(S)
    return {"x": floats(rng, (n, h, w, c), "f16"),
            "wt": floats(rng, (k, r, s, c), "f16", (r * s * c) ** -0.5),
            "bias": floats(rng, k, "f16"), "y": out((n, p, q, k), "f16")}


def conv2d_ref(X, S):
    p, q = conv_out_hw(S)
    st, pad, dil = S["st"], S["pad"], S["dil"]
    x = np.pad(X["x"], ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    y = np.zeros((S["n"], p, q, S["k"])) + X["bias"]
    for r in range(S["r"]):
        for s in range(S["s"]):
            win = x[:, r * dil:r * dil + (p - 1) * st + 1:st, s * dil:s * dil + (q - 1) * st + 1:st]
            y += win @ X["wt"][:, r, s, :].T
    return {"y": y}


def conv2d_args(S, b):
    n, h, w, c, k, r, s = (S[v] for v in ("n", "h", "w", "c", "k", "r", "s"))
    p, q = conv_out_hw(S)
    dims = [n, h, w, c, k, p, q, r, s, S["st"], S["st"], S["pad"], S["pad"], S["dil"], S["dil"]]
    strides = [h * w * c, w * c, c, 1, r * s * c, s * c, c, 1, p * q * k, q * k, k, 1]
    return ["x", "wt", "bias", "y"] + [I32(v) for v in dims + strides]


# interp: stride 2, dilation 2, a 3x2 filter, C not a multiple of BLOCK_K
case(name="conv2d_nhwc_implicit_gemm", klass="conv", module="conv2d_implicit_gemm.py",
     kernel="conv2d_nhwc_fwd_kernel", make=conv2d_make, args=conv2d_args,
     consts=lambda S: dict(HAS_BIAS=True, BLOCK_M=S["BM"], BLOCK_N=S["BN"], BLOCK_K=S["BK"]),
     grid=lambda S: (cdiv(S["n"] * conv_out_hw(S)[0] * conv_out_hw(S)[1], S["BM"]),
                     cdiv(S["k"], S["BN"])), ref=conv2d_ref,
     shape=lambda S: (f"n{S['n']} {S['h']}x{S['w']}x{S['c']} k{S['k']} {S['r']}x{S['s']} "
                      f"st{S['st']} pad{S['pad']} dil{S['dil']}"),
     gpu=dict(n=32, h=56, w=56, c=64, k=128, r=3, s=3, st=1, pad=1, dil=1, BM=128, BN=128,
              BK=64, warps=8, stages=3),
     interp=dict(n=2, h=9, w=7, c=24, k=20, r=3, s=2, st=2, pad=2, dil=2, BM=16, BN=16, BK=16,
                 warps=4, stages=2), tol=5e-3)


def silu(x):
    return x / (1 + np.exp(-x))


def causal_conv1d_ref(X, S):
    x, w, L, W = X["x"], X["wt"], S["l"], S["width"]
    xp = np.concatenate([np.zeros(x.shape[:2] + (W - 1,)), x], axis=2)
    y = sum(xp[:, :, k:k + L] * w[None, :, k, None] for k in range(W)) + X["bias"][None, :, None]
    return {"o": silu(y)}


case(name="causal_conv1d_silu", klass="conv", module="causal_conv1d.py",
     kernel="causal_conv1d_fwd_kernel",
     make=lambda rng, S: {"x": floats(rng, (S["b"], S["d"], S["l"]), "bf16"),
                          "wt": floats(rng, (S["d"], S["width"]), "bf16", 0.5),
                          "bias": floats(rng, S["d"], "bf16", 0.1),
                          "o": out((S["b"], S["d"], S["l"]), "bf16")},
     args=lambda S, b: ["x", "wt", "bias", "o", I32(S["b"]), I32(S["d"]), I32(S["l"]),
                        I32(S["d"] * S["l"]), I32(S["l"]), I32(1), I32(S["width"]), I32(1),
                        I32(S["d"] * S["l"]), I32(S["l"]), I32(1)],
     consts=lambda S: dict(WIDTH=S["width"], HAS_BIAS=True, SILU=True, BLOCK_D=S["BD"],
                           BLOCK_L=S["BL"]),
     grid=lambda S: (cdiv(S["l"], S["BL"]), cdiv(S["d"], S["BD"]), S["b"]), ref=causal_conv1d_ref,
     shape=lambda S: f"b{S['b']} d{S['d']} l{S['l']} w{S['width']}",
     gpu=dict(b=8, d=4096, l=2048, width=4, BD=32, BL=128, warps=4),
     interp=dict(b=2, d=20, l=50, width=4, BD=8, BL=16), tol=1e-2)
