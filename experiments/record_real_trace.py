"""Record small scheduler traces of known workloads on this machine.

    python experiments/record_real_trace.py [--scenario mixed|pingpong|condvar|epoll|make|all]
        [--seconds 2] [--cpu 1] [--out tests/data/real_sched_trace.txt.gz]
        [--facts tests/data/real_sched_trace.json]
    python experiments/record_real_trace.py --quick     # 0.3 s into a temporary folder

Needs root (or perf_event_paranoid <= -1) and perf.  Under
``perf sched record`` (plus sched_process_exit) it runs, pinned with
``taskset -c CPU`` and in one session (so that autogroup, if on, puts every
task of it in one group and their nice values act between them):

- hog0, hog5, hog10: busy loops at nice 0, 5 and 10;
- sleeper: 1 ms of CPU every 10 ms (an absolute schedule);
- ping, pong: a pipe ping-pong pair, each computing 0.5 ms per message
  before it answers;

for SECONDS, then ends them with SIGTERM (the scenario "mixed", into
tests/data/real_sched_trace.txt.gz).  The other scenarios, each into
tests/data/real_NAME.txt.gz with its facts in real_NAME.json:

- pingpong: hog0 and hog5 (nice 0 and 5), the sleeper, and a pipe pair
  in which ping computes 0.5 ms, asks pong (which computes 0.5 ms and
  answers), then thinks 2 ms (a nanosleep) before its next request;
- condvar: a C program compiled here with pthreads: a producer thread that
  computes 0.2 ms, queues an item under a mutex, signals a condition
  variable and sleeps 1 ms, and a consumer that waits on the condition and
  computes 0.5 ms an item (futex waits and wakes), beside hog0;
- epoll: a server process in select.epoll over three socketpairs, computing
  0.3 ms a request, and three client processes that compute 0.1 ms, ask,
  wait for the answer and think 2, 3 and 5 ms;
- make: ``make -j2`` of a generated project of 20 small C files (forks,
  execs, page faults, pipes between gcc's stages), on the CPU the other
  scenarios use and the one before it.

Every workload runs in a process named rec-NAME (prctl), so its tasks are
that process and its descendants (the trace's forks).  It converts the capture with
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
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

HOGS = {"hog0": 0, "hog5": 5, "hog10": 10}
SLEEPER = {"comm": "sleeper", "work_ms": 1.0, "period_ms": 10.0}
PINGPONG = {"comms": ["ping", "pong"], "work_ms": 0.5}
TWO_HOGS = {"hog0": 0, "hog5": 5}
THINK_MS = 2.0
CONDVAR = {"produce_ms": 0.2, "think_ms": 1.0, "consume_ms": 0.5}
EPOLL = {"serve_ms": 0.3, "ask_ms": 0.1, "think_ms": [2.0, 3.0, 5.0]}
MAKE = {"files": 20, "jobs": 2}
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


def _think_ping(rd, wr):
    while True:
        _compute(PINGPONG["work_ms"])
        os.write(wr, b"x")
        os.read(rd, 1)
        time.sleep(THINK_MS / 1000)


def _stop(pids):
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    for pid in pids:
        os.waitpid(pid, 0)


def _hogs_sleeper_pair(hogs, ping):
    """A scene: busy loops at `hogs`' nice values, the sleeper, and a pipe
    pair whose parent runs `ping`."""
    def scene(seconds, tmp):
        a, b = os.pipe(), os.pipe()
        pids = [_child(comm, nice, _hog) for comm, nice in hogs.items()]
        pids.append(_child(SLEEPER["comm"], 0, _sleeper))
        pids.append(_child("ping", 0, ping, b[0], a[1]))
        pids.append(_child("pong", 0, _pong, a[0], b[1]))
        time.sleep(seconds)
        _stop(pids)
    return scene


_mixed = _hogs_sleeper_pair(HOGS, _ping)
_pingpong = _hogs_sleeper_pair(TWO_HOGS, _think_ping)


# a producer and a consumer thread on a condition variable (futexes)
CONDVAR_C = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;
static long queued, loops_per_ms;

static void compute(double ms)
{
    for (volatile long i = 0; i < (long)(ms * loops_per_ms); i++)
        ;
}

static void *producer(void *arg)
{
    struct timespec think = {0, %(think_ns)d};
    pthread_setname_np(pthread_self(), "producer");
    for (;;) {
        compute(%(produce_ms)f);
        pthread_mutex_lock(&lock);
        queued++;
        pthread_cond_signal(&more);
        pthread_mutex_unlock(&lock);
        nanosleep(&think, NULL);
    }
    return arg;
}

static void *consumer(void *arg)
{
    pthread_setname_np(pthread_self(), "consumer");
    for (;;) {
        pthread_mutex_lock(&lock);
        while (!queued)
            pthread_cond_wait(&more, &lock);
        queued--;
        pthread_mutex_unlock(&lock);
        compute(%(consume_ms)f);
    }
    return arg;
}

int main(int argc, char **argv)
{
    struct timespec t0, t1;
    pthread_t p, c;
    long n = 10000000;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    loops_per_ms = 1;
    compute((double)n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    loops_per_ms = (long)(n / ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6));
    pthread_create(&c, NULL, consumer, NULL);
    pthread_create(&p, NULL, producer, NULL);
    sleep(atoi(argv[1]));
    return 0;
}
"""


def _condvar(seconds, tmp):
    src, exe = os.path.join(tmp, "condvar.c"), os.path.join(tmp, "condvar")
    with open(src, "w") as f:
        f.write(CONDVAR_C % {"think_ns": round(CONDVAR["think_ms"] * 1e6),
                             "produce_ms": CONDVAR["produce_ms"],
                             "consume_ms": CONDVAR["consume_ms"]})
    subprocess.run(["cc", "-O1", "-pthread", "-o", exe, src], check=True)
    pids = [_child("hog0", 0, _hog)]
    # the program ends itself (no SIGTERM: its exit is in the trace)
    subprocess.run([exe, str(max(1, round(seconds)))], check=True)
    _stop(pids)


def _server(socks):
    ep = select.epoll()
    for i, s in enumerate(socks):
        ep.register(s.fileno(), select.EPOLLIN)
    by_fd = {s.fileno(): s for s in socks}
    while True:
        for fd, _ in ep.poll():
            by_fd[fd].recv(1)
            _compute(EPOLL["serve_ms"])
            by_fd[fd].send(b"y")


def _client(sock, think_ms):
    while True:
        _compute(EPOLL["ask_ms"])
        sock.send(b"x")
        sock.recv(1)
        time.sleep(think_ms / 1000)


def _epoll(seconds, tmp):
    pairs = [socket.socketpair() for _ in EPOLL["think_ms"]]
    pids = [_child("server", 0, _server, [a for a, _ in pairs])]
    for i, ((_, b), think) in enumerate(zip(pairs, EPOLL["think_ms"]), 1):
        pids.append(_child(f"client{i}", 0, _client, b, think))
    time.sleep(seconds)
    _stop(pids)


def _make(seconds, tmp):
    n = MAKE["files"]
    for i in range(n):
        with open(os.path.join(tmp, f"f{i}.c"), "w") as f:
            f.write(f"int f{i}(int x)\n{{\n    int s = 0;\n    for (int k = 0; k < x; k++)\n"
                    f"        s += k * {i + 1} % 7;\n    return s;\n}}\n")
    with open(os.path.join(tmp, "main.c"), "w") as f:
        f.write("".join(f"int f{i}(int);\n" for i in range(n)))
        f.write("int main(void)\n{\n    int s = 0;\n")
        f.write("".join(f"    s += f{i}(10);\n" for i in range(n)))
        f.write("    return s & 1;\n}\n")
    objs = " ".join(f"f{i}.o" for i in range(n))
    with open(os.path.join(tmp, "Makefile"), "w") as f:
        f.write(f"prog: main.o {objs}\n\tcc -o $@ $^\n%.o: %.c\n\tcc -O1 -c -o $@ $<\n")
    subprocess.run(["make", "-s", "-j2", "-C", tmp], check=True)


# name: (the workload, its facts, the CPUs it runs on: None the last one)
SCENARIOS = {
    "mixed": (_mixed, None),
    "pingpong": (_pingpong, None),
    "condvar": (_condvar, None),
    "epoll": (_epoll, None),
    "make": (_make, 2),
}


def facts_of(name):
    """What is known of scenario `name`'s workload before it runs."""
    if name == "mixed":
        return {"hogs": HOGS, "sleeper": SLEEPER, "pingpong": PINGPONG,
                "comms": list(HOGS) + [SLEEPER["comm"]] + PINGPONG["comms"],
                "nice": {**HOGS, SLEEPER["comm"]: 0, "ping": 0, "pong": 0}}
    if name == "pingpong":
        return {"hogs": TWO_HOGS, "sleeper": SLEEPER, "pingpong": {**PINGPONG,
                                                                   "think_ms": THINK_MS},
                "comms": list(TWO_HOGS) + [SLEEPER["comm"]] + PINGPONG["comms"],
                "nice": {**TWO_HOGS, SLEEPER["comm"]: 0, "ping": 0, "pong": 0}}
    if name == "condvar":
        return {"hogs": {"hog0": 0}, "condvar": CONDVAR,
                "comms": ["hog0", "producer", "consumer"],
                "nice": {"hog0": 0, "producer": 0, "consumer": 0}}
    if name == "epoll":
        clients = [f"client{i}" for i in range(1, len(EPOLL["think_ms"]) + 1)]
        return {"epoll": EPOLL, "comms": ["server"] + clients,
                "nice": {c: 0 for c in ["server"] + clients}}
    return {"make": MAKE, "comms": ["make"], "nice": {"make": 0}}


def workload(name, seconds):
    """Scenario `name`'s workload itself (run under perf and taskset by
    record())."""
    global LOOPS_PER_MS
    _name(f"rec-{name}")
    LOOPS_PER_MS = _loops_per_ms()
    with tempfile.TemporaryDirectory() as tmp:
        SCENARIOS[name][0](seconds, tmp)


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


def record(out, facts_path=None, seconds=2.0, cpu=None, scenario="mixed"):
    """Record `scenario`'s workload for `seconds` on `cpu` (default: the
    last CPU; make's on it and the one before) into the gzipped text
    `out`; returns the facts (also written to `facts_path` as JSON)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario={scenario!r} is not one of {sorted(SCENARIOS)}")
    if cpu is None:
        cpu = os.cpu_count() - 1
    width = SCENARIOS[scenario][1] or 1
    cpus = ",".join(str(c) for c in range(max(0, cpu - width + 1), cpu + 1))
    # perf and the workload need nothing preloaded (a sanitizer run preloads ASan)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        subprocess.run(["perf", "sched", "record", "-e", "sched:sched_process_exit", "-o", data,
                        "--", "taskset", "-c", cpus, sys.executable, os.path.abspath(__file__),
                        "--workload", "--scenario", scenario, "--seconds", str(seconds)],
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
    facts = {"scenario": scenario, "root": f"rec-{scenario}", "seconds": seconds, "cpu": cpu,
             "cpus": [int(c) for c in cpus.split(",")], **facts_of(scenario),
             "kernel": platform.release(), "hz": _hz(), "perf": version,
             "autogroup": autogroup, "cpus_online": os.cpu_count(),
             "command": f"perf sched record -e sched:sched_process_exit -- taskset -c {cpus} "
                        f"python record_real_trace.py --workload --scenario {scenario}; "
                        f"perf script --ns -F comm,pid,tid,cpu,time,event,trace | gzip"}
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


def _paths(data, scenario):
    stem = "real_sched_trace" if scenario == "mixed" else f"real_{scenario}"
    return os.path.join(data, stem + ".txt.gz"), os.path.join(data, stem + ".json")


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "tests", "data")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="mixed", choices=sorted(SCENARIOS) + ["all"],
                    help="(default: mixed; all: each into its default files)")
    ap.add_argument("--seconds", type=float, help="(default: 2; make: until it is done)")
    ap.add_argument("--cpu", type=int, help="the CPU to pin to (default: the last)")
    ap.add_argument("--out", help="(default: tests/data/real_sched_trace.txt.gz for mixed, "
                                  "tests/data/real_NAME.txt.gz for the others)")
    ap.add_argument("--facts", help="(default: the --out path with .json for .txt.gz)")
    ap.add_argument("--quick", action="store_true",
                    help="record 0.3 s into a temporary folder (default: off)")
    ap.add_argument("--workload", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    seconds = 2.0 if args.seconds is None else args.seconds
    if args.workload:
        workload(args.scenario, seconds)
        return 0
    problem = perf_problem()
    if problem:
        print(f"cannot record a trace here: {problem}", file=sys.stderr)
        if args.quick:
            print(f"no trace recorded: {problem}")
            return 0
        return 1
    scenarios = sorted(SCENARIOS) if args.scenario == "all" else [args.scenario]
    for scenario in scenarios:
        if args.quick:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "trace.txt.gz")
                print(summary(out, record(out, None, 0.3, args.cpu, scenario)))
            continue
        out, facts_path = _paths(data, scenario)
        if args.out and len(scenarios) == 1:
            out = args.out
            facts_path = args.facts or out.replace(".txt.gz", "") + ".json"
        facts = record(out, facts_path, seconds, args.cpu, scenario)
        print(summary(out, facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
