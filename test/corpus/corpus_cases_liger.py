"""Cases of the Liger-Kernel / unsloth-style training kernels
(liger_style.py) and their float64 numpy references."""
import numpy as np

from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_cases_flaggems import _bf16, _erf, _f16, _f32
from corpus_refs import gelu_tanh, rows, sigmoid

F = "liger_style.py"
ROUND = {"fp16": _f16, "bf16": _bf16, "fp32": _f32}


def _ints(xs):
    return lambda rng, n: np.array(list(xs)[:n], dtype=np.int64)


def _vals(xs):
    return lambda rng, n: np.array(list(xs)[:n], dtype=np.float64)


def _positive(lo=0.5):
    return lambda rng, n: lo + rng.random(n)


def _around(mean, sd):
    return lambda rng, n: mean + sd * rng.standard_normal(n)


def _pow2(k):
    return 1 << (k - 1).bit_length()


def _lse(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))).squeeze(axis)


# ---- normalisation backwards ----------------------------------------------------------------


def layer_norm_bwd(dt):
    def ref(v, c, s):
        R, N, rpp = s["n_rows"], s["n_cols"], s["rows_per_program"]
        x, dy = rows(v["X_ptr"], s["X_row_stride"])[:R, :N], rows(v["DY_ptr"], s["DY_row_stride"])[:R, :N]
        w, mean, rstd = v["W_ptr"][:N], v["Mean_ptr"][:R, None], v["RSTD_ptr"][:R, None]
        xh = (x - mean) * rstd
        wdy = w * dy
        c1 = (xh * wdy).mean(1, keepdims=True)
        c2 = wdy.mean(1, keepdims=True)
        dx = rows(v["DX_ptr"], s["DX_row_stride"]).copy()
        dx[:R, :N] = ROUND[dt]((wdy - (xh * c1 + c2)) * rstd)
        P = -(-R // rpp)
        dw, db = rows(v["DW_ptr"], s["DW_row_stride"]).copy(), rows(v["DB_ptr"], s["DW_row_stride"]).copy()
        for p in range(P):
            sl = slice(p * rpp, min((p + 1) * rpp, R))
            dw[p, :N] = (dy[sl] * xh[sl]).sum(0)
            db[p, :N] = dy[sl].sum(0)
        return {"DX_ptr": dx.ravel(), "DW_ptr": dw.ravel(), "DB_ptr": db.ravel()}
    return ref


def group_norm_bwd(dt):
    def ref(v, c, s):
        HW, cpg = c["hidden_size"], c["channels_per_group"]
        C = s["X_row_stride"] // HW
        G = C // cpg
        x = v["X_ptr"].reshape(-1, G, cpg, HW)
        dy = v["UPSTREAM_ptr"].reshape(x.shape)
        w = v["W_ptr"].reshape(G, cpg)[None, :, :, None]
        mean = v["Mean_ptr"].reshape(-1, G)[:, :, None, None]
        rstd = v["RSTD_ptr"].reshape(-1, G)[:, :, None, None]
        xh = (x - mean) * rstd
        wdy = w * dy
        c1 = (xh * wdy).mean(axis=(2, 3), keepdims=True)
        c2 = wdy.mean(axis=(2, 3), keepdims=True)
        dx = (wdy - (xh * c1 + c2)) * rstd
        return {"DX_ptr": ROUND[dt](dx).ravel(),
                "DW_ptr": v["DW_ptr"] + (dy * xh).sum(axis=(0, 3)).ravel(),
                "DB_ptr": v["DB_ptr"] + dy.sum(axis=(0, 3)).ravel()}
    return ref


def poly_norm_bwd(v, c, s):
    R, N, rpp = s["n_rows"], s["n_cols"], c["rows_per_program"]
    x, dy = rows(v["X_ptr"], s["X_row_stride"])[:R, :N], rows(v["dY_ptr"], s["dY_row_stride"])[:R, :N]
    rstd = rows(v["RSTD_ptr"], s["RSTD_row_stride"])[:R, :3]
    dx = np.zeros_like(x)
    per_row = np.zeros((R, 4))
    for i, p in enumerate((3, 2, 1)):
        r = rstd[:, i:i + 1]
        sp = (dy * x ** p).sum(1, keepdims=True)
        dx += v["W_ptr"][i] * (p * x ** (p - 1) * r * dy - (p / N) * x ** (2 * p - 1) * r ** 3 * sp)
        per_row[:, i] = (r * sp)[:, 0]
    per_row[:, 3] = dy.sum(1)
    out = rows(v["dX_ptr"], s["dX_row_stride"]).copy()
    out[:R, :N] = dx
    P = -(-R // rpp)
    dwb = rows(v["dWB_ptr"], s["dWB_row_stride"]).copy()
    for p in range(P):
        dwb[p, :4] = per_row[p * rpp:(p + 1) * rpp].sum(0)
    return {"dX_ptr": out.ravel(), "dWB_ptr": dwb.ravel()}


def dyt_bwd(dt, P0, P1):
    def ref(v, c, s):
        M, N, BN = s["M"], c["N"], c["BLOCK_N"]
        x, dy = v["X"].reshape(M, N), v["DY"].reshape(M, N)
        alpha, gamma = v["Alpha"][0], v["Gamma"][:N]
        t = np.tanh(alpha * x)
        tmp = (1.0 - t * t) * dy * gamma
        out = {"DX": ROUND[dt](alpha * tmp).ravel()}
        dg, db, da = np.zeros((P1, N)), np.zeros((P1, N)), np.zeros((P1, P0))
        for p in range(P1):
            dg[p] = (dy[p::P1] * t[p::P1]).sum(0)
            db[p] = dy[p::P1].sum(0)
            xt = (x[p::P1] * tmp[p::P1]).sum(0)
            da[p] = [xt[j * BN:(j + 1) * BN].sum() for j in range(P0)]
        out.update(DG=dg.ravel(), DA=da.ravel())
        if c["HAVE_BETA"]:
            out["DB"] = db.ravel()
        return out
    return ref


# ---- gated activations ----------------------------------------------------------------------


def glu_bwd(dt):
    def ref(v, c, s):
        rnd = ROUND[dt]
        dw, e, g = v["DW"], v["e"], v["g"]
        act = c["ACT"]
        if act == "swiglu":
            se = sigmoid(e)
            f, df = se * e, se * (1.0 + e * (1.0 - se))
        elif act == "geglu_exact":
            cdf = 0.5 * (1.0 + _erf(e / np.sqrt(2.0)))
            f, df = e * cdf, cdf + np.exp(-0.5 * e * e) / np.sqrt(2 * np.pi) * e
        else:
            f = gelu_tanh(e)
            k = 0.7978845608028654 * (e + 0.044715 * e ** 3)
            th = np.tanh(k)
            df = 0.5 * (1 + th) + 0.5 * e * (1 - th * th) * 0.7978845608028654 * (1 + 3 * 0.044715 * e * e)
        f = rnd(f)
        dg = rnd(dw * g)
        return {"DW": rnd(f * g), "e": rnd(dw * f), "g": rnd(dg * df)}
    return ref


# ---- cross-entropy --------------------------------------------------------------------------


def _scale_cap(x, c):
    if c["DO_LOGIT_SCALING"]:
        x = c["LOGIT_SCALE"] * x
    if c["DO_SOFTCAPPING"]:
        x = c["SOFTCAP"] * np.tanh(x / c["SOFTCAP"])
    return x


def chunked_ce_fwd(v, c, s):
    V, NC, B = c["VOCAB_SIZE"], c["N_CHUNKS"], c["BLOCK_SIZE"]
    z = _scale_cap(rows(v["logits_ptr"], s["logits_row_stride"])[:, :V], c)
    R = z.shape[0]
    lse = np.stack([_lse(z[:, j * B:(j + 1) * B]) for j in range(NC)], 1)
    y = v["labels_ptr"].astype(np.int64)
    loss = np.where(y != -100, -z[np.arange(R), np.where(y < 0, 0, y)], 0.0)
    return {"loss_ptr": loss, "logsumexp_ptr": lse.ravel()}


def ce_bwd(v, c, s):
    V, NC = c["VOCAB_SIZE"], c["N_CHUNKS"]
    st = s["logits_row_stride"]
    x = rows(v["logits_ptr"], st)
    R = x.shape[0]
    lse = _lse(v["logsumexp_ptr"].reshape(R, NC))
    y = v["labels_ptr"].astype(np.int64)
    xs = x[:, :V] * (c["LOGIT_SCALE"] if c["DO_LOGIT_SCALING"] else 1.0)
    z = c["SOFTCAP"] * np.tanh(xs / c["SOFTCAP"]) if c["DO_SOFTCAPPING"] else xs
    g = np.exp(z - lse[:, None])
    g[np.arange(R), np.where(y < 0, 0, y)] -= (y >= 0)
    if c["DO_LOGIT_SCALING"]:
        g *= c["LOGIT_SCALE"]
    if c["DO_SOFTCAPPING"]:
        g *= 1.0 - np.tanh(xs / c["SOFTCAP"]) ** 2
    dloss = v["dloss_ptr"][np.arange(R) * s["dloss_row_stride"]]
    out = x.copy()
    out[:, :V] = np.where(y[:, None] != -100, dloss[:, None], 0.0) * g
    return {"logits_ptr": out.ravel()}


def weighted_ce(dt, has_weight):
    def ref(v, c, s):
        V, ls = s["n_cols"], c["label_smoothing"]
        x = rows(v["X_ptr"], s["X_stride"])[:, :V]
        R = x.shape[0]
        y = v["Y_ptr"].astype(np.int64)
        w = v["weight_ptr"][:V] if has_weight else np.ones(V)
        w_total = s["weight_sum"] if has_weight else float(V)
        denom = s["sum_non_ignore_weight"] if has_weight else float(v["n_non_ignore_ptr"][0])
        scale = 1.0 / denom if c["reduction"] == "mean" else 1.0
        eps = ls / V
        lse = _lse(x)
        grad = np.zeros_like(x)
        loss = np.zeros(R)
        acc = np.zeros(R)
        for r in range(R):
            if y[r] == s["ignore_index"]:
                continue
            wy = w[y[r]]
            loss[r] = (1 - ls) * wy * (lse[r] - x[r, y[r]]) + eps * (w_total * lse[r] - (w * x[r]).sum())
            p = np.exp(x[r] - lse[r])
            grad[r] = (1 - ls) * wy * p + eps * (w_total * p - w)
            grad[r, y[r]] -= (1 - ls) * wy
            acc[r] = float(x[r, y[r]] >= x[r].max())
        out = rows(v["X_ptr"], s["X_stride"]).copy()
        out[:, :V] = ROUND[dt](grad * scale)
        res = {"X_ptr": out.ravel(), "loss_ptr": loss * scale}
        if c.get("RETURN_TOKEN_ACCURACY"):
            res["token_accuracy_ptr"] = acc
        return res
    return ref


def _planted_logits(R, V, labels, rows_hit):
    """Normal logits with the label's logit raised well above the rest in
    the rows listed (so the token-accuracy flag is 1 there)."""
    def init(rng, n):
        x = rng.standard_normal(n).reshape(R, V)
        for r in rows_hit:
            x[r, labels[r]] += 8.0
        return x.ravel()
    return init


# ---- fused linear cross-entropy -------------------------------------------------------------


def flce_fwd(v, c, s):
    n, H, V = s["n_rows"], s["H"], s["V"]
    x = rows(v["X_ptr"], s["stride_xm"])[:n, :H]
    w = rows(v["W_ptr"], s["stride_wv"])[:V, :H]
    logits = x @ w.T
    lse = _lse(logits)
    y = v["target_ptr"].astype(np.int64)[:n]
    ok = y != s["ignore_index"]
    loss = np.where(ok, lse - logits[np.arange(n), np.where(ok, y, 0)], 0.0)
    return {"loss_ptr": loss, "lse_ptr": lse}


def flce_grad_input(v, c, s):
    n, H, V = s["n_rows"], s["H"], s["V"]
    x = rows(v["X_ptr"], s["stride_xm"])[:n, :H]
    w = rows(v["W_ptr"], s["stride_wv"])[:V, :H]
    y = v["target_ptr"].astype(np.int64)[:n]
    ok = y != s["ignore_index"]
    g = np.exp(x @ w.T - v["lse_ptr"][:n, None])
    g[np.arange(n), np.where(ok, y, 0)] -= ok
    g *= np.where(ok, 1.0 / s["n_non_ignore"], 0.0)[:, None]
    dx = rows(v["dX_ptr"], s["stride_dxm"]).copy()
    dx[:n, :H] = _bf16(g) @ w
    return {"dX_ptr": dx.ravel()}


# ---- distances ------------------------------------------------------------------------------


def _prob_rows(V, peaked=1.0):
    def init(rng, n):
        z = rng.standard_normal(n).reshape(-1, V) * peaked
        e = np.exp(z - z.max(1, keepdims=True))
        return (e / e.sum(1, keepdims=True)).ravel()
    return init


def tvd(v, c, s):
    V, scale = s["n_cols"], s["scale"]
    p, q = rows(v["p_ptr"], s["p_stride"])[:, :V], rows(v["q_ptr"], s["q_stride"])[:, :V]
    R = p.shape[0]
    keep = np.ones(R, bool)
    if c["HAS_LABEL"]:
        keep = v["label_ptr"][:R] != c["ignore_index"]
    grads = np.where(keep[:, None], np.where(p > q, 0.5 * scale, -0.5 * scale), 0.0)
    tv = 0.5 * np.abs(p - q) * keep[:, None]
    if c["reduction"] == 0:
        loss = (tv * scale).ravel()
    else:
        loss = v["loss_ptr"].copy()
        loss[np.flatnonzero(keep) * s["loss_stride"]] = tv[keep].sum(1) * scale
    return {"grads_ptr": grads.ravel(), "loss_ptr": loss}


def _sparsemax(z):
    zs = -np.sort(-z, axis=1)
    cs = np.cumsum(zs, axis=1)
    k = np.arange(1, z.shape[1] + 1)
    support = k * zs > cs - 1
    kz = support.sum(1, keepdims=True)
    tau = (np.where(support, zs, 0).sum(1, keepdims=True) - 1) / kz
    return np.maximum(z - tau, 0)


def sparsemax_fwd(dt):
    def ref(v, c, s):
        x = rows(v["x_ptr"], s["x_stride_row"])[:, :s["n_cols"]]
        return {"o_ptr": ROUND[dt](_sparsemax(x)).ravel()}
    return ref


def sparsemax_bwd(v, c, s):
    n = s["n_cols"]
    o, go = rows(v["o_ptr"], s["stride"])[:, :n], rows(v["go_ptr"], s["stride"])[:, :n]
    supp = o > 0
    mean = np.where(supp, go, 0).sum(1, keepdims=True) / np.maximum(supp.sum(1, keepdims=True), 1e-6)
    return {"gi_ptr": np.where(supp, go - _f32(mean), 0.0).ravel()}


def _sparse_rows(rng, n):
    return np.maximum(rng.standard_normal(n) - 0.3, 0.0)


# ---- rotary embeddings ----------------------------------------------------------------------


def mrope(dt):
    def ref(v, c, s):
        T, nq, nk, hd = s["n_tokens"], c["n_qh"], c["n_kh"], c["hd"]
        half = hd // 2
        cosp, sinp = v["cos_ptr"].reshape(3, T, hd), v["sin_ptr"].reshape(3, T, hd)
        plane = np.repeat(np.arange(3), c["SECTIONS"])
        cos, sin = cosp[plane, :, np.arange(half)].T, sinp[plane, :, np.arange(half)].T
        if c.get("BACKWARD_PASS"):
            sin = -sin
        out = {}
        for name, nh in (("q_ptr", nq), ("k_ptr", nk)):
            x = v[name].reshape(T, nh, hd)
            x1, x2 = x[..., :half], x[..., half:]
            y = np.concatenate([x1 * cos[:, None] - x2 * sin[:, None], x2 * cos[:, None] + x1 * sin[:, None]], -1)
            out[name] = ROUND[dt](y).ravel()
        return out
    return ref


def llama4_rope(dt):
    def ref(v, c, s):
        S, B, half = s["seq_len"], s["batch_size"], c["head_dim_half"]
        f = v["freqs_ptr"].reshape(S, -1)[:, :2 * half].reshape(S, half, 2)
        fc = (f[..., 0] + 1j * f[..., 1] * s["imag_sign"])[None, :, None, :]
        out = {}
        for name, nh in (("q_ptr", c["n_q_heads"]), ("k_ptr", c["n_k_heads"])):
            x = v[name].reshape(B, S, nh, half, 2)
            z = (x[..., 0] + 1j * x[..., 1]) * fc
            out[name] = ROUND[dt](np.stack([z.real, z.imag], -1)).ravel()
        return out
    return ref


def rope_grouped(dt, compute):
    def ref(v, c, s):
        hd, nh, S = c["head_dim"], c["n_heads"], s["seqlen"]
        half = hd // 2
        q = rows(v["Q"], c["Q_row_stride"]).copy()
        T = q.shape[0]
        pos = np.arange(T) % S
        cos = rows(v["cos"], c["cos_row_stride"])[pos, :half][:, None]
        sin = rows(v["sin"], c["sin_row_stride"])[pos, :half][:, None]
        if c["BACKWARD_PASS"]:
            sin = -sin
        h = q[:, :nh * hd].reshape(T, nh, hd)
        q1, q2 = h[..., :half], h[..., half:]
        rnd = ROUND[compute]
        y1 = rnd(rnd(q1 * cos) - rnd(q2 * sin)) if compute != "fp32" else q1 * cos - q2 * sin
        y2 = rnd(rnd(q2 * cos) + rnd(q1 * sin)) if compute != "fp32" else q2 * cos + q1 * sin
        q[:, :nh * hd] = ROUND[dt](np.concatenate([y1, y2], -1)).reshape(T, -1)
        return {"Q": q.ravel()}
    return ref


# ---- GRPO -----------------------------------------------------------------------------------


def _grpo_common(v, c, B):
    L, N, T = c["L"], c["N"], c["TEMPERATURE"]
    z = v["LOGITS"].reshape(B, L + 1, N)[:, :L] / T
    ids = v["INPUT_IDS"].astype(np.int64).reshape(B, L)
    lse = _lse(z)
    logp = np.take_along_axis(z, ids[..., None], -1)[..., 0] - lse
    old = v["OLD_LOGP"].reshape(B, L) if "OLD_LOGP" in v else logp
    coef = np.exp(logp - old)
    adv = v["ADVANTAGES"][:B, None]
    lo, hi = 1 - c["EPS_LOW"], 1 + c["EPS_HIGH"]
    if c["LOSS_TYPE"] == "grpo":
        clipped = ((coef < lo) & (adv < 0)) | ((coef > hi) & (adv > 0))
    else:
        clipped = (coef > c["EPS_HIGH"]) & (adv > 0)
    keep = v["COMPLETION_MASK"].reshape(B, L) != 0 if "COMPLETION_MASK" in v else np.ones((B, L), bool)
    return z, ids, lse, logp, coef, adv, clipped, keep


def grpo_fwd(B):
    def ref(v, c, s):
        z, ids, lse, logp, coef, adv, clipped, keep = _grpo_common(v, c, B)
        if c["LOSS_TYPE"] == "grpo":
            c2 = np.clip(coef, 1 - c["EPS_LOW"], 1 + c["EPS_HIGH"])
            loss = -np.minimum(coef * adv, c2 * adv)
        else:
            loss = -np.minimum(coef, c["EPS_HIGH"]) * adv * logp
        out = {}
        if c["BETA"] != 0.0:
            d = v["REF_LOGP"].reshape(logp.shape) - logp
            kl = np.exp(d) - d - 1
            loss = loss + c["BETA"] * kl
            out["KL"] = np.where(keep, kl, v["KL"].reshape(keep.shape)).ravel()
        out["LOSS"] = np.where(keep, loss, v["LOSS"].reshape(keep.shape)).ravel()
        out["LSE"] = np.where(keep, lse, v["LSE"].reshape(keep.shape)).ravel()
        out["IS_CLIPPED"] = np.where(keep, clipped, v["IS_CLIPPED"].reshape(keep.shape)).ravel()
        return out
    return ref


def grpo_bwd(B, dt):
    def ref(v, c, s):
        L, N, T = c["L"], c["N"], c["TEMPERATURE"]
        z = v["LOGITS"].reshape(B, L + 1, N)[:, :L] / T
        ids = v["INPUT_IDS"].astype(np.int64).reshape(B, L)
        lse = v["LSE"].reshape(B, L)
        logp = np.take_along_axis(z, ids[..., None], -1)[..., 0] - lse
        old = v["OLD_LOGP"].reshape(B, L) if "OLD_LOGP" in v else logp
        coef = np.exp(logp - old)
        adv = v["ADVANTAGES"][:B, None]
        if c["LOSS_TYPE"] == "grpo":
            lo, hi = 1 - c["EPS_LOW"], 1 + c["EPS_HIGH"]
            clipped = ((coef < lo) & (adv < 0)) | ((coef > hi) & (adv > 0))
            dlogp = np.where(clipped, 0.0, -coef * adv)
        else:
            dlogp = -np.minimum(coef, c["EPS_HIGH"]) * adv
        if c["BETA"] != 0.0:
            dlogp = dlogp + c["BETA"] * (1.0 - np.exp(v["REF_LOGP"].reshape(B, L) - logp))
        dloss = v["DLOSS"].reshape(B, s["DLOSS_STRIDE"])[:, :L]
        dlogp = dlogp * dloss / T
        p = np.exp(z - lse[..., None])
        onehot = np.arange(N)[None, None, :] == ids[..., None]
        g = (onehot - p) * dlogp[..., None]
        if "COMPLETION_MASK" in v:
            g = g * (v["COMPLETION_MASK"].reshape(B, L) != 0)[..., None]
        return {"DLOGITS": ROUND[dt](g).ravel()}
    return ref


# ---- MoE grouped GEMM -----------------------------------------------------------------------

E, NT, TOPK, KD, ND = 4, 10, 2, 64, 48


def _routing():
    """A fixed routing of NT tokens to TOPK of E experts, none to expert 2:
    (slots sorted by expert, tokens per expert)."""
    r = np.random.default_rng(5)
    ids = np.stack([r.choice([0, 1, 3], TOPK, replace=False) for _ in range(NT)]).ravel()
    order = np.argsort(ids, kind="stable")
    return order, np.bincount(ids, minlength=E)


def grouped_gemm(c_permute_x, c_permute_y):
    def ref(v, c, s):
        order, sizes = _routing()
        x = v["x_ptr"].reshape(-1, KD)
        w = v["w_ptr"].reshape(E, ND, KD)
        y = v["y_ptr"].reshape(-1, ND).copy()
        starts = np.concatenate([[0], np.cumsum(sizes)])
        for e in range(E):
            for i in range(starts[e], starts[e + 1]):
                slot = order[i]
                src = x[slot // TOPK] if c_permute_x else x[i]
                out = _bf16(src @ w[e].T)
                if c.get("FUSE_MUL_POST"):
                    out = _bf16(out * _bf16(v["topk_weights_ptr"][slot]))
                y[slot if c_permute_y else i] = out
        return {"y_ptr": y.ravel()}
    return ref


# ---- hyper-connection mixing ----------------------------------------------------------------


def _sinkhorn_steps(x, T, eps):
    """The forward's matrices, kept for the backward: (p, [(b, c, y)]) where
    each column normalisation y = b / c follows a row one (none before the
    first)."""
    p = np.exp(x - x.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    b = p + eps
    c = b.sum(-2, keepdims=True) + eps
    steps = [(b, c, b / c, None)]
    for _ in range(T - 1):
        m = steps[-1][2]
        r = m.sum(-1, keepdims=True) + eps
        b = m / r
        c = b.sum(-2, keepdims=True) + eps
        steps.append((b, c, b / c, r))
    return p, steps


def sinkhorn_fwd(v, c, s):
    HC, n = c["HC"], s["n_mats"]
    x = v["logits_ptr"].reshape(-1, HC, HC)[:n]
    out = v["out_ptr"].reshape(-1, HC, HC).copy()
    out[:n] = _sinkhorn_steps(x, c["TMAX"], c["EPS"])[1][-1][2]
    return {"out_ptr": out.ravel()}


def sinkhorn_bwd(v, c, s):
    HC, n = c["HC"], s["n_mats"]
    x = v["logits_ptr"].reshape(-1, HC, HC)[:n]
    p, steps = _sinkhorn_steps(x, c["TMAX"], c["EPS"])
    g = v["grad_out_ptr"].reshape(-1, HC, HC)[:n]
    for b, col, y, r in reversed(steps):
        g = (g - (g * y).sum(-2, keepdims=True)) / col
        if r is not None:
            g = (g - (g * b).sum(-1, keepdims=True)) / r
    out = v["grad_logits_ptr"].reshape(-1, HC, HC).copy()
    out[:n] = p * (g - (g * p).sum(-1, keepdims=True))
    return {"grad_logits_ptr": out.ravel()}


def proj_bwd(v, c, s):
    M, K, N = s["M"], c["K"], c["N"]
    x, phi, g = v["x_ptr"].reshape(M, K), v["phi_ptr"].reshape(K, N), v["grad_ptr"].reshape(M, N)
    return {"dx_ptr": (g @ phi.T).ravel(), "dphi_ptr": v["dphi_ptr"] + (x.T @ g).ravel()}


# ---- the cases ------------------------------------------------------------------------------


def cases():
    out = []
    add = out.append

    # layer-norm backward, rows_per_program rows per program
    for dt, R, N, rpp, BS, wdt in (("bf16", 7, 300, 3, 512, "bf16"), ("fp32", 8, 1000, 4, 1024, "fp32")):
        P = -(-R // rpp)
        add(Case(f"liger layer-norm bwd {dt}, {rpp} rows per program", F, "_lg_layer_norm_backward_kernel", (P,),
                 [Buf("X_ptr", dt, R * N), Scalar("X_row_stride", N), Buf("W_ptr", wdt, N, "rand"),
                  Buf("Mean_ptr", "fp32", R, scale=0.1), Buf("RSTD_ptr", "fp32", R, _positive()),
                  Out("DX_ptr", dt, R * N), Scalar("DX_row_stride", N), Out("DW_ptr", "fp32", P * N),
                  Out("DB_ptr", "fp32", P * N), Scalar("DW_row_stride", N), Buf("DY_ptr", dt, R * N),
                  Scalar("DY_row_stride", N), Scalar("n_rows", R), Scalar("n_cols", N),
                  Scalar("rows_per_program", rpp)],
                 {"BLOCK_SIZE": BS}, ref_tol={"fp32": (1e-4, 1e-3)}, ref=layer_norm_bwd(dt)))

    # group-norm backward: (sample, group) programs, per-channel atomics
    for dt, B, C, G, HW, BS in (("fp32", 2, 6, 3, 50, 32), ("fp16", 3, 8, 2, 20, 16)):
        add(Case(f"liger group-norm bwd {dt}, {C // G} channels per group", F, "_lg_group_norm_backward_kernel",
                 (B, G),
                 [Buf("X_ptr", dt, B * C * HW), Scalar("X_row_stride", C * HW), Scalar("X_col_stride", HW),
                  Buf("W_ptr", dt, C, "rand"), Buf("Mean_ptr", "fp32", B * G, scale=0.1),
                  Scalar("Mean_row_stride", G), Scalar("Mean_col_stride", 1),
                  Buf("RSTD_ptr", "fp32", B * G, _positive()), Out("DX_ptr", dt, B * C * HW),
                  Buf("DW_ptr", "fp32", C, "zeros", out=True), Buf("DB_ptr", "fp32", C, "zeros", out=True),
                  Buf("UPSTREAM_ptr", dt, B * C * HW)],
                 {"hidden_size": HW, "channels_per_group": C // G, "BLOCK_SIZE": BS},
                 ref_tol={"fp32": (1e-4, 1e-3)}, ref=group_norm_bwd(dt)))

    # PolyNorm backward
    R, N, rpp = 6, 200, 2
    add(Case("liger poly-norm bwd, packed dW/dB partials", F, "_lg_poly_norm_backward_kernel", (R // rpp,),
             [Buf("dY_ptr", "fp32", R * N), Scalar("dY_row_stride", N), Out("dX_ptr", "fp32", R * N),
              Scalar("dX_row_stride", N), Buf("X_ptr", "fp32", R * N), Scalar("X_row_stride", N),
              Buf("W_ptr", "fp32", 3, scale=0.5), Buf("RSTD_ptr", "fp32", R * 3, _positive(0.2)),
              Scalar("RSTD_row_stride", 3), Out("dWB_ptr", "fp32", (R // rpp) * 4), Scalar("dWB_row_stride", 4),
              Scalar("n_rows", R), Scalar("n_cols", N)],
             {"rows_per_program": rpp, "BLOCK_SIZE": 256}, ref_tol={"fp32": (1e-4, 1e-3)}, ref=poly_norm_bwd))

    # DyT backward: column tiles x strided rows
    for dt, M, N, BN, P1, beta in (("bf16", 10, 300, 128, 4, True), ("fp32", 5, 100, 64, 2, False)):
        P0 = -(-N // BN)
        add(Case(f"liger dyt bwd {dt}, beta {beta}", F, "_lg_dyt_backward_kernel", (P0, P1),
                 [Buf("DY", dt, M * N), Out("DX", dt, M * N), Out("DA", "fp32", P1 * P0),
                  Out("DG", "fp32", P1 * N), Out("DB", "fp32", P1 * N) if beta else Null("DB"),
                  Buf("X", dt, M * N, scale=2.0), Buf("Alpha", "fp32", 1, ("fill", 0.7)), Buf("Gamma", dt, N, "rand"),
                  Scalar("M", M)],
                 {"HAVE_BETA": beta, "N": N, "BLOCK_N": BN}, ref_tol={"fp32": (1e-4, 1e-3)},
                 ref=dyt_bwd(dt, P0, P1)))

    # GLU backwards written over their inputs
    n = 3000
    for act, dt, long in (("swiglu", "fp16", False), ("geglu_exact", "bf16", True), ("geglu_tanh", "fp16", False)):
        add(Case(f"unsloth {act} bwd in place {dt}", F, "_lg_glu_backward_inplace", (3,),
                 [Buf("DW", dt, n, out=True), Buf("e", dt, n, out=True, scale=2.0), Buf("g", dt, n, out=True),
                  Scalar("n_elements", n)],
                 {"ACT": act, "BLOCK_SIZE": 1024, "LONG_INDEXING": long}, ref=glu_bwd(dt)))

    # chunked cross-entropy: forward per chunk, backward per block
    lab = [5, -100, 699, 371]
    for dt, V, st, B, cap, scale_on in (("bf16", 1000, 1024, 256, True, True), ("fp32", 777, 777, 512, False, False)):
        nc = -(-V // B)
        add(Case(f"unsloth chunked cross-entropy fwd {dt}, {nc} chunks", F, "_lg_chunked_cross_entropy_forward",
                 (4, nc),
                 [Buf("logits_ptr", dt, 4 * st, scale=6.0), Scalar("logits_row_stride", st), Out("loss_ptr", "fp32", 4),
                  Out("logsumexp_ptr", "fp32", 4 * nc), Buf("labels_ptr", "i64", 4, _ints(lab))],
                 {"VOCAB_SIZE": V, "N_CHUNKS": nc, "BLOCK_SIZE": B, "DO_SOFTCAPPING": cap,
                  "SOFTCAP": 10.0 if cap else 0.0, "DO_LOGIT_SCALING": scale_on,
                  "LOGIT_SCALE": 0.5 if scale_on else 0.0}, ref_tol={"fp32": (1e-4, 1e-3)}, ref=chunked_ce_fwd))
    for dt, V, st, NC, B, cap, scale_on, dst in (("fp32", 1000, 1024, 4, 128, True, True, 1),
                                                 ("bf16", 700, 700, 2, 256, False, False, 0)):
        add(Case(f"unsloth cross-entropy bwd in place {dt}, dloss stride {dst}", F, "_lg_cross_entropy_backward",
                 (4, -(-V // B)),
                 [Buf("logits_ptr", dt, 4 * st, out=True, scale=4.0), Scalar("logits_row_stride", st),
                  Buf("dloss_ptr", "fp32", 4, _positive(0.1)), Scalar("dloss_row_stride", dst),
                  Buf("logsumexp_ptr", "fp32", 4 * NC, _around(5.0, 1.0)),
                  Buf("labels_ptr", "i64", 4, _ints(lab))],
                 {"VOCAB_SIZE": V, "N_CHUNKS": NC, "BLOCK_SIZE": B, "DO_SOFTCAPPING": cap,
                  "SOFTCAP": 8.0 if cap else 0.0, "DO_LOGIT_SCALING": scale_on,
                  "LOGIT_SCALE": 0.75 if scale_on else 0.0}, ref=ce_bwd))

    # class-weighted, label-smoothed cross-entropy, gradient over the logits
    R, V = 5, 1000
    lab = [3, 17, -100, 999, 512]
    wts = 0.5 + (np.arange(V) % 7) / 7.0
    s_ign = float(sum(wts[y] for y in lab if y >= 0))
    for dt, ls, red, has_w, acc in (("fp32", 0.1, "mean", False, True), ("bf16", 0.05, "sum", True, False),
                                    ("fp32", 0.0, "mean", True, True)):
        add(Case(f"liger cross-entropy {dt}, smoothing {ls}, {red}, weights {has_w}", F,
                 "_lg_weighted_cross_entropy_kernel", (R,),
                 [Buf("X_ptr", dt, R * V, _planted_logits(R, V, lab, (0, 3)), out=True), Scalar("X_stride", V),
                  Buf("Y_ptr", "i64", R, _ints(lab)), Scalar("Y_stride", 1),
                  Buf("weight_ptr", "fp32", V, lambda rng, n: wts[:n]) if has_w else Null("weight_ptr"),
                  Buf("loss_ptr", "fp32", R, "zeros", out=True), Scalar("loss_stride", 1),
                  Out("token_accuracy_ptr", "fp32", R) if acc else Null("token_accuracy_ptr"),
                  Scalar("n_cols", V),
                  Null("n_non_ignore_ptr") if has_w else Buf("n_non_ignore_ptr", "i32", 1, ("fill", 4)),
                  Scalar("sum_non_ignore_weight", s_ign, "fp32"), Scalar("weight_sum", float(wts.sum()), "fp32"),
                  Scalar("ignore_index", -100)],
                 {"label_smoothing": ls, "reduction": red, "HAS_WEIGHT": has_w, "RETURN_TOKEN_ACCURACY": acc,
                  "BLOCK_SIZE": 256}, ref_tol={"fp32": (1e-5, 1e-3)}, ref=weighted_ce(dt, has_w)))

    # fused linear cross-entropy over tiles
    n, H, V = 40, 64, 200

    def targets(rng, k, V=V):
        t = rng.integers(0, V, k)
        t[[3, 17, 39]] = -100
        return t
    add(Case("liger fused linear cross-entropy fwd tiles", F, "_lg_flce_forward_kernel", (3,),
             [Buf("X_ptr", "bf16", n * H, scale=0.5), Buf("W_ptr", "bf16", V * H, scale=0.5),
              Buf("target_ptr", "i64", n, targets), Out("loss_ptr", "fp32", n), Out("lse_ptr", "fp32", n),
              Scalar("n_rows", n), Scalar("H", H), Scalar("V", V), Scalar("stride_xm", H), Scalar("stride_wv", H),
              Scalar("ignore_index", -100)], {"BLOCK_M": 16, "BLOCK_V": 64, "BLOCK_H": 32},
             ref_tol={"fp32": (1e-4, 1e-3)}, ref=flce_fwd))
    add(Case("liger fused linear cross-entropy input gradient", F, "_lg_flce_grad_input_kernel", (3, 2),
             [Buf("X_ptr", "bf16", n * H, scale=0.5), Buf("W_ptr", "bf16", V * H, scale=0.5),
              Buf("target_ptr", "i64", n, targets),
              Buf("lse_ptr", "fp32", n, _around(5.9, 0.1)),
              Out("dX_ptr", "fp32", n * H), Scalar("n_rows", n), Scalar("H", H), Scalar("V", V),
              Scalar("stride_xm", H), Scalar("stride_wv", H), Scalar("stride_dxm", H), Scalar("n_non_ignore", n - 3),
              Scalar("ignore_index", -100)], {"BLOCK_M": 16, "BLOCK_V": 64, "BLOCK_H": 32, "BLOCK_HO": 32},
             ref_tol={"fp32": (2e-4, 1e-2)}, ref=flce_grad_input))

    # total-variation distance
    R, V = 5, 700
    add(Case("liger tvd batchmean, ignored label", F, "_lg_tv_distance_kernel", (R,),
             [Buf("p_ptr", "fp32", R * V, _prob_rows(V)), Scalar("p_stride", V),
              Buf("q_ptr", "fp32", R * V, _prob_rows(V)), Scalar("q_stride", V),
              Buf("loss_ptr", "fp32", R, "zeros", out=True), Scalar("loss_stride", 1),
              Out("grads_ptr", "fp32", R * V), Scalar("grads_stride", V),
              Buf("label_ptr", "i64", R, _ints([1, -100, 3, 4, 5])), Scalar("n_cols", V),
              Scalar("scale", 0.25, "fp32")],
             {"ignore_index": -100, "BLOCK_SIZE": 256, "HAS_LABEL": True, "reduction": 3},
             ref_tol={"fp32": (1e-6, 1e-3)}, ref=tvd))
    add(Case("liger tvd per element, no labels", F, "_lg_tv_distance_kernel", (R,),
             [Buf("p_ptr", "fp32", R * V, _prob_rows(V, 3.0)), Scalar("p_stride", V),
              Buf("q_ptr", "fp32", R * V, _prob_rows(V, 3.0)), Scalar("q_stride", V),
              Out("loss_ptr", "fp32", R * V), Scalar("loss_stride", V),
              Out("grads_ptr", "fp32", R * V), Scalar("grads_stride", V),
              Buf("label_ptr", "i64", 1, "zeros"), Scalar("n_cols", V), Scalar("scale", 1.0, "fp32")],
             {"ignore_index": -100, "BLOCK_SIZE": 1024, "HAS_LABEL": False, "reduction": 0}, ref=tvd))

    # sparsemax
    for dt, R, N, BS in (("fp32", 6, 300, 512), ("bf16", 4, 100, 128)):
        add(Case(f"liger sparsemax fwd {dt}, sorted in the kernel", F, "_lg_sparsemax_forward_kernel", (R,),
                 [Buf("x_ptr", dt, R * N, scale=2.0), Scalar("x_stride_row", N), Out("o_ptr", dt, R * N),
                  Scalar("o_stride_row", N), Scalar("n_cols", N)], {"BLOCK_SIZE": BS},
                 ref_tol={"fp32": (1e-5, 1e-4)}, ref=sparsemax_fwd(dt)))
    R, N = 4, 700
    add(Case("liger sparsemax bwd, two passes", F, "_lg_sparsemax_backward_kernel", (R,),
             [Buf("o_ptr", "fp32", R * N, _sparse_rows), Buf("go_ptr", "fp32", R * N), Out("gi_ptr", "fp32", R * N),
              Scalar("stride", N), Scalar("n_cols", N)], {"BLOCK_SIZE": 256}, ref=sparsemax_bwd))

    # multimodal rope, in place
    for dt, T, nq, nk, hd, secs, bwd in (("fp16", 6, 3, 1, 32, (4, 6, 6), False),
                                         ("fp32", 5, 4, 2, 48, (8, 8, 8), True)):
        add(Case(f"liger mrope {dt}, sections {secs}, backward {bwd}", F, "_lg_mrope_kernel", (T,),
                 [Buf("q_ptr", dt, T * nq * hd, out=True), Buf("k_ptr", dt, T * nk * hd, out=True),
                  Buf("cos_ptr", "fp32", 3 * T * hd, "rand"), Buf("sin_ptr", "fp32", 3 * T * hd, "rand"),
                  Scalar("n_tokens", T)],
                 {"n_qh": nq, "n_kh": nk, "hd": hd, "pad_n_qh": _pow2(nq), "pad_n_kh": _pow2(nk), "pad_hd": _pow2(hd),
                  "SECTIONS": secs, "BACKWARD_PASS": bwd}, ref=mrope(dt)))

    # llama4 rope on interleaved pairs; one extra row of programs returns early
    for dt, B, S, hq, hk, hd, BS, sign, extra in (("fp32", 2, 3, 4, 2, 48, 16, 1.0, 1),
                                                  ("bf16", 2, 4, 3, 1, 16, 16, -1.0, 0)):
        add(Case(f"liger llama4 rope {dt}, imag sign {sign}", F, "_lg_llama4_rope_kernel",
                 (B * S + extra, max(hq, hk)),
                 [Buf("q_ptr", dt, B * S * hq * hd, out=True), Buf("k_ptr", dt, B * S * hk * hd, out=True),
                  Buf("freqs_ptr", "fp32", S * hd), Scalar("q_row_stride", hq * hd), Scalar("k_row_stride", hk * hd),
                  Scalar("q_head_stride", hd), Scalar("k_head_stride", hd), Scalar("freqs_row_stride", hd),
                  Scalar("seq_len", S), Scalar("batch_size", B), Scalar("imag_sign", sign, "fp32")],
                 {"head_dim_half": hd // 2, "n_q_heads": hq, "n_k_heads": hk, "BLOCK_SIZE": BS},
                 ref=llama4_rope(dt)))

    # rope over groups of heads, in place
    for dt, cdt, bwd in (("fp16", "fp16", False), ("bf16", "fp32", True)):
        T, S, nh, hd = 10, 5, 6, 40
        add(Case(f"unsloth rope, groups of 4 heads, {dt} with {cdt} cos/sin, backward {bwd}", F,
                 "_lg_rope_embedding", (T, 2),
                 [Buf("Q", dt, T * nh * hd, out=True), Buf("cos", cdt, S * hd, "rand"),
                  Buf("sin", cdt, S * hd, "rand"), Scalar("seqlen", S)],
                 {"Q_row_stride": nh * hd, "cos_row_stride": hd, "sin_row_stride": hd, "head_dim": hd,
                  "n_heads": nh, "BACKWARD_PASS": bwd, "BLOCK_SIZE": 32}, ref=rope_grouped(dt, cdt)))

    # GRPO loss
    B, L, N = 2, 5, 300
    mask = [1, 1, 0, 1, 1, 1, 1, 1, 0, 0]
    grpo = {"TEMPERATURE": 0.9, "BETA": 0.04, "EPS_LOW": 0.2, "EPS_HIGH": 0.28, "LOSS_TYPE": "grpo", "L": L,
            "N": N, "BLOCK_N": 128}
    cispo = dict(grpo, TEMPERATURE=1.0, BETA=0.0, EPS_HIGH=1.5, LOSS_TYPE="cispo", BLOCK_N=256)
    near = _around(-6.3, 0.7)
    add(Case("liger grpo loss fwd, clipped, masked, kl", F, "_lg_grpo_loss_fwd_kernel", (B, L),
             [Buf("LOGITS", "fp32", B * (L + 1) * N), Buf("OLD_LOGP", "fp32", B * L, near),
              Buf("REF_LOGP", "fp32", B * L, near), Buf("INPUT_IDS", "i64", B * L, ("randint", 0, N)),
              Buf("COMPLETION_MASK", "i32", B * L, _ints(mask)), Buf("ADVANTAGES", "fp32", B, _vals([0.8, -0.6])),
              Buf("LOSS", "fp32", B * L, "zeros", out=True), Buf("LSE", "fp32", B * L, "zeros", out=True),
              Buf("KL", "fp32", B * L, "zeros", out=True), Buf("IS_CLIPPED", "i8", B * L, "zeros", out=True)],
             grpo, ref_tol={"fp32": (1e-5, 1e-4)}, ref=grpo_fwd(B)))
    add(Case("liger grpo loss fwd, cispo, bf16 logits, no mask", F, "_lg_grpo_loss_fwd_kernel", (B, L),
             [Buf("LOGITS", "bf16", B * (L + 1) * N), Buf("OLD_LOGP", "fp32", B * L, near), Null("REF_LOGP"),
              Buf("INPUT_IDS", "i64", B * L, ("randint", 0, N)), Null("COMPLETION_MASK"),
              Buf("ADVANTAGES", "fp32", B, _vals([-0.5, 1.2])),
              Buf("LOSS", "fp32", B * L, "zeros", out=True), Buf("LSE", "fp32", B * L, "zeros", out=True),
              Null("KL"), Buf("IS_CLIPPED", "i8", B * L, "zeros", out=True)],
             cispo, ref_tol={"fp32": (1e-5, 1e-4)}, ref=grpo_fwd(B)))
    lse_near = _around(6.3, 0.05)
    add(Case("liger grpo loss bwd, clipped, masked, kl", F, "_lg_grpo_loss_bwd_kernel", (B, L),
             [Buf("DLOSS", "fp32", B * 8, _positive(0.1)), Scalar("DLOSS_STRIDE", 8), Out("DLOGITS", "fp32", B * L * N),
              Buf("LOGITS", "fp32", B * (L + 1) * N), Buf("OLD_LOGP", "fp32", B * L, near),
              Buf("REF_LOGP", "fp32", B * L, near), Buf("INPUT_IDS", "i64", B * L, ("randint", 0, N)),
              Buf("ADVANTAGES", "fp32", B, _vals([0.8, -0.6])), Buf("COMPLETION_MASK", "i32", B * L, _ints(mask)),
              Buf("LSE", "fp32", B * L, lse_near)], grpo, ref_tol={"fp32": (1e-6, 1e-3)}, ref=grpo_bwd(B, "fp32")))
    add(Case("liger grpo loss bwd, cispo, bf16", F, "_lg_grpo_loss_bwd_kernel", (B, L),
             [Buf("DLOSS", "fp32", B * L, _positive(0.1)), Scalar("DLOSS_STRIDE", L), Out("DLOGITS", "bf16", B * L * N),
              Buf("LOGITS", "bf16", B * (L + 1) * N), Buf("OLD_LOGP", "fp32", B * L, near), Null("REF_LOGP"),
              Buf("INPUT_IDS", "i64", B * L, ("randint", 0, N)), Buf("ADVANTAGES", "fp32", B, _vals([-0.5, 1.2])),
              Null("COMPLETION_MASK"), Buf("LSE", "fp32", B * L, lse_near)], cispo, ref=grpo_bwd(B, "bf16")))

    # MoE grouped GEMM, persistent over the experts' tiles
    order, sizes = _routing()
    total = NT * TOPK
    for px, py, mul, sms, flat in ((True, False, False, 3, True), (False, True, True, 4, True),
                                   (False, False, False, 2, False)):
        what = "permuted loads" if px else "permuted stores, weighted" if py else "expert order"
        add(Case(f"unsloth moe grouped gemm, {what}", F, "_lg_grouped_gemm_forward_kernel", (sms,),
                 [Buf("x_ptr", "bf16", (NT if px else total) * KD, scale=0.5),
                  Buf("w_ptr", "bf16", E * ND * KD, scale=0.5), Out("y_ptr", "bf16", total * ND),
                  Buf("m_sizes_ptr", "i32", E, _ints(sizes)), Buf("gather_indices_ptr", "i32", total, _ints(order)),
                  Buf("topk_weights_ptr", "fp32", total, "rand"), Scalar("NUM_TOKENS", NT), Scalar("NUM_SMS", sms)],
                 {"NUM_EXPERTS": E, "TOPK": TOPK, "N": ND, "K": KD, "BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32,
                  "BLOCK_SIZE_K": 32, "PERMUTE_X": px, "PERMUTE_Y": py, "FUSE_MUL_POST": mul, "FLATTEN": flat},
                 ref=grouped_gemm(px, py)))

    # Sinkhorn mixing matrices; one program past the last matrix returns
    for kern, HC, T, n, dt in (("_lg_sinkhorn_fwd_kernel", 4, 5, 6, "fp32"),
                               ("_lg_sinkhorn_bwd_kernel", 4, 4, 5, "fp32"),
                               ("_lg_sinkhorn_bwd_kernel", 8, 3, 3, "bf16")):
        fwd = kern == "_lg_sinkhorn_fwd_kernel"
        io = [Out("out_ptr", dt, n * HC * HC)] if fwd else \
            [Buf("grad_out_ptr", dt, n * HC * HC), Out("grad_logits_ptr", dt, n * HC * HC)]
        add(Case(f"liger sinkhorn {'fwd' if fwd else 'bwd'} {HC}x{HC}, {T} iterations, {dt}", F, kern, (n + 1,),
                 [Buf("logits_ptr", dt, n * HC * HC, scale=2.0)] + io +
                 [Scalar("n_mats", n), Scalar("stride_n", HC * HC)],
                 {"HC": HC, "TMAX": T, "EPS": 1e-6}, ref_tol={"fp32": (1e-5, 1e-4)},
                 ref=sinkhorn_fwd if fwd else sinkhorn_bwd))
    M, K, N = 40, 64, 16
    add(Case("liger narrow projection bwd, tile atomics", F, "_lg_proj_backward_kernel", (3,),
             [Buf("x_ptr", "fp32", M * K), Buf("phi_ptr", "fp32", K * N), Buf("grad_ptr", "fp32", M * N),
              Out("dx_ptr", "fp32", M * K), Buf("dphi_ptr", "fp32", K * N, "zeros", out=True), Scalar("M", M)],
             {"K": K, "N": N, "BLOCK_M": 16, "BLOCK_K": 32}, ref_tol={"fp32": (1e-4, 1e-4)}, ref=proj_bwd))
    return out
