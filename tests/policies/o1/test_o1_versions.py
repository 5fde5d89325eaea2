"""The version table of the fact sheet (§1), row by row: each test states
what its row says of every version and checks the simulator does exactly
that for each preset."""
import numpy as np
import pytest

import pysched as ps

V64, BK4, V65 = "linux-2.5.64", "linux-2.5.64-bk4", "linux-2.5.65"
ALL = [V64, BK4, V65]
KIND = {k: i for i, k in enumerate(ps.EVENT_KINDS)}
MS = 1_000_000


def hog():
    return ps.programs.cpu_hog()


@pytest.mark.parametrize("preset,slice_", [(V64, 151), (BK4, 102), (V65, 102)])
def test_max_timeslice_300_then_200_gives_nice0_slices_of_151_then_102(preset, slice_):
    sim = ps.Simulator(preset)
    pid = sim.spawn(hog())
    assert sim.task(pid).time_slice == slice_


@pytest.mark.parametrize("preset,child", [(V64, 95), (BK4, 50), (V65, 50)])
def test_child_penalty_95_then_50(preset, child):
    parent = ps.Program().fork(ps.Program().sleep(s=100)).sleep(s=100)
    sim = ps.Simulator(preset)
    p = sim.spawn(parent, init={"sleep_avg": 1000})
    sim.run(ticks=0)
    assert sim.task(p + 1).sleep_avg == 1000 * child // 100
    assert sim.task(p).sleep_avg == 1000  # PARENT_PENALTY 100


@pytest.mark.parametrize("preset,limit", [(V64, 2000), (BK4, 10000), (V65, 10000)])
def test_max_sleep_avg_and_starvation_limit_2s_then_10s(preset, limit):
    assert ps.Simulator(preset).params["max_sleep_avg"] == limit
    assert ps.Simulator(preset).params["starvation_limit"] == limit
    assert ps.Simulator(preset, hz=100).params["max_sleep_avg"] == limit // 10


def credit_after_io(preset, io_us):
    """A lone task blocks at 0.5 ms (last_run = jiffy 0) in an I/O that ends
    io_us later; its sleep_avg just after the wakeup is the credit."""
    sim = ps.Simulator(preset)
    pid = sim.spawn(ps.Program().run(us=500).io(us=io_us).sleep(s=100))
    wake_ns = 500_000 + io_us * 1000
    sim.run(seconds=wake_ns / 1e9)
    assert sim.task(pid).nr_wakeups == 1
    return sim.task(pid).sleep_avg


@pytest.mark.parametrize("preset,credits", [(V64, (0, 1, 5)), (BK4, (0, 1, 5)), (V65, (0, 0, 4))])
def test_sleep_credit_for_wakeups_0_1_and_5_ticks_after_last_run(preset, credits):
    # wakeups at jiffies 0, 1 and 5 with last_run = 0 (fact sheet §5.5 table)
    assert tuple(credit_after_io(preset, us) for us in (300, 1000, 5000)) == credits


@pytest.mark.parametrize("preset,recomputed", [(V64, True), (BK4, False), (V65, False)])
def test_prio_is_recomputed_at_wakeup_only_if_sleep_avg_changed_from_bk4(preset, recomputed):
    # a task at MAX_SLEEP_AVG is reniced from +1 to 0 (prio = static_prio,
    # bonus dropped), then sleeps and wakes with credit: sleep_avg cannot
    # change any more
    sim = ps.Simulator(preset)
    smax = sim.params["max_sleep_avg"]
    pid = sim.spawn(ps.Program().sleep(ms=20).sleep(s=100), nice=1, init={"sleep_avg": smax})
    sim.run(seconds=0.005)
    sim.renice(pid, 0)
    assert sim.task(pid).prio == 120
    sim.run(seconds=0.03)
    assert sim.task(pid).sleep_avg == smax
    assert sim.task(pid).prio == (115 if recomputed else 120)


@pytest.mark.parametrize("preset", [V64, BK4, V65, "houston-2003"])
def test_renice_to_the_same_nice_changes_nothing(preset):
    # set_user_nice: `if (TASK_NICE(p) == nice ...) return;` -- the bonus of
    # an interactive task survives a renice to the nice it already has
    sim = ps.Simulator(preset)
    smax = sim.params["max_sleep_avg"]
    pid = sim.spawn(ps.Program().sleep(s=100), init={"sleep_avg": smax})
    sim.run(seconds=0.005)
    before = sim.task(pid)
    sim.renice(pid, 0)
    after = sim.task(pid)
    assert after.prio == before.prio < after.static_prio
    assert sim.queue(0) == [] and after.time_slice == before.time_slice


def backboost_scene(preset, via_source=False):
    """Fact sheet §5.5: a wakee at 9500 sleeps 801 ticks (credit 800 in
    2.5.65); a waker at 4000 posts it.  Q is a peer at the waker's prio.
    MAX_SLEEP_AVG is bk4's 10000 in every version, so that the same
    sleep_avg values are possible in 2.5.64 too."""
    sim = ps.Simulator(preset, record="events", params={"max_sleep_avg": 10000})
    wakee = sim.spawn(ps.Program().wait("ch").sleep(s=100), init={"sleep_avg": 9500}, name="wakee")
    sim.run(seconds=0.801)
    if via_source:
        sim.source("ch", every_ms=1, count=1, start_ms=0)
        waker = sim.spawn(ps.Program().sleep(s=100), init={"sleep_avg": 4000}, name="waker")
        peer = sim.spawn(hog(), init={"sleep_avg": 4300}, name="peer")
    else:
        waker = sim.spawn(ps.Program().post("ch").run(s=100), init={"sleep_avg": 4000}, name="waker")
        peer = sim.spawn(hog(), init={"sleep_avg": 4300}, name="peer")
    sim.run(ticks=0)
    return sim, wakee, waker, peer


def test_backboost_example_of_the_fact_sheet_in_2_5_65():
    sim, wakee, waker, peer = backboost_scene(V65)
    assert sim.task(wakee).sleep_avg == 10000
    assert sim.task(waker).sleep_avg == 4300
    assert sim.task(waker).bonus_received == 300 and sim.task(wakee).bonus_given == 300
    ev = sim.events()
    bb = ev[ev["kind"] == KIND["backboost"]]
    assert len(bb) == 1 and (bb["pid"][0], bb["other"][0], bb["value"][0]) == (waker, wakee, 300)
    # the wakee (prio 115) preempted the waker at once; the waker had been
    # requeued at the tail of its prio list (121), behind its equal-prio peer
    assert sim.task(wakee).prio == 115 and list(sim.latencies(wakee)) == [0]
    assert sim.queue() == [("active", 121, peer), ("active", 121, waker)]


@pytest.mark.parametrize("preset,given", [(V64, False), (BK4, True), (V65, True)])
def test_backboost_exists_from_bk4_on(preset, given):
    sim, wakee, waker, peer = backboost_scene(preset)
    assert (sim.task(waker).bonus_received > 0) == given
    assert (sim.task(waker).sleep_avg > 4000) == given


@pytest.mark.parametrize("preset", ALL)
def test_no_backboost_when_the_same_wakeup_comes_from_interrupt_context(preset):
    sim, wakee, waker, peer = backboost_scene(preset, via_source=True)
    assert sim.task(wakee).nr_wakeups == 1
    assert sim.task(waker).sleep_avg == 4000 and sim.task(waker).bonus_received == 0
    assert sim.task(wakee).bonus_given == 0


@pytest.mark.parametrize("preset,credited", [(V64, True), (BK4, False), (V65, False)])
def test_sync_wakeups_credit_nothing_from_bk4_on(preset, credited):
    sim = ps.Simulator(preset)
    wakee = sim.spawn(ps.Program().wait("ch").sleep(s=100))
    sim.spawn(ps.Program().sleep(ms=50).post("ch", sync=True).sleep(s=100))
    sim.run(seconds=0.06)
    assert sim.task(wakee).nr_wakeups == 1
    assert (sim.task(wakee).sleep_avg > 0) == credited


def first_runner_after_fork(preset):
    sim = ps.Simulator(preset, record="events")
    child = ps.Program().run(ms=5).sleep(s=100)
    parent = sim.spawn(ps.Program().run(ms=3).fork(child).run(ms=50).sleep(s=100),
                       init={"sleep_avg": 500})
    sim.run(seconds=0.02)
    ev = sim.events()
    sw = ev[(ev["kind"] == KIND["switch"]) & (ev["time_ns"] == 3 * MS)]
    return parent, sw


@pytest.mark.parametrize("preset,child_first", [(V64, False), (BK4, True), (V65, True)])
def test_forked_child_runs_first_from_bk4_and_the_parent_usually_in_2_5_64(preset, child_first):
    parent, sw = first_runner_after_fork(preset)
    if child_first:
        assert len(sw) == 1 and sw["pid"][0] == parent + 1 and sw["other"][0] == parent
    else:
        assert len(sw) == 0  # the parent kept the CPU


@pytest.mark.parametrize("preset,decays", [(V64, False), (BK4, True), (V65, True)])
def test_the_tick_decays_sleep_avg_of_rt_tasks_from_bk4_on(preset, decays):
    sim = ps.Simulator(preset)
    rt = sim.spawn(hog(), policy="fifo", rt_priority=10, init={"sleep_avg": 1000})
    sim.run(ticks=100)
    assert sim.task(rt).sleep_avg == (900 if decays else 1000)


@pytest.mark.parametrize("preset,penalized", [(V64, False), (BK4, True), (V65, True)])
def test_fork_penalties_apply_to_rt_tasks_from_bk4_on(preset, penalized):
    sim = ps.Simulator(preset)
    p = sim.spawn(ps.Program().fork(ps.Program().sleep(s=10)).sleep(s=10), policy="rr",
                  rt_priority=5, init={"sleep_avg": 1000})
    sim.run(ticks=0)
    assert sim.task(p + 1).sleep_avg == (500 if penalized else 1000)
    assert sim.task(p + 1).policy == "rr" and sim.task(p + 1).prio == 99 - 5


@pytest.mark.parametrize("preset,credited", [(V64, True), (BK4, False), (V65, False)])
def test_setscheduler_requeues_by_full_activation_only_in_2_5_64(preset, credited):
    # A waits while B runs its slice; setscheduler(A, normal) then requeues A
    sim = ps.Simulator(preset)
    a = sim.spawn(hog(), name="A")
    b = sim.spawn(hog(), name="B")
    sim.run(ticks=sim.task(a).time_slice + 50)
    assert sim.runqueue()["curr"] == b
    sim.setscheduler(a, "normal")
    assert (sim.task(a).sleep_avg > 0) == credited


@pytest.mark.parametrize("preset", ALL)
def test_a_wakeup_preempts_only_a_strictly_worse_prio_in_every_version(preset):
    sim = ps.Simulator(preset)
    w = sim.spawn(ps.Program().wait("ch").run(ms=1).sleep(s=100))
    h = sim.spawn(hog())
    slice_ms = sim.task(h).time_slice
    sim.source("ch", every_ms=5, count=1)
    sim.run(seconds=0.5)
    # woken at 5 ms at prio 125 (no credit yet), it waits for the hog's slice to end
    assert sim.task(w).prio == sim.task(h).prio == 125
    assert list(sim.latencies(w)) == [(slice_ms - 5) * MS]
