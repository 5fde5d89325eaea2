"""The notebooks run from a fresh kernel, in their quick mode, without an
error: what a reader executes is what CI executes."""
import os

import pytest

from repo_paths import ROOT

nbformat = pytest.importorskip("nbformat", reason="the test extra installs nbformat")
# each notebook runs a kernel of its own: seconds apiece
pytestmark = pytest.mark.slow

nbclient = pytest.importorskip("nbclient", reason="the test extra installs nbclient")

NOTEBOOKS = sorted(p for d in ("docs", "experiments") for p in (ROOT / d).rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts)


def test_there_are_notebooks_to_run():
    assert any(p.name == "tutorial_python_policy.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_the_notebook_runs_in_quick_mode(path, tmp_path, monkeypatch):
    monkeypatch.setenv("PYSCHED_QUICK", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    # run where the reader would: files the notebook writes go to a scratch dir
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()   # raises CellExecutionError naming the cell that failed
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert outputs, "the notebook printed nothing"
