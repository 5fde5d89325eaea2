"""A sweep's rows as a table: a pandas DataFrame, a NumPy record array, or
the list of dicts they are built from.

A row is the call's keyword arguments (the grid's columns, then ``seed``)
followed by what the function returned, in the order it returned them.
The table's ``attrs`` say what made it (pysched's version, the function,
the grid, the seeds), so a saved table can be traced back and rerun.
"""
import numpy as np

from .grid import plain

OUTPUTS = ("pandas", "numpy", "dicts")


def row(call, out):
    """The row of one call: its arguments, then fn's returned dict (NumPy
    scalars as the plain values they hold)."""
    if not isinstance(out, dict):
        raise TypeError(f"the function returned {type(out).__name__} at {call}: "
                        "it must return a dict (name -> value)")
    r = dict(call)
    for name, v in out.items():
        if not isinstance(name, str):
            raise TypeError(f"the function returned the key {name!r} at {call}: "
                            "keys name the table's columns and must be str")
        if name in call:
            raise ValueError(f"the function returned {name!r} at {call}, a column of the "
                             "grid already: return it under another name")
        r[name] = plain(v)
    return r


class Records(np.recarray):
    """A NumPy record array carrying the sweep's metadata in ``.attrs``, as a
    DataFrame does (kept through slicing and pickling)."""

    def __array_finalize__(self, obj):
        super().__array_finalize__(obj)
        self.attrs = getattr(obj, "attrs", {})

    def __reduce__(self):
        fn, args, state = super().__reduce__()
        return fn, args, (state, self.attrs)

    def __setstate__(self, state):
        array_state, self.attrs = state
        super().__setstate__(array_state)


def _column(values):
    """The values of one column as an array of the narrowest type that holds
    them exactly as they are: bool, int64, float64, str, or object."""
    kinds = set(map(type, values))
    try:
        if kinds <= {bool}:
            return np.array(values, dtype=bool)
        if kinds <= {int}:
            return np.array(values, dtype=np.int64)
        if kinds <= {int, float} and all(abs(v) <= 2**53 for v in values if type(v) is int):
            return np.array(values, dtype=np.float64)
        if kinds <= {str}:
            return np.array(values, dtype=str)
    except OverflowError:  # an int beyond int64
        pass
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _records(rows, columns, attrs):
    missing = object()
    arrays = []
    for c in columns:
        values = [r.get(c, missing) for r in rows]
        if any(v is missing for v in values):  # a column some calls did not return
            values = [None if v is missing else v for v in values]
            col = np.empty(len(values), dtype=object)
            col[:] = values
        else:
            col = _column(values)
        arrays.append(col)
    dtype = np.dtype([(c, a.dtype) for c, a in zip(columns, arrays)])
    out = np.empty(len(rows), dtype=dtype)
    for c, a in zip(columns, arrays):
        out[c] = a
    out = out.view(Records)
    out.attrs = attrs
    return out


def columns(names, rows):
    """The table's columns: the call's names, then fn's keys, first seen first."""
    return list(dict.fromkeys([*names, *(k for r in rows for k in r)]))


def table(rows, names, attrs, output, index=None):
    """rows (dicts) as output asks: "pandas", "numpy", "dicts", or None for
    a DataFrame when pandas is installed and a record array otherwise;
    index labels a DataFrame's rows (default 0, 1, ...)."""
    if output == "dicts":
        return rows
    cols = columns(names, rows)
    if output in (None, "pandas"):
        try:
            import pandas as pd
        except ImportError:
            if output == "pandas":
                raise ImportError('output="pandas" needs pandas: pip install pandas '
                                  '(or output="numpy": a NumPy record array)') from None
        else:
            df = pd.DataFrame(rows, columns=cols, index=index)
            df.attrs.update(attrs)
            return df
    return _records(rows, cols, attrs)
