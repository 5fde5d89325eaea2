"""Load balancing by runqueue length (2.5) or by prio_avg (Houston's
suggestion, an extension beyond his patch) under houston-2003 on 2 CPUs.

The patch's mail proposes rq->prio_avg, a filtered average of the priority
a CPU runs at, as an input to load balancing: unlike the length of a
runqueue, it reflects the nice values competing there.  For mixes of CPU
hogs of several nice values, started on CPU 0, we compare each task's CPU
share under both balancers with the equilibrium that the single-CPU
analysis predicts for the machine as a whole
(pysched.analysis.houston_equilibrium(nices, cpus=2)).

    python experiments/houston_smp_balance.py

(The hogs draw no random numbers, so one run per case is the whole story.)
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


def measure(nices, by_prio_avg, warmup=60, seconds=120):
    sim = ps.Simulator("houston-2003", cpus=2,
                       params={"balance_prio_avg": int(by_prio_avg)})
    pids = [sim.spawn(ps.programs.cpu_hog(), nice=n, cpu=0) for n in nices]
    sim.run(seconds=warmup)
    c0 = [sim.task(p).cpu_ns for p in pids]
    m0 = sum(sim.task(p).nr_migrations for p in pids)
    sim.run(seconds=seconds)
    shares = np.array([(sim.task(p).cpu_ns - c) / (seconds * 1e9) for p, c in zip(pids, c0)])
    migrations = sum(sim.task(p).nr_migrations for p in pids) - m0
    return shares, migrations / seconds


def main(argv=None):
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    print("CPU hogs on 2 CPUs under houston-2003, started on CPU 0; shares in % of one CPU, "
          "steady state (120 s after 60 s)\n")
    for nices in MIXES:
        eq = ps.analysis.houston_equilibrium(nices, cpus=2)["shares"]
        rows = {}
        for label, flag in (("by length", False), ("by prio_avg", True)):
            rows[label] = measure(nices, flag)
        print("nice        " + " ".join(f"{n:>6}" for n in nices) + "   max|err|  migr/s")
        print("predicted   " + " ".join(f"{100 * s:6.1f}" for s in eq))
        for label, (s, mig) in rows.items():
            err = np.abs(s - eq).max()
            print(f"{label:11} " + " ".join(f"{100 * x:6.1f}" for x in s) +
                  f"   {100 * err:6.1f}  {mig:6.2f}")
        print()


if __name__ == "__main__":
    main()
