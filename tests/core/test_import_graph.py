"""The package's modules import one another without cycles: every import
(lazy ones inside functions included) is read from the installed sources,
an import of a subpackage's module is an import of the subpackage too (its
__init__ runs first), and an import of the package itself (`from . import
_core`), or of a package the importer is inside, is no edge."""
import ast
import collections
import pathlib

import pysched

ROOT = pathlib.Path(pysched.__file__).parent


def import_graph():
    mods = {}
    for p in ROOT.rglob("*.py"):
        name = ".".join(("pysched",) + p.relative_to(ROOT).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = p
    graph = collections.defaultdict(set)
    for name, p in mods.items():
        pkg = name if p.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                parts = pkg.split(".")
                target = ".".join(parts[:len(parts) - node.level + 1] + [node.module or ""]).strip(".")
                for a in node.names:
                    dst = f"{target}.{a.name}" if f"{target}.{a.name}" in mods else target
                    graph[name] |= {d for d in with_parents(dst) if d in mods}
            elif isinstance(node, ast.Import):
                graph[name] |= {d for a in node.names for d in with_parents(a.name) if d in mods}
        graph[name] -= {"pysched", name} | set(with_parents(name))
    return mods, graph


def with_parents(name):
    """name and the packages above it, which an import of it runs first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def cycles(mods, graph):
    found, color = [], {}

    def visit(u, stack):
        color[u] = "open"
        stack.append(u)
        for v in sorted(graph[u]):
            if color.get(v) == "open":
                found.append(stack[stack.index(v):] + [v])
            elif v not in color:
                visit(v, stack)
        stack.pop()
        color[u] = "done"

    for m in sorted(mods):
        if m not in color:
            visit(m, [])
    return found


def test_no_module_of_the_package_imports_itself_back_through_others():
    mods, graph = import_graph()
    assert len(mods) > 40 and sum(map(len, graph.values())) > 100  # the scan saw the package
    assert cycles(mods, graph) == []


def test_the_scan_finds_a_cycle_where_there_is_one():
    mods = {"pysched.a": None, "pysched.b": None}
    graph = collections.defaultdict(set, {"pysched.a": {"pysched.b"}, "pysched.b": {"pysched.a"}})
    assert cycles(mods, graph) == [["pysched.a", "pysched.b", "pysched.a"]]


def test_an_import_of_a_subpackages_module_runs_the_subpackage_first():
    # simulator.py imports pysched.results.frames: results/__init__.py runs
    # first, so it must not import the simulator back
    _, graph = import_graph()
    assert {"pysched.results", "pysched.results.frames"} <= graph["pysched.simulator"]
    assert "pysched.analysis" not in graph["pysched.analysis.stability"]  # its own package
