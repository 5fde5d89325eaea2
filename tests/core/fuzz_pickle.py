"""The pickle mutator: snapshots of random states (the state fuzzer's
episodes, cut short), damaged and then resealed with a matching checksum,
as anyone can.  Each must be refused with "the snapshot is damaged: ..." (or
as not a snapshot), or load as a state that the invariant checks pass,
that runs, that the readers and exporters read, and whose own snapshot
loads again.  Anything else -- another exception, a failed check, a crash
-- is a finding: its seed and traceback are printed, exit status 1.

    python tests/core/fuzz_pickle.py --minutes 10 --seed 1

tests/core/test_fuzz_core.py runs a few hundred mutations in every test run."""
import argparse
import functools
import os
import random
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pysched as ps  # noqa: E402
from fuzz_state import Episode  # noqa: E402

Sim = ps.simulator._core.Sim
HEADER = 8 + 8 + 8 + 64 + 64  # magic, format, layout hash, preset name, version
VALUES = [0, 1, -1, 2, 7, 64, 1000, 2**31 - 1, -2**31, 2**62, 2**63 - 1, -2**63]


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for x in data:
        h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def a_state(seed):
    """A random simulator of the built-in presets after a few actions (a
    Python policy's snapshot needs its instance beside it: not mutated here)."""
    e = Episode(seed)
    while not isinstance(e.preset, str):
        seed += 1 << 40
        e = Episode(seed)
    for _ in range(e.r.randint(2, 12)):
        e.action()
    return e.sims[0]


def mutate(raw, r):
    """raw with 1-4 damages past the header: a byte flipped or set, an
    aligned 4- or 8-byte field set to an extreme, a span zeroed; resealed."""
    b = bytearray(raw[:-8])
    for _ in range(r.randint(1, 4)):
        how = r.randrange(4)
        i = r.randrange(HEADER, len(b))
        if how == 0:
            b[i] ^= 1 << r.randrange(8)
        elif how == 1:
            b[i] = r.choice([0, 0x7F, 0x80, 0xFF])
        elif how == 2:
            width = r.choice([4, 8])
            i -= i % width
            v = r.choice(VALUES) & ((1 << 8 * width) - 1)
            b[i:i + width] = v.to_bytes(width, "little")
        else:
            b[i:i + r.randint(1, 64)] = bytes(len(b[i:i + r.randint(1, 64)]))
    return bytes(b) + fnv1a64(b).to_bytes(8, "little")


def read_table(core):
    """stats()'s two calls: the table's shape, then its rows into a buffer
    of that size."""
    names, n, width = core.table_shape()
    core.table_fill(bytearray(n * (8 * len(names) + 8 + 4 * width)))


def exercise(core):
    """What a user does with a loaded state: check, read, run, check, save."""
    core.check()
    for read in (functools.partial(read_table, core), core.events, core.latencies, core.periodic, core.samples,
                 core.counters):
        try:
            read()
        except ps.StateError:
            pass  # a log that is off
    try:
        core.run_until(core.now_ns + 20_000_000)
    except ps.StateError:
        pass  # a crafted state may run into a livelock, a full buffer or the task limit
    core.check()
    Sim.restore(bytes(core.snapshot()))


def one(seed, mutations):
    r = random.Random(seed)
    raw = bytes(a_state(seed)._core.snapshot())
    loaded = 0
    for _ in range(mutations):
        blob = mutate(raw, r)
        try:
            core = Sim.restore(blob)
        except ValueError as e:
            if "snapshot" not in str(e):
                raise
            continue
        loaded += 1
        exercise(core)
    return loaded


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mutations", type=int, default=50, help="mutations of each state")
    ap.add_argument("-v", action="store_true",
                    help="print each state's seed before it runs (a sanitizer's abort ends the "
                         "process before a finding is printed)")
    a = ap.parse_args(argv)
    end = time.monotonic() + 60 * a.minutes
    n = loaded = 0
    while time.monotonic() < end:
        seed = a.seed * 10**9 + n
        if a.v:
            print(f"state {seed}: one({seed}, {a.mutations})", file=sys.stderr, flush=True)
        try:
            loaded += one(seed, a.mutations)
        except Exception:
            print(f"finding at state {seed} (one({seed}, {a.mutations}) reproduces it):")
            traceback.print_exc()
            return 1
        n += 1
    print(f"{n} states x {a.mutations} mutations in {a.minutes} min: {loaded} loaded and ran, "
          f"the rest refused; no finding")
    return 0


if __name__ == "__main__":
    sys.exit(main())
