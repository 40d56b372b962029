"""Cases of the delta-rule kernels in fla_delta_style.py with their float64
numpy references; each reference takes (v, c, s) as corpus_refs.py
describes. Every case name starts with "fla2 "."""
import numpy as np

from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_cases_vllm import _cdiv, _ints

F = "fla_delta_style.py"

# fp32 tl.dot runs as tf32 on the GPU unless the kernel asks for ieee
DOT_TOL = {"fp32": (2e-2, 2e-2)}
IEEE_TOL = {"fp32": (2e-4, 2e-4)}
LOG2E = 1.4426950408889634


def _chunk_indices(cu, bt):
    """(sequence, chunk) pairs of packed sequences, flattened."""
    pairs = [(n, i) for n in range(len(cu) - 1) for i in range(_cdiv(cu[n + 1] - cu[n], bt))]
    return np.array(pairs, dtype=np.int64).reshape(-1)


def _chunk_offsets(cu, bt):
    """index of each sequence's first chunk among all chunks."""
    out = [0]
    for n in range(len(cu) - 1):
        out.append(out[-1] + _cdiv(cu[n + 1] - cu[n], bt))
    return np.array(out[:-1], dtype=np.int64)


def _seqs(v, s, total):
    """(bos, eos) per sequence: from cu_seqlens, or total // T rows of T."""
    if "cu_seqlens" in v:
        cu = [int(x) for x in v["cu_seqlens"]]
        return list(zip(cu[:-1], cu[1:]))
    T = s["T"]
    return [(b * T, b * T + T) for b in range(total // T)]


def _blocks(bos, eos, bt):
    for r in range(bos, eos, bt):
        yield np.arange(r, min(r + bt, eos))


def _uniform(lo, hi):
    return lambda rng, n: lo + (hi - lo) * rng.random(n)


def _varlen_args(cu, bt, with_indices=True):
    args = [Buf("cu_seqlens", "i64", len(cu), _ints(cu))]
    if with_indices:
        ci = _chunk_indices(cu, bt)
        args.append(Buf("chunk_indices", "i64", len(ci), _ints(ci)))
    else:
        co = _chunk_offsets(cu, bt)
        args.append(Buf("chunk_offsets", "i64", len(co), _ints(co)))
    return args


# ---- references ---------------------------------------------------------------------------------


def l2norm_fwd(v, c, s):
    D = s["D"]
    x = v["x"].reshape(-1, D)
    r = 1.0 / np.sqrt((x * x).sum(1) + s["eps"])
    return {"y": (x * r[:, None]).reshape(-1), "rstd": r}


def l2norm_bwd(v, c, s):
    D = c["D"]
    y, dy, r = v["y"].reshape(-1, D), v["dy"].reshape(-1, D), v["rstd"]
    dx = (dy - y * (dy * y).sum(1, keepdims=True)) * r[:, None]
    return {"dx": dx.reshape(-1)}


def kda_gate_cumsum(v, c, s):
    H, S, BT = c["H"], c["S"], c["BT"]
    g = v["g"].reshape(-1, H, S)
    if "dt_bias" in v:
        g = g + v["dt_bias"].reshape(1, H, S)
    sp = np.where(g > 20, g, np.log1p(np.exp(np.minimum(g, 20))))
    a = -np.exp(v["A_log"])[None, :, None] * sp
    o = np.zeros_like(a)
    for bos, eos in _seqs(v, s, a.shape[0]):
        for rows in _blocks(bos, eos, BT):
            blk = a[rows]
            o[rows] = np.cumsum(blk[::-1], 0)[::-1] if c["REVERSE"] else np.cumsum(blk, 0)
    if c["HAS_SCALE"]:
        o = o * s["scale"]
    return {"o": o.reshape(-1)}


def kda_intra(v, c, s):
    H, K, BT = c["H"], c["K"], c["BT"]
    q, k, g = (v[n].reshape(-1, H, K) for n in ("q", "k", "g"))
    beta = v["beta"].reshape(-1, H)
    Akk = np.zeros((q.shape[0], H, BT))
    Aqk = np.zeros((q.shape[0], H, BT))
    for bos, eos in _seqs(v, s, q.shape[0]):
        for rows in _blocks(bos, eos, BT):
            n = len(rows)
            for h in range(H):
                gate = np.exp2(g[rows, h][:, None, :] - g[rows, h][None, :, :])  # [i, j, K]
                kk = (k[rows, h][:, None, :] * k[rows, h][None, :, :] * gate).sum(-1)
                qk = (q[rows, h][:, None, :] * k[rows, h][None, :, :] * gate).sum(-1)
                Akk[rows, h, :n] = np.tril(kk, -1) * beta[rows, h][:, None]
                Aqk[rows, h, :n] = np.tril(qk) * s["scale"]
    return {"Akk": Akk.reshape(-1), "Aqk": Aqk.reshape(-1)}


def solve_tril_64(v, c, s):
    H, BT = c["H"], c["BT"]
    A = v["A"].reshape(-1, H, BT)
    Ai = np.zeros_like(A)
    for bos, eos in _seqs(v, s, A.shape[0]):
        for rows in _blocks(bos, eos, BT):
            n = len(rows)
            for h in range(H):
                Ai[rows, h, :n] = np.linalg.inv(np.eye(n) + np.tril(A[rows, h, :n], -1))
    return {"Ai": Ai.reshape(-1)}


def recompute_w_u_kda(v, c, s):
    H, K, V, BT = c["H"], c["K"], c["V"], c["BT"]
    k, gk = v["k"].reshape(-1, H, K), v["gk"].reshape(-1, H, K)
    vv, beta, A = v["v"].reshape(-1, H, V), v["beta"].reshape(-1, H), v["A"].reshape(-1, H, BT)
    w, u, kg = np.zeros_like(k), np.zeros_like(vv), np.zeros_like(k)
    for bos, eos in _seqs(v, s, k.shape[0]):
        for rows in _blocks(bos, eos, BT):
            for h in range(H):
                a = A[rows, h, :len(rows)]
                b = beta[rows, h][:, None]
                u[rows, h] = a @ (vv[rows, h] * b)
                w[rows, h] = a @ (k[rows, h] * b * np.exp2(gk[rows, h]))
                kg[rows, h] = k[rows, h] * np.exp2(gk[rows[-1], h][None, :] - gk[rows, h])
    out = {"w": w.reshape(-1), "u": u.reshape(-1)}
    if "kg" in v:
        out["kg"] = kg.reshape(-1)
    return out


def chunk_fwd_h(v, c, s):
    H, K, V, BT = c["H"], c["K"], c["V"], c["BT"]
    k, w = v["k"].reshape(-1, H, K), v["w"].reshape(-1, H, K)
    u = v["v"].reshape(-1, H, V)
    g = v["g"].reshape(-1, H) if "g" in v else None
    gk = v["gk"].reshape(-1, H, K) if "gk" in v else None
    hs = v["h"].reshape(-1, H, K, V).copy()
    vn = np.zeros_like(u)
    ht = np.zeros((0,))
    seqs = _seqs(v, s, k.shape[0])
    if "ht" in v:
        ht = v["ht"].reshape(len(seqs), H, K, V).copy()
    boh = 0
    for n, (bos, eos) in enumerate(seqs):
        for h in range(H):
            S = v["h0"].reshape(len(seqs), H, K, V)[n, h].copy() if "h0" in v else np.zeros((K, V))
            for i, rows in enumerate(_blocks(bos, eos, BT)):
                hs[boh + i, h] = S
                d = u[rows, h] - w[rows, h] @ S
                vn[rows, h] = d
                kk = k[rows, h]
                if g is not None:
                    gl = g[rows[-1], h]
                    d = d * np.exp(gl - g[rows, h])[:, None]
                    S = S * np.exp(gl)
                if gk is not None:
                    gkl = gk[rows[-1], h]
                    S = S * np.exp2(gkl)[:, None]
                    kk = kk * np.exp2(gkl[None, :] - gk[rows, h])
                S = S + kk.T @ d
            if "ht" in v:
                ht[n, h] = S
        boh += _cdiv(eos - bos, BT)
    out = {"h": hs.reshape(-1)}
    if "v_new" in v:
        out["v_new"] = vn.reshape(-1)
    if "ht" in v:
        out["ht"] = ht.reshape(-1)
    return out


def _chunks_in_order(v, s, total, BT):
    """(global chunk index, rows) in the order of chunk_indices."""
    i = 0
    for bos, eos in _seqs(v, s, total):
        for rows in _blocks(bos, eos, BT):
            yield i, rows
            i += 1


def kda_fwd_o(v, c, s):
    H, K, V, BT = c["H"], c["K"], c["V"], c["BT"]
    q, gk = v["q"].reshape(-1, H, K), v["gk"].reshape(-1, H, K)
    vv, A = v["v"].reshape(-1, H, V), v["Aqk"].reshape(-1, H, BT)
    hs = v["h"].reshape(-1, H, K, V)
    o = np.zeros_like(vv)
    for i, rows in _chunks_in_order(v, s, q.shape[0], BT):
        for h in range(H):
            o[rows, h] = s["scale"] * (q[rows, h] * np.exp2(gk[rows, h])) @ hs[i, h] + A[rows, h, :len(rows)] @ vv[rows, h]
    return {"o": o.reshape(-1)}


def fwd_o_exp2(v, c, s):
    H, K, V, BT = c["H"], c["K"], c["V"], c["BT"]
    q, k, vv = v["q"].reshape(-1, H, K), v["k"].reshape(-1, H, K), v["v"].reshape(-1, H, V)
    g = v["g"].reshape(-1, H) if "g" in v else np.zeros(q.shape[:2])
    hs = v["h"].reshape(-1, H, K, V)
    o = np.zeros_like(vv)
    for i, rows in _chunks_in_order(v, s, q.shape[0], BT):
        for h in range(H):
            gg = g[rows, h]
            A = np.tril(q[rows, h] @ k[rows, h].T * np.exp2(gg[:, None] - gg[None, :]))
            o[rows, h] = s["scale"] * ((q[rows, h] @ hs[i, h]) * np.exp2(gg)[:, None] + A @ vv[rows, h])
    return {"o": o.reshape(-1)}


def dv_local(v, c, s):
    H, K, V, BT = c["H"], c["K"], c["V"], c["BT"]
    q, k, do = v["q"].reshape(-1, H, K), v["k"].reshape(-1, H, K), v["do"].reshape(-1, H, V)
    g = v["g"].reshape(-1, H) if "g" in v else np.zeros(q.shape[:2])
    dv = np.zeros_like(do)
    for bos, eos in _seqs(v, s, q.shape[0]):
        for rows in _blocks(bos, eos, BT):
            for h in range(H):
                gg = g[rows, h]
                A = np.triu(k[rows, h] @ q[rows, h].T * np.exp(gg[None, :] - gg[:, None])) * s["scale"]
                dv[rows, h] = A @ do[rows, h]
    return {"dv": dv.reshape(-1)}


def bwd_dhu(v, c, s):
    H, K, V, BT = c["H"], c["K"], c["V"], c["BT"]
    q, k, w = (v[n].reshape(-1, H, K) for n in ("q", "k", "w"))
    do, dv = v["do"].reshape(-1, H, V), v["dv"].reshape(-1, H, V)
    g = v["g"].reshape(-1, H) if "g" in v else None
    dh = v["dh"].reshape(-1, H, K, V).copy()
    dv2 = np.zeros_like(dv)
    seqs = _seqs(v, s, q.shape[0])
    dh0 = np.zeros((len(seqs), H, K, V))
    boh = 0
    for n, (bos, eos) in enumerate(seqs):
        chunks = list(_blocks(bos, eos, BT))
        for h in range(H):
            S = v["dht"].reshape(len(seqs), H, K, V)[n, h].copy() if "dht" in v else np.zeros((K, V))
            for i in range(len(chunks) - 1, -1, -1):
                rows = chunks[i]
                dh[boh + i, h] = S
                kk, qq = k[rows, h], q[rows, h]
                if g is not None:
                    gl = g[rows[-1], h]
                    kk = kk * np.exp(gl - g[rows, h])[:, None]
                    qq = qq * np.exp(g[rows, h])[:, None]
                d2 = dv[rows, h] + kk @ S
                dv2[rows, h] = d2
                if g is not None:
                    S = S * np.exp(gl)
                S = S + s["scale"] * qq.T @ do[rows, h] - w[rows, h].T @ d2
            dh0[n, h] = S
        boh += len(chunks)
    out = {"dh": dh.reshape(-1), "dv2": dv2.reshape(-1)}
    if "dh0" in v:
        out["dh0"] = dh0.reshape(-1)
    return out


def wy_bwd(v, c, s):
    H, K, V, BT = c["H"], c["K"], c["V"], c["BT"]
    k, dw = v["k"].reshape(-1, H, K), v["dw"].reshape(-1, H, K)
    vv, du = v["v"].reshape(-1, H, V), v["du"].reshape(-1, H, V)
    beta, A = v["beta"].reshape(-1, H), v["A"].reshape(-1, H, BT)
    dk, dvo, db = np.zeros_like(k), np.zeros_like(vv), np.zeros_like(beta)
    for bos, eos in _seqs(v, s, k.shape[0]):
        for rows in _blocks(bos, eos, BT):
            n = len(rows)
            for h in range(H):
                a, b = A[rows, h, :n], beta[rows, h][:, None]
                kk, x = k[rows, h], vv[rows, h]
                dA = dw[rows, h] @ (kk * b).T + du[rows, h] @ (x * b).T
                dvb, dkb = a.T @ du[rows, h], a.T @ dw[rows, h]
                dM = np.tril(-(a.T @ dA @ a.T), -1)
                dvo[rows, h] = dvb * b
                dk[rows, h] = (dkb + dM @ kk) * b + dM.T @ (kk * b)
                db[rows, h] = (dvb * x).sum(1) + ((dkb + dM @ kk) * kk).sum(1)
    return {"dk": dk.reshape(-1), "dv": dvo.reshape(-1), "dbeta": db.reshape(-1)}


def fused_recurrent_kda(v, c, s):
    H, HV, K, V = c["H"], c["HV"], c["K"], c["V"]
    q, k = v["q"].reshape(-1, H, K), v["k"].reshape(-1, H, K)
    vv, gk = v["v"].reshape(-1, HV, V), v["gk"].reshape(-1, HV, K)
    beta = v["beta"].reshape(-1, HV, V) if c["IS_BETA_HEADWISE"] else v["beta"].reshape(-1, HV, 1)
    seqs = _seqs(v, s, q.shape[0])
    o = np.zeros_like(vv)
    ht = np.zeros((len(seqs), HV, K, V))
    for n, (bos, eos) in enumerate(seqs):
        for hv in range(HV):
            h = hv // (HV // H)
            S = v["h0"].reshape(len(seqs), HV, K, V)[n, hv].copy() if "h0" in v else np.zeros((K, V))
            for t in range(bos, eos):
                qq, kk = q[t, h], k[t, h]
                if c["USE_QK_L2NORM_IN_KERNEL"]:
                    qq = qq / np.sqrt((qq * qq).sum() + 1e-6)
                    kk = kk / np.sqrt((kk * kk).sum() + 1e-6)
                S = S * np.exp(gk[t, hv])[:, None]
                r = beta[t, hv] * (vv[t, hv] - kk @ S)
                S = S + np.outer(kk, r)
                o[t, hv] = (qq * s["scale"]) @ S
            ht[n, hv] = S
    out = {"o": o.reshape(-1)}
    if "ht" in v:
        out["ht"] = ht.reshape(-1)
    return out


def kkt_solve(v, c, s):
    H, K, BT = c["H"], c["K"], c["BT"]
    k, beta = v["k"].reshape(-1, H, K), v["beta"].reshape(-1, H)
    g = v["g"].reshape(-1, H) if "g" in v else np.zeros_like(beta)
    Ai = np.zeros((k.shape[0], H, BT))
    for bos, eos in _seqs(v, s, k.shape[0]):
        for rows in _blocks(bos, eos, BT):
            n = len(rows)
            for h in range(H):
                gg = g[rows, h]
                M = (k[rows, h] @ k[rows, h].T) * beta[rows, h][:, None] * np.exp(gg[:, None] - gg[None, :])
                Ai[rows, h, :n] = np.linalg.inv(np.eye(n) + np.tril(M, -1))
    return {"Ai": Ai.reshape(-1)}


def global_cumsum(v, c, s):
    H, S = c["H"], c["S"]
    x = v["s"].reshape(-1, H, S)
    z = np.zeros_like(x)
    for bos, eos in _seqs(v, s, x.shape[0]):
        blk = x[bos:eos]
        z[bos:eos] = np.cumsum(blk[::-1], 0)[::-1] if c["REVERSE"] else np.cumsum(blk, 0)
    if c["HAS_SCALE"]:
        z = z * s["scale"]
    return {"z": z.reshape(-1)}


def sigmoid_gating_update(v, c, s):
    H, HV, K, V = c["H"], c["HV"], c["K"], c["V"]
    q, k = v["q"].reshape(-1, H, K), v["k"].reshape(-1, H, K)
    vv = v["v"].reshape(-1, HV, V)
    a, b = v["a"].reshape(-1, HV), v["b"].reshape(-1, HV)
    pool = v["h0_source"].reshape(-1, HV, K, V).copy() if "h0_source" in v else None
    idx = v["h0_indices"] if "h0_indices" in v else None
    seqs = _seqs(v, s, q.shape[0])
    o = np.zeros((1,) + vv.shape)
    for n, (bos, eos) in enumerate(seqs):
        slot = int(idx[n]) if idx is not None else -1
        for hv in range(HV):
            h = hv // (HV // H)
            S = pool[slot, hv].copy() if slot >= 0 else np.zeros((K, V))
            for t in range(bos, eos):
                x = a[t, hv] + v["dt_bias"][hv]
                bx = s["softplus_beta"] * x
                sp = np.log1p(np.exp(bx)) / s["softplus_beta"] if bx <= s["softplus_threshold"] else x
                g = -np.exp(v["A_log"][hv]) * sp
                beta = 1.0 / (1.0 + np.exp(-b[t, hv]))
                qq, kk = q[t, h], k[t, h]
                if c["USE_QK_L2NORM_IN_KERNEL"]:
                    qq = qq / np.sqrt((qq * qq).sum() + 1e-6)
                    kk = kk / np.sqrt((kk * kk).sum() + 1e-6)
                S = S * np.exp(g)
                r = beta * (vv[t, hv] - kk @ S)
                S = S + np.outer(kk, r)
                o[0, t, hv] = (qq * s["scale"]) @ S
            if slot >= 0:
                pool[slot, hv] = S
    out = {"o": o.reshape(-1)}
    if pool is not None:
        out["h0_source"] = pool.reshape(-1)
    return out


def l2norm_bwd_row(v, c, s):
    D = s["D"]
    x, dy = v["x"].reshape(-1, D), v["dy"].reshape(-1, D)
    r = 1.0 / np.sqrt((x * x).sum(1, keepdims=True) + s["eps"])
    return {"dx": (dy * r - (dy * x).sum(1, keepdims=True) * r ** 3 * x).reshape(-1)}


def kda_intra_sub_chunk(v, c, s):
    H, K, BT, BC = c["H"], c["K"], c["BT"], c["BC"]
    q, k, g = (v[n].reshape(-1, H, K) for n in ("q", "k", "g"))
    beta = v["beta"].reshape(-1, H)
    Aqk = v["Aqk"].reshape(-1, H, BT).copy()
    Akk = v["Akk"].reshape(-1, H, BT).copy()
    for bos, eos in _seqs(v, s, q.shape[0]):
        for chunk in _blocks(bos, eos, BT):
            for sub in _blocks(chunk[0], chunk[-1] + 1, BC):
                n, c0 = len(sub), sub[0] - chunk[0]
                for h in range(H):
                    e = np.exp2(g[sub, h][:, None, :] - g[sub, h][None, :, :])
                    qk = (q[sub, h][:, None, :] * k[sub, h][None, :, :] * e).sum(-1) * s["scale"]
                    kk = (k[sub, h][:, None, :] * k[sub, h][None, :, :] * e).sum(-1) * beta[sub, h][:, None]
                    Aqk[sub, h, c0:c0 + n] = np.tril(qk)
                    Akk[sub, h, c0:c0 + n] = np.tril(kk, -1)
    return {"Aqk": Aqk.reshape(-1), "Akk": Akk.reshape(-1)}


# ---- cases --------------------------------------------------------------------------------------


def cases():
    out = []
    add = out.append

    # L2 norm
    for T, D, BD, dt in ((7, 48, 64, "fp32"), (5, 100, 128, "bf16")):
        add(Case(f"fla2 l2norm fwd row {dt} D={D}", F, "l2norm_fwd_kernel1", (T,),
                 [Buf("x", dt, T * D), Out("y", dt, T * D), Out("rstd", "fp32", T), Scalar("eps", 1e-6, "fp32"),
                  Scalar("D", D)],
                 {"BD": BD}, num_warps=1, ref=l2norm_fwd))
    for T, D, BD, BT, dt in ((37, 48, 64, 16, "fp32"), (20, 32, 32, 8, "fp16")):
        add(Case(f"fla2 l2norm bwd {dt} T={T}", F, "l2norm_bwd_kernel", (_cdiv(T, BT),),
                 [Buf("y", dt, T * D), Buf("rstd", "fp32", T, _uniform(0.5, 2.0)), Buf("dy", dt, T * D),
                  Out("dx", dt, T * D), Scalar("T", T)],
                 {"D": D, "BD": BD, "BT": BT}, num_warps=2, ref=l2norm_bwd))

    # KDA gate with the chunk-local cumulative sum
    B, T, H, S, BT = 2, 40, 2, 24, 16
    add(Case("fla2 kda gate cumsum forward bias log2", F, "kda_gate_chunk_cumsum_kernel",
             (_cdiv(S, 16), _cdiv(T, BT), B * H),
             [Buf("g", "fp32", B * T * H * S), Buf("A_log", "fp32", H, scale=0.5), Buf("dt_bias", "fp32", H * S),
              Out("o", "fp32", B * T * H * S), Scalar("scale", LOG2E, "fp32"), Null("cu_seqlens"),
              Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "S": S, "BT": BT, "BS": 16, "REVERSE": False, "HAS_SCALE": True, "HAS_BIAS": True,
              "IS_VARLEN": False}, ref=kda_gate_cumsum))
    cu, S = [0, 13, 40, 45], 20
    ci = _chunk_indices(cu, BT)
    add(Case("fla2 kda gate cumsum reverse varlen bf16", F, "kda_gate_chunk_cumsum_kernel", (1, len(ci) // 2, H),
             [Buf("g", "bf16", cu[-1] * H * S, scale=3.0), Buf("A_log", "fp32", H, scale=0.5), Null("dt_bias"),
              Out("o", "fp32", cu[-1] * H * S), Null("scale")] + _varlen_args(cu, BT) + [Scalar("T", cu[-1])],
             {"H": H, "S": S, "BT": BT, "BS": 32, "REVERSE": True, "HAS_SCALE": False, "HAS_BIAS": False,
              "IS_VARLEN": True}, ref=kda_gate_cumsum))

    # KDA intra-chunk matrices (gates in log2 units, decaying within a chunk)
    B, T, H, K, BT = 2, 40, 2, 40, 16
    n = B * T * H * K
    add(Case("fla2 kda intra kkt qk", F, "chunk_kda_fwd_kernel_intra", (_cdiv(T, BT), B * H),
             [Buf("q", "fp32", n, scale=0.3), Buf("k", "fp32", n, scale=0.3), Buf("g", "fp32", n, _uniform(-1.5, 0.)),
              Buf("beta", "fp32", B * T * H, "rand"), Out("Akk", "fp32", B * T * H * BT),
              Out("Aqk", "fp32", B * T * H * BT), Scalar("scale", 0.25, "fp32"), Null("cu_seqlens"),
              Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "K": K, "BT": BT, "BK": 16, "IS_VARLEN": False}, tol=DOT_TOL, ref=kda_intra))
    cu, H, K, BT = [0, 19, 45], 1, 32, 32
    ci = _chunk_indices(cu, BT)
    n = cu[-1] * H * K
    add(Case("fla2 kda intra varlen", F, "chunk_kda_fwd_kernel_intra", (len(ci) // 2, H),
             [Buf("q", "fp32", n, scale=0.3), Buf("k", "fp32", n, scale=0.3), Buf("g", "fp32", n, _uniform(-0.8, 0.)),
              Buf("beta", "fp32", cu[-1] * H, "rand"), Out("Akk", "fp32", cu[-1] * H * BT),
              Out("Aqk", "fp32", cu[-1] * H * BT), Scalar("scale", 0.5, "fp32")] + _varlen_args(cu, BT)
             + [Scalar("T", cu[-1])],
             {"H": H, "K": K, "BT": BT, "BK": 32, "IS_VARLEN": True}, tol=DOT_TOL, ref=kda_intra))

    # 64x64 inverses
    B, T, H = 1, 100, 2
    add(Case("fla2 solve tril 64 ieee", F, "merge_16x16_to_64x64_inverse_kernel", (_cdiv(T, 64), B * H),
             [Buf("A", "fp32", B * T * H * 64, scale=0.08), Out("Ai", "fp32", B * T * H * 64), Null("cu_seqlens"),
              Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "BT": 64, "DOT_PRECISION": "ieee", "IS_VARLEN": False}, tol=IEEE_TOL, ref=solve_tril_64))
    cu, H = [0, 70, 75, 140], 1
    ci = _chunk_indices(cu, 64)
    add(Case("fla2 solve tril 64 varlen tf32", F, "merge_16x16_to_64x64_inverse_kernel", (len(ci) // 2, H),
             [Buf("A", "fp32", cu[-1] * H * 64, scale=0.08), Out("Ai", "fp32", cu[-1] * H * 64)]
             + _varlen_args(cu, 64) + [Scalar("T", cu[-1])],
             {"H": H, "BT": 64, "DOT_PRECISION": "tf32", "IS_VARLEN": True}, tol=DOT_TOL, ref=solve_tril_64))

    # KDA w, u, kg
    B, T, H, K, V, BT = 2, 40, 2, 40, 24, 16
    add(Case("fla2 kda recompute w u kg", F, "recompute_w_u_kda_fwd_kernel", (_cdiv(T, BT), B * H),
             [Buf("k", "fp32", B * T * H * K), Buf("v", "fp32", B * T * H * V), Buf("beta", "fp32", B * T * H, "rand"),
              Out("w", "fp32", B * T * H * K), Out("u", "fp32", B * T * H * V), Out("kg", "fp32", B * T * H * K),
              Buf("A", "fp32", B * T * H * BT, scale=0.3), Buf("gk", "fp32", B * T * H * K, _uniform(-1., 0.)),
              Null("cu_seqlens"), Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 16, "BV": 16, "STORE_KG": True, "IS_VARLEN": False},
             tol=DOT_TOL, ref=recompute_w_u_kda))
    cu, H = [0, 9, 41], 1
    ci = _chunk_indices(cu, BT)
    Tt = cu[-1]
    add(Case("fla2 kda recompute w u varlen bf16", F, "recompute_w_u_kda_fwd_kernel", (len(ci) // 2, H),
             [Buf("k", "bf16", Tt * H * K), Buf("v", "bf16", Tt * H * V), Buf("beta", "bf16", Tt * H, "rand"),
              Out("w", "fp32", Tt * H * K), Out("u", "fp32", Tt * H * V), Null("kg"),
              Buf("A", "fp32", Tt * H * BT, scale=0.3), Buf("gk", "fp32", Tt * H * K, _uniform(-1., 0.))]
             + _varlen_args(cu, BT) + [Scalar("T", Tt)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 32, "BV": 32, "STORE_KG": False, "IS_VARLEN": True},
             tol=DOT_TOL, ref=recompute_w_u_kda))

    # chunk state recurrence
    B, T, H, K, V, BT = 2, 50, 2, 32, 24, 16
    NT = _cdiv(T, BT)
    add(Case("fla2 chunk h gated delta, states, v_new", F, "chunk_gated_delta_rule_fwd_kernel_h_blockdim64",
             (_cdiv(V, 16), B * H),
             [Buf("k", "fp32", B * T * H * K, scale=0.3), Buf("v", "fp32", B * T * H * V),
              Buf("w", "fp32", B * T * H * K, scale=0.1), Out("v_new", "fp32", B * T * H * V),
              Buf("g", "fp32", B * T * H, _uniform(-1., 0.)), Null("gk"), Out("h", "fp32", B * NT * H * K * V),
              Buf("h0", "fp32", B * H * K * V), Out("ht", "fp32", B * H * K * V), Null("cu_seqlens"),
              Null("chunk_offsets"), Scalar("T", T)],
             {"H": H, "K": K, "V": V, "BT": BT, "BV": 16, "USE_G": True, "USE_GK": False, "USE_INITIAL_STATE": True,
              "STORE_FINAL_STATE": True, "SAVE_NEW_VALUE": True, "IS_VARLEN": False},
             tol=DOT_TOL, ref=chunk_fwd_h))
    B, T, H, K, V = 1, 35, 2, 80, 20
    NT = _cdiv(T, BT)
    add(Case("fla2 chunk h kda K=80 two slices", F, "chunk_gated_delta_rule_fwd_kernel_h_blockdim64",
             (_cdiv(V, 16), B * H),
             [Buf("k", "fp32", B * T * H * K, scale=0.2), Buf("v", "fp32", B * T * H * V),
              Buf("w", "fp32", B * T * H * K, scale=0.1), Null("v_new"), Null("g"),
              Buf("gk", "fp32", B * T * H * K, _uniform(-0.5, 0.)), Out("h", "fp32", B * NT * H * K * V),
              Null("h0"), Out("ht", "fp32", B * H * K * V), Null("cu_seqlens"), Null("chunk_offsets"), Scalar("T", T)],
             {"H": H, "K": K, "V": V, "BT": BT, "BV": 16, "USE_G": False, "USE_GK": True, "USE_INITIAL_STATE": False,
              "STORE_FINAL_STATE": True, "SAVE_NEW_VALUE": False, "IS_VARLEN": False},
             tol=DOT_TOL, ref=chunk_fwd_h))
    cu, H, K, V = [0, 20, 53, 60], 2, 64, 32
    NTt = int(sum(_cdiv(cu[i + 1] - cu[i], BT) for i in range(len(cu) - 1)))
    Tt, N = cu[-1], len(cu) - 1
    add(Case("fla2 chunk h delta varlen", F, "chunk_gated_delta_rule_fwd_kernel_h_blockdim64", (1, N * H),
             [Buf("k", "fp32", Tt * H * K, scale=0.2), Buf("v", "fp32", Tt * H * V),
              Buf("w", "fp32", Tt * H * K, scale=0.1), Out("v_new", "fp32", Tt * H * V), Null("g"), Null("gk"),
              Out("h", "fp32", NTt * H * K * V), Buf("h0", "fp32", N * H * K * V), Out("ht", "fp32", N * H * K * V)]
             + _varlen_args(cu, BT, with_indices=False) + [Scalar("T", Tt)],
             {"H": H, "K": K, "V": V, "BT": BT, "BV": 32, "USE_G": False, "USE_GK": False, "USE_INITIAL_STATE": True,
              "STORE_FINAL_STATE": True, "SAVE_NEW_VALUE": True, "IS_VARLEN": True},
             tol=DOT_TOL, ref=chunk_fwd_h))

    # KDA output
    B, T, H, K, V, BT = 2, 40, 2, 40, 24, 16
    NT = _cdiv(T, BT)
    add(Case("fla2 kda fwd o", F, "chunk_kda_fwd_kernel_o", (_cdiv(V, 16), NT, B * H),
             [Buf("q", "fp32", B * T * H * K), Buf("v", "fp32", B * T * H * V),
              Buf("gk", "fp32", B * T * H * K, _uniform(-1., 0.)), Buf("h", "fp32", B * NT * H * K * V, scale=0.5),
              Buf("Aqk", "fp32", B * T * H * BT, scale=0.5), Out("o", "fp32", B * T * H * V),
              Scalar("scale", 0.3, "fp32"), Null("cu_seqlens"), Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 16, "BV": 16, "IS_VARLEN": False}, tol=DOT_TOL, ref=kda_fwd_o))
    cu, H = [0, 9, 41], 1
    ci = _chunk_indices(cu, BT)
    Tt = cu[-1]
    add(Case("fla2 kda fwd o varlen", F, "chunk_kda_fwd_kernel_o", (1, len(ci) // 2, H),
             [Buf("q", "fp32", Tt * H * K), Buf("v", "fp32", Tt * H * V),
              Buf("gk", "fp32", Tt * H * K, _uniform(-1., 0.)), Buf("h", "fp32", len(ci) // 2 * H * K * V, scale=0.5),
              Buf("Aqk", "fp32", Tt * H * BT, scale=0.5), Out("o", "fp32", Tt * H * V),
              Scalar("scale", 0.3, "fp32")] + _varlen_args(cu, BT) + [Scalar("T", Tt)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 32, "BV": 32, "IS_VARLEN": True}, tol=DOT_TOL, ref=kda_fwd_o))

    # gated DeltaNet output in exp2 form
    B, T, H, K, V, BT = 2, 40, 2, 32, 32, 16
    NT = _cdiv(T, BT)
    add(Case("fla2 fwd o exp2 gated", F, "chunk_fwd_kernel_o_exp2", (_cdiv(V, 16), NT, B * H),
             [Buf("q", "fp32", B * T * H * K), Buf("k", "fp32", B * T * H * K), Buf("v", "fp32", B * T * H * V),
              Buf("h", "fp32", B * NT * H * K * V, scale=0.5), Buf("g", "fp32", B * T * H, _uniform(-2., 0.)),
              Out("o", "fp32", B * T * H * V), Scalar("scale", 0.2, "fp32"), Null("cu_seqlens"),
              Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 16, "BV": 16, "USE_G": True, "IS_VARLEN": False},
             tol=IEEE_TOL, ref=fwd_o_exp2))
    cu, H = [0, 30, 47], 2
    ci = _chunk_indices(cu, BT)
    Tt = cu[-1]
    add(Case("fla2 fwd o exp2 varlen fp16", F, "chunk_fwd_kernel_o_exp2", (2, len(ci) // 2, H),
             [Buf("q", "fp16", Tt * H * K, scale=0.5), Buf("k", "fp16", Tt * H * K, scale=0.5),
              Buf("v", "fp16", Tt * H * V), Buf("h", "fp16", len(ci) // 2 * H * K * V, scale=0.5), Null("g"),
              Out("o", "fp16", Tt * H * V), Scalar("scale", 0.2, "fp32")] + _varlen_args(cu, BT) + [Scalar("T", Tt)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 32, "BV": 16, "USE_G": False, "IS_VARLEN": True},
             ref_tol={"fp16": (2e-2, 2e-2)}, ref=fwd_o_exp2))

    # local dv
    B, T, H, K, V, BT = 2, 40, 2, 40, 24, 16
    add(Case("fla2 bwd dv local gated", F, "chunk_bwd_kernel_dv_local", (_cdiv(T, BT), B * H),
             [Buf("q", "fp32", B * T * H * K), Buf("k", "fp32", B * T * H * K), Buf("g", "fp32", B * T * H, _uniform(-1., 0.)),
              Buf("do", "fp32", B * T * H * V), Out("dv", "fp32", B * T * H * V), Scalar("scale", 0.3, "fp32"),
              Null("cu_seqlens"), Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 16, "BV": 16, "USE_G": True, "IS_VARLEN": False},
             tol=DOT_TOL, ref=dv_local))
    cu, H = [0, 17, 40], 1
    ci = _chunk_indices(cu, BT)
    Tt = cu[-1]
    add(Case("fla2 bwd dv local varlen", F, "chunk_bwd_kernel_dv_local", (len(ci) // 2, H),
             [Buf("q", "fp32", Tt * H * K), Buf("k", "fp32", Tt * H * K), Null("g"), Buf("do", "fp32", Tt * H * V),
              Out("dv", "fp32", Tt * H * V), Scalar("scale", 0.3, "fp32")] + _varlen_args(cu, BT) + [Scalar("T", Tt)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 32, "BV": 32, "USE_G": False, "IS_VARLEN": True},
             tol=DOT_TOL, ref=dv_local))

    # reverse state gradient
    B, T, H, K, V, BT = 2, 50, 2, 32, 24, 16
    NT = _cdiv(T, BT)
    add(Case("fla2 bwd dhu gated, dht, dh0", F, "chunk_gated_delta_rule_bwd_kernel_dhu", (_cdiv(V, 16), B * H),
             [Buf("q", "fp32", B * T * H * K, scale=0.5), Buf("k", "fp32", B * T * H * K, scale=0.3),
              Buf("w", "fp32", B * T * H * K, scale=0.1), Buf("g", "fp32", B * T * H, _uniform(-1., 0.)),
              Buf("dht", "fp32", B * H * K * V), Out("dh0", "fp32", B * H * K * V), Buf("do", "fp32", B * T * H * V),
              Out("dh", "fp32", B * NT * H * K * V), Buf("dv", "fp32", B * T * H * V), Out("dv2", "fp32", B * T * H * V),
              Scalar("scale", 0.25, "fp32"), Null("cu_seqlens"), Null("chunk_offsets"), Scalar("T", T)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 32, "BV": 16, "USE_G": True, "USE_FINAL_STATE_GRADIENT": True,
              "STORE_INITIAL_STATE_GRADIENT": True, "IS_VARLEN": False},
             tol=DOT_TOL, ref=bwd_dhu))
    cu, H, K = [0, 20, 53], 1, 24
    NTt = int(sum(_cdiv(cu[i + 1] - cu[i], BT) for i in range(len(cu) - 1)))
    Tt, N = cu[-1], len(cu) - 1
    add(Case("fla2 bwd dhu varlen K=24", F, "chunk_gated_delta_rule_bwd_kernel_dhu", (_cdiv(V, 32), N * H),
             [Buf("q", "fp32", Tt * H * K, scale=0.5), Buf("k", "fp32", Tt * H * K, scale=0.3),
              Buf("w", "fp32", Tt * H * K, scale=0.1), Null("g"), Null("dht"), Out("dh0", "fp32", N * H * K * V),
              Buf("do", "fp32", Tt * H * V), Out("dh", "fp32", NTt * H * K * V), Buf("dv", "fp32", Tt * H * V),
              Out("dv2", "fp32", Tt * H * V), Scalar("scale", 0.25, "fp32")]
             + _varlen_args(cu, BT, with_indices=False) + [Scalar("T", Tt)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 32, "BV": 32, "USE_G": False, "USE_FINAL_STATE_GRADIENT": False,
              "STORE_INITIAL_STATE_GRADIENT": True, "IS_VARLEN": True},
             tol=DOT_TOL, ref=bwd_dhu))

    # WY backward
    B, T, H, K, V, BT = 2, 40, 2, 40, 24, 16
    n = B * T * H
    add(Case("fla2 wy repr bwd", F, "prepare_wy_repr_bwd_kernel", (_cdiv(T, BT), B * H),
             [Buf("k", "fp32", n * K, scale=0.3), Buf("v", "fp32", n * V), Buf("beta", "fp32", n, "rand"),
              Buf("A", "fp32", n * BT, scale=0.3), Buf("dw", "fp32", n * K), Buf("du", "fp32", n * V),
              Out("dk", "fp32", n * K), Out("dv", "fp32", n * V), Out("dbeta", "fp32", n), Null("cu_seqlens"),
              Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 16, "BV": 16, "IS_VARLEN": False},
             tol=IEEE_TOL, ref_tol={"fp32": (5e-4, 5e-4)}, ref=wy_bwd))
    cu, H, K, V, BT = [0, 23, 60], 2, 16, 32, 32
    ci = _chunk_indices(cu, BT)
    n = cu[-1] * H
    add(Case("fla2 wy repr bwd varlen BT=32", F, "prepare_wy_repr_bwd_kernel", (len(ci) // 2, H),
             [Buf("k", "fp32", n * K, scale=0.3), Buf("v", "fp32", n * V), Buf("beta", "fp32", n, "rand"),
              Buf("A", "fp32", n * BT, scale=0.2), Buf("dw", "fp32", n * K), Buf("du", "fp32", n * V),
              Out("dk", "fp32", n * K), Out("dv", "fp32", n * V), Out("dbeta", "fp32", n)]
             + _varlen_args(cu, BT) + [Scalar("T", cu[-1])],
             {"H": H, "K": K, "V": V, "BT": BT, "BK": 16, "BV": 32, "IS_VARLEN": True},
             tol=IEEE_TOL, ref_tol={"fp32": (5e-4, 5e-4)}, ref=wy_bwd))

    # fused recurrent KDA
    B, T, H, HV, K, V = 2, 9, 2, 4, 16, 24
    add(Case("fla2 fused recurrent kda gva, states, qk l2norm", F, "fused_recurrent_kda_fwd_kernel", (3, B * HV),
             [Buf("q", "fp32", B * T * H * K), Buf("k", "fp32", B * T * H * K), Buf("v", "fp32", B * T * HV * V),
              Buf("gk", "fp32", B * T * HV * K, _uniform(-0.5, 0.)), Buf("beta", "fp32", B * T * HV, "rand"),
              Out("o", "fp32", B * T * HV * V), Buf("h0", "fp32", B * HV * K * V), Out("ht", "fp32", B * HV * K * V),
              Null("cu_seqlens"), Scalar("scale", 0.25, "fp32"), Scalar("T", T)],
             {"H": H, "HV": HV, "K": K, "V": V, "BK": 16, "BV": 8, "USE_INITIAL_STATE": True,
              "STORE_FINAL_STATE": True, "IS_BETA_HEADWISE": False, "USE_QK_L2NORM_IN_KERNEL": True,
              "IS_VARLEN": False}, num_warps=1, ref=fused_recurrent_kda))
    cu, H, HV, K, V = [0, 3, 10, 11], 2, 2, 20, 16
    Tt, N = cu[-1], len(cu) - 1
    add(Case("fla2 fused recurrent kda varlen headwise beta", F, "fused_recurrent_kda_fwd_kernel", (1, N * HV),
             [Buf("q", "bf16", Tt * H * K, scale=0.3), Buf("k", "bf16", Tt * H * K, scale=0.3),
              Buf("v", "bf16", Tt * HV * V), Buf("gk", "fp32", Tt * HV * K, _uniform(-0.5, 0.)),
              Buf("beta", "bf16", Tt * HV * V, "rand"), Out("o", "fp32", Tt * HV * V), Null("h0"),
              Out("ht", "fp32", N * HV * K * V), Buf("cu_seqlens", "i64", len(cu), _ints(cu)),
              Scalar("scale", 0.5, "fp32"), Scalar("T", Tt)],
             {"H": H, "HV": HV, "K": K, "V": V, "BK": 32, "BV": 16, "USE_INITIAL_STATE": False,
              "STORE_FINAL_STATE": True, "IS_BETA_HEADWISE": True, "USE_QK_L2NORM_IN_KERNEL": False,
              "IS_VARLEN": True}, num_warps=1, ref=fused_recurrent_kda))

    # fused K K^T and inverse on 32-row chunks
    B, T, H, K, BT = 2, 50, 2, 40, 32
    add(Case("fla2 kkt solve 32 gated", F, "chunk_scaled_dot_kkt_solve_kernel", (_cdiv(T, BT), B * H),
             [Buf("k", "fp32", B * T * H * K, scale=0.2), Buf("g", "fp32", B * T * H, _uniform(-0.5, 0.)),
              Buf("beta", "fp32", B * T * H, "rand"), Out("Ai", "fp32", B * T * H * BT), Null("cu_seqlens"),
              Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "K": K, "BT": BT, "BC": 16, "BK": 16, "USE_G": True, "IS_VARLEN": False},
             tol=IEEE_TOL, ref_tol={"fp32": (5e-4, 5e-4)}, ref=kkt_solve))
    cu, H, K = [0, 20, 57], 1, 32
    ci = _chunk_indices(cu, BT)
    add(Case("fla2 kkt solve 32 varlen", F, "chunk_scaled_dot_kkt_solve_kernel", (len(ci) // 2, H),
             [Buf("k", "fp32", cu[-1] * H * K, scale=0.2), Null("g"), Buf("beta", "fp32", cu[-1] * H, "rand"),
              Out("Ai", "fp32", cu[-1] * H * BT)] + _varlen_args(cu, BT) + [Scalar("T", cu[-1])],
             {"H": H, "K": K, "BT": BT, "BC": 16, "BK": 32, "USE_G": False, "IS_VARLEN": True},
             tol=IEEE_TOL, ref_tol={"fp32": (5e-4, 5e-4)}, ref=kkt_solve))
    # whole-sequence cumulative sums of vector gates
    B, T, H, S = 2, 50, 2, 24
    add(Case("fla2 global cumsum vector scaled", F, "chunk_global_cumsum_vector_kernel", (_cdiv(S, 16), B * H),
             [Buf("s", "fp32", B * T * H * S), Out("z", "fp32", B * T * H * S), Scalar("scale", LOG2E, "fp32"),
              Null("cu_seqlens"), Scalar("T", T)],
             {"H": H, "S": S, "BT": 16, "BS": 16, "REVERSE": False, "HAS_SCALE": True, "IS_VARLEN": False},
             tol=IEEE_TOL, ref=global_cumsum))
    cu, H, S = [0, 7, 40, 71], 1, 20
    add(Case("fla2 global cumsum vector reverse varlen bf16", F, "chunk_global_cumsum_vector_kernel",
             (1, (len(cu) - 1) * H),
             [Buf("s", "bf16", cu[-1] * H * S), Out("z", "fp32", cu[-1] * H * S), Null("scale"),
              Buf("cu_seqlens", "i64", len(cu), _ints(cu)), Scalar("T", cu[-1])],
             {"H": H, "S": S, "BT": 32, "BS": 32, "REVERSE": True, "HAS_SCALE": False, "IS_VARLEN": True},
             tol=IEEE_TOL, ref=global_cumsum))

    # decoding with the gate computed in the kernel, states updated in a pool
    cu, H, HV, K, V, slots = [0, 1, 3, 4, 7], 2, 4, 16, 16, 6
    Tt, N = cu[-1], len(cu) - 1
    add(Case("fla2 sigmoid gating delta update pool varlen", F, "fused_sigmoid_gating_delta_rule_update_kernel",
             (1, 2, N * HV),
             [Buf("A_log", "fp32", HV, scale=0.5), Buf("a", "fp32", Tt * HV), Buf("dt_bias", "fp32", HV),
              Scalar("softplus_beta", 1.0, "fp32"), Scalar("softplus_threshold", 20.0, "fp32"),
              Buf("q", "fp32", Tt * H * K), Buf("k", "fp32", Tt * H * K), Buf("v", "fp32", Tt * HV * V),
              Buf("b", "fp32", Tt * HV), Out("o", "fp32", Tt * HV * V),
              Buf("h0_source", "fp32", slots * HV * K * V, out=True), Buf("h0_indices", "i32", N, _ints([4, -1, 0, 2])),
              Buf("cu_seqlens", "i64", len(cu), _ints(cu)), Scalar("scale", 0.25, "fp32"), Scalar("T", Tt)],
             {"B": 1, "H": H, "HV": HV, "K": K, "V": V, "BK": 16, "BV": 8, "USE_INITIAL_STATE": True,
              "USE_QK_L2NORM_IN_KERNEL": True, "IS_VARLEN": True}, num_warps=1, ref=sigmoid_gating_update))
    B, T, H, HV, K, V = 3, 2, 1, 1, 24, 20
    add(Case("fla2 sigmoid gating delta no state, softplus beta 2", F,
             "fused_sigmoid_gating_delta_rule_update_kernel", (1, 1, B * HV),
             [Buf("A_log", "fp32", HV, scale=0.5), Buf("a", "fp32", B * T * HV, scale=8.0), Buf("dt_bias", "fp32", HV),
              Scalar("softplus_beta", 2.0, "fp32"), Scalar("softplus_threshold", 10.0, "fp32"),
              Buf("q", "bf16", B * T * H * K, scale=0.3), Buf("k", "bf16", B * T * H * K, scale=0.3),
              Buf("v", "bf16", B * T * HV * V), Buf("b", "bf16", B * T * HV), Out("o", "bf16", B * T * HV * V),
              Null("h0_source"), Null("h0_indices"), Null("cu_seqlens"), Scalar("scale", 0.5, "fp32"),
              Scalar("T", T)],
             {"B": B, "H": H, "HV": HV, "K": K, "V": V, "BK": 32, "BV": 32, "USE_INITIAL_STATE": False,
              "USE_QK_L2NORM_IN_KERNEL": False, "IS_VARLEN": False}, num_warps=1, ref=sigmoid_gating_update))

    # L2 norm backward per row
    for T, D, BD, dt in ((6, 40, 64, "fp32"),):
        add(Case(f"fla2 l2norm bwd row {dt} D={D}", F, "l2norm_bwd_kernel1", (T,),
                 [Buf("x", dt, T * D), Buf("dy", dt, T * D), Out("dx", dt, T * D), Scalar("eps", 1e-6, "fp32"),
                  Scalar("D", D)],
                 {"BD": BD}, num_warps=1, ref=l2norm_bwd_row))

    # KDA diagonal sub-blocks, token by token
    B, T, H, K, BT, BC = 2, 37, 2, 20, 32, 16
    n = B * T * H * K
    add(Case("fla2 kda intra sub chunk tokenwise", F, "chunk_kda_fwd_kernel_intra_sub_chunk",
             (_cdiv(T, BT), BT // BC, B * H),
             [Buf("q", "fp32", n, scale=0.5), Buf("k", "fp32", n, scale=0.5), Buf("g", "fp32", n, _uniform(-2., 0.)),
              Buf("beta", "fp32", B * T * H, "rand"), Out("Aqk", "fp32", B * T * H * BT),
              Out("Akk", "fp32", B * T * H * BT), Scalar("scale", 0.3, "fp32"), Null("cu_seqlens"),
              Null("chunk_indices"), Scalar("T", T)],
             {"H": H, "K": K, "BT": BT, "BC": BC, "BK": 32, "IS_VARLEN": False}, num_warps=2,
             ref=kda_intra_sub_chunk))
    return out
