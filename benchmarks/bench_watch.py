"""What watching the behaviour invariants costs (sim.watch(): work
conservation counted at every instant, and under a fair preset each
queued task's lag; docs/guide/invariants.md): wall
time of the same run with the watch off and on, best of --repeat, for a
few workloads and presets.  A stop_on assertion turns batched and deferred
ticks off and is not what a sweep leaves on, so it is measured apart.

    python benchmarks/bench_watch.py
    python benchmarks/bench_watch.py --seconds 5 --repeat 5
"""
import argparse
import time

import pysched as ps
from pysched.realkernel.kernel_info import cpu_model


def mixed(sim):
    """Hogs and sleepers over the CPUs: CPUs idle now and then, tasks wait."""
    for c in range(sim.cpus):
        sim.spawn(ps.programs.cpu_hog(), cpu=c)
        for r, s in [(5, 20), (3, 7), (1, 2), (8, 4)]:
            sim.spawn(ps.programs.interactive(r, s), cpu=c)


def sleepers(sim):
    """Only sleepers: the CPUs idle often while others wait."""
    for c in range(sim.cpus):
        for r, s in [(5, 20), (3, 7), (20, 30), (1, 2), (8, 4), (2, 9)]:
            sim.spawn(ps.programs.interactive(r, s), cpu=c)


CASES = [("mixed", mixed, 1), ("mixed", mixed, 8), ("sleepers", sleepers, 2),
         ("sleepers", sleepers, 8)]
PRESETS = ["linux-2.5.65", "houston-2003", "linux-6.12-eevdf"]


def timed(preset, build, cpus, seconds, watch, repeat):
    best = float("inf")
    for _ in range(repeat):
        sim = ps.Simulator(preset, cpus=cpus)
        build(sim)
        if watch == "count":
            sim.watch()
        elif watch == "stop":
            lag = ("lag",) if "eevdf" in preset else ()
            sim.watch(idle_while_waiting_ms=1e9, starvation_ms=1e9,
                      stop_on=("work_conservation", "starvation") + lag)
        t0 = time.perf_counter()
        sim.run(seconds=seconds)
        best = min(best, time.perf_counter() - t0)
    return best



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{cpu_model() or 'unknown'}; {args.seconds:g} simulated s a run, best of {args.repeat}")
    print(f"{'preset':18} {'workload':9} {'cpus':>4} {'off ms':>8} {'watch':>7} {'stop_on':>8}")
    for preset in PRESETS:
        for name, build, cpus in CASES:
            off = timed(preset, build, cpus, args.seconds, None, args.repeat)
            on = timed(preset, build, cpus, args.seconds, "count", args.repeat)
            stop = timed(preset, build, cpus, args.seconds, "stop", args.repeat)
            print(f"{preset:18} {name:9} {cpus:4d} {off * 1e3:8.1f} {on / off - 1:+7.1%} "
                  f"{stop / off - 1:+8.1%}", flush=True)


if __name__ == "__main__":
    main()
