"""Scorer results are one typed shape: what ``score --json`` prints fits ``chainmark schema results``,
and a profile that hands back a malformed row or a coerced value is refused where it is built."""

from __future__ import annotations

import json

import jsonschema  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from evaluation.benchmarks.base import ScoreContext, result
from evaluation.scoring.results import RESULTS_SCHEMA_VERSION, ScoreResult
from tests.support.scoring_runs import PROFILES, write_run
from tui.cli import cli


def results_schema() -> dict:
    out = CliRunner().invoke(cli, ["schema", "results"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    jsonschema.Draft202012Validator.check_schema(doc)
    assert doc["x-chainmark-schema-version"] == RESULTS_SCHEMA_VERSION
    return doc


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_score_json_fits_the_published_schema(engine, db_path, profile) -> None:
    run_id = write_run(engine, profile, 12)
    out = CliRunner().invoke(
        cli, ["--db", str(db_path), "score", str(run_id), "--json", "--per-item", "--no-write", "--embedder", "hashing"]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    validator = jsonschema.Draft202012Validator(results_schema())
    assert not [e.message for e in validator.iter_errors(doc)]
    assert doc["run_id"] == run_id and doc["profile"] == profile and len(doc["per_item"]) == 12
    assert all(isinstance(row["trajectory_id"], int) for row in doc["per_item"])
    assert "outcomes" not in doc and isinstance(doc["checkpoint_outcomes"], int)
    # the schema refuses what the model refuses: a per-item row that names no trajectory
    broken = {**doc, "per_item": [{"task_id": 1}]}
    assert list(validator.iter_errors(broken))


def test_a_row_without_its_trajectory_is_refused_where_the_profile_builds_it() -> None:
    with pytest.raises(ValidationError, match="trajectory_id"):
        result("gta", ScoreContext(), {"AnsAcc": 50.0}, per_item=[{"task_id": 3, "answer_correct": True}])


def test_values_are_kept_exactly_not_coerced() -> None:
    res = result("gta", ScoreContext(), {"count": 3, "rate": 0.5, "flag": True, "none": None})
    assert [type(v) for v in res.metrics.values()] == [int, float, bool, type(None)]
    with pytest.raises(ValidationError):
        result("gta", ScoreContext(), {"AnsAcc": "50"})  # a number as text is a bug in the profile
    with pytest.raises(ValidationError):
        ScoreResult(profile="gta", mode="lenient", run_mode="react", metrics={})  # type: ignore[arg-type]


def test_runner_fields_are_validated_on_assignment() -> None:
    res = result("gta", ScoreContext(), {})
    res.add_notes("a", "b")
    assert res.notes == ["a", "b"]
    with pytest.raises(ValidationError):
        res.pending_by_judge = {"judge": "many"}  # type: ignore[dict-item]
    assert res.public()["checkpoint_outcomes"] == 0 and "per_item" not in res.public()
