"""Threads and time: run() releases the GIL, so a second thread may call
into a simulator while it runs.  That call gets a clear StateError -- never
a crash or a lost step -- and two simulators in two threads run side by
side.  Ctrl-C stops a run promptly however dense its events, and a run is
refused past the time the clock can represent."""
import signal
import threading
import time

import pytest

import pysched as ps

SECONDS = 1500  # with 100 sleepers, a few tenths of a second of wall clock


def busy_sim(preset="linux-2.5.65"):
    sim = ps.Simulator(preset, latencies=False)
    for i in range(2):
        sim.spawn(ps.programs.cpu_hog(), name=f"hog{i}")
    for i in range(100):
        sim.spawn(ps.Program().loop().run(ms=1).sleep(ms=ps.uniform(50, 150)).end())
    return sim


def run_in_thread(sim, seconds):
    errors = []

    def target():
        try:
            sim.run(seconds=seconds)
        except ps.Error as e:
            errors.append(e)

    t = threading.Thread(target=target)
    t.start()
    return t, errors


def until_refused(sim, t, call):
    """Once the run in thread t is under way (a read of the clock is
    refused), make `call(sim)`; returns the StateError it raised (None if it
    was not refused)."""
    while t.is_alive():
        try:
            sim.now_ns
        except ps.StateError:
            break
    try:
        call(sim)
    except ps.StateError as e:
        return e
    return None


CALLS = {
    "spawn": lambda s: s.spawn(ps.programs.cpu_hog()),
    "set_param": lambda s: s.set_param("max_sleep_avg", 5000),
    "copy": lambda s: s.copy(),
    "stats": lambda s: s.stats(),
    "renice": lambda s: s.renice(1, 5),
    "post": lambda s: s.post("c"),
    "now_ns": lambda s: s.now_ns,
}


@pytest.mark.parametrize("call", CALLS)
def test_a_call_from_another_thread_during_a_run_is_refused_and_changes_nothing(call):
    sim = busy_sim()
    twin = busy_sim()
    t, errors = run_in_thread(sim, SECONDS)
    refused = until_refused(sim, t, CALLS[call])
    t.join()
    twin.run(seconds=SECONDS)
    assert refused is not None and "another thread" in str(refused)
    assert isinstance(refused, RuntimeError)  # StateError is a RuntimeError
    assert errors == []
    # the run was not disturbed: it equals an undisturbed twin
    assert sim.now_ns == SECONDS * 10**9
    assert (sim.stats() == twin.stats()).all()
    sim.check()


def test_two_threads_running_one_simulator_one_runs_the_other_is_refused():
    sim = busy_sim()
    t1, e1 = run_in_thread(sim, SECONDS)
    refused = until_refused(sim, t1, lambda s: s.run(seconds=SECONDS))
    t1.join()
    assert refused is not None and e1 == []
    assert sim.now_ns == SECONDS * 10**9  # one run, not two half-runs
    sim.check()


def test_two_simulators_in_two_threads_run_independently():
    a, b = busy_sim(), busy_sim("houston-2003")
    ta, ea = run_in_thread(a, SECONDS)
    tb, eb = run_in_thread(b, SECONDS)
    ta.join()
    tb.join()
    ref_a, ref_b = busy_sim(), busy_sim("houston-2003")
    ref_a.run(seconds=SECONDS)
    ref_b.run(seconds=SECONDS)
    assert ea == [] and eb == []
    assert (a.stats() == ref_a.stats()).all() and (b.stats() == ref_b.stats()).all()


def interrupt_after(seconds):
    signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    signal.setitimer(signal.ITIMER_REAL, seconds)


@pytest.mark.parametrize("workload", ["hogs", "a 1 MHz device"])
def test_ctrl_c_stops_a_long_run_within_a_fifth_of_a_second(workload):
    # a hog's ticks are batched, a slice at a time: at HZ=100,000 a run of
    # 10^6 s is 10^6 pieces of 100,000 ticks, far more than 0.1 s of work
    sim = ps.Simulator("linux-2.5.65", hz=100_000, latencies=False)
    sim.spawn(ps.programs.cpu_hog())
    if workload != "hogs":
        # a million events per simulated second: 10^8 for the whole run
        sim.spawn(ps.Program().loop().wait("irq").end())
        sim.source("irq", every_us=1)
    interrupt_after(0.1)
    t0 = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            sim.run(seconds=1_000_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
    assert time.perf_counter() - t0 < 0.3
    sim.check()  # stopped between two instants, and usable again
    before = sim.now_ns
    sim.run(seconds=0.01)
    assert sim.now_ns == before + 10_000_000


def test_a_denser_source_than_1_mhz_is_refused():
    sim = ps.Simulator("linux-2.5.65")
    with pytest.raises(ValueError, match="at most 1 MHz"):
        sim.source("irq", every_us=0.001)


def test_a_run_past_the_representable_time_is_refused():
    sim = ps.Simulator("linux-2.5.65", hz=100)
    with pytest.raises(ps.StateError, match="past the last time a run may reach"):
        sim._core.run_until(2**62)
    assert sim.now_ns == 0
