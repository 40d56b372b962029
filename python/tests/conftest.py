"""pytest setup: every test runs on tk's CPU interpreter (TK_INTERPRET=1,
set before tk is imported) with a disk cache of its own."""
import os
import sys
import tempfile

os.environ["TK_INTERPRET"] = "1"
os.environ.setdefault("TK_CACHE_DIR", tempfile.mkdtemp(prefix="tk-pytest-cache-"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
