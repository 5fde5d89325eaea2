"""The O(1) family's formulas, as the very C functions the simulator runs.

``params`` overrides the preset's parameters, as in Simulator(params=...).
"""
from ._checks import check_int
from .registry import formula


def _call(fn, preset, params, *args):
    return formula(preset, fn, *args, params=params)


def effective_prio(static_prio, sleep_avg, *, preset="linux-2.5.64", params=None):
    """Dynamic priority of a normal task: static_prio minus a -5..+5 bonus from sleep_avg."""
    static_prio = check_int("static_prio", static_prio, 100, 139)
    sleep_avg = check_int("sleep_avg", sleep_avg, 0, 2**32 - 1)
    return _call("effective_prio", preset, params, static_prio, sleep_avg)


def task_timeslice(static_prio, *, preset="linux-2.5.64", params=None):
    """Timeslice in ticks: MIN + (MAX - MIN) * (139 - static_prio) / 39."""
    static_prio = check_int("static_prio", static_prio, 100, 139)
    return _call("task_timeslice", preset, params, static_prio)


def task_interactive(prio, static_prio, *, preset="linux-2.5.64", params=None):
    """TASK_INTERACTIVE: prio <= static_prio - DELTA(nice)."""
    prio = check_int("prio", prio, 0, 140)
    static_prio = check_int("static_prio", static_prio, 100, 139)
    return bool(_call("task_interactive", preset, params, prio, static_prio))


def expired_starving(expired_timestamp, jiffies, nr_running, *, preset="linux-2.5.64", params=None):
    """EXPIRED_STARVING: the expired array has waited STARVATION_LIMIT * nr_running + 1 ticks."""
    expired_timestamp = check_int("expired_timestamp", expired_timestamp, 0, 2**32 - 1)
    jiffies = check_int("jiffies", jiffies, 0, 2**32 - 1)
    nr_running = check_int("nr_running", nr_running, 0, 2**32 - 1)
    return bool(_call("expired_starving", preset, params, expired_timestamp, jiffies, nr_running))
