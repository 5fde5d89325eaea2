"""The engine's semantics (csrc/engine.c, program.c, trace.c, the binding),
stated as claims about observable results: accounting, time, channels,
sources, loops, determinism, copies, recording, series and the invariant
checker.  Nothing here copies a number from a run: every expected value is
derived from the workload or from another, independent observation."""
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pysched as ps
from pysched import Program

PRESET = "linux-2.5.65"
TICK_NS = 1_000_000  # HZ=1000
MS = 1_000_000
KIND = {name: i for i, name in enumerate(ps.EVENT_KINDS)}
SWITCH, WAKEUP, EXIT = KIND["switch"], KIND["wakeup"], KIND["exit"]
INTERRUPTIBLE, UNINTERRUPTIBLE = 1, 2


def sim_(**kw):
    kw.setdefault("seed", 1)
    return ps.Simulator(PRESET, **kw)


def mixed_workload(sim):
    """Hogs, sleepers, I/O, a channel ping-pong, a device-driven server and
    client, a shell that forks children that exit, and a finite task.  Two
    hogs are always runnable, so the CPU never idles."""
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.spawn(ps.programs.cpu_hog(), name="hog+5", nice=5)
    sim.spawn(Program().loop().run(ms=ps.uniform(0.2, 3)).sleep(ms=ps.exponential(8)).end(),
              name="sleeper")
    sim.spawn(Program().loop().run(us=ps.normal(400, 150)).sleep(ms=ps.uniform(0, 7)).end(),
              name="sleeper2", nice=-3)
    sim.spawn(Program().loop().run(us=300).io(us=ps.uniform(100, 4000)).end(), name="disk")
    sim.spawn(Program().loop().run(us=50).post("ping", sync=True).wait("pong").end(), name="ping")
    sim.spawn(Program().loop().wait("ping").run(us=120).post("pong").end(), name="pong")
    sim.spawn(ps.programs.x_server("input", "client"), name="X")
    sim.spawn(ps.programs.x_client("client"), name="xterm")
    sim.source("input", poisson_ms=9)
    child = Program().run(ms=ps.uniform(0.5, 4)).io(ms=1).sleep(ms=2)          # exits off its end
    child2 = Program().loop(3).run(us=700).sleep(ms=1).end().exit().run(s=1)   # explicit exit
    sim.spawn(Program().loop().sleep(ms=25).fork(child, 2).fork(child2).end(), name="shell")
    sim.spawn(Program().loop(40).run(ms=2).sleep(ms=3).end(), name="finite")


def random_workload(sim):
    """A workload whose every duration is random, plus a Poisson source."""
    sim.spawn(Program().loop().run(ms=ps.uniform(1, 40)).end(), name="hogish", nice=5)
    sim.spawn(Program().loop().run(ms=ps.exponential(2)).sleep(ms=ps.exponential(5)).end())
    sim.spawn(Program().loop().run(us=ps.normal(800, 300)).io(us=ps.normal(2000, 900)).end())
    sim.spawn(Program().loop().wait("dev").run(ms=ps.uniform(0.1, 2)).end())
    sim.source("dev", poisson_ms=4)


def alive_time(row, now_ns):
    end = row["exit_ns"] if row["exit_ns"] >= 0 else now_ns
    return end - row["start_ns"]


def same_records(a, b):
    """Record arrays equal in every field (their padding bytes are not data)."""
    return a.dtype == b.dtype and len(a) == len(b) and all(
        np.array_equal(a[f], b[f]) for f in a.dtype.names)


def snapshot(sim):
    st = sim.stats()
    return st.dtype.descr, st.tobytes(), sim.now_ns, sim.jiffies, sim.counters()


# ---------------------------------------------------------------- accounting

def test_cpu_wait_sleep_add_up_to_the_time_since_spawn_for_every_task():
    sim = sim_(record="events")
    mixed_workload(sim)
    late = None
    # uneven checkpoints, most of them between ticks
    for k, seconds in enumerate([0.0123457, 0.25, 1.7e-6, 0.6, 0.0009999, 1.1, 0.3333333]):
        sim.run(seconds=seconds)
        if k == 2:
            late = sim.spawn(ps.programs.interactive(2, 3), name="late")
            sim.renice(1, 7)
        st = sim.stats()
        for row in st:
            total = row["cpu_ns"] + row["wait_ns"] + row["sleep_ns"]
            assert total == alive_time(row, sim.now_ns), row["name"]
    assert sim.task(late).start_ns > 0
    assert len(st) > 12 and sim.counters()["exits"] > 0  # forked and exited tasks were covered


@pytest.mark.parametrize("switch_cost_ns", [0, 30_000])
def test_cpu_time_of_all_tasks_is_the_elapsed_time_when_the_cpu_never_idles(switch_cost_ns):
    sim = sim_(switch_cost_ns=switch_cost_ns)
    mixed_workload(sim)
    for seconds in [0.4, 0.0000123, 1.5]:
        sim.run(seconds=seconds)
        assert sim.stats()["cpu_ns"].sum() == sim.now_ns
        assert sim.runqueue()["busy_ns"] == sim.now_ns


def test_a_task_alone_gets_all_the_elapsed_time_as_cpu():
    sim = sim_()
    pid = sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=2.0003217)
    t = sim.task(pid)
    assert t.cpu_ns == sim.now_ns == 2_000_321_700
    assert t.wait_ns == 0 and t.sleep_ns == 0
    assert t.cpu_ticks == sim.jiffies == 2000


def test_each_tick_is_charged_to_the_task_running_just_before_it():
    """cpu_ticks, checked against the event log: the tick at time t goes to
    the task switched in last strictly before t (a switch at t comes after
    the tick, which is delivered first)."""
    sim = sim_(record="events")
    mixed_workload(sim)
    sim.run(seconds=2)
    ev = sim.events()
    sw = ev[ev["kind"] == SWITCH]
    assert np.all(np.diff(sw["time_ns"]) >= 0)
    ticks = np.arange(1, sim.jiffies + 1, dtype=np.int64) * TICK_NS
    idx = np.searchsorted(sw["time_ns"], ticks, side="left") - 1
    owner = np.where(idx >= 0, sw["pid"][np.maximum(idx, 0)], 0)
    st = sim.stats()
    for row in st:
        assert row["cpu_ticks"] == np.count_nonzero(owner == row["pid"]), row["name"]
    rq = sim.runqueue()
    assert rq["ticks"] == sim.jiffies
    assert rq["busy_ticks"] == st["cpu_ticks"].sum() == np.count_nonzero(owner != 0)


def test_switch_counters_match_the_switches_in_the_event_log():
    sim = sim_(record="events")
    mixed_workload(sim)
    sim.run(seconds=2)
    ev = sim.events()
    sw = ev[ev["kind"] == SWITCH]
    assert sim.runqueue()["nr_switches"] == len(sw)
    st = sim.stats()
    for row in st:
        out = sw[sw["other"] == row["pid"]]  # switched out: other = prev
        assert row["nr_switches"] == row["nvcsw"] + row["nivcsw"] == len(out)
        assert row["nvcsw"] == np.count_nonzero(out["value"] != 0)  # prev no longer runnable
        assert sim.task(int(row["pid"])).nr_switches == len(out)


def test_wakeup_counter_matches_the_wakeups_in_the_event_log():
    sim = sim_(record="events")
    mixed_workload(sim)
    sim.run(seconds=1.5)
    ev = sim.events()
    for row in sim.stats():
        assert row["nr_wakeups"] == np.count_nonzero((ev["kind"] == WAKEUP) & (ev["pid"] == row["pid"]))


# ---------------------------------------------------------------- time

def _sleeps(ev, pid, state):
    """(start, wakeup) pairs of pid's sleeps: each switch-out in `state`
    followed by its wakeup."""
    outs = ev[(ev["kind"] == SWITCH) & (ev["other"] == pid) & (ev["value"] == state)]["time_ns"]
    ups = ev[(ev["kind"] == WAKEUP) & (ev["pid"] == pid)]["time_ns"]
    assert len(outs) - len(ups) in (0, 1)
    return outs[:len(ups)], ups


def test_a_timer_sleep_ends_at_the_first_tick_at_least_its_length_after_it_began():
    sim = sim_(record="events")
    pid = sim.spawn(Program().loop().run(us=ps.uniform(10, 2500)).sleep(ms=2).end(), name="s",
                    nice=-10)
    sim.spawn(ps.programs.cpu_hog(), nice=10)
    sim.spawn(ps.programs.interactive(0.7, 1.3))
    sim.run(seconds=3)
    start, woke = _sleeps(sim.events(), pid, INTERRUPTIBLE)
    assert len(woke) > 300
    assert np.all(woke % TICK_NS == 0)
    assert np.all(woke >= start + 2 * MS)
    assert np.all(woke < start + 2 * MS + TICK_NS)
    assert np.count_nonzero(start % TICK_NS) > len(start) // 2  # sleeps began between ticks


def test_a_task_that_runs_0_3_ms_then_sleeps_2_ms_wakes_at_3_ms():
    sim = sim_(record="events")
    pid = sim.spawn(Program().run(ms=0.3).sleep(ms=2).run(ms=1))
    sim.run(seconds=0.01)
    start, woke = _sleeps(sim.events(), pid, INTERRUPTIBLE)
    assert list(start) == [300_000] and list(woke) == [3 * MS]
    assert sim.task(pid).sleep_ns == 3 * MS - 300_000


def test_a_timer_sleep_that_begins_on_a_tick_boundary_may_end_exactly_its_length_later():
    sim = sim_(record="events")
    pid = sim.spawn(Program().loop(5).run(ms=1).sleep(ms=2).end())
    sim.run(seconds=0.1)
    start, woke = _sleeps(sim.events(), pid, INTERRUPTIBLE)
    assert np.all(start % TICK_NS == 0)
    assert list(woke - start) == [2 * MS] * 5


def test_io_completes_exactly_its_length_later_at_any_nanosecond():
    d = 1_234_567
    sim = sim_(record="events")
    pid = sim.spawn(Program().loop().run(us=ps.uniform(1, 900)).io(ns=d).end(), name="io",
                    nice=-10)
    sim.spawn(ps.programs.cpu_hog(), nice=10)
    sim.run(seconds=2)
    start, woke = _sleeps(sim.events(), pid, UNINTERRUPTIBLE)
    assert len(woke) > 100
    assert np.all(woke - start == d)
    assert np.count_nonzero(woke % TICK_NS) > len(woke) // 2


def test_step_advances_exactly_one_tick():
    sim = sim_()
    sim.spawn(ps.programs.interactive(0.3, 0.2))
    for _ in range(5):
        j = sim.jiffies
        sim.step(ticks=1)
        assert sim.jiffies == j + 1
        assert sim.now_ns == sim.jiffies * TICK_NS
    sim.run(seconds=0.0004)  # between ticks
    j = sim.jiffies
    sim.step(ticks=1)
    assert sim.jiffies == j + 1 and sim.now_ns == (j + 1) * TICK_NS


@pytest.mark.parametrize("hz", [100, 250, 1000, 8000])
def test_a_tick_lasts_1e9_over_hz_ns(hz):
    sim = ps.Simulator(PRESET, hz=hz)
    sim.spawn(ps.programs.cpu_hog())
    sim.step(ticks=7)
    assert sim.jiffies == 7 and sim.now_ns == 7 * (10**9 // hz)
    sim.run(seconds=1)
    assert sim.jiffies == 7 + hz


# ---------------------------------------------------------------- channels

@pytest.mark.parametrize("far_first", [True, False])
@pytest.mark.parametrize("near_armed_ms, near_wakes_first", [(200, True), (260, False)])
def test_timers_due_at_one_instant_wake_in_the_wheels_order_whether_queued_near_or_far(
        far_first, near_armed_ms, near_wakes_first):
    # a sleep of 300 ms is queued beyond the timer wheel's 256 ticks (on the
    # engine's heap; in 2.5's tv2), one of 300 - near_armed_ms ms within them
    # (in a bucket; in tv1); both end at jiffy 300.  The kernel cascades tv2's
    # bucket into tv1 at jiffy 256, appending the far timer: after the near
    # one when that was armed before (at 200), before it when armed after (at
    # 260) -- whichever pid either has
    sim = ps.Simulator("linux-2.5.65", record="events")
    far = Program().sleep(ms=300).exit()
    near = Program().sleep(ms=near_armed_ms).sleep(ms=300 - near_armed_ms).exit()
    first, second = (far, near) if far_first else (near, far)
    a, b = sim.spawn(first), sim.spawn(second)
    far_pid, near_pid = (a, b) if far_first else (b, a)
    sim.run(seconds=0.4)
    ev = sim.events()
    wake = (ev["kind"] == ps.EVENT_KINDS.index("wakeup")) & (ev["time_ns"] == 300_000_000)
    expected = [near_pid, far_pid] if near_wakes_first else [far_pid, near_pid]
    assert list(ev["pid"][wake]) == expected


def wakeups_at(sim, t_ns):
    ev = sim.events()
    return list(ev["pid"][(ev["kind"] == WAKEUP) & (ev["time_ns"] == t_ns)])


# a bucket of the wheel is sorted by insertion up to 4 events, by networks
# up to 16 (one of 8, or two and a merge), by qsort past 32
@pytest.mark.parametrize("n", [2, 4, 5, 7, 8, 9, 13, 16, 17, 33])
def test_timers_armed_in_a_scrambled_order_wake_in_arming_order(n):
    # task i sleeps delay_i ms, then long enough to wake at 100 ms: the
    # timers due at 100 ms are armed in the order of the delays, not of the
    # pids, and fire in that order ("Timers are FIFO!", kernel/timer.c)
    sim = ps.Simulator("linux-2.5.65", record="events")
    delays = np.random.default_rng(n).permutation(n) + 1
    pids = [sim.spawn(Program().sleep(ms=int(d)).sleep(ms=100 - int(d)).exit()) for d in delays]
    sim.run(seconds=0.2)
    armed = [pid for _, pid in sorted(zip(delays, pids))]
    assert armed != pids or n <= 2
    assert wakeups_at(sim, 100 * MS) == armed


def test_timers_then_io_then_a_source_due_at_one_instant_wake_in_that_order():
    # timers in arming order, I/O completions by pid
    sim = ps.Simulator("linux-2.5.65", record="events")
    sim.source("dev", every_ms=100)
    listener = sim.spawn(Program().wait("dev").exit())
    rng = np.random.default_rng(7)
    kinds = rng.permutation(["sleep"] * 6 + ["io"] * 5)
    delays = rng.permutation(len(kinds)) + 1
    pids = {"sleep": [], "io": []}
    armed = []
    for kind, d in zip(kinds, delays):
        second = Program().sleep(ms=int(d))
        getattr(second, kind)(ms=100 - int(d))
        pids[kind].append(sim.spawn(second.exit()))
        if kind == "sleep":
            armed.append((d, pids[kind][-1]))
    sim.run(seconds=0.2)
    timers = [pid for _, pid in sorted(armed)]
    assert timers != pids["sleep"]
    assert wakeups_at(sim, 100 * MS) == timers + pids["io"] + [listener]


def test_io_completions_within_one_tick_wake_in_time_order_and_by_pid_at_equal_times():
    # I/O ends when its time is up, not on a tick: one bucket holds
    # completions at several times
    sim = ps.Simulator("linux-2.5.65", record="events")
    ends_us = [100_700, 100_300, 100_700, 100_000, 100_300, 100_900, 100_300]
    pids = [sim.spawn(Program().sleep(ms=k + 1).io(us=end - (k + 1) * 1000).exit())
            for k, end in enumerate(ends_us)]
    sim.run(seconds=0.2)
    ev = sim.events()
    woken = (ev["kind"] == WAKEUP) & (ev["time_ns"] >= 100 * MS)
    got = list(zip(ev["time_ns"][woken], ev["pid"][woken]))
    assert got == sorted((end * 1000, pid) for end, pid in zip(ends_us, pids))


def test_posts_before_a_wait_are_counted_so_the_wait_does_not_block():
    sim = sim_()
    pid = sim.spawn(Program().post("c").post("c").wait("c").wait("c").run(ms=1))
    sim.run(seconds=0.01)
    t = sim.task(pid)
    assert t.state == "dead" and t.exit_ns == MS
    assert t.nr_wakeups == 0 and t.sleep_ns == 0


def test_a_wait_with_no_post_left_blocks():
    sim = sim_()
    pid = sim.spawn(Program().post("c").post("c").wait("c").wait("c").wait("c").run(ms=1))
    sim.run(seconds=0.01)
    t = sim.task(pid)
    assert t.state == "interruptible" and t.cpu_ns == 0 and t.sleep_ns == sim.now_ns


def test_posts_by_another_task_wait_for_a_later_waiter():
    sim = sim_()
    sim.spawn(Program().post("c").post("c"), name="poster")
    w = sim.spawn(Program().sleep(ms=5).wait("c").wait("c").run(ms=1), name="waiter")
    sim.run(seconds=0.05)
    t = sim.task(w)
    assert t.nr_wakeups == 1  # the timer only
    assert t.exit_ns == 6 * MS


def test_waiters_are_woken_in_the_order_they_blocked():
    sim = sim_(record="events")
    # pids 1, 2, 3 block at 3, 1 and 2 ms: FIFO order is 2, 3, 1
    for delay in (3, 1, 2):
        sim.spawn(Program().sleep(ms=delay).wait("c").run(us=100))
    sim.source("c", every_ms=10, count=3)
    sim.run(seconds=0.1)
    ev = sim.events()
    woke = ev[(ev["kind"] == WAKEUP) & (ev["time_ns"] >= 10 * MS)]
    assert list(woke["pid"]) == [2, 3, 1]
    assert list(woke["time_ns"]) == [10 * MS, 20 * MS, 30 * MS]


def test_posts_from_a_task_wake_waiters_in_fifo_order():
    sim = sim_(record="events")
    for delay in (4, 2, 3, 1):
        sim.spawn(Program().sleep(ms=delay).wait("c").run(us=100))
    poster = sim.spawn(Program().sleep(ms=10).loop(4).post("c").run(ms=1).end())
    sim.run(seconds=0.1)
    ev = sim.events()
    woke = ev[(ev["kind"] == WAKEUP) & (ev["other"] == poster)]
    assert list(woke["pid"]) == [4, 2, 3, 1]


@pytest.mark.parametrize("start_s,span_s", [(0, 0.995), (0, 1.0), (0, 1.0049), (0.0037, 2.3456)])
def test_a_periodic_source_fires_floor_of_span_over_period_times(start_s, span_s):
    sim = sim_()
    consumer = sim.spawn(Program().loop().wait("tick").run(us=10).end())
    sim.spawn(ps.programs.interactive(1, 4))
    if start_s:
        sim.run(seconds=start_s)
    sim.source("tick", every_ms=10)
    sim.run(seconds=span_s)
    assert sim.task(consumer).nr_wakeups == math.floor(round(span_s * 1e9) / (10 * MS))


def test_a_source_with_count_fires_only_count_times():
    sim = sim_()
    a = sim.spawn(Program().loop().wait("a").run(us=10).end())
    b = sim.spawn(Program().loop().wait("b").run(us=10).end())
    sim.source("a", every_ms=1, count=7)
    sim.source("b", every_us=500, count=0)
    sim.run(seconds=1)
    assert sim.task(a).nr_wakeups == 7
    assert sim.task(b).nr_wakeups == 0


def test_a_poisson_source_has_exponential_gaps_with_the_given_mean():
    mean_ms, span_s = 2.0, 20
    sim = sim_(record="events", seed=11)
    consumer = sim.spawn(Program().loop().wait("dev").end())
    sim.source("dev", poisson_ms=mean_ms)
    sim.run(seconds=span_s)
    ev = sim.events()
    t = ev[(ev["kind"] == WAKEUP) & (ev["pid"] == consumer)]["time_ns"]
    n_expected = span_s * 1000 / mean_ms
    # the count is Poisson(n_expected): within 5 sigma
    assert abs(len(t) - n_expected) < 5 * math.sqrt(n_expected)
    gaps = np.diff(np.concatenate([[0], t])) / MS
    n = len(gaps)
    # the mean of n exponential gaps has sd mean/sqrt(n)
    assert abs(gaps.mean() - mean_ms) < 5 * mean_ms / math.sqrt(n)
    # memoryless shape: P(gap > mean) = 1/e, binomial sd
    p = math.exp(-1)
    assert abs(np.mean(gaps > mean_ms) - p) < 5 * math.sqrt(p * (1 - p) / n)
    assert sim.task(consumer).nr_wakeups == len(t)


def test_simulator_post_wakes_a_waiter_or_is_kept_for_the_next_wait():
    sim = ps.Simulator(PRESET)
    waiter = sim.spawn(ps.Program().wait("c").run(ms=1).wait("c").run(ms=1).wait("c").run(ms=1))
    sim.run(seconds=0.01)
    assert sim.task(waiter).state == "interruptible"
    sim.post("c")                  # wakes it, as a device would (no waker)
    sim.run(seconds=0.01)
    assert sim.task(waiter).cpu_ns == MS and sim.task(waiter).state == "interruptible"
    sim.post("c", n=2)             # one wakes it, the other waits for its next wait
    sim.run(seconds=0.01)
    assert sim.task(waiter).cpu_ns == 3 * MS and sim.task(waiter).state == "dead"
    sim.check()


def test_simulator_post_checks_its_arguments():
    sim = ps.Simulator(PRESET)
    with pytest.raises(ValueError, match=r"^n=0 is outside the allowed range 1\.\.2147483647$"):
        sim.post("c", n=0)
    with pytest.raises(TypeError, match="a channel is named by a non-empty str"):
        sim.post("")
    assert sim._channels == {}


# ---------------------------------------------------------------- loops and exit

def test_a_loop_runs_its_body_exactly_n_times_then_the_task_exits():
    sim = sim_(record="events")
    pid = sim.spawn(Program().loop(5).run(ms=1).end())
    sim.run(seconds=0.1)
    t = sim.task(pid)
    assert t.cpu_ns == 5 * MS
    assert t.state == "dead" and t.exit_ns == 5 * MS
    ev = sim.events()
    ex = ev[ev["kind"] == EXIT]
    assert list(ex["pid"]) == [pid] and list(ex["time_ns"]) == [t.exit_ns]
    assert sim.counters()["exits"] == 1 and sim.counters()["live_tasks"] == 0


@pytest.mark.parametrize("build,expected_ms", [
    (lambda: Program().loop(3).loop(4).run(ms=1).end().end(), 12),
    (lambda: Program().loop(3).run(ms=1).loop(4).run(ms=2).end().end(), 3 * (1 + 4 * 2)),
    (lambda: Program().loop(2).loop(3).run(ms=1).end().run(ms=5).end().run(ms=7), 2 * (3 + 5) + 7),
])
def test_nested_loops_multiply(build, expected_ms):
    sim = sim_()
    pid = sim.spawn(build())
    sim.run(seconds=1)
    t = sim.task(pid)
    assert t.cpu_ns == expected_ms * MS and t.state == "dead"


def test_loops_nest_eight_deep():
    p = Program()
    for _ in range(8):
        p.loop(2)
    p.run(us=1)
    for _ in range(8):
        p.end()
    sim = sim_()
    pid = sim.spawn(p)
    sim.run(seconds=0.01)
    assert sim.task(pid).cpu_ns == 2**8 * 1000


def test_a_program_exits_when_it_runs_off_its_end():
    sim = sim_()
    pid = sim.spawn(Program().run(ms=3).sleep(ms=2).run(ms=1))
    hog = sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=1)
    t = sim.task(pid)
    assert t.state == "dead" and t.exit_ns >= 6 * MS
    assert t.cpu_ns == 4 * MS
    assert t.cpu_ns + t.wait_ns + t.sleep_ns == t.exit_ns
    assert sim.task(hog).state == "running"
    assert sim.counters()["live_tasks"] == 1


def test_exit_op_ends_the_program_early():
    sim = sim_()
    pid = sim.spawn(Program().run(ms=2).exit().run(ms=50))
    sim.run(seconds=0.1)
    t = sim.task(pid)
    assert t.state == "dead" and t.cpu_ns == 2 * MS and t.exit_ns == 2 * MS


def test_forked_children_have_a_parent_and_their_own_accounting():
    sim = sim_()
    child = Program().run(ms=1)
    parent = sim.spawn(Program().fork(child, 3).sleep(ms=50))
    sim.run(seconds=0.2)
    st = sim.stats()
    kids = st[st["pid"] != parent]
    assert len(kids) == 3 and sim.counters()["forks"] == 3
    for row in kids:
        assert sim.task(int(row["pid"])).parent == parent
        assert row["cpu_ns"] == MS and row["exit_ns"] >= 0


# ---------------------------------------------------------------- determinism and copies

def _run_random(seed, seconds=3):
    sim = ps.Simulator(PRESET, seed=seed, record="events")
    random_workload(sim)
    sim.run(seconds=seconds)
    return sim


def test_the_same_seed_gives_identical_events_and_stats():
    a, b = _run_random(5), _run_random(5)
    assert len(a.events()) > 1000
    assert same_records(a.events(), b.events())
    assert snapshot(a) == snapshot(b)
    assert same_records(a.latencies(), b.latencies())


def test_the_record_dtypes_describe_every_byte_so_events_are_byte_comparable():
    for dt in (ps.EVENT_DTYPE, ps.LATENCY_DTYPE):
        assert sum(dt.fields[f][0].itemsize for f in dt.names) == dt.itemsize


def test_different_seeds_give_different_runs():
    a, b = _run_random(5), _run_random(6)
    assert not same_records(a.events(), b.events())
    assert a.stats().tobytes() != b.stats().tobytes()


def test_a_copy_continues_exactly_as_the_original():
    sim = _run_random(8, seconds=1.2345)
    twin = sim.copy()
    sim.run(seconds=2)
    twin.run(seconds=2)
    assert same_records(sim.events(), twin.events())
    assert snapshot(sim) == snapshot(twin)
    # and both equal a run that was never copied
    ref = ps.Simulator(PRESET, seed=8, record="events")
    random_workload(ref)
    ref.run(seconds=1.2345)
    ref.run(seconds=2)
    assert same_records(ref.events(), sim.events())


def test_a_copy_is_independent_of_the_original():
    sim = _run_random(9, seconds=1)
    before = snapshot(sim)
    twin = sim.copy()
    twin.renice(1, 19)
    twin.set_param("max_sleep_avg", 77)
    twin.spawn(ps.programs.cpu_hog())
    twin.source("new", every_ms=3)
    twin.run(seconds=1)
    assert snapshot(sim) == before
    assert sim.params["max_sleep_avg"] != 77
    sim.run(seconds=1)
    ref = _run_random(9, seconds=2)
    assert snapshot(sim) == snapshot(ref)
    assert same_records(sim.events(), ref.events())
    assert len(twin.stats()) == len(sim.stats()) + 1
    # and the copy did change: it runs differently
    assert not np.array_equal(twin.stats()["cpu_ns"][:len(sim.stats())], sim.stats()["cpu_ns"])


def test_running_the_original_does_not_change_a_copy():
    sim = _run_random(10, seconds=0.5)
    twin = sim.copy()
    frozen = snapshot(twin)
    sim.run(seconds=1)
    sim.clear_records()
    assert snapshot(twin) == frozen
    assert len(twin.events()) > 0


def test_two_simulators_stepped_alternately_do_not_interfere():
    def build_a():
        s = ps.Simulator(PRESET, seed=1, record="events")
        mixed_workload(s)
        return s

    def build_b():
        s = ps.Simulator("linux-2.5.64", seed=2, record="events")
        random_workload(s)
        return s

    a, b = build_a(), build_b()
    for _ in range(1500):
        a.step(ticks=1)
        b.step(ticks=2)
    alone_a, alone_b = build_a(), build_b()
    alone_a.run(ticks=1500)
    alone_b.run(ticks=3000)
    assert snapshot(a) == snapshot(alone_a) and snapshot(b) == snapshot(alone_b)
    assert same_records(a.events(), alone_a.events())
    assert same_records(b.events(), alone_b.events())


def test_running_in_pieces_equals_running_at_once():
    whole = _run_random(12, seconds=2)
    pieces = ps.Simulator(PRESET, seed=12, record="events")
    random_workload(pieces)
    for seconds in [0.3, 0.0000005, 0.7, 0.1234567]:
        pieces.run(seconds=seconds)
    pieces.step(ticks=3)
    pieces.run(seconds=(2 * 10**9 - pieces.now_ns) / 1e9)
    assert pieces.now_ns == whole.now_ns
    assert snapshot(pieces) == snapshot(whole)
    assert same_records(pieces.events(), whole.events())


# ---------------------------------------------------------------- recording

def test_counters_only_has_no_event_log():
    sim = sim_(record="counters")
    mixed_workload(sim)
    sim.run(seconds=0.2)
    with pytest.raises(RuntimeError, match="record='events'"):
        sim.events()
    with pytest.raises(RuntimeError, match="record='series'"):
        sim.series("prio")


def test_latencies_of_a_task_number_its_lat_count_and_sum_to_lat_sum():
    sim = sim_()
    mixed_workload(sim)
    sim.run(seconds=2)
    total = 0
    for row in sim.stats():
        lat = sim.latencies(int(row["pid"]))
        assert len(lat) == row["lat_count"]
        assert lat.sum() == row["lat_sum_ns"]
        assert (lat.max() if len(lat) else 0) == row["lat_max_ns"]
        assert np.all(lat >= 0)
        total += len(lat)
    assert total == len(sim.latencies()) > 100


def test_latencies_off_keeps_the_counters_but_no_records():
    sim = sim_(latencies=False)
    mixed_workload(sim)
    sim.run(seconds=1)
    assert len(sim.latencies()) == 0
    assert sim.stats()["lat_count"].sum() > 0


def test_overwrite_keeps_the_newest_records_and_counts_the_dropped():
    full = sim_(record="events", latencies=False)
    mixed_workload(full)
    full.run(seconds=1)
    keep = 100
    small = sim_(record="events", latencies=False, on_full="overwrite",
                 max_trace_bytes=keep * ps.EVENT_DTYPE.itemsize)
    mixed_workload(small)
    small.run(seconds=1)
    all_ev = full.events()
    assert len(all_ev) > 10 * keep
    assert same_records(small.events(), all_ev[-keep:])
    c = small.counters()
    assert c["events_dropped"] == c["trace_dropped"] == len(all_ev) - keep
    assert snapshot(small)[1] == snapshot(full)[1]  # recording does not change the run


def test_overwrite_of_latencies_keeps_the_newest():
    full = sim_()
    mixed_workload(full)
    full.run(seconds=1)
    keep = 50
    small = sim_(on_full="overwrite", max_trace_bytes=keep * ps.LATENCY_DTYPE.itemsize)
    mixed_workload(small)
    small.run(seconds=1)
    assert same_records(small.latencies(), full.latencies()[-keep:])
    assert small.counters()["trace_dropped"] == len(full.latencies()) - keep


def test_with_counters_only_a_full_latency_buffer_keeps_the_newest_and_the_run_goes_on():
    # counters mode runs for ever in bounded memory, whatever on_full says;
    # the per-task latency counters stay exact
    full = sim_()
    mixed_workload(full)
    full.run(seconds=1)
    keep = 50
    small = sim_(on_full="raise", max_trace_bytes=keep * ps.LATENCY_DTYPE.itemsize)
    mixed_workload(small)
    small.run(seconds=1)
    assert small.now_ns == 10**9
    assert same_records(small.latencies(), full.latencies()[-keep:])
    st = small.stats()
    assert st["lat_count"].sum() == len(full.latencies()) > keep
    assert (st["lat_max_ns"] == full.stats()["lat_max_ns"]).all()


def test_trace_dropped_counts_the_records_dropped_by_every_buffer():
    full = sim_(record="events")
    mixed_workload(full)
    full.run(seconds=1)
    cap = 2400
    small = sim_(record="events", on_full="overwrite", max_trace_bytes=cap)
    mixed_workload(small)
    small.run(seconds=1)
    dropped_ev = len(full.events()) - len(small.events())
    dropped_lat = len(full.latencies()) - len(small.latencies())
    assert dropped_ev > 0 and dropped_lat > 0
    assert small.counters()["trace_dropped"] == dropped_ev + dropped_lat


def test_overwrite_with_a_cap_below_one_record_drops_instead_of_failing():
    sim = sim_(record="events", on_full="overwrite", max_trace_bytes=ps.EVENT_DTYPE.itemsize - 1)
    sim.spawn(ps.programs.interactive(1, 2))
    sim.run(seconds=0.1)
    assert len(sim.events()) == 0
    assert sim.counters()["events_dropped"] > 0


def test_a_full_buffer_with_on_full_raise_stops_the_run_and_clear_records_lets_it_continue():
    cap = 200
    sim = sim_(record="events", latencies=False, max_trace_bytes=cap * ps.EVENT_DTYPE.itemsize)
    mixed_workload(sim)
    with pytest.raises(RuntimeError, match=r"max_trace_bytes=6400"):
        sim.run(seconds=1)
    stopped_at = sim.now_ns
    assert 0 < stopped_at < 10**9
    assert len(sim.events()) == cap
    sim.check()
    with pytest.raises(RuntimeError, match="max_trace_bytes"):  # still full: the next
        sim.run(seconds=1)                                         # instant that logs fails
    assert stopped_at <= sim.now_ns < stopped_at + 10**9
    assert len(sim.events()) == cap
    stopped_at = sim.now_ns
    sim.clear_records()
    assert len(sim.events()) == 0
    sim.run(seconds=0.001)
    assert sim.now_ns == stopped_at + MS
    assert len(sim.events()) > 0
    sim.check()
    for row in sim.stats():
        assert row["cpu_ns"] + row["wait_ns"] + row["sleep_ns"] == alive_time(row, sim.now_ns)


def test_a_run_resumed_after_a_full_buffer_matches_an_uninterrupted_run():
    def build(**kw):
        sim = ps.Simulator(PRESET, seed=1, record="series", series_fields=["prio"],
                           latencies=False, **kw)
        sim.spawn(ps.programs.cpu_hog())
        sim.spawn(Program().loop().run(ms=1).sleep(ms=2).end())
        sim.spawn(Program().loop().run(ms=2).sleep(ms=3).end())
        return sim

    ref = build()
    ref.run(seconds=2)
    sim = build(max_trace_bytes=24)  # one sample record: every sampled tick fails
    end = 2 * 10**9
    while sim.now_ns < end:
        try:
            sim.run(seconds=(end - sim.now_ns) / 1e9)
        except RuntimeError:
            sim.clear_records()
    assert sim.stats().tobytes() == ref.stats().tobytes()


def test_recording_does_not_change_the_run():
    runs = []
    for kw in (dict(record="counters", latencies=False), dict(record="events"),
               dict(record="series", series_every=3)):
        sim = ps.Simulator(PRESET, seed=4, **kw)
        mixed_workload(sim)
        sim.run(seconds=1.5)
        runs.append(sim.stats().tobytes())
    assert runs[0] == runs[1] == runs[2]


# ---------------------------------------------------------------- series

def test_series_samples_every_n_ticks_one_column_per_task_nan_before_spawn():
    sim = sim_(record="series", series_fields=["prio", "sleep_avg"], series_every=10)
    sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=0.055)
    late = sim.spawn(ps.programs.interactive(1, 5))
    sim.run(seconds=0.2)
    times = sim.series_times()
    assert np.all(np.diff(times) == 10 * TICK_NS)
    assert np.all(times % (10 * TICK_NS) == 0)
    assert times[0] == 10 * TICK_NS and times[-1] == sim.now_ns - sim.now_ns % (10 * TICK_NS)
    for field in ("prio", "sleep_avg"):
        s = sim.series(field)
        assert s.shape == (len(times), 2)
        before = times < 55 * MS
        assert np.all(np.isnan(s[before, late - 1]))
        assert not np.any(np.isnan(s[~before, late - 1]))
        assert not np.any(np.isnan(s[:, 0]))
    with pytest.raises(KeyError, match="time_slice"):
        sim.series("time_slice")


def test_series_values_are_the_task_fields_at_the_sample():
    sim = sim_(record="series", series_fields=["prio", "time_slice", "cpu_ns"], series_every=5)
    for nice in (0, 5, -5):
        sim.spawn(ps.programs.cpu_hog(), nice=nice)
    seen = {f: [] for f in ("prio", "time_slice", "cpu_ns")}
    for _ in range(60):
        sim.step(ticks=5)
        for f in seen:
            seen[f].append([getattr(sim.task(p), f) for p in (1, 2, 3)])
    for f, rows in seen.items():
        assert np.array_equal(sim.series(f), np.array(rows, dtype=float)), f


def test_series_stop_for_an_exited_task():
    sim = sim_(record="series", series_fields=["prio"], series_every=1)
    sim.spawn(ps.programs.cpu_hog())
    pid = sim.spawn(Program().run(ms=2).sleep(ms=20), nice=-5)  # exits at 22 ms
    sim.run(seconds=0.1)
    col = sim.series("prio")[:, pid - 1]
    exit_ns = sim.task(pid).exit_ns
    assert 22 * MS <= exit_ns < 50 * MS
    times = sim.series_times()
    assert not np.any(np.isnan(col[times < exit_ns]))
    assert np.all(np.isnan(col[times > exit_ns]))


# ---------------------------------------------------------------- invariant checker

def test_debug_checks_pass_on_a_mixed_workload_with_forks_and_exits():
    sim = sim_(debug=True, record="events")
    mixed_workload(sim)
    sim.spawn(Program().loop(200).fork(Program().run(us=ps.uniform(10, 900)).yield_().run(us=50))
              .sleep(ms=3).end(), name="forker")
    sim.spawn(Program().loop().run(ms=5).yield_().nice(3).run(ms=1).nice(-2).end(), name="yielder")
    sim.spawn(Program().sleep(ms=100).setscheduler("rr", 10).loop(30).run(ms=3).sleep(ms=7).end()
              .setscheduler("normal"), name="rt")
    for _ in range(5):
        sim.run(seconds=1)
        sim.check()
    c = sim.counters()
    assert c["forks"] > 200 and c["exits"] > 200
    assert sim.now_ns == 5 * 10**9


def test_many_checked_simulators_and_copies_run_and_tear_down_cleanly(tmp_path):
    """Several debug=True simulators and their copies, run and then freed at
    interpreter exit, in a fresh process: no crash, no error."""
    code = textwrap.dedent("""
        import pysched as ps
        sims = []
        for seed in range(5):
            s = ps.Simulator("linux-2.5.64", seed=seed, debug=True, record="events")
            s.spawn(ps.programs.cpu_hog())
            s.spawn(ps.programs.interactive(1, 3))
            s.run(seconds=0.3)
            sims.append(s.copy())
        for s in sims:
            s.run(seconds=0.1); s.check()
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


# ---------------------------------------------------------------- livelocks

def _run_with_timeout(tmp_path, program_src, timeout=20):
    code = textwrap.dedent(f"""
        import pysched as ps
        from pysched import Program
        sim = ps.Simulator("linux-2.5.65", latencies=False)
        sim.spawn({program_src})
        try:
            sim.run(seconds=0.01)
            print("finished")
        except RuntimeError as e:
            print("RuntimeError:", e)
    """)
    try:
        r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"sim.run hung on {program_src}")
    return r.stdout


def test_a_loop_that_yields_without_consuming_time_is_reported_as_a_livelock():
    # post/wait on one channel never blocks, so the body takes no time;
    # Program() cannot see that, the engine's livelock guard must
    sim = sim_(latencies=False)
    sim.spawn(Program().loop().yield_().post("x").wait("x").end())
    with pytest.raises(RuntimeError, match="livelock at t=0 ns"):
        sim.run(seconds=0.01)
    sim.check()
    with pytest.raises(RuntimeError, match="livelock"):  # it stays stuck, without crashing
        sim.run(seconds=0.01)


def test_many_tasks_taking_their_first_ops_at_one_instant_are_no_livelock():
    """200,000 tasks that each post five times and go to sleep at t=0 take
    more than a million actions without time passing: the guard allows 16
    more a task slot, so only a loop among them would be a livelock."""
    n = 200_000
    sim = sim_(latencies=False, max_tasks=n)
    prog = Program().post("x").post("x").post("x").post("x").post("x").sleep(s=1)
    for _ in range(n):
        sim.spawn(prog, cpu=0)
    sim.run(seconds=0.001)
    assert (sim.stats()["state"] == 1).all()  # all asleep
    assert sim._core.counters()["live_tasks"] == n


@pytest.mark.parametrize("program_src", [
    "Program().loop().run(ms=0).end()",
    'Program().loop().post("x").wait("x").end()',
])
def test_a_zero_time_loop_in_the_interpreter_raises_livelock(tmp_path, program_src):
    out = _run_with_timeout(tmp_path, program_src, timeout=60)
    assert out.startswith("RuntimeError:") and "livelock" in out


def test_a_zero_length_io_loop_raises_livelock(tmp_path):
    out = _run_with_timeout(tmp_path, "Program().loop().io(ns=0).end()", timeout=60)
    assert out.startswith("RuntimeError:") and "livelock" in out
