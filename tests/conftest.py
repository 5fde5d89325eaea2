"""Test the installed package, not the source tree: `python -m pytest` puts
the working directory first on sys.path, and ./pysched has no compiled _core.

The test folders are not packages (no __init__.py): pytest's default
"prepend" import mode puts each test file's own folder on sys.path, so a
test imports a script beside it by bare name (core/fuzz_state.py), and
test file names must stay unique across folders (pytest says so if not).
What tests in several folders share -- the reference models, golden.py,
repo_paths (ROOT, DATA) -- is in helpers/, put on sys.path here; the
fixtures they share (a Dask executor) are below."""
import os
import sys

import pytest

_tests = os.path.dirname(os.path.abspath(__file__))
_root = os.path.dirname(_tests)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _root]
sys.path.insert(0, os.path.join(_tests, "helpers"))


@pytest.fixture(scope="module")
def dask_executor():
    """A local Dask cluster of two worker processes, as a
    concurrent.futures executor (skips where Dask is not installed)."""
    distributed = pytest.importorskip(
        "dask.distributed", reason="dask.distributed is not installed (pip install 'dask[distributed]')")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client.get_executor()

