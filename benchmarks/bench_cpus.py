"""Cost per CPU-tick on large machines: how the time of a simulated tick
of one CPU grows with the number of CPUs, and what an idle CPU costs
beside a busy one.

    python benchmarks/bench_cpus.py                  # each run >= 1 s, best of 3
    python benchmarks/bench_cpus.py --quick          # >= 0.2 s per run
    python benchmarks/bench_cpus.py --presets linux-2.5.65

Cases, for each preset (HZ=1000, counters only):

  busy-64     64 CPUs, 10 CPU hogs a CPU (640 tasks)
  busy-1024   1,024 CPUs, 10 CPU hogs a CPU (10,240 tasks)
  idle-64     64 CPUs, 6 tasks: 3 hogs and 3 sleepers (1 ms of work, 9 ms
              asleep), the other CPUs idle
  idle-1024   1,024 CPUs, 100 tasks: 50 hogs and 50 sleepers, the other
              CPUs idle

A figure is wall time / (simulated ticks x CPUs), the best of --reps runs
of the same simulated length (calibrated on the first).  The ratios
busy-1024 / busy-64 and idle-1024 / idle-64 say whether a CPU-tick costs
the same on a machine 16 times larger, idle-1024 / busy-1024 whether
idle CPUs cost what busy ones do (a busy CPU's ticks are deferred and
applied at once where its policy allows, ticks_fast.c; an idle CPU's
come one by one, 2.5's each with its idle rebalance).  Nothing is
asserted.
"""
import argparse
import time

import pysched as ps

HZ = 1000


def machine(preset, cpus, hogs, sleepers):
    def build():
        sim = ps.Simulator(preset, cpus=cpus, hz=HZ, seed=1)
        hog = ps.programs.cpu_hog()
        for i in range(hogs):
            sim.spawn(hog, name=f"hog{i}")
        sleeper = ps.programs.interactive(1, 9)
        for i in range(sleepers):
            sim.spawn(sleeper, name=f"sleeper{i}")
        sim.run(seconds=0.05)  # past the start: every task placed, slices handed out
        return sim
    return build


CASES = {
    "busy-64": (64, 640, 0),
    "busy-1024": (1024, 10240, 0),
    "idle-64": (64, 3, 3),
    "idle-1024": (1024, 50, 50),
}


def ns_per_cpu_tick(build, cpus, min_seconds, reps):
    """Best of reps runs of n ticks (n calibrated so one run lasts at least
    min_seconds), as ns of wall time per CPU-tick."""
    def once(n):
        sim = build()
        t0 = time.perf_counter()
        sim.step(ticks=n)
        return time.perf_counter() - t0

    n = 100
    while True:
        dt = once(n)
        if dt >= min_seconds or n >= 1_000_000:
            break
        n = int(n * max(2.0, 1.2 * min_seconds / max(dt, 1e-6)))
    best = min([dt] + [once(n) for _ in range(reps - 1)])
    return best * 1e9 / (n * cpus), n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--presets", nargs="+", default=["linux-2.5.65", "linux-6.12-eevdf"],
                    help="presets to measure")
    ap.add_argument("--quick", action="store_true", help="short runs (>= 0.2 s each)")
    ap.add_argument("--reps", type=int, default=3, help="runs per case (the best is kept)")
    args = ap.parse_args(argv)
    min_s = 0.2 if args.quick else 1.0
    print(f"best of {args.reps}, each run >= {min_s} s, HZ={HZ}; ns of wall time per CPU-tick\n")
    for preset in args.presets:
        cost = {}
        for case, (cpus, hogs, sleepers) in CASES.items():
            cost[case], n = ns_per_cpu_tick(machine(preset, cpus, hogs, sleepers), cpus, min_s,
                                            args.reps)
            print(f"{preset:18} {case:10} {cpus:5} CPUs {hogs + sleepers:6} tasks "
                  f"{n:8,} ticks  {cost[case]:8.1f} ns/CPU-tick")
        print(f"{preset:18} busy-1024 / busy-64   {cost['busy-1024'] / cost['busy-64']:5.2f}x")
        print(f"{preset:18} idle-1024 / idle-64   {cost['idle-1024'] / cost['idle-64']:5.2f}x")
        print(f"{preset:18} idle-1024 / busy-1024 {cost['idle-1024'] / cost['busy-1024']:5.2f}x\n")


if __name__ == "__main__":
    main()
