"""The typing ratchet: known mypy errors only ever fall, and new modules are checked strictly.

The strict flags are on for every module but the legacy ones listed in pyproject.toml, typed before the
flags existed; that list only shrinks. The baseline of known errors (.ci/mypy-baseline.txt) is compared
by .ci/mypy_baseline.py, which fails on an error it does not know and refuses to rewrite the baseline
with more errors than it holds.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LEGACY_AT_MOST = 81  # modules that were not strict-clean when the flags came in (may only go down)
KNOWN_ERRORS_AT_MOST = 400


def _legacy_modules() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for override in config["tool"]["mypy"]["overrides"]:
        if override.get("disallow_any_generics") is False:
            return [m for m in override["module"] if not m.endswith(".*")]
    raise AssertionError("no legacy override in pyproject.toml")


def test_the_legacy_list_only_shrinks_and_names_real_modules() -> None:
    legacy = _legacy_modules()
    assert len(legacy) <= LEGACY_AT_MOST, "new modules are strict: fix the module instead of listing it"
    assert len(set(legacy)) == len(legacy)
    for module in legacy:
        path = ROOT / (module.replace(".", "/") + ".py")
        package = ROOT / module.replace(".", "/") / "__init__.py"
        assert path.is_file() or package.is_file(), f"{module} no longer exists: delete it from the legacy list"


def test_the_baseline_holds_at_most_400_known_errors() -> None:
    lines = (ROOT / ".ci" / "mypy-baseline.txt").read_text().splitlines()
    assert len([line for line in lines if line and not line.startswith("#")]) <= KNOWN_ERRORS_AT_MOST


def _ratchet():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("mypy_baseline", ROOT / ".ci" / "mypy_baseline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_new_error_fails_the_check_and_the_baseline_refuses_to_grow(tmp_path: Path, monkeypatch) -> None:
    ratchet = _ratchet()
    known = "store/x.py: error: Bad thing  [misc]"
    monkeypatch.setattr(ratchet, "BASELINE", tmp_path / "baseline.txt")
    monkeypatch.setattr(ratchet, "ROOT", tmp_path)
    ratchet.write_baseline(ratchet.Counter([known]))
    two = ["store/x.py:3: error: Bad thing  [misc]", "store/y.py:9: error: Other thing  [misc]"]
    monkeypatch.setattr(ratchet, "run_mypy", lambda args: (1, two))
    assert ratchet.main([]) == 1
    assert ratchet.main(["--update"]) == 1
    assert ratchet.read_baseline() == ratchet.Counter([known])
    moved = ["store/z.py:3: error: Bad thing  [misc]"]  # the same error, moved with its code
    monkeypatch.setattr(ratchet, "run_mypy", lambda args: (1, moved))
    assert ratchet.main(["--update"]) == 0
    assert ratchet.read_baseline() == ratchet.Counter(["store/z.py: error: Bad thing  [misc]"])


def test_a_module_outside_the_legacy_list_is_checked_strictly(tmp_path: Path) -> None:
    """A new module with a bare generic fails mypy under the project's configuration."""
    new_module = tmp_path / "fresh_module.py"
    new_module.write_text("def f(x: list) -> int:\n    return len(x)\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--no-incremental",
            str(new_module),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert "Missing type arguments for generic type" in proc.stdout, proc.stdout
