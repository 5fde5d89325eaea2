"""Behaviour of the simulated 2.5.64 scheduler, as claims about it."""
import numpy as np
import pytest

import pysched as ps

KIND = {k: i for i, k in enumerate(ps.EVENT_KINDS)}
TICK = 1_000_000  # ns at HZ=1000


def test_two_nice0_hogs_share_the_cpu_half_and_half_over_20s():
    sim = ps.Simulator("linux-2.5.64")
    a = sim.spawn(ps.programs.cpu_hog())
    b = sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=20)
    for pid in (a, b):
        assert sim.task(pid).cpu_ns / 20e9 == pytest.approx(0.5, abs=0.01)


@pytest.mark.parametrize("rounds", [1, 7, 40])
def test_nice_minus20_and_plus19_hogs_get_300_and_10_ticks_per_round(rounds):
    sim = ps.Simulator("linux-2.5.64", record="events")
    hi = sim.spawn(ps.programs.cpu_hog(), nice=-20)
    lo = sim.spawn(ps.programs.cpu_hog(), nice=19)
    sim.run(ticks=310 * rounds)
    assert sim.task(hi).cpu_ticks == 300 * rounds
    assert sim.task(lo).cpu_ticks == 10 * rounds
    # each round ends when both have expired: the arrays swap
    ev = sim.events()
    assert np.sum(ev["kind"] == KIND["array_switch"]) == rounds


def test_a_mostly_sleeping_task_reaches_prio_115_and_is_reinserted_while_a_hog_expires():
    sim = ps.Simulator("linux-2.5.64")
    sleeper = sim.spawn(ps.programs.interactive(1, 10), name="sleeper")
    hog = sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.run(seconds=10)
    s0, h0 = sim.task(sleeper), sim.task(hog)
    assert s0.prio == 115 and s0.sleep_avg > 1900
    sim.run(seconds=10)
    s, h = sim.task(sleeper), sim.task(hog)
    assert s.prio == 115 and h.prio == 125 and h.sleep_avg == 0
    # with its bonus full, the sleeper uses up whole timeslices and is put back
    # into the active array each time, while the hog goes to the expired array
    assert s.nr_reinserted > s0.nr_reinserted and s.nr_expired == s0.nr_expired
    assert h.nr_expired > h0.nr_expired and h.nr_reinserted == 0


def test_an_interactive_task_that_never_sleeps_two_tick_boundaries_loses_its_bonus_in_2_5_65():
    # first it earns the full bonus by sleeping, then it sleeps only until the next tick
    prog = (ps.Program().sleep(s=11)
            .loop().run(ms=5).sleep(us=500).end())
    sim = ps.Simulator("linux-2.5.65")
    t = sim.spawn(prog, name="t")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.run(seconds=11.01)
    assert sim.task(t).prio == 115 and sim.task(t).sleep_avg > 9980
    sim.run(seconds=40)
    # the credit of now - last_run - 1 is 0 for every such sleep, so sleep_avg
    # only decays, and the task ends where a hog is
    assert sim.task(t).sleep_avg == 0
    assert sim.task(t).prio == 125


def test_in_2_5_64_a_sleep_over_one_tick_boundary_earns_one_tick():
    # run 1 tick, sleep across one boundary: +1 -1 per cycle keeps sleep_avg level
    prog = ps.Program().sleep(s=3).loop().run(us=900).sleep(us=50).end()
    sim = ps.Simulator("linux-2.5.64")
    t = sim.spawn(prog)
    sim.run(seconds=3.0)
    start = sim.task(t).sleep_avg
    sim.run(seconds=2)
    assert start == 2000
    assert abs(sim.task(t).sleep_avg - start) <= 1


def test_the_starvation_limit_sends_an_interactive_task_to_the_expired_array():
    # Two hogs B and C alternate; A sleeps long enough for the full bonus, wakes
    # while B waits in the expired array, then computes forever at prio 115.
    limit = 100
    sim = ps.Simulator("linux-2.5.65", record="events",
                       params={"max_sleep_avg": 2000, "starvation_limit": limit})
    b = sim.spawn(ps.programs.cpu_hog(), name="B")
    c = sim.spawn(ps.programs.cpu_hog(), name="C")
    a = sim.spawn(ps.Program().sleep(ms=2600).loop().run(s=1).end(), name="A")
    sim.run(seconds=4)
    ev = sim.events()
    expire = ev[ev["kind"] == KIND["expire"]]
    a_exp = expire[expire["pid"] == a]
    first_a = a_exp["time_ns"][0]
    hog_to_expired = expire[(expire["pid"] != a) & (expire["value"] == 1) &
                            (expire["time_ns"] < first_a)]
    ts = hog_to_expired["time_ns"][-1] // TICK  # expired_timestamp
    nr_running = 3
    went = a_exp[a_exp["value"] == 1]
    assert len(went) >= 1
    starving_at = went["time_ns"][0] // TICK
    # every earlier expiry of A was an interactive reinsertion ...
    before = a_exp[a_exp["time_ns"] < went["time_ns"][0]]
    assert len(before) >= 1 and np.all(before["value"] == 0)
    assert np.all(before["time_ns"] // TICK - ts < limit * nr_running + 1)
    # ... and the first one past STARVATION_LIMIT * nr_running + 1 went to expired
    assert starving_at - ts >= limit * nr_running + 1
    assert went["prio"][0] <= 117  # A was still interactive then
    starving = ev[ev["kind"] == KIND["starving"]]
    assert starving["time_ns"][0] == went["time_ns"][0] and starving["pid"][0] == a
    assert sim.counters()["starving_expiries"] >= 1
    assert b != c


def test_a_woken_task_preempts_only_a_worse_priority():
    sim = ps.Simulator("linux-2.5.64", record="events")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    waker = sim.spawn(ps.Program().sleep(s=5).loop().run(ms=1).sleep(ms=30).end())
    sim.run(seconds=10)
    ev = sim.events()
    wakes = ev[(ev["kind"] == KIND["wakeup"]) & (ev["pid"] == waker)]
    switches = ev[ev["kind"] == KIND["switch"]]
    # once its bonus is full (prio 115 < 125), each wakeup switches to it at the same instant
    late = wakes[wakes["time_ns"] > 6e9]
    for t in late["time_ns"]:
        s = switches[switches["time_ns"] == t]
        assert len(s) == 1 and s["pid"][0] == waker
    assert np.all(sim.latencies(waker)[-len(late):] == 0)
