"""The engine's fast paths -- the wide scans over the CPUs, batched and
deferred ticks, the timer wheel (docs/internals/performance.md, "Fast paths
and the reference path") -- give the results of the reference path they
stand in for: the golden catalogue, the run-cuts workloads and the API
state machine agree with every fast path off (reference=True) and with each
off in turn.  Every comparison also checks, by the core's counts of what
each fast path did, that the paths switched off were not taken and that
those kept were, so that none passes by comparing a run with itself."""
import collections
import functools
import json
import pickle
import random

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

import golden
from cuts import four_ways as cuts_four_ways, watched as cuts_watched
import pysched as ps
import test_run_cuts as cuts
import test_state_machine as machine
from pysched.simulator import FAST_PATHS

# reference=True, and each fast path off in turn
MODES = {"reference": {"reference": True},
         **{f"no-{p}": {"fast_paths": tuple(q for q in FAST_PATHS if q != p)} for p in FAST_PATHS}}
CUT_CASES = 60


@pytest.fixture(autouse=True)
def fast_by_default(monkeypatch):
    """Every fast path on unless a test says otherwise, whatever the
    environment's default (PYSCHED_REFERENCE)."""
    monkeypatch.delenv("PYSCHED_REFERENCE", raising=False)


def kept(mode):
    return set(ps.Simulator("linux-2.5.65", **MODES[mode]).fast_paths)


@functools.cache
def wide_scans_here():
    """Whether this processor has a wide form of the scans (AVX2 or
    AVX-512), which the engine takes from 16 CPUs on."""
    sim = ps.Simulator("linux-2.5.65", cpus=16)
    sim.run(ticks=2)
    return sim._core.fast_path_counts()["scan"] > 0


def paths_taken(counts, mode):
    """The counts say that the paths of `mode` switched off were not taken,
    and those it keeps were (the scans only where the processor has a wide
    form)."""
    on = kept(mode)
    assert {p for p in FAST_PATHS if counts[p]} <= on, counts
    expected = on - ({"scan"} if not wide_scans_here() else set())
    assert {p for p in FAST_PATHS if counts[p]} == expected, counts


@pytest.mark.parametrize("mode", MODES)
def test_the_golden_catalogue_is_the_same_with_fast_paths_off(mode):
    expected = json.loads(golden.PATH.read_text())
    taken = collections.Counter()
    changed = {}
    for name, preset, cpus, workload, record in golden.cases():
        counts = {}
        got = golden.outputs(preset, cpus, workload, record, counts=counts, **MODES[mode])
        taken.update(counts)
        if got != expected[name]:
            changed[name] = sorted(k for k in got if got[k] != expected[name].get(k))
    assert not changed, f"{mode} changes the outputs of {changed}"
    paths_taken(taken, mode)


def test_the_golden_catalogue_takes_every_fast_path():
    """The catalogue the reference runs are compared with (golden.json, made
    with every fast path on) exercises each of them."""
    taken = collections.Counter()
    for name, preset, cpus, workload, record in golden.cases():
        counts = {}
        golden.outputs(preset, cpus, workload, record, counts=counts)
        taken.update(counts)
    assert {p for p in FAST_PATHS if taken[p]} == set(FAST_PATHS) - (
        set() if wide_scans_here() else {"scan"}), taken


def run_cut(seed, advance, **options):
    build, ticks, calls = cuts.case(seed, **options)
    sim, said = cuts.drive(build, ticks, calls, advance)
    return cuts.outputs(sim, said), sim._core.fast_path_counts()


@pytest.mark.parametrize("seed", range(CUT_CASES))
def test_a_run_cuts_workload_is_the_same_on_the_reference_path(seed):
    fast, _ = run_cut(seed, cuts.whole)
    reference, counts = run_cut(seed, cuts.chunked(random.Random(seed)), reference=True)
    assert fast == reference, f"seed {seed}: the reference run differs in " \
                              f"{cuts.first_difference(fast, reference)}"
    assert not any(counts.values()), counts


def test_the_run_cuts_workloads_take_the_fast_paths():
    taken = collections.Counter()
    for seed in range(CUT_CASES):
        taken.update(run_cut(seed, cuts.whole)[1])
    # 1 to 8 CPUs: the scans stay scalar
    assert {p for p in FAST_PATHS if taken[p]} == {"batch", "defer", "wheel", "skip"}, taken


class ReferenceTwins(machine.Machine):
    """The API state machine (test_state_machine.py) with a twin that runs
    without some fast paths, or all, from the start: every call goes to both,
    and the invariant compares them after each, as it does copies and
    pickles.  16 and 64 CPUs too, where the scans are wide."""

    @initialize(preset=st.sampled_from(ps.presets() + [ps.policy.examples.RoundRobin]),
                cpus=st.sampled_from([1, 2, 3, 8, 16, 64]), seed=st.integers(0, 2**32),
                mode=st.sampled_from(sorted(MODES)))
    def build(self, preset, cpus, seed, mode):
        super().build(preset, cpus, seed)
        self.sims.append(ps.Simulator(preset, cpus=cpus, seed=seed, debug=True, record="events",
                                      max_trace_bytes=1 << 22, on_full="overwrite",
                                      **MODES[mode]))
        self.kept = self.sims[1].fast_paths

    @rule(how=st.sampled_from(["copy", "pickle"]), which=st.sampled_from([0, 1]))
    def branch(self, how, which):
        if len(self.sims) < 5:
            orig = self.sims[which]
            twin = orig.copy() if how == "copy" else pickle.loads(pickle.dumps(orig))
            assert twin.fast_paths == orig.fast_paths
            assert twin._core.fast_path_counts() == orig._core.fast_path_counts()
            self.sims.append(twin)

    @invariant()
    def the_paths_off_are_not_taken(self):
        for sim in self.sims:
            counts = sim._core.fast_path_counts()
            assert all(counts[p] == 0 for p in FAST_PATHS if p not in sim.fast_paths), counts


ReferenceTwins.TestCase.settings = settings(
    max_examples=machine.EXAMPLES, stateful_step_count=20, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])
TestReferenceTwins = ReferenceTwins.TestCase


def test_the_fast_paths_are_chosen_checked_and_kept_by_copies_and_pickles(monkeypatch):
    assert ps.Simulator("linux-2.5.65").fast_paths == FAST_PATHS
    assert ps.Simulator("linux-2.5.65", reference=True).fast_paths == ()
    assert ps.Simulator("linux-2.5.65", fast_paths=["wheel", "scan"]).fast_paths == ("scan", "wheel")
    monkeypatch.setenv("PYSCHED_REFERENCE", "1")
    sim = ps.Simulator("linux-2.5.65", cpus=2)
    assert sim.fast_paths == ()
    # an explicit choice wins over the environment's default
    assert ps.Simulator("linux-2.5.65", reference=False).fast_paths == FAST_PATHS
    assert ps.Simulator("linux-2.5.65", fast_paths=["defer"]).fast_paths == ("defer",)
    monkeypatch.setenv("PYSCHED_REFERENCE", "0")
    assert ps.Simulator("linux-2.5.65").fast_paths == FAST_PATHS
    sim.spawn(ps.programs.cpu_hog())
    sim.spawn(ps.programs.interactive(1, 10))
    sim.run(seconds=0.5)
    for twin in (sim.copy(), pickle.loads(pickle.dumps(sim))):
        assert twin.fast_paths == ()
        twin.run(seconds=0.5)
        assert not any(twin._core.fast_path_counts().values())
    with pytest.raises(ValueError, match="before the first spawn"):
        sim._core.set_fast_paths(15)


@pytest.mark.parametrize("kw, error, match", [
    ({"reference": 1}, TypeError, "reference must be a bool, not int"),
    ({"reference": "yes"}, TypeError, "reference must be a bool, not str"),
    ({"fast_paths": "scan"}, TypeError, "fast_paths must be a collection of names"),
    ({"fast_paths": 3}, TypeError, "fast_paths must be a collection of names"),
    ({"fast_paths": ["sacn"]}, ValueError, "'sacn' is not one of .*did you mean 'scan'"),
    ({"fast_paths": [1]}, ValueError, "1 is not one of"),
    ({"reference": True, "fast_paths": ["wheel"]}, ValueError, r"keeps some"),
])
def test_a_bad_choice_of_fast_paths_is_refused_naming_it(kw, error, match):
    with pytest.raises(error, match=match):
        ps.Simulator("linux-2.5.65", **kw)


@pytest.mark.parametrize("mask", [-1, 32, 2**40])
def test_the_core_refuses_a_mask_of_no_fast_paths(mask):
    sim = ps.Simulator("linux-2.5.65")
    with pytest.raises((ValueError, OverflowError)):
        sim._core.set_fast_paths(mask)
    assert sim.fast_paths == FAST_PATHS


@pytest.mark.parametrize("preset", ["linux-2.5.65", "houston-2003", "linux-6.5-cfs",
                                    "linux-6.12-eevdf"])
def test_the_balancers_skips_on_a_mostly_idle_machine_change_nothing(preset):
    """16 CPUs, two hogs and three sleepers: the balancers' scans find no
    runqueue with two tasks and are skipped (2.5's periodic and newly idle
    scans, the fair balancer's); then four hogs forked onto CPU 0 make one,
    and the scans must run and spread them.  Every event is as on the
    reference path, and the run was checked after every instant."""
    def run(**options):
        sim = ps.Simulator(preset, cpus=16, seed=5, record="events", debug=True, **options)
        for _ in range(2):
            sim.spawn(ps.programs.cpu_hog())
        for _ in range(3):
            sim.spawn(ps.programs.interactive(1, 4))
        sim.run(0.2)
        skipped_idle = sim._core.fast_path_counts()["skip"]
        for _ in range(4):
            sim.spawn(ps.programs.cpu_hog(), cpu=0)
        sim.run(0.3)
        return sim, skipped_idle

    fast, skipped_idle = run()
    reference, _ = run(reference=True)
    assert skipped_idle > 0
    assert (fast.stats() == reference.stats()).all()
    assert (fast.cpu_stats() == reference.cpu_stats()).all()
    assert (fast.events() == reference.events()).all()
    # the balancer did spread the forked hogs while skipping where it could
    st = fast.stats()
    assert len(set(st["cpu"][-4:])) > 1
    assert st["nr_migrations"].sum() > 0


@pytest.mark.parametrize("preset", ["linux-2.5.65", "houston-2003", "linux-6.5-cfs",
                                    "linux-6.12-eevdf"])
def test_the_balancers_skips_give_the_same_run_however_it_is_cut(preset):
    """The skips' counts of crowded runqueues follow forks, exits and pulls:
    on 16 CPUs four hogs start crowded on CPU 0, and a task forks a child
    that exits every 22 ms; whole, in chunks, stepped and on the reference
    path, the runs agree, and the fast ones skipped scans."""
    def build(**kw):
        sim = ps.Simulator(preset, cpus=16, seed=7, debug=True, **kw)
        for _ in range(4):
            sim.spawn(ps.programs.cpu_hog(), cpu=0)
        for _ in range(3):
            sim.spawn(ps.programs.interactive(1, 4))
        child = ps.Program().run(ms=1).exit()
        sim.spawn(ps.Program().loop().run(ms=2).fork(child).sleep(ms=20).end())
        return sim

    runs = cuts_four_ways(build, 0.5)
    expected = cuts_watched(runs[0])
    for other in runs[1:]:
        assert cuts_watched(other) == expected
    assert all(r._core.fast_path_counts()["skip"] > 0 for r in runs[:3])
    assert runs[0].counters()["exits"] > 10
    assert len(set(runs[0].stats()["cpu"][:4])) == 4
