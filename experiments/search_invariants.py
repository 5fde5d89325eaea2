"""Search every preset for the workload that breaks each behaviour
invariant worst (docs/guide/invariants.md): the longest wait for a CPU
(starvation) beside two hogs on one CPU, the most time a CPU idles
while a task that may run on it waits (work conservation), with up to four
tasks on two CPUs, and, under the fair presets, the largest lag of a task
beside two hogs on one CPU.

    python experiments/search_invariants.py                 # ~10 min on 2 cores
    python experiments/search_invariants.py --budget 500    # a quick look
    python experiments/search_invariants.py --markdown      # the docs' table
"""
import argparse
import os
import sys
import time

from pysched import search

PRESETS = ["linux-2.4.20", "linux-2.5.64", "linux-2.5.65", "houston-2003", "linux-6.5-cfs",
           "linux-6.12-eevdf"]
SEARCHES = [
    ("longest_wait", search.longest_wait, 1,
     search.Space(background=(search.hog(), search.hog()))),
    ("idle_while_waiting", search.idle_while_waiting, 2, search.Space(tasks=(2, 4))),
    ("largest_lag", search.largest_lag, 1,
     search.Space(background=(search.hog(), search.hog()))),
]
FAIR_ONLY = {"largest_lag"}   # the other presets keep no lag


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--budget", type=int, default=3000, help="runs per search")
    ap.add_argument("--seconds", type=float, default=10.0, help="simulated s per run")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="processes the searches run on")
    ap.add_argument("--seed", type=int, default=1, help="the searches' seed")
    ap.add_argument("--presets", nargs="*", default=PRESETS, help="the presets searched")
    ap.add_argument("--invariants", nargs="*", default=[s[0] for s in SEARCHES],
                    choices=[s[0] for s in SEARCHES], help="the invariants searched for")
    ap.add_argument("--markdown", action="store_true", help="print the docs' table")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 64 runs a search, 1 simulated s each")
    args = ap.parse_args(argv)
    if args.quick:
        args.budget, args.seconds = 64, 1.0
    rows = []
    for preset in args.presets:
        for name, objective, cpus, space in SEARCHES:
            if name not in args.invariants:
                continue
            if name in FAIR_ONLY and preset not in ("linux-6.5-cfs", "linux-6.12-eevdf"):
                continue
            t0 = time.monotonic()
            r = search.search(preset, objective(), space, cpus=cpus, budget=args.budget,
                              seconds=args.seconds, seed=args.seed, max_workers=args.workers)
            code = " + ".join(t.code().removeprefix("ps.Program()") for t in r.workload.tasks)
            rows.append((preset, name, cpus, r.score, len(r.workload.tasks), code))
            print(f"{preset:18} {name:18} {r.score:10.3f}  {len(r.workload.tasks)} tasks  {code}  "
                  f"({r.evaluations:,} runs, {time.monotonic() - t0:.0f} s)",
                  file=sys.stderr if args.markdown else sys.stdout, flush=True)
    if args.markdown:
        print(f"{args.budget:,} runs a search, {args.seconds:g} simulated s a run, seed "
              f"{args.seed}; longest_wait in ms beside two hogs on 1 CPU, idle_while_waiting "
              f"as a fraction of the run on 2 CPUs, largest_lag in ms of service beside two "
              f"hogs on 1 CPU (EEVDF's clamp: max(2 x slice, a tick), 1.5 ms at the default "
              f"slice).\n")
        print("| preset | invariant | CPUs | worst found | tasks | the searched tasks |")
        print("|---|---|---|---|---|---|")
        for p, n, c, s, k, code in rows:
            print(f"| {p} | {n} | {c} | {s:.3f} | {k} | `{code}` |")


if __name__ == "__main__":
    main()
