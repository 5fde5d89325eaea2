"""The real trace replayed under every preset: what each task got on the
6.18 kernel beside what each simulated scheduler gives it.

    python experiments/replay_real_trace.py [--trace tests/data/real_sched_trace.txt.gz]
        [--demand open] [--seconds S] [--quick]
    python experiments/replay_real_trace.py --conservation

Replays the workload of experiments/record_real_trace.py (three busy loops
at nice 0, 5 and 10, a 1 ms / 10 ms sleeper, a pipe ping-pong pair, pinned
to one CPU) with pysched.trace, and prints, as Markdown tables, each task's
CPU share, mean wait (runnable time per switch) and mean wakeup latency in
the trace and under each preset.  --conservation replays every capture in
tests/data with the defaults (its workload: the process the recorder named
rec-NAME and its descendants) and prints, per preset, the least share of
its recorded CPU time that a task got by the trace's end and 5 % after it,
with timed blocks that sleep to the trace's time of their wakeup (the
default) and their recorded length.
"""
import argparse
import json
import os
import sys

import numpy as np

import pysched as ps
from pysched import trace

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")


def tables(path, comms, demand, seconds, presets):
    t = trace.load(path)
    w = t.to_workload(tasks=comms, demand=demand)
    runs = {p: trace.compare(t, w.run(p, seconds=seconds)) for p in presets}
    out = []
    for title, col, fmt in (("CPU % of the elapsed time", "cpu_pct", "{:.1f}"),
                            ("mean wait, ms (runnable time per switch)", "mean_wait_ms", "{:.2f}"),
                            ("mean wakeup latency, ms", "latency_ms", "{:.2f}")):
        out.append(f"{title}:\n")
        out.append("| task | nice | trace | " + " | ".join(presets) + " |")
        out.append("|---|---|---" + "|---" * len(presets) + "|")
        first = runs[presets[0]]
        for comm in comms:  # the workload's order, not compare()'s busiest-first
            row = {p: list(np.asarray(runs[p]["comm"])).index(comm) for p in presets}
            i = row[presets[0]]
            cells = [fmt.format(np.asarray(first["trace_" + col])[i])]
            cells += [fmt.format(np.asarray(runs[p]["sim_" + col])[row[p]]) for p in presets]
            cells = ["-" if c == "nan" else c for c in cells]
            out.append(f"| {comm} | {np.asarray(first['nice'])[i]} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def workload_tids(t, facts):
    """The workload's tasks: the process named rec-NAME and its
    descendants, or the facts' comms (a capture from before it was named)."""
    if "root" not in facts:
        return [t.tid(c) for c in facts["comms"]]
    return t.family(facts["root"])


def least_share(w, sim):
    """The least share of its recorded CPU time any task got (a task not
    forked yet got none)."""
    pids = w.pids(sim)
    return min((sim.task(pids[x.tid]).cpu_ns if x.tid in pids else 0) / x.demand_ns
               for x in w.tasks if x.demand_ns > 0)


def conservation(presets, grace=0.05):
    """The --conservation table (Markdown)."""
    out = ["| capture | sleeps | " + " | ".join(presets) + " |",
           "|---|---" + "|---" * len(presets) + "|"]
    for path in sorted(os.listdir(DATA)):
        if not (path.startswith("real_") and path.endswith(".txt.gz")):
            continue
        name = path[:-len(".txt.gz")]
        with open(os.path.join(DATA, name + ".json")) as f:
            facts = json.load(f)
        t = trace.load(os.path.join(DATA, path))
        for sleeps in ("trace", "length"):
            w = t.to_workload(tasks=workload_tids(t, facts), sleeps=sleeps)
            cells = []
            for p in presets:
                sim = w.run(p)
                at_end = least_share(w, sim)
                sim.run(seconds=grace * w.duration)
                cells.append(f"{100 * at_end:.1f} / {100 * least_share(w, sim):.1f}")
            out.append(f"| {name} | {sleeps} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default=os.path.join(DATA, "real_sched_trace.txt.gz"),
                    help="(default: tests/data/real_sched_trace.txt.gz)")
    ap.add_argument("--demand", choices=("recorded", "open"), default="open",
                    help="(default: open: the busy loops take what the policy gives them)")
    ap.add_argument("--seconds", type=float, help="(default: the trace's duration)")
    ap.add_argument("--quick", action="store_true", help="replay 0.5 s (default: off)")
    ap.add_argument("--conservation", action="store_true",
                    help="every capture's least share of its recorded CPU (default: off)")
    args = ap.parse_args(argv)
    if args.conservation:
        print(conservation(ps.presets()))
        return 0
    facts_path = os.path.splitext(os.path.splitext(args.trace)[0])[0] + ".json"
    with open(facts_path) as f:
        comms = json.load(f)["comms"]
    seconds = 0.5 if args.quick else args.seconds
    print(tables(args.trace, comms, args.demand, seconds, ps.presets()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
