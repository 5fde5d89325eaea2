"""Simulated ticks per second of sched_ext schedulers written in Python
(pysched.ext.examples) on two CPU hogs, 1 CPU, HZ=1000, against the C
presets linux-6.12-eevdf and linux-2.5.65:

    python benchmarks/bench_python_ext.py            # each run >= 1 s, best of 3
    python benchmarks/bench_python_ext.py --quick    # >= 0.1 s per run

GlobalFifo defines no op: the class (in C) runs alone, which measures the
class; Simple calls Python on every enqueue, dispatch, running and
stopping (each 20 ms slice), in vtime and in FIFO mode.  Between slices
ticks only count slices down in C, so the figures are mostly the class's.
"""
import argparse
import os
import sys

import pysched as ps
from pysched.ext.examples import GlobalFifo, Simple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ticks import ticks_per_second  # noqa: E402


def two_hogs(policy, params=None):
    def build():
        sim = ps.Simulator(policy, latencies=False, params=params)
        for i in range(2):
            sim.spawn(ps.programs.cpu_hog(), name=f"hog{i}")
        return sim
    return build


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short runs (>= 0.1 s per case)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per case (best is kept)")
    args = ap.parse_args(argv)
    min_s = 0.1 if args.quick else 1.0
    print(f"best of {args.reps}, each run >= {min_s} s; 1 CPU, 2 hogs, HZ=1000\n")
    for name, build in (("GlobalFifo (no ops)", two_hogs(GlobalFifo)),
                        ("Simple, weighted vtime", two_hogs(Simple)),
                        ("Simple, fifo=1", two_hogs(Simple, {"fifo": 1})),
                        ("linux-6.12-eevdf (C)", two_hogs("linux-6.12-eevdf")),
                        ("linux-2.5.65 (C)", two_hogs("linux-2.5.65"))):
        rate = ticks_per_second(build, min_s, args.reps)[0]
        print(f"{name:28} {rate:15,.0f} ticks/s")


if __name__ == "__main__":
    main()
