"""Corpus cases: memory-bound kernels with unusual addressing or lane work.
FlagGems-style 2-D upsampling (nearest with a non-integer scale, bilinear
with align_corners=False), flash-linear-attention's chunk-local cumsum in
the reverse direction (scalar gates through tl.cumsum(reverse=True), vector
gates through a triangular fp32 dot), Qwen2-VL multimodal rotary with three
position sections, top-p filtering by tl.sort and tl.cumsum, Liger-style
DyT and the KL-divergence forward with one partial per row. The
interpreter sizes leave every edge ragged (pixels, planes, chunks, heads,
head dim, candidates, columns)."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, out, to_dt


def np2(n):
    return 1 << (int(n) - 1).bit_length()


def f32(v):
    return np.float32(v)


# ---- 2-D upsampling -----------------------------------------------------------------------

def up_make(rng, S):
    n, c, ih, iw, oh, ow = S["n"], S["c"], S["ih"], S["iw"], S["oh"], S["ow"]
    return {"x": floats(rng, (n, c, ih, iw), "f16"), "y": out((n, c, oh, ow), "f16")}


def up_args(S, b):
    return ["y", "x", I32(S["n"] * S["c"]), I32(S["ih"]), I32(S["iw"]), I32(S["oh"]),
            I32(S["ow"]), F32(S["ih"] / S["oh"]), F32(S["iw"] / S["ow"])]


def nearest_index(o, isz, osz):
    # the kernel's fp32 multiply and floor, clamped to the last row/column
    idx = np.floor(np.arange(o, dtype=np.float32) * f32(isz / osz)).astype(np.int64)
    return np.minimum(idx, isz - 1)


def nearest_ref(X, S):
    ih = nearest_index(S["oh"], S["ih"], S["oh"])
    iw = nearest_index(S["ow"], S["iw"], S["ow"])
    x = X["x"]
    y = np.empty((S["n"], S["c"], S["oh"], S["ow"]))
    for i in range(S["n"]):
        y[i] = x[i][:, ih][:, :, iw]
    return {"y": y}


def bilinear_taps(o, isz, osz):
    src = (np.arange(o, dtype=np.float32) + f32(0.5)) * f32(isz / osz) - f32(0.5)
    src = np.maximum(src, f32(0.0))
    i0 = src.astype(np.int64)
    i1 = np.minimum(i0 + 1, isz - 1)
    lam1 = (src - i0.astype(np.float32)).astype(np.float64)
    return i0, i1, 1.0 - lam1, lam1


def bilinear_ref(X, S):
    h0, h1, lh0, lh1 = bilinear_taps(S["oh"], S["ih"], S["oh"])
    w0, w1, lw0, lw1 = bilinear_taps(S["ow"], S["iw"], S["ow"])
    x = X["x"]
    y = np.empty((S["n"], S["c"], S["oh"], S["ow"]))
    for i in range(S["n"]):
        top = x[i][:, h0]
        bot = x[i][:, h1]
        top = top[:, :, w0] * lw0 + top[:, :, w1] * lw1
        bot = bot[:, :, w0] * lw0 + bot[:, :, w1] * lw1
        y[i] = top * lh0[:, None] + bot * lh1[:, None]
    return {"y": y}


for nm, kern, ref, gpu, interp in (
        # 256x256 -> 384x384 (scale 1.5): source rows repeat in a 1, 2, 1, 2 ... pattern
        ("upsample_nearest2d_frac", "upsample_nearest2d_kernel", nearest_ref,
         dict(n=8, c=64, ih=256, iw=256, oh=384, ow=384, BS=1024, PL=8, warps=4),
         dict(n=2, c=3, ih=7, iw=9, oh=11, ow=20, BS=64, PL=4)),
        # 256x256 -> 448x448 (scale 1.75), four fp16 taps per output pixel
        ("upsample_bilinear2d_frac", "upsample_bilinear2d_kernel", bilinear_ref,
         dict(n=8, c=64, ih=256, iw=256, oh=448, ow=448, BS=1024, PL=8, warps=4),
         dict(n=2, c=3, ih=7, iw=9, oh=12, ow=17, BS=64, PL=4))):
    case(name=nm, klass="resample", module="upsample2d.py", kernel=kern, make=up_make,
         args=up_args, consts=lambda S: dict(BLOCK_SIZE=S["BS"], PLANES=S["PL"]),
         grid=lambda S: (cdiv(S["oh"] * S["ow"], S["BS"]), cdiv(S["n"] * S["c"], S["PL"])),
         ref=ref, shape=lambda S: f"{S['n']}x{S['c']}x{S['ih']}x{S['iw']}->{S['oh']}x{S['ow']}",
         gpu=gpu, interp=interp, tol=2e-3)


# ---- chunk-local reverse cumsum -------------------------------------------------------------

def reverse_chunk_cumsum(x, bt):
    """Suffix sums along axis 1 restarting at every chunk of bt positions."""
    y = np.empty_like(x)
    for c0 in range(0, x.shape[1], bt):
        blk = x[:, c0:c0 + bt]
        y[:, c0:c0 + bt] = np.flip(np.cumsum(np.flip(blk, axis=1), axis=1), axis=1)
    return y


def cumsum_scalar_ref(X, S):
    return {"o": reverse_chunk_cumsum(X["s"], S["BT"])}


def cumsum_vector_ref(X, S):
    o = np.empty(X["s"].shape)
    for b in range(S["b"]):
        o[b:b + 1] = reverse_chunk_cumsum(X["s"][b:b + 1], S["BT"])
    return {"o": o}


case(name="chunk_local_cumsum_reverse", klass="scan", module="chunk_cumsum_reverse.py",
     kernel="chunk_local_cumsum_scalar_kernel",
     make=lambda rng, S: {"s": Buf(-rng.uniform(0.0, 0.1, (S["b"], S["t"], S["h"])), "f32"),
                          "o": out((S["b"], S["t"], S["h"]), "f32")},
     args=lambda S, b: ["s", "o", I32(S["t"]), I32(S["h"])],
     consts=lambda S: dict(BT=S["BT"], REVERSE=True),
     grid=lambda S: (cdiv(S["t"], S["BT"]), S["b"] * S["h"]), ref=cumsum_scalar_ref,
     shape=lambda S: f"B{S['b']} T{S['t']} H{S['h']} BT{S['BT']}",
     gpu=dict(b=32, t=16384, h=32, BT=64, warps=1),
     interp=dict(b=2, t=100, h=3, BT=16), tol=1e-5)

case(name="chunk_local_cumsum_reverse_vec", klass="scan", module="chunk_cumsum_reverse.py",
     kernel="chunk_local_cumsum_vector_kernel",
     make=lambda rng, S: {"s": floats(rng, (S["b"], S["t"], S["h"], S["k"]), "f32", 0.05),
                          "o": out((S["b"], S["t"], S["h"], S["k"]), "f32")},
     args=lambda S, b: ["s", "o", I32(S["t"]), I32(S["h"]), I32(S["k"])],
     consts=lambda S: dict(BT=S["BT"], BK=S["BK"], REVERSE=True),
     grid=lambda S: (cdiv(S["k"], S["BK"]), cdiv(S["t"], S["BT"]), S["b"] * S["h"]),
     ref=cumsum_vector_ref,
     shape=lambda S: f"B{S['b']} T{S['t']} H{S['h']} K{S['k']} BT{S['BT']}",
     gpu=dict(b=8, t=8192, h=16, k=128, BT=64, BK=32, warps=4),
     interp=dict(b=2, t=70, h=3, k=40, BT=16, BK=32), tol=1e-5)


# ---- Qwen2-VL multimodal rotary ------------------------------------------------------------

def mrope_make(rng, S):
    t, hq, hk, d = S["t"], S["hq"], S["hk"], S["d"]
    q, k = floats(rng, (t, hq, d), "bf16"), floats(rng, (t, hk, d), "bf16")
    q.inout = k.inout = True
    inv = 1.0 / (1000000.0 ** (np.arange(0, d, 2) / d))
    pos = rng.integers(0, S["mp"], (3, t))  # temporal, height and width ids per token
    ang = pos[:, :, None] * inv[None, None, :]
    ang = np.concatenate([ang, ang], axis=-1)
    return {"q": q, "k": k, "cos": Buf(to_dt(np.cos(ang), "bf16"), "bf16"),
            "sin": Buf(to_dt(np.sin(ang), "bf16"), "bf16")}


def mrope_ref(X, S):
    half = S["d"] // 2
    st, sh = S["sec"][0], S["sec"][1]
    plane = np.where(np.arange(half) < st, 0, np.where(np.arange(half) < st + sh, 1, 2))
    cos = X["cos"][plane, :, np.arange(half)].T[:, None, :]  # [t, 1, half]
    sin = X["sin"][plane, :, np.arange(half)].T[:, None, :]

    def rot(x):
        x1, x2 = x[..., :half], x[..., half:]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return {"q": rot(X["q"]), "k": rot(X["k"])}


case(name="mrope_qwen2vl_sections", klass="rotary", module="mrope.py",
     kernel="qwen2vl_mrope_kernel", make=mrope_make,
     args=lambda S, b: ["q", "k", "cos", "sin", I32(S["hq"] * S["d"]), I32(S["hk"] * S["d"]),
                        I32(S["t"] * S["d"]), I32(S["hq"]), I32(S["hk"]), I32(S["d"]),
                        I32(S["sec"][0]), I32(S["sec"][1])],
     consts=lambda S: dict(PAD_N_QH=np2(S["hq"]), PAD_N_KH=np2(S["hk"]), PAD_HD=np2(S["d"]),
                           BACKWARD_PASS=False),
     grid=lambda S: (S["t"],), ref=mrope_ref,
     shape=lambda S: f"{S['t']} tok q{S['hq']} k{S['hk']} d{S['d']} sec{S['sec']}",
     gpu=dict(t=16384, hq=28, hk=4, d=128, mp=4096, sec=(16, 24, 24), warps=4),
     interp=dict(t=5, hq=5, hk=2, d=24, mp=50, sec=(2, 5, 5)), tol=1e-2)


# ---- top-p by sorting ------------------------------------------------------------------------

def topp_probs(logits, inv_t):
    z = logits * inv_t
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def topp_make(rng, S):
    rows, n = S["rows"], S["n"]
    logits = to_dt(rng.standard_normal((rows, n)) * 2.0, "f32")
    p = np.sort(topp_probs(logits.astype(np.float64), float(f32(S["inv_t"]))), axis=1)[:, ::-1]
    before = np.cumsum(p, axis=1) - p
    top_p = np.empty(rows)
    for r in range(rows):
        # keep c candidates: top_p halfway into the c-th sorted probability, which is
        # large enough that the fp32 running sum cannot land on the other side
        cands = np.nonzero(p[r] > 1e-4)[0]
        c = int(rng.choice(cands)) + 1
        top_p[r] = before[r, c - 1] + 0.5 * p[r, c - 1]
    return {"logits": Buf(logits, "f32"), "top_p": Buf(top_p, "f32"),
            "probs": out((rows, n), "f32"), "kept": out(rows, "i32")}


def topp_ref(X, S):
    p = topp_probs(X["logits"], float(f32(S["inv_t"])))
    order = np.argsort(-p, axis=1)
    ps = np.take_along_axis(p, order, axis=1)
    keep_sorted = (np.cumsum(ps, axis=1) - ps) < X["top_p"][:, None]
    keep = np.zeros_like(keep_sorted)
    np.put_along_axis(keep, order, keep_sorted, axis=1)
    kept_p = np.where(keep, p, 0.0)
    return {"probs": kept_p / kept_p.sum(axis=1, keepdims=True),
            "kept": keep.sum(axis=1).astype(np.float64)}


case(name="top_p_sort_cumsum", klass="sampling", module="sort_top_p.py",
     kernel="top_p_sort_renorm_kernel", make=topp_make,
     args=lambda S, b: ["logits", "top_p", "probs", "kept", I32(S["n"]), I32(S["n"]),
                        I32(S["n"]), F32(S["inv_t"])],
     consts=lambda S: dict(BLOCK=np2(S["n"])), grid=lambda S: (S["rows"],), ref=topp_ref,
     shape=lambda S: f"{S['rows']}x{S['n']} T={1 / S['inv_t']:.2f}",
     gpu=dict(rows=4096, n=1000, inv_t=1 / 0.7, warps=4),
     interp=dict(rows=5, n=50, inv_t=1 / 0.7), tol={"probs": 1e-5, "kept": 0.0})


# ---- DyT and KL divergence -------------------------------------------------------------------

def dyt_make(rng, S):
    m, n = S["m"], S["n"]
    return {"x": floats(rng, (m, n), "bf16", 2.0), "alpha": Buf([0.5], "f32"),
            "gamma": floats(rng, n, "bf16", 0.1, 1.0), "beta": floats(rng, n, "bf16", 0.1),
            "y": out((m, n), "bf16")}


case(name="dyt_fwd_bf16", klass="norm", module="dyt_kldiv.py", kernel="dyt_fwd_kernel",
     make=dyt_make,
     args=lambda S, b: ["x", I32(S["n"]), "alpha", "gamma", "beta", "y", I32(S["n"]),
                        I32(S["n"])],
     consts=lambda S: dict(HAVE_BETA=True, BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["n"], S["BN"]), S["m"]),
     ref=lambda X, S: {"y": X["gamma"] * np.tanh(X["alpha"][0] * X["x"]) + X["beta"]},
     gpu=dict(m=16384, n=4096, BN=1024, warps=4), interp=dict(m=3, n=300, BN=128), tol=5e-3)


def kl_make(rng, S):
    bt, v = S["bt"], S["v"]
    z = rng.standard_normal((bt, v)) * 2.0
    logp = z - z.max(axis=1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
    t = rng.standard_normal((bt, v)) * 2.0
    t = np.exp(t - t.max(axis=1, keepdims=True))
    t[rng.random((bt, v)) < 0.05] = 0.0  # zero targets go through the eps clamp
    t /= t.sum(axis=1, keepdims=True)
    return {"y": Buf(to_dt(logp, "bf16"), "bf16"), "gt": Buf(to_dt(t, "bf16"), "bf16"),
            "loss": out(bt, "f32")}


def kl_ref(X, S):
    t = X["gt"]
    safe = np.where(t > 0, t, 1.0)
    return {"loss": np.where(t > 0, t * (np.log(safe) - X["y"]), 0.0).sum(axis=1)}


case(name="kldiv_fwd_row_partials", klass="loss", module="dyt_kldiv.py",
     kernel="kldiv_fwd_kernel", make=kl_make,
     args=lambda S, b: ["y", I32(S["v"]), "gt", I32(S["v"]), "loss", I32(1), I32(S["v"]),
                        F32(1e-10)],
     consts=lambda S: dict(BLOCK_SIZE=S["BS"], log_target=False, REDUCE=True),
     grid=lambda S: (S["bt"],), ref=kl_ref,
     gpu=dict(bt=1024, v=128256, BS=4096, warps=8), interp=dict(bt=3, v=300, BS=128), tol=1e-4)
