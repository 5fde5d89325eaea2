"""Test the installed package, not the source tree: `python -m pytest` puts
the working directory first on sys.path, and ./pysched has no compiled _core."""
import os
import sys

_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _root]
