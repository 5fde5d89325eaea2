"""Parameter sweeps: here, on a local pool, and on any executor (threads,
a spawned process pool, a Dask cluster), with identical rows."""
import gc
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import pysched as ps
import pysched.sweeps.local as sweep_local
from pysched import SweepError


def share_of_reniced(nice, max_sleep_avg):
    sim = ps.Simulator("linux-2.5.65", params={"max_sleep_avg": max_sleep_avg})
    a = sim.spawn(ps.programs.cpu_hog())
    b = sim.spawn(ps.programs.cpu_hog(), nice=nice)
    sim.run(seconds=5)
    return {"share": sim.task(b).cpu_ns / 5e9, "a": a}


def share_beside_a_sleeper(max_sleep_avg, nice, ms, seed):
    """A short point (0.05-0.2 simulated s) whose result depends on all its
    arguments, the seed included (the workers' bursts and sleeps are random)."""
    sim = ps.Simulator("linux-2.5.65", params={"max_sleep_avg": max_sleep_avg}, seed=seed)
    work = ps.Program().loop().run(ms=ps.uniform(1, 30)).sleep(ms=ps.uniform(1, 10)).end()
    sim.spawn(ps.programs.cpu_hog())
    b = sim.spawn(work, nice=nice)
    s = sim.spawn(work)
    sim.run(seconds=ms / 1000)
    return {"share": sim.task(b).cpu_ns / (ms * 1e6), "wakeups": sim.task(s).nr_wakeups}


# 5 x 10 x 4 points x 5 seeds: 1,000 calls
GRID_1000 = {"max_sleep_avg": [100, 500, 1000, 2000, 5000], "nice": list(range(-10, 20, 3)),
             "ms": [50, 100, 150, 200]}


def make_the_pool_always_pay(monkeypatch):
    """Make the default executor start its pool for any sweep, however short,
    after timing one call here."""
    monkeypatch.setattr(sweep_local, "PROBE_S", 0.0)
    monkeypatch.setattr(sweep_local, "STARTUP_S", {})
    monkeypatch.setattr(sweep_local, "STARTUP_OTHER_S", 0.0)


@pytest.fixture
def pool_always_pays(monkeypatch):
    make_the_pool_always_pay(monkeypatch)


# ---- one table, whatever runs it ----

def test_a_1000_point_sweep_gives_identical_rows_here_on_a_pool_on_threads_and_on_dask(
        pool_always_pays, dask_executor):
    here = ps.sweep(share_beside_a_sleeper, GRID_1000, seeds=5, max_workers=1)
    assert len(here) == 1000
    # every argument matters: the rows are no copies of one another
    assert here.groupby(["max_sleep_avg", "nice", "ms"])["share"].nunique().max() > 1
    assert here.groupby(["nice"])["share"].mean().is_monotonic_decreasing
    pooled = ps.sweep(share_beside_a_sleeper, GRID_1000, seeds=5, max_workers=2)
    with ThreadPoolExecutor(2) as ex:
        threaded = ps.sweep(share_beside_a_sleeper, GRID_1000, seeds=5, executor=ex)
    dasked = ps.sweep(share_beside_a_sleeper, GRID_1000, seeds=5, executor=dask_executor)
    for table in (pooled, threaded, dasked):
        pd.testing.assert_frame_equal(table, here)
        assert table.attrs == here.attrs


def where(x):
    return {"pid": os.getpid()}


def test_the_default_runs_a_short_sweep_here_and_a_long_one_on_a_pool(monkeypatch):
    assert set(ps.sweep(where, {"x": range(20)}, max_workers=2)["pid"]) == {os.getpid()}
    make_the_pool_always_pay(monkeypatch)
    pids = set(ps.sweep(where, {"x": range(20)}, max_workers=2)["pid"])
    assert pids - {os.getpid()}  # some on the pool (the first call times a call here)
    # one worker: a pool would only add its start-up
    assert set(ps.sweep(where, {"x": range(20)}, max_workers=1)["pid"]) == {os.getpid()}


def test_a_sweep_returns_one_row_per_grid_point_in_grid_order():
    grid = {"nice": [0, 10, 19], "max_sleep_avg": [2000, 10000]}
    rows = ps.sweep(share_of_reniced, grid, max_workers=2)
    assert list(zip(rows["nice"], rows["max_sleep_avg"])) == [
        (n, m) for n in (0, 10, 19) for m in (2000, 10000)]
    # nice works through timeslices in the O(1) scheduler: shares fall with nice
    by_nice = rows[rows["max_sleep_avg"] == 2000].set_index("nice")["share"]
    assert by_nice[0] > by_nice[10] > by_nice[19]


def test_batches_keep_grid_order_whatever_finishes_first(pool_always_pays):
    # the first points are the slowest: later batches finish first
    def slow_first(i):
        time.sleep(0.02 if i < 4 else 0)
        return {"i2": i * i}
    with ThreadPoolExecutor(4) as ex:
        rows = ps.sweep(slow_first, {"i": range(200)}, executor=ex, output="dicts")
    assert rows == [{"i": i, "i2": i * i} for i in range(200)]
    rows = ps.sweep(slow_first, {"i": range(200)}, max_workers=2, chunksize=7, output="dicts")
    assert rows == [{"i": i, "i2": i * i} for i in range(200)]


def test_a_sweep_leaves_the_callers_start_method_unset():
    # multiprocessing.get_start_method() would fix it, and a later
    # set_start_method() of the caller's would fail
    code = ("import multiprocessing as mp, pysched as ps\n"
            "ps.sweep(lambda x: {}, {'x': [1, 2]})\n"
            "assert mp.get_start_method(allow_none=True) is None\n"
            "mp.set_start_method('spawn')\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=os.path.dirname(__file__))


# ---- a function from __main__, a lambda, a closure: by value ----

MAIN_SOURCE = textwrap.dedent("""
    import pysched as ps

    def measure(nice):
        sim = ps.Simulator("linux-2.5.65")
        sim.spawn(ps.programs.cpu_hog())
        b = sim.spawn(ps.programs.cpu_hog(), nice=nice)
        sim.run(seconds=0.5)
        return {"share": sim.task(b).cpu_ns / 0.5e9}
""")


def defined_in_main():
    """measure() as a script or a notebook defines it: in a module named
    __main__ that a spawned worker does not have."""
    namespace = {"__name__": "__main__"}
    exec(MAIN_SOURCE, namespace)
    return namespace["measure"]


def test_a_function_from_main_runs_on_a_spawned_pool_and_on_dask(dask_executor):
    measure = defined_in_main()
    with pytest.raises(pickle.PicklingError):
        pickle.dumps(measure)  # by reference, it cannot reach a worker
    offset = 5
    with ThreadPoolExecutor(2) as ex:
        expected = ps.sweep(measure, {"nice": [0, 5, 10]}, executor=ex)
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=spawn) as ex:
        assert ps.sweep(measure, {"nice": [0, 5, 10]}, executor=ex).equals(expected)
        closure = ps.sweep(lambda nice: measure(nice - offset), {"nice": [5, 10, 15]}, executor=ex)
    assert closure["share"].tolist() == expected["share"].tolist()
    assert ps.sweep(measure, {"nice": [0, 5, 10]}, executor=dask_executor).equals(expected)


def test_the_default_pool_takes_a_function_from_main_under_spawn(pool_always_pays):
    # as on macOS and Windows, or Python 3.14's forkserver on Linux
    before = multiprocessing.get_start_method()
    multiprocessing.set_start_method("spawn", force=True)
    try:
        measure = defined_in_main()
        rows = ps.sweep(measure, {"nice": [0, 5, 10, 15]}, max_workers=2)
    finally:
        multiprocessing.set_start_method(before, force=True)
    assert rows["share"].tolist() == [measure(n)["share"] for n in (0, 5, 10, 15)]


def test_a_library_a_worker_cannot_build_fails_only_the_calls_that_need_it(tmp_path, monkeypatch):
    # what a worker unpickles when the caller had built a library (here one
    # that does not compile, as where a cluster's machine has no compiler)
    from pysched.policy.build import PolicySource
    from pysched.sweeps.by_value import ByValue

    monkeypatch.setenv("PYSCHED_CACHE", str(tmp_path / "cache"))
    broken = PolicySource("broken", str(tmp_path / "broken.c"), b"not C at all", ())

    def uses_a_built_in_preset():
        return ps.Simulator("linux-2.5.65").preset

    def uses_the_library():
        return ps.Simulator("broken")

    fine, failing = (pickle.loads(pickle.dumps(ByValue(f, [broken])))
                     for f in (uses_a_built_in_preset, uses_the_library))
    assert fine() == "linux-2.5.65"
    with pytest.raises(KeyError, match="unknown preset 'broken'") as err:
        failing()
    if sys.version_info >= (3, 11):
        assert any("could not load the policy libraries" in n and "broken" in n and
                   "PolicyBuildError" in n for n in err.value.__notes__)


# ---- grids, seeds ----

def kinds(**point):
    return {"kinds": " ".join(type(v).__name__ for v in point.values())}


def test_numpy_grid_values_reach_the_function_as_plain_python_values():
    grid = {"nice": np.array([0, 10], dtype=np.int32),
            "max_sleep_avg": np.geomspace(1, 1000, 4).astype(int)}
    rows = ps.sweep(share_of_reniced, grid, max_workers=np.int64(2))
    plain = ps.sweep(share_of_reniced, {"nice": [0, 10], "max_sleep_avg": [1, 10, 100, 1000]},
                     max_workers=2)
    assert rows.equals(plain) and rows.attrs["grid"] == plain.attrs["grid"]
    with ThreadPoolExecutor(1) as ex:
        points = ps.sweep(kinds, [{"x": np.float32(0.5), "y": np.bool_(True), "z": np.uint8(3)}],
                          executor=ex, output="dicts")
    assert points == [{"x": 0.5, "y": True, "z": 3, "kinds": "float bool int"}]
    assert type(points[0]["y"]) is bool


def seeded(x, seed):
    return {"draw": x * 100 + seed}


def test_seeds_repeat_each_point_with_the_seed_varying_fastest():
    rows = ps.sweep(seeded, {"x": [1, 2]}, seeds=3, output="dicts")
    assert [(r["x"], r["seed"], r["draw"]) for r in rows] == [
        (1, 0, 100), (1, 1, 101), (1, 2, 102), (2, 0, 200), (2, 1, 201), (2, 2, 202)]
    table = ps.sweep(seeded, [{"x": 1}], seeds=np.array([7, 2**64 - 1], dtype=np.uint64))
    assert table["seed"].tolist() == [7, 2**64 - 1]
    assert table.attrs["seeds"] == [7, 2**64 - 1]
    # an empty grid is one point: the function once per seed
    assert ps.sweep(lambda seed: {"s": seed}, {}, seeds=2, output="dicts") == [
        {"seed": 0, "s": 0}, {"seed": 1, "s": 1}]


@pytest.mark.parametrize("seeds,exc,match", [
    (0, ValueError, "seeds=0 is outside the allowed range 1.."),
    (2.0, TypeError, "seeds must be an int, not float"),
    ([1, -1], ValueError, "seeds\\[1\\]=-1 is outside the allowed range 0..18446744073709551615"),
    ([], ValueError, "seeds=\\[\\] holds no seed"),
])
def test_bad_seeds_are_named_in_their_error(seeds, exc, match):
    with pytest.raises(exc, match=match):
        ps.sweep(seeded, {"x": [1]}, seeds=seeds)


def test_a_seed_column_and_seeds_together_are_refused():
    with pytest.raises(ValueError, match="the grid has a 'seed' column and seeds= is given"):
        ps.sweep(seeded, {"x": [1], "seed": [3]}, seeds=2)


def test_a_grid_value_that_is_not_a_list_is_a_type_error():
    with pytest.raises(TypeError, match="grid\\['nice'\\] must be a list of values"):
        ps.sweep(share_of_reniced, {"nice": 5})
    with pytest.raises(TypeError, match="a grid given as a list holds dicts .*, not 5"):
        ps.sweep(share_of_reniced, [5])
    with pytest.raises(TypeError, match="grid must be a dict of name -> values or a list of dicts"):
        ps.sweep(share_of_reniced, 5)


def test_grid_names_must_be_str():
    with pytest.raises(TypeError, match="grid names must be str .*, not 1"):
        ps.sweep(share_of_reniced, {1: [0]})
    with pytest.raises(TypeError, match="grid names must be str .*, not 1"):
        ps.sweep(share_of_reniced, [{1: 0}])


# ---- the table ----

def test_the_table_is_a_dataframe_of_grid_seed_and_returned_columns_with_its_provenance():
    grid = {"nice": [0, 10], "max_sleep_avg": [2000]}
    df = ps.sweep(share_beside_a_sleeper, [{**p, "ms": 50} for p in
                                           ({"nice": n, "max_sleep_avg": 2000} for n in (0, 10))],
                  seeds=[3, 4])
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["nice", "max_sleep_avg", "ms", "seed", "share", "wakeups"]
    assert df.attrs == {"pysched_version": ps.__version__,
                        "function": f"{__name__}.share_beside_a_sleeper",
                        "grid": ["nice", "max_sleep_avg", "ms"],  # the points are the rows
                        "seeds": [3, 4]}
    assert df.dtypes["share"] == np.float64 and df.dtypes["wakeups"] == np.int64
    assert ps.sweep(share_of_reniced, grid).attrs["grid"] == grid


def test_without_pandas_the_table_is_a_record_array_with_the_same_columns_and_attrs():
    grid = {"nice": [0, 10], "max_sleep_avg": [2000], "ms": [50]}
    df = ps.sweep(share_beside_a_sleeper, grid, seeds=2)
    rec = ps.sweep(share_beside_a_sleeper, grid, seeds=2, output="numpy")
    assert isinstance(rec, np.recarray)
    assert rec.dtype.names == tuple(df.columns)
    for c in df.columns:
        assert rec[c].tolist() == df[c].tolist()
    assert rec.attrs == df.attrs and rec[:1].attrs == df.attrs
    assert pickle.loads(pickle.dumps(rec)).attrs == df.attrs
    assert rec.share.dtype == np.float64 and rec.nice.dtype == np.int64


def test_without_pandas_the_default_table_is_a_record_array(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas fails
    rec = ps.sweep(seeded, {"x": [1, 2]}, seeds=1)
    assert isinstance(rec, np.recarray) and rec.draw.tolist() == [100, 200]
    with pytest.raises(ImportError, match='output="pandas" needs pandas: pip install pandas'):
        ps.sweep(seeded, {"x": [1, 2]}, seeds=1, output="pandas")


def mixed(x):
    out = {"b": x > 0, "big": 2**70 if x else 1, "mixed": "a" if x else 1.5, "f": x / 2}
    if x:
        out["only_some"] = 1
    return out


def test_a_record_array_column_is_as_narrow_as_its_values_allow():
    rec = ps.sweep(mixed, {"x": [0, 1]}, output="numpy")
    assert [rec.dtype[c].kind for c in ("x", "b", "big", "mixed", "f", "only_some")] == [
        "i", "b", "O", "O", "f", "O"]
    assert rec["only_some"].tolist() == [None, 1] and rec["big"].tolist() == [1, 2**70]


def test_the_output_is_checked():
    with pytest.raises(ValueError, match="output='frame' is not one of None, 'pandas', 'numpy', 'dicts'"):
        ps.sweep(seeded, {"x": [1]}, output="frame")


@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: [x], TypeError, "the function returned list at {'x': 1}: it must return a dict"),
    (lambda x: {1: x}, TypeError, "returned the key 1 at {'x': 1}: keys name the table's columns"),
    (lambda x: {"x": x}, ValueError, "returned 'x' at {'x': 1}, a column of the grid already"),
])
def test_what_the_function_returns_is_checked_naming_the_point(fn, exc, match):
    with pytest.raises(SweepError, match=match) as info:
        ps.sweep(fn, {"x": [1]})
    assert type(info.value.__cause__) is exc and info.value.point == {"x": 1}


@pytest.mark.parametrize("kw,exc,match", [
    ({"max_workers": 0}, ValueError, "max_workers=0 is outside the allowed range 1.."),
    ({"max_workers": 2.0}, TypeError, "max_workers must be an int, not float"),
    ({"max_workers": True}, TypeError, "max_workers must be an int, not bool"),
    ({"chunksize": 0}, ValueError, "chunksize=0 is outside the allowed range 1.."),
    ({"progress": 1}, TypeError, "progress must be a bool, not int"),
    ({"executor": 4}, TypeError, "executor must have a submit method .*, not int"),
])
def test_bad_arguments_are_named_in_their_error(kw, exc, match):
    with pytest.raises(exc, match=match):
        ps.sweep(share_of_reniced, {"nice": [0], "max_sleep_avg": [1000]}, **kw)
    with pytest.raises(TypeError, match="the function to sweep must be callable, not 3"):
        ps.sweep(3, {"nice": [0]})


# ---- a sweep that stops keeps the rows it finished ----

def fails_at_the_seventh_call(x, seed):
    if (x, seed) == (3, 0):
        raise ZeroDivisionError("no")
    return {"y": 10 * x + seed}


SEVENTH = {"x": 3, "seed": 0}
FAILED_AT_THE_SEVENTH = (r"^pysched.sweep: the call at \{'x': 3, 'seed': 0\} failed: ZeroDivisionError: no; "
                         r"\.partial holds the rows of the \d+ calls of 10 that finished$")


def assert_rows_are_right(partial):
    """The rows kept are those the full sweep gives, at their positions."""
    full = ps.sweep(seeded, {"x": range(5)}, seeds=2).rename(columns={"draw": "y"})
    full["y"] = 10 * full["x"] + full["seed"]
    pd.testing.assert_frame_equal(partial, full.loc[partial.index])
    assert partial.attrs == {**full.attrs, "function": f"{__name__}.fails_at_the_seventh_call"}


def test_a_call_that_fails_here_keeps_the_rows_before_it_and_is_named():
    with pytest.raises(SweepError, match=FAILED_AT_THE_SEVENTH) as info:
        ps.sweep(fails_at_the_seventh_call, {"x": range(5)}, seeds=2, max_workers=1)
    err = info.value
    assert isinstance(err, ps.Error) and type(err.__cause__) is ZeroDivisionError
    if hasattr(err, "add_note"):  # the call's own exception says where too
        assert err.__cause__.__notes__ == [f"in pysched.sweep, calling the function at {SEVENTH}"]
    assert err.point == SEVENTH and err.points == [SEVENTH]
    assert "the 6 calls of 10" in str(err)
    assert err.partial.index.tolist() == list(range(6))
    assert err.partial["y"].tolist() == [0, 1, 10, 11, 20, 21]
    assert_rows_are_right(err.partial)
    # it pickles whole, as from a worker of a sweep within a sweep
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) and back.point == SEVENTH and back.partial.equals(err.partial)
    # the other outputs keep the same rows
    for output in ("dicts", "numpy"):
        with pytest.raises(SweepError) as info:
            ps.sweep(fails_at_the_seventh_call, {"x": range(5)}, seeds=2, max_workers=1,
                     output=output)
        assert [r["y"] for r in info.value.partial] == [0, 1, 10, 11, 20, 21]


@pytest.mark.parametrize("where", ["the default pool", "threads", "a process pool"])
def test_a_call_that_fails_on_a_pool_keeps_the_rows_finished_and_is_named(where, monkeypatch):
    make_the_pool_always_pay(monkeypatch)
    if where == "the default pool":
        with pytest.raises(SweepError, match=FAILED_AT_THE_SEVENTH) as info:
            ps.sweep(fails_at_the_seventh_call, {"x": range(5)}, seeds=2, max_workers=2)
    else:
        kind = ThreadPoolExecutor if where == "threads" else ProcessPoolExecutor
        with kind(2) as ex, pytest.raises(SweepError, match=FAILED_AT_THE_SEVENTH) as info:
            ps.sweep(fails_at_the_seventh_call, {"x": range(5)}, seeds=2, executor=ex)
    err = info.value
    assert type(err.__cause__) is ZeroDivisionError and err.point == SEVENTH
    assert not hasattr(err.__cause__, "_pysched_sweep_failed_at")  # the mark is taken off
    assert 6 not in err.partial.index
    assert_rows_are_right(err.partial)
    if where == "the default pool":
        # the batches before the failing one had started: they ended and were kept
        assert err.partial.index.tolist()[:6] == list(range(6))


def dies_at_seven(x, marks):
    """The worker of x=7 dies as if killed, once the calls before it have
    finished and their rows had time to travel back."""
    if x == 7:
        deadline = time.monotonic() + 10
        while len(os.listdir(marks)) < 7 and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)
    open(os.path.join(marks, str(x)), "w").close()
    return {"y": x * x}


@pytest.mark.parametrize("where", ["the default pool", "a process pool"])
def test_a_worker_killed_keeps_the_rows_finished_and_names_the_calls_on_the_pool(
        where, tmp_path, monkeypatch):
    make_the_pool_always_pay(monkeypatch)
    from concurrent.futures.process import BrokenProcessPool

    def fn(x):
        return dies_at_seven(x, str(tmp_path))

    start = time.perf_counter()
    with pytest.raises(SweepError, match=r"^pysched.sweep: the executor broke \(BrokenProcessPool: .*\) "
                                         r"with the calls at .*\{'x': 7\}.* on it: one of them may "
                                         r"have ended its worker") as info:
        if where == "the default pool":
            ps.sweep(fn, {"x": range(10)}, max_workers=2)
        else:
            with ProcessPoolExecutor(2) as ex:
                ps.sweep(fn, {"x": range(10)}, executor=ex, chunksize=1)
    err = info.value
    assert type(err.__cause__) is BrokenProcessPool and err.point is None
    kept, named = err.partial["x"].tolist(), [p["x"] for p in err.points]
    assert 7 in named and not set(kept) & set(named)
    assert kept[:7] == list(range(7)) and err.partial.index.tolist() == kept
    assert err.partial["y"].tolist() == [x * x for x in kept]
    if where == "a process pool":
        # one call per batch, and the other worker had finished the rest: only
        # the call that ran on the dead worker was on the pool
        assert named == [7] and kept == [0, 1, 2, 3, 4, 5, 6, 8, 9]
    assert time.perf_counter() - start < 5  # the pool shut down, not hung


def interrupted_here(x):
    if x == 5:
        signal.raise_signal(signal.SIGINT)  # Ctrl-C, while the sixth call runs
    return {"y": -x}


def test_ctrl_c_here_keeps_the_rows_finished_on_the_keyboard_interrupt():
    with pytest.raises(KeyboardInterrupt) as info:
        ps.sweep(interrupted_here, {"x": range(10)}, max_workers=1)
    partial = info.value.partial
    assert partial.index.tolist() == list(range(5)) and partial["y"].tolist() == [0, -1, -2, -3, -4]
    assert partial.attrs["function"] == f"{__name__}.interrupted_here"
    if hasattr(info.value, "add_note"):
        assert info.value.__notes__ == [
            "pysched.sweep: interrupted; .partial holds the rows of the 5 calls of 10 that finished"]


# ---- progress ----

def test_progress_false_is_silent_and_true_draws_a_bar(monkeypatch, capsys):
    ps.sweep(seeded, {"x": range(5)}, seeds=1, progress=False)
    ps.sweep(seeded, {"x": range(5)}, seeds=1)  # the default: no bar where stderr is no terminal
    assert capsys.readouterr() == ("", "")
    ps.sweep(seeded, {"x": range(5)}, seeds=1, progress=True)
    err = capsys.readouterr().err
    assert "pysched.sweep" in err and "5/5" in err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    ps.sweep(seeded, {"x": range(5)}, seeds=1)  # the default, where someone watches
    assert "5/5" in capsys.readouterr().err


def test_in_a_notebook_without_ipywidgets_the_bar_is_text_and_warns_of_nothing(monkeypatch, capsys):
    import types
    import warnings
    monkeypatch.setitem(sys.modules, "ipykernel.zmqshell", types.ModuleType("ipykernel.zmqshell"))
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets fails as if absent
    for name in [m for m in sys.modules if m in ("tqdm.auto", "tqdm.autonotebook")]:
        monkeypatch.delitem(sys.modules, name)  # their import is what would warn
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # tqdm.auto's "IProgress not found" would raise
        ps.sweep(seeded, {"x": range(5)}, seeds=1)  # the default: a kernel is someone watching
    assert "5/5" in capsys.readouterr().err
    assert "tqdm.autonotebook" not in sys.modules


def test_without_tqdm_there_is_no_bar_unless_one_is_asked_for(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    ps.sweep(seeded, {"x": range(5)}, seeds=1)
    assert capsys.readouterr() == ("", "")
    with pytest.raises(ImportError, match="progress=True needs tqdm: pip install tqdm"):
        ps.sweep(seeded, {"x": range(5)}, seeds=1, progress=True)


# ---- interruption, executors ----

ran = []


def interrupted_at_the_second_point(x):
    ran.append(x)
    if x == 1:
        raise KeyboardInterrupt  # as Ctrl-C arrives while the caller waits
    time.sleep(0.02)  # a point takes a while: the others are still queued
    return {"y": x}


def test_an_interrupted_sweep_cancels_the_points_still_queued():
    ran.clear()
    with ThreadPoolExecutor(1) as ex:
        with pytest.raises(KeyboardInterrupt) as info:
            ps.sweep(interrupted_at_the_second_point, {"x": range(50)}, executor=ex)
    # two batches per worker are queued at a time, sized by the 20 ms measured:
    # the 46 or more points never submitted or cancelled never ran
    assert len(ran) <= 4
    # the first batch (one call: nothing was measured yet) had finished
    assert info.value.partial.to_dict("records") == [{"x": 0, "y": 0}]


def naps(x):
    time.sleep(0.02)
    return {}


def test_ctrl_c_stops_a_sweep_on_the_default_pool_within_a_batch():
    # the garbage of earlier tests collected first: a KeyboardInterrupt that
    # lands in a finalizer or a weakref callback (a replayed simulator's,
    # trace/replay.py) is printed and dropped by Python, as a user's Ctrl-C
    # would be
    gc.collect()
    # 200 naps of 20 ms: 2 s on two workers; Ctrl-C after 0.3 s
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            ps.sweep(naps, {"x": range(200)}, max_workers=2)
    finally:
        timer.cancel()
    # the queued batches were dropped; the running ones (about 50 ms) ended
    assert time.perf_counter() - start < 1.2
    # and their rows were kept with those finished before, the first timed
    # here: the batches run in grid order, those cancelled come after
    kept = info.value.partial["x"].tolist()
    assert 1 <= len(kept) < 200 and kept == list(range(len(kept)))
    assert info.value.partial.index.tolist() == kept


def test_an_executor_needs_only_submit():
    # Dask's client.get_executor() maps with len() on every argument; a sweep
    # submits batches (lists) instead
    class SubmitOnly:
        def __init__(self):
            self.pool = ThreadPoolExecutor(2)

        def submit(self, fn, *args):
            return self.pool.submit(fn, *args)

    ex = SubmitOnly()
    rows = ps.sweep(interrupted_at_the_second_point, {"x": [0, 2, 3]}, executor=ex)
    ex.pool.shutdown()
    assert rows["y"].tolist() == [0, 2, 3]
