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

    python experiments/article_waker_bonus.py [--seconds 60] [--seeds 3] [--plot out.png]
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
        "prio_series": prio,
        "times": sim.series_times() / 1e9,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--plot", help="write the server's priority over time to this PNG")
    args = ap.parse_args(argv)
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
        m = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]
             if k not in ("prio_series", "times")}
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
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(9, 4))
        for label, runs in rows.items():
            ax.plot(runs[0]["times"], runs[0]["prio_series"], label=label, lw=1)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("X server prio (lower is better)")
        ax.invert_yaxis()
        ax.legend()
        ax.set_title("X server priority beside make -j4 (seed 0)")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(f"plot: {args.plot}")
    return summary


if __name__ == "__main__":
    main()
