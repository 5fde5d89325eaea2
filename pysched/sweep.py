"""Parameter sweeps on any concurrent.futures executor.

    rows = pysched.sweep(measure, {"run_avg_halflife": [1000, 5000], "nice_const": [3200, 6409]})

runs ``measure(run_avg_halflife=..., nice_const=...)`` for every point of
the grid (a cartesian product) on a local process pool, or on the executor
given (a ThreadPoolExecutor, a Dask or Ray executor ...), and returns one dict
per point: the point's values plus what ``measure`` returned (a dict), in
grid order.  ``measure`` must be picklable for a process pool: a module-level
function.  NumPy scalars in the grid (``np.geomspace(1, 1000, 4).astype(int)``)
are passed on, and returned, as the plain Python values they hold.
"""
import itertools
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from ._checks import check_int


def _plain(v):
    """A NumPy scalar as the Python int, float or bool it holds; anything else as it is."""
    return v.item() if isinstance(v, (np.integer, np.floating, np.bool_)) else v


def _point(p):
    p = dict(p)
    for name in p:
        if not isinstance(name, str):
            raise TypeError(f"grid names must be str (they become keyword arguments), not {name!r}")
    return {name: _plain(v) for name, v in p.items()}


def grid_points(grid):
    """The points of a grid: a dict of name -> values (cartesian product), or
    an iterable of dicts used as they are."""
    if isinstance(grid, dict):
        names = list(grid)
        for name, values in grid.items():
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise TypeError(f"grid[{name!r}] must be a list of values, not {values!r}")
        return [_point(zip(names, combo)) for combo in itertools.product(*grid.values())]
    return [_point(p) for p in grid]


def _call(fn, point):
    out = fn(**point)
    if not isinstance(out, dict):
        raise TypeError(f"the measured function must return a dict, not {type(out).__name__}")
    return {**point, **out}


def _gather(executor, fn, points):
    """Every point's row, in grid order; if one fails or the caller is
    interrupted (Ctrl-C), the points still queued are cancelled."""
    futures = [executor.submit(_call, fn, p) for p in points]
    try:
        return [f.result() for f in futures]
    except BaseException:
        for f in futures:
            f.cancel()
        raise


def sweep(fn, grid, *, executor=None, max_workers=None):
    """Run fn(**point) over the grid; see the module docstring."""
    points = grid_points(grid)
    if max_workers is not None:
        max_workers = check_int("max_workers", max_workers, 1, 2**31 - 1)
    if executor is not None:
        return _gather(executor, fn, points)
    pool = ProcessPoolExecutor(max_workers=max_workers)
    try:
        return _gather(pool, fn, points)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
