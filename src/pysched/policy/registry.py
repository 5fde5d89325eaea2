"""Presets and policies known to the core."""
import functools
from collections import namedtuple

from .. import _core
from . import base as _policy
from .._checks import BOOLS, check_int, check_name
from .._suggest import did_you_mean

__all__ = ["ParamInfo", "formula", "policies", "policy_info", "preset_params", "presets"]

ParamInfo = namedtuple("ParamInfo", "name default min max unit doc")

# The core's own presets, as they are at import (before any policy library
# loads): what they declare never changes, so a Simulator reads it from a
# cache.  (A library's preset may be replaced by a rebuilt version, and a
# Python policy is a class: those are asked every time.)
_BUILTIN = frozenset(p[0] for p in _core.presets())


@functools.lru_cache(maxsize=None)
def _builtin_info(preset, hz):
    return _core.policy_info(preset, hz)


def _simulator_info(key, hz):
    """policy_info for the Simulator, which only reads it: cached for the
    core's own presets."""
    if isinstance(key, str) and key in _BUILTIN:
        return _builtin_info(key, hz or 0)
    return policy_info(key, hz)


def presets():
    """Names of the presets: a policy plus parameter values; then the
    Python policies registered (pysched.register_policy)."""
    return [p[0] for p in _core.presets()] + list(_policy.registered())


def preset_params(preset, hz=None):
    """The parameter table of a preset at a given HZ (default: the preset's
    own, 1000 for the 2.5 kernels, 100 for 2.4): a list of ParamInfo (name,
    default, min, max, unit, doc).  Values in ticks scale with HZ."""
    return [ParamInfo(*p[:6]) for p in policy_info(preset, hz)["params"]]


def policy_info(preset, hz=None):
    """What the core declares about a preset's policy: its name and doc, the
    default HZ, parameters, task / runqueue fields (``unsigned_fields``
    names the task fields read as unsigned 64-bit values: the bit mask
    cpus_allowed), headline fields, queue columns and formulas, as a dict."""
    preset = _check_preset(preset)
    if hz is not None:
        hz = check_int("hz", hz, 1, 100_000)
    return _core.policy_info(preset, hz or 0)


def formula(preset, name, *args, params=None, hz=None):
    """Call formula `name` of the preset's policy (the very C the simulator
    runs) on integer args, with the preset's parameters plus `params`."""
    preset = _check_preset(preset)
    name = check_name("formula name", name)
    if hz is not None:
        hz = check_int("hz", hz, 1, 100_000)
    params = check_params(preset, params, hz)
    args = tuple(check_int(f"argument {k + 1} of {name}", a, -2**63, 2**63 - 1)
                 for k, a in enumerate(args))
    return _core.formula(preset, name, hz or 0, params, args)


@functools.lru_cache(maxsize=64)
def _param_table(preset, hz):
    info = _core.policy_info(preset, hz or 0)
    return info["policy"], {p[0]: p[2:5] for p in info["params"]}


def check_params(preset, params, hz=None):
    """Parameter overrides for `preset` at `hz` (a dict or None) as a new
    dict whose values are plain ints in their parameters' ranges: an int
    must be integer-like (see check_int); True and False are taken only
    for parameters whose unit is "bool".  The core checks the constraints
    between values."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict, not {type(params).__name__}")
    policy, table = _param_table(preset, hz)
    out = {}
    for name, v in params.items():
        name = check_name("parameter name", name)
        if name not in table:
            raise KeyError(f"unknown parameter '{name}' for policy {policy}; "
                           f"its parameters: {', '.join(table)}{did_you_mean(name, table)}")
        lo, hi, unit = table[name]
        if unit == "bool" and isinstance(v, BOOLS):
            v = int(v)
        out[name] = check_int(f"parameter {name}", v, lo, hi)
    return out


def policies():
    """Each policy's parameter table, keyed by policy name, with the defaults
    of the policy's first preset and the presets that use it:
    ``{"o1": {"presets": [...], "params": [ParamInfo, ...]}}``."""
    out = {}
    for name, policy, _doc, _hz in _core.presets():
        entry = out.setdefault(policy, {"presets": [], "params": preset_params(name)})
        entry["presets"].append(name)
    for name in _policy.registered():
        out[name] = {"presets": [name], "params": preset_params(name)}
    return out


PolicyLibrary = namedtuple("PolicyLibrary", "name source path presets")
PolicyLibrary.__doc__ = """A loaded policy library (build_policy's answer): its
name, the C file it was built from, the shared library and the names of
its presets.  Where a preset is asked for, a library of one preset stands
for it."""


def resolve(preset):
    """(name, key, cls) of a preset name, a registered Python policy's name,
    a pysched.Policy subclass or a PolicyLibrary of one preset: key is what
    the core takes (the name, or the class's PolicyDef), cls the Python
    policy class or None."""
    if isinstance(preset, PolicyLibrary):
        if len(preset.presets) != 1:
            raise ValueError(f"the library {preset.name!r} has the presets {list(preset.presets)}; "
                             "name the one to run")
        preset = preset.presets[0]
    if isinstance(preset, type):
        pdef = _policy.definition(preset)
        return _policy._declaration(preset)[0], pdef, preset
    if type(preset) is str and preset in _BUILTIN:
        # a Python policy cannot take a built-in preset's name (register_policy)
        return preset, preset, None
    preset = check_name("preset", preset)
    cls = _policy.registered().get(preset)
    if cls is not None:
        return preset, _policy.definition(cls), cls
    names = presets()
    if preset not in names:
        raise KeyError(f"unknown preset {preset!r}; known presets: {names}{did_you_mean(preset, names)}")
    return preset, preset, None


def _check_preset(preset):
    """What the core takes for `preset`: its name, or a Python policy's
    PolicyDef."""
    return resolve(preset)[1]
