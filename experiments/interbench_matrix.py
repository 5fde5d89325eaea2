"""interbench 0.31's matrix -- Audio, Video, X and Gaming against None,
Video, X, Burn, Write, Read, Compile and Ring -- for linux-2.4.20,
linux-2.5.64, linux-2.5.65 and houston-2003 side by side: mean and max
latency (ms), % desired CPU and % deadlines met, with interbench's own
arithmetic (pysched.workloads.interbench).  Each preset at its own HZ (2.4: 100).

    python experiments/interbench_matrix.py [--duration 30] [--cpus 1] [--quick]
"""
import argparse
import time

import pysched as ps

PRESETS = ["linux-2.4.20", "linux-2.5.64", "linux-2.5.65", "houston-2003"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--duration", type=float, default=30.0, help="seconds per run")
    ap.add_argument("--cpus", type=int, default=1, help="CPUs (and Burn threads)")
    ap.add_argument("--seed", type=int, default=0, help="seed of every run")
    ap.add_argument("--quick", action="store_true", help="10 s runs of Audio and X only")
    args = ap.parse_args(argv)
    kw = {"duration_s": 10, "benchmarks": ("audio", "x")} if args.quick else \
        {"duration_s": args.duration}
    t0 = time.perf_counter()
    tables = [ps.workloads.interbench.run(p, cpus=args.cpus, seed=args.seed, **kw) for p in PRESETS]
    wall = time.perf_counter() - t0
    print(ps.workloads.interbench.side_by_side(tables))
    runs = sum(len(t) for t in tables)
    print(f"\n{runs} runs of {kw['duration_s']:g} s (+1 s of load first) in {wall:.1f} s")


if __name__ == "__main__":
    main()
