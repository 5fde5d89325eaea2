"""The modules that moved into the package's folders answer to their old
names for one release (src/pysched/_moved.py): the very module at its new
place, with a FutureWarning at the user's line naming where it went."""
import importlib
import pickle
import subprocess
import sys
import warnings

import pytest

import pysched as ps
from pysched import _moved

OLD_NAMES = sorted(_moved.MOVED)


def fresh(code):
    """code run in a new interpreter with every warning shown once per line."""
    return subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("old", OLD_NAMES)
def test_an_old_module_name_is_the_module_at_its_new_place(old):
    new = importlib.import_module(f"pysched.{_moved.MOVED[old]}")
    with pytest.warns(FutureWarning, match=rf"^pysched\.{old} moved to {new.__name__}; the old "
                                           r"name goes in the next release$"):
        sys.modules.pop(f"pysched.{old}", None)
        module = importlib.import_module(f"pysched.{old}")
    assert module is new and module.__spec__.name == new.__name__


def test_the_old_sweep_module_leaves_ps_sweep_the_function():
    # importing pysched.sweep sets the package's attribute `sweep` to what
    # it gives: a stand-in that is still the function when called
    r = fresh("import pysched as ps\n"
              "from pysched.sweep import SweepError, sweep\n"
              "assert SweepError is ps.SweepError\n"
              "rows = ps.sweep(lambda x, seed: {'y': x + seed}, {'x': [1, 2]}, seeds=1,"
              " output='dicts', max_workers=1)\n"
              "print(ps.sweep is not sweep, [int(r['y']) for r in rows])")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "[1,", "2]"]
    assert "pysched.sweep moved to pysched.sweeps" in r.stderr


def test_the_warning_points_at_the_users_line():
    r = fresh("import pysched.stability\n"
              "from pysched.examples import RoundRobin\n"
              "import pysched as ps\n"
              "ps.houston\n")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "FutureWarning" in ln]
    assert [ln.split(": FutureWarning")[0] for ln in lines] == [
        "<string>:1", "<string>:2", "<string>:4"], r.stderr
    assert "pysched.houston moved to pysched.analysis.houston" in lines[2]


def test_a_class_under_its_old_path_is_the_same_class_and_old_pickles_load():
    with pytest.warns(FutureWarning):
        from pysched.examples.round_robin import RoundRobin
    assert RoundRobin is ps.policy.examples.RoundRobin
    # a pickle made by 0.1, which named the class by its old module
    old = b"cpysched.examples.round_robin\nRoundRobin\n."
    for name in ("pysched.examples", "pysched.examples.round_robin"):
        sys.modules.pop(name)
    with pytest.warns(FutureWarning, match=r"^pysched\.examples(\.round_robin)? moved to "):
        assert pickle.loads(old) is RoundRobin


def test_a_moved_packages_module_is_loaded_once():
    r = fresh("import sys, pysched.examples.linux24 as old\n"
              "import pysched.policy.examples.linux24 as new\n"
              "assert old is new, (old, new)\n"
              "print(sorted(m for m in sys.modules if m.endswith('linux24')))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["['pysched.examples.linux24',", "'pysched.policy.examples.linux24']"]


def test_the_public_shortcuts_give_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import pysched.metrics
        import pysched.plot
        assert ps.metrics is pysched.metrics is importlib.import_module("pysched.results.metrics")
        assert ps.plot is importlib.import_module("pysched.results.plot")
        assert ps.trace.load and ps.analysis.houston_stability and ps.workloads.from_rtapp


def test_a_name_that_never_was_is_an_attribute_error():
    with pytest.raises(AttributeError, match="^module 'pysched' has no attribute 'housten'$"):
        ps.housten
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("pysched.housten")
