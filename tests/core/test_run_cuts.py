"""Results never depend on how a run was cut.  A seeded random workload --
any built-in preset, 1-8 CPUs, HZ 100/250/1000, ticks together or
staggered, programs that compute, sleep, do I/O, wait and post on channels,
fork children that exit, yield, renice themselves and change their own
affinity, device sources, and syscalls from Python between steps (a
set_affinity that moves a running task within the call among them) -- is driven three ways: one run() per
stretch between syscalls, the same stretches cut in random chunks, and
every tick stepped alone.  The three must agree on every output, event for
event.

PYSCHED_CUT_CASES sets how many workloads (CI's sanitizer stage runs
thousands); each is named by its seed, so a failure is reproduced with
`case(seed)`."""
import os
import random

import numpy as np
import pytest

import pysched as ps
from pysched import Program

CASES = int(os.environ.get("PYSCHED_CUT_CASES", "300"))
# the built-in presets (another test may have registered a policy of its own)
PRESETS = [p for p in ps.presets() if p.startswith(("linux-", "houston-"))]


def duration(r):
    """A random duration keyword, constant or drawn."""
    ms = r.choice([0.2, 0.7, 1, 3, 8, 25])
    return {"ms": r.choice([ms, ps.uniform(ms / 4, ms * 2), ps.exponential(ms)])}


def timer(prog, r):
    """rt-app's timer, its reference the task's start or the run's (a
    forked child's differ), absolute or relative."""
    kind = r.choice(["absolute", "relative", "run"])
    return prog.timer(r.choice([300, 2_000, 9_000]), relative=kind == "relative",
                      from_run_start=kind == "run")


def child_program(r):
    prog = Program()
    for _ in range(r.randint(1, 3)):
        r.choice([lambda: prog.run(**duration(r)), lambda: prog.sleep(**duration(r)),
                  lambda: prog.io(**duration(r)), lambda: timer(prog, r)])()
    return prog.exit()


def program(r, cpus):
    """A loop of 2-6 random ops and a run; a task whose loop ends may fork
    children that exit (at most 6 tasks x 30 rounds x 2 ops x 3 children)."""
    times = r.choice([None, None, r.randint(2, 30)])
    prog = Program().loop(times)
    for _ in range(r.randint(2, 6)):
        op = r.choice(["run", "run", "run", "sleep", "io", "wait", "post",
                       "fork" if times else "run", "yield", "nice", "affinity", "timer"])
        if op in ("run", "sleep", "io"):
            getattr(prog, op)(**duration(r))
        elif op == "timer":
            timer(prog, r)
        elif op == "wait":
            prog.wait(r.choice("ab")).run(**duration(r))
        elif op == "post":
            prog.post(r.choice("ab"), sync=r.random() < 0.5)
        elif op == "fork":
            prog.fork(child_program(r), r.randint(1, 3)).run(**duration(r))
        elif op == "yield":
            prog.yield_()
        elif op == "affinity":
            mask = r.randrange(1, 1 << cpus)
            prog.set_affinity([c for c in range(cpus) if mask >> c & 1])
        else:
            prog.nice(r.randint(-5, 10))
    return prog.run(**duration(r)).end()


def case(seed, **options):
    """The workload of seed: how to build it, how long to run, and the
    syscalls made from Python at given ticks; options are more Simulator
    arguments (reference=True ...)."""
    r = random.Random(seed)
    preset = r.choice(PRESETS)
    cpus = r.choice([1, 2, 2, 3, 4, 8])
    hz = r.choice([None, 100, 250, 1000])
    stagger = cpus > 1 and r.random() < 0.2
    ticks = r.randint(200, 1200)
    tasks = [(program(r, cpus), r.randint(-10, 10),
              r.randrange(cpus) if r.random() < 0.3 else None) for _ in range(r.randint(1, 6))]
    sources = [(r.choice("ab"), r.choice([3, 7, 20])) for _ in range(r.randint(0, 2))]
    calls = sorted((r.randrange(1, ticks), r.choice(["renice", "affinity", "rt", "post"]),
                    r.randrange(1, len(tasks) + 1), r.randrange(1 << cpus) or 1,
                    r.randint(-20, 19)) for _ in range(r.randint(0, 4)))

    def build():
        sim = ps.Simulator(preset, cpus=cpus, hz=hz, seed=seed, record="events",
                           stagger_ticks=stagger, max_tasks=2000, **options)
        for prog, nice, cpu in tasks:
            sim.spawn(prog, nice=nice, cpu=cpu)
        for chan, every in sources:
            sim.source(chan, every_ms=every)
        return sim

    return build, ticks, calls


def syscall(sim, what, pid, mask, value):
    """A syscall from Python; one to a task that has exited is refused the
    same way on every drive."""
    try:
        if what == "renice":
            sim.renice(pid, value)
        elif what == "affinity":
            sim.set_affinity(pid, [c for c in range(sim.cpus) if mask >> c & 1])
        elif what == "rt":
            sim.setscheduler(pid, "rr", 1 + abs(value))
        else:
            sim.post("a")
    except ValueError as e:
        return str(e)
    return None


def moves_running(sim, what, pid, mask, value):
    """The call is a set_affinity that moves a running task off its CPU."""
    on = [c for c in range(sim.cpus) if sim.runqueue(c)["curr"] == pid]
    return what == "affinity" and bool(on) and not mask >> on[0] & 1


def drive(build, ticks, calls, advance, seen=None):
    """Run the workload to `ticks`, making each call at its tick; advance(sim,
    n) moves the simulator n ticks on however it likes.  seen: a list that
    gets one bool per call, whether it moves a running task."""
    sim = build()
    said = []
    for at, *call in calls + [(ticks, None)]:
        advance(sim, at - sim.jiffies)
        if call[0] is not None:
            if seen is not None:
                seen.append(moves_running(sim, *call))
            said.append(syscall(sim, *call))
    return sim, said


def whole(sim, n):
    if n:
        sim.run(ticks=n)


def stepped(sim, n):
    for _ in range(n):
        sim.step(ticks=1)


def chunked(rng):
    def advance(sim, n):
        while n:
            k = min(n, rng.choice([1, 2, 3, 7, 50, 333]))
            sim.run(ticks=k)
            n -= k
    return advance


def outputs(sim, said):
    return (sim.now_ns, sim.jiffies, said, sim.stats().tobytes(), sim.events().tobytes(),
            sim.latencies().tobytes(), sim.counters(), sim.cpu_stats().tobytes())


def first_difference(a, b):
    names = ("now_ns", "jiffies", "syscall outcomes", "stats", "events", "latencies",
             "counters", "cpu_stats")
    return next(n for n, x, y in zip(names, a, b) if x != y)


@pytest.mark.parametrize("seed", range(CASES))
def test_one_run_equals_the_run_in_chunks_and_stepped_tick_by_tick(seed):
    build, ticks, calls = case(seed)
    one = outputs(*drive(build, ticks, calls, whole))
    for how, advance in (("chunked", chunked(random.Random(~seed))), ("stepped", stepped)):
        other = outputs(*drive(build, ticks, calls, advance))
        assert one == other, f"seed {seed}: the {how} run differs in {first_difference(one, other)}"


@pytest.mark.parametrize("cpus", [2, 3, 4, 8])
@pytest.mark.parametrize("preset", PRESETS)
def test_a_parent_that_forks_and_computes_runs_the_same_stepped(preset, cpus):
    """The parent computes on one CPU while its children exit on others:
    sched_exit gives it their unused slices and averages its sleep_avg
    there and then, whatever ticks its own CPU owes it."""
    child = Program().run(ms=ps.uniform(1, 20)).sleep(ms=ps.uniform(1, 5)).run(ms=3).exit()
    parent = Program().loop().fork(child, 2).run(ms=ps.uniform(1, 30)).end()
    runs = []
    for advance in (whole, stepped):
        for seed in range(3):
            sim = ps.Simulator(preset, cpus=cpus, seed=seed, record="events")
            sim.spawn(parent, name="parent")
            advance(sim, 3000)
            runs.append((sim.stats().tobytes(), sim.events().tobytes(), sim.counters()))
    assert sim.counters()["exits"] > 100
    assert runs[:3] == runs[3:]


def test_the_random_calls_move_running_tasks():
    """The workloads above exercise set_affinity of a running task, which
    moves it inside the call (2.5 and 6.x) or at its CPU's next schedule
    (2.4.20)."""
    seen = []
    for seed in range(300):
        build, ticks, calls = case(seed)
        if any(c[1] == "affinity" for c in calls):
            drive(build, ticks, calls, whole, seen)
    assert sum(seen) >= 10, f"{sum(seen)} of {len(seen)} calls moved a running task"
