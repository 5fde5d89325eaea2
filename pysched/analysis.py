"""Equilibrium analysis of scheduler policies."""
import math

import numpy as np

from . import houston
from ._checks import check_int

LN2 = math.log(2)


def _patch_log(x):
    """The patch's logarithm of x = run_avg/MAX_RUN_AVG in (0, 1]: the
    linear approximation 2*ln2*(m - 1) of ln(m) on the mantissa m in
    [0.5, 1) plus ln2 times the binary exponent (effective_prio)."""
    e = math.floor(math.log2(x)) + 1
    m = x / 2.0**e
    return 2 * LN2 * (m - 1) + LN2 * e


def _patch_exp(y):
    """The inverse of _patch_log."""
    e = math.floor(y / LN2) + 1
    m = (y / LN2 - e + 2) / 2
    return m * 2.0**e


def houston_equilibrium(nices, *, params=None, log="patch", cpus=1):
    """Shares of CPU-bound tasks of the given nice values on `cpus` CPUs
    under houston-2003, from the patch's argument: they settle where their
    dynamic priorities are equal,

        static_i + prio_offset + L(run_avg_i / MAX_RUN_AVG) / k = P  for all i,

    with k = nice_const / 65536 and run_avg_i proportional to task i's CPU
    share s_i (a task that always runs settles at a fraction F of
    MAX_RUN_AVG).  With L = ln this gives s_i / s_j = exp(k (static_j -
    static_i)); log="patch" uses the patch's piecewise-linear logarithm
    instead (what effective_prio computes, up to integer truncation).  On
    several CPUs the shares add up to `cpus` with none above one CPU (as a
    perfect balancer would give them: the tasks that would want more than a
    CPU get one each, the rest share what is left).

    Returns a dict: shares (array, sums to min(cpus, tasks)), prio (the equilibrium dynamic
    priority P, absolute, unrounded), run_avg (array), ratio (largest over
    smallest share)."""
    if isinstance(nices, (str, bytes)) or not hasattr(nices, "__iter__"):
        raise TypeError(f"nices must be a list of nice values, not {nices!r}")
    nices = [check_int("nice", n, -20, 19) for n in nices]
    if not nices:
        raise ValueError("nices is empty: give at least one nice value")
    cpus = check_int("cpus", cpus, 1, 64)
    if log not in ("patch", "exp"):
        raise ValueError(f"log={log!r} is not one of ('patch', 'exp')")
    c = houston.constants(params)
    k = c["nice_const"] / 65536.0
    # the fixed point of a task that always runs: increment balances decay
    decay = 2.0 ** (-1.0 / c["run_avg_halflife"])
    full = min(1.0, c["run_avg_increment"] / (1.0 - decay) / c["max_run_avg"])
    static = np.array([160 + n for n in nices], dtype=float)
    inv = _patch_exp if log == "patch" else math.exp

    def shares_at(p):
        y = (p - static - c["prio_offset"]) * k
        return np.array([min(inv(v), full) / full for v in y])

    total = min(cpus, len(nices))
    lo, hi = static.min() + c["prio_offset"] - 200, static.max() + c["prio_offset"] + 1
    for _ in range(200):
        mid = (lo + hi) / 2
        if shares_at(mid).sum() >= total:
            hi = mid
        else:
            lo = mid
    s = shares_at(hi)
    s = s * total / s.sum()
    return {"shares": s, "prio": (lo + hi) / 2, "run_avg": s * full * c["max_run_avg"],
            "ratio": float(s.max() / s.min())}


# the stability of the loop whose fixed point houston_equilibrium gives, and
# the measurements of a run that check it: modules of their own, re-exported
# here
from .stability import Stability, houston_stability  # noqa: E402, F401
from .measure import (LimitCycle, MeasuredRun, PrioSettling, Settling,  # noqa: E402, F401
                      SleepAvgRun, classify_run, classify_series, limit_cycle, o1_duty_run,
                      prio_settling_time, settling_time, sleep_avg_steady, window_shares)
# the O(1) family's steady state of a task that runs and sleeps, and its check
from .o1_steady import O1SteadyState, o1_steady_state  # noqa: E402, F401
