"""Central dispatch, after sched-ext.rst's example of one CPU making every
decision: tasks queue in a FIFO the scheduler keeps itself; CPU 0
(``central_cpu``) fills the local DSQ of every other CPU that has room
(SCX_DSQ_LOCAL_ON | cpu, within the task's affinity) and kicks it, and
ticks of CPU 0 keep the rounds going.  Other CPUs' dispatch only asks
CPU 0 to run."""
from pysched import ext

CENTRAL = 0


class Central(ext.Scheduler):
    """CPU 0 dispatches for all CPUs from one FIFO of pids."""

    def init(self):
        self.queue = []

    def select_cpu(self, p, prev_cpu, wake_flags):
        return CENTRAL

    def enqueue(self, p, enq_flags):
        self.queue.append(p.pid)
        self.kick_cpu(CENTRAL, ext.SCX_KICK_IDLE)

    def dequeue(self, p, deq_flags):
        if p.pid in self.queue:
            self.queue.remove(p.pid)

    def dispatch(self, cpu, prev):
        if cpu != CENTRAL:
            self.kick_cpu(CENTRAL)
            return
        for target in range(self.cpus):
            if target == CENTRAL or self.dsq_nr_queued(ext.SCX_DSQ_LOCAL_ON | target):
                continue
            for pid in self.queue:
                p = self.task(pid)
                if p.cpus_ptr >> target & 1:
                    self.queue.remove(pid)
                    self.dsq_insert(p, self.local_on(target), ext.SCX_SLICE_DFL)
                    self.kick_cpu(target, ext.SCX_KICK_IDLE)
                    break
        for pid in self.queue:
            p = self.task(pid)
            if p.cpus_ptr >> CENTRAL & 1:
                self.queue.remove(pid)
                self.dsq_insert(p, ext.SCX_DSQ_LOCAL, ext.SCX_SLICE_DFL)
                break

    def tick(self, p):
        if self.queue:
            self.kick_cpu(CENTRAL)
