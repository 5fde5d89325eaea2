"""interbench 0.31 (Con Kolivas) in the simulator: its benchmarked tasks
against its loads, one run per pair, its metrics with its own arithmetic.

A run (interbench.c, bench()): the load starts, one second later the
benchmarked task, which then runs for `duration_s` (rounded up to a
multiple of 10 s, as interbench does, so that X's 10.1 s ramps fit).  The
samples are the calls of the benchmarked task's periodic op due to begin
within its duration (the calls interbench's thread begins before it is
stopped; on a machine with timer slop a call begins late but is still
one); Gaming's are its frames begun in that time.  A benchmark never runs
against itself as a load.  The tasks and loads are pysched.programs.audio,
video, x, gaming, burn, write, read, compile and ring; what they model and
how is in their docstrings (the I/O loads are I/O-bound tasks: a CPU-only
simulator has no page cache).

Each run is a fresh Simulator with the same seed: the matrix is the same on
every run, and any row can be rerun on its own.
"""
import math

import numpy as np

from ..results import metrics
from .. import _core, programs
from .._checks import check_int, check_number
from .._suggest import did_you_mean
from ..policy.registry import check_params, resolve
from ..simulator import Simulator

BENCHMARKS = {"audio": programs.audio, "video": programs.video, "x": programs.x,
              "gaming": programs.gaming}
LOADS = ("none", "video", "x", "burn", "write", "read", "compile", "ring")
LABELS = {"none": "None", "audio": "Audio", "video": "Video", "x": "X", "gaming": "Gaming",
          "burn": "Burn", "write": "Write", "read": "Read", "compile": "Compile", "ring": "Ring"}
LOAD_LEAD_S = 1.0   # interbench starts the load a second before the benchmark
COLUMNS = ("preset", "benchmark", "load", "samples", "latency_mean_ms", "latency_sd_ms",
           "latency_max_ms", "desired_cpu_pct", "deadlines_met_pct", "latency_sd_corrected_ms",
           "latency_p99_ms")


def _names(what, given, allowed):
    if isinstance(given, str):
        given = (given,)
    out = []
    for g in given:
        if not isinstance(g, str) or g.lower() not in allowed:
            raise ValueError(f"unknown {what} {g!r}; the {what}s: {', '.join(allowed)}"
                             f"{did_you_mean(str(g).lower(), allowed)}")
        out.append(g.lower())
    return tuple(out)


def _load(name, threads):
    if name == "none":
        return []
    if name in ("video", "x"):
        return [BENCHMARKS[name]()]
    if name in ("burn", "compile"):
        return getattr(programs, name)(threads)
    return getattr(programs, name)()


def run_one(preset, benchmark, load, *, duration_s=30, cpus=1, seed=0, params=None, hz=None,
            load_threads=None, bench_nice=0, load_nice=0):
    """One row of the matrix: `benchmark` against `load` (see run)."""
    name = resolve(preset)[0]
    benchmark = _names("benchmark", benchmark, tuple(BENCHMARKS))[0]
    load = _names("load", load, LOADS)[0]
    duration_s = _duration(duration_s)
    cpus = check_int("cpus", cpus, 1, _core.MAX_CPUS)
    threads = cpus if load_threads is None else check_int("load_threads", load_threads, 1, 100_000)
    bench_nice = check_int("bench_nice", bench_nice, -20, 19)
    load_nice = check_int("load_nice", load_nice, -20, 19)
    sim = Simulator(preset, cpus=cpus, seed=seed, params=params, hz=hz)
    for k, prog in enumerate(_load(load, threads)):
        sim.spawn(prog, nice=load_nice, name=f"{load}{k}")
    sim.run(seconds=LOAD_LEAD_S)
    start = sim.now_ns
    pid = sim.spawn(BENCHMARKS[benchmark](), nice=bench_nice, name=benchmark)
    end = start + round(duration_s * 1e9)
    # the call under way at the end completes (interbench stops its thread
    # after the call): its sleep ends at most one period later
    sim.run(seconds=duration_s + 0.2)
    rec = sim.periodic(pid)
    game = benchmark == "gaming"
    rec = rec[(rec["start_ns"] if game else rec["due_ns"]) < end]
    return _row(name, benchmark, load, rec, game)


def _row(preset, benchmark, load, rec, game):
    compat = metrics.interbench_stats(rec, compat=True, game=game)
    exact = metrics.interbench_stats(rec, compat=False, game=game)
    lat = (rec["latency_ns"] + rec["missed_latency_ns"]) / 1e6
    return {"preset": preset, "benchmark": benchmark, "load": load, "samples": len(rec),
            "latency_mean_ms": _first(compat, "mean_ms"), "latency_sd_ms": _first(compat, "sd_ms"),
            "latency_max_ms": _first(compat, "max_ms"),
            "desired_cpu_pct": _first(compat, "pct_desired_cpu"),
            "deadlines_met_pct": _first(compat, "pct_deadlines_met"),
            "latency_sd_corrected_ms": _first(exact, "sd_ms"),
            "latency_p99_ms": float(np.percentile(lat, 99)) if len(lat) else math.nan}


def _first(table, column):
    values = table[column]
    values = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
    return float(values[0]) if len(values) else math.nan


def _duration(duration_s):
    duration_s = check_number("duration_s", duration_s, 1e-3, 1e6)
    # interbench: "Make benchmark a multiple of 10 seconds for proper range of X loads"
    return float(math.ceil(duration_s / 10) * 10)


def run(preset, *, duration_s=30, benchmarks=("audio", "video", "x", "gaming"), loads=LOADS,
        cpus=1, seed=0, params=None, hz=None, load_threads=None, bench_nice=0, load_nice=0):
    """interbench's matrix for one preset (a preset's name, or a Python
    policy's class such as a sched_ext scheduler's; the rows' ``preset`` is
    its name): a row per (benchmark, load), a benchmark never against itself.  Each row: samples, latency mean, SD
    and max (ms) and % desired CPU and % deadlines met, with interbench's
    arithmetic (pysched.metrics.interbench_stats, compat=True: its SD
    formula quirk included), then the corrected SD and the 99th percentile
    of latency beside them.  duration_s: per run, rounded up to a multiple
    of 10 s as interbench does; load_threads: Burn's (and Compile's)
    threads, interbench's -L (default: one per CPU); bench_nice,
    load_nice: its -B and -N.  A DataFrame with pandas, else a list of
    dicts."""
    check_params(resolve(preset)[1], params, hz)
    benchmarks = _names("benchmark", benchmarks, tuple(BENCHMARKS))
    loads = _names("load", loads, LOADS)
    rows = [run_one(preset, b, l, duration_s=duration_s, cpus=cpus, seed=seed, params=params,
                    hz=hz, load_threads=load_threads, bench_nice=bench_nice, load_nice=load_nice)
            for b in benchmarks for l in loads if l != b]
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _rows(table):
    if hasattr(table, "to_dict"):
        return table.to_dict("records")
    return list(table)


def report(table):
    """A matrix from run() as interbench prints it: a block per benchmark,
    a line per load (Latency +/- SD, Max Latency, % Desired CPU, % Deadlines
    Met, with interbench's printf formats)."""
    out = []
    rows = _rows(table)
    for bench in dict.fromkeys(r["benchmark"] for r in rows):
        game = bench == "gaming"
        out.append(f"--- Benchmarking simulated cpu of {LABELS[bench]} in the presence of "
                   f"simulated ---")
        out.append("Load\tLatency +/- SD (ms)  Max Latency   % Desired CPU"
                   + ("" if game else "  % Deadlines Met"))
        for r in rows:
            if r["benchmark"] != bench:
                continue
            line = (f"{LABELS[r['load']]}\t{r['latency_mean_ms']:6.1f} +/- "
                    f"{r['latency_sd_ms']:<8.1f}{r['latency_max_ms']:6.1f}\t\t"
                    f"{_g(r['desired_cpu_pct'], 4)}")
            if not game:
                line += f"\t{_g(r['deadlines_met_pct'], 11)}"
            out.append(line)
        out.append("")
    return "\n".join(out)


def _g(v, width):
    """C's %<width>.3g."""
    return f"{v:{width}.3g}"


def side_by_side(tables):
    """Several presets' matrices (run() results) in one table: a row per
    (benchmark, load), per preset its mean latency, max latency, % desired
    CPU and % deadlines met."""
    by = {}
    presets = []
    for table in tables:
        for r in _rows(table):
            if r["preset"] not in presets:
                presets.append(r["preset"])
            by.setdefault((r["benchmark"], r["load"]), {})[r["preset"]] = r
    head = f"{'benchmark':<8} {'load':<8} " + " ".join(f"{p:>31}" for p in presets)
    sub = f"{'':<8} {'':<8} " + " ".join(f"{'mean':>7} {'max':>7} {'%cpu':>6} {'%met':>8}"
                                         for _ in presets)
    out = [head, sub]
    for (bench, load), cells in by.items():
        line = f"{LABELS[bench]:<8} {LABELS[load]:<8} "
        parts = []
        for p in presets:
            r = cells.get(p)
            if r is None:
                parts.append(f"{'':>31}")
                continue
            met = "" if bench == "gaming" else f"{r['deadlines_met_pct']:.3g}"
            parts.append(f"{r['latency_mean_ms']:7.1f} {r['latency_max_ms']:7.1f} "
                         f"{r['desired_cpu_pct']:6.3g} {met:>8}")
        out.append(line + " ".join(parts))
    return "\n".join(out)
