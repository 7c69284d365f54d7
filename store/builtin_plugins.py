"""chainmark's own benchmarks as plugins: the five seed benchmarks and the native ``chainmark`` format.

Declared in ``pyproject.toml`` under ``[project.entry-points."chainmark.benchmarks"]`` like a third
party's; ``store.plugins`` also adds them when the package metadata is missing. Strings only: each
layer imports what a path names when it needs it.
"""

from __future__ import annotations

from store.plugin_descriptor import BenchmarkPlugin

_TEMPLATES = "evaluation.judges:templates"

CHAINMARK = BenchmarkPlugin(
    name="chainmark",
    summary="chainmark's own format: benchmarks authored here, in the TUI or with `tasks add`",
    formats=("chainmark",),
    format_module="annotation.formats.chainmark",
    profile="evaluation.benchmarks.native:PROFILE",
    metrics=(
        "AnswerAcc",
        "AnswerSim",
        "RubricScore",
        "S",
        "V",
        "R",
        "ToolAcc",
        "ArgAcc",
        "ResultUse",
        "tool_f1",
        "chain_length_ratio",
    ),
    category_metric="AnswerAcc",
    judge_templates=_TEMPLATES,
    demo="annotation.demo.build:fill_chainmark",
    demo_description="a team's own benchmark: receipts, shapes and charts, answers checked by value, "
    "checkpoints and an authored judge rubric",
    demo_tool_set="gta",
    demo_rubric="annotation.demo:rubrics/chainmark.md",
    guidelines="annotation.demo:guidelines/chainmark.md",
    help="A benchmark made in chainmark rather than imported: its tasks, reference chains and checkpoints "
    "are authored in the TUI or from the command line. Give it the tool set its chains use "
    "(`benchmarks add NAME --format chainmark --tools SET`). Scored by answer spec (match, similarity "
    "or the rubric judge), checkpoints S/V/R and the reference chain step by step; no reference "
    "evaluator exists, so conformance does not apply.",
    order=0,
)

GTA = BenchmarkPlugin(
    name="gta",
    summary="GTA: questions over real images answered with a chain of tool calls",
    formats=("gta",),
    format_module="annotation.formats.gta",
    profile="evaluation.benchmarks.gta:PROFILE",
    tool_set="gta",
    tool_set_builder="evaluation.tools.sets.gta:build",
    metrics=(
        "InstAcc",
        "ToolAcc",
        "ArgAcc",
        "SummAcc",
        "AnsAcc",
        "AnsAcc+I",
        "P",
        "O",
        "L",
        "C",
        "checkpoint_judge_score",
    ),
    category_metric=None,
    judge_templates=_TEMPLATES,
    demo="annotation.demo.build:fill_gta",
    demo_description="GTA-style tool-chain questions over everyday images",
    guidelines="annotation.demo:guidelines/gta.md",
    conformance="evaluation.benchmarks.gta",
    help="General Tool Agents: each query comes with images, a gold chain of tool calls and whitelisted "
    "answers. Step-by-step runs are scored against the gold prefix (InstAcc, ToolAcc, ArgAcc, SummAcc), "
    "end-to-end runs by AnsAcc, AnsAcc+I and the P/O/L/C tool-selection F1.",
    order=10,
)

AGENTIC_MME = BenchmarkPlugin(
    name="agentic-mme",
    summary="Agentic-MME: visual and search tool use checked at stepwise checkpoints",
    formats=("agentic-mme", "agentic_mme", "amme"),
    format_module="annotation.formats.agentic_mme",
    profile="evaluation.benchmarks.agentic_mme:PROFILE",
    tool_set="agentic-mme",
    tool_set_builder="evaluation.tools.sets.agentic_mme:build",
    metrics=("Acc", "S", "V", "V_tool", "V_true", "avg_penalty", "avg_tool_calls_per_case", "perfect_cases"),
    category_metric="Acc",
    judge_templates=_TEMPLATES,
    demo="annotation.demo.build:fill_agentic_mme",
    demo_description="Agentic-MME-style tasks with stepwise checkpoints",
    guidelines="annotation.demo:guidelines/agentic-mme.md",
    conformance="evaluation.benchmarks.agentic_mme",
    help="Multimodal tasks solved with image operations and web search. Each task has checkpoints (search, "
    "visual, reasoning) with an ordering; scored by answer accuracy (Acc), checkpoint scores (S, V), "
    "an efficiency penalty and perfect cases, overall and per level.",
    order=20,
)

VTC = BenchmarkPlugin(
    name="vtc",
    summary="VTC-Bench: OpenCV tool chains over images, answers checked by rule then judge",
    formats=("vtc", "vtc-bench"),
    format_module="annotation.formats.vtc",
    profile="evaluation.benchmarks.vtc:PROFILE",
    tool_set="vtc",
    tool_set_builder="evaluation.tools.sets.vtc:build",
    metrics=("APR", "TCR", "MAE", "efficiency"),
    category_metric="APR",
    judge_templates=_TEMPLATES,
    demo="annotation.demo.build:fill_vtc",
    demo_description="VTC-Bench-style OpenCV tool chains",
    guidelines="annotation.demo:guidelines/vtc.md",
    conformance="evaluation.benchmarks.vtc",
    help="Visual tool chains: multiple-choice and open questions answered with OpenCV tools. APR is answer "
    "accuracy (rule first, then a judge), TCR the share of tasks with a tool call, MAE the error in chain "
    "length against the gold chain, and efficiency the share of calls on the path to the final image.",
    order=30,
)

ISG = BenchmarkPlugin(
    name="isg",
    summary="ISG-Bench: interleaved text-and-image answers judged on four levels",
    formats=("isg", "isg-bench"),
    format_module="annotation.formats.isg",
    profile="evaluation.benchmarks.isg:PROFILE",
    metrics=("structure", "image", "block", "holistic"),
    category_metric="holistic",
    judge_templates=_TEMPLATES,
    demo="annotation.demo.build:fill_isg",
    demo_description="ISG-Bench-style interleaved text-and-image answers",
    guidelines="annotation.demo:guidelines/isg.md",
    conformance="evaluation.benchmarks.isg",
    help="Interleaved text-and-image generation: answers mix text and generated images, scored on four "
    "levels: structure, image (yes/no questions), block (relation scores) and holistic (an overall judge).",
    order=40,
)

ATP = BenchmarkPlugin(
    name="atp",
    summary="ATP-Bench: tool plans written into answers, judged for precision, recall and success",
    formats=("atp", "atp-bench"),
    format_module="annotation.formats.atp",
    profile="evaluation.benchmarks.atp:PROFILE",
    tool_set="atp",
    tool_set_builder="evaluation.tools.sets.atp:build",
    metrics=(
        "FS",
        "FS_query_mean",
        "SR",
        "SR_query_mean",
        "MI",
        "MI_query_mean",
        "tool_precision",
        "tool_recall",
        "tool_f1",
    ),
    category_metric="FS",
    judge_templates=_TEMPLATES,
    demo="annotation.demo.build:fill_atp",
    demo_description="ATP-Bench-style tool planning over context documents",
    guidelines="annotation.demo:guidelines/atp.md",
    help="Agentic tool planning: answers embed planned tool calls (never executed) over context documents. "
    "FS is the chief judge's score, SR the share of calls passing every precision check, MI the images "
    "missed per query (each the paper's Avg over categories, the query mean beside it), plus tool-set "
    "precision, recall and F1.",
    order=50,
)

BUILTINS: tuple[BenchmarkPlugin, ...] = (CHAINMARK, GTA, AGENTIC_MME, VTC, ISG, ATP)
