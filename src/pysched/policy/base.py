"""Policies written in Python, run by the same C engine as the built-in ones.

A policy is a subclass of :class:`Policy` whose methods are the scheduler
hooks (those of ``csrc/core/policy.h``)::

    class RoundRobin(ps.Policy):
        name = "rr"
        params = {"timeslice": ps.Param(100, 1, 10_000, unit="ticks")}

        def setup(self):                       # once per simulator
            self.queue = [[] for _ in range(self.cpus)]
        def task_spawn(self, p):               # a new task: enqueue it
            p.time_slice = self.timeslice
            self.queue[p.cpu].append(p.pid)
        def wakeup(self, p, waker, sync):      # a sleeper wakes
            self.queue[p.cpu].append(p.pid)
        def deactivate(self, p):               # it blocks or exits
            self.queue[p.cpu].remove(p.pid)
        def tick(self, cpu, p):                # the timer tick
            if not p.is_idle:
                p.time_slice -= 1
                if p.time_slice == 0:
                    p.time_slice = self.timeslice
                    q = self.queue[cpu]
                    q.append(q.pop(q.index(p.pid)))
                    self.resched(cpu)
        def pick_next(self, cpu):              # a pid, a Task or None (idle)
            q = self.queue[cpu]
            return q[0] if q else None

    sim = ps.Simulator(RoundRobin)

Mandatory hooks: ``task_spawn(p)``, ``wakeup(p, waker, sync)``,
``deactivate(p)`` and ``pick_next(cpu)``; ``task_spawn`` and ``wakeup``
return true to preempt the task running on ``p.cpu``.  Optional hooks,
where the engine's default runs if the class leaves them out:
``task_fork(parent, child)`` (default: the child on the parent's CPU, then
``task_spawn``), ``task_exit(p, parent)``, ``put_prev(p)``, ``tick(cpu, p)``,
``yield_(p)`` (default: reschedule), ``set_nice(p, nice)``,
``set_scheduler(p, policy, rt_priority)``, ``migrate(p, dest)`` (default:
``deactivate``, then ``wakeup`` on dest) and ``check()`` (raise when an
invariant of the policy's own state fails).  The engine sets ``p.nice``
after ``set_nice`` and ``p.policy`` and ``p.rt_priority`` after
``set_scheduler``: the hook sees the old values on ``p``.

Tasks reach the hooks as ``Task`` views: every field by name (``pid``,
``prio``, ``nice``, ``time_slice``, ``cpu``, ``on_rq``, ``cpu_ns`` ... and
the class's ``task_fields``), plus ``running``, ``is_idle`` and ``name``.
A policy sets ``prio``, ``static_prio``, ``time_slice``, ``cpu`` (of a
task that is not running, or in ``migrate`` of the task it is handed,
which may be the running one: ``set_affinity`` of a running task preempts
it and hands it to ``migrate`` from its CPU's ``schedule()``, after
``put_prev`` and before ``pick_next``, before the call returns) and its own
fields; the rest is the
engine's.  Setting ``cpu`` to another CPU is a migration: the engine counts
it (``nr_migrations``) and logs it.  ``log_event`` logs the policy's own
events (prio, expire ...).  Keep pids, not views, in the policy's state:
the state is copied with the simulator (``copy.deepcopy``) and pickled with
it.

Declarations (class attributes): ``name``, ``doc``, ``params`` (name ->
:class:`Param`; each becomes an instance attribute holding the current
value), ``task_fields`` and ``rq_fields`` (names of int64 fields, shown in
``sim.task()``, ``stats()``, ``series()`` and ``cpu_stats()``),
``headline`` (the fields plots show first), ``max_prio`` (the idle task's
prio) and ``hz`` (the default HZ).
"""
import copy
import signal
import threading
from collections import namedtuple

from .. import _core
from .._checks import check_bool, check_int, check_name
from ..codes import EVENT_KINDS

__all__ = ["Param", "Policy", "register_policy"]

Param = namedtuple("Param", "default min max unit doc hz_scaled", defaults=("", "", False))
Param.__doc__ = """A parameter of a Python policy: default, allowed range
(inclusive), unit and doc.  hz_scaled: the default is in ticks at HZ=1000
and follows HZ as the kernel's ``2*HZ`` do."""

MANDATORY = ("task_spawn", "wakeup", "deactivate", "pick_next")

# After a first Ctrl-C while a hook runs, the seconds the hook may go on
# before KeyboardInterrupt is raised inside it
SIGINT_GRACE_S = 1.0

# the event kinds a policy logs itself (Policy.log_event), by code
POLICY_EVENTS = ("prio", "expire", "backboost", "array_switch", "starving")
_POLICY_EVENT_CODES = {k: EVENT_KINDS.index(k) for k in POLICY_EVENTS}


def _event_kind_error(kind):
    if not isinstance(kind, str):
        return TypeError(f"an event kind must be a str, not {type(kind).__name__}")
    if kind in ("switch", "wakeup", "fork", "exit"):
        return ValueError(f"event kind {kind!r} is the engine's: it logs it itself")
    if kind == "migrate":
        return ValueError("event kind 'migrate' is the engine's: setting a task's cpu logs it")
    return ValueError(f"{kind!r} is not an event kind a policy logs; those are {POLICY_EVENTS}")


class Policy:
    """Base class of the policies written in Python (see the module doc)."""

    name = None
    doc = ""
    params = {}
    task_fields = ()
    rq_fields = ()
    headline = ()
    max_prio = 140
    hz = 1000

    def setup(self):
        """Called once for each simulator, before anything runs: build the
        policy's state here (``self.cpus`` and the parameters are set)."""

    # ---- what a hook may ask of the engine ----

    @property
    def cpus(self):
        return self._ctx.cpus

    @property
    def now_ns(self):
        return self._ctx.now_ns

    @property
    def jiffies(self):
        return self._ctx.jiffies

    @property
    def hz_now(self):
        """The simulator's HZ."""
        return self._ctx.hz

    def resched(self, cpu):
        """Set need_resched on `cpu`: it calls schedule() at the end of the
        current instant."""
        self._ctx.resched(cpu)

    def task(self, pid):
        """The Task view of live task `pid`."""
        return self._ctx.task(pid)

    def curr(self, cpu):
        """The task running on `cpu` (its idle task when none)."""
        return self._ctx.curr(cpu)

    def idle(self, cpu):
        """The idle task of `cpu`."""
        return self._ctx.idle(cpu)

    def rq(self, cpu):
        """The runqueue fields of `cpu` (``rq_fields``), readable and
        writable by name."""
        return self._ctx.rq(cpu)

    def tasks(self):
        """Every live task, in pid order."""
        return self._ctx.tasks()

    def log_event(self, kind, cpu, p=None, *, other=-1, prio=None, value=0):
        """Log an event of the policy's own `kind` (one of ``POLICY_EVENTS``:
        "prio", "expire", "backboost", "array_switch", "starving") on
        `cpu` about task `p` (a Task, a pid or None), when the event log is
        on -- what ``pysched.EVENT_KINDS`` documents for each kind.  `prio`
        defaults to p's prio.  The engine logs switch, wakeup, fork and exit
        itself, and setting a task's cpu logs migrate."""
        code = _POLICY_EVENT_CODES.get(kind) if type(kind) is str else None
        if code is None:
            raise _event_kind_error(kind)
        self._ctx.log_event(code, cpu, p, other, prio, value)

    # ---- copying: the state travels, the link to a simulator does not ----

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_ctx", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        new.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        return new


def _run_interruptibly(ctx, how, arg):
    """how(arg), a run of the simulator that ctx attaches a policy to, in
    the main thread, under pysched's SIGINT handler.  A Ctrl-C while no
    hook runs raises KeyboardInterrupt at once (between two pieces of run:
    the simulator can go on).  One while a hook runs lets the hook finish:
    the run stops as it returns.  A second Ctrl-C, or SIGINT_GRACE_S
    seconds without the hook returning (a loop, a blocking read), raises
    KeyboardInterrupt inside the hook.  A run stopped in a hook raises
    that KeyboardInterrupt, naming the hook and the time, and the
    simulator is marked failed as after any hook's error: the hook's, or
    its instant's, work is half done."""
    main = threading.main_thread().ident
    timers = []

    def grace_over():
        ctx.interrupt_hook(main)

    def sigint(signum, frame):
        act = ctx.sigint()
        if act:
            raise KeyboardInterrupt
        if act is False:   # the first, in a hook: its grace period begins
            timer = threading.Timer(SIGINT_GRACE_S, grace_over)
            timer.daemon = True
            timers.append(timer)
            timer.start()

    previous = signal.signal(signal.SIGINT, sigint)
    try:
        return how(arg)
    finally:
        for timer in timers:
            timer.cancel()
            timer.join()
        # None: a handler not set from Python, which signal cannot put back
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)


def definition(cls):
    """The core's PolicyDef of a Policy subclass, built once and kept on the
    class (a new one if the class changed since)."""
    if not (isinstance(cls, type) and issubclass(cls, Policy)) or cls is Policy:
        raise TypeError(f"a policy must be a subclass of pysched.Policy, not {cls!r}")
    decl = _declaration(cls)
    ext = getattr(cls, "_ext_settings", None)
    if ext is not None:
        decl = decl + (ext(),)
    cached = cls.__dict__.get("_pysched_def")
    if cached is not None and cached[0] == decl:
        return cached[1]
    ext = getattr(cls, "_ext_settings", None)
    ext = ext() if ext is not None else None
    missing = [h for h in MANDATORY if getattr(cls, h, None) is None] if ext is None else []
    if missing:
        raise TypeError(f"policy {cls.__name__} lacks the mandatory hooks {missing}")
    name, doc, params, tfields, rfields, headline, max_prio, hz = decl[:8]
    if ext is not None:
        # a sched_ext scheduler (pysched.ext): the class's fields are shown
        tfields = rfields = headline = ()
    pdef = _core.PolicyDef(cls, name, doc, list(params), list(tfields), list(rfields),
                           list(headline), max_prio, hz, *([ext] if ext is not None else []))
    cls._pysched_def = (decl, pdef)
    return pdef


def _declaration(cls):
    name = cls.name if cls.name is not None else cls.__name__
    name = check_name("policy name", name)
    if not isinstance(cls.params, dict):
        raise TypeError(f"{cls.__name__}.params must be a dict of name -> pysched.Param")
    params = []
    for pname, p in cls.params.items():
        if not isinstance(p, tuple):
            raise TypeError(f"parameter {pname!r} of {cls.__name__} must be a pysched.Param, "
                            f"not {type(p).__name__}")
        p = Param(*p)
        pname = check_name("parameter name", pname)
        lo, hi = (check_int(f"parameter {pname}'s {k}", v, -2**63, 2**63 - 1)
                  for k, v in (("min", p.min), ("max", p.max)))
        params.append((pname, check_int(f"parameter {pname}'s default", p.default, lo, hi), lo, hi,
                       check_name("unit", p.unit), check_name("doc", p.doc),
                       check_bool("hz_scaled", p.hz_scaled)))
    fields = tuple(check_name("task field", f) for f in cls.task_fields)
    rq = tuple(check_name("runqueue field", f) for f in cls.rq_fields)
    headline = tuple(cls.headline) or fields[:2] or ("prio",)
    return (name, str(cls.doc or cls.__doc__ or ""), tuple(params), fields, rq, headline,
            check_int("max_prio", cls.max_prio, 1, 1_000_000), check_int("hz", cls.hz, 1, 100_000))


# Python policies registered by name: name -> class
_registered = {}


def register_policy(cls, name=None):
    """Make Python policy `cls` known by `name` (which becomes its ``name``
    attribute; default: the one it has), so that ``Simulator(name)``,
    ``presets()``, ``policy_info(name)`` and sweeps find it.  Registering
    another class under a taken name is an error; registering the same
    class again is not."""
    if name is not None:
        cls.name = check_name("policy name", name)
    pdef = definition(cls)
    key = _declaration(cls)[0]
    if key in [p[0] for p in _core.presets()]:
        raise ValueError(f"policy name {key!r} is a built-in preset's")
    old = _registered.get(key)
    if old is not None and old is not cls:
        raise ValueError(f"policy name {key!r} is taken by {old.__module__}.{old.__qualname__}")
    _registered[key] = cls
    return pdef


def registered():
    """The registered Python policies: name -> class."""
    return dict(_registered)
