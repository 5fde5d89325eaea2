"""rt-app's JSON workload format read and checked (pysched.workloads.rtapp
says what is read; docs/guide/interbench-rtapp.md how it is simulated):
the limits a file is held to, the keys and events rt-app takes, and read(),
which turns a file or a dict into its tasks, each with its phases of events,
or raises naming the key and where it is."""
import json
import os
from dataclasses import dataclass

import numpy as np

from .._checks import check_int, check_name
from .._suggest import did_you_mean
from .._core import MAX_CPUS
from ..simulator import MAX_SECONDS

# the package's own: no name here is part of the public API
__all__ = []

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
MAX_CPU = MAX_CPUS - 1  # the simulator's CPUs are 0..1023 at most
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


def _taskgroup(where, v, policy):
    """rt-app's taskgroup: a cgroup path in the cpu controller ("/a/b"),
    made as nested task groups of 1024 shares (pysched.groups); "" is no
    taskgroup (None), "/" the root group.  rt-app takes it for SCHED_OTHER
    threads only."""
    name = _str(where, "taskgroup", v)
    if not name:
        return None
    if not name.startswith("/") or any(p in (".", "..") for p in name.split("/")):
        raise ValueError(f"{where}: taskgroup {name!r} is not a cgroup path such as '/tg1/tg2'")
    if policy != "normal":
        raise ValueError(f"{where}: taskgroup {name!r} for a {policy} thread: rt-app takes "
                         f"taskgroups for SCHED_OTHER threads only")
    return "/" + "/".join(p for p in name.split("/") if p)


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
    taskgroup: str = None  # the cgroup path it runs in, None: the root group


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
    taskgroup = _taskgroup(where, props["taskgroup"], policy) if "taskgroup" in props else None
    if not has_phases:
        if not events:
            raise ValueError(f"{where}: no event (a task runs its events, or its phases')")
        loop = _loop(where, props.get("loop", -1), True)
        phases = [_Phase(where, loop, [(k, kind, _event(where, k, kind, x))
                                       for k, kind, x in events])]
        return _Task(name, where, instance, delay, 1, policy, nice, rt, cpus, phases, taskgroup)
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
        if "taskgroup" in pprops or (taskgroup and current != "normal"):
            group = _taskgroup(pwhere, pprops.get("taskgroup", taskgroup), current)
            # a first phase's taskgroup is where the thread starts; moving
            # later (rt-app writes the thread to the new group's tasks file
            # as the phase begins) is not simulated
            if not phases and taskgroup is None:
                taskgroup = group
            elif group != taskgroup:
                raise ValueError(f"{pwhere}: taskgroup {group!r} differs from the one the thread "
                                 f"runs in ({taskgroup or '/'}): a thread cannot change groups "
                                 f"between phases here")
        phases.append(_Phase(pwhere, _loop(pwhere, pprops.get("loop", 1), True),
                             [(k, kind, _event(pwhere, k, kind, x)) for k, kind, x in pevents],
                             sched, pcpus))
    return _Task(name, where, instance, delay, loop, policy, nice, rt, cpus, phases, taskgroup)


def refs(task, kinds):
    """The names the task's events of these kinds refer to."""
    out = set()
    for ph in task.phases:
        for _, kind, v in ph.events:
            if kind in kinds:
                out.add(v["ref"] if isinstance(v, dict) else v)
    return out


def read(path_or_dict):
    """The workload's tasks as read and checked (name -> its parse), its
    duration in seconds (None: until the threads end), the keys accepted
    and ignored, and the file read (None for a dict)."""
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
    return tasks, duration, ignored, path
