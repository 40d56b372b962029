"""corpus_cases.py: the launches run_gpu.py makes of the corpus kernels.

Each Case names a corpus file, a kernel, a grid, its arguments in the order
of the kernel's runtime parameters (buffers, scalars, None, tuples) and the
constexprs; both sides (Triton and tk) get the same bytes. Out(...) is a
buffer the kernel only writes: it starts poisoned (NaN, or 0xA5 bytes for
integers) on both sides, so an element one side writes and the other does
not is a mismatch. Buf(..., out=True) is read and written (in place, or
accumulated by atomics) and starts from its init. tol overrides the
(atol, rtol) of a dtype for every comparison, ref_tol for the comparison
with the float64 reference only (the kernels round in float32 where the
reference does not). gpu_only (a reason) marks a case that only a GPU can
run (inline PTX): run_gpu.py skips it on the interpreters. launch_pdl asks
for programmatic dependent launch on both sides (launch_pdl=True under
Triton; tkc -run --launch-pdl where this tkc has the option)."""
import glob
import importlib
import os

import numpy as np

import corpus_refs as R_

# (atol, rtol) by dtype; integers compare exactly unless a case says otherwise
TOLERANCE = {"fp32": (1e-4, 1e-4), "fp64": (1e-9, 1e-9), "fp16": (1e-2, 1e-2),
             "bf16": (3e-2, 3e-2)}


class Buf:
    """A buffer argument. init: 'randn', 'rand', 'zeros', 'ones', 'arange',
    ('fill', v), ('randint', lo, hi), 'poison', or a function (rng, n) ->
    array; scale multiplies randn and rand."""

    def __init__(self, name, dtype, n, init="randn", out=False, scale=1.0):
        self.name, self.dtype, self.n, self.init, self.out, self.scale = name, dtype, n, init, out, scale

    def values(self, rng):
        i, n = self.init, self.n
        if callable(i):
            return np.asarray(i(rng, n))
        if i == "randn":
            return rng.standard_normal(n) * self.scale
        if i == "rand":
            return rng.random(n) * self.scale
        if i in ("zeros", "poison"):
            return np.zeros(n)
        if i == "ones":
            return np.ones(n)
        if i == "arange":
            return np.arange(n)
        if i[0] == "fill":
            return np.full(n, i[1])
        if i[0] == "randint":
            return rng.integers(i[1], i[2], n)
        raise ValueError(f"unknown init {i!r}")


def Out(name, dtype, n):
    """A buffer the kernel only writes; starts poisoned."""
    return Buf(name, dtype, n, "poison", out=True)


class Desc(Buf):
    """A buffer passed as a tensor descriptor built on the host (Triton's
    TensorDescriptor.from_tensor(t.view(shape), block)): row-major, so its
    strides follow the shape."""

    def __init__(self, name, dtype, shape, block, init="randn", out=False):
        n = 1
        for d in shape:
            n *= d
        super().__init__(name, dtype, n, init, out)
        self.shape, self.block = tuple(shape), tuple(block)


def DescOut(name, dtype, shape, block):
    """A descriptor the kernel only writes through; its buffer starts poisoned."""
    return Desc(name, dtype, shape, block, "poison", out=True)


class Scalar:
    def __init__(self, name, value, dtype="i32"):
        self.name, self.value, self.dtype = name, value, dtype


class Null:
    """None for a parameter (a constexpr None on both sides)."""

    def __init__(self, name):
        self.name = name


class Tuple:
    """A tuple argument (Triton's tuple parameters): its items are Bufs,
    Scalars, Nulls and Tuples, in order. Triton gets a Python tuple; tkc -run
    gets name=(item,...), each buffer item under its own name."""

    def __init__(self, name, items):
        self.name, self.items = name, list(items)


def leaves(args):
    """The arguments with the items of their tuples, depth first."""
    for a in args:
        if isinstance(a, Tuple):
            yield from leaves(a.items)
        else:
            yield a


class Case:
    def __init__(self, name, file, kernel, grid, args, consts=None, num_warps=4, num_stages=None,
                 tol=None, ref_tol=None, ref=None, gpu_only=None, launch_pdl=False,
                 beyond_triton=None):
        self.name, self.file, self.kernel, self.grid = name, file, kernel, tuple(grid)
        self.gpu_only, self.launch_pdl = gpu_only, launch_pdl
        # why Triton 3.6 cannot run the case on a Hopper GPU (it fails to
        # compile it); tk's GPU result is then checked against the reference
        self.beyond_triton = beyond_triton
        self.args, self.consts = args, dict(consts or {})
        self.num_warps, self.num_stages, self.ref = num_warps, num_stages, ref
        self.tol, self.ref_tol = dict(tol or {}), dict(ref_tol or {})

    def outputs(self):
        return [a for a in leaves(self.args) if isinstance(a, Buf) and a.out]

    def buffers(self):
        return [a for a in leaves(self.args) if isinstance(a, Buf)]

    def tolerance(self, dtype, against_ref):
        t = {**self.tol, **self.ref_tol} if against_ref else self.tol
        return t.get(dtype, TOLERANCE.get(dtype, (0, 0)))


def _flags(rng, n):
    return (rng.random(n) < 0.2).astype(np.int64)


def _cumsum_counts(rng, n):
    return np.array([0, 3, 7, 12][:n])


def _distinct(hi):
    """n distinct integers below hi."""
    return lambda rng, n: rng.choice(hi, n, replace=False)


def _values(*xs):
    return lambda rng, n: np.array(xs[:n], dtype=np.float64)


def _bit_patterns(rng, n):
    """Non-negative int32 values with every bit count: zero, powers of two,
    all ones, random words."""
    v = rng.integers(0, 2**31 - 1, n)
    v[:32] = [0, 1, 2**31 - 1] + [1 << k for k in range(2, 31)]
    return v


def _some_zeros(rng, n):
    """Normal values over a wide range, one in twenty exactly zero."""
    return np.where(rng.random(n) < 0.05, 0.0, rng.standard_normal(n) * 50.0)


def _pairs(rng, n):
    """Values in [0, 1), each repeated for the two elements of a pair."""
    return np.repeat(rng.random(n // 2), 2)


def _b15_inputs(rng, n):
    """fp32 values that the fp8e4b15 quantiser (which halves them) meets at
    each tie between neighbouring codes and one fp32 step either side
    (truncated to fp16 first, just below a tie rounds down), values it
    clamps, infinities and NaN, then normal values."""
    codes = np.arange(0x7F)
    vals = R_.fp8e4b15_decode(codes)
    ties = ((vals[:-1] + vals[1:]) / 2).astype(np.float32)
    near = np.concatenate([ties, np.nextafter(ties, np.float32(0)), np.nextafter(ties, np.float32(2))])
    special = np.array([0.0, -0.0, 1.8, -1.8125, 100.0, np.inf, -np.inf, np.nan], dtype=np.float32)
    x = np.concatenate([special, near * np.where(np.arange(near.size) % 2, -1, 1)]) * 2
    return np.concatenate([x, rng.standard_normal(n) * 3.0])[:n]


def _zero_groups(rng, n):
    """Normal values with some groups of four all zero."""
    x = rng.standard_normal(n)
    x.reshape(-1, 4)[rng.random(n // 4) < 0.1] = 0.0
    return x


def cases():
    R, N = 4, 1000
    S = R * N
    out = []
    add = out.append

    # layernorm.py
    add(Case("layernorm fwd", "layernorm.py", "_ln_fwd", (R,),
             [Buf("X", "fp32", S), Out("Y", "fp32", S), Buf("W", "fp32", N, "rand"),
              Buf("B", "fp32", N), Out("Mean", "fp32", R),
              Out("Rstd", "fp32", R), Scalar("stride", N), Scalar("N", N),
              Scalar("eps", 1e-5, "fp32")], {"HAS_BIAS": True, "BLOCK_N": 1024}, ref=R_.ln_fwd))
    add(Case("layernorm fwd, no bias", "layernorm.py", "_ln_fwd", (R,),
             [Buf("X", "fp16", S), Out("Y", "fp16", S), Buf("W", "fp16", N, "rand"),
              Null("B"), Out("Mean", "fp32", R),
              Out("Rstd", "fp32", R), Scalar("stride", N), Scalar("N", N),
              Scalar("eps", 1e-5, "fp32")], {"HAS_BIAS": False, "BLOCK_N": 1024}, ref=R_.ln_fwd))
    # activations.py
    add(Case("silu*mul bf16", "activations.py", "silu_mul_kernel", (4,),
             [Buf("gate", "bf16", S), Buf("up", "bf16", S), Out("out", "bf16", S),
              Scalar("n", S)], {"BLOCK": 1024}, ref=R_.silu_mul))
    add(Case("gelu tanh", "activations.py", "gelu_tanh_kernel", (8,),
             [Buf("x", "fp32", S), Out("y", "fp32", S), Scalar("n", S)],
             {"BLOCK": 512}, ref=R_.gelu))
    add(Case("cross-entropy (activations.py)", "activations.py", "cross_entropy_fwd", (R,),
             [Buf("logits", "bf16", S), Buf("labels", "i64", R, ("randint", 0, N)),
              Out("loss", "fp32", R), Scalar("stride", N),
              Scalar("V", N), Scalar("ignore_index", -100)],
             {"BLOCK_V": 256, "HAS_SMOOTHING": False}, ref=R_.cross_entropy_fwd))
    # rotary_scan.py
    add(Case("rope", "rotary_scan.py", "rope_kernel", (8,),
             [Buf("q", "fp16", 8 * 128, out=True), Buf("cos", "fp32", 4 * 64, "rand"),
              Buf("sin", "fp32", 4 * 64, "rand"), Scalar("seq_len", 4), Scalar("head_dim", 128),
              Scalar("stride_tok", 128)], {"HALF": 64, "CONJ": False}, ref=R_.rope))
    add(Case("row argmax", "rotary_scan.py", "row_argmax_kernel", (R,),
             [Buf("x", "fp32", S), Out("idx", "i32", R), Scalar("n_cols", N),
              Scalar("stride", N)], {"BLOCK_N": 1024}, ref=R_.row_argmax))
    add(Case("cumsum and count", "rotary_scan.py", "cumsum_and_count_kernel", (1,),
             [Buf("x", "fp32", 200), Out("s", "fp32", 200),
              Out("c", "i32", 200), Scalar("n", 200)], {"BLOCK": 256},
             tol={"fp32": (1e-4, 1e-4)}, ref=R_.cumsum_and_count))
    # rmsnorm.py
    for mode, dt in ((0, "fp32"), (1, "bf16"), (-1, "fp16")):
        add(Case(f"rmsnorm fwd mode {mode} {dt}", "rmsnorm.py", "_rms_norm_forward_kernel", (R,),
                 [Out("Y", dt, S), Scalar("Y_row_stride", N), Buf("X", dt, S),
                  Scalar("X_row_stride", N), Buf("W", dt, N, "rand"),
                  Out("RSTD", "fp32" if mode >= 0 else dt, R),
                  Scalar("RSTD_row_stride", 1), Scalar("n_cols", N), Scalar("eps", 1e-6, "fp32"),
                  Scalar("offset", 0.0 if mode != 1 else 1.0, "fp32")],
                 {"casting_mode": mode, "BLOCK_SIZE": 1024},
                 ref=R_.rmsnorm_fwd))
    add(Case("rmsnorm bwd", "rmsnorm.py", "_rms_norm_backward_kernel", (2,),
             [Buf("dY", "fp32", S), Scalar("dY_row_stride", N), Out("dX", "fp32", S),
              Scalar("dX_row_stride", N), Buf("X", "fp32", S), Scalar("X_row_stride", N),
              Buf("W", "fp32", N, "rand"), Buf("RSTD", "fp32", R, "rand"), Scalar("RSTD_row_stride", 1),
              Out("dW", "fp32", 2 * N), Scalar("dW_row_stride", N),
              Scalar("n_rows", R), Scalar("n_cols", N), Scalar("offset", 0.0, "fp32"),
              Scalar("rows_per_program", 2)], {"BLOCK_SIZE": 1024}, ref=R_.rmsnorm_bwd))
    # softmax.py
    add(Case("softmax rows", "softmax.py", "softmax_kernel", (3,),
             [Out("out", "fp32", S), Buf("inp", "fp32", S),
              Scalar("input_row_stride", N), Scalar("output_row_stride", N), Scalar("n_rows", R),
              Scalar("n_cols", N)], {"BLOCK_SIZE": 1024, "num_stages": 2}, ref=R_.softmax_rows))
    add(Case("online softmax bf16", "softmax.py", "online_softmax_kernel", (R,),
             [Out("out", "bf16", S), Buf("inp", "bf16", S), Scalar("stride", N),
              Scalar("n_cols", N)], {"TILE_N": 256}, ref=R_.online_softmax))
    add(Case("log-softmax bwd", "softmax.py", "log_softmax_backward_kernel", (R,),
             [Out("dx", "fp32", S), Buf("dy", "fp32", S), Buf("y", "fp32", S, "rand", scale=-3.0),
              Scalar("stride", N), Scalar("n_cols", N)], {"BLOCK": 1024}, ref=R_.log_softmax_bwd))
    # cross_entropy.py
    V = 3000

    def labels(rng, n):
        y = rng.integers(0, V, n)
        y[2] = -100
        return y

    add(Case("cross-entropy mean", "cross_entropy.py", "cross_entropy_kernel", (R,),
             [Buf("X", "fp32", R * V, out=True), Scalar("X_stride", V), Buf("Y", "i64", R, labels),
              Scalar("Y_stride", 1), Out("loss", "fp32", R), Null("z_loss_ptr"),
              Scalar("loss_stride", 1), Scalar("n_cols", V), Scalar("n_non_ignore", R - 1),
              Scalar("ignore_index", -100), Null("softcap")],
             {"lse_square_scale": 0.0, "label_smoothing": 0.0, "reduction": "mean",
              "RETURN_Z_LOSS": 0, "BLOCK_SIZE": 1024, "HAS_SOFTCAPPING": False},
             ref=R_.cross_entropy))
    add(Case("cross-entropy smoothing softcap z-loss", "cross_entropy.py", "cross_entropy_kernel", (R,),
             [Buf("X", "fp32", R * V, out=True, scale=4.0), Scalar("X_stride", V),
              Buf("Y", "i64", R, labels), Scalar("Y_stride", 1), Out("loss", "fp32", R),
              Out("z_loss", "fp32", R), Scalar("loss_stride", 1),
              Scalar("n_cols", V), Scalar("n_non_ignore", R - 1), Scalar("ignore_index", -100),
              Scalar("softcap", 3.0, "fp32")],
             {"lse_square_scale": 1e-4, "label_smoothing": 0.1, "reduction": "sum",
              "RETURN_Z_LOSS": 1, "BLOCK_SIZE": 1024, "HAS_SOFTCAPPING": True},
             tol={"fp32": (1e-4, 1e-3)}, ref=R_.cross_entropy))
    add(Case("element mul", "cross_entropy.py", "element_mul_kernel", (R,),
             [Buf("X", "fp32", S, out=True), Scalar("X_stride", N), Buf("g", "fp32", 1, ("fill", 0.5)),
              Scalar("n_cols", N)], {"BLOCK_SIZE": 256}, ref=R_.element_mul))
    # attention.py
    Z, H, L, D = 1, 2, 96, 32
    T = Z * H * L * D
    strides = [Scalar(f"stride_{t}{a}", v) for t in "qkvo"
               for a, v in zip("zhmk" if t == "q" else "zhnk" if t == "k" else "zhkn" if t == "v" else "zhmn",
                               (H * L * D, L * D, D, 1))]
    for stage in (1, 3):
        add(Case(f"attention fwd stage {stage}", "attention.py", "_attn_fwd", (L // 32, Z * H),
                 [Buf("Q", "fp16", T), Buf("K", "fp16", T), Buf("V", "fp16", T),
                  Scalar("sm_scale", 0.5, "fp32"), Out("M", "fp32", Z * H * L),
                  Out("Out", "fp16", T)] + strides +
                 [Scalar("Z", Z), Scalar("H", H), Scalar("N_CTX", L)],
                 {"HEAD_DIM": D, "BLOCK_M": 32, "BLOCK_N": 16, "STAGE": stage},
                 tol={"fp32": (2e-3, 2e-3), "fp16": (1e-2, 1e-2)}, ref=R_.attention))
    add(Case("attention scores", "attention.py", "_attn_scores", (2, 2),
             [Buf("Q", "fp16", 64 * D), Buf("K", "fp16", 64 * D), Out("S", "fp32", 64 * 64),
              Scalar("stride_q", D), Scalar("stride_k", D), Scalar("stride_s", 64), Scalar("N_CTX", 60),
              Scalar("sm_scale", 0.25, "fp32")], {"HEAD_DIM": D, "BLOCK": 32},
             tol={"fp32": (2e-3, 2e-3)}, ref=R_.attn_scores))
    # decoding.py
    B, QH, KVH, HD, LEN, BS = 2, 4, 2, 32, 40, 16
    nblk = LEN // BS + 1
    add(Case("flash decoding stage 1", "decoding.py", "_fwd_kernel_flash_decode_stage1", (B, QH, nblk),
             [Buf("Q", "fp16", B * QH * HD), Buf("K", "fp16", B * LEN * KVH * HD),
              Buf("V", "fp16", B * LEN * KVH * HD), Scalar("sm_scale", HD ** -0.5, "fp32"),
              Buf("Req_to_tokens", "i32", B * LEN, "arange"), Buf("B_req_idx", "i32", B, "arange"),
              Buf("B_Seqlen", "i32", B, lambda rng, n: np.array([LEN, LEN - 7])),
              Out("Mid_O", "fp32", B * QH * nblk * HD),
              Out("Mid_O_LogExpSum", "fp32", B * QH * nblk),
              Scalar("s_rb", LEN), Scalar("s_rs", 1), Scalar("s_qb", QH * HD), Scalar("s_qh", HD),
              Scalar("s_qd", 1), Scalar("s_kb", KVH * HD), Scalar("s_kh", HD), Scalar("s_kd", 1),
              Scalar("s_vb", KVH * HD), Scalar("s_vh", HD), Scalar("s_vd", 1),
              Scalar("s_mb", QH * nblk * HD), Scalar("s_mh", nblk * HD), Scalar("s_ms", HD),
              Scalar("s_md", 1), Scalar("s_eb", QH * nblk), Scalar("s_eh", nblk), Scalar("s_es", 1),
              Scalar("gqa", QH // KVH)], {"BLOCK_SEQ": BS, "BLOCK_DMODEL": HD, "BLOCK_N": 8},
             # q * k and its tl.sum stay fp16 (Triton's sum keeps a float
             # input's type), so the scores carry fp16 rounding that depends
             # on the order of the sum: a few units of 2^-8 at |score| ~ 5,
             # up to 2e-3 in the softmax-weighted output between two orders
             num_warps=1, tol={"fp32": (4e-3, 4e-3)}, ref=R_.decode_stage1))
    add(Case("flash decoding stage 2", "decoding.py", "_fwd_kernel_flash_decode_stage2", (B, QH),
             [Buf("B_Seqlen", "i32", B, lambda rng, n: np.array([LEN, LEN - 7])),
              Buf("Mid_O", "fp32", B * QH * nblk * HD), Buf("Mid_O_LogExpSum", "fp32", B * QH * nblk),
              Out("Out", "fp16", B * QH * HD),
              Scalar("s_mb", QH * nblk * HD), Scalar("s_mh", nblk * HD), Scalar("s_ms", HD),
              Scalar("s_md", 1), Scalar("s_eb", QH * nblk), Scalar("s_eh", nblk), Scalar("s_es", 1),
              Scalar("s_ob", QH * HD), Scalar("s_oh", HD), Scalar("s_od", 1)],
             {"BLOCK_SEQ": BS, "BLOCK_DMODEL": HD}, ref=R_.decode_stage2))
    # scans.py
    add(Case("cumsum rows reversed", "scans.py", "cumsum_rows_kernel", (R,),
             [Buf("x", "fp32", S), Out("y", "fp32", S), Scalar("n_cols", N),
              Scalar("stride", N)], {"REVERSE": True, "BLOCK": 256}, tol={"fp32": (1e-3, 1e-4)},
             ref=R_.cumsum_rows))
    add(Case("linear recurrence", "scans.py", "linear_recurrence_kernel", (2,),
             [Buf("a", "fp32", 50 * 24, "rand"), Buf("x", "fp32", 50 * 24), Out("h", "fp32", 50 * 24),
              Buf("h0", "fp32", 24), Scalar("seq_len", 50), Scalar("n_channels", 24)],
             {"BLOCK_T": 64, "BLOCK_C": 16}, ref=R_.recurrence))
    add(Case("linear recurrence, h0 None", "scans.py", "linear_recurrence_kernel", (2,),
             [Buf("a", "bf16", 50 * 24, "rand"), Buf("x", "bf16", 50 * 24), Out("h", "bf16", 50 * 24),
              Null("h0_ptr"), Scalar("seq_len", 50), Scalar("n_channels", 24)],
             {"BLOCK_T": 64, "BLOCK_C": 16}, ref=R_.recurrence))
    add(Case("segmented sum", "scans.py", "segmented_sum_kernel", (1,),
             [Buf("flags", "i8", 900, _flags), Buf("x", "fp32", 900), Out("out", "fp32", 900),
              Scalar("n", 900)], {"BLOCK": 1024}, tol={"fp32": (1e-4, 1e-4)}, ref=R_.segmented))
    add(Case("cumprod", "scans.py", "cumprod_kernel", (4,),
             [Buf("x", "fp32", 1000, lambda rng, n: 0.9 + 0.2 * rng.random(n)),
              Out("y", "fp32", 1000), Scalar("n", 1000)], {"BLOCK": 256},
             ref=R_.cumprod_blocks))
    # sampling.py
    VOC = 2000
    add(Case("apply penalty", "sampling.py", "_fwd_kernel_apply_penalty", (3,),
             [Buf("logits", "fp32", 3 * VOC, out=True), Buf("pres", "fp32", 3, "rand"),
              Buf("freq", "fp32", 3, "rand"), Buf("rep", "fp32", 3, lambda rng, n: 1.0 + rng.random(n)),
              Buf("ids", "i32", 12, _distinct(VOC)),
              Buf("counts", "i32", 12, ("randint", 1, 5)), Buf("cumsum", "i32", 4, _cumsum_counts),
              Scalar("stride_b", VOC), Scalar("stride_s", 1)], {"BLOCK_P": 8}, ref=R_.penalty))
    add(Case("greedy and probs", "sampling.py", "_greedy_and_probs_kernel", (3,),
             [Buf("logits", "fp32", 3 * VOC, scale=3.0), Buf("temp", "fp32", 3, _values(0.7, 1.0, 1.3)),
              Out("probs", "fp32", 3 * VOC), Out("next", "i64", 3),
              Scalar("vocab", VOC), Scalar("stride", VOC)], {"BLOCK_V": 2048}, ref=R_.greedy))
    add(Case("top-k probs", "sampling.py", "_top_k_probs_kernel", (3,),
             [Buf("logits", "fp32", 3 * VOC, scale=3.0), Out("probs", "fp32", 3 * VOC),
              Out("thr", "fp32", 3), Scalar("vocab", VOC), Scalar("stride", VOC),
              Scalar("top_k", 50)], {"BLOCK_V": 2048, "NUM_ITERS": 24}, ref=R_.top_k))
    # embedding.py
    add(Case("embedding", "embedding.py", "embedding_kernel", (6,),
             [Out("out", "fp32", 6 * 100), Buf("ids", "i64", 6, ("randint", 0, 50)),
              Buf("weight", "fp32", 50 * 100)], {"N": 100, "BLOCK_SIZE": 128}, ref=R_.embedding))
    add(Case("embedding + positions", "embedding.py", "embedding_position_kernel", (6,),
             [Out("out", "bf16", 6 * 100), Buf("ids", "i32", 6, ("randint", 0, 5)),
              Buf("weight", "bf16", 5 * 100), Buf("pos", "bf16", 3 * 100), Scalar("seq_len", 3),
              Scalar("N", 100), Scalar("padding_idx", 0), Scalar("scale", 2.0, "fp32")],
             {"BLOCK_SIZE": 128}, ref=R_.embedding_position))
    add(Case("embedding backward (atomics)", "embedding.py", "embedding_backward_kernel", (2,),
             [Buf("grad_in", "fp32", 10 * 100, "zeros", out=True), Buf("grad_out", "fp32", 30 * 100),
              Buf("ids", "i64", 30, ("randint", 0, 10)), Scalar("num_indices", 30), Scalar("N", 100)],
             {"BLOCK_N": 128, "BLOCK_I": 16}, tol={"fp32": (1e-4, 1e-5)}, ref=R_.embedding_backward))
    # dropout_residual.py
    add(Case("dropout + residual + bias", "dropout_residual.py", "dropout_add_kernel", (4,),
             [Buf("x", "fp32", S), Buf("res", "fp32", S), Buf("bias", "fp32", N),
              Out("out", "fp32", S), Scalar("n_elements", S), Scalar("n_cols", N),
              Scalar("p", 0.25, "fp32"), Scalar("seed", 1234)], {"HAS_BIAS": True, "BLOCK_SIZE": 1024}, ref=R_.dropout_add))
    add(Case("seeded dropout rows", "dropout_residual.py", "_seeded_dropout_rows", (R,),
             [Buf("x", "fp16", S), Out("out", "fp16", S),
              Buf("seeds", "i32", R, ("randint", 0, 10000)), Scalar("n_cols", N), Scalar("stride", N),
              Scalar("p", 0.5, "fp32")], {"BLOCK": 1024}, ref=R_.seeded_dropout_rows))
    # quant.py
    add(Case("per-token int8 quant", "quant.py", "_per_token_quant_int8", (R,),
             [Buf("x", "fp16", S), Out("xq", "i8", S), Out("scale", "fp32", R),
              Null("scale_ub_ptr"), Scalar("stride_x", N), Scalar("stride_xq", N), Scalar("N", N)],
             {"EPS": 1e-10, "BLOCK": 1024}, ref_tol={"i8": (1, 0)}, ref=R_.quant_int8))
    add(Case("per-token int8 quant, bounded", "quant.py", "_per_token_quant_int8", (R,),
             [Buf("x", "bf16", S), Out("xq", "i8", S), Out("scale", "fp32", R),
              Buf("ub", "fp32", 1, ("fill", 1.5)), Scalar("stride_x", N), Scalar("stride_xq", N),
              Scalar("N", N)], {"EPS": 1e-10, "BLOCK": 1024}, ref_tol={"i8": (1, 0)}, ref=R_.quant_int8))
    add(Case("int8 dequant", "quant.py", "_dequant_int8", (R,),
             [Buf("xq", "i8", S, ("randint", -127, 128)), Buf("scale", "fp32", R, "rand"),
              Out("out", "fp16", S), Scalar("N", N)], {"BLOCK": 1024}, ref=R_.dequant_int8))
    # kv_cache.py
    add(Case("kv cache copy", "kv_cache.py", "_fwd_kernel_destindex_copy_kv", (5,),
             [Buf("k", "fp16", 5 * 4 * 96), Buf("dest", "i64", 5, _distinct(12)),
              Out("out", "fp16", 12 * 4 * 96), Scalar("s_kb", 4 * 96), Scalar("s_kh", 96),
              Scalar("s_kd", 1), Scalar("s_ob", 4 * 96), Scalar("s_oh", 96), Scalar("s_od", 1),
              Scalar("head_num", 4), Scalar("head_dim", 96)], {"BLOCK_DMODEL": 128, "BLOCK_HEAD": 4},
             num_warps=1, ref=R_.kv_copy))
    add(Case("kv cache int8", "kv_cache.py", "_copy_kv_scaled", (5, 4),
             [Buf("k", "fp16", 5 * 4 * 96), Buf("v", "fp16", 5 * 4 * 96),
              Buf("dest", "i64", 5, _distinct(12)),
              Out("k_out", "i8", 12 * 4 * 96), Out("v_out", "i8", 12 * 4 * 96),
              Out("k_scale", "fp32", 48), Out("v_scale", "fp32", 48),
              Scalar("head_num", 4), Scalar("head_dim", 96)], {"BLOCK_D": 128}, ref_tol={"i8": (1, 0)}, ref=R_.kv_int8))
    # kernlib/ops (a package)
    add(Case("swiglu fwd bf16", "kernlib/ops/swiglu.py", "_swiglu_forward_kernel", (R,),
             [Buf("a", "fp32", S), Buf("b", "fp32", S), Out("c", "fp32", S),
              Scalar("stride", N)], {"n_cols": N, "BLOCK_SIZE": 1024}, ref=R_.swiglu_fwd))
    add(Case("swiglu bwd", "kernlib/ops/swiglu.py", "_swiglu_backward_kernel", (R,),
             [Buf("dc", "bf16", S), Buf("a", "bf16", S, out=True), Buf("b", "bf16", S, out=True),
              Scalar("stride", N)], {"n_cols": N, "BLOCK_SIZE": 1024}, ref=R_.swiglu_bwd))
    add(Case("geglu fwd", "kernlib/ops/swiglu.py", "_geglu_forward_kernel", (R,),
             [Buf("a", "fp32", S), Buf("b", "fp32", S), Out("c", "fp32", S),
              Scalar("stride", N)], {"n_cols": N, "BLOCK_SIZE": 1024}, ref=R_.geglu_fwd))
    add(Case("gated rms norm", "kernlib/ops/gated_norm.py", "_gated_rms_norm_fwd", (R,),
             [Buf("X", "fp32", S), Buf("Z", "fp32", S), Null("R"), Buf("W", "fp32", N, "rand"),
              Out("Y", "fp32", S), Scalar("stride", N), Scalar("n_cols", N),
              Scalar("eps", 1e-6, "fp32")],
             {"HAS_RESIDUAL": False, "NORM_BEFORE_GATE": True, "BLOCK_N": 1024}, ref=R_.gated_norm))
    add(Case("gated rms norm, residual", "kernlib/ops/gated_norm.py", "_gated_rms_norm_fwd", (R,),
             [Buf("X", "bf16", S), Buf("Z", "bf16", S), Buf("R", "bf16", S), Buf("W", "bf16", N, "rand"),
              Out("Y", "bf16", S), Scalar("stride", N), Scalar("n_cols", N),
              Scalar("eps", 1e-6, "fp32")],
             {"HAS_RESIDUAL": True, "NORM_BEFORE_GATE": False, "BLOCK_N": 1024}, ref=R_.gated_norm))
    # fused_softmax.py
    add(Case("scaled causal softmax", "fused_softmax.py", "_softmax_fwd_kernel", (2 * 64,),
             [Out("y", "fp32", 128 * 64), Buf("x", "fp32", 128 * 64, scale=3.0), Scalar("stride", 64),
              Scalar("n_cols", 64), Scalar("seq_len", 64), Scalar("scale", 0.125, "fp32")],
             {"CAUSAL": True, "BLOCK": 64}, ref=R_.scaled_softmax))
    add(Case("scaled softmax bf16", "fused_softmax.py", "_softmax_fwd_kernel", (R,),
             [Out("y", "bf16", S), Buf("x", "bf16", S, scale=4.0), Scalar("stride", N),
              Scalar("n_cols", N), Scalar("seq_len", R), Scalar("scale", 0.5, "fp32")],
             {"CAUSAL": False, "BLOCK": 1024}, num_warps=8, ref=R_.scaled_softmax))
    add(Case("scaled softmax bwd", "fused_softmax.py", "_softmax_bwd_kernel", (R,),
             [Out("dx", "fp32", S), Buf("dy", "fp32", S), Buf("y", "fp32", S, "rand", scale=0.002),
              Scalar("stride", N), Scalar("n_cols", N), Scalar("scale", 0.125, "fp32")],
             {"BLOCK": 1024}, ref=R_.scaled_softmax_bwd))
    # glu_activations.py
    add(Case("gelu erf", "glu_activations.py", "_gelu_kernel", (R,),
             [Out("y", "fp32", S), Buf("x", "fp32", S, scale=2.0), Scalar("n_elements", S),
              Scalar("n_cols", N)], {"APPROX": "none", "BLOCK_N": 1024}, ref=R_.gelu_kernel))
    add(Case("gelu tanh bf16", "glu_activations.py", "_gelu_kernel", (2 * R,),
             [Out("y", "bf16", S), Buf("x", "bf16", S, scale=2.0), Scalar("n_elements", S),
              Scalar("n_cols", N)], {"APPROX": "tanh", "BLOCK_N": 512}, num_warps=2,
             ref=R_.gelu_kernel))
    add(Case("swiglu halves fp16", "glu_activations.py", "_glu_fwd_kernel", (R, 1),
             [Out("y", "fp16", S), Buf("xz", "fp16", 2 * S), Scalar("n_cols", N),
              Scalar("stride_xz", 2 * N), Scalar("stride_y", N)], {"ACT": "silu", "BLOCK_N": 1024},
             ref=R_.glu_fwd))
    add(Case("geglu halves", "glu_activations.py", "_glu_fwd_kernel", (R, 4),
             [Out("y", "fp32", S), Buf("xz", "fp32", 2 * S), Scalar("n_cols", N),
              Scalar("stride_xz", 2 * N), Scalar("stride_y", N)], {"ACT": "gelu", "BLOCK_N": 256},
             ref=R_.glu_fwd))
    add(Case("swiglu halves bwd", "glu_activations.py", "_glu_bwd_kernel", (R, 4),
             [Out("dxz", "fp32", 2 * S), Buf("dy", "fp32", S), Buf("xz", "fp32", 2 * S),
              Scalar("n_cols", N), Scalar("stride", N)], {"ACT": "silu", "BLOCK_N": 256},
             ref=R_.glu_bwd))
    # optional_triton.py
    add(Case("add + rms norm bf16", "optional_triton.py", "_add_rmsnorm_kernel", (R,),
             [Out("out", "bf16", S), Out("res_out", "bf16", S), Buf("x", "bf16", S), Buf("res", "bf16", S),
              Buf("w", "bf16", N, "rand"), Scalar("stride", N), Scalar("n_cols", N),
              Scalar("eps", 1e-6, "fp32")], {"BLOCK": 1024}, ref=R_.add_rmsnorm))
    add(Case("l2 normalize", "optional_triton.py", "_l2norm_kernel", (R,),
             [Out("y", "fp32", S), Buf("x", "fp32", S), Scalar("n_cols", N), Scalar("stride", N),
              Scalar("eps", 1e-12, "fp32")], {"BLOCK": 1024}, ref=R_.l2norm))
    add(Case("squared relu", "optional_triton.py", "_relu_sq_kernel", (16,),
             [Out("y", "fp32", S), Buf("x", "fp32", S), Scalar("n", S)], {"BLOCK": 256},
             ref=R_.relu_sq))
    # host_chosen.py (helpers chosen by Triton's version, hasattr and the environment)
    add(Case("rms norm, libdevice by version", "host_chosen.py", "_rms_norm_rows", (R,),
             [Out("y", "fp32", S), Buf("x", "fp32", S), Buf("w", "fp32", N, "rand"),
              Scalar("n_cols", N), Scalar("stride", N), Scalar("eps", 1e-6, "fp32")],
             {"BLOCK": 1024}, ref=R_.rms_rows))
    add(Case("gelu tanh, helper by hasattr", "host_chosen.py", "_gelu_tanh_fwd", (16,),
             [Out("y", "fp32", S), Buf("x", "fp32", S, scale=2.0), Scalar("n", S)],
             {"BLOCK": 256}, ref=R_.gelu_tanh_flat))
    # kernlib/ops/bias_act.py (the package's helpers through module names)
    for act, dt in (("gelu_tanh", "fp32"), ("silu", "bf16"), ("relu", "fp16")):
        add(Case(f"bias + {act} {dt}", "kernlib/ops/bias_act.py", "_bias_act_kernel", (3, 3),
                 [Out("y", dt, 40 * 300), Buf("x", dt, 40 * 300), Buf("b", dt, 300), Scalar("n_rows", 40),
                  Scalar("n_cols", 300), Scalar("stride", 300)],
                 {"ACT": act, "BLOCK_M": 16, "BLOCK_N": 128}, ref=R_.bias_act))
    # block_pointers.py
    M_, N_, K_ = 100, 72, 40
    mm_strides = [Scalar("stride_am", K_), Scalar("stride_ak", 1), Scalar("stride_bk", N_),
                  Scalar("stride_bn", 1), Scalar("stride_cm", N_), Scalar("stride_cn", 1)]
    add(Case("matmul with block pointers", "block_pointers.py", "matmul_block_ptr_kernel", (4 * 3,),
             [Buf("a", "fp16", M_ * K_), Buf("b", "fp16", K_ * N_), Out("c", "fp16", M_ * N_),
              Scalar("M", M_), Scalar("N", N_), Scalar("K", K_)] + mm_strides,
             {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 2},
             tol={"fp16": (2e-2, 1e-2)}, ref=R_.matmul))
    for causal in (False, True):
        bstrides = [Scalar(f"stride_{t}{a}", v) for t in "qkvo"
                    for a, v in zip("zhmk" if t == "q" else "zhnk" if t == "k" else "zhkn" if t == "v" else "zhmn",
                                    (H * L * D, L * D, D, 1))]
        add(Case(f"attention with block pointers{', causal' if causal else ''}", "block_pointers.py",
                 "attn_fwd_block_ptr", (L // 32, Z * H),
                 [Buf("Q", "fp16", T), Buf("K", "fp16", T), Buf("V", "fp16", T),
                  Scalar("sm_scale", 0.5, "fp32"), Out("M", "fp32", Z * H * L),
                  Out("Out", "fp16", T)] + bstrides +
                 [Scalar("Z", Z), Scalar("H", H), Scalar("N_CTX", L)],
                 {"HEAD_DIM": D, "BLOCK_M": 32, "BLOCK_N": 16, "CAUSAL": causal},
                 tol={"fp32": (2e-3, 2e-3), "fp16": (1e-2, 1e-2)}, ref=R_.attention_causal_flag))
    add(Case("persistent descriptor matmul", "block_pointers.py", "persistent_desc_matmul", (5,),
             [Buf("a", "fp16", M_ * K_), Buf("b", "fp16", K_ * N_), Out("c", "fp16", M_ * N_),
              Scalar("M", M_), Scalar("N", N_), Scalar("K", K_)],
             {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "NUM_SMS": 5},
             tol={"fp16": (2e-2, 1e-2)}, ref=R_.matmul))
    # batched_3d.py: [1, BM, BK] blocks of 3-D tensors, loaded and stored
    for kern in ("bmm_desc3d", "bmm_block_ptr3d"):
        for (bz, m, n, k, bm, bn, bk, warps) in ((3, 40, 48, 56, 16, 32, 16, 4),
                                                  (2, 136, 200, 72, 64, 64, 32, 4)):
            add(Case(f"batched matmul {kern} {bz}x{m}x{n}x{k}", "batched_3d.py", kern,
                     (-(-m // bm), -(-n // bn), bz),
                     [Buf("a", "fp16", bz * m * k), Buf("b", "fp16", bz * k * n),
                      Out("c", "fp16", bz * m * n), Scalar("B", bz), Scalar("M", m),
                      Scalar("N", n), Scalar("K", k)],
                     {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=warps,
                     tol={"fp16": (2e-2, 1e-2)}, ref=R_.bmm))
    # batched_3d.py: descriptors made again for each batch, carried by a loop
    for (bz, m, n, k, bm, bn, bk, sms, warps) in ((3, 40, 48, 56, 16, 32, 16, 5, 4),
                                                  (2, 136, 200, 72, 64, 64, 32, 3, 4)):
        io = [Buf("a", "fp16", bz * m * k), Buf("b", "fp16", bz * k * n),
              Out("c", "fp16", bz * m * n), Scalar("B", bz), Scalar("M", m), Scalar("N", n),
              Scalar("K", k)]
        blocks = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}
        add(Case(f"batched matmul, persistent, descriptors per batch {bz}x{m}x{n}x{k} on {sms}",
                 "batched_3d.py", "bmm_desc_flat_persistent", (sms,), io,
                 dict(blocks, NUM_SMS=sms), num_warps=warps, tol={"fp16": (2e-2, 1e-2)},
                 ref=R_.bmm))
        add(Case(f"batched matmul, descriptors replaced each batch {bz}x{m}x{n}x{k}",
                 "batched_3d.py", "bmm_desc_per_batch", (-(-m // bm), -(-n // bn)), io, blocks,
                 num_warps=warps, tol={"fp16": (2e-2, 1e-2)}, ref=R_.bmm))
    # persistent_flat.py: tile loops flattened by hand; programs owning no
    # tile, one, or several; fewer K steps than stages
    for kern in ("flat_where", "flat_counter", "flat_tile_epilogue"):
        for (m, n, k, bm, bn, bk, sms, warps) in ((100, 72, 40, 32, 32, 16, 5, 4),
                                                   (100, 72, 16, 32, 32, 16, 16, 4),
                                                   (192, 160, 208, 64, 64, 32, 3, 4),
                                                   (256, 256, 96, 128, 128, 32, 2, 8)):
            add(Case(f"hand-flattened persistent matmul {kern} {m}x{n}x{k} on {sms}",
                     "persistent_flat.py", kern, (sms,),
                     [Buf("a", "fp16", m * k), Buf("b", "fp16", k * n), Out("c", "fp16", m * n),
                      Scalar("M", m), Scalar("N", n), Scalar("K", k), Scalar("stride_am", k),
                      Scalar("stride_ak", 1), Scalar("stride_bk", n), Scalar("stride_bn", 1),
                      Scalar("stride_cm", n), Scalar("stride_cn", 1)],
                     {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "NUM_SMS": sms},
                     num_warps=warps, tol={"fp16": (2e-2, 1e-2)}, ref=R_.matmul))
    M8, N8, K8 = 70, 40, 50
    add(Case("int8 scaled matmul with block pointers", "block_pointers.py", "int8_scaled_mm_kernel",
             (3, 2),
             [Buf("a", "i8", M8 * K8, ("randint", -8, 8)), Buf("b", "i8", K8 * N8, ("randint", -8, 8)),
              Buf("row_scale", "fp32", M8, "rand"), Buf("col_scale", "fp32", N8, "rand"),
              Out("c", "fp32", M8 * N8), Scalar("M", M8), Scalar("N", N8), Scalar("K", K8),
              Scalar("stride_am", K8), Scalar("stride_ak", 1), Scalar("stride_bk", N8),
              Scalar("stride_bn", 1), Scalar("stride_cm", N8), Scalar("stride_cn", 1)],
             {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, ref=R_.int8_scaled_mm))
    add(Case("descriptor load, store and atomic_add", "block_pointers.py", "desc_add_rows", (4, 4),
             [Buf("x", "fp32", 50 * 100), Buf("y", "fp32", 50 * 100), Out("out", "fp32", 50 * 100),
              Buf("acc", "fp32", 50 * 100, "zeros", out=True), Scalar("R", 50), Scalar("C", 100)],
             {"BLOCK_R": 16, "BLOCK_C": 32}, ref=R_.desc_add))


    # host_tuned.py (heuristics and autotune configs built by host code: the
    # case gives the constexprs; Triton's wrappers are taken off)
    add(Case("scaled row sum, heuristics from a factory", "host_tuned.py", "_scaled_row_sum", (R,),
             [Buf("x", "fp32", S), Out("out", "fp32", R), Scalar("scale", 0.5, "fp32"),
              Scalar("n_cols", N), Scalar("stride", N)], {"BLOCK_N": 256, "EVEN_N": False},
             tol={"fp32": (1e-4, 1e-4)}, ref=R_.scaled_row_sum))
    add(Case("clamp, heuristics from a host table", "host_tuned.py", "_clamp", (4,),
             [Buf("x", "fp32", S, scale=3.0), Out("y", "fp32", S), Scalar("lo", -1.0, "fp32"),
              Scalar("hi", 2.0, "fp32"), Scalar("n", S)],
             {"BLOCK": 1024, "HAS_MIN": True, "HAS_MAX": True}, ref=R_.clamp))
    add(Case("axpby, configs from a host function", "host_tuned.py", "_axpby", (8,),
             [Buf("x", "fp32", S), Buf("y", "fp32", S), Out("out", "fp32", S),
              Scalar("a", 2.0, "fp32"), Scalar("b", -0.5, "fp32"), Scalar("n", S)],
             {"BLOCK": 512}, ref=R_.axpby))
    # hypercube.py: blocks of 10 and 11 dims of 2 (one and four warps)
    for n, lg, warps in ((1024, 10, 4), (2048, 11, 1)):
        add(Case(f"hypercube exchange {n} on {warps} warps", "hypercube.py",
                 "hypercube_exchange_kernel", (3,),
                 [Buf("x", "fp32", 3 * n), Out("out", "fp32", 3 * n)],
                 {"N": n, "LOG_N": lg}, num_warps=warps,
                 gpu_only="no reference here: compared with Triton on the GPU"))
    # prefetch_carried.py: a tile loaded at the end of a pipelined body, carried
    add(Case("weights prefetched into the next iteration", "prefetch_carried.py",
             "carried_prefetch_kernel", (1,),
             [Buf("w", "fp32", 6 * 32 * 16), Out("out", "fp32", 32 * 32), Scalar("n_steps", 6)],
             {"BM": 32, "BN": 16}, num_stages=2,
             gpu_only="no reference here: compared with Triton on the GPU"))
    # fastmath_pdl.py: inline PTX (GPU only), grid dependency control (no-ops on the interpreter)
    ptx = "inline PTX: the interpreters cannot run it"
    add(Case("gelu with tanh.approx asm", "fastmath_pdl.py", "gelu_fast_kernel", (4,),
             [Buf("x", "fp32", S, scale=3.0), Out("out", "fp32", S), Scalar("n_elements", S)],
             {"BLOCK": 1024}, gpu_only=ptx))
    add(Case("u8 dequant, 4 bytes per asm", "fastmath_pdl.py", "dequant_u8_kernel", (4,),
             [Buf("q", "u8", S, ("randint", 0, 256)), Buf("scale", "fp32", 1, ("fill", 0.25)),
              Out("out", "fp32", S), Scalar("n_elements", S), Scalar("zero_point", 128)],
             {"BLOCK": 1024}, gpu_only=ptx))
    add(Case("mul.wide.u32, two results", "fastmath_pdl.py", "mul_wide_kernel", (16,),
             [Buf("a", "i32", S, ("randint", 0, 2**31 - 1)), Buf("b", "i32", S, ("randint", 0, 2**31 - 1)),
              Out("lo", "i32", S), Out("hi", "i32", S), Scalar("n_elements", S)],
             {"BLOCK": 256}, gpu_only=ptx))
    add(Case("softplus asm with pack=4 over 2 elements a thread", "fastmath_pdl.py",
             "softplus_pack4_kernel", (4,),
             [Buf("x", "fp32", S, scale=8.0), Out("out", "fp32", S), Scalar("n_elements", S)],
             {"BLOCK": 256}, gpu_only=ptx))
    add(Case("lop3 with immediate operands ('n')", "fastmath_pdl.py", "nibbles_imm_kernel", (4,),
             [Buf("w", "i32", S, ("randint", 0, 2**31 - 1)), Out("out", "fp32", S),
              Scalar("n_elements", S)], {"BLOCK": 512}, gpu_only=ptx))
    add(Case("scale-shift after gdc_wait, launch_pdl", "fastmath_pdl.py", "scale_shift_pdl_kernel",
             (8,), [Buf("x", "fp32", S), Out("y", "fp32", S), Scalar("n_elements", S),
                    Scalar("alpha", 1.5, "fp32"), Scalar("beta", -0.25, "fp32")],
             {"BLOCK": 512, "USE_GDC": True}, launch_pdl=True, ref=R_.scale_shift))
    # host_descriptors.py
    add(Case("matmul over host tensor descriptors", "host_descriptors.py", "matmul_host_desc",
             (4, 3),
             [Desc("a", "fp16", (M_, K_), (32, 16)), Desc("b", "fp16", (K_, N_), (16, 32)),
              DescOut("c", "fp16", (M_, N_), (32, 32)), Scalar("M", M_), Scalar("N", N_),
              Scalar("K", K_)],
             {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16}, tol={"fp16": (2e-2, 1e-2)},
             ref=R_.matmul))
    # moe_routing.py: tl.topk, tl.sort, tl.bitonic_merge
    TOK, EXP = 37, 60
    add(Case("router top-k with softmax, renormalised", "moe_routing.py", "fused_topk_softmax_kernel",
             (3,), [Buf("gating", "fp32", TOK * EXP, scale=2.0), Out("topk_weights", "fp32", TOK * 8),
                    Out("topk_ids", "i32", TOK * 8), Scalar("num_tokens", TOK), Scalar("stride_gm", EXP)],
             {"N_EXPERTS": EXP, "BLOCK_E": 64, "TOPK": 8, "BLOCK_T": 16, "RENORMALIZE": True},
             ref=R_.topk_softmax))
    add(Case("router top-2, fp16 logits", "moe_routing.py", "fused_topk_softmax_kernel",
             (5,), [Buf("gating", "fp16", 70 * 8), Out("topk_weights", "fp32", 70 * 2),
                    Out("topk_ids", "i32", 70 * 2), Scalar("num_tokens", 70), Scalar("stride_gm", 8)],
             {"N_EXPERTS": 8, "BLOCK_E": 8, "TOPK": 2, "BLOCK_T": 16, "RENORMALIZE": False},
             ref=R_.topk_softmax))
    add(Case("sort rows ascending, padded", "moe_routing.py", "sort_rows_kernel", (6,),
             [Buf("x", "fp32", 6 * 200), Out("y", "fp32", 6 * 200), Scalar("n_cols", 200),
              Scalar("stride", 200)], {"BLOCK": 256, "DESCENDING": False}, ref=R_.sort_rows))
    add(Case("sort rows descending, int32", "moe_routing.py", "sort_rows_kernel", (4,),
             [Buf("x", "i32", 4 * 64, ("randint", -1000, 1000)), Out("y", "i32", 4 * 64),
              Scalar("n_cols", 64), Scalar("stride", 64)], {"BLOCK": 64, "DESCENDING": True},
             ref=R_.sort_rows))
    add(Case("merge two sorted runs", "moe_routing.py", "merge_sorted_kernel", (5,),
             [Buf("a", "fp32", 5 * 128, lambda rng, n: np.sort(rng.standard_normal(n).reshape(5, -1)).ravel()),
              Buf("b", "fp32", 5 * 128, lambda rng, n: np.sort(rng.standard_normal(n).reshape(5, -1)).ravel()),
              Out("out", "fp32", 5 * 256)], {"HALF": 128}, ref=R_.merge_sorted))
    # tuple_state.py: tl.tuple, tuples through helpers and loops, tuple slices, tl.condition
    add(Case("online logsumexp with a tuple state", "tuple_state.py", "logsumexp_rows_kernel", (5,),
             [Buf("x_ptr", "fp32", 5 * 1000, scale=4.0), Out("out_ptr", "fp32", 5), Scalar("n_cols", 1000),
              Scalar("stride_row", 1000)], {"BLOCK": 256}, ref=R_.logsumexp_rows))
    add(Case("logsumexp, fp16 rows, one chunk", "tuple_state.py", "logsumexp_rows_kernel", (3,),
             [Buf("x_ptr", "fp16", 3 * 100), Out("out_ptr", "fp32", 3), Scalar("n_cols", 100),
              Scalar("stride_row", 100)], {"BLOCK": 128}, ref=R_.logsumexp_rows))
    add(Case("transpose through tuple strides", "tuple_state.py", "transpose_copy_kernel", (4, 3),
             [Buf("x_ptr", "fp32", 100 * 70), Out("y_ptr", "fp32", 100 * 70), Scalar("M", 100),
              Scalar("N", 70), Scalar("stride_xm", 70), Scalar("stride_xn", 1), Scalar("stride_ym", 100),
              Scalar("stride_yn", 1)], {"BLOCK_M": 32, "BLOCK_N": 32}, ref=R_.transpose_copy))
    # device_dispatch.py: helpers and constants chosen by host device checks
    add(Case("silu-and-mul, helper chosen per arch", "device_dispatch.py", "silu_and_mul_kernel",
             (6, 2), [Out("out_ptr", "fp32", 6 * 700), Buf("in_ptr", "fp32", 6 * 1400, scale=3.0),
                      Scalar("n_rows", 6), Scalar("d", 700), Scalar("stride_in", 1400),
                      Scalar("stride_out", 700)], {"BLOCK_D": 512}, ref=R_.silu_and_mul))
    add(Case("silu-and-mul, bf16", "device_dispatch.py", "silu_and_mul_kernel",
             (4, 1), [Out("out_ptr", "bf16", 4 * 256), Buf("in_ptr", "bf16", 4 * 512),
                      Scalar("n_rows", 4), Scalar("d", 256), Scalar("stride_in", 512),
                      Scalar("stride_out", 256)], {"BLOCK_D": 256}, ref=R_.silu_and_mul))
    # mx_matmul.py: tl.dot_scaled, emulated by upcasting to bf16
    MM, NN, KK = 64, 96, 128

    def _e4m3_bits(rng, n):  # finite e4m3 values of moderate size
        return rng.integers(0x20, 0x58, n) | (rng.integers(0, 2, n) << 7)

    # (formats, K packing): an e2m1 operand packed along M or N with k_pack=False
    for af, bf, ak, bk in (("e4m3", "e2m1", True, True), ("e2m1", "e4m3", True, True),
                           ("e4m3", "e4m3", True, True), ("e2m1", "e2m1", False, False),
                           ("e2m1", "e4m3", False, True), ("e4m3", "e2m1", True, False)):
        a_n = MM * KK // (2 if af == "e2m1" else 1)
        b_n = KK * NN // (2 if bf == "e2m1" else 1)
        a_init = ("randint", 0, 256) if af == "e2m1" else _e4m3_bits
        b_init = ("randint", 0, 256) if bf == "e2m1" else _e4m3_bits
        packs = "" if ak and bk else f" k_pack {ak}/{bk}"
        add(Case(f"mx matmul {af} x {bf}{packs}", "mx_matmul.py", "mx_matmul_kernel", (2, 3),
                 [Buf("a_ptr", "u8", a_n, a_init), Buf("a_scale_ptr", "u8", MM * KK // 32, ("randint", 122, 132)),
                  Buf("b_ptr", "u8", b_n, b_init), Buf("b_scale_ptr", "u8", NN * KK // 32, ("randint", 122, 132)),
                  Out("c_ptr", "fp32", MM * NN), Scalar("M", MM), Scalar("N", NN), Scalar("K", KK),
                  Scalar("stride_am", KK // (2 if af == "e2m1" and ak else 1)),
                  Scalar("stride_bk", NN // (1 if bf != "e2m1" or bk else 2)),
                  Scalar("stride_cm", NN)],
                 {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 64, "A_FORMAT": af, "B_FORMAT": bf,
                  "A_K_PACK": ak, "B_K_PACK": bk},
                 tol={"fp32": (1e-4, 1e-2)}, ref=R_.mx_matmul,
                 beyond_triton=None if ak and bk else
                 "k_pack=False: Triton 3.6's sm_90 lowering fails (make_llir: PassManager::run failed)"))
    BB, BM2, BN2, BK2 = 2, 64, 32, 128
    for ak in (True, False):
        add(Case(f"mx batched matmul e2m1 x e4m3 k_pack {ak}", "mx_matmul.py", "mx_bmm_kernel", (2, 1),
                 [Buf("a_ptr", "u8", BB * BM2 * BK2 // 2, ("randint", 0, 256)),
                  Buf("a_scale_ptr", "u8", BB * BM2 * BK2 // 32, ("randint", 122, 132)),
                  Buf("b_ptr", "u8", BB * BK2 * BN2, _e4m3_bits),
                  Buf("b_scale_ptr", "u8", BB * BN2 * BK2 // 32, ("randint", 122, 132)),
                  Out("c_ptr", "fp32", BB * BM2 * BN2), Scalar("M", BM2), Scalar("N", BN2), Scalar("K", BK2)],
                 {"BATCH": BB, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 64, "A_K_PACK": ak},
                 tol={"fp32": (1e-4, 1e-2)}, ref=R_.mx_bmm,
                 beyond_triton="3-D operands: Triton 3.6's dot_scaled wants 2-D scales"))
    # elementwise_extras.py: tl.map_elementwise, tl.const, tl.philox_impl
    add(Case("softplus through map_elementwise", "elementwise_extras.py", "softplus_kernel", (4,),
             [Buf("x_ptr", "fp32", 3000, scale=8.0), Out("y_ptr", "fp32", 3000), Scalar("n_elements", 3000),
              Scalar("beta", 2.0, "fp32"), Scalar("threshold", 20.0, "fp32")], {"BLOCK": 1024},
             ref=R_.softplus))
    add(Case("row hash through philox_impl", "elementwise_extras.py", "row_hash_kernel", (3, 2),
             [Buf("seeds_ptr", "i32", 3, ("randint", 0, 2**31 - 1)), Out("out_ptr", "i32", 3 * 300),
              Scalar("n_cols", 300), Scalar("stride", 300)], {"N_ROUNDS": 7, "BLOCK": 256},
             ref=R_.row_hash))
    # libdevice_bits.py: libdevice's bit casts, rounding modes and integer functions
    def _normal_floats(rng, n):  # normal fp32 values of either sign over many binades
        return (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-20, 20, n) * rng.choice([-1, 1], n))
    add(Case("float parts through libdevice", "libdevice_bits.py", "float_parts_kernel", (3,),
             [Buf("x_ptr", "fp32", 700, _normal_floats), Out("exp_ptr", "i32", 700),
              Out("mant_ptr", "fp32", 700), Out("fixed_ptr", "i32", 4 * 700), Scalar("n_elements", 700)],
             {"FRAC_BITS": 4, "BLOCK": 256}, ref=R_.float_parts))
    add(Case("bit statistics through libdevice", "libdevice_bits.py", "bit_stats_kernel", (4,),
             [Buf("w_ptr", "i32", 1000, ("randint", -2**31, 2**31 - 1)), Out("out_ptr", "i32", 4 * 1000),
              Scalar("n_elements", 1000)], {"BLOCK": 256}, ref=R_.bit_stats))
    # tuple_params.py: tuple kernel arguments (pointer tuples, nested stride tuples, None items)
    SQ, SK, HD = 70, 50, 64
    add(Case("qk scores, pointer and stride tuples", "tuple_params.py", "qk_scores_kernel", (3, 2),
             [Tuple("qk", [Buf("q", "fp16", SQ * HD), Buf("k", "fp16", SK * HD)]), Out("scores", "fp32", SQ * SK),
              Tuple("strides", [Tuple("q_strides", [Scalar("stride_qm", HD), Scalar("stride_qd", 1)]),
                                Tuple("k_strides", [Scalar("stride_kn", HD), Scalar("stride_kd", 1)]),
                                Tuple("out_strides", [Scalar("stride_om", SK), Scalar("stride_on", 1)])]),
              Scalar("seq_q", SQ), Scalar("seq_k", SK), Scalar("head_dim", HD), Scalar("sm_scale", 0.125, "fp32")],
             {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_D": 32}, ref_tol={"fp32": (1e-3, 1e-3)}, ref=R_.qk_scores))
    add(Case("qk scores, K read through a transposed view", "tuple_params.py", "qk_scores_kernel", (3, 2),
             [Tuple("qk", [Buf("q", "fp16", SQ * HD), Buf("k", "fp16", SK * HD)]), Out("scores", "fp32", SQ * SK),
              Tuple("strides", [Tuple("q_strides", [Scalar("stride_qm", HD), Scalar("stride_qd", 1)]),
                                Tuple("k_strides", [Scalar("stride_kn", 1), Scalar("stride_kd", SK)]),
                                Tuple("out_strides", [Scalar("stride_om", SK), Scalar("stride_on", 1)])]),
              Scalar("seq_q", SQ), Scalar("seq_k", SK), Scalar("head_dim", HD), Scalar("sm_scale", 0.125, "fp32")],
             {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_D": 16}, ref_tol={"fp32": (1e-3, 1e-3)}, ref=R_.qk_scores))
    n_fe = 1000
    add(Case("foreach add over three tensors", "tuple_params.py", "foreach_add_kernel", (4,),
             [Tuple("srcs", [Buf(f"src{i}", "fp32", n_fe) for i in range(3)]),
              Tuple("others", [Buf(f"other{i}", "fp32", n_fe) for i in range(3)]),
              Tuple("dsts", [Out(f"dst{i}", "fp32", n_fe) for i in range(3)]),
              Scalar("alpha", 0.5, "fp32"), Scalar("n_elements", n_fe)], {"BLOCK": 256}, ref=R_.foreach_add))
    add(Case("foreach add, one fp16 tensor", "tuple_params.py", "foreach_add_kernel", (2,),
             [Tuple("srcs", [Buf("src0", "fp16", 300)]), Tuple("others", [Buf("other0", "fp16", 300)]),
              Tuple("dsts", [Out("dst0", "fp16", 300)]), Scalar("alpha", -2.0, "fp32"),
              Scalar("n_elements", 300)], {"BLOCK": 256}, ref=R_.foreach_add))
    add(Case("per-tensor sum of squares over (pointer, length) pairs", "tuple_params.py",
             "multi_tensor_sumsq_kernel", (4,),
             [Tuple("tensors", [Tuple("t0", [Buf("x0", "fp32", 700), Scalar("n0", 700)]),
                                Tuple("t1", [Buf("x1", "fp16", 300), Scalar("n1", 300)]),
                                Tuple("t2", [Buf("x2", "fp32", 1000), Scalar("n2", 1000)])]),
              Out("sumsq", "fp32", 4 * 3)], {"BLOCK": 256}, ref=R_.multi_tensor_sumsq))
    for res, bias in ((True, False), (False, True), (True, True)):
        extras = [Buf("residual", "fp32", 1000) if res else Null("residual"),
                  Buf("bias", "fp32", 256) if bias else Null("bias")]
        add(Case(f"residual add, residual {'given' if res else 'None'}, bias {'given' if bias else 'None'}",
                 "tuple_params.py", "residual_add_kernel", (4,),
                 [Buf("x", "fp32", 1000), Tuple("extras", extras), Out("out", "fp32", 1000),
                  Scalar("n_elements", 1000)], {"BLOCK": 256}, ref=R_.residual_add))
    # fp8_e4b15.py: Triton's software fp8 kept in uint8 storage
    F8 = 3000
    add(Case("fp8e4b15 absmax for the scale", "fp8_e4b15.py", "_absmax_kernel", (3,),
             [Buf("x", "fp32", F8, scale=3.0), Buf("amax", "fp32", 1, "zeros", out=True),
              Scalar("n_elements", F8)], {"BLOCK": 1024}, ref=R_.fp8e4b15_absmax))
    for dt, init in (("fp32", _b15_inputs), ("fp16", "randn")):
        add(Case(f"fp8e4b15 per-tensor quant, {dt} in", "fp8_e4b15.py", "_quant_fp8e4b15_kernel", (3,),
                 [Buf("x", dt, F8, init, scale=3.0), Buf("amax", "fp32", 1, ("fill", 3.5)),
                  Out("q", "u8", F8), Out("scale", "fp32", 1), Scalar("n_elements", F8)],
                 {"EPS": 1e-12, "BLOCK": 1024}, ref=R_.fp8e4b15_quant))
    add(Case("fp8e4b15 dequant to fp16", "fp8_e4b15.py", "_dequant_fp8e4b15_kernel", (3,),
             [Buf("q", "u8", F8, ("randint", 0, 256)), Buf("scale", "fp32", 1, ("fill", 0.75)),
              Out("out", "fp16", F8), Scalar("n_elements", F8)], {"BLOCK": 1024},
             ref=R_.fp8e4b15_dequant))
    FM, FN, FK = 70, 50, 80
    add(Case("fp8e4b15 matmul from uint8 codes", "fp8_e4b15.py", "_fp8e4b15_matmul_kernel", (3, 2),
             [Buf("a", "u8", FM * FK, ("randint", 0, 256)), Buf("b", "u8", FK * FN, ("randint", 0, 256)),
              Out("c", "fp32", FM * FN), Buf("a_scale", "fp32", 1, ("fill", 0.5)),
              Buf("b_scale", "fp32", 1, ("fill", 1.5)), Scalar("M", FM), Scalar("N", FN), Scalar("K", FK),
              Scalar("stride_am", FK), Scalar("stride_ak", 1), Scalar("stride_bk", FN),
              Scalar("stride_bn", 1), Scalar("stride_cm", FN), Scalar("stride_cn", 1)],
             {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, ref=R_.fp8e4b15_matmul))
    # map_elementwise.py: per-element branches and loops, pack=2 and pack=4
    M = 3000
    add(Case("soft clip (if/elif/else per element)", "map_elementwise.py", "soft_clip_kernel", (3,),
             [Buf("x_ptr", "fp32", M, scale=3.0), Out("y_ptr", "fp32", M), Scalar("n_elements", M),
              Scalar("lo", -1.5, "fp32"), Scalar("hi", 2.0, "fp32")], {"BLOCK": 1024},
             ref=R_.soft_clip))
    add(Case("selu (early returns per element)", "map_elementwise.py", "selu_kernel", (3,),
             [Buf("x_ptr", "fp16", M, scale=2.0), Out("y_ptr", "fp16", M), Scalar("n_elements", M)],
             {"BLOCK": 1024}, ref=R_.selu))
    add(Case("bit statistics (while loops per element)", "map_elementwise.py", "bit_stats_kernel", (2,),
             [Buf("v_ptr", "i32", 1000, _bit_patterns), Out("count_ptr", "i32", 1000),
              Out("msb_ptr", "i32", 1000), Scalar("n_elements", 1000)], {"BLOCK": 512},
             ref=R_.bit_stats_loops))
    add(Case("cube root (bounded Newton per element)", "map_elementwise.py", "cbrt_kernel", (3,),
             [Buf("x_ptr", "fp32", M, _some_zeros), Out("y_ptr", "fp32", M), Scalar("n_elements", M)],
             {"BLOCK": 1024}, ref=R_.cbrt))
    T, D = 37, 64
    add(Case("interleaved rope (pack=2)", "map_elementwise.py", "rope_interleaved_kernel", (3,),
             [Buf("x_ptr", "fp16", T * D), Buf("cos_ptr", "fp32", T * D, _pairs),
              Buf("sin_ptr", "fp32", T * D, _pairs), Out("out_ptr", "fp16", T * D),
              Scalar("seq_len", T), Scalar("stride_tok", D)], {"HEAD_DIM": D, "BLOCK_T": 16},
             ref=R_.rope_interleaved))
    add(Case("group-of-4 absmax (pack=4)", "map_elementwise.py", "absmax4_kernel", (3,),
             [Buf("x_ptr", "fp32", M, _zero_groups), Out("y_ptr", "fp32", M),
              Out("scale_ptr", "fp32", M // 4), Scalar("n_elements", M)], {"BLOCK": 1024},
             ref=R_.absmax4))
    for path in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                              "corpus_cases_*.py"))):
        # more cases, a module each: corpus_cases_NAME.cases() -> [Case]
        name = os.path.splitext(os.path.basename(path))[0]
        out += importlib.import_module(name).cases()
    # a case is found again by its name (the Triton worker gets only the name)
    seen = set()
    for c in out:
        if c.name in seen:
            raise ValueError(f"two corpus cases are named {c.name!r}")
        seen.add(c.name)
    return out
