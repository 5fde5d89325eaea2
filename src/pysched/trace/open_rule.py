"""Which tasks demand="open" replays as busy loops (Trace.to_workload):
OpenRule, the thresholds of "CPU-bound for most of its life"."""
from dataclasses import dataclass

from .._checks import check_int, check_number


@dataclass(frozen=True)
class OpenRule:
    """Which tasks demand="open" lets compute without end: those CPU-bound
    for most of their life.  A task is open when

    - it lived at least min_life_ns (from its start, or the trace's, to its
      exit or the trace's end): a short task (a compiler pass) is demand,
      not a busy loop;
    - each block that ends after its first start_ns is at most
      max_block_ns long (those within it, exec's and the page faults of a
      new process, D-state or short sleeps, do not count);
    - those blocks add up to at most max_blocked of its life;
    - and it neither forks nor wakes another replayed task but as it
      exits (within HANDOFF_NS of CPU before its exit): a post or a fork
      would be lost with its recorded program; a parent it woke as it
      exited sleeps to that time instead (an open task does not exit).

    Measured on this machine's captures (tests/data): the busy loops never
    block; every other task that lived 100 ms or more was blocked 43 % of
    its life or more (the pipe pair without think time), most of them
    well over half."""
    start_ns: int = 10_000_000
    max_block_ns: int = 1_000_000
    max_blocked: float = 0.01
    min_life_ns: int = 100_000_000

    def __post_init__(self):
        # plain ints and a float, whatever number types were passed (frozen:
        # set through object's own __setattr__)
        for name in ("start_ns", "max_block_ns", "min_life_ns"):
            object.__setattr__(self, name, check_int(f"OpenRule {name}", getattr(self, name),
                                                     0, 2**62))
        object.__setattr__(self, "max_blocked", check_number("OpenRule max_blocked",
                                                             self.max_blocked, 0, 1))

    def _opens(self, start_ns, end_ns, blocks):
        """Whether a task alive from start_ns to end_ns with these blocks
        (rows of trace.blocks) is open."""
        life = end_ns - start_ns
        if life < self.min_life_ns:
            return False
        later = blocks[blocks["end_ns"] > start_ns + self.start_ns]
        lengths = later["end_ns"] - later["start_ns"]
        return (not len(lengths) or int(lengths.max()) <= self.max_block_ns) and \
            int(lengths.sum()) <= self.max_blocked * life
