"""Presets and policies known to the core."""
from collections import namedtuple

from . import _core

ParamInfo = namedtuple("ParamInfo", "name default min max unit doc")


def presets():
    """Names of the presets: a policy plus parameter values."""
    return [p[0] for p in _core.presets()]


def preset_params(preset, hz=1000):
    """The parameter table of a preset at a given HZ: a list of ParamInfo
    (name, default, min, max, unit, doc).  Values in ticks scale with HZ."""
    _check_preset(preset)
    info = _core.policy_info(preset, hz)
    return [ParamInfo(*p[:6]) for p in info["params"]]


def policies():
    """Each policy's parameter table, keyed by policy name, with the defaults
    of the policy's first preset and the presets that use it:
    ``{"o1": {"presets": [...], "params": [ParamInfo, ...]}}``."""
    out = {}
    for name, policy, _doc in _core.presets():
        entry = out.setdefault(policy, {"presets": [], "params": preset_params(name)})
        entry["presets"].append(name)
    return out


def _check_preset(preset):
    if not isinstance(preset, str):
        raise TypeError(f"preset must be a str, not {type(preset).__name__}")
    names = presets()
    if preset not in names:
        raise KeyError(f"unknown preset {preset!r}; known presets: {names}")
