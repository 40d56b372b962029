#!/usr/bin/env python3
"""run.py: differential testing of tk on random kernels from gen.py.

    run.py --seed S --count N [--mode ci|gpu] --out DIR [--tkc PATH] [--jobs J]
    run.py --file K.py [--file ...] ...     # kernel files with a difftest header
    run.py --self-check                    # the comparison must catch a wrong output

For each kernel (seeds S .. S+N-1):
  ci   generate it; run it on tk's interpreter (`tkc -run`); compare every
       buffer with tkref.py, the independent Python reference (integers
       exactly, floats with the output's tolerance class plus the reference's
       per-element error bound); compile it to PTX with tkc for sm_80 and
       sm_90 and, when ptxas is found, assemble both.
  gpu  all of ci, and also run it on the GPU with `tkc -run --gpu` and under
       Triton (torch tensors made from the same .bin inputs), and compare
       interpreter, tk GPU, Triton and the reference pairwise.

Every failure is reported on one line and its kernel saved under --out, with
the commands that reproduce it.  Exit status 1 if any kernel failed.
"""
import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402
import tkref as R  # noqa: E402

TIMEOUT = 120


# ------------------------------------------------------------------ comparison

def compare(dt, got, want, errs, tol, slack=2.0):
    """Compares one buffer.  Returns None if it matches, else a dict with the
    number of differing elements, the first index, the max error."""
    rtol, atol = (tol or {}).get("rtol", 0.0), (tol or {}).get("atol", 0.0)
    if len(got) != len(want):
        return {"count": -1, "why": "size %d, want %d" % (len(got), len(want))}
    bad, first, maxerr, worst = 0, None, 0.0, None
    fl = R.is_float(dt)
    for i, (g, w) in enumerate(zip(got, want)):
        if w is None:
            continue
        if not fl:
            ok = g == w
            err = 0.0 if ok else abs(g - w)
            allowed = 0.0
        elif g != g:
            ok, err, allowed = False, float("inf"), 0.0
        elif w in (float("inf"), float("-inf")) or g in (float("inf"), float("-inf")):
            ok = g == w
            err, allowed = (0.0 if ok else float("inf")), 0.0
        else:
            e = errs[i] if errs else 0.0
            err = abs(g - w)
            allowed = atol + rtol * abs(w) + slack * e
            ok = err <= allowed
        if not ok:
            bad += 1
            if first is None:
                first = (i, g, w, allowed)
            if err > maxerr or worst is None:
                maxerr, worst = err, (i, g, w, allowed)
    if not bad:
        return None
    return {"count": bad, "first": first, "maxerr": maxerr, "worst": worst}


def describe(name, dt, n, d):
    if d["count"] < 0:
        return "%s %s[%d]: %s" % (name, dt, n, d["why"])
    i, g, w, allowed = d["first"]
    return ("%s %s[%d]: %d element(s) differ, max error %.6g, first at index %d (got %r, want %r, "
            "allowed %.3g)" % (name, dt, n, d["count"], d["maxerr"], i, g, w, allowed))


# ------------------------------------------------------------------ tools

def find_ptxas(opt):
    if opt == "none":
        return None
    if opt:
        return opt
    p = shutil.which("ptxas")
    if p:
        return p
    for c in ("/usr/local/cuda/bin/ptxas",):
        if os.path.exists(c):
            return c
    return None


def sh(cmd, timeout=TIMEOUT):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", ""


def quote(cmd):
    import shlex
    return " ".join(shlex.quote(c) for c in cmd)


def run_args(meta, indir):
    out = []
    for a in meta["args"]:
        if a["kind"] == "buffer":
            out.append("%s=file:%s:%s" % (a["name"], os.path.join(indir, a["name"] + ".bin"), a["dtype"]))
        else:
            out.append("%s=%s:%r" % (a["name"], a["dtype"], a["value"]))
    return out


def dflags(meta):
    out = []
    for k, v in meta["constexprs"].items():
        out += ["-D", "%s=%s" % (k, v)]
    return out


def read_outputs(meta, d):
    res = {}
    for a in meta["args"]:
        if a["kind"] != "buffer":
            continue
        p = os.path.join(d, a["name"] + ".bin")
        if not os.path.exists(p):
            return None, "no %s" % p
        with open(p, "rb") as f:
            res[a["name"]] = R.decode(f.read(), a["dtype"])
    return res, None


# ------------------------------------------------------------------ one kernel

class Opts:
    pass


def check(src, meta, ref, o, tag):
    """Runs one kernel every way the mode asks; returns a result record."""
    t0 = time.time()
    res = {"tag": tag, "seed": meta.get("seed"), "kernel": meta["kernel"], "status": "pass",
           "problems": [], "features": meta.get("features", []), "src": src}
    work = tempfile.mkdtemp(prefix="k%s-" % meta.get("seed", ""), dir=o.work)
    res["work"] = work
    kfile = os.path.join(work, meta["kernel"] + ".py")
    with open(kfile, "w") as f:
        f.write(src)
    indir = os.path.join(work, "in")
    os.makedirs(indir)
    init = R.initial_buffers(meta)
    for a in meta["args"]:
        if a["kind"] == "buffer":
            with open(os.path.join(indir, a["name"] + ".bin"), "wb") as f:
                f.write(R.encode(init[a["name"]], a["dtype"]))
    if ref is None:
        try:
            ref = R.run(src, meta, init)
        except R.Invalid as ex:
            res["status"] = "invalid"
            res["problems"].append("the reference rejects the kernel: %s" % ex)
            return finish(res, o, t0)
    res["ref"] = None
    grid = ",".join(str(g) for g in meta["grid"])
    base = [o.tkc, "-run", kfile, "-k", meta["kernel"], "--grid", grid] + dflags(meta) + \
        ["--num-warps", str(meta.get("num_warps", 4))]
    res["repro"] = []

    def problem(kind, text):
        order = ["pass", "mismatch", "compile", "crash"]
        if order.index(kind) > order.index(res["status"]):
            res["status"] = kind
        res["problems"].append(text)

    runs = {}
    # 1. the interpreter
    idir = os.path.join(work, "interp")
    cmd = base + ["-o", idir] + run_args(meta, indir)
    res["repro"].append(quote(cmd))
    rc, out = sh(cmd)
    if rc != 0:
        problem("crash" if rc == "timeout" or (isinstance(rc, int) and rc < 0) else "compile",
                "tkc -run (interpreter) %s: %s" % ("timed out" if rc == "timeout" else "exit %s" % rc,
                                                   out.strip()[-800:]))
    else:
        got, why = read_outputs(meta, idir)
        if got is None:
            problem("crash", "interpreter: " + why)
        else:
            runs["tk-interp"] = got
    # 2. PTX, assembled for sm_80 and sm_90 (every fourth kernel is also
    # compiled for sm_90 itself)
    builds = [("sm_80", ("sm_80", "sm_90"))]
    if (meta.get("seed") or 0) % 4 == 0:
        builds.append(("sm_90", ("sm_90",)))
    for arch, targets in builds:
        ptx = os.path.join(work, "%s.%s.ptx" % (meta["kernel"], arch))
        cmd = [o.tkc, kfile, "-k", meta["kernel"]] + dflags(meta) + \
            ["-s", meta["signature"], "--arch", arch, "--num-warps", str(meta.get("num_warps", 4)),
             "-o", ptx]
        rc, out = sh(cmd)
        if rc != 0:
            res["repro"].append(quote(cmd))
            problem("crash" if rc == "timeout" or (isinstance(rc, int) and rc < 0) else "compile",
                    "tkc --arch %s: %s" % (arch, out.strip()[-800:]))
            continue
        for target in targets if o.ptxas else ():
            cmd = [o.ptxas, "-arch=" + target, ptx, "-o", os.devnull]
            rc, out = sh(cmd)
            if rc != 0:
                res["repro"].append(quote(cmd))
                problem("compile", "ptxas -arch=%s (PTX for %s): %s" % (target, arch, out.strip()[-800:]))
    # 3. the GPU, through tk and through Triton
    if o.mode == "gpu":
        gdir = os.path.join(work, "gpu")
        cmd = base + ["--gpu", "-o", gdir] + run_args(meta, indir)
        res["repro"].append(quote(cmd))
        rc, out = sh(cmd)
        if rc != 0:
            problem("crash" if rc == "timeout" or (isinstance(rc, int) and rc < 0) else "compile",
                    "tkc -run --gpu: exit %s: %s" % (rc, out.strip()[-800:]))
        else:
            got, why = read_outputs(meta, gdir)
            if got is None:
                problem("crash", "tk gpu: " + why)
            else:
                runs["tk-gpu"] = got
    res["runs"] = runs
    res["refvals"] = ref
    compare_all(res, meta, problem)
    return finish(res, o, t0)


def compare_all(res, meta, problem):
    """Each run against the reference, and the runs pairwise."""
    ref, runs = res["refvals"], res["runs"]
    bufs = [a for a in meta["args"] if a["kind"] == "buffer"]
    for who, got in runs.items():
        for a in bufs:
            want, errs = ref[a["name"]]
            d = compare(a["dtype"], got[a["name"]], want, errs, a.get("tol"))
            if d:
                problem("mismatch", "%s vs reference: %s" % (who, describe(a["name"], a["dtype"], a["size"], d)))
    names = sorted(runs)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            x, y = names[i], names[j]
            for a in bufs:
                _, errs = ref[a["name"]]
                d = compare(a["dtype"], runs[x][a["name"]], runs[y][a["name"]], errs,
                            _double(a.get("tol")), slack=4.0)
                if d:
                    problem("mismatch", "%s vs %s: %s" % (x, y, describe(a["name"], a["dtype"], a["size"], d)))


def _double(tol):
    if not tol:
        return tol
    return {"rtol": 2 * tol.get("rtol", 0.0), "atol": 2 * tol.get("atol", 0.0)}


def finish(res, o, t0):
    res["time"] = time.time() - t0
    res.pop("refvals", None)
    if res["status"] == "pass" and not o.keep:
        shutil.rmtree(res["work"], ignore_errors=True)
    if o.mode != "gpu":
        res.pop("runs", None)
    return res


def job(args):
    seed, o = args
    t0 = time.time()
    try:
        src, meta, ref, attempt = gen.generate(seed, o.all_constructs)
    except Exception as ex:  # a generator failure is reported, not raised
        return {"tag": "seed %d" % seed, "seed": seed, "status": "generator", "problems": [str(ex)],
                "features": [], "time": time.time() - t0, "src": None}
    res = check(src, meta, ref, o, "seed %d" % seed)
    res["meta"] = meta
    res["gen_time"] = res["time"]
    return res


def file_job(args):
    path, o = args
    with open(path) as f:
        src = f.read()
    meta = gen.read_header(src)
    res = check(src, meta, None, o, path)
    res["meta"] = meta
    return res


# ------------------------------------------------------------------ triton (gpu mode)

TORCH = {"i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
         "u16": "uint16", "u32": "uint32", "u64": "uint64", "fp16": "float16", "bf16": "bfloat16",
         "fp32": "float32", "fp64": "float64", "i1": "bool"}
SIGNED_VIEW = {"u16": "int16", "u32": "int32", "u64": "int64", "bf16": "int16", "fp16": "int16"}


def run_triton(res):
    """Runs the kernel under Triton in this process; adds res['runs']['triton']."""
    import importlib.util
    import numpy  # noqa: F401  (torch's .numpy() needs it)
    import torch
    meta = res["meta"]
    work = res["work"]
    kfile = os.path.join(work, meta["kernel"] + ".py")
    spec = importlib.util.spec_from_file_location("difftest_" + meta["kernel"], kfile)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # Triton reads the kernel's source through its module
    spec.loader.exec_module(mod)
    kern = getattr(mod, meta["kernel"])
    args, tensors = [], {}
    for a in meta["args"]:
        if a["kind"] == "buffer":
            with open(os.path.join(work, "in", a["name"] + ".bin"), "rb") as f:
                data = bytearray(f.read())
            t = torch.frombuffer(data, dtype=getattr(torch, TORCH[a["dtype"]])).clone().cuda()
            tensors[a["name"]] = t
            args.append(t)
        else:
            args.append(float(a["value"]) if R.is_float(a["dtype"]) else int(a["value"]))
    kern[tuple(meta["grid"])](*args, **meta["constexprs"], num_warps=meta.get("num_warps", 4))
    torch.cuda.synchronize()
    out = {}
    for a in meta["args"]:
        if a["kind"] == "buffer":
            t = tensors[a["name"]].cpu()
            if a["dtype"] in SIGNED_VIEW:
                t = t.view(getattr(torch, SIGNED_VIEW[a["dtype"]]))
            out[a["name"]] = R.decode(t.numpy().tobytes(), a["dtype"])
    return out


def gpu_followup(res, o):
    """Triton's run and the comparisons that involve it (main process)."""
    if res.get("status") in ("generator", "invalid") or "meta" not in res:
        return res
    meta = res["meta"]
    src = res["src"]
    try:
        init = R.initial_buffers(meta)
        ref = R.run(src, meta, init)
    except R.Invalid as ex:
        res["problems"].append("reference: %s" % ex)
        return res
    if not os.path.isdir(res["work"]):  # removed after passing: write the inputs again
        os.makedirs(os.path.join(res["work"], "in"))
        with open(os.path.join(res["work"], meta["kernel"] + ".py"), "w") as f:
            f.write(src)
        for a in meta["args"]:
            if a["kind"] == "buffer":
                with open(os.path.join(res["work"], "in", a["name"] + ".bin"), "wb") as f:
                    f.write(R.encode(init[a["name"]], a["dtype"]))
    runs = dict(res.get("runs") or {})

    def problem(kind, text):
        order = ["pass", "mismatch", "compile", "crash"]
        if res["status"] not in order or order.index(kind) > order.index(res["status"]):
            res["status"] = kind
        res["problems"].append(text)

    try:
        runs["triton"] = run_triton(res)
    except Exception as ex:  # Triton rejects the kernel or fails: a generator problem
        msg = str(ex).strip().splitlines()
        problem("compile", "Triton: %s: %s" % (type(ex).__name__, msg[-1] if msg else ""))
    only = {"triton": runs["triton"]} if "triton" in runs else {}
    # triton against the reference and against each tk run
    res2 = {"refvals": ref, "runs": only}
    compare_all(res2, meta, problem)
    for who in [k for k in runs if k != "triton"]:
        if "triton" not in runs:
            break
        pair = {"refvals": ref, "runs": {who: runs[who], "triton": runs["triton"]}}
        bufs = [a for a in meta["args"] if a["kind"] == "buffer"]
        for a in bufs:
            _, errs = ref[a["name"]]
            d = compare(a["dtype"], runs[who][a["name"]], runs["triton"][a["name"]], errs,
                        _double(a.get("tol")), slack=4.0)
            if d:
                problem("mismatch", "%s vs triton: %s" % (who, describe(a["name"], a["dtype"], a["size"], d)))
    if res["status"] == "pass" and not o.keep:
        shutil.rmtree(res["work"], ignore_errors=True)
    return res


# ------------------------------------------------------------------ reporting

def save_failure(res, o):
    """Saves the kernel, its inputs and the commands that reproduce the failure."""
    os.makedirs(o.out, exist_ok=True)
    base = "fail-%s" % (res["seed"] if res.get("seed") is not None else
                        os.path.basename(res["tag"]).replace(".py", ""))
    kpath = os.path.join(o.out, base + ".py")
    repro = list(res.get("repro") or [])
    work = res.get("work")
    if res.get("src"):
        with open(kpath, "w") as f:
            f.write(res["src"])
    if work and os.path.isdir(os.path.join(work, "in")):
        ind = os.path.join(o.out, base + ".in")
        shutil.rmtree(ind, ignore_errors=True)
        shutil.copytree(os.path.join(work, "in"), ind)
        kname = res["meta"]["kernel"] + ".py" if res.get("meta") else None
        fixed = []
        for c in repro:
            c = c.replace(os.path.join(work, "in"), ind)
            if kname:
                c = c.replace(os.path.join(work, kname), kpath)
            fixed.append(c.replace(work, os.path.join(o.out, base + ".work")))
        repro = fixed
    with open(os.path.join(o.out, base + ".txt"), "w") as f:
        f.write("%s: %s\n" % (res["tag"], res["status"]))
        for p in res["problems"]:
            f.write("  " + p + "\n")
        if repro:
            f.write("\nreproduce:\n")
            for c in repro:
                f.write("  " + c + "\n")
    return kpath


def report(results, o, elapsed):
    n = len(results)
    st = {}
    for r in results:
        st[r["status"]] = st.get(r["status"], 0) + 1
    feats = {}
    for r in results:
        for f in r.get("features", []):
            feats[f] = feats.get(f, 0) + 1
    if o.stats:
        print("features (kernels using each):")
        for k in sorted(feats):
            print("  %-28s %d" % (k, feats[k]))
        att = [r["meta"].get("attempt", 0) for r in results if r.get("meta")]
        if att:
            print("candidates rejected per kept kernel: %.2f" % (sum(att) / len(att)))
    rate = n / elapsed if elapsed > 0 else 0.0
    known = ""
    if st.get("known"):
        known = " (and %d failures explained by known differences, found/README.md)" % st["known"]
    print("difftest (%s): %d kernels, %d passed, %d mismatches, %d compile failures, %d crashes, "
          "%d generator failures%s; %.1f kernels/s" % (
              o.mode, n, st.get("pass", 0), st.get("mismatch", 0), st.get("compile", 0),
              st.get("crash", 0), st.get("generator", 0) + st.get("invalid", 0), known, rate))
    return 0 if st.get("pass", 0) + st.get("known", 0) == n else 1


def explain(res):
    """A failure of a kernel that uses a construct on which tk is known to
    differ from Triton (gen.py's KNOWN, found/README.md) is 'known'."""
    known = [f[6:] for f in res.get("features", []) if f.startswith("known:")]
    if res["status"] in ("mismatch", "compile") and known:
        res["known"] = known
        res["status"] = "known"
    return res


def note(res, o):
    if res["status"] == "known":
        if o.verbose:
            print("known %s: %s (%s)" % (res["tag"], res["problems"][0][:200] if res["problems"] else "",
                                         ", ".join(res["known"])))
        return
    if res["status"] == "pass":
        if o.verbose:
            print("ok   %s (%.2fs)" % (res["tag"], res["time"]))
        return
    path = save_failure(res, o)
    print("FAIL %s: %s -> %s" % (res["tag"], res["status"], path))
    for p in res["problems"][:6]:
        print("     " + p)
    sys.stdout.flush()


# ------------------------------------------------------------------ self-check

def self_check(o):
    """The comparison must report a perturbed output and accept the true one."""
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    # direct checks of compare()
    expect(compare("i32", [1, 2, 3], [1, 2, 3], None, None) is None, "equal ints match")
    expect(compare("i32", [1, 2, 4], [1, 2, 3], None, None) is not None, "int off by one differs")
    expect(compare("u8", [0], [255], None, None) is not None, "wrapped int differs")
    tol = {"rtol": 1e-5, "atol": 1e-6}
    expect(compare("fp32", [1.0], [1.0 + 5e-6], [0.0], tol) is None, "within rtol matches")
    expect(compare("fp32", [1.0], [1.001], [0.0], tol) is not None, "beyond rtol differs")
    expect(compare("fp32", [1.0], [1.001], [0.01], tol) is None, "within the error bound matches")
    expect(compare("fp32", [float("nan")], [1.0], [0.0], tol) is not None, "NaN differs")
    expect(compare("fp32", [float("inf")], [1e38], [0.0], tol) is not None, "inf differs")
    expect(compare("fp16", [0.0, 5.0], [0.0, None], [0.0, 0.0], tol) is None, "undefined ignored")
    # end to end: a few kernels through tk, then their outputs perturbed
    n_ok = 0
    for seed in range(o.seed, o.seed + 6):
        src, meta, ref, _ = gen.generate(seed, False)
        oo = Opts()
        oo.__dict__.update(o.__dict__)
        oo.keep, oo.mode, oo.ptxas = True, "ci", None
        res = check(src, meta, ref, oo, "self-check seed %d" % seed)
        if res["status"] != "pass":
            failures.append("seed %d does not pass unperturbed: %s" % (seed, res["problems"][:2]))
            continue
        idir = os.path.join(res["work"], "interp")
        got, _ = read_outputs(meta, idir)
        outs = [a for a in meta["args"] if a["kind"] == "buffer" and a["role"] in ("out", "atomic")]
        for a in outs:
            want, errs = ref[a["name"]]
            vals = list(got[a["name"]])
            k = len(vals) // 2
            dt = a["dtype"]
            if R.is_float(dt):
                step = max(abs(vals[k]) * 0.25, 0.5) + 4 * (errs[k] if errs else 0.0)
                vals[k] = R.ROUND[dt](vals[k] + step)
            else:
                vals[k] = R.wrap(vals[k] + 1, dt)
            d = compare(dt, vals, want, errs, a.get("tol"))
            expect(d is not None and d["first"][0] == k,
                   "seed %d: perturbed %s[%d] not reported" % (seed, a["name"], k))
            # and through the files: the runner must see it too
            with open(os.path.join(idir, a["name"] + ".bin"), "wb") as f:
                f.write(R.encode(vals, dt))
            got2, _ = read_outputs(meta, idir)
            probs = []
            compare_all({"refvals": ref, "runs": {"tk-interp": got2}}, meta,
                        lambda kind, text: probs.append(text))
            expect(any(a["name"] in p for p in probs),
                   "seed %d: perturbed file %s not reported" % (seed, a["name"]))
            with open(os.path.join(idir, a["name"] + ".bin"), "wb") as f:
                f.write(R.encode(got[a["name"]], dt))
            n_ok += 1
        shutil.rmtree(res["work"], ignore_errors=True)
    expect(n_ok > 0, "no output was perturbed")
    # and the whole pipeline: a kernel checked against a wrong reference is a
    # failure, is not explained away, and makes the exit status 1
    src, meta, ref, _ = gen.generate(o.seed, False)
    outs = [a for a in meta["args"] if a["kind"] == "buffer" and a["role"] in ("out", "atomic")]
    a = outs[0]
    want, errs = ref[a["name"]]
    want = list(want)
    k = next(i for i, w in enumerate(want) if w is not None)
    want[k] = R.ROUND[a["dtype"]](want[k] + 1000.0) if R.is_float(a["dtype"]) else R.wrap(want[k] + 1, a["dtype"])
    bad = dict(ref)
    bad[a["name"]] = (want, errs)
    oo = Opts()
    oo.__dict__.update(o.__dict__)
    oo.keep, oo.mode, oo.ptxas, oo.stats = False, "ci", None, False
    res = explain(check(src, meta, bad, oo, "self-check wrong reference"))
    expect(res["status"] == "mismatch" and any(a["name"] in p for p in res["problems"]),
           "a wrong reference is not reported (status %s)" % res["status"])
    import io
    import contextlib
    with contextlib.redirect_stdout(io.StringIO()):
        rc = report([res], oo, 1.0)
    expect(rc == 1, "the exit status of a run with a mismatch is %d" % rc)
    shutil.rmtree(res.get("work", ""), ignore_errors=True)
    for f in failures:
        print("SELF-CHECK FAIL: " + f)
    print("difftest self-check: %d outputs perturbed, %d failures" % (n_ok, len(failures)))
    return 1 if failures else 0


# ------------------------------------------------------------------ main

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--mode", choices=["ci", "gpu"], default="ci")
    ap.add_argument("--out", default="difftest-out", help="where failing kernels are saved")
    ap.add_argument("--tkc", default=None, help="tkc binary (default: build/tkc)")
    ap.add_argument("--ptxas", default=None, help="ptxas binary, or 'none' (default: PATH, /usr/local/cuda/bin)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--file", action="append", default=[], help="run this kernel file instead of seeds")
    ap.add_argument("--all-constructs", action="store_true",
                    help="also generate constructs on which tk is known to differ from Triton")
    ap.add_argument("--keep", action="store_true", help="keep the work directories of passing kernels")
    ap.add_argument("--stats", action="store_true", help="print construct coverage")
    ap.add_argument("--self-check", action="store_true", help="check that the comparison catches a wrong output")
    ap.add_argument("--time-limit", type=float, default=0,
                    help="stop after this many seconds and report the kernels finished so far")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    o = Opts()
    o.__dict__.update(vars(a))
    root = os.path.abspath(os.path.join(HERE, "..", ".."))
    o.tkc = os.path.abspath(a.tkc or os.path.join(root, "build", "tkc"))
    if not os.path.exists(o.tkc):
        print("run.py: no tkc at %s (--tkc)" % o.tkc)
        return 2
    o.ptxas = find_ptxas(a.ptxas)
    o.out = os.path.abspath(a.out)
    o.work = tempfile.mkdtemp(prefix="difftest-")
    try:
        if a.self_check:
            return self_check(o)
        t0 = time.time()
        if a.file:
            tasks, fn = [(os.path.abspath(p), o) for p in a.file], file_job
        else:
            tasks, fn = [(s, o) for s in range(a.seed, a.seed + a.count)], job
        results = []
        if not o.ptxas and a.verbose:
            print("run.py: no ptxas; PTX is generated but not assembled")
        # workers are forked before anything imports torch (gpu mode runs Triton here)
        with multiprocessing.Pool(max(1, a.jobs)) as pool:
            for res in pool.imap_unordered(fn, tasks):
                if a.mode == "gpu":
                    res = gpu_followup(res, o)
                note(explain(res), o)
                res.pop("src", None)
                results.append(res)
                if a.time_limit and time.time() - t0 > a.time_limit:
                    pool.terminate()  # the kernels still running are not counted
                    print("run.py: time limit reached after %d kernels" % len(results))
                    break
        results.sort(key=lambda r: (r.get("seed") or 0, r["tag"]))
        return report(results, o, time.time() - t0)
    finally:
        shutil.rmtree(o.work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
