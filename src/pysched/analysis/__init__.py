"""The analyses of scheduler policies, one module per family, and the
measurements of runs that check them:

- ``pysched.analysis.o1``: the O(1) family's formulas (the very C the
  simulator runs) and the steady state of a task that runs and sleeps;
- ``pysched.analysis.o1_mix``: the same for several such tasks beside
  hogs, each with its sleep_avg, prio, share and time to get there;
- ``pysched.analysis.houston``: the self-tuning patch's formulas and the
  fixed point of its feedback loop (houston_equilibrium);
- ``pysched.analysis.stability``: whether that loop settles,
  cycles or starves a task (the return map in houston_loop);
- ``pysched.analysis.houston_mix``: the same for any set of tasks -- CPU
  hogs and tasks that run and sleep, any nice, one CPU or several;
- ``pysched.analysis.measure``: the measurements of a run's series
  (settling time, limit cycle, the classification a prediction is checked
  against).

Every prediction and measurement is a Result (pysched.analysis.result): a
dataclass whose repr leads with its kind and why, with as_dict() and
to_frame(), NaN for a value that does not exist, times in seconds in the
fields ending in _s, and ``shares`` the CPU shares to plot.

The names users call are re-exported here: ``ps.analysis.houston_stability``,
``ps.analysis.o1_steady_state``, ``ps.analysis.classify_run`` ..."""
from . import houston, measure, o1, o1_mix  # noqa: F401
from .result import Result  # noqa: F401
from .houston import Equilibrium, houston_equilibrium  # noqa: F401
from .stability import Stability, houston_stability  # noqa: F401
from .houston_mix import HoustonMixture, houston_mixture  # noqa: F401
from .measure import (LimitCycle, MeasuredRun, PrioSettling, Settling,  # noqa: F401
                      SleepAvgRun, classify_run, classify_series, limit_cycle, o1_duty_run,
                      prio_settling_time, settling_time, sleep_avg_steady, window_shares)
from .o1 import O1SteadyState, o1_steady_state  # noqa: F401
from .o1_mix import O1Mixture, o1_mixture  # noqa: F401
