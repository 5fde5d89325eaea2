"""What a run gives out: its records as pandas DataFrames (``frames``), the
metrics computed from them (``metrics``: shares, latencies, waits,
fairness, deadlines), the plots drawn from them (``plot``, with what they
draw computed apart in ``plot_data``) and the run written as a trace
(``ftrace``: the kernel's text, which pysched.trace.load reads back;
``perfetto``: JSON for ui.perfetto.dev).  ``ps.metrics`` and ``ps.plot``
are these modules.

Nothing is imported here: the Simulator itself uses ``frames`` and the
trace writers, and ``metrics`` and ``plot`` take a Simulator, so each is
imported where it is needed (``import pysched`` imports them all)."""
