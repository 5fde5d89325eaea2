"""Sweeps of any size: a grid is never built, rows stream to a file, and a
sweep stopped in any way -- an exception, Ctrl-C, a killed process -- is
resumed from its file without making a finished call again."""
import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import pysched as ps
from pysched import SweepError
from pysched.sweeps import grid as grid_
from pysched.sweeps import store

HERE = os.path.dirname(os.path.abspath(__file__))
FORMATS = ["csv", "parquet"]


def path_for(tmp_path, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="a .parquet sweep file needs pyarrow")
    return tmp_path / f"rows.{fmt}"


evaluated = []
lock = threading.Lock()


def point(nice, max_sleep_avg, seed):
    """A simulated point whose result depends on every argument; it notes
    each call it makes."""
    with lock:
        evaluated.append((nice, max_sleep_avg, seed))
    sim = ps.Simulator("linux-2.5.65", params={"max_sleep_avg": max_sleep_avg}, seed=seed)
    work = ps.Program().loop().run(ms=ps.uniform(1, 30)).sleep(ms=ps.uniform(1, 10)).end()
    sim.spawn(ps.programs.cpu_hog())
    b = sim.spawn(work, nice=nice)
    sim.run(seconds=0.05)
    return {"share": sim.task(b).cpu_ns / 0.05e9, "switches": sim.task(b).nr_switches}


def slow_point(nice, max_sleep_avg, seed):
    """point, a few ms slower: a sweep of it is still running when killed."""
    time.sleep(0.004)
    return point(nice, max_sleep_avg, seed)


GRID = {"nice": list(range(-10, 10)), "max_sleep_avg": [500, 1000, 2000, 5000]}
SEEDS = 3  # 240 calls
KEYS = [(n, m, s) for n in GRID["nice"] for m in GRID["max_sleep_avg"] for s in range(SEEDS)]


# ---- the grid is computed, not built ----

def test_the_calls_are_the_cartesian_product_in_grid_order_with_the_seed_fastest():
    grid = grid_.normalise({"a": [1, 2], "b": np.array([0.5, 1.5, 2.5]), "c": range(10, 14)})
    calls = grid_.calls(grid, [7, 8])
    want = [{"a": a, "b": b, "c": c, "seed": s}
            for a, b, c, s in itertools.product([1, 2], [0.5, 1.5, 2.5], range(10, 14), [7, 8])]
    assert len(calls) == len(want) and calls[:] == want
    assert [calls[i] for i in range(len(want))] == want and calls[-1] == want[-1]
    assert type(calls[3]["b"]) is float  # plain values, not NumPy's
    points = grid_.calls(grid_.normalise([{"x": 1}, {"x": 2, "y": 3}]), [0, 1])
    assert points[:] == [{"x": 1, "seed": 0}, {"x": 1, "seed": 1},
                         {"x": 2, "y": 3, "seed": 0}, {"x": 2, "y": 3, "seed": 1}]


def stops_at(stop):
    def fn(a, b, c, d):
        if (a, b, c, d) == stop:
            raise KeyboardInterrupt
        return {"s": a + b + c + d}
    return fn


def test_a_grid_of_10_to_the_8_points_starts_at_once_in_little_memory():
    # 10^8 calls: built up front, their dicts alone would take some 40 GB
    grid = {"a": range(100), "b": range(100), "c": range(100), "d": np.arange(100)}
    tracemalloc.start()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            ps.sweep(stops_at((0, 0, 20, 0)), grid, max_workers=1, progress=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(info.value.partial) == 2000
    assert info.value.partial["s"].tolist()[:3] == [0, 1, 2]
    assert peak < 20 * 2**20, f"{peak / 2**20:.0f} MiB allocated"
    # attrs keep a long axis as the range it is
    assert info.value.partial.attrs["grid"]["a"] == list(range(100))


def test_an_empty_axis_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"grid\['nice'\] is empty: an axis with no value makes a "
                                         r"grid of no point"):
        ps.sweep(point, {"max_sleep_avg": [1000], "nice": []}, seeds=1)
    with pytest.raises(ValueError, match=r"grid\['nice'\] is empty"):
        ps.sweep(point, {"max_sleep_avg": [1000], "nice": np.array([], dtype=int)}, seeds=1)
    with pytest.raises(ValueError, match=r"grid=\[\] holds no point"):
        ps.sweep(point, [], seeds=1)


# ---- streaming to a file ----

@pytest.mark.parametrize("fmt", FORMATS)
def test_a_sweep_to_a_file_gives_the_table_of_a_sweep_in_memory(fmt, tmp_path):
    path = path_for(tmp_path, fmt)
    here = ps.sweep(point, GRID, seeds=SEEDS, max_workers=1)
    with ThreadPoolExecutor(2) as ex:
        filed = ps.sweep(point, GRID, seeds=SEEDS, executor=ex, chunksize=7, to=path)
    pd.testing.assert_frame_equal(filed, here, check_exact=True)
    assert filed.attrs == here.attrs
    pd.testing.assert_frame_equal(ps.read_sweep(path), here)
    assert ps.read_sweep(path, output="dicts") == here.to_dict("records")
    assert ps.sweep(point, GRID, seeds=SEEDS, to=path, resume=True, output="file") == path


def test_the_file_holds_each_rows_position_and_the_sweeps_description(tmp_path):
    path = tmp_path / "rows.csv"
    ps.sweep(point, {"nice": [0, 5], "max_sleep_avg": [1000]}, seeds=2, to=path)
    raw = pd.read_csv(path)  # a plain CSV file any tool reads
    assert raw["sweep_index"].tolist() == [0, 1, 2, 3]
    assert raw["nice"].tolist() == [0, 0, 5, 5] and raw["seed"].tolist() == [0, 1, 0, 1]
    meta = json.loads((tmp_path / "rows.csv.json").read_text())
    assert meta["calls"] == 4 and meta["attrs"]["function"] == "test_sweep_files.point"


def test_a_file_there_is_an_error_unless_resumed_and_must_hold_the_same_sweep(tmp_path):
    path = tmp_path / "rows.csv"
    ps.sweep(point, {"nice": [0, 5], "max_sleep_avg": [1000]}, seeds=1, to=path)
    with pytest.raises(FileExistsError, match="rows.csv' exists: resume=True continues"):
        ps.sweep(point, {"nice": [0, 5], "max_sleep_avg": [1000]}, seeds=1, to=path)
    with pytest.raises(ValueError, match="holds another sweep .*grid or seeds differ"):
        ps.sweep(point, {"nice": [0, 6], "max_sleep_avg": [1000]}, seeds=1, to=path, resume=True)
    with pytest.raises(ValueError, match="holds another sweep"):
        ps.sweep(point, {"nice": [0, 5], "max_sleep_avg": [1000]}, seeds=2, to=path, resume=True)
    with pytest.raises(ValueError, match="holds a sweep of test_sweep_files.point, not of "
                                         "test_sweep_files.slow_point"):
        ps.sweep(slow_point, {"nice": [0, 5], "max_sleep_avg": [1000]}, seeds=1, to=path,
                 resume=True)
    with pytest.raises(ValueError, match=r"suffix chooses its format, \.csv or \.parquet"):
        ps.sweep(point, {"nice": [0]}, to=tmp_path / "rows.txt")
    with pytest.raises(ValueError, match="resume=True continues a sweep written to a file"):
        ps.sweep(point, {"nice": [0]}, resume=True)


# ---- resuming ----

@pytest.mark.parametrize("fmt", FORMATS)
def test_a_sweep_stopped_by_ctrl_c_resumes_without_redoing_a_finished_call(fmt, tmp_path):
    path = path_for(tmp_path, fmt)

    def interrupted(nice, max_sleep_avg, seed):
        if (nice, max_sleep_avg, seed) == (0, 2000, 1):
            raise KeyboardInterrupt
        return point(nice, max_sleep_avg, seed)
    interrupted.__qualname__ = "point"  # the same function, as a script run again
    interrupted.__module__ = point.__module__
    with pytest.raises(KeyboardInterrupt) as info:
        ps.sweep(interrupted, GRID, seeds=SEEDS, max_workers=1, to=path)
    kept = ps.read_sweep(path)
    assert len(kept) == KEYS.index((0, 2000, 1)) and info.value.partial.equals(kept)
    evaluated.clear()
    resumed = ps.sweep(point, GRID, seeds=SEEDS, max_workers=1, to=path, resume=True)
    assert evaluated == KEYS[len(kept):]
    pd.testing.assert_frame_equal(resumed, ps.sweep(point, GRID, seeds=SEEDS, max_workers=1))


KILLED = textwrap.dedent("""
    import sys
    sys.path.insert(0, {here!r})
    import pysched as ps
    from pysched.sweeps import store
    from test_sweep_files import GRID, SEEDS, slow_point
    store.FLUSH_S = (0.05, 0.05)  # rows reach the file at once: the test kills it soon
    ps.sweep(slow_point, GRID, seeds=SEEDS, max_workers=1, to={path!r})
""")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_sweep_killed_mid_way_resumes_from_its_file_without_redoing_a_finished_call(
        fmt, tmp_path):
    path = path_for(tmp_path, fmt)
    child = subprocess.Popen([sys.executable, "-c", KILLED.format(here=HERE, path=str(path))])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
            try:
                if len(ps.read_sweep(path)) >= 30:
                    break
            except (ValueError, OSError):
                pass  # not written yet
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL, "the sweep ended before it was killed"
    before = ps.read_sweep(path)
    assert 30 <= len(before) < len(KEYS)
    done = {tuple(r) for r in before[["nice", "max_sleep_avg", "seed"]].itertuples(index=False)}
    evaluated.clear()
    with ThreadPoolExecutor(2) as ex:
        resumed = ps.sweep(slow_point, GRID, seeds=SEEDS, executor=ex, to=path, resume=True)
    # every call not in the file made once, and none that was
    assert sorted(evaluated) == sorted(set(KEYS) - done)
    assert len(evaluated) == len(KEYS) - len(before)
    whole = ps.sweep(point, GRID, seeds=SEEDS, max_workers=1)
    whole.attrs["function"] = resumed.attrs["function"]
    pd.testing.assert_frame_equal(resumed, whole, check_exact=True)
    assert resumed.attrs == whole.attrs


def test_a_csv_row_cut_short_by_a_kill_is_dropped_and_made_again(tmp_path):
    path = tmp_path / "rows.csv"
    small = {"nice": [0, 5, 10], "max_sleep_avg": [1000]}
    whole = ps.sweep(point, small, seeds=1, to=path)
    text = path.read_text()
    path.write_text(text[:text.rindex("\n", 0, len(text) - 1) + 9])  # the last row cut mid-way
    assert not path.read_text().endswith("\n")
    evaluated.clear()
    again = ps.sweep(point, small, seeds=1, to=path, resume=True)
    assert evaluated == [(10, 1000, 0)]
    pd.testing.assert_frame_equal(again, whole)


def test_a_failing_call_keeps_the_rows_in_the_file_and_names_it(tmp_path):
    path = tmp_path / "rows.csv"

    def fails(x):
        if x == 7:
            raise ZeroDivisionError("no")
        return {"y": x * x}
    with pytest.raises(SweepError, match=r"the call at \{'x': 7\} failed: ZeroDivisionError: no; "
                                         r"'.*rows.csv' and \.partial hold the rows of the 7 calls "
                                         r"of 10 that finished"):
        ps.sweep(fails, {"x": range(10)}, max_workers=1, to=path)
    assert ps.read_sweep(path)["y"].tolist() == [x * x for x in range(7)]


def dies_once_at_seven(x, marks):
    """Notes each call in `marks`; the first call at x=7 ends its worker
    as if killed."""
    if x == 7 and not os.path.exists(os.path.join(marks, "died")):
        open(os.path.join(marks, "died"), "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    open(os.path.join(marks, f"{x}-{time.monotonic_ns()}"), "w").close()
    return {"y": x * x}


def test_a_sweep_that_lost_a_worker_resumes_without_redoing_a_finished_call(tmp_path):
    from concurrent.futures import ProcessPoolExecutor

    path, marks = tmp_path / "rows.csv", tmp_path / "marks"
    marks.mkdir()

    def fn(x):
        return dies_once_at_seven(x, str(marks))
    fn.__qualname__ = "fn"
    with ProcessPoolExecutor(2) as ex, pytest.raises(SweepError, match="the executor broke"):
        ps.sweep(fn, {"x": range(20)}, executor=ex, chunksize=1, to=path)
    kept = ps.read_sweep(path)["x"].tolist()
    assert 7 not in kept and kept == sorted(kept)
    for m in marks.iterdir():
        if m.name != "died":
            m.unlink()
    with ProcessPoolExecutor(2) as ex:
        rows = ps.sweep(fn, {"x": range(20)}, executor=ex, chunksize=1, to=path, resume=True)
    called = sorted(int(m.name.split("-")[0]) for m in marks.iterdir() if m.name != "died")
    assert called == sorted(set(range(20)) - set(kept))
    assert rows["y"].tolist() == [x * x for x in range(20)]


def some_columns_at_some_points(x):
    return {"y": x, **({"late": x / 2} if x >= 3 else {})}


def test_a_column_that_appears_late_fits_a_parquet_file_but_not_a_csv_one(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow", reason="a .parquet sweep file needs pyarrow")
    monkeypatch.setattr(store, "FLUSH_S", (0.0, 0.0))  # every row written as it arrives
    here = ps.sweep(some_columns_at_some_points, {"x": range(6)})
    pd.testing.assert_frame_equal(
        ps.sweep(some_columns_at_some_points, {"x": range(6)}, to=tmp_path / "rows.parquet"), here)
    with pytest.raises(SweepError, match="a column the first rows of rows.csv did not have") as info:
        ps.sweep(some_columns_at_some_points, {"x": range(6)}, to=tmp_path / "rows.csv")
    assert type(info.value.__cause__) is ValueError
    assert info.value.partial["y"].tolist() == [0, 1, 2]  # the rows written before
