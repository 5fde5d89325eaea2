"""The self-tuning scheduler's claims (Houston's mail), on the simulator."""
import numpy as np
import pytest

import pysched as ps

H = "houston-2003"


def shares(sim, pids, warmup, seconds):
    sim.run(seconds=warmup)
    c0 = [sim.task(p).cpu_ns for p in pids]
    sim.run(seconds=seconds)
    return np.array([(sim.task(p).cpu_ns - c) / (seconds * 1e9) for p, c in zip(pids, c0)])


def test_nice_minus20_against_plus19_gives_the_plus19_hog_about_a_fiftieth():
    sim = ps.Simulator(H)
    pids = [sim.spawn(ps.programs.cpu_hog(), nice=n) for n in (-20, 19)]
    s = shares(sim, pids, 60, 120)
    assert 0.015 <= s[1] <= 0.03
    # both settle at one dynamic priority: nice works by feedback, not slices
    assert sim.task(pids[0]).prio == sim.task(pids[1]).prio


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_equal_hogs_share_equally(n):
    sim = ps.Simulator(H)
    pids = [sim.spawn(ps.programs.cpu_hog()) for _ in range(n)]
    s = shares(sim, pids, 30, 60)
    assert np.all(np.abs(s - 1 / n) <= 0.02)


def test_a_task_using_a_tenth_of_the_cpu_settles_near_dynamic_prio_30_and_hogs_below_it():
    sim = ps.Simulator(H)
    hogs = [sim.spawn(ps.programs.cpu_hog()) for _ in range(4)]
    light = sim.spawn(ps.programs.interactive(1, 9))
    sim.run(seconds=60)
    assert sim.task(light).cpu_ns / 60e9 == pytest.approx(0.10, abs=0.01)
    assert abs(sim.task(light).prio - 130) <= 5
    assert all(sim.task(h).prio > sim.task(light).prio + 10 for h in hogs)


def test_when_hogs_start_the_light_task_keeps_a_bounded_wakeup_latency():
    sim = ps.Simulator(H)
    light = sim.spawn(ps.programs.interactive(1, 9))
    sim.run(seconds=30)
    for _ in range(4):
        sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=60)
    lat = sim.latencies(light)
    # it preempts the hogs as soon as it wakes: bounded by a tick, not by slices
    assert lat.max() <= 1_000_000
    assert sim.task(light).cpu_ns > 0.09 * 90e9


MIXES = [[-20, 19], [0, 5], [-5, 0, 5], [0, 10, 19], [-10, -10, 0, 10], [3, 3, 3, -7]]


@pytest.mark.parametrize("nices", MIXES)
def test_houston_equilibrium_predicts_the_simulated_shares(nices):
    # tolerance: 0.03 absolute on every share and 25 % relative on the
    # smallest; the equilibrium prio within 3 levels (effective_prio
    # truncates toward zero, so the simulation sits 1-2 levels higher)
    sim = ps.Simulator(H)
    pids = [sim.spawn(ps.programs.cpu_hog(), nice=n) for n in nices]
    s = shares(sim, pids, 60, 120)
    eq = ps.analysis.houston_equilibrium(nices)
    assert np.all(np.abs(s - eq.shares) <= 0.03)
    i = int(np.argmin(eq.shares))
    assert abs(s[i] - eq.shares[i]) <= 0.25 * eq.shares[i]
    assert all(abs(sim.task(p).prio - eq.prio) <= 3 for p in pids)


def test_equilibrium_ratio_follows_exp_of_the_static_prio_difference_over_c():
    eq = ps.analysis.houston_equilibrium([-20, 19], log="exp")
    k = ps.analysis.houston.constants()["nice_const"] / 65536
    assert eq.ratio == pytest.approx(np.exp(39 * k), rel=1e-6)
    # a larger nice_const makes nice stronger
    strong = ps.analysis.houston_equilibrium([-20, 19], params={"nice_const": 9000})
    assert strong.ratio > eq.ratio


def test_the_priority_range_is_0_to_79_above_the_rt_range():
    sim = ps.Simulator(H)
    t = sim.spawn(ps.programs.cpu_hog(), nice=0)
    assert sim.task(t).static_prio == 160
    assert ps.Simulator(H).params["max_run_avg"] == 256 * 1024
    lo = sim.spawn(ps.programs.cpu_hog(), nice=19)
    assert sim.task(lo).static_prio == 179


def test_fairness_update_reevaluates_tasks_that_wait_without_running():
    sim = ps.Simulator(H, record="events")
    hi = sim.spawn(ps.programs.cpu_hog(), nice=-20)
    lo = sim.spawn(ps.programs.cpu_hog(), nice=10)
    sim.run(seconds=20)
    assert sim.runqueue()["nr_fairness_requeues"] > 0
    ev = sim.events()
    kinds = {k: i for i, k in enumerate(ps.EVENT_KINDS)}
    # prio changes of the waiting task happen on multiples of FAIRNESS_TICKS
    # while the other runs (not only at its own expiry or wakeup)
    prio_ev = ev[(ev["kind"] == kinds["prio"]) & (ev["pid"] == lo)]
    on_fairness = prio_ev[(prio_ev["time_ns"] // 1_000_000) % 125 == 0]
    assert len(on_fairness) > 0
    assert hi != lo


def test_yield_drops_to_the_worst_priority_and_raises_run_avg_by_a_quarter():
    sim = ps.Simulator(H)
    y = sim.spawn(ps.Program().run(us=500).yield_().sleep(s=10))
    before = sim.task(y).run_avg
    sim.run(seconds=0.0006)
    t = sim.task(y)
    assert t.prio == 179  # kept until its next activation
    assert t.run_avg == min(before + before // 4, 262144)


def test_activation_cuts_the_timeslice_to_what_the_new_priority_allows():
    sim = ps.Simulator(H)
    # a hog builds a long slice at a poor priority, then sleeps long enough
    # to come back at a good one
    t = sim.spawn(ps.Program().run(s=20).sleep(s=20).run(s=1).sleep(s=100))
    sim.run(seconds=19.9)
    long_slice = sim.task(t).time_slice
    sim.run(seconds=20.2)
    after = sim.task(t)
    assert after.time_slice <= ps.analysis.houston.task_timeslice(after.prio, after.static_prio)
    assert long_slice > after.time_slice


@pytest.mark.parametrize("hz, params", [(10000, {"run_avg_halflife": 40000, "prio_avg_halflife": 20000}),
                                        (1, {"run_avg_halflife": 6})])
def test_houston_runs_at_an_extreme_hz_when_params_replace_the_defaults_that_do_not_fit(hz, params):
    with pytest.raises(ps.ConfigError, match=f"the preset's default at hz={hz}: choose it with params="):
        ps.Simulator("houston-2003", hz=hz)
    sim = ps.Simulator("houston-2003", hz=hz, params=params)
    hog = sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=2)
    assert sim.task(hog).cpu_ns == 2 * 10**9
    assert sim.params["run_avg_halflife"] == params["run_avg_halflife"]
