"""stats() is written by the core straight into its array (table_shape,
table_fill): one row per live task and per kept exited one, in pid order,
each field the value sim.task(pid) reads one task at a time, nr_switches
their sum of switches and the name as Python spelt it.  Slots reused by
forks after exits, and exited records kept in exit order, put the core's
rows out of pid order; names of several bytes a character set the width."""
import numpy as np
import pytest

import pysched as ps

NAMES = ["hog", "tâche-ü", "任务", "x" * 31, "ok"]


def churned(keep_exited=5, cpus=3):
    """Tasks that fork children which exit at various times, so that
    slots are reused and exited records wrap their ring."""
    sim = ps.Simulator("linux-2.5.65", cpus=cpus, keep_exited=keep_exited, seed=3)
    child = ps.Program().run(ms=ps.uniform(1, 6)).exit()
    parent = ps.Program().loop().run(ms=1).fork(child, n=2).sleep(ms=ps.uniform(1, 4)).end()
    for i, name in enumerate(NAMES):
        sim.spawn(parent if i % 2 else ps.programs.cpu_hog(), name=name,
                  cpus_allowed=[cpus - 1] if i == 4 else None)
    sim.run(0.05)
    return sim


def reference(sim):
    """The rows as task(pid) reads them, one task at a time."""
    rows = []
    for pid in range(1, sim._core.ntasks + 1):
        try:
            rows.append(sim._core.task(pid))
        except KeyError:  # exited, its record dropped
            pass
    return rows


@pytest.mark.parametrize("cpus", [3, 130])
@pytest.mark.parametrize("keep_exited", [0, 5, 10_000])
def test_stats_rows_are_each_tasks_fields(keep_exited, cpus):
    sim = churned(keep_exited, cpus)
    st = sim.stats()
    ref = reference(sim)
    slots = [t["pid"] for t in ref if t["exit_ns"] < 0]
    assert len(st) == len(ref) and len(st) > len(NAMES)
    assert list(st["pid"]) == [t["pid"] for t in ref]
    for row, t in zip(st, ref):
        for f in t:
            assert row[f] == t[f], (t["pid"], f)
        assert row["nr_switches"] == t["nvcsw"] + t["nivcsw"]
    assert st.dtype["name"] == np.dtype("U31")
    assert set(NAMES) <= set(st["name"])
    assert sim.counters()["exited_kept"] == min(keep_exited, sim.counters()["exits"])
    assert len(slots) == sim.counters()["live_tasks"]


def test_slots_reused_out_of_pid_order_come_back_sorted():
    """Forks reuse the slots of reaped tasks, so the core's slots hold pids
    out of order: the rows still come in pid order, every pid once."""
    sim = churned()
    assert sim.counters()["task_slots"] < sim._core.ntasks  # slots were reused
    st = sim.stats()
    assert np.all(np.diff(st["pid"]) > 0)


def test_cpus_allowed_of_cpu_63_is_unsigned():
    sim = ps.Simulator("linux-2.5.65", cpus=64)
    sim.spawn(ps.programs.cpu_hog(), cpus_allowed=[63], name="last")
    st = sim.stats()
    assert st["cpus_allowed"].dtype == np.uint64
    assert st["cpus_allowed"][0] == 1 << 63


@pytest.mark.parametrize("cpus", [65, 1024])
def test_cpus_allowed_past_cpu_63_is_whole(cpus):
    """On a machine of more than 64 CPUs a mask is a Python int, as
    task(pid) reads it: a uint64 would keep CPUs 0..63 alone."""
    sim = ps.Simulator("linux-6.12-eevdf", cpus=cpus)
    sim.spawn(ps.programs.cpu_hog())
    pinned = sim.spawn(ps.programs.cpu_hog(), cpus_allowed=np.array([1, cpus - 1]))
    sim.run(0.01)
    st = sim.stats()
    assert st["cpus_allowed"].dtype == object
    assert st["cpus_allowed"].tolist() == [(1 << cpus) - 1, 2 | 1 << (cpus - 1)]
    assert st["cpus_allowed"][pinned - 1] == sim.task(pinned).cpus_allowed
    assert st["cpu"][pinned - 1] in (1, cpus - 1)
    assert ps.Simulator("linux-2.5.65", cpus=cpus).stats()["cpus_allowed"].dtype == object


def test_a_series_of_cpus_allowed_is_refused_past_64_cpus():
    with pytest.raises(ValueError, match="130 CPUs .*cpus=1..64"):
        ps.Simulator("linux-2.5.65", cpus=130, record="series", series_fields=["cpus_allowed"])


def test_no_tasks_gives_an_empty_table():
    st = ps.Simulator("linux-2.5.65").stats()
    assert len(st) == 0 and st.dtype["name"] == np.dtype("U1")


def test_a_buffer_of_the_wrong_size_is_refused():
    sim = churned()
    names, n, width = sim._core.table_shape()
    for size in (0, n * (8 * len(names) + 8 + 4 * width) - 4, 7):
        with pytest.raises(ValueError, match="table_shape"):
            sim._core.table_fill(np.empty(size, dtype=np.uint8))
    with pytest.raises(BufferError, match="not writable"):
        sim._core.table_fill(b"read-only" * 100)


def test_a_width_too_narrow_for_a_name_is_refused():
    sim = ps.Simulator("linux-2.5.65")
    sim.spawn(ps.programs.cpu_hog(), name="a")
    sim.spawn(ps.programs.cpu_hog(), name="abc")
    names, n, width = sim._core.table_shape()
    assert (n, width) == (2, 3)
    # laid out for names of one character: the second name does not fit
    with pytest.raises(ValueError, match="longer"):
        sim._core.table_fill(np.empty(n * (8 * len(names) + 8 + 4), dtype=np.uint8))
