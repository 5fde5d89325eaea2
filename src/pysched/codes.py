"""The integer codes of the simulator's outputs and what they mean.

``stats()``, ``series()`` and ``events()`` hold codes, as the kernel does;
these tables name them, so that nobody has to copy them out of the C.  The
frames (``sim.stats_frame()`` ...) decode with them, and so do TaskView and
the reprs: one table per code, used everywhere.
"""
from collections import namedtuple

from .program import POLICIES

# task->state as the core keeps it (csrc/core/task.h, as in 2.5's
# sched.h); "running" is TASK_RUNNING: running or queued to run.  An exited
# task is reported "dead" (the core reaps zombies at once).
TASK_STATES = {0: "running", 1: "interruptible", 2: "uninterruptible", 4: "zombie", 8: "dead"}

# task->policy: code -> the name spawn(), setscheduler() and Program take
SCHED_POLICIES = {code: name for name, code in POLICIES.items()}

# the event log's `kind`, indexed by code (the PS_EVT_* enum of
# csrc/core/trace.h, in its order)
EVENT_KINDS = (
    "switch", "wakeup", "fork", "exit", "prio", "expire", "backboost", "migrate",
    "array_switch", "starving",
)

EventFields = namedtuple("EventFields", "pid other value prio cpu")
EventFields.__doc__ = """What the columns of one kind of event hold; None: unused
(the log holds -1 or 0 there, a frame holds NA)."""

# what each column of an event means, per kind: the comments of the PS_EVT_*
# enum in csrc/core/trace.h, checked against what the engine and the
# policies write (tests/results/test_frames.py)
EVENT_FIELDS = {
    "switch": EventFields(
        pid="the task switched to (0: the idle task)",
        other="the task switched from (0: the idle task)",
        value="the state of the task switched from (a TASK_STATES code; 8, dead, if it exited)",
        prio="prio of the task switched to",
        cpu="the CPU"),
    "wakeup": EventFields(
        pid="the task woken",
        other="the task that woke it (-1, NA in a frame: a device, in interrupt context)",
        value="1 for a synchronous wakeup (post(sync=True)), else 0",
        prio="prio of the woken task once queued",
        cpu="the CPU it is queued on"),
    "fork": EventFields(
        pid="the child",
        other="the parent",
        value=None,
        prio="prio of the child",
        cpu="the CPU the child is queued on"),
    "exit": EventFields(
        pid="the task that exits",
        other="its parent (-1, NA in a frame: spawned from Python)",
        value=None,
        prio="its prio",
        cpu="its CPU"),
    "prio": EventFields(
        pid="the task whose prio changed",
        other=None,
        value="its old prio",
        prio="its new prio",
        cpu="its CPU"),
    "expire": EventFields(
        pid="the task whose timeslice ran out",
        other=None,
        value="1 if it went to the expired array, 0 if it went back to the active one",
        prio="its prio",
        cpu="its CPU"),
    "backboost": EventFields(
        pid="the waker, given sleep_avg by the task it woke",
        other="the task it woke",
        value="the sleep_avg given to the waker",
        prio="prio of the waker",
        cpu="the waker's CPU"),
    "migrate": EventFields(
        pid="the task moved",
        other="the CPU it left",
        value="1 if moved to its waker's CPU at a sync wakeup, 0 if moved by the balancer or set_affinity",
        prio="its prio",
        cpu="the CPU it moved to"),
    "array_switch": EventFields(
        pid=None,
        other=None,
        value="how many times this runqueue has swapped its arrays, this one included",
        prio=None,
        cpu="the CPU whose runqueue swapped its active and expired arrays"),
    "starving": EventFields(
        pid="the interactive task sent to the expired array because EXPIRED_STARVING",
        other=None,
        value="tasks on the runqueue (nr_running)",
        prio="its prio",
        cpu="its CPU"),
}

# a loaded trace's blocks (pysched.trace): the waker column holds a task's
# pid, or
NO_WAKER = -1       # woken by the idle task (an interrupt on an idle CPU) or
                    # switched in with no wakeup seen
NOT_WOKEN = -2      # still blocked when the trace ends
