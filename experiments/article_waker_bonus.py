"""The LWN article's claim, measured: does Linus's waker bonus keep an X
server interactive under a kernel compile?

An X-like server burns CPU for its clients, which mostly sleep; a
`make -j4`-like load keeps the CPU busy.  On 2.5.64 the server looks like a
CPU hog and loses its bonus; from 2.5.64-bk4 on, every client it wakes
hands it the sleep credit the client cannot use (the back-boost).  We
compare linux-2.5.64, linux-2.5.64-bk4 and linux-2.5.65: the server's
priority over time, the clients' wakeup latency (mean, 99th percentile,
max), and what the compile got.  "X exp/re" counts the server's timeslice
expiries into the expired array (where it waits for every compiler to use up
its slice) and its reinsertions into the active array (as interactive).

    python experiments/article_waker_bonus.py [--seconds 60] [--seeds 3] [--quick] [--plot out.png]

--plot draws, for seed 0 of every kernel, the server's priority over time
and the clients' latency CDF, then under 2.5.64 and 2.5.65 who ran when
(half a second in the middle of the run) and the CPU share of each program.
"""
import argparse

import numpy as np

import pysched as ps

# (label, preset, parameter overrides): the three kernels, plus each end with
# the back-boost switched the other way, to separate its effect from the
# other bk4 changes (CHILD_PENALTY 95 -> 50 above all, see below)
CONFIGS = (
    ("linux-2.5.64", "linux-2.5.64", {}),
    ("2.5.64 + backboost", "linux-2.5.64", {"waker_bonus": 1}),
    ("linux-2.5.64-bk4", "linux-2.5.64-bk4", {}),
    ("linux-2.5.65", "linux-2.5.65", {}),
    ("2.5.65 - backboost", "linux-2.5.65", {"waker_bonus": 0}),
)


def scene(preset, params, seed, seconds):
    sim = ps.Simulator(preset, seed=seed, params=params, record="series",
                       series_fields=["prio", "sleep_avg"], series_every=100)
    make = sim.spawn(ps.programs.kernel_compile(jobs=4), name="make")
    x = sim.spawn(ps.programs.x_server(work_ms=ps.uniform(2, 6)), name="X")
    clients = [sim.spawn(ps.programs.x_client(think_ms=ps.exponential(100)), name=f"client{i}")
               for i in range(3)]
    # a window being dragged: a request every 10 ms, 0.5 ms of client work each
    drag = sim.spawn(ps.Program().loop().sleep(ms=10).post("xreq").wait("xreply").run(us=500)
                     .end(), name="drag")
    sim.run(seconds=seconds)
    return sim, make, x, clients + [drag]


def measure(preset, params, seed, seconds):
    sim, make, x, clients = scene(preset, params, seed, seconds)
    st = sim.stats()
    lat = np.concatenate([sim.latencies(c) for c in clients]) / 1e6
    # make and its forked compilers: everything that is not X or a client
    others = ~np.isin(st["pid"], [x] + clients)
    compile_ns = st["cpu_ns"][others].sum()
    prio = sim.series("prio")[:, x - 1]
    xt = sim.task(x)
    return {
        "x_prio_mean": float(np.nanmean(prio)),
        "x_prio_final": xt.prio,
        "x_bonus_received": xt.bonus_received,
        "x_expired": xt.nr_expired,
        "x_reinserted": xt.nr_reinserted,
        "x_cpu": float(xt.cpu_ns / (seconds * 1e9)),
        "lat_mean": float(lat.mean()),
        "lat_p99": float(np.percentile(lat, 99)),
        "lat_max": float(lat.max()),
        "requests": int(len(lat)),
        "compile_cpu": float(compile_ns / (seconds * 1e9)),
    }


def plot(path, seconds):
    """The figure of --plot, from seed 0 of every configuration."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = {label: scene(preset, params, 0, seconds) for label, preset, params in CONFIGS}
    fig = plt.figure(figsize=(13, 12), layout="constrained")
    top, middle, bottom = fig.subfigures(3, 1, height_ratios=[1.3, 1, 1])
    prio_ax, cdf_ax = top.subplots(1, 2)
    for k, (label, (sim, make, x, clients)) in enumerate(runs.items()):
        ps.plot.series(sim, "prio", tasks=x, label=label, color=f"C{k}", ax=prio_ax)
        ps.plot.latency_cdf(sim, clients, combined=True, log_x=True, label=label, color=f"C{k}",
                            ax=cdf_ax)
    prio_ax.invert_yaxis()
    prio_ax.set_ylabel("X server prio (lower is better)")
    prio_ax.set_title("the X server's priority beside make -j4")
    cdf_ax.set_title("its clients' wakeup-to-run latency")
    # the two kernels the article compares, side by side from here down
    compared = ("linux-2.5.64", "linux-2.5.65")
    middle_axes = middle.subplots(2, 1)
    start = round(seconds / 2)
    for ax, label in zip(middle_axes, compared):
        ps.plot.timeline(runs[label][0], start_s=start, end_s=start + 0.5, by="name", ax=ax)
        ax.set_title(f"{label}: who ran when")
    for ax, label in zip(bottom.subplots(1, 2), compared):
        ps.plot.shares(runs[label][0], by="name", of="cpu", ax=ax)
        ax.set_title(f"{label}: CPU share over {seconds:g} s")
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    # the defaults are the docs' run (docs/experiments/waker-bonus.md): its
    # figures are what they print
    ap.add_argument("--seconds", type=float, default=120.0, help="simulated seconds per run")
    ap.add_argument("--seeds", type=int, default=5, help="runs per kernel, averaged")
    ap.add_argument("--quick", action="store_true", help="20 s x 1 seed")
    ap.add_argument("--plot", help="write the figure (priority, latency CDF, timelines, shares) "
                                   "to this PNG")
    args = ap.parse_args(argv)
    if args.quick:
        args.seconds, args.seeds = 20.0, 1
    rows = {}
    for label, preset, params in CONFIGS:
        rows[label] = [measure(preset, params, seed, args.seconds) for seed in range(args.seeds)]
    print(f"X server + 3 sleepy clients + a window drag beside make -j4; "
          f"{args.seconds:g} s simulated x {args.seeds} seeds (mean over seeds)\n")
    head = (f"{'kernel':18} {'X prio':>7} {'X CPU%':>7} {'bonus':>8} {'X exp/re':>9} {'lat mean':>9} "
            f"{'lat p99':>8} {'lat max':>8} {'replies':>8} {'compile CPU%':>13}")
    print(head)
    print("-" * len(head))
    summary = {}
    for label, runs in rows.items():
        m = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
        summary[label] = m
        print(f"{label:18} {m['x_prio_mean']:7.1f} {100 * m['x_cpu']:7.1f} "
              f"{m['x_bonus_received']:8.0f} {m['x_expired']:4.0f}/{m['x_reinserted']:<4.0f} "
              f"{m['lat_mean']:8.2f}ms {m['lat_p99']:6.1f}ms "
              f"{m['lat_max']:6.0f}ms {m['requests']:8.0f} {100 * m['compile_cpu']:12.1f}")
    for x, y in (("linux-2.5.64", "linux-2.5.65"), ("2.5.65 - backboost", "linux-2.5.65"),
                 ("linux-2.5.64", "2.5.64 + backboost")):
        a, b = summary[x], summary[y]
        print(f"\n{x} -> {y}: X CPU {100 * a['x_cpu']:.1f}% -> {100 * b['x_cpu']:.1f}%, "
              f"replies {a['requests']:.0f} -> {b['requests']:.0f}; client latency mean "
              f"{a['lat_mean']:.2f} -> {b['lat_mean']:.2f} ms, p99 {a['lat_p99']:.1f} -> "
              f"{b['lat_p99']:.1f} ms, max {a['lat_max']:.0f} -> {b['lat_max']:.0f} ms; "
              f"compile CPU {100 * a['compile_cpu']:.1f}% -> {100 * b['compile_cpu']:.1f}%")
    if args.plot:
        plot(args.plot, args.seconds)
        print(f"plot: {args.plot}")
    return summary


if __name__ == "__main__":
    main()
