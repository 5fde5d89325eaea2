"""Points per second of wall clock for a 1,000-point sweep, by executor.

    python benchmarks/bench_sweep.py            # best of 3 per cell (--reps)
    python benchmarks/bench_sweep.py --quick    # 100 points, one run: a smoke run

Cases (linux-2.5.65, HZ=1000; each point builds its simulator, runs it and
reads one task's CPU share; 1,000 points over max_sleep_avg x nice x length):

  short  2 hogs + 1 interactive task, 0.05-0.2 simulated s (~0.1 ms a point)
  10s    the same for 10 simulated s, the notebook of issue 11 (~0.3 ms)
  busy   2 hogs + 100 interactive tasks, 2-8 simulated s (~2 ms)

Executors:

  serial       a plain loop: [{**p, **fn(**p)} for p in points]
  default      pysched.sweep(fn, grid): here, or a pool of the usable CPUs
               when one pays (its start-up is timed: a sweep starts its own)
  pool, 1/task ProcessPoolExecutor(2) with chunksize=1: a task per point, as
               sweeps were before batching (the pool's start-up excluded)
  threads      ThreadPoolExecutor(2) (Simulator.run releases the GIL)
  dask         dask.distributed LocalCluster(n_workers=2, threads_per_worker=1),
               client.get_executor() (the cluster's start-up excluded)

Every executor's table is checked equal to the default's.
"""
import argparse
import itertools
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pysched as ps


def share(max_sleep_avg, nice, ms, interactive=1):
    sim = ps.Simulator("linux-2.5.65", params={"max_sleep_avg": max_sleep_avg}, seed=1)
    sim.spawn(ps.programs.cpu_hog())
    b = sim.spawn(ps.programs.cpu_hog(), nice=nice)
    for _ in range(interactive):
        sim.spawn(ps.programs.interactive(1, 10))
    sim.run(seconds=ms / 1000)
    return {"share": sim.task(b).cpu_ns / (ms * 1e6)}


def busy(max_sleep_avg, nice, ms):
    return share(max_sleep_avg, nice, ms, interactive=100)


def grid(points, lengths):
    """max_sleep_avg x nice x length, `points` points in all."""
    per = points // (10 * len(lengths))
    return {"max_sleep_avg": [100 + 200 * i for i in range(10)],
            "nice": [n - per // 2 for n in range(per)], "ms": lengths}


CASES = {
    "short": (share, [50, 100, 150, 200, 125]),
    "10s": (share, [10_000, 10_000, 10_000, 10_000, 10_000]),
    "busy": (busy, [2_000, 4_000, 6_000, 8_000, 5_000]),
}


def serial(fn, g):
    points = [dict(zip(g, v)) for v in itertools.product(*g.values())]
    return [{**p, **fn(**p)} for p in points]


def interleaved(runs, reps):
    """The best time of each run over reps rounds, the runs taking turns in
    each round, so that a spell of load from elsewhere on a shared machine
    falls on all of them alike; and each run's last result."""
    times = {name: [] for name in runs}
    outs = {}
    for _ in range(reps):
        for name, run in runs.items():
            t = time.perf_counter()
            outs[name] = run()
            times[name].append(time.perf_counter() - t)
    return {name: min(ts) for name, ts in times.items()}, outs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100 points, one run per cell")
    ap.add_argument("--reps", type=int, default=3, help="rounds; each cell is its best")
    args = ap.parse_args(argv)
    points, reps = (100, 1) if args.quick else (1000, args.reps)
    import pandas  # noqa: F401  imported once here, not inside the first timed sweep
    from dask.distributed import Client, LocalCluster

    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"pysched {ps.__version__}; {points} points, best of {reps}; points/s; "
          f"load average {os.getloadavg()[0]:.2f} at the start")
    print("| case | serial | default | pool, 1/task | threads | dask |")
    print("|---|---|---|---|---|---|")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client, \
            ProcessPoolExecutor(2) as pool, ThreadPoolExecutor(2) as threads:
        dask = client.get_executor()
        for name, (fn, lengths) in CASES.items():
            g = grid(points, lengths)
            ps.sweep(fn, {k: v[:2] for k, v in g.items()}, executor=dask, progress=False)  # warm
            ps.sweep(fn, {k: v[:2] for k, v in g.items()}, executor=pool, progress=False)
            runs = {
                "serial": lambda: serial(fn, g),
                "default": lambda: ps.sweep(fn, g, progress=False),
                "pool": lambda: ps.sweep(fn, g, executor=pool, chunksize=1, progress=False),
                "threads": lambda: ps.sweep(fn, g, executor=threads, progress=False),
                "dask": lambda: ps.sweep(fn, g, executor=dask, progress=False),
            }
            times, outs = interleaved(runs, reps)
            assert outs["default"].to_dict("records") == outs["serial"], name
            for ex in ("pool", "threads", "dask"):
                assert outs[ex].equals(outs["default"]), (name, ex)
            cells = [points / t for t in times.values()]
            print(f"| {name} | " + " | ".join(f"{c:,.0f}" for c in cells) + " |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
