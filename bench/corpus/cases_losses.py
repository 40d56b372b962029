"""Corpus cases: training-side kernels around the loss and the optimizer
(a generalised Jensen-Shannon distillation loss with its gradient, a fused
AdamW step over a flat parameter slab) and bitsandbytes-style blockwise
8-bit quantization against a 256-entry codebook."""
import numpy as np

from registry import F32, I32, Buf, case, cdiv, floats, out, to_dt

IGNORE_INDEX = -100


def f32(v):
    """A runtime float as the kernel sees it (rounded to fp32)."""
    return float(np.float32(v))


# ---- generalised JSD with the student gradient ------------------------------------------

def log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def jsd_make(rng, S):
    bt, v, dt = S["bt"], S["v"], S["dt"]
    teacher = rng.standard_normal((bt, v)) * 2.0
    student = teacher + rng.standard_normal((bt, v)) * 1.5
    labels = rng.integers(0, v, bt)
    if S["labels"]:
        labels[rng.random(bt) < 0.1] = IGNORE_INDEX
        labels[1] = IGNORE_INDEX  # at least one ignored row at every size
    return {"student": Buf(to_dt(log_softmax(student), dt), dt),
            "teacher": Buf(to_dt(log_softmax(teacher), dt), dt),
            "labels": Buf(labels, "i64"), "loss": out(bt, "f32"), "dstudent": out((bt, v), dt)}


def jsd_n_non_ignore(S, b):
    if not S["labels"]:
        return S["bt"]
    return max(int((b["labels"].arr != IGNORE_INDEX).sum()), 1)


def jsd_ref(X, S):
    s, t, beta = X["student"], X["teacher"], f32(S["beta"])
    q, p = np.exp(s), np.exp(t)
    if beta == 0.0:
        elem, grad = p * (t - s), -p
    elif beta == 1.0:
        elem = q * (s - t)
        grad = elem + q
    else:
        log_m = np.log(beta * p + (1 - beta) * q)
        grad = (1 - beta) * q * (s - log_m)
        elem = beta * p * (t - log_m) + grad
    keep = (X["labels"] != IGNORE_INDEX) if S["labels"] else np.ones(S["bt"], dtype=bool)
    n = max(int(keep.sum()), 1)
    return {"loss": elem.sum(axis=1) / n * keep, "dstudent": grad / n * keep[:, None]}


def jsd_args(S, b):
    v = S["v"]
    return ["student", I32(v), "teacher", I32(v), "loss", "dstudent", I32(v),
            "labels" if S["labels"] else "loss", F32(S["beta"]), I32(jsd_n_non_ignore(S, b)),
            I32(IGNORE_INDEX), I32(v)]


for nm, gpu, interp in (
        # the mixture (0 < beta < 1), bf16 log-probs over the Llama-3 vocabulary, ignored rows
        ("jsd_loss_online", dict(bt=1024, v=128256, beta=0.5, dt="bf16", labels=True, BV=2048,
                                 warps=8),
         dict(bt=7, v=300, beta=0.5, dt="bf16", labels=True, BV=64)),
        # beta = 0: the forward-KL branch, fp32 log-probs, no labels
        ("jsd_loss_forward_kl_f32", dict(bt=2048, v=32000, beta=0.0, dt="f32", labels=False,
                                         BV=2048, warps=8),
         dict(bt=5, v=200, beta=0.0, dt="f32", labels=False, BV=64))):
    case(name=nm, klass="loss", module="jsd_loss.py", kernel="jsd_fwd_bwd_kernel",
         make=jsd_make, args=jsd_args,
         consts=lambda S: dict(HAS_LABEL=S["labels"], BLOCK_V=S["BV"]),
         grid=lambda S: (S["bt"],), ref=jsd_ref,
         shape=lambda S: f"{S['bt']}x{S['v']} {S['dt']} beta={S['beta']}",
         gpu=gpu, interp=interp, tol={"loss": 1e-4, "dstudent": 6e-3})


# ---- fused AdamW step ---------------------------------------------------------------------

ADAM = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, wd=1e-2)


def adamw_make(rng, S):
    n = S["n"]
    d = {"param": floats(rng, n, "f32", 0.02), "grad": floats(rng, n, S["gdt"]),
         "exp_avg": floats(rng, n, "f32", 0.1),
         "exp_avg_sq": Buf(np.square(rng.standard_normal(n) * 0.1), "f32")}
    for k in ("param", "exp_avg", "exp_avg_sq"):
        d[k].inout = True
    return d


def adamw_ref(X, S):
    lr, b1, b2, eps, wd = (f32(ADAM[k]) for k in ("lr", "beta1", "beta2", "eps", "wd"))
    step, g = S["step"], X["grad"]
    m = b1 * X["exp_avg"] + (1 - b1) * g
    v = b2 * X["exp_avg_sq"] + (1 - b2) * g * g
    bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
    p = X["param"] * (1 - lr * wd) - lr / bc1 * m / (np.sqrt(v) / np.sqrt(bc2) + eps)
    return {"param": p, "exp_avg": m, "exp_avg_sq": v}


case(name="adamw_fused_step", klass="optimizer", module="adamw_fused.py",
     kernel="adamw_step_kernel", make=adamw_make,
     args=lambda S, b: ["param", "grad", "exp_avg", "exp_avg_sq", I32(S["n"]),
                        F32(ADAM["lr"]), F32(ADAM["beta1"]), F32(ADAM["beta2"]), F32(ADAM["eps"]),
                        F32(ADAM["wd"]), I32(S["step"])],
     consts=lambda S: dict(BLOCK_SIZE=S["BS"]), grid=lambda S: (cdiv(S["n"], S["BS"]),),
     ref=adamw_ref, shape=lambda S: f"{S['n']} grad {S['gdt']} step {S['step']}",
     gpu=dict(n=1 << 26, gdt="bf16", step=10, BS=1024, warps=4),
     interp=dict(n=3001, gdt="bf16", step=7, BS=256), tol=2e-6)


# ---- blockwise 8-bit quantization --------------------------------------------------------

def dynamic_codebook():
    """256 sorted values in [-1, 1]: zero, 127 positive and 128 negative
    magnitudes spaced evenly in log2 between 2^-7 and 1."""
    pos = 2.0 ** np.linspace(-7.0, 0.0, 127)
    neg = -(2.0 ** np.linspace(-7.0, 0.0, 128))
    return np.sort(np.concatenate([neg, [0.0], pos])).astype(np.float32)


def quant_make(rng, S):
    n = S["n"]
    return {"x": floats(rng, n, S["dt"], 3.0), "code": Buf(dynamic_codebook(), "f32"),
            "q": out(n, "u8"), "absmax": out(cdiv(n, S["QB"]), "f32")}


def quant_ref(X, S):
    n, qb = S["n"], S["QB"]
    nb = cdiv(n, qb)
    x = np.zeros(nb * qb, dtype=np.float32)
    x[:n] = X["x"]
    x = x.reshape(nb, qb)
    absmax = np.abs(x).max(axis=1)
    inv = np.where(absmax > 0, np.float32(1.0) / np.maximum(absmax, np.float32(1e-30)),
                   np.float32(0.0)).astype(np.float32)
    normed = (x * inv[:, None]).astype(np.float32).ravel()[:n]
    code = X["code"].astype(np.float32)
    lo = np.clip(np.searchsorted(code, normed, side="right") - 1, 0, 255)
    hi = np.minimum(lo + 1, 255)
    q = np.where(np.abs(code[hi] - normed) < np.abs(normed - code[lo]), hi, lo)
    return {"q": q.astype(np.float64), "absmax": absmax.astype(np.float64)}


for nm, gpu, interp in (
        # optimizer-state style: fp32 values, blocks of 256, four blocks per program
        ("blockwise_quant_8bit_codebook", dict(n=1 << 26, dt="f32", QB=256, BPP=4, warps=4),
         dict(n=900, dt="f32", QB=64, BPP=2)),
        # weight style: bf16 values, blocks of 4096, one block per program
        ("blockwise_quant_8bit_codebook_bf16_4096",
         dict(n=1 << 27, dt="bf16", QB=4096, BPP=1, warps=8),
         dict(n=1000, dt="bf16", QB=256, BPP=1))):
    case(name=nm, klass="quant", module="blockwise_quant_8bit.py",
         kernel="quantize_blockwise_8bit_kernel", make=quant_make,
         args=lambda S, b: ["x", "code", "q", "absmax", I32(S["n"])],
         consts=lambda S: dict(QBLOCK=S["QB"], BLOCKS_PER_PROG=S["BPP"], CODE_BITS=8),
         grid=lambda S: (cdiv(cdiv(S["n"], S["QB"]), S["BPP"]),), ref=quant_ref,
         shape=lambda S: f"{S['n']} {S['dt']} block {S['QB']}",
         gpu=gpu, interp=interp, tol={"q": 1e-3, "absmax": 0.0})
