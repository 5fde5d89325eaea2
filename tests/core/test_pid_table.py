"""The engine finds a task by its pid through a table of the live pids
(csrc/core/pids.c, as the kernel's pid hash), not by scanning the slots,
which forks reuse as tasks are reaped.  Under debug=True the invariant
checks compare the table with every slot after each instant; here tasks
come and go by the hundred, in random order, so that the table grows,
wraps and deletes out of order, and every pid is then found where it
lives -- from Python, from an exit looking up its parent, in copies and
restored snapshots."""
import pickle

import pytest

import pysched as ps


def churn(seed, cpus=2, debug=True):
    """Parents that fork children of random lifetimes, which fork too:
    slots are reused at once, in random order."""
    sim = ps.Simulator("linux-2.5.65", cpus=cpus, seed=seed, debug=debug, keep_exited=50)
    grandchild = ps.Program().run(ms=ps.uniform(0.1, 3)).exit()
    child = ps.Program().run(ms=ps.uniform(0.1, 2)).fork(grandchild, n=2) \
        .sleep(ms=ps.uniform(0.1, 4)).exit()
    parent = ps.Program().loop().fork(child, n=3).sleep(ms=ps.uniform(0.5, 3)).end()
    for i in range(20):
        sim.spawn(parent, name=f"p{i}")
    return sim


@pytest.mark.parametrize("seed", range(3))
def test_every_live_pid_is_found_after_churn(seed):
    sim = churn(seed)
    for _ in range(5):
        sim.run(0.1)
        sim.spawn(ps.Program().run(ms=1).fork(ps.Program().run(ms=1).exit()).exit())
    counters = sim.counters()
    assert counters["forks"] > 500 and counters["task_slots"] < sim._core.ntasks / 3
    st = sim.stats()
    live = st[st["exit_ns"] < 0]
    assert len(live) == counters["live_tasks"]
    for pid in live["pid"]:
        assert sim.task(int(pid)).pid == pid
    sim.check()


def test_a_task_in_a_reused_slot_is_the_one_a_call_acts_on():
    sim = churn(0)
    sim.run(0.05)
    st = sim.stats()
    newest = int(st["pid"][st["exit_ns"] < 0].max())
    assert newest > sim.counters()["task_slots"]  # it sits in a reused slot
    sim.renice(newest, 7)
    assert sim.task(newest).nice == 7
    others = st[(st["exit_ns"] < 0) & (st["pid"] != newest)]
    assert not (sim.stats()[(sim.stats()["pid"] != newest)
                            & (sim.stats()["exit_ns"] < 0)]["nice"] == 7).any()
    assert len(others) > 0


@pytest.mark.parametrize("how", ["copy", "pickle"])
def test_copies_and_restored_snapshots_find_the_same_pids(how):
    sim = churn(1)
    sim.run(0.03)
    twin = sim.copy() if how == "copy" else pickle.loads(pickle.dumps(sim))
    for s in (sim, twin):
        s.run(0.03)
        s.check()
    assert sim.stats().tobytes() == twin.stats().tobytes()
    st = twin.stats()
    for pid in st["pid"][st["exit_ns"] < 0]:
        assert twin.task(int(pid)).pid == pid


def test_exited_and_unknown_pids_are_not_found():
    sim = churn(2)
    sim.run(0.03)
    st = sim.stats()
    gone = int(st["pid"][st["exit_ns"] >= 0][0])
    with pytest.raises(ValueError, match="exited"):
        sim.renice(gone, 1)
    with pytest.raises(KeyError, match="no task"):
        sim.renice(sim._core.ntasks + 1, 1)
