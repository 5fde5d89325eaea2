"""Simulated ticks per second of a sched_ext scheduler written in the
kernel's C dialect (experiments/sched_ext/wvtime.bpf.c, built with
pysched.build_policy) on two CPU hogs, 1 CPU, HZ=1000, against the same
scheduler in Python (pysched.ext.examples.Simple) and the C preset
linux-6.12-eevdf:

    python benchmarks/bench_c_ext.py            # each run >= 1 s, best of 3
    python benchmarks/bench_c_ext.py --quick    # >= 0.1 s per run

Its ops run on each 20 ms slice (enqueue, dispatch, running, stopping);
between slices the class counts slices down in C, so the figures are
mostly the class's.
"""
import argparse
import os
import sys
import tempfile

import pysched as ps
from pysched.ext.examples import Simple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_ticks import ticks_per_second  # noqa: E402
from bench_python_ext import two_hogs  # noqa: E402

EXAMPLE = os.path.join(HERE, "..", "experiments", "sched_ext", "wvtime.bpf.c")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short runs (>= 0.1 s per case)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per case (best is kept)")
    args = ap.parse_args(argv)
    min_s = 0.1 if args.quick else 1.0
    with tempfile.TemporaryDirectory() as cache:
        os.environ.setdefault("PYSCHED_CACHE", cache)
        ps.build_policy(EXAMPLE, name="wvtime")
        print(f"best of {args.reps}, each run >= {min_s} s; 1 CPU, 2 hogs, HZ=1000\n")
        rates = {}
        for name, build in (("wvtime.bpf.c (C dialect)", two_hogs("wvtime")),
                            ("Simple (Python)", two_hogs(Simple)),
                            ("linux-6.12-eevdf (C)", two_hogs("linux-6.12-eevdf"))):
            rates[name] = ticks_per_second(build, min_s, args.reps)[0]
            print(f"{name:28} {rates[name]:15,.0f} ticks/s  {1e9 / rates[name]:8.1f} ns/tick")
        ratio = rates["linux-6.12-eevdf (C)"] / rates["wvtime.bpf.c (C dialect)"]
        print(f"\nwvtime.bpf.c takes {ratio:.2f}x linux-6.12-eevdf's time per tick")


if __name__ == "__main__":
    main()
