"""The Linux 2.4.20 scheduler (policy_linux24.c) against the claims of its
fact sheet (kernel/sched.c, timer.c, fork.c, exit.c of 2.4.20): counter
epochs and goodness with the mm bonus (§4-§6, §13), the sleeper's carry-over
(§13.3), fork's split (§9), release_task's credit (§10), the RT policies,
sched_yield (§8), the cost of the recalculation (§13.4) and SMP (§7)."""
import numpy as np
import pytest

import pysched as ps

PRESET = "linux-2.4.20"
KIND = {k: i for i, k in enumerate(ps.EVENT_KINDS)}
MS = 1_000_000


def hog():
    return ps.programs.cpu_hog()


def switches(sim):
    ev = sim.events()
    return ev[ev["kind"] == KIND["switch"]]


def first_switch_to(sim, pid):
    sw = switches(sim)
    return int(sw["time_ns"][sw["pid"] == pid][0])


# ---- constants (§1) ----

def test_the_default_hz_is_100_as_on_i386_2_4():
    assert ps.Simulator(PRESET).hz == 100
    params = {p.name: p.default for p in ps.preset_params(PRESET)}
    assert params["def_counter"] == 10 and params["max_counter"] == 20
    params = {p.name: p.default for p in ps.preset_params(PRESET, hz=1000)}
    assert params["def_counter"] == 100 and params["max_counter"] == 200


# the §1 table: NICE_TO_TICKS for nice -20, -10, 0, +10, +19
@pytest.mark.parametrize("hz, ticks", [
    (100, [11, 8, 6, 3, 1]),
    (250, [21, 16, 11, 6, 1]),
    (500, [41, 31, 21, 11, 2]),
    (1000, [81, 61, 41, 21, 3]),
    (2000, [161, 121, 81, 41, 5]),
])
def test_nice_to_ticks_follows_the_tick_scale_chain_of_hz(hz, ticks):
    got = [ps.formula(PRESET, "nice_to_ticks", n, hz=hz) for n in (-20, -10, 0, 10, 19)]
    assert got == ticks


def test_the_recalculation_has_fixed_points_2N_minus_1_from_below_and_2N_from_above():
    def chain(c, n=5):
        out = [c]
        for _ in range(n):
            out.append(ps.formula(PRESET, "recalculate", out[-1], 0))
        return out
    assert chain(0) == [0, 6, 9, 10, 11, 11]
    assert chain(20) == [20, 16, 14, 13, 12, 12]


# ---- epochs and goodness (§4-§6, §13.1-2) ----

def test_two_nice_0_hogs_share_50_50_in_runs_of_2N_ticks():
    sim = ps.Simulator(PRESET, record="events")
    a, b = sim.spawn(hog()), sim.spawn(hog())
    sim.run(seconds=12)
    assert sim.task(a).cpu_ticks == sim.task(b).cpu_ticks == 600
    sw = switches(sim)
    runs = np.diff(sw["time_ns"]) // MS
    # the first run is a's N = 6 ticks; after each recalculation the task
    # that just ran out has the mm bonus (27 against 26) and runs again:
    # 2N = 12 ticks in a row
    assert runs[0] == 60 and set(runs[1:]) == {120}
    assert list(sw["pid"][:5]) == [a, b, a, b, a]


@pytest.mark.parametrize("hz, n_fast, n_slow", [(100, 11, 1), (1000, 81, 3)])
def test_nice_minus_20_against_plus_19_share_exactly_N_to_N(hz, n_fast, n_slow):
    sim = ps.Simulator(PRESET, hz=hz)
    fast = sim.spawn(hog(), nice=-20)
    slow = sim.spawn(hog(), nice=19)
    epochs = 100
    sim.run(ticks=epochs * (n_fast + n_slow))
    assert sim.task(fast).cpu_ticks == epochs * n_fast
    assert sim.task(slow).cpu_ticks == epochs * n_slow


def test_the_queue_lists_the_global_runqueue_with_goodness_and_the_mm_bonus():
    sim = ps.Simulator(PRESET)
    a, b = sim.spawn(hog()), sim.spawn(hog())
    sim.run(ticks=0)
    assert sim.queue_columns == ["counter", "goodness", "cpu", "pid"]
    # a runs: its own mm is the current one (+1): 6 + 1 + 20 against 6 + 20
    assert sim.queue() == [(6, 27, 0, a), (6, 26, 0, b)]


def test_on_smp_goodness_adds_proc_change_penalty_and_skips_tasks_running_elsewhere():
    sim = ps.Simulator(PRESET, cpus=2)
    a, b, c = sim.spawn(hog()), sim.spawn(hog()), sim.spawn(hog())
    sim.run(ticks=0)
    assert [sim.task(p).cpu for p in (a, b, c)] == [0, 1, 0]
    assert sim.runqueue(0)["curr"] == a and sim.runqueue(1)["curr"] == b
    # seen from CPU 0 (a's mm): b runs on CPU 1, so can_schedule fails
    assert sim.queue(0) == [(6, 6 + 15 + 1 + 20, 0, a), (6, -1000, 1, b), (6, 6 + 15 + 20, 0, c)]
    # seen from CPU 1 (b's mm): c last ran on CPU 0, no penalty bonus
    assert sim.queue(1) == [(6, -1000, 0, a), (6, 6 + 15 + 1 + 20, 1, b), (6, 6 + 20, 0, c)]


# ---- the sleeper (§13.3, §7) ----

def test_a_sleepers_counter_climbs_to_2N_minus_1_and_it_preempts_a_hog_on_wakeup():
    sim = ps.Simulator(PRESET, record="events")
    hogs = [sim.spawn(hog()) for _ in range(2)]
    sim.set_param("spawn_counter", 3)  # the sleeper starts at 0
    s = sim.spawn(ps.Program().sleep(s=1).run(ms=1).sleep(s=10))
    seen = []
    for _ in range(99):
        c = sim.task(s).counter
        if not seen or seen[-1] != c:
            seen.append(c)
        sim.step(1)
    # one recalculation per epoch of the hogs: 0 -> 6 (it runs only to fall
    # asleep) -> 9 -> 10 -> 11 = 2N - 1, up to twice the slice, no further
    assert seen == [0, 6, 9, 10, 11]
    assert sim.runqueue()["nr_recalculations"] >= 6
    sim.run(seconds=0.5)
    ev = sim.events()
    woke = ev[(ev["kind"] == KIND["wakeup"]) & (ev["pid"] == s)]["time_ns"]
    assert len(woke) == 1
    # woken with 11 it scores 31 against at most 6 + 1 + 20 = 27 for a hog:
    # it preempts the hog at the wakeup instant
    assert list(sim.latencies(s)) == [0]
    sw = switches(sim)
    at_wakeup = sw[(sw["pid"] == s) & (sw["time_ns"] == woke[0])]
    assert len(at_wakeup) == 1 and at_wakeup["other"][0] in hogs
    assert sim.task(s).counter == 11


def test_a_woken_task_with_counter_0_does_not_preempt():
    sim = ps.Simulator(PRESET, record="events")
    h = sim.spawn(hog())
    f = sim.spawn(ps.Program().run(ms=100).sleep(ms=50).run(ms=1).sleep(s=10), policy="fifo",
                  rt_priority=1)
    sim.run(seconds=0.12)
    # as SCHED_FIFO it spent its counter (the tick leaves it at 0) and fell
    # asleep at 100 ms; made a normal task, it sleeps with counter 0
    sim.setscheduler(f, "normal")
    assert sim.task(f).counter == 0 and sim.runqueue()["curr"] == h
    sim.run(seconds=0.2)
    # woken at 150 ms it scores 0: no preemption; h runs out at 160 ms, the
    # recalculation gives both 6, and h, which just ran, wins with the mm
    # bonus (27 against 26) for 6 more ticks: f runs at 220 ms
    assert list(switches(sim)["time_ns"][switches(sim)["pid"] == f] // MS) == [0, 220]
    assert list(sim.latencies(f)) == [70 * MS]


@pytest.mark.parametrize("woken_counter, preempts", [(7, True), (6, False)])
def test_a_wakeup_preempts_when_the_goodness_difference_is_positive(woken_counter, preempts):
    sim = ps.Simulator(PRESET, record="events")
    w = sim.spawn(ps.Program().sleep(ms=50).run(ms=1).sleep(s=10), time_slice=woken_counter)
    sim.run(ticks=0)
    h = sim.spawn(hog(), time_slice=10)
    sim.run(seconds=0.2)
    # at 50 ms h has 5 ticks left: 5 + 1 + 20 = 26; w scores counter + 20, so
    # 7 gives a preemption_goodness of exactly 1 (> 0: preempt, 2.4.17 on;
    # 2.4.0's > 1 would not) and 6 gives 0, which waits for h's slice end
    assert sim.task(h).cpu_ticks >= 5
    assert list(sim.latencies(w)) == [0 if preempts else 50 * MS]


# ---- fork and exit (§9, §10) ----

def test_fork_splits_the_counter_and_the_child_does_not_run_first():
    sim = ps.Simulator(PRESET, record="events")
    parent = sim.spawn(ps.Program().fork(ps.Program().run(s=10)).run(s=10), time_slice=7)
    sim.run(ticks=0)
    child = parent + 1
    assert sim.task(parent).counter == 3 and sim.task(child).counter == 4
    sim.run(seconds=0.2)
    # the parent keeps the CPU until its 3 ticks are spent
    assert first_switch_to(sim, child) == 30 * MS


def test_a_parent_left_with_counter_0_lets_its_child_run_first():
    sim = ps.Simulator(PRESET, record="events")
    parent = sim.spawn(ps.Program().fork(ps.Program().run(s=10)).run(s=10), time_slice=1)
    sim.run(ticks=0)
    child = parent + 1
    assert sim.task(parent).counter == 0 and sim.task(child).counter == 1
    assert sim.runqueue()["curr"] == child and first_switch_to(sim, child) == 0


def test_a_fork_does_not_hand_the_cpu_to_a_better_waiting_task():
    sim = ps.Simulator(PRESET, record="events")
    a = sim.spawn(ps.Program().run(ms=20).fork(ps.Program().run(s=10)).run(s=10))
    b = sim.spawn(hog())
    sim.run(seconds=0.2)
    # at the fork a keeps 4 >> 1 = 2 ticks and scores 2 + 1 + 20 = 23, below
    # b's 26, yet 2.4 calls no schedule() for a fork that does not preempt:
    # a runs its 2 ticks out, then b its 6, then the child its 2; then all
    # are at 0, and after the recalculation the child, prev, has the mm bonus
    sw = switches(sim)
    assert [(int(t) // MS, int(p)) for t, p in zip(sw["time_ns"][:4], sw["pid"][:4])] == [
        (0, a), (40, b), (100, a + 2), (180, a)]


@pytest.mark.parametrize("hz, start, after", [(100, 10, 10), (100, 50, 20), (1000, 500, 200)])
def test_exit_returns_the_counter_to_the_parent_clamped_at_max_counter(hz, start, after):
    sim = ps.Simulator(PRESET, hz=hz)
    parent = sim.spawn(ps.Program().fork(ps.Program().exit()).sleep(s=10), time_slice=start)
    sim.run(ticks=0)
    # the split gave each half; the child exited at once and was reaped:
    # the parent gets its half back, clamped with >= to MAX_COUNTER
    assert sim.task(parent + 1).state == "dead"
    assert sim.task(parent).counter == after


# ---- real-time policies ----

def test_sched_fifo_runs_until_it_blocks_and_the_tick_does_not_reschedule_it():
    sim = ps.Simulator(PRESET, record="events")
    h = sim.spawn(hog())
    f = sim.spawn(ps.Program().loop().run(ms=500).sleep(ms=100).end(), policy="fifo",
                  rt_priority=10)
    sim.run(seconds=0.3)
    # its counter ran out after 6 ticks and stays 0, yet it keeps the CPU
    assert sim.task(f).counter == 0 and sim.runqueue()["curr"] == f
    assert len(switches(sim)) == 1
    sim.run(seconds=0.3)
    sw = switches(sim)
    assert [(int(t) // MS, int(p)) for t, p in zip(sw["time_ns"], sw["pid"])] == [
        (0, f), (500, h), (600, f)]


def test_sched_fifo_keeps_the_cpu_at_counter_0_with_an_equal_fifo_task_ahead_in_the_list():
    sim = ps.Simulator(PRESET, record="events")
    ahead = sim.spawn(hog())
    f = sim.spawn(ps.Program().run(ms=500).sleep(s=10), policy="fifo", rt_priority=10)
    sim.run(ticks=0)
    # made FIFO 10 from Python while queued: no caller to reschedule, so it
    # stands first in the list with f's goodness (1010) while f runs
    sim.setscheduler(ahead, "fifo", 10)
    assert [row[3] for row in sim.queue()] == [ahead, f] and sim.runqueue()["curr"] == f
    sim.run(seconds=0.6)
    # 2.4.20 does not reschedule FIFO at counter 0 (up to 2.4.19 the tick
    # did, and schedule() would have picked `ahead` at 60 ms)
    sw = switches(sim)
    assert [(int(t) // MS, int(p)) for t, p in zip(sw["time_ns"], sw["pid"])] == [
        (0, f), (500, ahead)]


def test_sched_rr_round_robins_every_N_nice_ticks():
    sim = ps.Simulator(PRESET, record="events")
    a = sim.spawn(hog(), policy="rr", rt_priority=5)
    b = sim.spawn(hog(), policy="rr", rt_priority=5, nice=-20)
    sim.run(seconds=1)
    sw = switches(sim)
    # a slice of N(0) = 6 ticks, then N(-20) = 11, at the tail each time
    assert list(sw["pid"][:6]) == [a, b, a, b, a, b]
    assert list(np.diff(sw["time_ns"][:7]) // MS) == [60, 110, 60, 110, 60, 110]


# ---- sched_yield (§8) ----

def test_a_yielder_scores_minus_1_for_one_schedule_and_its_rivals_at_0_recalculate():
    sim = ps.Simulator(PRESET, record="events", params={"spawn_counter": 3})
    b = sim.spawn(hog())  # counter 0
    a = sim.spawn(ps.Program().run(ms=50).yield_().run(s=10), time_slice=10)
    sim.run(seconds=0.049)
    assert sim.runqueue()["curr"] == a and sim.runqueue()["nr_recalculations"] == 0
    sim.run(seconds=0.002)
    # at 50 ms a yields with 5 ticks left: -1 against b's 0, so c = 0 and a
    # recalculation runs (a: 5 >> 1 + 6 = 8, b: 6), then b (26) beats a (-1)
    assert sim.runqueue()["nr_recalculations"] == 1 and sim.runqueue()["curr"] == b
    assert sim.task(a).counter == 8 and sim.task(b).counter == 6
    sim.run(seconds=0.1)
    # the bit lasted one schedule(): when b runs out, a (8 + 20) is back
    assert first_switch_to(sim, b) == 50 * MS and switches(sim)["pid"][2] == a
    assert switches(sim)["time_ns"][2] == 110 * MS


def test_a_yielder_alone_runs_on_without_a_switch():
    sim = ps.Simulator(PRESET, record="events")
    a = sim.spawn(ps.Program().loop().run(ms=5).yield_().end())
    sim.run(seconds=1)
    assert len(switches(sim)) == 1 and sim.task(a).cpu_ns == 1000 * MS
    assert sim.task(a).nivcsw == 0


# ---- the cost of the recalculation (§5.6, §13.4) ----

def test_the_recalculation_visits_every_task_so_its_cost_grows_with_the_sleepers():
    visits = {}
    for sleepers in (0, 10, 20, 40):
        sim = ps.Simulator(PRESET)
        for _ in range(2):
            sim.spawn(hog())
        for _ in range(sleepers):
            sim.spawn(ps.Program().sleep(s=1000))
        sim.run(seconds=1.2)
        rq = sim.runqueue()
        # the same 10 epochs of 12 ticks whatever sleeps ...
        assert rq["nr_recalculations"] == 10
        visits[sleepers] = rq["nr_recalc_visits"]
    # ... but each visits every task: 10 * (2 + sleepers)
    assert visits == {n: 10 * (2 + n) for n in visits}


# ---- SMP (§5.5, §5.8, §7) ----

@pytest.mark.parametrize("placement", ["spread", "all on cpu 0"])
def test_four_hogs_on_two_cpus_get_half_a_cpu_each(placement):
    sim = ps.Simulator(PRESET, cpus=2)
    kw = {} if placement == "spread" else {"cpu": 0}
    pids = [sim.spawn(hog(), **kw) for _ in range(4)]
    sim.run(seconds=20)
    for p in pids:
        assert sim.task(p).cpu_ns / 20e9 == pytest.approx(0.5, abs=0.02)


def test_a_preempted_task_is_pushed_to_an_idle_cpu():
    sim = ps.Simulator(PRESET, cpus=2, record="events")
    h = sim.spawn(hog(), cpu=0)
    w = sim.spawn(ps.Program().sleep(s=1).loop().run(ms=30).sleep(ms=500).end(), cpus_allowed=[0])
    sim.run(seconds=1.2)
    ev = sim.events()
    woke = int(ev[(ev["kind"] == KIND["wakeup"]) & (ev["pid"] == w)]["time_ns"][0])
    # w, pinned to CPU 0 and grown to 11 asleep, preempts h there; h, still
    # runnable, is pushed by __schedule_tail's reschedule_idle to idle CPU 1
    mig = ev[ev["kind"] == KIND["migrate"]]
    assert len(mig) == 1
    assert (mig["pid"][0], mig["cpu"][0], mig["other"][0]) == (h, 1, 0)
    assert mig["time_ns"][0] == woke and first_switch_to(sim, w) <= woke
    assert sim.task(h).cpu == 1 and sim.runqueue(1)["curr"] == h
