"""Exited tasks are reaped: their slots are reused, so memory follows the
live tasks however many come and go, and the most recent `keep_exited`
of them stay readable."""
import numpy as np
import pytest

import pysched as ps

CHILD = ps.Program().run(us=10).exit()


def churn(keep_exited=10_000, preset="linux-2.5.65", cpus=1, record="counters"):
    """A shell forking a short child every tick."""
    sim = ps.Simulator(preset, cpus=cpus, seed=1, keep_exited=keep_exited, record=record)
    sim.spawn(ps.Program().loop().fork(CHILD).sleep(us=1).end(), name="shell")
    return sim


@pytest.mark.parametrize("preset", ps.presets())
def test_a_hundred_thousand_forks_reuse_a_handful_of_slots(preset):
    sim = churn(keep_exited=100, preset=preset)
    hz = sim.hz
    sim.run(seconds=100_000 / hz)
    c = sim.counters()
    assert c["exits"] >= 99_000
    assert c["task_slots"] <= 3          # the shell, a child, and one in its last switch
    assert c["exited_kept"] == 100
    assert c["exited_dropped"] == c["exits"] - 100
    sim.check()


def test_stats_show_the_live_and_the_last_kept_exited_tasks_in_pid_order():
    sim = churn(keep_exited=50)
    sim.run(seconds=1)
    st = sim.stats()
    exits = sim.counters()["exits"]
    assert list(st["pid"]) == sorted(st["pid"])
    assert len(st) == 50 + sim.counters()["live_tasks"]
    gone = st[st["exit_ns"] >= 0]
    assert len(gone) == 50
    # the newest: the last 50 children to exit, each with its 10 us of CPU
    assert gone["pid"].max() - gone["pid"].min() == 49
    assert (gone["cpu_ns"] == 10_000).all()
    assert (st["state"][st["exit_ns"] >= 0] == 8).all()     # dead
    assert exits > 50


def test_an_exited_task_is_readable_until_its_record_is_dropped():
    sim = churn(keep_exited=5)
    sim.run(seconds=0.05)
    pids = sim.stats()["pid"]
    newest_dead = max(p for p in pids if sim.task(p).exit_ns >= 0)
    t = sim.task(newest_dead)
    assert t.cpu_ns == 10_000 and t.state == "dead" and t.name == "shell"
    with pytest.raises(KeyError, match="pid 2 has exited and its record was dropped.*keep_exited=5"):
        sim.task(2)
    with pytest.raises(ValueError, match="task 2 has exited"):
        sim.renice(2, 5)
    with pytest.raises(KeyError, match=r"no task with pid 10000000 \(pids are 1\.\.\d+\)"):
        sim.task(10_000_000)


def test_keep_exited_zero_keeps_only_the_live():
    sim = churn(keep_exited=0)
    sim.run(seconds=0.1)
    assert set(sim.stats()["exit_ns"]) == {-1}
    assert sim.counters()["exited_dropped"] == sim.counters()["exits"]


def test_keep_exited_is_checked_and_fixed_once_tasks_exist():
    with pytest.raises(ValueError, match="keep_exited=-1 is outside the allowed range 0..10000000"):
        ps.Simulator("linux-2.5.65", keep_exited=-1)
    sim = ps.Simulator("linux-2.5.65", keep_exited=np.int64(3))
    sim.spawn(CHILD)
    with pytest.raises(ValueError, match="keep_exited can only be chosen before the first spawn"):
        sim._core.configure(0, 1, [], 1, 1 << 20, 0, 0, 100, 4, 0, 0)


def test_simultaneous_wakeups_follow_pids_not_the_slots_they_reuse():
    sim = ps.Simulator("linux-2.5.65", record="events")
    a = sim.spawn(ps.Program().exit())
    b = sim.spawn(ps.Program().exit())
    sim.run(seconds=0.001)
    # the free list is last-in first-out: pid 3 takes b's slot, pid 4 a's,
    # so slot order is now the reverse of pid order
    nap = ps.Program().sleep(ms=5).run(ms=1).exit()
    c, d = sim.spawn(nap), sim.spawn(nap)
    assert sim.counters()["task_slots"] == 2 and (a, b, c, d) == (1, 2, 3, 4)
    sim.run(seconds=0.02)
    ev = sim.events()
    woken = ev["pid"][ev["kind"] == ps.EVENT_KINDS.index("wakeup")]
    assert list(woken) == [3, 4]


def test_a_snapshot_holds_simultaneous_timers_of_tasks_in_reused_slots():
    # pending events are ordered by pid; the snapshot's order check once
    # compared slots, and refused a state whose slot order reverses pid order
    import pickle
    sim = ps.Simulator("linux-2.5.65", record="events")
    sim.spawn(ps.Program().exit())
    sim.spawn(ps.Program().exit())
    sim.run(seconds=0.001)
    nap = ps.Program().sleep(ms=5).run(ms=1).exit()
    sim.spawn(nap)
    sim.spawn(nap)
    sim.run(seconds=0.002)
    twin = pickle.loads(pickle.dumps(sim))
    for s in (sim, twin):
        s.run(seconds=0.02)
    assert (twin.events() == sim.events()).all()
    woken = sim.events()["pid"][sim.events()["kind"] == ps.EVENT_KINDS.index("wakeup")]
    assert list(woken) == [3, 4]


def test_a_reaped_simulator_pickles_copies_and_continues_like_the_original():
    import pickle
    sim = churn(keep_exited=20, cpus=2)
    sim.run(seconds=0.5)
    twin, dup = pickle.loads(pickle.dumps(sim)), sim.copy()
    for s in (sim, twin, dup):
        s.run(seconds=0.5)
    for s in (twin, dup):
        assert (s.stats() == sim.stats()).all()
        assert s.counters() == sim.counters()


def test_series_of_tasks_in_reused_slots_have_a_column_per_pid():
    sim = churn(record="series")
    sim.run(seconds=0.01)
    cpu = sim.series("prio")
    assert cpu.shape[1] == 1 + sim.counters()["forks"]
    # each child lives one tick: sampled at most once or twice, never after its exit
    alive = ~np.isnan(cpu)
    assert alive[:, 0].all()
    assert alive[:, 1:].sum(axis=0).max() <= 2
