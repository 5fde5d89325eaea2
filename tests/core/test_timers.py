"""How sleeps end and in what order timers due at one time fire (issue 29):
hrtimer sleeps in the presets of 2.6.16 on, jiffy timers in 2.4 and 2.5
fired in the order the timer wheel gives them (arming order, as cascades
reorder it), not by pid."""
import numpy as np
import pytest

import pysched as ps
from pysched import Program

from timer_wheel import firing_order

MS = 1_000_000
WAKEUP = ps.EVENT_KINDS.index("wakeup")


def wakeups(sim, pid=None, t_ns=None):
    ev = sim.events()
    keep = ev["kind"] == WAKEUP
    if pid is not None:
        keep &= ev["pid"] == pid
    if t_ns is not None:
        keep &= ev["time_ns"] == t_ns
    return ev[keep]


def run_2_sleep_8(preset, **kw):
    sim = ps.Simulator(preset, hz=250, record="events", **kw)
    pid = sim.spawn(Program().loop().run(ms=2).sleep(ms=8).end())
    sim.run(seconds=10)
    return sim, pid


def test_a_sleep_under_eevdf_ends_at_its_nanosecond_plus_the_timer_slack_not_on_a_tick():
    sim, pid = run_2_sleep_8("linux-6.12-eevdf")
    share = sim.task(pid).cpu_ns / sim.now_ns
    assert share == pytest.approx(0.199, abs=0.002)
    # alone on its CPU, it runs as soon as it wakes: a period is 2 ms of
    # work and one sleep
    woke = wakeups(sim, pid)["time_ns"]
    sleeps = np.diff(woke) - 2 * MS
    assert len(sleeps) > 900
    assert sleeps.min() >= 8 * MS and sleeps.max() <= 8.06 * MS
    assert set(sleeps) == {8 * MS + 50_000}  # the default slack, 50 us
    assert np.any(woke % (4 * MS))  # off the 4 ms ticks


def test_a_sleep_under_2_5_still_ends_on_a_jiffy():
    sim, pid = run_2_sleep_8("linux-2.5.65")
    woke = wakeups(sim, pid)["time_ns"]
    assert len(woke) > 700 and not np.any(woke % (4 * MS))
    assert set(np.diff(woke)) == {12 * MS}
    assert sim.task(pid).cpu_ns / sim.now_ns == pytest.approx(2 / 12, abs=0.002)


@pytest.mark.parametrize("preset", ["linux-2.4.20", "linux-2.5.65", "houston-2003"])
def test_the_old_presets_have_no_hrtimer_parameters(preset):
    params = ps.Simulator(preset).params
    assert "hrtimer_sleep" not in params and "timer_slack_ns" not in params


@pytest.mark.parametrize("preset", ["linux-6.5-cfs", "linux-6.6-eevdf", "linux-6.12-eevdf"])
def test_the_modern_presets_sleep_on_hrtimers_with_50_us_of_slack(preset):
    params = ps.Simulator(preset).params
    assert params["hrtimer_sleep"] == 1 and params["timer_slack_ns"] == 50_000


def test_hrtimer_sleep_0_gives_the_modern_presets_jiffy_timers_again():
    sim, pid = run_2_sleep_8("linux-6.12-eevdf", params={"hrtimer_sleep": 0})
    assert not np.any(wakeups(sim, pid)["time_ns"] % (4 * MS))


def test_the_slack_is_a_parameter_and_a_realtime_task_has_none():
    sim, pid = run_2_sleep_8("linux-6.12-eevdf", params={"timer_slack_ns": 1_000_000})
    assert set(np.diff(wakeups(sim, pid)["time_ns"])) == {11 * MS}
    # hrtimer_nanosleep: "if (rt_task(current)) slack = 0"
    sim = ps.Simulator("linux-6.12-eevdf", hz=250, record="events")
    pid = sim.spawn(Program().loop().run(ms=2).sleep(ms=8).end(), policy="fifo", rt_priority=10)
    sim.run(seconds=1)
    assert set(np.diff(wakeups(sim, pid)["time_ns"])) == {10 * MS}


def test_a_slack_outside_its_range_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"timer_slack_ns=-1 is outside the allowed range 0\.\.1000000000"):
        ps.Simulator("linux-6.12-eevdf", params={"timer_slack_ns": -1})


def arming_order_unlike_pids(preset, program):
    # pid 1 arms its timer at 3 ms, pid 2 at 1 ms, pid 3 at 2 ms, each on its
    # own CPU; all three are due at once
    sim = ps.Simulator(preset, cpus=3, hz=1000, record="events")
    for run_ms, cpu in [(3, 0), (1, 1), (2, 2)]:
        sim.spawn(program(run_ms), cpu=cpu, cpus_allowed=[cpu])
    sim.run(seconds=0.05)
    return sim


@pytest.mark.parametrize("preset", ["linux-2.4.20", "linux-2.5.65"])
def test_three_timers_armed_at_one_jiffy_fire_in_arming_order_not_pid_order(preset):
    sim = arming_order_unlike_pids(preset, lambda run_ms: Program().run(ms=run_ms).sleep(ms=10 - run_ms).exit())
    assert list(wakeups(sim, t_ns=10 * MS)["pid"]) == [2, 3, 1]


def test_hrtimers_due_at_one_nanosecond_fire_in_arming_order():
    # timerqueue_add puts a timer after those of the same expiry
    sim = arming_order_unlike_pids(
        "linux-6.12-eevdf", lambda run_ms: Program().run(ms=run_ms).sleep(ms=10 - run_ms).exit())
    assert list(wakeups(sim, t_ns=10 * MS + 50_000)["pid"]) == [2, 3, 1]


@pytest.mark.parametrize("due", [16384 + 300, 16384 + 100, 256 + 40, 3 * 256])
@pytest.mark.parametrize("seed", [1, 2])
def test_timers_due_at_one_jiffy_fire_as_the_2_4_wheel_cascades_them(due, seed):
    # each task sleeps until its own jiffy armed_k, then arms a timer due at
    # `due`: those armed 256 or more jiffies ahead sit in tv2..tv3 and are
    # cascaded into tv1 later, behind timers armed after them.  The literal
    # wheel (tests/helpers/timer_wheel.py) says in what order they fire.
    rng = np.random.default_rng(seed)
    armed = sorted(rng.choice(np.arange(1, due), size=min(40, due - 1), replace=False))
    # the arming jiffies in a shuffled pid order
    order = rng.permutation(len(armed))
    sim = ps.Simulator("linux-2.4.20", hz=1000, record="events")
    pids = {}
    for k in order:
        n = int(armed[k])
        pids[sim.spawn(Program().sleep(ms=n).sleep(ms=due - n).exit())] = n
    sim.run(seconds=due / 1000 + 0.01)
    got = list(wakeups(sim, t_ns=due * MS)["pid"])
    by_n = {n: pid for pid, n in pids.items()}
    want = firing_order([(n, due, by_n[n]) for n in sorted(by_n)], due)
    assert want != sorted(by_n[n] for n in by_n)
    assert got == want
