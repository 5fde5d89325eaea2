"""sched_ext schedulers in Python, written from
Documentation/scheduler/sched-ext.rst: a global weighted-vtime scheduler
(with a FIFO mode), a central-dispatch one, and one with a queue per CPU
that steals when idle."""
from .central import Central  # noqa: F401
from .per_cpu import PerCpu  # noqa: F401
from .simple import GlobalFifo, Simple  # noqa: F401
