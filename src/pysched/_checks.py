"""Argument checks shared by the Python API: each raises an exception that
names the argument, its value and the allowed range, and returns the value
normalised to a plain Python int or float, so that the core only ever sees
plain Python values.

An int argument accepts any integer-like value: an int, a NumPy integer or
anything with ``__index__`` -- but not a bool (or NumPy bool) and not a
float, even 3.0."""
import operator

import numpy as np

BOOLS = (bool, np.bool_)


def _show(v):
    """repr(v), or a description of an int too long for Python to print
    (int-to-str conversion stops at 4300 digits)."""
    try:
        return repr(v)
    except ValueError:
        return f"<{'a negative' if v < 0 else 'an'} int of {v.bit_length()} bits>"


def _index(v):
    """v as a plain int, or None if v is not integer-like."""
    if isinstance(v, BOOLS):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def check_int(what, v, lo, hi):
    """v must be integer-like (not a bool) in lo..hi; returns it as a plain int."""
    i = v if type(v) is int else _index(v)
    if i is None:
        raise TypeError(f"{what} must be an int, not {type(v).__name__}")
    if not lo <= i <= hi:
        raise ValueError(f"{what}={_show(i)} is outside the allowed range {lo}..{hi}")
    return i


def check_name(what, v):
    """v must be a str the core can take whole: without a NUL character (a
    C string ends there: "max_sleep_avg\\x00junk" would name max_sleep_avg)
    and encodable as UTF-8; returns it as a plain str."""
    if not isinstance(v, str):
        raise TypeError(f"{what} must be a str, not {type(v).__name__}")
    if "\x00" in v:
        raise ValueError(f"{what} {v!r} contains a NUL character")
    try:
        v.encode()
    except UnicodeEncodeError:
        raise ValueError(f"{what} {v!r} cannot be encoded as UTF-8") from None
    return str(v)


def check_bool(what, v):
    """v must be True or False (a NumPy bool too, but no other truthy value:
    not 1, not "False"); returns it as a plain bool."""
    if not isinstance(v, BOOLS):
        raise TypeError(f"{what} must be a bool, not {type(v).__name__}")
    return bool(v)


def to_number(what, v):
    """v as a plain int (if integer-like, not a bool) or float (a float or a
    NumPy float), else TypeError."""
    if isinstance(v, (float, np.floating)):
        return float(v)
    i = _index(v)
    if i is None:
        raise TypeError(f"{what} must be a number, not {type(v).__name__}")
    return i


def check_number(what, v, lo, hi):
    """v must be a finite number (see to_number) in lo..hi; returns it as a
    plain int or float."""
    v = to_number(what, v)
    if not lo <= v <= hi:  # NaN compares false; ints compare exactly, however large
        raise ValueError(f"{what}={_show(v)} is outside the allowed range {lo}..{hi}")
    return v
