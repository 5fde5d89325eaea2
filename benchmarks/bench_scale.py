"""Large task counts: building a machine of many tasks, reading its table,
and running it.

    python benchmarks/bench_scale.py              # (s) and (t) at 100,000 tasks
    python benchmarks/bench_scale.py --tasks 40000
    python benchmarks/bench_scale.py --million    # also (m): 1,000,000 tasks, 64 CPUs

Cases (preset linux-2.5.65, HZ=1000, counters only, latency records off):

  (s) spawn: N tasks (hogs and sleepers, one in 10 a hog) on 8 CPUs,
      each placed by spawn itself (no cpu=: the allowed CPU with the
      fewest runnable tasks); the time of the N spawn() calls, and the
      same with cpu= given (round robin), which places nothing
  (t) stats() of (s)'s machine after 10 simulated ms: the time of one
      call, and what it adds to the process's peak RSS (ru_maxrss, in a
      child process of its own, so that nothing earlier sets the peak)
      beside the size of its result
  (e) exits: N/2 tasks exit and free their slots beside N/2 sleepers,
      at once, then 8 tasks spawned into those slots fork a child every ms, each
      of which runs 1 ms and exits: run 1 simulated second, the time per
      exit (each looks its parent up by pid)
  (m) with --million: 1,000,000 tasks on 64 CPUs, one in 10 a hog,
      the others daemons that sleep uniform(1, 20) s, then run 0.1 ms,
      for ever (so most wake once in the run), built without cpu= and
      run 10 simulated seconds: the time of each, and the child's peak
      RSS

Each figure is one run in a fresh child process (`python -c`); nothing
is asserted (tests/core/test_spawn_placement.py checks the results).
"""
import argparse
import json
import platform
import subprocess
import sys

from pysched.realkernel.kernel_info import cpu_model

CHILD = r"""
import json, resource, sys, time
import pysched as ps

def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def build(n, cpus, place, max_tasks, daemons=False):
    sim = ps.Simulator("linux-2.5.65", cpus=cpus, latencies=False, max_tasks=max_tasks)
    hog = ps.programs.cpu_hog()
    if daemons:
        sleeper = ps.Program().loop().sleep(s=ps.uniform(1, 20)).run(us=100).end()
    else:
        sleeper = ps.Program().loop().run(ms=1).sleep(s=1).end()
    t0 = time.perf_counter()
    for i in range(n):
        sim.spawn(hog if i % 10 == 0 else sleeper, name=f"t{i}",
                  **({"cpu": i % cpus} if place else {}))
    return sim, time.perf_counter() - t0

case, n, cpus = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = {}
if case == "spawn":
    sim, out["spawn_s"] = build(n, cpus, False, n)
    sim2, out["spawn_cpu_s"] = build(n, cpus, True, n)
elif case == "stats":
    sim, _ = build(n, cpus, True, n)
    sim.run(0.01)
    before = rss_mb()
    t0 = time.perf_counter()
    st = sim.stats()
    out["stats_s"] = time.perf_counter() - t0
    out["rss_before_mb"] = before
    out["rss_added_mb"] = rss_mb() - before
    out["result_mb"] = st.nbytes / 2**20
    t0 = time.perf_counter()
    st = sim.stats()
    out["stats_again_s"] = time.perf_counter() - t0
elif case == "exits":
    sim = ps.Simulator("linux-2.5.65", cpus=cpus, latencies=False, max_tasks=n + 100)
    for i in range(n):
        sim.spawn(ps.Program().run(us=10).exit() if i % 2 else ps.Program().sleep(s=1000),
                  name=f"t{i}")
    sim.run(1)
    cc = ps.Program().run(ms=1).exit()
    for i in range(8):
        sim.spawn(ps.Program().loop().fork(cc).sleep(ms=1).end(), name=f"make{i}")
    t0 = time.perf_counter()
    sim.run(1)
    out["run_s"] = time.perf_counter() - t0
    out["exits"] = sim.counters()["exits"] - n // 2
elif case == "million":
    sim, out["spawn_s"] = build(n, cpus, False, n, daemons=True)
    out["rss_built_mb"] = rss_mb()
    t0 = time.perf_counter()
    sim.run(10)
    out["run_s"] = time.perf_counter() - t0
    st = sim.stats()
    out["switches"] = int(st["nr_switches"].sum())
    out["woken"] = int((st["nr_wakeups"] > 0).sum())
    out["rss_peak_mb"] = rss_mb()
print(json.dumps(out))
"""


def child(case, n, cpus):
    r = subprocess.run([sys.executable, "-c", CHILD, case, str(n), str(cpus)],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"case {case} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100_000)
    ap.add_argument("--million", action="store_true", help="also case (m)")
    a = ap.parse_args()
    print(f"CPU: {cpu_model() or 'unknown'}; Python {platform.python_version()}")
    s = child("spawn", a.tasks, 8)
    print(f"(s) {a.tasks:,} spawns on 8 CPUs: {s['spawn_s']:.3f} s without cpu= "
          f"({s['spawn_s'] / a.tasks * 1e6:.2f} us each), {s['spawn_cpu_s']:.3f} s with cpu=")
    t = child("stats", a.tasks, 8)
    print(f"(t) stats() at {a.tasks:,} tasks: {t['stats_s'] * 1e3:.1f} ms "
          f"(again {t['stats_again_s'] * 1e3:.1f} ms); peak RSS +{t['rss_added_mb']:.1f} MB "
          f"for a result of {t['result_mb']:.1f} MB (RSS before: {t['rss_before_mb']:.0f} MB)")
    e = child("exits", a.tasks, 8)
    print(f"(e) {e['exits']:,} exits of children forked by tasks in reused slots, beside "
          f"{a.tasks // 2:,} sleepers: {e['run_s'] / e['exits'] * 1e6:.2f} us each")
    if a.million:
        m = child("million", 1_000_000, 64)
        print(f"(m) 1,000,000 tasks on 64 CPUs: built in {m['spawn_s']:.1f} s "
              f"(RSS {m['rss_built_mb']:.0f} MB), 10 simulated s in {m['run_s']:.1f} s "
              f"({m['switches']:,} switches, {m['woken']:,} tasks woken); "
              f"peak RSS {m['rss_peak_mb']:.0f} MB")


if __name__ == "__main__":
    main()
