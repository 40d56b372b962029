"""Cases of the flash-attention-, TransformerEngine-, block-sparse- and
lightning-attention-style kernels in flash_te_style.py with their float64
numpy references; each reference takes (v, c, s) as corpus_refs.py
describes. Every case name starts with "fte "."""
import numpy as np

import corpus_refs as R_
from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_cases_flaggems import _bf16, _f16

F = "flash_te_style.py"
DOT_TOL = {"fp32": (2e-2, 2e-2)}  # fp32 tl.dot runs as tf32 on the GPU
LOG2E32 = np.float32(1.44269504)


def _cdiv(a, b):
    return -(-a // b)


def _f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


def _round(dt):
    return {"fp16": _f16, "bf16": _bf16, "fp32": _f32}[dt]


def _fixed(arr):
    arr = np.asarray(arr)
    return lambda rng, n: arr[:n].astype(np.float64) if arr.dtype.kind == "f" else arr[:n].astype(np.int64)


def _rand7(seed, n):
    """tl.rand(seed.to(uint32), arange(n), n_rounds=7)."""
    w = R_.philox4(int(seed) & 0xFFFFFFFF, np.arange(n), rounds=7)[0]
    x = w.astype(np.uint32).view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x)
    return (x.astype(np.float32) * np.float32(4.6566127342e-10)).astype(np.float64)


def _seeds(rng, n):
    return rng.integers(0, 2**32, n)  # as torch.randint(2**32) draws them


# ---- flash-attention layer norm / RMS norm ---------------------------------------------------------


def _ln_fwd_case(name, dt, M, N, BLOCK_N, *, rms=False, bias=True, residual=False, res_out=False,
                 dropout=0.0, store_mask=False, rowscale=False, x1=False, w1=False, b1=False, zc=False):
    nx = 2 if x1 else 1
    args = [Buf("X", dt, M * N), Out("Y", dt, M * N), Buf("W", dt, N, scale=0.5 if zc else 1.0),
            Buf("B", dt, N) if bias else Null("B"),
            Buf("RESIDUAL", "fp32", M * N) if residual else Null("RESIDUAL"),
            Buf("X1", dt, M * N) if x1 else Null("X1"),
            Buf("W1", dt, N, "rand") if w1 else Null("W1"),
            Buf("B1", dt, N) if b1 else Null("B1"),
            Out("Y1", dt, M * N) if w1 else Null("Y1"),
            Out("RESIDUAL_OUT", "fp32", M * N) if res_out else Null("RESIDUAL_OUT"),
            Buf("ROWSCALE", "fp32", nx * M, "rand", scale=2.0) if rowscale else Null("ROWSCALE"),
            Buf("SEEDS", "i64", nx * M, _seeds) if dropout > 0 else Null("SEEDS"),
            Out("DROPOUT_MASK", "i8", nx * M * N) if store_mask else Null("DROPOUT_MASK"),
            Null("Mean") if rms else Out("Mean", "fp32", M), Out("Rstd", "fp32", M),
            Scalar("stride_x_row", N), Scalar("stride_y_row", N), Scalar("stride_res_row", N if residual else 0),
            Scalar("stride_res_out_row", N if res_out else 0), Scalar("stride_x1_row", N if x1 else 0),
            Scalar("stride_y1_row", N if w1 else 0), Scalar("M", M), Scalar("N", N),
            Scalar("eps", 1e-5, "fp32"), Scalar("dropout_p", dropout, "fp32")]
    consts = {"zero_centered_weight": zc, "IS_RMS_NORM": rms, "BLOCK_N": BLOCK_N, "HAS_RESIDUAL": residual,
              "STORE_RESIDUAL_OUT": res_out, "HAS_BIAS": bias, "HAS_DROPOUT": dropout > 0,
              "STORE_DROPOUT_MASK": store_mask, "HAS_ROWSCALE": rowscale, "HAS_X1": x1, "HAS_W1": w1,
              "HAS_B1": b1}

    def ref(v, c, s):
        p = s["dropout_p"]
        x = v["X"].reshape(M, N).copy()
        out = {}
        masks = []
        if rowscale:
            x *= v["ROWSCALE"][:M, None]
        if dropout > 0:
            keep = np.stack([_rand7(v["SEEDS"][r], N) > np.float32(p) for r in range(M)])
            masks.append(keep)
            x = np.where(keep, x / (1.0 - p), 0.0)
        if x1:
            xx = v["X1"].reshape(M, N).copy()
            if rowscale:
                xx *= v["ROWSCALE"][M:, None]
            if dropout > 0:
                keep = np.stack([_rand7(v["SEEDS"][M + r], N) > np.float32(p) for r in range(M)])
                masks.append(keep)
                xx = np.where(keep, xx / (1.0 - p), 0.0)
            x = x + xx
        if residual:
            x = x + v["RESIDUAL"].reshape(M, N)
        if res_out:
            out["RESIDUAL_OUT"] = x.ravel()
        if store_mask:
            out["DROPOUT_MASK"] = np.concatenate(masks).astype(np.float64).ravel()
        if rms:
            mean = np.zeros(M)
        else:
            mean = x.mean(axis=1)
            out["Mean"] = mean
        var = ((x - mean[:, None]) ** 2).mean(axis=1)
        rstd = 1.0 / np.sqrt(var + s["eps"])
        out["Rstd"] = rstd
        xh = (x - mean[:, None]) * rstd[:, None]
        w = v["W"] + (1.0 if zc else 0.0)
        y = xh * w + (v["B"] if bias else 0.0)
        out["Y"] = y.ravel()
        if w1:
            y1 = xh * (v["W1"] + (1.0 if zc else 0.0)) + (v["B1"] if b1 else 0.0)
            out["Y1"] = y1.ravel()
        return out
    return Case(name, F, "_fan_layer_norm_fwd_1pass_kernel", (M,), args, consts, ref=ref,
                tol={"fp32": (2e-4, 2e-4)})


def _ln_bwd_case(name, dt, M, N, BLOCK_N, rpp, *, rms=False, bias=True, recompute=False, dres=False,
                 store_dres=False, dropout=0.0, rowscale=False, dual=False, b1=False, dx1=False, zc=False):
    P = _cdiv(M, rpp)
    args = [Buf("X", dt, M * N), Buf("W", dt, N, "rand"), Buf("B", dt, N) if bias else Null("B"),
            Out("Y", dt, M * N) if recompute else Null("Y"), Buf("DY", dt, M * N), Out("DX", dt, M * N),
            Out("DW", "fp32", P * N), Out("DB", "fp32", P * N) if bias else Null("DB"),
            Buf("DRESIDUAL", "fp32", M * N) if dres else Null("DRESIDUAL"),
            Buf("W1", dt, N, "rand") if dual else Null("W1"),
            Buf("DY1", dt, M * N) if dual else Null("DY1"),
            Out("DX1", dt, M * N) if dx1 else Null("DX1"),
            Out("DW1", "fp32", P * N) if dual else Null("DW1"),
            Out("DB1", "fp32", P * N) if b1 else Null("DB1"),
            Out("DRESIDUAL_IN", "fp32", M * N) if store_dres else Null("DRESIDUAL_IN"),
            Buf("ROWSCALE", "fp32", M, "rand", scale=2.0) if rowscale else Null("ROWSCALE"),
            Buf("SEEDS", "i64", 2 * M, _seeds) if dropout > 0 else Null("SEEDS"),
            Null("Mean") if rms else Buf("Mean", "fp32", M, scale=0.3),
            Buf("Rstd", "fp32", M, lambda rng, n: 0.5 + rng.random(n)),
            Scalar("stride_x_row", N), Scalar("stride_y_row", N if recompute else 0), Scalar("stride_dy_row", N),
            Scalar("stride_dx_row", N), Scalar("stride_dres_row", N if dres else 0),
            Scalar("stride_dy1_row", N if dual else 0), Scalar("stride_dx1_row", N if dx1 else 0),
            Scalar("stride_dres_in_row", N if store_dres else 0), Scalar("M", M), Scalar("N", N),
            Scalar("eps", 1e-6, "fp32"), Scalar("dropout_p", dropout, "fp32"), Scalar("rows_per_program", rpp)]
    consts = {"zero_centered_weight": zc, "IS_RMS_NORM": rms, "BLOCK_N": BLOCK_N, "HAS_DRESIDUAL": dres,
              "STORE_DRESIDUAL": store_dres, "HAS_BIAS": bias, "HAS_DROPOUT": dropout > 0,
              "HAS_ROWSCALE": rowscale, "HAS_DY1": dual, "HAS_DX1": dx1, "HAS_B1": b1,
              "RECOMPUTE_OUTPUT": recompute}

    def ref(v, c, s):
        p = s["dropout_p"]
        x, dy = v["X"].reshape(M, N), v["DY"].reshape(M, N)
        mean = np.zeros(M) if rms else v["Mean"]
        rstd = v["Rstd"]
        xh = (x - mean[:, None]) * rstd[:, None]
        w = v["W"] + (1.0 if zc else 0.0)
        out = {}
        if recompute:
            out["Y"] = (xh * w + (v["B"] if bias else 0.0)).ravel()
        wdy = w * dy
        if dual:
            dy1 = v["DY1"].reshape(M, N)
            wdy = wdy + (v["W1"] + (1.0 if zc else 0.0)) * dy1
        c1 = (xh * wdy).sum(axis=1, keepdims=True) / N
        if rms:
            dx = (wdy - xh * c1) * rstd[:, None]
        else:
            c2 = wdy.sum(axis=1, keepdims=True) / N
            dx = (wdy - (xh * c1 + c2)) * rstd[:, None]
        if dres:
            dx = dx + v["DRESIDUAL"].reshape(M, N)
        if store_dres:
            out["DRESIDUAL_IN"] = dx.ravel()
        if dx1:
            if dropout > 0:
                keep = np.stack([_rand7(v["SEEDS"][M + r], N) > np.float32(p) for r in range(M)])
                out["DX1"] = np.where(keep, dx / (1.0 - p), 0.0).ravel()
            else:
                out["DX1"] = dx.ravel()
        if dropout > 0:
            keep = np.stack([_rand7(v["SEEDS"][r], N) > np.float32(p) for r in range(M)])
            dx = np.where(keep, dx / (1.0 - p), 0.0)
        if rowscale:
            dx = dx * v["ROWSCALE"][:, None]
        out["DX"] = dx.ravel()

        def part(t):
            return np.stack([t[i * rpp:min((i + 1) * rpp, M)].sum(axis=0) for i in range(P)]).ravel()
        out["DW"] = part(dy * xh)
        if bias:
            out["DB"] = part(dy)
        if dual:
            out["DW1"] = part(dy1 * xh)
            if b1:
                out["DB1"] = part(dy1)
        return out
    return Case(name, F, "_fan_layer_norm_bwd_kernel", (P,), args, consts, ref=ref,
                tol={"fp32": (5e-4, 5e-4)})


# ---- flash-attention rotary ---------------------------------------------------------------------


def _rotary_apply(x, cos, sin, R, interleaved, conj):
    """x [..., headdim] rows with cos/sin [..., R/2] broadcast; returns the new rotary part."""
    sin = -sin if conj else sin
    if interleaved:
        x0, x1 = x[..., 0:R:2], x[..., 1:R:2]
        o = np.empty_like(x[..., :R])
        o[..., 0::2] = x0 * cos - x1 * sin
        o[..., 1::2] = x0 * sin + x1 * cos
        return o
    x0, x1 = x[..., :R // 2], x[..., R // 2:R]
    return np.concatenate([x0 * cos - x1 * sin, x0 * sin + x1 * cos], axis=-1)


def _rotary_ref(seqs, H, Dh, R, interleaved, conj, varlen, tensor_off, off_name):
    """seqs: each sequence's length; varlen packs them, else [B, L, H, Dh] with L = max."""
    def ref(v, c, s):
        L = max(seqs)
        x = v["X"].reshape(-1, H, Dh)
        out = v["OUT"].reshape(-1, H, Dh).copy()
        cos_t = v["COS"].reshape(s["seqlen_ro"], R // 2)
        sin_t = v["SIN"].reshape(s["seqlen_ro"], R // 2)
        start = 0
        for b, n in enumerate(seqs):
            base = start if varlen else b * L
            off = int(v[off_name][b]) if tensor_off else s[off_name]
            for t in range(n):
                pos = t + off
                if pos < s["seqlen_ro"]:
                    cs, sn = cos_t[pos], sin_t[pos]
                else:
                    cs, sn = np.ones(R // 2), np.zeros(R // 2)
                out[base + t, :, :R] = _rotary_apply(x[base + t], cs, sn, R, interleaved, conj)
            start += n
        return {"OUT": out.ravel()}
    return ref


def _rotary_cases():
    out = []
    # varlen, interleaved, offsets per sequence; rotary dim 24 of 32 (BLOCK_K 32)
    seqs, H, Dh, R, ro = [5, 12, 13], 3, 32, 24, 20
    cu = np.concatenate([[0], np.cumsum(seqs)])
    tot = int(cu[-1])
    for interleaved, conj, dt in ((True, False, "fp16"), (False, True, "bf16")):
        args = [Out("OUT", dt, tot * H * Dh), Buf("X", dt, tot * H * Dh), Buf("COS", "fp32", ro * R // 2, "rand"),
                Buf("SIN", "fp32", ro * R // 2, "rand"), Buf("CU_SEQLENS", "i32", len(cu), _fixed(cu)),
                Buf("SEQLEN_OFFSETS", "i32", len(seqs), _fixed([0, 6, 3])),
                Scalar("seqlen", max(seqs)), Scalar("nheads", H), Scalar("seqlen_ro", ro),
                Scalar("stride_out_batch", 0), Scalar("stride_out_seqlen", H * Dh), Scalar("stride_out_nheads", Dh),
                Scalar("stride_out_headdim", 1), Scalar("stride_x_batch", 0), Scalar("stride_x_seqlen", H * Dh),
                Scalar("stride_x_nheads", Dh), Scalar("stride_x_headdim", 1)]
        out.append(Case(f"fte rotary varlen {'interleaved' if interleaved else 'half-split'}"
                        f"{' conjugate' if conj else ''} offsets tensor {dt}", F, "_fan_rotary_kernel",
                        (_cdiv(H, 2), _cdiv(max(seqs), 8), len(seqs)), args,
                        {"ROTARY_DIM": R, "IS_SEQLEN_OFFSETS_TENSOR": True, "IS_VARLEN": True,
                         "INTERLEAVED": interleaved, "CONJUGATE": conj, "BLOCK_H": 2, "BLOCK_M": 8},
                        ref=_rotary_ref(seqs, H, Dh, R, interleaved, conj, True, True, "SEQLEN_OFFSETS")))
    # batched [B, L, H, Dh], offset given as an int, full rotary dim
    B, L, H, Dh, R, ro = 2, 11, 3, 40, 40, 16
    args = [Out("OUT", "fp32", B * L * H * Dh), Buf("X", "fp32", B * L * H * Dh),
            Buf("COS", "fp32", ro * R // 2, "rand"), Buf("SIN", "fp32", ro * R // 2, "rand"), Null("CU_SEQLENS"),
            Scalar("SEQLEN_OFFSETS", 3), Scalar("seqlen", L), Scalar("nheads", H), Scalar("seqlen_ro", ro),
            Scalar("stride_out_batch", L * H * Dh), Scalar("stride_out_seqlen", H * Dh),
            Scalar("stride_out_nheads", Dh), Scalar("stride_out_headdim", 1),
            Scalar("stride_x_batch", L * H * Dh), Scalar("stride_x_seqlen", H * Dh),
            Scalar("stride_x_nheads", Dh), Scalar("stride_x_headdim", 1)]
    out.append(Case("fte rotary batched interleaved int offset fp32", F, "_fan_rotary_kernel",
                    (_cdiv(H, 4), _cdiv(L, 4), B), args,
                    {"ROTARY_DIM": R, "IS_SEQLEN_OFFSETS_TENSOR": False, "IS_VARLEN": False,
                     "INTERLEAVED": True, "CONJUGATE": False, "BLOCK_H": 4, "BLOCK_M": 4},
                    ref=_rotary_ref([L] * B, H, Dh, R, True, False, False, False, "SEQLEN_OFFSETS")))
    # the 2-D form: one (seq block, batch, head) per program
    B, L, H, Dh, rd, ro = 2, 13, 2, 32, 24, 14
    for interleaved, conj, tensor_off, dt in ((True, True, True, "fp16"), (False, False, False, "bf16")):
        args = [Out("OUT", dt, B * L * H * Dh), Buf("X", dt, B * L * H * Dh),
                Buf("COS", "fp32", ro * rd // 2, "rand"), Buf("SIN", "fp32", ro * rd // 2, "rand"),
                Buf("SEQLEN_OFFSETS", "i32", B, _fixed([2, 0])) if tensor_off else Scalar("SEQLEN_OFFSETS", 4),
                Scalar("seqlen", L), Scalar("rotary_dim", rd), Scalar("seqlen_ro", ro),
                Scalar("stride_out_batch", L * H * Dh), Scalar("stride_out_seqlen", H * Dh),
                Scalar("stride_out_nheads", Dh), Scalar("stride_x_batch", L * H * Dh),
                Scalar("stride_x_seqlen", H * Dh), Scalar("stride_x_nheads", Dh)]
        out.append(Case(f"fte rotary 2d {'interleaved' if interleaved else 'half-split'}"
                        f"{' conjugate' if conj else ''} {'offsets tensor' if tensor_off else 'int offset'} {dt}",
                        F, "_fan_rotary_kernel_2d", (_cdiv(L, 8), B, H), args,
                        {"BLOCK_K": 32, "IS_SEQLEN_OFFSETS_TENSOR": tensor_off, "INTERLEAVED": interleaved,
                         "CONJUGATE": conj, "BLOCK_M": 8},
                        ref=_rotary_ref([L] * B, H, Dh, rd, interleaved, conj, False, tensor_off,
                                        "SEQLEN_OFFSETS")))
    return out


# ---- flash-attention cross-entropy ----------------------------------------------------------------


def _labels(total, ignore_rows, ignore=-100):
    def init(rng, n):
        y = rng.integers(0, total, n)
        y[list(ignore_rows)] = ignore
        return y
    return init


def _xent_cases():
    out = []
    for split, smooth, dt in ((True, 0.1, "fp16"), (False, 0.0, "bf16")):
        R_rows, ncols = 6, 300
        BS = 128 if split else 512
        ns = _cdiv(ncols, BS)
        start, total = (ncols, 2 * ncols) if split else (0, ncols)
        args = [Out("loss_ptr", "fp32", ns * R_rows), Out("lse_ptr", "fp32", ns * R_rows),
                Null("z_loss_ptr") if split else Out("z_loss_ptr", "fp32", ns * R_rows),
                Buf("logits_ptr", dt, R_rows * ncols, scale=2.0),
                Buf("labels_ptr", "i64", R_rows, _labels(total, [3])),
                Scalar("smoothing", smooth, "fp32"), Scalar("logit_scale", 0.7 if split else 1.0, "fp32"),
                Scalar("lse_square_scale", 0.0 if split else 1e-3, "fp32"), Scalar("ignore_index", -100),
                Scalar("total_classes", total), Scalar("class_start_idx", start), Scalar("n_cols", ncols),
                Scalar("n_rows", R_rows), Scalar("logits_row_stride", ncols)]

        def ref(v, c, s, R_rows=R_rows, ncols=ncols, BS=BS, ns=ns, split=split):
            x = v["logits_ptr"].reshape(R_rows, ncols) * s["logit_scale"]
            loss = np.zeros((ns, R_rows))
            lse = np.zeros((ns, R_rows))
            zl = np.zeros((ns, R_rows))
            sm, tot = s["smoothing"], s["total_classes"]
            for r in range(R_rows):
                lab = int(v["labels_ptr"][r])
                for j in range(ns):
                    blk = x[r, j * BS:min(ncols, (j + 1) * BS)]
                    mx = blk.max()
                    l = np.log(np.exp(blk - mx).sum()) + mx
                    lse[j, r] = l
                    if lab == s["ignore_index"]:
                        continue
                    li = lab - s["class_start_idx"]
                    base = 0.0 if split else l
                    if j * BS <= li < min(ncols, (j + 1) * BS):
                        if sm > 0:
                            ls = base - sm * blk.sum() / tot - (1 - sm) * x[r, li]
                        else:
                            ls = base - x[r, li]
                    else:
                        ls = sm * (base - blk.sum() / tot) if sm > 0 else 0.0
                    if not split:
                        zl[j, r] = s["lse_square_scale"] * l * l
                        ls += zl[j, r]
                    loss[j, r] = ls
            o = {"loss_ptr": loss.ravel(), "lse_ptr": lse.ravel()}
            if not split:
                o["z_loss_ptr"] = zl.ravel()
            return o
        what = "split over 3 blocks, smoothing" if split else "one block, z-loss"
        out.append(Case(f"fte cross-entropy fwd {what} {dt}", F, "_fan_cross_entropy_fwd_kernel", (R_rows, ns), args,
                        {"BLOCK_SIZE": BS, "HAS_SMOOTHING": smooth > 0, "SPLIT": split}, ref=ref,
                        tol={"fp32": (2e-4, 2e-4)}))
    R_rows, ncols, BS = 5, 300, 128
    ns = _cdiv(ncols, BS)
    args = [Out("dlogits_ptr", "fp16", R_rows * ncols), Buf("dloss_ptr", "fp32", 2 * R_rows),
            Buf("logits_ptr", "fp16", R_rows * ncols, scale=2.0),
            Buf("lse_ptr", "fp32", R_rows, lambda rng, n: 5.0 + rng.random(n)),
            Buf("labels_ptr", "i64", R_rows, _labels(2 * ncols, [1])),
            Scalar("smoothing", 0.2, "fp32"), Scalar("logit_scale", 0.8, "fp32"),
            Scalar("lse_square_scale", 1e-2, "fp32"), Scalar("ignore_index", -100),
            Scalar("total_classes", 2 * ncols), Scalar("class_start_idx", ncols), Scalar("n_cols", ncols),
            Scalar("logits_row_stride", ncols), Scalar("dlogits_row_stride", ncols), Scalar("dloss_row_stride", 2)]

    def bwd(v, c, s):
        x = v["logits_ptr"].reshape(R_rows, ncols) * s["logit_scale"]
        lse = v["lse_ptr"][:, None]
        p = np.exp(x - lse)
        p = p + 2.0 * s["lse_square_scale"] * lse * p
        lab = v["labels_ptr"].astype(np.int64) - s["class_start_idx"]
        hit = np.arange(ncols)[None, :] == lab[:, None]
        sm = s["smoothing"]
        p = np.where(hit, p - (1 - sm), p) - sm / s["total_classes"]
        dl = np.where(v["labels_ptr"] == s["ignore_index"], 0.0, v["dloss_ptr"][::2])
        return {"dlogits_ptr": (dl[:, None] * s["logit_scale"] * p).ravel()}
    out.append(Case("fte cross-entropy bwd smoothing, lse-square, vocab shard fp16", F,
                    "_fan_cross_entropy_bwd_kernel", (R_rows, ns), args,
                    {"BLOCK_SIZE": BS, "HAS_SMOOTHING": True}, ref=bwd))
    return out


# ---- TransformerEngine permutation ----------------------------------------------------------------


def _routing(T, E, seed):
    """A fixed routing: (routing [T, E] bool, expert-major destination rows [T, E] or -1, rows)."""
    rng = np.random.default_rng(seed)
    routing = rng.random((T, E)) < 0.35
    routing[1] = False  # a token routed nowhere
    routing[0, :3] = True
    dst = np.full((T, E), -1, dtype=np.int64)
    row = 0
    for e in range(E):
        for t in range(T):
            if routing[t, e]:
                dst[t, e] = row
                row += 1
    return routing, dst, row


def _sorted_map(dst, E):
    """The row-id map after its last pass: [T, 2E + 1]."""
    T = dst.shape[0]
    m = np.full((T, 2 * E + 1), -1, dtype=np.int64)
    for t in range(T):
        es = [e for e in range(E) if dst[t, e] >= 0]
        es.sort(key=lambda e: -dst[t, e])
        m[t, :len(es)] = [dst[t, e] for e in es]
        m[t, E:E + len(es)] = es
        m[t, 2 * E] = len(es)
    return m


def _pass3_ref(T, E):
    """Each token's destination rows sorted descending (unrouted -1 last)
    with the experts they came from, and the routed count."""
    def ref(v, c, s):
        m = v["row_id_map_ptr"].reshape(T, 2 * E + 1).copy()
        for t in range(T):
            vals = m[t, :E].copy()
            order = np.argsort(-vals, kind="stable")
            n = int((vals != -1).sum())
            m[t, :n] = vals[order[:n]]
            m[t, E:E + n] = order[:n]
            m[t, 2 * E] = n
        return {"row_id_map_ptr": m.ravel()}
    return ref


def _perm_cases():
    out = []
    T, E = 7, 6
    routing, dst, rows = _routing(T, E, 87)

    def raw_map(rng, n):
        m = rng.integers(-50, 50, (T, 2 * E + 1))
        m[:, :E] = dst
        return m.ravel()[:n]

    out.append(Case("fte moe row-id map pass 3 (sorted)", F, "_te_row_id_map_pass_3_kernel", (T,),
                    [Buf("row_id_map_ptr", "i32", T * (2 * E + 1), raw_map, out=True), Scalar("num_experts", E),
                     Scalar("stride_row_id_map_token", 2 * E + 1), Scalar("stride_row_id_map_expert", 1)],
                    {"LOAD_SIZE": 8}, ref=_pass3_ref(T, E)))
    T2, E2 = 5, 40

    def wide_map(rng, n):
        m = rng.integers(-50, 50, (T2, 2 * E2 + 1))
        for t in range(T2):
            rows = rng.choice(10000, E2, replace=False)
            m[t, :E2] = np.where(rng.random(E2) < 0.3, rows, -1)
        m[0, :E2] = -1  # a token routed nowhere
        return m.ravel()[:n]

    out.append(Case("fte moe row-id map pass 3, 40 experts in 64 lanes", F, "_te_row_id_map_pass_3_kernel", (T2,),
                    [Buf("row_id_map_ptr", "i32", T2 * (2 * E2 + 1), wide_map, out=True), Scalar("num_experts", E2),
                     Scalar("stride_row_id_map_token", 2 * E2 + 1), Scalar("stride_row_id_map_expert", 1)],
                    {"LOAD_SIZE": 64}, ref=_pass3_ref(T2, E2)))
    smap = _sorted_map(dst, E)
    hidden = 200

    def probs_init(rng, n):
        p = np.where(routing, rng.random((T, E)) + 0.05, 0.0)
        p[0, 1] = 0.0  # a padded slot: routed with a zero probability
        return p.ravel()[:n]

    for pp, dt in ((True, "bf16"), (False, "fp32")):
        args = [Buf("input_ptr", dt, T * hidden), Buf("row_id_map_ptr", "i32", smap.size, _fixed(smap)),
                Buf("probs_ptr", "fp32", T * E, probs_init) if pp else Null("probs_ptr"),
                Scalar("stride_row_id_map_token", 2 * E + 1), Scalar("stride_row_id_map_expert", 1),
                Scalar("stride_input_token", hidden), Scalar("stride_input_hidden", 1),
                Scalar("stride_output_token", hidden), Scalar("stride_output_hidden", 1),
                Scalar("stride_probs_token", E), Scalar("stride_probs_expert", 1),
                Scalar("stride_permuted_probs_token", 1),
                Out("output_ptr", dt, rows * hidden),
                Out("permuted_probs_ptr", "fp32", rows) if pp else Null("permuted_probs_ptr")]

        def permute(v, c, s, pp=pp):
            x = v["input_ptr"].reshape(T, hidden)
            o = v["output_ptr"].reshape(rows, hidden).copy()
            res = {}
            if pp:
                pr = v["probs_ptr"].reshape(T, E)
                pout = v["permuted_probs_ptr"].copy()
            for t in range(T):
                for e in range(E):
                    d = dst[t, e]
                    if d < 0:
                        continue
                    o[d] = x[t]
                    if pp:
                        pout[d] = pr[t, e]
                        if pr[t, e] == 0.0:
                            o[d] = 0.0
            res["output_ptr"] = o.ravel()
            if pp:
                res["permuted_probs_ptr"] = pout
            return res
        out.append(Case(f"fte moe permute{' with probs' if pp else ''} {dt}", F, "_te_permute_kernel",
                        (T, _cdiv(hidden, 128)), args,
                        {"num_experts": E, "hidden_size": hidden, "PERMUTE_PROBS": pp, "BLOCK_SIZE": 128},
                        ref=permute))
    for mp, pp, dt in ((True, True, "fp16"), (False, False, "bf16")):
        args = [Buf("input_ptr", dt, rows * hidden), Buf("row_id_map_ptr", "i32", smap.size, _fixed(smap)),
                Buf("merging_probs_ptr", "fp32", T * E, "rand") if mp else Null("merging_probs_ptr"),
                Buf("permuted_probs_ptr", "fp32", rows, "rand") if pp else Null("permuted_probs_ptr"),
                Scalar("stride_row_id_map_token", 2 * E + 1), Scalar("stride_row_id_map_expert", 1),
                Scalar("stride_input_token", hidden), Scalar("stride_input_hidden", 1),
                Scalar("stride_output_token", hidden), Scalar("stride_output_hidden", 1),
                Scalar("stride_merging_probs_token", E), Scalar("stride_merging_probs_expert", 1),
                Scalar("stride_permuted_probs_token", 1), Scalar("stride_unpermuted_probs_token", E),
                Scalar("stride_unpermuted_probs_expert", 1), Out("output_ptr", dt, T * hidden),
                Out("unpermuted_probs_ptr", "fp32", T * E) if pp else Null("unpermuted_probs_ptr")]

        def unpermute(v, c, s, mp=mp, pp=pp):
            x = v["input_ptr"].reshape(rows, hidden)
            o = np.zeros((T, hidden))
            up = np.zeros((T, E))
            for t in range(T):
                for e in range(E):
                    d = dst[t, e]
                    if d < 0:
                        continue
                    o[t] += x[d] * (v["merging_probs_ptr"].reshape(T, E)[t, e] if mp else 1.0)
                    if pp:
                        up[t, e] = v["permuted_probs_ptr"][d]
            res = {"output_ptr": o.ravel()}
            if pp:
                res["unpermuted_probs_ptr"] = up.ravel()
            return res
        out.append(Case(f"fte moe unpermute{' merging probs, probs' if mp else ''} {dt}", F,
                        "_te_unpermute_kernel", (T, _cdiv(hidden, 64)), args,
                        {"num_experts": E, "hidden_size": hidden, "PROBS_LOAD_WIDTH": 8,
                         "WITH_MERGING_PROBS": mp, "PERMUTE_PROBS": pp, "BLOCK_SIZE": 64}, ref=unpermute))
    args = [Buf("fwd_output_grad_ptr", "bf16", T * hidden), Out("fwd_input_grad_ptr", "bf16", rows * hidden),
            Buf("fwd_input_ptr", "bf16", rows * hidden), Buf("merging_probs_ptr", "fp32", T * E, "rand"),
            Out("merging_probs_grad_ptr", "fp32", T * E), Buf("row_id_map_ptr", "i32", smap.size, _fixed(smap)),
            Scalar("stride_row_id_map_token", 2 * E + 1), Scalar("stride_row_id_map_expert", 1),
            Scalar("stride_fwd_output_grad_token", hidden), Scalar("stride_fwd_output_grad_hidden", 1),
            Scalar("stride_fwd_input_grad_token", hidden), Scalar("stride_fwd_input_grad_hidden", 1),
            Scalar("stride_fwd_input_token", hidden), Scalar("stride_fwd_input_hidden", 1),
            Scalar("stride_merging_probs_token", E), Scalar("stride_merging_probs_expert", 1),
            Scalar("stride_merging_probs_grad_token", E), Scalar("stride_merging_probs_grad_expert", 1)]

    def unperm_bwd(v, c, s):
        g = v["fwd_output_grad_ptr"].reshape(T, hidden)
        xin = v["fwd_input_ptr"].reshape(rows, hidden)
        mpr = v["merging_probs_ptr"].reshape(T, E)
        fig = v["fwd_input_grad_ptr"].reshape(rows, hidden).copy()
        mpg = np.zeros((T, E))
        for t in range(T):
            for e in range(E):
                d = dst[t, e]
                if d < 0:
                    continue
                fig[d] = g[t] * mpr[t, e]
                mpg[t, e] = (xin[d] * g[t]).sum()
        return {"fwd_input_grad_ptr": fig.ravel(), "merging_probs_grad_ptr": mpg.ravel()}
    out.append(Case("fte moe unpermute bwd with merging probs bf16", F,
                    "_te_unpermute_bwd_with_merging_probs_kernel", (T,), args,
                    {"num_experts": E, "hidden_size": hidden, "PROBS_LOAD_WIDTH": 8, "BLOCK_SIZE": 64},
                    tol={"fp32": (1e-3, 1e-3)}, ref=unperm_bwd))
    return out


# ---- TransformerEngine cross-entropy, padding --------------------------------------------------------


def _te_ce_cases():
    out = []
    n_rows, n_cols, BS, rank = 6, 300, 128, 1
    args = [Buf("X_ptr", "bf16", n_rows * n_cols, scale=2.0), Scalar("X_stride", n_cols),
            Buf("Y_ptr", "i64", n_rows, _labels(2 * n_cols, [2])), Scalar("Y_stride", 1),
            Out("m_d_X_y_ptr", "fp32", n_rows * 3), Scalar("m_d_X_y_stride", 1), Scalar("rank", rank),
            Scalar("n_cols", n_cols), Scalar("ignore_idx", -100),
            Buf("n_non_ignore", "i32", 1, "zeros", out=True)]

    def online(v, c, s, rank=rank):
        x = v["X_ptr"].reshape(n_rows, n_cols)
        y = v["Y_ptr"].astype(np.int64)
        m = x.max(axis=1)
        d = np.exp(x - m[:, None]).sum(axis=1)
        li = y - rank * n_cols
        xy = np.where((li >= 0) & (li < n_cols), x[np.arange(n_rows), np.clip(li, 0, n_cols - 1)], -np.inf)
        return {"m_d_X_y_ptr": np.stack([m, d, xy], axis=1).ravel(),
                "n_non_ignore": v["n_non_ignore"] + (y != s["ignore_idx"]).sum()}
    out.append(Case("fte te cross-entropy online softmax stats, counter atomics", F, "_te_online_softmax_kernel",
                    (n_rows,), args, {"BLOCK_SIZE": BS}, ref=online))

    for world, rank, ls, reduce, dt in ((2, 1, 0.1, True, "bf16"), (1, 0, 0.0, False, "fp32")):
        def stats(rng, n, world=world):
            a = np.empty((world, n_rows, 3))
            a[..., 0] = rng.standard_normal((world, n_rows)) + 3.0
            a[..., 1] = 1.0 + 300.0 * rng.random((world, n_rows))
            a[..., 2] = rng.standard_normal((world, n_rows)) * 2.0
            return a.ravel()[:n]
        nn = n_rows - 2
        args = [Buf("X_ptr", dt, n_rows * n_cols, scale=2.0), Scalar("X_stride", n_cols),
                Out("grad_input_ptr", "fp32", n_rows * n_cols), Scalar("grad_input_stride", n_cols),
                Buf("Y_ptr", "i64", n_rows, _labels(world * n_cols, [1, 4])), Scalar("Y_stride", 1),
                Out("loss_ptr", "fp32", n_rows), Scalar("loss_stride", 1),
                Buf("m_d_X_y_ptr", "fp32", world * n_rows * 3, stats), Scalar("m_d_X_y_stride", 1),
                Scalar("rank", rank), Scalar("world_size", world), Scalar("ignore_idx", -100),
                Scalar("n_cols", n_cols), Scalar("n_rows", n_rows),
                Buf("n_non_ignore", "i32", 1, ("fill", nn))]

        def ce(v, c, s, world=world, rank=rank):
            x = v["X_ptr"].reshape(n_rows, n_cols)
            st = v["m_d_X_y_ptr"].reshape(world, n_rows, 3)
            g = v["grad_input_ptr"].reshape(n_rows, n_cols).copy()
            loss = v["loss_ptr"].copy()
            lsm, red = c["label_smoothing"], c["reduce_loss"]
            nni = float(v["n_non_ignore"][0])
            for r in range(n_rows):
                y = int(v["Y_ptr"][r])
                if y == s["ignore_idx"]:
                    g[r] = 0.0
                    continue
                m, d, xy = st[0, r]
                for i in range(1, world):
                    m2, d2, xy2 = st[i, r]
                    M_ = max(m, m2)
                    d = d * np.exp(m - M_) + d2 * np.exp(m2 - M_)
                    m, xy = M_, max(xy, xy2)
                eps = lsm / (n_cols * world)
                gr = np.exp(x[r] - m) / d - eps
                if red:
                    gr = gr / nni
                ls = -(xy - m - np.log(d))
                if lsm > 0:
                    ls = ls * (1 - lsm) + (-eps * x[r]).sum() + lsm * (m + np.log(d))
                li = y - rank * n_cols
                if 0 <= li < n_cols:
                    gr[li] += -(1 - lsm) / nni if red else -(1 - lsm)
                g[r] = gr
                loss[r] = ls
            return {"grad_input_ptr": g.ravel(), "loss_ptr": loss}
        out.append(Case(f"fte te cross-entropy world {world}{' smoothing, mean' if reduce else ''} {dt}", F,
                        "_te_cross_entropy_kernel", (n_rows,), args,
                        {"reduce_loss": reduce, "label_smoothing": ls, "BLOCK_SIZE": BS},
                        tol={"fp32": (2e-4, 2e-4)}, ref=ce))

    splits = [5, 0, 13, 7]
    align = 8
    padded = [_cdiv(n, align) * align for n in splits]
    rows, prow, hidden = sum(splits), sum(padded), 100
    for unpad in (False, True):
        nin, nout = (prow, rows) if unpad else (rows, prow)
        args = [Buf("input_ptr", "bf16", nin * hidden), Out("output_ptr", "bf16", nout * hidden),
                Buf("m_splits_ptr", "i64", len(splits), _fixed(splits)), Scalar("num_splits", len(splits)),
                Scalar("hidden_size", hidden), Scalar("stride_input_token", hidden),
                Scalar("stride_output_token", hidden)]

        def pad_ref(v, c, s, unpad=unpad, nin=nin):
            x = v["input_ptr"].reshape(nin, hidden)
            pieces = []
            a = b = 0
            for n, p in zip(splits, padded):
                if unpad:
                    pieces.append(x[b:b + n])
                else:
                    pieces.append(np.concatenate([x[a:a + n], np.zeros((p - n, hidden))]))
                a, b = a + n, b + p
            return {"output_ptr": np.concatenate(pieces).ravel()}
        out.append(Case(f"fte te {'unpad' if unpad else 'pad'} expert chunks to {align} bf16", F,
                        "_te_chunk_pad_kernel", (nout, _cdiv(hidden, 64)), args,
                        {"ALIGN": align, "SPLITS_LOAD_WIDTH": 8, "BLOCK_SIZE": 64, "UNPAD": unpad}, ref=pad_ref))
    sizes, order = [4, 0, 7, 3, 5], [2, 0, 4, 1, 3]
    ntok = sum(sizes)

    def sort_map(v, c, s):
        starts = np.concatenate([[0], np.cumsum(sizes)])
        dst = np.zeros(ntok)
        row = 0
        for ch in order:
            dst[starts[ch]:starts[ch] + sizes[ch]] = row + np.arange(sizes[ch])
            row += sizes[ch]
        return {"dst_rows_ptr": dst}
    out.append(Case("fte te chunk sort map", F, "_te_make_chunk_sort_map_kernel", (ntok,),
                    [Buf("split_sizes_ptr", "i64", len(sizes), _fixed(sizes)),
                     Buf("sorted_indices_ptr", "i64", len(order), _fixed(order)),
                     Out("dst_rows_ptr", "i32", ntok)],
                    {"num_splits": len(sizes), "IDX_LOAD_WIDTH": 8}, ref=sort_map))
    return out


# ---- block-sparse attention ----------------------------------------------------------------------


def _nsa_cases():
    out = []
    B, T, H, D, BS = 2, 37, 2, 24, 16
    NC = _cdiv(T, BS)

    def compress(v, c, s, B=B, T=T, H=H, D=D, BS=BS, NC=NC):
        res = {}
        for name, o in (("k", "k_cmp"), ("v", "v_cmp")):
            x = v[name].reshape(B, T, H, D)
            r = np.stack([x[:, i * BS:min(T, (i + 1) * BS)].mean(axis=1) for i in range(NC)], axis=1)
            res[o] = r.ravel()
        return res
    out.append(Case("fte nsa compress kv mean-pool blocks bf16", F, "_nsa_compress_kv_kernel", (NC, B * H),
                    [Buf("k", "bf16", B * T * H * D), Buf("v", "bf16", B * T * H * D),
                     Out("k_cmp", "bf16", B * NC * H * D), Out("v_cmp", "bf16", B * NC * H * D), Scalar("T", T)],
                    {"H": H, "D": D, "BS": BS, "BD": 32}, ref=compress))

    B, T, H, G, K, BS, S = 2, 70, 2, 2, 32, 16, 3
    HQ, NC = H * G, _cdiv(T, BS)
    scale = K ** -0.5

    for dt in ("bf16", "fp16"):
        def topk(v, c, s, B=B, T=T, H=H, G=G, K=K, BS=BS, S=S, HQ=HQ, NC=NC):
            q = v["q"].reshape(B, T, HQ, K)
            kc = v["k_cmp"].reshape(B, NC, H, K)
            idx = np.zeros((B, T, H, S), dtype=np.int64)
            for b in range(B):
                for t in range(T):
                    vis = np.arange(NC) * BS <= t
                    for h in range(H):
                        sc = s["scale"] * (q[b, t, h * G:(h + 1) * G] @ kc[b, :, h].T)  # [G, NC]
                        sc = np.where(vis[None, :], sc, -np.inf)
                        p = np.exp(sc - sc.max(axis=1, keepdims=True))
                        p /= p.sum(axis=1, keepdims=True)
                        imp = p.sum(axis=0)
                        imp[t // BS] = np.inf
                        imp = np.where(vis, imp, -np.inf)
                        for i in range(S):
                            j = int(np.argmax(imp))
                            idx[b, t, h, i] = j if imp[j] > -np.inf else -1
                            imp[j] = -np.inf
            return {"block_indices": idx.ravel()}
        out.append(Case(f"fte nsa top-k block selection {dt}", F, "_nsa_topk_kernel", (T, B * H),
                        [Buf("q", dt, B * T * HQ * K), Buf("k_cmp", dt, B * NC * H * K),
                         Out("block_indices", "i32", B * T * H * S), Scalar("scale", scale, "fp32"),
                         Scalar("T", T), Scalar("NC", NC)],
                        {"H": H, "HQ": HQ, "G": G, "K": K, "S": S, "BS": BS, "BC": 16, "BK": 32, "BH": 16},
                        ref=topk))

    # G = 16 query heads per KV head (the rows of the dots)
    for seqs, batched, H, K, Vd, BS, S, BK, BV, dt in (([40, 40], True, 1, 32, 32, 16, 3, 32, 32, "bf16"),
                                                        ([21, 29], False, 2, 24, 40, 16, 4, 32, 32, "fp16")):
        G = 16
        HQ, tot, Tmax = H * G, sum(seqs), max(seqs)
        cu = np.concatenate([[0], np.cumsum(seqs)])
        tok = np.array([(n, t) for n, L in enumerate(seqs) for t in range(L)]).ravel()
        NV = _cdiv(Vd, BV)

        def sel(rng, n, seqs=seqs, H=H, S=S, BS=BS):
            rows = []
            for L in seqs:
                a = rng.integers(-1, _cdiv(L, BS), (L, H, S))
                a[..., 0] = (np.arange(L) // BS)[:, None]
                rows.append(a)
            return np.concatenate(rows).ravel()[:n]

        def fwd(v, c, s, seqs=seqs, H=H, G=G, K=K, Vd=Vd, BS=BS, S=S, HQ=HQ, tot=tot, cu=cu, dt=dt):
            q = v["q"].reshape(tot, HQ, K)
            k = v["k"].reshape(tot, H, K)
            vv = v["v"].reshape(tot, H, Vd)
            bi = v["block_indices"].reshape(tot, H, S).astype(np.int64)
            o = np.zeros((tot, HQ, Vd))
            lse = np.zeros((tot, HQ))
            qs = _round(dt)(q.astype(np.float32) * np.float32(s["scale"]) * LOG2E32)
            for n, L in enumerate(seqs):
                bos = cu[n]
                for t in range(L):
                    for h in range(H):
                        cols = [bos + j for i in bi[bos + t, h] if i >= 0 and i * BS <= t
                                for j in range(i * BS, min((i + 1) * BS, t + 1))]
                        sc = qs[bos + t, h * G:(h + 1) * G] @ k[cols, h].T  # base 2
                        m = sc.max(axis=1, keepdims=True)
                        p = np.exp2(sc - m)
                        l = p.sum(axis=1, keepdims=True)
                        o[bos + t, h * G:(h + 1) * G] = (p @ vv[cols, h]) / l
                        lse[bos + t, h * G:(h + 1) * G] = (m + np.log2(l))[:, 0]
            return {"o": o.ravel(), "lse": lse.ravel()}
        args = [Buf("q", dt, tot * HQ * K), Buf("k", dt, tot * H * K), Buf("v", dt, tot * H * Vd),
                Out("o", dt, tot * HQ * Vd), Out("lse", "fp32", tot * HQ), Scalar("scale", K ** -0.5, "fp32"),
                Buf("block_indices", "i32", tot * H * S, sel)]
        if batched:
            args += [Null("offsets"), Null("token_indices"), Scalar("T", Tmax)]
            grid = (Tmax, NV, len(seqs) * H)
        else:
            args += [Buf("offsets", "i32", len(cu), _fixed(cu)), Buf("token_indices", "i32", tok.size, _fixed(tok)),
                     Scalar("T", 0)]
            grid = (tot, NV, H)
        out.append(Case(f"fte nsa selected-block attention fwd {'batched' if batched else 'varlen'} "
                        f"S={S} V blocks {NV} {dt}", F, "_nsa_selected_attn_fwd_kernel", grid, args,
                        {"H": H, "HQ": HQ, "G": G, "K": K, "V": Vd, "S": S, "BS": BS, "BK": BK, "BV": BV,
                         "USE_OFFSETS": not batched},
                        tol={"fp32": (1e-3, 1e-3)}, ref=fwd))
    return out


# ---- lightning attention ------------------------------------------------------------------------


def _lightning_cases():
    out = []
    for b, h, n, d, e, BLOCK, BM, dt in ((1, 2, 50, 32, 32, 16, 16, "bf16"), (2, 1, 45, 16, 64, 32, 32, "fp16")):
        nb = _cdiv(n, BLOCK)

        def ref(v, c, s, b=b, h=h, n=n, d=d, e=e):
            q = v["Q"].reshape(b, h, n, d)
            k = v["K"].reshape(b, h, n, d)
            vv = v["V"].reshape(b, h, n, e)
            i = np.arange(n)
            diff = i[:, None] - i[None, :]
            o = np.zeros((b, h, n, e))
            for bi in range(b):
                for hi in range(h):
                    dec = np.where(diff >= 0, np.exp(-v["S"][hi] * np.maximum(diff, 0)), 0.0)
                    o[bi, hi] = ((q[bi, hi] @ k[bi, hi].T) * dec) @ vv[bi, hi]
            return {"Out": o.ravel()}
        out.append(Case(f"fte lightning attention fwd, decay, {nb} blocks {dt}", F, "_la_fwd_kernel",
                        (b * h, e // BM),
                        [Buf("Q", dt, b * h * n * d, scale=0.5), Buf("K", dt, b * h * n * d, scale=0.5),
                         Buf("V", dt, b * h * n * e), Out("Out", "fp32" if dt == "bf16" else dt, b * h * n * e),
                         Buf("S", "fp32", h, lambda rng, n_: 0.05 + 0.25 * rng.random(n_)), Scalar("n", n),
                         Scalar("NUM_BLOCK", nb)],
                        {"b": b, "h": h, "d": d, "e": e, "BLOCK": BLOCK, "BLOCK_MODEL": BM},
                        tol={"fp32": (2e-2, 2e-2), "fp16": (2e-2, 2e-2)}, ref=ref))
    return out


def cases():
    out = []
    M, N = 5, 300
    out.append(_ln_fwd_case("fte layer norm fwd residual, bias, dropout + mask fp16", "fp16", M, N, 512,
                            residual=True, res_out=True, dropout=0.25, store_mask=True))
    out.append(_ln_fwd_case("fte rms norm fwd x1, w1/b1, dropout + mask bf16", "bf16", M, N, 512, rms=True,
                            bias=False, res_out=True, dropout=0.2, store_mask=True, x1=True, w1=True, b1=True))
    out.append(_ln_fwd_case("fte rms norm fwd zero-centered weight, rowscale, residual fp32", "fp32", 6, 200, 256,
                            rms=True, bias=False, residual=True, res_out=True, rowscale=True, zc=True))
    out.append(_ln_fwd_case("fte layer norm fwd plain, w1 without b1 bf16", "bf16", 4, 130, 256, w1=True))
    out.append(_ln_bwd_case("fte layer norm bwd bias, dresidual, dropout, rowscale, recompute fp16", "fp16",
                            5, 300, 512, 2, recompute=True, dres=True, store_dres=True, dropout=0.25,
                            rowscale=True))
    out.append(_ln_bwd_case("fte rms norm bwd dual weights, dx1, dropout, zero-centered bf16", "bf16",
                            6, 200, 256, 4, rms=True, bias=False, dropout=0.2, dual=True, b1=True, dx1=True,
                            zc=True))
    out.append(_ln_bwd_case("fte layer norm bwd plain fp32", "fp32", 7, 130, 256, 3))
    out += _rotary_cases()
    out += _xent_cases()
    out += _perm_cases()
    out += _te_ce_cases()
    out += _nsa_cases()
    out += _lightning_cases()
    return out
