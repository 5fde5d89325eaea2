"""pysched.workloads.from_rtapp: rt-app's JSON workloads as programs.

The files under tests/data/rtapp/ are copies of rt-app's own examples
(scheduler-tools/rt-app, doc/examples/, GPL-2.0; their README says which
commit each comes from): they load and run, and where the example says what
it does, the run does it."""
import json

import numpy as np
import pytest

import pysched as ps
from pysched import workloads
from pysched.workloads import rtapp_build, rtapp_read
from pysched.results.plot_data import switch_intervals

import repo_paths

DATA = repo_paths.DATA / "rtapp"
PRESET = "linux-2.5.65"
MS = 10**6
WAKEUP = ps.EVENT_KINDS.index("wakeup")


def wakeups_ms(sim, pid):
    ev = sim.events()
    return ev["time_ns"][(ev["kind"] == WAKEUP) & (ev["pid"] == pid)] // MS


def share(sim, pid):
    t = sim.task(pid)
    end = t.exit_ns if t.exit_ns >= 0 else sim.now_ns
    return t.cpu_ns / (end - t.start_ns)


# ---------------------------------------------------------------- rt-app's own examples

EXAMPLES = sorted(p.name for p in DATA.glob("*.json"))


def test_every_example_copied_is_listed_with_its_source():
    readme = (DATA / "README.md").read_text()
    assert EXAMPLES and all(name in readme for name in EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("preset", ["linux-2.5.65", "houston-2003", "linux-2.4.20"])
def test_rtapps_examples_load_and_run(name, preset):
    w = workloads.from_rtapp(DATA / name)
    assert w.source == str(DATA / name) and w.threads
    sim = w.simulator(preset, cpus=2, debug=True)
    sim.run(seconds=min(w.duration or 2, 2))
    sim.check()
    for pid, t in enumerate(w.threads, 1):
        assert sim.task(pid).name == t.name and sim.task(pid).cpu_ns > 0


@pytest.mark.parametrize("name,duty", [("tutorial-example1.json", 0.2),   # run 20 ms, sleep 80 ms
                                       ("tutorial-example2.json", 0.1),   # 10 ms every 100 ms
                                       ("template.json", 0.1)])           # the same, a sleep 0 more
def test_the_periodic_examples_load_the_cpu_as_they_say(name, duty):
    w = workloads.from_rtapp(DATA / name)
    sim = w.simulator(PRESET)
    sim.run(seconds=w.duration)
    assert share(sim, 1) == pytest.approx(duty, abs=0.002)


def test_example7s_barriers_order_the_two_tasks_as_its_comment_says():
    # task0: 1 ms, sleep 2, FIRST, 2 ms, SECOND, 1 ms, sleep 2, THIRD;
    # task1: 2 ms, FIRST, 1 ms, sleep 2, SECOND, 2 ms, THIRD: FIRST at 3 ms,
    # SECOND at 6, THIRD at 9, a cycle of 9 ms in which task0 runs 4 ms and
    # task1 5 (on two CPUs each runs as soon as it may)
    w = workloads.from_rtapp(DATA / "tutorial-example7.json")
    assert w.duration == 5
    sim = w.simulator(PRESET, cpus=2, record="events")
    sim.run(seconds=w.duration)
    assert sim.task(1).cpu_ns == pytest.approx(4 / 9 * 5e9, rel=0.002)
    assert sim.task(2).cpu_ns == pytest.approx(5 / 9 * 5e9, rel=0.002)
    # the first cycle to the ms: task0 wakes from its sleep at 3 and, once
    # at FIRST, wakes task1 there; task1 wakes task0 at SECOND (6 ms)
    assert list(wakeups_ms(sim, 1)[:2]) == [3, 6] and wakeups_ms(sim, 2)[0] == 3


def test_test_json_signals_its_waiter_and_both_end():
    # thread1 waits on "queue" under "mutex"; thread0 signals it holding
    # the mutex, twice, 200 ms apart; nice -19 both, pinned to CPUs 0 and 1
    w = workloads.from_rtapp(DATA / "test.json")
    assert [t.spawn_kwargs() for t in w.threads] == [
        {"name": "thread0-0", "nice": -19, "policy": "normal", "rt_priority": 0, "cpus_allowed": [0]},
        {"name": "thread1-1", "nice": -19, "policy": "normal", "rt_priority": 0, "cpus_allowed": [1]}]
    assert w.mutexes == ("rtapp:mutex:mutex",) and w.duration is None
    sim = w.simulator(PRESET, cpus=2)
    sim.run(seconds=1)
    assert [sim.task(p).cpu_ns // MS for p in (1, 2)] == [40, 10]
    assert [sim.task(p).exit_ns // MS for p in (1, 2)] == [400, 20]


def test_a_thread_pinned_past_cpu_63_runs_there_on_a_large_machine():
    w = workloads.from_rtapp({"tasks": {"t": {"run": 1000, "cpus": [300, 1023]}},
                              "global": {"duration": 1}})
    sim = w.simulator(PRESET, cpus=1024)
    sim.run(seconds=0.01)
    assert sim.task(1).cpus == [300, 1023] and sim.task(1).cpu in (300, 1023)
    with pytest.raises(ValueError, match=r"1023, but the simulator has 512 CPUs \(0\.\.511\)"):
        w.simulator(PRESET, cpus=512)


def test_the_ignored_keys_are_listed_with_where_they_were():
    w = workloads.from_rtapp(DATA / "example2.json")
    assert w.ignored[0] == "resources" and "global.frag" in w.ignored
    assert "global.calibration" in w.ignored and "global.duration" not in w.ignored


# ---------------------------------------------------------------- a periodic task

@pytest.mark.parametrize("preset", ["linux-2.5.65", "houston-2003", "linux-2.4.20"])
def test_a_periodic_task_gets_its_period_and_its_duty_cycle(preset):
    # run 10 ms, timer period 100 ms: woken every 100 ms, 10 % of the CPU
    w = workloads.from_rtapp({"tasks": {"periodic": {
        "loop": -1, "run": 10000, "timer": {"ref": "tick", "period": 100000}}}})
    sim = w.simulator(preset, record="events")
    sim.run(seconds=5)
    assert list(wakeups_ms(sim, 1)) == list(range(100, 5001, 100))
    assert share(sim, 1) == pytest.approx(0.1, abs=1e-9)
    assert np.asarray(ps.metrics.cpu_share(sim, start_s=1, end_s=5)["share"])[0] == pytest.approx(0.1)


def test_a_delay_starts_the_timers_reference_late():
    # rt-app sleeps to start + delay and counts its timers from there
    w = workloads.from_rtapp({"tasks": {"t": {"delay": 50000, "run": 10000,
                                              "timer": {"ref": "r", "period": 100000}}}})
    sim = w.simulator(PRESET, record="events")
    sim.run(seconds=0.5)
    assert list(wakeups_ms(sim, 1)) == [50, 150, 250, 350, 450]


# ---------------------------------------------------------------- relative and absolute timers

def overrun(mode):
    """10 ms every 20 ms three times, one activation of 50 ms, then 10 ms
    every 20 ms five times: when the task wakes and when it ends."""
    def phase(loop, run):
        return {"loop": loop, "run": run, "timer": {"ref": "t", "period": 20000, "mode": mode}}
    w = workloads.from_rtapp({"tasks": {"t": {"loop": 1, "phases": {
        "p0": phase(3, 10000), "p1": phase(1, 50000), "p2": phase(5, 10000)}}}})
    sim = w.simulator(PRESET, record="events")
    sim.run(seconds=1)
    return list(wakeups_ms(sim, 1)), sim.task(1).exit_ns // MS


def test_a_relative_timer_restarts_from_the_end_of_an_overrun():
    # the 50 ms activation ends at 110, past its timer (80): no sleep, and
    # the next period counts from 110
    assert overrun("relative") == ([20, 40, 60, 130, 150, 170, 190, 210], 210)


def test_an_absolute_timer_catches_up_after_an_overrun():
    # the timers stay at 100, 120, 140 ...: three activations at once (110,
    # 120, 130 and 140 begin without a sleep), then back on the grid at 160
    assert overrun("absolute") == ([20, 40, 60, 160, 180], 180)


def test_rtapps_default_timer_mode_is_relative():
    def late(**timer):
        w = workloads.from_rtapp({"tasks": {"t": {"loop": 3, "run": 30000,
                                                  "timer": {"ref": "t", "period": 20000, **timer}}}})
        return [t.program.ops for t in w.threads]
    assert late() == late(mode="relative") != late(mode="absolute")


# ---------------------------------------------------------------- mutexes

def critical_sections(sim, pid, before_us, inside_us, n):
    """The wall-time intervals of the task's first n critical sections,
    from the switch events, for a task whose loop is: lock, run inside_us,
    unlock, run the rest (before_us in all): section k is its CPU time
    k*before_us .. k*before_us + inside_us, from the moment it runs past
    the first to the moment it reaches the second."""
    runs = switch_intervals(sim.events(), sim.now_ns)
    runs = np.sort(runs[runs["pid"] == pid], order="start_ns")
    cum = np.concatenate([[0], np.cumsum(runs["end_ns"] - runs["start_ns"])])
    out = []
    for k in range(n):
        a, b = k * before_us * 1000, (k * before_us + inside_us) * 1000
        i = np.searchsorted(cum, a, side="right") - 1     # runs past a in run i
        j = np.searchsorted(cum, b, side="left") - 1      # reaches b in run j
        out.append((runs["start_ns"][i] + a - cum[i], runs["start_ns"][j] + b - cum[j]))
    return out


def locked(lock):
    body = {"lock": "m", "run": 5000, "unlock": "m", "run1": 1000} if lock else \
           {"run": 5000, "run1": 1000}
    return workloads.from_rtapp({"tasks": {
        "a": {"cpus": [0], **body}, "b": {"cpus": [1], **body}}})


def overlaps(sim):
    a, b = (critical_sections(sim, pid, 6000, 5000, 40) for pid in (1, 2))
    return sum(1 for s, e in a for s2, e2 in b if s < e2 and s2 < e)


def test_two_tasks_never_hold_a_mutex_at_once_on_two_cpus():
    w = locked(True)
    assert w.mutexes == ("rtapp:mutex:m",)
    sim = w.simulator(PRESET, cpus=2, record="events")
    sim.run(seconds=0.5)
    assert overlaps(sim) == 0
    # each waits for the other's section: 5 ms of every 10, not of every 6
    assert sim.task(1).cpu_ns + sim.task(2).cpu_ns == pytest.approx(0.5e9 * 1.2, rel=0.02)
    # without the lock their sections overlap: the check can see it
    sim = locked(False).simulator(PRESET, cpus=2, record="events")
    sim.run(seconds=0.5)
    assert overlaps(sim) >= 40


def test_a_wait_releases_the_mutex_until_signalled():
    # the waiter sleeps on the condition without the mutex: the signaller
    # takes it, signals, and the waiter goes on once it is unlocked
    w = workloads.from_rtapp({"tasks": {
        "waiter": {"loop": 1, "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m",
                   "run": 1000},
        "signaller": {"loop": 1, "sleep": 10000, "lock": "m", "run": 2000, "signal": "c",
                      "run1": 3000, "unlock": "m"}}})
    sim = w.simulator(PRESET, cpus=2, record="events")
    sim.run(seconds=0.1)
    assert sim.task(2).exit_ns // MS == 15 and sim.task(1).exit_ns // MS == 16


def test_a_broadcast_wakes_every_waiter_and_a_signal_one():
    def woken(event):
        w = workloads.from_rtapp({"tasks": {
            "w": {"instance": 3, "loop": 1, "lock": "m", "wait": {"ref": "c", "mutex": "m"},
                  "unlock": "m", "run": 1000},
            "b": {"loop": 1, "sleep": 5000, event: "c"}}})
        sim = w.simulator(PRESET, cpus=2)
        sim.run(seconds=0.1)
        return sum(sim.task(p).exit_ns >= 0 for p in (1, 2, 3))
    assert woken("broad") == 3 and woken("signal") == 1


def test_sync_wakes_the_waiter_then_waits_itself():
    # a ping-pong: each wakes the other and waits for it
    w = workloads.from_rtapp({"tasks": {
        "ping": {"run": 1000, "lock": "m", "sync": {"ref": "c", "mutex": "m"}, "unlock": "m"},
        "pong": {"lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m", "run": 1000,
                 "lock1": "m", "signal": "c", "unlock1": "m"}}})
    sim = w.simulator(PRESET, cpus=2)
    sim.run(seconds=1)
    # they take turns: 1 ms each, one at a time
    assert [sim.task(p).cpu_ns / 1e9 for p in (1, 2)] == pytest.approx([0.5, 0.5], abs=0.002)


# ---------------------------------------------------------------- what rt-app's threads are spawned with

def test_threads_are_named_as_rt_app_names_them():
    w = workloads.from_rtapp({"tasks": {"a": {"instance": 2, "run": 1000},
                                        "b": {"instance": 0, "run": 1000},
                                        "c": {"run": 1000}}})
    assert [(t.name, t.task, t.index) for t in w.threads] == [
        ("a-0", "a", 0), ("a-1", "a", 1), ("c-2", "c", 2)]
    long = workloads.from_rtapp({"tasks": {"x" * 40: {"run": 1000}}})
    assert long.threads[0].name == "x" * 31


def test_policy_and_priority_and_their_defaults():
    def spawned(task, **glob):
        w = workloads.from_rtapp({"global": glob, "tasks": {"t": {"run": 1000, **task}}})
        t = w.threads[0]
        return t.policy, t.nice, t.rt_priority
    assert spawned({}) == ("normal", 0, 0)
    assert spawned({"priority": 5}) == ("normal", 5, 0)
    assert spawned({"policy": "SCHED_FIFO"}) == ("fifo", 0, 10)
    assert spawned({"policy": "SCHED_RR", "priority": 42}) == ("rr", 0, 42)
    assert spawned({}, default_policy="SCHED_FIFO") == ("fifo", 0, 10)
    assert spawned({"policy": "SCHED_OTHER"}, default_policy="SCHED_FIFO") == ("normal", 0, 0)


def test_a_phases_policy_is_set_as_the_phase_begins():
    w = workloads.from_rtapp({"tasks": {"t": {"loop": 1, "phases": {
        "normal": {"run": 10000, "sleep": 10000},
        "rt": {"policy": "SCHED_FIFO", "priority": 30, "run": 10000, "sleep": 10000},
        "nicer": {"policy": "SCHED_OTHER", "priority": 10, "run": 10000, "sleep": 100000}}}}})
    sim = w.simulator(PRESET)
    seen = []
    for _ in range(3):
        sim.run(seconds=0.015)
        t = sim.task(1)
        seen.append((t.policy, t.rt_priority, t.nice))
        sim.run(seconds=0.005)
    assert seen == [("normal", 0, 0), ("fifo", 30, 0), ("normal", 0, 10)]


def test_a_phases_priority_alone_keeps_the_policy_in_force():
    w = workloads.from_rtapp({"tasks": {"t": {"policy": "SCHED_RR", "priority": 5, "phases": {
        "p0": {"run": 1000}, "p1": {"priority": 20, "run": 1000}}}}})
    sched = [op[1:3] for op in w.threads[0].program.ops if op[0] == ps.program.SETSCHED]
    assert sched == [(ps.program.POLICIES["rr"], 20)]


def test_a_fork_starts_the_task_named_with_its_own_policy():
    w = workloads.from_rtapp({"tasks": {
        "parent": {"loop": 2, "fork": "child", "sleep": 10000},
        "child": {"instance": 0, "policy": "SCHED_FIFO", "priority": 7, "loop": 1,
                  "run": 2000}}})
    assert len(w.threads) == 1 and set(w.forked) == {"child"}
    sim = w.simulator(PRESET)
    sim.run(seconds=0.1)
    st = sim.stats()
    assert sim.counters()["forks"] == 2
    kids = st[st["ppid"] == 1]
    assert list(kids["cpu_ns"]) == [2 * MS] * 2 and list(kids["policy"]) == [1, 1]


def test_instance_0_and_loop_0():
    w = workloads.from_rtapp({"tasks": {"never": {"instance": 0, "run": 1000},
                                        "nothing": {"loop": 0, "phases": {"p": {"run": 1000}}}}})
    assert [t.task for t in w.threads] == ["nothing"]
    sim = w.simulator(PRESET)
    sim.run(seconds=0.01)
    assert sim.task(1).exit_ns == 0 and sim.task(1).cpu_ns == 0


def test_yield_and_runtime_and_suffixed_keys():
    w = workloads.from_rtapp({"tasks": {"t": {"loop": 2, "runtime": 1000, "run_a": 2000,
                                              "yield": "", "sleep0": 3000, "run0": 4000}}})
    names = ["run", "sleep", "io", "wait", "post", "loop", "end", "fork", "exit", "yield"]
    assert [names[op[0]] for op in w.threads[0].program.ops] == [
        "loop", "run", "run", "yield", "sleep", "run", "end"]


def test_spawn_into_an_existing_simulator_and_only_once():
    w = workloads.from_rtapp(DATA / "example2.json")
    sim = ps.Simulator(PRESET)
    hog = sim.spawn(ps.programs.cpu_hog())
    assert w.spawn_into(sim) == [2, 3]
    with pytest.raises(ValueError, match="already holds an rt-app workload"):
        w.spawn_into(sim)
    sim.run(seconds=0.5)
    assert sim.task(hog).cpu_ns > 0 and sim.task(2).cpu_ns > 0
    with pytest.raises(TypeError, match="spawn_into needs a Simulator, not str"):
        w.spawn_into(PRESET)


# ---------------------------------------------------------------- the JSON rt-app reads

def test_comments_trailing_commas_and_repeated_keys(tmp_path):
    f = tmp_path / "w.json"
    f.write_text("""{
        // a comment
        "tasks": { /* another,
                      over lines */
            "t//x": {
                "loop": 1,
                "run": 1000,   // 1 ms
                "sleep": 2000,
                "run": 3000,   /* the same key again: a third event, as workgen allows */
                "lock": "a/*b*/c",
            },
        },
    }""")
    w = workloads.from_rtapp(f)
    assert w.threads[0].name == "t//x-0" and w.mutexes == ("rtapp:mutex:a/*b*/c",)
    ops = w.threads[0].program.ops
    assert [op[0] for op in ops] == [ps.program.RUN, ps.program.SLEEP, ps.program.RUN,
                                     ps.program.WAIT]


def test_a_json_error_gives_the_file_and_the_line(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text('{\n  /* comment */\n  "tasks": {\n    "t": {"run": 1000\n  }\n')
    with pytest.raises(ValueError, match=r"bad\.json: not JSON: .* line 6"):
        workloads.from_rtapp(f)
    f.write_text('{ "tasks": {} /* never closed \n}')
    with pytest.raises(ValueError, match=r"bad\.json: the /\* comment at line 1 is not closed"):
        workloads.from_rtapp(f)


def test_a_dict_with_numpy_values_is_read_as_the_json_would_be():
    as_json = {"global": {"duration": 3}, "tasks": {"t": {
        "instance": 2, "priority": -5, "cpus": [0, 1], "run": 1000,
        "timer": {"ref": "r", "period": 5000}}}}
    numpy = {"global": {"duration": np.int64(3)}, "tasks": {"t": {
        "instance": np.uint8(2), "priority": np.int32(-5), "cpus": np.array([0, 1]),
        "run": np.int64(1000), "timer": {"ref": np.str_("r"), "period": np.int16(5000)}}}}
    a, b = workloads.from_rtapp(as_json), workloads.from_rtapp(numpy)
    assert [t.program.ops for t in a.threads] == [t.program.ops for t in b.threads]
    assert [t.spawn_kwargs() for t in a.threads] == [t.spawn_kwargs() for t in b.threads]
    assert a.duration == b.duration == 3 and type(b.duration) is int
    json.dumps([t.spawn_kwargs() for t in b.threads])  # plain values only


# ---------------------------------------------------------------- errors name the key and where

def task(**t):
    return {"tasks": {"t": t}}


def phased(**p):
    return {"tasks": {"thread0": {"phases": {"p0": {"run": 1000}, "p1": p}}}}


BAD = [
    (phased(run=1000, mem=100), ValueError,
     r"^tasks\.thread0\.phases\.p1: unsupported event 'mem' \(memory writes are not simulated\)$"),
    (task(run=1000, resume="x"), ValueError, r"^tasks\.t: unsupported event 'resume'"),
    (task(run=1000, prioriy=3), ValueError,
     r"^tasks\.t: unsupported event or key 'prioriy'; did you mean 'priority'"),
    (phased(run=1000, instance=2), ValueError,
     r"^tasks\.thread0\.phases\.p1: unsupported event or key 'instance'"),
    (task(run=-5), ValueError, r"^tasks\.t: run=-5 is outside the allowed range 0\.\.2147483647$"),
    (task(sleep2=1.5), TypeError, r"^tasks\.t: sleep2 must be an int, not float$"),
    (task(run=True), TypeError, r"^tasks\.t: run must be an int, not bool$"),
    (task(run=1000, delay=-1), ValueError, r"^tasks\.t: delay=-1 is outside"),
    (task(run=1000, loop=-2), ValueError, r"^tasks\.t: loop=-2 is outside"),
    (task(run=1000, loop=0), ValueError, r"^tasks\.t: loop=0 is rt-app's 'for ever'"),
    (task(run=1000, instance=-1), ValueError, r"^tasks\.t: instance=-1 is outside"),
    (task(run=1000, fork="ghost"), ValueError,
     r"^tasks\.t: fork names task 'ghost', which is not in tasks$"),
    (task(run=1000, fork1="T"), ValueError,
     r"^tasks\.t: fork1 names task 'T', which is not in tasks; did you mean 't'\?$"),
    (task(run=1000, policy="SCHED_DEADLINE"), ValueError,
     r"^tasks\.t: policy 'SCHED_DEADLINE' is not simulated \(pysched simulates SCHED_OTHER, "
     r"SCHED_FIFO, SCHED_RR\)$"),
    (task(run=1000, policy="SCHED_FOO"), ValueError, r"^tasks\.t: unknown policy 'SCHED_FOO'"),
    (task(run=1000, policy=1), TypeError, r"^tasks\.t: policy must be a str, not int$"),
    (task(run=1000, priority=25), ValueError,
     r"^tasks\.t: priority=25 is outside the allowed range -20\.\.19$"),
    (task(run=1000, policy="SCHED_FIFO", priority=0), ValueError,
     r"^tasks\.t: priority=0 is outside the allowed range 1\.\.99$"),
    (phased(run=1000, policy="SCHED_IDLE"), ValueError,
     r"^tasks\.thread0\.phases\.p1: policy 'SCHED_IDLE' is not simulated"),
    ({"global": {"default_policy": "SCHED_DEADLINE"}, **task(run=1)}, ValueError,
     r"^global: default_policy 'SCHED_DEADLINE' is not simulated"),
    ({"global": {"durration": 3}, **task(run=1)}, ValueError,
     r"^global: unsupported key 'durration'; did you mean 'duration'"),
    ({"global": {"duration": -2}, **task(run=1)}, ValueError, r"^global: duration=-2 is outside"),
    ({"global": {"pi_enabled": True}, **task(run=1)}, ValueError,
     r"^global: pi_enabled=true: priority inheritance is not simulated$"),
    ({"global": {"pi_enabled": "no"}, **task(run=1)}, TypeError,
     r"^global: pi_enabled must be a bool, not str$"),
    ({"task": {}}, ValueError, r"^the workload: unsupported key 'task'; did you mean 'tasks'\?$"),
    ({"global": {}}, ValueError, r"^the workload has no 'tasks'$"),
    ({"tasks": {}}, ValueError, r"^tasks: no task$"),
    ({"tasks": []}, TypeError, r"^tasks must be an object, not array$"),
    ({"tasks": {"t": 5}}, TypeError, r"^tasks\.t must be an object, not int$"),
    (task(loop=1), ValueError, r"^tasks\.t: no event"),
    (phased(loop=2), ValueError, r"^tasks\.thread0\.phases\.p1: no event"),
    ({"tasks": {"t": {"run": 1, "phases": {"p": {"run": 1}}}}}, ValueError,
     r"^tasks\.t: event 'run' beside 'phases' \(rt-app ignores it\): move it into a phase$"),
    (task(run=1, timer={"ref": "r", "period": 10, "mode": "sometimes"}), ValueError,
     r"^tasks\.t\.timer: mode 'sometimes' is not 'relative' or 'absolute'$"),
    (task(run=1, timer={"ref": "r", "perod": 10}), ValueError,
     r"^tasks\.t\.timer: unsupported key 'perod'; did you mean 'period'\?$"),
    (task(run=1, timer={"ref": "r", "period": -10}), ValueError,
     r"^tasks\.t\.timer: period=-10 is outside"),
    (task(run=1, timer=100), TypeError, r"^tasks\.t\.timer must be an object, not int$"),
    (task(run=1, wait0={"ref": "c"}), ValueError, r"^tasks\.t\.wait0: mutex is missing"),
    (task(run=1, lock=3), TypeError, r"^tasks\.t: lock must be a str, not int$"),
    (task(run=1, cpus=[]), ValueError, r"^tasks\.t: cpus is empty"),
    (task(run=1, cpus=[1024]), ValueError, r"^tasks\.t: cpus\[\]=1024 is outside the allowed range 0\.\.1023$"),
    (task(run=1, cpus=0), TypeError, r"^tasks\.t: cpus must be an array of CPU numbers, not int$"),
    ({"tasks": {"t": {"cpus": [0], "phases": {"p": {"cpus": [1], "run": 1}}}}}, ValueError,
     r"^tasks\.t\.phases\.p: cpus=\[1\] differs from the task's \(\[0\]\)"),
    (task(run=1, taskgroup="tg1"), ValueError,
     r"^tasks\.t: taskgroup 'tg1' is not a cgroup path such as '/tg1/tg2'$"),
    (task(run=1, taskgroup="/tg1", policy="SCHED_FIFO"), ValueError,
     r"^tasks\.t: taskgroup '/tg1' for a fifo thread: rt-app takes taskgroups for SCHED_OTHER"),
    ({"tasks": {"t": {"taskgroup": "/a", "phases": {"p": {"run": 1}, "q": {"taskgroup": "/b",
                                                                          "run": 1}}}}},
     ValueError, r"^tasks\.t\.phases\.q: taskgroup '/b' differs from the one the thread runs in"),
    (task(loop=-1, yield_="x"), ValueError, r"^tasks\.t: loops for ever and an endless loop needs"),
    (task(sleep=0, loop=-1), ValueError, r"^tasks\.t: loops for ever and an endless loop needs"),
    ({"tasks": {"t": {"run": 1, "fork": "f"}, "f": {"instance": 0, "barrier": "b", "run": 1}}},
     ValueError, r"^tasks\.f: a forked task cannot use a barrier"),
    ({"tasks": {"t": {"cpus": [0], "run": 1, "fork": "f"}, "f": {"instance": 0, "run": 1}}},
     ValueError, r"^tasks\.t: fork of task 'f', whose cpus \(all\) differ from 't''s \(\[0\]\)"),
]


@pytest.mark.parametrize("workload,error,match", BAD, ids=[b[2][:60] for b in BAD])
def test_a_bad_workload_names_the_key_and_where_it_is(workload, error, match):
    with pytest.raises(error, match=match):
        workloads.from_rtapp(workload)


def test_a_key_given_twice_is_an_error_unless_it_is_an_event(tmp_path):
    f = tmp_path / "w.json"
    f.write_text('{"tasks": {"t": {"loop": 1, "loop": 2, "run": 1}}}')
    with pytest.raises(ValueError, match=r"^tasks\.t: key 'loop' given twice$"):
        workloads.from_rtapp(f)
    f.write_text('{"tasks": {"t": {"run": 1}, "t": {"run": 2}}}')
    with pytest.raises(ValueError, match=r"^tasks: task 't' given twice$"):
        workloads.from_rtapp(f)


def test_cpus_the_simulator_has_not_are_named_at_spawn():
    w = workloads.from_rtapp(DATA / "test.json")
    with pytest.raises(ValueError, match=r"^tasks\.thread1: cpus=\[1\] names CPU 1, but the "
                                         r"simulator has 1 CPU \(0\.\.0\)$"):
        w.simulator(PRESET)


def test_from_rtapp_takes_a_path_or_a_dict():
    with pytest.raises(TypeError, match="from_rtapp takes a path or a dict, not list"):
        workloads.from_rtapp([])
    w = workloads.from_rtapp(str(DATA / "test.json"))
    assert w.source == str(DATA / "test.json")


# ---------------------------------------------------------------- barriers of many threads, bounds

def barrier_task(instance, loop=1, run=100):
    return {"instance": instance, "loop": loop, "run": run, "barrier": "b"}


def test_a_barrier_of_1100_threads_runs_with_a_few_ops_a_thread():
    # each thread posted every other one's channel: 1.2 million ops and a
    # livelock at the first crossing (a million actions at one instant)
    w = workloads.from_rtapp({"tasks": {"t": barrier_task(1100, loop=3)}})
    first, *others = (t.program for t in w.threads)
    assert max(len(p.ops) for p in others) == 5          # loop, run, post, wait, end
    # the first waits for the others' posts in a loop, then posts each of them
    assert len(first.ops) == 6 + 1099
    sim = w.simulator(PRESET, cpus=2)
    sim.run(seconds=1)
    st = sim.stats()
    assert (st["cpu_ns"] == 300_000).all() and (st["exit_ns"] >= 0).all() and len(st) == 1100


@pytest.mark.parametrize("fast", [2, 99])   # 3 threads meet all to all, 100 at the first
def test_no_thread_passes_a_barrier_before_the_last_arrives(fast):
    w = workloads.from_rtapp({"tasks": {
        "fast": {"instance": fast, "loop": 1, "run0": 1000, "barrier": "b", "run1": 1000},
        "slow": {"instance": 1, "loop": 1, "run0": 50_000, "barrier": "b", "run1": 1000}}})
    assert len(w.threads) == fast + 1
    sim = w.simulator(PRESET, cpus=4)
    sim.run(seconds=0.045)
    # the slow thread has not arrived (it needs 50 ms of CPU): the fast ones wait there
    assert sim.task(fast + 1).cpu_ns < 50 * MS
    assert all(sim.task(pid).cpu_ns == MS for pid in range(1, fast + 1))
    sim.run(seconds=1)
    assert [sim.task(pid).cpu_ns for pid in range(1, fast + 2)] == [2 * MS] * fast + [51 * MS]
    slow_arrives = 50 * MS
    assert min(sim.task(pid).exit_ns for pid in range(1, fast + 1)) > slow_arrives


def test_a_workload_expanding_beyond_max_ops_is_refused_before_anything_is_built(monkeypatch):
    def no_program():
        raise AssertionError("a program was built")

    monkeypatch.setattr(rtapp_build, "Program", no_program)
    events = {**{f"lock{i}": "m" for i in range(20)}, **{f"unlock{i}": "m" for i in range(20)}}
    # 50,000 threads at a barrier: a program each, of 4 + 40 ops, and each thread one
    with pytest.raises(ValueError, match=r"^the workload expands to 2,300,000 program ops \(one "
                                         r"per thread included\), more than the 1,000,000 "
                                         r"allowed \(MAX_OPS\)"):
        workloads.from_rtapp({"tasks": {"t": {"instance": 50_000, "barrier": "b", **events}}})


def test_the_ops_counted_are_the_ops_built(monkeypatch):
    built = []
    program = rtapp_build.Builder.program

    def spy(self, task, prog=None, instance=None):
        out = program(self, task, prog, instance)
        if isinstance(out, ps.Program):
            built.append(len(out.ops))
        return out

    monkeypatch.setattr(rtapp_build.Builder, "program", spy)
    counted = []
    ops = rtapp_build.Builder.ops
    monkeypatch.setattr(rtapp_build.Builder, "ops", lambda self: counted.append(ops(self)) or
                        counted[-1])
    mixed = {"tasks": {
        "a": {"instance": 70, "run": 10, "barrier": "b", "lock": "m", "unlock": "m"},
        "c": {"instance": 2, "loop": 3, "phases": {"p": {"barrier": "b", "broad": "x", "run": 0,
                                                       "wait": {"ref": "x", "mutex": "m"}}}},
        "d": {"instance": 3, "priority": 5, "phases": {"p": {"loop": 4, "run": 1, "barrier": "e"},
                                                       "q": {"policy": "SCHED_FIFO", "sleep": 9}}},
        "f": {"instance": 0, "run": 5, "fork": "g"},
        "g": {"instance": 0, "run": 1, "signal": "x"}}}
    for source in [DATA / name for name in EXAMPLES] + [mixed]:
        built.clear()
        w = workloads.from_rtapp(source)
        assert counted[-1] == sum(built) + len(w.threads) > len(w.threads)


def test_a_76_byte_barrier_of_4000_threads_expands_to_a_few_ops_a_thread():
    w = workloads.from_rtapp({"tasks": {"t": {"instance": 4000, "run": 1, "barrier": "b"}}})
    # each thread loops for ever on: run, post the first's channel, wait on
    # its own; the first waits in a loop for the 3,999 others, then posts
    # each of them (it built 16 million ops, in 30 s and 2.6 GiB)
    assert sum(len(t.program.ops) for t in w.threads) == 3999 * 5 + 6 + 3999


def test_nesting_deeper_than_32_levels_is_refused(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"tasks": {"t": {"run": ' + "[" * 100_000 + "]" * 100_000 + "}}}")
    with pytest.raises(ValueError, match=r"deep\.json: objects and arrays nest deeper than 32 "
                                         r"levels at line 1$"):
        workloads.from_rtapp(path)
    deep = inner = {}
    for _ in range(10_000):
        inner["x"] = {}
        inner = inner["x"]
    with pytest.raises(ValueError, match=r"^the workload(\.x)+: objects and arrays nest deeper "
                                         r"than 32 levels$"):
        workloads.from_rtapp(deep)
    # 32 levels are read (and then refused for what they hold)
    path.write_text('{"tasks": {"t": {"run": ' + "[" * 29 + "]" * 29 + "}}}")
    with pytest.raises(TypeError, match="run must be an int, not list"):
        workloads.from_rtapp(path)


def test_a_dict_that_contains_itself_is_refused():
    w = {"tasks": {"t": {"run": 1000}}}
    w["tasks"]["t"]["phases"] = w
    with pytest.raises(ValueError, match=r"^the workload\.tasks\.t\.phases contains itself$"):
        workloads.from_rtapp(w)
    loop = [1]
    loop.append(loop)
    with pytest.raises(ValueError, match=r"^the workload\.tasks\.t\.cpus\[1\] contains itself$"):
        workloads.from_rtapp({"tasks": {"t": {"run": 1000, "cpus": loop}}})


def test_a_dict_sharing_values_is_counted_as_it_unfolds(monkeypatch):
    assert workloads.MAX_VALUES == 1_000_000
    monkeypatch.setattr(rtapp_read, "MAX_VALUES", 5_000)
    level = {"run": 1}
    for _ in range(25):   # 2^25 values once each dict's two keys are unfolded
        level = {"a": level, "b": level}
    with pytest.raises(ValueError, match=r"^the workload holds more than 5,000 values \(a "
                                         r"dict or list that appears twice counts twice\)$"):
        workloads.from_rtapp({"tasks": {"t": {"run": 1, "x": level}}})
    # a phase shared by two tasks is read twice
    phase = {"run": 1000, "sleep": 1000}
    w = workloads.from_rtapp({"tasks": {"a": {"phases": {"p": phase}},
                                        "b": {"phases": {"p": phase}}}})
    assert [t.program.ops == w.threads[0].program.ops for t in w.threads] == [True, True]


def test_a_file_that_is_not_json_or_not_utf8_names_itself(tmp_path):
    path = tmp_path / "big.json"
    path.write_text('{"tasks": {"t": {"run": ' + "9" * 5000 + "}}}")
    with pytest.raises(ValueError, match=r"big\.json: not JSON: Exceeds the limit \(4300 digits\)"):
        workloads.from_rtapp(path)
    path.write_bytes(b'{"tasks": {"t\xff": {"run": 1}}}')
    with pytest.raises(ValueError, match=r"big\.json: not UTF-8 text"):
        workloads.from_rtapp(path)


def test_the_rtapp_fuzzer_runs_200_inputs_without_a_finding(tmp_path):
    import fuzz_rtapp

    n, outcomes, findings = fuzz_rtapp.run(None, seed=1, out=str(tmp_path), iterations=200)
    assert n == 200 and findings == []
    assert outcomes["ValueError"] > 50 and outcomes["TypeError"] > 10 and outcomes["ran"] > 10


def test_a_file_larger_than_any_rt_app_workload_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """Parsing takes about twelve times a file's size: a 257 MB file of
    nested objects took 3.2 GB (found by the rt-app fuzzer)."""
    assert workloads.MAX_FILE_BYTES == 16 << 20
    monkeypatch.setattr(rtapp_read, "MAX_FILE_BYTES", 1000)
    path = tmp_path / "huge.json"
    path.write_text('{"tasks": {"t": {"run": 1000' + " " * 2000 + "}}}")
    with pytest.raises(ValueError, match=r"huge\.json: 2\d\d\d bytes, more than an rt-app workload "
                                         r"may have \(MAX_FILE_BYTES, 1000\)"):
        workloads.from_rtapp(path)
    path.write_text('{"tasks": {"t": {"run": 1000}}}')
    assert len(workloads.from_rtapp(path).threads) == 1


# ---------------------------------------------------------------- taskgroups

def test_taskgroups_become_nested_groups_of_1024_shares():
    # rt-app's taskgroup names a cgroup path; each becomes a task group (its
    # missing parents too) with the default cpu.shares, 1024
    w = workloads.from_rtapp({"tasks": {
        "one": {"taskgroup": "/tg1", "run": 10000},
        "three": {"instance": 3, "taskgroup": "/tg2/inner", "run": 10000},
        "free": {"taskgroup": "", "run": 10000}}})
    assert [t.taskgroup for t in w.threads] == ["/tg1"] + ["/tg2/inner"] * 3 + [None]
    sim = w.simulator("linux-6.12-eevdf", debug=True)
    assert [g.path for g in sim.groups()] == ["/", "/tg1", "/tg2", "/tg2/inner"]
    assert set(sim.group_stats()["shares"]) == {1024}
    sim.run(2.0)
    cpu = sim.stats()["cpu_ns"]
    # three equal entities at the root: tg1, tg2 and the free thread
    assert cpu[0] / cpu.sum() == pytest.approx(1 / 3, abs=0.005)
    assert cpu[1:4].sum() / cpu.sum() == pytest.approx(1 / 3, abs=0.005)
    assert cpu[4] / cpu.sum() == pytest.approx(1 / 3, abs=0.005)


def test_a_first_phases_taskgroup_is_where_the_thread_starts():
    w = workloads.from_rtapp({"tasks": {"t": {"phases": {
        "p0": {"taskgroup": "/g", "run": 1000}, "p1": {"taskgroup": "/g", "run": 1000}}}}})
    assert w.threads[0].taskgroup == "/g"
    assert w.threads[0].spawn_kwargs()["group"] == "/g"


def test_taskgroups_need_a_fair_preset():
    w = workloads.from_rtapp({"tasks": {"t": {"taskgroup": "/g", "run": 1000}}})
    with pytest.raises(ValueError, match="fair presets.*linux-2.5.65"):
        w.simulator("linux-2.5.65")
