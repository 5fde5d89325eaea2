"""One run four ways: whole, in chunks of 0.1 s, stepped tick by tick and
on the reference path (every fast path off), for the tests that claim a
result does not depend on how a run was cut."""


def watched(sim):
    """What sim.invariants() and stats() say, comparable with == (the tasks
    as bytes: the lag columns are NaN under a preset that is not fair, and
    NaN != NaN in a list)."""
    inv = sim.invariants()
    return repr(inv), inv.tasks.tobytes(), sim.stats().tolist()


def four_ways(build, seconds):
    """(whole, chunks, stepped, reference): build(**kw) made four times and
    each run `seconds` its way."""
    whole = build()
    whole.run(seconds=seconds)
    chunks = build()
    for _ in range(round(seconds * 10)):
        chunks.run(seconds=0.1)
    stepped = build()
    for _ in range(round(seconds * stepped.hz)):
        stepped.step(1)
    reference = build(reference=True)
    reference.run(seconds=seconds)
    return whole, chunks, stepped, reference
