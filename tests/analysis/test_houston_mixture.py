"""houston_mixture: houston-2003's loop for any set of tasks -- CPU hogs
and tasks that run and sleep, on one CPU or several -- from the patch's
formulas on the loop's state (no simulator), against what the simulator
does (pysched.analysis.measure.classify_run on the same tasks), on grids
drawn at random (seeded) inside the documented range (run_avg_halflife
500..30000, nice_const 1600..25600, log-uniform)."""
import math

import numpy as np
import pytest

import pysched as ps
from pysched.analysis import houston_mixture
from pysched.analysis.measure import classify_run
from pysched.analysis.mix_tasks import placement

THREE_HOGS = [0, 0, 5]
HOGS_AND_SLEEPER = [0, 0, (5, 20)]


def random_grid(seed, n_hl, n_nc):
    rng = np.random.default_rng(seed)
    hls = np.exp(rng.uniform(np.log(500), np.log(30000), n_hl)).round().astype(int)
    ncs = np.exp(rng.uniform(np.log(1600), np.log(25600), n_nc)).round().astype(int)
    return [(int(h), int(n)) for h in sorted(hls) for n in sorted(ncs)]


def compare(tasks, cpus, points):
    rows = []
    for hl, nc in points:
        params = {"run_avg_halflife": hl, "nice_const": nc}
        rows.append(((hl, nc), houston_mixture(tasks, cpus=cpus, params=params),
                     classify_run(tasks, cpus=cpus, params=params)))
    return rows


def check_agreement(rows, kinds_at_least, settled_at_least):
    agree = [p.kind == m.kind for _, p, m in rows]
    assert sum(agree) >= kinds_at_least * len(rows), \
        [(pt, p.kind, m.kind) for pt, p, m in rows if p.kind != m.kind]
    both = [(pt, p.shares, m.shares) for pt, p, m in rows if p.kind == m.kind == "settles"]
    assert len(both) >= settled_at_least
    for point, predicted, measured in both:
        assert np.all(np.abs(predicted - measured) <= 0.03), (point, predicted, measured)


@pytest.mark.parametrize("tasks, cpus", [(THREE_HOGS, 1), (HOGS_AND_SLEEPER, 1),
                                         (HOGS_AND_SLEEPER, 2)])
def test_on_a_small_random_grid_the_prediction_agrees_with_the_simulator(tasks, cpus):
    check_agreement(compare(tasks, cpus, random_grid(7, 2, 2)), 0.75, 2)


@pytest.mark.slow
@pytest.mark.parametrize("tasks, cpus, seed", [(THREE_HOGS, 1, 1), (HOGS_AND_SLEEPER, 1, 2),
                                               (HOGS_AND_SLEEPER, 2, 3)])
def test_on_a_random_8x6_grid_nine_kinds_in_ten_agree_and_settled_shares_within_003(tasks, cpus,
                                                                                     seed):
    check_agreement(compare(tasks, cpus, random_grid(seed, 8, 6)), 0.9, 24)


def test_three_hogs_the_plus5_task_gets_less_than_either_nice0_task():
    r = houston_mixture(THREE_HOGS)
    assert r.kind == "settles"
    assert r.shares.sum() == pytest.approx(1, abs=0.01)
    assert r.shares[2] < min(r.shares[:2]) - 0.05
    assert r.shares[0] == pytest.approx(r.shares[1], abs=0.02)
    # the patch's argument puts the +5 task below the nice 0 ones too
    assert r.fixed_point_shares[2] < r.fixed_point_shares[0]


def test_a_sleeper_among_hogs_gets_what_it_asks_and_the_hogs_split_the_rest():
    r = houston_mixture(HOGS_AND_SLEEPER)
    assert r.demand[2] == pytest.approx(0.2)
    assert r.shares[2] == pytest.approx(0.2, abs=0.01)
    assert r.shares[0] == pytest.approx(0.4, abs=0.02) and r.shares[1] == pytest.approx(0.4, abs=0.02)
    # a sleeper that sleeps four times what it runs keeps a full sleep_avg
    assert r.sleep_avg[2] > 0.9 * ps.analysis.houston.constants()["max_sleep_avg"]
    assert r.sleep_avg[0] == r.sleep_avg[1] == 0
    assert "gets what it asks" in r.why


def test_on_two_cpus_the_sleeper_shares_a_cpu_with_one_hog_and_the_other_hog_runs_alone():
    r = houston_mixture(HOGS_AND_SLEEPER, cpus=2)
    assert list(r.cpu) == [0, 1, 0]
    assert r.shares[1] == pytest.approx(1.0)
    assert r.shares[0] == pytest.approx(0.8, abs=0.01)
    assert "CPU 0: tasks 1, 3" in r.why
    m = classify_run(HOGS_AND_SLEEPER, cpus=2)
    assert np.all(np.abs(r.shares - m.shares) <= 0.01)


def test_spawn_places_on_the_cpu_with_fewest_tasks_lowest_first():
    assert placement(5, 2) == [0, 1, 0, 1, 0]
    assert placement(3, 4) == [0, 1, 2]


def test_a_strong_nice_const_starves_the_weakest_and_names_it():
    # nice -20 against +19 at nice_const 25600: the +19 task's run_avg stops
    # decaying at decay_value's floor, at a prio worse than the other's
    r = houston_mixture([-20, 19, 0], params={"nice_const": 25600})
    m = classify_run([-20, 19, 0], params={"nice_const": 25600})
    assert r.kind == m.kind == "starves"
    assert r.starving == 1 and r.shares[1] == 0
    assert "task 2" in r.why and "starves" in r.why


def test_a_loop_that_cycles_gives_the_period_the_simulator_shows():
    params = {"run_avg_halflife": 500, "nice_const": 8000}
    r = houston_mixture([-20, 19], params=params)
    m = classify_run([-20, 19], params=params)
    assert r.kind == m.kind == "cycles"
    assert r.period_s == pytest.approx(m.cycle.period_s, rel=0.05)
    assert r.amplitude_levels == pytest.approx(m.cycle.amplitude, abs=1)


def test_a_horizon_too_short_to_see_it_stay_is_undecided_not_a_guess():
    # nice 0 starts from the run_avg of a task that ran alone and sinks to
    # its fixed point over minutes; 30 s of loop cannot say where it stays
    params = {"run_avg_halflife": 16715, "nice_const": 1600}
    short = houston_mixture([0, 5], params=params, seconds=30)
    assert short.kind == "undecided" and math.isnan(short.settling_s)
    assert "seconds=" in short.why
    assert houston_mixture([0, 5], params=params).kind == "settles"


def test_the_result_has_a_row_per_task_and_nan_for_a_hog_duty_cycle():
    r = houston_mixture([0, {"run_ms": 5, "sleep_ms": 20, "nice": 3}])
    frame = r.to_frame()
    assert list(frame.index) == [0, 1]
    assert math.isnan(frame.loc[0, "run_ms"]) and frame.loc[1, "run_ms"] == 5
    assert frame.loc[1, "nice"] == 3
    assert repr(r).startswith(f"HoustonMixture({r.kind}: ")
    assert len(repr(r)) <= 250


@pytest.mark.parametrize("tasks, kwargs, error, message", [
    ([], {}, ValueError, "houston_mixture: tasks is empty"),
    ("0 5", {}, TypeError, "houston_mixture: tasks must be a list"),
    ([0, 20], {}, ValueError, r"tasks\[1\] nice=20 is outside"),
    ([0, (0, 20)], {}, ValueError, r"tasks\[1\] run_ms=0 must be positive"),
    ([0, (5, 20, 1, 2)], {}, ValueError, r"tasks\[1\]=\(5, 20, 1, 2\) is not"),
    ([0, {"run_ms": 5}], {}, ValueError, r"tasks\[1\] needs both run_ms and sleep_ms"),
    ([0, {"run": 5}], {}, ValueError, r"unknown key\(s\) \['run'\]"),
    ([0, 0.5], {}, TypeError, r"tasks\[1\] nice must be an int, not float"),
    ([0, ps.programs.cpu_hog()], {}, TypeError, r"tasks\[1\] is a Program: give a nice value"),
    ([0, 5], {"cpus": 0}, ValueError, "cpus=0 is outside"),
    ([0, 5], {"params": [1]}, TypeError, "params must be a dict"),
    ([0, 5], {"seconds": 0}, ValueError, "seconds=0 is outside"),
])
def test_bad_arguments_are_named_with_the_function_called(tasks, kwargs, error, message):
    with pytest.raises(error, match=message):
        houston_mixture(tasks, **kwargs)


def test_a_burst_ending_at_the_tick_that_expires_its_slice_is_credited_the_wait_behind_the_hogs():
    # an X server that runs 20 ms and sleeps 10 ms among four hogs: when its
    # burst ends at the tick that expires its slice, the tick switches it out
    # first; it blocks only when it next runs, hundreds of ms later, and
    # activate_task credits that wait (run_avg_timestamp is the tick it last
    # ran at).  Its sleep_avg climbs, and it gets more than a fifth of the CPU
    tasks = [(20, 10), 0, 0, 0, 0]
    r = houston_mixture(tasks, seconds=120)
    m = classify_run(tasks, seconds=120)
    assert r.sleep_avg[0] > 5000
    assert r.shares[0] > 0.3
    assert np.all(np.abs(r.shares - m.shares) <= 0.01)


def test_where_an_idle_cpu_would_pull_a_task_the_placement_is_undecided():
    # two sleepers and a hog on two CPUs: spawn() puts a sleeper on CPU 1
    # alone, which goes idle while CPU 0 holds the hog and the other
    # sleeper; an idle CPU pulls from it, so the placement does not hold
    tasks = [(5, 20), (5, 20), 0]
    r = houston_mixture(tasks, cpus=2, seconds=20)
    assert r.kind == "undecided"
    assert "CPU 1 has no CPU hog" in r.why and "find_busiest_queue" in r.why
    sim = ps.Simulator("houston-2003", cpus=2)
    for nice, run_ms, sleep_ms in [(0, 5, 20), (0, 5, 20), (0, None, None)]:
        sim.spawn(ps.programs.cpu_hog() if run_ms is None else
                  ps.Program().loop().run(ms=run_ms).sleep(ms=sleep_ms).end(), nice=nice)
    sim.run(seconds=20)
    assert sim.stats()["nr_migrations"].sum() > 0
