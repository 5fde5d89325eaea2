"""Wall time of pysched beside schedsim, a C++ peer, on one periodic task set.

    python benchmarks/bench_schedsim.py --schedsim-src DIR  # build DIR, 60 simulated s, best of 3
    python benchmarks/bench_schedsim.py --schedsim-bin PATH # an already built simulator
    python benchmarks/bench_schedsim.py                     # clone github.com/fillien/schedsim
    python benchmarks/bench_schedsim.py --quick             # 5 simulated s, one run of each

schedsim (github.com/fillien/schedsim) simulates real-time schedulers on
multiprocessor platforms in C++: its `schedsim` program reads a platform
and a scenario in JSON and writes a trace.  It is not on PyPI and never a
pysched dependency: the script builds it from a source tree with cmake and
a C++ compiler (g++ by default; the project's CMakeLists picks clang) into
--cache, only its `schedsim` target, Release, without its tests and Python
bindings, and with the copy of RapidJSON that the tree keeps in
external/json (its CMakeLists would fetch RapidJSON from GitHub otherwise).
With --schedsim-src or --schedsim-bin the script uses that and nothing
else; with neither it clones the repository into --cache first.  Where no
simulator can be had it says why and runs pysched alone.

The task set is bench_simso.py's, imported from it: 20 periodic tasks for 4
CPUs, U = 2.8 by UUniFast-discard, periods log-uniform in 10-98 ms rounded
to whole ms, WCET = U_i x period rounded to the us, deadlines equal to
periods, every task released at 0, drawn from random.Random(--seed).

Cases (each run builds its model and simulates it; both parts are timed):

  pysched FIFO    bench_simso.py's: linux-2.5.65, HZ=1000, 4 CPUs, counters
                  only; each task loops run(us=WCET) then an absolute
                  timer(period), SCHED_FIFO with rate-monotonic rt_priority
  pysched NORMAL  the same tasks as SCHED_NORMAL, nice 0
  schedsim EDF    `schedsim -s edf --format null -d T`: the only scheduler
                  its simulator offers, global EDF over the 4 processors
                  (one ready queue, the 4 earliest deadlines run), each
                  task behind a constant-bandwidth server of budget WCET
                  and period its period (every job lasting its WCET, the
                  servers' deadlines are the jobs' own: plain global EDF),
                  admission U <= 4; reclamation, DVFS and DPM off.
                  Platform: one cluster of 4 processors of performance 1.0
                  at one frequency, so a job of duration WCET runs WCET.
                  Scenario: the tasks with their jobs listed (schedsim
                  releases only the jobs a scenario lists), job k of a task
                  arriving at k x period for every k x period < T, each of
                  duration WCET.  The trace is discarded (--format null);
                  the time includes starting the program and reading its
                  JSON files (2.6 MB at 60 s)

Global EDF is the closest to bench_simso.py's global RM: both run the 4
highest-priority jobs from one queue and preempt the lowest-priority
running one; EDF orders jobs by absolute deadline where RM orders tasks by
period (on a multiprocessor neither meets every deadline the other does;
both meet all of them on this set).

The runs take turns (pysched FIFO, pysched NORMAL, schedsim, then again),
so that a spell of load from elsewhere falls on all of them; each one's
best wall time is kept (time.perf_counter), and its best CPU time:
time.process_time for pysched, for schedsim the growth of user + system
time in resource.getrusage(RUSAGE_CHILDREN) over its run (a child's times
count there once it has been waited for).

What differs between the two models: schedsim is event-driven, with time in
integer ns, no tick and (without --context-switch) no scheduler overhead;
its deadline order is global EDF under CBS servers.  pysched ticks at HZ and
wakes a timer's sleeper at the tick at or after its expiry (the periods are
whole ms, so at HZ=1000 the releases fall on ticks); 2.5.65 queues a woken
real-time task on the runqueue of the CPU it last ran on, where it preempts
only that CPU's task and otherwise waits for it or for the load balancer.

The sanity table says what each side reports, read after the timed runs
(schedsim's from one more run writing its JSON trace, not timed):

  released   pysched: sum of ceil(T / period), by construction of the
             timer; schedsim: its job_arrival events
  completed  pysched: per task cpu_ns // WCET; schedsim: its job_finished
             events
  missed     pysched: completed jobs minus voluntary switches (nvcsw), as
             bench_simso.py counts them; schedsim: finished jobs whose
             job_finished time is after their job_arrival time + period
             (its own deadline_miss and queued_deadline_miss events count
             as many, a job missing both queued and running counting twice)
"""
import argparse
import json
import math
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pysched as ps
from pysched.realkernel.kernel_info import cpu_model

from bench_simso import CPUS, NTASKS, print_times, pysched_figures, run_pysched, task_set

REPO_URL = "https://github.com/fillien/schedsim"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"), "pysched-bench", "schedsim")
SCHEDSIM = "schedsim EDF (global)"


class DefaultFloat(float):
    """A default, told apart from the same value given (--quick changes defaults only)."""


class DefaultInt(int):
    """A default, told apart from the same value given (--quick changes defaults only)."""


class Unavailable(Exception):
    """Why no schedsim binary could be had."""


def _run_logged(cmd, log, timeout, **kw):
    """Run cmd with its output appended to log; Unavailable, with the log's
    tail, where it fails."""
    with open(log, "a") as f:
        f.write(f"$ {' '.join(map(str, cmd))}\n")
        f.flush()
        try:
            done = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout, **kw)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise Unavailable(f"{cmd[0]} {cmd[1]}: {e}") from None
    if done.returncode != 0:
        tail = "".join(Path(log).read_text().splitlines(keepends=True)[-8:])
        raise Unavailable(f"`{' '.join(map(str, cmd[:3]))} ...` failed ({done.returncode}); "
                          f"log {log}:\n{tail}")


def commit_of(src):
    try:
        out = subprocess.run(["git", "-C", str(src), "log", "-1", "--format=%h %cs"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def build(src, cache, cxx, jobs):
    """cache/build-<name>/apps/schedsim, built from the source tree src."""
    src = Path(src).resolve()
    if not (src / "CMakeLists.txt").is_file() or not (src / "apps" / "simulator.cpp").is_file():
        raise Unavailable(f"{src} is not a schedsim source tree (no CMakeLists.txt "
                          f"and apps/simulator.cpp)")
    for tool in ("cmake", cxx):
        if shutil.which(tool) is None:
            raise Unavailable(f"{tool} is not on PATH: needed to build {src}")
    cc = {"g++": "gcc", "clang++": "clang"}.get(Path(cxx).name, "cc")
    out = Path(cache) / f"build-{src.name}"
    out.mkdir(parents=True, exist_ok=True)
    log = out / "build.log"
    log.write_text("")
    configure = ["cmake", "-S", str(src), "-B", str(out), "-DCMAKE_BUILD_TYPE=Release",
                 f"-DCMAKE_CXX_COMPILER={cxx}", f"-DCMAKE_C_COMPILER={cc}",
                 "-DSCHEDSIM_BUILD_TESTS=OFF", "-DBUILD_TESTING=OFF", "-DBUILD_PYTHON=OFF",
                 "-DCMAKE_VERBOSE_MAKEFILE=OFF"]
    vendored = src / "external" / "json"
    if (vendored / "rapidjson" / "document.h").is_file():
        # FetchContent takes a source directory whose include/ holds rapidjson/
        shim = Path(cache) / "rapidjson"
        shim.mkdir(parents=True, exist_ok=True)
        link = shim / "include"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(vendored)
        configure += [f"-DFETCHCONTENT_SOURCE_DIR_RAPIDJSON={shim}",
                      "-DFETCHCONTENT_FULLY_DISCONNECTED=ON"]
    print(f"building schedsim from {src} into {out} (log: {log}) ...", flush=True)
    _run_logged(configure, log, timeout=600)
    _run_logged(["cmake", "--build", str(out), "--target", "schedsim", "-j", str(jobs)],
                log, timeout=3600)
    binary = out / "apps" / "schedsim"
    if not binary.is_file():
        raise Unavailable(f"the build ended without {binary}")
    return binary


def clone(cache):
    """cache/src: a clone of REPO_URL, made on first use."""
    dest = Path(cache) / "src"
    if (dest / "CMakeLists.txt").is_file():
        return dest
    if shutil.which("git") is None:
        raise Unavailable("git is not on PATH: needed to clone " + REPO_URL)
    Path(cache).mkdir(parents=True, exist_ok=True)
    print(f"cloning {REPO_URL} into {dest} ...", flush=True)
    log = Path(cache) / "clone.log"
    log.write_text("")
    if dest.exists():
        shutil.rmtree(dest)
    _run_logged(["git", "clone", "--depth", "1", REPO_URL, str(dest)], log, timeout=300)
    return dest


def find_schedsim(args):
    """(binary, source commit or None); Unavailable where none can be had."""
    if args.schedsim_src:
        binary = build(args.schedsim_src, args.cache, args.cxx, args.jobs)
        return binary, commit_of(args.schedsim_src)
    if args.schedsim_bin:
        binary = Path(args.schedsim_bin)
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            raise Unavailable(f"--schedsim-bin {binary} is not an executable file")
        return binary, None
    src = clone(args.cache)
    return build(src, args.cache, args.cxx, args.jobs), commit_of(src)


def write_inputs(tasks, seconds, where):
    """schedsim's platform and scenario files for the task set, over T = seconds."""
    horizon_ns = round(seconds * 1e9)
    platform_file = Path(where) / "platform.json"
    platform_file.write_text(json.dumps({"clusters": [{"procs": CPUS, "perf_score": 1.0}]}))
    scenario = {"tasks": [
        {"id": i + 1, "period": period_ms / 1000, "relative_deadline": period_ms / 1000,
         "wcet": wcet_us / 1e6,
         # times in s, read back to the nearest ns: every k x period lands on its ns
         "jobs": [{"arrival": k * period_ms / 1000, "duration": wcet_us / 1e6}
                  for k in range(math.ceil(horizon_ns / (period_ms * 1_000_000)))]}
        for i, (period_ms, wcet_us) in enumerate(tasks)]}
    scenario_file = Path(where) / "scenario.json"
    scenario_file.write_text(json.dumps(scenario))
    return platform_file, scenario_file


def schedsim_command(binary, platform_file, scenario_file, seconds, trace=None):
    out = ["-o", str(trace), "--format", "json"] if trace else ["--format", "null"]
    return [str(binary), "-i", str(scenario_file), "-p", str(platform_file), "-s", "edf",
            "-d", repr(float(seconds)), *out]


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_schedsim(cmd):
    """Wall and CPU seconds of one run of cmd."""
    t0, c0 = time.perf_counter(), children_cpu()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, cpu = time.perf_counter() - t0, children_cpu() - c0
    if done.returncode != 0:
        raise Unavailable(f"schedsim exited with {done.returncode}: {done.stderr.strip()}")
    return wall, cpu


def schedsim_figures(trace, tasks):
    """released, completed and missed jobs, from a JSON trace."""
    events = json.loads(Path(trace).read_text())
    arrival = {}
    released = completed = missed = reported = 0
    for e in events:
        kind = e["type"]
        if kind == "job_arrival":
            released += 1
            arrival[e["tid"], e["job_id"]] = round(e["time"] * 1e9)
        elif kind == "job_finished":
            completed += 1
            period_ns = tasks[e["tid"] - 1][0] * 1_000_000
            missed += round(e["time"] * 1e9) > arrival[e["tid"], e["job_id"]] + period_ns
        elif kind in ("deadline_miss", "queued_deadline_miss"):
            reported += 1
    return {"released": released, "completed": completed, "missed": missed,
            "reported": reported}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="5 simulated s and one run of each, unless --seconds or --reps say")
    ap.add_argument("--seconds", type=float, default=DefaultFloat(60), help="simulated seconds")
    ap.add_argument("--reps", type=int, default=DefaultInt(3),
                    help="runs of each, interleaved; the best kept")
    ap.add_argument("--seed", type=int, default=1, help="seed of the task set")
    ap.add_argument("--schedsim-src", metavar="DIR",
                    help="a schedsim source tree to build (first choice)")
    ap.add_argument("--schedsim-bin", metavar="PATH",
                    help="an already built schedsim simulator (without --schedsim-src)")
    ap.add_argument("--cache", type=Path, default=CACHE,
                    help="where builds (and the clone, with neither option) go")
    ap.add_argument("--cxx", default="g++", help="C++ compiler of the build (C++23)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel build jobs")
    ap.add_argument("--no-schedsim", action="store_true", help="run pysched alone")
    args = ap.parse_args(argv)
    seconds = 5.0 if args.quick and isinstance(args.seconds, DefaultFloat) else args.seconds
    reps = 1 if args.quick and isinstance(args.reps, DefaultInt) else args.reps
    if seconds <= 0 or reps < 1:
        ap.error(f"--seconds must be > 0 (got {seconds:g}) and --reps >= 1 (got {reps})")
    tasks = task_set(args.seed)

    binary = commit = None
    if not args.no_schedsim:
        try:
            binary, commit = find_schedsim(args)
        except Unavailable as why:
            print(f"schedsim is not available: {why}\npysched only", flush=True)

    print(f"machine: {cpu_model() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{platform.platform()}")
    peer = ("no schedsim" if binary is None
            else f"schedsim {binary}" + (f" (source {commit})" if commit else ""))
    print(f"python {sys.version.split()[0]} ({platform.python_implementation()}), "
          f"pysched {ps.__version__}, {peer}")
    print(f"{NTASKS} tasks, U = {sum(w / (p * 1000) for p, w in tasks):.4f} on {CPUS} CPUs, "
          f"periods {min(p for p, _ in tasks)}-{max(p for p, _ in tasks)} ms (seed {args.seed}), "
          f"{seconds:g} simulated s; best of {reps}, runs interleaved\n")

    with tempfile.TemporaryDirectory(prefix="bench-schedsim-") as where:
        cmd = None
        if binary is not None:
            platform_file, scenario_file = write_inputs(tasks, seconds, where)
            cmd = schedsim_command(binary, platform_file, scenario_file, seconds)
        times, cpu_times, sanity = measure(tasks, seconds, reps, cmd)
        if cmd is not None and SCHEDSIM in times:
            trace = Path(where) / "trace.json"
            try:
                run_schedsim(schedsim_command(binary, platform_file, scenario_file, seconds,
                                              trace))
                sanity[SCHEDSIM] = schedsim_figures(trace, tasks)
            except Unavailable as why:
                print(f"schedsim's traced run failed: {why}")
        report(times, cpu_times, sanity, seconds)


def measure(tasks, seconds, reps, cmd):
    """Best-of-reps wall and CPU times, runs interleaved; pysched's figures."""
    fifo, normal = "pysched FIFO (RM prios)", "pysched NORMAL"
    times = {fifo: [], normal: []}
    cpu_times = {fifo: [], normal: []}
    if cmd is not None:
        times[SCHEDSIM], cpu_times[SCHEDSIM] = [], []
    sanity = {}
    for _ in range(reps):
        for name, policy in ((fifo, "fifo"), (normal, "normal")):
            t0, c0 = time.perf_counter(), time.process_time()
            sim = run_pysched(tasks, seconds, policy)
            times[name].append(time.perf_counter() - t0)
            cpu_times[name].append(time.process_time() - c0)
            sanity[name] = pysched_figures(sim, tasks, seconds)
            del sim
        if SCHEDSIM in times:
            try:
                wall, cpu = run_schedsim(cmd)
            except Unavailable as why:
                print(f"{why}\npysched only")
                del times[SCHEDSIM], cpu_times[SCHEDSIM]
                continue
            times[SCHEDSIM].append(wall)
            cpu_times[SCHEDSIM].append(cpu)
    return times, cpu_times, sanity


def report(times, cpu_times, sanity, seconds):
    print_times(times, cpu_times, SCHEDSIM, "schedsim")

    print(f"\nsame work ({seconds:g} simulated s; what each counts: see the script's docstring)")
    print(f"{'case':24} {'released':>9} {'completed':>10} {'missed':>7}")
    for name, f in sanity.items():
        extra = (f"  (its deadline-miss events: {f['reported']:,})" if "reported" in f else "")
        print(f"{name:24} {f['released']:9,} {f['completed']:10,} {f['missed']:7,}{extra}")


if __name__ == "__main__":
    main()
