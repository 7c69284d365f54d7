"""ATP-Bench: five plan-only tools. A model writes ``<tool>{"tool_name", "description", "params"}</tool>``
tags inside its answer; the calls are parsed, validated and judged, never executed.

The paper (§3) names the tools and what each takes (an ``img_index`` for Reference/Edit, a prompt
for Diffusion/Edit, a query for Search, a diagram type + data for Code). The exact ``params`` key
names of the unreleased reference code are not known; these are the paper's terms.
"""

from __future__ import annotations

from evaluation.tools.toolset import Tool, ToolSet
from evaluation.tools.sets._schema import i, obj, s

VERSION = "1"


def tools() -> list[Tool]:
    return [
        Tool(
            "Reference",
            "Cite an image from the provided context documents by its index, anchoring the "
            "response to specific visual evidence.",
            obj({"img_index": i("Index of the context image to place here", minimum=0)}, ["img_index"]),
            "reference",
            "plan",
        ),
        Tool(
            "Diffusion",
            "Generate a new image (conceptual illustration, artistic rendering, design draft) "
            "that the context does not contain, from a detailed prompt.",
            obj({"prompt": s("Semantically detailed description of the image to generate")}, ["prompt"]),
            "generation",
            "plan",
        ),
        Tool(
            "Search",
            "Retrieve a real-world image (landmark, artwork, person, event, map) with a web image search query.",
            obj({"query": s("Targeted image search query")}, ["query"]),
            "search",
            "plan",
        ),
        Tool(
            "Code",
            "Render a data-driven visualisation (chart, mathematical plot, blueprint-style diagram) "
            "from a diagram type and a specification of the data.",
            obj(
                {
                    "diagram_type": s("Kind of diagram, e.g. bar chart, line plot, flowchart"),
                    "data": {"description": "The data or specification to plot"},
                },
                ["diagram_type", "data"],
            ),
            "generation",
            "plan",
        ),
        Tool(
            "Edit",
            "Modify a context image for localized refinement: add labels, highlight regions, "
            "annotate features, preview a change.",
            obj(
                {
                    "img_index": i("Index of the context image to edit", minimum=0),
                    "prompt": s("What to change in the image"),
                },
                ["img_index", "prompt"],
            ),
            "edit",
            "plan",
        ),
    ]


def build() -> ToolSet:
    return ToolSet(
        "atp",
        VERSION,
        "ATP-Bench plan-only tools (recorded inside <tool> tags, not executed)",
        {t.name: t for t in tools()},
    )
