"""The tasks of a mixture, as the analyses and the measurements take
them: a nice value (a CPU hog) or (run_ms, sleep_ms[, nice]) (a task that
runs run_ms and sleeps sleep_ms, over and over), and where spawn() puts
them on several CPUs."""
import numpy as np

from .._checks import check_int, check_number

# the package's own: no name here is part of the public API
__all__ = []


def duty_cycle(k, t, caller):
    """(run_ms, sleep_ms, nice) of tasks[k], a task that runs run_ms and
    sleeps sleep_ms over and over, given as (run_ms, sleep_ms[, nice]) or
    a dict with those keys; errors name `caller`."""
    if isinstance(t, dict):
        unknown = set(t) - {"run_ms", "sleep_ms", "nice"}
        if unknown:
            raise ValueError(f"{caller}: tasks[{k}] has unknown key(s) {sorted(unknown)}: "
                             "run_ms, sleep_ms and nice are allowed")
        if "run_ms" not in t or "sleep_ms" not in t:
            raise ValueError(f"{caller}: tasks[{k}] needs both run_ms and sleep_ms")
        t = (t["run_ms"], t["sleep_ms"], t.get("nice", 0))
    if isinstance(t, (str, bytes)) or not hasattr(t, "__len__") or len(t) not in (2, 3):
        raise ValueError(f"{caller}: tasks[{k}]={t!r} is not (run_ms, sleep_ms[, nice]) or a "
                         "dict of those")
    r = check_number(f"{caller}: tasks[{k}] run_ms", t[0], 0, 1e7)
    s = check_number(f"{caller}: tasks[{k}] sleep_ms", t[1], 0, 1e7)
    if r <= 0:
        raise ValueError(f"{caller}: tasks[{k}] run_ms={r:g} must be positive: a task that "
                         "never runs takes no part")
    nice = check_int(f"{caller}: tasks[{k}] nice", t[2] if len(t) == 3 else 0, -20, 19)
    return r, s, nice


def _task(k, t, caller):
    """(nice, run_ms, sleep_ms) of tasks[k]: a nice value or {"nice": n}
    (a CPU hog, run_ms and sleep_ms None), else a duty_cycle (one that
    never sleeps is a hog)."""
    if isinstance(t, dict) and "run_ms" not in t and "sleep_ms" not in t:
        unknown = set(t) - {"nice"}
        if unknown:
            raise ValueError(f"{caller}: tasks[{k}] has unknown key(s) {sorted(unknown)}: "
                             "run_ms, sleep_ms and nice are allowed")
        t = t.get("nice", 0)
    if not isinstance(t, (dict, tuple, list, np.ndarray)):
        if hasattr(t, "__len__") and not isinstance(t, (str, bytes)):
            raise TypeError(f"{caller}: tasks[{k}] is a {type(t).__name__}: give a nice value (a "
                            "CPU hog) or (run_ms, sleep_ms[, nice]) (a task that runs and "
                            "sleeps); the analysis knows no other program's long-run demand")
        return check_int(f"{caller}: tasks[{k}] nice", t, -20, 19), None, None
    r, s, nice = duty_cycle(k, t, caller)
    return (nice, None, None) if s <= 0 else (nice, r, s)


def task_specs(tasks, caller):
    """The tasks as (nice, run_ms, sleep_ms) triples, run_ms and sleep_ms
    None for a CPU hog."""
    if isinstance(tasks, (str, bytes, dict)) or not hasattr(tasks, "__iter__"):
        raise TypeError(f"{caller}: tasks must be a list of nice values (CPU hogs) and "
                        f"(run_ms, sleep_ms[, nice]) duty cycles, not {tasks!r}")
    specs = [_task(k, t, caller) for k, t in enumerate(tasks)]
    if not specs:
        raise ValueError(f"{caller}: tasks is empty: give at least one task")
    return specs


def placement(n, cpus):
    """The CPU spawn() puts each of n tasks on, spawned in order on idle
    CPUs: the one with the fewest tasks, the lowest on a tie."""
    count = [0] * cpus
    out = []
    for _ in range(n):
        c = count.index(min(count))
        count[c] += 1
        out.append(c)
    return out
