"""The O(1) family's steady state of a task that runs r ms and sleeps s ms
beside CPU hogs: the prediction of pysched.analysis.o1 (the kernel's
bookkeeping, no simulation) against the simulator
(pysched.analysis.measure.o1_duty_run)."""
import pytest

import pysched as ps
from pysched.analysis.measure import o1_duty_run
from pysched.analysis.o1 import O1_PRESETS, o1_steady_state

PERIODS_MS = (10, 100, 1000)
DUTIES = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9)


def simulated(p, r, s, **kw):
    # long enough to reach it three times over, and at least 30 s
    return o1_duty_run(r, s, seconds=max(30, 3 * p.reach_s + 2), **kw)


@pytest.mark.parametrize("preset", O1_PRESETS)
def test_within_one_prio_level_and_5_percent_of_sleep_avg_for_duty_1_to_90_percent(preset):
    kinds = set()
    for period in PERIODS_MS:
        for duty in DUTIES:
            r, s = period * duty, period * (1 - duty)
            p = o1_steady_state(r, s, preset=preset)
            m = simulated(p, r, s, preset=preset)
            where = (preset, period, duty, p, m)
            tol = 0.05 * p.max_sleep_avg
            assert abs(p.sleep_avg_low - m.sleep_avg_low) <= tol, where
            assert abs(p.sleep_avg_high - m.sleep_avg_high) <= tol, where
            assert abs(p.prio_low - m.prio_low) <= 1 and abs(p.prio_high - m.prio_high) <= 1, where
            kinds.add(p.kind)
    assert {"top", "bottom"} <= kinds


@pytest.mark.parametrize("kw", [{"nice": 5}, {"nice": -5, "hog_nice": 5}, {"hogs": 0},
                                {"hz": 100, "hogs": 3}, {"hogs": 1, "nice": 10}])
@pytest.mark.slow
def test_the_time_to_reach_it_is_within_a_factor_of_two(kw):
    for preset in ("linux-2.5.64", "linux-2.5.65"):
        for r, s in [(3, 7), (40, 60), (0.5, 30), (333, 667)]:
            p = o1_steady_state(r, s, preset=preset, **kw)
            m = simulated(p, r, s, preset=preset, **kw)
            assert p.kind == "top" or p.reach_s == m.reach_s == 0
            if p.kind == "top":
                assert 0.5 <= p.reach_s / m.reach_s <= 2, (preset, r, s, kw, p.reach_s, m.reach_s)


def test_a_half_duty_task_is_neutral_in_2_5_64_and_drains_in_2_5_65():
    # 50 ms run, 50 ms sleep: 2.5.64 credits the 50 ticks it charges;
    # 2.5.65's "sleep_time - 1" credits 49, and it falls to the bottom
    old = o1_steady_state(50, 50, preset="linux-2.5.64")
    new = o1_steady_state(50, 50, preset="linux-2.5.65")
    assert (old.kind, old.credit_ticks, old.charged_ticks) == ("neutral", 50, 50)
    assert (new.kind, new.credit_ticks, new.charged_ticks) == ("bottom", 49, 50)
    assert "cancel" in old.why and "loses 1 a cycle" in new.why


def test_a_mostly_sleeping_task_wakes_with_the_full_bonus_and_preempts_the_hogs():
    p = o1_steady_state(2, 30, preset="linux-2.5.65")
    assert p.kind == "top" and p.sleep_avg_high == p.max_sleep_avg == 10_000
    assert p.prio_at_wakeup == 115 and p.bonus == 5 and p.interactive
    assert p.hog_prio == 125 and p.preempts
    assert "preempts them at once" in p.why
    # bk4's MAX_SLEEP_AVG of 10 s takes five times 2.5.64's 2 s to fill
    assert o1_steady_state(2, 30, preset="linux-2.5.64").reach_s < p.reach_s / 3


def test_bad_input_names_the_value_and_the_range():
    with pytest.raises(ValueError, match="preset='houston-2003' is not an O\\(1\\) preset"):
        o1_steady_state(1, 9, preset="houston-2003")
    with pytest.raises(ValueError, match="run_ms=-1"):
        o1_steady_state(-1, 9)
    with pytest.raises(ValueError, match="run_ms \\+ sleep_ms must be positive"):
        o1_steady_state(0, 0)
    with pytest.raises(ValueError, match="nice=20"):
        o1_steady_state(1, 9, nice=20)
    with pytest.raises(KeyError, match="max_sleep_avgg"):
        o1_steady_state(1, 9, params={"max_sleep_avgg": 5})
    with pytest.raises(ValueError, match="one task's sleep_avg"):
        ps.analysis.measure.sleep_avg_steady([0, 10**6, 2 * 10**6], [[0, 1]] * 3, [[1, 2]] * 3, tol_ticks=1)


def test_analysis_re_exports_the_pair():
    assert ps.analysis.o1_steady_state is o1_steady_state
    assert ps.analysis.o1_duty_run is o1_duty_run
