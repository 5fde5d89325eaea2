"""pysched: a laboratory for CPU-scheduler heuristics.

A machine and its scheduler simulated in C -- Linux 2.4.20, the 2.5 O(1)
family (2.5.64, 2.5.64-bk4, 2.5.65), Jim Houston's self-tuning patch, CFS
and EEVDF, or a policy of your own in Python or C -- driven from Python::

    import pysched as ps
    sim = ps.Simulator("linux-2.5.64")
    hog = sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.run(seconds=1)
    sim.task(hog).prio

The package's parts, one folder each: ``policy`` (Python and C policies,
the registry of presets), ``results`` (frames, metrics, plots, traces
written), ``analysis`` (per-family formulas and equilibria), ``sweeps``
(the machinery of ``ps.sweep``), ``search`` (the workload that breaks
a scheduler), ``trace`` (captures read and replayed),
``workloads`` (rt-app and interbench) and ``realkernel`` (the same
workload on this machine's kernel).  The simulator itself, its programs
and their time distributions are the modules at the top.
"""
from importlib import import_module as _import_module

try:
    _core = _import_module(__name__ + "._core")
except ModuleNotFoundError as _missing:
    # Only a core that is not there at all: any other failure to load it (an
    # undefined symbol, a wrong ABI, a module it needs) propagates as it is.
    if _missing.name != __name__ + "._core":
        raise
    raise ImportError(f"pysched's compiled core is missing from {__path__[0]}: install the "
                      f"package with pip install .") from _missing

from ._core import ConfigError, Error, InvariantError, PolicyError, StateError
from ._records import EVENT_DTYPE, LATENCY_DTYPE
from .codes import EVENT_FIELDS, EVENT_KINDS, SCHED_POLICIES, TASK_STATES
from .dist import const, exponential, normal, uniform
from .program import Program
from . import programs
from .policy.base import Param, Policy, register_policy
from .policy.build import ABI_VERSION, PolicyBuildError, PolicyLibrary, build_policy, include_dir
from .policy.registry import ParamInfo, formula, policies, policy_info, preset_params, presets
from .simulator import Simulator, TaskView
from .results import metrics, plot
from . import analysis, ext, policy, realkernel, results, search, trace, workloads
from .sweeps import SweepError, read_sweep, sweep
from ._moved import install as _install_moved

# ps.policy.examples and ps.policy.testing without an import of their own
# (not names of this package: ps.examples is the old one, _moved.py)
for _name in ("policy.examples", "policy.testing", "ext.examples"):
    _import_module(f"{__name__}.{_name}")

# the package version, its one place: pyproject.toml (setuptools dynamic) and
# setup.py (for the C core, which writes it into every snapshot) read it
# from here.  0.2.0: snapshot format 5, which records the version
__version__ = "0.2.0"

__all__ = [
    "Error", "ConfigError", "StateError", "InvariantError", "PolicyError",
    "Simulator", "TaskView", "Program", "programs", "const", "uniform", "exponential", "normal",
    "Policy", "Param", "register_policy", "PolicyBuildError", "build_policy", "include_dir",
    "PolicyLibrary", "ABI_VERSION", "presets", "policies", "policy_info", "formula",
    "preset_params", "ParamInfo",
    "sweep", "SweepError", "read_sweep", "search", "metrics", "plot", "analysis", "trace",
    "workloads", "realkernel",
    "policy", "results",
    "EVENT_DTYPE", "EVENT_KINDS", "LATENCY_DTYPE", "EVENT_FIELDS", "SCHED_POLICIES", "TASK_STATES",
]

# the modules that moved into the folders above, under their old names for
# one release (pysched/_moved.py)
__getattr__ = _install_moved(__name__)
