"""sched_ext schedulers in Python: the kernel's sched_ext class
(``kernel/sched/ext.c``, 6.12) runs in C -- its dispatch queues (DSQs),
slices, idle tracking, watchdog and rules -- and calls the ops of a
:class:`Scheduler` subclass, as the kernel calls a BPF scheduler's
``struct sched_ext_ops``.

A scheduler is a subclass whose methods are the ops it implements; an op
it leaves out does what the kernel does without it (no ``enqueue``: the
task goes to the global DSQ with ``SLICE_DFL``; no ``dispatch``: a CPU
takes only from the global DSQ; no ``select_cpu``: ``select_cpu_dfl``).
The kfuncs are its methods (``dsq_insert``, ``dsq_insert_vtime``,
``dsq_move_to_local``, ``create_dsq``, ``kick_cpu``, ``select_cpu_dfl``,
``pick_idle_cpu``, ``test_and_clear_cpu_idle``, ``dsq_nr_queued``,
``now``).  Tasks reach the ops as Task views with the class's fields
``slice`` and ``dsq_vtime`` (which an op may set), ``weight`` (1..10000,
nice 0 is 100) and ``dsq_id``, and ``cpus_allowed`` (a bit mask)::

    class GlobalFifo(ps.ext.Scheduler):
        pass                       # no ops: the global DSQ, 20 ms slices

    sim = ps.Simulator(GlobalFifo, cpus=4)

See ``docs/extending/sched-ext.md``.
"""
from .._checks import check_int
from ..policy.base import Policy

__all__ = ["Scheduler", "SCX_DSQ_GLOBAL", "SCX_DSQ_LOCAL", "SCX_DSQ_LOCAL_ON", "SCX_DSQ_INVALID",
           "SCX_SLICE_DFL", "SCX_SLICE_INF", "SCX_ENQ_WAKEUP", "SCX_ENQ_HEAD", "SCX_ENQ_PREEMPT",
           "SCX_ENQ_LAST",
           "SCX_DEQ_SLEEP", "SCX_KICK_IDLE", "SCX_KICK_PREEMPT", "SCX_WAKE_FORK", "SCX_WAKE_TTWU",
           "SCX_WAKE_SYNC", "SCX_OPS_KEEP_BUILTIN_IDLE", "SCX_OPS_ENQ_LAST", "SCX_EXIT_NONE",
           "SCX_EXIT_ERROR", "SCX_EXIT_ERROR_BPF", "SCX_EXIT_ERROR_STALL", "SCX_DSQ_ITER_REV",
           "ExitInfo", "DsqIter"]

# include/linux/sched/ext.h and kernel/sched/ext.c (6.12)
SCX_DSQ_FLAG_BUILTIN = 1 << 63
SCX_DSQ_FLAG_LOCAL_ON = 1 << 62
SCX_DSQ_INVALID = SCX_DSQ_FLAG_BUILTIN | 0
SCX_DSQ_GLOBAL = SCX_DSQ_FLAG_BUILTIN | 1
SCX_DSQ_LOCAL = SCX_DSQ_FLAG_BUILTIN | 2
SCX_DSQ_LOCAL_ON = SCX_DSQ_FLAG_BUILTIN | SCX_DSQ_FLAG_LOCAL_ON
SCX_SLICE_DFL = 20_000_000
SCX_SLICE_INF = 2**64 - 1   # a slice that never runs out
SCX_ENQ_WAKEUP = 0x01
SCX_ENQ_HEAD = 0x10
SCX_ENQ_PREEMPT = 1 << 32
SCX_ENQ_LAST = 1 << 41
_ENQ_DSQ_PRIQ = 1 << 57
SCX_DSQ_ITER_REV = 1 << 16
SCX_DEQ_SLEEP = 0x01
SCX_KICK_IDLE = 1 << 0
SCX_KICK_PREEMPT = 1 << 1
SCX_WAKE_FORK = 0x04
SCX_WAKE_TTWU = 0x08
SCX_WAKE_SYNC = 0x10
SCX_OPS_KEEP_BUILTIN_IDLE = 1 << 0
SCX_OPS_ENQ_LAST = 1 << 1
SCX_EXIT_NONE = 0
SCX_EXIT_ERROR = 1024
SCX_EXIT_ERROR_BPF = 1025
SCX_EXIT_ERROR_STALL = 1026

_EXIT_KINDS = {SCX_EXIT_NONE: "none", SCX_EXIT_ERROR: "error", SCX_EXIT_ERROR_BPF: "error_bpf",
               SCX_EXIT_ERROR_STALL: "error_stall"}
_FLAGS = SCX_OPS_KEEP_BUILTIN_IDLE | SCX_OPS_ENQ_LAST


class ExitInfo(tuple):
    """How a scheduler ended (struct scx_exit_info): ``kind`` (an
    ``SCX_EXIT_*``, ``SCX_EXIT_NONE`` while it runs), ``kind_name``,
    ``msg`` (the op, the time, what went wrong) and ``dump`` (the state it
    ended in: each CPU's current task and local DSQ, every runnable task);
    and, as fields, ``op`` (the op that was running, e.g. ``"enqueue"``;
    None for the watchdog), ``pid`` (the task it concerns, 0 none),
    ``time_ns``, and where that task was: ``held_since_ns`` (the time
    ops.enqueue took it and kept it, never inserting it into a DSQ; None
    when it was not held) or ``dsq_id`` (the DSQ it was on, None none).
    ``problem`` names the mistake: ``"stall"``, ``"undispatched"`` (a
    stall of a task the scheduler held), ``"affinity"``, ``"double
    insertion"``, ``"error"`` (another), None while it runs."""

    __slots__ = ()

    def __new__(cls, kind, msg, dump, op=None, pid=0, time_ns=-1, held_ns=-1,
                dsq_id=SCX_DSQ_INVALID, problem=None):
        return super().__new__(cls, (kind, msg, dump, op, pid, time_ns, held_ns, dsq_id, problem))

    kind = property(lambda self: self[0])
    msg = property(lambda self: self[1])
    dump = property(lambda self: self[2])
    op = property(lambda self: self[3])
    pid = property(lambda self: self[4])
    time_ns = property(lambda self: self[5] if self[0] else None)
    held_since_ns = property(lambda self: self[6] if self[6] >= 0 else None)
    dsq_id = property(lambda self: self[7] if self[7] != SCX_DSQ_INVALID else None)
    kind_name = property(lambda self: _EXIT_KINDS.get(self[0], str(self[0])))

    problem = property(lambda self: self[8])

    def __repr__(self):
        return f"ExitInfo(kind={self.kind_name}, msg={self.msg!r})"


class DsqIter:
    """A walk of a user DSQ (Scheduler.dsq_iter): iterate it for the task
    views; ``set_slice(ns)`` and ``set_vtime(v)`` set what the next
    dsq_move through it gives the task it moves.  Valid within the op that
    made it."""

    __slots__ = ("_ctx", "_state", "rc")

    def __init__(self, ctx, dsq_id, flags):
        self._ctx = ctx
        self.rc, self._state = ctx.ext_iter_new(dsq_id, flags)

    def __iter__(self):
        return self

    def __next__(self):
        p = self._ctx.ext_iter_next(self._state)
        if p is None:
            raise StopIteration
        return p

    def set_slice(self, slice):
        """scx_bpf_dsq_move_set_slice: the slice of the next task moved, ns."""
        self._ctx.ext_iter_set(self._state, False, slice)

    def set_vtime(self, vtime):
        """scx_bpf_dsq_move_set_vtime: the dsq_vtime of the next task moved."""
        self._ctx.ext_iter_set(self._state, True, vtime)


class Scheduler(Policy):
    """Base class of sched_ext schedulers written in Python (module doc).

    Class attributes, as ``struct sched_ext_ops``'s fields:
    ``dispatch_max_batch`` (0: 32), ``timeout_ms`` (the watchdog's, 0:
    30000, at most 30000) and ``flags`` (``SCX_OPS_KEEP_BUILTIN_IDLE``,
    ``SCX_OPS_ENQ_LAST``).  ``params`` declares parameters as for any
    Python policy (``pysched.Param``).  The ops are methods named as in
    the kernel (``yield_`` for yield); ``init()`` runs once, before any
    task, and may create DSQs."""

    dispatch_max_batch = 0
    timeout_ms = 0
    flags = 0

    @classmethod
    def _ext_settings(cls):
        for name, hi in (("dispatch_max_batch", 256), ("timeout_ms", 30000)):
            v = getattr(cls, name)
            if type(v) is not int or not 0 <= v <= hi:
                raise ValueError(f"{cls.__name__}.{name}={v!r} is outside the allowed range 0..{hi}")
        if type(cls.flags) is not int or cls.flags & ~_FLAGS or cls.flags < 0:
            raise ValueError(f"{cls.__name__}.flags={cls.flags!r}: only SCX_OPS_KEEP_BUILTIN_IDLE "
                             f"and SCX_OPS_ENQ_LAST are supported")
        return (cls.dispatch_max_batch, cls.timeout_ms, cls.flags)

    # ---- kfuncs ----

    def dsq_insert(self, p, dsq_id, slice=SCX_SLICE_DFL, enq_flags=0):
        """scx_bpf_dsq_insert: p into the FIFO of DSQ dsq_id with slice ns
        (0 keeps its slice): from select_cpu or enqueue, a direct dispatch of
        the task being enqueued; from dispatch, up to dispatch_max_batch."""
        self._ctx.ext_insert(p, dsq_id, slice, None, enq_flags)

    def dsq_insert_vtime(self, p, dsq_id, slice, vtime, enq_flags=0):
        """scx_bpf_dsq_insert_vtime: p into user DSQ dsq_id ordered by vtime."""
        self._ctx.ext_insert(p, dsq_id, slice, vtime, enq_flags)

    def dsq_iter(self, dsq_id, flags=0):
        """bpf_for_each(scx_dsq, p, dsq_id, flags): a DsqIter over the
        tasks on user DSQ dsq_id, in its order (reversed with
        SCX_DSQ_ITER_REV), those queued after it was made left out.  A DSQ
        that does not exist gives no task (its ``rc`` is -ENOENT, -2)."""
        flags = check_int("flags", flags, 0, 2**64 - 1)
        if flags & ~SCX_DSQ_ITER_REV:
            raise ValueError(f"flags={flags:#x}: a DSQ walk takes SCX_DSQ_ITER_REV only")
        return DsqIter(self._ctx, dsq_id, flags)

    def dsq_move(self, it, p, dsq_id, enq_flags=0):
        """scx_bpf_dsq_move (6.12: scx_bpf_dispatch_from_dsq): move p,
        still on the DSQ `it` walks and queued there before the walk
        began, to dsq_id (any DSQ; a local one migrates it); from
        ops.dispatch.  True if it moved."""
        return self._ctx.ext_dsq_move(it._state, p, dsq_id, enq_flags)

    def dsq_move_vtime(self, it, p, dsq_id, enq_flags=0):
        """scx_bpf_dsq_move_vtime: dsq_move into the vtime order of user
        DSQ dsq_id, by p's dsq_vtime (it.set_vtime to change it)."""
        return self._ctx.ext_dsq_move(it._state, p, dsq_id, enq_flags | _ENQ_DSQ_PRIQ)

    def dsq_move_to_local(self, dsq_id):
        """scx_bpf_dsq_move_to_local (6.12: scx_bpf_consume), from dispatch:
        the first task of DSQ dsq_id that may run on this CPU into its local
        DSQ; True if one moved."""
        return self._ctx.ext_move_to_local(dsq_id)

    def create_dsq(self, dsq_id):
        """scx_bpf_create_dsq: 0, or -errno (-EEXIST, -EINVAL for a built-in id)."""
        return self._ctx.ext_create_dsq(dsq_id)

    def kick_cpu(self, cpu, flags=0):
        """scx_bpf_kick_cpu: reschedule cpu (SCX_KICK_IDLE: only if idle;
        SCX_KICK_PREEMPT: its task's slice to 0 first)."""
        self._ctx.ext_kick_cpu(cpu, flags)

    def dsq_nr_queued(self, dsq_id):
        """scx_bpf_dsq_nr_queued: tasks in the DSQ, or -ENOENT (-2)."""
        return self._ctx.ext_nr_queued(dsq_id)

    def select_cpu_dfl(self, p, prev_cpu, wake_flags):
        """scx_bpf_select_cpu_dfl: (cpu, is_idle)."""
        return self._ctx.ext_select_cpu_dfl(p, prev_cpu, wake_flags)

    def pick_idle_cpu(self, cpus_allowed, flags=0):
        """scx_bpf_pick_idle_cpu: an idle CPU of the mask, claimed, or -EBUSY (-16)."""
        return self._ctx.ext_pick_idle_cpu(cpus_allowed, flags)

    def test_and_clear_cpu_idle(self, cpu):
        """scx_bpf_test_and_clear_cpu_idle."""
        return self._ctx.ext_test_and_clear_cpu_idle(cpu)

    def now(self):
        """scx_bpf_now: the simulated time, ns."""
        return self._ctx.now_ns

    def error(self, msg):
        """scx_bpf_error: end the scheduler with msg."""
        self._ctx.ext_error(str(msg))

    @property
    def exit_info(self):
        """How the scheduler ended (:class:`ExitInfo`); kind SCX_EXIT_NONE while it runs."""
        return ExitInfo(*self._ctx.ext_exit_info())

    @staticmethod
    def local_on(cpu):
        """SCX_DSQ_LOCAL_ON | cpu: the local DSQ of cpu."""
        return SCX_DSQ_LOCAL_ON | cpu
