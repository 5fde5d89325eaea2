"""Where things are, for a test in any folder of tests/ (and for the scripts
here): ROOT is the checkout's top, or the unpacked sdist's, which ships
csrc/, docs/ and experiments/ beside tests/; DATA is tests/data/."""
import pathlib

TESTS = pathlib.Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
DATA = TESTS / "data"
