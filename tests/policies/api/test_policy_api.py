"""What the layers above the engine know of a policy comes from the policy's
own table: headline fields, queue columns, formulas, derived constants,
runqueue fields and the default HZ.  These tests hold for every preset, so a
new policy is checked by them without a line added here."""
import contextlib
import io

import numpy as np
import pytest

import pysched as ps
from pysched import demo

PRESETS = ps.presets()


def mixed(preset, cpus=1):
    sim = ps.Simulator(preset, cpus=cpus)
    hogs = [sim.spawn(ps.programs.cpu_hog(), name=f"hog{i}") for i in range(3)]
    sleeper = sim.spawn(ps.Program().loop().run(ms=1).sleep(ms=50).end(), name="sleeper")
    sim.run(seconds=0.5)
    return sim, hogs, sleeper


@pytest.mark.parametrize("preset", PRESETS)
def test_the_headline_fields_are_task_fields_that_the_demo_prints(preset):
    info = ps.policy_info(preset)
    fields = [f for f, _ in info["generic_fields"] + info["task_fields"]]
    assert info["headline"] and set(info["headline"]) <= set(fields)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        demo.main([preset], seconds=0.2)
    header = [line for line in out.getvalue().splitlines() if line.startswith("task")][0]
    # a field counted in ns is headed "<field> ms"
    assert [w for w in header.split() if w != "ms"][-len(info["headline"]):] == info["headline"]


def test_the_demo_says_what_the_scene_is_and_what_each_table_shows_times_in_ms():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        demo.main(["linux-2.5.64", "linux-6.12-eevdf"], seconds=1)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("The scene: four CPU hogs")
    notes = [line for line in lines if line.startswith("To notice: ")]
    assert len(notes) == 2 and all("editor waited" in n and "X got" in n for n in notes)
    eevdf = lines[lines.index(next(x for x in lines if x.startswith("linux-6.12-eevdf"))) + 1:]
    assert "vruntime ms" in eevdf[0] and "deadline ms" in eevdf[0]
    hog = eevdf[1].split()
    assert hog[0] == "hog0" and float(hog[-3]) < 2000  # about 1,000 ms of vruntime in 1 s


def test_the_demo_shows_every_preset():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        demo.main(seconds=0.1)
    shown = [line.split(":")[0] for line in out.getvalue().splitlines() if "s simulated" in line]
    # those of C policies built by other tests included
    assert shown == ps.presets()


@pytest.mark.parametrize("preset", PRESETS)
def test_the_queue_lists_every_queued_task_once_in_the_policys_columns(preset):
    sim, hogs, sleeper = mixed(preset)
    cols = sim.queue_columns
    rows = sim.queue(0)
    assert "pid" in cols and all(len(r) == len(cols) for r in rows)
    pids = [r[cols.index("pid")] for r in rows]
    queued = [int(p) for p in sim.stats()["pid"][sim.stats()["on_rq"] == 1]]
    assert sorted(pids) == sorted(queued) and set(hogs) <= set(pids)


@pytest.mark.parametrize("preset", PRESETS)
def test_on_rq_is_one_exactly_for_runnable_tasks(preset):
    sim, hogs, sleeper = mixed(preset)
    st = sim.stats()
    assert np.array_equal(st["on_rq"] == 1, st["state"] == 0)
    assert all(sim.task(h).on_rq == 1 for h in hogs)


@pytest.mark.parametrize("preset", PRESETS)
def test_cpu_stats_count_the_queued_tasks_and_carry_the_policys_runqueue_fields(preset):
    sim, hogs, sleeper = mixed(preset, cpus=2)
    st = sim.cpu_stats()
    assert st["nr_running"].sum() == np.sum(sim.stats()["on_rq"])
    rq_fields = [f for f, _ in ps.policy_info(preset)["rq_fields"]]
    assert set(rq_fields) <= set(st.dtype.names)
    assert np.all(st["ticks"] == sim.jiffies)


@pytest.mark.parametrize("preset", PRESETS)
def test_every_declared_formula_is_callable_and_checks_its_arguments(preset):
    for name, args, _doc in ps.policy_info(preset)["formulas"]:
        n = len(args.split(","))
        with pytest.raises(ValueError, match=f"{name} takes {n} arguments"):
            ps.formula(preset, name, *([0] * (n + 1)))
        with pytest.raises(ValueError, match="is outside the allowed range"):
            ps.formula(preset, name, *([2**62] * n))
    with pytest.raises(KeyError, match="has no formula 'nope'"):
        ps.formula(preset, "nope")


def test_a_formula_is_the_c_the_simulator_runs():
    # the O(1) bonus: sleep_avg at MAX_SLEEP_AVG is -5 levels, none is +5
    assert ps.formula("linux-2.5.65", "effective_prio", 120, 10000) == 115
    assert ps.formula("linux-2.5.65", "effective_prio", 120, 0) == 125
    assert ps.formula("linux-2.5.64", "task_timeslice", 120) == 151
    with pytest.raises(ValueError, match=r"static_prio=99 is outside the allowed range 100\.\.139"):
        ps.formula("linux-2.5.65", "effective_prio", 99, 0)
    with pytest.raises(TypeError, match="must be an int"):
        ps.formula("linux-2.5.65", "effective_prio", 120.0, 0)


@pytest.mark.parametrize("preset", PRESETS)
def test_a_preset_runs_at_its_own_hz_unless_told_otherwise(preset):
    hz = ps.policy_info(preset)["hz"]
    assert ps.Simulator(preset).hz == hz
    sim = ps.Simulator(preset, hz=250)
    assert sim.hz == 250 and sim._core.tick_ns == 4_000_000


def test_the_houston_constants_are_the_policys_declared_derived_values():
    k = ps.analysis.houston.constants({"nice_const": 8000})
    assert k["nice_const"] == 8000 and k["exp_nice_const"] > 65536
    assert k["log_2"] == 45426 and k["hz"] == 1000
