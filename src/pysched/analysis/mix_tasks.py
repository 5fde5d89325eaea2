"""The tasks of a mixture, as the analyses and the measurements take
them: a nice value (a CPU hog) or (run_ms, sleep_ms[, nice]) (a task that
runs run_ms and sleeps sleep_ms, over and over), and where spawn() puts
them on several CPUs."""
import numpy as np

from .._checks import check_int, check_number

# the package's own: no name here is part of the public API
__all__ = []


def _task(k, t, caller):
    """A task spec: a nice value (a CPU hog), or (run_ms, sleep_ms[, nice])
    or a dict with those keys (a duty-cycled task)."""
    if not isinstance(t, (dict, tuple, list, np.ndarray)):
        if hasattr(t, "__len__") and not isinstance(t, (str, bytes)):
            raise TypeError(f"{caller}: tasks[{k}] is a {type(t).__name__}: give a nice value (a "
                            "CPU hog) or (run_ms, sleep_ms[, nice]) (a task that runs and "
                            "sleeps); the analysis knows no other program's long-run demand")
        return check_int(f"{caller}: tasks[{k}] nice", t, -20, 19), None, None
    if isinstance(t, dict):
        unknown = set(t) - {"run_ms", "sleep_ms", "nice"}
        if unknown:
            raise ValueError(f"{caller}: tasks[{k}] has unknown key(s) {sorted(unknown)}: "
                             "run_ms, sleep_ms and nice are allowed")
        if ("run_ms" in t) != ("sleep_ms" in t):
            raise ValueError(f"{caller}: tasks[{k}] needs both run_ms and sleep_ms, or neither "
                             "(a CPU hog)")
        t = (t["run_ms"], t["sleep_ms"], t.get("nice", 0)) if "run_ms" in t else t.get("nice", 0)
        if not isinstance(t, tuple):
            return _task(k, t, caller)
    if len(t) not in (2, 3):
        raise ValueError(f"{caller}: tasks[{k}]={t!r} is not a nice value (a CPU hog), "
                         "(run_ms, sleep_ms[, nice]) or a dict of those")
    r = check_number(f"{caller}: tasks[{k}] run_ms", t[0], 0, 1e7)
    s = check_number(f"{caller}: tasks[{k}] sleep_ms", t[1], 0, 1e7)
    if r <= 0:
        raise ValueError(f"{caller}: tasks[{k}] run_ms={r:g} must be positive: a task that "
                         "never runs takes no part")
    nice = check_int(f"{caller}: tasks[{k}] nice", t[2] if len(t) == 3 else 0, -20, 19)
    if s <= 0:
        return nice, None, None
    return nice, r, s


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
