"""Load balancing by runqueue length (2.5) or by prio_avg (Houston's
suggestion, an extension beyond his patch) under houston-2003 on 2 CPUs.

The patch's mail proposes rq->prio_avg, a filtered average of the priority
a CPU runs at, as an input to load balancing: unlike the length of a
runqueue, it reflects the nice values competing there.  For mixes of CPU
hogs of several nice values, started on CPU 0, we compare each task's CPU
share under both balancers with the equilibrium that the single-CPU
analysis predicts for the machine as a whole
(pysched.analysis.houston_equilibrium(nices, cpus=2)).

    python experiments/houston_smp_balance.py [--quick] [--plot out.png]

(The hogs draw no random numbers, so one run per case is the whole story.)
--quick measures 20 s after a 10 s warm-up instead of 120 s after 60 s;
--plot draws, for the first mix under each balancer, who ran where during
the last second and each task's share of a CPU after the warm-up beside
the prediction.
"""
import argparse

import numpy as np

import pysched as ps

MIXES = [
    [-5, -5, 0, 0, 0, 5, 10, 19],
    [0, 0, 0, 0, 10, 10, 10, 10],
    [-10, 0, 0, 0, 0, 0],
    [0, 5, 10, 15, 19, -20],
]


BALANCERS = (("by length", False), ("by prio_avg", True))


def machine(nices, by_prio_avg, record="counters"):
    sim = ps.Simulator("houston-2003", cpus=2, record=record,
                       params={"balance_prio_avg": int(by_prio_avg)})
    pids = [sim.spawn(ps.programs.cpu_hog(), nice=n, cpu=0, name=f"nice{n:+d}") for n in nices]
    return sim, pids


def measure(nices, by_prio_avg, warmup=60, seconds=120):
    sim, pids = machine(nices, by_prio_avg)
    sim.run(seconds=warmup)
    c0 = [sim.task(p).cpu_ns for p in pids]
    m0 = sum(sim.task(p).nr_migrations for p in pids)
    sim.run(seconds=seconds)
    shares = np.array([(sim.task(p).cpu_ns - c) / (seconds * 1e9) for p, c in zip(pids, c0)])
    migrations = sum(sim.task(p).nr_migrations for p in pids) - m0
    return shares, migrations / seconds


def plot(path, nices, warmup, seconds):
    """The figure of --plot for one mix: a timeline of the last second and
    the shares after the warm-up, each balancer in a column."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eq = ps.analysis.houston_equilibrium(nices, cpus=2).shares
    fig, axes = plt.subplots(2, 2, figsize=(13, 7), layout="constrained",
                             height_ratios=[1, 2])
    for column, (label, flag) in enumerate(BALANCERS):
        sim, pids = machine(nices, flag, record="events")
        end = warmup + seconds
        sim.run(seconds=end)
        ps.plot.timeline(sim, start_s=end - 1, end_s=end, ax=axes[0, column])
        axes[0, column].set_title(f"balancing {label}: the last second")
        ax = ps.plot.shares(sim, of="cpu", start_s=warmup, ax=axes[1, column])
        ax.plot(eq, range(len(eq)), "k|", markersize=14, label="predicted")
        ax.legend(loc="lower right", fontsize="small")
        ax.set_title(f"balancing {label}: shares after the {warmup:g} s warm-up")
    fig.suptitle(f"houston-2003, 2 CPUs, hogs of nice {nices}")
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="20 s after a 10 s warm-up")
    ap.add_argument("--plot", help="write the first mix's timelines and shares to this PNG")
    args = ap.parse_args(argv)
    warmup, seconds = (10, 20) if args.quick else (60, 120)
    print("CPU hogs on 2 CPUs under houston-2003, started on CPU 0; shares in % of one CPU, "
          f"steady state ({seconds} s after {warmup} s)\n")
    for nices in MIXES:
        eq = ps.analysis.houston_equilibrium(nices, cpus=2).shares
        rows = {}
        for label, flag in BALANCERS:
            rows[label] = measure(nices, flag, warmup, seconds)
        print("nice        " + " ".join(f"{n:>6}" for n in nices) + "   max|err|  migr/s")
        print("predicted   " + " ".join(f"{100 * s:6.1f}" for s in eq))
        for label, (s, mig) in rows.items():
            err = np.abs(s - eq).max()
            print(f"{label:11} " + " ".join(f"{100 * x:6.1f}" for x in s) +
                  f"   {100 * err:6.1f}  {mig:6.2f}")
        print()
    if args.plot:
        plot(args.plot, MIXES[0], warmup, seconds)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
