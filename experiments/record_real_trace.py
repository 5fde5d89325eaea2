"""Record a small scheduler trace of a known workload on this machine.

    python experiments/record_real_trace.py [--seconds 2] [--cpu 1]
        [--out tests/data/real_sched_trace.txt.gz] [--facts tests/data/real_sched_trace.json]
    python experiments/record_real_trace.py --quick     # 0.3 s into a temporary folder

Needs root (or perf_event_paranoid <= -1) and perf.  Under
``perf sched record`` (plus sched_process_exit) it runs, pinned with
``taskset -c CPU`` and in one session (so that autogroup, if on, puts every
task of it in one group and their nice values act between them):

- hog0, hog5, hog10: busy loops at nice 0, 5 and 10;
- sleeper: 1 ms of CPU every 10 ms (an absolute schedule);
- ping, pong: a pipe ping-pong pair, each computing 0.5 ms per message
  before it answers;

for SECONDS, then ends them with SIGTERM.  It converts the capture with
``perf script --ns -F comm,pid,tid,cpu,time,event,trace`` (every field
pysched.trace.load reads: the sample's task is the waker of a
sched_waking), gzips it, and writes what is known of the workload beside it
as JSON: the comms, their nice values, the CPU, the durations, the kernel,
HZ and perf's version.
"""
import argparse
import ctypes
import gzip
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HOGS = {"hog0": 0, "hog5": 5, "hog10": 10}
SLEEPER = {"comm": "sleeper", "work_ms": 1.0, "period_ms": 10.0}
PINGPONG = {"comms": ["ping", "pong"], "work_ms": 0.5}
PR_SET_NAME = 15  # include/uapi/linux/prctl.h


def _name(comm):
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, comm.encode(), 0, 0, 0)


def _spin(n):
    for _ in range(n):
        pass


def _loops_per_ms():
    """How many turns of _spin take a millisecond here, the best of five
    (as interbench and rt-app calibrate): a fixed amount of work, so that a
    preempted task still does all of it, and no clock is read while it
    runs (reading a thread's CPU clock is itself a sched_stat_runtime
    event)."""
    n, best = 100_000, float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        _spin(n)
        best = min(best, time.perf_counter() - t0)
    return max(1, round(n / (best * 1000)))


LOOPS_PER_MS = None


def _compute(ms):
    _spin(round(LOOPS_PER_MS * ms))


def _hog():
    while True:
        pass


def _sleeper():
    period = SLEEPER["period_ms"] / 1000
    due = time.monotonic()
    while True:
        _compute(SLEEPER["work_ms"])
        due += period
        time.sleep(max(0.0, due - time.monotonic()))


def _ping(rd, wr):
    while True:
        _compute(PINGPONG["work_ms"])
        os.write(wr, b"x")
        os.read(rd, 1)


def _pong(rd, wr):
    while True:
        os.read(rd, 1)
        _compute(PINGPONG["work_ms"])
        os.write(wr, b"x")


def _child(comm, nice, fn, *args):
    pid = os.fork()
    if pid:
        return pid
    try:
        _name(comm)
        os.nice(nice)
        fn(*args)
    finally:
        os._exit(0)


def workload(seconds):
    """The workload itself (run under perf and taskset by record())."""
    global LOOPS_PER_MS
    LOOPS_PER_MS = _loops_per_ms()
    a, b = os.pipe(), os.pipe()
    pids = [_child(comm, nice, _hog) for comm, nice in HOGS.items()]
    pids.append(_child(SLEEPER["comm"], 0, _sleeper))
    pids.append(_child("ping", 0, _ping, b[0], a[1]))
    pids.append(_child("pong", 0, _pong, a[0], b[1]))
    time.sleep(seconds)
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    for pid in pids:
        os.waitpid(pid, 0)


def perf_problem():
    """Why perf cannot record scheduler events here, or None if it can."""
    if shutil.which("perf") is None:
        return "perf is not installed"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
            done = subprocess.run(["perf", "sched", "record", "-o", os.path.join(tmp, "p.data"),
                                   "--", "true"], capture_output=True, text=True, timeout=60,
                                  env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"perf sched record failed: {e}"
    if done.returncode:
        return f"perf sched record failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return None


def _hz():
    """CONFIG_HZ of the running kernel, from its config if it can be read."""
    for path in (f"/boot/config-{platform.release()}", "/proc/config.gz"):
        try:
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt") as f:
                for ln in f:
                    if ln.startswith("CONFIG_HZ="):
                        return int(ln.split("=")[1])
        except OSError:
            continue
    return None


def record(out, facts_path=None, seconds=2.0, cpu=None):
    """Record the workload for `seconds` on `cpu` (default: the last CPU)
    into the gzipped text `out`; returns the facts (also written to
    `facts_path` as JSON)."""
    if cpu is None:
        cpu = os.cpu_count() - 1
    # perf and the workload need nothing preloaded (a sanitizer run preloads ASan)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        subprocess.run(["perf", "sched", "record", "-e", "sched:sched_process_exit", "-o", data,
                        "--", "taskset", "-c", str(cpu), sys.executable, os.path.abspath(__file__),
                        "--workload", "--seconds", str(seconds)],
                       check=True, capture_output=True, text=True, env=env)
        text = subprocess.run(["perf", "script", "-i", data, "--ns",
                               "-F", "comm,pid,tid,cpu,time,event,trace"],
                              check=True, capture_output=True, env=env).stdout
        with gzip.open(out, "wb", compresslevel=9) as f:
            f.write(text)
    version = subprocess.run(["perf", "--version"], capture_output=True, text=True).stdout.strip()
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            autogroup = int(f.read())
    except OSError:
        autogroup = None
    facts = {
        "seconds": seconds, "cpu": cpu,
        "hogs": HOGS, "sleeper": SLEEPER, "pingpong": PINGPONG,
        "comms": list(HOGS) + [SLEEPER["comm"]] + PINGPONG["comms"],
        "nice": {**HOGS, SLEEPER["comm"]: 0, "ping": 0, "pong": 0},
        "kernel": platform.release(), "hz": _hz(), "perf": version,
        "autogroup": autogroup, "cpus_online": os.cpu_count(),
        "command": "perf sched record -e sched:sched_process_exit -- taskset -c CPU python "
                   "record_real_trace.py --workload; perf script --ns -F "
                   "comm,pid,tid,cpu,time,event,trace | gzip",
    }
    if facts_path is not None:
        with open(facts_path, "w") as f:
            json.dump(facts, f, indent=2)
            f.write("\n")
    return facts


def summary(path, facts):
    """What the trace says each task of the workload did."""
    from pysched import trace
    t = trace.load(path)
    lines = [f"{path}: {os.path.getsize(path)} bytes, {t.duration_ns / 1e9:.3f} s, "
             f"CPUs {t.cpus.tolist()}, {len(t.tasks)} tasks (the workload's below)"]
    for comm in facts["comms"]:
        r = t.task(comm)
        lines.append(f"  {comm:8} nice {r['nice']:3d}  cpu {r['cpu_ns'] / 1e6:7.1f} ms  "
                     f"wakeups {r['nr_wakeups']:4d}  switches {r['nr_switches']:4d}  "
                     f"CPUs {bin(int(r['cpus_allowed']))}")
    return "\n".join(lines)


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "tests", "data")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="(default: 2)")
    ap.add_argument("--cpu", type=int, help="the CPU to pin to (default: the last)")
    ap.add_argument("--out", default=os.path.join(data, "real_sched_trace.txt.gz"),
                    help="(default: tests/data/real_sched_trace.txt.gz)")
    ap.add_argument("--facts", default=os.path.join(data, "real_sched_trace.json"),
                    help="(default: tests/data/real_sched_trace.json)")
    ap.add_argument("--quick", action="store_true",
                    help="record 0.3 s into a temporary folder (default: off)")
    ap.add_argument("--workload", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.workload:
        workload(args.seconds)
        return 0
    problem = perf_problem()
    if problem:
        print(f"cannot record a trace here: {problem}", file=sys.stderr)
        if args.quick:
            print(f"no trace recorded: {problem}")
            return 0
        return 1
    if args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "trace.txt.gz")
            print(summary(out, record(out, None, 0.3, args.cpu)))
        return 0
    facts = record(args.out, args.facts, args.seconds, args.cpu)
    print(summary(args.out, facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
