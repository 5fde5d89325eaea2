"""How a Simulator and a TaskView show themselves: a one-line repr for the
console, an HTML summary for notebooks (Jupyter calls ``_repr_html_``).
Neither needs pandas, and neither raises while the simulator runs in
another thread (a debugger or a notebook shows reprs at any time)."""
import html

from ._core import StateError
from .codes import SCHED_POLICIES, TASK_STATES

MAX_ROWS = 20  # tasks in a simulator's HTML table; the rest are counted


def _plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _facts(sim):
    """What a simulator's repr says: preset, time, machine, tasks, record."""
    c = sim.counters()
    return (f"{sim.preset}, t={sim.now_ns / 1e9:.3f} s ({sim.jiffies} jiffies), "
            f"{_plural(sim.cpus, 'CPU')}, HZ={sim.hz}, {_plural(c['live_tasks'], 'live task')}, "
            f"{c['exits']} exited, record={sim.record!r}")


def simulator_repr(sim):
    try:
        return f"<Simulator {_facts(sim)}>"
    except StateError:
        return f"<Simulator {sim.preset}, busy in another thread>"


def _cell(v, tag="td"):
    return f"<{tag}>{html.escape(str(v))}</{tag}>"


def _row(cells, tag="td"):
    return "<tr>" + "".join(_cell(v, tag) for v in cells) + "</tr>"


def simulator_html(sim):
    try:
        facts, st = _facts(sim), sim.stats()
    except StateError:
        return f"<p>{html.escape(simulator_repr(sim))}</p>"
    columns = ["pid", "name", "state", "policy", "nice", "prio", "cpu", "cpu_s", "wait_s",
               "sleep_s"] + [f for f in sim.headline if f in st.dtype.names]
    rows = []
    for r in st[:MAX_ROWS]:
        state = "dead" if r["exit_ns"] >= 0 else TASK_STATES.get(int(r["state"]), r["state"])
        rows.append(_row([r["pid"], r["name"], state, SCHED_POLICIES.get(int(r["policy"]), r["policy"]),
                          r["nice"], r["prio"], r["cpu"], f"{r['cpu_ns'] / 1e9:.3f}",
                          f"{r['wait_ns'] / 1e9:.3f}", f"{r['sleep_ns'] / 1e9:.3f}"]
                         + [r[f] for f in columns[10:]]))
    more = len(st) - MAX_ROWS
    if more > 0:
        rows.append(f'<tr><td colspan="{len(columns)}">... {_plural(more, "more task")}: '
                    "sim.stats_frame() has them all</td></tr>")
    table = ("<table><thead>" + _row(columns, "th") + "</thead><tbody>" + "".join(rows)
             + "</tbody></table>") if len(st) else "<p>no tasks yet</p>"
    return f"<div><p><b>Simulator</b> {html.escape(facts)}</p>{table}</div>"


def task_html(view):
    """Every field of a TaskView, times in ns also shown in seconds."""
    rows = []
    for name, v in vars(view).items():
        shown = v
        if name.endswith("_ns") and isinstance(v, int):
            shown = "alive" if name == "exit_ns" and v < 0 else f"{v} ({v / 1e9:.6f} s)"
        rows.append(_row([name, shown]))
    title = f"Task {view.pid} {view.name!r}: {view.state}"
    return (f"<div><p><b>{html.escape(title)}</b></p><table><tbody>" + "".join(rows)
            + "</tbody></table></div>")
