"""Traces: a run exported as perf script text (sim.export_ftrace) and read
back with pysched.trace.load gives the run's own per-task numbers; the
reader takes perf's and trace-cmd's text; a damaged file is refused with
the line and what was expected."""
import gzip

import numpy as np
import pytest

import pysched as ps
from pysched import trace as tr

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
