"""What the running Linux kernel says about itself: HZ (from its config, or
from the timer interrupts of a busy CPU), the fair class's tunables (from
debugfs, or the documented default of its version), its sched sysctls,
and a task's CPU time.  Each reader returns where its value came from;
the parsers are pure functions of the files' text, so they are tested on
canned copies."""
import contextlib
import gzip
import os
import platform
import re
import subprocess
import tempfile

# the package's own: no name here is part of the public API
__all__ = []

# the values a kernel's CONFIG_HZ may take (kernel/Kconfig.hz)
STANDARD_HZ = (100, 250, 300, 1000)

# SCHED_TUNABLESCALING_NONE / _LOG / _LINEAR (include/linux/sched/sysctl.h order)
SCALING_NAMES = {0: "none", 1: "logarithmic", 2: "linear"}


# ---------------------------------------------------------------- releases

def release_version(release):
    """(major, minor) of a release string such as "6.18.44-fc-v1147";
    ValueError if it does not start so."""
    m = re.match(r"(\d+)\.(\d+)", release)
    if not m:
        raise ValueError(f"kernel release {release!r} does not start with <major>.<minor>")
    return int(m.group(1)), int(m.group(2))


def online_cpus(text):
    """The number of CPUs in a CPU list such as /sys/devices/system/cpu/online
    ("0-1", "0,2-5")."""
    n = 0
    for part in text.strip().split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def cpu_model():
    """The processor's model name (/proc/cpuinfo), or None where it cannot
    be read: what a measurement of time is labelled with."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name")), None)
    except OSError:
        return None


def read_online_cpus():
    try:
        with open("/sys/devices/system/cpu/online") as f:
            return online_cpus(f.read())
    except OSError:
        return os.cpu_count() or 1


# ---------------------------------------------------------------- HZ

def parse_config(text):
    """A kernel .config as {CONFIG_NAME: value} (strings, quotes kept off);
    "# CONFIG_X is not set" lines are left out."""
    config = {}
    for line in text.splitlines():
        m = re.match(r"(CONFIG_\w+)=(.*)$", line.strip())
        if m:
            config[m.group(1)] = m.group(2).strip('"')
    return config


def read_config(release=None):
    """(config dict, source) from /boot/config-<release> or /proc/config.gz,
    or (None, why neither could be read)."""
    release = release or platform.release()
    why = []
    path = f"/boot/config-{release}"
    try:
        with open(path) as f:
            return parse_config(f.read()), path
    except OSError as e:
        why.append(f"{path}: {e.strerror}")
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            return parse_config(f.read()), "/proc/config.gz"
    except OSError as e:
        why.append(f"/proc/config.gz: {e.strerror or e}")
    return None, "; ".join(why)


def preempt_model(config, cmdline=""):
    """The preemption model the kernel was built with (CONFIG_PREEMPT_NONE,
    _VOLUNTARY, PREEMPT, _LAZY, _RT), or the preempt= of its command line,
    which PREEMPT_DYNAMIC lets choose at boot."""
    m = re.search(r"(?:^|\s)preempt=(\w+)", cmdline)
    if m and config.get("CONFIG_PREEMPT_DYNAMIC") == "y":
        return m.group(1)
    for key, name in (("CONFIG_PREEMPT_RT", "rt"), ("CONFIG_PREEMPT_LAZY", "lazy"),
                      ("CONFIG_PREEMPT", "full"), ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
                      ("CONFIG_PREEMPT_NONE", "none")):
        if config.get(key) == "y":
            return name
    return None


def local_timer_counts(text):
    """The per-CPU counts of the "LOC: ... Local timer interrupts" line of
    /proc/interrupts (x86; other architectures name their timer otherwise)."""
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name.strip() == "LOC":
            return [int(x) for x in re.findall(r"\d+", rest.split("Local")[0])]
    raise ValueError("no LOC (local timer interrupts) line in /proc/interrupts")


def timer_list_jiffies(text):
    """`jiffies` as /proc/timer_list prints it (kernel/time/timer_list.c,
    print_cpu(): "jiffies: %Lu", on NO_HZ kernels)."""
    m = re.search(r"^jiffies: (\d+)$", text, re.M)
    if not m:
        raise ValueError("no 'jiffies:' line in /proc/timer_list")
    return int(m.group(1))


def quietest_rate(samples):
    """The lowest rate between consecutive (time_s, count) samples: a busy
    CPU's local timer interrupts are its ticks plus whatever hrtimers land
    on it, which come in bursts, so the quietest stretch is the closest to
    the tick alone."""
    return min((c1 - c0) / (t1 - t0) for (t0, c0), (t1, c1) in zip(samples, samples[1:]))


def snap_hz(rate, slack):
    """A counted rate of ticks as HZ: the largest standard HZ not above
    rate + slack (the count's resolution, in counts/s), since a busy CPU's
    timer interrupts are its ticks plus whatever hrtimers land on it, never
    fewer; the rate rounded where it is more than 1.5 times that value."""
    below = [hz for hz in STANDARD_HZ if hz <= rate + slack]
    if below and rate <= 1.5 * below[-1]:
        return below[-1]
    return round(rate)


# ---------------------------------------------------------------- tunables

def parse_split_ns(text):
    """A time printed by kernel/sched/debug.c's PN(): "%Ld.%06ld" of
    SPLIT_NS(x), milliseconds then the nanoseconds left over; exact ns."""
    ms, _, rest = text.strip().partition(".")
    return int(ms) * 1_000_000 + int(rest or 0)


def parse_sched_debug_header(text):
    """The "sysctl_sched" block at the top of debugfs's sched/debug (kernel/
    sched/debug.c, sched_debug_header(): PN(sysctl_sched_base_slice),
    P(sysctl_sched_features), sysctl_sched_tunable_scaling "%d (%s)"; 6.6+;
    before 6.6 the slice was printed as sysctl_sched_min_granularity with
    sysctl_sched_latency and sysctl_sched_wakeup_granularity) as a dict of
    ns values and ints; also the Sched Debug version line."""
    out = {}
    m = re.search(r"^Sched Debug Version: (.*)$", text, re.M)
    if m:
        out["version_line"] = m.group(1).strip()
    for name in ("base_slice", "min_granularity", "latency", "wakeup_granularity"):
        m = re.search(rf"^\s*\.sysctl_sched_{name}\s*:\s*([\d.]+)\s*$", text, re.M)
        if m:
            out[f"{name}_ns"] = parse_split_ns(m.group(1))
    m = re.search(r"^\s*\.sysctl_sched_features\s*:\s*(\d+)", text, re.M)
    if m:
        out["features"] = int(m.group(1))
    m = re.search(r"^\s*\.sysctl_sched_tunable_scaling\s*:\s*(\d+)", text, re.M)
    if m:
        out["tunable_scaling"] = int(m.group(1))
    return out


def scaling_factor(ncpus, scaling=1):
    """kernel/sched/fair.c, get_update_sysctl_factor(): the tunables are
    the normalized values times 1 (none), min(ncpus, 8) (linear) or
    1 + ilog2(min(ncpus, 8)) (logarithmic, the default)."""
    cpus = min(ncpus, 8)
    return {0: 1, 2: cpus}.get(scaling, 1 + cpus.bit_length() - 1)


def default_tunables(release, ncpus, scaling=1):
    """The fair class's tunables a kernel of this release boots with, in ns
    (kernel/sched/fair.c): from 6.6 (EEVDF) sysctl_sched_base_slice =
    0.75 ms (renamed from sched_min_granularity), 0.70 ms from 6.15 (commit
    2ae891b "sched: Reduce the default slice to avoid tasks getting an
    extra tick"); before 6.6 (CFS) sched_latency 6 ms, min_granularity
    0.75 ms, wakeup_granularity 1 ms.  Each times scaling_factor(), as
    update_sysctl() sets them at boot."""
    factor = scaling_factor(ncpus, scaling)
    version = release_version(release)
    if version >= (6, 15):
        normalized = {"base_slice_ns": 700_000}
    elif version >= (6, 6):
        normalized = {"base_slice_ns": 750_000}
    else:
        normalized = {"latency_ns": 6_000_000, "min_granularity_ns": 750_000,
                      "wakeup_granularity_ns": 1_000_000}
    return {k: v * factor for k, v in normalized.items()}


def debugfs_mountpoint(mounts_text):
    """Where debugfs is mounted, from /proc/self/mounts, or None."""
    for line in mounts_text.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == "debugfs":
            return fields[1]
    return None


@contextlib.contextmanager
def _debugfs():
    """(debugfs's root, how it was reached): where it is mounted, or else
    mounted for the block on a temporary directory of our own and unmounted
    after it (the machine is left as it was); (None, why) where that is
    refused."""
    try:
        with open("/proc/self/mounts") as f:
            where = debugfs_mountpoint(f.read())
    except OSError as e:
        yield None, f"/proc/self/mounts: {e.strerror}"
        return
    if where:
        yield where, f"debugfs at {where}"
        return
    if os.geteuid() != 0:
        yield None, "debugfs is not mounted and mounting it needs root"
        return
    with tempfile.TemporaryDirectory(prefix="pysched-debugfs-") as tmp:
        try:
            mount = subprocess.run(["mount", "-t", "debugfs", "debugfs", tmp],
                                   capture_output=True, text=True)
        except OSError as e:
            yield None, f"debugfs is not mounted and mount could not run: {e.strerror}"
            return
        if mount.returncode:
            yield None, f"debugfs is not mounted and mount refused: {mount.stderr.strip()}"
            return
        try:
            yield tmp, "debugfs (mounted for the reading, then unmounted)"
        finally:
            subprocess.run(["umount", tmp], capture_output=True)


def _read(path):
    """(text, None) or (None, the error's reason)."""
    try:
        with open(path) as f:
            return f.read(), None
    except OSError as e:
        return None, e.strerror or str(e)


def read_tunables(release=None, ncpus=None):
    """The fair class's tunables in ns, with where they came from: debugfs's
    sched/base_slice_ns, else the sysctl_sched block of sched/debug (which
    stays readable where the writable files are refused with EPERM, as
    under lockdown), else default_tunables() for the release and the online
    CPUs; `notes` says what could not be read.  Also the tunable scaling
    and the sched_features bits where debugfs shows them."""
    release = release or platform.release()
    ncpus = ncpus or read_online_cpus()
    out = {"source": None, "notes": []}
    with _debugfs() as (root, how):
        if root is None:
            out["notes"].append(how)
        else:
            text, why = _read(os.path.join(root, "sched", "base_slice_ns"))
            if text is not None:
                out["base_slice_ns"] = int(text)
                out["source"] = f"{how}: sched/base_slice_ns"
            else:
                out["notes"].append(f"sched/base_slice_ns: {why}")
            text, why = _read(os.path.join(root, "sched", "debug"))
            if text is not None:
                header = parse_sched_debug_header(text)
                for key, value in header.items():
                    out.setdefault(key, value)
                if out["source"] is None and header.keys() & {"base_slice_ns",
                                                              "min_granularity_ns"}:
                    out["source"] = f"{how}: sched/debug"
            else:
                out["notes"].append(f"sched/debug: {why}")
    if out["source"] is None:
        scaling = out.get("tunable_scaling", 1)
        out.update(default_tunables(release, ncpus, scaling))
        out["source"] = (f"the documented default of {release} times "
                         f"{scaling_factor(ncpus, scaling)} for {ncpus} CPUs "
                         f"({SCALING_NAMES.get(scaling, scaling)} scaling)")
    out.setdefault("tunable_scaling", 1)
    out["scaling"] = SCALING_NAMES.get(out["tunable_scaling"], str(out["tunable_scaling"]))
    return out


def read_sched_sysctls(directory="/proc/sys/kernel"):
    """Every /proc/sys/kernel/sched_* that can be read, as {name: int or str}."""
    out = {}
    try:
        names = sorted(n for n in os.listdir(directory) if n.startswith("sched_"))
    except OSError:
        return out
    for name in names:
        text, _ = _read(os.path.join(directory, name))
        if text is not None:
            text = text.strip()
            out[name] = int(text) if re.fullmatch(r"-?\d+", text) else text
    return out


# ---------------------------------------------------------------- CPU time

def parse_schedstat(text):
    """/proc/<pid>/schedstat (fs/proc/base.c, proc_pid_schedstat()):
    se.sum_exec_runtime, sched_info.run_delay (ns), pcount.  The kernel
    prints "0 0 0" when sched_info is off."""
    fields = text.split()
    if len(fields) != 3:
        raise ValueError(f"/proc/<pid>/schedstat should hold 3 numbers, not {text!r}")
    return tuple(int(x) for x in fields)


def parse_stat_cpu_ns(text, clk_tck):
    """utime + stime of /proc/<pid>/stat (fields 14 and 15, in clock ticks
    of clk_tck a second) in ns.  The command name (field 2) may hold spaces
    and parentheses, so the fields are counted after its last ')'."""
    rest = text[text.rindex(")") + 1:].split()
    # rest[0] is field 3 (state): utime is field 14, stime field 15
    return (int(rest[11]) + int(rest[12])) * 1_000_000_000 // clk_tck
