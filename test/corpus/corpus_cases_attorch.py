"""Cases of the layer kernels in attorch_style.py (attorch, kernl, DeepSpeed
and Inductor-generated styles) and their float64 numpy references; each
reference takes (v, c, s) as corpus_refs.py describes."""
import math

import numpy as np

from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_cases_flaggems import _f16
from corpus_cases_vllm import _cdiv, _ints
from corpus_refs import gelu_erf, gelu_tanh, philox4, philox_rand, sigmoid, softmax

F = "attorch_style.py"
DOT_TOL = {"fp32": (2e-2, 2e-2)}  # fp32 tl.dot runs as tf32 on the GPU
DOT_REF_TOL = {"fp32": (1e-4, 1e-4)}


def _act(x, act):
    if act == "sigmoid":
        return sigmoid(x)
    if act == "tanh":
        return np.tanh(x)
    if act == "relu":
        return np.maximum(x, 0.0)
    if act == "gelu":
        return gelu_erf(x)
    if act == "fast_gelu":
        return gelu_tanh(x)
    if act == "silu":
        return x * sigmoid(x)
    if act == "leaky_relu":
        return np.where(x <= 0, 0.01 * x, x)
    if act in ("", "none"):
        return x
    raise ValueError(act)


def _act_grad(x, act):
    if act == "sigmoid":
        sg = sigmoid(x)
        return sg * (1 - sg)
    if act == "tanh":
        return 1 - np.tanh(x) ** 2
    if act == "relu":
        return np.where(x <= 0, 0.0, 1.0)
    if act == "gelu":
        return 0.5 * (1 + np.vectorize(math.erf)(x / np.sqrt(2))) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
    if act == "silu":
        sg = sigmoid(x)
        return sg * (x * (1 - sg) + 1)
    if act == "leaky_relu":
        return np.where(x <= 0, 0.01, 1.0)
    raise ValueError(act)


def _keep(seed, n, p):
    """tl.rand(seed, offset) >= p for offsets 0..n-1."""
    return philox_rand(seed, np.arange(n)) >= np.float32(p)


# ---- references -----------------------------------------------------------------------------


def act_fwd(v, c, s):
    y = _act(v["input_pointer"], c["act_func"])
    if c["dropout"]:
        p = s["drop_p"]
        y = np.where(_keep(s["seed"], y.size, p), y / (1 - np.float32(p)), 0.0)
    return {"output_pointer": y}


def act_bwd(v, c, s):
    dy = v["output_grad_pointer"]
    if c["dropout"]:
        p = s["drop_p"]
        dy = np.where(_keep(s["seed"], dy.size, p), dy / (1 - np.float32(p)), 0.0)
    return {"input_grad_pointer": dy * _act_grad(v["input_pointer"], c["act_func"])}


def batch_norm_fwd(v, c, s):
    B, S = s["batch_dim"], s["spatial_dim"]
    x = v["input_pointer"].reshape(B, -1, S)
    res = {}
    if c["is_train"] or not c["track_running_stats"]:
        mean, var = x.mean((0, 2)), x.var((0, 2))
        inv_std = 1 / np.sqrt(var + s["eps"])
        if c["save_stats"]:
            res["mean_pointer"], res["inv_std_pointer"] = mean, inv_std
        if c["track_running_stats"]:
            m, n = s["momentum"], B * S
            res["running_mean_pointer"] = (1 - m) * v["running_mean_pointer"] + m * mean
            res["running_var_pointer"] = (1 - m) * v["running_var_pointer"] + m * var * n / (n - 1)
    else:
        mean = v["running_mean_pointer"]
        inv_std = 1 / np.sqrt(v["running_var_pointer"] + s["eps"])
    w, b = (v["weight_pointer"], v["bias_pointer"]) if c["affine"] else (1.0, 0.0)
    y = (x - mean[:, None]) * (w * inv_std)[:, None] + (np.zeros_like(mean) + b)[:, None]
    res["output_pointer"] = y.reshape(-1)
    return res


def batch_norm_bwd(v, c, s):
    B, S = s["batch_dim"], s["spatial_dim"]
    x = v["input_pointer"].reshape(B, -1, S)
    dy = v["output_grad_pointer"].reshape(B, -1, S)
    mean, inv_std = v["mean_pointer"][:, None], v["inv_std_pointer"][:, None]
    x_hat = (x - mean) * inv_std
    t1, t2 = (x_hat * dy).sum((0, 2)), dy.sum((0, 2))
    w = v["weight_pointer"] if c["affine"] else np.ones_like(t1)
    count = B * S
    dx = inv_std * (w[:, None] * dy - ((t1 * w / count)[:, None] * x_hat + (t2 * w / count)[:, None]))
    res = {"input_grad_pointer": dx.reshape(-1)}
    if c["affine"]:
        res["weight_grad_pointer"], res["bias_grad_pointer"] = t1, t2
    return res


def layer_norm_fwd(v, c, s):
    B, N = s["batch_dim"], s["feat_dim"]
    x = v["input_pointer"].reshape(B, -1)[:, :N * s["input_feat_stride"]:s["input_feat_stride"]]
    mean = x.mean(1)
    inv_std = 1 / np.sqrt(x.var(1) + s["eps"])
    y = (x - mean[:, None]) * inv_std[:, None]
    if c["scale_by_weight"]:
        y = y * v["weight_pointer"]
        if c["add_bias"]:
            y = y + v["bias_pointer"]
    out = v["output_pointer"].reshape(B, -1).copy()
    out[:, :N] = y
    res = {"output_pointer": out.reshape(-1)}
    if c["save_stats"]:
        res["mean_pointer"], res["inv_std_pointer"] = mean, inv_std
    return res


def softmax_fwd(v, c, s):
    B, N = s["batch_dim"], s["feat_dim"]
    x = v["input_pointer"].reshape(B, -1)[:, :N]
    y = x - x.max(1, keepdims=True)
    y = y - np.log(np.exp(y).sum(1, keepdims=True)) if c["log"] else softmax(x)
    out = v["output_pointer"].reshape(B, -1).copy()
    out[:, :N] = y
    return {"output_pointer": out.reshape(-1)}


def softmax_bwd(v, c, s):
    B, N = s["batch_dim"], s["feat_dim"]
    dy = v["output_grad_pointer"].reshape(B, -1)[:, :N]
    y = v["output_pointer"].reshape(B, -1)[:, :N]
    if c["log"]:
        dx = dy - np.exp(y) * dy.sum(1, keepdims=True)
    else:
        dx = y * (dy - (dy * y).sum(1, keepdims=True))
    out = v["input_grad_pointer"].reshape(B, -1).copy()
    out[:, :N] = dx
    return {"input_grad_pointer": out.reshape(-1)}


def conv2d(v, c, s):
    B, Ci, H, W = s["batch_dim"], s["in_feat_dim"], s["in_height"], s["in_width"]
    Co, OH, OW = s["out_feat_dim"], s["out_height"], s["out_width"]
    kh, kw, sh, sw = c["kernel_height"], c["kernel_width"], c["stride_height"], c["stride_width"]
    ph, pw, g = c["padding_height"], c["padding_width"], c["groups"]
    x = v["input_pointer"].reshape(B, Ci, H, W)
    w = v["weight_pointer"].reshape(Co, Ci // g, kh, kw)
    if c["fp16"]:
        x, w = _f16(x), _f16(w)
    xp = np.zeros((B, Ci, H + 2 * ph + kh, W + 2 * pw + kw))
    xp[:, :, ph:ph + H, pw:pw + W] = x
    out = np.zeros((B, Co, OH, OW))
    cig, cog = Ci // g, Co // g
    for gi in range(g):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, gi * cig:(gi + 1) * cig, i:i + sh * OH:sh, j:j + sw * OW:sw]  # B, cig, OH, OW
                out[:, gi * cog:(gi + 1) * cog] += np.einsum("bchw,oc->bohw", patch, w[gi * cog:(gi + 1) * cog, :, i, j])
    return {"output_pointer": out.reshape(-1)}


def nll_loss(v, c, s):
    B, C, bb = s["batch_dim"], s["feat_dim"], c["BLOCK_SIZE_BATCH"]
    x = v["input_pointer"].reshape(B, -1)
    t = v["target_pointer"].astype(np.int64)
    live = t != -100
    tt = np.where(live, t, 0)
    w = v["weight_pointer"][tt] if c["weighted"] else np.ones(B)
    loss = np.where(live, -x[np.arange(B), tt] * w, 0.0)
    if c["reduction"] == "none":
        return {"output_pointer": loss}
    nb = _cdiv(B, bb)
    pad = np.zeros(nb * bb)
    pad[:B] = loss
    res = {"output_pointer": pad.reshape(nb, bb).sum(1)}
    if c["reduction"] == "mean":
        ww = np.zeros(nb * bb)
        ww[:B] = np.where(live, w, 0.0)
        res["sum_weights_pointer"] = ww.reshape(nb, bb).sum(1)
    return res


def kl_linear(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    acc = _f16(v["A"]).reshape(M, K) @ _f16(v["B"]).reshape(K, N)
    if c["HAS_BIAS"]:
        acc = acc + v["bias"]
    res = {"C": _act(acc, c["ACTIVATION"]).reshape(-1)}
    if c["SHOULD_SAVE_ACT_INPUTS"]:
        res["ACT_INPUTS"] = acc.reshape(-1)
    return res


def kl_attention(v, c, s):
    H, M, N = s["n_heads"], s["size_m"], s["size_n"]
    D = c["BLOCK_DHEAD"]
    q = v["Q"].reshape(-1, H, M, D)
    k = v["K"].reshape(-1, H, N, D)
    val = v["V"].reshape(-1, H, N, D)
    sc = np.einsum("zhmd,zhnd->zhmn", q, k) * s["sm_scale"]
    if c["HAS_MASK"]:
        Z = q.shape[0]
        zi, hi = np.arange(Z)[:, None, None, None], np.arange(H)[None, :, None, None]
        mi, ni = np.arange(M)[None, None, :, None], np.arange(N)[None, None, None, :]
        sc = sc + v["attention_mask"][zi * s["stride_maskz"] + hi * s["stride_maskh"] + mi * s["stride_maskm"] + ni]
    if c["IS_CAUSAL"]:
        sc = np.where(np.arange(M)[:, None] >= np.arange(N)[None, :], sc, -np.inf)
    return {"Out": np.einsum("zhmn,zhnd->zhmd", softmax(sc), val).reshape(-1)}


def kl_layer_norm(v, c, s):
    N, st = s["N"], s["stride_row"]
    x = v["X"].reshape(-1, st)[:, :N]
    mean, var = x.mean(1), x.var(1)
    rstd = 1 / np.sqrt(var + s["eps"])
    out = v["Out"].reshape(-1, st).copy()
    out[:, :N] = (x - mean[:, None]) * rstd[:, None] * v["W"] + v["B"]
    return {"Out": out.reshape(-1), "Mean": mean, "Rstd": rstd}


def ds_fp_matmul(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    acc = _f16(v["A"]).reshape(M, K) @ _f16(v["B"]).reshape(K, N)
    if c["BIAS_ADD"]:
        acc = acc + v["bias"]
    act = c["ACTIVATION"]
    y = gelu_tanh(acc) if act == "gelu" else _act(acc, act)
    if c["SPLIT_K"] > 1:
        y = y + v["C"].reshape(M, N)
    return {"C": y.reshape(-1)}


def ds_matmul_4d(v, c, s):
    M, N, K = s["M"], s["N"], s["K"]
    a = _f16(v["a_ptr"]).reshape(-1, M, K)
    b = _f16(v["b_ptr"]).reshape(-1, K, N)
    y = a @ b
    if s["scale"] > 0:
        y = y * s["scale"]
    if c["MASK"]:
        y = np.where(np.arange(M)[:, None] >= np.arange(N)[None, :], y, -np.inf)
    return {"c_ptr": y.reshape(-1)}


def ds_masked_softmax(v, c, s):
    L, H = s["n_cols"], s["n_heads"]
    x = v["input_ptr"].reshape(-1, H, L, L) * s["scale"]
    if c["HAS_MASK"]:
        x = x + v["mask_ptr"].reshape(-1, 1, 1, L)
    if c["IS_CAUSAL"]:
        x = np.where(np.arange(L)[None, :] > np.arange(L)[:, None], -np.inf, x)
    return {"output_ptr": softmax(x).reshape(-1)}


def ds_layer_norm_residual(v, c, s, round_ln=None):
    N = s["N"]
    a = v["A"].reshape(-1, N) + v["Residual"].reshape(-1, N)
    if c["HAS_INPUT_BIAS"]:
        a = v["A"].reshape(-1, N) + v["InputBias"] + v["Residual"].reshape(-1, N)
    if round_ln:
        a = round_ln(a)
    mean, var = a.mean(1, keepdims=True), a.var(1, keepdims=True)
    y = (a - mean) / np.sqrt(var + s["eps"]) * v["Weight"] + v["Bias"]
    return {"ln_input": a.reshape(-1), "Out": y.reshape(-1)}


def ds_dropout_x4(v, c, s):
    n, bs = s["n_elements"], c["BLOCK_SIZE"]
    seed = int(v["seed_ptr"][0])
    p = np.float32(s["p"])
    thr = int(p * np.float32(16777216.0))
    scale = np.float64(np.float32(1.0) / (np.float32(1.0) - p))
    x = v["x_ptr"]
    out = np.zeros(n)
    for pid in range(_cdiv(n, 4 * bs)):
        words = philox4(seed, pid * bs + np.arange(bs))
        for i in range(4):
            o = pid * 4 * bs + i * bs + np.arange(bs)
            live = o < n
            keep = (words[i].astype(np.int64) >> 8) >= thr
            out[o[live]] = np.where(keep[live], x[o[live]] * scale, 0.0)
    return {"out_ptr": out}


def ind_add_mul_sigmoid(v, c, s):
    n = 960
    t = v["in_ptr0"][:n] + np.tile(v["in_ptr1"], n // 64)
    out = v["out_ptr0"].copy()
    out[:n] = t * sigmoid(t) * v["in_ptr2"][0]
    return {"out_ptr0": out}


def ind_embedding(v, c, s):
    idx = v["in_ptr0"].astype(np.int64)
    idx = np.where(idx < 0, idx + 50, idx)
    return {"out_ptr0": v["in_ptr1"].reshape(50, 32)[idx].reshape(-1)}


def ind_permute(v, c, s):
    return {"out_ptr0": v["in_ptr0"].reshape(-1, 6, s["xnumel"]).transpose(0, 2, 1).reshape(-1)}


def ind_softmax_add(v, c, s):
    x = v["in_ptr0"].reshape(24, 50) + v["in_ptr1"]
    return {"out_ptr2": softmax(x).reshape(-1)}


def ind_layer_norm(v, c, s):
    R, N = s["xnumel"], s["r0_numel"]
    x = v["in_ptr0"].reshape(R, N)
    mean, var = x.mean(1), x.var(1)
    rstd = 1 / np.sqrt(var + 1e-5)
    y = (x - mean[:, None]) * rstd[:, None] * v["in_ptr1"] + v["in_ptr2"]
    return {"in_out_ptr0": rstd, "out_ptr0": mean, "out_ptr1": y.reshape(-1)}


def ind_argmax(v, c, s):
    x = v["in_ptr0"].reshape(s["xnumel"], s["r0_numel"])
    m, i = x.max(1), x.argmax(1)
    return {"out_ptr0": m, "out_ptr1": i, "out_ptr2": ((m != 0) & (i % 2 == 1)).astype(np.int64)}


def ind_bits(v, c, s):
    x = v["in_ptr0"].astype(np.float32)
    bits = x.view(np.int32).astype(np.int64)
    ax = np.abs(x.astype(np.float64))
    with np.errstate(over="ignore"):
        h = x.astype(np.float16).view(np.int16).astype(np.int64)
    return {"out_ptr0": (bits >> 23) & 255, "out_ptr1": 2 * ax, "out_ptr2": np.round(x.astype(np.float64) * 4) / 4,
            "out_ptr3": h, "out_ptr4": (bits < 0).astype(np.int64)}


def ind_batch_norm_stats(v, c, s):
    C = s["xnumel"]
    x = v["in_ptr0"].reshape(4, C, 25)
    mean, var = x.mean((0, 2)), x.var((0, 2))
    return {"out_ptr0": mean, "out_ptr1": 1 / np.sqrt(var + 1e-5),
            "out_ptr2": 0.1 * mean + 0.9 * v["in_ptr1"],
            "out_ptr3": var * (100 / 99) * 0.1 + 0.9 * v["in_ptr2"]}


def ind_dropout(v, c, s):
    n = s["xnumel"]
    seed = int(v["in_ptr0"][s["load_seed_offset"]])
    keep = philox_rand(seed, np.arange(n)) > np.float32(0.2)
    return {"out_ptr0": keep.astype(np.int64), "out_ptr1": keep * v["in_ptr1"] * 1.25}


def ind_index_where(v, c, s):
    x = v["in_ptr0"].astype(np.int64)
    t = (x % 7) * 100 + x // 7  # Python's floor semantics, which the kernel rebuilds
    return {"out_ptr0": np.where(v["in_ptr1"] > 0, t, -t)}


def ind_cumsum(v, c, s):
    rows, cols = s["xnumel"], s["r0_numel"]
    return {"out_ptr0": np.cumsum(_f16(v["in_ptr0"]).reshape(rows, cols), axis=1).reshape(-1)}


# ---- inputs ---------------------------------------------------------------------------------


def _targets(classes):
    return lambda rng, n: np.where(rng.random(n) < 0.15, -100, rng.integers(0, classes, n))


def _bit_inputs(rng, n):
    special = [0.0, -0.0, np.inf, -np.inf, 0.125, -0.375, 2.625, -1.875, 1e-6, -3e-8, 7e4, -1e5, 65504.0,
               65520.0, 6e-8, 1.0, -2.0]
    return np.concatenate([special, rng.standard_normal(n) * 100.0 * 2.0 ** rng.integers(-8, 4, n)])[:n]


def _positive(lo):
    return lambda rng, n: lo + rng.random(n)


def cases():
    out = []
    add = out.append

    # element-wise activations with fused dropout, forward and backward
    n, blk = 1000, 128
    for act, dt, drop in (("sigmoid", "fp32", False), ("tanh", "fp32", False), ("relu", "fp16", True),
                          ("gelu", "fp32", True), ("silu", "bf16", False), ("leaky_relu", "fp32", True)):
        tag = f"{act} {dt}{' dropout' if drop else ''}"
        add(Case(f"att act fwd {tag}", F, "_att_act_fwd", (_cdiv(n, blk),),
                 [Buf("input_pointer", dt, n, scale=2.0), Out("output_pointer", dt, n), Scalar("size", n),
                  Scalar("drop_p", 0.25, "fp32"), Scalar("seed", 1234 + len(act))],
                 {"act_func": act, "dropout": drop, "BLOCK_SIZE": blk}, ref=act_fwd))
        add(Case(f"att act bwd {tag}", F, "_att_act_bwd", (_cdiv(n, blk),),
                 [Buf("output_grad_pointer", dt, n), Buf("input_pointer", dt, n, scale=2.0),
                  Out("input_grad_pointer", dt, n), Scalar("size", n), Scalar("drop_p", 0.3, "fp32"),
                  Scalar("seed", 77)],
                 {"act_func": act, "dropout": drop, "BLOCK_SIZE": blk}, ref=act_bwd))

    # batch norm: training with running statistics, evaluation, and no tracking (fp16)
    B, Fd, S = 5, 3, 37
    add(Case("att batch norm fwd train, running stats", F, "_att_batch_norm_fwd", (Fd,),
             [Buf("input_pointer", "fp32", B * Fd * S, scale=2.0), Buf("weight_pointer", "fp32", Fd, "rand"),
              Buf("bias_pointer", "fp32", Fd), Out("mean_pointer", "fp32", Fd), Out("inv_std_pointer", "fp32", Fd),
              Out("output_pointer", "fp32", B * Fd * S),
              Buf("running_mean_pointer", "fp32", Fd, out=True), Buf("running_var_pointer", "fp32", Fd, _positive(0.5),
                                                                     out=True),
              Scalar("batch_dim", B), Scalar("spatial_dim", S), Scalar("input_batch_stride", Fd * S),
              Scalar("input_feat_stride", S), Scalar("output_batch_stride", Fd * S), Scalar("output_feat_stride", S),
              Scalar("momentum", 0.1, "fp32"), Scalar("eps", 1e-5, "fp32")],
             {"affine": True, "save_stats": True, "track_running_stats": True, "is_train": True,
              "BLOCK_SIZE_BATCH": 8, "BLOCK_SIZE_SPATIAL": 16}, ref=batch_norm_fwd))
    add(Case("att batch norm fwd eval", F, "_att_batch_norm_fwd", (Fd,),
             [Buf("input_pointer", "fp32", B * Fd * S), Null("weight_pointer"), Null("bias_pointer"),
              Null("mean_pointer"), Null("inv_std_pointer"), Out("output_pointer", "fp32", B * Fd * S),
              Buf("running_mean_pointer", "fp32", Fd), Buf("running_var_pointer", "fp32", Fd, _positive(0.5)),
              Scalar("batch_dim", B), Scalar("spatial_dim", S), Scalar("input_batch_stride", Fd * S),
              Scalar("input_feat_stride", S), Scalar("output_batch_stride", Fd * S), Scalar("output_feat_stride", S),
              Scalar("momentum", 0.1, "fp32"), Scalar("eps", 1e-5, "fp32")],
             {"affine": False, "save_stats": False, "track_running_stats": True, "is_train": False,
              "BLOCK_SIZE_BATCH": 8, "BLOCK_SIZE_SPATIAL": 16}, ref=batch_norm_fwd))
    B2, F2, S2 = 3, 4, 70
    add(Case("att batch norm fwd untracked fp16", F, "_att_batch_norm_fwd", (F2,),
             [Buf("input_pointer", "fp16", B2 * F2 * S2), Buf("weight_pointer", "fp32", F2, "rand"),
              Buf("bias_pointer", "fp32", F2), Out("mean_pointer", "fp32", F2), Out("inv_std_pointer", "fp32", F2),
              Out("output_pointer", "fp16", B2 * F2 * S2), Null("running_mean_pointer"), Null("running_var_pointer"),
              Scalar("batch_dim", B2), Scalar("spatial_dim", S2), Scalar("input_batch_stride", F2 * S2),
              Scalar("input_feat_stride", S2), Scalar("output_batch_stride", F2 * S2),
              Scalar("output_feat_stride", S2), Scalar("momentum", 0.1, "fp32"), Scalar("eps", 1e-5, "fp32")],
             {"affine": True, "save_stats": True, "track_running_stats": False, "is_train": True,
              "BLOCK_SIZE_BATCH": 4, "BLOCK_SIZE_SPATIAL": 32}, ref=batch_norm_fwd))
    for affine in (True, False):
        add(Case(f"att batch norm bwd{' affine' if affine else ''}", F, "_att_batch_norm_bwd", (Fd,),
                 [Buf("output_grad_pointer", "fp32", B * Fd * S), Buf("input_pointer", "fp32", B * Fd * S),
                  Buf("mean_pointer", "fp32", Fd, scale=0.1), Buf("inv_std_pointer", "fp32", Fd, _positive(0.5)),
                  Buf("weight_pointer", "fp32", Fd, _positive(0.5)) if affine else Null("weight_pointer"),
                  Out("input_grad_pointer", "fp32", B * Fd * S),
                  Out("weight_grad_pointer", "fp32", Fd) if affine else Null("weight_grad_pointer"),
                  Out("bias_grad_pointer", "fp32", Fd) if affine else Null("bias_grad_pointer"),
                  Scalar("batch_dim", B), Scalar("spatial_dim", S), Scalar("batch_stride", Fd * S),
                  Scalar("feat_stride", S)],
                 {"affine": affine, "BLOCK_SIZE_BATCH": 8, "BLOCK_SIZE_SPATIAL": 16}, ref=batch_norm_bwd))

    # layer norm over blocks of rows
    B, N = 13, 40
    add(Case("att layer norm fwd weight bias stats", F, "_att_layer_norm_fwd", (_cdiv(B, 4),),
             [Buf("input_pointer", "fp32", B * 48), Buf("weight_pointer", "fp32", N, "rand"),
              Buf("bias_pointer", "fp32", N), Out("inv_std_pointer", "fp32", B), Out("mean_pointer", "fp32", B),
              Out("output_pointer", "fp32", B * N), Scalar("batch_dim", B), Scalar("feat_dim", N),
              Scalar("input_batch_stride", 48), Scalar("input_feat_stride", 1), Scalar("output_batch_stride", N),
              Scalar("output_feat_stride", 1), Scalar("eps", 1e-5, "fp32")],
             {"scale_by_weight": True, "add_bias": True, "save_stats": True, "BLOCK_SIZE_BATCH": 4,
              "BLOCK_SIZE_FEAT": 64}, ref=layer_norm_fwd))
    add(Case("att layer norm fwd strided fp16 weight only", F, "_att_layer_norm_fwd", (_cdiv(B, 8),),
             [Buf("input_pointer", "fp16", B * 2 * N), Buf("weight_pointer", "fp32", N, "rand"), Null("bias_pointer"),
              Null("inv_std_pointer"), Null("mean_pointer"), Out("output_pointer", "fp16", B * N),
              Scalar("batch_dim", B), Scalar("feat_dim", N), Scalar("input_batch_stride", 2 * N),
              Scalar("input_feat_stride", 2), Scalar("output_batch_stride", N), Scalar("output_feat_stride", 1),
              Scalar("eps", 1e-5, "fp32")],
             {"scale_by_weight": True, "add_bias": False, "save_stats": False, "BLOCK_SIZE_BATCH": 8,
              "BLOCK_SIZE_FEAT": 64}, ref=layer_norm_fwd))

    # softmax and log-softmax, forward and backward
    B, N = 10, 37
    for log, dt in ((False, "fp32"), (True, "fp16")):
        name = "log-softmax" if log else "softmax"
        add(Case(f"att {name} fwd {dt}", F, "_att_softmax_fwd", (_cdiv(B, 4),),
                 [Buf("input_pointer", dt, B * 40, scale=3.0), Out("output_pointer", "fp32", B * 40),
                  Scalar("batch_dim", B), Scalar("feat_dim", N), Scalar("input_batch_stride", 40),
                  Scalar("output_batch_stride", 40)],
                 {"log": log, "BLOCK_SIZE_BATCH": 4, "BLOCK_SIZE_FEAT": 64}, ref=softmax_fwd))
        add(Case(f"att {name} bwd", F, "_att_softmax_bwd", (_cdiv(B, 2),),
                 [Buf("output_grad_pointer", "fp32", B * 40), Buf("output_pointer", "fp32", B * 40,
                                                                  "randn" if log else "rand"),
                  Out("input_grad_pointer", "fp32", B * 40), Scalar("batch_dim", B), Scalar("feat_dim", N),
                  Scalar("row_stride", 40)],
                 {"log": log, "BLOCK_SIZE_BATCH": 2, "BLOCK_SIZE_FEAT": 64}, ref=softmax_bwd))

    # convolution as an implicit GEMM
    for (B, Ci, H, W, Co, kh, kw, st, pad, g, f16) in ((2, 4, 6, 6, 8, 3, 3, 1, 1, 1, False),
                                                      (2, 8, 7, 9, 6, 2, 3, 2, 0, 2, True)):
        OH, OW = (H + 2 * pad - kh) // st + 1, (W + 2 * pad - kw) // st + 1
        add(Case(f"att conv2d {kh}x{kw} stride {st} pad {pad} groups {g}{' fp16' if f16 else ''}", F,
                 "_att_conv2d_fwd", (_cdiv(B * OH * OW, 32), _cdiv(Co // g, 16), g),
                 [Buf("input_pointer", "fp32", B * Ci * H * W), Buf("weight_pointer", "fp32", Co * Ci // g * kh * kw,
                                                                    scale=0.5),
                  Out("output_pointer", "fp32", B * Co * OH * OW), Scalar("batch_dim", B), Scalar("in_feat_dim", Ci),
                  Scalar("in_height", H), Scalar("in_width", W), Scalar("out_feat_dim", Co), Scalar("out_height", OH),
                  Scalar("out_width", OW), Scalar("input_batch_stride", Ci * H * W),
                  Scalar("input_in_feat_stride", H * W), Scalar("input_height_stride", W),
                  Scalar("input_width_stride", 1), Scalar("weight_out_feat_stride", Ci // g * kh * kw),
                  Scalar("weight_in_feat_stride", kh * kw), Scalar("weight_height_stride", kw),
                  Scalar("weight_width_stride", 1), Scalar("output_batch_stride", Co * OH * OW),
                  Scalar("output_out_feat_stride", OH * OW), Scalar("output_height_stride", OW),
                  Scalar("output_width_stride", 1)],
                 {"kernel_height": kh, "kernel_width": kw, "stride_height": st, "stride_width": st,
                  "padding_height": pad, "padding_width": pad, "groups": g, "fp16": f16, "BLOCK_SIZE_BHW": 32,
                  "BLOCK_SIZE_IN_FEAT": 16, "BLOCK_SIZE_OUT_FEAT": 16},
                 tol=DOT_TOL, ref_tol={"fp32": (2e-3, 2e-3)} if f16 else {"fp32": (1e-2, 1e-2)},  # tf32 products
                 ref=conv2d))

    # negative log-likelihood
    B, C, bb = 37, 10, 16
    for red, wt in (("none", True), ("mean", True), ("mean", False), ("sum", False)):
        nout = B if red == "none" else _cdiv(B, bb)
        add(Case(f"att nll loss {red}{' weighted' if wt else ''}", F, "_att_nll_loss_fwd", (_cdiv(B, bb),),
                 [Buf("input_pointer", "fp32", B * C), Buf("target_pointer", "i64", B, _targets(C)),
                  Buf("weight_pointer", "fp32", C, "rand") if wt else Null("weight_pointer"),
                  Out("sum_weights_pointer", "fp32", nout) if red == "mean" else Null("sum_weights_pointer"),
                  Out("output_pointer", "fp32", nout), Scalar("batch_dim", B), Scalar("feat_dim", C),
                  Scalar("input_batch_stride", C)],
                 {"reduction": red, "weighted": wt, "BLOCK_SIZE_BATCH": bb, "BLOCK_SIZE_FEAT": 16}, ref=nll_loss))

    # kernl linear layer with fused epilogue
    for M, N, K, act, bias, save in ((40, 48, 64, "gelu", True, True), (40, 48, 40, "fast_gelu", False, False),
                                     (33, 32, 64, "", True, False), (40, 48, 64, "relu", False, True),
                                     (16, 64, 32, "tanh", True, False)):
        even = K % 32 == 0
        add(Case(f"att kernl linear act '{act}'{' bias' if bias else ''}{' save' if save else ''} K={K}", F,
                 "_kl_linear_fwd", (_cdiv(M, 16) * _cdiv(N, 32),),
                 [Out("C", "fp16", M * N), Out("ACT_INPUTS", "fp32", M * N) if save else Null("ACT_INPUTS"),
                  Buf("A", "fp16", M * K), Buf("B", "fp16", K * N, scale=0.3),
                  Buf("bias", "fp16", N) if bias else Null("bias"), Scalar("M", M), Scalar("N", N), Scalar("K", K),
                  Scalar("CACHE_KEY_M", M // 32), Scalar("CACHE_KEY_N", N // 32), Scalar("CACHE_KEY_K", K // 32),
                  Scalar("output_m_stride", N), Scalar("act_inputs_m_stride", N if save else 0),
                  Scalar("a_m_stride", K), Scalar("b_k_stride", N)],
                 {"BLOCK_M": 16, "GROUP_M": 2, "BLOCK_N": 32, "BLOCK_K": 32, "K_LOAD_MASK_NEEDED": even,
                  "HAS_BIAS": bias, "SHOULD_SAVE_ACT_INPUTS": save, "ACTIVATION": act},
                 tol=DOT_TOL, ref_tol=DOT_REF_TOL, ref=kl_linear))

    # kernl attention with bias broadcast over rows, causal
    Z, H, D = 2, 2, 32
    for L, causal, mask in ((40, True, "row"), (48, False, None), (40, False, "full")):
        if mask == "row":
            mk = [Buf("attention_mask", "fp32", Z * L), Scalar("stride_maskz", L), Scalar("stride_maskh", 0),
                  Scalar("stride_maskm", 0)]
        elif mask == "full":
            mk = [Buf("attention_mask", "fp32", Z * H * L * L), Scalar("stride_maskz", H * L * L),
                  Scalar("stride_maskh", L * L), Scalar("stride_maskm", L)]
        else:
            mk = [Null("attention_mask"), Scalar("stride_maskz", 0), Scalar("stride_maskh", 0),
                  Scalar("stride_maskm", 0)]
        n = Z * H * L * D
        add(Case(f"att kernl attention L={L}{' causal' if causal else ''} mask {mask}", F, "_kl_attention_fwd",
                 (_cdiv(L, 16), Z * H),
                 [Buf("Q", "fp16", n), Buf("K", "fp16", n), Buf("V", "fp16", n), Scalar("sm_scale", D ** -0.5, "fp32"),
                  mk[0], Out("Out", "fp16", n), Scalar("stride_qz", H * L * D), Scalar("stride_qh", L * D),
                  Scalar("stride_qm", D), *mk[1:], Scalar("n_heads", H), Scalar("size_m", L), Scalar("size_n", L)],
                 {"BLOCK_DHEAD": D, "BLOCK_M": 16, "BLOCK_N": 16, "IS_CAUSAL": causal,
                  "NEED_LOAD_MASK_SIZE_N": L % 16 != 0, "HAS_MASK": mask is not None}, ref=kl_attention))

    # kernl layer norm: Welford lanes or sums
    R, N, st = 6, 100, 103
    for method, dt in (("welford", "fp32"), ("sums", "fp16")):
        add(Case(f"att kernl layer norm {method} {dt}", F, "_kl_layer_norm_fwd", (R,),
                 [Out("Out", dt, R * st), Buf("X", dt, R * st, lambda rng, n: 1.0 + rng.standard_normal(n)),
                  Buf("W", "fp32", N, "rand"), Buf("B", "fp32", N), Out("Mean", "fp32", R), Out("Rstd", "fp32", R),
                  Scalar("stride_row", st), Scalar("N", N), Scalar("eps", 1e-5, "fp32")],
                 {"METHOD": method, "BLOCK_SIZE": 32}, ref=kl_layer_norm))

    # DeepSpeed matmul with split-K, bias and activation
    for M, N, K, cdt, bias, act, split, bk in ((40, 48, 64, "fp16", True, "gelu", 1, 16),
                                               (40, 48, 64, "fp32", True, "none", 2, 16),
                                               (33, 40, 40, "fp16", False, "leaky_relu", 1, 16),
                                               (20, 32, 48, "fp32", True, "sigmoid", 1, 32)):
        bm = 32
        even = K % (bk * split) == 0
        add(Case(f"att ds matmul {act} split {split}{' bias' if bias else ''} {cdt} K={K}", F, "_ds_fp_matmul",
                 (_cdiv(M, bm) * _cdiv(N, 32), split),
                 [Buf("A", "fp16", M * K), Buf("B", "fp16", K * N, scale=0.3),
                  Buf("C", cdt, M * N, "zeros", out=True) if split > 1 else Out("C", cdt, M * N),
                  Scalar("M", M), Scalar("N", N), Scalar("K", K), Buf("bias", "fp32", N) if bias else Null("bias"),
                  Scalar("stride_am", K), Scalar("stride_ak", 1), Scalar("stride_bk", N), Scalar("stride_bn", 1),
                  Scalar("stride_cm", N), Scalar("stride_cn", 1), Scalar("CACHE_M", M // 32 + 2),
                  Scalar("CACHE_N", N // 32 + 2), Scalar("CACHE_K", K // 32 + 2)],
                 {"BLOCK_M": bm, "BLOCK_N": 32, "BLOCK_K": bk, "GROUP_M": 2, "SPLIT_K": split, "EVEN_K": even,
                  "BIAS_ADD": bias, "ACTIVATION": act},
                 tol=DOT_TOL, ref_tol=DOT_REF_TOL, ref=ds_fp_matmul))

    # DeepSpeed per-head matmul with causal mask and early exit
    Bt, Hh, L, Kd = 2, 2, 40, 32
    for mask, scale, cdt in ((True, 0.125, "fp32"), (False, 0.0, "fp16")):
        add(Case(f"att ds matmul 4d{' causal' if mask else ''} scale {scale} {cdt}", F, "_ds_matmul_4d",
                 (_cdiv(L, 16) ** 2, Hh, Bt),
                 [Buf("a_ptr", "fp16", Bt * Hh * L * Kd), Buf("b_ptr", "fp16", Bt * Hh * Kd * L, scale=0.5),
                  Out("c_ptr", cdt, Bt * Hh * L * L), Scalar("M", L), Scalar("N", L), Scalar("K", Kd),
                  Scalar("stride_ab", Hh * L * Kd), Scalar("stride_ah", L * Kd), Scalar("stride_am", Kd),
                  Scalar("stride_ak", 1), Scalar("stride_bb", Hh * Kd * L), Scalar("stride_bh", Kd * L),
                  Scalar("stride_bk", L), Scalar("stride_bn", 1), Scalar("stride_cb", Hh * L * L),
                  Scalar("stride_ch", L * L), Scalar("stride_cm", L), Scalar("stride_cn", 1),
                  Scalar("scale", scale, "fp32")],
                 {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 16, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 2, "MASK": mask},
                 tol=DOT_TOL, ref_tol=DOT_REF_TOL, ref=ds_matmul_4d))

    # DeepSpeed scaled softmax with key mask and causal mask
    Bt, Hh, L = 2, 3, 40
    for mask, causal, dt in ((True, True, "fp32"), (False, False, "fp16"), (True, False, "fp16")):
        add(Case(f"att ds softmax{' mask' if mask else ''}{' causal' if causal else ''} {dt}", F,
                 "_ds_masked_softmax", (Bt * Hh * L,),
                 [Out("output_ptr", dt, Bt * Hh * L * L), Buf("input_ptr", dt, Bt * Hh * L * L),
                  Buf("mask_ptr", "fp32", Bt * L, lambda rng, n: np.where(rng.random(n) < 0.2, -1e4, 0.0))
                  if mask else Null("mask_ptr"), Scalar("stride", L), Scalar("mask_stride", L), Scalar("n_cols", L),
                  Scalar("n_heads", Hh), Scalar("scale", 0.5, "fp32")],
                 {"BLOCK_SIZE": 64, "HAS_MASK": mask, "IS_CAUSAL": causal}, ref=ds_masked_softmax))

    # DeepSpeed layer norm with residual (and input bias)
    R, N = 5, 300
    for bias, dt in ((True, "fp32"), (False, "fp16")):
        add(Case(f"att ds layer norm residual{' input bias' if bias else ''} {dt}", F, "_ds_layer_norm_residual",
                 (R,),
                 [Out("Out", dt, R * N), Buf("A", dt, R * N), Buf("Residual", dt, R * N),
                  Buf("InputBias", "fp32", N) if bias else Null("InputBias"), Out("ln_input", dt, R * N),
                  Buf("Weight", "fp32", N, "rand"), Buf("Bias", "fp32", N), Scalar("stride", N), Scalar("N", N),
                  Scalar("eps", 1e-5, "fp32")],
                 {"BLOCK_SIZE": 128, "HAS_INPUT_BIAS": bias},
                 ref=ds_layer_norm_residual if dt == "fp32" else
                 lambda v, c, s: ds_layer_norm_residual(v, c, s, round_ln=_f16)))

    # four-words-per-call dropout, int64 seed read from memory
    for n, p, seed in ((1000, 0.3, (1 << 40) + 12345), (256, 0.5, 7)):
        add(Case(f"att ds dropout randint4x n={n} p={p}", F, "_ds_dropout_x4", (_cdiv(n, 4 * 64),),
                 [Buf("x_ptr", "fp32", n), Out("out_ptr", "fp32", n), Buf("seed_ptr", "i64", 1, _ints([seed])),
                  Scalar("n_elements", n), Scalar("p", p, "fp32")],
                 {"BLOCK_SIZE": 64}, ref=ds_dropout_x4))

    # Inductor-style generated kernels
    add(Case("att inductor poi add mul sigmoid, static xnumel", F, "triton_poi_fused_add_mul_sigmoid_0", (8,),
             [Buf("in_ptr0", "fp16", 1024), Buf("in_ptr1", "fp32", 64), Buf("in_ptr2", "fp32", 1),
              Out("out_ptr0", "fp32", 1024), Scalar("xnumel", 1024)],
             {"XBLOCK": 128}, ref=ind_add_mul_sigmoid))
    add(Case("att inductor poi embedding, negative indices", F, "triton_poi_fused_embedding_1", (_cdiv(37 * 32, 256),),
             [Buf("in_ptr0", "i64", 37, ("randint", -50, 50)), Buf("in_ptr1", "fp32", 50 * 32),
              Out("out_ptr0", "fp32", 37 * 32), Scalar("xnumel", 37 * 32)],
             {"XBLOCK": 256}, ref=ind_embedding))
    for grid in ((2, 1, 3), (2, 3, 1)):
        add(Case(f"att inductor poi permute grid {grid}", F, "triton_poi_fused_clone_permute_2", grid,
                 [Buf("in_ptr0", "fp32", 3 * 6 * 20), Out("out_ptr0", "fp32", 3 * 6 * 20), Scalar("ynumel", 18),
                  Scalar("xnumel", 20)],
                 {"YBLOCK": 8, "XBLOCK": 16}, ref=ind_permute))
    add(Case("att inductor per softmax add", F, "triton_per_fused__softmax_add_3", (3,),
             [Buf("in_ptr0", "fp16", 24 * 50, scale=3.0), Buf("in_ptr1", "fp32", 50), Out("out_ptr2", "fp32", 24 * 50),
              Scalar("xnumel", 24), Scalar("r0_numel", 50)],
             {"XBLOCK": 8}, ref=ind_softmax_add))
    for R, N, xb, rb in ((10, 70, 4, 32), (3, 16, 2, 64)):
        add(Case(f"att inductor red layer norm welford {R}x{N}", F, "triton_red_fused_native_layer_norm_4",
                 (_cdiv(R, xb),),
                 [Out("in_out_ptr0", "fp32", R), Buf("in_ptr0", "fp32", R * N, lambda rng, n: 3 + rng.standard_normal(n)),
                  Buf("in_ptr1", "fp32", N, "rand"), Buf("in_ptr2", "fp32", N), Out("out_ptr0", "fp32", R),
                  Out("out_ptr1", "fp32", R * N), Scalar("xnumel", R), Scalar("r0_numel", N)],
                 {"XBLOCK": xb, "R0_BLOCK": rb}, ref=ind_layer_norm))
    add(Case("att inductor red argmax ties", F, "triton_red_fused_argmax_max_5", (3,),
             [Buf("in_ptr0", "fp32", 9 * 45, ("randint", -4, 5)), Out("out_ptr0", "fp32", 9),
              Out("out_ptr1", "i64", 9), Out("out_ptr2", "i8", 9), Scalar("xnumel", 9), Scalar("r0_numel", 45)],
             {"XBLOCK": 4, "R0_BLOCK": 16}, ref=ind_argmax))
    add(Case("att inductor poi float bits", F, "triton_poi_fused_view_bits_6", (3,),
             [Buf("in_ptr0", "fp32", 300, _bit_inputs), Out("out_ptr0", "i32", 300), Out("out_ptr1", "fp32", 300),
              Out("out_ptr2", "fp32", 300), Out("out_ptr3", "i16", 300), Out("out_ptr4", "i8", 300),
              Scalar("xnumel", 300)],
             {"XBLOCK": 128}, ref=ind_bits))
    add(Case("att inductor per batch norm stats int64", F, "triton_per_fused__native_batch_norm_legit_functional_7",
             (2,),
             [Buf("in_ptr0", "fp32", 4 * 7 * 25), Buf("in_ptr1", "fp32", 7), Buf("in_ptr2", "fp32", 7, _positive(0.5)),
              Out("out_ptr0", "fp32", 7), Out("out_ptr1", "fp32", 7), Out("out_ptr2", "fp32", 7),
              Out("out_ptr3", "fp32", 7), Scalar("xnumel", 7), Scalar("r0_numel", 100)],
             {"XBLOCK": 4}, ref=ind_batch_norm_stats))
    add(Case("att inductor poi dropout int64 seed", F, "triton_poi_fused_native_dropout_8", (4,),
             [Buf("in_ptr0", "i64", 3, _ints([5, (1 << 35) + 99, 42])), Buf("in_ptr1", "fp32", 500),
              Out("out_ptr0", "i8", 500), Out("out_ptr1", "fp32", 500), Scalar("load_seed_offset", 1),
              Scalar("xnumel", 500)],
             {"XBLOCK": 128}, ref=ind_dropout))
    add(Case("att inductor poi floor div mod", F, "triton_poi_fused_index_where_9", (2,),
             [Buf("in_ptr0", "i32", 200, ("randint", -60, 60)), Buf("in_ptr1", "fp32", 200),
              Out("out_ptr0", "i32", 200), Scalar("xnumel", 200)],
             {"XBLOCK": 128}, ref=ind_index_where))
    add(Case("att inductor per cumsum tuple of one", F, "triton_per_fused_cumsum_10", (3,),
             [Buf("in_ptr0", "fp16", 9 * 50), Out("out_ptr0", "fp32", 9 * 50), Scalar("xnumel", 9),
              Scalar("r0_numel", 50)],
             {"XBLOCK": 4}, ref=ind_cumsum))
    return out
