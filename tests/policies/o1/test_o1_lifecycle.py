"""Fork, exit, yield, nice and the real-time classes (fact sheet §5.6-§5.9)."""
import numpy as np
import pytest

import pysched as ps

KIND = {k: i for i, k in enumerate(ps.EVENT_KINDS)}
MS = 1_000_000


def idle():
    return ps.Program().sleep(s=1000)


def test_fork_splits_a_51_tick_slice_into_26_for_the_child_and_25_for_the_parent():
    sim = ps.Simulator("linux-2.5.65")
    p = sim.spawn(ps.Program().fork(idle()).sleep(s=1000), time_slice=51)
    sim.run(ticks=0)
    assert sim.task(p + 1).time_slice == 26
    assert sim.task(p).time_slice == 25
    assert sim.task(p + 1).first_time_slice == 1 and sim.task(p + 1).parent == p


@pytest.mark.parametrize("preset", ["linux-2.5.64", "linux-2.5.65"])
def test_a_parent_with_one_tick_left_expires_at_once_when_it_forks(preset):
    sim = ps.Simulator(preset, record="events")
    p = sim.spawn(ps.Program().fork(idle()).run(s=10), time_slice=1)
    sim.run(ticks=0)
    ev = sim.events()
    exp = ev[(ev["kind"] == KIND["expire"]) & (ev["pid"] == p)]
    assert len(exp) == 1 and exp["time_ns"][0] == 0
    assert sim.task(p).time_slice == ps.analysis.o1.task_timeslice(120, preset=preset)
    assert sim.task(p + 1).time_slice == 1


def test_a_child_that_slept_more_than_its_parent_leaves_the_parents_sleep_avg_alone():
    sim = ps.Simulator("linux-2.5.65")
    p = sim.spawn(ps.Program().fork(ps.Program().sleep(ms=500).exit()).run(s=10),
                  init={"sleep_avg": 1000})
    sim.run(seconds=1)
    assert sim.task(p + 1).state == "dead"
    assert sim.task(p + 1).sleep_avg > 0
    # the parent computed all along: its sleep_avg decayed to 0 < the child's
    assert sim.task(p).sleep_avg == 0


def test_exit_weight_blend_with_the_fact_sheet_numbers():
    # parent 8000, child 2000 at reaping: (8000*3 + 2000)/4 = 6500
    sim = ps.Simulator("linux-2.5.65", params={"child_penalty": 25})
    p = sim.spawn(ps.Program().fork(ps.Program().exit()).sleep(s=1000), init={"sleep_avg": 8000})
    sim.run(seconds=0.001)
    assert sim.task(p + 1).state == "dead"
    assert sim.task(p).sleep_avg == 6500


def test_a_child_exiting_within_its_first_slice_returns_it_to_the_parent_capped_at_max():
    sim = ps.Simulator("linux-2.5.65")
    p = sim.spawn(ps.Program().fork(ps.Program().run(ms=2).exit()).run(s=10), time_slice=190)
    sim.run(ticks=0)
    assert sim.task(p).time_slice == 95 and sim.task(p + 1).time_slice == 95
    sim.run(seconds=0.01)
    # 95 + what the child had left (93) = 188, below MAX_TIMESLICE; the
    # parent has also run a few ticks meanwhile
    assert sim.task(p + 1).state == "dead"
    t = sim.task(p)
    assert t.time_slice == 95 + 93 - t.cpu_ticks

    sim = ps.Simulator("linux-2.5.65")
    p = sim.spawn(ps.Program().fork(ps.Program().exit()).run(s=10), time_slice=200)
    sim.run(ticks=0)
    assert sim.task(p).time_slice == 200  # 100 + 100, capped at MAX_TIMESLICE = 200


def test_a_child_that_expired_once_returns_nothing():
    sim = ps.Simulator("linux-2.5.65")
    p = sim.spawn(ps.Program().fork(ps.Program().run(ms=300).exit()).sleep(s=10), time_slice=20)
    sim.run(seconds=1)
    assert sim.task(p + 1).state == "dead"
    assert sim.task(p).time_slice == 10


def test_yield_moves_a_normal_task_to_the_expired_array_and_alone_it_runs_again():
    sim = ps.Simulator("linux-2.5.65", record="events")
    y = sim.spawn(ps.Program().run(ms=3).yield_().run(s=10), name="y")
    h = sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.run(seconds=0.003)
    assert sim.queue() == [("active", 125, h), ("expired", 125, y)]
    sim2 = ps.Simulator("linux-2.5.65", record="events")
    y2 = sim2.spawn(ps.Program().run(ms=3).yield_().run(s=10))
    sim2.run(seconds=0.01)
    ev = sim2.events()
    assert np.sum(ev["kind"] == KIND["array_switch"]) == 1
    assert sim2.runqueue()["curr"] == y2 and sim2.task(y2).cpu_ns == 10 * MS


def test_a_fifo_task_runs_until_it_blocks():
    sim = ps.Simulator("linux-2.5.65")
    f = sim.spawn(ps.Program().run(ms=700).sleep(ms=300).run(s=10), policy="fifo", rt_priority=1)
    h = sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=1)
    assert sim.task(f).cpu_ns == 700 * MS
    assert sim.task(h).cpu_ns == 300 * MS


def test_rr_tasks_of_equal_priority_alternate_every_timeslice():
    sim = ps.Simulator("linux-2.5.65", record="events")
    a = sim.spawn(ps.programs.cpu_hog(), policy="rr", rt_priority=50, nice=0)
    b = sim.spawn(ps.programs.cpu_hog(), policy="rr", rt_priority=50, nice=0)
    n = sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=2)
    ev = sim.events()
    sw = ev[ev["kind"] == KIND["switch"]]
    slice_ = ps.analysis.o1.task_timeslice(120, preset="linux-2.5.65")
    assert list(sw["pid"][:6]) == [a, b, a, b, a, b]
    assert np.all(np.diff(sw["time_ns"][:6]) == slice_ * MS)
    assert sim.task(n).cpu_ns == 0  # RT above every normal task


def rta_worst_case(tasks):
    """Classic response-time analysis for fixed priorities, C and T in ticks,
    tasks sorted from the highest priority: R = C + sum ceil(R/Tj) Cj."""
    out = []
    for i, (c, t) in enumerate(tasks):
        r = c
        while True:
            nxt = c + sum(-(-r // tj) * cj for cj, tj in tasks[:i])
            if nxt == r:
                break
            r = nxt
        out.append(r)
    return out


def test_periodic_fifo_tasks_meet_the_worst_case_response_times_of_rta():
    # (C, T) in ticks, released together at t=0 (the critical instant)
    tasks = [(1, 4), (2, 6), (3, 13)]
    sim = ps.Simulator("linux-2.5.65", record="events")
    pids = []
    for k, (c, t) in enumerate(tasks):
        prog = ps.Program().loop().wait(f"rel{k}").run(ms=c).end()
        pids.append(sim.spawn(prog, policy="fifo", rt_priority=90 - k))
        sim.source(f"rel{k}", every_ms=t, start_ms=1)
    sim.run(seconds=1.0)
    ev = sim.events()
    want = rta_worst_case(tasks)
    assert all(r <= t for r, (c, t) in zip(want, tasks))  # so jobs never overlap
    for k, (pid, (c, t)) in enumerate(zip(pids, tasks)):
        # a job completes when its task blocks again: a switch away from it
        # with a sleeping state (a preemption leaves it running, state 0)
        done = ev[(ev["kind"] == KIND["switch"]) & (ev["other"] == pid) & (ev["value"] != 0) &
                  (ev["time_ns"] > 0)]  # at t=0 each blocks before its first release
        releases = (1 + t * np.arange(len(done))) * MS
        resp = done["time_ns"] - releases
        assert np.all(resp >= c * MS)
        assert resp.max() == want[k] * MS


def test_a_fork_is_not_a_wakeup_no_back_boost_even_with_2_5_64_child_placement():
    # wake_up_forked_process activates the child with no waker: a mix of
    # bk4's back-boost with 2.5.64's placement gives the parent nothing
    sim = ps.Simulator("linux-2.5.64", record="events",
                       params={"waker_bonus": 1, "child_placement": 0})
    smax = sim.params["max_sleep_avg"]
    p = sim.spawn(ps.Program().loop(20).fork(idle()).sleep(ms=3).end().sleep(s=100),
                  init={"sleep_avg": smax - 100})
    sim.run(seconds=1)
    ev = sim.events()
    assert sim.task(p).bonus_received == 0
    assert not np.any(ev["kind"] == KIND["backboost"])
    assert sim.counters()["forks"] == 20
