"""A "decaying sleep credit" toy: the interactivity idea of 2.5 in twenty
lines.  A task earns credit while it sleeps and spends it while it runs;
credit buys priority.  Unlike 2.5's sleep_avg it decays by half every
`halflife` ticks whatever the task does, so old sleep counts for less.

    prio = 120 + nice - bonus,   bonus = max_bonus * credit / max_credit

The runnable task of best (lowest) prio runs, round robin among equals, for
`timeslice` ticks; a wakeup preempts a task of worse prio.
"""
from ..base import Param, Policy

NICE_0 = 120  # static_prio of nice 0, as in 2.5 (MAX_RT_PRIO + 20)


class SleepCredit(Policy):
    """Decaying sleep credit: sleep earns priority, which fades."""

    name = "sleep-credit"
    params = {
        "max_credit": Param(1000, 1, 10**6, unit="ticks", doc="credit cap"),
        "max_bonus": Param(10, 0, 39, unit="prio", doc="bonus of full credit"),
        "halflife": Param(500, 1, 10**6, unit="ticks", doc="credit halves every halflife ticks"),
        "timeslice": Param(50, 1, 10**5, unit="ticks", doc="ticks per turn"),
    }
    task_fields = ("credit", "slept_at")
    rq_fields = ("nr_preemptions",)
    headline = ("credit", "prio")

    def setup(self):
        self.queue = [[] for _ in range(self.cpus)]   # pids, in arrival order

    def _prio(self, p):
        return NICE_0 + p.nice - self.max_bonus * p.credit // self.max_credit

    def _enqueue(self, p):
        p.prio = self._prio(p)
        self.queue[p.cpu].append(p.pid)
        curr = self.curr(p.cpu)
        preempt = curr.is_idle or p.prio < curr.prio
        if preempt and not curr.is_idle:
            self.rq(p.cpu).nr_preemptions += 1
        return preempt

    def task_spawn(self, p):
        p.time_slice = self.timeslice
        return self._enqueue(p)

    def wakeup(self, p, waker, sync):
        slept = self.jiffies - p.slept_at
        p.credit = min(self.max_credit, p.credit + slept)
        return self._enqueue(p)

    def deactivate(self, p):
        self.queue[p.cpu].remove(p.pid)
        p.slept_at = self.jiffies

    def tick(self, cpu, p):
        if self.jiffies % self.halflife == 0:
            for t in self.tasks():
                t.credit //= 2
        if p.is_idle:
            return
        if p.credit:
            p.credit -= 1
        p.time_slice -= 1
        if p.time_slice == 0:
            p.time_slice = self.timeslice
            q = self.queue[cpu]
            q.remove(p.pid)
            q.append(p.pid)
            p.prio = self._prio(p)
            self.resched(cpu)

    def pick_next(self, cpu):
        q = self.queue[cpu]
        if not q:
            return None
        return min(q, key=lambda pid: self.task(pid).prio)   # first of the best: round robin
