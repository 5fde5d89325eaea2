"""What a search returns: the worst workload found, shrunk, with its score,
per-task measurements, and the workload as a runnable Python snippet, as
rt-app JSON and as a plot."""
import json
from dataclasses import dataclass

import numpy as np

from .evaluate import measure, simulator
from .objectives import name_of

# the package's own: the public names are pysched.search's
__all__ = []

TASK_DTYPE = np.dtype([("pid", np.int64), ("name", "U32"), ("searched", np.bool_),
                       ("nice", np.int64), ("share", np.float64), ("charged", np.float64),
                       ("value", np.float64)])


@dataclass(frozen=True)
class SearchResult:
    """The worst workload a search found (`workload`, shrunk from `found`),
    its `score` (and found's: `found_score`), the machine it ran on
    (`setup`), the objective, how many workloads were run (`evaluations`)
    and the best score after each generation (`history`)."""
    workload: object
    score: float
    found: object
    found_score: float
    setup: object
    objective: object
    evaluations: int
    history: np.ndarray
    seed: int

    def __repr__(self):
        w = self.workload
        return (f"SearchResult({self.setup.preset}: {name_of(self.objective)} = "
                f"{self.score:.3f} with {len(w.tasks)} task{'s' * (len(w.tasks) != 1)} of "
                f"{w.ops} ops beside {len(w.background)}; shrunk from {self.found_score:.3f}, "
                f"{len(self.found.tasks)} tasks of {self.found.ops} ops; "
                f"{self.evaluations:,} runs)")

    def tasks(self):
        """Per task of the workload (background first): pid, name,
        searched, nice, share (its CPU time over the run's length), charged
        (what its policy charged it, likewise) and value (what the
        objective measured of it, where it measures per task)."""
        run = measure(self.setup, self.workload, getattr(self.objective, "watch", False))
        out = np.zeros(len(run.stats), dtype=TASK_DTYPE)
        out["pid"], out["name"], out["nice"] = run.stats["pid"], run.stats["name"], \
            run.stats["nice"]
        out["searched"] = run.mask()
        out["share"], out["charged"] = run.share(), run.charged()
        per_task = getattr(self.objective, "per_task", None)
        out["value"] = per_task(run) if per_task else np.nan
        return out

    def simulator(self, **kwargs):
        """A Simulator with the workload spawned, at time 0 (kwargs go to
        Simulator: record=..., debug=...)."""
        return simulator(self.setup, self.workload, **kwargs)[0]

    def snippet(self):
        """The workload as Python that runs it and prints each task's share."""
        s = self.setup
        lines = ["import pysched as ps", "",
                 f"sim = ps.Simulator({s.preset!r}, cpus={s.cpus}, hz={s.hz}, seed={s.seed}"
                 + (f", params={dict(s.params)!r}" if s.params else "") + ")"]
        for k, t in enumerate(self.workload.background):
            lines.append(f"sim.spawn({t.code()}, nice={t.nice}, name='background{k}')")
        for k, t in enumerate(self.workload.tasks):
            lines.append(f"sim.spawn({t.code()}, nice={t.nice}, name='task{k}')")
        lines += [f"sim.run(seconds={s.seconds!r})",
                  "for t in sim.stats():",
                  "    print(t['name'], t['cpu_ns'] / sim.now_ns)"]
        return "\n".join(lines) + "\n"

    def rtapp(self):
        """The workload as rt-app JSON (a dict): each task's start a phase
        run once, its body a phase repeated for ever, its nice rt-app's
        SCHED_OTHER priority; global.duration the search's run length."""
        tasks = {}
        for prefix, specs in (("background", self.workload.background),
                              ("task", self.workload.tasks)):
            for k, t in enumerate(specs):
                name = f"{prefix}{k}"
                phases = {}
                if t.start:
                    phases["start"] = {"loop": 1, **_events(name, t.start)}
                phases["body"] = {"loop": -1, **_events(name, t.body)}
                tasks[name] = {"policy": "SCHED_OTHER", "priority": t.nice, "loop": 1,
                               "phases": phases}
        return {"global": {"duration": self.setup.seconds, "default_policy": "SCHED_OTHER"},
                "tasks": tasks}

    def write_rtapp(self, path):
        with open(path, "w") as f:
            json.dump(self.rtapp(), f, indent=2)

    def plot(self, ax=None):
        """Each task's CPU share beside what it was charged, titled with
        the objective and the score; returns the axes."""
        from ..results.plot import _axes
        ax = _axes(ax, "SearchResult.plot", (6, 3.5))
        t = self.tasks()
        x = np.arange(len(t))
        ax.bar(x - 0.2, t["share"], 0.4, label="CPU share")
        ax.bar(x + 0.2, t["charged"], 0.4, label="charged")
        ax.set_xticks(x, [f"{n}\n(nice {v})" for n, v in zip(t["name"], t["nice"])])
        ax.set_ylabel("of one CPU")
        ax.set_title(f"{self.setup.preset}: {name_of(self.objective)} = {self.score:.3f}")
        ax.legend()
        return ax


def _events(name, ops):
    """rt-app's events of a phase: run0, sleep1 ... in order (rt-app takes
    a key by its prefix); a timer's reference is the task's own."""
    out = {}
    for j, o in enumerate(ops):
        if o.kind == "io":
            raise ValueError(f"{name}: rt-app has no event for an io op (an uninterruptible "
                             f"device sleep); search with kinds that leave it out")
        if o.kind == "yield":
            out[f"yield{j}"] = ""
        elif o.kind == "timer":
            out[f"timer{j}"] = {"ref": f"{name}_timer", "period": o.us, "mode": "absolute"}
        else:
            out[f"{o.kind}{j}"] = o.us
    return out
