"""The search itself: an evolutionary search over a Space, then a greedy
shrinking pass.

Why this method: a workload that breaks a scheduler is found by
degrees -- a task that sleeps across most ticks is charged for fewer of
them, and nudging its burst and its sleep makes it more so -- which
populations kept by score, with small mutations of durations, climb, where
random draws rarely land on the narrow region (run r and sleep s with
r + s under one tick).  It evaluates a generation at a time, so the
generation spreads over the executor's workers, and all randomness is the
driver's own generator: for a seed, the same evaluations in the same
order give the same result on any executor.  (Hypothesis's targeted
testing climbs too, and shrinks well, but runs one example at a time in
one process.)  The shrinking pass then tries every smaller variant
(Space.smaller) and keeps the first that still scores at least `keep`
times the best, until none does."""
import math
import time

import numpy as np

from .evaluate import score_all
from ..policy import build
from ..sweeps.by_value import ByValue

# the package's own: the public names are pysched.search's
__all__ = []

MIGRATE = 10  # generations between migrations


def _batches(items, n):
    size = max(1, math.ceil(len(items) / n))
    return [items[i:i + size] for i in range(0, len(items), size)]


class Evaluator:
    """Scores lists of workloads here or on an executor, in order, and
    counts them."""

    def __init__(self, setup, objective, executor, workers):
        self.setup, self.objective = setup, objective
        self.executor, self.workers = executor, workers
        # on an executor, with the libraries built here: their presets are
        # known to its workers too (sweeps/by_value.py)
        self.score_all = score_all if executor is None else ByValue(
            score_all, build._current_sources())
        self.count = 0
        self.cache = {}

    def __call__(self, workloads):
        todo = [w for w in dict.fromkeys(workloads) if w not in self.cache]
        if todo:
            if self.executor is None:
                scores = score_all(self.setup, self.objective, todo)
            else:
                futures = [self.executor.submit(self.score_all, self.setup, self.objective, b)
                           for b in _batches(todo, self.workers)]
                scores = [s for f in futures for s in f.result()]
            for w, s in zip(todo, scores):
                self.cache[w] = s if math.isfinite(s) else -math.inf
            self.count += len(todo)
        return [self.cache[w] for w in workloads]


def _children(space, rng, ranked, n):
    children = []
    for _ in range(n):
        r = rng.random()
        if r < 0.1:
            children.append(space.random(rng))
            continue
        # the better of two drawn at random, biased to the top
        a = ranked[min(int(rng.integers(len(ranked))), int(rng.integers(len(ranked))))]
        if r < 0.3:
            b = ranked[min(int(rng.integers(len(ranked))), int(rng.integers(len(ranked))))]
            a = space.cross(a, b, rng)
        children.append(space.mutate(a, rng))
    return children


def _survivors(scored, n):
    """The n best (score, workload) pairs, ties to the earlier, each
    workload once."""
    order = sorted(range(len(scored)), key=lambda i: (-scored[i][0], i))
    seen, kept = set(), []
    for i in order:
        s, w = scored[i]
        if w not in seen:
            seen.add(w)
            kept.append((s, w))
        if len(kept) == n:
            break
    return kept


def generations(space, evaluator, rng, budget, population, islands, deadline):
    """The best workload found and its score, and the best score after
    each generation.  `islands` populations evolve side by side, each
    generation of all of them one batch; every MIGRATE generations each
    island's best joins the next island, so that a find spreads while the
    islands keep searching apart (one population alone settles on the
    first good region it finds).  budget: evaluations; deadline:
    time.monotonic() at which to stop early, or None."""
    first = [space.random(rng) for _ in range(population * islands)]
    scores = evaluator(first)
    pops = [list(zip(scores[k * population:(k + 1) * population],
                     first[k * population:(k + 1) * population])) for k in range(islands)]
    pops = [_survivors(p, population) for p in pops]
    history = [max(p[0][0] for p in pops)]
    generation = 0
    while evaluator.count < budget and (deadline is None or time.monotonic() < deadline):
        generation += 1
        kids = [_children(space, rng, [w for _, w in p], population) for p in pops]
        flat = [w for k in kids for w in k]
        got = evaluator(flat)
        for k in range(islands):
            mine = list(zip(got[k * population:(k + 1) * population], kids[k]))
            pops[k] = _survivors(pops[k] + mine, population)
        if generation % MIGRATE == 0 and islands > 1:
            best = [p[0] for p in pops]
            pops = [_survivors(pops[k] + [best[k - 1]], population) for k in range(islands)]
        history.append(max(p[0][0] for p in pops))
    top = _survivors([p[0] for p in pops], 1)[0]
    return top[1], top[0], np.array(history)


def shrink(space, evaluator, workload, score, keep):
    """The smallest workload reached from `workload` by Space.smaller steps
    that each keep a score of at least keep * score (and above 0), and its
    score."""
    floor = keep * score if score > 0 else score
    best, best_score = workload, score
    while True:
        candidates = space.smaller(best)
        if not candidates:
            return best, best_score
        scores = evaluator(candidates)
        for c, s in zip(candidates, scores):
            if s >= floor:
                best, best_score = c, s
                break
        else:
            return best, best_score
