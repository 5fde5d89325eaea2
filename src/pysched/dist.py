"""Duration distributions for program ops.

A distribution is unitless; the keyword it is passed with gives the unit:
``Program().run(ms=uniform(1, 5))`` runs for 1 to 5 ms of CPU.
"""
import math
from dataclasses import dataclass

from ._checks import _show, to_number

# the core's op encoding (csrc/program.h)
CONST, UNIFORM, EXPONENTIAL, NORMAL = 0, 1, 2, 3

# the longest duration the core accepts: 10^6 s
MAX_NS = 10**15

_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _check_number(what, x):
    x = to_number(what, x)
    if not 0 <= x < math.inf:  # an int compares exactly, however large
        raise ValueError(f"{what}={_show(x)} is not allowed: durations must be finite and >= 0")
    try:
        return float(x)
    except OverflowError:  # an int beyond every float, in any unit too large
        raise ValueError(
            f"{what}={_show(x)} is too large: the allowed range is 0..{MAX_NS} ns (10^6 s)") from None


@dataclass(frozen=True)
class Dist:
    """A duration distribution; ``a`` and ``b`` are in the unit of use."""

    kind: int
    a: float
    b: float = 0.0

    def encode(self, scale):
        """(kind, a_ns, b_ns) with every value checked against the core's range."""
        a, b = self.a * scale, self.b * scale
        for name, v in (("a", a), ("b", b)):
            if v > MAX_NS:
                raise ValueError(
                    f"duration {v:.0f} ns is too large: the allowed range is 0..{MAX_NS} ns (10^6 s)"
                )
        return self.kind, a, b


def const(x):
    """Always x."""
    return Dist(CONST, _check_number("const value", x))


def uniform(lo, hi):
    """Uniform on [lo, hi)."""
    lo, hi = _check_number("uniform lo", lo), _check_number("uniform hi", hi)
    if hi < lo:
        raise ValueError(f"uniform needs lo <= hi, got lo={lo}, hi={hi}")
    return Dist(UNIFORM, lo, hi)


def exponential(mean):
    """Exponential with the given mean."""
    return Dist(EXPONENTIAL, _check_number("exponential mean", mean))


def normal(mean, sd):
    """Normal, clipped at 0."""
    return Dist(NORMAL, _check_number("normal mean", mean), _check_number("normal sd", sd))


def duration(kw, what):
    """Encode a duration given as one keyword ``ns=|us=|ms=|s=`` whose value is
    a number or a Dist: returns (kind, a_ns, b_ns)."""
    if len(kw) != 1:
        raise TypeError(f"{what}() takes exactly one of ns=, us=, ms=, s=; got {sorted(kw) or 'none'}")
    (unit, value), = kw.items()
    if unit not in _UNITS:
        raise TypeError(f"{what}() got unknown unit {unit!r}; use one of ns=, us=, ms=, s=")
    if not isinstance(value, Dist):
        value = const(value)
    return value.encode(_UNITS[unit])
