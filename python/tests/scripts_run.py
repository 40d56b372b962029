"""Runs a script of python/tests/scripts with `python -m tk` on the
interpreter, in a child process, as a user runs a Triton script."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_script(name, *args):
    """The finished `python -m tk scripts/NAME ARGS...` (output captured)."""
    env = dict(os.environ, TK_INTERPRET="1")
    return subprocess.run([sys.executable, "-m", "tk", os.path.join(HERE, "scripts", name), *args],
                          capture_output=True, text=True, env=env, timeout=300)
