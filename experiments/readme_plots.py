"""The figures of the docs' Plots page (docs/guide/plots.md), written to
docs/img/:

- timeline.png: who ran when on two CPUs under linux-2.5.65 -- four CPU
  hogs, an X-like server and a client that mostly sleeps -- over 0.3 s;
- latency_cdf.png: the wakeup-to-run latency of the X server's clients
  beside make -j4 (experiments/article_waker_bonus.py's scene, 120 s, seed
  0) under linux-2.5.64, linux-2.5.65 and 2.5.65 without the back-boost.
  About 90 % of those wakeups run at once (latency 0, left of the log
  axis), so the y axis starts at 0.85, where the tails differ.

    python experiments/readme_plots.py [--out docs/img]
"""
import argparse
import os

import matplotlib

import pysched as ps
from article_waker_bonus import scene

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

DPI = 80  # keeps each PNG well under 100 KB
KERNELS = (("linux-2.5.64", "linux-2.5.64", {}), ("linux-2.5.65", "linux-2.5.65", {}),
           ("2.5.65 - backboost", "linux-2.5.65", {"waker_bonus": 0}))


def timeline(path):
    sim = ps.Simulator("linux-2.5.65", cpus=2, seed=7, record="events")
    for i in range(4):
        sim.spawn(ps.programs.cpu_hog(), name=f"hog{i}")
    sim.spawn(ps.programs.x_server(), name="X")
    sim.spawn(ps.programs.x_client(think_ms=ps.exponential(20)), name="xterm")
    sim.run(seconds=10.3)
    ax = ps.plot.timeline(sim, start_s=10, end_s=10.3)
    ax.set_title("linux-2.5.65, 2 CPUs: four hogs, X and an xterm")
    ax.figure.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(ax.figure)


def latency_cdf(path):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for k, (label, preset, params) in enumerate(KERNELS):
        sim, make, x, clients = scene(preset, params, 0, 120)
        ps.plot.latency_cdf(sim, clients, combined=True, log_x=True, label=label,
                            color=f"C{k}", ax=ax)
    ax.set_ylim(0.85, 1.005)
    ax.set_title("X clients beside make -j4 (120 s): wakeup-to-run latency\n"
                 "(the ~90 % of wakeups with latency 0 lie left of the axis)", fontsize="medium")
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.normpath(
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "img")),
                    help="the folder to write the PNGs to (default: docs/img)")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for name, draw in (("timeline.png", timeline), ("latency_cdf.png", latency_cdf)):
        path = os.path.join(args.out, name)
        draw(path)
        print(f"{path}: {os.path.getsize(path) // 1024} KB")


if __name__ == "__main__":
    main()
