"""Corpus cases: norms fused with the residual add and fp8 output, row
statistics (two-pass and Welford variance, logsumexp, greedy sampling with
temperature), dropout with tl.rand, GEGLU backward, interleaved rotary with
tl.join, the inner-stride-1 epilogue, transpose and permute copies."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, fp8_decode, fp8_encode, out, to_dt

FP8_MAX = 448.0


def np2(n):
    return 1 << (n - 1).bit_length()


def fp8_round(y):
    return fp8_decode(fp8_encode(y))


# ---- norms with an fp8 output ---------------------------------------------------------------

def rms_fp8_make(rng, S):
    m, n = S["m"], S["n"]
    r = floats(rng, (m, n), "bf16")
    r.inout = True
    return {"x": floats(rng, (m, n), "bf16"), "r": r, "w": floats(rng, n, "bf16", 0.2, 1.0),
            "y": out((m, n), "f8e4"), "scale": Buf(np.array([0.02]), "f32")}


def rms_fp8_ref(X, S):
    h = X["x"] + X["r"]
    y = h / np.sqrt((h * h).mean(axis=1, keepdims=True) + 1e-6) * X["w"] / X["scale"][0]
    # the kernel stores h rounded to bf16 in the residual
    return {"r": h, "y": fp8_round(np.clip(y, -FP8_MAX, FP8_MAX))}


case(name="add_rmsnorm_static_fp8", klass="norm-quant", module="norm_fp8_quant.py",
     kernel="_fused_add_rms_norm_static_fp8", make=rms_fp8_make,
     args=lambda S, b: ["x", "r", "w", "y", "scale", I32(S["n"]), I32(S["n"]), I32(S["n"]),
                        I32(S["n"]), F32(1e-6)],
     consts=lambda S: dict(BLOCK_N=np2(S["n"]), FP8_MAX=FP8_MAX), grid=lambda S: (S["m"],),
     ref=rms_fp8_ref, gpu=dict(m=4096, n=4096, warps=8), interp=dict(m=6, n=72),
     tol={"r": 4e-3, "y": 2e-2})


def ln_fp8_make(rng, S):
    m, n = S["m"], S["n"]
    return {"x": floats(rng, (m, n), "f16", 1.0, 0.3), "r": floats(rng, (m, n), "f16"),
            "h": out((m, n), "f32"), "w": floats(rng, n, "f32"), "b": floats(rng, n, "f32"),
            "y": out((m, n), "f8e4"), "s": out(m, "f32")}


def ln_fp8_ref(X, S):
    h = X["x"] + X["r"]
    xc = h - h.mean(axis=1, keepdims=True)
    y = xc / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + 1e-5) * X["w"] + X["b"]
    s = np.maximum(np.abs(y).max(axis=1) / FP8_MAX, 1e-12)
    return {"h": h, "s": s, "y": fp8_round(y / s[:, None])}


case(name="add_layernorm_dynamic_fp8", klass="norm-quant", module="norm_fp8_quant.py",
     kernel="_add_layer_norm_dynamic_fp8", make=ln_fp8_make,
     args=lambda S, b: ["x", "r", "h", "w", "b", "y", "s", I32(S["n"]), I32(S["n"]), F32(1e-5)],
     consts=lambda S: dict(BLOCK_N=np2(S["n"]), FP8_MAX=FP8_MAX, HAS_BIAS=True),
     grid=lambda S: (S["m"],), ref=ln_fp8_ref,
     gpu=dict(m=4096, n=4096, warps=8), interp=dict(m=5, n=60),
     tol={"h": 1e-6, "s": 1e-5, "y": 2e-2})


# ---- row statistics -------------------------------------------------------------------------

def var_make(rng, S):
    m, n = S["m"], S["n"]
    return {"x": floats(rng, (m, n), "bf16", 2.0, 3.0), "mean": out(m, "f32"),
            "var": out(m, "f32")}


def var_ref(X, S):
    return {"mean": X["x"].mean(axis=1), "var": X["x"].var(axis=1, ddof=1)}


for kern, nm in (("_row_var_mean_two_pass", "var_mean_two_pass"),
                 ("_row_var_mean_welford", "var_mean_welford")):
    case(name=nm, klass="welford", module="row_stats.py", kernel=kern, make=var_make,
         args=lambda S, b: ["x", "mean", "var", I32(S["n"]), I32(S["n"])],
         consts=lambda S: dict(BLOCK_N=S["BN"], CORRECTION=1), grid=lambda S: (S["m"],),
         ref=var_ref, gpu=dict(m=8192, n=8192, BN=1024, warps=4),
         interp=dict(m=5, n=77, BN=16), tol=1e-5)


case(name="logsumexp_rows", klass="softmax", module="row_stats.py", kernel="_logsumexp_rows",
     make=lambda rng, S: {"x": floats(rng, (S["m"], S["n"]), "f32", 4.0),
                          "lse": out(S["m"], "f32")},
     args=lambda S, b: ["x", "lse", I32(S["n"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_N=S["BN"]), grid=lambda S: (S["m"],),
     ref=lambda X, S: {"lse": np.log(np.exp(X["x"]).sum(axis=1))},
     gpu=dict(m=4096, n=16384, BN=2048, warps=8), interp=dict(m=6, n=70, BN=32), tol=1e-6)


def sample_make(rng, S):
    m, v = S["m"], S["v"]
    x = rng.standard_normal((m, v)) * 3.0
    return {"logits": Buf(to_dt(x, "bf16"), "bf16"),
            "temp": Buf(rng.uniform(0.5, 1.5, m), "f32"), "tok": out(m, "i32"),
            "prob": out(m, "f32")}


def sample_ref(X, S):
    z = X["logits"] / X["temp"][:, None].astype(np.float32).astype(np.float64)
    tok = z.argmax(axis=1)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return {"tok": tok.astype(np.float64), "prob": 1.0 / p.sum(axis=1)}


case(name="greedy_sample_temperature", klass="sampling", module="row_stats.py",
     kernel="_greedy_sample_temperature", make=sample_make,
     args=lambda S, b: ["logits", "temp", "tok", "prob", I32(S["v"]), I32(S["v"])],
     consts=lambda S: dict(BLOCK_V=S["BV"]), grid=lambda S: (S["m"],), ref=sample_ref,
     shape=lambda S: f"{S['m']}x{S['v']}",
     gpu=dict(m=512, v=128256, BV=4096, warps=8), interp=dict(m=6, v=300, BV=64),
     tol={"tok": 0.0, "prob": 1e-5})


# ---- dropout ----------------------------------------------------------------------------

def dropout_derive(X, got, S):
    """The forward must drop exactly where the separate mask kernel (same
    seed, same offsets) says, and scale the rest by 1/(1-p); the mask must
    be 0/1 and keep a fraction within 6 sigma of 1-p."""
    keep, p, n = got["keep"], S["p"], S["n"]
    if not np.isin(keep, (0.0, 1.0)).all():
        raise ValueError("dropout: the mask kernel wrote values other than 0 and 1")
    frac, sigma = keep.mean(), np.sqrt(p * (1 - p) / n)
    if abs(frac - (1 - p)) > 6 * sigma:
        raise ValueError(f"dropout: kept {frac:.4f} of the elements, want {1 - p:.4f}")
    return {"y": X["x"] * keep / np.float32(1 - p)}


case(name="dropout_seeded_vs_mask", klass="random", module="dropout.py",
     kernel="_seeded_dropout_fwd",
     make=lambda rng, S: {"x": floats(rng, S["n"], "f32"), "y": out(S["n"], "f32"),
                          "keep": out(S["n"], "i8")},
     args=lambda S, b: ["x", "y", I32(S["n"]), F32(S["p"]), I32(S["seed"])],
     consts=lambda S: dict(BLOCK_SIZE=S["BS"]), grid=lambda S: (cdiv(S["n"], S["BS"]),),
     prelude=dict(kernel="_dropout_keep_mask",
                  args=lambda S, b: ["keep", I32(S["n"]), F32(S["p"]), I32(S["seed"])],
                  grid=lambda S: (cdiv(S["n"], S["BS"]),)),
     derive=dropout_derive, shape=lambda S: f"{S['n']} p={S['p']}",
     gpu=dict(n=1 << 25, p=0.3, seed=1234, BS=1024), interp=dict(n=3000, p=0.3, seed=99, BS=256),
     tol=1e-6)


# ---- gated MLP, rotary, epilogues ---------------------------------------------------------

def geglu_make(rng, S):
    m, n = S["m"], S["n"]
    a, b = floats(rng, (m, n), "bf16"), floats(rng, (m, n), "bf16")
    a.inout = b.inout = True
    return {"dc": floats(rng, (m, n), "bf16"), "a": a, "b": b}


def geglu_ref(X, S):
    a, b, dc = X["a"], X["b"], X["dc"]
    k = np.sqrt(2 / np.pi)
    t = np.tanh(k * (a + 0.044715 * a ** 3))
    gelu = 0.5 * a * (1 + t)
    dgelu = 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * k * (1 + 3 * 0.044715 * a * a)
    return {"a": dc * b * dgelu, "b": dc * gelu}


case(name="geglu_tanh_bwd_inplace", klass="elementwise", module="geglu_rotary.py",
     kernel="_geglu_tanh_backward_kernel", make=geglu_make,
     args=lambda S, b: ["dc", "a", "b", I32(S["n"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_SIZE=np2(S["n"])), grid=lambda S: (S["m"],), ref=geglu_ref,
     gpu=dict(m=4096, n=14336, warps=16), interp=dict(m=5, n=50), tol=8e-3)


def rot_make(rng, S):
    t, h, d = S["t"], S["h"], S["d"]
    ang = np.arange(t)[:, None] * 10000.0 ** (-np.arange(d // 2) / (d // 2))
    return {"x": floats(rng, (t, h, d), "f16"), "cos": Buf(np.cos(ang), "f32"),
            "sin": Buf(np.sin(ang), "f32"), "o": out((t, h, d), "f16")}


def rot_ref(X, S):
    x0, x1 = X["x"][..., 0::2], X["x"][..., 1::2]
    c, s = X["cos"][:, None, :], X["sin"][:, None, :]
    o = np.empty_like(X["x"])
    o[..., 0::2] = x0 * c - x1 * s
    o[..., 1::2] = x0 * s + x1 * c
    return {"o": o}


case(name="rotary_interleaved_join", klass="elementwise", module="geglu_rotary.py",
     kernel="_rotary_interleaved_kernel", make=rot_make,
     args=lambda S, b: ["x", "cos", "sin", "o", I32(S["t"]), I32(S["h"]), I32(S["h"] * S["d"]),
                        I32(S["d"]), I32(S["h"] * S["d"]), I32(S["d"]), I32(S["d"] // 2)],
     consts=lambda S: dict(HALF_DIM=S["d"] // 2, BLOCK_T=S["BT"]),
     grid=lambda S: (cdiv(S["t"], S["BT"]), S["h"]), ref=rot_ref,
     gpu=dict(t=16384, h=32, d=128, BT=32), interp=dict(t=13, h=3, d=16, BT=4), tol=1e-3)


def gelu_erf(x):
    """x * Phi(x) with erf from Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7),
    numpy having no erf."""
    z = np.abs(x) / np.sqrt(2)
    t = 1 / (1 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 +
                                                                          t * 1.061405429))))
    erf = np.sign(x) * (1 - poly * np.exp(-z * z))
    return 0.5 * x * (1 + erf)


case(name="bias_gelu_stride_one", klass="elementwise", module="stride_one.py",
     kernel="_bias_gelu_strided",
     make=lambda rng, S: {"x": floats(rng, (S["m"], S["n"]), "bf16"),
                          "bias": floats(rng, S["n"], "f32"), "y": out((S["m"], S["n"]), "bf16")},
     args=lambda S, b: ["x", "bias", "y", I32(S["m"]), I32(S["n"]), I32(S["n"]), I32(1),
                        I32(S["n"]), I32(1)],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["n"], S["BN"])),
     ref=lambda X, S: {"y": gelu_erf(X["x"] + X["bias"])},
     gpu=dict(m=8192, n=8192, BM=32, BN=256), interp=dict(m=9, n=70, BM=4, BN=32), tol=4e-3)


# ---- layout copies ------------------------------------------------------------------------

case(name="transpose_2d_tiled", klass="copy", module="transpose_copy.py",
     kernel="_transpose_2d_kernel",
     make=lambda rng, S: {"x": floats(rng, (S["m"], S["n"]), "f16"),
                          "y": out((S["n"], S["m"]), "f16")},
     args=lambda S, b: ["x", "y", I32(S["m"]), I32(S["n"]), I32(S["n"]), I32(S["m"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]), cdiv(S["n"], S["BN"])),
     ref=lambda X, S: {"y": X["x"].T}, gpu=dict(m=8192, n=12288, BM=64, BN=64),
     interp=dict(m=19, n=37, BM=8, BN=16), tol=0.0)


def perm_args(S, b):
    bb, h, s, d = S["b"], S["h"], S["s"], S["d"]
    return ["src", "dst", I32(h), I32(s), I32(d), I32(h * s * d), I32(s * d), I32(d), I32(1),
            I32(s * h * d), I32(h * d), I32(d), I32(1)]


case(name="permute_bhsd_to_bshd", klass="copy", module="transpose_copy.py",
     kernel="_permute_bhsd_to_bshd",
     make=lambda rng, S: {"src": floats(rng, (S["b"], S["h"], S["s"], S["d"]), "bf16"),
                          "dst": out((S["b"], S["s"], S["h"], S["d"]), "bf16")},
     args=perm_args, consts=lambda S: dict(BLOCK_S=S["BS"], BLOCK_D=np2(S["d"])),
     grid=lambda S: (cdiv(S["s"], S["BS"]), S["b"] * S["h"]),
     ref=lambda X, S: {"dst": X["src"].transpose(0, 2, 1, 3)},
     gpu=dict(b=8, h=32, s=4096, d=128, BS=64), interp=dict(b=2, h=3, s=11, d=24, BS=4), tol=0.0)
