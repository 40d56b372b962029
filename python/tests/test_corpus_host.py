"""The corpus kernels written in library idioms (test/corpus/breadth_*.py),
launched through the Python route as a Triton script launches them (numpy
buffers, `python -m tk`, the interpreter) and checked against their float64
references: the package's argument binding over kernels it was not
written for."""
import pytest

from scripts_run import run_script

pytest.importorskip("numpy")


@pytest.mark.parametrize("seed", ["1", "2"])
def test_breadth_corpus_through_python(seed):
    r = run_script("corpus_host.py", "breadth_", seed)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    last = r.stdout.strip().splitlines()[-1]
    assert last.endswith(" passed, 0 failed") and int(last.split()[0]) >= 60, last


# Their host code asks torch.cuda for the GPU when imported or tuned, as it
# would under Triton: with no GPU they cannot run.
GPU_HOST_CODE = ("attention.py", "device_dispatch.py")


@pytest.mark.parametrize("seed", ["1", "2"])
def test_corpus_with_torch_cpu_tensors(seed):
    """Every corpus case that needs no GPU, with CPU PyTorch tensors that
    are slices of larger ones: bf16 and host-built descriptors too, and
    nothing written outside the slices."""
    pytest.importorskip("torch")
    r = run_script("corpus_host.py", "", seed, "--torch")
    lines = r.stdout.strip().splitlines()
    failed = [ln for ln in lines if ln.startswith("FAIL ") and ln.split()[1] not in GPU_HOST_CODE]
    assert not failed, r.stdout[-4000:] + r.stderr[-2000:]
    assert int(lines[-1].split()[0]) >= 200, lines[-1]
