"""Scheduler traces read back into per-task behaviour.

``load(path)`` reads the text of ``perf script`` on a ``perf sched record``
capture (``perf script --ns -F comm,pid,tid,cpu,time,event,trace``; gzip
files too), of ``trace-cmd report`` / the kernel's trace file, or of
``sim.export_ftrace``, one line at a time: what is kept is per-task
aggregates and compact interval lists, never the text.  The events read are
sched_switch, sched_waking / sched_wakeup, sched_wakeup_new,
sched_process_fork, sched_process_exit, sched_migrate_task and
sched_stat_runtime (pysched.results.ftrace writes them); other events are
counted and skipped.

What a task did, from them:

- a *burst* runs from its switch-in to its switch-out on one CPU;
- it *waits* (runnable, not running) from a wakeup, wakeup_new or a
  preemption (prev_state R or R+) to its next switch-in;
- it is *blocked* from a switch-out with another prev_state (S, D, I ...) to
  its wakeup; the waker is the task current on the waking CPU when
  sched_waking (or sched_wakeup) was emitted -- the line's own task, as
  perf prints it; the idle task (pid 0) means no waker.  perf's text cannot
  tell an interrupt from the task it interrupted, so a timer's wakeup shows
  the task that happened to be running as its waker;
- nice comes from prio (120 + nice for a normal task, 99 - rt_priority for
  a real-time one), unless the file says it (sim.export_ftrace does, in its
  ``# pysched task:`` lines, since the 2.5 schedulers' prio is dynamic).

A capture of a machine of up to MAX_CPUS (4,096) CPUs is read: a task's
CPUs are kept as a Python int's bits (``tasks["cpus_allowed"]`` is a uint64
up to 64 CPUs, a Python int above); a replay folds them onto the
simulator's 1,024 at most.

The trace starts at its first line and ends at its last: a task running on
a CPU before that CPU's first switch ran from the start; a task whose first
event is a wakeup was blocked from the start; whatever is still open at the
end is closed there.
"""
from . import replay
from .open_rule import OpenRule  # noqa: F401
from .capture import (BLOCK_DTYPE, BURST_DTYPE, EDGE_DTYPE, EXIT_DTYPE,  # noqa: F401
                      FORK_DTYPE, MIGRATION_DTYPE, TASK_DTYPE, WAIT_DTYPE, WAKEUP_DTYPE,
                      WIDE_TASK_DTYPE, Trace, load)
from .read import BLOCK_STATES, LINE_FORMAT, MAX_CPUS, MAX_LINE, TraceFormatError  # noqa: F401

__all__ = ["load", "compare", "Trace", "TraceFormatError", "OpenRule"]


def compare(trace, sim, tasks=None, workload=None):
    """Per replayed task, what the trace gave it against what the simulated
    policy gave it in a replay (``trace.to_workload(...).run(preset)``):
    CPU share, CPU time, mean wait and mean wakeup latency, trace_ and sim_
    side by side (see pysched.trace.replay.compare)."""
    return replay.compare(trace, sim, tasks=tasks, workload=workload)
