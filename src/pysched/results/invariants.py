"""Behaviour invariants of a run: what ``sim.watch()`` watches as the run
goes and ``sim.invariants()`` reports (docs/guide/invariants.md).

- work conservation (Lozi et al., EuroSys 2016, the first of their
  invariants): a CPU idle while a task that may run on it waits for a CPU;
  the core counts each such window, its length, and the first instant one
  lasted longer than the threshold;
- starvation: each task's longest wait for a CPU while runnable (the one in
  progress included), and the first instant a wait passed the threshold;
- fairness against the promise of nice: the spread of CPU share among
  tasks of equal nice;
- accounting honesty: the CPU time a task used against what its policy
  charged it (the ticks it was found running at for the tick-sampled
  policies; CFS and EEVDF charge the nanoseconds).

The first two are kept by the core (csrc/core/watch.c) and can stop a run
at the instant they are broken (stop_on=); the last two are read from the
tasks' counters when the report is made."""
import math
from dataclasses import dataclass, field

import numpy as np

from .._checks import check_number
from ..policy.registry import policy_info, presets

# the package's own: no name here is part of the public API
__all__ = []

WATCH_ON, ASSERT_IDLE, ASSERT_STARVE = 1, 2, 4  # csrc/core/watch.h, PS_WATCH_*
CHECKS = ("work_conservation", "starvation")
NEVER_NS = 2**63 // 4 - 1  # PS_MAX_TIME_NS: no threshold
NS_CHARGED = ("cfs", "eevdf")  # the families whose update_curr charges nanoseconds

TASK_DTYPE = np.dtype([("pid", np.int64), ("name", "U32"), ("nice", np.int64),
                       ("cpu_ns", np.int64), ("charged_ns", np.int64),
                       ("longest_wait_ns", np.int64), ("starved_ns", np.int64)])


def family(preset):
    """The policy family of a built-in preset (o1, houston, linux24, cfs,
    eevdf ...), None for a policy of one's own."""
    return policy_info(preset).get("policy") if preset in presets() else None


def charged_ns(family, stats, tick_ns):
    """The CPU time each task of `stats` was charged by a policy of the
    `family`, ns: the nanoseconds it ran under CFS and EEVDF, the ticks it
    was found running at under every other (a policy of one's own
    included: the ticks are what the machine's accounting saw)."""
    if family in NS_CHARGED:
        return stats["cpu_ns"].astype(np.int64)
    return stats["cpu_ticks"].astype(np.int64) * tick_ns


def configure(sim, idle_while_waiting_ms, starvation_ms, stop_on):
    """The core's watch bits and thresholds for sim.watch's arguments."""
    idle_ms = check_number("idle_while_waiting_ms", idle_while_waiting_ms, 0, NEVER_NS / 1e6)
    if starvation_ms is None:
        starve_ns = NEVER_NS
    else:
        starve_ns = round(check_number("starvation_ms", starvation_ms, 0, NEVER_NS / 1e6) * 1e6)
    if isinstance(stop_on, str):
        stop_on = (stop_on,)
    bits = WATCH_ON
    for what in stop_on:
        if what not in CHECKS:
            raise ValueError(f"watch: stop_on={what!r} is not one of {CHECKS}")
        if what == "starvation" and starvation_ms is None:
            raise ValueError("watch: stop_on='starvation' needs a starvation_ms threshold")
        bits |= ASSERT_IDLE if what == "work_conservation" else ASSERT_STARVE
    sim._core.set_watch(bits, round(idle_ms * 1e6), starve_ns)


@dataclass(frozen=True)
class Invariants:
    """The behaviour invariants of a run up to now.

    watching: whether sim.watch() is on (the windows below are counted from
    when it was turned on; the per-task figures from the start).
    idle_while_waiting_ms: the threshold a window must pass to break work
    conservation; starvation_ms: a wait's (NaN: none set).
    idle_while_waiting_s: the total time some CPU idled while a task that
    may run on it waited; longest_idle_while_waiting_ms, windows: the
    longest such window and how many there were.
    work_conservation_broken_s: the first instant a window had lasted longer
    than the threshold (NaN: never), broken_by: (the idle CPU, the waiting
    task's pid, the CPU it waited on) then.
    tasks: per task, a NumPy structured array of pid, name, nice, cpu_ns,
    charged_ns (what its policy charged it), longest_wait_ns (its longest
    wait for a CPU while runnable) and starved_ns (the first instant a wait
    passed starvation_ms, -1 never).
    share_spread: per nice value held by two tasks or more, the largest
    minus the smallest CPU share (of the run's time) among its tasks."""
    watching: bool
    idle_while_waiting_ms: float
    starvation_ms: float
    idle_while_waiting_s: float
    longest_idle_while_waiting_ms: float
    windows: int
    work_conservation_broken_s: float
    broken_by: tuple
    tasks: np.ndarray = field(repr=False)
    share_spread: dict = field(repr=False)

    @property
    def starved(self):
        """The tasks whose wait passed starvation_ms (a view of tasks)."""
        return self.tasks[self.tasks["starved_ns"] >= 0]

    def __repr__(self):
        wc = ("kept" if math.isnan(self.work_conservation_broken_s) else
              f"broken at {self.work_conservation_broken_s:.6f} s (cpu {self.broken_by[0]} idle, "
              f"pid {self.broken_by[1]} waiting on cpu {self.broken_by[2]})")
        worst = self.tasks[np.argmax(self.tasks["longest_wait_ns"])] if len(self.tasks) else None
        wait = (f"longest wait {worst['longest_wait_ns'] / 1e6:.3f} ms (pid {worst['pid']})"
                if worst is not None else "no task")
        return (f"Invariants(work conservation {wc}; idle while waiting "
                f"{self.idle_while_waiting_s:.6f} s in {self.windows} windows; {wait}; "
                f"{len(self.starved)} starved)")

    def to_frame(self):
        """tasks as a pandas DataFrame indexed by pid, times in s (NaN for
        a task never starved)."""
        from .frames import _pandas
        pd = _pandas("Invariants.to_frame")
        t = self.tasks
        return pd.DataFrame({
            "name": t["name"], "nice": t["nice"], "cpu_s": t["cpu_ns"] / 1e9,
            "charged_s": t["charged_ns"] / 1e9, "longest_wait_s": t["longest_wait_ns"] / 1e9,
            "starved_s": np.where(t["starved_ns"] >= 0, t["starved_ns"] / 1e9, np.nan),
        }, index=pd.Index(t["pid"], name="pid"))


def report(sim):
    """The Invariants of sim up to now."""
    core = sim._core.watch_report()
    stats = sim.stats()
    tasks = np.zeros(len(stats), dtype=TASK_DTYPE)
    for name in ("pid", "name", "nice", "cpu_ns", "starved_ns"):
        tasks[name] = stats[name]
    tasks["longest_wait_ns"] = stats["wait_max_ns"]
    own = sim._policy is not None
    tasks["charged_ns"] = charged_ns(None if own else family(sim.preset), stats,
                                     1_000_000_000 // sim.hz)
    spread = {}
    if sim.now_ns:
        for nice in np.unique(stats["nice"]):
            shares = stats["cpu_ns"][stats["nice"] == nice] / sim.now_ns
            if len(shares) > 1:
                spread[int(nice)] = float(shares.max() - shares.min())
    broken = core["first_ns"]
    starve_ns = core["starve_ns"]
    return Invariants(
        watching=bool(core["watch"] & WATCH_ON),
        idle_while_waiting_ms=core["idle_wait_ns"] / 1e6,
        starvation_ms=math.nan if starve_ns >= NEVER_NS else starve_ns / 1e6,
        idle_while_waiting_s=core["total_ns"] / 1e9,
        longest_idle_while_waiting_ms=core["longest_ns"] / 1e6,
        windows=core["windows"],
        work_conservation_broken_s=math.nan if broken < 0 else broken / 1e9,
        broken_by=None if broken < 0 else (core["first_idle_cpu"], core["first_pid"],
                                           core["first_pid_cpu"]),
        tasks=tasks, share_spread=spread)
