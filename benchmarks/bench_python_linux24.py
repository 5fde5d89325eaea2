"""Simulated ticks per second of the Linux 2.4.20 scheduler written in Python
(pysched.policy.examples.linux24) against the built-in C preset linux-2.4.20.

    python benchmarks/bench_python_linux24.py            # each run >= 1 s, best of 3
    python benchmarks/bench_python_linux24.py --quick    # >= 0.1 s per run

Cases of bench_ticks.py, under both policies (counters only, latency
records off), at the 2.4 preset's HZ=100 and at HZ=1000:

  (a) 1 CPU, 2 CPU hogs
  (b) 1 CPU, 1 interactive task (programs.interactive(1, 20)) + 4 hogs

The Python policy's hooks run on every tick (tick), every switch
(pick_next, which scores the whole runqueue list) and every wakeup; the
ratio says what a policy in Python costs against the same policy in C.
"""
import argparse
import os
import sys

import pysched as ps
from pysched.policy.examples.linux24 import Linux24

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ticks import ticks_per_second  # noqa: E402


def case_a(policy, hz):
    def build():
        sim = ps.Simulator(policy, hz=hz, latencies=False)
        for i in range(2):
            sim.spawn(ps.programs.cpu_hog(), name=f"hog{i}")
        return sim
    return build


def case_b(policy, hz):
    def build():
        sim = ps.Simulator(policy, hz=hz, latencies=False)
        sim.spawn(ps.programs.interactive(1, 20), name="interactive")
        for i in range(4):
            sim.spawn(ps.programs.cpu_hog(), name=f"hog{i}")
        return sim
    return build


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short runs (>= 0.1 s per case)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per case (best is kept)")
    args = ap.parse_args(argv)
    min_s = 0.1 if args.quick else 1.0
    print(f"best of {args.reps}, each run >= {min_s} s\n")
    print(f"{'case':30} {'HZ':>5} {'C ticks/s':>13} {'Python ticks/s':>15} {'C/Python':>9} "
          f"{'sw/tick':>8} {'wk/tick':>8}")
    for name, case in (("(a) 2 hogs", case_a), ("(b) 1 interactive + 4 hogs", case_b)):
        for hz in (100, 1000):
            c_rate = ticks_per_second(case("linux-2.4.20", hz), min_s, args.reps)[0]
            py_rate, _, _, (sw, wk) = ticks_per_second(case(Linux24, hz), min_s, args.reps)
            print(f"{name:30} {hz:5} {c_rate:13,.0f} {py_rate:15,.0f} {c_rate / py_rate:9.0f} "
                  f"{sw:8.3f} {wk:8.3f}")


if __name__ == "__main__":
    main()
