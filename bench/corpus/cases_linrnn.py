"""Corpus cases: linear-RNN kernels (linear_rnn_kernels.py). The gated
linear attention inter-chunk state pass through block pointers, mamba2's
chunk states as a K loop of dots over the chunk, the fused recurrent
delta rule (a long sequential loop of small vector ops on a state held in
registers) and a row-wise cumulative sum in masked column tiles with a
carry. The interpreter sizes leave the sequence, head and column edges
ragged so that the boundary checks and masks are exercised."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, out, to_dt

# ---- gated linear attention: chunk states -------------------------------------------------


def chunk_local_cumsum(x, bt):
    """Cumulative sum along axis 1 restarting at every chunk of bt positions."""
    y = np.empty_like(x)
    for c0 in range(0, x.shape[1], bt):
        y[:, c0:c0 + bt] = np.cumsum(x[:, c0:c0 + bt], axis=1)
    return y


def gla_make(rng, S):
    bh, t, k, v, bt = S["bh"], S["t"], S["k"], S["v"], S["BT"]
    # log forget gates a little below zero per channel, summed inside each chunk as the
    # library's chunk-local cumsum leaves them: over 64 positions they decay to ~0.1
    g = chunk_local_cumsum(-rng.uniform(0.005, 0.07, (bh, t, k)), bt)
    return {"k": floats(rng, (bh, t, k), "bf16"), "v": floats(rng, (bh, t, v), "bf16"),
            "g": Buf(g, "f32"), "h": out((bh, cdiv(t, bt), k, v), "f32"),
            "h0": floats(rng, (bh, k, v), "f32", 0.5), "ht": out((bh, k, v), "f32")}


def gla_ref(X, S):
    t, bt = S["t"], S["BT"]
    k, v, g = X["k"], X["v"], X["g"]
    cur = X["h0"].copy()
    hs = np.empty((S["bh"], cdiv(t, bt), S["k"], S["v"]))
    for c in range(cdiv(t, bt)):
        hs[:, c] = cur
        sl = slice(c * bt, min((c + 1) * bt, t))
        g_last = g[:, sl.stop - 1]                                      # bh, K
        kg = k[:, sl] * np.exp(g_last[:, None, :] - g[:, sl])           # bh, L, K
        cur = cur * np.exp(g_last)[:, :, None] + kg.swapaxes(1, 2) @ v[:, sl]
    return {"h": hs, "ht": cur}


def gla_args(S, b):
    t, k, v = S["t"], S["k"], S["v"]
    return ["k", "v", "g", "h", "h0", "ht", I32(t * k), I32(k), I32(t * v), I32(v),
            I32(cdiv(t, S["BT"]) * k * v), I32(v), I32(t)]


case(name="chunk_gla_fwd_h", klass="linear-attn", module="linear_rnn_kernels.py",
     kernel="chunk_gla_fwd_h", make=gla_make, args=gla_args,
     consts=lambda S: dict(K=S["k"], V=S["v"], BT=S["BT"], BK=S["BK"], BV=S["BV"],
                           USE_INITIAL_STATE=True, STORE_FINAL_STATE=True),
     grid=lambda S: (cdiv(S["k"], S["BK"]), cdiv(S["v"], S["BV"]), S["bh"]), ref=gla_ref,
     gpu=dict(bh=32, t=4096, k=128, v=128, BT=64, BK=64, BV=64, warps=4, stages=2),
     interp=dict(bh=2, t=40, k=24, v=40, BT=16, BK=16, BV=16, warps=4, stages=2), tol=1e-2)


# ---- mamba2 chunk states ----------------------------------------------------------------------

def mstate_make(rng, S):
    b, l, h, p, n, g, cs = S["b"], S["l"], S["h"], S["p"], S["n"], S["g"], S["cs"]
    nc = cdiv(l, cs)
    # dt after softplus, A < 0 per head; both laid out (batch, head, chunk, position) as
    # the chunk-cumsum kernel writes them, the ragged last chunk padded with dt = 0
    dt = rng.uniform(0.005, 0.1, (b, h, nc * cs))
    dt[:, :, l:] = 0.0
    A = -rng.uniform(0.5, 4.0, h)
    dA = (dt * A[None, :, None]).reshape(b, h, nc, cs).cumsum(axis=3)
    return {"x": floats(rng, (b, l, h, p), "bf16"), "B": floats(rng, (b, l, g, n), "bf16"),
            "dt": Buf(dt.reshape(b, h, nc, cs), "f32"), "dA": Buf(dA, "f32"),
            "states": out((b, nc, h, p, n), "f32")}


def mstate_ref(X, S):
    l, h, g, cs = S["l"], S["h"], S["g"], S["cs"]
    heads_group = np.arange(h) // (h // g)
    res = np.empty((S["b"], cdiv(l, cs), h, S["p"], S["n"]))
    for c in range(cdiv(l, cs)):
        sl = slice(c * cs, min((c + 1) * cs, l))
        n = sl.stop - sl.start
        dA, dt = X["dA"][:, :, c, :n], X["dt"][:, :, c, :n]             # b, h, L
        w = np.exp(dA[:, :, -1:] - dA) * dt
        xw = X["x"][:, sl].transpose(0, 2, 3, 1) * w[:, :, None, :]     # b, h, p, L
        Bh = X["B"][:, sl][:, :, heads_group].transpose(0, 2, 1, 3)      # b, h, L, n
        res[:, c] = xw @ Bh
    return {"states": res}


def mstate_args(S, b):
    bt, l, h, p, n, g, cs = S["b"], S["l"], S["h"], S["p"], S["n"], S["g"], S["cs"]
    nc = cdiv(l, cs)
    return ["x", "B", "dt", "dA", "states", I32(cs), I32(p), I32(n), I32(bt), I32(l),
            I32(h // g), I32(l * h * p), I32(h * p), I32(p), I32(l * g * n), I32(g * n), I32(n),
            I32(h * nc * cs), I32(nc * cs), I32(cs), I32(nc * h * p * n), I32(h * p * n),
            I32(p * n), I32(n)]


case(name="mamba_chunk_state", klass="ssm", module="linear_rnn_kernels.py",
     kernel="mamba_chunk_state", make=mstate_make, args=mstate_args,
     consts=lambda S: dict(BLOCK_SIZE_M=S["BM"], BLOCK_SIZE_N=S["BN"], BLOCK_SIZE_K=S["BK"]),
     grid=lambda S: (cdiv(S["p"], S["BM"]) * cdiv(S["n"], S["BN"]), S["b"] * cdiv(S["l"], S["cs"]),
                     S["h"]),
     ref=mstate_ref,
     gpu=dict(b=4, l=4096, h=32, p=64, n=128, g=1, cs=256, BM=64, BN=128, BK=64, warps=4,
              stages=3),
     interp=dict(b=2, l=72, h=4, p=24, n=24, g=2, cs=32, BM=16, BN=16, BK=16, stages=2),
     tol=1e-2)


# ---- fused recurrent delta rule -----------------------------------------------------------------

def delta_make(rng, S):
    bh, t, k, v = S["bh"], S["t"], S["k"], S["v"]
    beta = 1.0 / (1.0 + np.exp(-rng.standard_normal((bh, t))))
    return {"q": floats(rng, (bh, t, k), "bf16"), "k": floats(rng, (bh, t, k), "bf16"),
            "v": floats(rng, (bh, t, v), "bf16"), "beta": Buf(to_dt(beta, "bf16"), "bf16"),
            "o": out((bh, t, v), "bf16"), "ht": out((bh, k, v), "f32")}


def delta_ref(X, S):
    def l2norm(x):
        return x / np.sqrt((x * x).sum(axis=-1, keepdims=True) + 1e-6)
    q, k = l2norm(X["q"]) * S["k"] ** -0.5, l2norm(X["k"])
    v, beta = X["v"], X["beta"]
    st = np.zeros((S["bh"], S["k"], S["v"]))
    o = np.empty(v.shape)
    for i in range(S["t"]):
        kt = k[:, i, None, :]                                           # bh, 1, K
        v_new = (v[:, i, None] - kt @ st) * beta[:, i, None, None]      # bh, 1, V
        st += kt.swapaxes(1, 2) * v_new
        o[:, i] = (q[:, i, None, :] @ st)[:, 0]
    return {"o": o, "ht": st}


# the steps run one after another at ~1.5 us each whatever bh is (1.5 ms at t=1024 on an
# H200, both compilers): t=512 keeps the launch under a millisecond
case(name="fused_recurrent_delta", klass="linear-attn", module="linear_rnn_kernels.py",
     kernel="fused_recurrent_delta", make=delta_make,
     args=lambda S, b: ["q", "k", "v", "beta", "o", "ht", F32(S["k"] ** -0.5), I32(S["t"])],
     consts=lambda S: dict(K=S["k"], V=S["v"], BK=1 << (S["k"] - 1).bit_length(), BV=S["BV"],
                           USE_QK_L2NORM=True, STORE_FINAL_STATE=True),
     grid=lambda S: (cdiv(S["v"], S["BV"]), S["bh"]), ref=delta_ref,
     gpu=dict(bh=64, t=512, k=128, v=128, BV=32, warps=4, stages=1),
     interp=dict(bh=3, t=24, k=24, v=40, BV=16, warps=4, stages=1),
     tol={"o": 1e-2, "ht": 1e-4})


# ---- cumulative sum along rows in masked column tiles -------------------------------------------

case(name="masked_cumsum_2d", klass="scan", module="linear_rnn_kernels.py",
     kernel="masked_cumsum_2d",
     make=lambda rng, S: {"x": floats(rng, (S["m"], S["n"]), "f32"),
                          "y": out((S["m"], S["n"]), "f32")},
     args=lambda S, b: ["x", "y", I32(S["m"]), I32(S["n"]), I32(S["n"]), I32(S["n"])],
     consts=lambda S: dict(BLOCK_M=S["BM"], BLOCK_N=S["BN"]),
     grid=lambda S: (cdiv(S["m"], S["BM"]),),
     ref=lambda X, S: {"y": np.cumsum(X["x"], axis=1)},
     gpu=dict(m=4096, n=8000, BM=4, BN=1024, warps=4), interp=dict(m=6, n=100, BM=4, BN=32),
     tol=1e-5)
