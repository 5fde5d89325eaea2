"""Search every preset for the workload that takes a CPU without being
charged for it, beside two CPU hogs (Tsafrir, Etsion and Feitelson, USENIX
Security 2007: on tick-sampled accounting a task that runs between ticks
and sleeps across each one is never charged), and for the one that takes
the most beyond what its weight promises.  Nothing here describes the
cheat: the search finds it.

    python experiments/search_cheat.py                 # every preset, ~10 min on 2 cores
    python experiments/search_cheat.py --budget 2000   # a quick look
    python experiments/search_cheat.py --markdown      # the docs' table
"""
import argparse
import os
import sys
import time

import pysched as ps
from pysched import search

PRESETS = ["linux-2.4.20", "linux-2.5.64", "linux-2.5.65", "houston-2003", "linux-6.5-cfs",
           "linux-6.12-eevdf"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--budget", type=int, default=20000, help="runs per search")
    ap.add_argument("--seconds", type=float, default=20.0, help="simulated s per run")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="processes the searches run on")
    ap.add_argument("--seed", type=int, default=1, help="the searches' seed")
    ap.add_argument("--presets", nargs="*", default=PRESETS, help="the presets searched")
    ap.add_argument("--markdown", action="store_true", help="print the docs' table")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 64 runs a search, 1 simulated s each")
    args = ap.parse_args(argv)
    if args.quick:
        args.budget, args.seconds = 64, 1.0
    space = search.Space(background=(search.hog(), search.hog()))
    rows = []
    for preset in args.presets:
        for objective in (search.uncharged_share(), search.share_above_fair()):
            t0 = time.monotonic()
            r = search.search(preset, objective, space, budget=args.budget, seconds=args.seconds,
                              seed=args.seed, max_workers=args.workers)
            took = time.monotonic() - t0
            t = r.tasks()
            top = t[t["searched"]][t[t["searched"]]["value"].argmax()]
            body = r.workload.tasks[list(t[t["searched"]]["pid"]).index(top["pid"])]
            rows.append((preset, objective.name, r.score, top["share"], top["charged"],
                         len(r.workload.tasks), max(x.ops for x in r.workload.tasks),
                         body.code(), took, r.evaluations))
            print(f"{preset:18} {objective.name:18} score {r.score:6.3f}  top task: share "
                  f"{top['share']:.3f} charged {top['charged']:.3f}  {len(r.workload.tasks)} "
                  f"tasks  {body.code()}  ({r.evaluations:,} runs, {took:.0f} s)",
                  file=sys.stderr if args.markdown else sys.stdout, flush=True)
    if args.markdown:
        print(f"Two hogs and up to three searched tasks, {args.seconds:g} simulated s a run, "
              f"{args.budget:,} runs a search, seed {args.seed}.\n")
        print("| preset | objective | score | its share | charged | tasks | the task that scored |")
        print("|---|---|---|---|---|---|---|")
        for p, o, s, sh, ch, n, ops, code, took, ev in rows:
            print(f"| {p} | {o} | {s:.3f} | {sh:.3f} | {ch:.3f} | {n} | `{code}` |")


if __name__ == "__main__":
    main()
