"""The conformance kit: the checks the project runs on its own policies,
for any policy -- a built-in preset, a registered name, or a
pysched.Policy subclass of yours::

    report = pysched.policy.testing.check_policy(MyPolicy)
    print(report)           # one line per check: ok, or what failed
    report.raise_if_failed()

Each check runs a workload that exercises every program op (run, sleep, io,
wait/post, loop, fork, exit, yield, nice, setscheduler), an interrupt
source, renice / set_affinity / setscheduler from Python, on one CPU and on
two:

- ``invariants``: the engine's and the policy's invariants (its ``check``
  hook) hold after every instant;
- ``progress``: no task waits runnable through the second half of the run
  without ever having had the CPU, and time is accounted (CPU + wait +
  sleep = lifetime);
- ``determinism``: the same seed gives the same event log, another seed
  another;
- ``copy`` and ``pickle``: a branch taken mid-run continues exactly like the
  original (event log, statistics, latencies);
- ``bad input``: invalid calls raise pysched's exceptions and leave the
  simulator as it was.

A sched_ext scheduler (a ``pysched.ext.Scheduler``, or one written in the
C dialect) is also run with ``Simulator.ext_strict``: its watchdog's
timeout cut to ``ext_timeout_ms`` and a double insertion in one
``ops.dispatch`` an error.  The error exit that ends it, if any, fails one
of these checks, with the op, the task and the time:

- ``stall``: the watchdog found a task runnable and not run for longer
  than the timeout, waiting on a DSQ;
- ``undispatched``: the same for a task that ops.enqueue took and kept,
  never inserting it into a DSQ (the time it was taken is given);
- ``affinity``: an insertion into the local DSQ of a CPU outside the
  task's affinity;
- ``double insertion``: a task inserted twice by one op;
- ``scx error``: any other error exit (a bad DSQ, a kfunc called from an
  op that may not call it, ``scx_bpf_error`` ...).

These would otherwise go unnoticed: after an error exit the fair class
runs the tasks, and the other checks pass on it.
"""
import pickle
from dataclasses import dataclass, field

import numpy as np

from .._checks import check_int, check_number
from .._core import MAX_CPUS, Error
from ..dist import exponential, normal, uniform
from ..program import Program
from .. import ext as _ext
from .. import programs
from ..simulator import Simulator
from .registry import resolve


def busy_machine(policy, seed=11, cpus=2, **kwargs):
    """A machine under `policy` whose workload exercises every op: a
    compile (fork, io, exit), an X server and clients (wait/post with sync
    wakeups), a fidget (yield, nice), an RT task woken by a source, a task
    that changes its scheduling class and finally exits."""
    sim = Simulator(policy, cpus=cpus, seed=seed, **kwargs)
    cpus = sim.cpus
    sim.spawn(programs.kernel_compile(jobs=3), name="make")
    sim.spawn(programs.x_server(), name="X")
    for i in range(2):
        sim.spawn(programs.x_client(), name=f"client{i}")
    sim.spawn(Program().loop().run(ms=normal(3, 1)).yield_().nice(5).run(ms=2).nice(0)
              .sleep(ms=exponential(10)).end(), name="fidget")
    sim.spawn(Program().loop().wait("irq").run(us=300).end(), name="rr", policy="rr",
              rt_priority=20)
    sim.spawn(Program().run(ms=50).setscheduler("fifo", 10).run(ms=5).setscheduler("normal")
              .sleep(ms=20).loop(3).io(ms=uniform(1, 4)).run(ms=1).end().exit(), name="mover")
    sim.source("irq", poisson_ms=7)
    return sim


def _poke(sim):
    """Calls from Python between steps: renice, affinity, scheduling class."""
    sim.renice(2, -5)
    sim.set_affinity(3, [sim.cpus - 1])
    sim.setscheduler(4, "rr", 5)
    sim.setscheduler(4, "normal")


def _run(policy, seed, cpus, seconds, **kwargs):
    sim = busy_machine(policy, seed=seed, cpus=cpus, **kwargs)
    sim.run(seconds=seconds / 2)
    _poke(sim)
    sim.run(seconds=seconds / 2)
    return sim


def _same(a, b):
    return (np.array_equal(a.stats(), b.stats()) and a.now_ns == b.now_ns
            and a.events().tobytes() == b.events().tobytes()
            and np.array_equal(a.latencies(), b.latencies()))


def _check_invariants(policy, cpus, seconds):
    sim = _run(policy, 11, cpus, seconds, debug=True)
    sim.check()


def _check_progress(policy, cpus, seconds):
    sim = _run(policy, 11, cpus, seconds)
    st = sim.stats()
    never_ran = (st["cpu_ns"] == 0) & (st["nvcsw"] + st["nivcsw"] == 0)
    old = st["start_ns"] <= sim.now_ns - seconds * 1e9 / 2
    starved = st[never_ran & old & (st["exit_ns"] < 0) & (st["state"] == 0)]
    assert not len(starved), f"tasks never ran though runnable: pids {starved['pid'].tolist()}"
    life = np.where(st["exit_ns"] < 0, sim.now_ns, st["exit_ns"]) - st["start_ns"]
    acc = st["cpu_ns"] + st["wait_ns"] + st["sleep_ns"]
    bad = st[acc != life]
    assert not len(bad), f"time not accounted for pids {bad['pid'].tolist()}"
    assert sim.counters()["forks"] > 0 and st["nr_wakeups"].sum() > 0


def _check_determinism(policy, cpus, seconds):
    logs = [_run(policy, seed, cpus, seconds, record="events").events().tobytes()
            for seed in (11, 11, 12)]
    assert logs[0] == logs[1], "the same seed gave two different event logs"
    assert logs[0] != logs[2], "two seeds gave the same event log"


def _branch(policy, cpus, seconds, make_branch):
    sim = busy_machine(policy, cpus=cpus, record="events")
    sim.run(seconds=seconds / 2)
    branch = make_branch(sim)
    for s in (sim, branch):
        _poke(s)
        s.run(seconds=seconds / 2)
    assert _same(sim, branch), "the branch diverged from its original"


def _check_copy(policy, cpus, seconds):
    _branch(policy, cpus, seconds, lambda s: s.copy())


def _check_pickle(policy, cpus, seconds):
    _branch(policy, cpus, seconds, lambda s: pickle.loads(pickle.dumps(s)))


def _check_bad_input(policy, cpus, seconds):
    sim = busy_machine(policy, cpus=cpus, record="events")
    sim.run(seconds=seconds / 4)
    before = sim.copy()
    calls = [lambda: sim.renice(1, 20), lambda: sim.renice(10**6, 0),
             lambda: sim.set_affinity(1, []), lambda: sim.setscheduler(1, "fifo", 0),
             lambda: sim.spawn(programs.cpu_hog(), nice=-21),
             lambda: sim.spawn(programs.cpu_hog(), cpu=cpus),
             lambda: sim.set_param("no such parameter", 1)]
    for call in calls:
        try:
            call()
        except (Error, ValueError, KeyError, TypeError):
            pass
        else:
            raise AssertionError(f"an invalid call was accepted: {call.__code__.co_firstlineno}")
    for s in (sim, before):
        s.run(seconds=seconds / 4)
    assert _same(sim, before), "a refused call changed the simulator"


CHECKS = {
    "invariants": _check_invariants,
    "progress": _check_progress,
    "determinism": _check_determinism,
    "copy": _check_copy,
    "pickle": _check_pickle,
    "bad input": _check_bad_input,
}


EXT_CHECKS = ("stall", "undispatched", "affinity", "double insertion", "scx error")


def _ext_exit(policy, cpus, seconds, timeout_ms):
    """The exit of a sched_ext scheduler's run of the busy machine under
    ext_strict, or None when `policy` is not a sched_ext scheduler."""
    sim = busy_machine(policy, cpus=cpus)
    if sim.ext_exit_info is None:
        return None
    sim.ext_strict(timeout_ms)
    sim.run(seconds=seconds / 2)
    _poke(sim)
    sim.run(seconds=seconds / 2)
    return sim.ext_exit_info


def _ext_failure(info):
    """What an error exit says, with where the task it names was."""
    if info.problem == "undispatched":
        return (f"{info.msg}; ops.enqueue took pid {info.pid} at t={info.held_since_ns} ns "
                "and never inserted it into a DSQ")
    if info.kind == _ext.SCX_EXIT_ERROR_STALL and info.dsq_id is not None:
        return f"{info.msg}; pid {info.pid} waited on DSQ {info.dsq_id:#x}"
    return info.msg


def _ext_results(policy, cpus, seconds, timeout_ms, names, explicit):
    try:
        info = _ext_exit(policy, cpus, seconds, timeout_ms)
    except Exception as e:  # reported as every check's failure
        return [Result(n, cpus, f"{type(e).__name__}: {e}") for n in names]
    if info is None:
        if explicit:
            raise ValueError(f"the checks {names} are for sched_ext schedulers; "
                             f"{policy!r} is not one")
        return []
    problem = {"error": "scx error"}.get(info.problem, info.problem)
    return [Result(n, cpus, _ext_failure(info) if n == problem else None) for n in names]


@dataclass
class Result:
    check: str
    cpus: int
    error: str = None   # None: passed

    def __str__(self):
        return f"{self.check} ({self.cpus} CPU{'s' * (self.cpus > 1)}): {self.error or 'ok'}"


@dataclass
class Report:
    """What check_policy found: a Result per check and CPU count."""
    policy: str
    results: list = field(default_factory=list)

    @property
    def failures(self):
        return [r for r in self.results if r.error]

    def __bool__(self):
        return not self.failures

    def __str__(self):
        return "\n".join([f"conformance of {self.policy}:"] + [f"  {r}" for r in self.results])

    def raise_if_failed(self):
        if self.failures:
            raise AssertionError(str(self))


def check_policy(policy, *, cpus=(1, 2), seconds=2.0, checks=None, ext_timeout_ms=500):
    """Run the conformance checks (all, or those named in `checks`) on
    `policy` -- a preset name, a registered Python policy's name or a
    pysched.Policy subclass -- on each CPU count; returns a Report.  A
    sched_ext scheduler also gets EXT_CHECKS, its watchdog's timeout cut
    to ext_timeout_ms (1..30000)."""
    cpus = [check_int("cpus", n, 1, MAX_CPUS) for n in cpus]
    seconds = check_number("seconds", seconds, 0.01, 10**6)
    ext_timeout_ms = check_int("ext_timeout_ms", ext_timeout_ms, 1, 30000)
    known = list(CHECKS) + list(EXT_CHECKS)
    names = known if checks is None else list(checks)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise KeyError(f"unknown checks {unknown}; the checks: {known}")
    ext_names = [n for n in names if n in EXT_CHECKS]
    names = [n for n in names if n in CHECKS]
    label = resolve(policy)[0] if not isinstance(policy, type) else policy.__name__
    report = Report(label)
    for n in cpus:
        for name in names:
            try:
                CHECKS[name](policy, n, seconds)
            except Exception as e:  # every failure is reported, none stops the others
                report.results.append(Result(name, n, f"{type(e).__name__}: {e}"))
            else:
                report.results.append(Result(name, n))
        if ext_names:
            report.results += _ext_results(policy, n, seconds, ext_timeout_ms, ext_names,
                                           explicit=checks is not None)
    return report
