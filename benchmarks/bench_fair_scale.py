"""The fair schedulers at 100,000 tasks: nanoseconds per scheduling event
of CFS and EEVDF beside linux-2.5.65 on the same workload.

    python benchmarks/bench_fair_scale.py                 # 100,000 tasks, 8 CPUs
    python benchmarks/bench_fair_scale.py --tasks 20000 --seconds 1

The workload: N tasks on 8 CPUs, one in 10 a CPU hog,
the others sleepers that run 0.1 ms and sleep 1 s, for ever (90,000
wakeups a second; with the hogs, every CPU is busy); HZ=1000,
counters only, latency records off. Each preset runs in a fresh child
process (`python -c`): the machine is built, run one simulated second
to settle (every sleeper has woken once and the balancer has spread the
hogs), then run `--seconds` more, timed. An event is a context switch
or a wakeup (the stats' nvcsw + nivcsw + nr_wakeups over the timed
part); the figure is the timed run's wall time divided by them, the
least of `--repeat` children (the machine is shared: the least is the
run least disturbed; the events are the same in each, the run being
deterministic).

The fair policies' load balancer pulls from the busiest runqueue's
rq->cfs_tasks (balance_fair.c); its cost per balance is what this
measures at scale. Nothing is asserted; the figures depend on the
machine (docs/internals/performance.md says on which they were taken).
"""
import argparse
import json
import platform
import subprocess
import sys

from pysched.realkernel.kernel_info import cpu_model

PRESETS = ("linux-2.5.65", "linux-6.5-cfs", "linux-6.6-eevdf", "linux-6.12-eevdf")

CHILD = r"""
import json, sys, time
import pysched as ps

preset, n, cpus, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
sim = ps.Simulator(preset, cpus=cpus, latencies=False, max_tasks=n)
hog = ps.programs.cpu_hog()
sleeper = ps.Program().loop().run(us=100).sleep(s=1).end()
for i in range(n):
    sim.spawn(hog if i % 10 == 0 else sleeper, name=f"t{i}", cpu=i % cpus)

def events():
    st = sim.stats()
    return int(st["nvcsw"].sum() + st["nivcsw"].sum() + st["nr_wakeups"].sum())

sim.run(1.0)
before = events()
t0 = time.perf_counter()
sim.run(seconds)
wall = time.perf_counter() - t0
print(json.dumps({"wall_s": wall, "events": events() - before}))
"""


def child(preset, n, cpus, seconds):
    r = subprocess.run([sys.executable, "-c", CHILD, preset, str(n), str(cpus), str(seconds)],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{preset} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100_000)
    ap.add_argument("--cpus", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=2.0, help="simulated seconds timed")
    ap.add_argument("--presets", nargs="+", default=list(PRESETS))
    ap.add_argument("--repeat", type=int, default=3, help="children per preset; the least time counts")
    a = ap.parse_args()
    if a.repeat < 1:
        ap.error(f"--repeat {a.repeat}: at least 1")
    if a.tasks < a.cpus:
        ap.error(f"--tasks {a.tasks}: at least one task per CPU ({a.cpus})")
    print(f"CPU: {cpu_model() or 'unknown'}; Python {platform.python_version()}")
    print(f"{a.tasks:,} tasks (1 in 10 a hog) on {a.cpus} CPUs, {a.seconds:g} simulated s timed")
    base = None
    for preset in a.presets:
        runs = [child(preset, a.tasks, a.cpus, a.seconds) for _ in range(a.repeat)]
        r = min(runs, key=lambda x: x["wall_s"])
        ns = r["wall_s"] / r["events"] * 1e9
        if preset == "linux-2.5.65":
            base = ns
        ratio = f"  {ns / base:5.2f}x linux-2.5.65" if base and preset != "linux-2.5.65" else ""
        print(f"{preset:18} {r['events']:>9,} events in {r['wall_s']:7.3f} s: {ns:7.0f} ns/event{ratio}")


if __name__ == "__main__":
    main()
