"""The Simulator: a machine running one scheduler preset, stepped from Python.

Longer than the package's other modules (about 800 lines) because it is one
class, the object a user holds: its methods are grouped in sections below
(building the workload, stepping, parameters and syscalls, task groups,
reading results, frames, traces), and what is not the class -- DataFrames,
the trace writers, argument checks, the policy registry, the task groups'
machinery (groups.py) -- lives in modules of its own."""
import copy
import functools
import os
import sys
import threading

import numpy as np

from . import _core, _display
from . import groups as _groups
from .ext import ExitInfo as _ExitInfo
from ._records import EVENT_DTYPE, LATENCY_DTYPE, PERIODIC_DTYPE, SAMPLE_DTYPE
from ._checks import check_bool, check_name, check_number
from ._checks import check_int as _check_int
from ._lookup import pid_named
from ._suggest import did_you_mean
from .codes import SCHED_POLICIES, TASK_STATES
from .program import FORK, POLICIES, POST, WAIT, Program, _check_channel, _check_rt_priority
from .policy import build
from .policy.base import _run_interruptibly, definition
from .policy.registry import _simulator_info, check_params, policy_info, resolve
from .results import frames
from .results import invariants as _invariants
from .results import ftrace as _ftrace
from .results import perfetto as _perfetto

RECORD_LEVELS = ("counters", "events", "series")
MAX_SECONDS = 10**6
MAX_SERIES_FIELDS = 16  # PS_MAX_SERIES_FIELDS of the core
SOURCE_EVERY, SOURCE_POISSON = 0, 1
# the core's fast paths, in the order of its PS_FAST_* bits (csrc/core/pysched.h)
FAST_PATHS = ("scan", "batch", "defer", "wheel", "skip")


class TaskView:
    """A snapshot of one task: generic fields (pid, name, state, prio,
    static_prio, nice, time_slice, cpu_ns, wait_ns, sleep_ns, nr_switches,
    nr_wakeups ...) and the policy's own (sleep_avg, last_run ...).
    cpus_allowed is the affinity as an int (bit i: CPU i, on machines of
    up to 1,024 CPUs), and cpus the same CPUs as a list."""

    def __init__(self, fields):
        self.__dict__.update(fields)
        mask = fields["cpus_allowed"]
        self.cpus = [c for c in range(mask.bit_length()) if mask >> c & 1]
        self.state = "dead" if fields["exit_ns"] >= 0 else TASK_STATES[fields["state"]]
        self.policy = SCHED_POLICIES[fields["policy"]]
        self.nr_switches = fields["nvcsw"] + fields["nivcsw"]
        self.parent = fields["ppid"] or None

    def __repr__(self):
        return f"TaskView(pid={self.pid}, name={self.name!r}, state={self.state}, prio={self.prio})"

    def _repr_html_(self):
        return _display.task_html(self)

    def __getattr__(self, name):
        # reached only for a name that is not a field: say which was meant
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"'TaskView' object has no attribute {name!r}"
                             f"{did_you_mean(name, vars(self))}")


@functools.lru_cache(maxsize=256)
def _stats_dtype(names, unsigned, width):
    """stats()'s record: the core's columns (int64, or uint64 for a bit
    mask), then nr_switches and the name."""
    k = len(names)
    return np.dtype({"names": list(names) + ["nr_switches", "name"],
                     "formats": [np.uint64 if f in unsigned else np.int64 for f in names]
                     + [np.int64, f"U{width}"],
                     "offsets": [8 * i for i in range(k)] + [8 * k, 8 * k + 8],
                     "itemsize": 8 * k + 8 + 4 * width})


def _fast_paths_mask(reference, fast_paths):
    """The core's PS_FAST_* mask of Simulator(reference=, fast_paths=)."""
    if reference is not None:
        reference = check_bool("reference", reference)
    if fast_paths is None:
        if reference is None:
            reference = os.environ.get("PYSCHED_REFERENCE", "") not in ("", "0")
        return 0 if reference else (1 << len(FAST_PATHS)) - 1
    if isinstance(fast_paths, (str, bytes)) or not hasattr(fast_paths, "__iter__"):
        raise TypeError(f"fast_paths must be a collection of names from {FAST_PATHS}, "
                        f"not {fast_paths!r}")
    mask = 0
    for name in fast_paths:
        if name not in FAST_PATHS:
            raise ValueError(f"fast_paths: {name!r} is not one of {FAST_PATHS}"
                             f"{did_you_mean(name, FAST_PATHS)}")
        mask |= 1 << FAST_PATHS.index(name)
    if reference and mask:
        raise ValueError(f"reference=True turns every fast path off, but fast_paths="
                         f"{tuple(fast_paths)!r} keeps some")
    return mask


class Simulator:
    """A simulated machine running a scheduler preset.

    Parameters
    ----------
    preset : str
        One of ``pysched.presets()``, e.g. ``"linux-2.5.64"``, or a preset of
        a C policy loaded with ``pysched.build_policy``.
    cpus : int
        Number of CPUs, 1..1024, each with its runqueue and tick; the 2.5 load
        balancer moves tasks between them.
    stagger_ticks : bool
        Tick CPU i at i/cpus of a tick after CPU 0 instead of all at once.
    hz : int
        Timer ticks per second (default: the preset's, 1000 as on i386 2.5,
        100 as on i386 2.4); tick-valued parameters default to the kernel's
        HZ-relative values (2*HZ ...).
    seed : int
        Seed of every random stream (per task and per source).
    params : dict
        Parameter overrides, names as in ``pysched.preset_params(preset)``.
    record : "counters" | "events" | "series"
        Counters are always kept; "events" adds the event log; "series" adds
        the event log and sampled task fields (``series_fields``, every
        ``series_every`` ticks).
    latencies : bool
        Keep the wakeup-to-run latencies (``sim.latencies(pid)``).  With
        record="counters" a full buffer keeps the newest (the run goes on
        for ever in bounded memory; ``lat_count``, ``lat_sum_ns`` and
        ``lat_max_ns`` of every task stay exact); otherwise ``on_full``
        decides.
    max_trace_bytes : int
        Cap of each recording buffer; ``on_full`` is "raise" (the run stops
        with an error) or "overwrite" (oldest records are dropped).
    debug : bool
        Check the scheduler's invariants after every instant (default: the
        environment variable PYSCHED_DEBUG).
    reference : bool
        Take the reference path: every fast path of the engine off (the
        wide scans over the CPUs, batched and deferred ticks, the timer
        wheel), for the same results, more slowly -- a check of the fast
        paths, or a baseline for a change to them (default: the
        environment variable PYSCHED_REFERENCE).  ``sim.fast_paths`` says
        which are in force; copies and pickles keep them.
    fast_paths : collection of str
        The fast paths to keep, of ``"scan"``, ``"batch"``, ``"defer"``
        and ``"wheel"`` (default: all, or none with ``reference=True``):
        one left out at a time finds the one behind a difference.
    max_tasks : int
        Live tasks at most (a fork beyond fails the run).
    keep_exited : int
        Exited tasks whose rows ``stats()`` and ``task()`` keep: the most
        recent ones.  An exited task's slot is reused, so memory stays
        bounded however many tasks come and go; ``counters()`` says how
        many records were dropped.
    """

    def __init__(self, preset, *, cpus=1, hz=None, seed=0, params=None, record="counters",
                 latencies=True, series_fields=None, series_every=1,
                 max_trace_bytes=256 << 20, on_full="raise", debug=None, max_tasks=100_000,
                 keep_exited=10_000, switch_cost_ns=0, stagger_ticks=False, reference=None,
                 fast_paths=None):
        name, key, policy_cls = resolve(preset)
        cpus = _check_int("cpus", cpus, 1, _core.MAX_CPUS)
        if hz is not None:
            hz = _check_int("hz", hz, 1, 100_000)
            if 10**9 % hz:
                raise ValueError(f"hz={hz} must divide 10^9 so that a tick is a whole number of ns")
        info = _simulator_info(policy_cls or key, hz)
        hz = info["hz"]
        seed = _check_int("seed", seed, 0, 2**64 - 1)
        if record not in RECORD_LEVELS:
            raise ValueError(f"record={record!r} is not one of {RECORD_LEVELS}")
        if on_full not in ("raise", "overwrite"):
            raise ValueError(f"on_full={on_full!r} is not one of ('raise', 'overwrite')")
        series_every = _check_int("series_every", series_every, 1, 2**31 - 1)
        max_trace_bytes = _check_int("max_trace_bytes", max_trace_bytes, 0, 2**62)
        max_tasks = _check_int("max_tasks", max_tasks, 1, 10_000_000)
        keep_exited = _check_int("keep_exited", keep_exited, 0, 10_000_000)
        switch_cost_ns = _check_int("switch_cost_ns", switch_cost_ns, 0, 10**9 // hz)
        latencies = check_bool("latencies", latencies)
        stagger_ticks = check_bool("stagger_ticks", stagger_ticks)
        if debug is None:
            debug = os.environ.get("PYSCHED_DEBUG", "") not in ("", "0")
        debug = check_bool("debug", debug)
        fast_mask = _fast_paths_mask(reference, fast_paths)
        self.preset = name
        self._preset_key = preset = key
        self.cpus = cpus
        self.hz = hz
        self.seed = seed
        self.record = record
        # the overrides go in before the parameter set is checked, so that
        # they may replace a default that does not fit this HZ
        self._core = _core.Sim(preset, cpus, hz, seed, check_params(preset, params, hz))
        self._policy = None
        if policy_cls is not None:
            self._policy = policy_cls()
            self._core.attach(self._policy)
            self._policy.setup()
        # a C policy's source travels with a pickle (see __setstate__)
        self._policy_source = build._source_of(name) if policy_cls is None else None
        self.policy = info["policy"]
        self.headline = list(info["headline"])
        self._queue_columns = info["queue_columns"]
        self._rq_fields = [f[0] for f in info["rq_fields"]]
        self._task_fields = [f[0] for f in info["generic_fields"] + info["task_fields"]]
        # read as uint64 (a bit mask: CPU 63's bit would make an int64 negative)
        self._unsigned_fields = frozenset(info["unsigned_fields"])
        # checked whatever `record` is: a mistake shows before it matters
        if series_fields is None:
            series_fields = ["prio", "time_slice", "state"] + [f[0] for f in info["task_fields"]]
        else:
            series_fields = self._checked_series_fields(series_fields)
        if len(series_fields) > MAX_SERIES_FIELDS:
            raise ValueError(f"series_fields has {len(series_fields)} fields: at most "
                             f"{MAX_SERIES_FIELDS} can be sampled")
        self._series_fields = [str(f) for f in series_fields] if record == "series" else []
        self._core.configure(record != "counters", latencies, self._series_fields, series_every,
                             max_trace_bytes, on_full == "overwrite", debug, max_tasks,
                             keep_exited, switch_cost_ns, stagger_ticks)
        if fast_mask != self._core.fast_paths:
            self._core.set_fast_paths(fast_mask)
        self._channels = {}
        self._programs = {}  # id(Program) -> (Program, nops, program id)
        self._program_keys = {}  # the ops of a program, as added -> its id
        self._nprogs = 0
        self._groups = {}  # task group path -> its number (pysched.groups)
        self._sessions = {}  # session name -> its autogroup's path

    @property
    def fast_paths(self):
        """The engine's fast paths in force, a tuple of names (of
        ``"scan"``, ``"batch"``, ``"defer"``, ``"wheel"``); () with
        ``reference=True``."""
        mask = self._core.fast_paths
        return tuple(name for bit, name in enumerate(FAST_PATHS) if mask >> bit & 1)

    def _checked_series_fields(self, series_fields):
        if not isinstance(series_fields, (str, bytes)) and hasattr(series_fields, "__iter__"):
            series_fields = list(series_fields)
        if not isinstance(series_fields, list) or not all(isinstance(f, str) for f in series_fields):
            raise TypeError(f"series_fields must be a list of field names, not {series_fields!r}")
        for f in series_fields:
            if check_name("series field", f) not in self._task_fields:
                raise KeyError(f"unknown task field {f!r}; fields: {self._task_fields}"
                               f"{did_you_mean(f, self._task_fields)}")
        if "cpus_allowed" in series_fields and self.cpus > 64:
            # a sample is one 64-bit value: it would hold CPUs 0..63 alone
            raise ValueError(f"series_fields: 'cpus_allowed' is sampled as 64 bits, CPUs 0..63, "
                             f"and this machine has {self.cpus} CPUs (series of cpus_allowed "
                             f"need cpus=1..64); read stats() or sim.task(pid).cpus_allowed")
        return series_fields

    # ---- building the workload ----

    def _channel(self, name):
        if name not in self._channels:
            self._core.ensure_channels(len(self._channels) + 1)
            self._channels[name] = len(self._channels)
        return self._channels[name]

    def _program_id(self, program):
        """Register program and every program it forks; return its id.
        Programs equal op for op share one id, so that a workload built
        with a new Program per task runs one op list, as one shared Program
        does: on 64 CPUs, bench_ticks (h) costs 2.5 ns less per switch."""
        order, seen, done = [], set(), set()
        cyclic = False

        def visit(p):  # children first: a program's forks have ids before it
            nonlocal cyclic
            if id(p) in seen:
                cyclic |= id(p) not in done
                return
            seen.add(id(p))
            p.check_closed()
            for op in p.ops:
                if op[0] == FORK:
                    visit(op[1])
            done.add(id(p))
            cached = self._programs.get(id(p))
            if cached is None or cached[1] != len(p.ops):
                order.append(p)

        visit(program)
        # programs that fork each other need their ids before they are added
        ids = {id(p): self._nprogs + k for k, p in enumerate(order)} if cyclic else {}
        for p in order:
            ops = []
            for code, arg, arg2, (dk, a, b) in p.ops:
                if code in (WAIT, POST):
                    arg = self._channel(arg)
                elif code == FORK:
                    arg = ids[id(arg)] if id(arg) in ids else self._programs[id(arg)][2]
                ops.append((code, arg, arg2, dk, a, b))
            # the floats as the core stores them: 0.0 and -0.0 are two programs
            key = None if cyclic else tuple(
                (c, x, y, dk, float(a).hex(), float(b).hex()) for c, x, y, dk, a, b in ops)
            pid = self._program_keys.get(key)  # no key is None
            if pid is None:
                pid = self._core.add_program(ops)
                assert pid == self._nprogs
                self._nprogs += 1
                if key is not None:
                    self._program_keys[key] = pid
            self._programs[id(p)] = (p, len(p.ops), pid)
        return self._programs[id(program)][2]

    def _cpus_mask(self, cpus_allowed):
        if cpus_allowed is None:
            return (1 << self.cpus) - 1
        if isinstance(cpus_allowed, (str, bytes)) or not hasattr(cpus_allowed, "__iter__"):
            raise TypeError(f"cpus_allowed must be a list of CPU numbers, not {cpus_allowed!r}")
        cpus = list(cpus_allowed)
        if not cpus:
            raise ValueError("cpus_allowed is empty: a task needs at least one CPU")
        mask = 0
        for c in cpus:
            mask |= 1 << _check_int("cpu in cpus_allowed", c, 0, self.cpus - 1)
        return mask

    def spawn(self, program, *, name=None, nice=0, policy="normal", rt_priority=0,
              cpus_allowed=None, cpu=None, init=None, time_slice=None, group=None, session=None):
        """Create a task running `program`; returns its pid.  It goes to `cpu`,
        or else to the allowed CPU with the fewest runnable tasks (lowest
        index on ties).  It starts with
        sleep_avg 0, a full timeslice and prio = effective_prio, unless `init`
        sets policy fields first (e.g. ``init={"sleep_avg": 9500}``, from
        which prio is then computed) or `time_slice` overrides the slice.

        Fair presets: `group` (a handle of ``sim.group`` or its path) is the
        task group it starts in, as a task forked inside that cgroup;
        `session` names its session, whose autogroup it joins when the
        preset parameter ``autogroup`` is 1 (pysched.groups).  Its children
        stay in its group."""
        target = None
        if group is not None:
            target = _groups.resolve(self, group)
        elif session is not None:
            target = _groups.session_group(self, session)
        if target is not None:
            _groups.call(self, _groups.SPAWN_GROUP, target.gid)
            try:
                return self._spawn(program, name, nice, policy, rt_priority, cpus_allowed, cpu,
                                   init, time_slice)
            finally:
                _groups.call(self, _groups.SPAWN_GROUP, 0)
        return self._spawn(program, name, nice, policy, rt_priority, cpus_allowed, cpu, init,
                           time_slice)

    def _spawn(self, program, name, nice, policy, rt_priority, cpus_allowed, cpu, init, time_slice):
        if not isinstance(program, Program):
            raise TypeError(f"spawn needs a Program, not {type(program).__name__}")
        if name is None:
            name = f"task{self._core.ntasks + 1}"
        name = check_name("name", name)
        if not 1 <= len(name.encode()) <= 31:
            raise ValueError(f"name {name!r} must be 1..31 bytes long (the kernel's comm is 16)")
        nice = _check_int("nice", nice, -20, 19)
        rt_priority = _check_rt_priority(policy, rt_priority)
        mask = self._cpus_mask(cpus_allowed)
        if cpu is not None:
            cpu = _check_int("cpu", cpu, 0, self.cpus - 1)
            if not mask >> cpu & 1:
                raise ValueError(f"cpu={cpu} is not in cpus_allowed")
        if init is None:
            init = {}
        if not isinstance(init, dict):
            raise TypeError(f"init must be a dict of task fields, not {type(init).__name__}")
        # every field is an int32 or a uint32: the core checks which
        init = {check_name("init field", k): _check_int(f"init[{k!r}]", v, -2**31, 2**32 - 1)
                for k, v in init.items()}
        if time_slice is not None:
            time_slice = _check_int("time_slice", time_slice, 1, 1_000_000)
        prog = self._program_id(program)
        try:
            return self._core.spawn(prog, name, nice, POLICIES[policy], rt_priority, mask,
                                    -1 if cpu is None else cpu, init, time_slice or 0)
        except KeyError as refused:
            # the core names the init field it does not know: add the
            # policy's field that was probably meant
            declared = self.preset if self._policy is None else type(self._policy)
            own = [f[0] for f in policy_info(declared, self.hz)["task_fields"]]
            hint = "".join(did_you_mean(k, own) for k in init if k not in own)
            raise KeyError(f"{refused.args[0]}{hint}") from None

    def post(self, channel, n=1):
        """Post `channel` n times from outside any task, as a device does
        (no waker): each post wakes the channel's longest waiter, or is
        kept for the next wait.  A channel starts at 0, so a channel used
        as a mutex (wait to lock, post to unlock) is posted once before the
        run: ``sim.post("m")``.  n: 1 .. 2^31 - 1."""
        n = _check_int("n", n, 1, 2**31 - 1)
        self._core.post(self._channel(_check_channel(channel)), n)

    def source(self, channel, *, every_ms=None, every_us=None, poisson_ms=None, start_ms=None,
               count=None):
        """An external device posting `channel` from interrupt context:
        periodically (every_ms / every_us) or as a Poisson process with mean
        gap poisson_ms.  It starts at start_ms (default: one period from now)
        and fires `count` times (default: forever)."""
        given = [k for k, v in (("every_ms", every_ms), ("every_us", every_us),
                                ("poisson_ms", poisson_ms)) if v is not None]
        if len(given) != 1:
            raise TypeError(f"source() takes exactly one of every_ms=, every_us=, poisson_ms=; got {given}")
        if every_ms is not None:
            period, kind = check_number("every_ms", every_ms, 1e-6, 1e9) * 1e6, SOURCE_EVERY
        elif every_us is not None:
            period, kind = check_number("every_us", every_us, 1e-3, 1e12) * 1e3, SOURCE_EVERY
        else:
            period, kind = check_number("poisson_ms", poisson_ms, 1e-6, 1e9) * 1e6, SOURCE_POISSON
        period = max(1, round(period))
        now = self._core.now_ns
        if start_ms is None:
            start = now + (period if kind == SOURCE_EVERY else 0)
        else:
            start = now + round(check_number("start_ms", start_ms, 0, 1e9) * 1e6)
        if count is not None:
            count = _check_int("count", count, 0, 2**62)
        ch = self._channel(_check_channel(channel))
        self._core.add_source(ch, kind, period, start, -1 if count is None else count)

    # ---- stepping ----

    @property
    def policy_instance(self):
        """The instance of the Python policy this simulator runs (a
        ``pysched.Policy``, or a ``pysched.ext.Scheduler`` whose
        ``exit_info`` says how it ended); None under a C policy."""
        return self._policy

    @property
    def ext_exit_info(self):
        """How the sched_ext scheduler this simulator runs ended (a
        ``pysched.ext.ExitInfo``, kind ``SCX_EXIT_NONE`` while it runs),
        whether written in Python or in C (``pysched/scx.h``); None under
        another policy."""
        info = self._core.ext_exit_info()
        if info is None:
            return None
        return _ExitInfo(*info)

    def ext_strict(self, timeout_ms=None):
        """Check the sched_ext scheduler this simulator runs more strictly
        than the kernel, as pysched.policy.testing does: its watchdog's
        timeout becomes timeout_ms (1..30000; None keeps the scheduler's),
        so that a task left undispatched or stalled ends it within a short
        run, and a task inserted twice in one ops.dispatch ends it with an
        error (the kernel skips the second insertion silently).  Copies and
        snapshots keep the setting."""
        ms = 0 if timeout_ms is None else _check_int("timeout_ms", timeout_ms, 1, 30000)
        if self._core.ext_exit_info() is None:
            raise ValueError(f"ext_strict: {self.preset!r} is not a sched_ext scheduler")
        self._core.ext_strict(ms)

    def run(self, seconds=None, *, ticks=None):
        """Advance by `seconds` of simulated time or by `ticks` ticks."""
        if (seconds is None) == (ticks is None):
            raise TypeError("run() takes exactly one of seconds= or ticks=")
        if ticks is not None:
            self.step(ticks)
        else:
            seconds = check_number("seconds", seconds, 0, MAX_SECONDS)
            self._advance(self._core.run_until, self._core.now_ns + round(seconds * 1e9))

    def step(self, ticks=1):
        """Advance to the tick `ticks` ticks ahead (every event up to it delivered)."""
        if type(ticks) is not int or not 0 <= ticks <= MAX_SECONDS * self.hz:
            # all but a plain int in range (the fast path of a stepping loop)
            ticks = _check_int("ticks", ticks, 0, MAX_SECONDS * self.hz)
        if self._policy is None:
            self._core.step(ticks)
        else:
            self._advance(self._core.step, ticks)

    def _advance(self, how, arg):
        """Run the core; under a Python policy, a Ctrl-C stops the run after
        the running hook, or inside it if it does not return
        (pysched.policy.base._run_interruptibly)."""
        if self._policy is None or threading.current_thread() is not threading.main_thread():
            return how(arg)
        return _run_interruptibly(self._policy._ctx, how, arg)

    @property
    def now_ns(self):
        """Simulated time in ns."""
        return self._core.now_ns

    @property
    def jiffies(self):
        """Ticks so far."""
        return self._core.jiffies

    # ---- parameters and syscalls ----

    @property
    def params(self):
        """Current parameter values (a copy)."""
        return self._core.get_params()

    def set_param(self, name, value):
        """Change one parameter between steps (validated)."""
        name = check_name("parameter name", name)
        self._core.set_params(check_params(self._preset_key, {name: value}, self.hz))

    def _pid(self, pid):
        """A pid, or the pid of the task named so (every method that takes
        a pid takes a task's name too)."""
        if isinstance(pid, str):
            return pid_named(self, pid)
        pid = _check_int("pid", pid, 1, 2**31 - 1)
        if pid > self._core.ntasks:
            raise KeyError(f"no task with pid {pid} (pids are 1..{self._core.ntasks})")
        return pid

    def set_affinity(self, pid, cpus):
        """set_cpus_allowed(pid, cpus): a task outside its new set moves to
        the lowest allowed CPU (when it next leaves the CPU if it runs)."""
        pid = self._pid(pid)
        self._core.set_affinity(pid, self._cpus_mask(cpus))

    def renice(self, pid, nice):
        """set_user_nice(pid, nice); an exited task raises ValueError."""
        pid = self._pid(pid)
        self._core.renice(pid, _check_int("nice", nice, -20, 19))

    def setscheduler(self, pid, policy, rt_priority=0):
        """sched_setscheduler(pid, policy, rt_priority), policy 'normal' | 'fifo' | 'rr'."""
        pid = self._pid(pid)
        rt_priority = _check_rt_priority(policy, rt_priority)
        self._core.setscheduler(pid, POLICIES[policy], rt_priority)

    # ---- task groups (fair presets; pysched.groups) ----

    def group(self, name, *, shares=None, weight=None, parent=None):
        """Make a task group (mkdir in the cgroup cpu controller) and return
        its handle.  `name` may be a path ("a/b": missing ancestors are
        made with the default 1024 shares); `parent` a group it goes in.
        `shares` is cpu.shares (2..262144, default 1024), or `weight`
        cgroup v2's cpu.weight (1..10000, default 100), turned into shares
        as sched_weight_from_cgroup does.  At most 15 groups; only the fair
        presets (CFS, EEVDF) have them."""
        shares = _groups.shares_of(shares, weight)
        return _groups.make(self, name, shares, parent)

    def set_shares(self, group, *, shares=None, weight=None):
        """Write a group's cpu.shares (or cpu.weight): its entity on every
        CPU is reweighed (sched_group_set_shares)."""
        group = _groups.resolve(self, group)
        if group.gid == 0:
            raise ValueError("the root group's shares cannot be changed (the kernel refuses too)")
        if shares is None and weight is None:
            raise ValueError("set_shares needs shares= or weight=")
        _groups.call(self, _groups.SET_SHARES, group.gid, _groups.shares_of(shares, weight))

    def set_session_nice(self, session, nice):
        """The nice of a session's autogroup (/proc/<pid>/autogroup):
        its shares become sched_prio_to_weight[nice + 20]; returns them."""
        return _groups.session_nice(self, session, nice)

    def set_group(self, pid, group):
        """Move a task to a group, as writing its pid to the group's
        cgroup.procs does (sched_move_task); "/" is the root group."""
        pid = self._pid(pid)
        _groups.call(self, _groups.MOVE, pid, _groups.resolve(self, group).gid)

    def group_of(self, pid):
        """The task group a task is in."""
        gid = _groups.call(self, _groups.TASK_GROUP, self._pid(pid))[0]
        return _groups.TaskGroup(_groups.by_gid(self)[gid], gid)

    def groups(self):
        """Every task group, the root first, then in the order made."""
        return [_groups.TaskGroup(path, gid) for gid, path in sorted(_groups.by_gid(self).items())]

    def group_stats(self):
        """One row per task group: path, gid, parent, depth, shares, cpu_ns
        (the CPU time its tasks and groups got), tasks (live ones in it);
        a structured array (pysched.groups.stats)."""
        return _groups.stats(self)

    def group_stats_frame(self):
        """group_stats() as a DataFrame indexed by path, cpu_ns as cpu_s."""
        return frames.group_stats(self)

    # ---- reading results ----

    def task(self, pid):
        """A TaskView of task `pid`, or of the task named `pid` if it is a
        str (KeyError if no task has that name, ValueError listing the
        pids if several have it)."""
        fields = self._core.task(self._pid(pid))
        return TaskView(fields)

    def stats(self):
        """One row per task (pid order), live ones and the last
        ``keep_exited`` exited ones: a structured array with every counter
        and field as int64 (pid, cpu_ns, wait_ns, sleep_ns, nr_switches,
        nr_wakeups, exit_ns, ...) plus name; the bit mask cpus_allowed
        (bit i: CPU i) is a uint64 on machines of up to 64 CPUs, and a
        Python int (an object column) on larger ones, as in
        sim.task(pid).cpus_allowed."""
        # the core writes the rows, in pid order, straight into the array:
        # its int64 columns bit for bit (an unsigned field's too), then
        # nr_switches and the name, with no table in between
        names, n, width = self._core.table_shape()
        out = np.empty(n, dtype=_stats_dtype(tuple(names), self._unsigned_fields, width))
        self._core.table_fill(out)
        if self.cpus > 64:
            out = self._whole_masks(out)
        return out

    def _whole_masks(self, table):
        """stats()'s table with cpus_allowed as Python ints, whole: the
        core's 8-byte column holds CPUs 0..63 alone."""
        wide = np.empty(len(table), dtype=[(f, object if f == "cpus_allowed" else table.dtype[f])
                                           for f in table.dtype.names])
        for f in table.dtype.names:
            if f != "cpus_allowed":
                wide[f] = table[f]
        raw, step = self._core.table_masks(), 8 * ((self.cpus + 63) // 64)
        wide["cpus_allowed"] = [int.from_bytes(raw[k:k + step], sys.byteorder)
                                for k in range(0, len(raw), step)]
        return wide

    def latencies(self, pid=None):
        """Wakeup-to-run latencies in ns, in order (one task's, or all)."""
        rec = np.frombuffer(self._core.latencies(), dtype=LATENCY_DTYPE)
        if pid is not None:
            rec = rec[rec["pid"] == self._pid(pid)]
            return rec["latency_ns"].copy()
        return rec.copy()

    def periodic(self, pid=None):
        """The calls of the timed ops (Program.periodic, frame), in order
        (one task's, or all): a structured array of start_ns (the call
        began: the task ran after its wakeup), due_ns (when it was due to
        begin: its deadline, the target of the sleep before it), latency_ns (start minus when it was due to start: the
        timer's expiry plus any advance; a frame: how late its work
        finished), finish_ns (its work done; -1: skipped, the call began a
        whole period late), missed_latency_ns (periods lost x the period),
        pid, met (finished by the next deadline), missed (deadlines missed
        by the call), dropped (bursts dropped).  Kept like latencies():
        with record="counters" the newest when the buffer is full."""
        rec = np.frombuffer(self._core.periodic(), dtype=PERIODIC_DTYPE)
        if pid is not None:
            rec = rec[rec["pid"] == self._pid(pid)]
        return rec.copy()

    def events(self):
        """The event log: time_ns, cpu, kind, pid, other, prio, value, a
        read-only snapshot.  `kind` is an index into pysched.EVENT_KINDS;
        what pid, other, value, prio and cpu mean for each kind is in
        pysched.EVENT_FIELDS.  Needs record="events" or "series"."""
        if self.record == "counters":
            raise _core.StateError("the event log is off: create the Simulator with record='events'")
        return np.frombuffer(self._core.events(), dtype=EVENT_DTYPE)

    def series_times(self):
        """Times (ns) of the series samples."""
        rec = self._samples()
        return np.unique(rec["time_ns"])

    def series(self, field):
        """Samples of a task field: a float array (samples x tasks) with a
        column per pid (1, 2, ...) and NaN where the task did not exist
        (not yet, or no more); cpus_allowed as the unsigned mask of CPUs
        0..63, rounded to a float as every sample is (machines of up to 64
        CPUs: a larger one refuses it as a series field)."""
        if self.record != "series":
            raise _core.StateError("series are off: create the Simulator with record='series'")
        if field not in self._series_fields:
            raise KeyError(f"field {field!r} is not sampled; sampled: {self._series_fields}"
                           f"{did_you_mean(field, self._series_fields)}")
        rec = self._samples()
        rec = rec[rec["field"] == self._series_fields.index(field)]
        times, row = np.unique(rec["time_ns"], return_inverse=True)
        ntasks = self._core.ntasks
        out = np.full((len(times), ntasks), np.nan)
        value = rec["value"]
        if field in self._unsigned_fields:
            value = value.view(np.uint64)
        out[row, rec["pid"] - 1] = value
        return out

    def _samples(self):
        return np.frombuffer(self._core.samples(), dtype=SAMPLE_DTYPE)

    def clear_records(self):
        """Empty the event log, latency, periodic and series buffers."""
        self._core.clear()

    def runqueue(self, cpu=0):
        """The runqueue of `cpu`: curr, nr_running, expired_timestamp ..."""
        return self._core.runqueue(_check_int("cpu", cpu, 0, self.cpus - 1))

    def cpu_stats(self):
        """One row per CPU: cpu, ticks, busy_ticks, nr_switches, busy_ns,
        nr_running (queued tasks, the running one included), then every
        runqueue field the policy declares (nr_balance_pulls, prio_avg ...)."""
        generic = ["ticks", "busy_ticks", "nr_switches", "busy_ns"]
        own = [f for f in self._rq_fields if f not in generic and f != "nr_running"]
        names = generic + ["nr_running"] + own
        out = np.zeros(self.cpus, dtype=[("cpu", np.int64)] + [(n, np.int64) for n in names])
        queued = self._core.on_rq_counts()
        for c in range(self.cpus):
            rq = self._core.runqueue(c)
            out[c] = (c, *[rq[n] for n in generic], queued[c], *[rq[n] for n in own])
        return out

    def queue(self, cpu=0):
        """The runqueue of `cpu` in the order schedule() considers it: a list
        of tuples of the policy's queue columns (``queue_columns``), codes
        shown by name -- for the O(1) family (array, prio, pid) with array
        "active" or "expired"."""
        cpu = _check_int("cpu", cpu, 0, self.cpus - 1)
        labels = [lab.split(",") if lab else None for _, lab in self._queue_columns]
        return [tuple(lab[v] if lab else v for lab, v in zip(labels, row))
                for row in self._core.queue(cpu)]

    @property
    def queue_columns(self):
        """Names of the columns of ``queue()``."""
        return [name for name, _ in self._queue_columns]

    def counters(self):
        """Global counters: forks, exits, live_tasks, task_slots (allocated,
        reused after exits), exited_kept / exited_dropped (records of exited
        tasks), starving_expiries, dropped trace records."""
        return self._core.counters()

    def watch(self, idle_while_waiting_ms=0, starvation_ms=None, *, stop_on=(), lag=False,
              uncharged_ms=None):
        """Watch the behaviour invariants from now (sim.invariants() reports
        them): work conservation -- a CPU idle while a task that may run on
        it waits, for longer than idle_while_waiting_ms -- and starvation --
        a runnable task that waits for a CPU longer than starvation_ms
        (None: no threshold; each task's longest wait is kept anyway) --
        and with lag=True (or stop_on "lag"), under the fair presets, each
        queued task's lag, against the bound EEVDF's kernel clamps it to
        (CFS: reported, no bound); and a task's CPU time its ticks did not
        charge (the tick-sampled presets' accounting), against uncharged_ms.
        stop_on: "work_conservation", "starvation", "lag" and/or
        "accounting" (needs uncharged_ms; not under CFS and EEVDF, which
        charge nanoseconds): a run
        stops at the instant that one is broken, raising InvariantError
        that names the instant, the CPUs and the task (for "lag", its lag
        and the bound).  A run is the same whole, in chunks or stepped,
        watched or not (stopping aside); watching costs a look at the CPUs
        each instant a task waits, the lag under a fair preset a look at
        the queued tasks of each CPU whose queue changed, and stop_on turns
        batched and deferred ticks off and, for starvation, looks at the
        waiting tasks each instant.  See docs/guide/invariants.md."""
        _invariants.configure(self, idle_while_waiting_ms, starvation_ms, stop_on, lag,
                              uncharged_ms)

    def unwatch(self):
        """Stop watching the behaviour invariants (what was counted stays;
        each task's longest wait is kept anyway)."""
        self._core.set_watch(0, 0, _invariants.NEVER_NS, _invariants.NEVER_NS)

    def invariants(self):
        """The behaviour invariants up to now: a pysched.results.invariants.
        Invariants (work conservation since sim.watch(), each task's
        longest wait and first starvation, its lag's extremes and first
        break of its bound, its CPU time against what its policy charged,
        the spread of shares among tasks of equal nice, and
        weight_shares(): a window's shares against the weights')."""
        return _invariants.report(self)

    def check(self):
        """Check the engine's and the policy's invariants (InvariantError, an
        AssertionError)."""
        self._core.check()

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_core"] = self._core.snapshot()
        # programs are cached by object identity, which does not survive a
        # pickle: keep their ids by position instead
        state["_programs"] = {}
        state["_program_list"] = [(p, n, pid) for p, n, pid in self._programs.values()]
        # a Python policy travels as its class (by reference) and its
        # instance's state; the core's PolicyDef is rebuilt from the class
        state.pop("_preset_key")
        return state

    def __setstate__(self, state):
        programs = state.pop("_program_list")
        policy = state["_policy"]
        source = state.setdefault("_policy_source", None)
        if policy is None:
            state["_preset_key"] = state["preset"]
            # a C policy's library is loaded (built first if this machine
            # has not) and the snapshot restored against that very library,
            # whatever version of it the preset's name means here now
            library = -1 if source is None else build._library_index(source)
            state["_core"] = _core.Sim.restore(state["_core"], None, None, library)
        else:
            state["_preset_key"] = definition(type(policy))
            state["_core"] = _core.Sim.restore(state["_core"], state["_preset_key"], policy)
        state["_programs"] = {id(p): (p, n, pid) for p, n, pid in programs}
        state.setdefault("_program_keys", {})  # pickled before programs were shared
        state.setdefault("_groups", {})  # pickled before task groups existed
        state.setdefault("_sessions", {})
        self.__dict__.update(state)

    # ---- results as pandas DataFrames: X_frame() is X() decoded (pysched/frames.py) ----

    def stats_frame(self):
        """stats() as a DataFrame indexed by pid: state and policy names,
        times in seconds (*_s), exit_s and ppid NA for live and spawned
        tasks (see pysched.results.frames)."""
        return frames.stats(self)

    def events_frame(self):
        """events() as a DataFrame indexed by time_s: kind names, task
        names, NA where a kind leaves a column unused (pysched.EVENT_FIELDS)."""
        return frames.events(self)

    def latencies_frame(self, pid=None):
        """latencies(pid) as a DataFrame indexed by time_s (when the task
        started to run): pid, name, cpu, latency_s."""
        return frames.latencies(self, pid)

    def periodic_frame(self, pid=None):
        """periodic(pid) as a DataFrame indexed by start_s (when the call
        began): pid, name, due_s, latency_s, finish_s (missing: the work
        was skipped), missed_latency_s, met (bool), missed, dropped."""
        return frames.periodic(self, pid)

    def series_frame(self, field):
        """series(field) as a DataFrame indexed by time_s (series_times()
        in seconds), one column per task labelled (pid, name)."""
        return frames.series(self, field)

    def cpu_stats_frame(self):
        """cpu_stats() as a DataFrame indexed by cpu, times in seconds."""
        return frames.cpu_stats(self)

    def counters_frame(self):
        """counters() as a DataFrame indexed by counter (its name), one
        row per counter, its count in the column value."""
        return frames.counters(self)

    # ---- the run as a trace (pysched.results.ftrace, read back with pysched.trace.load;
    # pysched.results.perfetto) ----

    def export_ftrace(self, path):
        """Write the event log to `path` as the text of ``perf script`` on a
        ``perf sched record`` capture: sched_switch, sched_wakeup,
        sched_wakeup_new, sched_process_fork, sched_process_exit and
        sched_migrate_task with the kernel's fields (gzip if `path` ends in
        .gz).  Needs record="events" (or "series")."""
        _ftrace.write(self, path)

    def export_perfetto(self, path):
        """Write the run to `path` as a Perfetto trace (protobuf) for
        ui.perfetto.dev: a track per CPU with a slice per running task, a
        process per task with its states (running, runnable, sleeping,
        blocked), wakeup and fork flows, and counters of prio and, with
        record="series", of the policy's headline fields and time_slice.
        Needs record="events" (or "series")."""
        _perfetto.write(self, path)

    def __repr__(self):
        return _display.simulator_repr(self)

    def _repr_html_(self):
        return _display.simulator_html(self)

    def copy(self):
        """An independent copy: branch the run here."""
        new = Simulator.__new__(Simulator)
        new.__dict__.update(self.__dict__)
        if self._policy is None:
            new._core = self._core.copy()
        else:
            new._policy = copy.deepcopy(self._policy)
            new._core = self._core.copy(new._policy)
        new._channels = dict(self._channels)
        new._programs = dict(self._programs)
        new._program_keys = dict(self._program_keys)
        new._groups = dict(self._groups)
        new._sessions = dict(self._sessions)
        return new

    def __copy__(self):
        # without it, copy.copy rebuilds the twin from __getstate__ without
        # copying what the snapshot leaves out: the twin would share the
        # program cache, the channel table and a Python policy's instance
        return self.copy()

