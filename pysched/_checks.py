"""Argument checks shared by the Python API: each raises an exception that
names the argument, its value and the allowed range."""
import math


def check_int(what, v, lo, hi):
    """v must be an int (not a bool) in lo..hi."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{what} must be an int, not {type(v).__name__}")
    if not lo <= v <= hi:
        raise ValueError(f"{what}={v} is outside the allowed range {lo}..{hi}")
    return v


def check_number(what, v, lo, hi):
    """v must be a finite int or float (not a bool) in lo..hi."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{what} must be a number, not {type(v).__name__}")
    if not (math.isfinite(v) and lo <= v <= hi):
        raise ValueError(f"{what}={v!r} is outside the allowed range {lo}..{hi}")
    return v
