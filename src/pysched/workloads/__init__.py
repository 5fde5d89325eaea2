"""Workloads from outside pysched: rt-app's JSON files
(``pysched.workloads.rtapp``: from_rtapp and the Workload it returns) and
Con Kolivas's interbench benchmarks (``pysched.workloads.interbench``).

The rt-app names are re-exported here, as ``ps.workloads.from_rtapp``."""
from . import interbench, rtapp  # noqa: F401
from .rtapp import (MAX_DEPTH, MAX_FILE_BYTES, MAX_INSTANCES, MAX_OPS,  # noqa: F401
                    MAX_THREADS, MAX_VALUES, RtAppThread, Workload, channel, from_rtapp)
