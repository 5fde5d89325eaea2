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
task's stale prio, to its attractor, and the same for the other task.  The
attractor's prio swing decides between "settles" (within cycle_levels
levels: the quantization of a loop that holds its level) and "cycles".

The shares predicted where it settles are the fixed point of the loop
averaged with integer prios (tasks at a common level share the CPU by
their timeslices), or, where the small task's turn is one HZ/2 timeslice
(the shares are then counts of whole slices), those of the pair's return
map (houston_loop.pair_share): both run_avgs move, the bigger task's prio
crosses a level on some rounds and not others, so its slices per slice
of the small task alternate (2, 3, 2 ...), and of the patterns the pair
has at one set of parameters its history from the spawn picks one.
Where it cycles, the return map's.  The settling time is when every prio has come,
for good, within settle_levels of the range it keeps on the attractor (as
pysched.analysis.measure.prio_settling_time measures a simulated run): the bigger
task's run_avg moves from where running alone took it to its fixed point
at the running decay rate, exp(-rate*t), its prio with it, and the small
task follows the return map against that moving prio.  The fixed point's
run_avg keeps decay_value's truncation (a value loses value*j/65536
rounded toward zero a tick), which at long half-lives holds it some 10 %
above inc*share/rate.  This is an analysis of a pair: for the
fixed point of more tasks, houston_equilibrium.
"""
import math
from dataclasses import dataclass

import numpy as np

from . import houston
from .houston import houston_equilibrium
from .measure import default_seconds
from .houston_loop import ATTRACTOR, MAX_PRIO, Patch, attractor, pair_share, return_map
from .result import Result, moved_field
from .._checks import check_int, check_number


@dataclass(repr=False)
class Stability(Result):
    """houston_stability's prediction for a pair of CPU hogs (a Result:
    short repr, as_dict(), to_frame(), NaN where a value does not exist).

    kind: "settles", "cycles" or "starves"; why: the verdict in words.
    shares: **the prediction, the shares to plot** -- each task's CPU
    share, in the order of `nices`, as a run shows it (where it settles:
    the level-quantized fixed point, or the pair's return map from the
    spawn when the small task's turn is one HZ/2 slice; where it
    cycles: the return map's; where it starves: 1 and 0).  settling_s:
    seconds from the spawn until every prio stays within settle_levels of
    the range it keeps on the attractor (NaN unless kind is "settles").
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
    first gets the CPU (NaN: never); period_s: the attractor's period in
    seconds (NaN where a task starves)."""
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
    return _analyse(f, nices, eq, cycle_levels, settle_levels)


def _analyse(f, nices, eq, cycle_levels, settle_levels):
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
                        below_floor, halflife_decay, running_halflife_decay, p_alone)
    contact = first.waited

    # -- the return map from there: L against H's stale prio after H's slice
    rounds = return_map(f, static[lo], first.x, first.slice, 0, first.seen[-1], p_hi_post, q_hi)
    if rounds[-1].ran == 0:
        return _starves(f, nices, s_eq, lo, hi, static, x_want, p_eq, rounds[-1].x, floor_prio,
                        below_floor, halflife_decay, running_halflife_decay, p_hi_post)
    swing_lo, share_lo, period = attractor(rounds)
    q_lo = rounds[-1].slice
    # ... and H against L's stale prio at the end of L's turns
    ref_lo = rounds[-1].seen[-1]
    rounds_hi = return_map(f, static[hi], int(x_eq[hi]), q_hi, 0, p_hi_post, ref_lo, max(1, q_lo))
    swing_hi = attractor(rounds_hi)[0] if rounds_hi[-1].ran and rounds_hi[-1].waited else 0

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

    kind = "cycles" if max(swing_lo, swing_hi) > cycle_levels else "settles"
    shares = np.zeros(2)
    if kind == "cycles":
        shares[lo], shares[hi] = share_lo, 1 - share_lo
    elif rounds[-1].ran == q_lo == f.slice(static[lo], static[lo]):
        # where L's turn is one HZ/2 slice the shares are counts of whole
        # slices, not the level's balance.  But H's prio is not the one
        # stale value return_map holds it at: its run_avg swings with every
        # round and its prio crosses a level on some rounds and not on
        # others, and the pair has more than one such pattern at one set of
        # parameters (half-life 5189, nice_const 11593: one +5 slice per two
        # nice-0 slices, a third, or a mix of two and three, 0.265), of
        # which the run's history picks one.  So the pair is followed, both
        # run_avgs moving, from the spawn (as classify_run spawns it: the
        # first task runs first) over default_seconds, and its shares are
        # those of the last third, which classify_run measures
        ticks = int(default_seconds(f.params_with_hz()) * f.hz)
        shares[:] = pair_share(f, static, x0, 0, ticks - 2 * ticks // 3,
                               warmup=2 * ticks // 3)
    else:
        shares = discrete.copy()
    settling = math.nan
    if kind == "settles":
        # the settling schedule: at contact H has the run_avg it reached
        # running alone, which moves to the fixed point's at the running
        # rate as the two share the CPU, and its prio with it; L follows the
        # return map against that moving prio until H is within a level
        excess = alone(contact) - x_hi_post

        def sinking(ticks):
            return f.prio(int(x_hi_post + excess * math.exp(-mu * ticks)), static[hi])

        sunk = math.log(max(abs(excess), 1) / max(level_width[hi], 1)) / mu if excess else 0
        schedule = return_map(f, static[lo], first.x, first.slice, 0, first.seen[-1], sinking, q_hi,
                           until=sunk)
        bands = [None, None]
        bands[lo] = _band(rounds)
        bands[hi] = _band(rounds_hi) if rounds_hi[-1].ran and rounds_hi[-1].waited else \
            (p_hi_post, p_hi_post)
        def h_prio(ticks):
            if ticks < contact:
                return f.prio(int(alone(ticks)), static[hi])
            return sinking(ticks - contact)

        settling = _settling(f, [first] + schedule, h_prio, bands[lo], bands[hi], settle_levels)
    why = _why(kind, nices, lo, hi, s_eq, shares, step, decay, swing, q, f, period, gain,
               cycle_levels, below_floor, floor, floor_prio)
    return Stability(kind, settling, shares, s_eq, discrete, tie, np.array(p_eq), x_eq, level_width,
                     np.array(q), step, decay, swing, gain, floor, floor_prio, below_floor,
                     x_want < f.min,
                     halflife_decay, running_halflife_decay, contact / f.hz, period / f.hz, why)


def _starves(f, nices, s_eq, lo, hi, static, x_want, p_eq, floor_x, floor_prio, below_floor,
             halflife_decay, running_halflife_decay, ref_prio):
    shares = np.zeros(2)
    shares[hi] = 1.0
    stuck = f.prio(floor_x, static[lo])
    why = (f"Task {lo + 1} (nice {nices[lo]}) starves: waiting, its run_avg decays only to "
           f"{floor_x} (decay_value over FAIRNESS_TICKS={f.fair} truncates to no change there; "
           f"MIN_RUN_AVG is {f.min}), where effective_prio gives it prio {stuck}, worse than the "
           f"{ref_prio} of task {hi + 1} (nice {nices[hi]}): it never runs again. The fixed point "
           f"wants its run_avg at {x_want[lo]:.3g} (a share of {s_eq[lo]:.2g}).")
    nan = np.full(2, np.nan)
    return Stability("starves", math.nan, shares, s_eq, shares.copy(), float("nan"), np.array(p_eq),
                     x_want, x_want * (math.exp(f.k) - 1), nan, nan.copy(), nan.copy(), nan.copy(),
                     float("nan"), int(floor_x), floor_prio, below_floor, x_want < f.min,
                     halflife_decay, running_halflife_decay, math.nan, math.nan, why)


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


def _band(rounds):
    """The prio range of the attractor (its last ATTRACTOR rounds)."""
    seen = [p for r in rounds[-ATTRACTOR:] for p in r.seen]
    return min(seen), max(seen)


def _settling(f, rounds, h_prio, band_lo, band_hi, levels):
    """When the loop settles on the settling schedule, measured as
    pysched.analysis.measure.prio_settling_time measures a simulated run: the first
    moment after which each task's prio stays within `levels` of the range
    it keeps on the attractor (band_lo for L, band_hi for H), in seconds
    from the spawn.  L's prios are those the return map gave it (the
    approach, then the schedule's rounds, each at its tick); H's is
    h_prio(ticks), looked at where L's are."""
    def out(p, band):
        return p < band[0] - levels or p > band[1] + levels

    back = 0
    t0 = 0
    for r in rounds:
        for p, dt in zip(r.seen, r.at):
            t = t0 + dt
            if out(p, band_lo) or out(h_prio(t), band_hi):
                back = None
            elif back is None:
                back = t
        t0 += r.waited + r.ran
    return (t0 if back is None else back) / f.hz


def _why(kind, nices, lo, hi, s_eq, shares, step, decay, swing, q, f, period, gain, cycle_levels,
         below_floor, floor, floor_prio):
    small, big = f"task {lo + 1} (nice {nices[lo]})", f"task {hi + 1} (nice {nices[hi]})"
    text = (f"One {q[lo]}-tick timeslice of {small} moves its run_avg by {step[lo]:.2g} prio "
            f"levels, and it decays by {decay[lo]:.2g} levels while {big} runs its {q[hi]}-tick "
            f"slice, which moves {big}'s own run_avg by {step[hi]:.2g} levels. ")
    if kind == "cycles":
        text += (f"The loop cannot hold a level: {small}'s prio swings over {swing[lo]:.0f} levels "
                 f"({big}: {swing[hi]:.0f}), more than {cycle_levels:g}, every "
                 f"{period / f.hz:.3g} s, and it gets {shares[lo]:.3g} of the CPU against the "
                 f"fixed point's {s_eq[lo]:.3g}.")
        if below_floor[lo]:
            text += (f" The fixed point puts its run_avg below {max(floor, f.min)}, where "
                     f"decay_value stops decaying it (prio {floor_prio[lo]}): it cannot get "
                     f"there.")
    else:
        text += (f"It settles: the prios swing over at most {max(swing):.0f} level(s) and "
                 f"{small} gets {shares[lo]:.3g} of the CPU (fixed point {s_eq[lo]:.3g}).")
    text += (f" The return map carries {abs(gain):.2g} of a deviation of its run_avg from one turn "
             f"into the next.")
    return text
