"""Parameter sweeps, here or on any concurrent.futures executor.

    table = pysched.sweep(measure, {"run_avg_halflife": [1000, 5000], "nice_const": [3200, 6409]},
                          seeds=5)

calls ``measure(run_avg_halflife=..., nice_const=..., seed=...)`` for every
point of the grid (a cartesian product, the last name varying fastest; or
a list of dicts, one per point) and every seed, and returns one row per
call, in grid order whatever ran it: the point's values, the seed, then
what ``measure`` returned (a dict).  NumPy values in the grid
(``np.geomspace(1, 1000, 4).astype(int)``) reach ``measure`` as the plain
Python values they hold.

Where it runs: on the executor given -- a ThreadPoolExecutor, a
ProcessPoolExecutor, Dask's ``client.get_executor()``, anything with
``submit`` -- or by default in this process when the sweep is short, on a
local process pool when a pool pays for its start-up (``max_workers``
processes; 1 runs everything here).  Calls travel in batches of about
50 ms of work; the function travels by value when it has to (a lambda, a
closure, a function of ``__main__`` or a notebook), so it works under
every start method and on a cluster.  Ctrl-C cancels the batches still
queued.

The local pool's workers know the C policies loaded with build_policy (its
presets can be named in the function); a worker of another executor must
call build_policy itself, or be handed a pickled Simulator, which carries
its policy's source.
"""
from . import _sweep_grid as grid_
from ._by_value import ByValue
from ._checks import check_bool, check_int
from ._sweep_local import run_local
from ._sweep_progress import bar as progress_bar
from ._sweep_run import Batches, run, workers_of
from ._sweep_table import OUTPUTS, table


def _described(fn):
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    return f"{module}.{name}" if module and name else repr(fn)


def sweep(fn, grid, *, seeds=None, executor=None, max_workers=None, chunksize=None,
          progress=None, output=None):
    """Call fn(**point, seed=seed) for every point of the grid and every seed.

    grid : dict of name -> values (their cartesian product), or a list of
        dicts (name -> value), one per point.
    seeds : None (fn gets no seed), a count n (the seeds 0 .. n-1), or a
        list of seeds; each point is called once per seed, the seed varying
        fastest, with ``seed=`` and a ``seed`` column in the rows.
    executor : where the calls run (anything with ``submit`` returning a
        concurrent.futures Future); None: here, or a local process pool
        when the sweep is long enough for one to pay.
    max_workers : the local pool's size (default: the usable CPUs); with an
        executor, how many calls it runs at once if it does not say itself.
    chunksize : calls per task; None sizes batches from measured call times.
    progress : a tqdm bar; None shows one when tqdm is installed and someone
        watches (a notebook, or stderr a terminal), True always, False never.
    output : None (a pandas DataFrame when pandas is installed, else a NumPy
        record array), "pandas", "numpy" or "dicts" (a list of dicts); a
        table's ``attrs`` hold pysched's version, the function, the grid (a
        dict grid with plain values; of a list of points, their names) and
        the seeds.
    """
    from . import __version__

    if not callable(fn):
        raise TypeError(f"the function to sweep must be callable, not {fn!r}")
    grid = grid_.normalise(grid)
    seeds = grid_.seed_list(seeds)
    calls = grid_.calls(grid, seeds)
    if max_workers is not None:
        max_workers = check_int("max_workers", max_workers, 1, 2**31 - 1)
    if chunksize is not None:
        chunksize = check_int("chunksize", chunksize, 1, 2**31 - 1)
    if progress is not None:
        progress = check_bool("progress", progress)
    if output is not None and output not in OUTPUTS:
        raise ValueError(f"output={output!r} is not one of None, {', '.join(map(repr, OUTPUTS))}")
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(f"executor must have a submit method (a concurrent.futures.Executor), "
                        f"not {type(executor).__name__}")

    rows = [None] * len(calls)
    bar = progress_bar(progress, len(calls), 0)
    try:
        if executor is None:
            run_local(fn, calls, rows, max_workers, chunksize, bar)
        else:
            workers = max_workers or workers_of(executor)
            run(executor, ByValue(fn), calls, rows, 0, Batches(workers, chunksize), bar)
    finally:
        bar.close()
    names = grid_.names(grid) + (["seed"] if seeds is not None else [])
    # a grid given as points is the rows' own columns: its names suffice (pandas
    # deep-copies attrs at every operation on a DataFrame)
    attrs = {"pysched_version": __version__, "function": _described(fn),
             "grid": grid if isinstance(grid, dict) else grid_.names(grid), "seeds": seeds}
    return table(rows, names, attrs, output)
