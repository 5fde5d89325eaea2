"""Every scheduler in one table: 2.4's goodness, the 2.5 O(1) scheduler, the
self-tuning scheduler, CFS and EEVDF, on the same two workloads.

1. Nice: two CPU hogs on one CPU, the first at nice a and the second at nice
   b; the first hog's CPU share per scheduler, beside what CFS's weight
   table gives (sched_prio_to_weight: w_a / (w_a + w_b)).  A warm-up first,
   then the share over the measured window.
2. The X server of the LWN article beside make -j4: the server's CPU share,
   its clients' wakeup-to-run latency (mean, 99th percentile, max) and what
   the compile got, per scheduler, averaged over seeds.

    python experiments/all_schedulers.py [--quick] [--markdown] [--seeds 3]

--markdown prints the two tables as docs/experiments/all-schedulers.md has
them.  Presets the build does
not have are left out, and named.
"""
import argparse

import numpy as np

import pysched as ps

SCHEDULERS = ("linux-2.4.20", "linux-2.5.64", "linux-2.5.65", "houston-2003",
              "linux-6.5-cfs", "linux-6.6-eevdf", "linux-6.12-eevdf")
PAIRS = ((0, 1), (0, 5), (0, 10), (0, 19), (-5, 5), (-20, 19))

def weight_share(a, b):
    # sched_prio_to_weight[] (kernel/sched/core.c), as the fair presets carry it
    wa, wb = (ps.formula("linux-6.6-eevdf", "weight", n) for n in (a, b))
    return wa / (wa + wb)


def nice_share(preset, a, b, warmup, seconds):
    """The nice-a hog's share of one CPU beside a nice-b hog."""
    sim = ps.Simulator(preset, latencies=False)
    first = sim.spawn(ps.programs.cpu_hog(), nice=a)
    sim.spawn(ps.programs.cpu_hog(), nice=b)
    sim.run(seconds=warmup)
    before = sim.task(first).cpu_ns
    sim.run(seconds=seconds)
    return (sim.task(first).cpu_ns - before) / (seconds * 1e9)


def x_scene(preset, seed, seconds):
    """The article's scene: make -j4, an X server, three sleepy clients and
    a window being dragged (a request every 10 ms)."""
    sim = ps.Simulator(preset, seed=seed)
    sim.spawn(ps.programs.kernel_compile(jobs=4), name="make")
    x = sim.spawn(ps.programs.x_server(work_ms=ps.uniform(2, 6)), name="X")
    clients = [sim.spawn(ps.programs.x_client(think_ms=ps.exponential(100)), name=f"client{i}")
               for i in range(3)]
    clients.append(sim.spawn(ps.Program().loop().sleep(ms=10).post("xreq").wait("xreply")
                             .run(us=500).end(), name="drag"))
    sim.run(seconds=seconds)
    st = sim.stats()
    lat = np.concatenate([sim.latencies(c) for c in clients]) / 1e6
    compile_ns = st["cpu_ns"][~np.isin(st["pid"], [x] + clients)].sum()
    return {"X CPU %": 100 * sim.task(x).cpu_ns / (seconds * 1e9),
            "latency mean, ms": float(lat.mean()),
            "latency p99, ms": float(np.percentile(lat, 99)),
            "latency max, ms": float(lat.max()),
            "replies": float(len(lat)),
            "compile CPU %": 100 * compile_ns / (seconds * 1e9)}


def tables(schedulers, warmup, seconds, x_seconds, seeds):
    nice = {pair: {s: 100 * nice_share(s, *pair, warmup, seconds) for s in schedulers}
            for pair in PAIRS}
    x = {}
    for s in schedulers:
        runs = [x_scene(s, seed, x_seconds) for seed in range(seeds)]
        x[s] = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
    return nice, x


def short(preset):
    return preset.replace("linux-", "")


def print_text(schedulers, nice, x):
    width = max(9, *(len(short(s)) for s in schedulers)) + 1
    head = f"{'nice a/b':18}{'weights':>{width}}" + "".join(f"{short(s):>{width}}" for s in schedulers)
    print("1. CPU share of the nice-a hog beside a nice-b hog, %\n")
    print(head)
    print("-" * len(head))
    for (a, b), row in nice.items():
        print(f"{f'{a:+d}/{b:+d}':18}{100 * weight_share(a, b):>{width}.2f}"
              + "".join(f"{row[s]:>{width}.2f}" for s in schedulers))
    print("\n2. X server + 3 clients + a window drag beside make -j4\n")
    head = f"{'':18}" + "".join(f"{short(s):>{width}}" for s in schedulers)
    print(head)
    print("-" * len(head))
    for k in next(iter(x.values())):
        fmt = ".0f" if k == "replies" else ".1f"
        print(f"{k:18}" + "".join(f"{x[s][k]:>{width}{fmt}}" for s in schedulers))


def print_markdown(schedulers, nice, x):
    cols = " | ".join(f"`{s}`" for s in schedulers)
    print(f"| nice a/b | weights | {cols} |")
    print("|---|---|" + "---|" * len(schedulers))
    for (a, b), row in nice.items():
        print(f"| {a:+d}/{b:+d} | {100 * weight_share(a, b):.2f} | "
              + " | ".join(f"{row[s]:.2f}" for s in schedulers) + " |")
    print()
    print(f"| X scene | {cols} |")
    print("|---|" + "---|" * len(schedulers))
    for k in next(iter(x.values())):
        fmt = ".0f" if k == "replies" else ".1f"
        print(f"| {k} | " + " | ".join(f"{x[s][k]:{fmt}}" for s in schedulers) + " |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    # the defaults are the docs' run: its tables are what they print
    ap.add_argument("--warmup", type=float, default=60.0,
                    help="simulated seconds before the nice shares are measured (houston-2003 "
                         "settles by feedback)")
    ap.add_argument("--seconds", type=float, default=120.0,
                    help="simulated seconds over which the nice shares are measured")
    ap.add_argument("--x-seconds", type=float, default=60.0, help="simulated seconds of the X scene")
    ap.add_argument("--seeds", type=int, default=3, help="X scene runs per scheduler, averaged")
    ap.add_argument("--quick", action="store_true", help="5 + 10 s nice runs, one 10 s X scene")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    args = ap.parse_args(argv)
    if args.quick:
        args.warmup, args.seconds, args.x_seconds, args.seeds = 5.0, 10.0, 10.0, 1
    have = set(ps.presets())
    schedulers = [s for s in SCHEDULERS if s in have]
    missing = [s for s in SCHEDULERS if s not in have]
    nice, x = tables(schedulers, args.warmup, args.seconds, args.x_seconds, args.seeds)
    if args.markdown:
        print_markdown(schedulers, nice, x)
    else:
        print(f"{args.warmup:g} s warm-up + {args.seconds:g} s per nice pair; X scene "
              f"{args.x_seconds:g} s x {args.seeds} seeds (mean); one CPU, each preset at its default HZ\n")
        print_text(schedulers, nice, x)
    if missing:
        print(f"\nnot in this build: {', '.join(missing)}")


if __name__ == "__main__":
    main()
