"""Does houston-2003's feedback loop settle, cycle or starve a task?  A
prediction for two CPU hogs on one CPU from the patch's own integer
formulas (pysched.analysis.houston: the very C the simulator runs), without running
the simulator.

The loop (the patch's effective_prio comment): a task that runs gains
run_avg (update_run_avg_running adds get_increment every tick), its prio
gets worse by log(run_avg)/nice_const, it runs less; a waiting task's
run_avg decays (decay_value) and its prio improves.  Its fixed point is
where the prios are equal (pysched.analysis.houston_equilibrium).  Whether
the loop reaches that point and stays there is a question about its
discreteness, which the equilibrium argument leaves out:

- prio is an integer, so the loop can at best hold each task between two
  neighbouring levels, and run_avg moves in whole timeslices: how far one
  timeslice moves it, measured in widths of a prio level at the fixed
  point (``step_levels``), is what decides.  A task's timeslice comes from
  task_timeslice at the prio it had when its last slice expired (the
  patch's scheduler_tick recomputes both only then), so a task that
  overshoots to a poor prio gets the longest slice, HZ/2, and overshoots
  again: a relaxation cycle instead of the fixed point;
- a waiting task's prio is recomputed only by fairness_update, every
  FAIRNESS_TICKS, and only while it heads the run_list_lru: the running
  task sits on that list too and is updated every tick, so the walk
  ("if ((jiffies - p->run_avg_timestamp) < FAIRNESS_TICKS) break;") stops
  at it whenever it is ahead.  After its prio changes, a waiting task is
  requeued behind the running one and is not looked at again before that
  one's slice expires (``decay_levels``: how far its run_avg decays over
  that slice);
- decay_value truncates: value*j/sf is 0 once value*|j| < 65536, so over
  FAIRNESS_TICKS a small run_avg stops decaying (``run_avg_floor``), above
  MIN_RUN_AVG at long half-lives.  A task whose prio at that floor is
  still worse than the other's prio never runs again: it starves.

houston_stability follows the small task (the one with the smaller share
at the fixed point) from its spawn state to the moment it first competes
(or to its floor: "starves"), then iterates the loop's return map -- one
round is the other task's timeslice, the wait with its fairness_update
re-evaluations, and the task's own turn of timeslices -- against the other
task's stale prio, to its attractor, and the same for the other task.
That map names the reasons: how far one slice moves a task, how far a
wait decays it, the loop gain, the floor.

The verdict -- kind, shares, settling time, period -- is the loop's with
both prios moving (pysched.analysis.houston_mix, the patch's formulas on
the loop's state, event by event).  Holding one prio stale is what lets
the return map be iterated alone, and what it gets wrong between the
documented grid's lines: the other task's run_avg swings with every
round, its prio crosses a level on some rounds and not on others, so the
slices of one task per slice of the other alternate (2, 3, 2 ...), and
the pattern the pair keeps is picked by its history from the spawn (half-life
2891, nice_const 14703: the return map says a third for the +5 task, the
loop and the simulator a quarter).  Where the two disagree on the kind,
the why says so.  The fixed point's run_avg keeps decay_value's
truncation (a value loses value*j/65536 rounded toward zero a tick), which
at long half-lives holds it some 10 % above inc*share/rate.  For any set
of tasks, sleepers and several CPUs among them: houston_mixture.
"""
import math
from dataclasses import dataclass

import numpy as np

from . import houston
from .houston import houston_equilibrium
from .houston_mix import houston_mixture
from .houston_loop import MAX_PRIO, Patch, prio_swing, return_map
from .result import Result, moved_field
from .._checks import check_int, check_number


@dataclass(repr=False)
class Stability(Result):
    """houston_stability's prediction for a pair of CPU hogs (a Result:
    short repr, as_dict(), to_frame(), NaN where a value does not exist).

    kind: "settles", "cycles", "starves" or "undecided" (the loop followed
    with both prios moving, houston_mixture's); why: the verdict in words
    and its reasons; return_map_kind: what the return map alone, one prio
    held stale, says.  shares: **the prediction, the shares to plot** --
    each task's CPU share, in the order of `nices`, over the last third of
    the loop followed from the spawn.  settling_s: seconds from the spawn
    until every prio stays within settle_levels of the range it keeps at
    the end (NaN unless kind is "settles").
    Per task, in the order of `nices`:

    - fixed_point_shares (until 0.2: equilibrium_shares):
      houston_equilibrium's continuous fixed point, a step of the
      argument, not what a run shows; level_shares (until 0.2:
      discrete_shares): the fixed point with integer prios (the averaged
      loop at a common level shares the CPU by timeslices, `tie_share`),
      another step;
    - prio: the integer prio at the fixed point; run_avg: the mean run_avg
      there, with the patch's own decay (truncation included; where it
      starves: the run_avg the continuous fixed point wants); level_width: the run_avg
      width of one prio level there (run_avg * (exp(k) - 1), k =
      nice_const/65536);
    - timeslice: the slice each task settles to, in ticks (task_timeslice
      at the prio it expires at); step_levels: how far one of its own timeslices
      moves its run_avg, in prio levels; decay_levels: how far its
      run_avg decays while the other task runs one timeslice, in levels;
    - swing_levels: the prio range the task goes through on the return
      map's attractor; loop_gain: the derivative of the return map (the
      small task's run_avg at the end of one turn -> prio -> its next turn
      -> run_avg at the end of it) at the attractor: |gain| < 1 converges;
    - run_avg_floor: where decay_value stops decaying a waiting task's
      run_avg; floor_prio: its prio there; below_floor: the run_avg the
      continuous fixed point wants (inc*share over the decay rate, without
      the truncation) lies below the floor (or below
      min_run_avg): that equilibrium cannot be reached; below_min_run_avg:
      it lies below MIN_RUN_AVG itself.

    Loop-wide: halflife_decay: decay_value over one half-life (the patch's
    "value /= 2", 0.5 if exact); running_halflife_decay: what
    update_run_avg_running's tick-by-tick decay leaves of a value after
    one half-life; contact_s: seconds from the spawn until the small task
    first gets the CPU (NaN: never); period_s: the period of the widest
    prio swing at the end, in seconds (NaN where no prio moves or no
    period repeats)."""
    SHOWN_FIELDS = ("shares", "settling_s", "period_s")

    kind: str
    settling_s: float
    shares: np.ndarray
    fixed_point_shares: np.ndarray
    level_shares: np.ndarray
    tie_share: float
    prio: np.ndarray
    run_avg: np.ndarray
    level_width: np.ndarray
    timeslice: np.ndarray
    step_levels: np.ndarray
    decay_levels: np.ndarray
    swing_levels: np.ndarray
    loop_gain: float
    run_avg_floor: int
    floor_prio: np.ndarray
    below_floor: np.ndarray
    below_min_run_avg: np.ndarray
    halflife_decay: float
    running_halflife_decay: float
    contact_s: float
    period_s: float
    why: str
    return_map_kind: str = ""


moved_field(Stability, "equilibrium_shares", "fixed_point_shares")
moved_field(Stability, "discrete_shares", "level_shares")


def houston_stability(nices, *, params=None, cycle_levels=3, settle_levels=1):
    """Predict what houston-2003's feedback loop does with two CPU hogs of
    the given nice values on one CPU, spawned together on an idle CPU:
    "settles", "cycles" or "starves", when, at which shares, and why (see
    the module's doc and Stability).  params: houston-2003 parameters
    (run_avg_halflife, nice_const, ... and hz), as for pysched.analysis.houston.
    cycle_levels: the widest prio swing that still counts as settled;
    settle_levels: how close to the prio range it keeps on the attractor
    a task's prio must stay to count as settled, in levels, as in
    pysched.analysis.measure.prio_settling_time."""
    if isinstance(nices, (str, bytes)) or not hasattr(nices, "__iter__"):
        raise TypeError(f"nices must be a list of two nice values, not {nices!r}")
    nices = [check_int("nice", n, -20, 19) for n in nices]
    if len(nices) != 2:
        raise ValueError(f"houston_stability analyses a pair of tasks, got {len(nices)} nice values "
                         f"{nices}; for the fixed point of any number, use houston_equilibrium")
    if params is not None and not isinstance(params, dict):
        raise TypeError(f"params must be a dict, not {type(params).__name__}")
    params = dict(params or {})
    cycle_levels = check_number("cycle_levels", cycle_levels, 0, MAX_PRIO)
    settle_levels = check_number("settle_levels", settle_levels, 0, MAX_PRIO)
    f = Patch(params)
    eq = houston_equilibrium(nices, params=params)
    loop = houston_mixture(nices, params=f.params_with_hz(), cycle_levels=cycle_levels,
                           settle_levels=settle_levels)
    return _analyse(f, nices, eq, cycle_levels, loop)


def _analyse(f, nices, eq, cycle_levels, loop):
    c = f.c
    static = [MAX_PRIO - 20 + n for n in nices]
    s_eq = np.asarray(eq.shares, dtype=float)
    # the small task (L) is the one the loop has to hold back; on a tie the
    # second one, which waits first
    lo = 1 if s_eq[1] <= s_eq[0] else 0
    hi = 1 - lo

    # -- spawn (wake_up_forked_process on an idle CPU: rq->prio_avg is 0, so
    # i = 0 - (MAX_PRIO - static_prio - prio_offset) and
    # run_avg = estimate_run_avg(i, MAX_RUN_AVG)); each task's first slice is
    # task_timeslice at that prio
    x0 = [houston.estimate_run_avg(s - (MAX_PRIO - c["prio_offset"]), f.max, params=f.params)
          for s in static]
    p0 = [f.prio(x, s) for x, s in zip(x0, static)]
    q0 = [f.slice(p, s) for p, s in zip(p0, static)]
    # the big task (H) runs alone at first: its run_avg goes to what a task
    # that always runs settles at, its prio with it
    x_alone = f.always_running()
    p_alone = f.prio(x_alone, static[hi])

    # -- the decay per half-life, as the patch computes it: decay_value's
    # shift for a whole half-life, and the 7x/8 branch tick by tick
    halflife_decay = f.decay(f.max, f.half_life) / f.max
    running_halflife_decay = math.exp(-f.rate(1) * f.half_life)

    # -- the equilibrium with the patch's decay: a task with share s runs
    # a fraction s of the ticks, each adding inc and taking decay_value's
    # one-tick decrement, and waits the rest, decaying over the other's
    # timeslice.  decay_value truncates (value*j/sf), so the decrement is
    # that of the value itself, not the rate at MAX_RUN_AVG: at long
    # half-lives (j = -1 per tick) a run_avg of 160520 loses 2 a tick, not
    # 2.45, and settles 10 % above inc*s/rate.  The mean is where the
    # drift is zero (it falls as run_avg grows).
    def mean_run_avg(share, wait):
        wait = max(1, wait)

        def drift(x):
            running = f.inc - (x - f.decay(x, 1))
            waiting = (x - f.decay(x, wait)) / wait
            return share * running - (1 - share) * waiting

        if drift(f.max) >= 0:
            return float(f.max)
        a, b = 0, f.max
        while b - a > 1:
            m = (a + b) // 2
            if drift(m) > 0:
                a = m
            else:
                b = m
        return float(b)

    # (the wait is at most HZ/2, the longest timeslice, task_timeslice at a
    # prio no better than static_prio)
    longest = f.slice(static[hi], static[hi])
    x_eq = np.array([mean_run_avg(s, longest) for s in s_eq])
    p_eq = [f.prio(max(1, int(x)), s) for x, s in zip(x_eq, static)]
    # ... then over the other task's slice at those prios (a task waits
    # while the other runs its slice; decay_value's rate depends on it)
    q_eq = [f.slice(p, s) for p, s in zip(p_eq, static)]
    x_eq = np.array([mean_run_avg(s_eq[i], q_eq[1 - i]) for i in range(2)])
    p_eq = [f.prio(max(1, int(x)), s) for x, s in zip(x_eq, static)]
    # the run_avg the continuous fixed point wants, inc*s over the decay
    # rate without the truncation (which holds a tiny run_avg up): whether
    # it lies below the floor or MIN_RUN_AVG
    x_want = np.array([min(f.inc * s_eq[i] / (s_eq[i] * f.rate(1) +
                                               (1 - s_eq[i]) * f.rate(max(1, q_eq[1 - i]))), f.max)
                       for i in range(2)])
    # H's slice at the fixed point: task_timeslice at the prio it expires at,
    # which its own slice raises; from the slice of its level upwards
    q_hi = f.slice(p_eq[hi], static[hi])
    for _ in range(8):
        nxt = f.slice(f.prio(f.run(int(x_eq[hi]), q_hi), static[hi]), static[hi])
        if nxt <= q_hi:
            break
        q_hi = nxt
    x_hi_post = f.run(int(x_eq[hi]), q_hi)
    p_hi_post = f.prio(x_hi_post, static[hi])

    floor = f.floor(f.fair)
    floor_prio = np.array([f.prio(floor, s) for s in static])
    below_floor = x_want < max(floor, f.min)

    # -- approach: L waits from its spawn state until it first gets the CPU
    mu = f.rate(1)

    def alone(ticks):
        # H's run_avg running alone from its spawn value: update_run_avg_running
        # takes it to x_alone at the running decay rate
        return x_alone + (x0[hi] - x_alone) * math.exp(-mu * ticks)

    approach = return_map(f, static[lo], x0[lo], q0[lo], 0, p0[lo],
                       lambda ticks: f.prio(int(alone(ticks)), static[hi]), q0[hi],
                       at_head=lo < hi, rounds=1)
    first = approach[0]
    if first.ran == 0:
        floor_x = first.x
        return _starves(f, nices, s_eq, lo, hi, static, x_want, p_eq, floor_x, floor_prio,
                        below_floor, halflife_decay, running_halflife_decay, p_alone, loop)
    contact = first.waited

    # -- the return map from there: L against H's stale prio after H's slice
    rounds = return_map(f, static[lo], first.x, first.slice, 0, first.seen[-1], p_hi_post, q_hi)
    if rounds[-1].ran == 0:
        return _starves(f, nices, s_eq, lo, hi, static, x_want, p_eq, rounds[-1].x, floor_prio,
                        below_floor, halflife_decay, running_halflife_decay, p_hi_post, loop)
    swing_lo = prio_swing(rounds)
    q_lo = rounds[-1].slice
    # ... and H against L's stale prio at the end of L's turns
    ref_lo = rounds[-1].seen[-1]
    rounds_hi = return_map(f, static[hi], int(x_eq[hi]), q_hi, 0, p_hi_post, ref_lo, max(1, q_lo))
    swing_hi = prio_swing(rounds_hi) if rounds_hi[-1].ran and rounds_hi[-1].waited else 0

    # -- the quantities behind the verdict, at the fixed point
    level_width = x_eq * (math.exp(f.k) - 1)
    q = [0, 0]
    q[lo], q[hi] = q_lo, q_hi
    start = [0, 0]
    start[hi] = max(1, int(x_eq[hi]))
    start[lo] = max(1, f.top(static[lo], p_hi_post))
    post = [f.run(start[i], q[i]) for i in range(2)]
    step = np.array([math.log(post[i] / start[i]) / f.k for i in range(2)])
    decay = np.array([-math.log(max(f.decay(post[i], q[1 - i]), 1) / post[i]) / f.k
                      for i in range(2)])
    swing = np.zeros(2)
    swing[lo], swing[hi] = swing_lo, swing_hi
    gain = _loop_gain(f, static[lo], rounds[-1], p_hi_post, q_hi)

    # -- the fixed point with integer prios: at a common level the two share
    # by timeslices (round robin in the prio list)
    tie = q_lo / (q_lo + q_hi)
    d_lo = _discrete_share(f, static, lo, hi, tie, q_lo, q_hi, mean_run_avg)
    discrete = np.zeros(2)
    discrete[lo], discrete[hi] = d_lo, 1 - d_lo

    held = "cycles" if max(swing_lo, swing_hi) > cycle_levels else "settles"
    if loop.kind == "starves":
        return _starves(f, nices, s_eq, lo, hi, static, x_want, p_eq, rounds[-1].x, floor_prio,
                        below_floor, halflife_decay, running_halflife_decay, p_hi_post, loop, held)
    why = _why(loop, held, nices, lo, hi, s_eq, step, decay, swing, q, f, gain, cycle_levels,
               below_floor, floor, floor_prio)
    return Stability(loop.kind, loop.settling_s, loop.shares, s_eq, discrete, tie, np.array(p_eq),
                     x_eq, level_width, np.array(q), step, decay, swing, gain, floor, floor_prio,
                     below_floor, x_want < f.min, halflife_decay, running_halflife_decay,
                     contact / f.hz, loop.period_s, why, held)


def _starves(f, nices, s_eq, lo, hi, static, x_want, p_eq, floor_x, floor_prio, below_floor,
             halflife_decay, running_halflife_decay, ref_prio, loop, held="starves"):
    """A Stability where the return map or the loop starves a task: the
    return map's quantities at its attractor do not exist (NaN)."""
    stuck = f.prio(floor_x, static[lo])
    reason = (f"waiting, its run_avg decays only to {floor_x} (decay_value over "
              f"FAIRNESS_TICKS={f.fair} truncates to no change there; MIN_RUN_AVG is {f.min}), "
              f"where effective_prio gives it prio {stuck}, worse than the {ref_prio} of task "
              f"{hi + 1} (nice {nices[hi]}): it never runs again.")
    small = f"Task {lo + 1} (nice {nices[lo]})"
    if loop.kind == "starves" and held == "starves":
        why = (f"{small} starves: {reason} The fixed point wants its run_avg at {x_want[lo]:.3g} "
               f"(a share of {s_eq[lo]:.2g}).")
    elif held == "starves":
        why = (f"{loop.why} The return map, which holds the other task's prio stale, starves "
               f"{small[0].lower() + small[1:]}: {reason} With both prios moving, it does not.")
    else:
        why = (f"{loop.why} The return map, which holds the other task's prio stale, says it "
               f"{held}.")
    nan = np.full(2, np.nan)
    shares = loop.shares
    return Stability(loop.kind, loop.settling_s, shares, s_eq, shares.copy(), float("nan"),
                     np.array(p_eq), x_want, x_want * (math.exp(f.k) - 1), nan, nan.copy(),
                     nan.copy(), nan.copy(), float("nan"), int(floor_x), floor_prio, below_floor,
                     x_want < f.min, halflife_decay, running_halflife_decay, math.nan,
                     loop.period_s, why, held)


def _loop_gain(f, static, last, ref_prio, ref_slice):
    """d(run_avg at the end of the next turn) / d(run_avg at the end of
    this one), by a central difference of 5 % around the attractor's
    point (the map is integer, steps of one would see only its
    truncations)."""
    x = last.x
    dx = max(1, x // 20)
    ends = []
    for xs in (x - dx, x + dx):
        r = return_map(f, static, xs, last.slice, 0, f.prio(xs, static), ref_prio, ref_slice, rounds=1)
        ends.append(r[-1].x)
    return (ends[1] - ends[0]) / (2 * dx)


def _discrete_share(f, static, lo, hi, tie, q_lo, q_hi, mean_run_avg):
    """L's share where the averaged loop with integer prios balances: with
    L's share s, each task's mean run_avg gives it an integer prio; L gets
    the whole CPU while better, `tie` at a common level, nothing while
    worse.  That share falls with s: the balance is where it crosses s (on
    the tie plateau, or at the step where L's prio changes level)."""
    def share_given(s):
        x_lo = max(1, int(mean_run_avg(s, q_hi)))
        x_hi = max(1, int(mean_run_avg(1 - s, q_lo)))
        gap = f.prio(x_lo, static[lo]) - f.prio(x_hi, static[hi])
        return 1.0 if gap < 0 else (tie if gap == 0 else 0.0)

    a, b = 1e-9, 1 - 1e-9
    for _ in range(48):
        m = (a + b) / 2
        if m < share_given(m):
            a = m
        else:
            b = m
    # on the tie plateau the crossing is the tie share itself
    return tie if abs(a - tie) < 1e-6 else a


def _why(loop, held, nices, lo, hi, s_eq, step, decay, swing, q, f, gain, cycle_levels,
         below_floor, floor, floor_prio):
    small, big = f"task {lo + 1} (nice {nices[lo]})", f"task {hi + 1} (nice {nices[hi]})"
    text = (f"One {q[lo]}-tick timeslice of {small} moves its run_avg by {step[lo]:.2g} prio "
            f"levels, and it decays by {decay[lo]:.2g} levels while {big} runs its {q[hi]}-tick "
            f"slice, which moves {big}'s own run_avg by {step[hi]:.2g} levels. ")
    if loop.kind == "cycles":
        text += (f"The loop cannot hold a level: the prios swing over {loop.amplitude_levels:.0f} "
                 f"levels, more than {cycle_levels:g}, every {loop.period_s:.3g} s, and "
                 f"{small} gets {loop.shares[lo]:.3g} of the CPU against the fixed point's "
                 f"{s_eq[lo]:.3g}.")
        if below_floor[lo]:
            text += (f" The fixed point puts its run_avg below {max(floor, f.min)}, where "
                     f"decay_value stops decaying it (prio {floor_prio[lo]}): it cannot get "
                     f"there.")
    elif loop.kind == "settles":
        text += (f"It settles in {loop.settling_s:.3g} s: the prios keep within "
                 f"{max(loop.swing_levels):.0f} level(s) and {small} gets {loop.shares[lo]:.3g} "
                 f"of the CPU (fixed point {s_eq[lo]:.3g}).")
    else:
        text += loop.why
    if held != loop.kind:
        text += (f" (The return map, which holds one task's prio stale, would say it {held}: "
                 f"{small}'s prio swings over {swing[lo]:.0f} levels there; the loop with both "
                 f"prios moving is the verdict.)")
    text += (f" The return map carries {abs(gain):.2g} of a deviation of its run_avg from one turn "
             f"into the next.")
    return text
