"""Wall clock of interbench's full matrix (4 benchmarks x 8 loads, a
benchmark never against itself: 30 runs of 30 simulated s, each after 1 s
of load) per preset, and the total for the four presets the docs compare
(docs/experiments/interbench.md).

    python benchmarks/bench_interbench.py            # best of 3 (--reps)
    python benchmarks/bench_interbench.py --quick    # one 10-s matrix of 2.5.65
"""
import argparse
import time

import pysched as ps

PRESETS = ["linux-2.4.20", "linux-2.5.64", "linux-2.5.65", "houston-2003"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="repetitions; the best is reported")
    ap.add_argument("--quick", action="store_true", help="one 10-s matrix of linux-2.5.65")
    args = ap.parse_args(argv)
    presets = ["linux-2.5.65"] if args.quick else PRESETS
    duration = 10 if args.quick else 30
    reps = 1 if args.quick else args.reps
    total = 0.0
    for preset in presets:
        best = min(_timed(preset, duration) for _ in range(reps))
        total += best
        print(f"{preset:<14} {best:6.2f} s  (30 runs of {duration} s simulated)")
    print(f"{'total':<14} {total:6.2f} s")


def _timed(preset, duration):
    t0 = time.perf_counter()
    ps.workloads.interbench.run(preset, duration_s=duration)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
