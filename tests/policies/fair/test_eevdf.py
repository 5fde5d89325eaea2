"""EEVDF (linux-6.6-eevdf, linux-6.12-eevdf): weighted shares, eligibility
and virtual deadlines, lag kept across sleep with its clamp, placement of
new and woken tasks, per-task slices with PREEMPT_SHORT, DELAY_DEQUEUE.
Expected values come from the weight table of docs/schedulers/cfs.md §2 and the
kernel's formulas as tests/helpers/fair_model.py writes them, not from the
simulator."""
import numpy as np
import pytest

import pysched as ps
from pysched import Program, programs

from fair_model import calc_delta_fair, sysctl_factor, weight

EEVDF = ["linux-6.6-eevdf", "linux-6.12-eevdf"]


def shares(preset, nices, seconds=20, **kw):
    sim = ps.Simulator(preset, **kw)
    for n in nices:
        sim.spawn(programs.cpu_hog(), nice=n)
    sim.run(seconds=seconds)
    cpu = sim.stats()["cpu_ns"]
    return 100 * cpu / cpu.sum()


@pytest.mark.parametrize("preset", EEVDF)
@pytest.mark.parametrize("nices", [(0, 1), (0, 5), (-20, 19)])
def test_cpu_bound_tasks_share_the_cpu_by_weight(preset, nices):
    got = shares(preset, nices)
    total = sum(weight(n) for n in nices)
    want = [100 * weight(n) / total for n in nices]
    # 55.5/44.5, 75.4/24.6, 99.98/0.02 %
    assert got == pytest.approx(want, abs=1.0)


def test_the_expected_shares_are_the_ones_workloads_md_quotes():
    def pct(a, b):
        return round(100 * weight(a) / (weight(a) + weight(b)), 2)
    assert (pct(0, 1), pct(0, 5), pct(-20, 19)) == (55.53, 75.35, 99.98)


@pytest.mark.parametrize("preset", EEVDF)
def test_three_weights_share_by_weight_too(preset):
    got = shares(preset, (-5, 0, 7))
    total = weight(-5) + weight(0) + weight(7)
    assert got == pytest.approx([100 * weight(n) / total for n in (-5, 0, 7)], abs=1.0)


# ---- slices, deadlines and placement ----

def rq_avg_vruntime(sim, cpu=0):
    """avg_vruntime(cfs_rq) from the runqueue's sums and its running task,
    floored as the kernel divides (V of the queue)."""
    rq = sim.runqueue(cpu)
    avg, load, base = rq["avg_vruntime"], rq["avg_load"], rq["min_vruntime"]
    curr = rq["curr"]
    if curr and sim.task(curr).on_rq and sim.task(curr).policy == "normal":
        t = sim.task(curr)
        avg += (t.vruntime - base) * t.weight
        load += t.weight
    return base + (avg // load if load else 0)


@pytest.mark.parametrize("cpus,factor", [(1, 1), (2, 2), (4, 3), (8, 4), (16, 4)])
def test_the_base_slice_scales_with_the_log_of_the_cpu_count(cpus, factor):
    sim = ps.Simulator("linux-6.12-eevdf", cpus=cpus)
    pid = sim.spawn(programs.cpu_hog())
    # 0.75 ms x (1 + ilog2(min(ncpus, 8)))
    assert sysctl_factor(cpus) == factor
    assert sim.task(pid).slice == 750_000 * factor
    assert ps.formula("linux-6.12-eevdf", "sysctl_factor", cpus, 1) == factor


@pytest.mark.parametrize("preset,half", [("linux-6.12-eevdf", True), ("linux-6.6-eevdf", False)])
@pytest.mark.parametrize("nice", [0, 7])
def test_a_new_task_starts_at_V_with_half_a_slice_to_its_deadline_from_6_12(preset, half, nice):
    sim = ps.Simulator(preset)
    sim.spawn(programs.cpu_hog())
    sim.run(seconds=0.0105)
    pid = sim.spawn(programs.cpu_hog(), nice=nice)
    t = sim.task(pid)
    vslice = calc_delta_fair(750_000, nice)
    # PLACE_DEADLINE_INITIAL; 6.6 re-places the task without ENQUEUE_INITIAL
    assert t.deadline - t.vruntime == (vslice // 2 if half else vslice)
    # with no lag, at the queue's average (rounding: a nanosecond)
    assert abs(t.vruntime - rq_avg_vruntime(sim)) <= 1
    assert t.vlag == 0


def test_a_woken_task_keeps_the_lag_it_slept_with():
    """PLACE_LAG: the saved lag is scaled by (W + w_i) / W so that once the
    task has joined the average its lag is the saved one again; unscaled it
    would shrink to W / (W + w_i) of it (here 0.4).  Read tick by tick, so
    the sleeper wakes at ticks: jiffy timers (hrtimer_sleep=0)."""
    sim = ps.Simulator("linux-6.6-eevdf", seed=3, params={"hrtimer_sleep": 0})
    for _ in range(2):
        sim.spawn(programs.cpu_hog())
    s = sim.spawn(Program().loop().run(ms=3).sleep(ms=7).end(), nice=-5)
    seen = 0
    for _ in range(400):
        before = sim.task(s)
        sim.step(ticks=1)
        after = sim.task(s)
        if before.state != "running" and after.state == "running":
            lag = rq_avg_vruntime(sim) - after.vruntime
            assert abs(lag - before.vlag) <= 2
            unscaled = before.vlag * 2048 / (2048 + weight(-5))
            assert abs(lag - unscaled) > 0.5 * abs(before.vlag) > 100
            seen += 1
    assert seen >= 20


@pytest.mark.parametrize("preset", EEVDF)
def test_the_lag_a_task_sleeps_with_is_clamped_to_two_slices_or_a_tick(preset):
    """update_entity_lag: limit = calc_delta_fair(max(2 * slice, TICK_NSEC)).
    At HZ=100 a nice -20 task woken by a device behind four hogs often waits
    more than a tick for the CPU; the lag it then sleeps with is the limit,
    1e7 * 1024 / 88761 virtual ns, never more."""
    sim = ps.Simulator(preset, hz=100, seed=1, record="series", series_fields=["vlag", "state"])
    for _ in range(4):
        sim.spawn(programs.cpu_hog())
    h = sim.spawn(Program().loop().wait("irq").run(us=10).end(), nice=-20)
    sim.source("irq", every_ms=23)
    sim.run(seconds=20)
    limit = calc_delta_fair(max(2 * 750_000, 10_000_000), -20)
    assert limit == 115_365
    state, vlag = sim.series("state")[:, 4], sim.series("vlag")[:, 4]
    asleep = vlag[state != 0]
    assert asleep.max() == limit and asleep.min() >= -limit
    assert (asleep == limit).mean() > 0.2
    # it did wait more than a tick
    assert sim.latencies(h).max() > 10_000_000


def sleeper_latency(slice_ns, seed, device, seconds=10):
    # a timer wakeup at a tick: jiffy timers (hrtimer_sleep=0), where the
    # preset's hrtimers would wake the task between ticks as a device does
    sim = ps.Simulator("linux-6.12-eevdf", hz=1000, seed=seed, params={"hrtimer_sleep": 0})
    for _ in range(2):
        sim.spawn(programs.cpu_hog())
    if device:
        prog = Program().loop().wait("irq").run(us=50).end()
    else:
        prog = Program().loop().run(us=50).sleep(ms=ps.dist.uniform(2, 9)).end()
    pid = sim.spawn(prog, init={"slice": slice_ns} if slice_ns else None)
    if device:
        sim.source("irq", poisson_ms=5)
    sim.run(seconds=seconds)
    return sim.latencies(pid)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_short_slice_runs_a_timer_woken_task_at_once_beside_hogs(seed):
    """6.12, HZ=1000, jiffy timers: woken at a tick, the task with a 0.1 ms slice has the
    earliest deadline and runs at once; with the 0.75 ms base slice a hog
    that waited a tick goes first, and it waits up to that tick."""
    short = sleeper_latency(100_000, seed, device=False)
    base = sleeper_latency(0, seed, device=False)
    assert len(short) > 1000 and short.max() <= 100_000
    assert base.max() == 1_000_000


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_short_slice_halves_the_latency_of_device_wakeups(seed):
    """Woken off the tick, PREEMPT_SHORT lets the 0.1 ms slice cancel the
    running hog's RUN_TO_PARITY protection; when the hog keeps the CPU (it
    is not eligible, or a hog owed more has an earlier deadline) the tick
    bounds the wait: 95 % of wakeups within the slice plus a tick."""
    short = sleeper_latency(100_000, seed, device=True)
    base = sleeper_latency(0, seed, device=True)
    assert short.mean() < 0.6 * base.mean()
    assert np.percentile(short, 95) <= 100_000 + 1_000_000


@pytest.mark.parametrize("seed", [0, 1])
def test_preempt_short_is_what_lets_a_short_slice_past_run_to_parity(seed):
    """The running hog is protected until its deadline (RUN_TO_PARITY);
    PREEMPT_SHORT lifts that for a waking task with a shorter slice.
    Without PREEMPT_SHORT the short slice waits as long as a base slice
    does, and without RUN_TO_PARITY too it need not."""
    def mean_latency(**params):
        sim = ps.Simulator("linux-6.12-eevdf", seed=seed, params=params)
        for _ in range(2):
            sim.spawn(programs.cpu_hog())
        pid = sim.spawn(Program().loop().wait("irq").run(us=50).end(), init={"slice": 100_000})
        sim.source("irq", poisson_ms=5)
        sim.run(seconds=10)
        return sim.latencies(pid).mean()
    with_it = mean_latency()
    without = mean_latency(preempt_short=0)
    assert without > 1.8 * with_it
    assert mean_latency(preempt_short=0, run_to_parity=0) < 1.2 * with_it


def test_a_task_that_sleeps_while_not_eligible_stays_queued_from_6_12():
    """DELAY_DEQUEUE: it keeps competing (sched_delayed, counted in
    nr_delayed) until it is picked, then leaves with its lag clipped to 0
    (DELAY_ZERO); 6.6 dequeues at once."""
    def run(preset):
        sim = ps.Simulator(preset, seed=2, record="series",
                           series_fields=["sched_delayed", "vlag", "state"])
        for _ in range(2):
            sim.spawn(programs.cpu_hog())
        sim.spawn(Program().loop().wait("irq").run(us=300).end())
        sim.source("irq", poisson_ms=3)
        sim.run(seconds=2)
        return [sim.series(f)[:, 2] for f in ("sched_delayed", "vlag", "state")]
    delayed, vlag, state = run("linux-6.12-eevdf")
    assert delayed.sum() > 50 and (state[delayed == 1] != 0).all()
    # the dequeue completed while it still sleeps: the lag it keeps is <= 0
    done = (delayed[:-1] == 1) & (delayed[1:] == 0) & (state[1:] != 0)
    assert done.sum() > 5 and (vlag[1:][done] <= 0).all()
    delayed66, _, _ = run("linux-6.6-eevdf")
    assert not delayed66.any()


# ---- inputs ----

@pytest.mark.parametrize("bad", [99_999, 100_000_001, -1])
def test_a_slice_outside_the_kernel_s_clamp_is_refused(bad):
    sim = ps.Simulator("linux-6.12-eevdf")
    with pytest.raises(ValueError, match=rf"slice={bad} ns is outside the allowed range 100000\.\.100000000"):
        sim.spawn(programs.cpu_hog(), init={"slice": bad})
    assert sim.stats().size == 0


@pytest.mark.parametrize("ok", [100_000, 3_000_000, 100_000_000])
def test_a_slice_within_0_1_to_100_ms_is_kept(ok):
    sim = ps.Simulator("linux-6.12-eevdf")
    pid = sim.spawn(programs.cpu_hog(), init={"slice": ok})
    sim.run(seconds=0.1)
    t = sim.task(pid)
    assert (t.slice, t.custom_slice) == (ok, 1)
    assert t.deadline - t.vruntime <= ok


def test_6_6_has_no_per_task_slices():
    sim = ps.Simulator("linux-6.6-eevdf")
    with pytest.raises(ValueError, match="slice=500000 ns.*custom_slices=0"):
        sim.spawn(programs.cpu_hog(), init={"slice": 500_000})


@pytest.mark.parametrize("field", ["vruntime", "vlag", "custom_slice", "sched_delayed"])
def test_the_scheduler_s_state_cannot_be_set_at_spawn(field):
    sim = ps.Simulator("linux-6.12-eevdf")
    with pytest.raises(ValueError, match="only `slice`"):
        sim.spawn(programs.cpu_hog(), init={field: 1})


@pytest.mark.parametrize("name,value,allowed", [
    ("sched_base_slice_ns", 999, "1000..1000000000"),
    ("sched_base_slice_ns", 10**9 + 1, "0..1000000000"),
    ("sched_base_slice_ns", -1, "0..1000000000"),
    ("sched_tunable_scaling", 3, "0..2"),
    ("run_to_parity", 2, "0..1"),
])
def test_bad_tunables_are_refused_with_their_range(name, value, allowed):
    sim = ps.Simulator("linux-6.12-eevdf")
    with pytest.raises(ValueError, match=rf"{name}={value} is outside the allowed range {allowed}"):
        sim.set_param(name, value)


def test_tunables_are_named_in_ns_and_settable_between_steps():
    sim = ps.Simulator("linux-6.12-eevdf")
    info = {p.name: p for p in ps.preset_params("linux-6.12-eevdf")}
    assert info["sched_base_slice_ns"].unit == "ns"
    pid = sim.spawn(programs.cpu_hog())
    sim.spawn(programs.cpu_hog())
    sim.set_param("sched_base_slice_ns", 3_000_000)
    sim.run(seconds=0.1)
    assert sim.task(pid).slice == 3_000_000


def test_a_base_slice_written_is_the_one_in_force_whatever_the_cpu_count():
    """As debugfs's sched/base_slice_ns: the value written, not scaled; 0
    goes back to the default, 0.75 ms x factor."""
    sim = ps.Simulator("linux-6.12-eevdf", cpus=8, params={"sched_base_slice_ns": 2_000_000})
    assert sim.task(sim.spawn(programs.cpu_hog())).slice == 2_000_000
    sim.set_param("sched_base_slice_ns", 0)
    sim.run(seconds=0.01)
    assert sim.task(sim.spawn(programs.cpu_hog())).slice == 3_000_000


# ---- nice, SMP, other classes ----

@pytest.mark.parametrize("preset", EEVDF)
def test_renice_changes_the_weight_and_the_shares(preset):
    sim = ps.Simulator(preset, record="events")
    a = sim.spawn(programs.cpu_hog())
    b = sim.spawn(programs.cpu_hog())
    sim.run(seconds=5)
    sim.renice(b, 5)
    sim.run(seconds=10)
    assert sim.task(b).weight == weight(5)
    share = np.asarray(ps.metrics.cpu_share(sim, start_s=6)["share"])
    assert share == pytest.approx([weight(0) / (weight(0) + weight(5)), weight(5) / (weight(0) + weight(5))], abs=0.01)
    assert sim.task(a).weight == 1024


@pytest.mark.parametrize("preset", EEVDF)
def test_four_hogs_on_two_cpus_end_two_and_two_with_half_a_cpu_each(preset):
    sim = ps.Simulator(preset, cpus=2, record="events")
    for _ in range(4):
        sim.spawn(programs.cpu_hog(), cpu=0)
    sim.run(seconds=12)
    assert sorted(np.bincount(sim.stats()["cpu"], minlength=2)) == [2, 2]
    share = np.asarray(ps.metrics.cpu_share(sim, start_s=2)["share"])
    assert share == pytest.approx([0.5] * 4, abs=0.01)


@pytest.mark.parametrize("preset", EEVDF + ["linux-6.5-cfs"])
def test_a_real_time_task_runs_before_every_fair_one(preset):
    sim = ps.Simulator(preset)
    for n in (-20, 0):
        sim.spawn(programs.cpu_hog(), nice=n)
    rt = sim.spawn(Program().loop().wait("irq").run(ms=2).end(), policy="fifo", rt_priority=1)
    sim.source("irq", every_ms=10)
    sim.run(seconds=5)
    lat = sim.latencies(rt)
    assert len(lat) > 400 and lat.max() == 0
    assert sim.stats()["cpu_ns"][2] == pytest.approx(0.2 * 5e9, rel=0.01)
