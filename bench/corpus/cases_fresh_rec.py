"""Corpus cases: recurrences, norm backward, a large-vocabulary loss and
integer scatter. RWKV-6's fused recurrent wkv (per-key data-dependent decay
and a bonus for the current token, the state in registers across the
sequence), the backward of the gated RMSNorm of mamba2 and
flash-linear-attention (dx, dz and a partial dw per program), unsloth's
chunked-vocabulary cross-entropy forward with tanh soft-capping,
per-sequence bincounts of int64 token ids with integer or fp32 atomics,
and masked_select as block counts then a tl.cumsum scatter. The
interpreter sizes leave the head dim, value blocks, rows, vocabulary
chunks and element blocks ragged, and give one norm program no rows."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, out, to_dt, zeros


def np2(n):
    return 1 << (int(n) - 1).bit_length()


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# ---- RWKV-6 fused recurrent wkv -----------------------------------------------------------------

def rwkv6_make(rng, S):
    b, t, h, k, v = S["b"], S["t"], S["h"], S["k"], S["v"]
    # log decays w = -exp(x): per-step decays exp(w) mostly between 0.8 and 0.99
    w = -np.exp(rng.normal(-2.8, 0.6, (b, t, h, k)))
    return {"r": floats(rng, (b, t, h, k), "bf16"), "k": floats(rng, (b, t, h, k), "bf16", 0.5),
            "v": floats(rng, (b, t, h, v), "bf16"), "w": Buf(to_dt(w, "bf16"), "bf16"),
            "u": floats(rng, (h, k), "f32", 0.5), "o": out((b, t, h, v), "bf16"),
            "h0": floats(rng, (b * h, k, v), "f32", 0.5), "ht": out((b * h, k, v), "f32")}


def rwkv6_ref(X, S):
    b, t, h, k, v = S["b"], S["t"], S["h"], S["k"], S["v"]
    r, kk, vv, dec = X["r"], X["k"], X["v"], np.exp(X["w"])
    st = X["h0"].reshape(b, h, k, v).copy()
    o = np.empty((b, t, h, v))
    for i in range(t):
        kv = kk[:, i, :, :, None] * vv[:, i, :, None, :]
        o[:, i] = np.einsum("bhk,bhkv->bhv", r[:, i], st + X["u"][None, :, :, None] * kv)
        st = st * dec[:, i, :, :, None] + kv
    return {"o": o, "ht": st.reshape(b * h, k, v)}


# one step is a few dependent reductions (~1.5 us) whatever b*h is: t=512 keeps it under 1 ms
case(name="rwkv6_fused_recurrent", klass="linear-attn", module="rwkv6_recurrent.py",
     kernel="fused_recurrent_rwkv6_fwd_kernel", make=rwkv6_make,
     args=lambda S, b: ["r", "k", "v", "w", "u", "o", "h0", "ht", F32(1.0), I32(S["t"]),
                        I32(S["h"])],
     consts=lambda S: dict(K=S["k"], V=S["v"], BK=np2(S["k"]), BV=S["BV"],
                           USE_INITIAL_STATE=True, STORE_FINAL_STATE=True),
     grid=lambda S: (cdiv(S["v"], S["BV"]), S["b"] * S["h"]), ref=rwkv6_ref,
     gpu=dict(b=4, t=512, h=32, k=64, v=64, BV=32, warps=4, stages=1),
     interp=dict(b=2, t=13, h=3, k=24, v=40, BV=16, warps=4, stages=1),
     tol={"o": 1e-2, "ht": 1e-4})


# ---- gated RMSNorm backward (norm before gate) --------------------------------------------------

def grms_make(rng, S):
    m, n, g, p = S["m"], S["n"], S["g"], S["p"]
    d = n * g
    x = floats(rng, (m, d), "bf16")
    xs = x.f64().reshape(m, g, n)
    rstd = 1.0 / np.sqrt((xs * xs).mean(axis=2) + 1e-5)  # [m, g]
    return {"x": x, "w": floats(rng, d, "f32", 0.3, 1.0), "z": floats(rng, (m, d), "bf16"),
            "dy": floats(rng, (m, d), "bf16"), "dx": out((m, d), "bf16"),
            "dz": out((m, d), "bf16"), "dw": out((p, d), "f32"),
            "rstd": Buf(rstd.T.astype(np.float32), "f32")}


def grms_ref(X, S):
    m, n, g, p = S["m"], S["n"], S["g"], S["p"]
    x = X["x"].reshape(m, g, n)
    z = X["z"].reshape(m, g, n)
    dy = X["dy"].reshape(m, g, n)
    w = X["w"].reshape(g, n)
    xhat = x * X["rstd"].T[:, :, None]
    s = sigmoid(z)
    dz = dy * xhat * w * s * (1 + z * (1 - s))
    gdy = dy * z * s
    wdy = w * gdy
    c1 = (xhat * wdy).mean(axis=2, keepdims=True)
    dx = (wdy - xhat * c1) * X["rstd"].T[:, :, None]
    rpp = cdiv(m, p)
    part = gdy * xhat
    dw = np.zeros((p, g * n))
    for i in range(p):
        dw[i] = part[i * rpp:(i + 1) * rpp].sum(axis=0).reshape(-1)
    return {"dx": dx.reshape(m, -1), "dz": dz.reshape(m, -1), "dw": dw}


case(name="gated_rmsnorm_bwd_dw_partial", klass="norm", module="gated_rmsnorm_bwd.py",
     kernel="_gated_rmsnorm_bwd_kernel", make=grms_make,
     args=lambda S, b: ["x", "w", "z", "dy", "dx", "dz", "dw", "rstd"] +
     [I32(S["n"] * S["g"])] * 6 + [I32(S["m"]), I32(S["n"]), I32(cdiv(S["m"], S["p"]))],
     consts=lambda S: dict(BLOCK_N=np2(S["n"]), NORM_BEFORE_GATE=True),
     grid=lambda S: (S["p"], S["g"]), ref=grms_ref,
     gpu=dict(m=16384, n=1024, g=4, p=264, warps=4), interp=dict(m=11, n=40, g=3, p=5),
     tol={"dx": 8e-3, "dz": 8e-3, "dw": 1e-4})


# ---- chunked-vocabulary cross-entropy forward with soft-capping --------------------------------

def ce_make(rng, S):
    m, v = S["m"], S["v"]
    labels = rng.integers(0, v, m)
    labels[::7] = -100
    return {"logits": floats(rng, (m, v), "bf16", 10.0), "labels": Buf(labels, "i64"),
            "loss": out(m, "f32"), "lse": out((m, cdiv(v, S["BS"])), "f32")}


def ce_ref(X, S):
    m, v, bs, cap = S["m"], S["v"], S["BS"], S["cap"]
    nc = cdiv(v, bs)
    lse = np.empty((m, nc))
    for r0 in range(0, m, 64):
        x = cap * np.tanh(X["logits"][r0:r0 + 64] / cap)
        for c in range(nc):
            xc = x[:, c * bs:(c + 1) * bs]
            mx = xc.max(axis=1, keepdims=True)
            lse[r0:r0 + 64, c] = mx[:, 0] + np.log(np.exp(xc - mx).sum(axis=1))
    lab = X["labels"].astype(np.int64)
    picked = X["logits"][np.arange(m), np.maximum(lab, 0)]
    loss = np.where(lab != -100, -cap * np.tanh(picked / cap), 0.0)
    return {"loss": loss, "lse": lse}


case(name="ce_softcap_chunked_vocab", klass="loss", module="ce_softcap_chunked.py",
     kernel="_chunked_cross_entropy_forward", make=ce_make,
     args=lambda S, b: ["logits", I32(S["v"]), "loss", "lse", "labels", I32(S["v"]),
                        I32(cdiv(S["v"], S["BS"]))],
     consts=lambda S: dict(BLOCK_SIZE=S["BS"], DO_SOFTCAPPING=True, SOFTCAP=S["cap"],
                           DO_LOGIT_SCALING=False, LOGIT_SCALE=0.0),
     grid=lambda S: (S["m"], cdiv(S["v"], S["BS"])), ref=ce_ref,
     gpu=dict(m=512, v=256000, cap=30.0, BS=65536, warps=32),
     interp=dict(m=6, v=100, cap=30.0, BS=32, warps=4), tol=1e-5)


# ---- per-sequence bincount of int64 token ids ---------------------------------------------------

def bincount_make(weighted):
    def make(rng, S):
        rows, cols, nb = S["rows"], S["cols"], S["nb"]
        vals = rng.integers(0, nb, (rows, cols))
        # each row padded past its length with n_bins, and a few negative ids
        lens = rng.integers(cols // 2, cols + 1, rows)
        vals[np.arange(cols)[None, :] >= lens[:, None]] = nb
        vals[:, ::11] = -1
        d = {"vals": Buf(vals, "i64"), "wts": floats(rng, (rows, cols), "f32")}
        d["bins"] = zeros((rows, nb), "f32" if weighted else "i32")
        return d
    return make


def bincount_ref(weighted):
    def ref(X, S):
        rows, nb = S["rows"], S["nb"]
        vals = X["vals"].astype(np.int64)
        res = np.zeros((rows, nb))
        for r in range(rows):
            ok = (vals[r] >= 0) & (vals[r] < nb)
            res[r] = np.bincount(vals[r][ok], weights=X["wts"][r][ok] if weighted else None,
                                 minlength=nb)
        return {"bins": res}
    return ref


for nm, weighted in (("batched_bincount_i64_counts", False),
                     ("batched_bincount_i64_weighted", True)):
    case(name=nm, klass="scatter", module="bincount_compact.py",
         kernel="batched_bincount_kernel", make=bincount_make(weighted),
         args=lambda S, b: ["vals", "wts", "bins", I32(S["cols"]), I32(S["nb"]), I32(S["cols"]),
                            I32(S["nb"])],
         consts=lambda S, w=weighted: dict(HAS_WEIGHTS=w, BLOCK=S["BS"]),
         grid=lambda S: (cdiv(S["cols"], S["BS"]), S["rows"]), ref=bincount_ref(weighted),
         gpu=dict(rows=256, cols=32768, nb=128256, BS=1024, warps=4),
         interp=dict(rows=3, cols=50, nb=17, BS=16), tol=1e-5 if weighted else 0.0)


# ---- masked_select: block counts, then the compacting scatter ----------------------------------

def mask_bytes(rng, n):
    return (rng.integers(0, 5, n, dtype=np.int8) < 2).astype(np.int8)  # 40% set


def count_make(rng, S):
    return {"mask": Buf(mask_bytes(rng, S["n"]), "i8"), "counts": out(cdiv(S["n"], S["BS"]), "i32")}


def msel_make(rng, S):
    n, bs = S["n"], S["BS"]
    mask = mask_bytes(rng, n)
    counts = np.add.reduceat(mask.astype(np.int64), np.arange(0, n, bs))
    return {"x": floats(rng, n, "f32"), "mask": Buf(mask, "i8"),
            "offsets": Buf(np.cumsum(counts) - counts, "i64"), "y": zeros(n, "f32")}


def msel_ref(X, S):
    sel = X["x"][X["mask"] != 0]
    return {"y": np.concatenate([sel, np.zeros(S["n"] - sel.size)])}


case(name="masked_select_block_counts", klass="scan", module="bincount_compact.py",
     kernel="masked_select_count_kernel", make=count_make,
     args=lambda S, b: ["mask", "counts", I32(S["n"])], consts=lambda S: dict(BLOCK=S["BS"]),
     grid=lambda S: (cdiv(S["n"], S["BS"]),),
     ref=lambda X, S: {"counts": np.add.reduceat(X["mask"] != 0, np.arange(0, S["n"], S["BS"]))},
     gpu=dict(n=(1 << 27) + 777, BS=2048, warps=4), interp=dict(n=333, BS=64), tol=0.0)

case(name="masked_select_cumsum_scatter", klass="scan", module="bincount_compact.py",
     kernel="masked_select_scatter_kernel", make=msel_make,
     args=lambda S, b: ["x", "mask", "offsets", "y", I32(S["n"])],
     consts=lambda S: dict(BLOCK=S["BS"]), grid=lambda S: (cdiv(S["n"], S["BS"]),),
     ref=msel_ref, gpu=dict(n=(1 << 25) + 777, BS=2048, warps=4), interp=dict(n=333, BS=64),
     tol=0.0)
