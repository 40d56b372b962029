"""Cases of the tritonbench-, HSTU-, cut-cross-entropy- and grouped-GEMM-style
kernels in tritonbench_cce_style.py with their float64 numpy references;
each reference takes (v, c, s) as corpus_refs.py describes. Every case name
starts with "tb "."""
import numpy as np

import corpus_refs as R_
from corpus_cases import Buf, Case, Null, Out, Scalar
from corpus_cases_flaggems import _bf16, _f16

F = "tritonbench_cce_style.py"
DOT_TOL = {"fp32": (2e-2, 2e-2)}  # fp32 tl.dot runs as tf32 on the GPU


def _cdiv(a, b):
    return -(-a // b)


def _f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


def _round(dt):
    return {"fp16": _f16, "bf16": _bf16, "fp32": _f32}[dt]


def _fixed(arr):
    arr = np.asarray(arr)
    return lambda rng, n: arr[:n].astype(np.float64) if arr.dtype.kind == "f" else arr[:n].astype(np.int64)


def _offsets(lens):
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)


def _silu(x):
    return x / (1.0 + np.exp(-x))


# ---- jagged reductions ---------------------------------------------------------------------------


def jagged_reduce(lens, M, kind):
    off = _offsets(lens)

    def ref(v, c, s):
        x = v["values_ptr"].reshape(-1, M)
        out = v["out_ptr"].copy()
        if kind in ("sum", "mean"):
            o = out.reshape(len(lens), M)
            for b in range(len(lens)):
                seg = x[off[b]:off[b + 1]]
                o[b] = seg.sum(0) if kind == "sum" else (seg.mean(0) if len(seg) else 0.0)
            return {"out_ptr": out}
        o = out.reshape(-1, M)
        for b in range(len(lens)):
            seg = x[off[b]:off[b + 1]]
            if not len(seg):
                continue
            if kind == "softmax":
                e = np.exp(seg - seg.max(0))
                o[off[b]:off[b + 1]] = e / e.sum(0)
            else:
                mu = seg.mean()
                o[off[b]:off[b + 1]] = (seg - mu) / np.sqrt(((seg - mu) ** 2).mean() + s["eps"])
        return {"out_ptr": out}
    return ref


def padded_dense(lens, M, L):
    off = _offsets(lens)

    def ref(v, c, s):
        x = v["values_ptr"].reshape(-1, M)
        d = np.full((len(lens), L, M), s["padding_value"])
        for b, n in enumerate(lens):
            k = min(n, L)
            d[b, :k] = x[off[b]:off[b] + k]
        return {"dense_ptr": d.ravel()}
    return ref


# ---- HSTU ------------------------------------------------------------------------------------------


def hstu_attn(lens, targets, H, DQ, DV, vdt):
    off = _offsets(lens)
    rnd = _round(vdt)

    def ref(v, c, s):
        q = v["Q"].reshape(-1, H, DQ)
        k = v["K"].reshape(-1, H, DQ)
        vv = v["V"].reshape(-1, H, DV)
        out = v["Out"].reshape(-1, H, DV).copy()
        P, NB = c["MAX_POS"], c["NUM_BUCKETS"]
        inv = float(np.float32(s["inv_time_bucket_div"]))
        W = s["max_attn_len"]
        for b, n in enumerate(lens):
            if n == 0:
                continue
            t = targets[b] if c["HAS_MULTIPLE_TARGETS"] else 0
            i = np.arange(n)
            p = np.minimum(i, n - t)
            gap = p[:, None] - p[None, :]
            diag = i[:, None] == i[None, :]
            ok = ((gap > 0) if c["CAUSAL"] else (gap != 0)) | diag
            if c["HAS_MAX_ATTN_LEN"]:
                ok &= np.abs(gap) <= W
            bias = np.zeros((n, n))
            if c["USE_POS_BIAS"]:
                bias += v["PW"][np.clip(gap + P - 1, 0, 2 * P - 2)]
            if c["USE_TIME_BIAS"]:
                ts = v["TS"][off[b]:off[b + 1]]
                dlt = np.abs(ts[:, None] - ts[None, :])
                bk = np.clip(np.floor(np.log1p(dlt) * inv).astype(np.int64), 0, NB)
                bias += v["TW"][bk]
            for h in range(H):
                sc = s["alpha"] * (q[off[b]:off[b + 1], h] @ k[off[b]:off[b + 1], h].T) + bias
                pr = np.where(ok, _silu(sc) / s["MAX_SEQ_LEN"], 0.0)
                out[off[b]:off[b + 1], h] = rnd(pr) @ vv[off[b]:off[b + 1], h]
        return {"Out": out.ravel()}
    return ref


def jagged_dense_bmm(lens, K, N):
    off = _offsets(lens)

    def ref(v, c, s):
        a = v["Jagged"].reshape(-1, K)
        d = v["Dense"].reshape(len(lens), K, N)
        out = v["Out"].reshape(-1, N).copy()
        for b in range(len(lens)):
            y = a[off[b]:off[b + 1]] @ d[b]
            if c["HAS_BIAS"]:
                y = y + v["Bias"].reshape(len(lens), N)[b]
            out[off[b]:off[b + 1]] = y
        return {"Out": out.ravel()}
    return ref


# ---- gather gemv, dropout, norms ---------------------------------------------------------------------


def gather_gemv(E, M, K):
    def ref(v, c, s):
        w = v["W_ptr"].reshape(E, M, K)[int(v["idx_ptr"][0])]
        return {"out_ptr": w @ v["x_ptr"]}
    return ref


def low_mem_dropout(v, c, s):
    n, p = s["n_elements"], float(np.float32(s["p"]))
    u = R_.philox_rand(s["seed"], np.arange(n))
    out = v["out_ptr"].copy()
    out[:n] = np.where(u > p, v["x_ptr"][:n] / (1 - p), 0.0)
    return {"out_ptr": out}


def welford_ln(R, N):
    def ref(v, c, s):
        x = v["X"].reshape(R, N)
        mu = x.mean(1)
        rstd = 1 / np.sqrt(x.var(1) + s["eps"])
        y = (x - mu[:, None]) * rstd[:, None] * v["W"] + v["B"]
        return {"Y": y.ravel(), "Mean": mu, "Rstd": rstd}
    return ref


def ln_mul_dropout(R, D):
    def ref(v, c, s):
        x = v["X"].reshape(R, D)
        mu = x.mean(1)
        rstd = 1 / np.sqrt(x.var(1) + s["eps"])
        y = ((x - mu[:, None]) * rstd[:, None] * v["W"] + v["B"]) * v["U"].reshape(R, D)
        if c["TRAINING"]:
            p = float(np.float32(s["dropout_ratio"]))
            u = R_.philox_rand(s["seed"], np.arange(R * D)).reshape(R, D)
            y = np.where(u > p, y / (1 - p), 0.0)
        return {"Y": y.ravel(), "Mean": mu, "Rstd": rstd}
    return ref


# ---- cut cross-entropy --------------------------------------------------------------------------------


def _cce_logits(v, c, s, rows, D):
    e = v["E"].reshape(-1, D)[rows]
    cmat = v["C"].reshape(-1, D)
    lg = e @ cmat.T
    if c.get("HAS_SOFTCAP"):
        cap = float(np.float32(s["softcap"]))
        lg = cap * np.tanh(lg / cap)
    return lg


def _rows(v, c, B):
    return v["Valids"].astype(np.int64)[:B] if c["HAS_VALIDS"] else np.arange(B)


def cce_lse(B, D):
    def ref(v, c, s):
        lg = _cce_logits(v, c, s, _rows(v, c, B), D)
        m = lg.max(1)
        return {"LSE": m + np.log(np.exp(lg - m[:, None]).sum(1)), "Locks": np.zeros(v["Locks"].size)}
    return ref


def cce_row_max(B, D):
    def ref(v, c, s):
        return {"RowMax": _cce_logits(v, {}, s, np.arange(B), D).max(1)}
    return ref


def cce_sum_exp(B, D):
    def ref(v, c, s):
        lg = _cce_logits(v, {}, s, np.arange(B), D)
        return {"SumExp": v["SumExp"] + np.exp(lg - v["RowMax"][:, None]).sum(1)}
    return ref


def cce_neg_dot(B, D):
    def ref(v, c, s):
        rows = _rows(v, c, B)
        e = v["E"].reshape(-1, D)[rows]
        ct = v["C"].reshape(-1, D)[v["Targets"].astype(np.int64)[rows]]
        d = (e * ct).sum(1)
        if c["HAS_SOFTCAP"]:
            cap = float(np.float32(s["softcap"]))
            d = cap * np.tanh(d / cap)
        return {"Out": -d}
    return ref


def cce_backward(B, V, D, edt):
    rnd = _round(edt)

    def ref(v, c, s):
        rows = _rows(v, c, B)
        e = v["E"].reshape(-1, D)
        cm = v["C"].reshape(V, D)
        lg = e[rows] @ cm.T
        if c["HAS_SOFTCAP"]:
            cap = float(np.float32(s["softcap"]))
            capped = cap * np.tanh(lg / cap)
        else:
            capped = lg
        g = np.exp(capped - v["LSE"][:B, None])
        tgt = v["Targets"].astype(np.int64)[rows]
        g[np.arange(B), tgt] -= 1.0
        if c["FILTER_GRAD"]:
            eps = float(np.float32(s["filter_eps"]))
            BB, BV = c["BLOCK_B"], c["BLOCK_V"]
            for i in range(0, B, BB):
                for j in range(0, V, BV):
                    if np.abs(g[i:i + BB, j:j + BV]).max() < eps:
                        g[i:i + BB, j:j + BV] = 0.0
        scale = float(np.float32(s["grad_scale"]))
        if c["GRAD_IS_SCALAR"]:
            g = g * (v["dOut"][0] * scale)
        else:
            g = g * (v["dOut"][:B] * scale)[:, None]
        if c["HAS_SOFTCAP"]:
            g = g * (1.0 - (capped / cap) ** 2)
        g = rnd(g)
        dE = v["dE"].reshape(-1, D).copy()
        np.add.at(dE, rows, g @ cm)
        dC = v["dC"].reshape(V, D) + g.T @ e[rows]
        return {"dE": dE.ravel(), "dC": dC.ravel()}
    return ref


def _cce_classifier(V, D, hot, cold_scale):
    """Classifier rows: the first `hot` classes normal (scaled), the rest
    nearly zero, so their logits sit near 0 and the blocks of them (which
    hold no targets) have gradients far below filter_eps."""
    def init(rng, n):
        w = rng.standard_normal((V, D)) * 0.35
        w[hot:] *= cold_scale
        return w.ravel()
    return init


# ---- MoE grouped GEMM -----------------------------------------------------------------------------------


def grouped_fwd(sizes, N, K):
    off = _offsets(sizes)

    def ref(v, c, s):
        x = v["x_ptr"].reshape(-1, K)
        w = v["w_ptr"].reshape(len(sizes), N, K)
        y = v["y_ptr"].reshape(-1, N).copy()
        for g in range(len(sizes)):
            y[off[g]:off[g + 1]] = x[off[g]:off[g + 1]] @ w[g].T
        return {"y_ptr": y.ravel()}
    return ref


def grouped_dw(sizes, N, K):
    off = _offsets(sizes)

    def ref(v, c, s):
        x = v["x_ptr"].reshape(-1, K)
        dy = v["dy_ptr"].reshape(-1, N)
        dw = np.stack([dy[off[g]:off[g + 1]].T @ x[off[g]:off[g + 1]] for g in range(len(sizes))])
        return {"dw_ptr": dw.ravel()}
    return ref


# ---- cases ------------------------------------------------------------------------------------------------


def _jagged_cases(add):
    # jagged sum over the padded maximum length
    for lens, M, dt, odt, idt in (((5, 0, 13, 1), 40, "fp32", "fp32", "i32"), ((0, 9, 2, 16, 7), 24, "fp16", "fp32", "i64")):
        B, T, BM = len(lens), sum(lens), 16
        add(Case(f"tb jagged sum lens={lens} M={M} {dt}->{odt}", F, "_tb_jagged_sum_kernel", (B * _cdiv(M, BM),),
                 [Buf("values_ptr", dt, T * M), Buf("offsets_ptr", idt, B + 1, _fixed(_offsets(lens))),
                  Out("out_ptr", odt, B * M), Scalar("M", M), Scalar("MAX_SEQLEN", max(lens))],
                 {"BLOCK_SIZE_RAGGED": 8, "BLOCK_SIZE_M": BM}, ref=jagged_reduce(lens, M, "sum")))
    # jagged mean: the loop stops at each batch's end
    for lens, M, dt in (((0, 7, 20, 3), 33, "fp32"), ((4, 11, 0, 1), 48, "fp16")):
        B, T = len(lens), sum(lens)
        add(Case(f"tb jagged mean lens={lens} M={M} {dt}", F, "_tb_jagged_mean_kernel", (B, _cdiv(M, 16)),
                 [Buf("values_ptr", dt, T * M), Buf("offsets_ptr", "i64", B + 1, _fixed(_offsets(lens))),
                  Out("out_ptr", dt, B * M), Scalar("M", M)],
                 {"BLOCK_SIZE_RAGGED": 4, "BLOCK_SIZE_M": 16}, ref=jagged_reduce(lens, M, "mean")))
    # jagged softmax down the ragged dimension
    for lens, M, dt in (((6, 0, 17, 1), 20, "fp32"), ((3, 12, 0, 9), 40, "bf16")):
        B, T = len(lens), sum(lens)
        add(Case(f"tb jagged softmax lens={lens} M={M} {dt}", F, "_tb_jagged_softmax_kernel", (B, _cdiv(M, 16)),
                 [Buf("values_ptr", dt, T * M, scale=2.0), Buf("offsets_ptr", "i32", B + 1, _fixed(_offsets(lens))),
                  Out("out_ptr", dt, T * M), Scalar("M", M), Scalar("MAX_SEQLEN", max(lens))],
                 {"BLOCK_SIZE_RAGGED": 8, "BLOCK_SIZE_M": 16}, ref=jagged_reduce(lens, M, "softmax")))
    # jagged layer norm over each batch's whole slice
    for lens, M, BM, dt in (((9, 0, 4, 23), 24, 32, "fp32"), ((1, 14, 6), 16, 16, "fp16")):
        B, T = len(lens), sum(lens)
        add(Case(f"tb jagged layer norm lens={lens} M={M} {dt}", F, "_tb_jagged_layer_norm_kernel", (B,),
                 [Buf("values_ptr", dt, T * M, _fixed(np.random.RandomState(3).standard_normal(T * M) * 2 + 1.5)),
                  Buf("offsets_ptr", "i32", B + 1, _fixed(_offsets(lens))),
                  Out("out_ptr", dt, T * M), Scalar("M", M), Scalar("MAX_SEQLEN", max(lens)),
                  Scalar("eps", 1e-5, "fp32")],
                 {"BLOCK_SIZE_RAGGED": 8, "BLOCK_SIZE_M": BM}, ref=jagged_reduce(lens, M, "ln")))
    # jagged to padded dense: short batches padded, a long one cut at MAX_LEN
    for lens, M, L, dt in (((3, 0, 12, 7), 20, 8, "fp32"), ((5, 9, 0), 70, 10, "bf16")):
        B, T = len(lens), sum(lens)
        add(Case(f"tb jagged to padded dense lens={lens} max_len={L} {dt}", F, "_tb_jagged_to_padded_dense_kernel",
                 (B, _cdiv(L, 4)),
                 [Buf("values_ptr", dt, T * M), Buf("offsets_ptr", "i64", B + 1, _fixed(_offsets(lens))),
                  Out("dense_ptr", dt, B * L * M), Scalar("M", M), Scalar("MAX_LEN", L),
                  Scalar("padding_value", -1.5, "fp32")],
                 {"BLOCK_L": 4, "BLOCK_M": 32}, ref=padded_dense(lens, M, L)))


def _hstu_cases(add):
    rs = np.random.RandomState(11)
    variants = (
        # lens, targets, H, DQ, DV, dtype, causal, targets on, max_attn_len, pos bias, time bias
        ((20, 0, 37, 5), (3, 0, 5, 0), 2, 24, 40, "bf16", True, True, 0, True, True),
        ((13, 30, 0), None, 1, 32, 32, "fp16", True, False, 6, False, False),
        ((9, 0, 26), (2, 0, 4), 2, 16, 24, "fp16", False, True, 0, True, True),
    )
    for lens, tg, H, DQ, DV, dt, causal, has_t, W, pb, tb in variants:
        B, T = len(lens), sum(lens)
        MAXL = max(lens)
        BM, BN = 16, 16
        ts = np.concatenate([np.sort(rs.randint(0, 1500, n)) for n in lens])
        P, NB = 8, 12
        what = (f"{'causal' if causal else 'full'} {'targets ' if has_t else ''}"
                f"{'max_attn_len=%d ' % W if W else ''}{'pos ' if pb else ''}{'time ' if tb else ''}{dt}")
        add(Case(f"tb hstu ragged attention lens={lens} {what}", F, "_hstu_ragged_attn_fwd_kernel",
                 (_cdiv(MAXL, BM), B * H),
                 [Buf("Q", dt, T * H * DQ), Buf("K", dt, T * H * DQ), Buf("V", dt, T * H * DV),
                  Buf("seq_offsets", "i64", B + 1, _fixed(_offsets(lens))),
                  Buf("num_targets", "i32", B, _fixed(tg)) if has_t else Null("num_targets"),
                  Buf("TS", "i32", T, _fixed(ts)), Buf("PW", "fp32", 2 * P - 1, scale=0.5),
                  Buf("TW", "fp32", NB + 1, scale=0.5), Out("Out", dt, T * H * DV),
                  Scalar("stride_qm", H * DQ), Scalar("stride_qh", DQ), Scalar("stride_kn", H * DQ),
                  Scalar("stride_kh", DQ), Scalar("stride_vn", H * DV), Scalar("stride_vh", DV),
                  Scalar("stride_om", H * DV), Scalar("stride_oh", DV), Scalar("alpha", 0.4, "fp32"),
                  Scalar("H", H), Scalar("MAX_SEQ_LEN", MAXL), Scalar("AUTOTUNE_MAX_SEQ_LEN", 64),
                  Scalar("max_attn_len", W), Scalar("inv_time_bucket_div", 2.2, "fp32"),
                  Scalar("DimQ", DQ), Scalar("DimV", DV)],
                 {"MAX_POS": P, "NUM_BUCKETS": NB, "CAUSAL": causal, "HAS_MULTIPLE_TARGETS": has_t,
                  "HAS_MAX_ATTN_LEN": W > 0, "USE_POS_BIAS": pb, "USE_TIME_BIAS": tb,
                  "BLOCK_D_Q": 32, "BLOCK_D_V": max(32, 1 << (DV - 1).bit_length()), "BLOCK_M": BM, "BLOCK_N": BN},
                 tol={dt: (2e-2, 2e-2)}, ref=hstu_attn(lens, tg, H, DQ, DV, dt)))
    # LN * u then dropout
    for R, D, dt, train in ((6, 100, "fp32", True), (5, 64, "bf16", False)):
        add(Case(f"tb hstu layer norm mul dropout {'training' if train else 'eval'} D={D} {dt}", F,
                 "_hstu_ln_mul_dropout_fwd_kernel", (R,),
                 [Buf("X", dt, R * D), Buf("U", dt, R * D), Out("Y", dt, R * D), Buf("W", "fp32", D, "rand"),
                  Buf("B", "fp32", D), Out("Mean", "fp32", R), Out("Rstd", "fp32", R), Scalar("D", D),
                  Scalar("eps", 1e-5, "fp32"), Scalar("dropout_ratio", 0.3, "fp32"), Scalar("stride_x", D),
                  Scalar("stride_u", D), Scalar("stride_y", D), Scalar("seed", 2024)],
                 {"TRAINING": train, "BLOCK_D": 1 << (D - 1).bit_length()},
                 ref_tol={"fp32": (1e-4, 1e-3)}, ref=ln_mul_dropout(R, D)))


def _dense_cases(add):
    # jagged x dense + bias
    for lens, K, N, dt, bias in (((0, 19, 40, 7), 40, 24, "bf16", True), ((11, 3, 0, 25), 20, 36, "fp32", False)):
        B, T = len(lens), sum(lens)
        add(Case(f"tb jagged dense bmm lens={lens} K={K} N={N} {'bias ' if bias else ''}{dt}", F,
                 "_tb_jagged_dense_bmm_broadcast_add_kernel", (_cdiv(max(lens), 16), _cdiv(N, 16), B),
                 [Buf("seq_offsets", "i32", B + 1, _fixed(_offsets(lens))), Buf("Jagged", dt, T * K),
                  Buf("Dense", dt, B * K * N), Buf("Bias", dt, B * N), Out("Out", dt, T * N),
                  Scalar("AUTOTUNE_MAX_SEQ_LEN", 64), Scalar("N", N), Scalar("K", K), Scalar("stride_jm", K),
                  Scalar("stride_db", K * N), Scalar("stride_dk", N), Scalar("stride_dn", 1), Scalar("stride_bias_b", N),
                  Scalar("stride_om", N)],
                 {"HAS_BIAS": bias, "ALLOW_TF32": False, "BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16},
                 tol=DOT_TOL if dt == "fp32" else None, ref=jagged_dense_bmm(lens, K, N)))
    # gather gemv
    for E, M, K, wdt, odt, BM, BK in ((3, 50, 300, "fp16", "fp16", 16, 64), (4, 33, 129, "bf16", "fp32", 32, 128)):
        add(Case(f"tb gather gemv E={E} M={M} K={K} {wdt}->{odt}", F, "_tb_gather_gemv_kernel", (_cdiv(M, BM),),
                 [Buf("W_ptr", wdt, E * M * K), Buf("x_ptr", wdt, K), Buf("idx_ptr", "i64", 1, _fixed([E - 2])),
                  Out("out_ptr", odt, M), Scalar("M", M), Scalar("K", K), Scalar("stride_we", M * K),
                  Scalar("stride_wm", K)],
                 {"BLOCK_SIZE_M": BM, "BLOCK_SIZE_K": BK}, ref_tol={"fp32": (1e-3, 1e-3)}, ref=gather_gemv(E, M, K)))
    # low-memory dropout
    for n, p, seed in ((1000, 0.3, 123), (777, 0.75, 3000000000)):
        add(Case(f"tb low mem dropout n={n} p={p}", F, "_tb_low_mem_dropout_kernel", (_cdiv(n, 256),),
                 [Buf("x_ptr", "fp32", n), Out("out_ptr", "fp32", _cdiv(n, 256) * 256), Scalar("n_elements", n),
                  Scalar("p", p, "fp32"), Scalar("seed", seed, "i64" if seed >= 2 ** 31 else "i32")],
                 {"BLOCK_SIZE": 256}, ref=low_mem_dropout))
    # welford layer norm
    for R, N, BS, dt in ((5, 300, 64, "fp32"), (3, 1000, 256, "bf16")):
        add(Case(f"tb welford layer norm N={N} BLOCK={BS} {dt}", F, "_tb_welford_layer_norm_fwd_kernel", (R,),
                 [Buf("X", dt, R * N, _fixed(np.random.RandomState(5).standard_normal(R * N) * 3 + 40.0)),
                  Out("Y", dt, R * N), Buf("W", "fp32", N, "rand"), Buf("B", "fp32", N), Out("Mean", "fp32", R),
                  Out("Rstd", "fp32", R), Scalar("stride", N), Scalar("N", N), Scalar("eps", 1e-5, "fp32")],
                 {"BLOCK_SIZE": BS}, ref_tol={"fp32": (1e-4, 1e-3)}, ref=welford_ln(R, N)))


def _cce_cases(add):
    # forward log-sum-exp under locks
    for B, BT, V, D, dt, valids, cap, BD in ((37, 50, 300, 40, "fp16", True, None, 16),
                                             (40, 40, 200, 64, "bf16", False, 20.0, 32)):
        BB, BV = 16, 64
        nbb = _cdiv(B, BB)
        vid = np.sort(np.random.RandomState(9).choice(BT, B, replace=False))
        add(Case(f"tb cce lse forward locks B={B} V={V} D={D} {'valids ' if valids else ''}"
                 f"{'softcap ' if cap else ''}{dt}", F, "_cce_lse_forward_kernel", (nbb * _cdiv(V, BV),),
                 [Buf("E", dt, BT * D), Buf("C", dt, V * D, scale=0.5), Buf("LSE", "fp32", B, ("fill", -np.inf), out=True),
                  Buf("Locks", "i32", nbb, "zeros", out=True),
                  Buf("Valids", "i64", B, _fixed(vid)) if valids else Null("Valids"),
                  Scalar("softcap", cap, "fp32") if cap else Null("softcap"),
                  Scalar("B", B), Scalar("V", V), Scalar("D", D), Scalar("stride_eb", D), Scalar("stride_ed", 1),
                  Scalar("stride_cv", D), Scalar("stride_cd", 1), Scalar("stride_lse", 1), Scalar("stride_vb", 1)],
                 {"BLOCK_B": BB, "BLOCK_V": BV, "BLOCK_D": BD, "GROUP_B": 2, "HAS_VALIDS": valids,
                  "HAS_SOFTCAP": cap is not None, "EVEN_D": D % BD == 0},
                 tol={"fp32": (2e-3, 2e-3)}, ref=cce_lse(B, D)))
    # two-pass lock-free form
    B, V, D = 30, 150, 24
    args = [Buf("E", "bf16", B * D), Buf("C", "bf16", V * D, scale=0.5)]
    add(Case("tb cce row max atomic_max pass", F, "_cce_row_max_kernel", (_cdiv(B, 16), _cdiv(V, 32)),
             args + [Buf("RowMax", "fp32", B, ("fill", -np.inf), out=True), Scalar("B", B), Scalar("V", V)],
             {"D": D, "BLOCK_B": 16, "BLOCK_V": 32, "BLOCK_D": 16}, tol={"fp32": (2e-3, 2e-3)}, ref=cce_row_max(B, D)))
    add(Case("tb cce sum exp atomic_add pass", F, "_cce_sum_exp_kernel", (_cdiv(B, 16), _cdiv(V, 32)),
             args + [Buf("RowMax", "fp32", B, lambda rng, n: 2.0 + rng.random(n)),
                     Buf("SumExp", "fp32", B, "zeros", out=True), Scalar("B", B), Scalar("V", V)],
             {"D": D, "BLOCK_B": 16, "BLOCK_V": 32, "BLOCK_D": 16}, tol={"fp32": (2e-3, 2e-3)}, ref=cce_sum_exp(B, D)))
    # indexed dot E[i] . C[target[i]]
    for B, BT, V, D, dt, valids, cap in ((29, 41, 90, 72, "fp16", True, None), (20, 20, 64, 33, "bf16", False, 2.5)):
        vid = np.sort(np.random.RandomState(4).choice(BT, B, replace=False))
        add(Case(f"tb cce indexed neg dot D={D} {'valids ' if valids else ''}{'softcap ' if cap else ''}{dt}", F,
                 "_cce_indexed_neg_dot_kernel", (_cdiv(B, 16),),
                 [Buf("E", dt, BT * D), Buf("C", dt, V * D, scale=0.5), Buf("Targets", "i64", BT, ("randint", 0, V)),
                  Buf("Valids", "i32", B, _fixed(vid)) if valids else Null("Valids"), Out("Out", "fp32", B),
                  Scalar("softcap", cap, "fp32") if cap else Null("softcap"), Scalar("B", B), Scalar("D", D),
                  Scalar("stride_eb", D), Scalar("stride_cv", D)],
                 {"BLOCK_B": 16, "BLOCK_D": 32, "HAS_VALIDS": valids, "HAS_SOFTCAP": cap is not None},
                 ref_tol={"fp32": (1e-4, 1e-3)}, ref=cce_neg_dot(B, D)))
    # backward with dE/dC atomics
    variants = (
        # B, BT, V, D, dtype, valids, softcap, scalar grad, filter
        (21, 30, 200, 40, "fp16", True, None, False, False),
        (24, 24, 256, 32, "bf16", False, 15.0, True, True),
    )
    for B, BT, V, D, dt, valids, cap, scalar, filt in variants:
        BB, BV, BD = 16, 64, 16
        hot = 96
        vid = np.sort(np.random.RandomState(8).choice(BT, B, replace=False))
        add(Case(f"tb cce backward B={B} V={V} D={D} {'valids ' if valids else ''}{'softcap ' if cap else ''}"
                 f"{'scalar grad ' if scalar else ''}{'filter_eps ' if filt else ''}{dt}", F, "_cce_backward_kernel",
                 (_cdiv(B, BB), _cdiv(V, BV)),
                 [Buf("E", dt, BT * D, scale=0.5), Buf("C", dt, V * D, _cce_classifier(V, D, hot, 0.02)),
                  Buf("LSE", "fp32", B, lambda rng, n: np.log(V) + 0.2 * rng.random(n)),
                  Buf("dOut", "fp32", 1 if scalar else B, "rand"), Scalar("grad_scale", 0.5, "fp32"),
                  Buf("Valids", "i64", B, _fixed(vid)) if valids else Null("Valids"),
                  Buf("Targets", "i64", BT, ("randint", 0, hot)),
                  Scalar("softcap", cap, "fp32") if cap else Null("softcap"),
                  Buf("dE", "fp32", BT * D, "zeros", out=True), Buf("dC", "fp32", V * D, "zeros", out=True),
                  Scalar("B", B), Scalar("V", V), Scalar("D", D), Scalar("grad_stride", 0 if scalar else 1),
                  Scalar("filter_eps", 0.01, "fp32")],
                 {"BLOCK_B": BB, "BLOCK_V": BV, "BLOCK_D": BD, "HAS_VALIDS": valids, "HAS_SOFTCAP": cap is not None,
                  "GRAD_IS_SCALAR": scalar, "FILTER_GRAD": filt},
                 tol={"fp32": (2e-3, 2e-3)}, ref=cce_backward(B, V, D, dt)))


def _moe_cases(add):
    # with TMA the row strides (K and N fp16 elements) are multiples of 16 bytes, so every expert's base is aligned
    for sizes, N, K, dt, sms, tma in (((5, 0, 33, 17), 48, 40, "bf16", 3, False),
                                      ((0, 16, 1, 40, 0), 40, 64, "fp16", 4, False),
                                      ((8, 0, 24, 13, 40), 40, 72, "fp16", 5, True)):
        T, BM, BN, BK = sum(sizes), 16, 32, 16 if not tma else 32
        G = len(sizes)
        add(Case(f"tb moe grouped gemm persistent {'tma ' if tma else ''}m_sizes={sizes} N={N} K={K} {dt}", F,
                 "_mg_grouped_gemm_fwd_kernel", (sms,),
                 [Buf("x_ptr", dt, T * K), Buf("w_ptr", dt, G * N * K, scale=0.3), Out("y_ptr", dt, T * N),
                  Buf("m_sizes", "i32", G, _fixed(sizes))],
                 {"G": G, "N": N, "K": K, "NUM_SMS": sms, "BLOCK_M": BM, "BLOCK_N": BN, "BLOCK_K": BK,
                  "USE_TMA": tma},
                 tol={dt: (2e-2, 2e-2)}, ref=grouped_fwd(sizes, N, K)))
    for sizes, N, K, dt in (((7, 0, 29, 16), 24, 40, "bf16"),):
        T, G = sum(sizes), len(sizes)
        BN, BK = 16, 32
        add(Case(f"tb moe grouped gemm dw m_sizes={sizes} N={N} K={K} {dt}", F, "_mg_grouped_gemm_dw_kernel",
                 (G, _cdiv(N, BN) * _cdiv(K, BK)),
                 [Buf("x_ptr", dt, T * K), Buf("dy_ptr", dt, T * N, scale=0.3), Out("dw_ptr", "fp32", G * N * K),
                  Buf("m_sizes", "i32", G, _fixed(sizes)), Scalar("G", G)],
                 {"N": N, "K": K, "BLOCK_M": 16, "BLOCK_N": BN, "BLOCK_K": BK},
                 tol={"fp32": (2e-3, 2e-3)}, ref=grouped_dw(sizes, N, K)))


def cases():
    out = []
    add = out.append
    _jagged_cases(add)
    _hstu_cases(add)
    _dense_cases(add)
    _cce_cases(add)
    _moe_cases(add)
    return out
