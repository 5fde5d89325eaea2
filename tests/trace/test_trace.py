"""Traces: a run exported as perf script text (sim.export_ftrace) and read
back with pysched.trace.load gives the run's own per-task numbers; the
reader takes perf's and trace-cmd's text; a damaged file is refused with
the line and what was expected."""
import gzip
import json
import random
import re
import warnings

import numpy as np
import pytest

import pysched as ps
from pysched import trace as tr
from pysched.trace import read

from repo_paths import DATA

SWITCH, WAKEUP, FORK, EXIT = (ps.EVENT_KINDS.index(k) for k in ("switch", "wakeup", "fork", "exit"))


def scene(preset, cpus, seed=3, seconds=3):
    """Forks and exits (a make -j3), hogs at three nice levels, an X server
    and its client (channels, both ways), a periodic sleeper and a device
    (wakeups from interrupt context)."""
    sim = ps.Simulator(preset, cpus=cpus, seed=seed, record="events")
    cc = ps.Program().io(ms=ps.exponential(2)).run(ms=ps.uniform(5, 40)).post("done").exit()
    sim.spawn(ps.Program().fork(cc, n=3).loop(20).wait("done").fork(cc).end(), name="make")
    for n in (0, 5, 10):
        sim.spawn(ps.programs.cpu_hog(), name=f"hog{n}", nice=n)
    sim.spawn(ps.programs.x_server(), name="X")
    sim.spawn(ps.programs.x_client(think_ms=ps.exponential(30)), name="xterm")
    sim.spawn(ps.Program().loop().run(ms=1).sleep(ms=9).end(), name="tick")
    sim.spawn(ps.Program().loop().wait("kbd").run(us=300).end(), name="kbd with a blank")
    sim.source("kbd", poisson_ms=20)
    sim.run(seconds=seconds)
    return sim


def by_tid(trace):
    return trace.tasks[np.argsort(trace.tasks["tid"])]


def expected_edges(sim):
    """(waker, wakee) -> count from the event log: a task's post names the
    task; an interrupt's wakeup is, in perf's text, the task that was running
    on the wakee's CPU (none if it was idle)."""
    ev = sim.events()
    curr = [0] * sim.cpus
    edges = {}
    for e in ev:
        if e["kind"] == SWITCH:
            curr[e["cpu"]] = int(e["pid"])
        elif e["kind"] == WAKEUP:
            waker = int(e["other"]) if e["other"] > 0 else curr[e["cpu"]]
            if waker:
                key = (waker, int(e["pid"]))
                edges[key] = edges.get(key, 0) + 1
    return edges


@pytest.fixture(scope="module", params=[(p, c) for p in ps.presets() for c in (1, 3)],
                ids=lambda pc: f"{pc[0]}-{pc[1]}cpu")
def round_trip(request, tmp_path_factory):
    preset, cpus = request.param
    sim = scene(preset, cpus)
    path = tmp_path_factory.mktemp("rt") / "run.txt"
    sim.export_ftrace(path)
    return sim, tr.load(path)


# ---------------------------------------------------------------- round trip

def test_every_task_comes_back_with_its_cpu_time_to_the_nanosecond(round_trip):
    sim, trace = round_trip
    st, tk = sim.stats(), by_tid(round_trip[1])
    assert tk["tid"].tolist() == st["pid"].tolist()
    assert (tk["cpu_ns"] == st["cpu_ns"]).all() and st["cpu_ns"].sum() > 0
    assert trace.anomalies == {}


def test_switches_voluntary_and_involuntary_come_back(round_trip):
    sim, trace = round_trip
    st, tk = sim.stats(), by_tid(trace)
    assert (tk["nvcsw"] == st["nvcsw"]).all() and (tk["nivcsw"] == st["nivcsw"]).all()
    assert (tk["nr_switches"] == st["nvcsw"] + st["nivcsw"]).all()
    # a burst per switch away from a task, and one per CPU still running a task at the end
    ev = sim.events()
    sw = ev[ev["kind"] == SWITCH]
    running_at_end = sum(1 for c in range(sim.cpus) if sw["pid"][sw["cpu"] == c][-1] != 0)
    assert len(trace.bursts) == (sw["other"] != 0).sum() + running_at_end


def test_waits_sleeps_wakeups_and_latencies_come_back(round_trip):
    sim, trace = round_trip
    st, tk = sim.stats(), by_tid(trace)
    for field in ("wait_ns", "nr_wakeups", "lat_count", "lat_sum_ns", "lat_max_ns",
                  "nr_migrations", "start_ns", "exit_ns", "nice"):
        assert (tk[field] == st[field]).all(), field
    assert (tk["sleep_ns"] + tk["block_ns"] == st["sleep_ns"]).all()
    lat = sim.latencies()
    assert sorted(trace.wakeups["latency_ns"][trace.wakeups["latency_ns"] >= 0]) == \
        sorted(lat["latency_ns"])


def test_wakeup_edges_come_back(round_trip):
    sim, trace = round_trip
    got = {(int(k), int(w)): int(n) for k, w, n in trace.edges}
    assert got == expected_edges(sim)
    # the channels' wakers are there: X answers the xterm and the xterm asks X
    x, xterm = sim.task("X").pid, sim.task("xterm").pid
    assert got[x, xterm] > 0 and got[xterm, x] > 0


def test_forks_and_exits_come_back(round_trip):
    sim, trace = round_trip
    ev = sim.events()
    forks = ev[ev["kind"] == FORK]
    exits = ev[ev["kind"] == EXIT]
    assert trace.forks.tolist() == list(zip(forks["time_ns"].tolist(), forks["other"].tolist(),
                                            forks["pid"].tolist()))
    assert trace.exits.tolist() == list(zip(exits["time_ns"].tolist(), exits["pid"].tolist()))
    assert len(forks) >= 3 and len(exits) >= 1
    tk = by_tid(trace)
    assert (tk["ppid"] == sim.stats()["ppid"]).all()


def test_intervals_add_up_to_the_aggregates(round_trip):
    _, trace = round_trip
    for table, field in ((trace.bursts, "cpu_ns"), (trace.waits, "wait_ns")):
        per = {t: 0 for t in trace.tasks["tid"].tolist()}
        for row in table:
            per[int(row["tid"])] += int(row["end_ns"] - row["start_ns"])
        assert [per[t] for t in trace.tasks["tid"].tolist()] == trace.tasks[field].tolist()


def test_a_gzip_export_reads_the_same(tmp_path):
    sim = scene("linux-2.5.65", 2, seconds=1)
    sim.export_ftrace(tmp_path / "a.txt")
    sim.export_ftrace(tmp_path / "a.txt.gz")
    with gzip.open(tmp_path / "a.txt.gz", "rt") as f:
        assert f.read() == (tmp_path / "a.txt").read_text()
    assert tr.load(tmp_path / "a.txt.gz").tasks.tolist() == \
        tr.load(tmp_path / "a.txt").tasks.tolist()


def test_aggregates_alone_are_the_same_without_the_intervals(tmp_path):
    sim = scene("houston-2003", 2, seconds=1)
    sim.export_ftrace(tmp_path / "a.txt")
    full, small = tr.load(tmp_path / "a.txt"), tr.load(tmp_path / "a.txt", intervals=False)
    assert small.tasks.tolist() == full.tasks.tolist()
    assert small.edges.tolist() == full.edges.tolist()
    assert small.bursts is None and small.wakeups is None


def test_the_export_writes_the_kernels_fields(tmp_path):
    sim = scene("linux-2.5.65", 1, seconds=0.5)
    sim.export_ftrace(tmp_path / "a.txt")
    lines = [ln for ln in (tmp_path / "a.txt").read_text().splitlines() if not ln.startswith("#")]
    events = {ln.split(": ")[1].strip() for ln in lines}
    assert events == {"sched:sched_switch", "sched:sched_wakeup", "sched:sched_wakeup_new",
                      "sched:sched_process_fork", "sched:sched_process_exit"}
    switch = next(ln for ln in lines if "prev_state=S " in ln)
    # TP_printk of sched_switch, include/trace/events/sched.h
    fields = switch.split(": ", 2)[2]
    assert " ==> next_comm=" in fields and fields.startswith("prev_comm=")
    wake = next(ln for ln in lines if "sched_wakeup:" in ln)
    assert wake.split(": ", 2)[2].split()[-1].startswith("target_cpu=") and \
        len(wake.rsplit("=", 1)[1]) == 3          # %03d
    assert any("prev_state=R+" in ln for ln in lines)   # a preemption
    assert any("group_dead=true" in ln for ln in lines)
    # perf script's sample header: comm right-aligned to 16, pid/tid, [cpu], time.9
    assert all(ln[16] == " " and "[000]" in ln for ln in lines)


def starved_on_cpu_2():
    """A 4-CPU run in which real-time hogs hold every CPU: 'starved' (pinned
    to CPU 2) and 'moved' (queued on CPU 2, later pulled to CPU 0 by the
    balancer) never run."""
    sim = ps.Simulator("linux-2.5.65", cpus=4, record="events")
    for cpu in range(4):
        sim.spawn(ps.programs.cpu_hog(), name=f"rt{cpu}", policy="fifo", rt_priority=50,
                  cpus_allowed=[cpu])
    sim.spawn(ps.programs.cpu_hog(), name="starved", cpus_allowed=[2])
    sim.spawn(ps.programs.cpu_hog(), name="moved", cpu=2)
    sim.run(seconds=0.5)
    return sim


def test_a_task_that_never_ran_waits_on_the_cpu_it_was_queued_on(tmp_path):
    sim = starved_on_cpu_2()
    assert [sim.task(pid).cpu_ns for pid in (5, 6)] == [0, 0]
    path = tmp_path / "run.txt"
    sim.export_ftrace(path)
    text = path.read_text()
    news = {line.split("comm=")[1].split()[0]: line for line in text.splitlines()
            if "sched_wakeup_new" in line}
    for name in ("starved", "moved"):
        assert "[002]" in news[name] and news[name].endswith("target_cpu=002")
    assert "comm=moved pid=6 prio=125 orig_cpu=2 dest_cpu=0" in text
    # read back as perf's text (without the export's own header), both
    # waited on CPU 2 (the moved one until its migration, which is no run)
    bare = tmp_path / "bare.txt"
    bare.write_text("".join(line for line in text.splitlines(keepends=True)
                            if not line.startswith("# pysched task:")))
    t = tr.load(bare)
    starved, moved = t.task("starved"), t.task("moved")
    assert starved["cpus_allowed"] == 1 << 2 and starved["wait_ns"] == sim.now_ns
    assert moved["cpus_allowed"] == 1 << 2 and moved["cpu_ns"] == 0
    assert t.migrations[t.migrations["tid"] == 6][["orig_cpu", "dest_cpu"]].tolist() == [(2, 0)]


def test_a_run_without_the_event_log_says_how_to_record_one(tmp_path):
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=0.1)
    with pytest.raises(ps.StateError, match="record='events'"):
        sim.export_ftrace(tmp_path / "a.txt")


def test_frame_is_the_tasks_in_seconds(round_trip):
    pytest.importorskip("pandas")
    _, trace = round_trip
    df = trace.frame()
    assert df.index.name == "tid" and list(df.index) == trace.tasks["tid"].tolist()
    assert np.allclose(df["cpu_s"], trace.tasks["cpu_ns"] / 1e9)
    assert df["exit_s"].isna().sum() == (trace.tasks["exit_ns"] < 0).sum()


# ---------------------------------------------------------------- other writers' text

PERF_TEXT = """\
            perf  5407/5407  [000] 87142.987194802: sched:sched_stat_runtime: comm=perf pid=5407 runtime=26452 [ns]
            perf  5407/5407  [000] 87142.987205586:       sched:sched_switch: prev_comm=perf prev_pid=5407 prev_prio=120 prev_state=D ==> next_comm=migration/0 next_pid=18 next_prio=0
     migration/0    18/18    [000] 87142.987209667:       sched:sched_waking: comm=perf pid=5407 prio=120 target_cpu=000
     migration/0    18/18    [000] 87142.987210607: sched:sched_migrate_task: comm=perf pid=5407 prio=120 orig_cpu=0 dest_cpu=1
     migration/0    18/18    [000] 87142.987237557:       sched:sched_switch: prev_comm=migration/0 prev_pid=18 prev_prio=0 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
         swapper     0/0     [001] 87142.987300000:       sched:sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=perf next_pid=5407 next_prio=120
            perf  5407/5407  [001] 87142.987458209:       sched:sched_waking: comm=Web Content pid=5408 prio=130 target_cpu=000
"""

TRACE_CMD_TEXT = """\
cpus=2
           <idle>-0     [000]   100.000100: sched_switch:         <idle>:0 [120] R ==> bash:200 [120]
            bash-200    [000]   100.000300: sched_wakeup:         kworker/0:1:31 [120] success=1 CPU:000
            bash-200    [000]   100.000400: sched_switch:         bash:200 [120] S ==> kworker/0:1:31 [120]
     kworker/0:1-31     [000] d..2.   100.000900: sched_switch: prev_comm=kworker/0:1 prev_pid=31 prev_prio=120 prev_state=I ==> next_comm=swapper/0 next_pid=0 next_prio=120
"""


def test_perf_scripts_own_text_is_read(tmp_path):
    # lines as perf 6.1's perf script --ns -F comm,pid,tid,cpu,time,event,trace printed them here
    path = tmp_path / "perf.txt"
    path.write_text(PERF_TEXT)
    t = tr.load(path)
    perf = t.task(5407)
    # on CPU 0 from the start to the switch (D), woken by migration/0, moved to CPU 1, run there
    assert perf["cpu_ns"] == (987205586 - 987194802) + (987458209 - 987300000)
    assert perf["nvcsw"] == 1 and perf["nr_migrations"] == 1 and perf["runtime_ns"] == 26452
    assert perf["block_ns"] == 987209667 - 987205586
    assert t.edges.tolist() == [(18, 5407, 1), (5407, 5408, 1)]
    mig = t.task("migration/0")
    assert mig["policy"] == "fifo" and mig["rt_priority"] == 99 and mig["sleep_ns"] > 0
    web = t.task("Web Content")
    # blocked since the start
    assert web["nice"] == 10 and web["sleep_ns"] == 987458209 - 987194802
    assert t.cpus.tolist() == [0, 1] and t.start_ns == 87142987194802


def test_trace_cmds_text_and_libtraceevents_plugin_form_are_read(tmp_path):
    path = tmp_path / "tc.txt"
    path.write_text(TRACE_CMD_TEXT)
    t = tr.load(path)
    bash = t.task("bash")
    assert bash["cpu_ns"] == 300_000 and bash["nvcsw"] == 1
    assert t.edges.tolist() == [(200, 31, 1)]
    k = t.task(31)
    assert k["wait_ns"] == 100_000 and k["lat_count"] == 1 and k["cpu_ns"] == 500_000


# ---------------------------------------------------------------- damage

GOOD = PERF_TEXT


def damaged(tmp_path, text, name="bad.txt"):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(tr.TraceFormatError) as info:
        tr.load(path)
    assert isinstance(info.value, ValueError) and str(path) in str(info.value)
    return info.value


def test_a_line_in_no_known_format_names_its_number_and_the_format(tmp_path):
    lines = GOOD.splitlines(keepends=True)
    lines.insert(3, "this is not a trace line\n")
    e = damaged(tmp_path, "".join(lines))
    assert e.lineno == 4 and "line 4" in str(e) and "COMM PID/TID [CPU]" in str(e)


def test_an_event_missing_a_field_names_the_events_format(tmp_path):
    text = GOOD.replace("next_comm=migration/0 next_pid=18 ", "next_comm=migration/0 ")
    e = damaged(tmp_path, text)
    assert e.lineno == 2 and "sched_switch's fields" in str(e) and "next_pid=%d" in str(e)


def test_a_non_number_where_a_number_belongs_is_refused(tmp_path):
    e = damaged(tmp_path, GOOD.replace("orig_cpu=0 dest_cpu=1", "orig_cpu=0 dest_cpu=one"))
    assert e.lineno == 4 and "dest_cpu=%d" in str(e)


def test_a_file_cut_off_mid_line_is_truncated(tmp_path):
    e = damaged(tmp_path, GOOD[:GOOD.index("prev_comm=swapper/1") + 12])
    assert e.lineno == 6 and "truncated" in str(e)


def test_a_gzip_file_cut_off_is_truncated(tmp_path):
    blob = gzip.compress(GOOD.encode() * 50)
    path = tmp_path / "cut.txt.gz"
    path.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(tr.TraceFormatError, match="truncated") as info:
        tr.load(path)
    assert info.value.lineno > 1


def test_time_going_backwards_is_refused(tmp_path):
    text = GOOD.replace("87142.987237557", "87142.987000000")
    e = damaged(tmp_path, text)
    assert e.lineno == 5 and "at or after the previous line's 87142.987210607" in str(e)


def test_a_file_without_scheduler_events_is_refused(tmp_path):
    e = damaged(tmp_path, "# an empty capture\n\n")
    assert "at least one scheduler event" in str(e)


def test_a_time_finer_than_nanoseconds_is_refused(tmp_path):
    e = damaged(tmp_path, GOOD.replace("87142.987194802", "87142.9871948021"))
    assert e.lineno == 1 and "9 decimals" in str(e)


def test_load_checks_its_argument(tmp_path):
    with pytest.raises(TypeError, match="path"):
        tr.load(42)
    with pytest.raises(FileNotFoundError):
        tr.load(tmp_path / "missing.txt")
    path = tmp_path / "ok.txt"
    path.write_text(GOOD)
    t = tr.load(path)
    with pytest.raises(KeyError, match="no task with tid 99"):
        t.task(99)
    with pytest.raises(KeyError, match="comms"):
        t.task("nobody")


# ---------------------------------------------------------------- large machines, numbers out of range

def on_cpu(text, cpu):
    """GOOD with its CPU 1 as CPU `cpu`."""
    return text.replace("[001]", f"[{cpu:03d}]").replace("dest_cpu=1", f"dest_cpu={cpu}")


@pytest.mark.parametrize("cpu", [64, 255, 4095])
def test_a_capture_of_a_machine_of_up_to_4096_cpus_loads(tmp_path, cpu):
    path = tmp_path / "big.txt"
    path.write_text(on_cpu(GOOD, cpu))
    t = tr.load(path)
    assert t.cpus.tolist() == [0, cpu]
    perf = t.task(5407)
    # woken for CPU 0, moved to `cpu` and run there, as on a 2-CPU machine
    assert perf["cpus_allowed"] == 1 | 1 << cpu and t.tasks.dtype == tr.WIDE_TASK_DTYPE
    assert perf["cpu_ns"] == (987205586 - 987194802) + (987458209 - 987300000)
    assert t.bursts["cpu"].tolist() == [0, 0, cpu] and t.migrations["dest_cpu"].tolist() == [cpu]


def test_a_capture_of_up_to_64_cpus_keeps_its_masks_as_uint64(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text(on_cpu(GOOD, 63))
    t = tr.load(path)
    assert t.tasks.dtype == tr.TASK_DTYPE and t.task(5407)["cpus_allowed"] == 1 | 1 << 63


def test_a_replay_of_more_cpus_than_the_simulator_has_says_so(tmp_path):
    def trace(ncpu):
        text = on_cpu(GOOD, 4095)
        for cpu in range(2, ncpu):
            text += f"         swapper     0/0     [{cpu:03d}] 87142.987458209:       " \
                    f"sched:sched_switch: prev_comm=swapper/{cpu} prev_pid=0 prev_prio=120 " \
                    f"prev_state=R ==> next_comm=swapper/{cpu} next_pid=0 next_prio=120\n"
        path = tmp_path / f"big{ncpu}.txt"
        path.write_text(text)
        return tr.load(path)

    # 100 CPUs replay as they are: trace CPU 4095 (the 100th) runs as CPU 99
    w = trace(100).to_workload(tasks=["perf"])
    assert w.cpus == 100 and w.tasks[0].cpus_allowed == (0, 99)
    t = trace(1100)
    assert len(t.cpus) == 1100
    with pytest.raises(ValueError, match=r"the trace has 1100 CPUs and the simulator at most 1024: "
                                         r"pass cpus="):
        t.to_workload()
    # folded onto 4 CPUs it replays: trace CPU 4095 (the 1100th) runs as CPU 1099 mod 4
    w = t.to_workload(cpus=4, tasks=["perf"])
    assert w.cpus == 4 and w.tasks[0].cpus_allowed == (0, 3)
    sim = w.run("linux-2.5.65", seconds=0.01)
    assert sim.task(1).cpu_ns > 0


LATE = """\
         swapper     0/0     [000] 9223372035.000000000: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hog next_pid=100 next_prio=120
             hog   100/100   [000] 9223372035.600000000: sched:sched_switch: prev_comm=hog prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
         swapper     0/0     [000] 9223372035.700000000: sched:sched_waking: comm=hog pid=100 prio=120 target_cpu=000
         swapper     0/0     [000] 9223372035.700000100: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hog next_pid=100 next_prio=120
             hog   100/100   [000] 9223372036.800000000: sched:sched_switch: prev_comm=hog prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
"""


def test_a_capture_at_the_end_of_64_bit_time_replays_its_cpu(tmp_path):
    # 0.6 s of CPU, then a burst ending 55 ms before 2^63 ns: the CPU used
    # by a time in it was that 0.6 s plus the time, which overflowed int64
    # before the burst's start was taken off
    path = tmp_path / "late.txt"
    path.write_text(LATE)
    t = tr.load(path)
    assert t.task("hog")["cpu_ns"] == 600_000_000 + 1_099_999_900
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = t.to_workload()
    assert w.tasks[0].demand_ns == 1_699_999_900


@pytest.mark.parametrize("cpu", ["4096", "4294967295"])
def test_a_cpu_above_4095_is_refused_with_its_line(tmp_path, cpu):
    e = damaged(tmp_path, GOOD.replace("[001]", f"[{cpu}]"))
    assert e.lineno == 6 and f"a CPU in 0..4095 (a machine of at most 4,096 CPUs), not {cpu}" in str(e)


ENORMOUS = "9" * 5000


@pytest.mark.parametrize("old,new,lineno,expected", [
    ("target_cpu=000", "target_cpu=5000", 3, "a CPU in 0..4095"),
    ("dest_cpu=1", f"dest_cpu={ENORMOUS}", 4, "a CPU in 0..4095 (a machine of at most 4,096 CPUs), "
                                             f"not {'9' * 20}... (5000 characters)"),
    ("next_pid=18 ", "next_pid=2147483648 ", 2, "a next_pid in -2147483648..2147483647, not 2147483648"),
    ("prev_pid=18 ", f"prev_pid={ENORMOUS} ", 5, "a prev_pid in -2147483648..2147483647"),
    ("18/18    [000] 87142.987209667", "18/99999999999 [000] 87142.987209667", 3,
     "a tid in -2147483648..2147483647, not 99999999999"),
    ("prio=130", "prio=-99999999999", 7, "a prio in -2147483648..2147483647, not -99999999999"),
    ("87142.987458209", "99999999999.987458209", 7,
     "a time of at most 9223372036.854775807 s (nanoseconds in 64 bits), not 99999999999.987458209"),
    ("87142.987458209", f"{ENORMOUS}.987458209", 7, "a time of at most 9223372036.854775807 s"),
    ("runtime=26452", "runtime=9223372036854775808", 1,
     "a runtime in 0..9223372036854775807, not 9223372036854775808"),
])
def test_a_number_out_of_its_range_names_its_field_its_range_and_its_line(tmp_path, old, new, lineno,
                                                                         expected):
    assert old in GOOD
    e = damaged(tmp_path, GOOD.replace(old, new))
    assert e.lineno == lineno and expected in str(e)


def test_runtimes_adding_up_past_64_bits_are_refused(tmp_path):
    line = GOOD.splitlines(keepends=True)[0]
    big = line.replace("runtime=26452", f"runtime={2**62}")
    e = damaged(tmp_path, big * 2 + line.replace("runtime=26452", "runtime=1"))
    assert e.lineno == 2 and "runtimes adding up to at most 9223372036854775807 ns for pid 5407" \
        in str(e)


@pytest.mark.parametrize("old,new,lineno,expected", [
    ("nice=0", "nice=99", 2, "a nice in -20..19, not 99"),
    ("pid=1 ", f"pid={ENORMOUS} ", 2, "a pid in 0..2147483647"),
    ("rt_priority=0", "rt_priority=100", 2, "an rt_priority in 0..99"),
    ("policy=normal", "policy=batch", 2, "a policy of normal, fifo, rr, not batch"),
    ("cpus_allowed=0x3", f"cpus_allowed={1 << 4096:#x}", 2, "cpus_allowed, a mask of CPUs 0..4095"),
    ("end_ns={end}", f"end_ns={ENORMOUS}", 1, "an end_ns in 0..9223372036854775807"),
])
def test_an_exports_header_out_of_range_is_refused(tmp_path, old, new, lineno, expected):
    sim = ps.Simulator("linux-2.5.65", cpus=2, record="events")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.run(seconds=0.05)
    sim.export_ftrace(tmp_path / "run.txt")
    text = (tmp_path / "run.txt").read_text()
    old = old.format(end=sim.now_ns)
    assert old in text
    e = damaged(tmp_path, text.replace(old, new, 1))
    assert e.lineno == lineno and expected in str(e)


def test_a_damaged_gzip_stream_is_refused_with_its_line(tmp_path):
    blob = bytearray(gzip.compress(GOOD.encode() * 50))
    blob[10] |= 0x06     # the first deflate block's type: 3, which does not exist
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(bytes(blob))
    with pytest.raises(tr.TraceFormatError, match=r"line 1: expected a readable gzip stream "
                                                  r"\(Error -3 while decompressing data: invalid "
                                                  r"block type\)"):
        tr.load(path)


def test_a_line_of_blanks_is_refused_in_time_linear_in_its_length(tmp_path):
    # the headers are searched for after the comm, and no pattern starts
    # with a run that a following one could share: `\s*(.*?)\s+` in front
    # of perf's took seconds on 1,000 blanks, and time cubic in their number
    for head in (read._PERF_HEAD, read._FTRACE_HEAD):
        assert not head.pattern.startswith(("\\s*", "(.*", ".*"))
    for n in (1_000, 100_000):
        e = damaged(tmp_path, GOOD + " " * n + "x\n")
        assert e.lineno == 8 and "COMM PID/TID [CPU]" in str(e)


def test_a_line_without_end_is_refused_at_its_limit(tmp_path):
    e = damaged(tmp_path, GOOD + "x" * (tr.MAX_LINE + 1) + "\n")
    assert e.lineno == 8 and "a line of at most 1,048,576 characters" in str(e)


TOKENS = [" ", "x", "a b", "1", "-2", ":", "[", "]", " [", "=", "R+", " ==> ", "prev_comm=",
          " prev_pid=", " prev_prio=", " prev_state=", "next_comm=", " next_pid=", " next_prio=",
          "comm=", " pid=", " child_comm=", " child_pid="]


def test_the_fields_with_two_comms_are_read_as_their_regex_reads_them():
    # the regexes the linear matchers stand for (each comm as long as it can be)
    regexes = {
        "switch": re.compile(r"prev_comm=(.*) prev_pid=(-?\d+) prev_prio=(-?\d+) prev_state=(\S+) "
                             r"==> next_comm=(.*) next_pid=(-?\d+) next_prio=(-?\d+)"),
        "switch, libtraceevent": re.compile(r"(.*):(-?\d+) \[(-?\d+)\] (\S+) ==> (.*):(-?\d+) "
                                            r"\[(-?\d+)\]"),
        "fork": re.compile(r"comm=(.*) pid=(-?\d+) child_comm=(.*) child_pid=(-?\d+)")}
    matchers = {"switch": read._FIELDS["sched_switch"][0],
                "switch, libtraceevent": read._FIELDS["sched_switch"][1],
                "fork": read._FIELDS["sched_process_fork"][0]}
    rng = random.Random(7)

    def comm():
        return "".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 6)))

    matched = dict.fromkeys(regexes, 0)
    for _ in range(5_000):
        texts = {
            "switch": f"prev_comm={comm()} prev_pid={rng.choice(['1', '-2', 'x'])} prev_prio=1 "
                      f"prev_state={rng.choice(['R', 'S+', ''])} ==> next_comm={comm()} "
                      f"next_pid=3 next_prio=4{rng.choice(['', comm()])}",
            "switch, libtraceevent": f"{comm()}:1 [2] R ==> {comm()}:3 [4]{rng.choice(['', comm()])}",
            "fork": f"comm={comm()} pid=1 child_comm={comm()} child_pid=2{rng.choice(['', comm()])}"}
        for name, text in texts.items():
            want = regexes[name].fullmatch(text)
            got = matchers[name].fullmatch(text)
            assert (got and tuple(got[1:])) == (want and want.groups()), text
            matched[name] += want is not None
    assert min(matched.values()) > 1_000


def test_the_trace_fuzzer_runs_200_inputs_without_a_finding(tmp_path):
    import fuzz_trace

    n, outcomes, findings = fuzz_trace.run(None, seed=1, out=str(tmp_path), iterations=200)
    assert n == 200 and findings == []
    assert outcomes["TraceFormatError"] > 50 and outcomes["replayed"] > 10


def test_a_tasks_family_is_it_and_every_task_forked_below_it():
    t = tr.load(DATA / "real_make.txt.gz")
    facts = json.loads((DATA / "real_make.json").read_text())
    family = t.family(facts["root"])
    assert family[0] == t.tid(facts["root"])
    # every member but the root was forked by a member, and none twice
    parents = {int(c): int(p) for _, p, c in t.forks.tolist()}
    assert len(set(family)) == len(family) > 10
    assert all(parents[tid] in family for tid in family[1:])
    # and every task forked by a member is one
    assert all(c in family for _, p, c in t.forks.tolist() if p in family)
