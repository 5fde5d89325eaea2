"""Time to the first rows and peak memory of a sweep of 10^8 points.

    python benchmarks/bench_sweep_large.py               # CSV and Parquet, 5,000 rows each
    python benchmarks/bench_sweep_large.py --rows 2000   # stop sooner

Each case runs ``pysched.sweep`` in a child process over a grid of
100 max_sleep_avg x 40 nice x 25 lengths x 1,000 seeds (10^8 calls), each
call a linux-2.5.65 simulator with 2 hogs and an interactive task for
0.05-0.2 simulated s (~0.1 ms), streaming its rows to a file (``to=``) on
the default executor (a local pool of the usable CPUs).  This process reads
the file as it grows and reports the seconds from the child's start until
the first rows are in the file and until --rows of them are, and the peak
resident memory (VmHWM) of the child -- the sweep itself -- and the largest
of its pool's workers; then it kills the child's process group (the sweep
would run for days).
"""
import argparse
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time

from pysched.realkernel.kernel_info import cpu_model

CHILD = """
import pysched as ps

def share(max_sleep_avg, nice, ms, seed):
    sim = ps.Simulator("linux-2.5.65", params={{"max_sleep_avg": max_sleep_avg}}, seed=seed)
    sim.spawn(ps.programs.cpu_hog())
    b = sim.spawn(ps.programs.cpu_hog(), nice=nice)
    sim.spawn(ps.programs.interactive(1, 10))
    sim.run(seconds=ms / 1000)
    return {{"share": sim.task(b).cpu_ns / (ms * 1e6)}}

grid = {{"max_sleep_avg": range(100, 10_100, 100), "nice": range(-20, 20),
         "ms": range(50, 200, 6)}}
ps.sweep(share, grid, seeds=1000, to={path!r}, progress=False)
"""


def rows_in(path):
    """The rows in a sweep file so far (0 while there is none)."""
    if path.endswith(".csv"):
        try:
            with open(path, "rb") as f:
                return max(0, sum(1 for _ in f) - 1)
        except FileNotFoundError:
            return 0
    import pyarrow.parquet as pq
    n = 0
    for name in os.listdir(path) if os.path.isdir(path) else []:
        if name.startswith("part-"):
            try:
                n += pq.read_metadata(os.path.join(path, name)).num_rows
            except OSError:
                pass
    return n


def hwm_kib(pid):
    """A process's peak resident memory (VmHWM), KiB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return []


def case(path, want):
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(path=path)],
                             start_new_session=True)
    start = time.perf_counter()
    first = enough = None
    peak = workers = 0
    try:
        while time.perf_counter() - start < 600 and child.poll() is None:
            time.sleep(0.05)
            peak = max(peak, hwm_kib(child.pid))
            workers = max([workers] + [hwm_kib(p) for p in children(child.pid)])
            n = rows_in(path)
            if n and first is None:
                first = time.perf_counter() - start
            if n >= want:
                enough = time.perf_counter() - start
                break
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the child's own group: it and its pool
        child.wait()
    return first, enough, rows_in(path), peak / 1024, workers / 1024



def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=5000, help="rows to wait for")
    args = ap.parse_args(argv)
    import pysched as ps
    print(f"# {cpu_model() or 'unknown'}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"pysched {ps.__version__}; a sweep of 10^8 calls; load average "
          f"{os.getloadavg()[0]:.2f} at the start")
    print("| file | first rows (s) | rows | at (s) | peak RSS, sweep (MiB) | peak RSS, a worker (MiB) |")
    print("|---|---|---|---|---|---|")
    formats = ["csv"]
    try:
        import pyarrow  # noqa: F401
        formats.append("parquet")
    except ImportError:
        print("# pyarrow is not installed: no Parquet case")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in formats:
            path = os.path.join(tmp, f"rows.{fmt}")
            first, enough, n, peak, worker = case(path, args.rows)
            show = (lambda t: "-" if t is None else f"{t:.2f}")
            print(f"| .{fmt} | {show(first)} | {n:,} | {show(enough)} | {peak:.0f} | {worker:.0f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
