"""The golden-output catalogue: workloads over every preset and 1-64 CPUs
whose outputs (stats, events, latencies, series, periodic records,
counters) are hashed, so that an optimisation of the engine can show it
changes nothing (tests/core/test_golden.py compares against the committed
tests/data/golden.json).

After a change that is meant to change outputs, regenerate and commit the
file, saying why in the commit:

    python tests/helpers/golden.py --update
"""
import hashlib
import json
import sys

import numpy as np

import pysched as ps
from pysched import Program, programs

from repo_paths import DATA

PATH = DATA / "golden.json"
PRESETS = ("linux-2.4.20", "linux-2.5.64", "linux-2.5.64-bk4", "linux-2.5.65", "houston-2003",
           "linux-6.5-cfs", "linux-6.6-eevdf", "linux-6.12-eevdf")


def hogs(sim):
    for n in (0, 5, -5):
        sim.spawn(programs.cpu_hog(), nice=n)


def sleepers(sim):
    hogs(sim)
    for k, (r, s) in enumerate([(1, 9), (3, 30), (20, 20), (0.3, 2)]):
        sim.spawn(programs.interactive(r, s), name=f"i{k}")


def channels(sim):
    sim.spawn(programs.x_server(), name="X")
    for k in range(4):
        sim.spawn(programs.x_client(), name=f"client{k}")
    sim.spawn(programs.cpu_hog())


def sources(sim):
    sim.spawn(Program().loop().wait("irq").run(us=300).end(), name="driver")
    sim.spawn(Program().loop().wait("net").run(us=800).end(), name="net")
    sim.source("irq", every_us=7300)
    sim.source("net", poisson_ms=11)
    sim.spawn(programs.cpu_hog())


def fork_exit(sim):
    sim.spawn(programs.kernel_compile(jobs=3), name="make")
    sim.spawn(programs.interactive(2, 40))


def realtime(sim):
    hogs(sim)
    sim.spawn(Program().loop().run(ms=3).sleep(ms=17).end(), policy="fifo", rt_priority=50)
    sim.spawn(Program().loop().run(ms=30).sleep(ms=70).end(), policy="rr", rt_priority=10)


def affinity(sim):
    for k in range(2 * sim.cpus + 1):
        sim.spawn(programs.cpu_hog(), cpus_allowed=[k % sim.cpus])
    sim.spawn(programs.interactive(2, 8), name="mover")


def timed(sim):
    sim.spawn(programs.audio(), name="audio")
    sim.spawn(programs.video(), name="video")
    sim.spawn(programs.gaming(), name="game")
    sim.spawn(Program().loop().run(ms=4).timer(10_000, relative=True).end(), name="timer")


WORKLOADS = {"hogs": hogs, "sleepers": sleepers, "channels": channels, "sources": sources,
             "fork_exit": fork_exit, "realtime": realtime, "affinity": affinity, "timed": timed}
CPUS = (1, 2, 8)


def cases():
    """(name, preset, cpus, workload, record) for every case."""
    for preset in PRESETS:
        for w in WORKLOADS:
            for cpus in CPUS:
                record = "series" if w in ("sleepers", "timed") else "events"
                yield f"{preset}/{w}/{cpus}", preset, cpus, w, record
        yield f"{preset}/hogs/64", preset, 64, "hogs64", "counters"


def _digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:24]


def outputs(preset, cpus, workload, record, counts=None, **options):
    """The hashes of one case's outputs after 10 simulated seconds; options
    are more Simulator arguments (reference=True ...), and `counts`, a dict,
    is given how often each fast path was taken."""
    headline = ps.policy_info(preset)["headline"]
    kw = {"series_fields": ["prio", "cpu_ns"] + list(headline), "series_every": 7} \
        if record == "series" else {}
    sim = ps.Simulator(preset, cpus=cpus, seed=11, record=record, **kw, **options)
    if workload == "hogs64":
        for _ in range(10):
            sim.spawn(programs.cpu_hog())
    else:
        WORKLOADS[workload](sim)
    sim.run(seconds=5)
    if workload == "affinity":
        sim.set_affinity("mover", [sim.cpus - 1])
    sim.run(seconds=5)
    out = {"stats": _digest([sim.stats()]), "latencies": _digest([sim.latencies()]),
           "periodic": _digest([sim.periodic()]),
           "counters": _digest([np.array(sorted(sim.counters().items()), dtype=object).astype(str)])}
    if record != "counters":
        out["events"] = _digest([sim.events()])
    if record == "series":
        out["series"] = _digest([sim.series_times()] + [sim.series(f) for f in kw["series_fields"]])
    if counts is not None:
        counts.update(sim._core.fast_path_counts())
    return out


def compute():
    return {name: outputs(preset, cpus, w, record) for name, preset, cpus, w, record in cases()}


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit(__doc__)
    PATH.parent.mkdir(exist_ok=True)
    PATH.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {PATH}")
