"""The O(1) formulas, as the simulator's own C computes them, against the
fact sheet (§2-§3) and a literal Python model."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pysched as ps
from o1_model import effective_prio, task_interactive, task_timeslice

PRESETS = {"linux-2.5.64": 2000, "linux-2.5.64-bk4": 10000, "linux-2.5.65": 10000}


@pytest.mark.parametrize("preset,max_sleep_avg", PRESETS.items())
def test_effective_prio_for_every_nice_and_sleep_avg(preset, max_sleep_avg):
    for nice in range(-20, 20):
        for sleep_avg in range(0, max_sleep_avg + 1, 7):
            assert ps.analysis.o1.effective_prio(120 + nice, sleep_avg, preset=preset) == effective_prio(
                120 + nice, sleep_avg, max_sleep_avg)


@given(static_prio=st.integers(100, 139), sleep_avg=st.integers(0, 1_000_000),
       max_sleep_avg=st.integers(1, 1_000_000), ratio=st.integers(0, 100))
def test_effective_prio_matches_the_model_for_any_parameters(static_prio, sleep_avg,
                                                            max_sleep_avg, ratio):
    sleep_avg = min(sleep_avg, max_sleep_avg)
    params = {"max_sleep_avg": max_sleep_avg, "prio_bonus_ratio": ratio}
    assert ps.analysis.o1.effective_prio(static_prio, sleep_avg, params=params) == effective_prio(
        static_prio, sleep_avg, max_sleep_avg, ratio)


@pytest.mark.parametrize("sleep_avg_64,sleep_avg_65,bonus", [
    (0, 0, -5), (500, 2500, -3), (999, 4999, -1), (1000, 5000, 0), (1999, 9999, 4),
    (2000, 10000, 5)])
def test_effective_prio_worked_values_of_the_fact_sheet(sleep_avg_64, sleep_avg_65, bonus):
    assert ps.analysis.o1.effective_prio(120, sleep_avg_64, preset="linux-2.5.64") == 120 - bonus
    assert ps.analysis.o1.effective_prio(120, sleep_avg_65, preset="linux-2.5.65") == 120 - bonus


def test_bonus_clamps_at_the_ends_of_the_normal_range():
    assert ps.analysis.o1.effective_prio(100, 2000) == 100  # nice -20 cannot reach RT prios
    assert ps.analysis.o1.effective_prio(139, 0) == 139     # nice +19 cannot fall off the end


# The kernel comment's table: the minimum sleep_avg bonus at which each nice
# level is interactive ("never" for +19); columns nice -20,-10,-5,0,5,10,19.
INTERACTIVE_MIN_SLEEP = {-20: (400, 2000), -10: (1000, 5000), -5: (1200, 6000),
                         0: (1400, 7000), 5: (1600, 8000), 10: (1800, 9000), 19: (None, None)}


@pytest.mark.parametrize("nice", sorted(INTERACTIVE_MIN_SLEEP))
@pytest.mark.parametrize("preset,col", [("linux-2.5.64", 0), ("linux-2.5.65", 1)])
def test_task_interactive_table_of_the_kernel_comment(nice, preset, col):
    smax = PRESETS[preset]
    first = next((s for s in range(smax + 1) if ps.analysis.o1.task_interactive(
        ps.analysis.o1.effective_prio(120 + nice, s, preset=preset), 120 + nice, preset=preset)), None)
    want = INTERACTIVE_MIN_SLEEP[nice][col]
    if want is None:
        assert first is None
    else:
        # the threshold lies on the bonus step that starts at `want`
        assert first == want


@given(prio=st.integers(100, 139), static_prio=st.integers(100, 139))
def test_task_interactive_matches_the_model(prio, static_prio):
    assert ps.analysis.o1.task_interactive(prio, static_prio) == task_interactive(prio, static_prio)


def test_delta_truncates_toward_zero_so_nice_minus3_to_plus3_share_delta_2():
    for nice in range(-3, 4):
        assert ps.analysis.o1.task_interactive(120 + nice - 2, 120 + nice)
        assert not ps.analysis.o1.task_interactive(120 + nice - 1, 120 + nice)


@pytest.mark.parametrize("preset,table", [
    ("linux-2.5.64", {-20: 300, -10: 225, 0: 151, 10: 76, 19: 10}),
    ("linux-2.5.65", {-20: 200, -10: 151, 0: 102, 10: 53, 19: 10})])
def test_task_timeslice_worked_values(preset, table):
    for nice, ticks in table.items():
        assert ps.analysis.o1.task_timeslice(120 + nice, preset=preset) == ticks


@pytest.mark.parametrize("preset,max_ts", [("linux-2.5.64", 300), ("linux-2.5.64-bk4", 200),
                                           ("linux-2.5.65", 200)])
def test_task_timeslice_for_every_nice(preset, max_ts):
    slices = [ps.analysis.o1.task_timeslice(120 + n, preset=preset) for n in range(-20, 20)]
    assert slices == [task_timeslice(120 + n, max_ts) for n in range(-20, 20)]
    assert slices == sorted(slices, reverse=True)


@pytest.mark.parametrize("preset,limit", [("linux-2.5.64", 2000), ("linux-2.5.65", 10000)])
def test_expired_starving_threshold_is_limit_times_nr_running_plus_one(preset, limit):
    ts = 1000
    for nr in (1, 3, 7):
        threshold = limit * nr + 1
        assert not ps.analysis.o1.expired_starving(ts, ts + threshold - 1, nr, preset=preset)
        assert ps.analysis.o1.expired_starving(ts, ts + threshold, nr, preset=preset)
    assert not ps.analysis.o1.expired_starving(0, 10**9, 3, preset=preset)  # nothing expired yet


def test_expired_starving_examples_of_the_fact_sheet():
    assert ps.analysis.o1.expired_starving(1, 1 + 6001, 3, preset="linux-2.5.64")
    assert not ps.analysis.o1.expired_starving(1, 1 + 6000, 3, preset="linux-2.5.64")
    assert ps.analysis.o1.expired_starving(1, 1 + 30001, 3, preset="linux-2.5.65")


def test_starvation_limit_zero_means_one_tick_in_2_5_64_and_off_from_bk4():
    assert ps.analysis.o1.expired_starving(5, 6, 3, params={"starvation_limit": 0})
    assert not ps.analysis.o1.expired_starving(5, 10**6, 3, preset="linux-2.5.65",
                                      params={"starvation_limit": 0})
