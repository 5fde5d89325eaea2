"""Linux 2.4.20's goodness scheduler written in Python.

The policy lives in the package, src/pysched/policy/examples/linux24.py, so that the
tests (tests/policies/api/test_python_linux24.py, which compare it tick for tick with the
built-in C preset linux-2.4.20) and the benchmarks import it from the
installed package: an sdist ships tests/ but not experiments/.  This file
re-exports it beside the other example policies and runs a small
comparison.

    python experiments/policies/linux24.py
"""
import pysched as ps
from pysched.policy.examples.linux24 import Linux24, nice_to_ticks, tick_scale  # noqa: F401

__all__ = ["Linux24"]


if __name__ == "__main__":
    for policy in ("linux-2.4.20", Linux24):
        sim = ps.Simulator(policy, seed=1)
        for nice in (0, 0, 10):
            sim.spawn(ps.programs.cpu_hog(), nice=nice, name=f"hog{nice:+d}")
        sim.spawn(ps.programs.interactive(2, 30), name="interactive")
        sim.run(seconds=10)
        st = sim.stats()
        print(f"{sim.preset}:")
        print(st[["pid", "name", "nice", "cpu_ticks", "nr_switches", "time_slice"]])
