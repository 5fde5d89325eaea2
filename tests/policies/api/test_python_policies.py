"""Policies written in Python (pysched.Policy) run by the C engine: they
share the CPU as designed, show their parameters and fields like a built-in
policy, copy and pickle with their state, and a hook that misbehaves gives
a clear error naming the hook, the time and the task -- never a crash."""
import gc
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import pysched as ps
from pysched.policy.examples import RoundRobin

HOG = ps.programs.cpu_hog


def hogs(policy, n=2, cpus=1, **kw):
    sim = ps.Simulator(policy, cpus=cpus, seed=1, **kw)
    for i in range(n):
        sim.spawn(HOG(), name=f"hog{i}")
    return sim


def shares(sim):
    cpu = sim.stats()["cpu_ns"]
    return cpu / cpu.sum()


# ---- it schedules as written ----

@pytest.mark.parametrize("timeslice", [100, 7])
def test_two_hogs_share_a_round_robin_cpu_half_and_half(timeslice):
    sim = hogs(RoundRobin, params={"timeslice": timeslice})
    sim.run(seconds=10)
    assert np.allclose(shares(sim), 0.5, atol=0.01)
    # they alternate every timeslice
    assert sim.stats()["nivcsw"].sum() == pytest.approx(10_000 / timeslice, abs=1)


def test_a_sleeper_gets_the_cpu_at_its_turn_not_at_once():
    sim = hogs(RoundRobin, n=3)
    sleeper = sim.spawn(ps.programs.interactive(1, 50), name="sleeper")
    sim.run(seconds=5)
    lat = sim.latencies(sleeper)
    # behind up to three 100-tick slices of hogs, never preempting them
    assert lat.max() <= 3 * 100_000_000 and lat.mean() > 10_000_000


def test_the_round_robin_passes_the_conformance_kit():
    report = ps.policy.testing.check_policy(RoundRobin)
    assert report, str(report)


# ---- like a built-in policy ----

def test_parameters_appear_in_params_follow_set_param_and_are_checked():
    sim = hogs(RoundRobin, params={"timeslice": 10})
    assert sim.params == {"timeslice": 10} and sim._policy.timeslice == 10
    sim.set_param("timeslice", np.int64(20))
    assert sim.params["timeslice"] == 20 and sim._policy.timeslice == 20
    with pytest.raises(ValueError, match="timeslice=0 is outside the allowed range 1..100000"):
        sim.set_param("timeslice", 0)
    with pytest.raises(KeyError, match="unknown parameter 'slice' for policy rr; its parameters: timeslice"):
        ps.Simulator(RoundRobin, params={"slice": 3})
    assert [p.name for p in ps.preset_params(RoundRobin)] == ["timeslice"]


class Credit(ps.Policy):
    """A toy with a task field and a runqueue field: credit earned asleep."""
    name = "credit-test"
    task_fields = ("credit",)
    rq_fields = ("picks",)
    params = {"bonus": ps.Param(5, 0, 100)}

    def setup(self):
        self.q = [[] for _ in range(self.cpus)]

    def task_spawn(self, p):
        p.time_slice = 10
        self.q[p.cpu].append(p.pid)
        return True

    def wakeup(self, p, waker, sync):
        p.credit += self.bonus
        return self.task_spawn(p)

    def deactivate(self, p):
        self.q[p.cpu].remove(p.pid)

    def tick(self, cpu, p):
        if not p.is_idle and p.credit:
            p.credit -= 1
        self.resched(cpu)       # the most credit runs, re-chosen every tick

    def pick_next(self, cpu):
        if not self.q[cpu]:
            return None
        self.rq(cpu).picks += 1
        return max(self.q[cpu], key=lambda pid: (self.task(pid).credit, -pid))


def test_task_and_runqueue_fields_show_in_task_stats_series_and_cpu_stats():
    sim = ps.Simulator(Credit, record="series", series_fields=["credit"])
    sleeper = sim.spawn(ps.programs.interactive(1, 3))
    sim.spawn(HOG(), init={"credit": 40})
    sim.run(seconds=0.2)
    assert "credit" in vars(sim.task(sleeper)) and sim.stats()["credit"].dtype == np.int64
    credit = sim.series("credit")[:, 1]     # the hog's: spent a tick at a time, never earned
    assert 39 <= credit[0] <= 40 and credit[-1] < credit[0] and (np.diff(credit) <= 0).all()
    assert sim.cpu_stats()["picks"][0] > 10 and sim.runqueue(0)["picks"] > 10
    assert sim.headline == ["credit"] and sim.policy == "credit-test"


def test_a_policy_registered_by_name_is_a_preset_like_the_others():
    ps.register_policy(Credit, name="credit")
    try:
        assert "credit" in ps.presets() and ps.policy_info("credit")["policy"] == "credit"
        sim = ps.Simulator("credit")
        sim.spawn(HOG())
        sim.run(seconds=0.05)
        ps.register_policy(Credit)  # the same class again: fine
        with pytest.raises(ValueError, match="policy name 'credit' is taken by .*Credit"):
            ps.register_policy(type("Other", (Credit,), {}), name="credit")
        with pytest.raises(ValueError, match="'linux-2.5.65' is a built-in preset's"):
            ps.register_policy(type("Other", (Credit,), {}), name="linux-2.5.65")
    finally:
        ps.policy.base._registered.pop("credit", None)
        Credit.name = "credit-test"


def test_a_declaration_mistake_is_named():
    bad = type("Bad", (RoundRobin,), {"task_fields": ("prio",)})
    with pytest.raises(ValueError, match="task field prio is a generic field"):
        ps.Simulator(bad)
    bad = type("Bad", (RoundRobin,), {"params": {"t": ps.Param(0, 1, 10)}})
    with pytest.raises(ValueError, match="parameter t's default=0 is outside the allowed range 1..10"):
        ps.Simulator(bad)
    bad = type("Bad", (ps.Policy,), {"task_spawn": lambda s, p: 0})
    with pytest.raises(TypeError, match=r"policy Bad lacks the mandatory hooks \['wakeup', "
                                        r"'deactivate', 'pick_next'\]"):
        ps.Simulator(bad)
    with pytest.raises(TypeError, match="a policy must be a subclass of pysched.Policy"):
        ps.Simulator(dict)


# ---- copies, pickles and process pools ----

def test_copies_and_pickles_continue_exactly_like_the_original():
    sim = hogs(RoundRobin, n=3, cpus=2, record="events")
    sim.spawn(ps.programs.interactive(1, 20))
    sim.run(seconds=1)
    twin, dup = pickle.loads(pickle.dumps(sim)), sim.copy()
    assert twin._policy is not sim._policy and twin._policy.queue == sim._policy.queue
    for s in (sim, twin, dup):
        s.run(seconds=2)
    for s in (twin, dup):
        assert s.events().tobytes() == sim.events().tobytes()
        assert np.array_equal(s.stats(), sim.stats())


def rr_share(timeslice):
    sim = hogs(RoundRobin, n=3, params={"timeslice": timeslice})
    sim.spawn(ps.programs.interactive(1, 10), name="sleeper")
    sim.run(seconds=3)
    return {"latency": float(sim.latencies(4).mean())}


def test_a_sweep_over_a_python_policys_parameter_runs_in_a_process_pool():
    with ProcessPoolExecutor(max_workers=2) as pool:
        rows = ps.sweep(rr_share, {"timeslice": [5, 50]}, executor=pool)
    by_slice = dict(zip(rows["timeslice"], rows["latency"]))
    assert by_slice[5] < by_slice[50]
    assert by_slice[5] == rr_share(5)["latency"]


# ---- misbehaving hooks ----

def machine(policy):
    sim = ps.Simulator(policy, seed=3)
    sim.spawn(ps.programs.interactive(1, 20), name="sleeper")
    sim.spawn(HOG(), name="hog")
    return sim


class RaisesOnWakeup(RoundRobin):
    name = "raises"

    def wakeup(self, p, waker, sync):
        if self.now_ns > 50_000_000:
            raise ZeroDivisionError("my bug")
        return super().wakeup(p, waker, sync)


def test_a_hook_that_raises_names_hook_time_and_task_and_stops_the_simulator_cleanly():
    sim = machine(RaisesOnWakeup)
    with pytest.raises(ps.PolicyError, match=r"^policy hook wakeup raised at t=\d+ ns \(pid 1\): "
                                             r"ZeroDivisionError: my bug$") as failure:
        sim.run(seconds=1)
    assert isinstance(failure.value.__cause__, ZeroDivisionError)
    assert failure.value.__cause__.__traceback__ is not None   # the policy's own line
    stopped = sim.now_ns
    assert 50_000_000 < stopped < 1_000_000_000
    # the results so far stay readable; going on is refused, not attempted
    assert sim.stats()["cpu_ns"].sum() > 0 and sim.task(2).cpu_ns > 0
    for call in (lambda: sim.run(seconds=1), lambda: sim.spawn(HOG()), lambda: sim.renice(1, 3),
                 lambda: sim.copy(), lambda: pickle.dumps(sim)):
        with pytest.raises(ps.StateError, match="stopped in a failed policy hook .*wakeup"):
            call()
    assert sim.now_ns == stopped


class PicksGarbage(RoundRobin):
    name = "garbage"
    pick = None

    def pick_next(self, cpu):
        return self.pick(cpu) if self.jiffies > 5 else super().pick_next(cpu)


@pytest.mark.parametrize("pick,message", [
    (lambda self, cpu: "hog", "TypeError: it returned str 'hog': a Task, a pid or None"),
    (lambda self, cpu: 1.0, "TypeError: it returned float 1.0"),
    (lambda self, cpu: True, "TypeError: it returned bool True"),
    (lambda self, cpu: 99, "ValueError: it returned pid 99, which is not a live task"),
    (lambda self, cpu: 1 if self.task(1).state else RoundRobin.pick_next(self, cpu),
     r"ValueError: it returned pid 1, which is not runnable on cpu \d \(not queued\)"),
    (lambda self, cpu: self.queue[0][0] if cpu and self.queue[0] else RoundRobin.pick_next(self, cpu),
     r"ValueError: it returned pid \d, which is not runnable on cpu 1 \(queued on another CPU\)"),
    (lambda self, cpu: self.idle(0) if cpu else RoundRobin.pick_next(self, cpu),
     r"ValueError: it returned pid 0, which is not runnable on cpu 1 \(another CPU's idle task\)"),
], ids=["str", "float", "bool", "unknown pid", "asleep", "other cpu", "other cpu's idle"])
def test_pick_next_returning_what_cannot_run_is_named(pick, message):
    cls = type("P", (PicksGarbage,), {"pick": pick})
    sim = ps.Simulator(cls, cpus=2, seed=3)
    sim.spawn(ps.programs.interactive(1, 20), name="sleeper", cpu=0)
    sim.spawn(HOG(), name="hog", cpu=0)
    sim.spawn(HOG(), name="hog", cpu=1)
    with pytest.raises(ps.PolicyError, match=r"policy hook pick_next returned an unusable task at "
                                             r"t=\d+ ns: " + message):
        sim.run(seconds=1)


@pytest.mark.parametrize("body,message", [
    ("p.nice = 5", "AttributeError: pid 1: nice is the engine's"),
    ("p.prio = 2", r"ValueError: pid 1: prio=2 is outside the allowed range 0..1"),
    ("p.time_slice = 'x'", "TypeError: pid 1: time_slice must be an int, not str"),
    ("p.cpu = 1", r"ValueError: pid 1: cpu=1 is outside the allowed range 0..0"),
    ("p.whatever = 1", "AttributeError: a task has no field 'whatever'"),
], ids=["engine field", "prio range", "type", "cpu", "unknown field"])
def test_a_hook_writing_what_it_may_not_is_refused_by_name(body, message):
    def task_spawn(self, p):
        exec(body)
    cls = type("W", (RoundRobin,), {"task_spawn": task_spawn})
    sim = ps.Simulator(cls)
    with pytest.raises(ps.PolicyError, match=r"policy hook task_spawn raised at t=0 ns \(pid 1\): " + message):
        sim.spawn(HOG())


def test_a_view_kept_past_its_task_or_its_simulator_refuses_to_be_read():
    class Keeps(RoundRobin):
        name = "keeps"

        def task_spawn(self, p):
            Keeps.kept = p
            return super().task_spawn(p)

    sim = ps.Simulator(Keeps)
    sim.spawn(ps.Program().run(ms=1).exit())
    view = Keeps.kept
    assert view.pid == 1 and repr(view) == "<Task pid 1>"
    sim.run(seconds=0.1)
    with pytest.raises(ps.StateError, match="task 1 has exited: keep pids, not Task views"):
        view.prio
    sim.spawn(HOG())
    with pytest.raises(TypeError, match=r"a Task view \(pid 2\) cannot be copied or pickled"):
        pickle.dumps(Keeps.kept)
    view = Keeps.kept
    del sim
    gc.collect()
    with pytest.raises(ps.StateError, match="this policy's simulator is gone"):
        view.prio


def test_a_hook_that_calls_its_own_simulator_is_refused_not_reentered():
    class Reenters(RoundRobin):
        name = "reenters"
        sim = None

        def tick(self, cpu, p):
            if self.jiffies == 10:
                Reenters.sim.run(seconds=1)
            super().tick(cpu, p)

    sim = Reenters.sim = hogs(Reenters)
    with pytest.raises(ps.PolicyError, match="policy hook tick raised at t=10000000 ns.*StateError: "
                                             "the simulator is running"):
        sim.run(seconds=1)


def test_a_simulator_and_its_policy_are_freed_together():
    import weakref
    sim = hogs(RoundRobin)
    sim.run(seconds=0.5)
    ref = weakref.ref(sim._policy)
    del sim
    for _ in range(3):   # the simulator's cycles first, then its policy's
        gc.collect()
    assert ref() is None


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals reach the main thread only")
def test_ctrl_c_in_a_hook_stops_the_run_as_the_hook_returns():
    """The tick at 10 ms is interrupted (the process signals itself, so the
    Ctrl-C comes inside the hook): the hook finishes its work, no hook runs
    after it, and the run raises KeyboardInterrupt naming the hook and the
    time.  The simulator stopped half through that instant: it refuses to
    go on, as after any hook's error.  (Before, the run went on for 16
    more instants' hooks, then stopped.)"""
    class Interrupted(RoundRobin):
        name = "interrupted"
        calls = []

        def tick(self, cpu, p):
            self.calls.append(self.jiffies)
            if self.jiffies == 10:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.01)            # the handler runs in here
            super().tick(cpu, p)
            self.calls.append("done")

    sim = hogs(Interrupted)
    with pytest.raises(KeyboardInterrupt) as stop:
        sim.run(seconds=1)
    assert str(stop.value) == ("policy hook tick was interrupted by Ctrl-C at t=10000000 ns "
                               "(pid 1); the simulator cannot go on")
    assert Interrupted.calls[-2:] == [10, "done"]
    assert sim.now_ns == 10_000_000 and sim.stats()["cpu_ns"].sum() == 10_000_000
    with pytest.raises(ps.StateError, match=r"stopped in a failed policy hook and cannot go on "
                                            r"\(policy hook tick was interrupted by Ctrl-C"):
        sim.run(seconds=0.01)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# A Python policy whose tick, from jiffy 3, says so on stdout and then never
# returns, or takes 50 ms; run by run_interrupted in a new interpreter.
HOOK_THAT_HANGS = """
import os, sys, time, traceback
import pysched as ps
from pysched.policy.examples import RoundRobin

how = sys.argv[1]
ps.policy.base.SIGINT_GRACE_S = float(sys.argv[2])

class Hangs(RoundRobin):
    name = "hangs"

    def tick(self, cpu, p):
        if self.jiffies >= 3:
            print("tick", self.jiffies, flush=True)
            if how == "loop":
                while True:
                    pass
            elif how == "read":
                r, w = os.pipe()
                os.read(r, 1)
            else:
                time.sleep(0.05)
        super().tick(cpu, p)

sim = ps.Simulator(Hangs)
sim.spawn(ps.programs.cpu_hog())
try:
    sim.run(seconds=10)
except KeyboardInterrupt as e:
    print("KeyboardInterrupt:", e, flush=True)
    print("raised in:", *[f.name for f in traceback.extract_tb(e.__traceback__)][-2:], flush=True)
try:
    sim.run(seconds=0.001)
except ps.StateError as e:
    print("StateError:", e, flush=True)
sys.exit(3)
"""


def run_interrupted(tmp_path, how, grace_s, sigints, after_ticks=1, timeout=10):
    """HOOK_THAT_HANGS in a new interpreter; once it has printed
    `after_ticks` tick lines, `sigints` SIGINTs 0.2 s apart.  Returns its exit
    status, the seconds from the first SIGINT to its end, and the lines it
    printed after the first SIGINT.  Killed (SIGKILL) if it has not ended
    `timeout` s after that: Ctrl-C could not stop it."""
    proc = subprocess.Popen([sys.executable, "-c", HOOK_THAT_HANGS, how, str(grace_s)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        for _ in range(after_ticks):
            line = proc.stdout.readline()
            assert line.startswith("tick"), line + proc.stderr.read()
        t0 = time.monotonic()
        for k in range(sigints):
            if k:
                time.sleep(0.2)
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, time.monotonic() - t0, out.splitlines(), err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize("how", ["loop", "read"], ids=["endless loop", "blocking read"])
def test_ctrl_c_interrupts_a_hook_that_never_returns_after_a_grace_period(tmp_path, how):
    """A hook stuck in a loop or a blocking read: one Ctrl-C, and after the
    grace period (SIGINT_GRACE_S, 1 s) KeyboardInterrupt is raised inside
    it.  (Before, the handler only noted every Ctrl-C while a hook ran, and
    nothing but SIGKILL ended the process.)"""
    rc, seconds, lines, err = run_interrupted(tmp_path, how, 1.0, 1)
    assert rc == 3, err
    assert 0.9 < seconds < 10
    assert lines == ["KeyboardInterrupt: policy hook tick was interrupted by Ctrl-C at t=3000000 "
                     "ns (pid 1); the simulator cannot go on",
                     # in the hook's frame, by pysched's SIGINT handler
                     "raised in: tick sigint",
                     "StateError: the simulator stopped in a failed policy hook and cannot go on "
                     "(policy hook tick was interrupted by Ctrl-C at t=3000000 ns (pid 1)); read "
                     "its results, or continue from a copy made before"], err


def test_a_second_ctrl_c_interrupts_a_hook_at_once(tmp_path):
    """With a grace period of 60 s, a second Ctrl-C 0.2 s after the first
    raises KeyboardInterrupt in the endless loop."""
    rc, seconds, lines, err = run_interrupted(tmp_path, "loop", 60.0, 2)
    assert rc == 3, err
    assert seconds < 10
    assert lines[0].startswith("KeyboardInterrupt: policy hook tick was interrupted by Ctrl-C")


def test_ctrl_c_in_a_slow_hook_stops_the_run_as_it_returns(tmp_path):
    """Each tick takes 50 ms and the SIGINT is sent as the third begins:
    that tick finishes, then the run stops (one or two ticks more if the
    signal was late, no more).  (Before: the rest of 16 instants' ticks,
    most of a second.)"""
    rc, seconds, lines, err = run_interrupted(tmp_path, "sleep", 1.0, 1, after_ticks=3)
    assert rc == 3, err
    ticks = [line for line in lines if line.startswith("tick")]
    assert len(ticks) <= 2, lines
    assert lines[len(ticks)].startswith("KeyboardInterrupt: policy hook tick was interrupted by "
                                        f"Ctrl-C at t={5 + len(ticks)}000000 ns (pid 1)"), lines
    # raised after the hook returned: no frame of it
    assert "tick" not in lines[len(ticks) + 1].split()
    assert seconds < 2


# ---- the decaying sleep credit toy ----

def test_sleep_credit_passes_the_kit_and_favours_the_sleeper_over_hogs():
    from pysched.policy.examples import SleepCredit
    assert ps.policy.testing.check_policy(SleepCredit, seconds=1.0)
    sim = hogs(SleepCredit, n=3)
    sleeper = sim.spawn(ps.programs.interactive(1, 30), name="sleeper")
    sim.run(seconds=5)
    t = sim.task(sleeper)
    assert t.credit > 0 and t.prio < 120 and sim.task(1).prio == 120
    # without credit it waits for the hogs' turns; once it has some, it
    # preempts them on every wakeup
    lat = sim.latencies(sleeper)
    assert lat[0] > 50_000_000 and (lat[10:] == 0).all()
    assert sim.cpu_stats()["nr_preemptions"][0] > 100


def test_sleep_credit_halves_every_halflife():
    from pysched.policy.examples import SleepCredit
    sim = ps.Simulator(SleepCredit, params={"halflife": 100})
    napper = sim.spawn(ps.Program().sleep(ms=1000).loop().sleep(ms=1000).end())
    sim.spawn(HOG())
    sim.run(seconds=1.0005)           # woken at 1 s with 1000 ticks of credit
    assert sim.task(napper).credit == 1000
    sim.run(seconds=0.1)              # asleep again; tick 1100 halves it
    assert sim.task(napper).credit == 500


def test_a_migrate_hook_that_does_not_move_the_task_is_named():
    class Stays(RoundRobin):
        name = "stays"

        def migrate(self, p, dest):
            pass                       # forgets p.cpu = dest

    sim = ps.Simulator(Stays, cpus=2)
    sleeper = sim.spawn(ps.programs.interactive(1, 20), cpu=0)
    sim.spawn(HOG(), cpu=0)
    sim.run(seconds=0.01)
    with pytest.raises(ps.PolicyError, match=r"policy hook migrate misbehaved at t=10000000 ns "
                                             r"\(pid 1\): ValueError: it left pid 1 on cpu 0, not on cpu 1"):
        sim.set_affinity(sleeper, [1])
