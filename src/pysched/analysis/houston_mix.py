"""What houston-2003's feedback loop does with any set of tasks: CPU hogs
and tasks that run r ms and sleep s ms, of any nice, on one CPU or
several -- per task its share, prio, run_avg and sleep_avg, and for the
whole the kind (settles, cycles, starves and which task), the settling
time, the cycle's period and amplitude, and why.  No simulator runs:
everything comes from the patch's formulas (the very C the simulator
runs, through pysched.analysis.houston) applied to the loop's state.

The pair analysis (pysched.analysis.stability) reduces the loop to the
return map of one task against the other's prio.  With more tasks, and
with tasks that sleep, one task's turn depends on the order in which
several others' prios cross its own, so the map is followed for all of
them at once -- the loop's state and nothing else: per task run_avg,
its timestamp, sleep_avg, prio, the slice left, the place in the queue,
and for a duty-cycled task the burst left or the jiffy its timer fires.
It moves from event to event, never tick by tick: between two events the
running task's run_avg takes the ticks in one step of
update_run_avg_running, its slice and sleep_avg count them down.  The
events, in the patch's order at one jiffy (scheduler_tick first, then
the timers):

- a slice runs out: effective_prio and task_timeslice anew, the task to
  the tail of its prio list and of the lru list;
- a multiple of FAIRNESS_TICKS: fairness_update walks the lru list from
  its head, at most max(nr_active/8, FAIRNESS_MIN) tasks, and stops at
  the first task updated less than FAIRNESS_TICKS ago (the running task
  always is); a task whose prio changed goes to the tails; a prio better
  than the running task's preempts it;
- a burst ends: the task sleeps (its timer fires s later, at least one
  jiffy on: timer sleeps end on a tick);
- a timer fires: activate_task credits the sleep (sleep_avg, capped at
  MAX_SLEEP_AVG; these wakeups come from interrupt context, so the
  waker back-boost has nobody to give the excess to), decays run_avg
  over it, recomputes prio, cuts the slice to the new prio's, queues
  the task at the tails; a better prio than the running task's
  preempts it.

schedule() takes the best prio and, of a prio, the task queued first;
a preempted task keeps its place and the rest of its slice.  The
kind is read off the loop's last third exactly as
pysched.analysis.measure reads a simulated run's (classify_series on
the same series: cpu time and prio every 10 ms), so prediction and
measurement are judged alike.

Several CPUs: tasks are placed as spawn() places them (the allowed CPU
with the fewest tasks, the lowest on a tie, in the order given) and each
CPU is followed on its own.  The 2.5 balancer keeps that placement:
find_busiest_queue gives up on a runqueue that holds no more than one
task beyond this CPU's ("if (busiest->nr_running <= nr_running + 1)",
csrc/policies/balance_o1.c), and spawn() leaves counts at most one apart
(a sleeper that wakes only adds one to its own CPU's) -- as long as no
CPU goes idle: a CPU without a hog does at times, and an idle CPU pulls
from one with two runnable tasks.  There the kind is "undecided".

What it cannot decide it says ("undecided"): a loop still on its way at
the end of the horizon -- between the two halves of the last third,
which the kind is read from, both ends of a task's prio range move the
same way by two levels or more, or (where the prios hold still) its
mean run_avg moves by more than the width of a level: where it ends up
is past the horizon.  (Where the loop cycles, run_avg swings by many
level widths and its means move with the phase of the swing; the ends
of the prio range do not.)"""
import math
from dataclasses import dataclass

import numpy as np

from . import houston
from .. import _core
from .houston_loop import MAX_PRIO, Patch
from .measure import classify_series, default_seconds
from .mix_tasks import placement, task_specs
from .result import Result
from .._checks import check_int, check_number

SAMPLE_MS = 10        # the series the kind is read from, as classify_run samples
MAX_TASKS = 64        # tasks per CPU the event loop follows


@dataclass(repr=False)
class HoustonMixture(Result):
    """houston_mixture's prediction (a Result: short repr, as_dict(),
    to_frame() with a row per task, NaN where a value does not exist).

    kind: "settles", "cycles", "starves" or "undecided"; why: in words.
    starving: the task starved (index in the order given), -1 if none.
    settling_s: seconds from the spawn until every prio stays within
    settle_levels of the range it keeps at the end (NaN unless it
    settles); period_s, amplitude_levels: the widest prio swing's period
    (seconds) and range (levels) on the attractor (NaN where no prio
    moves or no period repeats); seconds: the horizon followed.  Per
    task, in the order given: cpu (where spawn puts it), nice, run_ms,
    sleep_ms (NaN for a hog), demand (run_ms / (run_ms + sleep_ms), 1 for
    a hog); **shares** (the prediction to plot: its CPU share over the
    last third); fixed_point_shares (where every task that competes has
    the same prio, the patch's argument: continuous, a step of it);
    prio_low, prio_high (the prio range it keeps at the end); run_avg,
    sleep_avg (their means there, sleep_avg in ticks); swing_levels
    (prio_high - prio_low)."""
    SHOWN_FIELDS = ("shares", "settling_s", "period_s")

    kind: str
    starving: int
    settling_s: float
    period_s: float
    amplitude_levels: float
    seconds: float
    cpu: np.ndarray
    nice: np.ndarray
    run_ms: np.ndarray
    sleep_ms: np.ndarray
    demand: np.ndarray
    shares: np.ndarray
    fixed_point_shares: np.ndarray
    prio_low: np.ndarray
    prio_high: np.ndarray
    run_avg: np.ndarray
    sleep_avg: np.ndarray
    swing_levels: np.ndarray
    why: str


class _Loop:
    """The loop's state on one CPU and its events (the module's doc)."""

    def __init__(self, f, specs, hz):
        self.f = f
        self.n = n = len(specs)
        ms = hz / 1000.0
        self.static = [MAX_PRIO - 20 + s[0] for s in specs]
        # a burst of r ms is charged at the ticks the task is current for
        # it (the tick comes first at an instant); its timer fires on the
        # first tick s ms after the burst, at least one jiffy on
        self.burst = [None if s[1] is None else max(1, round(s[1] * ms)) for s in specs]
        self.nap = [None if s[2] is None else max(1, math.ceil(s[2] * ms - 1e-9)) for s in specs]
        self.max_sleep = f.c["max_sleep_avg"]
        self._prio = {}
        # spawn on an idle CPU: prio_avg is 0, so run_avg is
        # estimate_run_avg(0 - (MAX_PRIO - static - prio_offset)) (task_spawn_h)
        self.x = [houston.estimate_run_avg(s - (MAX_PRIO - f.c["prio_offset"]), f.max,
                                           params=f.params) for s in self.static]
        self.stamp = [0] * n
        self.sleep = [0] * n
        self.prio = [self.eprio(i) for i in range(n)]
        self.rem = [f.slice(self.prio[i], self.static[i]) for i in range(n)]
        self.left = list(self.burst)
        self.wake = [None] * n       # the jiffy a sleeping task's timer fires
        self.seq = list(range(n))    # queue order: the lru list and each prio list
        self.next_seq = n
        self.cpu = [0] * n           # ticks run
        self.cur = self.pick()

    def eprio(self, i):
        key = (self.x[i], self.static[i], self.sleep[i])
        p = self._prio.get(key)
        if p is None:
            p = self._prio[key] = houston.effective_prio(max(self.x[i], 0), self.static[i],
                                                         self.sleep[i], params=self.f.params)
        return p

    def queued(self):
        return [i for i in range(self.n) if self.wake[i] is None]

    def pick(self):
        q = self.queued()
        return min(q, key=lambda i: (self.prio[i], self.seq[i])) if q else None

    def requeue(self, i):
        self.seq[i] = self.next_seq
        self.next_seq += 1

    def step(self, t, end):
        """From jiffy t to the next event (or `end`); returns the new t."""
        f, cur = self.f, self.cur
        every = f.fair
        n = (t // every + 1) * every - t
        waking = [w for w in self.wake if w is not None]
        if waking:
            n = min(n, min(waking) - t)
        if cur is not None:
            n = min(n, self.rem[cur])
            if self.left[cur] is not None:
                n = min(n, self.left[cur])
        n = max(1, min(n, end - t))
        t += n
        if cur is not None:
            self.x[cur] = f.run(self.x[cur], n, first_dt=t - n + 1 - self.stamp[cur])
            self.stamp[cur] = t
            self.sleep[cur] = max(0, self.sleep[cur] - n)
            self.rem[cur] -= n
            self.cpu[cur] += n
            if self.left[cur] is not None:
                self.left[cur] -= n
        resched = False
        if cur is not None and self.rem[cur] == 0:
            self.prio[cur] = self.eprio(cur)
            self.rem[cur] = f.slice(self.prio[cur], self.static[cur])
            self.requeue(cur)
            resched = True
        if t % every == 0:
            resched |= self.fairness_update(t)
        # the tick comes first at an instant: a task whose burst ends at a
        # tick that reschedules is switched out before it can block, and
        # blocks when it next runs, its run_avg_timestamp still this tick's
        if cur is not None and self.left[cur] == 0 and not resched:
            self.block(cur, t)
            resched = True
        for i in range(self.n):
            if self.wake[i] == t:
                resched |= self.activate(i, t)
        if resched:
            self.cur = self.pick()
            while self.cur is not None and self.left[self.cur] == 0:
                self.block(self.cur, t)
                self.cur = self.pick()
        return t

    def block(self, i, t):
        self.wake[i] = t + self.nap[i]
        self.left[i] = self.burst[i]

    def fairness_update(self, t):
        q = sorted(self.queued(), key=lambda i: self.seq[i])
        limit = max(len(q) // 8, self.f.fair_min)
        curr = MAX_PRIO if self.cur is None or self.wake[self.cur] is not None \
            else self.prio[self.cur]
        resched = False
        for i in q[:limit]:
            if t - self.stamp[i] < self.f.fair:
                break
            self.x[i] = self.f.decay(self.x[i], t - self.stamp[i])
            self.stamp[i] = t
            p = self.eprio(i)
            if p != self.prio[i]:
                self.prio[i] = p
                self.requeue(i)
            if p < curr:
                resched = True
        return resched

    def activate(self, i, t):
        f = self.f
        self.wake[i] = None
        slept = t - self.stamp[i]
        if slept:
            self.stamp[i] = t
            self.sleep[i] = min(self.sleep[i] + slept, self.max_sleep)
            self.x[i] = f.decay(self.x[i], slept)
            self.prio[i] = self.eprio(i)
            self.rem[i] = min(self.rem[i], f.slice(self.prio[i], self.static[i]))
        self.requeue(i)
        cur = self.cur
        return cur is None or self.wake[cur] is not None or self.prio[i] < self.prio[cur]


def _follow(f, specs, hz, seconds):
    """The loop of one CPU's tasks over `seconds`: series as a simulated
    run records them (sample times in ns; cpu time in ns, prio, run_avg
    and sleep_avg, samples x tasks)."""
    loop = _Loop(f, specs, hz)
    end = int(round(seconds * hz))
    every = max(1, hz * SAMPLE_MS // 1000)
    tick_ns = 10**9 // hz
    samples = np.arange(0, end + 1, every)
    ev_t, ev_cpu, ev_state = [0], [list(loop.cpu)], [(list(loop.prio), list(loop.x), list(loop.sleep))]
    t = 0
    while t < end:
        t = loop.step(t, end)
        ev_t.append(t)
        ev_cpu.append(list(loop.cpu))
        ev_state.append((list(loop.prio), list(loop.x), list(loop.sleep)))
    ev_t = np.array(ev_t)
    ev_cpu = np.array(ev_cpu, dtype=float)
    cpu = np.column_stack([np.interp(samples, ev_t, ev_cpu[:, i]) for i in range(loop.n)])
    at = np.searchsorted(ev_t, samples, side="right") - 1
    state = np.array(ev_state, dtype=float)[at]
    return samples * tick_ns, cpu * tick_ns, state[:, 0, :], state[:, 1, :], state[:, 2, :]


def _fixed_point(f, specs, demand):
    """The patch's argument for the tasks of one CPU: those that compete
    settle at one dynamic prio P, each with the share whose run_avg gives
    it P; a duty-cycled task takes no more than its demand (and, sleeping
    more than it runs, keeps a full sleep_avg: sleep_avg_nice levels
    better); if the demands fit in the CPU, each gets its demand."""
    if demand.sum() <= 1:
        return demand
    bonus = [f.c["sleep_avg_nice"] if s[1] is not None and s[2] > s[1] else 0 for s in specs]
    static = np.array([MAX_PRIO - 20 + s[0] - b for s, b in zip(specs, bonus)], dtype=float)
    return houston._equal_prio_shares(f.c, static, 1, cap=demand)[0]


def houston_mixture(tasks, *, cpus=1, params=None, seconds=None, cycle_levels=3,
                    settle_levels=1):
    """Predict what houston-2003's feedback loop does with `tasks` -- a list
    of nice values (CPU hogs) and (run_ms, sleep_ms[, nice]) duty cycles
    (or dicts with those keys), spawned together in that order -- on
    `cpus` CPUs: per task its share, prio range, run_avg and sleep_avg,
    and the kind (settles, cycles, starves, undecided), settling time,
    period, amplitude and why (see the module's doc and HoustonMixture).

    params: houston-2003 parameters (hz among them), as for
    pysched.analysis.houston.  seconds: the horizon followed (None:
    default_seconds(params), as classify_run runs).  cycle_levels,
    settle_levels: as for classify_series."""
    caller = "houston_mixture"
    specs = task_specs(tasks, caller)
    cpus = check_int(f"{caller}: cpus", cpus, 1, _core.MAX_CPUS)
    if params is not None and not isinstance(params, dict):
        raise TypeError(f"{caller}: params must be a dict, not {type(params).__name__}")
    params = dict(params or {})
    f = Patch(params)
    hz = f.hz
    if seconds is None:
        seconds = default_seconds(f.params_with_hz())
    seconds = check_number(f"{caller}: seconds", seconds, 0.1, 1e6)
    cycle_levels = check_number(f"{caller}: cycle_levels", cycle_levels, 0, MAX_PRIO)
    settle_levels = check_number(f"{caller}: settle_levels", settle_levels, 0, MAX_PRIO)
    where = placement(len(specs), cpus)
    if max(where.count(c) for c in range(cpus)) > MAX_TASKS:
        raise ValueError(f"{caller}: at most {MAX_TASKS} tasks per CPU are followed, got "
                         f"{len(specs)} on {cpus} CPU(s)")
    n = len(specs)
    demand = np.array([1.0 if s[1] is None else s[1] / (s[1] + s[2]) for s in specs])
    fixed = np.zeros(n)
    series = None
    for c in sorted(set(where)):
        mine = [i for i in range(n) if where[i] == c]
        times, *got = _follow(f, [specs[i] for i in mine], hz, seconds)
        if series is None:
            series = [np.zeros((len(times), n)) for _ in got]
        for arr, part in zip(series, got):
            arr[:, mine] = part
        fixed[mine] = _fixed_point(f, [specs[i] for i in mine], demand[mine])
    cpu_ns, prio, run_avg, sleep_avg = series
    run = classify_series(times, cpu_ns, prio, cycle_levels=cycle_levels,
                          settle_levels=settle_levels, _caller=caller)
    tail = len(times) - len(times) // 3
    kind = run.kind
    mid = (tail + len(times)) // 2
    width = run_avg[tail:].mean(axis=0) * (math.exp(f.k) - 1)
    moved = np.abs(run_avg[mid:].mean(axis=0) - run_avg[tail:mid].mean(axis=0))
    # a band that moves: both ends of a task's prio range, the same way
    lows = prio[mid:].min(axis=0) - prio[tail:mid].min(axis=0)
    highs = prio[mid:].max(axis=0) - prio[tail:mid].max(axis=0)
    shifted = np.where(np.sign(lows) == np.sign(highs), np.minimum(abs(lows), abs(highs)), 0)
    moved = moved / width if kind == "settles" else np.zeros(n)
    drift = np.maximum(moved, shifted / 2)
    if kind != "starves" and np.any(drift > 1 - 1e-9):
        kind = "undecided"
    # a CPU with no hog goes idle at times, and an idle CPU pulls from one
    # that holds two runnable tasks (find_busiest_queue gives up only when
    # the busiest holds no more than one beyond this CPU's 0)
    with_hog = {where[i] for i, s in enumerate(specs) if s[1] is None}
    idle = next((c for c in range(cpus) if c not in with_hog), None)
    crowded = next((c for c in range(cpus) if where.count(c) >= 2), None)
    pulls = (idle, crowded) if cpus > 1 and idle is not None and crowded is not None else None
    if pulls:
        kind = "undecided"
    starving = int(np.argmin(run.shares)) if kind == "starves" else -1
    low = prio[tail:].min(axis=0).astype(int)
    high = prio[tail:].max(axis=0).astype(int)
    cycle = run.cycle
    why = _why(kind, specs, where, cpus, run, starving, low, high, demand, fixed, drift, shifted,
               moved, pulls)
    nan = float("nan")
    return HoustonMixture(
        kind, starving, run.settling_s if kind == "settles" else nan,
        cycle.period_s if cycle is not None else nan,
        cycle.amplitude if cycle is not None else nan, float(seconds),
        np.array(where), np.array([s[0] for s in specs]),
        np.array([nan if s[1] is None else s[1] for s in specs]),
        np.array([nan if s[2] is None else s[2] for s in specs]), demand, run.shares, fixed,
        low, high, run_avg[tail:].mean(axis=0),
        sleep_avg[tail:].mean(axis=0), (high - low).astype(float), why)


def _name(i, s):
    what = "a CPU hog" if s[1] is None else f"{s[1]:g} ms run / {s[2]:g} ms sleep"
    return f"task {i + 1} ({what}, nice {s[0]})"


def _why(kind, specs, where, cpus, run, starving, low, high, demand, fixed, drift, shifted,
         moved, pulls):
    placed = ""
    if cpus > 1:
        placed = ("Placed as spawn() places them (" +
                  ", ".join(f"CPU {c}: tasks {', '.join(str(i + 1) for i in range(len(specs)) if where[i] == c)}"
                            for c in range(cpus) if c in where) +
                  "). ")
        if pulls:
            return placed + (f"Undecided: CPU {pulls[0]} has no CPU hog and goes idle at times, "
                             f"while CPU {pulls[1]} holds two runnable tasks at times; an idle CPU "
                             "pulls one (find_busiest_queue), so where the tasks run is the "
                             "balancer's, which this analysis does not follow. The shares are "
                             "those of the placement held.")
        placed += ("The balancer keeps it: " + ("no CPU holds two tasks. " if max(
            where.count(c) for c in set(where)) < 2 else "each CPU has a CPU hog and the counts "
            "are one apart. "))
    if kind == "starves":
        return placed + (f"{_name(starving, specs[starving])} starves: it gets no CPU over the "
                         f"last third of the loop; its prio stays at {low[starving]}..."
                         f"{high[starving]}, never better than the prio of the tasks that run.")
    if kind == "undecided":
        i = int(np.argmax(drift))
        return placed + (f"Undecided: the loop is still on its way at the end of the horizon: "
                         f"{_name(i, specs[i])} moves on (its prio range by {shifted[i]:.0f} "
                         f"levels, its mean run_avg by {moved[i]:.2g} level widths) "
                         "between the two halves of the last third, which the kind is read "
                         "from; follow it longer (seconds=).")
    parts = []
    for i, s in enumerate(specs):
        got = run.shares[i]
        if s[1] is not None and got >= 0.97 * demand[i]:
            parts.append(f"{_name(i, s)} gets what it asks, {got:.3g}, at prio {low[i]}..{high[i]}")
        else:
            parts.append(f"{_name(i, s)} gets {got:.3g} (fixed point {fixed[i]:.3g}) at prio "
                         f"{low[i]}..{high[i]}")
    if kind == "cycles":
        head = (f"The loop cycles: {run.why} ")
    else:
        head = (f"It settles at {run.settling_s:.3g} s: every prio keeps within "
                f"{max(high - low):.0f} level(s) at the end. ")
    return placed + head + "; ".join(parts) + "."
