"""Bad input never crashes and changes nothing.

Every public entry point given a bad value raises ValueError, TypeError,
KeyError or RuntimeError with a message naming the value (and the allowed
range where there is one); a simulator that saw the failed call is
indistinguishable from a twin that never did, now and after running on."""
import math
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pysched as ps
from pysched import Program

PRESET = "linux-2.5.65"
EXPECTED = (ValueError, TypeError, KeyError, RuntimeError)
PARAM_NAMES = [p.name for p in ps.preset_params(PRESET)]
# examples per garbage test; raise it for a longer hunt (4000 each found nothing new)
FUZZ_EXAMPLES = int(os.environ.get("PYSCHED_FUZZ_EXAMPLES", "300"))


def build():
    """A small running machine: a hog, a sleeper, a device-driven waiter and
    a task that has already exited (pid 4)."""
    sim = ps.Simulator(PRESET, seed=3)
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.spawn(ps.programs.interactive(1, 3), name="sleeper", nice=-2)
    sim.spawn(Program().loop().wait("dev").run(us=300).end(), name="waiter")
    sim.spawn(Program().run(ms=1), name="brief", nice=-10)
    sim.source("dev", every_ms=7)
    sim.run(seconds=0.1234567)
    assert sim.task(4).state == "dead"
    return sim


def state(sim):
    st_ = sim.stats()
    return (st_.dtype.descr, st_.tobytes(), sim.params, sim.now_ns, sim.jiffies, sim.counters(),
            sim.runqueue(0), len(sim.latencies()))


def assert_fails_and_changes_nothing(call, exc, match):
    sim, twin = build(), build()
    before = state(sim)
    assert before == state(twin)
    with pytest.raises(exc, match=match):
        call(sim)
    assert state(sim) == before
    sim.check()
    # and it runs on exactly as the twin that never saw the bad call
    sim.run(seconds=0.3)
    twin.run(seconds=0.3)
    assert state(sim) == state(twin)


def R(s):
    """A regex matching s literally."""
    return re.escape(s)


# ---------------------------------------------------------------- construction

@pytest.mark.parametrize("args,kwargs,exc,match", [
    (("linux-9",), {}, KeyError, R("unknown preset 'linux-9'; known presets: ['linux-2.5.64'")),
    ((3,), {}, TypeError, "preset must be a str, not int"),
    ((None,), {}, TypeError, "preset must be a str, not NoneType"),
    ((PRESET,), dict(params={"foo": 1}), KeyError, "unknown parameter 'foo'"),
    ((PRESET,), dict(params={"max_sleep_avg": -5}), ValueError,
     R("max_sleep_avg=-5 is outside the allowed range 1..1000000")),
    ((PRESET,), dict(params={"max_sleep_avg": 10**30}), ValueError,
     R(f"max_sleep_avg={10**30} is outside the allowed range 1..1000000")),
    ((PRESET,), dict(params={"max_timeslice": 0}), ValueError, R("max_timeslice=0 is outside")),
    ((PRESET,), dict(params={"max_sleep_avg": "5"}), TypeError,
     "parameter max_sleep_avg must be an int, not str"),
    ((PRESET,), dict(params={"max_sleep_avg": 5.0}), TypeError, "max_sleep_avg must be an int, not float"),
    ((PRESET,), dict(params={"max_sleep_avg": None}), TypeError, "max_sleep_avg must be an int, not NoneType"),
    ((PRESET,), dict(params=[("max_sleep_avg", 5)]), TypeError, "params must be a dict, not list"),
    ((PRESET,), dict(params={1: 1}), TypeError, "parameter name must be a str, not int"),
    ((PRESET,), dict(params={"max_sleep_avg\x00junk": 5}), ValueError,
     R("parameter name 'max_sleep_avg\\x00junk' contains a NUL character")),
    ((PRESET,), dict(params={"\ud800": 5}), ValueError, R("parameter name '\\ud800' cannot be encoded as UTF-8")),
    ((PRESET + "\x00junk",), {}, ValueError, R("preset 'linux-2.5.65\\x00junk' contains a NUL character")),
    ((PRESET,), dict(record="series", series_fields=["prio\x00junk"]), ValueError,
     R("series field 'prio\\x00junk' contains a NUL character")),
    ((PRESET,), dict(params={"min_timeslice": 500}), ValueError,
     "min_timeslice=500 must not exceed max_timeslice=200"),
    ((PRESET,), dict(cpus=0), ValueError, R("cpus=0 is outside the allowed range 1..")),
    ((PRESET,), dict(cpus=-1), ValueError, R("cpus=-1 is outside the allowed range 1..")),
    ((PRESET,), dict(cpus=10**6), ValueError, R("cpus=1000000 is outside the allowed range 1..")),
    ((PRESET,), dict(cpus="1"), TypeError, "cpus must be an int, not str"),
    ((PRESET,), dict(cpus=1.0), TypeError, "cpus must be an int, not float"),
    ((PRESET,), dict(hz=7), ValueError, R("hz=7 must divide 10^9")),
    ((PRESET,), dict(hz=3000), ValueError, R("hz=3000 must divide 10^9")),
    ((PRESET,), dict(hz=0), ValueError, R("hz=0 is outside the allowed range 1..100000")),
    ((PRESET,), dict(hz=200_000), ValueError, R("hz=200000 is outside the allowed range 1..100000")),
    ((PRESET,), dict(hz=1000.0), TypeError, "hz must be an int, not float"),
    ((PRESET,), dict(seed=-1), ValueError, R("seed=-1 is outside the allowed range 0..18446744073709551615")),
    ((PRESET,), dict(seed=2**64), ValueError, R(f"seed={2**64} is outside the allowed range 0..")),
    ((PRESET,), dict(seed=10**400), ValueError, R(f"seed={10**400} is outside the allowed range 0..18446744073709551615")),
    # Python prints no int of more than 4300 digits
    ((PRESET,), dict(seed=10**5000), ValueError,
     R("seed=<an int of 16610 bits> is outside the allowed range 0..18446744073709551615")),
    ((PRESET,), dict(seed=-10**5000), ValueError, R("seed=<a negative int of 16610 bits> is outside the allowed range")),
    ((PRESET,), dict(seed=1.5), TypeError, "seed must be an int, not float"),
    ((PRESET,), dict(seed=True), TypeError, "seed must be an int, not bool"),
    ((PRESET,), dict(record="all"), ValueError, R("record='all' is not one of ('counters', 'events', 'series')")),
    ((PRESET,), dict(record=None), ValueError, R("record=None is not one of")),
    ((PRESET,), dict(on_full="drop"), ValueError, R("on_full='drop' is not one of ('raise', 'overwrite')")),
    ((PRESET,), dict(series_every=0), ValueError, R("series_every=0 is outside the allowed range 1..")),
    ((PRESET,), dict(max_tasks=0), ValueError, R("max_tasks=0 is outside the allowed range 1..10000000")),
    ((PRESET,), dict(max_tasks=10**8), ValueError, R("max_tasks=100000000 is outside the allowed range")),
    ((PRESET,), dict(switch_cost_ns=10**7), ValueError,
     R("switch_cost_ns=10000000 is outside the allowed range 0..1000000")),
    ((PRESET,), dict(hz=100, switch_cost_ns=10**7 + 1), ValueError, R("0..10000000")),
    ((PRESET,), dict(max_trace_bytes=-1), ValueError, R("max_trace_bytes=-1 is outside the allowed range 0..")),
    ((PRESET,), dict(max_trace_bytes=1e6), TypeError, "max_trace_bytes must be an int, not float"),
    ((PRESET,), dict(record="series", series_fields=["nope"]), KeyError, "unknown task field 'nope'"),
    ((PRESET,), dict(record="series", series_fields=["prio"] * 17), ValueError, "at most 16"),
    # checked whatever `record` is (they were ignored unless record="series")
    ((PRESET,), dict(series_fields=["nope"]), KeyError, "unknown task field 'nope'"),
    ((PRESET,), dict(record="events", series_fields=["prio"] * 17), ValueError,
     R("series_fields has 17 fields: at most 16 can be sampled")),
    ((PRESET,), dict(series_fields="prio"), TypeError, R("series_fields must be a list of field names, not 'prio'")),
    ((PRESET,), dict(series_fields=["prio", 3]), TypeError, R("series_fields must be a list of field names, not ['prio', 3]")),
    ((PRESET,), dict(series_fields=5), TypeError, R("series_fields must be a list of field names, not 5")),
    ((PRESET,), dict(series_fields=["prio\x00junk"]), ValueError, R("series field 'prio\\x00junk' contains a NUL")),
])
def test_bad_simulator_arguments_raise_naming_the_value(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ps.Simulator(*args, **kwargs)


# ---------------------------------------------------------------- calls on a running simulator

HOG = ps.programs.cpu_hog

CALLS = [
    # spawn
    ("spawn str", lambda s: s.spawn("prog"), TypeError, "spawn needs a Program, not str"),
    ("spawn bool", lambda s: s.spawn(True), TypeError, "spawn needs a Program, not bool"),
    ("spawn None", lambda s: s.spawn(None), TypeError, "spawn needs a Program, not NoneType"),
    ("spawn nice 20", lambda s: s.spawn(HOG(), nice=20), ValueError,
     R("nice=20 is outside the allowed range -20..19")),
    ("spawn nice -21", lambda s: s.spawn(HOG(), nice=-21), ValueError,
     R("nice=-21 is outside the allowed range -20..19")),
    ("spawn nice float", lambda s: s.spawn(HOG(), nice=1.0), TypeError, "nice must be an int, not float"),
    ("spawn nice bool", lambda s: s.spawn(HOG(), nice=True), TypeError, "nice must be an int, not bool"),
    ("spawn name", lambda s: s.spawn(HOG(), name=5), TypeError, "name must be a str, not int"),
    ("spawn name NUL", lambda s: s.spawn(HOG(), name="hog\x00junk"), ValueError,
     R("name 'hog\\x00junk' contains a NUL character")),
    ("spawn init NUL", lambda s: s.spawn(HOG(), init={"sleep_avg\x00junk": 5}), ValueError,
     R("init field 'sleep_avg\\x00junk' contains a NUL character")),
    ("spawn init key int", lambda s: s.spawn(HOG(), init={5: 5}), TypeError, "init field must be a str, not int"),
    ("spawn policy", lambda s: s.spawn(HOG(), policy="batch"), ValueError,
     R("policy 'batch' is not one of ['fifo', 'normal', 'rr']")),
    ("spawn rt 0", lambda s: s.spawn(HOG(), policy="fifo", rt_priority=0), ValueError,
     R("rt_priority=0 is outside the allowed range 1..99")),
    ("spawn rt 100", lambda s: s.spawn(HOG(), policy="rr", rt_priority=100), ValueError,
     R("rt_priority=100 is outside the allowed range 1..99")),
    ("spawn rt normal", lambda s: s.spawn(HOG(), rt_priority=5), ValueError,
     R("rt_priority=5 is outside the allowed range 0..0")),
    ("spawn rt float", lambda s: s.spawn(HOG(), policy="fifo", rt_priority=5.0), TypeError,
     "rt_priority must be an int, not float"),
    ("spawn cpus_allowed", lambda s: s.spawn(HOG(), cpus_allowed=[1]), ValueError,
     R("cpu in cpus_allowed=1 is outside the allowed range 0..0")),
    ("spawn cpus_allowed empty", lambda s: s.spawn(HOG(), cpus_allowed=[]), ValueError,
     "cpus_allowed is empty"),
    ("spawn init huge", lambda s: s.spawn(HOG(), init={"sleep_avg": 10**30}), ValueError,
     R(f"init['sleep_avg']={10**30} is outside the allowed range -2147483648..4294967295")),
    ("spawn cpu 1", lambda s: s.spawn(HOG(), cpu=1), ValueError, R("cpu=1 is outside the allowed range 0..0")),
    ("spawn cpu -1", lambda s: s.spawn(HOG(), cpu=-1), ValueError, R("cpu=-1 is outside the allowed range 0..0")),
    ("spawn loop without end", lambda s: s.spawn(Program().loop(3).run(ms=1)), ValueError,
     R("the loop() opened at op 0 has no end()")),
    ("spawn forks a loop without end",
     lambda s: s.spawn(Program().fork(Program().run(ms=1).loop().sleep(ms=1)).run(ms=1)), ValueError,
     R("the loop() opened at op 1 has no end()")),
    ("spawn a new program with a bad nice", lambda s: s.spawn(Program().loop().wait("new").end(), nice=99),
     ValueError, R("nice=99 is outside the allowed range -20..19")),
    # renice / setscheduler / task
    ("renice unknown pid", lambda s: s.renice(99, 0), KeyError, R("no task with pid 99 (pids are 1..4)")),
    ("renice exited", lambda s: s.renice(4, 0), ValueError, "task 4 has exited"),
    ("renice pid 0", lambda s: s.renice(0, 0), ValueError, R("pid=0 is outside the allowed range 1..")),
    ("renice pid str", lambda s: s.renice("1", 0), KeyError, "no task named .1.; names: hog"),
    ("renice nice 20", lambda s: s.renice(1, 20), ValueError, R("nice=20 is outside the allowed range -20..19")),
    ("renice nice -21", lambda s: s.renice(1, -21), ValueError, R("nice=-21 is outside the allowed range -20..19")),
    ("renice nice float", lambda s: s.renice(1, 0.5), TypeError, "nice must be an int, not float"),
    ("setscheduler unknown pid", lambda s: s.setscheduler(99, "fifo", 5), KeyError,
     R("no task with pid 99 (pids are 1..4)")),
    ("setscheduler exited", lambda s: s.setscheduler(4, "rr", 5), ValueError, "task 4 has exited"),
    ("setscheduler rt 100", lambda s: s.setscheduler(1, "fifo", 100), ValueError,
     R("rt_priority=100 is outside the allowed range 1..99")),
    ("setscheduler rt 0", lambda s: s.setscheduler(1, "rr", 0), ValueError,
     R("rt_priority=0 is outside the allowed range 1..99")),
    ("setscheduler normal rt", lambda s: s.setscheduler(1, "normal", 5), ValueError,
     R("rt_priority=5 is outside the allowed range 0..0")),
    ("setscheduler policy", lambda s: s.setscheduler(1, "idle"), ValueError, "policy 'idle' is not one of"),
    ("task unknown pid", lambda s: s.task(99), KeyError, R("no task with pid 99 (pids are 1..4)")),
    ("latencies unknown pid", lambda s: s.latencies(99), KeyError, R("no task with pid 99 (pids are 1..4)")),
    ("set_affinity unknown pid", lambda s: s.set_affinity(99, [0]), KeyError,
     R("no task with pid 99 (pids are 1..4)")),
    ("set_affinity exited", lambda s: s.set_affinity(4, [0]), ValueError, "task 4 has exited"),
    ("set_affinity no cpu", lambda s: s.set_affinity(1, []), ValueError, "cpus_allowed is empty"),
    ("set_affinity cpu 1 of 1", lambda s: s.set_affinity(1, [1]), ValueError,
     R("cpu in cpus_allowed=1 is outside the allowed range 0..0")),
    ("task pid bytes", lambda s: s.task(b"1"), TypeError, "pid must be an int, not bytes"),
    # a str is a task's name
    ("task unknown name", lambda s: s.task("1"), KeyError, R("no task named '1'; names: hog, sleeper")),
    ("task pid 0", lambda s: s.task(0), ValueError, R("pid=0 is outside the allowed range 1..")),
    ("task pid huge", lambda s: s.task(2**40), ValueError, R(f"pid={2**40} is outside the allowed range")),
    # run
    ("run -1 s", lambda s: s.run(seconds=-1), ValueError, R("seconds=-1 is outside the allowed range 0..1000000")),
    ("run nan s", lambda s: s.run(seconds=math.nan), ValueError, R("seconds=nan is outside the allowed range")),
    ("run inf s", lambda s: s.run(seconds=math.inf), ValueError, R("seconds=inf is outside the allowed range")),
    ("run 1e7 s", lambda s: s.run(seconds=1e7), ValueError, R("seconds=10000000.0 is outside the allowed range")),
    ("run str", lambda s: s.run("1"), TypeError, "seconds must be a number, not str"),
    ("run bool", lambda s: s.run(True), TypeError, "seconds must be a number, not bool"),
    ("run both", lambda s: s.run(seconds=1, ticks=5), TypeError, R("run() takes exactly one of seconds= or ticks=")),
    ("run neither", lambda s: s.run(), TypeError, R("run() takes exactly one of seconds= or ticks=")),
    ("run ticks -1", lambda s: s.run(ticks=-1), ValueError, R("ticks=-1 is outside the allowed range 0..1000000000")),
    ("run ticks huge", lambda s: s.run(ticks=10**10), ValueError, R("ticks=10000000000 is outside the allowed range")),
    ("run ticks float", lambda s: s.run(ticks=1.5), TypeError, "ticks must be an int, not float"),
    ("run ticks 10**400", lambda s: s.run(ticks=10**400), ValueError,
     R(f"ticks={10**400} is outside the allowed range 0..1000000000")),
    ("run seconds 10**400", lambda s: s.run(seconds=10**400), ValueError,
     R(f"seconds={10**400} is outside the allowed range 0..1000000")),
    ("source every_ms -10**400", lambda s: s.source("c", every_ms=-10**400), ValueError,
     R(f"every_ms={-10**400} is outside the allowed range 1e-06..")),
    # parameters
    ("set_param unknown", lambda s: s.set_param("nope", 1), KeyError, "unknown parameter 'nope' for policy o1"),
    ("set_param range", lambda s: s.set_param("max_sleep_avg", 0), ValueError,
     R("max_sleep_avg=0 is outside the allowed range 1..1000000")),
    ("set_param huge", lambda s: s.set_param("starvation_limit", 2**70), ValueError,
     R(f"starvation_limit={2**70} is outside the allowed range")),
    ("set_param str", lambda s: s.set_param("max_sleep_avg", "x"), TypeError, "max_sleep_avg must be an int, not str"),
    ("set_param float", lambda s: s.set_param("max_sleep_avg", 10.0), TypeError, "max_sleep_avg must be an int, not float"),
    ("set_param name", lambda s: s.set_param(5, 1), TypeError, "parameter name must be a str, not int"),
    ("set_param name NUL", lambda s: s.set_param("max_sleep_avg\x00junk", 5), ValueError,
     R("parameter name 'max_sleep_avg\\x00junk' contains a NUL character")),
    ("set_param name surrogate", lambda s: s.set_param("max_sleep_avg\udc80", 5), ValueError,
     R("parameter name 'max_sleep_avg\\udc80' cannot be encoded as UTF-8")),
    ("set_param cross", lambda s: s.set_param("min_timeslice", 300), ValueError,
     "min_timeslice=300 must not exceed max_timeslice=200"),
    # sources
    ("source none", lambda s: s.source("c"), TypeError, R("source() takes exactly one of every_ms=, every_us=, poisson_ms=; got []")),
    ("source two", lambda s: s.source("c", every_ms=1, poisson_ms=1), TypeError, R("got ['every_ms', 'poisson_ms']")),
    ("source -1", lambda s: s.source("c", every_ms=-1), ValueError, R("every_ms=-1 is outside the allowed range 1e-06..")),
    ("source 0", lambda s: s.source("c", every_ms=0), ValueError, R("every_ms=0 is outside the allowed range")),
    ("source nan", lambda s: s.source("c", poisson_ms=math.nan), ValueError, R("poisson_ms=nan is outside")),
    ("source inf", lambda s: s.source("c", every_us=math.inf), ValueError, R("every_us=inf is outside the allowed range 0.001..")),
    ("source huge", lambda s: s.source("c", every_ms=1e10), ValueError, R("every_ms=10000000000.0 is outside")),
    ("source str rate", lambda s: s.source("c", every_ms="1"), TypeError, "every_ms must be a number, not str"),
    ("source channel int", lambda s: s.source(5, every_ms=1), TypeError, "a channel is named by a non-empty str, not 5"),
    ("source channel empty", lambda s: s.source("", every_ms=1), TypeError, "a channel is named by a non-empty str, not ''"),
    ("source channel NUL", lambda s: s.source("dev\x00junk", every_ms=1), ValueError,
     R("channel name 'dev\\x00junk' contains a NUL character")),
    ("source count -1", lambda s: s.source("c", every_ms=1, count=-1), ValueError, R("count=-1 is outside the allowed range 0..")),
    ("source count float", lambda s: s.source("c", every_ms=1, count=2.0), TypeError, "count must be an int, not float"),
    ("source start -1", lambda s: s.source("c", every_ms=1, start_ms=-1), ValueError, R("start_ms=-1 is outside the allowed range 0..")),
    # reading
    ("runqueue 1", lambda s: s.runqueue(1), ValueError, R("cpu=1 is outside the allowed range 0..0")),
    ("latencies pid 0", lambda s: s.latencies(0), ValueError, R("pid=0 is outside the allowed range 1..")),
    ("events off", lambda s: s.events(), RuntimeError, "the event log is off"),
    ("series off", lambda s: s.series("prio"), RuntimeError, "series are off"),
]


@pytest.mark.parametrize("call,exc,match", [c[1:] for c in CALLS], ids=[c[0] for c in CALLS])
def test_a_bad_call_raises_naming_the_value_and_changes_nothing(call, exc, match):
    assert_fails_and_changes_nothing(call, exc, match)


def test_a_failed_call_can_be_retried_correctly():
    sim, twin = build(), build()
    with pytest.raises(ValueError):
        sim.renice(1, 20)
    sim.renice(1, 19)
    twin.renice(1, 19)
    sim.run(seconds=0.5)
    twin.run(seconds=0.5)
    assert state(sim) == state(twin)
    assert sim.task(1).nice == 19


@pytest.mark.parametrize("ticks,exc,match", [
    (-1, ValueError, R("ticks=-1 is outside the allowed range 0..")),
    (1.5, TypeError, "ticks must be an int, not float"),
    (True, TypeError, "ticks must be an int, not bool"),
    (10**20, ValueError, R(f"ticks={10**20} is outside the allowed range")),
])
def test_step_validates_its_argument_like_run(ticks, exc, match):
    assert_fails_and_changes_nothing(lambda s: s.step(ticks), exc, match)


@pytest.mark.parametrize("how", ["constructor", "set_param"])
def test_a_bool_parameter_value_is_a_type_error(how):
    if how == "constructor":
        with pytest.raises(TypeError, match="max_sleep_avg must be an int, not bool"):
            ps.Simulator(PRESET, params={"max_sleep_avg": True})
    else:
        assert_fails_and_changes_nothing(lambda s: s.set_param("max_sleep_avg", True), TypeError,
                                         "max_sleep_avg must be an int, not bool")


def test_a_failed_set_params_dict_is_all_or_nothing():
    sim = build()
    before = sim.params
    with pytest.raises(ValueError, match=R("max_sleep_avg=0 is outside")):
        sim._core.set_params({"starvation_limit": 5, "max_sleep_avg": 0})
    assert sim.params == before


# ---------------------------------------------------------------- programs

def _program_ops():
    return Program().run(ms=1).loop(2).sleep(ms=1)  # one open loop


PROGRAM_CALLS = [
    ("run -1", lambda p: p.run(ms=-1), ValueError, R("=-1 is not allowed: durations must be finite and >= 0")),
    ("run nan", lambda p: p.run(ms=math.nan), ValueError, R("=nan is not allowed")),
    ("run inf", lambda p: p.run(us=math.inf), ValueError, R("=inf is not allowed")),
    ("sleep -0.5", lambda p: p.sleep(us=-0.5), ValueError, R("=-0.5 is not allowed")),
    ("io nan", lambda p: p.io(ns=math.nan), ValueError, R("=nan is not allowed")),
    ("run above 1e6 s", lambda p: p.run(s=10**6 + 1), ValueError,
     R("duration 1000001000000000 ns is too large: the allowed range is 0..1000000000000000 ns")),
    ("run 1e15+1 ns", lambda p: p.run(ns=10**15 + 1), ValueError, R("duration 1000000000000001 ns is too large")),
    ("run 10**400 ns", lambda p: p.run(ns=10**400), ValueError,
     R(f"const value={10**400} is too large: the allowed range is 0..1000000000000000 ns")),
    ("sleep -10**400 ms", lambda p: p.sleep(ms=-10**400), ValueError,
     R(f"const value={-10**400} is not allowed: durations must be finite and >= 0")),
    ("sleep uniform above 1e6 s", lambda p: p.sleep(s=ps.uniform(1, 2e6)), ValueError, "too large"),
    ("io exponential above 1e6 s", lambda p: p.io(ms=ps.exponential(2e9)), ValueError, "too large"),
    ("run normal above 1e6 s", lambda p: p.run(s=ps.normal(1, 3e6)), ValueError, "too large"),
    ("run str", lambda p: p.run(ms="1"), TypeError, "must be a number, not str"),
    ("run bool", lambda p: p.run(ms=True), TypeError, "must be a number, not bool"),
    ("run None", lambda p: p.run(ms=None), TypeError, "must be a number, not NoneType"),
    ("run no unit", lambda p: p.run(), TypeError, R("run() takes exactly one of ns=, us=, ms=, s=; got none")),
    ("run two units", lambda p: p.run(ms=1, us=1), TypeError, R("got ['ms', 'us']")),
    ("run bad unit", lambda p: p.run(hours=1), TypeError, R("run() got unknown unit 'hours'")),
    ("end without loop", lambda p: Program().end(), ValueError, R("end() without an open loop()")),
    ("loop 0", lambda p: p.loop(0), ValueError, R("loop count=0 is outside the allowed range 1..2147483647")),
    ("loop -1", lambda p: p.loop(-1), ValueError, R("loop count=-1 is outside the allowed range 1..")),
    ("loop 2**31", lambda p: p.loop(2**31), ValueError, R("loop count=2147483648 is outside the allowed range")),
    ("loop float", lambda p: p.loop(2.0), TypeError, "loop count must be an int, not float"),
    ("loop 9 deep", lambda p: [p.loop(2) for _ in range(8)], ValueError, "loops nest at most 8 deep"),
    ("wait int", lambda p: p.wait(3), TypeError, "a channel is named by a non-empty str, not 3"),
    ("wait empty", lambda p: p.wait(""), TypeError, "a channel is named by a non-empty str, not ''"),
    ("post None", lambda p: p.post(None), TypeError, "a channel is named by a non-empty str, not None"),
    ("post bytes", lambda p: p.post(b"x"), TypeError, R("a channel is named by a non-empty str, not b'x'")),
    ("post sync int", lambda p: p.post("c", sync=1), TypeError, "sync must be a bool, not int"),
    ("wait NUL", lambda p: p.wait("c\x00junk"), ValueError, R("channel name 'c\\x00junk' contains a NUL character")),
    ("post NUL", lambda p: p.post("c\x00junk"), ValueError, R("channel name 'c\\x00junk' contains a NUL character")),
    ("fork str", lambda p: p.fork("p"), TypeError, "fork needs a Program, not str"),
    ("fork bool", lambda p: p.fork(True), TypeError, "fork needs a Program, not bool"),
    ("fork n float", lambda p: p.fork(Program(), n=2.0), TypeError, "fork count must be an int, not float"),
    ("fork 0", lambda p: p.fork(Program(), n=0), ValueError, R("fork count=0 is outside the allowed range 1..")),
    ("nice 20", lambda p: p.nice(20), ValueError, R("nice=20 is outside the allowed range -20..19")),
    ("nice -21", lambda p: p.nice(-21), ValueError, R("nice=-21 is outside the allowed range -20..19")),
    ("nice float", lambda p: p.nice(1.0), TypeError, "nice must be an int, not float"),
    ("nice bool", lambda p: p.nice(False), TypeError, "nice must be an int, not bool"),
    ("setscheduler rr 0", lambda p: p.setscheduler("rr", 0), ValueError, R("rt_priority=0 is outside the allowed range 1..99")),
    ("setscheduler fifo 100", lambda p: p.setscheduler("fifo", 100), ValueError, R("rt_priority=100 is outside")),
    ("setscheduler normal 5", lambda p: p.setscheduler("normal", 5), ValueError, R("rt_priority=5 is outside the allowed range 0..0")),
    ("setscheduler batch", lambda p: p.setscheduler("batch"), ValueError, R("policy 'batch' is not one of")),
]


@pytest.mark.parametrize("name,call,exc,match", PROGRAM_CALLS, ids=[c[0] for c in PROGRAM_CALLS])
def test_a_bad_program_op_raises_naming_the_value_and_leaves_the_program_unchanged(name, call, exc, match):
    p = _program_ops()
    with pytest.raises(exc, match=match):
        call(p)
    if name == "loop 9 deep":
        return  # the first eight loop() calls were legitimate
    assert p.ops == _program_ops().ops and repr(p) == repr(_program_ops())
    # it still closes and runs as if the bad op was never attempted
    p.end()
    sim, twin = ps.Simulator(PRESET), ps.Simulator(PRESET)
    sim.spawn(p)
    twin.spawn(_program_ops().end())
    sim.run(seconds=0.01)
    twin.run(seconds=0.01)
    assert state(sim) == state(twin)


@pytest.mark.parametrize("make,match", [
    (lambda: ps.uniform(-1, 2), R("uniform lo=-1 is not allowed")),
    (lambda: ps.uniform(2, 1), R("uniform needs lo <= hi, got lo=2.0, hi=1.0")),
    (lambda: ps.uniform(0, math.inf), R("uniform hi=inf is not allowed")),
    (lambda: ps.exponential(math.nan), R("exponential mean=nan is not allowed")),
    (lambda: ps.normal(1, -1), R("normal sd=-1 is not allowed")),
    (lambda: ps.const(-3), R("const value=-3 is not allowed")),
])
def test_bad_distributions_raise_naming_the_value(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_an_endless_loop_without_time_is_rejected_by_end():
    for body in (lambda p: p.post("x"), lambda p: p.yield_(), lambda p: p.nice(3),
                 lambda p: p.fork(Program().run(ms=1)), lambda p: p.loop(3).post("x").end()):
        p = body(Program().loop())
        with pytest.raises(ValueError, match="an endless loop needs a run, sleep, io, wait or exit"):
            p.end()


def test_a_rejected_end_leaves_the_loop_open_so_it_can_be_fixed():
    p = Program().loop().post("x")
    ops = list(p.ops)
    with pytest.raises(ValueError, match="an endless loop needs a run, sleep, io, wait or exit"):
        p.end()
    assert p.ops == ops
    p.run(ms=1).end()  # now it has time in its body
    sim = ps.Simulator(PRESET)
    pid = sim.spawn(p)
    sim.run(seconds=0.0105)
    assert sim.task(pid).cpu_ns == 10_500_000


def test_a_program_with_an_unclosed_loop_cannot_be_spawned_and_changes_nothing():
    assert_fails_and_changes_nothing(lambda s: s.spawn(Program().loop().run(ms=1)), ValueError,
                                     R("the loop() opened at op 0 has no end()"))


# ---------------------------------------------------------------- the task limit

def test_a_fork_bomb_stops_at_max_tasks_without_crashing():
    sim = ps.Simulator(PRESET, max_tasks=50, debug=True)
    bomb = Program()
    bomb.loop().run(ms=1).fork(bomb).end()
    sim.spawn(bomb)
    with pytest.raises(RuntimeError, match=R("task limit reached (max_tasks=50 live tasks)")):
        sim.run(seconds=1)
    sim.check()
    c = sim.counters()
    assert c["live_tasks"] == 50 and c["forks"] == 49
    assert len(sim.stats()) == 50
    stuck = sim.now_ns
    for row in sim.stats():
        assert row["cpu_ns"] + row["wait_ns"] + row["sleep_ns"] == stuck - row["start_ns"]
    # it stays at the limit: the next run fails the same way, spawn refuses
    with pytest.raises(RuntimeError, match="max_tasks=50"):
        sim.run(seconds=1)
    with pytest.raises(ValueError, match=R("task limit reached: max_tasks=50 live tasks")):
        sim.spawn(ps.programs.cpu_hog())
    sim.check()
    assert len(sim.stats()) == 50


def test_exited_tasks_free_their_place_under_max_tasks():
    sim = ps.Simulator(PRESET, max_tasks=3)
    shell = Program().loop(20).fork(Program().run(ms=1)).sleep(ms=5).end()
    sim.spawn(shell)
    sim.spawn(ps.programs.cpu_hog(), nice=19)
    sim.run(seconds=0.5)
    assert sim.counters()["forks"] == 20
    sim.check()


# ---------------------------------------------------------------- garbage

garbage = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6), st.binary(max_size=3),
    st.lists(st.integers(-2, 2), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.tuples(st.integers()), st.just(object()), st.just(Program()), st.just(np.int64(3)),
    st.just(1j),
)

sim_kwargs = st.fixed_dictionaries({}, optional={
    "cpus": st.one_of(garbage, st.integers(0, 3)),
    "hz": st.one_of(garbage, st.sampled_from([100, 250, 1000, 1024, 3, 0])),
    "seed": st.one_of(garbage, st.integers(0, 2**64)),
    "params": st.one_of(garbage, st.dictionaries(st.sampled_from(PARAM_NAMES + ["nope"]),
                                                 st.one_of(garbage, st.integers(-5, 20000)), max_size=3)),
    "record": st.one_of(garbage, st.sampled_from(["counters", "events", "series", "all"])),
    "latencies": garbage,
    "series_fields": st.one_of(garbage, st.lists(st.sampled_from(["prio", "sleep_avg", "x", 3]), max_size=4)),
    "series_every": st.one_of(garbage, st.integers(0, 5)),
    "max_trace_bytes": st.one_of(garbage, st.integers(-1, 4096)),
    "on_full": st.one_of(garbage, st.sampled_from(["raise", "overwrite"])),
    "debug": garbage,
    "max_tasks": st.one_of(garbage, st.integers(0, 5)),
    "switch_cost_ns": st.one_of(garbage, st.integers(-1, 2_000_000)),
    "stagger_ticks": garbage,
})


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(preset=st.one_of(garbage, st.sampled_from(ps.presets())), kwargs=sim_kwargs)
def test_garbage_simulator_arguments_raise_only_expected_exceptions(preset, kwargs):
    try:
        sim = ps.Simulator(preset, **kwargs)
    except (ValueError, TypeError, KeyError):
        return
    # whatever was accepted must give a working simulator
    sim.spawn(ps.programs.interactive(1, 1))
    try:
        sim.step(ticks=3)
    except RuntimeError as e:  # a tiny max_trace_bytes may fill at once
        assert "max_trace_bytes" in str(e)
    sim.check()


OPS = ["run", "sleep", "io", "wait", "post", "loop", "end", "fork", "exit", "yield_", "nice",
       "setscheduler"]
durations = st.one_of(garbage, st.floats(0, 5), st.sampled_from([ps.uniform(0, 2), ps.exponential(1)]))
op_calls = st.tuples(
    st.sampled_from(OPS),
    st.lists(st.one_of(garbage, st.sampled_from(["a", "b", "fifo", "rr", "normal", "self"]),
                       st.integers(1, 3)), max_size=2),
    st.dictionaries(st.sampled_from(["ns", "us", "ms", "s", "n", "sync", "hours", "rt_priority"]),
                    durations, max_size=2),
)


@pytest.mark.slow
@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(op_calls, max_size=12))
def test_garbage_program_ops_raise_only_expected_exceptions_and_never_crash(calls):
    p = Program()
    for op, args, kwargs in calls:
        args = [p if a == "self" else a for a in args]
        before = list(p.ops)
        try:
            getattr(p, op)(*args, **kwargs)
        except (ValueError, TypeError):
            if op != "end":  # end() has a known bug (test above)
                assert p.ops == before
    sim = ps.Simulator(PRESET, max_tasks=20, latencies=False)
    try:
        sim.spawn(p)
    except (ValueError, TypeError):
        return
    # straight-line programs cannot hit the known zero-time-loop hangs
    # (test_engine.py); run those, and any program with time in every loop
    if any(op[0] in (5, 6) for op in p.ops):
        return
    try:
        sim.run(seconds=0.02)
    except RuntimeError as e:
        assert "max_tasks=20" in str(e) or "livelock" in str(e)
    sim.check()
    for row in sim.stats():
        end = row["exit_ns"] if row["exit_ns"] >= 0 else sim.now_ns
        assert row["cpu_ns"] + row["wait_ns"] + row["sleep_ns"] == end - row["start_ns"]


def _small(v):
    """Keep accepted run lengths short: garbage is for the checks, not for
    simulating a million seconds."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0.02:
        return 0.02 if isinstance(v, float) else 20
    return v


METHODS = {
    "spawn": lambda s, a, k: s.spawn(*a[:1], **k),
    "renice": lambda s, a, k: s.renice(*a),
    "setscheduler": lambda s, a, k: s.setscheduler(*a),
    "task": lambda s, a, k: s.task(*a[:1]),
    "run_seconds": lambda s, a, k: s.run(seconds=_small(a[0]) if a else None),
    "run_ticks": lambda s, a, k: s.run(ticks=_small(a[0]) if a else None),
    "set_param": lambda s, a, k: s.set_param(*a),
    "source": lambda s, a, k: s.source(*a[:1], **k),
    "latencies": lambda s, a, k: s.latencies(*a[:1]),
    "runqueue": lambda s, a, k: s.runqueue(*a[:1]),
    "post": lambda s, a, k: s.post(*a[:2]),
}
method_args = st.lists(st.one_of(garbage, st.sampled_from(PARAM_NAMES), st.integers(1, 5),
                                 st.sampled_from(["fifo", "rr", "normal", "dev", "new"]),
                                 st.just(ps.programs.cpu_hog())), min_size=0, max_size=3)
method_kwargs = st.dictionaries(
    st.sampled_from(["name", "nice", "policy", "rt_priority", "cpus_allowed", "cpu", "every_ms",
                     "every_us", "poisson_ms", "start_ms", "count"]),
    st.one_of(garbage, st.integers(-1, 5), st.floats(1, 50)), max_size=3)


@pytest.mark.slow
@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(method=st.sampled_from(sorted(METHODS)), args=method_args, kwargs=method_kwargs)
def test_garbage_method_calls_raise_only_expected_exceptions_and_fail_cleanly(method, args, kwargs):
    sim = _SHARED.copy()
    before = state(sim)
    try:
        METHODS[method](sim, args, kwargs)
    except EXPECTED:
        assert state(sim) == before
    sim.check()


_SHARED = build()


# ---------------------------------------------------------------- names with a NUL

@pytest.mark.parametrize("call,match", [
    (lambda: ps.formula(PRESET, "task_timeslice\x00junk", 120), "formula name 'task_timeslice\\x00junk'"),
    (lambda: ps.formula(PRESET, "task_timeslice", 120, params={"max_timeslice\x00junk": 50}),
     "parameter name 'max_timeslice\\x00junk'"),
    (lambda: ps.analysis.o1.task_timeslice(120, params={"max_timeslice\x00junk": 50}), "parameter name 'max_timeslice\\x00junk'"),
    (lambda: ps.analysis.houston.constants({"nice_const\x00junk": 8000}), "parameter name 'nice_const\\x00junk'"),
    (lambda: ps.policy_info(PRESET + "\x00junk"), "preset 'linux-2.5.65\\x00junk'"),
    (lambda: ps.preset_params(PRESET + "\x00junk"), "preset 'linux-2.5.65\\x00junk'"),
], ids=["formula", "formula params", "o1 params", "houston params", "policy_info", "preset_params"])
def test_a_name_with_a_nul_is_refused_not_cut_short(call, match):
    # the core reads names as C strings: "max_timeslice\x00junk" set max_timeslice
    with pytest.raises(ValueError, match=R(match + " contains a NUL character")):
        call()


@pytest.mark.parametrize("args, what", [
    ((99, "t", 0, 0, 0, 1, -1, {}, 0), "prog names no program"),
    ((0, "t", 100, 0, 0, 1, -1, {}, 0), "nice is outside -20..19"),
    ((0, "t", 0, 7, 0, 1, -1, {}, 0), "policy is not 0"),
    ((0, "t", 0, 1, 0, 1, -1, {}, 0), "rt_priority must be 1..99"),
    ((0, "t", 0, 0, 0, 0, -1, {}, 0), "cpus_allowed names no CPU"),
    ((0, "t", 0, 0, 0, 1, 1, {}, 0), "cpu is not one of the task's allowed CPUs"),
    ((0, "t", 0, 0, 0, 1, -1, {}, -5), "time_slice is outside"),
])
def test_the_core_checks_every_spawn_argument_itself(args, what):
    # the binding only converts: a caller of _core gets the core's message
    core = ps.Simulator("linux-2.5.65")._core
    core.add_program([(0, 0, 0, 0, 1e6, 0)])
    with pytest.raises(ValueError, match=what):
        core.spawn(*args)
    assert core.ntasks == 0


@pytest.mark.parametrize("preset, init, message", [
    ("houston-2003", {"run_avg": 2**31 - 1}, r"run_avg=2147483647 is outside the allowed range 0\.\.262144"),
    ("linux-2.5.65", {"sleep_avg": 10001}, r"sleep_avg=10001 is outside the allowed range 0\.\.10000"),
    ("linux-2.5.64", {"first_time_slice": 2}, r"first_time_slice=2 is outside the allowed range 0\.\.1"),
    ("linux-2.4.20", {"counter": -1}, r"counter=-1 is outside the allowed range 0\.\.1000000"),
])
def test_init_values_outside_the_policys_domain_are_refused_and_create_nothing(preset, init, message):
    # init={"run_avg": 2**31-1} overflowed houston_math's decay (seen with -fno-wrapv)
    sim = ps.Simulator(preset)
    with pytest.raises(ValueError, match=message):
        sim.spawn(ps.programs.cpu_hog(), init=init)
    assert sim._core.ntasks == 0
    sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=0.1)
    sim.check()


def test_the_binding_refuses_what_it_cannot_convert_exactly():
    # called directly, _core once wrapped a negative seed or mask silently and
    # cut names at a NUL (max_sleep_avg\x00junk set max_sleep_avg)
    core = ps.simulator._core
    with pytest.raises(ValueError, match=r"seed=-1 is outside the allowed range 0\.\.2\*\*64-1"):
        core.Sim("linux-2.5.65", 1, 1000, -1)
    with pytest.raises(ValueError, match="contains a NUL character"):
        core.Sim("linux-2.5.65", 1, 1000, 0, {"max_sleep_avg\x00junk": 5})
    sim = core.Sim("linux-2.5.65", 1, 1000, 0)
    sim.add_program([(0, 0, 0, 0, 1e6, 0)])
    with pytest.raises(ValueError, match=r"cpus_allowed mask=-1 is outside"):
        sim.spawn(0, "t", 0, 0, 0, -1, -1, {}, 0)
    with pytest.raises(ValueError, match="init field 'sleep_avg\\\\x00x' contains a NUL"):
        sim.spawn(0, "t", 0, 0, 0, 1, -1, {"sleep_avg\x00x": 1}, 0)
    pid = sim.spawn(0, "t", 0, 0, 0, 1, -1, {}, 0)
    with pytest.raises(ValueError, match=r"cpus_allowed mask=\d+ is outside"):
        sim.set_affinity(pid, 2**1100)
    assert sim.ntasks == 1 and sim.get_params()["max_sleep_avg"] == 10000


def test_an_unknown_parameter_is_answered_with_the_policys_parameters():
    # a 2.5 parameter on the 2.4 scheduler: the message says what it does take
    with pytest.raises(KeyError, match=r"unknown parameter 'max_sleep_avg' for policy linux24; "
                                       r"its parameters: proc_change_penalty, def_counter"):
        ps.Simulator("linux-2.4.20", params={"max_sleep_avg": 5})
