"""The conformance kit's checks for sched_ext schedulers
(pysched.policy.testing.EXT_CHECKS, Simulator.ext_strict): each mistake a
scheduler can make fails its own check, naming the op, the task and the
time, as the kernel's error exit would; a correct scheduler passes them."""
import pickle

import pytest

import pysched as ps
from pysched import ext
from pysched.ext.examples import Central, GlobalFifo, PerCpu, Simple
from pysched.policy.testing import EXT_CHECKS, check_policy

CLIENT0 = 3  # busy_machine's pids: make 1, X 2, client0 3, client1 4 ...


class Global(ext.Scheduler):
    """Every task to the global DSQ, unless `mistake` says otherwise."""

    def select_cpu(self, p, prev_cpu, wake_flags):
        return prev_cpu

    def enqueue(self, p, enq_flags):
        self.dsq_insert(p, ext.SCX_DSQ_GLOBAL)


class Keeps(Global):
    """Takes client0 and never inserts it anywhere."""

    def enqueue(self, p, enq_flags):
        if p.pid != CLIENT0:
            super().enqueue(p, enq_flags)


class Forgets(Global):
    """Puts client0 on a DSQ of its own that ops.dispatch never consumes."""

    def init(self):
        self.create_dsq(7)

    def enqueue(self, p, enq_flags):
        self.dsq_insert(p, 7 if p.pid == CLIENT0 else ext.SCX_DSQ_GLOBAL)


class AllOnCpu0(Global):
    """Dispatches everything to CPU 0, client0 included once the kit
    pins it to the last CPU."""

    def enqueue(self, p, enq_flags):
        self.dsq_insert(p, self.local_on(0))


class Twice(Global):
    """Holds the tasks and inserts each twice when it dispatches."""

    def init(self):
        self.held = []

    def enqueue(self, p, enq_flags):
        self.held.append(p.pid)

    def dispatch(self, cpu, prev):
        while self.held:
            p = self.task(self.held.pop(0))
            self.dsq_insert(p, ext.SCX_DSQ_LOCAL)
            self.dsq_insert(p, ext.SCX_DSQ_LOCAL)


class Errs(Global):
    def tick(self, p):
        self.error("out of ideas")


def failures(report):
    return {(r.check, r.cpus): r.error for r in report.results if r.error}


@pytest.mark.parametrize("cls", [Simple, GlobalFifo, Central, PerCpu])
def test_the_examples_pass_every_sched_ext_check(cls):
    report = check_policy(cls, checks=EXT_CHECKS, cpus=(1, 2, 4))
    assert len(report.results) == 15 and not report.failures, str(report)


@pytest.mark.parametrize("cls, check, says", [
    (Keeps, "undispatched", "client0[3] failed to run for 0.750s; ops.enqueue took pid 3 at t="),
    (Forgets, "stall", "client0[3] failed to run for 0.750s; pid 3 waited on DSQ 0x7"),
    (Twice, "double insertion", "ops.dispatch at t=0 ns: make[1] inserted twice in one "
                                "ops.dispatch"),
    (Errs, "scx error", "ops.tick at t=1000000 ns: out of ideas"),
])
def test_each_mistake_fails_its_own_check_naming_op_task_and_time(cls, check, says):
    report = check_policy(cls, checks=EXT_CHECKS, cpus=(1, 2))
    assert set(failures(report)) == {(check, 1), (check, 2)}, str(report)
    assert all(says in e for e in failures(report).values()), str(report)


def test_dispatch_outside_the_affinity_fails_the_affinity_check():
    # the kit pins client0 to the last CPU half-way; on one CPU that is CPU 0
    report = check_policy(AllOnCpu0, checks=EXT_CHECKS, cpus=(1, 2))
    found = failures(report)
    assert list(found) == [("affinity", 2)], str(report)
    error = found["affinity", 2]
    assert error.startswith("ops.enqueue at t=1000000000 ns: ")
    assert error.endswith("target CPU 0 not allowed for client0[3]")


def test_without_the_strict_timeout_the_stall_goes_unseen_in_a_short_run():
    # the kernel's 30 s watchdog: the fair class never takes over in 2 s
    # and client0 simply never runs; the kit's 500 ms finds it
    sim = ps.policy.testing.busy_machine(Keeps, cpus=1)
    sim.run(seconds=2)
    assert sim.ext_exit_info.kind == ext.SCX_EXIT_NONE
    assert int(sim.stats()[CLIENT0 - 1]["cpu_ns"]) == 0
    sim.ext_strict(timeout_ms=500)
    sim.run(seconds=1)
    info = sim.ext_exit_info
    assert (info.kind, info.problem, info.pid, info.op) == (
        ext.SCX_EXIT_ERROR_STALL, "undispatched", CLIENT0, None)
    # the next watchdog check comes half a timeout after the setting
    assert info.time_ns == 2_250_000_000 and "client0[3] failed to run for 2.250s" in info.msg


def test_strict_double_insertion_is_an_error_where_the_kernel_skips_it():
    def run(strict):
        sim = ps.Simulator(Twice, cpus=1)
        if strict:
            sim.ext_strict()
        sim.spawn(ps.programs.cpu_hog(), name="a")
        sim.run(seconds=0.1)
        return sim.ext_exit_info
    assert run(False).kind == ext.SCX_EXIT_NONE
    info = run(True)
    assert (info.kind, info.problem, info.op, info.pid, info.time_ns) == (
        ext.SCX_EXIT_ERROR, "double insertion", "dispatch", 1, 0)


def test_copies_and_pickles_keep_the_strict_setting():
    sim = ps.Simulator(Keeps, cpus=1)
    sim.spawn(ps.programs.cpu_hog(), name="x")
    sim.spawn(ps.programs.cpu_hog(), name="y")
    sim.spawn(ps.programs.cpu_hog(), name="client0")
    sim.ext_strict(timeout_ms=100)
    for s in (sim.copy(), pickle.loads(pickle.dumps(sim)), sim):
        s.run(seconds=0.5)
        assert s.ext_exit_info.problem == "undispatched"
        assert s.ext_exit_info.time_ns == 150 * 10**6


def test_the_exit_info_of_a_running_scheduler_has_no_problem():
    sim = ps.Simulator(Simple, cpus=1)
    info = sim.ext_exit_info
    assert (info.problem, info.op, info.pid, info.time_ns, info.held_since_ns, info.dsq_id) == (
        None, None, 0, None, None, None)


def test_bad_strict_settings_and_checks_are_refused():
    sim = ps.Simulator(Simple, cpus=1)
    with pytest.raises(ValueError, match="timeout_ms=0 is outside the allowed range 1..30000"):
        sim.ext_strict(timeout_ms=0)
    with pytest.raises(ValueError, match="'linux-2.5.65' is not a sched_ext scheduler"):
        ps.Simulator("linux-2.5.65").ext_strict()
    with pytest.raises(ValueError, match=r"the checks \['stall'\] are for sched_ext schedulers"):
        check_policy("linux-2.5.65", checks=["stall"], cpus=(1,))
    with pytest.raises(ValueError, match="ext_timeout_ms=0 is outside"):
        check_policy(Simple, ext_timeout_ms=0)
    with pytest.raises(KeyError, match="'stal'"):
        check_policy(Simple, checks=["stal"])


def test_a_library_of_one_preset_stands_for_it_and_of_several_is_refused():
    one = ps.PolicyLibrary("one", None, None, ("linux-2.5.65",))
    assert ps.Simulator(one).preset == "linux-2.5.65"
    two = ps.PolicyLibrary("two", None, None, ("a", "b"))
    with pytest.raises(ValueError, match=r"'two' has the presets \['a', 'b'\]; name the one"):
        ps.Simulator(two)


def test_the_fallback_after_a_stall_leaves_every_slot_eevdfs_exited_ones_too():
    # the busy machine's compile forks jobs that exit before the stall: the
    # invariants, checked after every instant, read every slot as EEVDF's
    sim = ps.policy.testing.busy_machine(Keeps, cpus=2, debug=True)
    sim.ext_strict(timeout_ms=200)
    sim.run(seconds=2)
    assert sim.ext_exit_info.problem == "undispatched"
    assert (sim.stats()["exit_ns"] >= 0).any()
    sim.check()
