"""Measurements on a simulated run's series: CPU shares over windows, the
settling time, limit cycles, and classify_run, which runs CPU hogs under
houston-2003 and says what their feedback loop did (settled, cycled or
starved a task).

These are the check of pysched.analysis.stability's prediction: they look only at
what the simulator recorded (``record="series"`` with the fields
``cpu_ns`` and ``prio``), never at the prediction.

Series come as sim.series_times() (ns, one per sample) and sim.series(field)
(samples x tasks, a column per pid).
"""
import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from .._checks import check_int, check_number
from . import houston
from .mix_tasks import task_specs
from .result import Result
from .. import programs
from ..simulator import Simulator

PRESET = "houston-2003"
# the shortest window shares are measured over: the longest timeslice is
# HZ/2 (task_timeslice at prio >= static_prio), and a share over fewer
# than 20 of them depends on where their ends fall
MIN_WINDOW_S = 10.0


# the shortest sample interval a simulator records: a tick at the highest HZ
# (100,000) is 10 us; an interval below 1 us is no run's in ns
MIN_SAMPLE_NS = 1000


def _series(times, values, what, caller="measure"):
    """times (ns) as an int64 vector and values as a float samples x tasks
    array of the same length; times whose samples are less than a
    microsecond apart are refused: they are in seconds (or ms), not ns."""
    times = np.asarray(times)
    if times.ndim != 1 or len(times) < 2:
        raise ValueError(f"{caller}: times must be a vector of at least 2 sample times (ns), not "
                         f"shape {times.shape}")
    if not np.issubdtype(times.dtype, np.number):
        raise TypeError(f"{caller}: times must be numbers (ns), not {times.dtype}")
    if np.any(np.diff(times) <= 0):
        raise ValueError(f"{caller}: times must increase strictly (sim.series_times())")
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2 or values.shape[0] != len(times):
        raise ValueError(f"{caller}: {what} must have one row per sample time ({len(times)}), not "
                         f"shape {values.shape}")
    step = float(np.median(np.diff(times)))
    if step < MIN_SAMPLE_NS:
        hint = "pass unit='s' or " if caller == "limit_cycle" else ""
        raise ValueError(f"{caller}: times are in ns (sim.series_times()), but its samples are "
                         f"{step:g} apart, less than a microsecond: these look like seconds; "
                         f"{hint}multiply them by 1e9")
    return times.astype(np.int64), values


def _tail_start(times, tail):
    """Index of the first sample of the last `tail` fraction of the run."""
    t0 = times[-1] - tail * (times[-1] - times[0])
    return int(np.searchsorted(times, t0))


def window_shares(times, cpu_ns, window_s, *, _caller="window_shares"):
    """CPU shares over windows of `window_s` seconds, one window starting
    at each sample that has a whole window after it.

    times: sim.series_times() (ns); cpu_ns: sim.series("cpu_ns"), samples x
    tasks.  Returns (starts, shares): the windows' start times in seconds
    and their shares (windows x tasks), each the task's CPU time over the
    window divided by its length (measured between samples, so windows are
    at least window_s long)."""
    times, cpu = _series(times, cpu_ns, "cpu_ns", _caller)
    window_s = check_number("window_s", window_s, 1e-9, 1e9)
    ends = np.searchsorted(times, times + window_s * 1e9)
    whole = ends < len(times)
    starts = np.nonzero(whole)[0]
    ends = ends[whole]
    if not len(starts):
        raise ValueError(f"window_s={window_s} is longer than the series "
                         f"({(times[-1] - times[0]) / 1e9:g} s)")
    span = (times[ends] - times[starts])[:, None]
    return times[starts] / 1e9, np.nan_to_num(cpu[ends] - cpu[starts]) / span


Settling = namedtuple("Settling", "settling_s shares window_s")


def settling_time(times, cpu_ns, *, window_s=None, rel_tol=0.1, abs_tol=0.002, tail=1 / 3,
                  _caller="settling_time"):
    """When the CPU shares settle: the start of the first window (of
    window_s seconds) from which on every window's shares stay within
    tolerance of the final shares (those of the last `tail` of the run),
    in seconds from the start of the run.  The tolerance of a task is
    rel_tol times its final share, at least abs_tol (a share of a few
    thousandths is otherwise never "within 10 %" of itself).

    window_s=None: a window that resolves the tolerance -- one burst of
    running more or less moves a task's share by burst/window, so the
    window holds four times its longest burst over its tolerance (the
    bursts of the last `tail`: a task's long first timeslice says nothing
    of the settled state), at least MIN_WINDOW_S and at most the last
    `tail`.

    Returns Settling(settling_s, shares, window_s): settling_s is None when
    the last windows are still out of tolerance (the shares never settle:
    they oscillate slower than the window, or drift to the end); shares
    are the final shares."""
    times, cpu = _series(times, cpu_ns, "cpu_ns", _caller)
    rel_tol = check_number("rel_tol", rel_tol, 0, 1e9)
    abs_tol = check_number("abs_tol", abs_tol, 0, 1)
    tail = check_number("tail", tail, 1e-6, 1)
    i = min(_tail_start(times, tail), len(times) - 2)
    final = np.nan_to_num(cpu[-1] - cpu[i]) / (times[-1] - times[i])
    tol = np.maximum(rel_tol * final, abs_tol)
    if window_s is None:
        window_s = min(_resolving_window(times[i:], cpu[i:], tol),
                       (times[-1] - times[0]) / 1e9 * tail)
    starts, shares = window_shares(times, cpu, window_s, _caller=_caller)
    bad = np.nonzero(np.any(np.abs(shares - final) > tol, axis=1))[0]
    if not len(bad):
        settled = float(times[0] / 1e9)
    elif bad[-1] == len(starts) - 1:
        settled = None
    else:
        settled = float(starts[bad[-1] + 1])
    return Settling(settled, final, float(window_s))


PrioSettling = namedtuple("PrioSettling", "settling_s low high")


def prio_settling_time(times, prio, *, levels=1, tail=1 / 3, _caller="prio_settling_time"):
    """When the feedback loop settles: the first sample time after which
    every task's prio stays within `levels` of the range [low, high] it
    keeps over the last `tail` of the run, in seconds from the start of
    the run (0 if it never left).

    A settling time in the control sense -- the response enters a band
    round its final value and stays -- with the band the loop's own
    quantization: the prio levels a settled task still moves between, and
    `levels` beside them.  Unlike the shares' settling_time it needs no
    window, so it resolves one sample.

    times: sim.series_times() (ns); prio: sim.series("prio"), samples x
    tasks.  Returns PrioSettling(settling_s, low, high), low and high per
    task."""
    times, prio = _series(times, prio, "prio", _caller)
    levels = check_number("levels", levels, 0, 1000)
    tail = check_number("tail", tail, 1e-6, 1)
    i = min(_tail_start(times, tail), len(times) - 2)
    low, high = np.nanmin(prio[i:], axis=0), np.nanmax(prio[i:], axis=0)
    with np.errstate(invalid="ignore"):
        out = np.any((prio < low - levels) | (prio > high + levels), axis=1)
    last = np.nonzero(out)[0]
    settled = times[last[-1] + 1] if len(last) else 0
    return PrioSettling(float(settled / 1e9), low, high)


@dataclass(repr=False)
class LimitCycle(Result):
    """A sustained oscillation of a series (a Result: kind "cycle", why,
    short repr, as_dict(), to_frame()): its peak-to-peak amplitude (max -
    min, in the series' unit), its extremes, and its period in seconds
    (NaN when no period repeats: the swing is aperiodic)."""
    SHOWN_FIELDS = ("amplitude", "period_s")

    amplitude: float
    low: float
    high: float
    period_s: float

    @property
    def kind(self):
        return "cycle"

    @property
    def why(self):
        every = ("at no regular period" if math.isnan(self.period_s) else
                 f"every {self.period_s:.4g} s")
        return f"It swings over {self.amplitude:g} ({self.low:g} to {self.high:g}) {every}."


UNITS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9}


def limit_cycle(times, values, *, min_amplitude=1.0, unit="ns", _caller="limit_cycle"):
    """The oscillation of one series (e.g. a task's prio over the end of a
    run): its amplitude (max - min) and period in seconds, or None if the
    series moves by less than min_amplitude (it sits still: no cycle).

    times: the sample times, in ns as sim.series_times() gives them
    (unit="ns"), or in the unit given: "s", "ms", "us".  Times in ns whose
    samples are less than a microsecond apart are refused (ValueError):
    they are seconds given as ns.

    The period is the lag after which the series repeats itself: the first
    peak of its autocorrelation (after its first negative value) that is
    nearly as high (90 %) as the highest, if that is clearly positive
    (r > 0.3).  A series of short spikes whose spacing jitters by more than
    a spike's width correlates weakly with itself at any lag; its period is
    then the mean time between its rises through the upper quarter of its
    range (after a fall through the lower quarter), if those rises recur
    regularly (their spacing varies by at most 25 %).  None: neither."""
    if unit not in UNITS:
        raise ValueError(f"{_caller}: unit={unit!r} is not one of {', '.join(map(repr, UNITS))}")
    if unit != "ns":
        times = np.asarray(times, dtype=float) * UNITS[unit]
    shape = np.shape(values)
    if len(shape) == 2 and shape[1] != 1:
        raise ValueError(f"{_caller}: values must be one series (a vector), not {shape[1]} columns")
    times, v = _series(times, values, "values", _caller)
    min_amplitude = check_number("min_amplitude", min_amplitude, 0, 1e9)
    v = v[:, 0]
    finite = np.isfinite(v)
    times, v = times[finite], v[finite]
    if len(v) < 2:
        raise ValueError(f"{_caller}: values holds fewer than 2 finite samples")
    low, high = float(v.min()), float(v.max())
    if high - low < min_amplitude or high == low:
        return None
    period = _period(times, v)
    if period is None:
        period = _rise_period(times, v, low, high)
    return LimitCycle(high - low, low, high, math.nan if period is None else period)


def _period(times, v):
    """The lag (s) at which v repeats itself, from its autocorrelation (see
    limit_cycle), or None.

    The peak is chosen on the biased estimate (each lag's sum over the
    whole length n), which tapers a lag by 1 - lag/n, and judged clearly
    positive on the unbiased one (over the n - lag pairs it has).  Choosing
    on the unbiased estimate made the period grow with the run: its
    variance grows with the lag, and a longer run has more long lags, so
    the highest of them rose until the true first peak fell below 90 % of
    it and a multiple or a chance peak was taken (houston-2003, nice 0 vs
    19, run_avg_halflife=5000, nice_const=3200: 6.25 s for runs of 60 and
    300 s, 72.25 s for 1,200 s)."""
    dt = (times[-1] - times[0]) / (len(times) - 1) / 1e9
    x = v - v.mean()
    n = len(x)
    spectrum = np.fft.rfft(x, 2 * n)
    r = np.fft.irfft(spectrum * np.conj(spectrum))[:n]
    if r[0] <= 0:
        return None
    # only lags with at least half the series to compare: the longer ones
    # rest on too few pairs to say anything
    biased = r[: n // 2] / r[0]
    negative = np.nonzero(biased < 0)[0]
    if not len(negative):
        return None
    after = biased[negative[0]:]
    # the first peak nearly as high as the highest: the period itself, not
    # a multiple of it that noise made a hair higher
    peaks = np.nonzero((after[1:-1] >= after[:-2]) & (after[1:-1] >= after[2:])
                       & (after[1:-1] >= 0.9 * after.max()))[0] + 1
    lag = negative[0] + (int(peaks[0]) if len(peaks) else int(np.argmax(after)))
    if biased[lag] * n / (n - lag) < 0.3:
        return None
    return float(lag * dt)


def _rise_period(times, v, low, high):
    """The mean time (s) between the rises of v into the top quarter of
    its range, each after a fall into the bottom quarter, if there are at
    least three and their spacing varies by at most 25 % (its coefficient
    of variation); None otherwise."""
    span = high - low
    bottom = v <= low + span / 4
    top = v >= high - span / 4
    rises, armed = [], False
    # a state machine over the samples where v is at either end
    for i in np.nonzero(bottom | top)[0]:
        if bottom[i]:
            armed = True
        elif armed:
            rises.append(times[i])
            armed = False
    if len(rises) < 3:
        return None
    gaps = np.diff(np.asarray(rises, dtype=float))
    if gaps.std() > 0.25 * gaps.mean():
        return None
    return float((rises[-1] - rises[0]) / (len(rises) - 1) / 1e9)


@dataclass(repr=False)
class MeasuredRun(Result):
    """What a simulated run of CPU hogs did (classify_run; a Result: short
    repr, as_dict(), to_frame(), NaN where a value does not exist).

    kind: "starves" (a task got no CPU at all over the last `tail` of the
    run), "cycles" (a task's prio swung over more than cycle_levels levels
    there, or the shares never settled) or "settles"; why: the verdict in
    words.  shares: **the shares to plot** -- each task's CPU share over
    the last `tail`, to set beside Stability.shares.  settling_s: seconds
    from the start until the loop settled (prio_settling_time: every prio
    within settle_levels of the range it keeps at the end), NaN unless it
    settles; shares_settling_s: seconds until the windowed shares settled
    (settling_time), NaN if they never did.  swing_levels: each task's
    prio range (max - min) there; cycle: the widest swing's LimitCycle
    (None if no prio moved).  window_s: the window the shares were
    measured over, in seconds; seconds: the length of the run."""
    SHOWN_FIELDS = ("shares", "settling_s")

    kind: str
    settling_s: float
    shares_settling_s: float
    shares: np.ndarray
    swing_levels: np.ndarray
    cycle: LimitCycle | None
    window_s: float
    seconds: float
    why: str


def classify_series(times, cpu_ns, prio, *, tail=1 / 3, window_s=None, rel_tol=0.1, abs_tol=0.002,
                    cycle_levels=3, settle_levels=1, _caller="classify_series"):
    """classify_run's verdict on series already recorded: times
    (sim.series_times()), cpu_ns and prio (sim.series("cpu_ns"),
    sim.series("prio")).  window_s, rel_tol, abs_tol and tail: as for
    settling_time; settle_levels: as prio_settling_time's levels."""
    times, cpu = _series(times, cpu_ns, "cpu_ns", _caller)
    _, prio = _series(times, prio, "prio", _caller)
    if prio.shape != cpu.shape:
        raise ValueError(f"{_caller}: prio has shape {prio.shape}, cpu_ns {cpu.shape}: give both "
                         "for the same tasks")
    tail = check_number("tail", tail, 1e-6, 1)
    cycle_levels = check_number("cycle_levels", cycle_levels, 0, 1000)
    i = min(_tail_start(times, tail), len(times) - 2)
    used = np.nan_to_num(cpu[-1] - cpu[i])
    swing = np.array([np.nanmax(p) - np.nanmin(p) for p in prio[i:].T])
    widest = int(np.argmax(swing))
    cycle = limit_cycle(times[i:], prio[i:, widest], _caller=_caller)
    shares_settling, shares, window_s = settling_time(times, cpu, window_s=window_s,
                                                      rel_tol=rel_tol, abs_tol=abs_tol, tail=tail,
                                                      _caller=_caller)
    settling = prio_settling_time(times, prio, levels=settle_levels, tail=tail,
                                  _caller=_caller).settling_s
    if np.any(used <= 0):
        kind = "starves"
    elif np.any(swing > cycle_levels) or shares_settling is None:
        kind = "cycles"
    else:
        kind = "settles"
    widest_task = f"task {widest + 1}"
    if kind == "starves":
        why = (f"Task {int(np.argmin(used)) + 1} got no CPU over the last {tail:.2g} of the run: "
               "it starves.")
    elif kind == "cycles" and np.any(swing > cycle_levels):
        why = (f"The prio of {widest_task} swung over {swing[widest]:g} levels over the last "
               f"{tail:.2g} of the run, more than {cycle_levels:g}"
               + (f", every {cycle.period_s:.4g} s." if cycle is not None
                  and not math.isnan(cycle.period_s) else "."))
    elif kind == "cycles":
        why = f"The shares over windows of {window_s:.3g} s never settled."
    else:
        why = (f"Every prio stayed within {settle_levels:g} level(s) of its final range from "
               f"{settling:.3g} s on, and the shares settled.")
    return MeasuredRun(kind, settling if kind == "settles" else math.nan,
                       math.nan if shares_settling is None else shares_settling, shares, swing,
                       cycle, float(window_s), float((times[-1] - times[0]) / 1e9), why)


def _longest_bursts(times, cpu_ns):
    """Each task's longest stretch of running without a break, in seconds:
    the longest run of consecutive samples over which its cpu_ns grew as
    fast as the clock (to within one sample's length)."""
    times, cpu = _series(times, cpu_ns, "cpu_ns", "settling_time")
    dt = np.diff(times).astype(float)
    out = []
    for grew in (np.nan_to_num(np.diff(cpu, axis=0)) >= dt[:, None]).T:
        # time run so far, minus its value at the last break: the current stretch
        ran = np.concatenate([[0.0], np.cumsum(np.where(grew, dt, 0.0))])
        at_break = np.maximum.accumulate(np.concatenate([[0.0], np.where(grew, 0.0, ran[1:])]))
        out.append((ran - at_break).max() / 1e9)
    return np.array(out)


def _resolving_window(times, cpu_ns, tol):
    """The shortest window whose shares resolve the tolerances `tol` (one per
    task): one burst of running more or less in a window of W seconds moves a
    share by burst/W, so W holds 4 * burst / tol (at least MIN_WINDOW_S)."""
    bursts = _longest_bursts(times, cpu_ns)
    tol = np.broadcast_to(np.asarray(tol, dtype=float), bursts.shape)
    with np.errstate(divide="ignore"):
        need = np.where(tol > 0, 4 * bursts / tol, np.inf)
    return float(max(MIN_WINDOW_S, need.max()))


def default_seconds(params=None):
    """How long classify_run simulates by default: 30 half-lives of a
    waiting task's run_avg as the patch decays it (at least 60 s), so that
    the slowest approach (a nice +19 task decaying to a share of a few
    thousandths takes ~7 of them) ends well before the last third, which
    is what gets measured."""
    c = houston.constants(params)
    # decay_value's first branch per tick: j = as - as/8 (C truncates the
    # division toward zero), i.e. value *= 1 + j/65536
    as_ = c["run_avg_as"]
    j = as_ - int(as_ / 8)
    half_life_ticks = math.log(2) / -math.log1p(j / 65536)
    return max(60.0, 30 * half_life_ticks / c["hz"])


def classify_run(tasks, *, cpus=1, params=None, seconds=None, seed=0, series_every=None,
                 **criteria):
    """Run `tasks` under houston-2003 with `params` (hz among them, as for
    pysched.analysis.houston) and classify what their feedback loop did
    (classify_series, whose keywords `criteria` passes on).  tasks: nice
    values (CPU hogs) and (run_ms, sleep_ms[, nice]) duty cycles (or dicts
    with those keys), spawned in that order on `cpus` CPUs.
    seconds=None: default_seconds(params).  series_every: the sampling
    period in ticks (default: 10 ms).  Returns a MeasuredRun."""
    unknown = sorted(set(criteria) - set(CRITERIA))
    if unknown:
        raise TypeError(f"classify_run() got an unexpected keyword argument {unknown[0]!r}; its "
                        f"criteria (classify_series's) are {', '.join(CRITERIA)}")
    specs = task_specs(tasks, "classify_run")
    if params is not None and not isinstance(params, dict):
        raise TypeError(f"params must be a dict, not {type(params).__name__}")
    params = dict(params or {})
    hz = check_int("hz", params.pop("hz", 1000), 1, 100_000)
    if seconds is None:
        seconds = default_seconds(dict(params, hz=hz))
    seconds = check_number("seconds", seconds, 0.01, 1e6)
    if series_every is None:
        series_every = max(1, hz // 100)
    series_every = check_int("series_every", series_every, 1, 2**31 - 1)
    sim = Simulator(PRESET, cpus=cpus, hz=hz, seed=seed, params=params, record="series",
                    series_fields=["prio", "cpu_ns"], series_every=series_every,
                    max_trace_bytes=1 << 30)
    for nice, run_ms, sleep_ms in specs:
        if run_ms is None:
            sim.spawn(programs.cpu_hog(), nice=nice)
        else:
            sim.spawn(programs.Program().loop().run(us=round(run_ms * 1000))
                      .sleep(us=round(sleep_ms * 1000)).end(), nice=nice)
    sim.run(seconds=seconds)
    return classify_series(sim.series_times(), sim.series("cpu_ns"), sim.series("prio"),
                           _caller="classify_run", **criteria)


# classify_series's keywords, which classify_run passes on
CRITERIA = ("tail", "window_s", "rel_tol", "abs_tol", "cycle_levels", "settle_levels")



@dataclass(repr=False)
class SleepAvgRun(Result):
    """What a simulated run did to a task's sleep_avg (o1_duty_run,
    sleep_avg_steady; a Result: kind "steady range", why, short repr,
    as_dict(), to_frame()): its range over the last `tail` of the run
    (sleep_avg_low, sleep_avg_high, in ticks) and its prio range there
    (prio_low, prio_high); reach_s: when sleep_avg came, for good, within
    tol_ticks of that range (seconds from the start, 0 if it never left
    it); seconds: the run's length."""
    SHOWN_FIELDS = ("sleep_avg_low", "sleep_avg_high", "prio_low", "prio_high", "reach_s")

    @property
    def kind(self):
        return "steady range"

    @property
    def why(self):
        return (f"Over the end of the {self.seconds:.3g} s run sleep_avg kept within "
                f"{self.sleep_avg_low}..{self.sleep_avg_high} ticks and prio within "
                f"{self.prio_low}..{self.prio_high}, from {self.reach_s:.3g} s on (within "
                f"{self.tol_ticks:g} ticks).")

    sleep_avg_low: int
    sleep_avg_high: int
    prio_low: int
    prio_high: int
    reach_s: float
    tol_ticks: float
    seconds: float


def sleep_avg_steady(times, sleep_avg, prio, *, tol_ticks, tail=1 / 3):
    """The steady range of one task's sleep_avg and prio over the last
    `tail` of a run, and when sleep_avg entered it for good (within
    tol_ticks). times: sim.series_times() (ns); sleep_avg, prio: that
    task's columns of sim.series("sleep_avg") and sim.series("prio"),
    sampled every tick to see the saw-tooth's ends.  Returns a
    SleepAvgRun."""
    times, avg = _series(times, sleep_avg, "sleep_avg", "sleep_avg_steady")
    _, prio = _series(times, prio, "prio", "sleep_avg_steady")
    if avg.shape[1] != 1 or prio.shape[1] != 1:
        raise ValueError("give one task's sleep_avg and prio (a column each)")
    tol_ticks = check_number("tol_ticks", tol_ticks, 0, 1e12)
    tail = check_number("tail", tail, 1e-6, 1)
    avg, prio = avg[:, 0], prio[:, 0]
    i = min(_tail_start(times, tail), len(times) - 2)
    low, high = np.nanmin(avg[i:]), np.nanmax(avg[i:])
    out = np.nonzero((avg < low - tol_ticks) | (avg > high + tol_ticks))[0]
    reach = times[out[-1] + 1] if len(out) else 0
    return SleepAvgRun(int(low), int(high), int(np.nanmin(prio[i:])), int(np.nanmax(prio[i:])),
                       float(reach / 1e9), float(tol_ticks), float((times[-1] - times[0]) / 1e9))


def o1_duty_run(run_ms, sleep_ms, *, preset="linux-2.5.65", nice=0, hogs=2, hog_nice=0,
                params=None, hz=None, seconds=60, seed=0, tol=0.05):
    """Run a task that loops run(run_ms) / sleep(sleep_ms) at `nice`
    beside `hogs` CPU hogs at `hog_nice` on one CPU for `seconds` under
    `preset`, sampling every tick, and measure its sleep_avg's steady
    state (sleep_avg_steady, within tol * max_sleep_avg): the simulation
    pysched.analysis.o1_steady_state is checked against."""
    run_ms = check_number("run_ms", run_ms, 0, 1e7)
    sleep_ms = check_number("sleep_ms", sleep_ms, 0, 1e7)
    if run_ms + sleep_ms <= 0:
        raise ValueError("run_ms + sleep_ms must be positive: a cycle takes time")
    hogs = check_int("hogs", hogs, 0, 10_000)
    tol = check_number("tol", tol, 0, 1)
    sim = Simulator(preset, hz=hz, seed=seed, params=params, record="series",
                    series_fields=["sleep_avg", "prio"], series_every=1, max_trace_bytes=1 << 31)
    task = programs.Program().loop().run(us=round(run_ms * 1000)).sleep(
        us=round(sleep_ms * 1000)).end()
    pid = sim.spawn(task, nice=nice, name="duty")
    for _ in range(hogs):
        sim.spawn(programs.cpu_hog(), nice=hog_nice)
    sim.run(seconds=seconds)
    col = pid - 1
    max_avg = sim.params["max_sleep_avg"]
    return sleep_avg_steady(sim.series_times(), sim.series("sleep_avg")[:, col],
                            sim.series("prio")[:, col], tol_ticks=tol * max_avg)
