"""Cold compile times of the tensor-core kernels, tk against Triton, split into
the compiler's own part (source to PTX) and the PTX assembler's (PTX to cubin).

For each kernel: tkc's wall time to PTX (a fresh process), ptxas on tk's PTX,
the CUDA driver's JIT (cuModuleLoadData) on the same PTX, Triton's whole cold
compile (a fresh cache directory; it runs ptxas itself) and ptxas on Triton's
PTX. Medians of --reps runs. Usage:
    python3 bench/compile_time.py --tkc .carry/build/tkc [--reps 5] [--arch sm_90a]
"""
import argparse
import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm import ATTENTION, MATMUL, load_module  # noqa: E402

# the specialisations Triton makes for the arguments triton_compile passes
# (sizes and strides divisible by 16, unit strides)
MM_SIG = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1"
ATT_SIG = "*fp16:16,*fp16:16,*fp16:16,*fp16:16,fp32,i32:16,i32:16,i32:16,i32:1,i32:16,i32:16"


def jobs():
    """(label, source, kernel, tkc signature, constexprs, warps, stages)"""
    mm = lambda bn: {"BM": 128, "BN": bn, "BK": 64, "GROUP": 8}  # noqa: E731
    return [("matmul 128x128x64", MATMUL, "matmul", MM_SIG, mm(128), 8, 3),
            ("matmul 128x256x64", MATMUL, "matmul", MM_SIG, mm(256), 8, 3),
            ("attention D64 causal", ATTENTION, "attn_fwd", ATT_SIG,
             {"D": 64, "BM": 128, "BN": 64, "CAUSAL": 1}, 4, 3)]


def timed(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def tk_ptx(tkc, arch, job, path):
    _, src, kern, sig, consts, warps, stages = job
    cmd = [tkc, src, "-k", kern, "-s", sig, "--arch", arch, "--num-warps", str(warps),
           "--num-stages", str(stages), "-o", path]
    if arch == "sm_90a":
        cmd.append("--tma")
    for k, v in consts.items():
        cmd += ["-D", f"{k}={v}"]
    subprocess.run(cmd, check=True)


def ptxas_ms(ptxas, path, reps):
    """ptxas for the target the PTX names, as the driver would."""
    text = open(path).read()
    arch = next(ln.split()[1].rstrip(",") for ln in text.splitlines()
                if ln.startswith(".target"))
    cmd = [ptxas, f"-arch={arch}", path, "-o", path + ".cubin"]

    def run():
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return timed(run, reps)


def driver_ms(ptx, reps):
    cuda = ctypes.CDLL("libcuda.so.1")
    text = ctypes.c_char_p(ptx.encode() + b"\0")

    def load():
        mod = ctypes.c_void_p()
        r = cuda.cuModuleLoadData(ctypes.byref(mod), text)
        if r != 0:
            raise RuntimeError(f"cuModuleLoadData: {r}")
        cuda.cuModuleUnload(mod)
    return timed(load, reps)


def triton_compile(torch, job, reps):
    """Median cold compile in ms and the PTX of the last one."""
    label, src, kern, _, consts, warps, stages = job
    mod = load_module(src, "ct_" + kern)
    fn = getattr(mod, kern)
    h = torch.empty(64, device="cuda", dtype=torch.float16)
    if kern == "matmul":
        args = [h, h, h, 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1]
    else:
        args = [h, h, h, h, 0.125, 4096 * 64, 4096 * 64, 64, 1, 32, 4096]
    ptx = [None]

    def once():
        d = tempfile.mkdtemp()
        os.environ["TRITON_CACHE_DIR"] = d
        k = fn.warmup(*args, grid=(1,), num_warps=warps, num_stages=stages, **consts)
        ptx[0] = k.asm["ptx"]
        shutil.rmtree(d)
    fn.device_caches.clear()
    t = []
    for _ in range(reps):
        fn.device_caches.clear()
        t.append(timed(once, 1))
    return statistics.median(t), ptx[0]


def triton_ptxas():
    from triton.backends.nvidia import compiler  # noqa: F401
    base = os.path.dirname(compiler.__file__)
    path = os.path.join(base, "bin", "ptxas")
    return path if os.path.exists(path) else shutil.which("ptxas")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tkc", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--arch", default="sm_90a")
    a = ap.parse_args()
    os.environ["CUDA_CACHE_DISABLE"] = "1"
    if a.arch == "sm_80":  # Triton for the same target, so the PTX compares like for like
        os.environ.setdefault("TRITON_OVERRIDE_ARCH", "sm80")
    import torch
    torch.ones(1, device="cuda")  # makes the primary context current for the driver calls
    ptxas = triton_ptxas()
    pa = a.arch
    print(f"device: {torch.cuda.get_device_name()}, ptxas: {ptxas}, arch {pa}")
    print("| kernel | tkc to PTX | ptxas (tk) | driver JIT (tk) | Triton cold | ptxas (Triton) |"
          " driver JIT (Triton) | PTX lines tk / Triton |")
    print("|---|---|---|---|---|---|---|---|")
    work = tempfile.mkdtemp()
    for job in jobs():
        p = os.path.join(work, "tk.ptx")
        tkc_ms = timed(lambda: tk_ptx(a.tkc, pa, job, p), a.reps)
        tk_text = open(p).read()
        tk_as = ptxas_ms(ptxas, p, a.reps)
        tk_drv = driver_ms(tk_text, a.reps)
        tri_ms, tri_text = triton_compile(torch, job, a.reps)
        q = os.path.join(work, "tri.ptx")
        open(q, "w").write(tri_text)
        tri_as = ptxas_ms(ptxas, q, a.reps)
        tri_drv = driver_ms(tri_text, a.reps)
        print(f"| {job[0]} | {tkc_ms:.0f} ms | {tk_as:.0f} ms | {tk_drv:.0f} ms | {tri_ms:.0f} ms |"
              f" {tri_as:.0f} ms | {tri_drv:.0f} ms | {tk_text.count(chr(10))} /"
              f" {tri_text.count(chr(10))} |", flush=True)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
