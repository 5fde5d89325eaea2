"""Which wakeups of a trace are one task's handoff to another (replayed as
a channel post) and which are a timer's or a device's that landed on
whatever ran: the rule pysched.trace.replay's docstring states, and each
task's timeline that it reads."""
import numpy as np

WAKE_EDGES = ("auto", "all", "none")
# the CPU between a wakeup and the waker's block (or between a request and
# the wait for its answer) within which the wakeup is marked a handoff.
# Measured on the captures in tests/data: a pipe pair's median 2.2 us
# (real_sched_trace) and 5.4 us (real_pingpong, 90th percentile 9.2 us), a
# condition variable's 13.4 us (real_condvar, 90th 21.9 us), epoll clients'
# requests 6.0-6.1 us (real_epoll, 90th 7.9-8.7 us).  Interrupts landing on
# a task that then blocks: medians of 26 us and more, 10th percentiles of
# 13 us and more -- the margin is thin where the task they land on computes
# briefly (the epoll clients, 0.1 ms), and the habit rule is what keeps
# those apart: a landing is marked one time in four or five, never in most
HANDOFF_NS = 25_000


class Timeline:
    """One task's bursts and blocks, to ask what CPU it had used by a time
    and when it next stopped (blocked or exited)."""

    def __init__(self, trace, tid):
        mine = trace.bursts[trace.bursts["tid"] == tid]
        self.starts, self.ends = mine["start_ns"], mine["end_ns"]
        self.cum = np.concatenate(([0], np.cumsum(self.ends - self.starts)[:-1]))
        blocks = trace.blocks[trace.blocks["tid"] == tid]
        self.stops = np.sort(blocks["start_ns"])
        self.wakes = np.sort(blocks["end_ns"])
        row = trace.tasks[trace.tasks["tid"] == tid][0]
        self.first = int(row["start_ns"])
        self.last = int(row["exit_ns"]) if row["exit_ns"] >= 0 else trace.end_ns

    def used(self, t):
        """CPU time used by time t."""
        i = np.searchsorted(self.starts, t, side="right") - 1
        if i < 0:
            return 0
        # the burst's part first: a time near 2^63 ns plus the CPU before
        # it would overflow int64
        return int(self.cum[i]) + min(t, int(self.ends[i])) - int(self.starts[i])

    def next_stop(self, t):
        """The first block starting at or after t, or its exit (or the
        trace's end)."""
        i = np.searchsorted(self.stops, t, side="left")
        return min(int(self.stops[i]), self.last) if i < len(self.stops) else self.last

    def activation(self, t):
        """When the activation the task is in at time t began: its last
        wakeup at or before t, or its start."""
        i = np.searchsorted(self.wakes, t, side="right") - 1
        return int(self.wakes[i]) if i >= 0 else self.first


def posts(trace, chosen, lines, wake_edges):
    """The wakeups replayed as posts (the module docstring of
    pysched.trace.replay says which): (waker, wakee, time, begun) for each,
    begun being when the waker's activation that woke it began.  chosen:
    the replayed tids; lines: a Timeline of each."""
    blocks = trace.blocks
    woken = blocks[blocks["waker"] > 0]
    woken = woken[np.isin(woken["waker"], list(chosen)) & np.isin(woken["tid"], list(chosen))]
    # when each replayed task woke each other one: a request's times
    asked = {}
    for b in woken:
        asked.setdefault((int(b["waker"]), int(b["tid"])), []).append(int(b["end_ns"]))

    def marked(waker, wakee, start, t):
        """Whether waker's wakeup at t of wakee, blocked since start, bears
        a handoff's mark: the waker blocks or exits within HANDOFF_NS of
        CPU after it (a post, a write, then a block or an exit), or the
        wakee had woken the waker within HANDOFF_NS of CPU before it
        blocked (a request, then a wait for its answer)."""
        line = lines[waker]
        if line.used(line.next_stop(t)) - line.used(t) <= HANDOFF_NS:
            return True
        asks = asked.get((wakee, waker))
        if not asks:
            return False
        i = np.searchsorted(asks, start, side="right") - 1
        own = lines[wakee]
        return i >= 0 and own.used(start) - own.used(asks[i]) <= HANDOFF_NS

    marks = {}   # (waker, wakee, t) -> marked
    habit = {}   # (waker, wakee) -> [marked wakeups, wakeups]
    if wake_edges == "auto":
        for b in woken:
            k, w, t = int(b["waker"]), int(b["tid"]), int(b["end_ns"])
            marks[k, w, t] = marked(k, w, int(b["start_ns"]), t)
            h = habit.setdefault((k, w), [0, 0])
            h[0] += marks[k, w, t]
            h[1] += 1

    def is_post(waker, wakee, t):
        """In "auto", a marked wakeup of a pair at least half of whose
        wakeups are marked: an interrupt that lands on a task just before
        it blocks is marked once in a while, never as a habit; one landing
        on a task that does hand over to this one (a timer ending the
        wakee's own sleep) is not marked, and the wakee keeps its sleep."""
        if wake_edges == "none":
            return False
        if wake_edges == "all":
            return True
        n_marked, wakeups = habit[waker, wakee]
        return 2 * n_marked >= wakeups and marks[waker, wakee, t]

    out = []
    for b in woken:
        k, w, t = int(b["waker"]), int(b["tid"]), int(b["end_ns"])
        if is_post(k, w, t):
            out.append((k, w, t, lines[k].activation(t)))
    return out
