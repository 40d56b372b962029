"""compare.py OUT_A OUT_B: for each case libdiff.py saved in both folders,
the largest relative error (by norm) over its outputs and gradients, and
the time ratio A/B where both were timed, of the whole step and of the
library's own kernels in it, with the geomean of the latter over the cases;
a case that failed in B says so."""
import glob
import math
import os
import sys

import torch


def worst(x, y):
    err, note = 0.0, ""
    for part in ("outs", "grads"):
        if len(x[part]) != len(y[part]):
            return float("nan"), "%s: %d vs %d tensors" % (part, len(x[part]), len(y[part]))
        for i, (u, v) in enumerate(zip(x[part], y[part])):
            if u.shape != v.shape:
                return float("nan"), "%s[%d]: shape %s vs %s" % (part, i, tuple(u.shape), tuple(v.shape))
            fu, fv = torch.isfinite(u), torch.isfinite(v)
            nu, nv = u[~fu], v[~fv]
            if not torch.equal(fu, fv) or not torch.equal(nu.isnan(), nv.isnan()) or \
                    not torch.equal(nu.nan_to_num(0.0, 1.0, -1.0), nv.nan_to_num(0.0, 1.0, -1.0)):
                # a NaN or an infinity where the other side has none (or
                # another): no norm hides it
                return float("inf"), "%s[%d]: %d vs %d elements not finite" % (
                    part, i, (~fu).sum().item(), (~fv).sum().item())
            u, v = u[fu].double(), v[fv].double()
            e = ((u - v).norm() / max(u.norm().item(), 1e-30)).item()
            if e != e:
                return float("inf"), "%s[%d]: the norm is not finite" % (part, i)
            err = max(err, e)
    return err, note


def kernels(x, y):
    """The library's kernels' device time per step on each side, and their
    ratio; None where either side was not timed or ran none."""
    ka, kb = sum(x.get("kernels", {}).values()), sum(y.get("kernels", {}).values())
    return (ka, kb, ka / kb) if ka > 0 and kb > 0 else None


def main():
    a, b = sys.argv[1], sys.argv[2]
    logs = []
    for path in sorted(glob.glob(os.path.join(a, "*.pt"))):
        name = os.path.splitext(os.path.basename(path))[0]
        other = os.path.join(b, name + ".pt")
        if not os.path.exists(other):
            failed = os.path.exists(os.path.join(b, name + ".err"))
            print("%-36s %s" % (name, "FAILED in B" if failed else "missing in B"))
            continue
        x, y = torch.load(path), torch.load(other)
        err, note = worst(x, y)
        ratio = ""
        if "ms" in x and "ms" in y:
            ratio = "A %.3f ms, B %.3f ms, A/B %.2f" % (x["ms"], y["ms"], x["ms"] / y["ms"])
        k = kernels(x, y)
        if k:
            ratio += "; kernels A %.1f us, B %.1f us, A/B %.2f" % k
            logs.append(math.log(k[2]))
        print("%-36s rel. err %.2e %s %s" % (name, err, note, ratio))
    if logs:
        print("kernels A/B geomean %.3f over %d cases, lowest %.2f" % (
            math.exp(sum(logs) / len(logs)), len(logs), math.exp(min(logs))))


if __name__ == "__main__":
    main()
