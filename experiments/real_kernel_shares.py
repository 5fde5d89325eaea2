"""Nice'd CPU hogs' shares and a sleeper's latency: this machine's kernel beside the simulator.

For each set of nice values (0/+1, 0/+5, 0/+10, -5/+5, 0/+19 and
-5/0/+5) one CPU hog per value and a sleeper (sleeps 10 ms, computes 1
ms, nice 0) run pinned to one CPU (pysched.realkernel.measure): each
hog's share of what the hogs got together, from /proc/<pid>/schedstat,
and the sleeper's wakeup latencies, from `perf sched record`.  The same
workload then runs in the simulator (pysched.realkernel.simulate) at the
kernel's HZ, with its base slice where the preset has one, for the same
time.  Printed: the shares the weight table gives, the measured and the
simulated ones and their difference in percentage points, and the
latencies' mean and max.

    python experiments/real_kernel_shares.py [--seconds 5] [--quick] [--from-json]
        [--preset NAME] [--markdown] [--plot out.png]

A full run saves its measurements to experiments/data/real_kernel_shares.json;
--from-json reads them back and only simulates (the table of
docs/experiments/real-kernel.md is `--from-json --markdown`).  --quick measures 0/+5 and -5/0/+5 for 0.5 s
each and saves nothing; where the machine does not allow measuring (not
root, no perf ...) it says why and shows the saved measurements instead.  The
simulator's preset is the newest linux-X.Y-eevdf (or -cfs) not newer than
the measured kernel, else linux-2.5.65.
"""
import argparse
import json
import pathlib
import re
import time

import numpy as np

import pysched as ps
from pysched import realkernel

SETS = [(0, 1), (0, 5), (0, 10), (-5, 5), (0, 19), (-5, 0, 5)]
QUICK_SETS = [(0, 5), (-5, 0, 5)]
DEFAULT_JSON = pathlib.Path(__file__).resolve().parent / "data" / "real_kernel_shares.json"
WITHIN_POINTS = 3.0

def weight_shares(nices):
    """CPU-bound tasks on one CPU under a fair scheduler: w_i / sum w."""
    # the kernel's sched_prio_to_weight[], as the fair presets carry it
    w = np.array([ps.formula("linux-6.6-eevdf", "weight", n) for n in nices], dtype=float)
    return w / w.sum()


def label(nices):
    return "/".join(f"{n:+d}" if n else "0" for n in nices)


# ---------------------------------------------------------------- measuring and saving

def measure_all(sets, seconds, warmup_s, cpu):
    info = realkernel.machine(cpu)
    measured = []
    for nices in sets:
        m = realkernel.measure(nices, seconds, warmup_s=warmup_s, cpu=cpu, machine_info=info)
        measured.append({"nices": list(nices), "cpu": m["cpu"], "window_ns": m["window_ns"],
                     "cpu_ns": m["cpu_ns"].tolist(), "busy": float(m["busy"]),
                     "sleeper_cpu_ns": m["sleeper_cpu_ns"], "autogroups": m["autogroups"],
                     "latency_ns": m["latencies"]["latency_ns"].tolist()})
    return {"measured": time.strftime("%Y-%m-%d %H:%M %Z"), "machine": info,
            "workload": {k: v for k, v in m["workload"].items() if k != "nices"},
            "cpu_time_source": m["cpu_time_source"], "latency_source": m["latency_source"],
            "sets": measured}


def dumps(data):
    """JSON with each list of numbers on one line."""
    text = json.dumps(data, indent=1)
    return re.sub(r"\[\s*([-\d.e,\s]+?)\s*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]",
                  text) + "\n"


def measurement(data, one):
    """One set of the saved data in the form realkernel.simulate takes."""
    return {"machine": data["machine"], "workload": dict(data["workload"], nices=one["nices"])}


# ---------------------------------------------------------------- comparing

def compare(data, preset):
    rows = []
    for one in data["sets"]:
        sim = realkernel.simulate(measurement(data, one), preset)
        measured = np.array(one["cpu_ns"], dtype=float)
        measured /= measured.sum()
        lat = np.array(one["latency_ns"], dtype=float) / 1e6
        slat = sim["latencies"]["latency_ns"] / 1e6
        rows.append({"nices": one["nices"], "weights": weight_shares(one["nices"]),
                     "busy": one["busy"],
                     "measured": measured, "simulated": sim["shares"],
                     "lat": lat, "sim_lat": slat, "sim": sim})
    return rows


def within(row):
    return bool(np.all(np.abs(row["simulated"] - row["measured"]) * 100 <= WITHIN_POINTS))


def pct(shares):
    return " / ".join(f"{100 * s:.1f}" for s in shares)


def diff(row):
    return " / ".join(f"{100 * d:+.1f}" for d in row["simulated"] - row["measured"])


def lat_cell(lat):
    return f"{lat.mean():.2f} / {lat.max():.2f}" if len(lat) else "-"


def header(data, rows):
    m, w = data["machine"], data["workload"]
    sl = w["sleeper"]
    t = m["tunables"]
    slice_ = f"base_slice {t['base_slice_ns'] / 1e6:.3f} ms" if "base_slice_ns" in t else \
        ", ".join(f"{k} {v / 1e6:.3f} ms" for k, v in t.items() if k.endswith("_ns"))
    sim = rows[0]["sim"]
    params = ", ".join(f"{k}={v}" for k, v in sim["params"].items()) or "its defaults"
    return [
        f"Real kernel: Linux {m['release']}, {m['ncpus']} CPUs ({m['cpu_model']}), "
        f"HZ={m['hz']} ({m['hz_source']}), {slice_} ({t['source']}; {t['scaling']} scaling), "
        f"preempt={m['preempt']}, autogroup {'on' if m['autogroup'] else 'off'}; "
        f"measured {data['measured']} on CPU {data['sets'][0]['cpu']}, "
        f"{w['seconds']:g} s per set after {w['warmup_s']:g} s",
        f"Simulated: {sim['preset']}, 1 CPU, HZ={m['hz']}, {params}"
        + "".join(f"; {n}" for n in sim["notes"]),
        f"Sleeper: sleeps {sl['sleep_ms']:g} ms, computes {sl['work_ms']:g} ms, "
        f"nice {sl['nice']}; latency from sched_waking to sched_switch (real), wakeup to run "
        f"(simulated)",
    ]


def table(data, rows):
    lines = header(data, rows) + [""]
    lines.append(f"{'nice':<10} {'weights %':<20} {'measured %':<20} {'ours %':<7} "
                 f"{'simulated %':<20} {'sim - measured':<22} {'latency ms (n, mean / max)':<30} "
                 f"simulated")
    for r in rows:
        lines.append(f"{label(r['nices']):<10} {pct(r['weights']):<20} {pct(r['measured']):<20} "
                     f"{100 * r['busy']:<7.1f} "
                     f"{pct(r['simulated']):<20} {diff(r):<22} "
                     f"{len(r['lat']):>4}, {lat_cell(r['lat']):<24} "
                     f"{len(r['sim_lat']):>4}, {lat_cell(r['sim_lat'])}")
    lines.append(f"\nsets whose simulated shares are within {WITHIN_POINTS:g} points of the "
                 f"measured: {sum(map(within, rows))} of {len(rows)} ({rows[0]['sim']['preset']})")
    return "\n".join(lines)


def markdown(data, rows):
    sim_preset = rows[0]["sim"]["preset"]
    lines = ["- " + line for line in header(data, rows)] + [""]
    lines.append(f"| nice | weights (%) | measured (%) | CPU ours (%) | "
                 f"simulated, {sim_preset} (%) | simulated - measured (points) | sleeper "
                 f"latency, measured: wakeups, mean / max (ms) | simulated |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        lines.append(f"| {label(r['nices'])} | {pct(r['weights'])} | {pct(r['measured'])} | "
                     f"{100 * r['busy']:.1f} | "
                     f"{pct(r['simulated'])} | {diff(r)} | {len(r['lat'])}, "
                     f"{lat_cell(r['lat'])} | {len(r['sim_lat'])}, {lat_cell(r['sim_lat'])} |")
    lines.append("")
    lines.append(f"Sets within {WITHIN_POINTS:g} points: {sum(map(within, rows))} of {len(rows)}.")
    return "\n".join(lines)


def plot(path, rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5), layout="constrained")
    x = 0
    ticks, names = [], []
    for r in rows:
        first = x
        for k, n in enumerate(r["nices"]):
            for dx, key, color in ((-0.25, "weights", "0.7"), (0, "measured", "C0"),
                                   (0.25, "simulated", "C1")):
                left.bar(x + dx, 100 * r[key][k], 0.25, color=color,
                         label=key if x == 0 else None)
            ticks.append(x)
            names.append(f"{n:+d}" if n else "0")
            x += 1
        left.annotate(label(r["nices"]), ((first + x - 1) / 2, -0.1), ha="center",
                      xycoords=("data", "axes fraction"), fontsize="small", weight="bold")
        x += 0.5
    left.set_xticks(ticks, names, fontsize="small")
    left.set_ylabel("share of the hogs' CPU (%)")
    left.set_title(f"shares: weight table, real kernel, {rows[0]['sim']['preset']}")
    left.legend()
    for r, color in zip(rows, plt.cm.tab10.colors):
        for lat, style, who in ((r["lat"], "-", "real"), (r["sim_lat"], "--", "sim")):
            if len(lat):
                v = np.sort(lat)
                right.step(v, np.arange(1, len(v) + 1) / len(v), style, color=color,
                           where="post", label=f"{label(r['nices'])} {who}")
    # from tens of microseconds (a wakeup that preempts) to a few ticks
    right.set_xscale("symlog", linthresh=0.01)
    right.set_xlabel("sleeper wakeup latency (ms)")
    right.set_ylabel("fraction of wakeups")
    right.set_title("latency CDFs: real (solid) and simulated (dashed)")
    right.legend(fontsize="x-small", ncol=2)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--seconds", type=float, default=5.0, help="measured seconds per set")
    ap.add_argument("--warmup", type=float, default=0.5, help="seconds before each window")
    ap.add_argument("--cpu", type=int, default=None,
                    help="the CPU to measure on; None: the last this process may use")
    ap.add_argument("--quick", action="store_true",
                    help="0/+5 and -5/0/+5 only, 0.5 s each after 0.2 s, saved nowhere (the "
                         "saved data if the machine does not allow measuring)")
    ap.add_argument("--from-json", action="store_true",
                    help="no measuring: simulate the measurements saved in --json")
    ap.add_argument("--json", type=pathlib.Path, default=DEFAULT_JSON,
                    help="where a full run saves its measurements and --from-json reads them")
    ap.add_argument("--preset", default=None,
                    help="the simulator's preset; None: realkernel.default_preset of the "
                         "measured kernel")
    ap.add_argument("--markdown", action="store_true", help="print the table as the docs have it")
    ap.add_argument("--plot", help="write the shares and the latency CDFs to this PNG")
    args = ap.parse_args(argv)

    data = None
    if not args.from_json:
        why = realkernel.unavailable([n for s in SETS for n in s], latency=True, cpu=args.cpu)
        if why is None:
            if args.quick:
                data = measure_all(QUICK_SETS, 0.5, 0.2, args.cpu)
            else:
                data = measure_all(SETS, args.seconds, args.warmup, args.cpu)
            if not args.quick:
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(dumps(data))
                print(f"saved: {args.json}")
        elif args.quick:
            print(f"cannot measure here ({why}): the saved measurements of {args.json}\n")
        else:
            ap.exit(1, f"cannot measure here: {why}\n")
    if data is None:
        data = json.loads(args.json.read_text())
    rows = compare(data, args.preset)
    print(markdown(data, rows) if args.markdown else table(data, rows))
    if args.plot:
        plot(args.plot, rows)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
