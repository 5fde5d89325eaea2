"""Equilibrium analysis of scheduler policies: one place for the analyses
of every family (the Houston loop's fixed point and its stability, the O(1)
family's steady state) and the measurements of runs that check them."""
from .houston import houston_equilibrium  # noqa: F401

# the stability of the loop whose fixed point houston_equilibrium gives, and
# the measurements of a run that check it: modules of their own, re-exported
# here
from .stability import Stability, houston_stability  # noqa: F401
from .measure import (LimitCycle, MeasuredRun, PrioSettling, Settling,  # noqa: F401
                      SleepAvgRun, classify_run, classify_series, limit_cycle, o1_duty_run,
                      prio_settling_time, settling_time, sleep_avg_steady, window_shares)
# the O(1) family's steady state of a task that runs and sleeps, and its check
from .o1_steady import O1SteadyState, o1_steady_state  # noqa: F401
