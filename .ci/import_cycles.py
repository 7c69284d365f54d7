"""No import cycle inside a package: fails when modules of one top-level package (store, annotation,
evaluation, tui) import each other round in a circle, and names the modules of each cycle.

Every import statement counts, a function's lazy ``import`` too: a lazy import only hides a cycle
from the order modules load in, not from the design (the two modules still cannot be read, tested
or changed apart; the child process importing ``runner._run_one`` was such a cycle). Imports under
``if TYPE_CHECKING:`` do not count: they name a type for the checker and never run.

    .venv/bin/python .ci/import_cycles.py
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import grimp

PACKAGES = ("store", "annotation", "evaluation", "tui")

# Cycles known and allowed, each with why; a cycle that grows past its entry fails the check.
ALLOWED: dict[frozenset[str], str] = {
    frozenset({"tui.screens.runs.launcher", "tui.screens.runs.monitor"}): (
        "the monitor opens the launch form for the selected run's benchmark, and the form, once a run"
        " starts, hands it to the monitor below it or opens one following it; to break with a"
        " navigation registry the app installs (screens by name, with arguments)"
    ),
}


def cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """The strongly connected components of more than one module among ``package``'s modules."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    inside = set(modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & inside) for m in modules}
    return [sorted(c) for c in _components(modules, edges) if len(c) > 1]


def _components(nodes: Iterable[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (a deep package would overflow Python's recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    found.append(_pop_component(stack, on_stack, node))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(edges[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _pop_component(stack: list[str], on_stack: set[str], root: str) -> list[str]:
    component = []
    while True:
        member = stack.pop()
        on_stack.discard(member)
        component.append(member)
        if member == root:
            return component


def main() -> int:
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True, cache_dir=None)
    failed = False
    for package in PACKAGES:
        for cycle in cycles(graph, package):
            if frozenset(cycle) in ALLOWED:
                continue
            failed = True
            print(f"import cycle in {package} ({len(cycle)} modules): {', '.join(cycle)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
