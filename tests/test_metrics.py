"""Metrics of a run (pysched.metrics): CPU shares, wakeup latency, the
longest runnable wait and Jain's index, checked against the simulator's
own counters and against examples worked out by hand."""
import math

import numpy as np
import pytest

import pysched as ps
from pysched import metrics as M

pd = pytest.importorskip("pandas")

PRESETS = ps.presets()
MS = 1_000_000


def busy(preset="linux-2.5.65", cpus=2, seconds=2.0, **kwargs):
    sim = ps.testing.busy_machine(preset, cpus=cpus, record="events", **kwargs)
    sim.run(seconds=seconds)
    return sim


# ---------------------------------------------------------------- cpu_share

def test_a_hog_alone_on_its_cpu_has_share_one_over_the_time_it_existed():
    sim = ps.Simulator("linux-2.5.65", cpus=2, record="events")
    sim.spawn(ps.programs.cpu_hog(), name="hog", cpus_allowed=[0])
    sim.run(seconds=1)
    short = sim.spawn(ps.Program().run(ms=300).exit(), name="short", cpus_allowed=[1])
    sim.run(seconds=1)
    share = M.cpu_share(sim)
    # the short task lived 1.0 .. 1.3 s and ran all of it: not 300/2000
    assert share.loc[short, "elapsed_ms"] == 300 and share.loc[short, "share"] == 1
    assert list(share["share"]) == [1, 1]
    # a window cuts each task's life to it: 0.5 .. 1.1 s holds 100 ms of it
    window = M.cpu_share(sim, start_s=0.5, end_s=1.1)
    assert list(window["cpu_ms"]) == [600, 100] and list(window["share"]) == [1, 1]
    # a window the task did not live in: NaN, not 0
    assert math.isnan(M.cpu_share(sim, start_s=1.5, tasks="short")["share"].iloc[0])


def test_two_hogs_on_one_cpu_share_it_and_the_shares_fill_it():
    sim = ps.Simulator("linux-2.5.65", record="events")
    for name in "ab":
        sim.spawn(ps.programs.cpu_hog(), name=name)
    sim.run(seconds=10)
    share = M.cpu_share(sim)
    assert share["share"].sum() == pytest.approx(1, abs=1e-12)
    assert np.allclose(share["share"], 0.5, atol=0.01)
    assert M.jain_index(share["share"]) > 0.9999


@pytest.mark.parametrize("cpus", [1, 3])
@pytest.mark.parametrize("preset", PRESETS)
def test_a_window_over_the_whole_run_gives_the_counters_shares(preset, cpus):
    # the window reads the switch events, the default the counters: two
    # independent ways to the same nanoseconds
    sim = busy(preset, cpus)
    whole, window = M.cpu_share(sim), M.cpu_share(sim, start_s=0)
    assert np.array_equal(whole["cpu_ms"], window["cpu_ms"])
    assert np.array_equal(whole["elapsed_ms"], window["elapsed_ms"])


def test_a_window_agrees_with_the_sampled_cpu_ns():
    sim = ps.testing.busy_machine("linux-2.5.65", cpus=2, record="series", series_fields=["cpu_ns"],
                                  series_every=10)
    sim.run(seconds=2)
    times, cpu = sim.series_times(), sim.series("cpu_ns")
    i, j = np.searchsorted(times, [0.5e9, 1.5e9])
    alive = ~np.isnan(cpu[i]) & ~np.isnan(cpu[j])
    window = M.cpu_share(sim, start_s=times[i] / 1e9, end_s=times[j] / 1e9)
    ran = window["cpu_ms"].to_numpy()[: cpu.shape[1]]
    assert alive.sum() >= 5
    assert np.allclose(ran[alive], (cpu[j] - cpu[i])[alive] / MS, rtol=0, atol=1e-9)


def test_a_truncated_log_serves_windows_from_its_oldest_record():
    full = busy()
    for sim in (busy(max_trace_bytes=32 * 1000, on_full="overwrite"), None):
        if sim is None:  # emptied half-way
            sim = ps.testing.busy_machine("linux-2.5.65", cpus=2, record="events")
            sim.run(seconds=1)
            sim.clear_records()
            sim.run(seconds=1)
        begins = sim.events()["time_ns"][0] / 1e9
        assert begins > 0.2
        assert np.array_equal(M.cpu_share(sim, start_s=begins)["cpu_ms"],
                              M.cpu_share(full, start_s=begins)["cpu_ms"])
        with pytest.raises(ValueError, match="the event log starts at .* start the window there"):
            M.cpu_share(sim, start_s=begins - 0.1)


def test_cpu_share_checks_its_arguments():
    sim = busy(seconds=0.5)
    assert list(M.cpu_share(sim, tasks=["X", 1]).index) == [1, 2]
    with pytest.raises(KeyError, match="no task named 'Y'"):
        M.cpu_share(sim, tasks="Y")
    with pytest.raises(KeyError, match=r"no record of task\(s\) \[999\]"):
        M.cpu_share(sim, tasks=999)
    with pytest.raises(ValueError, match="end_s=1 is after the end of the run"):
        M.cpu_share(sim, end_s=1)
    with pytest.raises(ValueError, match="is empty"):
        M.cpu_share(sim, start_s=0.3, end_s=0.2)
    with pytest.raises(TypeError, match="needs a pysched.Simulator, not ndarray"):
        M.cpu_share(sim.stats())
    with pytest.raises(ValueError, match="tasks is empty"):
        M.cpu_share(sim, tasks=[])
    counters = ps.Simulator("linux-2.5.65")
    counters.spawn(ps.programs.cpu_hog())
    counters.run(seconds=0.1)
    assert list(M.cpu_share(counters)["share"]) == [1]
    with pytest.raises(ps.StateError, match="record='events'"):
        M.cpu_share(counters, start_s=0)


# ---------------------------------------------------------------- wakeup_latency

def test_wakeup_latency_per_task_is_numpys_and_the_counters():
    sim = busy(seconds=3)
    table = M.wakeup_latency(sim, percentiles=(50, 90, 99, 99.9))
    rec, st = sim.latencies(), sim.stats()
    assert list(table.columns) == ["name", "count", "mean_ms", "p50_ms", "p90_ms", "p99_ms",
                                   "p99.9_ms", "max_ms"]
    assert list(table.index) == list(st["pid"])
    # the latency buffer did not fill: every wakeup is there
    assert np.array_equal(table["count"], st["lat_count"])
    woken = st["lat_count"] > 0
    assert np.allclose(table["mean_ms"][woken], (st["lat_sum_ns"] / st["lat_count"] / MS)[woken])
    assert np.array_equal(table["max_ms"][woken], (st["lat_max_ns"] / MS)[woken])
    for pid in st["pid"][woken]:
        mine = rec["latency_ns"][rec["pid"] == pid] / MS
        assert table.loc[pid, ["p50_ms", "p90_ms", "p99_ms", "p99.9_ms"]].tolist() == pytest.approx(
            np.percentile(mine, [50, 90, 99, 99.9]), rel=1e-12, abs=1e-12)
    # from the records alone: the same numbers for the pids they hold
    plain = M.wakeup_latency(rec, percentiles=(50, 90, 99, 99.9))
    assert "name" not in plain.columns
    assert plain.equals(table.loc[woken, plain.columns])


def test_wakeup_latency_pooled_and_of_a_vector():
    sim = busy()
    rec = sim.latencies()
    clients = M.wakeup_latency(sim, tasks=["client0", "client1"], pooled=True)
    mine = rec["latency_ns"][np.isin(rec["pid"], [3, 4])]
    assert clients["count"] == len(mine) > 10
    assert clients["mean_ms"] == pytest.approx(mine.mean() / MS)
    assert clients["p99_ms"] == pytest.approx(np.percentile(mine, 99) / MS)
    assert clients["max_ms"] == mine.max() / MS
    assert M.wakeup_latency(sim.latencies(3), pooled=True) == M.wakeup_latency(rec, tasks=3, pooled=True)
    with pytest.raises(TypeError, match="a vector of latencies has no pids"):
        M.wakeup_latency(sim.latencies(3))


def test_no_wakeups_give_nan_not_errors():
    empty = np.zeros(0, dtype=ps.LATENCY_DTYPE)
    pooled = M.wakeup_latency(empty, pooled=True)
    assert pooled["count"] == 0 and all(math.isnan(pooled[k]) for k in pooled if k != "count")
    assert len(M.wakeup_latency(empty)) == 0
    one = M.wakeup_latency(empty, tasks=[5])
    assert one.loc[5, "count"] == 0 and one.loc[5].drop("count").isna().all()
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.run(seconds=0.1)
    hog = M.wakeup_latency(sim)
    assert hog.loc[1, "count"] == 0 and math.isnan(hog.loc[1, "p99_ms"])


def test_wakeup_latency_checks_its_input():
    with pytest.raises(TypeError, match="needs a Simulator or sim.latencies"):
        M.wakeup_latency([1, 2, 3])
    with pytest.raises(ValueError, match=r"no field\(s\) \['latency_ns'\]"):
        M.wakeup_latency(np.zeros(2, dtype=[("pid", "<i4"), ("lat", "<i8")]))
    with pytest.raises(TypeError, match="field 'latency_ns' must hold integers, not float64"):
        M.wakeup_latency(np.zeros(2, dtype=[("pid", "<i4"), ("latency_ns", "<f8")]))
    with pytest.raises(ValueError, match="percentile=101 is outside the allowed range 0..100"):
        M.wakeup_latency(np.zeros(0, dtype=ps.LATENCY_DTYPE), percentiles=[101])
    with pytest.raises(TypeError, match="percentiles must be a list"):
        M.wakeup_latency(np.zeros(0, dtype=ps.LATENCY_DTYPE), percentiles=99)
    with pytest.raises(TypeError, match="names need|only a Simulator resolves"):
        M.wakeup_latency(np.zeros(0, dtype=ps.LATENCY_DTYPE), tasks="X")
    with pytest.raises(TypeError, match="pooled must be a bool"):
        M.wakeup_latency(np.zeros(0, dtype=ps.LATENCY_DTYPE), pooled=1)


# ---------------------------------------------------------------- longest_wait

@pytest.mark.parametrize("cpus", [1, 3])
@pytest.mark.parametrize("preset", PRESETS)
def test_the_runnable_stretches_add_up_to_the_wait_counter(preset, cpus):
    sim = busy(preset, cpus, seconds=3)
    waits = M.longest_wait(sim)
    st = sim.stats()
    assert np.array_equal(np.round(waits["total_wait_ms"].to_numpy() * MS).astype(np.int64),
                          st["wait_ns"])
    assert (waits["longest_ms"] <= waits["total_wait_ms"]).all()
    assert (waits["longest_ms"] > 0).sum() >= 5


def test_two_hogs_wait_one_timeslice_of_the_other():
    sim = ps.Simulator("linux-2.5.65", record="events")
    for name in "ab":
        sim.spawn(ps.programs.cpu_hog(), name=name)
    sim.run(seconds=2.05)
    waits = M.longest_wait(sim)
    slice_ms = ps.formula("linux-2.5.65", "task_timeslice", 120)  # 102 ticks at HZ=1000
    assert list(waits["longest_ms"]) == [slice_ms, slice_ms]
    # b waited first, from its spawn, while a ran its first slice
    assert waits.loc[2, "longest_start_ms"] == 0 and waits.loc[1, "longest_start_ms"] == slice_ms
    assert not waits["ongoing"].any()


def test_a_task_starved_by_a_fifo_hog_waits_the_whole_run():
    sim = ps.Simulator("linux-2.5.65", record="events")
    sim.spawn(ps.programs.cpu_hog(), name="normal")
    sim.spawn(ps.programs.cpu_hog(), name="fifo", policy="fifo", rt_priority=10)
    sim.run(seconds=1)
    waits = M.longest_wait(sim, tasks="normal")
    assert list(waits.index) == [1]
    assert waits.loc[1, "longest_ms"] == 1000 and waits.loc[1, "ongoing"]
    assert waits.loc[1, "longest_start_ms"] == 0


def test_a_task_starved_before_the_log_starts_waits_from_its_oldest_record():
    # a small log that keeps the last 100 events: the normal task's are gone
    sim = ps.Simulator("linux-2.5.65", record="events", max_trace_bytes=32 * 100,
                       on_full="overwrite")
    sim.spawn(ps.programs.cpu_hog(), name="normal")
    sim.spawn(ps.programs.cpu_hog(), name="fifo", policy="fifo", rt_priority=10)
    sim.spawn(ps.programs.interactive(1, 9), name="rt", policy="fifo", rt_priority=20)
    sim.run(seconds=2)
    ev = sim.events()
    assert sim.counters()["events_dropped"] > 0 and not np.isin(1, [ev["pid"], ev["other"]])
    begins_ms = ev["time_ns"][0] / MS
    normal = M.longest_wait(sim).loc[1]
    assert normal.ongoing and normal.longest_start_ms == begins_ms
    assert normal.longest_ms == 2000 - begins_ms == normal.total_wait_ms
    assert M.cpu_share(sim, start_s=begins_ms / 1000)["share"].tolist() == pytest.approx([0, 0.9, 0.1])


def _stretches(sim):
    pid, start, wait, ongoing = M._waits(sim, sim.stats(), sim.events())
    return pid, start, wait, ongoing


def test_a_truncated_log_gives_the_whole_logs_stretches_cut_at_its_start():
    full = busy()
    p, s, w, o = _stretches(full)
    for sim in (busy(max_trace_bytes=32 * 1000, on_full="overwrite"), None):
        if sim is None:
            sim = ps.testing.busy_machine("linux-2.5.65", cpus=2, record="events")
            sim.run(seconds=1)
            sim.clear_records()
            sim.run(seconds=1)
        begins = int(sim.events()["time_ns"][0])
        cut = np.maximum(s, begins)
        keep = s + w - cut > 0
        expected = sorted(zip(p[keep].tolist(), cut[keep].tolist(), (s + w - cut)[keep].tolist(),
                              o[keep].tolist()))
        p2, s2, w2, o2 = _stretches(sim)
        got = sorted(zip(p2.tolist(), s2.tolist(), w2.tolist(), o2.tolist()))
        assert [g for g in got if g[2] > 0] == expected
        assert len(expected) > 100


def test_longest_wait_needs_the_event_log():
    sim = ps.Simulator("linux-2.5.65")
    with pytest.raises(ps.StateError, match="longest_wait\\(\\) reads the event log.*record='events'"):
        M.longest_wait(sim)


# ---------------------------------------------------------------- jain_index

def test_jain_index_by_hand():
    assert M.jain_index([3, 3, 3]) == 1
    assert M.jain_index([0, 0, 0, 5]) == 0.25            # one gets all: 1/n
    assert M.jain_index([1, 2, 3]) == pytest.approx(6 / 7)  # 6^2 / (3 * 14)
    assert M.jain_index(np.array([2.0, 1.0]), weights=[2, 1]) == 1  # in proportion
    assert M.jain_index([1, 1], weights=[2, 1]) == pytest.approx(0.9)  # (0.5+1)^2 / (2*1.25)
    assert math.isnan(M.jain_index([0, 0]))


@pytest.mark.parametrize("x, weights, error, match", [
    ([1, -1], None, ValueError, "x must not be negative"),
    ([1, float("nan")], None, ValueError, "x holds NaN"),
    ([], None, ValueError, "x is empty"),
    ([[1, 2]], None, ValueError, "x must be a vector"),
    ([True, False], None, TypeError, "x must be numbers, not bool"),
    (["a"], None, TypeError, "x must be numbers"),
    ([1, 2], [1], ValueError, "weights has 1 values, x 2"),
    ([1, 2], [1, 0], ValueError, "weights must be positive"),
])
def test_jain_index_checks_its_input(x, weights, error, match):
    with pytest.raises(error, match=match):
        M.jain_index(x, weights=weights)
