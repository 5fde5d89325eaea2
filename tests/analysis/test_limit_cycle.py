"""limit_cycle: its times are in ns (seconds are refused, or given with
unit=), and its period does not depend on how long the run was."""
import numpy as np
import pytest

import pysched as ps
from pysched.analysis import measure

MS = 1_000_000


def spikes(seconds, period=2.13, width=0.05, jitter=0.1, seed=1):
    """A prio of 150 that jumps to 170 for `width` s every `period` s give
    or take `jitter` (uniform), sampled every 10 ms: times in ns."""
    rng = np.random.default_rng(seed)
    t = np.arange(0, round(seconds * 100)) / 100
    v = np.full(len(t), 150.0)
    at = 0.5
    while at < seconds:
        v[(t >= at) & (t < at + width)] = 170
        at += period + rng.uniform(-jitter, jitter)
    return np.round(t * 1e9).astype(np.int64), v


def tail(times, v, fraction=1 / 3):
    i = measure._tail_start(times, fraction)
    return times[i:], v[i:]


def test_times_in_seconds_are_refused_and_unit_s_takes_them():
    times = np.arange(0, 60_000, 10) * MS
    prio = 144 + 35 * ((times / 1e9) % 3.5 < 0.5)
    in_ns = measure.limit_cycle(times, prio)
    with pytest.raises(ValueError, match=r"^limit_cycle: times are in ns \(sim.series_times\(\)\), "
                                         r"but its samples are 0.01 apart.*look like seconds; "
                                         r"pass unit='s' or multiply them by 1e9"):
        measure.limit_cycle(times / 1e9, prio)
    assert measure.limit_cycle(times / 1e9, prio, unit="s") == in_ns
    assert measure.limit_cycle(times / 1e6, prio, unit="ms") == in_ns
    with pytest.raises(ValueError, match="unit='h' is not one of 'ns', 'us', 'ms', 's'"):
        measure.limit_cycle(times, prio, unit="h")
    # the other measurements refuse seconds too, naming themselves
    with pytest.raises(ValueError, match="^prio_settling_time: times are in ns"):
        measure.prio_settling_time(times / 1e9, prio)


@pytest.mark.parametrize("period", [0.8, 1.3, 2.13, 5.0])
@pytest.mark.parametrize("jitter", [0.05, 0.1])
def test_the_period_of_jittered_spikes_is_their_spacing_whatever_the_runs_length(period, jitter):
    # spikes of 50 ms whose spacing jitters by up to 50-100 ms overlap
    # themselves at no lag: the autocorrelation's peak is smeared over the
    # jitter (and may be too weak, when the spacing of the rises is
    # measured); before, a longer run gave a multiple of the period or none
    # (2.13 s: 8.76 s for 60 s, 2.11 s for 300 s, None for 1,200 s)
    for seconds in (60, 300, 1200):
        cycle = measure.limit_cycle(*tail(*spikes(seconds, period, jitter=jitter)))
        assert cycle.amplitude == 20
        assert abs(cycle.period_s - period) <= jitter, seconds


def test_spikes_at_random_times_have_no_period():
    rng = np.random.default_rng(3)
    times = np.arange(0, 30_000) * 10 * MS
    v = np.where(rng.random(len(times)) < 0.005, 170.0, 150.0)
    assert np.isnan(measure.limit_cycle(times, v).period_s)


def test_a_houston_runs_period_does_not_grow_with_its_length():
    # nice 0 vs 19 at run_avg_halflife=5000, nice_const=3200: the +19 task's
    # prio flickers over 159..161 in a pattern that repeats every 6.25 s;
    # choosing the autocorrelation's peak on the unbiased estimate gave
    # 6.25 s for 300 s and 72.25 s for 1,200 s
    periods = []
    for seconds in (300, 1200):
        sim = ps.Simulator("houston-2003", params={"run_avg_halflife": 5000, "nice_const": 3200},
                           record="series", series_fields=["prio"], series_every=10,
                           max_trace_bytes=1 << 30)
        for nice in (0, 19):
            sim.spawn(ps.programs.cpu_hog(), nice=nice)
        sim.run(seconds=seconds)
        times, prio = tail(sim.series_times(), sim.series("prio")[:, 1])
        periods.append(measure.limit_cycle(times, prio).period_s)
    assert periods[0] == periods[1]


def test_classify_run_names_itself_for_a_misspelt_criterion():
    with pytest.raises(TypeError, match=r"^classify_run\(\) got an unexpected keyword argument "
                                        r"'windw_s'; its criteria \(classify_series's\) are tail, "
                                        r"window_s"):
        measure.classify_run([0, 5], seconds=1, windw_s=10)
    with pytest.raises(TypeError, match=r"classify_series\(\) got an unexpected keyword"):
        measure.classify_series([0, MS], [[0], [1]], [[1], [1]], windw_s=10)
