"""Batched ticks: a stretch of ticks in which nothing else falls due on any
CPU may be applied at once by the policy (hooks.tick_batch).  The claim: a
run that batches is, tick for tick, the run that does not.  Stepping one
tick at a time never batches (a batch needs two ticks), so each run below
is compared with itself stepped tick by tick."""
import numpy as np
import pytest

import pysched as ps
from pysched import Program

PRESETS = [p for p in ps.presets() if not p.startswith("py-")]


def hogs_and_sleepers(sim):
    """Long CPU stretches (where batches happen), broken by sleepers, a
    periodic device and a real-time task that runs now and then."""
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.spawn(ps.programs.cpu_hog(), name="hog+5", nice=5)
    sim.spawn(ps.programs.cpu_hog(), name="hog-20", nice=-20)
    sim.spawn(Program().loop().run(ms=ps.uniform(0.5, 3)).sleep(ms=ps.exponential(60)).end(),
              name="sleeper")
    sim.spawn(Program().loop().wait("dev").run(us=400).end(), name="driver")
    sim.source("dev", every_ms=37)
    sim.spawn(Program().loop().sleep(ms=90).run(ms=2).end(), name="rt", policy="fifo",
              rt_priority=10)


def build(preset, record, **kw):
    sim = ps.Simulator(preset, seed=5, record=record, **kw)
    hogs_and_sleepers(sim)
    return sim


def same(a, b):
    return a.dtype == b.dtype and len(a) == len(b) and all(
        np.array_equal(a[f], b[f]) for f in a.dtype.names)


@pytest.mark.parametrize("cpus, stagger", [(1, False), (2, False), (4, False), (2, True)])
@pytest.mark.parametrize("preset", PRESETS)
def test_a_run_in_one_call_equals_the_run_stepped_tick_by_tick(preset, cpus, stagger):
    ticks = 1500
    whole = build(preset, "events", cpus=cpus, stagger_ticks=stagger)
    whole.run(ticks=ticks)
    stepped = build(preset, "events", cpus=cpus, stagger_ticks=stagger)
    for _ in range(ticks):
        stepped.step(ticks=1)
    assert whole.now_ns == stepped.now_ns and whole.jiffies == stepped.jiffies == ticks
    assert same(whole.stats(), stepped.stats())
    assert whole.counters() == stepped.counters()
    assert same(whole.events(), stepped.events())
    assert same(whole.latencies(), stepped.latencies())


@pytest.mark.parametrize("cpus", [1, 3])
@pytest.mark.parametrize("every", [1, 7, 250])
def test_series_samples_fall_on_the_same_ticks_whether_ticks_are_batched_or_not(every, cpus):
    ticks = 1200
    whole = build("linux-2.5.65", "series", series_every=every, cpus=cpus)
    whole.run(ticks=ticks)
    stepped = build("linux-2.5.65", "series", series_every=every, cpus=cpus)
    for _ in range(ticks):
        stepped.step(ticks=1)
    assert np.array_equal(whole.series_times(), stepped.series_times())
    assert len(whole.series_times()) == ticks // every
    for field in ["prio", "time_slice", "sleep_avg", "state"]:
        assert np.array_equal(whole.series(field), stepped.series(field), equal_nan=True)


def test_a_hog_alone_is_charged_every_tick_of_a_batched_stretch():
    """2.5.65's nice-0 slice is 102 ticks: a lone hog runs 10 s of whole
    slices, each mostly one batch, and is charged every tick of them; its
    sleep_avg, set high at spawn, drains one unit per tick as the kernel's
    scheduler_tick drains it."""
    sim = ps.Simulator("linux-2.5.65", seed=0)
    hog = sim.spawn(ps.programs.cpu_hog(), init={"sleep_avg": 700})
    sim.run(seconds=10)
    row = sim.stats()[0]
    assert row["cpu_ticks"] == sim.jiffies == 10_000
    assert sim.task(hog).sleep_avg == 0
    sim2 = ps.Simulator("linux-2.5.65", seed=0)
    hog2 = sim2.spawn(ps.programs.cpu_hog(), init={"sleep_avg": 700})
    sim2.run(ticks=300)
    assert sim2.task(hog2).sleep_avg == 400


@pytest.mark.parametrize("preset", ["linux-2.5.65", "houston-2003"])
def test_hogs_on_every_cpu_are_balanced_at_the_same_ticks_when_batched(preset):
    """Eight hogs put on CPU 0 of 4: the busy CPUs' balancing ticks fall
    inside what would be batches, so a batch must stop short of them."""
    def hogs():
        sim = ps.Simulator(preset, cpus=4, seed=1, record="events")
        for i in range(8):
            sim.spawn(ps.programs.cpu_hog(), name=f"hog{i}", nice=i % 3, cpu=0)
        return sim
    whole, stepped = hogs(), hogs()
    whole.run(ticks=3000)
    for _ in range(3000):
        stepped.step(ticks=1)
    migrations = whole.events()["kind"] == ps.EVENT_KINDS.index("migrate")
    assert migrations.sum() >= 6                    # the balancer moved hogs off CPU 0
    assert same(whole.events(), stepped.events())
    assert same(whole.stats(), stepped.stats())


@pytest.mark.parametrize("preset", ["linux-6.5-cfs", "linux-6.12-eevdf"])
def test_a_fair_task_alone_on_each_cpu_is_batched_and_balanced_at_the_same_ticks(preset):
    """CFS and EEVDF batch the ticks of a task alone on its CPU (nothing
    its update_curr does can reschedule): one hog a CPU of 4 at nice -5..5,
    and a sleeper that now and then makes two on one, against the same run
    stepped tick by tick; the batches stop short of each periodic balance."""
    def machine():
        sim = ps.Simulator(preset, cpus=4, seed=2, record="events")
        for i in range(4):
            sim.spawn(ps.programs.cpu_hog(), name=f"hog{i}", nice=3 * i - 5, cpu=i)
        sim.spawn(Program().loop().sleep(ms=ps.exponential(200)).run(ms=3).end(), name="s")
        return sim
    whole, stepped = machine(), machine()
    whole.run(ticks=3000)
    for _ in range(3000):
        stepped.step(ticks=1)
    assert whole._core.fast_path_counts()["batch"] > 4 * 1000
    assert same(whole.events(), stepped.events())
    assert same(whole.stats(), stepped.stats())
    # vruntimes, deadlines (the tasks' fields, in stats()) and min_vruntime
    assert "vruntime" in whole.stats().dtype.names
    assert [whole.runqueue(c) for c in range(4)] == [stepped.runqueue(c) for c in range(4)]


O1_PRESETS = [p for p in PRESETS if p.startswith("linux-2.5")]


@pytest.mark.parametrize("preset", O1_PRESETS)
@pytest.mark.parametrize("debug", [False, True])
def test_busy_cpus_defer_their_ticks_while_sleepers_wake_elsewhere(preset, debug):
    """A hog and ten sleepers pinned to each of 4 CPUs: some sleeper wakes
    at nearly every tick, so the CPUs never batch together; the 2.5 family
    lets each busy CPU defer its own ticks (psPolicy.tick_batch_local) and
    catch them up when a wakeup, a switch or its next tick comes, applying
    what its tick_batch said it could without asking again
    (PS_TICK_BATCH_TRUSTED) -- with debug checks, after asking again.  A
    run in chunks of a prime number of ticks, interleaved with reads from
    Python, and the run stepped tick by tick are the same run."""
    def build():
        sim = ps.Simulator(preset, cpus=4, seed=9, record="events", debug=debug)
        for c in range(4):
            sim.spawn(ps.programs.cpu_hog(), name=f"hog{c}", cpu=c, cpus_allowed=[c])
            for i in range(10):
                sim.spawn(Program().loop().run(ms=1).sleep(ms=ps.uniform(20, 60)).end(),
                          name=f"s{c}.{i}", cpu=c, cpus_allowed=[c])
        sim.spawn(Program().loop().run(ms=ps.uniform(1, 30)).sleep(ms=ps.uniform(1, 30)).end(),
                  name="roamer")
        return sim
    ticks = 2000
    chunked, stepped = build(), build()
    while chunked.jiffies < ticks:
        n = min(97, ticks - chunked.jiffies)
        chunked.run(ticks=n)
        for _ in range(n):
            stepped.step(ticks=1)
        assert same(chunked.stats(), stepped.stats())   # time_slice, sleep_avg, ticks ...
    wakeups = chunked.events()["kind"] == ps.EVENT_KINDS.index("wakeup")
    assert wakeups.sum() >= ticks / 4
    assert same(chunked.events(), stepped.events())
    assert same(chunked.stats(), stepped.stats())
    assert chunked.counters() == stepped.counters()
