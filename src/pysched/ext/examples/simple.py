"""Two global schedulers: ``GlobalFifo``, the smallest (no op at all: the
class puts every task in the global DSQ with a 20 ms slice), and
``Simple``, one shared DSQ ordered by weighted virtual time (or FIFO with
``fifo=1``), after the sched-ext.rst walkthrough: a task's vtime advances
by the time it ran scaled by 100 / weight, and a task waking is not let
further behind than one slice of the current vtime.  Its parameter
``slice_ns`` is the slice it gives, as the tunable of the same name of its
C twin, experiments/sched_ext/wvtime.bpf.c."""
import pysched as ps
from pysched import ext


class GlobalFifo(ext.Scheduler):
    """Every task in the global DSQ, FIFO, SCX_SLICE_DFL: the class's defaults."""


SHARED_DSQ = 0


class Simple(ext.Scheduler):
    """One shared DSQ, by weighted vtime (fifo=0) or FIFO (fifo=1).

    vtime mode: a task's vtime grows by the ns it ran times 100 / weight;
    a CPU whose task used up its slice keeps it (dispatches nothing) when
    its vtime is still the smallest, else takes the DSQ's first."""

    params = {"fifo": ps.Param(0, 0, 1, doc="1: FIFO instead of weighted vtime"),
              "slice_ns": ps.Param(ext.SCX_SLICE_DFL, 0, 2**63 - 1, unit="ns",
                                   doc="the slice each task is given (and a waking task's "
                                       "most credit)")}

    def init(self):
        self.vtime_now = 0
        self.queued = {}     # pid -> vtime, the tasks in SHARED_DSQ
        self.started = {}    # pid -> ns it began running
        return self.create_dsq(SHARED_DSQ)

    def select_cpu(self, p, prev_cpu, wake_flags):
        cpu, idle = self.select_cpu_dfl(p, prev_cpu, wake_flags)
        if idle:
            self.dsq_insert(p, ext.SCX_DSQ_LOCAL, self.slice_ns)
        return cpu

    def enqueue(self, p, enq_flags):
        if self.fifo:
            self.dsq_insert(p, SHARED_DSQ, self.slice_ns, enq_flags)
            return
        # a sleeper keeps at most one slice of credit
        vtime = max(p.dsq_vtime, self.vtime_now - self.slice_ns)
        self.queued[p.pid] = vtime
        self.dsq_insert_vtime(p, SHARED_DSQ, self.slice_ns, vtime, enq_flags)

    def dequeue(self, p, deq_flags):
        self.queued.pop(p.pid, None)

    def dispatch(self, cpu, prev):
        if not self.fifo and prev is not None and prev.on_rq:
            ran = self.now() - self.started[prev.pid]
            if not self.queued or prev.dsq_vtime + ran * 100 // prev.weight <= min(self.queued.values()):
                return       # nothing dispatched: the class keeps prev running
        self.dsq_move_to_local(SHARED_DSQ)

    def running(self, p):
        self.queued.pop(p.pid, None)
        self.started[p.pid] = self.now()
        self.vtime_now = max(self.vtime_now, p.dsq_vtime)

    def stopping(self, p, runnable):
        p.dsq_vtime += (self.now() - self.started.pop(p.pid)) * 100 // p.weight

    def enable(self, p):
        p.dsq_vtime = self.vtime_now
