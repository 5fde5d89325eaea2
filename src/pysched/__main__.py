"""Command line:
    python -m pysched demo [--seconds S] [--preset P ...] [--seed N]
    python -m pysched interbench [--preset P ...] [--duration S] [--cpus N] [--seed N]
        [--benchmark B ...] [--load L ...] [--hz HZ]
    python -m pysched replay TRACE [--preset P ...] [--cpus N] [--seconds S] [--task COMM ...]
        [--demand recorded|open] [--wake-edges auto|all|none] [--sleeps trace|length]
    python -m pysched bench [--preset P ...] [--case C ...] [--instructions] [--quick]"""
import argparse
import sys

from .trace import replay as _replay
from . import bench, demo
from .workloads import interbench
from . import trace
from .policy.registry import presets


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m pysched")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="interactive tasks beside CPU hogs on every preset")
    d.add_argument("--seconds", type=float, default=20.0)
    d.add_argument("--preset", action="append", choices=presets())
    d.add_argument("--seed", type=int, default=0)
    i = sub.add_parser("interbench", help="interbench's matrix, in its layout; several presets "
                                          "also side by side")
    i.add_argument("--preset", action="append", choices=presets(),
                   help="repeat for several (default: linux-2.5.65)")
    i.add_argument("--duration", type=float, default=30.0, help="seconds per run (default: 30)")
    i.add_argument("--cpus", type=int, default=1, help="(default: 1)")
    i.add_argument("--seed", type=int, default=0, help="(default: 0)")
    i.add_argument("--hz", type=int, help="(default: the preset's)")
    i.add_argument("--benchmark", action="append", choices=tuple(interbench.BENCHMARKS),
                   help="repeat for several (default: all four)")
    i.add_argument("--load", action="append", choices=interbench.LOADS,
                   help="repeat for several (default: all eight)")
    r = sub.add_parser("replay", help="replay a perf script / trace-cmd text trace under presets "
                                      "and compare, per task, with what the trace got")
    r.add_argument("trace", help="perf script --ns -F comm,pid,tid,cpu,time,event,trace text "
                                 "(gzip too), or sim.export_ftrace's")
    r.add_argument("--preset", action="append", choices=presets(),
                   help="repeat for several (default: every preset)")
    r.add_argument("--cpus", type=int, help="(default: the trace's)")
    r.add_argument("--seconds", type=float, help="(default: the trace's duration)")
    r.add_argument("--task", action="append", help="a comm or tid to replay; repeat for several "
                                                   "(default: every task)")
    r.add_argument("--demand", choices=_replay.DEMANDS, default="recorded",
                   help="open: a task CPU-bound for most of its life computes without end "
                        "(default: recorded)")
    r.add_argument("--wake-edges", choices=_replay.WAKE_EDGES, default="auto")
    r.add_argument("--sleeps", choices=_replay.SLEEPS, default="trace",
                   help="trace: a timed block sleeps to the trace's time of its wakeup; "
                        "length: its recorded length (default: trace)")
    b = sub.add_parser("bench", help="the performance page's speed figures, on this machine")
    b.add_argument("--preset", action="append", choices=presets(),
                   help=f"repeat for several (default: {' '.join(bench.PRESETS)})")
    b.add_argument("--case", action="append", choices=tuple(bench.CASES),
                   help="repeat for several (default: all)")
    b.add_argument("--instructions", action="store_true",
                   help="also instructions per event, counted by valgrind (slow: ~50x)")
    b.add_argument("--quick", action="store_true", help="a smoke run: 0.01 s a case, one run")
    args = ap.parse_args(argv)
    if args.cmd == "bench":
        bench.run(args.preset or bench.PRESETS, args.case or tuple(bench.CASES),
                  min_seconds=0.01 if args.quick else 0.5, reps=1 if args.quick else 3,
                  count_instructions=args.instructions,
                  instruction_ticks=2_000 if args.quick else 20_000)
        return 0
    if args.cmd == "replay":
        t = trace.load(args.trace)
        tasks = None if not args.task else [int(x) if x.isdigit() else x for x in args.task]
        w = t.to_workload(cpus=args.cpus, tasks=tasks, wake_edges=args.wake_edges,
                          demand=args.demand, sleeps=args.sleeps)
        print(f"{t!r}: {len(w.tasks)} tasks replayed on {w.cpus} CPU(s), demand={args.demand}, "
              f"wake_edges={args.wake_edges}, sleeps={args.sleeps}")
        for preset in args.preset or presets():
            sim = w.run(preset, seconds=args.seconds)
            print(f"\n=== {preset}: {sim.now_ns / 1e9:.3f} s ===")
            print(_replay.format_table(trace.compare(t, sim)))
        return 0
    if args.cmd == "demo":
        chosen = args.preset or presets()
        return demo.main(chosen, args.seconds, args.seed)
    if args.cmd == "interbench":
        tables = []
        for preset in args.preset or ["linux-2.5.65"]:
            table = interbench.run(preset, duration_s=args.duration, cpus=args.cpus, seed=args.seed,
                                   hz=args.hz, benchmarks=args.benchmark or tuple(interbench.BENCHMARKS),
                                   loads=args.load or interbench.LOADS)
            print(f"=== {preset} ===\n")
            print(interbench.report(table))
            tables.append(table)
        if len(tables) > 1:
            print(interbench.side_by_side(tables))
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
