"""A sweep's grid and seeds as the sequence of calls to make, computed on
demand.

Each call is a dict of keyword arguments with plain Python values: a NumPy
scalar (an element of ``np.geomspace(1, 1000, 4).astype(int)``) becomes the
int, float or bool it holds, so that the measured function, the rows and a
worker on another machine all see the same plain values whatever built the
grid.

A dict grid is a cartesian product that is never built: Calls computes the
call at a position from the position's digits in the axes' lengths (the
last name, then the seed, varying fastest), so a grid of 10^8 points costs
its axes and nothing more, and a call's position is its stable key (a
sweep written to a file is resumed by the positions it holds).
"""
import numpy as np

from .._checks import check_int

SEED_MAX = 2**64 - 1  # what Simulator(seed=) takes
# an axis this long or shorter is listed in a table's attrs; a longer range
# or array stays the object it is there (a list would cost 36 bytes a value)
LISTED = 10_000


def plain(v):
    """A NumPy scalar as the Python value it holds; anything else as it is."""
    return v.item() if isinstance(v, np.generic) else v


def _names(names):
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"grid names must be str (they become keyword arguments), not {name!r}")
    return list(names)


def _values(name, values):
    """An axis as a sequence: a range or a 1-d array as it is (its values
    made plain when read), anything else iterable as a list."""
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise TypeError(f"grid[{name!r}] must be a list of values, not {values!r}")
    if isinstance(values, range) or (isinstance(values, np.ndarray) and values.ndim == 1):
        out = values
    else:
        out = [plain(v) for v in values]
    if len(out) == 0:
        raise ValueError(f"grid[{name!r}] is empty: an axis with no value makes a grid of no "
                         "point; give it at least one value, or drop it")
    return out


def normalise(grid):
    """The grid with plain values: a dict of name -> values (a cartesian
    product; an empty axis is an error naming it), or a list of points
    (dicts) used as they are (an empty list is an error)."""
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
    if not points:
        raise ValueError("grid=[] holds no point: give at least one dict (name -> value)")
    return points


def names(grid):
    """The grid's names in the order of its columns (first seen first)."""
    if isinstance(grid, dict):
        return list(grid)
    return list(dict.fromkeys(name for p in grid for name in p))


def described(grid):
    """The grid as a table's attrs hold it: a dict grid with its axes as
    lists (a range or array longer than LISTED as it is); of a list of
    points, their names (the points are the rows' own columns)."""
    if not isinstance(grid, dict):
        return names(grid)
    return {name: [plain(v) for v in values] if len(values) <= LISTED else values
            for name, values in grid.items()}


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


class Calls:
    """The keyword arguments of every call, in grid order, each point
    repeated per seed (the seed varies fastest): a sequence whose items
    are computed when read -- calls[i] a dict, calls[a:b] a list of them."""

    def __init__(self, grid, seeds):
        if seeds is not None and "seed" in names(grid):
            raise ValueError("the grid has a 'seed' column and seeds= is given too: "
                             "drop one (seeds= passes seed= to the function)")
        self.grid, self.seeds = grid, seeds
        if isinstance(grid, dict):
            axes = list(grid.items()) + ([("seed", seeds)] if seeds is not None else [])
            # (name, values, whether they are a NumPy array's, read with .item())
            self.axes = [(name, values, isinstance(values, np.ndarray)) for name, values in axes]
            self.lengths = [len(values) for _, values in reversed(axes)]  # the fastest first
            n = 1
            for length in self.lengths:
                n *= length
        else:
            n = len(grid) * (len(seeds) if seeds is not None else 1)
        self.n = n

    def __len__(self):
        return self.n

    def _call(self, i):
        if isinstance(self.grid, dict):
            digits = []
            for n in self.lengths:
                i, digit = divmod(i, n)
                digits.append(digit)
            digits.reverse()
            return {name: (values[d].item() if numpy_axis else values[d])
                    for (name, values, numpy_axis), d in zip(self.axes, digits)}
        if self.seeds is None:
            return dict(self.grid[i])
        p, s = divmod(i, len(self.seeds))
        return {**self.grid[p], "seed": self.seeds[s]}

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._call(j) for j in range(*i.indices(self.n))]
        if not -self.n <= i < self.n:
            raise IndexError(f"call {i} of {self.n}")
        return self._call(i % self.n)


def calls(grid, seeds):
    """The calls of a normalised grid and seed list (Calls)."""
    return Calls(grid, seeds)
