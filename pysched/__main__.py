"""Command line: python -m pysched demo [--seconds S] [--preset P ...] [--seed N]."""
import argparse
import sys

from . import demo
from .registry import presets


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m pysched")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="interactive tasks beside CPU hogs on every preset")
    d.add_argument("--seconds", type=float, default=20.0)
    d.add_argument("--preset", action="append", choices=presets())
    d.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.cmd == "demo":
        chosen = args.preset or presets()
        return demo.main(chosen, args.seconds, args.seed)
    return 2


if __name__ == "__main__":
    sys.exit(main())
