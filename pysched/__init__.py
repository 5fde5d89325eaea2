"""pysched: a laboratory for CPU-scheduler heuristics.

The Linux 2.5.64 / 2.5.64-bk4 / 2.5.65 O(1) scheduler simulated tick for tick
in C, driven from Python::

    import pysched as ps
    sim = ps.Simulator("linux-2.5.64")
    hog = sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.run(seconds=1)
    sim.task(hog).prio
"""
import os as _os
import sys as _sys
from importlib import import_module as _import_module

try:
    _core = _import_module(__name__ + "._core")
except ModuleNotFoundError as _missing:
    # Only a core that is not there at all: any other failure to load it (an
    # undefined symbol, a wrong ABI, a module it needs) propagates as it is.
    if _missing.name != __name__ + "._core":
        raise
    # Imported from a source checkout (python -m pysched in its root puts the
    # root first on sys.path), whose package has no compiled core: defer to
    # the installed package for every submodule.
    from importlib.machinery import PathFinder as _PathFinder

    _root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
    _spec = _PathFinder.find_spec(
        __name__, [p for p in _sys.path if _os.path.abspath(p or _os.curdir) != _root])
    if _spec is None or not _spec.submodule_search_locations:
        raise ImportError(
            "pysched's compiled core is missing: install it with pip install .") from _missing
    __path__[:] = list(_spec.submodule_search_locations)
    try:
        _core = _import_module(__name__ + "._core")
    except ImportError as _error:
        raise ImportError(
            f"pysched's compiled core is missing from {_os.path.dirname(_os.path.abspath(__file__))}"
            f" and that of the installed package in {', '.join(__path__)} failed to import:"
            f" {type(_error).__name__}: {_error}") from _error

from . import (analysis, houston, interbench, measure, metrics, o1, o1_steady, programs,
               stability, trace, workloads)
from ._core import ConfigError, Error, InvariantError, PolicyError, StateError
from .build import ABI_VERSION, PolicyBuildError, PolicyLibrary, build_policy, include_dir
from ._records import EVENT_DTYPE, LATENCY_DTYPE
from .codes import EVENT_FIELDS, EVENT_KINDS, SCHED_POLICIES, TASK_STATES
from .dist import const, exponential, normal, uniform
from .policy import Param, Policy, register_policy
from .program import Program
from .registry import ParamInfo, formula, policies, policy_info, preset_params, presets
from .simulator import Simulator, TaskView
from .sweep import SweepError, sweep
from . import examples, plot, testing

# the package version, its one place: pyproject.toml (setuptools dynamic) and
# setup.py (for the C core, which writes it into every snapshot) read it
# from here.  0.2.0: snapshot format 5, which records the version
__version__ = "0.2.0"

__all__ = [
    "Error", "ConfigError", "StateError", "InvariantError", "PolicyError", "Policy", "Param",
    "register_policy", "examples", "testing", "plot", "PolicyBuildError", "build_policy",
    "include_dir", "PolicyLibrary", "ABI_VERSION",
    "Simulator", "TaskView", "Program", "programs", "interbench", "o1", "o1_steady", "houston",
    "analysis", "measure", "metrics", "stability", "trace", "workloads", "presets", "policies", "policy_info",
    "formula", "preset_params",
    "ParamInfo", "sweep", "SweepError", "const", "uniform", "exponential", "normal", "EVENT_DTYPE", "EVENT_KINDS",
    "LATENCY_DTYPE", "EVENT_FIELDS", "SCHED_POLICIES", "TASK_STATES",
]
