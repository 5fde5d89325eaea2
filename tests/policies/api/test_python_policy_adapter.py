"""What the adapter (csrc/binding/py_policy.c) lets a Python policy do that a C policy
does: apply a policy change in its own set_scheduler, move the running task
the engine hands to migrate(), count and log the moves it makes by setting
``cpu``, set ``static_prio``, and log its own events (``log_event``)."""
import pytest

import pysched as ps

KIND = {k: i for i, k in enumerate(ps.EVENT_KINDS)}


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
    # a running task whose affinity excludes its CPU is preempted and
    # handed to migrate() from its CPU's schedule(), while it is still that
    # CPU's current task, before set_affinity returns: before, the adapter
    # refused its cpu write ("it is running") and the step failed
    seen = []

    class Watching(Moving):
        name = "adapter-watching"

        def migrate(self, p, dest):
            seen.append((p.pid, p.cpu, dest, p.on_rq, self.curr(p.cpu).pid))
            super().migrate(p, dest)

    sim = ps.Simulator(Watching, cpus=2, record="events")
    a = sim.spawn(ps.programs.cpu_hog(), cpu=0)
    sim.step(1)
    sim.set_affinity(a, [1])
    assert seen == [(a, 0, 1, 1, a)]
    assert sim.task(a).cpu == 1 and sim.task(a).nr_migrations == 1 and sim.task(a).nivcsw == 1
    assert sim.runqueue(0)["curr"] == 0 and sim.runqueue(1)["curr"] == 0  # CPU 1 switches next
    sim.check()
    sim.step(1)
    assert sim.runqueue(1)["curr"] == a
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


def test_setting_cpu_is_a_migration_counted_and_logged():
    # every C policy that moves a task counts it and logs it (balance_o1,
    # the engine's default migrate); a Python policy moves a task by setting
    # its cpu, so the adapter does the same there
    sim = ps.Simulator(Moving, cpus=2, record="events")
    a = sim.spawn(ps.programs.cpu_hog(), cpu=0)
    b = sim.spawn(ps.programs.cpu_hog(), cpu=0)   # queued behind a
    sim.step(1)
    sim.set_affinity(b, [1])                     # not running: migrate() at once
    ev = sim.events()
    mig = ev[ev["kind"] == KIND["migrate"]]
    assert [(e["pid"], e["cpu"], e["other"], e["value"]) for e in mig] == [(b, 1, 0, 0)]
    assert sim.task(b).nr_migrations == 1 and sim.task(a).nr_migrations == 0
    sim.step(1)
    assert sim.runqueue(1)["curr"] == b


def test_static_prio_is_the_policys_to_set():
    class Static(Fifo):
        name = "adapter-static"

        def task_spawn(self, p):
            p.static_prio = 120 + p.nice
            return super().task_spawn(p)

        def set_nice(self, p, nice):
            p.static_prio = 120 + nice

    sim = ps.Simulator(Static)
    a = sim.spawn(ps.programs.cpu_hog(), nice=3)
    assert sim.task(a).static_prio == 123
    sim.renice(a, -4)
    assert sim.task(a).static_prio == 116

    class Bad(Static):
        name = "adapter-static-bad"

        def set_nice(self, p, nice):
            p.static_prio = 141

    sim = ps.Simulator(Bad)
    a = sim.spawn(ps.programs.cpu_hog())
    with pytest.raises(ps.PolicyError) as failure:
        sim.renice(a, 1)
        sim.step(1)
    assert "static_prio=141 is outside the allowed range 0..140" in str(failure.value.__cause__)


def test_a_policy_logs_its_own_events():
    class Logging(Fifo):
        name = "adapter-logging"

        def tick(self, cpu, p):
            if not p.is_idle and self.jiffies % 3 == 0:
                self.log_event("expire", cpu, p, value=1)
                self.log_event("prio", cpu, p, prio=7, value=p.prio)
                self.log_event("array_switch", cpu, value=self.jiffies)

    sim = ps.Simulator(Logging, record="events")
    a = sim.spawn(ps.programs.cpu_hog())
    sim.step(3)
    ev = sim.events()
    ev = ev[ev["kind"] >= KIND["prio"]]
    got = [(ps.EVENT_KINDS[e["kind"]], e["time_ns"], e["cpu"], e["pid"], e["other"], e["prio"],
            e["value"]) for e in ev]
    t = 3 * 10**6
    assert got == [("expire", t, 0, a, -1, 0, 1), ("prio", t, 0, a, -1, 7, 0),
                   ("array_switch", t, 0, -1, -1, 0, 3)]

    # with the event log off nothing is kept, and nothing fails
    sim = ps.Simulator(Logging)
    sim.spawn(ps.programs.cpu_hog())
    sim.step(3)


@pytest.mark.parametrize("kind, error", [
    ("switch", "the engine's"), ("wakeup", "the engine's"), ("fork", "the engine's"),
    ("exit", "the engine's"), ("migrate", "setting a task's cpu logs it"),
    ("nonsense", "not an event kind"), (4, "must be a str"),
])
def test_log_event_takes_the_policy_kinds_only(kind, error):
    class Logging(Fifo):
        name = "adapter-logging-bad"

        def tick(self, cpu, p):
            self.log_event(kind, cpu, p)

    sim = ps.Simulator(Logging, record="events")
    sim.spawn(ps.programs.cpu_hog())
    with pytest.raises(ps.PolicyError) as failure:
        sim.step(1)
    assert error in str(failure.value.__cause__)
