"""What a search maximises: a number measured on one run of a workload,
larger for worse behaviour.  An objective is any picklable callable
run -> float (run: a Run); the ones here cover the misbehaviours the
search was built for, and each gives per task what it measured
(per_task), for the result's table and plot."""
from dataclasses import dataclass

import numpy as np

from ..results.invariants import LAG_NONE, charged_ns, family

# the package's own: the public names are pysched.search's
__all__ = []

# kernel/sched/core.c, sched_prio_to_weight (docs/schedulers/cfs.md, the
# weights): nice -20 .. 19
NICE_WEIGHT = (88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
               9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
               1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
               110, 87, 70, 56, 45, 36, 29, 23, 18, 15)


@dataclass(frozen=True)
class Run:
    """One run of a workload, as an objective sees it: the tasks' stats()
    at its end, the searched tasks' pids (the others are background), the
    run's length in ns, the tick in ns, the CPUs and the preset."""
    stats: np.ndarray
    searched: tuple
    window_ns: int
    tick_ns: int
    cpus: int
    preset: str
    idle_while_waiting_ns: int = 0   # sim.invariants(), for an objective that watches

    def share(self):
        """Each task's CPU time over the run's length (1.0: one whole CPU)."""
        return self.stats["cpu_ns"] / self.window_ns

    def charged(self):
        """Each task's CPU time as its policy charged it, over the run's
        length: the ticks it was found running at for the tick-sampled
        policies, the nanoseconds it ran for CFS and EEVDF."""
        return charged_ns(family(self.preset), self.stats, self.tick_ns) / self.window_ns

    def mask(self):
        return np.isin(self.stats["pid"], self.searched)


class Objective:
    """Base of the objectives here: score(run) is the largest of
    per_task(run) over the searched tasks."""
    name = "objective"
    unit = ""

    def per_task(self, run):
        raise NotImplementedError

    def __call__(self, run):
        v = self.per_task(run)[run.mask()]
        return float(v.max()) if len(v) else 0.0

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))


class UnchargedShare(Objective):
    """A task's share of a CPU minus the share it was charged (Tsafrir,
    Etsion and Feitelson's cheat: on tick-sampled accounting, a task that
    runs between ticks and sleeps across each one is never charged)."""
    name = "uncharged_share"
    unit = "of a CPU"

    def per_task(self, run):
        return run.share() - run.charged()


class ShareAboveFair(Objective):
    """A task's share of the machine minus what its weight promises it
    (sched_prio_to_weight's share of all tasks, at most one CPU), in CPUs."""
    name = "share_above_fair"
    unit = "CPUs"

    def per_task(self, run):
        w = np.array([NICE_WEIGHT[n + 20] for n in run.stats["nice"]], dtype=float)
        fair = np.minimum(w / w.sum() * run.cpus, 1.0)
        return run.share() - fair


class WorstWakeupLatency(Objective):
    """A task's longest wait from a wakeup to running, in ms."""
    name = "worst_wakeup_latency"
    unit = "ms"

    def per_task(self, run):
        return run.stats["lat_max_ns"] / 1e6


class LongestWait(Objective):
    """A task's longest wait for a CPU while runnable, in ms (starvation)."""
    name = "longest_wait"
    unit = "ms"

    def per_task(self, run):
        return run.stats["wait_max_ns"] / 1e6


class IdleWhileWaiting(Objective):
    """The time some CPU idled while a task that may run on it waited, over
    the run's length (work conservation); a run-level value, per task 0."""
    name = "idle_while_waiting"
    unit = "of the run"
    watch = True

    def per_task(self, run):
        return np.zeros(len(run.stats))

    def __call__(self, run):
        return run.idle_while_waiting_ns / run.window_ns


class LargestLag(Objective):
    """A fair task's largest lag, either way, in ms of service: what its
    cfs_rq owed it or had given it beyond its weight's share (EEVDF's
    kernels clamp it to max(2 x slice, a tick)); 0 under the other
    presets, which keep no lag."""
    name = "largest_lag"
    unit = "ms"
    watch = "lag"

    def per_task(self, run):
        lo, hi = run.stats["lag_min_ns"], run.stats["lag_max_ns"]
        seen = lo != LAG_NONE
        return np.where(seen, np.maximum(np.abs(lo), np.abs(hi)), 0) / 1e6


def longest_wait():
    return LongestWait()


def largest_lag():
    return LargestLag()


def idle_while_waiting():
    return IdleWhileWaiting()


def uncharged_share():
    return UnchargedShare()


def share_above_fair():
    return ShareAboveFair()


def worst_wakeup_latency():
    return WorstWakeupLatency()


def name_of(objective):
    return getattr(objective, "name", None) or getattr(objective, "__name__", None) \
        or type(objective).__name__
