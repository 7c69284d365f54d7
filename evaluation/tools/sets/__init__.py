"""The built-in tool sets, one module each; building one is cheap (schemas only, no heavy imports).
The registry asks for them here; the set modules depend only on ``evaluation.tools.toolset``."""

from __future__ import annotations

from collections.abc import Callable

from evaluation.tools.toolset import ToolSet


def builtin_sets() -> dict[str, Callable[[], ToolSet]]:
    """Name → builder of every built-in tool set, in the order they are listed."""
    from evaluation.tools.sets import agentic_mme, atp, gta, vtc

    return {"gta": gta.build, "agentic-mme": agentic_mme.build, "vtc": vtc.build, "atp": atp.build}
