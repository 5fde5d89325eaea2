"""Test the installed package, not the source tree: `python -m pytest` puts
the working directory first on sys.path, and ./pysched has no compiled _core.

The test folders are not packages (no __init__.py): pytest's default
"prepend" import mode puts each test file's own folder on sys.path, so a
test imports a script beside it by bare name (core/fuzz_state.py), and
test file names must stay unique across folders (pytest says so if not).
What tests in several folders share -- the reference models, golden.py,
repo_paths (ROOT, DATA) -- is in helpers/, put on sys.path here."""
import os
import sys

_tests = os.path.dirname(os.path.abspath(__file__))
_root = os.path.dirname(_tests)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _root]
sys.path.insert(0, os.path.join(_tests, "helpers"))
