"""docs/internals/layout.md names every module that moved, and where to,
as src/pysched/_moved.py answers to them."""
import re

from pysched import _moved

from repo_paths import ROOT

PAGE = (ROOT / "docs" / "internals" / "layout.md").read_text()
TABLE = PAGE[PAGE.index("## Names that moved in 0.2.0"):]


def rows():
    """(old names, new names) of each row of the table, with the short
    forms (`_sweep_local`, `.local`) written out."""
    for line in TABLE.splitlines():
        cells = line.split("|")[1:-1]
        if len(cells) != 2 or not cells[0].strip().startswith("`pysched"):
            continue
        old, new = (re.findall(r"`([\w.]+)`", c) for c in cells)
        old = [o if o.startswith("pysched") else f"pysched.{o}" for o in old]
        base = new[0].rsplit(".", 1)[0]
        new = [n if n.startswith("pysched") else base + n for n in new]
        yield old, new


def test_the_page_lists_every_moved_module_with_its_new_place():
    listed = {}
    for old, new in rows():
        for i, o in enumerate(old):
            listed[o] = new[min(i, len(new) - 1)]
    for name, target in {**_moved.MOVED, **_moved.CALLABLE}.items():
        assert listed.get(f"pysched.{name}") == f"pysched.{target}", name
