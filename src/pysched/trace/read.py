"""The reader of scheduler trace text (the package's docstring says which
formats and what is made of them): one line at a time, each checked
against its format (TraceFormatError names the file, the line and what was
expected), into per-task aggregates and compact interval lists."""
import gzip
import io
import re
import zlib
from array import array
from collections import Counter
from functools import partial

from ..codes import NO_WAKER, NOT_WOKEN, SCHED_POLICIES


# the package's own: no name here is part of the public API
__all__ = []

class TraceFormatError(ValueError):
    """A line of a trace file that is not what the format says: names the
    file, the line number and what was expected there."""

    def __init__(self, path, lineno, expected, text=None):
        self.path, self.lineno, self.expected = path, lineno, expected
        msg = f"{path}, line {lineno}: expected {expected}"
        if text is not None:
            shown = text if len(text) <= 160 else text[:157] + "..."
            msg += f"; got {shown!r}"
        super().__init__(msg)


# ---------------------------------------------------------------- the text

# perf script: "COMM PID/TID [CPU] SECS.FRACTION: EVENT: FIELDS" (comm
# right-aligned to 16, which a comm with blanks in it may overflow); the
# kernel's trace file and trace-cmd report: "COMM-PID [CPU] [FLAGS]
# SECS.FRACTION: EVENT: FIELDS".  A comm may hold anything, blanks and
# brackets too, so each header is searched for after it rather than matched
# from the line's start: perf's comm ends at the first blank followed by a
# header, trace-cmd's at the last "-PID" followed by one (where a lazy and a
# greedy `(.*)` in front of them ended it).  Neither pattern can start
# inside a match of itself, and each run of digits or blanks is scanned by
# the one attempt that starts just before it: a line takes time linear in
# its length (`\s*(.*?)\s+` in front took time cubic in a run of blanks)
_PERF_HEAD = re.compile(r"(?<=\s)(-?\d+)(?:/(-?\d+))?\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+([\w:]+):\s?")
_FTRACE_HEAD = re.compile(
    r"-(\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(\d+)\]\s+(?:[\w.]{4,5}\s+)?(\d+)\.(\d+):\s+(\w+):\s*")
# trace-cmd report's first line
_CPUS_LINE = re.compile(r"cpus=\d+").fullmatch
LINE_FORMAT = "'COMM PID/TID [CPU] SECONDS.FRACTION: EVENT: FIELDS' (perf script) or " \
              "'COMM-PID [CPU] SECONDS.FRACTION: EVENT: FIELDS' (trace-cmd report)"
# a line longer than this is damage (the kernel's events fit in a page of its
# ring buffer; perf's text of one is a few hundred bytes): reading stops
# there rather than holding a line without end
MAX_LINE = 1 << 20

# what the numbers may be: CPUs 0..MAX_CPUS - 1 (machines of up to 4,096
# CPUs; a task's CPUs are a Python int's bits); pids and prios as the
# kernel's int holds them; times and runtimes in nanoseconds as an int64
# holds them (9,223,372,036.854775807 s)
MAX_CPUS = 4096
INT_MIN, INT_MAX = -2**31, 2**31 - 1
NS_MAX = 2**63 - 1


class _TwoComms:
    """An event's fields with two comms in them, HEAD(.*)MIDDLE(.*)TAIL,
    matched as re.fullmatch would (each comm as long as it can be: the
    second ends where the TAIL that ends the text begins, the first at the
    last MIDDLE before that) in time linear in the text (the regex tries the
    second comm's every end for each MIDDLE in the first: quadratic in a
    line repeating one).  A MIDDLE cannot start inside a MIDDLE, nor a TAIL
    inside a TAIL, so the last of finditer's matches is the last one."""

    def __init__(self, head, middle, tail):
        self.head = head
        self.middle = re.compile(middle)
        self.tail = re.compile(tail + r"\Z")

    def fullmatch(self, text):
        """The groups, numbered from 1 as a match's are, or None."""
        start = len(self.head)
        if not text.startswith(self.head):
            return None
        tail = self.tail.search(text, start)
        if tail is None:
            return None
        mid = None
        for mid in self.middle.finditer(text, start, tail.start()):
            pass
        if mid is None:
            return None
        return (text, text[start:mid.start()], *mid.groups(), text[mid.end():tail.start()],
                *tail.groups())


# the fields of each event: TP_printk's text (include/trace/events/sched.h;
# success= before 4.x, vruntime= before 6.8, group_dead= from 6.16), then
# the form libtraceevent's plugin_sched_switch.c prints, which trace-cmd
# and older perf use; a pattern with one comm backtracks over it once
_FIELDS = {
    "sched_switch": (
        _TwoComms("prev_comm=", r" prev_pid=(-?\d+) prev_prio=(-?\d+) prev_state=(\S+) ==> "
                  r"next_comm=", r" next_pid=(-?\d+) next_prio=(-?\d+)"),
        _TwoComms("", r":(-?\d+) \[(-?\d+)\] (\S+) ==> ", r":(-?\d+) \[(-?\d+)\]"),
        "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d "
        "next_prio=%d"),
    "wakeup": (
        re.compile(r"comm=(.*) pid=(-?\d+) prio=(-?\d+)(?: success=\d+)? target_cpu=(\d+)"),
        re.compile(r"(.*):(-?\d+) \[(-?\d+)\](?: success=\d+)? CPU:(\d+)"),
        "comm=%s pid=%d prio=%d target_cpu=%03d"),
    "sched_process_fork": (
        _TwoComms("comm=", r" pid=(-?\d+) child_comm=", r" child_pid=(-?\d+)"), None,
        "comm=%s pid=%d child_comm=%s child_pid=%d"),
    "sched_process_exit": (
        re.compile(r"comm=(.*) pid=(-?\d+) prio=(-?\d+)(?: group_dead=(?:true|false))?"), None,
        "comm=%s pid=%d prio=%d [group_dead=true|false]"),
    "sched_migrate_task": (
        re.compile(r"comm=(.*) pid=(-?\d+) prio=(-?\d+) orig_cpu=(\d+) dest_cpu=(\d+)"), None,
        "comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d"),
    "sched_stat_runtime": (
        re.compile(r"comm=(.*) pid=(-?\d+) runtime=(\d+) \[ns\](?: vruntime=\d+ \[ns\])?"), None,
        "comm=%s pid=%d runtime=%Lu [ns]"),
}
for _name in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
    _FIELDS[_name] = _FIELDS["wakeup"]
del _FIELDS["wakeup"]

_POLICIES = tuple(SCHED_POLICIES.values())
_META = re.compile(r"# pysched task: pid=(\d+) ppid=(\d+) nice=(-?\d+) policy=(\w+) "
                   r"rt_priority=(\d+) cpus_allowed=(0x[0-9a-f]+) comm=(.*)")

# task states while reading
_NEW, _RUNNABLE, _RUNNING, _BLOCKED, _DEAD, _UNSEEN = range(6)

# the waker column of a blocked interval: a task's pid, NO_WAKER or
# NOT_WOKEN (codes.py, where replay reads them too)

# a blocked interval's prev_state, by its first letter; "?" blocked since
# before the trace began
BLOCK_STATES = "SDITtPWK?"


def _open_text(path):
    """The file as text, gunzipped if it is gzip (by its magic bytes)."""
    raw = open(path, "rb")
    if raw.peek(2)[:2] == b"\x1f\x8b":
        raw = gzip.GzipFile(fileobj=raw, mode="rb")
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="\n")


class _Task:
    __slots__ = ("idx", "tid", "comm", "state", "since", "cpu", "prio", "ppid", "wake_t",
                 "wake_row",
                 "block_state", "start_ns", "exit_ns", "cpus", "forked", "cpu_ns", "wait_ns",
                 "sleep_ns", "block_ns", "nvcsw", "nivcsw", "nr_wakeups", "lat_sum",
                 "lat_max", "lat_count", "nr_migrations", "runtime_ns")

    def __init__(self, idx, tid, comm, t):
        self.idx, self.tid, self.comm = idx, tid, comm
        self.state, self.since, self.cpu, self.prio, self.ppid = _UNSEEN, t, -1, -1, 0
        self.wake_t, self.wake_row, self.block_state = -1, -1, 0
        self.start_ns, self.exit_ns, self.cpus, self.forked = t, -1, 0, False
        self.cpu_ns = self.wait_ns = self.sleep_ns = self.block_ns = 0
        self.nvcsw = self.nivcsw = self.nr_wakeups = 0
        self.lat_sum = self.lat_max = self.lat_count = self.nr_migrations = self.runtime_ns = 0


def _cols(codes):
    """Columns, compact: "i" for pids, CPUs and codes, "q" for times."""
    return tuple(array(code) for code in codes)


class _Reader:
    """The state machine fed one event at a time."""

    def __init__(self, path, intervals):
        self.path = path
        self.intervals = intervals
        self.tasks = {}
        self.order = []
        self.start = self.now = None
        self.cpu_curr = {}         # cpu -> the task current there
        self.cpu_last = {}         # cpu -> the time of its last line
        self.anomalies = Counter()
        self.skipped = Counter()
        self.edges = Counter()
        self.meta = {}
        self.export = self.end = None
        self.bursts = _cols("iiqq")       # idx, cpu, start, end
        self.waits = _cols("iqq")         # idx, start, end
        self.blocks = _cols("iqqii")      # idx, start, end, state, waker
        self.wakeups = _cols("qiiiq")     # time, waker, wakee, cpu, latency
        self.forks = _cols("qii")         # time, parent, child
        self.exits = _cols("qi")          # time, tid
        self.migrations = _cols("qiii")   # time, tid, orig, dest

    def task(self, tid, comm, rename=True):
        t = self.tasks.get(tid)
        if t is None:
            # a task first seen now was in a state the trace does not say
            # since the trace began
            t = self.tasks[tid] = _Task(len(self.order), tid, comm, self.start)
            self.order.append(t)
        elif rename:
            t.comm = comm
        return t

    def _burst(self, p, cpu, start, end):
        p.cpu_ns += end - start
        if self.intervals:
            b = self.bursts
            b[0].append(p.idx), b[1].append(cpu), b[2].append(start), b[3].append(end)

    def _block_end(self, p, end, waker):
        start = p.since
        state = p.block_state if p.state == _BLOCKED else BLOCK_STATES.index("?")
        if BLOCK_STATES[state] == "D":
            p.block_ns += end - start
        else:
            p.sleep_ns += end - start
        if self.intervals:
            b = self.blocks
            b[0].append(p.idx), b[1].append(start), b[2].append(end), b[3].append(state)
            b[4].append(waker)

    def _wait_end(self, p, end):
        p.wait_ns += end - p.since
        if self.intervals:
            w = self.waits
            w[0].append(p.idx), w[1].append(p.since), w[2].append(end)

    def current(self, t, cpu, tid, comm):
        """Every line is printed in the context of the task current on its
        CPU: the first line of a CPU says who ran there since the trace
        began, and a line whose task is not the one the switches left there
        shows that a switch was lost (perf's per-CPU buffers start one
        after another, and drop events when they overflow)."""
        cur = self.cpu_curr.get(cpu)
        # perf prints tid -1 for a thread it could not resolve: no news
        if cur != tid and tid >= 0:
            if cur is None:
                self.cpu_curr[cpu] = tid
                if tid:
                    p = self.task(tid, comm, rename=False)
                    if p.state == _BLOCKED:
                        self.anomalies["a blocked task running with no wakeup"] += 1
                        self._block_end(p, t, NO_WAKER)
                        p.since = t
                    # it ran from when it could (its switch-in was not
                    # recorded, nor how long a wakeup waited for it)
                    p.state, p.cpu = _RUNNING, cpu
                    p.wake_t = p.wake_row = -1
                    p.cpus |= 1 << cpu
            else:
                self.anomalies["a switch not in the trace (a lost event)"] += 1
                last = self.cpu_last[cpu]
                if cur:
                    q = self.tasks[cur]
                    if q.state == _RUNNING and q.cpu == cpu:
                        self._burst(q, cpu, q.since, last)
                        q.state, q.since = _UNSEEN, last
                self.cpu_curr[cpu] = tid
                if tid:
                    self._switch_in(self.task(tid, comm, rename=False), t, cpu)
        self.cpu_last[cpu] = t

    def _switch_in(self, n, t, cpu):
        n.cpus |= 1 << cpu
        if n.state == _RUNNABLE:
            self._wait_end(n, t)
            if n.wake_t >= 0:
                lat = t - n.wake_t
                n.lat_sum += lat
                n.lat_count += 1
                if lat > n.lat_max:
                    n.lat_max = lat
                if n.wake_row >= 0:
                    self.wakeups[4][n.wake_row] = lat
                n.wake_t = n.wake_row = -1
        elif n.state == _BLOCKED:
            self.anomalies["a blocked task running with no wakeup"] += 1
            self._block_end(n, t, NO_WAKER)
        elif n.state == _NEW:
            n.since = n.start_ns
            self._wait_end(n, t)
        elif n.state == _RUNNING:
            self.anomalies["a task running on two CPUs"] += 1
        elif n.state == _DEAD:
            self.anomalies["a task running after it exited"] += 1
        n.state, n.since, n.cpu = _RUNNING, t, cpu

    def switch(self, t, cpu, prev_comm, prev_tid, prev_prio, prev_state, next_comm, next_tid,
               next_prio):
        if prev_tid:
            p = self.task(prev_tid, prev_comm)
            p.prio = prev_prio
            if p.state == _RUNNING and p.cpu == cpu:
                self._burst(p, cpu, p.since, t)
            else:
                self.anomalies["a switch from a task not running there"] += 1
            letter = prev_state[0]
            p.since, p.cpu = t, cpu
            if letter == "R":
                p.state = _RUNNABLE
                p.nivcsw += 1
            elif letter in "XZ":
                p.state = _DEAD
                p.nvcsw += 1
                if p.exit_ns < 0:
                    p.exit_ns = t
            else:
                p.state = _BLOCKED
                p.nvcsw += 1
                k = BLOCK_STATES.find(letter)
                p.block_state = k if k >= 0 else BLOCK_STATES.index("S")
        self.cpu_curr[cpu] = next_tid
        if next_tid:
            n = self.task(next_tid, next_comm)
            n.prio = next_prio
            self._switch_in(n, t, cpu)

    def wakeup(self, t, cur_tid, comm, tid, prio, target_cpu):
        p = self.task(tid, comm)
        p.prio = prio
        if p.state not in (_BLOCKED, _UNSEEN):
            # runnable already (sched_wakeup after sched_waking), or a task
            # woken before it left the CPU (try_to_wake_up on current)
            return
        waker = cur_tid if cur_tid > 0 else NO_WAKER
        self._block_end(p, t, waker)
        p.nr_wakeups += 1
        if waker > 0:
            self.edges[waker, tid] += 1
        p.wake_t = t
        if self.intervals:
            w = self.wakeups
            p.wake_row = len(w[0])
            w[0].append(t), w[1].append(waker), w[2].append(tid), w[3].append(target_cpu)
            w[4].append(-1)
        p.state, p.since, p.cpu = _RUNNABLE, t, target_cpu
        p.cpus |= 1 << target_cpu

    def wakeup_new(self, t, comm, tid, prio, target_cpu):
        p = self.task(tid, comm)
        p.prio = prio
        if p.state in (_NEW, _UNSEEN):
            if not p.forked:
                p.start_ns = t
            p.state, p.since, p.cpu = _RUNNABLE, t, target_cpu
            p.cpus |= 1 << target_cpu
        else:
            self.anomalies["sched_wakeup_new of a task seen before"] += 1

    def fork(self, t, parent_comm, parent, child_comm, child):
        self.task(parent, parent_comm)
        if child in self.tasks:
            self.anomalies["fork of a pid seen before"] += 1
        c = self.task(child, child_comm)
        c.state, c.since, c.ppid, c.start_ns, c.forked = _NEW, t, parent, t, True
        f = self.forks
        f[0].append(t), f[1].append(parent), f[2].append(child)

    def exit(self, t, comm, tid, prio):
        p = self.task(tid, comm)
        p.prio = prio
        p.exit_ns = t
        e = self.exits
        e[0].append(t), e[1].append(tid)

    def migrate(self, t, comm, tid, prio, orig, dest):
        p = self.task(tid, comm)
        p.prio = prio
        p.nr_migrations += 1
        p.cpu = dest
        if self.intervals:
            m = self.migrations
            m[0].append(t), m[1].append(tid), m[2].append(orig), m[3].append(dest)

    def finish(self):
        if self.end is not None and self.end > self.now:
            self.now = self.end
        end = self.now
        for p in self.order:
            if p.state == _RUNNING:
                self._burst(p, p.cpu, p.since, end)
            elif p.state == _RUNNABLE:
                self._wait_end(p, end)
            elif p.state == _BLOCKED:
                self._block_end(p, end, NOT_WOKEN)
            elif p.state == _NEW:
                p.since = p.start_ns
                self._wait_end(p, end)


def _shown(text):
    """text, or its start and length when it is long (a damaged number)."""
    return text if len(text) <= 24 else f"{text[:20]}... ({len(text)} characters)"


def _number(path, lineno, body, text, what, lo, hi, why=""):
    """text, a number's digits (after a minus, perhaps), as an int in lo..hi;
    else the TraceFormatError naming what it is and its range.  More than 20
    digits is out of every range here: refused before int() (which refuses
    more than 4,300, and takes time quadratic in them)."""
    if len(text) <= 20:
        v = int(text)
        if lo <= v <= hi:
            return v
    raise TraceFormatError(path, lineno, f"{what} in {lo}..{hi}{why}, not {_shown(text)}", body)


_TIME_MAX = f"{NS_MAX // 10**9}.{NS_MAX % 10**9:09d}"


def _read(path, intervals):
    """Stream the file through a _Reader; returns it."""
    r = _Reader(path, intervals)
    fields = _FIELDS
    perf_head, ftrace_heads = _PERF_HEAD.search, _FTRACE_HEAD.finditer
    lineno, body = 0, ""

    # a number too long to be in range for sure goes through these: the
    # lines read call int() at once on pids and prios of up to 9 characters
    # and on CPUs of up to 3 digits
    def num(text, what, lo=INT_MIN, hi=INT_MAX):
        return _number(path, lineno, body, text, what, lo, hi)

    def cpu_num(text):
        return _number(path, lineno, body, text, "a CPU", 0, MAX_CPUS - 1,
                       f" (a machine of at most {MAX_CPUS:,} CPUs)")

    try:
        f = _open_text(path)
    except OSError as e:
        raise OSError(e.errno, f"cannot read the trace: {e.strerror}", str(path)) from None
    with f:
        text = ""
        try:
            for lineno, text in enumerate(iter(partial(f.readline, MAX_LINE + 1), ""), 1):
                if not text.endswith("\n"):
                    if len(text) > MAX_LINE:
                        raise TraceFormatError(path, lineno, f"a line of at most {MAX_LINE:,} "
                                               f"characters", text)
                    raise TraceFormatError(path, lineno, "a newline at the end of the line "
                                           "(the file is truncated)", text)
                body = text.rstrip("\n").rstrip("\r")
                if not body.strip():
                    continue
                if body.lstrip().startswith("#") or _CPUS_LINE(body):
                    m = _META.fullmatch(body.strip())
                    if m:
                        mask = m[6]
                        if len(mask) > 2 + MAX_CPUS // 4 or int(mask, 16) >> MAX_CPUS:
                            raise TraceFormatError(path, lineno, f"cpus_allowed, a mask of "
                                                   f"CPUs 0..{MAX_CPUS - 1}, not "
                                                   f"{_shown(mask)}", body)
                        if m[4] not in _POLICIES:
                            raise TraceFormatError(path, lineno, f"a policy of "
                                                   f"{', '.join(_POLICIES)}, not "
                                                   f"{_shown(m[4])}", body)
                        r.meta[num(m[1], "a pid", 0)] = (
                            num(m[2], "a ppid", 0), num(m[3], "a nice", -20, 19), m[4],
                            num(m[5], "an rt_priority", 0, 99), int(mask, 16), m[7])
                    elif body.startswith("# pysched export:"):
                        r.export = body[len("# pysched export:"):].strip()
                        end = re.search(r"\bend_ns=(\d+)", r.export)
                        r.end = num(end[1], "an end_ns", 0, NS_MAX) if end else None
                    continue
                m = perf_head(body)
                if m:
                    x = m[2] if m[2] is not None else m[1]
                    cur_tid = int(x) if len(x) < 10 else num(x, "a tid")
                    x = m[3]
                    cpu = int(x) if len(x) < 4 else cpu_num(x)
                    secs, frac, event = m[4], m[5], m[6]
                    cur_comm = body[:m.start()].strip()
                else:
                    # trace-cmd's comm ends at the last header (m is None here)
                    for m in ftrace_heads(body):
                        pass
                    if m is None:
                        raise TraceFormatError(path, lineno, LINE_FORMAT, body)
                    x, y = m[1], m[2]
                    cur_tid = int(x) if len(x) < 10 else num(x, "a pid")
                    cpu = int(y) if len(y) < 4 else cpu_num(y)
                    secs, frac, event = m[3], m[4], m[5]
                    cur_comm = body[:m.start()].lstrip()
                rest = body[m.end():]
                if len(frac) > 9:
                    raise TraceFormatError(path, lineno, "a time of at most 9 decimals "
                                           "(nanoseconds)", body)
                t = int(secs) * 1_000_000_000 + int(frac) * 10 ** (9 - len(frac)) \
                    if len(secs) <= 20 else NS_MAX + 1
                if t > NS_MAX:
                    raise TraceFormatError(path, lineno, f"a time of at most {_TIME_MAX} s "
                                           f"(nanoseconds in 64 bits), not "
                                           f"{_shown(secs)}.{frac}", body)
                if event.startswith("sched:"):
                    event = event[6:]
                spec = fields.get(event)
                if spec is None:
                    r.skipped[event] += 1
                    continue
                a = spec[0].fullmatch(rest)
                if a is None and spec[1] is not None:
                    a = spec[1].fullmatch(rest)
                if a is None:
                    raise TraceFormatError(path, lineno, f"{event}'s fields '{spec[2]}'", body)
                if r.start is None:
                    r.start = t
                elif t < r.now:
                    raise TraceFormatError(
                        path, lineno, f"a time at or after the previous line's "
                        f"{r.now // 10**9}.{r.now % 10**9:09d} (perf script orders events by "
                        f"time)", body)
                r.now = t
                r.current(t, cpu, cur_tid, cur_comm)
                if event == "sched_switch":
                    w, x, y, z = a[2], a[3], a[6], a[7]
                    r.switch(t, cpu, a[1], int(w) if len(w) < 10 else num(w, "a prev_pid"),
                             int(x) if len(x) < 10 else num(x, "a prev_prio"), a[4], a[5],
                             int(y) if len(y) < 10 else num(y, "a next_pid"),
                             int(z) if len(z) < 10 else num(z, "a next_prio"))
                    continue
                x, y = a[2], a[3]
                pid = int(x) if len(x) < 10 else num(x, "a pid")
                if event == "sched_stat_runtime":
                    runtime = int(y) if len(y) < 19 else num(y, "a runtime", 0, NS_MAX)
                    p = r.task(pid, a[1])
                    if p.runtime_ns + runtime > NS_MAX:
                        raise TraceFormatError(path, lineno, f"runtimes adding up to at most "
                                               f"{NS_MAX} ns for pid {pid}", body)
                    p.runtime_ns += runtime
                elif event == "sched_process_fork":
                    z = a[4]
                    r.fork(t, a[1], pid, y, int(z) if len(z) < 10 else num(z, "a child_pid"))
                else:
                    prio = int(y) if len(y) < 10 else num(y, "a prio")
                    if event == "sched_process_exit":
                        r.exit(t, a[1], pid, prio)
                        continue
                    z = a[4]
                    target = int(z) if len(z) < 4 else cpu_num(z)
                    if event == "sched_waking" or event == "sched_wakeup":
                        r.wakeup(t, cur_tid, a[1], pid, prio, target)
                    elif event == "sched_wakeup_new":
                        r.wakeup_new(t, a[1], pid, prio, target)
                    else:
                        z = a[5]
                        r.migrate(t, a[1], pid, prio, target,
                                  int(z) if len(z) < 4 else cpu_num(z))
        except EOFError:
            raise TraceFormatError(path, lineno + 1, "the rest of the gzip stream "
                                   "(the file is truncated)") from None
        except (gzip.BadGzipFile, zlib.error, OSError) as e:
            raise TraceFormatError(path, lineno + 1, f"a readable gzip stream ({e})") from None
    if r.start is None:
        raise TraceFormatError(path, lineno, "at least one scheduler event (sched_switch, "
                               "sched_waking, sched_wakeup ...): the file has none")
    r.finish()
    return r
