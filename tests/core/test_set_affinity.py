"""set_affinity of a running task (issue 29, item 3): where the kernel has a
migration thread (2.5, Houston's 2.5.64-bk4) or a stopper (6.x), the task
is preempted and moved before the call returns; 2.4.20 has neither (its
sched.c has no set_cpus_allowed) and moves it as its CPU next schedules."""
import pickle

import pytest

import pysched as ps

MOVING = ["linux-2.5.65", "houston-2003", "linux-6.5-cfs", "linux-6.6-eevdf", "linux-6.12-eevdf"]


def running_on_cpu0(preset):
    sim = ps.Simulator(preset, cpus=2, record="events")
    for name in ("a", "b"):
        sim.spawn(ps.programs.cpu_hog(), name=name, cpus_allowed=[0])
    sim.run(0.0253)
    return sim, sim.runqueue(0)["curr"]


@pytest.mark.parametrize("preset", MOVING)
def test_the_running_task_has_moved_when_set_affinity_returns(preset):
    sim, pid = running_on_cpu0(preset)
    before = sim.task(pid)
    sim.set_affinity(pid, [1])
    t = sim.task(pid)
    assert t.cpu == 1 and sim.runqueue(0)["curr"] != pid
    assert t.on_rq and t.state == "running"          # queued on CPU 1 ...
    assert t.nr_migrations == before.nr_migrations + 1
    assert t.nivcsw == before.nivcsw + 1               # ... preempted, not blocked
    assert t.cpu_ns == before.cpu_ns                   # charged up to the call (run() synced it)
    sim.check()
    sim.run(0.001)                                     # CPU 1, idle, takes it at once
    assert sim.runqueue(1)["curr"] == pid and sim.task(pid).cpu == 1
    sim.check()


def test_under_2_4_20_it_moves_as_its_cpu_next_schedules():
    sim, pid = running_on_cpu0("linux-2.4.20")
    sim.set_affinity(pid, [1])
    assert sim.task(pid).cpu == 0 and sim.runqueue(0)["curr"] == pid   # no migration thread
    sim.check()
    sim.run(0.001)
    assert sim.task(pid).cpu == 1 and sim.runqueue(1)["curr"] == pid
    assert sim.runqueue(0)["curr"] != pid


@pytest.mark.parametrize("preset", MOVING + ["linux-2.4.20"])
def test_a_program_moves_itself_before_its_next_op(preset):
    sim = ps.Simulator(preset, cpus=2)
    prog = ps.Program().run(ms=3).set_affinity([1]).run(ms=3).set_affinity([0]).run(ms=3)
    a = sim.spawn(prog, cpu=0)
    sim.run(0.0035)
    t = sim.task(a)
    assert (t.cpu, sim.runqueue(1)["curr"], sim.runqueue(0)["curr"]) == (1, a, 0)
    assert t.nr_migrations == 1 and t.nivcsw == 1 and t.cpu_ns == 3_500_000
    sim.run(0.01)
    t = sim.task(a)
    assert t.nr_migrations == 2 and t.cpu_ns == 9_000_000
    sim.check()


def test_a_program_op_to_a_cpu_the_machine_lacks_is_refused():
    sim = ps.Simulator("linux-2.5.65", cpus=2)
    with pytest.raises(ValueError, match="set_affinity names cpu 3; this machine has cpus 0..1"):
        sim.spawn(ps.Program().set_affinity([0, 3]))
    with pytest.raises(ValueError, match="set_affinity to no CPU"):
        ps.Program().set_affinity([])
    with pytest.raises(ValueError, match=r"cpu in set_affinity=1024 is outside the allowed range 0\.\.1023"):
        ps.Program().set_affinity([1024])
    assert repr(ps.Program().set_affinity([1023]).run(ms=1)) == "Program(set_affinity, run)"


@pytest.mark.parametrize("preset", MOVING + ["linux-2.4.20"])
def test_a_program_moves_itself_past_cpu_63(preset):
    """A program's CPU sets are the model's (an op names one): 1,024 CPUs
    fit, two programs' sets stay apart, and a copy and a pickle keep them."""
    sim = ps.Simulator(preset, cpus=1024)
    a = sim.spawn(ps.Program().run(ms=3).set_affinity([900, 1023]).run(ms=3)
                  .set_affinity([64]).run(ms=3), cpu=0)
    b = sim.spawn(ps.Program().set_affinity([70]).run(ms=20), cpu=1)
    sim.run(0.0035)
    assert (sim.task(a).cpu, sim.task(a).cpus) == (900, [900, 1023])
    assert (sim.task(b).cpu, sim.task(b).cpus) == (70, [70])
    twins = [sim.copy(), pickle.loads(pickle.dumps(sim))]
    for s in [sim] + twins:
        s.run(0.01)
        assert (s.task(a).cpu, s.task(a).cpus, s.task(a).cpu_ns) == (64, [64], 9_000_000)
        s.check()
