"""Nice under Houston's self-tuning scheduler, against 2.5.65.

1. CPU shares of two CPU hogs, one of them reniced, under houston-2003 (nice
   works by feedback through run_avg) and linux-2.5.65 (nice works through
   timeslices), beside the equilibrium that the patch's argument predicts.
2. A sweep of run_avg_halflife x nice_const for a nice 0 / nice +10 pair:
   where the +10 task's share settles, and how fast (the time until its
   share over a 10 s window stays within 10 % of where it settles).
3. A task that computes, turns interactive and computes again, beside two
   hogs: its priority, timeslice and run_avg over time ("slow down rather
   than get jerky"), as a plot.  The phases are about 20 s each (the
   computing ones are 6.5 s of CPU at about a third of it).

    python experiments/houston_nice.py [--plot houston.png] [--quick]

--plot draws 3. (the task's priority, timeslice and run_avg over time) and
2. as heat maps: the predicted share, the simulated one and their
difference over run_avg_halflife x nice_const.
"""
import argparse

import numpy as np

import pysched as ps

PAIRS = [(0, 1), (0, 2), (0, 5), (0, 10), (0, 19), (-20, 19), (-10, 10)]


def pair_shares(preset, nices, seconds=120, warmup=60):
    sim = ps.Simulator(preset)
    pids = [sim.spawn(ps.programs.cpu_hog(), nice=n) for n in nices]
    sim.run(seconds=warmup)
    c0 = [sim.task(p).cpu_ns for p in pids]
    sim.run(seconds=seconds)
    return [(sim.task(p).cpu_ns - c) / (seconds * 1e9) for p, c in zip(pids, c0)]


def settle(run_avg_halflife, nice_const, seconds=240):
    """Share of a nice +10 hog beside a nice 0 hog, second by second."""
    sim = ps.Simulator("houston-2003", params={"run_avg_halflife": run_avg_halflife,
                                               "nice_const": nice_const})
    sim.spawn(ps.programs.cpu_hog(), nice=0)
    b = sim.spawn(ps.programs.cpu_hog(), nice=10)
    per_second, last = [], 0
    for _ in range(seconds):
        sim.run(seconds=1)
        now = sim.task(b).cpu_ns
        per_second.append((now - last) / 1e9)
        last = now
    # shares over sliding 10 s windows: a long timeslice makes 1 s noisy
    window = np.convolve(np.array(per_second), np.ones(10) / 10, mode="valid")
    final = window[-60:].mean()
    outside = np.nonzero(np.abs(window - final) > 0.1 * final)[0]
    settled_at = int(outside[-1]) + 10 if len(outside) else 10
    predicted = ps.analysis.houston_equilibrium([0, 10], params={"nice_const": nice_const})
    return {"share": float(final), "settle_s": settled_at,
            "predicted": float(predicted.shares[1])}


FIELDS = ("prio", "time_slice", "run_avg")


def turn_interactive_run(preset="houston-2003"):
    """The simulator after 60 s of the shifter beside two hogs, and its pid."""
    # beside two hogs a computing task gets about a third of the CPU, so 6.5 s
    # of CPU take about 20 s; the interactive phase is 400 x 50 ms
    phase = (ps.Program().run(s=6.5).loop(400).run(ms=1).sleep(ms=49).end().run(s=6.5)
             .sleep(s=100))
    sim = ps.Simulator(preset, record="series", series_fields=list(FIELDS), series_every=50)
    t = sim.spawn(phase, name="shifter")
    for _ in range(2):
        sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=60)
    return sim, t


def turn_interactive(preset="houston-2003"):
    sim, t = turn_interactive_run(preset)
    times = sim.series_times() / 1e9
    return times, {f: sim.series(f)[:, t - 1] for f in FIELDS}


def plot(path, rows, phases):
    """The figure of --plot: the shifter's fields over time above, the
    sweep's prediction, simulation and difference below."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sim, t = turn_interactive_run()
    fig = plt.figure(figsize=(14, 11), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[1.5, 1])
    axes = top.subplots(3, 1, sharex=True)
    for ax, f in zip(axes, FIELDS):
        ps.plot.series(sim, f, tasks=t, ax=ax)
        for a, b, name in phases:
            if name == "interactive":
                ax.axvspan(a, b, alpha=0.08, color="C2")
    for ax in axes[:-1]:
        ax.set_xlabel("")  # the x axis is shared: said once, at the bottom
    axes[0].invert_yaxis()
    axes[1].set_ylabel("time_slice (ticks)")
    axes[0].set_title("houston-2003: compute, interactive (shaded), compute; beside 2 hogs")
    ps.plot.predicted_vs_simulated(rows, "nice_const", "run_avg_halflife", "predicted", "share",
                                   fig=bottom)
    bottom.suptitle("nice 0 vs nice +10: the +10 task's share where it settles")
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--plot", help="write the turn-interactive plot and the sweep's heat maps "
                                   "to this PNG")
    ap.add_argument("--quick", action="store_true", help="a smaller sweep")
    args = ap.parse_args(argv)

    print("1. two CPU hogs: the CPU share of each (steady state, 120 s after 60 s)\n")
    print(f"{'nices':>10} {'houston-2003':>16} {'predicted':>16} {'linux-2.5.65':>16}")
    for nices in PAIRS:
        h = pair_shares("houston-2003", nices)
        o = pair_shares("linux-2.5.65", nices)
        eq = ps.analysis.houston_equilibrium(nices).shares
        fmt = lambda s: f"{100 * s[0]:5.1f}% / {100 * s[1]:4.1f}%"
        print(f"{str(nices):>10} {fmt(h):>16} {fmt(eq):>16} {fmt(o):>16}")

    grid = {"run_avg_halflife": [1000, 2500, 5000, 10000],
            "nice_const": [3200, 6409, 9600, 12800]}
    if args.quick:
        grid = {"run_avg_halflife": [1000, 5000], "nice_const": [6409, 12800]}
    rows = ps.sweep(settle, grid, output="dicts")
    print("\n2. nice 0 vs nice +10 under houston-2003: the +10 task's share where it settles "
          "(predicted) and seconds to settle within 10 %\n")
    consts = grid["nice_const"]
    print(f"{'halflife / nice_const':>22} " + " ".join(f"{c:>18}" for c in consts))
    for hl in grid["run_avg_halflife"]:
        cells = []
        for c in consts:
            r = next(r for r in rows if r["run_avg_halflife"] == hl and r["nice_const"] == c)
            cells.append(f"{100 * r['share']:4.1f}% ({100 * r['predicted']:4.1f}%) {r['settle_s']:3d}s")
        print(f"{hl:>22} " + " ".join(f"{c:>18}" for c in cells))

    times, s = turn_interactive()
    # the last computing phase is done by about 50 s: with its good priority
    # at first, it gets more than a third of the CPU
    phases = [(0, 20, "computing"), (20, 40, "interactive"), (40, 47, "computing")]
    print("\n3. a task that computes ~20 s, runs 1 ms per 50 ms for 20 s, computes ~20 s, beside "
          "two hogs (houston-2003):\n")
    print(f"{'phase':>22} {'prio (end)':>11} {'slice (end)':>12} {'run_avg (end)':>14}")
    for a, b, name in phases:
        i = np.searchsorted(times, b - 0.5)
        print(f"{f'{a}-{b} s {name}':>22} {s['prio'][i]:11.0f} {s['time_slice'][i]:12.0f} "
              f"{s['run_avg'][i]:14.0f}")
    if args.plot:
        plot(args.plot, rows, phases)
        print(f"\nplot: {args.plot}")


if __name__ == "__main__":
    main()
