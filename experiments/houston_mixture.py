"""houston-2003 beyond a pair of hogs: pysched.analysis.houston_mixture
(the patch's formulas on the loop's state, no simulator) against the
simulator (pysched.analysis.measure.classify_run) for three hogs of nice
0, 0, +5 on one CPU, and two hogs beside a task that runs 5 ms and sleeps
20 ms on one and on two CPUs, each on a seeded random grid inside the
documented range (run_avg_halflife log-uniform in 500..30000, nice_const
in 1600..25600, integers).  Prints each point and the agreement; --plot
draws the stability maps.

    python experiments/houston_mixture.py [--seed 1] [--hl 8] [--nc 6] [--plot FILE] [--quick]
"""
import argparse
import time

import numpy as np

import pysched as ps
from houston_offgrid import random_grid

CASES = {
    "three hogs 0, 0, +5 (1 CPU)": ([0, 0, 5], 1),
    "two hogs + 5/20 ms (1 CPU)": ([0, 0, (5, 20)], 1),
    "two hogs + 5/20 ms (2 CPUs)": ([0, 0, (5, 20)], 2),
}
KINDS = ("settles", "cycles", "starves", "undecided")


def compare(tasks, cpus, hl, nc):
    params = {"run_avg_halflife": hl, "nice_const": nc}
    t0 = time.perf_counter()
    p = ps.analysis.houston_mixture(tasks, cpus=cpus, params=params)
    t1 = time.perf_counter()
    m = ps.analysis.measure.classify_run(tasks, cpus=cpus, params=params)
    t2 = time.perf_counter()
    return {"hl": hl, "nc": nc, "p_kind": p.kind, "m_kind": m.kind, "p_shares": p.shares,
            "m_shares": m.shares, "p_time": t1 - t0, "m_time": t2 - t1}


def plot(results, hls, ncs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.8), squeeze=False)
    cmap = ListedColormap(["#4c9a2a", "#e3a21a", "#b8342d", "#999999"])
    for ax, (label, rows) in zip(axes[0], results.items()):
        grid = np.array([[KINDS.index(r["p_kind"]) for r in rows if r["hl"] == hl] for hl in hls])
        ax.imshow(grid.T, origin="lower", cmap=cmap, vmin=0, vmax=len(KINDS) - 1, aspect="auto")
        for i, hl in enumerate(hls):
            for j, nc in enumerate(ncs):
                r = next(r for r in rows if r["hl"] == hl and r["nc"] == nc)
                ax.text(i, j, r["m_kind"][0] + ("" if r["m_kind"] == r["p_kind"] else "!"),
                        ha="center", va="center", fontsize=8, color="white")
        ax.set_xticks(range(len(hls)), [str(h) for h in hls], rotation=60, fontsize=7)
        ax.set_yticks(range(len(ncs)), [str(n) for n in ncs], fontsize=7)
        ax.set_xlabel("run_avg_halflife (ticks)")
        ax.set_ylabel("nice_const")
        ax.set_title(label, fontsize=9)
    fig.suptitle("predicted kind (colour: green settles, amber cycles, red starves); "
                 "simulated (letter, ! where they differ)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--seed", type=int, default=1, help="the generator's seed")
    ap.add_argument("--hl", type=int, default=8, help="half-lives drawn")
    ap.add_argument("--nc", type=int, default=6, help="nice_consts drawn")
    ap.add_argument("--plot", metavar="FILE", help="draw the stability maps to FILE (PNG)")
    ap.add_argument("--quick", action="store_true", help="a 2 x 2 grid")
    args = ap.parse_args(argv)
    hls, ncs = random_grid(args.seed, 2 if args.quick else args.hl, 2 if args.quick else args.nc)
    results = {}
    for label, (tasks, cpus) in CASES.items():
        print(f"\n{label}")
        print(f"{'halflife':>9} {'nice_const':>10} {'kinds':>19}  predicted / simulated shares")
        rows = []
        for hl in hls:
            for nc in ncs:
                r = compare(tasks, cpus, hl, nc)
                rows.append(r)
                off = float(np.abs(r["p_shares"] - r["m_shares"]).max())
                mark = "" if r["p_kind"] == r["m_kind"] else " *kind"
                if r["p_kind"] == r["m_kind"] == "settles" and off > 0.03:
                    mark += " *share"
                print(f"{hl:>9} {nc:>10} {r['p_kind']:>9}/{r['m_kind']:<9} "
                      f"{np.round(r['p_shares'], 3)} / {np.round(r['m_shares'], 3)}{mark}")
        results[label] = rows
    print()
    for label, rows in results.items():
        kind = sum(r["p_kind"] == r["m_kind"] for r in rows)
        both = [r for r in rows if r["p_kind"] == r["m_kind"] == "settles"]
        errs = [float(np.abs(r["p_shares"] - r["m_shares"]).max()) for r in both]
        within = sum(e <= 0.03 for e in errs)
        print(f"{label}: kind {kind}/{len(rows)}, shares within 0.03 {within}/{len(both)}, "
              f"worst {max(errs, default=0):.3f}; predicted in {sum(r['p_time'] for r in rows):.1f} s, "
              f"simulated in {sum(r['m_time'] for r in rows):.1f} s")
    if args.plot:
        plot(results, hls, ncs, args.plot)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
