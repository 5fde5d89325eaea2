"""How fast pysched.trace.load streams a large trace, and in how much memory.

    python benchmarks/bench_traces.py [--size 64M] [--tasks 200] [--cpus 4] [--seed 0]
    python benchmarks/bench_traces.py --size 1G

Writes a synthetic ``perf script`` capture of the given size into a
temporary file (a consistent one: tasks pinned to CPUs, each switch-out a
preemption or a sleep, sleepers woken by the task running on their CPU,
sched_stat_runtime before each switch as perf sched record has it), then
loads it in a fresh process, once keeping the intervals and once only the
per-task aggregates, and reports lines/s, MB/s and the loading process's
peak RSS (getrusage), beside the RSS of a process that only imports pysched.
The file is deleted afterwards.
"""
import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_arg(text):
    text = text.strip().upper()
    if text[-1] in UNITS:
        return int(float(text[:-1]) * UNITS[text[-1]])
    return int(text)


def generate(path, size, tasks, cpus, seed):
    """Write about `size` bytes of perf script text; returns the lines written."""
    rng = random.Random(seed)
    per_cpu = [[1000 + i for i in range(tasks) if i % cpus == c] for c in range(cpus)]
    prio = {pid: 120 + rng.choice((0, 0, 0, 5, 10)) for c in per_cpu for pid in c}
    comm = {pid: f"task{pid}" for pid in prio}
    runq = [list(c[1:]) for c in per_cpu]
    asleep = [[] for _ in range(cpus)]
    curr = [c[0] for c in per_cpu]
    t = 1_000_000_000_000
    lines = 0
    written = 0
    event_w = len("sched:sched_stat_runtime")
    with open(path, "w") as out:
        buf = []
        while written < size:
            cpu = lines % cpus
            t += rng.randrange(20_000, 400_000)
            cur = curr[cpu]
            secs, ns = divmod(t, 1_000_000_000)
            head = (f"{comm.get(cur, 'swapper'):>16} {cur:5d}/{cur:<5d} [{cpu:03d}] "
                    f"{secs:5d}.{ns:09d}: ")
            # a running task wakes a sleeper half the time; an idle CPU
            # always does (an interrupt, in the idle task's context)
            if asleep[cpu] and (not cur or rng.random() < 0.5):
                w = asleep[cpu].pop(rng.randrange(len(asleep[cpu])))
                runq[cpu].append(w)
                buf.append(f"{head}{'sched:sched_waking':>{event_w}}: comm={comm[w]} pid={w} "
                           f"prio={prio[w]} target_cpu={cpu:03d}\n")
            if cur:
                buf.append(f"{head}{'sched:sched_stat_runtime':>{event_w}}: comm={comm[cur]} "
                           f"pid={cur} runtime={rng.randrange(10_000, 400_000)} [ns]\n")
                if rng.random() < 0.5:
                    state = "S"
                    asleep[cpu].append(cur)
                else:
                    state = "R+"
                    runq[cpu].append(cur)
            else:
                state = "R"
            nxt = runq[cpu].pop(0) if runq[cpu] else 0
            buf.append(f"{head}{'sched:sched_switch':>{event_w}}: prev_comm="
                       f"{comm.get(cur, f'swapper/{cpu}')} prev_pid={cur} "
                       f"prev_prio={prio.get(cur, 120)} prev_state={state} ==> next_comm="
                       f"{comm.get(nxt, f'swapper/{cpu}')} next_pid={nxt} "
                       f"next_prio={prio.get(nxt, 120)}\n")
            curr[cpu] = nxt
            lines += 1
            if len(buf) >= 4096:
                chunk = "".join(buf)
                out.write(chunk)
                written += len(chunk)
                buf = []
        out.write("".join(buf))
    with open(path) as f:
        return sum(1 for _ in f)


def load_child(path, intervals):
    """In this (fresh) process: load, print seconds and peak RSS in KiB."""
    from pysched import trace
    t0 = time.perf_counter()
    tr = trace.load(path, intervals=intervals)
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kept = 0 if tr.bursts is None else sum(a.nbytes for a in (tr.bursts, tr.waits, tr.blocks,
                                                              tr.wakeups))
    print(dt, rss, len(tr.tasks), kept)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=size_arg, default=size_arg("64M"),
                    help="bytes of text, with K, M or G (default: 64M)")
    ap.add_argument("--tasks", type=int, default=200, help="(default: 200)")
    ap.add_argument("--cpus", type=int, default=4, help="(default: 4)")
    ap.add_argument("--seed", type=int, default=0, help="(default: 0)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        load_child(args.child[0], args.child[1] == "1")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "synthetic.txt")
        t0 = time.perf_counter()
        lines = generate(path, args.size, args.tasks, args.cpus, args.seed)
        size = os.path.getsize(path)
        print(f"generated {size / 2**20:.0f} MiB, {lines:,} lines, {args.tasks} tasks on "
              f"{args.cpus} CPUs in {time.perf_counter() - t0:.1f} s")
        base = subprocess.run([sys.executable, "-c", "import resource, pysched; print(resource."
                               "getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
                              capture_output=True, text=True, check=True)
        print(f"a process that only imports pysched: peak RSS {int(base.stdout) / 1024:.0f} MiB")
        for intervals in (True, False):
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path,
                                  "1" if intervals else "0"], capture_output=True, text=True,
                                 check=True)
            dt, rss, ntasks, kept = out.stdout.split()
            dt, rss = float(dt), int(rss)
            print(f"load(intervals={intervals}): {dt:.1f} s, {lines / dt / 1e3:.0f} k lines/s, "
                  f"{size / dt / 2**20:.1f} MiB/s, peak RSS {rss / 1024:.0f} MiB "
                  f"({int(ntasks)} tasks; intervals kept: {int(kept) / 2**20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
