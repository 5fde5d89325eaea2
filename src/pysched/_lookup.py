"""Finding a task by its name (``sim.task("X")``).  Names need not be
unique -- a forked child takes its parent's -- so a name that fits several
tasks is refused with the candidates rather than guessed."""
from ._checks import check_name
from ._suggest import did_you_mean
from .codes import TASK_STATES

MAX_LISTED = 10  # names or pids an error lists before "..."


def _listed(items):
    shown = ", ".join(str(i) for i in items[:MAX_LISTED])
    return shown + (", ..." if len(items) > MAX_LISTED else "")


def pid_named(sim, name):
    """The pid of the one task of `sim` (live, or exited and kept) named
    `name`; KeyError if none is, ValueError listing them if several are."""
    name = check_name("task name", name)
    st = sim.stats()
    rows = st[st["name"] == name]
    if len(rows) == 1:
        return int(rows["pid"][0])
    if len(rows) > 1:
        states = ["dead" if r["exit_ns"] >= 0 else TASK_STATES[int(r["state"])] for r in rows]
        pids = [f"{r['pid']} ({s})" for r, s in zip(rows, states)]
        raise ValueError(f"{len(rows)} tasks are named {name!r}: pids {_listed(pids)}; "
                         "choose one with sim.task(pid)")
    names = list(dict.fromkeys(st["name"].tolist()))
    if not names:
        raise KeyError(f"no task named {name!r}: the simulator has no tasks yet")
    raise KeyError(f"no task named {name!r}" + (did_you_mean(name, names)
                                                 or f"; names: {_listed(names)}"))
