"""A function that travels to a worker by value.

``pickle`` sends a function by reference: its module and name, looked up
again in the worker.  A function defined in ``__main__`` (a script, a
notebook cell) or made at run time (a lambda, a closure) is not found there
unless the worker was forked from the caller -- so it breaks under the
``spawn`` and ``forkserver`` start methods (macOS, Windows, Python 3.14 on
Linux) and on a cluster.  cloudpickle sends such a function by value (its
code, defaults, closure and the globals it uses) and every importable one by
reference as pickle does, and its output loads with plain ``pickle.loads``
wherever cloudpickle is installed (a dependency of pysched, as of Dask).

Wrapping costs nothing when nothing is pickled: in a thread pool, or in this
process, the wrapper calls the function itself, with its real globals.
"""
import pickle

import cloudpickle


class ByValue:
    """fn, called as it is here, pickled by value when sent elsewhere."""

    __slots__ = ("fn", "_blob")

    def __init__(self, fn):
        self.fn = fn
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
        return pickle.loads, (self._blob,)
