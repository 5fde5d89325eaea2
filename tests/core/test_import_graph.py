"""The package's modules import one another without cycles: every import
(lazy ones inside functions included) is read from the installed sources,
and an import of the package itself (`from . import _core`) is no edge."""
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
                    if dst != "pysched" and dst in mods:
                        graph[name].add(dst)
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in mods and a.name != "pysched"}
    return mods, graph


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
