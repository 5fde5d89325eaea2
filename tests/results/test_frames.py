"""The outputs as decoded pandas DataFrames (src/pysched/results/frames.py):
``sim.X_frame()`` is ``sim.X()`` with its codes named (pysched.codes),
tasks named, times in seconds and sentinels missing."""
import re
import sys

import numpy as np
import pytest

import pysched as ps

PRESET = "linux-2.5.65"


@pytest.fixture
def pd():
    return pytest.importorskip("pandas")


def machine(**kwargs):
    """Tasks in every scheduling class, some exited, some forked, a wakeup
    from interrupt context."""
    sim = ps.Simulator(PRESET, cpus=2, seed=5, **kwargs)
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.spawn(ps.Program().fork(ps.Program().run(ms=2), n=2).run(ms=30), name="parent")
    sim.spawn(ps.Program().loop().wait("irq").run(us=300).end(), name="rt", policy="fifo",
              rt_priority=10)
    sim.spawn(ps.programs.x_client(), name="client", policy="rr", rt_priority=3)
    sim.spawn(ps.Program().run(ms=3), name="brief")
    sim.source("irq", every_ms=7)
    sim.run(seconds=0.5)
    return sim


def test_the_stats_frame_decodes_state_and_policy_as_the_task_views_do(pd):
    sim = machine()
    frame, st = sim.stats_frame(), sim.stats()
    assert list(frame.index) == list(st["pid"]) and frame.index.name == "pid"
    assert list(frame["name"]) == list(st["name"])
    for pid, row in frame.iterrows():
        view = sim.task(pid)
        assert (row["state"], row["policy"]) == (view.state, view.policy)
    assert list(frame["policy"]) == [ps.SCHED_POLICIES[c] for c in st["policy"]]
    assert set(frame["policy"]) == {"normal", "fifo", "rr"}
    assert list(frame["state"].cat.categories) == list(ps.TASK_STATES.values())
    assert list(frame["policy"].cat.categories) == list(ps.SCHED_POLICIES.values())
    assert {"dead", "running"} <= set(frame["state"])


def test_the_stats_frame_has_na_for_alive_and_for_spawned_from_python(pd):
    sim = machine()
    frame, st = sim.stats_frame(), sim.stats()
    alive = st["exit_ns"] < 0
    assert alive.any() and (~alive).any()
    assert frame["exit_s"][alive].isna().all()
    assert np.array_equal(np.round(frame["exit_s"][~alive] * 1e9), st["exit_ns"][~alive])
    forked = st["ppid"] > 0
    assert forked.sum() == 2 and frame["ppid"][~forked].isna().all()
    assert list(frame["ppid"][forked]) == list(st["ppid"][forked])
    assert frame["on_rq"].dtype == bool


def test_the_affinity_mask_of_64_cpus_is_unsigned(pd):
    sim = ps.Simulator(PRESET, cpus=64)
    sim.spawn(ps.programs.cpu_hog())
    sim.spawn(ps.programs.cpu_hog(), cpus_allowed=[0, 63])
    assert list(sim.stats_frame()["cpus_allowed"]) == [2**64 - 1, 1 + 2**63]


def test_every_ns_column_is_in_seconds_under_an_s_name(pd):
    sim = machine()
    frame, st = sim.stats_frame(), sim.stats()
    for f in st.dtype.names:
        if f.endswith("_ns"):
            # exit_ns, starved_ns and lag_broken_ns mark "never" with -1, the
            # lag's extremes with INT64_MIN: NaN in the frame
            expected = (np.where(st[f] >= 0, st[f], np.nan)
                        if f in ("exit_ns", "starved_ns", "lag_broken_ns")
                        else np.where(st[f] == np.iinfo(np.int64).min, np.nan, st[f])
                        if f in ("lag_min_ns", "lag_max_ns") else st[f])
            assert f not in frame and np.array_equal(np.round(frame[f[:-3] + "_s"] * 1e9),
                                                     expected, equal_nan=True), f
    cpus, raw = sim.cpu_stats_frame(), sim.cpu_stats()
    assert cpus.index.name == "cpu" and list(cpus.index) == [0, 1]
    assert np.array_equal(np.round(cpus["busy_s"] * 1e9), raw["busy_ns"])
    assert list(cpus["ticks"]) == list(raw["ticks"])


def test_the_counters_frame_is_one_row_per_counter_indexed_by_its_name(pd):
    sim = machine(record="events", max_trace_bytes=4096, on_full="overwrite", keep_exited=1)
    frame, counters = sim.counters_frame(), sim.counters()
    assert frame.index.name == "counter" and list(frame.columns) == ["value"]
    assert list(frame.index) == list(counters) and frame["value"].dtype == np.int64
    assert frame["value"].to_dict() == counters
    assert frame.loc["forks", "value"] == 2 and frame.loc["events_dropped", "value"] > 0
    assert frame.loc["exited_dropped", "value"] == counters["exits"] - 1


def test_the_events_frame_names_kinds_and_tasks_and_hides_unused_columns(pd):
    sim = machine(record="events")
    frame, ev, st = sim.events_frame(), sim.events(), sim.stats()
    assert len(frame) == len(ev) and frame.index.name == "time_s"
    assert np.array_equal(np.round(frame.index.to_numpy() * 1e9), ev["time_ns"])
    assert list(frame["kind"]) == [ps.EVENT_KINDS[k] for k in ev["kind"]]
    assert list(frame["kind"].cat.categories) == list(ps.EVENT_KINDS)
    names = dict(zip(st["pid"].tolist(), st["name"].tolist()))
    names[0] = "<idle>"
    assert ([None if pd.isna(n) else n for n in frame["name"]]
            == [names.get(p) for p in ev["pid"].tolist()])  # an array_switch has no task
    for kind, fields in ps.EVENT_FIELDS.items():
        rows = frame[frame["kind"] == kind]
        for column in ("pid", "other", "value", "prio"):
            if getattr(fields, column) is None:
                assert rows[column].isna().all(), (kind, column)
    wakeups = frame[frame["kind"] == "wakeup"]
    from_irq = ev[ev["kind"] == ps.EVENT_KINDS.index("wakeup")]["other"] == -1
    assert from_irq.any() and wakeups["other"][from_irq].isna().all()
    assert wakeups["other"][~from_irq].notna().all()
    switches = frame[frame["kind"] == "switch"]
    assert list(switches["pid"]) == list(ev[ev["kind"] == 0]["pid"])


def test_the_events_frame_needs_the_event_log_as_events_does(pd):
    with pytest.raises(ps.StateError, match="the event log is off"):
        machine().events_frame()


def test_the_latencies_frame_is_the_latencies_with_names(pd):
    sim = machine()
    frame, lat = sim.latencies_frame(), sim.latencies()
    assert len(lat) > 0 and frame.index.name == "time_s"
    assert np.array_equal(np.round(frame.index.to_numpy() * 1e9), lat["time_ns"])
    assert np.array_equal(np.round(frame["latency_s"] * 1e9), lat["latency_ns"])
    assert list(frame["pid"]) == list(lat["pid"]) and list(frame["cpu"]) == list(lat["cpu"])
    client = 4  # hog, parent, rt, then client
    mine = sim.latencies_frame(client)
    assert set(mine["name"]) == {"client"}
    assert np.array_equal(np.round(mine["latency_s"] * 1e9), sim.latencies(client))


def test_the_series_frame_is_labelled_by_pid_and_name_at_the_series_times(pd):
    sim = machine(record="series", series_fields=["prio", "state", "policy", "sleep_avg"])
    st = sim.stats()
    for field in ("prio", "sleep_avg"):
        frame, raw = sim.series_frame(field), sim.series(field)
        assert list(frame.columns.names) == ["pid", "name"]
        assert list(frame.columns) == list(zip(st["pid"].tolist(), st["name"].tolist()))
        assert frame.index.name == "time_s"
        assert np.array_equal(frame.index.to_numpy(), sim.series_times() / 1e9)
        assert np.array_equal(frame.to_numpy(), raw, equal_nan=True)
    assert list(sim.series_frame("prio")[(1, "hog")]) == list(sim.series("prio")[:, 0])


def test_state_and_policy_series_are_decoded(pd):
    sim = machine(record="series", series_fields=["state", "policy"])
    for field, table in (("state", ps.TASK_STATES), ("policy", ps.SCHED_POLICIES)):
        frame, raw = sim.series_frame(field), sim.series(field)
        for k, column in enumerate(frame.columns):
            decoded = frame[column]
            assert list(decoded.cat.categories) == list(table.values())
            assert np.array_equal(decoded.isna(), np.isnan(raw[:, k]))
            assert list(decoded.dropna()) == [table[int(c)] for c in raw[:, k] if not np.isnan(c)]
    assert set(sim.series_frame("policy")[(3, "rt")].dropna()) == {"fifo"}


def test_a_frame_refuses_what_its_array_refuses(pd):
    sim = machine(record="series", series_fields=["prio"])
    with pytest.raises(KeyError, match="field 'sleep_avg' is not sampled"):
        sim.series_frame("sleep_avg")
    with pytest.raises(KeyError, match=re.escape("no task with pid 99 (pids are 1..7)")):
        sim.latencies_frame(99)
    with pytest.raises(ps.StateError, match="series are off"):
        machine().series_frame("prio")


def test_frames_of_an_empty_machine_are_empty(pd):
    sim = ps.Simulator(PRESET, record="series")
    assert sim.stats_frame().empty and sim.events_frame().empty and sim.latencies_frame().empty
    assert sim.series_frame("prio").shape == (0, 0)
    assert list(sim.cpu_stats_frame().index) == [0]
    assert sim.counters_frame()["value"].to_dict() == sim.counters()


FRAMES = [
    ("stats_frame", lambda s: s.stats_frame()),
    ("events_frame", lambda s: s.events_frame()),
    ("latencies_frame", lambda s: s.latencies_frame()),
    ("series_frame", lambda s: s.series_frame("prio")),
    ("cpu_stats_frame", lambda s: s.cpu_stats_frame()),
    ("counters_frame", lambda s: s.counters_frame()),
]


@pytest.mark.parametrize("name,call", FRAMES, ids=[f[0] for f in FRAMES])
def test_without_pandas_a_frame_says_how_to_install_it(monkeypatch, name, call):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas fails as if absent
    sim = ps.Simulator(PRESET, record="series")
    with pytest.raises(ImportError, match=rf"^{name}\(\) needs pandas, which is not installed: "
                                          r"pip install pandas$"):
        call(sim)
