"""Importing workloads: rt-app's JSON workload format as pysched programs.

``from_rtapp(path_or_dict)`` reads a workload written for rt-app
(scheduler-tools/rt-app: its ``doc/tutorial.txt`` describes the format) and
returns a :class:`Workload`: one program and one set of spawn arguments per
thread rt-app would create, the programs its ``fork`` events run, the
duration, and ``workload.simulator(preset, **kw)``, a Simulator with all of
it spawned::

    w = pysched.workloads.from_rtapp("periodic.json")
    sim = w.simulator("linux-2.5.65", cpus=2, record="events")
    sim.run(seconds=w.duration or 10)        # duration None: rt-app's -1

Every event maps to program ops (docs/guide/interbench-rtapp.md says how and
where the model differs from rt-app); a key or a value rt-app would not take,
or one that pysched cannot simulate, is an error naming the key and where it
is: ``tasks.thread0.phases.p1: unsupported event 'mem' (...)``.  A wrong type
is a TypeError, anything else a ValueError.  So is a workload that expands
beyond MAX_OPS program ops (counted before any is built: a barrier task's
instances have a program each), nests deeper than MAX_DEPTH, or (a dict)
contains itself.
"""
import json
import os
from dataclasses import dataclass, field

import numpy as np

from ._checks import check_int, check_name
from ._suggest import did_you_mean
from .program import Program
from .simulator import MAX_SECONDS, Simulator

US_MAX = 2**31 - 1      # rt-app reads every number into a C int
MAX_INSTANCES = 100_000
# What a workload may expand to, checked before any program is built: the
# ops of the programs built -- a task's once, shared by its instances, or
# once per instance for a task that meets at a barrier -- plus one per
# thread.  A million ops take 2-5 s and about 200 MiB to build.
MAX_OPS = 1_000_000
# how deep objects and arrays may nest (rt-app's deepest is 6: the workload,
# tasks, a task, phases, a phase, a timer), and how many values a dict may
# hold, each counted where it appears (a sub-dict shared by two keys twice:
# 25 levels of them would unfold into 2^25); a million take about 4 s
MAX_DEPTH = 32
MAX_VALUES = 1_000_000
# the largest file read: rt-app's files are kilobytes; parsing takes about
# twelve times a file's size in memory (a 257 MB file took 3.2 GB)
MAX_FILE_BYTES = 16 << 20
# a barrier of up to this many threads: each posts every other one's
# channel, so that the last to arrive releases the others at once, as
# rt-app's broadcast does ((n - 1)^2 posts a crossing); a larger one
# gathers at its first thread, which then releases the others (each other
# thread two ops, the first 2 (n - 1) ops a crossing)
BARRIER_ALL_TO_ALL = 64
MAX_THREADS = 10_000_000  # Simulator's max_tasks at most
MAX_CPU = 63            # the simulator's CPUs are 0..63 at most
NAME_BYTES = 31         # Simulator.spawn's longest name
CHANNEL_PREFIX = "rtapp:"

# rt-app's policies (string_to_policy) and the ones simulated
POLICIES = {"SCHED_OTHER": "normal", "SCHED_FIFO": "fifo", "SCHED_RR": "rr"}
NOT_SIMULATED_POLICIES = ("SCHED_IDLE", "SCHED_DEADLINE")
DEFAULT_RT_PRIORITY = 10  # rt-app's DEFAULT_THREAD_PRIORITY; SCHED_OTHER's is nice 0

# global keys read, and those accepted and ignored: they tune rt-app's
# calibration, logging, tracing and memory, nothing a CPU-only simulation has
# ("frag" is a key of rt-app's older examples)
GLOBAL_KEYS = ("duration", "default_policy", "pi_enabled")
GLOBAL_IGNORED = ("calibration", "lock_pages", "logdir", "log_basename", "log_size", "ftrace",
                  "gnuplot", "io_device", "mem_buffer_size", "cumulative_slack", "frag")
TOP_KEYS = ("tasks", "global", "resources")  # resources: rt-app's legacy section, ignored
TASK_KEYS = ("instance", "delay", "loop", "phases", "policy", "priority", "cpus", "taskgroup")
PHASE_KEYS = ("loop", "policy", "priority", "cpus", "taskgroup")
# accepted and ignored in a task or a phase: utilization clamping (a hint to
# frequency selection and task placement: the simulated CPUs have neither),
# SCHED_DEADLINE's parameters (the policy itself is refused) and NUMA memory
# binding
SCHED_IGNORED = ("util_min", "util_max", "dl-runtime", "dl-period", "dl-deadline",
                 "nodes_membind")

# rt-app's events: a key is an event when it starts with one of these
# names (rt-app's obj_is_event), so that "run0", "sleep1", "lock_a" are
# events too; checked in rt-app's order (parse_task_event_data), "runtime"
# before "run"
EVENTS = ("sleep", "runtime", "run", "mem", "iorun", "lock", "unlock", "signal", "broad", "wait",
          "sync", "barrier", "timer", "resume", "suspend", "yield", "fork")
UNSUPPORTED_EVENTS = {
    "mem": "memory writes are not simulated",
    "iorun": "I/O writes are not simulated",
    "suspend": "suspend/resume are not supported",
    "resume": "suspend/resume are not supported",
}
TIMER_KEYS = ("ref", "period", "mode")
COND_KEYS = ("ref", "mutex")


def channel(kind, name, slot=None):
    """The channel that stands for rt-app's resource `name` of `kind`
    ("mutex", "cond" or "barrier"; a barrier has a channel per thread that
    meets at it, numbered by `slot`)."""
    if kind not in ("mutex", "cond", "barrier"):
        raise ValueError(f"kind {kind!r} is not one of ('mutex', 'cond', 'barrier')")
    name = check_name("name", name)
    if (slot is None) != (kind != "barrier"):
        raise TypeError("a barrier's channel takes a slot, and only a barrier's")
    if slot is not None:
        slot = check_int("slot", slot, 0, MAX_THREADS - 1)
    return f"{CHANNEL_PREFIX}{kind}:{name}" + ("" if slot is None else f":{slot}")


@dataclass(frozen=True)
class RtAppThread:
    """One thread rt-app would create at the start: its name (rt-app's
    ``<task>-<index>``, the index counting every thread of the file in
    order, cut to 31 bytes), the task it is an instance of, its program and
    what it is spawned with."""
    name: str
    task: str
    index: int
    program: Program
    policy: str = "normal"
    nice: int = 0
    rt_priority: int = 0
    cpus_allowed: tuple = None

    def spawn_kwargs(self):
        """The keyword arguments of Simulator.spawn (after the program)."""
        return {"name": self.name, "nice": self.nice, "policy": self.policy,
                "rt_priority": self.rt_priority,
                "cpus_allowed": None if self.cpus_allowed is None else list(self.cpus_allowed)}


@dataclass(frozen=True)
class Workload:
    """An rt-app workload as pysched programs (see from_rtapp).

    threads: the threads created at the start, in rt-app's order;
    forked: task name -> the Program a ``fork`` of that task runs;
    duration: seconds (global.duration), None for rt-app's -1 or 0 (run
    until the threads end or for ever: the caller chooses how long);
    mutexes: the channels that are rt-app mutexes, posted once before the
    threads start so that the first lock takes them at once;
    ignored: the keys accepted and ignored, each with where it was;
    source: the file read, or None for a dict."""
    threads: tuple
    forked: dict = field(default_factory=dict)
    duration: float = None
    mutexes: tuple = ()
    ignored: tuple = ()
    source: str = None

    def spawn_into(self, sim):
        """Post each mutex once and spawn every thread into `sim`, a
        Simulator that holds no rt-app workload yet; returns their pids in
        the order of ``threads``."""
        if not isinstance(sim, Simulator):
            raise TypeError(f"spawn_into needs a Simulator, not {type(sim).__name__}")
        if any(ch.startswith(CHANNEL_PREFIX) for ch in sim._channels):
            raise ValueError("this simulator already holds an rt-app workload's channels: "
                             "spawn a workload into a fresh simulator")
        for t in self.threads:
            if t.cpus_allowed is not None and max(t.cpus_allowed) >= sim.cpus:
                raise ValueError(
                    f"tasks.{t.task}: cpus={list(t.cpus_allowed)} names CPU "
                    f"{max(t.cpus_allowed)}, but the simulator has {sim.cpus} "
                    f"CPU{'s' if sim.cpus > 1 else ''} (0..{sim.cpus - 1})")
        for ch in self.mutexes:
            sim.post(ch)
        return [sim.spawn(t.program, **t.spawn_kwargs()) for t in self.threads]

    def simulator(self, preset, **kwargs):
        """A Simulator(preset, **kwargs) with the workload spawned into it,
        at time 0."""
        sim = Simulator(preset, **kwargs)
        self.spawn_into(sim)
        return sim


# ---------------------------------------------------------------- reading the file

class _Obj(list):
    """A JSON object as the list of its (key, value) pairs, in order and
    with repeated keys kept: rt-app's workgen allows a key twice ("run",
    "sleep", "run") and so does this reader, for events."""


def _strip(text, origin):
    """The JSON text without its // and /* */ comments and without the
    commas before a closing } or ] (json-c, rt-app's parser, takes both),
    each replaced by blanks so that a JSON error's line and column stay
    right."""
    out = list(text)
    n = len(text)
    last = -1  # the last significant character kept
    depth = 0  # of objects and arrays: json's parser recurses on each
    i = 0
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            last = j
            i = j + 1
            continue
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                line = text.count("\n", 0, i) + 1
                raise ValueError(f"{origin}: the /* comment at line {line} is not closed")
            j += 2
        else:
            if c in "{[":
                depth += 1
                if depth > MAX_DEPTH:
                    line = text.count("\n", 0, i) + 1
                    raise ValueError(f"{origin}: objects and arrays nest deeper than "
                                     f"{MAX_DEPTH} levels at line {line}")
            elif c in "}]":
                depth -= 1
            if c in "}]" and last >= 0 and out[last] == ",":
                out[last] = " "
            if not c.isspace():
                last = i
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def _from_python(v, path, inside, count):
    """v as json.loads would give it (objects as _Obj).  path: the keys and
    ([index],) that lead to it; inside: the ids of the dicts and lists that
    hold it; count: [the values so far]."""
    count[0] += 1
    if count[0] > MAX_VALUES:
        raise ValueError(f"the workload holds more than {MAX_VALUES:,} values (a dict or list "
                         f"that appears twice counts twice)")
    if not isinstance(v, (dict, list, tuple, np.ndarray)):
        return v
    if id(v) in inside:
        raise ValueError(f"{_path(path)} contains itself")
    if len(inside) == MAX_DEPTH:
        raise ValueError(f"{_path(path)}: objects and arrays nest deeper than {MAX_DEPTH} levels")
    inside.add(id(v))
    if isinstance(v, dict):
        out = _Obj()
        for k, x in v.items():
            path.append(k)
            out.append((k, _from_python(x, path, inside, count)))
            path.pop()
    else:
        out = []
        for i, x in enumerate(v):
            path.append((i,))
            out.append(_from_python(x, path, inside, count))
            path.pop()
    inside.remove(id(v))
    return out


def _path(path):
    return "the workload" + "".join(f"[{k[0]}]" if isinstance(k, tuple) else f".{k}"
                                    for k in path)


def _load(source):
    if isinstance(source, dict):
        return _from_python(source, [], set(), [0]), None
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise ValueError(f"{path}: {size} bytes, more than an rt-app workload may have "
                                 f"(MAX_FILE_BYTES, {MAX_FILE_BYTES})")
            try:
                text = f.read()
            except UnicodeDecodeError as e:
                raise ValueError(f"{path}: not UTF-8 text: {e}") from None
        text = _strip(text, path)
        try:
            return json.loads(text, object_pairs_hook=_Obj), path
        except ValueError as e:
            # a JSONDecodeError, or an int of more digits than int() takes
            raise ValueError(f"{path}: not JSON: {e}") from None
    raise TypeError(f"from_rtapp takes a path or a dict, not {type(source).__name__}")


# ---------------------------------------------------------------- checks naming where

def _obj(where, v):
    if not isinstance(v, _Obj):
        raise TypeError(f"{where} must be an object, not {_jtype(v)}")
    for k, _ in v:
        if not isinstance(k, str):
            raise TypeError(f"{where}: key {k!r} must be a str, not {type(k).__name__}")
    return v


def _jtype(v):
    return ("array" if isinstance(v, list) and not isinstance(v, _Obj)
            else "object" if isinstance(v, _Obj) else type(v).__name__)


def _str(where, key, v):
    if not isinstance(v, str):
        raise TypeError(f"{where}: {key} must be a str, not {_jtype(v)}")
    return check_name(f"{where}: {key}", v)


def _int(where, key, v, lo, hi):
    return check_int(f"{where}: {key}", v, lo, hi)


def _kind(key):
    """The event a key names (rt-app's prefix match), or None."""
    for e in EVENTS:
        if key.startswith(e):
            return e
    return None


def _props(where, obj, known, ignored, ignored_out, events_ok):
    """The object's non-event keys as a dict (each at most once) and its
    events as a list of (key, value) in order; a key neither known nor
    ignored (nor an event, where events_ok) is an error."""
    props, events = {}, []
    for key, v in obj:
        kind = _kind(key)
        if kind is not None and events_ok:
            if kind in UNSUPPORTED_EVENTS:
                raise ValueError(f"{where}: unsupported event {key!r} "
                                 f"({UNSUPPORTED_EVENTS[kind]})")
            events.append((key, kind, v))
        elif key in known:
            if key in props:
                raise ValueError(f"{where}: key {key!r} given twice")
            props[key] = v
        elif key in ignored:
            ignored_out.append(f"{where}.{key}")
        else:
            what = "event or key" if events_ok else "key"
            raise ValueError(f"{where}: unsupported {what} {key!r}"
                             f"{did_you_mean(key, list(known) + list(ignored))}")
    return props, events


def _policy(where, key, v):
    name = _str(where, key, v)
    if name in POLICIES:
        return POLICIES[name]
    if name in NOT_SIMULATED_POLICIES:
        raise ValueError(f"{where}: {key} {name!r} is not simulated (pysched simulates "
                         f"{', '.join(POLICIES)})")
    raise ValueError(f"{where}: unknown {key} {name!r} (rt-app's are "
                     f"{', '.join(list(POLICIES) + list(NOT_SIMULATED_POLICIES))})"
                     f"{did_you_mean(name, POLICIES)}")


def _priority(where, policy, v):
    """(nice, rt_priority) of a priority under policy."""
    if policy == "normal":
        return _int(where, "priority", v, -20, 19), 0
    return 0, _int(where, "priority", v, 1, 99)


def _cpus(where, v):
    if not isinstance(v, list) or isinstance(v, _Obj):
        raise TypeError(f"{where}: cpus must be an array of CPU numbers, not {_jtype(v)}")
    if not v:
        raise ValueError(f"{where}: cpus is empty: a thread needs at least one CPU")
    return tuple(sorted({_int(where, "cpus[]", c, 0, MAX_CPU) for c in v}))


def _taskgroup(where, v):
    name = _str(where, "taskgroup", v)
    if name not in ("", "/"):
        raise ValueError(f"{where}: taskgroup {name!r}: task groups (cgroups) are not simulated")


def _loop(where, v, phase):
    n = _int(where, "loop", v, -1, US_MAX)
    if n == 0 and phase:
        raise ValueError(f"{where}: loop=0 is rt-app's 'for ever' in a phase (its counter "
                         f"never equals 0): write -1")
    return n


# ---------------------------------------------------------------- the parsed file

@dataclass
class _Phase:
    where: str
    loop: int
    events: list          # (key, kind, value) in order
    sched: tuple = None   # (policy, nice, rt_priority) applied as the phase begins
    cpus: tuple = None


@dataclass
class _Task:
    name: str
    where: str
    instance: int
    delay: int
    loop: int
    policy: str
    nice: int
    rt_priority: int
    cpus: tuple
    phases: list


def _event(where, key, kind, v):
    """The event's value, checked: an int (us), a str (a resource or task
    name), a dict for timer/wait/sync, None for yield."""
    if kind in ("run", "runtime", "sleep"):
        return _int(where, key, v, 0, US_MAX)
    if kind in ("lock", "unlock", "signal", "broad", "barrier", "fork"):
        return _str(where, key, v)
    if kind == "yield":
        return None  # rt-app reads nothing of its value
    sub = f"{where}.{key}"
    props, _ = _props(sub, _obj(sub, v), TIMER_KEYS if kind == "timer" else COND_KEYS, (), [],
                      False)
    if kind == "timer":
        mode = _str(sub, "mode", props.get("mode", "relative"))
        if mode not in ("relative", "absolute"):
            raise ValueError(f"{sub}: mode {mode!r} is not 'relative' or 'absolute'")
        return {"ref": _str(sub, "ref", props.get("ref", "unknown")),
                "period": _int(sub, "period", props.get("period", 0), 0, US_MAX),
                "relative": mode == "relative"}
    for k in COND_KEYS:
        if k not in props:
            raise ValueError(f"{sub}: {k} is missing (a {kind} names the condition, ref, and "
                             f"its mutex)")
    return {k: _str(sub, k, props[k]) for k in COND_KEYS}


def _parse_task(name, v, default_policy, ignored):
    where = f"tasks.{name}"
    obj = _obj(where, v)
    has_phases = any(k == "phases" for k, _ in obj)
    props, events = _props(where, obj, TASK_KEYS, SCHED_IGNORED, ignored, True)
    instance = _int(where, "instance", props.get("instance", 1), 0, MAX_INSTANCES)
    delay = _int(where, "delay", props.get("delay", 0), 0, US_MAX)
    policy = (_policy(where, "policy", props["policy"]) if "policy" in props
              else default_policy)
    default_prio = 0 if policy == "normal" else DEFAULT_RT_PRIORITY
    nice, rt = _priority(where, policy, props.get("priority", default_prio))
    cpus = _cpus(where, props["cpus"]) if "cpus" in props else None
    if "taskgroup" in props:
        _taskgroup(where, props["taskgroup"])
    if not has_phases:
        if not events:
            raise ValueError(f"{where}: no event (a task runs its events, or its phases')")
        loop = _loop(where, props.get("loop", -1), True)
        phases = [_Phase(where, loop, [(k, kind, _event(where, k, kind, x))
                                       for k, kind, x in events])]
        return _Task(name, where, instance, delay, 1, policy, nice, rt, cpus, phases)
    if events:
        raise ValueError(f"{where}: event {events[0][0]!r} beside 'phases' (rt-app ignores "
                         f"it): move it into a phase")
    loop = _loop(where, props.get("loop", -1), False)
    pobj = _obj(f"{where}.phases", props["phases"])
    if not pobj:
        raise ValueError(f"{where}.phases: no phase")
    phases, seen, current = [], set(), policy
    for pname, pv in pobj:
        pwhere = f"{where}.phases.{pname}"
        if pname in seen:
            raise ValueError(f"{where}.phases: phase {pname!r} given twice")
        seen.add(pname)
        pprops, pevents = _props(pwhere, _obj(pwhere, pv), PHASE_KEYS, SCHED_IGNORED, ignored,
                                 True)
        if not pevents:
            raise ValueError(f"{pwhere}: no event (rt-app: a phase must have events)")
        sched = None
        if "policy" in pprops or "priority" in pprops:
            # rt-app: a priority without a policy keeps the policy in force
            # when the phase is first entered (it then sticks to the phase)
            if "policy" in pprops:
                current = _policy(pwhere, "policy", pprops["policy"])
            default_prio = 0 if current == "normal" else DEFAULT_RT_PRIORITY
            sched = (current,) + _priority(pwhere, current, pprops.get("priority", default_prio))
        pcpus = _cpus(pwhere, pprops["cpus"]) if "cpus" in pprops else None
        if pcpus is not None and pcpus != cpus:
            raise ValueError(f"{pwhere}: cpus={list(pcpus)} differs from the task's "
                             f"({'all CPUs' if cpus is None else list(cpus)}): a program cannot "
                             f"change its affinity, so a phase's cpus must be the task's")
        if "taskgroup" in pprops:
            _taskgroup(pwhere, pprops["taskgroup"])
        phases.append(_Phase(pwhere, _loop(pwhere, pprops.get("loop", 1), True),
                             [(k, kind, _event(pwhere, k, kind, x)) for k, kind, x in pevents],
                             sched, pcpus))
    return _Task(name, where, instance, delay, loop, policy, nice, rt, cpus, phases)


def _refs(task, kinds):
    """The names the task's events of these kinds refer to."""
    out = set()
    for ph in task.phases:
        for _, kind, v in ph.events:
            if kind in kinds:
                out.add(v["ref"] if isinstance(v, dict) else v)
    return out


# ---------------------------------------------------------------- building the programs

class _OpCount:
    """Stands for a Program while a workload's ops are counted: each method
    is one op, as a Program's is."""

    def __init__(self):
        self.n = 0

    def _op(self, *args, **kwargs):
        self.n += 1
        return self

    run = sleep = timer = wait = post = loop = end = yield_ = fork = setscheduler = nice = _op


class _Builder:
    def __init__(self, tasks):
        self.tasks = tasks
        self.mutexes = {}  # the mutexes' channels, in the order first used
        # threads that may wait on each condition: the instances of the
        # tasks that wait or sync on it, and one per fork event of such a task
        forks = {}
        for t in tasks.values():
            for ph in t.phases:
                for key, kind, v in ph.events:
                    if kind == "fork":
                        if v not in tasks:
                            raise ValueError(f"{ph.where}: {key} names task {v!r}, which is "
                                             f"not in tasks{did_you_mean(v, tasks)}")
                        forks[v] = forks.get(v, 0) + 1
        self.conds = {t.name: _refs(t, ("wait", "sync")) for t in tasks.values()}
        self.waiters = {}
        for t in tasks.values():
            for c in self.conds[t.name]:
                self.waiters[c] = self.waiters.get(c, 0) + t.instance + forks.get(t.name, 0)
        # the threads that meet at each barrier (rt-app counts the users
        # from the file: the instances of the tasks that name it), numbered
        # in the file's order: barrier -> {task: its first thread's number}
        self.barriers, self.barrier_size = {}, {}
        for t in tasks.values():
            for b in sorted(_refs(t, ("barrier",))):
                self.barriers.setdefault(b, {})[t.name] = self.barrier_size.get(b, 0)
                self.barrier_size[b] = self.barrier_size.get(b, 0) + t.instance
        self.forked = {name: Program() for name in forks}
        for name in forks:
            if _refs(tasks[name], ("barrier",)):
                raise ValueError(f"tasks.{name}: a forked task cannot use a barrier (rt-app: "
                                 f"the number of its users must be known from the file)")
        # the events that become no op are dropped, so that a program built
        # reads no more events than it gets ops (MAX_OPS bounds the work)
        for t in tasks.values():
            for ph in t.phases:
                ph.events = [e for e in ph.events if not self._no_op(t, *e)]
        self.at_barrier = {t.name for t in tasks.values() if _refs(t, ("barrier",))}

    def _no_op(self, task, key, kind, v):
        if kind in ("run", "runtime", "sleep"):
            return v == 0
        if kind == "timer":
            return v["period"] == 0
        if kind == "broad":
            return self._broadcasts(task, v) <= 0
        if kind == "barrier":
            return self.barrier_size[v] <= 1
        return False

    def _broadcasts(self, task, cond):
        """The posts of a broad of cond by task: one per other thread that may wait on it."""
        return self.waiters.get(cond, 0) - (cond in self.conds[task.name])

    def ops(self):
        """The ops the programs will have, plus one per thread (see
        MAX_OPS), counted without building them."""
        def count(task, instance):
            c = _OpCount()
            self.program(task, c, instance)
            return c.n

        total = 0
        for t in self.tasks.values():
            if t.instance == 0 and t.name not in self.forked:
                total += count(t, None)
            elif t.instance:
                total += t.instance + count(t, 0)
                if t.name in self.at_barrier and t.instance > 1:
                    # a barrier's first thread may differ from the others;
                    # those are alike
                    total += (t.instance - 1) * count(t, 1)
        for name in self.forked:
            c = _OpCount()
            self.fork_program(self.tasks[name], c)
            total += c.n
        return total

    def mutex(self, name):
        ch = channel("mutex", name)
        self.mutexes.setdefault(ch)
        return ch

    def program(self, task, prog=None, instance=None):
        """task's program (into prog); instance: which of its threads, for
        the barriers (None: a forked thread, which names none)."""
        prog = Program() if prog is None else prog
        if task.delay:
            # rt-app sleeps to the start + delay and its timers count from
            # there: a timer on the task's reference, absolute
            prog.timer(task.delay, relative=False)
        if task.loop == 0:
            return prog
        uses_rt = task.policy != "normal" or any(
            ph.sched and ph.sched[0] != "normal" for ph in task.phases)
        self._open(prog, task.loop)
        for ph in task.phases:
            if ph.sched is not None:
                policy, nice, rt = ph.sched
                if policy == "normal":
                    if uses_rt:
                        prog.setscheduler("normal")
                    prog.nice(nice)
                else:
                    prog.setscheduler(policy, rt)
            self._open(prog, ph.loop)
            for key, kind, v in ph.events:
                self._event(prog, task, ph, key, kind, v, instance)
            self._close(prog, ph.loop, ph.where)
        self._close(prog, task.loop, task.where)
        return prog

    @staticmethod
    def _open(prog, n):
        if n == -1:
            prog.loop()
        elif n > 1:
            prog.loop(n)

    @staticmethod
    def _close(prog, n, where):
        if n == -1 or n > 1:
            try:
                prog.end()
            except ValueError as e:
                raise ValueError(f"{where}: loops for ever and {e}") from None

    def _event(self, prog, task, ph, key, kind, v, instance):
        if kind in ("run", "runtime"):
            if v:
                prog.run(us=v)
        elif kind == "sleep":
            if v:
                prog.sleep(us=v)
        elif kind == "timer":
            if v["period"]:
                prog.timer(v["period"], relative=v["relative"])
        elif kind == "lock":
            prog.wait(self.mutex(v))
        elif kind == "unlock":
            prog.post(self.mutex(v))
        elif kind == "signal":
            prog.post(channel("cond", v))
        elif kind == "broad":
            n = self._broadcasts(task, v)
            if n > 0:
                self._repeat(prog, n, lambda: prog.post(channel("cond", v)))
        elif kind in ("wait", "sync"):
            cond, mutex = channel("cond", v["ref"]), self.mutex(v["mutex"])
            if kind == "sync":
                prog.post(cond)
            prog.post(mutex).wait(cond).wait(mutex)  # pthread_cond_wait
        elif kind == "barrier" and instance is not None:
            n, me = self.barrier_size[v], self.barriers[v][task.name] + instance
            mine = channel("barrier", v, me)
            if n <= BARRIER_ALL_TO_ALL:
                self._post_others(prog, v, n, me)
                self._repeat(prog, n - 1, lambda: prog.wait(mine))
            elif me == 0:
                self._repeat(prog, n - 1, lambda: prog.wait(mine))
                self._post_others(prog, v, n, me)
            else:
                prog.post(channel("barrier", v, 0)).wait(mine)
        elif kind == "yield":
            prog.yield_()
        elif kind == "fork":
            target = self.tasks[v]
            if target.cpus != task.cpus:
                raise ValueError(
                    f"{ph.where}: {key} of task {v!r}, whose cpus "
                    f"({'all' if target.cpus is None else list(target.cpus)}) differ from "
                    f"{task.name!r}'s ({'all' if task.cpus is None else list(task.cpus)}): a "
                    f"forked thread keeps its parent's affinity (a program cannot change it)")
            prog.fork(self.forked[v])

    @staticmethod
    def _post_others(prog, barrier, n, me):
        """Post the channel of each thread of the barrier but me (a count
        adds them up without naming them)."""
        if isinstance(prog, _OpCount):
            prog.n += n - 1
            return
        for k in range(n):
            if k != me:
                prog.post(channel("barrier", barrier, k))

    @staticmethod
    def _repeat(prog, n, op):
        if n > 2:
            prog.loop(n)
            op()
            prog.end()
        else:
            for _ in range(n):
                op()

    def fork_program(self, task, prog=None):
        """What a fork of task runs: its own policy and nice first (a
        forked thread starts as a copy of its parent), then its program."""
        prog = self.forked[task.name] if prog is None else prog
        if task.policy == "normal":
            prog.setscheduler("normal").nice(task.nice)
        else:
            prog.setscheduler(task.policy, task.rt_priority)
        return self.program(task, prog)


def _thread_name(task, index):
    name = f"{task}-{index}"
    raw = name.encode()
    if len(raw) > NAME_BYTES:
        name = raw[:NAME_BYTES].decode(errors="ignore")
    return name


def from_rtapp(path_or_dict):
    """An rt-app workload (a JSON file, comments allowed, or the dict it
    holds) as a :class:`Workload`; see the module docstring and
    docs/guide/interbench-rtapp.md for what is read and how it is simulated."""
    root, path = _load(path_or_dict)
    root = _obj("the workload", root)
    ignored = []
    top, _ = _props("the workload", root, TOP_KEYS, (), ignored, False)
    if "resources" in top:
        ignored.append("resources")
    if "tasks" not in top:
        raise ValueError("the workload has no 'tasks'")
    duration, default_policy = None, "normal"
    if "global" in top:
        g, _ = _props("global", _obj("global", top["global"]), GLOBAL_KEYS, GLOBAL_IGNORED,
                      ignored, False)
        seconds = _int("global", "duration", g.get("duration", -1), -1, MAX_SECONDS)
        duration = seconds if seconds > 0 else None
        if "default_policy" in g:
            default_policy = _policy("global", "default_policy", g["default_policy"])
        pi = g.get("pi_enabled", False)
        if not isinstance(pi, (bool, np.bool_)):
            raise TypeError(f"global: pi_enabled must be a bool, not {_jtype(pi)}")
        if pi:
            raise ValueError("global: pi_enabled=true: priority inheritance is not simulated")
    tobj = _obj("tasks", top["tasks"])
    if not tobj:
        raise ValueError("tasks: no task")
    tasks = {}
    for name, v in tobj:
        if name in tasks:
            raise ValueError(f"tasks: task {name!r} given twice")
        tasks[name] = _parse_task(name, v, default_policy, ignored)
    b = _Builder(tasks)
    ops = b.ops()
    if ops > MAX_OPS:
        raise ValueError(f"the workload expands to {ops:,} program ops (one per thread "
                         f"included), more than the {MAX_OPS:,} allowed (MAX_OPS): fewer "
                         f"instances or events")
    threads, index = [], 0
    for t in tasks.values():
        shared = None
        if t.instance == 0 and t.name not in b.forked:
            b.program(t)  # never run, but checked as the others are
        for i in range(t.instance):
            if t.name in b.at_barrier:
                prog = b.program(t, instance=i)
            else:
                if shared is None:
                    shared = b.program(t, instance=i)
                prog = shared
            threads.append(RtAppThread(_thread_name(t.name, index), t.name, index, prog,
                                       t.policy, t.nice, t.rt_priority, t.cpus))
            index += 1
    for name in b.forked:
        b.fork_program(tasks[name])
    if not threads:
        raise ValueError("tasks: no thread to start (every task has instance 0)")
    return Workload(tuple(threads), dict(b.forked), duration, tuple(b.mutexes), tuple(ignored),
                    path)
