"""The benchmark beside schedsim, a peer that is never a dependency: it
documents its defaults, gives schedsim bench_simso.py's task set, and where
schedsim cannot be had it says why and runs pysched alone.  No test here
builds, clones or runs schedsim."""
import json
import math
import subprocess
import sys

import pytest

from repo_paths import ROOT

BENCHMARKS = ROOT / "benchmarks"

pytestmark = pytest.mark.skipif(not (BENCHMARKS / "bench_schedsim.py").is_file(),
                                reason="the sdist ships no benchmarks/ (a clone does)")


def run(*args):
    out = subprocess.run([sys.executable, str(BENCHMARKS / "bench_schedsim.py"), *args],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import bench_schedsim
    return bench_schedsim


def test_help_shows_the_defaults():
    text = run("--help")
    assert "(default: 60" in text and "(default: 3)" in text


@pytest.mark.parametrize("peer, why", [
    (["--schedsim-bin", "/nonexistent/schedsim"], "is not an executable file"),
    (["--schedsim-src", "{tmp}"], "is not a schedsim source tree")])
def test_without_a_simulator_it_says_why_and_runs_pysched_alone(peer, why, tmp_path):
    text = run("--quick", "--cache", str(tmp_path / "cache"),
               *(a.format(tmp=tmp_path) for a in peer))
    assert "schedsim is not available" in text
    assert why in text
    cases = [line.split("  ")[0] for line in text.splitlines()]
    assert cases.count("pysched FIFO (RM prios)") == 2 and cases.count("pysched NORMAL") == 2
    assert not any(case.startswith("schedsim EDF") for case in cases)


def test_the_scenario_lists_bench_simsos_jobs_to_the_ns(bench, tmp_path):
    tasks = bench.task_set(1)
    platform_file, scenario_file = bench.write_inputs(tasks, 2.0, tmp_path)
    assert json.loads(platform_file.read_text()) == {"clusters": [{"procs": 4, "perf_score": 1.0}]}
    scenario = json.loads(scenario_file.read_text())["tasks"]
    assert [t["id"] for t in scenario] == list(range(1, 21))
    for (period_ms, wcet_us), task in zip(tasks, scenario):
        assert round(task["period"] * 1e9) == round(task["relative_deadline"] * 1e9) \
            == period_ms * 1_000_000
        arrivals = [round(job["arrival"] * 1e9) for job in task["jobs"]]
        assert arrivals == [k * period_ms * 1_000_000 for k in range(math.ceil(2000 / period_ms))]
        assert {round(job["duration"] * 1e9) for job in task["jobs"]} == {wcet_us * 1000}
