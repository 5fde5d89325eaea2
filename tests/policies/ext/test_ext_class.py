"""The sched_ext class (csrc/policies/ext/) running schedulers written in
Python (pysched.ext): the shares a weighted-vtime scheduler gives, the
round robin of a FIFO one, the global DSQ keeping every CPU busy, prev
kept running, the watchdog, the errors a scheduler's mistakes end it with,
and runs however cut, copied and pickled."""
import copy
import pickle

import numpy as np
import pytest

import pysched as ps
from pysched import ext
from pysched.ext.examples import Central, GlobalFifo, PerCpu, Simple

NICE0, NICE5 = 1024, 335  # sched_prio_to_weight[20], [25]


def hogs(sim, names_nices):
    return [sim.spawn(ps.programs.cpu_hog(), name=n, nice=nice) for n, nice in names_nices]


def cpu_of(sim, prefix):
    return sum(int(r["cpu_ns"]) for r in sim.stats() if r["name"].startswith(prefix))


@pytest.mark.parametrize("cpus", [1, 4])
def test_weighted_vtime_gives_the_kernel_weight_ratio(cpus):
    sim = ps.Simulator(Simple, cpus=cpus)
    hogs(sim, [(f"a{i}", 0) for i in range(cpus)] + [(f"b{i}", 5) for i in range(cpus)])
    sim.run(seconds=20)
    share = cpu_of(sim, "a") / (cpu_of(sim, "a") + cpu_of(sim, "b"))
    assert abs(share - NICE0 / (NICE0 + NICE5)) < 0.01
    assert sim.policy_instance.exit_info.kind == ext.SCX_EXIT_NONE


def test_fifo_mode_round_robins_at_the_slice():
    sim = ps.Simulator(Simple, params={"fifo": 1}, record="events")
    hogs(sim, [("a", 0), ("b", 5)])
    sim.run(seconds=1)
    # nice does not matter to FIFO: each runs SCX_SLICE_DFL (20 ms) in turn
    assert abs(cpu_of(sim, "a") - cpu_of(sim, "b")) <= ext.SCX_SLICE_DFL
    runs = [e for e in sim.events() if e["kind"] == ps.EVENT_KINDS.index("switch")]
    gaps = np.diff([int(e["time_ns"]) for e in runs])
    assert len(runs) >= 49 and set(gaps[1:-1]) == {ext.SCX_SLICE_DFL}


def test_global_fifo_never_leaves_a_cpu_idle_while_a_task_waits():
    sim = ps.Simulator(GlobalFifo, cpus=4)
    hogs(sim, [(f"h{i}", 0) for i in range(8)])
    sim.run(seconds=2)
    busy = [int(b) for b in sim.cpu_stats()["busy_ns"]]
    assert busy == [2 * 10**9] * 4
    assert cpu_of(sim, "h") == 8 * 10**9
    # round robin through one queue: every hog within a slice of its fair part
    assert all(abs(int(r["cpu_ns"]) - 10**9) <= ext.SCX_SLICE_DFL for r in sim.stats())


def test_prev_keeps_running_when_nothing_else_is_queued():
    sim = ps.Simulator(GlobalFifo, cpus=1)
    hogs(sim, [("alone", 0)])
    sim.run(seconds=1)
    st = sim.cpu_stats()
    # its slice ran out 49 times; each time the class kept it running
    assert int(st["nr_keep_prev"][0]) >= 49
    assert int(sim.stats()[0]["nivcsw"]) == 0


class Hoarder(ext.Scheduler):
    """Takes tasks in enqueue and never dispatches them (and no direct
    dispatch from the default select_cpu to an idle CPU)."""
    timeout_ms = 1000

    def select_cpu(self, p, prev_cpu, wake_flags):
        return prev_cpu

    def init(self):
        self.held = []

    def enqueue(self, p, enq_flags):
        self.held.append(p.pid)


def test_watchdog_ends_a_scheduler_that_never_dispatches_and_the_run_goes_on():
    sim = ps.Simulator(Hoarder, cpus=1)
    hogs(sim, [("starved", 0)])
    sim.run(seconds=1)
    assert sim.policy_instance.exit_info.kind == ext.SCX_EXIT_NONE
    assert cpu_of(sim, "starved") == 0
    sim.run(seconds=2)
    info = sim.policy_instance.exit_info
    assert info.kind == ext.SCX_EXIT_ERROR_STALL
    assert "starved[1] failed to run" in info.msg and "starved[1]" in info.dump
    # the fallback runs it (the global DSQ, as with no ops)
    assert cpu_of(sim, "starved") > 10**9 // 2


class BadInsert(ext.Scheduler):
    """enqueue makes the mistake `how`."""
    how = None

    def select_cpu(self, p, prev_cpu, wake_flags):
        return prev_cpu

    def init(self):
        self.create_dsq(7)

    def enqueue(self, p, enq_flags):
        if self.how == "affinity":
            self.dsq_insert(p, self.local_on(1), ext.SCX_SLICE_DFL)
        elif self.how == "twice":
            self.dsq_insert(p, ext.SCX_DSQ_GLOBAL)
            self.dsq_insert(p, ext.SCX_DSQ_GLOBAL)
        elif self.how == "bad_dsq":
            self.dsq_insert(p, 12345)
        elif self.how == "vtime_builtin":
            self.dsq_insert_vtime(p, ext.SCX_DSQ_GLOBAL, ext.SCX_SLICE_DFL, 0)


@pytest.mark.parametrize("how, says", [
    ("affinity", "target CPU 1 not allowed for pinned[1]"),
    ("twice", "pinned[1] already direct-dispatched"),
    ("bad_dsq", "non-existent DSQ 0x3039 for pinned[1]"),
    ("vtime_builtin", "cannot use vtime ordering for built-in DSQs (pinned[1])"),
])
def test_a_scheduler_mistake_ends_it_naming_the_op_task_and_time(how, says):
    cls = type(f"Bad_{how}", (BadInsert,), {"how": how})
    sim = ps.Simulator(cls, cpus=2)
    sim.spawn(ps.programs.cpu_hog(), name="pinned", cpus_allowed=[0])
    sim.run(seconds=1)
    info = sim.policy_instance.exit_info
    assert info.kind == ext.SCX_EXIT_ERROR
    assert info.msg.startswith("ops.enqueue at t=0 ns: ") and says in info.msg
    assert cpu_of(sim, "pinned") == 10**9  # the fallback ran it


def test_bad_kfunc_arguments_raise():
    class Probe(ext.Scheduler):
        def init(self):
            with pytest.raises(ValueError, match="dsq_id=-1 is outside"):
                self.create_dsq(-1)
            with pytest.raises(TypeError, match="dsq_id must be an int"):
                self.dsq_nr_queued("x")
            assert self.create_dsq(ext.SCX_DSQ_GLOBAL) == -22
            assert self.create_dsq(3) == 0 and self.create_dsq(3) == -17
            self.ok = True
    sim = ps.Simulator(Probe)
    assert sim.policy_instance.ok
    with pytest.raises(ValueError, match="timeout_ms=40000 is outside"):
        ps.Simulator(type("Slow", (ext.Scheduler,), {"timeout_ms": 40000}))


def workload(sim):
    hogs(sim, [("h0", 0), ("h1", 3), ("h2", -2)])
    sim.spawn(ps.programs.interactive(1, 10), name="ed")
    sim.spawn(ps.programs.interactive(3, 7), name="ed2", nice=5)


def outputs(sim):
    return sim.stats().tobytes(), sim.cpu_stats()["nr_dispatched"].tobytes(), \
        [tuple(e) for e in sim.events()]


@pytest.mark.parametrize("cls", [Simple, Central, PerCpu, GlobalFifo])
def test_runs_whole_in_chunks_and_stepped_agree(cls):
    sims = [ps.Simulator(cls, cpus=3, record="events") for _ in range(3)]
    for s in sims:
        workload(s)
    sims[0].run(seconds=0.3)
    for _ in range(6):
        sims[1].run(seconds=0.05)
    sims[2].step(ticks=300)
    assert outputs(sims[0]) == outputs(sims[1]) == outputs(sims[2])


@pytest.mark.parametrize("cls", [Simple, Central, PerCpu])
def test_copies_and_pickles_continue_as_the_original(cls):
    sim = ps.Simulator(cls, cpus=2, record="events")
    workload(sim)
    sim.run(seconds=0.2)
    twins = [copy.deepcopy(sim), pickle.loads(pickle.dumps(sim))]
    for s in [sim] + twins:
        s.run(seconds=0.3)
    assert outputs(sim) == outputs(twins[0]) == outputs(twins[1])


@pytest.mark.parametrize("cls", [Simple, Central, PerCpu, GlobalFifo])
def test_debug_checks_pass(cls):
    sim = ps.Simulator(cls, cpus=3, debug=True)
    workload(sim)
    sim.run(seconds=0.3)
    assert sim.policy_instance.exit_info.kind == ext.SCX_EXIT_NONE


def test_minimal_global_fifo_is_short():
    import inspect
    from pysched.ext.examples import simple
    src = inspect.getsource(simple.GlobalFifo)
    assert len(src.strip().splitlines()) <= 15


def test_rt_task_runs_above_the_class():
    sim = ps.Simulator(GlobalFifo, cpus=1)
    hogs(sim, [("hog", 0)])
    sim.spawn(ps.programs.cpu_hog(), name="rt", policy="fifo", rt_priority=10)
    sim.run(seconds=1)
    assert cpu_of(sim, "rt") == 10**9 and cpu_of(sim, "hog") == 0


def test_after_the_watchdog_eevdf_runs_the_tasks():
    sim = ps.Simulator(Hoarder, cpus=1, debug=True)
    hogs(sim, [("a", 0), ("b", 5)])
    sim.run(seconds=2)
    assert sim.policy_instance.exit_info.kind == ext.SCX_EXIT_ERROR_STALL
    before = cpu_of(sim, "a"), cpu_of(sim, "b")
    sim.run(seconds=12)
    a, b = cpu_of(sim, "a") - before[0], cpu_of(sim, "b") - before[1]
    # EEVDF's shares: the nice-to-weight table, 1024 : 335
    assert abs(a / (a + b) - NICE0 / (NICE0 + NICE5)) < 0.01
    # its tunables are the simulator's parameters
    assert "base_slice_ns" in sim.params or any("slice" in k for k in sim.params)


class Quitter(Simple):
    """The weighted-vtime example that calls scx_bpf_error at 0.15 s, in its
    dispatch (during a CPU's balance)."""

    def dispatch(self, cpu, prev):
        if self.now() >= 150_000_000:
            self.error("enough")
        super().dispatch(cpu, prev)


def test_runs_cut_copied_and_pickled_agree_across_the_fallback():
    def fresh():
        s = ps.Simulator(Quitter, cpus=3, record="events", debug=True)
        workload(s)
        return s
    sims = [fresh() for _ in range(3)]
    sims[0].run(seconds=0.4)
    for _ in range(8):
        sims[1].run(seconds=0.05)
    sims[2].step(ticks=400)
    assert outputs(sims[0]) == outputs(sims[1]) == outputs(sims[2])
    info = sims[0].policy_instance.exit_info
    assert info.kind == ext.SCX_EXIT_ERROR_BPF and info.msg.startswith("ops.dispatch at t=")
    twins = [copy.deepcopy(sims[0]), pickle.loads(pickle.dumps(sims[0]))]
    for s in [sims[0]] + twins:
        s.run(seconds=0.3)
    assert outputs(sims[0]) == outputs(twins[0]) == outputs(twins[1])


class WrongCpu(ext.Scheduler):
    """Keeps tasks, then dispatches each to CPU 1's local DSQ."""

    def init(self):
        self.held = []

    def select_cpu(self, p, prev_cpu, wake_flags):
        return prev_cpu

    def enqueue(self, p, enq_flags):
        self.held.append(p.pid)

    def dispatch(self, cpu, prev):
        for pid in self.held:
            self.dsq_insert(self.task(pid), self.local_on(1))
        self.held.clear()


def test_dispatch_outside_the_affinity_ends_the_scheduler_naming_dispatch():
    sim = ps.Simulator(WrongCpu, cpus=2, debug=True)
    sim.spawn(ps.programs.cpu_hog(), name="pinned", cpus_allowed=[0])
    sim.run(seconds=0.5)
    info = sim.policy_instance.exit_info
    assert info.kind == ext.SCX_EXIT_ERROR
    assert info.msg.startswith("ops.dispatch at t=0 ns: ")
    assert "target CPU 1 not allowed for pinned[1]" in info.msg
    assert cpu_of(sim, "pinned") == 5 * 10**8


def test_weights_are_the_kernels_cgroup_scale_of_nice():
    class Weights(ext.Scheduler):
        def init(self):
            self.told = []

        def set_weight(self, p, weight):
            self.told.append((p.pid, weight))

    sim = ps.Simulator(Weights)
    for nice in (-20, -5, 0, 5, 19):
        sim.spawn(ps.programs.cpu_hog(), name=f"n{nice}", nice=nice)
    # sched_weight_to_cgroup(sched_prio_to_weight[nice + 20]): w * 100 / 1024, rounded
    # (88761, 3121, 1024, 335 and 15)
    assert [int(r["weight"]) for r in sim.stats()] == [8668, 305, 100, 33, 1]
    sim.renice(3, 10)  # weight 110: 10.7 -> 11
    assert int(sim.stats()[2]["weight"]) == 11
    assert sim.policy_instance.told == [(1, 8668), (2, 305), (3, 100), (4, 33), (5, 1), (3, 11)]


class Recorder(ext.Scheduler):
    """The weighted-vtime example, recording its ops' calls."""

    def init(self):
        self.calls = []
        return self.create_dsq(0)

    def select_cpu(self, p, prev_cpu, wake_flags):
        self.calls.append(("select_cpu", p.pid, wake_flags))
        return prev_cpu

    def enqueue(self, p, enq_flags):
        self.calls.append(("enqueue", p.pid, enq_flags))
        self.dsq_insert(p, 0, ext.SCX_SLICE_DFL, enq_flags)

    def dispatch(self, cpu, prev):
        self.dsq_move_to_local(0)

    def runnable(self, p, enq_flags):
        self.calls.append(("runnable", p.pid, enq_flags))

    def running(self, p):
        self.calls.append(("running", p.pid))

    def stopping(self, p, runnable):
        self.calls.append(("stopping", p.pid, runnable))

    def quiescent(self, p, deq_flags):
        self.calls.append(("quiescent", p.pid, deq_flags))


def test_notifiers_and_flags_come_in_the_kernels_order():
    sim = ps.Simulator(Recorder)
    sim.spawn(ps.Program().run(ms=3).sleep(ms=5).run(ms=2).exit(), name="napper")
    sim.run(seconds=0.05)
    calls = [c for c in sim.policy_instance.calls if c[1] == 1]
    assert calls == [
        ("select_cpu", 1, ext.SCX_WAKE_FORK), ("runnable", 1, 0), ("enqueue", 1, 0),
        ("running", 1), ("stopping", 1, False), ("quiescent", 1, ext.SCX_DEQ_SLEEP),
        ("select_cpu", 1, ext.SCX_WAKE_TTWU), ("runnable", 1, ext.SCX_ENQ_WAKEUP),
        ("enqueue", 1, ext.SCX_ENQ_WAKEUP), ("running", 1), ("stopping", 1, False),
        ("quiescent", 1, ext.SCX_DEQ_SLEEP)]


@pytest.mark.parametrize("cls", [Central, PerCpu])
def test_central_and_per_cpu_keep_every_cpu_busy(cls):
    sim = ps.Simulator(cls, cpus=3)
    hogs(sim, [(f"h{i}", 0) for i in range(5)])
    sim.run(seconds=2)
    assert [int(b) for b in sim.cpu_stats()["busy_ns"]] == [2 * 10**9] * 3
    assert sim.policy_instance.exit_info.kind == ext.SCX_EXIT_NONE
    # FIFO queues at 20 ms slices: every hog runs
    assert min(int(r["cpu_ns"]) for r in sim.stats()) > 10**9 // 2


class AllOnCpu0(PerCpu):
    """PerCpu placing every task on CPU 0's queue."""

    def select_cpu(self, p, prev_cpu, wake_flags):
        return 0


def test_per_cpu_steals_for_an_idle_cpu():
    sim = ps.Simulator(AllOnCpu0, cpus=2)
    sim.spawn(ps.programs.cpu_hog(), name="pinned", cpus_allowed=[0])
    hogs(sim, [("h1", 0), ("h2", 0)])
    sim.run(seconds=1)
    # CPU 1 has work only from CPU 0's queue, and never idles
    assert int(sim.cpu_stats()["busy_ns"][1]) == 10**9
    assert sum(int(r["nr_migrations"]) for r in sim.stats()) > 0
    assert int(sim.stats()[0]["nr_migrations"]) == 0


@pytest.mark.parametrize("cls", [Simple, Central, PerCpu, GlobalFifo])
def test_the_examples_pass_the_conformance_kit(cls):
    # invariants after every instant, progress, determinism, copies,
    # pickles and bad input, with renice, setscheduler, affinity and yield;
    # and no error exit under the strict watchdog
    report = ps.policy.testing.check_policy(cls)
    assert str(report).count(": ok") == 22, str(report)


class Urgent(ext.Scheduler):
    """Global FIFO, but a task named `urgent` goes to the head of CPU 0's
    local DSQ with SCX_ENQ_PREEMPT when it wakes (kick=False), or to the
    global DSQ followed by kick_cpu(0, SCX_KICK_PREEMPT) (kick=True)."""
    kick = False

    def select_cpu(self, p, prev_cpu, wake_flags):
        return 0

    def enqueue(self, p, enq_flags):
        if p.name != "urgent":
            self.dsq_insert(p, ext.SCX_DSQ_GLOBAL, ext.SCX_SLICE_DFL, enq_flags)
        elif self.kick:
            self.dsq_insert(p, ext.SCX_DSQ_GLOBAL, ext.SCX_SLICE_DFL, enq_flags)
            self.kick_cpu(0, ext.SCX_KICK_PREEMPT)
        else:
            self.dsq_insert(p, ext.SCX_DSQ_LOCAL, ext.SCX_SLICE_DFL, enq_flags | ext.SCX_ENQ_PREEMPT)


@pytest.mark.parametrize("kick", [False, True])
def test_preempt_runs_a_waking_task_at_once(kick):
    cls = type("UrgentKick" if kick else "UrgentEnq", (Urgent,), {"kick": kick})
    sim = ps.Simulator(cls, latencies=True)
    hogs(sim, [("hog", 0)])
    sim.spawn(ps.Program().loop().sleep(ms=7.5).run(ms=1).end(), name="urgent")
    sim.run(seconds=1)
    # without preemption it would wait for the hog's 20 ms slice to end
    assert int(sim.stats()[1]["lat_max_ns"]) <= 10**6


class Flooder(ext.Scheduler):
    """Holds its tasks and dispatches them all at once, with a batch of 2."""
    dispatch_max_batch = 2

    def init(self):
        self.held = []

    def select_cpu(self, p, prev_cpu, wake_flags):
        return prev_cpu

    def enqueue(self, p, enq_flags):
        self.held.append(p.pid)

    def dispatch(self, cpu, prev):
        for pid in self.held:
            self.dsq_insert(self.task(pid), ext.SCX_DSQ_GLOBAL)
        self.held.clear()


def test_more_insertions_than_dispatch_max_batch_end_the_scheduler():
    sim = ps.Simulator(Flooder, debug=True)
    hogs(sim, [(f"h{i}", 0) for i in range(3)])
    sim.run(seconds=0.1)
    info = sim.policy_instance.exit_info
    assert info.kind == ext.SCX_EXIT_ERROR
    assert info.msg == ("ops.dispatch at t=0 ns: dispatch buffer overflow "
                        "(dispatch_max_batch=2) at h2[3]")


class TickInserter(ext.Scheduler):
    """Calls scx_bpf_dsq_insert from ops.tick, which may not."""

    def tick(self, p):
        self.dsq_insert(p, ext.SCX_DSQ_GLOBAL)


def test_a_kfunc_from_an_op_that_may_not_call_it_ends_the_scheduler():
    sim = ps.Simulator(TickInserter)
    hogs(sim, [("hog", 0)])
    sim.run(seconds=0.01)
    assert sim.policy_instance.exit_info.msg.startswith(
        "ops.tick at t=1000000 ns: scx_bpf_dsq_insert on hog[1]: only ops.select_cpu")


def test_idle_tracking_picks_distributes_and_claims():
    class Idle(ext.Scheduler):
        def init(self):
            # every CPU is idle before any task (reset_idle_masks); the
            # picks start after CPU 0 and each claims the CPU it returns
            self.picks = [self.pick_idle_cpu(0b1111) for _ in range(5)]
    sim = ps.Simulator(Idle, cpus=4)
    assert sim.policy_instance.picks == [1, 2, 3, 0, -16]

    class Claim(ext.Scheduler):
        def init(self):
            self.claims = [self.test_and_clear_cpu_idle(c) for c in (1, 1, 0)]
    assert ps.Simulator(Claim, cpus=2).policy_instance.claims == [True, False, True]


def test_select_cpu_dfl_places_wakers_on_idle_cpus():
    sim = ps.Simulator(GlobalFifo, cpus=4)
    hogs(sim, [(f"h{i}", 0) for i in range(4)])
    sim.run(seconds=0.5)
    # each hog found an idle CPU of its own and stayed there
    assert sorted(int(r["cpu"]) for r in sim.stats()) == [0, 1, 2, 3]
    assert all(int(r["cpu_ns"]) == 5 * 10**8 for r in sim.stats())


class Endless(ext.Scheduler):
    """Every task with a slice that never runs out."""

    def enqueue(self, p, enq_flags):
        self.dsq_insert(p, ext.SCX_DSQ_GLOBAL, ext.SCX_SLICE_INF)


def test_an_infinite_slice_runs_until_the_task_gives_the_cpu_up():
    sim = ps.Simulator(Endless, cpus=1)
    first, second = hogs(sim, [("first", 0), ("second", 0)])
    sim.run(seconds=1)
    # the first ran out the default slice it was spawned with, then the
    # second, inserted with SCX_SLICE_INF, never stopped
    assert cpu_of(sim, "first") == ext.SCX_SLICE_DFL
    assert cpu_of(sim, "second") == 10**9 - ext.SCX_SLICE_DFL
    assert int(sim.stats()[1]["slice"]) == -1
