"""Corpus cases: prefill over a cached prefix with GQA, the tutorial-style
fused attention forward with pointer arithmetic (causal and not), MLA
decode, SSD state passing and chunk scan, chunked linear attention."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, out, zeros

LN2 = np.log(2.0)


def softmax_rows(s):
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


# ---- prefill over a cached prefix ---------------------------------------------------------

def prefix_make(rng, S):
    b, h, kh, d = S["b"], S["h"], S["kh"], S["d"]
    pre = rng.integers(S["pmin"], S["pmax"], b)
    ext = rng.integers(S["emin"], S["emax"], b)
    start = np.concatenate([[0], np.cumsum(ext)[:-1]])
    slots = int(pre.sum()) + 7
    table = np.zeros((b, S["pmax"]), dtype=np.int64)
    perm = rng.permutation(slots)
    at = 0
    for i in range(b):
        table[i, :pre[i]] = perm[at:at + pre[i]]
        at += pre[i]
    t = int(ext.sum())
    return {"q": floats(rng, (t, h, d), "bf16"), "kn": floats(rng, (t, kh, d), "bf16"),
            "vn": floats(rng, (t, kh, d), "bf16"), "kp": floats(rng, (slots, kh, d), "bf16"),
            "vp": floats(rng, (slots, kh, d), "bf16"), "o": out((t, h, d), "bf16"),
            "tbl": Buf(table, "i32"), "start": Buf(start, "i32"), "pre": Buf(pre, "i32"),
            "ext": Buf(ext, "i32")}


def prefix_ref(X, S):
    g, scale = S["h"] // S["kh"], S["d"] ** -0.5
    o = np.zeros(X["q"].shape)
    for i in range(S["b"]):
        st, n, p = int(X["start"][i]), int(X["ext"][i]), int(X["pre"][i])
        slots = X["tbl"][i, :p].astype(int)
        allow = np.concatenate([np.ones((n, p), bool), np.tril(np.ones((n, n), bool))], axis=1)
        for kv in range(S["kh"]):
            k = np.concatenate([X["kp"][slots, kv], X["kn"][st:st + n, kv]])
            v = np.concatenate([X["vp"][slots, kv], X["vn"][st:st + n, kv]])
            q = X["q"][st:st + n, kv * g:(kv + 1) * g]            # n, g, d
            s = q.transpose(1, 0, 2) @ k.T * scale                # g, n, n_keys
            pr = softmax_rows(np.where(allow[None], s, -np.inf))
            o[st:st + n, kv * g:(kv + 1) * g] = (pr @ v).transpose(1, 0, 2)
    return {"o": o}


def prefix_args(S, b):
    h, kh, d = S["h"], S["kh"], S["d"]
    return ["q", "kn", "vn", "kp", "vp", "o", "tbl", "start", "pre", "ext", F32(d ** -0.5),
            I32(S["pmax"]), I32(h * d), I32(d), I32(kh * d), I32(d), I32(kh * d), I32(d),
            I32(h * d), I32(d)]


case(name="prefix_prefill_gqa", klass="attention", module="prefix_attention.py",
     kernel="_prefix_prefill_gqa", make=prefix_make, args=prefix_args,
     consts=lambda S: dict(kv_group_num=S["h"] // S["kh"], BLOCK_M=S["BM"], BLOCK_DMODEL=S["d"],
                           BLOCK_N=S["BN"]),
     grid=lambda S: (S["b"], S["h"], cdiv(S["emax"], S["BM"])), ref=prefix_ref,
     shape=lambda S: f"b{S['b']} h{S['h']}/{S['kh']} prefix<{S['pmax']} new<{S['emax']} "
                     f"d{S['d']}",
     gpu=dict(b=4, h=16, kh=4, d=128, pmin=1024, pmax=2048, emin=256, emax=1024, BM=128, BN=64,
              warps=8, stages=2),
     interp=dict(b=3, h=4, kh=2, d=16, pmin=3, pmax=40, emin=1, emax=30, BM=16, BN=16),
     tol=1e-2)


# ---- fused attention, pointer arithmetic ------------------------------------------------------

def fattn_make(rng, S):
    z, h, n, d = S["z"], S["h"], S["n"], S["d"]
    return {"q": floats(rng, (z, h, n, d), "f16", 0.5), "k": floats(rng, (z, h, n, d), "f16", 0.5),
            "v": floats(rng, (z, h, n, d), "f16"), "m": out((z * h, n), "f32"),
            "o": out((z, h, n, d), "f16")}


def fattn_ref(causal):
    def ref(X, S):
        n, scale = S["n"], 0.5
        s = X["q"] @ X["k"].swapaxes(-1, -2) * scale
        if causal:
            s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
        mx = s.max(axis=-1, keepdims=True)
        e = np.exp(s - mx)
        tot = e.sum(axis=-1, keepdims=True)
        lse2 = (mx + np.log(tot))[..., 0] / LN2
        return {"o": (e / tot) @ X["v"],
                "m": lse2.reshape(S["z"] * S["h"], n)}
    return ref


def fattn_args(S, b):
    h, n, d = S["h"], S["n"], S["d"]
    st = [I32(h * n * d), I32(n * d), I32(d)]
    return ["q", "k", "v", F32(0.5), "m", "o"] + st * 4 + [I32(h)]


for causal in (False, True):
    case(name=f"fused_attn_ptr_{'causal' if causal else 'full'}", klass="attention",
         module="prefix_attention.py", kernel="_attn_fwd", make=fattn_make, args=fattn_args,
         consts=lambda S, c=causal: dict(N_CTX=S["n"], HEAD_DIM=S["d"], BLOCK_M=S["BM"],
                                         BLOCK_N=S["BN"], STAGE=3 if c else 1),
         grid=lambda S: (S["n"] // S["BM"], S["z"] * S["h"]), ref=fattn_ref(causal),
         gpu=dict(z=2, h=8, n=2048, d=64, BM=128, BN=64, warps=4, stages=3),
         interp=dict(z=1, h=2, n=48, d=16, BM=16, BN=16), tol={"o": 5e-3, "m": 1e-5})


# ---- MLA decode ---------------------------------------------------------------------------

def mla_make(rng, S):
    b, h, r, p = S["b"], S["h"], S["r"], S["p"]
    lens = rng.integers(S["lmin"], S["lmax"], b)
    start = np.concatenate([[0], np.cumsum(lens)[:-1]])
    t = int(lens.sum())
    return {"qn": floats(rng, (b, h, r), "bf16"), "qp": floats(rng, (b, h, p), "bf16"),
            "kv": floats(rng, (t, r), "bf16"), "kpe": floats(rng, (t, p), "bf16"),
            "o": out((b, h, r), "bf16"), "start": Buf(start, "i32"), "lens": Buf(lens, "i32")}


def mla_ref(X, S):
    scale = (S["r"] + S["p"]) ** -0.5
    o = np.zeros(X["qn"].shape)
    for i in range(S["b"]):
        sl = slice(int(X["start"][i]), int(X["start"][i] + X["lens"][i]))
        s = (X["qn"][i] @ X["kv"][sl].T + X["qp"][i] @ X["kpe"][sl].T) * scale
        o[i] = softmax_rows(s) @ X["kv"][sl]
    return {"o": o}


case(name="mla_decode_latent_rope", klass="attention", module="mla_decode.py",
     kernel="_mla_decode_fwd", make=mla_make,
     args=lambda S, b: ["qn", "qp", "kv", "kpe", "o", "start", "lens",
                        F32((S["r"] + S["p"]) ** -0.5), I32(S["h"]), I32(S["h"] * S["r"]),
                        I32(S["r"]), I32(S["h"] * S["p"]), I32(S["p"]), I32(S["r"]), I32(S["p"]),
                        I32(S["h"] * S["r"]), I32(S["r"])],
     consts=lambda S: dict(BLOCK_H=S["BH"], BLOCK_N=S["BN"], LATENT_DIM=S["r"], ROPE_DIM=S["p"]),
     grid=lambda S: (S["b"], cdiv(S["h"], S["BH"])), ref=mla_ref,
     shape=lambda S: f"b{S['b']} h{S['h']} len<{S['lmax']} {S['r']}+{S['p']}",
     gpu=dict(b=64, h=16, r=512, p=64, lmin=1024, lmax=4096, BH=16, BN=32, warps=4, stages=2),
     interp=dict(b=3, h=5, r=32, p=16, lmin=1, lmax=40, BH=16, BN=16), tol=1e-2)


# ---- SSD state passing and chunk scan --------------------------------------------------------

def sp_make(rng, S):
    bh, nc, cs, dim = S["bh"], S["nc"], S["cs"], S["dim"]
    dA = -np.cumsum(rng.uniform(0, 0.02, (bh, nc, cs)), axis=2)
    return {"st": floats(rng, (bh, nc, dim), "f32"), "out": out((bh, nc, dim), "f32"),
            "fin": out((bh, dim), "f32"), "dA": Buf(dA, "f32")}


def sp_ref(X, S):
    st, dA = X["st"], X["dA"][:, :, -1]
    outs = np.zeros_like(st)
    cur = np.zeros((S["bh"], S["dim"]))
    for c in range(S["nc"]):
        outs[:, c] = cur
        cur = np.exp(dA[:, c])[:, None] * cur + st[:, c]
    return {"out": outs, "fin": cur}


case(name="ssd_state_passing", klass="ssm", module="ssd_scan.py",
     kernel="_state_passing_fwd_kernel", make=sp_make,
     args=lambda S, b: ["st", "out", "fin", "dA", I32(S["dim"]), I32(S["nc"]), I32(S["cs"]),
                        I32(S["nc"] * S["dim"]), I32(S["dim"]), I32(S["nc"] * S["cs"]),
                        I32(S["cs"])],
     consts=lambda S: dict(BLOCK_SIZE=S["BS"]),
     grid=lambda S: (cdiv(S["dim"], S["BS"]), S["bh"]), ref=sp_ref,
     gpu=dict(bh=64, nc=32, cs=256, dim=8192, BS=512), interp=dict(bh=3, nc=5, cs=8, dim=40, BS=16),
     tol=1e-6)


def cs_make(rng, S):
    bh, L, cs, p, n = S["bh"], S["L"], S["cs"], S["p"], S["n"]
    nc = cdiv(L, cs)
    dt = rng.uniform(0.01, 0.1, (bh, L))
    dA = np.zeros((bh, nc * cs))
    for c in range(nc):
        seg = slice(c * cs, min((c + 1) * cs, L))
        dA[:, seg] = np.cumsum(-dt[:, seg] * rng.uniform(0.5, 2.0, (bh, 1)), axis=1)
    return {"x": floats(rng, (bh, L, p), "f16"), "B": floats(rng, (bh, L, n), "f16", 0.3),
            "C": floats(rng, (bh, L, n), "f16", 0.3), "dt": Buf(dt, "f32"),
            "dA": Buf(dA[:, :L], "f32"), "st": floats(rng, (bh, nc, p, n), "f32", 0.3),
            "D": floats(rng, bh, "f32"), "y": out((bh, L, p), "f16")}


def cs_ref(X, S):
    L, cs = S["L"], S["cs"]
    y = np.zeros(X["x"].shape)
    for c in range(cdiv(L, cs)):
        sl = slice(c * cs, min((c + 1) * cs, L))
        C, B, x, dA, dt = X["C"][:, sl], X["B"][:, sl], X["x"][:, sl], X["dA"][:, sl], X["dt"][:, sl]
        n = dA.shape[1]
        y_state = C @ X["st"][:, c].swapaxes(1, 2) * np.exp(dA)[:, :, None]
        decay = np.exp(dA[:, :, None] - dA[:, None, :]) * dt[:, None, :]
        cb = C @ B.swapaxes(1, 2) * decay * np.tril(np.ones((n, n)))[None]
        y[:, sl] = y_state + cb @ x + x * X["D"][:, None, None]
    return {"y": y}


def cs_args(S, b):
    bh, L, cs, p, n = S["bh"], S["L"], S["cs"], S["p"], S["n"]
    return ["x", "B", "C", "dt", "dA", "st", "D", "y", I32(L), I32(cs), I32(p), I32(n),
            I32(L * p), I32(p), I32(L * n), I32(n), I32(L), I32(cdiv(L, cs) * p * n), I32(p * n)]


case(name="ssd_chunk_scan", klass="ssm", module="ssd_scan.py", kernel="_chunk_scan_fwd_kernel",
     make=cs_make, args=cs_args,
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["BN"], BLOCK_SIZE_K=S["BK"],
                           BLOCK_SIZE_DSTATE=S["BD"]),
     grid=lambda S: (cdiv(S["p"], S["BN"]), cdiv(S["L"], S["cs"]), S["bh"]), ref=cs_ref,
     gpu=dict(bh=32, L=4096, cs=64, p=64, n=128, BM=64, BN=64, BK=32, BD=128, warps=4, stages=2),
     interp=dict(bh=2, L=40, cs=32, p=12, n=16, BM=32, BN=16, BK=16, BD=16), tol=5e-3)


# ---- chunked linear attention --------------------------------------------------------------

def la_make(rng, S):
    bh, t, k, v = S["bh"], S["t"], S["k"], S["v"]
    return {"q": floats(rng, (bh, t, k), "f16"), "k": floats(rng, (bh, t, k), "f16"),
            "v": floats(rng, (bh, t, v), "f16"), "o": out((bh, t, v), "f16"),
            "ht": out((bh, k, v), "f32")}


def la_ref(X, S):
    t = S["t"]
    s = X["q"] @ X["k"].swapaxes(1, 2) * S["k"] ** -0.5
    s *= np.tril(np.ones((t, t)))[None]
    return {"o": s @ X["v"], "ht": X["k"].swapaxes(1, 2) @ X["v"]}


case(name="linear_attn_fused_chunk", klass="linear-attn", module="linear_attn_chunk.py",
     kernel="fused_chunk_linear_attn_fwd_kernel", make=la_make,
     args=lambda S, b: ["q", "k", "v", "o", "ht", I32(S["t"] * S["k"]), I32(S["k"]),
                        I32(S["t"] * S["v"]), I32(S["v"]), F32(S["k"] ** -0.5), I32(S["t"])],
     consts=lambda S: dict(K=S["k"], V=S["v"], BT=S["BT"], BK=S["BK"], BV=S["BV"],
                           STORE_FINAL_STATE=True),
     grid=lambda S: (cdiv(S["v"], S["BV"]), S["bh"]), ref=la_ref,
     gpu=dict(bh=16, t=2048, k=128, v=128, BT=64, BK=128, BV=32, warps=4, stages=2),
     interp=dict(bh=2, t=37, k=16, v=24, BT=16, BK=16, BV=16), tol={"o": 1e-2, "ht": 1e-5})
