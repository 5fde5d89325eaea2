"""Task groups on this machine's kernel and in the simulator.

`measure_groups(kind, groups)` runs groups of CPU hogs, all pinned to one
CPU, for a few seconds on the running kernel and returns the CPU time each
group got and its part of what the groups got together:

- kind "sessions": each group is a login session (a leader started with
  setsid(2), ``start_new_session``, whose hogs it forks), so with autogroup
  on (``/proc/sys/kernel/sched_autogroup_enabled`` 1) each is its own
  autogroup (kernel/sched/autogroup.c, ``sched_autogroup_create_attach`` at
  setsid);
- kind "cgroup": each group is a directory made in the cgroup-v1 ``cpu``
  controller (``/sys/fs/cgroup/cpu`` by default), its ``cpu.shares``
  written, its hogs' pids written to its ``cgroup.procs``; the directories
  are removed afterwards, whatever happens.  This needs root.

`simulate_groups(measurement, preset)` runs the same groups in the
simulator (sim.group / spawn(session=...) with ``autogroup=1``) at the
machine's HZ and tunables, for the same window.

Other load on the CPU (other sessions, other users) takes its own part,
but not from the ratio between our groups: shares are measured between our
own groups, each always runnable.  The hogs are realkernel's (a spin on
time.monotonic() until a deadline, so none outlives its parent long)."""
import os
import select
import subprocess
import sys
import time

import numpy as np

from .._checks import check_int, check_number, check_name
from ..simulator import Simulator
from . import HOG, Unavailable, _cpu_time_reader, _measured_cpu, default_preset, machine, tunable_params
from .. import programs

__all__ = ["measure_groups", "simulate_groups", "groups_unavailable"]

CGROUP_CPU = "/sys/fs/cgroup/cpu"
AUTOGROUP_SYSCTL = "/proc/sys/kernel/sched_autogroup_enabled"
MAX_GROUPS, MAX_HOGS = 4, 8

# a group's leader: forks n hogs, prints their pids, reaps them
LEADER = """\
import os, sys
n, limit = int(sys.argv[1]), sys.argv[2]
pids = []
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        os.execv(sys.executable, [sys.executable, "-c", sys.argv[3], limit])
    pids.append(pid)
print(" ".join(map(str, pids)), flush=True)
for pid in pids:
    os.waitpid(pid, 0)
"""


def groups_unavailable(kind, root=CGROUP_CPU):
    """Why measure_groups(kind) cannot run here, or None."""
    if kind not in ("sessions", "cgroup"):
        raise ValueError(f"kind={kind!r} is not 'sessions' or 'cgroup'")
    if not sys.platform.startswith("linux") or not hasattr(os, "sched_setaffinity"):
        return f"not Linux with sched_setaffinity ({sys.platform})"
    if kind == "sessions":
        try:
            with open(AUTOGROUP_SYSCTL) as f:
                if f.read().strip() != "1":
                    return f"autogroup is off ({AUTOGROUP_SYSCTL} is not 1)"
        except OSError:
            return f"no {AUTOGROUP_SYSCTL} (a kernel without CONFIG_SCHED_AUTOGROUP)"
        return None
    if not os.path.exists(os.path.join(root, "cpu.shares")):
        return f"no cgroup-v1 cpu controller at {root} (no cpu.shares there)"
    if os.geteuid() != 0 or not os.access(root, os.W_OK):
        return f"making groups in {root} needs root (euid {os.geteuid()})"
    return None


def _check_groups(kind, groups):
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__iter__"):
        raise TypeError(f"groups must be a list of (hogs, shares), not {groups!r}")
    out = []
    for g in groups:
        hogs, shares = (g, 1024) if kind == "sessions" and not hasattr(g, "__iter__") else g
        out.append((check_int("hogs", hogs, 1, MAX_HOGS), check_int("shares", shares, 2, 262144)))
    if not 2 <= len(out) <= MAX_GROUPS:
        raise ValueError(f"groups has {len(out)} groups: 2..{MAX_GROUPS} are measured")
    return out


class _Groups:
    """The leaders, their hogs and the cgroup directories, all gone when
    the block ends."""

    def __init__(self, kind, root):
        self.kind, self.root = kind, root
        self.leaders, self.hogs, self.dirs = [], [], []

    def __enter__(self):
        return self

    def start(self, k, hogs, shares, cpu, limit):
        directory = None
        if self.kind == "cgroup":
            directory = os.path.join(self.root, f"pysched-{os.getpid()}-{k}")
            os.mkdir(directory)
            self.dirs.append(directory)
            with open(os.path.join(directory, "cpu.shares"), "w") as f:
                f.write(str(shares))
        p = subprocess.Popen([sys.executable, "-c", LEADER, str(hogs), str(limit), HOG],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             start_new_session=self.kind == "sessions")
        self.leaders.append(p)
        ready, _, _ = select.select([p.stdout], [], [], 30)
        line = p.stdout.readline() if ready else ""
        pids = [int(x) for x in line.split()]
        if len(pids) != hogs:
            raise RuntimeError(f"a group's leader did not start its hogs: {line!r}")
        self.hogs.extend(pids)
        for pid in pids:
            os.sched_setaffinity(pid, {cpu})
            if directory:
                with open(os.path.join(directory, "cgroup.procs"), "w") as f:
                    f.write(str(pid))
        return pids

    def __exit__(self, *exc):
        for pid in self.hogs:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        for p in self.leaders:
            try:
                p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
        for directory in self.dirs:
            for _ in range(50):  # the last tasks leave as they are reaped
                try:
                    os.rmdir(directory)
                    break
                except OSError:
                    time.sleep(0.1)
        return False


def measure_groups(kind, groups, seconds=2.0, *, warmup_s=0.5, cpu=None, root=CGROUP_CPU):
    """Run `groups` of hogs pinned to `cpu` (default: the last CPU this
    process may use) on the running kernel: for kind "sessions" a list of
    hog counts (one setsid session each), for "cgroup" a list of
    (hogs, cpu.shares).  Returns a dict: kind, groups [(hogs, shares)],
    machine, cpu, window_ns, cpu_ns (each group's CPU time in the window,
    from /proc/<pid>/schedstat), shares (cpu_ns over their sum), busy (what
    our hogs used of the window), cpu_time_source, autogroups (each
    group's first hog's /proc/<pid>/autogroup).  Raises Unavailable saying
    why when the machine does not allow it."""
    if kind not in ("sessions", "cgroup"):
        raise ValueError(f"kind={kind!r} is not 'sessions' or 'cgroup'")
    groups = _check_groups(kind, groups)
    seconds = check_number("seconds", seconds, 0.1, 600)
    warmup_s = check_number("warmup_s", warmup_s, 0, 60)
    root = check_name("root", root)
    why = groups_unavailable(kind, root)
    if why:
        raise Unavailable(why)
    cpu = _measured_cpu(cpu)
    info = machine(cpu)
    cpu_ns, source = _cpu_time_reader()
    limit = warmup_s + seconds + 30
    with _Groups(kind, root) as running:
        members = [running.start(k, hogs, shares, cpu, limit) for k, (hogs, shares) in enumerate(groups)]
        time.sleep(warmup_s)
        t0 = time.monotonic_ns()
        before = [[cpu_ns(p) for p in pids] for pids in members]
        time.sleep(seconds)
        after = [[cpu_ns(p) for p in pids] for pids in members]
        t1 = time.monotonic_ns()
        autogroups = []
        for pids in members:
            try:
                with open(f"/proc/{pids[0]}/autogroup") as f:
                    autogroups.append(f.read().strip())
            except OSError:
                autogroups.append(None)
    used = np.array([sum(a) - sum(b) for a, b in zip(after, before)], dtype=np.int64)
    return {"kind": kind, "groups": groups, "machine": info, "cpu": cpu, "window_ns": t1 - t0,
            "cpu_ns": used, "shares": used / used.sum(), "busy": used.sum() / (t1 - t0),
            "cpu_time_source": source, "autogroups": autogroups}


def simulate_groups(measurement, preset=None):
    """The measured groups in the simulator under `preset` (default: the
    one nearest the running kernel), one CPU at the machine's HZ and
    tunables, for the measurement's warm-up-free window: sessions as
    autogroups (autogroup=1, spawn(session=...)), cgroups as sim.group with
    their shares.  Returns the same keys as the measurement's cpu_ns and
    shares, plus preset."""
    preset = preset or default_preset(measurement["machine"]["release"])
    hz = check_int("hz", measurement["machine"]["hz"], 1, 100_000)
    window_ns = check_int("window_ns", measurement["window_ns"], 1, 600 * 10**9)
    groups = _check_groups(measurement["kind"], measurement["groups"])
    params, _ = tunable_params(preset, measurement["machine"]["tunables"], hz)
    if measurement["kind"] == "sessions":
        params["autogroup"] = 1
    sim = Simulator(preset, hz=hz, params=params)
    handles = []
    for k, (hogs, shares) in enumerate(groups):
        if measurement["kind"] == "sessions":
            pids = [sim.spawn(programs.cpu_hog(), session=f"session{k}") for _ in range(hogs)]
            handles.append(sim.group_of(pids[0]))
        else:
            handles.append(sim.group(f"g{k}", shares=shares))
            for _ in range(hogs):
                sim.spawn(programs.cpu_hog(), group=handles[-1])
    sim.run(0.5)

    def group_ns():
        rows = {str(r["path"]): int(r["cpu_ns"]) for r in sim.group_stats()}
        return np.array([rows[h.path] for h in handles], dtype=np.int64)

    before = group_ns()
    sim.run(window_ns / 1e9)
    used = group_ns() - before
    return {"preset": preset, "cpu_ns": used, "shares": used / used.sum()}
