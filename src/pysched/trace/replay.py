"""A trace replayed under any preset: Trace.to_workload and trace.compare.

Each task of the trace becomes a program of what it asked of the machine,
in order, with the scheduler's decisions taken out:

- an *activation* (from a wakeup, or the task's start, to its next block)
  becomes run() of the CPU time it used in it, however the recorded
  scheduler sliced it: the demand, not the schedule;
- a wakeup by another replayed task that is a handoff (below) becomes a
  channel: the waker posts the wakee's channel when it has used, in its
  activation, the CPU it had used when it woke it, and the wakee waits on
  it -- after sleeping to the time the waker's activation began, if it
  had blocked before that (that part of its block was its own: a timer,
  a think time, not the waker's work);
- any other wakeup (a timer, a device, a task not replayed) becomes a
  timed block: an S or I block sleeps to the trace's time of its wakeup
  (timer(), absolute from the run's start) or goes on at once if the
  task is already later than that, so that a policy that delays a task
  lets it catch up rather than push the rest of its demand past the
  trace's end; a D block is io() of the recorded length (a device);
- a fork by a replayed task becomes fork() at its point in the parent's
  activation; exit() where the task exited; a task alive at the trace's end
  stays blocked there (it waits on a channel nobody posts);
- nice and policy as recorded (prio 120 + nice, 99 - rt_priority for a
  real-time task), and as affinity the CPUs the task ran on (a perf trace
  does not record cpus_allowed; a pysched export's header does).

perf's text cannot tell a wakeup from an interrupt from one by the task the
interrupt came in on (both name the running task), so by default
(``wake_edges="auto"``) a wakeup is replayed as a post only when it bears a
handoff's mark and its pair (waker, wakee) bears it as a habit:

- the mark: the waker blocks or exits within HANDOFF_NS of CPU after the
  wakeup (a write then a read, a post then a sleep or an exit), or the
  wakee had woken the waker within HANDOFF_NS of CPU before it blocked (a
  request, then a wait for its answer: a server that answers and goes on
  to the next request bears this one);
- the habit: at least half of the pair's wakeups bear the mark.

An interrupt lands on a task anywhere in its work, so it bears the mark
once in a while and never as a habit; one landing on a task that does hand
over to this one (a think timer that fires while the server works) bears no
mark, and the wakee keeps its own sleep.  Timed wakeups keep the trace's
clock, and posts come from tasks whose own timed wakeups keep it, so a
delay the policy adds is caught up at the next timed wakeup instead of
adding up: the replay conserves each task's CPU time (the CPU it used in
the trace, its bursts from its start to its exit or the trace's end),
given a little time past the trace's end for the activations the policy
serves later than the trace did (5 % of the trace's duration is plenty
on the captures in tests/data; at the end itself, a parent reaping its
children as perf stops falls up to 4 % short under linux-2.4.20).
"all" takes every waker at its word, "none" makes every wakeup timed.
"""
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..results import metrics
from .._core import MAX_CPUS
from .._checks import check_int
from ..program import Program
from ..simulator import Simulator
from ..codes import NOT_WOKEN
from . import wakes
from .open_rule import OpenRule
from .wakes import HANDOFF_NS, WAKE_EDGES  # noqa: F401 (the names replay's callers know)

END_CHANNEL = "trace:end"   # posted by nobody: a task alive at the trace's end waits on it
DEMANDS = ("recorded", "open")
SLEEPS = ("trace", "length")

# which workload spawned each simulator: compare() finds the tasks by it
_spawned = weakref.WeakKeyDictionary()


def _channel(tid):
    return f"trace:{tid}"


class Anchor:
    """A task's timed sleeps.  sleeps="trace": sleep(start, end) adds a
    timer() op (absolute, from the run's start: the trace's start, however
    late a parent forks the task) that sleeps to `end`, the trace's time,
    or goes on at once if the task is already past it; the deadlines are
    whole microseconds from the trace's start (timer()'s unit), each
    rounded from the trace's nanoseconds, so that they never drift.
    sleeps="length": a sleep() of end - start."""
    MAX_US = 2**31 - 1

    def __init__(self, prog, start_ns, sleeps):
        self.prog, self.start_ns, self.sleeps, self.due_us = prog, start_ns, sleeps, 0

    def sleep(self, start, end):
        if self.sleeps == "length":
            if end > start:
                self.prog.sleep(ns=end - start)
            return
        due = max(self.due_us, round((end - self.start_ns) / 1000))
        while due > self.due_us:
            step = min(due - self.due_us, self.MAX_US)
            self.prog.timer(step, from_run_start=True)
            self.due_us += step


@dataclass
class ReplayTask:
    """One task of the trace as a program: tid and comm as in the trace,
    what it is spawned with (unless its parent forks it), its children's
    tids in the order its program forks them."""
    tid: int
    comm: str
    program: Program
    nice: int = 0
    policy: str = "normal"
    rt_priority: int = 0
    cpus_allowed: tuple = None
    parent: int = 0          # the replayed parent that forks it; 0: spawned
    children: list = field(default_factory=list)
    demand_ns: int = 0       # the CPU time its run() ops add up to; -1: no end
    start_ns: int = 0        # a spawned task: when, after the trace's start

    def spawn_kwargs(self):
        return {"name": self.comm[:31] or f"tid{self.tid}", "nice": self.nice,
                "policy": self.policy, "rt_priority": self.rt_priority,
                "cpus_allowed": self.cpus_allowed}


@dataclass
class TraceWorkload:
    """A trace as programs (Trace.to_workload): tasks in spawn order
    (forked ones after their parent), the CPUs, the trace's duration (s)
    and which wakeups became channels."""
    tasks: list
    cpus: int
    duration: float
    wake_edges: str
    source: str = None

    @property
    def demand_ns(self):
        """The CPU time every replayed task asks for, in all (-1 if one
        computes without end)."""
        if any(t.demand_ns < 0 for t in self.tasks):
            return -1
        return sum(t.demand_ns for t in self.tasks)

    def run(self, preset, seconds=None, *, watch=None, **kwargs):
        """Replay under `preset`: a Simulator(preset, cpus=self.cpus,
        **kwargs) in which each task not forked by another is spawned at
        its time in the trace (the run pauses there to spawn it), run for
        `seconds` (default: the trace's duration); watch: a dict of
        sim.watch()'s arguments, watched from the start.  Returns the
        simulator; ``pids(sim)`` maps tids to its pids."""
        kwargs.setdefault("cpus", self.cpus)
        if kwargs["cpus"] < self.cpus:
            raise ValueError(f"the workload names CPUs 0..{self.cpus - 1}: cpus={kwargs['cpus']} "
                             f"is too few")
        seconds = self.duration if seconds is None else seconds
        sim = Simulator(preset, **kwargs)
        if watch is not None:
            sim.watch(**watch)
        end = round(seconds * 1e9)
        spawned = {}
        _spawned[sim] = (self, spawned)
        for t in self.roots:
            if t.start_ns > end:
                break
            if t.start_ns > sim.now_ns:
                sim.run(seconds=(t.start_ns - sim.now_ns) / 1e9)
            spawned[t.tid] = sim.spawn(t.program, **t.spawn_kwargs())
        if end > sim.now_ns:
            sim.run(seconds=(end - sim.now_ns) / 1e9)
        return sim

    @property
    def roots(self):
        """The tasks spawned (not forked), in the order run() spawns them."""
        return sorted((t for t in self.tasks if not t.parent), key=lambda t: t.start_ns)

    def pids(self, sim):
        """{tid: pid} for every replayed task in `sim` (a simulator run()
        made), forked ones included once forked: a parent forks its
        children in the order ``children`` lists them, so its n-th child
        (by pid) is the n-th."""
        made = _spawned.get(sim)
        if made is None or made[0] is not self:
            raise ValueError("this simulator was not made by this workload's run()")
        out = dict(made[1])
        kids = {}
        st = sim.stats()
        for pid, ppid in zip(st["pid"].tolist(), st["ppid"].tolist()):
            if ppid:
                kids.setdefault(ppid, []).append(pid)
        by_tid = {t.tid: t for t in self.tasks}
        todo = [by_tid[tid] for tid in out]
        while todo:
            t = todo.pop()
            for child, pid in zip(t.children, sorted(kids.get(out[t.tid], []))):
                out[child] = pid
                todo.append(by_tid[child])
        return out


def _selected(trace, tasks):
    """The rows of trace.tasks to replay."""
    rows = trace.tasks
    if tasks is None:
        return rows
    if callable(tasks):
        keep = np.array([bool(tasks(r)) for r in rows], dtype=bool)
        return rows[keep]
    if isinstance(tasks, (str, int, np.integer)):
        tasks = [tasks]
    tids = set()
    for t in tasks:
        if isinstance(t, str):
            hits = rows["tid"][rows["comm"] == t]
            if not len(hits):
                raise KeyError(f"no task has comm {t!r}; comms: "
                               f"{sorted(set(rows['comm'].tolist()))}")
            tids.update(hits.tolist())
        else:
            tids.add(trace.tid(int(check_int("tid", t, 0, 2**31 - 1))))
    return rows[np.isin(rows["tid"], sorted(tids))]


def _allowed(bursts, cpu_index, cpus, affinity):
    """The simulated CPUs a task ran on, or None for all of them."""
    used = sorted({cpu_index[int(c)] for c in bursts["cpu"].tolist()})
    return tuple(used) if affinity and used and len(used) < cpus else None


def _opened(trace, info, lines, post_list, parent_of, open_rule):
    """The tasks demand="open" opens: those the rule opens that fork no
    replayed task and wake none until their exit, but within HANDOFF_NS of
    CPU before it (an open task computes without end, so what it did
    after its work is lost with it; a parent it woke as it exited -- or
    whose timer fired on it just before the parent killed it -- sleeps to
    that time instead)."""
    forkers = set(parent_of.values())
    early = set()
    for k, _, t, _ in post_list:
        exit_ns = int(info[k]["exit_ns"])
        if exit_ns < 0 or lines[k].used(exit_ns) - lines[k].used(t) > wakes.HANDOFF_NS:
            early.add(k)
    blocks = trace.blocks
    return {tid for tid in info if tid not in forkers and tid not in early and
            open_rule._opens(lines[tid].first, lines[tid].last, blocks[blocks["tid"] == tid])}


def to_workload(trace, cpus=None, tasks=None, wake_edges="auto", affinity=True,
                demand="recorded", open_rule=None, sleeps="trace"):
    """Programs that replay `trace` (see the module docstring).

    cpus: the simulated CPUs (default: as many as the trace has, which
    must then be at most the simulator's 1,024); trace CPU k (k-th of
    trace.cpus) runs as CPU k mod cpus.  tasks: which to replay
    -- tids, comms, or a function of a row of trace.tasks (default: all).
    wake_edges: "auto", "all" or "none" (above).  affinity: pin each task
    to the CPUs it ran on (False: every CPU).  demand: "recorded" replays
    the CPU each activation used; "open" lets a task CPU-bound for most of
    its life (`open_rule`, an OpenRule; default OpenRule()) compute without
    end from its start -- a busy loop took what the recorded scheduler gave
    it, not what it wanted -- so that the simulated policy decides its
    share.  sleeps: "trace" (an S or I block sleeps to the trace's time of
    its wakeup, or not at all if the task is later than that: above) or
    "length" (it sleeps its recorded length, as a think time would: the
    delays a policy adds then add up, and the demand they push past the
    trace's end is lost to it)."""
    if trace.bursts is None:
        raise ValueError("to_workload needs the trace's intervals: load it with "
                         "pysched.trace.load(path) (intervals=True, the default)")
    if demand not in DEMANDS:
        raise ValueError(f"demand={demand!r} is not one of {DEMANDS}")
    if wake_edges not in WAKE_EDGES:
        raise ValueError(f"wake_edges={wake_edges!r} is not one of {WAKE_EDGES}")
    if sleeps not in SLEEPS:
        raise ValueError(f"sleeps={sleeps!r} is not one of {SLEEPS}")
    if open_rule is None:
        open_rule = OpenRule()
    elif not isinstance(open_rule, OpenRule):
        raise TypeError(f"open_rule must be an OpenRule, not {type(open_rule).__name__}")
    ncpu_trace = max(1, len(trace.cpus))
    if cpus is None and ncpu_trace > MAX_CPUS:
        raise ValueError(f"the trace has {ncpu_trace} CPUs and the simulator at most {MAX_CPUS}: "
                         f"pass cpus= (1..{MAX_CPUS}; trace CPU k then runs as CPU k mod cpus)")
    cpus = ncpu_trace if cpus is None else check_int("cpus", cpus, 1, MAX_CPUS)
    cpu_index = {int(c): i % cpus for i, c in enumerate(trace.cpus.tolist())}
    rows = _selected(trace, tasks)
    chosen = set(rows["tid"].tolist())
    if not chosen:
        raise ValueError("no task of the trace is chosen to replay")

    bursts, blocks = trace.bursts, trace.blocks
    lines = {tid: wakes.Timeline(trace, tid) for tid in chosen}

    forks = trace.forks
    parent_of = {int(c): int(p) for _, p, c in forks if int(p) in chosen and int(c) in chosen}
    info = {int(r["tid"]): r for r in rows}
    post_list = wakes.posts(trace, chosen, lines, wake_edges)
    opened = _opened(trace, info, lines, post_list, parent_of, open_rule) \
        if demand == "open" else set()
    # a task's posts: the blocks of others that it ended (an open task's, at
    # its exit, become their timed sleeps: it does not exit)
    post_at, posted = {}, {}
    for k, w, t, begun in post_list:
        if k not in opened:
            post_at.setdefault(k, []).append((t, 0, "post", w))
            posted[w, t] = begun
    for t, p, c in forks:
        if int(c) in parent_of:
            post_at.setdefault(int(p), []).append((int(t), 0, "fork", int(c)))

    depth = {}
    for tid in info:
        d, t = 0, tid
        while t in parent_of:
            d, t = d + 1, parent_of[t]
        depth[tid] = d
    out = {}
    # children first: a fork op holds the child's finished program
    for tid in sorted(info, key=lambda t: -depth[t]):
        row = info[tid]
        mine = bursts[bursts["tid"] == tid]
        line = lines[tid]
        mine_blocks = blocks[blocks["tid"] == tid]
        items = sorted(post_at.get(tid, []) +
                       [(int(b["start_ns"]), 1, "block", b) for b in mine_blocks],
                       key=lambda x: (x[0], x[1]))
        if row["policy"] == "normal":
            nice, policy, rt = int(row["nice"]), "normal", 0
        else:
            nice, policy, rt = 0, str(row["policy"]), int(row["rt_priority"])
        prog = Program()
        parent = parent_of.get(tid, 0)
        if parent:
            # a child starts as a copy of its parent (affinity included)
            p = info[parent]
            if (str(p["policy"]), int(p["rt_priority"])) != (policy, rt):
                prog.setscheduler(policy, rt)
            if int(p["nice"]) != nice and policy == "normal":
                prog.nice(nice)
        mark = 0
        children = []
        clock = Anchor(prog, trace.start_ns, sleeps)
        if tid in opened:
            # a busy loop: it computes as long as the run lasts
            prog.loop().run(s=1).end()
            out[tid] = ReplayTask(tid, str(row["comm"]), prog, nice, policy, rt,
                                  _allowed(mine, cpu_index, cpus, affinity), parent, children,
                                  -1, int(row["start_ns"] - trace.start_ns))
            continue

        def run_to(t):
            nonlocal mark
            used = line.used(t)
            if used > mark:
                prog.run(ns=used - mark)
                mark = used

        for t, _, kind, what in items:
            run_to(t)
            if kind == "post":
                prog.post(_channel(what))
            elif kind == "fork":
                children.append(what)
                prog.fork(out[what].program)
            else:
                waker, dur = int(what["waker"]), int(what["end_ns"] - what["start_ns"])
                begun = posted.get((tid, int(what["end_ns"])))
                if begun is not None:
                    # what it slept before the waker's activation began was its own
                    if begun > int(what["start_ns"]):
                        clock.sleep(int(what["start_ns"]), begun)
                    prog.wait(_channel(tid))
                elif waker == NOT_WOKEN:
                    prog.wait(END_CHANNEL)
                elif what["state"] == "D":
                    prog.io(ns=dur)
                elif dur > 0:
                    clock.sleep(int(what["start_ns"]), int(what["end_ns"]))
        run_to(trace.end_ns)
        if row["exit_ns"] >= 0:
            prog.exit()
        elif not items or items[-1][2] != "block" or int(items[-1][3]["waker"]) != NOT_WOKEN:
            prog.wait(END_CHANNEL)
        out[tid] = ReplayTask(tid, str(row["comm"]), prog, nice, policy, rt,
                              _allowed(mine, cpu_index, cpus, affinity), parent, children, mark,
                              int(row["start_ns"] - trace.start_ns))
    order = [int(r["tid"]) for r in rows]
    tasks_out = [out[t] for t in order if not out[t].parent]
    tasks_out += [out[t] for t in order if out[t].parent]
    return TraceWorkload(tasks_out, cpus, trace.duration_ns / 1e9, wake_edges, trace.path)


def compare(trace, sim, tasks=None, workload=None):
    """Per replayed task, the trace's CPU share, wait and wakeup latency
    against the simulator's: comm, nice, then trace_ and sim_ columns of
    cpu_pct (CPU time over the trace's duration, or the run's), cpu_ms,
    mean_wait_ms (runnable time per switch) and latency_ms (mean wakeup
    latency; NaN without wakeups), the trace's busiest task first.  `sim` is a simulator a TraceWorkload
    spawned into (or pass that workload).  A DataFrame indexed by tid, or a
    dict of arrays without pandas."""
    if workload is None:
        made = _spawned.get(sim)
        if made is None:
            raise ValueError("this simulator was not made by a TraceWorkload: replay the trace "
                             "with trace.to_workload(...).run(preset)")
        workload = made[0]
    pids = workload.pids(sim)
    st = sim.stats()
    by_pid = {int(p): i for i, p in enumerate(st["pid"].tolist())}
    rows = [t for t in workload.tasks if t.tid in pids and pids[t.tid] in by_pid]
    if tasks is not None:
        keep = set(_selected(trace, tasks)["tid"].tolist())
        rows = [t for t in rows if t.tid in keep]
    tt = {int(t): i for i, t in enumerate(trace.tasks["tid"].tolist())}
    tr_rows = trace.tasks[[tt[t.tid] for t in rows]]
    # the tasks that used the CPU most first: a real trace holds dozens of
    # kernel threads and bystanders beside the workload
    order = np.argsort(-tr_rows["cpu_ns"], kind="stable")
    rows = [rows[i] for i in order]
    tr_rows = tr_rows[order]
    s = st[[by_pid[pids[t.tid]] for t in rows]]

    def mean(total, n):
        n = np.asarray(n, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, np.asarray(total, dtype=float) / n, np.nan)

    tdur, sdur = trace.duration_ns, max(sim.now_ns, 1)
    cols = {
        "comm": np.array([t.comm for t in rows], dtype=object),
        "nice": tr_rows["nice"],
        # a trace of one instant has no share to give (NaN)
        "trace_cpu_pct": 100 * mean(tr_rows["cpu_ns"], np.full(len(rows), tdur)),
        "sim_cpu_pct": 100 * s["cpu_ns"] / sdur,
        "trace_cpu_ms": tr_rows["cpu_ns"] / 1e6,
        "sim_cpu_ms": s["cpu_ns"] / 1e6,
        "trace_mean_wait_ms": mean(tr_rows["wait_ns"], tr_rows["nr_switches"]) / 1e6,
        "sim_mean_wait_ms": mean(s["wait_ns"], s["nvcsw"] + s["nivcsw"]) / 1e6,
        "trace_latency_ms": mean(tr_rows["lat_sum_ns"], tr_rows["lat_count"]) / 1e6,
        "sim_latency_ms": mean(s["lat_sum_ns"], s["lat_count"]) / 1e6,
    }
    table = metrics._table([t.tid for t in rows], cols)
    if isinstance(table, dict):
        table["tid"] = table.pop("pid")
        return {"tid": table.pop("tid"), **table}
    table.index.name = "tid"
    return table


def format_table(table):
    """compare()'s table as text: a row per task, times in ms."""
    cols = [c for c in table if c != "tid"] if isinstance(table, dict) else list(table.columns)
    tids = table["tid"] if isinstance(table, dict) else table.index
    head = ["tid"] + [c.replace("_pct", " %").replace("_ms", " ms").replace("_", " ")
                      for c in cols]
    rows = []
    for i, tid in enumerate(tids):
        row = [str(tid)]
        for c in cols:
            v = table[c][i] if isinstance(table, dict) else table[c].iloc[i]
            row.append(f"{v:.2f}" if isinstance(v, (float, np.floating)) else str(v))
        rows.append(row)
    widths = [max(len(r[k]) for r in rows + [head]) for k in range(len(head))]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)
