"""Fairness against the fair policies' own promise (sim.watch, sim.invariants;
csrc/policies/fair_watch.c): each task's lag, w_i * (V - v_i) in ns of
service, its extremes while watched, EEVDF's bound (the clamp of 6.6's
update_entity_lag and 6.12's entity_lag, max(2 x slice, a tick)) and the
instant it is broken; and a window's CPU shares against the weights'
fluid shares (Invariants.weight_shares)."""
import math
import pickle

import numpy as np
import pytest

import pysched as ps
from cuts import four_ways, watched

HOG = ps.programs.cpu_hog
EEVDF = "linux-6.12-eevdf"
W0, W5 = 1024, 335   # sched_prio_to_weight of nice 0 and 5


def row(inv, pid):
    return inv.tasks[inv.tasks["pid"] == pid][0]


def two_hogs(preset=EEVDF):
    sim = ps.Simulator(preset)
    pids = sim.spawn(HOG(), nice=0), sim.spawn(HOG(), nice=5)
    sim.watch(lag=True)
    return sim, pids


def test_two_hogs_at_nice_0_and_5_share_the_cpu_as_1024_to_335_within_their_lag_bound():
    sim, (p0, p5) = two_hogs()
    sim.run(seconds=1)
    start = sim.invariants()
    sim.run(seconds=4)
    inv = sim.invariants()
    shares = inv.weight_shares(since=start)
    assert list(shares["pid"]) == [p0, p5]
    assert list(shares["fluid_share"]) == [W0 / (W0 + W5), W5 / (W0 + W5)]
    assert (np.abs(shares["error"]) < 0.01).all()          # within 1 point
    assert math.isnan(inv.lag_broken_s) and len(inv.lag_broken) == 0
    t = inv.tasks
    assert (t["lag_broken_ns"] == -1).all()
    # the bound is the 0.75 ms base slice doubled (6.12's entity_lag clamp)
    assert list(t["lag_bound_ns"]) == [2 * sim.task(p0).slice] * 2 == [1_500_000] * 2
    assert (-t["lag_bound_ns"] <= t["lag_min_ns"]).all() and (t["lag_max_ns"] <= t["lag_bound_ns"]).all()
    # the lags of a cfs_rq sum to zero: one's extremes mirror the other's
    assert row(inv, p0)["lag_max_ns"] == pytest.approx(-row(inv, p5)["lag_min_ns"], abs=100)
    # picked while eligible (lag >= 0), a hog runs until the tick ends its
    # 0.75 ms request: a whole tick, of which its share was w / W
    tick_ns = 1e9 / sim.hz
    assert row(inv, p5)["lag_min_ns"] == pytest.approx(-(1 - W5 / (W0 + W5)) * tick_ns, abs=100)
    assert row(inv, p0)["lag_min_ns"] == pytest.approx(-(1 - W0 / (W0 + W5)) * tick_ns, abs=100)


def long_and_short_slices():
    """6.12's per-task slices (sched_attr.sched_runtime): a 100 ms request
    runs to parity while the task beside it, on the 0.75 ms base slice,
    waits and is owed half of it -- past its own clamp of 1.5 ms, the case
    "sched/fair: Increase max lag clamping" (2025) answers."""
    sim = ps.Simulator(EEVDF)
    long = sim.spawn(HOG(), init={"slice": 100_000_000}, name="long")
    short = sim.spawn(HOG(), name="short")
    return sim, long, short


def test_a_long_custom_slice_beside_the_base_slice_breaks_the_short_tasks_bound():
    sim, long, short = long_and_short_slices()
    sim.watch(lag=True)
    sim.run(seconds=1)
    inv = sim.invariants()
    s, lng = row(inv, short), row(inv, long)
    assert s["lag_bound_ns"] == 1_500_000 and lng["lag_bound_ns"] == 200_000_000
    # owed more than a third of the long request, far past its clamp
    assert s["lag_max_ns"] > 40_000_000 > s["lag_bound_ns"]
    assert 0 < s["lag_broken_ns"] < 10_000_000
    # the long task got what the short one is owed, within its own bound
    assert lng["lag_min_ns"] == pytest.approx(-s["lag_max_ns"], abs=100)
    assert lng["lag_broken_ns"] == -1
    assert list(inv.lag_broken["pid"]) == [short]
    assert inv.lag_broken_s == s["lag_broken_ns"] / 1e9
    pid, lag_ns, bound_ns, cpu = inv.lag_broken_by
    assert (pid, bound_ns, cpu) == (short, 1_500_000, 0) and lag_ns > bound_ns
    assert f"lag bound broken at {inv.lag_broken_s:.6f} s (pid {short}" in repr(inv)


def test_the_kernel_loses_the_lag_past_the_clamp_when_the_task_leaves():
    """What the bound is for: a task that sleeps while owed more than its
    clamp keeps only the clamp (entity_lag) -- the rest is lost."""
    sim = ps.Simulator(EEVDF)
    sim.spawn(HOG(), init={"slice": 100_000_000}, name="long")
    short = sim.spawn(ps.Program().run(ms=1).sleep(ms=30).loop().run(ms=1).end(), name="short")
    sim.watch(lag=True)
    sim.run(seconds=0.5)
    t = row(sim.invariants(), short)
    assert t["lag_max_ns"] > 2 * t["lag_bound_ns"]
    # its saved vlag, in virtual time, is the clamp: calc_delta_fair(1.5 ms) at nice 0
    assert sim.task(short).vlag == ps.formula(EEVDF, "lag_limit", sim.task(short).slice, 0)


def test_6_6s_own_slice_breaks_its_clamp_when_a_request_ends_between_ticks():
    """Without custom slices too: at HZ=1000 on 1 CPU the 0.75 ms base slice
    is shorter than the tick, and without HRTICK a request ends only at a
    tick.  A nice-19 hog picked as a 0.3 ms sleeper blocks, 0.3 ms past a
    tick, has run 0.7 ms of its 0.75 ms at the next tick and runs to the
    one after: 1.7 ms, of which its weight's share (15 of 89,800) is
    nothing -- past max(2 x 0.75 ms, 1 ms), the "plus a tick" the 2025
    clamp adds."""
    sim = ps.Simulator("linux-6.6-eevdf")
    sim.spawn(HOG(), nice=-20)
    light = sim.spawn(HOG(), nice=19)
    sim.spawn(ps.Program().loop().run(us=300).sleep(us=1700).end())
    sim.watch(lag=True)
    sim.run(seconds=5)
    t = row(sim.invariants(), light)
    tick_ns = 1e9 / sim.hz
    assert t["lag_bound_ns"] == 1_500_000 < 2 * sim.task(light).slice + 1
    assert t["lag_min_ns"] == pytest.approx(-(2 * tick_ns - 300_000), abs=1000)
    assert t["lag_broken_ns"] > 0


def test_stop_on_lag_stops_the_run_at_the_instant_the_bound_is_broken():
    sim, long, short = long_and_short_slices()
    sim.watch(stop_on="lag")
    with pytest.raises(ps.InvariantError, match=rf"lag bound broken at t=\d+ ns: pid {short}'s lag "
                                                rf"\d+ ns is outside \+-1500000 ns \(on cpu 0\)"):
        sim.run(seconds=1)
    inv = sim.invariants()
    # stopped at that instant, the first the kernel's accounting showed it
    assert sim.now_ns == row(inv, short)["lag_broken_ns"] == round(inv.lag_broken_s * 1e9) > 0
    # and it goes on when asked
    sim.watch(lag=True)
    sim.run(seconds=0.1)
    assert sim.now_ns > row(inv, short)["lag_broken_ns"]


def test_cfs_reports_its_lag_with_no_bound_and_other_presets_none():
    sim, hogs = two_hogs("linux-6.5-cfs")
    sleeper = sim.spawn(ps.Program().loop().run(ms=1).sleep(ms=3).end())
    sim.run(seconds=2)
    inv = sim.invariants()
    t = inv.tasks
    for pid in hogs:
        assert row(inv, pid)["lag_min_ns"] < 0 < row(inv, pid)["lag_max_ns"]
    # CFS's sleeper credit: woken, a task is placed up to half
    # sched_latency behind min_vruntime (place_entity), below V: it is owed
    # service whenever it is queued
    assert row(inv, sleeper)["lag_min_ns"] > 0
    assert np.isnan(t["lag_bound_ns"]).all() and (t["lag_broken_ns"] == -1).all()
    # 2.5.65 has no lag: NaN, and no fluid share
    sim, _ = two_hogs("linux-2.5.65")
    sim.run(seconds=1)
    inv = sim.invariants()
    assert np.isnan(inv.tasks["lag_min_ns"]).all() and np.isnan(inv.tasks["lag_max_ns"]).all()
    assert np.isnan(inv.weight_shares()["fluid_share"]).all()


def test_a_sleeper_on_the_cpu_leaves_the_fluid_share_undefined_there():
    sim = ps.Simulator(EEVDF, cpus=2)
    hogs = [sim.spawn(HOG(), cpu=0, cpus_allowed=[0]), sim.spawn(HOG(), nice=5, cpu=0, cpus_allowed=[0])]
    sleeper = sim.spawn(ps.programs.interactive(1, 5), cpu=1, cpus_allowed=[1])
    hog1 = sim.spawn(HOG(), cpu=1, cpus_allowed=[1])
    sim.run(seconds=2)
    shares = sim.invariants().weight_shares()
    by_pid = {int(r["pid"]): r for r in shares}
    assert by_pid[hogs[0]]["fluid_share"] == W0 / (W0 + W5)
    assert abs(by_pid[hogs[1]]["error"]) < 0.01
    for pid in (sleeper, hog1):
        assert math.isnan(by_pid[pid]["fluid_share"]) and math.isnan(by_pid[pid]["error"])
        assert by_pid[pid]["share"] > 0


def test_task_groups_have_no_fluid_share_by_weight_but_their_tasks_have_a_lag():
    sim = ps.Simulator(EEVDF)
    sim.group("a", shares=2048)
    pids = [sim.spawn(HOG()) for _ in range(3)]
    sim.set_group(pids[0], "a")
    sim.set_group(pids[1], "a")
    sim.watch(stop_on="lag")
    sim.run(seconds=2)
    inv = sim.invariants()
    assert np.isnan(inv.weight_shares()["fluid_share"]).all()
    # the two in the group take turns on the group's cfs_rq, a tick of the
    # group's time each, half of it the other's: their lags, in the
    # group's time, span half a tick and mirror each other
    tick_ns = 1e9 / sim.hz
    a, b = row(inv, pids[0]), row(inv, pids[1])
    assert a["lag_max_ns"] - a["lag_min_ns"] == pytest.approx(tick_ns / 2, abs=100)
    assert (a["lag_min_ns"], a["lag_max_ns"]) == pytest.approx((-b["lag_max_ns"], -b["lag_min_ns"]), abs=100)
    # beside the group's entity (2048 of 3072), a tick costs the root's task
    # 2/3 of it: its lag spans that
    c = row(inv, pids[2])
    assert c["lag_max_ns"] - c["lag_min_ns"] == pytest.approx(tick_ns * 2 / 3, abs=1000)


def test_on_six_sleepers_eevdf_keeps_its_bound_and_cfs_lags_spread_wider():
    """The table of docs/guide/invariants.md: CFS has no bound, and its
    lags spread past the one EEVDF keeps."""
    spread = {}
    for preset in ("linux-6.5-cfs", EEVDF):
        sim = ps.Simulator(preset, cpus=2)
        for r, s in [(5, 20), (3, 7), (20, 30), (1, 2), (8, 4), (2, 9)]:
            sim.spawn(ps.programs.interactive(r, s))
        sim.watch(lag=True)
        sim.run(seconds=20)
        inv = sim.invariants()
        spread[preset] = (inv.tasks["lag_min_ns"].min(), inv.tasks["lag_max_ns"].max(),
                          inv.tasks["lag_bound_ns"].max(), len(inv.lag_broken))
    lo, hi, bound, broken = spread[EEVDF]
    assert bound == 2 * sim.task(1).slice == 3_000_000 and broken == 0 and -bound < lo < hi < bound
    cfs_lo, cfs_hi, _, _ = spread["linux-6.5-cfs"]
    assert cfs_lo < -bound and cfs_hi > bound


@pytest.mark.parametrize("preset", ["linux-6.5-cfs", "linux-2.5.65"])
def test_stop_on_lag_needs_a_preset_whose_lag_has_a_bound(preset):
    sim = ps.Simulator(preset)
    with pytest.raises(ValueError, match=f"stop_on='lag' needs an EEVDF preset.*'{preset}' has none"):
        sim.watch(stop_on="lag")


def test_bad_windows_are_refused():
    sim, _ = two_hogs()
    sim.run(seconds=0.2)
    later = sim.invariants()
    with pytest.raises(TypeError, match="since=5 is not an Invariants report"):
        later.weight_shares(since=5)
    sim.run(seconds=0.2)
    with pytest.raises(ValueError, match="later than this report"):
        later.weight_shares(since=sim.invariants())


# ---------------------------------------------------------------- however cut

def busy_fair(**kwargs):
    sim = ps.Simulator(EEVDF, cpus=2, **kwargs)
    sim.spawn(HOG(), cpu=0, init={"slice": 20_000_000})
    sim.spawn(HOG(), nice=3)
    for r, s in [(5, 20), (3, 7), (20, 30), (1, 2)]:
        sim.spawn(ps.programs.interactive(r, s), cpu=0)
    sim.spawn(ps.Program().loop().run(ms=2).fork(ps.Program().run(ms=1).exit()).sleep(ms=3).end())
    sim.watch(lag=True)
    return sim


def test_lags_are_the_same_whole_in_chunks_stepped_copied_and_pickled():
    whole, chunks, stepped, plain = four_ways(busy_fair, 2)
    half = busy_fair()
    half.run(seconds=1)
    copied, unpickled = half.copy(), pickle.loads(pickle.dumps(half))
    for s in (copied, unpickled):
        s.run(seconds=1)
    expected = watched(whole)
    assert len(whole.invariants().lag_broken) > 0      # the 20 ms slice breaks others' bounds
    for other in (chunks, stepped, plain, copied, unpickled):
        assert watched(other) == expected


def test_watching_the_lag_changes_nothing_in_the_run_and_its_state_checks_hold():
    from numpy.lib import recfunctions as rf
    watched, plain = busy_fair(debug=True), busy_fair()
    plain.unwatch()
    for sim in (watched, plain):
        sim.run(seconds=2)
    watched.check()
    assert not np.isnan(watched.invariants().tasks["lag_min_ns"]).any()
    drop = ["starved_ns", "lag_min_ns", "lag_max_ns", "lag_broken_ns"]
    assert rf.drop_fields(watched.stats(), drop).tolist() == rf.drop_fields(plain.stats(), drop).tolist()
    # unwatched, no lag is measured
    assert (plain.stats()["lag_min_ns"] == np.iinfo(np.int64).min).all()


def test_the_lags_in_a_frame():
    pytest.importorskip("pandas")
    sim, long, short = long_and_short_slices()
    sim.watch(lag=True)
    sim.run(seconds=0.5)
    frame = sim.invariants().to_frame()
    assert frame.loc[short, "lag_bound_s"] == pytest.approx(0.0015)
    assert frame.loc[short, "lag_max_s"] > 0.04 and frame.loc[short, "lag_broken_s"] < 0.01
    assert np.isnan(frame.loc[long, "lag_broken_s"])
    stats = sim.stats_frame()
    assert stats.loc[short, "lag_max_s"] == frame.loc[short, "lag_max_s"]


def test_the_lag_is_measured_only_when_asked_for():
    # sim.watch() alone keeps its cost to the CPUs' look; lag=True (or
    # stop_on="lag") adds the lags
    plain = ps.Simulator(EEVDF)
    plain.spawn(HOG(), nice=0)
    plain.spawn(HOG(), nice=5)
    lagged = plain.copy()
    plain.watch()
    lagged.watch(lag=True)
    for sim in (plain, lagged):
        sim.run(seconds=1)
    assert np.isnan(plain.invariants().tasks["lag_max_ns"]).all()
    assert (lagged.invariants().tasks["lag_max_ns"] > 0).all()
    a, b = plain.stats(), lagged.stats()
    assert all(np.array_equal(a[n], b[n]) for n in a.dtype.names if not n.startswith("lag_"))
    with pytest.raises(TypeError, match="lag"):
        plain.watch(lag="yes")
