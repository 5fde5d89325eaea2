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
- fairness against the fair policies' own promise: each task's lag (the
  service its cfs_rq owes it, w_i * (V - v_i)), its extremes while
  watched and, under EEVDF, the first instant it was past the bound the
  kernel clamps it to (csrc/policies/fair_watch.c says which bound and
  why); and, over a window, each continuously runnable task's CPU share
  against its weight's fluid share (Invariants.weight_shares);
- accounting honesty: the CPU time a task used against what its policy
  charged it (the ticks it was found running at for the tick-sampled
  policies; CFS and EEVDF charge the nanoseconds).

Work conservation, starvation and the lag are kept by the core
(csrc/core/watch.c, the lag measured by the policy) and can stop a run at
the instant they are broken (stop_on=); the rest is read from the tasks'
counters when the report is made."""
import math
from dataclasses import dataclass, field

import numpy as np

from .._checks import check_bool, check_number
from ..policy.registry import policy_info, presets

# the package's own: no name here is part of the public API
__all__ = []

WATCH_ON, ASSERT_IDLE, ASSERT_STARVE, ASSERT_LAG, LAG, ASSERT_UNCHARGED = 1, 2, 4, 8, 16, 32
CHECKS = ("work_conservation", "starvation", "lag", "accounting")
BITS = {"work_conservation": ASSERT_IDLE, "starvation": ASSERT_STARVE, "lag": ASSERT_LAG | LAG,
        "accounting": ASSERT_UNCHARGED}
NEVER_NS = 2**63 // 4 - 1  # PS_MAX_TIME_NS: no threshold
NS_CHARGED = ("cfs", "eevdf")  # the families whose update_curr charges nanoseconds
FAIR = ("cfs", "eevdf")  # the families whose tasks have a weight and a lag
LAG_NONE = -2**63  # PS_LAG_NONE: a lag never measured

TASK_DTYPE = np.dtype([("pid", np.int64), ("name", "U32"), ("nice", np.int64),
                       ("cpu_ns", np.int64), ("charged_ns", np.int64),
                       ("longest_wait_ns", np.int64), ("starved_ns", np.int64),
                       ("lag_min_ns", np.float64), ("lag_max_ns", np.float64),
                       ("lag_bound_ns", np.float64), ("lag_broken_ns", np.int64),
                       ("weight", np.int64), ("cpu", np.int64), ("wait_ns", np.int64),
                       ("sleep_ns", np.int64), ("nr_migrations", np.int64),
                       ("start_ns", np.int64), ("exit_ns", np.int64), ("policy", np.int64)])

SHARE_DTYPE = np.dtype([("pid", np.int64), ("nice", np.int64), ("weight", np.int64),
                        ("cpu", np.int64), ("share", np.float64), ("fluid_share", np.float64),
                        ("error", np.float64)])


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


def _threshold_ns(what, ms):
    return NEVER_NS if ms is None else round(check_number(what, ms, 0, NEVER_NS / 1e6) * 1e6)


def configure(sim, idle_while_waiting_ms, starvation_ms, stop_on, lag=False, uncharged_ms=None):
    """The core's watch bits and thresholds for sim.watch's arguments."""
    idle_ms = check_number("idle_while_waiting_ms", idle_while_waiting_ms, 0, NEVER_NS / 1e6)
    starve_ns = _threshold_ns("starvation_ms", starvation_ms)
    uncharged_ns = _threshold_ns("uncharged_ms", uncharged_ms)
    if isinstance(stop_on, str):
        stop_on = (stop_on,)
    bits = WATCH_ON | (LAG if check_bool("lag", lag) else 0)
    for what in stop_on:
        if what not in CHECKS:
            raise ValueError(f"watch: stop_on={what!r} is not one of {CHECKS}")
        if what == "starvation" and starvation_ms is None:
            raise ValueError("watch: stop_on='starvation' needs a starvation_ms threshold")
        if what == "accounting" and uncharged_ms is None:
            raise ValueError("watch: stop_on='accounting' needs an uncharged_ms threshold")
        if what == "accounting" and sim._policy is None and family(sim.preset) in NS_CHARGED:
            raise ValueError(f"watch: stop_on='accounting' watches tick-sampled accounting; "
                             f"{sim.preset!r} charges the nanoseconds a task runs "
                             f"(update_curr), which the ticks cannot cheat")
        if what == "lag" and (sim._policy is not None or family(sim.preset) != "eevdf"):
            raise ValueError(f"watch: stop_on='lag' needs an EEVDF preset, whose lag has a bound "
                             f"(the 6.6 and 6.12 clamp); {sim.preset!r} has none (CFS reports "
                             f"its lag unbounded, the others measure none)")
        bits |= BITS[what]
    sim._core.set_watch(bits, round(idle_ms * 1e6), starve_ns, uncharged_ns)


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
    lag_broken_s: the first instant a task's lag was seen past its
    policy's bound (NaN: never; EEVDF only), lag_broken_by: (pid, its lag
    in ns, the bound in ns, its CPU) then.
    uncharged_ms: the CPU time a task's ticks may leave uncharged before
    stop_on="accounting" stops the run (NaN: none set);
    accounting_broken_s: the first instant a task had run longer than its
    ticks charged by more than that (NaN: never), accounting_broken_by:
    (pid, its CPU time in ns, what its ticks charged in ns) then.
    tasks: per task, a NumPy structured array of pid, name, nice, cpu_ns,
    charged_ns (what its policy charged it), longest_wait_ns (its longest
    wait for a CPU while runnable), starved_ns (the first instant a wait
    passed starvation_ms, -1 never); lag_min_ns and lag_max_ns (its most
    negative and most positive lag while watched, ns of service; NaN never
    measured, and for a preset that is not fair), lag_bound_ns (EEVDF: the
    +-bound, max(2 x its slice, a tick); NaN under CFS, which has none),
    lag_broken_ns (the first instant its lag was past it, -1 never); and
    what weight_shares reads: weight (the fair presets' load weight, 0
    for the others), cpu, wait_ns, sleep_ns, nr_migrations, start_ns,
    exit_ns and policy.
    share_spread: per nice value held by two tasks or more, the largest
    minus the smallest CPU share (of the run's time) among its tasks.
    now_ns: when the report was made; fair: whether the preset is one of
    the fair ones (CFS, EEVDF) without task groups, whose weights promise
    a fluid share."""
    watching: bool
    idle_while_waiting_ms: float
    starvation_ms: float
    idle_while_waiting_s: float
    longest_idle_while_waiting_ms: float
    windows: int
    work_conservation_broken_s: float
    broken_by: tuple
    lag_broken_s: float
    lag_broken_by: tuple
    uncharged_ms: float
    accounting_broken_s: float
    accounting_broken_by: tuple
    tasks: np.ndarray = field(repr=False)
    share_spread: dict = field(repr=False)
    now_ns: int = field(repr=False)
    fair: bool = field(repr=False)

    @property
    def starved(self):
        """The tasks whose wait passed starvation_ms (a view of tasks)."""
        return self.tasks[self.tasks["starved_ns"] >= 0]

    @property
    def lag_broken(self):
        """The tasks whose lag was past their policy's bound (a view of tasks)."""
        return self.tasks[self.tasks["lag_broken_ns"] >= 0]

    def weight_shares(self, since=None):
        """Each task's CPU share over the window from `since` (an earlier
        report of the same simulator; None: from t=0) to this report,
        against the fluid share its weight promises: w_i / sum(w) over the
        tasks on its CPU.  A per-task structured array of pid, nice,
        weight, cpu, share (its CPU time over the window's), fluid_share
        and error (share - fluid_share).

        The fluid share is defined only where weights alone set it: on a
        CPU whose tasks in the window (every task there at its end, or
        there at its start) were all alive, normal (not real-time) and
        runnable the whole window on that CPU -- the hogs of a fair
        preset; elsewhere, and for a preset that is not fair or has task
        groups (the share is then the hierarchy's), fluid_share and error
        are NaN."""
        if since is not None and not isinstance(since, Invariants):
            raise TypeError(f"weight_shares: since={since!r} is not an Invariants report")
        t0 = 0 if since is None else since.now_ns
        if t0 > self.now_ns:
            raise ValueError(f"weight_shares: since (t={t0} ns) is later than this report "
                             f"(t={self.now_ns} ns)")
        t = self.tasks
        before = {} if since is None else {int(r["pid"]): r for r in since.tasks}
        out = np.zeros(len(t), dtype=SHARE_DTYPE)
        for name in ("pid", "nice", "weight", "cpu"):
            out[name] = t[name]
        window = self.now_ns - t0
        steady = np.zeros(len(t), dtype=bool)
        cpu_before = t["cpu"].copy()
        for k, row in enumerate(t):
            b = before.get(int(row["pid"]))
            cpu0, sleep0, mig0 = ((b["cpu_ns"], b["sleep_ns"], b["nr_migrations"]) if b is not None
                                  else (0, 0, 0))
            if b is not None:
                cpu_before[k] = b["cpu"]
            out["share"][k] = (row["cpu_ns"] - cpu0) / window if window else math.nan
            steady[k] = (row["start_ns"] <= t0 and row["exit_ns"] < 0 and row["policy"] == 0
                         and row["sleep_ns"] == sleep0 and row["nr_migrations"] == mig0
                         and (b is not None or since is None))
        out["fluid_share"] = out["error"] = math.nan
        if not self.fair or not window:
            return out
        # a CPU is steady when every task there at either end of the window is
        alive = t["exit_ns"] < 0
        for cpu in np.unique(t["cpu"][alive]):
            there = ((t["cpu"] == cpu) | (cpu_before == cpu)) & (alive | (t["exit_ns"] > t0))
            if not steady[there].all():
                continue
            mine = there & steady
            out["fluid_share"][mine] = t["weight"][mine] / t["weight"][mine].sum()
        out["error"] = out["share"] - out["fluid_share"]
        return out

    def __repr__(self):
        wc = ("kept" if math.isnan(self.work_conservation_broken_s) else
              f"broken at {self.work_conservation_broken_s:.6f} s (cpu {self.broken_by[0]} idle, "
              f"pid {self.broken_by[1]} waiting on cpu {self.broken_by[2]})")
        worst = self.tasks[np.argmax(self.tasks["longest_wait_ns"])] if len(self.tasks) else None
        wait = (f"longest wait {worst['longest_wait_ns'] / 1e6:.3f} ms (pid {worst['pid']})"
                if worst is not None else "no task")
        lag = ("" if math.isnan(self.lag_broken_s) else
               f"; lag bound broken at {self.lag_broken_s:.6f} s (pid {self.lag_broken_by[0]}: "
               f"lag {self.lag_broken_by[1]} ns, bound +-{self.lag_broken_by[2]} ns)")
        acct = ("" if math.isnan(self.accounting_broken_s) else
                f"; accounting broken at {self.accounting_broken_s:.6f} s (pid "
                f"{self.accounting_broken_by[0]} ran {self.accounting_broken_by[1]} ns, charged "
                f"{self.accounting_broken_by[2]} ns)")
        return (f"Invariants(work conservation {wc}; idle while waiting "
                f"{self.idle_while_waiting_s:.6f} s in {self.windows} windows; {wait}; "
                f"{len(self.starved)} starved{lag}{acct})")

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
            "lag_min_s": t["lag_min_ns"] / 1e9, "lag_max_s": t["lag_max_ns"] / 1e9,
            "lag_bound_s": t["lag_bound_ns"] / 1e9,
            "lag_broken_s": np.where(t["lag_broken_ns"] >= 0, t["lag_broken_ns"] / 1e9, np.nan),
        }, index=pd.Index(t["pid"], name="pid"))


def report(sim):
    """The Invariants of sim up to now."""
    core = sim._core.watch_report()
    stats = sim.stats()
    tasks = np.zeros(len(stats), dtype=TASK_DTYPE)
    for name in ("pid", "name", "nice", "cpu_ns", "starved_ns"):
        tasks[name] = stats[name]
    tasks["longest_wait_ns"] = stats["wait_max_ns"]
    for name in ("cpu", "wait_ns", "sleep_ns", "nr_migrations", "start_ns", "exit_ns",
                 "policy", "lag_broken_ns"):
        tasks[name] = stats[name]
    own = sim._policy is not None
    fam = None if own else family(sim.preset)
    tick_ns = 1_000_000_000 // sim.hz
    tasks["charged_ns"] = charged_ns(fam, stats, tick_ns)
    for name in ("lag_min_ns", "lag_max_ns"):
        tasks[name] = np.where(stats[name] == LAG_NONE, np.nan, stats[name])
    tasks["lag_bound_ns"] = (np.maximum(2 * stats["slice"], tick_ns) if fam == "eevdf"
                             else np.nan)
    tasks["weight"] = stats["weight"] if fam in FAIR else 0
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
        lag_broken_s=math.nan if core["lag_at_ns"] < 0 else core["lag_at_ns"] / 1e9,
        lag_broken_by=None if core["lag_at_ns"] < 0 else (core["lag_pid"], core["lag_ns"],
                                                          core["lag_bound_ns"], core["lag_cpu"]),
        uncharged_ms=math.nan if core["uncharged_ns"] >= NEVER_NS else core["uncharged_ns"] / 1e6,
        accounting_broken_s=(math.nan if core["uncharged_at_ns"] < 0
                             else core["uncharged_at_ns"] / 1e9),
        accounting_broken_by=None if core["uncharged_at_ns"] < 0 else (
            core["uncharged_pid"], core["uncharged_cpu_ns"], core["uncharged_charged_ns"]),
        tasks=tasks, share_spread=spread, now_ns=sim.now_ns,
        fair=fam in FAIR and len(sim.groups()) == 1)
