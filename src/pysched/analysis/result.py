"""The one shape of the analysis' results, predictions and measurements
alike (houston_equilibrium's Equilibrium, houston_stability's Stability,
classify_run's MeasuredRun, o1_steady_state's O1SteadyState, o1_mixture's
O1Mixture, o1_duty_run's SleepAvgRun, limit_cycle's LimitCycle).

Each is a dataclass with:

- ``kind``, the verdict ("settles", "cycles", "starves"; "top", "bottom",
  "neutral"; "fixed point", "cycle", "steady range"), and ``why``, the
  verdict in words; the repr leads with both (``why`` cut to its first
  sentence) and the figures to look at, and ``str()`` is the kind and the
  whole ``why``;
- ``shares``, where a result has CPU shares: one per task, in the order
  of the tasks given -- the prediction (or the measurement) to plot;
- a time in seconds wherever a field ends in ``_s`` (``settling_s``,
  ``period_s`` ...), in ticks where it ends in ``_ticks``;
- NaN, never None, for a value that does not exist (a settling time of a
  loop that never settles, the period of an aperiodic swing);
- ``as_dict()`` (every field: a row for a sweep's table) and
  ``to_frame()`` (a pandas DataFrame: a row per task when the result has
  per-task arrays, else one row).
"""
import dataclasses
import math
import warnings

import numpy as np

__all__ = ["Result"]

SHOWN = 100  # characters of `why` the repr shows at most


def nan_if_none(v):
    """A value, with None as NaN."""
    return math.nan if v is None else v


def _short(v):
    if isinstance(v, np.ndarray):
        return "[" + " ".join(f"{x:.3g}" if isinstance(x, float) else str(x) for x in v.tolist()) + "]"
    if isinstance(v, float):
        return f"{v:.4g}"
    return repr(v)


def _first_sentence(text):
    end = text.find(". ")
    text = text if end < 0 else text[:end + 1]
    return text if len(text) <= SHOWN else text[:SHOWN - 1] + "…"


class Result:
    """What every result of pysched.analysis has (see the module): kind,
    why, a short repr, as_dict(), to_frame().  A subclass names the fields
    its repr shows after kind and why in SHOWN_FIELDS."""

    SHOWN_FIELDS = ("shares",)

    def __repr__(self):
        parts = [f"{self.kind}: {_first_sentence(self.why)}"]
        parts += [f"{name}={_short(getattr(self, name))}" for name in self.SHOWN_FIELDS]
        return f"{type(self).__name__}({', '.join(parts)})"

    def __str__(self):
        return f"{self.kind}: {self.why}"

    def as_dict(self):
        """Every field by name: arrays as NumPy arrays (copies), a result
        within (a MeasuredRun's cycle) as its own as_dict(), None as NaN."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Result):
                v = v.as_dict()
            elif isinstance(v, np.ndarray):
                v = v.copy()
            out[f.name] = nan_if_none(v)
        return out

    def to_frame(self):
        """A pandas DataFrame: a row per task (index ``task``, from 0) with
        a column per per-task array and the scalars repeated, or a single
        row when the result has no per-task arrays.  A result within is
        flattened into columns prefixed with its field's name."""
        import pandas as pd

        flat = {}
        for name, v in self.as_dict().items():
            if isinstance(v, dict):
                flat.update({f"{name}_{k}": x for k, x in v.items()})
            elif v is None:
                flat[name] = math.nan
            else:
                flat[name] = v
        tasks = {len(v) for v in flat.values() if isinstance(v, np.ndarray) and v.ndim == 1}
        if len(tasks) == 1:
            n = tasks.pop()
            return pd.DataFrame({k: (v if isinstance(v, np.ndarray) else [v] * n)
                                 for k, v in flat.items()},
                                index=pd.RangeIndex(n, name="task"))
        return pd.DataFrame({k: [v] for k, v in flat.items()})


def moved_field(cls, old, new):
    """Give cls a property `old` that reads field `new` with a
    FutureWarning: the name it had until 0.2."""

    def get(self):
        warnings.warn(f"{cls.__name__}.{old} is now {cls.__name__}.{new}; the old name goes in "
                      "the next release", FutureWarning, stacklevel=2)
        return getattr(self, new)

    setattr(cls, old, property(get, doc=f"The old name of {new} (a FutureWarning)."))
