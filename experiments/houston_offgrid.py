"""houston-2003, nice 0 vs +5: the prediction of
pysched.analysis.stability.houston_stability against the simulator
(pysched.analysis.measure.classify_run) on a seeded random grid inside the
documented range (experiments/houston_stability.py's geometric grid):
run_avg_halflife log-uniform in 500..30000, nice_const log-uniform in
1600..25600, integers.  Prints each point (kinds, the small task's share
predicted / simulated) and the agreement.

    python experiments/houston_offgrid.py [--seed 1] [--hl 8] [--nc 6] [--pair 0 5] [--quick]
"""
import argparse
import time

import numpy as np

import pysched as ps

HALF_LIFE = (500, 30000)
NICE_CONST = (1600, 25600)


def random_grid(seed, n_hl=8, n_nc=6):
    """n_hl half-lives x n_nc nice_consts, each drawn log-uniform in the
    documented range and rounded to an integer, from numpy's generator
    seeded with `seed`."""
    rng = np.random.default_rng(seed)
    hls = np.exp(rng.uniform(*np.log(HALF_LIFE), n_hl)).round().astype(int)
    ncs = np.exp(rng.uniform(*np.log(NICE_CONST), n_nc)).round().astype(int)
    return sorted(int(h) for h in hls), sorted(int(n) for n in ncs)


def compare(pair, hl, nc):
    params = {"run_avg_halflife": hl, "nice_const": nc}
    p = ps.analysis.stability.houston_stability(pair, params=params)
    m = ps.analysis.measure.classify_run(pair, params=params)
    small = int(np.argmin(p.fixed_point_shares))
    return {"hl": hl, "nc": nc, "p_kind": p.kind, "m_kind": m.kind,
            "p_share": float(p.shares[small]), "m_share": float(m.shares[small]),
            "level_share": float(p.level_shares[small]), "eq_share": float(p.fixed_point_shares[small])}


def agreement(rows, tol=0.03):
    kind = sum(r["p_kind"] == r["m_kind"] for r in rows)
    both = [r for r in rows if r["p_kind"] == r["m_kind"] == "settles"]
    share = sum(abs(r["p_share"] - r["m_share"]) <= tol for r in both)
    return kind, len(rows), share, len(both)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--seed", type=int, default=1, help="the generator's seed")
    ap.add_argument("--hl", type=int, default=8, help="half-lives drawn")
    ap.add_argument("--nc", type=int, default=6, help="nice_consts drawn")
    ap.add_argument("--pair", type=int, nargs=2, default=(0, 5), help="the two nice values")
    ap.add_argument("--quick", action="store_true", help="a 3 x 3 grid")
    args = ap.parse_args(argv)
    hls, ncs = random_grid(args.seed, 3 if args.quick else args.hl, 3 if args.quick else args.nc)
    t0 = time.perf_counter()
    rows = []
    print(f"{'halflife':>9} {'nice_const':>10} {'kinds':>17} {'pred':>6} {'sim':>6} {'diff':>7}")
    for hl in hls:
        for nc in ncs:
            r = compare(tuple(args.pair), hl, nc)
            rows.append(r)
            mark = "" if r["p_kind"] == r["m_kind"] else " *kind"
            if r["p_kind"] == r["m_kind"] == "settles" and abs(r["p_share"] - r["m_share"]) > 0.03:
                mark += " *share"
            print(f"{hl:>9} {nc:>10} {r['p_kind']:>8}/{r['m_kind']:<8} {r['p_share']:6.3f} "
                  f"{r['m_share']:6.3f} {r['p_share'] - r['m_share']:+7.3f}{mark}")
    kind, n, share, both = agreement(rows)
    errs = [abs(r["p_share"] - r["m_share"]) for r in rows if r["p_kind"] == r["m_kind"] == "settles"]
    print(f"\nseed {args.seed}: kind {kind}/{n} ({100 * kind / n:.1f} %), shares within 0.03 "
          f"{share}/{both} ({100 * share / max(both, 1):.1f} %), worst {max(errs, default=0):.3f}; "
          f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
