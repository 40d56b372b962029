#!/usr/bin/env python3
"""run_gpu.py: runs the kernels of the corpus under Triton and under tk on
the same inputs and compares what they write.

    python3 test/corpus/run_gpu.py                 # GPU: Triton vs tk (tkc -run --gpu)
    python3 test/corpus/run_gpu.py --interpret     # tk on its CPU interpreter
    python3 test/corpus/run_gpu.py -k softmax -v   # cases whose name contains "softmax"

Each case names a corpus file, a kernel, a grid, its arguments (buffers made
from a seeded generator, scalars, None) and constexprs. The inputs are
written to raw files; tk runs `tkc -run [--gpu] FILE -k KERNEL ... -o DIR
name=file:PATH:TYPE ...` and Triton imports the file (as a package module
when it lives in one) and launches the kernel (autotune and heuristics
wrappers removed, so both sides use the same constexprs) on torch tensors
built from the same bytes. Outputs are compared with tolerances by dtype.
Without Triton (no GPU here) the tk side runs on the interpreter, and cases
that carry a plain-Python reference are checked against it.

Needs only the standard library for the tk side; the Triton side needs
torch, triton (3.6) and numpy."""
import argparse
import importlib
import importlib.util
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

CORPUS = Path(__file__).resolve().parent
REPO = CORPUS.parent.parent

# ---- element types: struct format, size, torch name ----------------------------------

DTYPES = {
    "fp32": ("f", 4, "float32"), "fp16": ("e", 2, "float16"), "bf16": (None, 2, "bfloat16"),
    "fp64": ("d", 8, "float64"), "i8": ("b", 1, "int8"), "i16": ("h", 2, "int16"),
    "i32": ("i", 4, "int32"), "i64": ("q", 8, "int64"), "u8": ("B", 1, "uint8"),
}
FLOATS = {"fp32", "fp16", "bf16", "fp64"}
# (atol, rtol) for comparing a result of this dtype
TOLERANCE = {"fp32": (1e-4, 1e-4), "fp64": (1e-9, 1e-9), "fp16": (1e-2, 1e-2),
             "bf16": (3e-2, 3e-2)}


def _bf16_bits(x):
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    if math.isnan(x):
        return 0x7FC0
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def encode(values, dtype):
    fmt, size, _ = DTYPES[dtype]
    if dtype == "bf16":
        return b"".join(struct.pack("<H", _bf16_bits(float(v))) for v in values)
    if dtype in FLOATS:
        return struct.pack("<%d%s" % (len(values), fmt), *[float(v) for v in values])
    return struct.pack("<%d%s" % (len(values), fmt), *[int(v) for v in values])


def decode(data, dtype):
    fmt, size, _ = DTYPES[dtype]
    n = len(data) // size
    if dtype == "bf16":
        halves = struct.unpack("<%dH" % n, data[:2 * n])
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]
    return list(struct.unpack("<%d%s" % (n, fmt), data[:n * size]))


# ---- arguments ------------------------------------------------------------------------


class Buf:
    """A buffer argument. init: 'randn', 'rand', 'zeros', 'ones', 'arange',
    ('fill', v), ('randint', lo, hi) or a function (rng, n) -> values.
    out: compared after the launch."""

    def __init__(self, name, dtype, n, init="randn", out=False, scale=1.0):
        self.name, self.dtype, self.n, self.init, self.out, self.scale = name, dtype, n, init, out, scale

    def values(self, rng):
        i, n = self.init, self.n
        if callable(i):
            return i(rng, n)
        if i == "randn":
            return [rng.gauss(0.0, 1.0) * self.scale for _ in range(n)]
        if i == "rand":
            return [rng.random() * self.scale for _ in range(n)]
        if i == "zeros":
            return [0] * n
        if i == "ones":
            return [1] * n
        if i == "arange":
            return list(range(n))
        if i[0] == "fill":
            return [i[1]] * n
        if i[0] == "randint":
            return [rng.randrange(i[1], i[2]) for _ in range(n)]
        raise ValueError(f"unknown init {i!r}")


class Scalar:
    def __init__(self, name, value, dtype="i32"):
        self.name, self.value, self.dtype = name, value, dtype


class Null:
    """None for a parameter (a constexpr None on both sides)."""

    def __init__(self, name):
        self.name = name


class Case:
    def __init__(self, name, file, kernel, grid, args, consts=None, num_warps=4, num_stages=None,
                 tol=None, ref=None):
        self.name, self.file, self.kernel, self.grid = name, file, kernel, tuple(grid)
        self.args, self.consts = args, dict(consts or {})
        self.num_warps, self.num_stages, self.tol, self.ref = num_warps, num_stages, tol, ref

    def outputs(self):
        return [a for a in self.args if isinstance(a, Buf) and a.out]


# ---- plain-Python references (for the interpreter check) -------------------------------


def rows(xs, n_cols):
    return [xs[i:i + n_cols] for i in range(0, len(xs), n_cols)]


def ref_rmsnorm(v, c, s):
    n = s["n_cols"]
    y, rstd = [], []
    for r in rows(v["X"], n):
        rs = 1.0 / math.sqrt(sum(x * x for x in r) / n + s["eps"])
        rstd.append(rs)
        y += [x * rs * (s["offset"] + w) for x, w in zip(r, v["W"])]
    return {"Y": y, "RSTD": rstd}


def _softmax(r):
    m = max(r)
    e = [math.exp(x - m) for x in r]
    z = sum(e)
    return [x / z for x in e]


def ref_softmax(v, c, s):
    return {"out": sum((_softmax(r) for r in rows(v["inp"], s["n_cols"])), [])}


def ref_log_softmax_bwd(v, c, s):
    out = []
    for dy, y in zip(rows(v["dy"], s["n_cols"]), rows(v["y"], s["n_cols"])):
        t = sum(dy)
        out += [d - math.exp(yy) * t for d, yy in zip(dy, y)]
    return {"dx": out}


def _sig(x):
    return 1.0 / (1.0 + math.exp(-x))


def ref_swiglu(v, c, s):
    return {"c": [a * _sig(a) * b for a, b in zip(v["a"], v["b"])]}


def ref_geglu(v, c, s):
    return {"c": [0.5 * a * (1 + math.tanh(0.7978845608028654 * (a + 0.044715 * a ** 3))) * b
                  for a, b in zip(v["a"], v["b"])]}


def ref_gated_norm(v, c, s):
    n, out = s["n_cols"], []
    for x, z in zip(rows(v["X"], n), rows(v["Z"], n)):
        rs = 1.0 / math.sqrt(sum(t * t for t in x) / n + s["eps"])
        out += [t * rs * w * zz * _sig(zz) for t, w, zz in zip(x, v["W"], z)]
    return {"Y": out}


def ref_cumsum_rev(v, c, s):
    out = []
    for r in rows(v["x"], s["n_cols"]):
        acc, rr = 0.0, []
        for t in reversed(r):
            acc += t
            rr.append(acc)
        out += rr[::-1]
    return {"y": out}


def ref_recurrence(v, c, s):
    T, C = s["seq_len"], s["n_channels"]
    h = list(v["h0"])
    out = [0.0] * (T * C)
    for t in range(T):
        for ch in range(C):
            h[ch] = v["a"][t * C + ch] * h[ch] + v["x"][t * C + ch]
            out[t * C + ch] = h[ch]
    return {"h": out}


def ref_segmented(v, c, s):
    out, acc = [], 0.0
    for f, x in zip(v["flags"], v["x"]):
        acc = x if f else acc + x
        out.append(acc)
    return {"out": out}


def ref_cumprod(v, c, s):
    out, acc = [], 1.0
    for x in v["x"]:
        acc *= x
        out.append(acc)
    return {"y": out}


def ref_embedding(v, c, s):
    n = c["N"]
    return {"out": sum((v["weight"][int(i) * n:(int(i) + 1) * n] for i in v["ids"]), [])}


def ref_kv_copy(v, c, s):
    out = list(v["out"])
    per = s["head_num"] * s["head_dim"]
    for tok, dest in enumerate(v["dest"]):
        out[int(dest) * per:(int(dest) + 1) * per] = v["k"][tok * per:(tok + 1) * per]
    return {"out": out}


def ref_penalty(v, c, s):
    logits = list(v["logits"])
    cs = v["cumsum"]
    for b in range(len(cs) - 1):
        for j in range(int(cs[b]), int(cs[b + 1])):
            tok, cnt = int(v["ids"][j]), v["counts"][j]
            i = b * s["stride_b"] + tok
            x = logits[i]
            x = x / v["rep"][b] if x > 0 else x * v["rep"][b]
            logits[i] = x - cnt * v["freq"][b] - v["pres"][b]
    return {"logits": logits}


def ref_greedy(v, c, s):
    V, probs, best = s["vocab"], [], []
    for b, r in enumerate(rows(v["logits"], V)):
        m = max(r)
        best.append(r.index(m))
        e = [math.exp((x - m) / v["temp"][b]) for x in r]
        probs += [x / sum(e) for x in e]
    return {"probs": probs, "next": best}


def ref_cross_entropy(v, c, s):
    V, loss, grad = s["n_cols"], [], []
    n_non_ignore = s["n_non_ignore"]
    for r, y in zip(rows(v["X"], V), v["Y"]):
        if y == s["ignore_index"]:
            loss.append(0.0)
            grad += [0.0] * V
            continue
        m = max(r)
        lse = m + math.log(sum(math.exp(x - m) for x in r))
        loss.append((lse - r[int(y)]) / n_non_ignore)
        grad += [(math.exp(x - lse) - (1.0 if j == y else 0.0)) / n_non_ignore
                 for j, x in enumerate(r)]
    return {"loss": loss, "X": grad}


def ref_attention(v, c, s):
    H, L, D = s["H"], s["N_CTX"], c["HEAD_DIM"]
    causal = c["STAGE"] == 3
    out, lse2 = [], []
    for zh in range(s["Z"] * H):
        base = zh * L * D
        q = rows(v["Q"][base:base + L * D], D)
        k = rows(v["K"][base:base + L * D], D)
        vv = rows(v["V"][base:base + L * D], D)
        for i in range(L):
            n = i + 1 if causal else L
            sc = [sum(a * b for a, b in zip(q[i], k[j])) * s["sm_scale"] for j in range(n)]
            m = max(sc)
            e = [math.exp(x - m) for x in sc]
            z = sum(e)
            lse2.append((m + math.log(z)) / math.log(2))
            out += [sum(e[j] * vv[j][d] for j in range(n)) / z for d in range(D)]
    return {"Out": out, "M": lse2}


def ref_decode_stage1(v, c, s):
    BS, D = c["BLOCK_SEQ"], c["BLOCK_DMODEL"]
    B, QH, nblk = len(v["B_Seqlen"]), s["s_qb"] // D, s["s_mh"] // D
    KVH = s["s_kb"] // D
    mid, lse = [0.0] * (B * QH * nblk * D), [0.0] * (B * QH * nblk)
    for b in range(B):
        n = int(v["B_Seqlen"][b])
        for h in range(QH):
            q = v["Q"][(b * QH + h) * D:(b * QH + h + 1) * D]
            kvh = h // s["gqa"]
            for blk in range(nblk):
                toks = [int(v["Req_to_tokens"][int(v["B_req_idx"][b]) * s["s_rb"] + j])
                        for j in range(blk * BS, min(n, (blk + 1) * BS))]
                if not toks:
                    continue
                sc = [sum(q[d] * v["K"][(t * KVH + kvh) * D + d] for d in range(D)) * s["sm_scale"]
                      for t in toks]
                m = max(sc)
                e = [math.exp(x - m) for x in sc]
                z = sum(e)
                at = (b * QH + h) * nblk + blk
                lse[at] = m + math.log(z)
                for d in range(D):
                    mid[at * D + d] = sum(e[i] * v["V"][(t * KVH + kvh) * D + d]
                                          for i, t in enumerate(toks)) / z
    return {"Mid_O": mid, "Mid_O_LogExpSum": lse}


# ---- the cases -----------------------------------------------------------------------------


def _flags(rng, n):
    return [1 if rng.random() < 0.2 else 0 for _ in range(n)]


def _cumsum_counts(rng, n):
    return [0, 3, 7, 12][:n]


def cases():
    R, N = 4, 1000
    S = R * N
    out = []
    add = out.append

    # layernorm.py
    add(Case("layernorm fwd", "layernorm.py", "_ln_fwd", (R,),
             [Buf("X", "fp32", S), Buf("Y", "fp32", S, "zeros", out=True), Buf("W", "fp32", N, "rand"),
              Buf("B", "fp32", N), Buf("Mean", "fp32", R, "zeros", out=True),
              Buf("Rstd", "fp32", R, "zeros", out=True), Scalar("stride", N), Scalar("N", N),
              Scalar("eps", 1e-5, "fp32")], {"HAS_BIAS": True, "BLOCK_N": 1024}))
    add(Case("layernorm fwd, no bias", "layernorm.py", "_ln_fwd", (R,),
             [Buf("X", "fp16", S), Buf("Y", "fp16", S, "zeros", out=True), Buf("W", "fp16", N, "rand"),
              Null("B"), Buf("Mean", "fp32", R, "zeros", out=True),
              Buf("Rstd", "fp32", R, "zeros", out=True), Scalar("stride", N), Scalar("N", N),
              Scalar("eps", 1e-5, "fp32")], {"HAS_BIAS": False, "BLOCK_N": 1024}))
    # activations.py
    add(Case("silu*mul bf16", "activations.py", "silu_mul_kernel", (4,),
             [Buf("gate", "bf16", S), Buf("up", "bf16", S), Buf("out", "bf16", S, "zeros", out=True),
              Scalar("n", S)], {"BLOCK": 1024}))
    add(Case("gelu tanh", "activations.py", "gelu_tanh_kernel", (8,),
             [Buf("x", "fp32", S), Buf("y", "fp32", S, "zeros", out=True), Scalar("n", S)],
             {"BLOCK": 512}))
    add(Case("cross-entropy (activations.py)", "activations.py", "cross_entropy_fwd", (R,),
             [Buf("logits", "bf16", S), Buf("labels", "i64", R, ("randint", 0, N)),
              Buf("loss", "fp32", R, "zeros", out=True), Scalar("stride", N),
              Scalar("V", N), Scalar("ignore_index", -100)],
             {"BLOCK_V": 256, "HAS_SMOOTHING": False}))
    # rotary_scan.py
    add(Case("rope", "rotary_scan.py", "rope_kernel", (8,),
             [Buf("q", "fp16", 8 * 128, out=True), Buf("cos", "fp32", 4 * 64, "rand"),
              Buf("sin", "fp32", 4 * 64, "rand"), Scalar("seq_len", 4), Scalar("head_dim", 128),
              Scalar("stride_tok", 128)], {"HALF": 64, "CONJ": False}))
    add(Case("row argmax", "rotary_scan.py", "row_argmax_kernel", (R,),
             [Buf("x", "fp32", S), Buf("idx", "i32", R, "zeros", out=True), Scalar("n_cols", N),
              Scalar("stride", N)], {"BLOCK_N": 1024}))
    add(Case("cumsum and count", "rotary_scan.py", "cumsum_and_count_kernel", (1,),
             [Buf("x", "fp32", 200), Buf("s", "fp32", 200, "zeros", out=True),
              Buf("c", "i32", 200, "zeros", out=True), Scalar("n", 200)], {"BLOCK": 256}))
    # rmsnorm.py
    for mode, dt in ((0, "fp32"), (1, "bf16"), (-1, "fp16")):
        add(Case(f"rmsnorm fwd mode {mode} {dt}", "rmsnorm.py", "_rms_norm_forward_kernel", (R,),
                 [Buf("Y", dt, S, "zeros", out=True), Scalar("Y_row_stride", N), Buf("X", dt, S),
                  Scalar("X_row_stride", N), Buf("W", dt, N, "rand"),
                  Buf("RSTD", "fp32" if mode >= 0 else dt, R, "zeros", out=True),
                  Scalar("RSTD_row_stride", 1), Scalar("n_cols", N), Scalar("eps", 1e-6, "fp32"),
                  Scalar("offset", 0.0 if mode != 1 else 1.0, "fp32")],
                 {"casting_mode": mode, "BLOCK_SIZE": 1024},
                 ref=ref_rmsnorm if mode == 0 else None))
    add(Case("rmsnorm bwd", "rmsnorm.py", "_rms_norm_backward_kernel", (2,),
             [Buf("dY", "fp32", S), Scalar("dY_row_stride", N), Buf("dX", "fp32", S, "zeros", out=True),
              Scalar("dX_row_stride", N), Buf("X", "fp32", S), Scalar("X_row_stride", N),
              Buf("W", "fp32", N, "rand"), Buf("RSTD", "fp32", R, "rand"), Scalar("RSTD_row_stride", 1),
              Buf("dW", "fp32", 2 * N, "zeros", out=True), Scalar("dW_row_stride", N),
              Scalar("n_rows", R), Scalar("n_cols", N), Scalar("offset", 0.0, "fp32"),
              Scalar("rows_per_program", 2)], {"BLOCK_SIZE": 1024}))
    # softmax.py
    add(Case("softmax rows", "softmax.py", "softmax_kernel", (3,),
             [Buf("out", "fp32", S, "zeros", out=True), Buf("inp", "fp32", S),
              Scalar("input_row_stride", N), Scalar("output_row_stride", N), Scalar("n_rows", R),
              Scalar("n_cols", N)], {"BLOCK_SIZE": 1024, "num_stages": 2}, ref=ref_softmax))
    add(Case("online softmax bf16", "softmax.py", "online_softmax_kernel", (R,),
             [Buf("out", "bf16", S, "zeros", out=True), Buf("inp", "bf16", S), Scalar("stride", N),
              Scalar("n_cols", N)], {"TILE_N": 256}))
    add(Case("log-softmax bwd", "softmax.py", "log_softmax_backward_kernel", (R,),
             [Buf("dx", "fp32", S, "zeros", out=True), Buf("dy", "fp32", S), Buf("y", "fp32", S, "rand", scale=-3.0),
              Scalar("stride", N), Scalar("n_cols", N)], {"BLOCK": 1024}, ref=ref_log_softmax_bwd))
    # cross_entropy.py
    V = 3000

    def labels(rng, n):
        return [rng.randrange(0, V) if i != 2 else -100 for i in range(n)]

    add(Case("cross-entropy mean", "cross_entropy.py", "cross_entropy_kernel", (R,),
             [Buf("X", "fp32", R * V, out=True), Scalar("X_stride", V), Buf("Y", "i64", R, labels),
              Scalar("Y_stride", 1), Buf("loss", "fp32", R, "zeros", out=True), Null("z_loss_ptr"),
              Scalar("loss_stride", 1), Scalar("n_cols", V), Scalar("n_non_ignore", R - 1),
              Scalar("ignore_index", -100), Null("softcap")],
             {"lse_square_scale": 0.0, "label_smoothing": 0.0, "reduction": "mean",
              "RETURN_Z_LOSS": 0, "BLOCK_SIZE": 1024, "HAS_SOFTCAPPING": False},
             ref=ref_cross_entropy))
    add(Case("cross-entropy smoothing softcap z-loss", "cross_entropy.py", "cross_entropy_kernel", (R,),
             [Buf("X", "fp32", R * V, out=True, scale=4.0), Scalar("X_stride", V),
              Buf("Y", "i64", R, labels), Scalar("Y_stride", 1), Buf("loss", "fp32", R, "zeros", out=True),
              Buf("z_loss", "fp32", R, "zeros", out=True), Scalar("loss_stride", 1),
              Scalar("n_cols", V), Scalar("n_non_ignore", R - 1), Scalar("ignore_index", -100),
              Scalar("softcap", 3.0, "fp32")],
             {"lse_square_scale": 1e-4, "label_smoothing": 0.1, "reduction": "sum",
              "RETURN_Z_LOSS": 1, "BLOCK_SIZE": 1024, "HAS_SOFTCAPPING": True}))
    add(Case("element mul", "cross_entropy.py", "element_mul_kernel", (R,),
             [Buf("X", "fp32", S, out=True), Scalar("X_stride", N), Buf("g", "fp32", 1, ("fill", 0.5)),
              Scalar("n_cols", N)], {"BLOCK_SIZE": 256}))
    # attention.py
    Z, H, L, D = 1, 2, 96, 32
    T = Z * H * L * D
    strides = [Scalar(f"stride_{t}{a}", v) for t in "qkvo"
               for a, v in zip("zhmk" if t == "q" else "zhnk" if t == "k" else "zhkn" if t == "v" else "zhmn",
                               (H * L * D, L * D, D, 1))]
    for stage in (1, 3):
        add(Case(f"attention fwd stage {stage}", "attention.py", "_attn_fwd", (L // 32, Z * H),
                 [Buf("Q", "fp16", T), Buf("K", "fp16", T), Buf("V", "fp16", T),
                  Scalar("sm_scale", 0.5, "fp32"), Buf("M", "fp32", Z * H * L, "zeros", out=True),
                  Buf("Out", "fp16", T, "zeros", out=True)] + strides +
                 [Scalar("Z", Z), Scalar("H", H), Scalar("N_CTX", L)],
                 {"HEAD_DIM": D, "BLOCK_M": 32, "BLOCK_N": 16, "STAGE": stage},
                 tol={"fp32": (2e-3, 2e-3), "fp16": (1e-2, 1e-2)}, ref=ref_attention))
    add(Case("attention scores", "attention.py", "_attn_scores", (2, 2),
             [Buf("Q", "fp16", 64 * D), Buf("K", "fp16", 64 * D), Buf("S", "fp32", 64 * 64, "zeros", out=True),
              Scalar("stride_q", D), Scalar("stride_k", D), Scalar("stride_s", 64), Scalar("N_CTX", 60),
              Scalar("sm_scale", 0.25, "fp32")], {"HEAD_DIM": D, "BLOCK": 32},
             tol={"fp32": (2e-3, 2e-3)}))
    # decoding.py
    B, QH, KVH, HD, LEN, BS = 2, 4, 2, 32, 40, 16
    nblk = LEN // BS + 1
    add(Case("flash decoding stage 1", "decoding.py", "_fwd_kernel_flash_decode_stage1", (B, QH, nblk),
             [Buf("Q", "fp16", B * QH * HD), Buf("K", "fp16", B * LEN * KVH * HD),
              Buf("V", "fp16", B * LEN * KVH * HD), Scalar("sm_scale", HD ** -0.5, "fp32"),
              Buf("Req_to_tokens", "i32", B * LEN, "arange"), Buf("B_req_idx", "i32", B, "arange"),
              Buf("B_Seqlen", "i32", B, lambda rng, n: [LEN, LEN - 7]),
              Buf("Mid_O", "fp32", B * QH * nblk * HD, "zeros", out=True),
              Buf("Mid_O_LogExpSum", "fp32", B * QH * nblk, "zeros", out=True),
              Scalar("s_rb", LEN), Scalar("s_rs", 1), Scalar("s_qb", QH * HD), Scalar("s_qh", HD),
              Scalar("s_qd", 1), Scalar("s_kb", KVH * HD), Scalar("s_kh", HD), Scalar("s_kd", 1),
              Scalar("s_vb", KVH * HD), Scalar("s_vh", HD), Scalar("s_vd", 1),
              Scalar("s_mb", QH * nblk * HD), Scalar("s_mh", nblk * HD), Scalar("s_ms", HD),
              Scalar("s_md", 1), Scalar("s_eb", QH * nblk), Scalar("s_eh", nblk), Scalar("s_es", 1),
              Scalar("gqa", QH // KVH)], {"BLOCK_SEQ": BS, "BLOCK_DMODEL": HD, "BLOCK_N": 8},
             num_warps=1, tol={"fp32": (1e-3, 1e-3)}, ref=ref_decode_stage1))
    add(Case("flash decoding stage 2", "decoding.py", "_fwd_kernel_flash_decode_stage2", (B, QH),
             [Buf("B_Seqlen", "i32", B, lambda rng, n: [LEN, LEN - 7]),
              Buf("Mid_O", "fp32", B * QH * nblk * HD), Buf("Mid_O_LogExpSum", "fp32", B * QH * nblk),
              Buf("Out", "fp16", B * QH * HD, "zeros", out=True),
              Scalar("s_mb", QH * nblk * HD), Scalar("s_mh", nblk * HD), Scalar("s_ms", HD),
              Scalar("s_md", 1), Scalar("s_eb", QH * nblk), Scalar("s_eh", nblk), Scalar("s_es", 1),
              Scalar("s_ob", QH * HD), Scalar("s_oh", HD), Scalar("s_od", 1)],
             {"BLOCK_SEQ": BS, "BLOCK_DMODEL": HD}))
    # scans.py
    add(Case("cumsum rows reversed", "scans.py", "cumsum_rows_kernel", (R,),
             [Buf("x", "fp32", S), Buf("y", "fp32", S, "zeros", out=True), Scalar("n_cols", N),
              Scalar("stride", N)], {"REVERSE": True, "BLOCK": 256}, tol={"fp32": (1e-3, 1e-4)},
             ref=ref_cumsum_rev))
    add(Case("linear recurrence", "scans.py", "linear_recurrence_kernel", (2,),
             [Buf("a", "fp32", 50 * 24, "rand"), Buf("x", "fp32", 50 * 24), Buf("h", "fp32", 50 * 24, "zeros", out=True),
              Buf("h0", "fp32", 24), Scalar("seq_len", 50), Scalar("n_channels", 24)],
             {"BLOCK_T": 64, "BLOCK_C": 16}, ref=ref_recurrence))
    add(Case("linear recurrence, h0 None", "scans.py", "linear_recurrence_kernel", (2,),
             [Buf("a", "bf16", 50 * 24, "rand"), Buf("x", "bf16", 50 * 24), Buf("h", "bf16", 50 * 24, "zeros", out=True),
              Null("h0_ptr"), Scalar("seq_len", 50), Scalar("n_channels", 24)],
             {"BLOCK_T": 64, "BLOCK_C": 16}))
    add(Case("segmented sum", "scans.py", "segmented_sum_kernel", (1,),
             [Buf("flags", "i8", 900, _flags), Buf("x", "fp32", 900), Buf("out", "fp32", 900, "zeros", out=True),
              Scalar("n", 900)], {"BLOCK": 1024}, tol={"fp32": (1e-4, 1e-4)}, ref=ref_segmented))
    add(Case("cumprod", "scans.py", "cumprod_kernel", (4,),
             [Buf("x", "fp32", 1000, lambda rng, n: [0.9 + 0.2 * rng.random() for _ in range(n)]),
              Buf("y", "fp32", 1000, "zeros", out=True), Scalar("n", 1000)], {"BLOCK": 256},
             ref=lambda v, c, s: {"y": sum((ref_cumprod({"x": v["x"][i:i + 256]}, c, s)["y"]
                                           for i in range(0, 1000, 256)), [])}))
    # sampling.py
    VOC = 2000
    add(Case("apply penalty", "sampling.py", "_fwd_kernel_apply_penalty", (3,),
             [Buf("logits", "fp32", 3 * VOC, out=True), Buf("pres", "fp32", 3, "rand"),
              Buf("freq", "fp32", 3, "rand"), Buf("rep", "fp32", 3, lambda rng, n: [1.0 + rng.random() for _ in range(n)]),
              Buf("ids", "i32", 12, lambda rng, n: rng.sample(range(VOC), n)),
              Buf("counts", "i32", 12, ("randint", 1, 5)), Buf("cumsum", "i32", 4, _cumsum_counts),
              Scalar("stride_b", VOC), Scalar("stride_s", 1)], {"BLOCK_P": 8}, ref=ref_penalty))
    add(Case("greedy and probs", "sampling.py", "_greedy_and_probs_kernel", (3,),
             [Buf("logits", "fp32", 3 * VOC, scale=3.0), Buf("temp", "fp32", 3, lambda rng, n: [0.7, 1.0, 1.3]),
              Buf("probs", "fp32", 3 * VOC, "zeros", out=True), Buf("next", "i64", 3, "zeros", out=True),
              Scalar("vocab", VOC), Scalar("stride", VOC)], {"BLOCK_V": 2048}, ref=ref_greedy))
    add(Case("top-k probs", "sampling.py", "_top_k_probs_kernel", (3,),
             [Buf("logits", "fp32", 3 * VOC, scale=3.0), Buf("probs", "fp32", 3 * VOC, "zeros", out=True),
              Buf("thr", "fp32", 3, "zeros", out=True), Scalar("vocab", VOC), Scalar("stride", VOC),
              Scalar("top_k", 50)], {"BLOCK_V": 2048, "NUM_ITERS": 24}))
    # embedding.py
    add(Case("embedding", "embedding.py", "embedding_kernel", (6,),
             [Buf("out", "fp32", 6 * 100, "zeros", out=True), Buf("ids", "i64", 6, ("randint", 0, 50)),
              Buf("weight", "fp32", 50 * 100)], {"N": 100, "BLOCK_SIZE": 128}, ref=ref_embedding))
    add(Case("embedding + positions", "embedding.py", "embedding_position_kernel", (6,),
             [Buf("out", "bf16", 6 * 100, "zeros", out=True), Buf("ids", "i32", 6, ("randint", 0, 5)),
              Buf("weight", "bf16", 5 * 100), Buf("pos", "bf16", 3 * 100), Scalar("seq_len", 3),
              Scalar("N", 100), Scalar("padding_idx", 0), Scalar("scale", 2.0, "fp32")],
             {"BLOCK_SIZE": 128}))
    add(Case("embedding backward (atomics)", "embedding.py", "embedding_backward_kernel", (2,),
             [Buf("grad_in", "fp32", 10 * 100, "zeros", out=True), Buf("grad_out", "fp32", 30 * 100),
              Buf("ids", "i64", 30, ("randint", 0, 10)), Scalar("num_indices", 30), Scalar("N", 100)],
             {"BLOCK_N": 128, "BLOCK_I": 16}, tol={"fp32": (1e-4, 1e-5)}))
    # dropout_residual.py
    add(Case("dropout + residual + bias", "dropout_residual.py", "dropout_add_kernel", (4,),
             [Buf("x", "fp32", S), Buf("res", "fp32", S), Buf("bias", "fp32", N),
              Buf("out", "fp32", S, "zeros", out=True), Scalar("n_elements", S), Scalar("n_cols", N),
              Scalar("p", 0.25, "fp32"), Scalar("seed", 1234)], {"HAS_BIAS": True, "BLOCK_SIZE": 1024}))
    add(Case("seeded dropout rows", "dropout_residual.py", "_seeded_dropout_rows", (R,),
             [Buf("x", "fp16", S), Buf("out", "fp16", S, "zeros", out=True),
              Buf("seeds", "i32", R, ("randint", 0, 10000)), Scalar("n_cols", N), Scalar("stride", N),
              Scalar("p", 0.5, "fp32")], {"BLOCK": 1024}))
    # quant.py
    add(Case("per-token int8 quant", "quant.py", "_per_token_quant_int8", (R,),
             [Buf("x", "fp16", S), Buf("xq", "i8", S, "zeros", out=True), Buf("scale", "fp32", R, "zeros", out=True),
              Null("scale_ub_ptr"), Scalar("stride_x", N), Scalar("stride_xq", N), Scalar("N", N)],
             {"EPS": 1e-10, "BLOCK": 1024}, tol={"i8": (1, 0)}))
    add(Case("per-token int8 quant, bounded", "quant.py", "_per_token_quant_int8", (R,),
             [Buf("x", "bf16", S), Buf("xq", "i8", S, "zeros", out=True), Buf("scale", "fp32", R, "zeros", out=True),
              Buf("ub", "fp32", 1, ("fill", 1.5)), Scalar("stride_x", N), Scalar("stride_xq", N),
              Scalar("N", N)], {"EPS": 1e-10, "BLOCK": 1024}, tol={"i8": (1, 0)}))
    add(Case("int8 dequant", "quant.py", "_dequant_int8", (R,),
             [Buf("xq", "i8", S, ("randint", -127, 128)), Buf("scale", "fp32", R, "rand"),
              Buf("out", "fp16", S, "zeros", out=True), Scalar("N", N)], {"BLOCK": 1024}))
    # kv_cache.py
    add(Case("kv cache copy", "kv_cache.py", "_fwd_kernel_destindex_copy_kv", (5,),
             [Buf("k", "fp16", 5 * 4 * 96), Buf("dest", "i64", 5, lambda rng, n: rng.sample(range(12), n)),
              Buf("out", "fp16", 12 * 4 * 96, "zeros", out=True), Scalar("s_kb", 4 * 96), Scalar("s_kh", 96),
              Scalar("s_kd", 1), Scalar("s_ob", 4 * 96), Scalar("s_oh", 96), Scalar("s_od", 1),
              Scalar("head_num", 4), Scalar("head_dim", 96)], {"BLOCK_DMODEL": 128, "BLOCK_HEAD": 4},
             num_warps=1, ref=ref_kv_copy))
    add(Case("kv cache int8", "kv_cache.py", "_copy_kv_scaled", (5, 4),
             [Buf("k", "fp16", 5 * 4 * 96), Buf("v", "fp16", 5 * 4 * 96),
              Buf("dest", "i64", 5, lambda rng, n: rng.sample(range(12), n)),
              Buf("k_out", "i8", 12 * 4 * 96, "zeros", out=True), Buf("v_out", "i8", 12 * 4 * 96, "zeros", out=True),
              Buf("k_scale", "fp32", 48, "zeros", out=True), Buf("v_scale", "fp32", 48, "zeros", out=True),
              Scalar("head_num", 4), Scalar("head_dim", 96)], {"BLOCK_D": 128}, tol={"i8": (1, 0)}))
    # kernlib/ops (a package)
    add(Case("swiglu fwd bf16", "kernlib/ops/swiglu.py", "_swiglu_forward_kernel", (R,),
             [Buf("a", "fp32", S), Buf("b", "fp32", S), Buf("c", "fp32", S, "zeros", out=True),
              Scalar("stride", N)], {"n_cols": N, "BLOCK_SIZE": 1024}, ref=ref_swiglu))
    add(Case("swiglu bwd", "kernlib/ops/swiglu.py", "_swiglu_backward_kernel", (R,),
             [Buf("dc", "bf16", S), Buf("a", "bf16", S, out=True), Buf("b", "bf16", S, out=True),
              Scalar("stride", N)], {"n_cols": N, "BLOCK_SIZE": 1024}))
    add(Case("geglu fwd", "kernlib/ops/swiglu.py", "_geglu_forward_kernel", (R,),
             [Buf("a", "fp32", S), Buf("b", "fp32", S), Buf("c", "fp32", S, "zeros", out=True),
              Scalar("stride", N)], {"n_cols": N, "BLOCK_SIZE": 1024}, ref=ref_geglu))
    add(Case("gated rms norm", "kernlib/ops/gated_norm.py", "_gated_rms_norm_fwd", (R,),
             [Buf("X", "fp32", S), Buf("Z", "fp32", S), Null("R"), Buf("W", "fp32", N, "rand"),
              Buf("Y", "fp32", S, "zeros", out=True), Scalar("stride", N), Scalar("n_cols", N),
              Scalar("eps", 1e-6, "fp32")],
             {"HAS_RESIDUAL": False, "NORM_BEFORE_GATE": True, "BLOCK_N": 1024}, ref=ref_gated_norm))
    add(Case("gated rms norm, residual", "kernlib/ops/gated_norm.py", "_gated_rms_norm_fwd", (R,),
             [Buf("X", "bf16", S), Buf("Z", "bf16", S), Buf("R", "bf16", S), Buf("W", "bf16", N, "rand"),
              Buf("Y", "bf16", S, "zeros", out=True), Scalar("stride", N), Scalar("n_cols", N),
              Scalar("eps", 1e-6, "fp32")],
             {"HAS_RESIDUAL": True, "NORM_BEFORE_GATE": False, "BLOCK_N": 1024}))
    return out


# ---- running -------------------------------------------------------------------------------


def make_inputs(case):
    rng = random.Random(zlib.crc32(case.name.encode()))
    data = {}
    for a in case.args:
        if isinstance(a, Buf):
            data[a.name] = encode(a.values(rng), a.dtype)
    return data


def const_text(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, str):
        return repr(v)
    return repr(v)


def run_tk(case, inputs, tkc, gpu, workdir):
    indir = Path(workdir) / "in"
    outdir = Path(workdir) / "out"
    indir.mkdir(exist_ok=True)
    outdir.mkdir(exist_ok=True)
    cmd = [str(tkc), "-run", str(CORPUS / case.file), "-k", case.kernel,
           "--grid", ",".join(str(g) for g in case.grid), "--num-warps", str(case.num_warps),
           "-o", str(outdir), "-I", str(CORPUS)]
    if case.num_stages:
        cmd += ["--num-stages", str(case.num_stages)]
    if gpu:
        cmd.append("--gpu")
    for k, v in case.consts.items():
        cmd += ["-D", f"{k}={const_text(v)}"]
    for a in case.args:
        if isinstance(a, Null):
            cmd += ["-D", f"{a.name}=None"]
        elif isinstance(a, Scalar):
            cmd.append(f"{a.name}={a.dtype}:{a.value!r}")
        else:
            path = indir / f"{a.name}.bin"
            path.write_bytes(inputs[a.name])
            cmd.append(f"{a.name}=file:{path}:{a.dtype}")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError((p.stderr or p.stdout).strip() + "\n  command: " + " ".join(cmd))
    return {a.name: (outdir / f"{a.name}.bin").read_bytes() for a in case.outputs()}


def import_corpus_module(rel):
    """A file inside a package (a folder with __init__.py) is imported by its
    dotted name, so its relative imports work; others from their path."""
    path = (CORPUS / rel).resolve()
    parts = [path.stem]
    d = path.parent
    while (d / "__init__.py").exists():
        parts.insert(0, d.name)
        d = d.parent
    if len(parts) > 1:
        if str(d) not in sys.path:
            sys.path.insert(0, str(d))
        return importlib.import_module(".".join(parts))
    name = "tk_corpus_" + path.stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def run_triton(case, inputs):
    import torch
    import triton
    from triton.runtime.jit import JITFunction

    mod = import_corpus_module(case.file)
    kernel = getattr(mod, case.kernel)
    # autotune, heuristics and a library's own wrappers all keep the next layer in .fn
    while not isinstance(kernel, JITFunction) and hasattr(kernel, "fn"):
        kernel = kernel.fn
    tensors, args = {}, []
    for a in case.args:
        if isinstance(a, Null):
            args.append(None)
        elif isinstance(a, Scalar):
            args.append(a.value)
        else:
            t = torch.frombuffer(bytearray(inputs[a.name]), dtype=getattr(torch, DTYPES[a.dtype][2]))
            tensors[a.name] = t.to("cuda")
            args.append(tensors[a.name])
    # the arguments fill the runtime parameters in order, as tkc -run does;
    # by name, since constexpr parameters may sit between them
    runtime = [p.name for p in kernel.params if not p.is_constexpr]
    if len(runtime) != len(args):
        raise RuntimeError(f"{case.kernel} has {len(runtime)} runtime parameters, the case gives "
                           f"{len(args)}")
    opts = {"num_warps": case.num_warps}
    if case.num_stages:
        opts["num_stages"] = case.num_stages
    kernel[case.grid](**dict(zip(runtime, args)), **case.consts, **opts)
    torch.cuda.synchronize()
    return {a.name: tensors[a.name].cpu().contiguous().view(torch.uint8).numpy().tobytes()
            for a in case.outputs()}


def compare(got, want, dtype, tol):
    """(max abs error, mismatches) of got against want."""
    a = decode(got, dtype)
    b = decode(want, dtype)
    atol, rtol = tol.get(dtype, TOLERANCE.get(dtype, (0, 0)))
    worst, bad = 0.0, 0
    for x, y in zip(a, b):
        if isinstance(x, float) and (math.isnan(x) or math.isnan(y)):
            bad += not (math.isnan(x) and math.isnan(y))
            continue
        if x == y:
            continue
        err = abs(x - y)
        if math.isinf(err):
            bad += 1
            worst = err
            continue
        worst = max(worst, err)
        bad += err > atol + rtol * abs(y)
    return worst, bad + abs(len(a) - len(b))


def reference(case, inputs, outs):
    vals = {a.name: decode(inputs[a.name], a.dtype) for a in case.args if isinstance(a, Buf)}
    scal = {a.name: a.value for a in case.args if isinstance(a, Scalar)}
    want = case.ref(vals, case.consts, scal)
    return {n: encode(v, next(a.dtype for a in case.outputs() if a.name == n))
            for n, v in want.items() if n in outs}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tkc", default=os.environ.get("TKC", REPO / "build" / "tkc"),
                    help="the tkc to run (default: build/tkc)")
    ap.add_argument("--interpret", action="store_true",
                    help="run tk on its CPU interpreter (the default when triton cannot be imported)")
    ap.add_argument("-k", dest="only", default="", help="only cases whose name contains this")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each failure's details")
    args = ap.parse_args(argv)

    have_triton = False
    if not args.interpret:
        try:
            import torch  # noqa: F401
            import triton  # noqa: F401
            have_triton = torch.cuda.is_available()
        except ImportError as e:
            print(f"triton side skipped ({e}); tk runs on the interpreter")
    gpu = have_triton and not args.interpret
    if gpu:
        import torch
        print(f"device: {torch.cuda.get_device_name()}, triton {triton.__version__}, "
              f"torch {torch.__version__}")
    mode = "tk --gpu vs triton" if gpu else "tk interpreter vs plain-Python reference"
    print(f"mode: {mode}\n")

    header = f"{'case':42} {'file':26} {'output':16} {'max err':>10} {'bad':>6}  result"
    print(header)
    print("-" * len(header))
    failed = passed = unchecked = 0
    for case in cases():
        if args.only and args.only not in case.name and args.only not in case.file:
            continue
        inputs = make_inputs(case)
        outs = [a.name for a in case.outputs()]
        try:
            with tempfile.TemporaryDirectory(prefix="tkcorpus") as tmp:
                got = run_tk(case, inputs, args.tkc, gpu, tmp)
            if gpu:
                want = run_triton(case, inputs)
            elif case.ref:
                want = reference(case, inputs, outs)
            else:
                want = None
        except Exception as e:  # a failure of either side is a result of the case
            failed += 1
            print(f"{case.name:42} {case.file:26} {'-':16} {'-':>10} {'-':>6}  ERROR")
            if args.verbose:
                print("    " + str(e).replace("\n", "\n    "))
            continue
        if want is None:
            unchecked += 1
            print(f"{case.name:42} {case.file:26} {','.join(outs):16} {'-':>10} {'-':>6}  ran (no reference)")
            continue
        for a in case.outputs():
            if a.name not in want:
                continue
            worst, bad = compare(got[a.name], want[a.name], a.dtype, case.tol or {})
            ok = bad == 0
            passed += ok
            failed += not ok
            print(f"{case.name:42} {case.file:26} {a.name + ':' + a.dtype:16} {worst:10.3g} "
                  f"{bad:6d}  {'ok' if ok else 'MISMATCH'}")
    print(f"\n{passed} outputs match, {failed} failed, {unchecked} cases ran without a reference")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
