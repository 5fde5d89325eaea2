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

A grid is never built (each call is computed from its position when its
batch is submitted), so a sweep of any size starts at once; ``to=`` streams
the rows to a CSV or Parquet file instead of keeping them, and
``resume=True`` continues a sweep from its file, skipping the positions it
holds (sweeps/store.py).

A sweep that stops keeps what it finished: a call that raises, or an
executor that breaks (a worker killed), raises SweepError, whose
``partial`` holds the rows of the calls that finished; Ctrl-C's
KeyboardInterrupt goes on as it is, carrying them as ``partial`` too.

The workers know the C policies loaded here with build_policy (their
presets can be named in the function): the local pool's load them as they
start, and the function travels to any other executor's (a spawned process
pool, a Dask cluster) with their sources, which a worker builds (or finds
in its cache) and loads before its first call (sweeps/by_value.py).
"""
import pathlib
from concurrent.futures import BrokenExecutor

from . import grid as grid_
from . import store
from .by_value import ByValue
from ..policy import build
from .._checks import check_bool, check_int
from .._core import Error
from .local import run_local
from .progress import bar as progress_bar
from .batches import Batches, Progress, Todo, run, workers_of
from .table import OUTPUTS, table

SHOWN = 5  # the calls a message lists at most


class SweepError(Error):
    """A sweep stopped by a call that failed or by an executor that broke
    (a worker killed: os._exit, a crash, the out-of-memory killer); the
    exception that stopped it is the ``__cause__``.

    partial : the rows of the calls that finished, as the sweep returns
        its table (``output=``, ``attrs`` included), in grid order; a
        DataFrame's index is each row's position in the full table.
    point : the call that failed -- its grid values and seed, as a dict --
        or None when the executor broke.
    points : the calls that failed (one, or a batch when the executor did
        not say which of it), or, when the executor broke, those that were
        on it.
    """

    def __init__(self, message, partial=None, point=None, points=()):
        super().__init__(message)
        self.partial = partial
        self.point = point
        self.points = list(points)


def _described(fn):
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    return f"{module}.{name}" if module and name else repr(fn)


def _listed(calls):
    shown = ", ".join(map(str, calls[:SHOWN]))
    return shown if len(calls) <= SHOWN else f"{shown} and {len(calls) - SHOWN} more (.points)"


def _stopped(exc, progress, partial, where=".partial holds the rows of the"):
    """The SweepError to raise from exc, which stopped the sweep."""
    failed = [dict(progress.calls[i]) for i in progress.failed]
    cause = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, BrokenExecutor):
        what = f"the executor broke ({cause})"
        if failed:
            what += (f" with the calls at {_listed(failed)} on it: one of them may have ended its "
                     "worker (os._exit, a crash, the out-of-memory killer)")
    elif failed:
        what = (f"the call at {failed[0]}" if len(failed) == 1 else
                f"the batch of the calls at {_listed(failed)}") + f" failed: {cause}"
    else:
        what = f"it stopped: {cause}"
    count = len(partial) if not isinstance(partial, pathlib.PurePath) else progress.count
    message = (f"pysched.sweep: {what}; {where} {count} calls of "
               f"{len(progress.calls)} that finished")
    point = failed[0] if len(failed) == 1 and not isinstance(exc, BrokenExecutor) else None
    return SweepError(message, partial, point, failed)


def sweep(fn, grid, *, seeds=None, executor=None, max_workers=None, chunksize=None,
          progress=None, output=None, to=None, resume=False):
    """Call fn(**point, seed=seed) for every point of the grid and every seed.

    grid : dict of name -> values (their cartesian product, never built:
        each call is computed when it is submitted, so a grid of 10^8
        points starts at once; a range or a NumPy array stays as it is), or
        a list of dicts (name -> value), one per point.  An empty axis (or
        an empty list) is a ValueError naming it; ``{}`` is one point.
    seeds : None (fn gets no seed), a count n (the seeds 0 .. n-1), or a
        list of seeds; each point is called once per seed, the seed varying
        fastest, with ``seed=`` and a ``seed`` column in the rows.
    executor : where the calls run (anything with ``submit`` returning a
        concurrent.futures Future); None: here, or a local process pool
        when the sweep is long enough for one to pay.  At most two batches
        per worker are submitted at a time.
    max_workers : the local pool's size (default: the usable CPUs); with an
        executor, how many calls it runs at once if it does not say itself.
    chunksize : calls per task; None sizes batches from measured call times.
    progress : a tqdm bar; None shows one when tqdm is installed and someone
        watches (a notebook, or stderr a terminal), True always, False never.
    output : None (a pandas DataFrame when pandas is installed, else a NumPy
        record array), "pandas", "numpy" or "dicts" (a list of dicts); a
        table's ``attrs`` hold pysched's version, the function, the grid (a
        dict grid with plain values; of a list of points, their names) and
        the seeds.  With ``to=``, also "file": return the file's path and
        read nothing back.
    to : a file the rows stream to as they arrive, not kept in memory:
        ``.csv``, or ``.parquet`` (a folder of part files; needs pyarrow).
        Each row carries ``sweep_index``, its call's position in the grid.
        The sweep then returns the table read back from the file (as
        read_sweep), the same table as without ``to=`` up to what the
        format keeps (a CSV file keeps no type but those it can spell).
    resume : with ``to=``, continue the sweep a file there holds (the same
        function, grid and seeds, or a ValueError), making only the calls
        it does not hold; False (the default): a file there is an error.

    A sweep that stops keeps the rows of the calls that finished, in the
    form ``output`` asks, in grid order (a DataFrame indexed by each row's
    position in the full table), and, with ``to=``, in the file:

    - a call that raises, or a function that returns no dict, raises
      SweepError (a pysched.Error) naming the call, with ``partial`` (those
      rows), ``point`` (the call: its grid values and seed) and the call's
      exception as ``__cause__``;
    - an executor that breaks (a worker killed: BrokenProcessPool, which
      does not say what the worker ran) raises SweepError naming the calls
      that were on it (``points``; ``point`` is None), with ``partial``;
    - Ctrl-C: the KeyboardInterrupt goes on as it is (``except Exception``
      does not catch it), with ``partial``.

    Then the batches still queued are cancelled; on the default pool, the
    running ones end first and their rows are kept, and the pool shuts
    down.  On an executor given, the sweep does not wait for the running
    ones.  A process killed outright loses only the rows not yet written
    (at most 30 s of them); ``resume=True`` makes those calls again.
    """
    from .. import __version__

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
    allowed = OUTPUTS + (("file",) if to is not None else ())
    if output is not None and output not in allowed:
        raise ValueError(f"output={output!r} is not one of None, {', '.join(map(repr, allowed))}")
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(f"executor must have a submit method (a concurrent.futures.Executor), "
                        f"not {type(executor).__name__}")
    resume = check_bool("resume", resume)
    if resume and to is None:
        raise ValueError("resume=True continues a sweep written to a file: give it as to=")

    names = grid_.names(grid) + (["seed"] if seeds is not None else [])
    # a grid given as points is the rows' own columns: its names suffice (pandas
    # deep-copies attrs at every operation on a DataFrame)
    attrs = {"pysched_version": __version__, "function": _described(fn),
             "grid": grid_.described(grid), "seeds": seeds}
    writer, done_before = None, []
    if to is not None:
        if store.INDEX in names:
            raise ValueError(f"the grid has a {store.INDEX!r} column, which a sweep file keeps "
                             "for each row's position: rename it")
        writer, done_before = store.open_writer(
            to, store.describe(attrs, grid, seeds, names, len(calls)), resume)
    todo = Todo(store.gaps(done_before, len(calls)))
    bar = progress_bar(progress, len(calls), len(calls) - todo.left)
    done = Progress(calls, bar, writer)
    try:
        if executor is None:
            run_local(fn, done, todo, max_workers, chunksize)
        else:
            workers = max_workers or workers_of(executor)
            run(executor, ByValue(fn, build._current_sources()), done, todo,
                Batches(workers, chunksize))
        if writer is not None:
            writer.close()
    except BaseException as e:
        if writer is not None:
            try:
                writer.close()
            except Exception as closing:  # the rows that failed to be written say why
                if isinstance(e, Exception):
                    e = closing
        if writer is None:
            finished = [i for i, r in enumerate(done.rows) if r is not None]
            partial = table([done.rows[i] for i in finished], names, attrs, output, index=finished)
            where = ".partial holds the rows of the"
        else:
            partial = _read(to, names, output)
            finished = range(len(partial)) if output != "file" else range(writer.written)
            where = f"{str(to)!r} and .partial hold the rows of the"
        if isinstance(e, Exception):
            raise _stopped(e, done, partial, where) from e
        # Ctrl-C (or SystemExit) stays what it is, which ``except Exception``
        # does not catch, and carries the rows
        e.partial = partial
        if hasattr(e, "add_note"):
            e.add_note(f"pysched.sweep: interrupted; {where} {len(finished)} calls of "
                       f"{len(calls)} that finished")
        raise
    finally:
        bar.close()
    if writer is not None:
        return _read(to, names, output)
    return table(done.rows, names, attrs, output)


def _read(path, names, output):
    """A sweep file as the table output asks for (the path for "file")."""
    if output == "file":
        return pathlib.Path(path)
    df = store.read_frame(path)
    if output in (None, "pandas"):
        return df
    import pandas as pd

    index = None if isinstance(df.index, pd.RangeIndex) else df.index.tolist()
    return table(df.to_dict("records"), names, dict(df.attrs), output, index=index)


def read_sweep(path, *, output=None):
    """The table of a sweep written to a file (``sweep(..., to=path)``),
    finished or not: its rows in grid order, indexed by their positions in
    the full table (a RangeIndex when it holds every call), with the attrs
    the sweep's table has.  output: None or "pandas" (a DataFrame), "numpy",
    "dicts"."""
    if output is not None and output not in OUTPUTS:
        raise ValueError(f"output={output!r} is not one of None, {', '.join(map(repr, OUTPUTS))}")
    meta = store.read_meta(path)
    return _read(path, meta["names"], output)
