"""Several CPUs: per-CPU runqueues and the 2.5 load balancer (fact sheet
§5.10, §7), for every policy of the O(1) family, which shares it."""
import importlib.util
import pickle

import numpy as np
import pytest

import pysched as ps

KIND = {k: i for i, k in enumerate(ps.EVENT_KINDS)}
MS = 1_000_000
# the presets whose policy runs the 2.5 balancer (balance_o1.c)
PRESETS = [p for p in ps.presets() if ps.policy_info(p)["policy"] in ("o1", "houston")]


def hogs(sim, n, **kw):
    return [sim.spawn(ps.programs.cpu_hog(), **kw) for _ in range(n)]


@pytest.mark.parametrize("preset", PRESETS)
def test_four_hogs_on_two_cpus_get_half_a_cpu_each(preset):
    sim = ps.Simulator(preset, cpus=2)
    pids = hogs(sim, 4, cpu=0)  # all start on CPU 0: the balancer spreads them
    sim.run(seconds=20)
    for p in pids:
        assert sim.task(p).cpu_ns / 20e9 == pytest.approx(0.5, abs=0.02)


@pytest.mark.parametrize("preset", PRESETS)
def test_two_hogs_on_four_cpus_never_share_a_cpu_after_the_first_balance(preset):
    sim = ps.Simulator(preset, cpus=4, record="events")
    a, b = hogs(sim, 2, cpu=0)
    sim.run(seconds=10)
    ev = sim.events()
    mig = ev[ev["kind"] == KIND["migrate"]]
    assert len(mig) == 1  # the first balance, and never again
    sw = ev[(ev["kind"] == KIND["switch"]) & (ev["time_ns"] > mig["time_ns"][0])]
    # after it, no CPU ever switches between the two
    assert not np.any(np.isin(sw["pid"], [a, b]) & np.isin(sw["other"], [a, b]))
    assert sim.task(a).cpu != sim.task(b).cpu
    assert sim.task(a).cpu_ns + sim.task(b).cpu_ns > 19.9e9 - mig["time_ns"][0]


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("cpus", [3, 64])
def test_of_two_equally_busiest_cpus_an_idle_cpu_pulls_from_the_lower_numbered(preset, cpus):
    # find_busiest_queue keeps a CPU only when its load beats the greatest so
    # far (`if (load > max_load)`), so of equal loads the first CPU scanned wins
    sim = ps.Simulator(preset, cpus=cpus, record="events")
    first = hogs(sim, 3, cpu=1, cpus_allowed=[0, 1])
    last = cpus - 1
    hogs(sim, 3, cpu=last, cpus_allowed=[0, last])
    sim.run(ticks=20)
    ev = sim.events()
    mig = ev[ev["kind"] == KIND["migrate"]]
    assert len(mig) >= 1
    assert mig["cpu"][0] == 0 and mig["pid"][0] in first


@pytest.mark.parametrize("preset", PRESETS)
def test_an_idle_cpu_pulls_a_waiting_task_within_one_tick_of_becoming_idle(preset):
    sim = ps.Simulator(preset, cpus=2, record="events",
                       params={"busy_rebalance_ticks": 1_000_000})
    waiting = hogs(sim, 2, cpu=0)
    # CPU 1's only task computes 50.5 ms, then sleeps for good
    s = sim.spawn(ps.Program().run(us=50_500).sleep(s=100), cpu=1)
    # keep the idle balancer of CPU 1 from acting before: pin the hogs first
    for p in waiting:
        sim.set_affinity(p, [0])
    sim.run(seconds=0.03)
    for p in waiting:
        sim.set_affinity(p, [0, 1])
    sim.run(seconds=0.2)
    ev = sim.events()
    idle_at = ev[(ev["kind"] == KIND["switch"]) & (ev["other"] == s)]["time_ns"][0]
    assert idle_at == 50_500_000
    pull = ev[(ev["kind"] == KIND["migrate"]) & (ev["cpu"] == 1)]
    assert len(pull) >= 1 and pull["pid"][0] in waiting
    assert 0 <= pull["time_ns"][0] - idle_at <= MS


def test_three_hogs_on_two_cpus_two_share_one_cpu_and_the_third_keeps_the_other():
    # the known 2.5 behaviour: 2 against 1 is an imbalance of (2-1)/2 = 0
    # tasks, below the ~25 % threshold, so the balancer never moves anything
    sim = ps.Simulator("linux-2.5.65", cpus=2, record="events")
    pids = hogs(sim, 3, cpu=0)
    sim.run(seconds=60)
    s = sorted(sim.task(p).cpu_ns / 60e9 for p in pids)
    assert s[0] == pytest.approx(0.5, abs=0.01) and s[1] == pytest.approx(0.5, abs=0.01)
    assert s[2] == pytest.approx(1.0, abs=0.01)
    ev = sim.events()
    assert np.sum(ev["kind"] == KIND["migrate"]) == 1  # the first pull only


def test_load_balance_takes_the_expired_array_first_best_prio_from_the_tail():
    sim = ps.Simulator("linux-2.5.65", cpus=2, record="events")
    a, b, c = hogs(sim, 3, cpu=0)
    for p in (a, b, c):
        sim.set_affinity(p, [0])
    sim.run(ticks=103)  # A expired into the expired array after 102 ticks
    assert ("expired", 125, a) in sim.queue(0)
    for p in (a, b, c):
        sim.set_affinity(p, [0, 1])
    sim.run(ticks=3)
    ev = sim.events()
    mig = ev[ev["kind"] == KIND["migrate"]]
    assert mig["pid"][0] == a  # from expired, although B and C wait in active

    sim = ps.Simulator("linux-2.5.65", cpus=2, record="events")
    a, b, c = hogs(sim, 3, cpu=0)
    sim.run(ticks=5)
    ev = sim.events()
    mig = ev[ev["kind"] == KIND["migrate"]]
    # nothing expired: the active list of prio 125 from its tail (C)
    assert mig["pid"][0] == c


def test_cache_hot_tasks_stay_put():
    sim = ps.Simulator("linux-2.5.65", cpus=2, record="events",
                       params={"cache_decay_ticks": 50})
    hogs(sim, 3, cpu=0)
    sim.run(ticks=40)
    ev = sim.events()
    assert np.sum(ev["kind"] == KIND["migrate"]) == 0
    sim.run(ticks=40)
    ev = sim.events()
    mig = ev[ev["kind"] == KIND["migrate"]]
    assert len(mig) == 1 and mig["time_ns"][0] > 50 * MS


@pytest.mark.parametrize("preset", PRESETS)
def test_affinity_is_never_violated(preset):
    rng = np.random.default_rng(3)
    sim = ps.Simulator(preset, cpus=4, seed=3, debug=True)
    pids = hogs(sim, 6) + [sim.spawn(ps.programs.interactive(2, 7)) for _ in range(4)]
    for _ in range(40):
        p = int(rng.choice(pids))
        cpus = sorted(set(rng.integers(0, 4, size=rng.integers(1, 4)).tolist()))
        sim.set_affinity(p, cpus)
        sim.run(seconds=0.05)
        sim.check()
        for q in pids:
            t = sim.task(q)
            assert t.cpus_allowed >> t.cpu & 1 or t.state != "running"


def test_a_running_task_leaves_a_cpu_it_may_no_longer_use():
    sim = ps.Simulator("linux-2.5.65", cpus=2, record="events")
    t = sim.spawn(ps.programs.cpu_hog(), cpu=0)
    sim.run(seconds=0.01)
    sim.set_affinity(t, [1])
    sim.run(ticks=0)
    assert sim.task(t).cpu == 1
    assert sim.runqueue(1)["curr"] == t and sim.runqueue(0)["curr"] == 0
    assert sim.task(t).nr_migrations == 1


@pytest.mark.parametrize("preset", PRESETS)
def test_same_seed_same_trace_on_smp(preset):
    def run(seed):
        sim = ps.Simulator(preset, cpus=3, seed=seed, record="events")
        for k in range(5):
            sim.spawn(ps.Program().loop().run(ms=ps.exponential(20)).sleep(ms=ps.uniform(1, 30))
                      .end())
        sim.spawn(ps.programs.kernel_compile(jobs=3))
        sim.run(seconds=5)
        return sim.events().tobytes()
    assert run(5) == run(5)
    assert run(5) != run(6)


def wake_across_cpus(sync):
    sim = ps.Simulator("linux-2.5.65", cpus=2, record="events")
    w = sim.spawn(ps.Program().wait("ch").run(ms=1).sleep(s=100), cpu=1)
    sim.run(seconds=0.001)
    sim.spawn(ps.Program().run(ms=5).post("ch", sync=sync).run(s=100), cpu=0)
    sim.run(seconds=0.0061)
    ev = sim.events()
    wake = ev[(ev["kind"] == KIND["wakeup"]) & (ev["pid"] == w)]
    return w, wake, ev[ev["kind"] == KIND["migrate"]]


def test_a_sync_wakeup_pulls_the_wakee_to_the_wakers_cpu():
    w, wake, mig = wake_across_cpus(sync=True)
    assert len(wake) == 1 and wake["cpu"][0] == 0
    assert len(mig) == 1 and (mig["pid"][0], mig["cpu"][0], mig["other"][0]) == (w, 0, 1)


def test_a_normal_wakeup_stays_on_the_previous_cpu():
    w, wake, mig = wake_across_cpus(sync=False)
    assert len(wake) == 1 and wake["cpu"][0] == 1
    assert len(mig) == 0


def test_houston_can_balance_on_prio_avg():
    sim = ps.Simulator("houston-2003", cpus=2, params={"balance_prio_avg": 1})
    pids = hogs(sim, 4, cpu=0)
    sim.run(seconds=20)
    assert sorted(sim.task(p).cpu for p in pids) == [0, 0, 1, 1]
    assert sim.runqueue(1)["prio_avg"] > 0


@pytest.mark.parametrize("nices", [[-5, -5, 0, 0, 0, 5, 10, 19], [0, 0, 0, 0, 10, 10, 10, 10]])
def test_balancing_on_prio_avg_brings_mixed_nices_closer_to_the_machine_equilibrium(nices):
    eq = ps.analysis.houston_equilibrium(nices, cpus=2).shares
    err = {}
    for flag in (0, 1):
        sim = ps.Simulator("houston-2003", cpus=2, params={"balance_prio_avg": flag})
        pids = hogs_with(sim, nices)
        sim.run(seconds=60)
        c0 = [sim.task(p).cpu_ns for p in pids]
        sim.run(seconds=60)
        s = np.array([(sim.task(p).cpu_ns - c) / 60e9 for p, c in zip(pids, c0)])
        err[flag] = np.abs(s - eq).max()
    # length balancing puts as many tasks on each CPU whatever their nice
    assert err[1] < 0.05 < err[0]


def hogs_with(sim, nices):
    return [sim.spawn(ps.programs.cpu_hog(), nice=n, cpu=0) for n in nices]


def test_staggered_ticks_fall_between_cpu0s():
    sim = ps.Simulator("linux-2.5.65", cpus=4, stagger_ticks=True, record="events")
    hogs(sim, 8)
    sim.run(seconds=2)
    ev = sim.events()
    exp = ev[ev["kind"] == KIND["expire"]]
    # CPU i ticks i/4 of a tick after CPU 0, so its expiries fall there
    for cpu in range(4):
        offsets = set((exp[exp["cpu"] == cpu]["time_ns"] % MS).tolist())
        assert offsets == {cpu * MS // 4}
    aligned = ps.Simulator("linux-2.5.65", cpus=4, record="events")
    hogs(aligned, 8)
    aligned.run(seconds=2)
    ev = aligned.events()
    assert set((ev[ev["kind"] == KIND["expire"]]["time_ns"] % MS).tolist()) == {0}


PER_TASK = ("cpu_ns", "wait_ns", "sleep_ns", "cpu_ticks", "nvcsw", "nivcsw", "nr_wakeups",
            "lat_count", "lat_sum_ns", "lat_max_ns", "prio", "time_slice")


@pytest.mark.parametrize("cpus", [2, 15, 16, 17, 19, 31, 33, 63, 64])
def test_a_workload_runs_the_same_on_the_last_cpu_as_on_the_first(cpus):
    """Each instant finds the CPUs with a tick or a burst's end due by
    scanning them all (four at a time from 16 CPUs where the processor has
    AVX2, the remainder one by one): wherever a CPU falls in that scan, its
    ticks and its bursts' ends come on time.  (Not with staggered ticks,
    where each CPU's ticks fall at another point of the jiffy.)"""
    def run(cpu):
        sim = ps.Simulator("linux-2.5.65", cpus=cpus, debug=True)
        sim.spawn(ps.programs.cpu_hog(), nice=10, cpu=cpu, cpus_allowed=[cpu])
        for i in range(3):
            prog = ps.Program().loop().run(ms=0.3 + 0.2 * i).sleep(ms=ps.uniform(1, 7)).end()
            sim.spawn(prog, cpu=cpu, cpus_allowed=[cpu])
        sim.run(ticks=3000)
        st = sim.stats()
        return st[list(PER_TASK)], sim.cpu_stats()[cpu]
    (first, cpu_first), (last, cpu_last) = run(0), run(cpus - 1)
    assert first["nr_wakeups"].sum() > 1000
    np.testing.assert_array_equal(first, last)
    for f in ("busy_ticks", "nr_switches", "busy_ns"):
        assert cpu_first[f] == cpu_last[f]


@pytest.mark.parametrize("preset", ["linux-2.5.65", "houston-2003"])
def test_sixty_four_cpus_spread_a_hundred_and_twenty_eight_hogs(preset):
    sim = ps.Simulator(preset, cpus=64, debug=True)
    pids = hogs(sim, 128, cpu=0)
    sim.run(seconds=3)
    st = sim.cpu_stats()
    assert np.all(st["nr_running"] == 2)
    sim.run(seconds=10)
    shares = np.array([sim.task(p).cpu_ns for p in pids]) / 13e9
    # every CPU busy nearly all along, and nobody starved while spreading
    assert shares.sum() == pytest.approx(64, rel=0.05) and shares.min() > 0.3


SEEN_MASKS = {}


class WatchesMasks(ps.policy.examples.RoundRobin):
    """A round robin that notes the cpus_allowed its task views show."""
    name = "rr-watches-masks"

    def tick(self, cpu, p):
        if not p.is_idle:
            SEEN_MASKS[p.pid] = p.cpus_allowed
        super().tick(cpu, p)


def test_the_affinity_mask_of_sixty_four_cpus_reads_unsigned_on_every_path():
    """CPU 63's bit is the sign bit of an int64: every path reads the mask
    as the uint64 it is -- stats(), task(), series(), the frames, a copy,
    a pickle and a Python policy's view of the task."""
    everywhere, ends = 2**64 - 1, 1 + 2**63
    SEEN_MASKS.clear()
    for preset in ("linux-2.5.65", WatchesMasks):
        sim = ps.Simulator(preset, cpus=64, record="series", series_fields=["cpus_allowed"])
        a = sim.spawn(ps.programs.cpu_hog())
        b = sim.spawn(ps.programs.cpu_hog(), cpus_allowed=[0, 63])
        sim.run(seconds=0.05)
        st = sim.stats()
        assert st.dtype["cpus_allowed"] == np.uint64
        assert st["cpus_allowed"].tolist() == [everywhere, ends]
        assert (sim.task(a).cpus_allowed, sim.task(b).cpus_allowed) == (everywhere, ends)
        assert sim.task(b).cpus_allowed >> 63 & 1 and (sim.task(a).cpus_allowed).bit_count() == 64
        assert sim.series("cpus_allowed")[-1].tolist() == [float(everywhere), float(ends)]
        for twin in (sim.copy(), pickle.loads(pickle.dumps(sim))):
            assert twin.stats().dtype == st.dtype and twin.stats().tobytes() == st.tobytes()
            assert twin.task(a).cpus_allowed == everywhere
        sim.set_affinity(b, [63])
        assert sim.stats()["cpus_allowed"].tolist() == [everywhere, 2**63]
        if importlib.util.find_spec("pandas"):
            frame = sim.stats_frame()
            assert str(frame["cpus_allowed"].dtype) == "uint64"
            assert frame["cpus_allowed"].tolist() == [everywhere, 2**63]
    assert SEEN_MASKS == {a: everywhere, b: ends}
    assert ps.policy_info("linux-2.5.65")["unsigned_fields"] == ["cpus_allowed"]


@pytest.mark.parametrize("preset", ["linux-2.5.64", "linux-2.5.65", "houston-2003"])
def test_a_cpu_remembering_more_load_than_the_busiest_filtered_load_pulls_nothing(preset):
    # find_busiest_queue computes the imbalance in int (2.5.64 kernel/sched.c:
    # `int nr_running, load, max_load` and `int *imbalance`): CPU 0 remembers
    # 3 runnable, CPU 1 filters to min(5 now, 2 remembered) = 2, so the
    # imbalance is (2 - 3) / 2 = 0, below the 25 % threshold: no pull.
    sim = ps.Simulator(preset, cpus=2)
    hogs(sim, 3, cpu=0)
    hogs(sim, 2, cpu=1)
    sim.run(ticks=300)  # the busy balance at jiffy 200 remembers {3, 2}
    assert [sim.runqueue(c)["nr_running"] for c in (0, 1)] == [3, 2]
    hogs(sim, 3, cpu=1)
    sim.run(ticks=101)  # past the busy balance at jiffy 400
    assert [sim.runqueue(c)["nr_running"] for c in (0, 1)] == [3, 5]
    assert sim.runqueue(0)["nr_balance_pulls"] == 0
