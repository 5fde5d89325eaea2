"""The public code tables (src/pysched/codes.py): TASK_STATES, SCHED_POLICIES,
EVENT_KINDS and EVENT_FIELDS, checked against the C that writes the codes:
the enum of csrc/core/trace.h, the fields the core declares, and what the
engine and the policies actually log."""
import re

import numpy as np
import pytest

import pysched as ps

from repo_paths import ROOT

TRACE_H = ROOT / "csrc" / "core" / "trace.h"
PRESET = "linux-2.5.65"


def test_event_kinds_are_the_enum_of_trace_h_in_its_order():
    enum = re.findall(r"PS_EVT_(\w+)\s*=\s*(\d+)", TRACE_H.read_text())
    assert [int(code) for _, code in enum] == list(range(len(enum)))
    assert ps.EVENT_KINDS == tuple(name.lower() for name, _ in enum)


def test_every_event_kind_says_what_each_column_holds():
    assert list(ps.EVENT_FIELDS) == list(ps.EVENT_KINDS)
    for kind, fields in ps.EVENT_FIELDS.items():
        assert fields._fields == ("pid", "other", "value", "prio", "cpu"), kind
        assert all(f is None or (isinstance(f, str) and f) for f in fields), kind
        assert fields.cpu is not None, kind  # every event happens on a CPU


def _declared_codes(doc):
    """{code: word} of a field doc such as '0 running, 1 interruptible'."""
    return {int(code): word for code, word in re.findall(r"(\d+) (\w+)", doc)}


@pytest.mark.parametrize("preset", ps.presets())
def test_state_and_policy_tables_are_the_codes_the_core_declares(preset):
    docs = dict(ps.policy_info(preset)["generic_fields"])
    assert ps.TASK_STATES == _declared_codes(docs["state"])
    declared = {code: word.lower().removeprefix("sched_")
                for code, word in _declared_codes(docs["policy"]).items()}
    assert ps.SCHED_POLICIES == declared == {0: "normal", 1: "fifo", 2: "rr"}


def _logs():
    """Event logs in which every kind occurs: a busy machine under every
    preset on 2 CPUs, a starving interactive task (2.5.65) and a back-boost
    (2.5.65, fact sheet 5.5)."""
    logs = []
    for preset in ps.presets():
        sim = ps.policy.testing.busy_machine(preset, record="events")
        sim.run(seconds=2)
        logs.append(sim.events())
    sim = ps.Simulator(PRESET, record="events",
                       params={"max_sleep_avg": 2000, "starvation_limit": 100})
    for _ in range(2):
        sim.spawn(ps.programs.cpu_hog())
    sim.spawn(ps.Program().sleep(ms=2600).loop().run(s=1).end())
    sim.run(seconds=4)
    logs.append(sim.events())
    sim = ps.Simulator(PRESET, record="events", params={"max_sleep_avg": 10000})
    sim.spawn(ps.Program().wait("ch").sleep(s=100), init={"sleep_avg": 9500})
    sim.run(seconds=0.801)
    sim.spawn(ps.Program().post("ch").run(s=100), init={"sleep_avg": 4000})
    sim.run(seconds=0.01)
    logs.append(sim.events())
    return np.concatenate(logs)


def test_event_fields_none_are_exactly_the_columns_the_engine_leaves_unused():
    ev = _logs()
    unused_value = {"pid": -1, "other": -1, "value": 0, "prio": 0}
    for code, kind in enumerate(ps.EVENT_KINDS):
        rows = ev[ev["kind"] == code]
        assert len(rows), f"no {kind} event in the logs: the table is not checked for it"
        for column, sentinel in unused_value.items():
            if getattr(ps.EVENT_FIELDS[kind], column) is None:
                assert np.all(rows[column] == sentinel), (kind, column)
        if ps.EVENT_FIELDS[kind].pid is not None:
            assert np.all(rows["pid"] >= 0), kind
    migrate = ev[ev["kind"] == ps.EVENT_KINDS.index("migrate")]
    assert np.all((migrate["other"] >= 0) & (migrate["other"] != migrate["cpu"]))


def test_the_events_docstring_points_to_the_field_table():
    assert "pysched.EVENT_FIELDS" in ps.Simulator.events.__doc__
