"""The installed package's metadata agrees with the package itself, and its
import reports what went wrong when the compiled core cannot be loaded."""
import filecmp
import importlib.metadata
import os
import shutil
import subprocess
import sys

import pysched

from repo_paths import ROOT

BROKEN_CORE = 'raise ImportError("undefined symbol: ps_bogus")\n'


def package_copy(root, core=None):
    """root/pysched: the installed pysched/__init__.py, with a _core.py of
    source `core` (no core at all when None)."""
    (root / "pysched").mkdir(parents=True)
    shutil.copy(pysched.__file__, root / "pysched" / "__init__.py")
    if core is not None:
        (root / "pysched" / "_core.py").write_text(core)
    return root


def import_pysched(cwd, code="import pysched", pythonpath=None, flags=()):
    """python -c code in cwd (first on sys.path, as for python -m pysched)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([sys.executable, *flags, "-c", code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_version_is_the_installed_distributions_version():
    assert pysched.__version__ == importlib.metadata.version("pysched")


def test_the_license_is_declared_and_shipped():
    dist = importlib.metadata.distribution("pysched")
    assert dist.metadata["License-Expression"] == "GPL-2.0-or-later"
    shipped = [f for f in dist.files if f.name == "LICENSE"]
    assert shipped and "GNU GENERAL PUBLIC LICENSE" in shipped[0].read_text()


def test_the_c_headers_ship_with_the_package_and_are_the_cores_own():
    core = ROOT / "csrc" / "core"
    # the core's, and the sched_ext class's interface with its C dialect
    ext_dir = ROOT / "csrc" / "policies" / "ext"
    sources = {f: core / f for f in os.listdir(core) if f.endswith(".h")}
    sources.update({f: ext_dir / f for f in ("ext_ops.h", "scx.h", "scx_maps.h")})
    headers = sorted(sources)
    shipped = os.path.join(pysched.include_dir(), "pysched")
    assert "policy_lib.h" in headers and sorted(os.listdir(shipped)) == headers
    for f, src in sources.items():
        assert filecmp.cmp(src, os.path.join(shipped, f), shallow=False), f
    # listed in the distribution's RECORD, so that pip uninstalls them
    listed = {f.name for f in importlib.metadata.distribution("pysched").files
              if f.parent.as_posix() == "pysched/include/pysched"}
    assert sorted(listed) == headers


def test_python_m_pysched_in_the_checkout_runs_the_installed_package():
    # the src layout: the checkout's root holds no pysched/ to shadow it
    assert not (ROOT / "pysched").exists() and (ROOT / "src" / "pysched" / "__init__.py").exists()
    r = import_pysched(ROOT, "import pysched; print(pysched._core.__file__)")
    assert r.returncode == 0, r.stderr
    assert os.path.dirname(r.stdout.strip()) == os.path.dirname(pysched.__file__)


def test_a_package_without_its_core_says_so(tmp_path):
    r = import_pysched(package_copy(tmp_path))
    assert r.returncode != 0
    assert "No module named 'pysched._core'" in r.stderr  # chained
    assert r.stderr.strip().splitlines()[-1] == (
        f"ImportError: pysched's compiled core is missing from {tmp_path / 'pysched'}: install the "
        f"package with pip install .")


def test_a_core_that_fails_to_load_is_not_reported_as_missing(tmp_path):
    r = import_pysched(package_copy(tmp_path, BROKEN_CORE))
    assert r.returncode != 0
    assert "ImportError: undefined symbol: ps_bogus" in r.stderr
    assert "missing" not in r.stderr

