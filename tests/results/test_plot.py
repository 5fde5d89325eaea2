"""pysched.plot draws what it claims: the timeline is the context switches,
the series are the samples, the CDFs the latencies, the share bars the
counters, the heat maps the sweep table pivoted onto its grid."""
import sys

import numpy as np
import pytest

import pysched as ps

matplotlib = pytest.importorskip("matplotlib", reason="the test extra installs matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

PRESET = "linux-2.5.65"


@pytest.fixture(autouse=True)
def no_figure_left_open_and_none_shown(monkeypatch):
    def show(*args, **kwargs):
        raise AssertionError("a plot called plt.show()")
    monkeypatch.setattr(plt, "show", show)
    yield
    plt.close("all")


def machine(record="events", seconds=0.3, **kwargs):
    """Three hogs, a sleeper and a task that exits, on two CPUs."""
    sim = ps.Simulator(PRESET, cpus=2, seed=3, record=record, **kwargs)
    for i in range(3):
        sim.spawn(ps.programs.cpu_hog(), name=f"hog{i}")
    sim.spawn(ps.programs.interactive(1, 3), name="sleeper")
    sim.spawn(ps.Program().run(ms=30), name="brief")
    sim.run(seconds=seconds)
    return sim


def new_axes():
    return Figure().add_subplot()


def bars_of(ax):
    """{pid: [(cpu row, start_s, end_s), ...]} of a timeline's bars, and
    {pid: facecolor} (by name: names for pids)."""
    bars, colors = {}, {}
    for coll in ax.collections:
        by, key = coll.get_gid().split(" ", 1)
        pid = int(key) if by == "pid" else key
        colors[pid] = tuple(coll.get_facecolor()[0])
        for path in coll.get_paths():
            (x0, y0), (x1, y1) = path.vertices.min(axis=0), path.vertices.max(axis=0)
            bars.setdefault(pid, []).append((round((y0 + y1) / 2), x0, x1))
    return bars, colors


# ---------------------------------------------------------------- timeline

def test_the_timeline_has_a_bar_per_stretch_between_switches_in_the_tasks_color():
    sim = machine()
    ax = ps.plot.timeline(sim)
    bars, colors = bars_of(ax)
    st = sim.stats()
    # the bars of a task add up to its CPU time, exactly
    for pid, cpu_ns in zip(st["pid"].tolist(), st["cpu_ns"].tolist()):
        assert sum(x1 - x0 for _, x0, x1 in bars[pid]) == pytest.approx(cpu_ns / 1e9, abs=1e-9)
        assert colors[pid] == to_rgba(ps.plot.task_color(pid))
    ev = sim.events()
    switches = ev[(ev["kind"] == ps.EVENT_KINDS.index("switch")) & (ev["pid"] != 0)]
    assert sum(map(len, bars.values())) <= len(switches)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["hog0 (1)", "hog1 (2)", "hog2 (3)", "sleeper (4)", "brief (5)"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["CPU 0", "CPU 1"]


def test_the_timeline_shows_who_the_cpu_runs_at_every_tick():
    # an independent witness: the runqueue's curr, stepping tick by tick
    sim = ps.Simulator(PRESET, cpus=2, seed=4, record="events")
    for i in range(3):
        sim.spawn(ps.programs.cpu_hog(), name=f"hog{i}")
    sim.spawn(ps.programs.interactive(2, 5), name="sleeper")
    seen = []
    for _ in range(150):
        sim.step(1)
        seen += [(sim.now_ns / 1e9, cpu, sim.runqueue(cpu)["curr"]) for cpu in (0, 1)]
    sim.step(1)
    bars, _ = bars_of(ps.plot.timeline(sim))
    for t, cpu, curr in seen:
        at = [pid for pid, spans in bars.items() for row, x0, x1 in spans
              if row == cpu and x0 <= t + 1e-12 < x1]
        assert at == ([curr] if curr else []), (t, cpu)


def test_a_timeline_window_cuts_the_bars_to_it_and_picks_the_cpus():
    sim = machine()
    ax = ps.plot.timeline(sim, start_s=0.1, end_s=0.2, cpus=[1], ax=new_axes())
    bars, _ = bars_of(ax)
    spans = [s for v in bars.values() for s in v]
    assert ax.get_xlim() == (0.1, 0.2) and {row for row, _, _ in spans} == {0}
    assert min(x0 for _, x0, _ in spans) >= 0.1 and max(x1 for _, _, x1 in spans) <= 0.2
    assert sum(x1 - x0 for _, x0, x1 in spans) == pytest.approx(0.1)  # a hog always runs
    assert [t.get_text() for t in ax.get_yticklabels()] == ["CPU 1"]


def test_a_timeline_by_name_gives_a_make_and_its_compilers_one_color():
    sim = ps.Simulator(PRESET, seed=2, record="events")
    sim.spawn(ps.programs.kernel_compile(jobs=2, cc_ms=ps.uniform(5, 20)), name="make")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.run(seconds=1)
    st = sim.stats()
    assert (st["name"] == "make").sum() > 5
    ax = ps.plot.timeline(sim, by="name")
    bars, colors = bars_of(ax)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["make", "hog"]
    for name, first in (("make", 1), ("hog", 2)):
        assert sum(x1 - x0 for _, x0, x1 in bars[name]) == pytest.approx(
            st["cpu_ns"][st["name"] == name].sum() / 1e9)
        assert colors[name] == to_rgba(ps.plot.task_color(first))


def test_a_timeline_without_the_event_log_says_how_to_turn_it_on():
    with pytest.raises(ps.StateError, match=r"timeline\(\) reads the event log, which is off: "
                                            r"create the Simulator with record='events'"):
        ps.plot.timeline(machine(record="counters"))


def test_a_timeline_refuses_an_empty_window_and_unknown_cpus():
    sim = machine()
    with pytest.raises(ValueError, match=r"window start_s=0\.2 \.\. end_s=0\.1 is empty"):
        ps.plot.timeline(sim, start_s=0.2, end_s=0.1)
    with pytest.raises(ValueError, match=r"end_s=0\.4 is after the end of the run \(0\.3 s\)"):
        ps.plot.timeline(sim, end_s=0.4)
    with pytest.raises(ValueError, match=r"cpu=2 is outside the allowed range 0\.\.1"):
        ps.plot.timeline(sim, cpus=[2])
    with pytest.raises(TypeError, match="needs a pysched.Simulator, not str"):
        ps.plot.timeline("sim")
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes, not Figure"):
        ps.plot.timeline(sim, ax=Figure())


def test_a_long_legend_keeps_the_busiest_tasks_and_says_so():
    sim = ps.Simulator(PRESET, record="events")
    for i in range(ps.plot.MAX_LEGEND + 5):
        sim.spawn(ps.programs.interactive(1 + i, 10), name=f"t{i}")
    sim.run(seconds=1)
    legend = ps.plot.timeline(sim).get_legend()
    assert legend.get_title().get_text() == f"the {ps.plot.MAX_LEGEND} busiest of 25 tasks"
    shown = [t.get_text() for t in legend.get_texts()]
    # the busiest compute longest: the last ones spawned
    assert len(shown) == ps.plot.MAX_LEGEND and shown[0] == "t5 (6)" and shown[-1] == "t24 (25)"


# ---------------------------------------------------------------- series

def test_series_draw_the_samples_of_each_task_labelled_by_pid_and_name():
    sim = machine(record="series", series_fields=["prio", "sleep_avg"])
    ax = ps.plot.series(sim, "sleep_avg", tasks=["sleeper", 1])
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["sleeper (4)", "hog0 (1)"]
    assert np.array_equal(lines[0].get_xdata(), sim.series_times() / 1e9)
    assert np.array_equal(lines[0].get_ydata(), sim.series("sleep_avg")[:, 3], equal_nan=True)
    assert np.array_equal(lines[1].get_ydata(), sim.series("sleep_avg")[:, 0], equal_nan=True)
    assert ax.get_ylabel() == "sleep_avg"
    every = ps.plot.series(sim, "prio", label="{name}", ax=new_axes())
    assert [ln.get_label() for ln in every.get_lines()] == ["hog0", "hog1", "hog2", "sleeper",
                                                            "brief"]
    overlaid = ps.plot.series(sim, "prio", tasks=[1, 4], color="k", ax=new_axes())
    assert {to_rgba(ln.get_color()) for ln in overlaid.get_lines()} == {to_rgba("k")}


def test_series_need_record_series_and_a_sampled_field():
    with pytest.raises(ps.StateError, match=r"series\(\) reads sampled series, which are off: "
                                            r"create the Simulator with record='series'"):
        ps.plot.series(machine(), "prio")
    sim = machine(record="series", series_fields=["prio"])
    with pytest.raises(KeyError, match="field 'sleep_avg' is not sampled"):
        ps.plot.series(sim, "sleep_avg")
    with pytest.raises(KeyError, match="no task named 'sleper'; did you mean 'sleeper'"):
        ps.plot.series(sim, "prio", tasks="sleper")
    with pytest.raises(ValueError, match=r"label='\{pdi\}' is not a template of \{pid\} and "
                                         r"\{name\}"):
        ps.plot.series(sim, "prio", label="{pdi}")


# ---------------------------------------------------------------- latency CDFs

def test_a_latency_cdf_climbs_through_each_latency_to_1():
    sim = machine()
    ax = ps.plot.latency_cdf(sim)
    lat = sim.latencies()
    woken = np.unique(lat["pid"]).tolist()
    assert [ln.get_label() for ln in ax.get_lines()] == [f"{n} ({p})" for p, n in zip(
        woken, [sim.task(p).name for p in woken])]
    for line, pid in zip(ax.get_lines(), woken):
        x, y = line.get_xdata(), line.get_ydata()
        want = np.sort(lat["latency_ns"][lat["pid"] == pid]) / 1e6
        assert np.array_equal(x[1:], want) and y[0] == 0 and y[-1] == 1
        assert np.all(np.diff(y) > 0) and line.get_drawstyle() == "steps-post"


def test_a_combined_latency_cdf_pools_the_tasks_and_log_x_is_a_log_axis():
    sim = machine()
    ax = ps.plot.latency_cdf(sim, [4, "brief"], combined=True, log_x=True, label="mine")
    (line,) = ax.get_lines()
    lat = sim.latencies()
    assert len(line.get_xdata()) == 1 + np.isin(lat["pid"], [4, 5]).sum()
    assert line.get_ydata()[-1] == 1 and line.get_label() == "mine"
    assert ax.get_xscale() == "log"
    (pooled,) = ps.plot.latency_cdf(sim, combined=True, color="C3", ax=new_axes()).get_lines()
    assert pooled.get_label() == "all tasks" and to_rgba(pooled.get_color()) == to_rgba("C3")


def test_runs_drawn_into_one_axes_share_its_legend():
    ax = new_axes()
    for k, preset in enumerate(("linux-2.5.64", "linux-2.5.65")):
        sim = ps.Simulator(preset, seed=1, record="series")
        sim.spawn(ps.programs.cpu_hog(), name="hog")
        sim.spawn(ps.programs.interactive(1, 10), name="sleeper")
        sim.run(seconds=1)
        ps.plot.latency_cdf(sim, "sleeper", combined=True, label=preset, color=f"C{k}", ax=ax)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["linux-2.5.64", "linux-2.5.65"]


def test_a_latency_cdf_of_a_task_never_woken_says_so():
    sim = ps.Simulator(PRESET, record="events")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    with pytest.raises(ValueError, match="no wakeup latency is recorded"):
        ps.plot.latency_cdf(sim)
    sim.spawn(ps.programs.interactive(1, 3), name="sleeper")
    sim.run(seconds=0.5)   # the hog's first timeslice, then the sleeper's wakeups
    with pytest.raises(ValueError, match=r"task 1 \('hog'\) has no wakeup latency recorded"):
        ps.plot.latency_cdf(sim, tasks=[1, 2])


# ---------------------------------------------------------------- shares

def widths(ax):
    return [p.get_width() for p in ax.patches]


def test_share_bars_of_the_cpu_time_used_sum_to_1():
    sim = machine()
    st = sim.stats()
    ax = ps.plot.shares(sim)
    assert sum(widths(ax)) == pytest.approx(1)
    assert widths(ax) == pytest.approx(list(st["cpu_ns"] / st["cpu_ns"].sum()))
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "hog0 (1)", "hog1 (2)", "hog2 (3)", "sleeper (4)", "brief (5)"]
    assert [to_rgba(p.get_facecolor()) for p in ax.patches] == [
        to_rgba(ps.plot.task_color(p)) for p in st["pid"].tolist()]


def test_share_bars_of_one_cpu_and_by_name():
    sim = ps.Simulator(PRESET, cpus=2, record="events")
    for _ in range(2):
        sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.spawn(ps.programs.cpu_hog(), name="solo")
    sim.run(seconds=2)
    ax = ps.plot.shares(sim, by="name", of="cpu")
    st = sim.stats()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["hog", "solo"]
    assert widths(ax) == pytest.approx([st["cpu_ns"][:2].sum() / 2e9, st["cpu_ns"][2] / 2e9])
    assert sum(widths(ax)) == pytest.approx(2)  # two CPUs, always busy
    with pytest.raises(ValueError, match=r"by='names' is not one of \('pid', 'name'\)"):
        ps.plot.shares(sim, by="names")
    with pytest.raises(ValueError, match=r"no CPU time to share: no task has run yet"):
        ps.plot.shares(ps.Simulator(PRESET))


def test_share_bars_over_a_window_are_the_counters_grown_in_it():
    sim = ps.Simulator(PRESET, cpus=2, seed=1, record="events")
    for nice in (0, 0, 5, 10):
        sim.spawn(ps.programs.cpu_hog(), nice=nice, name=f"nice{nice}")
    sim.spawn(ps.programs.interactive(3, 20), name="sleeper")
    sim.run(seconds=1.5)
    before = sim.stats()["cpu_ns"]
    sim.run(seconds=1)
    grown = sim.stats()["cpu_ns"] - before
    ax = ps.plot.shares(sim, of="cpu", start_s=1.5)
    assert widths(ax) == pytest.approx(list(grown / 1e9))
    used = ps.plot.shares(sim, by="name", start_s=1.5, end_s=2.5, ax=new_axes())
    assert widths(used) == pytest.approx([grown[:2].sum() / grown.sum(), *(grown[2:] / grown.sum())])
    with pytest.raises(ps.StateError, match=r"shares\(\) reads the event log, which is off"):
        ps.plot.shares(machine(record="counters"), start_s=0.1)


# ---------------------------------------------------------------- sweep heat maps

def point(a, b, seed):
    return {"value": a * 10 + b + seed / 10, "predicted": a * 10 + b,
            "kind": "settles" if b < 2 else ("cycles" if a < 2 else "starves")}


GRID = {"a": [0, 1, 2], "b": [0, 1, 2, 3]}


@pytest.fixture(params=["pandas", "numpy", "dicts"])
def table(request):
    if request.param == "pandas":
        pytest.importorskip("pandas")
    return ps.sweep(point, GRID, seeds=3, output=request.param)


def pivoted(column):
    """The sweep's column averaged over seeds, on the grid (b across, a up)."""
    return np.array([[np.mean([point(a, b, s)[column] for s in range(3)]) for b in GRID["b"]]
                     for a in GRID["a"]])


def image(ax):
    (im,) = ax.get_images()
    return np.ma.filled(im.get_array().astype(float), np.nan)


def test_a_heat_map_is_the_table_pivoted_onto_its_grid(table):
    ax = ps.plot.heatmap(table, "b", "a", "value")
    assert np.allclose(image(ax), pivoted("value"))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2", "3"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0", "1", "2"]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("b", "a", "value")
    assert len(ax.texts) == 12  # small: each cell says its value
    assert np.allclose(image(ps.plot.heatmap(table, "b", "a", "value", agg="max", ax=new_axes())),
                       pivoted("value") + 0.1)


def test_a_heat_map_equals_the_pandas_pivot_table_with_holes_where_no_row_is():
    pd = pytest.importorskip("pandas")
    df = ps.sweep(point, GRID, seeds=2).iloc[:-2]  # the last cell has no row
    ax = ps.plot.heatmap(df, "b", "a", "value")
    want = df.pivot_table(index="a", columns="b", values="value", aggfunc="mean")
    assert np.array_equal(image(ax), want.to_numpy(), equal_nan=True)
    assert np.isnan(image(ax)[-1, -1])
    assert pd is not None


def test_prediction_simulation_and_their_difference_side_by_side(table):
    fig = ps.plot.predicted_vs_simulated(table, "b", "a", "predicted", "value")
    want, got, diff = (image(ax) for ax in fig.axes[:3])
    assert np.allclose(want, pivoted("predicted")) and np.allclose(got, pivoted("value"))
    assert np.allclose(diff, got - want)
    ims = [ax.get_images()[0] for ax in fig.axes[:3]]
    assert ims[0].get_clim() == ims[1].get_clim()
    lo, hi = ims[2].get_clim()
    assert lo == -hi == pytest.approx(-0.1)
    assert [ax.get_title() for ax in fig.axes[:3]] == ["predicted", "value", "value − predicted"]


def test_on_a_log_scale_prediction_and_simulation_compare_by_their_ratio():
    from matplotlib.colors import LogNorm
    rows = [{"x": x, "y": y, "p": 10.0 ** x * (y + 1), "m": 10.0 ** x * (y + 1) * (2 if x else 1)}
            for x in range(3) for y in range(2)]
    fig = ps.plot.predicted_vs_simulated(rows, "x", "y", "p", "m", log=True)
    want, got, ratio = (image(ax) for ax in fig.axes[:3])
    assert np.allclose(ratio, got / want) and np.allclose(ratio, [[1, 2, 2], [1, 2, 2]])
    ims = [ax.get_images()[0] for ax in fig.axes[:3]]
    assert all(isinstance(im.norm, LogNorm) for im in ims)
    assert ims[0].get_clim() == ims[1].get_clim() == (1, 400)
    assert ims[2].get_clim() == pytest.approx((0.5, 2))
    assert fig.axes[2].get_title() == "m / p"
    fig.canvas.draw()
    bars = [t.get_text() for ax in fig.axes[3:] for minor in (False, True)
            for t in ax.yaxis.get_ticklabels(minor=minor)]
    assert {"1", "100", "2"} <= set(bars) and not any("times" in t for t in bars)
    ax = ps.plot.heatmap(rows, "x", "y", "m", log=True)
    assert isinstance(ax.get_images()[0].norm, LogNorm) and np.allclose(image(ax), got)
    rows[0]["m"] = 0.0
    with pytest.raises(ValueError, match=r"log=True needs positive values; column 'm' has 1 "
                                         r"cell\(s\) at or below 0 \(the least 0\)"):
        ps.plot.heatmap(rows, "x", "y", "m", log=True)
    with pytest.raises(ValueError, match="column 'm' has 1 cell"):
        ps.plot.predicted_vs_simulated(rows, "x", "y", "p", "m", log=True)
    with pytest.raises(TypeError, match="log must be a bool, not str"):
        ps.plot.heatmap(rows, "x", "y", "p", log="yes")


def test_long_grid_labels_across_are_turned_short_ones_not():
    rows = [{"x": x, "y": y, "v": 1.0} for x in np.geomspace(1600, 25600, 8).round().astype(int)
            for y in range(2)]
    for draw in (lambda r: ps.plot.heatmap(r, "x", "y", "v", ax=new_axes()),
                 lambda r: ps.plot.stability_map([dict(row, v="settles") for row in r],
                                                 "x", "y", "v", ax=new_axes())):
        turned = draw(rows).get_xticklabels()
        assert [t.get_text() for t in turned][-1] == "25600"
        assert {t.get_rotation() for t in turned} == {45} and {t.get_ha() for t in turned} == {"right"}
        assert {t.get_rotation() for t in draw(rows[:8]).get_xticklabels()} == {0}


def test_maps_of_one_sweep_list_their_verdicts_alike_whatever_came_first():
    rows = [{"x": x, "y": 0, "p": p, "m": m}
            for x, (p, m) in enumerate([("cycles", "settles"), ("settles", "starves"),
                                        ("starves", "cycles"), ("odd", "settles")])]
    legends = [[t.get_text() for t in ps.plot.stability_map(rows, "x", "y", k, ax=new_axes())
                .get_legend().get_texts()] for k in ("p", "m")]
    assert legends == [["settles", "cycles", "starves", "odd"], ["settles", "cycles", "starves"]]


def test_a_stability_map_colors_each_cell_by_its_kind(table):
    ax = ps.plot.stability_map(table, "b", "a", "kind")
    kinds = ["settles", "cycles", "starves"]
    want = np.array([[kinds.index(point(a, b, 0)["kind"]) for b in GRID["b"]] for a in GRID["a"]])
    assert np.array_equal(image(ax), want)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == kinds
    assert [to_rgba(h.get_facecolor()) for h in ax.get_legend().legend_handles] == [
        to_rgba(ps.plot.STABILITY_COLORS[k]) for k in kinds]
    assert not ax.texts  # every seed agrees


def test_a_stability_map_shows_the_majority_and_how_many_agree():
    rows = [{"x": 0, "y": 0, "kind": k} for k in ("cycles", "settles", "cycles")]
    rows += [{"x": 1, "y": 0, "kind": "settles"}]
    ax = ps.plot.stability_map(rows, "x", "y", "kind", order=["settles", "cycles"])
    assert np.array_equal(image(ax), [[1, 0]])
    assert [t.get_text() for t in ax.texts] == ["2/3"]
    with pytest.raises(ValueError, match=r"column 'kind' holds \['cycles'\], not in "
                                         r"order=\['settles'\]"):
        ps.plot.stability_map(rows, "x", "y", "kind", order=["settles"])
    with pytest.raises(KeyError, match=r"colors has no color for \['cycles'\]"):
        ps.plot.stability_map(rows, "x", "y", "kind", colors={"settles": "green"})


def test_a_sweep_plot_names_the_columns_it_lacks(table):
    with pytest.raises(KeyError, match="the table has no column 'vlaue'; .*did you mean 'value'"):
        ps.plot.heatmap(table, "b", "a", "vlaue")
    with pytest.raises(TypeError, match="column 'kind' must hold numbers"):
        ps.plot.heatmap(table, "b", "a", "kind")
    with pytest.raises(ValueError, match=r"agg='avg' is not one of \('mean', 'median', 'min', "
                                         r"'max'\) or a function"):
        ps.plot.heatmap(table, "b", "a", "value", agg="avg")
    with pytest.raises(TypeError, match="needs a sweep table .*, not int"):
        ps.plot.heatmap(3, "b", "a", "value")


# ---------------------------------------------------------------- drawing and matplotlib

def test_every_plot_draws_into_the_axes_given_and_returns_it():
    sim = machine(record="series")
    table = ps.sweep(point, GRID, seeds=1, output="dicts")
    for draw in (lambda ax: ps.plot.timeline(sim, ax=ax),
                 lambda ax: ps.plot.series(sim, "prio", ax=ax),
                 lambda ax: ps.plot.latency_cdf(sim, ax=ax), lambda ax: ps.plot.shares(sim, ax=ax),
                 lambda ax: ps.plot.heatmap(table, "b", "a", "value", ax=ax),
                 lambda ax: ps.plot.stability_map(table, "b", "a", "kind", ax=ax)):
        ax = new_axes()
        assert draw(ax) is ax and ax.has_data()
    fig = Figure()
    assert ps.plot.predicted_vs_simulated(table, "b", "a", "predicted", "value", fig=fig) is fig
    assert not plt.get_fignums()  # nothing was drawn into a figure of pyplot's


def test_without_matplotlib_a_plot_says_how_to_install_it(monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)   # import fails as if absent
    with pytest.raises(ImportError, match=r'^pysched.plot needs matplotlib, which is not '
                                          r'installed: pip install "pysched\[plot\]"$'):
        ps.plot.shares(machine())


def test_importing_pysched_does_not_import_matplotlib():
    import subprocess
    out = subprocess.run([sys.executable, "-c", "import sys, pysched; "
                          "print('matplotlib' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
