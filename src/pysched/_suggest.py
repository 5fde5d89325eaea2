""""Did you mean" for a mistyped name: the tail appended to the error that
refuses it (the error's own text comes first, unchanged)."""
import difflib

MAX_SUGGESTED = 3


def did_you_mean(name, choices):
    """"; did you mean 'x'?" (or "'x' or 'y'") for the choices closest to
    `name`, or "" when none is close.  Case is ignored in the comparison
    (a task named "X" is what "x" meant) but kept in the answer."""
    if not isinstance(name, str):
        return ""
    by_folded = {}
    for c in choices:
        by_folded.setdefault(str(c).casefold(), []).append(str(c))
    close = difflib.get_close_matches(name.casefold(), by_folded, n=MAX_SUGGESTED, cutoff=0.6)
    found = [c for folded in close for c in by_folded[folded]][:MAX_SUGGESTED]
    if not found:
        return ""
    return "; did you mean " + " or ".join(repr(c) for c in found) + "?"
