"""What the Python API accepts: any integer-like value where an int is
expected (NumPy integers, anything with __index__), but never a bool or a
float there; and whatever it accepts, the compiled core is handed plain
Python ints, floats, bools and strs only."""
import dataclasses
import functools
import inspect
import os
import re
import tempfile

import numpy as np
import pytest

import pysched as ps
from pysched import Program, _core, demo, realkernel
from pysched.realkernel import groups as realkernel_groups

PRESET = "linux-2.5.65"
HOG = ps.programs.cpu_hog


class Index:
    """Integer-like but not an int: it has only __index__."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v

    def __repr__(self):
        return f"Index({self.v})"


def _fits(t):
    info = np.iinfo(t)
    return lambda v: t(v) if info.min <= v <= info.max else np.int64(v)


INT_LIKES = {
    "np.int64": np.int64,
    "np.int32": np.int32,
    "np.uint64": _fits(np.uint64),  # np.int64 for the values it cannot hold
    "np.uint8": _fits(np.uint8),
    "__index__": Index,
}
NOT_INTS = {
    "float": float,
    "np.float64": np.float64,
    "bool": lambda v: v != 0,
    "np.bool_": lambda v: np.bool_(v != 0),
}


# ---------------------------------------------------------------- the core sees plain values only

PLAIN = (int, float, bool, str, bytes, type(None), _core.PolicyDef)  # a Python policy's table


def assert_plain(x, where):
    if type(x) in (tuple, list):
        for y in x:
            assert_plain(y, where)
    elif type(x) is dict:
        for k, v in x.items():
            assert_plain(k, where)
            assert_plain(v, where)
    elif not isinstance(x, ps.Policy):  # a Python policy's instance, which it calls back
        assert type(x) in PLAIN, f"{where} was handed {type(x).__name__} {x!r}"


class SimSpy:
    """A _core.Sim that checks the arguments of every call."""

    real = _core.Sim
    restore = staticmethod(_core.Sim.restore)

    def __init__(self, *args, **kwargs):
        assert_plain((args, kwargs), "Sim()")
        self._sim = self.real(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._sim, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            if name == "table_fill":
                # not an input: the array stats() made for the core to fill,
                # of the size table_shape gave
                (out,) = args
                assert type(out) is np.ndarray and out.flags.writeable and not kwargs
            else:
                assert_plain((args, kwargs), f"Sim.{name}")
            return attr(*args, **kwargs)

        return call


def _spied(fn, name):
    def call(*args, **kwargs):
        assert_plain((args, kwargs), name)
        return fn(*args, **kwargs)
    return call


@pytest.fixture(autouse=True)
def core_spy(monkeypatch):
    """Every call into the compiled core made by a test of this file is
    checked for non-plain arguments."""
    monkeypatch.setattr(_core, "Sim", SimSpy)
    for name in ("formula", "derived", "policy_info"):
        monkeypatch.setattr(_core, name, _spied(getattr(_core, name), name))


def test_the_spy_catches_a_numpy_int_handed_to_the_core():
    with pytest.raises(AssertionError, match="Sim.step was handed int64"):
        ps.Simulator(PRESET)._core.step(np.int64(1))
    with pytest.raises(AssertionError, match="formula was handed int64"):
        _core.formula(PRESET, "task_timeslice", 0, {}, (np.int64(120),))


# ---------------------------------------------------------------- every entry point taking an int

def after(call, **sim_kwargs):
    """What call(sim) returns on a small running machine (2 CPUs, a hog and
    a sleeper), and what the machine does after it."""
    sim = ps.Simulator(PRESET, cpus=2, **sim_kwargs)
    sim.spawn(HOG(), name="hog")
    sim.spawn(ps.programs.interactive(1, 3), name="sleeper")
    sim.run(seconds=0.01)
    result = call(sim)
    sim.run(seconds=0.05)
    return (result, sim.params, sim.now_ns, sim.stats().tobytes(), sim.counters(),
            sim.latencies().tobytes())


def after_fair(call):
    """after(call) on a fair preset's machine (task groups are theirs)."""
    sim = ps.Simulator("linux-6.12-eevdf", cpus=2)
    sim.spawn(HOG(), name="hog")
    sim.spawn(ps.programs.interactive(1, 3), name="sleeper")
    sim.run(seconds=0.01)
    result = call(sim)
    sim.run(seconds=0.05)
    return result, sim.stats().tobytes(), sim.group_stats().tobytes()


def spawned(program):
    """What a machine does with `program` spawned on it."""
    return after(lambda s: s.spawn(program))


def built(**kwargs):
    """What a machine built with kwargs does."""
    sim = ps.Simulator(PRESET, **kwargs)
    sim.spawn(ps.programs.interactive(1, 3))
    sim.spawn(HOG())
    sim.run(seconds=0.05)
    return (sim.cpus, sim.hz, sim.seed, sim.params, sim.stats().tobytes(), sim.counters(),
            sim._samples().tobytes() if sim.record == "series" else None)


def after_ext(call):
    """after(call) on a machine under a sched_ext scheduler."""
    sim = ps.Simulator(ps.ext.examples.Simple, cpus=2)
    sim.spawn(HOG(), name="hog")
    sim.run(seconds=0.01)
    result = call(sim)
    sim.run(seconds=0.3)
    return result, sim.stats().tobytes(), tuple(sim.ext_exit_info)


def with_policy(I, param=None):
    """What a Python policy does when every int it hands the engine is
    wrapped in I: a round robin on 2 CPUs whose tick asks the engine by
    wrapped cpu and pid."""
    class Wrapped(ps.Policy):
        name = "wrapped"
        params = {"slice": param or ps.Param(5, 1, 100)}
        rq_fields = ("turns",)

        def setup(self):
            self.q = [[] for _ in range(self.cpus)]

        def task_spawn(self, p):
            p.time_slice = I(self.slice)
            self.q[p.cpu].append(p.pid)
            return self.curr(I(p.cpu)).is_idle

        wakeup = lambda self, p, waker, sync: self.task_spawn(p)
        deactivate = lambda self, p: self.q[p.cpu].remove(p.pid)

        def tick(self, cpu, p):
            assert self.idle(I(cpu)).is_idle and self.curr(I(cpu)).pid == p.pid
            if not p.is_idle:
                p.time_slice = I(self.task(I(p.pid)).time_slice - 1)
                if p.time_slice == 0:
                    self.log_event("expire", I(cpu), I(p.pid), other=I(p.pid), prio=I(p.prio),
                                   value=I(1))
                    self.q[cpu].append(self.q[cpu].pop(0))
                    self.rq(I(cpu)).turns = I(self.rq(cpu).turns + 1)
                    p.time_slice = I(self.slice)
                    self.resched(I(cpu))

        def pick_next(self, cpu):
            return I(self.q[cpu][0]) if self.q[cpu] else None

    sim = ps.Simulator(Wrapped, cpus=2)
    for _ in range(3):
        sim.spawn(HOG())
    sim.spawn(ps.programs.interactive(1, 3))
    sim.run(seconds=0.1)
    return sim.stats().tobytes(), sim.cpu_stats().tobytes(), sim.params


def framed(call):
    """What a machine does with call(sim), a DataFrame, compared as plain
    lists (skipped without pandas, which frames need)."""
    pytest.importorskip("pandas")
    return after(lambda s: call(s).reset_index().to_dict("split"))


def drawn(ax):
    """What an Axes shows, as plain lists: its lines, bars, collections'
    paths, texts and tick labels."""
    return ([ln.get_xydata().tolist() for ln in ax.get_lines()],
            [p.get_bbox().bounds for p in ax.patches],
            [[path.vertices.tolist() for path in c.get_paths()] for c in ax.collections],
            [t.get_text() for t in ax.texts + ax.get_yticklabels()])


def plotted(draw, **sim_kwargs):
    """What a machine does with draw(sim, ax), an Axes compared as plain
    lists (skipped without matplotlib, which plots need)."""
    figure = pytest.importorskip("matplotlib.figure")
    return after(lambda s: drawn(draw(s, figure.Figure().add_subplot())), **sim_kwargs)


def as_lists(result):
    """A result -- a dataclass, a (named) tuple or an array, nested -- as
    plain lists and dicts, NaN as None, to compare with ==."""
    if dataclasses.is_dataclass(result):
        return {f.name: as_lists(getattr(result, f.name)) for f in dataclasses.fields(result)}
    if isinstance(result, (tuple, list)):
        return [as_lists(v) for v in result]
    if isinstance(result, np.ndarray):
        return as_lists(result.tolist())
    return None if isinstance(result, float) and result != result else result


def tabled(table):
    """A metrics table (a DataFrame) as plain lists, NaN as None, to
    compare with ==."""
    split = table.reset_index().to_dict("split")
    split["data"] = [[None if isinstance(v, float) and v != v else v for v in row]
                     for row in split["data"]]
    return split


def rtapp(I):
    """What a machine does with an rt-app workload whose ints are I's."""
    w = ps.workloads.from_rtapp({"global": {"duration": I(1)}, "tasks": {
        "t": {"instance": I(2), "loop": I(-1), "delay": I(500), "priority": I(5), "cpus": [I(1)],
              "phases": {"p": {"loop": I(3), "run": I(1000), "sleep": I(300), "fork": "f",
                               "timer": {"ref": "r", "period": I(5000)}}}},
        "f": {"instance": I(0), "policy": "SCHED_RR", "priority": I(3), "cpus": [I(1)],
              "loop": I(2), "run": I(100)}}})
    return after(lambda s: (w.duration, w.spawn_into(s)))


@functools.cache
def small_trace():
    """A trace of a hog and a sleeper (sim.export_ftrace read back)."""
    sim = ps.Simulator(PRESET, record="events")
    sim.spawn(HOG(), name="hog")
    sim.spawn(ps.programs.interactive(1, 3), name="sleeper")
    sim.run(seconds=0.2)
    path = os.path.join(tempfile.mkdtemp(), "small.txt")
    sim.export_ftrace(path)
    return ps.trace.load(path)


def replayed(w):
    """What a TraceWorkload replays, as plain values."""
    return w.cpus, w.duration, w.wake_edges, [repr(t) for t in w.tasks]


# two periodic tasks' records (pysched.metrics.PERIODIC_DTYPE), pid 1 a game
PERIODIC = np.array([(0, 100_000_000, 5_000_000, 105_000_000, 0, 1, 0, 0, 0),
                     (0, 50_000_000, 1_500_000, 3_000_000, 0, 2, 1, 0, 0),
                     (50_000_000, 100_000_000, 0, -1, 50_000_000, 2, 0, 1, 1)],
                    dtype=ps.metrics.PERIODIC_DTYPE)

# two tasks' sample times (ns) and cpu_ns, prio: 30 s sampled every 10 ms,
# the first running 3 of every 4 ticks
TIMES = np.arange(3001) * 10_000_000
CPU = np.stack([TIMES * 3 // 4, TIMES // 4], axis=1)
PRIO = np.tile([145, 150], (3001, 1)) + (np.arange(3001) % 50 < 10)[:, None]


# (entry point, kind of its wrapped arguments: "int" or "number", call of I,
# where I wraps each int argument of the call)
ENTRY_POINTS = [
    ("simulator.Simulator", "int", lambda I: built(cpus=I(2))),
    ("simulator.Simulator", "int", lambda I: built(hz=I(250))),
    ("simulator.Simulator", "int", lambda I: built(seed=I(7))),
    ("simulator.Simulator", "int", lambda I: built(record="series", series_every=I(3))),
    ("simulator.Simulator", "int",
     lambda I: built(record="events", max_trace_bytes=I(4096), on_full="overwrite")),
    ("simulator.Simulator", "int", lambda I: built(max_tasks=I(10))),
    ("simulator.Simulator", "int", lambda I: built(switch_cost_ns=I(20_000))),
    ("simulator.Simulator", "int",
     lambda I: built(params={"max_sleep_avg": I(500), "starvation_limit": I(50)})),
    ("simulator.Simulator.set_param", "int",
     lambda I: after(lambda s: s.set_param("max_sleep_avg", I(500)))),
    ("simulator.Simulator.spawn", "int", lambda I: after(lambda s: s.spawn(HOG(), nice=I(5)))),
    ("simulator.Simulator.spawn", "int",
     lambda I: after(lambda s: s.spawn(HOG(), policy="rr", rt_priority=I(5)))),
    ("simulator.Simulator.spawn", "int",
     lambda I: after(lambda s: s.spawn(HOG(), cpus_allowed=[I(1)]))),
    ("simulator.Simulator.spawn", "int", lambda I: after(lambda s: s.spawn(HOG(), cpu=I(1)))),
    ("simulator.Simulator.spawn", "int",
     lambda I: after(lambda s: s.spawn(HOG(), init={"sleep_avg": I(900)}))),
    ("simulator.Simulator.spawn", "int",
     lambda I: after(lambda s: s.spawn(HOG(), time_slice=I(3)))),
    ("simulator.Simulator.group", "int",
     lambda I: after_fair(lambda s: s.group("a", shares=I(2048)).path)),
    ("simulator.Simulator.group", "int",
     lambda I: after_fair(lambda s: s.group("a", weight=I(300)).path)),
    ("simulator.Simulator.set_shares", "int",
     lambda I: after_fair(lambda s: s.set_shares(s.group("a"), shares=I(300)))),
    ("simulator.Simulator.set_group", "int",
     lambda I: after_fair(lambda s: s.set_group(I(1), s.group("a")))),
    ("simulator.Simulator.group_of", "int", lambda I: after_fair(lambda s: s.group_of(I(1)).path)),
    ("simulator.Simulator.set_session_nice", "int", lambda I: after_fair(
        lambda s: (s.set_param("autogroup", 1), s.spawn(HOG(), session="x"),
                   s.set_session_nice("x", I(5)))[-1])),
    ("simulator.Simulator.spawn", "int",
     lambda I: after_fair(lambda s: s.spawn(HOG(), group=s.group("a"), nice=I(3)))),
    ("simulator.Simulator.source", "number",
     lambda I: after(lambda s: s.source("c", every_ms=I(2)))),
    ("simulator.Simulator.source", "number",
     lambda I: after(lambda s: s.source("c", every_us=I(2500)))),
    ("simulator.Simulator.source", "number",
     lambda I: after(lambda s: s.source("c", poisson_ms=I(3)))),
    ("simulator.Simulator.source", "number",
     lambda I: after(lambda s: s.source("c", every_ms=1, start_ms=I(4)))),
    ("simulator.Simulator.source", "int",
     lambda I: after(lambda s: s.source("c", every_ms=1, count=I(4)))),
    ("simulator.Simulator.run", "number", lambda I: after(lambda s: s.run(I(1)))),
    ("simulator.Simulator.run", "int", lambda I: after(lambda s: s.run(ticks=I(17)))),
    ("simulator.Simulator.step", "int", lambda I: after(lambda s: s.step(I(17)))),
    ("simulator.Simulator.set_affinity", "int",
     lambda I: after(lambda s: s.set_affinity(I(1), [I(1)]))),
    ("simulator.Simulator.renice", "int", lambda I: after(lambda s: s.renice(I(1), I(7)))),
    ("simulator.Simulator.setscheduler", "int",
     lambda I: after(lambda s: s.setscheduler(I(2), "fifo", I(9)))),
    ("simulator.Simulator.task", "int", lambda I: after(lambda s: vars(s.task(I(2))))),
    ("simulator.Simulator.latencies", "int", lambda I: after(lambda s: s.latencies(I(2)).tolist())),
    ("simulator.Simulator.latencies_frame", "int",
     lambda I: framed(lambda s: s.latencies_frame(I(2)))),
    ("simulator.Simulator.periodic", "int", lambda I: after(lambda s: s.periodic(I(2)).tolist())),
    ("simulator.Simulator.periodic_frame", "int",
     lambda I: framed(lambda s: s.periodic_frame(I(2)))),
    ("simulator.Simulator.post", "int", lambda I: after(lambda s: s.post("c", n=I(3)))),
    ("simulator.Simulator.runqueue", "int", lambda I: after(lambda s: s.runqueue(I(1)))),
    ("simulator.Simulator.queue", "int", lambda I: after(lambda s: s.queue(I(1)))),
    ("workloads.rtapp.from_rtapp", "int", lambda I: rtapp(I)),
    ("trace.capture.Trace.tid", "int", lambda I: small_trace().tid(I(1))),
    ("trace.capture.Trace.task", "int", lambda I: small_trace().task(I(2)).tolist()),
    ("trace.capture.Trace.family", "int", lambda I: small_trace().family(I(1))),
    ("trace.capture.Trace.to_workload", "int", lambda I: replayed(small_trace().to_workload(
        cpus=I(1), tasks=[I(1), I(2)]))),
    ("trace.open_rule.OpenRule", "int", lambda I: vars(ps.trace.OpenRule(
        start_ns=I(5), max_block_ns=I(10), max_blocked=0.5, min_life_ns=I(0)))),
    ("realkernel.read_hz", "int", lambda I: realkernel.read_hz(cpu=I(0))),
    ("realkernel.groups.simulate_groups", "int", lambda I: realkernel_groups.simulate_groups(
        {"kind": "cgroup", "groups": [(I(1), I(1024)), (I(2), I(2048))], "window_ns": I(10**8),
         "machine": {"release": "6.12.0", "hz": I(250), "tunables": {}}})["cpu_ns"].tolist()),
    ("realkernel.unavailable", "int", lambda I: realkernel.unavailable([I(0), I(5)], latency=False,
                                                                        cpu=I(0))),
    ("realkernel.tunable_params", "int", lambda I: realkernel.tunable_params(
        "linux-6.6-eevdf", {"base_slice_ns": I(3_000_000)}, hz=I(250))),
    ("realkernel.sleeper_program", "number", lambda I: realkernel.sleeper_program(I(10), I(1)).ops),
    ("workloads.rtapp.Workload.simulator", "int", lambda I: ps.workloads.from_rtapp(
        {"tasks": {"t": {"instance": 2, "run": 1000}}}).simulator(PRESET, cpus=I(2)).cpus),
    ("workloads.rtapp_build.channel", "int", lambda I: ps.workloads.channel("barrier", "b", I(2))),
    ("program.Program.run", "number", lambda I: spawned(Program().run(ms=I(3)).sleep(ms=1))),
    ("program.Program.sleep", "number", lambda I: spawned(Program().sleep(us=I(2500)).run(ms=1))),
    ("program.Program.periodic", "int",
     lambda I: spawned(Program().periodic(I(5000), 1000, advance_us=I(100)))),
    ("program.Program.periodic", "number", lambda I: spawned(Program().periodic(5000, I(1000)))),
    ("program.Program.frame", "int", lambda I: spawned(Program().frame(1000, I(900)))),
    ("program.Program.frame", "number", lambda I: spawned(Program().frame(I(1000), 900))),
    ("program.Program.timer", "int", lambda I: spawned(Program().timer(I(5000)).run(ms=1))),
    ("program.Program.io", "number", lambda I: spawned(Program().io(ns=I(2_500_000)).run(ms=1))),
    ("program.Program.loop", "int",
     lambda I: spawned(Program().loop(I(3)).run(ms=1).sleep(ms=1).end())),
    ("program.Program.fork", "int", lambda I: spawned(Program().fork(Program().run(ms=2), n=I(3)))),
    ("program.Program.nice", "int", lambda I: spawned(Program().nice(I(-4)).run(ms=5))),
    ("program.Program.setscheduler", "int",
     lambda I: spawned(Program().setscheduler("rr", I(3)).run(ms=5))),
    ("program.Program.set_affinity", "int",
     lambda I: spawned(Program().set_affinity([I(0)]).run(ms=5))),
    ("dist.const", "number", lambda I: ps.const(I(3))),
    ("dist.uniform", "number", lambda I: ps.uniform(I(1), I(3))),
    ("dist.exponential", "number", lambda I: ps.exponential(I(3))),
    ("dist.normal", "number", lambda I: ps.normal(I(3), I(1))),
    ("programs.interactive", "number", lambda I: spawned(ps.programs.interactive(I(2), I(5)))),
    ("programs.x_server", "number", lambda I: spawned(ps.programs.x_server(work_ms=I(3)))),
    ("programs.x_client", "number",
     lambda I: spawned(ps.programs.x_client(think_ms=I(4), work_ms=I(1)))),
    ("programs.kernel_compile", "int", lambda I: spawned(ps.programs.kernel_compile(
        I(2), cc_ms=ps.uniform(5, 10), io_ms=1))),
    ("policy.registry.policy_info", "int", lambda I: ps.policy_info(PRESET, I(100))),
    ("policy.registry.preset_params", "int", lambda I: ps.preset_params(PRESET, I(100))),
    ("policy.registry.formula", "int",
     lambda I: ps.formula(PRESET, "effective_prio", I(120), I(900))),
    ("policy.registry.formula", "int",
     lambda I: ps.formula(PRESET, "task_timeslice", 120, hz=I(100))),
    ("policy.registry.formula", "int",
     lambda I: ps.formula(PRESET, "task_timeslice", 120, params={"max_timeslice": I(50)})),
    ("analysis.o1.effective_prio", "int", lambda I: ps.analysis.o1.effective_prio(I(120), I(900))),
    ("analysis.o1.task_timeslice", "int", lambda I: ps.analysis.o1.task_timeslice(I(110))),
    ("analysis.o1.task_interactive", "int",
     lambda I: ps.analysis.o1.task_interactive(I(115), I(120))),
    ("analysis.o1.expired_starving", "int",
     lambda I: ps.analysis.o1.expired_starving(I(10), I(200), I(3))),
    ("analysis.o1.task_timeslice", "int",
     lambda I: ps.analysis.o1.task_timeslice(110, params={"max_timeslice": I(50)})),
    ("analysis.houston.constants", "int", lambda I: ps.analysis.houston.constants({"hz": I(250)})),
    ("analysis.houston.constants", "int",
     lambda I: ps.analysis.houston.constants({"nice_const": I(8000)})),
    ("analysis.houston.effective_prio", "int", lambda I: ps.analysis.houston.effective_prio(
        5000, 160, 20, params={"nice_const": I(8000), "hz": I(100)})),
    ("analysis.houston.decay_value", "int",
     lambda I: ps.analysis.houston.decay_value(I(5000), I(300), I(1000))),
    ("analysis.houston.get_increment", "int",
     lambda I: ps.analysis.houston.get_increment(I(1000), I(100_000))),
    ("analysis.houston.effective_prio", "int",
     lambda I: ps.analysis.houston.effective_prio(I(5000), I(160), I(20))),
    ("analysis.houston.estimate_run_avg", "int",
     lambda I: ps.analysis.houston.estimate_run_avg(I(-3), I(100_000))),
    ("analysis.houston.task_timeslice", "int",
     lambda I: ps.analysis.houston.task_timeslice(I(150), I(160))),
    ("analysis.houston.update_prio_avg", "int",
     lambda I: ps.analysis.houston.update_prio_avg(I(40_000), I(150))),
    ("analysis.houston.houston_equilibrium", "int",
     lambda I: as_lists(ps.analysis.houston_equilibrium(
        [I(0), I(5)], cpus=I(1)))),
    ("analysis.houston.houston_equilibrium", "int",
     lambda I: as_lists(ps.analysis.houston.houston_equilibrium(
        [0, 5], params={"nice_const": I(9000)}))),
    ("analysis.stability.houston_stability", "int",
     lambda I: as_lists(ps.analysis.stability.houston_stability(
        [I(-20), I(19)], params={"run_avg_halflife": I(2000), "fairness_ticks": I(100)}))),
    ("analysis.stability.houston_stability", "number",
     lambda I: as_lists(ps.analysis.stability.houston_stability(
        [0, 5], params={"run_avg_halflife": 600}, cycle_levels=I(4), settle_levels=I(1)))),
    ("analysis.houston_mix.houston_mixture", "int",
     lambda I: as_lists(ps.analysis.houston_mixture(
        [I(0), (5, 20, I(3)), {"nice": I(5)}], cpus=I(2),
        params={"run_avg_halflife": I(600)}, seconds=20))),
    ("analysis.houston_mix.houston_mixture", "number",
     lambda I: as_lists(ps.analysis.houston_mix.houston_mixture(
        [0, (I(5), I(20))], seconds=I(20), cycle_levels=I(3), settle_levels=I(1)))),
    ("results.metrics.cpu_share", "number", lambda I: after(lambda s: tabled(ps.metrics.cpu_share(
        s, start_s=I(0))), record="events")),
    ("results.metrics.cpu_share", "int", lambda I: after(lambda s: tabled(ps.metrics.cpu_share(
        s, tasks=[I(2), "hog"])))),
    ("results.metrics.wakeup_latency", "int",
     lambda I: after(lambda s: tabled(ps.metrics.wakeup_latency(
        s, tasks=I(2))))),
    ("results.metrics.wakeup_latency", "number",
     lambda I: after(lambda s: ps.metrics.wakeup_latency(
        s, percentiles=[I(50), I(99)], pooled=True))),
    ("results.metrics.longest_wait", "int",
     lambda I: after(lambda s: tabled(ps.metrics.longest_wait(
        s, tasks=[I(1), I(2)])), record="events")),
    ("results.metrics.deadlines", "int",
     lambda I: tabled(ps.metrics.deadlines(PERIODIC, tasks=[I(2)]))),
    ("results.metrics.deadlines", "number", lambda I: tabled(ps.metrics.deadlines(
        PERIODIC, percentiles=[I(90)]))),
    ("results.metrics.interbench_stats", "int", lambda I: tabled(ps.metrics.interbench_stats(
        PERIODIC, game=[I(1)]))),
    ("analysis.measure.window_shares", "number",
     lambda I: as_lists(ps.analysis.measure.window_shares(TIMES, CPU, I(4)))),
    ("analysis.measure.settling_time", "number",
     lambda I: as_lists(ps.analysis.measure.settling_time(
        TIMES, CPU, window_s=I(5), abs_tol=I(0)))),
    ("analysis.measure.prio_settling_time", "number",
     lambda I: as_lists(ps.analysis.measure.prio_settling_time(
        TIMES, PRIO, levels=I(1), tail=I(1)))),
    ("analysis.o1.o1_steady_state", "int", lambda I: as_lists(ps.analysis.o1.o1_steady_state(
        3, 7, nice=I(-5), hogs=I(2), hog_nice=I(5), hz=I(100)))),
    ("analysis.o1.o1_steady_state", "number", lambda I: as_lists(ps.analysis.o1.o1_steady_state(
        I(3), I(7), tol=I(0)))),
    ("analysis.o1_mix.o1_mixture", "int", lambda I: as_lists(ps.analysis.o1_mix.o1_mixture(
        [(3, 7, I(-5)), {"run_ms": 20, "sleep_ms": 30, "nice": I(1)}], hogs=I(2),
        hog_nice=I(5), hz=I(100)))),
    ("analysis.o1_mix.o1_mixture", "number", lambda I: as_lists(ps.analysis.o1_mix.o1_mixture(
        [(I(3), I(7)), {"run_ms": I(20), "sleep_ms": I(30)}], tol=I(0)))),
    ("analysis.measure.o1_duty_run", "int", lambda I: as_lists(ps.analysis.measure.o1_duty_run(
        3, 7, nice=I(1), hogs=I(1), hog_nice=I(0), hz=I(100), seed=I(2), seconds=1))),
    ("analysis.measure.o1_duty_run", "number", lambda I: as_lists(ps.analysis.measure.o1_duty_run(
        I(3), I(7), seconds=I(1), tol=I(0)))),
    ("analysis.measure.sleep_avg_steady", "number",
     lambda I: as_lists(ps.analysis.measure.sleep_avg_steady(
        TIMES, PRIO[:, 0] * 10, PRIO[:, 0], tol_ticks=I(5), tail=I(1)))),
    ("workloads.interbench.run", "int", lambda I: as_lists(ps.workloads.interbench.run(
        "linux-2.5.65", duration_s=10, benchmarks=["audio"], loads=["burn"], cpus=I(1), seed=I(3),
        hz=I(1000), load_threads=I(2), bench_nice=I(-1), load_nice=I(2)).to_dict("list"))),
    ("workloads.interbench.run", "number", lambda I: as_lists(ps.workloads.interbench.run(
        "linux-2.5.65", duration_s=I(10), benchmarks=["audio"], loads=["none"]).to_dict("list"))),
    ("workloads.interbench.run_one", "int", lambda I: as_lists(ps.workloads.interbench.run_one(
        "linux-2.5.65", "audio", "burn", duration_s=10, cpus=I(1), seed=I(1), load_threads=I(1)))),
    ("programs.media_player", "number", lambda I: spawned(ps.programs.media_player(I(20), I(5)))),
    ("programs.io_bound", "number", lambda I: spawned(ps.programs.io_bound(I(3), I(1)))),
    ("programs.pipe_ring", "int", lambda I: [spawned(p) for p in ps.programs.pipe_ring(I(3))]),
    ("programs.pipe_ring", "number",
     lambda I: [spawned(p) for p in ps.programs.pipe_ring(3, work_us=I(20))]),
    ("programs.burn", "int", lambda I: [spawned(p) for p in ps.programs.burn(I(2))]),
    ("programs.compile", "int", lambda I: [spawned(p) for p in ps.programs.compile(I(2))]),
    ("programs.ring", "int", lambda I: [spawned(p) for p in ps.programs.ring(I(3))]),
    ("analysis.measure.limit_cycle", "number", lambda I: as_lists(ps.analysis.measure.limit_cycle(
        TIMES, PRIO[:, 0], min_amplitude=I(1)))),
    ("analysis.measure.classify_series", "number",
     lambda I: as_lists(ps.analysis.measure.classify_series(
        TIMES, CPU, PRIO, cycle_levels=I(2), rel_tol=I(1)))),
    ("analysis.measure.default_seconds", "int", lambda I: ps.analysis.measure.default_seconds(
        {"run_avg_halflife": I(700), "hz": I(100)})),
    ("analysis.measure.classify_run", "int", lambda I: as_lists(ps.analysis.measure.classify_run(
        [I(-5), I(5)], params={"run_avg_halflife": I(600)}, series_every=I(5), seconds=2))),
    ("analysis.measure.classify_run", "int", lambda I: as_lists(ps.analysis.measure.classify_run(
        [0, (5, 20, I(2))], cpus=I(2), seconds=2))),
    ("analysis.measure.classify_run", "number", lambda I: as_lists(ps.analysis.measure.classify_run(
        [0, 3], params={"hz": 100}, seconds=I(3)))),
    ("analysis.measure.classify_run", "number", lambda I: as_lists(ps.analysis.measure.classify_run(
        [0, {"run_ms": I(5), "sleep_ms": I(20)}], seconds=2))),
    ("policy.base.Param", "int", lambda I: with_policy(I, ps.Param(I(5), I(1), I(100)))),
    ("policy.base.Policy.resched", "hook", with_policy),
    ("policy.base.Policy.curr", "hook", with_policy),
    ("policy.base.Policy.idle", "hook", with_policy),
    ("policy.base.Policy.task", "hook", with_policy),
    ("policy.base.Policy.rq", "hook", with_policy),
    ("policy.testing.busy_machine", "int", lambda I: after(lambda s: ps.policy.testing.busy_machine(
        PRESET, seed=I(3), cpus=I(2)).run(seconds=0.1))),
    ("policy.testing.check_policy", "int", lambda I: str(ps.policy.testing.check_policy(
        PRESET, cpus=(I(1),), checks=["progress"]))),
    ("policy.testing.check_policy", "number", lambda I: str(ps.policy.testing.check_policy(
        PRESET, cpus=(1,), seconds=I(1), checks=["progress"]))),
    ("policy.testing.check_policy", "int", lambda I: str(ps.policy.testing.check_policy(
        ps.ext.examples.Simple, cpus=(1,), seconds=0.2, checks=["stall"],
        ext_timeout_ms=I(50)))),
    ("simulator.Simulator.ext_strict", "int", lambda I: after_ext(
        lambda s: s.ext_strict(timeout_ms=I(100)))),
    ("policy.base.Policy.log_event", "hook", with_policy),
    ("demo.build", "int",
     lambda I: after(lambda s: demo.report(*demo.build(PRESET, seed=I(4)), 1))),
    ("results.plot.timeline", "int", lambda I: plotted(lambda s, ax: ps.plot.timeline(
        s, cpus=[I(1)], ax=ax), record="events")),
    ("results.plot.timeline", "number", lambda I: plotted(lambda s, ax: ps.plot.timeline(
        s, start_s=I(0), ax=ax), record="events")),
    ("results.plot.shares", "number", lambda I: plotted(lambda s, ax: ps.plot.shares(
        s, start_s=I(0), ax=ax), record="events")),
    ("results.plot.series", "int", lambda I: plotted(lambda s, ax: ps.plot.series(
        s, "prio", tasks=[I(2)], ax=ax), record="series")),
    ("results.plot.latency_cdf", "int", lambda I: plotted(lambda s, ax: ps.plot.latency_cdf(
        s, [I(2)], ax=ax))),
    ("results.plot.shares", "int",
     lambda I: plotted(lambda s, ax: ps.plot.shares(s, tasks=I(1), ax=ax))),
    ("results.plot.task_color", "int", lambda I: ps.plot.task_color(I(3))),
    ("simulator.Simulator.watch", "number", lambda I: after(lambda s: (s.watch(
        idle_while_waiting_ms=I(2), starvation_ms=I(50)), repr(s.invariants()))[1])),
    ("search.space.Op", "int", lambda I: ps.search.Op("run", I(900))),
    ("search.space.TaskSpec", "int", lambda I: ps.search.TaskSpec(body=[("run", I(9))], nice=I(5))),
    ("search.space.hog", "int", lambda I: ps.search.hog(nice=I(5))),
    ("search.space.Space", "int", lambda I: ps.search.Space(
        tasks=(I(1), I(2)), start_ops=(I(0), I(1)), body_ops=(I(1), I(2)), us=(I(50), I(900)),
        nice=(I(0), I(5)))),
    ("search.search", "int", lambda I: (lambda r: (r.workload, r.score))(ps.search.search(
        PRESET, ps.search.uncharged_share(), ps.search.Space(tasks=(1, 1)), budget=I(8),
        seed=I(3), population=I(4), islands=I(1), cpus=I(1), seconds=0.1))),
    ("search.search", "number", lambda I: (lambda r: (r.workload, r.score))(ps.search.search(
        PRESET, ps.search.uncharged_share(), ps.search.Space(tasks=(1, 1)), budget=8,
        population=4, islands=1, seconds=I(1)))),
]

# public entry points that take no int (or whose ints are walked elsewhere)
NO_INT_ARGUMENT = {
    "policy.registry.presets", "policy.registry.policies", "policy.registry.ParamInfo",
    "simulator.TaskView", "program.Program",
    "simulator.Simulator.stats", "simulator.Simulator.events", "simulator.Simulator.series_times",
    "simulator.Simulator.series", "simulator.Simulator.clear_records",
    "simulator.Simulator.cpu_stats", "simulator.Simulator.counters", "simulator.Simulator.check",
    "simulator.Simulator.stats_frame", "simulator.Simulator.events_frame",
    "simulator.Simulator.series_frame", "simulator.Simulator.cpu_stats_frame",
    "simulator.Simulator.counters_frame", "simulator.Simulator.copy",
    "simulator.Simulator.groups", "simulator.Simulator.group_stats",
    "simulator.Simulator.group_stats_frame",
    "program.Program.wait", "program.Program.post", "program.Program.end", "program.Program.exit",
    "program.Program.yield_", "program.Program.check_closed", "programs.cpu_hog",
    "sweeps.sweep",  # its grids and max_workers: test_sweep.py
    "sweeps.read_sweep",  # a path: test_sweep_files.py
    # results, made by the functions walked; their methods take no argument
    "analysis.houston.Equilibrium", "analysis.houston.Equilibrium.keys", "analysis.result.Result",
    "analysis.result.Result.as_dict", "analysis.result.Result.to_frame",
    "policy.base.Policy", "policy.base.Policy.setup", "policy.base.Policy.tasks",
    "policy.base.register_policy",
    # paths and names: test_c_policies.py
    "policy.build.build_policy", "policy.build.include_dir", "policy.registry.PolicyLibrary",
    "results.metrics.jain_index",  # vectors of values
    # a sweep table's column names and the table itself
    "results.plot.heatmap", "results.plot.predicted_vs_simulated", "results.plot.stability_map",
    # interbench's fixed tasks and loads, and the matrix's printers (a table)
    "programs.audio", "programs.video", "programs.x", "programs.gaming", "programs.write",
    "programs.read", "workloads.interbench.report", "workloads.interbench.side_by_side",
    # paths, traces and simulators: test_trace.py, test_replay.py
    "simulator.Simulator.export_ftrace", "simulator.Simulator.export_perfetto",
    "trace.capture.load", "trace.compare", "trace.capture.Trace", "trace.capture.Trace.frame",
    # what the package makes and hands back: results, reports, rt-app's threads
    "analysis.measure.LimitCycle", "analysis.measure.MeasuredRun", "analysis.measure.PrioSettling",
    "analysis.measure.Settling", "analysis.measure.SleepAvgRun", "analysis.o1.O1SteadyState",
    "analysis.o1_mix.O1Mixture", "analysis.houston_mix.HoustonMixture",
    "analysis.stability.Stability", "policy.testing.Report", "policy.testing.Report.raise_if_failed",
    "policy.testing.Result", "workloads.rtapp.RtAppThread",
    "workloads.rtapp.RtAppThread.spawn_kwargs", "workloads.rtapp.Workload",
    "workloads.rtapp.Workload.spawn_into",
    # policies: their params are walked as any preset's (Simulator's params=)
    "policy.examples.linux24.Linux24", "policy.examples.round_robin.RoundRobin",
    "policy.examples.sleep_credit.SleepCredit",
    # the machine itself: machine() mounts debugfs and count_hz() times the
    # kernel for seconds (their cpu is read_hz's and measure's, walked here
    # and in test_realkernel.py), measure() runs it, simulate() takes what
    # measure() returned and default_preset() a release string
    "realkernel.machine", "realkernel.count_hz", "realkernel.measure", "realkernel.simulate",
    "realkernel.default_preset",
    # the search's workloads, objectives and results: what it makes and hands
    # back, and the draws and shrinks of a Space (a Generator, workloads)
    "search.space.Op.add_to", "search.space.Op.code", "search.space.TaskSpec.code",
    "search.space.TaskSpec.program", "search.space.Workload", "search.space.Workload.size",
    "search.space.Space.random", "search.space.Space.mutate", "search.space.Space.cross",
    "search.space.Space.smaller", "search.objectives.Run", "search.objectives.Run.share",
    "search.objectives.Run.charged", "search.objectives.Run.mask", "search.objectives.Objective",
    "search.objectives.Objective.per_task", "search.objectives.UnchargedShare",
    "search.objectives.UnchargedShare.per_task", "search.objectives.ShareAboveFair",
    "search.objectives.ShareAboveFair.per_task", "search.objectives.WorstWakeupLatency",
    "search.objectives.WorstWakeupLatency.per_task", "search.objectives.uncharged_share",
    "search.objectives.share_above_fair", "search.objectives.worst_wakeup_latency",
    "search.objectives.longest_wait", "search.objectives.idle_while_waiting",
    "search.objectives.LongestWait", "search.objectives.LongestWait.per_task",
    "search.objectives.IdleWhileWaiting", "search.objectives.IdleWhileWaiting.per_task",
    "search.objectives.largest_lag", "search.objectives.LargestLag",
    "search.objectives.LargestLag.per_task",
    "search.result.SearchResult", "search.result.SearchResult.plot",
    "search.result.SearchResult.rtapp", "search.result.SearchResult.simulator",
    "search.result.SearchResult.snippet", "search.result.SearchResult.tasks",
    "search.result.SearchResult.write_rtapp",
    "simulator.Simulator.invariants", "simulator.Simulator.unwatch",
    # the groups' measurement runs the machine (its arguments are checked
    # in test_groups_realkernel.py); groups_unavailable takes a kind
    "realkernel.groups.measure_groups", "realkernel.groups.groups_unavailable",
}


def public_entry_points():
    """Every public function, class and method, named by the module that
    defines it (``analysis.houston.decay_value``, whichever name reaches it):
    the modules reachable from pysched.__all__, each module's names its
    __all__ where it has one (a module of the package's own has an empty
    one), else those it defines; a Policy subclass's hooks are the
    engine's to call."""
    names, seen, todo = set(), set(), [ps]
    while todo:
        mod = todo.pop(0)
        if mod.__name__ in seen:
            continue
        seen.add(mod.__name__)
        listed = getattr(mod, "__all__", None)
        for attr in listed if listed is not None else [a for a in vars(mod) if not a.startswith("_")]:
            obj = getattr(mod, attr)
            if inspect.ismodule(obj):
                if listed is not None or obj.__name__.startswith(mod.__name__ + "."):
                    todo.append(obj)
                continue
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if (listed is None and obj.__module__ != mod.__name__) or (
                    inspect.isclass(obj) and issubclass(obj, BaseException)):
                continue  # a name imported, or an exception (it takes no arguments of ours)
            name = f"{obj.__module__.removeprefix('pysched.')}.{obj.__qualname__}"
            names.add(name)
            if inspect.isclass(obj) and not issubclass(obj, ps.Policy):
                names |= {f"{name}.{m}" for m, fn in vars(obj).items()
                          if not m.startswith("_") and inspect.isfunction(fn)}
    return names


def test_the_walk_covers_every_public_entry_point():
    walked = {e[0] for e in ENTRY_POINTS}
    missing = public_entry_points() - walked - NO_INT_ARGUMENT
    assert not missing, f"entry points not walked with NumPy ints: {sorted(missing)}"
    assert len(ENTRY_POINTS) >= 60


@pytest.mark.parametrize("kind", INT_LIKES)
@pytest.mark.parametrize("entry,_,call", ENTRY_POINTS, ids=[e[0] for e in ENTRY_POINTS])
def test_every_entry_point_takes_integer_likes_as_the_ints_they_equal(entry, _, call, kind):
    assert call(INT_LIKES[kind]) == call(int)


@pytest.mark.parametrize("kind", NOT_INTS)
@pytest.mark.parametrize("entry,_,call", [e for e in ENTRY_POINTS if e[1] == "int"],
                         ids=[e[0] for e in ENTRY_POINTS if e[1] == "int"])
def test_no_entry_point_takes_a_bool_or_a_float_for_an_int(entry, _, call, kind):
    with pytest.raises(TypeError, match=r"must be an int, not (float|float64|bool_?)$"):
        call(NOT_INTS[kind])


@pytest.mark.parametrize("kind", NOT_INTS)
@pytest.mark.parametrize("entry,_,call", [e for e in ENTRY_POINTS if e[1] == "hook"],
                         ids=[e[0] for e in ENTRY_POINTS if e[1] == "hook"])
def test_no_policy_hook_hands_the_engine_a_bool_or_a_float_for_an_int(entry, _, call, kind):
    with pytest.raises(ps.PolicyError) as failure:
        call(NOT_INTS[kind])
    assert isinstance(failure.value.__cause__, TypeError)
    assert re.search(r"must be an int, not (float|float64|bool_?)$", str(failure.value.__cause__))


@pytest.mark.parametrize("kind", ["bool", "np.bool_"])
@pytest.mark.parametrize("entry,_,call", [e for e in ENTRY_POINTS if e[1] == "number"],
                         ids=[e[0] for e in ENTRY_POINTS if e[1] == "number"])
def test_no_entry_point_takes_a_bool_for_a_number(entry, _, call, kind):
    with pytest.raises(TypeError, match=r"must be a number, not bool_?$"):
        call(NOT_INTS[kind])


@pytest.mark.parametrize("kind", ["float", "np.float64"])
def test_number_arguments_take_floats_as_before(kind):
    assert after(lambda s: s.run(NOT_INTS[kind](1))) == after(lambda s: s.run(1))
    assert ps.uniform(NOT_INTS[kind](1), 3) == ps.uniform(1, 3)


def test_cpus_allowed_takes_a_numpy_array():
    assert (after(lambda s: s.spawn(HOG(), cpus_allowed=np.arange(1, 2)))
            == after(lambda s: s.spawn(HOG(), cpus_allowed=[1])))
    assert (after(lambda s: s.set_affinity(1, np.array([1], dtype=np.uint8)))
            == after(lambda s: s.set_affinity(1, [1])))


def test_cpus_allowed_that_is_not_a_list_names_itself():
    with pytest.raises(TypeError, match="cpus_allowed must be a list of CPU numbers, not 1"):
        ps.Simulator(PRESET, cpus=2).spawn(HOG(), cpus_allowed=1)


def test_the_numbers_a_simulator_keeps_are_plain_ints():
    sim = ps.Simulator(PRESET, cpus=np.int64(2), seed=np.uint64(3), hz=np.int32(250))
    assert [type(v) for v in (sim.cpus, sim.seed, sim.hz)] == [int, int, int]


def test_houston_equilibrium_takes_nices_as_ints_only():
    assert (ps.analysis.houston_equilibrium(np.array([0, 5])).ratio
            == ps.analysis.houston_equilibrium([0, 5]).ratio)
    # a fractional nice was truncated before, "5" read as 5, True as 1
    for bad, name in ((0.7, "float"), ("5", "str"), (True, "bool")):
        with pytest.raises(TypeError, match=f"nice must be an int, not {name}"):
            ps.analysis.houston_equilibrium([0, bad])
    with pytest.raises(TypeError, match="cpus must be an int, not str"):
        ps.analysis.houston_equilibrium([0, 5], cpus="2")
    with pytest.raises(TypeError, match="nices must be a list of nice values, not 5"):
        ps.analysis.houston_equilibrium(5)


# ---------------------------------------------------------------- parameter dicts

BOOL_PARAM = "waker_bonus"  # unit "bool" in every O(1) preset


def test_a_bool_unit_parameter_takes_true_and_false_as_1_and_0():
    assert {p.name: p.unit for p in ps.preset_params(PRESET)}[BOOL_PARAM] == "bool"
    for flag, v in ((True, 1), (False, 0), (np.bool_(True), 1), (np.bool_(False), 0)):
        assert built(params={BOOL_PARAM: flag}) == built(params={BOOL_PARAM: v})
        assert (after(lambda s: s.set_param(BOOL_PARAM, flag))
                == after(lambda s: s.set_param(BOOL_PARAM, v)))
        assert ps.Simulator(PRESET, params={BOOL_PARAM: flag}).params[BOOL_PARAM] == v


@pytest.mark.parametrize("flag", [True, np.bool_(False)], ids=["True", "np.bool_"])
def test_a_parameter_that_is_not_a_bool_refuses_bools(flag):
    with pytest.raises(TypeError, match="parameter max_sleep_avg must be an int, not bool"):
        ps.Simulator(PRESET, params={"max_sleep_avg": flag})
    with pytest.raises(TypeError, match="parameter max_sleep_avg must be an int, not bool"):
        ps.Simulator(PRESET).set_param("max_sleep_avg", flag)
    with pytest.raises(TypeError, match="parameter nice_const must be an int, not bool"):
        ps.analysis.houston.constants({"nice_const": flag})


@pytest.mark.parametrize("call", [
    lambda p: ps.analysis.houston.constants(p),
    lambda p: ps.analysis.houston.effective_prio(5000, 160, 20, params=p),
    lambda p: ps.analysis.houston_equilibrium([0, 5], params=p),
], ids=["constants", "effective_prio", "houston_equilibrium"])
def test_houston_params_must_be_a_dict(call):
    # a list of pairs was taken as a dict before
    with pytest.raises(TypeError, match="params must be a dict, not list"):
        call([("nice_const", 8000)])


def test_a_parameter_value_out_of_range_is_named_with_the_range_before_the_core_sees_it():
    with pytest.raises(ValueError, match=r"max_sleep_avg=0 is outside the allowed range 1\.\.1000000"):
        ps.Simulator(PRESET, params={"max_sleep_avg": np.int64(0)})
    with pytest.raises(ValueError, match=r"waker_bonus=2 is outside the allowed range 0\.\.1"):
        ps.Simulator(PRESET, params={BOOL_PARAM: 2})
    with pytest.raises(KeyError, match="unknown parameter 'nope' for policy o1"):
        ps.Simulator(PRESET, params={"nope": np.int64(1)})


# ---------------------------------------------------------------- booleans

BOOL_OPTIONS = [
    ("debug", lambda v: ps.Simulator(PRESET, debug=v)),
    ("latencies", lambda v: ps.Simulator(PRESET, latencies=v)),
    ("stagger_ticks", lambda v: ps.Simulator(PRESET, cpus=2, stagger_ticks=v)),
    ("sync", lambda v: Program().post("c", sync=v)),
]


@pytest.mark.parametrize("bad", ["False", "", 0, 1, 1.0, [], np.int64(1)],
                         ids=["'False'", "''", "0", "1", "1.0", "[]", "np.int64"])
@pytest.mark.parametrize("option,call", BOOL_OPTIONS, ids=[o[0] for o in BOOL_OPTIONS])
def test_a_bool_option_takes_only_true_or_false(option, call, bad):
    # debug='False' turned the checks on before: any truthy value did
    with pytest.raises(TypeError, match=f"{option} must be a bool, not {type(bad).__name__}"):
        call(bad)
    if option != "debug":  # debug=None: as the environment says
        with pytest.raises(TypeError, match=f"{option} must be a bool, not NoneType"):
            call(None)


@pytest.mark.parametrize("option,call", BOOL_OPTIONS, ids=[o[0] for o in BOOL_OPTIONS])
def test_a_numpy_bool_is_the_bool_it_holds(option, call):
    for flag in (False, True):
        got, want = call(np.bool_(flag)), call(flag)
        if isinstance(want, Program):
            assert got.ops == want.ops and type(got.ops[0][2]) is int
        else:
            assert built_from(got) == built_from(want)


def test_the_bool_options_reach_the_core():
    sim = ps.Simulator(PRESET, latencies=np.bool_(False))
    sim.spawn(ps.programs.interactive(1, 3))
    sim.run(seconds=0.05)
    assert len(sim.latencies()) == 0
    sim = ps.Simulator(PRESET, latencies=True)
    sim.spawn(ps.programs.interactive(1, 3))
    sim.run(seconds=0.05)
    assert len(sim.latencies()) > 0


def built_from(sim):
    sim.spawn(ps.programs.interactive(1, 3))
    sim.spawn(HOG())
    sim.run(seconds=0.05)
    return sim.stats().tobytes(), sim.latencies().tobytes()


def test_series_fields_may_be_any_iterable_of_names():
    fields = ("prio", "sleep_avg")
    for given in (iter(fields), np.array(fields), dict.fromkeys(fields)):
        sim = ps.Simulator(PRESET, record="series", series_fields=given)
        sim.spawn(ps.programs.interactive(1, 3))
        sim.run(seconds=0.01)
        assert sim._series_fields == list(fields) and sim.series("sleep_avg").shape == (10, 1)


# ---------------------------------------------------------------- ints too large for the core

HUGE_MESSAGE = (r"^(.* )?[\w\[\]']+=(-?\d+|<(an|a negative) int of \d+ bits>) is "
                r"(outside the allowed range( -?\d+(\.\d+)?(e[+-]\d+)?\.\.)?|not allowed|too large)")


@pytest.mark.parametrize("huge", [10**400, -10**400, 10**5000], ids=["10**400", "-10**400", "10**5000"])
@pytest.mark.parametrize("entry,_,call", [e for e in ENTRY_POINTS if e[1] != "hook"],
                         ids=[e[0] for e in ENTRY_POINTS if e[1] != "hook"])
def test_an_int_too_large_for_the_core_is_named_with_the_allowed_range(entry, _, call, huge):
    # before, some went on to the core or to float() and failed with OverflowError
    with pytest.raises(ValueError, match=HUGE_MESSAGE):
        call(lambda v: huge if v > 0 else -huge)


@pytest.mark.parametrize("huge", [10**400, -10**400], ids=["10**400", "-10**400"])
@pytest.mark.parametrize("entry,_,call", [e for e in ENTRY_POINTS if e[1] == "hook"],
                         ids=[e[0] for e in ENTRY_POINTS if e[1] == "hook"])
def test_an_int_too_large_handed_back_by_a_hook_is_named(entry, _, call, huge):
    with pytest.raises(ps.PolicyError) as failure:
        call(lambda v: huge if v > 0 else -huge)
    assert isinstance(failure.value.__cause__, ValueError)
    assert re.search(HUGE_MESSAGE, str(failure.value.__cause__))


def test_names_given_as_numpy_strs_reach_the_core_as_plain_strs():
    S = np.str_
    sim = ps.Simulator(S(PRESET), params={S("max_sleep_avg"): 500}, record=S("series"),
                       series_fields=[S("prio")])
    sim.spawn(Program().loop().wait(S("c")).run(ms=1).end(), name=S("w"), policy=S("normal"),
              init={S("sleep_avg"): 5})
    sim.source(S("c"), every_ms=2)
    sim.set_param(S("max_sleep_avg"), 600)
    sim.run(seconds=0.01)
    assert sim.task(1).nr_switches > 0 and sim.preset == PRESET and type(sim.preset) is str
    assert ps.formula(S(PRESET), S("task_timeslice"), 120) == ps.formula(PRESET, "task_timeslice", 120)
    assert ps.policy_info(S(PRESET)) == ps.policy_info(PRESET)


# ---- a parameter lowered mid-run below what the tasks hold ----

def test_lowering_max_sleep_avg_mid_run_clamps_every_sleep_avg_to_it():
    sim = ps.Simulator("linux-2.5.65", seed=2)
    sleepers = [sim.spawn(ps.programs.x_client()) for _ in range(3)]
    sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=2)
    assert max(sim.task(p).sleep_avg for p in sleepers) > 100
    sim.set_param("max_sleep_avg", 100)
    assert max(sim.task(p).sleep_avg for p in sleepers) == 100
    sim.check()
    sim.run(seconds=1)
    assert all(sim.task(p).sleep_avg <= 100 for p in sleepers)


def test_lowering_max_run_avg_mid_run_keeps_houston_math_in_its_domain():
    sim = ps.Simulator("houston-2003", seed=2, debug=True)
    hog = sim.spawn(ps.programs.cpu_hog())
    sim.spawn(ps.programs.x_client())
    sim.run(seconds=2)
    assert sim.task(hog).run_avg > 16384
    sim.set_param("max_run_avg", 16384)
    assert sim.task(hog).run_avg == 16384
    sim.run(seconds=1)          # invariant checks, the run_avg domain among them, at every instant
    assert sim.task(hog).run_avg <= 16384



def test_the_binding_takes_only_0_or_1_for_its_recording_flags():
    sim = ps.Simulator("linux-2.5.65")
    with pytest.raises(ValueError, match="must each be 0 or 1"):
        sim._core.configure(2, 1, [], 1, 1 << 20, 0, 0, 100, 10, 0, 0)
