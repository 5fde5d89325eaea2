"""Search for the workload that breaks a scheduler.

``search(preset, objective, space)`` runs workloads drawn from `space`
under `preset`, keeps the worst by `objective` (larger is worse), evolves
them, and returns the worst found, shrunk to the smallest workload that
still shows it, as a :class:`SearchResult` (a Python snippet, rt-app
JSON, a per-task table and a plot)::

    from pysched import search
    space = search.Space(background=(search.hog(), search.hog()))
    r = search.search("linux-2.5.65", search.uncharged_share(), space, budget=3000)
    print(r.snippet())

The method and its reasons are in evolve.py's docstring and in
docs/guide/search.md."""
import concurrent.futures
import time

import numpy as np

from .._checks import check_int, check_number
from ..policy.base import Policy, registered
from ..policy.registry import presets
from ..simulator import Simulator
from .evaluate import Setup
from .evolve import Evaluator, generations, shrink
from .objectives import (IdleWhileWaiting, LargestLag, LongestWait, Objective, Run,
                         ShareAboveFair, UnchargedShare, WorstWakeupLatency, idle_while_waiting,
                         largest_lag, longest_wait, share_above_fair, uncharged_share,
                         worst_wakeup_latency)
from .result import SearchResult
from .space import KINDS, Op, Space, TaskSpec, Workload, hog

# the functions that make the built-in objectives (passed uncalled by mistake)
MAKERS = (uncharged_share, share_above_fair, worst_wakeup_latency, longest_wait,
          idle_while_waiting, largest_lag)

__all__ = ["search", "Space", "TaskSpec", "Op", "Workload", "hog", "SearchResult", "Run",
           "Objective", "uncharged_share", "share_above_fair", "worst_wakeup_latency",
           "longest_wait", "idle_while_waiting", "largest_lag", "UnchargedShare",
           "ShareAboveFair", "WorstWakeupLatency", "LongestWait", "IdleWhileWaiting",
           "LargestLag", "KINDS"]


def search(preset, objective, space=None, *, budget=2000, seconds=10.0, cpus=1, hz=None,
           params=None, seed=0, population=32, islands=4, keep=0.9, executor=None, max_workers=None,
           time_limit_s=None):
    """The worst workload of `space` under `preset` by `objective`.

    preset : a preset name, a registered policy's, or a pysched.Policy
        subclass (importable, for a process pool).
    objective : a callable Run -> float, larger for worse behaviour
        (uncharged_share(), share_above_fair(), worst_wakeup_latency(),
        longest_wait(), idle_while_waiting(), largest_lag(), or your own
        module-level function, picklable for a process pool; one with a
        true `watch` attribute runs with sim.watch() on, "lag" with the
        lags read).
    space : a Space (default Space()).
    budget : how many workloads to run in the evolutionary search (the
        shrinking pass runs more).
    seconds, cpus, hz, params, seed : the simulated machine each workload
        runs on, for how long.
    population : workloads kept from one generation to the next, on
        each of `islands` populations that evolve side by side.
    keep : the shrunk workload scores at least keep times the best.
    executor : a concurrent.futures executor (a ProcessPoolExecutor,
        Dask's client.get_executor()) to run each generation on; default:
        this process, or a process pool of max_workers when that is given.
    time_limit_s : stop the search early after this long (wall time: the
        result then depends on the machine's speed; the budget alone gives
        the same result for a seed everywhere).
    """
    own = isinstance(preset, type) and issubclass(preset, Policy)
    if not own and preset not in presets() and preset not in registered():
        from .._suggest import did_you_mean
        raise ValueError(f"search: preset {preset!r} is not known{did_you_mean(preset, presets())}")
    if not callable(objective):
        raise TypeError(f"search: objective must be a callable Run -> float "
                        f"(e.g. search.uncharged_share()), not {type(objective).__name__}")
    if objective in MAKERS:
        name = objective.__name__
        raise TypeError(f"search: objective=search.{name} makes the objective: call it, "
                        f"objective=search.{name}()")
    space = Space() if space is None else space
    if not isinstance(space, Space):
        raise TypeError(f"search: space must be a pysched.search.Space, not {type(space).__name__}")
    budget = check_int("budget", budget, 1, 10**9)
    population = check_int("population", population, 2, 10**5)
    islands = check_int("islands", islands, 1, 1024)
    keep = check_number("keep", keep, 0, 1)
    seed = check_int("seed", seed, 0, 2**63 - 1)
    if time_limit_s is not None:
        time_limit_s = check_number("time_limit_s", time_limit_s, 0, 10**7)
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(f"search: executor must have a submit method (a "
                        f"concurrent.futures.Executor), not {type(executor).__name__}")
    # the machine, checked once here by building it
    probe = Simulator(preset, cpus=cpus, hz=hz, seed=seed, params=params)
    seconds = check_number("seconds", seconds, 0.001, 3600)
    setup = Setup(preset, probe.cpus, probe.hz, seed, tuple(sorted((params or {}).items())),
                  seconds)
    own = None
    if executor is None and max_workers is not None:
        max_workers = check_int("max_workers", max_workers, 1, 4096)
        if max_workers > 1:
            own = executor = concurrent.futures.ProcessPoolExecutor(max_workers)
    workers = max_workers or getattr(executor, "_max_workers", None) or 2
    try:
        evaluator = Evaluator(setup, objective, executor, workers)
        rng = np.random.default_rng(seed)
        deadline = None if time_limit_s is None else time.monotonic() + time_limit_s
        found, found_score, history = generations(space, evaluator, rng, budget, population,
                                                  islands, deadline)
        best, best_score = shrink(space, evaluator, found, found_score, keep)
    finally:
        if own is not None:
            own.shutdown()
    return SearchResult(best, best_score, found, found_score, setup, objective,
                        evaluator.count, history, seed)
