"""Does houston-2003's feedback loop settle, cycle or starve a task?  The
prediction (pysched.analysis.stability.houston_stability, from the patch's formulas)
against the simulator (pysched.analysis.measure.classify_run) over a grid of
run_avg_halflife x nice_const, for nice -20 vs +19 and for 0 vs +5.

For each pair it prints the two verdicts point by point, then the
agreement: the kind (settles / cycles / starves), the shares where both
settle (within 0.03), the settling time where both settle (within a factor
of 2: when every prio has come within a level of the range it keeps at the
end, pysched.analysis.measure.prio_settling_time), and the runtime of each side.  --plot writes the map: predicted and simulated
kinds side by side, the small task's share in each cell, disagreements
framed.

    python experiments/houston_stability.py [--size 8] [--plot map.png] [--quick]
"""
import argparse
import time

import numpy as np

import pysched as ps

PAIRS = [(-20, 19), (0, 5)]
KINDS = ("settles", "cycles", "starves", "undecided")
COLOURS = {"settles": "#9ecae1", "cycles": "#fdae6b", "starves": "#bdbdbd", "undecided": "#ffffff"}
LETTER = {"settles": "s", "cycles": "c", "starves": "x", "undecided": "u"}


def axes(size):
    """run_avg_halflife 500..30000 and nice_const 1600..25600, geometric."""
    hls = np.unique(np.geomspace(500, 30000, size).round().astype(int))
    ncs = np.unique(np.geomspace(1600, 25600, size).round().astype(int))
    return [int(h) for h in hls], [int(n) for n in ncs]


def point(pair, hl, nc):
    params = {"run_avg_halflife": hl, "nice_const": nc}
    t0 = time.perf_counter()
    p = ps.analysis.stability.houston_stability(pair, params=params)
    t1 = time.perf_counter()
    m = ps.analysis.measure.classify_run(pair, params=params)
    t2 = time.perf_counter()
    small = int(np.argmin(p.fixed_point_shares)) if pair[0] != pair[1] else 1
    return {"pair": pair, "hl": hl, "nc": nc, "small": small,
            "p_kind": p.kind, "p_share": float(p.shares[small]), "p_settle": p.settling_s,
            "m_kind": m.kind, "m_share": float(m.shares[small]), "m_settle": m.settling_s,
            "window": m.window_s, "eq_share": float(p.fixed_point_shares[small]),
            "p_swing": float(np.nanmax(p.swing_levels)) if p.kind != "starves" else 0.0,
            "m_swing": float(m.swing_levels.max()), "t_predict": t1 - t0, "t_simulate": t2 - t1}


def settle_agrees(r):
    """Within a factor of 2."""
    p, m = r["p_settle"], r["m_settle"]
    if np.isnan(p) or np.isnan(m):
        return False
    return p == m or (m > 0 and 0.5 <= p / m <= 2)


def summary(rows):
    kind = sum(r["p_kind"] == r["m_kind"] for r in rows)
    both = [r for r in rows if r["p_kind"] == r["m_kind"] == "settles"]
    share = sum(abs(r["p_share"] - r["m_share"]) <= 0.03 for r in both)
    settle = sum(settle_agrees(r) for r in both)
    return kind, len(rows), share, settle, len(both)


def table(rows, hls, ncs, pair):
    print(f"\nnice {pair[0]} vs {pair[1]}: predicted / simulated kind (s: settles, c: cycles, "
          f"x: starves, u: undecided), the nice {pair[rows[0]['small']]} task's share in %, * where the kinds "
          f"differ\n")
    print(f"{'halflife / nice_const':>22} " + " ".join(f"{n:>15}" for n in ncs))
    for hl in hls:
        cells = []
        for nc in ncs:
            r = next(r for r in rows if r["hl"] == hl and r["nc"] == nc)
            mark = " " if r["p_kind"] == r["m_kind"] else "*"
            cells.append(f"{LETTER[r['p_kind']]}/{LETTER[r['m_kind']]}{mark}"
                         f"{100 * r['p_share']:5.1f}/{100 * r['m_share']:4.1f}")
        print(f"{hl:>22} " + " ".join(f"{c:>15}" for c in cells))


def plot(path, results, hls, ncs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    fig, axs = plt.subplots(len(PAIRS), 2, figsize=(13, 6.2 * len(PAIRS)))
    for row, pair in zip(axs, PAIRS):
        rows = results[pair]
        for ax, side in zip(row, ("p", "m")):
            ax.set_xlim(-0.5, len(ncs) - 0.5)
            ax.set_ylim(-0.5, len(hls) - 0.5)
            for i, hl in enumerate(hls):
                for j, nc in enumerate(ncs):
                    r = next(r for r in rows if r["hl"] == hl and r["nc"] == nc)
                    kind = r[f"{side}_kind"]
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, color=COLOURS[kind]))
                    if r["p_kind"] != r["m_kind"]:
                        ax.add_patch(Rectangle((j - 0.45, i - 0.45), 0.9, 0.9, fill=False,
                                               edgecolor="red", linewidth=2))
                    text = f"{100 * r[f'{side}_share']:.1f}%"
                    if kind == "settles" and not np.isnan(r[f"{side}_settle"]):
                        text += f"\n{r[f'{side}_settle']:.0f} s"
                    ax.text(j, i, text, ha="center", va="center", fontsize=7)
            ax.set_xticks(range(len(ncs)), [str(n) for n in ncs], fontsize=8)
            ax.set_yticks(range(len(hls)), [str(h) for h in hls], fontsize=8)
            ax.set_xlabel("nice_const")
            ax.set_ylabel("run_avg_halflife (ticks)")
            who = "predicted (houston_stability)" if side == "p" else "simulated (classify_run)"
            ax.set_title(f"nice {pair[0]} vs {pair[1]}: {who}", fontsize=10)
    fig.legend([Patch(color=COLOURS[k]) for k in KINDS] +
               [Rectangle((0, 0), 1, 1, fill=False, edgecolor="red", linewidth=2)],
               list(KINDS) + ["kinds differ"], loc="lower center", ncol=5)
    fig.suptitle("houston-2003, two CPU hogs: the small task's share (and settling time) per "
                 "cell", fontsize=11)
    fig.tight_layout(rect=(0, 0.03, 1, 0.97))
    fig.savefig(path, dpi=80)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--size", type=int, default=8, help="points per axis")
    ap.add_argument("--plot", help="write the map to this PNG")
    ap.add_argument("--quick", action="store_true", help="a 3 x 3 grid")
    args = ap.parse_args(argv)
    size = 3 if args.quick else args.size
    hls, ncs = axes(size)
    results = {}
    t0 = time.perf_counter()
    for pair in PAIRS:
        # one point at a time, here: the machine this runs on is shared
        results[pair] = [point(pair, hl, nc) for hl in hls for nc in ncs]
        table(results[pair], hls, ncs, pair)
    wall = time.perf_counter() - t0

    print("\nagreement (prediction vs simulation)\n")
    print(f"{'pair':>10} {'kind':>10} {'shares':>10} {'settling x2':>12}")
    everything = []
    for pair in PAIRS:
        everything += results[pair]
        kind, n, share, settle, both = summary(results[pair])
        print(f"{str(pair):>10} {kind:>5}/{n:<4} {share:>5}/{both:<4} {settle:>6}/{both:<5}")
    kind, n, share, settle, both = summary(everything)
    print(f"{'all':>10} {kind:>5}/{n:<4} {share:>5}/{both:<4} {settle:>6}/{both:<5}"
          f"   ({100 * kind / n:.0f} %, {100 * share / both:.0f} %, {100 * settle / both:.0f} %)")
    settled = [r["m_settle"] for r in everything if r["p_kind"] == r["m_kind"] == "settles"]
    if settled:
        print(f"\nsettling times (simulated, where both settle): {min(settled):.1f} s to "
              f"{max(settled):.0f} s")
    t_p = sum(r["t_predict"] for r in everything)
    t_m = sum(r["t_simulate"] for r in everything)
    print(f"\nruntime: {wall:.1f} s for {n} points; the predictions {t_p:.1f} s "
          f"({1000 * t_p / n:.0f} ms a point), the simulations with their measurement {t_m:.1f} s "
          f"({1000 * t_m / n:.0f} ms a point)")
    if args.plot:
        plot(args.plot, results, hls, ncs)
        print(f"map: {args.plot}")


if __name__ == "__main__":
    main()
