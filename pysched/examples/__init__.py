"""Policies written in Python with pysched.Policy: small, complete
examples to run, compare and copy (see the tutorial in docs/)."""
from .round_robin import RoundRobin
from .sleep_credit import SleepCredit

__all__ = ["RoundRobin", "SleepCredit"]
