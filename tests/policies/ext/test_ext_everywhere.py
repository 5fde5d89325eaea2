"""Everything else works for a sched_ext scheduler as for any preset, in
Python (pysched.ext.examples.Simple) and in the C dialect
(experiments/sched_ext/wvtime.bpf.c, its twin, built with build_policy):
sweeps over its tunables, here and on process pools that never built it
(and a search there);
frames and plots; the run exported as ftrace and Perfetto, and the ftrace
replayed under it; interbench and rt-app; snapshots restored in a fresh
process, and copies."""
import copy
import multiprocessing
import pickle
import shutil
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
import pytest

import pysched as ps
import pysched.sweeps.local as sweep_local
from pysched import ext, workloads
from pysched.ext.examples import Simple
from pysched.workloads import interbench

from perfetto_proto import D_COUNTER, D_NAME, decode, slices
from test_ext_c_dialect import CC, NICE0, NICE5, cache, outputs, workload, wvtime  # noqa: F401

matplotlib = pytest.importorskip("matplotlib", reason="the test extra installs matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MS = 10**6
SHARED_DSQ = 0  # both schedulers' one DSQ


@pytest.fixture
def c_twin(request):
    """Simple's C twin, built: its preset."""
    if shutil.which(CC) is None:
        pytest.skip(f"no C compiler: {CC}, which built Python, is not installed")
    request.getfixturevalue("wvtime")
    return "wvtime"


@pytest.fixture(params=["Simple", "wvtime"])
def scheduler(request):
    """The Python scheduler (its class) or its C twin (its preset)."""
    return Simple if request.param == "Simple" else request.getfixturevalue("c_twin")


def scene(policy, params=None, cpus=2, seconds=1.0, record="events"):
    sim = ps.Simulator(policy, cpus=cpus, seed=7, record=record, params=params)
    workload(sim)
    sim.run(seconds=seconds)
    return sim


# ---------------------------------------------------------------- sweeps

def sleeper_beside_a_hog(policy, slice_ns):
    """A task that runs 30 ms and sleeps 60 ms beside a hog, on one CPU:
    it waits for the hog's slice to run out, so slice_ns shows in its
    worst wakeup latency."""
    sim = ps.Simulator(policy, params={"slice_ns": slice_ns})
    hog = sim.spawn(ps.programs.cpu_hog(), name="hog")
    s = sim.spawn(ps.Program().loop().run(ms=30).sleep(ms=60).end(), name="sleeper")
    sim.run(seconds=2)
    return {"hog_cpu_ms": sim.task(hog).cpu_ns / MS, "max_latency_ms": sim.task(s).lat_max_ns / MS,
            "switches": int(sim.stats()["nr_switches"].sum())}


def reniced_share(fifo):
    sim = ps.Simulator(Simple, params={"fifo": fifo})
    a = sim.spawn(ps.programs.cpu_hog(), name="a")
    sim.spawn(ps.programs.cpu_hog(), name="b", nice=5)
    sim.run(seconds=2)
    return {"share": sim.task(a).cpu_ns / 2e9}


SLICES = [1 * MS, 5 * MS, 20 * MS]


@pytest.fixture(scope="module")
def spawned_pool():
    """Workers that start afresh: they import this module, which builds
    nothing, so they know 'wvtime' only if the sweep brings it."""
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as ex:
        yield ex


def test_a_sweep_over_the_slice_gives_each_points_own_run_here_and_on_pools(
        c_twin, spawned_pool, monkeypatch):
    grid = {"policy": [Simple, "wvtime"], "slice_ns": SLICES}
    here = ps.sweep(sleeper_beside_a_hog, grid, max_workers=1)
    assert here.to_dict("records") == [
        {"policy": p, "slice_ns": s, **sleeper_beside_a_hog(p, s)} for p in grid["policy"]
        for s in SLICES]
    simple, c = (here[here["policy"].map(lambda p, q=q: p is q)].drop(columns="policy")
                 .reset_index(drop=True) for q in (Simple, "wvtime"))
    pd.testing.assert_frame_equal(simple, c)   # twins, at every slice
    # the tunable reaches the scheduler: the sleeper waits for the hog's
    # slice to run out, never longer, and at times nearly all of it
    for latency_ms, slice_ns in zip(simple["max_latency_ms"], SLICES):
        assert 0.9 * slice_ns / MS < latency_ms < slice_ns / MS
    # the default executor's pool (forked), and a spawned one whose workers
    # never called build_policy: the classes and the library travel
    monkeypatch.setattr(sweep_local, "PROBE_S", 0.0)
    monkeypatch.setattr(sweep_local, "STARTUP_S", {})
    monkeypatch.setattr(sweep_local, "STARTUP_OTHER_S", 0.0)
    pd.testing.assert_frame_equal(ps.sweep(sleeper_beside_a_hog, grid, max_workers=2), here)
    pd.testing.assert_frame_equal(ps.sweep(sleeper_beside_a_hog, grid, executor=spawned_pool), here)


def test_a_sweep_over_simples_fifo_switch_gives_weights_or_round_robin(spawned_pool):
    table = ps.sweep(reniced_share, {"fifo": [0, 1]}, executor=spawned_pool)
    assert table["share"].tolist() == [reniced_share(0)["share"], reniced_share(1)["share"]]
    vtime, fifo = table["share"]
    assert abs(vtime - NICE0 / (NICE0 + NICE5)) < 0.01    # by weight
    assert abs(fifo - 0.5) < 0.01                          # nice ignored: turns


def test_a_search_on_a_spawned_pool_finds_what_it_finds_here(c_twin, spawned_pool):
    """A search's workers, like a sweep's, get the libraries built here."""
    kw = dict(budget=48, seconds=0.5, seed=3)
    here = ps.search.search(c_twin, ps.search.uncharged_share(), **kw)
    pooled = ps.search.search(c_twin, ps.search.uncharged_share(), executor=spawned_pool, **kw)
    assert here.score > 0 and (pooled.score, pooled.workload) == (here.score, here.workload)


# ---------------------------------------------------------------- frames and plots

def test_the_frames_decode_the_run(scheduler):
    sim = scene(scheduler, cpus=2, seconds=1)
    st, frame = sim.stats(), sim.stats_frame()
    assert frame.index.tolist() == st["pid"].tolist()
    assert (frame["cpu_s"].to_numpy() * 1e9).round().astype(np.int64).tolist() == \
        st["cpu_ns"].tolist()
    assert frame["name"].tolist() == ["h0", "h1", "h2", "ed", "ed2"]
    # a DSQ id reads as the kernel's u64: a task waiting its turn is in the
    # shared DSQ, a running or sleeping one in none (SCX_DSQ_INVALID, 1 << 63)
    running = {sim.runqueue(c)["curr"] for c in range(sim.cpus)}
    waiting = [pid for pid in frame.index if frame.at[pid, "on_rq"] and pid not in running]
    assert waiting and len(running) == 2
    for pid, dsq in frame["dsq_id"].items():
        assert dsq == (SHARED_DSQ if pid in waiting else ext.SCX_DSQ_INVALID), (pid, dsq)
    # the events frame and the CPUs' counters tell the same switches
    ev = sim.events_frame()
    per_cpu = ev[(ev["kind"] == "switch")].groupby("cpu").size()
    assert per_cpu.tolist() == sim.cpu_stats_frame()["nr_switches"].astype(int).tolist()
    shares = ps.metrics.cpu_share(sim)
    assert shares["cpu_ms"].sum() == pytest.approx(st["cpu_ns"].sum() / MS)


def test_the_plots_draw_the_run_and_a_sweep_of_its_tunables(scheduler):
    sim = scene(scheduler, cpus=2, seconds=0.5)
    st = sim.stats()
    try:
        ax = ps.plot.timeline(sim)
        drawn = {}
        for coll in ax.collections:
            pid = int(coll.get_gid().split(" ")[1])
            for path in coll.get_paths():
                x0, x1 = path.vertices[:, 0].min(), path.vertices[:, 0].max()
                drawn[pid] = drawn.get(pid, 0) + x1 - x0
        for pid, cpu_ns in zip(st["pid"].tolist(), st["cpu_ns"].tolist()):
            assert drawn[pid] == pytest.approx(cpu_ns / 1e9, abs=1e-9)
        ax = ps.plot.shares(sim)
        widths = [p.get_width() for p in ax.patches]
        assert widths == pytest.approx((st["cpu_ns"] / st["cpu_ns"].sum()).tolist())
        ax = ps.plot.latency_cdf(sim)
        assert ax.get_lines()
        rows = [{"slice_ns": s, "cpus": c,
                 "switches": scene(scheduler, {"slice_ns": s}, cpus=c, seconds=0.3,
                                   record="counters").stats()["nr_switches"].sum()}
                for s in (1 * MS, 20 * MS) for c in (1, 2)]
        ax = ps.plot.heatmap(pd.DataFrame(rows), "slice_ns", "cpus", "switches")
        image = np.asarray(ax.images[0].get_array())
        assert image.tolist() == [[r["switches"] for r in rows if r["cpus"] == c]
                                  for c in (1, 2)]
    finally:
        plt.close("all")


# ---------------------------------------------------------------- traces

def test_the_ftrace_export_reads_back_and_replays_under_the_scheduler(scheduler, tmp_path):
    params = {"slice_ns": 3 * MS}
    sim = scene(scheduler, params, cpus=2, seconds=3)
    sim.export_ftrace(tmp_path / "run.txt")
    trace = ps.trace.load(tmp_path / "run.txt")
    st = sim.stats()
    assert dict(zip(trace.tasks["tid"].tolist(), trace.tasks["cpu_ns"].tolist())) == \
        dict(zip(st["pid"].tolist(), st["cpu_ns"].tolist()))
    # open demand: the hogs compute without end, so the replaying
    # scheduler decides their shares; its own gives back each task's CPU
    # within 5 %, another (FIFO: nice ignored) misses by far more
    workload_ = trace.to_workload(demand="open")

    def worst_miss(policy, params):
        c = ps.trace.compare(trace, workload_.run(policy, params=params))
        return ((c["sim_cpu_ms"] - c["trace_cpu_ms"]).abs() / c["trace_cpu_ms"]).max()
    assert worst_miss(scheduler, params) < 0.05
    assert worst_miss(Simple, {"fifo": 1, **params}) > 0.3


def test_the_perfetto_export_holds_the_run_and_the_schedulers_fields(scheduler, tmp_path):
    sim = scene(scheduler, cpus=2, seconds=0.5, record="series")
    sim.export_perfetto(tmp_path / "run.pftrace")
    tracks, events = decode(tmp_path / "run.pftrace")
    per_task = {}
    for uuid, d in tracks.items():
        if d.get(D_NAME, [b""])[0].startswith(b"CPU "):
            for name, b, e, depth in slices(events, uuid):
                pid = int(name.rsplit("(", 1)[1].rstrip(")"))
                per_task[pid] = per_task.get(pid, 0) + e - b
    st = sim.stats()
    assert per_task == {int(p): int(c) for p, c in zip(st["pid"], st["cpu_ns"]) if c}
    counters = {d[D_NAME][0].decode() for d in tracks.values() if D_COUNTER in d}
    assert {"slice", "dsq_vtime"} <= counters   # the class's headline fields


# ---------------------------------------------------------------- interbench and rt-app

def test_interbench_runs_the_python_scheduler_as_its_c_twin_and_names_them(c_twin):
    kw = dict(duration_s=10, benchmarks=("audio", "video"), loads=("none", "burn"))
    py, c = interbench.run(Simple, **kw), interbench.run("wvtime", **kw)
    assert py["preset"].tolist() == ["Simple"] * 4 and c["preset"].tolist() == ["wvtime"] * 4
    pd.testing.assert_frame_equal(py.drop(columns="preset"), c.drop(columns="preset"))
    burn = py.set_index(["benchmark", "load"]).loc[("video", "burn")]
    assert burn["latency_max_ms"] > 0 and burn["deadlines_met_pct"] < 100
    # the scheduler's parameters, checked as the Simulator checks them
    fifo = interbench.run(Simple, params={"fifo": 1, "slice_ns": 2 * MS}, **kw)
    assert not fifo.equals(py)
    with pytest.raises(KeyError, match="unknown parameter 'fifo' for policy"):
        interbench.run("wvtime", params={"fifo": 1}, **kw)
    both = interbench.side_by_side([py, c])
    assert "Simple" in both.splitlines()[0] and "wvtime" in both.splitlines()[0]


RTAPP = {"tasks": {"rt": {"policy": "SCHED_FIFO", "priority": 10, "loop": -1, "run": 2000,
                          "timer": {"ref": "t", "period": 10000}},
                   "a": {"loop": -1, "run": 100000},
                   "b": {"loop": -1, "run": 100000, "priority": 5}},
         "global": {"duration": 4}}


def test_an_rtapp_workload_runs_its_rt_thread_above_the_scheduler(scheduler):
    w = workloads.from_rtapp(RTAPP)
    sim = w.simulator(scheduler, record="events", debug=True)
    sim.run(seconds=w.duration)
    sim.check()
    rt, a, b = (sim.task(pid) for pid in (1, 2, 3))
    assert (rt.policy, rt.name, b.nice) == ("fifo", "rt-0", 5)
    # SCHED_FIFO preempts the sched_ext tasks at once: 2 ms of every 10 ms
    assert rt.lat_max_ns == 0 and rt.cpu_ns == 4 * 10**9 // 5
    # the rest is the scheduler's, by the kernel's weights
    assert abs(a.cpu_ns / (a.cpu_ns + b.cpu_ns) - NICE0 / (NICE0 + NICE5)) < 0.01
    assert sim.ext_exit_info.kind == ext.SCX_EXIT_NONE


# ---------------------------------------------------------------- snapshots and copies

RESTORE = """
import pickle, sys
sim = pickle.loads(sys.stdin.buffer.read())
sim.run(seconds=0.5)
sys.stdout.buffer.write(pickle.dumps(([tuple(e) for e in sim.events()], sim.stats().tobytes(),
                                      sim.params)))
"""


@pytest.mark.parametrize("params", [{"slice_ns": 3 * MS}, {}])
def test_a_snapshot_restored_in_a_fresh_process_continues_identically(
        scheduler, params, tmp_path, monkeypatch):
    sim = scene(scheduler, params, cpus=2, seconds=0.5)
    blob = pickle.dumps(sim)
    sim.run(seconds=0.5)
    # a process that never built wvtime, with an empty cache: the snapshot
    # carries the source, and the library is built there
    fresh = tmp_path / "fresh-cache"
    monkeypatch.setenv("PYSCHED_CACHE", str(fresh))
    out = subprocess.run([sys.executable, "-c", RESTORE], input=blob, capture_output=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr.decode()
    events, stats, got_params = pickle.loads(out.stdout)
    assert len(events) > 100
    assert (events, stats) == ([tuple(e) for e in sim.events()], sim.stats().tobytes())
    assert got_params == sim.params
    assert [p.name.split("-")[0] for p in fresh.glob("*.so")] == (
        ["wvtime"] if scheduler == "wvtime" else [])


def test_copies_continue_identically_and_branch_on_a_tunable(scheduler):
    sim = scene(scheduler, cpus=2, seconds=0.5)
    twins = [sim.copy(), copy.copy(sim), copy.deepcopy(sim)]
    branch = sim.copy()
    branch.set_param("slice_ns", 1 * MS)
    for s in [sim, branch] + twins:
        s.run(seconds=0.5)
    assert all(outputs(t) == outputs(sim) for t in twins)
    assert branch.params["slice_ns"] == MS and sim.params["slice_ns"] == ext.SCX_SLICE_DFL
    if scheduler is Simple:   # the attribute its ops read follows set_param
        assert (branch.policy_instance.slice_ns, sim.policy_instance.slice_ns) == \
            (MS, ext.SCX_SLICE_DFL)
    assert outputs(branch)[2] != outputs(sim)[2]
