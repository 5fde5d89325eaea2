"""Replay: a trace becomes programs (Trace.to_workload) that any preset
runs, and compare() sets what each task got in the trace beside what the
simulated policy gave it.  The committed real trace
(tests/data/real_sched_trace.txt.gz, recorded with
experiments/record_real_trace.py; its facts in real_sched_trace.json) is
the workload it says, replays under every preset, and a fresh one is
recorded here when perf can."""
import importlib.util
import json

import numpy as np
import pytest

import pysched as ps
from pysched import trace as tr
from pysched.__main__ import main

from repo_paths import DATA, ROOT

REAL = DATA / "real_sched_trace.txt.gz"
FACTS = json.loads((DATA / "real_sched_trace.json").read_text())
RECORDER = ROOT / "experiments" / "record_real_trace.py"
EEVDF = "linux-6.6-eevdf"
# kernel/sched/core.c sched_prio_to_weight[] (docs/schedulers/cfs.md §2)
WEIGHT = {0: 1024, 5: 335, 10: 110}
HOGS = list(FACTS["hogs"])
# the presets the package ships (other tests register policies of their own)
PRESETS = ps.presets()
# a replay runs this much of the trace's duration: a capture's last
# activations (a workload's parent reaping its children as perf stops) end
# at its end, so a policy that serves them later needs a little time past it
GRACE = 1.05


@pytest.fixture(scope="module")
def real():
    return tr.load(REAL)


def col(table, name):
    """A column of compare()'s table (a DataFrame, or a dict without pandas)."""
    return np.asarray(table[name])


def cpu_of(table, comm):
    return float(col(table, "sim_cpu_ms")[list(col(table, "comm")).index(comm)])


# ---------------------------------------------------------------- the recorded facts

def test_the_real_trace_holds_the_workload_its_facts_describe(real):
    assert REAL.stat().st_size < 300_000
    for comm in FACTS["comms"]:
        row = real.task(comm)                  # exactly one task of each comm
        assert row["nice"] == FACTS["nice"][comm]
        assert row["cpus_allowed"] == 1 << FACTS["cpu"]        # pinned with taskset
        assert row["forked"] and row["exit_ns"] >= 0           # forked, then ended by SIGTERM
        assert abs((row["exit_ns"] - row["start_ns"]) / 1e9 - FACTS["seconds"]) < 0.1
    assert FACTS["hz"] == 250 and FACTS["kernel"].startswith("6.")


def test_the_real_kernel_shared_the_cpu_by_its_nice_weights(real):
    # the hogs never block; 6.18's fair class divides the CPU by weight
    for a, b in zip(HOGS, HOGS[1:]):
        got = real.task(a)["cpu_ns"] / real.task(b)["cpu_ns"]
        want = WEIGHT[FACTS["hogs"][a]] / WEIGHT[FACTS["hogs"][b]]
        assert abs(got / want - 1) < 0.10, (a, b, got, want)
        assert real.task(a)["nr_wakeups"] == 0 and real.task(a)["sleep_ns"] == 0


def test_the_sleeper_and_the_pipe_pair_look_as_they_were_written(real):
    s = real.task("sleeper")
    periods = FACTS["seconds"] * 1000 / FACTS["sleeper"]["period_ms"]
    assert abs(s["nr_wakeups"] / periods - 1) < 0.1
    assert abs(s["cpu_ns"] / s["nr_wakeups"] / 1e6 / FACTS["sleeper"]["work_ms"] - 1) < 0.3
    ping, pong = real.tid("ping"), real.tid("pong")
    edges = {(k, w): n for k, w, n in real.edges.tolist()}
    assert edges[ping, pong] > 300 and abs(edges[ping, pong] - edges[pong, ping]) <= 10
    # the recorded CPU agrees with the kernel's own sched_stat_runtime
    for comm in FACTS["comms"]:
        r = real.task(comm)
        assert abs(r["cpu_ns"] - r["runtime_ns"]) < 0.01 * r["cpu_ns"] + 2e6


# ---------------------------------------------------------------- replay

@pytest.mark.parametrize("preset", ps.presets())
def test_the_real_trace_replays_under_every_preset_with_all_its_cpu_demand(real, preset):
    w = real.to_workload(tasks=FACTS["comms"])
    want = sum(real.task(c)["cpu_ns"] for c in FACTS["comms"])
    assert w.demand_ns == want                  # the run() ops add up to the trace's CPU
    sim = w.run(preset, seconds=3 * w.duration)  # time to finish what the policy delayed
    pids = w.pids(sim)
    got = sum(sim.task(pids[real.tid(c)]).cpu_ns for c in FACTS["comms"])
    assert abs(got / want - 1) < 0.01
    table = tr.compare(real, sim)
    assert sorted(str(c) for c in col(table, "comm")) == sorted(FACTS["comms"])
    assert np.all(np.diff(col(table, "trace_cpu_ms")) <= 0)   # the busiest first


@pytest.mark.skipif(EEVDF not in ps.presets(), reason=f"{EEVDF} is not a preset yet (the "
                    "CFS/EEVDF policy is being added in parallel)")
def test_the_busy_loops_share_the_cpu_under_eevdf_as_on_the_real_kernel(real):
    w = real.to_workload(tasks=FACTS["comms"], demand="open")
    table = tr.compare(real, w.run(EEVDF))
    for a, b in zip(HOGS, HOGS[1:]):
        trace_ratio = real.task(a)["cpu_ns"] / real.task(b)["cpu_ns"]
        sim_ratio = cpu_of(table, a) / cpu_of(table, b)
        assert abs(sim_ratio / trace_ratio - 1) < 0.10, (a, b, sim_ratio, trace_ratio)


def test_open_demand_lets_the_policy_decide_the_busy_loops_share(real):
    w = real.to_workload(tasks=FACTS["comms"], demand="open")
    assert w.demand_ns == -1
    table = tr.compare(real, w.run("linux-2.5.65"))
    # 2.5's timeslices follow nice far less than weights do: 0 vs 5 gets
    # about 1.3:1 (102 vs 78 ms slices), not the trace's 3:1
    ratio = cpu_of(table, "hog0") / cpu_of(table, "hog5")
    assert 1.1 < ratio < 2.0
    # busy loops fill what the others leave: the CPU is used from the first one's start
    busy_ms = w.duration * 1e3 - min(t.start_ns for t in w.tasks) / 1e6
    assert abs(col(table, "sim_cpu_ms").sum() / busy_ms - 1) < 0.01


def test_wake_edges_become_posts_only_where_a_task_handed_over(real):
    progs = {t.comm: t.program for t in real.to_workload(tasks=FACTS["comms"]).tasks}
    chan = {c: f"trace:{real.tid(c)}" for c in FACTS["comms"]}

    def ops(prog, code):
        return [op[1] for op in prog.ops if op[0] == code]
    from pysched.program import POST, TIMER, WAIT
    # the pipe pair waits on its own channel and posts the other's
    assert set(ops(progs["ping"], WAIT)) == {chan["ping"]}
    assert set(ops(progs["ping"], POST)) == {chan["pong"]}
    assert set(ops(progs["pong"], POST)) == {chan["ping"]}
    # the sleeper's timer shows as a wakeup by whatever ran: it sleeps to
    # the trace's time of each wakeup instead
    assert not ops(progs["sleeper"], WAIT) and len(ops(progs["sleeper"], TIMER)) > 150
    assert not any(ops(progs[h], POST) for h in HOGS)
    every = {t.comm: t.program for t in
             real.to_workload(tasks=FACTS["comms"], wake_edges="all").tasks}
    assert ops(every["sleeper"], WAIT) and any(ops(every[h], POST) for h in HOGS)
    none = real.to_workload(tasks=FACTS["comms"], wake_edges="none").tasks
    assert not any(op[0] in (POST, WAIT) for t in none for op in t.program.ops)


def test_affinity_and_cpus_follow_the_trace(real):
    w = real.to_workload(tasks=FACTS["comms"])
    k = real.cpus.tolist().index(FACTS["cpu"])
    assert w.cpus == len(real.cpus) and all(t.cpus_allowed == (k,) for t in w.tasks)
    assert all(t.cpus_allowed is None for t in real.to_workload(tasks=FACTS["comms"],
                                                                cpus=1).tasks)
    assert all(t.cpus_allowed is None for t in real.to_workload(tasks=FACTS["comms"],
                                                                affinity=False).tasks)
    assert {t.comm: t.nice for t in w.tasks} == FACTS["nice"]


def scene(preset, cpus):
    """Forks and exits, a request/reply pair, timer sleepers and hogs, all
    with fixed durations."""
    sim = ps.Simulator(preset, cpus=cpus, seed=3, record="events")
    cc = ps.Program().run(ms=7).sleep(ms=3).run(ms=20).post("done").exit()
    sim.spawn(ps.Program().fork(cc, n=2).loop(6).wait("done").fork(cc).end(), name="make")
    for n in (0, 5, 10):
        sim.spawn(ps.programs.cpu_hog(), name=f"hog{n}", nice=n)
    sim.spawn(ps.Program().loop().wait("req").run(ms=3).post("rep").end(), name="X")
    sim.spawn(ps.Program().loop().sleep(ms=25).post("req").wait("rep").run(ms=1).end(),
              name="xterm")
    sim.spawn(ps.Program().loop().run(ms=1).sleep(ms=9).end(), name="tick")
    sim.run(seconds=2)
    return sim


@pytest.mark.parametrize("cpus", [1, 2])
@pytest.mark.parametrize("preset", ps.presets())
def test_a_run_replayed_from_its_own_trace_gives_each_task_its_cpu_again(preset, cpus, tmp_path):
    sim = scene(preset, cpus)
    sim.export_ftrace(tmp_path / "run.txt")
    t = tr.load(tmp_path / "run.txt")
    w = t.to_workload()
    # 5 % past the trace's end (GRACE): the last activations were at its end
    again = w.run(preset, seconds=GRACE * w.duration)
    pids = w.pids(again)
    st = sim.stats()
    assert sorted(pids) == st["pid"].tolist()       # every task, the forked ones too
    # on 2 CPUs, where the fair presets place wakeups on idle CPUs and pull
    # by load, a replay may pair the hogs differently for a while (a hog
    # that fell behind then runs alone on one CPU): 8 %
    tol = 0.05 if cpus == 1 else 0.08
    for pid, cpu in zip(st["pid"].tolist(), st["cpu_ns"].tolist()):
        assert abs(again.task(pids[pid]).cpu_ns - cpu) <= max(tol * cpu, 1e6), pid
    # the request/reply pair and make's children are channels again
    names = {t.comm for t in w.tasks if any(op[0] == ps.program.WAIT for op in t.program.ops)}
    assert {"X", "xterm", "make"} <= names


def test_compare_reads_as_the_trace_beside_the_policy(real):
    w = real.to_workload(tasks=["ping", "pong", "sleeper"])
    sim = w.run("linux-2.5.65")
    table = tr.compare(real, sim)
    for column in ("trace_cpu_pct", "sim_cpu_pct", "trace_mean_wait_ms", "sim_mean_wait_ms",
                   "trace_latency_ms", "sim_latency_ms"):
        assert column in table
    ping = list(col(table, "comm")).index("ping")
    assert col(table, "trace_cpu_ms")[ping] == real.task("ping")["cpu_ns"] / 1e6
    assert col(table, "trace_latency_ms")[ping] == pytest.approx(
        real.task("ping")["lat_sum_ns"] / real.task("ping")["lat_count"] / 1e6)
    st = sim.stats()
    row = st[st["pid"] == w.pids(sim)[real.tid("ping")]][0]
    assert col(table, "sim_mean_wait_ms")[ping] == pytest.approx(
        row["wait_ns"] / (row["nvcsw"] + row["nivcsw"]) / 1e6)
    assert col(table, "sim_cpu_pct")[ping] == pytest.approx(100 * row["cpu_ns"] / sim.now_ns)


def test_replay_refuses_what_it_cannot_do(real, tmp_path):
    with pytest.raises(KeyError, match="no task has comm 'nobody'"):
        real.to_workload(tasks=["nobody"])
    with pytest.raises(ValueError, match="wake_edges='some'"):
        real.to_workload(wake_edges="some")
    with pytest.raises(ValueError, match="demand='lots'"):
        real.to_workload(demand="lots")
    with pytest.raises(ValueError, match="cpus=0"):
        real.to_workload(cpus=0)
    with pytest.raises(ValueError, match="intervals"):
        tr.load(REAL, intervals=False).to_workload()
    with pytest.raises(ValueError, match="no task"):
        real.to_workload(tasks=lambda row: False)
    with pytest.raises(ValueError, match="TraceWorkload"):
        tr.compare(real, ps.Simulator("linux-2.5.65"))
    w = real.to_workload(tasks=["ping", "pong"])
    with pytest.raises(ValueError, match="too few"):
        w.run("linux-2.5.65", cpus=1)


def test_the_command_line_prints_the_table(capsys):
    assert main(["replay", str(REAL), "--preset", "linux-2.5.65", "--task", "ping",
                 "--task", "pong", "--demand", "open", "--seconds", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "=== linux-2.5.65: 0.500 s ===" in out
    lines = [ln for ln in out.splitlines() if " ping " in ln or " pong " in ln]
    assert len(lines) == 2 and "trace cpu %" in out and "sim latency ms" in out


def experiment_and_page():
    """experiments/replay_real_trace.py as a module, and the text of its docs
    page (skips in an sdist, which ships no experiments/)."""
    script = RECORDER.parent / "replay_real_trace.py"
    if not script.exists():
        pytest.skip("the sdist ships no experiments/ (a clone does)")
    spec = importlib.util.spec_from_file_location("replay_real_trace", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, (RECORDER.parent.parent / "docs" / "experiments" / "real-trace.md").read_text()


def table_presets(text, header, first):
    """The presets of the page's table whose header starts with `header`:
    its columns from `first` on (a preset added later joins it when the
    table is rerun)."""
    line = text[text.index(header):].split("\n", 1)[0]
    presets = [c.strip() for c in line.strip("|").split("|")[first:]]
    assert set(presets) <= set(ps.presets()) and len(presets) >= 5
    return presets


def test_the_docs_real_trace_tables_are_what_the_experiment_prints():
    mod, text = experiment_and_page()
    presets = table_presets(text, "| task | nice | trace |", 3)
    assert mod.tables(str(REAL), FACTS["comms"], "open", None, presets) in text


def test_the_docs_conservation_table_is_what_the_experiment_prints():
    mod, text = experiment_and_page()
    presets = table_presets(text, "| capture | sleeps |", 2)
    assert mod.conservation(presets) in text


# ---------------------------------------------------------------- a fresh trace

def _recorder():
    spec = importlib.util.spec_from_file_location("record_real_trace", RECORDER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("scenario", ["mixed", "pingpong", "condvar", "epoll"])
def test_a_trace_recorded_here_now_replays_with_every_tasks_cpu(tmp_path, scenario):
    # a capture the replay's rule was not tuned to: every task of the
    # workload (the process named rec-NAME and its descendants) gets its
    # recorded CPU time under every preset
    if not RECORDER.exists():
        pytest.skip("the sdist ships no experiments/ (a clone does)")
    rec = _recorder()
    problem = rec.perf_problem()
    if problem:
        pytest.skip(f"perf cannot record here: {problem}")
    facts = rec.record(tmp_path / "fresh.txt.gz", tmp_path / "fresh.json", seconds=0.5,
                       scenario=scenario)
    t = tr.load(tmp_path / "fresh.txt.gz")
    for comm in facts["comms"]:
        assert t.task(comm)["nice"] == facts["nice"][comm]
        assert t.task(comm)["cpu_ns"] > 0
    kids = {}
    for _, parent, child in t.forks.tolist():
        kids.setdefault(parent, []).append(child)
    tids, todo = [], [t.tid(facts["root"])]
    while todo:
        tids.append(todo.pop())
        todo += kids.get(tids[-1], [])
    assert {t.tid(c) for c in facts["comms"]} <= set(tids)
    w = t.to_workload(tasks=tids)
    for preset in PRESETS:
        sim = w.run(preset, seconds=GRACE * w.duration)
        pids = w.pids(sim)
        for task in w.tasks:
            got = sim.task(pids[task.tid]).cpu_ns
            assert abs(got - task.demand_ns) <= 0.01 * task.demand_ns, (preset, task.comm)


def test_the_starvation_invariant_flags_the_busy_loops_houston_starves(real):
    """houston-2003 gives the nice 5 and 10 loops no CPU at all in the
    replay (docs/experiments/real-trace.md): each waits from its start to
    the end, and is flagged as starved once its wait passes 1.5 s."""
    w = real.to_workload(tasks=FACTS["comms"], demand="open")
    sim = w.run("houston-2003", watch={"starvation_ms": 1500})
    inv = sim.invariants()
    starved = {str(t["name"]): t for t in inv.starved}
    assert set(starved) == {"hog5", "hog10"}
    for name, t in starved.items():
        assert t["cpu_ns"] == 0
        began = sim.now_ns - t["longest_wait_ns"]     # runnable from its spawn to the end
        assert t["starved_ns"] == began + 1_500_000_000
        assert t["longest_wait_ns"] > 2.0e9
