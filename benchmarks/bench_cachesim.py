"""Instructions and cache misses per context switch of bench_ticks' case
(h), as valgrind's cache model counts them, where the processor's own
counters cannot be read (this project's machines are virtual: `perf stat
-e instructions` says "not supported").

    python benchmarks/bench_cachesim.py                  # 1, 8 and 64 CPUs
    python benchmarks/bench_cachesim.py --cpus 1 64 --ticks 40000
    python benchmarks/bench_cachesim.py --cpus 1 8 --watch   # with sim.watch() on
    python benchmarks/bench_cachesim.py --cpus 1 8 --preset linux-6.12-eevdf --watch [--lag]

Each CPU count runs (h) -- a hog and 10 interactive tasks pinned to each
CPU -- in a child process under `valgrind --tool=callgrind` with its cache
model (L1 data and instructions 32 kB 8-way, last level 1 MB 16-way,
64-byte lines: a Zen 4 core's L1 and L2), counting inside `ps_run_until`
only (the run, not the Python that builds it). Printed per context switch:
instructions, L1 data read and write misses, last-level misses.

The counts are a model's, not the processor's: one core's caches, without
prefetchers, and no time. (valgrind's branch model is left out: a
two-bit predictor without history, it counts as mispredicted the loop
exits and patterns a processor's predictor learns.) valgrind hides
AVX-512, so the wide scans are counted in their AVX2 form. A run takes
about 50x its time without valgrind.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = ["--cache-sim=yes", "--D1=32768,8,64", "--I1=32768,8,64",
         "--LL=1048576,16,64"]


def child(cpus, ticks, watch, preset):
    sys.path.insert(0, HERE)
    import bench_ticks
    sim = bench_ticks.pinned(cpus, preset=preset)()
    if watch:
        sim.watch(lag=watch == 2)
    sim.run(ticks=ticks)
    st = sim.stats()
    print(int(st["nvcsw"].sum() + st["nivcsw"].sum()))


def totals(path):
    """{event: count} from a callgrind output file's events and totals lines."""
    names = values = None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith("totals:"):
                values = [int(v) for v in line.split()[1:]]
    if names is None or values is None:
        raise RuntimeError(f"{path}: no events or totals line")
    return dict(zip(names, values))


def measure(cpus, ticks, watch=False, preset="linux-2.5.65"):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", *MODEL, f"--callgrind-out-file={out}",
             "--toggle-collect=ps_run_until", sys.executable, os.path.abspath(__file__),
             "--child", str(cpus), str(ticks), str(int(watch)), preset],
            capture_output=True, text=True)
        if run.returncode:
            raise RuntimeError(f"valgrind on {cpus} CPUs failed:\n{run.stderr[-2000:]}")
        switches = int(run.stdout.split()[-1])
        return switches, totals(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpus", type=int, nargs="+", default=[1, 8, 64],
                    help="CPU counts, 1 to 64 (default 1 8 64)")
    ap.add_argument("--ticks", type=int, default=1_280_000,
                    help="simulated ticks of all the CPUs together, divided among them "
                         "(default 1,280,000: 20,000 jiffies on 64 CPUs)")
    ap.add_argument("--watch", action="store_true",
                    help="with the behaviour invariants watched (sim.watch())")
    ap.add_argument("--lag", action="store_true",
                    help="and the fair presets' lags (sim.watch(lag=True)); implies --watch")
    ap.add_argument("--preset", default="linux-2.5.65",
                    help="the preset case (h) runs under (default linux-2.5.65)")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.watch = 2 if args.lag else int(args.watch)
    if args.child:
        cpus, ticks, watch, preset = args.child
        child(int(cpus), int(ticks), int(watch), preset)
        return
    bad = [c for c in args.cpus if not 1 <= c <= 64]
    if bad:
        ap.error(f"--cpus {bad[0]}: a CPU count is 1 to 64")
    if args.ticks < 64:
        ap.error(f"--ticks {args.ticks}: at least 64, so that each CPU count runs a tick")
    if not shutil.which("valgrind"):
        ap.error("valgrind is not installed (Debian: apt-get install valgrind)")
    print(f"case (h) under {args.preset}, per context switch, inside ps_run_until (valgrind's "
          f"cache model)" + (", watched" if args.watch else ""))
    print(f"{'CPUs':>4} {'switches':>9} {'instr':>7} {'L1d rd':>7} {'L1d wr':>7} {'LL':>6}")
    for cpus in args.cpus:
        switches, t = measure(cpus, args.ticks // cpus, args.watch, args.preset)
        per = {k: v / switches for k, v in t.items()}
        few = "   few switches: the first touch of every line weighs in" if switches < 10_000 else ""
        print(f"{cpus:4} {switches:9,} {per['Ir']:7.0f} {per['D1mr']:7.2f} {per['D1mw']:7.2f} "
              f"{per['DLmr'] + per['DLmw']:6.3f}{few}")


if __name__ == "__main__":
    main()
