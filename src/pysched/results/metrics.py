"""Metrics of a run: what each task got and what it waited for -- its share
of wall time, its wakeup-to-run latency, its longest runnable wait
(starvation), Jain's fairness index over tasks -- and, for periodic tasks,
the deadlines they met and interbench 0.31's own numbers.

Each function reads what the simulator recorded, for any preset and any
number of CPUs: a Simulator, or the array it returns where that array is
all it needs (``sim.latencies()``, the periodic records).  Times are in
milliseconds (columns ``*_ms``), as interbench reports them.  A per-task
result is a table with a row per task: a pandas DataFrame indexed by pid
when pandas is installed, else a dict of NumPy arrays ("pid" first).

About 640 lines, one module: ``ps.metrics`` is the one place a user looks
for a metric, and the periodic tasks' metrics share the others' table,
window and percentile helpers.
"""
import math

import numpy as np

from .. import _core
from .._checks import check_bool, check_int, check_number
from .._lookup import pid_named
from .plot_data import ran_ns, switch_intervals
from .._records import PERIODIC_DTYPE as _PERIODIC_DTYPE
from ..codes import EVENT_KINDS, TASK_STATES
from ..simulator import MAX_SECONDS, Simulator

MS = 1_000_000  # ns per ms
SWITCH, WAKEUP, FORK = (EVENT_KINDS.index(k) for k in ("switch", "wakeup", "fork"))
RUNNING = next(code for code, name in TASK_STATES.items() if name == "running")
DEFAULT_PERCENTILES = (50, 90, 99)

# one record per call of a periodic op (interbench's periodic_schedule), as
# sim.periodic() returns them: see deadlines() and interbench_stats()
PERIODIC_DTYPE = _PERIODIC_DTYPE


# ---------------------------------------------------------------- tables and inputs

def _pandas():
    """The pandas module, or None if it is not installed (a pandas that
    fails to import for another reason says why)."""
    try:
        import pandas
    except ModuleNotFoundError as missing:
        if missing.name != "pandas":
            raise
        return None
    return pandas


def _table(pids, columns):
    """A row per pid: a DataFrame indexed by pid, or without pandas a dict
    of arrays with "pid" first."""
    pids = np.asarray(pids, dtype=np.int64)
    pd = _pandas()
    if pd is None:
        return {"pid": pids, **{k: np.asarray(v) for k, v in columns.items()}}
    return pd.DataFrame(columns, index=pd.Index(pids, name="pid"))


def _simulator(sim, what):
    if not isinstance(sim, Simulator):
        raise TypeError(f"{what} needs a pysched.Simulator, not {type(sim).__name__}")
    return sim


def _tasks(tasks, sim, what):
    """The distinct pids `tasks` names -- a pid, a task name (with a
    Simulator), or a list of them -- in pid order (the tables' rows); None
    stays None (every task)."""
    if tasks is None:
        return None
    if isinstance(tasks, (str, bytes)) or not hasattr(tasks, "__iter__"):
        tasks = [tasks]
    pids = []
    for t in tasks:
        if isinstance(t, str):
            if sim is None:
                raise TypeError(f"{what}: task {t!r} is a name, which only a Simulator resolves; "
                                "give pids")
            pids.append(pid_named(sim, t))
        else:
            pids.append(check_int("pid in tasks", t, 1, 2**31 - 1))
    if not pids:
        raise ValueError(f"{what}: tasks is empty; give pids (or names), or None for every task")
    return sorted(set(pids))


def _rows(st, pids, what):
    """Indices into stats() `st` of `pids` (None: every row); KeyError for a
    pid it holds no record of."""
    if pids is None:
        return np.arange(len(st))
    at = {p: k for k, p in enumerate(st["pid"].tolist())}
    missing = [p for p in pids if p not in at]
    if missing:
        raise KeyError(f"{what}: no record of task(s) {missing} (stats() keeps the live tasks and "
                       "the last keep_exited exited ones)")
    return np.array([at[p] for p in pids], dtype=np.int64)


def _events(sim, what):
    """The event log, or a StateError that says how to record it."""
    if sim.record == "counters":
        raise _core.StateError(f"{what} reads the event log, which is off: create the Simulator "
                               "with record='events' (or 'series')")
    return sim.events()


def _percentiles(percentiles):
    """The percentiles as a list of numbers in 0..100, and their column
    names (p50_ms ...)."""
    if isinstance(percentiles, (str, bytes)) or not hasattr(percentiles, "__iter__"):
        raise TypeError(f"percentiles must be a list of numbers in 0..100, not {percentiles!r}")
    qs = list(dict.fromkeys(check_number("percentile", q, 0, 100) for q in percentiles))
    return qs, [f"p{q:g}_ms" for q in qs]


def _summary(keys, values_ns, wanted, percentiles):
    """count, mean_ms, the percentiles (p50_ms ...) and max_ms of
    values_ns per key of `wanted` (sorted distinct ints); NaN where a key
    has no value.  Percentiles interpolate linearly, as numpy.percentile."""
    qs, names = _percentiles(percentiles)
    wanted = np.asarray(wanted, dtype=np.int64)
    keys = np.asarray(keys, dtype=np.int64)
    keep = np.isin(keys, wanted)
    keys, v = keys[keep], np.asarray(values_ns, dtype=np.float64)[keep]
    order = np.lexsort((v, keys))
    row, v = np.searchsorted(wanted, keys[order]), v[order]
    count = np.bincount(row, minlength=len(wanted))
    first = np.cumsum(count) - count
    has = count > 0
    out = {"count": count}

    def per_task(compute):
        col = np.full(len(wanted), np.nan)
        col[has] = compute(first[has], count[has])
        return col

    out["mean_ms"] = per_task(
        lambda f, n: np.bincount(row, weights=v, minlength=len(wanted))[has] / n / MS)
    for q, name in zip(qs, names):
        def at(f, n, q=q):
            pos = q / 100 * (n - 1)
            lo = np.floor(pos).astype(np.int64)
            a, b, t = v[f + lo], v[f + np.ceil(pos).astype(np.int64)], pos - lo
            # numpy.percentile's lerp, from the nearer end
            return np.where(t >= 0.5, b - (b - a) * (1 - t), a + (b - a) * t) / MS
        out[name] = per_task(at)
    out["max_ms"] = per_task(lambda f, n: v[f + n - 1] / MS)
    return out


# ---------------------------------------------------------------- CPU share

def _window(sim, start_s, end_s, what):
    """[start_ns, end_ns) of the window, checked against the run."""
    start = 0 if start_s is None else round(check_number("start_s", start_s, 0, MAX_SECONDS) * 1e9)
    end = sim.now_ns if end_s is None else round(check_number("end_s", end_s, 0, MAX_SECONDS) * 1e9)
    if end > sim.now_ns:
        raise ValueError(f"{what}: end_s={end / 1e9:g} is after the end of the run "
                         f"({sim.now_ns / 1e9:g} s)")
    if start >= end:
        raise ValueError(f"{what}: the window start_s={start / 1e9:g} .. end_s={end / 1e9:g} is "
                         f"empty (the run is at {sim.now_ns / 1e9:g} s)")
    return start, end


def _log_start(sim, st, ev):
    """None if the event log holds the whole run, else when what it holds
    starts: its oldest record, if it dropped older ones (on_full=
    "overwrite") or was emptied by clear_records() after a task it knows
    of started (in a whole log no task starts before the first record:
    the first spawn is a switch at once)."""
    begins = int(ev["time_ns"][0]) if len(ev) else sim.now_ns
    if sim.counters()["events_dropped"] or (len(st) and int(st["start_ns"].min()) < begins):
        return begins
    return None


def _check_covered(begins, start_ns, what):
    if begins is not None and start_ns < begins:
        raise ValueError(f"{what}: the event log starts at {begins / 1e9:g} s (it dropped its oldest "
                         "records, on_full='overwrite', or clear_records() emptied it): start the "
                         "window there or later")


def _ran_in(sim, ev, st, start_ns, end_ns, what):
    """CPU time (ns) of each task of `st` in [start_ns, end_ns), from the
    switch events.  Before a CPU's first logged switch, the task it
    switched from ran since the log starts (the idle task in a whole log);
    a CPU with no switch ran its current task all along."""
    begins = _log_start(sim, st, ev)
    _check_covered(begins, start_ns, what)
    begins = begins or 0
    sw = ev[ev["kind"] == SWITCH]
    runs = [switch_intervals(ev, sim.now_ns)]
    for cpu in range(sim.cpus):
        mine = sw[sw["cpu"] == cpu]
        pid, until = ((int(mine["other"][0]), int(mine["time_ns"][0])) if len(mine)
                      else (sim.runqueue(cpu)["curr"], sim.now_ns))
        if pid > 0 and until > begins:
            runs.append(np.array([(cpu, pid, begins, until)], dtype=runs[0].dtype))
    runs = np.concatenate(runs)
    inside = (runs["end_ns"] > start_ns) & (runs["start_ns"] < end_ns)
    runs = runs[inside]
    runs["start_ns"] = np.maximum(runs["start_ns"], start_ns)
    runs["end_ns"] = np.minimum(runs["end_ns"], end_ns)
    return ran_ns(runs, st["pid"])


def cpu_share(sim, *, start_s=None, end_s=None, tasks=None):
    """Each task's share of wall time: the CPU time it got over the time it
    existed (from its spawn or fork to its exit or now), so that a hog
    alone on a CPU has 1 and a task that exited early is not diluted by
    the rest of the run.  Shares of one CPU: on N CPUs they sum to at
    most N.

    Without a window, from the counters (stats()'s cpu_ns over exit_ns or
    now minus start_ns): any run.  With start_s and/or end_s (seconds;
    the window's other end defaults to the run's start or its end), from
    the switch events of the event log (record="events" or "series"),
    exact to the nanosecond; the time a task existed is then cut to the
    window.  After clear_records() the log starts at the clear: a window
    before it misses what ran there.

    tasks: a pid, a task name or a list of them (default: every task
    stats() keeps).  Returns a table (pid, name, cpu_ms, elapsed_ms,
    share), share NaN for a task that did not exist in the window."""
    what = "cpu_share()"
    sim = _simulator(sim, what)
    pids = _tasks(tasks, sim, what)
    st = sim.stats()
    lived_until = np.where(st["exit_ns"] >= 0, st["exit_ns"], sim.now_ns)
    if start_s is None and end_s is None:
        cpu, since, until = st["cpu_ns"], st["start_ns"], lived_until
    else:
        start, end = _window(sim, start_s, end_s, what)
        cpu = _ran_in(sim, _events(sim, what), st, start, end, what)
        since, until = np.maximum(st["start_ns"], start), np.minimum(lived_until, end)
    rows = _rows(st, pids, what)
    cpu, elapsed = cpu[rows], np.maximum(until - since, 0)[rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(elapsed > 0, cpu / elapsed, np.nan)
    return _table(st["pid"][rows], {"name": st["name"][rows].astype(object), "cpu_ms": cpu / MS,
                                    "elapsed_ms": elapsed / MS, "share": share})


# ---------------------------------------------------------------- wakeup latency

def _latency_records(x, what):
    """(pids, latencies_ns, sim or None) of sim.latencies() or of a
    Simulator; (None, vector, None) for a vector of latencies."""
    if isinstance(x, Simulator):
        rec = x.latencies()
        return rec["pid"], rec["latency_ns"], x
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{what} needs a Simulator or sim.latencies() (a structured array with "
                        f"fields pid and latency_ns), not {type(x).__name__}")
    if x.dtype.names is not None:
        missing = [f for f in ("pid", "latency_ns") if f not in x.dtype.names]
        if missing:
            raise ValueError(f"{what}: the latency records have no field(s) {missing}; expected "
                             "sim.latencies()'s fields time_ns, latency_ns, pid, cpu")
        for f in ("pid", "latency_ns"):
            if not np.issubdtype(x.dtype[f], np.integer):
                raise TypeError(f"{what}: field {f!r} must hold integers, not {x.dtype[f]}")
        return x["pid"], x["latency_ns"], None
    if x.ndim != 1 or not np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.bool_):
        raise TypeError(f"{what} needs latency records (sim.latencies()) or a vector of "
                        f"latencies in ns, not an array of {x.dtype} and shape {x.shape}")
    return None, x, None


def wakeup_latency(latencies, *, tasks=None, percentiles=DEFAULT_PERCENTILES, pooled=False):
    """Wakeup-to-run latency per task: count, mean_ms, a column per
    percentile (p50_ms, p90_ms, p99_ms) and max_ms, from sim.latencies()
    (fields time_ns, latency_ns, pid, cpu) or a Simulator's (then with a
    name column and a row for every task kept, woken or not).  A task
    never woken has count 0 and NaN, as has an empty input.

    tasks: a pid, a name (with a Simulator) or a list of them; default
    every task (of the records: every pid they hold).  pooled=True: one
    dict of the same numbers over every wakeup of those tasks together;
    then `latencies` may also be a plain vector of latencies in ns
    (sim.latencies(pid)).  Percentiles interpolate linearly, as
    numpy.percentile.

    The records are those kept: under record="counters" a full buffer
    keeps the newest, while stats()'s lat_count, lat_sum_ns and lat_max_ns
    count every wakeup."""
    what = "wakeup_latency()"
    pooled = check_bool("pooled", pooled)
    pids, ns, sim = _latency_records(latencies, what)
    wanted = _tasks(tasks, sim, what)
    if pids is None:
        if not pooled:
            raise TypeError(f"{what}: a vector of latencies has no pids: give sim.latencies() "
                            "(every task's records) or pooled=True")
        if wanted is not None:
            raise TypeError(f"{what}: a vector of latencies has no pids to choose tasks by")
        pids = np.zeros(len(ns), dtype=np.int64)
    elif pooled:
        chosen = np.ones(len(ns), dtype=bool) if wanted is None else np.isin(pids, wanted)
        pids, ns = np.zeros(int(chosen.sum()), dtype=np.int64), ns[chosen]
    if pooled:
        out = _summary(pids, ns, [0], percentiles)
        return {k: int(v[0]) if k == "count" else float(v[0]) for k, v in out.items()}
    if sim is not None:
        st = sim.stats()
        rows = _rows(st, wanted, what)
        out = _summary(pids, ns, st["pid"][rows], percentiles)
        return _table(st["pid"][rows], {"name": st["name"][rows].astype(object), **out})
    wanted = np.unique(pids) if wanted is None else wanted
    return _table(wanted, _summary(pids, ns, wanted, percentiles))


# ---------------------------------------------------------------- runnable waits

READY, RUN, STOP = 0, 1, 2  # a task becomes runnable, is switched to, stops being runnable


def _marks(sim, st, ev, begins):
    """The instants at which each task became runnable (READY: spawned,
    forked, woken, preempted or yielding), was switched to (RUN) or left
    the CPU not runnable (STOP: asleep or exited), as arrays (pid, time,
    kind) sorted by pid, then in the order they happened."""
    kind, t = ev["kind"], ev["time_ns"]
    pid, other = ev["pid"].astype(np.int64), ev["other"].astype(np.int64)
    seq = np.arange(len(ev), dtype=np.int64) * 2
    sw = (kind == SWITCH) & (pid != other)
    away, to = sw & (other > 0), sw & (pid > 0)
    woken = ((kind == WAKEUP) | (kind == FORK)) & (pid > 0)
    # a task is runnable from its start (spawned or forked), unless the
    # log dropped what happened then
    born = np.ones(len(st), dtype=bool) if begins is None else st["start_ns"] > begins
    parts = [
        # the task switched from leaves first, then the one switched to runs
        (other[away], t[away], seq[away], np.where(ev["value"][away] == RUNNING, READY, STOP)),
        (pid[to], t[to], seq[to] + 1, np.full(int(to.sum()), RUN)),
        (pid[woken], t[woken], seq[woken], np.full(int(woken.sum()), READY)),
        (st["pid"][born], st["start_ns"][born], np.full(int(born.sum()), -1),
         np.full(int(born.sum()), READY)),
    ]
    p, tm, sq, k = (np.concatenate([np.asarray(part[i], dtype=np.int64) for part in parts])
                    for i in range(4))
    order = np.lexsort((sq, tm, p))
    return p[order], tm[order], k[order]


def _waits(sim, st, ev):
    """Every stretch a task spent runnable but not running: arrays (pid,
    start_ns, wait_ns, ongoing), ongoing where it lasts until now."""
    begins = _log_start(sim, st, ev)
    pid, t, kind = _marks(sim, st, ev, begins)
    n = len(pid)
    same_as_prev = np.zeros(n, dtype=bool)
    same_as_prev[1:] = pid[1:] == pid[:-1]
    prev_kind = np.full(n, -1)
    prev_kind[1:] = kind[:-1]
    ready_before = same_as_prev & (prev_kind == READY)
    # a stretch starts at the first of consecutive READY marks
    starts = (kind == READY) & ~ready_before
    start_at = np.maximum.accumulate(np.where(starts, np.arange(n), -1)) if n else np.zeros(0, int)
    ends = (kind == RUN) & ready_before
    w_pid, w_start, w_end = pid[ends], t[start_at[ends]], t[ends]
    last = np.ones(n, dtype=bool)
    last[:-1] = pid[:-1] != pid[1:]
    if begins is not None:
        # the log lost the past: a task whose first mark is RUN had been
        # waiting since before it starts
        early = (kind == RUN) & ~same_as_prev
        w_pid, w_start, w_end = (np.concatenate([w_pid, pid[early]]),
                                 np.concatenate([w_start, np.full(int(early.sum()), begins)]),
                                 np.concatenate([w_end, t[early]]))
    # still waiting at the end: runnable at its last mark
    open_ = last & (kind == READY)
    o_pid, o_start = pid[open_], t[start_at[open_]]
    if begins is not None:
        # a task the kept log never mentions, waiting now, waited all along
        curr = {sim.runqueue(c)["curr"] for c in range(sim.cpus)}
        waiting = ((st["on_rq"] == 1) & (st["exit_ns"] < 0) & (st["state"] == RUNNING)
                   & ~np.isin(st["pid"], list(curr)) & ~np.isin(st["pid"], pid))
        o_pid = np.concatenate([o_pid, st["pid"][waiting]])
        o_start = np.concatenate([o_start, np.full(int(waiting.sum()), begins)])
    return (np.concatenate([w_pid, o_pid]), np.concatenate([w_start, o_start]),
            np.concatenate([w_end - w_start, sim.now_ns - o_start]),
            np.concatenate([np.zeros(len(w_pid), dtype=bool), np.ones(len(o_pid), dtype=bool)]))


def longest_wait(sim, *, tasks=None):
    """Each task's longest stretch runnable but not running -- from the
    moment it was spawned, forked, woken, preempted or yielded to the
    moment a CPU switched to it: starvation shows as a long one.  Read
    from the event log's switch, wakeup and fork events (record="events"
    or "series"); a stretch still going on at the end of the run counts up
    to now (`ongoing`).  The stretches of a task add up to stats()'s
    wait_ns.  If the log dropped its oldest records (on_full="overwrite")
    or was emptied by clear_records(), a stretch begun before its oldest
    record counts from there.

    tasks: a pid, a task name or a list of them (default: every task
    stats() keeps).  Returns a table (pid, name, waits, total_wait_ms,
    longest_ms, longest_start_ms, ongoing): waits counts the stretches
    (zero-length ones too); longest_start_ms is when the longest began (the
    first of equally long ones; NaN without a stretch) and ongoing whether
    it lasts until now."""
    what = "longest_wait()"
    sim = _simulator(sim, what)
    pids = _tasks(tasks, sim, what)
    ev = _events(sim, what)
    st = sim.stats()
    rows = _rows(st, pids, what)
    wanted = st["pid"][rows]
    w_pid, w_start, w_ns, w_open = _waits(sim, st, ev)
    keep = np.isin(w_pid, wanted)
    at = np.searchsorted(wanted, w_pid[keep])  # wanted is in pid order
    w_start, w_ns, w_open = w_start[keep], w_ns[keep], w_open[keep]
    n = len(wanted)
    count = np.bincount(at, minlength=n)
    total = np.zeros(n, dtype=np.int64)
    np.add.at(total, at, w_ns)
    # each task's longest stretch, the first of equally long ones
    order = np.lexsort((w_start, -w_ns, at))
    top = order[np.r_[True, at[order][1:] != at[order][:-1]]] if len(order) else order
    longest = np.zeros(n, dtype=np.int64)
    began = np.full(n, np.nan)
    ongoing = np.zeros(n, dtype=bool)
    longest[at[top]], began[at[top]], ongoing[at[top]] = w_ns[top], w_start[top] / MS, w_open[top]
    return _table(wanted, {
        "name": st["name"][rows].astype(object), "waits": count, "total_wait_ms": total / MS,
        "longest_ms": longest / MS, "longest_start_ms": began, "ongoing": ongoing})


# ---------------------------------------------------------------- fairness

def _vector(what, v):
    """v as a float vector of finite numbers (a list, an array, a pandas
    Series ...), not empty."""
    a = np.asarray(v)
    if a.dtype == object or not np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.bool_):
        raise TypeError(f"{what} must be numbers, not {a.dtype}")
    if a.ndim != 1:
        raise ValueError(f"{what} must be a vector (one value per task), not shape {a.shape}")
    if not len(a):
        raise ValueError(f"{what} is empty: give one value per task")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} holds NaN or infinite values (a task that did not exist in the "
                         "window has share NaN: leave it out)")
    return a


def jain_index(x, *, weights=None):
    """Jain's fairness index (sum x)^2 / (n * sum x^2) of the values x, one
    per task (CPU shares, throughputs ...): 1 when all are equal, 1/n when
    one task gets everything.  With weights (a task's entitlement, e.g.
    what its nice value earns it), the index of x / weights: 1 when every
    task gets in proportion to its weight.  NaN when every value is 0."""
    x = _vector("x", x)
    if np.any(x < 0):
        raise ValueError(f"x must not be negative: {x[x < 0][0]:g}")
    if weights is not None:
        w = _vector("weights", weights)
        if w.shape != x.shape:
            raise ValueError(f"weights has {len(w)} values, x {len(x)}: give one per task")
        if np.any(w <= 0):
            raise ValueError(f"weights must be positive: {w[w <= 0][0]:g}")
        x = x / w
    squares = float(np.dot(x, x))
    return float(x.sum() ** 2 / (len(x) * squares)) if squares > 0 else math.nan


# ---------------------------------------------------------------- periodic tasks

def _periodic(records, what):
    """The periodic records as a structured array, checked: every field of
    PERIODIC_DTYPE there and integral, and each value in its range."""
    if isinstance(records, Simulator):
        records = records.periodic()
    expected = ", ".join(f"{n} ({PERIODIC_DTYPE[n]})" for n in PERIODIC_DTYPE.names)
    if not isinstance(records, np.ndarray) or records.dtype.names is None:
        raise TypeError(f"{what} needs the periodic records: a NumPy structured array with the "
                        f"fields {expected}, not {type(records).__name__}")
    missing = [f for f in PERIODIC_DTYPE.names if f not in records.dtype.names]
    if missing:
        raise ValueError(f"{what}: the records have no field(s) {missing}; expected the fields "
                         f"{expected} (pysched.metrics.PERIODIC_DTYPE)")
    for f in PERIODIC_DTYPE.names:
        if not np.issubdtype(records.dtype[f], np.integer):
            raise TypeError(f"{what}: field {f!r} must hold integers, not {records.dtype[f]}")
    if records.ndim != 1:
        raise ValueError(f"{what}: the records must be a vector, not shape {records.shape}")
    ranges = {"pid": (1, None), "latency_ns": (0, None), "missed_latency_ns": (0, None),
              "finish_ns": (-1, None), "met": (0, 1), "missed": (0, None), "dropped": (0, None)}
    for f, (lo, hi) in ranges.items():
        v = records[f]
        bad = (v < lo) | (v > hi) if hi is not None else v < lo
        if np.any(bad):
            allowed = f"{lo}..{hi}" if hi is not None else f">= {lo}"
            raise ValueError(f"{what}: field {f!r} holds {int(v[bad][0])} at record "
                             f"{int(np.argmax(bad))}; allowed: {allowed}")
    return records


def deadlines(records, *, tasks=None, percentiles=DEFAULT_PERCENTILES):
    """How each periodic task kept its deadlines, from its per-call records
    (sim.periodic(), or an array of PERIODIC_DTYPE): samples (calls), met
    (calls whose work finished by the next deadline), missed (deadlines
    missed), pct_met = met / (met + missed) * 100, achieved (calls whose
    work was done: finish_ns >= 0), dropped (burns dropped), pct_desired_cpu
    = achieved / (achieved + dropped) * 100 -- NaN where the denominator
    is 0 -- and the latency of the calls as interbench counts it, wakeup
    latency plus the intervals lost (latency_ns + missed_latency_ns), in
    ms: latency_mean_ms, a column per percentile, latency_max_ms.  Unlike
    interbench_stats, no integer microseconds: the nanoseconds as they are.

    tasks: a pid or a list of pids (default: every pid of the records; a
    pid without records gets 0 samples and NaN)."""
    what = "deadlines()"
    rec = _periodic(records, what)
    wanted = _tasks(tasks, None, what)
    wanted = np.unique(rec["pid"]) if wanted is None else np.array(wanted, dtype=np.int64)
    keep = np.isin(rec["pid"], wanted)
    rec = rec[keep]
    row = np.searchsorted(wanted, rec["pid"])
    n = len(wanted)

    def total(v):
        return np.bincount(row, weights=v, minlength=n).astype(np.int64) if len(v) else np.zeros(n, np.int64)

    samples = np.bincount(row, minlength=n)
    met, missed = total(rec["met"]), total(rec["missed"])
    achieved, dropped = total(rec["finish_ns"] >= 0), total(rec["dropped"])
    with np.errstate(invalid="ignore", divide="ignore"):
        pct_met = np.where(met + missed > 0, met / (met + missed) * 100, np.nan)
        pct_cpu = np.where(achieved + dropped > 0, achieved / (achieved + dropped) * 100, np.nan)
    lat = _summary(rec["pid"], rec["latency_ns"].astype(np.int64) + rec["missed_latency_ns"],
                   wanted, percentiles)
    return _table(wanted, {
        "samples": samples, "met": met, "missed": missed, "pct_met": pct_met,
        "achieved": achieved, "dropped": dropped, "pct_desired_cpu": pct_cpu,
        **{"latency_" + k: v for k, v in lat.items() if k != "count"}})


def _game_pids(game, pids, what):
    """Which of `pids` are Gaming tasks: game False (none), True (all) or a
    pid or list of pids."""
    if isinstance(game, (bool, np.bool_)):
        return np.full(len(pids), bool(game))
    chosen = _tasks(game, None, f"{what}'s game")
    return np.isin(pids, chosen)


def interbench_stats(records, *, compat=True, game=False):
    """interbench 0.31's results per task (show_latencies(), as it prints
    them without -r), computed from the periodic records (sim.periodic(),
    or an array of PERIODIC_DTYPE) with interbench's own arithmetic.

    In integer microseconds, as interbench keeps them: each call's latency
    is (latency_ns + missed_latency_ns) // 1000; total_latency_us,
    max_latency_us and sum_latency_squared_us2 add them up per task as
    unsigned 64-bit integers (wrapping as its unsigned long long would).
    achieved_burns counts the calls whose work was done (finish_ns >= 0),
    missed_burns adds up `dropped`, deadlines_met adds up `met` and
    missed_deadlines `missed`.  Then, in doubles:

    - mean_ms = (total // samples) / 1000 -- integer division, as
      interbench divides its integers -- and sd_ms = sqrt((sum of squares
      - mean^2 / samples) / (samples - 1)) / 1000, interbench's variance,
      which divides mean^2 by samples where the sample variance multiplies
      (compat=True); with one sample, mean_ms = total / 1000, sd_ms = 0.
      compat=False gives the textbook numbers of the same microseconds
      instead: the unrounded mean and the sample standard deviation
      (numpy.std(ddof=1); NaN for one sample).
    - max_ms = max_latency_us / 1000.
    - pct_desired_cpu = achieved / (achieved + missed_burns) * 100, 0 if
      nothing was achieved; pct_deadlines_met = deadlines_met /
      (missed_deadlines + deadlines_met) * 100, 0 if none was met.

    game: which tasks run interbench's Gaming ("frame" op): True, False, a
    pid or a list of pids.  Gaming's burns are microseconds of CPU: a
    frame adds its work, (due_ns - start_ns) // 1000 (a frame is due its
    work's length after it starts: GAME_RUN = GAME_INTERVAL), to
    achieved_burns and its latency in microseconds (how late it finished)
    to missed_burns; interbench prints no deadlines for it, so
    pct_deadlines_met is NaN.  Returns a table with a row per pid of the
    records."""
    what = "interbench_stats()"
    rec = _periodic(records, what)
    compat = check_bool("compat", compat)
    pids = np.unique(rec["pid"]).astype(np.int64)
    n = len(pids)
    row = np.searchsorted(pids, rec["pid"])
    is_game = _game_pids(game, pids, what)
    lat_us = (rec["latency_ns"].astype(np.int64) + rec["missed_latency_ns"]) // 1000
    u = lat_us.astype(np.uint64)
    samples = np.bincount(row, minlength=n).astype(np.uint64)
    total, squares, longest = (np.zeros(n, dtype=np.uint64) for _ in range(3))
    np.add.at(total, row, u)
    np.add.at(squares, row, u * u)
    np.maximum.at(longest, row, u)
    done = rec["finish_ns"] >= 0
    frame = is_game[row]
    work_us = (rec["due_ns"].astype(np.int64) - rec["start_ns"]) // 1000
    achieved, missed_burns, met, missed = (np.zeros(n, dtype=np.uint64) for _ in range(4))
    np.add.at(achieved, row, np.where(frame, np.where(done, work_us, 0), done).astype(np.uint64))
    np.add.at(missed_burns, row, np.where(frame, lat_us, rec["dropped"]).astype(np.uint64))
    np.add.at(met, row, rec["met"].astype(np.uint64))
    np.add.at(missed, row, rec["missed"].astype(np.uint64))

    nf = samples.astype(np.float64)
    several = samples > 1
    mean_us = np.full(n, np.nan)
    sd_us = np.full(n, np.nan)
    if compat:
        # average_latency = total_latency / nr_samples: integer division
        mean_us = np.where(several, (total // np.maximum(samples, 1)).astype(np.float64),
                           total.astype(np.float64))
        with np.errstate(invalid="ignore", divide="ignore"):
            variance = (squares.astype(np.float64) - mean_us * mean_us / nf) / (nf - 1)
        sd_us = np.where(several, np.sqrt(np.where(several, variance, 0)), 0.0)
    else:
        has = samples > 0
        mean_us[has] = total[has].astype(np.float64) / nf[has]
        deviation = lat_us - mean_us[row]
        spread = np.bincount(row, weights=deviation * deviation, minlength=n)
        sd_us[several] = np.sqrt(spread[several] / (nf[several] - 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        # (double)a / (double)(a + b) * 100, the sum taken in integers
        pct_cpu = np.where(achieved > 0, achieved.astype(np.float64)
                           / (achieved + missed_burns).astype(np.float64) * 100, 0.0)
        pct_met = np.where(met > 0, met.astype(np.float64)
                           / (missed + met).astype(np.float64) * 100, 0.0)
    pct_met = np.where(is_game, np.nan, pct_met)
    return _table(pids, {
        "game": is_game, "samples": samples.astype(np.int64),
        "total_latency_us": total, "max_latency_us": longest, "sum_latency_squared_us2": squares,
        "achieved_burns": achieved, "missed_burns": missed_burns,
        "deadlines_met": met, "missed_deadlines": missed,
        "mean_ms": mean_us / 1000, "sd_ms": sd_us / 1000, "max_ms": longest.astype(np.float64) / 1000,
        "pct_desired_cpu": pct_cpu, "pct_deadlines_met": pct_met})
