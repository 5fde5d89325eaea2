"""A round robin in Python: one FIFO per CPU, a fixed timeslice, no
priorities.  The smallest complete pysched policy."""
from ..base import Param, Policy


class RoundRobin(Policy):
    """Round robin: each runnable task runs `timeslice` ticks in turn."""

    name = "rr"
    params = {"timeslice": Param(100, 1, 100_000, unit="ticks", doc="ticks per turn")}
    rq_fields = ("nr_rotations",)
    max_prio = 1   # every task prio 0, the idle task 1

    def setup(self):
        self.queue = [[] for _ in range(self.cpus)]   # pids, head runs

    def task_spawn(self, p):
        p.prio = 0
        p.time_slice = self.timeslice
        self.queue[p.cpu].append(p.pid)
        return self.curr(p.cpu).is_idle          # preempt only the idle task

    def wakeup(self, p, waker, sync):
        self.queue[p.cpu].append(p.pid)
        return self.curr(p.cpu).is_idle

    def deactivate(self, p):
        self.queue[p.cpu].remove(p.pid)

    def tick(self, cpu, p):
        if p.is_idle:
            return
        p.time_slice -= 1
        if p.time_slice == 0:
            p.time_slice = self.timeslice
            q = self.queue[cpu]
            if len(q) > 1:
                q.remove(p.pid)
                q.append(p.pid)
                self.rq(cpu).nr_rotations += 1
            self.resched(cpu)

    def yield_(self, p):
        q = self.queue[p.cpu]
        q.remove(p.pid)
        q.append(p.pid)
        self.resched(p.cpu)

    def pick_next(self, cpu):
        q = self.queue[cpu]
        return q[0] if q else None

    def check(self):
        for cpu, q in enumerate(self.queue):
            assert len(set(q)) == len(q), f"cpu {cpu}: a pid queued twice: {q}"
            for pid in q:
                t = self.task(pid)
                assert t.on_rq and t.cpu == cpu, f"pid {pid} queued on cpu {cpu} but not runnable there"

