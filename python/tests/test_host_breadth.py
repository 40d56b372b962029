"""Triton scripts with numpy host wrappers run unchanged under `python -m
tk` on the interpreter: tuned and pruned configs, heuristics of runtime
arguments, optional buffers, keyword order, specialisation, helpers and
constexprs of another module, libdevice, and do_bench."""
import pytest
from scripts_run import run_script


@pytest.mark.parametrize("script, ok", [
    ("host_matmul_tuned.py", "matmul tuned OK"),
    ("host_optional_args.py", "optional args OK"),
    ("host_helpers.py", "helpers OK"),
    ("host_layernorm.py", "layer norm OK"),
])
def test_host_wrapper_script(script, ok):
    p = run_script(script)
    assert p.returncode == 0, p.stderr
    assert ok in p.stdout, p.stdout
