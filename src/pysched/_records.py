"""NumPy dtypes of the core's records, built from the layouts the core reports
(so the C structs are the single source of truth)."""
import numpy as np

from . import _core


def _dtype(layout):
    fields, size = layout
    return np.dtype(
        {
            "names": [f[0] for f in fields],
            "formats": [f[2] for f in fields],
            "offsets": [f[1] for f in fields],
            "itemsize": size,
        }
    )


_layouts = _core.record_layouts()
EVENT_DTYPE = _dtype(_layouts["event"])
LATENCY_DTYPE = _dtype(_layouts["latency"])
SAMPLE_DTYPE = _dtype(_layouts["series"])
PERIODIC_DTYPE = _dtype(_layouts["periodic"])
