"""Machines of more than 64 CPUs, up to 1,024 (a CPU set is a psCpuMask,
cpumask.h): every preset and the sched_ext class run hogs and sleepers on
256 and 1,024 CPUs, an affinity past CPU 63 is honoured (spawned pinned
there, or moved there by set_affinity), a run cut in chunks or stepped
tick by tick is the whole run at 256 CPUs, and a snapshot of 1,024 CPUs
round-trips."""
import pickle

import numpy as np
import pytest

import pysched as ps
from pysched.ext.examples import Simple
from cuts import four_ways, watched

PRESETS = ps.presets() + [Simple]
HOG = ps.programs.cpu_hog


def preset_id(p):
    return p if isinstance(p, str) else "sched_ext"


def hogs_and_sleepers(preset, cpus, **kw):
    """cpus / 4 sleepers (1 ms of work, 3 ms asleep), then cpus hogs, each
    spawned where spawn places it: the sleepers on the first CPUs, one hog
    on every CPU."""
    sim = ps.Simulator(preset, cpus=cpus, seed=3, **kw)
    for i in range(cpus // 4):
        sim.spawn(ps.programs.interactive(1, 3), name=f"sleeper{i}")
    for i in range(cpus):
        sim.spawn(HOG(), name=f"hog{i}")
    return sim


@pytest.mark.parametrize("cpus", [256, 1024])
@pytest.mark.parametrize("preset", PRESETS, ids=preset_id)
def test_hogs_and_sleepers_keep_every_cpu_busy(preset, cpus):
    sim = hogs_and_sleepers(preset, cpus)
    sim.run(seconds=0.03)
    sim.check()
    cpu = sim.cpu_stats()
    assert len(cpu) == cpus and (cpu["ticks"] >= 3).all() and (cpu["busy_ticks"] == cpu["ticks"]).all()
    st = sim.stats()
    sleepers = st[np.char.startswith(st["name"], "sleeper")]
    assert len(sleepers) == cpus // 4
    assert (sleepers["cpu_ns"] > 0).all() and (sleepers["nr_wakeups"] > 0).all()
    # every CPU has had work since the start: the spread reached CPU cpus - 1
    assert {int(sim.task(pid).cpu) for pid in st["pid"]} == set(range(cpus))


@pytest.mark.parametrize("preset", PRESETS, ids=preset_id)
def test_a_task_pinned_to_cpu_700_of_1024_runs_only_there(preset):
    sim = ps.Simulator(preset, cpus=1024, seed=1, record="events")
    pinned = sim.spawn(ps.programs.interactive(2, 1), name="pinned", cpus_allowed=[700])
    for _ in range(8):
        sim.spawn(HOG())
    sim.run(seconds=0.05)
    t = sim.task(pinned)
    assert t.cpus == [700] and t.cpus_allowed == 1 << 700 and t.cpu == 700
    ev = sim.events()
    switches = ev[(ev["kind"] == ps.EVENT_KINDS.index("switch")) & (ev["pid"] == pinned)]
    assert len(switches) > 5 and set(switches["cpu"].tolist()) == {700}
    assert sim.task(pinned).cpu_ns >= 8_000_000
    sim.check()


@pytest.mark.parametrize("preset", PRESETS, ids=preset_id)
def test_set_affinity_moves_a_task_past_cpu_63_and_keeps_it_there(preset):
    sim = ps.Simulator(preset, cpus=1024, seed=1)
    a = sim.spawn(HOG(), cpu=0)
    sleeper = sim.spawn(ps.programs.interactive(1, 2), cpu=5)
    sim.run(seconds=0.01)
    sim.set_affinity(a, [1000, 1001])
    sim.set_affinity(sleeper, [640])
    assert sim.task(a).cpus == [1000, 1001] and sim.task(sleeper).cpus == [640]
    if preset != "linux-2.4.20":   # no migration thread: it moves as its CPU next schedules
        assert sim.task(a).cpu == 1000
    sim.run(seconds=0.05)
    assert sim.task(a).cpu in (1000, 1001) and sim.task(sleeper).cpu == 640
    assert sim.runqueue(0)["curr"] != a
    cpu = sim.cpu_stats()
    assert cpu["busy_ns"][1000] + cpu["busy_ns"][1001] >= 49_000_000
    sim.check()


def test_cpu_numbers_outside_the_machine_are_refused_naming_the_range():
    with pytest.raises(ValueError, match=r"cpus=1025 is outside the allowed range 1\.\.1024"):
        ps.Simulator("linux-2.5.65", cpus=1025)
    sim = ps.Simulator("linux-2.5.65", cpus=1024)
    with pytest.raises(ValueError, match=r"1024.*0\.\.1023"):
        sim.spawn(HOG(), cpus_allowed=[3, 1024])
    pid = sim.spawn(HOG())
    with pytest.raises(ValueError, match=r"1024.*0\.\.1023"):
        sim.set_affinity(pid, [1024])
    assert sim.task(pid).cpus == list(range(1024))
    with pytest.raises(ValueError, match=r"2\*\*1024"):
        sim._core.set_affinity(pid, 1 << 1024)


def busy_256(preset, reference=False):
    sim = ps.Simulator(preset, cpus=256, seed=5, reference=reference)
    for i in range(200):
        sim.spawn(HOG(), name=f"hog{i}")
    for i in range(40):  # CPU 7's, which the idle CPUs pull
        sim.spawn(HOG(), name=f"crowd{i}", cpu=7)
    for i in range(64):
        sim.spawn(ps.programs.interactive(1, 4), name=f"ed{i}")
    sim.spawn(ps.Program().loop().run(ms=2).fork(ps.Program().run(ms=1).exit()).sleep(ms=3).end(),
              cpus_allowed=[200, 255])
    sim.watch(idle_while_waiting_ms=1, starvation_ms=30)
    return sim


@pytest.mark.parametrize("preset", ["linux-2.5.65", "houston-2003", "linux-6.12-eevdf"])
def test_at_256_cpus_a_run_is_the_same_whole_in_chunks_stepped_and_without_fast_paths(preset):
    whole, chunks, stepped, plain = four_ways(lambda **kw: busy_256(preset, **kw), 0.3)
    expected = watched(whole)
    assert whole.stats()["nr_migrations"].sum() > 0
    for other in (chunks, stepped, plain):
        assert watched(other) == expected


@pytest.mark.parametrize("preset", ["linux-2.5.65", "linux-6.12-eevdf", "linux-2.4.20"])
def test_a_snapshot_of_1024_cpus_round_trips(preset):
    sim = hogs_and_sleepers(preset, 1024)
    sim.spawn(HOG(), cpus_allowed=[63, 64, 1023])
    sim.run(seconds=0.02)
    twin = pickle.loads(pickle.dumps(sim))
    assert twin.cpus == 1024
    assert [twin.task(p).cpus for p in (1, 1281)] == [sim.task(p).cpus for p in (1, 1281)]
    assert sim.task(1281).cpus == [63, 64, 1023]
    for s in (sim, twin):
        s.run(seconds=0.02)
    assert (sim.stats() == twin.stats()).all()
    assert sim.cpu_stats().tobytes() == twin.cpu_stats().tobytes()
    twin.check()


def test_an_exported_run_of_128_cpus_keeps_its_affinities(tmp_path):
    from pysched import trace as tr
    sim = ps.Simulator("linux-2.5.65", cpus=128, record="events")
    sim.spawn(ps.programs.interactive(2, 3), name="wide", cpus_allowed=[64, 127])
    sim.spawn(HOG(), name="low", cpus_allowed=[0, 63])
    sim.run(seconds=0.05)
    sim.export_ftrace(tmp_path / "run.txt")
    t = tr.load(tmp_path / "run.txt")
    allowed = dict(zip(t.tasks["tid"].tolist(), t.tasks["cpus_allowed"].tolist()))
    assert allowed == {1: (1 << 64) | (1 << 127), 2: 1 | (1 << 63)}
    # the replay runs the CPUs the trace saw (0 and 64) as CPUs 0 and 1
    w = t.to_workload()
    assert w.cpus == 2 and {x.comm: x.cpus_allowed for x in w.tasks} == {"wide": (1,), "low": (0,)}


def test_a_python_policy_sees_the_whole_affinity_past_cpu_63():
    """linux-2.4.20 written in Python reads p.cpus_allowed as an int
    (can_schedule: p.cpus_allowed >> cpu & 1): past CPU 63 too."""
    from pysched.policy.examples.linux24 import Linux24
    sim = ps.Simulator(Linux24, cpus=128, seed=2, record="events")
    pinned = sim.spawn(ps.programs.interactive(2, 1), name="pinned", cpus_allowed=[100])
    for _ in range(4):
        sim.spawn(HOG(), cpus_allowed=[99, 100, 101])
    sim.run(seconds=0.2)
    ev = sim.events()
    switches = ev[(ev["kind"] == ps.EVENT_KINDS.index("switch")) & (ev["pid"] == pinned)]
    assert len(switches) > 5 and set(switches["cpu"].tolist()) == {100}
    hogs = ev[(ev["kind"] == ps.EVENT_KINDS.index("switch")) & (ev["pid"] > pinned)]
    assert set(hogs["cpu"].tolist()) == {99, 100, 101}
    sim.check()
