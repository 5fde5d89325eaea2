"""A queue per CPU with idle stealing, after sched-ext.rst's per-CPU DSQ
pattern: each CPU has its own FIFO DSQ (id = the CPU), a task goes to the
DSQ of the CPU it was placed on, a CPU serves its own DSQ first and, when
it is empty, steals from the others in order of distance."""
from pysched import ext


class PerCpu(ext.Scheduler):
    """A FIFO DSQ per CPU; an idle CPU steals from the others."""

    def init(self):
        for cpu in range(self.cpus):
            self.create_dsq(cpu)

    def select_cpu(self, p, prev_cpu, wake_flags):
        cpu, idle = self.select_cpu_dfl(p, prev_cpu, wake_flags)
        return cpu

    def enqueue(self, p, enq_flags):
        self.dsq_insert(p, p.cpu, ext.SCX_SLICE_DFL, enq_flags)
        self.kick_cpu(p.cpu, ext.SCX_KICK_IDLE)

    def dispatch(self, cpu, prev):
        for k in range(self.cpus):
            if self.dsq_move_to_local((cpu + k) % self.cpus):
                return
