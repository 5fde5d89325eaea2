"""The O(1) family (2.5.64, 2.5.64-bk4, 2.5.65) analysed: its formulas, as
the very C functions the simulator runs, and the steady state of a task
that runs and sleeps beside hogs.

The formulas take ``params``, which overrides the preset's parameters, as
in Simulator(params=...).

The steady state (o1_steady_state): where the O(1) scheduler's sleep_avg
settles for a task that runs r ms and sleeps s ms, over and over, beside
CPU hogs -- and how long it takes to get there -- from the kernel's
bookkeeping alone, without running the simulator (pysched.analysis.o1_duty_run is the simulation it is checked
against).

The bookkeeping (docs/schedulers/o1.md §5; policy_o1.c):

- activate_task credits the sleep: sleep_avg += jiffies - last_run
  (2.5.65, Ingo's C4: jiffies - last_run - 1, when positive), capped at
  MAX_SLEEP_AVG; last_run is the jiffy the task last entered schedule(),
  the one it blocked in;
- scheduler_tick takes one back for every tick the task is current at:
  "if (p->sleep_avg) p->sleep_avg--";
- prio = effective_prio(sleep_avg) is recomputed at the wakeup and when a
  timeslice runs out, not at every tick.

On the engine's clock (engine.c: at an instant, the tick comes first, then
the timers) a task that starts its run on a tick boundary -- a timer
wakeup, or a switch at a hog's expiry, both are -- is current at
floor(r) ticks of an r-tick run, blocks in jiffy start + floor(r), and its
sleep timer fires at the first tick at least s after that, so each cycle
credits C = ceil(r + s) - floor(r) ticks (minus one in 2.5.65) and charges
R = floor(r), whatever it waited for the CPU.  The drift per cycle C - R
decides:

- C > R ("top"): sleep_avg climbs to MAX_SLEEP_AVG and saw-tooths between
  MAX - R and MAX: the task wakes with the full bonus;
- C < R ("bottom"): it falls to 0 and saw-tooths between 0 and C;
- C == R ("neutral"): it keeps what it started with (0 for a spawned
  task): the bottom's range.

The time to reach it: the cycles to climb to within `tol` of the range,
each r + s plus the wait for the CPU: none once the task's prio beats the
hogs' (it preempts at its wakeup), else the rest of the hogs' round: at
their prio it queues behind the hogs left in the active array, and since
it ran last its sleep emptied that array and started a new round of
hogs * timeslice ticks, s of which have passed when it wakes.  That wait
is an approximation (it leaves out the task's own slice running out), the
one part of this analysis that is.
"""
from dataclasses import dataclass

from .._checks import check_int, check_number
from ..policy.registry import check_params, formula, policy_info, preset_params
from .result import Result


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


O1_PRESETS = ("linux-2.5.64", "linux-2.5.64-bk4", "linux-2.5.65")
NICE_0 = 120          # NICE_TO_PRIO(0)
MAX_CYCLES = 10**7    # climbing by one tick a cycle from 0 to MAX_SLEEP_AVG=10^6 at most


@dataclass(repr=False)
class O1SteadyState(Result):
    """o1_steady_state's prediction for a task that runs `run_ms` and
    sleeps `sleep_ms` beside hogs (a Result: short repr, as_dict(),
    to_frame()).

    kind: "top" (sleep_avg saturates at MAX_SLEEP_AVG), "bottom" (it
    drains to 0) or "neutral" (each cycle credits what it charges; it
    keeps the 0 it was spawned with).  credit_ticks, charged_ticks: what
    one cycle credits at the wakeup and charges while running (the drift
    is their difference).  sleep_avg_low, sleep_avg_high: the range the
    saw-tooth covers; prio_at_wakeup: effective_prio of sleep_avg_high,
    with bonus = static_prio - prio_at_wakeup (-5..+5) and interactive
    (TASK_INTERACTIVE at that prio); prio_low, prio_high: the range its
    prio takes (a timeslice that runs out mid-run recomputes it lower in
    the saw-tooth); hog_prio: the hogs' prio (sleep_avg 0); preempts: the
    task's prio at wakeup beats the hogs' (it runs at once).
    reach_s: seconds from the spawn until sleep_avg stays within `tol` of
    its range (tol_ticks, absolute); cycle_s: one cycle's length there,
    waits included.  max_sleep_avg, hz: the parameters used.  why: in
    words."""
    preset: str
    kind: str
    credit_ticks: int
    charged_ticks: int
    sleep_avg_low: int
    sleep_avg_high: int
    prio_at_wakeup: int
    bonus: int
    interactive: bool
    prio_low: int
    prio_high: int
    hog_prio: int
    preempts: bool
    reach_s: float
    cycle_s: float
    tol_ticks: float
    max_sleep_avg: int
    hz: int
    why: str

    SHOWN_FIELDS = ("sleep_avg_low", "sleep_avg_high", "prio_at_wakeup", "reach_s")


def _setup(who, preset, params, hz):
    """What an analysis of the O(1) family starts from: the preset checked,
    hz, the parameters checked, their table with the defaults, and f(name,
    *args), a formula of the preset at those.  who: the prefix of the
    errors' messages (the function the user called), "" for none."""
    if preset not in O1_PRESETS:
        raise ValueError(f"{who}preset={preset!r} is not an O(1) preset: one of "
                         f"{', '.join(O1_PRESETS)}")
    if hz is None:
        hz = policy_info(preset)["hz"]
    hz = check_int(f"{who}hz", hz, 1, 100_000)
    params = check_params(preset, params, hz)
    table = {p.name: p.default for p in preset_params(preset, hz)}
    table.update(params)

    def f(name, *args):
        return formula(preset, name, *args, params=params, hz=hz)
    return hz, table, f


def _ms(name, v, lo):
    return check_number(name, v, lo, 1e7)


def o1_steady_state(run_ms, sleep_ms, *, preset="linux-2.5.65", nice=0, hogs=2, hog_nice=0,
                    params=None, hz=None, tol=0.05):
    """Predict the steady state of sleep_avg (and bonus, prio, interactive)
    of a task that loops run(run_ms) / sleep(sleep_ms) at `nice` beside
    `hogs` CPU hogs at `hog_nice` on one CPU, under an O(1) preset
    (linux-2.5.64, -bk4 or 2.5.65) with `params` and `hz`, and the time
    to reach it: within tol * MAX_SLEEP_AVG of its range.  See the
    module's doc and O1SteadyState."""
    run_ms = _ms("run_ms", run_ms, 0)
    sleep_ms = _ms("sleep_ms", sleep_ms, 0)
    if run_ms + sleep_ms <= 0:
        raise ValueError("run_ms + sleep_ms must be positive: a cycle takes time")
    nice = check_int("nice", nice, -20, 19)
    hogs = check_int("hogs", hogs, 0, 10_000)
    hog_nice = check_int("hog_nice", hog_nice, -20, 19)
    tol = check_number("tol", tol, 0, 1)
    hz, table, f = _setup("", preset, params, hz)
    max_avg = table["max_sleep_avg"]
    static, hog_static = NICE_0 + nice, NICE_0 + hog_nice
    # r and s in ticks, exactly: ns over the tick's ns, as integers
    tick_ns = 10**9 // hz
    r_ns, s_ns = round(run_ms * 1e6), round(sleep_ms * 1e6)
    charged = r_ns // tick_ns
    credit = -(-(r_ns + s_ns) // tick_ns) - charged
    if table["sleep_credit_minus_one"]:
        credit = max(credit - 1, 0)
    if credit > charged:
        kind, high = "top", max_avg
        low = max(high - charged, 0)
    else:
        kind = "bottom" if credit < charged else "neutral"
        low, high = 0, min(credit, max_avg)

    prio = f("effective_prio", static, high)
    hog_prio = f("effective_prio", hog_static, 0)
    # a slice that runs out mid-run recomputes prio from the sleep_avg then;
    # the slice carries over from cycle to cycle, so its end falls on every
    # tick of the run in turn, the last (sleep_avg at its low) among them
    prio_high = f("effective_prio", static, low) if charged else prio
    interactive = bool(f("task_interactive", prio, static))

    tol_ticks = tol * max_avg
    hog_round = hogs * f("task_timeslice", hog_static)

    def cycle_ticks(x):
        # no better than the hogs, it queues behind those left in the active
        # array; it ran last, so its sleep emptied the array and started a
        # new round of the hogs' slices: it waits for the rest of that round
        wait = 0.0
        if hogs and f("effective_prio", static, x) >= hog_prio:
            wait = hog_round - (s_ns / tick_ns) % hog_round
        return r_ns / tick_ns + s_ns / tick_ns + wait

    # from the spawn (sleep_avg 0, first a run): each wakeup adds the drift
    # until the wake value is within tol of MAX (top); bottom and neutral
    # tasks are in their range from the start
    ticks = 0.0
    if kind == "top":
        x = 0
        ticks = r_ns / tick_ns + s_ns / tick_ns  # the first run and sleep
        cycles = 0
        while True:
            x = min(max(x - charged, 0) + credit, max_avg)
            if x >= high - tol_ticks or cycles == MAX_CYCLES:
                break
            ticks += cycle_ticks(x)
            cycles += 1
    cycle = cycle_ticks(high) / hz

    preempts = prio < hog_prio
    why = _why(kind, credit, charged, table["sleep_credit_minus_one"], low, high, max_avg, prio,
               hog_prio, preempts, interactive, ticks / hz, tol, hz, r_ns, s_ns)
    return O1SteadyState(preset, kind, credit, charged, low, high, prio, static - prio, interactive,
                         prio, prio_high, hog_prio, preempts, ticks / hz, cycle, tol_ticks, max_avg,
                         hz, why)


def _why(kind, credit, charged, minus_one, low, high, max_avg, prio, hog_prio, preempts,
         interactive, reach_s, tol, hz, r_ns, s_ns):
    ms = 1000 / hz
    text = (f"Each cycle, a {r_ns / 1e6:g} ms run is current at {charged} tick(s) "
            f"(sleep_avg -{charged}) and the {s_ns / 1e6:g} ms sleep is credited {credit} "
            f"tick(s) at the wakeup (jiffies - last_run{' - 1' if minus_one else ''}). ")
    if kind == "top":
        text += (f"It gains {credit - charged} a cycle and reaches MAX_SLEEP_AVG={max_avg} "
                 f"(within {tol:.0%}) after {reach_s:.3g} s; then it saw-tooths between {low} "
                 f"and {high}.")
    elif kind == "bottom":
        text += f"It loses {charged - credit} a cycle: it stays between 0 and {high}."
    else:
        text += f"Credit and charge cancel: it keeps the 0 it started with, between 0 and {high}."
    text += (f" It wakes at prio {prio}, {'better than' if preempts else 'no better than'} the hogs' {hog_prio}: "
             f"{'it preempts them at once' if preempts else 'it queues behind them'}; "
             f"{'interactive' if interactive else 'not interactive'} (TASK_INTERACTIVE).")
    return text + f" ({ms:g} ms a tick.)"
