"""pysched.realkernel: the same workload on this machine's kernel and in the
simulator.  The readers and parsers are checked on canned copies of what a
6.18 kernel and perf 6.1 printed (tests/data/realkernel/); the measurement
itself runs for real where the machine allows it (root or enough rights,
perf, /proc) and skips saying why where it does not."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import pysched as ps
from pysched import realkernel
from pysched.realkernel import perf_sched
from pysched.policy.registry import ParamInfo

import repo_paths
from repo_paths import ROOT

DATA = repo_paths.DATA / "realkernel"

# docs/schedulers/cfs.md section 2 (kernel/sched/core.c,
# sched_prio_to_weight): the weights of the nice values these tests use
WEIGHT = {-5: 3121, 0: 1024, 1: 820, 5: 335, 10: 110, 19: 15}


def ns(stamp):
    """A perf timestamp "87640.361301390" in ns."""
    s, frac = stamp.split(".")
    return int(s) * 10**9 + int(frac)


# ---------------------------------------------------------------- perf script

def test_the_sleepers_latencies_run_from_its_waking_to_its_switch_in():
    text = (DATA / "perf_script_sleeper.txt").read_text()
    lat = realkernel.wakeup_latencies(text, 7694)
    # the file's seven (sched_waking pid=7694, sched_switch next_pid=7694) pairs
    pairs = [("87640.361301390", "87640.361310698"), ("87640.372391697", "87640.376021781"),
             ("87640.387113341", "87640.387126001"), ("87640.398195342", "87640.398208322"),
             ("87640.409280073", "87640.409290445"), ("87640.420352006", "87640.424021733"),
             ("87640.435104515", "87640.435114149")]
    assert lat["time_ns"].tolist() == [ns(run) for _, run in pairs]
    assert lat["latency_ns"].tolist() == [ns(run) - ns(woke) for woke, run in pairs]


def test_the_hog_is_preempted_but_never_woken_so_it_has_no_wakeup_latency():
    text = (DATA / "perf_script_sleeper.txt").read_text()
    assert len(realkernel.wakeup_latencies(text, 7693)) == 0


def test_a_window_keeps_the_wakeups_that_began_in_it_and_ran_by_its_end():
    text = (DATA / "perf_script_sleeper.txt").read_text()
    lat = realkernel.wakeup_latencies(text, 7694, start_ns=ns("87640.372391697"),
                                      end_ns=ns("87640.424021733"))
    # from the second waking to the sixth switch-in: wakeups 2..6
    assert len(lat) == 5
    assert lat["time_ns"][0] == ns("87640.376021781")
    assert lat["time_ns"][-1] == ns("87640.424021733")
    cut = realkernel.wakeup_latencies(text, 7694, start_ns=ns("87640.372391697") + 1,
                                      end_ns=ns("87640.424021733") - 1)
    assert len(cut) == 3


SYNTHETIC = """\
Warning: a line perf prints that is no event
[000] 100.000000000:       sched:sched_waking: comm=Web Content pid=42 prio=120 target_cpu=000
[000] 100.000001000:       sched:sched_wakeup: comm=Web Content pid=42 prio=120 target_cpu=000
[000] 100.000500000:       sched:sched_switch: prev_comm=hog prev_pid=7 prev_prio=120 prev_state=R ==> next_comm=Web Content next_pid=42 next_prio=120
[000] 100.000600000:       sched:sched_waking: comm=Web Content pid=42 prio=120 target_cpu=000
[000] 100.001000000:       sched:sched_switch: prev_comm=Web Content prev_pid=42 prev_prio=120 prev_state=S ==> next_comm=hog next_pid=7 next_prio=120
[000] 100.002000000:       sched:sched_waking: comm=Web Content pid=42 prio=120 target_cpu=000
[000] 100.003000000:       sched:sched_switch: prev_comm=hog prev_pid=7 prev_prio=120 prev_state=R ==> next_comm=Web Content next_pid=42 next_prio=120
[000] 100.003500000:       sched:sched_switch: prev_comm=Web Content prev_pid=42 prev_prio=120 prev_state=R+ ==> next_comm=hog next_pid=7 next_prio=120
[000] 100.004000000:       sched:sched_switch: prev_comm=hog prev_pid=7 prev_prio=120 prev_state=R ==> next_comm=Web Content next_pid=42 next_prio=120
[000] 100.005000000:       sched:sched_waking: comm=x pid=420 prio=120 target_cpu=000
[000] 100.005000000:       sched:sched_waking: comm=pid=42 prio=1 pid=43 prio=120 target_cpu=000
"""


def test_wakeups_are_counted_from_waking_once_per_sleep_and_names_with_spaces_parse():
    lat = realkernel.wakeup_latencies(SYNTHETIC, 42)
    # 1st: waking at 0, wakeup at 1 us, run at 500 us -> 500 us (from the waking);
    # the waking at 600 us comes while it runs: no wakeup; it sleeps at 1 ms,
    # is woken at 2 ms and runs at 3 ms -> 1 ms; preempted at 3.5 ms and back
    # at 4 ms: a preemption, no wakeup; pids 420 and 43 are other tasks
    assert lat["latency_ns"].tolist() == [500_000, 1_000_000]
    assert lat["time_ns"].tolist() == [100_000_500_000, 100_003_000_000]


def test_no_events_give_an_empty_array_of_the_latency_dtype():
    lat = realkernel.wakeup_latencies("", 1)
    assert lat.dtype == realkernel.LATENCY_DTYPE and len(lat) == 0


# ---------------------------------------------------------------- HZ

def test_config_hz_is_read_from_a_kernel_config():
    text = ("# Timer frequency\n# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\n"
            "# CONFIG_HZ_1000 is not set\nCONFIG_HZ=250\nCONFIG_LOCALVERSION=\"-fc\"\n")
    config = realkernel.parse_config(text)
    assert config["CONFIG_HZ"] == "250" and config["CONFIG_HZ_250"] == "y"
    assert "CONFIG_HZ_1000" not in config
    assert config["CONFIG_LOCALVERSION"] == "-fc"


def test_the_local_timer_line_gives_one_count_per_cpu():
    counts = realkernel.local_timer_counts((DATA / "interrupts.txt").read_text())
    assert counts == [4205849, 5519394]


def test_interrupts_without_a_local_timer_line_are_refused():
    with pytest.raises(ValueError, match="LOC"):
        realkernel.local_timer_counts("           CPU0\n  0:         44   IO-APIC   2-edge  timer\n")


@pytest.mark.parametrize("rate, slack, hz", [
    (251.3, 2, 250), (249, 2, 250), (291, 6, 250), (296, 6, 300), (1004, 2, 1000),
    (99.5, 2, 100), (500, 2, 500), (20, 2, 20)])
def test_a_counted_rate_snaps_to_the_standard_hz_just_below_it(rate, slack, hz):
    from pysched.realkernel import kernel_info
    assert kernel_info.snap_hz(rate, slack) == hz


def test_the_quietest_stretch_of_interrupts_is_taken_as_the_tick():
    from pysched.realkernel import kernel_info
    # 250 ticks/s, plus a burst of 40 hrtimer interrupts in the second stretch
    samples = [(0.0, 1000), (0.25, 1062), (0.5, 1164), (0.75, 1227), (1.0, 1290)]
    assert kernel_info.quietest_rate(samples) == 248
    assert kernel_info.snap_hz(kernel_info.quietest_rate(samples), 6) == 250


def test_jiffies_are_read_from_the_timer_list():
    from pysched.realkernel import kernel_info
    text = ("Timer List Version: v0.10\nHRTIMER_MAX_CLOCK_BASES: 8\nnow at 87716 nsecs\n\n"
            "  .last_jiffies   : 4316857904\n  .next_timer     : 87716000000\n"
            "jiffies: 4316860212\n\njiffies: 4316860213\n")
    assert kernel_info.timer_list_jiffies(text) == 4316860212
    with pytest.raises(ValueError, match="jiffies"):
        kernel_info.timer_list_jiffies("  .last_jiffies   : 4316857904\n")


def test_the_preemption_model_is_the_configs_unless_the_command_line_chooses():
    from pysched.realkernel import kernel_info
    config = {"CONFIG_PREEMPT_NONE": "y", "CONFIG_PREEMPT_DYNAMIC": "y"}
    assert kernel_info.preempt_model(config) == "none"
    assert kernel_info.preempt_model(config, "quiet preempt=full") == "full"
    assert kernel_info.preempt_model({"CONFIG_PREEMPT_NONE": "y"}, "preempt=full") == "none"


# ---------------------------------------------------------------- tunables

def test_the_base_slice_is_read_exactly_from_sched_debug():
    header = realkernel.parse_sched_debug_header((DATA / "sched_debug_6.18.txt").read_text())
    # "1.400000": PN() prints milliseconds, then the nanoseconds left over
    assert header["base_slice_ns"] == 1_400_000
    assert header["features"] == 99674079
    assert header["tunable_scaling"] == 1
    assert header["version_line"].startswith("v0.11, 6.18.44")


def test_a_cfs_kernels_sched_debug_gives_its_three_tunables():
    # kernel/sched/debug.c before 6.6: PN(sysctl_sched_latency),
    # PN(sysctl_sched_min_granularity), PN(sysctl_sched_wakeup_granularity)
    text = ("Sched Debug Version: v0.11, 6.1.0 #1\nsysctl_sched\n"
            "  .sysctl_sched_latency                    : 12.000000\n"
            "  .sysctl_sched_min_granularity            : 1.500000\n"
            "  .sysctl_sched_idle_min_granularity       : 0.750000\n"
            "  .sysctl_sched_wakeup_granularity         : 2.000001\n"
            "  .sysctl_sched_child_runs_first           : 0\n"
            "  .sysctl_sched_features                   : 58611259\n"
            "  .sysctl_sched_tunable_scaling            : 1 (logarithmic)\n")
    header = realkernel.parse_sched_debug_header(text)
    assert (header["latency_ns"], header["min_granularity_ns"],
            header["wakeup_granularity_ns"]) == (12_000_000, 1_500_000, 2_000_001)
    assert "base_slice_ns" not in header


@pytest.mark.parametrize("release, ncpus, scaling, expected", [
    # 6.15+: 0.70 ms x (1 + ilog2(min(ncpus, 8)))
    ("6.18.44-fc-v1147", 2, 1, {"base_slice_ns": 1_400_000}),
    ("6.15.0", 1, 1, {"base_slice_ns": 700_000}),
    ("6.18.0", 64, 1, {"base_slice_ns": 2_800_000}),
    # 6.6 .. 6.14: 0.75 ms
    ("6.12.9", 2, 1, {"base_slice_ns": 1_500_000}),
    ("6.6.0", 8, 1, {"base_slice_ns": 3_000_000}),
    ("6.6.0", 4, 1, {"base_slice_ns": 2_250_000}),
    # none: x1; linear: x min(ncpus, 8)
    ("6.12.0", 16, 0, {"base_slice_ns": 750_000}),
    ("6.12.0", 16, 2, {"base_slice_ns": 6_000_000}),
    # CFS: 6 ms, 0.75 ms, 1 ms, x4 on 8 CPUs (24 ms / 3 ms / 4 ms)
    ("6.5.0", 8, 1, {"latency_ns": 24_000_000, "min_granularity_ns": 3_000_000,
                     "wakeup_granularity_ns": 4_000_000}),
])
def test_the_documented_defaults_scale_with_the_cpus(release, ncpus, scaling, expected):
    assert realkernel.default_tunables(release, ncpus, scaling) == expected


def test_a_release_that_is_not_a_version_is_refused():
    with pytest.raises(ValueError, match="'custom'"):
        realkernel.default_tunables("custom", 2)


# ---------------------------------------------------------------- CPU time

def test_schedstat_gives_the_runtime_the_wait_and_the_slices():
    assert realkernel.parse_schedstat("38543624 966328 30\n") == (38543624, 966328, 30)
    with pytest.raises(ValueError, match="3 numbers"):
        realkernel.parse_schedstat("38543624 966328\n")


def test_stat_cpu_time_counts_fields_after_the_last_parenthesis():
    # a command name with spaces and a ')' of its own; utime 150, stime 50
    fields = ["R", "1", "2", "2", "0", "-1", "4194304", "10", "0", "0", "0", "150", "50"]
    text = "1234 (my (odd) task) " + " ".join(fields + ["0"] * 39) + "\n"
    assert realkernel.parse_stat_cpu_ns(text, 100) == 2_000_000_000


# ---------------------------------------------------------------- presets and parameters

def test_the_newest_fair_preset_not_newer_than_the_kernel_is_chosen(monkeypatch):
    names = ["linux-2.5.65", "linux-6.5-cfs", "linux-6.6-eevdf", "linux-6.12-eevdf",
             "houston-2003"]
    monkeypatch.setattr(realkernel, "presets", lambda: names)
    assert realkernel.default_preset("6.18.44-fc-v1147") == "linux-6.12-eevdf"
    assert realkernel.default_preset("6.8.0") == "linux-6.6-eevdf"
    assert realkernel.default_preset("6.5.3") == "linux-6.5-cfs"
    assert realkernel.default_preset("5.15.0") == "linux-6.5-cfs"
    monkeypatch.setattr(realkernel, "presets", lambda: names + ["linux-6.15-eevdf"])
    assert realkernel.default_preset("6.18.44") == "linux-6.15-eevdf"


def test_without_a_fair_preset_the_fallback_is_linux_2_5_65(monkeypatch):
    monkeypatch.setattr(realkernel, "presets", lambda: ["linux-2.5.65", "houston-2003"])
    assert realkernel.default_preset("6.18.44") == "linux-2.5.65"


@pytest.mark.parametrize("name, unit, default, value", [
    ("base_slice_ns", "ns", 750_000, 1_400_000), ("base_slice_us", "us", 750, 1400),
    ("base_slice", "ms", 0.75, 1.4), ("sched_base_slice_ns", "ns", 750_000, 1_400_000)])
def test_the_measured_slice_sets_the_presets_parameter_in_its_unit(monkeypatch, name, unit,
                                                                   default, value):
    declared = [ParamInfo(name, default, 0 if unit != "ms" else 0.0, 10**9, unit, ""),
                ParamInfo("run_to_parity", 1, 0, 1, "bool", "")]
    monkeypatch.setattr(realkernel, "preset_params", lambda preset, hz=None: declared)
    params, notes = realkernel.tunable_params("x", {"base_slice_ns": 1_400_000,
                                                    "features": 99674079})
    assert params == {name: value} and notes == []


def test_a_tunable_the_preset_lacks_or_cannot_take_is_noted_not_set(monkeypatch):
    params, notes = realkernel.tunable_params("linux-2.5.65", {"base_slice_ns": 1_400_000})
    assert params == {} and "base_slice_ns" in notes[0]
    declared = [ParamInfo("base_slice_ns", 750_000, 100_000, 100_000_000, "ns", "")]
    monkeypatch.setattr(realkernel, "preset_params", lambda preset, hz=None: declared)
    params, notes = realkernel.tunable_params("x", {"base_slice_ns": 200_000_000})
    assert params == {} and "outside" in notes[0] and "200000000" in notes[0]


# ---------------------------------------------------------------- simulating

def saved():
    import json
    path = ROOT / "experiments" / "data" / "real_kernel_shares.json"
    if not path.exists():
        pytest.skip("the sdist ships no experiments/ (a clone does)")
    return json.loads(path.read_text())


def test_the_simulation_runs_the_measured_workload_at_the_measured_hz():
    data = saved()
    one = data["sets"][-1]
    measurement = {"machine": data["machine"], "workload": dict(data["workload"],
                                                                nices=one["nices"])}
    sim = realkernel.simulate(measurement, "linux-2.5.65")
    assert sim["preset"] == "linux-2.5.65"
    assert sim["window_ns"] == round(data["workload"]["seconds"] * 1e9)
    assert len(sim["cpu_ns"]) == len(one["nices"])
    # the hogs and the sleeper keep the one CPU busy the whole window
    assert sim["busy"] == pytest.approx(1.0)
    # HZ=250: every simulated timer wakeup, and so every run after it, is on a 4 ms tick
    assert len(sim["latencies"]) > 0
    assert np.all((sim["latencies"]["time_ns"] - sim["latencies"]["latency_ns"]) % 4_000_000 == 0)


class SlicedRoundRobin(ps.policy.examples.RoundRobin):
    """A preset with a base slice in ns, as the fair presets declare theirs."""
    name = "rr-with-base-slice"
    params = dict(ps.policy.examples.RoundRobin.params,
                  base_slice_ns=ps.Param(750_000, 100_000, 100_000_000, unit="ns", doc="slice"))
    seen = []

    def setup(self):
        super().setup()
        SlicedRoundRobin.seen.append(self.base_slice_ns)


def test_a_preset_with_a_base_slice_simulates_with_the_measured_one(monkeypatch):
    from pysched.policy import base as policy
    monkeypatch.setattr(policy, "_registered", dict(policy._registered))
    ps.register_policy(SlicedRoundRobin)
    data = saved()
    one = data["sets"][0]
    measurement = {"machine": data["machine"], "workload": dict(data["workload"],
                                                                nices=one["nices"])}
    SlicedRoundRobin.seen.clear()
    sim = realkernel.simulate(measurement, "rr-with-base-slice")
    assert data["machine"]["tunables"]["base_slice_ns"] == 1_400_000
    assert sim["params"] == {"base_slice_ns": 1_400_000} and sim["notes"] == []
    assert SlicedRoundRobin.seen == [1_400_000]


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("kwargs, error, words", [
    ({"nices": [0, 20]}, ValueError, "nice=20 is outside the allowed range -20..19"),
    ({"nices": []}, ValueError, "1..8 hogs"),
    ({"nices": list(range(9))}, ValueError, "1..8 hogs"),
    ({"nices": "0 5"}, TypeError, "list of nice values"),
    ({"nices": [0, 5.0]}, TypeError, "nice must be an int"),
    ({"nices": [0], "seconds": 0}, ValueError, "seconds=0"),
    ({"nices": [0], "warmup_s": -1}, ValueError, "warmup_s=-1"),
    ({"nices": [0], "sleep_ms": 0}, ValueError, "sleep_ms=0"),
    ({"nices": [0], "sleeper_nice": -21}, ValueError, "sleeper_nice=-21"),
    ({"nices": [0], "sleeper": 1}, TypeError, "sleeper must be a bool"),
    ({"nices": [0], "cpu": 4095}, ValueError, "cpu=4095 is not one this process may use"),
])
def test_bad_arguments_are_refused_before_anything_starts(kwargs, error, words):
    with pytest.raises(error, match=re.escape(words)):
        realkernel.measure(**kwargs)


# ---------------------------------------------------------------- the real machine

def needs(nices=(), latency=True):
    why = realkernel.unavailable(nices, latency)
    if why:
        pytest.skip(f"cannot measure on this machine: {why}")


@pytest.fixture(scope="module")
def machine():
    needs()
    return realkernel.machine()


@pytest.mark.slow
@pytest.mark.parametrize("nices, sleeper", [((0, 5), True), ((-5, 0, 5), False)])
def test_measured_shares_follow_the_weight_table(machine, nices, sleeper):
    needs(nices, latency=sleeper)
    m = realkernel.measure(nices, 1.5, warmup_s=0.3, sleeper=sleeper, machine_info=machine)
    w = np.array([WEIGHT[n] for n in nices], dtype=float)
    expected = w / w.sum()
    # 0/+5: 75.4 / 24.6 %; -5/0/+5: 69.8 / 22.9 / 7.5 %
    assert np.abs(m["shares"] - expected).max() < 0.03, (m["shares"], expected)
    # every task of the measurement shares one autogroup (or there is none)
    assert len(set(m["autogroups"])) == 1


def test_the_sleepers_wakeups_are_recorded_by_perf(machine):
    needs((0,), latency=True)
    m = realkernel.measure([0], 1.0, warmup_s=0.2, machine_info=machine)
    lat = m["latencies"]
    assert len(lat) > 0
    assert np.all(lat["latency_ns"] >= 0)
    assert np.all(lat["latency_ns"] < m["window_ns"])
    # each wakeup ran inside the window (time_ns is CLOCK_MONOTONIC, as perf's -k)
    assert np.all(np.diff(lat["time_ns"]) > 0)
    assert m["sleeper_cpu_ns"] > 0


def _syscalls_of_the_sleeper(limit_s, sleep_s, work_s):
    """System calls the sleeper's program made in all, counted by perf stat
    (the raw_syscalls:sys_enter tracepoint), running for limit_s."""
    code = "import sys; from pysched.realkernel import SLEEPER; exec(SLEEPER)"
    out = subprocess.run(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", sys.executable,
                          "-c", code, str(limit_s), str(sleep_s), str(work_s)],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0 or "sys_enter" not in out.stderr or "<not" in out.stderr:
        pytest.skip(f"perf stat cannot count system calls here: {out.stderr.strip()[-300:]}")
    return int(out.stderr.strip().splitlines()[-1].split(",")[0])


def test_the_sleeper_makes_one_system_call_a_cycle_its_sleep(machine):
    """The sleeper's computation is a calibrated loop: between two sleeps
    it enters the kernel only to sleep (the CPU-time clock it once polled
    made a system call every 1,000 loops, tens of them per millisecond)."""
    if perf_sched.unavailable():
        pytest.skip(f"no perf here: {perf_sched.unavailable()}")
    sleep_s, work_s = 0.01, 0.002
    short = _syscalls_of_the_sleeper(0.3, sleep_s, work_s)
    long = _syscalls_of_the_sleeper(1.5, sleep_s, work_s)
    # 1.2 s more of the loop holds at most 1.2 / sleep_s = 120 cycles;
    # python's start and end make the same calls in both runs
    cycles = 1.2 / sleep_s
    assert long - short <= 1.2 * cycles, (short, long)
    # and it did loop: about one sleep a cycle (a cycle lasts sleep + work
    # + the wakeup's latency, so at least half of the most there can be)
    assert long - short >= 0.5 * 1.2 / (sleep_s + work_s + 0.004), (short, long)


def test_the_sleeper_computes_its_work_between_two_sleeps(machine):
    needs((0,), latency=True)
    m = realkernel.measure([0], 1.0, warmup_s=0.2, work_ms=2.0, machine_info=machine)
    assert m["sleeper_loops_per_ms"] > 0
    # its CPU time per wakeup is its 2 ms of work (and the few µs a
    # wakeup and a sleep cost), however the hog beside it interrupted it;
    # other load on the machine slows the loop against its calibration
    # (the fastest of five trials), seen up to 3.5 ms on a busy machine
    per_wakeup_ms = m["sleeper_cpu_ns"] / len(m["latencies"]) / 1e6
    assert 1.6 <= per_wakeup_ms <= 4.0, per_wakeup_ms


def test_an_interrupted_measurement_leaves_no_process_behind(machine, monkeypatch):
    needs((0,), latency=True)
    started = []
    start, recording = realkernel._Children.start, realkernel.perf_sched.Recording

    def start_and_note(self, *args):
        started.append(start(self, *args))
        return started[-1]

    def record_and_note(*args):
        r = recording(*args)
        started.append(r._proc.pid)
        return r

    def interrupt(seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(realkernel._Children, "start", start_and_note)
    monkeypatch.setattr(realkernel.perf_sched, "Recording", record_and_note)
    monkeypatch.setattr(realkernel.time, "sleep", interrupt)
    with pytest.raises(KeyboardInterrupt):
        realkernel.measure([0, 5], 5.0, machine_info=machine)
    assert len(started) == 4  # perf, two hogs, the sleeper
    # killed and reaped: no such process, not even a zombie
    assert [pid for pid in started if os.path.exists(f"/proc/{pid}")] == []


def test_reading_the_tunables_leaves_debugfs_as_it_was():
    if not sys.platform.startswith("linux"):
        pytest.skip("not Linux")

    def debugfs_mounts():
        with open("/proc/self/mounts") as f:
            return sorted(line for line in f if line.split()[2:3] == ["debugfs"])

    before = debugfs_mounts()
    tunables = realkernel.read_tunables()
    assert debugfs_mounts() == before
    assert tunables["source"]
    slice_or_granularity = tunables.get("base_slice_ns", tunables.get("min_granularity_ns"))
    assert slice_or_granularity > 0


def test_the_kernels_slice_is_its_documented_default(machine):
    t = machine["tunables"]
    if t["source"].startswith("the documented default"):
        pytest.skip(f"debugfs could not be read ({'; '.join(t['notes'])}): nothing to compare")
    expected = realkernel.default_tunables(machine["release"], machine["ncpus"],
                                           t["tunable_scaling"])
    assert {k: t[k] for k in expected} == expected, "tuned by someone? " + t["source"]


def test_counting_jiffies_finds_the_configured_hz(machine):
    from pysched.realkernel import kernel_info
    config, where = kernel_info.read_config()
    if not config or "CONFIG_HZ" not in config:
        pytest.skip(f"no kernel config to compare with: {where}")
    try:
        with open("/proc/timer_list") as f:
            kernel_info.timer_list_jiffies(f.read())
    except (OSError, ValueError) as e:
        pytest.skip(f"cannot read jiffies here: {e}")
    hz, rate, _ = realkernel.count_hz(seconds=1.0, source="jiffies")
    assert hz == int(config["CONFIG_HZ"]), rate


# ---------------------------------------------------------------- the docs

def test_the_docs_table_is_what_the_experiment_prints_from_its_saved_data():
    saved()
    section = (ROOT / "docs" / "experiments" / "real-kernel.md").read_text()
    preset = re.search(r"\| simulated, (\S+) \(%\) \|", section).group(1)
    if preset not in ps.presets():
        pytest.skip(f"the docs' table was simulated with {preset}, not in this build")
    out = subprocess.run([sys.executable, str(ROOT / "experiments" / "real_kernel_shares.py"),
                          "--from-json", "--markdown", "--preset", preset],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    printed = [line for line in out.stdout.splitlines()
               if line.startswith(("|", "- ", "Sets within"))]
    assert len(printed) >= 9
    for line in printed:
        assert line in section, line
