"""Every prediction and measurement of pysched.analysis is one kind of
result: a short repr that leads with the kind and why, str() the whole
why, as_dict() and to_frame(), NaN for what does not exist, and `shares`
the one to plot; the old names and the old dict still answer, with a
FutureWarning."""
import dataclasses
import math

import numpy as np
import pytest

import pysched as ps
from pysched.analysis import Result, measure

CYCLING = {"run_avg_halflife": 500, "nice_const": 8000}
STARVING = {"nice_const": 25600}


@pytest.fixture(scope="module")
def results():
    return {
        "equilibrium": ps.analysis.houston_equilibrium([0, 5]),
        "cycles": ps.analysis.houston_stability([-20, 19], params=CYCLING),
        "starves": ps.analysis.houston_stability([-20, 19], params=STARVING),
        "settles": ps.analysis.houston_stability([0, 5]),
        "run": ps.analysis.classify_run([-20, 19], params=CYCLING),
        "o1": ps.analysis.o1_steady_state(50, 50),
        "mixture": ps.analysis.o1_mixture([(5.6, 44.4), (45.7, 34.3)]),
        "duty": ps.analysis.o1_duty_run(50, 50, seconds=5),
    }


def test_every_result_is_a_result_whose_repr_leads_with_its_kind_and_why(results):
    for name, r in results.items():
        assert isinstance(r, Result) and dataclasses.is_dataclass(r), name
        text = repr(r)
        assert text.startswith(f"{type(r).__name__}({r.kind}: {r.why[:20]}"), text
        assert len(text) <= 250, (name, len(text))
        assert str(r) == f"{r.kind}: {r.why}"
    st = results["cycles"]
    assert repr(st).startswith("Stability(cycles: One 500-tick timeslice of task 2 (nice 19) moves")
    # the repr shows the figures to set beside the simulated run's
    run = results["run"]
    assert f"shares=[{run.shares[0]:.3g} {run.shares[1]:.3g}]" in repr(st)
    assert f"period_s={run.cycle.period_s:.4g}" in repr(st)
    assert repr(results["equilibrium"]).startswith("Equilibrium(fixed point: CPU hogs of nice 0, 5")
    assert results["run"].cycle.kind == "cycle" and "every 3.5 s" in results["run"].cycle.why


def test_what_does_not_exist_is_nan_not_none(results):
    assert math.isnan(results["cycles"].settling_s)
    assert math.isnan(results["starves"].contact_s) and math.isnan(results["starves"].period_s)
    assert results["settles"].settling_s > 0 and results["cycles"].contact_s > 0
    assert math.isnan(results["run"].settling_s)
    times = np.arange(0, 30_000) * 10_000_000
    spikes = np.where(np.random.default_rng(3).random(len(times)) < 0.005, 170.0, 150.0)
    assert math.isnan(measure.limit_cycle(times, spikes).period_s)
    for r in results.values():
        assert not any(v is None for v in r.as_dict().values())


def test_as_dict_holds_every_field_and_to_frame_a_row_per_task(results):
    st = results["cycles"]
    d = st.as_dict()
    assert list(d) == [f.name for f in dataclasses.fields(st)]
    assert np.array_equal(d["shares"], st.shares) and d["shares"] is not st.shares
    frame = st.to_frame()
    assert list(frame.index) == [0, 1] and frame.index.name == "task"
    assert frame["shares"].tolist() == st.shares.tolist()
    assert (frame["kind"] == "cycles").all() and frame["settling_s"].isna().all()
    run = results["run"].to_frame()
    assert run["shares"].tolist() == results["run"].shares.tolist()
    assert run["cycle_period_s"].tolist() == [3.5, 3.5]  # the cycle within, flattened
    one = results["o1"].to_frame()  # no per-task arrays: one row
    assert len(one) == 1 and one["kind"].iloc[0] == results["o1"].kind
    # a sweep's row: as_dict of a result with scalars only
    rows = ps.sweep(lambda run_ms: ps.analysis.o1_steady_state(run_ms, 50).as_dict(),
                    {"run_ms": [2, 50, 80]})
    assert rows["kind"].tolist() == ["top", "bottom", "bottom"]


def test_shares_is_the_field_to_plot_and_says_so(results):
    for cls in (ps.analysis.Stability, ps.analysis.MeasuredRun, ps.analysis.Equilibrium):
        assert "the shares to plot" in " ".join(cls.__doc__.split()).replace("**", "")
    eq, st = results["equilibrium"], results["cycles"]
    assert eq.shares.sum() == pytest.approx(1)
    # where the loop cycles, the prediction is the return map's, far from
    # the fixed point's (a step of the argument, not what a run shows)
    assert st.shares[1] > 10 * st.fixed_point_shares[1]
    assert abs(st.shares[1] - results["run"].shares[1]) < 0.03


def test_the_old_names_and_the_old_dict_still_answer_with_a_future_warning(results):
    eq, st = results["equilibrium"], results["cycles"]
    with pytest.warns(FutureWarning, match=r"eq\['shares'\] is eq.shares"):
        assert eq["shares"] is eq.shares
    with pytest.warns(FutureWarning):
        assert dict(eq) == {"shares": eq.shares, "prio": eq.prio, "run_avg": eq.run_avg,
                            "ratio": eq.ratio}
    with pytest.raises(KeyError):
        eq["why_not"]
    with pytest.warns(FutureWarning, match="Stability.equilibrium_shares is now "
                                           "Stability.fixed_point_shares"):
        assert st.equilibrium_shares is st.fixed_point_shares
    with pytest.warns(FutureWarning, match="Stability.discrete_shares is now Stability.level_shares"):
        assert st.discrete_shares is st.level_shares


def test_every_time_field_says_its_unit():
    # a field of seconds ends in _s; one of ticks is said to be in ticks
    for cls in (ps.analysis.Stability, ps.analysis.MeasuredRun, ps.analysis.O1SteadyState,
                ps.analysis.O1Mixture,
                ps.analysis.SleepAvgRun, ps.analysis.LimitCycle, ps.analysis.Equilibrium):
        doc = " ".join(cls.__doc__.split())
        for f in dataclasses.fields(cls):
            if f.name.endswith("_s") or f.name == "seconds":
                continue
            if "slice" in f.name or "ticks" in f.name or f.name.endswith("_time"):
                assert f.name.endswith("_ticks") or "in ticks" in doc, (cls.__name__, f.name)
