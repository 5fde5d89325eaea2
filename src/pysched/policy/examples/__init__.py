"""Policies written in Python with pysched.Policy: complete examples to
run, compare and copy (see the tutorial in docs/): a round robin, a
decaying sleep credit toy, and Linux 2.4.20's goodness scheduler, tick for
tick the built-in C preset linux-2.4.20 (tests/policies/api/test_python_linux24.py)."""
from .linux24 import Linux24
from .round_robin import RoundRobin
from .sleep_credit import SleepCredit

__all__ = ["Linux24", "RoundRobin", "SleepCredit"]
