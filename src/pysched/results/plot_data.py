"""What the plots draw, computed without matplotlib: who ran when on each
CPU, the samples of one series field, per-task shares, and a sweep table
pivoted onto its grid.  Kept apart from the drawing so that each can be
checked against the simulator's outputs on its own (tests/results/test_plot.py).
"""
import numpy as np

from .._checks import check_name
from .._suggest import did_you_mean
from ..codes import EVENT_KINDS

# the package's own: no name here is part of the public API
__all__ = []

SWITCH = EVENT_KINDS.index("switch")
IDLE_PID = 0


def switch_intervals(events, now_ns):
    """Who ran when, from the switch events of an event log: a structured
    array of (cpu, pid, start_ns, end_ns), one row per stretch between a
    switch to `pid` and the next switch on that CPU (the last one ends at
    `now_ns`).  The idle task and empty stretches (two switches at one
    instant) are left out.  Before a CPU's first logged switch nothing is
    known: a log that dropped its oldest records (on_full="overwrite")
    starts there."""
    sw = events[events["kind"] == SWITCH]
    dtype = [("cpu", np.int64), ("pid", np.int64), ("start_ns", np.int64), ("end_ns", np.int64)]
    parts = [np.zeros(0, dtype=dtype)]
    for cpu in np.unique(sw["cpu"]):
        # the log is in time order; a stable sort keeps same-instant switches in it
        mine = sw[sw["cpu"] == cpu]
        mine = mine[np.argsort(mine["time_ns"], kind="stable")]
        part = np.zeros(len(mine), dtype=dtype)
        part["cpu"], part["pid"] = cpu, mine["pid"]
        part["start_ns"] = mine["time_ns"]
        part["end_ns"] = np.append(mine["time_ns"][1:], now_ns)
        parts.append(part[(part["pid"] != IDLE_PID) & (part["end_ns"] > part["start_ns"])])
    return np.concatenate(parts)


def clipped(intervals, start_ns, end_ns):
    """The intervals that overlap [start_ns, end_ns), cut to it."""
    inside = (intervals["end_ns"] > start_ns) & (intervals["start_ns"] < end_ns)
    out = intervals[inside].copy()
    out["start_ns"] = np.maximum(out["start_ns"], start_ns)
    out["end_ns"] = np.minimum(out["end_ns"], end_ns)
    return out


def ran_ns(intervals, pids):
    """The time each of `pids` ran in `intervals` (0 for one that did not)."""
    ran, at = np.unique(intervals["pid"], return_inverse=True)
    sums = np.zeros(len(ran), dtype=np.int64)
    np.add.at(sums, at.reshape(-1), intervals["end_ns"] - intervals["start_ns"])
    by_pid = dict(zip(ran.tolist(), sums.tolist()))
    return np.array([by_pid.get(p, 0) for p in np.asarray(pids).tolist()], dtype=np.int64)


def series_samples(sim, field):
    """(times_ns, values): the instants at which `field` was sampled and
    sim.series(field) (samples x tasks).  The times are the field's own:
    with on_full="overwrite" the oldest instant may have lost some fields'
    samples and kept others' (as in pysched.results.frames)."""
    values = sim.series(field)
    rec = sim._samples()
    times = np.unique(rec["time_ns"][rec["field"] == sim._series_fields.index(field)])
    return times, values


def columns(table, names, what):
    """The columns `names` of a sweep table -- a pandas DataFrame, a NumPy
    record or structured array, or a list of dicts (``output="dicts"``) --
    as NumPy arrays; KeyError naming the table's columns for a missing one."""
    if isinstance(table, list):
        have = list(dict.fromkeys(k for row in table for k in row))
        get = lambda n: np.array([row.get(n) for row in table])
    elif isinstance(getattr(table, "dtype", None), np.dtype) and table.dtype.names:
        have = list(table.dtype.names)
        get = lambda n: np.asarray(table[n])
    elif hasattr(table, "columns") and hasattr(table, "__getitem__"):
        have = [str(c) for c in table.columns]
        get = lambda n: np.asarray(table[n])
    else:
        raise TypeError(f"{what} needs a sweep table (a DataFrame, a record array or a list of "
                        f"dicts), not {type(table).__name__}")
    out = {}
    for n in names:
        n = check_name(f"{what}'s column", n)
        if n not in have:
            raise KeyError(f"{what}: the table has no column {n!r}; its columns: {have}"
                           f"{did_you_mean(n, have)}")
        out[n] = get(n)
    return out


def _axis(values):
    """The distinct values of a grid column in order, and each row's index
    into them."""
    try:
        levels, where = np.unique(values, return_inverse=True)
    except TypeError:
        # values that do not sort together (a mixed object column): keep
        # the order in which the grid first gives them
        levels = list(dict.fromkeys(values.tolist()))
        index = {v: k for k, v in enumerate(levels)}
        return np.array(levels, dtype=object), np.array([index[v] for v in values.tolist()])
    return levels, where.reshape(-1)


AGGREGATES = {"mean": np.mean, "median": np.median, "min": np.min, "max": np.max}
# the usual verdicts of a stability analysis, in the order a map lists them
VERDICTS = ("settles", "cycles", "starves", "diverges")


def pivot(table, x, y, value, agg, what):
    """(x_levels, y_levels, grid): `value` of a sweep table on its (y, x)
    grid, grid[i, j] the aggregate (agg: a name of AGGREGATES or a function
    of an array) of the rows where y is y_levels[i] and x is x_levels[j];
    NaN where no row is."""
    if isinstance(agg, str):
        if agg not in AGGREGATES:
            raise ValueError(f"agg={agg!r} is not one of {tuple(AGGREGATES)} or a function")
        agg = AGGREGATES[agg]
    elif not callable(agg):
        raise TypeError(f"agg must be a name of {tuple(AGGREGATES)} or a function, not {agg!r}")
    cols = columns(table, [x, y, value], what)
    try:
        values = cols[value].astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: column {value!r} must hold numbers, not "
                        f"{cols[value].dtype}") from None
    xs, xi = _axis(cols[x])
    ys, yi = _axis(cols[y])
    grid = np.full((len(ys), len(xs)), np.nan)
    for i in range(len(ys)):
        for j in range(len(xs)):
            cell = values[(yi == i) & (xi == j)]
            if len(cell):
                grid[i, j] = agg(cell)
    return xs, ys, grid


def kinds_pivot(table, x, y, kind, order, what):
    """(x_levels, y_levels, categories, codes, agreeing, counts): the
    category of each (y, x) cell of a sweep table -- the kind most of its
    rows (one per seed) have, ties going to the first in `categories` --
    as an index into `categories` (-1 where no row is), with how many of
    the cell's rows have that kind and how many rows it has.  `order`
    gives the categories; None: a Categorical column's own, else the kinds
    the table holds, the usual VERDICTS first in their order (so that two
    maps of one sweep list theirs alike), then the others in the order the
    table first gives them."""
    cols = columns(table, [x, y, kind], what)
    kinds = cols[kind]
    if order is None:
        cats = _categories(table, kind)
        if cats is not None:
            order = cats.tolist()
        else:
            seen = list(dict.fromkeys(kinds.tolist()))
            order = ([v for v in VERDICTS if v in seen] +
                     [k for k in seen if k not in VERDICTS])
    order = list(order)
    unknown = sorted({str(k) for k in kinds.tolist()} - {str(k) for k in order})
    if unknown:
        raise ValueError(f"{what}: column {kind!r} holds {unknown}, not in order={order}")
    code = {str(k): c for c, k in enumerate(order)}
    kcodes = np.array([code[str(k)] for k in kinds.tolist()], dtype=np.int64)
    xs, xi = _axis(cols[x])
    ys, yi = _axis(cols[y])
    codes = np.full((len(ys), len(xs)), -1)
    agreeing = np.zeros((len(ys), len(xs)), dtype=np.int64)
    counts = np.zeros((len(ys), len(xs)), dtype=np.int64)
    for i in range(len(ys)):
        for j in range(len(xs)):
            cell = kcodes[(yi == i) & (xi == j)]
            if len(cell):
                tally = np.bincount(cell, minlength=len(order))
                codes[i, j] = int(np.argmax(tally))  # the first of the most frequent
                agreeing[i, j], counts[i, j] = tally.max(), len(cell)
    return xs, ys, order, codes, agreeing, counts


def _categories(table, column):
    """The categories of a pandas Categorical column, or None."""
    try:
        return table[column].cat.categories
    except (AttributeError, KeyError, TypeError, IndexError, ValueError):
        return None
