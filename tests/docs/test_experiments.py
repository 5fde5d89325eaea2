"""The experiments' figures in the docs (docs/experiments/) are what their
defaults print, and every experiment runs in its quick mode and documents
its defaults."""
import re
import subprocess
import sys

import pytest

from repo_paths import ROOT

EXPERIMENTS = ROOT / "experiments"
PAGES = ROOT / "docs" / "experiments"

pytestmark = pytest.mark.skipif(not EXPERIMENTS.is_dir(),
                                reason="the sdist ships no experiments/ (a clone does)")


def page(name):
    """The text of the experiments' page `name` of the docs."""
    return (PAGES / name).read_text()


def run(script, *args):
    out = subprocess.run([sys.executable, str(EXPERIMENTS / script), *args], capture_output=True,
                         text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout


def numbers(text):
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text)]


@pytest.mark.parametrize("script", sorted(p.name for p in EXPERIMENTS.glob("*.py")
                                          if p.name != "readme_plots.py"))
@pytest.mark.slow
def test_each_experiment_runs_quick_and_shows_its_defaults(script):
    assert "(default:" in run(script, "--help")
    assert run(script, "--quick").strip()


def test_the_figures_of_the_waker_bonus_article_are_its_defaults():
    out = run("article_waker_bonus.py")
    claim = page("waker-bonus.md")
    # "the server gets 30.9 % of the CPU instead of 21.0 %, ... 57 % more requests,
    # ... from 365 ms to 5.5 ms; ... 75.0 % → 63.8 % ... 9.7 → 2.2 ms ... 2.6 s → 0.49 s"
    gets, instead = map(float, re.search(r"gets ([\d.]+) % of the CPU\s+instead of ([\d.]+) %",
                                         claim).groups())
    more = float(re.search(r"answers (\d+) % more", claim).group(1))
    p99 = tuple(map(float, re.search(r"falls from ([\d.]+) ms to ([\d.]+) ms", claim).groups()))
    compile_ = tuple(map(float, re.search(r"([\d.]+) % →\s+([\d.]+) %\s+of the CPU", claim).groups()))
    mean = tuple(map(float, re.search(r"latency falls ([\d.]+) →\s+([\d.]+)\s+ms", claim).groups()))
    worst = tuple(map(float, re.search(r"worst case ([\d.]+) s → ([\d.]+) s", claim).groups()))

    line = next(l for l in out.splitlines() if l.startswith("2.5.65 - backboost -> linux-2.5.65"))
    x_cpu = numbers(re.search(r"X CPU (.*?), replies", line).group(1))
    replies = numbers(re.search(r"replies (.*?);", line).group(1))
    lat_p99 = numbers(re.search(r"p99 (.*?) ms", line).group(1))
    comp = numbers(re.search(r"compile CPU (.*)$", line).group(1))
    assert (x_cpu[1], x_cpu[0]) == (gets, instead)
    assert round(100 * (replies[1] / replies[0] - 1)) == more
    assert round(lat_p99[0]) == p99[0] and lat_p99[1] == p99[1]
    assert tuple(c for c in comp if c > 0)[:2] == compile_

    line = next(l for l in out.splitlines() if l.startswith("linux-2.5.64 -> linux-2.5.65"))
    m = numbers(re.search(r"latency mean (.*?) ms", line).group(1))
    mx = numbers(re.search(r"max (.*?) ms", line).group(1))
    assert (round(m[0], 1), round(m[1], 1)) == mean
    assert (round(mx[0] / 1000, 1), round(mx[1] / 1000, 2)) == worst


def test_the_figures_of_prio_avg_balancing_are_its_defaults():
    out = run("houston_smp_balance.py")
    lo, hi, llo, lhi = map(float, re.search(
        r"within ([\d.]+)-([\d.]+) points of\s+the whole-machine equilibrium where length "
        r"balancing misses by ([\d.]+)-([\d.]+)", page("smp.md")).groups())
    err = {label: [numbers(l)[-2] for l in out.splitlines() if l.startswith(label)]
           for label in ("by length", "by prio_avg")}
    assert len(err["by prio_avg"]) == 4
    assert (min(err["by prio_avg"]), max(err["by prio_avg"])) == (lo, hi)
    assert (min(err["by length"]), max(err["by length"])) == (llo, lhi)


@pytest.mark.slow
def test_the_figures_of_the_stability_map_are_its_defaults():
    out = run("houston_stability.py")
    text = page("houston-stability.md")
    claim = text[text.index("8 x 8 points per pair"):]
    rows = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"^\| (-20 vs \+19|0 vs \+5|all) \| (\d+/\d+)[^|]*\| (\d+/\d+)[^|]*\| (\d+/\d+)", claim,
        re.M)}
    printed = {label: tuple(re.findall(r"\d+/\d+", line)) for line in out.splitlines()
               for label, key in (("-20 vs +19", "(-20, 19)"), ("0 vs +5", "(0, 5)"), ("all", "all"))
               if line.split() and line.strip().startswith(key)}
    assert len(rows) == 3 and rows == printed
    lo, hi = map(float, re.search(r"settling times \(simulated, where both settle\): ([\d.]+) s to "
                                  r"([\d.]+) s", out).groups())
    minutes = re.search(r"Settling times run from (\d+) s to (\d+) minutes", claim).groups()
    assert (round(lo), round(hi / 60)) == tuple(map(int, minutes))


@pytest.mark.slow
def test_the_figures_between_the_grid_lines_are_the_defaults_of_houston_offgrid():
    out = run("houston_offgrid.py")
    kind, share, worst = re.search(r"seed 1: kind (\d+/\d+) .*within 0.03 (\d+/\d+) .*worst ([\d.]+)",
                                   out).groups()
    row = re.search(r"^\| random, seed 1 \| (\d+/\d+)[^|]*\|[^|]*\|[^|]*\| (\d+/\d+)[^|]*\| ([\d.]+) \|",
                    page("houston-stability.md"), re.M).groups()
    assert row == (kind, share, worst)


@pytest.mark.slow
def test_the_figures_of_the_mixtures_are_the_defaults_of_houston_mixture():
    out = run("houston_mixture.py")
    printed = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"^(.*\(\d CPUs?\)): kind (\d+/\d+), shares within 0.03 (\d+/\d+), worst ([\d.]+);",
        out, re.M)}
    claimed = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"^\| (.*\(\d CPUs?\)) \| (\d+/\d+) \| (\d+/\d+) \| ([\d.]+) \|$",
        page("houston-stability.md"), re.M)}
    assert len(printed) == 3 and claimed == printed


@pytest.mark.slow
def test_the_figures_of_the_interbench_matrix_are_its_defaults():
    out = run("interbench_matrix.py")
    claim = page("interbench.md")
    rows = [r for r in re.findall(r"^\| (\w+) / (\w+) \| (.*) \|$", claim, re.M)
            if r[0] != "benchmark"]
    assert len(rows) >= 10
    lines = {tuple(l.split()[:2]): l.split()[2:] for l in out.splitlines() if len(l.split()) > 2}
    for bench, load, cells in rows:
        printed = lines[(bench, load)]
        step = 3 if bench == "Gaming" else 4
        for k, cell in enumerate(cells.split(" | ")):
            pct, worst = re.fullmatch(r"([\d.]+) % \(([\d.]+) ms\)", cell).groups()
            assert (pct, worst) == (printed[step * k + step - 1], printed[step * k + 1]), \
                (bench, load, k)
    runs, wall = re.search(r"\((\d+) runs of 30 s in ([\d.]+) s", claim).groups()
    assert re.search(rf"{runs} runs of 30 s", out)


@pytest.mark.slow
def test_the_tables_of_every_scheduler_side_by_side_are_what_the_experiment_prints():
    out = run("all_schedulers.py", "--markdown")
    section = page("all-schedulers.md")
    tables = [line for line in out.splitlines() if line.startswith("|")]
    assert len(tables) == 2 + 6 + 2 + 6
    for line in tables:
        assert line in section
