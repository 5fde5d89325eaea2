"""A conformance check over every registered preset: same seed, same trace;
the invariants hold after every instant of a workload that exercises every
op and syscall; copy and pickle branch a run exactly."""
import pickle
import re

import numpy as np
import pytest

import pysched as ps
from pysched.policy.examples import RoundRobin
from pysched.policy.testing import busy_machine, check_policy

PRESETS = ps.presets()


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


# ---- the kit users run on their own policies (pysched.policy.testing) ----

@pytest.mark.parametrize("policy", PRESETS + [RoundRobin], ids=PRESETS + ["python round robin"])
def test_every_policy_of_the_project_passes_the_conformance_kit(policy):
    report = check_policy(policy, seconds=1.0)
    assert report, str(report)
    assert len(report.results) == 12


class Unfair(RoundRobin):
    """Never picks pid 2."""
    name = "unfair"

    def pick_next(self, cpu):
        q = [p for p in self.queue[cpu] if p != 2]
        return q[0] if q else None


class Forgetful(RoundRobin):
    """Its queues are class attributes: a copy shares them with its original."""
    name = "forgetful"
    shared = None

    def setup(self):
        Forgetful.shared = [[] for _ in range(self.cpus)]

    @property
    def queue(self):
        return Forgetful.shared


class Capricious(RoundRobin):
    """Rotates its queue at random, from a generator it does not own."""
    name = "capricious"
    import random as _random
    rng = _random.Random()

    def tick(self, cpu, p):
        super().tick(cpu, p)
        q = self.queue[cpu]
        if len(q) > 1 and self.rng.random() < 0.1:
            q.append(q.pop(0))
            self.resched(cpu)


class Lax(RoundRobin):
    """Its check finds what it should not."""
    name = "lax"

    def check(self):
        assert self.jiffies < 100, "jiffies reached 100"


@pytest.mark.parametrize("policy,check,message", [
    (Unfair, "progress", r"tasks never ran though runnable: pids \[2\]"),
    # caught by the adapter, or first by the policy's own check with PYSCHED_DEBUG=1
    (Forgetful, "copy", r"not runnable on cpu 0 \(not queued\)|queued on cpu 0 but not runnable"),
    (Capricious, "determinism", "the same seed gave two different event logs"),
    (Lax, "invariants", "policy check: AssertionError: jiffies reached 100"),
], ids=["starvation", "shared state", "own randomness", "broken invariant"])
def test_the_kit_reports_what_a_broken_policy_does_wrong(policy, check, message):
    report = check_policy(policy, cpus=(1,), seconds=1.0, checks=[check])
    assert not report
    assert re.search(message, report.failures[0].error)
    assert f"{check} (1 CPU): " in str(report)


def test_the_kit_names_its_checks():
    with pytest.raises(KeyError, match="unknown checks \\['speed'\\]"):
        check_policy(RoundRobin, checks=["speed"])
