"""Every example in the README and the docs runs.  Each page's ```python
blocks are executed in order in one namespace, as a reader pastes them
into one session, in a scratch directory (a block may write files);
matplotlib draws off-screen.  A block that must not run is fenced as
```text (output) or ```console (shell)."""
import os
import re

import pytest

from repo_paths import ROOT

PAGES = sorted([ROOT / "README.md"] + list((ROOT / "docs").rglob("*.md")))
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def blocks(page):
    """(line number, code) of each python block of page."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in FENCE.finditer(text)]


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_block_of_the_page_runs_in_order(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace = {"__name__": "__docs__"}
    for line, code in blocks(page):
        try:
            exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
        except Exception as e:
            pytest.fail(f"{page.relative_to(ROOT)}, the block at line {line}: "
                        f"{type(e).__name__}: {e}")
