"""CFS (linux-6.5-cfs): weighted shares, slices from sched_latency and
min_granularity ended by the tick, START_DEBIT, sleeper placement, wakeup
preemption granularity, the tunables' log scaling with the CPU count, and
the SMP load balancer.  Expected values come from the weight table of
docs/schedulers/cfs.md §2 and the kernel's formulas as tests/helpers/fair_model.py writes
them, not from the simulator."""
import numpy as np
import pytest

import pysched as ps
from pysched import Program, metrics, programs

from fair_model import (WEIGHT, WMULT, calc_delta, calc_delta_fair, inv_weight, sched_slice,
                        sysctl_factor, weight)

CFS = "linux-6.5-cfs"


def shares(nices, seconds=20, **kw):
    sim = ps.Simulator(CFS, **kw)
    for n in nices:
        sim.spawn(programs.cpu_hog(), nice=n)
    sim.run(seconds=seconds)
    cpu = sim.stats()["cpu_ns"]
    return 100 * cpu / cpu.sum()


@pytest.mark.parametrize("nices", [(0, 1), (0, 5), (-20, 19), (-5, 0, 7)])
def test_cpu_bound_tasks_share_the_cpu_by_weight(nices):
    got = shares(nices)
    total = sum(weight(n) for n in nices)
    # 55.5/44.5, 75.4/24.6, 99.98/0.02 %
    assert got == pytest.approx([100 * weight(n) / total for n in nices], abs=1.0)


def test_the_weight_tables_are_the_kernel_s():
    for nice in range(-20, 20):
        assert ps.formula(CFS, "weight", nice) == WEIGHT[nice + 20]
        assert ps.formula(CFS, "wmult", nice) == WMULT[nice + 20]
        assert abs(WMULT[nice + 20] - 2**32 / WEIGHT[nice + 20]) < 1
    # about 10 % of the CPU per nice level: a ratio of about 1.25
    ratios = [WEIGHT[k] / WEIGHT[k + 1] for k in range(39)]
    assert min(ratios) >= 1.2 and max(ratios) < 1.3


@pytest.mark.parametrize("delta", [1, 999_999, 3_000_000, 10**10])
@pytest.mark.parametrize("nice", [-20, -7, 0, 13, 19])
def test_virtual_time_is_the_wmult_fixed_point_of_delta_1024_over_w(delta, nice):
    got = ps.formula(CFS, "calc_delta_fair", delta, nice)
    assert got == calc_delta_fair(delta, nice)
    assert abs(got - delta * 1024 / weight(nice)) <= 1 + delta * 1024 / weight(nice) * 1e-6


# ---- slices ----

@pytest.mark.parametrize("hz,nr,run_ns", [
    (1000, 2, 3_000_000),    # slice 6 ms / 2 = 2,999,998 ns: over at the third tick
    (1000, 10, 1_000_000),   # 10 > sched_nr_latency: period 7.5 ms, slice 0.75 ms
    (250, 2, 4_000_000),     # the first tick past the slice
    (100, 10, 10_000_000),
])
def test_hogs_run_their_slice_to_the_first_tick_past_it(hz, nr, run_ns):
    """check_preempt_tick: resched once delta_exec > ideal_runtime."""
    slice_ns = sched_slice(0, [0] * (nr - 1))
    tick = 10**9 // hz
    assert run_ns == (slice_ns // tick + 1) * tick
    sim = ps.Simulator(CFS, hz=hz, record="events")
    for _ in range(nr):
        sim.spawn(programs.cpu_hog())
    sim.run(seconds=2)
    ev = sim.events()
    switches = ev["time_ns"][ev["kind"] == ps.EVENT_KINDS.index("switch")]
    assert set(np.diff(switches[nr + 1:])) == {run_ns}


def test_the_slice_formula_is_period_times_weight_over_load():
    assert sched_slice(0, [0]) == 2_999_998
    assert ps.formula(CFS, "sched_slice", 0, 2, 2048) == 2_999_998
    assert ps.formula(CFS, "sched_slice", 5, 2, 1024 + 335) == calc_delta(6_000_000, 335, inv_weight(1359))
    assert ps.formula(CFS, "sched_slice", 0, 10, 10240) == 750_000
    assert ps.formula(CFS, "sched_period", 8) == 6_000_000
    assert ps.formula(CFS, "sched_period", 9) == 9 * 750_000


@pytest.mark.parametrize("nice,others", [(0, [0, 0]), (5, [0]), (-3, [0, 7, 19])])
def test_start_debit_places_a_new_task_one_vslice_after_min_vruntime(nice, others):
    sim = ps.Simulator(CFS)
    for n in others:
        sim.spawn(programs.cpu_hog(), nice=n)
    sim.run(seconds=0.0503)
    pid = sim.spawn(programs.cpu_hog(), nice=nice)
    # min_vruntime as the placement saw it (it moved with the running task
    # up to now, and the new task, to its right, does not move it)
    base = sim.runqueue(0)["min_vruntime"]
    vslice = calc_delta_fair(sched_slice(nice, others), nice)
    assert sim.task(pid).vruntime == base + vslice
    # without START_DEBIT, at min_vruntime
    sim = ps.Simulator(CFS, params={"start_debit": 0})
    sim.spawn(programs.cpu_hog())
    sim.run(seconds=0.0503)
    assert sim.task(sim.spawn(programs.cpu_hog())).vruntime == sim.runqueue(0)["min_vruntime"]


# ---- sleepers and wakeups ----

JIFFY = {"hrtimer_sleep": 0}


def wakeups_of(sim, pid, ticks):
    """(vruntime before, vruntime at, min_vruntime at) each wakeup, stepping
    tick by tick: the sleeper must wake at a tick, so its sleeps are jiffy
    timers (JIFFY: hrtimer_sleep=0), not the preset's hrtimers, which wake
    it between ticks and let it run before the tick reads it."""
    out, before = [], sim.task(pid)
    for _ in range(ticks):
        sim.step(ticks=1)
        now = sim.task(pid)
        if before.state != "running" and now.state == "running":
            out.append((before.vruntime, now.vruntime, sim.runqueue(0)["min_vruntime"]))
        before = now
    return out


@pytest.mark.parametrize("cpus", [1, 2, 4, 8, 16])
def test_a_long_sleeper_returns_half_a_latency_before_min_vruntime(cpus):
    """GENTLE_FAIR_SLEEPERS: at min_vruntime - sched_latency / 2, the
    latency 6 ms x (1 + ilog2(min(ncpus, 8))); its own vruntime, 250 ms
    behind, does not count."""
    sim = ps.Simulator(CFS, cpus=cpus, params=JIFFY)
    for _ in range(2):
        sim.spawn(programs.cpu_hog(), cpus_allowed=[0])
    s = sim.spawn(Program().loop().run(ms=5).sleep(ms=500).end(), cpus_allowed=[0])
    seen = wakeups_of(sim, s, 1200)
    assert len(seen) == 2
    for before, at, base in seen:
        assert at == base - 6_000_000 * sysctl_factor(cpus) // 2
        assert base - before > 200_000_000


def test_without_gentle_sleepers_a_sleeper_gets_a_whole_latency():
    sim = ps.Simulator(CFS, params={"gentle_fair_sleepers": 0, **JIFFY})
    for _ in range(2):
        sim.spawn(programs.cpu_hog())
    s = sim.spawn(Program().loop().run(ms=5).sleep(ms=500).end())
    assert [at - base for _, at, base in wakeups_of(sim, s, 1200)] == [-6_000_000] * 2


def test_a_short_sleeper_keeps_its_vruntime():
    """Never moved backwards: max(vruntime, min_vruntime - latency / 2)."""
    sim = ps.Simulator(CFS, params=JIFFY)
    sim.spawn(programs.cpu_hog())
    s = sim.spawn(Program().loop().run(ms=2).sleep(ms=1).end())
    seen = wakeups_of(sim, s, 600)
    assert len(seen) > 100
    assert all(at == max(before, base - 3_000_000) for before, at, base in seen)
    assert any(at == before > base - 3_000_000 for before, at, base in seen)


@pytest.mark.parametrize("nice", [0, 3])
def test_a_wakee_preempts_only_beyond_the_weight_scaled_wakeup_granularity(nice):
    """wakeup_preempt_entity: curr.vruntime - wakee.vruntime > wakeup_gran,
    1 ms in the wakee's virtual time (calc_delta_fair).  Checked at every
    device wakeup, stopping the run at the instant of the wakeup."""
    gran = calc_delta_fair(1_000_000, nice)
    assert ps.formula(CFS, "wakeup_gran", nice) == gran
    outcomes = []
    for run_us in (300, 800, 1200, 1500, 1700, 1900):
        sim = ps.Simulator(CFS)
        hog = sim.spawn(programs.cpu_hog())
        s = sim.spawn(Program().loop().wait("irq").run(us=run_us).end(), nice=nice)
        period = 2_030_000
        sim.source("irq", every_us=period / 1000, start_ms=0.05)
        for k in range(100):
            t = 50_000 + k * period
            sim.run(seconds=(t - 1 - sim.now_ns) / 1e9)
            if sim.task(s).on_rq:
                continue
            sim.run(seconds=1e-9)
            lead = sim.task(hog).vruntime - sim.task(s).vruntime
            preempted = sim.runqueue(0)["curr"] == s
            assert preempted == (lead > gran), (run_us, k, lead, gran)
            outcomes.append(preempted)
    assert outcomes.count(True) > 50 and outcomes.count(False) >= 3


def test_the_tick_preempts_for_a_waiter_a_slice_behind_once_min_granularity_ran():
    """check_preempt_tick's second test: past min_granularity, a leftmost
    waiter more than ideal_runtime behind takes the CPU at the tick.  With
    wakeup preemption off, a sleeper woken every 2.03 ms (placed 3 ms behind
    min_vruntime > the 2,999,998 ns slice) runs at the next tick, the hog's
    runs stay short of its 3 ms slice."""
    sim = ps.Simulator(CFS, params={"wakeup_preemption": 0}, record="events")
    hog = sim.spawn(programs.cpu_hog())
    s = sim.spawn(Program().loop().wait("irq").run(us=100).end())
    sim.source("irq", every_us=2030, start_ms=0.05)
    sim.run(seconds=5)
    lat = sim.latencies(s)
    assert len(lat) > 2000 and 0 < lat.min() and lat.max() <= 1_000_000
    ev = sim.events()
    sw = ev[ev["kind"] == ps.EVENT_KINDS.index("switch")]
    runs = np.diff(sw["time_ns"])[sw["pid"][:-1] == hog]
    assert np.median(runs) < 2_999_998


@pytest.mark.parametrize("cpus,factor", [(1, 1), (2, 2), (4, 3), (8, 4), (16, 4)])
def test_the_tunables_scale_with_the_log_of_the_cpu_count(cpus, factor):
    assert sysctl_factor(cpus) == factor
    assert ps.formula(CFS, "sysctl_factor", cpus, 1) == factor
    # linear scaling, and none
    assert ps.formula(CFS, "sysctl_factor", cpus, 2) == min(cpus, 8)
    assert ps.formula(CFS, "sysctl_factor", cpus, 0) == 1


def test_a_latency_written_is_the_one_in_force_whatever_the_cpu_count():
    """As debugfs's sched/latency_ns: a sleeper on 8 CPUs returns half the
    written 10 ms before min_vruntime, not half of 10 ms x 4."""
    sim = ps.Simulator(CFS, cpus=8, params={"sched_latency_ns": 10_000_000, **JIFFY})
    for _ in range(2):
        sim.spawn(programs.cpu_hog(), cpus_allowed=[0])
    s = sim.spawn(Program().loop().run(ms=5).sleep(ms=500).end(), cpus_allowed=[0])
    assert [at - base for _, at, base in wakeups_of(sim, s, 1200)] == [-5_000_000] * 2


def test_renice_changes_the_weight_and_the_shares():
    sim = ps.Simulator(CFS, record="events")
    sim.spawn(programs.cpu_hog())
    b = sim.spawn(programs.cpu_hog())
    sim.run(seconds=5)
    sim.renice(b, 5)
    sim.run(seconds=10)
    assert sim.task(b).weight == weight(5)
    share = np.asarray(metrics.cpu_share(sim, start_s=6)["share"])
    total = weight(0) + weight(5)
    assert share == pytest.approx([weight(0) / total, weight(5) / total], abs=0.01)


def test_a_slice_blown_up_by_a_long_queue_is_capped_at_the_latency():
    """check_preempt_tick takes min(sched_slice, sysctl_sched_latency): with
    sixteen nice-0 tasks the period is 12.75 ms and a nice -20 task's slice
    10.76 ms, so without the cap its slice would end at the 11th tick after
    it is picked; with it, at the 7th (the first tick past 6 ms)."""
    sim = ps.Simulator(CFS, record="events")
    heavy = sim.spawn(programs.cpu_hog(), nice=-20)
    for _ in range(16):
        sim.spawn(programs.cpu_hog())
    sim.run(seconds=3)
    ev = sim.events()
    picked = ev[(ev["kind"] == ps.EVENT_KINDS.index("switch")) & (ev["pid"] == heavy)]["time_ns"][1:]
    expired = ev[(ev["kind"] == ps.EVENT_KINDS.index("expire")) & (ev["pid"] == heavy)]["time_ns"]
    first = expired[np.searchsorted(expired, picked)] - picked
    assert len(first) > 20 and (first == 7_000_000).all()


# ---- SMP ----

def test_four_hogs_on_two_cpus_end_two_and_two_with_half_a_cpu_each():
    sim = ps.Simulator(CFS, cpus=2, record="events")
    for _ in range(4):
        sim.spawn(programs.cpu_hog(), cpu=0)
    sim.run(seconds=12)
    st = sim.stats()
    assert sorted(np.bincount(st["cpu"], minlength=2)) == [2, 2]
    share = np.asarray(metrics.cpu_share(sim, start_s=2)["share"])
    assert share == pytest.approx([0.5] * 4, abs=0.01)
    # the idle CPU pulled two of them, once
    assert st["nr_migrations"].sum() == 2
    assert sum(r["nr_balance_pulls"] for r in sim.cpu_stats()) == 2


def test_migration_renormalises_vruntime_by_min_vruntime():
    """A queued task moved between CPUs keeps its distance to min_vruntime
    (dequeue subtracts the old queue's, enqueue adds the new one's)."""
    sim = ps.Simulator(CFS, cpus=2, params={"load_balance": 0})
    for cpu in (0, 0, 0, 1):
        sim.spawn(programs.cpu_hog(), cpu=cpu)
    sim.run(seconds=1)
    moved = next(p for p in (1, 2, 3) if sim.runqueue(0)["curr"] != p)
    before = sim.task(moved).vruntime - sim.runqueue(0)["min_vruntime"]
    sim.set_affinity(moved, [1])
    assert sim.task(moved).cpu == 1
    assert sim.task(moved).vruntime - sim.runqueue(1)["min_vruntime"] == before


@pytest.mark.parametrize("preset", [CFS, "linux-6.12-eevdf"])
def test_after_32_failed_balances_a_task_of_any_weight_may_be_pulled(preset):
    """detach_tasks skips a task whose load >> nr_balance_failed exceeds the
    imbalance; the load is an unsigned long and shift_right gives 0 from a
    shift of 64 on, and for a weight below 2^32 from 32 on: after 32
    balances that pulled nothing (three hogs pinned to CPU 0), a nice -20
    task (weight 88761) is pulled against an imbalance of 45916.  A 32-bit
    shift taken mod 32 (weight >> 0) would leave it."""
    sim = ps.Simulator(preset, cpus=2)
    for _ in range(3):
        sim.set_affinity(sim.spawn(programs.cpu_hog(), cpu=0), [0])
    local = sim.spawn(programs.cpu_hog(), cpu=1)
    sim.set_affinity(local, [1])
    while sim.cpu_stats()["nr_balance_failed"][1] < 32:
        sim.step(ticks=1)
    assert sim.cpu_stats()["nr_balance_failed"][1] == 32
    sim.renice(local, -20)
    heavy = [sim.spawn(programs.cpu_hog(), cpu=0, nice=-20) for _ in range(2)]
    sim.run(seconds=0.05)
    assert sorted(sim.task(p).cpu for p in heavy) == [0, 1]
    assert sim.cpu_stats()["nr_balance_pulls"][1] == 1


@pytest.mark.parametrize("preset", [CFS, "linux-6.12-eevdf"])
def test_a_busy_cpu_of_eight_balances_at_most_every_hz_times_cpus_over_ten_jiffies(preset):
    """get_sd_balance_interval clamps at max_load_balance_interval, which
    update_max_interval() sets to HZ * online CPUs / 10 once the CPUs are
    up (800 jiffies here), not the boot-time HZ/10 (100): balanced busy
    CPUs of eight wait 2 x 8 ms x busy_factor 16 - 1 = 255 jiffies."""
    sim = ps.Simulator(preset, cpus=8)
    for _ in range(16):
        sim.spawn(programs.cpu_hog())
    sim.run(seconds=1)
    ahead = 0
    for _ in range(300):
        sim.step()
        ahead = max(ahead, max(int(r["next_balance"]) for r in sim.cpu_stats()) - sim.jiffies)
    assert ahead == 255


def test_without_the_balancer_tasks_stay_where_they_were_put():
    sim = ps.Simulator(CFS, cpus=2, params={"load_balance": 0})
    for _ in range(4):
        sim.spawn(programs.cpu_hog(), cpu=0)
    sim.run(seconds=5)
    assert (sim.stats()["cpu"] == 0).all()


# ---- inputs ----

@pytest.mark.parametrize("name,value,allowed", [
    ("sched_latency_ns", 99_999, "100000..1000000000"),
    ("sched_min_granularity_ns", 10**9 + 1, "0..1000000000"),
    ("sched_min_granularity_ns", 5, "100000..1000000000"),
    ("sched_wakeup_granularity_ns", -1, "0..1000000000"),
    ("sched_tunable_scaling", 3, "0..2"),
    ("gentle_fair_sleepers", 2, "0..1"),
])
def test_bad_tunables_are_refused_with_their_range(name, value, allowed):
    sim = ps.Simulator(CFS)
    with pytest.raises(ValueError, match=rf"{name}={value} is outside the allowed range {allowed}"):
        sim.set_param(name, value)


def test_the_scheduler_s_state_cannot_be_set_at_spawn():
    sim = ps.Simulator(CFS)
    with pytest.raises(ValueError, match="no initial values"):
        sim.spawn(programs.cpu_hog(), init={"vruntime": 5})


def test_tunables_take_effect_between_steps():
    """A 12 ms latency doubles the two hogs' slices (6 ms, over at the 7th tick)."""
    sim = ps.Simulator(CFS, record="events")
    for _ in range(2):
        sim.spawn(programs.cpu_hog())
    sim.set_param("sched_latency_ns", 12_000_000)
    sim.run(seconds=1)
    ev = sim.events()
    switches = ev["time_ns"][ev["kind"] == ps.EVENT_KINDS.index("switch")]
    assert sched_slice(0, [0], latency=12_000_000) == 5_999_997
    assert set(np.diff(switches[3:])) == {6_000_000}
