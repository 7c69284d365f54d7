"""The import-cycle check (``.ci/import_cycles.py``): it finds a cycle where there is one, and the
project's packages have none beyond the ones it allows by name."""

from __future__ import annotations

import runpy
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
CHECK = runpy.run_path(str(ROOT / ".ci" / "import_cycles.py"))


def test_components_finds_each_cycle_and_nothing_else() -> None:
    edges = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["f"], "f": ["e"], "g": ["g2"], "g2": []}
    found = sorted(sorted(c) for c in CHECK["_components"](edges, edges) if len(c) > 1)
    assert found == [["a", "b", "c"], ["e", "f"]]


def test_no_package_has_an_import_cycle_it_does_not_allow() -> None:
    graph = grimp.build_graph(*CHECK["PACKAGES"], exclude_type_checking_imports=True, cache_dir=None)
    found = [c for p in CHECK["PACKAGES"] for c in CHECK["cycles"](graph, p)]
    assert [c for c in found if frozenset(c) not in CHECK["ALLOWED"]] == []
    assert found, "the allowed launcher/monitor cycle is still there: remove it from ALLOWED once broken"
