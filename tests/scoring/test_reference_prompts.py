"""``chainmark judges import-prompts``: reference judge prompts read from a checkout, used by faithful runs.

The checkout here is our own fixture laid out like VTC-Bench's (same file, class, function and variable
names); its prompt text is ours.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotation import tasks as authoring
from evaluation.judges.reference_prompts import PromptImportError, PromptSource, read_prompt, to_template_text
from evaluation.judges.runner import judge_run
from evaluation.scoring.runner import score_run
from store import session_scope
from store.models import ModelEndpoint
from tests.scoring.builders import answer, stored_run, stored_trajectory
from tests.support.scripted_openai import text
from tests.support.must import must

SCORER = "eval/eval/VLMEvalKit/vlmeval/dataset/image_vqa.py"
FIXTURE = """raise SystemExit("this file is read, never run")


class VTCBenchDataset:
    def evaluate(self, eval_file, **judge_kwargs):
        def VTCBench_auxeval(model, line):
            if has_options:
                tmpl = (
                    "Our letter extractor. Question: {}\\n"
                    "Choices: {}\\n"
                    "Reply: {}\\n"
                )
            else:
                for i in range(5):
                    tmpl = (
                        "Our yes/no check, {{braces}} kept.\\n"
                        "Truth: {}\\n" + "Guess: {}\\n"
                    )
        return None
"""


def checkout(root: Path, body: str = FIXTURE, git: bool = True) -> Path:
    (root / SCORER).parent.mkdir(parents=True, exist_ok=True)
    (root / SCORER).write_text(body, encoding="utf-8")
    if git:
        for cmd in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "x"]):
            subprocess.run(["git", "-C", str(root), *cmd], check=True, capture_output=True)
    return root


def cli(db: Path, *args: str):
    from tui.cli import cli as main

    return CliRunner().invoke(main, ["--db", str(db), "--as", "tester", *args], catch_exceptions=False)


def test_prompts_are_read_by_file_and_variable_without_running_the_file(tmp_path: Path) -> None:
    root = checkout(tmp_path / "ref", git=False)
    src = PromptSource(
        "vtc-open-judge",
        SCORER,
        "VTCBenchDataset.evaluate.VTCBench_auxeval",
        "tmpl",
        ("answer", "prediction"),
        occurrence=1,
    )
    raw = read_prompt(root, src)
    assert raw.startswith("Our yes/no check") and raw.endswith("Guess: {}\n")
    assert to_template_text(raw, src) == "Our yes/no check, {braces} kept.\nTruth: {{answer}}\nGuess: {{prediction}}\n"
    with pytest.raises(PromptImportError, match="0 assignment"):  # nested functions are their own scope
        read_prompt(root, PromptSource("x", SCORER, "VTCBenchDataset.evaluate", "tmpl", ()))
    with pytest.raises(PromptImportError, match="no class or function 'Nope'"):
        read_prompt(root, PromptSource("x", SCORER, "Nope", "tmpl", ()))


def test_import_prompts_then_faithful_judging_uses_them(
    tmp_path: Path, engine, blobs, scripted_openai, monkeypatch
) -> None:
    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "k")
    db = Path(str(engine.url.database))
    root = checkout(tmp_path / "ref")
    commit = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    out = cli(db, "judges", "import-prompts", "vtc", str(root))
    assert out.exit_code == 0, out.output
    assert f"vtc-open-judge.vref1: imported from {SCORER}" in out.output and commit[:12] in out.output
    assert "unchanged" in cli(db, "judges", "import-prompts", "vtc", str(root)).output

    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "vtc-demo", "vtc")
        s.add(ModelEndpoint(name="j", base_url=scripted_openai.base_url, model="m", api_key_env="CM_TEST_JUDGE_KEY"))
        task = authoring.create_task(
            s, "vtc-demo", "What is written?", answer_spec={"kind": "exact", "value": "12"}, category="ocr"
        )
        stored_trajectory(s, run, must(task.id), [answer("twelve")])
        run_id = run.id
    scripted_openai.push(text("yes"))
    stats = judge_run(engine, blobs, must(run_id), "vtc-open-judge", "j")
    assert "vtc-open-judge.vref1" in stats["template"]
    request = scripted_openai.chat_requests()[0]
    assert request.messages[-1]["content"][-1]["text"] == "Our yes/no check, {braces} kept.\nTruth: 12\nGuess: twelve\n"
    assert request.json["max_tokens"] == 128
    res = score_run(engine, must(run_id), write=False)
    assert res.metrics["APR"] == 100.0
    assert res.judge_prompts["vtc-open-judge"].startswith("vtc-open-judge.vref1 (reference ")
    assert commit[:12] in res.judge_prompts["vtc-open-judge"]
    fixed = score_run(engine, must(run_id), mode="fixed", write=False)
    assert "chainmark's own prompt" in fixed.judge_prompts["vtc-open-judge"]
    assert fixed.pending_judgements == 1  # its own template: a different question, not asked yet
    report = cli(db, "report", str(run_id))
    assert "Judge prompts:" in report.output and "vtc-open-judge.vref1" in report.output

    (root / SCORER).write_text(FIXTURE.replace("Truth:", "Gold:"), encoding="utf-8")
    out = cli(db, "judges", "import-prompts", "vtc", str(root), "--json")
    versions = {d["judge"]: d for d in json.loads(out.output)}
    assert versions["vtc-open-judge"]["version"] == "ref2" and versions["vtc-open-judge"]["source"]["dirty"] is True


def test_import_prompts_errors_are_clean(tmp_path: Path, engine) -> None:
    db = Path(str(engine.url.database))
    root = checkout(tmp_path / "ref", FIXTURE.replace("tmpl = (", "other = (", 1), git=False)
    out = cli(db, "judges", "import-prompts", "vtc", str(root))
    assert out.exit_code == 1 and "tmpl#2 not found (1 assignment(s)" in out.output
    out = cli(db, "judges", "import-prompts", "vtc", str(tmp_path / "missing"))
    assert out.exit_code == 1 and "not a directory" in out.output
    out = cli(db, "judges", "import-prompts", "atp", str(root))
    assert out.exit_code == 1 and "names no reference prompts" in out.output


def test_isg_and_agentic_mme_prompts(tmp_path: Path, engine) -> None:
    from evaluation.judges.reference_prompts import template_for
    from evaluation.judges.templates import render
    from store import read_only

    db = Path(str(engine.url.database))
    isg = tmp_path / "isg" / "ISG_eval" / "get_judge_prompt.py"
    isg.parent.mkdir(parents=True)
    isg.write_text('_OTHER = "x"\n_DSG_PROMPT = """Our image check.\nReply {{"Judge": "Yes"}}\nQ: {question}\n"""\n')
    amme = tmp_path / "amme" / "evaluation" / "eval_runs_search.py"
    amme.parent.mkdir(parents=True)
    amme.write_text(
        "def run_visual_judge(client, judge_model, question, image_path):\n"
        "    sys_prompt = 'Our visual system prompt.'\n    return None\n"
    )
    assert cli(db, "judges", "import-prompts", "isg", str(tmp_path / "isg")).exit_code == 0
    assert cli(db, "judges", "import-prompts", "agentic-mme", str(tmp_path / "amme")).exit_code == 0
    with session_scope(read_only(engine)) as s:
        msgs = render(template_for(s, "isg-image"), {"question": "Is it blue?"}, ["img"])
        assert msgs == [
            {
                "role": "user",
                "content": [
                    {"type": "image", "ref": "img"},
                    {"type": "text", "text": 'Our image check.\nReply {"Judge": "Yes"}\nQ: Is it blue?\n'},
                ],
            }
        ]
        msgs = render(template_for(s, "amme-visual"), {"question": "Is it blue?"}, ["img"])
        assert msgs[0] == {"role": "system", "content": "Our visual system prompt."}
        assert msgs[1]["content"] == [{"type": "image", "ref": "img"}, {"type": "text", "text": "Is it blue?"}]
        assert template_for(s, "amme-visual", "fixed").version == "1"  # fixed mode keeps chainmark's own
