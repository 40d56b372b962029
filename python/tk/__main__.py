"""python -m tk script.py [args]: runs a script written for Triton with
`triton` and its submodules resolved to tk's facade."""
import os
import runpy
import sys


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: python -m tk script.py [args...]", file=sys.stderr)
        return 2
    from . import compat  # noqa: F401  (installs the facade)
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
