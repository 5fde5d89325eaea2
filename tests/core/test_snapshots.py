"""Snapshots (pickle, copy): every valid simulator round-trips, twins stay
identical (failures included), and no damaged or crafted blob crashes,
hangs or silently changes a run: it is refused with a clear error, or it is
a consistent state that runs."""
import copy
import pickle
import random

import numpy as np
import pytest

import pysched as ps
from pysched.policy.examples import RoundRobin

Sim = ps.simulator._core.Sim
HEADER = 8 + 8 + 8 + 64  # magic, format, layout hash, preset name; then the version
PRESETS = ps.presets()


def small(preset, cpus=2):
    sim = ps.Simulator(preset, cpus=cpus, seed=5)
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.spawn(ps.Program().loop(10).run(ms=1).sleep(ms=3).end().wait("x").exit(), name="ten")
    sim.spawn(ps.Program().loop().wait("x").run(us=200).post("y").end(), name="server")
    sim.source("x", every_ms=3)
    sim.run(seconds=0.05)
    return sim


def same(a, b):
    return (a.now_ns == b.now_ns and (a.stats() == b.stats()).all() and
            np.array_equal(a.latencies(), b.latencies()))


def test_a_finite_loop_longer_than_its_program_round_trips():
    # the loader once took the loop count for an op index
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.Program().loop(10).run(ms=1).end())
    sim.spawn(ps.Program().loop(1000).sleep(ms=1).end())
    sim.run(seconds=0.003)
    twin = pickle.loads(pickle.dumps(sim))
    for s in (sim, twin):
        s.run(seconds=1)
    assert same(sim, twin)


@pytest.mark.parametrize("preset", PRESETS)
def test_right_after_a_running_task_loses_its_cpu_the_state_checks_and_pickles(preset):
    sim = ps.Simulator(preset, cpus=2)
    hog = sim.spawn(ps.programs.cpu_hog(), cpu=0)
    sim.run(seconds=0.01)
    sim.set_affinity(hog, [1])  # it moves at its next switch
    sim.check()
    twin = pickle.loads(pickle.dumps(sim))
    for s in (sim, twin):
        s.run(seconds=0.1)
    assert same(sim, twin) and sim.task(hog).cpu == 1


def test_after_a_livelock_the_original_its_copy_and_its_pickle_all_fail_alike():
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.Program().loop().run(ms=0).end())
    with pytest.raises(ps.StateError, match="livelock"):
        sim.run(seconds=0.01)
    twins = [sim.copy(), pickle.loads(pickle.dumps(sim))]
    for s in [sim] + twins:
        with pytest.raises(ps.StateError, match="livelock"):
            s.run(seconds=0.01)
    assert all(same(sim, t) for t in twins)


def test_a_failed_run_leaves_no_stale_error_behind():
    sim = ps.Simulator("linux-2.5.65", max_tasks=3)
    sim.spawn(ps.Program().loop().fork(ps.Program().sleep(s=100)).sleep(ms=1).end())
    with pytest.raises(ps.StateError, match="task limit"):
        sim.run(seconds=0.1)
    sim.source("tick", every_ms=5)  # once raised the fork's message yet installed the source
    assert sim._core.counters()["live_tasks"] == 3


def blob(preset):
    return bytes(small(preset)._core.snapshot())


@pytest.mark.parametrize("preset", PRESETS)
def test_thousands_of_damaged_snapshots_are_all_refused(preset):
    raw = blob(preset)
    rng = random.Random(1)
    for k in range(1500):
        b = bytearray(raw)
        how = k % 3
        if how == 0:  # flip a few bytes anywhere
            for _ in range(rng.randint(1, 4)):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif how == 1:
            b = b[:rng.randrange(len(b))]
        else:
            b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        with pytest.raises(ValueError, match="snapshot"):
            Sim.restore(bytes(b))


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for x in data:
        h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


@pytest.mark.parametrize("preset", ["linux-2.5.65", "houston-2003", "linux-2.4.20"])
def test_crafted_snapshots_with_a_valid_checksum_are_refused_or_run_consistently(preset):
    # damage past the header, then make the checksum match again: the loader's
    # own checks must catch what would crash or hang; what they accept must be
    # a consistent state (the invariants hold while it runs)
    raw = blob(preset)
    rng = random.Random(2)
    header = HEADER + 64
    refused = loaded = 0
    for _ in range(150):
        b = bytearray(raw[:-8])
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(header, len(b))
            b[i] = rng.choice([0, 1, 7, 0x40, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        b += fnv1a64(b).to_bytes(8, "little")
        try:
            core = Sim.restore(bytes(b))
        except ValueError as e:
            assert "snapshot is damaged" in str(e)
            refused += 1
            continue
        loaded += 1
        core.check()
        try:
            core.run_until(core.now_ns + 20_000_000)
        except ps.StateError:
            pass  # a crafted state may run into a livelock or a full buffer
        core.check()
    assert refused > 0 and refused + loaded == 150


def test_a_snapshot_of_another_layout_is_refused_naming_the_version_that_made_it():
    raw = bytearray(blob("linux-2.5.65"))
    assert raw[HEADER:HEADER + 64].rstrip(b"\0").decode() == ps.__version__
    raw[16] ^= 1  # the layout hash
    with pytest.raises(ValueError, match=rf"made by pysched {ps.__version__} for a 'linux-2.5.65' "
                                         r"whose structs or policy tables differ from this build's "
                                         rf"\(pysched {ps.__version__}, snapshot format 5\)"):
        Sim.restore(bytes(raw))
    raw[HEADER:HEADER + 64] = b"0.1.9".ljust(64, b"\0")
    with pytest.raises(ValueError, match=r"made by pysched 0\.1\.9 for a 'linux-2.5.65'"):
        Sim.restore(bytes(raw))
    with pytest.raises(ValueError, match="not a pysched snapshot"):
        Sim.restore(b"PSCHED01" + bytes(100))


def test_a_snapshot_of_an_older_format_says_so_and_what_this_build_reads():
    raw = bytearray(blob("linux-2.5.65"))
    raw[8:16] = (4).to_bytes(8, "little")  # format 4 had no version in its header
    with pytest.raises(ValueError, match=r"made by a pysched older than 0\.2\.0 \(snapshot format "
                                         rf"4\); this build, pysched {ps.__version__}, reads format 5"):
        Sim.restore(bytes(raw))


class Counting(ps.Policy):
    """A round robin whose declared fields a test edits."""
    name = "py-counting"
    rq_fields = ("picks",)

    def setup(self):
        self.queue = [[] for _ in range(self.cpus)]

    def task_spawn(self, p):
        self.queue[p.cpu].append(p.pid)
        return self.curr(p.cpu).is_idle

    def wakeup(self, p, waker, sync):
        return self.task_spawn(p)

    def deactivate(self, p):
        self.queue[p.cpu].remove(p.pid)

    def pick_next(self, cpu):
        self.rq(cpu).picks += 1
        return self.queue[cpu][0] if self.queue[cpu] else None


def test_a_python_policy_whose_class_changed_since_the_pickle_is_named_as_the_cause():
    sim = ps.Simulator(Counting)
    sim.spawn(ps.programs.interactive(2, 10))
    sim.run(seconds=0.05)
    data = pickle.dumps(sim)
    Counting.rq_fields = ("picks", "idles")
    try:
        with pytest.raises(ValueError, match="the snapshot's Python policy 'py-counting' has changed "
                                             "since it was made"):
            pickle.loads(data)
    finally:
        Counting.rq_fields = ("picks",)
    assert pickle.loads(data).now_ns == sim.now_ns


def resealed(b):
    """b with its checksum made to match again, as anyone can."""
    return bytes(b[:-8]) + fnv1a64(b[:-8]).to_bytes(8, "little")


def at(raw, values):
    """The offset of the int64 values, stored consecutively, in raw (once)."""
    pattern = np.asarray(values, dtype="<i8").tobytes()
    assert raw.count(pattern) == 1
    return raw.index(pattern)


def test_a_crafted_switch_count_that_would_overflow_is_refused():
    sim = small("linux-2.5.65")
    row = sim.cpu_stats()[0]
    raw = bytearray(sim._core.snapshot())
    i = at(raw, [row["nr_switches"], row["ticks"], row["busy_ticks"], row["busy_ns"]])
    raw[i:i + 8] = (2**63 - 1).to_bytes(8, "little")
    with pytest.raises(ValueError, match="damaged: cpu 0's counters"):
        Sim.restore(resealed(raw))


@pytest.mark.parametrize("field, value", [("nvcsw", -1), ("cpu_ns", 10**18), ("nr_wakeups", 2**63 - 1)])
def test_a_crafted_task_counter_outside_what_a_run_can_reach_is_refused(field, value):
    sim = small("linux-2.5.65")
    st = sim.stats()[2]  # the server, woken often
    # as psTask holds them; the times before them are brought up to now when read
    names = ["cpu_ns", "wait_ns", "sleep_ns", "cpu_ticks", "nvcsw", "nivcsw", "nr_wakeups",
             "nr_migrations"]
    raw = bytearray(sim._core.snapshot())
    i = at(raw, [st[n] for n in names[3:]]) + 8 * (names.index(field) - 3)
    raw[i:i + 8] = value.to_bytes(8, "little", signed=True)
    with pytest.raises(ValueError, match=f"damaged: pid {st['pid']}'s counters"):
        Sim.restore(resealed(raw))


@pytest.mark.parametrize("column, offset, value", [("cpu", 24, 1000), ("kind", 28, 99),
                                                   ("pid", 16, 10**6), ("time_ns", 0, -5)])
def test_a_crafted_event_record_naming_what_does_not_exist_is_refused(column, offset, value):
    sim = ps.Simulator("linux-2.5.65", cpus=2, record="events")
    sim.spawn(ps.programs.interactive(2, 10))
    sim.run(seconds=0.1)
    raw = bytearray(sim._core.snapshot())
    i = raw.index(sim.events()[-1].tobytes()) + offset
    width = 2 if column == "kind" else 8 if column == "time_ns" else 4
    raw[i:i + width] = value.to_bytes(width, "little", signed=True)
    with pytest.raises(ValueError, match="damaged: event record"):
        Sim.restore(resealed(raw))


@pytest.mark.parametrize("cpus", [2, 3, 8])
def test_a_simulator_with_staggered_ticks_pickles_before_its_first_tick(cpus):
    sim = ps.Simulator("linux-2.5.65", cpus=cpus, stagger_ticks=True, seed=3)
    sim.spawn(ps.programs.cpu_hog())
    sim.spawn(ps.programs.interactive(2, 10))
    twin = pickle.loads(pickle.dumps(sim))
    for s in (sim, twin):
        s.run(seconds=0.2)
    assert same(sim, twin)


def test_a_simulator_run_again_after_a_livelock_still_pickles():
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.Program().loop().post("a").wait("a").end())
    for _ in range(3):
        with pytest.raises(ps.StateError, match="livelock"):
            sim.run(seconds=0.01)
    twin = pickle.loads(pickle.dumps(sim))
    with pytest.raises(ps.StateError, match="livelock"):
        twin.run(seconds=0.01)


@pytest.mark.parametrize("how", ["trace full", "livelock"])
def test_after_a_failed_run_a_post_from_python_wakes_the_waiter_as_in_a_pickle_of_it(how):
    """The failure is reported; the state it leaves is an ordinary one, on
    which a post acts as it does on its twin (it once posted nothing)."""
    sim = ps.Simulator("linux-2.5.65", record="events", max_trace_bytes=4096)
    sim.spawn(ps.Program().loop().wait("a").run(ms=1).end(), name="waiter")
    if how == "trace full":
        sim.spawn(ps.programs.interactive(1, 2))
    else:
        sim.spawn(ps.Program().sleep(ms=5).loop().post("b").wait("b").end())
    with pytest.raises(ps.StateError, match="full" if how == "trace full" else "livelock"):
        sim.run(seconds=1)
    twin = pickle.loads(pickle.dumps(sim))
    for s in (sim, twin):
        s.post("a")
    assert sim.task("waiter").state == twin.task("waiter").state == "running"


def sleeper(ms):
    return ps.Program().loop().sleep(ms=ms).end()


def feed_the_original(sim):
    sim.spawn(sleeper(5), name="five")
    sim.spawn(ps.Program().loop().wait("y").run(us=100).end(), name="y-server")
    sim.source("y", every_ms=2)


def feed_the_twin(sim):
    # the 10 ms sleeper first: in the twin it takes the program id the
    # original gave its 5 ms sleeper, an equal op list to the twin's second
    ten = sim.spawn(sleeper(10), name="ten")
    five = sim.spawn(sleeper(5), name="five")
    sim.spawn(ps.Program().loop().wait("z").run(us=300).end(), name="z-server")
    sim.source("z", every_ms=7)
    return ten, five


def same_run(a, b):
    return same(a, b) and a.events().tobytes() == b.events().tobytes()


@pytest.mark.parametrize("preset,params", [("linux-2.5.65", None), (RoundRobin, {"timeslice": 1})])
def test_copy_copy_makes_a_twin_of_its_own_as_sim_copy_does(preset, params):
    # copy.copy once shared the original's program cache, channel table and
    # Python policy instance: the twin ran the original's programs, and the
    # original's hooks wrote the twin's tasks.  (A round robin's sleeper
    # waits a timeslice behind the hog: 1 ms here.)
    sim = ps.Simulator(preset, cpus=2, seed=5, params=params, record="events")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.spawn(ps.Program().loop().wait("x").run(us=200).end(), name="x-server")
    sim.source("x", every_ms=3)
    sim.run(seconds=0.05)
    twin = copy.copy(sim)
    sim_again, twin_again = sim.copy(), sim.copy()  # the twins copy.copy must equal
    assert type(twin) is ps.Simulator and same_run(twin, sim)

    feed_the_original(sim)
    ten, five = feed_the_twin(twin)
    twin_at_the_fork = twin.stats(), [twin.runqueue(cpu) for cpu in range(2)]
    sim.run(seconds=0.2)
    # the original's run leaves the twin's tasks and runqueues as they were
    assert (twin.stats() == twin_at_the_fork[0]).all()
    assert [twin.runqueue(cpu) for cpu in range(2)] == twin_at_the_fork[1]
    twin.run(seconds=0.4)
    sim.run(seconds=0.2)

    feed_the_original(sim_again)
    feed_the_twin(twin_again)
    for s in (sim_again, twin_again):
        s.run(seconds=0.4)
    assert same_run(sim, sim_again) and same_run(twin, twin_again)
    assert set(sim.stats()["name"]) ^ set(twin.stats()["name"]) == {"y-server", "ten", "z-server"}
    # the twin ran the programs it was given: its 5 ms sleeper wakes about
    # twice as often as its 10 ms one (less in a round robin, where it waits
    # behind the hog), not as often, as when it ran the original's program
    assert twin.task(five).nr_wakeups > 1.5 * twin.task(ten).nr_wakeups
    for s in (sim, twin):
        s.check()


def test_a_crafted_pc_inside_a_loop_body_without_its_frame_is_refused():
    """The END of that body would pop a frame below the stack (and write
    before it): found by the pickle mutator (tests/core/fuzz_pickle.py)."""
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.Program().loop(3).run(ms=1).sleep(ms=1).end(), name="looper")
    raw = bytearray(sim._core.snapshot())
    # psTask: the name at 12, the program state at 88 (prog, pc, loop_depth ...)
    pc = raw.index(b"looper\0") - 12 + 88 + 4
    assert raw[pc - 4:pc + 8] == bytes(12), "psTask's layout moved: update the offsets"
    raw[pc] = 1  # at the run op, inside the loop, with no loop entered
    with pytest.raises(ValueError, match="damaged: pid 1's program state"):
        Sim.restore(resealed(raw))


@pytest.mark.parametrize("n", [2**62, 2**59 + 1, -1])
def test_a_crafted_record_count_whose_bytes_overflow_is_refused(n):
    """n records of 32 bytes wrapped size_t to a small size and reached
    calloc (the sanitizer build aborted on it; found by the pickle mutator)."""
    sim = ps.Simulator("linux-2.5.65", record="events")
    sim.spawn(ps.programs.interactive(2, 10))
    sim.run(seconds=0.05)
    raw = bytearray(sim._core.snapshot())
    count = raw.index(sim.events()[0].tobytes()) - 16  # the ring's count, then its dropped
    assert int.from_bytes(raw[count:count + 8], "little") == len(sim.events())
    raw[count:count + 8] = n.to_bytes(8, "little", signed=True)
    with pytest.raises(ValueError, match="snapshot is damaged"):
        Sim.restore(resealed(raw))


def test_a_crafted_idle_task_with_an_exit_time_is_refused():
    """schedule() reaps a task that has exited, idle or not: the idle slot
    went to the free list (found by the pickle mutator)."""
    sim = ps.Simulator("linux-6.6-eevdf", cpus=2)
    sim.spawn(ps.programs.interactive(2, 10))
    sim.run(seconds=0.05)
    raw = bytearray(sim._core.snapshot())
    # psTask: the name at 12, exit_ns at 464, just before the policy's area
    exit_ns = raw.index(b"swapper/1\0") - 12 + 464
    assert raw[exit_ns:exit_ns + 8] == bytes([0xFF] * 8), "psTask's layout moved: update the offsets"
    raw[exit_ns:exit_ns + 8] = (2).to_bytes(8, "little")
    with pytest.raises(ValueError, match="damaged: cpu 1's idle task"):
        Sim.restore(resealed(raw))


def test_a_count_at_the_top_of_its_domain_stays_there_and_the_state_still_pickles():
    """Counts stop at 2^62, the largest a snapshot holds: a state loaded
    with a channel posted 2^62 times, posted again, pickles again (it was
    refused; found by the pickle mutator)."""
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.programs.cpu_hog())
    sim.post("a", n=34)
    raw = bytearray(sim._core.snapshot())
    i = at(raw, [34, -1])  # the channel: its count, then no waiter at its head and tail
    raw[i:i + 8] = (2**62).to_bytes(8, "little")
    core = Sim.restore(resealed(raw))
    core.post(0, 5)
    core.run_until(core.now_ns + 10_000_000)
    again = Sim.restore(bytes(core.snapshot()))
    again.check()


@pytest.mark.parametrize("end", [-2**31, 2**31 - 1, 7])
def test_a_crafted_loop_whose_end_lies_outside_its_program_is_refused(end):
    """The loader made the END's index relative to the program before
    checking it: INT32_MIN overflowed (found by the pickle mutator under
    UBSan)."""
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.Program().loop(3).run(ms=1).end(), name="looper")
    raw = bytearray(sim._core.snapshot())
    loop = raw.index(np.array([5, 3, 2], dtype="<i4").tobytes())  # psOp: LOOP, 3 rounds, END at 2
    raw[loop + 8:loop + 12] = end.to_bytes(4, "little", signed=True)
    with pytest.raises(ValueError, match="damaged: program 0: op 0 refers outside it"):
        Sim.restore(resealed(raw))


@pytest.mark.parametrize("field, at, value", [("exec_start", 712, 2**63), ("sum_exec_runtime", 704, 2**62),
                                              ("vlag", 688, -2**63), ("exec_start", 712, 1),
                                              ("exec_start", 712, 0)])
def test_a_crafted_fair_entity_whose_times_would_overflow_is_refused(field, at, value):
    """update_curr took now - exec_start of a crafted 2^63 (found by the
    pickle mutator under UBSan); an exec_start moved back below the time the
    task has run, or cleared on the running task (it is 0 only after a
    migration, until the task runs again), would give it more than had
    passed."""
    sim = ps.Simulator("linux-6.5-cfs")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.run(seconds=0.05)
    raw = bytearray(sim._core.snapshot())
    # psTask: the name at 12, the sched_entity's fields in the policy's area
    i = raw.index(b"hog\0") - 12 + at
    assert 0 <= int.from_bytes(raw[i:i + 8], "little", signed=True) <= sim.now_ns, \
        "psTask's or fair_se's layout moved: update the offsets"
    raw[i:i + 8] = value.to_bytes(8, "little", signed=value < 0)
    with pytest.raises(ValueError, match="damaged: .*exec_start .* out of range"):
        Sim.restore(resealed(raw))


def test_a_crafted_accounting_mark_that_breaks_the_tiling_of_a_tasks_life_is_refused():
    """cpu, wait and sleep time tile a task's life up to since_ns: a crafted
    since_ns moved back loaded, and the next accounting gave it more CPU
    time than there was (found by the pickle mutator)."""
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.programs.interactive(2, 10), name="ticker")
    sim.run(seconds=0.05)
    raw = bytearray(sim._core.snapshot())
    since = raw.index(b"ticker\0") - 12 + 352  # psTask: the name at 12, since_ns at 352
    assert 0 < int.from_bytes(raw[since:since + 8], "little") <= sim.now_ns, \
        "psTask's layout moved: update the offsets"
    raw[since:since + 8] = (2).to_bytes(8, "little")
    with pytest.raises(ValueError, match="damaged: pid 1's counters"):
        Sim.restore(resealed(raw))


def test_a_crafted_cpu_accounting_mark_below_its_busy_time_is_refused():
    """A CPU's busy time is accounted up to run_since_ns: a crafted mark
    moved back loaded, and the next accounting made the CPU busier than
    the time that had passed (found by the pickle mutator)."""
    sim = small("linux-2.5.65")
    row = sim.cpu_stats()[0]
    raw = bytearray(sim._core.snapshot())
    # psCpu: run_since_ns and overhead_until_ns, then nr_switches, ticks, busy_ticks, busy_ns
    run_since = at(raw, [row["nr_switches"], row["ticks"], row["busy_ticks"], row["busy_ns"]]) - 16
    assert int.from_bytes(raw[run_since:run_since + 8], "little") <= sim.now_ns
    raw[run_since:run_since + 8] = (7).to_bytes(8, "little")
    with pytest.raises(ValueError, match="damaged: cpu 0's counters"):
        Sim.restore(resealed(raw))


def test_a_crafted_last_run_ahead_of_the_jiffies_is_refused():
    """last_run is a 32-bit jiffy: before jiffies first wrap it cannot be
    ahead of them.  A crafted one 65,280 jiffies ahead loaded, and the next
    wakeup's credit, jiffies - last_run in activate_task's int arithmetic,
    overflowed sleep_avg (found by the pickle mutator)."""
    sim = ps.Simulator("linux-2.5.64-bk4")
    sim.spawn(ps.programs.interactive(2, 10), name="waker")
    sim.run(seconds=0.05)
    raw = bytearray(sim._core.snapshot())
    # psTask: the name at 12, the policy's area at 648: prio links (20 bytes), sleep_avg, last_run
    last_run = raw.index(b"waker\0") - 12 + 648 + 24
    assert int.from_bytes(raw[last_run:last_run + 4], "little") <= sim.jiffies, \
        "psTask's or o1_sched's layout moved: update the offsets"
    raw[last_run:last_run + 4] = (sim.jiffies + 65280).to_bytes(4, "little")
    with pytest.raises(ValueError, match="damaged: pid 1: last_run 653\\d\\d is after jiffies"):
        Sim.restore(resealed(raw))


def test_a_crafted_time_slice_outside_what_a_slice_can_hold_is_refused():
    """scheduler_tick's --time_slice overflowed a crafted INT32_MIN (found
    by the pickle mutator under UBSan)."""
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.run(seconds=0.01)
    raw = bytearray(sim._core.snapshot())
    slice_at = raw.index(b"hog\0") - 12 + 68  # psTask: the name at 12, time_slice at 68
    assert int.from_bytes(raw[slice_at:slice_at + 4], "little") == sim.task("hog").time_slice
    raw[slice_at:slice_at + 4] = (-2**31).to_bytes(4, "little", signed=True)
    with pytest.raises(ValueError, match="damaged: pid 1's policy, nice or time_slice"):
        Sim.restore(resealed(raw))


def test_a_crafted_source_count_below_its_firings_with_a_firing_queued_is_refused():
    """A source that has fired all its count queues no next firing: a
    crafted count of 0 loaded, the queued firing made `fired` pass the
    count, and the state's own snapshot was refused (found by the pickle
    mutator)."""
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.Program().loop().wait("tick").run(us=100).end())
    sim.source("tick", every_ms=3, count=30)
    sim.run(seconds=0.01)
    raw = bytearray(sim._core.snapshot())
    # psSourceDef: chan, kind (every), period_ns, start_ns (a period in), count
    src = at(raw, [0, 3_000_000, 3_000_000, 30])
    raw[src + 24:src + 32] = (0).to_bytes(8, "little")
    with pytest.raises(ValueError, match="damaged: .*source 0"):
        Sim.restore(resealed(raw))


@pytest.mark.parametrize("preset, policy, match", [
    ("linux-2.5.65", "normal", "time_slice 0, but a live task has at least 1"),
    ("linux-6.12-eevdf", "rr", "an RR task with time_slice 0"),
])
def test_a_crafted_empty_slice_of_a_task_whose_slice_counts_down_is_refused(preset, policy, match):
    """A slice that runs out is refilled at that tick: a crafted 0 loaded,
    and the next tick counted it down past 0 for ever (found by the pickle
    mutator)."""
    sim = ps.Simulator(preset)
    sim.spawn(ps.Program().loop().run(ms=3).sleep(ms=7).end(), name="ticker", policy=policy,
              rt_priority=0 if policy == "normal" else 5)
    sim.run(seconds=0.02)
    raw = bytearray(sim._core.snapshot())
    slice_at = raw.index(b"ticker\0") - 12 + 68  # psTask: the name at 12, time_slice at 68
    assert int.from_bytes(raw[slice_at:slice_at + 4], "little") == sim.task("ticker").time_slice > 0
    raw[slice_at:slice_at + 4] = bytes(4)
    with pytest.raises(ValueError, match=f"damaged: pid 1: {match}"):
        Sim.restore(resealed(raw))


def test_a_policy_count_crafted_at_the_top_of_int64_neither_overflows_nor_spoils_the_pickle():
    """A policy's own counts (wakeup migrations, balance pulls, array
    switches ...) stop at 2^62 as the engine's do: nr_wakeup_migrations
    crafted at INT64_MAX overflowed at the next migrating wakeup (found by
    the pickle mutator under UBSan)."""
    sim = ps.Simulator("linux-6.12-eevdf", cpus=2, seed=3)
    for _ in range(5):
        sim.spawn(ps.programs.interactive(2, 7))
    sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=1)
    row = sim.cpu_stats()[1]
    raw = bytearray(sim._core.snapshot())
    i = at(raw, [row["nr_balance_pulls"], row["nr_wakeup_migrations"]]) + 8
    raw[i:i + 8] = (2**63 - 1).to_bytes(8, "little")
    core = Sim.restore(resealed(raw))
    core.run_until(core.now_ns + 1_000_000_000)
    again = Sim.restore(bytes(core.snapshot()))
    again.check()
    assert again.now_ns == core.now_ns


def test_a_crafted_eevdf_slice_longer_than_any_base_slice_is_refused():
    """A slice of 2^62 widened entity_lag's clamp, and the lag saved later
    broke the state check (found by the pickle mutator)."""
    sim = ps.Simulator("linux-6.6-eevdf")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.run(seconds=0.01)
    raw = bytearray(sim._core.snapshot())
    slice_at = raw.index(b"hog\0") - 12 + 696  # psTask: the name at 12; fair_se's slice at 696
    assert int.from_bytes(raw[slice_at:slice_at + 8], "little") == sim.task("hog").slice
    raw[slice_at:slice_at + 8] = (2**62).to_bytes(8, "little")
    with pytest.raises(ValueError, match=r"damaged: .*slice=4611686018427387904 ns is outside the "
                                         r"allowed range 0\.\.4000000000 ns"):
        Sim.restore(resealed(raw))


def test_a_crafted_link_on_a_task_in_no_prio_array_is_refused():
    """Dequeuing unlinks a task from its prio list and the lru list."""
    sim = ps.Simulator("houston-2003")
    sim.spawn(ps.programs.cpu_hog())
    sim.spawn(ps.Program().loop().run(ms=1).sleep(ms=50).end(), name="sleeper")
    while sim.task("sleeper").state != "interruptible":
        sim.step()
    raw = bytearray(sim._core.snapshot())
    # psTask: the name at 12, the policy's area at 648: array, run_next, run_prev, lru_next, lru_prev
    links = raw.index(b"sleeper\0") - 12 + 648
    assert raw[links:links + 20] == bytes([0xFF] * 20), "psTask's layout moved: update the offsets"
    raw[links + 12:links + 16] = (0).to_bytes(4, "little")
    with pytest.raises(ValueError, match="damaged: pid 2: in no array but linked in a list"):
        Sim.restore(resealed(raw))


def test_a_crafted_back_link_of_the_lru_list_is_refused():
    """psu_lru_del follows lru_prev: a crafted one loaded, and unlinking the
    task later spliced an idle task into the list (found by the pickle
    mutator)."""
    sim = ps.Simulator("houston-2003", cpus=4)
    sim.spawn(ps.programs.cpu_hog(), name="hog", cpu=0)
    raw = bytearray(sim._core.snapshot())
    links = raw.index(b"hog\0") - 12 + 648  # array, run_next, run_prev, lru_next, lru_prev
    assert raw[links + 16:links + 20] == bytes([0xFF] * 4), "psTask's layout moved: update the offsets"
    raw[links + 16:links + 20] = (2).to_bytes(4, "little")
    with pytest.raises(ValueError, match="damaged: cpu 0 array .: the lru list's back link"):
        Sim.restore(resealed(raw))


def test_a_crafted_lru_link_under_a_policy_without_an_lru_list_is_refused():
    """Only Houston keeps an lru list: under 2.5.64 a crafted lru link was
    never walked by the check, and outlived the task's dequeue (found by the
    pickle mutator)."""
    sim = ps.Simulator("linux-2.5.64")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    raw = bytearray(sim._core.snapshot())
    links = raw.index(b"hog\0") - 12 + 648  # array, run_next, run_prev, lru_next, lru_prev
    assert raw[links + 12:links + 20] == bytes([0xFF] * 8), "psTask's layout moved: update the offsets"
    raw[links + 12:links + 16] = bytes(4)
    with pytest.raises(ValueError, match="damaged: pid 1: linked in an lru list this policy does not keep"):
        Sim.restore(resealed(raw))


def test_a_crafted_houston_run_avg_timestamp_ahead_of_the_jiffies_is_refused():
    """Houston measures the sleep credit from run_avg_timestamp, a 32-bit
    jiffy: one crafted ahead loaded and overflowed sleep_avg at the next
    wakeup (found by the pickle mutator)."""
    sim = ps.Simulator("houston-2003", hz=100)
    sim.spawn(ps.programs.interactive(2, 30), name="waker")
    sim.run(seconds=0.35)
    raw = bytearray(sim._core.snapshot())
    # psTask: the name at 12, the policy's area at 648: o1_sched (48 bytes), run_avg, run_avg_timestamp
    stamp = raw.index(b"waker\0") - 12 + 648 + 52
    assert 0 < int.from_bytes(raw[stamp:stamp + 4], "little") <= sim.jiffies, \
        "psTask's or h_task's layout moved: update the offsets"
    raw[stamp:stamp + 4] = (sim.jiffies + 93).to_bytes(4, "little")
    with pytest.raises(ValueError, match=r"damaged: pid 1: run_avg_timestamp \d+ is after jiffies"):
        Sim.restore(resealed(raw))



def test_a_crafted_move_pending_on_a_task_that_is_not_running_or_to_a_cpu_it_may_not_use_is_refused():
    """migrate_to is set only on the task current on its CPU, to a CPU its
    affinity allows, and cleared as it leaves: a crafted affinity that no
    longer allowed the pending move loaded, and the task was later picked on
    a CPU its affinity excluded (found by the pickle mutator).  2.4.20's is
    the only preset that leaves a move pending between calls: it has no
    migration thread."""
    sim = ps.Simulator("linux-2.4.20", cpus=4)
    for name in ("hog-a", "hog-b", "hog-c"):
        sim.spawn(ps.programs.cpu_hog(), name=name, cpus_allowed=[0])
    sim.run(seconds=0.01)
    running = next(name for name in ("hog-a", "hog-b", "hog-c")
                   if sim.runqueue(0)["curr"] == sim.task(name).pid)
    waiting = next(name for name in ("hog-a", "hog-b", "hog-c") if name != running)
    sim.set_affinity(running, [2, 3])  # moves to CPU 2 as CPU 0 next schedules
    raw = bytearray(sim._core.snapshot())
    # psTask: the name at 12 (names no other string of the snapshot holds),
    # cpus_allowed at 520, migrate_to at 76
    cur, other = raw.index(running.encode() + b"\0") - 12, raw.index(waiting.encode() + b"\0") - 12
    assert int.from_bytes(raw[cur + 76:cur + 80], "little") == 2, "psTask's layout moved"
    Sim.restore(resealed(raw)).check()
    moved_elsewhere = bytearray(raw)
    moved_elsewhere[cur + 520:cur + 528] = (0b1000).to_bytes(8, "little")
    queued = bytearray(raw)
    queued[other + 76:other + 80] = (1).to_bytes(4, "little")
    for crafted in (moved_elsewhere, queued):
        with pytest.raises(ValueError, match=r"damaged: pid \d is to move to cpu [12], but it is "
                                             r"not current on cpu 0 or may not run there"):
            Sim.restore(resealed(crafted))


@pytest.mark.parametrize("preset", ["linux-2.5.65", "linux-6.6-eevdf"])
def test_a_crafted_move_left_pending_under_a_migration_thread_is_refused(preset):
    """Where set_cpus_allowed has a migration thread (2.5) or stopper (6.x),
    a running task is moved before the call returns: no state between
    calls holds a pending move.  One crafted into a snapshot is refused."""
    sim = ps.Simulator(preset, cpus=2)
    sim.spawn(ps.programs.cpu_hog(), name="pinned", cpus_allowed=[0])
    sim.run(seconds=0.01)
    raw = bytearray(sim._core.snapshot())
    cur = raw.index(b"pinned\0") - 12  # psTask: the name at 12, migrate_to at 76
    assert int.from_bytes(raw[cur + 76:cur + 80], "little") == 2**32 - 1, "psTask's layout moved"
    raw[cur + 520:cur + 528] = (0b10).to_bytes(8, "little")
    raw[cur + 76:cur + 80] = (1).to_bytes(4, "little")
    with pytest.raises(ValueError, match=r"damaged: pid 1 is to move to cpu 1 from cpu 0, but "
                                         r"under \w+ set_cpus_allowed moves a running task"):
        Sim.restore(resealed(raw))


@pytest.mark.parametrize("preset, max_prio", [("linux-2.5.65", 140), ("houston-2003", 180)])
def test_a_crafted_static_prio_that_does_not_follow_nice_is_refused(preset, max_prio):
    """static_prio is NICE_TO_PRIO(nice) under every policy: a crafted one
    loaded for a SCHED_RR task and overflowed Houston's timeslice by
    static_prio (found by the pickle mutator under the sanitizer build)."""
    sim = ps.Simulator(preset)
    sim.spawn(ps.programs.cpu_hog(), name="rr-task", policy="rr", rt_priority=5, nice=3)
    sim.run(seconds=0.01)
    raw = bytearray(sim._core.snapshot())
    static = raw.index(b"rr-task\0") - 12 + 60  # psTask: the name at 12, static_prio at 60
    assert int.from_bytes(raw[static:static + 4], "little") == max_prio - 17, "psTask's layout moved"
    raw[static:static + 4] = (2**30 + 163).to_bytes(4, "little")
    with pytest.raises(ValueError, match=rf"damaged: pid 1: static_prio {2**30 + 163}, prio \d+: "
                                         rf"nice 3 gives static_prio {max_prio - 17}"):
        Sim.restore(resealed(raw))


def test_a_crafted_sleeper_whose_cpu_its_affinity_excludes_is_refused():
    """set_affinity moves a task that is not running at once: a sleeper's
    cpu is always one it may use.  A crafted affinity excluding it loaded,
    and EEVDF's wakeup queued the task there, to be picked on a CPU it may
    not use (found by the pickle mutator)."""
    sim = ps.Simulator("linux-6.6-eevdf", cpus=4)
    sim.spawn(ps.programs.interactive(1, 30), name="sleeper", cpus_allowed=[3])
    sim.run(seconds=0.01)
    assert sim.task("sleeper").state == "interruptible"
    raw = bytearray(sim._core.snapshot())
    allowed = raw.index(b"sleeper\0") - 12 + 520  # psTask: the name at 12, cpus_allowed at 520
    assert int.from_bytes(raw[allowed:allowed + 8], "little") == 0b1000, "psTask's layout moved"
    raw[allowed:allowed + 8] = (0b10).to_bytes(8, "little")
    with pytest.raises(ValueError, match="damaged: pid 1 last ran on cpu 3 outside its affinity"):
        Sim.restore(resealed(raw))


@pytest.mark.parametrize("field", [-8, 0, 8], ids=["wide_scans", "ticks_batched", "ticks_deferred"])
def test_a_crafted_fast_path_count_at_the_top_of_int64_is_refused(field):
    """What the fast paths did (sim._core.fast_path_counts()) travels in a
    snapshot: a crafted count at INT64_MAX loaded, and the next sorted
    wheel bucket overflowed it (found by the pickle mutator under the
    sanitizer build).  Every such count is held to 0..2^62 as the engine's
    others are."""
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.programs.interactive(1, 3))
    sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=0.7)
    batched = sim._core.fast_path_counts()["batch"]
    assert batched > 0, "ticks were batched"
    raw = bytearray(sim._core.snapshot())
    # psFastState: wide_scans, ticks_batched, ticks_deferred
    i = at(raw, [batched]) + field
    raw[i:i + 8] = (2**63 - 1).to_bytes(8, "little")
    with pytest.raises(ValueError, match="damaged: the fast paths' counts"):
        Sim.restore(resealed(raw))


def one_sleeper_snapshot():
    """A sleeper that has armed two timers (t = 1 ms, due at 31; t = 32 ms,
    due at 62) under 2.5: timer_seq 2, and one timer queued."""
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.programs.interactive(1, 30))
    sim.run(seconds=0.05)
    return bytearray(sim._core.snapshot())


@pytest.mark.parametrize("value", [-1, 2**46, 2**63 - 1])
def test_a_crafted_timer_sequence_number_outside_its_domain_is_refused(value):
    """The timers' arming sequence number (psData.timer_seq) orders the
    timers due at one jiffy; it travels in a snapshot, held to 0..2^46 - 1,
    where the next timer's rank still fits its bits."""
    raw = one_sleeper_snapshot()
    # psData: instant_ns, instant_actions, then timer_seq
    i = at(raw, [32_000_000, 1, 2]) + 16
    raw[i:i + 8] = value.to_bytes(8, "little", signed=True)
    with pytest.raises(ValueError, match="damaged: the timers' sequence number"):
        Sim.restore(resealed(raw))


@pytest.mark.parametrize("place, seq", [(600, 3), (600, 0), (720, 2), (2**10 - 1, 2)],
                         ids=["seq-not-given-yet", "seq-0", "place-720", "place-1023"])
def test_a_crafted_timer_rank_that_no_arming_gives_is_refused(place, seq):
    """A queued timer's rank is its place in the wheel's order and a
    sequence number already given out (1..timer_seq)."""
    raw = one_sleeper_snapshot()
    # the queued timer: due at 62 ms, armed at jiffy 32 after the cascade
    # at jiffy 0 (place 600) as the second timer
    i = raw.index(np.asarray([62_000_000, 600 << 46 | 2], dtype="<i8").tobytes()) + 8
    raw[i:i + 8] = (place << 46 | seq).to_bytes(8, "little")
    with pytest.raises(ValueError, match="damaged: event 0"):
        Sim.restore(resealed(raw))


def test_the_timer_sequence_number_travels_so_a_restored_twin_fires_timers_in_the_same_order():
    sim = ps.Simulator("linux-2.5.65", cpus=3, record="events")
    for run_ms, cpu in [(3, 0), (1, 1), (2, 2)]:
        sim.spawn(ps.Program().loop().run(ms=run_ms).sleep(ms=10 - run_ms).end(), cpu=cpu,
                  cpus_allowed=[cpu])
    sim.run(seconds=0.015)
    twin = pickle.loads(pickle.dumps(sim))
    for s in (sim, twin):
        s.run(seconds=0.1)
    assert np.array_equal(sim.events(), twin.events())
    assert same(sim, twin)


def test_a_crafted_list_of_waiting_tasks_is_refused():
    """The tasks waiting for a CPU are linked by slot (the behaviour watch
    looks at them): a link turned back on itself would loop for ever, one
    out of range would read outside the task array."""
    sim = ps.Simulator("linux-2.5.65")  # one CPU: slot 0 its idle task, pid k in slot k
    for pid in (1, 2, 3):
        sim.spawn(ps.programs.cpu_hog(), name=f"hog{pid}")
    sim.watch()  # the list is kept while a watch is on
    sim.run(seconds=0.05)
    raw = bytearray(sim._core.snapshot())
    links = {}
    for pid in (1, 2, 3):
        # psTask: the name at 12, waiting_prev at 480, waiting_next at 484
        at = raw.index(f"hog{pid}".encode() + b"\0") - 12 + 480
        links[pid] = (at, *(int.from_bytes(raw[at + k:at + k + 4], "little", signed=True)
                            for k in (0, 4)))
    # two wait behind the one that runs: one of them links to the other
    linked = [pid for pid, (_, prev, nxt) in links.items() if nxt in (1, 2, 3)]
    assert len(linked) == 1, f"psTask's layout moved: update the offsets ({links})"
    at = links[linked[0]][0]
    for bad in (linked[0], 1 << 20, -7):
        crafted = bytearray(raw)
        crafted[at + 4:at + 8] = bad.to_bytes(4, "little", signed=True)
        with pytest.raises(ValueError, match="damaged: the behaviour watch: the list of tasks"):
            Sim.restore(resealed(crafted))


def cfs_tasks_snapshot():
    """Three hogs on CPU 0 of two, pinned there, under EEVDF: each is on
    CPU 0's rq->cfs_tasks.  Returns the raw snapshot and, by name, the
    offset of each one's fair_se.list_stamp (list_prev and list_next follow
    it), its task slot and its (list_prev, list_next)."""
    sim = ps.Simulator("linux-6.12-eevdf", cpus=2)
    for k in range(3):
        sim.spawn(ps.programs.cpu_hog(), name=f"hog{k}", cpu=0, cpus_allowed=[0])
    sim.run(seconds=0.05)
    raw = bytearray(sim._core.snapshot())
    # psTask: the name at 12, the policy's area at 648: fair_se's tree links
    # (16 bytes), seven u64 times, list_stamp, list_prev, list_next
    stamp = {f"hog{k}": raw.index(f"hog{k}\0".encode()) - 12 + 648 + 72 for k in range(3)}
    slot = {name: 2 + k for k, name in enumerate(stamp)}  # after the 2 idle tasks
    links = {name: (int.from_bytes(raw[o + 8:o + 12], "little", signed=True),
                    int.from_bytes(raw[o + 12:o + 16], "little", signed=True))
             for name, o in stamp.items()}
    prevs, nexts = [p for p, _ in links.values()], [n for _, n in links.values()]
    assert all(len(set(e)) == 3 and -1 in e and set(e) - {-1} <= set(slot.values())
               for e in (prevs, nexts)), "psTask's or fair_se's layout moved: update the offsets"
    return raw, stamp, slot, links


def test_a_crafted_cfs_tasks_link_out_of_range_is_refused():
    raw, stamp, slot, links = cfs_tasks_snapshot()
    o = stamp["hog1"]
    raw[o + 12:o + 16] = (10**6).to_bytes(4, "little", signed=True)
    with pytest.raises(ValueError, match="damaged: slot 3 .*: a link, colour or cpu out of range"):
        Sim.restore(resealed(raw))


def test_a_crafted_cycle_in_cfs_tasks_is_refused():
    """The balancer walks rq->cfs_tasks from its tail: a tail linked back to
    the head would make the walk endless; the check finds it by the head's
    link back, which is not the tail."""
    raw, stamp, slot, links = cfs_tasks_snapshot()
    head = next(n for n, (prev, _) in links.items() if prev == -1)
    tail = next(n for n, (_, nxt) in links.items() if nxt == -1)
    o = stamp[tail]
    raw[o + 12:o + 16] = slot[head].to_bytes(4, "little", signed=True)
    with pytest.raises(ValueError, match=f"damaged: cpu 0: rq->cfs_tasks is broken at slot {slot[head]}"):
        Sim.restore(resealed(raw))


def test_a_crafted_cfs_tasks_out_of_its_stamps_order_is_refused():
    """The list must be the order of list_stamp: the head's and the tail's
    stamps swapped, the links intact, is refused."""
    raw, stamp, slot, links = cfs_tasks_snapshot()
    head = next(n for n, (prev, _) in links.items() if prev == -1)
    tail = next(n for n, (_, nxt) in links.items() if nxt == -1)
    a, b = stamp[head], stamp[tail]
    raw[a:a + 8], raw[b:b + 8] = raw[b:b + 8], raw[a:a + 8]
    with pytest.raises(ValueError, match="damaged: cpu 0: rq->cfs_tasks is out of its stamps' order"):
        Sim.restore(resealed(raw))


def test_a_crafted_cpu_set_of_a_program_op_is_refused():
    """A program's set_affinity op names one of the model's CPU sets
    (psModel.masks): a set with a CPU past the machine's, or with none, is
    refused as the snapshot loads."""
    sim = ps.Simulator("linux-2.5.65", cpus=8)
    sim.spawn(ps.Program().run(ms=1).set_affinity([1, 3, 5, 6]).run(ms=1), name="mover")
    raw = bytearray(sim._core.snapshot())
    mask = bytes([0x6A]) + bytes(127)  # CPUs 1, 3, 5, 6 in 16 words
    assert raw.count(mask) == 1, "the CPU set's bytes are not where a set's are"
    at = raw.index(mask)
    Sim.restore(resealed(raw)).check()
    for word, value in [(0, 0x16A), (15, 1 << 63), (0, 0)]:  # + CPU 8, + CPU 1023, no CPU
        crafted = bytearray(raw)
        crafted[at + 8 * word:at + 8 * word + 8] = value.to_bytes(8, "little")
        with pytest.raises(ValueError, match="damaged: CPU set 0"):
            Sim.restore(resealed(crafted))
