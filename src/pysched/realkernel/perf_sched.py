"""Wakeup latencies on the real kernel, from `perf sched record` (the
scheduler's tracepoints of one CPU) read back with `perf script`.

A wakeup's latency is the time from the task's sched_waking event (the
start of try_to_wake_up(); sched_wakeup where a kernel has no
sched_waking) to the sched_switch that puts it on the CPU, as `perf sched
latency` counts it.  perf records with CLOCK_MONOTONIC (-k), so its
timestamps compare with time.monotonic_ns() of the process that measures."""
import os
import re
import shutil
import signal
import subprocess

import numpy as np

# the package's own: no name here is part of the public API
__all__ = []

LATENCY_DTYPE = np.dtype([("time_ns", np.int64), ("latency_ns", np.int64)])

# "[001] 87137.406077808:       sched:sched_switch: prev_comm=..." as
# `perf script -F cpu,time,event,trace --ns` prints it
_LINE = re.compile(r"^\s*\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(?:\w+:)?(\w+):\s?(.*)$")
_WAKE_PID = re.compile(r"(?:^|\s)pid=(\d+)\s+prio=")
_PREV_PID = re.compile(r"(?:^|\s)prev_pid=(\d+)\s")
_NEXT_PID = re.compile(r"(?:^|\s)next_pid=(\d+)\s")
WAKE_EVENTS = ("sched_waking", "sched_wakeup")


def events(text):
    """perf script's lines as (cpu, time_ns, event, fields) tuples; lines
    that are not events (perf's warnings) are skipped."""
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            yield (int(m.group(1)), int(m.group(2)) * 1_000_000_000 + int(m.group(3)),
                   m.group(4), m.group(5))


def wakeup_latencies(text, pid, start_ns=None, end_ns=None):
    """The wakeup latencies of task `pid` in perf script's output: a
    structured array of time_ns (when it went on the CPU) and latency_ns,
    for the wakeups at or after start_ns whose run began by end_ns.  A
    wakeup seen while the task is on the CPU (it was woken before it got
    to sleep) is no wakeup; a wait after a preemption is none either."""
    on_cpu = False
    woken = None
    out = []
    for _cpu, t, event, fields in events(text):
        if event in WAKE_EVENTS:
            m = _WAKE_PID.search(fields)
            if m and int(m.group(1)) == pid and not on_cpu and woken is None:
                woken = t
        elif event == "sched_switch":
            prev, nxt = _PREV_PID.search(fields), _NEXT_PID.search(fields)
            if prev and int(prev.group(1)) == pid:
                on_cpu, woken = False, None
            if nxt and int(nxt.group(1)) == pid:
                if woken is not None and (start_ns is None or woken >= start_ns) \
                        and (end_ns is None or t <= end_ns):
                    out.append((t, t - woken))
                on_cpu, woken = True, None
    return np.array(out, dtype=LATENCY_DTYPE)


def unavailable():
    """Why `perf sched record` cannot run here, or None."""
    if shutil.which("perf") is None:
        return "perf is not installed"
    if os.geteuid() != 0:
        try:
            with open("/proc/sys/kernel/perf_event_paranoid") as f:
                paranoid = int(f.read())
        except (OSError, ValueError):
            paranoid = 2
        if paranoid > -1:
            return (f"perf sched record needs root or kernel.perf_event_paranoid = -1 "
                    f"(it is {paranoid})")
    return None


class Recording:
    """`perf sched record` of one CPU into `path`, started at once.  perf
    runs on the CPUs in `perf_cpus` (off the measured one, so that it does
    not compete there) and ends by itself after limit_s; stop() ends it
    sooner and returns perf script's text; kill() ends it on an error."""

    def __init__(self, cpu, path, limit_s, perf_cpus=None):
        self.path = path
        self._proc = subprocess.Popen(
            ["perf", "sched", "record", "-k", "CLOCK_MONOTONIC", "-C", str(cpu), "-o", path,
             "--", "sleep", f"{limit_s:.3f}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            # its own process group, so that kill() ends its `sleep` too and
            # a Ctrl-C at the terminal reaches the measurement, which stops it
            start_new_session=True)
        if perf_cpus:
            try:
                os.sched_setaffinity(self._proc.pid, perf_cpus)
            except OSError:
                pass  # it ended already: stop() says why

    def stop(self):
        """End the recording (SIGINT: perf writes its file, ends its
        `sleep` and exits) and return `perf script`'s text of it."""
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGINT)
        _, err = self._proc.communicate(timeout=60)
        if not os.path.exists(self.path) or os.path.getsize(self.path) == 0:
            raise RuntimeError(f"perf sched record wrote nothing (exit {self._proc.returncode}): "
                               f"{err.strip()[-500:]}")
        script = subprocess.run(["perf", "script", "-i", self.path, "--ns",
                                 "-F", "cpu,time,event,trace"],
                                capture_output=True, text=True, timeout=300)
        if script.returncode:
            raise RuntimeError(f"perf script failed (exit {script.returncode}): "
                               f"{script.stderr.strip()[-500:]}")
        return script.stdout

    def kill(self):
        """End perf and its `sleep` at once (nothing is read)."""
        if self._proc.poll() is None:
            # perf, not yet reaped, still leads its group
            os.killpg(self._proc.pid, signal.SIGKILL)
        self._proc.communicate()
