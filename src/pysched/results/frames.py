"""The simulator's outputs as pandas DataFrames, decoded.

``sim.X_frame(...)`` is ``sim.X(...)`` as a DataFrame, with the same
arguments, for X in stats, events, latencies, periodic, series, cpu_stats
and counters.  Every frame follows the same rules, so that none needs
decoding by hand:

- rows that are instants are indexed by ``time_s``, rows that are tasks by
  ``pid``, rows that are CPUs by ``cpu``, rows that are counters by
  ``counter`` (the counter's name);
- every ``*_ns`` column becomes ``*_s``, float seconds; the other columns
  keep their units (ticks, jiffies, counts);
- codes are pandas Categoricals of their names: ``state``
  (pysched.TASK_STATES, "dead" once a task exited), ``policy``
  (pysched.SCHED_POLICIES) and ``kind`` (pysched.EVENT_KINDS), each with
  every name of its table as a category;
- a task is named beside its pid (``name``; "<idle>" for pid 0, NA for a
  task whose record was dropped, see ``keep_exited``);
- ``cpus_allowed`` is the bit mask as a uint64, as in sim.stats();
- what the arrays mark with a sentinel is missing (NA, or NaN for floats):
  ``exit_s`` of a live task, ``starved_s`` of a task never starved,
  ``ppid`` of a task spawned from Python, and in
  the event log whatever pysched.EVENT_FIELDS says a kind does not use, or
  -1 (a wakeup from interrupt context has no waker).

pandas is optional: it is imported when a frame is first asked for.
"""
import numpy as np

from ..codes import EVENT_FIELDS, EVENT_KINDS, SCHED_POLICIES, TASK_STATES

# the package's own: no name here is part of the public API
__all__ = []

IDLE_NAME = "<idle>"  # pid 0, as ftrace names it
DEAD = next(code for code, name in TASK_STATES.items() if name == "dead")


def _pandas(what):
    """The pandas module, or an ImportError that says how to get it."""
    try:
        import pandas
    except ModuleNotFoundError as missing:
        # only pandas itself missing: a pandas that fails to import for
        # another reason says why on its own
        if missing.name != "pandas":
            raise
        raise ImportError(f"{what} needs pandas, which is not installed: pip install pandas") from None
    return pandas


def _categorical(pd, codes, table):
    """Codes as a Categorical of the names of `table` ({code: name}), every
    name a category, in code order; a code outside the table is NA."""
    codes = np.asarray(codes)
    positions = np.full(max(table) + 2, -1)
    positions[list(table)] = np.arange(len(table))
    # codes outside 0..max(table) look up the last slot, which stays -1
    inside = (codes >= 0) & (codes <= max(table))
    looked_up = positions[np.where(inside, codes, len(positions) - 1).astype(np.intp)]
    return pd.Categorical.from_codes(looked_up, categories=list(table.values()))


def _nullable(pd, values, missing):
    """An Int64 array of `values`, NA where `missing`."""
    return pd.arrays.IntegerArray(np.asarray(values, dtype=np.int64), np.asarray(missing, dtype=bool))


def _seconds(ns):
    return np.asarray(ns, dtype=np.float64) / 1e9


def _seconds_column(name):
    return name[:-3] + "_s" if name.endswith("_ns") else name


def _names(sim, pids):
    """The task name of each pid in `pids` (an object array; None where
    the task's record was dropped)."""
    st = sim.stats()
    size = int(max(st["pid"].max(initial=0), np.max(pids, initial=0))) + 1
    lut = np.full(size, None, dtype=object)
    lut[st["pid"]] = st["name"].astype(object)
    lut[0] = IDLE_NAME
    pids = np.asarray(pids)
    out = np.full(len(pids), None, dtype=object)
    known = pids >= 0
    out[known] = lut[pids[known]]
    return out


def stats(sim):
    """sim.stats() as a frame: one row per task, indexed by pid."""
    pd = _pandas("stats_frame()")
    st = sim.stats()
    exited = st["exit_ns"] >= 0
    columns = {"name": st["name"].astype(object)}
    for f in st.dtype.names:
        if f in ("pid", "name"):
            continue
        v = st[f]
        if f == "state":
            columns[f] = _categorical(pd, np.where(exited, DEAD, v), TASK_STATES)
        elif f == "policy":
            columns[f] = _categorical(pd, v, SCHED_POLICIES)
        elif f == "ppid":
            columns[f] = _nullable(pd, v, v == 0)
        elif f == "on_rq":
            columns[f] = v.astype(bool)
        elif f in ("exit_ns", "starved_ns", "lag_broken_ns"):
            columns[_seconds_column(f)] = np.where(v >= 0, _seconds(v), np.nan)
        elif f in ("lag_min_ns", "lag_max_ns"):
            # INT64_MIN: never measured (a preset that is not fair, or no watch)
            columns[_seconds_column(f)] = np.where(v == np.iinfo(np.int64).min, np.nan,
                                                   _seconds(v))
        else:
            columns[_seconds_column(f)] = _seconds(v) if f.endswith("_ns") else v
    return pd.DataFrame(columns, index=pd.Index(st["pid"], name="pid"))


def events(sim):
    """sim.events() as a frame: one row per event, indexed by time_s."""
    pd = _pandas("events_frame()")
    ev = sim.events()
    kind = ev["kind"]

    def unused(field):
        return np.isin(kind, [code for code, k in enumerate(EVENT_KINDS)
                              if getattr(EVENT_FIELDS[k], field) is None])

    pid, other = ev["pid"], ev["other"]
    return pd.DataFrame({
        "cpu": ev["cpu"].astype(np.int64),
        "kind": _categorical(pd, kind, dict(enumerate(EVENT_KINDS))),
        "pid": _nullable(pd, pid, unused("pid") | (pid < 0)),
        "name": _names(sim, pid),
        "other": _nullable(pd, other, unused("other") | (other < 0)),
        "prio": _nullable(pd, ev["prio"], unused("prio")),
        "value": _nullable(pd, ev["value"], unused("value")),
    }, index=pd.Index(_seconds(ev["time_ns"]), name="time_s"))


def latencies(sim, pid=None):
    """sim.latencies(pid) as a frame: one row per wakeup-to-run latency,
    indexed by the time the task started to run."""
    pd = _pandas("latencies_frame()")
    rec = sim.latencies()
    if pid is not None:
        rec = rec[rec["pid"] == sim._pid(pid)]
    return pd.DataFrame({
        "pid": rec["pid"].astype(np.int64),
        "name": _names(sim, rec["pid"]),
        "cpu": rec["cpu"].astype(np.int64),
        "latency_s": _seconds(rec["latency_ns"]),
    }, index=pd.Index(_seconds(rec["time_ns"]), name="time_s"))


def periodic(sim, pid=None):
    """sim.periodic(pid) as a frame: one row per call of a timed op,
    indexed by the time it began; a skipped work's finish is missing."""
    pd = _pandas("periodic_frame()")
    rec = sim.periodic(pid)
    return pd.DataFrame({
        "pid": rec["pid"].astype(np.int64),
        "name": _names(sim, rec["pid"]),
        "due_s": _seconds(rec["due_ns"]),
        "latency_s": _seconds(rec["latency_ns"]),
        "finish_s": np.where(rec["finish_ns"] < 0, np.nan, _seconds(rec["finish_ns"])),
        "missed_latency_s": _seconds(rec["missed_latency_ns"]),
        "met": rec["met"].astype(bool),
        "missed": rec["missed"].astype(np.int64),
        "dropped": rec["dropped"].astype(np.int64),
    }, index=pd.Index(_seconds(rec["start_ns"]), name="start_s"))


def series(sim, field):
    """sim.series(field) as a frame: one row per sample, indexed by
    time_s; one column per task, labelled (pid, name); NaN (NA for state
    and policy, which are decoded) where the task did not exist."""
    pd = _pandas("series_frame()")
    values = sim.series(field)
    # the times of this field's own samples: with on_full="overwrite" the
    # oldest instant may have lost some fields' samples and kept others'
    rec = sim._samples()
    times = np.unique(rec["time_ns"][rec["field"] == sim._series_fields.index(field)])
    pids = np.arange(1, values.shape[1] + 1)
    columns = pd.MultiIndex.from_arrays([pids, _names(sim, pids)], names=["pid", "name"])
    index = pd.Index(_seconds(times), name="time_s")
    table = {"state": TASK_STATES, "policy": SCHED_POLICIES}.get(field)
    if table is None:
        return pd.DataFrame(values, index=index, columns=columns)
    codes = np.where(np.isnan(values), -1, values).astype(np.int64)
    frame = pd.DataFrame({k: _categorical(pd, codes[:, k], table) for k in range(len(pids))},
                         index=index)
    frame.columns = columns
    return frame


def cpu_stats(sim):
    """sim.cpu_stats() as a frame: one row per CPU, indexed by cpu."""
    pd = _pandas("cpu_stats_frame()")
    st = sim.cpu_stats()
    return pd.DataFrame({_seconds_column(f): _seconds(st[f]) if f.endswith("_ns") else st[f]
                         for f in st.dtype.names if f != "cpu"},
                        index=pd.Index(st["cpu"], name="cpu"))


def counters(sim):
    """sim.counters() as a frame: one row per counter, indexed by its name
    (``counter``), in the order counters() gives them, its count in
    ``value``."""
    pd = _pandas("counters_frame()")
    c = sim.counters()
    # counts (int64); a counter of ns would be one of seconds, as a column is
    names = [_seconds_column(k) for k in c]
    values = [float(_seconds(v)) if k.endswith("_ns") else v for k, v in c.items()]
    return pd.DataFrame({"value": np.array(values)}, index=pd.Index(names, name="counter"))


def group_stats(sim):
    """sim.group_stats() as a DataFrame indexed by path: cpu_s instead of
    cpu_ns, parent the parent's path (NA for the root)."""
    pd = _pandas("group_stats_frame")
    rows = sim.group_stats()
    paths = {int(g): str(p) for g, p in zip(rows["gid"], rows["path"])}
    frame = pd.DataFrame({
        "gid": rows["gid"],
        "parent": pd.array([paths.get(int(p)) for p in rows["parent"]], dtype="string"),
        "depth": rows["depth"],
        "shares": rows["shares"],
        "cpu_s": _seconds(rows["cpu_ns"]),
        "tasks": rows["tasks"],
    }, index=pd.Index([str(p) for p in rows["path"]], name="path"))
    return frame
