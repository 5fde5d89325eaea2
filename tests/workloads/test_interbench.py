"""interbench in the simulator: its tasks, loads, matrix and layout
(pysched.workloads.interbench, pysched.programs)."""
import re
import subprocess
import sys

import pytest

import pysched as ps
from pysched.workloads import interbench

SAMPLES = {"audio": 600, "video": 1801, "x": 301, "gaming": 300}
PRESETS = ("linux-2.4.20", "linux-2.5.64", "linux-2.5.65", "houston-2003")


@pytest.mark.parametrize("preset", PRESETS)
def test_on_an_idle_cpu_every_task_is_on_time_with_interbenchs_sample_counts(preset):
    # at HZ=1000: 2.4's own HZ=100 has timer slop that X's tightest frames
    # feel (tests/core/test_periodic.py)
    table = interbench.run(preset, loads=("none",), hz=1000)
    assert list(table["benchmark"]) == ["audio", "video", "x", "gaming"]
    assert dict(zip(table["benchmark"], table["samples"])) == SAMPLES
    assert (table["latency_mean_ms"] == 0).all() and (table["latency_max_ms"] == 0).all()
    assert (table["desired_cpu_pct"] == 100).all()
    met = table.set_index("benchmark")["deadlines_met_pct"]
    assert (met.drop("gaming") == 100).all() and met.isna()["gaming"]  # Gaming has no deadlines


def test_the_matrix_is_the_same_on_every_run_and_rows_rerun_alone():
    a = interbench.run("linux-2.5.65", duration_s=10)
    b = interbench.run("linux-2.5.65", duration_s=10)
    assert a.equals(b)
    # 4 benchmarks x 8 loads, none against itself
    assert len(a) == 4 * 8 - 2
    assert not ((a["benchmark"] == a["load"]).any())
    row = interbench.run_one("linux-2.5.65", "video", "burn", duration_s=10)
    mine = a[(a["benchmark"] == "video") & (a["load"] == "burn")].iloc[0]
    assert row["latency_mean_ms"] == mine["latency_mean_ms"] and row["samples"] == mine["samples"]


def test_a_burn_load_costs_2_5_65s_video_frames_and_its_numbers_are_consistent():
    row = interbench.run_one("linux-2.5.65", "video", "burn", duration_s=10)
    # a call that begins late skips whole periods: fewer calls than the 601
    # of an idle CPU
    assert 0 < row["samples"] < 601
    assert 0 < row["deadlines_met_pct"] < 100 and 0 < row["desired_cpu_pct"] < 100
    assert row["latency_max_ms"] >= row["latency_p99_ms"] > 0
    # interbench's SD quirk divides mean^2 by n where the sample variance
    # multiplies: its "SD" is nearer the RMS, larger than the corrected one
    assert row["latency_sd_ms"] > row["latency_sd_corrected_ms"]


def test_the_duration_is_rounded_up_to_ten_seconds_as_interbench_does():
    row = interbench.run_one("linux-2.5.65", "audio", "none", duration_s=3)
    assert row["samples"] == 200


def test_the_report_is_in_interbenchs_layout():
    table = interbench.run("linux-2.5.65", duration_s=10, benchmarks=["audio", "gaming"],
                           loads=["none", "burn"])
    text = interbench.report(table)
    lines = text.splitlines()
    assert lines[0] == "--- Benchmarking simulated cpu of Audio in the presence of simulated ---"
    assert lines[1] == "Load\tLatency +/- SD (ms)  Max Latency   % Desired CPU  % Deadlines Met"
    assert re.fullmatch(r"None\t +0\.0 \+/- 0\.0 +0\.0\t\t 100\t +100", lines[2])
    # Gaming has no deadlines column
    gaming = lines.index("--- Benchmarking simulated cpu of Gaming in the presence of simulated ---")
    assert lines[gaming + 1].endswith("% Desired CPU")
    both = interbench.side_by_side([table, interbench.run("houston-2003", duration_s=10,
                                                          benchmarks=["audio"], loads=["none"])])
    assert "linux-2.5.65" in both.splitlines()[0] and "houston-2003" in both.splitlines()[0]


def test_the_command_line_prints_several_presets_side_by_side():
    out = subprocess.run([sys.executable, "-m", "pysched", "interbench", "--preset", "linux-2.5.64",
                          "--preset", "linux-2.5.65", "--benchmark", "audio", "--load", "none",
                          "--duration", "10"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "=== linux-2.5.64 ===" in out.stdout and "=== linux-2.5.65 ===" in out.stdout
    assert re.search(r"Audio\s+None\s+0\.0\s+0\.0\s+100\s+100\s+0\.0\s+0\.0\s+100\s+100", out.stdout)


@pytest.mark.parametrize("call, error, match", [
    (lambda: interbench.run("linux-2.5.65", loads=["burm"]), ValueError, "unknown load 'burm'.*burn"),
    (lambda: interbench.run("linux-2.5.65", benchmarks=["audio", "mp3"]), ValueError,
     "unknown benchmark 'mp3'"),
    (lambda: interbench.run("linux-2.5.65", duration_s=-5), ValueError, "duration_s=-5"),
    (lambda: interbench.run("linux-2.5.65", cpus=0), ValueError, "cpus=0"),
    (lambda: interbench.run("linux-2.5.65", params={"max_sleep_avgg": 1}), KeyError, "max_sleep_avgg"),
    (lambda: ps.programs.media_player(10, 15), ValueError, "duty cycle of 150 %"),
    (lambda: ps.programs.media_player(-10, 1), ValueError, "period_ms=-10"),
    (lambda: ps.programs.media_player(0, 0), ValueError, "period_ms=0 must be > 0"),
    (lambda: ps.programs.io_bound(-1, 2), ValueError, "read_ms=-1"),
    (lambda: ps.programs.pipe_ring(1), ValueError, "n=1"),
    (lambda: ps.programs.pipe_ring(4, work_us=0), ValueError, "work_us=0"),
    (lambda: ps.programs.burn(0), ValueError, "threads=0"),
])
def test_invalid_workload_parameters_raise_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_the_workloads_do_what_they_say():
    sim = ps.Simulator("linux-2.5.65")
    player = sim.spawn(ps.programs.media_player(40, 10))
    reader = sim.spawn(ps.programs.io_bound(read_ms=3, cpu_ms=1))
    sim.run(seconds=10)
    # the player: a 25 % duty cycle, every period on time on a nearly idle CPU
    assert sim.task(player).cpu_ns == pytest.approx(0.25 * 10e9, rel=0.01)
    assert len(sim.periodic(player)) == 250 and sim.periodic(player)["met"].all()
    # the reader: 1 ms of CPU per 3 ms of reading (waits for the CPU aside)
    t = sim.task(reader)
    assert t.cpu_ns / t.sleep_ns == pytest.approx(1 / 3, rel=0.01)
    # the ring: one member always holds the token, so the CPU is busy, and
    # each computes in turn, so they share it equally
    sim = ps.Simulator("linux-2.5.65")
    ring = [sim.spawn(p) for p in ps.programs.pipe_ring(3, work_us=50)]
    sim.run(seconds=10)
    cpu = [sim.task(p).cpu_ns for p in ring]
    assert sum(cpu) == pytest.approx(10e9, rel=0.001)
    assert max(cpu) - min(cpu) <= 50_000 and min(cpu) > 0
