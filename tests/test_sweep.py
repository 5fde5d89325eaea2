"""Parameter sweeps over executors."""
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import pysched as ps


def share_of_reniced(nice, max_sleep_avg):
    sim = ps.Simulator("linux-2.5.65", params={"max_sleep_avg": max_sleep_avg})
    a = sim.spawn(ps.programs.cpu_hog())
    b = sim.spawn(ps.programs.cpu_hog(), nice=nice)
    sim.run(seconds=5)
    return {"share": sim.task(b).cpu_ns / 5e9, "a": a}


def test_a_sweep_returns_one_row_per_grid_point_in_grid_order():
    grid = {"nice": [0, 10, 19], "max_sleep_avg": [2000, 10000]}
    rows = ps.sweep(share_of_reniced, grid, max_workers=2)
    assert [(r["nice"], r["max_sleep_avg"]) for r in rows] == [
        (n, m) for n in (0, 10, 19) for m in (2000, 10000)]
    # nice works through timeslices in the O(1) scheduler: shares fall with nice
    by_nice = {r["nice"]: r["share"] for r in rows if r["max_sleep_avg"] == 2000}
    assert by_nice[0] > by_nice[10] > by_nice[19]


def test_a_process_pool_and_a_thread_pool_give_the_same_rows():
    grid = [{"nice": 5, "max_sleep_avg": 3000}, {"nice": -5, "max_sleep_avg": 3000}]
    with ThreadPoolExecutor(2) as ex:
        threaded = ps.sweep(share_of_reniced, grid, executor=ex)
    assert threaded == ps.sweep(share_of_reniced, grid, max_workers=2)


def test_a_grid_value_that_is_not_a_list_is_a_type_error():
    with pytest.raises(TypeError, match="grid\\['nice'\\] must be a list of values"):
        ps.sweep(share_of_reniced, {"nice": 5})


def test_a_numpy_grid_sweeps_as_the_plain_values_it_holds():
    grid = {"nice": np.array([0, 10], dtype=np.int32),
            "max_sleep_avg": np.geomspace(1, 1000, 4).astype(int)}
    rows = ps.sweep(share_of_reniced, grid, max_workers=np.int64(2))
    assert rows == ps.sweep(share_of_reniced, {"nice": [0, 10], "max_sleep_avg": [1, 10, 100, 1000]},
                            max_workers=2)
    assert {type(r[k]) for r in rows for k in grid} == {int}
    with ThreadPoolExecutor(1) as ex:
        points = ps.sweep(lambda **p: {}, [{"x": np.float32(0.5), "y": np.bool_(True)}], executor=ex)
    assert points == [{"x": 0.5, "y": True}] and type(points[0]["y"]) is bool


def test_grid_names_must_be_str():
    with pytest.raises(TypeError, match="grid names must be str .*, not 1"):
        ps.sweep(share_of_reniced, {1: [0]})
    with pytest.raises(TypeError, match="grid names must be str .*, not 1"):
        ps.sweep(share_of_reniced, [{1: 0}])


@pytest.mark.parametrize("bad,exc,match", [
    (0, ValueError, "max_workers=0 is outside the allowed range 1.."),
    (2.0, TypeError, "max_workers must be an int, not float"),
    (True, TypeError, "max_workers must be an int, not bool"),
])
def test_max_workers_is_an_int_named_in_its_error(bad, exc, match):
    with pytest.raises(exc, match=match):
        ps.sweep(share_of_reniced, {"nice": [0], "max_sleep_avg": [1000]}, max_workers=bad)


class CountingExecutor(ThreadPoolExecutor):
    """A one-worker pool that counts the points it starts."""

    def __init__(self):
        super().__init__(max_workers=1)
        self.started = 0

    def submit(self, fn, *args):
        def counted():
            self.started += 1
            return fn(*args)
        return super().submit(counted)


def interrupted_at_the_second_point(x):
    if x == 1:
        raise KeyboardInterrupt  # as Ctrl-C arrives while the caller waits
    time.sleep(0.02)  # a point takes a while: the others are still queued
    return {"y": x}


def test_an_interrupted_sweep_cancels_the_points_still_queued():
    with CountingExecutor() as ex:
        with pytest.raises(KeyboardInterrupt):
            ps.sweep(interrupted_at_the_second_point, {"x": range(50)}, executor=ex)
    assert ex.started <= 3  # the 47 or more still queued never ran


def test_an_executor_needs_only_submit():
    # Dask's client.get_executor() maps with len() on every argument; a sweep
    # submits point by point instead
    class SubmitOnly:
        def __init__(self):
            self.pool = ThreadPoolExecutor(2)

        def submit(self, fn, *args):
            return self.pool.submit(fn, *args)

    ex = SubmitOnly()
    rows = ps.sweep(interrupted_at_the_second_point, {"x": [0, 2, 3]}, executor=ex)
    ex.pool.shutdown()
    assert [r["y"] for r in rows] == [0, 2, 3]
