"""spawn() without cpu= places a task on the allowed CPU with the fewest
runnable tasks (state RUNNING, queued or running), the lowest index on
ties.  The engine keeps those counts from one spawn to the next instead of
counting every task again (engine.c, ps_spawn); here each placement is
checked against the rule computed afresh in Python from the tasks' own
state, on random workloads where runs, forks, exits, sleeps, wakeups from
Python, renices, affinity changes and spawns with cpu= fall between the
spawns.  Under debug=True the engine also compares its counts with a
recount before every spawn and in every invariant check."""
import random

import pytest

import pysched as ps

PRESETS = ["linux-2.5.65", "linux-2.4.20", "linux-6.5-cfs", "linux-6.12-eevdf", "houston-2003"]


def expected_cpu(sim, allowed):
    """The rule, from the tasks' state: live tasks in state RUNNING per CPU."""
    st = sim.stats()
    live = st[(st["exit_ns"] < 0) & (st["state"] == 0)]
    load = [int((live["cpu"] == c).sum()) for c in range(sim.cpus)]
    return min(allowed, key=lambda c: (load[c], c))


def programs():
    return [
        ps.programs.cpu_hog(),
        ps.Program().loop().run(ms=1).sleep(ms=ps.uniform(1, 9)).end(),
        ps.Program().run(ms=2).exit(),
        ps.Program().wait("go").run(ms=1).loop().run(ms=1).sleep(ms=3).end(),
        ps.Program().run(ms=1).fork(ps.Program().run(ms=3).exit(), n=2).sleep(ms=2).exit(),
    ]


def random_workload(preset, seed, cpus, debug):
    rng = random.Random(seed)
    sim = ps.Simulator(preset, cpus=cpus, seed=seed, debug=debug)
    progs = programs()
    placed = 0
    for _ in range(60):
        action = rng.random()
        pids = [int(p) for p in sim.stats()["pid"][sim.stats()["exit_ns"] < 0]]
        if action < 0.55:
            allowed = sorted(rng.sample(range(cpus), rng.randint(1, cpus)))
            kwargs = {"cpus_allowed": allowed} if rng.random() < 0.5 else {}
            allowed = allowed if kwargs else list(range(cpus))
            prog = rng.choice(progs)
            if rng.random() < 0.15:
                sim.spawn(prog, cpu=allowed[0], **kwargs)
                continue
            want = expected_cpu(sim, allowed)
            pid = sim.spawn(prog, **kwargs)
            assert sim.task(pid).cpu == want, (seed, pid, allowed)
            placed += 1
        elif action < 0.75:
            sim.run(ticks=rng.randint(1, 6))
        elif action < 0.82:
            sim.post("go", rng.randint(1, 3))
        elif action < 0.9 and pids:
            sim.renice(rng.choice(pids), rng.randint(-20, 19))
        elif pids:
            sim.set_affinity(rng.choice(pids), sorted(rng.sample(range(cpus), rng.randint(1, cpus))))
    sim.check()
    return placed


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("seed", range(4))
def test_spawn_places_on_the_fewest_runnable(preset, seed):
    assert random_workload(preset, seed, cpus=1 + seed * 2, debug=seed % 2 == 0) > 10


def test_spawns_in_a_row_fill_the_cpus_evenly():
    """Without anything between them, spawns go round the CPUs: each
    takes the emptiest, the lowest index first."""
    sim = ps.Simulator("linux-2.5.65", cpus=4, debug=True)
    cpus = [sim.task(sim.spawn(ps.programs.cpu_hog())).cpu for _ in range(10)]
    assert cpus == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]


def test_placement_counts_what_a_run_changed():
    """Tasks that went to sleep in a run no longer count: the next spawn
    sees the CPU they left emptier."""
    sim = ps.Simulator("linux-2.5.65", cpus=2, debug=True)
    for _ in range(3):
        sim.spawn(ps.Program().run(ms=1).sleep(s=10), cpu=0)
    sim.spawn(ps.programs.cpu_hog(), cpu=1)
    assert sim.task(sim.spawn(ps.programs.cpu_hog())).cpu == 1
    sim.run(ticks=20)
    assert sim.task(sim.spawn(ps.programs.cpu_hog())).cpu == 0


def test_a_python_policy_moving_a_task_is_counted():
    """A Python policy that sends each spawned task to the last CPU moves
    it after the engine chose: the counts follow where it went."""
    class LastCpu(ps.policy.examples.RoundRobin):
        def task_spawn(self, p):
            p.cpu = self.cpus - 1
            return super().task_spawn(p)

    sim = ps.Simulator(LastCpu, cpus=3, debug=True)
    pids = [sim.spawn(ps.programs.cpu_hog()) for _ in range(4)]
    assert [sim.task(p).cpu for p in pids] == [2, 2, 2, 2]
    sim.check()
    sim.spawn(ps.programs.cpu_hog(), cpu=1)
    sim.check()


def test_a_python_policy_moving_another_task_while_spawning_is_counted():
    """A Python policy that, as a task is spawned, moves a waiting task of
    CPU 0 to CPU 1 changes counts the engine kept: the next spawn counts
    again, and goes where the tasks now are."""
    class Spreader(ps.policy.examples.RoundRobin):
        moving = False

        def task_spawn(self, p):
            preempt = super().task_spawn(p)
            waiting = [pid for pid in self.queue[0] if pid != self.curr(0).pid]
            if self.moving and waiting:
                self.queue[0].remove(waiting[0])
                self.task(waiting[0]).cpu = 1
                self.queue[1].append(waiting[0])
            return preempt

    sim = ps.Simulator(Spreader, cpus=2, debug=True)
    for _ in range(3):
        sim.spawn(ps.programs.cpu_hog(), cpu=0)
    sim.run(ticks=1)  # one of them runs on CPU 0, two wait
    assert sim.task(sim.spawn(ps.programs.cpu_hog())).cpu == 1  # counted: 3 and 0
    Spreader.moving = True
    assert sim.task(sim.spawn(ps.programs.cpu_hog())).cpu == 1  # 3 and 1; then one moves
    Spreader.moving = False
    assert list(sim.stats()["cpu"]) == [0, 1, 0, 1, 1]  # 2 and 3 now
    assert sim.task(sim.spawn(ps.programs.cpu_hog())).cpu == 0
    sim.check()
