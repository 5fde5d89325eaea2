"""Metrics of a run (pysched.metrics): CPU shares, wakeup latency, the
longest runnable wait, Jain's index, and the periodic tasks' deadlines and
interbench numbers, checked against the simulator's own counters and
against examples worked out by hand."""
import math
import sys

import numpy as np
import pytest

import pysched as ps
from pysched import metrics as M

pd = pytest.importorskip("pandas")

PRESETS = ps.presets()
MS = 1_000_000


def busy(preset="linux-2.5.65", cpus=2, seconds=2.0, **kwargs):
    sim = ps.policy.testing.busy_machine(preset, cpus=cpus, record="events", **kwargs)
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
    sim = ps.policy.testing.busy_machine("linux-2.5.65", cpus=2, record="series", series_fields=["cpu_ns"],
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
            sim = ps.policy.testing.busy_machine("linux-2.5.65", cpus=2, record="events")
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
            sim = ps.policy.testing.busy_machine("linux-2.5.65", cpus=2, record="events")
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


# ---------------------------------------------------------------- periodic records

def records(*rows, pid=1):
    """Periodic records from (latency_us, missed_latency_us, finish, met,
    missed, dropped) rows, 50 ms apart; finish False: the work was skipped."""
    out = np.zeros(len(rows), dtype=M.PERIODIC_DTYPE)
    for k, (lat, lost, done, met, missed, dropped) in enumerate(rows):
        start = k * 50 * MS
        out[k] = (start, start, lat * 1000, start + 2 * MS if done else -1, lost * 1000, pid, met,
                  missed, dropped)
    return out


def test_interbench_mean_and_sd_by_hand_with_the_variance_quirk():
    # latencies 0, 1000, 2000 us: total 3000, squares 0 + 1e6 + 4e6 = 5,000,000
    rec = records((0, 0, 1, 1, 0, 0), (1000, 0, 1, 1, 0, 0), (2000, 0, 1, 1, 0, 0))
    ib = M.interbench_stats(rec)
    row = ib.loc[1]
    assert (row.samples, row.total_latency_us, row.sum_latency_squared_us2,
            row.max_latency_us) == (3, 3000, 5_000_000, 2000)
    assert row.mean_ms == 1.0                       # 3000 // 3 us
    # interbench: (5,000,000 - 1000^2 / 3) / (3 - 1) = 2,333,333.33 us^2 -> 1527.525 us
    assert row.sd_ms == pytest.approx(math.sqrt((5_000_000 - 1000**2 / 3) / 2) / 1000, rel=1e-15)
    assert row.sd_ms == pytest.approx(1.5275252, rel=1e-7)
    assert row.max_ms == 2.0
    # the sample SD: ((-1000)^2 + 0 + 1000^2) / 2 = 1e6 us^2 -> 1000 us
    fixed = M.interbench_stats(rec, compat=False).loc[1]
    assert fixed.sd_ms == 1.0 and fixed.mean_ms == 1.0
    assert fixed.sd_ms == np.std([0, 1000, 2000], ddof=1) / 1000


def test_interbench_works_in_whole_microseconds_and_divides_them_as_integers():
    # 1999 ns is 1 us, 2000 ns 2 us; the latency of a call adds the
    # intervals it lost: 0.5 ms + 16.666 ms = 17166 us
    rec = np.zeros(3, dtype=M.PERIODIC_DTYPE)
    rec["pid"] = 1
    rec["latency_ns"] = [1999, 2000, 500_000]
    rec["missed_latency_ns"] = [0, 0, 16_666_000]
    rec["finish_ns"] = 1
    ib = M.interbench_stats(rec).loc[1]
    assert ib.total_latency_us == 1 + 2 + 17166 and ib.max_latency_us == 17166
    assert ib.mean_ms == (17169 // 3) / 1000 == 5.723
    assert M.interbench_stats(rec, compat=False).loc[1].mean_ms == pytest.approx(17169 / 3 / 1000)
    # 1 us and 2 us: the mean 3 // 2 = 1 us, not 1.5
    assert M.interbench_stats(rec[:2]).loc[1].mean_ms == 0.001
    assert M.interbench_stats(rec[:2], compat=False).loc[1].mean_ms == 0.0015


def test_interbench_with_one_sample():
    ib = M.interbench_stats(records((2500, 0, 1, 1, 0, 0)))
    assert (ib.loc[1].mean_ms, ib.loc[1].sd_ms) == (2.5, 0.0)
    assert math.isnan(M.interbench_stats(records((2500, 0, 1, 1, 0, 0)), compat=False).loc[1].sd_ms)


def test_the_corrected_sd_is_numpys_sample_sd():
    rng = np.random.default_rng(3)
    rec = np.zeros(500, dtype=M.PERIODIC_DTYPE)
    rec["pid"] = rng.integers(1, 4, size=500)
    rec["latency_ns"] = rng.integers(0, 50 * MS, size=500)
    rec["missed_latency_ns"] = rng.choice([0, 0, 0, 16_666_000], size=500)
    us = (rec["latency_ns"] + rec["missed_latency_ns"]) // 1000
    fixed = M.interbench_stats(rec, compat=False)
    quirky = M.interbench_stats(rec)
    for pid in (1, 2, 3):
        mine = us[rec["pid"] == pid]
        assert fixed.loc[pid, "sd_ms"] == pytest.approx(np.std(mine, ddof=1) / 1000, rel=1e-12)
        assert fixed.loc[pid, "mean_ms"] == pytest.approx(mine.mean() / 1000, rel=1e-12)
        # the quirk subtracts mean^2 / n: a far larger "SD" with many samples
        n, total, squares = len(mine), int(mine.sum()), int((mine.astype(object) ** 2).sum())
        mean = float(total // n)
        assert quirky.loc[pid, "sd_ms"] == pytest.approx(
            math.sqrt((squares - mean * mean / n) / (n - 1)) / 1000, rel=1e-15)
        assert quirky.loc[pid, "sd_ms"] > 1.2 * fixed.loc[pid, "sd_ms"]


def test_interbench_percentages_by_hand():
    rec = records(
        (0, 0, 1, 1, 0, 0),        # on time
        (300, 0, 1, 0, 1, 0),      # finished after the next deadline: one missed
        (0, 100_000, 0, 0, 2, 2),  # began two periods late: work skipped, 2 burns dropped
        (0, 0, 1, 1, 0, 0))        # on time
    ib = M.interbench_stats(rec).loc[1]
    assert (ib.achieved_burns, ib.missed_burns, ib.deadlines_met, ib.missed_deadlines) == (3, 2, 2, 3)
    assert ib.pct_desired_cpu == 3 / 5 * 100        # 60 %
    assert ib.pct_deadlines_met == 2 / 5 * 100      # 40 %
    assert ib.total_latency_us == 100_300 and ib.max_latency_us == 100_000
    d = M.deadlines(rec).loc[1]
    assert (d.samples, d.met, d.missed, d.achieved, d.dropped) == (4, 2, 3, 3, 2)
    assert (d.pct_met, d.pct_desired_cpu) == (40.0, 60.0)
    assert d.latency_max_ms == 100.0 and d.latency_mean_ms == pytest.approx(100.3 / 4)
    assert d.latency_p50_ms == 0.15  # between 0 and 0.3 ms


def test_interbench_gives_0_percent_where_nothing_was_met_or_achieved():
    skipped = records((0, 50_000, 0, 0, 1, 1), (0, 50_000, 0, 0, 1, 1))
    ib = M.interbench_stats(skipped).loc[1]
    assert (ib.pct_desired_cpu, ib.pct_deadlines_met) == (0.0, 0.0)
    d = M.deadlines(skipped).loc[1]
    assert (d.pct_desired_cpu, d.pct_met) == (0.0, 0.0)


def test_gaming_counts_microseconds_of_cpu():
    # three 100 ms frames (due 100 ms after they start), finished 0, 5 and
    # 20 ms late; beside them an audio task of pid 2
    frames = np.zeros(3, dtype=M.PERIODIC_DTYPE)
    frames["pid"] = 1
    frames["start_ns"] = [0, 100 * MS, 205 * MS]
    frames["due_ns"] = frames["start_ns"] + 100 * MS
    frames["latency_ns"] = [0, 5 * MS, 20 * MS]
    frames["finish_ns"] = frames["due_ns"] + frames["latency_ns"]
    rec = np.concatenate([frames, records((1000, 0, 1, 1, 0, 0), pid=2)])
    ib = M.interbench_stats(rec, game=[1])
    game = ib.loc[1]
    # achieved 3 x 100,000 us, missed 0 + 5,000 + 20,000 us
    assert (game.achieved_burns, game.missed_burns) == (300_000, 25_000)
    assert game.pct_desired_cpu == 300_000 / 325_000 * 100
    assert math.isnan(game.pct_deadlines_met) and game.game
    assert game.mean_ms == (25_000 // 3) / 1000 and game.max_ms == 20.0
    audio = ib.loc[2]
    assert not audio.game and (audio.achieved_burns, audio.pct_deadlines_met) == (1, 100.0)
    assert M.interbench_stats(frames, game=True).loc[1].equals(game)
    assert M.interbench_stats(frames).loc[1].achieved_burns == 3  # counted as calls


def test_the_sums_are_unsigned_64_bit_as_interbench_keeps_them():
    # 3.1e9 us squared is 9.61e18: beyond int64, within unsigned long long
    rec = records((3_100_000_000, 0, 1, 1, 0, 0))
    assert M.interbench_stats(rec).loc[1].sum_latency_squared_us2 == 3_100_000_000 ** 2


def test_deadlines_latency_stats_are_numpys_in_nanoseconds():
    rng = np.random.default_rng(5)
    rec = np.zeros(200, dtype=M.PERIODIC_DTYPE)
    rec["pid"] = rng.integers(1, 3, size=200)
    rec["latency_ns"] = rng.integers(0, 10 * MS, size=200)
    rec["finish_ns"] = 1
    rec["met"] = 1
    d = M.deadlines(rec, tasks=[2, 7])
    mine = rec["latency_ns"][rec["pid"] == 2] / MS
    assert d.loc[2, "latency_p90_ms"] == pytest.approx(np.percentile(mine, 90), rel=1e-12)
    assert d.loc[2, "latency_mean_ms"] == pytest.approx(mine.mean(), rel=1e-12)
    assert d.loc[2, "pct_met"] == 100.0
    assert d.loc[7, "samples"] == 0 and math.isnan(d.loc[7, "pct_met"])
    assert math.isnan(d.loc[7, "latency_max_ms"])


def test_the_periodic_records_are_checked():
    good = records((0, 0, 1, 1, 0, 0))
    with pytest.raises(TypeError, match="needs the periodic records: a NumPy structured array with "
                                        "the fields start_ns"):
        M.deadlines([1, 2])
    with pytest.raises(ValueError, match=r"no field\(s\) \['dropped'\]"):
        M.interbench_stats(good[[n for n in M.PERIODIC_DTYPE.names if n != "dropped"]])
    floats = np.zeros(1, dtype=[(n, "<f8" if n == "met" else "<i8") for n in M.PERIODIC_DTYPE.names])
    with pytest.raises(TypeError, match="field 'met' must hold integers, not float64"):
        M.deadlines(floats)
    for field, value, allowed in (("met", 2, "0..1"), ("latency_ns", -1, ">= 0"),
                                  ("finish_ns", -2, ">= -1"), ("pid", 0, ">= 1")):
        bad = good.copy()
        bad[field] = value
        with pytest.raises(ValueError,
                           match=f"field '{field}' holds {value} at record 0; allowed: {allowed}"):
            M.interbench_stats(bad)
    with pytest.raises(ValueError, match="must be a vector"):
        M.deadlines(np.stack([good, good]))
    with pytest.raises(TypeError, match="compat must be a bool"):
        M.interbench_stats(good, compat="yes")
    # other integer widths and extra fields are taken
    wide = np.zeros(1, dtype=[(n, "<i8") for n in M.PERIODIC_DTYPE.names] + [("note", "<i2")])
    for n in M.PERIODIC_DTYPE.names:
        wide[n] = good[n]
    assert M.interbench_stats(wide).equals(M.interbench_stats(good))


def test_a_simulator_gives_its_periodic_records():
    # interbench's Audio alone for 10 s: 200 calls, all on time
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.Program().loop().periodic(50_000, 2_500).end(), name="audio")
    sim.run(seconds=9.99)
    assert M.PERIODIC_DTYPE == sim.periodic().dtype
    row = M.interbench_stats(sim).loc[1]
    assert row["samples"] == 200 and row["mean_ms"] == row["max_ms"] == 0
    assert row["pct_desired_cpu"] == row["pct_deadlines_met"] == 100


# ---------------------------------------------------------------- without pandas

def test_without_pandas_a_table_is_a_dict_of_arrays(monkeypatch):
    sim = busy(seconds=0.5)
    rec = records((0, 0, 1, 1, 0, 0), (1000, 0, 1, 1, 0, 0))
    frames = [M.cpu_share(sim), M.wakeup_latency(sim), M.longest_wait(sim),
              M.deadlines(rec), M.interbench_stats(rec)]
    monkeypatch.setitem(sys.modules, "pandas", None)
    dicts = [M.cpu_share(sim), M.wakeup_latency(sim), M.longest_wait(sim),
             M.deadlines(rec), M.interbench_stats(rec)]
    for frame, table in zip(frames, dicts):
        assert isinstance(table, dict) and list(table) == ["pid", *frame.columns]
        assert list(table["pid"]) == list(frame.index)
        for c in frame.columns:
            assert np.array_equal(np.asarray(table[c]), frame[c].to_numpy(),
                                  equal_nan=frame[c].dtype.kind == "f")
