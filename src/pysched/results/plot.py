"""Plots of a run and of a sweep, drawn with matplotlib.

    import pysched as ps
    sim = ps.Simulator("linux-2.5.65", record="series")    # the event log and series
    ...
    ps.plot.timeline(sim, start_s=9.9, end_s=10)    # who ran when, one row per CPU
    ps.plot.series(sim, "prio", tasks=["X"])        # a task field over time
    ps.plot.latency_cdf(sim, log_x=True)            # wakeup-to-run latencies
    ps.plot.shares(sim, by="name")                  # the CPU share of each task
    table = ps.sweep(fn, {"nice_const": [...], "run_avg_halflife": [...]}, seeds=3)
    ps.plot.heatmap(table, "nice_const", "run_avg_halflife", "share")
    ps.plot.predicted_vs_simulated(table, "nice_const", "run_avg_halflife",
                                   "predicted", "share")
    ps.plot.stability_map(table, "nice_const", "run_avg_halflife", "kind")

Each draws into the Axes given as ``ax=`` (the Figure given as ``fig=``
for the side-by-side one), or into a new figure, and returns it; none
calls plt.show(), so a script saves the figure and a notebook shows it.
A task has the same color in every plot of a run (its pid picks it) and is
labelled "name (pid)".  matplotlib is optional: ``pip install
"pysched[plot]"``; it is imported when a plot is first drawn.
"""
import numpy as np

from .. import _core
from . import plot_data as data
from .._checks import check_bool, check_name
from .._checks import check_int as _check_int
from .._lookup import pid_named
# the window a plot draws is checked as the metrics check theirs
from .metrics import _window
from ..simulator import Simulator

MAX_LEGEND = 20  # entries a legend lists; beyond, its title says which it keeps
DEFAULT_LABEL = "{name} ({pid})"
# the usual verdicts of a stability analysis (data.VERDICTS, the order a map
# lists them in), in the colors a reader expects; other kinds take the tab10
# colors in turn
STABILITY_COLORS = dict(zip(data.VERDICTS, ("#4daf4a", "#ff7f00", "#e41a1c", "#984ea3")))
BY = ("pid", "name")
OF = ("used", "cpu")
AUTO_ANNOTATE_CELLS = 100  # a heat map this small writes its values in its cells
ROTATE_X_CHARS = 30  # grid labels across longer than this in all are turned


def _pyplot():
    """matplotlib.pyplot, or an ImportError that says how to get it."""
    try:
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as missing:
        # only matplotlib itself missing: one that fails to import for another
        # reason (a dependency of its own) says why on its own
        if missing.name is None or missing.name.split(".")[0] != "matplotlib":
            raise
        raise ImportError('pysched.plot needs matplotlib, which is not installed: '
                          'pip install "pysched[plot]"') from None
    return plt


def _axes(ax, what, figsize):
    """ax, checked, or the Axes of a new figure of `figsize` inches."""
    plt = _pyplot()
    if ax is None:
        return plt.subplots(figsize=figsize)[1]
    from matplotlib.axes import Axes
    if not isinstance(ax, Axes):
        raise TypeError(f"{what}: ax must be a matplotlib Axes, not {type(ax).__name__}")
    return ax


def _simulator(sim, what):
    if not isinstance(sim, Simulator):
        raise TypeError(f"{what} needs a pysched.Simulator, not {type(sim).__name__}")
    return sim


def _choice(what, v, choices):
    if v not in choices:
        raise ValueError(f"{what}={v!r} is not one of {choices}")
    return v


def task_color(pid):
    """The color of task `pid` in every plot: tab20's ten dark colors, then
    its ten light ones (neighbouring pids get distinct hues)."""
    _pyplot()
    import matplotlib
    palette = matplotlib.colormaps["tab20"].colors
    palette = palette[0::2] + palette[1::2]
    pid = _check_int("pid", pid, 0, 2**31 - 1)
    return palette[(pid - 1) % len(palette)]


def _names(sim):
    """pid -> name of every task whose record the simulator keeps."""
    st = sim.stats()
    return dict(zip(st["pid"].tolist(), st["name"].tolist()))


def _lowest_pids(names):
    """name -> the lowest pid of that name, in pid order: a name's color
    is its first task's."""
    lowest = {}
    for pid in sorted(names):
        lowest.setdefault(names[pid], pid)
    return lowest


def _label(template, pid, names, what):
    """The label of task `pid` from a template with {pid} and {name}."""
    template = check_name(f"{what}'s label", template)
    try:
        return template.format(pid=pid, name=names.get(pid, "?"))
    except (KeyError, IndexError, ValueError) as bad:
        raise ValueError(f"{what}: label={template!r} is not a template of {{pid}} and "
                         f"{{name}} ({type(bad).__name__}: {bad})") from None


def _pids(sim, tasks, what):
    """The pids of `tasks`: a pid, a task name, or a list of them; None
    stays None (every task)."""
    if tasks is None:
        return None
    if isinstance(tasks, str) or not hasattr(tasks, "__iter__"):
        tasks = [tasks]
    pids = [pid_named(sim, t) if isinstance(t, str) else sim._pid(t) for t in tasks]
    if not pids:
        raise ValueError(f"{what}: tasks is empty; give pids or names, or None for every task")
    return list(dict.fromkeys(pids))


def _legend(ax, handles, weights, kept, **kwargs):
    """A legend of `handles` in their order; beyond MAX_LEGEND, only the
    ones of the largest `weights`, and the legend's title says which
    (`kept`: "busiest" ...)."""
    if not handles:
        return
    title = None
    if len(handles) > MAX_LEGEND:
        chosen = sorted(np.argsort(-np.asarray(weights, dtype=float), kind="stable")[:MAX_LEGEND])
        title = f"the {MAX_LEGEND} {kept} of {len(handles)} tasks"
        handles = [handles[k] for k in chosen]
    ax.legend(handles=handles, title=title, fontsize="small", title_fontsize="small", **kwargs)


def _labelled_lines(ax):
    """The lines of ax a legend lists (matplotlib hides labels that start
    with "_"), whichever call drew them: runs drawn into one Axes share a
    legend."""
    return [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]


def _runs(sim, start_s, end_s, what):
    """Who ran when in the window (pysched.results.plot_data.switch_intervals), and
    the window; the event log must be on."""
    if sim.record == "counters":
        raise _core.StateError(f"{what} reads the event log, which is off: create the Simulator "
                               "with record='events' (or 'series')")
    start, end = _window(sim, start_s, end_s, what)
    return data.clipped(data.switch_intervals(sim.events(), sim.now_ns), start, end), start, end


# ---------------------------------------------------------------- a run

def timeline(sim, *, start_s=None, end_s=None, cpus=None, by="pid", ax=None):
    """Who ran when: one row per CPU, a bar per stretch a task ran between
    two context switches, colored by task, with a legend of the tasks
    (needs the event log: record="events" or "series").  The window is
    start_s .. end_s seconds (default: the whole run); `cpus` picks the
    rows (default: every CPU); by="name" gives the tasks of one name (a
    make's forked compilers) one color and one legend entry.  Idle
    stretches are left blank."""
    what = "timeline()"
    sim = _simulator(sim, what)
    _choice("by", by, BY)
    runs, start, end = _runs(sim, start_s, end_s, what)
    if cpus is None:
        cpus = range(sim.cpus)
    elif isinstance(cpus, (str, bytes)) or not hasattr(cpus, "__iter__"):
        cpus = [cpus]
    cpus = list(dict.fromkeys(_check_int("cpu", c, 0, sim.cpus - 1) for c in cpus))
    if not cpus:
        raise ValueError(f"{what}: cpus is empty; give CPU numbers, or None for every CPU")
    ax = _axes(ax, what, (10, 1.2 + 0.5 * len(cpus)))
    from matplotlib.patches import Patch

    runs = runs[np.isin(runs["cpu"], cpus)]
    names = _names(sim)
    row = {c: k for k, c in enumerate(cpus)}
    if by == "pid":
        keys = runs["pid"]
        groups = [(pid, task_color(pid), _label(DEFAULT_LABEL, pid, names, what))
                  for pid in np.unique(keys).tolist()]
    else:
        keys = np.array([names.get(p, "?") for p in runs["pid"].tolist()], dtype=object)
        lowest = _lowest_pids(names)
        shown = sorted(set(keys.tolist()), key=lambda n: lowest.get(n, 0))
        groups = [(n, task_color(lowest.get(n, 0)), n) for n in shown]
    handles, busy = [], []
    for key, color, label in groups:
        mine = runs[keys == key]
        for cpu in np.unique(mine["cpu"]).tolist():
            on = mine[mine["cpu"] == cpu]
            spans = np.column_stack([on["start_ns"] / 1e9, (on["end_ns"] - on["start_ns"]) / 1e9])
            ax.broken_barh(spans, (row[cpu] - 0.4, 0.8), facecolors=color, gid=f"{by} {key}")
        handles.append(Patch(facecolor=color, label=label))
        busy.append(int((mine["end_ns"] - mine["start_ns"]).sum()))
    ax.set_yticks(range(len(cpus)), labels=[f"CPU {c}" for c in cpus])
    ax.set_ylim(len(cpus) - 0.5, -0.5)  # the first CPU on top
    ax.set_xlim(start / 1e9, end / 1e9)
    ax.set_xlabel("time (s)")
    _legend(ax, handles, busy, "busiest", loc="upper left", bbox_to_anchor=(1.01, 1),
            borderaxespad=0)
    return ax


def series(sim, field, *, tasks=None, label=DEFAULT_LABEL, color=None, ax=None):
    """A task field over time (needs record="series" with the field among
    series_fields): one line per task -- `tasks`, pids or names, default
    every task sampled -- labelled by `label`, a template of {pid} and
    {name}, in the task's color or `color` (to tell runs apart when
    several draw into one Axes)."""
    what = "series()"
    sim = _simulator(sim, what)
    field = check_name("field", field)
    if sim.record != "series":
        raise _core.StateError(f"{what} reads sampled series, which are off: create the Simulator "
                               f"with record='series' (series_fields=[{field!r}, ...])")
    pids = _pids(sim, tasks, what)
    times, values = data.series_samples(sim, field)
    if pids is None:
        pids = [k + 1 for k in range(values.shape[1]) if not np.isnan(values[:, k]).all()]
    ax = _axes(ax, what, (9, 4))
    names = _names(sim)
    for pid in pids:
        ax.plot(times / 1e9, values[:, pid - 1], lw=1,
                           color=task_color(pid) if color is None else color,
                           label=_label(label, pid, names, what))
    ax.set_xlabel("time (s)")
    ax.set_ylabel(field)
    lines = _labelled_lines(ax)
    _legend(ax, lines, -np.arange(len(lines)), "first")
    return ax


def latency_cdf(sim, tasks=None, *, combined=False, log_x=False, label=None, color=None,
                ax=None):
    """The distribution of wakeup-to-run latencies (ms) as a CDF: one curve
    per task (`tasks`, pids or names; default every task woken), labelled
    by `label`, a template of {pid} and {name}, in the task's color; or,
    with combined=True, one curve of all their latencies together,
    labelled `label` as given (default "all tasks"), in black.  `color`
    draws every curve in one color (to tell runs apart when several draw
    into one Axes).  log_x: a log latency axis (a latency of 0, a
    task woken onto an idle CPU, then lies left of the axis: the curve
    starts at the fraction of wakeups at or below its smallest positive
    latency)."""
    what = "latency_cdf()"
    sim = _simulator(sim, what)
    pids = _pids(sim, tasks, what)
    rec = sim.latencies()
    if len(rec) == 0:
        raise ValueError(f"{what}: no wakeup latency is recorded: no task was woken yet, or the "
                         "Simulator was made with latencies=False")
    names = _names(sim)
    if pids is None:
        pids = np.unique(rec["pid"]).tolist()
    # pooled, a task never woken adds nothing; alone, it would be an empty curve
    silent = [p for p in pids if not (rec["pid"] == p).any()]
    if silent and (not combined or len(silent) == len(pids)):
        pid = silent[0]
        raise ValueError(f"{what}: task {pid} ({names.get(pid, '?')!r}) has no wakeup latency "
                         "recorded: it was never woken")
    ax = _axes(ax, what, (7, 4.5))
    if combined:
        label = ("all tasks" if tasks is None else "tasks " + ", ".join(map(str, pids))
                 ) if label is None else check_name(f"{what}'s label", label)
        curves = [(rec["latency_ns"][np.isin(rec["pid"], pids)], label,
                   "black" if color is None else color)]
    else:
        label = DEFAULT_LABEL if label is None else label
        curves = [(rec["latency_ns"][rec["pid"] == pid], _label(label, pid, names, what),
                   task_color(pid) if color is None else color) for pid in pids]
    for ns, name, color in curves:
        ms = np.sort(ns) / 1e6
        fraction = np.arange(1, len(ms) + 1) / len(ms)
        # from 0 at the smallest latency up to 1 at the largest, a step per wakeup
        ax.plot(np.r_[ms[0], ms], np.r_[0.0, fraction], drawstyle="steps-post", color=color,
                lw=1.2, label=name)
    if log_x:
        ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("wakeup-to-run latency (ms)")
    ax.set_ylabel("fraction of wakeups ≤ latency")
    ax.grid(alpha=0.3)
    lines = _labelled_lines(ax)
    _legend(ax, lines, [len(ln.get_xdata()) for ln in lines], "most woken", loc="lower right")
    return ax


def shares(sim, *, by="pid", of="used", tasks=None, start_s=None, end_s=None, ax=None):
    """The CPU share of each task (`tasks`, pids or names; default every
    task kept) as horizontal bars: of="used", a share of the CPU time the
    tasks used (every task's bars sum to 1); of="cpu", a fraction of one
    CPU (a hog alone on a CPU: 1; on N CPUs they sum to at most N).
    by="name" sums the tasks of one name (a forked child takes its
    parent's) into one bar.  Over the whole run (from the counters), or
    over the window start_s .. end_s seconds (from the event log, which
    must be on: record="events" or "series"), e.g. after a warm-up."""
    what = "shares()"
    sim = _simulator(sim, what)
    _choice("by", by, BY)
    _choice("of", of, OF)
    pids = _pids(sim, tasks, what)
    st = sim.stats()
    if start_s is None and end_s is None:
        cpu_ns, span = st["cpu_ns"], sim.now_ns
    else:
        runs, start, end = _runs(sim, start_s, end_s, what)
        cpu_ns, span = data.ran_ns(runs, st["pid"]), end - start
    total = int(cpu_ns.sum()) if of == "used" else span
    if total == 0:
        raise ValueError(f"{what}: no CPU time to share: "
                         + ("no task has run yet" if of == "used" else "the run has not started"))
    if pids is not None:
        keep = np.isin(st["pid"], pids)
        st, cpu_ns = st[keep], cpu_ns[keep]
    if by == "pid":
        bars = [(_label(DEFAULT_LABEL, p, {p: n}, what), c / total, task_color(p))
                for p, n, c in zip(st["pid"].tolist(), st["name"].tolist(), cpu_ns.tolist())]
    else:
        lowest = _lowest_pids(dict(zip(st["pid"].tolist(), st["name"].tolist())))
        bars = [(n, int(cpu_ns[st["name"] == n].sum()) / total, task_color(p))
                for n, p in lowest.items()]
    ax = _axes(ax, what, (7, 1 + 0.3 * len(bars)))
    labels, values, colors = zip(*bars) if bars else ((), (), ())
    bar = ax.barh(range(len(bars)), values, color=colors)
    ax.bar_label(bar, labels=[f"{100 * v:.1f}%" for v in values], padding=2, fontsize="small")
    ax.set_yticks(range(len(bars)), labels=labels)
    ax.set_ylim(len(bars) - 0.5, -0.5)  # the first task on top
    ax.set_xlabel("share of the CPU time used" if of == "used" else "share of one CPU")
    ax.set_xlim(0, max(values, default=1) * 1.15)
    return ax


# ---------------------------------------------------------------- a sweep

def _level(v):
    return f"{v:g}" if isinstance(v, (float, np.floating)) else str(v)


def _grid_axes(ax, xs, ys, x, y):
    """Tick labels of a grid image: one per value of the grid's columns;
    across, turned by 45 degrees where they would run into each other (more
    than ROTATE_X_CHARS characters in all: eight 5-digit values of a
    geometric grid)."""
    labels = [_level(v) for v in xs]
    ax.set_xticks(range(len(xs)), labels=labels)
    if sum(map(len, labels)) > ROTATE_X_CHARS:
        ax.tick_params(axis="x", labelrotation=45)
        for label in ax.get_xticklabels():
            label.set(ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(ys)), labels=[_level(v) for v in ys])
    ax.set_xlabel(x)
    ax.set_ylabel(y)


def _annotate(ax, im, grid, fmt, what):
    """Each cell's value written in it, dark on light colors, light on dark."""
    rgba = im.cmap(im.norm(grid))
    for i, j in zip(*np.nonzero(~np.isnan(grid))):
        r, g, b = rgba[i, j, :3]
        try:
            text = fmt.format(grid[i, j])
        except (ValueError, IndexError, KeyError) as bad:
            raise ValueError(f"{what}: fmt={fmt!r} cannot format {grid[i, j]!r} ({bad})") from None
        ax.text(j, i, text, ha="center", va="center", fontsize="small",
                color="black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white")


def _positive(grid, column, what):
    """A log scale's check: every cell of `grid` (the column's values,
    NaN where no row is) above 0."""
    bad = grid[~np.isnan(grid) & (grid <= 0)]
    if len(bad):
        raise ValueError(f"{what}: log=True needs positive values; column {column!r} has "
                         f"{len(bad)} cell(s) at or below 0 (the least {bad.min():g})")


def _grid_image(ax, xs, ys, grid, x, y, title, cmap, vmin, vmax, annotate, fmt, what, log=False):
    norm = None
    if log:
        from matplotlib.colors import LogNorm
        norm, vmin, vmax = LogNorm(vmin=vmin, vmax=vmax), None, None
    im = ax.imshow(grid, origin="lower", aspect="auto", interpolation="nearest", cmap=cmap,
                   vmin=vmin, vmax=vmax, norm=norm)
    _grid_axes(ax, xs, ys, x, y)
    ax.set_title(title)
    if annotate is None:
        annotate = grid.size <= AUTO_ANNOTATE_CELLS
    if annotate:
        _annotate(ax, im, grid, check_name(f"{what}'s fmt", fmt), what)
    bar = ax.figure.colorbar(im, ax=ax)
    if log:
        # plain numbers (0.5, 2, 100), not 5x10^-1, where matplotlib's log
        # formatter would label a tick
        from matplotlib.ticker import LogFormatter

        class Plain(LogFormatter):
            def __call__(self, x, pos=None):
                return f"{x:g}" if super().__call__(x, pos) else ""

        bar.ax.yaxis.set_major_formatter(Plain())
        bar.ax.yaxis.set_minor_formatter(Plain(labelOnlyBase=False))
    return im


def heatmap(table, x, y, value, *, agg="mean", cmap="viridis", vmin=None, vmax=None,
            log=False, annotate=None, fmt="{:.3g}", ax=None):
    """A sweep's `value` over two of its grid columns: x across, y up, a
    cell per pair of their values (evenly spaced whatever the values), the
    rows of a cell (one per seed) reduced by `agg` ("mean", "median",
    "min", "max" or a function of an array); blank where the sweep has no
    row.  The table is what pysched.sweep returns (a DataFrame, a record
    array or a list of dicts).  log: a logarithmic color scale, for values
    that span decades (positive ones: a cell at or below 0 is refused).
    annotate writes each value in its cell (default: when there are at
    most 100 cells)."""
    what = "heatmap()"
    log = check_bool("log", log)
    xs, ys, grid = data.pivot(table, x, y, value, agg, what)
    if log:
        _positive(grid, value, what)
    ax = _axes(ax, what, (7, 5))
    _grid_image(ax, xs, ys, grid, x, y, value, cmap, vmin, vmax, annotate, fmt, what, log)
    return ax


def predicted_vs_simulated(table, x, y, predicted, simulated, *, agg="mean", cmap="viridis",
                           diff_cmap="RdBu_r", log=False, annotate=None, fmt="{:.3g}", fig=None):
    """Three heat maps side by side over the same grid: the `predicted`
    column, the `simulated` one (both on one color scale) and their
    difference, simulated - predicted (on a scale centered on 0).  With
    log=True, for values that span decades (a settling time ...): both on
    one logarithmic scale, and the third their ratio, simulated /
    predicted, on a logarithmic scale centered on 1 (positive values only:
    a cell at or below 0 is refused).  Returns the Figure (a new one, or
    `fig`, which should be empty)."""
    what = "predicted_vs_simulated()"
    log = check_bool("log", log)
    xs, ys, want = data.pivot(table, x, y, predicted, agg, what)
    _, _, got = data.pivot(table, x, y, simulated, agg, what)
    if log:
        _positive(want, predicted, what)
        _positive(got, simulated, what)
    plt = _pyplot()
    if fig is None:
        fig = plt.figure(figsize=(16, 4.5), layout="constrained")
    else:
        from matplotlib.figure import Figure, SubFigure
        if not isinstance(fig, (Figure, SubFigure)):
            raise TypeError(f"{what}: fig must be a matplotlib Figure, not {type(fig).__name__}")
    axes = fig.subplots(1, 3)
    both = np.concatenate([want.ravel(), got.ravel()])
    lo, hi = (np.nanmin(both), np.nanmax(both)) if not np.isnan(both).all() else (None, None)
    if log:
        diff = got / want
        spread = np.nanmax(np.abs(np.log(diff))) if not np.isnan(diff).all() else 0
        spread = np.exp(spread) if spread else 2.0  # equal everywhere still needs a scale
        third = (diff, f"{simulated} / {predicted}", 1 / spread, spread)
    else:
        diff = got - want
        spread = np.nanmax(np.abs(diff)) if not np.isnan(diff).all() else 0
        spread = spread or 1  # an all-zero difference still needs a scale
        third = (diff, f"{simulated} − {predicted}", -spread, spread)
    for ax, (grid, title, vmin, vmax), cm in (
            (axes[0], (want, predicted, lo, hi), cmap),
            (axes[1], (got, simulated, lo, hi), cmap),
            (axes[2], third, diff_cmap)):
        _grid_image(ax, xs, ys, grid, x, y, title, cm, vmin, vmax, annotate, fmt, what, log)
    return fig


def stability_map(table, x, y, kind, *, order=None, colors=None, annotate=True, ax=None):
    """A categorical heat map of a sweep: the `kind` column (verdicts such
    as "settles", "cycles", "starves") over two grid columns, a color per
    kind and a legend of them.  A cell whose rows (one per seed) disagree
    shows the kind most of them have (ties: the first in `order`) and,
    with annotate, how many agree ("3/5").  `order` lists the kinds
    (default: a Categorical column's categories, else the kinds the table
    holds, settles, cycles, starves and diverges first in that order, so
    that maps of one sweep side by side list them alike, then the others
    in the order the table gives them); `colors` maps kind -> color (default:
    green settles, orange cycles, red starves, purple diverges, tab10 for
    others)."""
    what = "stability_map()"
    xs, ys, order, codes, agreeing, counts = data.kinds_pivot(table, x, y, kind, order, what)
    _pyplot()
    import matplotlib
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    if colors is None:
        others = iter(matplotlib.colormaps["tab10"].colors[k] for k in (0, 1, 4, 5, 6, 7, 8, 9))
        colors = {k: STABILITY_COLORS.get(str(k)) or next(others, "gray") for k in order}
    elif not isinstance(colors, dict):
        raise TypeError(f"{what}: colors must be a dict of kind -> color, not "
                        f"{type(colors).__name__}")
    missing = [k for k in order if k not in colors]
    if missing:
        raise KeyError(f"{what}: colors has no color for {missing}")
    ax = _axes(ax, what, (7, 5))
    ax.imshow(np.ma.masked_less(codes, 0), origin="lower", aspect="auto", interpolation="nearest",
              cmap=ListedColormap([colors[k] for k in order]), vmin=-0.5,
              vmax=len(order) - 0.5)
    _grid_axes(ax, xs, ys, x, y)
    ax.set_title(kind)
    if annotate:
        for i, j in zip(*np.nonzero(agreeing < counts)):
            ax.text(j, i, f"{agreeing[i, j]}/{counts[i, j]}", ha="center", va="center",
                    fontsize="small")
    ax.legend(handles=[Patch(facecolor=colors[k], label=str(k)) for k in order],
              loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, fontsize="small")
    return ax
