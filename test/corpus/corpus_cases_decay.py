"""Cases of decay_attention.py and their float64 references."""
import numpy as np

from corpus_cases import Buf, Case, Out


def decay_ref(v, c, s):
    C, D = c["C"], c["D"]
    q, k, w = (v[n].astype(np.float64).reshape(-1, D) for n in ("q", "k", "v"))
    n = q.shape[0]
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    same_or_earlier = (j // C <= i // C) & (i >= j)
    decay = np.where(same_or_earlier, np.exp(-float(v["s"][0]) * np.maximum(i - j, 0)), 0.0)
    return {"o": ((q @ k.T) * decay @ w).ravel()}


def cases():
    out = []
    for C, D, warps in ((64, 64, 4), (64, 32, 8)):
        n = 3 * C
        out.append(Case(
            f"decayed linear attention, {C}-token blocks, head dim {D}, {warps} warps",
            "decay_attention.py", "decay_attn_kernel", (n // C,),
            [Buf("q", "bf16", n * D, scale=0.5), Buf("k", "bf16", n * D, scale=0.5),
             Buf("v", "bf16", n * D), Buf("s", "fp32", 1, ("fill", 0.05)),
             Out("o", "fp32", n * D)],
            {"C": C, "D": D}, num_warps=warps,
            tol={"fp32": (2e-2, 2e-2)}, ref=decay_ref))
    return out
