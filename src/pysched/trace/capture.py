"""A trace as read: the Trace that load() returns, its tables' dtypes and
the lookups of its tasks."""
import os

import numpy as np

from .._checks import check_int
from ..results.frames import _pandas
from . import replay
from .read import BLOCK_STATES, _read

TASK_DTYPE = np.dtype([
    ("tid", np.int64), ("ppid", np.int64), ("comm", "U16"), ("prio", np.int64),
    ("nice", np.int64), ("policy", "U6"), ("rt_priority", np.int64),
    ("cpus_allowed", np.uint64), ("cpu_ns", np.int64), ("wait_ns", np.int64),
    ("sleep_ns", np.int64), ("block_ns", np.int64), ("nvcsw", np.int64), ("nivcsw", np.int64),
    ("nr_switches", np.int64), ("nr_wakeups", np.int64), ("lat_count", np.int64),
    ("lat_sum_ns", np.int64), ("lat_max_ns", np.int64), ("nr_migrations", np.int64),
    ("runtime_ns", np.int64), ("start_ns", np.int64), ("exit_ns", np.int64),
    ("forked", np.bool_)])
# a capture of a machine of more than 64 CPUs: cpus_allowed as Python ints
WIDE_TASK_DTYPE = np.dtype([(name, object if name == "cpus_allowed" else TASK_DTYPE[name])
                            for name in TASK_DTYPE.names])
BURST_DTYPE = np.dtype([("tid", np.int64), ("cpu", np.int64), ("start_ns", np.int64),
                        ("end_ns", np.int64)])
WAIT_DTYPE = np.dtype([("tid", np.int64), ("start_ns", np.int64), ("end_ns", np.int64)])
BLOCK_DTYPE = np.dtype([("tid", np.int64), ("start_ns", np.int64), ("end_ns", np.int64),
                        ("state", "U1"), ("waker", np.int64)])
_BLOCK_CODES_DTYPE = np.dtype([("tid", np.int64), ("start_ns", np.int64), ("end_ns", np.int64),
                               ("state", np.int64), ("waker", np.int64)])
WAKEUP_DTYPE = np.dtype([("time_ns", np.int64), ("waker", np.int64), ("wakee", np.int64),
                         ("cpu", np.int64), ("latency_ns", np.int64)])
FORK_DTYPE = np.dtype([("time_ns", np.int64), ("parent", np.int64), ("child", np.int64)])
EXIT_DTYPE = np.dtype([("time_ns", np.int64), ("tid", np.int64)])
MIGRATION_DTYPE = np.dtype([("time_ns", np.int64), ("tid", np.int64), ("orig_cpu", np.int64),
                            ("dest_cpu", np.int64)])
EDGE_DTYPE = np.dtype([("waker", np.int64), ("wakee", np.int64), ("count", np.int64)])


_ITEM = {"i": np.intc, "q": np.int64}


def _table(dtype, cols, order="start_ns"):
    """The columns as a structured array sorted by `order` (stably), each
    column freed once copied: a large trace's intervals are held once, not
    twice."""
    out = np.empty(len(cols[0]), dtype=dtype)
    for name, col in zip(dtype.names, cols):
        out[name] = np.frombuffer(col, dtype=_ITEM[col.typecode]) if len(col) else 0
        del col[:]
    if order is not None and len(out):
        out = out[np.argsort(out[order], kind="stable")]
    return out


def _nice_of(prio):
    """(nice, policy, rt_priority) from a prio as the kernel prints it:
    0..99 real-time (99 - rt_priority), 100..139 normal (120 + nice)."""
    if 0 <= prio < 100:
        return 0, "fifo", 99 - prio
    if 100 <= prio <= 139:
        return prio - 120, "normal", 0
    return 0, "normal", 0


class Trace:
    """What a trace file says each task did (see the module docstring).

    tasks: one row per task (TASK_DTYPE), in the order first seen; its
    cpus_allowed is a bit mask of the CPUs, a uint64 unless the trace names a
    CPU above 63 (WIDE_TASK_DTYPE: Python ints, CPUs up to MAX_CPUS - 1);
    bursts, waits, blocks, wakeups, forks, exits, migrations: structured
    arrays of the intervals and events, by time (None where
    ``load(intervals=False)`` did not keep them); start_ns, end_ns: the
    first and last line's time; cpus: the CPUs seen; anomalies: events that
    contradict what came before (a lost event, a damaged capture), counted
    by kind; skipped: the events not read, counted by name."""

    def __init__(self, r):
        self.path = os.fspath(r.path)
        self.start_ns, self.end_ns = r.start, r.now
        self.anomalies, self.skipped = dict(r.anomalies), dict(r.skipped)
        self.export = r.export
        rows = []
        for p in r.order:
            meta = r.meta.get(p.tid)
            if meta is not None:
                ppid, nice, policy, rt_priority, mask, _ = meta
                ppid = p.ppid or ppid
            else:
                (nice, policy, rt_priority), mask, ppid = _nice_of(p.prio), p.cpus, p.ppid
            rows.append((p.tid, ppid, p.comm, p.prio, nice, policy, rt_priority, mask, p.cpu_ns,
                         p.wait_ns, p.sleep_ns, p.block_ns, p.nvcsw, p.nivcsw,
                         p.nvcsw + p.nivcsw, p.nr_wakeups, p.lat_count, p.lat_sum, p.lat_max,
                         p.nr_migrations, p.runtime_ns, p.start_ns, p.exit_ns, p.forked))
        wide = any(row[7] >> 64 for row in rows)
        self.tasks = np.array(rows, dtype=WIDE_TASK_DTYPE if wide else TASK_DTYPE)
        self.cpus = np.array(sorted(r.cpu_curr), dtype=np.int64)
        tids = np.array([p.tid for p in r.order], dtype=np.int64)
        self.forks = _table(FORK_DTYPE, r.forks, "time_ns")
        self.exits = _table(EXIT_DTYPE, r.exits, "time_ns")
        self.edges = np.array(sorted((k, w, n) for (k, w), n in r.edges.items()),
                              dtype=EDGE_DTYPE)
        self.intervals = r.intervals
        if r.intervals:
            self.bursts = _table(BURST_DTYPE, r.bursts)
            self.waits = _table(WAIT_DTYPE, r.waits)
            raw = _table(_BLOCK_CODES_DTYPE, r.blocks)
            self.blocks = np.empty(len(raw), dtype=BLOCK_DTYPE)
            for name in ("tid", "start_ns", "end_ns", "waker"):
                self.blocks[name] = raw[name]
            self.blocks["state"] = np.array(list(BLOCK_STATES))[raw["state"]]
            for table in (self.bursts, self.waits, self.blocks):
                table["tid"] = tids[table["tid"]]
            self.wakeups = _table(WAKEUP_DTYPE, r.wakeups, "time_ns")
            self.migrations = _table(MIGRATION_DTYPE, r.migrations, "time_ns")
        else:
            self.bursts = self.waits = self.blocks = self.wakeups = self.migrations = None

    @property
    def duration_ns(self):
        return self.end_ns - self.start_ns

    def tid(self, task):
        """The tid of `task`: a tid, or a comm that one task has."""
        if isinstance(task, str):
            hits = self.tasks["tid"][self.tasks["comm"] == task]
            if len(hits) != 1:
                raise KeyError(f"{len(hits)} tasks have comm {task!r}" +
                               (f" (tids {hits.tolist()}): name one by its tid" if len(hits) else
                                f"; comms: {sorted(set(self.tasks['comm'].tolist()))}"))
            return int(hits[0])
        task = check_int("task", task, -2**31, 2**31 - 1)  # the kernel's pid_t
        if task not in self.tasks["tid"]:
            raise KeyError(f"no task with tid {task} in {self.path}")
        return int(task)

    def family(self, task):
        """The tids of `task` (a tid, or a comm that one task has) and of
        every task it forked, and they forked, in the trace: a workload
        started by one process."""
        kids = {}
        for _, parent, child in self.forks.tolist():
            kids.setdefault(parent, []).append(child)
        out, todo = [], [self.tid(task)]
        while todo:
            tid = todo.pop()
            out.append(tid)
            todo += kids.get(tid, [])
        return out

    def task(self, task):
        """The row of `task` (a tid, or a comm that one task has)."""
        return self.tasks[self.tasks["tid"] == self.tid(task)][0]

    def frame(self):
        """tasks as a pandas DataFrame indexed by tid, *_ns columns as *_s
        (float seconds), exit_s NaN for a task that did not exit."""
        pd = _pandas("Trace.frame()")
        df = pd.DataFrame(self.tasks).set_index("tid")
        for col in [c for c in df.columns if c.endswith("_ns")]:
            s = df.pop(col).astype(float)
            if col == "exit_ns":
                s[s < 0] = np.nan
            df[col[:-3] + "_s"] = s / 1e9
        return df

    def to_workload(self, cpus=None, tasks=None, wake_edges="auto", affinity=True,
                    demand="recorded", open_rule=None, sleeps="trace"):
        """Programs that replay this trace under any preset: a
        TraceWorkload (pysched.trace.replay says how each event becomes an
        op).  cpus: the simulated CPUs (default: the trace's); tasks: tids,
        comms or a function of a row of ``tasks`` (default: all);
        wake_edges: "auto" (a wakeup that bears a handoff's mark, of a pair
        that bears it as a habit, becomes a channel post; the others timed
        sleeps), "all" or "none";
        affinity: pin each task to the CPUs it ran on; demand: "recorded"
        (each activation's CPU) or "open" (a task CPU-bound for most of its
        life computes without end: the simulated policy decides its share);
        open_rule: an OpenRule (its thresholds; default OpenRule());
        sleeps: "trace" (a timed block sleeps to the trace's time of its
        wakeup) or "length" (its recorded length)."""
        return replay.to_workload(self, cpus=cpus, tasks=tasks, wake_edges=wake_edges,
                                   affinity=affinity, demand=demand, open_rule=open_rule,
                                   sleeps=sleeps)

    def __repr__(self):
        return (f"<Trace {os.path.basename(self.path)}: {len(self.tasks)} tasks, "
                f"{self.duration_ns / 1e9:.3f} s, CPUs {self.cpus.tolist()}>")


def load(path, *, intervals=True):
    """Read a scheduler trace (see the module docstring) into a Trace.

    intervals=False keeps only the per-task aggregates, the wake edges,
    forks and exits: memory then follows the number of tasks, not the
    length of the trace.  A line that is not in the format raises
    TraceFormatError (a ValueError) naming the file, the line number and
    what was expected: that includes a number out of its range (a CPU above
    MAX_CPUS - 1, a pid or prio beyond the kernel's int, a time or a runtime
    beyond 64-bit nanoseconds), a line longer than MAX_LINE characters and
    a damaged gzip stream."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"load needs a path, not {type(path).__name__}")
    return Trace(_read(path, bool(intervals)))
