"""Parameter sweeps over executors."""
from concurrent.futures import ThreadPoolExecutor

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
