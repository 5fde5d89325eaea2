"""What the adapter (csrc/py_policy.c) lets a Python policy do that a C policy
does: apply a policy change in its own set_scheduler, and move the running
task the engine hands to migrate()."""
import pytest

import pysched as ps

class Fifo(ps.Policy):
    """One FIFO per CPU; a woken or new task preempts only the idle task."""

    name = "adapter-fifo"

    def setup(self):
        self.q = [[] for _ in range(self.cpus)]

    def task_spawn(self, p):
        self.q[p.cpu].append(p.pid)
        return self.curr(p.cpu).is_idle

    def wakeup(self, p, waker, sync):
        return self.task_spawn(p)

    def deactivate(self, p):
        self.q[p.cpu].remove(p.pid)

    def pick_next(self, cpu):
        return self.q[cpu][0] if self.q[cpu] else None


def test_a_set_scheduler_hook_does_not_keep_the_policy_from_changing():
    # before, a class defining set_scheduler replaced the engine's default,
    # which is what sets p.policy and p.rt_priority, and a policy may not
    # write them: the task stayed SCHED_NORMAL
    seen = []

    class Sched(Fifo):
        name = "adapter-sched"

        def set_scheduler(self, p, policy, rt_priority):
            # the engine sets the new values after the hook, as it sets
            # p.nice after set_nice: the hook sees the old ones
            seen.append((p.policy, p.rt_priority, policy, rt_priority))
            p.prio = 99 - rt_priority if policy else 120

    sim = ps.Simulator(Sched)
    a = sim.spawn(ps.programs.cpu_hog())
    sim.step(1)
    sim.setscheduler(a, "fifo", 5)
    t = sim.task(a)
    assert (t.policy, t.rt_priority, t.prio) == ("fifo", 5, 94)
    sim.setscheduler(a, "rr", 7)
    assert (sim.task(a).policy, sim.task(a).rt_priority) == ("rr", 7)
    assert seen == [(0, 0, 1, 5), (1, 5, 2, 7)]


class Moving(Fifo):
    name = "adapter-moving"

    def migrate(self, p, dest):
        if p.on_rq:
            self.q[p.cpu].remove(p.pid)
        p.cpu = dest
        if p.on_rq:
            self.q[dest].append(p.pid)
            if self.curr(dest).is_idle:
                self.resched(dest)


def test_migrate_may_move_the_running_task_the_engine_hands_it():
    # a running task whose affinity excludes its CPU is moved at its next
    # schedule(), while it is still that CPU's current task: before, the
    # adapter refused its cpu write ("it is running") and the step failed
    sim = ps.Simulator(Moving, cpus=2, record="events")
    a = sim.spawn(ps.programs.cpu_hog(), cpu=0)
    sim.step(1)
    sim.set_affinity(a, [1])
    sim.step(1)
    assert sim.runqueue(1)["curr"] == a and sim.runqueue(0)["curr"] == 0
    assert sim.task(a).cpu == 1
    sim.check()


def test_a_policy_may_not_move_a_running_task_outside_migrate():
    class Mover(Fifo):
        name = "adapter-mover"

        def tick(self, cpu, p):
            if not p.is_idle:
                p.cpu = 1 - cpu

    sim = ps.Simulator(Mover, cpus=2)
    sim.spawn(ps.programs.cpu_hog(), cpu=0)
    with pytest.raises(ps.PolicyError, match="it is running: the engine moves it"):
        sim.step(1)
