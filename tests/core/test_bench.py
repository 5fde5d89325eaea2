"""python -m pysched bench: the performance page's figures on this machine,
labelled with its processor; instruction counts where valgrind is
installed."""
import os
import shutil
import subprocess
import sys

import pytest

import pysched.bench as bench


def run_bench(*args):
    out = subprocess.run([sys.executable, "-m", "pysched", "bench", "--quick", *args],
                         capture_output=True, text=True, check=True).stdout
    head, *rest = out.splitlines()
    rows = [line.split("|")[1:-1] for line in rest if line.startswith("| ") and "---" not in line]
    return head, [[c.strip() for c in r] for r in rows[1:]]


def test_the_table_has_a_row_per_case_and_preset_headed_by_the_processor():
    head, rows = run_bench("--case", "two hogs", "--case", "sleepers",
                           "--preset", "linux-2.5.65", "--preset", "linux-6.12-eevdf")
    assert head.startswith(f"pysched bench on {bench.cpu_model()}, Python ")
    assert [(r[0], r[1]) for r in rows] == [
        ("two hogs", "linux-2.5.65"), ("two hogs", "linux-6.12-eevdf"),
        ("sleepers", "linux-2.5.65"), ("sleepers", "linux-6.12-eevdf")]
    for r in rows:
        rate, per_tick, per_event = (float(c.rstrip(" M").replace(",", "")) for c in r[2:5])
        assert rate > 0 and per_tick > 0 and per_event > 0
        assert r[5] == r[6] == ""   # no instruction counts unless asked


def test_a_row_counts_the_events_of_its_run():
    row = bench.measure("sleepers", "linux-2.5.65", min_seconds=0.001, reps=1)
    sim = bench.CASES["sleepers"][1]("linux-2.5.65")
    sim.run(ticks=row.ticks)
    st = sim.stats()
    assert row.events == int(st["nvcsw"].sum() + st["nivcsw"].sum() + st["nr_wakeups"].sum()) > 0
    assert row.ns_per_event == pytest.approx(row.seconds * 1e9 / row.events)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="valgrind cannot run a process that AddressSanitizer instruments")
def test_instructions_per_event_are_counted_by_callgrind():
    _, rows = run_bench("--instructions", "--case", "two hogs", "--preset", "linux-2.5.65")
    (row,) = rows
    per_tick, per_event = (float(c.replace(",", "")) for c in row[5:7])
    # two hogs, 100 ms slices: a switch every 100 ticks, each of hundreds
    # to a few thousand instructions; the interpreter's would be millions
    assert 100 < per_event < 20_000 and 1 < per_tick < per_event


def test_an_unknown_case_is_refused_by_the_command_line():
    r = subprocess.run([sys.executable, "-m", "pysched", "bench", "--case", "three hogs"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "invalid choice: 'three hogs'" in r.stderr
