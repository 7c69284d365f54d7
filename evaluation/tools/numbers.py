"""Numbers in a tool's text arguments ("(10, 20, 30, 40)", "10,20"): shared by the drawing tools and
the VLM-backed ones, and kept apart from both so a service tool never loads the image stack for it."""

from __future__ import annotations

import re

from evaluation.tools.result import ToolError

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def parse_numbers(text: str, count: int, what: str) -> list[float]:
    """Exactly ``count`` numbers from ``text``; a ToolError naming ``what`` otherwise."""
    nums = [float(x) for x in NUMBER.findall(str(text))]
    if len(nums) != count:
        raise ToolError(f"{what} must contain {count} numbers, got {text!r}")
    return nums
