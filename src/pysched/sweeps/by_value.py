"""A function that travels to a worker by value, with the C policies the
caller built.

``pickle`` sends a function by reference: its module and name, looked up
again in the worker.  A function defined in ``__main__`` (a script, a
notebook cell) or made at run time (a lambda, a closure) is not found there
unless the worker was forked from the caller -- so it breaks under the
``spawn`` and ``forkserver`` start methods (macOS, Windows, Python 3.14 on
Linux) and on a cluster.  cloudpickle sends such a function by value (its
code, defaults, closure and the globals it uses) and every importable one by
reference as pickle does, and its output loads with plain ``pickle.loads``
wherever cloudpickle is installed (a dependency of pysched, as of Dask).

A preset of a library loaded with build_policy (a C policy, a sched_ext
scheduler in the C dialect) is known only to the process that loaded it, so
the function travels with those libraries' sources: a worker loads them
(building them if its cache has not) before it unpickles the function, as
the default pool's workers do when they start.  A library the worker cannot
build (no compiler on a cluster's machine) fails only the calls that use
its presets, their exception noting why.

Wrapping costs nothing when nothing is pickled: in a thread pool, or in this
process, the wrapper calls the function itself, with its real globals.
"""
import pickle

import cloudpickle

from ..policy import build


class ByValue:
    """fn, called as it is here, pickled by value when sent elsewhere,
    with `sources` (build_policy's libraries) to load before it."""

    __slots__ = ("fn", "sources", "_blob")

    def __init__(self, fn, sources=()):
        self.fn = fn
        self.sources = tuple(sources)
        self._blob = None

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __reduce__(self):
        # pickled once, however many batches carry it
        if self._blob is None:
            try:
                self._blob = cloudpickle.dumps(self.fn)
            except Exception as e:
                raise TypeError(f"the function to sweep, {self.fn!r}, cannot be sent to a worker: "
                                f"{type(e).__name__}: {e}") from e
        if not self.sources:
            return pickle.loads, (self._blob,)
        return _with_libraries, (self.sources, self._blob)


def _with_libraries(sources, blob):
    """Worker side: load the caller's libraries, then the function."""
    failed = []
    for source in sources:
        try:
            build._library_index(source)
        except Exception as e:
            failed.append(f"{source.name} ({source.path}): {type(e).__name__}: {e}")
    fn = pickle.loads(blob)
    return _Noting(fn, failed) if failed else fn


class _Noting:
    """fn, whose exceptions note the libraries this worker failed to load."""

    __slots__ = ("fn", "failed")

    def __init__(self, fn, failed):
        self.fn = fn
        self.failed = failed

    def __call__(self, *args, **kwargs):
        try:
            return self.fn(*args, **kwargs)
        except Exception as e:
            if hasattr(e, "add_note"):  # Python >= 3.11
                e.add_note("this worker could not load the policy libraries built with "
                           "build_policy where the sweep was made: " + "; ".join(self.failed))
            raise
