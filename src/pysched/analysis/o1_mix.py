"""The O(1) family's steady state for a mixture: several tasks that each
run r ms and sleep s ms, over and over, beside CPU hogs on one CPU --
every task's sleep_avg range, bonus, prio, interactivity, CPU share and
time to get there, from the kernel's bookkeeping (no simulation).

One task alone (pysched.analysis.o1_steady_state) starts every run on a
tick boundary; in a mixture a task that wakes while another runs starts
at the end of that run, part way through a tick, and a task that is
preempted by a better one ends its run later by the other's run.  Both
move the jiffies the run is charged at and the one it blocks in.  The
bookkeeping per cycle, with the run's start at phase phi in a tick, d ns
of preempting runs (each started at its own tick: a timer wakeup) and
end = phi + r + d:

- charged (scheduler_tick: "if (p->sleep_avg) p->sleep_avg--" at every
  tick the task is current; the tick comes first at an instant):
  floor(end) - the floor of each preempting run's length, in ticks;
- credited (activate_task: jiffies - last_run, minus one in 2.5.65, when
  positive; last_run is the jiffy it blocked in, floor(end); its sleep
  timer fires at the first tick at least s after the end, and at least
  one jiffy on): max(ceil(end + s), floor(end) + 1) - floor(end).

What the analysis takes as the phases -- per-phase expectations, its
approximation:

- a task whose wakeup prio beats the hogs' (or with no hogs) wakes on a
  tick; with the probability that another task of a prio no worse is
  running then (that task's CPU share) it waits for the end of that run
  and starts at that run's end phase, else it starts on the tick;
- a task no better than the hogs queues behind them and starts at a
  hog's expiry, on a tick, after the rest of the hogs' round (as
  o1_steady_state), stretched by the tasks that beat the hogs; one that
  is not interactive waits a whole round each time its slice runs out
  (scheduler_tick sends it to the expired array);
- a run is preempted (try_to_wake_up: "p->prio < rq->curr->prio", an
  equal prio never preempts) by a strictly better task with the
  probability that the other's wakeup falls in it, r / T of the other's
  cycle T, once at most;
- each task keeps its PHASES most probable end phases (each exact).

The phases and the CPU shares are iterated to a fixed point; the
expectations over these cases give each task's drift per cycle (credit -
charge) at the two standings it can have (beating the hogs or not), and
the climb from the spawn's sleep_avg 0 decides: a task whose drift is
positive where it stands climbs ("top"), one whose drift is negative
stays at the bottom, one whose every case credits what it charges keeps
its 0 ("neutral").  A drift whose sign changes when the waiting and
preemption probabilities are halved or made half again as large is left
undecided: kind "undecided", NaN for its range, prio and reach.  So is
every task when the shares come to the whole CPU: then they queue behind
each other without end, and waits of one run at a time cannot say how.

Left out: EXPIRED_STARVING, a task waiting behind two others at once
(two tasks queued with the hogs wait for each other too), and the prio a
slice that runs out mid-run gives a task until its next wakeup (a
waiting task may then preempt it); and the bk4 / 2.5.65 waker
back-boost between tasks that wake each other: these tasks sleep on
timers, whose wakeups come from interrupt context, so the overflow of a
full sleep_avg goes to nobody (activate_task's in_interrupt() test).
"""
import math
from dataclasses import dataclass

import numpy as np

from .._checks import check_int, check_number
from .o1 import MAX_CYCLES, NICE_0, _setup
from .mix_tasks import duty_cycle
from .result import Result

ROUNDS = 8      # fixed-point rounds of the phases and shares
PHASES = 16     # the most probable end phases kept of each task
MAX_TASKS = 8   # the cases of a cycle grow with the square of the tasks
SENSITIVITY = (0.5, 1.5)  # the waiting / preemption probabilities scaled by these must agree


@dataclass(repr=False)
class O1Mixture(Result):
    """o1_mixture's prediction (a Result: short repr, as_dict(),
    to_frame() with a row per task).

    kind: "settles" when every task's steady state is decided, else
    "undecided".  Per task (arrays in the order given): run_ms, sleep_ms,
    nice; task_kind ("top", "bottom", "neutral", "undecided");
    credit_ticks, charged_ticks (the expected credit and charge of one
    cycle there); sleep_avg_low, sleep_avg_high (the saw-tooth's range);
    prio (at the wakeup: effective_prio of sleep_avg_high), prio_high
    (effective_prio of sleep_avg_low), bonus (static_prio - prio),
    interactive (TASK_INTERACTIVE at prio: 1.0 or 0.0), preempts (1.0
    when prio beats the hogs'); shares (its CPU share), reach_s (seconds
    from the spawn until sleep_avg stays within tol * MAX_SLEEP_AVG of its
    range).  An undecided task has NaN for all but its shares and its
    expected credit and charge; when the tasks would take the whole CPU
    between them, or their prios do not settle, every task is undecided.
    hog_share: each hog's share; hog_prio; max_sleep_avg, hz, tol_ticks;
    why: in words, a sentence per task."""
    preset: str
    kind: str
    run_ms: np.ndarray
    sleep_ms: np.ndarray
    nice: np.ndarray
    task_kind: np.ndarray
    credit_ticks: np.ndarray
    charged_ticks: np.ndarray
    sleep_avg_low: np.ndarray
    sleep_avg_high: np.ndarray
    prio: np.ndarray
    prio_high: np.ndarray
    bonus: np.ndarray
    interactive: np.ndarray
    preempts: np.ndarray
    shares: np.ndarray
    reach_s: np.ndarray
    hog_share: float
    hog_prio: int
    max_sleep_avg: int
    hz: int
    tol_ticks: float
    why: str

    SHOWN_FIELDS = ("prio", "sleep_avg_high", "shares", "reach_s")


class _Duty:
    """One task's cycle in ns, and the cases of one cycle's bookkeeping."""

    def __init__(self, r_ns, s_ns, static, tick):
        self.r, self.s, self.static, self.tick = r_ns, s_ns, static, tick
        self.start = {0: 1.0}   # start phase (ns into a tick) -> probability
        self.end = {r_ns % tick: 1.0}
        self.share = 0.0
        self.cycle = float(r_ns + s_ns)

    def cases(self, waits, preempts, minus_one):
        """(probability, credit, charge, end phase, cycle ns) for each start
        phase (from waits: [(prob, end-phase dict of the task waited for,
        ns waited)]) and preemption (preempts: [(prob, run ns)])."""
        tick = self.tick
        starts = [(1.0 - sum(p for p, _, _ in waits), {0: 1.0}, 0.0)] + waits
        runs = [(1.0 - sum(p for p, _ in preempts), 0)] + preempts
        out = []
        for p_w, phases, waited in starts:
            for phi, p_phi in phases.items():
                for p_r, d in runs:
                    p = p_w * p_phi * p_r
                    if p <= 0:
                        continue
                    end = phi + self.r + d
                    block = end // tick
                    charge = block - d // tick
                    wake = max(-(-(end + self.s) // tick), block + 1)
                    credit = wake - block
                    if minus_one:
                        credit = max(credit - 1, 0)
                    cycle = wake * tick - phi + waited
                    out.append((p, credit, charge, end % tick, cycle))
        return out


def _most_probable(cases):
    """The end phases of cases with their probabilities: the PHASES most
    probable, scaled to sum to 1 (each kept phase stays exact)."""
    end = {}
    for c in cases:
        end[c[3]] = end.get(c[3], 0.0) + c[0]
    kept = sorted(end.items(), key=lambda kv: -kv[1])[:PHASES]
    total = sum(p for _, p in kept)
    return {phase: p / total for phase, p in kept}


def _mean(cases, i):
    return sum(c[0] * c[i] for c in cases)


def o1_mixture(tasks, *, preset="linux-2.5.65", hogs=2, hog_nice=0, params=None, hz=None,
               tol=0.05):
    """Predict the steady state of each of several duty-cycled tasks --
    `tasks`, a list of (run_ms, sleep_ms[, nice]) or of dicts with those
    keys -- beside `hogs` CPU hogs at `hog_nice` on one CPU under an O(1)
    preset (linux-2.5.64, -bk4 or 2.5.65) with `params` and `hz`: sleep_avg
    range, bonus, prio, interactivity, CPU share and the time to reach it
    (within tol * MAX_SLEEP_AVG).  The tasks sleep on timers.  See the
    module's doc and O1Mixture."""
    if isinstance(tasks, (str, bytes, dict)) or not hasattr(tasks, "__len__"):
        raise ValueError(f"o1_mixture: tasks={tasks!r} must be a list of "
                         "(run_ms, sleep_ms[, nice])")
    if not 1 <= len(tasks) <= MAX_TASKS:
        raise ValueError(f"o1_mixture: tasks has {len(tasks)} entries; 1..{MAX_TASKS} are allowed")
    specs = [duty_cycle(k, t, "o1_mixture") for k, t in enumerate(tasks)]
    hogs = check_int("o1_mixture: hogs", hogs, 0, 10_000)
    hog_nice = check_int("o1_mixture: hog_nice", hog_nice, -20, 19)
    tol = check_number("o1_mixture: tol", tol, 0, 1)
    hz, table, f = _setup("o1_mixture: ", preset, params, hz)
    max_avg, minus_one = table["max_sleep_avg"], bool(table["sleep_credit_minus_one"])
    tick = 10**9 // hz
    hog_static = NICE_0 + hog_nice
    hog_prio = f("effective_prio", hog_static, 0)
    hog_round = hogs * f("task_timeslice", hog_static) * tick
    duty = [_Duty(round(r * 1e6), round(s * 1e6), NICE_0 + n, tick) for r, s, n in specs]
    n = len(duty)

    def beats_hogs(prio):
        return hogs == 0 or prio < hog_prio

    def standing_cases(i, prio, prios, scale=1.0):
        """The cases of task i's cycle at wakeup prio `prio`, the others at `prios`."""
        me = duty[i]
        waits, pre = [], []
        for j, other in enumerate(duty):
            if j == i:
                continue
            if beats_hogs(prio) and beats_hogs(prios[j]) and prios[j] <= prio:
                waits.append((min(other.share * scale, 1.0), other.end, other.r / 2))
            if prios[j] < prio and beats_hogs(prios[j]):
                pre.append((min(me.r / other.cycle * scale, 1.0), other.r))
        for group in (waits, pre):
            total = sum(g[0] for g in group)
            if total > 1:
                group[:] = [(g[0] / total,) + tuple(g[1:]) for g in group]
        cases = me.cases(waits, pre, minus_one)
        wait = 0.0
        if not beats_hogs(prio):
            # queued behind the hogs left in the active array: its sleep
            # started a new round of theirs, s of which has passed
            wait = hog_round - me.s % hog_round if hog_round else 0
        if not f("task_interactive", prio, me.static):
            # scheduler_tick: a slice that runs out (r / timeslice times a
            # cycle) sends a task that is not interactive to the expired
            # array, behind the hogs' whole round
            wait += me.r / (f("task_timeslice", me.static) * tick) * hog_round
        # the hogs' ticks stretch by the time the tasks that beat them take
        busy = sum(o.share for j, o in enumerate(duty) if j != i and beats_hogs(prios[j]))
        wait /= max(1.0 - busy, 0.05)
        return [c[:4] + (c[4] + wait,) for c in cases]

    # the fixed point: each task's wakeup prio from its kind, its phases
    # and share from the others'
    prios = [f("effective_prio", d.static, 0) for d in duty]
    verdicts, settled = [None] * n, False
    for _ in range(ROUNDS):
        new = []
        for i, d in enumerate(duty):
            v = _climb(i, d, prios, standing_cases, f, max_avg, tol * max_avg)
            cases = standing_cases(i, v["prio"], prios)
            d.end = _most_probable(cases)
            d.cycle = _mean(cases, 4)
            d.share = d.r / d.cycle
            v["cases"] = cases
            new.append(v)
        settled = [v["prio"] for v in new] == prios and \
            [v["kind"] for v in new] == [v and v["kind"] for v in verdicts]
        verdicts, prios = new, [v["prio"] for v in new]
        if settled:
            break

    # the same climb with the waiting and preemption probabilities scaled
    for scale in SENSITIVITY:
        for i, d in enumerate(duty):
            other = _climb(i, d, prios, lambda *a: standing_cases(*a, scale=scale), f, max_avg,
                           tol * max_avg)
            if other["kind"] != verdicts[i]["kind"]:
                verdicts[i]["kind"] = "undecided"

    # the waits here are for one run at a time: tasks that ask for the
    # whole CPU between them queue behind each other without end
    overloaded = sum(d.share for d in duty) >= 1
    if overloaded or not settled:
        for v in verdicts:
            v["kind"] = "undecided"

    rows = []
    for i, (d, v) in enumerate(zip(duty, verdicts)):
        cases = v["cases"]
        credit, charge = _mean(cases, 1), _mean(cases, 2)
        kind = v["kind"]
        if kind == "top":
            low, high = max(max_avg - max(c[2] for c in cases), 0), max_avg
        elif kind in ("bottom", "neutral"):
            low, high = 0, min(max(c[1] for c in cases), max_avg)
        else:
            low = high = math.nan
        if kind == "undecided":
            prio = prio_high = bonus = interactive = math.nan
        else:
            prio = f("effective_prio", d.static, int(high))
            prio_high = f("effective_prio", d.static, int(low))
            bonus = d.static - prio
            interactive = bool(f("task_interactive", prio, d.static))
        reach = v["reach_s"] if kind != "undecided" else math.nan
        preempts = math.nan if kind == "undecided" else float(beats_hogs(prio) and hogs > 0)
        rows.append((kind, credit, charge, low, high, prio, prio_high, bonus, float(interactive),
                     preempts, d.share, reach))

    shares = np.array([r[10] for r in rows])
    hog_share = max(1.0 - shares.sum(), 0.0) / hogs if hogs else math.nan
    col = list(zip(*rows))
    kind = "settles" if "undecided" not in col[0] else "undecided"
    why = _why(specs, rows, preset, minus_one, hog_prio, hogs, hog_share, tol, hz, overloaded,
               settled)
    return O1Mixture(preset, kind, np.array([s[0] for s in specs], float),
                     np.array([s[1] for s in specs], float), np.array([s[2] for s in specs]),
                     np.array(col[0]), np.array(col[1], float), np.array(col[2], float),
                     np.array(col[3], float), np.array(col[4], float), np.array(col[5], float),
                     np.array(col[6], float), np.array(col[7], float), np.array(col[8], float),
                     np.array(col[9], float), shares, np.array(col[11], float), hog_share,
                     hog_prio, max_avg, hz, tol * max_avg, why)


def _climb(i, d, prios, standing_cases, f, max_avg, tol_ticks):
    """Task i's climb from the spawn's sleep_avg 0, a cycle at a time with
    the expected credit and charge of its standing at each wakeup: its
    kind, its wakeup prio there and the seconds it took.  Between two
    changes of prio the standing, and so the drift a cycle, is the same:
    the cycles to the next change are counted at once."""
    memo = {}

    def standing(prio):
        if prio not in memo:
            cases = standing_cases(i, prio, prios)
            memo[prio] = (_mean(cases, 1), _mean(cases, 2), _mean(cases, 4),
                          all(c[1] == c[2] for c in cases))
        return memo[prio]

    def ep(x):
        return f("effective_prio", d.static, int(x))

    def next_change(x, prio):
        # the least sleep_avg above x with another prio (effective_prio
        # falls as sleep_avg grows)
        lo, hi = int(x), max_avg
        if ep(hi) == prio:
            return math.inf
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if ep(mid) == prio else (lo, mid)
        return hi

    credit, charge, _, even = standing(ep(0))
    if even:
        return {"kind": "neutral", "prio": ep(credit), "reach_s": 0.0}
    if credit <= charge:
        return {"kind": "bottom", "prio": ep(credit), "reach_s": 0.0}
    # the first run charges the 0 it starts with nothing; its sleep credits
    x, ns, cycles = min(credit, max_avg), float(d.r + d.s), 0
    while cycles < MAX_CYCLES:
        prio = ep(x)
        if x >= max_avg - tol_ticks:
            break
        credit, charge, cycle, _ = standing(prio)
        if credit <= charge:
            # it climbed into a standing where it loses: it stays there
            return {"kind": "bottom", "prio": prio, "reach_s": 0.0}
        if x < charge:
            steps, x = 1, min(credit, max_avg)
        else:
            target = min(next_change(x, prio), max_avg - tol_ticks)
            steps = max(1, math.ceil((target - x) / (credit - charge)))
            x = min(x + steps * (credit - charge), max_avg)
        ns += steps * cycle
        cycles += steps
    return {"kind": "top", "prio": ep(max_avg), "reach_s": ns / 1e9}


def _why(specs, rows, preset, minus_one, hog_prio, hogs, hog_share, tol, hz, overloaded,
         settled):
    parts = []
    if overloaded:
        parts.append(f"The tasks would take {sum(r[10] for r in rows):.0%} of the CPU between "
                     "them: they queue behind each other without end, which this analysis (a "
                     "wait for one run at a time) cannot follow, so every range is NaN.")
    elif not settled:
        parts.append(f"The tasks' prios did not settle in {ROUNDS} rounds of the fixed point "
                     "(who waits for whom changes with them), so every range is NaN.")
    for k, ((r, s, nice), row) in enumerate(zip(specs, rows)):
        kind, credit, charge, low, high, prio, _, bonus, inter, pre, share, reach = row
        head = f"Task {k} ({r:g} ms run, {s:g} ms sleep{f', nice {nice}' if nice else ''})"
        if kind == "undecided" and (overloaded or not settled):
            continue
        if kind == "undecided":
            parts.append(f"{head} credits {credit:.3g} and charges {charge:.3g} ticks a cycle "
                         "on the expected phases, too close to call: whether it climbs depends "
                         "on the phases this analysis only estimates, so its range is NaN.")
            continue
        what = {"top": f"climbs to MAX_SLEEP_AVG (within {tol:.0%} after {reach:.3g} s) and "
                       f"saw-tooths in {low:g}..{high:g}",
                "bottom": f"stays at the bottom, in {low:g}..{high:g}",
                "neutral": f"credits what it charges and keeps its 0, in {low:g}..{high:g}"}[kind]
        parts.append(f"{head} is credited {credit:.3g} and charged {charge:.3g} ticks a cycle "
                     f"(jiffies - last_run{' - 1' if minus_one else ''} against the ticks "
                     f"current): it {what}; it wakes at prio {prio:g} (bonus {bonus:+g}), "
                     f"{'interactive' if inter else 'not interactive'}, "
                     f"{'preempting' if pre else 'queued behind' if hogs else 'beside'} "
                     f"{'the hogs at ' + str(hog_prio) if hogs else 'no hogs'}, "
                     f"and takes {share:.1%} of the CPU.")
    if hogs:
        parts.append(f"The {hogs} hog(s) share the rest: {hog_share:.1%} each.")
    if preset != "linux-2.5.64":
        parts.append("The tasks sleep on timers, so a full sleep_avg's overflow goes to nobody: "
                     "the waker back-boost does not flow (a wakeup from interrupt context).")
    return " ".join(parts) + f" ({1000 / hz:g} ms a tick.)"
