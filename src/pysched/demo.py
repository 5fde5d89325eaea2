"""The main demonstration: an editor-like interactive task and an X-like
server with its client beside four CPU hogs, on every preset."""
import re

from . import programs
from .policy import registry
from .program import Program
from .simulator import Simulator


def build(preset, seed=0):
    """The demo workload on `preset`; returns (sim, {pid: role})."""
    sim = Simulator(preset, seed=seed)
    roles = {}
    for k in range(4):
        roles[sim.spawn(programs.cpu_hog(), name=f"hog{k}")] = "CPU hog"
    roles[sim.spawn(programs.interactive(2, 100), name="editor")] = "2 ms work per 100 ms"
    # mouse motion every 10 ms: X renders 4 ms and wakes the client, which works 1 ms
    roles[sim.spawn(Program().loop().wait("mouse").run(ms=4).post("client").end(), name="X")] = (
        "server: 4 ms per mouse event")
    roles[sim.spawn(Program().loop().wait("client").run(ms=1).end(), name="xterm")] = (
        "client of X: 1 ms per event")
    sim.source("mouse", every_ms=10)
    return sim, roles


def report(sim, roles, seconds):
    """Rows of (name, role, cpu share %, mean latency ms, max latency ms, prio,
    then the policy's headline fields)."""
    st = sim.stats()
    rows = []
    for r in st:
        pid = int(r["pid"])
        lat = sim.latencies(pid)
        mean = f"{lat.mean() / 1e6:11.2f}" if len(lat) else f"{'-':>11}"
        worst = f"{lat.max() / 1e6:10.1f}" if len(lat) else f"{'-':>10}"
        rows.append((r["name"], roles[pid], 100.0 * r["cpu_ns"] / (seconds * 1e9), mean, worst,
                     int(r["prio"]), *[int(r[f]) for f in sim.headline]))
    return rows


SCENE = ("The scene: four CPU hogs on one CPU beside an editor (2 ms of work every 100 ms) and an "
         "X server that renders 4 ms per mouse event (one every 10 ms) and wakes its client, the "
         "xterm. The 2003 question: do the interactive tasks still get the CPU promptly under "
         "load? Watch their wakeup latency and their prio against the hogs'.")


def _in_ms(sim):
    """The headline fields the policy counts in ns (vruntime, deadline ...),
    shown in ms."""
    docs = dict(registry.policy_info(sim.preset)["task_fields"])
    return {f for f in sim.headline if re.search(r"\bns\b", docs.get(f, ""))}


def notice(sim, roles, seconds):
    """One line: what this table says about the interactive tasks."""
    st = sim.stats()
    by_name = {r["name"]: r for r in st}
    hog_prio = int(by_name["hog0"]["prio"])
    parts = []
    for name in ("editor", "xterm"):
        lat = sim.latencies(int(by_name[name]["pid"]))
        if len(lat):
            parts.append(f"{name} waited {lat.mean() / 1e6:.1f} ms on average (worst "
                         f"{lat.max() / 1e6:.0f} ms) to run after a wakeup")
    x = by_name["X"]
    parts.append(f"X got {100 * x['cpu_ns'] / (seconds * 1e9):.1f} % of the CPU at prio "
                 f"{int(x['prio'])} (hogs {hog_prio})")
    return "To notice: " + "; ".join(parts) + "."


def main(presets=None, seconds=20.0, seed=0):
    print(SCENE)
    for preset in presets or registry.presets():
        sim, roles = build(preset, seed)
        sim.run(seconds=seconds)
        ms = _in_ms(sim)
        print(f"\n{preset}: {seconds:g} s simulated, HZ={sim.hz}")
        print(f"{'task':8} {'role':30} {'CPU %':>6} {'lat mean ms':>11} {'lat max ms':>10} "
              f"{'prio':>4}" + "".join(f" {f + (' ms' if f in ms else ''):>11}"
                                      for f in sim.headline))
        # "-": the task never waited for a wakeup (it never blocked)
        for name, role, share, mean, worst, prio, *head in report(sim, roles, seconds):
            print(f"{name:8} {role:30} {share:6.1f} {mean} {worst} {prio:4d}" +
                  "".join(f" {v / 1e6:11.1f}" if f in ms else f" {v:11d}"
                          for f, v in zip(sim.headline, head)))
        print(notice(sim, roles, seconds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
