"""The same workload on the machine's real kernel and in the simulator.

`measure(nices)` runs CPU hogs of the given nice values and a periodic
sleeper, all pinned to one CPU, for a few seconds on the running Linux
kernel, and returns each hog's share of the CPU the hogs got (from
/proc/<pid>/schedstat) and the sleeper's wakeup latencies (from `perf
sched record`), with the machine's HZ and fair-class tunables.
`simulate(measurement)` runs that workload in the simulator, at the same
HZ, with the same tunables where the preset has them, for the same time.

The tasks are child Python processes (`sys.executable -c ...`): a hog
spins on time.monotonic() (the vDSO: no system call, so nothing but the
tick and preemption enters the kernel) until a deadline; the sleeper
sleeps `sleep_ms` (time.sleep: clock_nanosleep, an hrtimer) and then
computes `work_ms` of its own CPU time in a loop of a count calibrated
when it starts, so that it makes no system call while it computes:
reading its CPU clock would (clock_gettime of a CPU-time clock enters the
kernel, which brings the task's runtime up to date and may end its slice
between two ticks, as no simulated task's computation does).  Each child ends by itself a
little after the measurement would, so none outlives a parent that is
killed outright; normally the parent kills them all when it is done, on
error and on Ctrl-C.  Affinity is set with sched_setaffinity(2) (what
taskset does) and nice with setpriority(2), by the parent.

Shares are measured between our own pinned tasks: the CPU time each hog
got over the window divided by what the hogs got together, which other
load on that CPU (another session's autogroup, other users' jobs) does
not skew.  The children stay in the caller's session, so they share one
autogroup (the result lists each task's /proc/<pid>/autogroup)."""
import os
import platform
import resource
import select
import subprocess
import sys
import tempfile
import time

import numpy as np

from . import kernel_info, perf_sched
from .. import programs
from .._checks import check_bool, check_int, check_number
from ..program import Program
from ..policy.registry import preset_params, presets
from ..simulator import Simulator

LATENCY_DTYPE = perf_sched.LATENCY_DTYPE
FALLBACK_PRESET = "linux-2.5.65"
MAX_TASKS = 8
MAX_CPU = 4095  # the CPUs a cpu= may name (the trace reader's MAX_CPUS - 1)

# the children's programs; argv: the limit in s, then the sleeper's sleep
# and work in s
HOG = """\
import sys, time
end = time.monotonic() + float(sys.argv[1])
print("ready", flush=True)
while time.monotonic() < end:
    pass
"""
SLEEPER = """\
import sys, time
limit, sleep_s, work_s = map(float, sys.argv[1:4])


def spin(n):
    for _ in range(n):
        pass


# calibrate: loops per second of this process's own CPU time, the fastest
# of five 20-ms trials (a trial slowed by an interruption counts less)
n = 1000
while True:
    t = time.thread_time()
    spin(n)
    dt = time.thread_time() - t
    if dt >= 0.02:
        break
    n *= 2
rate = n / dt
for _ in range(4):
    t = time.thread_time()
    spin(n)
    rate = max(rate, n / (time.thread_time() - t))
loops = round(work_s * rate)
end = time.monotonic() + limit
print("ready", rate / 1e3, flush=True)
while time.monotonic() < end:
    time.sleep(sleep_s)
    spin(loops)
"""


class Unavailable(RuntimeError):
    """The machine does not allow the measurement (the message says why)."""


# ---------------------------------------------------------------- the machine

def count_hz(cpu=None, seconds=2.0, source=None):
    """(HZ, the counted rate, what was counted) over `seconds`: the
    kernel's jiffies (/proc/timer_list, root), exact; or, approximately,
    the local timer interrupts of `cpu` while a hog keeps it busy (an idle
    CPU of a NO_HZ kernel stops its tick), at the quietest of its quarter
    seconds (other timers add interrupts: under load, 50 more a second
    make HZ=250 look like 300).  source "jiffies" or "interrupts" chooses;
    default: the first that can be read.  The rate is snapped to the
    standard HZ it shows (kernel_info.snap_hz)."""
    seconds = check_number("seconds", seconds, 0.5, 60)
    if source not in (None, "jiffies", "interrupts"):
        raise ValueError(f"source={source!r} is not one of (None, 'jiffies', 'interrupts')")
    if source in (None, "jiffies"):
        try:
            with open("/proc/timer_list") as f:
                before = kernel_info.timer_list_jiffies(f.read())
            t0 = time.monotonic()
            time.sleep(seconds)
            with open("/proc/timer_list") as f:
                after = kernel_info.timer_list_jiffies(f.read())
            elapsed = time.monotonic() - t0
            rate = (after - before) / elapsed
            # each reading is within a jiffy of its instant
            return kernel_info.snap_hz(rate, 2 / elapsed), rate, "jiffies (/proc/timer_list)"
        except (OSError, ValueError):
            if source == "jiffies":
                raise
    cpu = _measured_cpu(cpu)
    samples = []
    with _Children() as children:
        children.start(HOG, [seconds + 30], cpu, 0)
        children.wait_ready()
        for _ in range(max(2, round(seconds / 0.25) + 1)):
            with open("/proc/interrupts") as f:
                samples.append((time.monotonic(), kernel_info.local_timer_counts(f.read())[cpu]))
            time.sleep(0.25)
    rate = kernel_info.quietest_rate(samples)
    # a quarter second holds its ticks to within a count and a half
    return (kernel_info.snap_hz(rate, 1.5 / 0.25), rate,
            f"local timer interrupts of busy CPU {cpu}, the quietest 0.25 s")


def _cpu_arg(cpu):
    """cpu as given (None: the default), checked before anything is read."""
    return None if cpu is None else check_int("cpu", cpu, 0, MAX_CPU)


def read_hz(cpu=None):
    """(HZ, source): CONFIG_HZ from /boot/config-<release> or
    /proc/config.gz, else count_hz(cpu)."""
    cpu = _cpu_arg(cpu)
    config, source = kernel_info.read_config()
    if config and "CONFIG_HZ" in config:
        return int(config["CONFIG_HZ"]), f"CONFIG_HZ of {source}"
    hz, rate, counted = count_hz(cpu)
    return hz, f"counted: {rate:.1f}/s of {counted} ({source})"


def machine(cpu=None):
    """What the running kernel is: release, CPUs, HZ, its fair-class
    tunables (ns) and where each came from, its preemption model, its
    sched sysctls and whether autogroup is on."""
    cpu = _cpu_arg(cpu)
    release = platform.release()
    ncpus = kernel_info.read_online_cpus()
    hz, hz_source = read_hz(cpu)
    config, _ = kernel_info.read_config(release)
    try:
        with open("/proc/cmdline") as f:
            cmdline = f.read()
    except OSError:
        cmdline = ""
    model = kernel_info.cpu_model()
    sysctls = kernel_info.read_sched_sysctls()
    return {"release": release, "version": platform.version(), "cpu_model": model,
            "ncpus": ncpus, "hz": hz, "hz_source": hz_source,
            "tunables": kernel_info.read_tunables(release, ncpus),
            "preempt": kernel_info.preempt_model(config or {}, cmdline),
            "autogroup": sysctls.get("sched_autogroup_enabled"), "sysctls": sysctls}


def unavailable(nices=(), latency=True, cpu=None):
    """Why measure(nices, latency=latency, cpu=cpu) cannot run here, or None."""
    cpu = _cpu_arg(cpu)
    nices = [check_int("nice", n, -20, 19) for n in nices]
    if not sys.platform.startswith("linux"):
        return f"not Linux ({sys.platform})"
    if not os.path.exists(f"/proc/{os.getpid()}/stat"):
        return "no /proc/<pid>/stat"
    if not hasattr(os, "sched_setaffinity"):
        return "no sched_setaffinity"
    if cpu is not None and cpu not in os.sched_getaffinity(0):
        return f"CPU {cpu} is not one this process may use ({sorted(os.sched_getaffinity(0))})"
    lowest = min(nices, default=0)
    if lowest < 0 and os.geteuid() != 0:
        # RLIMIT_NICE: nice may be lowered to 20 - rlim_cur (setpriority(2))
        floor = 20 - resource.getrlimit(resource.RLIMIT_NICE)[0]
        if lowest < floor:
            return f"nice {lowest} needs root or RLIMIT_NICE (this process may go down to {floor})"
    if latency:
        return perf_sched.unavailable()
    return None


def _measured_cpu(cpu):
    allowed = sorted(os.sched_getaffinity(0))
    if cpu is None:
        return allowed[-1]
    cpu = check_int("cpu", cpu, 0, MAX_CPU)
    if cpu not in allowed:
        raise ValueError(f"cpu={cpu} is not one this process may use: {allowed}")
    return cpu


def _cpu_time_reader():
    """(function pid -> CPU ns, its description): se.sum_exec_runtime from
    /proc/<pid>/schedstat, or utime + stime of /proc/<pid>/stat (clock
    ticks) where schedstat is missing or off (the kernel then prints
    "0 0 0": this process has run, so its own first field is not 0)."""
    try:
        with open("/proc/self/schedstat") as f:
            ours = kernel_info.parse_schedstat(f.read())[0]
    except (OSError, ValueError):
        ours = 0
    if ours > 0:
        def schedstat(pid):
            with open(f"/proc/{pid}/schedstat") as f:
                return kernel_info.parse_schedstat(f.read())[0]
        return schedstat, "/proc/<pid>/schedstat (se.sum_exec_runtime, ns)"
    clk_tck = os.sysconf("SC_CLK_TCK")

    def stat(pid):
        with open(f"/proc/{pid}/stat") as f:
            return kernel_info.parse_stat_cpu_ns(f.read(), clk_tck)
    return stat, f"/proc/<pid>/stat (utime + stime, 1/{clk_tck} s)"


# ---------------------------------------------------------------- children

class _Children:
    """The measurement's child processes: started pinned and niced, and
    all killed and reaped when the block ends, however it ends."""

    def __init__(self):
        self.procs = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.communicate()
        return False

    def start(self, code, args, cpu, nice):
        p = subprocess.Popen([sys.executable, "-c", code, *map(str, args)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        os.sched_setaffinity(p.pid, {cpu})
        os.setpriority(os.PRIO_PROCESS, p.pid, nice)
        return p.pid

    def wait_ready(self, timeout=30):
        """Wait until every child has started its loop (it says "ready",
        and what follows on its line, returned per child as a list of
        floats: the sleeper's calibrated loops per ms)."""
        deadline = time.monotonic() + timeout
        said = []
        for p in self.procs:
            ready, _, _ = select.select([p.stdout], [], [], max(0, deadline - time.monotonic()))
            words = (p.stdout.readline() if ready else "").split()
            if words[:1] != ["ready"]:
                p.kill()
                _, err = p.communicate()
                raise RuntimeError(f"a measurement task did not start (exit {p.returncode}): "
                                   f"{err.strip()[-500:] or 'no output'}")
            said.append([float(w) for w in words[1:]])
        return said

    def autogroup(self, pid):
        try:
            with open(f"/proc/{pid}/autogroup") as f:
                return f.read().strip()
        except OSError:
            return None


# ---------------------------------------------------------------- measuring

def _check_workload(nices, seconds, warmup_s, sleeper, sleep_ms, work_ms, sleeper_nice):
    if isinstance(nices, (str, bytes)) or not hasattr(nices, "__iter__"):
        raise TypeError(f"nices must be a list of nice values, not {nices!r}")
    nices = [check_int("nice", n, -20, 19) for n in nices]
    if not 1 <= len(nices) <= MAX_TASKS:
        raise ValueError(f"nices has {len(nices)} values: 1..{MAX_TASKS} hogs are measured")
    workload = {"nices": nices, "seconds": check_number("seconds", seconds, 0.1, 600),
                "warmup_s": check_number("warmup_s", warmup_s, 0, 60), "sleeper": None}
    if check_bool("sleeper", sleeper):
        sleep_ms = check_number("sleep_ms", sleep_ms, 0.1, 1000)
        work_ms = check_number("work_ms", work_ms, 0, 1000)
        workload["sleeper"] = {"sleep_ms": sleep_ms, "work_ms": work_ms,
                               "nice": check_int("sleeper_nice", sleeper_nice, -20, 19)}
    return workload


def measure(nices, seconds=2.0, *, warmup_s=0.5, cpu=None, sleeper=True, sleep_ms=10.0,
            work_ms=1.0, sleeper_nice=0, latency=True, machine_info=None):
    """Run one CPU hog per nice value in `nices` and (sleeper=True) a
    sleeper that sleeps sleep_ms and computes work_ms at sleeper_nice, all
    pinned to `cpu` (default: the last CPU this process may use), for
    warmup_s and then a window of `seconds`, on the running kernel.

    Returns a dict: `workload` (the arguments), `machine` (machine(), or
    machine_info if given), `cpu`, `window_ns`, `cpu_ns` (each hog's CPU
    time in the window, NumPy int64), `shares` (cpu_ns over their sum),
    `busy` (what all our tasks used of the window's wall time: below 1
    when other load shared the CPU), `sleeper_cpu_ns`,
    `sleeper_loops_per_ms` (its calibration), `cpu_time_source`,
    `autogroups` (each task's, hogs then sleeper), and with latency=True
    and a sleeper `latencies` (its wakeups in the window: time_ns on the
    CLOCK_MONOTONIC, latency_ns) and `latency_source`.

    Raises Unavailable saying why when the machine does not allow it (see
    unavailable()); ValueError / TypeError naming a bad argument."""
    workload = _check_workload(nices, seconds, warmup_s, sleeper, sleep_ms, work_ms,
                               sleeper_nice)
    latency = check_bool("latency", latency) and workload["sleeper"] is not None
    cpu = _measured_cpu(cpu)
    everything = workload["nices"] + ([workload["sleeper"]["nice"]] if workload["sleeper"] else [])
    why = unavailable(everything, latency, cpu)
    if why:
        raise Unavailable(why)
    info = machine_info if machine_info is not None else machine(cpu)
    cpu_ns, cpu_time_source = _cpu_time_reader()
    limit = workload["warmup_s"] + workload["seconds"] + 30  # s: the children end by then
    others = set(os.sched_getaffinity(0)) - {cpu}
    with tempfile.TemporaryDirectory(prefix="pysched-perf-") as tmp, _Children() as children:
        recording = None
        try:
            if latency:
                recording = perf_sched.Recording(cpu, os.path.join(tmp, "perf.data"), limit,
                                                  others or None)
            pids = [children.start(HOG, [limit], cpu, n) for n in workload["nices"]]
            sleeper_pid = None
            if workload["sleeper"]:
                s = workload["sleeper"]
                sleeper_pid = children.start(SLEEPER, [limit, s["sleep_ms"] / 1e3,
                                                       s["work_ms"] / 1e3], cpu, s["nice"])
            said = children.wait_ready()
            time.sleep(workload["warmup_s"])
            tasks = pids + ([sleeper_pid] if sleeper_pid else [])
            t0 = time.monotonic_ns()
            before = [cpu_ns(p) for p in tasks]
            time.sleep(workload["seconds"])
            after = [cpu_ns(p) for p in tasks]
            t1 = time.monotonic_ns()
            autogroups = [children.autogroup(p) for p in tasks]
            text = recording.stop() if recording else None
        except BaseException:
            if recording:
                recording.kill()
            raise
    used = np.array(after, dtype=np.int64) - np.array(before, dtype=np.int64)
    hogs = used[:len(pids)]
    out = {"workload": workload, "machine": info, "cpu": cpu, "window_ns": t1 - t0,
           "cpu_ns": hogs, "shares": hogs / hogs.sum(), "busy": used.sum() / (t1 - t0),
           "sleeper_cpu_ns": int(used[-1]) if sleeper_pid else None,
           "sleeper_loops_per_ms": said[-1][0] if sleeper_pid else None,
           "cpu_time_source": cpu_time_source, "autogroups": autogroups}
    if latency:
        out["latencies"] = perf_sched.wakeup_latencies(text, sleeper_pid, t0, t1)
        out["latency_source"] = ("perf sched record -C %d; sched_waking to sched_switch, "
                                 "wakeups in the window" % cpu)
    return out


# ---------------------------------------------------------------- simulating

def default_preset(release=None):
    """The simulator's preset nearest the kernel `release` (default: the
    running one): of the presets named linux-<major>.<minor>-<eevdf|cfs>,
    the newest not newer than the release (the oldest if all are newer);
    linux-2.5.65 where there is none."""
    release = release or platform.release()
    try:
        version = kernel_info.release_version(release)
    except ValueError:
        version = (10**6, 0)
    modern = []
    for name in presets():
        parts = name.split("-")
        if len(parts) == 3 and parts[0] == "linux" and parts[2] in ("eevdf", "cfs"):
            try:
                modern.append((kernel_info.release_version(parts[1]), name))
            except ValueError:
                pass
    if not modern:
        return FALLBACK_PRESET
    older = [m for m in modern if m[0] <= version]
    return max(older)[1] if older else min(modern)[1]


_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000}


def tunable_params(preset, tunables, hz=None):
    """The preset's parameters that the measured tunables set, and notes
    on what was left at the preset's default.  A tunable `<name>_ns`
    (base_slice_ns, min_granularity_ns ...) sets the parameter named
    <name>, <name>_ns, <name>_us or <name>_ms (or with sched_ before
    them) whose unit is ns, us or ms.  The values are the kernel's
    effective ones, already scaled for its CPU count: the simulation runs
    on 1 CPU, where the scaling factor is 1."""
    params, notes = {}, []
    declared = {p.name: p for p in preset_params(preset, hz=hz)}
    for key, value in tunables.items():
        if not key.endswith("_ns"):
            continue
        # a NumPy int (a measurement loaded with NumPy) is the int it holds
        value = check_int(key, value, 0, 2**63 - 1)
        stem = key[:-3]
        names = [f"{prefix}{stem}{suffix}" for prefix in ("", "sched_")
                 for suffix in ("", "_ns", "_us", "_ms")]
        match = next((declared[n] for n in names if n in declared
                      and declared[n].unit in _UNITS), None)
        if match is None:
            notes.append(f"{preset} has no parameter for {key} (kept its default)")
            continue
        v = value / _UNITS[match.unit]
        if isinstance(match.default, int):
            v = round(v)
        if not match.min <= v <= match.max:
            notes.append(f"{key}={value} is outside {match.name}'s range "
                         f"{match.min}..{match.max} {match.unit} (kept its default)")
            continue
        params[match.name] = v
    return params, notes


def sleeper_program(sleep_ms, work_ms):
    """The sleeper of measure() as a program: sleep, then compute, forever."""
    sleep_ms = check_number("sleep_ms", sleep_ms, 0.1, 1000)
    work_ms = check_number("work_ms", work_ms, 0, 1000)
    program = Program().loop().sleep(ms=sleep_ms)
    if work_ms > 0:
        program = program.run(ms=work_ms)
    return program.end()


def simulate(measurement, preset=None):
    """Run the workload of `measurement` (what measure() returned, or its
    JSON form) in the simulator: 1 CPU at the measured HZ, `preset`
    (default: default_preset() of the measured kernel) with the measured
    tunables where it has them, the same warm-up and window.  Returns a
    dict: preset, params (the tunables set), notes, cpu_ns, shares, busy,
    sleeper_cpu_ns and latencies (time_ns, latency_ns) in the window, as
    measure() does."""
    workload, info = measurement["workload"], measurement["machine"]
    preset = preset or default_preset(info["release"])
    hz = int(info["hz"])
    params, notes = tunable_params(preset, info["tunables"], hz)
    sim = Simulator(preset, cpus=1, hz=hz, params=params)
    pids = [sim.spawn(programs.cpu_hog(), nice=n, name=f"hog{k}{n:+d}")
            for k, n in enumerate(workload["nices"])]
    sleeper = workload["sleeper"]
    if sleeper:
        pids.append(sim.spawn(sleeper_program(sleeper["sleep_ms"], sleeper["work_ms"]),
                              nice=sleeper["nice"], name="sleeper"))
    sim.run(seconds=workload["warmup_s"])
    t0 = sim.now_ns
    before = np.array([sim.task(p).cpu_ns for p in pids], dtype=np.int64)
    sim.run(seconds=workload["seconds"])
    t1 = sim.now_ns
    used = np.array([sim.task(p).cpu_ns for p in pids], dtype=np.int64) - before
    hogs = used[:len(workload["nices"])]
    out = {"preset": preset, "params": params, "notes": notes, "window_ns": t1 - t0,
           "cpu_ns": hogs, "shares": hogs / hogs.sum(), "busy": used.sum() / (t1 - t0),
           "sleeper_cpu_ns": int(used[-1]) if sleeper else None}
    if sleeper:
        rec = sim.latencies()
        rec = rec[(rec["pid"] == pids[-1]) & (rec["time_ns"] > t0) & (rec["time_ns"] <= t1)]
        lat = np.zeros(len(rec), dtype=LATENCY_DTYPE)
        lat["time_ns"], lat["latency_ns"] = rec["time_ns"], rec["latency_ns"]
        out["latencies"] = lat
    return out


# the parsers, for output captured elsewhere
wakeup_latencies = perf_sched.wakeup_latencies
parse_schedstat = kernel_info.parse_schedstat
parse_stat_cpu_ns = kernel_info.parse_stat_cpu_ns
parse_config = kernel_info.parse_config
parse_sched_debug_header = kernel_info.parse_sched_debug_header
local_timer_counts = kernel_info.local_timer_counts
default_tunables = kernel_info.default_tunables
read_tunables = kernel_info.read_tunables
