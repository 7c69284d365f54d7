"""A report's tables are titled by the benchmark the runs are of (a benchmark of your own is not
"chainmark"), with the scoring profile where it adds something; runs of two benchmarks of one profile
get a set of tables each."""

from __future__ import annotations

import re

from evaluation.scoring.html_report import to_html
from evaluation.scoring.report import to_csv, to_markdown
from evaluation.scoring.results import ScoreResult, Usage


def scored(run_id: int, benchmark: str, profile: str, value: float) -> ScoreResult:
    return ScoreResult(
        profile=profile,
        mode="faithful",
        run_mode="atomic",
        metrics={"AnswerAcc": value},
        by_category={"receipts": {"AnswerAcc": value}},
        usage=Usage(tool_adoption={"OCR": 50.0}, calls_histogram={"1": 2}),
        run_id=run_id,
        benchmark=benchmark,
        model="m",
    )


def titles_md(text: str) -> list[str]:
    return re.findall(r"^### (.*)$", text, flags=re.M)


def test_a_native_benchmark_s_tables_say_its_name_in_markdown_csv_and_html() -> None:
    results = [scored(1, "receipts-v1", "chainmark", 80.0)]
    assert titles_md(to_markdown(results)) == [
        "receipts-v1 (chainmark): headline metrics",
        "receipts-v1 (chainmark): AnswerAcc by category",
        "receipts-v1 (chainmark): tool adoption (% of tasks using the tool at least once)",
        "receipts-v1 (chainmark): tool calls per task (number of tasks)",
    ]
    assert "# receipts-v1 (chainmark): headline metrics" in to_csv(results)
    page = to_html(results)
    assert "<title>chainmark report: receipts-v1 (chainmark) · runs 1</title>" in page
    assert "<h2>receipts-v1 (chainmark): headline metrics</h2>" in page
    assert "<figcaption>receipts-v1 (chainmark): tool adoption (% of tasks)</figcaption>" in page
    assert "<h2>chainmark:" not in page


def test_two_benchmarks_of_one_profile_get_a_set_of_tables_each() -> None:
    results = [
        scored(1, "receipts-v1", "chainmark", 80.0),
        scored(2, "menus", "chainmark", 40.0),
        scored(3, "gta", "gta", 1.0),
    ]
    md = to_markdown(results)
    headlines = [t for t in titles_md(md) if t.endswith("headline metrics")]
    assert headlines == [
        "receipts-v1 (chainmark): headline metrics",
        "menus (chainmark): headline metrics",
        "gta: headline metrics",  # a benchmark named after its profile is titled once
    ]
    receipts = md.split("### receipts-v1 (chainmark): headline metrics")[1].split("###")[0]
    assert "m (run 1)" in receipts and "m (run 2)" not in receipts
