"""Every golden output unchanged (tests/helpers/golden.py): the engine's
optimisations must leave every workload's stats, events, latencies,
series, periodic records and counters bit for bit as they were."""
import json
import subprocess
import sys

import golden


def test_the_catalogue_covers_every_preset_and_1_to_64_cpus():
    # the package's own presets: a fresh interpreter, before any test loads
    # a policy library or registers a Python policy
    builtin = subprocess.run([sys.executable, "-c", "import pysched; print(*pysched.presets())"],
                             capture_output=True, text=True, check=True).stdout.split()
    names = [c[0] for c in golden.cases()]
    assert set(golden.PRESETS) == set(builtin)
    assert {c[2] for c in golden.cases()} == {1, 2, 8, 64}
    assert len(names) == len(set(names)) == len(golden.PRESETS) * (len(golden.WORKLOADS) * 3 + 1)


def test_every_golden_hash_is_unchanged():
    expected = json.loads(golden.PATH.read_text())
    got = golden.compute()
    assert set(got) == set(expected)
    changed = {name: sorted(k for k in got[name] if got[name][k] != expected[name].get(k))
               for name in got if got[name] != expected[name]}
    assert not changed, f"outputs changed (regenerate with `python tests/helpers/golden.py --update` " \
                        f"only if meant): {changed}"
