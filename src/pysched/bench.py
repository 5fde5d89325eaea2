"""The speed figures of the docs' performance page, regenerated on any
machine by one command::

    python -m pysched bench                  # wall time, best of 3, >= 0.5 s a case
    python -m pysched bench --instructions   # and instructions (valgrind's callgrind)
    python -m pysched bench --quick          # a smoke run

Each case is a workload under each preset family; what is timed is the
run (``Simulator.run``), not the Python that builds it.  Printed per case:
simulated ticks per second, ns per tick, and ns and instructions per
scheduling event (a context switch or a wakeup) -- the unit that follows
the work where there are events; where there are few (two hogs under a
long slice), the ticks between them weigh in.  Wall times are this machine's and are
labelled with its CPU model; instruction counts (``--instructions``:
callgrind counts inside ``ps_run_until`` only, in a child process, over
the first ``instruction_ticks`` ticks) are the same on any x86-64 machine
within a few per cent, whatever its speed.
"""
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from . import programs
from ._checks import check_number
from .program import Program
from .dist import uniform
from .simulator import Simulator

PRESETS = ("linux-2.4.20", "linux-2.5.65", "houston-2003", "linux-6.5-cfs", "linux-6.12-eevdf")


def _two_hogs(preset):
    sim = Simulator(preset, latencies=False)
    for i in range(2):
        sim.spawn(programs.cpu_hog(), name=f"hog{i}")
    return sim


def _sleepers(preset):
    sim = Simulator(preset, latencies=False)
    sim.spawn(programs.cpu_hog(), name="hog")
    for i in range(10):
        sim.spawn(Program().loop().run(ms=1).sleep(ms=uniform(50, 150)).end(), name=f"i{i}")
    return sim


def _eight_cpus(preset):
    sim = Simulator(preset, cpus=8, latencies=False)
    for i in range(48):
        sim.spawn(programs.cpu_hog(), name=f"hog{i}", nice=i % 11 - 5)
    for i in range(16):
        sim.spawn(Program().loop().run(ms=1).sleep(ms=uniform(50, 150)).end(), name=f"i{i}")
    return sim


# name: (what, build(preset))
CASES = {
    "two hogs": ("1 CPU, 2 CPU hogs", _two_hogs),
    "sleepers": ("1 CPU, a hog and 10 tasks running 1 ms, sleeping 50-150 ms", _sleepers),
    "8 CPUs": ("8 CPUs, 48 hogs of nice -5..+5 and 16 such sleepers", _eight_cpus),
}


@dataclass
class Row:
    case: str
    preset: str
    ticks: int
    seconds: float          # best wall time of the run
    events: int             # context switches + wakeups
    instructions_per_tick: float = None    # callgrind's, over instruction_ticks
    instructions_per_event: float = None

    @property
    def ns_per_tick(self):
        return self.seconds * 1e9 / self.ticks

    @property
    def ns_per_event(self):
        return self.seconds * 1e9 / max(self.events, 1)


def _events(sim):
    st = sim.stats()
    return int(st["nvcsw"].sum() + st["nivcsw"].sum() + st["nr_wakeups"].sum())


def _timed(build, preset, ticks):
    sim = build(preset)
    t0 = time.perf_counter()
    sim.run(ticks=ticks)
    return time.perf_counter() - t0, _events(sim)


def measure(case, preset, min_seconds=0.5, reps=3):
    """The Row of one case under one preset: ticks calibrated so that a
    run lasts at least min_seconds, the best of `reps` runs."""
    build = CASES[case][1]
    ticks = 1000
    while True:
        dt, events = _timed(build, preset, ticks)
        if dt >= min_seconds or ticks >= 10**8:
            break
        ticks = min(10**8, 4 * ticks, max(2 * ticks, int(ticks * 1.3 * min_seconds / max(dt, 1e-9))))
    best = min([dt] + [_timed(build, preset, ticks)[0] for _ in range(reps - 1)])
    return Row(case, preset, ticks, best, events)


def instructions(case, preset, ticks):
    """(instructions, events) of the run of `case` under `preset` for
    `ticks` ticks: the instructions executed inside ps_run_until
    (valgrind's callgrind, a child process)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             "--toggle-collect=ps_run_until", sys.executable, "-m", "pysched.bench", "--child",
             case, preset, str(ticks)], capture_output=True, text=True)
        if run.returncode:
            raise RuntimeError(f"valgrind on {case} under {preset} failed:\n{run.stderr[-2000:]}")
        events = int(run.stdout.split()[-1])
        with open(out) as f:
            for line in f:
                if line.startswith("totals:"):
                    return int(line.split()[1]), events
    raise RuntimeError(f"{out}: no totals line")


def cpu_model():
    """The processor's model name (/proc/cpuinfo), or what platform knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def table(rows):
    """The rows as the docs' Markdown table."""
    head = ("| case | preset | ticks/s | ns/tick | ns/event | instructions/tick | "
            "instructions/event |\n|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        ipt = "" if r.instructions_per_tick is None else f"{r.instructions_per_tick:,.0f}"
        ipe = "" if r.instructions_per_event is None else f"{r.instructions_per_event:,.0f}"
        lines.append(f"| {r.case} | {r.preset} | {r.ticks / r.seconds / 1e6:,.1f} M | "
                     f"{r.ns_per_tick:.1f} | {r.ns_per_event:.0f} | {ipt} | {ipe} |")
    return "\n".join(lines)


def run(presets=PRESETS, cases=tuple(CASES), *, min_seconds=0.5, reps=3, count_instructions=False,
        instruction_ticks=20_000, out=sys.stdout):
    """Measure every case under every preset and print the table, headed by
    the machine; returns the rows."""
    min_seconds = check_number("min_seconds", min_seconds, 0.001, 3600)
    if count_instructions and not shutil.which("valgrind"):
        raise RuntimeError("--instructions needs valgrind (Debian: apt-get install valgrind)")
    print(f"pysched bench on {cpu_model()}, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}; wall times best of {reps}, one core", file=out)
    for case in cases:
        print(f"- {case}: {CASES[case][0]}", file=out)
    rows = []
    for case in cases:
        for preset in presets:
            row = measure(case, preset, min_seconds, reps)
            if count_instructions:
                n, events = instructions(case, preset, instruction_ticks)
                row.instructions_per_tick = n / instruction_ticks
                row.instructions_per_event = n / max(events, 1)
            rows.append(row)
    print(table(rows), file=out)
    return rows


def _child(case, preset, ticks):
    sim = CASES[case][1](preset)
    sim.run(ticks=int(ticks))
    print(_events(sim))


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    _child(*sys.argv[2:5])
