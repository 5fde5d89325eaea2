"""Jim Houston's integer math (csrc/houston_math.c), as the very C functions
the simulator runs, bit-exact with the patch's 32-bit arithmetic, and the
patch's argument for where its loop settles (houston_equilibrium).

``params`` overrides the patch's constants by name (``run_avg_halflife``,
``nice_const``, ``max_run_avg`` ... and ``hz``, default 1000); derived
constants such as ``exp_nice_const`` are recomputed from them.  Arguments
outside a function's domain raise ValueError naming the allowed range.
"""
import math
import warnings
from dataclasses import dataclass

import numpy as np

from .. import _core
from .result import Result
from .._checks import check_int
from ..policy.registry import check_params, formula

PRESET = "houston-2003"

INT32_MAX = 2**31 - 1
MAX_HALF_LIFE = 45426          # above it, decay_value's `as` becomes 0
MAX_PRIO = 180
MAX_PRIO_AVG = 80 * 1024
STATIC_PRIO = (140, 179)       # NICE_TO_PRIO(-20) .. NICE_TO_PRIO(19)
PRIO_DIFF = (-131072, 131071)  # estimate_run_avg multiplies by 0x4000


def _split(params):
    if params is not None and not isinstance(params, dict):
        raise TypeError(f"params must be a dict, not {type(params).__name__}")
    params = dict(params or {})
    hz = check_int("hz", params.pop("hz", 1000), 1, 100_000)
    return hz, params


def constants(params=None):
    """Every constant of the patch's math, primary and derived, after the
    overrides in params: a dict (nice_const, exp_nice_const, log_2, ...)."""
    hz, params = _split(params)
    return _core.derived(PRESET, hz, check_params(PRESET, params, hz))


def _call(fn, params, *args):
    hz, rest = _split(params)
    return formula(PRESET, fn, *args, params=rest, hz=hz)


def decay_value(value, delta_time, half_life, *, params=None):
    """value * 0.5**(delta_time/half_life) by the patch's shift cascade and
    three-term exponential (floored at min_run_avg)."""
    k = constants(params)
    value = check_int("value", value, 0, k["max_run_avg"])
    delta_time = check_int("delta_time", delta_time, 0, INT32_MAX)
    half_life = check_int("half_life", half_life, 1, MAX_HALF_LIFE)
    return _call("decay_value", params, value, delta_time, half_life)


def get_increment(half_life, max, *, params=None):
    """What a running task adds to its average each tick, so that a task
    that always runs settles near `max`."""
    half_life = check_int("half_life", half_life, 1, MAX_HALF_LIFE)
    max = check_int("max", max, 0, INT32_MAX // (MAX_HALF_LIFE // half_life))
    return _call("get_increment", params, half_life, max)


def effective_prio(run_avg, static_prio, sleep_avg, *, params=None):
    """static_prio + prio_offset + log(run_avg/MAX_RUN_AVG)/nice_const
    - sleep_avg_nice*sleep_avg/MAX_SLEEP_AVG, clamped to 100..179."""
    k = constants(params)
    run_avg = check_int("run_avg", run_avg, 0, INT32_MAX)
    static_prio = check_int("static_prio", static_prio, *STATIC_PRIO)
    sleep_avg = check_int("sleep_avg", sleep_avg, 0, k["max_sleep_avg"])
    return _call("effective_prio", params, run_avg, static_prio, sleep_avg)


def estimate_run_avg(prio_diff, max, *, params=None):
    """effective_prio run backwards: the run_avg (scaled to `max`) of a task
    prio_diff levels better than static_prio + prio_offset."""
    prio_diff = check_int("prio_diff", prio_diff, *PRIO_DIFF)
    max = check_int("max", max, 0, INT32_MAX)
    return _call("estimate_run_avg", params, prio_diff, max)


def task_timeslice(prio, static_prio, policy="normal", *, params=None):
    """Ticks of timeslice: longer the further prio lies above static_prio
    (SCHED_RR: by static_prio, as in 2.5)."""
    if policy not in ("normal", "fifo", "rr"):
        raise ValueError(f"policy {policy!r} is not one of ['fifo', 'normal', 'rr']")
    prio = check_int("prio", prio, 0, MAX_PRIO)
    static_prio = check_int("static_prio", static_prio, *STATIC_PRIO)
    return _call("task_timeslice", params, prio, static_prio, int(policy == "rr"))


def update_prio_avg(prio_avg, prio, *, params=None):
    """One tick of the runqueue's prio_avg with a task of `prio` running
    (the idle task has prio 180); returns the new value."""
    prio_avg = check_int("prio_avg", prio_avg, 0, MAX_PRIO_AVG)
    prio = check_int("prio", prio, 0, MAX_PRIO)
    return _call("update_prio_avg", params, prio_avg, prio)


# ---- the patch's argument made numeric: where the loop settles ----

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


def _equal_prio_shares(c, static, total, *, log="patch", cap=None):
    """The patch's argument made numeric: the shares at which tasks of
    the given static prios (floats; a sleeper's may be lowered by its
    sleep_avg bonus) have one dynamic prio P, adding up to `total`, each
    at most `cap` (per task; None: a whole CPU).  c: constants().  Returns
    (shares, P, full), full the run_avg share of MAX_RUN_AVG of a task
    that always runs."""
    k = c["nice_const"] / 65536.0
    # the fixed point of a task that always runs: increment balances decay
    decay = 2.0 ** (-1.0 / c["run_avg_halflife"])
    full = min(1.0, c["run_avg_increment"] / (1.0 - decay) / c["max_run_avg"])
    inv = _patch_exp if log == "patch" else math.exp
    cap = np.ones(len(static)) if cap is None else cap

    def shares_at(p):
        y = (p - static - c["prio_offset"]) * k
        return np.minimum([min(inv(v), full) / full for v in y], cap)

    lo, hi = static.min() + c["prio_offset"] - 200, static.max() + c["prio_offset"] + 1
    for _ in range(200):
        mid = (lo + hi) / 2
        if shares_at(mid).sum() >= total:
            hi = mid
        else:
            lo = mid
    s = shares_at(hi)
    return s * total / s.sum(), (lo + hi) / 2, full


@dataclass(repr=False)
class Equilibrium(Result):
    """houston_equilibrium's fixed point (a Result: short repr, as_dict(),
    to_frame()).

    kind: "fixed point"; why: the argument in words.  shares: **the
    shares to plot** -- each task's CPU share at the fixed point, in the
    order of `nices`, adding up to min(cpus, tasks).  prio: the
    equilibrium dynamic priority P (absolute, unrounded); run_avg: each
    task's run_avg there; ratio: the largest share over the smallest.

    Until 0.2 houston_equilibrium returned a dict of these four: eq["shares"]
    still reads eq.shares, with a FutureWarning."""
    SHOWN_FIELDS = ("shares", "ratio")

    kind: str
    shares: np.ndarray
    prio: float
    run_avg: np.ndarray
    ratio: float
    why: str

    def _old(self, key):
        if key not in ("shares", "prio", "run_avg", "ratio"):
            raise KeyError(key)
        warnings.warn(f"houston_equilibrium returns an Equilibrium, no longer a dict: "
                      f"eq[{key!r}] is eq.{key}; the dict's form goes in the next release",
                      FutureWarning, stacklevel=3)
        return getattr(self, key)

    def __getitem__(self, key):
        return self._old(key)

    def keys(self):
        """The old dict's keys (a FutureWarning): dict(eq) gives the old dict."""
        warnings.warn("houston_equilibrium returns an Equilibrium, no longer a dict: use its "
                      "fields, or as_dict()", FutureWarning, stacklevel=2)
        return ["shares", "prio", "run_avg", "ratio"]


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

    Returns an Equilibrium: shares (the ones to plot; they sum to
    min(cpus, tasks)), prio (the equilibrium dynamic priority P, absolute,
    unrounded), run_avg, ratio (largest over smallest share), why."""
    if isinstance(nices, (str, bytes)) or not hasattr(nices, "__iter__"):
        raise TypeError(f"nices must be a list of nice values, not {nices!r}")
    nices = [check_int("nice", n, -20, 19) for n in nices]
    if not nices:
        raise ValueError("nices is empty: give at least one nice value")
    cpus = check_int("cpus", cpus, 1, _core.MAX_CPUS)
    if log not in ("patch", "exp"):
        raise ValueError(f"log={log!r} is not one of ('patch', 'exp')")
    c = constants(params)
    static = np.array([160 + n for n in nices], dtype=float)
    s, prio, full = _equal_prio_shares(c, static, min(cpus, len(nices)), log=log)
    ratio = float(s.max() / s.min())
    why = (f"CPU hogs of nice {', '.join(map(str, nices))} settle where their dynamic priorities "
           f"are equal, at prio {prio:.2f} ({'the patch' if log == 'patch' else 'the exact'}"
           f"'s logarithm of run_avg / MAX_RUN_AVG over nice_const = {c['nice_const']}"
           f"{f', {cpus} CPUs' if cpus > 1 else ''}): shares "
           f"{', '.join(f'{x:.3g}' for x in s)}, the largest {ratio:.3g} times the smallest.")
    return Equilibrium("fixed point", s, prio, s * full * c["max_run_avg"], ratio, why)
