"""The state fuzzer and the pickle mutator (tests/core/fuzz_state.py,
tests/core/fuzz_pickle.py) stay working: a few of their episodes, seeded, in
every test run.  Each episode asserts on its own (twins identical, only
the documented errors, loaded snapshots consistent)."""
import pytest

import fuzz_pickle
import fuzz_state


@pytest.mark.parametrize("seed", range(40))
def test_a_state_fuzzer_episode_raises_only_documented_errors_and_twins_stay_equal(seed):
    e = fuzz_state.episode(seed, steps=30)
    assert e.calls > e.refused  # most calls are right ones, and they went through


@pytest.mark.parametrize("seed", range(6))
def test_damaged_and_resealed_snapshots_are_refused_or_load_consistent(seed):
    loaded = fuzz_pickle.one(seed, mutations=40)
    assert loaded < 40  # most damage is caught; what loads ran consistently


@pytest.mark.slow
def test_the_fuzzers_report_no_finding_over_a_short_run(capsys):
    assert fuzz_state.main(["--minutes", "0.02", "--seed", "7"]) == 0
    assert fuzz_pickle.main(["--minutes", "0.02", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    assert "no finding" in out and "finding in" not in out
