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
from dataclasses import dataclass, field

from .. import groups as _groups
from ..program import Program
from ..simulator import Simulator
from .rtapp_build import Builder, channel, thread_name  # noqa: F401
from .rtapp_read import (BARRIER_ALL_TO_ALL, CHANNEL_PREFIX, MAX_CPU, MAX_DEPTH,  # noqa: F401
                         MAX_FILE_BYTES, MAX_INSTANCES, MAX_OPS, MAX_THREADS, MAX_VALUES,
                         NAME_BYTES, US_MAX, read)


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
    taskgroup: str = None

    def spawn_kwargs(self):
        """The keyword arguments of Simulator.spawn (after the program); a
        thread with a taskgroup names it as `group`, which must exist in the
        simulator (spawn_into makes it)."""
        kwargs = {"name": self.name, "nice": self.nice, "policy": self.policy,
                  "rt_priority": self.rt_priority,
                  "cpus_allowed": None if self.cpus_allowed is None else list(self.cpus_allowed)}
        if self.taskgroup is not None:
            kwargs["group"] = self.taskgroup
        return kwargs


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
        # rt-app's taskgroups: nested groups of the default 1024 shares
        # (rt-app makes missing cgroups and keeps existing ones)
        for path in sorted({t.taskgroup for t in self.threads} - {None, "/"}):
            _groups.make(sim, path, _groups.NICE_0_SHARES, None, exist_ok=True)
        for ch in self.mutexes:
            sim.post(ch)
        return [sim.spawn(t.program, **t.spawn_kwargs()) for t in self.threads]

    def simulator(self, preset, **kwargs):
        """A Simulator(preset, **kwargs) with the workload spawned into it,
        at time 0."""
        sim = Simulator(preset, **kwargs)
        self.spawn_into(sim)
        return sim


def from_rtapp(path_or_dict):
    """An rt-app workload (a JSON file, comments allowed, or the dict it
    holds) as a :class:`Workload`; see the module docstring and
    docs/guide/interbench-rtapp.md for what is read and how it is simulated."""
    tasks, duration, ignored, path = read(path_or_dict)
    b = Builder(tasks)
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
            threads.append(RtAppThread(thread_name(t.name, index), t.name, index, prog,
                                       t.policy, t.nice, t.rt_priority, t.cpus, t.taskgroup))
            index += 1
    for name in b.forked:
        b.fork_program(tasks[name])
    if not threads:
        raise ValueError("tasks: no thread to start (every task has instance 0)")
    return Workload(tuple(threads), dict(b.forked), duration, tuple(b.mutexes), tuple(ignored),
                    path)
