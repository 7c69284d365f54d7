"""Fixed mode names what it corrected (issue 15, item 11): every correction a profile can apply is declared
in its ``CORRECTIONS``, appears in the score output when used, and is listed in the README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evaluation.benchmarks import all_corrections
from evaluation.benchmarks.base import ScoreContext
from evaluation.benchmarks.gta import PROFILE as GTA
from tests.scoring.test_gta import step_items

ROOT = Path(__file__).resolve().parents[2]


def test_every_correction_used_in_a_profile_is_declared_there() -> None:
    declared = all_corrections()
    for path in (ROOT / "evaluation" / "benchmarks").glob("*.py"):
        used = set(re.findall(r"""\.correct\(\s*["']([\w-]+)["']""", path.read_text(encoding="utf-8")))
        module = path.stem
        names = {n for profile, corr in declared.items() if profile.replace("-", "_") == module for n in corr}
        assert used <= names, f"{path.name} uses undeclared corrections {sorted(used - names)}"


def test_the_docs_list_every_correction() -> None:
    pages = [ROOT / "docs" / "guide" / "evaluator.md", ROOT / "docs" / "design" / "conformance.md"]
    docs = "".join(page.read_text(encoding="utf-8") for page in pages)
    missing = [n for corr in all_corrections().values() for n in corr if f"`{n}`" not in docs]
    assert not missing, f"neither the evaluator guide nor the conformance notes list {missing}"


def test_faithful_output_has_no_corrections_and_fixed_lists_what_it_used() -> None:
    assert GTA.score(step_items(), ScoreContext(mode="faithful", run_mode="step")).corrections == []
    fixed = GTA.score(step_items(), ScoreContext(mode="fixed", run_mode="step")).corrections
    assert fixed == sorted(fixed) and "gta-path-normalise" in fixed


@pytest.mark.parametrize("mode", ["faithful", "fixed"])
def test_correct_is_true_only_in_fixed_mode(mode: str) -> None:
    ctx = ScoreContext(mode=mode)
    assert ctx.correct("gta-path-normalise") is (mode == "fixed")
    assert ctx.corrections == ({"gta-path-normalise"} if mode == "fixed" else set())
