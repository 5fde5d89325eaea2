"""A replay conserves demand: every task of every capture in tests/data
(recorded with experiments/record_real_trace.py: a pipe pair with and
without think time, a condition variable, an epoll server, make -j2) gets
its recorded CPU time under every preset with the defaults; and the rule
that decides which wakeups are posts, on small synthetic traces.

A task's *recorded CPU time* is the CPU it used in the trace: its bursts
from its start (or the trace's first line) to its exit (or the trace's
last line), trace.tasks["cpu_ns"].  The replay runs the trace's duration
plus 5 % (GRACE): a capture's last activations (the workload's parent
reaping its children as perf stops) end at its very end."""
import json

import numpy as np
import pytest

import pysched as ps
from pysched import trace as tr
from pysched.program import POST, SLEEP, TIMER, WAIT
from pysched.trace.wakes import HANDOFF_NS

from repo_paths import DATA

GRACE = 1.05
CAPTURES = sorted(p.name[:-len(".txt.gz")] for p in DATA.glob("real_*.txt.gz"))


def workload_tids(t, facts):
    """The workload's tasks: the process the recorder named rec-NAME and
    its descendants (the trace's forks), or the facts' comms for a capture
    recorded before the recorder named it."""
    if "root" not in facts:
        return [t.tid(c) for c in facts["comms"]]
    return t.family(facts["root"])


@pytest.fixture(scope="module", params=CAPTURES)
def capture(request):
    name = request.param
    facts = json.loads((DATA / f"{name}.json").read_text())
    t = tr.load(DATA / f"{name}.txt.gz")
    return name, t, facts, t.to_workload(tasks=workload_tids(t, facts))


def test_the_captures_are_small_and_hold_their_workload(capture):
    name, t, facts, w = capture
    assert (DATA / f"{name}.txt.gz").stat().st_size < 300_000
    for comm in facts["comms"]:
        assert t.task(comm)["cpu_ns"] > 0
    # the run() ops ask for what the trace recorded, no more, no less
    rows = {int(r["tid"]): r for r in t.tasks}
    for task in w.tasks:
        assert task.demand_ns == rows[task.tid]["cpu_ns"], task.comm


@pytest.mark.parametrize("preset", ps.presets())
def test_every_task_gets_its_recorded_cpu_time_under_every_preset(capture, preset):
    name, t, facts, w = capture
    sim = w.run(preset, seconds=GRACE * w.duration)
    pids = w.pids(sim)
    for task in w.tasks:
        got = sim.task(pids[task.tid]).cpu_ns
        assert abs(got - task.demand_ns) <= 0.01 * task.demand_ns, (name, task.comm, got,
                                                                    task.demand_ns)


def test_the_request_reply_pairs_of_the_captures_are_posts_and_their_think_times_sleeps():
    t = tr.load(DATA / "real_pingpong.txt.gz")
    tasks = {x.comm: x.program.ops for x in t.to_workload(tasks=["ping", "pong"]).tasks}
    chan = {c: f"trace:{t.tid(c)}" for c in ("ping", "pong")}
    waits = [op for op in tasks["ping"] if op[0] == WAIT]
    posts = [op for op in tasks["pong"] if op[0] == POST and op[1] == chan["ping"]]
    answers = t.edges[(t.edges["waker"] == t.tid("pong")) & (t.edges["wakee"] == t.tid("ping"))]
    assert len(waits) == len(posts) >= 0.9 * int(answers["count"][0])
    # ping thinks 2 ms between an answer and its next request: a timed sleep each time
    thinks = sum(op[0] == TIMER for op in tasks["ping"])
    assert abs(thinks / len(waits) - 1) < 0.1


# ---------------------------------------------------------------- synthetic traces

A, B, C, H = 10, 11, 12, 13
COMMS = {0: "swapper/0", A: "client", B: "server", C: "consumer", H: "hog"}


class Perf:
    """perf script text of one CPU, lines in time order (microseconds)."""

    def __init__(self):
        self.lines = []

    def _line(self, us, cur, event, fields):
        self.lines.append(f"{COMMS[cur]:>16} {cur:5d}/{cur:<5d} [000] "
                          f"{1000 + us // 1_000_000}.{us % 1_000_000:06d}000: "
                          f"sched:{event}: {fields}\n")

    def switch(self, us, prev, state, nxt):
        self._line(us, prev, "sched_switch",
                   f"prev_comm={COMMS[prev]} prev_pid={prev} prev_prio=120 prev_state={state}"
                   f" ==> next_comm={COMMS[nxt]} next_pid={nxt} next_prio=120")

    def wake(self, us, cur, wakee):
        self._line(us, cur, "sched_waking",
                   f"comm={COMMS[wakee]} pid={wakee} prio=120 target_cpu=000")

    def exit(self, us, pid):
        self._line(us, pid, "sched_process_exit", f"comm={COMMS[pid]} pid={pid} prio=120")

    def load(self, tmp_path):
        path = tmp_path / "synthetic.txt"
        path.write_text("".join(self.lines))
        return tr.load(path)


def client_server(cycles, request_gap=10):
    """A client that computes 1 ms, asks a server, waits for its answer
    (1.5 ms of the server's work) and thinks 2 ms; the server answers, then
    goes on computing 3 ms while the client thinks, so that the think timer
    fires on the server.  The client blocks request_gap us of CPU after its
    request.  Times in us."""
    p = Perf()
    p.switch(0, 0, "R", A)          # the server is blocked since the start
    base = 0
    for _ in range(cycles):
        p.wake(base + 1000, A, B)                        # the request
        p.switch(base + 1000 + request_gap, A, "S", B)   # wait for the answer
        b = base + 1000 + request_gap
        p.wake(b + 1500, B, A)                           # the answer
        p.switch(b + 1510, B, "R+", A)                   # the client preempts it
        p.switch(b + 1530, A, "S", B)                    # the client thinks
        p.wake(b + 3530, B, A)                           # its timer fires on the server
        p.switch(b + 4530, B, "S", A)
        base = b + 4530
    return p


def ops(w, comm, code):
    """The task's ops of `code`; its waits on a partner only (a task alive
    at the trace's end waits on the channel nobody posts)."""
    return [op for op in next(x for x in w.tasks if x.comm == comm).program.ops
            if op[0] == code and not (code == WAIT and op[1] == "trace:end")]


def test_a_request_and_its_answer_are_posts_and_a_timer_on_the_server_is_the_clients_sleep(
        tmp_path):
    t = client_server(20).load(tmp_path)
    w = t.to_workload()
    assert len(ops(w, "client", WAIT)) == 20                  # the answers
    assert len(ops(w, "server", WAIT)) == 20                  # the requests
    assert {op[1] for op in ops(w, "server", POST)} == {f"trace:{A}"}
    # each think: a timer to the trace's time of its wakeup (2 ms after it began)
    timers = ops(w, "client", TIMER)
    assert len(timers) == 20
    start = int(t.task("client")["start_ns"])
    thinks = t.blocks[(t.blocks["tid"] == A) & (t.blocks["waker"] == B)]
    think_ends = [int(e) for e, s in zip(thinks["end_ns"], thinks["start_ns"])
                  if e - s == 2_000_000]
    assert np.cumsum([op[1] for op in timers]).tolist() == [
        round((e - start) / 1000) for e in think_ends]


@pytest.mark.parametrize("gap", [HANDOFF_NS // 1000 - 5, HANDOFF_NS // 1000 + 20])
def test_a_request_is_a_handoff_within_handoff_ns_of_cpu_before_the_wait(tmp_path, gap):
    w = client_server(10, request_gap=gap).load(tmp_path).to_workload()
    asked = len(ops(w, "server", WAIT))
    assert asked == (10 if gap * 1000 <= HANDOFF_NS else 0)


def test_a_wakee_that_blocked_before_its_waker_woke_sleeps_to_then_and_waits(tmp_path):
    # a consumer waits for a producer that sleeps 1 ms (its timer fires on
    # the idle CPU), computes 200 us, signals the consumer and sleeps again
    p = Perf()
    p.switch(0, 0, "R", B)
    p.switch(1, B, "S", C)
    p.switch(2, C, "S", 0)
    base = 2
    for _ in range(10):
        p.wake(base + 1000, 0, B)
        p.switch(base + 1000, 0, "R", B)
        p.wake(base + 1200, B, C)
        p.switch(base + 1205, B, "S", C)
        p.switch(base + 1705, C, "S", 0)
        base += 1705
    t = p.load(tmp_path)
    w = t.to_workload()
    consumer = next(x for x in w.tasks if x.comm == "consumer").program.ops
    # a sleep to the producer's wakeup (its own part of the wait), then the wait
    first = [op[0] for op in consumer if op[0] in (TIMER, WAIT)][:2]
    assert first == [TIMER, WAIT]
    start = int(t.task("consumer")["start_ns"])
    producer_woke = int(t.blocks[t.blocks["tid"] == B]["end_ns"][0])
    assert next(op for op in consumer if op[0] == TIMER)[1] == round((producer_woke - start) / 1000)
    assert len(ops(w, "consumer", WAIT)) == 10


def test_an_interrupt_that_lands_on_a_task_just_before_it_blocks_once_is_no_post(tmp_path):
    # a sleeper's timer fires on the client four times, once 2 us before the
    # client blocks (marked), three times in the middle of its work
    COMMS[C] = "sleeper"
    try:
        p = Perf()
        p.switch(0, 0, "R", A)
        p.switch(1, A, "S", C)
        p.switch(2, C, "S", A)
        base = 2
        for k in range(4):
            p.wake(base + (498 if k == 0 else 200), A, C)
            p.switch(base + 500, A, "S", C)
            p.switch(base + 600, C, "S", 0)
            p.wake(base + 1000, 0, A)
            p.switch(base + 1000, 0, "R", A)
            base += 1000
        w = p.load(tmp_path).to_workload()
    finally:
        COMMS[C] = "consumer"
    assert not ops(w, "sleeper", WAIT) and len(ops(w, "sleeper", TIMER)) == 4
    every = p.load(tmp_path).to_workload(wake_edges="all")
    assert len(ops(every, "sleeper", WAIT)) == 4


@pytest.mark.parametrize("preset", ps.presets())
def test_the_client_and_server_get_all_their_cpu_under_every_preset(tmp_path, preset):
    t = client_server(40).load(tmp_path)
    w = t.to_workload()
    sim = w.run(preset, seconds=GRACE * w.duration)
    pids = w.pids(sim)
    for task in w.tasks:
        assert sim.task(pids[task.tid]).cpu_ns == task.demand_ns, task.comm


# ---------------------------------------------------------------- open demand

def hog_text(blocks):
    """A busy loop (pid H) alone on the CPU for 1 s, with blocks (start,
    length, state) in us; a task woken by the idle CPU (an interrupt)."""
    p = Perf()
    p.switch(0, 0, "R", H)
    for start, length, state in blocks:
        p.switch(start, H, state, 0)
        p.wake(start + length, 0, H)
        p.switch(start + length, 0, "R", H)
    p.switch(1_000_000, H, "R+", 0)
    return p


@pytest.mark.parametrize("blocks, opened", [
    ([], True),                                                          # never blocks
    ([(100, 200, "D"), (900, 300, "D"), (2000, 500, "S")], True),       # exec, page faults
    ([(100_000 * k, 50, "S") for k in range(1, 10)], True),              # rare, short
    ([(500_000, 2_000, "S")], False),                                    # one block too long
    ([(2_000, 50_000, "S")], False),                 # one that began at the start, too long
    ([(50_000 * k, 900, "S") for k in range(1, 20)], False),             # 1.7 % blocked
    ([(20_000 * k, 10_000, "S") for k in range(1, 50)], False),          # a sleeper
])
def test_open_demand_opens_a_task_cpu_bound_for_most_of_its_life(tmp_path, blocks, opened):
    t = hog_text(blocks).load(tmp_path)
    w = t.to_workload(tasks=["hog"], demand="open")
    assert (w.tasks[0].demand_ns == -1) == opened
    assert t.to_workload(tasks=["hog"]).tasks[0].demand_ns == t.task("hog")["cpu_ns"]


def test_the_open_rules_thresholds_are_parameters(tmp_path):
    t = hog_text([(500_000, 2_000, "S")]).load(tmp_path)
    assert t.to_workload(demand="open", open_rule=tr.OpenRule(max_block_ns=3_000_000)) \
        .tasks[0].demand_ns == -1
    short = hog_text([]).load(tmp_path)
    assert short.to_workload(demand="open", open_rule=tr.OpenRule(min_life_ns=2_000_000_000)) \
        .tasks[0].demand_ns > 0
    with pytest.raises(ValueError, match="max_blocked=2"):
        tr.OpenRule(max_blocked=2)
    with pytest.raises(ValueError, match="start_ns"):
        tr.OpenRule(start_ns=-1)
    with pytest.raises(TypeError, match="OpenRule"):
        t.to_workload(open_rule={"start_ns": 0})


def test_open_demand_opens_the_busy_loops_of_every_capture_and_nothing_else(capture):
    name, t, facts, _ = capture
    w = t.to_workload(tasks=workload_tids(t, facts), demand="open")
    assert sorted(x.comm for x in w.tasks if x.demand_ns < 0) == sorted(facts.get("hogs", {}))


def test_a_busy_loop_killed_by_its_parent_opens_and_the_parent_sleeps_to_its_times(tmp_path):
    # the parent's timer fires on the busy loop (the parent had slept since
    # the start), the parent kills it and waits for it; it exits and wakes
    # the parent.  Both wakeups come within 25 us of the loop's CPU before
    # its exit: recorded, they are its posts; open, it does not exit, and
    # the parent sleeps to their times instead
    p = Perf()
    p.switch(0, 0, "R", H)
    p.wake(500_000, H, B)
    p.switch(500_010, H, "R+", B)
    p.switch(500_030, B, "S", H)
    p.exit(500_034, H)
    p.wake(500_035, H, B)
    p.switch(500_036, H, "X", B)
    p.switch(500_100, B, "S", 0)
    t = p.load(tmp_path)
    w = t.to_workload(demand="open")
    assert [x.comm for x in w.tasks if x.demand_ns < 0] == ["hog"]
    assert not ops(w, "server", WAIT) and len(ops(w, "server", TIMER)) == 2
    w = t.to_workload()
    assert len(ops(w, "server", WAIT)) == 2 and not ops(w, "server", TIMER)


def own_split(preset, seconds):
    """The preset's own split of a busy loop at nice 0 against one at nice
    5, alone on one CPU: hog0's share of their CPU."""
    sim = ps.Simulator(preset, cpus=1)
    a = sim.spawn(ps.programs.cpu_hog(), name="hog0")
    b = sim.spawn(ps.programs.cpu_hog(), name="hog5", nice=5)
    sim.run(seconds=seconds)
    return sim.task(a).cpu_ns / (sim.task(a).cpu_ns + sim.task(b).cpu_ns)


@pytest.mark.parametrize("preset", ps.presets())
def test_open_demand_splits_two_real_busy_loops_by_the_presets_own_policy(preset):
    t = tr.load(DATA / "real_pingpong.txt.gz")
    w = t.to_workload(tasks=["hog0", "hog5"], demand="open")
    assert [task.demand_ns for task in w.tasks] == [-1, -1]
    sim = w.run(preset)
    pids = w.pids(sim)
    a, b = (sim.task(pids[t.tid(c)]).cpu_ns for c in ("hog0", "hog5"))
    # within two points of the share the policy gives two busy loops of its own
    assert abs(a / (a + b) - own_split(preset, w.duration)) < 0.02


@pytest.mark.parametrize("preset", [p for p in ps.presets() if "eevdf" in p])
def test_open_demand_splits_two_real_busy_loops_by_eevdf_weights(preset):
    t = tr.load(DATA / "real_pingpong.txt.gz")
    w = t.to_workload(tasks=["hog0", "hog5"], demand="open")
    sim = w.run(preset)
    pids = w.pids(sim)
    a, b = (sim.task(pids[t.tid(c)]).cpu_ns for c in ("hog0", "hog5"))
    # kernel/sched/core.c sched_prio_to_weight[]: nice 0 1024, nice 5 335
    assert abs(a / (a + b) - 1024 / (1024 + 335)) < 0.02


def test_sleeps_length_sleeps_each_timed_block_its_recorded_length(tmp_path):
    t = client_server(10).load(tmp_path)
    w = t.to_workload(sleeps="length")
    sleeps = [op[3] for op in ops(w, "client", SLEEP)]
    # each think, 2 ms: a constant distribution of 2,000,000 ns
    assert len(sleeps) == 10 and not ops(w, "client", TIMER)
    assert all(d[1] == 2_000_000 for d in sleeps)
    with pytest.raises(ValueError, match="sleeps='later'"):
        t.to_workload(sleeps="later")
