"""Jim Houston's integer math (csrc/houston_math.c), as the very C functions
the simulator runs, bit-exact with the patch's 32-bit arithmetic.

``params`` overrides the patch's constants by name (``run_avg_halflife``,
``nice_const``, ``max_run_avg`` ... and ``hz``, default 1000); derived
constants such as ``exp_nice_const`` are recomputed from them.  Arguments
outside a function's domain raise ValueError naming the allowed range.
"""
from . import _core
from ._checks import check_int
from .registry import check_params, formula

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
