"""A sweep's grid and seeds turned into the list of calls to make.

Each call is a dict of keyword arguments with plain Python values: a NumPy
scalar (an element of ``np.geomspace(1, 1000, 4).astype(int)``) becomes the
int, float or bool it holds, so that the measured function, the rows and a
worker on another machine all see the same plain values whatever built the
grid.
"""
import itertools

import numpy as np

from .._checks import check_int

SEED_MAX = 2**64 - 1  # what Simulator(seed=) takes


def plain(v):
    """A NumPy scalar as the Python value it holds; anything else as it is."""
    return v.item() if isinstance(v, np.generic) else v


def _names(names):
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"grid names must be str (they become keyword arguments), not {name!r}")
    return list(names)


def _values(name, values):
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise TypeError(f"grid[{name!r}] must be a list of values, not {values!r}")
    return [plain(v) for v in values]


def normalise(grid):
    """The grid with plain values: a dict of name -> list of values (a
    cartesian product), or a list of points (dicts) used as they are."""
    if isinstance(grid, dict):
        names = _names(grid)
        return {name: _values(name, grid[name]) for name in names}
    if isinstance(grid, (str, bytes)) or not hasattr(grid, "__iter__"):
        raise TypeError(f"grid must be a dict of name -> values or a list of dicts, not {grid!r}")
    points = []
    for p in grid:
        if not isinstance(p, dict):
            raise TypeError(f"a grid given as a list holds dicts (name -> value), not {p!r}")
        points.append(dict(zip(_names(p), (plain(v) for v in p.values()))))
    return points


def names(grid):
    """The grid's names in the order of its columns (first seen first)."""
    if isinstance(grid, dict):
        return list(grid)
    return list(dict.fromkeys(name for p in grid for name in p))


def points(grid):
    """Every point of a normalised grid, in grid order (the last name varies fastest)."""
    if isinstance(grid, dict):
        return [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())]
    return [dict(p) for p in grid]


def seed_list(seeds):
    """seeds=None, a count n (the seeds 0 .. n-1) or a list of seeds, as a
    list of plain ints (or None: no seed axis)."""
    if seeds is None:
        return None
    if not hasattr(seeds, "__iter__") or isinstance(seeds, (str, bytes)):
        return list(range(check_int("seeds", seeds, 1, 2**31 - 1)))
    out = [check_int(f"seeds[{i}]", s, 0, SEED_MAX) for i, s in enumerate(seeds)]
    if not out:
        raise ValueError("seeds=[] holds no seed: give a count, a list of seeds, or None")
    return out


def calls(grid, seeds):
    """The keyword arguments of every call, in grid order, each point
    repeated per seed (the seed varies fastest)."""
    pts = points(grid)
    if seeds is None:
        return pts
    if "seed" in names(grid):
        raise ValueError("the grid has a 'seed' column and seeds= is given too: "
                         "drop one (seeds= passes seed= to the function)")
    return [{**p, "seed": s} for p in pts for s in seeds]
