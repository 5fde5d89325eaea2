"""sim.export_perfetto: the file is a Perfetto trace (read back with a
protobuf decoder of our own, helpers/perfetto_proto.py), every slice
nests, every flow has both ends, counters move forward in time, and the
slices add up to what the run's counters say."""
import numpy as np
import pytest

import pysched as ps
from perfetto_proto import (BEGIN, COUNTER, D_COUNTER, D_NAME, D_PARENT, D_PROCESS, D_THREAD,
                            E_END_FLOW, E_FLOW, E_NAME, E_TRACK, E_TYPE, E_VALUE, END, INSTANT,
                            decode, fields, signed, slices)


def scene(record="events", cpus=2, preset="linux-2.5.65"):
    sim = ps.Simulator(preset, cpus=cpus, seed=5, record=record, series_every=10)
    cc = ps.Program().io(ms=2).run(ms=ps.uniform(5, 30)).post("done").exit()
    sim.spawn(ps.Program().fork(cc, n=2).loop(8).wait("done").fork(cc).end(), name="make")
    sim.spawn(ps.programs.cpu_hog(), name="hog", nice=5)
    sim.spawn(ps.programs.x_server(), name="X")
    sim.spawn(ps.programs.x_client(think_ms=ps.exponential(20)), name="xterm")
    sim.spawn(ps.Program().loop().wait("kbd").run(us=200).end(), name="kbd")
    sim.source("kbd", every_ms=7)
    sim.run(seconds=1.5)
    return sim


@pytest.fixture(scope="module", params=["events", "series"])
def exported(request, tmp_path_factory):
    sim = scene(request.param)
    path = tmp_path_factory.mktemp("pf") / "run.perfetto-trace"
    sim.export_perfetto(path)
    return sim, decode(path)


def test_every_event_names_a_described_track_and_time_goes_forward(exported):
    _, (tracks, events) = exported
    assert all(e[E_TRACK][0] in tracks for _, e in events)
    times = [t for t, _ in events]
    assert times == sorted(times)


def test_every_slice_nests_on_its_track(exported):
    _, (tracks, events) = exported
    used = {e[E_TRACK][0] for _, e in events if e[E_TYPE][0] in (BEGIN, END)}
    for track in used:
        slices(events, track)          # asserts begin/end balance and nesting


def test_every_flow_has_both_ends(exported):
    sim, (tracks, events) = exported
    starts = [f for _, e in events for f in e.get(E_FLOW, [])]
    ends = [f for _, e in events for f in e.get(E_END_FLOW, [])]
    assert sorted(starts) == sorted(ends) and len(set(starts)) == len(starts)
    ev = sim.events()
    task_wakeups = ((ev["kind"] == ps.EVENT_KINDS.index("wakeup")) & (ev["other"] > 0)).sum()
    forks = (ev["kind"] == ps.EVENT_KINDS.index("fork")).sum()
    assert len(starts) == task_wakeups + forks > 0
    # a flow starts at an instant on the waker's track and ends where the wakee becomes runnable
    at = {f: (t, e) for t, e in events for f in e.get(E_FLOW, [])}
    for t, e in events:
        for f in e.get(E_END_FLOW, []):
            assert at[f][0] == t and at[f][1][E_TYPE][0] == INSTANT
            assert e[E_TYPE][0] == BEGIN and e[E_NAME][0] == b"runnable"


def test_counters_move_forward_in_time(exported):
    sim, (tracks, events) = exported
    counter_tracks = {u for u, d in tracks.items() if D_COUNTER in d}
    last = {}
    for t, e in events:
        if e[E_TYPE][0] == COUNTER:
            u = e[E_TRACK][0]
            assert u in counter_tracks
            assert t >= last.get(u, -1)
            last[u] = t
    names = {tracks[u][D_NAME][0].decode() for u in last}
    assert "prio" in names
    if sim.record == "series":
        assert {"sleep_avg", "time_slice"} <= names


def test_the_cpu_tracks_add_up_to_each_tasks_cpu_time(exported):
    sim, (tracks, events) = exported
    cpu_tracks = {u: d[D_NAME][0].decode() for u, d in tracks.items()
                  if d.get(D_NAME, [b""])[0].startswith(b"CPU ")}
    assert sorted(cpu_tracks.values()) == [f"CPU {c}" for c in range(sim.cpus)]
    per_task = {}
    for u in cpu_tracks:
        for name, b, e, depth in slices(events, u):
            assert depth == 0                 # one task at a time on a CPU
            pid = int(name.rsplit("(", 1)[1].rstrip(")"))
            per_task[pid] = per_task.get(pid, 0) + e - b
    st = sim.stats()
    assert {p: c for p, c in per_task.items() if c} == \
        {int(p): int(c) for p, c in zip(st["pid"], st["cpu_ns"]) if c}


def test_the_state_tracks_are_the_tasks_running_runnable_and_sleeping_time(exported):
    sim, (tracks, events) = exported
    st = sim.stats()
    for row in st:
        pid = int(row["pid"])
        uuid = next(u for u, d in tracks.items() if D_THREAD in d and
                    dict(fields(d[D_THREAD][0]))[2] == pid)
        total = {}
        for name, b, e, depth in slices(events, uuid):
            assert depth == 0
            total[name] = total.get(name, 0) + e - b
        assert total.get("running", 0) == row["cpu_ns"]
        assert total.get("runnable", 0) == row["wait_ns"]
        assert total.get("sleeping", 0) + total.get("blocked", 0) == row["sleep_ns"]
        assert set(total) <= {"running", "runnable", "sleeping", "blocked"}
    # the compile's children read their sources: uninterruptible
    assert any(name == "blocked" for t, e in events
               for name in [e.get(E_NAME, [b""])[0].decode()])


def test_prio_counters_follow_the_event_log(exported):
    sim, (tracks, events) = exported
    ev = sim.events()
    mine = ev[np.isin(ev["kind"], [0, 1, 4])]     # switch to, wakeup of, prio of the task

    def changes(pid):
        out, last = [], None
        for t, p in zip(mine["time_ns"][mine["pid"] == pid].tolist(),
                        mine["prio"][mine["pid"] == pid].tolist()):
            if p != last:
                out.append((t, p))
                last = p
        return out
    pid = max(sim.stats()["pid"].tolist(), key=lambda p: len(changes(p)))
    uuid = next(u for u, d in tracks.items() if d.get(D_NAME) == [b"prio"] and
                tracks[d[D_PARENT][0]].get(D_PROCESS) and
                dict(fields(tracks[d[D_PARENT][0]][D_PROCESS][0]))[1] == pid)
    got = [(t, signed(e[E_VALUE][0])) for t, e in events if e[E_TRACK][0] == uuid]
    assert got == changes(pid) and len(got) > 1


def test_export_perfetto_needs_the_event_log(tmp_path):
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.programs.cpu_hog())
    sim.run(seconds=0.1)
    with pytest.raises(ps.StateError, match="record='events'"):
        sim.export_perfetto(tmp_path / "a.perfetto-trace")


@pytest.mark.parametrize("preset", ps.presets())
def test_every_preset_exports_a_well_formed_trace(preset, tmp_path):
    sim = scene("series", cpus=3, preset=preset)
    sim.export_perfetto(tmp_path / "t.pftrace")
    tracks, events = decode(tmp_path / "t.pftrace")
    for u in {e[E_TRACK][0] for _, e in events if e[E_TYPE][0] in (BEGIN, END)}:
        slices(events, u)
    assert len({d[D_NAME][0] for d in tracks.values() if D_COUNTER in d}) >= 2
