"""Programs equal op for op are stored once (Simulator._program_id): a
workload built with a new Program per task runs exactly as one built with
one shared Program, and programs that differ in anything the core sees --
a number, a channel, a forked child -- keep their own ops."""
import pickle

import numpy as np

import pysched as ps
from pysched import Program

PRESET = "linux-2.5.65"


def interactive():
    return Program().loop().run(ms=1).sleep(ms=ps.uniform(5, 15)).end()


def pinned_workload(program_for):
    sim = ps.Simulator(PRESET, cpus=2, seed=3, record="events")
    shared = interactive()
    for c in range(2):
        sim.spawn(ps.programs.cpu_hog(), name=f"hog{c}", cpu=c, cpus_allowed=[c])
        for i in range(8):
            sim.spawn(program_for(shared), name=f"i{c}.{i}", cpu=c, cpus_allowed=[c])
    sim.run(2.0)
    return sim


def test_equal_programs_built_apart_are_stored_once_and_run_as_one_shared_program():
    apart = pinned_workload(lambda shared: interactive())
    together = pinned_workload(lambda shared: shared)
    assert apart._nprogs == together._nprogs == 2  # the hog's and the interactive one
    st = together.stats()
    for name in st.dtype.names:
        assert np.array_equal(apart.stats()[name], st[name]), name
    assert np.array_equal(apart.events(), together.events())
    assert together.stats()["nr_wakeups"].sum() > 200  # enough to part ways if the ops did


def wakeups_of_each(sim, a, b, seconds=0.2):
    pa, pb = sim.spawn(a), sim.spawn(b)
    sim.run(seconds)
    st = sim.stats()
    return [int(st["nr_wakeups"][st["pid"] == p][0]) for p in (pa, pb)]


def test_programs_that_differ_in_one_number_keep_their_own_ops():
    sim = ps.Simulator(PRESET)
    short, long_ = wakeups_of_each(sim, Program().loop().sleep(ms=5).end(),
                                   Program().loop().sleep(ms=10).end())
    assert sim._nprogs == 2
    assert (short, long_) == (40, 20)  # 200 ms of 5 ms and of 10 ms sleeps


def test_programs_that_wait_on_different_channels_keep_their_own_ops():
    sim = ps.Simulator(PRESET)
    sim.source("a", every_ms=10, start_ms=10)
    on_a, on_b = wakeups_of_each(sim, Program().loop().wait("a").end(),
                                 Program().loop().wait("b").end())
    assert sim._nprogs == 2
    assert (on_a, on_b) == (20, 0)


def test_parents_share_when_their_forked_children_are_equal_and_not_otherwise():
    sim = ps.Simulator(PRESET)
    a = sim.spawn(Program().fork(Program().run(ms=3)).sleep(s=1))
    b = sim.spawn(Program().fork(Program().run(ms=3)).sleep(s=1))
    assert sim._nprogs == 2  # one child, one parent
    c = sim.spawn(Program().fork(Program().run(ms=7)).sleep(s=1))
    assert sim._nprogs == 4
    sim.run(0.1)
    st = sim.stats()
    child_ms = {int(ppid): int(ns) // 1_000_000
                for ppid, ns in zip(st["ppid"], st["cpu_ns"]) if ppid}
    assert child_ms == {a: 3, b: 3, c: 7}


def test_a_program_that_forks_itself_still_runs_when_an_equal_one_is_spawned():
    sim = ps.Simulator(PRESET)
    for _ in range(2):
        chain = Program()
        chain.run(ms=1).fork(chain).sleep(ms=50)  # each generation forks the next and exits
        sim.spawn(chain)
    sim.run(0.4)
    assert sim.counters()["forks"] > 4


def test_a_copy_and_its_original_each_add_programs_of_their_own():
    sim = ps.Simulator(PRESET)
    sim.spawn(Program().loop().sleep(ms=3).end())      # id 0 in both
    branch = sim.copy()
    branch.spawn(Program().loop().sleep(ms=10).end())  # id 1 in the branch
    sim.spawn(Program().loop().sleep(ms=5).end())      # id 1 in the original
    # the branch must add this one: its own id 1 is the 10 ms sleeper
    assert wakeups_of_each(branch, Program().loop().sleep(ms=5).end(),
                           Program().loop().sleep(ms=10).end()) == [40, 20]
    assert branch._nprogs == 3


def test_an_unpickled_simulator_shares_programs_with_those_spawned_before():
    sim = ps.Simulator(PRESET)
    sim.spawn(Program().loop().sleep(ms=5).end())
    back = pickle.loads(pickle.dumps(sim))
    assert wakeups_of_each(back, Program().loop().sleep(ms=5).end(),
                           Program().loop().sleep(ms=10).end()) == [40, 20]
    assert back._nprogs == 2
