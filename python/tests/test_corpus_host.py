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
