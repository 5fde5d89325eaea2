"""A conformance check over every registered preset: same seed, same trace;
the invariants hold after every instant of a workload that exercises every
op and syscall; copy and pickle branch a run exactly."""
import pickle

import numpy as np
import pytest

import pysched as ps

PRESETS = ps.presets()


def busy_machine(preset, seed=11, cpus=2, **kw):
    sim = ps.Simulator(preset, cpus=cpus, seed=seed, **kw)
    sim.spawn(ps.programs.kernel_compile(jobs=3), name="make")
    sim.spawn(ps.programs.x_server(), name="X")
    for i in range(2):
        sim.spawn(ps.programs.x_client(), name=f"client{i}")
    sim.spawn(ps.Program().loop().run(ms=ps.normal(3, 1)).yield_().nice(5).run(ms=2).nice(0)
              .sleep(ms=ps.exponential(10)).end(), name="fidget")
    sim.spawn(ps.Program().loop().wait("irq").run(us=300).end(), name="rr", policy="rr",
              rt_priority=20)
    sim.spawn(ps.Program().run(ms=50).setscheduler("fifo", 10).run(ms=5).setscheduler("normal")
              .sleep(ms=20).loop(3).io(ms=ps.uniform(1, 4)).run(ms=1).end().exit(), name="mover")
    sim.source("irq", poisson_ms=7)
    return sim


@pytest.mark.parametrize("preset", PRESETS)
def test_the_invariants_hold_after_every_instant(preset):
    sim = busy_machine(preset, debug=True)
    sim.run(seconds=3)
    sim.renice(2, -5)
    sim.set_affinity(3, [1])
    sim.run(seconds=3)
    sim.check()
    st = sim.stats()
    assert st["nr_wakeups"].sum() > 1000 and sim.counters()["forks"] > 3


@pytest.mark.parametrize("preset", PRESETS)
def test_same_seed_same_trace_different_seed_different_trace(preset):
    traces = []
    for seed in (11, 11, 12):
        sim = busy_machine(preset, seed=seed, record="events")
        sim.run(seconds=2)
        traces.append(sim.events().tobytes())
    assert traces[0] == traces[1] and traces[0] != traces[2]


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("how", ["copy", "pickle"])
def test_a_branch_runs_exactly_like_the_original(preset, how):
    sim = busy_machine(preset, record="events")
    sim.run(seconds=1.5)
    branch = sim.copy() if how == "copy" else pickle.loads(pickle.dumps(sim))
    for s in (sim, branch):
        s.run(seconds=1.5)
        s.spawn(ps.programs.cpu_hog(), name="late")
        s.run(seconds=0.5)
    assert np.array_equal(sim.stats(), branch.stats())
    assert sim.events().tobytes() == branch.events().tobytes()
    assert np.array_equal(sim.latencies(), branch.latencies())
    assert sim.params == branch.params and sim.now_ns == branch.now_ns


def test_a_branch_is_independent_of_its_original():
    sim = busy_machine("linux-2.5.65")
    sim.run(seconds=1)
    branch = pickle.loads(pickle.dumps(sim))
    branch.set_param("max_sleep_avg", 500)
    branch.renice(1, 19)
    branch.run(seconds=1)
    assert sim.params["max_sleep_avg"] == 10000 and sim.task(1).nice == 0
    assert sim.now_ns == 1_000_000_000


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_a_damaged_snapshot_is_refused_with_a_clear_error(damage):
    sim = busy_machine("houston-2003")
    sim.run(seconds=0.5)
    raw = bytearray(sim._core.snapshot())
    if damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "flip":
        # a task's run-list link far out of range
        raw[len(raw) // 2: len(raw) // 2 + 64] = b"\x7f" * 64
    else:
        raw = bytearray(b"not a snapshot at all")
    with pytest.raises(ValueError, match="snapshot"):
        ps.simulator._core.Sim.restore(bytes(raw))
