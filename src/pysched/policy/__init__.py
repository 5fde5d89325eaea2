"""Scheduling policies: the Python ``Policy`` base class and its ``Param``
(``pysched.policy.base``), the registry of presets and policies the core
knows (``registry``), the builder of policies written in C outside the
package (``build``), the conformance kit that checks any policy
(``testing``) and complete examples written in Python (``examples``).

The names users call are at the top of the package: ``ps.Policy``,
``ps.register_policy``, ``ps.build_policy``, ``ps.presets()`` ..."""
from .base import Param, Policy, register_policy  # noqa: F401
