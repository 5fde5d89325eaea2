"""One workload run and scored: what a search's workers do.  Everything
here is a module-level function of picklable arguments, so that a process
pool or Dask can run it."""
from dataclasses import dataclass

from ..simulator import Simulator
from .objectives import Run

# the package's own: the public names are pysched.search's
__all__ = []


@dataclass(frozen=True)
class Setup:
    """The machine every workload of a search runs on, and for how long."""
    preset: str
    cpus: int
    hz: int
    seed: int
    params: tuple   # (name, value) pairs
    seconds: float


def simulator(setup, workload, **kwargs):
    """A Simulator of the setup with the workload spawned (background first),
    and the searched tasks' pids."""
    sim = Simulator(setup.preset, cpus=setup.cpus, hz=setup.hz, seed=setup.seed,
                    params=dict(setup.params), **kwargs)
    for k, t in enumerate(workload.background):
        sim.spawn(t.program(), nice=t.nice, name=f"background{k}")
    searched = tuple(sim.spawn(t.program(), nice=t.nice, name=f"task{k}")
                     for k, t in enumerate(workload.tasks))
    return sim, searched


def measure(setup, workload, watch=False):
    """The Run of the workload on the setup; watch: with sim.watch() on, for
    the idle-while-waiting time ("lag": with the lags read too)."""
    sim, searched = simulator(setup, workload)
    if watch:
        sim.watch(lag=watch == "lag")
    sim.run(seconds=setup.seconds)
    idle = sim.invariants().idle_while_waiting_s if watch else 0
    return Run(sim.stats(), searched, sim.now_ns, 1_000_000_000 // sim.hz, sim.cpus,
               setup.preset, round(idle * 1e9))


def score_all(setup, objective, workloads):
    """The objective's score of each workload, in order."""
    watch = getattr(objective, "watch", False)
    return [float(objective(measure(setup, w, watch))) for w in workloads]
