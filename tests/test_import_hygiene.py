"""The domain packages must never pull in Textual: they run headless, in workers and in CI scripts.

A static import graph can't see deferred imports, so each package is imported for real in a fresh
interpreter and its sys.modules inspected.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.must import must

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("textual", "textual_image", "textual_plotext", "textual_serve")


def _loaded_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


@pytest.mark.parametrize("package", ["store", "annotation", "evaluation"])
def test_domain_package_does_not_load_textual(package):
    import pkgutil
    import importlib

    mod = importlib.import_module(package)
    submodules = [
        m.name for m in pkgutil.walk_packages(mod.__path__, prefix=f"{package}.") if ".migrations" not in m.name
    ]
    code = "\n".join(f"import {name}" for name in [package, *submodules])
    loaded = _loaded_after(code)
    assert not loaded & set(FORBIDDEN), f"{package} pulled in {sorted(loaded & set(FORBIDDEN))}"
    assert "tui" not in loaded
    # Layers: annotation and evaluation sit side by side and never import each other.
    sibling = {"annotation": "evaluation", "evaluation": "annotation"}.get(package)
    assert sibling is None or sibling not in loaded, f"{package} imports {sibling}"


def test_cli_without_tui_does_not_load_textual():
    loaded = _loaded_after("import tui.cli")
    assert not loaded & set(FORBIDDEN)


def test_top_level_packages_are_ours():
    # Old unrelated PyPI distributions share these names; make sure ours are imported.
    import annotation
    import evaluation
    import store
    import tui

    for pkg in (store, annotation, evaluation, tui):
        assert Path(must(pkg.__file__)).resolve().parent.parent == ROOT
