"""EEVDF (linux-6.6-eevdf, linux-6.12-eevdf): weighted shares, eligibility
and virtual deadlines, lag kept across sleep with its clamp, placement of
new and woken tasks, per-task slices with PREEMPT_SHORT.  Expected values
come from the weight table of workloads.md §4 and the kernel's formulas as
written here, not from the simulator."""
import pytest

import pysched as ps
from pysched import Program, programs

EEVDF = ["linux-6.6-eevdf", "linux-6.12-eevdf"]

# kernel/sched/core.c sched_prio_to_weight, nice -20..19 (workloads.md §4)
WEIGHT = [88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
          9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
          1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
          110, 87, 70, 56, 45, 36, 29, 23, 18, 15]


def weight(nice):
    return WEIGHT[nice + 20]


def calc_delta_fair(delta, nice):
    """delta * 1024 / w, as __calc_delta computes it: wmult = 2^32 / w
    (rounded, sched_prio_to_wmult), fact = 1024 * wmult shifted to 32 bits."""
    w = weight(nice)
    if w == 1024:
        return delta
    wmult = round(2**32 / w)
    fact, shift = 1024 * wmult, 32
    while fact >> 32:
        fact >>= 1
        shift -= 1
    return (delta * fact) >> shift


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
